// Generated from the Rust declarations by tests/ts_types.rs: do not edit.
// `TRACELITE_BLESS=1 cargo test --test ts_types` rewrites it.

/** The group of each code the core raises (`ErrorCode::group` in src/error.rs). */
export const CORE_CODES = Object.freeze({
  INVALID_JSON: 'input',
  INVALID_REQUEST: 'input',
  UNKNOWN_FORMAT: 'input',
  INVALID_OPTION: 'option',
  LIMIT_EXCEEDED: 'limit',
  SPILL_NOT_FOUND: 'store',
  INVALID_SPILL_KEY: 'input',
  STORE_REFUSED: 'store',
  INVALID_PATTERN: 'input',
  GREP_TOO_COSTLY: 'limit',
  INVALID_ARGUMENT: 'input',
  SPILL_CORRUPT: 'store',
  INVALID_TOOL_CALL: 'input',
  COUNTER_FAILED: 'internal',
  SUMMARIZER_FAILED: 'internal',
  RENDER_FAILED: 'internal',
  ORPHAN_TOOL_RESULT: 'input',
  MISSING_TOOL_RESULT: 'input',
  DUPLICATE_TOOL_CALL_ID: 'input',
  DUPLICATE_TOOL_RESULT: 'input',
  MISPLACED_TOOL_RESULT: 'input',
  INVALID_ROLE_ORDER: 'input',
  SERIALIZATION_FAILED: 'internal',
  INVALID_CACHE: 'input',
  OVER_BUDGET: 'limit',
});
