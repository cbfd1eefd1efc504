// A spill store in Redis, so that proxies on many processes and hosts share
// sessions: any of them serves any turn, reads any spill and image, and
// finds the caches another one kept. Every operation is one Lua script
// (scripts.js), so the quotas (the FileStore's: per session, per tenant, in
// all, with the least recently written sessions evicted) are kept in Redis
// atomically, one count for every process. Takes node-redis, ioredis, or any
// client with `sendCommand(args)` or `eval(script, keys, args)` (Upstash's
// REST client): connection.js. Paging and search run in the core
// (core/spill-reader.js).
import '#entry'; // initializes the wasm that read/grep run in
import { HostError, InputError, OptionError, StoreError, TraceLiteError, describe } from '../../core/errors.js';
import { OutsideSpillStore, corrupt, facts, matchesKey, notFound, verified } from '../../internal/blob-keys.js';
import { checkName } from '../../core/spill-reader.js';
import { QUOTA_OPTIONS, TenantStore, integerOption, quotaLimits } from '../../internal/quota.js';
import { SCRIPTS } from './scripts.js';
import { replyNumber, replyText, scriptRunner } from './connection.js';
// Node, Deno, Bun: url.js (node-redis); workers and browsers: url-unsupported.js.
import { URL_SUPPORTED, closeClient, connectUrl } from '#redis-url';

/** Default time to live of a blob: 7 days after it was last written (as the other stores). */
export const DEFAULT_TTL_SECONDS = 7 * 24 * 3600;
/** Default bytes of all sessions' blobs: 512 MiB (keep it under Redis' `maxmemory`). */
export const DEFAULT_MAX_BYTES = 2 ** 29;
/** Default bytes of one session's blobs: 64 MiB (as the Durable Object store). */
export const DEFAULT_MAX_SESSION_BYTES = 2 ** 26;
/** Default bytes of one tenant's blobs (puts through `forTenant`): 128 MiB. */
export const DEFAULT_MAX_TENANT_BYTES = 2 ** 27;
/** Default sessions of one tenant (puts through `forTenant`): 1,000. */
export const DEFAULT_MAX_TENANT_SESSIONS = 1000;
/** Default time a call may wait for Redis (connecting included) before it fails: 5 s. */
export const DEFAULT_TIMEOUT_MS = 5000;
/** Default prefix of the store's keys. */
export const DEFAULT_PREFIX = 'tracelite:';

/** The quota limits' defaults, by option name. */
const DEFAULTS = {
  maxBytes: DEFAULT_MAX_BYTES,
  maxSessionBytes: DEFAULT_MAX_SESSION_BYTES,
  maxTenantBytes: DEFAULT_MAX_TENANT_BYTES,
  maxTenantSessions: DEFAULT_MAX_TENANT_SESSIONS,
};
/** Expired sessions a put removes on its way (so that expiry costs every put a little, never one a lot). */
const EXPIRE_BATCH = 16;
/** Sessions one sweep call looks at. */
const SWEEP_BATCH = 256;
/** Tenant of the sessions written without one (`put` on the store itself): no tenant limits apply. */
const UNOWNED = '';

/**
 * Spills in Redis: `<prefix>b:<session>:<key>` holds a blob's text (UTF-8,
 * as bytes: binary-safe), with the counts beside it under the same prefix
 * (scripts.js lists the keys). One prefix per deployment: stores with the
 * same prefix share blobs and counts, stores with different ones never see
 * each other's. For Redis Cluster, give the prefix a hash tag
 * (`'tl:{prod}:'`): the store's keys then live in one slot, as its atomic
 * scripts need.
 *
 * Same calls and rules as the other stores: content keys are verified on
 * write and read, a held key is never given another text (`STORE_REFUSED`),
 * a blob expires `ttlSeconds` after it was last written (`SPILL_NOT_FOUND`).
 * Limits as the FileStore's, kept in Redis for every process at once:
 * `maxSessionBytes` per session, and for puts through `forTenant(t)` (the
 * proxy's, one tenant per client) `maxTenantBytes` and `maxTenantSessions`,
 * past which the tenant's least recently written other sessions are
 * evicted; a full store (`maxBytes`) evicts the least recently written
 * sessions of the tenant holding the most bytes, never the session written.
 *
 * A call that Redis does not answer within `timeoutMs` (down, paused,
 * unreachable), or that fails, rejects with `STORE_FAILED` (`path`
 * `timeoutMs` for the former): the proxy then forwards the request
 * uncompressed and masked, or refuses it (`onError`), as with any store failure.
 */
export class RedisStore extends OutsideSpillStore {
  #run;
  /** The client made from `url` (closed by `close()`). */
  #client;
  #connecting;
  #owned;
  #url;
  #prefix;
  #ttl;
  #limits;
  #timeoutMs;
  #now;

