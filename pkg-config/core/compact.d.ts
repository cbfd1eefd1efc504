// Types of pkg-config/core/compact.js (compaction: async summarizer flow, pinned constraints, stage ends).
import type { CompressOptions, Report, SpillBlob, SpillStore } from './index.js';

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
export interface CompressAsyncOptions extends CompressOptions {
  summarizer?: Summarizer;
}

/** `compress` with an async LLM summarizer for compactions (validated, retried once, extractive fallback). */
export function compressAsync<T extends object = Record<string, unknown>>(
  request: T | string,
  options?: CompressAsyncOptions,
): Promise<{ request: T; report: Report; spills: SpillBlob[]; summary: SummaryOutcome }>;

/** Checks the five sections of a summary text. */
export function validateSummary(text: string): { ok: true } | { ok: false; problem: string };

/** Pins a constraint for `session` (archived word for word); returns whether it was new. */
export function pinConstraint(store: SpillStore, session: string | undefined, text: string): boolean;

/** Constraints pinned for `session`. */
export function pinnedConstraints(store: SpillStore, session?: string): string[];

/** The next compress call of `session` is a stage boundary. */
export function finishStage(store: SpillStore, session?: string): void;
