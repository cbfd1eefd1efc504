//! wasm exports of spilling: the store's read/grep/evict/sweep, the agent
//! tools (`spillTools`, `handleToolCall`) and `spillText`.

use serde::Deserialize;
use wasm_bindgen::prelude::*;

use super::{args, to_js, JsCounter, WasmStore};
use crate::config::Config;
use crate::error::{Error, ErrorCode};
use crate::pipeline::HostState;
use crate::spill::api::{self, handle_tool_call_within, tool_definitions, ToolFormat};
use crate::store::grep::{GrepOptions, GrepResult, Pattern};
use crate::store::{MemoryStore, Page, SpillStore, StoreLimits};
use crate::tokens::{Estimator, TokenCounter};

/// A page of `read`, with the offset of the next one (`null` after the last line).
#[derive(serde::Serialize)]
#[serde(rename_all = "camelCase")]
struct PageReply {
    #[serde(flatten)]
    page: Page,
    next_offset: Option<usize>,
}

/// What `grep` found, with the skip of the next page (`null` after the last
/// match) and the lines `grep -n` style.
#[derive(serde::Serialize)]
#[serde(rename_all = "camelCase")]
struct GrepReply<'a> {
    #[serde(flatten)]
    found: GrepResult,
    next_skip: Option<usize>,
    text: &'a str,
}

fn parse<T: for<'de> Deserialize<'de> + Default>(text: &str, what: &str) -> Result<T, JsValue> {
    if text.trim().is_empty() {
        return Ok(T::default());
    }
    let value: serde_json::Value = serde_json::from_str(text)
        .map_err(|e| to_js(Error::new(ErrorCode::InvalidOption, what, e.to_string())))?;
    crate::json::from_value(&value).map_err(|(path, e)| {
        let path = if path == "." {
            what.to_string()
        } else {
            format!("{what}.{path}")
        };
        to_js(Error::new(ErrorCode::InvalidOption, path, e.to_string()))
    })
}

/// Options of `Store.grep` (JSON, camelCase).
#[derive(Debug, Default, Deserialize)]
#[serde(default, deny_unknown_fields, rename_all = "camelCase")]
struct GrepArgs {
    literal: bool,
    ignore_case: bool,
    context: Option<usize>,
    max_matches: Option<usize>,
    skip: usize,
    max_cost: Option<u64>,
}

#[wasm_bindgen(js_class = Store)]
impl WasmStore {
    /// A new, empty session whose store has the given limits (JSON text:
    /// `{maxBytes, maxSessionBytes, ttlSeconds}`, each optional).
    #[wasm_bindgen(js_name = withLimits)]
    pub fn with_limits(limits: &JsValue) -> Result<WasmStore, JsValue> {
        let limits: StoreLimits = parse(&args::text(limits, "limits")?, "limits")?;
        Ok(WasmStore {
            store: MemoryStore::with_limits(limits),
            state: HostState::default(),
        })
    }

    /// Lines `offset+1 ..= offset+limit` of a blob as JSON text
    /// `{offset, count, totalLines, totalBytes, text}`.
    /// `offset` and `limit` are integers (a huge offset reads past the
    /// end; it never wraps around).
    pub fn read(
        &mut self,
        session: &JsValue,
        key: &JsValue,
        offset: &JsValue,
        limit: &JsValue,
    ) -> Result<String, JsValue> {
        let (session, key) = (args::text(session, "session")?, args::text(key, "key")?);
        let offset = args::count(offset, "offset")?;
        let limit = args::count(limit, "limit")?;
        let page = self
            .store
            .read(&session, &key, offset, limit)
            .map_err(to_js)?;
        let next_offset = page.next_offset();
        super::json_text(&PageReply { page, next_offset }, "read")
    }

    /// Matching lines of a blob as JSON text (see `GrepResult`); `options` is
    /// JSON text `{literal, ignoreCase, context, maxMatches, skip}`.
    pub fn grep(
        &mut self,
        session: &JsValue,
        key: &JsValue,
        pattern: &JsValue,
        options: &JsValue,
    ) -> Result<String, JsValue> {
        let (session, key) = (args::text(session, "session")?, args::text(key, "key")?);
        let pattern = args::text(pattern, "pattern")?;
        let options = args::optional_text(options, "options")?.unwrap_or_default();
        let args: GrepArgs = parse(&options, "options")?;
        let pattern = Pattern::new(&pattern, args.literal, args.ignore_case).map_err(to_js)?;
        let defaults = GrepOptions::default();
        let options = GrepOptions {
            context: args.context.unwrap_or(defaults.context),
            max_matches: args.max_matches.unwrap_or(defaults.max_matches),
            skip: args.skip,
            max_cost: args.max_cost.unwrap_or(defaults.max_cost),
            ..defaults
        };
        let found = self
            .store
            .grep(&session, &key, &pattern, &options)
            .map_err(to_js)?;
        let text = found.grep_n();
        super::json_text(
            &GrepReply {
                next_skip: found.next_skip(),
                text: text.strip_suffix('\n').unwrap_or(&text),
                found,
            },
            "grep",
        )
    }

    /// Stores a blob given as UTF-8 bytes (faster than `put` for long texts).
    #[wasm_bindgen(js_name = putBytes)]
    pub fn put_bytes(
        &mut self,
        session: &JsValue,
        key: &JsValue,
        text: &JsValue,
    ) -> Result<(), JsValue> {
        self.store_bytes(session, key, text, true)
    }

