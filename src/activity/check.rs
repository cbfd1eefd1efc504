//! Checks: test and run commands, their exit code and outcome, and the error
//! lines of their output.

use crate::text::one_line;

/// Outcome of a test or run command.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    /// Exit code 0 (or a passing test summary) and no error lines.
    Passed,
    /// Non-zero exit code, a failing test summary or error lines.
    Failed,
    /// Nothing in the output says.
    Unknown,
}

impl Outcome {
    /// Lowercase name.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Passed => "passed",
            Self::Failed => "failed",
            Self::Unknown => "outcome unknown",
        }
    }
}

/// Whether a check runs a test suite or a script.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CheckKind {
    /// A test runner (pytest, runtests.py, cargo test, …).
    Test,
    /// A script or program run (python x.py, node x.js, …).
    Run,
}

/// A test or run command and its outcome.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Check {
    /// Test or run.
    pub kind: CheckKind,
    /// The command line (first line, clipped).
    pub command: String,
    /// What the output says.
    pub outcome: Outcome,
}

/// The check a shell command runs, if it runs tests or a script, with the
/// outcome its `output` reports.
pub fn check(command: &str, output: &str) -> Option<Check> {
    let parsed = ShellCommand::parse(command);
    let kind = parsed.check_kind()?;
    Some(Check {
        kind,
        command: one_line(&parsed.lines.join(" && "), 200),
        outcome: outcome(output, exit_code(output)),
    })
}

/// The first command line of a shell script (heredoc bodies skipped).
pub fn first_line(command: &str) -> &str {
    ShellCommand::parse(command)
        .lines
        .first()
        .copied()
        .unwrap_or("")
}

/// A shell command split into its command lines (heredoc bodies skipped).
struct ShellCommand<'a> {
    lines: Vec<&'a str>,
}

impl<'a> ShellCommand<'a> {
    fn parse(command: &'a str) -> Self {
        let mut lines = Vec::new();
        let mut iter = command.lines();
        while let Some(line) = iter.next() {
            let t = line.trim();
            if t.is_empty() {
                continue;
            }
            lines.push(t);
            if let Some(delim) = heredoc_delimiter(t) {
                for l in iter.by_ref() {
                    if l.trim() == delim {
                        break;
                    }
                }
            }
        }
        Self { lines }
    }

    /// Whether the command runs tests or a script (ignoring heredoc bodies):
    /// the first word of a chained command decides, after `cd`, `timeout`,
    /// `env` and `VAR=value` prefixes; `--version`/`--help` and `pip` are neither.
    fn check_kind(&self) -> Option<CheckKind> {
        let mut kind = None;
        for line in &self.lines {
            for segment in split_chain(line) {
                let words: Vec<&str> = segment
                    .split_whitespace()
                    .skip_while(|w| {
                        matches!(*w, "env" | "timeout" | "time")
                            || w.contains('=')
                            || w.parse::<f64>().is_ok()
                    })
                    .collect();
                let Some(first) = words.first() else { continue };
                if words
                    .iter()
                    .any(|w| matches!(*w, "--version" | "-V" | "--help" | "-h" | "pip" | "install"))
                {
                    continue;
                }
                let exe = first.rsplit('/').next().unwrap_or(first);
                let second = words.get(1).copied().unwrap_or("");
                let third = words.get(2).copied().unwrap_or("");
                let python = exe.starts_with("python");
                let test = matches!(exe, "pytest" | "py.test" | "tox" | "nox" | "nosetests")
                    || first.contains("runtests")
                    || first.ends_with("bin/test")
                    || (python
                        && second == "-m"
                        && matches!(third, "pytest" | "unittest" | "nose" | "tox"))
                    || (python && (second.contains("runtests") || second.ends_with("bin/test")))
                    || (python && second.ends_with("manage.py") && third == "test")
                    || (matches!(exe, "make" | "cargo" | "npm" | "yarn" | "go" | "pnpm")
                        && (second == "test" || (second == "run" && third.starts_with("test"))));
                if test {
                    return Some(CheckKind::Test);
                }
                let runner = python
                    || matches!(
                        exe,
                        "node" | "ruby" | "bash" | "sh" | "deno" | "php" | "perl"
                    )
                    || (matches!(exe, "cargo" | "go") && second == "run");
                if runner && !second.is_empty() && !(exe == "perl" && second.starts_with("-pi")) {
                    kind = Some(CheckKind::Run);
                }
            }
        }
        kind
    }
}

