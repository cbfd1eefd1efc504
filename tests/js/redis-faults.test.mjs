// Issue 55 item 3: the proxy with a RedisStore when Redis fails. Redis killed
// mid-session: STORE_FAILED, the request forwarded masked (onError:
// 'forward') or refused with 503 (onError: 'reject'), never forwarded as it
// came; the spill routes answer 503 STORE_FAILED. A restarted Redis with an
// append-only file keeps the sessions; one without answers SPILL_NOT_FOUND and
// the session goes on. A Redis that does not answer (CLIENT PAUSE) holds no
// request beyond timeoutMs. Each test runs its own redis-server; skipped,
// saying why, where redis-server is not installed.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createProxy } from '../../pkg/adapters/proxy/index.js';
import { RedisStore } from '../../pkg/adapters/redis-store/index.js';
import { bigOutput, conversation } from './support/proxy-tools.mjs';
import { REDIS_MISSING, redisClient, startRedis } from './support/redis.mjs';

const skip = REDIS_MISSING;
const SECRET = 'redis-faults-test-secret-4f1c2b8e9d7a6350';
const AWS_KEY = 'AKIAIOSFODNN7EXAMPLE';
const OPTIONS = { budget: 16000, provider: 'openai' };

/** A tool output with a secret near its top and enough lines to spill. */
function output(seed) {
  const lines = bigOutput(`needle ${seed}`).split('\n');
  lines.splice(2, 0, `AWS_ACCESS_KEY_ID=${AWS_KEY}`);
  return lines.join('\n');
}

/** A proxy with `store` in front of a stub provider recording what reached it. */
function setup(store, extra = {}) {
  const received = [];
  const fetch = async (request) => {
    received.push(await request.text());
    return new Response('{"id":"ok"}', { headers: { 'content-type': 'application/json' } });
  };
  return { proxy: createProxy({ upstream: 'http://upstream.test', fetch, store, secret: SECRET, options: OPTIONS, ...extra }), received };
}

function post(proxy, body, session = 'agent') {
  return proxy(new Request('http://proxy.test/v1/chat/completions', {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: 'Bearer sk-client-000000000000000000000', 'x-tracelite-session': session },
    body: JSON.stringify(body),
  }));
}

/**
 * `GET /spill/<key>` of a session token. A proxy keeps what it read (masked)
 * in memory: to ask the store, read through another replica (\`setup(store)\`).
 */
const readSpill = (proxy, token, key) => proxy(new Request(`http://proxy.test/spill/${key}?offset=1499&limit=2`, { headers: { 'x-tracelite-session': token } }));

/** The session a token names (`<session>.<tenant>.<signature>`). */
const sessionOf = (token) => token.split('.')[0];

/** The first spill key of this session in a forwarded body. */
const spillKey = (body) => /spill:\/\/[^/]+\/([A-Za-z0-9._-]+)/.exec(body)[1];

/** Turn one of a session through `proxy`: compressed, its spill readable. Returns `{ token, key }`. */
async function firstTurn(proxy, received) {
  const res = await post(proxy, conversation('openai-chat', output(1)));
  assert.equal(res.status, 200, await res.clone().text());
  assert.equal(res.headers.get('x-tracelite-skipped'), null, 'compressed');
  await res.text();
  const token = res.headers.get('x-tracelite-session');
  const key = spillKey(received.at(-1));
  const read = await readSpill(proxy, token, key);
  assert.equal(read.status, 200);
  assert.match((await read.json()).text, /needle 1/);
  return { token, key };
}

test('Redis killed mid-session: STORE_FAILED, forwarded masked or refused (onError), never forwarded as it came; spill reads 503', { skip, timeout: 60_000 }, async () => {
  const redis = await startRedis();
  const store = new RedisStore({ url: redis.url, prefix: 'faults:', timeoutMs: 400 });
  try {
    const forward = setup(store);
    const reject = setup(store, { onError: 'reject' });
    const { token, key } = await firstTurn(forward.proxy, forward.received);
    await redis.kill();
    // The next turn brings a new output to spill: the store cannot keep it.
    const next = conversation('openai-chat', output(2));
    const started = performance.now();
    const res = await post(forward.proxy, next);
    await res.text();
    assert.ok(performance.now() - started < 3000, `answered in ${Math.round(performance.now() - started)} ms`);
    assert.equal(res.status, 200);
    assert.equal(res.headers.get('x-tracelite-skipped'), 'STORE_FAILED');
    assert.ok(Number(res.headers.get('x-tracelite-redacted')) >= 1);
    const sent = forward.received.at(-1);
    assert.ok(!sent.includes(AWS_KEY), 'the secret went upstream');
    assert.notEqual(sent, JSON.stringify(next), 'forwarded as it came');
    // onError: 'reject': the client gets the typed error and nothing goes upstream.
    const refused = await post(reject.proxy, next, 'other');
    assert.equal(refused.status, 503);
    assert.equal((await refused.json()).error.code, 'STORE_FAILED');
    assert.equal(reject.received.length, 0);
    // The spill route of a replica that has not read it yet answers a typed 503, not a bare 500.
    const read = await readSpill(setup(store).proxy, token, key);
    assert.equal(read.status, 503);
    assert.equal((await read.json()).error.code, 'STORE_FAILED');
    await assert.rejects(store.get(sessionOf(token), key), (err) => err.name === 'TraceLiteError' && err.code === 'STORE_FAILED' && err.group === 'store');
  } finally {
    await store.close();
    await redis.stop();
  }
});

