// Types of 'tracelite/do-store': a spill store over Cloudflare Durable Objects.
import type { OutsideSpillStore } from '../kv-store/index.js';

/** The subset of a Durable Object namespace binding the store uses. */
export interface DurableObjectNamespaceLike {
  idFromName(name: string): unknown;
  get(id: any): { fetch(input: string, init?: RequestInit): Promise<Response> };
}

/** Options of `DurableObjectSpillStore`. */
export interface DurableObjectSpillStoreOptions {
  /** Seconds a blob lives (an alarm deletes it after). Default 7 days. */
  ttlSeconds?: number;
  /** Most bytes (UTF-8) one session's object holds; a put over it is `STORE_REFUSED`. Default 64 MiB. */
  maxSessionBytes?: number;
  /** Clock in milliseconds, for tests. Default `Date.now`. */
  now?: () => number;
}

/** Default `ttlSeconds`: 7 days. */
export const DEFAULT_TTL_SECONDS: number;
/** Default `maxSessionBytes`: 64 MiB. */
export const DEFAULT_MAX_SESSION_BYTES: number;

/**
 * The Durable Object class holding one session's spills. Export it from your
 * worker (`export { TraceLiteSpillObject } from 'tracelite/do-store'`) and bind
 * it in wrangler.toml (`[[durable_objects.bindings]]`, class_name
 * `TraceLiteSpillObject`, with a `new_sqlite_classes` migration).
 */
export class TraceLiteSpillObject {
  constructor(state: { storage: unknown }, env?: unknown);
  fetch(request: Request): Promise<Response>;
  alarm(): Promise<void>;
}

/**
 * Spills in Durable Objects, one object per session (`idFromName(session)`):
 * a read sees every earlier write of its session, wherever it runs. Same
 * methods and rules as `KvSpillStore`; a put over `maxSessionBytes` is `STORE_REFUSED`.
 */
export interface DurableObjectSpillStore extends OutsideSpillStore {}
export class DurableObjectSpillStore {
  constructor(namespace: DurableObjectNamespaceLike, options?: DurableObjectSpillStoreOptions);
}
