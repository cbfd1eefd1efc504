//! The planner's own types: the [`Candidate`]s it weighs (the report's
//! `plan.candidates`), its [`Decision`] on a proposal, and what it reads
//! besides ([`Planning`]). What a stage returns to it
//! ([`Proposal`](crate::stage::Proposal)) and
//! reads from it ([`Schedule`], [`Verdict`]) is the stage contract's.

use serde::Serialize;

use crate::config::Config;
use crate::stage::{Schedule, StageContext, Verdict};
use crate::tokens::Meter;

/// What a candidate rewrite is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum CandidateKind {
    /// Observations handed to the rewriting stages (dedup, phase, optical).
    Demotion,
    /// Older history replaced by a summary.
    Compaction,
}

/// One rewrite the planner weighed on this turn.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Candidate {
    /// What it rewrites.
    pub kind: CandidateKind,
    /// Demotion: the observations (oldest first, `[from, to)`) it hands over.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub observations: Option<[usize; 2]>,
    /// Tokens each later request is smaller by (estimate).
    pub tokens_saved: u64,
    /// Tokens of the cached prefix it sends again.
    pub tokens_rewritten: u64,
    /// Dollars it adds to this request (negative: it is cheaper already).
    pub cost_now: f64,
    /// Dollars it saves over the horizon.
    pub saving: f64,
    /// Turns the saving is counted over.
    pub horizon: usize,
    /// Observations it takes out of the text.
    pub hidden: usize,
    /// Facts those hold that no message of the user or the agent held
    /// ([`crate::activity::recall`]).
    pub hidden_facts: usize,
    /// Probability that the agent needs one of them again within the
    /// horizon (`crate::activity::recall::Recall::likelihood`).
    pub recovery_probability: f64,
    /// Expected dollars of the turns spent getting them back: per hidden
    /// observation, its probability times one more request of the whole
    /// context (cached) reading it back (uncached).
    pub expected_recovery: f64,
    /// Committed on this turn (else deferred).
    pub committed: bool,
    /// Why.
    pub reason: String,
}

/// The planner's answer to a [`Proposal`](crate::stage::Proposal).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Decision {
    /// A demotion: the boundaries committed so far.
    pub schedule: Option<Schedule>,
    /// The candidate weighed on this request, committed or deferred (none
    /// when nothing was priced).
    pub candidate: Option<Candidate>,
}

impl Decision {
    /// Whether the proposal goes ahead now: what the planner committed, or
    /// anything it did not price.
    pub fn committed(&self) -> bool {
        self.candidate.as_ref().map_or(true, |c| c.committed)
    }

    /// The decision as the proposing stage reads it.
    pub fn verdict(&self) -> Verdict {
        Verdict {
            committed: self.committed(),
            reason: self.candidate.as_ref().map(|c| c.reason.clone()),
        }
    }
}

/// What the planner reads besides the proposal and the conversation (the
/// pipeline lends it from the stage context).
pub struct Planning<'p> {
    /// Settings (prices, horizon, budget, batch).
    pub config: &'p Config,
    /// Token meter.
    pub meter: &'p Meter<'p>,
    /// Tokens of each message, system prompt first, as the stages left them
    /// (empty, or stale after a compaction: then the planner counts).
    pub message_tokens: &'p [u64],
}

impl<'p> Planning<'p> {
    /// What the planner reads of the context a stage ran in.
    pub fn of<S>(cx: &'p StageContext<'_, S>) -> Self {
        Planning {
            config: cx.config,
            meter: &cx.meter,
            message_tokens: &cx.message_tokens,
        }
    }
}
