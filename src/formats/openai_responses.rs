//! OpenAI Responses request bodies (`POST /v1/responses`).
//!
//! Every `input` item becomes one [`Message`]:
//! * a `message` item (with or without `"type": "message"`) keeps its role and
//!   its content as a string ([`Layout::Text`]) or parts ([`Layout::Parts`]);
//!   leading `system`/`developer` messages go to [`Conversation::system`];
//! * every other item is a message with [`Layout::Absent`] holding one part:
//!   `function_call` → [`ToolCall`] (assistant), `function_call_output` →
//!   [`ToolResult`] (tool), anything else (`reasoning`, `item_reference`,
//!   built-in tool calls, …) → [`PartKind::Other`] kept verbatim (role tool for
//!   `*_output` items, assistant otherwise).
//!
//! `instructions` (a string) becomes `system[0]`. Images inside a tool result
//! are emitted as `input_image` parts of the `function_call_output` output.
//!
//! Flags kept in `extra`: a text part's `type` when it is not the role's default
//! (`output_text` for assistant, `input_text` otherwise); `output: []` on a tool
//! result whose output was an array.

use serde_json::{Map, Value};

use super::{
    as_obj, inline_image, invalid, req_str, rest, split_data_url, string_or_parts, wrong, Field,
};
use crate::error::Result;
use crate::model::{
    Conversation, Extra, Layout, Message, Part, PartKind, Role, ToolCall, ToolResult,
};

/// Parses a Responses request body.
pub fn parse(request: &Value) -> Result<Conversation> {
    let obj = as_obj(request, "$", "a request")?;
    let mut conv = Conversation::default();
    if let Some(Value::String(text)) = obj.get("instructions") {
        conv.system.push(Message::text(Role::System, text.clone()));
    }
    for (key, value) in obj {
        let slot = match (key.as_str(), value) {
            ("input", Value::String(_)) => Value::String("text".into()),
            ("input", Value::Array(_)) => Value::Null,
            ("input", v) => return Err(wrong("input", "a string or an array of items", v)),
            ("instructions", Value::String(_)) => Value::Bool(true),
            ("instructions", v @ (Value::Bool(_) | Value::Number(_))) => {
                return Err(wrong("instructions", "a string", v))
            }
            _ => value.clone(),
        };
        conv.extra.insert(key.clone(), slot);
    }
    match obj.get("input") {
        Some(Value::String(text)) => conv.messages.push(Message::text(Role::User, text.clone())),
        Some(Value::Array(items)) => {
            let mut leading = true;
            for (k, item) in items.iter().enumerate() {
                let msg = parse_item(item, &format!("input[{k}]"))?;
                if leading
                    && matches!(msg.role, Role::System | Role::Developer)
                    && msg.layout != Layout::Absent
                {
                    conv.system.push(msg);
                } else {
                    leading = false;
                    conv.messages.push(msg);
                }
            }
        }
        _ => {}
    }
    Ok(conv)
}

fn parse_role(obj: &Map<String, Value>, path: &str) -> Result<Role> {
    match req_str(obj, "role", path)? {
        "user" => Ok(Role::User),
        "assistant" => Ok(Role::Assistant),
        "system" => Ok(Role::System),
        "developer" => Ok(Role::Developer),
        other => Err(invalid(
            format!("{path}.role"),
            format!("unknown role {other:?} (expected user, assistant, system or developer)"),
        )),
    }
}

fn standalone(role: Role, part: Part) -> Message {
    Message {
        role,
        parts: vec![part],
        layout: Layout::Absent,
        extra: Extra::new(),
    }
}

