// Imported cache segments cannot change an output (issue 39: hostile
// segments changed outputs in 4 of 22 cases: swapped images, altered
// pixels, zeroed counts). A segment is sealed with an HMAC-SHA256 under the
// host's key for one session; one that does not verify is INVALID_CACHE
// naming cache.mac, nothing of it is used, and the next output is
// byte-identical to a cold one. A genuine segment still warms the cache.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { SpillStore, compress } from '../../pkg/entries/node.js';
import { reseal } from './support/segments.mjs';
import { renderingConversation } from './support/requests.mjs';

const SEALED = { key: 'segment-auth-test-key-0123456789', session: 's' };
const EMPTY = { snapshots: 0, snapshotBytes: 0, rendered: 0, counts: 0, countedBytes: 0 };

/** A genuine segment of 8 turns of the conversation, and it read as JSON. */
function genuine() {
  const a = new SpillStore();
  try {
    compress(renderingConversation(8), { session: 's', store: a });
    const text = a.exportCache(SEALED);
    return { text, json: JSON.parse(text) };
  } finally {
    a.free();
  }
}

/** `fn` applied to a copy of the segment, as text (not sealed again). */
function changed(json, fn) {
  const copy = structuredClone(json);
  fn(copy);
  return JSON.stringify(copy);
}

test('hostile segments are refused at their MAC and change no output', () => {
  const { text, json } = genuine();
  const rendered = json.snapshots.flatMap((s, i) => (s.images.length > 0 ? [i] : []));
  assert.ok(rendered.length >= 2, 'two rendered snapshots to swap');
  const [a, b] = rendered;
  const mac = json.mac;
  const cases = [
    ['images swapped between two keys', changed(json, (v) => {
      [v.snapshots[a].key, v.snapshots[b].key] = [v.snapshots[b].key, v.snapshots[a].key];
    }), SEALED],
    ['pixels altered', changed(json, (v) => {
      const png = v.snapshots[a].images[0];
      const mid = png.length >> 1;
      v.snapshots[a].images[0] = `${png.slice(0, mid)}${png[mid] === 'A' ? 'B' : 'A'}${png.slice(mid + 1)}`;
    }), SEALED],
    ['counts zeroed', changed(json, (v) => { for (const c of v.counts) c[2] = 0; }), SEALED],
    ["session A's segment imported into session B", text, { ...SEALED, session: 'b' }],
    ['another key', text, { ...SEALED, key: 'another-key-0123456789abcdef' }],
    ['another key, the same session (a forgery)', reseal(changed(json, (v) => { for (const c of v.counts) c[2] = 0; }), { ...SEALED, key: 'forger-key-0123456789abcdef' }), SEALED],
    ['MAC truncated', text.replace(mac, mac.slice(0, 63)), SEALED],
    ['MAC forged', text.replace(mac, '0'.repeat(64)), SEALED],
    ['MAC removed', changed(json, (v) => { delete v.mac; }), SEALED],
    ['segment truncated', text.slice(0, text.length >> 1), SEALED],
  ];
  const request = renderingConversation(9);
  const cold = new SpillStore();
  const reference = compress(request, { session: 's', store: cold });
  for (const [what, segment, options] of cases) {
    const target = new SpillStore();
    try {
      assert.throws(() => target.importCache(segment, options), (err) => err.code === 'INVALID_CACHE' && err.path === 'cache.mac', what);
      assert.deepEqual({ ...target.cacheStats() }, EMPTY, what);
      // Compressed in the segment's own session: byte-identical to cold.
      assert.deepEqual(compress(request, { session: 's', store: target }), reference, what);
    } finally {
      target.free();
    }
  }
  // The genuine segment warms: fewer renders, the same output.
  const warm = new SpillStore();
  const r = warm.importCache(text, SEALED);
  assert.ok(r.snapshots > 0 && r.counts > 0, JSON.stringify(r));
  assert.deepEqual(compress(request, { session: 's', store: warm }), reference);
  assert.ok(warm.cacheStats().rendered < cold.cacheStats().rendered, `warm ${warm.cacheStats().rendered}, cold ${cold.cacheStats().rendered}`);
  warm.free();
  cold.free();
});

test('without a key nothing is imported: INVALID_OPTION naming key', () => {
  const { text } = genuine();
  const s = new SpillStore();
  try {
    for (const key of [undefined, '', 'short', new Uint8Array(15)]) {
      assert.throws(() => s.importCache(text, { session: 's', key }), { code: 'INVALID_OPTION', path: 'key' });
    }
    assert.throws(() => s.importCache(text, { session: 's', key: 42 }), { code: 'INVALID_OPTION', path: 'key' });
    assert.deepEqual({ ...s.cacheStats() }, EMPTY);
    // A Uint8Array key is the same key as its UTF-8 string.
    assert.ok(s.importCache(text, { session: 's', key: new TextEncoder().encode(SEALED.key) }).snapshots > 0);
  } finally {
    s.free();
  }
});
