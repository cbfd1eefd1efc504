// Internal (createProxy): its settings, their defaults and their checks; a
// wrong setting fails at start-up (`INVALID_OPTION` naming it), not on the
// first request.
import { OptionError } from '#entry';
import { describe } from '../../core/errors.js';
import { MEMORY_DEFAULTS } from '../../core/memory.js';
import { checkName } from '../../core/spill-reader.js';
import { DEFAULT_MAX_SPILL_RESPONSE_BYTES, DEFAULT_MAX_SPILL_ROUNDS } from './tools.js';
import { defaultIdentity } from './signing.js';
import { debugSink } from '../../internal/debug.js';

/**
 * Provider (prices, image sizing) of each route's format when neither
 * `providers` nor `options.provider` names one.
 */
export const DEFAULT_PROVIDERS = Object.freeze({
  'openai-chat': 'openai',
  'openai-responses': 'openai',
  anthropic: 'anthropic',
  gemini: 'gemini',
});

/**
 * Default request size limit: 8 MiB, 2 MiB on workerd (`MEMORY_DEFAULTS`: a
 * request's wasm peak is up to about 20× its body; the core's own limit may be lower).
 */
export const DEFAULT_MAX_BODY_BYTES = MEMORY_DEFAULTS.maxBodyBytes;

/**
 * Default most blobs one request may write to an outside store (KV): a
 * Workers invocation has at most 1,000 KV operations (and each first-seen
 * blob costs a read before its write). Over it: `STORE_WRITE_LIMIT`.
 */
export const DEFAULT_MAX_STORE_WRITES = 200;

/**
 * Default work one search may do (`maxSearchCost`; the core's units, program
 * bytes × bytes the regex runs over): 2^24, about 1–15 ms in wasm at the
 * cap, so that a search holds other requests up that long at most. A literal
 * search costs nothing; a regex with a literal pays only for the lines
 * holding it. Over it: `GREP_TOO_COSTLY`.
 */
export const DEFAULT_MAX_SEARCH_COST = 2 ** 24;

/**
 * Default `maxSearchWork`: the search work of one client request across all
 * its spill rounds and searches, in searches at `maxSearchCost`. Over it:
 * `SEARCH_BUDGET_SPENT`.
 */
export const DEFAULT_SEARCHES_PER_REQUEST = 2;

/** Default `maxSearchWorkPerMinute` of a session on the spill routes, in searches at `maxSearchCost`. */
export const DEFAULT_SEARCHES_PER_MINUTE = 8;

/**
 * Default `maxCompressMsPerMinute`: the time one tenant's requests (its
 * credentials, `identify`) may spend compressing per minute, in ms. Half a
 * core: a normal agent spends well under a second a turn; a body at
 * `maxBodyBytes` costs seconds. Over it: 429 `COMPRESS_BUDGET_SPENT`.
 */
export const DEFAULT_COMPRESS_MS_PER_MINUTE = 30_000;

/** Default bytes of masked spills the proxy keeps for the spill routes and tools (`maxMaskedBytes`). */
export const DEFAULT_MAX_MASKED_BYTES = 8 * 1024 * 1024;

/** Shortest `secret` accepted (characters); e.g. `openssl rand -base64 32` gives 44. */
export const MIN_SECRET_LENGTH = 32;

/** What to do with a request the proxy cannot compress: see `createProxy`. */
export const ON_ERROR = ['forward', 'reject'];

/** The settings of `createProxy` with their defaults, checked. */
export function proxySettings({
  upstream,
  format,
  options = {},
  store,
  fetch,
  maxBodyBytes = DEFAULT_MAX_BODY_BYTES,
  maxSessions,
  maxHeldBytes,
  maxMemoryBytes,
  maxStoreWrites = DEFAULT_MAX_STORE_WRITES,
  onError = 'forward',
  secret,
  identify = defaultIdentity,
  onReport,
  debug,
  providers = {},
  spillTools = true,
  maxSpillRounds = DEFAULT_MAX_SPILL_ROUNDS,
  maxSpillResponseBytes = DEFAULT_MAX_SPILL_RESPONSE_BYTES,
  imageBaseUrl,
  persistCache = true,
  maxSearchCost = DEFAULT_MAX_SEARCH_COST,
  maxSearchWork,
  maxSearchWorkPerMinute,
  maxMaskedBytes = DEFAULT_MAX_MASKED_BYTES,
  maxCompressMsPerMinute = DEFAULT_COMPRESS_MS_PER_MINUTE,
} = {}) {
  const s = {
    upstream, format, options, store, fetch, maxBodyBytes, maxSessions, maxHeldBytes, maxMemoryBytes, maxStoreWrites,
    onError, secret, identify, onReport, debug: debugSink(debug), providers, spillTools, maxSpillRounds, maxSpillResponseBytes, imageBaseUrl,
    persistCache, maxSearchCost, maxSearchWork, maxSearchWorkPerMinute, maxMaskedBytes, maxCompressMsPerMinute,
  };
  checkPlumbing(s);
  checkLimits(s);
  return s;
}

