// Snapshot legibility (issue 40): of the facts (EVALUATION.md §1) inside each
// snapshot the TraceLite-defaults replay emits, the share tesseract reads back,
// overall, by layout (line by line, lines run together with `»`) and by kind.
import { occurs, ocrShows } from './grounding.mjs';

/** Layouts of a snapshot (from the optical stage's change detail). */
export const LAYOUTS = ['line by line', 'run together', 'unknown'];
/** Fact kinds, as `extractFacts` names them. */
export const KINDS = ['path', 'identifier', 'integer'];

/**
 * Layout of the snapshot at emitted message indices `at`: `run together` when
 * the optical stage's `snapshot` change there says `reflowed`.
 */
export function snapshotLayout(changes, at) {
  const own = (changes ?? []).filter((c) => c.kind === 'snapshot' && at.includes(c.message));
  if (own.length === 0) return 'unknown';
  return own.some((c) => /reflowed/.test(c.detail ?? '')) ? 'run together' : 'line by line';
}

/**
 * Distinct facts inside a snapshot showing the observations of `steps`: facts
 * of any tool call (`extractFacts` entries) with a source among those steps
 * and, when `shown` (the text the snapshot rendered) is given, occurring in
 * it: a fact an earlier stage cut from the observation (a spilled excerpt's
 * hidden lines) is not inside the image.
 */
export function factsInside(entries, steps, shown = null) {
  const out = new Map();
  for (const e of entries) {
    for (const f of e.facts) {
      if (!(f.sources ?? [f.source]).some((s) => steps.includes(s))) continue;
      if (shown != null && !occurs(shown, f.text, f.kind)) continue;
      out.set(`${f.kind}\u0000${f.text}`, { kind: f.kind, text: f.text });
    }
  }
  return [...out.values()];
}

function emptyCount() {
  return { facts: 0, read: 0, snapshots: 0 };
}

/**
 * An empty aggregate: overall, by layout and by kind; `cut`: facts of the
 * shown observations an earlier stage cut before rendering (not inside the
 * image, so not counted above) and how many of those the OCR text shows anyway.
 */
export function emptyLegibility() {
  return {
    overall: emptyCount(),
    cut: { facts: 0, read: 0 },
    byLayout: Object.fromEntries(LAYOUTS.map((l) => [l, emptyCount()])),
    byKind: Object.fromEntries(KINDS.map((k) => [k, emptyCount()])),
  };
}

/**
 * One snapshot's legibility: its facts and those `ocrText` shows (the
 * grounding's IMAGE rule, `ocrShows`), by kind.
 */
export function readSnapshot({ facts, ocrText, layout, cut = [] }) {
  const byKind = {};
  let read = 0;
  for (const f of facts) {
    const k = (byKind[f.kind] ??= { facts: 0, read: 0 });
    k.facts++;
    if (ocrShows(ocrText, f.text)) {
      k.read++;
      read++;
    }
  }
  const cutRead = cut.filter((f) => ocrShows(ocrText, f.text)).length;
  return { layout, facts: facts.length, read, byKind, cut: { facts: cut.length, read: cutRead } };
}

/** Adds one `readSnapshot` result into the aggregate `into`. */
export function addLegibility(into, s) {
  const bump = (c, facts, read) => {
    c.facts += facts;
    c.read += read;
    c.snapshots++;
  };
  bump(into.overall, s.facts, s.read);
  into.cut ??= { facts: 0, read: 0 };
  into.cut.facts += s.cut?.facts ?? 0;
  into.cut.read += s.cut?.read ?? 0;
  bump((into.byLayout[s.layout] ??= emptyCount()), s.facts, s.read);
  for (const [k, v] of Object.entries(s.byKind)) bump((into.byKind[k] ??= emptyCount()), v.facts, v.read);
  return into;
}

/** Adds the aggregate `other` into `into` (results of worker processes). */
export function mergeLegibility(into, other) {
  const add = (group, k, v) => {
    const d = (group[k] ??= emptyCount());
    d.facts += v.facts;
    d.read += v.read;
    d.snapshots += v.snapshots;
  };
  add(into, 'overall', other.overall);
  into.cut ??= { facts: 0, read: 0 };
  into.cut.facts += other.cut?.facts ?? 0;
  into.cut.read += other.cut?.read ?? 0;
  for (const part of ['byLayout', 'byKind']) for (const [k, v] of Object.entries(other[part])) add(into[part], k, v);
  return into;
}

