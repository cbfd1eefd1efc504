//! How likely the agent needs an observation again: the evidence the history
//! holds ([`Recall::of`]) and a documented model over it
//! ([`Recall::likelihood`]), keyed to no agent, tool name or trace.
//!
//! **Facts** are what an agent copies from tool output into its next calls:
//! file names (`name.ext`; a path is known by its last component) and
//! code-like identifiers (`[A-Za-z_][A-Za-z0-9_]{3,}` holding a
//! `_`, a digit or an inner capital: plain words and numbers are too common
//! to say which output was read). A fact an assistant message (its text or
//! its calls' arguments) holds for the first time is a **use** of the latest
//! observation that held it before (a fact the user or agent already wrote
//! needs no output to be used again); a call that names a `spill://` pointer
//! is a **re-read**.
//!
//! **Model.** Judged at the request ending before message `end`, observation
//! `k` is needed again within `H` turns with probability
//! `1 − exp(−λ·H)`, where `λ = (u + ρ·β) / (e + β)` is its rate of use per
//! turn: `u` uses in the `e` turns since it arrived, shrunk toward the
//! session's rate `ρ` with a weight of `β` ([`PRIOR_TURNS`]) turns. `ρ` is
//! what this session did with outputs that had left the recent window: uses
//! of them plus re-reads, per turn and per such output. An output superseded
//! by a later identical call (its facts are in the newer output) has
//! probability 0. Pure: a function of the messages before `end` only, so a
//! decision taken on an earlier request reads the same figures later.

use std::cell::OnceCell;
use std::collections::{HashMap, HashSet};

use crate::hash::Fnv1a;
use crate::model::{Conversation, PartKind, Role};

/// Turns of evidence the session's rate weighs as, against an output's own.
pub const PRIOR_TURNS: f64 = 5.0;

/// What the history says about one observation (tool result).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Evidence {
    /// Its message.
    pub message: usize,
    /// Facts it holds that no earlier message of the user or the agent held.
    pub facts: usize,
    /// Assistant messages that used one of its facts (it was the latest
    /// observation holding it), increasing.
    pub uses: Vec<usize>,
    /// The assistant message of the first later call identical to the one it
    /// answers (name and arguments): its output is superseded from there.
    pub superseded_at: Option<usize>,
}

/// The evidence of a conversation, per observation in
/// [`Conversation::observations`] order.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Recall {
    /// Per observation, oldest first.
    pub observations: Vec<Evidence>,
    /// Per assistant message: its index, and how many uses of outputs outside
    /// the recent window plus re-reads it made.
    pub turns: Vec<(usize, u32)>,
    /// Window the old uses were counted with.
    pub window: usize,
}

impl Recall {
    /// Reads the evidence of `conv`; uses of outputs at least `window`
    /// observations old count toward the session's rate.
    pub fn of(conv: &Conversation, window: usize) -> Self {
        let mut observations: Vec<Evidence> = Vec::new();
        let mut turns = Vec::new();
        // Latest observation holding each fact; facts the user or agent wrote.
        let mut source: HashMap<u64, usize> = HashMap::new();
        let mut written: HashSet<u64> = HashSet::new();
        // Observation answering each call (by id), and by name and arguments.
        let mut pending: HashMap<&str, u64> = HashMap::new();
        let mut answered: HashMap<u64, usize> = HashMap::new();
        let mut found = Vec::new();
        for (m, msg) in conv.messages.iter().enumerate() {
            if msg.role == Role::Assistant {
                found.clear();
                let mut rereads = 0u32;
                for part in &msg.parts {
                    match &part.kind {
                        PartKind::Text { text } => facts(text, &mut found),
                        PartKind::ToolCall(call) => {
                            facts(&call.arguments, &mut found);
                            if call.arguments.contains("spill://") {
                                rereads += 1;
                            }
                            let mut key = Fnv1a::default();
                            key.write(call.name.as_bytes());
                            key.write(&[0]);
                            key.write(call.arguments.as_bytes());
                            if let Some(ev) =
                                answered.get(&key.0).and_then(|&k| observations.get_mut(k))
                            {
                                ev.superseded_at.get_or_insert(m);
                            }
                            pending.insert(call.id.as_str(), key.0);
                        }
                        _ => {}
                    }
                }
                found.sort_unstable();
                found.dedup();
                let mut old = rereads;
                for f in &found {
                    // A fact the user or agent wrote before is known without
                    // the output: using it again needs no recovery.
                    if !written.insert(*f) {
                        continue;
                    }
                    let Some(ev) = source.get(f).and_then(|&k| {
                        let ev = observations.get_mut(k)?;
                        Some((k, ev))
                    }) else {
                        continue;
                    };
                    let (k, ev) = ev;
                    if ev.uses.last() != Some(&m) {
                        ev.uses.push(m);
                        if observations.len() >= k + 1 + window {
                            old += 1;
                        }
                    }
                }
                turns.push((m, old));
                continue;
            }
            for part in &msg.parts {
                match &part.kind {
                    PartKind::ToolResult(result) => {
                        let k = observations.len();
                        if let Some(key) = pending.remove(result.call_id.as_str()) {
                            answered.insert(key, k);
                        }
                        found.clear();
                        for p in &result.parts {
                            if let Some(text) = p.as_text() {
                                facts(text, &mut found);
                            }
                        }
                        found.sort_unstable();
                        found.dedup();
                        let mut new = 0;
                        for f in &found {
                            new += usize::from(!written.contains(f));
                            source.insert(*f, k);
                        }
                        observations.push(Evidence {
                            message: m,
                            facts: new,
                            uses: Vec::new(),
                            superseded_at: None,
                        });
                    }
                    PartKind::Text { text } if msg.role != Role::Tool => {
                        found.clear();
                        facts(text, &mut found);
                        written.extend(found.iter().copied());
                    }
                    _ => {}
                }
            }
        }
        Self {
            observations,
            turns,
            window,
        }
    }

