//! [`EditKind`]: how a call writes files, the vocabulary the shell reader
//! ([`super::shell`]) and the edit detector ([`super::edit`]) share.

use serde::Serialize;

/// How a call edits files.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum EditKind {
    /// A named edit tool (`phase.editTools`).
    Tool,
    /// `sed -i` (or `perl -i`).
    SedInPlace,
    /// `cat`/`echo`/`printf` redirected into a file.
    Redirect,
    /// A heredoc written into a file (`cat > f <<EOF`).
    Heredoc,
    /// `tee f`.
    Tee,
    /// `git apply` / `git am`.
    GitApply,
    /// `patch`.
    Patch,
    /// Python `open(…, 'w')`, `write_text`, `fileinput` in place.
    PythonWrite,
}

impl EditKind {
    /// The kebab-case name used in notes and reports.
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::Tool => "tool",
            Self::SedInPlace => "sed-in-place",
            Self::Redirect => "redirect",
            Self::Heredoc => "heredoc",
            Self::Tee => "tee",
            Self::GitApply => "git-apply",
            Self::Patch => "patch",
            Self::PythonWrite => "python-write",
        }
    }
}
