// Spilling in JS: the SpillStore (bounded, inside wasm), the agent tools
// read_spill / grep_spill (definitions + executor) and spillText.
import { Store, spillTools as wasmSpillTools } from '../wasm/tracelite.js';
import { InputError, OptionError, guarded, jsonArg, describe, syncStoreError } from './errors.js';
import { settingsOf } from './settings.js';

/** Names of the agent tools over spilled output. */
export const SPILL_TOOL_NAMES = Object.freeze(['read_spill', 'grep_spill']);

/** Whether a tool call is one the spill executor answers. */
export function isSpillTool(name) {
  return SPILL_TOOL_NAMES.includes(name);
}

const encoder = new TextEncoder();

const LIMIT_KEYS = ['maxBytes', 'maxSessionBytes', 'ttlSeconds', 'maxGrepCost'];

function limitsJson(options) {
  const limits = {};
  for (const k of LIMIT_KEYS) if (options[k] !== undefined) limits[k] = options[k];
  for (const k of Object.keys(options)) {
    if (!LIMIT_KEYS.includes(k) && k !== 'now') {
      throw new OptionError(`is not a SpillStore option (${LIMIT_KEYS.join(', ')}, now)`, 'INVALID_OPTION', k);
    }
  }
  return jsonArg(limits, 'options');
}

/**
 * The bytes of a cache key: a string (its UTF-8) or a `Uint8Array`; none is
 * empty (the core refuses it, naming `key`). `INVALID_OPTION` otherwise.
 */
function keyBytes(key) {
  if (key === undefined) return new Uint8Array(0);
  if (typeof key === 'string') return encoder.encode(key);
  if (key instanceof Uint8Array) return key;
  throw new OptionError(`must be a string or a Uint8Array of at least 16 bytes, got ${describe(key)}`, 'INVALID_OPTION', 'key');
}

function text(value, what) {
  if (typeof value !== 'string') {
    throw new InputError(`must be a string, got ${describe(value)}`, 'INVALID_REQUEST', what);
  }
  return value;
}

/**
 * The in-memory spill store (inside wasm), bounded by total and per-session
 * bytes, evicting least-recently-used sessions and sweeping sessions unused
 * for `ttlSeconds`. Pass it as `options.store` to `compress`; call `free()`
 * when done.
 *
 * Options: `maxBytes` (64 MiB), `maxSessionBytes` (16 MiB), `ttlSeconds`
 * (7 days, 0 = none), `now` (a function returning the time in seconds;
 * `Date.now() / 1000` by default — the core has no clock of its own).
 */
export class SpillStore {
  #wasm;
  #now;

  constructor(options = {}) {
    if (options === null || typeof options !== 'object' || Array.isArray(options)) {
      throw new OptionError(`must be an object of SpillStore options, got ${describe(options)}`, 'INVALID_OPTION', 'options');
    }
    const { now = () => Date.now() / 1000 } = options;
    if (typeof now !== 'function') {
      throw new OptionError(`must be a function returning seconds, got ${describe(now)}`, 'INVALID_OPTION', 'now');
    }
    this.#now = now;
    this.#wasm = guarded(() => Store.withLimits(limitsJson(options)));
  }

