//! Gemini `generateContent` request bodies.
//!
//! `systemInstruction` (or `system_instruction`) becomes one [`Role::System`]
//! message; each entry of `contents` one [`Message`] (`user` → user, `model` →
//! assistant, `function`/`tool` → tool) with [`Layout::Parts`]. Parts: `text` →
//! text (thought parts stay [`PartKind::Other`]), `inlineData`/`inline_data` →
//! [`Image`], `functionCall` → [`ToolCall`] (`args` as compact JSON text, `""`
//! when absent), `functionResponse` → [`ToolResult`]; anything else (fileData,
//! executableCode, …) stays [`PartKind::Other`]. Every other member
//! (`thoughtSignature`, `generationConfig`, `safetySettings`, …) is kept.
//!
//! Gemini calls often carry no `id`: such a call gets the id `tlgem_<m>_<p>`
//! (message and part index), never emitted, and a response without an id
//! answers the earliest unanswered call of the same name.
//!
//! A response `{"output": text}` (or `{"error": text}`, which sets
//! `is_error`) becomes that text; any other response becomes its JSON text and
//! is emitted back as JSON when it still parses (else as `{"output": text}`).
//!
//! Flags in `extra`: the snake_case container name (`inline_data`,
//! `function_call`, `function_response`) holding the inner unknown members;
//! the camelCase one only when there are inner unknown members; inside it,
//! `name` when it is not the answered call's name, `id: null` when a response
//! without an id answered a call that has one, and `response` as
//! `{key: null}` (a one-string response under another key) or `true` (JSON
//! response). A message's `role` flag is `null` when the role was absent and
//! the role string when it was `function` or `tool`. Images from the optical
//! stage are emitted as `inlineData` parts in a user turn after the turn
//! holding the `functionResponse`.

use serde_json::{Map, Value};

use super::{as_obj, inline_image, invalid, req_array, req_str, rest, wrong, Field};
use crate::error::Result;
use crate::model::{
    Conversation, Extra, Layout, Message, Part, PartKind, Role, ToolCall, ToolResult,
};

const OWN: [&str; 3] = ["contents", "systemInstruction", "system_instruction"];

/// Prefix of ids given to calls that carry none.
const SYNTHETIC: &str = "tlgem_";

/// Whether `id` was made up by [`parse`] (and so is not emitted).
pub fn is_synthetic_id(id: &str) -> bool {
    id.strip_prefix(SYNTHETIC).is_some_and(|rest| {
        let mut it = rest.split('_');
        let ok = |s: Option<&str>| {
            s.is_some_and(|s| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit()))
        };
        ok(it.next()) && ok(it.next()) && it.next().is_none()
    })
}

/// An explicit id shaped like a made-up one is kept in the inner flags so it is emitted.
fn keep_explicit_id(inner_extra: &mut Extra, inner: &Map<String, Value>) {
    if let Some(Value::String(id)) = inner.get("id") {
        if is_synthetic_id(id) {
            inner_extra.insert("id".into(), Value::String(id.clone()));
        }
    }
}

/// The function calls of the request so far, `(name, id, answered)`: Gemini
/// answers a call by name, so a response takes the id of the oldest unanswered
/// call of its name.
struct PendingCalls {
    calls: Vec<(String, String, bool)>,
}

impl PendingCalls {
    fn answer(&mut self, name: &str) -> Option<String> {
        let entry = self
            .calls
            .iter_mut()
            .find(|(n, _, answered)| !answered && n == name)?;
        entry.2 = true;
        Some(entry.1.clone())
    }

    fn answer_id(&mut self, id: &str) {
        if let Some(entry) = self.calls.iter_mut().find(|(_, i, a)| !a && i == id) {
            entry.2 = true;
        }
    }

    fn name_of(&self, id: &str) -> Option<&str> {
        self.calls
            .iter()
            .find(|(_, i, _)| i == id)
            .map(|(n, _, _)| n.as_str())
    }
}

