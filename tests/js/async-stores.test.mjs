// Every async path takes any store (issue 50): `compressAsync` and
// `handleToolCallAsync` with a FileStore and a KV store give what they give
// with the in-memory SpillStore, resolve only after each blob a pointer names
// is written, and never return a pointer to a blob whose write failed; the
// synchronous calls refuse an async store with an error naming the async call.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  SpillStore, compress, compressAsync, finishStage, handleToolCall, handleToolCallAsync,
  pinConstraint, pinnedConstraints, trajectoryToRequest,
} from '../../pkg/entries/node.js';
import { FileStore } from '../../pkg/adapters/file-store/index.js';
import { KvSpillStore } from '../../pkg/adapters/kv-store/index.js';

const scratch = () => join(mkdtempSync(join(tmpdir(), 'tracelite-async-')), 'spills');
const code = (c, path) => (err) => err?.code === c && (path === undefined || err.path === path);

const GOOD = [
  '## Goal', 'Fix `add` in src/calc.py.',
  '## Progress', 'Edited src/calc.py; tests pass.',
  '## Key facts', 'test_add failed with AssertionError before the fix.',
  '## Decisions', 'Use + instead of -.',
  '## Next steps', 'Submit the fix.',
].join('\n');

/** A session whose test logs are far over the spill cap (each spills) and long enough to compact. */
function trajectory(logs = 3, reads = 10) {
  const steps = [
    { thought: 'Look at the code.', tool: 'execute_bash', args: { command: 'cat src/calc.py' }, observation: 'def add(a, b):\n    return a - b\n' },
  ];
  for (let i = 0; i < logs; i++) {
    const lines = [];
    for (let n = 0; n < 900; n++) lines.push(`tests/test_calc.py::test_case_${i}_${n} PASSED [${String(n % 100).padStart(3)}%]`);
    lines.splice(450, 0, `tests/test_calc.py::test_add_${i} FAILED`, `E   AssertionError: assert -1 == ${i + 3}`);
    lines.push(`=== 1 failed, 900 passed in 1.${i}s ===`, '[Command finished with exit code 1]');
    steps.push({ thought: `Run the tests (${i}).`, tool: 'execute_bash', args: { command: 'python -m pytest -v' }, observation: lines.join('\n') });
  }
  for (let i = 0; i < reads; i++) {
    steps.push({ thought: `Read doc ${i}.`, tool: 'execute_bash', args: { command: `cat docs/f${i}.txt` }, observation: `doc line ${i} `.repeat(120) });
  }
  return { id: 'async-stores', task: 'Fix `add` in src/calc.py. Do not modify the tests.', system: 'You are a coding agent.', steps };
}

const t = trajectory();
const request = trajectoryToRequest(t, t.steps.length);
const pointersOf = (req) => [...new Set(JSON.stringify(req).match(/spill:\/\/[A-Za-z0-9._-]+\/[A-Za-z0-9._-]+/g) ?? [])];

/** A KV namespace in memory (get, getWithMetadata, put, list, delete). */
function memoryKv() {
  const map = new Map();
  return {
    async get(name) { return map.get(name)?.value ?? null; },
    async getWithMetadata(name) { const e = map.get(name); return { value: e?.value ?? null, metadata: e?.metadata ?? null }; },
    async put(name, value, { metadata } = {}) { map.set(name, { value, metadata }); },
    async delete(name) { map.delete(name); },
    async list({ prefix = '' } = {}) {
      return { keys: [...map.keys()].filter((k) => k.startsWith(prefix)).map((name) => ({ name, metadata: map.get(name).metadata })), list_complete: true };
    },
  };
}

