// Memory measurement: the size of the wasm linear memory (it never shrinks,
// so after a call it is the peak that call needed on top of earlier ones).
import { wasmMemoryBytes as wasmMemory } from '../wasm/tracelite.js';

/** Bytes of wasm linear memory currently reserved. */
export function wasmMemoryBytes() {
  return wasmMemory();
}
