// The proxy on Node worker threads: each thread runs its own `createProxy`
// (its wasm, sessions and budgets), and this thread only moves requests and
// responses. A compress is a synchronous wasm call that holds its thread for
// as long as it runs (seconds for a body at `maxBodyBytes`), so on one thread
// a tenant spending its `maxCompressMsPerMinute` stalls every other tenant.
// Here a tenant's requests go to one thread (its sessions live there), a new
// tenant to the thread least busy lately, so a client sending maximal bodies
// holds one thread while the others go on.
import { createHash, randomBytes } from 'node:crypto';
import { availableParallelism } from 'node:os';
import { pathToFileURL } from 'node:url';
import { Worker } from 'node:worker_threads';
import { HostError, OptionError, TraceLiteError } from '../../core/errors.js';
import { Lru } from '../../internal/lru.js';
import { errorResponse, ownChunk } from './http.js';
import { ledgerCall } from '../file-store/ledger.js';
import { SESSION_HEADER, defaultIdentity, sessionSigner, tokenParts } from './signing.js';
import { settingsOf } from './thread-settings.js';

export { serveNode } from './node-server.js';

/** Most threads `createThreadedProxy` starts. */
export const MAX_THREADS = 64;

/** Tenants and sessions whose thread is remembered (least recently used forgotten first). */
export const MAX_ROUTES = 65_536;

/** The window a thread's recent load is measured over (ms). */
const LOAD_WINDOW_MS = 500;

/** Statuses whose response has no body (the Fetch API refuses one). */
const NULL_BODY = new Set([101, 103, 204, 205, 304]);

/** The session a token a thread issued names, else `undefined`. */
function sessionOfToken(token) {
  return tokenParts(token)?.session;
}

/**
 * An error from a thread (`{ code, message, path }`) as its class; one
 * without a code (the settings module threw) is the module's fault.
 */
function revived(err) {
  if (err.code) return TraceLiteError.from(err);
  return new OptionError(`the settings module failed in a thread: ${err.message}`, 'INVALID_OPTION', 'settingsModule');
}

/** The module's URL as a string, or an `INVALID_OPTION` naming `settingsModule`. */
function moduleHref(settingsModule) {
  if (settingsModule instanceof URL) return settingsModule.href;
  if (typeof settingsModule === 'string' && settingsModule !== '') {
    return /^[a-z][a-z0-9+.-]*:/i.test(settingsModule) && !/^[a-z]:[\\/]/i.test(settingsModule)
      ? settingsModule
      : pathToFileURL(settingsModule).href;
  }
  throw new OptionError('must be a URL or a path of a module exporting the settings of createProxy', 'INVALID_OPTION', 'settingsModule');
}

/** The checked `threads` (default: the cores this process may use). */
function threadCount(threads) {
  const n = threads ?? availableParallelism();
  if (!Number.isInteger(n) || n < 1 || n > MAX_THREADS) {
    throw new OptionError(`must be an integer from 1 to ${MAX_THREADS}, got ${String(threads)}`, 'INVALID_OPTION', 'threads');
  }
  return n;
}

/** Answers a worker's FileStore ledger call (`ledger.js`) from this thread's ledger of its root. */
function answerLedger(worker, { id, op, root, args }) {
  ledgerCall(op, root, args).then(
    (result) => worker.postMessage({ type: 'ledgerReply', id, result }),
    (err) => worker.postMessage({ type: 'ledgerReply', id, error: { code: err?.code, message: String(err?.message ?? err), path: err?.path ?? '' } }),
  );
}

/**
 * One worker thread running `createProxy` and the requests in flight on it:
 * `send(request)` gives the thread's response.
 */
class ProxyThread {
  constructor(workerData, onExit) {
    this.workerData = workerData;
    this.onExit = onExit;
    this.flights = new Map();
    // Stats asked for, by id.
    this.asked = new Map();
    this.seq = 0;
    this.start();
  }

