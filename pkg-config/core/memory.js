// Memory: the size of the wasm linear memory (it never shrinks, so after a
// call it is the peak that call needed on top of earlier ones), and the
// memory defaults of this host.
import { wasmMemoryBytes as wasmMemory } from '../wasm/tracelite.js';

const MiB = 1 << 20;

/** Bytes of wasm linear memory currently reserved. */
export function wasmMemoryBytes() {
  return wasmMemory();
}

/**
 * What a session kept in memory weighs per byte of its last request: its
 * spills, caches and previous request hold 1.2–6.9× the request's bytes
 * (bench/hostile-memory.mjs `--sessions`, tiny tool calls the most).
 */
export const SESSION_BYTES_PER_REQUEST_BYTE = 7;

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
