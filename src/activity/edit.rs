//! [`EditDetector`]: which files a tool call writes, and how.

use serde::Serialize;
use serde_json::Value;

use super::edit_kind::EditKind;
use super::shell;
use crate::config::PhaseConfig;
use crate::model::{ToolCall, ToolResult};

/// Whether an edit makes a new file, replaces a file's text or changes it in place.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum EditMode {
    /// A new file (`str_replace_editor create`).
    Create,
    /// The whole text written (`cat > f`, `tee f`, `Write`): a new file
    /// unless the file was seen before (see [`super::read`]).
    Overwrite,
    /// A change to a file that must exist (`sed -i`, `str_replace`, patches).
    InPlace,
}

impl EditMode {
    /// The mode of a shell write of `kind`; a script writing a file it does
    /// not name literally is taken as a change in place.
    pub fn of_shell(kind: EditKind, named: bool) -> Self {
        match kind {
            EditKind::Redirect | EditKind::Heredoc | EditKind::Tee => Self::Overwrite,
            EditKind::PythonWrite if named => Self::Overwrite,
            _ => Self::InPlace,
        }
    }
}

/// An edit found in a tool call.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct EditAction {
    /// How it edits.
    pub kind: EditKind,
    /// Whether it creates, overwrites or changes in place.
    pub mode: EditMode,
    /// The file, when the call names it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub target: Option<String>,
}

/// Recognises edit actions: named edit tools and shell commands that write files.
#[derive(Debug, Clone, Copy)]
pub struct EditDetector<'a> {
    edit_tools: &'a [String],
    shell_tools: &'a [String],
}

impl<'a> EditDetector<'a> {
    /// A detector for the tools named in `config` (`phase.editTools`, `phase.shellTools`).
    pub fn new(config: &'a PhaseConfig) -> Self {
        Self {
            edit_tools: &config.edit_tools,
            shell_tools: &config.shell_tools,
        }
    }

    /// Whether `name` belongs to a file tool family named in `phase.editTools`
    /// (`str_replace_editor` for `str_replace_editor:create`).
    pub fn is_file_tool(&self, name: &str) -> bool {
        self.edit_tools
            .iter()
            .any(|t| t.split(':').next() == Some(name))
    }

    /// Whether `name` is a shell tool (`phase.shellTools`).
    pub fn is_shell_tool(&self, name: &str) -> bool {
        self.shell_tools.iter().any(|t| t == name)
    }

    /// The first edit `call` makes, if it makes one.
    pub fn classify(&self, call: &ToolCall) -> Option<EditAction> {
        self.edits(call).into_iter().next()
    }

    /// Every edit `call` makes, in order.
    pub fn edits(&self, call: &ToolCall) -> Vec<EditAction> {
        let args = call.arguments_json();
        let sub = args.get("command").and_then(Value::as_str);
        let named = self
            .edit_tools
            .iter()
            .any(|entry| match entry.split_once(':') {
                Some((name, command)) => name == call.name && sub == Some(command),
                None => *entry == call.name,
            });
        if named {
            let target = ["path", "file_path", "filename", "file", "target_file"]
                .iter()
                .find_map(|k| args.get(*k).and_then(Value::as_str))
                .map(String::from);
            let mode = match sub {
                Some("create") => EditMode::Create,
                _ if matches!(call.name.as_str(), "Write" | "write_file") => EditMode::Overwrite,
                _ => EditMode::InPlace,
            };
            return vec![EditAction {
                kind: EditKind::Tool,
                mode,
                target,
            }];
        }
        if !self.is_shell_tool(&call.name) {
            return Vec::new();
        }
        let Some(script) = shell_script(&call.arguments, &args) else {
            return Vec::new();
        };
        shell::find_writes(&script)
            .into_iter()
            .map(|w| EditAction {
                mode: EditMode::of_shell(w.kind, w.target.is_some()),
                kind: w.kind,
                target: w.target,
            })
            .collect()
    }
}