    /// The session's rate `ρ` before message `end`: uses of outputs outside
    /// the recent window and re-reads, per turn and per such output (0
    /// before any output left the window).
    pub fn rate(&self, end: usize) -> f64 {
        let (mut used, mut exposure) = (0u64, 0u64);
        let mut seen = 0;
        for &(m, old) in self.turns.iter().take_while(|t| t.0 < end) {
            while self.observations.get(seen).is_some_and(|o| o.message < m) {
                seen += 1;
            }
            used += u64::from(old);
            exposure += seen.saturating_sub(self.window) as u64;
        }
        if exposure == 0 {
            0.0
        } else {
            used as f64 / exposure as f64
        }
    }

    /// The probability that observation `k` is needed within `horizon`
    /// turns, judged before message `end` with the session's rate `rate`
    /// (see the module doc).
    pub fn likelihood(&self, k: usize, end: usize, horizon: usize, rate: f64) -> f64 {
        let Some(ev) = self.observations.get(k) else {
            return 0.0;
        };
        if ev.message >= end || ev.superseded_at.is_some_and(|s| s < end) {
            return 0.0;
        }
        let uses = ev.uses.iter().take_while(|&&u| u < end).count() as f64;
        let since = |m: usize| self.turns.partition_point(|t| t.0 < m);
        let turns = since(end).saturating_sub(since(ev.message + 1)) as f64;
        let lambda = (uses + rate * PRIOR_TURNS) / (turns + PRIOR_TURNS);
        1.0 - (-lambda * horizon as f64).exp()
    }
}

/// A [`Recall`] read from its conversation on first use: planning that
/// weighs no recovery reads it only for the candidate it reports.
#[derive(Debug, Default)]
pub struct LazyRecall<'a> {
    source: Option<(&'a Conversation, usize)>,
    cell: OnceCell<Recall>,
}

impl<'a> LazyRecall<'a> {
    /// [`Recall::of`]`(conv, window)`, when first asked for.
    pub fn of(conv: &'a Conversation, window: usize) -> Self {
        Self {
            source: Some((conv, window)),
            cell: OnceCell::new(),
        }
    }

    /// The evidence (read now if not yet).
    pub fn get(&self) -> &Recall {
        self.cell.get_or_init(|| {
            self.source
                .map_or_else(Recall::default, |(conv, window)| Recall::of(conv, window))
        })
    }
}

impl From<Recall> for LazyRecall<'_> {
    fn from(recall: Recall) -> Self {
        Self {
            source: None,
            cell: OnceCell::from(recall),
        }
    }
}

/// Pushes the hash of every fact of `text` (see the module doc) onto `out`.
/// Bytes, not chars: every character a fact holds is ASCII, so splitting at
/// every other byte finds the same words.
pub fn facts(text: &str, out: &mut Vec<u64>) {
    let token = |b: &u8| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'.' | b'/' | b'-');
    let edge = |b: &u8| matches!(b, b'.' | b'/' | b'-');
    for word in text.as_bytes().split(|b| !token(b)) {
        let start = word.iter().position(|b| !edge(b)).unwrap_or(word.len());
        let end = word.iter().rposition(|b| !edge(b)).map_or(start, |i| i + 1);
        let word = word.get(start..end).unwrap_or_default();
        if word.len() < 4 {
            continue;
        }
        // A path is known by its file name.
        let word = word.rsplit(|&b| b == b'/').next().unwrap_or_default();
        if file_name(word) {
            out.push(Fnv1a::of(word));
        }
        for piece in word.split(|&b| b == b'.' || b == b'-') {
            if code_like(piece) {
                out.push(Fnv1a::of(piece));
            }
        }
    }
}

/// `name.ext`: a name, one dot, an extension of 1–5 letters or digits starting with a letter.
fn file_name(word: &[u8]) -> bool {
    let Some(dot) = word.iter().rposition(|&b| b == b'.') else {
        return false;
    };
    let (name, ext) = (
        word.get(..dot).unwrap_or_default(),
        word.get(dot + 1..).unwrap_or_default(),
    );
    !name.is_empty()
        && !name.contains(&b'.')
        && (1..=5).contains(&ext.len())
        && ext.first().is_some_and(u8::is_ascii_alphabetic)
        && ext.iter().all(u8::is_ascii_alphanumeric)
}

