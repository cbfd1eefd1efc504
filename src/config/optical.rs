//! The `optical` section (stage 4): its settings, their defaults, and the
//! check a parsed section must pass.

use serde::{Deserialize, Serialize};

use super::{Config, Section};
use crate::error::{invalid_option, Result};

/// The optical stage's switch (`optical.enabled`): `'auto'`, `true` or `false`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum OpticalSwitch {
    /// Snapshots only for a model that reads images (the capability table,
    /// or the caller's `models`); for any other the stage does not apply.
    #[default]
    Auto,
    /// Snapshots whatever the model.
    On,
    /// No snapshots.
    Off,
}

impl Serialize for OpticalSwitch {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            Self::Auto => s.serialize_str("auto"),
            Self::On => s.serialize_bool(true),
            Self::Off => s.serialize_bool(false),
        }
    }
}

impl<'de> Deserialize<'de> for OpticalSwitch {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct Switch;
        impl serde::de::Visitor<'_> for Switch {
            type Value = OpticalSwitch;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("true, false or \"auto\"")
            }
            fn visit_bool<E: serde::de::Error>(self, v: bool) -> Result<OpticalSwitch, E> {
                Ok(if v {
                    OpticalSwitch::On
                } else {
                    OpticalSwitch::Off
                })
            }
            fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<OpticalSwitch, E> {
                if v == "auto" {
                    Ok(OpticalSwitch::Auto)
                } else {
                    Err(E::invalid_value(serde::de::Unexpected::Str(v), &self))
                }
            }
        }
        d.deserialize_any(Switch)
    }
}

/// Optical snapshot settings: older tool results become images of their text
/// when that costs at most `1/ratio` of the text's tokens.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields, rename_all = "camelCase")]
pub struct OpticalConfig {
    /// Stage switch: `'auto'` renders snapshots only for a model that reads
    /// images (the model capability table, or `models`), `true` for any
    /// model, `false` never.
    /// TypeScript: `boolean | 'auto'`.
    pub enabled: OpticalSwitch,
    /// Render only if image tokens (plus the one-line reference) ≤ text tokens / ratio.
    pub ratio: f64,
    /// Observations leave the recent window in batches of this many, so the
    /// prompt prefix stays byte-identical between batches (prefix cache).
    pub batch: usize,
    /// Largest font pixel height the layout may use (4–64).
    pub font_px: u32,
    /// Smallest font pixel height the layout may use; the layout takes the
    /// largest size in `minFontPx..=fontPx` that reaches the lowest image cost.
    pub min_font_px: u32,
    /// Blank pixel rows between text lines (0–3).
    pub line_gap: u32,
    /// Narrowest wrap width in columns the layout may choose (lines shorter
    /// than this are never padded to it).
    pub min_columns: usize,
    /// PNG grayscale bit depth: 1, 2, 4 or 8.
    /// TypeScript: `1 | 2 | 4 | 8`.
    pub bit_depth: u8,
    /// An observation whose share of glyphs missing from the font exceeds this stays text.
    pub max_missing_share: f64,
    /// When the line-by-line image costs more than `1/ratio` of the text, try
    /// the lines run together with `»` marking each break (every row full, so
    /// fewer image tokens; indentation no longer lines up).
    pub reflow: bool,
    /// OpenAI `detail` (`high` or `low`).
    /// TypeScript: `'high' | 'low'`.
    pub detail: String,
    /// Gemini 3 `media_resolution` (`low`, `medium`, `high`), or empty for tile pricing.
    /// TypeScript: `'' | 'low' | 'medium' | 'high'`.
    pub media_resolution: String,
    /// Multiplier for OpenAI patch models (mini 1.62, nano 2.46, o4-mini 1.72).
    pub patch_multiplier: f64,
    /// Keep views of files not edited since (what an edit may quote in its
    /// `old_str`) as text instead of rendering them.
    pub keep_live_views: bool,
    /// Live views kept as text (`keepLiveViews`): the newest this many;
    /// older live views are rendered. 0: no bound. A count, not tokens: the
    /// set must change only when the planner moves the rendered boundary,
    /// and the text of a view may still change in between (unbatched dedup).
    pub max_live_views: usize,
    /// Maximum images per request (images already in the request count too).
    pub max_images: usize,
    /// Bytes of rendered images a session keeps in its render cache.
    pub cache_bytes: usize,
    /// Send snapshots by URL where the format takes image URLs (OpenAI Chat
    /// and Responses, Anthropic; Gemini stays inline): an `https` URL
    /// template (`http` for localhost) holding `{id}`, which each snapshot's
    /// content id replaces; the result's `images` holds the PNGs the host
    /// must serve there ([`crate::formats::image_urls`]). Empty: inline
    /// base64 (default).
    pub image_url: String,
}

impl Default for OpticalConfig {
    fn default() -> Self {
        Self {
            enabled: OpticalSwitch::Auto,
            ratio: 2.0,
            batch: 3,
            font_px: 12,
            min_font_px: 10,
            line_gap: 1,
            min_columns: 60,
            bit_depth: 2,
            max_missing_share: 0.05,
            reflow: true,
            detail: "high".into(),
            media_resolution: String::new(),
            patch_multiplier: 1.62,
            keep_live_views: false,
            max_live_views: 1,
            max_images: 50,
            cache_bytes: 32 << 20,
            image_url: String::new(),
        }
    }
}

impl Section for OpticalConfig {
    /// Checks the `optical` section; errors name the offending field.
    fn validate(&self, _config: &Config) -> Result<()> {
        if !(self.ratio.is_finite() && self.ratio > 0.0) {
            return invalid_option("optical.ratio", "must be a positive number");
        }
        if !(4..=64).contains(&self.font_px) {
            return invalid_option("optical.fontPx", "must be between 4 and 64");
        }
        if !(4..=self.font_px).contains(&self.min_font_px) {
            return invalid_option("optical.minFontPx", "must be between 4 and optical.fontPx");
        }
        if self.line_gap > 3 {
            return invalid_option("optical.lineGap", "must be between 0 and 3");
        }
        if self.min_columns == 0 {
            return invalid_option("optical.minColumns", "must be at least 1");
        }
        if !matches!(self.bit_depth, 1 | 2 | 4 | 8) {
            return invalid_option("optical.bitDepth", "must be 1, 2, 4 or 8");
        }
        if !(0.0..=1.0).contains(&self.max_missing_share) {
            return invalid_option("optical.maxMissingShare", "must be in [0, 1]");
        }
        if !(self.patch_multiplier.is_finite() && self.patch_multiplier > 0.0) {
            return invalid_option("optical.patchMultiplier", "must be a positive number");
        }
        if self.batch == 0 {
            return invalid_option("optical.batch", "must be at least 1");
        }
        if !matches!(self.detail.as_str(), "high" | "low") {
            return invalid_option("optical.detail", "must be \"high\" or \"low\"");
        }
        if !matches!(
            self.media_resolution.as_str(),
            "" | "low" | "medium" | "high"
        ) {
            return invalid_option(
                "optical.mediaResolution",
                "must be \"low\", \"medium\", \"high\" or empty",
            );
        }
        crate::formats::image_urls::check_template(&self.image_url)
    }
}
