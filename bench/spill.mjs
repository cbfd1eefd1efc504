// Spilling in wasm under Node: excerpt + put of a 5 MB log, grep over 5 MB,
// and a whole compress of a request holding that log.
// Run: make pkg && node bench/spill.mjs   (prints median ms and MB/s)
import { performance } from 'node:perf_hooks';
import { SpillStore, compress } from '../pkg/entries/node.js';

/** A deterministic build/test log of about `bytes` bytes with a few error lines (like benches/spill.rs). */
function log(bytes) {
  const out = [];
  let size = 0;
  let state = 0x2545f491n;
  for (let i = 1; size < bytes; i++) {
    state = (state * 6364136223846793005n + 1442695040888963407n) & 0xffffffffffffffffn;
    const r = Number(state >> 33n);
    let line;
    switch (r % 1000) {
      case 0: line = 'Traceback (most recent call last):'; break;
      case 1: line = 'ValueError: invalid literal for int() with base 10'; break;
      case 2: case 3: case 4: line = `tests/test_mod_${i % 97}.py::test_case_${i % 13} FAILED`; break;
      default:
        line = `[${String(i).padStart(8)}] compiling src/module_${r % 211}/file_${r % 37}.rs ... ok (${r % 997} ms) ${'x'.repeat(r % 60)}`;
    }
    out.push(line);
    size += line.length + 1;
  }
  return out.join('\n') + '\n';
}

function measure(name, bytes, runs, fn) {
  fn(); // warm up
  const times = [];
  for (let i = 0; i < runs; i++) {
    const t = performance.now();
    fn();
    times.push(performance.now() - t);
  }
  times.sort((a, b) => a - b);
  const median = times[Math.floor(times.length / 2)];
  const mbps = bytes / 1e6 / (median / 1000);
  console.log(`${name.padEnd(28)} median ${median.toFixed(2).padStart(8)} ms  min ${times[0].toFixed(2).padStart(8)} ms  ${mbps.toFixed(0).padStart(6)} MB/s`);
}

const text = log(5 * 1024 * 1024);
const bytes = Buffer.byteLength(text);
console.log(`log: ${bytes} bytes, ${text.split('\n').length - 1} lines`);

let n = 0;
const store = new SpillStore({ maxBytes: 1 << 30, maxSessionBytes: 1 << 30 });
measure('excerpt+put (spill)', bytes, 15, () => {
  const session = `s${n++}`;
  const out = store.spill(text, { session, budget: 128000 });
  if (!out.spilled) throw new Error('not spilled');
  store.evict(session);
});

store.put('g', 'log', text);
for (const [name, pattern, options] of [
  ['grep literal', 'ValueError', { literal: true }],
  ['grep regex (literal prefix)', 'test_case_\\d+ FAILED', {}],
  ['grep regex (no literal)', '\\d+ FAILED', {}],
]) {
  measure(name, bytes, 15, () => store.grep('g', 'log', pattern, options));
}

const request = {
  model: 'm',
  messages: [
    { role: 'user', content: 'build it' },
    { role: 'assistant', content: null, tool_calls: [{ id: 'c1', type: 'function', function: { name: 'bash', arguments: '{"command":"make"}' } }] },
    { role: 'tool', content: text, tool_call_id: 'c1' },
  ],
};
const requestText = JSON.stringify(request);
measure('compress request (all stages)', bytes, 7, () => {
  const s = new SpillStore();
  try {
    compress(requestText, { store: s, session: 'c' });
  } finally {
    s.free();
  }
});
