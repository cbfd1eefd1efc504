//! The planner's section (`plan`): its settings (with the token prices),
//! their defaults, and the check a parsed section must pass.

use serde::{Deserialize, Serialize};

use super::{Config, Section};
use crate::error::{invalid_option, Result};

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
    /// [`crate::plan::prices::default_prices`] for the provider when absent.
    pub prices: Option<Prices>,
    /// Weigh each demotion's expected cost of getting back what it hides
    /// (`crate::plan::recovery`): it commits only when its saving minus that
    /// cost pays for the rewrite. Off: the cost is reported, not weighed.
    pub recovery: bool,
    /// The same for a compaction the planner prices (not a forced one): it
    /// waits while its saving over the horizon does not exceed the recovery
    /// it adds (until the budget would force it). On: with
    /// `compact.liveViews` 2,000 it lowers effective $ for every provider
    /// and hides fewer facts (`bench/FIDELITY-TUNING.md`).
    pub compaction_recovery: bool,
}

impl Default for PlanConfig {
    fn default() -> Self {
        Self {
            enabled: true,
            horizon: 0,
            min_horizon: 10,
            max_horizon: 15,
            prices: None,
            recovery: false,
            compaction_recovery: true,
        }
    }
}

/// Token prices in US dollars per million tokens.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct Prices {
    /// Uncached input.
    pub input: f64,
    /// Input read from the prompt cache.
    pub cached_input: f64,
    /// Input written to the prompt cache (what a cache miss costs where
    /// writes are billed separately; equal to `input` elsewhere).
    pub cache_write: f64,
}

impl Section for PlanConfig {
    /// Checks the `plan` section; errors name the offending field.
    fn validate(&self, _config: &Config) -> Result<()> {
        if self.horizon > 10_000 {
            return invalid_option("plan.horizon", "must be at most 10000 (0 derives it)");
        }
        if self.min_horizon == 0 || self.min_horizon > self.max_horizon {
            return invalid_option(
                "plan.minHorizon",
                "must be at least 1 and at most plan.maxHorizon",
            );
        }
        if self.max_horizon > 10_000 {
            return invalid_option("plan.maxHorizon", "must be at most 10000");
        }
        if let Some(p) = &self.prices {
            let ok = |x: f64| x.is_finite() && x >= 0.0;
            if !(ok(p.input) && ok(p.cached_input) && ok(p.cache_write)) {
                return invalid_option("plan.prices", "must be non-negative numbers");
            }
        }
        Ok(())
    }
}
