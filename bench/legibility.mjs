// Snapshot legibility (issue 40): of the facts (EVALUATION.md §1) inside each
// snapshot the TraceLite-defaults replay emits, the share tesseract reads back,
// overall, by layout (line by line, lines run together with `»`) and by kind.
// The per-snapshot part (facts inside, layout, reading rule) is the playground's
// www/legibility.js, which it shows per snapshot; this file
// adds the totals and the report's section.
import { KINDS, LAYOUTS } from '../www/legibility.js';

export { KINDS, LAYOUTS, factsInside, readFacts, readSnapshot, snapshotFacts, snapshotGroups, snapshotLayout, snapshotOcrText, snapshotText } from '../www/legibility.js';

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
