// The long-session re-read table of `make bench` (issue 52 item 1,
// bench/rereads.mjs): each hidden fact is attributed to the stage that hid it
// (compaction by its number), its age and its task, and totalled per stage
// with a turn counted once per stage.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { hiddenFacts, rereadKey, rereadRecords, rereadTable } from '../../bench/rereads.mjs';
import { rereadLines } from '../../bench/report.mjs';

const tool = (k, content) => ({ role: 'tool', tool_call_id: `call_${k}`, content });

test('a hidden fact is attributed to the stage whose change touched its source, or to compaction when its output is gone', () => {
  const fact = (text, source) => ({ kind: 'identifier', text, source, sources: [source] });
  const messages = [
    { role: 'user', content: 'task' },
    tool(1, '[output too long … spill://s/tool-0123456789abcdef0123456789abcdef]'),
    tool(2, 'discount_rate = 3'),
  ];
  const entry = { facts: [fact('apply_discount', 1), fact('discount_rate', 2), fact('price_table', 0)] };
  const hidden = hiddenFacts(messages, entry, null);
  assert.deepEqual(hidden.map((f) => f.text), ['apply_discount', 'price_table'], 'the fact shown as text is not hidden');
  const changes = [{ stage: 'spill', message: 1 }];
  const taskOf = (step) => (step < 1 ? 0 : 1);
  const records = rereadRecords(messages, hidden, { t: 5, changes, compactions: 2, taskOf });
  assert.deepEqual(records, [
    { stage: 'spill', compaction: null, age: 4, sameTask: true },
    { stage: 'compact', compaction: 2, age: 5, sameTask: false },
  ]);
  assert.deepEqual(records.map(rereadKey), ['spill', 'compact #2']);
  // A baseline's facts are its own.
  assert.equal(rereadRecords(messages, hidden, { t: 5, baseline: 'mask5', compactions: 0, taskOf })[1].stage, 'mask5');
});

test('the table counts a turn once per stage and sorts ages; the report prints it per provider', () => {
  const r = (stage, age, sameTask, compaction = null) => ({ stage, compaction, age, sameTask });
  const steps = [
    { rereads: [r('spill', 3, true), r('spill', 9, true)] },
    { rereads: [] },
    { rereads: [r('compact', 40, false, 1), r('spill', 1, false)] },
  ];
  const table = rereadTable(steps);
  assert.deepEqual(table.spill, { turns: 2, facts: 3, ages: [1, 3, 9], sameTask: 2 });
  assert.deepEqual(table['compact #1'], { turns: 1, facts: 1, ages: [40], sameTask: 0 });
  const tl = { byProvider: { openai: { rereads: table, rereadTurns: 2 }, anthropic: { rereads: {}, rereadTurns: 0 }, gemini: { rereads: { spill: table.spill }, rereadTurns: 2 } } };
  const text = rereadLines(tl, 10).join('\n');
  assert.match(text, /OpenAI 2 \(20\.0%\)/);
  assert.match(text, /\| compact #1 \| 0 \| 1 \/ 1 \| 0 \| 40 \/ 40 \| 0\.0% \|/);
  assert.match(text, /\| spill \| 0 \| 2 \/ 3 \| 2 \/ 3 \| 3 \/ 9 \| 66\.7% \|/);
  assert.deepEqual(rereadLines({ byProvider: {} }, 10), []);
});
