//! How options are read: each section member by member through
//! [`json::read_into`](crate::json::read_into), with the paths and messages of
//! the sections' serde derives (a table per section, not a visitor).

use serde_json::Error;

use super::{
    CompactConfig, Config, DedupConfig, Limits, OpticalConfig, PhaseConfig, PlanConfig, Prices,
    Provider, RedactConfig, SpillConfig,
};
use crate::formats::FormatName;
use crate::json::{At, ReadInto};

impl ReadInto for Provider {
    fn read_into(&mut self, at: At<'_, '_>) -> Result<(), Error> {
        at.read_leaf(self)
    }
}

impl ReadInto for Option<FormatName> {
    fn read_into(&mut self, at: At<'_, '_>) -> Result<(), Error> {
        at.read_leaf(self)
    }
}

impl ReadInto for Config {
    fn read_into(&mut self, at: At<'_, '_>) -> Result<(), Error> {
        at.read_struct(
            "Config",
            &[
                "format",
                "provider",
                "budget",
                "window",
                "session",
                "stageBoundary",
                "repair",
                "cacheBreakpoint",
                "spill",
                "dedup",
                "phase",
                "optical",
                "compact",
                "plan",
                "redact",
                "limits",
            ],
            &mut [
                &mut self.format,
                &mut self.provider,
                &mut self.budget,
                &mut self.window,
                &mut self.session,
                &mut self.stage_boundary,
                &mut self.repair,
                &mut self.cache_breakpoint,
                &mut self.spill,
                &mut self.dedup,
                &mut self.phase,
                &mut self.optical,
                &mut self.compact,
                &mut self.plan,
                &mut self.redact,
                &mut self.limits,
            ],
            false,
        )
    }
}

impl ReadInto for SpillConfig {
    fn read_into(&mut self, at: At<'_, '_>) -> Result<(), Error> {
        at.read_struct(
            "SpillConfig",
            &[
                "enabled",
                "floorTokens",
                "fraction",
                "headShare",
                "errorPatterns",
                "maxErrorLines",
                "pointerRoot",
            ],
            &mut [
                &mut self.enabled,
                &mut self.floor_tokens,
                &mut self.fraction,
                &mut self.head_share,
                &mut self.error_patterns,
                &mut self.max_error_lines,
                &mut self.pointer_root,
            ],
            false,
        )
    }
}

impl ReadInto for DedupConfig {
    fn read_into(&mut self, at: At<'_, '_>) -> Result<(), Error> {
        at.read_struct(
            "DedupConfig",
            &["enabled", "minLineChars", "batched"],
            &mut [
                &mut self.enabled,
                &mut self.min_line_chars,
                &mut self.batched,
            ],
            false,
        )
    }
}

impl ReadInto for PhaseConfig {
    fn read_into(&mut self, at: At<'_, '_>) -> Result<(), Error> {
        at.read_struct(
            "PhaseConfig",
            &[
                "enabled",
                "everyPhase",
                "clear",
                "editTools",
                "shellTools",
                "skipFailed",
                "ignoreTargets",
            ],
            &mut [
                &mut self.enabled,
                &mut self.every_phase,
                &mut self.clear,
                &mut self.edit_tools,
                &mut self.shell_tools,
                &mut self.skip_failed,
                &mut self.ignore_targets,
            ],
            false,
        )
    }
}

impl ReadInto for OpticalConfig {
    fn read_into(&mut self, at: At<'_, '_>) -> Result<(), Error> {
        at.read_struct(
            "OpticalConfig",
            &[
                "enabled",
                "ratio",
                "batch",
                "fontPx",
                "minFontPx",
                "lineGap",
                "minColumns",
                "bitDepth",
                "maxMissingShare",
                "reflow",
                "detail",
                "mediaResolution",
                "patchMultiplier",
                "keepLiveViews",
                "maxLiveViews",
                "maxImages",
                "cacheBytes",
                "imageUrl",
            ],
            &mut [
                &mut self.enabled,
                &mut self.ratio,
                &mut self.batch,
                &mut self.font_px,
                &mut self.min_font_px,
                &mut self.line_gap,
                &mut self.min_columns,
                &mut self.bit_depth,
                &mut self.max_missing_share,
                &mut self.reflow,
                &mut self.detail,
                &mut self.media_resolution,
                &mut self.patch_multiplier,
                &mut self.keep_live_views,
                &mut self.max_live_views,
                &mut self.max_images,
                &mut self.cache_bytes,
                &mut self.image_url,
            ],
            false,
        )
    }
}

impl ReadInto for CompactConfig {
    fn read_into(&mut self, at: At<'_, '_>) -> Result<(), Error> {
        at.read_struct(
            "CompactConfig",
            &[
                "enabled",
                "threshold",
                "keep",
                "minTurns",
                "constraintPatterns",
                "pinned",
                "planner",
                "minSaving",
                "detectStages",
                "keepToolCalls",
                "userShare",
                "liveViews",
                "callLogShare",
                "summaryShare",
            ],
            &mut [
                &mut self.enabled,
                &mut self.threshold,
                &mut self.keep,
                &mut self.min_turns,
                &mut self.constraint_patterns,
                &mut self.pinned,
                &mut self.planner,
                &mut self.min_saving,
                &mut self.detect_stages,
                &mut self.keep_tool_calls,
                &mut self.user_share,
                &mut self.live_views,
                &mut self.call_log_share,
                &mut self.summary_share,
            ],
            false,
        )
    }
}

