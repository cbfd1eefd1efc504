//! The only code that touches wasm-bindgen: thin exports over the pure core.
//! Values cross as JSON text; errors become `Error` objects with `name =
//! "TraceLiteError"`, a stable `code` and the offending `path`.

mod formats;
mod memory;
mod optical;
mod redact;
mod session;
mod spill;

use wasm_bindgen::prelude::*;

mod compact;
mod config;

use crate::config::Config;
use crate::error::{Error, ErrorCode};
use crate::formats::FormatName;
use crate::pipeline::{compress_with, Env, SessionState};
use crate::spill::{MemoryStore, SpillStore};
use crate::tokens::{estimate, Estimator, TokenCounter};
use crate::trajectory::{trajectory_to_request, Trajectory};

/// Converts a core error into a JS `Error` carrying `code` and `path`.
pub(crate) fn to_js(err: Error) -> JsValue {
    let js = js_sys::Error::new(&err.to_string());
    js.set_name("TraceLiteError");
    let obj: &JsValue = js.as_ref();
    // Setting plain data properties on a fresh Error cannot fail.
    let _ = js_sys::Reflect::set(obj, &"code".into(), &err.code.as_str().into());
    let _ = js_sys::Reflect::set(obj, &"path".into(), &err.path.as_str().into());
    js.into()
}

/// A token counter backed by a JS function `(text) => number`.
struct JsCounter(js_sys::Function);

impl TokenCounter for JsCounter {
    fn count(&self, text: &str) -> crate::Result<u64> {
        let fail = |msg: &str| Error::new(ErrorCode::CounterFailed, "countTokens", msg);
        let value = self
            .0
            .call1(&JsValue::NULL, &JsValue::from_str(text))
            .map_err(|_| fail("the token counter threw"))?;
        match value.as_f64() {
            Some(n) if n.is_finite() && n >= 0.0 => Ok(n as u64),
            _ => Err(fail("the token counter must return a non-negative number")),
        }
    }
}

/// A spill store plus per-session caches, owned by JS (`free()` releases it).
#[wasm_bindgen]
pub struct Session {
    store: MemoryStore,
    state: SessionState,
}

#[wasm_bindgen]
impl Session {
    /// A new, empty session.
    #[wasm_bindgen(constructor)]
    pub fn new() -> Session {
        Session {
            store: MemoryStore::new(),
            state: SessionState::default(),
        }
    }

    /// Compresses `request` (JSON text) with `options` (JSON text); returns
    /// `{"request": …, "report": …, "spills": […]}` as JSON text.
    pub fn compress(
        &mut self,
        request: &str,
        options: &str,
        counter: Option<js_sys::Function>,
        previous: Option<String>,
    ) -> Result<String, JsValue> {
        let config = Config::from_json_str(options).map_err(to_js)?;
        let js_counter = counter.map(JsCounter);
        let counter: &dyn TokenCounter = match &js_counter {
            Some(c) => c,
            None => &Estimator,
        };
        let out = compress_with(
            request,
            &config,
            Env {
                store: &mut self.store,
                counter,
                state: &mut self.state,
                previous: previous.as_deref(),
            },
        )
        .map_err(to_js)?;
        let report = serde_json::to_string(&out.report).map_err(|e| {
            to_js(Error::new(
                ErrorCode::InvalidRequest,
                "report",
                e.to_string(),
            ))
        })?;
        let spills = serde_json::to_string(&out.spills).map_err(|e| {
            to_js(Error::new(
                ErrorCode::InvalidRequest,
                "spills",
                e.to_string(),
            ))
        })?;
        let mut json = String::with_capacity(out.request.len() + report.len() + spills.len() + 36);
        json.push_str("{\"request\":");
        json.push_str(&out.request);
        json.push_str(",\"report\":");
        json.push_str(&report);
        json.push_str(",\"spills\":");
        json.push_str(&spills);
        json.push('}');
        Ok(json)
    }

    /// The full text of a spilled blob.
    pub fn get(&mut self, session: &str, key: &str) -> Result<String, JsValue> {
        self.store.get(session, key).map_err(to_js)
    }

    /// Stores a blob (e.g. rehydrating from a compress call's `spills`).
    pub fn put(&mut self, session: &str, key: &str, text: &str) -> Result<(), JsValue> {
        self.store.put(session, key, text).map_err(to_js)
    }

    /// Blobs of a session as JSON text `[{key, bytes, lines}]`.
    pub fn list(&self, session: &str) -> String {
        serde_json::to_string(&self.store.list(session)).unwrap_or_else(|_| "[]".into())
    }

    /// Removes a blob.
    pub fn delete(&mut self, session: &str, key: &str) -> bool {
        self.store.delete(session, key)
    }
}

impl Default for Session {
    fn default() -> Self {
        Self::new()
    }
}

/// Estimated o200k_base tokens of `text`.
#[wasm_bindgen(js_name = estimateTokens)]
pub fn estimate_tokens(text: &str) -> f64 {
    estimate(text) as f64
}

/// The crate version.
#[wasm_bindgen]
pub fn version() -> String {
    env!("CARGO_PKG_VERSION").to_string()
}

/// The request (JSON text) an agent loop sends before step `t` of `trajectory` (JSON text).
#[wasm_bindgen(js_name = trajectoryToRequest)]
pub fn trajectory_to_request_js(
    trajectory: &str,
    t: usize,
    format: &str,
) -> Result<String, JsValue> {
    let format: FormatName = serde_json::from_value(serde_json::Value::String(format.into()))
        .map_err(|_| {
            to_js(Error::new(
                ErrorCode::UnknownFormat,
                "format",
                format!("unknown format {format:?}"),
            ))
        })?;
    let trajectory = Trajectory::from_json(trajectory).map_err(to_js)?;
    let value = trajectory_to_request(&trajectory, t, format).map_err(to_js)?;
    Ok(value.to_string())
}
