//! wasm exports for measuring: the size of the module's linear memory, and
//! the bytes its allocator holds (counted by wrapping the system allocator).

use wasm_bindgen::prelude::*;

/// The system allocator, counting the bytes it holds.
#[global_allocator]
static ALLOCATOR: alloc_count::Counting = alloc_count::Counting::new();

/// Bytes of wasm linear memory currently reserved (it only grows), for
/// peak-memory measurements (`bench/hostile-memory.mjs`).
#[wasm_bindgen(js_name = wasmMemoryBytes)]
pub fn wasm_memory_bytes() -> f64 {
    (core::arch::wasm32::memory_size(0) as f64) * 65_536.0
}

/// Bytes the allocator holds now (allocated and not yet freed): a host
/// measures what a call kept by the difference before and after it (the
/// in-memory sessions of the proxy and the middleware weigh themselves so).
/// Unlike [`wasm_memory_bytes`] it goes down when memory is freed.
#[wasm_bindgen(js_name = wasmHeapBytes)]
pub fn wasm_heap_bytes() -> f64 {
    ALLOCATOR.held() as f64
}