/// `<<'EOF'`, `<<"EOF"`, `<<EOF`, `<<-EOF` → `EOF`.
fn heredoc_delimiter(line: &str) -> Option<String> {
    let at = line.find("<<")?;
    let rest = line.get(at + 2..)?.trim_start_matches('-').trim_start();
    let word: String = rest
        .chars()
        .take_while(|c| !c.is_whitespace() && !matches!(c, ';' | '&' | '|' | '>' | ')'))
        .collect();
    let word = word.trim_matches(|c| c == '\'' || c == '"').to_string();
    (!word.is_empty() && word.chars().all(|c| c.is_ascii_alphanumeric() || c == '_'))
        .then_some(word)
}

/// Pieces of a command line joined by `&&`, `||` or `;`.
fn split_chain(line: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut rest = line;
    loop {
        let next = ["&&", "||", ";"]
            .iter()
            .filter_map(|sep| rest.find(sep).map(|i| (i, sep.len())))
            .min();
        match next {
            Some((i, len)) => {
                out.push(rest.get(..i).unwrap_or(""));
                rest = rest.get(i + len..).unwrap_or("");
            }
            None => {
                out.push(rest);
                return out;
            }
        }
    }
}

/// Whether a line can end a Python traceback: `Name` or `Name: message`,
/// `Name` a dotted identifier (`ValueError`, `django.core.exceptions.X`).
fn is_exception_line(line: &str) -> bool {
    // Everything before the first `:` (the whole line when there is none).
    let name = line.split(':').next().unwrap_or("");
    name.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_')
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '.')
}

/// Whether a line of tool output reports an error (traceback, exception,
/// failed test, compiler error).
pub fn is_error_line(line: &str) -> bool {
    let t = line.trim();
    if t.is_empty() || t.len() > 2_000 {
        return false;
    }
    if t.starts_with("Traceback (most recent call last)")
        || t.starts_with("FAILED")
        || t.starts_with("FAIL:")
        || t.starts_with("ERROR")
        || t.starts_with("error:")
        || t.starts_with("error[")
        || t.starts_with("E  ")
        || t.starts_with("panicked at")
    {
        return true;
    }
    // A verbose pytest line: `tests/t.py::test_a FAILED [ 50%]`.
    if t.contains("::") && (t.contains(" FAILED") || t.contains(" ERROR")) {
        return true;
    }
    names_exception(t)
}

/// The id of the failing test a line reports, as the evaluation reads it
/// (`bench/fidelity.mjs` `failingTests`): pytest's `FAILED a::b`, `ERROR a::b`
/// and `a::b FAILED` give `a::b`; unittest's `FAIL: test_x (mod.Class)` and
/// `ERROR: …` give `test_x (mod.Class)`.
pub fn failing_test_id(line: &str) -> Option<&str> {
    let id_end = |s: &str| s.find(char::is_whitespace).unwrap_or(s.len());
    for opening in ["FAILED ", "ERROR "] {
        if let Some(rest) = line.strip_prefix(opening) {
            let id = rest.get(..id_end(rest)).unwrap_or("");
            if is_pytest_id(id) {
                return Some(id);
            }
        }
    }
    let first = line.get(..id_end(line)).unwrap_or("");
    if is_pytest_id(first) {
        let word = line.get(first.len()..).and_then(|r| r.strip_prefix(' '));
        let ends = |w: &str| {
            word.and_then(|r| r.strip_prefix(w))
                .is_some_and(|r| !r.starts_with(|c: char| c.is_ascii_alphanumeric() || c == '_'))
        };
        if ends("FAILED") || ends("ERROR") {
            return Some(first);
        }
    }
    let rest = line
        .strip_prefix("FAIL: ")
        .or_else(|| line.strip_prefix("ERROR: "))?;
    // `test_x (mod.Class)`: a word, one space, a parenthesized dotted name.
    let name = rest.get(..rest.find(' ')?)?;
    let class = rest.get(name.len() + 1..)?.strip_prefix('(')?;
    let class = class.get(..class.find(')')?)?;
    let word = |s: &str, extra: char| {
        !s.is_empty()
            && s.chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == extra)
    };
    (word(name, '_') && word(class, '.')).then(|| rest.get(..name.len() + class.len() + 3))?
}

