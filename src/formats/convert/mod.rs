//! Conversion between request formats through the neutral model.
//!
//! Portable content converts exactly: text, inline images, tool calls (name,
//! arguments, id) and tool results (text, images; the error flag between
//! Anthropic and Gemini, which alone carry one), the system
//! prompt, and the settings `model`, `temperature`, `top_p`, the output-token
//! limit, stop sequences, `stream` and function tools. Everything else has no
//! equivalent in another format and is dropped, each listed as a [`Lossy`]
//! item with its JSON path in the source request: unknown members
//! (`cache_control`, `thoughtSignature`, item ids, …), opaque parts
//! (`thinking`, `reasoning` items, audio, files, remote images), non-function
//! tools and every other top-level setting.
//!
//! Structure is rebuilt for the target: OpenAI Chat gets one `tool` message per
//! result and one assistant message per turn; Responses one item per call and
//! result; Anthropic and Gemini one user turn holding the results of the
//! assistant turn before it, with consecutive same-role turns merged.

use std::collections::{HashMap, HashSet};

use serde::Serialize;
use serde_json::{Map, Value};

mod settings;

use settings::Settings;

use super::{detect, emit, parse, part_path, Field, FormatName};
use crate::error::Result;
use crate::model::{Conversation, Extra, Layout, Message, Part, PartKind, Role, ToolResult};

/// Something of the source request the target format cannot carry.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Lossy {
    /// JSON path in the source request.
    pub path: String,
    /// What was dropped or changed.
    pub what: String,
}

/// The result of [`convert`].
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Conversion {
    /// Source format (detected unless given).
    pub from: FormatName,
    /// Target format.
    pub to: FormatName,
    /// The request in the target format.
    pub request: Value,
    /// Everything that did not survive: top-level settings, then messages in order.
    pub lossy: Vec<Lossy>,
}

/// Converts `request` (of format `from`, detected when `None`) to format `to`.
pub fn convert(request: &Value, from: Option<FormatName>, to: FormatName) -> Result<Conversion> {
    let from = match from {
        Some(f) => f,
        None => detect(request)?,
    };
    let conv = parse(from, request)?;
    let (conv, lossy) = convert_conversation(conv, from, to);
    Ok(Conversion {
        from,
        to,
        request: emit(to, &conv),
        lossy,
    })
}

/// Rewrites a conversation parsed from `from` so that `emit(to, …)` yields a
/// valid request of `to`; returns it with the list of what was lost.
pub fn convert_conversation(
    conv: Conversation,
    from: FormatName,
    to: FormatName,
) -> (Conversation, Vec<Lossy>) {
    if from == to {
        return (conv, Vec::new());
    }
    let mut lossy = Vec::new();
    let settings = Settings::extract(&conv.extra, from, &mut lossy);
    let mut system = Vec::new();
    for (i, msg) in conv.system.iter().enumerate() {
        let base = system_path(from, &conv, i);
        report_extra(&msg.extra, &base, &mut lossy);
        let mut parts = Vec::new();
        for (j, part) in msg.parts.iter().enumerate() {
            let path = format!("{base}[{j}]");
            match &part.kind {
                PartKind::Text { text } => {
                    report_extra(&part.extra, &path, &mut lossy);
                    parts.push(Part::text(text.clone()));
                }
                _ => lossy.push(Lossy {
                    path,
                    what: "non-text system content dropped".into(),
                }),
            }
        }
        if !parts.is_empty() {
            let role = if msg.role == Role::Developer
                && matches!(to, FormatName::OpenaiChat | FormatName::OpenaiResponses)
            {
                Role::Developer
            } else {
                Role::System
            };
            let mut m = neutral_message(role, parts);
            if m.parts.len() == 1 {
                m.layout = Layout::Text;
            }
            system.push(m);
        }
    }
    let mut messages = Vec::new();
    for (m, msg) in conv.messages.iter().enumerate() {
        report_extra(&msg.extra, &super::message_path(from, &conv, m), &mut lossy);
        let mut parts = Vec::new();
        for (p, part) in msg.parts.iter().enumerate() {
            let path = part_path(from, &conv, m, p, Field::Part);
            if let Some(kept) = portable(part, &path, to, &mut lossy) {
                parts.push(kept);
            }
        }
        if parts.is_empty() {
            continue;
        }
        let mut role = msg.role;
        if matches!(role, Role::System | Role::Developer)
            && matches!(to, FormatName::Anthropic | FormatName::Gemini)
        {
            lossy.push(Lossy {
                path: super::message_path(from, &conv, m),
                what: "a system message inside the conversation became a user message".into(),
            });
            role = Role::User;
        }
        messages.push(neutral_message(role, parts));
    }
    if matches!(to, FormatName::Anthropic | FormatName::Gemini) {
        normalize_arguments(&mut messages, to, &mut lossy);
    }
    let messages = match to {
        FormatName::OpenaiChat => restructure_chat(messages),
        FormatName::OpenaiResponses => restructure_responses(messages),
        FormatName::Anthropic | FormatName::Gemini => restructure_turns(messages),
    };
    let mut out = Conversation {
        system,
        messages,
        extra: Extra::new(),
    };
    // Responses accepts a result anywhere after its call; the others want it right after.
    let mut moved = Vec::new();
    if super::validate::has_server_history(&conv, from)
        && !super::validate::has_server_history(&out, to)
    {
        // Results answering calls kept on the provider's server have no call here.
        super::validate::demote_unpaired(&mut out, to, &mut moved);
    }
    super::validate::move_misplaced(&mut out, to, &mut moved);
    // A call may lack its result only at the end; what counts as the end differs
    // (Responses lets calls and results interleave; a call answered on the
    // server has no result here): a call left without one gets a tombstone.
    super::validate::add_tombstones(&mut out, to, &mut moved);
    for m in moved {
        lossy.push(Lossy {
            path: m.path,
            what: format!("{} ({}; path in the converted request)", m.action, m.code),
        });
    }
    let Conversation {
        system, messages, ..
    } = out;
    let mut extra = settings.emit(to, &mut lossy);
    if system.is_empty() {
        extra.shift_remove("system");
        extra.shift_remove("systemInstruction");
    }
    let out = Conversation {
        system,
        messages,
        extra,
    };
    (out, lossy)
}

