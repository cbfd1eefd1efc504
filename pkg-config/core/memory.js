// Memory: the size of the wasm linear memory (it never shrinks, so after a
// call it is the peak that call needed on top of earlier ones), the bytes its
// allocator holds (what the in-memory sessions are weighed by), and the
// memory defaults of this host.
import { wasmHeapBytes as wasmHeap, wasmMemoryBytes as wasmMemory } from '../wasm/tracelite.js';

const MiB = 1 << 20;

/** Bytes of wasm linear memory currently reserved. */
export function wasmMemoryBytes() {
  return wasmMemory();
}

/**
 * What a session may keep per byte of a request, reserved before the call
 * (the in-memory sessions free others first, so that with it they stay
 * within `maxMemoryBytes` during the call): at most 14.8× measured on 8 MiB
 * bodies (~300-line outputs; tiny tool calls 10.9×, measured by
 * `wasmHeapBytes` around the call).
 */
export const SESSION_BYTES_PER_REQUEST_BYTE = 15;

/**
 * Bytes the wasm allocator holds now (allocated, not yet freed; it goes down
 * when memory is freed, unlike `wasmMemoryBytes`). What a call into a store
 * kept is the difference before and after it: the in-memory sessions of the
 * proxy and the middleware are weighed so (`maxMemoryBytes`).
 */
export function wasmHeapBytes() {
  return wasmHeap();
}

/** Whether this is a Cloudflare Worker (workerd: 128 MB per isolate). */
const WORKERD = globalThis.navigator?.userAgent === 'Cloudflare-Workers';

/**
 * Memory defaults of this host: `maxBodyBytes`, the largest request body the
 * proxy reads (a request's wasm peak is up to about 20× its body), and
 * `maxMemoryBytes`, what the in-memory sessions of a proxy or middleware keep
 * in all between calls. On workerd 2 MiB and 8 MiB, so that the isolate
 * stays under its 128 MB with room to spare (wasm 56 MiB after maximal
 * sessions; at 16 MiB it reached 91 MiB); elsewhere 8 MiB and 192 MiB.
 */
export const MEMORY_DEFAULTS = Object.freeze(WORKERD
  ? { maxBodyBytes: 2 * MiB, maxMemoryBytes: 8 * MiB }
  : { maxBodyBytes: 8 * MiB, maxMemoryBytes: 192 * MiB });
