//! Resource limits (`limits`): bytes, counts and sizes past which a request is
//! refused with `LIMIT_EXCEEDED` or its work is bounded.

use serde::{Deserialize, Serialize};

use crate::error::Result;

/// Resource limits; exceeding one is a `LIMIT_EXCEEDED` error naming it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields, rename_all = "camelCase")]
pub struct Limits {
    /// Largest request accepted, in bytes.
    pub max_request_bytes: usize,
    /// Most messages accepted.
    pub max_messages: usize,
    /// Deepest JSON nesting accepted.
    pub max_depth: usize,
    /// Largest inline image accepted, in pixels (width × height read from the
    /// PNG, JPEG, GIF or WebP header in the base64 payload); over it the request
    /// is refused with `LIMIT_EXCEEDED` naming the image's JSON path. Images by
    /// URL and payloads whose size cannot be read pass (see
    /// [`crate::formats::images::check_pixels`]).
    pub max_image_pixels: u64,
    /// Spill bytes kept per session.
    pub max_spill_bytes_per_session: usize,
    /// Most `spill.errorPatterns` accepted (each is checked against every
    /// hidden line of every spilled output). Default 64.
    pub max_error_patterns: usize,
    /// Most per-tool rules accepted: names in `excludeTools`, and tools in
    /// `spill.toolCaps`.
    pub max_tool_rules: usize,
    /// Bytes of raw tool output the stateful `TraceLite` session holds
    /// (default 32 MiB). Past it, the oldest outputs outside the recent window
    /// are spilled in the raw history itself: their full text goes to the
    /// spill store and the history keeps their excerpt and pointer (or, when
    /// the store is full, an excerpt saying the rest could not be kept).
    pub max_history_bytes: usize,
    /// Most messages one compaction replaces (default 10,000). A longer
    /// history is compacted in chunks, oldest first: up to this many messages
    /// (moved earlier so no tool call loses its result) on this call, the next
    /// ones on later calls; the compact stage's notes say so. Bounds the work
    /// of a hostile many-message request instead of failing it.
    pub max_compact_messages: usize,
    /// Most bytes of one compaction's spill blob (default 4 MiB): the
    /// originals plus about 100 bytes of index and header per message;
    /// chunked like `max_compact_messages`. (The blob also holds the previous
    /// summary, and user messages that stop being kept word for word.)
    pub max_compact_bytes: usize,
    /// What a request still over `budget` after every stage does: `"report"`
    /// (default) sets `report.overBudget` (tokens, budget, path of the largest
    /// message); `"error"` fails the call with `OVER_BUDGET` at that path.
    pub over_budget: OverBudgetMode,
}

/// `limits.overBudget`: report a request still over budget, or refuse it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum OverBudgetMode {
    /// `report.overBudget` says so; the request is emitted.
    #[default]
    Report,
    /// The call fails with `OVER_BUDGET`.
    Error,
}

impl Default for Limits {
    fn default() -> Self {
        Self {
            max_request_bytes: 64 << 20,
            max_messages: 100_000,
            max_depth: 100,
            max_image_pixels: 50_000_000,
            max_spill_bytes_per_session: 16 << 20,
            max_error_patterns: 64,
            max_tool_rules: 256,
            max_history_bytes: 32 << 20,
            max_compact_messages: 10_000,
            max_compact_bytes: 4 << 20,
            over_budget: OverBudgetMode::Report,
        }
    }
}

impl Limits {
    /// Checks the `limits` section; errors name the offending limit.
    pub(super) fn validate(&self) -> Result<()> {
        let bad = crate::error::invalid_option::<()>;
        if !(1..=127).contains(&self.max_depth) {
            return bad("limits.maxDepth", "must be between 1 and 127");
        }
        if self.max_compact_messages == 0 {
            return bad("limits.maxCompactMessages", "must be at least 1");
        }
        if self.max_compact_bytes < 1024 {
            return bad("limits.maxCompactBytes", "must be at least 1024");
        }
        Ok(())
    }
}
