// A compress report as a few lines of text: the tokens before and after, what
// each stage hid and how the agent reads it back, the planner's decision and
// an over-budget warning. Pure JS over the report (no wasm): the CLI's
// `--explain` and the adapters' `debug` option print it.
import { InputError, describe } from './errors.js';

/** Lines longer than this are cut with `…`, except a read-back line (a cut path cannot be read). */
const WIDTH = 100;

/** Per change kind: its stage and what it did, for `N <noun> <did>` (singular, plural). */
const KINDS = {
  excerpt: { stage: 'spill', noun: ['output', 'outputs'], did: ['cut to an excerpt', 'cut to excerpts'] },
  dedup: { stage: 'dedup', noun: ['repeat', 'repeats'], did: ['deduplicated', 'deduplicated'] },
  tombstone: { stage: 'phase', noun: ['pre-edit output', 'pre-edit outputs'], did: ['cleared', 'cleared'] },
  snapshot: { stage: 'optical', noun: ['output', 'outputs'], did: ['sent as an image', 'sent as images'] },
};

const STAGES = ['spill', 'dedup', 'phase', 'optical', 'compact'];

const ANSI = { bold: '\x1b[1m', yellow: '\x1b[33m', reset: '\x1b[0m' };

/** Whether `v` is a non-negative integer count. */
const isCount = (v) => Number.isSafeInteger(v) && v >= 0;

/** `report` when it has the fields every line reads; `INVALID_ARGUMENT` naming the first one missing. */
function checked(report) {
  if (report === null || typeof report !== 'object' || Array.isArray(report)) {
    throw new InputError(`report: must be the report of a compress call (an object), got ${describe(report)}`, 'INVALID_ARGUMENT', 'report');
  }
  for (const key of ['tokensBefore', 'tokensAfter']) {
    if (!isCount(report[key])) {
      throw new InputError(`report.${key}: must be a token count, got ${describe(report[key])}`, 'INVALID_ARGUMENT', `report.${key}`);
    }
  }
  for (const key of ['stages', 'changes']) {
    if (report[key] !== undefined && !Array.isArray(report[key])) {
      throw new InputError(`report.${key}: must be an array, got ${describe(report[key])}`, 'INVALID_ARGUMENT', `report.${key}`);
    }
  }
  return report;
}

/** `-12.5%` of `after` against `before` (one decimal; empty for an empty request). */
function percent(before, after) {
  if (before === 0) return '';
  const p = ((after - before) / before) * 100;
  return ` (${p > 0 ? '+' : ''}${p.toFixed(1)}%)`;
}

/** A stage's effect in tokens: `-1200` saved, `+40` added. */
function signed(saved) {
  return saved > 0 ? `-${saved}` : `+${-saved}`;
}

/** `line` cut to `WIDTH` characters with `…`. */
function fit(line) {
  return line.length <= WIDTH ? line : `${line.slice(0, WIDTH - 1)}…`;
}

/**
 * A pointer split at its last `/`: where the blob lives (`spill://<session>/`,
 * or the directory of a file path under `spill.pointerRoot`) and its key.
 */
function splitPointer(pointer) {
  const at = pointer.lastIndexOf('/');
  return { base: pointer.slice(0, at + 1), key: pointer.slice(at + 1) };
}

/** The distinct pointers of `changes`, in order. */
function pointersOf(changes) {
  return [...new Set(changes.map((c) => c.pointer).filter((p) => typeof p === 'string' && p !== ''))];
}

/** `(<first key> +N)`: the first pointer's key and how many more (the read-back line gives the rest). */
function firstKey(pointers) {
  if (pointers.length === 0) return '';
  return ` (${splitPointer(pointers[0]).key}${pointers.length > 1 ? ` +${pointers.length - 1}` : ''})`;
}

/** What one stage hid, from its changes (and `report.compaction` for compact); `withKeys`: each kind's first key. */
function hidden(stage, changes, report, withKeys = true) {
  const keys = withKeys ? firstKey : () => '';
  if (stage === 'compact') {
    const c = report.compaction;
    if (!c) return changes.length > 0 ? `${changes.length} summaries` : '';
    if (c.outcome === 'reapplied') return `previous summary of ${c.covered} messages re-applied`;
    return `${c.covered} messages summarized${keys(c.pointer ? [c.pointer] : [])}`;
  }
  const parts = [];
  for (const [kind, { stage: owner, noun, did }] of Object.entries(KINDS)) {
    if (owner !== stage) continue;
    const mine = changes.filter((c) => c.kind === kind);
    if (mine.length === 0) continue;
    const n = mine.length === 1 ? 0 : 1;
    const lost = mine.filter((c) => !c.pointer).length;
    parts.push(`${mine.length} ${noun[n]} ${did[n]}${lost > 0 ? `, ${lost} not kept` : ''}${keys(pointersOf(mine))}`);
  }
  // Kinds this table does not know yet are counted, not dropped.
  const other = changes.filter((c) => !Object.hasOwn(KINDS, c.kind) && c.kind !== 'summary');
  if (other.length > 0) parts.push(`${other.length} other changes (${[...new Set(other.map((c) => c.kind))].join(', ')})`);
  return parts.join('; ');
}

