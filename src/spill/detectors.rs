//! [`Detectors`]: which lines of a tool's output are critical for the spill
//! excerpt — the failing test's name, the first line saying why it failed,
//! the error and its `file:line` — as data: one [`Table`] per tool
//! ([`TABLES`]), plus the host's own (`spill.detectors`,
//! [`crate::config::DetectorTable`]).
//!
//! A table has four kinds of rules, each a pattern of the spill tools' regex
//! dialect, matched with case:
//! * `lines`: every line matching the pattern is critical;
//! * `tests`: a failing test's line, critical, the test's id in the
//!   pattern's first group (`^\s*--- FAIL: (\S+)`): the excerpt counts the
//!   ones it could not list and names the pattern that finds them;
//! * `after` (`when`, `find`, `within`): after each line matching `when`, the
//!   first line matching `find` within the next `within` lines is critical
//!   (jest's `at …(file:line:col)` under its `● Suite › test` heading);
//! * `before` (`when`, `find`, `within`): before each line matching `when`,
//!   the nearest line matching `find` within the `within` lines above it is
//!   critical (the file heading above eslint's `12:5  error` row).
//!
//! Each built-in `when` pattern holds a literal of 2 bytes or more (`● `,
//! `--- FAIL: `): one pass over the text finds the lines worth matching (a
//! host's pattern without one makes every line matched against every rule).
//!
//! Python's tracebacks, pytest's and unittest's lines, `error:`/`error[…]`
//! and `…Error:` lines are critical without a table
//! ([`crate::activity::check::is_error_line`]).

use super::literals::LiteralSet;
use super::Pattern;
use crate::config::{compile_rules, CompiledRule, ContextRule, DetectorTable, RuleText};
use crate::error::Result;
use crate::store::lines::LineIndex;

/// A rule looking around a line: see the module's doc.
pub type Context = (&'static str, &'static str, usize);

/// One tool's detectors.
#[derive(Debug, Clone, Copy)]
pub struct Table {
    /// The tool (or family of tools) whose output the rules read.
    pub tool: &'static str,
    /// Lines critical in themselves.
    pub lines: &'static [&'static str],
    /// `(pattern, grep)`: a failing test's line (critical), its id the
    /// pattern's first group; `grep` finds such lines (`grep -E` and
    /// `grep_spill`) for the excerpt's note on the tests it could not list.
    pub tests: &'static [(&'static str, &'static str)],
    /// `(when, find, within)`: the first `find` line after a `when` line.
    pub after: &'static [Context],
    /// `(when, find, within)`: the nearest `find` line before a `when` line.
    pub before: &'static [Context],
}

