// Test support (issue 39): a normal client and a maximal-body attacker sending
// to a proxy served on loopback at the same time, and the p95 of latencies.
import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import assert from 'node:assert/strict';
import { manySpills } from './requests.mjs';

/** The 95th percentile of `times`. */
export function p95(times) {
  const sorted = [...times].sort((a, b) => a - b);
  return sorted[Math.ceil(sorted.length * 0.95) - 1];
}

/**
 * The normal client: `requests` sequential POSTs of a growing conversation to
 * `url`, `gapMs` apart (an agent's turns are seconds apart); latencies in ms.
 */
export async function normalClient(url, requests = 48, gapMs = 0) {
  const times = [];
  for (let i = 0; i < requests; i++) {
    if (gapMs > 0 && i > 0) await new Promise((resolve) => setTimeout(resolve, gapMs));
    const body = JSON.stringify(manySpills((i % 12) + 1, 3_000));
    const started = performance.now();
    const res = await fetch(`${url}/v1/chat/completions`, { method: 'POST', headers: { 'content-type': 'application/json', authorization: 'Bearer sk-normal-222222222222222' }, body });
    assert.equal(res.status, 200);
    await res.arrayBuffer();
    times.push(performance.now() - started);
  }
  return times;
}

/**
 * The attacker, in its own process (as a client is: its own costs are not the
 * proxy's): maximal bodies (each a new session) back to back, at most MAX of
 * them and for at most SECONDS, until its stdin closes; prints each status on
 * a line (`reset` when the proxy, refusing without reading the body, closed
 * the connection under the upload).
 */
const ATTACKER = `
const { maximalBody } = await import(process.env.REQUESTS);
const bodies = Array.from({ length: 40 }, (_, i) => maximalBody(Number(process.env.BYTES), 'a' + i));
let stop = false;
process.stdin.on('end', () => { stop = true; }).resume();
const until = Date.now() + Number(process.env.SECONDS) * 1000;
for (let i = 0; i < Number(process.env.MAX) && !stop && Date.now() < until; i++) {
  try {
    const res = await fetch(process.env.URL, {
      method: 'POST', headers: { 'content-type': 'application/json', authorization: 'Bearer sk-attacker-33333333333333' }, body: bodies[i % bodies.length],
    });
    await res.arrayBuffer();
    process.stdout.write(res.status + '\\n');
  } catch {
    process.stdout.write('reset\\n');
  }
}
process.exit(0);
`;

/**
 * Starts the attacker against `url` with bodies of about `bytes`; `onStatus`
 * sees each status. Returns `{ stop(), done }`.
 */
export function startAttacker({ url, bytes, max = 400, seconds = 60, onStatus }) {
  const child = spawn(process.execPath, ['--input-type=module', '-e', ATTACKER], {
    stdio: ['pipe', 'pipe', 'inherit'],
    env: { ...process.env, REQUESTS: new URL('./requests.mjs', import.meta.url).href, BYTES: String(bytes), MAX: String(max), SECONDS: String(seconds), URL: `${url}/v1/chat/completions` },
  });
  createInterface({ input: child.stdout }).on('line', (line) => onStatus(line));
  const done = new Promise((resolve) => child.on('exit', resolve));
  return { stop: () => child.stdin.end(), done };
}
