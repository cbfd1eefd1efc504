//! The only code that touches wasm-bindgen: thin exports over the pure core.
//! Values cross as JSON text; errors become `Error` objects with `name =
//! "TraceLiteError"`, a stable `code` and the offending `path`. Every
//! parameter is taken as a `JsValue` and checked ([`args`]): a wrong type is
//! an `INVALID_ARGUMENT` error, never a trap.

mod args;
mod blobs;
mod formats;
mod memory;
mod optical;
mod persist;
mod redact;
mod session;
mod spill;

use wasm_bindgen::prelude::*;

mod compact;
mod config;

use crate::config::Config;
use crate::error::{Error, ErrorCode};
use crate::formats::FormatName;
use crate::pipeline::{compress_json, Env, HostState};
use crate::store::{MemoryStore, SpillStore};
use crate::tokens::{estimate, Estimator, TokenCounter};
use crate::trajectory::{trajectory_to_request, Trajectory};

/// Converts a core error into a JS `Error` carrying `code` and `path`; its
/// message is [`Error::described`] (the code is not repeated in it).
pub(crate) fn to_js(err: Error) -> JsValue {
    let js = js_sys::Error::new(&err.described());
    js.set_name("TraceLiteError");
    let obj: &JsValue = js.as_ref();
    // Setting plain data properties on a fresh Error cannot fail.
    let _ = js_sys::Reflect::set(obj, &"code".into(), &err.code.as_str().into());
    let _ = js_sys::Reflect::set(obj, &"path".into(), &err.path.as_str().into());
    js.into()
}

/// `value` as JSON text for JS; a failure is `SERIALIZATION_FAILED` naming `what`.
pub(crate) fn json_text<T: serde::Serialize + ?Sized>(
    value: &T,
    what: &str,
) -> Result<String, JsValue> {
    crate::error::to_json(&value, what).map_err(to_js)
}

/// Largest count a host counter may return (2^32 − 1): more tokens than any
/// request can hold, and small enough that sums over 100,000 messages never
/// overflow.
const MAX_COUNT: f64 = 4_294_967_295.0;

/// A token counter backed by a JS function `(text) => number`. Fractions are
/// rounded up; NaN, negative, non-numbers and counts above 2^32 − 1 are
/// `COUNTER_FAILED` (a count that large would make every total meaningless).
struct JsCounter(js_sys::Function);

impl TokenCounter for JsCounter {
    fn count(&self, text: &str) -> crate::error::Result<u64> {
        let fail = |msg: &str| Error::new(ErrorCode::CounterFailed, "countTokens", msg);
        let value = self
            .0
            .call1(&JsValue::NULL, &JsValue::from_str(text))
            .map_err(|_| fail("the token counter threw"))?;
        match value.as_f64() {
            Some(n) if (0.0..=MAX_COUNT).contains(&n) => Ok(n.ceil() as u64),
            _ => Err(fail(
                "the token counter must return a number from 0 to 4294967295",
            )),
        }
    }
}

/// A compress result as JSON text: `{"request": …, "report": …, "spills":
/// […], "images": […]}` (the request copied in as emitted, never re-serialized).
pub(crate) fn output_json(out: &crate::pipeline::Output) -> Result<String, JsValue> {
    let part = |value: Result<String, serde_json::Error>, what: &str| {
        value.map_err(|e| {
            to_js(Error::new(
                ErrorCode::SerializationFailed,
                what,
                e.to_string(),
            ))
        })
    };
    let report = part(serde_json::to_string(&out.report), "report")?;
    let spills = part(serde_json::to_string(&out.spills), "spills")?;
    let images = part(serde_json::to_string(&out.images), "images")?;
    let mut json =
        String::with_capacity(out.request.len() + report.len() + spills.len() + images.len() + 48);
    json.push_str("{\"request\":");
    json.push_str(&out.request);
    json.push_str(",\"report\":");
    json.push_str(&report);
    json.push_str(",\"spills\":");
    json.push_str(&spills);
    json.push_str(",\"images\":");
    json.push_str(&images);
    json.push('}');
    Ok(json)
}

/// A spill store plus the host state of every session it holds, owned by JS
/// (`free()` releases it); `Store` in JS, behind the package's `SpillStore`.
#[wasm_bindgen(js_name = Store)]
pub struct WasmStore {
    store: MemoryStore,
    state: HostState,
}

