//! Argument checks at the boundary. Exports take `JsValue`s and check them
//! here, so a value of the wrong type is a `TraceLiteError` with code
//! `INVALID_ARGUMENT` naming the parameter, never a trap in the generated
//! glue (which, given a number where it expects a string, reads and writes
//! out of bounds and can leave the allocator broken for every later call).

use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;

use super::to_js;
use crate::error::{Error, ErrorCode};

/// Largest integer a JS number holds exactly (2^53 − 1).
const MAX_SAFE_INTEGER: f64 = 9_007_199_254_740_991.0;

/// `INVALID_ARGUMENT` at `name`: `must be <expected>` (the JS wrappers, which
/// check most arguments first, say what they got; this is the last guard).
fn wrong(name: &str, expected: &str) -> JsValue {
    to_js(Error::new(
        ErrorCode::InvalidArgument,
        name,
        ["must be ", expected].concat(),
    ))
}

/// A string.
pub(crate) fn text(value: &JsValue, name: &str) -> Result<String, JsValue> {
    value.as_string().ok_or_else(|| wrong(name, "a string"))
}

/// A string that must cross exactly: a lone UTF-16 surrogate (which would
/// cross as U+FFFD, sharing a content key with its twin that holds U+FFFD) is
/// `INVALID_ARGUMENT` naming `name`. Checked only when the text has a U+FFFD
/// (every lone surrogate becomes one), so most texts pay nothing.
pub(crate) fn exact_text(value: &JsValue, name: &str) -> Result<String, JsValue> {
    let text = text(value, name)?;
    if text.contains('\u{FFFD}') && !value.unchecked_ref::<js_sys::JsString>().is_valid_utf16() {
        return Err(to_js(Error::new(
            ErrorCode::InvalidArgument,
            name,
            "contains a lone UTF-16 surrogate: it has no exact UTF-8 form",
        )));
    }
    Ok(text)
}

/// A string, or `None` for `undefined` / `null`.
pub(crate) fn optional_text(value: &JsValue, name: &str) -> Result<Option<String>, JsValue> {
    if value.is_undefined() || value.is_null() {
        return Ok(None);
    }
    text(value, name).map(Some)
}

/// The bytes of a `Uint8Array` (copied in).
pub(crate) fn bytes(value: &JsValue, name: &str) -> Result<Vec<u8>, JsValue> {
    value
        .dyn_ref::<js_sys::Uint8Array>()
        .map(js_sys::Uint8Array::to_vec)
        .ok_or_else(|| wrong(name, "a Uint8Array"))
}

/// A non-negative integer number (at most 2^53 − 1); saturates at `usize::MAX`
/// (4 GiB − 1 in wasm32), so a huge offset reads past the end instead of
/// wrapping around to the start.
pub(crate) fn count(value: &JsValue, name: &str) -> Result<usize, JsValue> {
    match value.as_f64() {
        Some(n) if (0.0..=MAX_SAFE_INTEGER).contains(&n) && n.fract() == 0.0 => {
            Ok(usize::try_from(n as u64).unwrap_or(usize::MAX))
        }
        _ => Err(wrong(name, "a non-negative integer")),
    }
}

/// A time in seconds: any number (not finite or negative counts as 0).
pub(crate) fn seconds(value: &JsValue, name: &str) -> Result<u64, JsValue> {
    match value.as_f64() {
        Some(n) if n.is_finite() && n > 0.0 => Ok(n as u64),
        Some(_) => Ok(0),
        None => Err(wrong(name, "a number of seconds")),
    }
}

/// A boolean; `undefined` is `false`.
pub(crate) fn flag(value: &JsValue, name: &str) -> Result<bool, JsValue> {
    if value.is_undefined() {
        return Ok(false);
    }
    value.as_bool().ok_or_else(|| wrong(name, "a boolean"))
}

/// A function, or `None` for `undefined` / `null`.
pub(crate) fn function(value: &JsValue, name: &str) -> Result<Option<js_sys::Function>, JsValue> {
    if value.is_undefined() || value.is_null() {
        return Ok(None);
    }
    value
        .dyn_ref::<js_sys::Function>()
        .cloned()
        .map(Some)
        .ok_or_else(|| wrong(name, "a function"))
}
