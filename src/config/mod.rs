//! [`Config`]: every setting of the pipeline, with documented defaults.
//!
//! Options arrive from JS (or the CLI) as JSON with camelCase names, read by
//! the sections' serde derives (`default`: a member the options lack keeps its
//! default); unknown names and wrong types are rejected with an
//! `INVALID_OPTION` error naming the field by its path
//! ([`json::from_value`](crate::json::from_value)).
//!
//! * this file: the top-level settings, how options are parsed, and the
//!   sections it assembles;
//! * one file per section, the one place that defines its options: the
//!   struct, each field's doc (the package's `options.d.ts` is generated
//!   from it, `tests/ts_types.rs`), the `Default` impl and the check a parsed
//!   section must pass (its [`Section`] impl): [`spill`], [`dedup`],
//!   [`phase`], [`optical`], [`compact`], the planner's [`plan`], [`redact`];
//! * [`limits`]: resource limits (`limits`);
//! * [`tools`]: per-tool rules (`excludeTools`, `spill.toolCaps`);
//! * [`validate`]: the order the checks run in, and the top-level ones;
//! * [`words`]: serde's type errors in plain words.

mod compact;
mod dedup;
mod limits;
mod optical;
mod phase;
mod plan;
mod redact;
mod salience;
mod spill;
mod tools;
mod validate;
mod words;

pub use compact::CompactConfig;
pub use dedup::DedupConfig;
pub use limits::{Limits, OverBudgetMode};
pub use optical::{OpticalConfig, OpticalSwitch};
pub use phase::{ClearReason, PhaseConfig};
pub use plan::{PlanConfig, Prices};
pub use redact::RedactConfig;
pub use salience::SalienceConfig;
pub(crate) use spill::{compile_rules, CompiledRule, RuleText};
pub use spill::{ContextRule, DetectorTable, SpillConfig};
pub(crate) use tools::{check_rule_count, malformed_tool, TOOL_NAME};
pub(crate) use validate::Section;

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::error::{Error, ErrorCode, Result};
use crate::formats::FormatName;

pub use crate::provider::Provider;

/// All settings. `Config::default()` is the documented default.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields, rename_all = "camelCase")]
pub struct Config {
    /// Request format; detected from the request when `None`.
    pub format: Option<FormatName>,
    /// Target provider (image pricing and placement).
    pub provider: Provider,
    /// The model the request goes to, as the provider or a router names it
    /// (`gpt-4o`, `anthropic/claude-sonnet-4.5`); empty: the request's own
    /// `model`. With `optical.enabled: 'auto'` snapshots go only to a model
    /// the capability table (or `models`) says reads images.
    pub model: String,
    /// The caller's own models, by id or `*` glob (checked before the
    /// capability table): `{ "my-vlm": { "images": true } }`.
    pub models: BTreeMap<String, crate::capability::DeclaredModel>,
    /// The model's context window in tokens.
    pub budget: u64,
    /// Recent window: the last `window` tool results stay verbatim text.
    pub window: usize,
    /// Session name: namespace of spill keys (a string; anything else is
    /// `INVALID_OPTION` at `session`).
    pub session: String,
    /// Host says this request starts a new task stage (compaction trigger).
    pub stage_boundary: bool,
    /// Repair mode: fix tool-call pairing problems the request has (orphaned or
    /// duplicate results, duplicate ids, misplaced or missing results) instead
    /// of rejecting it; each fix is listed in `Report::repairs`.
    pub repair: bool,
    /// Anthropic Messages requests: mark the end of the stable prefix
    /// (`Report::stable_messages`) with `cache_control`, so the next batch
    /// reads everything before it from the prompt cache instead of writing
    /// it again. Skipped when the request already has the 4 breakpoints
    /// Anthropic allows, and when every stage is off (pass-through).
    pub cache_breakpoint: bool,
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
    /// The planner: when a rewrite of the cached prefix pays.
    pub plan: PlanConfig,
    /// Secret redaction.
    pub redact: RedactConfig,
    /// Tools whose outputs stay as they are (a memory, todo or plan tool):
    /// dedup, the phase clean-up and optical snapshots leave them alone, and
    /// a compaction keeps them word for word after its summary; spilling
    /// caps them only with a cap of their own (`spill.toolCaps`). Exact
    /// names, as the calls give them.
    pub exclude_tools: Vec<String>,
    /// Resource limits.
    pub limits: Limits,
}

