#!/usr/bin/env node
// `make bench`: replays ../shared/traces under every policy and writes
// bench/REPORT.md, bench/report.json and bench/chart.svg.
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { lineChart } from './chart.mjs';
import { wasmReport } from './size.mjs';
import { defaultTracesDir, runBench, spreadPerSource, traceFiles } from './harness.mjs';
import { LONG_POLICIES, LONG_STEPS, runLongParallel } from './long.mjs';
import { legibilityLine, legibilitySection } from './legibility.mjs';
import { dominance, headlineTable, reportMarkdown } from './report.mjs';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');

const USAGE = `usage: node bench/run.mjs [options]
  --quick              a spread of 2 trajectories per source, short Criterion runs
  --sample N           a spread of N trajectories per source (all of them otherwise)
  --traces DIR|FILE    trajectories (default $TRACELITE_TRACES or ../shared/traces)
  --out DIR            where REPORT.md, report.json, chart.svg go (default bench/)
  --policies a,b       only these policy ids (full is always added)
  --variant NAME=JSON  also replay TraceLite with these options as variant-NAME (repeatable)
  --workers N          replay processes (default 2)
  --ocr-traces N       trajectories per source whose snapshots are OCR'd (default 3, quick 1)
  --long / --no-long   long sessions: trajectories chained to ≥ 300 steps per source (quick: 100); on by default
  --legibility-report FILE   also write the snapshot legibility section alone to FILE
  --no-ocr --no-criterion --no-latency   skip a part`;

function parseArgs(argv) {
  const o = { traces: defaultTracesDir(ROOT), out: join(ROOT, 'bench'), ocr: true, criterion: true, latency: true, long: true };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    const next = () => {
      if (argv[i + 1] === undefined) fail(`${a} needs a value`);
      return argv[++i];
    };
    if (a === '--quick') o.quick = true;
    else if (a === '--sample') o.sample = Number(next());
    else if (a === '--traces') o.traces = resolve(next());
    else if (a === '--out') o.out = resolve(next());
    else if (a === '--policies') o.policies = next().split(',');
    else if (a === '--variant') {
      const v = next();
      const eq = v.indexOf('=');
      if (eq < 1) fail(`--variant needs NAME=JSON, got ${v}`);
      try {
        (o.variants ??= {})[v.slice(0, eq)] = JSON.parse(v.slice(eq + 1));
      } catch (e) {
        fail(`--variant ${v.slice(0, eq)}: ${e.message}`);
      }
    }
    else if (a === '--ocr-traces') o.ocrTraces = Number(next());
    else if (a === '--workers') o.workers = Number(next());
    else if (a === '--no-ocr') o.ocr = false;
    else if (a === '--legibility-report') o.legibilityReport = resolve(next());
    else if (a === '--no-criterion') o.criterion = false;
    else if (a === '--no-latency') o.latency = false;
    else if (a === '--long') o.long = true;
    else if (a === '--no-long') o.long = false;
    else if (a === '-h' || a === '--help') {
      process.stdout.write(USAGE + '\n');
      process.exit(0);
    } else fail(`unknown option ${a}\n${USAGE}`);
  }
  if (o.policies && !o.policies.includes('full')) o.policies.unshift('full');
  return o;
}

function fail(msg) {
  process.stderr.write(`bench: ${msg}\n`);
  process.exit(2);
}

const log = (msg) => process.stderr.write(`[bench] ${msg}\n`);

/** Runs bench/latency.mjs in its own process, under `/usr/bin/time -v` when available. */
function latency(files, { quick }) {
  const script = join(ROOT, 'bench/latency.mjs');
  const args = [script, ...files, '--rounds', quick ? '1' : '2'];
  const timed = existsSync('/usr/bin/time');
  const r = timed
    ? spawnSync('/usr/bin/time', ['-v', process.execPath, ...args], { encoding: 'utf8', maxBuffer: 1 << 26 })
    : spawnSync(process.execPath, args, { encoding: 'utf8', maxBuffer: 1 << 26 });
  if (r.status !== 0) {
    log(`latency run failed: ${r.stderr?.slice(-2000)}`);
    return null;
  }
  const out = JSON.parse(r.stdout.trim().split('\n').at(-1));
  const m = /Maximum resident set size \(kbytes\): (\d+)/.exec(r.stderr ?? '');
  if (m) out.maxRssKb = Number(m[1]);
  return out;
}

