//! Validation of tool-call pairing and role order, with an opt-in repair mode.
//!
//! Providers reject a request whose tool calls and results do not pair up:
//! every result must answer an earlier call and sit right after the turn that
//! made it (OpenAI Chat: in the run of `tool` messages after the assistant
//! message; Anthropic and Gemini: in the user turn(s) right after; Responses:
//! anywhere after the call), ids must be unique, and a call may lack a result
//! only at the very end of the conversation. [`validate`] reports the first
//! problem as an [`Error`] with a specific code and the JSON path of the
//! offending field; [`repair`] fixes what it safely can and lists each fix:
//!
//! | problem | code | repair |
//! |---|---|---|
//! | result without an earlier call | `ORPHAN_TOOL_RESULT` | kept as user text |
//! | second result for one call | `DUPLICATE_TOOL_RESULT` | kept as user text |
//! | two calls with one id | `DUPLICATE_TOOL_CALL_ID` | later call renamed `<id>_<n>`, its result follows |
//! | result away from its call's turn | `MISPLACED_TOOL_RESULT` | moved right after the call's turn |
//! | call without result, not at the end | `MISSING_TOOL_RESULT` | a tombstone result is added |
//! | call outside an assistant turn, result inside one | `INVALID_ROLE_ORDER` | none (error) |
//!
//! A request that continues server-side history (Responses
//! `previous_response_id` or `conversation`, Gemini `cachedContent`) may answer
//! calls that are not in it: those results are not orphans.
//!
//! No repair drops content: converted results keep their text, tombstones say
//! that no result was recorded.

use std::collections::{HashMap, HashSet};

use serde::Serialize;

use super::{message_path, part_path, Field, FormatName};
use crate::error::{Error, ErrorCode, Result};
use crate::model::{Conversation, Extra, Layout, Message, Part, PartKind, Role, ToolResult};

/// One fix made by [`repair`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Repair {
    /// The error code the problem would have raised (e.g. `ORPHAN_TOOL_RESULT`).
    pub code: String,
    /// JSON path of the offending field in the request as received.
    pub path: String,
    /// What was done.
    pub action: String,
}

/// The text of a tombstone result added by [`repair`].
pub const TOMBSTONE: &str = "[no tool result was recorded for this call]";

#[derive(Debug)]
struct Issue {
    code: ErrorCode,
    message: usize,
    part: usize,
    field: Field,
    text: String,
}

impl Issue {
    fn error(&self, conv: &Conversation, format: FormatName) -> Error {
        Error::new(
            self.code,
            part_path(format, conv, self.message, self.part, self.field),
            self.text.clone(),
        )
    }
}

/// Whether results must sit in the run of messages right after the call's turn.
fn strict_placement(format: FormatName) -> bool {
    format != FormatName::OpenaiResponses
}

/// Whether `msg` may follow a call's turn inside that turn's answer run.
fn in_answer_run(format: FormatName, msg: &Message) -> bool {
    match format {
        FormatName::OpenaiChat => msg.role == Role::Tool,
        _ => msg.role != Role::Assistant,
    }
}

/// Whether `msg` carries nothing but tool plumbing (so a call before it may still be pending).
fn only_plumbing(format: FormatName, msg: &Message) -> bool {
    msg.parts.iter().all(|p| match &p.kind {
        PartKind::ToolResult(_) => true,
        PartKind::ToolCall(_) | PartKind::Other { .. } => {
            format == FormatName::OpenaiResponses && msg.layout == Layout::Absent
        }
        _ => false,
    })
}

/// Whether earlier turns live on the server (Responses `previous_response_id` or
/// `conversation`, Gemini `cachedContent`), so a result may answer a call not in the request.
pub(crate) fn has_server_history(conv: &Conversation, format: FormatName) -> bool {
    let keys: &[&str] = match format {
        FormatName::OpenaiResponses => &["previous_response_id", "conversation"],
        FormatName::Gemini => &["cachedContent", "cached_content"],
        _ => &[],
    };
    keys.iter()
        .any(|k| conv.extra.get(*k).is_some_and(|v| !v.is_null()))
}

