// compress and the one-call helpers (token estimate, version, trajectory requests):
// the JS API's own functions, apart from the barrel (api.js) that re-exports every module,
// so that compact.js and replay.js import them without an import cycle.
import {
  estimateTokens as wasmEstimateTokens,
  trajectoryToRequest as wasmTrajectoryToRequest,
  version as wasmVersion,
} from '../wasm/tracelite.js';
import { InputError, OptionError, LimitError, guarded, jsonArg, describe } from './errors.js';
import { requestText, splitOptions } from './options.js';
import { sharedStore } from './spill.js';
import { defaultOptions } from './config.js';

/**
 * Compresses a provider request. Returns `{ request, report, spills }`: `request`
 * has the same format as the input (auto-detected unless `options.format`),
 * `report` says what each stage did (never containing removed text), `spills`
 * holds the texts newly put in the store so a host can persist them elsewhere.
 */
export function compress(request, options = {}) {
  const text = requestText(request);
  checkSession(options?.session);
  const { settings, store, countTokens, previous } = splitOptions(options);
  refuseOversized(text, settings);
  const target = store ?? sharedStore();
  const json = guarded(() =>
    target.wasmStore.compress(text, jsonArg(settings, 'options'), countTokens, previous),
  );
  return JSON.parse(json);
}

/**
 * `options.session` is a string when given: a function or an object would
 * vanish on the way into wasm and the call would use the shared session
 * `"default"` without a word.
 */
function checkSession(session) {
  if (session !== undefined && typeof session !== 'string') {
    throw new OptionError(`must be a string, got ${describe(session)}`, 'INVALID_OPTION', 'session');
  }
}

let defaultMaxRequestBytes;
/** The core's default of `limits.maxRequestBytes`, read once. */
function maxRequestBytesDefault() {
  defaultMaxRequestBytes ??= defaultOptions().limits.maxRequestBytes;
  return defaultMaxRequestBytes;
}

/**
 * A request over `limits.maxRequestBytes` is refused before it is copied into
 * wasm memory (which never shrinks): UTF-8 needs at least one byte per UTF-16
 * unit, so `text.length` over the limit is over it in bytes too. Requests under
 * it in units but over it in bytes are refused by the core.
 */
function refuseOversized(text, settings) {
  const limit = settings.limits?.maxRequestBytes ?? maxRequestBytesDefault();
  if (!Number.isSafeInteger(limit) || limit < 0) {
    throw new OptionError(`must be a non-negative integer, got ${typeof limit === 'number' ? limit : describe(limit)}`, 'INVALID_OPTION', 'limits.maxRequestBytes');
  }
  if (text.length > limit) {
    throw new LimitError(
      `request is at least ${text.length} bytes, limit is ${limit}`,
      'LIMIT_EXCEEDED',
      'limits.maxRequestBytes',
    );
  }
}

/** Estimated o200k_base token count of a text. */
export function estimateTokens(text) {
  if (typeof text !== 'string') {
    throw new InputError(`must be a string, got ${describe(text)}`, 'INVALID_REQUEST', 'text');
  }
  return wasmEstimateTokens(text);
}

/** The library version. */
export function version() {
  return wasmVersion();
}

/**
 * The request an agent loop sends before step `t` of a trajectory (the
 * `../shared/traces` schema): system, task, then every earlier step's tool call and result.
 */
export function trajectoryToRequest(trajectory, t, format = 'openai-chat') {
  const text = typeof trajectory === 'string' ? trajectory : jsonArg(trajectory, 'trajectory');
  if (!Number.isInteger(t) || t < 0) {
    throw new OptionError(`must be a non-negative integer, got ${typeof t === 'number' ? t : describe(t)}`, 'INVALID_OPTION', 't');
  }
  return JSON.parse(guarded(() => wasmTrajectoryToRequest(text, t, format)));
}