  /** Starts (or restarts) the worker; `ready` settles once its proxy is made. */
  start() {
    const worker = new Worker(new URL('./thread-worker.js', import.meta.url), { workerData: this.workerData });
    this.worker = worker;
    this.lastLoad = undefined;
    this.recentLoad = 0;
    this.sample();
    let served = false;
    // The FileStores of every thread count their root's bytes in this thread's ledger (one count).
    worker.on('message', (m) => {
      if (m.type === 'ledger') answerLedger(worker, m);
    });
    this.ready = new Promise((resolve, reject) => {
      const first = (m) => {
        if (m.type === 'ledger') return;
        worker.off('message', first);
        if (m.type === 'ready') resolve();
        else reject(revived(m.error));
      };
      worker.on('message', first);
      worker.once('error', reject);
    });
    this.ready.then(() => {
      served = true;
      worker.on('message', (m) => this.receive(m));
    }, () => {});
    worker.on('error', () => {});
    worker.on('exit', () => {
      if (this.worker !== worker) return;
      this.failAll();
      if (this.closed) return;
      // Started again only if it had served: a thread that cannot start is not
      // retried in a loop, and answers THREAD_FAILED from then on.
      if (served) this.onExit(this);
      else this.broken = true;
    });
  }

  /**
   * Reads the share of the last `LOAD_WINDOW_MS` the thread's loop was busy
   * (0–1); 0 where the runtime does not measure a worker's loop.
   */
  sample() {
    const perf = this.worker.performance;
    if (typeof perf?.eventLoopUtilization !== 'function') return;
    const elu = perf.eventLoopUtilization();
    this.recentLoad = this.lastLoad === undefined ? 0 : perf.eventLoopUtilization(elu, this.lastLoad).utilization;
    this.lastLoad = elu;
  }

  /**
   * How busy the thread is: its loop's recent share of busy time, then (a tie
   * break) its requests in flight, most of which wait for the provider.
   */
  load() {
    return this.recentLoad + 0.001 * this.flights.size;
  }

  post(message, transfer) {
    this.worker.postMessage(message, transfer);
  }

  /** The thread's response to `request`. */
  send(request) {
    if (this.broken) return Promise.resolve(errorResponse(503, 'THREAD_FAILED', 'the proxy thread for this request could not be started again', ''));
    const id = ++this.seq;
    const hasBody = request.body !== null && request.method !== 'GET' && request.method !== 'HEAD';
    return new Promise((resolve, reject) => {
      this.flights.set(id, { request, resolve, reject, reader: undefined, pull: undefined });
      this.post({ type: 'request', id, method: request.method, url: request.url, headers: [...request.headers], body: hasBody });
    });
  }

  /** The thread's wasm memory and requests in flight (its own count), or `undefined` if it does not answer. */
  stats() {
    if (this.broken) return Promise.resolve(undefined);
    const id = ++this.seq;
    return new Promise((resolve) => {
      this.asked.set(id, resolve);
      this.post({ type: 'stats', id });
    });
  }

  /** A message of the worker about request `m.id`. */
  async receive(m) {
    if (m.type === 'ledger') return;
    if (m.type === 'stats') {
      this.asked.get(m.id)?.({ wasmMemoryBytes: m.wasmMemoryBytes, inFlight: m.inFlight });
      this.asked.delete(m.id);
      return;
    }
    const f = this.flights.get(m.id);
    if (f === undefined) return;
    switch (m.type) {
      case 'pull':
        await this.sendBody(m.id, f);
        break;
      case 'head':
        f.head = true;
        f.resolve(this.response(m, f));
        if (!m.body) this.finish(m.id);
        break;
      case 'data':
        f.pull?.(m.chunk);
        break;
      case 'end':
        f.pull?.(null);
        this.finish(m.id);
        break;
      case 'error': {
        // What the thread's handler threw (or its body stream), as createProxy's would be.
        const err = m.error.code ? revived(m.error) : new Error(m.error.message);
        if (f.head) f.fail?.(err);
        else f.reject(err);
        this.finish(m.id);
        break;
      }
      default:
    }
  }

