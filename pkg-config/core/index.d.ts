// TypeScript types of the TraceLite package. Each options object mirrors a
// struct of src/config.rs (same names, camelCase); defaults are documented there.
import type { SpillStore } from './spill.js';
export * from './spill.js';

/** Request formats. */
export type FormatName = 'openai-chat' | 'openai-responses' | 'anthropic' | 'gemini';
/** Target provider: decides how images are priced and placed. */
export type Provider = 'anthropic' | 'openai' | 'openai-patch' | 'gemini' | 'qwen';
/** The five stages, in the order they run. */
export type StageName = 'spill' | 'dedup' | 'phase' | 'optical' | 'compact';

/** Stable error codes of `TraceLiteError`. */
export type ErrorCode =
  | 'INVALID_JSON' | 'INVALID_REQUEST' | 'UNKNOWN_FORMAT' | 'INVALID_OPTION'
  | 'LIMIT_EXCEEDED' | 'SPILL_NOT_FOUND' | 'INVALID_SPILL_KEY' | 'STORE_REFUSED'
  | 'INVALID_PATTERN' | 'INVALID_TOOL_CALL' | 'COUNTER_FAILED' | 'SUMMARIZER_FAILED'
  | 'RENDER_FAILED' | 'STORE_FAILED' | 'GREP_TOO_COSTLY' | 'INVALID_ARGUMENT' | 'SPILL_CORRUPT'
  // Tool-call pairing of a request (src/formats/validate.rs).
  | 'ORPHAN_TOOL_RESULT' | 'MISSING_TOOL_RESULT' | 'DUPLICATE_TOOL_CALL_ID' | 'DUPLICATE_TOOL_RESULT'
  | 'MISPLACED_TOOL_RESULT' | 'INVALID_ROLE_ORDER'
  // Edge proxy (tracelite/proxy).
  | 'STORE_WRITE_LIMIT' | 'MISSING_SESSION' | 'INVALID_SESSION_TOKEN' | 'NOT_FOUND'
  | 'INVALID_IMAGE_SIGNATURE' | 'IMAGE_NOT_FOUND'
  | (string & {});

/** Thrown by every function: `code` is stable, `path` names the offending field. */
export class TraceLiteError extends Error {
  constructor(message: string, code: ErrorCode, path?: string);
  readonly name: 'TraceLiteError';
  readonly code: ErrorCode;
  readonly path: string;
}

/** Stage 1 settings (src/config.rs `SpillConfig`). */
export interface SpillOptions {
  enabled?: boolean;
  /** Minimum cap per tool result, tokens. Default 2000. */
  floorTokens?: number;
  /** Cap as a share of the budget. Default 0.02 (2,560 tokens, about 10 KB, at the default budget). */
  fraction?: number;
  /** Head share of the excerpt. Default 0.65. */
  headShare?: number;
  /** Patterns (the core's small regex dialect) marking the error lines of the hidden
   * middle that the excerpt lists, matched ignoring ASCII case (`(?-i)` restores it).
   * Default `['Traceback', 'Error', 'FATAL', 'CRITICAL', 'npm ERR!', 'panic', 'Exception',
   * 'FAILED', 'exit code [1-9]', 'returncode>[1-9]']`; replacing it drops these. */
  errorPatterns?: string[];
  /** Most hidden lines matching `errorPatterns` the excerpt lists besides the critical ones
   * (the last line of each traceback, error lines, failing tests: all listed, marked `!`, within
   * 1,600 bytes). Default 5. */
  maxErrorLines?: number;
}

/** Stage 2 settings (src/config.rs `DedupConfig`): an observation loses the lines
 * that reappear in a later observation inside the recent window. */
export interface DedupOptions {
  enabled?: boolean;
  /** Lines whose trimmed length is at most this are kept. Default 5. */
  minLineChars?: number;
  /** Edit earlier observations only on the turns a batch (`optical.batch`) leaves the
   * recent window, so the prompt prefix stays byte-identical between batches and
   * provider prompt caches keep working; `false` edits on every new observation.
   * Default true. */
  batched?: boolean;
}

