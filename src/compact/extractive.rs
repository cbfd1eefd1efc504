//! The default summarizer: deterministic and extractive, no LLM. Goal from
//! the task; progress from edits and test runs; key facts from error lines,
//! failed commands, files and symbols; decisions and next steps from the
//! assistant's own sentences. Tool outputs are reduced to head/tail/error
//! lines first. Every fact cites the `spill://` pointer of the compaction's
//! blob with the lines of its original there.
//!
//! Linear in the range: lists that keep the newest distinct items are built
//! from the end ([`newest_distinct`]), never by removing from a vector.

use std::collections::{BTreeMap, BTreeSet};

use super::summary::{newest_distinct, Summary, ERROR_FACT, SUMMARY_CRITICAL_BYTES};
use super::trigger::StepActivity;
use crate::activity::check::{critical_lines, fit_newest, is_detail_line, CRITICAL_BYTES};
use crate::activity::Outcome;
use crate::model::{Message, PartKind, Role};
use crate::text::{clip, one_line, sentences};

/// Longest goal excerpt, in bytes.
const GOAL_BYTES: usize = 1_500;

/// The compacted range handed to a summarizer.
#[derive(Debug, Clone, Copy)]
pub struct Range<'a> {
    /// The compacted messages.
    pub messages: &'a [Message],
    /// Index of the first of them in the conversation.
    pub first: usize,
    /// Pointer to the compaction's blob: its index, then every original.
    pub pointer: &'a str,
    /// First and last line (1-based) of each message's original in the
    /// blob, parallel to `messages`.
    pub lines: &'a [(usize, usize)],
    /// Steps whose call lies in the range (absolute message indices).
    pub steps: &'a [StepActivity],
}

impl Range<'_> {
    /// Where message `message` (absolute index) is kept:
    /// `spill://<session>/<key> (lines a-b)`, or the blob's pointer alone
    /// for a message outside the range.
    pub fn cite(&self, message: usize) -> String {
        super::blob::cite(
            self.pointer,
            message
                .checked_sub(self.first)
                .and_then(|i| self.lines.get(i)),
        )
    }

    fn message(&self, message: usize) -> Option<&Message> {
        message
            .checked_sub(self.first)
            .and_then(|i| self.messages.get(i))
    }
}

/// The full text of a message as kept in the spill store: a role line, then
/// each part (tool calls with their arguments, tool results with their text).
pub fn transcript(message: &Message) -> String {
    let role = match message.role {
        Role::System => "system",
        Role::Developer => "developer",
        Role::User => "user",
        Role::Assistant => "assistant",
        Role::Tool => "tool",
    };
    let mut out = format!("[{role}]");
    for part in &message.parts {
        out.push('\n');
        match &part.kind {
            PartKind::Text { text } => out.push_str(text),
            PartKind::ToolCall(c) => {
                out.push_str(&format!("[tool call {} {}] {}", c.id, c.name, c.arguments));
            }
            PartKind::ToolResult(r) => {
                out.push_str(&format!("[tool result {}]\n{}", r.call_id, r.text()));
            }
            PartKind::Image(i) => out.push_str(&format!("[image {}]", i.media_type)),
            PartKind::Other { value } => out.push_str(&value.to_string()),
        }
    }
    out
}

/// The length in bytes of [`transcript`]`(message)`, without building it
/// (tool results may count a few bytes more: the joins of their parts).
pub fn transcript_len(message: &Message) -> usize {
    let mut n = "[assistant]".len();
    for part in &message.parts {
        n += 1 + match &part.kind {
            PartKind::Text { text } => text.len(),
            PartKind::ToolCall(c) => 16 + c.id.len() + c.name.len() + c.arguments.len(),
            PartKind::ToolResult(r) => {
                16 + r.call_id.len()
                    + r.parts
                        .iter()
                        .map(|p| p.as_text().map_or(16, |t| t.len() + 1))
                        .sum::<usize>()
            }
            PartKind::Image(i) => 8 + i.media_type.len(),
            PartKind::Other { value } => value.to_string().len(),
        };
    }
    n
}

