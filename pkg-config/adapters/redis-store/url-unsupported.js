// Internal (RedisStore on a host without node-redis: workers, browsers, edge
// runtimes): `url` is refused at once with a typed error; the store takes a
// client of the caller's there (Upstash's REST client, say).
import { HostError } from '../../core/errors.js';

/** Whether this host can make a client from `url`. */
export const URL_SUPPORTED = false;

/** Never called here (the constructor refuses `url` first, with `UNSUPPORTED_HOST`). */
export async function connectUrl() {
  throw new HostError('RedisStore({ url }) needs Node, Deno or Bun (node-redis)', 'UNSUPPORTED_HOST', 'url');
}

export async function closeClient() {}
