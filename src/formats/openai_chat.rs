//! OpenAI Chat Completions request bodies.
//!
//! Leading `system`/`developer` messages become [`Conversation::system`]; `tool`
//! messages become a [`ToolResult`] part; assistant `tool_calls` become
//! [`ToolCall`] parts after the content parts. Images inside tool results (from
//! the optical stage) are emitted in a `user` message after the run of tool
//! messages, since Chat Completions accepts images only in user messages.

use serde_json::{Map, Value};

use super::{
    got, inline_image, invalid, keep_rest, req_array, req_obj, req_str, rest, split_data_url,
    wrong, Field,
};
use crate::error::Result;
use crate::model::{
    Conversation, Extra, Layout, Message, Part, PartKind, Role, ToolCall, ToolResult,
};

/// Parses a Chat Completions request body.
pub fn parse(request: &Value) -> Result<Conversation> {
    let obj = request.as_object().ok_or_else(|| {
        invalid(
            "$",
            format!("a request must be a JSON object, got {}", got(request)),
        )
    })?;
    let messages = req_array(obj, "messages", "")?;
    let mut conv = Conversation::default();
    for (key, value) in obj {
        // `messages` keeps its position as a null slot.
        let slot = if key == "messages" {
            Value::Null
        } else {
            value.clone()
        };
        conv.extra.insert(key.clone(), slot);
    }
    let mut leading = true;
    for (i, raw) in messages.iter().enumerate() {
        let msg = parse_message(raw, &format!("messages[{i}]"))?;
        if leading && matches!(msg.role, Role::System | Role::Developer) {
            conv.system.push(msg);
        } else {
            leading = false;
            conv.messages.push(msg);
        }
    }
    Ok(conv)
}

fn parse_message(raw: &Value, path: &str) -> Result<Message> {
    let obj = raw
        .as_object()
        .ok_or_else(|| wrong(path, "a message (an object)", raw))?;
    let role = match obj.get("role").and_then(Value::as_str) {
        Some("system") => Role::System,
        Some("developer") => Role::Developer,
        Some("user") => Role::User,
        Some("assistant") => Role::Assistant,
        Some("tool") => Role::Tool,
        // Legacy function results: a tool turn without a call id, kept as text.
        Some("function") => Role::Tool,
        Some(other) => {
            return Err(invalid(
                format!("{path}.role"),
                format!("unknown role {other:?}"),
            ))
        }
        None => {
            let at = format!("{path}.role");
            return Err(match obj.get("role") {
                Some(v) => wrong(at, "a string", v),
                None => invalid(at, "missing"),
            });
        }
    };
    let (layout, mut parts) = match obj.get("content") {
        None => (Layout::Absent, Vec::new()),
        Some(Value::Null) => (Layout::Null, Vec::new()),
        Some(Value::String(s)) => (Layout::Text, vec![Part::text(s.clone())]),
        Some(Value::Array(items)) => {
            let mut parts = Vec::with_capacity(items.len());
            for (j, item) in items.iter().enumerate() {
                parts.push(parse_content_part(item, &format!("{path}.content[{j}]"))?);
            }
            (Layout::Parts, parts)
        }
        Some(v) => {
            return Err(wrong(
                format!("{path}.content"),
                "a string, an array of parts or null",
                v,
            ))
        }
    };
    let legacy_function = obj.get("role").and_then(Value::as_str) == Some("function");
    let mut extra = Extra::new();
    for (key, value) in obj {
        match (key.as_str(), role) {
            ("role" | "content", _) => {}
            ("tool_calls", Role::Assistant) => {}
            // A legacy function result keeps any `tool_call_id` verbatim.
            ("tool_call_id", Role::Tool) if !legacy_function => {}
            _ => {
                extra.insert(key.clone(), value.clone());
            }
        }
    }
    if role == Role::Assistant {
        if let Some(calls) = obj.get("tool_calls") {
            let calls = calls
                .as_array()
                .ok_or_else(|| wrong(format!("{path}.tool_calls"), "an array", calls))?;
            for (j, call) in calls.iter().enumerate() {
                parts.push(parse_tool_call(call, &format!("{path}.tool_calls[{j}]"))?);
            }
        }
    }
    if legacy_function {
        extra.insert("role".into(), Value::String("function".into()));
    }
    if role == Role::Tool && !legacy_function {
        let call_id = req_str(obj, "tool_call_id", path)?;
        let result = ToolResult {
            call_id: call_id.to_string(),
            parts,
            is_error: false,
        };
        parts = vec![Part::from(PartKind::ToolResult(result))];
    }
    Ok(Message {
        role,
        parts,
        layout,
        extra,
    })
}

