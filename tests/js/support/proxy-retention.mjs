// Run with --expose-gc by proxy-load.test.mjs: `createProxy` with N requests of
// ~1 MB waiting on the upstream at once. Prints the JS heap the waiting
// requests hold (after a full GC) per request, and the body size.
import { createProxy } from '../../../pkg/proxy.js';

const N = Number(process.argv[2] ?? 16);
const lines = Array.from({ length: 20000 }, (_, i) => `tests/test_pricing.py::test_discount_${i} PASSED [${i % 100}%] ${'·'.repeat(i % 13)}`);
const body = JSON.stringify({
  model: 'gpt-test',
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
