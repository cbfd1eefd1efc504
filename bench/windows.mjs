#!/usr/bin/env node
// `make bench-windows`: the recent window (3 vs 5) for each provider over
// ../shared/traces, with the tokens every stage saved, prefix reuse, and the
// per-observation cost in wasm of the two per-observation stages (dedup and
// render + encode) next to a baseline measured in the same run.
// Writes bench/WINDOWS.md and bench/windows.json.
//
// Usage: node bench/windows.mjs [--traces DIR|FILE] [--out DIR] [--quick]
//        [--providers a,b] [--windows 3,5] [--rounds N]
import { readFileSync, readdirSync, statSync, writeFileSync, mkdirSync } from 'node:fs';
import { loadavg } from 'node:os';
import { dirname, join, relative, resolve } from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import * as pkg from '../pkg/entries/node.js';
import { percentile } from '../pkg/core/stats.js';
import { defaultTracesDir } from './harness.mjs';
import { onlyStage } from './policies.mjs';
import { withBenchModel } from './tokens.mjs';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const STAGES = ['spill', 'dedup', 'phase', 'optical', 'compact'];

function parseArgs(argv) {
  const o = {
    traces: defaultTracesDir(ROOT),
    out: join(ROOT, 'bench'),
    providers: ['openai', 'anthropic'],
    windows: [3, 5],
    rounds: 200,
  };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    const next = () => {
      if (argv[i + 1] === undefined) throw new Error(`${a} needs a value`);
      return argv[++i];
    };
    if (a === '--traces') o.traces = resolve(next());
    else if (a === '--out') o.out = resolve(next());
    else if (a === '--quick') o.quick = true;
    else if (a === '--providers') o.providers = next().split(',');
    else if (a === '--windows') o.windows = next().split(',').map(Number);
    else if (a === '--rounds') o.rounds = Number(next());
    else throw new Error(`unknown option ${a}`);
  }
  if (o.quick) o.rounds = Math.min(o.rounds, 20);
  return o;
}

function traceFiles(path, quick) {
  const files = statSync(path).isDirectory()
    ? readdirSync(path).filter((f) => f.endsWith('.json') && f !== 'package.json').sort().map((f) => join(path, f))
    : [path];
  const trajectories = files.map((f) => JSON.parse(readFileSync(f, 'utf8'))).filter((t) => Array.isArray(t.steps));
  return quick ? trajectories.slice(0, 2) : trajectories;
}

/** Replays every trajectory with `options`; totals as `tracelite replay` gives them. */
function replayAll(trajectories, options) {
  const perStep = [];
  const fractions = [];
  for (const t of trajectories) {
    const { result, prefixFractions } = pkg.replayTrajectory(t, withBenchModel(options));
    perStep.push(...result.per_step);
    fractions.push(...prefixFractions);
  }
  return pkg.summarizeReplay(perStep, fractions);
}

/** p50 and p95 in ms of `fn()` over `rounds` calls after a warm-up. */
function time(fn, rounds) {
  for (let i = 0; i < Math.min(20, rounds); i++) fn(i);
  const ms = [];
  for (let i = 0; i < rounds; i++) {
    const t0 = performance.now();
    fn(i);
    ms.push(performance.now() - t0);
  }
  ms.sort((a, b) => a - b);
  return { p50: percentile(ms, 50), p95: percentile(ms, 95) };
}

/**
 * Observations of 3.5–4.5 KB from the trajectories, in order; when there are
 * none, longer ones cut to their first 4 KB of whole lines.
 */
function observations4k(trajectories, n) {
  const all = trajectories.flatMap((t) => t.steps.map((s) => s.observation));
  const sized = all.filter((o) => o.length >= 3500 && o.length <= 4500);
  if (sized.length > 0) return sized.slice(0, n);
  return all
    .filter((o) => o.length > 4500)
    .map((o) => o.slice(0, o.lastIndexOf('\n', 4096) + 1 || 4096))
    .slice(0, n);
}

/** A request with a tool call + result per observation (OpenAI Chat). */
function requestWith(observations) {
  const messages = [{ role: 'system', content: 'You are a coding agent.' }, { role: 'user', content: 'Fix the bug.' }];
  observations.forEach((text, i) => {
    messages.push({ role: 'assistant', content: null, tool_calls: [{ id: `c${i}`, type: 'function', function: { name: 'bash', arguments: JSON.stringify({ command: `cat part${i}.txt` }) } }] });
    messages.push({ role: 'tool', tool_call_id: `c${i}`, content: text });
  });
  return { model: 'm', messages };
}

/**
 * Per-observation cost in wasm: render + encode of one 4 KB observation per
 * provider; and dedup of a new 4 KB observation against a window of three
 * (compress with only dedup on, minus the same compress with every stage off).
 */
