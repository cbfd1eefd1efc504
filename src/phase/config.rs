//! The phase stage checks its own options section (`phase`); [`Config`]
//! calls it through [`Section`].

use crate::config::{ClearReason, Config, PhaseConfig, Section};
use crate::error::{invalid_option, Result};

impl Section for PhaseConfig {
    /// Checks the `phase` section; errors name the offending field.
    fn validate(&self, _config: &Config) -> Result<()> {
        let malformed = |names: &[String]| {
            names
                .iter()
                .any(|t| t.is_empty() || t.starts_with(':') || t.ends_with(':'))
        };
        if malformed(&self.edit_tools) {
            return invalid_option(
                "phase.editTools",
                "tool names must be non-empty (`name` or `name:command`)",
            );
        }
        if let Some(unknown) = self
            .clear
            .iter()
            .find(|c| !ClearReason::ALL.iter().any(|r| r.as_str() == c.as_str()))
        {
            return invalid_option(
                "phase.clear",
                &format!("unknown entry {unknown:?} (searches, listings, reruns, editedViews)"),
            );
        }
        if malformed(&self.shell_tools) {
            return invalid_option("phase.shellTools", "tool names must be non-empty");
        }
        Ok(())
    }
}
