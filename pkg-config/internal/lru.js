// Internal: the one bounded map the adapters' caches share (the proxy's routes
// and masked blobs, the outside stores' fresh keys): least recently used
// dropped first. A Map keeps insertion order, so the first key is the oldest
// and a touched entry moves to the end.

/**
 * At most `max` weight of entries (`weigh(value, key)`, 1 each by default),
 * least recently used dropped first.
 */
export class Lru {
  #max;
  #weigh;
  #weight = 0;
  #map = new Map();

  constructor(max, weigh = () => 1) {
    this.#max = max;
    this.#weigh = weigh;
  }

  /** Number of entries held. */
  get size() {
    return this.#map.size;
  }

  /** The value of `key`, now the most recently used; `undefined` when not held. */
  get(key) {
    const value = this.#map.get(key);
    if (value !== undefined) {
      this.#map.delete(key);
      this.#map.set(key, value);
    }
    return value;
  }

  /** The value of `key` without using it. */
  peek(key) {
    return this.#map.get(key);
  }

  has(key) {
    return this.#map.has(key);
  }

  /**
   * Holds `value` under `key` as the most recently used, then drops the least
   * recently used until the weight fits (an entry over `max` alone is not kept).
   */
  set(key, value) {
    this.delete(key);
    this.#map.set(key, value);
    this.#weight += this.#weigh(value, key);
    for (const [old, held] of this.#map) {
      if (this.#weight <= this.#max) break;
      this.#map.delete(old);
      this.#weight -= this.#weigh(held, old);
    }
    return this;
  }

  delete(key) {
    if (!this.#map.has(key)) return false;
    this.#weight -= this.#weigh(this.#map.get(key), key);
    return this.#map.delete(key);
  }
}
