//! The planner (layer 3): stages propose, the planner commits what pays. It
//! imports no stage: the pipeline hands it the optical stage's proposals
//! ([`demotion::Propose`]) and hands the compact stage its price
//! ([`compaction::candidate`] as a [`crate::stage::PriceCompaction`]).
//!
//! Every rewrite of an earlier message (a snapshot, a dedup edit, a
//! tombstone, a summary) re-sends everything after it uncached (and, for
//! Anthropic, writes it to the cache at 1.25×). A stage knows how to make an
//! observation smaller; the planner decides whether doing it *now* pays:
//!
//! * [`demotion`]: when observations that left the recent window are handed
//!   to the rewriting stages (dedup, phase, optical). The boundary moves in
//!   steps of at least `optical.batch` observations, and only when the tokens
//!   the optical stage proposes to save, read from the cache over the
//!   horizon, pay for the prefix the move rewrites — or when the request is
//!   over the compaction threshold. Deferred moves accumulate into larger,
//!   cheaper ones.
//! * [`compaction`]: whether compacting now costs less over the horizon
//!   than waiting.
//!
//! Prices come from a dated per-provider table ([`prices`]); the horizon
//! (turns still to come) defaults to the turns so far (a session that has
//! run for `t` turns is expected to run about `t` more), clamped to
//! `plan.minHorizon..=plan.maxHorizon` (10..=15: a rewrite must pay back
//! within 15 turns). Every decision is a pure function
//! of the history and the settings, so a stateless host that sees the whole
//! history each turn and the stateful [`crate::TraceLite`] emit the same bytes.

pub mod compaction;
mod config;
pub mod demotion;
pub mod prices;

use serde::Serialize;

pub use crate::config::PlanConfig;
use crate::config::Prices;
pub use crate::stage::{Candidate, CandidateKind, Schedule};

impl PlanConfig {
    /// Turns expected after a request that is the `turn`-th (1-based).
    pub fn horizon(&self, turn: usize) -> usize {
        if self.horizon > 0 {
            return self.horizon;
        }
        turn.clamp(self.min_horizon, self.max_horizon.max(self.min_horizon))
    }
}

/// The planner's decisions on this call.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PlanReport {
    /// Prices used.
    pub prices: Prices,
    /// Where they come from.
    pub prices_source: String,
    /// Observations handed to the rewriting stages so far.
    pub demoted: usize,
    /// Every candidate weighed on this turn.
    pub candidates: Vec<Candidate>,
}
