// Run with --expose-gc by proxy-load.test.mjs. Prints JSON.
// `waiting N`: createProxy with N requests of ~1 MB waiting on the upstream at
// once; the JS heap the waiting requests hold (after a full GC) per request.
// `steady R`: R rounds of 50 concurrent requests through a KvSpillStore; the
// heap after each round (after a full GC), which must not grow.
import { readFileSync } from 'node:fs';
import { trajectoryToRequest } from '../../../pkg/entries/node.js';
import { KvSpillStore } from '../../../pkg/adapters/kv-store/index.js';
import { createProxy } from '../../../pkg/adapters/proxy/index.js';

const mode = process.argv[2];
const N = Number(process.argv[3] ?? 16);

if (mode === 'steady') {
  const sample = JSON.parse(readFileSync(new URL('../../fixtures/sample-trajectory.json', import.meta.url), 'utf8'));
  const request = JSON.stringify({ model: 'm', ...trajectoryToRequest(sample, sample.steps.length, 'openai-chat') });
  const data = new Map();
  const kv = {
    async get(name) { return data.get(name)?.value ?? null; },
    async put(name, value, opts) { data.set(name, { value, metadata: opts?.metadata }); },
    async getWithMetadata(name) {
      const e = data.get(name);
      return { value: e?.value ?? null, metadata: e?.metadata ?? null };
    },
  };
  const proxy = createProxy({
    upstream: 'http://upstream.test',
    options: { budget: 16000 },
    store: new KvSpillStore(kv),
    secret: 'retention-test-secret-0123456789abcdef',
    async fetch(req) {
      await req.arrayBuffer();
      return new Response('{}');
    },
  });
  const heap = [];
  const statuses = new Set();
  for (let round = 0; round < N; round++) {
    await Promise.all(Array.from({ length: 50 }, async (_, i) => {
      const res = await proxy(new Request('http://proxy.test/v1/chat/completions', { method: 'POST', headers: { 'x-tracelite-session': `agent-${i % 8}` }, body: request }));
      statuses.add(res.status);
      await res.text();
    }));
    globalThis.gc();
    globalThis.gc();
    heap.push(process.memoryUsage().heapUsed);
  }
  console.log(JSON.stringify({ heap, statuses: [...statuses], kvKeys: data.size }));
  process.exit(0);
}
const lines = Array.from({ length: 20000 }, (_, i) => `tests/test_pricing.py::test_discount_${i} PASSED [${i % 100}%] ${'·'.repeat(i % 13)}`);
const body = JSON.stringify({
  model: 'gpt-4o',
  messages: [
    { role: 'system', content: 'You fix bugs.' },
    { role: 'user', content: 'Run the tests.' },
    { role: 'assistant', content: null, tool_calls: [{ id: 'c1', type: 'function', function: { name: 'bash', arguments: '{"command":"pytest -v"}' } }] },
    { role: 'tool', tool_call_id: 'c1', content: lines.join('\n') },
    { role: 'user', content: 'Go on.' },
  ],
});

let release;
const gate = new Promise((done) => { release = done; });
let arrived = 0;
let allArrived;
const everyoneWaiting = new Promise((done) => { allArrived = done; });
const kept = new Map();
const proxy = createProxy({
  upstream: 'http://upstream.test',
  options: { budget: 16000 },
  // A KV-like store (async, outside wasm): only sizes are kept, so it holds nothing big.
  store: {
    async get(session, key) { throw Object.assign(new Error(`no ${session}/${key}`), { name: 'TraceLiteError', code: 'SPILL_NOT_FOUND' }); },
    async put(session, key, text) { kept.set(`${session}/${key}`, text.length); },
  },
  secret: 'retention-test-secret-0123456789abcdef',
  async fetch(request) {
    await request.arrayBuffer();
    if (++arrived === N) allArrived();
    await gate;
    return new Response('{"ok":true}', { headers: { 'content-type': 'application/json' } });
  },
});

globalThis.gc();
const before = process.memoryUsage().heapUsed;
const pending = Array.from({ length: N }, (_, i) => proxy(new Request('http://proxy.test/v1/chat/completions', {
  method: 'POST',
  headers: { 'content-type': 'application/json', 'x-tracelite-session': `agent-${i}` },
  body,
})));
await everyoneWaiting;
for (let i = 0; i < 3; i++) globalThis.gc();
const during = process.memoryUsage().heapUsed;
release();
const statuses = await Promise.all(pending.map(async (p) => { const r = await p; await r.text(); return r.status; }));
console.log(JSON.stringify({ n: N, bodyBytes: body.length, retainedPerRequest: Math.max(0, during - before) / N, statuses, spilled: kept.size }));
