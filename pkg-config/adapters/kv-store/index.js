// A spill store over the Workers KV API, so spills survive across requests and
// isolates. Works with any object that has KV's `get`/`put`/`delete`/`list`
// (Cloudflare KV, Miniflare's KV, a Map-backed fake in tests). Paging and search
// run in the core (see core/spill-reader.js).
import '#entry'; // initializes the wasm that read/grep run in
import { InputError, OptionError, describe } from '../../core/errors.js';
import { FreshKeys, OutsideSpillStore, corrupt, facts, matchesKey, notFound, refused, verified } from '../../internal/blob-keys.js';
import { checkName } from '../../core/spill-reader.js';

/** Default time to live of a stored blob: 7 days (OpenCode keeps spills as long). */
export const DEFAULT_TTL_SECONDS = 7 * 24 * 3600;
/** KV refuses an `expirationTtl` below 60 seconds. */
const MIN_TTL_SECONDS = 60;
/**
 * Keys one store remembers as fresh (so it does not read or write them again).
 * An isolate lives for many requests: beyond this the oldest are forgotten
 * (costing one KV read when they come back), so memory stays bounded.
 */
const MAX_KNOWN_KEYS = 10000;

/**
 * A spill store backed by a KV namespace. Blobs are stored under
 * `<prefix><session>/<key>` with `expirationTtl`. Keys are content hashes, so a
 * blob already stored with enough time left is not written again (KV limits
 * writes per key and per day).
 */
export class KvSpillStore extends OutsideSpillStore {
  #kv;
  #ttl;
  #prefix;
  #now;
  /** Keys this instance wrote or saw fresh, with their expiry (epoch seconds) and text hash. */
  #fresh = new FreshKeys(MAX_KNOWN_KEYS);
  /** Puts in flight, by KV name: `{ text, done }`. */
  #inflight = new Map();

  /**
   * @param kv a KV namespace binding (`env.SPILLS`)
   * @param options `{ ttlSeconds = 7 days, prefix = 'tracelite/', now = () => Date.now() }`
   */
  constructor(kv, { ttlSeconds = DEFAULT_TTL_SECONDS, prefix = 'tracelite/', now = () => Date.now() } = {}) {
    super();
    if (!kv || typeof kv.get !== 'function' || typeof kv.put !== 'function') {
      throw new OptionError('must be a KV namespace (an object with get and put)', 'INVALID_OPTION', 'kv');
    }
    if (!Number.isInteger(ttlSeconds) || ttlSeconds < MIN_TTL_SECONDS) {
      throw new OptionError(`must be an integer ≥ ${MIN_TTL_SECONDS}, got ${typeof ttlSeconds === 'number' ? ttlSeconds : describe(ttlSeconds)}`, 'INVALID_OPTION', 'ttlSeconds');
    }
    if (typeof prefix !== 'string') {
      throw new OptionError(`must be a string, got ${describe(prefix)}`, 'INVALID_OPTION', 'prefix');
    }
    this.#kv = kv;
    this.#ttl = ttlSeconds;
    this.#prefix = prefix;
    this.#now = now;
  }

  #name(session, key) {
    return `${this.#prefix}${checkName('session', session)}/${checkName('key', key)}`;
  }

  #seconds() {
    return Math.floor(this.#now() / 1000);
  }

  /**
   * Full text of a blob; throws `SPILL_NOT_FOUND` when it is missing or
   * expired, `SPILL_CORRUPT` when a content key's text does not hash to it
   * (changed in KV behind the store's back).
   */
  async get(session, key) {
    const text = await this.#kv.get(this.#name(session, key), { type: 'text' });
    if (text === null || text === undefined) throw notFound(session, key);
    return verified(session, key, text);
  }

  /**
   * Stores a blob for `ttlSeconds`, refreshing it when less than half its time
   * is left. Concurrent puts of the same blob (requests of one conversation in
   * flight at once) share one KV write: KV allows one write per key per second.
   * Never replaces another text: a different text under a held key is
   * `STORE_REFUSED`, and a content key whose text does not hash to it is
   * `SPILL_CORRUPT` (as the core's stores).
   */
  async put(session, key, text) {
    if (typeof text !== 'string') {
      throw new InputError(`must be a string, got ${describe(text)}`, 'INVALID_REQUEST', 'text');
    }
    const name = this.#name(session, key);
    const blob = facts(text);
    const hash = blob.hash;
    if (!matchesKey(key, hash)) throw corrupt(session, key);
    const inflight = this.#inflight.get(name);
    if (inflight?.text === text) return inflight.done.then(() => false);
    // A different text under the same name waits for the write before it.
    const done = (inflight ? inflight.done.catch(() => {}) : Promise.resolve()).then(() => this.#write(name, text, blob));
    const entry = { text, done };
    this.#inflight.set(name, entry);
    const settle = () => {
      if (this.#inflight.get(name) === entry) this.#inflight.delete(name);
    };
    done.then(settle, settle);
    return done;
  }

  async #write(name, text, { bytes, lines, hash }) {
    const now = this.#seconds();
    if (this.#fresh.has(name, hash, now, this.#ttl / 2)) return false;
    // What KV holds decides: another text under the name is never replaced.
    const { value, metadata } = typeof this.#kv.getWithMetadata === 'function'
      ? await this.#kv.getWithMetadata(name, { type: 'text' })
      : { value: await this.#kv.get(name, { type: 'text' }), metadata: undefined };
    if (value !== null && value !== undefined && value !== text) {
      throw refused(name);
    }
    const held = metadata?.expires;
    if (value === text && typeof held === 'number' && held - now > this.#ttl / 2) {
      this.#fresh.remember(name, held, hash);
      return false;
    }
    const expires = now + this.#ttl;
    await this.#kv.put(name, text, {
      expirationTtl: this.#ttl,
      metadata: { expires, bytes, lines },
    });
    this.#fresh.remember(name, expires, hash);
    return true;
  }


  /** Blobs of a session: `[{ key, bytes, lines }]` (from KV metadata). */
  async list(session) {
    if (typeof this.#kv.list !== 'function') return [];
    const prefix = `${this.#prefix}${checkName('session', session)}/`;
    const out = [];
    let cursor;
    do {
      const page = await this.#kv.list({ prefix, cursor });
      for (const k of page.keys) {
        out.push({ key: k.name.slice(prefix.length), bytes: k.metadata?.bytes ?? 0, lines: k.metadata?.lines ?? 0 });
      }
      cursor = page.list_complete ? undefined : page.cursor;
    } while (cursor);
    return out;
  }

  /** Removes a blob. */
  async delete(session, key) {
    const name = this.#name(session, key);
    this.#fresh.forget(name);
    await this.#kv.delete(name);
  }
}
