/** Bytes of wasm linear memory currently reserved (it only grows: after a call, the peak so far). */
export function wasmMemoryBytes(): number;

/**
 * What a session kept in memory weighs per byte of its last request (its
 * spills, caches and previous request hold 1.2–6.9× the request's bytes).
 */
export const SESSION_BYTES_PER_REQUEST_BYTE: number;

/**
 * Memory defaults of this host: the proxy's `maxBodyBytes` and the in-memory
 * sessions' `maxMemoryBytes` (workerd: 2 MiB and 8 MiB, keeping an isolate
 * under 128 MB; elsewhere 8 MiB and 192 MiB).
 */
export const MEMORY_DEFAULTS: Readonly<{ maxBodyBytes: number; maxMemoryBytes: number }>;
