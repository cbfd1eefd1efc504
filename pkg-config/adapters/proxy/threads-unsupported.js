// createThreadedProxy on a host without Node's worker threads (browsers,
// Workers, edge runtimes): the same exports, and a typed error on use.
import { HostError } from '../../core/errors.js';

export const MAX_THREADS = 64;
export const MAX_ROUTES = 65_536;

/** Throws `UNSUPPORTED_HOST`: threads need Node's `node:worker_threads`. */
export async function createThreadedProxy() {
  throw new HostError(
    'createThreadedProxy needs Node (node:worker_threads); on this host use createProxy from tracelite/proxy (an edge runtime runs isolates side by side itself)',
    'UNSUPPORTED_HOST',
    'createThreadedProxy',
  );
}

/** Throws `UNSUPPORTED_HOST`: serving needs Node's `node:http`. */
export async function serveNode() {
  throw new HostError('needs Node (node:http); on this host the runtime serves the handler', 'UNSUPPORTED_HOST', 'serveNode');
}
