// A spill store over Cloudflare Durable Objects: one object per session, so
// every read of a session sees every write before it, wherever the request
// runs (Workers KV is eventually consistent across locations). The worker
// exports `TraceLiteSpillObject` and binds it; `DurableObjectSpillStore` is the
// client, with the interface of `KvSpillStore` (same keys, never-overwrite and
// verify-on-read rules). Paging and search run in the core (core/spill-reader.js).
import '#entry'; // initializes the wasm that read/grep run in
import { TraceLiteError, InputError, OptionError, StoreError, describe } from '../../core/errors.js';
import { FreshKeys, OutsideSpillStore, corrupt, facts, matchesKey, notFound, refused, verified } from '../../internal/blob-keys.js';
import { checkName } from '../../core/spill-reader.js';

/** Default time to live of a stored blob: 7 days (as `KvSpillStore`). */
export const DEFAULT_TTL_SECONDS = 7 * 24 * 3600;
/** Default most bytes one session's object holds (its blobs' UTF-8 sizes). */
export const DEFAULT_MAX_SESSION_BYTES = 64 * 1024 * 1024;
/**
 * Characters per stored chunk: a Durable Object value is at most 128 KiB
 * (KV-backed objects) and a string of UTF-16 units takes 2 bytes each.
 */
const CHUNK_CHARS = 32 * 1024;
/** Keys one `storage.get` / `storage.put` call takes. */
const BATCH_KEYS = 128;

const META = 'm/';
const chunkName = (key, i) => `c/${key}/${i}`;

function errorBody(err) {
  const known = err instanceof TraceLiteError || err?.name === 'TraceLiteError';
  return {
    status: known ? 400 : 500,
    error: { code: known ? err.code : 'STORE_FAILED', message: String(err?.message ?? err), path: known ? err.path : '' },
  };
}

function batches(keys) {
  const out = [];
  for (let i = 0; i < keys.length; i += BATCH_KEYS) out.push(keys.slice(i, i + BATCH_KEYS));
  return out;
}

/**
 * The Durable Object holding one session's spills. Export it from your worker
 * (`export { TraceLiteSpillObject } from 'tracelite/do-store'`) and bind it
 * (wrangler: `[[durable_objects.bindings]]` + a `new_sqlite_classes`
 * migration). Only `DurableObjectSpillStore` talks to it, through `fetch`.
 * A blob is a metadata record (`hash`, `bytes`, `lines`, `chunks`, `expires`)
 * and its text in chunks; an alarm deletes expired blobs.
 */
export class TraceLiteSpillObject {
  #storage;

  constructor(state) {
    this.#storage = state.storage;
  }

  async fetch(request) {
    try {
      const body = await request.json();
      const op = new URL(request.url).pathname.slice(1);
      if (!['get', 'put', 'list', 'delete'].includes(op)) {
        throw new InputError(`unknown operation ${op}`, 'INVALID_REQUEST', 'op');
      }
      await this.#checkSession(body.session);
      const now = Number.isFinite(body.now) ? body.now : Math.floor(Date.now() / 1000);
      return Response.json(await this.#op(op, body, now));
    } catch (err) {
      const { status, error } = errorBody(err);
      return Response.json({ error }, { status });
    }
  }

  #op(op, body, now) {
    switch (op) {
      case 'get':
        return this.#get(checkName('key', body.key), now);
      case 'put':
        return this.#put(body, now);
      case 'list':
        return this.#list(now);
      default:
        return this.#delete(checkName('key', body.key));
    }
  }

