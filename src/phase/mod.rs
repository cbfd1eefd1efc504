//! Stage 3, edit-triggered clean-up.
//!
//! An agent first diagnoses (reads files, greps, runs the failing test), then
//! edits. Once it edits, the diagnosis output has done its job: at the first
//! edit action, every tool result before it becomes a tombstone that keeps the
//! tool call, says what was removed (lines, tokens) and gives the `spill://`
//! pointer to the original. With `phase.everyPhase`, each later edit also
//! clears the diagnosis output gathered since the previous one (results of
//! edits themselves stay).
//!
//! Edits are recognised by [`EditDetector`]: named edit tools
//! (`phase.editTools`, e.g. `str_replace_editor:str_replace`) and shell
//! commands that write files (`phase.shellTools`; see [`shell`]). An edit
//! whose result shows it failed does not count (`phase.skipFailed`).
//!
//! The clean-up is a pure function of the history: the prompt prefix breaks
//! once, at the turn of the edit, and stays byte-identical afterwards.

pub mod edit;
pub mod shell;

pub use edit::{failed, EditAction, EditDetector, EditKind};

use crate::config::PhaseConfig;
use crate::error::Result;
use crate::model::{Conversation, Part, PartKind, PartRef, ToolResult};
use crate::pipeline::{Stage, StageContext, StageName};
use crate::spill;

/// Opening of every tombstone (also how the stage recognises its own output).
pub const TOMBSTONE_OPENING: &str = "[output cleared at the edit in step ";

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
}

impl EditStep {
    /// Whether this edit starts a phase under `config` (a result that is
    /// present and, with `skipFailed`, not a failure).
    pub fn counts(&self, config: &PhaseConfig) -> bool {
        let ok = match self.failed {
            Some(failed) => !(config.skip_failed && failed),
            None => !config.skip_failed,
        };
        ok && !self
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
            .any(|component| glob(g, component))
    })
}

/// `*`-only glob match.
fn glob(pattern: &str, text: &str) -> bool {
    let mut parts = pattern.split('*');
    let first = parts.next().unwrap_or("");
    let Some(mut rest) = text.strip_prefix(first) else {
        return false;
    };
    let tail: Vec<&str> = parts.collect();
    let Some((last, middle)) = tail.split_last() else {
        return rest.is_empty();
    };
    for part in middle {
        match rest.find(part) {
            Some(i) => rest = rest.get(i + part.len()..).unwrap_or(""),
            None => return false,
        }
    }
    rest.ends_with(last)
}

/// Every edit action of `conv`, in call order.
pub fn find_edits(conv: &Conversation, config: &PhaseConfig) -> Vec<EditStep> {
    let detector = EditDetector::new(config);
    conv.steps()
        .iter()
        .enumerate()
        .filter_map(|(i, s)| {
            detector.classify(s.call).map(|action| EditStep {
                step: i + 1,
                call_at: s.call_at,
                action,
                failed: s.result.map(failed),
            })
        })
        .collect()
}

/// The text replacing a cleared result.
pub fn tombstone(edit_step: usize, lines: usize, tokens: u64, pointer: &str) -> String {
    format!(
        "{TOMBSTONE_OPENING}{edit_step}: {lines} line{} ({tokens} tokens) of earlier output removed; full text: {pointer}]",
        if lines == 1 { "" } else { "s" }
    )
}

impl Stage for Phase {
    fn name(&self) -> StageName {
        StageName::Phase
    }

    fn enabled(&self, cx: &StageContext<'_>) -> bool {
        cx.config.phase.enabled
    }

    fn apply(&self, conv: &mut Conversation, cx: &mut StageContext<'_>) -> Result<()> {
        let settings: &crate::config::Config = cx.config;
        let config = &settings.phase;
        let edits: Vec<EditStep> = find_edits(conv, config)
            .into_iter()
            .filter(|e| e.counts(config))
            .collect();
        let boundary = if config.every_phase {
            edits.last()
        } else {
            edits.first()
        };
        let Some(boundary) = boundary else {
            return Ok(());
        };
        let edit_calls: Vec<PartRef> = edits.iter().map(|e| e.call_at).collect();
        let targets: Vec<PartRef> = conv
            .steps()
            .iter()
            .filter(|s| s.call_at < boundary.call_at && !edit_calls.contains(&s.call_at))
            .filter_map(|s| s.result_at)
            .collect();
        let mut cleared = 0usize;
        for at in targets {
            if clear(conv, cx, at, boundary.step)? {
                cleared += 1;
            }
        }
        let first = edits.first().unwrap_or(boundary);
        cx.notes.push(format!(
            "{} edit{}; first at step {} ({}{}); {cleared} result{} cleared",
            edits.len(),
            if edits.len() == 1 { "" } else { "s" },
            first.step,
            first.action.kind.as_str(),
            first
                .action
                .target
                .as_deref()
                .map(|t| format!(" {t}"))
                .unwrap_or_default(),
            if cleared == 1 { "" } else { "s" },
        ));
        Ok(())
    }
}

/// Replaces the result at `at` with a tombstone when that saves tokens.
fn clear(
    conv: &mut Conversation,
    cx: &mut StageContext<'_>,
    at: PartRef,
    edit_step: usize,
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
    let predicted = spill::pointer(&cx.config.session, &spill::content_key("phase", &text));
    let priced = tombstone(edit_step, lines, before, &predicted);
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
    let stone = tombstone(edit_step, lines, before, &pointer);
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
        format!("{lines} lines before the edit in step {edit_step}"),
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
        assert!(glob("*", "anything") && glob("a*b*c", "aXbYc") && !glob("a*b", "ab c"));
    }
}
