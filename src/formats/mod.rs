//! Provider request formats: one file per format, each parsing a request body
//! into the neutral [`Conversation`] and emitting it back. Members a format does
//! not interpret are kept verbatim, so parse → emit is lossless.
//!
//! * [`openai_chat`]: OpenAI Chat Completions (`messages`).
//! * [`openai_responses`]: OpenAI Responses (`input` items, `instructions`).
//! * [`anthropic`]: Anthropic Messages (`system`, `messages` of content blocks).
//! * [`gemini`]: Gemini `generateContent` (`contents`, `systemInstruction`).
//!
//! [`detect`] guesses the format of a request; callers override it with an
//! explicit [`FormatName`]. [`validate()`] checks tool-call pairing and role order
//! (with an opt-in repair mode) and [`convert()`] translates between formats,
//! listing everything that has no equivalent in the target.
//!
//! ```
//! use serde_json::json;
//! use tracelite::formats::{self, convert, FormatName};
//!
//! let chat = json!({"model": "gpt-4o", "messages": [
//!     {"role": "system", "content": "be brief"},
//!     {"role": "user", "content": "list files", "name": "alice"},
//!     {"role": "assistant", "content": null, "tool_calls": [{"id": "c1", "type": "function",
//!         "function": {"name": "bash", "arguments": "{\"cmd\":\"ls\"}"}}]},
//!     {"role": "tool", "tool_call_id": "c1", "content": "a.txt"}
//! ]});
//! // Lossless in its own format…
//! let conv = formats::parse(FormatName::OpenaiChat, &chat).unwrap();
//! assert_eq!(formats::emit(FormatName::OpenaiChat, &conv), chat);
//! // …and convertible, with what cannot move listed by path.
//! let out = convert(&chat, None, FormatName::Anthropic).unwrap();
//! assert_eq!(out.request["system"], "be brief");
//! assert_eq!(out.request["messages"][1]["content"][0]["input"]["cmd"], "ls");
//! assert_eq!(out.request["messages"][2]["content"][0]["tool_use_id"], "c1");
//! assert_eq!(out.lossy[0].path, "messages[1].name");
//! ```
//!
//! ## How the top level stays lossless
//! Each format puts a *slot* in [`Conversation::extra`] at the position of every
//! member it interprets (`messages`, `input`, `system`, …), so emit writes the
//! members back in their original order. A slot is `null`, except
//! `input: "text"` (Responses `input` given as a string) and
//! `instructions: true` (Responses `instructions` became `system[0]`).
//! Flags that keep a part's spelling (Gemini `inline_data` vs `inlineData`) or
//! layout (Anthropic `tool_result.content` as string or array) live in the
//! part's `extra` under the member name they control; they are documented in
//! each format's module.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::error::{Error, ErrorCode, Result};
use crate::model::{Conversation, Extra, Image, Layout, Part, PartKind};

pub mod anthropic;
pub mod convert;
pub mod gemini;
pub mod image_header;
pub mod image_urls;
pub mod images;
pub mod openai_chat;
pub mod openai_responses;
pub mod request;
pub mod validate;

pub use convert::{convert, convert_conversation, Conversion, Lossy};
pub use images::{image_limits, ImageLimits};
pub use request::{emit_request, EmitSettings, Emitted};
pub use validate::{repair, validate, Repair};

/// A supported request format.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum FormatName {
    /// OpenAI Chat Completions (`messages` with `role`/`content`/`tool_calls`).
    OpenaiChat,
    /// OpenAI Responses (`input` items: message, function_call, function_call_output, reasoning, …).
    OpenaiResponses,
    /// Anthropic Messages (`system`, `messages` of text/image/tool_use/tool_result/thinking blocks).
    Anthropic,
    /// Gemini `generateContent` (`contents` of parts, `systemInstruction`).
    Gemini,
}

impl FormatName {
    /// Every format, in a fixed order.
    pub const ALL: [FormatName; 4] = [
        Self::OpenaiChat,
        Self::OpenaiResponses,
        Self::Anthropic,
        Self::Gemini,
    ];

