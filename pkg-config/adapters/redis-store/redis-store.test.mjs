// RedisStore against a real redis-server of the test's own (tests/js/support/redis.mjs):
// blobs exact and namespaced, the other stores' rules (never another text, content
// keys verified, time to live), the FileStore's quotas kept atomically in Redis
// (tenants, eviction of the least recently written sessions, concurrent puts and
// processes), the client shapes it takes, and typed errors for bad options.
// Skipped, saying why, where redis-server is not installed.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import IORedis from 'ioredis';
import { SpillStore, compress, compressAsync, handleToolCall, handleToolCallAsync } from '../../../pkg/entries/node.js';
import { RedisStore } from '../../../pkg/adapters/redis-store/index.js';
import { REDIS_MISSING, freePort, redisClient, startRedis } from '../../../tests/js/support/redis.mjs';

const STORE_MODULE = fileURLToPath(new URL('../../../pkg/adapters/redis-store/index.js', import.meta.url));
const DAY_MS = 24 * 3600 * 1000;
const code = (c, path) => (err) => err?.code === c && (path === undefined || err.path === path);
const skip = REDIS_MISSING;

let redis;
let client;
let prefixes = 0;
/** A fresh prefix: each test its own namespace in the one server. */
const fresh = () => `t${++prefixes}:`;

before(async () => {
  if (skip) return;
  redis = await startRedis();
  client = await redisClient(redis.url);
});

after(async () => {
  await client?.close();
  await redis?.stop();
});

/** Bytes of the blob texts under `prefix`, as Redis holds them. */
async function heldBytes(prefix) {
  let total = 0;
  for (const key of await client.keys(`${prefix}b:*`)) total += await client.strLen(key);
  return total;
}

test('a blob comes back exactly (multi-byte text, surrogate pairs, NUL, CRLF), with its size and lines; put says whether it wrote', { skip }, async () => {
  const store = new RedisStore({ client, prefix: fresh() });
  const text = 'héllo 🌍 \u0000 naïve\r\nzweite Zeile — 日本語\n'.repeat(500);
  assert.equal(await store.put('s', 'k', text), true);
  assert.equal(await store.put('s', 'k', text), false, 'the same text again is no write');
  assert.equal(await store.get('s', 'k'), text);
  assert.deepEqual(await store.list('s'), [{ key: 'k', bytes: Buffer.byteLength(text), lines: 1000 }]);
  // What Redis holds is the UTF-8 bytes, under the prefix.
  const raw = await client.withTypeMapping({ 36: Buffer }).get(`${store.prefix}b:s:k`);
  assert.ok(Buffer.from(text, 'utf8').equals(raw));
  assert.equal(await store.delete('s', 'k'), true);
  assert.equal(await store.delete('s', 'k'), false);
  await assert.rejects(store.get('s', 'k'), code('SPILL_NOT_FOUND'));
  assert.deepEqual(await client.keys(`${store.prefix}*`), [], 'nothing left behind');
});

test('prefixes namespace deployments: stores with different prefixes never see each other\'s blobs nor counts', { skip }, async () => {
  const a = new RedisStore({ client, prefix: fresh(), maxBytes: 100 });
  const b = new RedisStore({ client, prefix: fresh(), maxBytes: 100 });
  await a.put('s', 'k', 'a'.repeat(80));
  await b.put('s', 'k', 'b'.repeat(80));
  assert.equal(await a.get('s', 'k'), 'a'.repeat(80));
  assert.equal(await b.get('s', 'k'), 'b'.repeat(80));
  assert.equal((await a.usage()).totalBytes, 80);
  assert.equal((await b.usage()).totalBytes, 80);
  for (const key of await client.keys('*')) assert.ok(/^t\d+:/.test(key), key);
});

test('never another text under a held key; a content key must be the hash of its text; one altered in Redis is refused on read', { skip }, async () => {
  const store = new RedisStore({ client, prefix: fresh() });
  await store.put('s', 'note', 'first');
  await assert.rejects(store.put('s', 'note', 'second'), code('STORE_REFUSED', 'key'));
  assert.equal(await store.get('s', 'note'), 'first');
  // A content key: `<kind>-<32 hex>` of the SHA-256 of its text.
  const { spills } = compress({ model: 'm', messages: [
    { role: 'user', content: 'go' },
    { role: 'assistant', content: null, tool_calls: [{ id: 'c', type: 'function', function: { name: 'bash', arguments: '{}' } }] },
    { role: 'tool', tool_call_id: 'c', content: Array.from({ length: 3000 }, (_, i) => `line ${i} of the log`).join('\n') },
  ] }, { budget: 4000, session: 's', store: new SpillStore() });
  const [blob] = spills;
  await assert.rejects(store.put('s', blob.key, `${blob.text} forged`), code('SPILL_CORRUPT'));
  assert.equal(await store.persist(spills), spills.length);
  assert.equal(await store.get('s', blob.key), blob.text);
  await client.set(`${store.prefix}b:s:${blob.key}`, `${blob.text} altered`, { KEEPTTL: true });
  await assert.rejects(store.get('s', blob.key), code('SPILL_CORRUPT'));
});

