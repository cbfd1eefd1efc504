// Why a long session's turns need a re-read (issue 52 item 1): for each fact a
// turn's tool call uses that its request hides, the stage that hid it (with
// the compaction in force when compaction did), how many turns earlier it was
// shown, and whether it came from the current task's output or an earlier
// task's. `make bench` totals them per session and provider (bench/report.mjs).
import { classify, hiddenBy, viewRequest } from './grounding.mjs';

/** The facts of `entry` (a step's facts) the request `messages` hides: shown neither as text nor in an image tesseract reads (`ocr`; null: images count as shown). */
export function hiddenFacts(messages, entry, ocr) {
  if (!entry || entry.facts.length === 0) return [];
  const view = viewRequest(messages);
  const ocrTexts = ocr ? (urls) => urls.map((u) => ocr.read(u)) : undefined;
  return entry.facts.filter((f) => {
    const c = classify(view, f, { ocrTexts });
    return c === 'POINTER' || c === 'GONE';
  });
}

/**
 * One record per hidden fact of step `t`: `{ stage, compaction, age, sameTask }`.
 * `stage` is the TraceLite stage that hid it (`hiddenBy`, from `changes`, the
 * step's `report.changes`), or the baseline's id; `compaction` the number of
 * compactions so far (1-based) when compaction hid it; `age` the turns since the
 * output that showed it; `sameTask` whether that output belongs to step `t`'s task
 * (`taskOf(step)` names a step's task).
 */
export function rereadRecords(messages, facts, { t, changes, baseline, compactions, taskOf }) {
  return facts.map((fact) => {
    const stage = baseline ?? hiddenBy(messages, fact, changes ?? []);
    return {
      stage,
      compaction: stage === 'compact' ? compactions : null,
      age: t - fact.source,
      sameTask: taskOf(fact.source) === taskOf(t),
    };
  });
}

/** The row key of a record: its stage, `compact #n` for compaction. */
export const rereadKey = (r) => (r.stage === 'compact' && r.compaction ? `compact #${r.compaction}` : r.stage);

/**
 * Totals of a session's re-read records by key: `{ [key]: { turns, facts,
 * ages (sorted), sameTask } }`; a turn counts once per key it has a record of.
 */
export function rereadTable(steps) {
  const out = {};
  for (const s of steps) {
    const seen = new Set();
    for (const r of s.rereads ?? []) {
      const k = rereadKey(r);
      const row = (out[k] ??= { turns: 0, facts: 0, ages: [], sameTask: 0 });
      if (!seen.has(k)) {
        seen.add(k);
        row.turns++;
      }
      row.facts++;
      row.ages.push(r.age);
      if (r.sameTask) row.sameTask++;
    }
  }
  for (const row of Object.values(out)) row.ages.sort((a, b) => a - b);
  return out;
}
