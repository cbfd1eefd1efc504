//! Salience at arrival (`spill.salience`, issue 54): when a tool output
//! arrives, each of its lines is judged by what came before it (no model
//! call): a line is *salient* when it names something the task, the
//! producing call or the agent's recent calls and text name, when it
//! reports an error or a failing test, when it is a traceback frame or when
//! it defines a function or class. The output's first and last lines and the
//! lines around a salient one stay too; each other run of lines is folded
//! behind one marker that says how many lines it holds and how to read them
//! back (`read_spill` offset and limit, or `sed -n` for a path pointer), and
//! the full output is kept in the spill store.
//!
//! The judgement reads only the output and the messages before it, so an
//! output folds to the same bytes on every later request: nothing earlier is
//! rewritten and the cached prefix holds.

use std::fmt::Write as _;

use crate::activity::check::{failing_test_id, is_error_line};
use crate::activity::Action;
use crate::config::{PhaseConfig, SalienceConfig};
use crate::error::Result;
use crate::model::{Conversation, PartKind, PartRef, Role, ToolCall};
use crate::stage::StageContext;
use crate::store::lines::LineIndex;

/// Words that name nothing in particular: shell commands, the editor
/// tools' own argument words and the commonest keywords and words of code.
const STOPLIST: &[&str] = &[
    "bash",
    "grep",
    "egrep",
    "find",
    "head",
    "tail",
    "echo",
    "python",
    "python3",
    "pytest",
    "print",
    "import",
    "from",
    "true",
    "false",
    "none",
    "null",
    "self",
    "cls",
    "return",
    "command",
    "path",
    "view",
    "create",
    "str_replace",
    "old_str",
    "new_str",
    "insert",
    "insert_line",
    "file_text",
    "view_range",
    "undo_edit",
    "with",
    "this",
    "that",
    "then",
    "else",
    "elif",
    "done",
    "name",
    "type",
    "exec",
    "main",
    "test",
    "tests",
    "file",
    "files",
    "line",
    "lines",
    "sort",
    "uniq",
    "xargs",
    "include",
    "exclude",
    "testbed",
    "workspace",
    "repo",
    "home",
    "root",
    "sed",
    "cat",
    "def",
    "class",
    "for",
    "and",
    "not",
    "the",
    "git",
    "diff",
    "status",
    "show",
    "log",
    "args",
    "kwargs",
    "str",
    "int",
    "dict",
    "list",
    "lambda",
    "yield",
    "pass",
    "raise",
    "except",
    "try",
    "while",
    "assert",
    "function",
    "value",
    "values",
    "result",
    "__init__",
    "usr",
    "bin",
    "lib",
    "site",
    "packages",
    "src",
    "tmp",
];

/// The names an output's lines are judged by (sorted, each once).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Names {
    words: Vec<String>,
}

impl Names {
    /// Adds the name-like words of prose (a task, the assistant's text):
    /// words with `_`, a digit beside letters or an inner capital, the words
    /// of path tokens and of `` `code` `` spans.
    pub fn add_prose(&mut self, text: &str) {
        for token in text.split(char::is_whitespace) {
            let code = token.contains('`') || token.contains('/') || is_dotted(token);
            for w in words(token) {
                if code || name_like(w) {
                    self.insert(w);
                }
            }
        }
        for (i, span) in text.split('`').enumerate() {
            if i % 2 == 1 && span.len() <= 200 {
                words(span).for_each(|w| self.insert(w));
            }
        }
    }

    /// Adds the words of a call's string arguments (at least 4 characters,
    /// not in the stoplist of shell commands and editor words).
    pub fn add_call(&mut self, call: &ToolCall) {
        let args = call.arguments_json();
        let mut leaves = Vec::new();
        string_leaves(&args, &mut leaves);
        if leaves.is_empty() {
            leaves.push(call.arguments.as_str());
        }
        for leaf in leaves {
            for w in words(leaf) {
                if w.len() >= 4 && !stop(w) {
                    self.insert(w);
                }
            }
        }
    }