/// Summarizes `range` extractively.
pub fn summarize(range: &Range<'_>) -> Summary {
    let mut s = Summary::default();
    s.sections[0] = goal(range);
    s.sections[1] = progress(range);
    s.sections[2] = key_facts(range);
    let sentences = assistant_sentences(range);
    s.sections[3] = decisions(range, &sentences);
    s.sections[4] = next_steps(range, &sentences);
    s
}

fn goal(range: &Range<'_>) -> Vec<String> {
    let task = range
        .messages
        .iter()
        .enumerate()
        .find(|(_, m)| m.role == Role::User && !m.text_content().trim().is_empty());
    let Some((i, m)) = task else {
        return vec![
            "- (no task message in the compacted range; see the messages kept below)".into(),
        ];
    };
    let text = m.text_content();
    let excerpt = clip(text.trim(), GOAL_BYTES);
    let mut lines: Vec<String> = excerpt
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| format!("> {}", l.trim_end()))
        .collect();
    lines.push(format!(
        "- Full task ({} bytes): {}",
        text.len(),
        range.cite(range.first + i)
    ));
    lines
}

fn progress(range: &Range<'_>) -> Vec<String> {
    let steps = range.steps;
    let edits: usize = steps
        .iter()
        .filter(|s| s.activity.edited())
        .map(|s| s.activity.edited_paths().len())
        .sum();
    let checks: Vec<&StepActivity> = steps
        .iter()
        .filter(|s| s.activity.check.is_some())
        .collect();
    let count = |o: Outcome| {
        checks
            .iter()
            .filter(|s| s.activity.check.as_ref().is_some_and(|c| c.outcome == o))
            .count()
    };
    let mut out = vec![format!(
        "- {} earlier messages compacted: {} tool calls, {} file edits, {} test/run commands ({} passed, {} failed). {}",
        range.messages.len(),
        steps.len(),
        edits,
        checks.len(),
        count(Outcome::Passed),
        count(Outcome::Failed),
        range.pointer
    )];
    // Edited paths, most recent last (ties in order of first edit), with the
    // number of edits.
    let mut edited: BTreeMap<String, (usize, usize, usize)> = BTreeMap::new();
    for s in steps.iter().filter(|s| s.activity.edited()) {
        for p in s.activity.edited_paths() {
            let first = edited.len();
            let e = edited.entry(p).or_insert((0, s.call_message, first));
            e.0 += 1;
            e.1 = s.call_message;
        }
    }
    let mut by_path: Vec<(String, usize, usize, usize)> = edited
        .into_iter()
        .map(|(p, (n, at, first))| (p, n, at, first))
        .collect();
    by_path.sort_by_key(|e| (e.2, e.3));
    let skip = by_path.len().saturating_sub(15);
    if skip > 0 {
        out.push(format!(
            "- {skip} more files edited earlier: {}",
            range.pointer
        ));
    }
    for (path, n, at, _) in by_path.iter().skip(skip) {
        let times = if *n == 1 {
            String::new()
        } else {
            format!(" ({n} edits)")
        };
        out.push(format!("- Edited `{path}`{times} {}", range.cite(*at)));
    }
    let skip = checks.len().saturating_sub(8);
    for s in checks.iter().skip(skip) {
        let Some(c) = &s.activity.check else { continue };
        let exit = s
            .activity
            .exit_code
            .map_or(String::new(), |e| format!(" (exit {e})"));
        let at = s.result_message.unwrap_or(s.call_message);
        out.push(format!(
            "- Ran `{}` → {}{exit} {}",
            one_line(&c.command, 160),
            c.outcome.as_str(),
            range.cite(at)
        ));
    }
    out
}