/// An identifier of 4+ characters holding a `_`, a digit or an inner capital.
fn code_like(piece: &[u8]) -> bool {
    let Some((&first, rest)) = piece.split_first() else {
        return false;
    };
    if piece.len() < 4 || !(first.is_ascii_alphabetic() || first == b'_') {
        return false;
    }
    rest.iter().all(|&b| b.is_ascii_alphanumeric() || b == b'_')
        && (first == b'_'
            || rest
                .iter()
                .any(|&b| b == b'_' || b.is_ascii_digit() || b.is_ascii_uppercase()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{Layout, Message, Part, ToolCall, ToolResult};

    fn call(id: &str, args: &str, thought: &str) -> Message {
        let mut parts = vec![];
        if !thought.is_empty() {
            parts.push(Part::text(thought));
        }
        parts.push(Part::from(PartKind::ToolCall(ToolCall {
            id: id.into(),
            name: "bash".into(),
            arguments: args.into(),
        })));
        Message {
            role: Role::Assistant,
            parts,
            layout: Layout::Null,
            extra: Default::default(),
        }
    }

    fn result(id: &str, text: &str) -> Message {
        Message {
            role: Role::Tool,
            parts: vec![Part::from(PartKind::ToolResult(ToolResult {
                call_id: id.into(),
                parts: vec![Part::text(text)],
                is_error: false,
            }))],
            layout: Layout::Text,
            extra: Default::default(),
        }
    }

    fn hashes(text: &str) -> Vec<u64> {
        let mut out = Vec::new();
        facts(text, &mut out);
        out
    }

    #[test]
    fn facts_are_file_names_and_code_like_identifiers() {
        let h = |s: &str| Fnv1a::of(s.as_bytes());
        let found = hashes("see /testbed/astropy/separable.py: def _cstack(left) and CompoundModel, line 245 of models.py");
        assert!(found.contains(&h("separable.py")));
        assert!(found.contains(&h("_cstack")));
        assert!(found.contains(&h("CompoundModel")));
        assert!(found.contains(&h("models.py")));
        // Plain words and numbers say nothing about which output was read.
        assert!(!found.contains(&h("line")) && !found.contains(&h("left")));
        assert!(!found.contains(&h("245")));
    }

    /// A task, then three outputs; the agent goes on to use the first's facts.
    fn session() -> Conversation {
        let mut conv = Conversation::default();
        conv.messages
            .push(Message::text(Role::User, "fix separable.py"));
        conv.messages.push(call("a", r#"{"cmd":"grep -rn x"}"#, ""));
        conv.messages.push(result(
            "a",
            "src/core_models.py:12: def _cstack_impl\nsrc/other_mod.py",
        ));
        conv.messages.push(call("b", r#"{"cmd":"ls"}"#, ""));
        conv.messages
            .push(result("b", "unused_thing.py\nsetup_cfg_v2"));
        conv.messages.push(call(
            "c",
            r#"{"cmd":"cat core_models.py"}"#,
            "look at _cstack_impl",
        ));
        conv.messages.push(result("c", "def _cstack_impl(): pass"));
        conv.messages.push(call("d", r#"{"cmd":"ls"}"#, ""));
        conv.messages
            .push(result("d", "unused_thing.py\nsetup_cfg_v2"));
        conv
    }

    #[test]
    fn used_outputs_are_likelier_needed_than_unreferenced_ones() {
        let conv = session();
        let recall = Recall::of(&conv, 1);
        assert_eq!(recall.observations.len(), 4);
        let first = &recall.observations[0];
        // `_cstack_impl` and `core_models.py`, used by the call at message 5.
        assert_eq!(first.uses, vec![5]);
        // `core_models.py`, `core_models`, `_cstack_impl`, `other_mod.py`,
        // `other_mod`; `separable.py` came from the task, not from output.
        assert_eq!(first.facts, 5);
        let end = conv.messages.len();
        let rate = recall.rate(end);
        assert!(rate > 0.0);
        let used = recall.likelihood(0, 7, 10, rate);
        let unused = recall.likelihood(1, 7, 10, rate);
        assert!(used > unused, "{used} vs {unused}");
        assert!((0.0..=1.0).contains(&used));
        // The second `ls` supersedes the first from message 7 on.
        assert_eq!(recall.observations[1].superseded_at, Some(7));
        assert_eq!(recall.likelihood(1, end, 10, rate), 0.0);
        // Judged before the use, nothing distinguishes the first output.
        assert_eq!(recall.observations[0].uses.first(), Some(&5));
        let before = recall.likelihood(0, 5, 10, recall.rate(5));
        assert!(before < used);
        // An output not yet in the request is not needed from it.
        assert_eq!(recall.likelihood(3, 7, 10, rate), 0.0);
    }

    #[test]
    fn a_longer_horizon_is_likelier_to_need_it() {
        let conv = session();
        let recall = Recall::of(&conv, 1);
        let rate = recall.rate(7);
        assert!(recall.likelihood(0, 7, 20, rate) > recall.likelihood(0, 7, 5, rate));
    }
}
