// The context policies compared by the benchmark. Baselines are implemented
// here on the OpenAI chat request; TraceLite policies call the package.

/** TraceLite stage names, in pipeline order. */
export const STAGES = ['spill', 'dedup', 'phase', 'optical', 'compact'];

/** Options turning on only `stage`. */
export function onlyStage(stage) {
  const options = {};
  for (const s of STAGES) options[s] = { enabled: s === stage };
  return options;
}

/**
 * "Every observation as an image" through the optical stage when the package
 * exports no render function (bench/render.mjs): other stages off, no recent
 * window, any image cheaper than 10^6 times its text accepted, no batching,
 * no image cap. Observations the renderer cannot draw (missing glyphs) stay text.
 */
export const IMAGE_ALL = {
  ...onlyStage('optical'),
  window: 0,
  optical: { enabled: true, ratio: 1e-6, batch: 1, maxImages: 100000 },
};

/**
 * Every policy. `kind` is `baseline` (a JS transform of the messages) or
 * `tracelite` (package `compress` with `options`). `perProvider` policies are
 * replayed once per provider because their output depends on image pricing;
 * the others are replayed once (OpenAI settings) and their images priced with
 * each provider's formula. Only TraceLite defaults is per provider: the
 * replays are the slow part of `make bench`.
 */
export function allPolicies({ renderer } = {}) {
  const policies = [
    { id: 'full', label: 'Full history', kind: 'baseline', transform: identity },
    { id: 'head10k', label: 'Head truncation 10k chars', kind: 'baseline', transform: perObservation(headTruncate(10_000)) },
    { id: 'headtail5k', label: 'Head+tail 5k+5k (mini-swe-agent)', kind: 'baseline', transform: perObservation(headTail(5_000, 5_000)) },
    { id: 'mask5', label: 'Observation masking, last 5 (SWE-agent)', kind: 'baseline', transform: maskObservations(5) },
    { id: 'mask10', label: 'Observation masking, last 10', kind: 'baseline', transform: maskObservations(10) },
    renderer
      ? { id: 'image-all', label: 'Every observation as an image', kind: 'baseline', transform: renderAll(renderer) }
      : { id: 'image-all', label: 'Every observation as an image', kind: 'tracelite', options: IMAGE_ALL },
    { id: 'tracelite', label: 'TraceLite defaults', kind: 'tracelite', perProvider: true, options: {} },
  ];
  for (const stage of STAGES) {
    policies.push({
      id: `only-${stage}`,
      label: `TraceLite ${stage} only`,
      kind: 'tracelite',
      options: onlyStage(stage),
    });
  }
  return policies;
}

function identity(messages) {
  return messages;
}

/** Cuts `s` to at most `n` UTF-16 units without splitting a surrogate pair. */
export function safeHead(s, n) {
  if (s.length <= n) return s;
  let end = n;
  const c = s.charCodeAt(end - 1);
  if (c >= 0xd800 && c <= 0xdbff) end -= 1;
  return s.slice(0, end);
}

/** The last `n` UTF-16 units of `s` without splitting a surrogate pair. */
export function safeTail(s, n) {
  if (s.length <= n) return s;
  let start = s.length - n;
  const c = s.charCodeAt(start);
  if (c >= 0xdc00 && c <= 0xdfff) start += 1;
  return s.slice(start);
}

/** Head truncation: keep the first `max` chars and say how much was cut. */
export function headTruncate(max) {
  return (text) => {
    if (text.length <= max) return text;
    return `${safeHead(text, max)}\n[output truncated: ${text.length - max} more characters]`;
  };
}

/** mini-swe-agent: outputs of 10k chars or more become head + elided note + tail. */
export function headTail(head, tail) {
  return (text) => {
    if (text.length < head + tail) return text;
    const elided = text.length - head - tail;
    return (
      '<warning>The output of your last command was too long. Head and tail shown.</warning>\n' +
      `<output_head>\n${safeHead(text, head)}\n</output_head>\n` +
      `<elided_chars>\n${elided} characters elided\n</elided_chars>\n` +
      `<output_tail>\n${safeTail(text, tail)}\n</output_tail>`
    );
  };
}

/** Text of a tool message (string content or text parts). */
export function messageText(message) {
  const c = message.content;
  if (typeof c === 'string') return c;
  if (Array.isArray(c)) return c.filter((p) => p?.type === 'text').map((p) => p.text).join('\n');
  return '';
}

/**
 * Applies `fn(text)` to every tool observation. Rewritten messages are memoized
 * per original message object, so identical inputs give identical (cacheable) outputs.
 */
function perObservation(fn) {
  const memo = new WeakMap();
  return (messages) =>
    messages.map((m) => {
      if (m.role !== 'tool') return m;
      let out = memo.get(m);
      if (!out) {
        const text = messageText(m);
        const next = fn(text);
        out = next === text ? m : { ...m, content: next };
        memo.set(m, out);
      }
      return out;
    });
}

/** SWE-agent `last_n_observations`: older tool outputs become a one-line note. */
export function maskObservations(keep) {
  const memo = new WeakMap();
  return (messages) => {
    const toolIdx = [];
    messages.forEach((m, i) => m.role === 'tool' && toolIdx.push(i));
    const masked = new Set(toolIdx.slice(0, Math.max(0, toolIdx.length - keep)));
    return messages.map((m, i) => {
      if (!masked.has(i)) return m;
      let out = memo.get(m);
      if (!out) {
        const text = messageText(m);
        const lines = text === '' ? 0 : text.split('\n').length;
        out = { ...m, content: `Old environment output: (${lines} lines omitted)` };
        memo.set(m, out);
      }
      return out;
    });
  };
}

/**
 * Every observation rendered as an image: the tool message keeps a one-line
 * stub and the snapshot follows in a user message (Chat Completions accepts
 * images only there), as the library's optical stage emits it.
 */
export function renderAll(renderer) {
  const memo = new WeakMap();
  return (messages, { provider } = {}) => {
    const out = [];
    for (const m of messages) {
      if (m.role !== 'tool' || messageText(m) === '') {
        out.push(m);
        continue;
      }
      const key = `${provider}`;
      let cached = memo.get(m);
      if (!cached) memo.set(m, (cached = {}));
      if (!cached[key]) {
        const pngs = renderer(messageText(m), { provider });
        cached[key] = pngs
          ? [
              { ...m, content: `[observation rendered as ${pngs.length} image(s) below]` },
              { role: 'user', content: pngs.map((png) => ({ type: 'image_url', image_url: { url: `data:image/png;base64,${png}` } })) },
            ]
          : [m];
      }
      out.push(...cached[key]);
    }
    return out;
  };
}
