// `tracelite proxy`: the proxy on worker threads from the command line. It
// listens, compresses what it forwards, serves the spill route with the token
// it returned, keeps spills as files under --store (with TRACELITE_SECRET),
// stops on SIGTERM, and refuses bad settings with typed errors.
import { test, after, before } from 'node:test';
import { spawn, spawnSync } from 'node:child_process';
import { createInterface } from 'node:readline';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import assert from 'node:assert/strict';
import { startUpstream } from './support/hosts.mjs';
import { manySpills } from './support/requests.mjs';

const cli = new URL('../../pkg/cli/index.mjs', import.meta.url).pathname;
const SECRET = 'cli-proxy-test-secret-4f0b9e2a7c6d1358aa';

let upstream;
before(async () => {
  upstream = await startUpstream(() => ({ headers: { 'content-type': 'application/json' }, chunks: ['{"ok":true}'] }));
});
after(() => upstream?.close());

/**
 * Starts `tracelite proxy` with `args`; resolves to `{ url, child, exited, lines }` once it says
 * where it listens (`lines`: every stderr line, growing).
 */
function startProxy(args, env = {}) {
  const child = spawn(process.execPath, [cli, 'proxy', '--upstream', upstream.url, '--port', '0', ...args], {
    stdio: ['ignore', 'ignore', 'pipe'], env: { ...process.env, ...env },
  });
  const exited = new Promise((resolve) => child.on('exit', (code, signal) => resolve({ code, signal })));
  const lines = [];
  return new Promise((resolve, reject) => {
    createInterface({ input: child.stderr }).on('line', (line) => {
      lines.push(line);
      const m = /^tracelite proxy: (http:\/\/\S+) -> /.exec(line);
      if (m) resolve({ url: m[1], child, exited, line, lines });
    });
    exited.then((e) => reject(new Error(`tracelite proxy exited ${JSON.stringify(e)}`)));
  });
}

function post(url, body, name) {
  return fetch(`${url}/v1/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: 'Bearer sk-cli-000000000000000', ...(name ? { 'x-tracelite-session': name } : {}) },
    body: JSON.stringify(body),
  });
}

test('tracelite proxy: compresses what it forwards on its threads, serves the spill route, stops on SIGTERM', async () => {
  const { url, child, exited, line } = await startProxy(['--threads', '2', '--budget', '2000']);
  assert.match(line, /\(2 threads\)$/);
  const res = await post(url, manySpills(6, 6_000));
  assert.equal(res.status, 200);
  assert.equal(await res.text(), '{"ok":true}');
  const sent = upstream.received.at(-1).body;
  const pointer = /spill:\/\/[^/\s"\\]+\/([a-z]+-[0-9a-f]+)/.exec(sent);
  assert.ok(pointer, 'a spilled excerpt went upstream');
  const [before, after] = res.headers.get('x-tracelite-tokens').split('->').map(Number);
  assert.ok(after < before, `${before} -> ${after}`);
  const page = await fetch(`${url}/spill/${pointer[1]}?limit=3`, { headers: { 'x-tracelite-session': res.headers.get('x-tracelite-session') } });
  assert.equal(page.status, 200);
  assert.ok((await page.json()).text.length > 0);
  child.kill('SIGTERM');
  assert.deepEqual(await exited, { code: 0, signal: null });
});

test('tracelite proxy --explain: each compressed request in words on stderr (formatReport); none without it', async () => {
  const { url, child, exited, lines } = await startProxy(['--threads', '1', '--budget', '2000', '--explain']);
  const res = await post(url, manySpills(6, 6_000), 'explained');
  assert.equal(res.status, 200);
  await res.text();
  const [before, after] = res.headers.get('x-tracelite-tokens').split('->');
  // The thread's console.error reaches the process's stderr asynchronously.
  for (let i = 0; i < 100 && !lines.some((l) => l.startsWith('  read back: ')); i++) await new Promise((r) => setTimeout(r, 50));
  child.kill('SIGTERM');
  await exited;
  const first = lines.find((l) => l.startsWith('tracelite [explained-'));
  assert.ok(first?.includes(`: ${before} -> ${after} tokens`), lines.join('\n'));
  assert.ok(lines.some((l) => /^  (spill|dedup|phase|optical|compact) +[-+]\d+ tokens: /.test(l)), lines.join('\n'));
  assert.ok(lines.some((l) => /^  read back: read_spill\/grep_spill spill:\/\/explained-[0-9a-f]+\/<key>$/.test(l)), lines.join('\n'));
  const quiet = await startProxy(['--threads', '1', '--budget', '2000']);
  await (await post(quiet.url, manySpills(6, 6_000))).text();
  quiet.child.kill('SIGTERM');
  await quiet.exited;
  assert.ok(!quiet.lines.some((l) => l.startsWith('tracelite [')), quiet.lines.join('\n'));
});

test('tracelite proxy --store DIR: spills are files under DIR; without TRACELITE_SECRET it refuses to start', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'tracelite-cli-proxy-'));
  try {
    const refused = spawnSync(process.execPath, [cli, 'proxy', '--upstream', upstream.url, '--port', '0', '--store', dir], {
      encoding: 'utf8', env: { ...process.env, TRACELITE_SECRET: '' }, timeout: 60_000,
    });
    assert.equal(refused.status, 1);
    assert.match(refused.stderr, /INVALID_OPTION: .*secret/);
    const { url, child, exited } = await startProxy(['--threads', '1', '--budget', '2000', '--store', dir], { TRACELITE_SECRET: SECRET });
    const res = await post(url, manySpills(5, 6_000), 'task-7');
    assert.equal(res.status, 200);
    await res.text();
    const sessions = readdirSync(dir);
    assert.equal(sessions.length, 1);
    assert.match(sessions[0], /^task-7-[0-9a-f]{32}$/);
    assert.ok(readdirSync(join(dir, sessions[0])).some((f) => f.endsWith('.txt')), 'spills as files');
    child.kill('SIGINT');
    assert.equal((await exited).code, 0);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('tracelite proxy: bad arguments exit 2 with the usage, bad settings exit 1 with the typed error', () => {
  const run = (...args) => spawnSync(process.execPath, [cli, 'proxy', ...args], { encoding: 'utf8', timeout: 60_000 });
  const noUpstream = run('--port', '0');
  assert.equal(noUpstream.status, 2);
  assert.match(noUpstream.stderr, /proxy needs --upstream URL/);
  const threads = run('--upstream', upstream.url, '--port', '0', '--threads', '0');
  assert.equal(threads.status, 1);
  assert.match(threads.stderr, /INVALID_OPTION: threads/);
  const budget = run('--upstream', upstream.url, '--port', '0', '--budget', '-5');
  assert.equal(budget.status, 1);
  assert.match(budget.stderr, /INVALID_OPTION: budget/);
  const badUpstream = run('--upstream', 'not a url', '--port', '0');
  assert.equal(badUpstream.status, 1);
  assert.match(badUpstream.stderr, /INVALID_OPTION: upstream/);
});