fn find_issues(conv: &Conversation, format: FormatName) -> Vec<Issue> {
    let mut issues = Vec::new();
    let server_history = has_server_history(conv, format);
    // call id → (message index, answered)
    let mut calls: HashMap<&str, (usize, bool)> = HashMap::new();
    for (m, msg) in conv.messages.iter().enumerate() {
        for (p, part) in msg.parts.iter().enumerate() {
            match &part.kind {
                PartKind::ToolCall(call) => {
                    if msg.role != Role::Assistant {
                        issues.push(Issue {
                            code: ErrorCode::InvalidRoleOrder,
                            message: m,
                            part: p,
                            field: Field::Part,
                            text: "a tool call must be in an assistant turn".into(),
                        });
                    }
                    if calls.contains_key(call.id.as_str()) {
                        issues.push(Issue {
                            code: ErrorCode::DuplicateToolCallId,
                            message: m,
                            part: p,
                            field: Field::Id,
                            text: format!("tool call id {:?} is used twice", call.id),
                        });
                    } else {
                        calls.insert(&call.id, (m, false));
                    }
                }
                PartKind::ToolResult(result) => {
                    if matches!(msg.role, Role::Assistant | Role::System | Role::Developer) {
                        issues.push(Issue {
                            code: ErrorCode::InvalidRoleOrder,
                            message: m,
                            part: p,
                            field: Field::Part,
                            text: "a tool result must be in a user or tool turn".into(),
                        });
                    }
                    match calls.get_mut(result.call_id.as_str()) {
                        None if server_history => {}
                        None => issues.push(Issue {
                            code: ErrorCode::OrphanToolResult,
                            message: m,
                            part: p,
                            field: Field::Id,
                            text: format!(
                                "tool result answers {:?}, which no earlier tool call has",
                                result.call_id
                            ),
                        }),
                        Some((_, true)) => issues.push(Issue {
                            code: ErrorCode::DuplicateToolResult,
                            message: m,
                            part: p,
                            field: Field::Id,
                            text: format!("tool call {:?} already has a result", result.call_id),
                        }),
                        Some((call_at, answered)) => {
                            *answered = true;
                            let placed = !strict_placement(format)
                                || (*call_at < m
                                    && conv.messages.get(*call_at + 1..=m).is_some_and(|run| {
                                        run.iter().all(|x| in_answer_run(format, x))
                                    }));
                            if !placed {
                                issues.push(Issue {
                                    code: ErrorCode::MisplacedToolResult,
                                    message: m,
                                    part: p,
                                    field: Field::Id,
                                    text: format!(
                                        "the result of {:?} must directly follow the turn that made the call",
                                        result.call_id
                                    ),
                                });
                            }
                        }
                    }
                }
                _ => {}
            }
        }
    }
    // Calls without a result: allowed only when nothing but tool plumbing follows.
    for (m, msg) in conv.messages.iter().enumerate() {
        for (p, part) in msg.parts.iter().enumerate() {
            let PartKind::ToolCall(call) = &part.kind else {
                continue;
            };
            if calls.get(call.id.as_str()) != Some(&(m, false)) {
                continue;
            }
            let trailing = conv
                .messages
                .get(m + 1..)
                .is_some_and(|after| after.iter().all(|x| only_plumbing(format, x)));
            if !trailing {
                issues.push(Issue {
                    code: ErrorCode::MissingToolResult,
                    message: m,
                    part: p,
                    field: Field::Part,
                    text: format!(
                        "tool call {:?} has no result (only the last turn's calls may lack one)",
                        call.id
                    ),
                });
            }
        }
    }
    issues.sort_by_key(|i| (i.message, i.part));
    issues
}

/// Checks a parsed request; the first problem is an error naming its JSON path.
pub fn validate(conv: &Conversation, format: FormatName) -> Result<()> {
    match find_issues(conv, format).first() {
        Some(issue) => Err(issue.error(conv, format)),
        None => Ok(()),
    }
}

/// Fixes what can be fixed safely (see the module docs), then validates.
/// Returns every repair made, or the first problem that could not be repaired.
pub fn repair(conv: &mut Conversation, format: FormatName) -> Result<Vec<Repair>> {
    let mut repairs = Vec::new();
    rename_duplicate_calls(conv, format, &mut repairs);
    demote_unpaired(conv, format, &mut repairs);
    move_misplaced(conv, format, &mut repairs);
    add_tombstones(conv, format, &mut repairs);
    if format == FormatName::Gemini && !repairs.is_empty() {
        super::gemini::make_ids_explicit(conv);
    }
    validate(conv, format)?;
    Ok(repairs)
}

/// Turns orphaned and duplicate results into user text.
pub(crate) fn demote_unpaired(
    conv: &mut Conversation,
    format: FormatName,
    repairs: &mut Vec<Repair>,
) {
    for issue in find_issues(conv, format) {
        if matches!(
            issue.code,
            ErrorCode::OrphanToolResult | ErrorCode::DuplicateToolResult
        ) {
            repairs.push(Repair {
                code: issue.code.as_str().into(),
                path: part_path(format, conv, issue.message, issue.part, issue.field),
                action: "kept the result as user text".into(),
            });
            demote_result(conv, issue.message, issue.part);
        }
    }
}

