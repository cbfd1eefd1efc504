// Compaction from JS: the async summarizer flow with stand-in summarizers
// (good, malformed, failing, malformed-then-good), pinned constraints and stage ends.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  SpillStore, TraceLiteError, compressAsync, finishStage, pinConstraint, pinnedConstraints,
  trajectoryToRequest, validateSummary,
} from '../../pkg/entries/node.js';

const GOOD = [
  '## Goal', 'Fix `add` in src/calc.py.',
  '## Progress', 'Edited src/calc.py twice; tests pass.',
  '## Key facts', "NameError: name 'c' is not defined (fixed).",
  '## Decisions', 'Use + instead of -.',
  '## Next steps', 'Submit the fix.',
].join('\n');
const MALFORMED = '## Goal\nFix it.\n## Progress\n\n## Key facts\nsomething';

function trajectory(extra = 12) {
  const steps = [
    { thought: 'Look at the code.', tool: 'str_replace_editor', args: { command: 'view', path: '/repo/src/calc.py' }, observation: 'def add(a, b):\n    return a - b\n' },
    { thought: "The fix is to use +. I'll edit `add`.", tool: 'str_replace_editor', args: { command: 'str_replace', path: '/repo/src/calc.py', old_str: 'a - b', new_str: 'a + c' }, observation: 'The file /repo/src/calc.py has been edited.' },
    { thought: 'Run the tests.', tool: 'execute_bash', args: { command: 'python -m pytest tests -q' }, observation: "Traceback (most recent call last):\nNameError: name 'c' is not defined\n=== 1 failed in 0.01s ===\n[Command finished with exit code 1]" },
  ];
  for (let i = 0; i < extra; i++) {
    steps.push({ thought: `Next I will read file ${i}.`, tool: 'execute_bash', args: { command: `cat docs/f${i}.txt` }, observation: `doc line ${i} `.repeat(150) + '\n[Command finished with exit code 0]' });
  }
  return { id: 'js', task: 'Fix `add` in src/calc.py. Do not modify the tests.', system: 'You are a coding agent.', steps };
}

const t = trajectory();
const request = trajectoryToRequest(t, t.steps.length);
const settings = (session) => ({ session, compact: { threshold: 2000, planner: false, keep: 4 } });

function archiveText(req) {
  const i = req.messages.findIndex((m) => typeof m.content === 'string' && m.content.startsWith('[TraceLite constraint archive'));
  assert.deepEqual(req.messages.slice(0, i).map((m) => m.role), ['system', 'user'], 'the archive follows the system prompt and the task');
  assert.equal(req.messages[i - 1].content, t.task, 'the task is kept word for word');
  return req.messages[i].content;
}

function summaryText(req) {
  return req.messages.find((m) => typeof m.content === 'string' && m.content.startsWith('[TraceLite summary')).content;
}

test('validateSummary names what is wrong', () => {
  assert.deepEqual(validateSummary(GOOD), { ok: true });
  const bad = validateSummary(MALFORMED);
  assert.equal(bad.ok, false);
  assert.match(bad.problem, /missing section\(s\): Decisions, Next steps/);
  assert.match(bad.problem, /empty section\(s\): Progress/);
  assert.equal(validateSummary(42).ok, false);
});

test('a good summarizer answer replaces the extractive summary and is re-applied', async () => {
  const store = new SpillStore();
  const prompts = [];
  const out = await compressAsync(request, { ...settings('good'), store, summarizer: async (p) => { prompts.push(p); return GOOD; } });
  assert.equal(out.summary.source, 'summarizer');
  assert.deepEqual(out.summary.attempts, [{ ok: true }]);
  assert.equal(prompts.length, 1);
  for (const s of ['## Goal', '## Progress', '## Key facts', '## Decisions', '## Next steps', 'spill://good/', 'Do not modify the tests.']) {
    assert.ok(prompts[0].includes(s), `prompt lacks ${s}`);
  }
  const text = summaryText(out.request);
  assert.ok(text.includes('Use + instead of -.'));
  // The task stays word for word, first after the system prompt; no archive is needed for it.
  assert.equal(out.request.messages[1].content, t.task);
  assert.ok(!out.request.messages.some((m) => typeof m.content === 'string' && m.content.startsWith('[TraceLite constraint archive')));
  // Next turn: the same history; the adopted summary is re-applied, the summarizer is not called.
  const again = await compressAsync(request, { ...settings('good'), store, summarizer: async () => assert.fail('not called') });
  assert.equal(again.summary.source, 'reapplied');
  assert.equal(summaryText(again.request), text);
  store.free();
});