fn neutral_message(role: Role, parts: Vec<Part>) -> Message {
    Message {
        role,
        parts,
        layout: Layout::Parts,
        extra: Extra::new(),
    }
}

fn system_path(from: FormatName, conv: &Conversation, i: usize) -> String {
    match from {
        FormatName::OpenaiChat => format!("messages[{i}].content"),
        FormatName::OpenaiResponses => {
            if i == 0 && conv.extra.get("instructions") == Some(&Value::Bool(true)) {
                "instructions".into()
            } else {
                let offset =
                    usize::from(conv.extra.get("instructions") == Some(&Value::Bool(true)));
                format!("input[{}].content", i - offset)
            }
        }
        FormatName::Anthropic => "system".into(),
        FormatName::Gemini => {
            if conv.extra.contains_key("system_instruction") {
                "system_instruction.parts".into()
            } else {
                "systemInstruction.parts".into()
            }
        }
    }
}

/// Keys of `extra` that are format flags or implied by the structure, not data.
const STRUCTURAL: [&str; 11] = [
    "type",
    "content",
    "output",
    "role",
    "tool_call_id",
    "inline_data",
    "inlineData",
    "function_call",
    "functionCall",
    "function_response",
    "functionResponse",
];

fn is_empty(value: &Value) -> bool {
    match value {
        Value::Null | Value::Bool(false) => true,
        Value::Array(a) => a.is_empty(),
        Value::Object(o) => o.is_empty(),
        _ => false,
    }
}

fn report_extra(extra: &Extra, path: &str, lossy: &mut Vec<Lossy>) {
    for (key, value) in extra {
        if is_empty(value) {
            continue;
        }
        if STRUCTURAL.contains(&key.as_str()) {
            // Gemini containers hold inner unknown members besides the name/response flags.
            if let Value::Object(inner) = value {
                for (k, v) in inner {
                    if !matches!(k.as_str(), "name" | "response" | "id") && !is_empty(v) {
                        lossy.push(Lossy {
                            path: format!("{path}.{key}.{k}"),
                            what: "member without an equivalent dropped".into(),
                        });
                    }
                }
            }
            continue;
        }
        lossy.push(Lossy {
            path: format!("{path}.{key}"),
            what: "member without an equivalent dropped".into(),
        });
    }
}

