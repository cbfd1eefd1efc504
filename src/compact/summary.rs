//! The five-section summary: Goal · Progress · Key facts · Decisions · Next
//! steps. Rendering, parsing (also of an LLM's free-form markdown), validation
//! and merging with a previous summary.

use std::collections::HashSet;

use crate::activity::check::{fit_newest, is_detail_line};

/// First characters of every summary message.
pub const SUMMARY_MARK: &str = "[TraceLite summary";

/// The section names, in order.
pub const SECTIONS: [&str; 5] = ["Goal", "Progress", "Key facts", "Decisions", "Next steps"];

/// Most lines kept per section when merging (the newest win; older ones stay
/// readable in the previous summary's spilled original).
pub const MAX_LINES: usize = 40;

/// A summary: for each of [`SECTIONS`], its body lines.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Summary {
    /// Body lines of Goal, Progress, Key facts, Decisions, Next steps.
    pub sections: [Vec<String>; 5],
}

impl Summary {
    /// Renders the summary message: `header` on the first line, then each
    /// section as a `## Name` heading followed by its lines.
    pub fn render(&self, header: &str) -> String {
        let mut out = String::from(header);
        for (name, lines) in SECTIONS.iter().zip(&self.sections) {
            out.push_str("\n## ");
            out.push_str(name);
            for line in lines {
                out.push('\n');
                out.push_str(line);
            }
        }
        out
    }

    /// Parses a summary from markdown-ish text: headings may be `## Goal`,
    /// `**Goal**`, `Goal:` (with the body on the same line) or `1. Goal`.
    /// Errors name what is missing, empty or repeated.
    pub fn parse(text: &str) -> Result<Self, String> {
        let mut sections: [Option<Vec<String>>; 5] = Default::default();
        let mut current: Option<usize> = None;
        for line in text.lines() {
            if let Some((k, inline)) = heading(line) {
                let name = SECTIONS.get(k).copied().unwrap_or("?");
                let Some(slot) = sections.get_mut(k) else {
                    continue;
                };
                if slot.is_some() {
                    return Err(format!("section \"{name}\" appears twice"));
                }
                let mut body = Vec::new();
                if !inline.is_empty() {
                    body.push(inline.to_string());
                }
                *slot = Some(body);
                current = Some(k);
                continue;
            }
            if let Some(body) = current
                .and_then(|k| sections.get_mut(k))
                .and_then(Option::as_mut)
            {
                let l = line.trim_end();
                if !l.trim().is_empty() {
                    body.push(l.to_string());
                }
            }
        }
        let mut missing = Vec::new();
        let mut empty = Vec::new();
        for (s, name) in sections.iter().zip(SECTIONS) {
            match s {
                None => missing.push(name),
                Some(b) if b.is_empty() => empty.push(name),
                _ => {}
            }
        }
        if !missing.is_empty() || !empty.is_empty() {
            let mut msg = String::new();
            if !missing.is_empty() {
                msg.push_str(&format!("missing section(s): {}", missing.join(", ")));
            }
            if !empty.is_empty() {
                if !msg.is_empty() {
                    msg.push_str("; ");
                }
                msg.push_str(&format!("empty section(s): {}", empty.join(", ")));
            }
            return Err(msg);
        }
        Ok(Self {
            sections: sections.map(Option::unwrap_or_default),
        })
    }

    /// Merges a newer summary into this one: the goal stays (unless empty),
    /// progress, key facts and decisions are appended without duplicates
    /// (keeping the newest [`MAX_LINES`]; the critical lines key facts quote
    /// are kept apart, see [`keep_errors`]), next steps are replaced.
    pub fn merge(&self, newer: &Summary) -> Summary {
        let mut out = self.clone();
        if out.sections[0].is_empty() {
            out.sections[0] = newer.sections[0].clone();
        }
        // Progress, key facts and decisions (sections 1..4) accumulate.
        for (k, (mine, theirs)) in out
            .sections
            .iter_mut()
            .zip(&newer.sections)
            .enumerate()
            .skip(1)
            .take(3)
        {
            for line in theirs {
                if !mine.contains(line) {
                    mine.push(line.clone());
                }
            }
            // Errors lead the key facts, bounded in bytes; of the other
            // lines, the oldest go past MAX_LINES.
            let errors = if k == KEY_FACTS { keep_errors(mine) } else { 0 };
            let others = mine.len() - errors;
            if others > MAX_LINES {
                mine.drain(errors..errors + others - MAX_LINES);
            }
        }
        if !newer.sections[4].is_empty() {
            out.sections[4] = newer.sections[4].clone();
        }
        out
    }