    /// The kebab-case name used in options and reports.
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::OpenaiChat => "openai-chat",
            Self::OpenaiResponses => "openai-responses",
            Self::Anthropic => "anthropic",
            Self::Gemini => "gemini",
        }
    }

    /// The request's member that lists its messages (`messages`, `input`,
    /// `contents`): the root of a message's path in error and report paths.
    pub const fn messages_member(self) -> &'static str {
        match self {
            Self::OpenaiChat | Self::Anthropic => "messages",
            Self::OpenaiResponses => "input",
            Self::Gemini => "contents",
        }
    }

    /// Parses a kebab-case name (`openai-chat`, `openai-responses`, `anthropic`, `gemini`).
    pub fn from_name(name: &str) -> Result<Self> {
        Self::ALL
            .into_iter()
            .find(|f| f.as_str() == name)
            .ok_or_else(|| {
                Error::new(
                    ErrorCode::UnknownFormat,
                    "format",
                    format!(
                        "unknown format {name:?} (expected openai-chat, openai-responses, anthropic or gemini)"
                    ),
                )
            })
    }
}

/// Detects the format of a request body.
///
/// `contents` → Gemini; `input` → OpenAI Responses; `messages` → Anthropic when
/// a top-level `system`, an `anthropic_version`, or an Anthropic-only block
/// (`tool_use`, `tool_result`, `thinking`, an `image` with a `source`) is
/// present, OpenAI Chat otherwise (plain text-only messages read the same in both).
pub fn detect(request: &Value) -> Result<FormatName> {
    let Some(obj) = request.as_object() else {
        return Err(Error::new(
            ErrorCode::InvalidRequest,
            "$",
            format!("a request must be a JSON object, got {}", got(request)),
        ));
    };
    if obj.get("contents").is_some_and(Value::is_array) {
        return Ok(FormatName::Gemini);
    }
    if obj
        .get("input")
        .is_some_and(|v| v.is_array() || v.is_string())
    {
        return Ok(FormatName::OpenaiResponses);
    }
    if let Some(messages) = obj.get("messages").and_then(Value::as_array) {
        if obj.contains_key("system")
            || obj.contains_key("anthropic_version")
            || messages.iter().any(looks_anthropic)
        {
            return Ok(FormatName::Anthropic);
        }
        return Ok(FormatName::OpenaiChat);
    }
    // A member of the right name but the wrong shape is named with what it holds.
    for (key, want) in [
        ("messages", "an array of messages"),
        ("input", "a string or an array of items"),
        ("contents", "an array of contents"),
    ] {
        if let Some(v) = obj.get(key) {
            return Err(Error::new(
                ErrorCode::UnknownFormat,
                key,
                format!("must be {want}, got {}", got(v)),
            ));
        }
    }
    Err(Error::new(
        ErrorCode::UnknownFormat,
        "$",
        "cannot detect the request format: it has no `messages`, `input` or `contents` member; pass options.format",
    ))
}

fn looks_anthropic(message: &Value) -> bool {
    let Some(blocks) = message.get("content").and_then(Value::as_array) else {
        return false;
    };
    blocks
        .iter()
        .any(|b| match b.get("type").and_then(Value::as_str) {
            Some("tool_use" | "tool_result" | "thinking" | "redacted_thinking" | "document") => {
                true
            }
            Some("image") => b.get("source").is_some(),
            _ => false,
        })
}

/// Parses a request of `format`.
pub fn parse(format: FormatName, request: &Value) -> Result<Conversation> {
    match format {
        FormatName::OpenaiChat => openai_chat::parse(request),
        FormatName::OpenaiResponses => openai_responses::parse(request),
        FormatName::Anthropic => anthropic::parse(request),
        FormatName::Gemini => gemini::parse(request),
    }
}

/// Emits a conversation as a request of `format`.
///
/// The conversation must come from `parse(format, …)` (possibly changed by the
/// stages) or carry no format-specific `extra`; to move a conversation from
/// one format to another use [`convert_conversation`].
pub fn emit(format: FormatName, conv: &Conversation) -> Value {
    emit_indexed(format, conv).0
}

/// [`emit`], and for each message of [`Conversation::messages`] its index in
/// the emitted request's own list of messages (`messages`, `input` or
/// `contents`: after the system messages that list holds, and the messages
/// the emitter adds, e.g. the images of tool results moved to a user message).
pub fn emit_indexed(format: FormatName, conv: &Conversation) -> (Value, Vec<usize>) {
    match format {
        FormatName::OpenaiChat => openai_chat::emit_indexed(conv),
        FormatName::OpenaiResponses => openai_responses::emit_indexed(conv),
        FormatName::Anthropic => {
            let at = (0..conv.messages.len()).collect();
            (anthropic::emit(conv), at)
        }
        FormatName::Gemini => gemini::emit_indexed(conv),
    }
}

