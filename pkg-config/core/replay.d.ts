import type { CompressSettings, Report, SpillBlob, SpillStore, StageName, Trajectory } from './index.js';

/** One replayed step: totals of the request sent before step `t`. */
export interface ReplayStep {
  t: number;
  /** Tokens of the uncompressed request. */
  baseline: number;
  /** Tokens after compression. */
  compressed: number;
  /** Bytes of the uncompressed request JSON (`report.bytesBefore`). */
  bytes_before?: number;
  /** Bytes of the compressed request JSON (`report.bytesAfter`; snapshots as base64 PNG raise it). */
  bytes_after?: number;
  /** Milliseconds the compress call took. */
  ms: number;
  /** Tokens each stage removed at this step (negative if it added some). */
  saved?: Partial<Record<StageName, number>>;
  /** Set when several trajectories are summed. */
  id?: string;
}

/** The figures `tracelite replay --json` prints. */
export interface ReplaySummary {
  steps: number;
  baseline_tokens: number;
  compressed_tokens: number;
  /** Request JSON bytes summed over the steps, before and after compression. */
  baseline_bytes: number;
  compressed_bytes: number;
  /** 1 − compressed/baseline, rounded to 4 digits. */
  reduction: number;
  /** Mean share of the previous request's bytes reused as prefix. */
  prefix_reuse: number;
  /** Tokens each stage removed over all steps, and their share of the baseline. */
  saved_by_stage: Partial<Record<StageName, { tokens: number; share: number }>>;
  per_step: ReplayStep[];
  latency_ms: { p50: number; p95: number; max: number };
}

/** The spill session a replay uses for a trajectory id. */
export function sessionName(id: string | undefined | null): string;

/** Tokens each stage saved in one compress report. */
export function stageSavings(report: Report): Partial<Record<StageName, number>>;

/** Totals of replayed steps. */
export function summarizeReplay(perStep: ReplayStep[], prefixFractions?: number[]): ReplaySummary;

/**
 * Throws `LIMIT_EXCEEDED` at `limits.maxRequestBytes` when a trajectory of `bytes`
 * bytes is longer than that limit of `options` (default 64 MiB): the requests of its
 * last steps would be about as large. `what` names it in the message.
 */
export function refuseOversizedTrajectory(bytes: number, options?: CompressSettings, what?: string): void;

/**
 * Replays a trajectory as an agent loop would, one store for the whole trajectory.
 * A trajectory longer than `limits.maxRequestBytes` is refused before it is parsed.
 */
export function replayTrajectory(
  trajectory: Trajectory | string,
  options?: CompressSettings,
  host?: {
    store?: SpillStore;
    countTokens?: (text: string) => number;
    onStep?: (step: {
      t: number;
      request: Record<string, unknown>;
      output: { request: Record<string, unknown>; report: Report; spills: SpillBlob[] };
      outputText: string;
      ms: number;
    }) => void;
  },
): { result: ReplaySummary; prefixFractions: number[] };
