//! The system allocator, counting the bytes it holds: TraceLite's wasm build
//! installs it as the global allocator, so that a host can weigh what a call
//! kept (`wasmHeapBytes`). Its own crate because the main crate forbids
//! `unsafe` (a `GlobalAlloc` needs an `unsafe impl`). Each method is kept out
//! of line: inlined at every allocation site, the counting grew the shipped
//! wasm by ~36 KB gzip.

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicUsize, Ordering::Relaxed};

/// [`System`], counting the bytes allocated and not yet freed.
#[derive(Debug)]
pub struct Counting {
    held: AtomicUsize,
}

impl Counting {
    /// A counter at zero.
    pub const fn new() -> Self {
        Self {
            held: AtomicUsize::new(0),
        }
    }

    /// Bytes allocated and not yet freed (as requested: the allocator's own
    /// overhead is not counted).
    pub fn held(&self) -> usize {
        self.held.load(Relaxed)
    }
}

impl Default for Counting {
    fn default() -> Self {
        Self::new()
    }
}

// SAFETY: every call is passed on to `System` unchanged; only a counter is
// updated beside it.
unsafe impl GlobalAlloc for Counting {
    #[inline(never)]
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        let p = System.alloc(layout);
        if !p.is_null() {
            self.held.fetch_add(layout.size(), Relaxed);
        }
        p
    }

    #[inline(never)]
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        let p = System.alloc_zeroed(layout);
        if !p.is_null() {
            self.held.fetch_add(layout.size(), Relaxed);
        }
        p
    }

    #[inline(never)]
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        System.dealloc(ptr, layout);
        self.held.fetch_sub(layout.size(), Relaxed);
    }

    #[inline(never)]
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        let p = System.realloc(ptr, layout, new_size);
        if !p.is_null() {
            self.held.fetch_add(new_size, Relaxed);
            self.held.fetch_sub(layout.size(), Relaxed);
        }
        p
    }
}