    /// Stores a masked copy of a blob (UTF-8 bytes; a scratch store's, for
    /// reading) without checking that it hashes to its content key: masking
    /// changes the text, not what it stands for. Never for a store that is kept.
    #[wasm_bindgen(js_name = putMasked)]
    pub fn put_masked(
        &mut self,
        session: &JsValue,
        key: &JsValue,
        text: &JsValue,
    ) -> Result<(), JsValue> {
        self.store_bytes(session, key, text, false)
    }

    /// Whether a blob exists.
    pub fn contains(&self, session: &JsValue, key: &JsValue) -> Result<bool, JsValue> {
        let (session, key) = (args::text(session, "session")?, args::text(key, "key")?);
        Ok(self.store.contains(&session, &key))
    }

    /// Removes a whole session; returns the bytes freed.
    pub fn evict(&mut self, session: &JsValue) -> Result<f64, JsValue> {
        Ok(self.store.evict(&args::text(session, "session")?) as f64)
    }

    /// Tells the store the host time in seconds (it never goes back).
    #[wasm_bindgen(js_name = setNow)]
    pub fn set_now(&mut self, now: &JsValue) -> Result<(), JsValue> {
        self.store.set_now(args::seconds(now, "now")?);
        Ok(())
    }

    /// Removes sessions unused for the TTL at `now` (seconds); returns how many.
    pub fn sweep(&mut self, now: &JsValue) -> Result<u32, JsValue> {
        let now = args::seconds(now, "now")?;
        Ok(u32::try_from(self.store.sweep(now)).unwrap_or(u32::MAX))
    }

    /// Store usage as JSON text `{totalBytes, sessions, limits}`.
    pub fn usage(&self) -> Result<String, JsValue> {
        super::json_text(
            &serde_json::json!({
                "totalBytes": self.store.total_bytes(),
                "sessions": self.store.sessions(),
                "limits": self.store.limits(),
            }),
            "usage",
        )
    }

    /// Runs a `read_spill` / `grep_spill` call for `session`; `args` is the
    /// call's arguments as JSON text; `max_cost` (optional integer) is the
    /// search's work budget, at most the store's. Returns JSON text
    /// `{text, isError, work}` (`work`: what the search took).
    #[wasm_bindgen(js_name = handleToolCall)]
    pub fn handle_tool_call(
        &mut self,
        name: &JsValue,
        call_args: &JsValue,
        session: &JsValue,
        max_cost: &JsValue,
    ) -> Result<String, JsValue> {
        let name = args::text(name, "name")?;
        let call_args = args::text(call_args, "args")?;
        let session = args::text(session, "session")?;
        let max_cost = match max_cost.is_undefined() || max_cost.is_null() {
            true => None,
            false => Some(args::count(max_cost, "maxCost")? as u64),
        };
        let reply = handle_tool_call_within(&mut self.store, &session, &name, &call_args, max_cost)
            .map_err(to_js)?;
        super::json_text(&reply, "handleToolCall")
    }

    /// Caps one text: over the cap of `options` (JSON text, compress settings)
    /// it is kept under `options.session` and replaced by its excerpt. Returns
    /// JSON text `{text, spilled, pointer?, refused?, tokensBefore, tokensAfter}`.
    /// The text comes as UTF-8 bytes: copying a `Uint8Array` into wasm is
    /// much faster than passing a long JS string.
    #[wasm_bindgen(js_name = spillText)]
    pub fn spill_text(
        &mut self,
        text: &JsValue,
        options: &JsValue,
        counter: &JsValue,
    ) -> Result<String, JsValue> {
        let bytes = args::bytes(text, "text")?;
        let text = utf8(&bytes)?;
        let options = args::optional_text(options, "options")?.unwrap_or_default();
        let counter = args::function(counter, "countTokens")?;
        let config = Config::from_json_str(&options).map_err(to_js)?;
        let js_counter = counter.map(JsCounter);
        let counter: &dyn TokenCounter = match &js_counter {
            Some(c) => c,
            None => &Estimator,
        };
        let spilled =
            api::spill_text(text, None, &config, &mut self.store, counter).map_err(to_js)?;
        super::json_text(&spilled, "spillText")
    }
}

impl WasmStore {
    /// `put_bytes` (the content key `checked`) or `put_masked`.
    fn store_bytes(
        &mut self,
        session: &JsValue,
        key: &JsValue,
        text: &JsValue,
        checked: bool,
    ) -> Result<(), JsValue> {
        let (session, key) = (args::text(session, "session")?, args::text(key, "key")?);
        let bytes = args::bytes(text, "text")?;
        let text = utf8(&bytes)?;
        let stored = if checked {
            self.store.put(&session, &key, text)
        } else {
            self.store.put_hashed(&session, &key, text)
        };
        stored.map_err(to_js)
    }
}

fn utf8(bytes: &[u8]) -> Result<&str, JsValue> {
    std::str::from_utf8(bytes)
        .map_err(|e| to_js(Error::new(ErrorCode::InvalidRequest, "text", e.to_string())))
}

/// Definitions of `read_spill` and `grep_spill` as JSON text, in `format`
/// (`openai-chat`, `openai-responses`, `anthropic` or `gemini`).
#[wasm_bindgen(js_name = spillTools)]
pub fn spill_tools(format: &JsValue) -> Result<String, JsValue> {
    let format = ToolFormat::parse(&args::text(format, "format")?).map_err(to_js)?;
    Ok(tool_definitions(format).to_string())
}
