//! [`Detectors`]: which lines of a tool's output are critical for the spill
//! excerpt — the failing test's name, the first line saying why it failed,
//! the error and its `file:line` — as data: one [`Table`] per tool
//! ([`TABLES`]), plus the host's own (`spill.detectors`,
//! [`crate::config::DetectorTable`]).
//!
//! A table has three kinds of rules, each a pattern of the spill tools' regex
//! dialect, matched with case:
//! * `lines`: every line matching the pattern is critical;
//! * `after` (`when`, `find`, `within`): after each line matching `when`, the
//!   first line matching `find` within the next `within` lines is critical
//!   (jest's `at …(file:line:col)` under its `● Suite › test` heading);
//! * `before` (`when`, `find`, `within`): before each line matching `when`,
//!   the nearest line matching `find` within the `within` lines above it is
//!   critical (the file heading above eslint's `12:5  error` row).
//!
//! Python's tracebacks, pytest's and unittest's lines, `error:`/`error[…]`
//! and `…Error:` lines are critical without a table
//! ([`crate::activity::check::is_error_line`]).

use super::literals::LiteralSet;
use super::Pattern;
use crate::config::{ContextRule, DetectorTable};
use crate::error::{Error, ErrorCode, Result};
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
        lines: &[r"^\s*● \S", r"^\s+✕ \S", r"^FAIL \S+\.\w+$"],
        after: &[
            (r"^\s*● \S", r"^\s+Expected:", 12),
            (r"^\s*● \S", r"^\s+Received:", 12),
            (r"^\s*● \S", JS_AT, 40),
        ],
        before: &[],
    },
    Table {
        tool: "vitest",
        lines: &[r"^\s*× \S", r"^\s*FAIL\s+\S+ > \S", r"^\s*❯ \S+:\d+:\d+"],
        after: &[(r"^\s*× \S", r"^\s*→ \S", 1)],
        before: &[],
    },
    Table {
        tool: "mocha",
        lines: &[r"^\s+\d+ failing$"],
        after: &[(r"^\s+AssertionError", JS_AT, 20)],
        // The test's name ends with `:` above its indented error.
        before: &[(r"^\s+\w*Error\b", r"^\s+\S.*\S:$", 3)],
    },
    Table {
        tool: "node:test (spec and TAP reporters)",
        lines: &[r"^\s*✖ \S", r"^\s*not ok \d+ - \S"],
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
        lines: &[
            r"^test \S+ \.\.\. FAILED$",
            r"^thread '.*' (\(\d+\) )?panicked at ",
        ],
        after: &[
            (r"^thread '.*' (\(\d+\) )?panicked at ", r"\S", 1),
            (r"^thread '.*' (\(\d+\) )?panicked at ", r"^\s*left: ", 3),
            (r"^thread '.*' (\(\d+\) )?panicked at ", r"^\s*right: ", 4),
            (r"^error(\[E\d+\])?: ", r"^\s*--> \S+:\d+:\d+", 3),
        ],
        before: &[],
    },
    Table::lines(
        "go test, go build",
        &[
            r"^\s*--- FAIL: \S",
            r"^\s+\w+_test\.go:\d+: ",
            r"^FAIL\s+\S+\s+[\d.]+s$",
            r"^(\./)?[\w./-]+\.go:\d+:\d+: ",
            r"^panic: ",
        ],
    ),
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
        lines: &[r"^rspec \./\S+:\d+ # ", r"^\s+Failure/Error: "],
        after: &[
            (r"^\s+Failure/Error: ", r"^\s+expected", 4),
            (r"^\s+Failure/Error: ", r"^\s+got: ", 5),
            (r"^\s+Failure/Error: ", r"^\s+# \./\S+:\d+", 12),
        ],
        before: &[],
    },
];
/// Most lines an `after` or `before` rule looks through (`within`).
pub const MAX_WITHIN: usize = 1_000;

/// Which way a context rule looks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Direction {
    After,
    Before,
}

/// A compiled rule: a line matching `when` is critical itself (`find` is
/// `None`), or points at the first `find` line around it.
#[derive(Debug, Clone)]
struct Rule {
    when: Pattern,
    find: Option<(Pattern, Direction, usize)>,
}

/// Every table's rules, compiled once per configuration.
#[derive(Debug, Clone)]
pub struct Detectors {
    rules: Vec<Rule>,
    /// One-pass finder of the `when` patterns' literals, when each has one.
    literals: Option<LiteralSet>,
}

