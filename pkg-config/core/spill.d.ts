// Types of pkg-config/core/spill.js (Rust: src/spill/, src/wasm/spill.rs).
import type { SpillBlob } from './index.js';

/** Bounds of a SpillStore (Rust `StoreLimits`). */
export interface SpillStoreOptions {
  /**
   * Bytes kept across all sessions; least-recently-used sessions are evicted past it (reading
   * their spills then gives `SPILL_NOT_FOUND` saying they expired). Default 64 MiB.
   */
  maxBytes?: number;
  /** Bytes kept per session; a blob past it is refused. Default 16 MiB. */
  maxSessionBytes?: number;
  /** Sessions unused this long are removed by `sweep`. Default 7 days; 0 = never. */
  ttlSeconds?: number;
  /**
   * Work one grep (or `grep_spill` call) may do: the pattern's compiled program size in bytes (a power
   * of two, at least 256; 0 for a literal) times the bytes the regex runs over. Over it:
   * `GREP_TOO_COSTLY`. Default 2^26 = 67108864: a search at the cap takes about 5–60 ms in
   * wasm (`(.*){99}x` over 100 KB is refused at once; `\w+` may scan 256 KiB; a regex with a
   * literal of 2+ characters pays only for the lines holding it). Counted repetitions over
   * 100 (`{500}`) are `INVALID_PATTERN`.
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
  /** Work the search took (`maxGrepCost`'s units; 0 for a literal). */
  work: number;
}

/** The result of a `read_spill` / `grep_spill` call, to send back as the tool result. */
export interface ToolReply {
  text: string;
  /** The model made a mistake it can fix (bad arguments, unknown pointer, bad pattern). */
  isError: boolean;
  /** Search work the call took (`maxGrepCost`'s units; all of its budget when it ran out; 0 for `read_spill`). */
  work: number;
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

/** Tool-definition formats (`openai` is `openai-chat`). */
export type ToolFormat = 'openai-chat' | 'openai' | 'openai-responses' | 'anthropic' | 'gemini';

/** `read_spill` or `grep_spill`. */
export type SpillToolName = 'read_spill' | 'grep_spill';

/** JSON Schema of a spill tool's arguments. */
export type SpillToolSchema = {
  type: 'object';
  properties: { [argument: string]: { type: 'string' | 'integer' | 'boolean'; description: string; minimum?: number; maximum?: number } };
  required: string[];
  additionalProperties: false;
  [keyword: string]: unknown;
};

/** OpenAI Chat Completions tool (`ChatCompletionTool` of `openai`). */
export type OpenAIChatToolDefinition = {
  type: 'function';
  function: { name: SpillToolName; description: string; parameters: SpillToolSchema };
};

/** OpenAI Responses function tool (`FunctionTool` of `openai`); not strict, as some arguments are optional. */
export type OpenAIResponsesToolDefinition = {
  type: 'function';
  name: SpillToolName;
  description: string;
  parameters: SpillToolSchema;
  strict: false;
};

/** Anthropic Messages tool (`Tool` of `@anthropic-ai/sdk`, beta `BetaTool` too). */
export type AnthropicToolDefinition = { name: SpillToolName; description: string; input_schema: SpillToolSchema };

/** Gemini function declaration (`FunctionDeclaration` of `@google/genai`), for `tools: [{ functionDeclarations }]`. */
export type GeminiFunctionDeclaration = { name: SpillToolName; description: string; parametersJsonSchema: SpillToolSchema };

/** The definition type of each format. */
export interface SpillToolDefinitionOf {
  'openai-chat': OpenAIChatToolDefinition;
  openai: OpenAIChatToolDefinition;
  'openai-responses': OpenAIResponsesToolDefinition;
  anthropic: AnthropicToolDefinition;
  gemini: GeminiFunctionDeclaration;
}

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
  /** `args`: the call's arguments as the SDK hands them (JSON text, or the parsed object: Anthropic's `input`, Gemini's `args`). */
  handleToolCall(name: string, args: unknown, session: string): ToolReply;
  spill(text: string, options?: Record<string, unknown> & { countTokens?: (text: string) => number }): SpilledText;
  /**
   * New cache entries (snapshots, token counts) since the last call as a segment to keep
   * outside; everything with `all`; `undefined` when nothing is new (with `renderedOnly`:
   * no new rendered snapshot).
   */
  exportCache(options: {
    all?: boolean;
    renderedOnly?: boolean;
    /** The host's secret (at least 16 bytes) the segment is sealed with (HMAC-SHA256); required. */
    key: string | Uint8Array;
    /** The session the segment is for (default `'default'`): only it may import it. */
    session?: string;
  }): string | undefined;
  /**
   * Adds a segment `exportCache` wrote with `key` for `options.session`
   * (default `'default'`). `INVALID_CACHE` naming `cache.mac` when its MAC does
   * not verify (altered, truncated, forged, another session's or key's):
   * nothing of it is used; `INVALID_CACHE` naming the member when malformed;
   * `INVALID_OPTION` naming `key` without a key of at least 16 bytes;
   * `LIMIT_EXCEEDED` (at `limits.maxRequestBytes` of `options`) when larger, refused
   * before it is copied into wasm memory.
   */
  importCache(segment: string, options: Record<string, unknown> & { key: string | Uint8Array; session?: string }): CacheImport;
  /** What the caches hold and rendered here. */
  cacheStats(): CacheStats;
  /** Empties the caches, keeping the spills and the compaction state (outputs do not change). */
  clearCaches(): void;
  free(): void;
  [Symbol.dispose](): void;
}

/** `['read_spill', 'grep_spill']`. */
export const SPILL_TOOL_NAMES: readonly ['read_spill', 'grep_spill'];
export function isSpillTool(name: string): name is SpillToolName;
/**
 * Tool definitions (JSON Schema) of read_spill and grep_spill in the provider's format
 * (default `openai-chat`), typed so that they go into the SDK's `tools` as they are.
 */
export function spillToolDefinitions(): OpenAIChatToolDefinition[];
export function spillToolDefinitions<F extends ToolFormat>(format: F): SpillToolDefinitionOf[F][];
/**
 * Runs a read_spill / grep_spill call; `args` as the SDK hands them (OpenAI's `arguments`
 * text, Anthropic's `input`, Gemini's `args`); arguments the tool cannot use are an error
 * reply. `where` is a session name (default store) or `{ store, session }`; another
 * value is `INVALID_ARGUMENT` naming `where`.
 */
export function handleToolCall(
  name: string,
  args: unknown,
  where?: string | { store?: SpillStore; session?: string } | null,
): ToolReply;
/**
 * The async peer of `handleToolCall`, over any store: a `SpillStore` or one outside
 * wasm (`FileStore`, `KvSpillStore`, `DurableObjectSpillStore`, `RedisStore`, yours), as `compressAsync`
 * takes. Resolves the reply to send back; a mistake the model can fix is a reply with `isError`.
 */
export function handleToolCallAsync(
  name: string,
  args: unknown,
  where: string | { store?: SpillStoreLike; session?: string },
): Promise<ToolReply>;
/** The store `compress` uses when no `options.store` is given. */
export function sharedStore(): SpillStore;

/**
 * Any spill store: the in-memory `SpillStore`, or a store outside wasm (`FileStore`,
 * `KvSpillStore`, `DurableObjectSpillStore`, `RedisStore`, yours) with `get` and `put`, which
 * `compressAsync`, `handleToolCallAsync`, the adapters and the proxy take.
 */
export interface SpillStoreLike {
  get(session: string, key: string): string | Promise<string>;
  put(session: string, key: string, text: string): unknown;
}
