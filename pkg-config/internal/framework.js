// Internal: what the agent-framework adapters (adapters/langchain/, adapters/openai-agents/)
// share: the core's spill tool definitions, the per-conversation stores and the
// compress call that keeps a conversation's spills where its tools read them.
import { InputError } from '../core/errors.js';
import { spillToolDefinitions } from '../core/spill.js';
import { SessionStores, compressInto, sessionFromMessages } from './mirror.js';
import { runSpillTool } from './spill-reader.js';

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
  if (!store || typeof store.get !== 'function') {
    throw new InputError('spillTools(store) needs the store the middleware spills into', 'INVALID_ARGUMENT', 'store');
  }
  return spillToolSpecs().map((spec) => make({
    ...spec,
    run: async (args) => (await runSpillTool(store, spec.name, args ?? {}, session)).text,
  }));
}

/**
 * A compressor for one framework: `settings` are the user's options (compress
 * settings plus `store`, `session`, `onReport`, `maxSessions`, `cacheKey` (with
 * a `store` that can list: the session caches are kept in it as segments
 * sealed with this key, see `compressInto`), and `pointer`:
 * `'path'` with a `FileStore`, see `withPointer`); the result's
 * `compress(request, call)` compresses a request in `format` under the session
 * `session(call)` names (by default a hash of the conversation's opening) and
 * resolves `{ request, report, session }`; `store` is where the spills are.
 */
export function conversationCompressor(options, format) {
  const { store, session, onReport, maxSessions, cacheKey, ...settings } = options;
  const spills = store ?? new SessionStores({ maxSessions });
  // With an outside store (KV), per-session caches still live here between turns.
  const caches = store === undefined ? undefined : new SessionStores({ maxSessions });
  return {
    store: spills,
    async compress(request, call, opening) {
      const name = typeof session === 'function' ? session(call) : (session ?? sessionFromMessages(opening));
      const out = await compressInto(request, { ...settings, format, session: name }, spills, caches, { cacheKey });
      onReport?.({ session: name, report: out.report });
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