/** Stage 3 settings (src/config.rs `PhaseConfig`): once the agent first changes a
 * file that existed before the session (creating a file, or editing one it created,
 * is still diagnosis), outputs that were consumed or superseded, and have left the
 * recent window, become tombstones with a pointer to the original. */
export type PhaseClear = 'searches' | 'listings' | 'reruns' | 'editedViews';

export interface PhaseOptions {
  enabled?: boolean;
  /** Keep clearing after the phase began (outputs a later change consumed, outputs of
   * commands run again), at each batch; off, the clean-up happens once. Default false. */
  everyPhase?: boolean;
  /** What is cleared: searches and listings that led to the change, outputs of
   * commands run again later, views of a file edited since. Default all four. */
  clear?: PhaseClear[];
  /** Edit tools: `name` or `name:command` (e.g. `str_replace_editor:create`). */
  editTools?: string[];
  /** Shell tools whose commands are scanned for file writes. */
  shellTools?: string[];
  /** A failed edit (error result) does not start a phase. Default true. */
  skipFailed?: boolean;
  /** Globs (`*`) on path components of edit targets that do not start a phase, e.g. `reproduce*`. Default []. */
  ignoreTargets?: string[];
}

/** Stage 4 settings (src/config.rs `OpticalConfig`). */
export interface OpticalOptions {
  enabled?: boolean;
  /** Render only if image tokens (+ the one-line reference) ≤ text tokens / ratio. Default 2. */
  ratio?: number;
  /** Observations leave the window in batches of this many (prefix cache). Default 3. */
  batch?: number;
  /** Largest font pixel height (4–64). Default 12. */
  fontPx?: number;
  /** Smallest font pixel height; the largest size reaching the lowest cost is used. Default 10. */
  minFontPx?: number;
  /** Blank pixel rows between lines (0–3). Default 1. */
  lineGap?: number;
  /** Narrowest wrap width in columns. Default 60. */
  minColumns?: number;
  /** PNG grayscale bit depth: 1, 2, 4 or 8. Default 2. */
  bitDepth?: 1 | 2 | 4 | 8;
  /** Share of glyphs missing from the font above which an observation stays text. Default 0.05. */
  maxMissingShare?: number;
  /** When line by line costs more than 1/ratio of the text, run the lines together with `»` marking each break (default true). */
  reflow?: boolean;
  detail?: 'high' | 'low';
  mediaResolution?: '' | 'low' | 'medium' | 'high';
  patchMultiplier?: number;
  /** Images per request, counting images already present. Default 50. */
  maxImages?: number;
  /** Render cache bytes per session. Default 33554432. */
  cacheBytes?: number;
  /** Keep views of files not edited since (what an edit may quote in its `old_str`)
   * as text instead of rendering them, the newest `maxLiveViews`. Default false
   * (`make bench`: on, 7 more multi-line `old_str` of 130 stay text and 5 points more
   * of the facts the next call uses, for about 2 points less saved on each provider's $). */
  keepLiveViews?: boolean;
  /** How many live views `keepLiveViews` keeps as text, the newest; older ones are
   * rendered. 0: no bound. A count, so the kept set changes only when the planner moves
   * the rendered boundary (a cached prefix stays intact). Default 1. */
  maxLiveViews?: number;
}

