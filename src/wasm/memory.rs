//! wasm export for measuring: the size of the module's linear memory.

use wasm_bindgen::prelude::*;

/// Bytes of wasm linear memory currently reserved (it only grows), for
/// peak-memory measurements (`bench/hostile-memory.mjs`).
#[wasm_bindgen(js_name = wasmMemoryBytes)]
pub fn wasm_memory_bytes() -> f64 {
    (core::arch::wasm32::memory_size(0) as f64) * 65_536.0
}
