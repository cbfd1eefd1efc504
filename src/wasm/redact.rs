//! wasm export of the redactor alone, for hosts that must mask secrets in text
//! the pipeline did not take (the edge proxy forwarding a request the core could
//! not read, or serving stored text under `redact.store`).

use serde::Serialize;
use wasm_bindgen::prelude::*;

use super::to_js;
use crate::error::{Error, ErrorCode};
use crate::redact::redact;

#[derive(Serialize)]
struct Redacted<'a> {
    text: &'a str,
    count: usize,
    kinds: &'a [&'static str],
}

/// Masks secrets in `text` with the core's redactor. Returns JSON text
/// `{"text": masked, "count": n, "kinds": [...]}` (kinds name detectors, never values).
#[wasm_bindgen(js_name = redactText)]
pub fn redact_text(text: &str) -> Result<String, JsValue> {
    let (masked, found) = redact(text);
    serde_json::to_string(&Redacted {
        text: &masked,
        count: found.count,
        kinds: &found.kinds,
    })
    .map_err(|e| {
        to_js(Error::new(
            ErrorCode::SerializationFailed,
            "text",
            e.to_string(),
        ))
    })
}
