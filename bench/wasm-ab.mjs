#!/usr/bin/env node
// Two or more builds of the wasm, compared in one run (this machine's speed
// drifts by 1.5x between runs, so only same-run ratios mean anything):
// gzip size; the first compress of a fresh process (V8's baseline tier: what
// a fresh edge isolate pays); cold compress (a session never seen, the JIT
// warm), the builds interleaved in one process; a warm replay of every turn
// in a fresh session, interleaved too, its total and its p95 per step (the
// 95th percentile of the turns' times within a replay). Usage:
//   node bench/wasm-ab.mjs [--trace FILE] [--rounds N] A.wasm B.wasm [...]
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
import { defaultTracesDir } from './harness.mjs';

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

/**
 * Compares `wasms` on `requests` (one conversation, turn by turn). Each is the
 * path of a `tracelite_bg.wasm` built from this source (run with the JS glue of
 * `pkg/`) or of a package directory (run with its own JS). Returns one row per
 * build.
 */
export async function compareWasm(wasms, requests, { rounds = 5, coldRuns = 30 } = {}) {
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
    // Warm: every turn in order in a fresh session; a replay's total time and
    // the p95 of its turns' times.
    for (let r = 0; r <= rounds; r++) {
      for (const [k, m] of mods.entries()) {
        const store = new m.SpillStore();
        const steps = [];
        for (const request of requests) {
          const t = performance.now();
          m.compress(request, { session: `warm-${r}`, store });
          steps.push(performance.now() - t);
        }
        store.free();
        if (r > 0) {
          builds[k].warm.push(steps.reduce((a, b) => a + b, 0));
          builds[k].stepP95.push(quantile(steps, 0.95));
        }
      }
    }
    return builds.map((b) => ({
      wasm: b.wasm,
      rawBytes: b.rawBytes,
      gzipBytes: b.gzipBytes,
      firstMs: median(b.first),
      coldMs: median(b.cold),
      replayMs: median(b.warm),
      stepP95Ms: median(b.stepP95),
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

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const args = process.argv.slice(2);
  const take = (flag) => {
    const i = args.indexOf(flag);
    return i >= 0 ? args.splice(i, 2)[1] : undefined;
  };
  const trace = take('--trace');
  const rounds = Number(take('--rounds') ?? 5);
  if (args.length < 2 || !args.every(existsSync)) {
    process.stderr.write('usage: node bench/wasm-ab.mjs [--trace FILE] [--rounds N] A.wasm|PKG_DIR B.wasm|PKG_DIR [...]\n');
    process.exit(2);
  }
  const tracesDir = defaultTracesDir(ROOT);
  const { file, requests } = trace || existsSync(tracesDir) ? pickTrajectory(tracesDir, trace) : pickTrajectory(join(ROOT, 'tests/fixtures'), join(ROOT, 'tests/fixtures/sample-trajectory.json'));
  process.stdout.write(`${file.split('/').pop()}: ${requests.length} turns, the last ${requests.at(-1).length} bytes\n`);
  process.stdout.write(`${abMarkdown(await compareWasm(args, requests, { rounds }))}\n`);
}
