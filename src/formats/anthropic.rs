//! Anthropic Messages request bodies (`POST /v1/messages`).
//!
//! `system` (a string or text blocks) becomes one [`Role::System`] message;
//! each entry of `messages` becomes one [`Message`] (`user` or `assistant`),
//! its content a string ([`Layout::Text`]) or blocks ([`Layout::Parts`]).
//! Blocks: `text` → text, `image` with a base64 source → [`Image`],
//! `tool_use` → [`ToolCall`] (`input` kept as compact JSON text),
//! `tool_result` → [`ToolResult`] (inside a user message); `thinking`,
//! `redacted_thinking`, documents, URL images and server tools stay
//! [`PartKind::Other`]. `cache_control`, `citations` and every other unknown
//! member are kept in `extra`. Images from the optical stage are emitted inside
//! the `tool_result` content, where Anthropic accepts them.
//!
//! Flags kept in a tool result's `extra`: `content: []` (content was an array)
//! or `content: null` (content was absent); `is_error: false` when it was
//! explicitly false.

use serde_json::{Map, Value};

use super::{
    as_obj, inline_image, invalid, keep_rest, req_array, req_str, rest, string_or_parts, wrong,
    Field,
};
use crate::error::Result;
use crate::model::{
    Conversation, Extra, Layout, Message, Part, PartKind, Role, ToolCall, ToolResult,
};

const OWN: [&str; 2] = ["system", "messages"];

/// Parses a Messages request body.
pub fn parse(request: &Value) -> Result<Conversation> {
    let obj = as_obj(request, "$", "a request")?;
    let messages = req_array(obj, "messages", "")?;
    let mut conv = Conversation::default();
    for (key, value) in obj {
        let slot = if OWN.contains(&key.as_str()) {
            Value::Null
        } else {
            value.clone()
        };
        conv.extra.insert(key.clone(), slot);
    }
    match obj.get("system") {
        None | Some(Value::Null) => {}
        Some(Value::String(s)) => conv.system.push(Message::text(Role::System, s.clone())),
        Some(Value::Array(blocks)) => {
            let mut parts = Vec::with_capacity(blocks.len());
            for (j, b) in blocks.iter().enumerate() {
                parts.push(parse_block(b, &format!("system[{j}]"))?);
            }
            conv.system.push(Message {
                role: Role::System,
                parts,
                layout: Layout::Parts,
                extra: Extra::new(),
            });
        }
        Some(v) => return Err(wrong("system", "a string or an array of text blocks", v)),
    }
    for (i, raw) in messages.iter().enumerate() {
        conv.messages
            .push(parse_message(raw, &format!("messages[{i}]"))?);
    }
    Ok(conv)
}

fn parse_message(raw: &Value, path: &str) -> Result<Message> {
    let obj = as_obj(raw, path, "a message")?;
    let role = match req_str(obj, "role", path)? {
        "user" => Role::User,
        "assistant" => Role::Assistant,
        other => {
            return Err(invalid(
                format!("{path}.role"),
                format!("unknown role {other:?} (expected user or assistant)"),
            ))
        }
    };
    let (layout, parts) = string_or_parts(obj, path, "content blocks", parse_block)?;
    Ok(Message {
        role,
        parts,
        layout,
        extra: rest(obj, &["role", "content"]),
    })
}

fn parse_image(obj: &Map<String, Value>, item: &Value, path: &str) -> Result<Part> {
    let source = obj.get("source").and_then(Value::as_object);
    let base64 = source.filter(|s| s.get("type").and_then(Value::as_str) == Some("base64"));
    let fields = base64.and_then(|s| {
        Some((
            s.get("media_type").and_then(Value::as_str)?,
            s.get("data").and_then(Value::as_str)?,
            s,
        ))
    });
    match fields {
        Some((media_type, data, source)) => {
            let mut extra = rest(obj, &["type", "source"]);
            keep_rest(
                &mut extra,
                "source",
                source,
                &["type", "media_type", "data"],
            );
            inline_image(media_type, data, || format!("{path}.source.data"), extra)
        }
        None => Ok(Part::from(PartKind::Other {
            value: item.clone(),
        })),
    }
}

