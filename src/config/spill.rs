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
    /// Salience at arrival: fold the lines of an output nothing marks as
    /// likely used behind its pointer (off by default).
    pub salience: super::SalienceConfig,
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
            salience: super::SalienceConfig::default(),
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
    /// The table's patterns as [`RuleText`] (a test's `grep` pattern is the
    /// pattern itself).
    pub(crate) fn rule_text(&self) -> RuleText<'_> {
        RuleText {
            lines: self.lines.iter().map(String::as_str).collect(),
            tests: self
                .tests
                .iter()
                .map(|p| (p.as_str(), p.as_str()))
                .collect(),
            around: [context(&self.after), context(&self.before)],
        }
    }
}

/// The `after` or `before` rules as borrowed text.
fn context(list: &[ContextRule]) -> Vec<(&str, &str, usize)> {
    list.iter()
        .map(|r| (r.when.as_str(), r.find.as_str(), r.within))
        .collect()
}

/// One detector table's patterns as borrowed text, the host's
/// (`spill.detectors[i]`) or one the spill stage builds in.
pub(crate) struct RuleText<'a> {
    /// Patterns of lines critical in themselves.
    pub lines: Vec<&'a str>,
    /// A failing test's pattern, and the `grep` pattern that finds its lines.
    pub tests: Vec<(&'a str, &'a str)>,
    /// The `after` and `before` rules: `when`, `find`, `within`.
    pub around: [Vec<(&'a str, &'a str, usize)>; 2],
}

/// One compiled rule of a table, as [`compile_rules`] hands it over.
pub(crate) enum CompiledRule<'a> {
    /// A line critical in itself.
    Line(Pattern),
    /// A failing test's line: its pattern, its regex (the id in the first
    /// group), and the `grep` pattern that finds such lines.
    Test(Pattern, regex_lite::Regex, &'a str),
    /// `when`, `find`, whether it looks after (else before), `within`.
    Around(Pattern, Box<Pattern>, bool, usize),
}

/// Compiles every pattern of `table` (the spill tools' dialect, case kept)
/// in order, `lines`, `tests`, `after`, `before`, handing each rule to
/// `add`: the config check and the spill stage's detectors read a table
/// alike. An error is an `INVALID_OPTION` naming the first pattern that
/// does not compile by its place under `path` (`spill.detectors[0].lines[1]`).
pub(crate) fn compile_rules<'a>(
    path: &str,
    table: &RuleText<'a>,
    add: &mut dyn FnMut(CompiledRule<'a>),
) -> Result<()> {
    let compile = |pattern: &str, at: &dyn Fn() -> String| {
        Pattern::new(pattern, false, false)
            .map_err(|e| Error::new(ErrorCode::InvalidOption, at(), e.message))
    };
    for (i, p) in table.lines.iter().enumerate() {
        add(CompiledRule::Line(compile(p, &|| {
            format!("{path}.lines[{i}]")
        })?));
    }
    for (i, &(p, grep)) in table.tests.iter().enumerate() {
        let at = || format!("{path}.tests[{i}]");
        let when = compile(p, &at)?;
        match regex_lite::Regex::new(p) {
            Ok(re) if re.captures_len() > 1 => add(CompiledRule::Test(when, re, grep)),
            _ => {
                let why = "needs a group, (…), around the test's id";
                return Err(Error::new(ErrorCode::InvalidOption, at(), why));
            }
        }
    }
    for ((kind, after), list) in [("after", true), ("before", false)]
        .into_iter()
        .zip(&table.around)
    {
        for (i, &(when, find, within)) in list.iter().enumerate() {
            let here = || format!("{path}.{kind}[{i}]");
            let when = compile(when, &|| format!("{}.when", here()))?;
            let find = compile(find, &|| format!("{}.find", here()))?;
            add(CompiledRule::Around(when, Box::new(find), after, within));
        }
    }
    Ok(())
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
            let path = format!("spill.detectors[{t}]");
            compile_rules(&path, &table.rule_text(), &mut |_| ())?;
        }
        self.salience.validate()?;
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
