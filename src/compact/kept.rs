//! Outputs of excluded tools (`excludeTools`) through a compaction: each
//! output of the compacted turns stays word for word in a message after the
//! summary and the tool-call log, whose header names the tool and where the
//! original is kept; those an earlier compaction kept stay too, first. No
//! budget share bounds them: the host chose these tools.

use std::collections::HashSet;

use super::extractive::Range;
use super::{views, CompactState};
use crate::model::{Conversation, Message, PartKind, PartRef, Role};
use crate::redact::Redactions;
use crate::stage::StageContext;

/// Opening of a kept tool output message.
pub const KEPT_HEADER: &str =
    "[TraceLite: kept word for word from the compacted turns (excludeTools): the output of `";

/// Whether `m` is a tool output message a compaction kept.
pub fn is_kept(m: &Message) -> bool {
    m.role == Role::User
        && m.parts.first().is_some_and(
            |p| matches!(&p.kind, PartKind::Text { text } if text.starts_with(KEPT_HEADER)),
        )
}

/// The messages keeping the outputs of the steps of `range` that
/// `excluded` holds (the results of excluded tools), in call order: a
/// header naming the tool and citing the original, then the output as it
/// was ([`views::output_message`]: text masked when `redact.enabled`, like
/// all text TraceLite writes; the secrets found are returned, to be counted
/// if the compaction happens).
pub fn keep(
    conv: &Conversation,
    cx: &mut StageContext<'_, CompactState>,
    range: &Range<'_>,
    excluded: &HashSet<PartRef>,
) -> (Vec<Message>, Redactions) {
    let mut out = Vec::new();
    let mut masked = Redactions::default();
    for step in range.steps {
        if !step.result_at.is_some_and(|r| excluded.contains(&r)) {
            continue;
        }
        let call = conv
            .messages
            .get(step.call_at.message)
            .and_then(|m| m.parts.get(step.call_at.part));
        let tool = match call.map(|p| &p.kind) {
            Some(PartKind::ToolCall(c)) => c.name.as_str(),
            _ => "",
        };
        let opening = format!("{KEPT_HEADER}{}`", crate::text::one_line(tool, 160));
        if let Some((m, found)) = views::output_message(step, conv, &opening, range, cx) {
            masked.merge(&found);
            out.push(m);
        }
    }
    (out, masked)
}
