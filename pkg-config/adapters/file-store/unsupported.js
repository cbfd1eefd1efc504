// FileStore on a host without a filesystem (browsers, Workers, edge
// runtimes): the same exports, and a typed error naming the host on use.
import { HostError } from '../../core/errors.js';

export const DEFAULT_TTL_SECONDS = 7 * 24 * 3600;
export const DEFAULT_MAX_BYTES = 2 ** 30;
export const DEFAULT_MAX_SESSION_BYTES = 2 ** 28;
export const DEFAULT_MAX_TENANT_BYTES = 2 ** 28;
export const DEFAULT_MAX_TENANT_SESSIONS = 1000;
export const STALE_TEMP_SECONDS = 3600;

/** The host this module runs on, for the error. */
function hostName() {
  if (typeof globalThis.navigator?.userAgent === 'string' && globalThis.navigator.userAgent !== '') {
    return globalThis.navigator.userAgent;
  }
  if (typeof globalThis.EdgeRuntime === 'string') return `edge runtime ${globalThis.EdgeRuntime}`;
  return 'an unknown host';
}

/** Throws `UNSUPPORTED_HOST`: a FileStore needs Node, Deno or Bun. */
export class FileStore {
  constructor() {
    throw new HostError(
      `FileStore needs a filesystem (Node, Deno or Bun); this host (${hostName()}) has none: use SpillStore, KvSpillStore or DoSpillStore`,
      'UNSUPPORTED_HOST',
      'store',
    );
  }
}