/** Stage 5 settings (src/config.rs `CompactConfig`). */
export interface CompactOptions {
  /** Off means off: no trigger, no re-applied summary. Default true. */
  enabled?: boolean;
  /** Default 100000 tokens; never closer to the budget than one capped tool result. */
  threshold?: number;
  /** Messages kept verbatim (the cut moves so no tool call loses its result). Default 6. */
  keep?: number;
  /** Turns between compactions unless the budget forces one. Default 5. */
  minTurns?: number;
  /** Phrases marking user constraints kept word for word. */
  constraintPatterns?: string[];
  /** Constraints pinned by the host. */
  pinned?: string[];
  /** Compact only when the cache-aware cost estimate (`plan` prices and horizon) says it pays. Default true. */
  planner?: boolean;
  /** Do not compact for less than this many tokens. Default 2000. */
  minSaving?: number;
  /** Detect stage boundaries (a passing test or run after an edit). Default true. */
  detectStages?: boolean;
  /**
   * Keep every compacted tool call (name and arguments verbatim, in order) in a tool-call log after the summary.
   * Secrets in the arguments are masked (`[REDACTED:kind]`) when `redact.enabled` (default); the originals stay
   * in the spill store. Default true.
   */
  keepToolCalls?: boolean;
  /** Share of the budget the user's own messages (task, later instructions) may fill
   * when compaction keeps them word for word, first in the request; beyond it the
   * oldest (never the first nor the newest) go behind a pointer, quoted by a 240-byte
   * head/tail excerpt, and their constraints into the archive. Default 0.05 (6,400
   * tokens of the default budget): with `callLogShare` and `summaryShare` it bounds what
   * compactions carry forward, so a long session's cost per turn stays flat. */
  userShare?: number;
  /** Tokens of live outputs a compaction keeps as they were shown, after the summary:
   * the newest output of each file view, search and edit result of the compacted turns
   * that no later turn ran again (an edit quotes the lines it replaces from them).
   * Newest first; each names its call and original. 0 keeps none. Default 4000. */
  liveViews?: number;
  /** Share of the budget the tool-call log may fill; beyond it its oldest calls are
   * folded into one line (how many, by tool) citing the compaction's blob, which holds
   * them verbatim, so a session of any length stays inside the budget. In (0, 1].
   * Default 0.04. */
  callLogShare?: number;
  /** Share of the budget the summary may fill; beyond it the oldest lines of Progress,
   * Key facts and Decisions (critical error lines last) leave it, with one line citing
   * the previous summary (kept verbatim in the compaction's blob). A host summarizer's
   * prompt asks for a summary within it, and an adopted answer over it is fitted the same
   * way. In (0, 1]. Default 0.04. */
  summaryShare?: number;
}

/** Secret redaction. */
export interface RedactOptions {
  /**
   * Mask secrets in excerpts, snapshots, summaries and the tool-call log (arguments of compacted calls).
   * Not in the spill store unless `store`: `read_spill` and the proxy's `GET /spill` routes serve stored text.
   * Default true.
   */
  enabled?: boolean;
  /** Also mask them in the spill store. Default false. */
  store?: boolean;
}

/** Resource limits. */
export interface LimitOptions {
  maxRequestBytes?: number;
  maxMessages?: number;
  maxDepth?: number;
  /** Largest inline image (width × height from its PNG/JPEG/GIF/WebP header); over it: `LIMIT_EXCEEDED` at the image's JSON path. Default 50,000,000. */
  maxImagePixels?: number;
  maxSpillBytesPerSession?: number;
  /** Most `spill.errorPatterns`; over it: `LIMIT_EXCEEDED` at `spill.errorPatterns`. Default 64. */
  maxErrorPatterns?: number;
  /**
   * `TraceLite` sessions: bytes of raw tool output held. Past it the oldest outputs outside the recent
   * window are spilled in place (the history keeps their excerpt and pointer). Default 32 MiB.
   */
  maxHistoryBytes?: number;
  /** Most messages one compaction replaces; a longer history is compacted in chunks, oldest first, over several calls (the compact stage's notes say so). Default 10,000. */
  maxCompactMessages?: number;
  /** Most bytes of originals one compaction keeps in its one spill blob; chunked like `maxCompactMessages`. Default 4 MiB. */
  maxCompactBytes?: number;
}

/** Prompt-cache prices in US dollars per million input tokens. */
export interface Prices { input: number; cachedInput: number; cacheWrite: number }