test('a restarted Redis with an append-only file keeps the sessions: another proxy instance reads their spills', { skip, timeout: 60_000 }, async () => {
  const redis = await startRedis({ persist: true });
  const store = new RedisStore({ url: redis.url, prefix: 'aof:', timeoutMs: 3000 });
  try {
    const first = setup(store);
    const { token, key } = await firstTurn(first.proxy, first.received);
    await redis.kill();
    await redis.restart();
    // A new instance (no caches of its own), the same deployment secret.
    const other = new RedisStore({ url: redis.url, prefix: 'aof:', timeoutMs: 3000 });
    try {
      const read = await readSpill(setup(other).proxy, token, key);
      assert.equal(read.status, 200);
      assert.match((await read.json()).text, /needle 1/);
    } finally {
      await other.close();
    }
    assert.match(await store.get(sessionOf(token), key), /needle 1/, 'the first store reconnected on its own');
  } finally {
    await store.close();
    await redis.stop();
  }
});

test('a restarted Redis without persistence: SPILL_NOT_FOUND (typed, 404) for what it lost, and the session goes on', { skip, timeout: 60_000 }, async () => {
  const redis = await startRedis();
  const store = new RedisStore({ url: redis.url, prefix: 'gone:', timeoutMs: 3000 });
  try {
    const { proxy, received } = setup(store);
    const { token, key } = await firstTurn(proxy, received);
    await redis.kill();
    await redis.restart();
    const read = await readSpill(setup(store).proxy, token, key);
    assert.equal(read.status, 404);
    const { error } = await read.json();
    assert.equal(error.code, 'SPILL_NOT_FOUND');
    await assert.rejects(store.get(sessionOf(token), key), (err) => err.code === 'SPILL_NOT_FOUND' && err.group === 'store');
    // The next turn is compressed, and its new spill is readable.
    const res = await post(proxy, conversation('openai-chat', output(3)));
    assert.equal(res.status, 200);
    assert.equal(res.headers.get('x-tracelite-skipped'), null);
    await res.text();
    const fresh = spillKey(received.at(-1));
    const again = await readSpill(proxy, res.headers.get('x-tracelite-session'), fresh);
    assert.equal(again.status, 200);
    assert.match((await again.json()).text, /needle 3/);
  } finally {
    await store.close();
    await redis.stop();
  }
});

test('a Redis that does not answer (CLIENT PAUSE) holds no request beyond timeoutMs: STORE_FAILED naming timeoutMs', { skip, timeout: 60_000 }, async () => {
  const redis = await startRedis();
  const timeoutMs = 300;
  const store = new RedisStore({ url: redis.url, prefix: 'slow:', timeoutMs });
  const admin = await redisClient(redis.url);
  try {
    const forward = setup(store);
    const reject = setup(store, { onError: 'reject' });
    const { token, key } = await firstTurn(forward.proxy, forward.received);
    await admin.sendCommand(['CLIENT', 'PAUSE', '2500', 'ALL']);
    const timed = async (fn) => {
      const started = performance.now();
      const value = await fn();
      return { value, ms: performance.now() - started };
    };
    const got = await timed(() => store.get(sessionOf(token), key).then(() => undefined, (err) => err));
    assert.equal(got.value?.code, 'STORE_FAILED');
    assert.equal(got.value.path, 'timeoutMs');
    assert.ok(got.ms >= timeoutMs - 5 && got.ms < timeoutMs + 400, `${got.ms} ms`);
    const fwd = await timed(async () => {
      const res = await post(forward.proxy, conversation('openai-chat', output(4)));
      await res.text();
      return res;
    });
    assert.equal(fwd.value.headers.get('x-tracelite-skipped'), 'STORE_FAILED');
    assert.ok(!forward.received.at(-1).includes(AWS_KEY));
    const rej = await timed(async () => {
      const res = await post(reject.proxy, conversation('openai-chat', output(5)), 'other');
      return { status: res.status, body: await res.json() };
    });
    assert.equal(rej.value.status, 503);
    assert.equal(rej.value.body.error.code, 'STORE_FAILED');
    const read = await timed(async () => {
      const res = await readSpill(setup(store).proxy, token, key);
      return { status: res.status, body: await res.json() };
    });
    assert.deepEqual([read.value.status, read.value.body.error.code, read.value.body.error.path], [503, 'STORE_FAILED', 'timeoutMs']);
    // Each request waited for Redis at most a few timeouts (its store calls one after another), not the pause.
    for (const [what, t] of [['forwarded', fwd], ['refused', rej], ['spill read', read]]) {
      assert.ok(t.ms < 2000, `${what}: ${Math.round(t.ms)} ms with Redis paused for 2,500 ms`);
    }
    // Once Redis answers again, so does the store.
    await new Promise((resolve) => setTimeout(resolve, 2600));
    assert.match(await store.get(sessionOf(token), key), /needle 1/);
  } finally {
    await admin.close().catch(() => {});
    await store.close();
    await redis.stop();
  }
});