test('read pages lines and grep finds them, through the core, on what Redis holds', { skip }, async () => {
  const store = new RedisStore({ client, prefix: fresh() });
  await store.put('s', 'log', Array.from({ length: 500 }, (_, i) => (i === 321 ? 'ERROR: disk full' : `ok ${i}`)).join('\n'));
  const page = await store.read('s', 'log', 320, 3);
  assert.equal(page.text, 'ok 320\nERROR: disk full\nok 322\n');
  assert.equal(page.totalLines, 500);
  const found = await store.grep('s', 'log', 'disk full', { context: 0 });
  assert.deepEqual(found.matches, [{ line: 322, text: 'ERROR: disk full' }]);
});

test('blobs expire ttlSeconds after they were last written: on read, by a later put, by sweep(); Redis frees their texts itself', { skip }, async () => {
  let now = Date.now();
  const store = new RedisStore({ client, prefix: fresh(), now: () => now });
  await store.put('s', 'old', 'old text');
  await store.put('s', 'kept', 'kept text');
  const pttl = await client.pTTL(`${store.prefix}b:s:old`);
  assert.ok(pttl > 6 * DAY_MS && pttl <= 7 * DAY_MS, `Redis holds the text for its time to live: ${pttl}`);
  now += 4 * DAY_MS;
  assert.equal(await store.put('s', 'kept', 'kept text'), false, 'rewriting the same text restarts its time');
  now += 4 * DAY_MS;
  await assert.rejects(store.get('s', 'old'), code('SPILL_NOT_FOUND'));
  assert.equal(await client.exists(`${store.prefix}b:s:old`), 0, 'an expired blob is removed on read');
  assert.equal(await store.get('s', 'kept'), 'kept text');
  assert.deepEqual((await store.usage()).sessions, [{ session: 's', tenant: '', bytes: 9, blobs: 1 }]);
  await store.put('t', 'k', 'other session');
  now += 8 * DAY_MS;
  assert.deepEqual(await store.sweep(), { blobs: 2, bytes: 9 + 13, sessions: 2 });
  assert.deepEqual(await store.usage(), { totalBytes: 0, sessions: [], tenants: [] });
  // A put removes expired sessions on its way (a few at a time).
  await store.put('u', 'k', 'soon gone');
  now += 8 * DAY_MS;
  await store.put('v', 'k', 'new');
  assert.deepEqual((await store.usage()).sessions.map((s) => s.session), ['v']);
  // ttlSeconds 0: forever.
  const forever = new RedisStore({ client, prefix: fresh(), now: () => now, ttlSeconds: 0 });
  await forever.put('w', 'k', 'stays');
  assert.equal(await client.pTTL(`${forever.prefix}b:w:k`), -1);
  now += 1000 * DAY_MS;
  assert.equal(await forever.get('w', 'k'), 'stays');
});

test('a blob Redis dropped on its own (maxmemory eviction, FLUSH) reads as missing and leaves the counts', { skip }, async () => {
  const store = new RedisStore({ client, prefix: fresh() });
  await store.put('s', 'a', 'aaaa');
  await store.put('s', 'b', 'bb');
  await client.del(`${store.prefix}b:s:a`);
  await assert.rejects(store.get('s', 'a'), code('SPILL_NOT_FOUND'));
  assert.deepEqual((await store.usage()).sessions, [{ session: 's', tenant: '', bytes: 2, blobs: 1 }]);
  assert.equal(await store.put('s', 'a', 'aaaa'), true, 'written again');
});