fn key_facts(range: &Range<'_>) -> Vec<String> {
    let mut out = Vec::new();
    // The critical lines of every output (the last line of each traceback,
    // errors, failing tests), verbatim, newest first within a byte budget.
    let mut errors: Vec<(String, usize)> = Vec::new();
    let mut omitted = 0;
    for s in range.steps {
        let Some(at) = s.result_message else { continue };
        let Some(m) = range.message(at) else { continue };
        let text: String = m
            .parts
            .iter()
            .filter_map(|p| match &p.kind {
                PartKind::ToolResult(r) => Some(r.text()),
                PartKind::Text { text } => Some(text.clone()),
                _ => None,
            })
            .collect::<Vec<_>>()
            .join("\n");
        let critical = critical_lines(&text, CRITICAL_BYTES);
        omitted += critical.omitted;
        // Exit codes are listed with the commands below.
        for line in critical.lines {
            if !line.starts_with("exit code ") {
                errors.push((line, at));
            }
        }
    }
    // pytest's `E  ` details of newer failures must not crowd out older errors.
    let (kept, left_out) = fit_newest(
        newest_distinct(errors, usize::MAX),
        SUMMARY_CRITICAL_BYTES,
        |(l, _)| (l.len(), !is_detail_line(l)),
    );
    omitted += left_out;
    for (line, at) in &kept {
        out.push(format!("{ERROR_FACT}{line}` {}", range.cite(*at)));
    }
    if omitted > 0 {
        out.push(format!(
            "- {omitted} more error lines in the compacted outputs {}",
            range.pointer
        ));
    }
    // Failed commands that were not test runs.
    let failed: Vec<&StepActivity> = range
        .steps
        .iter()
        .filter(|s| s.activity.check.is_none() && s.activity.exit_code.is_some_and(|e| e != 0))
        .collect();
    for s in failed.iter().skip(failed.len().saturating_sub(6)) {
        out.push(format!(
            "- `{}` exited with {} {}",
            one_line(&s.activity.command, 160),
            s.activity.exit_code.unwrap_or_default(),
            range.cite(s.result_message.unwrap_or(s.call_message))
        ));
    }
    // Files read, in order of first view.
    let mut files: Vec<&str> = Vec::new();
    let mut seen: BTreeSet<&str> = BTreeSet::new();
    for s in range.steps {
        for v in &s.activity.viewed {
            if seen.insert(v.as_str()) {
                files.push(v);
            }
        }
    }
    if !files.is_empty() {
        let shown: Vec<String> = files
            .iter()
            .rev()
            .take(20)
            .rev()
            .map(|f| format!("`{f}`"))
            .collect();
        out.push(format!(
            "- Files read: {} {}",
            shown.join(", "),
            range.pointer
        ));
    }
    // Paths (with line numbers) and definitions the outputs introduced: what
    // the agent may act on later (a path found by `find`, then tested).
    let found = found_in_outputs(range);
    let quoted = |items: &[String]| {
        items
            .iter()
            .map(|p| format!("`{p}`"))
            .collect::<Vec<_>>()
            .join(", ")
    };
    for (label, items) in [
        ("Paths in outputs", &found.paths),
        ("Definitions seen", &found.definitions),
        ("Symbols in outputs", &found.symbols),
    ] {
        if !items.is_empty() {
            out.push(format!("- {label}: {} {}", quoted(items), range.pointer));
        }
    }
    // Symbols the assistant talked about (`backticked` identifiers), most frequent first.
    let mut counts: BTreeMap<String, usize> = BTreeMap::new();
    for m in range.messages.iter().filter(|m| m.role == Role::Assistant) {
        for sym in backticked(&m.text_content()) {
            *counts.entry(sym).or_default() += 1;
        }
    }
    let mut ranked: Vec<(String, usize)> = counts.into_iter().collect();
    ranked.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
    if !ranked.is_empty() {
        let names: Vec<String> = ranked
            .iter()
            .take(12)
            .map(|(s, _)| format!("`{s}`"))
            .collect();
        out.push(format!(
            "- Symbols discussed: {} {}",
            names.join(", "),
            range.pointer
        ));
    }
    if out.is_empty() {
        out.push(format!(
            "- No errors or failed commands in the compacted range {}",
            range.pointer
        ));
    }
    out
}

/// Most paths and definitions listed in the key facts.
const MAX_FOUND: usize = 40;

/// What the range's tool outputs introduced, newest last, at most
/// [`MAX_FOUND`] of each: paths (`path:line` when an output located a line,
/// grep style), the functions and classes their views define, and code
/// symbols (`snake_case`, `camelCase`, `dotted.names`).
struct Found {
    paths: Vec<String>,
    definitions: Vec<String>,
    symbols: Vec<String>,
}

