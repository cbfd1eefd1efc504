// Vercel AI SDK adapter: a language-model middleware that compresses the prompt
// (`transformParams`) and the `read_spill` / `grep_spill` tools that read back
// what it moved out. Import from 'tracelite/ai-sdk' (needs the `ai` package).
import '#entry'; // initializes the wasm for this host
import * as ai from 'ai';
import { InputError, OptionError, describe } from '../../core/errors.js';
import { checkSpillToolsArgs, spillToolSpecs, spillToolsOptions } from '../../internal/framework.js';
import { SessionStores, compressInto, sessionFromMessages } from '../../core/stores.js';
import { runSpillTool } from '../../core/spill-reader.js';
import { debugSink, debugTurn } from '../../internal/debug.js';

/**
 * The middleware spec of the installed `ai`: ai 6 (LanguageModelV3Middleware)
 * still exports `experimental_generateImage`, which ai 7 removed.
 */
const AI_SPEC = typeof ai.experimental_generateImage === 'function' ? 'v3' : 'v4';

/** Camel-case spellings of `grep_spill` arguments accepted from direct `execute` calls. */
const GREP_ALIASES = { maxMatches: 'max_matches', ignoreCase: 'ignore_case' };

/** `args` with camel-case aliases renamed to the schema's names (the schema's win). */
function schemaArgs(args) {
  if (args === null || typeof args !== 'object' || Array.isArray(args)) return args;
  const out = { ...args };
  for (const [alias, name] of Object.entries(GREP_ALIASES)) {
    if (alias in out) {
      if (!(name in out)) out[name] = out[alias];
      delete out[alias];
    }
  }
  return out;
}

/** Content-part type carrying an AI SDK part the chat format has no place for. */
const REF = 'ai-sdk';
/** Message field grouping tool messages that came from one AI SDK tool message. */
const GROUP = 'tracelite_ai_sdk_group';
/** Message field marking a whole AI SDK message passed through untouched. */
const PASS = 'tracelite_ai_sdk_message';
/** Message field with refs of non-result parts of an AI SDK tool message. */
const EXTRA = 'tracelite_ai_sdk_parts';

function withOptions(target, source) {
  if (source.providerOptions !== undefined) target.providerOptions = source.providerOptions;
  return target;
}

function outputText(output) {
  switch (output?.type) {
    case 'text':
    case 'error-text':
      return String(output.value);
    case 'json':
    case 'error-json':
      return JSON.stringify(output.value);
    case 'execution-denied':
      return `Tool execution denied${output.reason ? `: ${output.reason}` : ''}`;
    default:
      return undefined;
  }
}

/**
 * Converts an AI SDK language-model prompt (`params.prompt`) into an OpenAI
 * Chat Completions request, the format the core compresses. Returns
 * `{ request, side }`; `side` keeps what `fromChatRequest` needs to restore
 * every part the compression left alone exactly as it was.
 */
export function toChatRequest(prompt) {
  if (!Array.isArray(prompt)) throw new InputError(`must be an array of messages, got ${describe(prompt)}`, 'INVALID_ARGUMENT', 'prompt');
  const side = { parts: [], calls: new Map(), results: new Map(), rendered: new Map() };
  const ref = (value) => ({ type: REF, ref: side.parts.push(value) - 1 });
  const text = (p) => withOptions({ type: 'text', text: p.text }, p);
  const messages = [];
  prompt.forEach((m, i) => {
    switch (m.role) {
      case 'system':
        messages.push(withOptions({ role: 'system', content: m.content }, m));
        return;
      case 'user':
        messages.push(withOptions({ role: 'user', content: m.content.map((p) => (p.type === 'text' ? text(p) : ref(p))) }, m));
        return;
      case 'assistant': {
        const content = [];
        const calls = [];
        for (const p of m.content) {
          if (p.type === 'text') content.push(text(p));
          else if (p.type === 'tool-call' && !p.providerExecuted) {
            side.calls.set(p.toolCallId, p);
            calls.push({
              id: p.toolCallId,
              type: 'function',
              function: { name: p.toolName, arguments: JSON.stringify(p.input ?? {}) },
            });
          } else content.push(ref(p));
        }
        const msg = withOptions({ role: 'assistant', content: content.length > 0 ? content : null }, m);
        if (calls.length > 0) msg.tool_calls = calls;
        messages.push(msg);
        return;
      }
      case 'tool': {
        const others = [];
        const group = [];
        for (const p of m.content) {
          if (p.type !== 'tool-result') {
            others.push(side.parts.push(p) - 1);
            continue;
          }
          const plain = outputText(p.output);
          const content = plain !== undefined
            ? plain
            : (Array.isArray(p.output?.value) ? p.output.value : []).map((c) => (c.type === 'text' ? { type: 'text', text: c.text } : ref(c)));
          side.results.set(p.toolCallId, p);
          side.rendered.set(p.toolCallId, JSON.stringify(content));
          group.push({ role: 'tool', tool_call_id: p.toolCallId, content, [GROUP]: i });
        }
        if (group.length === 0) {
          messages.push({ role: 'user', content: [ref(m)], [PASS]: true });
          return;
        }
        withOptions(group[0], m);
        if (others.length > 0) group[0][EXTRA] = others;
        messages.push(...group);
        return;
      }
      default:
        messages.push({ role: 'user', content: [ref(m)], [PASS]: true });
    }
  });
  return { request: { messages }, side };
}

