#!/usr/bin/env node
// Content keys of two or more builds of the wasm in one run: `blobFacts`
// (UTF-8 size, lines and the SHA-256 content hash) of 1 KB, 64 KB and 4 MB
// texts, the builds interleaved; gzip size of each. Usage:
//   node bench/blob-facts-ab.mjs A.wasm B.wasm [...]
import { cpSync, existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { gzipSync } from 'node:zlib';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const wasms = process.argv.slice(2);
if (wasms.length < 2 || !wasms.every(existsSync)) {
  process.stderr.write('usage: node bench/blob-facts-ab.mjs A.wasm B.wasm [...]\n');
  process.exit(2);
}
const median = (xs) => [...xs].sort((a, b) => a - b)[(xs.length - 1) >> 1];
const dir = mkdtempSync(join(tmpdir(), 'tracelite-facts-ab-'));
try {
  const mods = [];
  for (const [k, wasm] of wasms.entries()) {
    const pkgDir = join(dir, `pkg${k}`);
    cpSync(join(ROOT, 'pkg'), pkgDir, { recursive: true });
    cpSync(wasm, join(pkgDir, 'wasm/tracelite_bg.wasm'));
    await import(pathToFileURL(join(pkgDir, 'entries/node.js')).href);
    mods.push(await import(pathToFileURL(join(pkgDir, 'internal/blob-keys.js')).href));
  }
  const line = 'drwxr-xr-x  2 user user 4096 Dec  4 16:50 some/path/to/a/file.rs\n';
  const sizes = [1 << 10, 64 << 10, 4 << 20];
  const rows = wasms.map((wasm) => ({ wasm, gzip: gzipSync(readFileSync(wasm), { level: 9 }).length, ms: sizes.map(() => []) }));
  for (const [s, size] of sizes.entries()) {
    const text = line.repeat(Math.ceil(size / line.length)).slice(0, size);
    const reps = Math.max(3, Math.round((16 << 20) / size));
    for (let round = 0; round < 7; round++) {
      for (const [k, m] of mods.entries()) {
        const t = performance.now();
        for (let i = 0; i < reps; i++) m.facts(text);
        rows[k].ms[s].push((performance.now() - t) / reps);
      }
    }
  }
  const base = rows[0];
  process.stdout.write(`| build | gzip bytes | ${sizes.map((s) => `${s >> 10} KiB µs`).join(' | ')} |\n|---|---:|${sizes.map(() => '---:').join('|')}|\n`);
  for (const r of rows) {
    const cells = r.ms.map((ms, s) => `${(median(ms) * 1000).toFixed(1)} (${(median(ms) / median(base.ms[s])).toFixed(2)}×)`);
    process.stdout.write(`| ${r.wasm} | ${r.gzip} (${(r.gzip / base.gzip).toFixed(3)}×) | ${cells.join(' | ')} |\n`);
  }
} finally {
  rmSync(dir, { recursive: true, force: true });
}
