//! Provider request formats: one file per format, each parsing a request body
//! into the neutral [`Conversation`] and emitting it back. Members a format does
//! not interpret are kept verbatim, so parse → emit is lossless.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::error::{Error, ErrorCode, Result};
use crate::model::Conversation;

pub mod openai_chat;

/// A supported request format.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum FormatName {
    /// OpenAI Chat Completions (`messages` with `role`/`content`/`tool_calls`).
    OpenaiChat,
}

impl FormatName {
    /// The kebab-case name used in options and reports.
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::OpenaiChat => "openai-chat",
        }
    }
}

/// Detects the format of a request body.
pub fn detect(request: &Value) -> Result<FormatName> {
    let Some(obj) = request.as_object() else {
        return Err(Error::new(
            ErrorCode::InvalidRequest,
            "$",
            "a request must be a JSON object",
        ));
    };
    if obj.get("messages").is_some_and(Value::is_array) {
        return Ok(FormatName::OpenaiChat);
    }
    Err(Error::new(
        ErrorCode::UnknownFormat,
        "$",
        "cannot detect the request format (expected an OpenAI Chat `messages` array); pass options.format",
    ))
}

/// Parses a request of `format`.
pub fn parse(format: FormatName, request: &Value) -> Result<Conversation> {
    match format {
        FormatName::OpenaiChat => openai_chat::parse(request),
    }
}

/// Emits a conversation as a request of `format`.
pub fn emit(format: FormatName, conv: &Conversation) -> Value {
    match format {
        FormatName::OpenaiChat => openai_chat::emit(conv),
    }
}

/// Error helper: a wrong or missing member at `path`.
pub(crate) fn invalid(path: impl Into<String>, message: impl Into<String>) -> Error {
    Error::new(ErrorCode::InvalidRequest, path, message)
}
