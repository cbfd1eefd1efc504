// Caches between isolates: a store's rendered snapshots and token counts as
// segments (SpillStore.exportCache / importCache), and the proxy keeping them
// in its outside store so that a fresh isolate (a second workerd) renders
// nothing an earlier one rendered, with byte-identical output.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SpillStore, compress, estimateTokens } from '../../pkg/entries/node.js';
import { createProxy } from '../../pkg/adapters/proxy/index.js';
import { MAX_CACHE_SEGMENTS, MAX_LOADED_SEGMENTS, saveCache } from '../../pkg/core/stores.js';
import { bundleWorker, projectWithPkg, startUpstream, startWorker } from './support/hosts.mjs';
import { renderingConversation } from './support/requests.mjs';
import { reseal } from './support/segments.mjs';
import { mapStore } from './support/stores.mjs';

const TURNS = 14;
/** The host's key the segments are sealed with, and the session they are for. */
const SEALED = { key: 'cache-persist-test-key-0123456789', session: 's' };
/** The conversation as it stands before turn `t` (t tool calls so far). */
const upTo = (t) => renderingConversation(t);

/** Replays turns 1..n in `store`, exporting after each; returns the segments. */
function replay(store, n, options = {}) {
  const segments = [];
  for (let t = 1; t <= n; t++) {
    compress(upTo(t), { ...options, session: 's', store });
    const segment = store.exportCache(SEALED);
    if (segment !== undefined) segments.push(segment);
  }
  return segments;
}

test('imported segments: the next turn renders nothing, counts little and is byte-identical to a cold one', () => {
  const a = new SpillStore();
  const segments = replay(a, TURNS - 1);
  assert.ok(a.cacheStats().rendered > 0, 'the conversation renders snapshots');
  assert.equal(a.exportCache(SEALED), undefined, 'nothing new since the last export');
  const warm = new SpillStore();
  let snapshots = 0;
  for (const s of segments) {
    const r = warm.importCache(s, SEALED);
    assert.equal(r.stale, false);
    snapshots += r.snapshots;
  }
  assert.ok(snapshots > 0);
  const cold = new SpillStore();
  const request = upTo(TURNS);
  const fromCache = compress(request, { session: 's', store: warm });
  const fromScratch = compress(request, { session: 's', store: cold });
  assert.deepEqual(fromCache, fromScratch);
  assert.ok(fromScratch.report.changes.some((c) => c.kind === 'snapshot'));
  const [w, c] = [warm.cacheStats(), cold.cacheStats()];
  assert.ok(c.rendered > 0, 'cold renders');
  // Only the newest observation (never seen by the first store) may be rendered.
  assert.ok(w.rendered < c.rendered, `warm rendered ${w.rendered}, cold ${c.rendered}`);
  assert.ok(w.countedBytes * 4 < c.countedBytes, `warm counted ${w.countedBytes} bytes, cold ${c.countedBytes}`);
  for (const s of [a, warm, cold]) s.free();
});

test('exportCache({ all: true }) gives everything held; a first export starts the log', () => {
  const s = new SpillStore();
  compress(upTo(8), { session: 's', store: s });
  const first = JSON.parse(s.exportCache(SEALED));
  assert.ok(first.snapshots.length > 0 && first.counts.length > 0);
  assert.equal(s.exportCache(SEALED), undefined);
  compress(upTo(9), { session: 's', store: s });
  const next = JSON.parse(s.exportCache(SEALED));
  assert.ok(next.snapshots.length < first.snapshots.length + 2, 'only what the new turn added');
  const all = JSON.parse(s.exportCache({ ...SEALED, all: true }));
  assert.ok(all.snapshots.length >= first.snapshots.length);
  assert.throws(() => s.exportCache({ ...SEALED, all: 'yes' }), { code: 'INVALID_ARGUMENT', path: 'all' });
  assert.throws(() => s.exportCache(true), { code: 'INVALID_OPTION', path: 'options' });
  // No key, a short one, or one of another type: nothing is exported.
  for (const key of [undefined, 'short', 42]) {
    assert.throws(() => s.exportCache({ all: true, key }), { code: 'INVALID_OPTION', path: 'key' });
  }
  // Counts alone wait for a render when only renders are wanted.
  const t = new SpillStore();
  compress(upTo(2), { session: 's', store: t });
  assert.equal(t.exportCache({ ...SEALED, renderedOnly: true }), undefined);
  assert.equal(JSON.parse(t.exportCache(SEALED)).snapshots.length, 0, 'the counts were kept for the next export');
  t.free();
  s.free();
});