/** `INVALID_OPTION` naming `name` unless `value` is a positive (`safe`: safe) integer. */
function positive(name, value, { safe = false, hint = '' } = {}) {
  if (!(safe ? Number.isSafeInteger(value) : Number.isInteger(value)) || value < 1) {
    throw new OptionError(`must be a positive integer${hint}, got ${typeof value === 'number' ? value : describe(value)}`, 'INVALID_OPTION', name);
  }
}

/** The upstream, the store, the request limits and the hooks. */
function checkPlumbing({ upstream, store, options, maxBodyBytes, maxStoreWrites, onError, identify }) {
  try {
    new URL(upstream);
  } catch {
    throw new OptionError('must be an absolute URL', 'INVALID_OPTION', 'upstream');
  }
  if (store !== undefined && (typeof store.get !== 'function' || typeof store.put !== 'function')) {
    throw new OptionError('must have get(session, key) and put(session, key, text)', 'INVALID_OPTION', 'store');
  }
  if (options.store !== undefined) {
    throw new OptionError('pass the store as createProxy({ store }), not in options', 'INVALID_OPTION', 'options.store');
  }
  positive('maxBodyBytes', maxBodyBytes);
  positive('maxStoreWrites', maxStoreWrites);
  if (!ON_ERROR.includes(onError)) {
    throw new OptionError(`must be one of ${ON_ERROR.join(', ')}`, 'INVALID_OPTION', 'onError');
  }
  if (typeof identify !== 'function') {
    throw new OptionError(`must be a function (request) => string, got ${describe(identify)}`, 'INVALID_OPTION', 'identify');
  }
}

/** The secret, the per-format settings, the spill tools and the search budgets (`s` gets the defaults). */
function checkLimits(s) {
  const { secret, store, providers, persistCache, spillTools, maxSpillRounds, maxSpillResponseBytes, maxSearchCost, options } = s;
  if (secret !== undefined && (typeof secret !== 'string' || secret.length < MIN_SECRET_LENGTH)) {
    throw new OptionError(
      `secret must be a string of at least ${MIN_SECRET_LENGTH} characters (e.g. openssl rand -base64 32)`,
      'INVALID_OPTION',
      'secret',
    );
  }
  if (secret === undefined && store !== undefined) {
    // Fail closed: a per-instance secret would make the spills of an outside
    // store, which outlive the instance, unreadable on the next one, and a
    // fixed default would make every deployment's tokens forgeable.
    throw new OptionError(
      'secret is required with an outside store: set createProxy({ secret }) (e.g. env.TRACELITE_SECRET)',
      'INVALID_OPTION',
      'secret',
    );
  }
  if (providers === null || typeof providers !== 'object' || Array.isArray(providers)) {
    throw new OptionError(`must be an object { [format]: provider }, got ${describe(providers)}`, 'INVALID_OPTION', 'providers');
  }
  if (typeof persistCache !== 'boolean') {
    throw new OptionError(`must be a boolean, got ${describe(persistCache)}`, 'INVALID_OPTION', 'persistCache');
  }
  if (typeof spillTools !== 'boolean') {
    throw new OptionError(`must be a boolean, got ${describe(spillTools)}`, 'INVALID_OPTION', 'spillTools');
  }
  positive('maxSpillRounds', maxSpillRounds, { hint: ' (spillTools: false turns the tools off)' });
  positive('maxSpillResponseBytes', maxSpillResponseBytes);
  positive('maxSearchCost', maxSearchCost, { safe: true, hint: ' (the core\'s search work units)' });
  s.maxSearchWork ??= DEFAULT_SEARCHES_PER_REQUEST * maxSearchCost;
  s.maxSearchWorkPerMinute ??= DEFAULT_SEARCHES_PER_MINUTE * maxSearchCost;
  for (const [name, value] of [['maxSearchWork', s.maxSearchWork], ['maxSearchWorkPerMinute', s.maxSearchWorkPerMinute], ['maxMaskedBytes', s.maxMaskedBytes],
    ['maxCompressMsPerMinute', s.maxCompressMsPerMinute]]) {
    positive(name, value, { safe: true });
  }
  if (options.session !== undefined) checkName('session', options.session);
  if (options.optical?.imageUrl) {
    // The proxy builds the template itself (signed per image) and serves what it names.
    throw new OptionError('set createProxy({ imageBaseUrl }) instead: the proxy signs and serves the image URLs', 'INVALID_OPTION', 'options.optical.imageUrl');
  }
}
