#!/usr/bin/env node
// One or more builds of the wasm, compared in one run (this machine's speed
// drifts by 1.5x between runs, so only same-run ratios mean anything):
// gzip size; the first compress of a fresh process (V8's baseline tier: what
// a fresh edge isolate pays); cold compress (a session never seen, the JIT
// warm), the builds interleaved in one process; a warm replay of every turn
// in a fresh session, interleaved too, its total and its p95 per step (the
// 95th percentile of the turns' times within a replay).
// The warm replay runs each build three ways, interleaved step by step: at
// the defaults, with optical off and with every stage off (parse + emit
// only), each in its own store, so the second table gives the optical
// stage's share of a replay ((defaults - optical off) / defaults) and the
// warm p95 per step at the defaults against parse + emit only (a step's time
// is its median over the replays, the p95 is over the steps, as
// `bench/edge-cpu.mjs` computes it). `--runs N` repeats that measurement N
// times in the process and gives each run's ratio and their median. Usage:
//   node bench/wasm-ab.mjs [--trace FILE] [--rounds N] [--runs N] A.wasm [B.wasm ...]
// A build is a `tracelite_bg.wasm` of this source (run with this `pkg/`'s JS)
// or a whole package directory (`pkg/` as `make pkg` built it at another
// commit, run with its own JS: for builds whose wasm exports differ), e.g.
//   git worktree add /tmp/old OLD && (cd /tmp/old && make pkg)
//   node bench/wasm-ab.mjs /tmp/old/pkg pkg/wasm/tracelite_bg.wasm
// Build a variant with e.g.
//   CARGO_TARGET_DIR=/tmp/t CARGO_PROFILE_RELEASE_OPT_LEVEL=s cargo build --lib --target wasm32-unknown-unknown --release
//   .tools/bin/wasm-bindgen --target web --remove-name-section --remove-producers-section --out-dir /tmp/s --out-name tracelite /tmp/t/wasm32-unknown-unknown/release/tracelite.wasm
import { execFileSync } from 'node:child_process';
import { cpSync, existsSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { gzipSync } from 'node:zlib';
import { pickTrajectory } from './edge-cpu.mjs';
import { defaultTracesDir, stats } from './harness.mjs';
import { onlyStage } from './policies.mjs';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[(s.length - 1) >> 1];
};

/** The first compress of `request` in a fresh Node process loading `pkgDir`, in ms. */
function firstRequest(pkgDir, requestFile) {
  const script = join(pkgDir, 'first.mjs');
  const out = execFileSync(process.execPath, [script, requestFile], { encoding: 'utf8' });
  return JSON.parse(out).ms;
}

/** The `q` quantile of `xs` (nearest rank). */
const quantile = (xs, q) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.max(0, Math.ceil(s.length * q) - 1)];
};

/** The configurations of a warm replay: the defaults, optical off, every stage off. */
const CONFIGS = [
  ['defaults', {}],
  ['opticalOff', { optical: { enabled: false } }],
  ['parseEmit', onlyStage('none')],
];

/**
 * One warm measurement: `rounds` + 1 replays of `requests` (the first warms
 * the JIT and is dropped), every step through each module (`mods`) in each
 * of [`CONFIGS`], interleaved, each configuration in a fresh store and
 * session per replay. Per module and configuration: `sum` and `p95` of the
 * per-step medians over the replays (`p95` over the steps, as
 * `bench/edge-cpu.mjs`), and, at the defaults, the median over the replays
 * of a replay's total (`replay`) and of its own p95 (`replayP95`); the
 * optical stage's share of the replay and the p95 ratio to parse + emit.
 */
