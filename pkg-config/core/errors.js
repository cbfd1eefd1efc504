// Errors by fault. Every error TraceLite throws is a `TraceLiteError` with a
// stable `code`, the offending field as `path`, and the class of its code's
// group: whose fault it is. The core's codes and their groups are generated
// from src/error.rs (./types/codes.js); the codes only this JS host raises
// are in `HOST_CODES` below, the one table of them.
import { CORE_CODES } from './types/codes.js';

/**
 * The codes only the host raises (never the Rust core), each with its group:
 * `store` and `limit` are the core's groups too, `proxy` is a request to the
 * proxy's own routes that it refuses, `host` a runtime that lacks what an API
 * needs or a proxy thread that ended under a request. The proxy answers most of them as HTTP errors (`{ error: { code } }`),
 * which `TraceLiteError.from(body.error)` turns back into their class.
 */
export const HOST_CODES = Object.freeze({
  STORE_FAILED: 'store',
  STORE_UNSAFE: 'store',
  STORE_WRITE_LIMIT: 'limit',
  COMPRESS_BUDGET_SPENT: 'limit',
  SEARCH_BUDGET_SPENT: 'limit',
  MISSING_SESSION: 'proxy',
  INVALID_SESSION_TOKEN: 'proxy',
  NOT_FOUND: 'proxy',
  INVALID_IMAGE_SIGNATURE: 'proxy',
  IMAGE_NOT_FOUND: 'proxy',
  UNSUPPORTED_ROUTE: 'proxy',
  METHOD_NOT_ALLOWED: 'proxy',
  INVALID_PATH: 'proxy',
  UNSUPPORTED_HOST: 'host',
  THREAD_FAILED: 'host',
});

/** The group of a code (`undefined` for a code neither table holds). */
export function groupOf(code) {
  return Object.hasOwn(CORE_CODES, code) ? CORE_CODES[code] : Object.hasOwn(HOST_CODES, code) ? HOST_CODES[code] : undefined;
}

/**
 * `message` after its path, `path: message`, as the core writes its own
 * (`budget: must be …`); unchanged when it already starts with `path:` or
 * there is no path.
 */
export function atPath(message, path) {
  const text = String(message);
  if (!path || text === path || text.startsWith(`${path}:`)) return text;
  return `${path}: ${text}`;
}

/**
 * The error every TraceLite function throws: `code` is stable, `path` names
 * the offending field, and `message` starts with `path: ` (added when the
 * message does not start with it already).
 */
export class TraceLiteError extends Error {
  constructor(message, code, path = '') {
    super(atPath(message, path));
    this.name = 'TraceLiteError';
    this.code = code;
    this.path = path;
  }

  /** Whose fault the error is: `input`, `option`, `limit`, `store`, `internal`, `proxy` or `host`. */
  get group() {
    return groupOf(this.code);
  }

  /**
   * The error of its code's class from a plain `{ code, message, path }`: an
   * error thrown by the wasm, a Durable Object's reply, a proxy error body.
   */
  static from({ code, message = '', path = '' }) {
    const Class = CLASSES[groupOf(code)] ?? TraceLiteError;
    return new Class(String(message), code, path ?? '');
  }
}

/** The request, an argument, a tool call or a cache segment is malformed (`INVALID_JSON`, `INVALID_REQUEST`, …). */
export class InputError extends TraceLiteError {}
/** An option has the wrong type or an out-of-range value (`INVALID_OPTION`). */
export class OptionError extends TraceLiteError {}
/** A configured limit was exceeded (`LIMIT_EXCEEDED`, `GREP_TOO_COSTLY`, `STORE_WRITE_LIMIT`, …). */
export class LimitError extends TraceLiteError {}
/** The spill store has no such blob, no room, a blob that does not match its key, or failed (`SPILL_NOT_FOUND`, `STORE_FAILED`, …). */
export class StoreError extends TraceLiteError {}
/** Not the caller's input: a counter or summarizer failed, or rendering or serializing did (`COUNTER_FAILED`, …). */
export class InternalError extends TraceLiteError {}
/** The proxy refused a request to its own routes: session, signature, path (`INVALID_SESSION_TOKEN`, `NOT_FOUND`, …). */
export class ProxyError extends TraceLiteError {}
/** The runtime lacks what the API needs (`UNSUPPORTED_HOST`, e.g. `FileStore` without a filesystem), or a proxy thread ended (`THREAD_FAILED`). */
export class HostError extends TraceLiteError {}

const CLASSES = Object.freeze({
  input: InputError,
  option: OptionError,
  limit: LimitError,
  store: StoreError,
  internal: InternalError,
  proxy: ProxyError,
  host: HostError,
});

/** Re-throws an error coming out of wasm as the `TraceLiteError` subclass of its code's group. */
export function rethrow(err) {
  if (err instanceof TraceLiteError) throw err;
  if (err && err.name === 'TraceLiteError' && typeof err.code === 'string') {
    throw TraceLiteError.from(err);
  }
  throw err;
}

/**
 * `JSON.stringify(value)` for an argument named `what`; a value JSON cannot
 * hold (a BigInt, a cycle) is `INVALID_ARGUMENT` naming it, not a TypeError.
 */
export function jsonArg(value, what) {
  try {
    return JSON.stringify(value);
  } catch (err) {
    throw new InputError(`cannot be written as JSON: ${err?.message ?? err}`, 'INVALID_ARGUMENT', what);
  }
}

/** Runs `fn`, converting wasm errors into `TraceLiteError` subclasses. */
export function guarded(fn) {
  try {
    return fn();
  } catch (err) {
    rethrow(err);
  }
}

/** What a value is, for an error message: `a string`, `null`, `an array`, `a FileStore`, … */
export function describe(value) {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  if (typeof value === 'object') {
    const name = Object.getPrototypeOf(value)?.constructor?.name;
    return name && name !== 'Object' ? `a ${name}` : 'an object';
  }
  return typeof value === 'undefined' ? 'undefined' : `a ${typeof value}`;
}

/** Whether `store` has the outside stores' interface: `get(session, key)` and `put(session, key, text)` (results may be promises). */
export function isOutsideStore(store) {
  return store !== null && typeof store === 'object' && typeof store.get === 'function' && typeof store.put === 'function';
}

/**
 * The error of a synchronous call (`compress`, `handleToolCall`) given a
 * store it cannot use: an outside store (files, KV, Durable Objects, Redis:
 * their writes are async) names `asyncCall`, the call that takes it.
 */
export function syncStoreError(store, path, asyncCall) {
  // The message starts with the error's path, `store:` (the constructor adds it); `path` says where it was given.
  const where = path === 'store' ? '' : ` in ${path}`;
  const message = isOutsideStore(store)
    ? `${describe(store)}${where} writes asynchronously and this call is synchronous: use ${asyncCall} with it (or a SpillStore here)`
    : `must be a SpillStore (or, with ${asyncCall}, a store with get and put), got ${describe(store)}`;
  return new OptionError(message, 'INVALID_OPTION', 'store');
}