#[wasm_bindgen(js_class = Store)]
impl WasmStore {
    /// A new, empty store.
    #[wasm_bindgen(constructor)]
    pub fn new() -> WasmStore {
        WasmStore {
            store: MemoryStore::new(),
            state: HostState::default(),
        }
    }

    /// Compresses `request` (JSON text) with `options` (JSON text); returns
    /// `{"request": …, "report": …, "spills": […], "images": […]}` as JSON text.
    pub fn compress(
        &mut self,
        request: &JsValue,
        options: &JsValue,
        counter: &JsValue,
        previous: &JsValue,
    ) -> Result<String, JsValue> {
        // Options first: a bad limit is reported before the request is copied in.
        let options = args::text(options, "options")?;
        let config = Config::from_json_str(&options).map_err(to_js)?;
        let counter = args::function(counter, "countTokens")?;
        let previous = args::optional_text(previous, "previous")?;
        let request = args::text(request, "request")?;
        let js_counter = counter.map(JsCounter);
        let counter: &dyn TokenCounter = match &js_counter {
            Some(c) => c,
            None => &Estimator,
        };
        let out = compress_json(
            &request,
            &config,
            Env {
                counter,
                previous: previous.as_deref(),
                ..Env::new(&mut self.store, &mut self.state)
            },
        )
        .map_err(to_js)?;
        output_json(&out)
    }

    /// The full text of a spilled blob.
    pub fn get(&mut self, session: &JsValue, key: &JsValue) -> Result<String, JsValue> {
        let (session, key) = (
            args::exact_text(session, "session")?,
            args::exact_text(key, "key")?,
        );
        self.store.get(&session, &key).map_err(to_js)
    }

    /// Stores a blob (e.g. rehydrating from a compress call's `spills`).
    pub fn put(&mut self, session: &JsValue, key: &JsValue, text: &JsValue) -> Result<(), JsValue> {
        let session = args::exact_text(session, "session")?;
        let key = args::exact_text(key, "key")?;
        let text = args::exact_text(text, "text")?;
        self.store.put(&session, &key, &text).map_err(to_js)
    }

    /// Blobs of a session as JSON text `[{key, bytes, lines}]`.
    pub fn list(&self, session: &JsValue) -> Result<String, JsValue> {
        let session = args::exact_text(session, "session")?;
        json_text(&self.store.list(&session), "list")
    }

    /// Removes a blob.
    pub fn delete(&mut self, session: &JsValue, key: &JsValue) -> Result<bool, JsValue> {
        let (session, key) = (
            args::exact_text(session, "session")?,
            args::exact_text(key, "key")?,
        );
        Ok(self.store.delete(&session, &key))
    }
}

impl Default for WasmStore {
    fn default() -> Self {
        Self::new()
    }
}

/// Estimated o200k_base tokens of `text`.
#[wasm_bindgen(js_name = estimateTokens)]
pub fn estimate_tokens(text: &JsValue) -> Result<f64, JsValue> {
    Ok(estimate(&args::text(text, "text")?) as f64)
}

/// The crate version.
#[wasm_bindgen]
pub fn version() -> String {
    env!("CARGO_PKG_VERSION").to_string()
}

/// The request (JSON text) an agent loop sends before step `t` of `trajectory` (JSON text).
#[wasm_bindgen(js_name = trajectoryToRequest)]
pub fn trajectory_to_request_js(
    trajectory: &JsValue,
    t: &JsValue,
    format: &JsValue,
) -> Result<String, JsValue> {
    let trajectory = args::text(trajectory, "trajectory")?;
    let t = args::count(t, "t")?;
    let format = args::text(format, "format")?;
    let format: FormatName = serde_json::from_value(serde_json::Value::String(format.clone()))
        .map_err(|_| {
            to_js(Error::new(
                ErrorCode::UnknownFormat,
                "format",
                format!("unknown format {format:?}"),
            ))
        })?;
    let trajectory = Trajectory::from_json(&trajectory).map_err(to_js)?;
    let value = trajectory_to_request(&trajectory, t, format).map_err(to_js)?;
    Ok(value.to_string())
}