/** Share of facts read (null without facts). */
export function legibilityShare(c) {
  return c.facts > 0 ? c.read / c.facts : null;
}

function row(name, c) {
  const share = legibilityShare(c);
  return `| ${name} | ${share == null ? '—' : `${(100 * share).toFixed(1)}%`} | ${c.read} / ${c.facts} | ${c.snapshots} |`;
}

/** The "Snapshot legibility" Markdown section of an aggregate (null: OCR off). */
/**
 * Rows of the snapshots TraceLite defaults emitted per provider (`result`'s
 * `tracelite` policy): distinct snapshots, image tokens and the text tokens
 * they replaced, per snapshot.
 */
export function snapshotTokenRows(result) {
  const p = (result?.policies ?? []).find((x) => x.id === 'tracelite');
  const names = { anthropic: 'Anthropic', openai: 'OpenAI', gemini: 'Gemini' };
  const rows = [];
  for (const [prov, name] of Object.entries(names)) {
    const s = p?.byProvider?.[prov]?.bytes?.snapshots;
    if (!s || s.count === 0) continue;
    const per = (x) => Math.round(x / s.count).toLocaleString('en-US');
    rows.push(`| ${name} | ${s.count} | ${per(s.imageTokens)} | ${per(s.textTokens)} | ${(s.textTokens / Math.max(1, s.imageTokens)).toFixed(2)}× |`);
  }
  if (rows.length === 0) return [];
  return [
    'Snapshots of the TraceLite-defaults replay per provider (each distinct snapshot once; tokens as the optical stage priced them):',
    '',
    '| provider | snapshots | image tokens per snapshot | text tokens it replaced | text / image |',
    '|---|---:|---:|---:|---:|',
    ...rows,
    '',
  ];
}

export function legibilitySection(agg, { command, result } = {}) {
  const out = ['## Snapshot legibility', ''];
  if (!agg) return [...out, 'OCR off (`--no-ocr`) or tesseract missing: not measured.', '', ...snapshotTokenRows(result)].join('\n');
  out.push(
    'Every snapshot the TraceLite-defaults replay (OpenAI) emits, at any step: the facts inside it ' +
      '(EVALUATION.md §1: paths, identifiers, integers of ≥ 2 digits a later tool call uses, with a source observation ' +
      'the snapshot shows, occurring in the text the snapshot rendered) and the share tesseract (2x upscale, `--psm 6`) ' +
      'reads, by the grounding\'s IMAGE rule. A snapshot counts under a kind when it holds a fact of that kind.',
    '',
    '| | read | facts read / inside | snapshots |',
    '|---|---:|---:|---:|',
    row('overall', agg.overall),
    ...Object.entries(agg.byLayout).filter(([, c]) => c.snapshots > 0).map(([l, c]) => row(l, c)),
    ...Object.entries(agg.byKind).filter(([, c]) => c.snapshots > 0).map(([k, c]) => row(k === 'integer' ? 'number' : k, c)),
    '',
  );
  if (agg.cut?.facts > 0) {
    out.push(
      `Not counted: ${agg.cut.facts} facts of the shown observations that an earlier stage cut before rendering ` +
        `(the hidden lines of a spilled excerpt), so not inside any image (the OCR text shows ${agg.cut.read} of them anyway).`,
      '',
    );
  }
  out.push(...snapshotTokenRows(result));
  if (command) out.push(`Reproduce: \`${command}\`.`, '');
  return out.join('\n');
}

/** One summary line of an aggregate. */
export function legibilityLine(agg) {
  const pct = (c) => {
    const s = legibilityShare(c);
    return s == null ? '—' : `${(100 * s).toFixed(1)}%`;
  };
  const layouts = Object.entries(agg.byLayout).filter(([, c]) => c.snapshots > 0).map(([l, c]) => `${l} ${pct(c)}`);
  const kinds = Object.entries(agg.byKind).filter(([, c]) => c.snapshots > 0).map(([k, c]) => `${k} ${pct(c)}`);
  return `snapshot legibility: ${pct(agg.overall)} of ${agg.overall.facts} facts in ${agg.overall.snapshots} snapshots (${[...layouts, ...kinds].join(', ')})`;
}
