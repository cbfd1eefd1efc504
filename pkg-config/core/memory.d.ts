/** Bytes of wasm linear memory currently reserved (it only grows: after a call, the peak so far). */
export function wasmMemoryBytes(): number;
