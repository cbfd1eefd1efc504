//! The documented default settings, for hosts that show or diff them (the playground).

use wasm_bindgen::prelude::*;

use crate::config::Config;
use crate::error::{Error, ErrorCode};

/// Every setting at its default, as JSON text in the shape `compress` accepts.
#[wasm_bindgen(js_name = defaultOptions)]
pub fn default_options() -> Result<String, JsValue> {
    serde_json::to_string(&Config::default()).map_err(|e| {
        super::to_js(Error::new(
            ErrorCode::InvalidOption,
            "options",
            e.to_string(),
        ))
    })
}