/// Items in the order they were last seen (linear: one map, one sort).
#[derive(Default)]
struct Recent {
    last: BTreeMap<String, usize>,
    clock: usize,
}

impl Recent {
    fn see(&mut self, item: &str) {
        self.clock += 1;
        // Seen before (most symbols are): no copy of the text.
        match self.last.get_mut(item) {
            Some(at) => *at = self.clock,
            None => {
                self.last.insert(item.to_string(), self.clock);
            }
        }
    }

    fn newest(self, n: usize) -> Vec<String> {
        let mut items: Vec<(String, usize)> = self.last.into_iter().collect();
        items.sort_by_key(|(_, at)| *at);
        let skip = items.len().saturating_sub(n);
        items.into_iter().skip(skip).map(|(s, _)| s).collect()
    }
}

fn found_in_outputs(range: &Range<'_>) -> Found {
    let mut paths = Recent::default();
    let mut definitions = Recent::default();
    let mut symbols = Recent::default();
    for m in range.messages.iter().filter(|m| m.role == Role::Tool) {
        for part in &m.parts {
            let PartKind::ToolResult(r) = &part.kind else {
                continue;
            };
            let text = r.text();
            for line in text.lines().take(2_000) {
                for token in line.split(|c: char| {
                    c.is_whitespace() || matches!(c, '"' | '\'' | '(' | ')' | ',' | '[' | ']')
                }) {
                    if let Some(p) = path_token(token) {
                        paths.see(&p);
                    }
                }
                if let Some(d) = definition(line) {
                    definitions.see(&d);
                }
                for sym in code_symbols(line) {
                    symbols.see(sym);
                }
            }
        }
    }
    let definitions = definitions.newest(MAX_FOUND);
    let mut symbols = symbols.newest(MAX_FOUND * 2);
    symbols.retain(|s| !definitions.contains(s));
    Found {
        paths: paths.newest(MAX_FOUND),
        definitions,
        symbols,
    }
}

/// Identifiers of a line that look like code rather than words: with an
/// underscore, a capital after a lowercase letter, or a dot between names
/// (4–60 bytes, not inside a path).
fn code_symbols(line: &str) -> Vec<&str> {
    let mut out = Vec::new();
    if line.is_ascii() {
        // The same words as the split by chars below, found byte by byte.
        let is_word = |b: u8| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'.' | b'/');
        let mut start = 0;
        for (i, &b) in line.as_bytes().iter().enumerate() {
            if !is_word(b) {
                out.extend(code_symbol(line.get(start..i).unwrap_or("")));
                start = i + 1;
            }
        }
        out.extend(code_symbol(line.get(start..).unwrap_or("")));
    } else {
        out.extend(words_by_chars(line).filter_map(code_symbol));
    }
    out
}

/// The words of a line (letters, digits, `_`, `.` and `/`), split char by char.
fn words_by_chars(line: &str) -> impl Iterator<Item = &str> {
    line.split(|c: char| !(c.is_alphanumeric() || c == '_' || c == '.' || c == '/'))
}

/// The code symbol a word of a line is, if any (see [`code_symbols`]).
fn code_symbol(w: &str) -> Option<&str> {
    if w.contains('/') {
        return None;
    }
    let w = w.trim_matches('.');
    let code = (4..=60).contains(&w.len())
        && w.chars()
            .next()
            .is_some_and(|c| c.is_alphabetic() || c == '_')
        && !w.ends_with(".py")
        && (w.contains('_')
            || w.contains('.')
            || w.as_bytes()
                .windows(2)
                .any(|p| matches!(p, [a, b] if a.is_ascii_lowercase() && b.is_ascii_uppercase())))
        && w.trim_matches('_').len() >= 3;
    code.then_some(w)
}

