//! What earlier compactions left at the start of a request (the user's own
//! messages, the constraint archive, the summary, the tool-call log, kept views),
//! how to tell TraceLite's messages from the user's, and the fingerprint that
//! re-applies a compaction while the history matches.

use super::calls::{CallLog, CALL_LOG_HEADER};
use super::constraints::{ConstraintArchive, ARCHIVE_HEADER};
use super::summary::SUMMARY_MARK;
use super::{kept, views};
use crate::hash::Fnv1a;
use crate::model::{Conversation, Message, PartKind, Role};

fn starts_with(m: &Message, mark: &str) -> bool {
    m.role == Role::User
        && m.parts
            .first()
            .and_then(|p| p.as_text())
            .is_some_and(|t| t.starts_with(mark))
}

pub(super) fn is_summary(m: &Message) -> bool {
    starts_with(m, SUMMARY_MARK)
}

pub(super) fn is_archive(m: &Message) -> bool {
    starts_with(m, ARCHIVE_HEADER)
}

pub(super) fn is_call_log(m: &Message) -> bool {
    starts_with(m, CALL_LOG_HEADER)
}

/// Fingerprint of messages for re-applying a compaction: roles, user and
/// assistant text, tool call ids, names and arguments, result ids. Tool
/// result contents are left out (earlier stages may rewrite them later).
pub(super) fn fingerprint(mut h: Fnv1a, messages: &[Message]) -> Fnv1a {
    for m in messages {
        h.write(&[0xff, m.role as u8]);
        for p in &m.parts {
            match &p.kind {
                PartKind::Text { text } if m.role != Role::Tool => {
                    h.write(b"t");
                    h.write(text.as_bytes());
                }
                PartKind::ToolCall(c) => {
                    h.write(b"c");
                    for f in [&c.id, &c.name, &c.arguments] {
                        h.write(f.as_bytes());
                        h.write(&[0]);
                    }
                }
                PartKind::ToolResult(r) => {
                    h.write(b"r");
                    h.write(r.call_id.as_bytes());
                }
                _ => h.write(b"o"),
            }
        }
    }
    h
}

/// The leading messages a compaction left: the user's messages kept word
/// for word, then the archive, the summary, the tool-call log, the kept
/// outputs of excluded tools and the kept views.
#[derive(Debug, Default)]
pub(super) struct Prior {
    /// User-authored messages kept verbatim at the start (`..users`).
    pub(super) users: usize,
    pub(super) archive: Option<ConstraintArchive>,
    pub(super) summary_at: Option<usize>,
    pub(super) calls: Option<CallLog>,
    /// Outputs of excluded tools earlier compactions kept ([`kept`]).
    pub(super) kept: Vec<Message>,
    /// File views earlier compactions kept ([`views`]).
    pub(super) views: Vec<Message>,
    /// First message after them.
    pub(super) start: usize,
}

impl Prior {
    pub(super) fn find(conv: &Conversation) -> Self {
        let mut p = Prior::default();
        let users = conv
            .messages
            .iter()
            .take_while(|m| is_user_authored(m))
            .count();
        let mut at = users;
        let archive = conv.messages.get(at).filter(|m| is_archive(m));
        if archive.is_some() {
            at += 1;
        }
        let summary = conv.messages.get(at).is_some_and(is_summary);
        if archive.is_none() && !summary {
            return p;
        }
        p.users = users;
        p.archive = archive.and_then(|m| ConstraintArchive::parse(&m.text_content()));
        p.start = at;
        if summary {
            p.summary_at = Some(p.start);
            p.start += 1;
        }
        if let Some(m) = conv.messages.get(p.start).filter(|m| is_call_log(m)) {
            p.calls = CallLog::parse(&m.text_content());
            p.start += 1;
        }
        while let Some(m) = conv.messages.get(p.start).filter(|m| kept::is_kept(m)) {
            p.kept.push(m.clone());
            p.start += 1;
        }
        while let Some(m) = conv.messages.get(p.start).filter(|m| views::is_view(m)) {
            p.views.push(m.clone());
            p.start += 1;
        }
        p
    }
}

/// Whether a message is the user's own: a user message with text that is
/// none of TraceLite's (archive, summary, tool-call log) and no image (the
/// optical stage's snapshot messages are images).
pub(super) fn is_user_authored(m: &Message) -> bool {
    m.role == Role::User
        && !is_summary(m)
        && !is_archive(m)
        && !is_call_log(m)
        && !views::is_view(m)
        && !kept::is_kept(m)
        && !m.text_content().trim().is_empty()
        && !m.parts.iter().any(|p| matches!(p.kind, PartKind::Image(_)))
}
