// bench/wasm-ab.mjs: builds compared in one run. On the bundled sample with
// the shipped wasm, and the package directory holding it (a build run with its
// own JS): every row reports the file's sizes and real times (no thresholds:
// the numbers belong to the benchmark).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { gzipSync } from 'node:zlib';
import { abMarkdown, compareWasm, shareMarkdown } from '../../bench/wasm-ab.mjs';
import { pickTrajectory } from '../../bench/edge-cpu.mjs';

const root = new URL('../../', import.meta.url).pathname;
const wasm = `${root}pkg/wasm/tracelite_bg.wasm`;

test('wasm-ab: every build measured on the same requests, ratios against the first', { timeout: 120000 }, async () => {
  const sample = `${root}tests/fixtures/sample-trajectory.json`;
  const { requests } = pickTrajectory(`${root}tests/fixtures`, sample);
  const rows = await compareWasm([wasm, `${root}pkg`], requests, { rounds: 2, coldRuns: 3, warmRuns: 2 });
  const bytes = readFileSync(wasm);
  assert.equal(rows.length, 2);
  assert.equal(rows[1].wasm, `${root}pkg`);
  for (const r of rows) {
    assert.equal(r.rawBytes, bytes.length);
    assert.equal(r.gzipBytes, gzipSync(bytes, { level: 9 }).length);
    for (const ms of [r.firstMs, r.coldMs, r.replayMs, r.stepP95Ms]) assert.ok(ms > 0 && Number.isFinite(ms), `${ms}`);
    // One step's time, so no more than the whole replay's.
    assert.ok(r.stepP95Ms < r.replayMs, `${r.stepP95Ms} of ${r.replayMs}`);
    // The optical stage's share: each configuration replayed, each run kept.
    assert.equal(r.share.runs.length, 2);
    for (const key of ['defaults', 'opticalOff', 'parseEmit']) {
      assert.ok(r.share.replayMs[key] > 0 && r.share.stepP95Ms[key] > 0, key);
      assert.ok(r.share.stepP95Ms[key] < r.share.replayMs[key], key);
    }
    const share = 1 - r.share.replayMs.opticalOff / r.share.replayMs.defaults;
    assert.ok(Math.abs(r.share.opticalShare) < 1 && Math.abs(r.share.opticalShare - share) < 0.5, `${r.share.opticalShare} vs ${share}`);
    const ratios = r.share.runs.map((run) => run.p95Ratio).sort((a, b) => a - b);
    assert.equal(r.share.p95Ratio, ratios[0], 'the median of two runs is the lower (nearest rank)');
  }
  const md = abMarkdown(rows);
  assert.match(md, /\| build \| gzip bytes.*\| p95 per step ms \|$/m);
  assert.equal(md.split('\n').length, 4);
  assert.match(md.split('\n')[2], /\(1\.00×\)/);
  const share = shareMarkdown(rows);
  assert.equal(share.split('\n').length, 4);
  assert.match(share, /optical share of the replay/);
  assert.match(share.split('\n')[2], /\| -?\d+% \|.*×, .*× \| \*\*.*×\*\* \|$/);
});
