// Types of pkg-config/core/spill.js (Rust: src/spill/, src/wasm/spill.rs).
import type { SpillBlob } from './index.js';

/** Bounds of a SpillStore (Rust `StoreLimits`). */
export interface SpillStoreOptions {
  /** Bytes kept across all sessions; least-recently-used sessions are evicted past it. Default 64 MiB. */
  maxBytes?: number;
  /** Bytes kept per session; a blob past it is refused. Default 16 MiB. */
  maxSessionBytes?: number;
  /** Sessions unused this long are removed by `sweep`. Default 7 days; 0 = never. */
  ttlSeconds?: number;
  /**
   * Work one grep (or `grep_spill` call) may do: the pattern's compiled program size in bytes (a power
   * of two, at least 256; 0 for a literal) times the bytes the regex runs over. Over it:
   * `GREP_TOO_COSTLY`. Default 2^32 = 4294967296 (`(.*){999}x` over 100 KB is refused at once;
   * `\w+` may scan 16 MiB).
   */
  maxGrepCost?: number;
  /** The host clock in seconds. Default `Date.now() / 1000`. */
  now?: () => number;
}

/** A page of a blob. Concatenating every page's `text` gives the blob back. */
export interface SpillPage {
  /** Lines skipped before the page. */
  offset: number;
  count: number;
  totalLines: number;
  totalBytes: number;
  /** The `offset` of the next page; null after the last line. */
  nextOffset: number | null;
  text: string;
}

/** Options of `SpillStore.grep`. */
export interface GrepOptions {
  /** Search the pattern as plain text. Default false (small regex dialect). */
  literal?: boolean;
  ignoreCase?: boolean;
  /** Context lines around each match. Default 2. */
  context?: number;
  /** Default 50. */
  maxMatches?: number;
  /** Matching lines to skip (paging). */
  skip?: number;
  /** Work budget of this search (see `SpillStoreOptions.maxGrepCost`); at most the store's. */
  maxCost?: number;
}

/** One line of a grep result. */
export interface GrepLine {
  /** 1-based. */
  number: number;
  isMatch: boolean;
  /** The line, or a window of it around the match when long. */
  text: string;
  /** Byte offset of `text` in the line. */
  column: number;
  lineBytes: number;
}

/** What `SpillStore.grep` found. */
export interface GrepResult {
  totalLines: number;
  totalMatches: number;
  skipped: number;
  returned: number;
  lines: GrepLine[];
  /** The `skip` of the next page of matches; null after the last one. */
  nextSkip: number | null;
  /** The lines `grep -n` style (`12:match`, `11-context`, `--` between groups, `…` where a long line was cut). */
  text: string;
}

/** The result of a `read_spill` / `grep_spill` call, to send back as the tool result. */
export interface ToolReply {
  text: string;
  /** The model made a mistake it can fix (bad arguments, unknown pointer, bad pattern). */
  isError: boolean;
}

/** A text after `SpillStore.spill`. */
export interface SpilledText {
  /** The excerpt, or the text itself when under the cap. */
  text: string;
  spilled: boolean;
  pointer?: string;
  /** Why the full text could not be kept (the excerpt says so too). */
  refused?: string;
  tokensBefore: number;
  tokensAfter: number;
}

/** Tool-definition formats. */
export type ToolFormat = 'openai-chat' | 'openai' | 'openai-responses' | 'anthropic';

/** In-memory spill store inside wasm. */
/** What `SpillStore.importCache` added. */
export interface CacheImport {
  /** Snapshots added to the render cache. */
  snapshots: number;
  /** Token counts added. */
  counts: number;
  /** Written by another TraceLite version: nothing was added. */
  stale: boolean;
}

/** What a store's caches hold (`SpillStore.cacheStats`). */
export interface CacheStats {
  /** Snapshots held (layouts, rendered or not). */
  snapshots: number;
  /** Bytes they hold. */
  snapshotBytes: number;
  /** Snapshots rendered by this store (not imported). */
  rendered: number;
  /** Token counts held. */
  counts: number;
  /** Bytes of text the counter priced (not found in the cache). */
  countedBytes: number;
}

export class SpillStore {
  constructor(options?: SpillStoreOptions);
  get(session: string, key: string): string;
  /** `INVALID_ARGUMENT` (at `session`, `key` or `text`) for a string with a lone UTF-16 surrogate. */
  put(session: string, key: string, text: string): void;
  contains(session: string, key: string): boolean;
  list(session: string): { key: string; bytes: number; lines: number }[];
  delete(session: string, key: string): boolean;
  read(session: string, key: string, offset?: number, limit?: number): SpillPage;
  grep(session: string, key: string, pattern: string, options?: GrepOptions): GrepResult;
  evict(session: string): number;
  sweep(now?: number): number;
  usage(): { totalBytes: number; sessions: string[]; limits: { maxBytes: number; maxSessionBytes: number; ttlSeconds: number; maxGrepCost: number } };
  rehydrate(spills: SpillBlob[]): number;
  handleToolCall(name: string, args: string | Record<string, unknown>, session: string): ToolReply;
  spill(text: string, options?: Record<string, unknown> & { countTokens?: (text: string) => number }): SpilledText;
  /**
   * New cache entries (snapshots, token counts) since the last call as a segment to keep
   * outside; everything with `all`; `undefined` when nothing is new (with `renderedOnly`:
   * no new rendered snapshot).
   */
  exportCache(options?: { all?: boolean; renderedOnly?: boolean }): string | undefined;
  /**
   * Adds a segment `exportCache` wrote; `INVALID_CACHE` when malformed;
   * `LIMIT_EXCEEDED` (at `limits.maxRequestBytes` of `options`) when larger, refused
   * before it is copied into wasm memory.
   */
  importCache(segment: string, options?: Record<string, unknown>): CacheImport;
  /** What the caches hold and rendered here. */
  cacheStats(): CacheStats;
  free(): void;
  [Symbol.dispose](): void;
}

/** `['read_spill', 'grep_spill']`. */
export const SPILL_TOOL_NAMES: readonly ['read_spill', 'grep_spill'];
export function isSpillTool(name: string): boolean;
/** Tool definitions (JSON Schema) of read_spill and grep_spill in the provider's format. */
export function spillToolDefinitions(format?: ToolFormat): Record<string, unknown>[];
/** Runs a read_spill / grep_spill call; `where` is a session name (default store) or `{ store, session }`. */
export function handleToolCall(
  name: string,
  args: string | Record<string, unknown>,
  where: string | { store?: SpillStore; session?: string },
): ToolReply;
/** The store `compress` uses when no `options.store` is given. */
export function sharedStore(): SpillStore;
