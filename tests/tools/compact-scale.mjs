// Cost of one compaction through the wasm package (issue 16, item 2): `n`
// one-word messages alternating user / assistant after a system prompt, the
// adversarial request of bench/edge-load.mjs, compressed with the default
// options and a fresh SpillStore. Prints ms, blobs stored and bytes out.
//   node tests/tools/compact-scale.mjs [--pkg DIR] [--unbounded] [n ...]   (default 20000 40000 99999)
// --pkg compares another build (e.g. a copy of an older pkg/); --unbounded lifts
// limits.maxCompactMessages / maxCompactBytes so one call compacts everything.
const args = process.argv.slice(2);
const at = args.indexOf('--pkg');
const dir = at === -1 ? new URL('../../pkg', import.meta.url).pathname : args[at + 1];
const unbounded = args.includes('--unbounded');
const sizes = args.filter((a, i) => /^\d+$/.test(a) && args[i - 1] !== '--pkg').map(Number);
const { compress, SpillStore } = await import(`${dir}/node.js`);
for (const n of sizes.length ? sizes : [20000, 40000, 99999]) {
  const messages = [{ role: 'system', content: 'You are terse.' }];
  for (let i = 0; i < n; i++) messages.push({ role: i % 2 ? 'assistant' : 'user', content: `word${i}` });
  const body = JSON.stringify({ model: 'gpt-4o-2024-08-06', messages });
  const store = new SpillStore();
  const options = { store, session: 's', ...(unbounded ? { limits: { maxCompactMessages: 1e9, maxCompactBytes: 2e9 } } : {}) };
  const start = performance.now();
  let line;
  try {
    const out = compress(body, options);
    line = `${out.spills.length} blobs, ${JSON.stringify(out.request).length} bytes out of ${body.length}`;
  } catch (e) {
    line = `error ${e.code}: ${e.message}`;
  }
  console.log(`${n} messages: ${(performance.now() - start).toFixed(0)} ms; ${line}`);
  store.free();
}
