//! The agent's tools over the spill store: `read_spill` (page through a blob
//! with line numbers) and `grep_spill` (matching lines with context), their
//! JSON Schema definitions in each provider's tool format, and the executor.
//!
//! Replies are plain text with line numbers and a hint for the next call, so
//! the agent reads a part of a blob without the whole of it ever being resent.

use serde::Deserialize;
use serde_json::{json, Value};

use super::grep::{GrepOptions, Pattern};
use super::{parse_pointer, SpillStore};
use crate::error::{Error, ErrorCode, Result};

/// Name of the paging tool.
pub const READ_SPILL: &str = "read_spill";
/// Name of the search tool.
pub const GREP_SPILL: &str = "grep_spill";

/// Most bytes of text a `read_spill` reply shows.
pub const MAX_PAGE_BYTES: usize = 16_000;
/// Default and largest `limit` of `read_spill`.
pub const DEFAULT_LIMIT: usize = 200;
/// Largest `limit` of `read_spill`.
pub const MAX_LIMIT: usize = 2_000;
/// Largest `context` of `grep_spill`.
pub const MAX_CONTEXT: usize = 10;
/// Largest `max_matches` of `grep_spill`.
pub const MAX_MATCHES: usize = 200;

/// Provider tool-definition formats.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ToolFormat {
    /// OpenAI Chat Completions: `{type: "function", function: {name, description, parameters}}`.
    #[serde(alias = "openai")]
    OpenaiChat,
    /// OpenAI Responses: `{type: "function", name, description, parameters, strict: false}`
    /// (the API's default is strict, which wants every property required).
    OpenaiResponses,
    /// Anthropic Messages: `{name, description, input_schema}`.
    Anthropic,
    /// Gemini function declarations: `{name, description, parametersJsonSchema}`
    /// (for `tools: [{ functionDeclarations }]`).
    Gemini,
}

impl ToolFormat {
    /// Parses `openai-chat` (or `openai`), `openai-responses`, `anthropic`, `gemini`.
    pub fn parse(name: &str) -> Result<Self> {
        serde_json::from_value(Value::String(name.into())).map_err(|_| {
            Error::new(
                ErrorCode::InvalidOption,
                "format",
                "must be \"openai-chat\", \"openai-responses\", \"anthropic\" or \"gemini\"",
            )
        })
    }
}

/// JSON Schemas of the tools' arguments (text: parsed once per call, far
/// smaller in wasm than building the same values in code).
const READ_SCHEMA: &str = r#"{"type":"object","properties":{
"pointer":{"type":"string","description":"The spill:// pointer from the output's header."},
"offset":{"type":"integer","minimum":0,"description":"Lines to skip (0 = from the first line; to continue, pass the last line number shown)."},
"limit":{"type":"integer","minimum":1,"maximum":MAX_LIMIT,"description":"Most lines to return (default 200)."},
"column":{"type":"integer","minimum":0,"description":"Bytes to skip in the first line (to continue a very long line)."}},
"required":["pointer"],"additionalProperties":false}"#;

const GREP_SCHEMA: &str = r#"{"type":"object","properties":{
"pointer":{"type":"string","description":"The spill:// pointer from the output's header."},
"pattern":{"type":"string","description":"Regular expression (. [] * + ? {n,m} | () ^ $ \\d \\w \\s \\b), matched against each line."},
"literal":{"type":"boolean","description":"Search the pattern as plain text (default false)."},
"ignore_case":{"type":"boolean","description":"Case-insensitive (default false)."},
"context":{"type":"integer","minimum":0,"maximum":MAX_CONTEXT,"description":"Lines of context around each match (default 2)."},
"max_matches":{"type":"integer","minimum":1,"maximum":MAX_MATCHES,"description":"Most matching lines to return (default 50)."},
"skip":{"type":"integer","minimum":0,"description":"Matching lines to skip (to see further matches)."}},
"required":["pointer","pattern"],"additionalProperties":false}"#;

