// Snapshot legibility (issue 40): the facts (EVALUATION.md §1, facts.js) inside
// the text a snapshot rendered, and which of them the OCR text of its images
// shows (the grounding's IMAGE rule, `ocrShows`). Pure functions over the
// replay's OpenAI Chat messages, no host imports: `make bench`
// (bench/legibility.mjs) totals them over the traces, the playground
// (www/worker.js, www/legibility-view.js) shows them per snapshot. The OCR
// itself (tesseract, 2x upscale, `--psm 6`) is scripts/tesseract.mjs, run by
// the bench and by the playground's server (www/serve.mjs).
import { messageImages, messageTexts, occurs, ocrShows, pointersOf } from './facts.js';

/** Layouts of a snapshot (from the optical stage's change detail). */
export const LAYOUTS = ['line by line', 'run together', 'unknown'];
/** Fact kinds, as `extractFacts` names them. */
export const KINDS = ['path', 'identifier', 'integer'];

/**
 * The snapshots of an emitted request: each user message of images that
 * follows a run of tool messages shows those observations. Returns
 * `[{ steps, urls, original, at }]`: the steps whose observations it shows
 * (from the `call_<step>` ids), its image URLs, the original observations'
 * text (`original`: the request before compression) and the message indices
 * of the tool messages and of the images (`at`, as `report.changes` names them).
 */
export function snapshotGroups(original, messages) {
  const originalByCall = new Map(original.filter((m) => m.role === 'tool').map((m) => [m.tool_call_id, messageTexts(m).join('\n')]));
  const stepOf = (id) => Number(/^call_(\d+)$/.exec(id ?? '')?.[1] ?? -1);
  const groups = [];
  let tools = [];
  let at = [];
  messages.forEach((m, i) => {
    if (m.role === 'tool') {
      tools.push(m.tool_call_id);
      at.push(i);
      return;
    }
    const urls = m.role === 'user' ? messageImages(m) : [];
    if (urls.length > 0 && tools.length > 0) {
      groups.push({
        steps: tools.map(stepOf),
        urls,
        original: tools.map((id) => originalByCall.get(id) ?? '').join('\n'),
        at: [...at, i],
      });
    }
    tools = [];
    at = [];
  });
  return groups;
}

/**
 * The text a snapshot rendered: the blob of each of its tool messages' first
 * pointer (the snapshot's reference line), joined; null when a tool message
 * has no pointer or `blob(pointer)` gives no text for one (or throws).
 */
export function snapshotText(messages, group, blob) {
  const shown = group.at.slice(0, -1).map((i) => {
    const p = pointersOf(messageTexts(messages[i]).join('\n'))[0];
    if (!p) return null;
    try {
      return blob(p) ?? null;
    } catch {
      return null;
    }
  });
  return shown.some((t) => t == null) ? null : shown.join('\n');
}

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

/**
 * The facts of a snapshot: `facts` inside the text it rendered (`shown`; all
 * facts of its observations when null) and `cut`, those of its observations
 * an earlier stage cut before rendering (not inside the image).
 */
export function snapshotFacts(entries, steps, shown) {
  const facts = factsInside(entries, steps, shown);
  const inside = new Set(facts.map((f) => `${f.kind}\u0000${f.text}`));
  const cut = factsInside(entries, steps).filter((f) => !inside.has(`${f.kind}\u0000${f.text}`));
  return { facts, cut };
}

/** The OCR text of a snapshot: the texts of its images, in order, one per line block. */
export function snapshotOcrText(texts) {
  return texts.join('\n');
}

/** `facts` split by whether `ocrText` shows each (the grounding's IMAGE rule, `ocrShows`). */
export function readFacts(facts, ocrText) {
  const read = [];
  const missed = [];
  for (const f of facts) (ocrShows(ocrText, f.text) ? read : missed).push(f);
  return { read, missed };
}

/**
 * One snapshot's legibility: its facts and those `ocrText` shows, by kind;
 * `cut` facts (not inside the image) are counted apart, with how many the
 * OCR text shows anyway.
 */
export function readSnapshot({ facts, ocrText, layout, cut = [] }) {
  const byKind = {};
  const { read } = readFacts(facts, ocrText);
  const isRead = new Set(read);
  for (const f of facts) {
    const k = (byKind[f.kind] ??= { facts: 0, read: 0 });
    k.facts++;
    if (isRead.has(f)) k.read++;
  }
  const cutRead = readFacts(cut, ocrText).read.length;
  return { layout, facts: facts.length, read: read.length, byKind, cut: { facts: cut.length, read: cutRead } };
}
