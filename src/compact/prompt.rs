//! The summarization prompt handed to a host's LLM summarizer: the
//! five-section template, the archived constraints, the previous summary to
//! merge into, and the compacted history with tool outputs reduced to
//! head/tail/error lines and where each message's original is (the
//! compaction's `spill://` blob and its lines).

use super::extractive::Range;
use super::summary::SECTIONS;
use super::text::{clip, reduce_output};
use crate::model::{PartKind, Role};

/// Builds the prompt.
/// `max_tokens` bounds the summary (`compact.summaryShare` of the budget); a
/// longer answer loses its oldest lines when adopted.
pub fn build(
    range: &Range<'_>,
    constraints: &[String],
    previous: Option<&str>,
    max_tokens: u64,
) -> String {
    let mut out = String::from(
        "You are compacting the history of a software agent so it can keep working with a smaller context.\n\
         Write a summary with exactly these five sections, each a markdown heading followed by a non-empty body:\n",
    );
    for name in SECTIONS {
        out.push_str("## ");
        out.push_str(name);
        out.push('\n');
    }
    out.push_str(
        "Goal: the task. Progress: files edited and tests run, with outcomes. Key facts: file paths, \
         symbols, error messages (exact), commands and exit codes. Decisions: what was decided and why. \
         Next steps: what the agent should do next.\n\
         Copy paths, symbols, errors and commands exactly. After each fact, cite the spill:// pointer of \
         the message it comes from. Output only the summary.\n",
    );
    out.push_str(&format!(
        "Keep the whole summary under {max_tokens} tokens (about {} words): the oldest Progress, Key facts \
         and Decisions lines go first, exact error messages last.\n",
        max_tokens * 3 / 4
    ));
    if !constraints.is_empty() {
        out.push_str(
            "\nThe user's constraints are archived word for word separately; do not restate them:\n<constraints>\n",
        );
        for c in constraints {
            out.push_str("- ");
            out.push_str(c);
            out.push('\n');
        }
        out.push_str("</constraints>\n");
    }
    if let Some(prev) = previous {
        out.push_str(
            "\nMerge into this previous summary: keep what is still true, extend Progress, Key facts and \
             Decisions, replace Next steps. Do not summarize it again.\n<previous_summary>\n",
        );
        out.push_str(prev);
        out.push_str("\n</previous_summary>\n");
    }
    out.push_str("\n<history>\n");
    for (i, m) in range.messages.iter().enumerate() {
        let role = match m.role {
            Role::Assistant => "assistant",
            Role::Tool => "tool",
            Role::User => "user",
            Role::System | Role::Developer => "system",
        };
        out.push_str(&format!(
            "### message {} ({role}) {}\n",
            range.first + i,
            range.cite(range.first + i)
        ));
        for part in &m.parts {
            match &part.kind {
                PartKind::Text { text } if m.role == Role::Tool => {
                    out.push_str(&reduce_output(text, 5, 5, 5));
                }
                PartKind::Text { text } => out.push_str(&clip(text, 2_000)),
                PartKind::ToolCall(c) => {
                    out.push_str(&format!("[call {}] {}", c.name, clip(&c.arguments, 600)));
                }
                PartKind::ToolResult(r) => out.push_str(&reduce_output(&r.text(), 5, 5, 5)),
                PartKind::Image(_) => out.push_str("[image]"),
                PartKind::Other { .. } => out.push_str("[other content]"),
            }
            out.push('\n');
        }
    }
    out.push_str("</history>\n");
    out
}
