//! The planner: stages propose, the planner commits what pays.
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
pub mod demotion;
pub mod prices;

use serde::{Deserialize, Serialize};

use crate::config::Prices;
use crate::error::Result;
pub use crate::stage::{Candidate, CandidateKind, Schedule};

/// Planner settings (`plan` in the options).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields, rename_all = "camelCase")]
pub struct PlanConfig {
    /// Price-aware demotion: move the boundary of the rewritten history only
    /// when it pays. Off: in fixed batches of `optical.batch` observations.
    pub enabled: bool,
    /// Turns still to come; 0 derives it from the turns so far.
    pub horizon: usize,
    /// Smallest derived horizon.
    pub min_horizon: usize,
    /// Largest derived horizon (default 15): a rewrite must pay back within
    /// 15 turns. The turns so far overestimate what is left of a task that
    /// is nearly done, and a rewrite's cost is certain while its saving is
    /// not; `make bench` measured caps of 10, 15, 20, 30 and 200 (README).
    pub max_horizon: usize,
    /// Prices (USD per million input tokens); the dated table of
    /// [`prices::default_prices`] for the provider when absent.
    pub prices: Option<Prices>,
}

impl Default for PlanConfig {
    fn default() -> Self {
        Self {
            enabled: true,
            horizon: 0,
            min_horizon: 10,
            max_horizon: 15,
            prices: None,
        }
    }
}

impl PlanConfig {
    /// Checks the section; errors name the offending field.
    pub fn validate(&self) -> Result<()> {
        let bad = crate::error::invalid_option::<()>;
        if self.horizon > 10_000 {
            return bad("plan.horizon", "must be at most 10000 (0 derives it)");
        }
        if self.min_horizon == 0 || self.min_horizon > self.max_horizon {
            return bad(
                "plan.minHorizon",
                "must be at least 1 and at most plan.maxHorizon",
            );
        }
        if self.max_horizon > 10_000 {
            return bad("plan.maxHorizon", "must be at most 10000");
        }
        if let Some(p) = &self.prices {
            let ok = |x: f64| x.is_finite() && x >= 0.0;
            if !(ok(p.input) && ok(p.cached_input) && ok(p.cache_write)) {
                return bad("plan.prices", "prices must be non-negative numbers");
            }
        }
        Ok(())
    }

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
