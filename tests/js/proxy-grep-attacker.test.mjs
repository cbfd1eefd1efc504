// Issue 39 item 1: a grep attacker beside a normal client, at the same time,
// in Node (the proxy behind a node:http server on 127.0.0.1) and in workerd
// (the Worker example in Miniflare 4), in front of a stub provider on 127.0.0.1. The attacker repeats `GET /spill/<key>/grep`
// with a costly regex over a 64 KB blob of its own session and POSTs turns
// whose model greps 16 times a round for 4 rounds; the normal client's p95
// stays within 3x of its p95 alone (before: 32 ms → 11.4 s). Bounded loops.
import { test, after, before } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { trajectoryToRequest } from '../../pkg/entries/node.js';
import { createProxy } from '../../pkg/adapters/proxy/index.js';
import { bundleWorker, projectWithPkg, root, serveOnLoopback, startUpstream, startWorker } from './support/hosts.mjs';
import { bigOutput, conversation } from './support/proxy-tools.mjs';

const PROXY_SECRET = 'grep-attacker-test-secret-7d1e5c3b9a2f4068';
const OPTIONS = { budget: 16000, provider: 'openai' };
// No literal, 256 units a byte at 1.8 ns a unit (the slowest measured): at the proxy's per-search limit over the blob.
const COSTLY = 'a.*b.*c';
const NORMAL_REQUESTS = 40;
const ATTACKS = 60;
const WORKER = readFileSync(join(root, 'pkg-config/examples/cloudflare-worker/worker.js'), 'utf8');
const sample = JSON.parse(readFileSync(join(root, 'tests/fixtures/sample-trajectory.json'), 'utf8'));
// The normal client: the sample trajectory's last six requests, in turn.
const normalBodies = Array.from({ length: 6 }, (_, i) => JSON.stringify(trajectoryToRequest(sample, sample.steps.length - i, 'openai-chat')));

