#!/usr/bin/env node
// Peak memory of the hostile inputs of issue #10 through the npm package
// (pkg/entries/node.js): each case runs in a fresh child process, which reports the
// outcome (a result or a typed TraceLiteError code; anything else is a
// failure), the process's peak RSS, its RSS right before the call (input
// built as JSON text), and the wasm linear memory before and after the call
// (`wasmMemoryBytes()`; wasm memory never shrinks, so "after" is the peak).
//
//   node bench/hostile-memory.mjs            # full sizes, markdown table
//   node bench/hostile-memory.mjs --quick    # reduced sizes (for tests)
//   node bench/hostile-memory.mjs --json     # one JSON object per line
//   node bench/hostile-memory.mjs --case <name>   # one case, in this process
//
// Build the package first: `make pkg`.
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const args = process.argv.slice(2);
const quick = args.includes('--quick');
const json = args.includes('--json');
const only = args.includes('--case') ? args[args.indexOf('--case') + 1] : null;

const MB = 1 << 20;
const size = (full, reduced) => (quick ? reduced : full);

const call = (id, command) => ({ id, type: 'function', function: { name: 'bash', arguments: typeof command === 'string' ? JSON.stringify({ command }) : command } });
const toolTurn = (id, output, args = `step ${id}`) => [
  { role: 'assistant', content: null, tool_calls: [call(id, args)] },
  { role: 'tool', tool_call_id: id, content: output },
];
const chat = (...messages) => ({ model: 'm', messages: [{ role: 'user', content: 'go' }, ...messages] });

/** A PNG signature and IHDR chunk claiming w×h (no image data follows). */
function pngHeader(w, h) {
  const b = Buffer.alloc(33);
  Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 13]).copy(b, 0);
  b.write('IHDR', 12, 'latin1');
  b.writeUInt32BE(w, 16);
  b.writeUInt32BE(h, 20);
  b[24] = 8;
  return b.toString('base64');
}
const imageMessage = (data) => ({ role: 'user', content: [{ type: 'text', text: 'look' }, { type: 'image_url', image_url: { url: `data:image/png;base64,${data}` } }] });

/** name → () => [request (object or JSON text), options]. */
const CASES = {
  'tool output 100 MB': () => {
    const lines = size(3_000_000, 30_000); // ~105 MB (quick: ~1 MB)
    const big = 'log line with some text 0123456789\n'.repeat(lines);
    return [chat(...toolTurn('a', big)), { limits: { maxRequestBytes: 200 * MB }, budget: 16000 }];
  },
  'tool output 100 MB, default limit': () => {
    const big = 'log line with some text 0123456789\n'.repeat(size(3_000_000, 30_000));
    return [chat(...toolTurn('a', big)), { limits: { maxRequestBytes: size(64 * MB, 512 << 10) } }];
  },
  'single line 1 MB': () => [chat(...toolTurn('a', 'x'.repeat(size(MB, 64 << 10)))), {}],
  '10,000 steps': () => {
    const turns = [];
    for (let i = 0; i < size(10_000, 500); i++) turns.push(...toolTurn(`c${i}`, `output ${i}\nline two of ${i}`));
    return [chat(...turns), {}];
  },
  'arguments nested 10,000 deep': () => {
    const n = size(10_000, 1_000);
    return [chat(...toolTurn('a', 'ok', `${'['.repeat(n)}${']'.repeat(n)}`)), {}];
  },
  'request nested 10,000 deep': () => {
    const n = size(10_000, 1_000);
    return [`{"messages":[{"role":"user","content":"x"}],"metadata":${'['.repeat(n)}${']'.repeat(n)}}`, {}];
  },
  'ANSI bomb': () => {
    const bomb = '\u001b[31;1;4m'.repeat(size(200_000, 5_000)) + '\u001b['.repeat(size(100_000, 2_000)) + 'x\r'.repeat(size(100_000, 2_000));
    const turns = [];
    for (let i = 0; i < 6; i++) turns.push(...toolTurn(`a${i}`, bomb + i));
    return [chat(...turns), {}];
  },
  'image 56 MP (8000×7000)': () => [chat(imageMessage(pngHeader(8000, 7000))), {}],
  'invalid base64 image': () => [chat(imageMessage('iVBORw0KGgo!!!!' + 'A'.repeat(size(4 * MB, 4096)))), {}],
  'numbers beyond i64/f64': () => [
    `{"model":"m","messages":[{"role":"user","content":"hi"}],"seed":${'9'.repeat(size(100_000, 1_000))},"temperature":1e999999,"top_p":0.${'3'.repeat(size(100_000, 1_000))}}`,
    { format: 'openai-chat' },
  ],
  'duplicate keys': () => [
    `{"model":"m","messages":[{"role":"user","content":"a","content":"b"}]}`,
    {},
  ],
};