test('a malformed or inconsistent segment is INVALID_CACHE naming the member (cache.mac unless sealed again), and adds nothing', () => {
  const a = new SpillStore();
  compress(upTo(8), { session: 's', store: a });
  const good = JSON.parse(a.exportCache(SEALED));
  const rendered = good.snapshots.findIndex((s) => s.images.length > 0);
  assert.ok(rendered >= 0);
  const variants = [
    ['not json', 'cache'],
    [JSON.stringify([]), 'cache'],
    [JSON.stringify({ ...good, format: 'other' }), 'cache.format'],
  ];
  // Changed, then sealed again by the key's holder: checked all the same
  // (and refused at its MAC when not sealed again).
  const sealed = [
    [JSON.stringify({ ...good, snapshots: 'x' }), 'cache.snapshots'],
    [JSON.stringify({ ...good, counts: [[1, 2, 3]] }), 'cache.counts[0][0]'],
    [JSON.stringify({ ...good, counts: [['00000000000000zz', 2, 3]] }), 'cache.counts[0][0]'],
    [JSON.stringify({ ...good, counts: [['0000000000000001', -2, 3]] }), 'cache.counts[0][1]'],
  ];
  const tamper = (fn) => {
    const copy = structuredClone(good);
    fn(copy.snapshots[rendered]);
    return JSON.stringify(copy);
  };
  sealed.push(
    [tamper((s) => { s.imageSizes[0][0] += 1; }), `cache.snapshots[${rendered}].images[0]`],
    [tamper((s) => { s.images[0] = `${s.images[0].slice(0, 10)}!${s.images[0].slice(11)}`; }), `cache.snapshots[${rendered}].images[0]`],
    [tamper((s) => { s.images[0] = 'R0lGODlhAQABAAAAACw='; }), `cache.snapshots[${rendered}].images[0]`],
    [tamper((s) => { s.imageRows.push(3); }), `cache.snapshots[${rendered}].imageRows`],
    [tamper((s) => { s.images.push(s.images[0]); }), `cache.snapshots[${rendered}].images[${good.snapshots[rendered].images.length}]`],
    [tamper((s) => { s.flow = 'sideways'; }), `cache.snapshots[${rendered}].flow`],
    [tamper((s) => { s.key = 'abc'; }), `cache.snapshots[${rendered}].key`],
    [tamper((s) => { s.fontPx = 0; }), `cache.snapshots[${rendered}].fontPx`],
    [tamper((s) => { s.cell = [1, 2]; }), `cache.snapshots[${rendered}].cell`],
    [tamper((s) => { s.tokens = 1.5; }), `cache.snapshots[${rendered}].tokens`],
  );
  for (const [segment, path] of sealed) variants.push([reseal(segment, SEALED), path], [segment, 'cache.mac']);
  for (const [segment, path] of variants) {
    const b = new SpillStore();
    assert.throws(() => b.importCache(segment, SEALED), (err) => err.code === 'INVALID_CACHE' && err.path === path, path);
    assert.deepEqual({ ...b.cacheStats() }, { snapshots: 0, snapshotBytes: 0, rendered: 0, counts: 0, countedBytes: 0 }, path);
    b.free();
  }
  const b = new SpillStore();
  assert.throws(() => b.importCache(42), { code: 'INVALID_REQUEST', path: 'segment' });
  assert.throws(() => b.importCache(JSON.stringify(good), { ...SEALED, limits: { maxRequestBytes: 100 } }), { code: 'LIMIT_EXCEEDED' });
  assert.throws(() => b.importCache(JSON.stringify(good), { ...SEALED, optical: { nope: 1 } }), { code: 'INVALID_OPTION' });
  assert.throws(() => b.importCache(JSON.stringify(good)), { code: 'INVALID_OPTION', path: 'key' });
  b.free();
  a.free();
});