  /** The next chunk of a request body to the worker (pulled, so a refused body is never read). */
  async sendBody(id, f) {
    try {
      f.reader ??= f.request.body.getReader();
      const { done, value } = await f.reader.read();
      if (done) {
        f.bodyDone = true;
        this.post({ type: 'bodyEnd', id });
      } else {
        const chunk = ownChunk(value);
        this.post({ type: 'bodyChunk', id, chunk }, [chunk.buffer]);
      }
    } catch (err) {
      this.post({ type: 'bodyError', id, message: String(err?.message ?? err) });
    }
  }

  /** The Response of a head message; its body is pulled from the worker chunk by chunk. */
  response(m, f) {
    const id = m.id;
    if (!m.body || NULL_BODY.has(m.status)) return new Response(null, { status: m.status, statusText: m.statusText, headers: m.headers });
    let waiting;
    const body = new ReadableStream({
      start: (c) => {
        // Ends the body with an error, whether or not a chunk is awaited.
        f.fail = (err) => {
          c.error(err);
          waiting?.();
        };
      },
      pull: (c) => new Promise((resolve) => {
        waiting = resolve;
        f.pull = (chunk) => {
          if (chunk === null) c.close();
          else c.enqueue(chunk);
          resolve();
        };
        this.post({ type: 'more', id });
      }),
      cancel: () => {
        this.post({ type: 'cancel', id });
        this.finish(id);
      },
    }, { highWaterMark: 0 });
    return new Response(body, { status: m.status, statusText: m.statusText, headers: m.headers });
  }

  /** Forgets request `id`; a request body the worker did not read to its end is released. */
  finish(id) {
    const f = this.flights.get(id);
    if (f === undefined) return;
    this.flights.delete(id);
    if (f.reader && !f.bodyDone) f.reader.cancel().catch(() => {});
  }

  /** The thread ended (a crash, `process.exit` in a callback): its requests in flight fail. */
  failAll() {
    for (const resolve of this.asked.values()) resolve(undefined);
    this.asked.clear();
    const err = new HostError('the proxy thread serving this request ended', 'THREAD_FAILED');
    for (const [id, f] of this.flights) {
      if (f.head) f.fail?.(err);
      else f.resolve(errorResponse(503, 'THREAD_FAILED', `${err.message}; retry`));
      this.finish(id);
    }
  }

  close() {
    this.closed = true;
    return this.worker.terminate();
  }
}

/**
 * `createProxy` on `threads` Node worker threads (default: the cores this
 * process may use), a Fetch-API handler `(Request) => Promise<Response>` like
 * createProxy's, with `close()` ending the threads.
 *
 * `settingsModule` (a URL or a path) is a module whose default export is the
 * settings of `createProxy`, or a function `(data) => settings` (it may be
 * async); it is imported by every thread and by this one (which uses only
 * `identify` and `secret`), so its functions (`fetch`, `identify`,
 * `onReport`, `onError`) and stores are made in each thread. `data` must be
 * structured-cloneable.
 *
 * Each thread holds its own sessions, so a request goes where its session
 * is: a tenant's (its credentials, `identify`) requests to the thread first
 * chosen for it, the least busy of late; the spill and image routes to the
 * thread that answered the session's last POST. Budgets are per thread, so a
 * tenant's `maxCompressMsPerMinute` holds as on one thread. Without `secret`
 * (in-memory store only: an outside `store` needs it, as in createProxy) the
 * threads share one made here (32 random bytes), so tokens hold in every
 * thread while this process lives. `maxMemoryBytes` bounds the process: each
 * thread keeps its share (`maxMemoryBytes / threads`, of the default if
 * unset). A thread that ends (a crash) answers its requests in flight 503
 * `THREAD_FAILED` (or errors their body streams) and is started again, its
 * in-memory sessions lost.
 */
