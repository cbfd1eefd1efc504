// Generated from the Rust declarations by tests/ts_types.rs: do not edit.
// `TRACELITE_BLESS=1 cargo test --test ts_types` rewrites it.
import type { FormatName, Prices } from './options.js';

/** What a compress call did. */
export interface Report {
  /**
   * Set when the request as emitted still exceeds `budget` after every
   * stage (with `limits.overBudget: "error"` the call fails with
   * `OVER_BUDGET` instead).
   */
  overBudget?: OverBudget;
  /** Detected or requested format. */
  format: FormatName;
  /** Tokens of the request as received. */
  tokensBefore: number;
  /** Tokens of the request as emitted. */
  tokensAfter: number;
  /**
   * Bytes of the request JSON as received (for the stateful session: its
   * history emitted as is).
   */
  bytesBefore: number;
  /**
   * Bytes of the request JSON as emitted. Snapshots travel as base64 PNG
   * (unless `optical.imageUrl` sends them by URL: see `image_urls`), so
   * bytes may grow while tokens fall.
   */
  bytesAfter: number;
  /**
   * With `optical.imageUrl`: snapshots sent by URL, the bytes the host
   * serves for them, and those kept inline (with why).
   */
  imageUrls?: ImageUrlReport;
  /** Per stage, in order. */
  stages: StageReport[];
  /** Every change, in order. */
  changes: Change[];
  /** Blobs stored during this call. */
  spills: SpillRecord[];
  /**
   * Fixes made in repair mode (`options.repair`) and snapshot images
   * replaced to stay within the provider's image limits.
   */
  repairs?: Repair[];
  /** Secrets masked in what reaches the model (counts and kinds, never values). */
  redactions: Redactions;
  /** Prefix shared with `previous`, when one was given. */
  prefix?: PrefixReport;
  /**
   * Messages after the system prompt that stay byte-identical until the
   * next batch leaves the recent window (unless a compaction or a new
   * edit phase rewrites history first): where a prompt-cache breakpoint pays.
   */
  stableMessages: number;
  /** What the planner committed and deferred, in dollars. */
  plan: PlanReport;
  /**
   * Anthropic Messages: index (after the system prompt) of the message
   * whose last cacheable block got a `cache_control` breakpoint
   * (`options.cacheBreakpoint`).
   */
  cacheBreakpoint?: number;
  /**
   * Anthropic Messages: every message TraceLite gave a breakpoint, in the
   * order they were placed (at most 4 with the caller's own): the stable
   * prefix (the next demotion reads it), the end of the request (the next
   * turn reads all of it) and the end of the leading user messages (a
   * compaction keeps them and the system prompt first, so it reads them).
   */
  cacheBreakpoints?: number[];
  /** What compaction did on this call: absent when it did nothing. */
  compaction?: CompactionOutcome;
}

/**
 * The text of a blob stored during this call, so a host can persist it
 * elsewhere (a KV store) and rehydrate a store later.
 */
export interface SpillBlob {
  /** Session. */
  session: string;
  /** Key within the session. */
  key: string;
  /** The full text as stored. */
  text: string;
}

/** A snapshot sent by URL: what the host must serve at `url`. */
export interface UrlImage {
  /** Content id (32 hex digits): the hash part of the content key `image-<id>` of `data`. */
  id: string;
  /** The URL the request carries (the template with `{id}` replaced). */
  url: string;
  /** MIME type (`image/png`). */
  mediaType: 'image/png';
  /** Width in pixels. */
  width: number;
  /** Height in pixels. */
  height: number;
  /** Decoded size in bytes (what the host sends). */
  bytes: number;
  /** The image, base64. */
  data: string;
}

/** A request still over `budget` after every stage (`report.overBudget`). */
export interface OverBudget {
  /** Tokens of the request as emitted. */
  tokens: number;
  /** The `budget` option. */
  budget: number;
  /**
   * Path of the message with the most tokens, in the request's own format
   * (e.g. `messages[3]`, `input[3]`, `contents[3]`).
   */
  largest: string;
  /** Tokens of that message. */
  largestTokens: number;
}

/** What `send_by_url` did, for the report. */
export interface ImageUrlReport {
  /** Snapshot image parts the request carries as URLs. */
  urls: number;
  /** Distinct images behind them (the result's `images`). */
  images: number;
  /** Decoded bytes of those images: what the host serves instead of sending them inline. */
  bytes: number;
  /** Snapshot image parts kept inline (the format does not take URLs). */
  inline: number;
  /** Why they were kept inline. */
  note?: string;
}

