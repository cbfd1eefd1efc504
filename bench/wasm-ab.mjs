#!/usr/bin/env node
// Two or more builds of the wasm, compared in one run (this machine's speed
// drifts by 1.5x between runs, so only same-run ratios mean anything):
// gzip size; the first compress of a fresh process (V8's baseline tier: what
// a fresh edge isolate pays); cold compress (a session never seen, the JIT
// warm), the builds interleaved in one process; a warm replay of every turn
// in a fresh session, interleaved too. Usage:
//   node bench/wasm-ab.mjs [--trace FILE] [--rounds N] A.wasm B.wasm [...]
// Build a variant with e.g.
//   CARGO_TARGET_DIR=/tmp/t CARGO_PROFILE_RELEASE_OPT_LEVEL=s cargo build --lib --target wasm32-unknown-unknown --release
//   .tools/bin/wasm-bindgen --target web --remove-name-section --remove-producers-section --out-dir /tmp/s --out-name tracelite /tmp/t/wasm32-unknown-unknown/release/tracelite.wasm
import { execFileSync } from 'node:child_process';
import { cpSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
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

/**
 * Compares `wasms` (paths of `tracelite_bg.wasm` builds of this source, so the
 * JS glue of `pkg/` fits them all) on `requests` (one conversation, turn by
 * turn). Returns one row per build.
 */
export async function compareWasm(wasms, requests, { rounds = 5, coldRuns = 30 } = {}) {
  const dir = mkdtempSync(join(tmpdir(), 'tracelite-wasm-ab-'));
  try {
    const requestFile = join(dir, 'last.json');
    writeFileSync(requestFile, requests.at(-1));
    const builds = [];
    for (const [k, wasm] of wasms.entries()) {
      const pkgDir = join(dir, `pkg${k}`);
      cpSync(join(ROOT, 'pkg'), pkgDir, { recursive: true });
      cpSync(wasm, join(pkgDir, 'wasm/tracelite_bg.wasm'));
      writeFileSync(
        join(pkgDir, 'first.mjs'),
        `import { readFileSync } from 'node:fs';\n` +
          `const { SpillStore, compress } = await import(${JSON.stringify(pathToFileURL(join(pkgDir, 'entries/node.js')).href)});\n` +
          `const request = readFileSync(process.argv[2], 'utf8');\n` +
          `const store = new SpillStore();\nconst t = performance.now();\n` +
          `compress(request, { session: 'first', store });\n` +
          `console.log(JSON.stringify({ ms: performance.now() - t }));\n`,
      );
      const bytes = readFileSync(wasm);
      builds.push({ wasm, pkgDir, rawBytes: bytes.length, gzipBytes: gzipSync(bytes, { level: 9 }).length, first: [], cold: [], warm: [] });
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
    // Warm: every turn in order in a fresh session; a replay's total time.
    for (let r = 0; r <= rounds; r++) {
      for (const [k, m] of mods.entries()) {
        const store = new m.SpillStore();
        const t = performance.now();
        for (const request of requests) m.compress(request, { session: `warm-${r}`, store });
        const ms = performance.now() - t;
        store.free();
        if (r > 0) builds[k].warm.push(ms);
      }
    }
    return builds.map((b) => ({
      wasm: b.wasm,
      rawBytes: b.rawBytes,
      gzipBytes: b.gzipBytes,
      firstMs: median(b.first),
      coldMs: median(b.cold),
      replayMs: median(b.warm),
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
    '| build | gzip bytes | first request ms | cold ms | warm replay ms |',
    '|---|---:|---:|---:|---:|',
  ];
  for (const r of rows) {
    lines.push(
      `| ${r.wasm} | ${r.gzipBytes} (${ratio(r.gzipBytes, base.gzipBytes)}) | ${r.firstMs.toFixed(1)} (${ratio(r.firstMs, base.firstMs)}) | ` +
        `${r.coldMs.toFixed(1)} (${ratio(r.coldMs, base.coldMs)}) | ${r.replayMs.toFixed(1)} (${ratio(r.replayMs, base.replayMs)}) |`,
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
    process.stderr.write('usage: node bench/wasm-ab.mjs [--trace FILE] [--rounds N] A.wasm B.wasm [...]\n');
    process.exit(2);
  }
  const tracesDir = defaultTracesDir(ROOT);
  const { file, requests } = trace || existsSync(tracesDir) ? pickTrajectory(tracesDir, trace) : pickTrajectory(join(ROOT, 'tests/fixtures'), join(ROOT, 'tests/fixtures/sample-trajectory.json'));
  process.stdout.write(`${file.split('/').pop()}: ${requests.length} turns, the last ${requests.at(-1).length} bytes\n`);
  process.stdout.write(`${abMarkdown(await compareWasm(args, requests, { rounds }))}\n`);
}