/** The stub model: a request of the attacker's session greps 16 times (with tools), any other gets an answer. */
function model(req, body) {
  const request = JSON.parse(body || '{}');
  const pointer = /spill:\/\/attacker-[^\s"\\)\]]+/.exec(body)?.[0];
  const calls = pointer && request.tools ? Array.from({ length: 16 }, (_, i) => ({
    id: `g${request.messages.length}-${i}`, type: 'function', function: { name: 'grep_spill', arguments: JSON.stringify({ pointer, pattern: COSTLY }) },
  })) : [];
  const message = calls.length ? { role: 'assistant', content: null, tool_calls: calls } : { role: 'assistant', content: 'ok' };
  return { headers: { 'content-type': 'application/json' }, chunks: [JSON.stringify({ id: 'x', choices: [{ index: 0, message, finish_reason: calls.length ? 'tool_calls' : 'stop' }] })] };
}

let upstream;
let mf;

before(async () => {
  upstream = await startUpstream(model);
  const script = await bundleWorker(projectWithPkg('tracelite-grep-attack-'), WORKER);
  mf = await startWorker(script, {
    kvNamespaces: ['SPILLS'],
    bindings: { UPSTREAM: upstream.url, TRACELITE_SECRET: PROXY_SECRET, TRACELITE_OPTIONS: JSON.stringify(OPTIONS) },
  });
});

after(async () => {
  await mf?.dispose();
  await upstream?.close();
});

function p95(times) {
  const sorted = [...times].sort((a, b) => a - b);
  return sorted[Math.ceil(sorted.length * 0.95) - 1];
}

/** Runs the normal client (`NORMAL_REQUESTS` sequential POSTs); returns its latencies in ms. */
async function normalClient(send) {
  const times = [];
  for (let i = 0; i < NORMAL_REQUESTS; i++) {
    const started = performance.now();
    const res = await send(new Request('http://proxy.test/v1/chat/completions', {
      method: 'POST', headers: { 'content-type': 'application/json', authorization: 'Bearer sk-normal-0000000000000000', 'x-tracelite-session': 'normal' }, body: normalBodies[i % normalBodies.length],
    }));
    assert.equal(res.status, 200);
    await res.text();
    times.push(performance.now() - started);
  }
  return times;
}

/** The attacker's setup: a 64 KB blob in its session. Returns `{ token, pointer }`. */
async function plant(send) {
  const first = await send(attackerPost(conversation('openai-chat', bigOutput('plain', 1500)), 'attacker'));
  await first.text();
  const pointer = /spill:\/\/attacker-[^\s"\\)\]]+/.exec(upstream.received.findLast((r) => r.body.includes('spill://attacker-')).body)[0];
  return { token: first.headers.get('x-tracelite-session'), pointer };
}

function attackerPost(body, session) {
  return new Request('http://proxy.test/v1/chat/completions', {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: 'Bearer sk-attacker-111111111111111', 'x-tracelite-session': session },
    body: JSON.stringify(body),
  });
}

/**
 * The attacker: at most `ATTACKS` costly searches of its blob, by the route
 * or by model turns (a small request naming the pointer: the proxy adds the
 * tools, the model greps 16 times a round), until `done()`.
 */
async function attacker(send, { token, pointer }, done) {
  const key = pointer.slice(pointer.lastIndexOf('/') + 1);
  const turn = { model: 'gpt-4o', messages: [{ role: 'user', content: `search ${pointer} for me` }] };
  const statuses = {};
  for (let i = 0; i < ATTACKS && !done(); i++) {
    const res = i % 4 === 3
      ? await send(attackerPost(turn, token))
      : await send(new Request(`http://proxy.test/spill/${key}/grep?regex=1&q=${encodeURIComponent(COSTLY)}`, { headers: { 'x-tracelite-session': token } }));
    await res.text();
    statuses[res.status] = (statuses[res.status] ?? 0) + 1;
  }
  return statuses;
}

/**
 * The normal client's p95 alone (before and after the attack: the larger,
 * since the test machine is shared and its load drifts) and beside the attacker.
 */
async function measure(send) {
  await normalClient(send); // warm up
  const planted = await plant(send);
  const before = p95(await normalClient(send));
  let finished = false;
  const attack = attacker(send, planted, () => finished);
  const beside = p95(await normalClient(send).finally(() => { finished = true; }));
  const statuses = await attack;
  const alone = Math.max(before, p95(await normalClient(send)));
  return { alone, beside, statuses };
}

test('Node: a normal client\'s p95 beside a grep attacker stays within 3x of its p95 alone', { timeout: 300_000 }, async () => {
  // The proxy behind a node:http server on 127.0.0.1: the client, the proxy and the model all over loopback.
  const served = await serveOnLoopback(createProxy({ upstream: upstream.url, options: OPTIONS, secret: PROXY_SECRET }));
  const { alone, beside, statuses } = await measure(served.send).finally(() => served.close());
  console.log(`node: p95 alone ${alone.toFixed(1)} ms, beside the attacker ${beside.toFixed(1)} ms; attacker statuses ${JSON.stringify(statuses)}`);
  assert.ok(statuses[429] > 0, JSON.stringify(statuses));
  assert.ok(beside <= 3 * alone, `p95 ${beside.toFixed(1)} ms beside the attacker, ${alone.toFixed(1)} ms alone`);
});

test('workerd: a normal client\'s p95 beside a grep attacker stays within 3x of its p95 alone', { timeout: 300_000 }, async () => {
  const { alone, beside, statuses } = await measure((request) => mf.dispatchFetch(request.url, {
    method: request.method, headers: request.headers, body: request.method === 'GET' ? undefined : request.body, duplex: 'half',
  }));
  console.log(`workerd: p95 alone ${alone.toFixed(1)} ms, beside the attacker ${beside.toFixed(1)} ms; attacker statuses ${JSON.stringify(statuses)}`);
  assert.ok(statuses[429] > 0, JSON.stringify(statuses));
  assert.ok(beside <= 3 * alone, `p95 ${beside.toFixed(1)} ms beside the attacker, ${alone.toFixed(1)} ms alone`);
});
