//! The tool-call log: every compacted tool call, its name and arguments
//! verbatim (but for secrets, masked like all text reaching the model when
//! `redact.enabled`), in order. Compaction replaces old turns by a summary, but tool
//! calls stay text: the log keeps what the agent ran, while the results stay
//! readable through the summary's pointers. A later compaction appends to the
//! log, so its earlier lines stay byte-identical.

use super::constraints::{parse_items, render_items};
use crate::model::{Message, PartKind};

/// First line of the tool-call log message.
pub const CALL_LOG_HEADER: &str =
    "[TraceLite tool-call log: every compacted tool call in order, name and arguments verbatim, secrets masked; results through the summary's originals]";

/// The compacted tool calls, oldest first, each as `name arguments`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CallLog {
    /// One entry per tool call.
    pub items: Vec<String>,
}

impl CallLog {
    /// Appends the tool calls of `messages`, in order.
    pub fn extend(&mut self, messages: &[Message]) {
        for m in messages {
            for p in &m.parts {
                if let PartKind::ToolCall(c) = &p.kind {
                    self.items.push(format!("{} {}", c.name, c.arguments));
                }
            }
        }
    }

    /// The log message text: the header, then one `- ` line per call
    /// (further lines of multi-line arguments indented by two spaces).
    pub fn render(&self) -> String {
        render_items(CALL_LOG_HEADER, &self.items)
    }

    /// Parses a rendered log (the inverse of [`render`](Self::render)).
    pub fn parse(text: &str) -> Option<Self> {
        parse_items(CALL_LOG_HEADER, text).map(|items| Self { items })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{Role, ToolCall};

    fn call(name: &str, arguments: &str) -> Message {
        let mut m = Message::text(Role::Assistant, "");
        m.parts = vec![PartKind::ToolCall(ToolCall {
            id: "c".into(),
            name: name.into(),
            arguments: arguments.into(),
        })
        .into()];
        m
    }

    #[test]
    fn render_and_parse_are_inverse_even_for_multi_line_arguments() {
        let mut log = CallLog::default();
        log.extend(&[
            call("bash", r#"{"command":"ls -la"}"#),
            call(
                "apply_patch",
                "*** Begin Patch\n- old\n  kept\r\n\n*** End Patch",
            ),
            call("noop", ""),
        ]);
        assert_eq!(log.items.len(), 3);
        let text = log.render();
        assert!(text.contains(r#"- bash {"command":"ls -la"}"#), "{text}");
        assert_eq!(CallLog::parse(&text), Some(log));
        assert_eq!(CallLog::parse("something else"), None);
    }
}
