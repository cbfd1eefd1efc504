// Internal (createProxy): work per key in a time window: search work per
// session on the spill routes (`GET /spill/<key>/grep`, each call its own
// request), compress time per tenant (`maxCompressMsPerMinute`); the
// masked copies of spilled blobs the spill routes serve.
import { Lru } from '../../internal/lru.js';

/** Most sessions tracked at once; the oldest window is dropped first. */
export const MAX_TRACKED_SESSIONS = 10_000;

/**
 * Work spent per key (a session, a tenant) in fixed windows of `windowMs`,
 * at most `limit` per window: work starts while some is left, so one piece of
 * work may overshoot by its own cost.
 */
export class WorkWindows {
  #limit;
  #windowMs;
  #now;
  #windows = new Map();

  constructor({ limit, windowMs, now = () => Date.now() }) {
    this.#limit = limit;
    this.#windowMs = windowMs;
    this.#now = now;
  }

  /** The window of `session` now (a new one when the last has ended). */
  #window(session) {
    const now = this.#now();
    let w = this.#windows.get(session);
    if (w === undefined || now - w.start >= this.#windowMs) {
      this.#windows.delete(session);
      w = { start: now, spent: 0 };
      if (this.#windows.size >= MAX_TRACKED_SESSIONS) this.#windows.delete(this.#windows.keys().next().value);
      this.#windows.set(session, w);
    }
    return w;
  }

  /** Work `session` may still spend in this window. */
  left(session) {
    return Math.max(0, this.#limit - this.#window(session).spent);
  }

  /** Counts `work` against `session`'s window. */
  spend(session, work) {
    this.#window(session).spent += work;
  }

  /** Whole seconds until `session`'s window ends. */
  retryAfter(session) {
    return Math.max(1, Math.ceil((this.#window(session).start + this.#windowMs - this.#now()) / 1000));
  }
}

/**
 * Masked copies of spilled blobs, least recently used dropped first beyond
 * `maxBytes` (UTF-16 units counted as bytes: a bound, not an exact size).
 */
export class MaskedBlobs {
  #maxBytes;
  #texts;

  constructor(maxBytes) {
    this.#maxBytes = maxBytes;
    this.#texts = new Lru(maxBytes, (text) => text.length);
  }

  /** The masked text of `session`/`key`, if held. */
  get(session, key) {
    return this.#texts.get(`${session.length}:${session}/${key}`);
  }

  /** Holds `text` (when it fits) and returns it. */
  put(session, key, text) {
    const id = `${session.length}:${session}/${key}`;
    if (text.length <= this.#maxBytes && !this.#texts.has(id)) this.#texts.set(id, text);
    return text;
  }
}