/// Whether `token` is a pytest node id: non-space text around a `::`.
fn is_pytest_id(token: &str) -> bool {
    token
        .split_once("::")
        .is_some_and(|(a, b)| !a.is_empty() && !b.is_empty())
}

/// `SomeError: message`, `pkg.mod.SomeException: message`, or the bare name.
fn names_exception(t: &str) -> bool {
    let head = t.split(':').next().unwrap_or("");
    // The suffix first: it rejects almost every line without a scan.
    let named = |h: &str| {
        (h.ends_with("Error") || h.ends_with("Exception")) && !h.contains(char::is_whitespace)
    };
    (head.len() < t.len() && named(head)) || named(t)
}

/// Bytes of critical lines repeated beside one hidden output (about 400
/// tokens): room for every error and failing test of almost any output.
pub const CRITICAL_BYTES: usize = 1_600;

/// Longest critical line kept whole; longer ones are cut with `…`.
pub const CRITICAL_LINE_BYTES: usize = 400;

/// The critical lines of an output and how many did not fit.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Critical {
    /// The lines kept, in output order.
    pub lines: Vec<String>,
    /// Critical lines left out for the byte budget.
    pub omitted: usize,
}

impl Critical {
    /// The note to print after the kept lines when some were left out.
    pub fn omitted_note(&self) -> Option<String> {
        (self.omitted > 0).then(|| {
            format!(
                "(+{} more critical line{} in the full text)",
                self.omitted,
                if self.omitted == 1 { "" } else { "s" }
            )
        })
    }
}

/// The lines of an output a reader must not lose: the last line of each
/// traceback, error lines (`…Error: …`, `FAILED …`, `FAIL: …`, `error: …`,
/// a bare exception name), the critical lines a spill excerpt lists from its
/// hidden middle ([`listed_critical`]) and the exit code when it is not 0. Each is kept
/// verbatim (trimmed; cut past [`CRITICAL_LINE_BYTES`]), once. Within
/// `max_bytes`, the newest are kept, pytest's `E  ` detail lines only after
/// every other kind.
pub fn critical_lines(output: &str, max_bytes: usize) -> Critical {
    // (line, primary); each line once (a set: an output may hold
    // many thousands of error lines).
    let mut found: Vec<(String, bool)> = Vec::new();
    let mut seen: std::collections::HashSet<String> = std::collections::HashSet::new();
    let mut push = |line: &str, primary: bool| {
        let t = crate::text::clip(line.trim(), CRITICAL_LINE_BYTES);
        if !t.is_empty() && seen.insert(t.clone()) {
            found.push((t, primary));
        }
    };
    let mut in_traceback = false;
    for line in output.lines() {
        let t = line.trim_end();
        if t.starts_with("Traceback (most recent call last)") {
            in_traceback = true;
            continue;
        }
        if in_traceback {
            // Frames are indented; a harness's truncation markup
            // (`</output_head>`, `N characters elided`) is no exception line.
            if t.is_empty() || t.starts_with(char::is_whitespace) || !is_exception_line(t) {
                continue;
            }
            in_traceback = false;
            push(t, true);
            continue;
        }
        if let Some(listed) = listed_critical(t) {
            // Listed from a hidden middle (a spill excerpt): critical already.
            push(listed, !is_detail_line(listed));
        } else if is_error_line(t) {
            push(t, !is_detail_line(t));
        }
    }
    if let Some(code) = exit_code(output).filter(|c| *c != 0) {
        push(&format!("exit code {code}"), true);
    }
    let (kept, omitted) = fit_newest(found, max_bytes, |(l, p)| (l.len(), *p));
    let lines = kept.into_iter().map(|(l, _)| l).collect();
    Critical { lines, omitted }
}

/// The `items` (in output order) that fit in `max_bytes` by [`keep_newest`],
/// `measure` giving each one's `(bytes, primary)`, and how many did not.
pub fn fit_newest<T>(
    items: Vec<T>,
    max_bytes: usize,
    measure: impl Fn(&T) -> (usize, bool),
) -> (Vec<T>, usize) {
    let sizes: Vec<(usize, bool)> = items.iter().map(measure).collect();
    let fits = keep_newest(&sizes, max_bytes);
    let omitted = fits.iter().filter(|f| !**f).count();
    let kept = items
        .into_iter()
        .zip(fits)
        .filter_map(|(x, f)| f.then_some(x))
        .collect();
    (kept, omitted)
}