fn rename_duplicate_calls(conv: &mut Conversation, format: FormatName, repairs: &mut Vec<Repair>) {
    let mut seen: HashSet<String> = HashSet::new();
    // Per original id: renamed ids waiting for their result, in call order.
    let mut waiting: HashMap<String, std::collections::VecDeque<String>> = HashMap::new();
    let mut renames: Vec<(usize, usize, String)> = Vec::new();
    let taken: HashSet<String> = conv
        .messages
        .iter()
        .flat_map(|m| m.parts.iter())
        .filter_map(|p| match &p.kind {
            PartKind::ToolCall(c) => Some(c.id.clone()),
            _ => None,
        })
        .collect();
    let mut counter = 1usize;
    let mut first_answered: HashSet<String> = HashSet::new();
    let mut tool_parts = Vec::new();
    for (m, msg) in conv.messages.iter().enumerate() {
        for (p, part) in msg.parts.iter().enumerate() {
            match &part.kind {
                PartKind::ToolCall(c) => tool_parts.push((m, p, true, c.id.clone())),
                PartKind::ToolResult(r) => tool_parts.push((m, p, false, r.call_id.clone())),
                _ => {}
            }
        }
    }
    for (m, p, is_call, id) in tool_parts {
        if is_call {
            if seen.insert(id.clone()) {
                continue;
            }
            let fresh = loop {
                let candidate = format!("{id}_{counter}");
                counter += 1;
                if !taken.contains(&candidate) && !seen.contains(&candidate) {
                    break candidate;
                }
            };
            seen.insert(fresh.clone());
            repairs.push(Repair {
                code: ErrorCode::DuplicateToolCallId.as_str().into(),
                path: part_path(format, conv, m, p, Field::Id),
                action: format!("renamed the later call to {fresh:?}"),
            });
            renames.push((m, p, fresh.clone()));
            waiting.entry(id).or_default().push_back(fresh);
        } else if waiting.contains_key(&id) || seen.contains(&id) {
            // The first result answers the first call; later ones answer renamed calls.
            if first_answered.insert(id.clone()) {
                continue;
            }
            if let Some(fresh) = waiting.get_mut(&id).and_then(|q| q.pop_front()) {
                renames.push((m, p, fresh));
            }
        }
    }
    for (m, p, fresh) in renames {
        if let Some(part) = conv.messages.get_mut(m).and_then(|x| x.parts.get_mut(p)) {
            match &mut part.kind {
                PartKind::ToolCall(c) => c.id = fresh,
                PartKind::ToolResult(r) => r.call_id = fresh,
                _ => {}
            }
        }
    }
}

/// Replaces the result at (m, p) with its content as user text.
fn demote_result(conv: &mut Conversation, m: usize, p: usize) {
    let Some(msg) = conv.messages.get_mut(m) else {
        return;
    };
    let Some(part) = msg.parts.get_mut(p) else {
        return;
    };
    let PartKind::ToolResult(result) = &part.kind else {
        return;
    };
    let mut text = format!("[tool result for {}]", result.call_id);
    let mut rest = Vec::new();
    for inner in &result.parts {
        match (&inner.kind, inner.as_text()) {
            (_, Some(t)) => {
                text.push('\n');
                text.push_str(t);
            }
            // Images are user content in every format: they follow the text.
            (PartKind::Image(_), None) => rest.push(inner.clone()),
            // Anything else means something else outside a tool result (an
            // opaque `tool_use` block would become a call): kept as its JSON.
            (PartKind::Other { value }, None) => {
                text.push('\n');
                text.push_str(&value.to_string());
            }
            (kind, None) => {
                text.push('\n');
                text.push_str(&serde_json::to_string(kind).unwrap_or_default());
            }
        }
    }
    *part = Part::text(text);
    let tail = msg.parts.split_off(p + 1);
    msg.parts.extend(rest);
    msg.parts.extend(tail);
    if matches!(msg.role, Role::Tool) {
        msg.role = Role::User;
    }
    if msg.layout == Layout::Absent {
        msg.layout = Layout::Parts;
    }
    if msg.parts.iter().any(|x| x.as_text().is_none()) {
        msg.layout = Layout::Parts;
    }
}

/// Index after the call's message and the run of answer messages that follows it.
fn after_answer_run(conv: &Conversation, format: FormatName, call_at: usize) -> usize {
    let mut at = call_at + 1;
    while conv
        .messages
        .get(at)
        .is_some_and(|m| in_answer_run(format, m) && only_plumbing(format, m))
    {
        at += 1;
    }
    at
}