/// JSON path of the message at `index` of [`Conversation::messages`] in a
/// request of `format` parsed into `conv`.
pub fn message_path(format: FormatName, conv: &Conversation, index: usize) -> String {
    match format {
        FormatName::OpenaiChat => format!("messages[{}]", conv.system.len() + index),
        FormatName::OpenaiResponses => openai_responses::message_path(conv, index),
        FormatName::Anthropic => format!("messages[{index}]"),
        FormatName::Gemini => format!("contents[{index}]"),
    }
}

/// The opening of a conversation: its system messages and the messages up to
/// and including the first user message. It stays the same on every later
/// turn, so a host can name a conversation that has no name by its hash.
pub fn opening(conv: &Conversation) -> Vec<&crate::model::Message> {
    let first_user = conv
        .messages
        .iter()
        .position(|m| m.role == crate::model::Role::User)
        .map_or(conv.messages.len(), |i| i + 1);
    conv.system
        .iter()
        .chain(conv.messages.iter().take(first_user))
        .collect()
}

/// What [`part_path`] points at.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Field {
    /// The part itself.
    Part,
    /// The id of a tool call, or the call id a tool result answers.
    Id,
}

/// JSON path of part `part` of message `message` (or its id member) in a
/// request of `format` parsed into `conv`.
pub fn part_path(
    format: FormatName,
    conv: &Conversation,
    message: usize,
    part: usize,
    field: Field,
) -> String {
    match format {
        FormatName::OpenaiChat => openai_chat::part_path(conv, message, part, field),
        FormatName::OpenaiResponses => openai_responses::part_path(conv, message, part, field),
        FormatName::Anthropic => anthropic::part_path(conv, message, part, field),
        FormatName::Gemini => gemini::part_path(conv, message, part, field),
    }
}

/// Error helper: a wrong or missing member at `path`.
pub(crate) fn invalid(path: impl Into<String>, message: impl Into<String>) -> Error {
    Error::new(ErrorCode::InvalidRequest, path, message)
}

/// The members of `obj` other than `skip`, in order.
pub(crate) fn rest(obj: &Map<String, Value>, skip: &[&str]) -> Extra {
    obj.iter()
        .filter(|(k, _)| !skip.contains(&k.as_str()))
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect()
}

/// Puts the members of the nested object `obj` other than `skip` under `key`
/// in `extra`, unless there are none: what a parser leaves of a member it reads.
pub(crate) fn keep_rest(extra: &mut Extra, key: &str, obj: &Map<String, Value>, skip: &[&str]) {
    let inner = rest(obj, skip);
    if !inner.is_empty() {
        extra.insert(key.into(), Value::Object(inner));
    }
}

/// An inline base64 image part, once its `data` (at `path`) is checked.
pub(crate) fn inline_image(
    media_type: &str,
    data: &str,
    path: impl FnOnce() -> String,
    extra: Extra,
) -> Result<Part> {
    image_header::check_inline(data, path)?;
    Ok(Part {
        kind: PartKind::Image(Image::inline(media_type, data)),
        extra,
    })
}

/// A message `content` that is a string (one text part, [`Layout::Text`]) or an
/// array of items, each read by `item` with its path ([`Layout::Parts`]);
/// `what` names the items in the error for any other value.
pub(crate) fn string_or_parts(
    obj: &Map<String, Value>,
    path: &str,
    what: &str,
    mut item: impl FnMut(&Value, &str) -> Result<Part>,
) -> Result<(Layout, Vec<Part>)> {
    match obj.get("content") {
        Some(Value::String(s)) => Ok((Layout::Text, vec![Part::text(s.clone())])),
        Some(Value::Array(items)) => {
            let mut parts = Vec::with_capacity(items.len());
            for (j, v) in items.iter().enumerate() {
                parts.push(item(v, &format!("{path}.content[{j}]"))?);
            }
            Ok((Layout::Parts, parts))
        }
        Some(v) => Err(wrong(
            format!("{path}.content"),
            &format!("a string or an array of {what}"),
            v,
        )),
        None => Err(invalid(format!("{path}.content"), "missing")),
    }
}