    /// Drops the oldest lines of Progress, Key facts and Decisions (the
    /// largest section first; the key facts quoting critical lines, already
    /// bounded by [`SUMMARY_CRITICAL_BYTES`], last) until the rendered summary
    /// (`header` included) is within `cap` tokens, keeping room for the line
    /// that says so. Returns how many lines went; `note(n)` is that line, put
    /// at the end of Progress. What goes stays readable where the caller's
    /// note points (the previous summary, kept in the compaction's blob), so
    /// a summary merged over any number of compactions stays bounded.
    pub fn fit(
        &mut self,
        header: &str,
        cap: u64,
        mut tokens: impl FnMut(&str) -> crate::error::Result<u64>,
        note: impl Fn(usize) -> String,
    ) -> crate::error::Result<usize> {
        // A line counted alone (its newline not at all): what dropping it
        // saves is not overestimated.
        let mut total = tokens(&self.render(header))?;
        if total <= cap {
            return Ok(0);
        }
        let room = cap.saturating_sub(tokens(&note(usize::MAX))? + 1);
        // Per droppable section (Progress, Key facts, Decisions): the order
        // its lines go in, oldest first, and in Key facts the critical lines
        // (bounded already) only after the others, the last listed first.
        let mut queues: Vec<Queue> = Vec::with_capacity(3);
        for (k, lines) in self.sections.iter().enumerate().skip(1).take(3) {
            let mut others = Vec::new();
            let mut errors = Vec::new();
            for (i, line) in lines.iter().enumerate() {
                let critical = k == KEY_FACTS && error_fact(line).is_some();
                let item = (i, tokens(line)?, critical);
                if critical {
                    errors.push(item);
                } else {
                    others.push(item);
                }
            }
            others.extend(errors.into_iter().rev());
            queues.push(Queue {
                section: k,
                items: others,
                next: 0,
            });
        }
        let mut dropped = 0;
        while total > room {
            // The section with the most tokens left loses its next line, a
            // critical line only when no other line is left.
            let Some(q) = queues
                .iter_mut()
                .filter(|q| q.next < q.items.len())
                .max_by_key(|q| (!q.next_is_critical(), q.left()))
            else {
                break;
            };
            total = total.saturating_sub(q.items.get(q.next).map_or(0, |it| it.1));
            q.next += 1;
            dropped += 1;
        }
        for q in &queues {
            let mut gone: Vec<usize> = q.items.iter().take(q.next).map(|it| it.0).collect();
            gone.sort_unstable();
            if let Some(lines) = self.sections.get_mut(q.section) {
                let mut i = 0;
                lines.retain(|_| {
                    i += 1;
                    gone.binary_search(&(i - 1)).is_err()
                });
            }
        }
        if dropped > 0 {
            self.sections[1].push(note(dropped));
        }
        Ok(dropped)
    }
}

/// The lines of one section [`Summary::fit`] may drop, in the order they go:
/// (index in the section, tokens, quotes a critical line).
struct Queue {
    section: usize,
    items: Vec<(usize, u64, bool)>,
    next: usize,
}

impl Queue {
    fn next_is_critical(&self) -> bool {
        self.items.get(self.next).is_some_and(|it| it.2)
    }

    fn left(&self) -> u64 {
        self.items.iter().skip(self.next).map(|it| it.1).sum()
    }
}

/// Index of the Key facts section in [`SECTIONS`].
const KEY_FACTS: usize = 2;

