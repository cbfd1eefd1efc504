// LangChain.js adapter: an agent middleware (langchain v1 `createMiddleware`)
// that compresses the messages of every model call (`wrapModelCall`), and the
// `read_spill` / `grep_spill` tools as LangChain tools. Import from
// 'tracelite/langchain' (needs the `langchain` package).
//
// Why `wrapModelCall` and not `beforeModel`: `beforeModel` returns a state
// update, so compressing there would rewrite the agent's stored history (a
// compacted summary replacing messages for good, spilled outputs lost from the
// checkpoint). `wrapModelCall` changes only the request the model sees; the
// state keeps every message as it was, and the next call compresses the whole
// history again (same input, same bytes out: provider prompt caches keep working).
import '#entry'; // initializes the wasm for this host
import { AIMessage, HumanMessage, SystemMessage, ToolMessage, createMiddleware, tool } from 'langchain';
import { InputError, describe } from '../../core/errors.js';
import { canonicalJson, conversationCompressor, frameworkSpillTools, modelNameOf, spillToolsOptions } from '../../internal/framework.js';

/** Content-part type carrying a LangChain content block the chat format has no place for. */
const REF = 'langchain';
/** Message field: index of the LangChain message a chat message came from (-1: the system message). */
const FROM = 'tracelite_langchain';
/** Message field marking a whole LangChain message passed through untouched. */
const PASS = 'tracelite_langchain_message';

/** The kind of a LangChain message: 'human' | 'ai' | 'tool' | 'system' | …. */
function kind(message) {
  return typeof message?.getType === 'function' ? message.getType() : message?.type;
}

/**
 * Converts LangChain messages (and the agent's system message, if any) into
 * an OpenAI Chat Completions request, the format the core compresses. Returns
 * `{ request, side }`; `side` keeps what `fromChatMessages` needs to give back
 * every message the compression left alone as the very object it was.
 */
export function toChatMessages(messages, systemMessage) {
  if (!Array.isArray(messages)) throw new InputError(`must be an array of LangChain messages, got ${describe(messages)}`, 'INVALID_ARGUMENT', 'messages');
  const side = { parts: [], messages, systemMessage, rendered: new Map() };
  const ref = (value) => ({ type: REF, ref: side.parts.push(value) - 1 });
  const content = (c) => (typeof c === 'string' ? c : (Array.isArray(c) ? c.map((p) => (p?.type === 'text' && typeof p.text === 'string' ? p : ref(p))) : ''));
  const out = [];
  const add = (msg, from) => {
    msg[FROM] = from;
    side.rendered.set(from, canonicalJson(msg.content));
    out.push(msg);
  };
  if (systemMessage && !(typeof systemMessage.content === 'string' && systemMessage.content === '')) {
    add({ role: 'system', content: content(systemMessage.content) }, -1);
  }
  messages.forEach((m, i) => {
    switch (kind(m)) {
      case 'system':
        add({ role: 'system', content: content(m.content) }, i);
        return;
      case 'human':
        add({ role: 'user', content: content(m.content) }, i);
        return;
      case 'ai': {
        const msg = { role: 'assistant', content: content(m.content) };
        const calls = (m.tool_calls ?? []).map((c, j) => ({
          id: c.id ?? `tracelite-call-${i}-${j}`,
          type: 'function',
          function: { name: c.name, arguments: JSON.stringify(c.args ?? {}) },
        }));
        if (calls.length > 0) msg.tool_calls = calls;
        add(msg, i);
        return;
      }
      case 'tool':
        add({ role: 'tool', tool_call_id: m.tool_call_id, content: content(m.content) }, i);
        return;
      default: {
        const msg = { role: 'user', content: [ref(m)], [PASS]: true };
        msg[FROM] = i;
        out.push(msg);
      }
    }
  });
  return { request: { messages: out }, side };
}

function contentBack(content, side) {
  if (content === null || content === undefined) return '';
  if (typeof content === 'string') return content;
  return content.map((p) => (p?.type === REF ? side.parts[p.ref] : p));
}

/** Fields every LangChain message keeps when its content changes, and those of each kind. */
const KEPT = ['id', 'name', 'additional_kwargs', 'response_metadata'];
const KEPT_BY_KIND = {
  ai: ['tool_calls', 'invalid_tool_calls', 'usage_metadata'],
  tool: ['tool_call_id', 'status', 'artifact'],
};
const CLASSES = { ai: AIMessage, tool: ToolMessage, system: SystemMessage };