fn parse_block(item: &Value, path: &str) -> Result<Part> {
    let obj = as_obj(item, path, "a content block")?;
    let kind = match obj.get("type") {
        Some(Value::String(s)) => s.as_str(),
        Some(v) => return Err(wrong(format!("{path}.type"), "a string", v)),
        None => return Err(invalid(format!("{path}.type"), "missing")),
    };
    match kind {
        "text" => Ok(Part {
            kind: PartKind::Text {
                text: req_str(obj, "text", path)?.to_string(),
            },
            extra: rest(obj, &["type", "text"]),
        }),
        "image" => parse_image(obj, item, path),
        "tool_use" => {
            let input = match obj.get("input") {
                Some(v @ Value::Object(_)) => v,
                Some(v) => return Err(wrong(format!("{path}.input"), "an object", v)),
                None => return Err(invalid(format!("{path}.input"), "missing")),
            };
            Ok(Part {
                kind: PartKind::ToolCall(ToolCall {
                    id: req_str(obj, "id", path)?.to_string(),
                    name: req_str(obj, "name", path)?.to_string(),
                    arguments: input.to_string(),
                }),
                extra: rest(obj, &["type", "id", "name", "input"]),
            })
        }
        "tool_result" => {
            let call_id = req_str(obj, "tool_use_id", path)?.to_string();
            let mut extra = rest(obj, &["type", "tool_use_id", "content", "is_error"]);
            let is_error = match obj.get("is_error") {
                None => false,
                Some(Value::Bool(true)) => true,
                Some(v @ Value::Bool(false)) => {
                    extra.insert("is_error".into(), v.clone());
                    false
                }
                Some(v) => return Err(wrong(format!("{path}.is_error"), "a boolean", v)),
            };
            let parts = match obj.get("content") {
                None => {
                    extra.insert("content".into(), Value::Null);
                    Vec::new()
                }
                Some(Value::String(s)) => vec![Part::text(s.clone())],
                Some(Value::Array(blocks)) => {
                    extra.insert("content".into(), Value::Array(Vec::new()));
                    let mut parts = Vec::with_capacity(blocks.len());
                    for (j, b) in blocks.iter().enumerate() {
                        let inner_path = format!("{path}.content[{j}]");
                        let inner = as_obj(b, &inner_path, "a content block")?;
                        parts.push(match inner.get("type") {
                            Some(Value::String(t)) if t == "text" => parse_block(b, &inner_path)?,
                            Some(Value::String(t)) if t == "image" => {
                                parse_image(inner, b, &inner_path)?
                            }
                            Some(Value::String(_)) => {
                                Part::from(PartKind::Other { value: b.clone() })
                            }
                            Some(v) => {
                                return Err(wrong(format!("{inner_path}.type"), "a string", v))
                            }
                            None => return Err(invalid(format!("{inner_path}.type"), "missing")),
                        });
                    }
                    parts
                }
                Some(v) => {
                    return Err(wrong(
                        format!("{path}.content"),
                        "a string or an array of content blocks",
                        v,
                    ))
                }
            };
            Ok(Part {
                kind: PartKind::ToolResult(ToolResult {
                    call_id,
                    parts,
                    is_error,
                }),
                extra,
            })
        }
        _ => Ok(Part::from(PartKind::Other {
            value: item.clone(),
        })),
    }
}

/// JSON path of a part (or its id member) of `conv.messages[message]`.
pub(crate) fn part_path(conv: &Conversation, message: usize, part: usize, field: Field) -> String {
    let base = format!("messages[{message}]");
    let Some(msg) = conv.messages.get(message) else {
        return base;
    };
    if msg.layout == Layout::Text {
        return format!("{base}.content");
    }
    let at = format!("{base}.content[{part}]");
    match (msg.parts.get(part).map(|p| &p.kind), field) {
        (Some(PartKind::ToolCall(_)), Field::Id) => format!("{at}.id"),
        (Some(PartKind::ToolResult(_)), Field::Id) => format!("{at}.tool_use_id"),
        _ => at,
    }
}