fn parse_item(item: &Value, path: &str) -> Result<Message> {
    let obj = as_obj(item, path, "an input item")?;
    let kind = match obj.get("type") {
        None => None,
        Some(Value::String(s)) => Some(s.as_str()),
        Some(v) => return Err(wrong(format!("{path}.type"), "a string", v)),
    };
    match kind {
        None | Some("message") => {
            let role = parse_role(obj, path)?;
            let (layout, parts) = string_or_parts(obj, path, "content parts", |p, at| {
                parse_content(p, at, role)
            })?;
            Ok(Message {
                role,
                parts,
                layout,
                extra: rest(obj, &["role", "content"]),
            })
        }
        Some("function_call") => {
            let call = ToolCall {
                id: req_str(obj, "call_id", path)?.to_string(),
                name: req_str(obj, "name", path)?.to_string(),
                arguments: req_str(obj, "arguments", path)?.to_string(),
            };
            Ok(standalone(
                Role::Assistant,
                Part {
                    kind: PartKind::ToolCall(call),
                    extra: rest(obj, &["type", "call_id", "name", "arguments"]),
                },
            ))
        }
        Some("function_call_output") => {
            let call_id = req_str(obj, "call_id", path)?.to_string();
            let mut extra = rest(obj, &["type", "call_id", "output"]);
            let parts = match obj.get("output") {
                Some(Value::String(s)) => vec![Part::text(s.clone())],
                Some(Value::Array(items)) => {
                    extra.insert("output".into(), Value::Array(Vec::new()));
                    let mut parts = Vec::with_capacity(items.len());
                    for (j, p) in items.iter().enumerate() {
                        parts.push(parse_content(
                            p,
                            &format!("{path}.output[{j}]"),
                            Role::User,
                        )?);
                    }
                    parts
                }
                Some(v) => {
                    return Err(wrong(
                        format!("{path}.output"),
                        "a string or an array of content parts",
                        v,
                    ))
                }
                None => return Err(invalid(format!("{path}.output"), "missing")),
            };
            let result = ToolResult {
                call_id,
                parts,
                is_error: false,
            };
            Ok(standalone(
                Role::Tool,
                Part {
                    kind: PartKind::ToolResult(result),
                    extra,
                },
            ))
        }
        Some(other) => {
            let role = if other.ends_with("_output") {
                Role::Tool
            } else {
                Role::Assistant
            };
            Ok(standalone(
                role,
                Part::from(PartKind::Other {
                    value: item.clone(),
                }),
            ))
        }
    }
}

fn default_text_type(role: Role) -> &'static str {
    if role == Role::Assistant {
        "output_text"
    } else {
        "input_text"
    }
}

fn parse_content(item: &Value, path: &str, role: Role) -> Result<Part> {
    let obj = as_obj(item, path, "a content part")?;
    match obj.get("type").and_then(Value::as_str) {
        Some(kind @ ("input_text" | "output_text")) => {
            let text = req_str(obj, "text", path)?;
            let mut extra = rest(obj, &["type", "text"]);
            if kind != default_text_type(role) {
                extra.insert("type".into(), Value::String(kind.into()));
            }
            Ok(Part {
                kind: PartKind::Text {
                    text: text.to_string(),
                },
                extra,
            })
        }
        Some("input_image") => {
            let inline = obj
                .get("image_url")
                .and_then(Value::as_str)
                .and_then(split_data_url);
            match inline {
                Some((media_type, data)) => inline_image(
                    media_type,
                    data,
                    || format!("{path}.image_url"),
                    rest(obj, &["type", "image_url"]),
                ),
                // Remote URLs and file ids stay opaque.
                None => Ok(Part::from(PartKind::Other {
                    value: item.clone(),
                })),
            }
        }
        Some(_) => Ok(Part::from(PartKind::Other {
            value: item.clone(),
        })),
        None => Err(invalid(format!("{path}.type"), "missing")),
    }
}

/// Number of `input` items the leading system messages occupy.
fn system_items(conv: &Conversation) -> usize {
    let from_instructions =
        conv.extra.get("instructions") == Some(&Value::Bool(true)) && !conv.system.is_empty();
    conv.system.len() - usize::from(from_instructions)
}

fn item_count(msg: &Message) -> usize {
    if msg.layout == Layout::Absent {
        msg.parts.len()
    } else {
        1
    }
}

/// JSON path of `conv.messages[index]` (its first item).
pub(crate) fn message_path(conv: &Conversation, index: usize) -> String {
    let k = system_items(conv)
        + conv
            .messages
            .iter()
            .take(index)
            .map(item_count)
            .sum::<usize>();
    format!("input[{k}]")
}

/// JSON path of a part (or its id member) of `conv.messages[message]`.
pub(crate) fn part_path(conv: &Conversation, message: usize, part: usize, field: Field) -> String {
    let base = message_path(conv, message);
    let Some(msg) = conv.messages.get(message) else {
        return base;
    };
    if msg.layout == Layout::Absent {
        let k = system_items(conv)
            + conv
                .messages
                .iter()
                .take(message)
                .map(item_count)
                .sum::<usize>()
            + part;
        return match field {
            Field::Part => format!("input[{k}]"),
            Field::Id => format!("input[{k}].call_id"),
        };
    }
    if msg.layout == Layout::Text {
        return format!("{base}.content");
    }
    format!("{base}.content[{part}]")
}

