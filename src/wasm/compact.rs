//! wasm exports of compaction: pinned constraints, stage ends, and the second
//! phase of the async summarizer flow (the pending prompt, validating a
//! summary, adopting it into the compacted request).

use wasm_bindgen::prelude::*;

use super::{args, to_js, WasmStore};
use crate::compact::api;
use crate::config::Config;

#[wasm_bindgen(js_class = Store)]
impl WasmStore {
    /// Pins a constraint for `session` (archived word for word at the next
    /// compaction); returns whether it was new.
    #[wasm_bindgen(js_name = pinConstraint)]
    pub fn pin_constraint(&mut self, session: &JsValue, text: &JsValue) -> Result<bool, JsValue> {
        let (session, text) = (args::text(session, "session")?, args::text(text, "text")?);
        self.state.compact.pin(&session, &text).map_err(to_js)
    }

    /// Constraints pinned for `session`, as JSON text (an array of strings).
    #[wasm_bindgen(js_name = pinnedConstraints)]
    pub fn pinned_constraints(&self, session: &JsValue) -> Result<String, JsValue> {
        let session = args::text(session, "session")?;
        super::json_text(self.state.compact.pinned(&session), "pinnedConstraints")
    }

    /// Marks the end of a task stage: the next compress call of `session` is a
    /// stage boundary (a compaction trigger).
    #[wasm_bindgen(js_name = finishStage)]
    pub fn finish_stage(&mut self, session: &JsValue) -> Result<(), JsValue> {
        self.state
            .compact
            .finish_stage(&args::text(session, "session")?);
        Ok(())
    }

    /// The summarization prompt of the last compaction of `session` while its
    /// summary may still be replaced (`undefined` otherwise).
    #[wasm_bindgen(js_name = pendingSummaryPrompt)]
    pub fn pending_summary_prompt(&self, session: &JsValue) -> Result<Option<String>, JsValue> {
        let session = args::text(session, "session")?;
        Ok(self
            .state
            .compact
            .pending_prompt(&session)
            .map(str::to_string))
    }

    /// Replaces the extractive summary in `request` (the output of the
    /// compress call that compacted, JSON text) by `summary`, a host
    /// summarizer's answer; returns the new request as JSON text. Throws
    /// `SUMMARIZER_FAILED` when a section is missing or empty or nothing is pending.
    #[wasm_bindgen(js_name = adoptSummary)]
    pub fn adopt_summary(
        &mut self,
        request: &JsValue,
        options: &JsValue,
        summary: &JsValue,
    ) -> Result<String, JsValue> {
        let request = args::text(request, "request")?;
        let options = args::text(options, "options")?;
        let summary = args::text(summary, "summary")?;
        let config = Config::from_json_str(&options).map_err(to_js)?;
        let adopted = api::adopt_summary_json(&request, &config, &mut self.state.compact, &summary)
            .map_err(to_js)?;
        super::json_text(&adopted, "request")
    }
}

/// `null` when `text` has the five summary sections (Goal, Progress, Key
/// facts, Decisions, Next steps), each once and non-empty; otherwise what is wrong.
#[wasm_bindgen(js_name = validateSummary)]
pub fn validate_summary(text: &JsValue) -> Result<Option<String>, JsValue> {
    let text = args::text(text, "text")?;
    Ok(api::validate_summary(&text).err().map(|e| e.message))
}