/// Parses a `generateContent` request body.
pub fn parse(request: &Value) -> Result<Conversation> {
    let obj = as_obj(request, "$", "a request")?;
    let contents = req_array(obj, "contents", "")?;
    let mut conv = Conversation::default();
    let mut log = PendingCalls { calls: Vec::new() };
    for (key, value) in obj {
        let own = OWN.contains(&key.as_str()) && (key == "contents" || value.is_object());
        conv.extra
            .insert(key.clone(), if own { Value::Null } else { value.clone() });
        if own && key != "contents" {
            let content = as_obj(value, key, "a system instruction")?;
            let parts = parse_parts(content, key, usize::MAX, &mut log)?;
            conv.system.push(Message {
                role: Role::System,
                parts,
                layout: Layout::Parts,
                extra: rest(content, &["parts"]),
            });
        }
    }
    for (i, raw) in contents.iter().enumerate() {
        let path = format!("contents[{i}]");
        let content = as_obj(raw, &path, "a content")?;
        let mut extra = rest(content, &["role", "parts"]);
        let role = match content.get("role") {
            None => {
                extra.insert("role".into(), Value::Null);
                Role::User
            }
            Some(Value::String(r)) => match r.as_str() {
                "user" => Role::User,
                "model" => Role::Assistant,
                "function" | "tool" => {
                    extra.insert("role".into(), Value::String(r.clone()));
                    Role::Tool
                }
                other => {
                    return Err(invalid(
                        format!("{path}.role"),
                        format!("unknown role {other:?} (expected user or model)"),
                    ))
                }
            },
            Some(v) => return Err(wrong(format!("{path}.role"), "a string", v)),
        };
        let parts = parse_parts(content, &path, i, &mut log)?;
        conv.messages.push(Message {
            role,
            parts,
            layout: Layout::Parts,
            extra,
        });
    }
    Ok(conv)
}

fn parse_parts(
    content: &Map<String, Value>,
    path: &str,
    index: usize,
    log: &mut PendingCalls,
) -> Result<Vec<Part>> {
    let items = req_array(content, "parts", path)?;
    let mut parts = Vec::with_capacity(items.len());
    for (j, item) in items.iter().enumerate() {
        parts.push(parse_part(
            item,
            &format!("{path}.parts[{j}]"),
            (index, j),
            log,
        )?);
    }
    Ok(parts)
}

/// The container member of a part (`camel` or `snake` spelling) and whether it was snake_case.
fn container<'a>(
    obj: &'a Map<String, Value>,
    camel: &str,
    snake: &str,
    path: &str,
) -> Result<Option<(&'a Value, bool)>> {
    match (obj.get(camel), obj.get(snake)) {
        (Some(_), Some(_)) => Err(invalid(
            format!("{path}.{snake}"),
            format!("{camel} and {snake} are the same member; give one"),
        )),
        (Some(v), None) => Ok(Some((v, false))),
        (None, Some(v)) => Ok(Some((v, true))),
        (None, None) => Ok(None),
    }
}

fn flag(extra: &mut Extra, snake: bool, camel: &str, snake_name: &str, inner: Extra) {
    if snake {
        extra.insert(snake_name.into(), Value::Object(inner));
    } else if !inner.is_empty() {
        extra.insert(camel.into(), Value::Object(inner));
    }
}

/// A part the model does not read (a thought, inline data without its
/// fields, an unknown kind), kept verbatim.
fn other(item: &Value) -> Part {
    Part::from(PartKind::Other {
        value: item.clone(),
    })
}

fn parse_part(
    item: &Value,
    path: &str,
    at: (usize, usize),
    log: &mut PendingCalls,
) -> Result<Part> {
    let obj = as_obj(item, path, "a part")?;
    if let Some(text) = obj.get("text") {
        let Value::String(text) = text else {
            return Err(invalid(format!("{path}.text"), "must be a string"));
        };
        if obj.get("thought") == Some(&Value::Bool(true)) {
            return Ok(other(item));
        }
        return Ok(Part {
            kind: PartKind::Text { text: text.clone() },
            extra: rest(obj, &["text"]),
        });
    }
    if let Some((value, snake)) = container(obj, "inlineData", "inline_data", path)? {
        let data = Member::of(
            value,
            snake,
            ("inlineData", "inline_data"),
            path,
            "inline data",
        )?;
        return parse_inline_data(item, obj, &data);
    }
    if let Some((value, snake)) = container(obj, "functionCall", "function_call", path)? {
        let call = Member::of(
            value,
            snake,
            ("functionCall", "function_call"),
            path,
            "a function call",
        )?;
        return parse_function_call(obj, &call, at, log);
    }
    if let Some((value, snake)) = container(obj, "functionResponse", "function_response", path)? {
        let names = ("functionResponse", "function_response");
        let response = Member::of(value, snake, names, path, "a function response")?;
        return parse_function_response(obj, &response, at, log);
    }
    Ok(other(item))
}