test('a segment of another version is ignored; counts of another counter are not reused', () => {
  const a = new SpillStore();
  // A host counter that prices every text at twice the estimate.
  const countTokens = (text) => 2 * estimateTokens(text);
  compress(upTo(10), { session: 's', store: a, countTokens });
  const sealed = a.exportCache(SEALED);
  const segment = JSON.parse(sealed);
  assert.equal(segment.counter, 'host');
  const b = new SpillStore();
  // Another version's segment (sealed by the key's holder) is ignored.
  assert.deepEqual(b.importCache(reseal(JSON.stringify({ ...segment, version: '0.0.0-old' }), SEALED), SEALED), { snapshots: 0, counts: 0, stale: true });
  const r = b.importCache(sealed, SEALED);
  assert.ok(r.counts > 0 && r.snapshots > 0);
  // The estimator next: the host's counts (twice as high) must not be used.
  const cold = new SpillStore();
  const request = upTo(11);
  assert.deepEqual(compress(request, { session: 's', store: b }), compress(request, { session: 's', store: cold }));
  for (const s of [a, b, cold]) s.free();
});

const listingStore = () => mapStore({ listing: true });

const SECRET = 'persist-test-secret-0123456789abcdef0123';

function proxyOver(store, reports, extra = {}) {
  return createProxy({
    upstream: 'http://upstream.test',
    store,
    secret: SECRET,
    fetch: async (req) => new Response(JSON.stringify({ forwarded: await req.text() }), { headers: { 'content-type': 'application/json' } }),
    onReport: (info) => reports.push(info),
    ...extra,
  });
}

async function post(proxy, body) {
  const res = await proxy(new Request('http://proxy.test/v1/chat/completions', {
    method: 'POST', headers: { 'content-type': 'application/json', authorization: 'Bearer tenant-a' }, body: JSON.stringify(body),
  }));
  assert.equal(res.status, 200);
  return (await res.json()).forwarded;
}

test('proxy: a new instance over the same store imports the session caches and renders nothing old', async () => {
  const store = listingStore();
  const first = [];
  const a = proxyOver(store, first);
  for (let t = 1; t < TURNS; t++) await post(a, upTo(t));
  assert.ok(first.reduce((n, r) => n + r.cache.rendered, 0) > 0);
  const segments = [...store.data.keys()].filter((k) => /\/cache-[0-9a-f]{32}$/.test(k));
  assert.ok(segments.length > 0 && segments.length < TURNS, `${segments.length} segments`);
  // A new instance (a new isolate): the same session, its caches from the store.
  const second = [];
  const b = proxyOver(store, second);
  const warm = await post(b, upTo(TURNS));
  const { cache } = second[0];
  assert.ok(cache.loaded.snapshots > 0 && cache.loaded.counts > 0, JSON.stringify(cache));
  // Nothing cached anywhere: the same bytes go upstream.
  const third = [];
  const cold = await post(proxyOver(listingStore(), third), upTo(TURNS));
  assert.equal(warm, cold);
  assert.ok(cache.rendered < third[0].cache.rendered, `warm ${cache.rendered}, cold ${third[0].cache.rendered}`);
  // A second request of the session in the new instance does not load again.
  await post(b, upTo(TURNS + 1));
  assert.equal(second[1].cache.loaded, undefined);
  // Off: nothing is stored or loaded.
  const off = listingStore();
  const none = [];
  const c = proxyOver(off, none, { persistCache: false });
  await post(c, upTo(8));
  assert.equal([...off.data.keys()].filter((k) => k.includes('/cache-')).length, 0);
  assert.equal(none[0].cache.loaded, undefined);
  assert.throws(() => proxyOver(off, [], { persistCache: 'yes' }), { code: 'INVALID_OPTION', path: 'persistCache' });
});

