//! [`Config`]: every setting of the pipeline, with documented defaults.
//!
//! Options arrive from JS (or the CLI) as JSON with camelCase names; unknown
//! names and wrong types are rejected with an `INVALID_OPTION` error naming the field.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::error::{Error, ErrorCode, Result};
use crate::formats::FormatName;

/// Target model family; decides how images are priced and placed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Provider {
    /// Anthropic: w·h/750 tokens, 1568 px long edge, ~1.15 MP.
    Anthropic,
    /// OpenAI tile models: 85 + 170 per 512-px tile.
    #[default]
    Openai,
    /// OpenAI patch models: 32-px patches × multiplier.
    OpenaiPatch,
    /// Gemini: 258 tokens per 768-px tile (or per `media_resolution`).
    Gemini,
    /// Qwen-VL: one token per 28×28 px.
    Qwen,
}

/// All settings. `Config::default()` is the documented default.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields, rename_all = "camelCase")]
pub struct Config {
    /// Request format; detected from the request when `None`.
    pub format: Option<FormatName>,
    /// Target provider (image pricing and placement).
    pub provider: Provider,
    /// The model's context window in tokens.
    pub budget: u64,
    /// Recent window: the last `window` tool results stay verbatim text.
    pub window: usize,
    /// Session name: namespace of spill keys.
    pub session: String,
    /// Host says this request starts a new task stage (compaction trigger).
    pub stage_boundary: bool,
    /// Repair mode: fix tool-call pairing problems the request has (orphaned or
    /// duplicate results, duplicate ids, misplaced or missing results) instead
    /// of rejecting it; each fix is listed in `Report::repairs`.
    pub repair: bool,
    /// Stage 1: tool-output spilling.
    pub spill: SpillConfig,
    /// Stage 2: cross-observation line dedup.
    pub dedup: DedupConfig,
    /// Stage 3: edit-triggered diagnosis clean-up.
    pub phase: PhaseConfig,
    /// Stage 4: optical snapshots.
    pub optical: OpticalConfig,
    /// Stage 5: compaction.
    pub compact: CompactConfig,
    /// Secret redaction.
    pub redact: RedactConfig,
    /// Resource limits.
    pub limits: Limits,
}

impl Default for Config {
    fn default() -> Self {
        Self {
            format: None,
            provider: Provider::Openai,
            budget: 128_000,
            window: 3,
            session: "default".into(),
            stage_boundary: false,
            repair: false,
            spill: SpillConfig::default(),
            dedup: DedupConfig::default(),
            phase: PhaseConfig::default(),
            optical: OpticalConfig::default(),
            compact: CompactConfig::default(),
            redact: RedactConfig::default(),
            limits: Limits::default(),
        }
    }
}

/// Spilling settings.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields, rename_all = "camelCase")]
pub struct SpillConfig {
    /// Stage switch.
    pub enabled: bool,
    /// Minimum cap per tool result, in tokens.
    pub floor_tokens: u64,
    /// Cap as a share of the budget.
    pub fraction: f64,
    /// Share of the cap given to the head of the excerpt (the rest goes to the tail).
    pub head_share: f64,
    /// Patterns (small regex dialect) marking error lines that must survive the cut.
    pub error_patterns: Vec<String>,
    /// How many hidden error lines to list.
    pub max_error_lines: usize,
}

impl Default for SpillConfig {
    fn default() -> Self {
        Self {
            enabled: true,
            floor_tokens: 2_000,
            fraction: 0.25,
            head_share: 0.65,
            error_patterns: [
                "Traceback",
                "Error",
                "error:",
                "FAILED",
                "panicked",
                "exit code [1-9]",
                "returncode>[1-9]",
            ]
            .map(String::from)
            .to_vec(),
            max_error_lines: 5,
        }
    }
}

/// Dedup settings.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields, rename_all = "camelCase")]
pub struct DedupConfig {
    /// Stage switch.
    pub enabled: bool,
    /// Lines whose trimmed length is at most this are never deduplicated.
    pub min_line_chars: usize,
}

impl Default for DedupConfig {
    fn default() -> Self {
        Self {
            enabled: true,
            min_line_chars: 5,
        }
    }
}

