//! The stateful controller for JS: `TraceLiteController` wraps [`TraceLite`] (the
//! JS class `TraceLite` in `pkg-config/core/session.js` wraps this). Values cross
//! as JSON text.

use serde_json::Value;
use wasm_bindgen::prelude::*;

use super::json_text;
use super::{args, to_js, JsCounter};
use crate::config::Config;
use crate::controller::TraceLite;
use crate::error::{Error, ErrorCode};
use crate::formats::FormatName;
use crate::model::{Extra, ToolCall};
use crate::store::{self, SpillStore};

fn parse(text: &str, what: &str) -> Result<Value, JsValue> {
    serde_json::from_str(text)
        .map_err(|e| to_js(Error::new(ErrorCode::InvalidJson, what, e.to_string())))
}

/// Raw history + spill store + caches of one in-process agent (`free()` releases it).
#[wasm_bindgen(js_name = TraceLiteController)]
pub struct TraceLiteController {
    inner: TraceLite,
}

#[wasm_bindgen(js_class = TraceLiteController)]
impl TraceLiteController {
    /// A session with `options` (JSON text of the settings) and an optional
    /// token counter `(text) => number`.
    #[wasm_bindgen(constructor)]
    pub fn new(options: &JsValue, counter: &JsValue) -> Result<TraceLiteController, JsValue> {
        let options = args::optional_text(options, "options")?.unwrap_or_default();
        let counter = args::function(counter, "countTokens")?;
        let config = Config::from_json_str(&options).map_err(to_js)?;
        let mut inner = TraceLite::new(config);
        if let Some(f) = counter {
            inner = inner.with_counter(Box::new(JsCounter(f)));
        }
        Ok(TraceLiteController { inner })
    }

    /// Records a step: `call` is JSON `{"id", "name", "arguments"}` (arguments
    /// as JSON text). Returns the step summary as JSON text.
    #[wasm_bindgen(js_name = processStep)]
    pub fn process_step(&mut self, call: &JsValue, output: &JsValue) -> Result<String, JsValue> {
        let value = parse(&args::text(call, "toolCall")?, "toolCall")?;
        let output = args::text(output, "output")?;
        let field = |k: &str| {
            value
                .get(k)
                .and_then(Value::as_str)
                .unwrap_or("")
                .to_string()
        };
        let call = ToolCall {
            id: field("id"),
            name: field("name"),
            arguments: field("arguments"),
        };
        let summary = self.inner.process_step(call, output).map_err(to_js)?;
        json_text(&summary, "step")
    }

    /// Appends a message given as JSON text of an OpenAI Chat message.
    #[wasm_bindgen(js_name = addMessage)]
    pub fn add_message(&mut self, message: &JsValue) -> Result<(), JsValue> {
        let value = parse(&args::text(message, "message")?, "message")?;
        self.inner.add_message_json(&value).map_err(to_js)
    }

    /// Assembles the request in `format` with `base` (JSON text of an object:
    /// the request's other top-level members). Returns
    /// `{"request": …, "report": …, "spills": […], "images": […]}` as JSON text.
    pub fn assemble(&mut self, format: &JsValue, base: &JsValue) -> Result<String, JsValue> {
        let format = args::text(format, "format")?;
        let base = args::text(base, "base")?;
        let format: FormatName =
            serde_json::from_value(Value::String(format.clone())).map_err(|_| {
                to_js(Error::new(
                    ErrorCode::UnknownFormat,
                    "format",
                    format!("unknown format {format:?}"),
                ))
            })?;
        let base: Extra = match parse(&base, "base")? {
            Value::Object(map) => map,
            Value::Null => Extra::new(),
            other => return Err(to_js(crate::formats::wrong("base", "an object", &other))),
        };
        let out = self.inner.assemble(format, base).map_err(to_js)?;
        super::output_json(&out)
    }

    /// Counters as JSON text.
    pub fn telemetry(&self) -> Result<String, JsValue> {
        json_text(&self.inner.telemetry(), "telemetry")
    }

    /// Marks the end of a task stage (the next assemble may compact).
    #[wasm_bindgen(js_name = finishStage)]
    pub fn finish_stage(&mut self) {
        self.inner.finish_stage();
    }

    /// Pins a constraint kept word for word by compaction; returns whether it was new.
    #[wasm_bindgen(js_name = pinConstraint)]
    pub fn pin_constraint(&mut self, text: &JsValue) -> Result<bool, JsValue> {
        let text = args::text(text, "text")?;
        self.inner.pin_constraint(&text).map_err(to_js)
    }

    /// Pinned constraints as JSON text (an array of strings).
    #[wasm_bindgen(js_name = pinnedConstraints)]
    pub fn pinned_constraints(&self) -> Result<String, JsValue> {
        json_text(&self.inner.pinned_constraints(), "pinnedConstraints")
    }

    /// The last report as JSON text (`null` before the first assemble).
    pub fn report(&self) -> Result<String, JsValue> {
        json_text(&self.inner.report(), "report")
    }

    /// The full text behind a `spill://<session>/<key>` pointer (or a path pointer).
    #[wasm_bindgen(js_name = readSpill)]
    pub fn read_spill(&mut self, pointer: &JsValue) -> Result<String, JsValue> {
        let pointer = args::text(pointer, "pointer")?;
        let pointer = pointer.as_str();
        let (Some(session), key) = store::parse_pointer(pointer) else {
            return Err(to_js(Error::new(
                ErrorCode::InvalidSpillKey,
                "pointer",
                "must be spill://<session>/<key> or a spill's file path",
            )));
        };
        self.inner.store_mut().get(session, key).map_err(to_js)
    }

    /// Blobs of the session's spill namespace as JSON text `[{key, bytes, lines}]`.
    #[wasm_bindgen(js_name = listSpills)]
    pub fn list_spills(&self) -> Result<String, JsValue> {
        json_text(
            &self.inner.store().list(&self.inner.config().session),
            "spills",
        )
    }
}
