// The step view's grounding panel: the facts step t's call used (paths,
// identifiers, numbers it learned from earlier tool output; www/facts.js,
// which `make bench` totals)
// and whether the prompt sent before it still shows each one.

/**
 * What each class means here. The class is not OCR'd: a fact only in a
 * snapshot is IMAGE, and whether tesseract reads it is shown under the
 * snapshot's image (www/legibility-view.js).
 */
export const CLASS_LABELS = {
  TEXT: 'TEXT: in the prompt as text',
  IMAGE_UNREAD: "IMAGE: only in a snapshot image (not OCR'd here; tesseract's reading is under the image)",
  POINTER: 'POINTER: removed, readable through a spill:// pointer',
  GONE: 'GONE: not in the prompt, no pointer reaches it',
};

function cell(tag, text, attrs = {}) {
  const e = document.createElement(tag);
  e.textContent = text;
  for (const [k, v] of Object.entries(attrs)) e.setAttribute(k, v);
  return e;
}

/** One line summing up the step: classes counted, old_str, task. */
export function groundingSummary(g, t) {
  if (!g.executed) return `Step ${t} runs no tool call (a rejected or message turn): nothing to ground.`;
  const counts = {};
  for (const f of g.facts) counts[f.cls] = (counts[f.cls] ?? 0) + 1;
  const parts = Object.keys(CLASS_LABELS).filter((c) => counts[c]).map((c) => `${counts[c]} ${c === 'IMAGE_UNREAD' ? 'IMAGE (not OCR\'d)' : c}`);
  let s = g.facts.length
    ? `Step ${t}'s call (${g.tool}) uses ${g.facts.length} fact${g.facts.length === 1 ? '' : 's'} it learned from earlier tool output: ${parts.join(', ')}.`
    : `Step ${t}'s call (${g.tool}) uses no fact learned from earlier tool output.`;
  if (g.oldStr) {
    const by = g.oldStr.hiddenBy ? ` (hidden by ${g.oldStr.hiddenBy})` : '';
    s += ` Its multi-line old_str (seen at step ${g.oldStr.source}) is ${g.oldStr.visible ? '' : 'not '}visible as text${by}.`;
  }
  s += g.taskVerbatim ? ' Every user message is verbatim.' : ' A user message is not verbatim in this prompt.';
  return s;
}

/** Fills the panel (`details` element) for step t; hides it for a single request. */
export function renderGrounding(panel, g, t) {
  panel.hidden = !g;
  if (!g) return;
  panel.querySelector('.fact-count').textContent = String(g.facts.length);
  panel.querySelector('.grounding-note').textContent = groundingSummary(g, t);
  const body = panel.querySelector('tbody');
  body.replaceChildren(...g.facts.map((f) => {
    const tr = document.createElement('tr');
    tr.dataset.class = f.cls;
    tr.dataset.fact = f.text;
    tr.append(
      cell('td', f.text, { class: 'fact' }),
      cell('td', f.kind),
      cell('td', String(f.source)),
      cell('td', String(f.age)),
      cell('td', CLASS_LABELS[f.cls] ?? f.cls, { class: `cls cls-${f.cls.toLowerCase()}` }),
      cell('td', f.hiddenBy ?? ''),
    );
    return tr;
  }));
}