/**
 * A listing store holding `turns` cache segments of tenant-a's conversation,
 * one per turn, as earlier isolates would have left them; and `keys()`, the
 * segments it holds.
 */
async function seededSegments(turns) {
  const store = listingStore();
  // The session the proxy gives this tenant's conversation.
  const res = await proxyOver(store, [])(new Request('http://proxy.test/v1/chat/completions', {
    method: 'POST', headers: { 'content-type': 'application/json', authorization: 'Bearer tenant-a' }, body: JSON.stringify(upTo(1)),
  }));
  await res.text();
  const session = res.headers.get('x-tracelite-session').replace(/(\.[0-9a-f]{32})?\.[^.]*$/, '');
  const earlier = new SpillStore();
  for (let t = 1; t <= turns; t++) {
    compress(upTo(t), { session, store: earlier });
    await saveCache(store, session, earlier.exportCache({ key: SECRET, session }));
  }
  earlier.free();
  const keys = () => [...store.data.keys()].filter((k) => /\/cache-[0-9a-f]{32}$/.test(k));
  return { store, keys };
}

test('proxy: segments past the limit are merged into one on load; a corrupt one is skipped', async () => {
  // Earlier isolates' segments, one per turn (more than MAX_CACHE_SEGMENTS).
  const { store, keys } = await seededSegments(MAX_CACHE_SEGMENTS + 4);
  const before = keys();
  assert.ok(before.length > MAX_CACHE_SEGMENTS, `${before.length} segments`);
  // One segment altered behind the store's back: skipped.
  store.data.set(before[0], store.data.get(before[0]).replace('"snapshots"', '"snapshots_"'));
  const reports = [];
  const warm = await post(proxyOver(store, reports), upTo(MAX_CACHE_SEGMENTS + 5));
  assert.equal(reports[0].cache.loaded.segments, before.length - 1);
  assert.ok(reports[0].cache.loaded.snapshots > 0);
  // The merged segment, and the one this request may have added.
  assert.ok(keys().length <= 2 && !keys().some((k) => before.includes(k) && k !== before[0]), keys().join());
  const cold = await post(proxyOver(listingStore(), []), upTo(MAX_CACHE_SEGMENTS + 5));
  assert.equal(warm, cold);
});

test("proxy: another session's segment, or one sealed with another key, is skipped; the output is the cold one", async () => {
  const { store, keys } = await seededSegments(TURNS - 1);
  const genuine = keys();
  const session = genuine[0].slice(0, genuine[0].lastIndexOf('/'));
  // Another session's caches, copied into this one; caches sealed with another key.
  for (const [as, key] of [['other-session', SECRET], [session, 'not-the-proxy-secret-0123456789']]) {
    const s = new SpillStore();
    compress(upTo(TURNS - 2), { session: as, store: s });
    await saveCache(store, session, s.exportCache({ key, session: as }));
    s.free();
  }
  assert.equal(keys().length, genuine.length + 2);
  const reports = [];
  const warm = await post(proxyOver(store, reports), upTo(TURNS));
  assert.equal(reports[0].cache.loaded.segments, genuine.length, JSON.stringify(reports[0].cache));
  assert.ok(reports[0].cache.loaded.snapshots > 0);
  const cold = await post(proxyOver(listingStore(), []), upTo(TURNS));
  assert.equal(warm, cold);
});

test('proxy: a session with more segments than one load reads is merged all the same', async () => {
  const { store, keys } = await seededSegments(MAX_LOADED_SEGMENTS + 6);
  assert.ok(keys().length > MAX_LOADED_SEGMENTS);
  const reports = [];
  await post(proxyOver(store, reports), upTo(MAX_LOADED_SEGMENTS + 7));
  assert.equal(reports[0].cache.loaded.segments, MAX_LOADED_SEGMENTS);
  assert.ok(keys().length <= 2, `${keys().length} segments left`);
});