/// Puts the key facts that quote critical lines first and bounds them as a
/// fresh summary does: each quoted line once (its newest fact), within
/// [`SUMMARY_CRITICAL_BYTES`], the newest first and pytest's `E  ` details
/// after every other kind. An old import error outlives the newer
/// assertion details that would otherwise push it out; what does not fit
/// stays in the previous summary's spilled original. Returns how many lead.
fn keep_errors(facts: &mut Vec<String>) -> usize {
    let (errors, others): (Vec<String>, Vec<String>) =
        facts.drain(..).partition(|f| error_fact(f).is_some());
    let quoted = errors
        .into_iter()
        .map(|f| (error_fact(&f).unwrap_or("").to_string(), f));
    let (kept, _) = fit_newest(
        newest_distinct(quoted.collect(), usize::MAX),
        SUMMARY_CRITICAL_BYTES,
        |(line, _)| (line.len(), !is_detail_line(line)),
    );
    let count = kept.len();
    facts.extend(kept.into_iter().map(|(_, f)| f));
    facts.extend(others);
    count
}

/// If `line` is a section heading: the section index and any text after it.
fn heading(line: &str) -> Option<(usize, &str)> {
    let t = line
        .trim()
        .trim_start_matches(['#', '*', '_', ' '])
        .trim_start_matches(|c: char| c.is_ascii_digit())
        .trim_start_matches(['.', ')', ' ']);
    for (k, name) in SECTIONS.iter().enumerate() {
        let Some(head) = t.get(..name.len()) else {
            continue;
        };
        if !head.eq_ignore_ascii_case(name) {
            continue;
        }
        let rest = t.get(name.len()..).unwrap_or("");
        let rest = rest.trim_start_matches(['*', '_']);
        if rest.trim().is_empty() {
            return Some((k, ""));
        }
        if let Some(after) = rest.strip_prefix(':') {
            let after = after.trim_start_matches(['*', '_']).trim();
            return Some((k, after));
        }
    }
    None
}

/// Bytes of critical lines a summary lists (about 1,000 tokens).
pub const SUMMARY_CRITICAL_BYTES: usize = 4_000;

/// Opening of a key fact quoting a critical line: `` - Error: `line` <cite> ``.
pub(super) const ERROR_FACT: &str = "- Error: `";

/// The critical line a key fact quotes, if `fact` is one ([`ERROR_FACT`]).
pub fn error_fact(fact: &str) -> Option<&str> {
    let rest = fact.strip_prefix(ERROR_FACT)?;
    rest.get(..rest.rfind("` ")?)
}

