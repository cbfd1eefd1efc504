// The at-arrival oracle of `make bench` (issue 54, bench/oracle.mjs): it keeps
// the lines a later step uses (±1) and each output's ends, folds the rest into
// markers that count what they hide, folds an output the same way on every
// request (the prompt cache holds), and shows every grounding fact as text.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as pkg from '../../pkg/entries/node.js';
import { ORACLE_CONTEXT, ORACLE_ENDS, foldUnused, oracleAtArrival } from '../../bench/oracle.mjs';
import { classify, extractFacts, viewRequest } from '../../bench/grounding.mjs';
import { headroom, dominance } from '../../bench/report.mjs';

const numbered = (n) => Array.from({ length: n }, (_, i) => `line ${i + 1}`);

test('foldUnused keeps the used lines ±1 and the ends, and each marker counts the run it folds', () => {
  assert.equal(ORACLE_CONTEXT, 1);
  assert.equal(ORACLE_ENDS, 2);
  const text = [...numbered(9), 'ERROR in src/shop/price.py', ...numbered(10)].join('\n');
  const folded = foldUnused(text, { facts: [{ kind: 'path', text: 'src/shop/price.py' }], oldStrs: [] }).split('\n');
  assert.deepEqual(folded, [
    'line 1', 'line 2', '[… 6 lines folded (3-8) …]', 'line 9', 'ERROR in src/shop/price.py', 'line 1',
    '[… 7 lines folded (12-18) …]', 'line 9', 'line 10',
  ]);
  // A run of one line stays (a marker would not be shorter); nothing used: the ends only.
  assert.equal(foldUnused(numbered(5).join('\n'), { facts: [], oldStrs: [] }), 'line 1\nline 2\nline 3\nline 4\nline 5');
  assert.equal(foldUnused(numbered(6).join('\n'), { facts: [], oldStrs: [] }), 'line 1\nline 2\n[… 2 lines folded (3-4) …]\nline 5\nline 6');
  // A quoted multi-line old_str keeps its lines, `cat -n` numbers ignored.
  const listing = numbered(12).map((l, i) => `${String(i + 1).padStart(6)}\t${l === 'line 6' ? 'def total(a, b):' : l === 'line 7' ? '    return a - b' : l}`).join('\n');
  const kept = foldUnused(listing, { facts: [], oldStrs: ['def total(a, b):\n    return a - b'] });
  assert.match(kept, /def total\(a, b\):\n +7\t {4}return a - b\n +8\tline 8\n\[… 2 lines folded \(9-10\) …\]/);
});

test('the oracle shows every grounding fact as text and folds each output the same way on every request', () => {
  const log = [...numbered(300).map((l) => `tests/test_mod.py::${l.replace(' ', '_')} PASSED`), 'FAILED tests/test_price.py::test_discount - KeyError: price', ...numbered(200)].join('\n');
  const trajectory = {
    id: 'oracle', task: 'Fix the discount test.', system: 'You fix bugs.',
    steps: [
      { thought: 'Run the tests.', tool: 'bash', args: { command: 'pytest' }, observation: log },
      { thought: 'Look at it.', tool: 'bash', args: { command: 'cat tests/test_price.py' }, observation: 'def test_discount():\n    assert price() == 3\n' },
      { thought: 'Done.', tool: 'bash', args: { command: 'python -m pytest tests/test_price.py::test_discount' }, observation: 'ok' },
    ],
  };
  const facts = new Map(extractFacts(trajectory).map((e) => [e.step, e]));
  assert.ok([...facts.values()].some((e) => e.facts.length > 0), 'later steps use facts of the log');
  const trace = { facts };
  const oracle = oracleAtArrival();
  const requests = [1, 2, 3].map((t) => pkg.trajectoryToRequest(trajectory, t));
  const outs = requests.map((r) => oracle(r.messages, { trace }));
  // The log is folded once: the same object on every later request.
  const logOf = (messages) => messages.find((m) => m.tool_call_id === 'call_0');
  assert.ok(logOf(outs[0]).content.length < log.length / 10, 'the log is folded');
  assert.equal(logOf(outs[1]), logOf(outs[0]));
  assert.equal(logOf(outs[2]), logOf(outs[0]));
  assert.match(logOf(outs[0]).content, /FAILED tests\/test_price\.py::test_discount/);
  for (const [t, entry] of facts) {
    if (t === 0) continue;
    const view = viewRequest(outs[t - 1]);
    for (const fact of entry.facts) assert.equal(classify(view, fact), 'TEXT', `${fact.text} at step ${t}`);
  }
});

test('the headroom compares effective $ of full, TraceLite and the oracle; the oracle competes in no dominance column', () => {
  const policy = (id, cost) => ({
    id, label: id, kind: id === 'tracelite' ? 'tracelite' : 'baseline',
    grounding: { facts: 1, text: 1, image: 0 }, fidelity: { critical: { present: 1, checked: 1 } },
    byProvider: Object.fromEntries(['anthropic', 'openai', 'gemini'].map((p) => [p, { traces: 1, inputCost: cost, outputCost: 0, inputTokens: cost * 1e6, recovery: { measured: true, cost: 0 } }])),
  });
  const result = { policies: [policy('full', 1), policy('tracelite', 0.8), policy('oracle-arrival', 0.5)] };
  const h = headroom(result);
  assert.ok(Math.abs(h.openai.closed - 0.4) < 1e-9, `closed ${h.openai.closed}`);
  assert.ok(Math.abs(h.gemini.gap - 0.3) < 1e-9);
  const d = dominance(result);
  assert.ok(d.columns.every((c) => c.best !== 'oracle-arrival'), 'the oracle is never the best policy');
  assert.equal(d.lowestEffectiveCost, true);
  assert.ok(!d.baselines.includes('oracle-arrival'));
});
