//! One reader of agent activity (contract layer, beside [`crate::stage`]):
//! what each tool call did. The phase stage,
//! compaction and the [`crate::controller::TraceLite`] controller all read a
//! conversation through [`read`], so they agree on what an edit is, which
//! file it changed, whether that file existed before the session, and what
//! each check (test or script run) reported.
//!
//! * [`edit`]: named edit tools and shell writes ([`shell`]), with the
//!   [`EditMode`] (create, overwrite, change in place) and failure signs;
//!   [`edit_kind`] the [`EditKind`] both name.
//! * [`check`]: test and run commands, exit codes and outcomes.
//! * [`Action`]: what kind of reading a call does (a search, a listing, a
//!   file view), so a clean-up knows what an output was for.
//! * [`recall`]: how likely the agent needs an output again, from the
//!   history (what the planner prices a rewrite's recovery with).

pub mod check;
pub mod edit;
pub mod edit_kind;
pub mod recall;
pub mod shell;

pub use check::{Check, CheckKind, Outcome};
pub use edit::{failed, EditAction, EditDetector, EditMode};
pub use edit_kind::EditKind;

use serde_json::Value;

use crate::config::PhaseConfig;
use crate::model::{Conversation, PartRef, Step, ToolCall, ToolResult};
use crate::text::one_line;

/// What kind of reading a call does.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Action {
    /// Writes files (see [`Activity::edits`]).
    Edit,
    /// Runs tests or a script (see [`Activity::check`]).
    Check,
    /// Searches file contents or names (`grep`, `rg`, `find -name`, `git grep`).
    Search,
    /// Lists files or repository state (`ls`, `tree`, `find` without a
    /// pattern, `git status`).
    Listing,
    /// Shows (part of) a file (`cat`, `head`, `sed -n`, an editor `view`).
    View,
    /// Anything else.
    Other,
}

/// What one tool call did.
#[derive(Debug, Clone, PartialEq)]
pub struct Activity {
    /// Files the call writes, in order (empty when it writes none).
    pub edits: Vec<EditAction>,
    /// Whether the result shows the edit failed (`None`: no result yet or no edit).
    pub failed: Option<bool>,
    /// A test or run command, if the call was one.
    pub check: Option<Check>,
    /// The kind of reading the call does.
    pub action: Action,
    /// The shell command (first line, clipped), or `tool command path` for file tools.
    pub command: String,
    /// The command as the agent would type it again (whitespace collapsed,
    /// unclipped): two calls with the same key re-run the same thing.
    pub rerun_key: String,
    /// Exit code reported in the output.
    pub exit_code: Option<i64>,
    /// Files shown by a view (an editor `view`, `cat f`, `sed -n 1,9p f`).
    pub viewed: Vec<String>,
}

impl Activity {
    /// Whether the call edits files and its result does not show a failure.
    pub fn edited(&self) -> bool {
        !self.edits.is_empty() && self.failed != Some(true)
    }

    /// Paths written (a placeholder for writes that name no file: `patch`
    /// for `git apply`/`patch`, `(file written by script)` for scripts).
    pub fn edited_paths(&self) -> Vec<String> {
        let mut out: Vec<String> = Vec::new();
        for e in &self.edits {
            let path = e.target.clone().unwrap_or_else(|| match e.kind {
                EditKind::GitApply | EditKind::Patch | EditKind::Tool => "patch".into(),
                _ => "(file written by script)".into(),
            });
            if !out.contains(&path) {
                out.push(path);
            }
        }
        out
    }
}

/// Classifies a tool call and its result (without the history: see [`read`]
/// for whether an edit changed a file that existed before the session).
pub fn classify(call: &ToolCall, result: Option<&ToolResult>, config: &PhaseConfig) -> Activity {
    let detector = EditDetector::new(config);
    let args = call.arguments_json();
    let output = result.map(ToolResult::text).unwrap_or_default();
    let edits = detector.edits(call);
    let failed = (!edits.is_empty()).then(|| result.map(failed)).flatten();
    let mut activity = Activity {
        exit_code: check::exit_code(&output),
        failed,
        check: None,
        action: Action::Other,
        command: String::new(),
        rerun_key: String::new(),
        viewed: Vec::new(),
        edits,
    };
    if detector.is_file_tool(&call.name) || !detector.is_shell_tool(&call.name) {
        let sub = args.get("command").and_then(Value::as_str).unwrap_or("");
        let path = ["path", "file_path", "filename", "file", "target_file"]
            .iter()
            .find_map(|k| args.get(*k).and_then(Value::as_str))
            .unwrap_or("");
        let line = format!("{} {sub} {path}", call.name);
        activity.command = one_line(&line, 200);
        activity.rerun_key = format!("{} {}", call.name, call.arguments);
        let reads = matches!(sub, "view" | "read")
            || matches!(call.name.as_str(), "Read" | "read_file" | "view_file");
        if !activity.edits.is_empty() {
            activity.action = Action::Edit;
        } else if reads && !path.is_empty() {
            activity.action = Action::View;
            activity.viewed.push(path.to_string());
        }
        return activity;
    }
    let Some(script) = edit::shell_script(&call.arguments, &args) else {
        activity.command = call.name.clone();
        activity.rerun_key = call.name.clone();
        return activity;
    };
    activity.command = one_line(check::first_line(&script), 200);
    activity.rerun_key = script.split_whitespace().collect::<Vec<_>>().join(" ");
    activity.check = check::check(&script, &output);
    let (action, viewed) = reading(&script);
    activity.viewed = viewed;
    activity.action = if !activity.edits.is_empty() {
        Action::Edit
    } else if activity.check.is_some() {
        Action::Check
    } else {
        action
    };
    activity
}

