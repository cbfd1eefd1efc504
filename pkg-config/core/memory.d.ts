/** Bytes of wasm linear memory currently reserved (it only grows: after a call, the peak so far). */
export function wasmMemoryBytes(): number;

/**
 * What a session may keep in memory per byte of a request: the in-memory
 * sessions reserve it before the call (freeing others first).
 */
export const SESSION_BYTES_PER_REQUEST_BYTE: number;

/**
 * Bytes the wasm allocator holds now (allocated, not yet freed: it goes down
 * when memory is freed). The in-memory sessions are weighed by what each call
 * into their stores kept of it (`maxMemoryBytes`).
 */
export function wasmHeapBytes(): number;

/**
 * Memory defaults of this host: the proxy's `maxBodyBytes` and the in-memory
 * sessions' `maxMemoryBytes` (workerd: 2 MiB and 8 MiB, keeping an isolate
 * under 128 MB; elsewhere 8 MiB and 192 MiB).
 */
export const MEMORY_DEFAULTS: Readonly<{ maxBodyBytes: number; maxMemoryBytes: number }>;
