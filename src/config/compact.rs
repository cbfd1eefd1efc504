//! The `compact` section (stage 5): its settings, their defaults, and the
//! check a parsed section must pass.

use serde::{Deserialize, Serialize};

use super::{Config, Section};
use crate::error::{invalid_option, Error, ErrorCode, Result};

/// Compaction settings.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields, rename_all = "camelCase")]
pub struct CompactConfig {
    /// Stage switch (off means off: no trigger, no re-applied summary).
    pub enabled: bool,
    /// Token threshold that triggers compaction; the effective threshold is
    /// never closer to the budget than one capped tool result.
    pub threshold: u64,
    /// Messages kept verbatim at the end (the cut moves so that no tool call
    /// is separated from its result).
    pub keep: usize,
    /// Never compact again within this many turns (assistant turns since the
    /// last summary) unless the budget forces it.
    pub min_turns: usize,
    /// Phrases marking user constraints kept word for word (matched
    /// case-insensitively at word boundaries in user messages).
    pub constraint_patterns: Vec<String>,
    /// Constraints pinned by the host, archived word for word.
    pub pinned: Vec<String>,
    /// Compact only when the cache-aware cost estimate (prices and horizon
    /// of [`crate::plan`]) says it pays, or the budget forces it; `false`
    /// compacts whenever a trigger fires.
    pub planner: bool,
    /// Do not compact unless it removes at least this many tokens.
    pub min_saving: u64,
    /// Detect stage boundaries (a successful test or run after an edit).
    pub detect_stages: bool,
    /// Keep every compacted tool call (name and arguments, verbatim, in
    /// order) in a tool-call log after the summary: tool calls stay text.
    /// Secrets in the arguments are masked like all text reaching the model
    /// when `redact.enabled` (default); the originals stay in the spill store.
    pub keep_tool_calls: bool,
    /// Share of the budget the user's own messages (the task, later
    /// instructions) may fill when compaction keeps them word for word;
    /// beyond it the oldest (never the first nor the newest) go behind a
    /// pointer and their constraints into the archive.
    pub user_share: f64,
    /// Tokens of file views a compaction keeps as they were shown: the
    /// newest output showing each file the compacted turns read or edited,
    /// unless a later turn shows it again ([`crate::compact::views`]);
    /// 0 keeps none.
    pub live_views: u64,
    /// Share of the budget the tool-call log may fill; beyond it its oldest
    /// calls are folded into one line citing the compaction's blob, which
    /// holds them verbatim (a session of any length stays in the budget).
    pub call_log_share: f64,
    /// Share of the budget the summary may fill; beyond it the oldest lines
    /// of Progress, Key facts and Decisions (critical lines last) leave it,
    /// readable in the previous summary that the compaction's blob keeps.
    /// With `userShare` and `callLogShare` it bounds what compactions carry
    /// forward, so a long session's requests (and cost per turn) stay flat.
    pub summary_share: f64,
    /// In a session of several tasks (each message the user writes starts
    /// one), a compaction of a request under this many tokens takes only
    /// the earlier tasks' messages and leaves the current task's outputs as
    /// they are, waiting when nothing else is left ([`crate::compact::tasks`]);
    /// 0 compacts every task alike.
    pub task_first: u64,
    /// In a session of several tasks, the share of `callLogShare` and
    /// `summaryShare` its compactions keep: what they carry forward is
    /// mostly the earlier tasks', which the current one seldom uses again,
    /// and it is read at every turn. 1 keeps the full shares.
    pub several_tasks_share: f64,
}

impl Default for CompactConfig {
    fn default() -> Self {
        Self {
            enabled: true,
            threshold: 100_000,
            keep: 6,
            min_turns: 5,
            constraint_patterns: [
                "must",
                "never",
                "don't",
                "do not",
                "only",
                "always",
                "should not",
                "avoid",
            ]
            .map(String::from)
            .to_vec(),
            pinned: Vec::new(),
            planner: true,
            min_saving: 2_000,
            detect_stages: true,
            keep_tool_calls: true,
            user_share: 0.05,
            live_views: 2_000,
            call_log_share: 0.04,
            summary_share: 0.04,
            task_first: 0,
            several_tasks_share: 0.5,
        }
    }
}

impl Section for CompactConfig {
    /// Checks the `compact` section; errors name the offending field.
    fn validate(&self, _config: &Config) -> Result<()> {
        if !(self.user_share >= 0.0 && self.user_share <= 1.0) {
            return invalid_option("compact.userShare", "must be in [0, 1]");
        }
        if !(self.call_log_share > 0.0 && self.call_log_share <= 1.0) {
            return invalid_option("compact.callLogShare", "must be in (0, 1]");
        }
        if !(self.summary_share > 0.0 && self.summary_share <= 1.0) {
            return invalid_option("compact.summaryShare", "must be in (0, 1]");
        }
        if !(self.several_tasks_share > 0.0 && self.several_tasks_share <= 1.0) {
            return invalid_option("compact.severalTasksShare", "must be in (0, 1]");
        }
        if self.keep == 0 {
            return invalid_option("compact.keep", "must be at least 1");
        }
        if let Some(i) = self
            .constraint_patterns
            .iter()
            .position(|p| p.trim().is_empty())
        {
            return Err(Error::new(
                ErrorCode::InvalidOption,
                format!("compact.constraintPatterns[{i}]"),
                "must not be empty",
            ));
        }
        if let Some(i) = self
            .pinned
            .iter()
            .position(|p| p.trim().is_empty() || p.len() > 4_000)
        {
            return Err(Error::new(
                ErrorCode::InvalidOption,
                format!("compact.pinned[{i}]"),
                "must be 1-4000 bytes of text",
            ));
        }
        Ok(())
    }
}