fn parse_content_part(item: &Value, path: &str) -> Result<Part> {
    let obj = item
        .as_object()
        .ok_or_else(|| invalid(path, "a content part must be an object"))?;
    let kind = obj.get("type").and_then(Value::as_str);
    match kind {
        Some("text") => {
            let text = req_str(obj, "text", path)?;
            Ok(Part {
                kind: PartKind::Text {
                    text: text.to_string(),
                },
                extra: rest(obj, &["type", "text"]),
            })
        }
        Some("image_url") => {
            let image_url = req_obj(obj, "image_url", path)?;
            let url = req_str(image_url, "url", &format!("{path}.image_url"))?;
            // Only inline data URLs are interpreted; remote URLs stay opaque.
            if !url.starts_with("data:") {
                return Ok(Part::from(PartKind::Other {
                    value: item.clone(),
                }));
            }
            let (media_type, data) = split_data_url(url)
                .ok_or_else(|| invalid(format!("{path}.image_url.url"), "malformed data URL"))?;
            let mut extra = rest(obj, &["type", "image_url"]);
            keep_rest(&mut extra, "image_url", image_url, &["url"]);
            inline_image(media_type, data, || format!("{path}.image_url.url"), extra)
        }
        _ => Ok(Part::from(PartKind::Other {
            value: item.clone(),
        })),
    }
}

fn parse_tool_call(call: &Value, path: &str) -> Result<Part> {
    let obj = call
        .as_object()
        .ok_or_else(|| wrong(path, "a tool call (an object)", call))?;
    let id = req_str(obj, "id", path)?;
    let function = req_obj(obj, "function", path)?;
    let at = format!("{path}.function");
    let name = req_str(function, "name", &at)?;
    let arguments = req_str(function, "arguments", &at)?.to_string();
    let mut extra = rest(obj, &["id", "function"]);
    keep_rest(&mut extra, "function", function, &["name", "arguments"]);
    Ok(Part {
        kind: PartKind::ToolCall(ToolCall {
            id: id.to_string(),
            name: name.to_string(),
            arguments,
        }),
        extra,
    })
}

/// JSON path of a part (or its id member) of `conv.messages[message]`.
pub(crate) fn part_path(conv: &Conversation, message: usize, part: usize, field: Field) -> String {
    let base = format!("messages[{}]", conv.system.len() + message);
    let Some(msg) = conv.messages.get(message) else {
        return base;
    };
    let before = msg.parts.get(..part).unwrap_or(&msg.parts);
    match msg.parts.get(part).map(|p| &p.kind) {
        Some(PartKind::ToolCall(_)) => {
            let n = before
                .iter()
                .filter(|p| matches!(p.kind, PartKind::ToolCall(_)))
                .count();
            match field {
                Field::Part => format!("{base}.tool_calls[{n}]"),
                Field::Id => format!("{base}.tool_calls[{n}].id"),
            }
        }
        Some(PartKind::ToolResult(_)) => match field {
            Field::Part => base,
            Field::Id => format!("{base}.tool_call_id"),
        },
        _ if msg.layout == Layout::Text => format!("{base}.content"),
        _ => {
            let n = before
                .iter()
                .filter(|p| !matches!(p.kind, PartKind::ToolCall(_) | PartKind::ToolResult(_)))
                .count();
            format!("{base}.content[{n}]")
        }
    }
}

/// Emits a Chat Completions request body.
pub fn emit(conv: &Conversation) -> Value {
    emit_indexed(conv).0
}