impl Table {
    /// A table of `lines` rules only.
    const fn lines(tool: &'static str, lines: &'static [&'static str]) -> Self {
        Self {
            tool,
            lines,
            tests: &[],
            after: &[],
            before: &[],
        }
    }
}

/// A stack frame in a JS or TS file, `at f (path/x.js:12:5)` or
/// `f (file:///…/x.mjs:12:5)` (TAP); Node's internal frames have no extension.
const JS_FRAME: &str = r"\.(m|c)?[jt]sx?:\d+:\d+\)?$";

/// A stack frame line of a JS or TS file, `    at f (path/x.js:12:5)`.
const JS_AT: &str = r"^\s+at \S.*\.(m|c)?[jt]sx?:\d+:\d+\)?$";

/// The built-in tables, one per tool.
pub const TABLES: &[Table] = &[
    Table {
        tool: "jest",
        lines: &[r"^\s+✕ \S", r"^FAIL \S+\.\w+$"],
        tests: &[(r"^\s*● (\S.*)$", "● ")],
        after: &[
            (r"^\s*● \S", r"^\s+Expected:", 12),
            (r"^\s*● \S", r"^\s+Received:", 12),
            (r"^\s*● \S", JS_AT, 40),
        ],
        before: &[],
    },
    Table {
        tool: "vitest",
        lines: &[r"^\s*FAIL\s+\S+ > \S", r"^\s*❯ \S+:\d+:\d+"],
        tests: &[(r"^\s*× (\S.*?)( \d+ms)?$", "× ")],
        after: &[(r"^\s*× \S", r"^\s*→ \S", 1)],
        before: &[],
    },
    Table {
        tool: "mocha",
        lines: &[r"^\s+\d+ failing$"],
        tests: &[],
        after: &[(r"^\s+AssertionError", JS_AT, 20)],
        // The test's name ends with `:` above its indented error
        // (not a Python traceback's `Traceback (most recent call last):`).
        before: &[(r"^\s+\w*Error( \[\w+\])?: ", r"^\s+\S.*[^)\s]:$", 3)],
    },
    Table {
        tool: "node:test (spec and TAP reporters)",
        lines: &[],
        tests: &[
            (r"^\s*✖ (\S.*?)( \([\d.]+m?s\))?$", "✖ "),
            (r"^\s*not ok \d+ - (\S.*)$", "not ok "),
        ],
        after: &[
            (r"AssertionError \[ERR_ASSERTION\]", r" !== | != ", 4),
            (r"AssertionError \[ERR_ASSERTION\]", JS_FRAME, 20),
            (r"^\s+error: \|-$", r"\S", 1),
            (r"^\s+error: \|-$", r" !== | != ", 4),
            (r"^\s+stack: \|-$", JS_FRAME, 8),
        ],
        before: &[],
    },
    Table {
        tool: "node",
        lines: &[r"^file:///\S+\.(m|c)?[jt]sx?:\d+$"],
        tests: &[],
        after: &[
            (r"^\s*(\w+\.)*\w*Error\b.*:", JS_AT, 12),
            (r"^\s*(\w+\.)*\w*Exception\b.*:", JS_AT, 12),
        ],
        before: &[],
    },
    Table::lines(
        "tsc",
        &[
            r"^\S+\.(m|c)?tsx?\(\d+,\d+\): error TS\d+:",
            r"^\S+\.(m|c)?tsx?:\d+:\d+ - error TS\d+:",
        ],
    ),
    Table {
        tool: "eslint",
        lines: &[r"^\s+\d+:\d+\s+error\s"],
        tests: &[],
        after: &[],
        before: &[(
            r"^\s+\d+:\d+\s+error\s",
            r"^\S+\.(m|c)?[jt]sx?$|^\S+\.(vue|svelte)$",
            400,
        )],
    },
    Table {
        tool: "vite, esbuild, webpack",
        lines: &[
            r"^error during build:",
            r"^file: \S+:\d+:\d+",
            r"✘ \[ERROR\] ",
            r"^ERROR in \S",
        ],
        tests: &[],
        after: &[
            (r"^error during build:", r"\S", 1),
            (r"✘ \[ERROR\] ", r"^\s+\S+:\d+:\d+:", 3),
        ],
        before: &[],
    },
    Table::lines(
        "npm, pnpm, yarn",
        &[
            r"^npm (ERR!|error) (code|command failed|Lifecycle|missing script)",
            r"ELIFECYCLE",
            r"ERR_PNPM_\w+",
            r"^error Command failed",
        ],
    ),
    Table {
        tool: "cargo test, rustc",
        lines: &[r"^thread '.*' (\(\d+\) )?panicked at "],
        tests: &[(r"^test (\S+) \.\.\. FAILED$", "FAILED")],
        after: &[
            (r"^thread '.*' (\(\d+\) )?panicked at ", r"\S", 1),
            (r"^thread '.*' (\(\d+\) )?panicked at ", r"^\s*left: ", 3),
            (r"^thread '.*' (\(\d+\) )?panicked at ", r"^\s*right: ", 4),
            (r"^error(\[E\d+\])?: ", r"^\s*--> \S+:\d+:\d+", 3),
        ],
        before: &[],
    },
    Table {
        tool: "go test, go build",
        lines: &[
            r"^\s+\w+_test\.go:\d+: ",
            r"^FAIL\s+\S+\s+[\d.]+s$",
            r"^(\./)?[\w./-]+\.go:\d+:\d+: ",
            r"^panic: ",
        ],
        tests: &[(r"^\s*--- FAIL: (\S+)", "--- FAIL: ")],
        after: &[],
        before: &[],
    },
    Table::lines(
        "make, gcc, clang",
        &[
            r"^make(\[\d+\])?: \*\*\* ",
            r"^\S+\.(c|h|cc|cpp|cxx|hpp|m):\d+:\d+: (fatal )?error: ",
            r"undefined reference to ",
        ],
    ),
    Table {
        tool: "rspec",
        lines: &[r"^\s+Failure/Error: "],
        tests: &[(r"^rspec \./\S+:\d+ # (.+)$", "^rspec ")],
        after: &[
            (r"^\s+Failure/Error: ", r"^\s+expected", 4),
            (r"^\s+Failure/Error: ", r"^\s+got: ", 5),
            (r"^\s+Failure/Error: ", r"^\s+# \./\S+:\d+", 12),
        ],
        before: &[],
    },
];

/// Which way a context rule looks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Direction {
    After,
    Before,
}