/// Compiles one rule pattern (case kept); `path` names it in the error.
fn compile(pattern: &str, path: impl FnOnce() -> String) -> Result<Pattern> {
    Pattern::new(pattern, false, false)
        .map_err(|e| Error::new(ErrorCode::InvalidOption, path(), e.message))
}

impl Detectors {
    /// The built-in [`TABLES`] and the host's `extra` tables
    /// (`spill.detectors`); a pattern that does not compile is an
    /// `INVALID_OPTION` naming it (`spill.detectors[0].lines[1]`).
    pub fn new(extra: &[DetectorTable]) -> Result<Self> {
        let mut rules = Vec::new();
        let direction = [Direction::After, Direction::Before];
        for (t, table) in TABLES.iter().enumerate() {
            let here =
                |kind: &str, i: usize| format!("spill detectors: {}.{kind}[{i}] ({t})", table.tool);
            for (i, p) in table.lines.iter().enumerate() {
                rules.push(Rule {
                    when: compile(p, || here("lines", i))?,
                    find: None,
                });
            }
            for (dir, list) in direction.into_iter().zip([table.after, table.before]) {
                for (i, (when, find, within)) in list.iter().enumerate() {
                    let path = || {
                        here(
                            if dir == Direction::After {
                                "after"
                            } else {
                                "before"
                            },
                            i,
                        )
                    };
                    rules.push(Rule {
                        when: compile(when, path)?,
                        find: Some((compile(find, path)?, dir, *within)),
                    });
                }
            }
        }
        for (t, table) in extra.iter().enumerate() {
            let at = |kind: &str, i: usize, field: &str| {
                format!("spill.detectors[{t}].{kind}[{i}]{field}")
            };
            for (i, p) in table.lines.iter().enumerate() {
                rules.push(Rule {
                    when: compile(p, || at("lines", i, ""))?,
                    find: None,
                });
            }
            let lists: [(&str, Direction, &Vec<ContextRule>); 2] = [
                ("after", Direction::After, &table.after),
                ("before", Direction::Before, &table.before),
            ];
            for (kind, dir, list) in lists {
                for (i, rule) in list.iter().enumerate() {
                    rules.push(Rule {
                        when: compile(&rule.when, || at(kind, i, ".when"))?,
                        find: Some((
                            compile(&rule.find, || at(kind, i, ".find"))?,
                            dir,
                            rule.within,
                        )),
                    });
                }
            }
        }
        let literals = if rules
            .iter()
            .all(|r| r.when.required_ignoring_case().is_some())
        {
            LiteralSet::new(rules.iter().filter_map(|r| r.when.required_ignoring_case()))
        } else {
            None
        };
        Ok(Self { rules, literals })
    }

    /// The 0-based lines of `text` the rules make critical, sorted, once each.
    pub fn scan(&self, text: &str, index: &LineIndex) -> Vec<usize> {
        let mut out = Vec::new();
        let visit = |line: usize, out: &mut Vec<usize>| {
            let content = index.line_trimmed(text, line);
            for rule in &self.rules {
                if !rule.when.is_match(content) {
                    continue;
                }
                match &rule.find {
                    None => out.push(line),
                    Some((find, dir, within)) => {
                        let within = (*within).min(MAX_WITHIN);
                        let found = match dir {
                            Direction::After => (line + 1..index.len().min(line + 1 + within))
                                .find(|&i| find.is_match(index.line_trimmed(text, i))),
                            Direction::Before => (line.saturating_sub(within)..line)
                                .rev()
                                .find(|&i| find.is_match(index.line_trimmed(text, i))),
                        };
                        out.extend(found);
                    }
                }
            }
        };
        match &self.literals {
            Some(literals) => {
                let span = index.span(0, index.len());
                literals.scan(text.as_bytes(), span.start, span.end, |at| {
                    let line = index.line_of(at);
                    visit(line, &mut out);
                    // Every rule was checked on this line: go on after it.
                    Some(index.range(line).end)
                });
            }
            None => (0..index.len()).for_each(|line| visit(line, &mut out)),
        }
        out.sort_unstable();
        out.dedup();
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn critical(text: &str, extra: &[DetectorTable]) -> Vec<usize> {
        let index = LineIndex::new(text);
        Detectors::new(extra).unwrap().scan(text, &index)
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
    }
}
