//! Stage 3, edit-triggered clean-up.
//!
//! An agent first diagnoses (lists, searches, reads files, runs the failing
//! case), then changes code. The phase begins at the first change to a file
//! that existed before the session ([`crate::activity::read`]): creating a
//! reproduction script, or editing a file the agent created, is still
//! diagnosis. Then outputs of the diagnosis that were *consumed or
//! superseded* become tombstones that keep the tool call, say what was
//! removed (lines, tokens), repeat the critical lines (errors, failing tests,
//! a non-zero exit code) and give the `spill://` pointer to the original:
//!
//! * searches and listings that led to the change (`phase.clear` `searches`,
//!   `listings`);
//! * outputs of commands the agent ran again (`reruns`);
//! * views of a file that was edited since (`editedViews`).
//!
//! Outputs of the tools `excludeTools` names are never cleared.
//! Everything else (views of files still unchanged, test and script runs,
//! results of edits) stays, for the optical stage to render when an image is
//! cheaper. Nothing inside the recent window is touched, and decisions read
//! only the settled history (calls whose results left the window, which
//! happens in the optical stage's batches). By default the clean-up happens
//! once, on the history as it stood when the change that began the phase left
//! the window: the prompt prefix breaks at that batch and never again (every
//! later rewrite of old history re-sends everything after it). With
//! `phase.everyPhase`, later re-runs and outputs a later change consumed are
//! cleared too, at each batch.
//!
//! The clean-up is a pure function of the history.

pub use crate::activity::{failed, shell, EditAction, EditDetector, EditKind};

use std::collections::{HashMap, HashSet};

use crate::activity::{self, check, Action, StepActivity};
pub use crate::config::ClearReason as Reason;
use crate::config::PhaseConfig;
use crate::error::Result;
use crate::model::{Conversation, Part, PartKind, PartRef, ToolResult};
use crate::stage::{Stage, StageContext, StageName};

/// Opening of every tombstone (also how the stage recognises its own output).
pub const TOMBSTONE_OPENING: &str = "[output cleared at step ";

/// The phase stage.
#[derive(Debug, Default)]
pub struct Phase;

/// An edit action found in a conversation.
#[derive(Debug, Clone, PartialEq)]
pub struct EditStep {
    /// 1-based position of the call among the conversation's tool calls.
    pub step: usize,
    /// Where the call is.
    pub call_at: PartRef,
    /// What the call does.
    pub action: EditAction,
    /// Whether its result shows that it failed (`None`: no result yet).
    pub failed: Option<bool>,
    /// Whether the call changed a file that existed before the session.
    pub changes_existing: bool,
}

impl EditStep {
    /// Whether this edit starts a phase under `config`: a change to a file
    /// that existed before the session, whose result is present and, with
    /// `skipFailed`, not a failure, outside `ignoreTargets`.
    pub fn counts(&self, config: &PhaseConfig) -> bool {
        let ok = match self.failed {
            Some(failed) => !(config.skip_failed && failed),
            None => !config.skip_failed,
        };
        ok && self.changes_existing
            && !self
                .action
                .target
                .as_deref()
                .is_some_and(|t| scratch(t, &config.ignore_targets))
    }
}

/// Whether a path component of `target` matches one of the `*` globs.
fn scratch(target: &str, globs: &[String]) -> bool {
    globs.iter().any(|g| {
        let g = g.trim_matches('/');
        target
            .split('/')
            .filter(|c| !c.is_empty())
            .any(|component| crate::text::glob(g, component))
    })
}

/// Every edit action of `conv`, in call order (one per call: its first write).
pub fn find_edits(conv: &Conversation, config: &PhaseConfig) -> Vec<EditStep> {
    edit_steps(&activity::read(conv, config))
}

/// The edit actions among `steps` (one per call: its first write).
fn edit_steps(steps: &[StepActivity]) -> Vec<EditStep> {
    steps
        .iter()
        .filter_map(|s| {
            let action = s.activity.edits.first()?.clone();
            Some(EditStep {
                step: s.index + 1,
                call_at: s.call_at,
                action,
                failed: s.activity.failed,
                changes_existing: s.changes_existing,
            })
        })
        .collect()
}

