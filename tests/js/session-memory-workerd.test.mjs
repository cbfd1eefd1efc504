// Issue 39 in real workerd (Miniflare 4): the proxy's memory defaults there
// (2 MiB bodies, 8 MiB of sessions), maximal bodies in fresh sessions leave
// the isolate's wasm memory well under its 128 MB, a body over the default is
// refused with 413, and a normal client's p95 after each stays within 3x.
import { FIXED_BYTES } from '../../bench/hostile-memory.mjs';
import { test, after, before } from 'node:test';
import assert from 'node:assert/strict';
import { bundleWorker, projectWithPkg, startUpstream, startWorker } from './support/hosts.mjs';
import { manySpills, maximalBody } from './support/requests.mjs';

const MB = 1 << 20;
const WORKER = `import { createProxy } from 'tracelite/proxy';
import { wasmMemoryBytes, MEMORY_DEFAULTS } from 'tracelite';
let proxy;
export default {
  fetch(request, env) {
    if (new URL(request.url).pathname === '/memory') {
      return Response.json({ wasm: wasmMemoryBytes(), defaults: MEMORY_DEFAULTS });
    }
    proxy ??= createProxy({ upstream: env.UPSTREAM, options: { budget: 8000 } });
    return proxy(request);
  },
};
`;

let upstream;
let mf;

before(async () => {
  upstream = await startUpstream(() => ({ headers: { 'content-type': 'application/json' }, chunks: ['{"id":"ok"}'] }));
  const dir = projectWithPkg('tracelite-memory-workerd-');
  mf = await startWorker(await bundleWorker(dir, WORKER), { bindings: { UPSTREAM: upstream.url } });
});

after(async () => {
  await mf?.dispose();
  await upstream?.close();
});

const post = async (session, body) => {
  const res = await mf.dispatchFetch('https://proxy.test/v1/chat/completions', {
    method: 'POST', headers: { 'content-type': 'application/json', 'x-tracelite-session': session, authorization: 'Bearer k' }, body,
  });
  await res.text();
  return res.status;
};
const memory = async () => (await (await mf.dispatchFetch('https://proxy.test/memory')).json());
const p95 = (xs) => [...xs].sort((a, b) => a - b)[Math.ceil(0.95 * xs.length) - 1];

test('workerd: maximal bodies in fresh sessions keep wasm memory under its bound and 80 MiB; normal p95 within 3x', { timeout: 300_000 }, async () => {
  const { defaults } = await memory();
  assert.deepEqual(defaults, { maxBodyBytes: 2 * MB, maxMemoryBytes: 8 * MB });
  assert.equal(await post('too-big', maximalBody(2 * MB + 65536, 'x')), 413);
  let turn = 0;
  const normal = async () => {
    turn = (turn % 8) + 1;
    const body = JSON.stringify(manySpills(turn, 3_000));
    const t0 = performance.now();
    assert.equal(await post('normal', body), 200);
    return performance.now() - t0;
  };
  for (let i = 0; i < 8; i++) await normal();
  const alone = [];
  for (let i = 0; i < 16; i++) alone.push(await normal());
  const start = (await memory()).wasm;
  const beside = [];
  const sizes = [];
  for (let s = 0; s < 12; s++) {
    assert.equal(await post(`attacker-${s}`, maximalBody(2 * MB - 1024, s)), 200);
    sizes.push((await memory()).wasm);
    beside.push(await normal(), await normal());
  }
  const wasm = (await memory()).wasm;
  console.log(`workerd wasm after each maximal session (MiB): ${sizes.map((b) => (b / MB).toFixed(1)).join(' ')}; normal p95 ${p95(alone).toFixed(1)} ms alone, ${p95(beside).toFixed(1)} ms beside`);
  // The documented bound, and room to spare in a 128 MB (122 MiB) isolate.
  assert.ok(wasm <= start + FIXED_BYTES + defaults.maxMemoryBytes + 24 * defaults.maxBodyBytes, `wasm memory ${wasm} B`);
  assert.ok(wasm <= 80 * MB, `wasm memory ${wasm} B`);
  assert.ok(p95(beside) <= 3 * p95(alone), `p95 ${p95(beside)} ms beside vs ${p95(alone)} ms alone`);
});