/// What a shell script reads: the kind of its most telling command (a view
/// beats a search beats a listing) and the files it views.
fn reading(script: &str) -> (Action, Vec<String>) {
    let mut best = Action::Other;
    let mut viewed = Vec::new();
    let rank = |a: Action| match a {
        Action::View => 3,
        Action::Search => 2,
        Action::Listing => 1,
        _ => 0,
    };
    for cmd in shell::parse(script) {
        let Some((_, program)) = cmd.program() else {
            continue;
        };
        let args = cmd.args();
        let operands: Vec<&String> = args.iter().filter(|a| !a.starts_with('-')).collect();
        let action = match program {
            "cat" | "head" | "tail" | "nl" | "less" | "more" | "bat" => {
                viewed.extend(operands.iter().map(|s| s.to_string()));
                Action::View
            }
            "sed" if args.iter().any(|a| a == "-n") => {
                // `sed -n '1,20p' file`: the script is the first operand.
                viewed.extend(operands.iter().skip(1).map(|s| s.to_string()));
                Action::View
            }
            "grep" | "egrep" | "fgrep" | "rg" | "ag" | "ack" => Action::Search,
            "git" if args.first().is_some_and(|a| a == "grep") => Action::Search,
            "find"
                if args
                    .iter()
                    .any(|a| matches!(a.as_str(), "-name" | "-iname" | "-path" | "-regex")) =>
            {
                Action::Search
            }
            "find" | "ls" | "tree" => Action::Listing,
            "git" if args.first().is_some_and(|a| a == "status") => Action::Listing,
            _ => Action::Other,
        };
        if rank(action) > rank(best) {
            best = action;
        }
    }
    viewed.retain(|p| !p.is_empty() && !p.starts_with("/dev/"));
    (best, viewed)
}

/// One tool call of a conversation with what it did.
#[derive(Debug, Clone)]
pub struct StepActivity {
    /// 0-based position among the conversation's tool calls.
    pub index: usize,
    /// Where the call is.
    pub call_at: PartRef,
    /// Where the result is, if any.
    pub result_at: Option<PartRef>,
    /// Message holding the call.
    pub call_message: usize,
    /// Message holding the result, if any.
    pub result_message: Option<usize>,
    /// What the call did.
    pub activity: Activity,
    /// Whether the call edits a file that existed before the session: a file
    /// the agent did not create (creating a file, or editing one the agent
    /// created, is still diagnosis). True for a failed attempt too: see
    /// [`Activity::edited`] for whether it happened.
    pub changes_existing: bool,
}

/// Every tool call of `conv`, in call order, with its activity and whether it
/// changed a pre-existing file.
///
/// A file counts as the agent's own once a `create` or an overwrite (`cat >
/// f`, `tee f`, `Write`) writes it before any earlier output or call showed
/// it; an in-place change (`sed -i`, `str_replace`, a patch) needs the file to
/// exist, so it changes a pre-existing file unless the agent made that file.
pub fn read(conv: &Conversation, config: &PhaseConfig) -> Vec<StepActivity> {
    read_cached(conv, config, &mut ActivityCache::default())
}

/// [`read`], with each step's [`classify`] remembered in `cache` by content.
pub fn read_cached(
    conv: &Conversation,
    config: &PhaseConfig,
    cache: &mut ActivityCache,
) -> Vec<StepActivity> {
    let steps = conv.steps();
    let mut out = Vec::with_capacity(steps.len());
    let mut files = OwnFiles::default();
    let mut seen = Mentioned::default();
    let settings = crate::hash::digest128(&[format!("{config:?}").as_bytes()]);
    // The id of the steps so far (`None` once one could not be keyed), under
    // which the index's answers are remembered: a warm turn asks only about
    // its new steps, so it does not rebuild the index of the whole history.
    let mut history = Some(0);
    for (index, s) in steps.iter().enumerate() {
        let key = cache.key(settings, s.call, s.result);
        let activity = cache.classify(key.as_ref(), s.call, s.result, config);
        let earlier = steps.get(..index).unwrap_or(&[]);
        let prior = history;
        let changes_existing = files.observe(&activity, |path| match prior {
            Some(prior) => cache.mentioned(prior, path, || seen.before(earlier, path)),
            None => seen.before(earlier, path),
        });
        history = prior.zip(key).map(|(h, k)| cache.extend(h, k));
        out.push(StepActivity {
            index,
            call_at: s.call_at,
            result_at: s.result_at,
            call_message: s.call_at.message,
            result_message: s.result_at.map(|r| r.message),
            activity,
            changes_existing,
        });
    }
    out
}

