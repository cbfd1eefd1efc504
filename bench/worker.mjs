// A bench worker: replays its share of the trajectories and prints one JSON
// line per trajectory, then a stats line (bench/harness.mjs `runBench`).
import { performance } from 'node:perf_hooks';
import * as pkg from '../pkg/entries/node.js';
import { loadPrices } from './cost.mjs';
import { benchTrace, groundingOcr, selectPolicies } from './harness.mjs';
import { o200kCounter } from './tokens.mjs';

const { files, policies: ids, variants = {}, ocrFiles = [], prices, ocr = true } = JSON.parse(process.argv[2]);
const ctx = { pkg, count: o200kCounter(), prices: loadPrices(prices), ocr: groundingOcr(ocr) };
const { policies } = selectPolicies(pkg, ids, variants);
let peakRss = 0;
for (const file of files) {
  const t0 = performance.now();
  const r = benchTrace(ctx, file, policies, { ocr: ocrFiles.includes(file) });
  peakRss = Math.max(peakRss, process.memoryUsage().rss);
  process.stdout.write(JSON.stringify({ type: 'trace', ...r }) + '\n');
  process.stderr.write(`${r.trace.id}: ${r.trace.steps} steps, ${((performance.now() - t0) / 1000).toFixed(1)} s (pid ${process.pid})\n`);
}
process.stdout.write(JSON.stringify({ type: 'stats', tokenizer: ctx.count.stats, peakRss, ocr: ctx.ocr?.stats ?? null }) + '\n');