fn result_message(format: FormatName, result: Part) -> Message {
    let (role, layout) = match format {
        FormatName::OpenaiChat => (Role::Tool, Layout::Text),
        FormatName::OpenaiResponses => (Role::Tool, Layout::Absent),
        FormatName::Anthropic | FormatName::Gemini => (Role::User, Layout::Parts),
    };
    Message {
        role,
        parts: vec![result],
        layout,
        extra: Extra::new(),
    }
}

/// Puts `result` into the answer run after the call at message `call_at`.
fn place_result(conv: &mut Conversation, format: FormatName, call_at: usize, result: Part) {
    let at = after_answer_run(conv, format, call_at);
    let merge_into = match format {
        FormatName::Anthropic | FormatName::Gemini if at > call_at + 1 => Some(at - 1),
        FormatName::Anthropic | FormatName::Gemini => conv
            .messages
            .get(call_at + 1)
            .is_some_and(|m| m.role == Role::User)
            .then_some(call_at + 1),
        _ => None,
    };
    match merge_into.and_then(|i| conv.messages.get_mut(i)) {
        Some(msg) => {
            let pos = msg
                .parts
                .iter()
                .take_while(|p| matches!(p.kind, PartKind::ToolResult(_)))
                .count();
            msg.parts.insert(pos, result);
            msg.layout = Layout::Parts;
        }
        None => conv.messages.insert(at, result_message(format, result)),
    }
}

/// Repairs the issues of `code` one at a time, first first, each by `fix`
/// (which returns the repair it made, or `None` when it cannot): a fix can move
/// messages, so the issues are found again after each, at most a bounded number
/// of times.
fn repair_each(
    conv: &mut Conversation,
    format: FormatName,
    code: ErrorCode,
    repairs: &mut Vec<Repair>,
    mut fix: impl FnMut(&mut Conversation, &Issue) -> Option<Repair>,
) {
    for _ in 0..conv.messages.len() * 4 + 16 {
        let Some(issue) = find_issues(conv, format)
            .into_iter()
            .find(|i| i.code == code)
        else {
            return;
        };
        let Some(repair) = fix(conv, &issue) else {
            return;
        };
        repairs.push(repair);
    }
}

/// Moves each misplaced tool result into the answer run of its call.
pub(crate) fn move_misplaced(
    conv: &mut Conversation,
    format: FormatName,
    repairs: &mut Vec<Repair>,
) {
    let code = ErrorCode::MisplacedToolResult;
    repair_each(conv, format, code, repairs, |conv, issue| {
        let path = part_path(format, conv, issue.message, issue.part, issue.field);
        let msg = conv.messages.get_mut(issue.message)?;
        if issue.part >= msg.parts.len() {
            return None;
        }
        let part = msg.parts.remove(issue.part);
        let call_id = match &part.kind {
            PartKind::ToolResult(r) => r.call_id.clone(),
            _ => return None,
        };
        if msg.parts.is_empty() {
            conv.messages.remove(issue.message);
        }
        let call_at = conv.messages.iter().position(|m| {
            m.parts
                .iter()
                .any(|p| matches!(&p.kind, PartKind::ToolCall(c) if c.id == call_id))
        })?;
        let action = format!(
            "moved the result next to its call at {}",
            message_path(format, conv, call_at)
        );
        place_result(conv, format, call_at, part);
        Some(Repair {
            code: code.as_str().into(),
            path,
            action,
        })
    });
}

/// Answers each tool call that has no result with a tombstone result.
pub(crate) fn add_tombstones(
    conv: &mut Conversation,
    format: FormatName,
    repairs: &mut Vec<Repair>,
) {
    let code = ErrorCode::MissingToolResult;
    repair_each(conv, format, code, repairs, |conv, issue| {
        let call_id = match conv
            .messages
            .get(issue.message)
            .and_then(|m| m.parts.get(issue.part))
            .map(|p| &p.kind)
        {
            Some(PartKind::ToolCall(c)) => c.id.clone(),
            _ => return None,
        };
        let path = part_path(format, conv, issue.message, issue.part, issue.field);
        let result = Part::from(PartKind::ToolResult(ToolResult {
            call_id,
            parts: vec![Part::text(TOMBSTONE)],
            is_error: false,
        }));
        place_result(conv, format, issue.message, result);
        Some(Repair {
            code: code.as_str().into(),
            path,
            action: "added a tombstone result".into(),
        })
    });
}