/// Emits a Messages request body.
pub fn emit(conv: &Conversation) -> Value {
    let system = emit_system(&conv.system);
    let messages: Vec<Value> = conv.messages.iter().map(emit_message).collect();
    let mut out = Map::new();
    let mut system = Some(system);
    let mut messages = Some(messages);
    for (key, value) in &conv.extra {
        match key.as_str() {
            "system" => {
                if let Some(s) = system.take() {
                    out.insert(key.clone(), s.unwrap_or(Value::Null));
                }
            }
            "messages" => {
                if let Some(m) = messages.take() {
                    out.insert(key.clone(), Value::Array(m));
                }
            }
            _ => {
                out.insert(key.clone(), value.clone());
            }
        }
    }
    if let Some(Some(s)) = system {
        out.insert("system".into(), s);
    }
    if let Some(m) = messages {
        out.insert("messages".into(), Value::Array(m));
    }
    Value::Object(out)
}

fn emit_system(system: &[Message]) -> Option<Value> {
    match system {
        [] => None,
        [only] if only.layout == Layout::Text && plain_text(&only.parts) => {
            Some(Value::String(only.text_content()))
        }
        _ => Some(Value::Array(
            system
                .iter()
                .flat_map(|m| m.parts.iter())
                .map(emit_block)
                .collect(),
        )),
    }
}

fn plain_text(parts: &[Part]) -> bool {
    parts
        .iter()
        .all(|p| p.as_text().is_some() && p.extra.is_empty())
}

fn emit_message(msg: &Message) -> Value {
    let mut out = Map::new();
    let role = if msg.role == Role::Assistant {
        "assistant"
    } else {
        "user"
    };
    out.insert("role".into(), Value::String(role.into()));
    let content = if msg.layout == Layout::Text && plain_text(&msg.parts) {
        Value::String(msg.text_content())
    } else {
        Value::Array(msg.parts.iter().map(emit_block).collect())
    };
    out.insert("content".into(), content);
    for (key, value) in &msg.extra {
        if !out.contains_key(key) {
            out.insert(key.clone(), value.clone());
        }
    }
    Value::Object(out)
}

fn emit_block(part: &Part) -> Value {
    let mut out = Map::new();
    let mut skip: &[&str] = &[];
    match &part.kind {
        PartKind::Text { text } => {
            out.insert("type".into(), Value::String("text".into()));
            out.insert("text".into(), Value::String(text.clone()));
        }
        PartKind::Image(image) => {
            out.insert("type".into(), Value::String("image".into()));
            let mut source = Map::new();
            match &image.url {
                Some(url) => {
                    source.insert("type".into(), Value::String("url".into()));
                    source.insert("url".into(), Value::String(url.clone()));
                }
                None => {
                    source.insert("type".into(), Value::String("base64".into()));
                    source.insert("media_type".into(), Value::String(image.media_type.clone()));
                    source.insert("data".into(), Value::String(image.data.clone()));
                }
            }
            if let Some(Value::Object(inner)) = part.extra.get("source") {
                for (k, v) in inner {
                    source.entry(k.clone()).or_insert_with(|| v.clone());
                }
            }
            out.insert("source".into(), Value::Object(source));
            skip = &["source"];
        }
        PartKind::ToolCall(call) => {
            out.insert("type".into(), Value::String("tool_use".into()));
            out.insert("id".into(), Value::String(call.id.clone()));
            out.insert("name".into(), Value::String(call.name.clone()));
            let input = match serde_json::from_str::<Value>(&call.arguments) {
                Ok(v @ Value::Object(_)) => v,
                _ if call.arguments.trim().is_empty() => Value::Object(Map::new()),
                _ => {
                    let mut wrapped = Map::new();
                    wrapped.insert("arguments".into(), Value::String(call.arguments.clone()));
                    Value::Object(wrapped)
                }
            };
            out.insert("input".into(), input);
        }
        PartKind::ToolResult(result) => {
            out.insert("type".into(), Value::String("tool_result".into()));
            out.insert("tool_use_id".into(), Value::String(result.call_id.clone()));
            let layout = part.extra.get("content");
            if !(result.parts.is_empty() && layout == Some(&Value::Null)) {
                let array = layout.is_some_and(Value::is_array) || !plain_text(&result.parts);
                let content = if array {
                    Value::Array(result.parts.iter().map(emit_block).collect())
                } else {
                    Value::String(result.text())
                };
                out.insert("content".into(), content);
            }
            if result.is_error {
                out.insert("is_error".into(), Value::Bool(true));
            }
            skip = &["content"];
        }
        PartKind::Other { value } => return value.clone(),
    }
    for (key, value) in &part.extra {
        if !out.contains_key(key) && !skip.contains(&key.as_str()) {
            out.insert(key.clone(), value.clone());
        }
    }
    Value::Object(out)
}