async function runCase(name) {
  const { compress, wasmMemoryBytes, TraceLiteError, SpillStore } = await import('../pkg/entries/node.js');
  const make = CASES[name];
  if (!make) throw new Error(`unknown case ${name}`);
  const [built, options] = make();
  // JSON text, so that "RSS before call" includes the input itself.
  const request = typeof built === 'string' ? built : JSON.stringify(built);
  const rssBefore = process.memoryUsage().rss;
  const wasmBefore = wasmMemoryBytes();
  const store = new SpillStore();
  let outcome;
  let code = null;
  try {
    const out = compress(request, { ...options, store });
    outcome = 'result';
    code = `${out.report.tokensBefore} → ${out.report.tokensAfter} tokens`;
  } catch (err) {
    if (err instanceof TraceLiteError && typeof err.code === 'string') {
      outcome = 'error';
      code = err.code;
    } else {
      outcome = 'failure';
      code = `${err?.name}: ${err?.message}`.slice(0, 200);
    }
  }
  const wasmAfter = wasmMemoryBytes();
  store.free();
  const peakRss = process.resourceUsage().maxRSS * 1024;
  return { case: name, outcome, code, rssBefore, peakRss, wasmBefore, wasmAfter };
}

const fmtMB = (bytes) => (bytes / MB).toFixed(1);

function table(rows) {
  const out = [
    '| case | outcome | result / error code | RSS before call (MB) | peak RSS (MB) | wasm memory before → after (MB) |',
    '|---|---|---|---:|---:|---:|',
  ];
  for (const r of rows) {
    out.push(`| ${r.case} | ${r.outcome} | ${r.code} | ${fmtMB(r.rssBefore)} | ${fmtMB(r.peakRss)} | ${fmtMB(r.wasmBefore)} → ${fmtMB(r.wasmAfter)} |`);
  }
  return out.join('\n');
}

if (only) {
  process.stdout.write(`${JSON.stringify(await runCase(only))}\n`);
} else {
  const self = fileURLToPath(import.meta.url);
  const rows = [];
  for (const name of Object.keys(CASES)) {
    const child = spawnSync(process.execPath, [self, '--case', name, ...(quick ? ['--quick'] : [])], {
      encoding: 'utf8',
      maxBuffer: 16 * MB,
    });
    const line = child.stdout.trim().split('\n').pop();
    let row;
    try {
      row = JSON.parse(line);
    } catch {
      row = { case: name, outcome: 'failure', code: `child exited ${child.status ?? child.signal}: ${child.stderr.trim().split('\n').pop() ?? ''}`.slice(0, 200), rssBefore: 0, peakRss: 0, wasmBefore: 0, wasmAfter: 0 };
    }
    rows.push(row);
    if (json) process.stdout.write(`${JSON.stringify(row)}\n`);
  }
  if (!json) {
    process.stdout.write(`Hostile inputs, one fresh Node ${process.version} process each${quick ? ' (quick sizes)' : ''}:\n\n${table(rows)}\n`);
  }
  if (rows.some((r) => r.outcome === 'failure')) process.exitCode = 1;
}

