//! Outputs of excluded tools (`tools.exclude`) through a compaction: each
//! output of the compacted turns stays word for word in a message after the
//! summary and the tool-call log, whose header names the tool and where the
//! original is kept; those an earlier compaction kept stay too, first. No
//! budget share bounds them: the host chose these tools.

use std::collections::{HashMap, HashSet};

use super::extractive::Range;
use super::CompactState;
use crate::model::{Message, PartKind, PartRef, Role};
use crate::redact::Redactions;
use crate::stage::StageContext;

/// Opening of a kept tool output message.
pub const KEPT_HEADER: &str =
    "[TraceLite: kept word for word from the compacted turns (tools.exclude): the output of `";

/// Whether `m` is a tool output message a compaction kept.
pub fn is_kept(m: &Message) -> bool {
    m.role == Role::User
        && m.parts.first().is_some_and(
            |p| matches!(&p.kind, PartKind::Text { text } if text.starts_with(KEPT_HEADER)),
        )
}

/// The messages keeping the outputs of `range` that `excluded` holds (the
/// results of excluded tools, by their place in the conversation), in
/// order: a header naming the tool and citing the original, then the
/// output's text (or its parts, images included). Text is masked when
/// `redact.enabled`, like all text TraceLite writes: the secrets found are
/// returned, to be counted if the compaction happens.
pub fn keep(
    cx: &mut StageContext<'_, CompactState>,
    range: &Range<'_>,
    excluded: &HashSet<PartRef>,
) -> (Vec<Message>, Redactions) {
    let mut out = Vec::new();
    let mut masked = Redactions::default();
    if excluded.is_empty() {
        return (out, masked);
    }
    // The range holds every call its results answer (a cut never splits them).
    let names: HashMap<&str, &str> = range
        .messages
        .iter()
        .flat_map(|m| m.parts.iter())
        .filter_map(|p| match &p.kind {
            PartKind::ToolCall(c) => Some((c.id.as_str(), c.name.as_str())),
            _ => None,
        })
        .collect();
    for (i, m) in range.messages.iter().enumerate() {
        let message = range.first + i;
        for (part, p) in m.parts.iter().enumerate() {
            let PartKind::ToolResult(result) = &p.kind else {
                continue;
            };
            if !excluded.contains(&PartRef { message, part }) {
                continue;
            }
            let tool = names
                .get(result.call_id.as_str())
                .copied()
                .unwrap_or_default();
            let header = format!(
                "{KEPT_HEADER}{}`; original: {}]",
                crate::text::one_line(tool, 160),
                range.cite(message)
            );
            if result
                .parts
                .iter()
                .any(|p| matches!(p.kind, PartKind::Image(_)))
            {
                let mut kept = Message::text(Role::User, header);
                kept.parts.extend(result.parts.iter().cloned());
                out.push(kept);
                continue;
            }
            let text = format!("{header}\n{}", result.text());
            let (text, found) = if cx.config.redact.enabled {
                let (masked, found) = cx.redacted.redact(&text);
                (masked.into_owned(), found)
            } else {
                (text, Redactions::default())
            };
            masked.merge(&found);
            out.push(Message::text(Role::User, text));
        }
    }
    (out, masked)
}
