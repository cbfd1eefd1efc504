// Types of formatReport (pkg-config/core/format-report.js).
import type { Report } from './types/report.js';

/** Options of `formatReport`. */
export interface FormatReportOptions {
  /** ANSI bold for the first line and yellow for an over-budget warning. Default false. */
  color?: boolean;
  /** Shown after `tracelite` on the first line (e.g. the session). */
  label?: string;
}

/**
 * A compress report as a short multi-line text (no trailing newline): the
 * tokens before and after; one line per stage that changed the request, with
 * its saving and what it hid (counts, the first blob's key); how to read those
 * back (`read_spill`/`grep_spill` on `spill://<session>/<key>`, or `sed -n` on
 * a file under `spill.pointerRoot`); secrets masked, repairs; the planner's
 * decision in one line; `report.overBudget` when set. Deterministic; lines are
 * cut at 100 characters, except the read-back ones. Throws `INVALID_ARGUMENT`
 * for a value that is not a report.
 */
export function formatReport(report: Report, options?: FormatReportOptions): string;
