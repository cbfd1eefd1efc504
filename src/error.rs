//! Typed errors. Every failure the library reports carries a stable [`ErrorCode`]
//! and the JSON path (or option name) of the offending field.

use std::fmt;

/// Stable, machine-readable error codes. The JS `TraceLiteError.code` is
/// [`ErrorCode::as_str`] of one of these.
#[non_exhaustive]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ErrorCode {
    /// The request or an option is not valid JSON.
    InvalidJson,
    /// The request is JSON but not a valid request of its format.
    InvalidRequest,
    /// The request's format could not be detected or is not supported.
    UnknownFormat,
    /// An option has the wrong type or an out-of-range value.
    InvalidOption,
    /// A configured limit (bytes, messages, pixels, …) was exceeded.
    LimitExceeded,
    /// A spill key does not exist in this session (or belongs to another one).
    SpillNotFound,
    /// A spill key or session name is malformed.
    InvalidSpillKey,
    /// The spill store refused a blob (quota).
    StoreRefused,
    /// A grep pattern could not be compiled.
    InvalidPattern,
    /// A search would cost more than `limits.maxGrepCost` (pattern program
    /// size × bytes searched).
    GrepTooCostly,
    /// A method was called with an argument of the wrong type or out of range.
    InvalidArgument,
    /// A stored blob does not hash to its key (altered or forged).
    SpillCorrupt,
    /// A tool call to `read_spill`/`grep_spill` was malformed or named an unknown tool.
    InvalidToolCall,
    /// The host-supplied token counter failed or returned a non-number.
    CounterFailed,
    /// The host-supplied summarizer failed.
    SummarizerFailed,
    /// Rendering an optical snapshot failed.
    RenderFailed,
    /// A tool result answers no earlier tool call.
    OrphanToolResult,
    /// A tool call has no result and is not in the last turn.
    MissingToolResult,
    /// Two tool calls share an id.
    DuplicateToolCallId,
    /// A tool call has more than one result.
    DuplicateToolResult,
    /// A tool result is not in the turn right after its call.
    MisplacedToolResult,
    /// A part sits in a turn whose role cannot hold it (e.g. a tool call in a user turn).
    InvalidRoleOrder,
}

impl ErrorCode {
    /// The stable string form, e.g. `"INVALID_JSON"`.
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::InvalidJson => "INVALID_JSON",
            Self::InvalidRequest => "INVALID_REQUEST",
            Self::UnknownFormat => "UNKNOWN_FORMAT",
            Self::InvalidOption => "INVALID_OPTION",
            Self::LimitExceeded => "LIMIT_EXCEEDED",
            Self::SpillNotFound => "SPILL_NOT_FOUND",
            Self::InvalidSpillKey => "INVALID_SPILL_KEY",
            Self::StoreRefused => "STORE_REFUSED",
            Self::InvalidPattern => "INVALID_PATTERN",
            Self::GrepTooCostly => "GREP_TOO_COSTLY",
            Self::InvalidArgument => "INVALID_ARGUMENT",
            Self::SpillCorrupt => "SPILL_CORRUPT",
            Self::InvalidToolCall => "INVALID_TOOL_CALL",
            Self::CounterFailed => "COUNTER_FAILED",
            Self::SummarizerFailed => "SUMMARIZER_FAILED",
            Self::RenderFailed => "RENDER_FAILED",
            Self::OrphanToolResult => "ORPHAN_TOOL_RESULT",
            Self::MissingToolResult => "MISSING_TOOL_RESULT",
            Self::DuplicateToolCallId => "DUPLICATE_TOOL_CALL_ID",
            Self::DuplicateToolResult => "DUPLICATE_TOOL_RESULT",
            Self::MisplacedToolResult => "MISPLACED_TOOL_RESULT",
            Self::InvalidRoleOrder => "INVALID_ROLE_ORDER",
        }
    }
}

/// An error with a code, the path of the offending field and a message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Error {
    /// Stable code.
    pub code: ErrorCode,
    /// JSON path (`messages[3].content`) or option name (`spill.fraction`); may be empty.
    pub path: String,
    /// Human-readable explanation.
    pub message: String,
}

impl Error {
    /// Builds an error.
    pub fn new(code: ErrorCode, path: impl Into<String>, message: impl Into<String>) -> Self {
        Self {
            code,
            path: path.into(),
            message: message.into(),
        }
    }
}

/// `Err(INVALID_OPTION)` at `path`: how every settings check reports.
pub(crate) fn invalid_option<T>(path: &str, message: &str) -> Result<T> {
    Err(Error::new(ErrorCode::InvalidOption, path, message))
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.path.is_empty() {
            write!(f, "{}: {}", self.code.as_str(), self.message)
        } else {
            write!(f, "{}: {}: {}", self.code.as_str(), self.path, self.message)
        }
    }
}

impl std::error::Error for Error {}

/// Result alias used across the crate.
pub type Result<T, E = Error> = std::result::Result<T, E>;
