import { Session } from './tracelite.js';
import { guarded } from './errors.js';

/**
 * The in-memory spill store (inside wasm). Pass it as `options.store` to keep
 * spills and render caches across calls; call `free()` when done.
 */
export class SpillStore {
  #session = new Session();

  /** The wasm session backing this store (internal). */
  get wasmSession() {
    if (!this.#session) throw new Error('SpillStore was freed');
    return this.#session;
  }

  /** Full text of a spilled blob. */
  get(session, key) {
    return guarded(() => this.wasmSession.get(session, key));
  }

  /** Stores a blob (e.g. rehydrating from the `spills` a compress call returned). */
  put(session, key, text) {
    guarded(() => this.wasmSession.put(session, key, text));
  }

  /** Blobs of a session: `[{ key, bytes, lines }]`. */
  list(session) {
    return JSON.parse(this.wasmSession.list(session));
  }

  /** Removes a blob; returns whether it existed. */
  delete(session, key) {
    return this.wasmSession.delete(session, key);
  }

  /** Releases the wasm memory. */
  free() {
    this.#session?.free();
    this.#session = null;
  }

  [Symbol.dispose]() {
    this.free();
  }
}