/// Opening of a critical line in a listing of hidden lines (a spill
/// excerpt's hidden middle): `! <line number>: <text>`.
pub const LISTED_CRITICAL: &str = "! ";

/// The text of a listed critical line (`! 154: text`), if `line` is one.
pub fn listed_critical(line: &str) -> Option<&str> {
    let (number, text) = line.strip_prefix(LISTED_CRITICAL)?.split_once(": ")?;
    (!number.is_empty() && number.bytes().all(|b| b.is_ascii_digit())).then_some(text)
}

/// Whether a critical line is pytest's `E  ` detail (the assertion's
/// operands, not the exception): kept only after every other kind.
pub fn is_detail_line(line: &str) -> bool {
    line.trim_start()
        .strip_prefix("E ")
        .is_some_and(|rest| !names_exception(rest.trim()))
}

/// Which of `items` (`(bytes, primary)`, in output order) fit in
/// `max_bytes`, each costing its bytes plus a newline: the newest first,
/// every primary item before any other.
pub fn keep_newest(items: &[(usize, bool)], max_bytes: usize) -> Vec<bool> {
    let mut keep = vec![false; items.len()];
    let mut used = 0;
    for primary in [true, false] {
        for (k, &(bytes, p)) in keep.iter_mut().zip(items).rev() {
            if p == primary && used + bytes < max_bytes {
                used += bytes + 1;
                *k = true;
            }
        }
    }
    keep
}

/// The last exit code the output reports (`<returncode>N</returncode>`,
/// `[Command finished with exit code N]`, `exit code N`, `Exit code: N`).
pub fn exit_code(output: &str) -> Option<i64> {
    const MARKERS: [&[u8]; 4] = [
        b"<returncode>",
        b"exit code ",
        b"exit code: ",
        b"exit status ",
    ];
    let bytes = output.as_bytes();
    // The last marker (ASCII case ignored) followed by a number: searched
    // from the end, in one pass without a lowercased copy.
    let mut end = bytes.len();
    while let Some(start) = memchr::memrchr3(b'<', b'e', b'E', bytes.get(..end)?) {
        end = start;
        let rest = bytes.get(start..).unwrap_or(&[]);
        for marker in MARKERS {
            let Some(after) = rest
                .get(..marker.len())
                .filter(|head| head.eq_ignore_ascii_case(marker))
                .and_then(|_| rest.get(marker.len()..))
            else {
                continue;
            };
            let digits = after
                .iter()
                .position(|b| !(b.is_ascii_digit() || *b == b'-'))
                .map_or(after, |n| after.get(..n).unwrap_or(&[]));
            if let Some(n) = std::str::from_utf8(digits)
                .ok()
                .and_then(|d| d.parse::<i64>().ok())
            {
                return Some(n);
            }
        }
    }
    None
}

