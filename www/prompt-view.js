// Renders a provider request as the model receives it: system prompt, then each
// message with its text, tool calls, tool results and images (at real size),
// marked with the stage that changed it (report.changes[].message indexes the
// request's own list of messages: `messages`, `input` or `contents`).

export const STAGES = ['spill', 'dedup', 'phase', 'optical', 'compact'];
const POINTER = /spill:\/\/[A-Za-z0-9._-]+\/[A-Za-z0-9._-]+/g;

// ---- normalization: every format → { system: Block[], messages: Msg[] } ----
// Block: { type: 'text', text } | { type: 'image', src } | { type: 'call', name, args, id }
//      | { type: 'result', id, name, blocks } | { type: 'other', json }
// Msg: { role, blocks, index (position in the request's list of messages, or null), note }

function textBlocks(content, map) {
  if (content == null) return [];
  if (typeof content === 'string') return [{ type: 'text', text: content }];
  if (Array.isArray(content)) return content.flatMap(map);
  return [{ type: 'other', json: content }];
}

function chatPart(p) {
  if (p?.type === 'text') return [{ type: 'text', text: p.text }];
  if (p?.type === 'image_url') return [{ type: 'image', src: p.image_url?.url ?? '' }];
  return [{ type: 'other', json: p }];
}

function openaiChat(req) {
  const out = { system: [], messages: [] };
  let leading = true;
  let previousRole = null;
  for (const [index, m] of (req.messages ?? []).entries()) {
    const blocks = textBlocks(m.content, chatPart);
    for (const c of m.tool_calls ?? []) {
      blocks.push({ type: 'call', id: c.id, name: c.function?.name, args: c.function?.arguments });
    }
    if (leading && (m.role === 'system' || m.role === 'developer')) {
      out.system.push(...blocks);
      continue;
    }
    leading = false;
    // The emitter moves images out of tool messages into a user message right
    // after the tool run: that message is not one of the conversation's messages.
    const carrier = m.role === 'user' && previousRole === 'tool' && Array.isArray(m.content) &&
      m.content.length > 0 && m.content.every((p) => p?.type === 'image_url');
    previousRole = m.role;
    if (carrier) {
      out.messages.push({ role: 'user', blocks, index: null, note: 'images of the tool results above (Chat Completions accepts images only in user messages)' });
      continue;
    }
    out.messages.push({ role: m.role, blocks, index, id: m.tool_call_id });
  }
  return out;
}

function anthropicBlock(b) {
  if (typeof b === 'string') return [{ type: 'text', text: b }];
  switch (b?.type) {
    case 'text': return [{ type: 'text', text: b.text }];
    case 'thinking': return [{ type: 'text', text: b.thinking, thinking: true }];
    case 'image': {
      const s = b.source ?? {};
      const src = s.type === 'base64' ? `data:${s.media_type};base64,${s.data}` : (s.url ?? '');
      return [{ type: 'image', src }];
    }
    case 'tool_use': return [{ type: 'call', id: b.id, name: b.name, args: JSON.stringify(b.input) }];
    case 'tool_result':
      return [{ type: 'result', id: b.tool_use_id, blocks: textBlocks(b.content, anthropicBlock), error: b.is_error }];
    default: return [{ type: 'other', json: b }];
  }
}

function anthropic(req) {
  return {
    system: textBlocks(req.system, anthropicBlock),
    messages: (req.messages ?? []).map((m, i) => ({ role: m.role, blocks: textBlocks(m.content, anthropicBlock), index: i })),
  };
}

function geminiPart(p) {
  if (typeof p?.text === 'string') return [{ type: 'text', text: p.text, thinking: p.thought === true }];
  const inline = p?.inline_data ?? p?.inlineData;
  if (inline) return [{ type: 'image', src: `data:${inline.mime_type ?? inline.mimeType};base64,${inline.data}` }];
  const call = p?.functionCall ?? p?.function_call;
  if (call) return [{ type: 'call', id: call.id, name: call.name, args: JSON.stringify(call.args) }];
  const resp = p?.functionResponse ?? p?.function_response;
  if (resp) {
    const r = resp.response;
    const text = typeof r?.output === 'string' ? r.output : typeof r?.content === 'string' ? r.content : JSON.stringify(r, null, 2);
    return [{ type: 'result', id: resp.id, name: resp.name, blocks: [{ type: 'text', text }] }];
  }
  return [{ type: 'other', json: p }];
}

function gemini(req) {
  const sys = req.systemInstruction ?? req.system_instruction;
  return {
    system: sys ? textBlocks(sys.parts, geminiPart) : [],
    messages: (req.contents ?? []).map((c, i) => ({ role: c.role ?? 'user', blocks: textBlocks(c.parts, geminiPart), index: i })),
  };
}

function responsesPart(p) {
  if (typeof p === 'string') return [{ type: 'text', text: p }];
  if (['input_text', 'output_text', 'text'].includes(p?.type)) return [{ type: 'text', text: p.text }];
  if (p?.type === 'input_image') return [{ type: 'image', src: p.image_url ?? '' }];
  return [{ type: 'other', json: p }];
}

function openaiResponses(req) {
  const out = { system: [], messages: [] };
  if (typeof req.instructions === 'string') out.system.push({ type: 'text', text: req.instructions });
  const items = typeof req.input === 'string' ? [{ role: 'user', content: req.input }] : (req.input ?? []);
  let leading = true;
  for (const [index, it] of items.entries()) {
    const type = it.type ?? 'message';
    if (type === 'message' && leading && (it.role === 'system' || it.role === 'developer')) {
      out.system.push(...textBlocks(it.content, responsesPart));
      continue;
    }
    leading = false;
    let msg;
    if (type === 'message') msg = { role: it.role, blocks: textBlocks(it.content, responsesPart) };
    else if (type === 'function_call') msg = { role: 'assistant', blocks: [{ type: 'call', id: it.call_id, name: it.name, args: it.arguments }] };
    else if (type === 'function_call_output') {
      msg = { role: 'tool', blocks: [{ type: 'result', id: it.call_id, blocks: textBlocks(it.output, responsesPart) }] };
    } else msg = { role: type, blocks: [{ type: 'other', json: it }] };
    out.messages.push({ ...msg, index });
  }
  return out;
}

/** The display model of a request of `format`. */
export function normalizeRequest(request, format) {
  switch (format) {
    case 'anthropic': return anthropic(request);
    case 'gemini': return gemini(request);
    case 'openai-responses': return openaiResponses(request);
    default: return openaiChat(request);
  }
}

// ---- rendering ----

function el(tag, attrs = {}, ...children) {
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
 * Renders `request` (object) of `format` into `container`, marking the messages
 * that `changes` touched. `onPointer(pointer)` opens a spill.
 */
export function renderRequest(container, request, format, changes, onPointer) {
  const view = normalizeRequest(request, format);
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