/// Edit-triggered clean-up settings.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields, rename_all = "camelCase")]
pub struct PhaseConfig {
    /// Stage switch.
    pub enabled: bool,
    /// Also clear diagnosis output at later edit phases, not only the first.
    pub every_phase: bool,
    /// Tool names that are edits (plus `str_replace_editor` sub-commands).
    pub edit_tools: Vec<String>,
}

impl Default for PhaseConfig {
    fn default() -> Self {
        Self {
            enabled: true,
            every_phase: false,
            edit_tools: [
                "str_replace_editor",
                "edit_file",
                "apply_patch",
                "write_file",
            ]
            .map(String::from)
            .to_vec(),
        }
    }
}

/// Optical snapshot settings.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields, rename_all = "camelCase")]
pub struct OpticalConfig {
    /// Stage switch.
    pub enabled: bool,
    /// Render only if image tokens ≤ text tokens / ratio.
    pub ratio: f64,
    /// Observations leave the window in batches of this many (prefix stability).
    pub batch: usize,
    /// Font pixel height.
    pub font_px: f32,
    /// Smallest font height the layout may choose.
    pub min_font_px: f32,
    /// An observation whose share of glyphs missing from the font exceeds this stays text.
    pub max_missing_share: f64,
    /// OpenAI `detail` (`high` or `low`).
    pub detail: String,
    /// Gemini 3 `media_resolution` (`low`, `medium`, `high`), or empty for tile pricing.
    pub media_resolution: String,
    /// Multiplier for OpenAI patch models (mini 1.62, nano 2.46, o4-mini 1.72).
    pub patch_multiplier: f64,
    /// Maximum images per request.
    pub max_images: usize,
}

impl Default for OpticalConfig {
    fn default() -> Self {
        Self {
            enabled: true,
            ratio: 2.0,
            batch: 3,
            font_px: 10.0,
            min_font_px: 8.0,
            max_missing_share: 0.05,
            detail: "high".into(),
            media_resolution: String::new(),
            patch_multiplier: 1.62,
            max_images: 20,
        }
    }
}

/// Compaction settings.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields, rename_all = "camelCase")]
pub struct CompactConfig {
    /// Stage switch (off means off).
    pub enabled: bool,
    /// Token threshold that triggers compaction.
    pub threshold: u64,
    /// Messages kept verbatim at the end.
    pub keep: usize,
    /// Never compact again within this many turns unless the budget forces it.
    pub min_turns: usize,
    /// Patterns marking user constraints kept word for word.
    pub constraint_patterns: Vec<String>,
    /// Constraints pinned by the host.
    pub pinned: Vec<String>,
    /// Compact only when the cache-aware cost estimate says it pays.
    pub planner: bool,
}

impl Default for CompactConfig {
    fn default() -> Self {
        Self {
            enabled: true,
            threshold: 100_000,
            keep: 6,
            min_turns: 5,
            constraint_patterns: [
                "must",
                "never",
                "don't",
                "do not",
                "only",
                "always",
                "should not",
                "avoid",
            ]
            .map(String::from)
            .to_vec(),
            pinned: Vec::new(),
            planner: true,
        }
    }
}

/// Secret redaction settings.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields, rename_all = "camelCase")]
pub struct RedactConfig {
    /// Mask secrets in excerpts, snapshots and summaries.
    pub enabled: bool,
    /// Also mask them in the spill store (the original is then lost).
    pub store: bool,
}

impl Default for RedactConfig {
    fn default() -> Self {
        Self {
            enabled: true,
            store: false,
        }
    }
}

/// Resource limits; exceeding one is a `LIMIT_EXCEEDED` error naming it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields, rename_all = "camelCase")]
pub struct Limits {
    /// Largest request accepted, in bytes.
    pub max_request_bytes: usize,
    /// Most messages accepted.
    pub max_messages: usize,
    /// Deepest JSON nesting accepted.
    pub max_depth: usize,
    /// Largest image accepted, in pixels.
    pub max_image_pixels: u64,
    /// Spill bytes kept per session.
    pub max_spill_bytes_per_session: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Self {
            max_request_bytes: 64 << 20,
            max_messages: 100_000,
            max_depth: 100,
            max_image_pixels: 50_000_000,
            max_spill_bytes_per_session: 16 << 20,
        }
    }
}