fn schema(text: &str) -> Value {
    let text = text
        .replace("MAX_LIMIT", &MAX_LIMIT.to_string())
        .replace("MAX_CONTEXT", &MAX_CONTEXT.to_string())
        .replace("MAX_MATCHES", &MAX_MATCHES.to_string());
    serde_json::from_str(&text).unwrap_or(Value::Null)
}

fn schemas() -> [(&'static str, &'static str, Value); 2] {
    [
        (
            READ_SPILL,
            "Read part of a tool output that was too long to show in full. Pass the \
             spill:// pointer from the output's header. Returns numbered lines; page \
             with offset (lines to skip) and limit.",
            schema(READ_SCHEMA),
        ),
        (
            GREP_SPILL,
            "Search a tool output that was too long to show in full. Returns the \
             matching lines with their line numbers (N:) and context lines (N-).",
            schema(GREP_SCHEMA),
        ),
    ]
}

/// Definitions of `read_spill` and `grep_spill` in `format`, as a JSON array.
pub fn tool_definitions(format: ToolFormat) -> Value {
    let tools = schemas()
        .into_iter()
        .map(|(name, description, schema)| match format {
            ToolFormat::OpenaiChat => json!({
                "type": "function",
                "function": {"name": name, "description": description, "parameters": schema}
            }),
            ToolFormat::OpenaiResponses => json!({
                "type": "function", "name": name, "description": description, "parameters": schema,
                "strict": false
            }),
            ToolFormat::Anthropic => json!({
                "name": name, "description": description, "input_schema": schema
            }),
            ToolFormat::Gemini => json!({
                "name": name, "description": description, "parametersJsonSchema": schema
            }),
        });
    Value::Array(tools.collect())
}

/// What a tool call returns to the model.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolReply {
    /// Text for the tool result.
    pub text: String,
    /// Whether the call failed (bad arguments, unknown pointer): the text says why.
    pub is_error: bool,
    /// Search work the call took (see [`GrepResult::work`](super::GrepResult)):
    /// the budget given when a search ran out of it, 0 for `read_spill`.
    pub work: u64,
}

impl ToolReply {
    fn error(text: String) -> Self {
        Self::text(text, true)
    }

    fn text(text: String, is_error: bool) -> Self {
        Self {
            text,
            is_error,
            work: 0,
        }
    }
}

#[derive(Deserialize)]
struct ReadArgs {
    pointer: String,
    #[serde(default)]
    offset: usize,
    #[serde(default)]
    limit: Option<usize>,
    #[serde(default)]
    column: usize,
}

#[derive(Deserialize)]
struct GrepArgs {
    pointer: String,
    pattern: String,
    #[serde(default)]
    literal: bool,
    #[serde(default)]
    ignore_case: bool,
    #[serde(default)]
    context: Option<usize>,
    #[serde(default)]
    max_matches: Option<usize>,
    #[serde(default)]
    skip: usize,
}

/// Whether `name` is one of the spill tools.
pub fn is_spill_tool(name: &str) -> bool {
    name == READ_SPILL || name == GREP_SPILL
}

/// Runs a `read_spill` / `grep_spill` call for `session`. `args` is the
/// call's arguments as JSON text (or a JSON object). Mistakes the model can fix
/// (bad arguments, unknown pointer, bad pattern) come back as a reply with
/// `is_error`; an unknown tool name is an `INVALID_TOOL_CALL` error.
pub fn handle_tool_call(
    store: &mut dyn SpillStore,
    session: &str,
    name: &str,
    args: &str,
) -> Result<ToolReply> {
    handle_tool_call_within(store, session, name, args, None)
}