/// A part's container member (`inlineData`, `functionCall`, …) read as an object.
struct Member<'a> {
    /// Its name as spelled (camelCase or snake_case).
    key: &'static str,
    /// Its camelCase and snake_case names.
    names: (&'static str, &'static str),
    /// Whether it was spelled snake_case.
    snake: bool,
    /// Its path (`contents[0].parts[1].functionCall`).
    at: String,
    inner: &'a Map<String, Value>,
}

impl<'a> Member<'a> {
    fn of(
        value: &'a Value,
        snake: bool,
        names: (&'static str, &'static str),
        path: &str,
        what: &str,
    ) -> Result<Self> {
        let key = if snake { names.1 } else { names.0 };
        let at = format!("{path}.{key}");
        let inner = as_obj(value, &at, what)?;
        Ok(Self {
            key,
            names,
            snake,
            at,
            inner,
        })
    }

    /// The part's other members, with the container's `inner_extra` flagged
    /// (see [`flag`]).
    fn extra(&self, obj: &Map<String, Value>, inner_extra: Extra) -> Extra {
        let mut extra = rest(obj, &[self.key]);
        flag(
            &mut extra,
            self.snake,
            self.names.0,
            self.names.1,
            inner_extra,
        );
        extra
    }
}

/// An `inlineData` part: an image (or other media) in base64.
fn parse_inline_data(item: &Value, obj: &Map<String, Value>, data: &Member<'_>) -> Result<Part> {
    let mime_key = if data.snake { "mime_type" } else { "mimeType" };
    let inner = data.inner;
    let fields = (
        inner.get(mime_key).and_then(Value::as_str),
        inner.get("data").and_then(Value::as_str),
    );
    let (Some(media_type), Some(base64)) = fields else {
        return Ok(other(item));
    };
    let extra = data.extra(obj, rest(inner, &[mime_key, "data"]));
    inline_image(media_type, base64, || format!("{}.data", data.at), extra)
}

/// A `functionCall` part: a tool call, logged for the responses that answer it.
fn parse_function_call(
    obj: &Map<String, Value>,
    call: &Member<'_>,
    (m, p): (usize, usize),
    log: &mut PendingCalls,
) -> Result<Part> {
    let (at, inner) = (&call.at, call.inner);
    let name = req_str(inner, "name", at)?.to_string();
    let arguments = match inner.get("args") {
        None => String::new(),
        Some(v @ Value::Object(_)) => v.to_string(),
        Some(v) => return Err(wrong(format!("{at}.args"), "an object", v)),
    };
    let id = match inner.get("id") {
        None => format!("{SYNTHETIC}{m}_{p}"),
        Some(Value::String(id)) => id.clone(),
        Some(v) => return Err(wrong(format!("{at}.id"), "a string", v)),
    };
    log.calls.push((name.clone(), id.clone(), false));
    let mut inner_extra = rest(inner, &["name", "args", "id"]);
    keep_explicit_id(&mut inner_extra, inner);
    let extra = call.extra(obj, inner_extra);
    Ok(Part {
        kind: PartKind::ToolCall(ToolCall {
            id,
            name,
            arguments,
        }),
        extra,
    })
}

