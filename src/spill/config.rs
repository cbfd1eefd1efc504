//! The spill stage checks its own options section (`spill`); [`Config`]
//! calls it through [`Section`].

use crate::config::{check_rule_count, malformed_tool, Config, Section, SpillConfig, TOOL_NAME};
use crate::error::{invalid_option, Error, ErrorCode, Result};
use crate::store::grep::Pattern;

impl Section for SpillConfig {
    /// Checks the `spill` section (`limits.maxErrorPatterns` bounds its
    /// patterns); errors name the offending field.
    fn validate(&self, config: &Config) -> Result<()> {
        if !(self.fraction > 0.0 && self.fraction <= 1.0) {
            return invalid_option("spill.fraction", "must be in (0, 1]");
        }
        if !(self.head_share >= 0.0 && self.head_share <= 1.0) {
            return invalid_option("spill.headShare", "must be in [0, 1]");
        }
        if !(self.index_share >= 0.0 && self.index_share <= 0.5) {
            return invalid_option("spill.indexShare", "must be in [0, 0.5]");
        }
        if !self.pointer_root.is_empty() && !is_absolute_dir(&self.pointer_root) {
            return invalid_option(
                "spill.pointerRoot",
                "must be an absolute directory (/… or C:\\…) of at most 1024 bytes without control characters or '",
            );
        }
        let most = config.limits.max_error_patterns;
        if self.error_patterns.len() > most {
            return Err(Error::new(
                ErrorCode::LimitExceeded,
                "spill.errorPatterns",
                format!(
                    "{} patterns, limits.maxErrorPatterns is {most}",
                    self.error_patterns.len()
                ),
            ));
        }
        for (i, pattern) in self.error_patterns.iter().enumerate() {
            if let Err(e) = Pattern::new(pattern, false, false) {
                return Err(Error::new(
                    ErrorCode::InvalidOption,
                    format!("spill.errorPatterns[{i}]"),
                    e.message,
                ));
            }
        }
        let rules: usize = self
            .detectors
            .iter()
            .map(|t| t.lines.len() + t.tests.len() + t.after.len() + t.before.len())
            .sum();
        if rules > most {
            return Err(Error::new(
                ErrorCode::LimitExceeded,
                "spill.detectors",
                format!("{rules} rules, limits.maxErrorPatterns is {most}"),
            ));
        }
        for (t, table) in self.detectors.iter().enumerate() {
            let lists = [("after", &table.after), ("before", &table.before)];
            for (kind, list) in lists {
                for (i, rule) in list.iter().enumerate() {
                    if !(1..=super::detectors::MAX_WITHIN).contains(&rule.within) {
                        return invalid_option(
                            &format!("spill.detectors[{t}].{kind}[{i}].within"),
                            "must be in [1, 1000]",
                        );
                    }
                }
            }
        }
        // Compiles every pattern: the error names the first that does not.
        super::detectors::Detectors::new(&self.detectors)?;
        check_salience(&self.salience)?;
        check_rule_count(config, "spill.toolCaps", self.tool_caps.len())?;
        if self.tool_caps.keys().any(|t| malformed_tool(t)) {
            return invalid_option("spill.toolCaps", TOOL_NAME);
        }
        let budget = config.budget;
        for (tool, &cap) in &self.tool_caps {
            if cap == 0 || cap as u64 > budget {
                return invalid_option(
                    &format!("spill.toolCaps.{tool}"),
                    &format!("must be between 1 and budget ({budget}) tokens, got {cap}"),
                );
            }
        }
        Ok(())
    }
}

/// Checks `spill.salience`: each count within a range that keeps a fold
/// worth its marker.
fn check_salience(s: &crate::config::SalienceConfig) -> Result<()> {
    let ranges = [
        ("spill.salience.minLines", s.min_lines, 1, 100_000),
        ("spill.salience.context", s.context, 0, 50),
        ("spill.salience.ends", s.ends, 0, 1_000),
        ("spill.salience.minRun", s.min_run, 2, 100_000),
        ("spill.salience.recentSteps", s.recent_steps, 0, 1_000),
    ];
    if !(s.max_name_share > 0.0 && s.max_name_share <= 1.0) {
        return invalid_option("spill.salience.maxNameShare", "must be in (0, 1]");
    }
    for (field, value, low, high) in ranges {
        if !(low..=high).contains(&value) {
            return invalid_option(field, &format!("must be in [{low}, {high}], got {value}"));
        }
    }
    Ok(())
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
