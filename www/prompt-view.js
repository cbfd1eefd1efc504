// Renders a provider request as the model receives it: system prompt, then each
// message with its text, tool calls, tool results and images (at real size),
// marked with the stage that changed it. The request comes as the neutral
// conversation the core parses it into (the worker's `requestConversation`),
// whatever its format; each message's `index` is its position in the request's
// own list, which report.changes[].message names.

export const STAGES = ['spill', 'dedup', 'phase', 'optical', 'compact'];
const POINTER = /spill:\/\/[A-Za-z0-9._-]+\/[A-Za-z0-9._-]+/g;

// ---- the display model: the core's neutral conversation (requestConversation) → blocks ----
// Block: { type: 'text', text, thinking? } | { type: 'image', src } | { type: 'call', name, args, id }
//      | { type: 'result', id, blocks, error } | { type: 'other', json }
// Msg: { role, blocks, index (position in the request's own list of messages, or null), note }

function partBlocks(part) {
  switch (part.type) {
    case 'text': return [{ type: 'text', text: part.text, thinking: part.extra?.thought === true }];
    case 'image': return [{ type: 'image', src: part.url ?? `data:${part.media_type};base64,${part.data}` }];
    case 'tool_call': return [{ type: 'call', id: part.id, name: part.name, args: part.arguments }];
    case 'tool_result':
      return [{ type: 'result', id: part.call_id, blocks: part.parts.flatMap(partBlocks), error: part.is_error }];
    default:
      if (part.value?.type === 'thinking') return [{ type: 'text', text: part.value.thinking, thinking: true }];
      return [{ type: 'other', json: part.value }];
  }
}

/**
 * The display model of a neutral conversation (`{ system, messages }`, each
 * message with `role`, `parts` and `index`). A user message of images only
 * right after a tool message is where Chat Completions carries the images of
 * tool results: shown as theirs, not as a message of the conversation.
 */
export function displayModel(conversation) {
  let previousRole = null;
  const messages = conversation.messages.map((m) => {
    const carrier = m.role === 'user' && previousRole === 'tool' && m.parts.length > 0 && m.parts.every((p) => p.type === 'image');
    previousRole = m.role;
    const blocks = m.parts.flatMap(partBlocks);
    if (carrier) return { role: 'user', blocks, index: null, at: m.index, note: 'images of the tool results above (Chat Completions accepts images only in user messages)' };
    return { role: m.role, blocks, index: m.index };
  });
  return { system: conversation.system.flatMap((m) => m.parts.flatMap(partBlocks)), messages };
}

// ---- rendering ----

/** An element with attributes (`class`, `text`, `data-*`, properties) and children. */
export function el(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (v === undefined || v === null || v === false) continue;
    if (k === 'class') node.className = v;
    else if (k === 'text') node.textContent = v;
    else if (k.startsWith('data-')) node.setAttribute(k, v);
    else if (k in node) node[k] = v;
    else node.setAttribute(k, v);
  }
  node.append(...children.filter((c) => c !== null && c !== undefined));
  return node;
}

/** Text with every spill pointer turned into a button that opens the spill browser. */
function textWithPointers(text, onPointer) {
  const pre = el('pre', { class: 'text' });
  let last = 0;
  for (const m of text.matchAll(POINTER)) {
    pre.append(text.slice(last, m.index));
    const button = el('button', { type: 'button', class: 'pointer', text: m[0], title: 'Open in the spill browser' });
    button.addEventListener('click', () => onPointer(m[0]));
    pre.append(button);
    last = m.index + m[0].length;
  }
  pre.append(text.slice(last));
  return pre;
}

function imageBlock(src, marked) {
  const img = el('img', { src, alt: marked ? 'optical snapshot of a tool result' : 'image in the request', class: marked ? 'snapshot' : 'image', decoding: 'async' });
  const caption = el('figcaption', { text: `${Math.round((src.length * 3) / 4 / 1024)} KB` });
  img.addEventListener('load', () => {
    caption.textContent = `${img.naturalWidth}×${img.naturalHeight} px · ${caption.textContent}`;
    img.style.width = `${img.naturalWidth}px`;
  }, { once: true });
  return el('figure', { class: 'image-block' }, el('div', { class: 'image-frame' }, img), caption);
}

