// `compress` with any spill store. The wasm SpillStore is used directly; a
// store outside wasm (files, KV, Durable Objects, Redis, yours) gets the
// call's new blobs (the `spills` compress returns) copied into it before the
// call resolves, since compress itself is synchronous, while per-session
// stores in memory (`SessionStores`) keep the caches and compaction state.
// Used by `compressAsync`, the adapters and the proxy.
import { fnv1a } from '../wasm/tracelite.js';
import { OptionError, LimitError, StoreError } from './errors.js';
import { SpillStore } from './spill.js';
import { compress } from './compress.js';
import { MEMORY_DEFAULTS, SESSION_BYTES_PER_REQUEST_BYTE, wasmHeapBytes } from './memory.js';
import { facts, isContentKey } from './blob.js';

/** Default number of conversations `SessionStores` keeps in memory. */
export const DEFAULT_MAX_SESSIONS = 64;
/**
 * Default bytes (UTF-16 code units) of spilled texts that the caches of a
 * `SessionStores` keep, over all sessions, once an outside store has them.
 */
export const DEFAULT_MAX_HELD_BYTES = 32 << 20;
/** Of those, what one session keeps at most (its oldest texts go first). */
export const MAX_HELD_SESSION_BYTES = 4 << 20;
/**
 * A text kept that long is handed to the outside store again on the
 * session's next call (which refreshes its expiry there, as every call did
 * before texts were kept).
 */
export const REASSERT_MS = 60 * 60 * 1000;
/** Names of sessions evicted from memory remembered, so that their spills read as expired. */
export const REMEMBERED_EXPIRED_SESSIONS = 4096;

/**
 * In-memory spill stores, one wasm `SpillStore` per session (conversation), so
 * each keeps its own spills, caches and previous request. The least recently
 * used sessions are freed beyond `maxSessions`, and beyond `maxMemoryBytes`
 * of what the sessions keep in all (each weighs the wasm heap bytes its calls
 * kept, measured by the allocator around every call that writes its store:
 * spills, caches, compaction state, everything; the session of the call is
 * kept). A spill of a freed session reads as expired (`SPILL_NOT_FOUND`,
 * saying so). Has the `get`/`put`/`list` store interface, routed by session.
 */
export class SessionStores {
  #max;
  #maxHeld;
  #maxMemory;
  #held = 0;
  #memory = 0;
  #entries = new Map();
  /** Sessions freed to stay within the bounds, oldest first. */
  #expired = new Set();

  constructor({
    maxSessions = DEFAULT_MAX_SESSIONS,
    maxHeldBytes = DEFAULT_MAX_HELD_BYTES,
    maxMemoryBytes = MEMORY_DEFAULTS.maxMemoryBytes,
  } = {}) {
    if (!Number.isInteger(maxSessions) || maxSessions < 1) {
      throw new OptionError('must be a positive integer', 'INVALID_OPTION', 'maxSessions');
    }
    if (!Number.isInteger(maxHeldBytes) || maxHeldBytes < 0) {
      throw new OptionError('must be a non-negative integer', 'INVALID_OPTION', 'maxHeldBytes');
    }
    if (!Number.isInteger(maxMemoryBytes) || maxMemoryBytes < 1) {
      throw new OptionError('must be a positive integer', 'INVALID_OPTION', 'maxMemoryBytes');
    }
    this.#max = maxSessions;
    this.#maxHeld = maxHeldBytes;
    this.#maxMemory = maxMemoryBytes;
  }

  /** The entry `{ store, previous }` of a session, created on first use (internal). */
  entry(session) {
    let e = this.#entries.get(session);
    if (e) {
      this.#entries.delete(session);
    } else {
      e = { store: undefined, previous: undefined, held: new Map(), heldBytes: 0, bytes: 0 };
      e.store = this.measure(e, () => new SpillStore());
    }
    this.#entries.set(session, e);
    while (this.#entries.size > this.#max) {
      const [oldest, old] = this.#entries.entries().next().value;
      this.#expire(oldest, old);
    }
    return e;
  }