/// What a line matching a rule's `when` makes critical.
#[derive(Debug, Clone)]
enum Then {
    /// The line itself.
    Line,
    /// The line, a failing test whose id is the regex's first group; the
    /// index of its `grep` pattern in [`Detectors::greps`].
    Test(regex_lite::Regex, usize),
    /// The first line matching the pattern around it.
    Around(Box<Pattern>, Direction, usize),
}

/// A compiled rule.
#[derive(Debug, Clone)]
struct Rule {
    when: Pattern,
    then: Then,
}

/// Every table's rules, compiled once per configuration.
#[derive(Debug, Clone)]
pub struct Detectors {
    rules: Vec<Rule>,
    /// The `grep` patterns of the test rules.
    greps: Vec<String>,
    /// One-pass finder of the `when` patterns' literals, when each has one.
    literals: Option<LiteralSet>,
}

/// What [`Detectors::scan`] found in a text.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Found<'t> {
    /// 0-based critical lines, sorted, once each.
    pub critical: Vec<usize>,
    /// Failing tests: 0-based line and id, in line order.
    pub tests: Vec<(usize, &'t str)>,
    /// The patterns that find the failing tests' lines (`grep -E`,
    /// `grep_spill`), joined by `|`; empty without tests.
    pub grep: String,
}

impl Detectors {
    /// The built-in [`TABLES`] and the host's `extra` tables
    /// (`spill.detectors`); a pattern that does not compile is an
    /// `INVALID_OPTION` naming it (`spill.detectors[0].lines[1]`).
    pub fn new(extra: &[DetectorTable]) -> Result<Self> {
        let built_in = TABLES.iter().map(|t| {
            let text = RuleText {
                lines: t.lines.to_vec(),
                tests: t.tests.to_vec(),
                around: [t.after.to_vec(), t.before.to_vec()],
            };
            (format!("built-in detectors of {}", t.tool), text)
        });
        let host = extra
            .iter()
            .enumerate()
            .map(|(i, t)| (format!("spill.detectors[{i}]"), t.rule_text()));
        let mut out = Self {
            rules: Vec::new(),
            greps: Vec::new(),
            literals: None,
        };
        for (path, table) in built_in.chain(host) {
            out.add(&path, &table)?;
        }
        let rules = &out.rules;
        if rules
            .iter()
            .all(|r| r.when.required_ignoring_case().is_some())
        {
            out.literals =
                LiteralSet::new(rules.iter().filter_map(|r| r.when.required_ignoring_case()));
        }
        Ok(out)
    }

