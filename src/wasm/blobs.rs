//! What hosts need to know about spill names and blobs, from the core rather
//! than copied into JS: name and pointer checks, the paging and search limits
//! of the spill tools, a blob's size, line count and content hash, and the
//! FNV-1a the proxy names unnamed conversations with.

use serde::Serialize;
use wasm_bindgen::prelude::*;

use super::{args, json_text, to_js};
use crate::error::{Error, ErrorCode};
use crate::hash::key;
use crate::spill::api::{DEFAULT_LIMIT, MAX_CONTEXT, MAX_LIMIT, MAX_MATCHES};
use crate::store::{self, grep::GrepOptions};

/// Checks a session name or key as the core does (`INVALID_SPILL_KEY` naming `what`).
#[wasm_bindgen(js_name = checkSpillName)]
pub fn check_spill_name(what: &JsValue, name: &JsValue) -> Result<(), JsValue> {
    let what = args::text(what, "what")?;
    // A name that is not a string is refused like an empty one.
    let name = name.as_string().unwrap_or_default();
    store::validate_name(&what, &name).map_err(to_js)
}

#[derive(Serialize)]
struct Pointer<'a> {
    session: &'a str,
    key: &'a str,
}

/// Splits a `spill://<session>/<key>` pointer or a file path pointer (a bare key when `session` is
/// given) into JSON text `{session, key}`, both checked.
#[wasm_bindgen(js_name = parseSpillPointer)]
pub fn parse_spill_pointer(pointer: &JsValue, session: &JsValue) -> Result<String, JsValue> {
    let Some(pointer) = pointer.as_string() else {
        return Err(to_js(Error::new(
            ErrorCode::InvalidSpillKey,
            "pointer",
            "must be a string",
        )));
    };
    let fallback = args::optional_text(session, "session")?;
    let (named, key) = store::parse_pointer(&pointer);
    let session = match (named, fallback.as_deref()) {
        (Some(s), _) if !key.is_empty() => s,
        (None, Some(s)) => s,
        _ => {
            return Err(to_js(Error::new(
                ErrorCode::InvalidSpillKey,
                "pointer",
                "must look like spill://<session>/<key> or <root>/<session>/<key>.txt",
            )))
        }
    };
    store::validate_name("session", session).map_err(to_js)?;
    store::validate_name("key", key).map_err(to_js)?;
    json_text(&Pointer { session, key }, "pointer")
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct SpillLimits {
    read_limit: usize,
    max_read_limit: usize,
    grep_context: usize,
    max_grep_context: usize,
    grep_max_matches: usize,
    max_grep_matches: usize,
}

/// Default and largest page sizes and grep settings of the spill tools, as JSON text.
#[wasm_bindgen(js_name = spillLimits)]
pub fn spill_limits() -> Result<String, JsValue> {
    let grep = GrepOptions::default();
    json_text(
        &SpillLimits {
            read_limit: DEFAULT_LIMIT,
            max_read_limit: MAX_LIMIT,
            grep_context: grep.context,
            max_grep_context: MAX_CONTEXT,
            grep_max_matches: grep.max_matches,
            max_grep_matches: MAX_MATCHES,
        },
        "spillLimits",
    )
}

#[derive(Serialize)]
struct Facts {
    bytes: usize,
    lines: usize,
    hash: String,
}

/// A blob's UTF-8 size, line count (as the core's stores count it) and
/// content hash (the 32 hex digits of a content key), as JSON text. A text
/// with a lone UTF-16 surrogate is `INVALID_ARGUMENT` (`text`): it has no
/// exact UTF-8 form, so no key can name it alone.
#[wasm_bindgen(js_name = blobFacts)]
pub fn blob_facts(text: &JsValue) -> Result<String, JsValue> {
    let text = args::exact_text(text, "text")?;
    json_text(
        &Facts {
            bytes: text.len(),
            lines: store::lines::count(&text),
            hash: key::content_hash(&text),
        },
        "blobFacts",
    )
}

/// Whether `key` is shaped like a content key (`<kind>-<32 hex>`): its text must hash to it.
#[wasm_bindgen(js_name = isContentKey)]
pub fn is_content_key(key: &str) -> bool {
    key::content_kind(key).is_some()
}

/// 64-bit FNV-1a of a text (its UTF-8 bytes), as 16 hex digits.
#[wasm_bindgen]
pub fn fnv1a(text: &str) -> String {
    crate::hash::fnv1a_hex(text)
}