  /**
   * Runs `call`, a synchronous call into the store of entry `e` (internal),
   * and adds to the entry the wasm heap bytes it kept (what the allocator
   * holds after it minus before: the call's own peak is freed by then).
   */
  measure(e, call) {
    const before = wasmHeapBytes();
    try {
      return call();
    } finally {
      e.bytes += wasmHeapBytes() - before;
    }
  }

  /**
   * Weighs a session after calls into its store (internal): what they kept
   * (`measure`). Frees the least recently used other sessions while all
   * weigh more than `maxMemoryBytes`, then, if the session alone still does,
   * its caches (`#fit`).
   */
  weigh(e, session) {
    if (e.retired || this.#entries.get(session) !== e) return;
    this.#reweigh(e);
    this.#fit(e, 0);
  }

  #reweigh(e) {
    const weight = Math.max(0, e.bytes);
    this.#memory += weight - (e.weight ?? 0);
    e.weight = weight;
  }

  /**
   * Before a call of `requestBytes` into entry `e` (internal): frees the
   * least recently used other sessions until what all keep, plus what the
   * call may keep (`SESSION_BYTES_PER_REQUEST_BYTE` × `requestBytes`), is
   * within `maxMemoryBytes`. So the sessions' bytes stay within it during the
   * call too, not only after: the call's own peak is what comes on top.
   */
  reserve(e, requestBytes) {
    if (e.retired) return;
    this.#fit(e, SESSION_BYTES_PER_REQUEST_BYTE * requestBytes);
  }

  /**
   * Frees the least recently used sessions other than `e` while all weigh,
   * with `extra`, more than `maxMemoryBytes`; if `e` alone still does, its
   * caches (its spills and compaction state stay: outputs do not change).
   */
  #fit(e, extra) {
    for (const [name, other] of this.#entries) {
      if (this.#memory + extra <= this.#maxMemory) break;
      if (other !== e) this.#expire(name, other);
    }
    if (this.#memory + extra > this.#maxMemory && e.weight > 0) {
      this.measure(e, () => e.store.clearCaches());
      this.#reweigh(e);
    }
  }

  /** What the sessions held weigh in all (see `weigh`). */
  memoryBytes() {
    return this.#memory;
  }

  /** Frees a session to stay within the bounds; its spills then read as expired. */
  #expire(session, e) {
    this.#entries.delete(session);
    this.#retire(e);
    this.#expired.delete(session);
    this.#expired.add(session);
    if (this.#expired.size > REMEMBERED_EXPIRED_SESSIONS) this.#expired.delete(this.#expired.values().next().value);
  }

