// Internal: `compress` with any spill store. The wasm SpillStore is used
// directly; any other store (KV, yours) gets the call's new blobs (the `spills`
// compress returns) copied into it, since compress itself is synchronous.
import { SpillStore, TraceLiteError, compress } from '#entry';
import { fnv1a } from '../wasm/tracelite.js';

/** Default number of conversations `SessionStores` keeps in memory. */
export const DEFAULT_MAX_SESSIONS = 64;

/**
 * In-memory spill stores, one wasm `SpillStore` per session (conversation), so
 * each keeps its own spills, caches and previous request; the least recently
 * used session beyond `maxSessions` is freed. Has the `get`/`put`/`list`
 * store interface, routed by session.
 */
export class SessionStores {
  #max;
  #entries = new Map();

  constructor({ maxSessions = DEFAULT_MAX_SESSIONS } = {}) {
    if (!Number.isInteger(maxSessions) || maxSessions < 1) {
      throw new TraceLiteError('maxSessions must be a positive integer', 'INVALID_OPTION', 'maxSessions');
    }
    this.#max = maxSessions;
  }

  /** The entry `{ store, previous }` of a session, created on first use (internal). */
  entry(session) {
    let e = this.#entries.get(session);
    if (e) {
      this.#entries.delete(session);
    } else {
      e = { store: new SpillStore(), previous: undefined };
    }
    this.#entries.set(session, e);
    while (this.#entries.size > this.#max) {
      const [oldest, old] = this.#entries.entries().next().value;
      this.#entries.delete(oldest);
      this.#retire(old);
    }
    return e;
  }

  /** Frees an entry's store now, or when the last call using it ends (`hold`/`release`). */
  #retire(e) {
    if (e.users) e.retired = true;
    else e.store.free();
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

  /** The wasm store holding a session's blobs, if it is held (internal). */
  wasmStoreFor(session) {
    return this.#entries.get(session)?.store.wasmStore;
  }

  get(session, key) {
    const e = this.#entries.get(session);
    if (!e) throw new TraceLiteError(`no spill ${session}/${key}`, 'SPILL_NOT_FOUND', 'key');
    return e.store.get(session, key);
  }

  put(session, key, text) {
    this.entry(session).store.put(session, key, text);
  }

  list(session) {
    return this.#entries.get(session)?.store.list(session) ?? [];
  }

  delete(session, key) {
    return this.#entries.get(session)?.store.delete(session, key) ?? false;
  }

  /** Frees every store (those in use when their call ends). */
  free() {
    for (const e of this.#entries.values()) this.#retire(e);
    this.#entries.clear();
  }
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
 * snapshots, compaction state) and the previous request (prefix reuse); the
 * spilled texts themselves are dropped from it once `store` has them, so the
 * cache holds caches, not conversations. Without `cache`, every call starts
 * cold. `writes` (`{ maxWrites, batch }`) bounds the copy to `store`: see
 * `storeSpills`; `out.written` says how many blobs were written.
 */
export async function compressInto(request, options, store, cache, writes = {}) {
  if (store instanceof SessionStores) {
    const e = store.entry(options.session);
    const out = compress(request, { ...options, store: e.store, previous: options.previous ?? e.previous });
    e.previous = out.request;
    return out;
  }
  if (store === undefined || isWasmStore(store)) {
    return compress(request, store === undefined ? options : { ...options, store });
  }
  const entry = cache?.entry(options.session);
  if (entry) cache.hold(entry);
  try {
    const pending = compressAndStore(request, options, store, cache, entry, writes);
    request = undefined; // compressed: not kept alive while the spills are stored
    return await pending;
  } finally {
    if (entry) cache.release(entry);
  }
}

async function compressAndStore(request, options, store, cache, entry, writes) {
  const scratch = entry?.store ?? new SpillStore();
  let out;
  try {
    out = compress(request, { ...options, store: scratch, previous: options.previous ?? entry?.previous });
    if (entry) entry.previous = out.request;
  } finally {
    if (!entry) scratch.free();
  }
  // Not needed while the spills are stored: a proxy may have many requests here at once.
  request = undefined;
  const spills = out.spills ?? [];
  try {
    out.written = await storeSpills(store, spills, writes);
  } catch (err) {
    // The session's caches (a compaction's summary, its state) now cite blobs
    // the store does not have: the next call must not build on them.
    if (entry) cache.drop(options.session);
    if (err?.code === 'STORE_WRITE_LIMIT') throw err;
    // The placeholders of `out` would point at text that is not there.
    const failed = new TraceLiteError(`the spill store failed: ${err?.message ?? err}`, 'STORE_FAILED', 'store');
    failed.cause = err;
    throw failed;
  }
  // `store` has them: the cache keeps no texts.
  if (entry) for (const s of spills) scratch.delete(s.session, s.key);
  return out;
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
      throw new TraceLiteError(
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
