//! The checks a parsed [`Config`] must pass, every section's in one place;
//! an error names the offending option (`INVALID_OPTION`, or `LIMIT_EXCEEDED`
//! for a limit).

use super::{CompactConfig, Config, Limits, OpticalConfig, PhaseConfig, PlanConfig, SpillConfig};
use crate::error::Result;
use crate::store::grep::Pattern;

impl Config {
    /// Checks every section.
    pub(super) fn validate(&self) -> Result<()> {
        let bad = crate::error::invalid_option::<()>;
        if self.budget == 0 {
            return bad("budget", "must be a positive number of tokens");
        }
        if !(1..=127).contains(&self.limits.max_depth) {
            return bad("limits.maxDepth", "must be between 1 and 127");
        }
        if self.limits.max_compact_messages == 0 {
            return bad("limits.maxCompactMessages", "must be at least 1");
        }
        if self.limits.max_compact_bytes < 1024 {
            return bad("limits.maxCompactBytes", "must be at least 1024");
        }
        self.spill.validate(&self.limits)?;
        self.optical.validate()?;
        self.phase.validate()?;
        self.compact.validate()?;
        self.plan.validate()?;
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

/// Whether `path` is an absolute path (POSIX `/…`, Windows `C:\…` or
/// `C:/…`) of at most 1024 bytes with no control character (a pointer is
/// one line of an excerpt) and no `'` (excerpts quote it for the shell).
fn is_absolute_dir(path: &str) -> bool {
    let bytes = path.as_bytes();
    let rooted = match bytes {
        [b'/', ..] => true,
        [drive, b':', b'\\' | b'/', ..] => drive.is_ascii_alphabetic(),
        _ => false,
    };
    rooted && path.len() <= 1024 && !path.chars().any(|c| c.is_control() || c == '\'')
}

impl SpillConfig {
    /// Checks the `spill` section; errors name the offending field.
    fn validate(&self, limits: &Limits) -> Result<()> {
        let bad = crate::error::invalid_option::<()>;
        if !(self.fraction > 0.0 && self.fraction <= 1.0) {
            return bad("spill.fraction", "must be in (0, 1]");
        }
        if !(self.head_share >= 0.0 && self.head_share <= 1.0) {
            return bad("spill.headShare", "must be in [0, 1]");
        }
        if !self.pointer_root.is_empty() && !is_absolute_dir(&self.pointer_root) {
            return bad(
                "spill.pointerRoot",
                "must be an absolute directory (/… or C:\\…) of at most 1024 bytes without control characters or '",
            );
        }
        if self.error_patterns.len() > limits.max_error_patterns {
            return Err(crate::error::Error::new(
                crate::error::ErrorCode::LimitExceeded,
                "spill.errorPatterns",
                format!(
                    "{} patterns, limits.maxErrorPatterns is {}",
                    self.error_patterns.len(),
                    limits.max_error_patterns
                ),
            ));
        }
        for (i, pattern) in self.error_patterns.iter().enumerate() {
            if let Err(e) = Pattern::new(pattern, false, false) {
                return Err(crate::error::Error::new(
                    crate::error::ErrorCode::InvalidOption,
                    format!("spill.errorPatterns[{i}]"),
                    e.message,
                ));
            }
        }
        Ok(())
    }
}

impl OpticalConfig {
    /// Checks the `optical` section; errors name the offending field.
    fn validate(&self) -> Result<()> {
        let bad = crate::error::invalid_option::<()>;
        if !(self.ratio.is_finite() && self.ratio > 0.0) {
            return bad("optical.ratio", "must be a positive number");
        }
        if !(4..=64).contains(&self.font_px) {
            return bad("optical.fontPx", "must be between 4 and 64");
        }
        if !(4..=self.font_px).contains(&self.min_font_px) {
            return bad("optical.minFontPx", "must be between 4 and optical.fontPx");
        }
        if self.line_gap > 3 {
            return bad("optical.lineGap", "must be between 0 and 3");
        }
        if self.min_columns == 0 {
            return bad("optical.minColumns", "must be at least 1");
        }
        if !matches!(self.bit_depth, 1 | 2 | 4 | 8) {
            return bad("optical.bitDepth", "must be 1, 2, 4 or 8");
        }
        if !(0.0..=1.0).contains(&self.max_missing_share) {
            return bad("optical.maxMissingShare", "must be in [0, 1]");
        }
        if !(self.patch_multiplier.is_finite() && self.patch_multiplier > 0.0) {
            return bad("optical.patchMultiplier", "must be a positive number");
        }
        if self.batch == 0 {
            return bad("optical.batch", "must be at least 1");
        }
        if !matches!(self.detail.as_str(), "high" | "low") {
            return bad("optical.detail", "must be \"high\" or \"low\"");
        }
        if !matches!(
            self.media_resolution.as_str(),
            "" | "low" | "medium" | "high"
        ) {
            return bad(
                "optical.mediaResolution",
                "must be \"low\", \"medium\", \"high\" or empty",
            );
        }
        crate::formats::image_urls::check_template(&self.image_url)
    }
}

impl PhaseConfig {
    /// Checks the `phase` section; errors name the offending field.
    fn validate(&self) -> Result<()> {
        let bad = crate::error::invalid_option::<()>;
        let malformed = |names: &[String]| {
            names
                .iter()
                .any(|t| t.is_empty() || t.starts_with(':') || t.ends_with(':'))
        };
        if malformed(&self.edit_tools) {
            return bad(
                "phase.editTools",
                "tool names must be non-empty (`name` or `name:command`)",
            );
        }
        if let Some(bad_reason) = self.clear.iter().find(|c| {
            !super::ClearReason::ALL
                .iter()
                .any(|r| r.as_str() == c.as_str())
        }) {
            return bad(
                "phase.clear",
                &format!("unknown entry {bad_reason:?} (searches, listings, reruns, editedViews)"),
            );
        }
        if malformed(&self.shell_tools) {
            return bad("phase.shellTools", "tool names must be non-empty");
        }
        Ok(())
    }
}

impl CompactConfig {
    /// Checks the `compact` section; errors name the offending field.
    /// Checks the `compact` section; errors name the offending field.
    fn validate(&self) -> Result<()> {
        let bad = crate::error::invalid_option::<()>;
        if !(self.user_share >= 0.0 && self.user_share <= 1.0) {
            return bad("compact.userShare", "must be in [0, 1]");
        }
        if !(self.call_log_share > 0.0 && self.call_log_share <= 1.0) {
            return bad("compact.callLogShare", "must be in (0, 1]");
        }
        if !(self.summary_share > 0.0 && self.summary_share <= 1.0) {
            return bad("compact.summaryShare", "must be in (0, 1]");
        }
        if self.keep == 0 {
            return bad("compact.keep", "must be at least 1");
        }
        if let Some(i) = self
            .constraint_patterns
            .iter()
            .position(|p| p.trim().is_empty())
        {
            return Err(crate::error::Error::new(
                crate::error::ErrorCode::InvalidOption,
                format!("compact.constraintPatterns[{i}]"),
                "must not be empty",
            ));
        }
        if let Some(i) = self
            .pinned
            .iter()
            .position(|p| p.trim().is_empty() || p.len() > 4_000)
        {
            return Err(crate::error::Error::new(
                crate::error::ErrorCode::InvalidOption,
                format!("compact.pinned[{i}]"),
                "must be 1-4000 bytes of text",
            ));
        }
        Ok(())
    }
}

impl PlanConfig {
    /// Checks the section; errors name the offending field.
    fn validate(&self) -> Result<()> {
        let bad = crate::error::invalid_option::<()>;
        if self.horizon > 10_000 {
            return bad("plan.horizon", "must be at most 10000 (0 derives it)");
        }
        if self.min_horizon == 0 || self.min_horizon > self.max_horizon {
            return bad(
                "plan.minHorizon",
                "must be at least 1 and at most plan.maxHorizon",
            );
        }
        if self.max_horizon > 10_000 {
            return bad("plan.maxHorizon", "must be at most 10000");
        }
        if let Some(p) = &self.prices {
            let ok = |x: f64| x.is_finite() && x >= 0.0;
            if !(ok(p.input) && ok(p.cached_input) && ok(p.cache_write)) {
                return bad("plan.prices", "prices must be non-negative numbers");
            }
        }
        Ok(())
    }
}