/// What a test or run output says: a test summary first, then the exit code,
/// then error lines.
pub fn outcome(output: &str, exit: Option<i64>) -> Outcome {
    let mut summary = None;
    for line in output.lines().rev().take(400) {
        let t = line.trim().trim_matches('=').trim();
        let l = t.to_ascii_lowercase();
        if (l.contains(" failed") || l.contains(" error")) && l.contains(" in ")
            || l.starts_with("failed (")
            || l.starts_with("failed") && (l.contains("failures=") || l.contains("errors="))
        {
            summary = Some(Outcome::Failed);
            break;
        }
        if (l.contains(" passed") && l.contains(" in ")) || l == "ok" || l.starts_with("ok (") {
            summary = Some(Outcome::Passed);
            break;
        }
    }
    let errors = output.lines().any(is_error_line);
    match (summary, exit) {
        (Some(Outcome::Failed), _) => Outcome::Failed,
        (Some(_), Some(code)) if code != 0 => Outcome::Failed,
        (Some(s), _) => s,
        (None, Some(0)) if !errors => Outcome::Passed,
        (None, Some(_)) => Outcome::Failed,
        (None, None) if errors => Outcome::Failed,
        (None, None) => Outcome::Unknown,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keep_newest_fills_newest_first_primary_before_details() {
        // 10 bytes each (+1 newline): room for three of them in 34 bytes.
        let items = [(10, true), (10, false), (10, true), (10, true), (10, false)];
        assert_eq!(
            keep_newest(&items, 34),
            [true, false, true, true, false],
            "every primary item before any detail"
        );
        assert_eq!(keep_newest(&items, 12), [false, false, false, true, false]);
        // A smaller older item still fits after a larger one did not.
        assert_eq!(keep_newest(&[(3, true), (30, true)], 10), [true, false]);
        assert!(keep_newest(&[], 100).is_empty());
    }

    #[test]
    fn test_outcomes() {
        let t = |cmd: &str, out: &str| check(cmd, out).unwrap();
        let c = t(
            "python -m pytest tests/x.py -q",
            "..\n==== 2 passed in 0.1s ====\n",
        );
        assert_eq!((c.kind, c.outcome), (CheckKind::Test, Outcome::Passed));
        let c = t("pytest", "F.\n=== 1 failed, 1 passed in 0.2s ===");
        assert_eq!(c.outcome, Outcome::Failed);
        let c = t(
            "./tests/runtests.py delete",
            "<returncode>1</returncode>\nFAILED (failures=1)",
        );
        assert_eq!(c.outcome, Outcome::Failed);
        let c = t(
            "cd /w && python reproduce.py",
            "Error: near \"OVER\": syntax error\n[Command finished with exit code 0]",
        );
        assert_eq!(
            c.outcome,
            Outcome::Failed,
            "an error line beats exit code 0"
        );
        let c = t(
            "python reproduce.py",
            "Traceback (most recent call last):\nValueError: x\n[Command finished with exit code 0]",
        );
        assert_eq!(c.outcome, Outcome::Failed);
        assert!(check("ls -la", "").is_none());
        assert!(check("cat tests/test_x.py", "").is_none());
    }

    #[test]
    fn critical_lines_keep_errors_and_exit_codes() {
        let out = "ok\nTraceback (most recent call last):\n  File \"a.py\", line 2\n    x()\nNameError: name 'x' is not defined\nFAILED tests/t.py::test_a - assert 1\n<returncode>1</returncode>";
        let all = critical_lines(out, CRITICAL_BYTES);
        assert_eq!(
            all.lines,
            vec![
                "NameError: name 'x' is not defined",
                "FAILED tests/t.py::test_a - assert 1",
                "exit code 1"
            ]
        );
        assert_eq!(all.omitted, 0);
        let one = critical_lines(out, 20);
        assert_eq!(one.lines, vec!["exit code 1"]);
        assert_eq!(one.omitted, 2);
        assert_eq!(
            one.omitted_note().as_deref(),
            Some("(+2 more critical lines in the full text)")
        );
        assert!(critical_lines("all good\n<returncode>0</returncode>", 100)
            .lines
            .is_empty());
    }

    #[test]
    fn a_truncated_traceback_ends_at_its_exception_line() {
        let out = "Traceback (most recent call last):\n  File \"a.py\", line 2, in f\n</output_head>\n\
            <elided_chars>\n2547 characters elided\n</elided_chars>\n<output_tail>\n    raise E\n\
            django.core.exceptions.ImproperlyConfigured: settings are not configured\n</output_tail>";
        let all = critical_lines(out, CRITICAL_BYTES);
        assert_eq!(
            all.lines,
            vec!["django.core.exceptions.ImproperlyConfigured: settings are not configured"]
        );
        assert!(is_exception_line("KeyboardInterrupt"));
        assert!(!is_exception_line("2547 characters elided"));
        assert!(!is_exception_line("FAILED tests/t.py::test_a - assert 1"));
    }

    #[test]
    fn failing_test_ids_read_like_the_evaluation() {
        let id = failing_test_id;
        assert_eq!(
            id("FAILED tests/t.py::test_a - assert 1"),
            Some("tests/t.py::test_a")
        );
        assert_eq!(
            id("ERROR tests/t.py::T::test_b"),
            Some("tests/t.py::T::test_b")
        );
        assert_eq!(
            id("tests/t.py::test_c[x-1] FAILED [ 50%]"),
            Some("tests/t.py::test_c[x-1]")
        );
        assert_eq!(id("tests/t.py::test_d ERROR"), Some("tests/t.py::test_d"));
        assert_eq!(
            id("FAIL: test_e (app.tests.T)"),
            Some("test_e (app.tests.T)")
        );
        assert_eq!(
            id("ERROR: test_f (app.tests.T) extra"),
            Some("test_f (app.tests.T)")
        );
        for line in [
            "tests/t.py::test_g PASSED",
            "tests/t.py::test_h FAILEDX",
            "tests/t.py::test_i  FAILED",
            "  FAILED tests/t.py::test_j",
            "FAILED (failures=2)",
            "FAIL: test_k",
            "ERROR: test_l (app tests)",
            "FAILED ::x",
        ] {
            assert_eq!(id(line), None, "{line}");
        }
        // Every failing test line is a critical (error) line.
        for line in [
            "FAILED a::b",
            "a::b FAILED",
            "FAIL: t (m.C)",
            "ERROR: t (m.C)",
        ] {
            assert!(is_error_line(line), "{line}");
        }
    }

    #[test]
    fn critical_lines_cover_every_runner_and_stay_verbatim() {
        let out = "FAIL: test_a (app.tests.T)\nERROR: test_b (app.tests.T)\n\
            tests/t.py::test_c FAILED [ 50%]\n\
            E               NotImplementedError\n\
            E       assert 1 == 2\nNotImplementedError\n";
        let c = critical_lines(out, CRITICAL_BYTES);
        assert_eq!(
            c.lines,
            vec![
                "FAIL: test_a (app.tests.T)",
                "ERROR: test_b (app.tests.T)",
                "tests/t.py::test_c FAILED [ 50%]",
                // Inner spacing kept: the line as the output shows it.
                "E               NotImplementedError",
                "E       assert 1 == 2",
                "NotImplementedError",
            ]
        );
        // Over the budget, pytest's detail lines go first.
        let tight = critical_lines(out, 130);
        assert!(!tight.lines.iter().any(|l| l.contains("assert 1 == 2")));
        assert!(tight.lines.contains(&"NotImplementedError".to_string()));
        assert!(tight.omitted >= 1);
    }

    /// The first implementation (four searches of a lowercased copy): the
    /// one-pass search must agree with it.
    fn exit_code_reference(output: &str) -> Option<i64> {
        let lower = output.to_ascii_lowercase();
        let mut best: Option<(usize, i64)> = None;
        for marker in ["<returncode>", "exit code ", "exit code: ", "exit status "] {
            let mut from = 0;
            while let Some(i) = lower.get(from..).and_then(|s| s.find(marker)) {
                let at = from + i + marker.len();
                let digits: String = lower
                    .get(at..)
                    .unwrap_or("")
                    .chars()
                    .take_while(|c| c.is_ascii_digit() || *c == '-')
                    .collect();
                if let Ok(n) = digits.parse::<i64>() {
                    if best.map_or(true, |(pos, _)| at > pos) {
                        best = Some((at, n));
                    }
                }
                from = at;
            }
        }
        best.map(|(_, n)| n)
    }

    #[test]
    fn exit_code_agrees_with_the_reference() {
        let pieces = [
            "<returncode>",
            "<ReturnCode>",
            "exit code ",
            "Exit Code: ",
            "EXIT STATUS ",
            "exit code",
            "exit ",
            "0",
            "17",
            "-3",
            "-",
            "1-2",
            "99999999999999999999",
            "\n",
            " ",
            "é",
            "e",
            "<",
            "</returncode>",
            "x",
        ];
        // Every sequence of up to 4 pieces, and longer ones by a fixed LCG.
        let mut cases: Vec<String> = vec![String::new()];
        for _ in 0..3 {
            let mut next = Vec::new();
            for c in &cases {
                for p in pieces {
                    next.push(format!("{c}{p}"));
                }
            }
            cases.extend(next.into_iter().filter(|c| c.len() < 40));
            cases.dedup();
        }
        let mut seed: u64 = 7;
        for _ in 0..2000 {
            let mut c = String::new();
            for _ in 0..12 {
                seed = seed
                    .wrapping_mul(6364136223846793005)
                    .wrapping_add(1442695040888963407);
                c.push_str(pieces[(seed >> 33) as usize % pieces.len()]);
            }
            cases.push(c);
        }
        for c in &cases {
            assert_eq!(exit_code(c), exit_code_reference(c), "{c:?}");
        }
    }

    #[test]
    fn exit_codes() {
        assert_eq!(exit_code("<returncode>2</returncode>\nx"), Some(2));
        assert_eq!(
            exit_code(
                "[The command completed with exit code 1.]\n[Command finished with exit code 1]"
            ),
            Some(1)
        );
        assert_eq!(exit_code("nothing"), None);
    }
}