/// The part without format-specific members, or `None` when it cannot move.
fn portable(part: &Part, path: &str, to: FormatName, lossy: &mut Vec<Lossy>) -> Option<Part> {
    let kind = match &part.kind {
        PartKind::Other { value } => {
            let what = value
                .get("type")
                .and_then(Value::as_str)
                .map(|t| format!("{t} part dropped (no equivalent)"))
                .unwrap_or_else(|| "part without an equivalent dropped".into());
            lossy.push(Lossy {
                path: path.into(),
                what,
            });
            return None;
        }
        PartKind::ToolResult(result) => {
            if result.is_error && matches!(to, FormatName::OpenaiChat | FormatName::OpenaiResponses)
            {
                lossy.push(Lossy {
                    path: path.into(),
                    what: format!(
                        "error flag of the tool result dropped (no equivalent in {})",
                        to.as_str()
                    ),
                });
            }
            let mut parts = Vec::new();
            for (i, inner) in result.parts.iter().enumerate() {
                let inner_path = format!("{path}.content[{i}]");
                match &inner.kind {
                    PartKind::Text { .. } | PartKind::Image(_) => {
                        report_extra(&inner.extra, &inner_path, lossy);
                        parts.push(Part::from(inner.kind.clone()));
                    }
                    _ => lossy.push(Lossy {
                        path: inner_path,
                        what: "tool result content without an equivalent dropped".into(),
                    }),
                }
            }
            PartKind::ToolResult(ToolResult {
                call_id: result.call_id.clone(),
                parts,
                is_error: result.is_error,
            })
        }
        other => other.clone(),
    };
    report_extra(&part.extra, path, lossy);
    Some(Part::from(kind))
}

/// Anthropic and Gemini take arguments as a JSON object; Anthropic ids are `[A-Za-z0-9_-]+`.
fn normalize_arguments(messages: &mut [Message], to: FormatName, lossy: &mut Vec<Lossy>) {
    let clean = |id: &str| -> String {
        if to != FormatName::Anthropic {
            return id.to_string();
        }
        let s: String = id
            .chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
                    c
                } else {
                    '_'
                }
            })
            .collect();
        if s.is_empty() {
            "_".into()
        } else {
            s
        }
    };
    // Rewritten ids must stay distinct (`c(0` and `c:0` both clean to `c_0`):
    // a rewritten id that collides with another id gets a `_<n>` suffix.
    // Results follow their call's id through `renamed`.
    // Call ids first, then ids of results that answer no call here (server-side history).
    let mut ids: Vec<String> = Vec::new();
    let mut seen: HashSet<String> = HashSet::new();
    for want_calls in [true, false] {
        for part in messages.iter().flat_map(|m| m.parts.iter()) {
            let id = match &part.kind {
                PartKind::ToolCall(call) if want_calls => &call.id,
                PartKind::ToolResult(r) if !want_calls => &r.call_id,
                _ => continue,
            };
            if seen.insert(id.clone()) {
                ids.push(id.clone());
            }
        }
    }
    let mut taken: HashSet<String> = ids.iter().filter(|id| clean(id) == **id).cloned().collect();
    let mut renamed: HashMap<String, String> = HashMap::new();
    for id in &ids {
        let fresh = clean(id);
        if fresh == *id || renamed.contains_key(id) {
            continue;
        }
        let mut unique = fresh.clone();
        let mut n = 2;
        while taken.contains(&unique) {
            unique = format!("{fresh}_{n}");
            n += 1;
        }
        taken.insert(unique.clone());
        renamed.insert(id.clone(), unique);
    }
    let clean = |id: &str| renamed.get(id).cloned().unwrap_or_else(|| clean(id));
    for msg in messages.iter_mut() {
        for part in &mut msg.parts {
            match &mut part.kind {
                PartKind::ToolCall(call) => {
                    let fresh = clean(&call.id);
                    if fresh != call.id {
                        lossy.push(Lossy {
                            path: format!("tool call {:?}", call.id),
                            what: format!("id rewritten to {fresh:?}"),
                        });
                        call.id = fresh;
                    }
                    let ok = matches!(
                        serde_json::from_str::<Value>(&call.arguments),
                        Ok(Value::Object(_))
                    );
                    if call.arguments.trim().is_empty() {
                        if to == FormatName::Anthropic {
                            call.arguments = "{}".into();
                        }
                    } else if !ok {
                        lossy.push(Lossy {
                            path: format!("tool call {:?}", call.id),
                            what:
                                "arguments are not a JSON object: wrapped as {\"arguments\": text}"
                                    .into(),
                        });
                        let mut wrapped = Map::new();
                        wrapped.insert("arguments".into(), Value::String(call.arguments.clone()));
                        call.arguments = Value::Object(wrapped).to_string();
                    }
                }
                PartKind::ToolResult(result) => result.call_id = clean(&result.call_id),
                _ => {}
            }
        }
    }
}

