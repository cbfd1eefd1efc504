/** The error every TraceLite function throws: `code` is stable, `path` names the offending field. */
export class TraceLiteError extends Error {
  constructor(message, code, path = '') {
    super(message);
    this.name = 'TraceLiteError';
    this.code = code;
    this.path = path;
  }
}

/** Re-throws an error coming out of wasm as a `TraceLiteError` when it is one. */
export function rethrow(err) {
  if (err instanceof TraceLiteError) throw err;
  if (err && err.name === 'TraceLiteError' && typeof err.code === 'string') {
    throw new TraceLiteError(err.message, err.code, err.path ?? '');
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
    throw new TraceLiteError(`${what} cannot be written as JSON: ${err?.message ?? err}`, 'INVALID_ARGUMENT', what);
  }
}

/** Runs `fn`, converting wasm errors into `TraceLiteError`. */
export function guarded(fn) {
  try {
    return fn();
  } catch (err) {
    rethrow(err);
  }
}
