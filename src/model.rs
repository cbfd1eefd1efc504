//! The neutral conversation model every provider format parses into and emits from.
//!
//! Fields a format does not interpret are kept verbatim in `extra` maps so that
//! parse → emit is lossless.

use serde::Serialize;
use serde_json::{Map, Value};

/// Unknown JSON members kept verbatim, in their original order.
pub type Extra = Map<String, Value>;

/// Who sent a message.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    /// System prompt.
    System,
    /// OpenAI's `developer` role (a system prompt by another name).
    Developer,
    /// The user (or the environment speaking as the user).
    User,
    /// The model.
    Assistant,
    /// A tool result message (OpenAI `tool`, legacy `function`).
    Tool,
}

/// How the source format laid out a message's content, so emit can reproduce it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Layout {
    /// A plain string.
    #[default]
    Text,
    /// An array of typed parts.
    Parts,
    /// An explicit JSON `null`.
    Null,
    /// The member was absent.
    Absent,
}

/// An image, inline (base64) or by URL.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Image {
    /// MIME type, e.g. `image/png`.
    pub media_type: String,
    /// Base64 payload (empty when the image is given by `url`).
    pub data: String,
    /// Remote URL when the image is not inline.
    pub url: Option<String>,
    /// Width in pixels (0 when unknown).
    pub width: u32,
    /// Height in pixels (0 when unknown).
    pub height: u32,
}

impl Image {
    /// An inline base64 image as a request carries it: no URL, size not read yet.
    pub fn inline(media_type: &str, data: &str) -> Self {
        Self {
            media_type: media_type.to_string(),
            data: data.to_string(),
            url: None,
            width: 0,
            height: 0,
        }
    }
}

/// A tool invocation made by the assistant. Never rendered, dropped or reordered.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ToolCall {
    /// Provider-assigned id linking the call to its result.
    pub id: String,
    /// Tool name.
    pub name: String,
    /// Arguments as JSON text, exactly as sent.
    pub arguments: String,
}

impl ToolCall {
    /// The arguments parsed as JSON (`Value::Null` when they are not valid JSON).
    pub fn arguments_json(&self) -> Value {
        serde_json::from_str(&self.arguments).unwrap_or(Value::Null)
    }
}

/// The output of a tool, answering the call with `call_id`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ToolResult {
    /// Id of the call this answers.
    pub call_id: String,
    /// Content (text and images).
    pub parts: Vec<Part>,
    /// Whether the tool reported an error.
    pub is_error: bool,
}

impl ToolResult {
    /// All text parts joined with newlines.
    pub fn text(&self) -> String {
        join_text(&self.parts)
    }
}

/// The kind-specific payload of a [`Part`].
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum PartKind {
    /// Plain text.
    Text {
        /// The text.
        text: String,
    },
    /// An image.
    Image(Image),
    /// A tool call.
    ToolCall(ToolCall),
    /// A tool result.
    ToolResult(ToolResult),
    /// A part the library does not interpret (audio, refusal, thinking, …), kept verbatim.
    Other {
        /// The original JSON.
        value: Value,
    },
}

/// One piece of message content plus the source format's unknown members.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Part {
    /// What the part is.
    #[serde(flatten)]
    pub kind: PartKind,
    /// Unknown members of the part's JSON object, kept verbatim.
    #[serde(skip_serializing_if = "Map::is_empty")]
    pub extra: Extra,
}

impl Part {
    /// A text part.
    pub fn text(text: impl Into<String>) -> Self {
        Self::from(PartKind::Text { text: text.into() })
    }

    /// The text if this is a text part.
    pub fn as_text(&self) -> Option<&str> {
        match &self.kind {
            PartKind::Text { text } => Some(text),
            _ => None,
        }
    }
}

impl From<PartKind> for Part {
    fn from(kind: PartKind) -> Self {
        Self {
            kind,
            extra: Extra::new(),
        }
    }
}

/// One message of the conversation.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Message {
    /// Sender.
    pub role: Role,
    /// Content in order.
    pub parts: Vec<Part>,
    /// How the content was laid out in the source format.
    pub layout: Layout,
    /// Unknown members of the message object, kept verbatim.
    #[serde(skip_serializing_if = "Map::is_empty")]
    pub extra: Extra,
}

impl Message {
    /// A message with a single text part.
    pub fn text(role: Role, text: impl Into<String>) -> Self {
        Self {
            role,
            parts: vec![Part::text(text)],
            layout: Layout::Text,
            extra: Extra::new(),
        }
    }

    /// All text parts joined with newlines (tool results and calls excluded).
    pub fn text_content(&self) -> String {
        join_text(&self.parts)
    }
}

/// A whole request: system prompt, messages and the request's other members.
#[derive(Debug, Clone, PartialEq, Default, Serialize)]
pub struct Conversation {
    /// System prompt messages (leading `system`/`developer` messages, or a top-level `system`).
    pub system: Vec<Message>,
    /// The conversation after the system prompt.
    pub messages: Vec<Message>,
    /// Top-level members other than the ones the format owns, in order.
    pub extra: Extra,
}

