//! What a tool call did: edits (with the paths written), test and run
//! commands (with their outcome), the command line and exit code. Used by the
//! stage-boundary trigger and the extractive summarizer.

use serde_json::Value;

use super::text::{is_error_line, one_line};
use crate::model::{ToolCall, ToolResult};
use crate::phase::{shell, EditKind};

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

/// What one tool call did.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Activity {
    /// Paths written by the call.
    pub edits: Vec<String>,
    /// A test or run command, if the call was one.
    pub check: Option<Check>,
    /// The shell command (first line, clipped), or `tool(path)` for file tools.
    pub command: String,
    /// Exit code reported in the output.
    pub exit_code: Option<i64>,
    /// Path read by a file-viewing call.
    pub viewed: Option<String>,
}

/// Classifies a tool call and its result. `edit_tools` names file-editing tools
/// (their `command` argument, if any, says whether they view or edit).
pub fn classify(call: &ToolCall, result: Option<&ToolResult>, edit_tools: &[String]) -> Activity {
    let args = call.arguments_json();
    let output = result.map(ToolResult::text).unwrap_or_default();
    let mut activity = Activity {
        exit_code: exit_code(&output),
        ..Activity::default()
    };
    // Entries are `name` or `name:command` (see `PhaseConfig::edit_tools`): the
    // tool family is a file tool, and its `command` says view or edit.
    if edit_tools
        .iter()
        .any(|t| t.split(':').next() == Some(call.name.as_str()))
    {
        let sub = args.get("command").and_then(Value::as_str).unwrap_or("");
        let path = args
            .get("path")
            .or_else(|| args.get("file_path"))
            .or_else(|| args.get("file"))
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_string();
        activity.command = one_line(&format!("{} {sub} {path}", call.name), 200);
        let failed = output.trim_start().starts_with("ERROR");
        if matches!(sub, "view" | "read") {
            activity.viewed = Some(path).filter(|p| !p.is_empty());
        } else if !path.is_empty() && !failed && sub != "undo_edit" {
            activity.edits.push(path);
        }
        return activity;
    }
    let Some(command) = shell_command(&args) else {
        activity.command = call.name.clone();
        return activity;
    };
    let parsed = ShellCommand::parse(command);
    activity.command = one_line(parsed.lines.first().map_or("", |l| l), 200);
    activity.edits = written_paths(command);
    if let Some(kind) = parsed.check_kind() {
        activity.check = Some(Check {
            kind,
            command: one_line(&parsed.lines.join(" && "), 200),
            outcome: outcome(&output, activity.exit_code),
        });
    }
    activity
}

/// The shell command of a call: `command` / `cmd` / `script` argument, or the
/// arguments themselves when they are a plain string.
fn shell_command(args: &Value) -> Option<&str> {
    match args {
        Value::String(s) => Some(s),
        Value::Object(o) => ["command", "cmd", "script"]
            .iter()
            .find_map(|k| o.get(*k).and_then(Value::as_str)),
        _ => None,
    }
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

/// Paths the command writes, as the phase stage's shell reader finds them
/// (one detector for both stages); `patch` for `git apply`/`patch`, and a
/// placeholder for a script that writes a file it does not name literally.
fn written_paths(command: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for write in shell::find_writes(command) {
        let path = write.target.unwrap_or_else(|| match write.kind {
            EditKind::GitApply | EditKind::Patch => "patch".into(),
            EditKind::PythonWrite => "(file written by script)".into(),
            _ => String::new(),
        });
        if !path.is_empty() && !out.contains(&path) {
            out.push(path);
        }
    }
    out
}

/// The last exit code the output reports (`<returncode>N</returncode>`,
/// `[Command finished with exit code N]`, `exit code N`, `Exit code: N`).
pub fn exit_code(output: &str) -> Option<i64> {
    let lower_markers = ["<returncode>", "exit code ", "exit code: ", "exit status "];
    let lower = output.to_ascii_lowercase();
    let mut best: Option<(usize, i64)> = None;
    for marker in lower_markers {
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

    fn call(name: &str, args: Value) -> ToolCall {
        ToolCall {
            id: "c".into(),
            name: name.into(),
            arguments: args.to_string(),
        }
    }

    fn result(text: &str) -> ToolResult {
        ToolResult {
            call_id: "c".into(),
            parts: vec![crate::model::Part::text(text)],
            is_error: false,
        }
    }

    fn tools() -> Vec<String> {
        vec!["str_replace_editor".into()]
    }

    #[test]
    fn edits_by_tool_and_shell() {
        let a = classify(
            &call(
                "str_replace_editor",
                serde_json::json!({"command":"str_replace","path":"/w/a.py"}),
            ),
            Some(&result("The file /w/a.py has been edited.")),
            &tools(),
        );
        assert_eq!(a.edits, vec!["/w/a.py"]);
        let v = classify(
            &call(
                "str_replace_editor",
                serde_json::json!({"command":"view","path":"/w/a.py"}),
            ),
            None,
            &tools(),
        );
        assert!(v.edits.is_empty());
        assert_eq!(v.viewed.as_deref(), Some("/w/a.py"));
        let s = classify(
            &call(
                "bash",
                serde_json::json!({"command":"sed -i 's/a/b/' src/x.py"}),
            ),
            Some(&result("<returncode>0</returncode>")),
            &tools(),
        );
        assert_eq!(s.edits, vec!["src/x.py"]);
        let h = classify(
            &call(
                "bash",
                serde_json::json!({"command":"cat <<'EOF' > repro.py\nimport x\nEOF\npython3 repro.py"}),
            ),
            Some(&result(
                "<returncode>0</returncode>\n<output>\nok\n</output>",
            )),
            &tools(),
        );
        assert_eq!(h.edits, vec!["repro.py"]);
        let check = h.check.unwrap();
        assert_eq!(check.kind, CheckKind::Run);
        assert_eq!(check.outcome, Outcome::Passed);
        let p = classify(
            &call(
                "bash",
                serde_json::json!({"command":"python - <<'EOF'\nwith open('lib/m.py', 'w') as f:\n    f.write(s)\nEOF"}),
            ),
            None,
            &tools(),
        );
        assert_eq!(p.edits, vec!["lib/m.py"]);
        // The phase stage's shell reader decides: quoted text and output
        // captures are not edits; every write of a chain is listed.
        let edits = |cmd: &str| {
            classify(
                &call("bash", serde_json::json!({ "command": cmd })),
                None,
                &tools(),
            )
            .edits
        };
        assert!(edits("echo \"a > b\"").is_empty());
        assert!(edits("grep -n 'sed -i' notes.txt").is_empty());
        assert!(edits("pytest -x > log.txt 2>&1").is_empty());
        assert_eq!(
            edits("cd /w && sed -i 's/a/b/' x.py && echo ok > done.txt; git apply p.diff"),
            vec!["x.py", "done.txt", "patch"]
        );
    }

    #[test]
    fn test_outcomes() {
        let t = |cmd: &str, out: &str| {
            classify(
                &call("bash", serde_json::json!({ "command": cmd })),
                Some(&result(out)),
                &tools(),
            )
            .check
            .unwrap()
        };
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
        assert!(classify(
            &call("bash", serde_json::json!({"command":"ls -la"})),
            None,
            &tools()
        )
        .check
        .is_none());
        assert!(classify(
            &call("bash", serde_json::json!({"command":"cat tests/test_x.py"})),
            None,
            &tools()
        )
        .check
        .is_none());
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
