// With an outside spill store (KV, yours), a session's in-wasm cache keeps the
// spilled texts that store already has, within a byte budget: a later turn
// hands over only what it adds (it neither hashes nor writes the history's
// spills again), and its output is what it would be without the kept texts.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import '../../pkg/entries/node.js';
import { REASSERT_MS, MAX_HELD_SESSION_BYTES, SessionStores, compressInto } from '../../pkg/core/stores.js';
import { mapStore } from './support/stores.mjs';
import { manySpills } from './support/requests.mjs';

const OPTIONS = { budget: 8000, provider: 'openai' };

/** A store that counts its puts. */
function countingStore() {
  const store = mapStore({ listing: true });
  store.puts = 0;
  const put = store.put;
  store.put = async (session, key, text) => {
    store.puts++;
    return put(session, key, text);
  };
  return store;
}

/** Replays `turns` turns of a conversation whose every tool output is spilled. */
async function replay(turns, cacheOptions) {
  const store = countingStore();
  const cache = new SessionStores(cacheOptions);
  const rows = [];
  for (let t = 1; t <= turns; t++) {
    const before = store.puts;
    const out = await compressInto(JSON.stringify(manySpills(t, 12_000)), { ...OPTIONS, session: 's' }, store, cache);
    rows.push({ request: JSON.stringify(out.request), keys: out.spills.map((b) => b.key), puts: store.puts - before });
  }
  return { rows, store, cache };
}

test('a turn hands the outside store only the spills it adds', async () => {
  const { rows, store, cache } = await replay(8);
  const handed = rows.flatMap((r) => r.keys);
  assert.equal(new Set(handed).size, handed.length, 'no blob is handed over twice');
  for (const [i, r] of rows.entries()) {
    // Turn t adds one output (and maybe a dedup or compaction blob, snapshots).
    assert.equal(r.keys.filter((k) => k.startsWith('tool-')).length, 1, `turn ${i + 1}`);
    // Its spills, and perhaps the cache segment.
    assert.ok(r.puts <= r.keys.length + 1, `turn ${i + 1}: ${r.puts} puts for ${r.keys.length} spills`);
  }
  // Every pointer of the last request leads to its text in the outside store.
  const pointers = [...rows.at(-1).request.matchAll(/spill:\/\/s\/([a-z]+-[0-9a-f]{32})/g)].map((m) => m[1]);
  assert.ok(pointers.length > 0);
  for (const key of pointers) assert.ok(store.data.has(`s/${key}`), key);
  assert.ok(cache.heldBytes() > 8 * 8_000 && cache.heldBytes() <= MAX_HELD_SESSION_BYTES, `${cache.heldBytes()}`);
});

test('kept texts change no output: the same requests as a cache that keeps none', async () => {
  const kept = await replay(8);
  const none = await replay(8, { maxHeldBytes: 0 });
  assert.deepEqual(kept.rows.map((r) => r.request), none.rows.map((r) => r.request));
  assert.equal(none.cache.heldBytes(), 0);
  // Without kept texts every turn hands the history's spills over again.
  assert.deepEqual(none.rows.map((r) => r.keys.filter((k) => k.startsWith('tool-')).length), [1, 2, 3, 4, 5, 6, 7, 8]);
  const blobs = (s) => [...s.data.keys()].filter((k) => !k.startsWith('s/cache-')).sort();
  assert.deepEqual(blobs(kept.store), blobs(none.store));
});

test('kept texts stay within the budget, the least recently used session dropped first', async () => {
  const store = mapStore({ listing: true });
  const budget = 100_000;
  const cache = new SessionStores({ maxHeldBytes: budget });
  for (const session of ['a', 'b', 'c']) {
    await compressInto(JSON.stringify(manySpills(4, 12_000)), { ...OPTIONS, session }, store, cache);
    assert.ok(cache.heldBytes() <= budget, `${session}: ${cache.heldBytes()}`);
  }
  // The newest session keeps its texts; the oldest was dropped to make room.
  const held = (session) => JSON.parse(cache.wasmStoreFor(session).list(session)).length;
  assert.ok(held('c') >= 4);
  assert.equal(held('a'), 0);
  // Its next turn hands its texts over again, and they are kept again.
  const out = await compressInto(JSON.stringify(manySpills(4, 12_000)), { ...OPTIONS, session: 'a' }, store, cache);
  assert.equal(out.spills.filter((b) => b.key.startsWith('tool-')).length, 4);
  assert.ok(cache.heldBytes() <= budget);
  assert.throws(() => new SessionStores({ maxHeldBytes: -1 }), (e) => e.code === 'INVALID_OPTION' && e.path === 'maxHeldBytes');
});