/** One line per stage that changed the request: its saving and what it hid (the first key of each kind). */
function stageLines(report) {
  const changes = report.changes ?? [];
  const lines = [];
  const width = Math.max(...STAGES.map((s) => s.length));
  for (const s of report.stages ?? []) {
    const saved = s.tokensBefore - s.tokensAfter;
    const mine = changes.filter((c) => c.stage === s.stage);
    const compacted = s.stage === 'compact' && report.compaction;
    if (saved === 0 && mine.length === 0 && !compacted) continue;
    const line = (what) => `  ${s.stage.padEnd(width)} ${signed(saved).padStart(7)} tokens${what ? `: ${what}` : ''}`;
    const full = line(hidden(s.stage, mine, report));
    // Too long with the keys: without them (a cut key cannot be read back).
    lines.push(full.length <= WIDTH ? full : fit(line(hidden(s.stage, mine, report, false))));
  }
  return lines;
}

/**
 * How to read back what was hidden, one line per place the blobs live:
 * `read_spill`/`grep_spill` on `spill://<session>/<key>`, or `sed -n` on a file
 * of the `spill.pointerRoot` directory. Never cut.
 */
function readBackLines(report) {
  const pointers = pointersOf([...(report.changes ?? []), ...(report.compaction?.pointer ? [report.compaction] : [])]);
  const bases = [...new Set(pointers.map((p) => splitPointer(p).base))];
  return bases.map((base) => (base.startsWith('spill://')
    ? `  read back: read_spill/grep_spill ${base}<key>`
    : `  read back: sed -n 'FIRST,LASTp' '${base}<key>'`));
}

/** A planner's reason without what the line says already (the verdict) or the price source. */
function shortReason(reason) {
  return reason
    .replace(/^planner: /, '')
    .replace(/ \([^()]*prices[^()]*\)/, '')
    .replace(/(?:: (?:committed|deferred)| → (?:wait|compact now))$/, '');
}

/** The planner's decision in one line: each candidate committed or deferred, with why. */
function planLine(plan) {
  const candidates = Array.isArray(plan?.candidates) ? plan.candidates : [];
  if (candidates.length === 0) {
    return `  plan: nothing weighed this turn (${plan?.demoted ?? 0} observations demoted so far)`;
  }
  const parts = candidates.map((c) => {
    const range = Array.isArray(c.observations) ? ` ${c.observations[0]}-${c.observations[1]}` : '';
    const verdict = c.committed ? 'committed' : 'deferred';
    return `${c.kind}${range} ${verdict}${c.reason ? ` (${shortReason(c.reason)})` : ''}`;
  });
  return fit(`  plan: ${parts.join('; ')}`);
}

/**
 * A compress `report` as a short multi-line text (no trailing newline): the
 * tokens before and after; one line per stage that changed the request, with
 * its saving and what it hid (counts, the first blob's key); how to read those
 * back (`read_spill`/`grep_spill` on `spill://<session>/<key>`, or `sed -n` on
 * a file under `spill.pointerRoot`); snapshots sent by URL, secrets masked, repairs; the planner's
 * decision in one line; `report.overBudget` when set. Deterministic; lines are
 * cut at 100 characters, except the read-back ones. Options: `color` (ANSI
 * bold and yellow; default false), `label` (after `tracelite` on the first
 * line, e.g. the session). `INVALID_ARGUMENT` for a value that is not a report.
 */
export function formatReport(report, options = {}) {
  checked(report);
  if (options === null || typeof options !== 'object' || Array.isArray(options)) {
    throw new InputError(`options: must be an object, got ${describe(options)}`, 'INVALID_ARGUMENT', 'options');
  }
  const color = options.color === true;
  const label = options.label === undefined ? '' : ` ${String(options.label)}`;
  const paint = (style, text) => (color ? `${ANSI[style]}${text}${ANSI.reset}` : text);
  const { tokensBefore: before, tokensAfter: after } = report;
  const lines = [paint('bold', `tracelite${label}: ${before} -> ${after} tokens${percent(before, after)}${report.format ? `, ${report.format}` : ''}`)];
  const stages = stageLines(report);
  lines.push(...(stages.length > 0 ? stages : ['  no stage changed the request']), ...readBackLines(report));
  const urls = report.imageUrls;
  if (urls) {
    lines.push(fit(`  images: ${urls.urls} snapshot parts by URL (${urls.images} images, ${urls.bytes} bytes to serve)` +
      `${urls.inline > 0 ? `, ${urls.inline} inline${urls.note ? ` (${urls.note})` : ''}` : ''}`));
  }
  if (report.redactions?.count > 0) {
    lines.push(fit(`  redacted: ${report.redactions.count} secrets (${report.redactions.kinds.join(', ')})`));
  }
  if (Array.isArray(report.repairs) && report.repairs.length > 0) {
    lines.push(fit(`  repaired: ${report.repairs.map((r) => `${r.code} at ${r.path}`).join(', ')}`));
  }
  lines.push(planLine(report.plan));
  const over = report.overBudget;
  if (over) {
    lines.push(paint('yellow', fit(`  over budget: ${over.tokens} tokens > budget ${over.budget}; ` +
      `largest ${over.largest} (${over.largestTokens} tokens)`)));
  }
  return lines.join('\n');
}