  /** Frees an entry's store now, or when the last call using it ends (`hold`/`release`). */
  #retire(e) {
    this.#memory -= e.weight ?? 0;
    e.weight = 0;
    this.#held -= e.heldBytes ?? 0;
    e.heldBytes = 0;
    e.held?.clear();
    if (e.users) e.retired = true;
    else e.store.free();
  }

  /**
   * Keeps in a session's in-wasm store the texts of `spills` an outside
   * store now has (internal): the next call finds them there, so it neither
   * hashes them again nor hands them to the outside store again (a call costs
   * what it adds, not the history). Within `MAX_HELD_SESSION_BYTES` per
   * session and `maxHeldBytes` in all; texts beyond are dropped (the least
   * recently used session's first) and handed over again when cited.
   */
  keepHeld(e, session, spills, now = Date.now()) {
    // Evicted while its call stored the spills: its store is going, so
    // nothing is kept (counting it would inflate the held bytes for good).
    if (e.retired || this.#entries.get(session) !== e) return;
    for (const s of spills) {
      if (s.session !== session || e.held.has(s.key)) continue;
      e.held.set(s.key, { bytes: s.text.length, at: now });
      e.heldBytes += s.text.length;
      this.#held += s.text.length;
    }
    for (const [key] of e.held) {
      if (e.heldBytes <= MAX_HELD_SESSION_BYTES) break;
      this.#drop(e, session, key);
    }
    for (const [name, other] of this.#entries) {
      if (this.#held <= this.#maxHeld) break;
      for (const [key] of other.held) this.#drop(other, name, key);
    }
  }

  /** Drops the kept texts of a session handed to the outside store over `REASSERT_MS` ago (internal). */
  reassert(e, session, now = Date.now()) {
    for (const [key, h] of e.held) {
      if (now - h.at > REASSERT_MS) this.#drop(e, session, key);
    }
  }

  /** Bytes of spilled texts kept (UTF-16 code units), over all sessions. */
  heldBytes() {
    return this.#held;
  }

  #drop(e, session, key) {
    const h = e.held.get(key);
    if (!h) return;
    e.held.delete(key);
    e.heldBytes -= h.bytes;
    this.#held -= h.bytes;
    this.measure(e, () => e.store.delete(session, key));
  }

  /** Marks an entry in use across an await (internal): it is not freed until `release`. */
  hold(e) {
    e.users = (e.users ?? 0) + 1;
  }

  /** Ends a `hold` (internal). */
  release(e) {
    e.users--;
    if (e.users === 0 && e.retired) e.store.free();
  }

  /**
   * Forgets a session (its store, caches and previous request), so that its
   * next call starts cold (internal).
   */
  drop(session) {
    const e = this.#entries.get(session);
    if (!e) return;
    this.#entries.delete(session);
    this.#retire(e);
  }

  /** Sessions held, least recently used first. */
  sessions() {
    return [...this.#entries.keys()];
  }

  /**
   * The wasm store holding a session's blobs, if it is held (internal); with
   * `key`, only if it holds that blob or the session was never freed (so that
   * `get` says an expired spill expired).
   */
  wasmStoreFor(session, key) {
    const e = this.#entries.get(session);
    if (!e || (key !== undefined && this.#expired.has(session) && !e.store.contains(session, key))) return undefined;
    return e.store.wasmStore;
  }

  /**
   * Runs `read(wasmStore)` on the wasm store holding a session's blob (see
   * `wasmStoreFor`) and weighs what it kept (a blob's line index, built by
   * its first read or search): `{ value }`, or `undefined` when that store
   * does not hold it (internal).
   */
  readHeld(session, key, read) {
    const wasm = this.wasmStoreFor(session, key);
    if (!wasm) return undefined;
    const e = this.#entries.get(session);
    const value = this.measure(e, () => read(wasm));
    this.weigh(e, session);
    return { value };
  }

  get(session, key) {
    const e = this.#entries.get(session);
    try {
      if (!e) throw new StoreError(`no spill ${session}/${key}`, 'SPILL_NOT_FOUND', 'key');
      return e.store.get(session, key);
    } catch (err) {
      if (err?.code !== 'SPILL_NOT_FOUND' || !this.#expired.has(session)) throw err;
      throw new StoreError(
        `spill ${session}/${key} expired: its session was freed to keep the in-memory sessions within maxSessions and maxMemoryBytes`,
        'SPILL_NOT_FOUND',
        'key',
      );
    }
  }

  put(session, key, text) {
    const e = this.entry(session);
    this.measure(e, () => e.store.put(session, key, text));
    this.weigh(e, session);
  }

  list(session) {
    return this.#entries.get(session)?.store.list(session) ?? [];
  }

  delete(session, key) {
    const e = this.#entries.get(session);
    if (!e) return false;
    const deleted = this.measure(e, () => e.store.delete(session, key));
    this.weigh(e, session);
    return deleted;
  }

  /** Frees every store (those in use when their call ends). */
  free() {
    for (const e of this.#entries.values()) this.#retire(e);
    this.#entries.clear();
  }
}

const sessionCaches = new WeakMap();

/**
 * The per-session in-memory stores `compressAsync` keeps beside an outside
 * `store` (one `SessionStores` per store, created on first use with the
 * defaults): each session's caches, compaction state and previous request
 * live there between turns, its spills in `store`.
 */
export function sessionCachesOf(store) {
  let caches = sessionCaches.get(store);
  if (!caches) {
    caches = new SessionStores();
    sessionCaches.set(store, caches);
  }
  return caches;
}

/** Bytes of a request given as JSON text (its UTF-16 length), else 0 (an object: not known before it is read). */
function requestBytes(request) {
  return typeof request === 'string' ? request.length : 0;
}

/** Whether `store` is the in-wasm store `compress` can write to directly. */
export function isWasmStore(store) {
  return store instanceof SpillStore;
}

/**
 * Compresses `request` and makes sure every blob it spilled is readable from
 * `store` before returning. `options` are compress options without `store`.
 *
 * With a store outside wasm (KV, yours), `cache` (a `SessionStores`) keeps
 * one in-wasm store per session between calls for its caches (rendered
 * snapshots, compaction state) and the previous request (prefix reuse); of
 * the spilled texts `store` now has, it keeps only what its byte budget allows
 * (`SessionStores.keepHeld`), so the cache holds caches, not conversations,
 * and a later call neither hashes nor writes again the texts it kept. A call
 * hands over only what it adds (and a text kept over `REASSERT_MS`, whose
 * expiry in `store` that refreshes). Without `cache`, every call starts
 * cold. `writes` (`{ maxWrites, batch, persistCache, cacheKey }`) bounds the copy to
 * `store`: see `storeSpills`; `out.written` says how many blobs were written.
 * With `cache`, `persistCache` (default) and `cacheKey` (the host's secret:
 * segments are sealed with it, and one that does not verify is skipped), the
 * caches also go to `store` (`loadCache`): a segment after the spills, within
 * `maxWrites`, or left in `out.cacheSegment` for the caller with `deferCache`
 * (`saveCache`). Without `cacheKey` nothing is persisted.
 * `out.cache` is `{ rendered, loaded? }`: snapshots this call rendered, and
 * what the session's first call here imported.
 */
export async function compressInto(request, options, store, cache, writes = {}) {
  options = withPointer(options, store);
  if (store instanceof SessionStores) {
    const e = store.entry(options.session);
    store.reserve(e, requestBytes(request));
    try {
      const out = store.measure(e, () => compress(request, { ...options, store: e.store, previous: options.previous ?? e.previous }));
      e.previous = out.request;
      return out;
    } finally {
      store.weigh(e, options.session);
    }
  }
  if (store === undefined || isWasmStore(store)) {
    return compress(request, store === undefined ? options : { ...options, store });
  }
  const entry = cache?.entry(options.session);
  if (entry) cache.hold(entry);
  try {
    // A session new to this isolate starts from what earlier isolates kept.
    // Only a store that can list a session's blobs can find its segments
    // again. `loaded` is reported by the call that loaded them only.
    let loaded;
    if (entry && writes.persistCache !== false && writes.cacheKey !== undefined && typeof store.list === 'function') {
      if (entry.loaded === undefined) {
        entry.loaded = loadCache(store, options.session, entry.store, { ...options, key: writes.cacheKey }, (call) => cache.measure(entry, call));
        loaded = await entry.loaded;
      } else {
        await entry.loaded;
      }
    }
    const pending = compressAndStore(request, options, store, cache, entry, writes, loaded);
    request = undefined; // compressed: not kept alive while the spills are stored
    return await pending;
  } finally {
    if (entry) cache.release(entry);
  }
}

/**
 * Options with the host option `pointer` read: `'spill'` (default) leaves
 * `spill://` pointers; `'path'` makes pointers the files of a store that
 * keeps its blobs as files (a `FileStore`: its `root` becomes
 * `spill.pointerRoot`). `INVALID_OPTION` naming `pointer` otherwise.
 */
export function withPointer(options, store) {
  const { pointer, ...rest } = options;
  if (pointer === undefined || pointer === 'spill') return rest;
  if (pointer !== 'path') {
    throw new OptionError("must be 'spill' or 'path'", 'INVALID_OPTION', 'pointer');
  }
  if (typeof store?.root !== 'string' || typeof store?.pathOf !== 'function') {
    throw new OptionError("'path' needs a store that keeps files (FileStore)", 'INVALID_OPTION', 'pointer');
  }
  return { ...rest, spill: { ...rest.spill, pointerRoot: store.root } };
}

async function compressAndStore(request, options, store, cache, entry, writes, loaded) {
  const scratch = entry?.store ?? new SpillStore();
  if (entry) cache.reassert(entry, options.session);
  let out;
  try {
    if (entry) cache.reserve(entry, requestBytes(request));
    const rendered = entry ? scratch.cacheStats().rendered : 0;
    const call = () => compress(request, { ...options, store: scratch, previous: options.previous ?? entry?.previous });
    out = entry ? cache.measure(entry, call) : call();
    if (entry) {
      entry.previous = out.request;
      out.cache = { rendered: scratch.cacheStats().rendered - rendered, ...(loaded ? { loaded } : {}) };
    }
  } finally {
    if (!entry) scratch.free();
  }
  // Not needed while the spills are stored: a proxy may have many requests here at once.
  request = undefined;
  const spills = out.spills ?? [];
  // What this call rendered and counted, for the next isolate (taken now:
  // another call of the session may run while the spills are stored).
  // With the built-in estimator counts alone are cheap to make again: a
  // segment is written when a snapshot was rendered (the counts ride along).
  const segment = entry && entry.loaded
    ? cache.measure(entry, () => scratch.exportCache({ renderedOnly: options.countTokens === undefined, key: writes.cacheKey, session: options.session }))
    : undefined;
  if (entry) cache.weigh(entry, options.session);
  try {
    out.written = await storeSpills(store, spills, writes);
  } catch (err) {
    // The session's caches (a compaction's summary, its state) now cite blobs
    // the store does not have: the next call must not build on them.
    if (entry) cache.drop(options.session);
    if (err?.code === 'STORE_WRITE_LIMIT') throw err;
    // The placeholders of `out` would point at text that is not there.
    const failed = new StoreError(`the spill store failed: ${err?.message ?? err}`, 'STORE_FAILED', 'store');
    failed.cause = err;
    throw failed;
  }
  // `store` has them: the cache keeps what its byte budget allows.
  if (entry) {
    cache.keepHeld(entry, options.session, spills);
    cache.weigh(entry, options.session);
  }
  if (segment !== undefined) {
    if (writes.deferCache) {
      out.cacheSegment = segment;
    } else if (out.written < (writes.maxWrites ?? Infinity)) {
      // After the spills (a request never has more than `batch` puts in
      // flight) and within the request's writes.
      if (await saveCache(store, options.session, segment)) out.written++;
    }
  }
  return out;
}

/** Key kind of a cache segment in a session's store: `cache-<SHA-256 of its text>`. */
export const CACHE_SEGMENT_KIND = 'cache';
/** Segments a session keeps before a load merges them into one. */
export const MAX_CACHE_SEGMENTS = 16;
/** Most segments one load reads (the rest are dropped when they are merged). */
export const MAX_LOADED_SEGMENTS = 64;

/** Whether a session's blob is a cache segment (not a spill). */
export function isCacheSegment(key) {
  return typeof key === 'string' && key.startsWith(`${CACHE_SEGMENT_KIND}-`) && isContentKey(key);
}

/**
 * Imports into `target` (the session's wasm store in this isolate) the cache
 * segments earlier isolates kept in `store` for `session` (rendered
 * snapshots, token counts), so that a first request here renders nothing
 * they rendered (`store` must have `list`). `options` are compress options
 * and `key`, the host's secret the segments are sealed with: a segment that
 * fails to load, or whose MAC does not verify (altered, forged, another
 * session's), is skipped: outputs never depend on the cache. Past
 * `MAX_CACHE_SEGMENTS` segments they are merged into one (the first
 * `MAX_LOADED_SEGMENTS` read, all deleted when the store can). Returns
 * `{ segments, snapshots, counts }`. `measure` runs each call into `target`
 * (`SessionStores.measure`: the session is weighed by what they keep).
 */
export async function loadCache(store, session, target, options = {}, measure = (call) => call()) {
  const loaded = { segments: 0, snapshots: 0, counts: 0 };
  let keys = [];
  try {
    keys = (await store.list(session)).map((b) => b.key).filter(isCacheSegment).sort();
  } catch {
    keys = [];
  }
  const reading = keys.slice(0, MAX_LOADED_SEGMENTS);
  for (let i = 0; i < reading.length; i += STORE_BATCH) {
    const texts = await Promise.all(reading.slice(i, i + STORE_BATCH).map((k) => Promise.resolve().then(() => store.get(session, k)).catch(() => undefined)));
    for (const text of texts) {
      if (typeof text !== 'string') continue;
      try {
        const r = measure(() => target.importCache(text, { ...options, session }));
        loaded.segments++;
        loaded.snapshots += r.snapshots;
        loaded.counts += r.counts;
      } catch {
        // Malformed or not ours: skipped (a cache only saves work).
      }
    }
  }
  // From here on, exportCache gives only what this isolate adds.
  const merged = measure(() => target.exportCache({ all: true, key: options.key, session }));
  if (keys.length > MAX_CACHE_SEGMENTS && merged !== undefined) {
    const key = await saveCache(store, session, merged);
    if (key !== undefined && typeof store.delete === 'function') {
      await Promise.all(keys.filter((k) => k !== key).map((k) => Promise.resolve().then(() => store.delete(session, k)).catch(() => {})));
    }
  }
  return loaded;
}

/**
 * Stores a cache segment (`out.cacheSegment` of a `compressInto` call with
 * `deferCache`) under its content key; resolves to the key, or `undefined`
 * when the store refused or failed (the cache is only lost).
 */
export async function saveCache(store, session, segment) {
  const key = `${CACHE_SEGMENT_KIND}-${facts(segment).hash}`;
  try {
    await store.put(session, key, segment);
    return key;
  } catch {
    return undefined;
  }
}

/** Puts in flight at once when a call's spills are copied to an outside store. */
export const STORE_BATCH = 16;

/**
 * Copies `spills` to `store`, `batch` puts at a time (a request never has more
 * store calls in flight than that), stopping with `STORE_WRITE_LIMIT` before a
 * write beyond `maxWrites`. A put resolving to `false` (the store already had
 * the blob: `KvSpillStore` skips fresh keys) is not a write. Returns the writes.
 */
export async function storeSpills(store, spills, { maxWrites = Infinity, batch = STORE_BATCH } = {}) {
  let written = 0;
  for (let i = 0; i < spills.length;) {
    if (written >= maxWrites) {
      throw new LimitError(
        `the request would write more than ${maxWrites} spills to the store (${spills.length} blobs, ${i} stored)`,
        'STORE_WRITE_LIMIT',
        'maxStoreWrites',
      );
    }
    const n = Math.min(batch, maxWrites - written, spills.length - i);
    const done = await Promise.all(spills.slice(i, i + n).map((s) => store.put(s.session, s.key, s.text)));
    written += done.filter((r) => r !== false).length;
    i += n;
  }
  return written;
}

/**
 * A stable session name for a conversation that did not name one: a hash of
 * its opening (the messages up to and including the first user message), which
 * stays the same on every later turn.
 */
export function sessionFromMessages(messages) {
  const opening = [];
  for (const m of Array.isArray(messages) ? messages : []) {
    opening.push(m);
    if (m && m.role === 'user') break;
  }
  return `conv-${fnv1a(JSON.stringify(opening))}`;
}