/// The outputs to clear: `(step index, reason, step number that made it
/// obsolete: the later run of the command, else the change that began the
/// phase)` for every result that left
/// the recent window (`demoted` observations) and was superseded (the same
/// command ran again later: at any time) or, once the phase began at step
/// index `boundary`, consumed by the change (searches and listings before
/// it, views of a file edited since; with `everyPhase`, also those after it
/// that a later change consumed).
pub fn outputs_to_clear(
    steps: &[StepActivity],
    boundary: Option<usize>,
    demoted: &[PartRef],
    config: &PhaseConfig,
) -> Vec<(usize, Reason, usize)> {
    let wants = |r: Reason| config.clear.iter().any(|c| c == r.as_str());
    let demoted: HashSet<PartRef> = demoted.iter().copied().collect();
    let next_run = next_runs(steps);
    let edits = activity::LastEdits::of(steps);
    // The last change to existing code: what came before it was consumed.
    let last_change = steps
        .iter()
        .rev()
        .find(|l| l.changes_existing && l.activity.edited())
        .map(|l| l.index);
    let mut out = Vec::new();
    for (i, s) in steps.iter().enumerate() {
        let Some(at) = s.result_at else { continue };
        if !demoted.contains(&at) || !s.activity.edits.is_empty() {
            continue;
        }
        let a = &s.activity;
        if let Some(next) = next_run.get(i).copied().flatten() {
            if wants(Reason::Rerun) {
                out.push((s.index, Reason::Rerun, next + 1));
                continue;
            }
        }
        let Some(boundary) = boundary else { continue };
        let before = s.index < boundary;
        if !before && !config.every_phase {
            continue;
        }
        let consumed = before || last_change.is_some_and(|c| c > s.index);
        if !consumed {
            continue;
        }
        let edited_view = edits.all_edited_after(&a.viewed, i);
        let reason = if edited_view && wants(Reason::EditedView) {
            Some(Reason::EditedView)
        } else if a.action == Action::Search && wants(Reason::Search) {
            Some(Reason::Search)
        } else if a.action == Action::Listing && wants(Reason::Listing) {
            Some(Reason::Listing)
        } else {
            None
        };
        if let Some(r) = reason {
            out.push((s.index, r, boundary + 1));
        }
    }
    out
}

/// For each step, the index of the next step that ran the same command
/// (`rerun_key`), if one did: one pass from the end.
fn next_runs(steps: &[StepActivity]) -> Vec<Option<usize>> {
    let mut seen: HashMap<&str, usize> = HashMap::new();
    let mut out = vec![None; steps.len()];
    for (i, s) in steps.iter().enumerate().rev() {
        let key = s.activity.rerun_key.as_str();
        if key.is_empty() {
            continue;
        }
        if let Some(slot) = out.get_mut(i) {
            *slot = seen.get(key).copied();
        }
        seen.insert(key, i);
    }
    out
}

/// The text replacing a cleared result: what was removed, where to read it,
/// and the critical lines of the original (errors, failing tests, a non-zero
/// exit code), which must stay visible as text.
pub fn tombstone(
    edit_step: usize,
    lines: usize,
    tokens: u64,
    pointer: &str,
    critical: &[String],
) -> String {
    let mut out = format!(
        "{TOMBSTONE_OPENING}{edit_step}: {lines} line{} ({tokens} tokens) of earlier output removed; full text: {pointer}]",
        if lines == 1 { "" } else { "s" }
    );
    if !critical.is_empty() {
        out.push_str("\nit reported:");
        for line in critical {
            out.push_str("\n  ");
            out.push_str(line);
        }
    }
    out
}

impl Stage for Phase {
    type State = ();

    fn name(&self) -> StageName {
        StageName::Phase
    }

    fn enabled(&self, cx: &StageContext<'_>) -> bool {
        cx.config.phase.enabled
    }

    fn scheduled(&self) -> bool {
        true
    }

