// Internal: what the stores that keep quotas (FileStore, RedisStore) share:
// their integer options and quota limits, read with one rule and one message,
// and the view of a store that one tenant writes through (`forTenant`).
import { OptionError, describe } from '../core/errors.js';
import { OutsideSpillStore } from './blob-keys.js';

/** The quota options, in the order the limits are given to a store's counts. */
export const QUOTA_OPTIONS = ['maxBytes', 'maxSessionBytes', 'maxTenantBytes', 'maxTenantSessions'];

/**
 * Option `name`: `fallback` when undefined, else an integer from `min` to
 * `max`, or `INVALID_OPTION` naming `name` and saying what it got.
 */
export function integerOption(value, name, fallback, min, max = Number.MAX_SAFE_INTEGER) {
  if (value === undefined) return fallback;
  if (!Number.isSafeInteger(value) || value < min || value > max) {
    const range = max === Number.MAX_SAFE_INTEGER ? `≥ ${min}` : `from ${min} to ${max}`;
    throw new OptionError(`must be an integer ${range}, got ${typeof value === 'number' ? value : describe(value)}`, 'INVALID_OPTION', name);
  }
  return value;
}

/**
 * The quota limits of a store's `options`, each defaulting to the store's
 * own (`defaults`, by option name): `{ maxBytes, maxSessionBytes,
 * maxTenantBytes, maxTenantSessions }`, bytes ≥ 0 and at least one session.
 */
export function quotaLimits(options, defaults) {
  const limits = {};
  for (const name of QUOTA_OPTIONS) {
    limits[name] = integerOption(options[name], name, defaults[name], name === 'maxTenantSessions' ? 1 : 0);
  }
  return limits;
}

/**
 * A store as one tenant writes it (`forTenant`): puts count against the
 * tenant's limits (the store's `put(session, key, text, { tenant })`);
 * reads, lists and deletes are the store's own.
 */
export class TenantStore extends OutsideSpillStore {
  #store;
  #tenant;

  /** `tenant` is a checked name. */
  constructor(store, tenant) {
    super();
    this.#store = store;
    this.#tenant = tenant;
  }

  /** The tenant this view writes as. */
  get tenant() {
    return this.#tenant;
  }

  get(session, key) {
    return this.#store.get(session, key);
  }

  put(session, key, text) {
    return this.#store.put(session, key, text, { tenant: this.#tenant });
  }

  list(session) {
    return this.#store.list(session);
  }

  delete(session, key) {
    return this.#store.delete(session, key);
  }
}
