// Types of 'tracelite/kv-store': a spill store over the Workers KV API.
import type { SpillBlob } from '../../core/index.js';

/** The subset of a Workers KV namespace binding the store uses. */
export interface KvNamespaceLike {
  get(key: string, options: { type: 'text' }): Promise<string | null>;
  put(key: string, value: string, options?: { expirationTtl?: number; metadata?: unknown }): Promise<void>;
  getWithMetadata?(key: string, options: { type: 'text' }): Promise<{ value: string | null; metadata: unknown }>;
  delete?(key: string): Promise<void>;
  list?(options: { prefix?: string; cursor?: string }): Promise<{
    keys: { name: string; expiration?: number; metadata?: unknown }[];
    list_complete: boolean;
    cursor?: string;
  }>;
}

/** Options of `KvSpillStore`. */
export interface KvSpillStoreOptions {
  /** Seconds a blob lives (`expirationTtl`); at least 60. Default 7 days. */
  ttlSeconds?: number;
  /** Prefix of KV keys. Default `'tracelite/'`. */
  prefix?: string;
  /** Clock in milliseconds, for tests. Default `Date.now`. */
  now?: () => number;
}

/** A page of a spilled blob's lines. */
export interface SpillPage {
  pointer: string;
  /** Lines skipped before the page. */
  offset: number;
  limit: number;
  /** Lines in the page (fewer than `limit` at the end). */
  count: number;
  totalLines: number;
  /** Size of the whole blob in bytes. */
  totalBytes: number;
  /** The offset that continues, or null at the end. */
  nextOffset: number | null;
  /** The lines as stored, line ends included (pages concatenate to the blob). */
  text: string;
}

/** Lines of a blob that match a pattern. */
export interface SpillMatches {
  pointer: string;
  pattern: string;
  totalLines: number;
  totalMatches: number;
  /** Matches skipped before the first returned. */
  skipped: number;
  /** 1-based line numbers and texts of the returned matches. */
  matches: { line: number; text: string }[];
  /** The core's lines: matches and context, a window of lines too long to show. */
  lines: { number: number; isMatch: boolean; text: string; column: number; lineBytes: number }[];
  /** The `skip` that shows further matches, or null. */
  nextSkip: number | null;
  /** grep -n style: `12:match`, `11-context`, `--` between groups. */
  text: string;
}

/** Options of a spill search. */
export interface GrepOptions {
  /** Lines shown around each match (≤ 10). Default 2. */
  context?: number;
  /** Default 50, at most 200. */
  maxMatches?: number;
  /** Matches to skip (to see further matches). Default 0. */
  skip?: number;
  /** Treat the pattern as plain text instead of a regular expression (the core's linear-time dialect). */
  literal?: boolean;
  ignoreCase?: boolean;
  /** Work budget (regex program bytes × bytes searched); over it: `GREP_TOO_COSTLY`. Default 2^32. */
  maxCost?: number;
}

/** Default `ttlSeconds`: 7 days. */
export const DEFAULT_TTL_SECONDS: number;

/**
 * The methods of the outside spill stores (`KvSpillStore`, `DurableObjectSpillStore`):
 * content-addressed keys, never overwritten, verified on read.
 */
export interface OutsideSpillStore {
  /**
   * Full text of a blob; rejects with `SPILL_NOT_FOUND` when missing or expired, `SPILL_CORRUPT` when
   * the key is a content key (`<kind>-<32 hex>`: SHA-256 of the text, first 128 bits) the text does not hash to.
   */
  get(session: string, key: string): Promise<string>;
  /**
   * Stores a blob; resolves false when a fresh copy was already stored (or is being stored by a concurrent put).
   * Rejects with `STORE_REFUSED` when another text is held under the key (never overwritten) or the store's
   * bounds refuse it, and with `SPILL_CORRUPT` when `text` does not hash to its content key.
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

/**
 * Spills in a KV namespace under `<prefix><session>/<key>`, so they survive
 * across requests and isolates (eventually consistent across locations). Pass
 * it as `store` to `createProxy` or `traceliteMiddleware`.
 */
export interface KvSpillStore extends OutsideSpillStore {}
export class KvSpillStore {
  constructor(kv: KvNamespaceLike, options?: KvSpillStoreOptions);
}
