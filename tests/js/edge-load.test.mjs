// bench/edge-load.mjs in a short mode: the Worker example and a pass-through
// worker in workerd under autocannon at two concurrency levels, then normal
// traffic without and with the adversarial client (small sizes). Asserts that
// nothing failed and that latencies and memory were measured (no thresholds:
// the numbers belong to `make bench-edge`).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';

const root = new URL('../../', import.meta.url).pathname;
const run = promisify(execFile);

test('edge proxy under load: zero errors, every response and upstream body checked, latency and memory reported', { timeout: 120000 }, async () => {
  const dir = mkdtempSync(join(tmpdir(), 'tracelite-edge-load-'));
  try {
    const json = join(dir, 'edge-load.json');
    const { stdout } = await run(process.execPath, [
      join(root, 'bench/edge-load.mjs'), '--levels', '1,4', '--requests', '8', '--sessions', '2', '--max-seconds', '40', '--json', json,
      // A budget whose per-result cap (4,000 tokens) lets a small attacker blob spill.
      '--options', '{"budget":16000}',
      '--attack-connections', '2', '--attack-requests', '8', '--attack-grep-kb', '4', '--attack-messages', '3000', '--attack-seconds', '20',
    ], { cwd: root, timeout: 115000, maxBuffer: 1 << 20 });
    assert.match(stdout, /\| connections \| worker \| requests \|/);
    const r = JSON.parse(readFileSync(json, 'utf8'));
    assert.deepEqual(r.problems, []);
    assert.deepEqual(r.levels.map((l) => l.connections), [1, 4]);
    assert.deepEqual(r.requestsPerLevel, [8, 16]);
    for (const [i, level] of r.levels.entries()) {
      const amount = r.requestsPerLevel[i];
      for (const worker of [level.baseline, level.tracelite]) {
        assert.equal(worker.requests, amount, `${level.connections} connections: every request completed`);
        assert.equal(worker.unfinished, 0);
        assert.equal(worker.errors, 0);
        assert.equal(worker.non2xx, 0);
        assert.equal(worker.timeouts, 0);
        assert.equal(worker.mismatches, 0);
        assert.equal(worker.check.responses, amount);
        assert.ok(worker.p50 > 0 && worker.p99 >= worker.p50 && worker.max >= worker.p99, 'latencies reported');
        assert.ok(worker.rps > 0);
        assert.ok(worker.memory.node > 0, 'Node RSS reported');
        assert.ok(worker.memory.workerd > 0, 'workerd RSS reported (its process was found)');
      }
    }
    // The adversarial client ran beside normal traffic, measured without and with it.
    const a = r.attack;
    assert.deepEqual(a.runs.map((x) => x.attacks), ['grep+compaction', 'grep', 'compaction']);
    for (const run of [a.quiet, ...a.runs.map((x) => x.normal)]) {
      assert.equal(run.requests, 8);
      assert.equal(run.non2xx + run.mismatches + run.unfinished, 0);
      assert.ok(run.p99 > 0);
    }
    assert.ok(a.grepBlobBytes >= 4096);
    let compactions = 0;
    for (const x of a.runs) {
      assert.ok(x.p99Ratio > 0);
      for (const kind of x.attacks.split('+')) assert.ok(x[kind].requests >= 1, `${x.attacks}: ${kind} ran`);
      // Every grep answered (200, or a typed error once the core bounds its cost); no dropped connection.
      for (const outcome of Object.keys(x.grep.outcomes)) assert.match(outcome, /^(200|4\d\d [A-Z_]+)$/);
      for (const outcome of Object.keys(x.compaction.outcomes)) assert.match(outcome, /^(200|413 [A-Z_]+|200 skipped [A-Z_]+)$/);
      compactions += x.compaction.outcomes['200'] ?? 0;
    }
    // The upstream saw the exact compressed request of each session, with fewer tokens.
    const sent = 8 + 16 + 2 * r.variants.length + 4 * 8; // the two levels, the warm-up, the runs without and beside the attacker
    assert.equal(r.upstream.tracelite.requests, sent);
    assert.equal(r.upstream.tracelite.matched, sent);
    assert.equal(r.upstream.baseline.matched, sent - 4 * 8); // the pass-through has no adversarial runs
    // (Without ../shared/traces the requests come from the bundled sample, whose early turns are too small to compress.)
    for (const v of r.variants) assert.ok(v.tokensAfter <= v.tokensBefore, `${v.name} did not grow`);
    for (const v of r.variants.filter((x) => x.name === 'last' || x.name === 'large')) assert.ok(v.tokensAfter < v.tokensBefore, `${v.name} was compressed`);
    // The large request spilled into KV, and the worker logged one report per request.
    assert.ok(r.variants.some((v) => v.spills > 0));
    assert.ok(r.kvKeys > 0);
    // One report line per compressed request: the normal ones, the attacker's set-up and its compactions that went through.
    assert.equal(r.reportLogLines, sent + 1 + compactions);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
