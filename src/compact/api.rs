//! The compaction stage's host API: what a host (the wasm bindings, the
//! `TraceLite` controller) may ask of compaction outside a compress call. A
//! host reaches the stage through this module only (`tests/layers.rs`
//! checks it).
//!
//! * per session, on the stage's [`CompactState`] (the host keeps it in
//!   `HostState::compact`): `pin` a constraint, the `pinned` ones,
//!   `finish_stage`, the `pending_prompt` of the async summarizer flow;
//! * [`adopt_summary_json`]: that flow's second phase, a host summarizer's
//!   answer adopted into the compacted request;
//! * [`validate_summary`]: whether such an answer has the five sections.

pub use super::adopt::validate_summary;
pub use super::state::CompactState;

use serde_json::Value;

use crate::config::Config;
use crate::error::Result;
use crate::formats;

/// Replaces the extractive summary in `request` (the output of the compress
/// call of `config.session` that compacted, JSON text, in `config.format` or
/// the format it reads as) by `summary`, a host summarizer's answer; returns
/// the request with it. `SUMMARIZER_FAILED` when a section is missing or
/// empty or nothing is pending.
pub fn adopt_summary_json(
    request: &str,
    config: &Config,
    state: &mut CompactState,
    summary: &str,
) -> Result<Value> {
    let value = crate::json::parse_strict(request, config.limits.max_depth)?;
    let format = match config.format {
        Some(f) => f,
        None => formats::detect(&value)?,
    };
    let mut conv = formats::parse(format, &value)?;
    super::adopt::adopt_summary(&mut conv, state, config, summary)?;
    Ok(formats::emit(format, &conv))
}