/// Position of a part: message index and part index (into [`Conversation::messages`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
pub struct PartRef {
    /// Index into `messages`.
    pub message: usize,
    /// Index into that message's `parts`.
    pub part: usize,
}

/// A tool call paired with its result: one agent step.
#[derive(Debug, Clone, Copy)]
pub struct Step<'a> {
    /// Where the call is.
    pub call_at: PartRef,
    /// The call.
    pub call: &'a ToolCall,
    /// Where the result is (`None` for a trailing call without a result yet).
    pub result_at: Option<PartRef>,
    /// The result.
    pub result: Option<&'a ToolResult>,
}

impl Conversation {
    /// Every tool call with its result, in call order.
    pub fn steps(&self) -> Vec<Step<'_>> {
        let mut results: std::collections::HashMap<&str, (PartRef, &ToolResult)> =
            std::collections::HashMap::new();
        for (m, msg) in self.messages.iter().enumerate() {
            for (p, part) in msg.parts.iter().enumerate() {
                if let PartKind::ToolResult(r) = &part.kind {
                    results.entry(r.call_id.as_str()).or_insert((
                        PartRef {
                            message: m,
                            part: p,
                        },
                        r,
                    ));
                }
            }
        }
        let mut steps = Vec::new();
        for (m, msg) in self.messages.iter().enumerate() {
            for (p, part) in msg.parts.iter().enumerate() {
                if let PartKind::ToolCall(call) = &part.kind {
                    let found = results.get(call.id.as_str());
                    steps.push(Step {
                        call_at: PartRef {
                            message: m,
                            part: p,
                        },
                        call,
                        result_at: found.map(|(at, _)| *at),
                        result: found.map(|(_, r)| *r),
                    });
                }
            }
        }
        steps
    }

    /// Positions of every tool result, in conversation order (the observations).
    pub fn observations(&self) -> Vec<PartRef> {
        let mut out = Vec::new();
        for (m, msg) in self.messages.iter().enumerate() {
            for (p, part) in msg.parts.iter().enumerate() {
                if matches!(part.kind, PartKind::ToolResult(_)) {
                    out.push(PartRef {
                        message: m,
                        part: p,
                    });
                }
            }
        }
        out
    }

    /// The tool result at `at`, if there is one.
    pub fn tool_result(&self, at: PartRef) -> Option<&ToolResult> {
        match &self.messages.get(at.message)?.parts.get(at.part)?.kind {
            PartKind::ToolResult(r) => Some(r),
            _ => None,
        }
    }

    /// Mutable access to the tool result at `at`.
    pub fn tool_result_mut(&mut self, at: PartRef) -> Option<&mut ToolResult> {
        match &mut self
            .messages
            .get_mut(at.message)?
            .parts
            .get_mut(at.part)?
            .kind
        {
            PartKind::ToolResult(r) => Some(r),
            _ => None,
        }
    }

    /// The tool call answered by `call_id`.
    pub fn tool_call(&self, call_id: &str) -> Option<&ToolCall> {
        self.messages
            .iter()
            .flat_map(|m| m.parts.iter())
            .find_map(|p| match &p.kind {
                PartKind::ToolCall(c) if c.id == call_id => Some(c),
                _ => None,
            })
    }
}

fn join_text(parts: &[Part]) -> String {
    let mut out = String::new();
    for text in parts.iter().filter_map(Part::as_text) {
        if !out.is_empty() {
            out.push('\n');
        }
        out.push_str(text);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn call(id: &str) -> Part {
        Part::from(PartKind::ToolCall(ToolCall {
            id: id.into(),
            name: "bash".into(),
            arguments: "{\"command\":\"ls\"}".into(),
        }))
    }

    fn result(id: &str, text: &str) -> Part {
        Part::from(PartKind::ToolResult(ToolResult {
            call_id: id.into(),
            parts: vec![Part::text(text)],
            is_error: false,
        }))
    }

    #[test]
    fn steps_pair_calls_with_results_and_keep_trailing_calls() {
        let msg = |role, parts| Message {
            role,
            parts,
            layout: Layout::Parts,
            extra: Extra::new(),
        };
        let conv = Conversation {
            system: vec![],
            messages: vec![
                msg(Role::Assistant, vec![call("a"), call("b")]),
                msg(Role::Tool, vec![result("b", "B")]),
                msg(Role::Tool, vec![result("a", "A")]),
                msg(Role::Assistant, vec![call("c")]),
            ],
            extra: Extra::new(),
        };
        let steps = conv.steps();
        assert_eq!(steps.len(), 3);
        assert_eq!(steps[0].result.map(|r| r.text()), Some("A".to_string()));
        assert_eq!(
            steps[1].result_at,
            Some(PartRef {
                message: 1,
                part: 0
            })
        );
        assert!(steps[2].result.is_none());
        assert_eq!(conv.observations().len(), 2);
        assert_eq!(conv.tool_call("c").map(|c| c.name.as_str()), Some("bash"));
    }
}
