// Per-turn cost of the stateful `TraceLite` class (issue 16, item 9): an agent
// loop that assembles after every step; prints ms per `assemble` at the given
// turns (median of the 5 turns ending there), the total, and wasm memory.
//   node tests/tools/session-turns.mjs [--turns 500] [--at 250,500] [--output-bytes 600] [--counter js]
import { TraceLite, wasmMemoryBytes } from '../../pkg/entries/node.js';

const arg = (name, fallback) => {
  const i = process.argv.indexOf(`--${name}`);
  return i === -1 ? fallback : process.argv[i + 1];
};
const turns = Number(arg('turns', 500));
const at = new Set(arg('at', '250,500').split(',').map(Number));
const outputBytes = Number(arg('output-bytes', 600));
const jsCounter = arg('counter', 'built-in') === 'js';
let counted = 0;
const countTokens = jsCounter ? (t) => { counted += t.length; return Math.ceil(t.length / 4); } : undefined;

const tl = new TraceLite({ countTokens });
tl.addMessage({ role: 'system', content: 'You are a coding agent.' });
tl.addMessage({ role: 'user', content: 'Fix the failing test in src/parser.py. Do not touch the public API.' });
const line = (t, i) => `src/module_${t % 17}/file_${i}.py:${(t * 31 + i) % 400}: checked ok in ${(t + i) % 90} ms\n`;
const rows = [];
const recent = [];
let total = 0;
for (let t = 1; t <= turns; t++) {
  let output = '';
  for (let i = 0; output.length < outputBytes; i++) output += line(t, i);
  tl.processStep({ id: `c${t}`, name: 'bash', arguments: { command: `pytest tests/test_${t % 23}.py` } }, output);
  const started = performance.now();
  const request = tl.assemble('openai-chat', { model: 'gpt-4o' });
  const ms = performance.now() - started;
  total += ms;
  recent.push(ms);
  if (recent.length > 5) recent.shift();
  if (at.has(t)) {
    const median = [...recent].sort((a, b) => a - b)[Math.floor(recent.length / 2)];
    rows.push({ turn: t, ms: Math.round(median * 10) / 10, messages: request.messages.length, wasmMB: Math.round(wasmMemoryBytes() / 2 ** 20) });
  }
}
console.table(rows);
console.log(`${turns} assembles: ${(total / 1000).toFixed(1)} s`);
if (jsCounter) console.log(`counter saw ${(counted / 2 ** 20).toFixed(1)} MiB`);
tl.free();
