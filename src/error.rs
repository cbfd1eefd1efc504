//! Typed errors (base layer). Every failure the library reports carries a
//! stable [`ErrorCode`] and the JSON path (or option name) of the offending
//! field. Codes are grouped by whose fault they are ([`ErrorCode::group`]):
//! bad input, bad option, a limit, the spill store, an internal fault.
//! [`ErrorCode`] holds only what this crate raises: the codes only the JS
//! host raises (proxy routes and signatures, host stores, the runtime) live
//! with the host, in the table of `pkg-config/core/errors.js`, which gives
//! each group an `Error` subclass (`InputError`, `OptionError`, …).

use std::fmt;

/// Stable, machine-readable codes of every error this crate raises. The JS
/// `TraceLiteError.code` of a core error is [`ErrorCode::as_str`] of one of
/// these, listed by group in the generated TypeScript
/// (`CoreErrorCodes` in `pkg-config/core/types/errors.d.ts`); each code's
/// [`group`](Self::group) says whose fault it is and picks its JS class.
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
    /// A value TraceLite built could not be written as JSON (an internal fault,
    /// never the caller's input).
    SerializationFailed,
    /// A persisted cache segment (`Store.importCache`) is refused: its
    /// HMAC-SHA256 does not verify under the host's key and session (altered,
    /// truncated, another session's or another key's), or it is malformed.
    InvalidCache,
    /// The request still exceeds `budget` after every stage and
    /// `limits.overBudget` is `"error"`; the path is its largest message.
    OverBudget,
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
            Self::SerializationFailed => "SERIALIZATION_FAILED",
            Self::InvalidCache => "INVALID_CACHE",
            Self::OverBudget => "OVER_BUDGET",
        }
    }

    /// Every code, in declaration order (the order of the generated `codes.js`).
    pub const ALL: [ErrorCode; 25] = [
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
        Self::SerializationFailed,
        Self::InvalidCache,
        Self::OverBudget,
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
            Self::LimitExceeded | Self::GrepTooCostly | Self::OverBudget => ErrorGroup::Limit,
            Self::SpillNotFound | Self::StoreRefused | Self::SpillCorrupt => ErrorGroup::Store,
            Self::CounterFailed
            | Self::SummarizerFailed
            | Self::RenderFailed
            | Self::SerializationFailed => ErrorGroup::Internal,
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
}

impl ErrorGroup {
    /// Every group, in the order the generated TypeScript lists them.
    pub const ALL: [ErrorGroup; 5] = [
        Self::BadInput,
        Self::BadOption,
        Self::Limit,
        Self::Store,
        Self::Internal,
    ];

    /// The JS name of the group (`TraceLiteError.group`): `input`, `option`,
    /// `limit`, `store` or `internal`; its class is `InputError`,
    /// `OptionError`, `LimitError`, `StoreError` or `InternalError`.
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::BadInput => "input",
            Self::BadOption => "option",
            Self::Limit => "limit",
            Self::Store => "store",
            Self::Internal => "internal",
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

    /// Every code is one the crate raises (none is host-only): each is named
    /// as `ErrorCode::<Variant>` somewhere in `src/` outside this file; and
    /// every group holds a code.
    #[test]
    fn every_code_is_raised_by_the_core_and_has_a_group() {
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
        for code in ErrorCode::ALL {
            let name = format!("{code:?}");
            assert!(
                raised.contains(&name),
                "ErrorCode::{name} is never raised in src/: a host-only code belongs in pkg-config/core/errors.js"
            );
        }
        for group in ErrorGroup::ALL {
            assert!(
                ErrorCode::ALL.iter().any(|c| c.group() == group),
                "{group:?} holds no code"
            );
        }
        let names: std::collections::BTreeSet<&str> =
            ErrorGroup::ALL.iter().map(|g| g.as_str()).collect();
        assert_eq!(names.len(), ErrorGroup::ALL.len());
    }

    /// The host's table (`HOST_CODES` in `pkg-config/core/errors.js`) and
    /// this enum share no code (a code has one owner), and each host code's
    /// group is a core group or one of the host's own (`proxy`, `host`).
    #[test]
    fn the_host_table_shares_no_code_with_the_core() {
        let js = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("pkg-config/core/errors.js");
        let text = std::fs::read_to_string(&js).unwrap_or_default();
        let table = text
            .split_once("export const HOST_CODES")
            .and_then(|(_, rest)| rest.split_once("});"))
            .map(|(table, _)| table)
            .unwrap_or_default();
        let host: Vec<(&str, &str)> = table
            .lines()
            .filter_map(|l| {
                let (code, group) = l.trim().split_once(':')?;
                let group = group.trim().trim_end_matches(',').trim_matches('\'');
                code.chars()
                    .all(|c| c.is_ascii_uppercase() || c == '_')
                    .then_some((code, group))
            })
            .collect();
        assert!(
            host.len() >= 9,
            "read {} host codes from {}",
            host.len(),
            js.display()
        );
        for (code, group) in host {
            assert_eq!(ErrorCode::from_name(code), None, "{code} is in both tables");
            if ErrorGroup::ALL.iter().all(|g| g.as_str() != group) {
                assert!(
                    ["proxy", "host"].contains(&group),
                    "{code}: unknown group {group}"
                );
            }
        }
    }
}