impl Default for Config {
    fn default() -> Self {
        Self {
            format: None,
            provider: Provider::Openai,
            model: String::new(),
            models: BTreeMap::new(),
            budget: 128_000,
            window: 3,
            session: "default".into(),
            stage_boundary: false,
            repair: false,
            cache_breakpoint: true,
            spill: SpillConfig::default(),
            dedup: DedupConfig::default(),
            phase: PhaseConfig::default(),
            optical: OpticalConfig::default(),
            compact: CompactConfig::default(),
            plan: PlanConfig::default(),
            redact: RedactConfig::default(),
            exclude_tools: Vec::new(),
            limits: Limits::default(),
        }
    }
}

impl Config {
    /// Parses options JSON (camelCase) with the serde derive: a member the
    /// options lack keeps its default, `null` gives the defaults; an error
    /// names the offending field by its path (`spill.fraction`).
    pub fn from_json(value: Value) -> Result<Self> {
        if value.is_null() {
            return Ok(Self::default());
        }
        let config: Self = crate::json::from_value(&value).map_err(|(path, e)| {
            let given = words::at_path(&value, &path);
            Error::new(
                ErrorCode::InvalidOption,
                path,
                words::plain(&e.to_string(), given),
            )
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
        self.budget_share(self.spill.fraction)
            .max(self.spill.floor_tokens)
    }

    /// The pointer to `key` in this session: `spill://<session>/<key>`, or the
    /// file path under `spill.pointerRoot` when the host set one.
    pub fn pointer(&self, key: &str) -> String {
        crate::store::pointer_in(&self.spill.pointer_root, &self.session, key)
    }

    /// Tokens that `share` of the budget is (the `…Share` settings).
    pub fn budget_share(&self, share: f64) -> u64 {
        (share * self.budget as f64) as u64
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn optical_switch_reads_auto_true_and_false() {
        use crate::config::OpticalSwitch;
        for (given, want) in [
            (json!("auto"), OpticalSwitch::Auto),
            (json!(true), OpticalSwitch::On),
            (json!(false), OpticalSwitch::Off),
        ] {
            let c = Config::from_json(json!({"optical": {"enabled": given}})).unwrap();
            assert_eq!(c.optical.enabled, want);
            let back = serde_json::to_value(&c).unwrap();
            assert_eq!(back["optical"]["enabled"], given, "serialized as given");
        }
        assert_eq!(Config::default().optical.enabled, OpticalSwitch::Auto);
        let e = Config::from_json(json!({"models": {"m": {"images": true, "maxEdgePx": 0}}}))
            .unwrap_err();
        assert_eq!(e.path, "models.m.maxEdgePx");
    }

    #[test]
    fn defaults_and_cap_scale_with_budget() {
        let c = Config::default();
        assert_eq!(c.result_cap(), 2_560, "2% of 128,000");
        let small = Config::from_json(json!({"budget": 4000})).unwrap();
        assert_eq!(small.result_cap(), 2_000, "the floor");
        let large = Config::from_json(json!({"budget": 1_000_000})).unwrap();
        assert_eq!(large.result_cap(), 20_000);
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

    /// The value `path` (`a.b[2].c`, `.` for the root) names in `value`.
    fn at<'v>(value: &'v Value, path: &str) -> Option<&'v Value> {
        if path == "." {
            return Some(value);
        }
        let mut here = value;
        for part in path.split('.') {
            let (key, indices) = part.split_once('[').map_or((part, ""), |(k, i)| (k, i));
            if !key.is_empty() {
                here = here.get(key)?;
            }
            for index in indices.split('[').filter(|i| !i.is_empty()) {
                here = here.get(index.trim_end_matches(']').parse::<usize>().ok()?)?;
            }
        }
        Some(here)
    }

    /// Options read by the derive: a section given in part keeps the defaults
    /// of the members it lacks, and every error, whatever the value and
    /// wherever it sits (top level, section member, array element, the
    /// required `plan.prices`), names by its path a place the options have.
    #[test]
    fn partial_sections_keep_defaults_and_every_error_has_its_path() {
        let c = Config::from_json(json!({"spill": {"fraction": 0.5}, "plan": {"prices": null}}))
            .unwrap();
        let mut want = Config::default();
        want.spill.fraction = 0.5;
        assert_eq!(c, want);
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
        ]
        .iter()
        .map(|t| serde_json::from_str(t).unwrap())
        .collect();
        let defaults = serde_json::to_value(Config::default()).unwrap();
        let mut options = vec![json!({"plan": {"prices": {"input": 1}}})];
        for v in &odd {
            options.push(v.clone());
            options.push(json!({ "bogus": v }));
            options.push(json!({ "plan": { "prices": v } }));
            options.push(json!({ "plan": [true, 1, 2, 3, v] }));
        }
        for (key, section) in defaults.as_object().unwrap() {
            for v in &odd {
                options.push(json!({ key: v }));
                options.push(json!({ "budget": 7, key: v, "window": 2 }));
            }
            if let Value::Object(fields) = section {
                for field in fields.keys() {
                    for v in &odd {
                        options.push(json!({ key: { field: v } }));
                        options.push(json!({ key: { field: v, "bogus": 1 } }));
                        options.push(json!({ key: [v] }));
                    }
                }
            }
        }
        let mut errors = 0;
        for o in &options {
            let Err(e) = Config::from_json(o.clone()) else {
                continue;
            };
            errors += 1;
            assert!(
                matches!(e.code, ErrorCode::InvalidOption | ErrorCode::LimitExceeded),
                "{o}: {e}"
            );
            // A reading error names a place of the options; a check of the
            // read config (`optical.minFontPx` against `fontPx`) may name one
            // the options left to its default.
            let given = at(o, &e.path);
            assert!(
                given.is_some() || at(&defaults, &e.path).is_some(),
                "{o}: {} is neither in the options nor a setting",
                e.path
            );
            if e.path == "." {
                assert!(!o.is_object(), "{o}: {e}");
            }
            if let Some(field) = e.message.strip_prefix("unknown field `") {
                let field = field.split('`').next().unwrap_or_default();
                assert!(
                    e.path.ends_with(&format!(".{field}")) || e.path == field,
                    "{o}: {e}"
                );
            }
            if let Some((_, got)) = e.message.split_once(", got ") {
                if got.parse::<f64>().is_ok() {
                    assert_eq!(
                        given.map(Value::to_string).as_deref(),
                        Some(got),
                        "{o}: {e}"
                    );
                }
            }
        }
        assert!(errors > options.len() / 2, "{errors} of {}", options.len());
    }

    /// Each mistyped option: its path once, serde's words for the type
    /// replaced (no `u64`, `f64`, `struct`).
    #[test]
    fn mistyped_options_read_in_plain_words() {
        for (options, path, message) in [
            (
                json!({"budget": -5}),
                "budget",
                "must be a non-negative integer, got -5",
            ),
            (
                json!({"budget": 1.5}),
                "budget",
                "must be a non-negative integer, got 1.5",
            ),
            (
                json!({"window": "three"}),
                "window",
                "must be a non-negative integer, got the string \"three\"",
            ),
            (
                json!({"spill": {"fraction": "half"}}),
                "spill.fraction",
                "must be a number, got the string \"half\"",
            ),
            (
                json!({"dedup": {"enabled": 1}}),
                "dedup.enabled",
                "must be true or false, got 1",
            ),
            (json!({"spill": 3}), "spill", "must be an object, got 3"),
            (
                json!({"plan": [true, 1, 2, 3]}),
                "plan",
                "must be an object, got an array",
            ),
            (
                serde_json::from_str(r#"{"plan": {"prices": 2e3}}"#).unwrap(),
                "plan.prices",
                "must be an object, got 2e+3",
            ),
            (
                json!({"phase": {"editTools": "edit"}}),
                "phase.editTools",
                "must be an array, got the string \"edit\"",
            ),
            (json!({"session": 7}), "session", "must be a string, got 7"),
            (
                json!({"optical": {"enabled": "yes"}}),
                "optical.enabled",
                "must be true, false or \"auto\", got the string \"yes\"",
            ),
            (
                json!({"optical": {"enabled": 1}}),
                "optical.enabled",
                "must be true, false or \"auto\", got 1",
            ),
            (json!({"model": 7}), "model", "must be a string, got 7"),
            (
                json!({"models": {"m": {"images": "yes"}}}),
                "models.m.images",
                "must be true or false, got the string \"yes\"",
            ),
            // Numbers serde keeps as their text, and integers past u64: the
            // value as given, no Rust type name.
            (
                serde_json::from_str(r#"{"budget": 2e3}"#).unwrap(),
                "budget",
                "must be a non-negative integer, got 2e+3",
            ),
            (
                serde_json::from_str(r#"{"spill": {"floorTokens": 18446744073709551616}}"#)
                    .unwrap(),
                "spill.floorTokens",
                "must be a non-negative integer, got 18446744073709551616",
            ),
            (
                json!({"phase": {"editTools": [1]}}),
                "phase.editTools[0]",
                "must be a string, got 1",
            ),
        ] {
            let e = Config::from_json(options.clone()).unwrap_err();
            assert_eq!(
                (e.code, e.path.as_str(), e.message.as_str()),
                (ErrorCode::InvalidOption, path, message),
                "{options}"
            );
        }
    }
}
