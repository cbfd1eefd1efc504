#!/usr/bin/env node
// The byte-identity guard: replays every trajectory of a directory through the
// built package (`pkg/`) under a few option variants, as `tracelite replay` does,
// and hashes every emitted request, report and spill. A refactor that must not
// change output prints the same digests before and after each step:
//
//   node bench/digest.mjs --save /tmp/before.json        # on the base commit
//   node bench/digest.mjs --against /tmp/before.json     # after a change: exit 1 on a difference
//
// Options: `--traces DIR` (default `../shared/traces` or TRACELITE_TRACES),
// `--only NAME,...` variants, `--limit N` trajectories (a quick check),
// `--pixels`: snapshots hashed by their decoded pixels and byte counts left out,
// so a change of PNG encoder that keeps every pixel prints the same digests.
import { createHash } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { defaultTracesDir, traceFiles } from './harness.mjs';
import { decodeGray } from './ocr.mjs';
import { BENCH_MODELS } from './tokens.mjs';
import { replayTrajectory } from '../pkg/entries/node.js';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');

/**
 * The option variants replayed: the defaults and one change per area, each
 * naming the vision model the benchmarks price for its provider
 * (`BENCH_MODELS`: with `optical.enabled: 'auto'` a model that reads no
 * images gets no snapshots), and one text-only model.
 */
export const VARIANTS = {
  defaults: { model: BENCH_MODELS.openai },
  anthropic: { provider: 'anthropic', model: BENCH_MODELS.anthropic },
  gemini: { provider: 'gemini', model: BENCH_MODELS.gemini },
  liveViews: { optical: { keepLiveViews: true }, model: BENCH_MODELS.openai },
  unplanned: { plan: { enabled: false }, model: BENCH_MODELS.openai },
  noSpill: { spill: { enabled: false }, model: BENCH_MODELS.openai },
  textOnly: { model: 'deepseek-chat' },
  salience: { spill: { salience: { enabled: true } }, model: BENCH_MODELS.openai },
};

/** Keys of a report that measure time, not output: left out of the digest. */
const TIMING = new Set(['ms', 'elapsedMs', 'timings', 'durationMs']);

/** Keys of a report that count PNG bytes: left out of a pixel digest. */
const BYTES = new Set(['bytes', 'bytesAfter', 'bytesBefore', 'currentBytes', 'previousBytes', 'sharedBytes']);

const PNG_BASE64 = 'iVBORw0KGgo';
const PNG_URI = `data:image/png;base64,${PNG_BASE64}`;

/** A PNG in base64 (bare or a data URI) as its size and the SHA-256 of its gray pixels. */
function pixelsOf(base64) {
  const { width, height, gray } = decodeGray(Buffer.from(base64, 'base64'));
  return `png:${width}x${height}:${createHash('sha256').update(gray).digest('hex')}`;
}

function stable(value, pixels = false) {
  return JSON.stringify(value, (k, v) => {
    if (TIMING.has(k) || (pixels && BYTES.has(k))) return undefined;
    if (pixels && typeof v === 'string') {
      if (v.startsWith(PNG_URI)) return pixelsOf(v.slice(PNG_URI.length - PNG_BASE64.length));
      if (v.startsWith(PNG_BASE64)) return pixelsOf(v);
    }
    return v;
  });
}

/** SHA-256 over every step's request, report and spills of one replay. */
export function replayDigest(text, options, { pixels = false } = {}) {
  const hash = createHash('sha256');
  replayTrajectory(text, options, {
    onStep: ({ outputText, output }) => {
      hash.update(pixels ? stable(output.request, true) : outputText);
      hash.update('\0');
      hash.update(stable(output.report, pixels));
      hash.update('\0');
      hash.update(stable(output.spills ?? [], pixels));
      hash.update('\0');
    },
  });
  return hash.digest('hex');
}

function main(argv) {
  const arg = (name) => {
    const i = argv.indexOf(name);
    return i >= 0 ? argv[i + 1] : undefined;
  };
  const dir = arg('--traces') ?? defaultTracesDir(root);
  if (!dir) {
    process.stderr.write('digest: no trajectories (../shared/traces or TRACELITE_TRACES)\n');
    process.exit(2);
  }
  const only = arg('--only')?.split(',');
  const limit = Number(arg('--limit') ?? Infinity);
  const files = traceFiles(dir).slice(0, limit);
  const pixels = argv.includes('--pixels');
  const digests = {};
  for (const [name, options] of Object.entries(VARIANTS)) {
    if (only && !only.includes(name)) continue;
    const all = createHash('sha256');
    const started = Date.now();
    for (const file of files) {
      const d = replayDigest(readFileSync(file, 'utf8'), options, { pixels });
      digests[`${name}:${file.split('/').pop()}`] = d;
      all.update(d);
    }
    digests[name] = all.digest('hex');
    process.stdout.write(`${name.padEnd(10)} ${digests[name].slice(0, 16)}  (${files.length} trajectories, ${((Date.now() - started) / 1000).toFixed(1)} s)\n`);
  }
  const save = arg('--save');
  if (save) writeFileSync(save, JSON.stringify(digests, null, 1));
  const against = arg('--against');
  if (against) {
    const before = JSON.parse(readFileSync(against, 'utf8'));
    const differ = Object.keys(digests).filter((k) => k.includes(':') && before[k] !== undefined && before[k] !== digests[k]);
    const missing = Object.keys(digests).filter((k) => before[k] === undefined);
    for (const k of differ) process.stdout.write(`DIFFERS ${k}\n`);
    if (missing.length) process.stdout.write(`(${missing.length} digests not in ${against})\n`);
    process.stdout.write(differ.length ? `GUARD DIFFERS: ${differ.length} replays\n` : 'GUARD SAME\n');
    process.exit(differ.length ? 1 : 0);
  }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) main(process.argv.slice(2));