test('the per-session quota refuses a put past it; a full store makes room from its oldest sessions', { skip }, async () => {
  let now = 1_000;
  const store = new RedisStore({ client, prefix: fresh(), maxSessionBytes: 1000, maxBytes: 1500, now: () => now });
  const blob = 'y'.repeat(600);
  await store.put('a', 'k1', blob);
  await assert.rejects(store.put('a', 'k2', blob), code('STORE_REFUSED', 'maxSessionBytes'));
  now += 1000;
  await store.put('b', 'k1', blob);
  now += 1000;
  await store.put('c', 'k1', blob);
  await assert.rejects(store.get('a', 'k1'), code('SPILL_NOT_FOUND'), 'the least recently written session made room');
  assert.equal(await store.get('b', 'k1'), blob);
  assert.equal((await store.usage()).totalBytes, 1200);
  assert.equal(await heldBytes(store.prefix), 1200);
  await store.delete('b', 'k1');
  assert.equal((await store.usage()).totalBytes, 600);
  const big = new RedisStore({ client, prefix: fresh(), maxSessionBytes: 4000, maxBytes: 1500 });
  await assert.rejects(big.put('s', 'k', 'z'.repeat(1501)), code('STORE_REFUSED', 'maxBytes'), 'a blob no eviction can make room for');
});

test("an attacker tenant filling its own quota never refuses a victim's put, nor one past the store's maxBytes", { skip }, async () => {
  let now = 1_000_000;
  const store = new RedisStore({ client, prefix: fresh(), maxBytes: 40_000, maxTenantBytes: 30_000, maxTenantSessions: 8, now: () => now });
  const attacker = store.forTenant('attacker');
  const victim = store.forTenant('victim');
  assert.equal(attacker.tenant, 'attacker');
  await victim.put('victim-s0', 'k', 'v'.repeat(5_000));
  // New session names every time: the per-session quota is no way around the tenant's.
  for (let i = 0; i < 40; i++) {
    now += 1000;
    assert.equal(await attacker.put(`attack-${i}`, 'k', 'a'.repeat(4_000)), true, `put ${i}`);
  }
  const usage = await store.usage();
  const a = usage.tenants.find((t) => t.tenant === 'attacker');
  assert.ok(a.bytes <= 30_000 && a.sessions <= 8, JSON.stringify(a));
  assert.equal(usage.totalBytes, await heldBytes(store.prefix), 'the running count is what Redis holds');
  // The attacker's oldest sessions went first; its newest stay.
  await assert.rejects(store.get('attack-0', 'k'), code('SPILL_NOT_FOUND'));
  assert.equal(await store.get('attack-39', 'k'), 'a'.repeat(4_000));
  // The victim writes on: the store is full, so the fullest tenant (the attacker) gives way.
  for (let i = 1; i <= 3; i++) {
    now += 1000;
    assert.equal(await victim.put(`victim-s${i}`, 'k', 'w'.repeat(5_000)), true);
  }
  assert.equal(await victim.get('victim-s0', 'k'), 'v'.repeat(5_000), "the victim's own older session is kept");
  const later = await store.usage();
  assert.ok(later.totalBytes <= 40_000, String(later.totalBytes));
  assert.equal(later.totalBytes, await heldBytes(store.prefix));
  // A session belongs to the tenant that made it.
  await assert.rejects(attacker.put('victim-s0', 'x', 'mine now'), code('STORE_REFUSED', 'session'));
  // One session alone past the tenant's bytes: refused, nothing evicted for it.
  await assert.rejects(attacker.put('huge', 'k', 'h'.repeat(30_001)), code('STORE_REFUSED', 'maxTenantBytes'));
  // A session written without a tenant goes to its first tenant writer.
  await store.put('plain', 'k', 'p');
  await victim.put('plain', 'k2', 'q');
  assert.equal((await store.usage()).sessions.find((s) => s.session === 'plain').tenant, 'victim');
});

test('32 concurrent puts never pass maxSessionBytes, nor maxBytes', { skip }, async () => {
  const store = new RedisStore({ client, prefix: fresh(), maxSessionBytes: 100_000, maxBytes: 150_000 });
  const blob = (i) => `${i} `.padEnd(20_000, 'x');
  const results = await Promise.allSettled(Array.from({ length: 32 }, (_, i) => store.put('s', `k${i}`, blob(i))));
  assert.equal(results.filter((r) => r.status === 'fulfilled').length, 5, 'five 20 KB blobs fit in 100 KB');
  for (const r of results.filter((x) => x.status === 'rejected')) assert.equal(r.reason.code, 'STORE_REFUSED');
  assert.equal(await heldBytes(store.prefix), 100_000);
  const spills = Array.from({ length: 32 }, (_, i) => ({ session: `p${i % 4}`, key: `k${i}`, text: blob(i) }));
  await Promise.allSettled(spills.map((s) => store.put(s.session, s.key, s.text)));
  assert.ok(await heldBytes(store.prefix) <= 150_000);
  assert.equal((await store.usage()).totalBytes, await heldBytes(store.prefix));
});

