// Internal (RedisStore, Node, Deno, Bun): the node-redis client the store makes
// for its `url` option. Elsewhere (workers, browsers) url-unsupported.js
// stands in its place (package.json `imports` "#redis-url"): there the store
// takes a client of the caller's (Upstash's REST client, say).
import { OptionError } from '../../core/errors.js';

/** Whether this host can make a client from `url`. */
export const URL_SUPPORTED = true;

/**
 * The optional peer dependency `url` needs, by a name bundlers leave alone
 * (a store given its own client, on the edge say, never loads it).
 */
const REDIS_PACKAGE = 'redis';

/**
 * A node-redis client for `url`, connected (`redis` must be installed: an
 * optional peer dependency). Its errors are taken by the calls that meet
 * them (a listener keeps a lost connection from ending the process); it
 * reconnects on its own, and calls in between wait (within `timeoutMs`).
 * `onClient(client)` gets it before it first connects.
 */
export async function connectUrl(url, timeoutMs, onClient) {
  let redis;
  try {
    redis = await import(/* webpackIgnore: true */ REDIS_PACKAGE);
  } catch (err) {
    const failed = new OptionError("url needs the 'redis' package (npm install redis), or pass your own client as { client }", 'INVALID_OPTION', 'url');
    failed.cause = err;
    throw failed;
  }
  const client = redis.createClient({
    url,
    socket: { connectTimeout: timeoutMs, reconnectStrategy: (retries) => Math.min(50 * 2 ** retries, 2000) },
  });
  client.on('error', () => {});
  // Known before it connects, so that `close()` can end a client still trying to.
  onClient(client);
  await client.connect();
  return client;
}

/**
 * Closes a client the store made (`connectUrl`): gracefully when it is
 * connected and answers within `timeoutMs`, else at once (a client waiting to
 * reconnect never finishes a graceful close).
 */
export async function closeClient(client, timeoutMs) {
  if (client.isReady) {
    let timer;
    const late = new Promise((resolve) => {
      timer = setTimeout(() => resolve(false), timeoutMs);
    });
    try {
      if (await Promise.race([client.close().then(() => true), late])) return;
    } catch {
      // Closed badly: destroyed below.
    } finally {
      clearTimeout(timer);
    }
  }
  client.destroy();
}

