// Types of 'tracelite/redis-store': a spill store in Redis, shared by every process and host.
import type { OutsideSpillStore } from '../kv-store/index.js';
import type { QuotaOptions } from '../../internal/quota.js';

/**
 * What the store asks of a Redis client: one of these shapes.
 * - node-redis (`redis` ≥ 5, `createClient(...)`, connected): its `sendCommand`;
 * - ioredis (`new Redis(...)`): its `callBuffer`;
 * - any object whose `sendCommand(args)` sends one command and resolves its
 *   RESP reply (bulk strings as strings or bytes, arrays as arrays, nil as null);
 * - a REST client with `eval(script, keys, args)` (and optionally
 *   `evalsha(sha, keys, args)`) resolving the script's reply, as Upstash's
 *   `@upstash/redis` (made with `automaticDeserialization: false`).
 * Every store operation is one Lua script (EVALSHA, EVAL when the server does not know it yet).
 */
export type RedisClientLike =
  | { sendCommand(args: string[], options?: any): Promise<unknown> }
  | { callBuffer(command: string, ...args: string[]): Promise<unknown> }
  | {
      eval(script: string, keys: string[], args: string[]): Promise<unknown>;
      evalsha?(sha: string, keys: string[], args: string[]): Promise<unknown>;
    };

/** Options of `RedisStore`: exactly one of `client` and `url`. */
export interface RedisStoreOptions extends QuotaOptions {
  /** A connected Redis client (see `RedisClientLike`); the caller closes it. */
  client?: RedisClientLike;
  /**
   * `redis://…` or `rediss://…`: the store makes a node-redis client (the optional peer
   * dependency `redis`), connects on its first call, reconnects on its own, and closes it on `close()`.
   * Node, Deno and Bun only (elsewhere `UNSUPPORTED_HOST`: pass a `client`).
   */
  url?: string;
  /**
   * Prefix of every key the store writes: one per deployment (stores with the same prefix share
   * blobs and counts). For Redis Cluster give it a hash tag (`'tl:{prod}:'`). Default `'tracelite:'`.
   */
  prefix?: string;
  /** Seconds a blob lives after it was last written; 0: forever. Default 7 days. */
  ttlSeconds?: number;
  /** Milliseconds a call may wait for Redis (connecting included); then it rejects with `STORE_FAILED` naming `timeoutMs`. Default 5,000. */
  timeoutMs?: number;
  /** Clock in milliseconds, for tests. Default `Date.now`. */
  now?: () => number;
}

/** The counts the limits see (`RedisStore#usage`). */
export interface RedisStoreUsage {
  totalBytes: number;
  /** `tenant` is `''` for sessions written without one. */
  sessions: { session: string; tenant: string; bytes: number; blobs: number }[];
  tenants: { tenant: string; bytes: number; sessions: number }[];
}

/** What a sweep removed. */
export interface RedisStoreSweep {
  /** Expired blobs. */
  blobs: number;
  /** Their bytes. */
  bytes: number;
  /** Sessions left without blobs. */
  sessions: number;
}

/** Default `ttlSeconds`: 7 days. */
export const DEFAULT_TTL_SECONDS: number;
/** Default `maxBytes`: 512 MiB. */
export const DEFAULT_MAX_BYTES: number;
/** Default `maxSessionBytes`: 64 MiB. */
export const DEFAULT_MAX_SESSION_BYTES: number;
/** Default `maxTenantBytes`: 128 MiB. */
export const DEFAULT_MAX_TENANT_BYTES: number;
/** Default `maxTenantSessions`: 1,000. */
export const DEFAULT_MAX_TENANT_SESSIONS: number;
/** Default `timeoutMs`: 5,000. */
export const DEFAULT_TIMEOUT_MS: number;
/** Default `prefix`: `'tracelite:'`. */
export const DEFAULT_PREFIX: string;

/**
 * Spills in Redis (`<prefix>b:<session>:<key>`, UTF-8 bytes, with a TTL), so that proxies
 * on many processes and hosts share sessions: pass it as `store` to `createProxy` (or to the
 * adapters) on each. Same rules as the other stores (content keys verified, a held key never
 * given another text, `SPILL_NOT_FOUND` once expired) and the FileStore's limits, kept
 * atomically in Redis for every process: per session, per tenant (`forTenant`) and in all,
 * evicting the least recently written sessions. A call Redis does not answer within
 * `timeoutMs`, or that fails, rejects with `STORE_FAILED`.
 */
export interface RedisStore extends Omit<OutsideSpillStore, 'delete'> {}
export class RedisStore {
  constructor(options: RedisStoreOptions);
  /** The prefix of the store's keys. */
  readonly prefix: string;
  /** Stores a blob; `tenant`: the tenant whose limits it counts against (as `forTenant(tenant).put`). */
  put(session: string, key: string, text: string, options?: { tenant?: string }): Promise<boolean>;
  /** Removes a blob; resolves whether it was held. */
  delete(session: string, key: string): Promise<boolean>;
  /**
   * This store as `tenant` writes it: puts count against the tenant's limits and the sessions it
   * makes are the tenant's; reads are the store's. `INVALID_SPILL_KEY` for a bad tenant name.
   */
  forTenant(tenant: string): OutsideSpillStore & { readonly tenant: string };
  /** The running counts (a blob past its time to live counts until a read or a sweep removes it). */
  usage(): Promise<RedisStoreUsage>;
  /** Removes expired blobs from the counts (Redis frees their texts on its own). */
  sweep(): Promise<RedisStoreSweep>;
  /** Closes the client the store made from `url`; a client it was given stays open. */
  close(): Promise<void>;
}
