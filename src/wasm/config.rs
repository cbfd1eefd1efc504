//! The documented default settings, for hosts that show or diff them (the playground).

use wasm_bindgen::prelude::*;

use crate::config::Config;

/// Every setting at its default, as JSON text in the shape `compress` accepts.
#[wasm_bindgen(js_name = defaultOptions)]
pub fn default_options() -> Result<String, JsValue> {
    super::json_text(&Config::default(), "options")
}