function warmRun(mods, requests, rounds) {
  const times = mods.map(() => Object.fromEntries(CONFIGS.map(([key]) => [key, requests.map(() => [])])));
  const replays = mods.map(() => ({ total: [], p95: [] }));
  for (let r = 0; r <= rounds; r++) {
    const stores = mods.map((m) => CONFIGS.map(() => new m.SpillStore()));
    const mine = mods.map(() => []);
    try {
      for (const [step, request] of requests.entries()) {
        for (const [k, m] of mods.entries()) {
          for (const [c, [key, options]] of CONFIGS.entries()) {
            const t = performance.now();
            m.compress(request, { ...options, session: `warm-${r}`, store: stores[k][c] });
            const ms = performance.now() - t;
            if (r === 0) continue;
            times[k][key][step].push(ms);
            if (key === 'defaults') mine[k].push(ms);
          }
        }
      }
    } finally {
      for (const s of stores.flat()) s.free();
    }
    if (r === 0) continue;
    for (const [k, steps] of mine.entries()) {
      replays[k].total.push(steps.reduce((a, b) => a + b, 0));
      replays[k].p95.push(quantile(steps, 0.95));
    }
  }
  return times.map((byConfig, k) => {
    const row = {};
    for (const [key] of CONFIGS) {
      const perStep = byConfig[key].map(median);
      const s = stats(perStep);
      row[key] = { sum: perStep.reduce((a, b) => a + b, 0), p50: s.p50, p95: s.p95 };
    }
    row.defaults.replay = median(replays[k].total);
    row.defaults.replayP95 = median(replays[k].p95);
    row.opticalShare = (row.defaults.sum - row.opticalOff.sum) / row.defaults.sum;
    row.p95Ratio = row.defaults.p95 / Math.max(1e-9, row.parseEmit.p95);
    return row;
  });
}

/**
 * Compares `wasms` on `requests` (one conversation, turn by turn). Each is the
 * path of a `tracelite_bg.wasm` built from this source (run with the JS glue of
 * `pkg/`) or of a package directory (run with its own JS). Returns one row per
 * build.
 */