/// A file path in an output token: `dir/name.ext`, optionally `:line`
/// (the `:line:` of grep output); URLs and bare names are not paths.
fn path_token(token: &str) -> Option<String> {
    // A path has a `/` (most tokens do not: one search rejects them).
    if !token.as_bytes().contains(&b'/') {
        return None;
    }
    let t = token.trim_end_matches([':', '.', ';']);
    if t.contains("://") || t.len() > 160 {
        return None;
    }
    let (path, line) = match t.split_once(':') {
        Some((p, rest)) => {
            let digits: String = rest.chars().take_while(char::is_ascii_digit).collect();
            (p, (!digits.is_empty()).then_some(digits))
        }
        None => (t, None),
    };
    let name = path.rsplit('/').next().unwrap_or("");
    let ext = name.rsplit_once('.');
    let ok = path.contains('/')
        && path
            .chars()
            .all(|c| c.is_alphanumeric() || matches!(c, '_' | '.' | '/' | '-'))
        && ext.is_some_and(|(stem, ext)| {
            !stem.is_empty()
                && (1..=8).contains(&ext.len())
                && ext.chars().all(|c| c.is_ascii_alphanumeric())
        });
    if !ok {
        return None;
    }
    Some(match line {
        Some(n) => format!("{path}:{n}"),
        None => path.to_string(),
    })
}

/// `def name` / `class name` (Python), `fn name` (Rust), `function name`
/// (JS) at the start of a line of code, after an optional line number.
fn definition(line: &str) -> Option<String> {
    let t = line.trim_start();
    let t = t
        .trim_start_matches(|c: char| c.is_ascii_digit())
        .trim_start();
    let t = t.trim_start_matches("pub ").trim_start_matches("async ");
    let rest = ["def ", "class ", "fn ", "function "]
        .iter()
        .find_map(|k| t.strip_prefix(k))?;
    let name: String = rest
        .chars()
        .take_while(|c| c.is_alphanumeric() || *c == '_')
        .collect();
    (name.len() >= 2).then_some(name)
}

/// Identifier-like `backticked` spans (paths, names, dotted names; ≤ 60 bytes).
fn backticked(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    for (i, piece) in text.split('`').enumerate() {
        let ok = i % 2 == 1
            && (2..=60).contains(&piece.len())
            && piece.chars().all(|c| {
                c.is_alphanumeric() || matches!(c, '_' | '.' | '/' | ':' | '-' | '(' | ')')
            })
            && piece
                .chars()
                .next()
                .is_some_and(|c| c.is_alphabetic() || c == '_' || c == '/');
        if ok {
            out.push(piece.to_string());
        }
    }
    out
}

const DECISION_CUES: &[&str] = &[
    "i'll ",
    "i will ",
    "let's ",
    "i need to ",
    "we need to ",
    "decided",
    "instead",
    "the fix ",
    "the issue is",
    "the problem is",
    "root cause",
    "approach",
    "i should ",
    "the solution",
];

const NEXT_CUES: &[&str] = &[
    "next", "now ", "then ", "need to", "should ", "will ", "let me", "let's", "going to",
];

fn assistant_sentences(range: &Range<'_>) -> Vec<(String, usize)> {
    let mut out = Vec::new();
    for (i, m) in range.messages.iter().enumerate() {
        if m.role != Role::Assistant {
            continue;
        }
        let text = m.text_content();
        let mut in_fence = false;
        for line in text.lines() {
            if line.trim_start().starts_with("```") {
                in_fence = !in_fence;
                continue;
            }
            if in_fence {
                continue;
            }
            let line = line.trim().trim_start_matches("THOUGHT:").trim();
            for s in sentences(line) {
                if s.len() >= 12 && s.chars().next().is_some_and(char::is_alphabetic) {
                    out.push((s.to_string(), range.first + i));
                }
            }
        }
    }
    out
}

/// Whether an assistant sentence states a decision: it has a cue and is not
/// the announcement of the call that follows ("Let's run the tests again:"),
/// which the tool-call log already keeps.
fn is_decision(sentence: &str) -> bool {
    let l = sentence.to_ascii_lowercase();
    !l.trim_end().ends_with(':') && DECISION_CUES.iter().any(|c| l.contains(c))
}