test('malformed answers are retried once, then the extractive summary stays', async () => {
  const store = new SpillStore();
  const seen = [];
  const out = await compressAsync(request, { ...settings('bad'), store, summarizer: async (p, ctx) => { seen.push({ p, ctx }); return MALFORMED; } });
  assert.equal(seen.length, 2);
  assert.equal(seen[1].ctx.attempt, 1);
  assert.match(seen[1].p, /previous answer was rejected \(missing section/);
  assert.equal(out.summary.source, 'extractive');
  assert.equal(out.summary.attempts.length, 2);
  const text = summaryText(out.request);
  assert.match(text, /## Progress\n- \d+ earlier messages compacted/);
  assert.ok(text.includes("NameError: name 'c' is not defined"));
  store.free();
});

test('a failing summarizer falls back to the extractive summary; a retry can succeed', async () => {
  const store = new SpillStore();
  let calls = 0;
  const out = await compressAsync(request, { ...settings('fail'), store, summarizer: async () => { calls++; throw new Error('rate limited'); } });
  assert.equal(calls, 2);
  assert.equal(out.summary.source, 'extractive');
  assert.match(out.summary.attempts[0].problem, /threw: rate limited/);
  const store2 = new SpillStore();
  let n = 0;
  const second = await compressAsync(request, { ...settings('retry'), store: store2, summarizer: async () => (n++ === 0 ? 'no sections at all' : GOOD) });
  assert.equal(second.summary.source, 'summarizer');
  assert.deepEqual(second.summary.attempts.map((a) => a.ok), [false, true]);
  store.free();
  store2.free();
});

test('no summarizer call without a compaction; bad options are typed errors', async () => {
  const store = new SpillStore();
  const small = trajectoryToRequest(t, 2);
  const out = await compressAsync(small, { ...settings('none'), store, summarizer: async () => assert.fail('not called') });
  assert.equal(out.summary.source, 'none');
  await assert.rejects(compressAsync(request, { summarizer: 'nope' }), (e) => e instanceof TraceLiteError && e.code === 'INVALID_OPTION' && e.path === 'summarizer');
  assert.throws(() => pinConstraint({}, 's', 'x'), (e) => e.code === 'INVALID_OPTION' && e.path === 'store');
  assert.throws(() => pinConstraint(store, 's', '   '), (e) => e.code === 'INVALID_OPTION');
  store.free();
});

test('finishStage makes the next call a stage boundary; pinned constraints are archived', async () => {
  const store = new SpillStore();
  const opts = { session: 'stage', store, compact: { threshold: 1000000, planner: false, keep: 4, detectStages: false } };
  assert.equal(pinConstraint(store, 'stage', 'Never push to main.'), true);
  assert.equal(pinConstraint(store, 'stage', 'Never push to main.'), false);
  assert.deepEqual(pinnedConstraints(store, 'stage'), ['Never push to main.']);
  const before = await compressAsync(request, opts);
  assert.equal(before.summary.source, 'none');
  finishStage(store, 'stage');
  const out = await compressAsync(request, opts);
  assert.equal(out.summary.source, 'extractive');
  assert.ok(out.report.stages.at(-1).notes[0].includes('stage boundary (host)'));
  assert.ok(archiveText(out.request).includes('- Never push to main.'));
  store.free();
});