    /// Adds every name of `other`.
    pub fn extend(&mut self, other: &Names) {
        for w in &other.words {
            self.insert(w);
        }
    }

    /// Whether `line` holds one of the names (at word boundaries).
    pub fn named_in(&self, line: &str) -> bool {
        words(line).any(|w| self.contains(w))
    }

    /// The positions (in [`Names::iter`] order) of the names `line` holds
    /// (at word boundaries), each once.
    fn found_in(&self, line: &str) -> Vec<usize> {
        let mut found = Vec::new();
        for at in words(line).filter_map(|w| self.position(w)) {
            if !found.contains(&at) {
                found.push(at);
            }
        }
        found
    }

    fn contains(&self, word: &str) -> bool {
        self.position(word).is_some()
    }

    fn position(&self, word: &str) -> Option<usize> {
        self.words.binary_search_by(|w| w.as_str().cmp(word)).ok()
    }

    /// The names, in order.
    pub fn iter(&self) -> impl Iterator<Item = &str> {
        self.words.iter().map(String::as_str)
    }

    fn insert(&mut self, word: &str) {
        if word.len() >= 3 && !word.bytes().all(|b| b.is_ascii_digit()) && !stop(word) {
            if let Err(at) = self.words.binary_search_by(|w| w.as_str().cmp(word)) {
                self.words.insert(at, word.to_string());
            }
        }
    }
}

/// Whether a word is in the [`STOPLIST`] (ignoring ASCII case).
fn stop(word: &str) -> bool {
    STOPLIST.iter().any(|s| s.eq_ignore_ascii_case(word))
}

/// Identifier-like words of a text (`[A-Za-z0-9_]` runs).
fn words(text: &str) -> impl Iterator<Item = &str> {
    text.split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .filter(|w| !w.is_empty())
}

/// Whether a prose word looks like a name: `snake_case`, a digit beside
/// letters (`py310`, `utf8`) or an inner capital (`DataFrame`).
fn name_like(w: &str) -> bool {
    let letters = w.bytes().any(|b| b.is_ascii_alphabetic());
    letters
        && w.len() >= 3
        && (w.contains('_')
            || w.bytes().any(|b| b.is_ascii_digit())
            || w.bytes().skip(1).any(|b| b.is_ascii_uppercase()))
}

/// `a.b` with letters on both sides of a dot (`models.py`, `np.array`).
fn is_dotted(token: &str) -> bool {
    let t = token.trim_matches(|c: char| !c.is_ascii_alphanumeric());
    t.split_once('.').is_some_and(|(a, b)| {
        a.bytes().any(|c| c.is_ascii_alphabetic()) && b.bytes().any(|c| c.is_ascii_alphabetic())
    })
}

fn string_leaves<'v>(value: &'v serde_json::Value, out: &mut Vec<&'v str>) {
    match value {
        serde_json::Value::String(s) => out.push(s),
        serde_json::Value::Array(items) => items.iter().for_each(|v| string_leaves(v, out)),
        serde_json::Value::Object(map) => map.values().for_each(|v| string_leaves(v, out)),
        _ => {}
    }
}

/// What an output is judged by: the names before it and whether its call
/// shows a file.
#[derive(Debug, Clone, Default)]
pub struct Arrival {
    /// Names from the task, the producing call and the recent steps.
    pub names: Names,
    /// The producing call shows (part of) a file.
    pub view: bool,
}

impl Arrival {
    /// A digest of everything the fold of an output depends on besides its
    /// text and the settings.
    pub fn digest(&self) -> u128 {
        let view = [u8::from(self.view)];
        let mut parts: Vec<&[u8]> = self.names.iter().map(str::as_bytes).collect();
        parts.push(&view);
        crate::hash::digest128(&parts)
    }
}