/// Activities of steps already classified, by the settings' digest and the
/// digests (the first 128 bits of a SHA-256) of the call's name and
/// arguments and of the result's texts, and its error flag ([`StepKey`]): a
/// cache only ([`classify`] reads nothing else), shared by every session of
/// a state, so keyed by digests no chosen text can share with another's (each
/// text's digest remembered, [`crate::hash::Digests`]), compared whole.
/// Starts over past 100,000 entries; a result with a part that is not text
/// is not cached.
#[derive(Debug, Default)]
pub struct ActivityCache {
    entries: std::collections::HashMap<StepKey, Activity>,
    /// Ids of the histories seen: a history is the id of the one before its
    /// last step (0: none) and that step's key. Ids are never reused.
    histories: std::collections::HashMap<(u64, StepKey), u64>,
    /// The last id given.
    last_history: u64,
    /// Whether the steps before a point (their history's id) mention a path,
    /// for the paths the word index answers (a direct scan depends on a budget).
    mentioned: std::collections::HashMap<(u64, String), bool>,
    /// Classifications computed (not found in the cache).
    pub classified: u64,
    /// [`check::critical_lines`] of outputs scanned before, by the digest of
    /// the output and the byte budget; and the bytes of lines held.
    critical: std::collections::HashMap<(u128, usize), check::Critical>,
    critical_bytes: usize,
    /// Digests of the texts keyed so far.
    digests: crate::hash::Digests,
}

impl ActivityCache {
    /// `ask()`, remembered under the steps before (`prior`) and `path` when
    /// the word index answers it.
    fn mentioned(&mut self, prior: u64, path: &str, ask: impl FnOnce() -> bool) -> bool {
        if index_kind(tail_of(path)).is_none() {
            return ask();
        }
        let id = (prior, path.to_string());
        if let Some(&found) = self.mentioned.get(&id) {
            return found;
        }
        let found = ask();
        if self.mentioned.len() >= 100_000 {
            self.mentioned.clear();
        }
        self.mentioned.insert(id, found);
        found
    }

    /// The id of the history `history` followed by the step `step`.
    fn extend(&mut self, history: u64, step: StepKey) -> u64 {
        if self.histories.len() >= 100_000 {
            // Answers under the ids dropped can no longer be asked for.
            self.histories.clear();
            self.mentioned.clear();
        }
        let last = &mut self.last_history;
        *self.histories.entry((history, step)).or_insert_with(|| {
            *last += 1;
            *last
        })
    }

    fn classify(
        &mut self,
        key: Option<&StepKey>,
        call: &ToolCall,
        result: Option<&ToolResult>,
        config: &PhaseConfig,
    ) -> Activity {
        if let Some(found) = key.and_then(|k| self.entries.get(k)) {
            return found.clone();
        }
        self.classified += 1;
        let activity = classify(call, result, config);
        if let Some(key) = key {
            if self.entries.len() >= 100_000 {
                self.entries.clear();
            }
            self.entries.insert(key.clone(), activity.clone());
        }
        activity
    }

    /// [`check::critical_lines`], remembered (a session clears and cites the
    /// same outputs every turn). Starts over past 4 MiB of lines.
    pub fn critical_lines(&mut self, output: &str, max_bytes: usize) -> check::Critical {
        let id = (self.digests.of(output), max_bytes);
        if let Some(found) = self.critical.get(&id) {
            return found.clone();
        }
        let found = check::critical_lines(output, max_bytes);
        let size = 32 + found.lines.iter().map(|l| l.len() + 24).sum::<usize>();
        if self.critical_bytes + size > 4 << 20 {
            self.critical.clear();
            self.critical_bytes = 0;
        }
        self.critical_bytes += size;
        self.critical.insert(id, found.clone());
        found
    }

    /// The digests of texts this cache keys by (tool results, arguments),
    /// for a cache that keys the same texts (dedup): each is hashed once.
    pub fn digests(&mut self) -> &mut crate::hash::Digests {
        &mut self.digests
    }

    /// The key of a step under `settings` (`None` when a part of its result
    /// is not text).
    fn key(
        &mut self,
        settings: u128,
        call: &ToolCall,
        result: Option<&ToolResult>,
    ) -> Option<StepKey> {
        let marker = match result {
            None => 0,
            Some(r) if r.is_error => 1,
            Some(_) => 2,
        };
        let parts = result.map_or(&[][..], |r| r.parts.as_slice());
        let mut key = Vec::with_capacity(4 + parts.len());
        key.extend([
            settings,
            self.digests.of(&call.name),
            self.digests.of(&call.arguments),
            marker,
        ]);
        for part in parts {
            key.push(self.digests.of(part.as_text()?));
        }
        Some(key.into_boxed_slice())
    }
}

