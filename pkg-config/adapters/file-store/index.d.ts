// Types of 'tracelite/file-store': a spill store on the local filesystem (Node, Deno, Bun).
import type { OutsideSpillStore } from '../kv-store/index.js';
import type { QuotaOptions } from '../../internal/quota.js';

/** Options of `FileStore`. */
export interface FileStoreOptions extends QuotaOptions {
  /**
   * The directory spills live under (created 0700 when missing); one directory per session in it.
   * An existing directory is never chmodded, and is refused (`STORE_UNSAFE`) when its group or others may write it.
   */
  root: string;
  /** Seconds a blob lives after it was last written; 0: forever. Default 7 days. */
  ttlSeconds?: number;
  /** Sweep (see `sweep`) on the store's first call. Default true. */
  sweepOnOpen?: boolean;
  /** Clock in milliseconds, for tests. Default `Date.now`. */
  now?: () => number;
  /** Called after a temporary file is written, before it gets the blob's name (fault injection). */
  onTempWritten?: (tempPath: string) => void | Promise<void>;
}

/** What a sweep removed. */
export interface FileStoreSweep {
  /** Expired blobs. */
  blobs: number;
  /** Their bytes. */
  bytes: number;
  /** Temporary files of writers that died (older than `STALE_TEMP_SECONDS`). */
  temps: number;
  /** Session directories left empty. */
  sessions: number;
}

/** Default `ttlSeconds`: 7 days. */
export const DEFAULT_TTL_SECONDS: number;
/** Default `maxBytes`: 1 GiB. */
export const DEFAULT_MAX_BYTES: number;
/** Default `maxSessionBytes`: 256 MiB. */
export const DEFAULT_MAX_SESSION_BYTES: number;
/** Default `maxTenantBytes`: 256 MiB. */
export const DEFAULT_MAX_TENANT_BYTES: number;
/** Default `maxTenantSessions`: 1,000. */
export const DEFAULT_MAX_TENANT_SESSIONS: number;

/** The running counts the limits see (`FileStore#usage`). */
export interface FileStoreUsage {
  totalBytes: number;
  /** `tenant` is `''` for sessions written without one. */
  sessions: { session: string; tenant: string; bytes: number; blobs: number }[];
  tenants: { tenant: string; bytes: number; sessions: number }[];
}
/** Age (seconds) past which a sweep removes a leftover temporary file: 1 hour. */
export const STALE_TEMP_SECONDS: number;

/**
 * Spills as files, `<root>/<session>/<key>.txt` (directories 0700, files
 * 0600, written to a temporary file then linked to their name, never
 * replacing a file), so they outlive the
 * process and an agent can read them with its own tools: pass it as `store`
 * to an adapter with `pointer: 'path'` and excerpts name the file. A symlink
 * where the store keeps a directory or a file is refused with `STORE_UNSAFE`,
 * and so is a blob's file with another (hard) link.
 *
 * Limits are kept as running counts (loaded from disk once; a put reserves
 * its bytes before it writes, so concurrent puts never pass one), shared by
 * the stores of one root in a process and by `createThreadedProxy`'s threads.
 * Puts through `forTenant(t)` (the proxy's, per client) also count against
 * the tenant's limits, whose least recently written sessions make room; a
 * full store evicts the oldest sessions of the tenant holding the most bytes.
 * On a host without a filesystem the constructor throws `UNSUPPORTED_HOST`.
 */
export interface FileStore extends OutsideSpillStore {}
export class FileStore {
  constructor(options: FileStoreOptions);
  /** The root directory, absolute (the `spill.pointerRoot` of `pointer: 'path'`). */
  readonly root: string;
  /** The file of a blob: `<root>/<session>/<key>.txt`. */
  pathOf(session: string, key: string): string;
  /** Stores a blob; `tenant`: the tenant whose limits it counts against (as `forTenant(tenant).put`). */
  put(session: string, key: string, text: string, options?: { tenant?: string }): Promise<boolean>;
  /**
   * This store as `tenant` writes it: puts count against the tenant's limits and the sessions it
   * makes are the tenant's; reads are the store's. `INVALID_SPILL_KEY` for a bad tenant name.
   */
  forTenant(tenant: string): OutsideSpillStore & { readonly tenant: string; readonly root: string; pathOf(session: string, key: string): string };
  /** The running counts (a blob past its time to live counts until a read or a sweep removes it). */
  usage(): Promise<FileStoreUsage>;
  /** Removes expired blobs, dead writers' temporary files and empty session directories. */
  sweep(): Promise<FileStoreSweep>;
}
