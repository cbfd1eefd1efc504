//! The optical stage's host API: what a host (the wasm bindings) may ask of
//! the renderer outside a compress call. A host reaches the stage through
//! this module only (`tests/layers.rs` checks it).
//!
//! * [`render`]: a text rendered as the stage would for the options'
//!   provider and `optical` section, the [`Snapshot`] with its PNGs and
//!   image tokens.

pub use super::{render, Snapshot};