/// What an [`ActivityCache`] finds a step by: the settings' digest, the
/// digests of the call's name and arguments, whether the result is missing
/// (0), an error (1) or not (2), and the digests of the result's texts.
/// Compared whole: two steps share a key only when all their texts are the
/// same (or their SHA-256s collide).
type StepKey = Box<[u128]>;

/// Bytes [`Mentioned::before`] may scan directly (for paths with characters
/// its index does not cover, e.g. spaces) in one [`read`]; past them such a
/// path counts as mentioned before.
const SCAN_BUDGET: usize = 64 << 20;

/// Whether earlier calls or outputs mention a path, as [`mentions`] over
/// each of them would say, answered from an index of their words built once
/// (so a conversation of many new files costs linear time, not quadratic).
///
/// [`mentions`] matches a path's tail between characters that cannot be part
/// of a name (not alphanumeric, `_`, `.`, `-`). For a tail made of such name
/// characters with at most one `/` (the usual `dir/name.ext`, `name.ext` or
/// `/name`), a match is exactly a *word* (a maximal run of name characters),
/// two words joined by one `/`, or a word after a `/` that follows no name
/// character; the index holds those. Other tails are searched directly,
/// within [`SCAN_BUDGET`].
#[derive(Debug, Default)]
pub struct Mentioned {
    /// Earlier steps indexed so far.
    indexed: usize,
    words: std::collections::HashSet<String>,
    pairs: std::collections::HashSet<String>,
    rooted: std::collections::HashSet<String>,
    scanned: usize,
}

/// How the index covers a path tail: 0 a word, 1 `/word`, 2 `word/word`;
/// `None` when it does not.
fn index_kind(tail: &str) -> Option<u8> {
    let words = |t: &str| !t.is_empty() && t.chars().all(name_char);
    match tail.split_once('/') {
        None if words(tail) => Some(0),
        Some(("", b)) if words(b) => Some(1),
        Some((a, b)) if words(a) && words(b) => Some(2),
        _ => None,
    }
}

/// A character that can be part of a name for [`mentions`].
fn name_char(c: char) -> bool {
    c.is_alphanumeric() || c == '_' || c == '.' || c == '-'
}

impl Mentioned {
    /// Whether a text added so far mentions `path`, when the index can say
    /// (`None` for a path whose tail it does not cover: search directly).
    pub fn holds(&self, path: &str) -> Option<bool> {
        let tail = tail_of(path);
        if tail.is_empty() {
            return Some(false);
        }
        Some(match index_kind(tail)? {
            0 => self.words.contains(tail),
            1 => self.rooted.contains(tail.get(1..).unwrap_or("")),
            _ => self.pairs.contains(tail),
        })
    }

    fn before(&mut self, earlier: &[Step<'_>], path: &str) -> bool {
        let tail = tail_of(path);
        if tail.is_empty() {
            return false;
        }
        let Some(kind) = index_kind(tail) else {
            // Not covered by the index: search, within the budget.
            for e in earlier {
                let result = e.result.map(ToolResult::text).unwrap_or_default();
                self.scanned += e.call.arguments.len() + result.len();
                if self.scanned > SCAN_BUDGET {
                    return true;
                }
                if mentions(&e.call.arguments, path) || mentions(&result, path) {
                    return true;
                }
            }
            return false;
        };
        for e in earlier.get(self.indexed..).unwrap_or(&[]) {
            self.add(&e.call.arguments);
            if let Some(r) = e.result {
                self.add(&r.text());
            }
        }
        self.indexed = self.indexed.max(earlier.len());
        match kind {
            0 => self.words.contains(tail),
            1 => self.rooted.contains(tail.get(1..).unwrap_or("")),
            _ => self.pairs.contains(tail),
        }
    }

    /// Indexes the words of `text`.
    pub fn add(&mut self, text: &str) {
        // (start, end) of the previous word, and the two characters before
        // the current word's start.
        let mut previous: Option<(usize, usize)> = None;
        let mut start: Option<usize> = None;
        let mut chars = text.char_indices().peekable();
        while let Some((i, c)) = chars.next() {
            if name_char(c) {
                if start.is_none() {
                    start = Some(i);
                }
                if chars.peek().is_some_and(|(_, n)| name_char(*n)) {
                    continue;
                }
                let (a, b) = (start.take().unwrap_or(i), i + c.len_utf8());
                let word = text.get(a..b).unwrap_or("");
                self.words.insert(word.to_string());
                let head = text.get(..a).unwrap_or("");
                if let Some(rest) = head.strip_suffix('/') {
                    if !rest.chars().next_back().is_some_and(name_char) {
                        self.rooted.insert(word.to_string());
                    }
                    if let Some((pa, _)) = previous.filter(|(_, pb)| pb + 1 == a) {
                        if let Some(pair) = text.get(pa..b) {
                            self.pairs.insert(pair.to_string());
                        }
                    }
                }
                previous = Some((a, b));
            }
        }
    }
}

/// The files the agent made itself, followed call by call (what [`read`]
/// does for a whole conversation, for hosts that see one step at a time).
///
/// Indexed, so many files cost linear time: [`same_file`] holds when the
/// two normalized paths are equal or one is the other after a `/`, so a
/// path is one of the agent's own when it or one of its `/`-suffixes is an
/// own path, or it is a `/`-suffix of one (paths of more than
/// [`DEEP`] components are compared one by one).
#[derive(Debug, Clone, Default)]
pub struct OwnFiles {
    /// Normalized own paths.
    own: std::collections::HashSet<String>,
    /// Every `/`-suffix of an own path (what follows one of its `/`).
    suffixes: std::collections::HashSet<String>,
    /// Own paths of more than [`DEEP`] components.
    deep: Vec<String>,
}

/// Components of a path beyond which [`OwnFiles`] compares it one by one.
const DEEP: usize = 64;

impl OwnFiles {
    fn contains(&self, path: &str) -> bool {
        let t = normalize(path);
        if t.is_empty() {
            return false;
        }
        if self.deep.iter().any(|o| same_file(o, t)) {
            return true;
        }
        if self.own.contains(t) || self.suffixes.contains(t) {
            return true;
        }
        let slashes: Vec<usize> = t.match_indices('/').map(|(i, _)| i).collect();
        if slashes.len() > DEEP {
            return self.own.iter().any(|o| same_file(o, t));
        }
        slashes
            .iter()
            .any(|&i| t.get(i + 1..).is_some_and(|s| self.own.contains(s)))
    }

