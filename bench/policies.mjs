// The context policies compared by the benchmark. Baselines are implemented
// here on the OpenAI chat request; TraceLite policies call the package.
import { messageShape, o200kCounter } from './tokens.mjs';
import { oracleAtArrival } from './oracle.mjs';

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
    { id: 'mask5-block10', label: 'Observation masking, last 5, boundary in blocks of 10 (cache-friendly)', kind: 'baseline', transform: maskObservations(5, { block: 10 }) },
    { id: 'ctxedit-default', label: 'Anthropic context editing, documented defaults (trigger 100k, keep 3)', kind: 'baseline', transform: clearToolUses() },
    { id: 'ctxedit-30k', label: 'Anthropic context editing, trigger 30k, keep 3, clear_at_least 5k', kind: 'baseline', transform: clearToolUses({ trigger: 30_000, keep: 3, clearAtLeast: 5_000 }) },
    { id: 'gemini-mask', label: 'Gemini CLI tool output masking (newest 50k kept, ≥ 30k batches)', kind: 'baseline', transform: geminiMasking() },
    renderer
      ? { id: 'image-all', label: 'Every observation as an image', kind: 'baseline', transform: renderAll(renderer) }
      : { id: 'image-all', label: 'Every observation as an image', kind: 'tracelite', options: IMAGE_ALL },
    // A bound, not a competitor (bench/oracle.mjs): what keeping at arrival only the lines later steps use would cost.
    { id: 'oracle-arrival', label: 'Oracle at arrival (bound: only the lines later steps use, ±1)', kind: 'baseline', transform: oracleAtArrival() },
    { id: 'tracelite', label: 'TraceLite defaults', kind: 'tracelite', perProvider: true, options: {} },
    // The design's per-result cap (25% of the budget) against the default (2%).
    { id: 'tracelite-cap25', label: 'TraceLite defaults, spill cap 25% of the budget (the design)', kind: 'tracelite', options: { spill: { fraction: 0.25 } } },
    // Salience at arrival (issue 54, off by default): the frontier beside the oracle bound (bench/SALIENCE.md).
    { id: 'tracelite-salience', label: 'TraceLite defaults + salience at arrival (spill.salience)', kind: 'tracelite', options: { spill: { salience: { enabled: true } } } },
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

/**
 * SWE-agent `last_n_observations`: older tool outputs become a one-line note.
 * With `block` > 1 the boundary moves only in whole blocks (cache-friendly
 * masking): of the `n − keep` observations past the newest `keep`, the oldest
 * `floor((n − keep) / block) × block` are masked, so between `keep` and
 * `keep + block − 1` observations stay visible and the masked prefix (and the
 * prompt cache) changes once every `block` steps.
 */
export function maskObservations(keep, { block = 1 } = {}) {
  const memo = new WeakMap();
  return (messages) => {
    const toolIdx = toolIndexes(messages);
    const excess = Math.max(0, toolIdx.length - keep);
    const masked = new Set(toolIdx.slice(0, Math.floor(excess / block) * block));
    return messages.map((m, i) => (masked.has(i) ? memoized(memo, m, maskNote) : m));
  };
}

function toolIndexes(messages) {
  const out = [];
  messages.forEach((m, i) => m.role === 'tool' && out.push(i));
  return out;
}

/** `make(m)` once per original message object (identical inputs, identical outputs: cacheable). */
function memoized(memo, m, make) {
  let out = memo.get(m);
  if (!out) memo.set(m, (out = make(m)));
  return out;
}

/** SWE-agent's one-line placeholder of a masked observation. */
function maskNote(m) {
  const text = messageText(m);
  const lines = text === '' ? 0 : text.split('\n').length;
  return { ...m, content: `Old environment output: (${lines} lines omitted)` };
}

/**
 * Per-conversation state of a stateful baseline. The harness replays the
 * requests of one conversation in order, as slices of one message array, so
 * the first message object names the conversation; a request shorter than
 * the previous one starts it over (a second replay of the same trajectory).
 */
