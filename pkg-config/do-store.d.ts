// Types of 'tracelite/do-store': a spill store over Cloudflare Durable Objects.
import type { SpillBlob } from './index.js';
import type { GrepOptions, SpillMatches, SpillPage } from './kv-store.js';

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
 * interface and rules as `KvSpillStore`: content keys verified on write and
 * read (`SPILL_CORRUPT`), a held key never takes another text (`STORE_REFUSED`).
 */
export class DurableObjectSpillStore {
  constructor(namespace: DurableObjectNamespaceLike, options?: DurableObjectSpillStoreOptions);
  /** Full text of a blob; rejects with `SPILL_NOT_FOUND` when missing or expired, `SPILL_CORRUPT` when it does not hash to its content key. */
  get(session: string, key: string): Promise<string>;
  /**
   * Stores a blob; resolves false when it was already stored with more than half its time left.
   * Rejects with `STORE_REFUSED` when another text is held under the key or the session would pass
   * `maxSessionBytes`, and with `SPILL_CORRUPT` when `text` does not hash to its content key.
   */
  put(session: string, key: string, text: string): Promise<boolean>;
  /** Stores the blobs a compress call returned (`spills`, or the whole result); resolves how many were written. */
  persist(blobs: SpillBlob[] | { spills?: SpillBlob[] }): Promise<number>;
  list(session: string): Promise<{ key: string; bytes: number; lines: number }[]>;
  delete(session: string, key: string): Promise<void>;
  /** A page of lines: skips `offset` lines (default 0), returns ≤ `limit` (default 200, ≤ 2000). */
  read(session: string, key: string, offset?: number, limit?: number): Promise<SpillPage>;
  /** Lines matching a regular expression (or literal text). */
  grep(session: string, key: string, pattern: string, options?: GrepOptions): Promise<SpillMatches>;
}
