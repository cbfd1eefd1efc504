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
//   node bench/hostile-memory.mjs --sessions      # 64 sessions of maximal bodies (issues 39, 49)
//   node bench/hostile-memory.mjs --sessions --count 8   # fewer sessions
//
// `--sessions` drives the proxy (default in-memory store, loopback fetch)
// with 64 sessions (`--count`), each from its own tenant: one body of tiny
// tool calls filling `maxBodyBytes`, then a small turn in the same session
// (which made the session weigh next to nothing while it kept its caches:
// issue 49), alternating with a normal client's requests; it reports wasm
// memory after each session against its documented bound (16 MiB +
// `maxMemoryBytes` + 24 × `maxBodyBytes` over the start), what the sessions
// keep (`wasmHeapBytes`) and the normal client's p95 alone and beside the
// attacker. Full size: the defaults (8 MiB bodies, 192 MiB); `--quick`:
// 256 KiB bodies and 4 MiB of sessions.
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

/** Wasm peak of one request per byte of its body (measured: up to ~20×, tiny tool calls). */
const PEAK_PER_BODY_BYTE = 24;
/**
 * What the first requests reserve once (tables, the font, the allocator's slack, and
 * the texts the shared caches keep to verify their hits).
 */
export const FIXED_BYTES = 16 * MB;

const percentile = (xs, p) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.ceil((p / 100) * xs.length) - 1)];

async function runSessions() {
  const { wasmMemoryBytes, wasmHeapBytes, MEMORY_DEFAULTS } = await import('../pkg/entries/node.js');
  const { createProxy } = await import('../pkg/adapters/proxy/index.js');
  const { manySpills, maximalBody } = await import('../tests/js/support/requests.mjs');
  const maxBodyBytes = quick ? 256 << 10 : MEMORY_DEFAULTS.maxBodyBytes;
  const maxMemoryBytes = quick ? 4 * MB : MEMORY_DEFAULTS.maxMemoryBytes;
  const sessions = args.includes('--count') ? Number(args[args.indexOf('--count') + 1]) : 64;
  const proxy = createProxy({
    upstream: 'http://upstream.test',
    options: { budget: 8000 },
    maxBodyBytes,
    maxMemoryBytes,
    fetch: async () => new Response('{"ok":true}', { headers: { 'content-type': 'application/json' } }),
  });
  const post = async (session, body, tenant) => {
    const headers = { 'content-type': 'application/json', 'x-tracelite-session': session };
    // Its own credentials: a tenant of its own (a tenant's compress time per minute is bounded).
    if (tenant) headers.authorization = `Bearer ${tenant}`;
    const res = await proxy(new Request('http://proxy.test/v1/chat/completions', { method: 'POST', headers, body }));
    await res.text();
    return res.status;
  };
  // The normal client: one conversation growing a turn per request.
  let turn = 0;
  const normal = async () => {
    turn = (turn % 12) + 1;
    const body = JSON.stringify(manySpills(turn, 3_000));
    const t0 = performance.now();
    const status = await post('normal', body);
    if (status !== 200) throw new Error(`normal client got ${status}`);
    return performance.now() - t0;
  };
  for (let i = 0; i < 12; i++) await normal(); // warm-up: one cycle of its turns
  const alone = [];
  for (let i = 0; i < 36; i++) alone.push(await normal());
  const wasmBefore = wasmMemoryBytes();
  const beside = [];
  const attackerStatuses = [];
  const wasmEach = [];
  let attackerMs = 0;
  for (let s = 0; s < sessions; s++) {
    const body = maximalBody(maxBodyBytes, s);
    const t0 = performance.now();
    attackerStatuses.push(await post(`attacker-${s}`, body, `attacker-key-${s}`));
    attackerMs += performance.now() - t0;
    beside.push(await normal());
    // A small turn of the same session: it is weighed by what it keeps, not by this request.
    attackerStatuses.push(await post(`attacker-${s}`, JSON.stringify(manySpills(1, 3_000)), `attacker-key-${s}`));
    wasmEach.push(wasmMemoryBytes());
  }
  const wasmAfter = wasmMemoryBytes();
  return {
    sessions,
    maxBodyBytes,
    maxMemoryBytes,
    wasmBefore,
    wasmAfter,
    wasmEach,
    heapAfter: wasmHeapBytes?.(), // (a build before issue 49 has none)
    bound: wasmBefore + FIXED_BYTES + maxMemoryBytes + PEAK_PER_BODY_BYTE * maxBodyBytes,
    attackerStatuses,
    attackerMeanMs: Math.round(attackerMs / sessions),
    seconds: Math.round(performance.now() / 1000),
    rss: process.memoryUsage().rss,
    normal: { aloneP95: +percentile(alone, 95).toFixed(1), besideP95: +percentile(beside, 95).toFixed(1), aloneP50: +percentile(alone, 50).toFixed(1), besideP50: +percentile(beside, 50).toFixed(1) },
  };
}

if (args.includes('--sessions')) {
  const r = await runSessions();
  if (json) {
    process.stdout.write(`${JSON.stringify(r)}\n`);
  } else {
    process.stdout.write([
      `${r.sessions} sessions of maximal bodies, each then a small turn, through the proxy, Node ${process.version}${quick ? ' (quick sizes)' : ''}:`,
      '',
      '| maxBodyBytes | maxMemoryBytes | wasm before → after (MB) | bound (MB) | sessions keep (MB) | attacker mean (ms) | normal p95 alone → beside (ms) | RSS (MB) |',
      '|---:|---:|---:|---:|---:|---:|---:|---:|',
      `| ${fmtMB(r.maxBodyBytes)} MB | ${fmtMB(r.maxMemoryBytes)} MB | ${fmtMB(r.wasmBefore)} → ${fmtMB(r.wasmAfter)} | ${fmtMB(r.bound)} | ${fmtMB(r.heapAfter)} | ${r.attackerMeanMs} | ${r.normal.aloneP95} → ${r.normal.besideP95} | ${fmtMB(r.rss)} |`,
      '',
      `wasm after each session (MB): ${r.wasmEach.map(fmtMB).join(' ')}`,
      '',
    ].join('\n'));
  }
  if (r.wasmAfter > r.bound || r.attackerStatuses.some((s) => s !== 200)) process.exitCode = 1;
} else if (only) {
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

