//! Agent trajectories (the `../shared/traces` schema) and the request an agent
//! loop would send before step `t`. Base layer: parsing a trajectory file is
//! input parsing into the neutral [`crate::model`], like a provider format;
//! replaying it through the pipeline is the host's job.

use serde::Deserialize;
use serde_json::Value;

use crate::error::{Error, ErrorCode, Result};
use crate::formats::{self, FormatName};
use crate::model::{
    Conversation, Extra, Layout, Message, Part, PartKind, Role, ToolCall, ToolResult,
};

/// One recorded agent run.
#[derive(Debug, Clone, Deserialize)]
pub struct Trajectory {
    /// Run id.
    #[serde(default)]
    pub id: String,
    /// First user message, exactly as sent.
    pub task: String,
    /// System prompt, exactly as sent.
    #[serde(default)]
    pub system: Option<String>,
    /// The steps in order.
    pub steps: Vec<TrajectoryStep>,
}

/// One step: the assistant's tool call and the observation it got back.
#[derive(Debug, Clone, Deserialize)]
pub struct TrajectoryStep {
    /// Assistant reasoning text.
    #[serde(default)]
    pub thought: Option<String>,
    /// Tool name (`message` is an assistant turn without a tool call).
    pub tool: String,
    /// Tool arguments.
    #[serde(default)]
    pub args: Value,
    /// Exact tool output the model saw.
    #[serde(default)]
    pub observation: String,
}

impl Trajectory {
    /// Parses a trajectory from JSON text.
    pub fn from_json(text: &str) -> Result<Self> {
        serde_json::from_str(text)
            .map_err(|e| Error::new(ErrorCode::InvalidRequest, "trajectory", e.to_string()))
    }

    /// The conversation an agent loop sends before step `t` (steps `0..t` in the history).
    pub fn conversation_at(&self, t: usize) -> Result<Conversation> {
        if t > self.steps.len() {
            return Err(Error::new(
                ErrorCode::InvalidOption,
                "t",
                format!("step {t} is past the last step ({})", self.steps.len()),
            ));
        }
        let mut conv = Conversation::default();
        conv.extra
            .insert("model".into(), Value::String("replay".into()));
        conv.extra.insert("messages".into(), Value::Null);
        if let Some(system) = &self.system {
            conv.system
                .push(Message::text(Role::System, system.clone()));
        }
        conv.messages
            .push(Message::text(Role::User, self.task.clone()));
        for (i, step) in self.steps.iter().take(t).enumerate() {
            let thought = step.thought.clone().unwrap_or_default();
            if step.tool == "message" {
                conv.messages.push(Message::text(Role::Assistant, thought));
                conv.messages
                    .push(Message::text(Role::User, step.observation.clone()));
                continue;
            }
            let id = format!("call_{i}");
            let arguments = match &step.args {
                Value::String(s) => s.clone(),
                other => other.to_string(),
            };
            let mut parts = Vec::new();
            if !thought.is_empty() {
                parts.push(Part::text(thought));
            }
            let mut call_extra = Extra::new();
            call_extra.insert("type".into(), Value::String("function".into()));
            parts.push(Part {
                kind: PartKind::ToolCall(ToolCall {
                    id: id.clone(),
                    name: step.tool.clone(),
                    arguments,
                }),
                extra: call_extra,
            });
            let layout = if parts.len() > 1 {
                Layout::Text
            } else {
                Layout::Null
            };
            conv.messages.push(Message {
                role: Role::Assistant,
                parts,
                layout,
                extra: Extra::new(),
            });
            conv.messages.push(Message {
                role: Role::Tool,
                parts: vec![Part::from(PartKind::ToolResult(ToolResult {
                    call_id: id,
                    parts: vec![Part::text(step.observation.clone())],
                    is_error: false,
                }))],
                layout: Layout::Text,
                extra: Extra::new(),
            });
        }
        Ok(conv)
    }
}

/// The request body (in `format`) an agent loop sends before step `t`.
pub fn trajectory_to_request(
    trajectory: &Trajectory,
    t: usize,
    format: FormatName,
) -> Result<Value> {
    // The conversation is built in OpenAI Chat shape; other formats get it converted.
    let (conv, _) = formats::convert_conversation(
        trajectory.conversation_at(t)?,
        FormatName::OpenaiChat,
        format,
    );
    Ok(formats::emit(format, &conv))
}
