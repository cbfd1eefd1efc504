//! Typed errors (base layer). Every failure the library reports carries a
//! stable [`ErrorCode`] and the JSON path (or option name) of the offending
//! field. Codes are grouped by whose fault they are ([`ErrorCode::group`]):
//! bad input, bad option, a limit, the spill store, an internal fault; the
//! host group holds the codes only the JS host raises.

use std::fmt;

/// Stable, machine-readable error codes. The JS `TraceLiteError.code` is
/// [`ErrorCode::as_str`] of one of these. The order is the generated
/// TypeScript union's (`pkg-config/core/types/errors.d.ts`); each code's
/// [`group`](Self::group) says whose fault it is.
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
    /// A host spill store (KV, Durable Object, a custom `put`/`get`) threw or rejected.
    StoreFailed,
    /// A request would write more blobs to the host store than `maxStoreWrites`.
    StoreWriteLimit,
    /// A file store found a symlink, or something else than its own directory
    /// or file, where it keeps spills, and refused to follow or use it.
    StoreUnsafe,
    /// The API needs what this runtime lacks (e.g. `FileStore` a filesystem:
    /// Node, Deno or Bun); the message names the host.
    UnsupportedHost,
    /// The proxy was asked for a spill route without a session.
    MissingSession,
    /// A proxy session token is missing, malformed or not the session's.
    InvalidSessionToken,
    /// A proxy route or resource does not exist.
    NotFound,
    /// A snapshot image URL's signature does not match.
    InvalidImageSignature,
    /// A snapshot image URL names no stored image.
    ImageNotFound,
    /// A value TraceLite built could not be written as JSON (an internal fault,
    /// never the caller's input).
    SerializationFailed,
    /// A persisted cache segment (`Store.importCache`) is malformed or
    /// inconsistent (altered, truncated, or not one TraceLite wrote).
    InvalidCache,
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
            Self::StoreFailed => "STORE_FAILED",
            Self::StoreWriteLimit => "STORE_WRITE_LIMIT",
            Self::StoreUnsafe => "STORE_UNSAFE",
            Self::UnsupportedHost => "UNSUPPORTED_HOST",
            Self::MissingSession => "MISSING_SESSION",
            Self::InvalidSessionToken => "INVALID_SESSION_TOKEN",
            Self::NotFound => "NOT_FOUND",
            Self::InvalidImageSignature => "INVALID_IMAGE_SIGNATURE",
            Self::ImageNotFound => "IMAGE_NOT_FOUND",
            Self::SerializationFailed => "SERIALIZATION_FAILED",
            Self::InvalidCache => "INVALID_CACHE",
        }
    }

    /// Every code, in declaration order (what the TypeScript `ErrorCode` lists).
    pub const ALL: [ErrorCode; 33] = [
        Self::InvalidJson,
        Self::InvalidRequest,
        Self::UnknownFormat,
        Self::InvalidOption,
        Self::LimitExceeded,
        Self::SpillNotFound,
        Self::InvalidSpillKey,
        Self::StoreRefused,
        Self::InvalidPattern,
        Self::GrepTooCostly,
        Self::InvalidArgument,
        Self::SpillCorrupt,
        Self::InvalidToolCall,
        Self::CounterFailed,
        Self::SummarizerFailed,
        Self::RenderFailed,
        Self::OrphanToolResult,
        Self::MissingToolResult,
        Self::DuplicateToolCallId,
        Self::DuplicateToolResult,
        Self::MisplacedToolResult,
        Self::InvalidRoleOrder,
        Self::StoreFailed,
        Self::StoreWriteLimit,
        Self::StoreUnsafe,
        Self::UnsupportedHost,
        Self::MissingSession,
        Self::InvalidSessionToken,
        Self::NotFound,
        Self::InvalidImageSignature,
        Self::ImageNotFound,
        Self::SerializationFailed,
        Self::InvalidCache,
    ];

    /// Whose fault an error with this code is.
    pub const fn group(self) -> ErrorGroup {
        match self {
            Self::InvalidJson
            | Self::InvalidRequest
            | Self::UnknownFormat
            | Self::InvalidArgument
            | Self::InvalidToolCall
            | Self::InvalidPattern
            | Self::InvalidSpillKey
            | Self::InvalidCache
            | Self::OrphanToolResult
            | Self::MissingToolResult
            | Self::DuplicateToolCallId
            | Self::DuplicateToolResult
            | Self::MisplacedToolResult
            | Self::InvalidRoleOrder => ErrorGroup::BadInput,
            Self::InvalidOption => ErrorGroup::BadOption,
            Self::LimitExceeded | Self::GrepTooCostly => ErrorGroup::Limit,
            Self::SpillNotFound | Self::StoreRefused | Self::SpillCorrupt => ErrorGroup::Store,
            Self::CounterFailed
            | Self::SummarizerFailed
            | Self::RenderFailed
            | Self::SerializationFailed => ErrorGroup::Internal,
            Self::StoreFailed
            | Self::StoreWriteLimit
            | Self::StoreUnsafe
            | Self::UnsupportedHost
            | Self::MissingSession
            | Self::InvalidSessionToken
            | Self::NotFound
            | Self::InvalidImageSignature
            | Self::ImageNotFound => ErrorGroup::Host,
        }
    }

    /// The code of a stable string form.
    pub fn from_name(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|c| c.as_str() == name)
    }
}

