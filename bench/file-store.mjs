#!/usr/bin/env node
// FileStore put cost against the files its root already holds (issue 49: every
// put scanned the whole store, 25 ms at 100 files, 152 ms at 1,000, over 120 s at
// 4,000). Each row: a fresh root pre-filled with N blob files (50 per session,
// written directly), a store opened on it (its counts loaded once), then puts of
// 500-byte blobs into new sessions; the median and p95 of a put, in ms, and the
// ratio of the median to the first row's. Sizes are interleaved over rounds so
// that the machine's drift hits them alike. Usage:
//   node bench/file-store.mjs [--rounds 3] [--puts 100] [--files 100,1000,10000]
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { FileStore } from '../pkg/adapters/file-store/index.js';

const { values } = parseArgs({
  options: {
    rounds: { type: 'string', default: '3' },
    puts: { type: 'string', default: '100' },
    files: { type: 'string', default: '100,1000,10000' },
  },
});
const rounds = Number(values.rounds);
const puts = Number(values.puts);
const sizes = values.files.split(',').map(Number);

const quantile = (xs, q) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor(q * s.length))];
};

/** Per-put times (ms) into a root that holds `files` blob files. */
async function measure(files) {
  const root = mkdtempSync(join(tmpdir(), 'tracelite-fs-bench-'));
  try {
    const perSession = 50;
    for (let s = 0; s < Math.ceil(files / perSession); s++) {
      const dir = join(root, `pre-${s}`);
      mkdirSync(dir, { mode: 0o700 });
      for (let k = 0; k < Math.min(perSession, files - s * perSession); k++) {
        writeFileSync(join(dir, `k${k}.txt`), `blob ${s} ${k}\n`, { mode: 0o600 });
      }
    }
    const store = new FileStore({ root });
    const opened = performance.now();
    await store.usage();
    const openMs = performance.now() - opened;
    const times = [];
    for (let i = 0; i < puts; i++) {
      const t = performance.now();
      await store.put(`new-${i % 10}`, `k${i}`, `line ${i}\n`.repeat(50));
      times.push(performance.now() - t);
    }
    return { times, openMs };
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
}

const results = new Map(sizes.map((n) => [n, { times: [], open: [] }]));
for (let r = 0; r < rounds; r++) {
  for (const n of sizes) {
    const { times, openMs } = await measure(n);
    results.get(n).times.push(...times);
    results.get(n).open.push(openMs);
  }
}
const base = quantile(results.get(sizes[0]).times, 0.5);
console.log(`FileStore put cost, ${rounds} rounds × ${puts} puts of 500 B (Node ${process.version})\n`);
console.log('| files in the root | put median (ms) | put p95 (ms) | median vs first row | open: counts loaded once (ms) |');
console.log('|---:|---:|---:|---:|---:|');
for (const n of sizes) {
  const { times, open } = results.get(n);
  const med = quantile(times, 0.5);
  console.log(`| ${n.toLocaleString('en-US')} | ${med.toFixed(3)} | ${quantile(times, 0.95).toFixed(3)} | ${(med / base).toFixed(2)}x | ${quantile(open, 0.5).toFixed(1)} |`);
}