  /**
   * @param options `{ client | url, prefix = 'tracelite:', ttlSeconds = 7 days (0: none),
   *   maxBytes = 512 MiB, maxSessionBytes = 64 MiB, maxTenantBytes = 128 MiB,
   *   maxTenantSessions = 1,000, timeoutMs = 5,000, now = () => Date.now() }`:
   *   `client` a connected Redis client (connection.js says which), or `url`
   *   (`redis://…`, `rediss://…`) for a node-redis client the store makes, connects on
   *   its first call and closes on `close()`.
   */
  constructor(options = {}) {
    super();
    if (options === null || typeof options !== 'object' || Array.isArray(options)) {
      throw new OptionError(`must be an object of RedisStore options { client | url, … }, got ${describe(options)}`, 'INVALID_OPTION', 'options');
    }
    const {
      client, url, prefix = DEFAULT_PREFIX, ttlSeconds, maxBytes, maxSessionBytes, maxTenantBytes, maxTenantSessions,
      timeoutMs, now = () => Date.now(), ...rest
    } = options;
    for (const k of Object.keys(rest)) {
      throw new OptionError(`unknown RedisStore option ${k}`, 'INVALID_OPTION', k);
    }
    if ((client === undefined) === (url === undefined)) {
      throw new OptionError('give exactly one of client (a connected Redis client) and url', 'INVALID_OPTION', client === undefined ? 'client' : 'url');
    }
    if (url !== undefined && (typeof url !== 'string' || !/^rediss?:\/\//.test(url))) {
      throw new OptionError(`must be a redis:// or rediss:// URL, got ${typeof url === 'string' ? JSON.stringify(url.slice(0, 40)) : describe(url)}`, 'INVALID_OPTION', 'url');
    }
    if (url !== undefined && !URL_SUPPORTED) {
      throw new HostError('RedisStore({ url }) needs Node, Deno or Bun (it makes a node-redis client); on this host pass a client of your own, e.g. { client } of @upstash/redis', 'UNSUPPORTED_HOST', 'url');
    }
    if (typeof prefix !== 'string' || prefix === '' || prefix.length > 256 || /[\0-\x1f\s]/.test(prefix)) {
      throw new OptionError(`must be 1-256 characters, without spaces or control characters, got ${typeof prefix === 'string' ? JSON.stringify(prefix.slice(0, 40)) : describe(prefix)}`, 'INVALID_OPTION', 'prefix');
    }
    if (typeof now !== 'function') {
      throw new OptionError(`must be a function returning milliseconds, got ${describe(now)}`, 'INVALID_OPTION', 'now');
    }
    this.#ttl = integerOption(ttlSeconds, 'ttlSeconds', DEFAULT_TTL_SECONDS, 0, 100 * 365 * 24 * 3600);
    this.#limits = quotaLimits({ maxBytes, maxSessionBytes, maxTenantBytes, maxTenantSessions }, DEFAULTS);
    // setTimeout's most.
    this.#timeoutMs = integerOption(timeoutMs, 'timeoutMs', DEFAULT_TIMEOUT_MS, 1, 2 ** 31 - 1);
    this.#now = now;
    this.#prefix = prefix;
    this.#owned = url !== undefined;
    this.#url = url;
    if (client !== undefined) this.#run = scriptRunner(client);
  }

  /** The prefix of the store's keys. */
  get prefix() {
    return this.#prefix;
  }

  /**
   * This store as `tenant` writes it: its puts count against the tenant's
   * `maxTenantBytes` and `maxTenantSessions`, and the sessions it creates
   * are the tenant's (another tenant's put to them is `STORE_REFUSED`).
   * Reads, lists and deletes are the store's own.
   */
  forTenant(tenant) {
    return new TenantStore(this, checkName('tenant', tenant));
  }

  /** The script runner, connecting first when the store makes its own client. */
  async #runner() {
    if (this.#run) return this.#run;
    if (this.#connecting === undefined) {
      const connecting = connectUrl(this.#url, this.#timeoutMs, (client) => {
        this.#client = client;
      }).then((client) => {
        const run = scriptRunner(client);
        if (this.#connecting === connecting) this.#run = run;
        return run;
      });
      // A failed connection is tried again by the next call.
      connecting.catch(() => {
        if (this.#connecting === connecting) this.#connecting = undefined;
      });
      this.#connecting = connecting;
    }
    return this.#connecting;
  }

  /**
   * Runs script `name` with `args` (after the prefix) within `timeoutMs`.
   * Whatever goes wrong on the way is `STORE_FAILED`: a timeout names
   * `timeoutMs`, anything else `store`.
   */
  async #call(name, args) {
    let timer;
    const late = new Promise((_, reject) => {
      timer = setTimeout(() => reject(new StoreError(
        `Redis did not answer within ${this.#timeoutMs} ms`,
        'STORE_FAILED',
        'timeoutMs',
      )), this.#timeoutMs);
    });
    const call = this.#runner().then((run) => run(SCRIPTS[name], [`${this.#prefix}total`], [this.#prefix, ...args]));
    try {
      return await Promise.race([call, late]);
    } catch (err) {
      if (err instanceof TraceLiteError) throw err;
      const failed = new StoreError(`the Redis call failed: ${err?.message ?? err}`, 'STORE_FAILED', 'store');
      failed.cause = err;
      throw failed;
    } finally {
      clearTimeout(timer);
    }
  }

  #clock() {
    return String(Math.floor(this.#now()));
  }

  /**
   * Full text of a blob; `SPILL_NOT_FOUND` when missing or expired (an
   * expired blob is removed), `SPILL_CORRUPT` when a content key's text does
   * not hash to it (changed in Redis behind the store's back).
   */
  async get(session, key) {
    checkName('session', session);
    checkName('key', key);
    const text = replyText(await this.#call('get', [session, key, this.#clock()]));
    if (text === undefined) throw notFound(session, key);
    return verified(session, key, text);
  }

  /**
   * Stores a blob for `ttlSeconds`. Resolves `true` when written, `false`
   * when the same text was already there (its time to live then starts
   * again). A different text under a held key is `STORE_REFUSED` naming
   * `key`, and so is a blob that does not fit its limits once evictions made
   * what room they may (`path` names the limit; a session of another tenant:
   * `session`); a content key whose text does not hash to it is
   * `SPILL_CORRUPT`. `tenant`: the tenant whose limits it counts against (`forTenant`).
   */
  async put(session, key, text, { tenant = UNOWNED } = {}) {
    if (typeof text !== 'string') {
      throw new InputError(`must be a string, got ${describe(text)}`, 'INVALID_REQUEST', 'text');
    }
    checkName('session', session);
    checkName('key', key);
    if (tenant !== UNOWNED) checkName('tenant', tenant);
    const blob = facts(text);
    if (!matchesKey(key, blob.hash)) throw corrupt(session, key);
    const reply = await this.#call('put', [
      session, key, tenant, text, String(blob.lines), this.#clock(), String(this.#ttl * 1000),
      ...QUOTA_OPTIONS.map((name) => String(this.#limits[name])), String(EXPIRE_BATCH),
    ]);
    const [outcome, field, message] = reply.map(replyText);
    if (outcome === 'written') return true;
    if (outcome === 'same') return false;
    throw new StoreError(message, 'STORE_REFUSED', field);
  }

  /** Blobs of a session that have not expired: `[{ key, bytes, lines }]`, by key. */
  async list(session) {
    checkName('session', session);
    const flat = await this.#call('list', [session, this.#clock()]);
    const out = [];
    for (let i = 0; i < flat.length; i += 3) {
      out.push({ key: replyText(flat[i]), bytes: replyNumber(flat[i + 1]), lines: replyNumber(flat[i + 2]) });
    }
    return out.sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
  }

  /** Removes a blob; resolves whether it was held. */
  async delete(session, key) {
    checkName('session', session);
    checkName('key', key);
    return replyNumber(await this.#call('delete', [session, key])) === 1;
  }

  /**
   * The counts the limits see: `{ totalBytes, sessions: [{ session, tenant,
   * bytes, blobs }], tenants: [{ tenant, bytes, sessions }] }`, by name (a
   * blob past its time to live counts until a read, a put to its session
   * after the whole session expired, or a sweep removes it; `tenant` is `''`
   * for sessions written without one).
   */
  async usage() {
    const [total, sessions, tenants] = await this.#call('usage', []);
    const byName = (field) => (a, b) => (a[field] < b[field] ? -1 : a[field] > b[field] ? 1 : 0);
    const rows = (flat, make) => {
      const out = [];
      for (let i = 0; i < flat.length; i += make.length) out.push(make(...flat.slice(i, i + make.length)));
      return out;
    };
    return {
      totalBytes: replyNumber(total),
      sessions: rows(sessions, (s, t, b, n) => ({ session: replyText(s), tenant: replyText(t) ?? '', bytes: replyNumber(b), blobs: replyNumber(n) }))
        .sort(byName('session')),
      tenants: rows(tenants, (t, b, n) => ({ tenant: replyText(t) ?? '', bytes: replyNumber(b), sessions: replyNumber(n) }))
        .sort(byName('tenant')),
    };
  }

  /**
   * Removes every blob past its time to live (Redis frees their texts on
   * its own; this gives their bytes back to the counts). Resolves `{ blobs,
   * bytes, sessions }` removed (sessions left without blobs).
   */
  async sweep() {
    const removed = { blobs: 0, bytes: 0, sessions: 0 };
    let cursor = '0';
    do {
      const [next, blobs, bytes, sessions] = await this.#call('sweep', [this.#clock(), String(this.#ttl * 1000), cursor, String(SWEEP_BATCH)]);
      cursor = replyText(next);
      removed.blobs += replyNumber(blobs);
      removed.bytes += replyNumber(bytes);
      removed.sessions += replyNumber(sessions);
    } while (cursor !== '0');
    return removed;
  }

  /** Closes the client the store made from `url` (one it was given is the caller's to close). */
  async close() {
    if (!this.#owned || this.#client === undefined) return;
    const client = this.#client;
    this.#client = undefined;
    this.#connecting = undefined;
    this.#run = undefined;
    await closeClient(client, this.#timeoutMs);
  }
}