/** Token totals of one stage. */
export interface StageReport {
  /** Stage. */
  stage: StageName;
  /** Whether it ran. */
  enabled: boolean;
  /** Tokens before the stage. */
  tokensBefore: number;
  /** Tokens after the stage. */
  tokensAfter: number;
  /** Decisions the stage explains (e.g. why it did not compact). */
  notes?: string[];
}

/** What a stage changed at one place. */
export interface Change {
  /** Stage that made the change. */
  stage: StageName;
  /**
   * Index into the emitted request's own list of messages (`messages`,
   * Responses `input`, Gemini `contents`), counting the system messages
   * that list holds and the messages the emitter adds (images moved out
   * of tool results). A change to a message that compaction later folded
   * into its summary indexes the summary.
   */
  message: number;
  /** What happened, e.g. `excerpt`, `dedup`, `tombstone`, `snapshot`, `summary`. */
  kind: string;
  /** Tokens of the affected content before the change. */
  tokensBefore: number;
  /** Tokens after the change. */
  tokensAfter: number;
  /** Pointer to the removed original, when it was kept. */
  pointer?: string;
  /** Short human-readable detail. */
  detail?: string;
}

/**
 * A blob a stage put in the spill store during this call (metadata only: the
 * report never carries the removed text, which may hold secrets).
 */
export interface SpillRecord {
  /** Session. */
  session: string;
  /** Key within the session. */
  key: string;
  /** `spill://<session>/<key>`. */
  pointer: string;
  /** Size in bytes. */
  bytes: number;
  /** Number of lines. */
  lines: number;
}

/** One fix made by `repair`. */
export interface Repair {
  /** The error code the problem would have raised (e.g. `ORPHAN_TOOL_RESULT`). */
  code: string;
  /** JSON path of the offending field in the request as received. */
  path: string;
  /** What was done. */
  action: string;
}

/** What a redaction pass masked. */
export interface Redactions {
  /** Number of secrets masked. */
  count: number;
  /** Kinds masked, in order of first appearance (no values). */
  kinds: string[];
}

/** Prefix stability against the previous output. */
export interface PrefixReport {
  /** Bytes shared at the start of the previous and the new request. */
  sharedBytes: number;
  /** Length of the previous request. */
  previousBytes: number;
  /** Length of the new request. */
  currentBytes: number;
}

/** The planner's decisions on this call. */
export interface PlanReport {
  /** Prices used. */
  prices: Prices;
  /** Where they come from. */
  pricesSource: string;
  /** Observations handed to the rewriting stages so far. */
  demoted: number;
  /** Every candidate weighed on this turn. */
  candidates: PlanCandidate[];
}

/** What the compact stage did on a call (`report.compaction`). */
export interface CompactionOutcome {
  /** `compacted` (a new compaction) or `reapplied` (the previous one, byte for byte). */
  outcome: CompactionKind;
  /** Incoming messages the compaction stands for. */
  covered: number;
  /** A new compaction: the blob of its originals, cited by its summary. */
  pointer?: string;
}

/** The five stages, in the order they run. */
export type StageName = 'spill' | 'dedup' | 'phase' | 'optical' | 'compact';

/** One rewrite the planner weighed on this turn. */
export interface PlanCandidate {
  /** What it rewrites. */
  kind: CandidateKind;
  /** Demotion: the observations (oldest first, `[from, to)`) it hands over. */
  observations?: [number, number];
  /** Tokens each later request is smaller by (estimate). */
  tokensSaved: number;
  /** Tokens of the cached prefix it sends again. */
  tokensRewritten: number;
  /** Dollars it adds to this request (negative: it is cheaper already). */
  costNow: number;
  /** Dollars it saves over the horizon. */
  saving: number;
  /** Turns the saving is counted over. */
  horizon: number;
  /** Observations it takes out of the text. */
  hidden: number;
  /**
   * Facts those hold that no message of the user or the agent held
   * (`activity::recall`).
   */
  hiddenFacts: number;
  /**
   * Probability that the agent needs one of them again within the
   * horizon (`activity::recall::Recall::likelihood`).
   */
  recoveryProbability: number;
  /**
   * Expected dollars of the turns spent getting them back: per hidden
   * observation, its probability times one more request of the whole
   * context (cached) reading it back (uncached).
   */
  expectedRecovery: number;
  /** Committed on this turn (else deferred). */
  committed: boolean;
  /** Why. */
  reason: string;
}

/** Whether a compaction is new or re-applied. */
export type CompactionKind = 'compacted' | 'reapplied';

/** What a candidate rewrite is. */
export type CandidateKind = 'demotion' | 'compaction';