function renderBlocks(blocks, ctx) {
  return blocks.map((b) => {
    switch (b.type) {
      case 'text': {
        const pre = textWithPointers(b.text ?? '', ctx.onPointer);
        if (b.thinking) pre.classList.add('thinking');
        return pre;
      }
      case 'image': return imageBlock(b.src, ctx.optical);
      case 'call':
        return el('div', { class: 'call' }, el('span', { class: 'call-name', text: `${b.name ?? '?'}` }),
          el('pre', { class: 'call-args', text: typeof b.args === 'string' ? b.args : JSON.stringify(b.args) }));
      case 'result':
        return el('div', { class: 'result' }, el('div', { class: 'result-head', text: `tool result${b.id ? ` · ${b.id}` : ''}${b.name ? ` · ${b.name}` : ''}${b.error ? ' · error' : ''}` }),
          ...renderBlocks(b.blocks, ctx));
      default:
        return el('pre', { class: 'other', text: JSON.stringify(b.json, null, 2) });
    }
  });
}

function fmt(n) {
  return Number(n).toLocaleString('en-US');
}

function badge(change, onPointer) {
  const delta = change.tokensAfter - change.tokensBefore;
  const b = el('span', { class: `badge stage-${change.stage}`, 'data-stage': change.stage },
    el('strong', { text: change.stage }), ` ${change.kind} `,
    el('span', { class: 'delta', text: `${fmt(change.tokensBefore)} → ${fmt(change.tokensAfter)} tok (${delta <= 0 ? '−' : '+'}${fmt(Math.abs(delta))})` }));
  if (change.detail) b.title = change.detail;
  if (change.pointer) {
    const p = el('button', { type: 'button', class: 'pointer', text: 'original', title: change.pointer });
    p.addEventListener('click', () => onPointer(change.pointer));
    b.append(' ', p);
  }
  return b;
}

/**
 * Renders a request as its neutral conversation (`requestConversation` of the
 * package) into `container`, marking the messages that `changes` touched.
 * `onPointer(pointer)` opens a spill.
 */
export function renderRequest(container, conversation, changes, onPointer) {
  const view = displayModel(conversation);
  const byMessage = new Map();
  for (const c of changes) {
    if (!byMessage.has(c.message)) byMessage.set(c.message, []);
    byMessage.get(c.message).push(c);
  }
  const nodes = [];
  if (view.system.length > 0) {
    nodes.push(el('article', { class: 'msg role-system' },
      el('header', {}, el('span', { class: 'role', text: 'system' })),
      ...renderBlocks(view.system, { onPointer, optical: false })));
  }
  for (const m of view.messages) {
    const touched = m.index === null ? [] : (byMessage.get(m.index) ?? []);
    const stages = [...new Set(touched.map((c) => c.stage))];
    const optical = stages.includes('optical') || m.index === null;
    const header = el('header', {},
      el('span', { class: 'role', text: m.role }),
      m.index !== null ? el('span', { class: 'index', text: `#${m.index}` }) : null,
      m.id ? el('span', { class: 'meta', text: m.id }) : null,
      m.note ? el('span', { class: 'meta', text: m.note }) : null,
      touched.length ? el('span', { class: 'badges' }, ...touched.map((c) => badge(c, onPointer))) : null);
    if (m.index === null) stages.push('optical');
    const article = el('article', {
      class: `msg role-${m.role}${stages.length ? ' changed' : ''}`,
      'data-index': m.index === null ? 'images' : String(m.index),
      // The position in the request's own list, for the carriers of images too (the legibility view finds its snapshot by it).
      'data-message': m.at ?? m.index ?? null,
      tabIndex: -1,
      'data-stages': stages.join(' ') || null,
    }, header, ...renderBlocks(m.blocks, { onPointer, optical }));
    if (stages.length) article.style.setProperty('--stage-color', `var(--${stages.at(-1)})`);
    nodes.push(article);
  }
  container.replaceChildren(...nodes);
  return view;
}

