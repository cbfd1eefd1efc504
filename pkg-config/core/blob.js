// A blob's facts and content keys, by the core (src/hash/key.rs): what the
// outside stores check on write and read, and what names a cache segment.
import { blobFacts, isContentKey as coreIsContentKey } from '../wasm/tracelite.js';
import { guarded } from './errors.js';

/**
 * A blob's UTF-8 size, line count (as the core's stores count it) and content
 * hash (the 32 hex digits of a content key), by the core: `{ bytes, lines, hash }`.
 */
export function facts(text) {
  return JSON.parse(guarded(() => blobFacts(text)));
}

/** Whether `key` is a content key (`<kind>-<32 hex>`: its text must hash to it). */
export function isContentKey(key) {
  return coreIsContentKey(key);
}
