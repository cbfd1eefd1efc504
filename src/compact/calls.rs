//! The tool-call log: every compacted tool call, its name and arguments
//! verbatim (but for secrets, masked like all text reaching the model when
//! `redact.enabled`), in order. Compaction replaces old turns by a summary, but tool
//! calls stay text: the log keeps what the agent ran, while the results stay
//! readable through the summary's pointers. A later compaction appends to the
//! log, so its earlier lines stay byte-identical — until the log outgrows
//! `compact.callLogShare` of the budget: then the oldest calls are folded
//! into one line citing the compaction's blob, which holds them verbatim
//! ([`CallLog::fold`]), so a session of any length stays inside the budget.

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

    /// Takes the oldest calls (a previous fold line first) out of the log
    /// until its `tokens(item)` sum, with room for a fold line, fits `cap`,
    /// keeping at least the newest call. Returns them, oldest first (none
    /// when the log fits); the caller keeps them and puts
    /// [`fold_line`](Self::fold_line) first.
    pub fn fold(
        &mut self,
        cap: u64,
        mut tokens: impl FnMut(&str) -> crate::error::Result<u64>,
    ) -> crate::error::Result<Vec<String>> {
        let mut sizes = Vec::with_capacity(self.items.len());
        for item in &self.items {
            sizes.push(tokens(item)?);
        }
        let mut total: u64 = sizes.iter().sum();
        if total <= cap {
            return Ok(Vec::new());
        }
        let room = cap.saturating_sub(FOLD_LINE_TOKENS);
        let mut n = 0;
        while total > room && self.items.len() - n > 1 {
            total = total.saturating_sub(sizes.get(n).copied().unwrap_or(0));
            n += 1;
        }
        Ok(self.items.drain(..n).collect())
    }

    /// The line standing for `folded` calls (counting those of a previous
    /// fold line among them), by tool, kept verbatim in `pointer`.
    pub fn fold_line(folded: &[String], pointer: &str) -> String {
        let mut count = 0usize;
        let mut by_tool: std::collections::BTreeMap<String, usize> = Default::default();
        for item in folded {
            match Fold::parse(item) {
                Some(previous) => {
                    count += previous.count;
                    for (tool, n) in previous.by_tool {
                        *by_tool.entry(tool).or_default() += n;
                    }
                }
                None => {
                    count += 1;
                    let tool = item.split(' ').next().unwrap_or("").to_string();
                    *by_tool.entry(tool).or_default() += 1;
                }
            }
        }
        Fold {
            count,
            by_tool: by_tool.into_iter().collect(),
        }
        .render(pointer)
    }

    /// Parses a rendered log (the inverse of [`render`](Self::render)).
    pub fn parse(text: &str) -> Option<Self> {
        parse_items(CALL_LOG_HEADER, text).map(|items| Self { items })
    }
}

/// Tokens kept free for the fold line.
const FOLD_LINE_TOKENS: u64 = 64;

/// Opening of the line that stands for folded calls.
const FOLD_OPENING: &str = "(folded: ";

/// What a fold line says: how many calls, by tool.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Fold {
    count: usize,
    by_tool: Vec<(String, usize)>,
}

impl Fold {
    /// `(folded: 52 earlier calls, bash 40, str_replace_editor 12; verbatim in <pointer>)`
    fn render(&self, pointer: &str) -> String {
        let tools: Vec<String> = self
            .by_tool
            .iter()
            .map(|(t, n)| format!(", {t} {n}"))
            .collect();
        format!(
            "{FOLD_OPENING}{} earlier calls{}; verbatim in {pointer})",
            self.count,
            tools.concat()
        )
    }

    fn parse(item: &str) -> Option<Self> {
        let rest = item.strip_prefix(FOLD_OPENING)?;
        let body = rest.get(..rest.rfind("; verbatim in ")?)?;
        let mut parts = body.split(", ");
        let count = parts.next()?.strip_suffix(" earlier calls")?.parse().ok()?;
        let by_tool = parts
            .map(|p| {
                let (t, n) = p.rsplit_once(' ')?;
                Some((t.to_string(), n.parse().ok()?))
            })
            .collect::<Option<Vec<_>>>()?;
        Some(Self { count, by_tool })
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

    #[test]
    fn fold_keeps_the_log_under_its_cap_and_counts_every_call() {
        let mut log = CallLog::default();
        for i in 0..30 {
            log.extend(&[call("bash", &format!("{{\"command\":\"cat f{i}.py\"}}"))]);
        }
        let words = |s: &str| Ok(s.len() as u64);
        // Under the cap: nothing folds.
        assert!(log.clone().fold(10_000, words).unwrap().is_empty());
        let folded = log.fold(300, words).unwrap();
        log.items
            .insert(0, CallLog::fold_line(&folded, "spill://s/a"));
        assert!(!folded.is_empty());
        assert_eq!(folded[0], r#"bash {"command":"cat f0.py"}"#);
        let total: u64 = log.items.iter().skip(1).map(|i| words(i).unwrap()).sum();
        assert!(total <= 300 - FOLD_LINE_TOKENS, "{total}");
        assert_eq!(
            log.items[0],
            format!(
                "(folded: {} earlier calls, bash {}; verbatim in spill://s/a)",
                folded.len(),
                folded.len()
            )
        );
        // A second fold counts the first one's calls too.
        let before = folded.len();
        log.extend(
            &(0..20)
                .map(|i| call("edit", &format!("{{\"path\":\"g{i}\"}}")))
                .collect::<Vec<_>>(),
        );
        let again = log.fold(300, words).unwrap();
        log.items
            .insert(0, CallLog::fold_line(&again, "spill://s/b"));
        assert!(again[0].starts_with("(folded: "));
        let fold = Fold::parse(&log.items[0]).unwrap();
        let newly = again.len() - 1;
        assert_eq!(fold.count, before + newly);
        assert_eq!(
            fold.by_tool.iter().map(|(_, n)| n).sum::<usize>(),
            fold.count
        );
        assert!(log.items[0].ends_with("spill://s/b)"));
        assert_eq!(CallLog::parse(&log.render()), Some(log));
    }
}