    fn apply(&self, conv: &mut Conversation, cx: &mut StageContext<'_>) -> Result<()> {
        let settings: &crate::config::Config = cx.config;
        let config = &settings.phase;
        let observations = conv.observations();
        let schedule = cx.schedule(observations.len());
        let due = schedule.demoted().min(observations.len());
        let demoted = observations.get(..due).unwrap_or(&[]);
        // Decide on the settled history only (the calls whose results have
        // left the recent window), so the decision, and the prompt prefix,
        // changes only when a batch leaves the window.
        let mut steps = activity::read_cached(conv, config, cx.activities);
        // A set: a slice search per step would make many steps quadratic.
        let left: HashSet<PartRef> = demoted.iter().copied().collect();
        let settled = steps
            .iter()
            .take_while(|s| s.result_at.is_some_and(|r| left.contains(&r)))
            .count();
        steps.truncate(settled);
        let edits = edit_steps(&steps);
        let first = edits.iter().find(|e| e.counts(config));
        if first.is_none() && !edits.is_empty() {
            let own = edits.iter().filter(|e| !e.changes_existing).count();
            cx.notes.push(format!(
                "{} edit{}, none to a file that existed before the session ({own} to the agent's own files): still diagnosis",
                edits.len(),
                if edits.len() == 1 { "" } else { "s" },
            ));
        }
        if !config.every_phase {
            // Once: decide on the history as it was settled when the change
            // that began the phase left the window, so the prefix breaks at
            // that batch and never again.
            let Some(first) = first else {
                return Ok(());
            };
            let at = steps
                .get(first.step - 1)
                .and_then(|s| s.result_at)
                .and_then(|r| observations.iter().position(|o| *o == r))
                .unwrap_or(0);
            let horizon = schedule.first_covering(at).min(due);
            let known: HashSet<PartRef> = observations
                .get(..horizon)
                .unwrap_or(&[])
                .iter()
                .copied()
                .collect();
            let keep = steps
                .iter()
                .take_while(|s| s.result_at.is_some_and(|r| known.contains(&r)))
                .count();
            steps.truncate(keep);
        }
        let to_clear = outputs_to_clear(&steps, first.map(|e| e.step - 1), demoted, config);
        // Outputs of excluded tools stay (they still count as runs and views).
        let excluded = crate::stage::excluded_results(conv, settings);
        let mut cleared = 0usize;
        let mut by_reason = [0usize; 4];
        for &(index, reason, by) in &to_clear {
            let Some(at) = steps.get(index).and_then(|s| s.result_at) else {
                continue;
            };
            if excluded.contains(&at) {
                continue;
            }
            if clear(conv, cx, at, by, reason)? {
                cleared += 1;
                if let Some(n) = Reason::ALL
                    .iter()
                    .position(|r| *r == reason)
                    .and_then(|slot| by_reason.get_mut(slot))
                {
                    *n += 1;
                }
            }
        }
        let detail: Vec<String> = Reason::ALL
            .iter()
            .zip(by_reason)
            .filter(|(_, n)| *n > 0)
            .map(|(r, n)| format!("{n} {}", r.as_str()))
            .collect();
        let begins = match first {
            Some(first) => format!(
                "phase begins at step {} ({}{})",
                first.step,
                first.action.kind.as_str(),
                first
                    .action
                    .target
                    .as_deref()
                    .map(|t| format!(" {t}"))
                    .unwrap_or_default()
            ),
            None => "no phase yet".to_string(),
        };
        if first.is_some() || cleared > 0 {
            cx.notes.push(format!(
                "{} edit{}; {begins}; {cleared} result{} cleared{}{}",
                edits.len(),
                if edits.len() == 1 { "" } else { "s" },
                if cleared == 1 { "" } else { "s" },
                if detail.is_empty() { "" } else { ": " },
                detail.join(", "),
            ));
        }
        Ok(())
    }
}

/// Replaces the result at `at` with a tombstone when that saves tokens.
fn clear(
    conv: &mut Conversation,
    cx: &mut StageContext<'_>,
    at: PartRef,
    edit_step: usize,
    reason: Reason,
) -> Result<bool> {
    let Some(result) = conv.tool_result(at) else {
        return Ok(false);
    };
    if result.parts.iter().any(|p| p.as_text().is_none()) {
        // Images and other parts have no text to keep; leave them to later stages.
        return Ok(false);
    }
    let text = result.text();
    if text.starts_with(TOMBSTONE_OPENING) {
        return Ok(false);
    }
    let before = cx
        .meter
        .part(&Part::from(PartKind::ToolResult(result.clone())))?;
    let lines = text.lines().count();
    let predicted = cx.config.pointer(&cx.content_key("phase", &text));
    let found = cx.activities.critical_lines(&text, check::CRITICAL_BYTES);
    let critical: Vec<String> = found
        .lines
        .iter()
        .map(|l| cx.redact(l).into_owned())
        .chain(found.omitted_note())
        .collect();
    let priced = tombstone(edit_step, lines, before, &predicted, &critical);
    let after = cx.meter.text(&priced)?;
    if after >= before {
        return Ok(false);
    }
    let pointer = match cx.keep("phase", &text) {
        Ok(p) => p,
        Err(e) => {
            cx.notes
                .push(format!("message {}: kept verbatim ({e})", at.message));
            return Ok(false);
        }
    };
    let stone = tombstone(edit_step, lines, before, &pointer, &critical);
    let after = cx.meter.text(&stone)?;
    let cleared = ToolResult {
        call_id: result.call_id.clone(),
        parts: vec![Part::text(stone)],
        is_error: result.is_error,
    };
    if let Some(slot) = conv.tool_result_mut(at) {
        *slot = cleared;
    }
    cx.record(
        at.message,
        "tombstone",
        before,
        after,
        Some(pointer),
        format!(
            "{lines} lines, {} (step {edit_step})",
            match reason {
                Reason::Search => "a search consumed",
                Reason::Listing => "a listing consumed",
                Reason::Rerun => "superseded by a later run of the same command",
                Reason::EditedView => "a view of a file edited since",
            }
        ),
    );
    Ok(true)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn globs_match_path_components() {
        let g = |p: &str| vec![p.to_string()];
        assert!(scratch("reproduce_issue.py", &g("reproduce*")));
        assert!(scratch(
            "/workspace/reproduce_issue/file.py",
            &g("reproduc*")
        ));
        assert!(scratch("/tmp/x.py", &g("/tmp")));
        assert!(scratch("a/test_x.py", &g("test_*.py")));
        assert!(!scratch("src/app.py", &g("reproduce*")));
        assert!(!scratch("a/xtest_x.py", &g("test_*.py")));
        assert!(
            crate::text::glob("*", "anything")
                && crate::text::glob("a*b*c", "aXbYc")
                && !crate::text::glob("a*b", "ab c")
        );
    }
}
