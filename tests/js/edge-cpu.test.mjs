// bench/edge-cpu.mjs on the bundled sample: the replay runs in Node and in
// workerd, defaults and parse + emit only, and every figure is reported (no
// thresholds: the numbers belong to `make bench-edge`).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { edgeCpuMarkdown, perStepMedians } from '../../bench/edge-cpu.mjs';
import { stats } from '../../bench/harness.mjs';

const root = new URL('../../', import.meta.url).pathname;
const run = promisify(execFile);

test('stats: percentiles of a sample (the ones edge-cpu reports)', () => {
  const s = stats([5, 1, 4, 2, 3, 10, 6, 7, 8, 9]);
  assert.deepEqual([s.n, s.p50, s.p95, s.max, s.mean], [10, 5, 10, 10, 5.5]);
  assert.deepEqual(stats([]).n, 0);
});

test('perStepMedians: each step its median over the replays (the lower of two middles)', () => {
  assert.deepEqual(perStepMedians([[3, 1, 2], [5, 4], [9], [8, 100, 7, 6, 1]]), [2, 4, 9, 7]);
});

test('edge CPU: warm and cold compress times in Node and workerd, against parse + emit only', { timeout: 180000 }, async () => {
  const dir = mkdtempSync(join(tmpdir(), 'tracelite-edge-cpu-'));
  try {
    const json = join(dir, 'edge-cpu.json');
    const { stdout } = await run(process.execPath, [
      join(root, 'bench/edge-cpu.mjs'), '--trace', join(root, 'tests/fixtures/sample-trajectory.json'), '--json', json,
    ], { cwd: root, timeout: 175000, maxBuffer: 1 << 20 });
    const r = JSON.parse(readFileSync(json, 'utf8'));
    assert.equal(r.trajectory, 'sample-trajectory.json');
    assert.ok(r.steps > 1 && r.lastBytes > 0);
    for (const host of [r.node, r.workerd]) {
      for (const config of ['defaults', 'parseEmit']) {
        assert.equal(host.warm[config].n, r.steps, `${config}: one time per turn`);
        assert.ok(host.warm[config].p50 > 0 && host.warm[config].p95 >= host.warm[config].p50);
        assert.equal(host.cold[config].n, 5);
      }
      assert.ok(Number.isFinite(host.warm.p95Ratio) && host.warm.p95Ratio > 0);
    }
    assert.equal(r.workerd.warm.passThrough.n, r.steps);
    for (const k of ['defaults', 'parseEmit', 'passThrough', 'persisted']) assert.ok(r.workerd.firstRequest[k] > 0);
    assert.equal(r.loadBefore.length, 3);
    assert.equal(stdout.trim(), edgeCpuMarkdown(r).trim());
    assert.match(stdout, /\| workerd proxy, TraceLite defaults \|/);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
