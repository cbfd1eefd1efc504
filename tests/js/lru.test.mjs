// The one bounded map the adapters' caches share (pkg-config/internal/lru.js):
// least recently used dropped first, by count or by weight.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Lru } from '../../pkg/internal/lru.js';
import { FreshKeys } from '../../pkg/internal/blob-keys.js';
import { MaskedBlobs } from '../../pkg/adapters/proxy/search-budget.js';

test('a get makes an entry the most recently used; a set beyond max drops the least recently used', () => {
  const lru = new Lru(2);
  lru.set('a', 1).set('b', 2);
  assert.equal(lru.get('a'), 1);
  lru.set('c', 3);
  assert.deepEqual([lru.has('a'), lru.has('b'), lru.has('c')], [true, false, true]);
  // peek reads without using: 'a' stays the oldest.
  lru.get('c');
  assert.equal(lru.peek('a'), 1);
  lru.set('d', 4);
  assert.deepEqual([lru.has('a'), lru.has('c'), lru.has('d'), lru.size], [false, true, true, 2]);
  // Setting a held key replaces it and uses it.
  lru.set('c', 30).set('e', 5);
  assert.deepEqual([lru.get('c'), lru.has('d'), lru.size], [30, false, 2]);
  assert.equal(lru.delete('c'), true);
  assert.equal(lru.delete('c'), false);
  assert.equal(lru.get('c'), undefined);
});

test('a weighed Lru holds at most max weight, an entry heavier than max not at all', () => {
  const lru = new Lru(10, (text) => text.length);
  lru.set('a', 'xxxx').set('b', 'yyyy');
  lru.get('a');
  lru.set('c', 'zzzz');
  assert.deepEqual([lru.has('a'), lru.has('b'), lru.has('c')], [true, false, true]);
  // Replacing a value counts its new weight only.
  lru.set('a', 'x');
  lru.set('d', 'wwww');
  assert.deepEqual([lru.has('a'), lru.has('c'), lru.has('d')], [true, true, true]);
  lru.set('big', 'b'.repeat(11));
  assert.deepEqual([lru.has('big'), lru.size], [false, 0]);
  lru.set('e', 'e'.repeat(10));
  assert.deepEqual([lru.has('e'), lru.size], [true, 1]);
});

test('FreshKeys and MaskedBlobs keep their bounds through the shared Lru', () => {
  const fresh = new FreshKeys(2);
  fresh.remember('a', 100, 'ha');
  fresh.remember('b', 100, 'hb');
  // has() does not use a key: 'a' is still the first dropped.
  assert.equal(fresh.has('a', 'ha', 0, 10), true);
  fresh.remember('c', 100, 'hc');
  assert.deepEqual([fresh.has('a', 'ha', 0, 10), fresh.has('b', 'hb', 0, 10), fresh.has('c', 'hc', 0, 10)], [false, true, true]);
  assert.equal(fresh.has('b', 'other', 0, 10), false);
  assert.equal(fresh.has('b', 'hb', 95, 10), false);
  fresh.forget('b');
  assert.equal(fresh.has('b', 'hb', 0, 10), false);

  const masked = new MaskedBlobs(8);
  assert.equal(masked.put('s', 'k1', 'aaaa'), 'aaaa');
  masked.put('s', 'k2', 'bbbb');
  assert.equal(masked.get('s', 'k1'), 'aaaa');
  masked.put('s', 'k3', 'cccc');
  assert.deepEqual([masked.get('s', 'k1'), masked.get('s', 'k2'), masked.get('s', 'k3')], ['aaaa', undefined, 'cccc']);
  // A text over the bound is returned, not held; a held key keeps its first text.
  assert.equal(masked.put('s', 'big', 'x'.repeat(9)), 'x'.repeat(9));
  assert.equal(masked.get('s', 'big'), undefined);
  masked.put('s', 'k1', 'zzzz');
  assert.equal(masked.get('s', 'k1'), 'aaaa');
});