/** The planner (src/plan/mod.rs `PlanConfig`): when a rewrite of the cached prefix pays. */
export interface PlanOptions {
  /** Move the boundary of the history the rewriting stages touch only when it pays
   * (else in fixed batches of `optical.batch`). Default true. */
  enabled?: boolean;
  /** Turns still to come; 0 derives it from the turns so far. Default 0. */
  horizon?: number;
  /** Smallest derived horizon. Default 10. */
  minHorizon?: number;
  /** Largest derived horizon: a rewrite must pay back within this many turns. Default 15. */
  maxHorizon?: number;
  /** Prices; the dated table for `provider` by default. */
  prices?: Prices;
}

/** One rewrite the planner weighed on this call. */
export interface PlanCandidate {
  kind: 'demotion' | 'compaction';
  /** Demotion: the observations (oldest first, `[from, to)`) it hands to the rewriting stages. */
  observations?: [number, number];
  /** Tokens each later request is smaller by (estimate). */
  tokensSaved: number;
  /** Tokens of the cached prefix it sends again. */
  tokensRewritten: number;
  /** Dollars it adds to this request. */
  costNow: number;
  /** Dollars it saves over the horizon. */
  saving: number;
  horizon: number;
  committed: boolean;
  reason: string;
}

/** What the planner committed and deferred on this call. */
export interface PlanReport {
  prices: Prices;
  pricesSource: string;
  /** Observations handed to the rewriting stages so far. */
  demoted: number;
  candidates: PlanCandidate[];
}

/** Settings of one compress call (src/config.rs `Config`). */
export interface CompressSettings {
  format?: FormatName;
  provider?: Provider;
  /** Context window in tokens. Default 128000. */
  budget?: number;
  /** Tool results kept verbatim. Default 3. */
  window?: number;
  /** Spill namespace. Default "default". */
  session?: string;
  stageBoundary?: boolean;
  /** Repair tool-call pairing problems instead of rejecting the request. Default false. */
  repair?: boolean;
  /** Anthropic Messages: put an ephemeral `cache_control` breakpoint at the end of the
   * stable prefix (`report.stableMessages`) unless the request already has 4 or every stage
   * is off. Default true. */
  cacheBreakpoint?: boolean;
  spill?: SpillOptions;
  dedup?: DedupOptions;
  phase?: PhaseOptions;
  optical?: OpticalOptions;
  compact?: CompactOptions;
  plan?: PlanOptions;
  redact?: RedactOptions;
  limits?: LimitOptions;
}

/** Settings plus host objects. */
export interface CompressOptions extends CompressSettings {
  /** Where spills and caches live; a module-wide store by default. */
  store?: SpillStore;
  /** Your tokenizer; the built-in o200k estimator by default. */
  countTokens?: (text: string) => number;
  /** The previous compressed request, to measure prefix reuse. */
  previous?: object | string;
}

/** One change a stage made. */
export interface Change {
  stage: StageName;
  /** Index into the emitted request's own list of messages (`messages`, Responses `input`,
   * Gemini `contents`), counting the system messages it holds and the messages the emitter
   * adds (tool-result images moved to a user message). A change to a message that compaction
   * then folded into its summary indexes the summary. */
  message: number;
  kind: string;
  tokensBefore: number;
  tokensAfter: number;
  pointer?: string;
  detail?: string;
}

/** A blob stored during the call (metadata; the report never holds removed text). */
export interface SpillRecord {
  session: string;
  key: string;
  pointer: string;
  bytes: number;
  lines: number;
}

/** The text of a blob stored during the call, to persist elsewhere and rehydrate a store. */
export interface SpillBlob {
  session: string;
  key: string;
  text: string;
}

/** A snapshot sent by URL (`optical.imageUrl`): what the host must serve at `url`. */
export interface UrlImage {
  /** Content id: 32 hex digits, the hash part of the content key `image-<id>` of `data` (store it under that key). */
  id: string;
  /** The URL the request carries. */
  url: string;
  mediaType: 'image/png';
  width: number;
  height: number;
  /** Decoded size in bytes. */
  bytes: number;
  /** The PNG, base64. */
  data: string;
}

