#!/usr/bin/env node
// Compress latency in wasm under Node, alone in its process (run under
// `/usr/bin/time -v` by bench/run.mjs for the peak RSS). Prints JSON.
// Usage: node bench/latency.mjs TRACE.json... [--rounds N]
import { readFileSync } from 'node:fs';
import { performance } from 'node:perf_hooks';
import { initSync } from '../pkg/wasm/tracelite.js';
import * as pkg from '../pkg/entries/node.js';
import { percentile } from '../pkg/core/stats.js';
import { onlyStage } from './policies.mjs';
import { withBenchModel } from './tokens.mjs';

const CONFIGS = [
  { label: 'TraceLite defaults', options: {} },
  { label: 'TraceLite, fixed batches (planner off)', options: { plan: { enabled: false } } },
  { label: 'parse + emit only (every stage off)', options: { ...onlyStage('none') } },
];

function stats(values) {
  const s = [...values].sort((a, b) => a - b);
  return { n: s.length, p50: percentile(s, 50), p95: percentile(s, 95), max: s.at(-1) ?? 0, mean: s.reduce((a, b) => a + b, 0) / Math.max(1, s.length) };
}

const args = process.argv.slice(2);
let rounds = 1;
const files = [];
for (let i = 0; i < args.length; i++) {
  if (args[i] === '--rounds') rounds = Number(args[++i]);
  else files.push(args[i]);
}

const traces = files.map((f) => JSON.parse(readFileSync(f, 'utf8')));
const configs = [];
let steps = 0;
for (const config of CONFIGS) {
  const times = [];
  const perObs = [];
  for (let round = 0; round < rounds; round++) {
    for (const trajectory of traces) {
      const text = JSON.stringify(trajectory);
      const store = new pkg.SpillStore();
      try {
        for (let t = 0; t < trajectory.steps.length; t++) {
          const request = JSON.stringify(pkg.trajectoryToRequest(text, t, 'openai-chat'));
          const started = performance.now();
          pkg.compress(request, withBenchModel({ ...config.options, session: 'latency', store }));
          const ms = performance.now() - started;
          // The first round warms the JIT and the wasm caches; measure the rest.
          if (round === rounds - 1) {
            times.push(ms);
            const observations = Math.max(0, t);
            if (observations > 0) perObs.push(ms / observations);
            if (config === CONFIGS[0]) steps++;
          }
        }
      } finally {
        store.free();
      }
    }
  }
  configs.push({ label: config.label, ms: stats(times), perObservationMs: stats(perObs) });
}
const wasm = initSync();
process.stdout.write(
  JSON.stringify({
    node: process.version,
    traces: traces.length,
    steps,
    configs,
    wasmMemoryBytes: wasm.memory.buffer.byteLength,
    rssBytes: process.memoryUsage().rss,
  }) + '\n',
);
