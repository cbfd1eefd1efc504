// Internal: what the agent-framework adapters (adapters/langchain/, adapters/openai-agents/)
// share: the core's spill tool definitions, the per-conversation stores and the
// compress call that keeps a conversation's spills where its tools read them.
import { InputError, describe } from '../core/errors.js';
import { spillToolDefinitions } from '../core/spill.js';
import { SessionStores, compressInto, sessionFromMessages } from '../core/stores.js';
import { runSpillTool } from '../core/spill-reader.js';
import { debugSink, debugTurn } from './debug.js';

/** The core's definitions of read_spill and grep_spill: `[{ name, description, parameters }]`. */
export function spillToolSpecs() {
  return spillToolDefinitions('openai-chat').map((t) => t.function);
}

/**
 * The spill tools as the framework's tools: `make({ name, description,
 * parameters, run })` builds one, `run(args)` resolves the reply text (a
 * mistake the model can fix is a reply too). With `session`, only that
 * session's spills are readable.
 */
export function frameworkSpillTools(store, session, make) {
  checkSpillToolsArgs(store, session);
  return spillToolSpecs().map((spec) => make({
    ...spec,
    run: async (args) => (await runSpillTool(store, spec.name, args ?? {}, session)).text,
  }));
}

/**
 * The arguments of an adapter's `spillTools(store, { session })`: a store
 * that can `get` (the middleware's `.store`) and an optional session name;
 * `INVALID_ARGUMENT` naming the wrong one.
 */
export function checkSpillToolsArgs(store, session) {
  if (!store || typeof store.get !== 'function') {
    const got = store !== null && typeof store === 'object' ? 'an object without get()' : describe(store);
    throw new InputError(`spillTools(store) needs the store the middleware spills into (its .store), got ${got}`, 'INVALID_ARGUMENT', 'store');
  }
  if (session !== undefined && typeof session !== 'string') {
    throw new InputError(`must be a string (a session name), got ${describe(session)}`, 'INVALID_ARGUMENT', 'session');
  }
}

/** The options of `spillTools(store, options)`: an object (or none); `INVALID_ARGUMENT` naming `options` otherwise. */
export function spillToolsOptions(options) {
  if (options === undefined || options === null) return {};
  if (typeof options !== 'object' || Array.isArray(options)) {
    throw new InputError(`must be an object { session }, got ${describe(options)}`, 'INVALID_ARGUMENT', 'options');
  }
  return options;
}

/** The providers LangChain's `initChatModel` reads before a `:` in a model string. */
const LANGCHAIN_PROVIDERS = new Set([
  'openai', 'anthropic', 'azure_openai', 'cohere', 'google-vertexai', 'google-vertexai-web', 'google-genai',
  'ollama', 'mistralai', 'mistral', 'groq', 'cerebras', 'bedrock', 'deepseek', 'xai', 'fireworks', 'together', 'perplexity',
]);

/**
 * The model id a framework names: a string (LangChain's `provider:model`
 * form loses its provider, as `initChatModel` reads it), or a model object's
 * `model`, `modelName`, `modelId` or `_model` (OpenAI Agents' models);
 * `undefined` when it names none.
 */
export function modelNameOf(model) {
  if (typeof model === 'string') {
    // `openai:gpt-4o` (LangChain's `initChatModel`); `llama3.1:70b` (an Ollama tag) keeps its name.
    const colon = model.indexOf(':');
    const named = colon > 0 && LANGCHAIN_PROVIDERS.has(model.slice(0, colon)) ? model.slice(colon + 1) : model;
    return named === '' ? undefined : named;
  }
  if (model === null || typeof model !== 'object') return undefined;
  for (const key of ['model', 'modelName', 'modelId', '_model']) {
    const value = model[key];
    if (typeof value === 'string' && value !== '') return value;
    // A wrapper around another model (LangChain's configurable and bound models, Agents' adapters).
    if (key === 'model' && value !== null && typeof value === 'object' && value !== model) {
      const inner = modelNameOf(value);
      if (inner !== undefined) return inner;
    }
  }
  return undefined;
}

/**
 * A compressor for one framework: `settings` are the user's options (compress
 * settings plus `store`, `session`, `onReport`, `debug` (each turn's report as
 * text to `console.error` or a function, see internal/debug.js), `maxSessions`, `cacheKey` (with
 * a `store` that can list: the session caches are kept in it as segments
 * sealed with this key, see `compressInto`), and `pointer`:
 * `'path'` with a `FileStore`, see `withPointer`); the result's
 * `compress(request, call, opening, model)` compresses a request in `format` under the session
 * `session(call)` names (by default a hash of the conversation's opening), for
 * `model` (the framework's model id, unless the options name one: with
 * `optical.enabled: 'auto'` snapshots go only to a model that reads images), and
 * resolves `{ request, report, session }`; `store` is where the spills are.
 */
export function conversationCompressor(options, format) {
  const { store, session, onReport, debug, maxSessions, cacheKey, ...settings } = options;
  const sink = debugSink(debug);
  const spills = store ?? new SessionStores({ maxSessions });
  // With an outside store (KV), per-session caches still live here between turns.
  const caches = store === undefined ? undefined : new SessionStores({ maxSessions });
  return {
    store: spills,
    async compress(request, call, opening, model) {
      const name = typeof session === 'function' ? session(call) : (session ?? sessionFromMessages(opening));
      const named = settings.model === undefined && model !== undefined ? { model } : {};
      const out = await compressInto(request, { ...settings, ...named, format, session: name }, spills, caches, { cacheKey });
      onReport?.({ session: name, report: out.report });
      debugTurn(sink, name, out.report);
      return { ...out, session: name };
    },
  };
}

/** JSON text of a value with object keys sorted: equal for values that differ only in key order. */
export function canonicalJson(value) {
  return JSON.stringify(value, (_, v) => (v !== null && typeof v === 'object' && !Array.isArray(v)
    ? Object.fromEntries(Object.keys(v).sort().map((k) => [k, v[k]]))
    : v));
}
