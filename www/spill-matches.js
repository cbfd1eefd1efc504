// Grep over every spilled blob of a run, each matching line listed once (pure:
// unit-tested without a browser).

/** Blob kinds from the most direct copy of a text to the most derived (a compaction blob holds every message it folded). */
const KIND_ORDER = ['tool', 'dedup', 'phase', 'snapshot', 'compact'];

/** Keys in `KIND_ORDER`, then by name. */
export function spillOrder(keys) {
  const rank = (k) => {
    const i = KIND_ORDER.indexOf(k.split('-')[0]);
    return i < 0 ? KIND_ORDER.length : i;
  };
  return [...keys].sort((a, b) => rank(a) - rank(b) || (a < b ? -1 : a > b ? 1 : 0));
}

/**
 * Each matching line once: the same text kept in several blobs (a tool output,
 * the snapshot of its excerpt, the compaction blob) is listed at its first
 * blob, with the other places in `also`; repeats within one blob stay apart.
 * `found` is `[{ key, totalMatches, matches: [{ line, text }] }]` in blob order.
 */
export function uniqueMatches(found, maxMatches = 200) {
  const first = new Map(); // text → its listed match
  const matches = [];
  let total = 0;
  let copies = 0;
  let unlisted = 0;
  for (const f of found) {
    unlisted += f.totalMatches - f.matches.length;
    for (const m of f.matches) {
      const seen = first.get(m.text);
      if (seen && seen.key !== f.key) {
        seen.also.push({ key: f.key, line: m.line });
        copies++;
        continue;
      }
      total++;
      const hit = { key: f.key, line: m.line, text: m.text, also: [] };
      if (!seen) first.set(m.text, hit);
      if (matches.length < maxMatches) matches.push(hit);
    }
  }
  total += unlisted;
  return { matches, total, copies, truncated: total > matches.length };
}
