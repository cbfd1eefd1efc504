// Test support: one proxy process of a deployment sharing its sessions
// through Redis, as a Node host runs it: createProxy with a RedisStore,
// served by the package's serveNode on a free loopback port. Settings come
// as JSON in the environment (TRACELITE_PROXY: `{ redisUrl, upstream,
// secret, prefix, imageBaseUrl, options, timeoutMs }`; without `redisUrl`
// the proxy keeps its sessions in memory); it prints `{ "url": … }` once it
// listens and ends when its stdin closes.
import { createProxy } from '../../../pkg/adapters/proxy/index.js';
import { serveNode } from '../../../pkg/adapters/proxy/threads.js';
import { RedisStore } from '../../../pkg/adapters/redis-store/index.js';

const s = JSON.parse(process.env.TRACELITE_PROXY);
const store = s.redisUrl ? new RedisStore({ url: s.redisUrl, prefix: s.prefix, ...(s.timeoutMs ? { timeoutMs: s.timeoutMs } : {}) }) : undefined;
const proxy = createProxy({
  upstream: s.upstream,
  ...(store ? { store } : {}),
  secret: s.secret,
  options: s.options,
  ...(s.imageBaseUrl ? { imageBaseUrl: s.imageBaseUrl } : {}),
});
const server = await serveNode(proxy, { port: 0 });
process.stdout.write(`${JSON.stringify({ url: `http://127.0.0.1:${server.address().port}`, pid: process.pid })}\n`);
process.stdin.on('end', async () => {
  server.close();
  await store?.close();
  process.exit(0);
}).resume();