  /** An object serves one session: the first it sees (a misrouted call is refused). */
  async #checkSession(session) {
    checkName('session', session);
    const held = await this.#storage.get('session');
    if (held === undefined) await this.#storage.put('session', session);
    else if (held !== session) throw new InputError(`this object holds session ${held}, not ${session}`, 'INVALID_REQUEST', 'session');
  }

  async #meta(key, now) {
    const meta = await this.#storage.get(META + key);
    return meta !== undefined && meta.expires > now ? meta : undefined;
  }

  async #get(key, now) {
    const meta = await this.#meta(key, now);
    if (!meta) return { text: null };
    const names = Array.from({ length: meta.chunks }, (_, i) => chunkName(key, i));
    const parts = [];
    for (const batch of batches(names)) {
      const got = await this.#storage.get(batch);
      for (const name of batch) parts.push(got.get(name) ?? '');
    }
    return { text: parts.join('') };
  }

  async #put({ key, text, ttlSeconds, maxSessionBytes }, now) {
    checkName('key', key);
    if (typeof text !== 'string') throw new InputError(`must be a string, got ${describe(text)}`, 'INVALID_REQUEST', 'text');
    const { hash, bytes, lines } = facts(text);
    if (!matchesKey(key, hash)) throw corrupt('this session', key);
    const held = await this.#storage.get(META + key);
    const live = held !== undefined && held.expires > now;
    if (live && held.hash !== hash) throw refused(key);
    if (live && held.expires - now > ttlSeconds / 2) return { written: false, expires: held.expires };
    const expires = now + ttlSeconds;
    if (live) {
      // The same text with less than half its time left: only its expiry moves.
      await this.#storage.put(META + key, { ...held, expires });
      await this.#schedule(expires);
      return { written: true, expires };
    }
    if (held !== undefined) await this.#remove(key, held);
    const total = (await this.#storage.get('total')) ?? 0;
    if (total + bytes > maxSessionBytes) {
      throw new StoreError(
        `the session would hold ${total + bytes} bytes, more than maxSessionBytes (${maxSessionBytes})`,
        'STORE_REFUSED',
        'maxSessionBytes',
      );
    }
    const entries = { total: total + bytes };
    let chunks = 0;
    let at = 0;
    do {
      let end = Math.min(at + CHUNK_CHARS, text.length);
      // Never split a surrogate pair across chunks.
      if (end < text.length && /[\uD800-\uDBFF]/.test(text[end - 1])) end--;
      entries[chunkName(key, chunks++)] = text.slice(at, end);
      at = end;
    } while (at < text.length);
    entries[META + key] = { hash, bytes, lines, chunks, expires };
    // Puts without an await between them are written together (atomically).
    const names = Object.keys(entries);
    await Promise.all(batches(names).map((batch) => this.#storage.put(Object.fromEntries(batch.map((n) => [n, entries[n]])))));
    await this.#schedule(expires);
    return { written: true, expires };
  }

  async #list(now) {
    const metas = await this.#storage.list({ prefix: META });
    const out = [];
    for (const [name, meta] of metas) {
      if (meta.expires > now) out.push({ key: name.slice(META.length), bytes: meta.bytes, lines: meta.lines });
    }
    return { blobs: out };
  }

  async #delete(key) {
    const held = await this.#storage.get(META + key);
    if (held !== undefined) await this.#remove(key, held);
    return { deleted: held !== undefined };
  }

  async #remove(key, meta) {
    const names = [META + key, ...Array.from({ length: meta.chunks }, (_, i) => chunkName(key, i))];
    const total = (await this.#storage.get('total')) ?? 0;
    await Promise.all([
      this.#storage.put('total', Math.max(0, total - meta.bytes)),
      ...batches(names).map((batch) => this.#storage.delete(batch)),
    ]);
  }

  /** An alarm at `expires` unless one comes sooner. */
  async #schedule(expires) {
    const at = await this.#storage.getAlarm();
    if (at === null || at > expires * 1000) await this.#storage.setAlarm(expires * 1000);
  }

  /** Deletes the expired blobs, then waits for the next expiry. */
  async alarm() {
    const now = Math.floor(Date.now() / 1000);
    let next = Infinity;
    for (const [name, meta] of await this.#storage.list({ prefix: META })) {
      if (meta.expires <= now) await this.#remove(name.slice(META.length), meta);
      else next = Math.min(next, meta.expires);
    }
    if (next !== Infinity) await this.#storage.setAlarm(next * 1000);
  }
}