/// The distinct texts of `items`, each with the value of its last
/// occurrence, ordered by their last occurrence; the newest `keep` of them.
/// What appending each item after removing its earlier copy gives, in one
/// pass from the end.
pub(super) fn newest_distinct<T>(items: Vec<(String, T)>, keep: usize) -> Vec<(String, T)> {
    let mut seen: HashSet<String> = HashSet::new();
    let mut out: Vec<(String, T)> = Vec::new();
    for (text, value) in items.into_iter().rev() {
        if out.len() >= keep {
            break;
        }
        if !seen.contains(&text) {
            seen.insert(text.clone());
            out.push((text, value));
        }
    }
    out.reverse();
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> Summary {
        Summary {
            sections: [
                vec!["Fix the bug".into()],
                vec!["- edited a.py".into()],
                vec!["- ValueError: x".into()],
                vec!["- use a set".into()],
                vec!["- run tests".into()],
            ],
        }
    }

    #[test]
    fn render_parse_round_trip() {
        let s = sample();
        let text = s.render("[TraceLite summary of 4 earlier messages]");
        assert_eq!(Summary::parse(&text), Ok(s));
    }

    #[test]
    fn parses_llm_styles_and_rejects_malformed() {
        let text = "Here you go.\n**Goal:** fix it\n\n**Progress**\nedited\n# Key Facts\n- a\n1. Decisions\n- b\nNext steps: test";
        let s = Summary::parse(text).unwrap();
        assert_eq!(s.sections[0], vec!["fix it"]);
        assert_eq!(s.sections[4], vec!["test"]);
        let e = Summary::parse("## Goal\nx\n## Progress\n\n## Key facts\ny").unwrap_err();
        assert!(
            e.contains("missing section(s): Decisions, Next steps"),
            "{e}"
        );
        assert!(e.contains("empty section(s): Progress"), "{e}");
        assert!(Summary::parse("## Goal\na\n## Goal\nb")
            .unwrap_err()
            .contains("twice"));
    }

    #[test]
    fn merge_keeps_old_errors_before_new_details_and_each_error_once() {
        let fact =
            |line: &str, n: usize| format!("- Error: `{line}` spill://s/compact-{n} (lines 1-2)");
        let mut old = Summary::default();
        old.sections[2] = vec![
            fact("E   ModuleNotFoundError: No module named 'xmlschema'", 1),
            fact("ValueError: boom", 1),
            "- Files read: `a.py`".into(),
        ];
        let mut new = Summary::default();
        new.sections[2] = (0..80)
            .map(|i| {
                fact(
                    &format!("E           and: 'rootdir: /tmp/pytest-{i}/test_collect0'"),
                    2,
                )
            })
            .chain([fact("ValueError: boom", 2)])
            .chain((0..45).map(|i| format!("- Paths in outputs: `p{i}.py`")))
            .collect();
        let merged = old.merge(&new);
        let facts = &merged.sections[2];
        assert!(facts.contains(&fact(
            "E   ModuleNotFoundError: No module named 'xmlschema'",
            1
        )));
        // Quoted once, by its newest fact.
        assert_eq!(
            facts
                .iter()
                .filter(|f| f.contains("ValueError: boom"))
                .count(),
            1
        );
        assert!(facts.contains(&fact("ValueError: boom", 2)));
        // Details fill what is left of the byte budget, newest first.
        let bytes: usize = facts
            .iter()
            .filter_map(|f| error_fact(f))
            .map(|l| l.len() + 1)
            .sum();
        assert!(bytes <= SUMMARY_CRITICAL_BYTES, "{bytes}");
        assert!(facts.iter().any(|f| f.contains("pytest-79/")));
        assert!(!facts.iter().any(|f| f.contains("pytest-0/")));
        // Other facts: the newest MAX_LINES.
        let others: Vec<&String> = facts.iter().filter(|f| error_fact(f).is_none()).collect();
        assert_eq!(others.len(), MAX_LINES);
        assert_eq!(
            others.last().unwrap().as_str(),
            "- Paths in outputs: `p44.py`"
        );
        assert!(
            facts.iter().take_while(|f| error_fact(f).is_some()).count() + others.len()
                == facts.len()
        );
    }

    #[test]
    fn merge_appends_and_replaces_next_steps() {
        let old = sample();
        let mut new = sample();
        new.sections[0] = vec!["other goal".into()];
        new.sections[1].push("- edited b.py".into());
        new.sections[4] = vec!["- ship".into()];
        let m = old.merge(&new);
        assert_eq!(m.sections[0], vec!["Fix the bug"]);
        assert_eq!(m.sections[1], vec!["- edited a.py", "- edited b.py"]);
        assert_eq!(m.sections[4], vec!["- ship"]);
    }

    #[test]
    fn fit_drops_the_oldest_lines_and_critical_ones_last() {
        let words = |t: &str| Ok(t.split_whitespace().count() as u64);
        let mut s = Summary {
            sections: [
                vec!["- goal".into()],
                vec!["- old progress one two".into(), "- new progress".into()],
                vec![
                    "- Error: `ValueError: bad` spill://s/k".into(),
                    "- old fact a b c d".into(),
                    "- new fact".into(),
                ],
                vec!["- a decision".into()],
                vec!["- next".into()],
            ],
        };
        let whole = words(&s.render("H")).unwrap();
        let mut same = s.clone();
        assert_eq!(
            same.fit("H", whole, words, |n| format!("- {n} gone"))
                .unwrap(),
            0
        );
        assert_eq!(same, s);
        let dropped = s
            .fit("H", whole - 6, words, |n| format!("- {n} gone"))
            .unwrap();
        assert_eq!(dropped, 2);
        // Key facts held the most tokens: its two plain lines went, oldest
        // first; the quoted error stayed.
        assert_eq!(
            s.sections[1],
            ["- old progress one two", "- new progress", "- 2 gone"]
        );
        assert_eq!(s.sections[2], ["- Error: `ValueError: bad` spill://s/k"]);
        assert!(words(&s.render("H")).unwrap() <= whole - 6);
        // Nothing but critical lines left to drop: they go too, rather than overflow.
        let dropped = s.fit("H", 22, words, |n| format!("- {n} gone")).unwrap();
        assert!(dropped > 0 && words(&s.render("H")).unwrap() <= 22, "{s:?}");
        assert!(s.sections[2].is_empty(), "{s:?}");
    }
}
