// Order statistics shared by the replay summary (core/replay.js) and the bench
// scripts (bench/*.mjs import pkg/core/stats.js), so their figures agree.

/**
 * The nearest-rank `p`-th percentile (0–100) of `sorted` (ascending): the
 * smallest value with at least p% of the values at or below it; 0 when empty.
 */
export function percentile(sorted, p) {
  if (sorted.length === 0) return 0;
  const i = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[i];
}
