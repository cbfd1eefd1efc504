//! The planner checks its own options section (`plan`); [`Config`] calls
//! it through [`Section`].

use crate::config::{Config, PlanConfig, Section};
use crate::error::{invalid_option, Result};

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