    fn insert(&mut self, path: &str) {
        let p = normalize(path);
        if p.is_empty() {
            return;
        }
        if p.matches('/').count() > DEEP {
            self.deep.push(p.to_string());
            return;
        }
        for (i, _) in p.match_indices('/') {
            if let Some(s) = p.get(i + 1..).filter(|s| !s.is_empty()) {
                self.suffixes.insert(s.to_string());
            }
        }
        self.own.insert(p.to_string());
    }
}

impl OwnFiles {
    /// Whether `activity` edits (or tried to edit) a file that existed before the session;
    /// `seen_before(path)` says whether an earlier call or output mentioned
    /// the file. Files the call creates become the agent's own.
    pub fn observe(
        &mut self,
        activity: &Activity,
        mut seen_before: impl FnMut(&str) -> bool,
    ) -> bool {
        let failed = activity.failed == Some(true);
        let mut changes_existing = false;
        for e in &activity.edits {
            let target = e.target.as_deref();
            let mine = target.is_some_and(|t| self.contains(t));
            let existing = match e.mode {
                EditMode::Create => false,
                EditMode::InPlace => !mine,
                EditMode::Overwrite => !mine && target.is_some_and(&mut seen_before),
            };
            if existing {
                changes_existing = true;
            } else if let Some(t) = target.filter(|_| !mine && !failed) {
                self.insert(t);
            }
        }
        changes_existing
    }
}

/// Whether `text` mentions the file `path`: its last two components (or its
/// name, for a bare name) at a path boundary.
pub fn mentions(text: &str, path: &str) -> bool {
    let tail = tail_of(path);
    if tail.is_empty() {
        return false;
    }
    let boundary = |c: Option<char>| {
        c.map_or(true, |c| {
            !(c.is_alphanumeric() || c == '_' || c == '.' || c == '-')
        })
    };
    text.match_indices(tail).any(|(i, _)| {
        let before = text.get(..i).and_then(|h| h.chars().next_back());
        let after = text.get(i + tail.len()..).and_then(|t| t.chars().next());
        (boundary(before) || before == Some('/')) && boundary(after)
    })
}

/// The part of `path` [`mentions`] looks for: its last two components (or
/// the whole path, with fewer).
fn tail_of(path: &str) -> &str {
    let p = normalize(path);
    match p.rmatch_indices('/').nth(1) {
        Some((i, _)) => p.get(i + 1..).unwrap_or(""),
        None => p,
    }
}

/// The last step (index into the steps it was built from) that edited each
/// file, bucketed by file name so a look-up costs the edits of files with the
/// same name, not every edit.
#[derive(Debug, Default)]
pub struct LastEdits {
    by_name: std::collections::HashMap<String, Vec<(usize, String)>>,
}

impl LastEdits {
    /// The index of `steps` by edited file (edits that did not fail).
    pub fn of(steps: &[StepActivity]) -> Self {
        let mut by_name: std::collections::HashMap<String, Vec<(usize, String)>> =
            std::collections::HashMap::new();
        for (i, s) in steps.iter().enumerate() {
            if !s.activity.edited() {
                continue;
            }
            for t in s.activity.edits.iter().filter_map(|e| e.target.as_deref()) {
                let bucket = by_name.entry(file_name(t).to_string()).or_default();
                match bucket.iter_mut().find(|(_, p)| p == t) {
                    Some(slot) => slot.0 = i,
                    None => bucket.push((i, t.to_string())),
                }
            }
        }
        Self { by_name }
    }