/// Most `cache_control` breakpoints Anthropic accepts in one request.
pub const MAX_BREAKPOINTS: usize = 4;

/// Marks the end of `messages[..stable]` with an ephemeral `cache_control`
/// breakpoint on its last block that can carry one (text, image, tool use,
/// tool result; not thinking or other opaque blocks, not empty text), so the
/// next request reads that prefix from the prompt cache. Returns whether a
/// breakpoint was added: not when `stable` is 0, when the block already has
/// one, or when the request already holds [`MAX_BREAKPOINTS`].
pub fn mark_breakpoint(conv: &mut Conversation, stable: usize) -> bool {
    if stable == 0 || count_breakpoints(conv) >= MAX_BREAKPOINTS {
        return false;
    }
    let Some(message) = conv.messages.get_mut(stable - 1) else {
        return false;
    };
    let cacheable = |p: &Part| match &p.kind {
        PartKind::Text { text } => !text.is_empty(),
        PartKind::Image(_) | PartKind::ToolCall(_) | PartKind::ToolResult(_) => true,
        PartKind::Other { .. } => false,
    };
    let Some(part) = message.parts.iter_mut().rev().find(|p| cacheable(p)) else {
        return false;
    };
    if part.extra.contains_key(CACHE_CONTROL) {
        return false;
    }
    let mut control = Map::new();
    control.insert("type".into(), Value::String("ephemeral".into()));
    part.extra
        .insert(CACHE_CONTROL.into(), Value::Object(control));
    true
}

/// [`mark_breakpoint`] at each of `ends` in turn (their order is their
/// priority: the request's breakpoints, the caller's included, never exceed
/// [`MAX_BREAKPOINTS`]); returns the ends that got one.
pub fn mark_breakpoints(conv: &mut Conversation, ends: &[usize]) -> Vec<usize> {
    let mut marked = Vec::new();
    for &end in ends {
        if !marked.contains(&end) && mark_breakpoint(conv, end) {
            marked.push(end);
        }
    }
    marked
}

const CACHE_CONTROL: &str = "cache_control";