/// A `functionResponse` part: a tool result, paired with its call by id or
/// else by name (the oldest unanswered call of that name).
fn parse_function_response(
    obj: &Map<String, Value>,
    member: &Member<'_>,
    (m, p): (usize, usize),
    log: &mut PendingCalls,
) -> Result<Part> {
    let (at, inner) = (&member.at, member.inner);
    let name = req_str(inner, "name", at)?;
    let mut inner_extra = rest(inner, &["name", "response", "id"]);
    keep_explicit_id(&mut inner_extra, inner);
    let call_id = match inner.get("id") {
        Some(Value::String(id)) => {
            log.answer_id(id);
            id.clone()
        }
        Some(v) => return Err(wrong(format!("{at}.id"), "a string", v)),
        None => {
            let matched = log
                .answer(name)
                .unwrap_or_else(|| format!("{SYNTHETIC}{m}_{p}"));
            if !is_synthetic_id(&matched) {
                // Answers a call that has an id, without repeating it.
                inner_extra.insert("id".into(), Value::Null);
            }
            matched
        }
    };
    if log.name_of(&call_id) != Some(name) {
        inner_extra.insert("name".into(), Value::String(name.to_string()));
    }
    let response = match inner.get("response") {
        Some(Value::Object(r)) => r,
        Some(v) => return Err(wrong(format!("{at}.response"), "an object", v)),
        None => return Err(invalid(format!("{at}.response"), "missing")),
    };
    let (text, is_error) = response_text(response, &mut inner_extra);
    let extra = member.extra(obj, inner_extra);
    Ok(Part {
        kind: PartKind::ToolResult(ToolResult {
            call_id,
            parts: vec![Part::text(text)],
            is_error,
        }),
        extra,
    })
}

/// The text of a function response and whether it is an error: the string
/// of a single `output` or `error` member (another single member's name is
/// kept in `inner_extra`), else the whole object as JSON (flagged there).
fn response_text(response: &Map<String, Value>, inner_extra: &mut Extra) -> (String, bool) {
    let single = match response.iter().next() {
        Some((k, Value::String(s))) if response.len() == 1 => Some((k.as_str(), s)),
        _ => None,
    };
    match single {
        Some((key, text)) => {
            if key != "output" && key != "error" {
                let mut template = Map::new();
                template.insert(key.to_string(), Value::Null);
                inner_extra.insert("response".into(), Value::Object(template));
            }
            (text.clone(), key == "error")
        }
        None => {
            inner_extra.insert("response".into(), Value::Bool(true));
            (Value::Object(response.clone()).to_string(), false)
        }
    }
}

/// Drops the flags that leave a response's id out, so every response that
/// answers a call with an id names it (used after repairs re-paired results).
pub(crate) fn make_ids_explicit(conv: &mut Conversation) {
    for msg in &mut conv.messages {
        for part in &mut msg.parts {
            if !matches!(part.kind, PartKind::ToolResult(_)) {
                continue;
            }
            for key in ["functionResponse", "function_response"] {
                let emptied = match part.extra.get_mut(key) {
                    Some(Value::Object(inner)) => {
                        if inner.get("id").is_some_and(Value::is_null) {
                            inner.shift_remove("id");
                        }
                        inner.is_empty()
                    }
                    _ => false,
                };
                if emptied && key == "functionResponse" {
                    part.extra.shift_remove(key);
                }
            }
        }
    }
}

/// JSON path of a part (or its id member) of `conv.messages[message]`.
pub(crate) fn part_path(conv: &Conversation, message: usize, part: usize, field: Field) -> String {
    let at = format!("contents[{message}].parts[{part}]");
    let Some(p) = conv.messages.get(message).and_then(|m| m.parts.get(part)) else {
        return at;
    };
    let snake = |k: &str| p.extra.contains_key(k);
    match (&p.kind, field) {
        (PartKind::ToolCall(call), Field::Id) => {
            let c = if snake("function_call") {
                "function_call"
            } else {
                "functionCall"
            };
            let member = if is_synthetic_id(&call.id) {
                "name"
            } else {
                "id"
            };
            format!("{at}.{c}.{member}")
        }
        (PartKind::ToolResult(result), Field::Id) => {
            let c = if snake("function_response") {
                "function_response"
            } else {
                "functionResponse"
            };
            let member = if is_synthetic_id(&result.call_id) {
                "name"
            } else {
                "id"
            };
            format!("{at}.{c}.{member}")
        }
        _ => at,
    }
}

/// Emits a `generateContent` request body.
pub fn emit(conv: &Conversation) -> Value {
    emit_indexed(conv).0
}