test('a text kept over REASSERT_MS is handed over again (its expiry refreshed)', async () => {
  const store = mapStore({ listing: true });
  const cache = new SessionStores();
  await compressInto(JSON.stringify(manySpills(2, 12_000)), { ...OPTIONS, session: 's' }, store, cache);
  const e = cache.entry('s');
  const kept = [...e.held.keys()];
  assert.equal(kept.length, 2);
  cache.reassert(e, 's', Date.now() + REASSERT_MS / 2);
  assert.equal(e.held.size, 2, 'not yet');
  cache.reassert(e, 's', Date.now() + REASSERT_MS + 1);
  assert.equal(e.held.size, 0);
  assert.equal(cache.heldBytes(), 0);
  assert.deepEqual(e.store.list('s').filter((b) => kept.includes(b.key)), []);
  const out = await compressInto(JSON.stringify(manySpills(2, 12_000)), { ...OPTIONS, session: 's' }, store, cache);
  assert.deepEqual(out.spills.map((s) => s.key).sort(), kept.sort());
});

test('a session dropped after a failing store forgets its kept texts', async () => {
  const store = mapStore({ listing: true });
  const cache = new SessionStores();
  await compressInto(JSON.stringify(manySpills(2, 12_000)), { ...OPTIONS, session: 's' }, store, cache);
  assert.ok(cache.heldBytes() > 0);
  const failing = { ...store, put: async () => { throw new Error('down'); } };
  await assert.rejects(compressInto(JSON.stringify(manySpills(3, 12_000)), { ...OPTIONS, session: 's' }, failing, cache), (e) => e.code === 'STORE_FAILED');
  assert.equal(cache.heldBytes(), 0);
  assert.deepEqual(cache.sessions(), []);
});

test('the proxy over an outside store writes what a turn adds; maxHeldBytes is checked', async () => {
  const { createProxy } = await import('../../pkg/adapters/proxy/index.js');
  const make = (extra) => {
    const store = countingStore();
    const proxy = createProxy({
      upstream: 'http://upstream.test',
      options: OPTIONS,
      store,
      secret: 'held-spills-secret-0123456789abcdef0123',
      fetch: async () => new Response('{"ok":true}', { headers: { 'content-type': 'application/json' } }),
      ...extra,
    });
    const turn = async (t) => {
      const res = await proxy(new Request('http://proxy.test/v1/chat/completions', {
        method: 'POST', headers: { 'content-type': 'application/json', 'x-tracelite-session': 'p' }, body: JSON.stringify(manySpills(t, 12_000)),
      }));
      assert.equal(res.status, 200);
      return res.text();
    };
    return { store, turn };
  };
  const kept = make({});
  const none = make({ maxHeldBytes: 0 });
  for (let t = 1; t <= 6; t++) assert.equal(await kept.turn(t), await none.turn(t));
  assert.ok(kept.store.puts < none.store.puts - 10, `${kept.store.puts} puts against ${none.store.puts}`);
  assert.throws(() => make({ maxHeldBytes: 1.5 }), (e) => e.code === 'INVALID_OPTION' && e.path === 'maxHeldBytes');
});

test('a session evicted while its call stores its spills adds nothing to the held bytes (issue 39)', async () => {
  // Every put waits, so another session's call evicts this one mid-request.
  const slow = mapStore({ listing: true });
  const put = slow.put;
  slow.put = async (session, key, text) => {
    await new Promise((resolve) => setTimeout(resolve, 5));
    return put(session, key, text);
  };
  const cache = new SessionStores({ maxSessions: 1 });
  for (let round = 1; round <= 5; round++) {
    await Promise.all(['a', 'b'].map((session) => compressInto(JSON.stringify(manySpills(round + 1, 12_000)), { ...OPTIONS, session }, slow, cache)));
    // What is counted is what the live sessions keep, and they keep it.
    const live = cache.sessions().map((s) => cache.entry(s)).reduce((sum, e) => sum + e.heldBytes, 0);
    assert.equal(cache.heldBytes(), live, `round ${round}`);
    for (const session of cache.sessions()) {
      const e = cache.entry(session);
      const kept = JSON.parse(cache.wasmStoreFor(session).list(session)).filter((b) => e.held.has(b.key));
      assert.equal(kept.length, e.held.size, `round ${round}: ${session}`);
    }
  }
});