/** With `optical.imageUrl`: what went by URL and what stayed inline. */
export interface ImageUrlReport {
  /** Snapshot image parts the request carries as URLs. */
  urls: number;
  /** Distinct images behind them (the result's `images`). */
  images: number;
  /** Their decoded bytes: served by the host instead of sent inline. */
  bytes: number;
  /** Snapshot image parts kept inline (the format takes no image URLs: gemini). */
  inline: number;
  /** Why they stayed inline. */
  note?: string;
}

/** Token totals of one stage. */
export interface StageReport {
  stage: StageName;
  enabled: boolean;
  tokensBefore: number;
  tokensAfter: number;
  notes?: string[];
}

/** What a compress call did. */
export interface Report {
  format: FormatName;
  tokensBefore: number;
  tokensAfter: number;
  /** Bytes of the request JSON as received. */
  bytesBefore: number;
  /** Bytes of the request JSON as emitted: snapshots travel as base64 PNG (unless
   * `optical.imageUrl` sends them by URL), so bytes may grow while tokens fall. */
  bytesAfter: number;
  /** With `optical.imageUrl`: snapshots sent by URL, their bytes, and those kept inline. */
  imageUrls?: ImageUrlReport;
  stages: StageReport[];
  changes: Change[];
  spills: SpillRecord[];
  /** Repairs made (repair mode) and snapshot images replaced to respect provider limits. */
  repairs?: import('./formats.js').Repair[];
  /** Secrets masked (counts and kinds, never values). */
  redactions: { count: number; kinds: string[] };
  prefix?: { sharedBytes: number; previousBytes: number; currentBytes: number };
  /** Messages after the system prompt that stay byte-identical until the next batch
   * leaves the recent window (unless compaction or a new edit phase rewrites history):
   * where a prompt-cache breakpoint pays. */
  stableMessages: number;
  /** The planner's decisions, in dollars. */
  plan: PlanReport;
  /** Anthropic: index (after the system prompt) of the last message of the stable prefix, when it got a breakpoint. */
  cacheBreakpoint?: number;
  /** Anthropic: every message TraceLite gave a breakpoint, by priority (at most 4 with the caller's own):
   * the stable prefix (the next demotion reads it), the end of the request (the next turn reads it)
   * and the end of the leading user messages (a compaction keeps them first, so it reads them). */
  cacheBreakpoints?: number[];
}

/** Compresses a provider request; the output has the input's format. */
export function compress<T extends object = Record<string, unknown>>(
  request: T | string,
  options?: CompressOptions,
): {
  request: T;
  report: Report;
  spills: SpillBlob[];
  /** With `optical.imageUrl`: every snapshot the request carries by URL, once each, to serve at its `url`. */
  images: UrlImage[];
};

/** Estimated o200k_base tokens of a text. */
export function estimateTokens(text: string): number;

/** What the redactor masked: the text, how many secrets, which detectors (never values). */
export interface Redacted<T = string> { text: T; count: number; kinds: string[] }
/** Masks secrets in a text as the core masks them in excerpts (`[REDACTED:<kind>]`). */
export function redactText(text: string): Redacted;
/** Masks secrets in every string value of a parsed JSON value (keys kept), in place where it can. */
export function redactJson<T>(value: T): { value: T; count: number; kinds: string[] };

/** The library version. */
export function version(): string;

/** A trajectory in the `../shared/traces` schema. */
export interface Trajectory {
  id?: string;
  task: string;
  system?: string | null;
  steps: { thought?: string | null; tool: string; args?: unknown; observation?: string }[];
}

/** The request an agent loop sends before step `t`. */
export function trajectoryToRequest(trajectory: Trajectory | string, t: number, format?: FormatName): Record<string, unknown>;

export * from './compact.js';
export * from './config.js';
export * from './replay.js';
export * from './session.js';
export * from './optical.js';
export * from './formats.js';
export * from './memory.js';
