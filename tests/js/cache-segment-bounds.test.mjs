// A cache segment over `limits.maxRequestBytes` is refused before it is
// copied into wasm memory (issue 39: a 58 MiB segment grew it to 741 MiB).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { SpillStore, TraceLiteError, wasmMemoryBytes } from '../../pkg/entries/node.js';

test('a huge cache segment is LIMIT_EXCEEDED and does not grow wasm memory', () => {
  const store = new SpillStore();
  try {
    const limit = 1 << 20;
    const huge = `{"format":"tracelite-cache/3","pad":"${'x'.repeat(48 << 20)}"}`;
    // A first refusal (one byte over) reads the options once: what the core
    // sets up for them is not the segment's, and not what is measured.
    assert.throws(() => store.importCache('x'.repeat(limit + 1), { limits: { maxRequestBytes: limit } }), (err) => err.code === 'LIMIT_EXCEEDED');
    const before = wasmMemoryBytes();
    assert.throws(
      () => store.importCache(huge, { limits: { maxRequestBytes: limit } }),
      (err) => err instanceof TraceLiteError && err.code === 'LIMIT_EXCEEDED' && err.path === 'limits.maxRequestBytes',
    );
    assert.equal(wasmMemoryBytes(), before);
    // Just under the limit it is read (and refused as malformed, not too big).
    assert.throws(
      () => store.importCache('x'.repeat(limit), { limits: { maxRequestBytes: limit }, key: 'bounds-test-key-0123456789' }),
      (err) => err.code === 'INVALID_CACHE',
    );
  } finally {
    store.free();
  }
});
