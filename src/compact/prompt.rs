//! The summarization prompt handed to a host's LLM summarizer: the
//! five-section template, the archived constraints, the previous summary to
//! merge into, and the compacted history with tool outputs reduced to
//! head/tail/error lines and where each message's original is (the
//! compaction's `spill://` blob and its lines).

use super::extractive::Range;
use super::summary::SECTIONS;
use crate::activity::check::is_error_line;
use crate::model::{PartKind, Role};
use crate::text::clip;

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

/// A tool output reduced to its first `head` lines, its last `tail` lines and
/// up to `errors` error lines in between, with a count of what was left out.
fn reduce_output(text: &str, head: usize, tail: usize, errors: usize) -> String {
    let lines: Vec<&str> = text.lines().collect();
    if lines.len() <= head + tail + errors {
        return lines
            .iter()
            .map(|l| clip(l, 300))
            .collect::<Vec<_>>()
            .join("\n");
    }
    let mut out: Vec<String> = lines.iter().take(head).map(|l| clip(l, 300)).collect();
    let middle_end = lines.len() - tail;
    let found: Vec<&str> = lines
        .get(head..middle_end)
        .unwrap_or(&[])
        .iter()
        .copied()
        .filter(|l| is_error_line(l))
        .collect();
    let shown: Vec<&str> = found.iter().rev().take(errors).rev().copied().collect();
    let omitted = middle_end - head - shown.len();
    out.push(format!("[… {omitted} lines omitted …]"));
    out.extend(shown.iter().map(|l| clip(l, 300)));
    out.extend(
        lines
            .get(middle_end..)
            .unwrap_or(&[])
            .iter()
            .map(|l| clip(l, 300)),
    );
    out.join("\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reduce_keeps_head_tail_and_errors() {
        let mut text = String::new();
        for i in 0..100 {
            text.push_str(&format!("line {i}\n"));
            if i == 50 {
                text.push_str("ValueError: bad value\n");
            }
        }
        let r = reduce_output(&text, 3, 3, 2);
        assert!(r.contains("line 0") && r.contains("line 99"));
        assert!(r.contains("ValueError: bad value"));
        assert!(!r.contains("line 40"));
        assert!(r.contains("lines omitted"));
    }

    #[test]
    fn error_lines() {
        assert!(is_error_line(
            "django.db.utils.OperationalError: no such table"
        ));
        assert!(is_error_line("Traceback (most recent call last):"));
        assert!(!is_error_line("An Error occurred somewhere: maybe"));
        assert!(!is_error_line("hello"));
    }
}
