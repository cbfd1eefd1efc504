// Types of 'tracelite/proxy': a Fetch-API handler that compresses LLM requests.
import type { CompressSettings, FormatName, Report } from './index.js';

/** Any spill store: the in-memory `SpillStore`, a `KvSpillStore`, or yours. */
export interface SpillStoreLike {
  get(session: string, key: string): string | Promise<string>;
  put(session: string, key: string, text: string): unknown;
}

/** Options of `createProxy`. */
export interface ProxyOptions {
  /** Base URL of the provider, e.g. `https://api.openai.com`; the request path is appended. */
  upstream: string | URL;
  /** Force one format for every POST (default: from the path). */
  format?: FormatName;
  /** Compress settings (budget, provider, stages, limits…). */
  options?: CompressSettings;
  /**
   * Where spills go. Default: in memory (per isolate), one store per session for
   * the `maxSessions` most recent sessions. Use a `KvSpillStore` on Workers.
   */
  store?: SpillStoreLike;
  /**
   * Sessions the default in-memory store keeps. With `store` set, sessions whose
   * caches (rendered snapshots, previous request; no spilled text) stay in memory
   * between turns. Default 64.
   */
  maxSessions?: number;
  /** The fetch used to reach the upstream. Default `globalThis.fetch`. */
  fetch?: (request: Request) => Promise<Response>;
  /** Larger request bodies get 413. Default 8 MiB. */
  maxBodyBytes?: number;
  /** Called after each compression (never with headers). */
  onReport?: (info: { session: string; format: FormatName; path: string; report: Report }) => void;
}

/** Paths (suffixes) the proxy compresses, with their format. */
export const ROUTES: [string, FormatName][];
/** Default `maxBodyBytes`. */
export const DEFAULT_MAX_BODY_BYTES: number;
/** `x-tracelite-session`: names the spill session of a request. */
export const SESSION_HEADER: string;

/**
 * A Fetch-API handler: compresses `POST …/v1/chat/completions`, `…/v1/responses`
 * and `…/v1/messages`, forwards to `upstream` with the headers intact, streams
 * the response back unchanged, and serves `GET /spill/<key>?offset=&limit=` and
 * `GET /spill/<key>/grep?q=&context=&max=&regex=1` for the session in the
 * `x-tracelite-session` header. Bad JSON → 400, too large → 413.
 */
export function createProxy(options: ProxyOptions): (request: Request) => Promise<Response>;