/// Emits a Responses request body.
pub fn emit(conv: &Conversation) -> Value {
    emit_indexed(conv).0
}

/// Emits a Responses request body, and where each of `conv.messages` is in
/// its `input` (the first item the message emits).
pub fn emit_indexed(conv: &Conversation) -> (Value, Vec<usize>) {
    let instructions_slot = conv.extra.get("instructions") == Some(&Value::Bool(true));
    let mut system = conv.system.iter();
    let instructions = if instructions_slot {
        system.next().map(Message::text_content)
    } else {
        None
    };
    let mut items = Vec::new();
    for msg in system {
        emit_items(msg, &mut items);
    }
    let mut at = Vec::with_capacity(conv.messages.len());
    for msg in &conv.messages {
        at.push(items.len());
        emit_items(msg, &mut items);
    }
    let string_input = conv.extra.get("input") == Some(&Value::String("text".into()));
    let input = match (
        string_input,
        conv.system.len() == usize::from(instructions.is_some()),
    ) {
        (true, true) => match conv.messages.as_slice() {
            [only] if is_plain_user_text(only) => Value::String(only.text_content()),
            _ => Value::Array(items),
        },
        _ => Value::Array(items),
    };
    let mut out = Map::new();
    let mut input = Some(input);
    let mut instructions = instructions;
    for (key, value) in &conv.extra {
        match key.as_str() {
            "input" => {
                if let Some(v) = input.take() {
                    out.insert(key.clone(), v);
                }
            }
            "instructions" if instructions_slot => {
                if let Some(text) = instructions.take() {
                    out.insert(key.clone(), Value::String(text));
                }
            }
            _ => {
                out.insert(key.clone(), value.clone());
            }
        }
    }
    if let Some(Value::Array(items)) = input {
        if !items.is_empty() {
            out.insert("input".into(), Value::Array(items));
        }
    }
    (Value::Object(out), at)
}

fn is_plain_user_text(msg: &Message) -> bool {
    msg.role == Role::User
        && msg.layout == Layout::Text
        && msg.extra.is_empty()
        && msg
            .parts
            .iter()
            .all(|p| p.as_text().is_some() && p.extra.is_empty())
}

fn role_name(role: Role) -> &'static str {
    match role {
        Role::System => "system",
        Role::Developer => "developer",
        Role::Assistant => "assistant",
        Role::User | Role::Tool => "user",
    }
}

/// Emits one message as one or more items.
fn emit_items(msg: &Message, items: &mut Vec<Value>) {
    let mut content: Vec<&Part> = Vec::new();
    for part in &msg.parts {
        match &part.kind {
            PartKind::ToolCall(_) | PartKind::ToolResult(_) => {
                if !content.is_empty() {
                    items.push(emit_message(msg, &std::mem::take(&mut content)));
                }
                items.push(emit_standalone(part, msg.role));
            }
            PartKind::Other { value } if msg.layout == Layout::Absent => {
                items.push(value.clone());
            }
            _ => content.push(part),
        }
    }
    let has_items = msg
        .parts
        .iter()
        .any(|p| matches!(p.kind, PartKind::ToolCall(_) | PartKind::ToolResult(_)));
    if !content.is_empty() || (msg.layout != Layout::Absent && !has_items) {
        items.push(emit_message(msg, &content));
    }
}

fn emit_message(msg: &Message, content: &[&Part]) -> Value {
    let mut out = Map::new();
    out.insert("role".into(), Value::String(role_name(msg.role).into()));
    let plain = content
        .iter()
        .all(|p| p.as_text().is_some() && p.extra.is_empty());
    let value = if msg.layout != Layout::Parts && plain {
        let texts: Vec<&str> = content.iter().filter_map(|p| p.as_text()).collect();
        Value::String(texts.join("\n"))
    } else {
        Value::Array(
            content
                .iter()
                .map(|p| emit_content(p, default_text_type(msg.role)))
                .collect(),
        )
    };
    out.insert("content".into(), value);
    for (key, value) in &msg.extra {
        if key != "role" && key != "content" {
            out.insert(key.clone(), value.clone());
        }
    }
    Value::Object(out)
}

