// Generated from the Rust declarations by tests/ts_types.rs: do not edit.
// `TRACELITE_BLESS=1 cargo test --test ts_types` rewrites it.

/**
 * The codes the core raises by group, whose fault an error is (`ErrorGroup`
 * in src/error.rs); `TraceLiteError.from` gives each group its class. The
 * host's own codes are `HostErrorCodes` (core/errors.d.ts).
 */
export interface CoreErrorCodes {
  /** The request, an argument, a tool call or a cache segment is malformed. */
  input:
    | 'INVALID_JSON'
    | 'INVALID_REQUEST'
    | 'UNKNOWN_FORMAT'
    | 'INVALID_SPILL_KEY'
    | 'INVALID_PATTERN'
    | 'INVALID_ARGUMENT'
    | 'INVALID_TOOL_CALL'
    | 'ORPHAN_TOOL_RESULT'
    | 'MISSING_TOOL_RESULT'
    | 'DUPLICATE_TOOL_CALL_ID'
    | 'DUPLICATE_TOOL_RESULT'
    | 'MISPLACED_TOOL_RESULT'
    | 'INVALID_ROLE_ORDER'
    | 'INVALID_CACHE';
  /** An option has the wrong type or an out-of-range value. */
  option: 'INVALID_OPTION';
  /** A configured limit was exceeded. */
  limit: 'LIMIT_EXCEEDED' | 'GREP_TOO_COSTLY' | 'OVER_BUDGET';
  /** The spill store has no such blob, no room, or a blob that does not match its key. */
  store: 'SPILL_NOT_FOUND' | 'STORE_REFUSED' | 'SPILL_CORRUPT';
  /**
   * Not the caller's input: a host collaborator (counter, summarizer)
   * failed, or rendering or serializing what TraceLite built did.
   */
  internal: 'COUNTER_FAILED' | 'SUMMARIZER_FAILED' | 'RENDER_FAILED' | 'SERIALIZATION_FAILED';
}

/** Stable error codes the core raises (`ErrorCode` in src/error.rs). */
export type CoreErrorCode = CoreErrorCodes[keyof CoreErrorCodes];
