// Types of the stateful API (pkg-config/core/session.js, src/session.rs).
import type { CompressSettings, FormatName, Report, SpillBlob, UrlImage } from './index.js';

/** Settings plus host objects for `new TraceLite(options)`. */
export interface TraceLiteOptions extends CompressSettings {
  /**
   * Your tokenizer; the built-in o200k estimator by default. Called once per distinct text: the session
   * remembers counts, so a turn prices only what is new. Must return 0 to 2^32 − 1 (fractions round up);
   * anything else is `COUNTER_FAILED`.
   */
  countTokens?: (text: string) => number;
}

/** A tool call in any of the accepted shapes; `arguments` may be JSON text or a value. */
export type ToolCallInput =
  | { id?: string; name: string; arguments?: unknown }
  | { id: string; type?: 'function'; function: { name: string; arguments: string } }
  | { toolCallId: string; toolName: string; input?: unknown; args?: unknown };

/** How a call edits files (src/phase/edit.rs `EditKind`). */
export type EditKind =
  | 'tool' | 'sed-in-place' | 'redirect' | 'heredoc' | 'tee' | 'git-apply' | 'patch' | 'python-write';

/** What `processStep` recorded. */
export interface StepSummary {
  /** 1-based step number. */
  step: number;
  /** The call id (generated as `call_<n>` when none was given). */
  callId: string;
  outputTokens: number;
  /** Present when the activity reader sees a file edit that did not fail. */
  edit?: { kind: EditKind; mode: 'create' | 'overwrite' | 'in-place'; target?: string };
  /** Whether the call changed a file that existed before the session (the phase
   * clean-up begins at the first such change). */
  changesExisting: boolean;
}

/** Session counters (src/session.rs `Telemetry`). */
export interface Telemetry {
  steps: number;
  messages: number;
  assembles: number;
  /** Tokens of the raw history at the last assemble. */
  tokensRaw: number;
  /** Tokens of the last assembled request. */
  tokensSent: number;
  totalTokensRaw: number;
  totalTokensSent: number;
  /** Tokens saved per stage, summed over every assemble. */
  savedByStage: Partial<Record<'spill' | 'dedup' | 'phase' | 'optical' | 'compact', number>>;
  edits: number;
  firstEditStep?: number;
  /** Step of the first change to a file that existed before the session. */
  phaseStartStep?: number;
  spillBlobs: number;
  spillBytes: number;
  prefix?: { sharedBytes: number; previousBytes: number; currentBytes: number };
}

/** An in-process context controller over the same core as `compress`. */
export class TraceLite {
  constructor(options?: TraceLiteOptions);
  /**
   * Records one step: the tool call and its output (text, or an object or array sent as JSON;
   * none is empty). A malformed call is `INVALID_TOOL_CALL` naming `toolCall`, `toolCall.id`
   * or `toolCall.name`; an output of another type (a number, a boolean) `INVALID_ARGUMENT`
   * naming `output`.
   */
  processStep(toolCall: ToolCallInput, output?: string | object | null): StepSummary;
  /** Appends a system, user or assistant turn (OpenAI Chat message shape). */
  addMessage(message: { role: 'system' | 'developer' | 'user' | 'assistant'; content: unknown; [k: string]: unknown }): void;
  /** The request to send now; `base` holds its other members (`model`, `tools`, …). */
  /** `format` not a format name is `UNKNOWN_FORMAT`; `base` not an object `INVALID_REQUEST`. */
  assemble<T extends object = Record<string, unknown>>(format?: FormatName, base?: object): T;
  /** Blobs newly kept by the last `assemble`, to persist elsewhere. */
  lastSpills?: SpillBlob[];
  /** With `optical.imageUrl`: the snapshots the last `assemble` sends by URL, to serve at their `url`. */
  lastImages?: UrlImage[];
  /** What the last `assemble` did, or `null` before the first one. */
  report(): Report | null;
  telemetry(): Telemetry;
  /** Ends a task stage: the next `assemble` compacts (a stage boundary). */
  finishStage(): void;
  /** Pins a constraint compaction keeps word for word; returns whether it was new. */
  pinConstraint(text: string): boolean;
  /** Constraints pinned so far. */
  pinnedConstraints(): string[];
  /** Full text behind a `spill://` pointer from a marker or tombstone. */
  readSpill(pointer: string): string;
  listSpills(): { key: string; bytes: number; lines: number }[];
  free(): void;
  [Symbol.dispose](): void;
}