function perObservation(trajectories, providers, rounds) {
  const obs = observations4k(trajectories, 8);
  if (obs.length === 0) return null;
  const render = {};
  for (const provider of providers) {
    render[provider] = time((i) => pkg.renderSnapshot(obs[i % obs.length], { provider }), rounds);
  }
  // The newest observation repeats lines of the window, as re-running a command does.
  const window = obs.slice(0, 3);
  const request = JSON.stringify(requestWith([...window, window[0]]));
  const none = { ...onlyStage('none'), window: 3 };
  const dedup = { ...onlyStage('dedup'), window: 3 };
  const base = time(() => pkg.compress(request, withBenchModel(none)), rounds);
  const withDedup = time(() => pkg.compress(request, withBenchModel(dedup)), rounds);
  return {
    bytes: obs.map((o) => o.length),
    render,
    dedup: { parseEmit: base, withDedup, p50: Math.max(0, withDedup.p50 - base.p50) },
  };
}

const pct = (x) => `${(x * 100).toFixed(1)}%`;
const fmt = (n) => n.toLocaleString('en-US');

function markdown(runs, overhead, meta) {
  const lines = [
    '# Recent window 3 vs 5, per provider',
    '',
    `Generated by \`make bench-windows\` (\`node bench/windows.mjs\`) on ${meta.trajectories} trajectories ` +
      `(${fmt(meta.steps)} requests) from \`${meta.traces}\`, TraceLite defaults otherwise, built-in token estimator. ` +
      `Load average at start ${meta.load}.`,
    '',
    '| provider | window | baseline tokens | after | reduction | prefix reuse | ' + STAGES.join(' | ') + ' |',
    '|---|---:|---:|---:|---:|---:|' + STAGES.map(() => '---:').join('|') + '|',
  ];
  for (const r of runs) {
    const s = r.summary;
    const cells = STAGES.map((st) => pct(s.saved_by_stage[st]?.share ?? 0));
    lines.push(`| ${r.provider} | ${r.window}${r.variant ? ` (${r.variant})` : ''} | ${fmt(s.baseline_tokens)} | ${fmt(s.compressed_tokens)} | **${pct(s.reduction)}** | ${pct(s.prefix_reuse)} | ${cells.join(' | ')} |`);
  }
  lines.push(
    '',
    'Stage columns: tokens the stage removed, as a share of the baseline (they add up to the reduction). ' +
      'Rows marked "no tool-call log" turn off `compact.keepToolCalls`: compaction then drops the compacted tool calls ' +
      'instead of keeping them verbatim after the summary; the difference is what keeping every tool call as text costs.',
    '',
  );
  if (overhead) {
    lines.push(
      `Per-observation cost in wasm under Node ${process.version} (${meta.rounds} calls each, observations of ${Math.min(...overhead.bytes)}–${Math.max(...overhead.bytes)} bytes):`,
      '',
      '| work | p50 | p95 |',
      '|---|---:|---:|',
    );
    for (const [provider, t] of Object.entries(overhead.render)) {
      lines.push(`| render + encode, ${provider} | ${t.p50.toFixed(3)} ms | ${t.p95.toFixed(3)} ms |`);
    }
    const d = overhead.dedup;
    lines.push(
      `| compress, every stage off (baseline) | ${d.parseEmit.p50.toFixed(3)} ms | ${d.parseEmit.p95.toFixed(3)} ms |`,
      `| compress, dedup only (window of 3 + new) | ${d.withDedup.p50.toFixed(3)} ms | ${d.withDedup.p95.toFixed(3)} ms |`,
      `| dedup (difference of the p50s) | ${d.p50.toFixed(3)} ms | |`,
      '',
    );
  }
  return lines.join('\n');
}

async function main() {
  const o = parseArgs(process.argv.slice(2));
  const trajectories = traceFiles(o.traces, o.quick);
  const meta = {
    traces: relative(ROOT, o.traces) || '.',
    trajectories: trajectories.length,
    steps: trajectories.reduce((n, t) => n + t.steps.length, 0),
    load: loadavg().map((x) => x.toFixed(2)).join(' '),
    rounds: o.rounds,
  };
  const runs = [];
  for (const provider of o.providers) {
    for (const window of o.windows) {
      const summary = replayAll(trajectories, { provider, window });
      delete summary.per_step;
      runs.push({ provider, window, summary });
      process.stderr.write(`[windows] ${provider} window ${window}: reduction ${pct(summary.reduction)}\n`);
    }
    // What the tool-call log costs: the first window without it.
    const window = o.windows[0];
    const summary = replayAll(trajectories, { provider, window, compact: { keepToolCalls: false } });
    delete summary.per_step;
    runs.push({ provider, window, variant: 'no tool-call log', summary });
    process.stderr.write(`[windows] ${provider} window ${window} without the tool-call log: reduction ${pct(summary.reduction)}\n`);
  }
  const overhead = perObservation(trajectories, o.providers, o.rounds);
  mkdirSync(o.out, { recursive: true });
  const md = markdown(runs, overhead, meta);
  writeFileSync(join(o.out, 'WINDOWS.md'), md);
  writeFileSync(join(o.out, 'windows.json'), JSON.stringify({ meta, runs, overhead }, null, 1) + '\n');
  process.stdout.write(md);
}

main().catch((err) => {
  process.stderr.write(`windows: ${err?.stack ?? err}\n`);
  process.exit(1);
});
