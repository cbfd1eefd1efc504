//! Salience at arrival (`spill.salience`): which lines of a tool output the
//! spill stage keeps when the output arrives, and which it folds behind its
//! pointer (`src/spill/salience.rs`).

use serde::{Deserialize, Serialize};

use crate::error::{invalid_option, Result};

/// Salience settings: every output of at least `minLines` lines is judged
/// line by line when it arrives; runs of at least `minRun` lines nothing
/// marks as likely used are folded behind one marker each, the full output
/// is kept in the spill store.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields, rename_all = "camelCase")]
pub struct SalienceConfig {
    /// Switch (off by default: see `bench/SALIENCE.md` for the frontier).
    pub enabled: bool,
    /// Outputs with fewer lines stay whole.
    pub min_lines: usize,
    /// Lines kept on either side of a salient line.
    pub context: usize,
    /// Lines always kept at the start and at the end of an output.
    pub ends: usize,
    /// Shortest run of unmarked lines that is folded (a marker costs about
    /// as much as two short lines).
    pub min_run: usize,
    /// How many steps before an output give names (their calls' arguments
    /// and the assistant's text), besides the task and the producing call.
    pub recent_steps: usize,
    /// A name on more than this share of an output's lines (and more than
    /// 3) marks none of them: the project's name in every path tells no
    /// line apart.
    pub max_name_share: f64,
    /// Outputs of calls that show a file (`cat`, `sed -n`, an editor
    /// `view`) stay whole: an edit quotes their lines.
    pub keep_views: bool,
}

impl Default for SalienceConfig {
    fn default() -> Self {
        Self {
            enabled: false,
            min_lines: 40,
            context: 1,
            ends: 2,
            min_run: 4,
            recent_steps: 3,
            max_name_share: 0.2,
            keep_views: true,
        }
    }
}

impl SalienceConfig {
    /// Checks `spill.salience`: each count within a range that keeps a fold
    /// worth its marker; errors name the offending field.
    pub fn validate(&self) -> Result<()> {
        let ranges = [
            ("spill.salience.minLines", self.min_lines, 1, 100_000),
            ("spill.salience.context", self.context, 0, 50),
            ("spill.salience.ends", self.ends, 0, 1_000),
            ("spill.salience.minRun", self.min_run, 2, 100_000),
            ("spill.salience.recentSteps", self.recent_steps, 0, 1_000),
        ];
        if !(self.max_name_share > 0.0 && self.max_name_share <= 1.0) {
            return invalid_option("spill.salience.maxNameShare", "must be in (0, 1]");
        }
        for (field, value, low, high) in ranges {
            if !(low..=high).contains(&value) {
                return invalid_option(field, &format!("must be in [{low}, {high}], got {value}"));
            }
        }
        Ok(())
    }
}