/// The [`Arrival`]s of a conversation's tool results, in conversation order.
#[derive(Debug, Default)]
pub struct Arrivals(Vec<(PartRef, Arrival)>);

impl Arrivals {
    /// The arrival of the tool result at `at`.
    pub fn get(&self, at: PartRef) -> Option<&Arrival> {
        let i = self.0.binary_search_by_key(&at, |(r, _)| *r).ok()?;
        self.0.get(i).map(|(_, a)| a)
    }
}

/// The [`Arrival`] of every tool result of `conv`, read from the messages
/// before it: user text (the task and later user turns), the assistant's
/// text and calls of the last `recent_steps` assistant messages, and the
/// call that produced it.
pub fn arrivals(conv: &Conversation, settings: &SalienceConfig, phase: &PhaseConfig) -> Arrivals {
    let mut user = Names::default();
    let mut recent: Vec<Names> = Vec::new();
    // The calls so far: id, names, shows a file (the last of an id wins).
    let mut calls: Vec<(&str, Names, bool)> = Vec::new();
    let mut out = Vec::new();
    for (m, msg) in conv.messages.iter().enumerate() {
        let mut said = Names::default();
        for (p, part) in msg.parts.iter().enumerate() {
            match &part.kind {
                PartKind::Text { text } if msg.role == Role::User => user.add_prose(text),
                PartKind::Text { text } if msg.role == Role::Assistant => said.add_prose(text),
                PartKind::ToolCall(call) => {
                    let mut own = Names::default();
                    own.add_call(call);
                    said.extend(&own);
                    let view = crate::activity::classify(call, None, phase).action == Action::View;
                    calls.push((call.id.as_str(), own, view));
                }
                PartKind::ToolResult(result) => {
                    let mut names = user.clone();
                    let from = recent.len().saturating_sub(settings.recent_steps);
                    for n in recent.get(from..).unwrap_or(&[]) {
                        names.extend(n);
                    }
                    let call = calls.iter().rev().find(|(id, ..)| *id == result.call_id);
                    if let Some((_, own, _)) = call {
                        names.extend(own);
                    }
                    let view = call.is_some_and(|(.., view)| *view);
                    let at = PartRef {
                        message: m,
                        part: p,
                    };
                    out.push((at, Arrival { names, view }));
                }
                _ => {}
            }
        }
        if msg.role == Role::Assistant {
            recent.push(said);
        }
    }
    Arrivals(out)
}

/// Whether a line of output is salient whatever the names: an error, a
/// failing test, a traceback frame or a definition.
pub fn salient_kind(line: &str) -> bool {
    let (_, body) = super::index::leading_number(line);
    let t = line.trim_start();
    is_error_line(line)
        || failing_test_id(t).is_some()
        || t.starts_with("File \"")
        || super::index::definition(body).is_some()
}

/// Whether a line of output is salient on its own (before its context):
/// [`salient_kind`], or it holds one of `names`.
pub fn salient(line: &str, names: &Names) -> bool {
    salient_kind(line) || names.named_in(line)
}

/// Whether each line of this output holds a name of `arrival` that marks
/// lines: one on at most `maxNameShare` of its lines (at least 3): a name on
/// most lines (the project's own name in every path) tells none of them
/// apart.
fn telling(text: &str, index: &LineIndex, names: &Names, settings: &SalienceConfig) -> Vec<bool> {
    let found: Vec<Vec<usize>> = (0..index.len())
        .map(|i| names.found_in(index.line_trimmed(text, i)))
        .collect();
    // The number of lines each name is on.
    let mut lines = vec![0usize; names.words.len()];
    for &at in found.iter().flatten() {
        if let Some(n) = lines.get_mut(at) {
            *n += 1;
        }
    }
    let most = ((index.len() as f64 * settings.max_name_share) as usize).max(3);
    found
        .iter()
        .map(|f| {
            f.iter()
                .any(|&at| lines.get(at).is_some_and(|&n| n <= most))
        })
        .collect()
}

