// FileStore limits as an attacker meets them (issue 49): tenants that cannot
// crowd each other out, quotas that concurrent puts cannot pass, `.` as a
// session, a put's cost with 100 and 5,000 files, a root it does not own the
// permissions of, hard links in a blob's place.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { chmodSync, linkSync, mkdirSync, mkdtempSync, readdirSync, statSync, unlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { FileStore } from '../../../pkg/adapters/file-store/index.js';

const STORE_MODULE = fileURLToPath(new URL('../../../pkg/adapters/file-store/index.js', import.meta.url));
const scratch = () => mkdtempSync(join(tmpdir(), 'tracelite-quota-'));
const code = (c, path) => (err) => err?.code === c && (path === undefined || err.path === path);
const mode = (path) => statSync(path).mode & 0o777;

/** Bytes of the blob files under `root`, as the disk has them. */
function diskBytes(root) {
  let total = 0;
  for (const session of readdirSync(root)) {
    if (session.startsWith('~')) continue;
    for (const name of readdirSync(join(root, session))) {
      if (name.endsWith('.txt') && !name.startsWith('~')) total += statSync(join(root, session, name)).size;
    }
  }
  return total;
}

test("an attacker tenant filling its own quota never refuses a victim's put, nor one past the store's maxBytes", async () => {
  const root = scratch();
  let now = 1_000_000;
  const store = new FileStore({ root, maxBytes: 40_000, maxTenantBytes: 30_000, maxTenantSessions: 8, now: () => now });
  const attacker = store.forTenant('attacker');
  const victim = store.forTenant('victim');
  await victim.put('victim-s0', 'k', 'v'.repeat(5_000));
  // New session names every time: the per-session quota is no way around the tenant's.
  for (let i = 0; i < 40; i++) {
    now += 1000;
    assert.equal(await attacker.put(`attack-${i}`, 'k', 'a'.repeat(4_000)), true, `put ${i}`);
  }
  const usage = await store.usage();
  const a = usage.tenants.find((t) => t.tenant === 'attacker');
  assert.ok(a.bytes <= 30_000 && a.sessions <= 8, JSON.stringify(a));
  assert.equal(usage.totalBytes, diskBytes(root), 'the running count is what the disk holds');
  // The attacker's oldest sessions went first; its newest stay.
  assert.ok(readdirSync(root).includes('attack-39') && !readdirSync(root).includes('attack-0'));
  // The victim writes on: the store is full, so the fullest tenant (the attacker) gives way.
  for (let i = 1; i <= 3; i++) {
    now += 1000;
    assert.equal(await victim.put(`victim-s${i}`, 'k', 'w'.repeat(5_000)), true);
  }
  assert.equal(await victim.get('victim-s0', 'k'), 'v'.repeat(5_000), "the victim's own older session is kept");
  const after = await store.usage();
  assert.ok(after.totalBytes <= 40_000, String(after.totalBytes));
  assert.equal(after.totalBytes, diskBytes(root));
  // A session belongs to the tenant that made it.
  await assert.rejects(attacker.put('victim-s0', 'x', 'mine now'), code('STORE_REFUSED', 'session'));
  // One session alone past the tenant's bytes: refused, nothing evicted for it.
  await assert.rejects(attacker.put('huge', 'k', 'h'.repeat(30_001)), code('STORE_REFUSED'));
});

test('the tenants a store counts survive a restart (the tenant file in each session)', async () => {
  const root = scratch();
  const first = new FileStore({ root });
  await first.forTenant('t1').put('s1', 'k', 'one');
  await first.put('plain', 'k', 'two');
  // Another process loads the counts from the disk.
  const out = execFileSync(process.execPath, ['--input-type=module', '-e', `
    import { FileStore } from ${JSON.stringify(STORE_MODULE)};
    const store = new FileStore({ root: ${JSON.stringify(root)}, maxTenantSessions: 1 });
    const { tenants } = await store.usage();
    await store.forTenant('t1').put('s2', 'k', 'three');
    process.stdout.write(JSON.stringify(tenants));
  `], { encoding: 'utf8' });
  assert.deepEqual(JSON.parse(out).map((t) => [t.tenant, t.sessions]), [['', 1], ['t1', 1]]);
  assert.deepEqual(readdirSync(root).sort(), ['plain', 's2'], "t1's older session made room (maxTenantSessions 1)");
});

test('32 concurrent puts never pass maxSessionBytes, nor maxBytes', async () => {
  const root = scratch();
  const store = new FileStore({ root, maxSessionBytes: 100_000, maxBytes: 150_000 });
  const blob = (i) => `${i} `.padEnd(20_000, 'x');
  const results = await Promise.allSettled(Array.from({ length: 32 }, (_, i) => store.put('s', `k${i}`, blob(i))));
  const stored = results.filter((r) => r.status === 'fulfilled').length;
  assert.equal(stored, 5, 'five 20 KB blobs fit in 100 KB');
  for (const r of results.filter((x) => x.status === 'rejected')) assert.equal(r.reason.code, 'STORE_REFUSED');
  assert.equal(diskBytes(root), 100_000);
  // persist() writes a whole compress result at once: the same bound.
  const spills = Array.from({ length: 32 }, (_, i) => ({ session: `p${i % 4}`, key: `k${i}`, text: blob(i) }));
  await Promise.allSettled(spills.map((s) => store.put(s.session, s.key, s.text)));
  assert.ok(diskBytes(root) <= 150_000, String(diskBytes(root)));
  assert.equal((await store.usage()).totalBytes, diskBytes(root));
});

