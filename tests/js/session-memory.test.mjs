// Issue 39, memory: the in-memory sessions of a proxy (or middleware) keep at
// most `maxMemoryBytes` in all, the least recently used freed first, and a
// spill of a freed session reads as expired; 64 sessions of maximal bodies
// leave wasm memory under maxMemoryBytes + 24 × maxBodyBytes, and a normal
// client beside them keeps its p95 (bench/hostile-memory.mjs --sessions has
// the full-size figures).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { SessionStores, compressInto } from '../../pkg/core/stores.js';
import { readSpill } from '../../pkg/core/spill-reader.js';
import { MEMORY_DEFAULTS, SESSION_BYTES_PER_REQUEST_BYTE, wasmHeapBytes } from '../../pkg/entries/node.js';
import { manySpills } from './support/requests.mjs';

const OPTIONS = { budget: 8000, provider: 'openai' };
const script = fileURLToPath(new URL('../../bench/hostile-memory.mjs', import.meta.url));

test('the in-memory sessions weigh at most maxMemoryBytes; a freed session\'s spills read as expired', async () => {
  const request = JSON.stringify(manySpills(4, 12_000));
  // What one such session keeps, measured by the allocator (a first store
  // takes what the module reserves once: the font, compiled patterns).
  const probe = new SessionStores();
  await compressInto(request, { ...OPTIONS, session: 'probe' }, probe);
  probe.free();
  const measured = new SessionStores();
  await compressInto(request, { ...OPTIONS, session: 'probe' }, measured);
  const weight = measured.memoryBytes();
  measured.free();
  assert.ok(weight > request.length, `a session keeps its spills and caches: ${weight} B for a ${request.length} B request`);
  // Room for two such sessions, not for two and the reserve of a third's call.
  const max = Math.floor(2 * weight + 0.9 * SESSION_BYTES_PER_REQUEST_BYTE * request.length);
  const stores = new SessionStores({ maxMemoryBytes: max });
  const outs = {};
  for (const session of ['a', 'b', 'c']) {
    const before = wasmHeapBytes();
    outs[session] = await compressInto(request, { ...OPTIONS, session }, stores);
    assert.ok(stores.memoryBytes() <= max, `${session}: ${stores.memoryBytes()}`);
    // What the sessions weigh is what the allocator holds for them, not an estimate.
    if (session !== 'c') assert.ok(Math.abs(wasmHeapBytes() - before - weight) < weight / 20, `${session}: kept ${wasmHeapBytes() - before} B, weighed ${weight} B`);
  }
  assert.deepEqual(stores.sessions(), ['b', 'c']);
  assert.ok(Math.abs(stores.memoryBytes() - 2 * weight) < weight / 10, `${stores.memoryBytes()} B for two sessions of ${weight} B`);
  const pointer = (session) => outs[session].report.spills[0].pointer;
  // The freed session's pointer: a typed error saying it expired, on every path.
  const blob = pointer('a').split('/').pop();
  assert.throws(() => stores.get('a', blob), (e) => e.code === 'SPILL_NOT_FOUND' && /expired/.test(e.message));
  await assert.rejects(readSpill(stores, pointer('a')), (e) => e.code === 'SPILL_NOT_FOUND' && /expired/.test(e.message));
  // It comes back cold; its older pointers still say they expired, its new ones read.
  outs.a2 = await compressInto(JSON.stringify(manySpills(2, 12_000)), { ...OPTIONS, session: 'a' }, stores);
  assert.deepEqual(stores.sessions(), ['b', 'c', 'a']);
  const stale = outs.a.report.spills.map((s) => s.pointer).find((p) => !outs.a2.report.spills.some((n) => n.pointer === p));
  await assert.rejects(readSpill(stores, stale), (e) => e.code === 'SPILL_NOT_FOUND' && /expired/.test(e.message));
  assert.equal((await readSpill(stores, outs.a2.report.spills[0].pointer)).totalLines > 0, true);
  // The others never expired: a wrong key is only not found.
  assert.throws(() => stores.get('c', 'tool-00000000000000000000000000000000'), (e) => e.code === 'SPILL_NOT_FOUND' && !/expired/.test(e.message));
  assert.throws(() => new SessionStores({ maxMemoryBytes: 0 }), (e) => e.code === 'INVALID_OPTION' && e.path === 'maxMemoryBytes');
  stores.free();
});