test('two processes putting for many tenants at once keep one count: within maxBytes and maxTenantBytes, equal to what Redis holds', { skip }, async () => {
  const prefix = fresh();
  const limits = { maxBytes: 200_000, maxTenantBytes: 60_000, maxTenantSessions: 5 };
  const writer = (id) => `
    import { RedisStore } from ${JSON.stringify(STORE_MODULE)};
    const store = new RedisStore({ url: ${JSON.stringify(redis.url)}, prefix: ${JSON.stringify(prefix)}, ...${JSON.stringify(limits)} });
    const puts = [];
    for (let i = 0; i < 120; i++) {
      puts.push(store.forTenant('tenant' + (i % 6)).put('p${id}-s' + (i % 17), 'k' + i, '${id}'.repeat(3000 + i)).catch((err) => err.code));
    }
    const results = await Promise.all(puts);
    await store.close();
    process.stdout.write(JSON.stringify(results.filter((r) => r !== true)));
  `;
  const run = promisify(execFile);
  const outs = await Promise.all([1, 2].map((id) => run(process.execPath, ['--input-type=module', '-e', writer(id)], { encoding: 'utf8' })));
  for (const { stdout } of outs) for (const r of JSON.parse(stdout)) assert.equal(r, 'STORE_REFUSED');
  const store = new RedisStore({ client, prefix, ...limits });
  const usage = await store.usage();
  assert.ok(usage.totalBytes <= limits.maxBytes, String(usage.totalBytes));
  for (const t of usage.tenants) assert.ok(t.bytes <= limits.maxTenantBytes && t.sessions <= limits.maxTenantSessions, JSON.stringify(t));
  assert.equal(usage.totalBytes, await heldBytes(prefix));
  assert.equal(usage.totalBytes, usage.tenants.reduce((s, t) => s + t.bytes, 0));
  assert.equal(usage.totalBytes, usage.sessions.reduce((s, t) => s + t.bytes, 0));
  assert.ok(usage.totalBytes > limits.maxBytes / 2, 'the store was used');
});

test('the client shapes: node-redis, ioredis, a sendCommand(args) client answering strings, an eval-only REST client (Upstash-style)', { skip }, async () => {
  const prefix = fresh();
  // A raw-command client whose replies are strings (no bytes).
  const strings = { sendCommand: (args) => client.sendCommand(args) };
  // What Upstash's REST client offers: eval / evalsha of a script, keys and args.
  let evals = 0;
  const rest = {
    eval: (script, keys, args) => {
      evals++;
      return client.sendCommand(['EVAL', script, String(keys.length), ...keys, ...args]);
    },
    evalsha: (sha, keys, args) => client.sendCommand(['EVALSHA', sha, String(keys.length), ...keys, ...args]),
  };
  const text = 'ünïcödé\n'.repeat(100);
  await client.sendCommand(['SCRIPT', 'FLUSH']);
  const io = new IORedis(redis.port, '127.0.0.1', { lazyConnect: true, maxRetriesPerRequest: 0 });
  await io.connect();
  try {
    const stores = [client, io, strings, rest].map((c) => new RedisStore({ client: c, prefix }));
    assert.equal(await stores[3].put('s', 'k', text), true);
    assert.equal(evals, 1, 'the script is sent whole once, then by its SHA-1');
    assert.equal(await stores[3].put('s', 'k2', text), true);
    assert.equal(evals, 1);
    for (const store of stores) {
      assert.equal(await store.get('s', 'k'), text);
      assert.deepEqual((await store.list('s')).map((b) => b.key), ['k', 'k2']);
      assert.equal(await store.put('s', 'k', text), false);
      await assert.rejects(store.get('s', 'nope'), code('SPILL_NOT_FOUND'));
      assert.deepEqual(await store.usage(), { totalBytes: 2 * Buffer.byteLength(text), sessions: [{ session: 's', tenant: '', bytes: 2 * Buffer.byteLength(text), blobs: 2 }], tenants: [{ tenant: '', bytes: 2 * Buffer.byteLength(text), sessions: 1 }] });
    }
  } finally {
    io.disconnect();
  }
});

