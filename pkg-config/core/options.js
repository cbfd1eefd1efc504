// Internal: option parsing shared by the JS API modules.
import { InputError, OptionError, jsonArg, describe, syncStoreError } from './errors.js';
import { SpillStore } from './spill.js';
import { settingsOf } from './settings.js';

export function requestText(request, what = 'request') {
  if (typeof request === 'string') {
    // Lone surrogates cannot cross into wasm as they are (they would silently
    // become U+FFFD): they cross as JSON escapes, as JSON.stringify writes them,
    // and the core replaces them in tool outputs or names the field holding one.
    if (!request.isWellFormed()) {
      return request.replace(/\p{Cs}/gu, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
    }
    return request;
  }
  if (request !== null && typeof request === 'object' && !Array.isArray(request)) {
    return jsonArg(request, what);
  }
  throw new InputError(`must be a JSON object or JSON text, got ${describe(request)}`, 'INVALID_REQUEST', what);
}

/** Splits host objects from settings and checks their types. */
export function splitOptions(options) {
  const settings = settingsOf(options);
  const { store, countTokens, previous } = options ?? {};
  if (store !== undefined && !(store instanceof SpillStore)) {
    throw syncStoreError(store, 'options.store', 'compressAsync(request, { store })');
  }
  if (countTokens !== undefined && typeof countTokens !== 'function') {
    throw new OptionError(`must be a function (text) => number, got ${describe(countTokens)}`, 'INVALID_OPTION', 'countTokens');
  }
  const prev = previous === undefined || previous === null ? undefined : requestText(previous, 'previous');
  return { settings, store, countTokens, previous: prev };
}
