//! The `dedup` section (stage 2): its settings and their defaults; every
//! value of theirs is valid.

use serde::{Deserialize, Serialize};

/// Dedup settings (stage 2). An observation loses the lines (trimmed length
/// above `min_line_chars`) that reappear in a later observation that was inside
/// the recent window (`window`) with it; the newest observation and tool calls
/// are never touched.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields, rename_all = "camelCase")]
pub struct DedupConfig {
    /// Stage switch.
    pub enabled: bool,
    /// Lines whose trimmed length is at most this are never deduplicated. Default 5.
    pub min_line_chars: usize,
    /// Edit earlier observations only on the turns when observations leave
    /// the recent window in a batch (`optical.batch`), so the prompt prefix
    /// changes once per batch instead of every turn (prompt caches keep
    /// working); `false` edits on every new observation. While the window
    /// fills (the first `window` observations) every arrival is settled, so
    /// dedup edits on each of those turns either way.
    pub batched: bool,
}

impl Default for DedupConfig {
    fn default() -> Self {
        Self {
            enabled: true,
            min_line_chars: 5,
            batched: true,
        }
    }
}