/// The 0-based line runs (`from..to`) of `text` to fold, in order; empty
/// when the output stays whole (under `minLines`, or nothing to fold).
pub fn folds(
    text: &str,
    index: &LineIndex,
    arrival: &Arrival,
    settings: &SalienceConfig,
) -> Vec<std::ops::Range<usize>> {
    let total = index.len();
    if total < settings.min_lines || (settings.keep_views && arrival.view) {
        return Vec::new();
    }
    let ends = settings.ends.min(total);
    let mut keep: Vec<bool> = (0..total).map(|i| i < ends || i + ends >= total).collect();
    let named = telling(text, index, &arrival.names, settings);
    for i in 0..total {
        let by_name = named.get(i).copied().unwrap_or(false);
        if by_name || salient_kind(index.line_trimmed(text, i)) {
            let from = i.saturating_sub(settings.context);
            let to = (i + settings.context).min(total - 1);
            keep.iter_mut()
                .take(to + 1)
                .skip(from)
                .for_each(|k| *k = true);
        }
    }
    let kept = |i: usize| keep.get(i).copied().unwrap_or(true);
    let mut runs = Vec::new();
    let mut i = 0;
    while i < total {
        if kept(i) {
            i += 1;
            continue;
        }
        let start = i;
        while i < total && !kept(i) {
            i += 1;
        }
        if i - start >= settings.min_run.max(1) {
            runs.push(start..i);
        }
    }
    runs
}

/// How a fold's header begins.
pub const HEADER_OPENING: &str = "[TraceLite folded ";

/// The text the model sees: the header naming the pointer, the kept lines
/// as they are and a marker for each fold (1-based line numbers).
pub fn render(
    text: &str,
    index: &LineIndex,
    runs: &[std::ops::Range<usize>],
    pointer: &str,
) -> String {
    let folded: usize = runs.iter().map(|r| r.len()).sum();
    let path = super::is_path_pointer(pointer);
    let mut out = String::with_capacity(text.len() / 2 + 128);
    let _ = write!(
        out,
        "{HEADER_OPENING}{folded} of {} lines nothing before marks as used; full output: {pointer} — ",
        index.len()
    );
    if path {
        let _ = write!(
            out,
            "print lines FIRST to LAST with sed -n 'FIRST,LASTp' '{pointer}'"
        );
    } else {
        out.push_str("read_spill (pointer, offset, limit) reads a fold back");
    }
    out.push_str("]\n");
    let mut at = 0;
    for run in runs {
        out.push_str(text.get(index.span(at, run.start)).unwrap_or(""));
        if !out.ends_with('\n') {
            out.push('\n');
        }
        let (first, last) = (run.start + 1, run.end);
        let n = run.len();
        let _ = write!(out, "[… {n} lines hidden ({first}-{last}): ");
        if path {
            let _ = writeln!(out, "sed -n '{first},{last}p' …]");
        } else {
            let _ = writeln!(out, "read_spill offset={} limit={n} …]", run.start);
        }
        at = run.end;
    }
    out.push_str(text.get(index.span(at, index.len())).unwrap_or(""));
    if !text.ends_with('\n') && out.ends_with('\n') {
        out.pop();
    }
    out
}

/// A fold laid out before, with the pointer it expected: held in the
/// spill stage's [`super::ExcerptCache`] (as [`super::Laid::Folded`]), by the
/// text's content key and a digest of its [`Arrival`] and the settings: a
/// cache only (the text is still kept and the fold masked and counted on
/// every call).
#[derive(Debug, Clone)]
pub(super) struct Fold {
    pointer: String,
    pub(super) rendered: String,
    before: u64,
    folded: usize,
    total: usize,
}

