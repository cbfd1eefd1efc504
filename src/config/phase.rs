//! The `phase` section (stage 3): its settings, their defaults, and the
//! check a parsed section must pass.

use serde::{Deserialize, Serialize};

use super::{Config, Section};
use crate::error::{invalid_option, Result};

/// Why the phase stage clears an output: the entries of `phase.clear`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ClearReason {
    /// A search that led to the change.
    Search,
    /// A listing that led to the change.
    Listing,
    /// The same command ran again later.
    Rerun,
    /// A view of a file edited since.
    EditedView,
}

impl ClearReason {
    /// The `phase.clear` name of the reason.
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::Search => "searches",
            Self::Listing => "listings",
            Self::Rerun => "reruns",
            Self::EditedView => "editedViews",
        }
    }

    /// Every reason, in `phase.clear` order.
    pub const ALL: [ClearReason; 4] = [Self::Search, Self::Listing, Self::Rerun, Self::EditedView];
}

/// Edit-triggered clean-up settings (stage 3).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields, rename_all = "camelCase")]
pub struct PhaseConfig {
    /// Stage switch.
    pub enabled: bool,
    /// Keep clearing after the phase began: outputs a later change consumed
    /// and outputs of commands run again, at each batch (the prompt prefix
    /// then breaks at every such batch). Off: the clean-up happens once.
    pub every_phase: bool,
    /// What the clean-up clears once the phase begins: `searches` and
    /// `listings` that led to the change, `reruns` (outputs of commands run
    /// again later), `editedViews` (views of a file edited since).
    /// TypeScript: `PhaseClear[]`.
    pub clear: Vec<String>,
    /// Tools whose calls are edits: `name` (every call) or `name:command`
    /// (only calls whose `command` argument is `command`, e.g.
    /// `str_replace_editor:create`).
    pub edit_tools: Vec<String>,
    /// Tools that run shell commands (argument `command` or `cmd`, a string or
    /// an argv array); their commands are scanned for file writes (`sed -i`,
    /// `cat > f`, heredocs, `tee`, `echo … > f`, `git apply`, `patch`, Python
    /// `open(…, 'w')`).
    pub shell_tools: Vec<String>,
    /// An edit whose result looks like a failure (`is_error`, "No replacement
    /// was performed", `sed: -e expression`, …) does not start a phase.
    pub skip_failed: bool,
    /// Edits whose target path has a component matching one of these globs
    /// (`*` wildcard, e.g. `reproduce*`, `/tmp`) do not start a phase:
    /// writing a scratch reproduction script is still diagnosis. Empty by
    /// default (every file write counts, as the design says).
    pub ignore_targets: Vec<String>,
}

impl Default for PhaseConfig {
    fn default() -> Self {
        Self {
            enabled: true,
            every_phase: false,
            clear: ["searches", "listings", "reruns", "editedViews"]
                .map(String::from)
                .to_vec(),
            edit_tools: [
                "str_replace_editor:create",
                "str_replace_editor:str_replace",
                "str_replace_editor:insert",
                "edit_file",
                "apply_patch",
                "write_file",
                "Edit",
                "MultiEdit",
                "Write",
            ]
            .map(String::from)
            .to_vec(),
            shell_tools: [
                "bash",
                "execute_bash",
                "shell",
                "run_shell_command",
                "run_terminal_cmd",
                "exec_command",
                "Bash",
            ]
            .map(String::from)
            .to_vec(),
            skip_failed: true,
            ignore_targets: Vec::new(),
        }
    }
}

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