const WORKER = `
import { createProxy } from 'tracelite/proxy';
import { KvSpillStore } from 'tracelite/kv-store';
let proxy;
let last;
export default {
  async fetch(request, env) {
    if (new URL(request.url).pathname === '/__last') return Response.json(last ?? null);
    proxy ??= createProxy({
      upstream: env.UPSTREAM,
      store: new KvSpillStore(env.SPILLS),
      secret: env.TRACELITE_SECRET,
      onReport: ({ cache, report }) => { last = { cache, tokensAfter: report.tokensAfter }; },
    });
    return proxy(request);
  },
};
`;

test('workerd: a second worker over the same KV renders nothing the first rendered, same bytes upstream', async (t) => {
  const dir = projectWithPkg('tracelite-persist-');
  const persist = mkdtempSync(join(tmpdir(), 'tracelite-persist-kv-'));
  const other = mkdtempSync(join(tmpdir(), 'tracelite-persist-kv-'));
  const upstream = await startUpstream(() => ({ status: 200, headers: { 'content-type': 'application/json' }, chunks: ['{"ok":true}'] }));
  const script = await bundleWorker(dir, WORKER);
  const bindings = { UPSTREAM: upstream.url, TRACELITE_SECRET: SECRET };
  const start = (kvPersist) => startWorker(script, { kvNamespaces: ['SPILLS'], kvPersist, bindings });
  const send = async (mf, body) => {
    const res = await mf.dispatchFetch('http://proxy.test/v1/chat/completions', {
      method: 'POST', headers: { 'content-type': 'application/json', authorization: 'Bearer tenant-a' }, body: JSON.stringify(body),
    });
    assert.equal(res.status, 200, await res.clone().text());
    await res.arrayBuffer();
    return (await (await mf.dispatchFetch('http://proxy.test/__last')).json()).cache;
  };
  t.after(async () => {
    await upstream.close();
    for (const d of [dir, persist, other]) rmSync(d, { recursive: true, force: true });
  });
  const first = await start(persist);
  let rendered = 0;
  for (let turn = 1; turn < TURNS; turn++) rendered += (await send(first, upTo(turn))).rendered;
  await first.dispose();
  assert.ok(rendered > 0);
  const second = await start(persist);
  const warm = await send(second, upTo(TURNS));
  const warmBody = upstream.received.at(-1).body;
  await second.dispose();
  const third = await start(other);
  const cold = await send(third, upTo(TURNS));
  const coldBody = upstream.received.at(-1).body;
  await third.dispose();
  assert.ok(warm.loaded.snapshots > 0, JSON.stringify(warm));
  assert.ok(warm.rendered < cold.rendered, `warm ${warm.rendered}, cold ${cold.rendered}`);
  assert.equal(warmBody, coldBody);
});

test('framework adapters keep sealed session caches in a listing store only with cacheKey', async () => {
  const { conversationCompressor } = await import('../../pkg/internal/framework.js');
  for (const cacheKey of [undefined, SECRET]) {
    const store = listingStore();
    const first = conversationCompressor({ store, session: 's', cacheKey }, 'openai-chat');
    for (let t = 1; t < TURNS; t++) await first.compress(upTo(t));
    const segments = [...store.data.keys()].filter((k) => k.startsWith('s/cache-'));
    if (cacheKey === undefined) {
      assert.equal(segments.length, 0, 'nothing kept without a key');
      continue;
    }
    assert.ok(segments.length > 0);
    // Sealed for the session with the key: it imports there, and nowhere else.
    const s = new SpillStore();
    assert.ok(s.importCache(store.data.get(segments[0]), { key: SECRET, session: 's' }).counts > 0);
    assert.throws(() => s.importCache(store.data.get(segments[0]), { key: SECRET, session: 't' }), { code: 'INVALID_CACHE', path: 'cache.mac' });
    s.free();
    // A new compressor (a new isolate) over the same store: the same output as a cold one.
    const warm = await conversationCompressor({ store, session: 's', cacheKey }, 'openai-chat').compress(upTo(TURNS));
    const cold = await conversationCompressor({ store: listingStore(), session: 's', cacheKey }, 'openai-chat').compress(upTo(TURNS));
    assert.deepEqual(warm.request, cold.request);
  }
});