fn decisions(range: &Range<'_>, sentences: &[(String, usize)]) -> Vec<String> {
    let mut found: Vec<(String, usize)> = Vec::new();
    for (s, at) in sentences {
        if is_decision(s) {
            found.push((one_line(s, 240), *at));
        }
    }
    let out: Vec<String> = newest_distinct(found, 8)
        .iter()
        .map(|(s, at)| format!("- {s} {}", range.cite(*at)))
        .collect();
    if out.is_empty() {
        return vec![format!(
            "- No explicit decisions stated in the compacted range {}",
            range.pointer
        )];
    }
    out
}

fn next_steps(range: &Range<'_>, all: &[(String, usize)]) -> Vec<String> {
    let Some(last_at) = all.last().map(|(_, at)| *at) else {
        return vec!["- Continue from the messages kept below.".into()];
    };
    let recent: Vec<&(String, usize)> = all.iter().filter(|(_, at)| *at == last_at).collect();
    let mut out: Vec<String> = recent
        .iter()
        .filter(|(s, _)| {
            let l = s.to_ascii_lowercase();
            NEXT_CUES.iter().any(|c| l.contains(c))
        })
        .map(|(s, at)| format!("- {} {}", one_line(s, 240), range.cite(*at)))
        .collect();
    if out.len() > 3 {
        out.drain(..out.len() - 3);
    }
    if out.is_empty() {
        if let Some((s, at)) = recent.last() {
            out.push(format!(
                "- Last stated: {} {}",
                one_line(s, 240),
                range.cite(*at)
            ));
        }
    }
    out.push("- Continue from the messages kept below.".into());
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn code_symbols_agree_with_the_split_by_chars() {
        // The split by chars, the one non-ASCII lines take.
        fn reference(line: &str) -> Vec<&str> {
            words_by_chars(line).filter_map(code_symbol).collect()
        }
        let pieces = [
            "self",
            ".",
            "_",
            "query",
            "Where",
            "x",
            "/",
            "py",
            ".py",
            " ",
            "(",
            ")",
            "'",
            ":",
            "9",
            "AttributeError",
            "__init__",
            "-",
            "é",
            "—",
            "│",
            "ß_x",
            "fooBar",
            "\t",
        ];
        let mut seed: u64 = 3;
        for _ in 0..6000 {
            let mut line = String::new();
            for _ in 0..10 {
                seed = seed
                    .wrapping_mul(6364136223846793005)
                    .wrapping_add(1442695040888963407);
                line.push_str(pieces[(seed >> 33) as usize % pieces.len()]);
            }
            assert_eq!(code_symbols(&line), reference(&line), "{line:?}");
        }
    }

    #[test]
    fn paths_and_definitions_from_outputs() {
        assert_eq!(
            path_token("django/db/models/query.py:540:"),
            Some("django/db/models/query.py:540".into())
        );
        assert_eq!(
            path_token("./tests/test_x.py"),
            Some("./tests/test_x.py".into())
        );
        assert_eq!(path_token("https://x.org/a.py"), None);
        assert_eq!(path_token("setup.py"), None);
        assert_eq!(path_token("a/b"), None);
        assert_eq!(
            definition("   540\t    def _batched_insert(self, objs):"),
            Some("_batched_insert".into())
        );
        assert_eq!(definition("class QuerySet:"), Some("QuerySet".into()));
        assert_eq!(definition("x = def_y"), None);
        assert_eq!(
            code_symbols("E   AttributeError: 'Foo' has no attr _batched_insert in self.query.where (models/x.py)"),
            vec!["AttributeError", "_batched_insert", "self.query.where"]
        );
        let mut r = Recent::default();
        for s in ["a", "b", "a", "c"] {
            r.see(s);
        }
        assert_eq!(r.newest(2), vec!["a", "c"]);
    }

    #[test]
    fn announcements_of_the_next_call_are_no_decisions() {
        assert!(is_decision(
            "We need to use self.__class__ instead of importing the module."
        ));
        assert!(is_decision("The fix is to quote the qop value."));
        assert!(!is_decision("Let's run the tests again:"));
        assert!(!is_decision("Now let's look at the concat function: "));
        assert!(!is_decision("The tests pass."));
    }
}
