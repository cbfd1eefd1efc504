// The at-arrival oracle (issue 54): a bound, not a policy. It knows the future:
// when an output arrives, it keeps only the lines holding a fact a later step
// acts on (the grounding measure's facts, bench/grounding.mjs), one line
// either side, the output's first and last two lines, and the lines of a
// multi-line `old_str` a later edit quotes; each other run of two or more
// lines becomes one marker. It never rewrites history (an output is folded
// once, the same way on every later request), so the prompt cache holds, and
// grounding is 100% by construction. `make bench` prices it beside the
// policies to show how much is left to win at arrival.
import { occurs, withoutLineNumbers } from './grounding.mjs';

/** Lines kept around each used line, and at each end of an output. */
export const ORACLE_CONTEXT = 1;
export const ORACLE_ENDS = 2;

/** For each source observation (step), the facts later steps use from it and the `old_str`s they quote. */
function usesBySource(trace) {
  const uses = new Map();
  const at = (k) => {
    if (!uses.has(k)) uses.set(k, { facts: [], oldStrs: [] });
    return uses.get(k);
  };
  for (const entry of trace.facts.values()) {
    for (const f of entry.facts) at(f.source).facts.push(f);
    if (entry.oldStr) at(entry.oldStr.source).oldStrs.push(entry.oldStr.text);
  }
  return uses;
}

/** Indexes of the lines of `lines` that hold a used fact or a line of a quoted `old_str`. */
function usedLines(lines, use) {
  const used = new Set();
  const quoted = new Set(use.oldStrs.flatMap((s) => s.split('\n')).map((l) => l.trim()).filter(Boolean));
  lines.forEach((line, i) => {
    if (use.facts.some((f) => occurs(line, f.text, f.kind))) used.add(i);
    else if (quoted.size > 0 && quoted.has(withoutLineNumbers(line).trim())) used.add(i);
  });
  return used;
}

/**
 * `text` folded as the oracle folds it: the kept lines as they are, each
 * other run of two or more lines as `[… N lines folded (a-b) …]` (1-based).
 */
export function foldUnused(text, use) {
  const lines = text.split('\n');
  const keep = new Array(lines.length).fill(false);
  for (let i = 0; i < Math.min(ORACLE_ENDS, lines.length); i++) keep[i] = keep[lines.length - 1 - i] = true;
  for (const i of usedLines(lines, use)) {
    for (let j = Math.max(0, i - ORACLE_CONTEXT); j <= Math.min(lines.length - 1, i + ORACLE_CONTEXT); j++) keep[j] = true;
  }
  const out = [];
  for (let i = 0; i < lines.length;) {
    if (keep[i]) {
      out.push(lines[i++]);
      continue;
    }
    let j = i;
    while (j < lines.length && !keep[j]) j++;
    if (j - i >= 2) out.push(`[… ${j - i} lines folded (${i + 1}-${j}) …]`);
    else out.push(lines[i]);
    i = j;
  }
  return out.join('\n');
}

/**
 * The oracle as a baseline transform: `(messages, { trace })` folds each tool
 * output (`call_<k>` is step k's) by what later steps of `trace` use of it.
 * Each output is folded once per trace and reused as the same object.
 */
export function oracleAtArrival() {
  const plans = new WeakMap();
  return (messages, { trace }) => {
    let plan = plans.get(trace);
    if (!plan) {
      plan = { uses: usesBySource(trace), folded: new Map() };
      plans.set(trace, plan);
    }
    return messages.map((m) => {
      if (m.role !== 'tool' || typeof m.content !== 'string') return m;
      let out = plan.folded.get(m.tool_call_id);
      if (!out || out.from !== m.content) {
        const k = Number(/^call_(\d+)$/.exec(m.tool_call_id ?? '')?.[1]);
        const use = plan.uses.get(k) ?? { facts: [], oldStrs: [] };
        const content = foldUnused(m.content, use);
        out = { from: m.content, message: content === m.content ? m : { ...m, content } };
        plan.folded.set(m.tool_call_id, out);
      }
      return out.message;
    });
  };
}
