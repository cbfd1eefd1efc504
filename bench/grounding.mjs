// Grounding recall (EVALUATION.md §1): the facts each tool call used that the
// agent learned from earlier tool output, and whether the request a policy sent
// before that call still shows them. The facts and their classes are the
// playground's (www/facts.js, which it shows per step); this file
// adds the totals by age and by stage (bench/harness.mjs passes tesseract and
// the SpillStore).
export * from '../www/facts.js';

/** Age buckets: how many steps back the source observation is. */
export const AGE_BUCKETS = [
  ['1-3', 1, 3],
  ['4-5', 4, 5],
  ['6-10', 6, 10],
  ['11-20', 11, 20],
  ['>20', 21, Infinity],
];

/** The bucket of an age (t − source step, ≥ 1). */
export function ageBucket(age) {
  return AGE_BUCKETS.find(([, lo, hi]) => age >= lo && age <= hi)?.[0] ?? '>20';
}

/** Classes, best first. */
export const CLASSES = ['TEXT', 'IMAGE', 'POINTER', 'GONE'];

/** Empty grounding totals (report.json `grounding`). */
export function emptyGrounding() {
  return {
    facts: 0,
    text: 0,
    image: 0,
    pointer: 0,
    gone: 0,
    unread: 0,
    byAge: Object.fromEntries(AGE_BUCKETS.map(([b]) => [b, { facts: 0, text: 0, image: 0, pointer: 0, gone: 0, unread: 0 }])),
    hiddenBy: {},
    oldStr: { checked: 0, visible: 0, hiddenBy: {} },
    taskVerbatim: { requests: 0, verbatim: 0 },
  };
}

/**
 * Adds one classified fact (`age` = t − source) to totals; `unread` counts
 * IMAGE_UNREAD (shown only in an image, OCR off).
 */
export function countFact(g, cls, age, hider) {
  const key = { TEXT: 'text', IMAGE: 'image', POINTER: 'pointer', GONE: 'gone', IMAGE_UNREAD: 'unread' }[cls];
  if (!key) throw new Error(`unknown class ${cls}`);
  g.facts++;
  g[key]++;
  const b = g.byAge[ageBucket(age)];
  b.facts++;
  b[key]++;
  if (hider) g.hiddenBy[hider] = (g.hiddenBy[hider] ?? 0) + 1;
}

/** Sums grounding totals (same shape as `emptyGrounding`). */
export function mergeGrounding(list) {
  const out = emptyGrounding();
  for (const g of list) {
    if (!g) continue;
    for (const k of ['facts', 'text', 'image', 'pointer', 'gone', 'unread']) out[k] += g[k];
    for (const [b, v] of Object.entries(g.byAge)) for (const k of Object.keys(v)) out.byAge[b][k] += v[k];
    for (const [s, n] of Object.entries(g.hiddenBy)) out.hiddenBy[s] = (out.hiddenBy[s] ?? 0) + n;
    for (const k of ['checked', 'visible']) out.oldStr[k] += g.oldStr[k];
    for (const [s, n] of Object.entries(g.oldStr.hiddenBy ?? {})) out.oldStr.hiddenBy[s] = (out.oldStr.hiddenBy[s] ?? 0) + n;
    for (const k of ['requests', 'verbatim']) out.taskVerbatim[k] += g.taskVerbatim[k];
  }
  return out;
}
