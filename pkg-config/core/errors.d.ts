// Errors by fault: the classes every TraceLite function throws. The core's
// codes and groups are generated from src/error.rs (./types/errors.d.ts);
// the codes only the JS host raises are declared here, as `HOST_CODES` of
// core/errors.js lists them.
import type { CoreErrorCode, CoreErrorCodes } from './types/errors.js';

/** The codes only the JS host raises (never the Rust core), by group. */
export interface HostErrorCodes {
  /** A host spill store threw or refused to use its directory. */
  store: 'STORE_FAILED' | 'STORE_UNSAFE';
  /** A host limit: store writes per request, the proxy's compress and search budgets. */
  limit: 'STORE_WRITE_LIMIT' | 'COMPRESS_BUDGET_SPENT' | 'SEARCH_BUDGET_SPENT';
  /** The proxy refused a request to its own routes (session, signature, path, method). */
  proxy:
    | 'MISSING_SESSION'
    | 'INVALID_SESSION_TOKEN'
    | 'NOT_FOUND'
    | 'INVALID_IMAGE_SIGNATURE'
    | 'IMAGE_NOT_FOUND'
    | 'UNSUPPORTED_ROUTE'
    | 'METHOD_NOT_ALLOWED'
    | 'INVALID_PATH';
  /**
   * The runtime lacks what the API needs (e.g. `FileStore` without a
   * filesystem), or a proxy thread ended under a request (`createThreadedProxy`).
   */
  host: 'UNSUPPORTED_HOST' | 'THREAD_FAILED';
}

/** A code only the JS host raises. */
export type HostErrorCode = HostErrorCodes[keyof HostErrorCodes];

/** Every stable error code: the core's and the host's. */
export type ErrorCode = CoreErrorCode | HostErrorCode;

/** Whose fault an error is: the name of its group (`TraceLiteError.group`). */
export type ErrorGroup = keyof CoreErrorCodes | keyof HostErrorCodes;

/** The codes of one group. */
export type ErrorCodeOf<G extends ErrorGroup> =
  | (G extends keyof CoreErrorCodes ? CoreErrorCodes[G] : never)
  | (G extends keyof HostErrorCodes ? HostErrorCodes[G] : never);

/**
 * Thrown by every function: `code` is stable, `path` names the offending
 * field and starts `message` (`path: …`, added by the constructor when the
 * message does not start with it); the class says whose fault it is.
 */
export class TraceLiteError extends Error {
  constructor(message: string, code: ErrorCode, path?: string);
  /** The error of its code's class from a plain `{ code, message, path }` (e.g. a proxy's `{ error }` body). */
  static from(error: { code: string; message?: string; path?: string }): TraceLiteError;
  readonly name: 'TraceLiteError';
  readonly code: ErrorCode;
  /** Whose fault the error is (`undefined` for a code of no group). */
  readonly group: ErrorGroup | undefined;
  readonly path: string;
}

/** The class of the errors of group `G`: their codes are that group's. */
declare class GroupError<G extends ErrorGroup> extends TraceLiteError {
  constructor(message: string, code: ErrorCodeOf<G>, path?: string);
  readonly code: ErrorCodeOf<G>;
  readonly group: G;
}

/** The request, an argument, a tool call or a cache segment is malformed. */
export class InputError extends GroupError<'input'> {}
/** An option has the wrong type or an out-of-range value (`INVALID_OPTION`; `path` is the option's, e.g. `spill.fraction`). */
export class OptionError extends GroupError<'option'> {}
/** A configured limit was exceeded. */
export class LimitError extends GroupError<'limit'> {}
/** The spill store has no such blob, no room, a blob that does not match its key, or failed. */
export class StoreError extends GroupError<'store'> {}
/** Not the caller's input: a counter or summarizer failed, or rendering or serializing did. */
export class InternalError extends GroupError<'internal'> {}
/** The proxy refused a request to its own routes. */
export class ProxyError extends GroupError<'proxy'> {}
/** The runtime lacks what the API needs. */
export class HostError extends GroupError<'host'> {}
