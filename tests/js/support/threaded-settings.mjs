// Test support: the settings module of createThreadedProxy's tests. Every
// thread imports it; `data` says what to serve.
import { FileStore } from '../../../pkg/adapters/file-store/index.js';
import { RedisStore } from '../../../pkg/adapters/redis-store/index.js';

export default function settings(data) {
  const stub = async () => new Response('{"ok":true}', { headers: { 'content-type': 'application/json' } });
  /** A fetch that ends its thread when the body holds `crashOn` (a crash under a request). */
  const crashing = async (request) => {
    if ((await request.clone().text()).includes(data.crashOn)) process.exit(1);
    return globalThis.fetch(request);
  };
  /** A fetch whose response body ends its thread after the first chunk (a crash mid-stream). */
  const crashingStream = async () => {
    let sent = 0;
    const body = new ReadableStream({
      pull(c) {
        if (sent++ === 0) c.enqueue(new TextEncoder().encode('data: {"a":1}\n\n'));
        else process.exit(1);
      },
    }, { highWaterMark: 0 });
    return new Response(body, { headers: { 'content-type': 'text/event-stream' } });
  };
  return {
    upstream: data.upstream ?? 'http://upstream.test',
    options: data.options,
    ...(data.secret ? { secret: data.secret } : {}),
    ...(data.maxCompressMsPerMinute ? { maxCompressMsPerMinute: data.maxCompressMsPerMinute } : {}),
    ...(data.maxBodyBytes ? { maxBodyBytes: data.maxBodyBytes } : {}),
    ...(data.stub ? { fetch: stub } : data.crashOn ? { fetch: crashing } : data.crashMidStream ? { fetch: crashingStream } : {}),
    ...(data.fileStore ? { store: new FileStore(data.fileStore) } : {}),
    ...(data.redisStore ? { store: new RedisStore(data.redisStore) } : {}),
    ...(data.extra ?? {}),
  };
}
