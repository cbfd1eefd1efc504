//! The checks a parsed [`Config`] must pass. The top-level settings,
//! `limits` and `excludeTools` (in `tools.rs`) are checked here; each
//! section is checked by the [`Section`] impl in its own file
//! (`spill.rs`, …), beside its struct and defaults, in the order
//! [`Config::sections`] gives. An error names the offending option
//! (`INVALID_OPTION`, or `LIMIT_EXCEEDED` for a limit).

use super::Config;
use crate::error::Result;

/// A section of the options with a check of its own: its file implements
/// it beside the section's struct, [`Config::validate`] calls it.
pub trait Section {
    /// Checks the section; `config` is the whole configuration (a limit may
    /// bound a section). An error names the offending field by its full
    /// option path (`spill.fraction`).
    fn validate(&self, config: &Config) -> Result<()>;
}

impl Config {
    /// Checks every section: the top-level settings, `limits` and
    /// `excludeTools` here, the stages' and the planner's through [`Section`].
    pub(super) fn validate(&self) -> Result<()> {
        let bad = crate::error::invalid_option::<()>;
        if self.budget == 0 {
            return bad("budget", "must be a positive number of tokens");
        }
        if self.model.len() > 256 {
            return bad("model", "must be at most 256 characters");
        }
        if self.models.len() > 256 {
            return bad("models", "must declare at most 256 models");
        }
        for (key, m) in &self.models {
            let at = |field: &str| format!("models.{key}.{field}");
            if key.trim().is_empty() || key.len() > 256 {
                return bad("models", "each model id must be 1-256 characters");
            }
            if m.max_images == Some(0) {
                return bad(
                    &at("maxImages"),
                    "must be at least 1 (images: false sends none)",
                );
            }
            if m.max_image_bytes == Some(0) {
                return bad(&at("maxImageBytes"), "must be at least 1");
            }
            if m.max_edge_px == Some(0) {
                return bad(&at("maxEdgePx"), "must be at least 1");
            }
        }
        self.limits.validate()?;
        for section in self.sections() {
            section.validate(self)?;
        }
        self.validate_exclude_tools()?;
        if self.session.is_empty()
            || self.session.len() > 128
            || !self
                .session
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.'))
            || self.session.contains("..")
            || self.session == "."
        {
            return bad(
                "session",
                "must be 1-128 characters of [A-Za-z0-9._-], not \".\" and without \"..\"",
            );
        }
        Ok(())
    }

    /// The sections with checks of their own, in the order they are checked
    /// (`dedup` and `redact` have none: every value of theirs is valid).
    fn sections(&self) -> [&dyn Section; 5] {
        [
            &self.spill,
            &self.optical,
            &self.phase,
            &self.compact,
            &self.plan,
        ]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::ErrorCode;
    use serde_json::json;

    /// Every section's own check runs (one bad value each, the error naming
    /// it), and sections are checked in their order: top level, limits, then
    /// spill, optical, phase, compact, plan, then the session name.
    #[test]
    fn each_section_checks_itself_in_order() {
        let bad = [
            (json!({"limits": {"maxDepth": 0}}), "limits.maxDepth"),
            (json!({"spill": {"fraction": 0}}), "spill.fraction"),
            (json!({"optical": {"bitDepth": 3}}), "optical.bitDepth"),
            (json!({"phase": {"editTools": [""]}}), "phase.editTools"),
            (json!({"compact": {"keep": 0}}), "compact.keep"),
            (json!({"plan": {"minHorizon": 0}}), "plan.minHorizon"),
            (json!({"session": "a b"}), "session"),
        ];
        for (i, (options, path)) in bad.iter().enumerate() {
            let e = Config::from_json(options.clone()).unwrap_err();
            assert_eq!((e.code, e.path.as_str()), (ErrorCode::InvalidOption, *path));
            // With every later section bad too, this one is still reported.
            let mut all = serde_json::Map::new();
            for (later, _) in bad.iter().skip(i) {
                all.extend(later.as_object().cloned().unwrap_or_default());
            }
            let e = Config::from_json(all.into()).unwrap_err();
            assert_eq!(e.path, *path);
        }
        let e = Config::from_json(json!({"spill": {"errorPatterns": vec!["x"; 65]}})).unwrap_err();
        assert_eq!(
            (e.code, e.path.as_str()),
            (ErrorCode::LimitExceeded, "spill.errorPatterns"),
            "the spill section reads limits from the whole config"
        );
        let e = Config::from_json(json!({
            "limits": {"maxErrorPatterns": 1},
            "spill": {"errorPatterns": ["a", "b"]}
        }))
        .unwrap_err();
        assert_eq!(e.message, "2 patterns, limits.maxErrorPatterns is 1");
    }
}
