// bench/hostile-memory.mjs in its reduced mode: every hostile case ends in a
// result or a typed TraceLiteError (never a trap or a crash), and the report
// has the documented shape.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const script = fileURLToPath(new URL('../../bench/hostile-memory.mjs', import.meta.url));

const EXPECTED = {
  'tool output 100 MB': 'result',
  'tool output 100 MB, default limit': 'LIMIT_EXCEEDED',
  'single line 1 MB': 'result',
  '10,000 steps': 'result',
  'arguments nested 10,000 deep': 'result',
  'request nested 10,000 deep': 'LIMIT_EXCEEDED',
  'ANSI bomb': 'result',
  'image 56 MP (8000×7000)': 'LIMIT_EXCEEDED',
  'invalid base64 image': 'INVALID_REQUEST',
  'numbers beyond i64/f64': 'result',
  'duplicate keys': 'INVALID_REQUEST',
};

test('hostile-memory --quick: each case is a result or a typed error, with memory figures', () => {
  const run = spawnSync(process.execPath, [script, '--quick', '--json'], { encoding: 'utf8' });
  assert.equal(run.status, 0, run.stderr);
  const rows = run.stdout.trim().split('\n').map((l) => JSON.parse(l));
  assert.deepEqual(rows.map((r) => r.case), Object.keys(EXPECTED));
  for (const r of rows) {
    const want = EXPECTED[r.case];
    if (want === 'result') {
      assert.equal(r.outcome, 'result', `${r.case}: ${r.code}`);
      assert.match(r.code, /^\d+ → \d+ tokens$/);
    } else {
      assert.equal(r.outcome, 'error', `${r.case}: ${r.code}`);
      assert.equal(r.code, want, r.case);
    }
    for (const k of ['rssBefore', 'peakRss', 'wasmBefore', 'wasmAfter']) {
      assert.ok(Number.isInteger(r[k]) && r[k] > 0, `${r.case}.${k} = ${r[k]}`);
    }
    assert.ok(r.peakRss >= r.rssBefore, r.case);
    assert.ok(r.wasmAfter >= r.wasmBefore && r.wasmBefore % 65536 === 0, r.case);
  }
});

test('hostile-memory prints a markdown table with one row per case', () => {
  const run = spawnSync(process.execPath, [script, '--quick'], { encoding: 'utf8' });
  assert.equal(run.status, 0, run.stderr);
  const lines = run.stdout.split('\n').filter((l) => l.startsWith('|'));
  assert.match(lines[0], /^\| case \| outcome \| result \/ error code \| RSS before call \(MB\) \| peak RSS \(MB\) \| wasm memory/);
  assert.equal(lines.length, 2 + Object.keys(EXPECTED).length);
  for (const [i, name] of Object.keys(EXPECTED).entries()) {
    assert.ok(lines[i + 2].startsWith(`| ${name} | `), lines[i + 2]);
  }
});