/// Emits a `generateContent` request body, and where each of `conv.messages` is in it.
pub fn emit_indexed(conv: &Conversation) -> (Value, Vec<usize>) {
    let system = emit_system(conv);
    let mut contents = Vec::with_capacity(conv.messages.len());
    let mut at = Vec::with_capacity(conv.messages.len());
    for msg in &conv.messages {
        let mut follow_up = Vec::new();
        at.push(contents.len());
        contents.push(emit_content(conv, msg, &mut follow_up));
        if !follow_up.is_empty() {
            let mut user = Map::new();
            user.insert("role".into(), Value::String("user".into()));
            user.insert("parts".into(), Value::Array(follow_up));
            contents.push(Value::Object(user));
        }
    }
    let mut out = Map::new();
    let mut system = system;
    let mut contents = Some(contents);
    for (key, value) in &conv.extra {
        match key.as_str() {
            "contents" => {
                if let Some(c) = contents.take() {
                    out.insert(key.clone(), Value::Array(c));
                }
            }
            "systemInstruction" | "system_instruction" if value.is_null() => {
                out.insert(key.clone(), system.take().unwrap_or(Value::Null));
            }
            _ => {
                out.insert(key.clone(), value.clone());
            }
        }
    }
    if let Some(s) = system {
        out.insert("systemInstruction".into(), s);
    }
    if let Some(c) = contents {
        out.insert("contents".into(), Value::Array(c));
    }
    (Value::Object(out), at)
}

fn emit_system(conv: &Conversation) -> Option<Value> {
    let first = conv.system.first()?;
    let mut out = Map::new();
    let mut ignored = Vec::new();
    let parts: Vec<Value> = conv
        .system
        .iter()
        .flat_map(|m| m.parts.iter())
        .map(|p| emit_part(conv, p, &mut ignored))
        .collect();
    out.insert("parts".into(), Value::Array(parts));
    for (key, value) in &first.extra {
        if key != "parts" {
            out.insert(key.clone(), value.clone());
        }
    }
    Some(Value::Object(out))
}

fn emit_content(conv: &Conversation, msg: &Message, follow_up: &mut Vec<Value>) -> Value {
    let mut out = Map::new();
    match msg.extra.get("role") {
        Some(Value::Null) => {}
        Some(Value::String(r)) => {
            out.insert("role".into(), Value::String(r.clone()));
        }
        _ => {
            let role = if msg.role == Role::Assistant {
                "model"
            } else {
                "user"
            };
            out.insert("role".into(), Value::String(role.into()));
        }
    }
    let parts: Vec<Value> = msg
        .parts
        .iter()
        .map(|p| emit_part(conv, p, follow_up))
        .collect();
    out.insert("parts".into(), Value::Array(parts));
    for (key, value) in &msg.extra {
        if key != "role" && key != "parts" {
            out.insert(key.clone(), value.clone());
        }
    }
    Value::Object(out)
}

/// The container name to use and the inner unknown members.
fn container_of<'a>(
    part: &'a Part,
    camel: &'a str,
    snake: &'a str,
) -> (&'a str, Option<&'a Map<String, Value>>) {
    match (part.extra.get(snake), part.extra.get(camel)) {
        (Some(Value::Object(inner)), _) => (snake, Some(inner)),
        (_, Some(Value::Object(inner))) => (camel, Some(inner)),
        _ => (camel, None),
    }
}

