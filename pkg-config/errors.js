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

/** Runs `fn`, converting wasm errors into `TraceLiteError`. */
export function guarded(fn) {
  try {
    return fn();
  } catch (err) {
    rethrow(err);
  }
}
