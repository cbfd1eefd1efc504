// The page's handle on the worker (worker.js): request/response by id, and a
// fresh worker whenever a new run starts while one is still busy, so the
// latest settings apply at once instead of queueing behind a stale replay.

export class EngineError extends Error {
  constructor({ name, message, code, path }) {
    super(message);
    this.name = name === 'TraceLiteError' ? 'TraceLiteError' : 'EngineError';
    this.code = code ?? '';
    this.path = path ?? '';
  }
}

export class Engine {
  #worker = null;
  #ready = null;
  #pending = new Map();
  #nextId = 1;
  #busy = 0;
  #runId = 0;
  /** Called with `{ t, n }` while a replay runs. */
  onProgress = () => {};

  constructor(url = new URL('./worker.js', import.meta.url)) {
    this.url = url;
    this.#start();
  }

  #start() {
    const worker = new Worker(this.url, { type: 'module', name: 'tracelite-engine' });
    this.#worker = worker;
    this.#busy = 0;
    this.#ready = new Promise((resolve, reject) => {
      worker.addEventListener('error', (e) => reject(new EngineError({ message: `worker failed to start: ${e.message ?? 'error'}` })), { once: true });
      worker.addEventListener('message', (e) => { if (e.data?.type === 'ready') resolve(); });
    });
    worker.addEventListener('message', (event) => {
      const msg = event.data;
      if (msg?.type === 'progress') {
        if (msg.runId === this.#runId) this.onProgress(msg);
        return;
      }
      const pending = this.#pending.get(msg?.id);
      if (!pending) return;
      this.#pending.delete(msg.id);
      this.#busy--;
      if (msg.ok) pending.resolve(msg.value);
      else pending.reject(new EngineError(msg.error));
    });
  }

  /** Stops the worker and rejects what it still owed; a new one takes over. */
  #restart() {
    this.#worker.terminate();
    for (const { reject } of this.#pending.values()) {
      reject(new EngineError({ message: 'superseded', code: 'SUPERSEDED' }));
    }
    this.#pending.clear();
    this.#start();
  }

  async #call(type, args = {}) {
    await this.#ready;
    const id = this.#nextId++;
    this.#busy++;
    return new Promise((resolve, reject) => {
      this.#pending.set(id, { resolve, reject });
      this.#worker.postMessage({ id, type, ...args });
    });
  }

  /** Version and default settings of the package. */
  init() {
    return this.#call('init');
  }

  /** Compresses a trajectory (every step) or a request; supersedes a running one. */
  run(input, options) {
    if (this.#busy > 0) this.#restart();
    const runId = ++this.#runId;
    return this.#call('run', { input, options, runId });
  }

  /** The compressed and original request of step `t`, and its report. */
  step(t) {
    return this.#call('step', { t });
  }

  /** Blobs in the spill store of the current run. */
  spills() {
    return this.#call('spills');
  }

  /** A page of lines of a spilled blob. */
  read(key, offset, limit) {
    return this.#call('read', { key, offset, limit });
  }

  /** Lines matching `pattern` in one blob (`key`) or all (`key` empty). */
  grep(key, pattern, { regex = false, ignoreCase = false, maxMatches = 200 } = {}) {
    return this.#call('grep', { key, pattern, regex, ignoreCase, maxMatches });
  }
}
