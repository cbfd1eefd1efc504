// Types of pkg-config/core/compact.js (compaction: async summarizer flow, pinned constraints, stage ends).
import type { CompressOptions, Report, SpillBlob, SpillStore, SpillStoreLike } from './index.js';

/** A host summarizer: answers the prepared prompt with the five-section summary text. */
export type Summarizer = (
  prompt: string,
  context: { attempt: number; problem?: string },
) => Promise<string> | string;

/** One summarizer attempt. */
export interface SummaryAttempt {
  ok: boolean;
  /** Why it was rejected (missing/empty sections, or what the summarizer threw). */
  problem?: string;
}

/** Where the summary of this call came from. */
export interface SummaryOutcome {
  source: 'none' | 'reapplied' | 'extractive' | 'summarizer';
  attempts: SummaryAttempt[];
}

/** Options of `compressAsync`. */
export interface CompressAsyncOptions extends Omit<CompressOptions, 'store'> {
  summarizer?: Summarizer;
  /**
   * Where spills and the compaction state live; pass the same store on every turn.
   * A `SpillStore` (default: a module-wide one), or a store outside wasm (`FileStore`,
   * `KvSpillStore`, `DurableObjectSpillStore`, `RedisStore`, yours): the call then resolves only after
   * every blob its pointers name is written there, and each session's caches and
   * compaction state stay in memory beside it (the 64 most recent sessions).
   */
  store?: SpillStoreLike;
  /**
   * `'path'`: pointers are the files of a `FileStore` (read with `sed -n` / `grep -n`);
   * `'spill'` (default): `spill://` pointers, read with `read_spill` / `grep_spill`.
   */
  pointer?: 'spill' | 'path';
  /**
   * With an outside store that can `list`: the host's secret (a string or bytes, ≥ 16 bytes)
   * sealing the session caches kept in it as segments, so another process starts warm.
   */
  cacheKey?: string | Uint8Array;
}

/** `compress` with an async LLM summarizer for compactions (validated, retried once, extractive fallback). */
export function compressAsync<T extends object = Record<string, unknown>>(
  request: T | string,
  options?: CompressAsyncOptions,
): Promise<{ request: T; report: Report; spills: SpillBlob[]; summary: SummaryOutcome }>;

/** Checks the five sections of a summary text. */
export function validateSummary(text: string): { ok: true } | { ok: false; problem: string };

/** Pins a constraint for `session` (archived word for word); returns whether it was new. */
export function pinConstraint(store: SpillStore | SpillStoreLike, session: string | undefined, text: string): boolean;

/** Constraints pinned for `session`. */
export function pinnedConstraints(store: SpillStore | SpillStoreLike, session?: string): string[];

/** The next compress call of `session` is a stage boundary. */
export function finishStage(store: SpillStore | SpillStoreLike, session?: string): void;