export async function compareWasm(wasms, requests, { rounds = 5, coldRuns = 30, warmRuns = 1 } = {}) {
  const dir = mkdtempSync(join(tmpdir(), 'tracelite-wasm-ab-'));
  try {
    const requestFile = join(dir, 'last.json');
    writeFileSync(requestFile, requests.at(-1));
    const builds = [];
    for (const [k, wasm] of wasms.entries()) {
      const pkgDir = join(dir, `pkg${k}`);
      const whole = statSync(wasm).isDirectory();
      cpSync(whole ? wasm : join(ROOT, 'pkg'), pkgDir, { recursive: true });
      if (!whole) cpSync(wasm, join(pkgDir, 'wasm/tracelite_bg.wasm'));
      writeFileSync(
        join(pkgDir, 'first.mjs'),
        `import { readFileSync } from 'node:fs';\n` +
          `const { SpillStore, compress } = await import(${JSON.stringify(pathToFileURL(join(pkgDir, 'entries/node.js')).href)});\n` +
          `const request = readFileSync(process.argv[2], 'utf8');\n` +
          `const store = new SpillStore();\nconst t = performance.now();\n` +
          `compress(request, { session: 'first', store });\n` +
          `console.log(JSON.stringify({ ms: performance.now() - t }));\n`,
      );
      const bytes = readFileSync(join(pkgDir, 'wasm/tracelite_bg.wasm'));
      builds.push({ wasm, pkgDir, rawBytes: bytes.length, gzipBytes: gzipSync(bytes, { level: 9 }).length, first: [], cold: [], warm: [], stepP95: [] });
    }
    // Fresh processes, the builds alternating.
    for (let r = 0; r < rounds; r++) for (const b of builds) b.first.push(firstRequest(b.pkgDir, requestFile));
    const mods = [];
    for (const b of builds) mods.push(await import(pathToFileURL(join(b.pkgDir, 'entries/node.js')).href));
    const last = requests.at(-1);
    // Cold: a session never seen; the first 5 runs of each warm the JIT.
    for (let i = 0; i < coldRuns + 5; i++) {
      for (const [k, m] of mods.entries()) {
        const store = new m.SpillStore();
        const t = performance.now();
        m.compress(last, { session: `cold-${i}`, store });
        const ms = performance.now() - t;
        store.free();
        if (i >= 5) builds[k].cold.push(ms);
      }
    }
    // Warm: every turn in order in a fresh session (and store) per
    // configuration; a replay's total time and the p95 of its turns' times.
    const runs = [];
    for (let run = 0; run < warmRuns; run++) runs.push(warmRun(mods, requests, rounds));
    const mid = (k, f) => median(runs.map((r) => f(r[k])));
    return builds.map((b, k) => ({
      wasm: b.wasm,
      rawBytes: b.rawBytes,
      gzipBytes: b.gzipBytes,
      firstMs: median(b.first),
      coldMs: median(b.cold),
      replayMs: mid(k, (r) => r.defaults.replay),
      stepP95Ms: mid(k, (r) => r.defaults.replayP95),
      share: {
        runs: runs.map((r) => r[k]),
        replayMs: Object.fromEntries(CONFIGS.map(([key]) => [key, mid(k, (r) => r[key].sum)])),
        stepP95Ms: Object.fromEntries(CONFIGS.map(([key]) => [key, mid(k, (r) => r[key].p95)])),
        opticalShare: mid(k, (r) => r.opticalShare),
        p95Ratio: mid(k, (r) => r.p95Ratio),
      },
    }));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** The comparison as a Markdown table, ratios against the first build. */
export function abMarkdown(rows) {
  const [base] = rows;
  const ratio = (x, y) => `${(x / y).toFixed(2)}×`;
  const lines = [
    '| build | gzip bytes | first request ms | cold ms | warm replay ms | p95 per step ms |',
    '|---|---:|---:|---:|---:|---:|',
  ];
  for (const r of rows) {
    lines.push(
      `| ${r.wasm} | ${r.gzipBytes} (${ratio(r.gzipBytes, base.gzipBytes)}) | ${r.firstMs.toFixed(1)} (${ratio(r.firstMs, base.firstMs)}) | ` +
        `${r.coldMs.toFixed(1)} (${ratio(r.coldMs, base.coldMs)}) | ${r.replayMs.toFixed(1)} (${ratio(r.replayMs, base.replayMs)}) | ` +
        `${r.stepP95Ms.toFixed(1)} (${ratio(r.stepP95Ms, base.stepP95Ms)}) |`,
    );
  }
  return lines.join('\n');
}

/**
 * Each build's warm replay at the defaults, optical off and parse + emit
 * only: the replay's sum and p95 per step of each (medians over the runs),
 * the optical stage's share, and the p95 ratio to parse + emit of each run
 * and their median.
 */
export function shareMarkdown(rows) {
  const ms = (x) => x.toFixed(1);
  const lines = [
    '| build | warm replay ms: defaults / optical off / parse + emit | optical share of the replay | p95 per step ms: defaults / optical off / parse + emit | p95 ÷ parse + emit, each run | median |',
    '|---|---:|---:|---:|---:|---:|',
  ];
  for (const r of rows) {
    const { replayMs: sum, stepP95Ms: p95 } = r.share;
    lines.push(
      `| ${r.wasm} | ${ms(sum.defaults)} / ${ms(sum.opticalOff)} / ${ms(sum.parseEmit)} | ${(100 * r.share.opticalShare).toFixed(0)}% | ` +
        `${ms(p95.defaults)} / ${ms(p95.opticalOff)} / ${ms(p95.parseEmit)} | ` +
        `${r.share.runs.map((run) => `${run.p95Ratio.toFixed(2)}×`).join(', ')} | **${r.share.p95Ratio.toFixed(2)}×** |`,
    );
  }
  return lines.join('\n');
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const args = process.argv.slice(2);
  const take = (flag) => {
    const i = args.indexOf(flag);
    return i >= 0 ? args.splice(i, 2)[1] : undefined;
  };
  const trace = take('--trace');
  const rounds = Number(take('--rounds') ?? 5);
  const warmRuns = Number(take('--runs') ?? 1);
  if (args.length < 1 || !args.every(existsSync)) {
    process.stderr.write('usage: node bench/wasm-ab.mjs [--trace FILE] [--rounds N] [--runs N] A.wasm|PKG_DIR [B.wasm|PKG_DIR ...]\n');
    process.exit(2);
  }
  const tracesDir = defaultTracesDir(ROOT);
  const { file, requests } = trace || existsSync(tracesDir) ? pickTrajectory(tracesDir, trace) : pickTrajectory(join(ROOT, 'tests/fixtures'), join(ROOT, 'tests/fixtures/sample-trajectory.json'));
  process.stdout.write(`${file.split('/').pop()}: ${requests.length} turns, the last ${requests.at(-1).length} bytes\n`);
  const rows = await compareWasm(args, requests, { rounds, warmRuns });
  process.stdout.write(`${abMarkdown(rows)}\n\n${shareMarkdown(rows)}\n`);
}
