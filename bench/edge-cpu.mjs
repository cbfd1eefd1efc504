#!/usr/bin/env node
// `make bench-edge` (second part): compress CPU per request, warm and cold,
// in Node and in real workerd (Miniflare), with the load average. A real
// trajectory whose last request is about 400 KB is replayed turn by turn in
// one session (warm: the session's caches hold the earlier turns), once with
// TraceLite defaults and once with every stage off (parse + emit only), the
// two interleaved step by step so that load hits both alike; cold is the last
// request sent first to a fresh session (nothing cached). In workerd the
// times are wall-clock over loopback through the Cloudflare Worker example
// (createProxy + KvSpillStore) to a stub upstream, so they include the
// proxy's own work; a pass-through worker's time is shown beside them.
// Usage: node bench/edge-cpu.mjs [--trace FILE] [--json OUT] [--no-workerd]
import { mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { SpillStore, compress, trajectoryToRequest } from '../pkg/entries/node.js';
import { bundleWorker, projectWithPkg, startUpstream, startWorker, PASS_THROUGH_WORKER as PASS_THROUGH } from '../tests/js/support/hosts.mjs';
import { defaultTracesDir, stats } from './harness.mjs';
import { onlyStage } from './policies.mjs';
import { BENCH_MODELS, withBenchModel } from './tokens.mjs';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
/** The size of the conversation the issue's cold target names. */
const COLD_BYTES = 400_000;
const PARSE_EMIT = onlyStage('none');
/** Replays through each worker: one to warm it, then the measured ones. */
const WORKERD_ROUNDS = 6;

/** The trajectory whose last OpenAI chat request is closest to 400 KB, and its requests. */
export function pickTrajectory(tracesDir, file) {
  const files = file ? [file] : readdirSync(tracesDir).filter((f) => f.endsWith('.json')).sort().map((f) => join(tracesDir, f));
  let best;
  for (const f of files) {
    const text = readFileSync(f, 'utf8');
    const steps = JSON.parse(text).steps.length;
    const last = JSON.stringify(trajectoryToRequest(text, steps - 1, 'openai-chat'));
    const distance = Math.abs(last.length - COLD_BYTES);
    if (!best || distance < best.distance) best = { file: f, text, steps, distance };
  }
  if (!best) throw new Error(`no trajectory in ${tracesDir}`);
  const requests = [];
  // Each request names the model the bench prices for OpenAI (a vision model),
  // so optical runs at its default ('auto') in every build a bench compares.
  for (let t = 0; t < best.steps; t++) {
    requests.push(JSON.stringify({ ...trajectoryToRequest(best.text, t, 'openai-chat'), model: BENCH_MODELS.openai }));
  }
  return { file: best.file, requests };
}

/** The median of each step's times over the measured replays. */
export function perStepMedians(byStep) {
  return byStep.map((times) => {
    const s = [...times].sort((a, b) => a - b);
    return s[(s.length - 1) >> 1];
  });
}

/**
 * Node: warm per-step times (defaults and parse + emit, interleaved) and cold
 * times. The conversation is replayed `rounds` times, each in a fresh session
 * (so each replay's turns find only that replay's earlier turns cached); the
 * first replay warms the JIT, and a step's time is its median over the others,
 * so one GC pause or load spike does not decide a percentile of 40 steps.
 */
export function nodeRun(requests, { rounds = 6 } = {}) {
  const byStep = { defaults: requests.map(() => []), parseEmit: requests.map(() => []) };
  for (let round = 0; round < rounds; round++) {
    const stores = { defaults: new SpillStore(), parseEmit: new SpillStore() };
    try {
      requests.forEach((request, step) => {
        for (const [key, options] of [['defaults', {}], ['parseEmit', PARSE_EMIT]]) {
          const started = performance.now();
          compress(request, withBenchModel({ ...options, session: `warm-${round}`, store: stores[key] }));
          if (round > 0) byStep[key][step].push(performance.now() - started);
        }
      });
    } finally {
      stores.defaults.free();
      stores.parseEmit.free();
    }
  }
  const warm = { defaults: perStepMedians(byStep.defaults), parseEmit: perStepMedians(byStep.parseEmit) };
  const last = requests.at(-1);
  const cold = { defaults: [], parseEmit: [] };
  for (let i = 0; i < 5; i++) {
    for (const [key, options] of [['defaults', {}], ['parseEmit', PARSE_EMIT]]) {
      const store = new SpillStore();
      try {
        const started = performance.now();
        compress(last, withBenchModel({ ...options, session: `cold-${i}`, store }));
        cold[key].push(performance.now() - started);
      } finally {
        store.free();
      }
    }
  }
  return summarize(warm, cold);
}

function summarize(warm, cold) {
  const w = { defaults: stats(warm.defaults), parseEmit: stats(warm.parseEmit) };
  return {
    warm: { ...w, p95Ratio: w.defaults.p95 / Math.max(1e-9, w.parseEmit.p95), p50Ratio: w.defaults.p50 / Math.max(1e-9, w.parseEmit.p50) },
    cold: { defaults: stats(cold.defaults), parseEmit: stats(cold.parseEmit) },
  };
}

const EXAMPLE = readFileSync(join(ROOT, 'pkg-config/examples/cloudflare-worker/worker.js'), 'utf8');

async function host(name, source, upstream, options, kvPersist) {
  const dir = projectWithPkg(`tracelite-edge-cpu-${name}-`);
  const script = await bundleWorker(dir, source);
  const mf = await startWorker(script, {
    bindings: { UPSTREAM: upstream, TRACELITE_OPTIONS: JSON.stringify(withBenchModel(options)), TRACELITE_SECRET: 'bench-edge-cpu-secret-0123456789abcdef' },
    kvNamespaces: ['SPILLS'],
    ...(kvPersist ? { kvPersist } : {}),
    handleRuntimeStdio(stdout, stderr) {
      stdout.resume();
      stderr.resume();
    },
  });
  const url = String(await mf.ready).replace(/\/$/, '');
  return { mf, url, close: async () => { await mf.dispose(); rmSync(dir, { recursive: true, force: true }); } };
}

async function post(h, body, session) {
  const started = performance.now();
  const res = await fetch(`${h.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: 'Bearer bench', 'x-tracelite-session': session },
    body,
  });
  const text = await res.text();
  const ms = performance.now() - started;
  if (res.status !== 200) throw new Error(`worker answered ${res.status}: ${text.slice(0, 300)}`);
  return ms;
}

/** workerd: the same replay through the Worker example, defaults vs every stage off, and a pass-through. */
export async function workerdRun(requests) {
  const upstream = await startUpstream(() => ({
    status: 200,
    headers: { 'content-type': 'application/json' },
    chunks: [JSON.stringify({ id: 'c', object: 'chat.completion', choices: [{ index: 0, message: { role: 'assistant', content: 'ok' }, finish_reason: 'stop' }] })],
  }));
  const hosts = {};
  // The defaults worker's KV outlives it: a second worker reads the caches it kept.
  const kv = mkdtempSync(join(tmpdir(), 'tracelite-edge-cpu-kv-'));
  try {
    hosts.defaults = await host('defaults', EXAMPLE, upstream.url, {}, kv);
    hosts.parseEmit = await host('parse-emit', EXAMPLE, upstream.url, PARSE_EMIT);
    hosts.passThrough = await host('pass', PASS_THROUGH, upstream.url, {});
    const last = requests.at(-1);
    // Cold: the first request each fresh worker sees (its isolate just started), nothing cached.
    const first = {};
    for (const key of Object.keys(hosts)) first[key] = await post(hosts[key], last, 'cold-first');
    // As in Node: a first replay warms the isolates, a step's time is its
    // median over the next replays (each in its own session).
    const byStep = Object.fromEntries(Object.keys(hosts).map((key) => [key, requests.map(() => [])]));
    for (let round = 0; round < WORKERD_ROUNDS; round++) {
      for (const [step, request] of requests.entries()) {
        for (const key of Object.keys(hosts)) {
          const ms = await post(hosts[key], request, `warm-${round}`);
          if (round > 0) byStep[key][step].push(ms);
        }
      }
    }
    const warm = Object.fromEntries(Object.entries(byStep).map(([key, steps]) => [key, perStepMedians(steps)]));
    // Cold in a running isolate: the last request in a session never seen.
    const cold = { defaults: [], parseEmit: [], passThrough: [] };
    for (let i = 0; i < 5; i++) {
      for (const key of Object.keys(hosts)) cold[key].push(await post(hosts[key], last, `cold-${i}`));
    }
    const s = summarize(warm, cold);
    s.warm.passThrough = stats(warm.passThrough);
    s.cold.passThrough = stats(cold.passThrough);
    s.firstRequest = first;
    // A fresh worker over the same KV, sent the replayed session's last turn:
    // its first request finds the session's caches (snapshots, counts) in KV.
    await hosts.defaults.close();
    delete hosts.defaults;
    const next = await host('defaults-next', EXAMPLE, upstream.url, {}, kv);
    try {
      s.firstRequest.persisted = await post(next, last, `warm-${WORKERD_ROUNDS - 1}`);
    } finally {
      await next.close();
    }
    return s;
  } finally {
    for (const h of Object.values(hosts)) await h.close();
    await upstream.close();
    rmSync(kv, { recursive: true, force: true });
  }
}

/** The figures as a Markdown section. */
export function edgeCpuMarkdown(r) {
  const ms = (x) => x.toFixed(1);
  const row = (label, w, c) => `| ${label} | ${ms(w.p50)} | ${ms(w.p95)} | ${ms(c.p50)} | ${ms(c.max)} |`;
  const out = [
    '## Compress CPU per request, warm and cold',
    '',
    `\`node bench/edge-cpu.mjs\` at commit ${r.commit ?? '?'}, ${r.generated}. Machine: ${r.cores} cores, load average ${r.loadBefore.join(' ')} before, ${r.loadAfter.join(' ')} after (shared: absolute times are noisy, ratios within one run less so).`,
    `Conversation: \`${r.trajectory}\`, ${r.steps} turns replayed in order, each replay in its own session (warm: the session's caches hold that replay's earlier turns), the last request ${r.lastBytes.toLocaleString('en-US')} bytes. A step's warm time is its median over the measured replays (5 in Node, ${WORKERD_ROUNDS - 1} in workerd; one more replay first warms the JIT); p50 and p95 are over the steps. Cold: that last request in a session never seen (nothing cached), 5 times.`,
    '',
    '| host / configuration | warm p50 ms | warm p95 ms | cold p50 ms | cold max ms |',
    '|---|---:|---:|---:|---:|',
    row('Node, TraceLite defaults', r.node.warm.defaults, r.node.cold.defaults),
    row('Node, parse + emit only', r.node.warm.parseEmit, r.node.cold.parseEmit),
  ];
  if (r.workerd) {
    out.push(row('workerd proxy, TraceLite defaults', r.workerd.warm.defaults, r.workerd.cold.defaults));
    out.push(row('workerd proxy, parse + emit only', r.workerd.warm.parseEmit, r.workerd.cold.parseEmit));
    out.push(row('workerd pass-through (no TraceLite)', r.workerd.warm.passThrough, r.workerd.cold.passThrough));
  }
  out.push('');
  out.push(`Warm p95 per step, defaults ÷ parse + emit only: **${r.node.warm.p95Ratio.toFixed(2)}×** in Node${r.workerd ? `, **${r.workerd.warm.p95Ratio.toFixed(2)}×** in workerd` : ''} (target ≤ 2×).`);
  if (r.workerd) {
    const f = r.workerd.firstRequest;
    out.push(`First request of a fresh worker (isolate just started, nothing cached): defaults ${ms(f.defaults)} ms, parse + emit only ${ms(f.parseEmit)} ms, pass-through ${ms(f.passThrough)} ms (target ≤ 100 ms cold).`);
    if (f.persisted !== undefined) {
      out.push(`First request of a fresh worker for a session an earlier worker served (its caches in KV, \`persistCache\`): ${ms(f.persisted)} ms.`);
    }
  }
  out.push('');
  return out.join('\n');
}

async function main() {
  const args = process.argv.slice(2);
  const get = (flag) => {
    const i = args.indexOf(flag);
    return i >= 0 ? args[i + 1] : undefined;
  };
  const tracesDir = defaultTracesDir(ROOT);
  const loadBefore = loadavg().map((x) => x.toFixed(2));
  const { file, requests } = pickTrajectory(tracesDir, get('--trace'));
  process.stderr.write(`[edge-cpu] ${file}: ${requests.length} turns, Node\n`);
  const node = nodeRun(requests);
  let workerd;
  if (!args.includes('--no-workerd')) {
    process.stderr.write('[edge-cpu] workerd\n');
    workerd = await workerdRun(requests);
  }
  let commit;
  try {
    commit = readFileSync(join(ROOT, '.git/HEAD'), 'utf8').trim();
    if (commit.startsWith('ref: ')) commit = readFileSync(join(ROOT, '.git', commit.slice(5)), 'utf8').trim();
    commit = commit.slice(0, 7);
  } catch {
    commit = undefined;
  }
  const result = {
    generated: new Date().toISOString(),
    commit,
    cores: cpus().length,
    loadBefore,
    loadAfter: loadavg().map((x) => x.toFixed(2)),
    trajectory: file.split('/').pop(),
    steps: requests.length,
    lastBytes: requests.at(-1).length,
    node,
    workerd,
  };
  const md = edgeCpuMarkdown(result);
  process.stdout.write(`${md}\n`);
  const json = get('--json');
  if (json) writeFileSync(json, `${JSON.stringify(result, null, 2)}\n`);
  const report = get('--report');
  if (report) writeFileSync(report, `${md}\n`);
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  await main();
}