    /// The last step that edited `path`, if any.
    pub fn last(&self, path: &str) -> Option<usize> {
        self.by_name
            .get(file_name(path))?
            .iter()
            .filter(|(_, t)| same_file(t, path))
            .map(|(i, _)| *i)
            .max()
    }

    /// Whether every file a view shows was edited after step `i`.
    pub fn all_edited_after(&self, viewed: &[String], i: usize) -> bool {
        !viewed.is_empty()
            && viewed
                .iter()
                .all(|v| self.last(v).is_some_and(|last| last > i))
    }
}

/// The last component of a path (after [`normalize`]).
fn file_name(path: &str) -> &str {
    let p = normalize(path);
    p.rsplit('/').next().unwrap_or(p)
}

/// Results of file views the agent may still quote (in an edit's `old_str`):
/// views of files that no later step among `steps` edited. Hosts pass the
/// settled steps (results out of the recent window) so the answer changes
/// only when a batch leaves the window.
pub fn live_views(steps: &[StepActivity]) -> Vec<PartRef> {
    let edits = LastEdits::of(steps);
    steps
        .iter()
        .enumerate()
        .filter(|(_, s)| !s.activity.viewed.is_empty())
        .filter(|(i, s)| !edits.all_edited_after(&s.activity.viewed, *i))
        .filter_map(|(_, s)| s.result_at)
        .collect()
}

/// `path` without quotes, `./` and trailing slashes.
fn normalize(path: &str) -> &str {
    let p = path.trim_matches(|c| c == '"' || c == '\'');
    let p = p.strip_prefix("./").unwrap_or(p);
    p.trim_end_matches('/')
}

/// Whether two paths name the same file: equal, or one is a `/`-suffix of the other.
pub fn same_file(a: &str, b: &str) -> bool {
    let (a, b) = (normalize(a), normalize(b));
    if a.is_empty() || b.is_empty() {
        return false;
    }
    let (long, short) = if a.len() >= b.len() { (a, b) } else { (b, a) };
    long == short
        || (long.ends_with(short)
            && long
                .get(..long.len() - short.len())
                .is_some_and(|h| h.ends_with('/')))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{Message, Part, PartKind, Role};

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
            parts: vec![Part::text(text)],
            is_error: false,
        }
    }

    fn config() -> PhaseConfig {
        PhaseConfig::default()
    }

    #[test]
    fn critical_lines_are_remembered_per_output_and_budget() {
        let mut cache = ActivityCache::default();
        let out =
            "ok\nFAILED tests/t.py::test_a - assert 1\nValueError: bad\n<returncode>1</returncode>";
        for budget in [check::CRITICAL_BYTES, 30, check::CRITICAL_BYTES] {
            assert_eq!(
                cache.critical_lines(out, budget),
                check::critical_lines(out, budget)
            );
        }
        assert_ne!(
            cache.critical_lines(out, 30),
            cache.critical_lines(out, check::CRITICAL_BYTES)
        );
        let other = "Traceback (most recent call last):\n  x\nKeyError: 'k'";
        assert_eq!(
            cache.critical_lines(other, 30),
            check::critical_lines(other, 30)
        );
    }

    /// The index answers exactly what scanning every earlier text with
    /// [`mentions`] answers, for paths of every shape.
    #[test]
    fn mentioned_index_agrees_with_mentions() {
        let texts = [
            "cat src/app/main.py",
            "ls /repo//lib/x.rs -la",
            "/top.txt and é/ü.md",
            "-a/b.c x_y/z.txt: line 3",
            "see ./docs/readme.md, and \"q/r s.txt\"",
            "a/b/c/d.py\n/e.f\nweird//g.h",
        ];
        let calls: Vec<ToolCall> = texts
            .iter()
            .map(|t| ToolCall {
                id: "c".into(),
                name: "bash".into(),
                arguments: (*t).into(),
            })
            .collect();
        let results: Vec<ToolResult> = texts.iter().rev().map(|t| result(t)).collect();
        let steps: Vec<Step<'_>> = calls
            .iter()
            .zip(&results)
            .map(|(call, r)| Step {
                call_at: PartRef {
                    message: 0,
                    part: 0,
                },
                call,
                result_at: None,
                result: Some(r),
            })
            .collect();
        let paths = [
            "src/app/main.py",
            "app/main.py",
            "main.py",
            "/repo/lib/x.rs",
            "lib/x.rs",
            "/top.txt",
            "top.txt",
            "/x/top.txt",
            "ü.md",
            "é/ü.md",
            "b.c",
            "a/b.c",
            "x_y/z.txt",
            "z.txt",
            "docs/readme.md",
            "./docs/readme.md",
            "r s.txt",
            "q/r s.txt",
            "c/d.py",
            "/e.f",
            "e.f",
            "g.h",
            "/g.h",
            "weird//g.h",
            "",
            "/",
            "absent.py",
            "la",
            "line",
        ];
        for n in 0..=steps.len() {
            let earlier = &steps[..n];
            let mut index = Mentioned::default();
            for path in paths {
                let direct = earlier.iter().any(|e| {
                    mentions(&e.call.arguments, path)
                        || e.result.is_some_and(|r| mentions(&r.text(), path))
                });
                assert_eq!(
                    index.before(earlier, path),
                    direct,
                    "{path:?} after {n} steps"
                );
            }
        }
    }

    #[test]
    fn own_files_index_agrees_with_same_file() {
        let own = ["src/gen/a.py", "/abs/b.rs", "c.txt", "./d/e/f.md", "x//y.z"];
        let probes = [
            "src/gen/a.py",
            "gen/a.py",
            "a.py",
            "/w/src/gen/a.py",
            "b.rs",
            "abs/b.rs",
            "/abs/b.rs",
            "c.txt",
            "dir/c.txt",
            "d/e/f.md",
            "e/f.md",
            "./f.md",
            "y.z",
            "/y.z",
            "x//y.z",
            "a",
            "py",
            "",
            "/",
        ];
        let mut files = OwnFiles::default();
        for o in own {
            files.insert(o);
        }
        for p in probes {
            let direct = own.iter().any(|o| same_file(o, p));
            assert_eq!(files.contains(p), direct, "{p:?}");
        }
    }

    #[test]
    fn edits_by_tool_and_shell() {
        let c = config();
        let a = classify(
            &call(
                "str_replace_editor",
                serde_json::json!({"command":"str_replace","path":"/w/a.py"}),
            ),
            Some(&result("The file /w/a.py has been edited.")),
            &c,
        );
        assert_eq!(a.edited_paths(), vec!["/w/a.py"]);
        assert_eq!(a.action, Action::Edit);
        let v = classify(
            &call(
                "str_replace_editor",
                serde_json::json!({"command":"view","path":"/w/a.py"}),
            ),
            None,
            &c,
        );
        assert!(v.edits.is_empty());
        assert_eq!(v.viewed, vec!["/w/a.py"]);
        let h = classify(
            &call(
                "bash",
                serde_json::json!({"command":"cat <<'EOF' > repro.py\nimport x\nEOF\npython3 repro.py"}),
            ),
            Some(&result(
                "<returncode>0</returncode>\n<output>\nok\n</output>",
            )),
            &c,
        );
        assert_eq!(h.edited_paths(), vec!["repro.py"]);
        assert_eq!(h.edits[0].mode, EditMode::Overwrite);
        let check = h.check.unwrap();
        assert_eq!(check.kind, CheckKind::Run);
        assert_eq!(check.outcome, Outcome::Passed);
        let edits = |cmd: &str| {
            classify(
                &call("bash", serde_json::json!({ "command": cmd })),
                None,
                &c,
            )
            .edited_paths()
        };
        assert!(edits("echo \"a > b\"").is_empty());
        assert!(edits("grep -n 'sed -i' notes.txt").is_empty());
        assert!(edits("pytest -x > log.txt 2>&1").is_empty());
        assert_eq!(
            edits("cd /w && sed -i 's/a/b/' x.py && echo ok > done.txt; git apply p.diff"),
            vec!["x.py", "done.txt", "patch"]
        );
        // A patch tool is an edit for every consumer, with or without a path.
        let p = classify(
            &call("apply_patch", serde_json::json!("*** Begin Patch")),
            None,
            &c,
        );
        assert_eq!(p.edited_paths(), vec!["patch"]);
        // A failed edit is no edit.
        let f = classify(
            &call(
                "str_replace_editor",
                serde_json::json!({"command":"str_replace","path":"/w/a.py"}),
            ),
            Some(&result("ERROR:\nNo replacement was performed")),
            &c,
        );
        assert!(!f.edited());
    }

    #[test]
    fn reading_kinds() {
        let c = config();
        let kind = |cmd: &str| {
            classify(
                &call("bash", serde_json::json!({ "command": cmd })),
                None,
                &c,
            )
        };
        assert_eq!(kind("grep -rn foo src").action, Action::Search);
        assert_eq!(kind("find . -name '*.py'").action, Action::Search);
        assert_eq!(kind("ls -la src").action, Action::Listing);
        let v = kind("sed -n '10,40p' src/a.py");
        assert_eq!(
            (v.action, v.viewed.clone()),
            (Action::View, vec!["src/a.py".to_string()])
        );
        assert_eq!(kind("cat a.py | grep x").action, Action::View);
        assert_eq!(kind("python -m pytest tests").action, Action::Check);
        assert_eq!(kind("pip install x").action, Action::Other);
    }

    fn conversation(steps: &[(&str, Value, &str)]) -> Conversation {
        let mut messages = Vec::new();
        for (i, (name, args, out)) in steps.iter().enumerate() {
            let id = format!("c{i}");
            messages.push(Message {
                role: Role::Assistant,
                parts: vec![Part::from(PartKind::ToolCall(ToolCall {
                    id: id.clone(),
                    name: name.to_string(),
                    arguments: args.to_string(),
                }))],
                ..Message::text(Role::Assistant, "")
            });
            messages.push(Message {
                role: Role::Tool,
                parts: vec![Part::from(PartKind::ToolResult(ToolResult {
                    call_id: id,
                    parts: vec![Part::text(*out)],
                    is_error: false,
                }))],
                ..Message::text(Role::Tool, "")
            });
        }
        Conversation {
            messages,
            ..Conversation::default()
        }
    }

    #[test]
    fn creating_or_editing_own_files_is_not_a_change_to_existing_code() {
        let ed = |cmd: &str, path: &str| serde_json::json!({"command": cmd, "path": path});
        let conv = conversation(&[
            (
                "bash",
                serde_json::json!({"command":"grep -rn Foo lib"}),
                "lib/core/m.py:3: class Foo:",
            ),
            (
                "str_replace_editor",
                ed("create", "/w/reproduce.py"),
                "File created successfully at: /w/reproduce.py",
            ),
            (
                "str_replace_editor",
                ed("str_replace", "/w/reproduce.py"),
                "The file /w/reproduce.py has been edited.",
            ),
            (
                "bash",
                serde_json::json!({"command":"cat > notes.txt <<'EOF'\nx\nEOF"}),
                "",
            ),
            (
                "bash",
                serde_json::json!({"command":"cat > /w/lib/core/m.py <<'EOF'\nx\nEOF"}),
                "",
            ),
            (
                "bash",
                serde_json::json!({"command":"sed -i 's/a/b/' notes.txt"}),
                "",
            ),
            (
                "bash",
                serde_json::json!({"command":"sed -i 's/a/b/' lib/other.py"}),
                "",
            ),
        ]);
        let steps = read(&conv, &config());
        let changes: Vec<bool> = steps.iter().map(|s| s.changes_existing).collect();
        assert_eq!(changes, vec![false, false, false, false, true, false, true]);
    }

    #[test]
    fn a_warm_read_answers_from_the_cache_what_a_cold_read_computes() {
        let write =
            |path: &str| serde_json::json!({"command": format!("cat > {path} <<'EOF'\nx\nEOF")});
        let mut steps = vec![(
            "bash",
            serde_json::json!({"command":"ls lib"}),
            "lib/a.py lib/b.py",
        )];
        for (i, path) in ["lib/a.py", "c.py", "lib/b.py", "c.py", "/w/a b.py"]
            .iter()
            .enumerate()
        {
            steps.push(("bash", write(path), ""));
            if i == 2 {
                steps.push((
                    "bash",
                    serde_json::json!({"command":"cat x"}),
                    "see /w/a b.py",
                ));
            }
        }
        let mut cache = ActivityCache::default();
        for n in 1..=steps.len() {
            let conv = conversation(steps.get(..n).unwrap());
            let cold: Vec<bool> = read(&conv, &config())
                .iter()
                .map(|s| s.changes_existing)
                .collect();
            let warm: Vec<bool> = read_cached(&conv, &config(), &mut cache)
                .iter()
                .map(|s| s.changes_existing)
                .collect();
            assert_eq!(cold, warm, "{n} steps");
        }
        let conv = conversation(&steps);
        let changes: Vec<bool> = read(&conv, &config())
            .iter()
            .map(|s| s.changes_existing)
            .collect();
        assert_eq!(changes, vec![false, true, false, true, false, false, true]);
        // Every answer was remembered once, under the steps before it.
        // (`cat > /w/a b.py` writes `/w/a`, a path the index covers.)
        let remembered = cache.mentioned.len();
        assert_eq!(remembered, 4);
        let mut changed = steps.clone();
        changed[0].2 = "nothing here";
        let conv = conversation(&changed);
        let steps_after: Vec<bool> = read_cached(&conv, &config(), &mut cache)
            .iter()
            .map(|s| s.changes_existing)
            .collect();
        // A different history is not answered from the old one's entries.
        assert_eq!(
            steps_after,
            vec![false, false, false, false, false, false, true]
        );
        assert_eq!(
            steps_after,
            read(&conv, &config())
                .iter()
                .map(|s| s.changes_existing)
                .collect::<Vec<_>>()
        );
        assert!(cache.mentioned.len() > remembered);
    }

    #[test]
    fn paths_match_by_suffix() {
        assert!(same_file("/workspace/repo/a/b.py", "a/b.py"));
        assert!(same_file("./a/b.py", "a/b.py"));
        assert!(!same_file("/w/xb.py", "b.py"));
        assert!(mentions("see lib/core/m.py:3", "/w/lib/core/m.py"));
        assert!(!mentions("see lib/core/m.pyc", "/w/lib/core/m.py"));
        assert!(!mentions("xm.py", "m.py"));
    }
}
