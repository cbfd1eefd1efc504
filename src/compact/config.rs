//! The compact stage checks its own options section (`compact`); [`Config`]
//! calls it through [`Section`].

use crate::config::{CompactConfig, Config, Section};
use crate::error::{invalid_option, Error, ErrorCode, Result};

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
