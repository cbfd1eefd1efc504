// Lone UTF-16 surrogates at the wasm boundary where a text is named by its
// content: a JS string with one cannot cross exactly (it would become U+FFFD
// and share its key with the twin that holds U+FFFD), so it is refused with
// INVALID_ARGUMENT naming the argument; the twin itself is fine.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { SpillStore, TraceLiteError } from '../../pkg/entries/node.js';
import { facts } from '../../pkg/internal/blob-keys.js';

function assertRefused(fn, field) {
  assert.throws(fn, (err) => {
    assert.ok(err instanceof TraceLiteError, String(err));
    assert.equal(err.code, 'INVALID_ARGUMENT', err.message);
    assert.equal(err.path, field);
    return true;
  });
}

test('blobFacts refuses a lone surrogate instead of keying it as U+FFFD', () => {
  const twin = facts('log line \uFFFD end');
  assert.match(twin.hash, /^[0-9a-f]{32}$/);
  assertRefused(() => facts('log line \uD800 end'), 'text');
  assertRefused(() => facts('log line \uDC00 end'), 'text');
  // A paired surrogate (an emoji) is exact UTF-8: keyed as usual.
  assert.notEqual(facts('log line \uD83D\uDE00 end').hash, twin.hash);
});

test('a spill store refuses blobs, keys and sessions with a lone surrogate', () => {
  const store = new SpillStore();
  try {
    store.put('s', 'k', 'a \uFFFD b');
    assert.equal(store.get('s', 'k'), 'a \uFFFD b');
    assertRefused(() => store.put('s', 'k2', 'a \uD800 b'), 'text');
    assertRefused(() => store.put('s\uDBFF', 'k', 'x'), 'session');
    assertRefused(() => store.put('s', 'k\uDFFF', 'x'), 'key');
    assertRefused(() => store.get('s\uDBFF', 'k'), 'session');
    assert.deepEqual(store.list('s').map((b) => b.key), ['k']);
  } finally {
    store.free();
  }
});
