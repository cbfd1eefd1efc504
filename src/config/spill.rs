//! The `spill` section (stage 1): its settings, their defaults, and the
//! check a parsed section must pass, with the detector rules' patterns.

use serde::{Deserialize, Serialize};

use super::{check_rule_count, malformed_tool, Config, Section, TOOL_NAME};
use crate::error::{invalid_option, Error, ErrorCode, Result};
use crate::store::grep::Pattern;

/// Spilling settings.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields, rename_all = "camelCase")]
pub struct SpillConfig {
    /// Stage switch.
    pub enabled: bool,
    /// Minimum cap per tool result, in tokens.
    pub floor_tokens: u64,
    /// Cap as a share of the budget (default 0.02: 2,560 tokens, about
    /// 10 KB of text, at the default budget; the design's 0.25 measured
    /// worse on every column of `make bench`, see the README).
    pub fraction: f64,
    /// Share of the cap given to the head of the excerpt (the rest goes to the tail).
    pub head_share: f64,
    /// Share of the cap the excerpt may spend naming what its hidden middle
    /// holds (paths and definitions with their lines, the ids of failing
    /// tests the error listing left out); 0 turns the index off.
    pub index_share: f64,
    /// Patterns (small regex dialect, matched ignoring ASCII case; `(?-i)`
    /// restores it) marking error lines of the hidden middle that the excerpt
    /// lists. Default: `Traceback`, `Error`, `FATAL`, `CRITICAL`, `npm ERR!`,
    /// `panic`, `Exception`, `FAILED`, `exit code [1-9]`, `returncode>[1-9]`.
    pub error_patterns: Vec<String>,
    /// How many hidden lines matching the patterns to list besides the
    /// critical ones (every traceback's last line, error lines, failing
    /// tests: all listed, marked `!`, within 1,600 bytes).
    pub max_error_lines: usize,
    /// The host's own critical-line detectors, one table per tool, added to
    /// the built-in ones (jest, vitest, mocha, node:test, TAP, tsc, eslint,
    /// vite, npm, cargo, go, make, rspec: `src/spill/detectors.rs`): lines
    /// they mark are listed with the critical ones. Patterns: the spill
    /// tools' regex dialect, case kept.
    pub detectors: Vec<DetectorTable>,
    /// Where the host keeps spills as files (an absolute directory, e.g. a
    /// `FileStore`'s root): pointers become the file's path,
    /// `<pointerRoot>/<session>/<key>.txt`, and excerpts say how to read it
    /// with ordinary tools (`sed -n`, `grep -n`). Empty: `spill://` pointers.
    pub pointer_root: String,
    /// A tool's own cap in tokens, replacing the computed one for its
    /// outputs (1 to `budget`), e.g. `{ "bash": 1000 }`; also the one cap
    /// of a tool in `excludeTools`. None by default.
    pub tool_caps: std::collections::BTreeMap<String, usize>,
}

impl SpillConfig {
    /// Default `index_share`: 5% of the cap (about 380 bytes at the default
    /// cap), enough for a dozen paths and definitions.
    pub const INDEX_SHARE: f64 = 0.05;
}

impl Default for SpillConfig {
    fn default() -> Self {
        Self {
            enabled: true,
            floor_tokens: 2_000,
            fraction: 0.02,
            head_share: 0.65,
            index_share: Self::INDEX_SHARE,
            error_patterns: [
                "Traceback",
                "Error",
                "FATAL",
                "CRITICAL",
                "npm ERR!",
                "panic",
                "Exception",
                "FAILED",
                "exit code [1-9]",
                "returncode>[1-9]",
            ]
            .map(String::from)
            .to_vec(),
            max_error_lines: 5,
            detectors: Vec::new(),
            pointer_root: String::new(),
            tool_caps: std::collections::BTreeMap::new(),
        }
    }
}

/// One tool's critical-line detectors (`spill.detectors`).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields, rename_all = "camelCase")]
pub struct DetectorTable {
    /// The tool whose output the rules read (a name for errors and reports).
    pub tool: String,
    /// Patterns of lines critical in themselves (`^make: \*\*\* `).
    pub lines: Vec<String>,
    /// Patterns of a failing test's line, critical too, the test's id in
    /// the first group (`^--- FAIL: (\S+)`): the excerpt counts those it
    /// could not list and gives the pattern to find them.
    pub tests: Vec<String>,
    /// After each line matching `when`, the first line matching `find`
    /// within `within` lines is critical (the location under a test's heading).
    pub after: Vec<ContextRule>,
    /// Before each line matching `when`, the nearest line matching `find`
    /// within `within` lines is critical (the file heading above an error row).
    pub before: Vec<ContextRule>,
}

/// A detector rule that looks around a line (`spill.detectors[].after`, `.before`).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields, rename_all = "camelCase")]
pub struct ContextRule {
    /// Pattern of the line the rule starts from.
    pub when: String,
    /// Pattern of the line it marks critical.
    pub find: String,
    /// How many lines away it looks (1 to 1,000).
    pub within: usize,
}

impl ContextRule {
    /// Most lines a rule looks through (`within`).
    pub const MAX_WITHIN: usize = 1_000;
}

impl DetectorTable {
    /// Compiles every pattern of the table in the order the spill stage
    /// adds its rules (`lines`, `tests`, `after`, `before`); an error names
    /// the first that does not compile (`spill.detectors[0].lines[1]`).
    fn check_patterns(&self, path: &str) -> Result<()> {
        for (i, p) in self.lines.iter().enumerate() {
            rule_pattern(p, &|| format!("{path}.lines[{i}]"))?;
        }
        for (i, p) in self.tests.iter().enumerate() {
            test_rule(p, &|| format!("{path}.tests[{i}]"))?;
        }
        for (kind, list) in [("after", &self.after), ("before", &self.before)] {
            for (i, rule) in list.iter().enumerate() {
                let here = || format!("{path}.{kind}[{i}]");
                rule_pattern(&rule.when, &|| format!("{}.when", here()))?;
                rule_pattern(&rule.find, &|| format!("{}.find", here()))?;
            }
        }
        Ok(())
    }
}

/// Compiles one detector pattern (the spill tools' dialect, case kept);
/// `path` names it in the error.
pub(crate) fn rule_pattern(pattern: &str, path: &dyn Fn() -> String) -> Result<Pattern> {
    Pattern::new(pattern, false, false)
        .map_err(|e| Error::new(ErrorCode::InvalidOption, path(), e.message))
}

/// A test rule's pattern and regex: it compiles as a [`Pattern`] and has a
/// group (the test's id).
pub(crate) fn test_rule(
    pattern: &str,
    path: &dyn Fn() -> String,
) -> Result<(Pattern, regex_lite::Regex)> {
    let when = rule_pattern(pattern, path)?;
    match regex_lite::Regex::new(pattern) {
        Ok(re) if re.captures_len() > 1 => Ok((when, re)),
        _ => Err(Error::new(
            ErrorCode::InvalidOption,
            path(),
            "needs a group, (…), around the test's id",
        )),
    }
}

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
                    if !(1..=ContextRule::MAX_WITHIN).contains(&rule.within) {
                        return invalid_option(
                            &format!("spill.detectors[{t}].{kind}[{i}].within"),
                            "must be in [1, 1000]",
                        );
                    }
                }
            }
        }
        for (t, table) in self.detectors.iter().enumerate() {
            table.check_patterns(&format!("spill.detectors[{t}]"))?;
        }
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
