// Internal: `compress` with any spill store. The wasm SpillStore is used
// directly; any other store (KV, yours) gets the call's new blobs (the `spills`
// compress returns) copied into it, since compress itself is synchronous.
import { SpillStore, compress } from '#entry';

/** Whether `store` is the in-wasm store `compress` can write to directly. */
export function isWasmStore(store) {
  return store instanceof SpillStore;
}

/**
 * Compresses `request` and makes sure every blob it spilled is readable from
 * `store` before returning. `options` are compress options without `store`.
 */
export async function compressInto(request, options, store) {
  if (store === undefined || isWasmStore(store)) {
    return compress(request, store === undefined ? options : { ...options, store });
  }
  const scratch = new SpillStore();
  let out;
  try {
    out = compress(request, { ...options, store: scratch });
  } finally {
    scratch.free();
  }
  const spills = out.spills ?? [];
  if (typeof store.persist === 'function') {
    await store.persist(spills);
  } else {
    await Promise.all(spills.map((s) => store.put(s.session, s.key, s.text)));
  }
  return out;
}

/** 64-bit FNV-1a of a string, as 16 hex digits (same hash as the core's keys). */
export function fnv1a(text) {
  let hash = 0xcbf29ce484222325n;
  const bytes = new TextEncoder().encode(text);
  for (const b of bytes) {
    hash ^= BigInt(b);
    hash = (hash * 0x100000001b3n) & 0xffffffffffffffffn;
  }
  return hash.toString(16).padStart(16, '0');
}

/**
 * A stable session name for a conversation that did not name one: a hash of
 * its opening (the messages up to and including the first user message), which
 * stays the same on every later turn.
 */
export function sessionFromMessages(messages) {
  const opening = [];
  for (const m of Array.isArray(messages) ? messages : []) {
    opening.push(m);
    if (m && m.role === 'user') break;
  }
  return `conv-${fnv1a(JSON.stringify(opening))}`;
}