  /** The wasm store backing this store, told the current time (internal). */
  get wasmStore() {
    if (!this.#wasm) throw new OptionError('this SpillStore was freed', 'INVALID_OPTION', 'store');
    guarded(() => this.#wasm.setNow(this.#now()));
    return this.#wasm;
  }

  /** Full text of a spilled blob (`SPILL_NOT_FOUND` when absent or in another session). */
  get(session, key) {
    return guarded(() => this.wasmStore.get(session, key));
  }

  /** Stores a blob (e.g. rehydrating from the `spills` a compress call returned); `STORE_REFUSED` when full. */
  put(session, key, value) {
    text(value, 'text');
    // Long texts cross as bytes: a Uint8Array copy beats passing a JS string.
    if (value.length > 4096) guarded(() => this.wasmStore.putBytes(session, key, encoder.encode(value)));
    else guarded(() => this.wasmStore.put(session, key, value));
  }

  /** Whether a blob exists. */
  contains(session, key) {
    return guarded(() => this.wasmStore.contains(session, key));
  }

  /** Blobs of a session: `[{ key, bytes, lines }]`. */
  list(session) {
    return JSON.parse(guarded(() => this.wasmStore.list(session)));
  }

  /** Removes a blob; returns whether it existed. */
  delete(session, key) {
    return guarded(() => this.wasmStore.delete(session, key));
  }

  /** Lines `offset+1 … offset+limit`: `{ offset, count, totalLines, totalBytes, text }`. */
  read(session, key, offset = 0, limit = 200) {
    return JSON.parse(guarded(() => this.wasmStore.read(session, key, offset, limit)));
  }

  /**
   * Lines matching `pattern` (small regex dialect, or plain text with `literal`):
   * `{ totalLines, totalMatches, skipped, returned, lines: [{ number, isMatch, text, column, lineBytes }] }`.
   * Options: `literal`, `ignoreCase`, `context` (2), `maxMatches` (50), `skip`.
   */
  grep(session, key, pattern, options = {}) {
    text(pattern, 'pattern');
    return JSON.parse(guarded(() => this.wasmStore.grep(session, key, pattern, jsonArg(options ?? {}, 'options'))));
  }

  /** Removes a whole session; returns the bytes freed. */
  evict(session) {
    return guarded(() => this.wasmStore.evict(session));
  }

  /** Removes sessions unused for `ttlSeconds` at `now`; returns how many. */
  sweep(now = this.#now()) {
    return guarded(() => this.wasmStore.sweep(now));
  }

  /** `{ totalBytes, sessions, limits }`. */
  usage() {
    return JSON.parse(guarded(() => this.wasmStore.usage()));
  }

  /** Puts back the `spills` a compress call returned (e.g. loaded from a KV store); returns how many. */
  rehydrate(spills) {
    if (!Array.isArray(spills)) {
      throw new InputError(`must be an array of { session, key, text }, got ${describe(spills)}`, 'INVALID_REQUEST', 'spills');
    }
    for (const s of spills) this.put(s.session, s.key, s.text);
    return spills.length;
  }

  /**
   * Runs a `read_spill` / `grep_spill` call the model made in `session`;
   * `args` is the call's arguments (object or JSON text). Returns
   * `{ text, isError }` to send back as the tool result.
   */
  handleToolCall(name, args, session) {
    const json = typeof args === 'string' ? args : jsonArg(args ?? {}, 'args');
    return JSON.parse(guarded(() => this.wasmStore.handleToolCall(text(name, 'name'), json, text(session, 'session'))));
  }

  /**
   * Caps one text (e.g. a tool output before it enters the history): over
   * the cap of `options` (`budget`, `session`, `spill`, …) it is kept and
   * replaced by its excerpt. Returns `{ text, spilled, pointer?, refused?, tokensBefore, tokensAfter }`.
   */
  spill(value, options = {}) {
    if (options === null || typeof options !== 'object' || Array.isArray(options)) {
      throw new OptionError(`must be an object, got ${describe(options)}`, 'INVALID_OPTION', 'options');
    }
    const { countTokens, ...settings } = options;
    return JSON.parse(guarded(() => this.wasmStore.spillText(encoder.encode(text(value, 'text')), jsonArg(settings, 'options'), countTokens)));
  }

  /**
   * The caches' new entries (rendered snapshots, token counts) since the last
   * call as a segment (text) to keep outside, e.g. in KV beside the spills;
   * on the first call, or with `{ all: true }`, everything held. `undefined` when there
   * is nothing new, or with `renderedOnly` when no new snapshot was rendered
   * (the counts then wait for the next call). The segment is sealed with an
   * HMAC-SHA256 under `key` (the host's secret: a string or `Uint8Array` of
   * at least 16 bytes; required) for `session` (default `'default'`): only
   * `importCache` with the same key and session accepts it.
   */
  exportCache(options = {}) {
    if (options === null || typeof options !== 'object' || Array.isArray(options)) {
      throw new OptionError(`must be an object { all, renderedOnly, key, session }, got ${describe(options)}`, 'INVALID_OPTION', 'options');
    }
    const { all = false, renderedOnly = false, key, session = 'default' } = options;
    const bytes = keyBytes(key);
    return guarded(() => this.wasmStore.exportCache(all, renderedOnly, bytes, text(session, 'session'))) ?? undefined;
  }

  /**
   * Adds a segment `exportCache` wrote (on a fresh isolate, say), so that
   * what it rendered and counted is not done again; outputs are the same as
   * without it. `options` are compress options (`optical.cacheBytes` bounds
   * what is kept; `session`, default `'default'`, is the session it must have
   * been written for) and `key`, the key it was sealed with (required). A
   * segment whose MAC does not verify (altered, truncated, forged, another
   * session's or another key's) is `INVALID_CACHE` naming `cache.mac`, and
   * nothing of it is used. Returns `{ snapshots, counts, stale }` (`stale`:
   * written by another TraceLite version, ignored); `INVALID_CACHE` when malformed.
   */
  importCache(segment, options = {}) {
    text(segment, 'segment');
    if (options === null || typeof options !== 'object' || Array.isArray(options)) {
      throw new OptionError(`must be an object, got ${describe(options)}`, 'INVALID_OPTION', 'options');
    }
    const { key, ...rest } = options;
    const bytes = keyBytes(key);
    // Host-only options (store, countTokens, previous) do not apply to a cache.
    return JSON.parse(guarded(() => this.wasmStore.importCache(segment, jsonArg(settingsOf(rest), 'options'), bytes)));
  }

  /** `{ snapshots, snapshotBytes, rendered, counts, countedBytes }`: what the caches hold and rendered here. */
  cacheStats() {
    return JSON.parse(guarded(() => this.wasmStore.cacheStats()));
  }

  /**
   * Empties the caches (snapshots, token counts, keys, redactions, layouts),
   * keeping the spills and the compaction state: outputs do not change, the
   * next call only does again what the caches saved.
   */
  clearCaches() {
    guarded(() => this.wasmStore.clearCaches());
  }

  /** Releases the wasm memory. */
  free() {
    this.#wasm?.free();
    this.#wasm = null;
  }

  [Symbol.dispose]() {
    this.free();
  }
}

/** Definitions of `read_spill` and `grep_spill` for `format`: `openai-chat` (default), `openai-responses`, `anthropic` or `gemini`. */
export function spillToolDefinitions(format = 'openai-chat') {
  return JSON.parse(guarded(() => wasmSpillTools(format)));
}

/**
 * Runs a `read_spill` / `grep_spill` call: `handleToolCall(name, args, { store, session })`
 * (or `session` as a string, with `store` the default one used by `compress`).
 */
export function handleToolCall(name, args, where) {
  if (where !== undefined && where !== null && typeof where !== 'string' && (typeof where !== 'object' || Array.isArray(where))) {
    throw new InputError(`must be a session name or an object { store, session }, got ${describe(where)}`, 'INVALID_ARGUMENT', 'where');
  }
  const { store, session } = typeof where === 'string' ? { session: where } : (where ?? {});
  const target = store ?? sharedStore();
  if (!(target instanceof SpillStore)) {
    throw syncStoreError(target, 'store', 'handleToolCallAsync(name, args, { store, session })');
  }
  return target.handleToolCall(name, args, session ?? 'default');
}

let shared;

/** The store `compress` uses when no `options.store` is given. */
export function sharedStore() {
  shared ??= new SpillStore();
  return shared;
}
