// Internal: the adapters' `debug` option: each turn's report as text
// (formatReport) to console.error, or to the host's function.
import { OptionError, describe } from '../core/errors.js';
import { formatReport } from '../core/format-report.js';

/**
 * The sink of a `debug` option: `true` writes to `console.error`, a function
 * gets the text, `false`/`undefined` is off (`undefined` returned).
 * `INVALID_OPTION` naming `debug` otherwise.
 */
export function debugSink(debug) {
  if (debug === undefined || debug === false) return undefined;
  if (debug === true) return (text) => console.error(text);
  if (typeof debug === 'function') return debug;
  throw new OptionError(`must be true, false or a function (text) => void, got ${describe(debug)}`, 'INVALID_OPTION', 'debug');
}

/** Writes the report of one turn of `session` to `sink` (when on): `formatReport` labelled with the session. */
export function debugTurn(sink, session, report) {
  if (!sink || !report) return;
  sink(formatReport(report, { label: `[${session}]` }));
}
