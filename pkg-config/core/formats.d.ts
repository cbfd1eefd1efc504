// Types of pkg-config/core/formats.js (src/formats/ in the Rust core).
import type { FormatName } from './index.js';

/** Something of the source request the target format cannot carry. */
export interface Lossy {
  /** JSON path in the source request. */
  path: string;
  /** What was dropped or changed. */
  what: string;
}

/** A fix made in repair mode (also listed in `Report.repairs` of `compress`). */
export type { Repair } from './types/report.js';
import type { Repair } from './types/report.js';

/** Error codes of request validation (beside `INVALID_REQUEST` for wrong types). */
export type ValidationErrorCode =
  | 'ORPHAN_TOOL_RESULT' | 'MISSING_TOOL_RESULT' | 'DUPLICATE_TOOL_CALL_ID'
  | 'DUPLICATE_TOOL_RESULT' | 'MISPLACED_TOOL_RESULT' | 'INVALID_ROLE_ORDER';

/** The format of a request body. Throws `UNKNOWN_FORMAT` when it cannot tell. */
export function detectFormat(request: object | string): FormatName;

/** Converts a request body to format `to` (the source format is detected unless `from`). */
export function convert<T extends object = Record<string, unknown>>(
  request: object | string,
  to: FormatName,
  options?: { from?: FormatName },
): { from: FormatName; to: FormatName; request: T; lossy: Lossy[] };

/**
 * Checks tool-call pairing and role order; throws a `TraceLiteError` with a
 * `ValidationErrorCode` and the JSON path unless `repair` is true.
 */
export function validateRequest<T extends object = Record<string, unknown>>(
  request: object | string,
  options?: { format?: FormatName; repair?: boolean },
): { format: FormatName; request: T; repairs: Repair[] };

/** A part of a neutral message (the core's `PartKind`), with the members its format does not interpret in `extra`. */
export type NeutralPart = (
  | { type: 'text'; text: string }
  | { type: 'image'; media_type: string; data: string; url: string | null; width: number; height: number }
  | { type: 'tool_call'; id: string; name: string; arguments: string }
  | { type: 'tool_result'; call_id: string; parts: NeutralPart[]; is_error: boolean }
  | { type: 'other'; value: unknown }
) & { extra?: Record<string, unknown> };

/** A message of the neutral conversation. */
export interface NeutralMessage {
  role: 'system' | 'developer' | 'user' | 'assistant' | 'tool';
  parts: NeutralPart[];
  /** How the source laid the content out. */
  layout: 'text' | 'parts' | 'null' | 'absent';
  extra?: Record<string, unknown>;
}

/** The neutral conversation a request parses into. */
export interface NeutralConversation {
  format: FormatName;
  /** System prompt messages. */
  system: NeutralMessage[];
  /** The conversation after the system prompt; `index` is the message's position in the request's own list (`report.changes[].message`). */
  messages: (NeutralMessage & { index: number })[];
  /** The request's other top-level members. */
  extra: Record<string, unknown>;
}

/** The neutral conversation `request` parses into (`format` detected unless given). */
export function requestConversation(
  request: object | string,
  options?: { format?: FormatName },
): NeutralConversation;