function conversationState(states, messages, init) {
  const key = messages[0];
  let s = key && states.get(key);
  if (!s || messages.length < s.length) {
    s = init();
    if (key) states.set(key, s);
  }
  s.length = messages.length;
  return s;
}

let sharedCounter;

/** Tokens of one message as the harness counts it (o200k text + 4 per message + 3 per call). */
function messageTokens(memo, m) {
  let n = memo.get(m);
  if (n === undefined) {
    sharedCounter ??= o200kCounter();
    memo.set(m, (n = messageShape(m, sharedCounter).text));
  }
  return n;
}

/**
 * Placeholder of a cleared tool result. The API does not publish the text it
 * inserts ("placeholder text to let Claude know the tool result was removed");
 * this is the one Anthropic's own agent, Claude Code, uses when it clears an
 * old tool result. A few tokens either way.
 */
export const CLEARED_PLACEHOLDER = '[Old tool result content cleared]';

/**
 * Anthropic context editing, `clear_tool_uses_20250919` (beta
 * `context-management-2025-06-27`), run with prompt caching:
 * * `trigger` (default 100,000 input tokens): clearing is considered only when
 *   the request the agent sends (its full, unedited history: editing is
 *   server-side) exceeds it;
 * * `keep` (default 3): the newest tool uses are never cleared; when clearing
 *   fires, every older tool result is replaced by the placeholder, oldest first;
 * * `clearAtLeast` (`clear_at_least`, default none): the context is modified
 *   only if the clearing removes at least this many tokens;
 * * tool inputs (the calls' arguments) stay (`clear_tool_inputs` false), no tool
 *   is excluded.
 * Cleared results stay cleared in every later request (the point only moves
 * forward), so the edited prefix is cacheable between firings; each firing
 * changes the prefix and invalidates the cache from the first newly cleared
 * result on (Anthropic: "you'll incur cache write costs each time content is
 * cleared"). Tokens are the harness's o200k counts.
 */
export function clearToolUses({ trigger = 100_000, keep = 3, clearAtLeast = 0 } = {}) {
  const states = new WeakMap();
  const tokens = new WeakMap();
  const memo = new WeakMap();
  const cleared = (m) => memoized(memo, m, (x) => ({ ...x, content: CLEARED_PLACEHOLDER }));
  return (messages) => {
    const s = conversationState(states, messages, () => ({ cleared: 0 }));
    const toolIdx = toolIndexes(messages);
    const total = messages.reduce((n, m) => n + messageTokens(tokens, m), 0);
    const upTo = Math.max(s.cleared, toolIdx.length - keep);
    if (total > trigger && upTo > s.cleared) {
      let freed = 0;
      for (const i of toolIdx.slice(s.cleared, upTo)) freed += messageTokens(tokens, messages[i]) - messageTokens(tokens, cleared(messages[i]));
      if (freed >= clearAtLeast) s.cleared = upTo;
    }
    const gone = new Set(toolIdx.slice(0, s.cleared));
    return messages.map((m, i) => (gone.has(i) ? cleared(m) : m));
  };
}

/** Tool names the Gemini CLI port treats as its shell tool (`run_shell_command`). */
export const SHELL_TOOLS = new Set(['bash', 'execute_bash', 'run_shell_command']);

const MASKED_TAG = 'tool_output_masked';

/**
 * Gemini CLI tool output masking (`ToolOutputMaskingService`,
 * packages/core/src/context/toolOutputMaskingService.ts), run before every
 * request on the history without the pending request (the newest tool
 * results): scanning backwards from the one before the latest turn, tool
 * outputs not yet masked are summed until they pass `protect` (50,000)
 * estimated tokens; that output and every older one are prunable; if the
 * prunable ones total at least `minPrunable` (30,000), each is masked when
 * that saves tokens. Masked outputs stay masked (the CLI writes the new
 * history back) and no longer count. Tokens are the CLI's own estimate:
 * (tool name + `JSON.stringify(response)`) chars / 4. The masked output is the
 * CLI's snippet: a preview (shell tools: the whole output up to 20 lines, else
 * 10 head + 10 tail lines; other tools: 250 + 250 chars of the JSON response)
 * and the path of the file holding the full output (here deterministic, with
 * no random suffix).
 */