fn is_result(p: &Part) -> bool {
    matches!(p.kind, PartKind::ToolResult(_))
}

fn is_call(p: &Part) -> bool {
    matches!(p.kind, PartKind::ToolCall(_))
}

fn set_layout(msg: &mut Message) {
    let texts = msg.parts.iter().filter(|p| p.as_text().is_some()).count();
    let content = msg.parts.iter().filter(|p| !is_call(p)).count();
    msg.layout = if content == 1 && texts == 1 {
        Layout::Text
    } else if msg.role == Role::Assistant && texts == 0 && msg.parts.iter().all(is_call) {
        Layout::Null
    } else {
        Layout::Parts
    };
}

fn restructure_chat(messages: Vec<Message>) -> Vec<Message> {
    let mut out: Vec<Message> = Vec::new();
    for mut msg in messages {
        for part in &mut msg.parts {
            if is_call(part) {
                part.extra
                    .insert("type".into(), Value::String("function".into()));
            }
        }
        if msg.role == Role::Assistant {
            if let Some(last) = out.last_mut().filter(|l| l.role == Role::Assistant) {
                last.parts.append(&mut msg.parts);
                set_layout(last);
                continue;
            }
            set_layout(&mut msg);
            out.push(msg);
            continue;
        }
        let (results, rest): (Vec<Part>, Vec<Part>) = msg.parts.into_iter().partition(is_result);
        for result in results {
            let mut tool = neutral_message(Role::Tool, vec![result]);
            let all_text = match tool.parts.first().map(|p| &p.kind) {
                Some(PartKind::ToolResult(r)) => r.parts.iter().all(|p| p.as_text().is_some()),
                _ => true,
            };
            tool.layout = if all_text {
                Layout::Text
            } else {
                Layout::Parts
            };
            out.push(tool);
        }
        if !rest.is_empty() {
            let mut m = neutral_message(
                if msg.role == Role::Tool {
                    Role::User
                } else {
                    msg.role
                },
                rest,
            );
            set_layout(&mut m);
            out.push(m);
        }
    }
    out
}

fn restructure_responses(messages: Vec<Message>) -> Vec<Message> {
    let mut out = Vec::new();
    for msg in messages {
        let role = msg.role;
        let mut content = Vec::new();
        let flush = |content: &mut Vec<Part>, out: &mut Vec<Message>| {
            if !content.is_empty() {
                let r = if role == Role::Tool { Role::User } else { role };
                let mut m = neutral_message(r, std::mem::take(content));
                m.layout = if m.parts.len() == 1 && m.parts.iter().all(|p| p.as_text().is_some()) {
                    Layout::Text
                } else {
                    Layout::Parts
                };
                out.push(m);
            }
        };
        for part in msg.parts {
            if is_call(&part) || is_result(&part) {
                flush(&mut content, &mut out);
                let r = if is_call(&part) {
                    Role::Assistant
                } else {
                    Role::Tool
                };
                let mut item = neutral_message(r, vec![part]);
                item.layout = Layout::Absent;
                out.push(item);
            } else {
                content.push(part);
            }
        }
        flush(&mut content, &mut out);
    }
    out
}

fn restructure_turns(messages: Vec<Message>) -> Vec<Message> {
    let mut out: Vec<Message> = Vec::new();
    for mut msg in messages {
        if msg.role != Role::Assistant {
            msg.role = Role::User;
        }
        match out.last_mut().filter(|l| l.role == msg.role) {
            Some(last) => last.parts.append(&mut msg.parts),
            None => out.push(msg),
        }
    }
    for msg in &mut out {
        // Results first in a user turn (Anthropic requires it).
        let (mut results, rest): (Vec<Part>, Vec<Part>) = std::mem::take(&mut msg.parts)
            .into_iter()
            .partition(is_result);
        results.extend(rest);
        msg.parts = results;
        msg.layout = if msg.parts.len() == 1 && msg.parts.iter().all(|p| p.as_text().is_some()) {
            Layout::Text
        } else {
            Layout::Parts
        };
    }
    out
}
