// What broke (or would) with many requests in flight at once, one test per
// fix: KV writes of one blob from concurrent requests, the memory of the
// fresh-key cache, a KV failure under load, and what a request waiting for the
// provider keeps alive. The load itself is bench/edge-load.mjs (edge-load.test.mjs).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { SpillStore, compress, trajectoryToRequest } from '../../pkg/entries/node.js';
import { KvSpillStore } from '../../pkg/adapters/kv-store/index.js';
import { createProxy } from '../../pkg/adapters/proxy/index.js';
import { manySpills } from './support/requests.mjs';
import { withSpillTools } from './support/proxy-tools.mjs';

const root = new URL('../../', import.meta.url).pathname;
const sample = JSON.parse(readFileSync(join(root, 'tests/fixtures/sample-trajectory.json'), 'utf8'));
const chatRequest = { model: 'gpt-4o', ...trajectoryToRequest(sample, sample.steps.length, 'openai-chat') };
const OPTIONS = { budget: 16000, provider: 'openai' };
const SECRET = 'load-test-secret-0123456789abcdef01234';

/** The session a token names (`<session>.<signature>`). */
const sessionOf = (res) => res.headers.get('x-tracelite-session').replace(/(\.[0-9a-f]{32})?\.[^.]*$/, '');

/** A Map-backed KV namespace whose calls take a turn of the event loop, like the real one. Counts writes. */
function fakeKv({ withMetadata = true, failPuts = false } = {}) {
  const data = new Map();
  const tick = () => new Promise((done) => setImmediate(done));
  const kv = {
    data,
    puts: [],
    async get(name) {
      await tick();
      return data.get(name)?.value ?? null;
    },
    async put(name, value, opts) {
      await tick();
      kv.puts.push(name);
      if (failPuts) throw new Error('KV PUT failed: 429 Too Many Requests');
      data.set(name, { value, metadata: opts?.metadata });
    },
    async delete(name) {
      data.delete(name);
    },
  };
  if (withMetadata) {
    kv.getWithMetadata = async (name) => {
      await tick();
      const e = data.get(name);
      return { value: e?.value ?? null, metadata: e?.metadata ?? null };
    };
  }
  return kv;
}

test('concurrent puts of one blob share one KV write (KV allows one write per key per second)', async () => {
  const kv = fakeKv();
  const store = new KvSpillStore(kv);
  const wrote = await Promise.all(Array.from({ length: 16 }, () => store.put('agent-1', 'tool-00ab', 'the same log')));
  assert.deepEqual(kv.puts, ['tracelite/agent-1/tool-00ab']);
  assert.equal(wrote.filter(Boolean).length, 1);
  assert.equal(await store.get('agent-1', 'tool-00ab'), 'the same log');
  // Once written, later puts are neither read nor written.
  assert.equal(await store.put('agent-1', 'tool-00ab', 'the same log'), false);
  assert.equal(kv.puts.length, 1);
});

test('a different text under the same name in flight waits for the first: the same outcome as one after the other', async () => {
  const run = async (concurrent) => {
    const kv = fakeKv({ withMetadata: false });
    const store = new KvSpillStore(kv);
    const outcome = (p) => p.then((r) => ({ ok: r }), (e) => ({ code: e.code }));
    const results = concurrent
      ? await Promise.all([outcome(store.put('s', 'note-1', 'first')), outcome(store.put('s', 'note-1', 'second'))])
      : [await outcome(store.put('s', 'note-1', 'first')), await outcome(store.put('s', 'note-1', 'second'))];
    return { results, puts: kv.puts.length, value: kv.data.get('tracelite/s/note-1').value };
  };
  const sequential = await run(false);
  // The first text stays; the second is refused, never written over it.
  assert.deepEqual(sequential.results[1], { code: 'STORE_REFUSED' });
  assert.equal(sequential.value, 'first');
  assert.deepEqual(await run(true), sequential);
});