/// [`handle_tool_call`] with a work budget for a search (`max_cost`, at most
/// the store's `limits.maxGrepCost`; the default when `None`): the host's
/// share of a budget across calls. The reply's `work` is what it took.
pub fn handle_tool_call_within(
    store: &mut dyn SpillStore,
    session: &str,
    name: &str,
    args: &str,
    max_cost: Option<u64>,
) -> Result<ToolReply> {
    if !is_spill_tool(name) {
        return Err(Error::new(
            ErrorCode::InvalidToolCall,
            "name",
            format!("unknown tool {name:?} (expected {READ_SPILL} or {GREP_SPILL})"),
        ));
    }
    let value: Value = match serde_json::from_str(if args.trim().is_empty() { "{}" } else { args })
    {
        Ok(v) => v,
        Err(e) => {
            return Ok(ToolReply::error(format!(
                "{name}: arguments are not JSON: {e}"
            )))
        }
    };
    Ok(if name == READ_SPILL {
        match serde_json::from_value::<ReadArgs>(value) {
            Ok(a) => read(store, session, &a),
            Err(e) => ToolReply::error(format!("{READ_SPILL}: bad arguments: {e}")),
        }
    } else {
        match serde_json::from_value::<GrepArgs>(value) {
            Ok(a) => grep(store, session, &a, max_cost),
            Err(e) => ToolReply::error(format!("{GREP_SPILL}: bad arguments: {e}")),
        }
    })
}

/// The key a pointer names in `session`; another session's pointer is
/// treated exactly like a missing key.
fn key_in<'p>(pointer: &'p str, session: &str) -> std::result::Result<&'p str, ToolReply> {
    match parse_pointer(pointer) {
        (Some(s), key) if s == session => Ok(key),
        (None, key) => Ok(key),
        _ => Err(missing(pointer)),
    }
}

fn missing(pointer: &str) -> ToolReply {
    ToolReply::error(format!(
        "no spilled output at {pointer} in this session (it may have expired)"
    ))
}

fn failure(pointer: &str, e: Error) -> ToolReply {
    match e.code {
        ErrorCode::SpillNotFound | ErrorCode::InvalidSpillKey => missing(pointer),
        _ => ToolReply::error(e.message),
    }
}

fn read(store: &mut dyn SpillStore, session: &str, a: &ReadArgs) -> ToolReply {
    let key = match key_in(&a.pointer, session) {
        Ok(k) => k,
        Err(reply) => return reply,
    };
    let limit = a.limit.unwrap_or(DEFAULT_LIMIT).clamp(1, MAX_LIMIT);
    let page = match store.read(session, key, a.offset, limit) {
        Ok(p) => p,
        Err(e) => return failure(&a.pointer, e),
    };
    let mut out = String::new();
    if page.count == 0 {
        out.push_str(&format!(
            "{}: offset {} is past the end ({} lines)",
            a.pointer, a.offset, page.total_lines
        ));
        return ToolReply::text(out, page.total_lines > 0);
    }
    let mut shown = 0;
    let mut used = 0;
    let mut cut: Option<(usize, usize)> = None;
    let mut body = String::new();
    for (i, line) in page.text.split_inclusive('\n').enumerate() {
        let number = page.offset + i + 1;
        let line = line.strip_suffix('\n').unwrap_or(line);
        let column = if i == 0 { a.column.min(line.len()) } else { 0 };
        let mut from = column;
        while !line.is_char_boundary(from) {
            from -= 1;
        }
        let rest = line.get(from..).unwrap_or("");
        if used + rest.len() > MAX_PAGE_BYTES {
            if shown == 0 {
                let part = super::lines::floor_prefix(rest, MAX_PAGE_BYTES).to_string();
                // A line of multi-byte chars may not fit a single char; always progress.
                let part = if part.is_empty() {
                    rest.chars().next().map(String::from).unwrap_or_default()
                } else {
                    part
                };
                body.push_str(&format!("{number:>6}\t{part}\n"));
                cut = Some((number, from + part.len()));
                shown = 1;
            }
            break;
        }
        used += rest.len();
        body.push_str(&format!("{number:>6}\t{rest}\n"));
        shown += 1;
    }
    let last = page.offset + shown;
    out.push_str(&format!(
        "{}: lines {}-{} of {} ({:.1} KB)\n",
        a.pointer,
        page.offset + 1,
        last,
        page.total_lines,
        page.total_bytes as f64 / 1000.0
    ));
    out.push_str(&body);
    match cut {
        Some((number, column)) if column < line_len(&page.text) => out.push_str(&format!(
            "[line {number} continues: {READ_SPILL} with offset={}, limit=1, column={column}]",
            number - 1
        )),
        _ if last < page.total_lines => out.push_str(&format!(
            "[{} more lines: {READ_SPILL} with offset={last} to continue]",
            page.total_lines - last
        )),
        _ => out.push_str("[end of output]"),
    }
    ToolReply::text(out, false)
}