export function geminiMasking({ protect = 50_000, minPrunable = 30_000, protectLatestTurn = true } = {}) {
  const states = new WeakMap();
  const memo = new WeakMap();
  return (messages) => {
    const s = conversationState(states, messages, () => ({ masked: new Set() }));
    const names = toolNames(messages);
    const lastAssistant = messages.findLastIndex((m) => m.role === 'assistant');
    const history = lastAssistant + 1;
    let cumulative = 0;
    let reached = false;
    let prunableTokens = 0;
    const prunable = [];
    for (let i = protectLatestTurn ? history - 2 : history - 1; i >= 0; i--) {
      const m = messages[i];
      if (m.role !== 'tool' || s.masked.has(i)) continue;
      const text = messageText(m);
      if (JSON.stringify({ output: text }, null, 2).includes(`<${MASKED_TAG}`)) continue;
      const tokens = geminiTokens(names.get(m.tool_call_id), text);
      if (!reached) {
        cumulative += tokens;
        if (cumulative > protect) {
          reached = true;
          prunableTokens += tokens;
          prunable.push(i);
        }
      } else {
        prunableTokens += tokens;
        prunable.push(i);
      }
    }
    if (prunableTokens >= minPrunable) {
      for (const i of prunable) {
        const m = messages[i];
        const name = names.get(m.tool_call_id) ?? 'unknown_tool';
        const out = memoized(memo, m, (x) => ({ ...x, content: geminiSnippet(name, x.tool_call_id, messageText(x)) }));
        if (geminiTokens(name, messageText(m)) - geminiTokens(name, out.content) > 0) s.masked.add(i);
      }
    }
    return messages.map((m, i) => (s.masked.has(i) ? memo.get(m) : m));
  };
}

function toolNames(messages) {
  const names = new Map();
  for (const m of messages) for (const c of m.tool_calls ?? []) names.set(c.id, c.function?.name);
  return names;
}

/** Gemini CLI `estimateTokenCountSync` of a functionResponse part `{ name, response: { output } }`. */
export function geminiTokens(name, output) {
  return Math.floor(((name ?? '').length + JSON.stringify({ output }).length) / 4);
}

/** The masked snippet Gemini CLI puts in place of a tool output. */
export function geminiSnippet(name, callId, text) {
  const safe = (x) => String(x).replace(/[^a-zA-Z0-9_-]/g, '_').toLowerCase();
  const filePath = `~/.gemini/tmp/bench/tool-outputs/session-bench/${safe(name)}_${safe(callId)}.txt`;
  let preview;
  if (SHELL_TOOLS.has(name)) {
    preview = shellPreview(text);
  } else {
    const content = JSON.stringify({ output: text }, null, 2);
    preview = content.length > 500 ? `${content.slice(0, 250)}\n... [TRUNCATED] ...\n${content.slice(-250)}` : content;
  }
  return `<${MASKED_TAG}>\n${preview}\n\nOutput too large. Full output available at: ${filePath}\n</${MASKED_TAG}>`;
}

/** Gemini CLI `formatShellPreview` of `{ output: text }`. */
function shellPreview(content) {
  const parts = content.split(/^(Output|Error|Exit Code|Signal|Background PIDs|Process Group PGID): /m);
  if (parts.length < 3) return simplePreview(content);
  const out = [];
  if (parts[0].trim()) out.push(simplePreview(parts[0].trim()));
  for (let i = 1; i < parts.length; i += 2) {
    const body = parts[i + 1]?.trim() || '';
    out.push(parts[i] === 'Output' ? `Output: ${simplePreview(body)}` : `${parts[i]}: ${body}`);
  }
  return out.join('\n');
}

/** Gemini CLI `formatSimplePreview`: up to 20 lines whole, else 10 head + 10 tail lines. */
function simplePreview(content) {
  const lines = content.split('\n');
  if (lines.length <= 20) return content;
  return `${lines.slice(0, 10).join('\n')}\n\n... [${lines.length - 20} lines omitted] ...\n\n${lines.slice(-10).join('\n')}`;
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