/** A table of a step's changes; clicking a row scrolls to its message. */
export function renderChanges(table, changes, container, onPointer) {
  const body = table.tBodies[0];
  body.replaceChildren(...changes.map((c) => {
    const row = el('tr', { class: `stage-${c.stage}` },
      el('td', { class: 'nowrap' }, el('span', { class: `dot stage-${c.stage}` }), c.stage),
      el('td', {}, el('button', { type: 'button', class: 'link', text: `#${c.message}`, title: 'Show this message' })),
      el('td', { text: c.kind }),
      el('td', { class: 'num', text: fmt(c.tokensBefore) }),
      el('td', { class: 'num', text: fmt(c.tokensAfter) }),
      el('td', {}, c.pointer ? el('button', { type: 'button', class: 'pointer', text: c.pointer }) : ''),
      el('td', { class: 'detail', text: c.detail ?? '' }));
    row.cells[1].firstChild.addEventListener('click', () => {
      const target = container.querySelector(`[data-index="${c.message}"]`);
      target?.scrollIntoView({ block: 'start', behavior: 'smooth' });
      target?.focus?.();
    });
    if (c.pointer) row.cells[5].firstChild.addEventListener('click', () => onPointer(c.pointer));
    return row;
  }));
  if (changes.length === 0) {
    body.append(el('tr', {}, el('td', { colSpan: 7, class: 'empty', text: 'No stage changed this request.' })));
  }
}

/** A table of a step's per-stage totals and the stages' notes (their decisions). */
/** Dollars with enough digits for one request's cost. */
function usd(x) {
  const sign = x < 0 ? '−' : '';
  return `${sign}$${Math.abs(x).toFixed(Math.abs(x) >= 0.01 ? 4 : 6)}`;
}

/**
 * The planner's candidates of one request (`report.plan`): what each rewrite
 * of the cached prefix would save and cost, committed or deferred and why.
 * Returns a one-line summary.
 */
export function renderPlan(table, plan) {
  const rows = plan?.candidates ?? [];
  table.tBodies[0].replaceChildren(...rows.map((c) => el('tr', { class: c.committed ? 'committed' : 'deferred' },
    el('td', { text: c.kind }),
    el('td', { class: 'num', text: c.observations ? `${c.observations[0]}–${c.observations[1] - 1}` : '' }),
    el('td', { class: 'num', text: fmt(c.tokensSaved) }),
    el('td', { class: 'num', text: fmt(c.tokensRewritten) }),
    el('td', { class: 'num', text: usd(c.costNow) }),
    el('td', { class: 'num', text: usd(c.saving) }),
    el('td', { class: 'num', text: String(c.horizon) }),
    el('td', { class: 'nowrap', text: c.committed ? 'committed' : 'deferred' }),
    el('td', { class: 'detail', text: c.reason }))));
  const committed = rows.filter((c) => c.committed).length;
  return rows.length === 0
    ? 'nothing weighed'
    : `${committed} committed, ${rows.length - committed} deferred`;
}

export function renderStages(table, stages) {
  table.tBodies[0].replaceChildren(...stages.map((st) => el('tr', { class: `stage-${st.stage}` },
    el('td', { class: 'nowrap' }, el('span', { class: `dot stage-${st.stage}` }), st.stage),
    el('td', { text: st.enabled ? 'on' : 'off' }),
    el('td', { class: 'num', text: fmt(st.tokensBefore) }),
    el('td', { class: 'num', text: fmt(st.tokensAfter) }),
    el('td', { class: 'num', text: fmt(st.tokensBefore - st.tokensAfter) }),
    el('td', { class: 'detail' }, ...(st.notes ?? []).map((n) => el('div', { text: n }))))));
}