fn emit_content(part: &Part, text_type: &str) -> Value {
    let mut out = Map::new();
    match &part.kind {
        PartKind::Text { text } => {
            let kind = part
                .extra
                .get("type")
                .and_then(Value::as_str)
                .unwrap_or(text_type);
            out.insert("type".into(), Value::String(kind.into()));
            out.insert("text".into(), Value::String(text.clone()));
        }
        PartKind::Image(image) => {
            out.insert("type".into(), Value::String("input_image".into()));
            let url = match &image.url {
                Some(url) => url.clone(),
                None => format!("data:{};base64,{}", image.media_type, image.data),
            };
            out.insert("image_url".into(), Value::String(url));
        }
        PartKind::Other { value } => return value.clone(),
        PartKind::ToolCall(_) | PartKind::ToolResult(_) => {
            out.insert("type".into(), Value::String(text_type.into()));
            out.insert(
                "text".into(),
                Value::String(serde_json::to_string(&part.kind).unwrap_or_default()),
            );
        }
    }
    for (key, value) in &part.extra {
        if !out.contains_key(key) {
            out.insert(key.clone(), value.clone());
        }
    }
    Value::Object(out)
}

fn emit_standalone(part: &Part, role: Role) -> Value {
    let mut out = Map::new();
    match &part.kind {
        PartKind::ToolCall(call) => {
            out.insert("type".into(), Value::String("function_call".into()));
            out.insert("call_id".into(), Value::String(call.id.clone()));
            out.insert("name".into(), Value::String(call.name.clone()));
            out.insert("arguments".into(), Value::String(call.arguments.clone()));
        }
        PartKind::ToolResult(result) => {
            out.insert("type".into(), Value::String("function_call_output".into()));
            out.insert("call_id".into(), Value::String(result.call_id.clone()));
            let array = part.extra.get("output").is_some_and(Value::is_array)
                || result
                    .parts
                    .iter()
                    .any(|p| !(p.as_text().is_some() && p.extra.is_empty()));
            let output = if array {
                Value::Array(
                    result
                        .parts
                        .iter()
                        .map(|p| emit_content(p, "input_text"))
                        .collect(),
                )
            } else {
                Value::String(result.text())
            };
            out.insert("output".into(), output);
        }
        _ => return emit_content(part, default_text_type(role)),
    }
    for (key, value) in &part.extra {
        if !out.contains_key(key) {
            out.insert(key.clone(), value.clone());
        }
    }
    Value::Object(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn round_trip_keeps_items_and_unknown_members() {
        let req = json!({
            "model": "gpt-5",
            "instructions": "be brief",
            "input": [
                {"role": "developer", "content": "dev"},
                {"role": "user", "content": [
                    {"type": "input_text", "text": "hi"},
                    {"type": "input_image", "image_url": "data:image/png;base64,AAAA", "detail": "low"},
                    {"type": "input_image", "file_id": "file-1"}
                ]},
                {"type": "reasoning", "id": "rs_1", "summary": [], "encrypted_content": "xx"},
                {"type": "message", "id": "msg_1", "role": "assistant", "status": "completed",
                 "content": [{"type": "output_text", "text": "ok", "annotations": []}]},
                {"type": "function_call", "id": "fc_1", "call_id": "c1", "name": "bash", "arguments": "{}", "status": "completed"},
                {"type": "function_call_output", "call_id": "c1", "output": "done"},
                {"type": "function_call_output", "call_id": "c2", "output": [{"type": "input_text", "text": "x"}]}
            ],
            "store": false,
            "reasoning": {"effort": "low"}
        });
        let conv = parse(&req).unwrap();
        assert_eq!(conv.system.len(), 2);
        assert_eq!(conv.messages.len(), 6);
        assert_eq!(emit(&conv), req);
        assert_eq!(part_path(&conv, 4, 0, Field::Id), "input[5].call_id");
    }

    #[test]
    fn string_input_stays_a_string() {
        let req = json!({"model": "m", "input": "hello"});
        let conv = parse(&req).unwrap();
        assert_eq!(conv.messages[0].text_content(), "hello");
        assert_eq!(emit(&conv), req);
    }
}