/// Length of the first line of `text` without its line end.
fn line_len(text: &str) -> usize {
    let first = text.split_inclusive('\n').next().unwrap_or("");
    first.strip_suffix('\n').unwrap_or(first).len()
}

fn grep(
    store: &mut dyn SpillStore,
    session: &str,
    a: &GrepArgs,
    max_cost: Option<u64>,
) -> ToolReply {
    let key = match key_in(&a.pointer, session) {
        Ok(k) => k,
        Err(reply) => return reply,
    };
    let pattern = match Pattern::new(&a.pattern, a.literal, a.ignore_case) {
        Ok(p) => p,
        Err(e) => {
            return ToolReply::error(format!(
                "{GREP_SPILL}: {}; pass \"literal\": true to search the text as written",
                e.message
            ))
        }
    };
    let options = GrepOptions {
        context: a.context.unwrap_or(2).min(MAX_CONTEXT),
        max_matches: a.max_matches.unwrap_or(50).clamp(1, MAX_MATCHES),
        skip: a.skip,
        max_cost: max_cost.unwrap_or(GrepOptions::default().max_cost),
        ..GrepOptions::default()
    };
    let r = match store.grep(session, key, &pattern, &options) {
        Ok(r) => r,
        Err(e) if e.code == ErrorCode::GrepTooCostly => {
            // Ran out part way, or refused before: counted as all of it.
            return ToolReply {
                work: options.max_cost,
                ..failure(&a.pointer, e)
            };
        }
        Err(e) => return failure(&a.pointer, e),
    };
    let mut out = String::new();
    if r.returned == 0 {
        out.push_str(&format!(
            "{}: {} matching lines of {} for \"{}\"{}",
            a.pointer,
            r.total_matches,
            r.total_lines,
            a.pattern,
            if r.total_matches > 0 {
                format!(" (skip={} is past the last)", a.skip)
            } else {
                String::new()
            }
        ));
        return ToolReply {
            work: r.work,
            ..ToolReply::text(out, false)
        };
    }
    out.push_str(&format!(
        "{}: {} matching lines of {} for \"{}\"; showing matches {}-{}\n",
        a.pointer,
        r.total_matches,
        r.total_lines,
        a.pattern,
        r.skipped + 1,
        r.skipped + r.returned
    ));
    out.push_str(&r.grep_n());
    // Where to read around a match: `read_spill`'s offset for the first one.
    let read = r
        .lines
        .iter()
        .find(|l| l.is_match)
        .map(|l| {
            format!(
                "; {READ_SPILL} with offset={} reads from line {}",
                l.number - 1,
                l.number
            )
        })
        .unwrap_or_default();
    if let Some(next) = r.next_skip() {
        out.push_str(&format!(
            "[{} more matches: {GREP_SPILL} with skip={next}{read}]",
            r.total_matches - next
        ));
    } else {
        out.push_str(&format!("[no more matches{read}]"));
    }
    ToolReply {
        work: r.work,
        ..ToolReply::text(out, false)
    }
}