/// A required array member, at `path` (empty for the top level).
pub(crate) fn req_array<'a>(
    obj: &'a Map<String, Value>,
    key: &str,
    path: &str,
) -> Result<&'a Vec<Value>> {
    let at = || match path {
        "" => key.to_string(),
        _ => format!("{path}.{key}"),
    };
    match obj.get(key) {
        Some(Value::Array(items)) => Ok(items),
        Some(v) => Err(wrong(at(), "an array", v)),
        None => Err(invalid(at(), "missing")),
    }
}

/// A required string member.
pub(crate) fn req_str<'a>(obj: &'a Map<String, Value>, key: &str, path: &str) -> Result<&'a str> {
    match obj.get(key) {
        Some(Value::String(s)) => Ok(s),
        Some(v) => Err(wrong(format!("{path}.{key}"), "a string", v)),
        None => Err(invalid(format!("{path}.{key}"), "missing")),
    }
}

/// A required object member.
pub(crate) fn req_obj<'a>(
    obj: &'a Map<String, Value>,
    key: &str,
    path: &str,
) -> Result<&'a Map<String, Value>> {
    match obj.get(key) {
        Some(Value::Object(o)) => Ok(o),
        Some(v) => Err(wrong(format!("{path}.{key}"), "an object", v)),
        None => Err(invalid(format!("{path}.{key}"), "missing")),
    }
}

/// A value that must be an object.
pub(crate) fn as_obj<'a>(
    value: &'a Value,
    path: &str,
    what: &str,
) -> Result<&'a Map<String, Value>> {
    value
        .as_object()
        .ok_or_else(|| wrong(path, &format!("{what} (an object)"), value))
}

/// `INVALID_REQUEST` at `path`: `must be <want>, got <what value is>` (one
/// copy of the formatting for every shape check).
pub(crate) fn wrong(path: impl Into<String>, want: &str, value: &Value) -> Error {
    wrong_at(path.into(), want, value)
}

#[inline(never)]
fn wrong_at(path: String, want: &str, value: &Value) -> Error {
    invalid(path, format!("must be {want}, got {}", got(value)))
}

/// What a value of the wrong shape is, for an error's `got …`: its type
/// (`a string`, `an array`, `an object`, `null`), a number or boolean as
/// written; never a string's text (a request may hold secrets).
pub(crate) fn got(value: &Value) -> String {
    match value {
        Value::Null => "null".into(),
        Value::Bool(b) => b.to_string(),
        Value::Number(n) => n.to_string(),
        Value::String(_) => "a string".into(),
        Value::Array(_) => "an array".into(),
        Value::Object(_) => "an object".into(),
    }
}

/// Splits `data:<type>;base64,<data>` at the last `;base64,`: base64 never
/// holds a `;`, so a media type that does (another format's free-form
/// `mime_type`) comes back whole.
pub(crate) fn split_data_url(url: &str) -> Option<(&str, &str)> {
    let rest = url.strip_prefix("data:")?;
    let (media_type, data) = rest.rsplit_once(";base64,")?;
    Some((media_type, data))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn the_opening_is_the_system_prompt_and_the_first_user_turn_in_every_format() {
        let chat = json!({"messages": [
            {"role": "system", "content": "be brief"},
            {"role": "user", "content": "fix it"},
            {"role": "assistant", "content": "ok"},
            {"role": "user", "content": "later"}
        ]});
        let claude = json!({"system": "be brief", "messages": [
            {"role": "user", "content": "fix it"},
            {"role": "assistant", "content": "ok"}
        ]});
        let texts = |request: &Value| {
            let conv = parse(detect(request).unwrap(), request).unwrap();
            opening(&conv)
                .iter()
                .map(|m| m.text_content())
                .collect::<Vec<_>>()
        };
        assert_eq!(texts(&chat), ["be brief", "fix it"]);
        assert_eq!(texts(&claude), ["be brief", "fix it"]);
        let mut longer = chat.clone();
        longer["messages"]
            .as_array_mut()
            .unwrap()
            .push(json!({"role": "assistant", "content": "more"}));
        assert_eq!(texts(&longer), texts(&chat));
    }
}