impl Config {
    /// Parses options JSON (camelCase); `null` gives the defaults.
    pub fn from_json(value: Value) -> Result<Self> {
        if value.is_null() {
            return Ok(Self::default());
        }
        let config: Self = serde_path_to_error::deserialize(value).map_err(|e| {
            let path = e.path().to_string();
            Error::new(ErrorCode::InvalidOption, path, e.into_inner().to_string())
        })?;
        config.validate()?;
        Ok(config)
    }

    /// Parses options from JSON text.
    pub fn from_json_str(text: &str) -> Result<Self> {
        if text.trim().is_empty() {
            return Ok(Self::default());
        }
        let value: Value = serde_json::from_str(text)
            .map_err(|e| Error::new(ErrorCode::InvalidJson, "options", e.to_string()))?;
        Self::from_json(value)
    }

    /// The per-tool-result cap in tokens: max(floor, fraction × budget).
    pub fn result_cap(&self) -> u64 {
        let share = (self.spill.fraction * self.budget as f64) as u64;
        share.max(self.spill.floor_tokens)
    }

    fn validate(&self) -> Result<()> {
        let bad = |path: &str, msg: &str| Err(Error::new(ErrorCode::InvalidOption, path, msg));
        if self.budget == 0 {
            return bad("budget", "must be a positive number of tokens");
        }
        if !(self.spill.fraction > 0.0 && self.spill.fraction <= 1.0) {
            return bad("spill.fraction", "must be in (0, 1]");
        }
        if !(self.spill.head_share >= 0.0 && self.spill.head_share <= 1.0) {
            return bad("spill.headShare", "must be in [0, 1]");
        }
        if !(self.optical.ratio.is_finite() && self.optical.ratio > 0.0) {
            return bad("optical.ratio", "must be a positive number");
        }
        if !(self.optical.font_px >= 4.0 && self.optical.font_px <= 64.0) {
            return bad("optical.fontPx", "must be between 4 and 64");
        }
        if !(self.optical.min_font_px >= 4.0 && self.optical.min_font_px <= self.optical.font_px) {
            return bad("optical.minFontPx", "must be between 4 and optical.fontPx");
        }
        if !(1..=127).contains(&self.limits.max_depth) {
            return bad("limits.maxDepth", "must be between 1 and 127");
        }
        if self.optical.batch == 0 {
            return bad("optical.batch", "must be at least 1");
        }
        if !matches!(self.optical.detail.as_str(), "high" | "low") {
            return bad("optical.detail", "must be \"high\" or \"low\"");
        }
        if !matches!(
            self.optical.media_resolution.as_str(),
            "" | "low" | "medium" | "high"
        ) {
            return bad(
                "optical.mediaResolution",
                "must be \"low\", \"medium\", \"high\" or empty",
            );
        }
        if self.session.is_empty()
            || self.session.len() > 128
            || !self
                .session
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.'))
            || self.session.contains("..")
        {
            return bad(
                "session",
                "must be 1-128 characters of [A-Za-z0-9._-] without \"..\"",
            );
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn defaults_and_cap_scale_with_budget() {
        let c = Config::default();
        assert_eq!(c.result_cap(), 32_000);
        let small = Config::from_json(json!({"budget": 4000})).unwrap();
        assert_eq!(small.result_cap(), 2_000);
    }

    #[test]
    fn unknown_and_mistyped_options_name_the_field() {
        let e = Config::from_json(json!({"spill": {"fracton": 0.3}})).unwrap_err();
        assert_eq!(e.code, ErrorCode::InvalidOption);
        assert!(e.path.starts_with("spill"), "{e}");
        let e = Config::from_json(json!({"window": "three"})).unwrap_err();
        assert_eq!(e.path, "window");
        let e = Config::from_json(json!({"session": "../etc"})).unwrap_err();
        assert_eq!(e.path, "session");
        let e = Config::from_json(json!({"provider": "cohere"})).unwrap_err();
        assert_eq!(e.path, "provider");
    }
}