test('a failed write fails every request that shared it, and the next put tries again', async () => {
  const kv = fakeKv({ failPuts: true });
  const store = new KvSpillStore(kv);
  const results = await Promise.allSettled([store.put('s', 'k-1', 'x'), store.put('s', 'k-1', 'x')]);
  assert.deepEqual(results.map((r) => r.status), ['rejected', 'rejected']);
  assert.equal(kv.puts.length, 1);
  await assert.rejects(store.put('s', 'k-1', 'x'), /429/);
  assert.equal(kv.puts.length, 2);
});

test('the keys a store remembers as fresh are bounded: the oldest is forgotten, the newest kept', async () => {
  const kv = fakeKv({ withMetadata: false });
  const store = new KvSpillStore(kv);
  const n = 10001;
  for (let i = 0; i < n; i++) await store.put('s', `k-${i}`, 'x');
  assert.equal(kv.puts.length, n);
  assert.equal(await store.put('s', `k-${n - 1}`, 'x'), false, 'a recent key is still known');
  assert.equal(kv.puts.length, n);
  assert.equal(await store.put('s', 'k-0', 'x'), true, 'the oldest key was forgotten (no getWithMetadata: written again)');
  assert.equal(kv.puts.length, n + 1);
});

function expected(body, session) {
  const store = new SpillStore();
  try {
    return compress(body, { ...OPTIONS, format: 'openai-chat', session, store });
  } finally {
    store.free();
  }
}

test('the proxy over KV: 12 concurrent turns of one conversation write each blob once and all get the compressed body', async () => {
  const kv = fakeKv();
  const received = [];
  const proxy = createProxy({
    upstream: 'http://upstream.test',
    options: OPTIONS,
    store: new KvSpillStore(kv),
    secret: SECRET,
    async fetch(request) {
      received.push(await request.text());
      return new Response('{"id":"c1"}', { headers: { 'content-type': 'application/json' } });
    },
  });
  const responses = await Promise.all(Array.from({ length: 12 }, () => proxy(new Request('http://proxy.test/v1/chat/completions', {
    method: 'POST',
    headers: { 'x-tracelite-session': 'agent-3' },
    body: JSON.stringify(chatRequest),
  }))));
  const session = sessionOf(responses[0]);
  assert.match(session, /^agent-3-[0-9a-f]{32}$/);
  for (const res of responses) {
    assert.equal(res.status, 200);
    assert.equal(await res.text(), '{"id":"c1"}');
    assert.equal(res.headers.get('x-tracelite-skipped'), null);
    assert.equal(sessionOf(res), session);
  }
  const want = expected(chatRequest, session);
  assert.ok(want.spills.length > 0);
  assert.deepEqual(received, Array(12).fill(JSON.stringify(withSpillTools(want.request, 'openai-chat', session))));
  assert.deepEqual([...kv.puts].sort(), want.spills.map((s) => `tracelite/${session}/${s.key}`).sort());
});

test('a KV failure (429 under load) sends the request upstream uncompressed, marked STORE_FAILED, instead of a 500', async () => {
  const received = [];
  const proxy = createProxy({
    upstream: 'http://upstream.test',
    options: OPTIONS,
    store: new KvSpillStore(fakeKv({ failPuts: true })),
    secret: SECRET,
    async fetch(request) {
      received.push(await request.text());
      return new Response('{"id":"c1"}', { headers: { 'content-type': 'application/json' } });
    },
  });
  const body = JSON.stringify(chatRequest);
  const res = await proxy(new Request('http://proxy.test/v1/chat/completions', { method: 'POST', headers: { 'x-tracelite-session': 'agent-4' }, body }));
  assert.equal(res.status, 200);
  assert.equal(res.headers.get('x-tracelite-skipped'), 'STORE_FAILED');
  assert.equal(res.headers.get('x-tracelite-redacted'), '0');
  assert.equal(res.headers.get('x-tracelite-tokens'), null);
  assert.equal(await res.text(), '{"id":"c1"}');
  // Nothing points at text that is not stored: the provider got the original.
  assert.deepEqual(received, [body]);
});