export async function createThreadedProxy(settingsModule, { threads, data } = {}) {
  const href = moduleHref(settingsModule);
  const count = threadCount(threads);
  const settings = await settingsOf(href, data);
  const identify = settings.identify ?? defaultIdentity;
  // Shared by the threads when the settings have none, as createProxy makes
  // one per instance: only with the in-memory store (an outside store needs
  // the deployment's own, and createProxy refuses it missing: fail closed).
  const secret = settings.secret ?? randomBytes(32).toString('base64');
  const workerData = { href, data, secret: settings.store === undefined ? secret : undefined, threads: count };
  const signer = sessionSigner(secret);
  const pool = [];
  const restart = (t) => {
    try {
      t.start();
    } catch {
      // Not started (the process is out of resources): its requests get THREAD_FAILED until close.
      t.broken = true;
    }
  };
  try {
    for (let i = 0; i < count; i++) pool.push(new ProxyThread({ ...workerData, thread: i }, restart));
  } catch (err) {
    await Promise.all(pool.map((t) => t.close()));
    throw new OptionError(`cannot go to a thread: ${err.message}`, 'INVALID_OPTION', 'data');
  }
  try {
    await Promise.all(pool.map((t) => t.ready));
  } catch (err) {
    await Promise.all(pool.map((t) => t.close()));
    throw err;
  }
  const tenants = new Lru(MAX_ROUTES);
  const sessions = new Lru(MAX_ROUTES);
  // The least busy thread; among equals, the next in turn (idle threads share new tenants).
  let turn = 0;
  const leastBusy = () => {
    let best;
    for (let k = 0; k < pool.length; k++) {
      const t = pool[(turn + k) % pool.length];
      if (best === undefined || t.load() < best.load()) best = t;
    }
    turn = (pool.indexOf(best) + 1) % pool.length;
    return best;
  };
  const byHash = (key) => pool[createHash('sha256').update(key).digest().readUInt32BE(0) % pool.length];

  /**
   * The session a request names with a genuine signature (its token, or a
   * signed image URL), else `undefined`: a forged name routes nowhere but by
   * its tenant (the thread then refuses it as createProxy does).
   */
  async function signedSession(request, url) {
    const token = request.headers.get(SESSION_HEADER) ?? url.searchParams.get('session');
    if (token && signer.isToken(token)) return signer.verify(token);
    const image = /\/image\/([^/]+)\/([^/]+)\.png$/.exec(url.pathname);
    if (image && await signer.verifyImage(image[1], image[2], url.searchParams.get('sig'))) return image[1];
    return undefined;
  }

  /** The thread of a request: its session's, else its tenant's (chosen now for a new tenant). */
  async function threadOf(request, url) {
    const session = await signedSession(request, url);
    const known = session === undefined ? undefined : sessions.get(session);
    if (known !== undefined) return known;
    if (request.method !== 'POST' && session !== undefined) return byHash(session);
    const tenant = await signer.tenant(String(await identify(request) ?? ''));
    let t = tenants.get(tenant);
    if (t === undefined) {
      t = leastBusy();
      tenants.set(tenant, t);
    }
    return t;
  }

  async function handle(request) {
    const thread = await threadOf(request, new URL(request.url));
    const response = await thread.send(request);
    const session = sessionOfToken(response.headers.get(SESSION_HEADER));
    if (session !== undefined) sessions.set(session, thread);
    return response;
  }
  const sampling = setInterval(() => pool.forEach((t) => t.sample()), LOAD_WINDOW_MS).unref();
  handle.threads = count;
  handle.stats = async () => (await Promise.all(pool.map((t) => t.stats()))).map((st, thread) => ({ thread, ...(st ?? { wasmMemoryBytes: undefined, inFlight: 0 }), running: st !== undefined }));
  handle.close = async () => {
    clearInterval(sampling);
    await Promise.all(pool.map((t) => t.close()));
  };
  return handle;
}