fn emit_part(conv: &Conversation, part: &Part, follow_up: &mut Vec<Value>) -> Value {
    let mut out = Map::new();
    let mut skip: Vec<&str> = Vec::new();
    match &part.kind {
        PartKind::Text { text } => {
            out.insert("text".into(), Value::String(text.clone()));
        }
        PartKind::Image(image) => {
            let (name, inner) = container_of(part, "inlineData", "inline_data");
            let mime_key = if name == "inline_data" {
                "mime_type"
            } else {
                "mimeType"
            };
            let mut data = Map::new();
            data.insert(mime_key.into(), Value::String(image.media_type.clone()));
            data.insert("data".into(), Value::String(image.data.clone()));
            extend(&mut data, inner);
            out.insert(name.into(), Value::Object(data));
            skip = vec!["inline_data", "inlineData"];
        }
        PartKind::ToolCall(call) => {
            let (name, inner) = container_of(part, "functionCall", "function_call");
            let mut fc = Map::new();
            if !is_synthetic_id(&call.id) {
                fc.insert("id".into(), Value::String(call.id.clone()));
            }
            fc.insert("name".into(), Value::String(call.name.clone()));
            if !call.arguments.is_empty() {
                let args = match serde_json::from_str::<Value>(&call.arguments) {
                    Ok(v @ Value::Object(_)) => v,
                    _ => {
                        let mut wrapped = Map::new();
                        wrapped.insert("arguments".into(), Value::String(call.arguments.clone()));
                        Value::Object(wrapped)
                    }
                };
                fc.insert("args".into(), args);
            }
            extend(&mut fc, inner);
            out.insert(name.into(), Value::Object(fc));
            skip = vec!["function_call", "functionCall"];
        }
        PartKind::ToolResult(result) => {
            let (name, inner) = container_of(part, "functionResponse", "function_response");
            let mut fr = Map::new();
            if !is_synthetic_id(&result.call_id) {
                fr.insert("id".into(), Value::String(result.call_id.clone()));
            }
            let fname = inner
                .and_then(|i| i.get("name"))
                .and_then(Value::as_str)
                .or_else(|| conv.tool_call(&result.call_id).map(|c| c.name.as_str()))
                .unwrap_or_default();
            fr.insert("name".into(), Value::String(fname.into()));
            let text = result.text();
            let template = inner.and_then(|i| i.get("response"));
            let response = match template {
                Some(Value::Bool(true)) => match serde_json::from_str::<Value>(&text) {
                    Ok(v @ Value::Object(_)) => v,
                    _ => single("output", text),
                },
                Some(Value::Object(t)) if t.len() == 1 => {
                    let key = t.keys().next().map(String::as_str).unwrap_or("output");
                    single(key, text)
                }
                _ => single(if result.is_error { "error" } else { "output" }, text),
            };
            fr.insert("response".into(), response);
            if let Some(inner) = inner {
                for (k, v) in inner {
                    if k == "id" && v.is_null() {
                        fr.shift_remove("id");
                    } else if k != "name" && k != "response" {
                        fr.entry(k.clone()).or_insert_with(|| v.clone());
                    }
                }
            }
            out.insert(name.into(), Value::Object(fr));
            skip = vec!["function_response", "functionResponse"];
            for inner_part in &result.parts {
                if !matches!(inner_part.kind, PartKind::Text { .. }) {
                    follow_up.push(emit_part(conv, inner_part, &mut Vec::new()));
                }
            }
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

fn single(key: &str, text: String) -> Value {
    let mut m = Map::new();
    m.insert(key.into(), Value::String(text));
    Value::Object(m)
}

fn extend(target: &mut Map<String, Value>, inner: Option<&Map<String, Value>>) {
    if let Some(inner) = inner {
        for (k, v) in inner {
            target.entry(k.clone()).or_insert_with(|| v.clone());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn round_trip_keeps_spelling_roles_and_ids() {
        let req = json!({
            "system_instruction": {"parts": [{"text": "sys"}]},
            "contents": [
                {"role": "user", "parts": [{"text": "hi"}, {"inline_data": {"mime_type": "image/png", "data": "AAAA"}}]},
                {"role": "model", "parts": [
                    {"text": "thinking", "thought": true},
                    {"functionCall": {"name": "bash", "args": {"command": "ls"}}, "thoughtSignature": "sig"},
                    {"functionCall": {"name": "bash", "args": {"command": "pwd"}}}
                ]},
                {"role": "user", "parts": [
                    {"functionResponse": {"name": "bash", "response": {"output": "a"}}},
                    {"functionResponse": {"name": "bash", "response": {"result": {"rows": 2}}}}
                ]},
                {"role": "model", "parts": [{"function_call": {"id": "x1", "name": "f"}}]},
                {"role": "function", "parts": [{"function_response": {"id": "x1", "name": "f", "response": {"content": "z"}}}]},
                {"parts": [{"text": "no role"}]}
            ],
            "generationConfig": {"temperature": 0}
        });
        let conv = parse(&req).unwrap();
        let steps = conv.steps();
        assert_eq!(steps.len(), 3);
        assert!(steps.iter().all(|s| s.result.is_some()));
        assert_eq!(steps[0].call.id, "tlgem_1_1");
        assert_eq!(steps[1].result.unwrap().text(), "{\"result\":{\"rows\":2}}");
        assert_eq!(emit(&conv), req);
    }
}
