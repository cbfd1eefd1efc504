// The built package in Node: compress, typed errors, the replay CLI, the estimator.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { getEncoding } from 'js-tiktoken';
import {
  SpillStore, TraceLiteError, compress, estimateTokens, trajectoryToRequest, version,
} from '../../pkg/entries/node.js';

const root = new URL('../../', import.meta.url).pathname;
const traces = process.env.TRACELITE_TRACES ?? join(root, '../shared/traces');
const sample = join(root, 'tests/fixtures/sample-trajectory.json');
const cli = join(root, 'pkg/cli/index.mjs');
const sharedTrace = join(traces, 'mini-swe-agent_gemini-3-pro__pallets__flask-5014.json');

function throwsCode(fn, code, path) {
  assert.throws(fn, (err) => {
    assert.ok(err instanceof TraceLiteError, `expected TraceLiteError, got ${err}`);
    assert.equal(err.code, code, err.message);
    if (path !== undefined) assert.equal(err.path, path, err.message);
    return true;
  });
}

test('version is the crate version', () => {
  const pkg = JSON.parse(readFileSync(join(root, 'pkg/package.json'), 'utf8'));
  assert.equal(version(), pkg.version);
});

test('compress returns a request of the same format and a report', () => {
  const trajectory = JSON.parse(readFileSync(sample, 'utf8'));
  const request = trajectoryToRequest(trajectory, trajectory.steps.length, 'openai-chat');
  assert.equal(request.messages[0].role, 'system');
  const store = new SpillStore();
  // Compaction (off here) is the one stage that replaces old calls, by a summary with pointers.
  const { request: out, report } = compress(request, { store, budget: 16000, session: 'core-test', compact: { enabled: false } });
  assert.equal(report.format, 'openai-chat');
  assert.ok(Array.isArray(out.messages));
  assert.equal(report.stages.map((s) => s.stage).join(), 'spill,dedup,phase,optical,compact');
  assert.ok(report.tokensBefore > 1000);
  assert.ok(report.tokensAfter <= report.tokensBefore);
  // Tool calls are never dropped or reordered.
  const calls = (r) => r.messages.flatMap((m) => (m.tool_calls ?? []).map((c) => c.function.arguments));
  assert.deepEqual(calls(out), calls(request));
  // Everything a stage removed is readable back through its pointer.
  for (const change of report.changes.filter((c) => c.pointer)) {
    const [, session, key] = change.pointer.match(/^spill:\/\/([^/]+)\/(.+)$/);
    assert.ok(store.get(session, key).length > 0);
  }
  store.free();
});

test('compress with every stage off returns the request unchanged', () => {
  const request = trajectoryToRequest(readFileSync(sharedTraceOrSample(), 'utf8'), 5);
  const off = { enabled: false };
  const { request: out, report } = compress(request, { spill: off, dedup: off, phase: off, optical: off, compact: off });
  assert.deepEqual(out, request);
  assert.equal(report.tokensBefore, report.tokensAfter);
});

function sharedTraceOrSample() {
  return existsSync(sharedTrace) ? sharedTrace : sample;
}

test('bad input throws TraceLiteError with stable codes and field paths', () => {
  throwsCode(() => compress('{"messages": [', {}), 'INVALID_JSON', 'request');
  throwsCode(() => compress({ messages: [{ role: 'user', content: 42 }] }), 'INVALID_REQUEST', 'messages[0].content');
  throwsCode(() => compress({ messages: [{ role: 'wizard', content: 'x' }] }), 'INVALID_REQUEST', 'messages[0].role');
  throwsCode(() => compress({ prompt: 'hello' }), 'UNKNOWN_FORMAT');
  throwsCode(() => compress({ messages: [] }, { format: 'cohere' }), 'INVALID_OPTION', 'format');
  throwsCode(() => compress({ messages: [] }, { budget: 'lots' }), 'INVALID_OPTION', 'budget');
  throwsCode(() => compress({ messages: [] }, { spill: { fraction: 7 } }), 'INVALID_OPTION', 'spill.fraction');
  throwsCode(() => compress({ messages: [] }, { windw: 3 }), 'INVALID_OPTION', 'windw');
  throwsCode(() => compress({ messages: [] }, 'fast'), 'INVALID_OPTION', 'options');
  throwsCode(() => compress(42), 'INVALID_REQUEST', 'request');
  throwsCode(() => compress({ messages: [] }, { countTokens: 5 }), 'INVALID_OPTION', 'countTokens');
  throwsCode(() => compress({ messages: [{ role: 'user', content: 'hi' }] }, { countTokens: () => 'many' }), 'COUNTER_FAILED');
  throwsCode(() => compress({ messages: [{ role: 'user', content: 'hi' }] }, { countTokens: () => { throw new Error('x'); } }), 'COUNTER_FAILED');
  throwsCode(() => compress({ messages: [{ role: 'user', content: 'x'.repeat(2000) }] }, { limits: { maxRequestBytes: 1000 } }), 'LIMIT_EXCEEDED', 'limits.maxRequestBytes');
  throwsCode(() => estimateTokens(null), 'INVALID_REQUEST', 'text');
  throwsCode(() => trajectoryToRequest({ task: 'x', steps: [] }, 3), 'INVALID_OPTION', 't');
});

test('a host token counter is used for every text', () => {
  const seen = [];
  const { report } = compress({ messages: [{ role: 'user', content: 'one two' }] }, {
    countTokens: (text) => { seen.push(text); return 100; },
  });
  assert.deepEqual(seen.includes('one two'), true);
  assert.equal(report.tokensBefore, 104); // 100 + per-message overhead
});

