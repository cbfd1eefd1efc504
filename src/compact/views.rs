//! Live file views: after a compaction, the newest output of each file view,
//! search and edit of the compacted turns stays in the prompt as it was
//! shown (text, or a snapshot's images), unless a later turn runs it again
//! (for an edit, shows a newer edit result of the file). An edit quotes the
//! lines it replaces from such an output, so a summary alone would send the
//! agent back to re-read the file. Kept within `compact.liveViews` tokens,
//! newest first; each kept message names the call that produced it and
//! where its original is kept.

use super::extractive::Range;
use super::trigger::StepActivity;
use super::CompactState;
use crate::activity::Action;
use crate::error::Result;
use std::collections::HashSet;

use crate::model::{Conversation, Message, PartKind, PartRef, Role};
use crate::redact::Redactions;
use crate::stage::StageContext;

/// Opening of a kept view message.
pub const VIEW_HEADER: &str = "[TraceLite: kept from the compacted turns: ";

/// Whether `m` is a view message a compaction kept.
pub fn is_view(m: &Message) -> bool {
    m.role == Role::User
        && m.parts.first().is_some_and(
            |p| matches!(&p.kind, PartKind::Text { text } if text.starts_with(VIEW_HEADER)),
        )
}

/// The key of a kept view message: its header's text before the
/// original's pointer (what [`key`] gives for the step it came from).
fn key_of(m: &Message) -> Option<String> {
    let PartKind::Text { text } = &m.parts.first()?.kind else {
        return None;
    };
    let line = text.strip_prefix(VIEW_HEADER)?.lines().next()?;
    Some(line.get(..line.rfind("; original: ")?)?.to_string())
}

/// Shortest output (lines) that counts as showing a file: an edit's one-line
/// confirmation shows nothing of it.
const MIN_LINES: usize = 3;

/// What a step's output shows, if it shows code the agent may quote, as
/// the key later outputs supersede it by: a view of one file or a search
/// (`` the output of `command` ``: running it again supersedes it), or an
/// edit whose result prints the edited lines (`` the latest edit result of
/// `path` ``: a newer one supersedes it).
fn key(step: &StepActivity, conv: &Conversation) -> Option<String> {
    let a = &step.activity;
    let command = || format!("the output of `{}`", crate::text::one_line(&a.command, 160));
    let key = match a.action {
        Action::View if a.viewed.len() == 1 => command(),
        Action::Search => command(),
        Action::Edit if a.edited() && a.edits.len() == 1 => {
            format!(
                "the latest edit result of `{}`",
                a.edits.first()?.target.as_deref()?
            )
        }
        _ => return None,
    };
    let result = conv.tool_result(step.result_at?)?;
    let shows = !result.is_error
        && (result.text().lines().count() >= MIN_LINES
            || result
                .parts
                .iter()
                .any(|p| matches!(p.kind, PartKind::Image(_))));
    shows.then_some(key)
}

/// The view message for a step's output: a header naming the call and
/// the original, then the output's text (or its parts, images included),
/// with the secrets its text would reveal (masked when `redact.enabled`,
/// like all text TraceLite writes; counted by the caller if it is kept).
fn view_message(
    step: &StepActivity,
    conv: &Conversation,
    key: &str,
    range: &Range<'_>,
    cx: &mut StageContext<'_, CompactState>,
) -> Option<(Message, Redactions)> {
    output_message(step, conv, &format!("{VIEW_HEADER}{key}"), range, cx)
}

/// A message showing `step`'s output as it was: `opening`, where its
/// original is, then the output (see [`view_message`]; also the kept
/// outputs of excluded tools, [`super::kept`]).
pub(super) fn output_message(
    step: &StepActivity,
    conv: &Conversation,
    opening: &str,
    range: &Range<'_>,
    cx: &mut StageContext<'_, CompactState>,
) -> Option<(Message, Redactions)> {
    let result = conv.tool_result(step.result_at?)?;
    let header = format!("{opening}; original: {}]", range.cite(step.result_message?));
    if result
        .parts
        .iter()
        .any(|p| matches!(p.kind, PartKind::Image(_)))
    {
        let mut m = Message::text(Role::User, header);
        m.parts.extend(result.parts.iter().cloned());
        return Some((m, Redactions::default()));
    }
    let text = format!("{header}\n{}", result.text());
    let (text, found) = if cx.config.redact.enabled {
        let (out, found) = cx.redacted.redact(&text);
        (out.into_owned(), found)
    } else {
        (text, Redactions::default())
    };
    Some((Message::text(Role::User, text), found))
}

/// The view messages to keep after this compaction, oldest first: of the
/// kept ones of earlier compactions (`prior`) and the range's outputs, those
/// no later output supersedes (the same command run again, a newer edit
/// result of the file, also in a later turn: `later`), newest first within
/// `budget` tokens. Outputs of excluded tools (`excluded`, kept whole by
/// [`super::kept`]) are not views.
pub fn keep(
    conv: &Conversation,
    cx: &mut StageContext<'_, CompactState>,
    prior: &[Message],
    range: &Range<'_>,
    later: &[StepActivity],
    budget: u64,
    excluded: &HashSet<PartRef>,
) -> Result<Vec<Message>> {
    if budget == 0 {
        return Ok(Vec::new());
    }
    // A kept message of an earlier compaction, or a step of the range.
    enum Source<'s> {
        Kept(&'s Message),
        Step(&'s StepActivity),
    }
    let mut candidates: Vec<(String, Source<'_>)> = prior
        .iter()
        .filter_map(|m| Some((key_of(m)?, Source::Kept(m))))
        .collect();
    let end = range.first + range.messages.len();
    for step in range.steps.iter().chain(later) {
        if step.result_at.is_some_and(|r| excluded.contains(&r)) {
            continue;
        }
        let Some(key) = key(step, conv) else { continue };
        candidates.retain(|(k, _)| *k != key);
        if step.call_message < end {
            candidates.push((key, Source::Step(step)));
        }
    }
    // Messages are built only for the candidates weighed, newest first.
    let mut kept: Vec<Message> = Vec::new();
    let mut used = 0;
    for (key, source) in candidates.iter().rev() {
        let (m, found) = match source {
            Source::Kept(m) => ((*m).clone(), Redactions::default()),
            Source::Step(step) => match view_message(step, conv, key, range, cx) {
                Some(built) => built,
                None => continue,
            },
        };
        let tokens = cx.meter.message(&m)?;
        if used + tokens <= budget {
            used += tokens;
            cx.redactions.merge(&found);
            kept.push(m);
        }
    }
    kept.reverse();
    Ok(kept)
}