/**
 * A spill store over a Durable Object namespace bound to
 * `TraceLiteSpillObject`: one object per session (`idFromName(session)`), so
 * reads see every earlier write of the session at once. Same interface and
 * rules as `KvSpillStore`.
 */
export class DurableObjectSpillStore extends OutsideSpillStore {
  #ns;
  #ttl;
  #maxSessionBytes;
  #now;
  #fresh = new FreshKeys();

  /**
   * @param namespace a Durable Object namespace binding (`env.SPILL_OBJECTS`)
   * @param options `{ ttlSeconds = 7 days, maxSessionBytes = 64 MiB, now = () => Date.now() }`
   */
  constructor(namespace, { ttlSeconds = DEFAULT_TTL_SECONDS, maxSessionBytes = DEFAULT_MAX_SESSION_BYTES, now = () => Date.now() } = {}) {
    super();
    if (!namespace || typeof namespace.idFromName !== 'function' || typeof namespace.get !== 'function') {
      throw new OptionError('must be a Durable Object namespace binding', 'INVALID_OPTION', 'namespace');
    }
    if (!Number.isInteger(ttlSeconds) || ttlSeconds < 1) {
      throw new OptionError(`must be a positive integer, got ${typeof ttlSeconds === 'number' ? ttlSeconds : describe(ttlSeconds)}`, 'INVALID_OPTION', 'ttlSeconds');
    }
    if (!Number.isInteger(maxSessionBytes) || maxSessionBytes < 1) {
      throw new OptionError(`must be a positive integer, got ${typeof maxSessionBytes === 'number' ? maxSessionBytes : describe(maxSessionBytes)}`, 'INVALID_OPTION', 'maxSessionBytes');
    }
    this.#ns = namespace;
    this.#ttl = ttlSeconds;
    this.#maxSessionBytes = maxSessionBytes;
    this.#now = now;
  }

  #seconds() {
    return Math.floor(this.#now() / 1000);
  }

  async #call(session, op, args = {}) {
    checkName('session', session);
    const stub = this.#ns.get(this.#ns.idFromName(session));
    const res = await stub.fetch(`https://tracelite.spill/${op}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ ...args, session, now: this.#seconds() }),
    });
    const body = await res.json();
    // An error the object raised (its codes are the literals above) is raised again here.
    const err = body?.error;
    if (err) throw TraceLiteError.from(err);
    return body;
  }

  /**
   * Full text of a blob; throws `SPILL_NOT_FOUND` when it is missing or
   * expired, `SPILL_CORRUPT` when a content key's text does not hash to it.
   */
  async get(session, key) {
    checkName('key', key);
    const { text } = await this.#call(session, 'get', { key });
    if (typeof text !== 'string') throw notFound(session, key);
    return verified(session, key, text);
  }

  /**
   * Stores a blob for `ttlSeconds` (refreshed when less than half its time is
   * left); resolves false when it was already stored. Never replaces another
   * text (`STORE_REFUSED`); a content key whose text does not hash to it is
   * `SPILL_CORRUPT`; over `maxSessionBytes` is `STORE_REFUSED`.
   */
  async put(session, key, text) {
    if (typeof text !== 'string') {
      throw new InputError(`must be a string, got ${describe(text)}`, 'INVALID_REQUEST', 'text');
    }
    checkName('session', session);
    checkName('key', key);
    const { hash } = facts(text);
    if (!matchesKey(key, hash)) throw corrupt(session, key);
    const name = `${session}/${key}`;
    if (this.#fresh.has(name, hash, this.#seconds(), this.#ttl / 2)) return false;
    const { written, expires } = await this.#call(session, 'put', { key, text, ttlSeconds: this.#ttl, maxSessionBytes: this.#maxSessionBytes });
    this.#fresh.remember(name, expires, hash);
    return written;
  }


  /** Blobs of a session: `[{ key, bytes, lines }]`. */
  async list(session) {
    return (await this.#call(session, 'list')).blobs;
  }

  /** Removes a blob. */
  async delete(session, key) {
    checkName('key', key);
    this.#fresh.forget(`${session}/${key}`);
    await this.#call(session, 'delete', { key });
  }
}