/// Emits a Chat Completions request body, and where each of `conv.messages` is in it.
pub fn emit_indexed(conv: &Conversation) -> (Value, Vec<usize>) {
    let mut at = Vec::with_capacity(conv.messages.len());
    let mut messages = Vec::with_capacity(conv.system.len() + conv.messages.len());
    for msg in &conv.system {
        messages.push(emit_message(msg, &mut Vec::new()));
    }
    let mut pending_images: Vec<Value> = Vec::new();
    for (i, msg) in conv.messages.iter().enumerate() {
        at.push(messages.len());
        messages.push(emit_message(msg, &mut pending_images));
        let next_is_tool = conv
            .messages
            .get(i + 1)
            .is_some_and(|m| m.role == Role::Tool);
        if !pending_images.is_empty() && !next_is_tool {
            let mut user = Map::new();
            user.insert("role".into(), Value::String("user".into()));
            user.insert(
                "content".into(),
                Value::Array(std::mem::take(&mut pending_images)),
            );
            messages.push(Value::Object(user));
        }
    }
    let mut out = Map::new();
    let mut placed = false;
    for (key, value) in &conv.extra {
        if key == "messages" {
            out.insert(key.clone(), Value::Array(std::mem::take(&mut messages)));
            placed = true;
        } else {
            out.insert(key.clone(), value.clone());
        }
    }
    if !placed {
        out.insert("messages".into(), Value::Array(messages));
    }
    (Value::Object(out), at)
}

fn role_name(role: Role) -> &'static str {
    match role {
        Role::System => "system",
        Role::Developer => "developer",
        Role::User => "user",
        Role::Assistant => "assistant",
        Role::Tool => "tool",
    }
}

/// Emits one message; images found in tool results are moved to `images`.
fn emit_message(msg: &Message, images: &mut Vec<Value>) -> Value {
    let mut out = Map::new();
    out.insert("role".into(), Value::String(role_name(msg.role).into()));
    let mut content: Vec<&Part> = Vec::new();
    let mut calls: Vec<Value> = Vec::new();
    let mut call_id: Option<&str> = None;
    for part in &msg.parts {
        match &part.kind {
            PartKind::ToolCall(call) => calls.push(emit_tool_call(call, &part.extra)),
            PartKind::ToolResult(result) => {
                call_id = Some(&result.call_id);
                for inner in &result.parts {
                    if matches!(inner.kind, PartKind::Image(_)) {
                        images.push(emit_content_part(inner));
                    } else {
                        content.push(inner);
                    }
                }
            }
            _ => content.push(part),
        }
    }
    let content_value = match msg.layout {
        Layout::Absent if content.is_empty() => None,
        Layout::Null if content.is_empty() => Some(Value::Null),
        Layout::Text
            if content
                .iter()
                .all(|p| p.as_text().is_some() && p.extra.is_empty()) =>
        {
            let text: Vec<&str> = content.iter().filter_map(|p| p.as_text()).collect();
            Some(Value::String(text.join("\n")))
        }
        _ => Some(Value::Array(
            content.iter().map(|p| emit_content_part(p)).collect(),
        )),
    };
    if let Some(value) = content_value {
        out.insert("content".into(), value);
    }
    if !calls.is_empty() {
        out.insert("tool_calls".into(), Value::Array(calls));
    }
    if let Some(id) = call_id {
        out.insert("tool_call_id".into(), Value::String(id.into()));
    }
    for (key, value) in &msg.extra {
        out.insert(key.clone(), value.clone());
    }
    Value::Object(out)
}

fn emit_content_part(part: &Part) -> Value {
    let mut out = Map::new();
    match &part.kind {
        PartKind::Text { text } => {
            out.insert("type".into(), Value::String("text".into()));
            out.insert("text".into(), Value::String(text.clone()));
        }
        PartKind::Image(image) => {
            out.insert("type".into(), Value::String("image_url".into()));
            let mut inner = Map::new();
            let url = match &image.url {
                Some(url) => url.clone(),
                None => format!("data:{};base64,{}", image.media_type, image.data),
            };
            inner.insert("url".into(), Value::String(url));
            if let Some(Value::Object(extra)) = part.extra.get("image_url") {
                for (k, v) in extra {
                    inner.insert(k.clone(), v.clone());
                }
            }
            out.insert("image_url".into(), Value::Object(inner));
        }
        PartKind::Other { value } => return value.clone(),
        // Calls and results never appear inside content; emit them as text so nothing is lost.
        PartKind::ToolCall(_) | PartKind::ToolResult(_) => {
            out.insert("type".into(), Value::String("text".into()));
            out.insert(
                "text".into(),
                Value::String(serde_json::to_string(&part.kind).unwrap_or_default()),
            );
        }
    }
    for (key, value) in &part.extra {
        if key != "image_url" || !matches!(part.kind, PartKind::Image(_)) {
            out.insert(key.clone(), value.clone());
        }
    }
    Value::Object(out)
}

