// Internal: option parsing shared by the JS API modules.
import { TraceLiteError } from './errors.js';
import { SpillStore } from './spill.js';

/** Options that are JS objects, not settings; everything else goes to the core as JSON. */
const HOST_OPTIONS = ['store', 'countTokens', 'previous'];

export function requestText(request, what = 'request') {
  if (typeof request === 'string') {
    // Lone surrogates cannot cross into wasm (they would silently become U+FFFD).
    if (!request.isWellFormed()) {
      throw new TraceLiteError(`${what} contains lone UTF-16 surrogates`, 'INVALID_REQUEST', what);
    }
    return request;
  }
  if (request !== null && typeof request === 'object' && !Array.isArray(request)) {
    return JSON.stringify(request);
  }
  throw new TraceLiteError(`${what} must be a JSON object or JSON text`, 'INVALID_REQUEST', what);
}

/** Splits host objects from settings and checks their types. */
export function splitOptions(options) {
  if (options === undefined || options === null) options = {};
  if (typeof options !== 'object' || Array.isArray(options)) {
    throw new TraceLiteError('options must be an object', 'INVALID_OPTION', 'options');
  }
  const settings = {};
  for (const [k, v] of Object.entries(options)) {
    if (!HOST_OPTIONS.includes(k) && v !== undefined) settings[k] = v;
  }
  const { store, countTokens, previous } = options;
  if (store !== undefined && !(store instanceof SpillStore)) {
    throw new TraceLiteError('options.store must be a SpillStore', 'INVALID_OPTION', 'store');
  }
  if (countTokens !== undefined && typeof countTokens !== 'function') {
    throw new TraceLiteError('options.countTokens must be a function (text) => number', 'INVALID_OPTION', 'countTokens');
  }
  const prev = previous === undefined || previous === null ? undefined : requestText(previous, 'previous');
  return { settings, store, countTokens, previous: prev };
}