test('compressAsync with a FileStore or a KV store gives the SpillStore output, every pointer written before it resolves', async () => {
  const options = { session: 'same', budget: 16000 };
  const memory = new SpillStore();
  const expected = await compressAsync(request, { ...options, store: memory });
  const pointers = pointersOf(expected.request);
  assert.ok(pointers.length >= 3, `the logs spill (${pointers.length} pointers)`);
  const files = new FileStore({ root: scratch() });
  const kv = new KvSpillStore(memoryKv());
  for (const store of [files, kv]) {
    const out = await compressAsync(request, { ...options, store });
    assert.equal(JSON.stringify(out.request), JSON.stringify(expected.request), `${store.constructor.name}: same request`);
    assert.deepEqual(out.spills.map((s) => s.key), expected.spills.map((s) => s.key));
    for (const p of pointers) {
      const key = p.split('/').pop();
      if (store === files) assert.ok(existsSync(files.pathOf('same', key)), `${p} is on disk when compressAsync resolves`);
      const text = await memory.get('same', key);
      assert.equal(await store.get('same', key), text, `${p} holds the spilled text`);
      const [first, second] = text.split('\n');
      const found = await handleToolCallAsync('grep_spill', { pointer: p, pattern: first.slice(0, 40), literal: true }, { store, session: 'same' });
      assert.equal(found.isError, false, found.text);
      assert.ok(found.text.includes(first.slice(0, 40)), found.text);
      const page = await handleToolCallAsync('read_spill', JSON.stringify({ pointer: p, offset: 1, limit: 1 }), { store, session: 'same' });
      assert.equal(page.isError, false, page.text);
      if (second) assert.ok(page.text.includes(second.slice(0, 40)), page.text);
    }
    const log = pointers.find((p) => expected.spills.some((s) => p.endsWith(s.key) && s.text.includes('test_add_1 FAILED')));
    assert.ok(log, 'a test log is among the spills');
    const failed = await handleToolCallAsync('grep_spill', { pointer: log, pattern: 'AssertionError' }, { store, session: 'same' });
    assert.match(failed.text, /AssertionError: assert -1 == 4/);
    // A later turn of the same session reuses what the store holds and gives the same bytes again.
    const again = await compressAsync(request, { ...options, store });
    assert.equal(JSON.stringify(again.request), JSON.stringify(expected.request));
  }
  // The same answers as the synchronous handler over the in-memory store.
  const sync = handleToolCall('read_spill', { pointer: pointers[0] }, { store: memory, session: 'same' });
  assert.deepEqual(await handleToolCallAsync('read_spill', { pointer: pointers[0] }, { store: files, session: 'same' }), sync);
  // Another session's pointer reads as missing; a bad pattern is a reply the model can act on.
  assert.equal((await handleToolCallAsync('read_spill', { pointer: pointers[0] }, { store: files, session: 'other' })).isError, true);
  assert.equal((await handleToolCallAsync('grep_spill', { pointer: pointers[0], pattern: '(' }, { store: files, session: 'same' })).isError, true);
  memory.free();
});

test("compressAsync with pointer: 'path' and a FileStore: pointers are files that exist when it resolves", async () => {
  const files = new FileStore({ root: scratch() });
  const out = await compressAsync(request, { session: 'paths', budget: 16000, store: files, pointer: 'path' });
  const paths = JSON.stringify(out.request).match(new RegExp(`${files.root}/paths/[A-Za-z0-9._-]+\\.txt`, 'g')) ?? [];
  assert.ok(paths.length >= 3, 'file pointers in the excerpts');
  for (const p of paths) assert.ok(existsSync(p), `${p} exists`);
  assert.equal(pointersOf(out.request).length, 0, 'no spill:// pointer');
});

test('a summarizer, pinned constraints and stage ends work with a FileStore as with a SpillStore', async () => {
  const settings = { session: 'sum', compact: { threshold: 4000, planner: false, keep: 4 } };
  const results = [];
  for (const store of [new SpillStore(), new FileStore({ root: scratch() })]) {
    assert.equal(pinConstraint(store, 'sum', 'Never edit tests/.'), true);
    assert.deepEqual(pinnedConstraints(store, 'sum'), ['Never edit tests/.']);
    const prompts = [];
    const out = await compressAsync(request, { ...settings, store, summarizer: async (p) => { prompts.push(p); return GOOD; } });
    assert.equal(out.summary.source, 'summarizer', store.constructor.name);
    assert.equal(prompts.length, 1);
    const again = await compressAsync(request, { ...settings, store, summarizer: async () => assert.fail('not called') });
    assert.equal(again.summary.source, 'reapplied');
    finishStage(store, 'sum');
    results.push([JSON.stringify(out.request), JSON.stringify(again.request), prompts[0]]);
    for (const p of pointersOf(out.request)) {
      assert.equal((await handleToolCallAsync('read_spill', { pointer: p }, { store, session: 'sum' })).isError, false, p);
    }
  }
  assert.deepEqual(results[1], results[0], 'the FileStore gives the SpillStore bytes');
  assert.ok(results[0][0].includes('Use + instead of -.'));
  assert.ok(results[0][0].includes('Never edit tests/.'));
});

