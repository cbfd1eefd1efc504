// createProxy on Node worker threads (tracelite/proxy/threads).
import type { ProxyOptions } from './index.js';

/** Most threads `createThreadedProxy` starts. */
export const MAX_THREADS: number;

/** Tenants and sessions whose thread is remembered (least recently used forgotten first). */
export const MAX_ROUTES: number;

/** What a settings module exports by default: the settings, or a function of `data` giving them. */
export type ThreadedProxySettings<D = unknown> = ProxyOptions | ((data: D) => ProxyOptions | Promise<ProxyOptions>);

export interface ThreadedProxyOptions<D = unknown> {
  /** Worker threads, 1 to `MAX_THREADS`. Default: the cores this process may use (`os.availableParallelism()`). */
  threads?: number;
  /** Given to the settings module's function in every thread; structured-cloneable. */
  data?: D;
}

/** A Fetch-API handler like `createProxy`'s, over threads. */
export interface ThreadedProxy {
  (request: Request): Promise<Response>;
  /** How many threads serve. */
  readonly threads: number;
  /** Ends the threads (requests in flight fail). */
  close(): Promise<void>;
  /**
   * Each thread's wasm memory (bytes, it never shrinks: the peak so far) and
   * requests in flight; a thread that does not run (ended, not started again)
   * has `running: false`.
   */
  stats(): Promise<ThreadStats[]>;
}

/** One thread of a `ThreadedProxy`. */
export interface ThreadStats {
  thread: number;
  running: boolean;
  wasmMemoryBytes: number | undefined;
  inFlight: number;
}

/**
 * `createProxy` on Node worker threads, so that one tenant's compress (a
 * synchronous wasm call, seconds for a body at `maxBodyBytes`) holds one
 * thread, not every request. `settingsModule` (a URL or a path) exports by
 * default the settings of `createProxy` (or a function of `data` returning
 * them); every thread imports it. A tenant's requests go to one thread (the
 * least busy when it first came), the spill and image routes to the thread of
 * their session. `maxMemoryBytes` bounds the process (each thread keeps its
 * share). A thread that ends answers its requests in flight 503
 * `THREAD_FAILED` and is started again. Node only: elsewhere it rejects with
 * `UNSUPPORTED_HOST`. Rejects with `INVALID_OPTION` at `settingsModule`,
 * `threads` or `data`, or with the error `createProxy` gives for the settings.
 */
export function createThreadedProxy<D = unknown>(
  settingsModule: URL | string,
  options?: ThreadedProxyOptions<D>,
): Promise<ThreadedProxy>;

/**
 * Serves a Fetch-API handler (`createProxy`'s or `createThreadedProxy`'s)
 * with node:http on `host`:`port` (default 127.0.0.1:8787; 0 picks a free
 * port); resolves once it listens. Request bodies stream in as the handler
 * reads them (one it never reads is drained unbuffered), responses stream out
 * as the client takes them. The handler sees `http://<host>:<port><path>`
 * (the Host header is not trusted); a handler that throws answers a bare 500.
 */
export function serveNode(
  handler: (request: Request) => Promise<Response>,
  options?: { port?: number; host?: string },
): Promise<ServedHandler>;

/** The listening `http.Server` of `serveNode` (the part of it typed here). */
export interface ServedHandler {
  /** The address it listens on (`{ port, address, family }`). */
  address(): { port: number; address: string; family: string } | string | null;
  /** Stops listening; `callback` once every connection closed. */
  close(callback?: (err?: Error) => void): unknown;
}