/// The script a shell tool runs: `command`/`cmd` as a string, the script of an
/// argv like `["bash", "-lc", script]`, or the raw arguments when they are not JSON.
pub fn shell_script(raw: &str, args: &Value) -> Option<String> {
    let field = match args {
        Value::Null => return Some(raw.to_string()),
        Value::String(s) => return Some(s.clone()),
        Value::Object(o) => o.get("command").or_else(|| o.get("cmd"))?,
        _ => return None,
    };
    match field {
        Value::String(s) => Some(s.clone()),
        Value::Array(items) => {
            let words: Vec<&str> = items.iter().filter_map(Value::as_str).collect();
            match words.as_slice() {
                [shell, flag, script] if is_shell(shell) && flag.ends_with('c') => {
                    Some((*script).to_string())
                }
                _ => Some(words.join(" ")),
            }
        }
        _ => None,
    }
}

fn is_shell(program: &str) -> bool {
    matches!(
        program.rsplit('/').next().unwrap_or(program),
        "bash" | "sh" | "zsh" | "dash"
    )
}

/// Phrases in the first part of a result showing that an edit did not happen.
const FAILURE_SIGNS: [&str; 10] = [
    "No replacement was performed",
    "sed: -e expression",
    "sed: can't read",
    "error: patch failed",
    "patch does not apply",
    "can't find file to patch",
    "syntax error near unexpected token",
    "unexpected EOF while looking for matching",
    "Permission denied",
    "No such file or directory",
];

/// Whether a result says the edit failed: `is_error`, an `ERROR:` opening
/// (OpenHands) or a known failure phrase in its first 2,000 bytes.
pub fn failed(result: &ToolResult) -> bool {
    if result.is_error {
        return true;
    }
    let text = result.text();
    let head = match text.char_indices().nth(2_000) {
        Some((i, _)) => text.get(..i).unwrap_or(&text),
        None => &text,
    };
    head.trim_start().starts_with("ERROR:") || FAILURE_SIGNS.iter().any(|s| head.contains(s))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::Part;

    fn call(name: &str, arguments: &str) -> ToolCall {
        ToolCall {
            id: "c".into(),
            name: name.into(),
            arguments: arguments.into(),
        }
    }

    #[test]
    fn named_tools_and_sub_commands() {
        let config = PhaseConfig::default();
        let d = EditDetector::new(&config);
        let edit = d.classify(&call(
            "str_replace_editor",
            r#"{"command":"str_replace","path":"/a.py","old_str":"x","new_str":"y"}"#,
        ));
        assert_eq!(
            edit,
            Some(EditAction {
                kind: EditKind::Tool,
                mode: EditMode::InPlace,
                target: Some("/a.py".into())
            })
        );
        assert_eq!(
            d.classify(&call(
                "str_replace_editor",
                r#"{"command":"view","path":"/a.py"}"#
            )),
            None
        );
        assert!(d
            .classify(&call("apply_patch", "*** Begin Patch"))
            .is_some());
        assert!(d.classify(&call("read_file", r#"{"path":"a"}"#)).is_none());
    }

    #[test]
    fn shell_tools_in_every_argument_shape() {
        let config = PhaseConfig::default();
        let d = EditDetector::new(&config);
        let kind = |name, args| d.classify(&call(name, args)).map(|e| e.kind);
        assert_eq!(
            kind("bash", r#"{"command":"sed -i 's/a/b/' f"}"#),
            Some(EditKind::SedInPlace)
        );
        assert_eq!(
            kind("shell", r#"{"command":["bash","-lc","echo x > f.txt"]}"#),
            Some(EditKind::Redirect)
        );
        assert_eq!(
            kind("exec_command", r#"{"cmd":"git apply p.diff"}"#),
            Some(EditKind::GitApply)
        );
        assert_eq!(
            kind("bash", "sed -i 's/a/b/' f"),
            Some(EditKind::SedInPlace)
        );
        assert_eq!(kind("bash", r#"{"command":"grep 'sed -i' f"}"#), None);
        assert_eq!(kind("python", r#"{"command":"sed -i 's/a/b/' f"}"#), None);
    }

    #[test]
    fn failure_signs() {
        let result = |text: &str, is_error| ToolResult {
            call_id: "c".into(),
            parts: vec![Part::text(text)],
            is_error,
        };
        assert!(failed(&result(
            "ERROR:\nNo replacement was performed",
            false
        )));
        assert!(failed(&result(
            "sed: -e expression #1, char 5: unterminated",
            false
        )));
        assert!(failed(&result("ok", true)));
        assert!(!failed(&result("The file /a.py has been edited.", false)));
        assert!(!failed(&result("", false)));
    }
}