function imagePart(url, version) {
  const m = /^data:([^;,]+);base64,(.*)$/s.exec(url);
  if (version === 'v4') {
    return m
      ? { type: 'file', mediaType: m[1], data: { type: 'data', data: m[2] } }
      : { type: 'file', mediaType: 'image', data: { type: 'url', url: new URL(url) } };
  }
  return m ? { type: 'file', mediaType: m[1], data: m[2] } : { type: 'file', mediaType: 'image/*', data: new URL(url) };
}

function partsBack(content, side, version) {
  if (content === null || content === undefined) return [];
  if (typeof content === 'string') return content === '' ? [] : [{ type: 'text', text: content }];
  return content.map((p) => {
    if (p.type === REF) return side.parts[p.ref];
    if (p.type === 'text') return withOptions({ type: 'text', text: p.text }, p);
    if (p.type === 'image_url') return imagePart(p.image_url?.url ?? '', version);
    return { type: 'text', text: JSON.stringify(p) };
  });
}

function parseArguments(text) {
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

function resultBack(msg, side, version) {
  const original = side.results.get(msg.tool_call_id);
  if (original && JSON.stringify(msg.content) === side.rendered.get(msg.tool_call_id)) return original;
  const isError = original?.output?.type === 'error-text' || original?.output?.type === 'error-json';
  const output = typeof msg.content === 'string'
    ? { type: isError ? 'error-text' : 'text', value: msg.content }
    : {
      type: 'content',
      value: partsBack(msg.content, side, version).map((p) => (p.type === 'file' && version !== 'v4' ? { type: 'media', data: p.data, mediaType: p.mediaType } : p)),
    };
  const toolName = original?.toolName ?? side.calls.get(msg.tool_call_id)?.toolName ?? 'unknown';
  return withOptions({ type: 'tool-result', toolCallId: msg.tool_call_id, toolName, output }, original ?? {});
}

/**
 * Converts a (compressed) Chat Completions request made by `toChatRequest`
 * back into an AI SDK prompt. Unchanged parts come back as the very objects
 * they were; changed tool results become text (or content) outputs.
 */
export function fromChatRequest(request, side, version = 'v4') {
  const prompt = [];
  let group;
  for (const msg of request.messages) {
    if (msg[PASS]) {
      prompt.push(side.parts[msg.content[0].ref]);
      group = undefined;
      continue;
    }
    switch (msg.role) {
      case 'system':
      case 'developer': {
        const content = typeof msg.content === 'string'
          ? msg.content
          : partsBack(msg.content, side, version).map((p) => p.text ?? '').join('');
        prompt.push(withOptions({ role: 'system', content }, msg));
        break;
      }
      case 'user':
        prompt.push(withOptions({ role: 'user', content: partsBack(msg.content, side, version) }, msg));
        break;
      case 'assistant': {
        const content = partsBack(msg.content, side, version);
        for (const call of msg.tool_calls ?? []) {
          content.push(side.calls.get(call.id) ?? {
            type: 'tool-call',
            toolCallId: call.id,
            toolName: call.function?.name,
            input: parseArguments(call.function?.arguments ?? '{}'),
          });
        }
        prompt.push(withOptions({ role: 'assistant', content }, msg));
        break;
      }
      case 'tool': {
        const part = resultBack(msg, side, version);
        const last = prompt[prompt.length - 1];
        if (group !== undefined && msg[GROUP] === group && last?.role === 'tool') {
          last.content.push(part);
        } else {
          prompt.push(withOptions({ role: 'tool', content: [part] }, msg));
        }
        for (const i of msg[EXTRA] ?? []) prompt[prompt.length - 1].content.push(side.parts[i]);
        group = msg[GROUP];
        continue;
      }
      default:
        break;
    }
    group = undefined;
  }
  return prompt;
}

/**
 * Middleware for `wrapLanguageModel` that compresses every prompt before it
 * reaches the model. Options are `compress` options plus:
 * * `store`: where spills live (a `SpillStore`, a `KvSpillStore`, or any
 *   `{ get, put }`). By default an in-memory store per conversation (its own
 *   spills, caches and previous request, so `report.prefix` measures prefix
 *   reuse), for the `maxSessions` (64) most recent conversations; exposed as
 *   `middleware.store` so `spillTools(middleware.store)` reads the same blobs.
 * * `pointer`: `'path'` with a `FileStore` makes pointers the spills' file
 *   paths (the model can read them with its own tools); `'spill'` by default.
 * * `session`: a name or `(params) => name`; by default a hash of the
 *   conversation's opening, so every conversation keeps its own spills.
 * * `onReport({ session, report, type })`: called after each compression.
 * * `debug`: `true` writes each turn's report as text (`formatReport`) to
 *   `console.error`; a function `(text) => void` gets it instead. Default off.
 * * `model`: the model the prompts go to; by default the wrapped model's
 *   `modelId` (with `optical.enabled: 'auto'`, snapshots go only to a model
 *   that reads images).
 * * `specificationVersion`: the middleware spec, 'v3' (ai 6) or 'v4' (ai 7);
 *   by default that of the installed `ai` (the types' `LanguageModelMiddleware`).
 *   The prompt is converted to the spec of the model `transformParams` is given.
 */
export function traceliteMiddleware(options = {}) {
  const { store, session, onReport, debug, maxSessions, maxHeldBytes, maxMemoryBytes, cacheKey, specificationVersion = AI_SPEC, ...settings } = options;
  const sink = debugSink(debug);
  if (specificationVersion !== 'v3' && specificationVersion !== 'v4') {
    throw new OptionError(`must be 'v3' or 'v4', got ${typeof specificationVersion === 'string' ? JSON.stringify(specificationVersion) : describe(specificationVersion)}`, 'INVALID_OPTION', 'specificationVersion');
  }
  const spills = store ?? new SessionStores({ maxSessions, maxMemoryBytes });
  // With an outside store (KV), per-session caches still live here between turns.
  const caches = store === undefined ? undefined : new SessionStores({ maxSessions, maxHeldBytes, maxMemoryBytes });
  return {
    specificationVersion,
    store: spills,
    async transformParams({ params, type, model }) {
      // The prompt in the spec of the model it goes to (ai 6 hands v3 models, ai 7 v4).
      const spec = model?.specificationVersion === 'v3' || model?.specificationVersion === 'v4'
        ? model.specificationVersion
        : specificationVersion;
      const { request, side } = toChatRequest(params.prompt);
      const name = typeof session === 'function' ? session(params) : (session ?? sessionFromMessages(request.messages));
      // The model the prompt goes to (`model.modelId`) decides whether snapshots go, unless the options name one.
      const named = settings.model === undefined && typeof model?.modelId === 'string' && model.modelId !== '' ? { model: model.modelId } : {};
      const out = await compressInto(request, { ...settings, ...named, format: 'openai-chat', session: name }, spills, caches, { cacheKey });
      onReport?.({ session: name, report: out.report, type });
      debugTurn(sink, name, out.report);
      return { ...params, prompt: fromChatRequest(out.request, side, spec) };
    },
  };
}

/** The core's definitions of read_spill and grep_spill: `{ name: { description, parameters } }`. */
function coreToolDefinitions() {
  const out = {};
  for (const spec of spillToolSpecs()) out[spec.name] = spec;
  return out;
}

/**
 * AI SDK tools `read_spill` and `grep_spill` over `store` (the middleware's
 * store): the model passes the `spill://…` pointer from a placeholder and gets
 * the hidden lines back, a page or the matches at a time. Definitions,
 * arguments and replies are the core's (src/spill/tools.rs). With
 * `{ session }`, only that session's spills are readable (another session's
 * pointer reads as missing): pass it when one store serves several users.
 * `grep_spill` takes the schema's snake-case names (`max_matches`,
 * `ignore_case`); a direct `execute` call may spell them `maxMatches` and
 * `ignoreCase` (the schema's spelling wins when both are given).
 */
export function spillTools(store, options = {}) {
  const { session } = spillToolsOptions(options);
  checkSpillToolsArgs(store, session);
  const defs = coreToolDefinitions();
  const make = (name) => ai.tool({
    description: defs[name].description,
    inputSchema: ai.jsonSchema(defs[name].parameters),
    execute: async (args) => (await runSpillTool(store, name, name === 'grep_spill' ? schemaArgs(args) : args, session)).text,
  });
  return { read_spill: make('read_spill'), grep_spill: make('grep_spill') };
}