test('"." and other names that are not a directory of their own are refused as session names and keys', async () => {
  const root = scratch();
  const store = new FileStore({ root, maxSessionBytes: 10 });
  for (const [session, key] of [['.', 'k'], ['..', 'k'], ['', 'k'], ['a\\b', 'k'], ['a\0b', 'k'], ['s', '.'], ['s', 'a/b']]) {
    await assert.rejects(store.put(session, key, 'text'), code('INVALID_SPILL_KEY'), JSON.stringify([session, key]));
    await assert.rejects(store.get(session, key), code('INVALID_SPILL_KEY'), JSON.stringify([session, key]));
  }
  assert.deepEqual(readdirSync(root), []);
  assert.equal((await store.usage()).totalBytes, 0);
});

/** Median ms of `n` puts into a store whose root already holds `files` blob files. */
async function putCost(files, n = 60) {
  const root = scratch();
  const perSession = 50;
  for (let s = 0; s < files / perSession; s++) {
    const dir = join(root, `pre-${s}`);
    mkdirSync(dir, { mode: 0o700 });
    for (let k = 0; k < perSession; k++) writeFileSync(join(dir, `k${k}.txt`), `blob ${s} ${k}\n`, { mode: 0o600 });
  }
  const store = new FileStore({ root });
  await store.usage(); // opened: counts loaded, swept
  const times = [];
  for (let i = 0; i < n; i++) {
    const t = performance.now();
    await store.put(`new-${i % 5}`, `k${i}`, `text ${i}\n`.repeat(50));
    times.push(performance.now() - t);
  }
  times.sort((a, b) => a - b);
  return times[Math.floor(times.length / 2)];
}

test("a put's cost is flat from 100 to 5,000 files (the counts are kept, not rescanned)", async () => {
  // Interleaved, to share the machine's noise; the median of three rounds each.
  const small = [];
  const large = [];
  for (let round = 0; round < 3; round++) {
    small.push(await putCost(100));
    large.push(await putCost(5_000));
  }
  const med = (xs) => xs.sort((a, b) => a - b)[1];
  const ratio = med(large) / med(small);
  assert.ok(ratio < 2, `5,000 files ${med(large).toFixed(3)} ms vs 100 files ${med(small).toFixed(3)} ms a put: ${ratio.toFixed(2)}x`);
});

test('an existing root is never chmodded; one its group or others may write is refused', async () => {
  const previous = process.umask(0o000);
  try {
    const parent = scratch();
    const fresh = join(parent, 'a', 'fresh');
    await new FileStore({ root: fresh }).put('s', 'k', 'x');
    assert.equal(mode(fresh), 0o700, 'a root the store creates is 0700 whatever the umask');
    const shared = join(parent, 'shared');
    mkdirSync(shared);
    chmodSync(shared, 0o777);
    await assert.rejects(new FileStore({ root: shared }).put('s', 'k', 'x'), code('STORE_UNSAFE', 'root'));
    assert.equal(mode(shared), 0o777, 'left as it was');
    assert.deepEqual(readdirSync(shared), []);
    const readable = join(parent, 'readable');
    mkdirSync(readable);
    chmodSync(readable, 0o755);
    await new FileStore({ root: readable }).put('s', 'k', 'x');
    assert.equal(mode(readable), 0o755, 'a root only its user writes is used as it is');
    assert.equal(mode(join(readable, 's')), 0o700, "the store's own directories are 0700");
  } finally {
    process.umask(previous);
  }
});

test("a blob's file with another link is refused on read; the store's own publishing is not", async () => {
  const dir = scratch();
  const root = join(dir, 'root');
  const store = new FileStore({ root });
  writeFileSync(join(dir, 'secret'), 'outside the store');
  await store.put('s', 'k', 'mine');
  // A hard link where a blob was: the store would read a file from elsewhere.
  unlinkSync(join(root, 's', 'k.txt'));
  linkSync(join(dir, 'secret'), join(root, 's', 'k.txt'));
  await assert.rejects(store.get('s', 'k'), code('STORE_UNSAFE'));
  // A blob linked from elsewhere (to be read or changed later) is refused too.
  await store.put('s', 'k2', 'second');
  linkSync(join(root, 's', 'k2.txt'), join(dir, 'copy'));
  await assert.rejects(store.get('s', 'k2'), code('STORE_UNSAFE'));
  // Reads racing the store's own writes (a temporary file linked, then unlinked) are served.
  const texts = Array.from({ length: 40 }, (_, i) => `text ${i}`);
  await Promise.all(texts.map(async (t, i) => {
    await store.put('race', `r${i}`, t);
    assert.equal(await store.get('race', `r${i}`), t);
  }));
});
