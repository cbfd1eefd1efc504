//! When to compact: the token threshold (never closer to the budget than one
//! capped tool result), stage boundaries (a successful test or run after an
//! edit, or the host saying so) and hysteresis.

pub use crate::activity::StepActivity;
use std::collections::BTreeSet;

use crate::activity::{self, Outcome};
use crate::config::Config;
use crate::model::{Conversation, Role};

/// Every tool call of `conv` with its activity, in call order (the one
/// reader, [`activity::read`], with the tool names of `config.phase`).
pub fn step_activities(conv: &Conversation, config: &Config) -> Vec<StepActivity> {
    activity::read(conv, &config.phase)
}

/// Indices (into `steps`) of the steps that close a stage: a test or run that
/// passed after an edit (since the previous boundary) of a file that is not a
/// script the agent runs itself — editing `repro.py` and running it is not
/// progress; editing `lib.py` and then running `repro.py` cleanly is.
pub fn stage_boundaries(steps: &[StepActivity]) -> Vec<usize> {
    let base = |p: &str| p.rsplit('/').next().unwrap_or(p).to_string();
    let mut out = Vec::new();
    // Sets, so many distinct files cost no more than few.
    let mut pending: BTreeSet<String> = BTreeSet::new();
    let mut scripts: BTreeSet<String> = BTreeSet::new();
    for (i, step) in steps.iter().enumerate() {
        let a = &step.activity;
        if a.edited() {
            for e in &a.edited_paths() {
                let b = base(e);
                // A script already known would leave `pending` at the next check.
                if !b.is_empty() && !scripts.contains(&b) {
                    pending.insert(b);
                }
            }
        }
        let Some(check) = &a.check else { continue };
        // Files a check names are the agent's own scripts, not the work.
        for word in check
            .command
            .split(|c: char| c.is_whitespace() || c == ';' || c == '&')
        {
            let b = base(word);
            if b.contains('.') {
                pending.remove(&b);
                scripts.insert(b);
            }
        }
        if check.outcome == Outcome::Passed && !pending.is_empty() {
            out.push(i);
            pending.clear();
        }
    }
    out
}

/// The two token limits of the threshold trigger.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Thresholds {
    /// Compaction is considered above this many tokens.
    pub threshold: u64,
    /// Above this, the next capped tool result could overflow the budget:
    /// hysteresis and the planner are overridden.
    pub forced: u64,
}

impl Thresholds {
    /// Thresholds for `config`: threshold = min(`compact.threshold`, budget − cap),
    /// forced = budget − cap.
    pub fn of(config: &Config) -> Self {
        let forced = config.budget.saturating_sub(config.result_cap());
        Self {
            threshold: config.compact.threshold.min(forced),
            forced,
        }
    }
}

/// Assistant turns after message `after` (the turns since the last summary).
pub fn turns_after(conv: &Conversation, after: usize) -> usize {
    conv.messages
        .iter()
        .skip(after + 1)
        .filter(|m| m.role == Role::Assistant)
        .count()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::activity::{Action, Activity, Check, CheckKind, EditAction, EditKind, EditMode};
    use crate::model::PartRef;

    fn step(edits: &[&str], check: Option<(&str, Outcome)>) -> StepActivity {
        let at = PartRef {
            message: 0,
            part: 0,
        };
        StepActivity {
            index: 0,
            call_at: at,
            result_at: None,
            call_message: 0,
            result_message: None,
            changes_existing: false,
            activity: Activity {
                edits: edits
                    .iter()
                    .map(|s| EditAction {
                        kind: EditKind::SedInPlace,
                        mode: EditMode::InPlace,
                        target: Some(s.to_string()),
                    })
                    .collect(),
                failed: None,
                check: check.map(|(c, o)| Check {
                    kind: CheckKind::Test,
                    command: c.into(),
                    outcome: o,
                }),
                action: Action::Other,
                command: String::new(),
                rerun_key: String::new(),
                exit_code: None,
                viewed: Vec::new(),
            },
        }
    }

    #[test]
    fn boundary_needs_an_edit_then_a_passing_check() {
        let steps = vec![
            step(&[], Some(("pytest", Outcome::Passed))),
            step(&["repro.py"], Some(("python repro.py", Outcome::Passed))),
            step(&["src/lib.py"], None),
            step(&[], Some(("python repro.py", Outcome::Failed))),
            step(&[], Some(("python repro.py", Outcome::Passed))),
            step(&[], Some(("pytest", Outcome::Passed))),
            step(&["src/lib.py"], None),
            step(&[], Some(("pytest", Outcome::Passed))),
            // A script run earlier is scratch: editing it again is no progress.
            step(&["repro.py"], None),
            step(&[], Some(("pytest tests", Outcome::Passed))),
        ];
        assert_eq!(stage_boundaries(&steps), vec![4, 7]);
    }

    #[test]
    fn limits_keep_one_cap_from_the_budget() {
        // Defaults: the cap is 2,560 tokens, so the threshold (100,000) binds.
        let c = Config::default();
        assert_eq!(
            Thresholds::of(&c),
            Thresholds {
                threshold: 100_000,
                forced: 125_440
            }
        );
        // A cap of 25% of the budget: one capped result from it.
        let mut c = Config::default();
        c.spill.fraction = 0.25;
        assert_eq!(
            Thresholds::of(&c),
            Thresholds {
                threshold: 96_000,
                forced: 96_000
            }
        );
        let c = Config {
            budget: 200_000,
            ..Config::default()
        };
        assert_eq!(
            Thresholds::of(&c),
            Thresholds {
                threshold: 100_000,
                forced: 196_000
            }
        );
    }
}
