// Internal: `compress` with any spill store. The wasm SpillStore is used
// directly; any other store (KV, yours) gets the call's new blobs (the `spills`
// compress returns) copied into it, since compress itself is synchronous.
import { SpillStore, TraceLiteError, compress } from '#entry';

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
      old.store.free();
    }
    return e;
  }

  /** Sessions held, least recently used first. */
  sessions() {
    return [...this.#entries.keys()];
  }

  /** The wasm session holding a session's blobs, if it is held (internal). */
  wasmSessionFor(session) {
    return this.#entries.get(session)?.store.wasmSession;
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

  /** Frees every store. */
  free() {
    for (const e of this.#entries.values()) e.store.free();
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
 * cold.
 */
export async function compressInto(request, options, store, cache) {
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
    if (typeof store.persist === 'function') {
      await store.persist(spills);
    } else {
      await Promise.all(spills.map((s) => store.put(s.session, s.key, s.text)));
    }
  } catch (err) {
    // The placeholders of `out` would point at text that is not there.
    const failed = new TraceLiteError(`the spill store failed: ${err?.message ?? err}`, 'STORE_FAILED', 'store');
    failed.cause = err;
    throw failed;
  } finally {
    // `store` has them (or the call failed): the cache keeps no texts.
    if (entry) for (const s of spills) scratch.delete(s.session, s.key);
  }
  return out;
}

/**
 * 64-bit FNV-1a of a string, as 16 hex digits. Only names sessions; not the
 * core's spill keys (SHA-256, src/spill/key.rs) and not a secret.
 */
export function fnv1a(text) {
  let hash = 0xcbf29ce484222325n;
  const bytes = new TextEncoder().encode(text);
  for (const b of bytes) {
    hash ^= BigInt(b);
    hash = (hash * 0x100000001b3n) & 0xffffffffffffffffn;
  }
  return hash.toString(16).padStart(16, '0');
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
