// TypeScript types of the TraceLite package. Each options object mirrors a
// struct of src/config.rs (same names, camelCase); defaults are documented there.

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
  /** Cap as a share of the budget. Default 0.25. */
  fraction?: number;
  /** Head share of the excerpt. Default 0.65. */
  headShare?: number;
  errorPatterns?: string[];
  maxErrorLines?: number;
}

/** Stage 2 settings. */
export interface DedupOptions {
  enabled?: boolean;
  /** Lines whose trimmed length is at most this are kept. Default 5. */
  minLineChars?: number;
}

/** Stage 3 settings. */
export interface PhaseOptions {
  enabled?: boolean;
  /** Also clean up at later edit phases. Default false. */
  everyPhase?: boolean;
  editTools?: string[];
}

/** Stage 4 settings. */
export interface OpticalOptions {
  enabled?: boolean;
  /** Render only if image tokens ≤ text tokens / ratio. Default 2. */
  ratio?: number;
  batch?: number;
  fontPx?: number;
  minFontPx?: number;
  maxMissingShare?: number;
  detail?: 'high' | 'low';
  mediaResolution?: '' | 'low' | 'medium' | 'high';
  patchMultiplier?: number;
  maxImages?: number;
}

/** Stage 5 settings. */
export interface CompactOptions {
  enabled?: boolean;
  /** Default 100000 tokens. */
  threshold?: number;
  /** Messages kept verbatim. Default 6. */
  keep?: number;
  minTurns?: number;
  constraintPatterns?: string[];
  pinned?: string[];
  planner?: boolean;
}

/** Secret redaction. */
export interface RedactOptions {
  /** Mask secrets in excerpts, snapshots and summaries. Default true. */
  enabled?: boolean;
  /** Also mask them in the spill store. Default false. */
  store?: boolean;
}

/** Resource limits. */
export interface LimitOptions {
  maxRequestBytes?: number;
  maxMessages?: number;
  maxDepth?: number;
  maxImagePixels?: number;
  maxSpillBytesPerSession?: number;
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
  spill?: SpillOptions;
  dedup?: DedupOptions;
  phase?: PhaseOptions;
  optical?: OpticalOptions;
  compact?: CompactOptions;
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
  stages: StageReport[];
  changes: Change[];
  spills: SpillRecord[];
  /** Repairs made (repair mode) and snapshot images replaced to respect provider limits. */
  repairs?: import('./formats.js').Repair[];
  /** Secrets masked (counts and kinds, never values). */
  redactions: { count: number; kinds: string[] };
  prefix?: { sharedBytes: number; previousBytes: number; currentBytes: number };
}

/** In-memory spill store inside wasm. */
export class SpillStore {
  constructor();
  get(session: string, key: string): string;
  put(session: string, key: string, text: string): void;
  list(session: string): { key: string; bytes: number; lines: number }[];
  delete(session: string, key: string): boolean;
  free(): void;
  [Symbol.dispose](): void;
}

/** Compresses a provider request; the output has the input's format. */
export function compress<T extends object = Record<string, unknown>>(
  request: T | string,
  options?: CompressOptions,
): { request: T; report: Report; spills: SpillBlob[] };

/** Estimated o200k_base tokens of a text. */
export function estimateTokens(text: string): number;

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

export * from './formats.js';