fn emit_tool_call(call: &ToolCall, extra: &Extra) -> Value {
    let mut out = Map::new();
    out.insert("id".into(), Value::String(call.id.clone()));
    let mut function = Map::new();
    function.insert("name".into(), Value::String(call.name.clone()));
    function.insert("arguments".into(), Value::String(call.arguments.clone()));
    for (key, value) in extra {
        if key == "function" {
            if let Value::Object(fn_extra) = value {
                for (k, v) in fn_extra {
                    function.insert(k.clone(), v.clone());
                }
            }
        } else {
            out.insert(key.clone(), value.clone());
        }
    }
    out.insert("function".into(), Value::Object(function));
    Value::Object(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn round_trip_keeps_unknown_members_at_every_depth() {
        let req = json!({
            "model": "gpt-4o",
            "temperature": 0.2,
            "messages": [
                {"role": "system", "content": "be brief", "name": "sys"},
                {"role": "user", "content": [
                    {"type": "text", "text": "hi", "cache_control": {"type": "ephemeral"}},
                    {"type": "image_url", "image_url": {"url": "data:image/png;base64,AAAA", "detail": "low"}},
                    {"type": "input_audio", "input_audio": {"data": "x", "format": "wav"}}
                ]},
                {"role": "assistant", "content": null, "refusal": null, "tool_calls": [
                    {"id": "c1", "type": "function", "function": {"name": "bash", "arguments": "{\"command\":\"ls\"}"}}
                ]},
                {"role": "tool", "tool_call_id": "c1", "content": "a\nb", "x_meta": 1},
                {"role": "assistant", "content": "done"}
            ],
            "tools": [{"type": "function", "function": {"name": "bash", "parameters": {}}}],
            "vendor_extra": {"deep": [1, {"x": true}]}
        });
        let conv = parse(&req).unwrap();
        assert_eq!(conv.system.len(), 1);
        assert_eq!(conv.steps().len(), 1);
        assert_eq!(emit(&conv), req);
    }

    #[test]
    fn errors_name_the_offending_field() {
        let e = parse(&json!({"messages": [{"role": "user", "content": 3}]})).unwrap_err();
        assert_eq!(e.path, "messages[0].content");
        let e = parse(&json!({"messages": [{"role": "robot"}]})).unwrap_err();
        assert_eq!(e.path, "messages[0].role");
        let e = parse(&json!({"messages": [{"role": "tool", "content": "x"}]})).unwrap_err();
        assert_eq!(e.path, "messages[0].tool_call_id");
        let e = parse(&json!({"messages": {}})).unwrap_err();
        assert_eq!(e.path, "messages");
    }

    #[test]
    fn images_in_tool_results_move_to_a_user_message_after_the_tool_run() {
        let req = json!({"messages": [
            {"role": "assistant", "content": null, "tool_calls": [
                {"id": "a", "type": "function", "function": {"name": "f", "arguments": "{}"}},
                {"id": "b", "type": "function", "function": {"name": "f", "arguments": "{}"}}
            ]},
            {"role": "tool", "tool_call_id": "a", "content": "x"},
            {"role": "tool", "tool_call_id": "b", "content": "y"}
        ]});
        let mut conv = parse(&req).unwrap();
        let at = conv.observations()[0];
        let image = Part::from(PartKind::Image(crate::model::Image {
            media_type: "image/png".into(),
            data: "QUJD".into(),
            url: None,
            width: 1,
            height: 1,
        }));
        conv.tool_result_mut(at).unwrap().parts.push(image);
        let out = emit(&conv);
        let msgs = out["messages"].as_array().unwrap();
        assert_eq!(msgs.len(), 4);
        assert_eq!(msgs[1]["role"], "tool");
        assert_eq!(msgs[2]["role"], "tool");
        assert_eq!(msgs[3]["role"], "user");
        assert_eq!(
            msgs[3]["content"][0]["image_url"]["url"],
            "data:image/png;base64,QUJD"
        );
    }
}
