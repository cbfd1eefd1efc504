// Internal: the checks every outside spill store (KV, Durable Objects) makes
// on a blob: a content key (`<kind>-<32 hex>`, src/spill/key.rs) must be the
// SHA-256 of its text, checked on write and again on read.
import { TraceLiteError } from '../core/errors.js';
import { grepSpill, readSpill } from './spill-reader.js';

const CONTENT_KEY = /^[a-z-]+-([0-9a-f]{32})$/;

/** Whether `key` is a content key (its text must hash to it). */
export function isContentKey(key) {
  return CONTENT_KEY.test(key);
}

/** The first 128 bits of the SHA-256 of `text`, in hex (the hash part of a content key). */
export async function digest(text) {
  const bytes = new Uint8Array(await crypto.subtle.digest('SHA-256', new TextEncoder().encode(text)));
  let hex = '';
  for (let i = 0; i < 16; i++) hex += bytes[i].toString(16).padStart(2, '0');
  return hex;
}

/**
 * Whether a text with hash `hash` may be stored under `key`: a content key
 * must be the hash of its text; names the host chose are not checked.
 */
export function matchesKey(key, hash) {
  const m = CONTENT_KEY.exec(key);
  return !m || m[1] === hash;
}

export function corrupt(session, key) {
  return new TraceLiteError(`spill ${session}/${key}: the text does not hash to its key (altered or forged)`, 'SPILL_CORRUPT', 'key');
}

export function notFound(session, key) {
  return new TraceLiteError(`no spill ${session}/${key}`, 'SPILL_NOT_FOUND', 'key');
}

export function refused(name) {
  return new TraceLiteError(`${name}: another text is already stored under this key`, 'STORE_REFUSED', 'key');
}

/** Checks a text read back under `key` (`SPILL_CORRUPT` when a content key's text does not hash to it). */
export async function verified(session, key, text) {
  if (isContentKey(key) && !matchesKey(key, await digest(text))) throw corrupt(session, key);
  return text;
}

export function lineCount(text) {
  if (text === '') return 0;
  let n = 1;
  for (let i = text.indexOf('\n'); i !== -1; i = text.indexOf('\n', i + 1)) n++;
  return text.endsWith('\n') ? n - 1 : n;
}

/**
 * Keys a store remembers as fresh (written or seen with enough time left),
 * with their expiry (epoch seconds) and text hash, least recently used first,
 * at most `max` (memory stays bounded in a long-lived isolate).
 */
export class FreshKeys {
  #max;
  #map = new Map();

  constructor(max = 10000) {
    this.#max = max;
  }

  /** Whether `name` holds the text of `hash` with more than `minLeft` seconds left at `now`. */
  has(name, hash, now, minLeft) {
    const known = this.#map.get(name);
    return known !== undefined && known.hash === hash && known.expires - now > minLeft;
  }

  remember(name, expires, hash) {
    this.#map.delete(name);
    this.#map.set(name, { expires, hash });
    if (this.#map.size > this.#max) this.#map.delete(this.#map.keys().next().value);
  }

  forget(name) {
    this.#map.delete(name);
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
