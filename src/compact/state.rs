//! What compaction remembers per session between calls: the last compaction
//! (re-applied byte for byte while the history starts the same way), pinned
//! constraints, a pending stage boundary and the summary a host summarizer may
//! still replace.

use std::collections::BTreeMap;

use crate::error::Result;
use crate::model::Message;
use crate::stage::CompactionOutcome;

/// Most pinned constraints a session keeps.
const MAX_PINNED: usize = 100;

/// Compaction state of every session of a [`crate::HostState`].
#[derive(Debug, Default)]
pub struct CompactState {
    pub(super) sessions: BTreeMap<String, SessionCompaction>,
    /// The compaction drafted on this call while the planner weighs it
    /// (between the stage's `apply` and its `settle`).
    pub(super) drafted: Option<Box<super::Drafted>>,
    /// What the stage did on this call (see [`take_outcome`](Self::take_outcome)).
    pub(super) outcome: Option<CompactionOutcome>,
}

#[derive(Debug, Default)]
pub(super) struct SessionCompaction {
    /// The last compaction, re-applied while the history matches.
    pub(super) record: Option<CompactionRecord>,
    /// Constraints pinned with [`CompactState::pin`].
    pub(super) pinned: Vec<String>,
    /// Set by [`CompactState::finish_stage`], consumed by the next call.
    pub(super) boundary_pending: bool,
    /// The last compaction's summary, open for a host summarizer.
    pub(super) pending: Option<PendingSummary>,
}

/// A compaction of the first `covered` incoming messages.
#[derive(Debug, Clone)]
pub(super) struct CompactionRecord {
    pub(super) covered: usize,
    pub(super) fingerprint: u64,
    pub(super) replacement: Vec<Message>,
}

/// A compaction whose extractive summary a host summarizer may replace.
#[derive(Debug, Clone)]
pub(super) struct PendingSummary {
    pub(super) prompt: String,
    pub(super) header: String,
    /// Where the lines a summary over `compact.summaryShare` drops stay
    /// readable (the previous summary in the compaction's blob).
    pub(super) older: String,
}

impl CompactState {
    /// Takes the stage boundary a host marked for `session`
    /// ([`finish_stage`](Self::finish_stage)): whether there was one.
    pub(super) fn take_boundary(&mut self, session: &str) -> bool {
        std::mem::take(
            &mut self
                .sessions
                .entry(session.to_string())
                .or_default()
                .boundary_pending,
        )
    }

    /// What the stage did on the call that just ran (`report.compaction`),
    /// taken: nothing when it neither compacted nor re-applied.
    pub fn take_outcome(&mut self) -> Option<CompactionOutcome> {
        self.outcome.take()
    }

    /// Pins a constraint for `session`: archived word for word at the next
    /// compaction (and added to an existing archive at the next call).
    /// Returns whether it was new.
    pub fn pin(&mut self, session: &str, text: &str) -> Result<bool> {
        let t = text.trim();
        if t.is_empty() || t.len() > 4_000 {
            return Err(crate::error::Error::new(
                crate::error::ErrorCode::InvalidOption,
                "text",
                "a pinned constraint must be 1-4000 bytes of text",
            ));
        }
        let s = self.sessions.entry(session.to_string()).or_default();
        if s.pinned.iter().any(|p| p == t) {
            return Ok(false);
        }
        if s.pinned.len() >= MAX_PINNED {
            return Err(crate::error::Error::new(
                crate::error::ErrorCode::LimitExceeded,
                "pinned",
                format!("at most {MAX_PINNED} pinned constraints per session"),
            ));
        }
        s.pinned.push(t.to_string());
        Ok(true)
    }

    /// Constraints pinned for `session`.
    pub fn pinned(&self, session: &str) -> &[String] {
        self.sessions.get(session).map_or(&[], |s| &s.pinned)
    }

    /// Marks the end of a task stage: the next compress call of `session`
    /// treats it as a stage boundary.
    pub fn finish_stage(&mut self, session: &str) {
        self.sessions
            .entry(session.to_string())
            .or_default()
            .boundary_pending = true;
    }

    /// The summarization prompt of the last compaction of `session`, while a
    /// host summarizer may still replace its summary.
    pub fn pending_prompt(&self, session: &str) -> Option<&str> {
        self.sessions
            .get(session)?
            .pending
            .as_ref()
            .map(|p| p.prompt.as_str())
    }
}