test('a request waiting for the provider holds only what it forwards, not the body it read and parsed', { timeout: 60000 }, async () => {
  // In a child with --expose-gc: 16 requests of ~1.3 MB all waiting on the
  // upstream at once; the JS heap they hold after a full GC, per request.
  const { stdout } = await promisify(execFile)(process.execPath, ['--expose-gc', join(root, 'tests/js/support/proxy-retention.mjs'), 'waiting', '16'], { timeout: 55000 });
  const r = JSON.parse(stdout);
  assert.deepEqual(r.statuses, Array(16).fill(200));
  assert.equal(r.spilled, 16);
  assert.ok(r.bodyBytes > 1_000_000);
  // Before the fix each held the text, the parsed request and more: ~3× the body.
  assert.ok(r.retainedPerRequest < r.bodyBytes / 4, `${Math.round(r.retainedPerRequest)} bytes held per waiting request (body ${r.bodyBytes})`);
});

test('300 requests, 50 at a time, through KV: the heap after each round does not grow', { timeout: 60000 }, async () => {
  const { stdout } = await promisify(execFile)(process.execPath, ['--expose-gc', join(root, 'tests/js/support/proxy-retention.mjs'), 'steady', '6'], { timeout: 55000 });
  const r = JSON.parse(stdout);
  assert.deepEqual(r.statuses, [200]);
  assert.ok(r.kvKeys > 0);
  // Round 1 warms caches and the JIT; from round 2 on the heap stays put (a
  // leak of even one request body per request would add ~7 MB per round).
  const growth = r.heap.at(-1) - r.heap[1];
  assert.ok(growth < 2 * 1024 * 1024, `heap grew ${(growth / 1048576).toFixed(1)} MB over 4 rounds: ${r.heap.map((h) => (h / 1048576).toFixed(1)).join(' ')}`);
});

/** Options under which each tool output of `manySpills` is spilled (a 16-token cap). */
const SPILLY = { ...OPTIONS, spill: { floorTokens: 16, fraction: 0.001 } };
const spilly = (n) => JSON.stringify(manySpills(n, 800));

test('spills go to the store 16 at a time, and a put the store skips does not count against maxStoreWrites', async () => {
  let inFlight = 0;
  let peak = 0;
  const kept = new Set();
  const store = {
    async get() { throw new Error('unused'); },
    async put(session, key) {
      inFlight++;
      peak = Math.max(peak, inFlight);
      await new Promise((done) => setImmediate(done));
      inFlight--;
      if (kept.has(key)) return false; // already stored: not a write
      kept.add(key);
      return true;
    },
  };
  const proxy = createProxy({ upstream: 'http://upstream.test', options: SPILLY, store, secret: SECRET, maxStoreWrites: 2500, fetch: async () => new Response('{}') });
  const send = (body, session = 'a') => proxy(new Request('http://proxy.test/v1/chat/completions', { method: 'POST', headers: { 'x-tracelite-session': session }, body }));
  const body = spilly(2000);
  const first = await send(body);
  assert.equal(first.headers.get('x-tracelite-skipped'), null);
  assert.ok(kept.size > 1000 && kept.size <= 2500, `${kept.size} blobs`);
  assert.equal(peak, 16, 'at most one batch in flight');
  // The next turn hands the same blobs over again; the store skips them, so it is not over the limit.
  const second = await send(body);
  assert.equal(second.headers.get('x-tracelite-skipped'), null);
  // A request with more new blobs than the limit stops after exactly maxStoreWrites writes.
  kept.clear();
  const over = await send(spilly(3000), 'b');
  assert.equal(over.headers.get('x-tracelite-skipped'), 'STORE_WRITE_LIMIT');
  assert.equal(kept.size, 2500);
  assert.throws(() => createProxy({ upstream: 'http://u.test', store, secret: SECRET, maxStoreWrites: 0 }), (e) => e.code === 'INVALID_OPTION' && e.path === 'maxStoreWrites');
  assert.throws(() => createProxy({ upstream: 'http://u.test', store, secret: SECRET, onError: 'drop' }), (e) => e.code === 'INVALID_OPTION' && e.path === 'onError');
});