test('a read or search of a held session\'s spill is weighed too (the line index it builds)', async () => {
  const stores = new SessionStores();
  const out = await compressInto(JSON.stringify(manySpills(1, 400_000)), { ...OPTIONS, session: 'r' }, stores);
  const before = stores.memoryBytes();
  const page = await readSpill(stores, out.report.spills[0].pointer);
  // A 4-byte offset per line (wasm32), kept with the blob for the next read.
  assert.ok(stores.memoryBytes() - before >= 4 * page.totalLines, `${stores.memoryBytes() - before} B weighed for ${page.totalLines} lines`);
  stores.free();
});

test('memory defaults: 8 MiB bodies and 192 MiB of sessions in Node, 2 MiB and 8 MiB on workerd', () => {
  assert.deepEqual({ ...MEMORY_DEFAULTS }, { maxBodyBytes: 8 << 20, maxMemoryBytes: 192 << 20 });
  const probe = `globalThis.navigator = { userAgent: 'Cloudflare-Workers' };
    const { MEMORY_DEFAULTS } = await import('./pkg/core/memory.js');
    const { DEFAULT_MAX_BODY_BYTES } = await import('./pkg/adapters/proxy/index.js');
    console.log(JSON.stringify({ ...MEMORY_DEFAULTS, DEFAULT_MAX_BODY_BYTES }));`;
  const run = spawnSync(process.execPath, ['--input-type=module', '-e', probe], { cwd: new URL('../../', import.meta.url), encoding: 'utf8' });
  assert.equal(run.status, 0, run.stderr);
  assert.deepEqual(JSON.parse(run.stdout), { maxBodyBytes: 2 << 20, maxMemoryBytes: 8 << 20, DEFAULT_MAX_BODY_BYTES: 2 << 20 });
});

test('64 sessions of maximal bodies: wasm memory bounded, a normal client\'s p95 within 3x of alone', { timeout: 240_000 }, () => {
  const run = spawnSync(process.execPath, [script, '--sessions', '--quick', '--json'], { encoding: 'utf8', timeout: 230_000 });
  assert.equal(run.status, 0, run.stderr);
  const r = JSON.parse(run.stdout.trim().split('\n').pop());
  assert.equal(r.sessions, 64);
  // Each session: its maximal body, then a small turn.
  assert.equal(r.attackerStatuses.join(), Array(128).fill(200).join());
  assert.ok(r.wasmAfter <= r.bound, `wasm ${r.wasmAfter} B over the bound ${r.bound} B`);
  assert.ok(r.normal.besideP95 <= 3 * r.normal.aloneP95, `p95 ${r.normal.besideP95} ms beside vs ${r.normal.aloneP95} ms alone`);
});

// Issue 49: at the defaults (8 MiB bodies, 192 MiB of sessions), sessions
// that each send a maximal body and then a small turn (one tenant each):
// before, the small turn made a session weigh 7x its few KB while it kept
// ~87 MiB of caches, and wasm memory grew ~94 MiB a session (689 MiB after
// 6, bound 401). Now each is weighed by what the allocator holds for it.
test('at the defaults, maximal sessions that then turn small: wasm memory within its bound', { timeout: 600_000 }, () => {
  const run = spawnSync(process.execPath, [script, '--sessions', '--count', '8', '--json'], { encoding: 'utf8', timeout: 590_000 });
  assert.equal(run.status === 0 || run.status === 1, true, run.stderr);
  const r = JSON.parse(run.stdout.trim().split('\n').pop());
  assert.equal(r.maxBodyBytes, MEMORY_DEFAULTS.maxBodyBytes);
  assert.equal(r.maxMemoryBytes, MEMORY_DEFAULTS.maxMemoryBytes);
  assert.equal(r.attackerStatuses.join(), Array(16).fill(200).join());
  const mb = (b) => (b / (1 << 20)).toFixed(1);
  assert.ok(r.wasmAfter <= r.bound, `wasm ${mb(r.wasmAfter)} MiB over the bound ${mb(r.bound)} MiB; after each session: ${r.wasmEach.map(mb).join(' ')}`);
  // What the sessions keep, measured, is within maxMemoryBytes.
  assert.ok(r.heapAfter <= r.maxMemoryBytes + (16 << 20), `the sessions keep ${mb(r.heapAfter)} MiB`);
});