/// Whose fault an error is ([`ErrorCode::group`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ErrorGroup {
    /// The request, an argument, a tool call or a cache segment is malformed.
    BadInput,
    /// An option has the wrong type or an out-of-range value.
    BadOption,
    /// A configured limit was exceeded.
    Limit,
    /// The spill store has no such blob, no room, or a blob that does not match its key.
    Store,
    /// Not the caller's input: a host collaborator (counter, summarizer)
    /// failed, or rendering or serializing what TraceLite built did.
    Internal,
    /// Raised only by the JS host (proxy routes and signatures, host stores,
    /// the runtime), never by this crate; listed in [`ErrorCode`] so the
    /// generated TypeScript union, which the JS shares, names them.
    Host,
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

/// `value` as JSON text; a failure is `SERIALIZATION_FAILED` naming `what`.
pub fn to_json(value: &impl serde::Serialize, what: &str) -> Result<String> {
    serde_json::to_string(value)
        .map_err(|e| Error::new(ErrorCode::SerializationFailed, what, e.to_string()))
}

impl Error {
    /// The message after its path, `budget: must be …` (the path once, no
    /// code): a JS error's `message`, whose `code` is a property of its own.
    pub fn described(&self) -> String {
        if self.path.is_empty() {
            self.message.clone()
        } else {
            format!("{}: {}", self.path, self.message)
        }
    }
}

/// `CODE: path: message`.
impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.code.as_str(), self.described())
    }
}

impl std::error::Error for Error {}

/// Result alias used across the crate.
pub type Result<T, E = Error> = std::result::Result<T, E>;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_code_is_listed_once_and_reads_back() {
        let names: std::collections::BTreeSet<&str> =
            ErrorCode::ALL.iter().map(|c| c.as_str()).collect();
        assert_eq!(names.len(), ErrorCode::ALL.len());
        for code in ErrorCode::ALL {
            assert_eq!(ErrorCode::from_name(code.as_str()), Some(code));
        }
        assert_eq!(ErrorCode::from_name("NOPE"), None);
    }

    /// The crate raises no host-group code: each `ErrorCode::<Variant>` named
    /// in `src/` (outside this file) is of a core group.
    #[test]
    fn the_core_raises_no_host_code() {
        fn sources(dir: &std::path::Path, out: &mut Vec<std::path::PathBuf>) {
            for entry in std::fs::read_dir(dir).into_iter().flatten().flatten() {
                let path = entry.path();
                if path.is_dir() {
                    sources(&path, out);
                } else if path.extension().is_some_and(|e| e == "rs") {
                    out.push(path);
                }
            }
        }
        let src = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
        let mut files = Vec::new();
        sources(&src, &mut files);
        assert!(files.len() > 20, "found {} files under src/", files.len());
        let mut raised = std::collections::BTreeSet::new();
        for file in files.iter().filter(|f| !f.ends_with("error.rs")) {
            let text = std::fs::read_to_string(file).unwrap_or_default();
            for (at, _) in text.match_indices("ErrorCode::") {
                let rest = text.get(at + "ErrorCode::".len()..).unwrap_or("");
                let name: String = rest
                    .chars()
                    .take_while(char::is_ascii_alphanumeric)
                    .collect();
                raised.insert(name);
            }
        }
        let codes: Vec<(String, ErrorGroup)> = ErrorCode::ALL
            .iter()
            .map(|c| (format!("{c:?}"), c.group()))
            .collect();
        for name in &raised {
            let group = codes.iter().find(|(n, _)| n == name).map(|(_, g)| *g);
            assert!(group.is_some(), "ErrorCode::{name} is not a code");
            assert_ne!(
                group,
                Some(ErrorGroup::Host),
                "src/ raises host code {name}"
            );
        }
        // Every core code is raised somewhere (else it belongs to the host).
        for (name, group) in &codes {
            if *group != ErrorGroup::Host {
                assert!(
                    raised.contains(name),
                    "core code {name} is never raised in src/"
                );
            }
        }
    }
}