test('a KV failure with secrets in the body: forwarded masked (onError forward), or a 503 STORE_FAILED (onError reject)', async () => {
  const aws = 'AKIAIOSFODNN7EXAMPLE';
  const withSecret = { ...chatRequest, messages: [...chatRequest.messages, { role: 'user', content: `the key is ${aws}` }] };
  const received = [];
  const make = (onError) => createProxy({
    upstream: 'http://upstream.test',
    options: OPTIONS,
    store: new KvSpillStore(fakeKv({ failPuts: true })),
    secret: SECRET,
    onError,
    async fetch(request) {
      received.push(await request.text());
      return new Response('{"id":"c1"}', { headers: { 'content-type': 'application/json' } });
    },
  });
  const body = JSON.stringify(withSecret);
  const req = () => new Request('http://proxy.test/v1/chat/completions', { method: 'POST', headers: { 'x-tracelite-session': 'agent-5' }, body });
  const res = await make(undefined)(req());
  assert.equal(res.headers.get('x-tracelite-skipped'), 'STORE_FAILED');
  assert.ok(Number(res.headers.get('x-tracelite-redacted')) >= 1);
  assert.equal(received.length, 1);
  assert.ok(!received[0].includes(aws));
  assert.equal(JSON.parse(received[0]).messages.at(-1).content, 'the key is [REDACTED:aws-access-key-id]');
  const rejected = await make('reject')(req());
  assert.equal(rejected.status, 503);
  assert.equal((await rejected.json()).error.code, 'STORE_FAILED');
  assert.equal(received.length, 1, 'nothing more went upstream');
});

test('after STORE_WRITE_LIMIT the next turn of the session does not point at blobs that were never stored', async () => {
  const kept = new Map();
  const store = {
    async get(session, key) { return kept.get(`${session}/${key}`); },
    async put(session, key, text) { kept.set(`${session}/${key}`, text); return true; },
  };
  const received = [];
  const proxy = createProxy({
    upstream: 'http://upstream.test', options: SPILLY, store, secret: SECRET, maxStoreWrites: 100,
    async fetch(request) {
      received.push(await request.text());
      return new Response('{}');
    },
  });
  const body = spilly(2000);
  const send = () => proxy(new Request('http://proxy.test/v1/chat/completions', { method: 'POST', headers: { 'x-tracelite-session': 'c' }, body }));
  const first = await send();
  assert.equal(first.headers.get('x-tracelite-skipped'), 'STORE_WRITE_LIMIT');
  for (let turn = 0; turn < 3; turn++) {
    const res = await send();
    const pointers = [...received.at(-1).matchAll(/spill:\/\/([A-Za-z0-9._-]+)\/([A-Za-z0-9._-]+)/g)];
    if (res.headers.get('x-tracelite-skipped') === null) {
      assert.ok(pointers.length > 0);
      for (const [pointer, session, key] of pointers) assert.ok(kept.has(`${session}/${key}`), `turn ${turn}: ${pointer} is not in the store`);
    } else {
      assert.equal(res.headers.get('x-tracelite-skipped'), 'STORE_WRITE_LIMIT');
      assert.equal(received.at(-1), body);
    }
  }
});

test('a session dropped or evicted while another request of it is storing spills: no use of a freed store', async () => {
  let release;
  const gate = new Promise((done) => { release = done; });
  let calls = 0;
  const store = {
    async get() { throw new Error('unused'); },
    async put() {
      calls++;
      await gate;
      return true;
    },
  };
  // One cached session at most: the second session evicts the first while its request waits on the store.
  const proxy = createProxy({ upstream: 'http://upstream.test', options: OPTIONS, store, secret: SECRET, maxSessions: 1, fetch: async () => new Response('{}') });
  const send = (session) => proxy(new Request('http://proxy.test/v1/chat/completions', { method: 'POST', headers: { 'x-tracelite-session': session }, body: JSON.stringify(chatRequest) }));
  const first = send('s-1');
  while (calls === 0) await new Promise((done) => setImmediate(done));
  const second = send('s-2');
  await new Promise((done) => setTimeout(done, 50));
  release();
  for (const res of await Promise.all([first, second])) {
    assert.equal(res.status, 200);
    assert.equal(res.headers.get('x-tracelite-skipped'), null);
  }
});