/** A message like `m` (same class, ids, tool calls, fields) with new content. */
function withContent(m, content) {
  const out = { content };
  for (const k of [...KEPT, ...(KEPT_BY_KIND[kind(m)] ?? [])]) if (m[k] !== undefined) out[k] = m[k];
  return new (CLASSES[kind(m)] ?? HumanMessage)(out);
}

/** A message the compression wrote (a compaction summary, a snapshot): by its role. */
function fresh(msg, content) {
  switch (msg.role) {
    case 'assistant':
      return new AIMessage({
        content,
        tool_calls: (msg.tool_calls ?? []).map((c) => ({ id: c.id, name: c.function?.name, args: parseArgs(c.function?.arguments), type: 'tool_call' })),
      });
    case 'tool':
      return new ToolMessage({ content, tool_call_id: msg.tool_call_id });
    case 'system':
    case 'developer':
      return new SystemMessage({ content });
    default:
      return new HumanMessage({ content });
  }
}

function parseArgs(text) {
  try {
    const value = JSON.parse(text ?? '{}');
    return value !== null && typeof value === 'object' ? value : { input: value };
  } catch {
    return { input: text };
  }
}

/**
 * Converts a (compressed) Chat request made by `toChatMessages` back into
 * LangChain messages: `{ messages, systemMessage }`. Messages the compression
 * left alone come back as the very objects they were; changed ones are new
 * messages of the same class with the same id, name and tool calls.
 */
export function fromChatMessages(request, side) {
  const messages = [];
  let systemMessage = side.systemMessage;
  for (const msg of request.messages) {
    const from = msg[FROM];
    if (msg[PASS]) {
      messages.push(side.parts[msg.content[0].ref]);
      continue;
    }
    const original = from === -1 ? side.systemMessage : side.messages[from];
    const content = contentBack(msg.content, side);
    const same = original !== undefined && canonicalJson(msg.content) === side.rendered.get(from);
    const back = same ? original : (original !== undefined ? withContent(original, content) : fresh(msg, content));
    if (from === -1) systemMessage = back;
    else messages.push(back);
  }
  return { messages, systemMessage };
}

/**
 * LangChain tools `read_spill` and `grep_spill` over `store` (the middleware's
 * store): the model passes the `spill://…` pointer from a placeholder and gets
 * the hidden lines back, a page or the matches at a time. Definitions,
 * arguments and replies are the core's. With `{ session }`, only that
 * session's spills are readable.
 */
export function spillTools(store, options = {}) {
  return frameworkSpillTools(store, spillToolsOptions(options).session, ({ name, description, parameters, run }) => tool(run, { name, description, schema: parameters }));
}

/**
 * Agent middleware for `createAgent({ middleware })` that compresses the
 * messages of every model call (`wrapModelCall`) without touching the agent's
 * state, and registers `read_spill` / `grep_spill` (unless `spillTools: false`).
 * Options are `compress` options plus `store`, `maxSessions`, `session` (a
 * name or `(request) => name`; by default a hash of the conversation's
 * opening) and `onReport({ session, report })`; `debug: true` writes each turn's report as text
 * (`formatReport`) to `console.error`, `debug: (text) => void` gets it instead (default off). The model is the call's
 * (`request.model`: its `model` or `modelName`) unless `options.model` names one.
 */
export function traceliteMiddleware(options = {}) {
  const { spillTools: withTools = true, ...rest } = options;
  const compressor = conversationCompressor(rest, 'openai-chat');
  const middleware = createMiddleware({
    name: 'TraceLiteMiddleware',
    tools: withTools ? spillTools(compressor.store) : undefined,
    wrapModelCall: async (request, handler) => {
      const { request: chat, side } = toChatMessages(request.messages, request.systemMessage);
      // The model of this call (`request.model`, the chat model or its name) decides whether snapshots go.
      const out = await compressor.compress(chat, request, chat.messages, modelNameOf(request.model));
      const { messages, systemMessage } = fromChatMessages(out.request, side);
      const next = { ...request, messages };
      if (systemMessage !== request.systemMessage) next.systemMessage = systemMessage;
      return handler(next);
    },
  });
  return Object.assign(middleware, { store: compressor.store });
}