/// `cache_control` members in the request: on tools, system blocks, message
/// blocks and blocks inside tool results.
fn count_breakpoints(conv: &Conversation) -> usize {
    fn in_parts(parts: &[Part]) -> usize {
        parts
            .iter()
            .map(|p| {
                let own = usize::from(p.extra.contains_key(CACHE_CONTROL));
                own + match &p.kind {
                    PartKind::ToolResult(r) => in_parts(&r.parts),
                    PartKind::Other { value } => usize::from(value.get(CACHE_CONTROL).is_some()),
                    _ => 0,
                }
            })
            .sum()
    }
    let tools = match conv.extra.get("tools") {
        Some(Value::Array(tools)) => tools
            .iter()
            .filter(|t| t.get(CACHE_CONTROL).is_some())
            .count(),
        _ => 0,
    };
    let messages: usize = conv
        .system
        .iter()
        .chain(&conv.messages)
        .map(|m| in_parts(&m.parts))
        .sum();
    tools + messages
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn round_trip_keeps_blocks_flags_and_cache_control() {
        let req = json!({
            "model": "claude-sonnet-4-5",
            "max_tokens": 1024,
            "system": [{"type": "text", "text": "sys", "cache_control": {"type": "ephemeral"}}],
            "messages": [
                {"role": "user", "content": "hi"},
                {"role": "assistant", "content": [
                    {"type": "thinking", "thinking": "hmm", "signature": "sig"},
                    {"type": "text", "text": "calling"},
                    {"type": "tool_use", "id": "toolu_1", "name": "bash", "input": {"command": "ls", "n": 1.5}}
                ]},
                {"role": "user", "content": [
                    {"type": "tool_result", "tool_use_id": "toolu_1", "content": "a", "is_error": false},
                    {"type": "tool_result", "tool_use_id": "toolu_2", "content": [{"type": "text", "text": "b"}], "is_error": true},
                    {"type": "tool_result", "tool_use_id": "toolu_3"},
                    {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "AAAA"}}
                ]}
            ],
            "stream": false
        });
        let conv = parse(&req).unwrap();
        assert_eq!(emit(&conv), req);
        assert_eq!(
            part_path(&conv, 2, 1, Field::Id),
            "messages[2].content[1].tool_use_id"
        );
    }

    fn marked(req: &Value, stable: usize) -> (bool, Value) {
        let mut conv = parse(req).unwrap();
        let added = mark_breakpoint(&mut conv, stable);
        (added, emit(&conv))
    }

    #[test]
    fn breakpoints_by_priority_never_more_than_four_with_the_callers() {
        let text = |t: &str| json!({"type": "text", "text": t});
        let own = json!({"type": "text", "text": "mine", "cache_control": {"type": "ephemeral"}});
        let req = json!({"messages": [
            {"role": "user", "content": [own.clone()]},
            {"role": "assistant", "content": [own]},
            {"role": "user", "content": [text("a")]},
            {"role": "assistant", "content": [text("b")]},
            {"role": "user", "content": [text("c")]}
        ]});
        let mut conv = parse(&req).unwrap();
        // 2 of the caller's: room for 2; a repeated end and a marked block are skipped.
        let marked = mark_breakpoints(&mut conv, &[3, 3, 1, 5, 4]);
        assert_eq!(marked, vec![3, 5]);
        assert_eq!(count_breakpoints(&conv), MAX_BREAKPOINTS);
    }

    #[test]
    fn breakpoint_goes_on_the_last_cacheable_block_before_the_boundary() {
        let req = json!({"messages": [
            {"role": "user", "content": "fix the bug"},
            {"role": "assistant", "content": [
                {"type": "tool_use", "id": "t1", "name": "bash", "input": {"cmd": "ls"}},
                {"type": "thinking", "thinking": "hmm", "signature": "s"}
            ]},
            {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1", "content": "a"}]}
        ]});
        let (added, out) = marked(&req, 2);
        assert!(added);
        let ephemeral = json!({"type": "ephemeral"});
        assert_eq!(out["messages"][1]["content"][0]["cache_control"], ephemeral);
        assert!(out["messages"][1]["content"][1]
            .get("cache_control")
            .is_none());
        // A plain-string message becomes one text block carrying the breakpoint.
        let (added, out) = marked(&req, 1);
        assert!(added);
        assert_eq!(
            out["messages"][0]["content"],
            json!([{"type": "text", "text": "fix the bug", "cache_control": ephemeral}])
        );
        // Everything else is untouched.
        let mut back = out.clone();
        back["messages"][0]["content"] = json!("fix the bug");
        assert_eq!(back, req);
    }

    #[test]
    fn no_breakpoint_at_zero_past_the_end_on_opaque_blocks_or_beyond_four() {
        let req = json!({"messages": [
            {"role": "user", "content": "hi"},
            {"role": "assistant", "content": [{"type": "thinking", "thinking": "x", "signature": "s"}]}
        ]});
        assert_eq!(marked(&req, 0), (false, req.clone()));
        assert_eq!(marked(&req, 3), (false, req.clone()));
        assert_eq!(marked(&req, 2), (false, req.clone()));
        let cc = json!({"type": "ephemeral"});
        let full = json!({
            "tools": [{"name": "a", "input_schema": {}, "cache_control": cc}],
            "system": [{"type": "text", "text": "s", "cache_control": cc}],
            "messages": [
                {"role": "user", "content": [{"type": "text", "text": "q", "cache_control": cc}]},
                {"role": "assistant", "content": [{"type": "tool_use", "id": "t", "name": "a", "input": {}}]},
                {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t",
                    "content": [{"type": "text", "text": "r", "cache_control": cc}]}]}
            ]
        });
        assert_eq!(marked(&full, 2), (false, full.clone()));
        let mut three = full.clone();
        three["tools"][0]
            .as_object_mut()
            .unwrap()
            .remove("cache_control");
        let (added, out) = marked(&three, 2);
        assert!(added);
        assert_eq!(out["messages"][1]["content"][0]["cache_control"], cc);
        // Already marked: nothing added.
        assert_eq!(marked(&out, 2), (false, out.clone()));
    }
}