    fn add(&mut self, path: &str, table: &RuleText<'_>) -> Result<()> {
        let (rules, greps) = (&mut self.rules, &mut self.greps);
        compile_rules(path, table, &mut |rule| {
            let (when, then) = match rule {
                CompiledRule::Line(when) => (when, Then::Line),
                CompiledRule::Test(when, re, grep) => {
                    let at = match greps.iter().position(|g| g == grep) {
                        Some(at) => at,
                        None => {
                            greps.push(grep.to_string());
                            greps.len() - 1
                        }
                    };
                    (when, Then::Test(re, at))
                }
                CompiledRule::Around(when, find, after, within) => {
                    let dir = if after {
                        Direction::After
                    } else {
                        Direction::Before
                    };
                    (when, Then::Around(find, dir, within))
                }
            };
            rules.push(Rule { when, then });
        })
    }

    /// The lines of `text` the rules make critical and the failing tests they name.
    pub fn scan<'t>(&self, text: &'t str, index: &LineIndex) -> Found<'t> {
        let mut found = Found::default();
        let mut greps = vec![false; self.greps.len()];
        // Per `before` rule: the last line it started from and what it found
        // there; a later start looks back only to it, so a file of many
        // error rows under one heading is walked once.
        let mut last: Vec<Option<(usize, Option<usize>)>> = vec![None; self.rules.len()];
        let mut visit = |line: usize| {
            let content = index.line_trimmed(text, line);
            for (k, rule) in self.rules.iter().enumerate() {
                if !rule.when.is_match(content) {
                    continue;
                }
                match &rule.then {
                    Then::Line => found.critical.push(line),
                    Then::Test(re, grep) => {
                        found.critical.push(line);
                        let id = re.captures(content).and_then(|c| c.get(1));
                        if let Some(id) = id.map(|m| m.as_str().trim()).filter(|id| !id.is_empty())
                        {
                            if found.tests.last().map_or(true, |(l, _)| *l != line) {
                                found.tests.push((line, id));
                            }
                            if let Some(g) = greps.get_mut(*grep) {
                                *g = true;
                            }
                        }
                    }
                    Then::Around(find, dir, within) => {
                        let within = (*within).min(ContextRule::MAX_WITHIN);
                        let hit = match dir {
                            Direction::After => (line + 1..index.len().min(line + 1 + within))
                                .find(|&i| find.is_match(index.line_trimmed(text, i))),
                            Direction::Before => {
                                let floor = line.saturating_sub(within);
                                let slot = last.get_mut(k);
                                let (stop, prior) = match slot.as_deref() {
                                    Some(Some((from, hit))) if *from >= floor => (*from, *hit),
                                    _ => (floor, None),
                                };
                                let hit = (stop..line)
                                    .rev()
                                    .find(|&i| find.is_match(index.line_trimmed(text, i)))
                                    .or(prior.filter(|&h| h >= floor));
                                if let Some(slot) = slot {
                                    *slot = Some((line, hit));
                                }
                                hit
                            }
                        };
                        found.critical.extend(hit);
                    }
                }
            }
        };
        match &self.literals {
            Some(literals) => {
                let span = index.span(0, index.len());
                literals.scan(text.as_bytes(), span.start, span.end, |at| {
                    let line = index.line_of(at);
                    visit(line);
                    // Every rule was checked on this line: go on after it.
                    Some(index.range(line).end)
                });
            }
            None => (0..index.len()).for_each(&mut visit),
        }
        found.critical.sort_unstable();
        found.critical.dedup();
        let used: Vec<&str> = self
            .greps
            .iter()
            .zip(greps)
            .filter_map(|(g, used)| used.then_some(g.as_str()))
            .collect();
        found.grep = used.join("|");
        found
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::ErrorCode;

    fn critical(text: &str, extra: &[DetectorTable]) -> Vec<usize> {
        let index = LineIndex::new(text);
        Detectors::new(extra).unwrap().scan(text, &index).critical
    }

    #[test]
    fn built_in_tables_compile_and_every_when_has_a_literal() {
        let d = Detectors::new(&[]).unwrap();
        assert!(d.literals.is_some());
    }

    #[test]
    fn lines_after_and_before_rules_pick_their_lines() {
        let go = "=== RUN   TestA\n    a_test.go:4: got 1, want 2\n--- FAIL: TestA (0.00s)\nok\n";
        assert_eq!(critical(go, &[]), vec![1, 2]);
        let jest = "  ● S › t\n\n    Expected: 1\n    Received: 2\n\n      at Object.toBe (a.test.js:3:4)\n      at x (b.js:1:1)\n";
        assert_eq!(critical(jest, &[]), vec![0, 2, 3, 5]);
        let eslint = "/w/src/a.js\n  1:1  warning  x  no-unused-vars\n  2:3  error  y  eqeqeq\n\n/w/src/b.js\n  1:1  warning  z  r\n";
        assert_eq!(critical(eslint, &[]), vec![0, 2]);
        // Many rows under one heading (each walks back only to the row
        // before it), then another file.
        let mut many = String::from("/w/src/a.js\n");
        for i in 0..2_000 {
            many.push_str(&format!("  {i}:1  error  y  eqeqeq\n"));
        }
        many.push_str("\n/w/src/b.js\n  9:9  error  z  no-undef\n");
        let lines = critical(&many, &[]);
        assert_eq!(lines.len(), 2_000 + 3);
        assert!(lines.contains(&0) && lines.contains(&2_002));
        // A passing run: nothing.
        assert!(critical(
            "--- PASS: TestA (0.00s)\nok  \tx\t0.1s\n ✓ a > b 1ms\n",
            &[]
        )
        .is_empty());
    }

    #[test]
    fn host_tables_add_rules_and_bad_patterns_are_typed_errors() {
        let table = DetectorTable {
            tool: "mine".into(),
            lines: vec![r"^BROKEN: ".into()],
            tests: vec![],
            after: vec![ContextRule {
                when: "^BROKEN: ".into(),
                find: r"^  at ".into(),
                within: 2,
            }],
            before: vec![],
        };
        assert_eq!(
            critical("x\nBROKEN: a\n\n  at f\n", std::slice::from_ref(&table)),
            vec![1, 3]
        );
        let mut bad = table;
        bad.after[0].find = "(".into();
        let e = Detectors::new(&[bad]).unwrap_err();
        assert_eq!(
            (e.code, e.path.as_str()),
            (ErrorCode::InvalidOption, "spill.detectors[0].after[0].find")
        );
        let no_group = DetectorTable {
            tests: vec!["^BROKE ".into()],
            ..DetectorTable::default()
        };
        let e = Detectors::new(&[no_group]).unwrap_err();
        assert_eq!(e.path, "spill.detectors[0].tests[0]");
    }

    #[test]
    fn test_rules_name_the_failing_tests_and_the_pattern_that_finds_them() {
        let text = "--- FAIL: TestA (0.00s)\n    --- FAIL: TestB/x (0.01s)\n  ● S › t\nok\n";
        let index = LineIndex::new(text);
        let found = Detectors::new(&[]).unwrap().scan(text, &index);
        assert_eq!(
            found.tests,
            vec![(0, "TestA"), (1, "TestB/x"), (2, "S › t")]
        );
        assert_eq!(found.grep, "● |--- FAIL: ");
        let host = DetectorTable {
            tests: vec![r"^BROKE (\w+)".into()],
            ..DetectorTable::default()
        };
        let text = "BROKE deploy\n";
        let found = Detectors::new(&[host])
            .unwrap()
            .scan(text, &LineIndex::new(text));
        assert_eq!(found.tests, vec![(0, "deploy")]);
        assert_eq!(found.grep, r"^BROKE (\w+)");
    }
}
