// Internal: the checks every outside spill store (KV, Durable Objects) makes
// on a blob: a content key (`<kind>-<32 hex>`, src/hash/key.rs) must be the
// SHA-256 of its text, checked on write and again on read.
import { StoreError } from '../core/errors.js';
import { facts, isContentKey } from '../core/blob.js';
import { grepSpill, readSpill } from '../core/spill-reader.js';
import { Lru } from './lru.js';

export { facts, isContentKey };

/**
 * Whether a text with hash `hash` may be stored under `key`: a content key
 * must be the hash of its text; names the host chose are not checked.
 */
export function matchesKey(key, hash) {
  return !isContentKey(key) || key.endsWith(`-${hash}`);
}

export function corrupt(session, key) {
  return new StoreError(`spill ${session}/${key}: the text does not hash to its key (altered or forged)`, 'SPILL_CORRUPT', 'key');
}

export function notFound(session, key) {
  return new StoreError(`no spill ${session}/${key}`, 'SPILL_NOT_FOUND', 'key');
}

export function refused(name) {
  return new StoreError(`${name}: another text is already stored under this key`, 'STORE_REFUSED', 'key');
}

/** Checks a text read back under `key` (`SPILL_CORRUPT` when a content key's text does not hash to it). */
export async function verified(session, key, text) {
  if (isContentKey(key) && !matchesKey(key, facts(text).hash)) throw corrupt(session, key);
  return text;
}

/**
 * Keys a store remembers as fresh (written or seen with enough time left),
 * with their expiry (epoch seconds) and text hash, least recently used first,
 * at most `max` (memory stays bounded in a long-lived isolate).
 */
export class FreshKeys {
  #keys;

  constructor(max = 10000) {
    this.#keys = new Lru(max);
  }

  /** Whether `name` holds the text of `hash` with more than `minLeft` seconds left at `now`. */
  has(name, hash, now, minLeft) {
    const known = this.#keys.peek(name);
    return known !== undefined && known.hash === hash && known.expires - now > minLeft;
  }

  remember(name, expires, hash) {
    this.#keys.set(name, { expires, hash });
  }

  forget(name) {
    this.#keys.delete(name);
  }
}

/**
 * What the outside stores (KV, Durable Objects) share above their own
 * `get` / `put`: storing a compress call's blobs, paging and searching (in the core).
 */
export class OutsideSpillStore {
  /**
   * Stores every blob a `compress` call returned (its `spills`, or the whole
   * result), in parallel. Returns how many were written (the others were
   * already stored).
   */
  async persist(blobs) {
    const spills = (Array.isArray(blobs) ? blobs : blobs?.spills) ?? [];
    const written = await Promise.all(spills.map((s) => this.put(s.session, s.key, s.text)));
    return written.filter(Boolean).length;
  }

  /** A page of lines of a spill (see `readSpill`). */
  read(session, key, offset, limit) {
    return readSpill(this, key, { session, offset, limit });
  }

  /** Matching lines of a spill (see `grepSpill`). */
  grep(session, key, pattern, options = {}) {
    return grepSpill(this, key, pattern, { ...options, session });
  }
}