test('the report gives the request JSON bytes before and after beside tokens', () => {
  const request = { model: 'm', messages: [{ role: 'system', content: 's' }, { role: 'user', content: 'é'.repeat(10) }] };
  const out = compress(request);
  assert.equal(out.report.bytesBefore, Buffer.byteLength(JSON.stringify(request)));
  assert.equal(out.report.bytesAfter, Buffer.byteLength(JSON.stringify(out.request)));
});

test('replay --json on a shared trajectory returns consistent numbers', () => {
  const file = sharedTraceOrSample();
  const out = JSON.parse(execFileSync('node', [cli, 'replay', '--json', '--budget', '16000', file], { encoding: 'utf8' }));
  assert.deepEqual(Object.keys(out).sort(), [
    'baseline_bytes', 'baseline_tokens', 'compressed_bytes', 'compressed_tokens', 'latency_ms', 'per_step',
    'prefix_reuse', 'reduction', 'saved_by_stage', 'steps',
  ]);
  // Bytes beside tokens: the request JSON before and after, step by step and in total.
  assert.equal(out.baseline_bytes, out.per_step.reduce((s, p) => s + p.bytes_before, 0));
  assert.equal(out.compressed_bytes, out.per_step.reduce((s, p) => s + p.bytes_after, 0));
  for (const p of out.per_step) assert.ok(p.bytes_before > 0 && p.bytes_after > 0, `step ${p.t}`);
  const trajectory = JSON.parse(readFileSync(file, 'utf8'));
  assert.equal(out.steps, trajectory.steps.length);
  assert.equal(out.per_step.length, out.steps);
  assert.deepEqual(out.per_step.map((p) => p.t), [...Array(out.steps).keys()]);
  assert.equal(out.baseline_tokens, out.per_step.reduce((s, p) => s + p.baseline, 0));
  assert.equal(out.compressed_tokens, out.per_step.reduce((s, p) => s + p.compressed, 0));
  assert.ok(Math.abs(out.reduction - (1 - out.compressed_tokens / out.baseline_tokens)) < 1e-3);
  assert.ok(out.prefix_reuse >= 0 && out.prefix_reuse <= 1);
  // Stage savings add up to the reduction, step by step and in total.
  assert.deepEqual(Object.keys(out.saved_by_stage), ['spill', 'dedup', 'phase', 'optical', 'compact']);
  for (const p of out.per_step) {
    assert.equal(Object.values(p.saved).reduce((a, b) => a + b, 0), p.baseline - p.compressed, `step ${p.t}`);
  }
  const savedTotal = Object.values(out.saved_by_stage).reduce((a, s) => a + s.tokens, 0);
  assert.equal(savedTotal, out.baseline_tokens - out.compressed_tokens);
  assert.ok(out.baseline_tokens > out.compressed_tokens && savedTotal > 0);
  assert.ok(out.latency_ms.p50 <= out.latency_ms.p95 && out.latency_ms.p95 <= out.latency_ms.max);
  // The baseline of step t is the estimate of the full request before step t.
  const full = trajectoryToRequest(trajectory, 3);
  const off = { enabled: false };
  const { report } = compress(full, { spill: off, dedup: off, phase: off, optical: off, compact: off });
  assert.equal(out.per_step[3].baseline, report.tokensBefore);
});

test('replay --dump writes the exact compressed request of each step', () => {
  const dir = mkdtempSync(join(tmpdir(), 'tracelite-dump-'));
  try {
    const out = JSON.parse(execFileSync('node', [cli, 'replay', '--json', '--dump', dir, sample], { encoding: 'utf8' }));
    const [run] = readdirSync(dir);
    assert.equal(readdirSync(join(dir, run)).length, out.steps);
    const req = JSON.parse(readFileSync(join(dir, run, '0.json'), 'utf8'));
    assert.ok(Array.isArray(req.messages));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('the estimator is within 10% of o200k_base on real observations', {
  skip: !existsSync(traces) && 'needs ../shared/traces or TRACELITE_TRACES',
}, () => {
  const enc = getEncoding('o200k_base');
  const files = readdirSync(traces).filter((f) => f.endsWith('.json')).sort();
  // Two traces of each source keep the test fast (js-tiktoken is slow); the Rust
  // test covers every observation.
  const pick = [...files.filter((f) => f.startsWith('mini')).slice(0, 2), ...files.filter((f) => f.startsWith('openhands')).slice(0, 2)];
  let sum = 0;
  let n = 0;
  for (const f of pick.map((f) => join(traces, f))) {
    for (const step of JSON.parse(readFileSync(f, 'utf8')).steps) {
      const exact = enc.encode(step.observation ?? '').length;
      if (exact === 0) continue;
      sum += Math.abs(estimateTokens(step.observation) - exact) / exact;
      n++;
    }
  }
  assert.ok(n > 20);
  assert.ok(sum / n < 0.10, `MAPE ${(100 * sum / n).toFixed(2)}%`);
});

test('the wasm PNG writer gives the native golden bytes (deterministic across targets)', async () => {
  const { renderSnapshot } = await import('../../pkg/entries/node.js');
  // PYTHON of tests/optical_golden.rs.
  const text = 'def total(orders, *, tax=0.2):\n    """Sum of order amounts with tax."""\n    s = 0\n    for o in orders:\n' +
    '        if o.amount < 0:\n            raise ValueError(f"negative amount: {o.amount!r}")\n        s += o.amount\n' +
    '    return round(s * (1 + tax), 2)  # {}[]<>|\\~`^_@#$%&\n';
  const out = renderSnapshot(text, { provider: 'anthropic' });
  assert.equal(out.images.length, 1);
  const golden = readFileSync(join(root, 'tests/golden/python-anthropic-0.png'));
  assert.ok(Buffer.from(out.images[0].data, 'base64').equals(golden));
});