/// Folds one output at arrival: keeps `text` in the store and returns what
/// the model sees instead, or `None` when it stays whole (nothing to fold,
/// the fold would not be cheaper, would still be over `cap`, or the store
/// refused the text: a fold must read back).
pub(super) fn fold_one(
    text: &str,
    arrival: &Arrival,
    cx: &mut StageContext<'_, super::ExcerptCache>,
    cap: u64,
) -> Result<Option<super::Spilled>> {
    let settings = &cx.config.spill.salience;
    // Far over the cap: the excerpt, which never reads every line. A fold
    // sent back (a host replaying compressed history) is not folded again.
    if (text.len() as u64) > cap.saturating_mul(super::WHOLE_COUNT_BYTES_PER_CAP_TOKEN)
        || text.starts_with(HEADER_OPENING)
    {
        return Ok(None);
    }
    let key = cx.content_key("tool", text);
    let knobs = knobs(settings, cap);
    let id = crate::hash::digest128(&[
        b"salience",
        &arrival.digest().to_le_bytes(),
        &knobs,
        cx.config.session.as_bytes(),
        cx.config.spill.pointer_root.as_bytes(),
        cx.meter.counter.name().as_bytes(),
    ]);
    let id = (key.clone(), id);
    let laid = match cx.state.get(&id) {
        Some(super::Laid::Folded(fold)) => Some(fold),
        // `NotCheaper`: laid out before, the fold did not pay.
        Some(_) => None,
        None => {
            let fold = lay_out(text, arrival, cx, cap, &key)?;
            let laid = fold
                .clone()
                .map_or(super::Laid::NotCheaper, super::Laid::Folded);
            cx.state.insert(id, laid);
            fold
        }
    };
    let Some(laid) = laid else {
        return Ok(None);
    };
    let Ok(pointer) = cx.keep("tool", text) else {
        return Ok(None);
    };
    let rendered = if pointer == laid.pointer {
        laid.rendered
    } else {
        let index = LineIndex::new(text);
        render(
            text,
            &index,
            &folds(text, &index, arrival, settings),
            &pointer,
        )
    };
    let rendered = cx.redact(&rendered).into_owned();
    let after = cx.meter.text(&rendered)?;
    Ok(Some(super::Spilled {
        text: rendered,
        spilled: true,
        pointer: Some(pointer),
        refused: None,
        tokens_before: laid.before,
        tokens_after: after,
        detail: format!(
            "{} lines: {} folded by salience at arrival",
            laid.total, laid.folded
        ),
    }))
}

/// The settings a fold depends on, as bytes for a cache key (not their
/// `Debug` text: formatting code in the wasm for a key no one reads).
fn knobs(settings: &SalienceConfig, cap: u64) -> Vec<u8> {
    let numbers = [
        settings.min_lines as u64,
        settings.context as u64,
        settings.ends as u64,
        settings.min_run as u64,
        settings.recent_steps as u64,
        settings.max_name_share.to_bits(),
        cap,
        u64::from(settings.enabled),
        u64::from(settings.keep_views),
    ];
    numbers.iter().flat_map(|n| n.to_le_bytes()).collect()
}

/// The fold of `text` with the pointer it is expected to get, when it pays.
fn lay_out(
    text: &str,
    arrival: &Arrival,
    cx: &mut StageContext<'_, super::ExcerptCache>,
    cap: u64,
    key: &str,
) -> Result<Option<Fold>> {
    let settings = &cx.config.spill.salience;
    let index = LineIndex::new(text);
    let runs = folds(text, &index, arrival, settings);
    if runs.is_empty() {
        return Ok(None);
    }
    let pointer = cx.config.pointer(key);
    let rendered = render(text, &index, &runs, &pointer);
    let before = cx.meter.text(text)?;
    let after = cx.meter.text(&rendered)?;
    if after >= before || after > cap {
        return Ok(None);
    }
    Ok(Some(Fold {
        pointer,
        rendered,
        before,
        folded: runs.iter().map(|r| r.len()).sum(),
        total: index.len(),
    }))
}