impl ReadInto for RedactConfig {
    fn read_into(&mut self, at: At<'_, '_>) -> Result<(), Error> {
        at.read_struct(
            "RedactConfig",
            &["enabled", "store"],
            &mut [&mut self.enabled, &mut self.store],
            false,
        )
    }
}

impl ReadInto for PlanConfig {
    fn read_into(&mut self, at: At<'_, '_>) -> Result<(), Error> {
        at.read_struct(
            "PlanConfig",
            &["enabled", "horizon", "minHorizon", "maxHorizon", "prices"],
            &mut [
                &mut self.enabled,
                &mut self.horizon,
                &mut self.min_horizon,
                &mut self.max_horizon,
                &mut self.prices,
            ],
            false,
        )
    }
}

/// `null` is no prices; anything else must have all three.
impl ReadInto for Option<Prices> {
    fn read_into(&mut self, at: At<'_, '_>) -> Result<(), Error> {
        if at.value().is_null() {
            *self = None;
            return Ok(());
        }
        let mut prices = Prices {
            input: 0.0,
            cached_input: 0.0,
            cache_write: 0.0,
        };
        at.read_struct(
            "Prices",
            &["input", "cachedInput", "cacheWrite"],
            &mut [
                &mut prices.input,
                &mut prices.cached_input,
                &mut prices.cache_write,
            ],
            true,
        )?;
        *self = Some(prices);
        Ok(())
    }
}

impl ReadInto for Limits {
    fn read_into(&mut self, at: At<'_, '_>) -> Result<(), Error> {
        at.read_struct(
            "Limits",
            &[
                "maxRequestBytes",
                "maxMessages",
                "maxDepth",
                "maxImagePixels",
                "maxSpillBytesPerSession",
                "maxErrorPatterns",
                "maxHistoryBytes",
                "maxCompactMessages",
                "maxCompactBytes",
            ],
            &mut [
                &mut self.max_request_bytes,
                &mut self.max_messages,
                &mut self.max_depth,
                &mut self.max_image_pixels,
                &mut self.max_spill_bytes_per_session,
                &mut self.max_error_patterns,
                &mut self.max_history_bytes,
                &mut self.max_compact_messages,
                &mut self.max_compact_bytes,
            ],
            false,
        )
    }
}

#[cfg(test)]
mod tests {
    use serde_json::{json, Value};

    use super::Config;

    /// `read_into` and the serde derive agree: the same config, or the same
    /// path and message.
    fn same(value: &Value) {
        let derived = crate::json::from_value::<Config>(value).map_err(|(p, e)| (p, e.to_string()));
        let mut read = Config::default();
        let read = crate::json::read_into(&mut read, value)
            .map(|()| read)
            .map_err(|(p, e)| (p, e.to_string()));
        assert_eq!(read, derived, "{value}");
    }

    #[test]
    fn reads_as_the_serde_derive_does() {
        let odd: Vec<Value> = [
            "null",
            "true",
            "0",
            "5",
            "-1",
            "300",
            "70000",
            "1.5",
            "1.50",
            "1e400",
            "2e3",
            "18446744073709551616",
            "-9223372036854775809",
            "\"x\"",
            "\"openai-chat\"",
            "\"anthropic\"",
            "[]",
            "[1]",
            "[\"a\",\"b\"]",
            "[true,5]",
            "{}",
            "{\"a\":1}",
            "{\"enabled\":false}",
            "{\"input\":1,\"cachedInput\":0.5,\"cacheWrite\":2}",
            "{\"input\":1}",
            "[1,2]",
            "[1,2,3,4]",
            "{\"input\":1,\"cachedInput\":1,\"cacheWrite\":1,\"x\":1}",
        ]
        .iter()
        .map(|t| serde_json::from_str(t).unwrap())
        .collect();
        let defaults = serde_json::to_value(Config::default()).unwrap();
        let top = defaults.as_object().unwrap();
        for v in &odd {
            same(v);
            same(&json!({ "bogus": v }));
        }
        for (key, section) in top {
            for v in &odd {
                same(&json!({ key: v }));
                same(&json!({ "budget": 7, key: v, "window": 2 }));
            }
            if let Value::Object(fields) = section {
                for field in fields.keys() {
                    for v in &odd {
                        same(&json!({ key: { field: v } }));
                        same(&json!({ key: { field: v, "bogus": 1 } }));
                        same(&json!({ key: [v] }));
                    }
                }
                let all: Vec<Value> = fields.values().cloned().collect();
                same(&json!({ key: all }));
                same(&json!({ key: section }));
            }
        }
        for v in &odd {
            same(&json!({ "plan": { "prices": v } }));
            same(&json!({ "plan": [true, 1, 2, 3, v] }));
        }
    }
}