test('compressAsync and handleToolCallAsync over a RedisStore give what they give over a SpillStore, every pointer written when it resolves', { skip }, async () => {
  const store = new RedisStore({ client, prefix: fresh() });
  const log = (n) => Array.from({ length: 3000 }, (_, i) => (i === 2000 ? `FAILED test_price_${n}` : `test_${n}_${i} PASSED`)).join('\n');
  const request = { model: 'm', messages: [
    { role: 'system', content: 'You fix bugs.' },
    { role: 'user', content: 'why?' },
    ...[1, 2, 3].flatMap((n) => [
      { role: 'assistant', content: null, tool_calls: [{ id: `c${n}`, type: 'function', function: { name: 'bash', arguments: '{}' } }] },
      { role: 'tool', tool_call_id: `c${n}`, content: log(n) },
    ]),
  ] };
  const options = { budget: 8000, session: 'agent' };
  const memory = new SpillStore();
  const expected = await compressAsync(request, { ...options, store: memory });
  const out = await compressAsync(request, { ...options, store });
  assert.equal(JSON.stringify(out.request), JSON.stringify(expected.request));
  const pointers = [...new Set(JSON.stringify(out.request).match(/spill:\/\/agent\/[A-Za-z0-9._-]+/g))];
  assert.ok(pointers.length >= 3, `${pointers.length} pointers`);
  for (const pointer of pointers) {
    const key = pointer.split('/').pop();
    assert.equal(await store.get('agent', key), await memory.get('agent', key));
  }
  const found = await Promise.all(pointers.map((pointer) => handleToolCallAsync('grep_spill', { pointer, pattern: 'FAILED' }, { store, session: 'agent' })));
  assert.deepEqual([...new Set(found.map((r) => /FAILED test_price_\d/.exec(r.text)?.[0]))].sort(), ['FAILED test_price_1', 'FAILED test_price_2', 'FAILED test_price_3']);
  const page = await handleToolCallAsync('read_spill', { pointer: pointers[0], offset: 2000, limit: 1 }, { store, session: 'agent' });
  assert.deepEqual(page, handleToolCall('read_spill', { pointer: pointers[0], offset: 2000, limit: 1 }, { store: memory, session: 'agent' }));
  assert.equal((await handleToolCallAsync('read_spill', { pointer: pointers[0] }, { store, session: 'other' })).isError, true, "another session's pointer");
  memory.free();
});

test('a store whose Redis never answers fails each call within timeoutMs (STORE_FAILED), and closes', async () => {
  const store = new RedisStore({ url: `redis://127.0.0.1:${await freePort()}`, timeoutMs: 200 });
  for (const call of [() => store.get('s', 'k'), () => store.put('s', 'k', 'text'), () => store.list('s')]) {
    const started = performance.now();
    await assert.rejects(call(), code('STORE_FAILED', 'timeoutMs'));
    assert.ok(performance.now() - started < 1000);
  }
  await store.close();
});

test('bad options are typed errors naming the option', () => {
  const fake = { sendCommand: async () => null };
  const bad = [
    [{}, 'client'],
    [{ client: fake, url: 'redis://x' }, 'url'],
    [{ url: 'http://x' }, 'url'],
    [{ client: { get() {} } }, 'client'],
    [{ client: fake, prefix: '' }, 'prefix'],
    [{ client: fake, prefix: 'a b' }, 'prefix'],
    [{ client: fake, ttlSeconds: -1 }, 'ttlSeconds'],
    [{ client: fake, maxBytes: 1.5 }, 'maxBytes'],
    [{ client: fake, maxTenantSessions: 0 }, 'maxTenantSessions'],
    [{ client: fake, timeoutMs: 0 }, 'timeoutMs'],
    [{ client: fake, timeoutMs: 2 ** 31 }, 'timeoutMs'],
    [{ client: fake, timeoutMs: '100' }, 'timeoutMs'],
    [{ client: fake, now: 5 }, 'now'],
    [{ client: fake, ttl: 5 }, 'ttl'],
  ];
  for (const [options, path] of bad) {
    assert.throws(() => new RedisStore(options), (err) => err.code === 'INVALID_OPTION' && err.path === path && err.name === 'TraceLiteError',
      JSON.stringify([Object.keys(options), path]));
  }
  assert.throws(() => new RedisStore(null), code('INVALID_OPTION', 'options'));
});

test('bad names are INVALID_SPILL_KEY before Redis is asked', { skip }, async () => {
  const store = new RedisStore({ client, prefix: fresh() });
  for (const [session, key] of [['.', 'k'], ['..', 'k'], ['', 'k'], ['a:b', 'k'], ['a b', 'k'], ['s', 'a/b'], ['s', 'x*']]) {
    await assert.rejects(store.put(session, key, 'text'), code('INVALID_SPILL_KEY'), JSON.stringify([session, key]));
    await assert.rejects(store.get(session, key), code('INVALID_SPILL_KEY'), JSON.stringify([session, key]));
  }
  assert.throws(() => store.forTenant('a:b'), code('INVALID_SPILL_KEY'));
  assert.deepEqual(await client.keys(`${store.prefix}*`), []);
});