test("a summarizer with pointer: 'path': the summary is adopted under the settings the call used, its pointers files", async () => {
  const files = new FileStore({ root: scratch() });
  const settings = { session: 'sum-path', compact: { threshold: 4000, planner: false, keep: 4 }, pointer: 'path' };
  const out = await compressAsync(request, { ...settings, store: files, summarizer: async () => GOOD });
  assert.equal(out.summary.source, 'summarizer', JSON.stringify(out.summary));
  const text = JSON.stringify(out.request);
  assert.ok(text.includes('Use + instead of -.'), 'the summarizer\'s summary is in the request');
  const paths = text.match(new RegExp(`${files.root}/sum-path/[A-Za-z0-9._-]+\\.txt`, 'g')) ?? [];
  assert.ok(paths.length >= 1, 'file pointers in the excerpts');
  for (const p of paths) assert.ok(existsSync(p), `${p} exists`);
  assert.equal(pointersOf(out.request).length, 0, 'no spill:// pointer');
  const again = await compressAsync(request, { ...settings, store: files, summarizer: async () => assert.fail('not called') });
  assert.equal(again.summary.source, 'reapplied');
  assert.equal(JSON.stringify(again.request), text);
});

test('a failed write rejects with STORE_FAILED and no returned pointer ever names a missing blob', async () => {
  const files = new FileStore({ root: scratch() });
  let failing = 1;
  // A store whose first put fails (a full disk, a network error), then works.
  const flaky = {
    get: (s, k) => files.get(s, k),
    list: (s) => files.list(s),
    async put(s, k, text) {
      if (failing > 0) { failing--; throw new Error('disk full'); }
      return files.put(s, k, text);
    },
  };
  const err = await compressAsync(request, { session: 'flaky', budget: 16000, store: flaky }).catch((e) => e);
  assert.ok(code('STORE_FAILED', 'store')(err), `rejects with STORE_FAILED: ${err?.message}`);
  assert.match(err.message, /disk full/);
  assert.equal(err.cause?.message, 'disk full');
  // The next turn (the store works again) returns pointers that all read back.
  const out = await compressAsync(request, { session: 'flaky', budget: 16000, store: flaky });
  const pointers = pointersOf(out.request);
  assert.ok(pointers.length >= 3);
  for (const p of pointers) {
    assert.ok(existsSync(files.pathOf('flaky', p.split('/').pop())), `${p} was written`);
    assert.equal((await handleToolCallAsync('read_spill', { pointer: p }, { store: flaky, session: 'flaky' })).isError, false, p);
  }
  // A store whose bounds refuse the blob: the call rejects, nothing points at it.
  const tiny = new FileStore({ root: scratch(), maxSessionBytes: 1000 });
  const refused = await compressAsync(request, { session: 'tiny', budget: 16000, store: tiny }).catch((e) => e);
  assert.ok(code('STORE_FAILED', 'store')(refused), `rejects: ${refused?.message}`);
  assert.equal(refused.cause?.code, 'STORE_REFUSED');
  assert.deepEqual(await tiny.list('tiny'), []);
});

test('the synchronous calls refuse an async store with an error naming the async call', async () => {
  const files = new FileStore({ root: scratch() });
  assert.throws(() => compress(request, { store: files }), (err) => {
    assert.equal(err.code, 'INVALID_OPTION');
    assert.equal(err.path, 'store');
    assert.match(err.message, /^store: a FileStore in options\.store writes asynchronously .*use compressAsync\(request, \{ store \}\)/);
    return true;
  });
  assert.throws(() => handleToolCall('read_spill', { pointer: 'spill://s/k' }, { store: files, session: 's' }),
    (err) => err.code === 'INVALID_OPTION' && /^store: a FileStore .*handleToolCallAsync/.test(err.message));
  assert.throws(() => compress(request, { store: 42 }), (err) => err.path === 'store' && /got a number$/.test(err.message));
  await assert.rejects(compressAsync(request, { store: 'x' }), (err) => err.path === 'store' && /got a string$/.test(err.message));
  await assert.rejects(handleToolCallAsync('read_spill', {}, { store: {} }), (err) => err.path === 'store' && /got an object$/.test(err.message));
  await assert.rejects(handleToolCallAsync(7, {}, 's'), (err) => err.code === 'INVALID_ARGUMENT' && err.path === 'name');
  await assert.rejects(compressAsync(request, { cacheKey: 'k'.repeat(32) }), code('INVALID_OPTION', 'cacheKey'));
});