/** Runs `cargo bench` for the Criterion benches present and reads their samples. */
function criterion({ quick }) {
  const dir = join(ROOT, 'benches');
  if (!existsSync(dir) || readdirSync(dir).filter((f) => f.endsWith('.rs')).length === 0) {
    return { note: 'no Criterion benches (benches/*.rs) in this tree.' };
  }
  const meta = JSON.parse(execFileSync('cargo', ['metadata', '--format-version', '1', '--no-deps'], { cwd: ROOT, encoding: 'utf8', maxBuffer: 1 << 26 }));
  const names = meta.packages.flatMap((p) => p.targets.filter((t) => t.kind.includes('bench')).map((t) => t.name));
  if (names.length === 0) return { note: 'no [[bench]] targets in Cargo.toml.' };
  const started = Date.now();
  const flags = ['--noplot', ...(quick ? ['--warm-up-time', '1', '--measurement-time', '2', '--sample-size', '20'] : ['--warm-up-time', '2', '--measurement-time', '4'])];
  const args = ['bench', ...names.flatMap((n) => ['--bench', n]), '--', ...flags];
  log(`cargo ${args.join(' ')}`);
  const r = spawnSync('cargo', args, { cwd: ROOT, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'], maxBuffer: 1 << 26 });
  if (r.status !== 0) return { note: `cargo bench failed: ${(r.stderr ?? '').split('\n').filter(Boolean).slice(-3).join(' / ')}` };
  const targetDir = meta.target_directory;
  const results = [];
  const walk = (d) => {
    for (const e of readdirSync(d, { withFileTypes: true })) {
      const p = join(d, e.name);
      if (e.isDirectory()) walk(p);
      else if (e.name === 'sample.json' && dirname(p).endsWith('/new') && statSync(p).mtimeMs >= started - 1000) {
        const bench = JSON.parse(readFileSync(join(dirname(p), 'benchmark.json'), 'utf8'));
        const sample = JSON.parse(readFileSync(p, 'utf8'));
        const per = sample.iters.map((n, i) => sample.times[i] / n).sort((a, b) => a - b);
        const q = (x) => per[Math.min(per.length - 1, Math.max(0, Math.ceil(x * per.length) - 1))];
        results.push({ id: bench.full_id, p50: q(0.5), p95: q(0.95), mean: per.reduce((a, b) => a + b, 0) / per.length });
      }
    }
  };
  const crit = join(targetDir, 'criterion');
  if (existsSync(crit)) walk(crit);
  results.sort((a, b) => a.id.localeCompare(b.id));
  return { results };
}

function gitCommit() {
  try {
    const sha = execFileSync('git', ['rev-parse', '--short', 'HEAD'], { cwd: ROOT, encoding: 'utf8' }).trim();
    const dirty = execFileSync('git', ['status', '--porcelain', '--untracked-files=no'], { cwd: ROOT, encoding: 'utf8' }).trim();
    return dirty ? `${sha}+changes` : sha;
  } catch {
    return 'unknown';
  }
}

/** The chart over the median trajectory (by full-history tokens). */
function chart(result) {
  const full = result.policies.find((p) => p.id === 'full');
  if (!full) return null;
  const ranked = Object.entries(full._cumulative).sort((a, b) => (a[1].at(-1) ?? 0) - (b[1].at(-1) ?? 0));
  if (ranked.length === 0) return null;
  const [trace] = ranked[Math.floor((ranked.length - 1) / 2)];
  result.chart = { trace };
  const series = result.policies.filter((p) => p._cumulative?.[trace]).map((p) => ({ label: p.label, values: p._cumulative[trace] }));
  return lineChart({ title: `Cumulative input tokens: ${trace}`, series });
}

/** Puts the headline table between the bench markers of README.md. */
function updateReadme(result, command) {
  const file = join(ROOT, 'README.md');
  if (!existsSync(file)) return;
  const text = readFileSync(file, 'utf8');
  const start = '<!-- bench:headline:start -->';
  const end = '<!-- bench:headline:end -->';
  const i = text.indexOf(start);
  const j = text.indexOf(end);
  if (i < 0 || j < i) return;
  const m = result.meta;
  const body = `\n${headlineTable(result)}\n\n${m.traces} trajectories, ${m.steps} requests${m.quick ? ' (quick mode)' : ''}; ` +
    `\`${command}\` at ${m.generated.slice(0, 10)}. Details: [bench/REPORT.md](bench/REPORT.md).\n`;
  writeFileSync(file, text.slice(0, i + start.length) + body + text.slice(j));
}

async function main() {
  const o = parseArgs(process.argv.slice(2));
  if (!o.traces || !existsSync(o.traces)) fail('no trajectories: set TRACELITE_TRACES or pass --traces DIR');
  if (!existsSync(join(ROOT, 'pkg/entries/node.js'))) fail('pkg/ is missing: run `make pkg` first');
  const files = statSync(o.traces).isDirectory() ? traceFiles(o.traces, { quick: o.quick || o.sample > 0, quickCount: o.sample || 2 }) : [o.traces];
  log(`${files.length} trajectories${o.quick ? ' (quick)' : ''}`);
  const result = await runBench({
    files,
    quick: o.quick,
    policies: o.policies,
    variants: o.variants,
    ocr: o.ocr,
    workers: o.workers ?? 2,
    ocrFiles: spreadPerSource(files, o.ocrTraces ?? (o.quick ? 1 : 3)),
    log,
  });
  if (o.long) {
    // Long sessions chain the whole directory's trajectories (not the --quick/--sample spread).
    const all = statSync(o.traces).isDirectory() ? traceFiles(o.traces) : [o.traces];
    const minSteps = o.quick ? LONG_STEPS.quick : LONG_STEPS.full;
    log(`long sessions (≥ ${minSteps} steps per source)`);
    result.long = await runLongParallel({ files: all, minSteps, policies: o.policies ?? LONG_POLICIES, workers: o.workers ?? 2, ocr: o.ocr, log });
  }
  const speed = { wasm: wasmReport({ root: ROOT }) };
  if (o.latency) {
    log('latency (separate process)');
    // A spread of trajectories is enough for percentiles (6 per source, 2 in quick mode).
    const sample = statSync(o.traces).isDirectory() ? traceFiles(o.traces, { quick: true, quickCount: o.quick ? 2 : 6 }) : files;
    speed.latency = latency(sample, o);
  }
  let crit = { note: 'skipped (--no-criterion).' };
  if (o.criterion) crit = criterion(o);
  result.dominance = dominance(result);
  mkdirSync(o.out, { recursive: true });
  const svg = chart(result);
  if (svg) writeFileSync(join(o.out, 'chart.svg'), svg);
  const command = `node bench/run.mjs ${process.argv.slice(2).join(' ')}`.trim();
  const md = reportMarkdown(result, {
    speed,
    criterion: crit.results,
    criterionNote: crit.note,
    chartFile: svg ? 'chart.svg' : null,
    command: command === 'node bench/run.mjs' ? 'make bench' : command,
    commit: gitCommit(),
  });
  writeFileSync(join(o.out, 'REPORT.md'), md);
  if (o.out === join(ROOT, 'bench')) updateReadme(result, command === 'node bench/run.mjs' ? 'make bench' : command);
  const json = JSON.stringify({ ...result, speed, criterion: crit }, (k, v) => (k.startsWith('_') ? undefined : v), 1);
  writeFileSync(join(o.out, 'report.json'), json + '\n');
  for (const [id, agg] of Object.entries(result.legibilityByPolicy ?? {})) log(`${id}: ${legibilityLine(agg)}`);
  if (o.legibilityReport) {
    const head = `# Snapshot legibility\n\n${result.meta.traces} trajectories, ${result.meta.generated.slice(0, 10)}, commit ${gitCommit()}.\n\n`;
    writeFileSync(o.legibilityReport, head + legibilitySection(result.legibility, { command, result }).replace(/^## Snapshot legibility\n\n/, ''));
    log(`wrote ${relative(process.cwd(), o.legibilityReport)}`);
  }
  log(`wrote ${relative(process.cwd(), join(o.out, 'REPORT.md'))} (${result.meta.harnessSeconds.toFixed(0)} s)`);
}

main().catch((err) => {
  process.stderr.write(`${err?.stack ?? err}\n`);
  process.exit(1);
});
