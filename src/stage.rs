//! The stage contract (layer 1): what a stage is ([`Stage`]), what it reads
//! while it runs ([`StageContext`]: settings, token meter, spill store, the
//! caches every stage shares, its own state, the [`Schedule`] committed so
//! far) and what it returns ([`StageOutput`]: its [`Change`]s, [`SpillRecord`]s,
//! notes and at most one [`Proposal`]). No stage's types appear here: each
//! stage names its own state ([`Stage::State`]); the pipeline
//! ([`crate::pipeline`]) sits above, owns every stage's state, runs them and
//! gathers what they return.
//!
//! Stages propose, the planner commits, stages apply: a stage returns a
//! [`Proposal`] ([`Stage::propose`] for demotions, [`StageContext::propose`]
//! from [`Stage::apply`] for a compaction); the pipeline hands it to the
//! planner (`crate::plan`, which no stage imports), and the stage reads what
//! was committed (the [`Schedule`], or the [`Verdict`] passed to
//! [`Stage::settle`]); the stages then touch only what was committed.

use serde::Serialize;

use crate::activity::ActivityCache;
use crate::config::Config;
use crate::error::{Error, ErrorCode, Result};
use crate::hash::key::KeyCache;
use crate::model::Conversation;
use crate::redact::{RedactCache, Redactions};
use crate::store::{self, SpillStore};
use crate::tokens::{Meter, TokenCounter};

/// The five stages, in the order they run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum StageName {
    /// Tool-output spilling.
    Spill,
    /// Cross-observation line dedup.
    Dedup,
    /// Edit-triggered diagnosis clean-up.
    Phase,
    /// Optical snapshots of older observations.
    Optical,
    /// Compaction.
    Compact,
}

/// One pipeline stage.
pub trait Stage {
    /// What the stage keeps across calls (its caches and records), owned by
    /// the pipeline's `HostState` and handed in as [`StageContext::state`].
    type State;
    /// Which stage this is.
    fn name(&self) -> StageName;
    /// Whether the stage runs under the current config.
    fn enabled(&self, cx: &StageContext<'_, Self::State>) -> bool;
    /// Why the stage does not run although its switch is not off (its one
    /// note in the report), e.g. a model that reads no images; `None` (the
    /// default) says nothing.
    fn disabled_because(&self, _cx: &StageContext<'_, Self::State>) -> Option<String> {
        None
    }
    /// Whether the stage touches only the observations the planner handed
    /// over ([`StageContext::schedule`]): the pipeline has the demotions
    /// committed before the first such stage runs.
    fn scheduled(&self) -> bool {
        false
    }
    /// The stage's demotion proposal on the conversation as it stands
    /// (asked, when it is enabled, before the demotions are committed): per
    /// observation outside the recent window, oldest first, the tokens it
    /// would save on it if handed over now. `None` (the default): it
    /// proposes none.
    fn propose(
        &self,
        _conv: &Conversation,
        _cx: &mut StageContext<'_, Self::State>,
    ) -> Result<Option<Vec<u64>>> {
        Ok(None)
    }
    /// Rewrites the conversation, recording every change in `cx` (the pipeline
    /// recounts tokens only after a stage that recorded a change). A stage
    /// that needs the planner's word first leaves its [`Proposal`] with
    /// [`StageContext::propose`] and finishes in [`settle`](Self::settle).
    fn apply(&self, conv: &mut Conversation, cx: &mut StageContext<'_, Self::State>) -> Result<()>;
    /// Finishes what [`apply`](Self::apply) proposed, once the planner ruled
    /// on it (`verdict`). The default has nothing to finish.
    fn settle(
        &self,
        _conv: &mut Conversation,
        _verdict: &Verdict,
        _cx: &mut StageContext<'_, Self::State>,
    ) -> Result<()> {
        Ok(())
    }
}

/// Caches every stage uses, kept across calls by the pipeline's `HostState`.
pub struct SharedCaches<'a> {
    /// Spill keys of texts already hashed.
    pub keys: &'a mut KeyCache,
    /// Redaction results of texts already scanned, by content hash.
    pub redacted: &'a mut RedactCache,
    /// Activities of tool calls already classified, by content.
    pub activities: &'a mut ActivityCache,
}

/// What a stage changed at one place.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Change {
    /// Stage that made the change.
    pub stage: StageName,
    /// Index into the emitted request's own list of messages (`messages`,
    /// Responses `input`, Gemini `contents`), counting the system messages
    /// that list holds and the messages the emitter adds (images moved out
    /// of tool results). A change to a message that compaction later folded
    /// into its summary indexes the summary.
    pub message: usize,
    /// What happened, e.g. `excerpt`, `dedup`, `tombstone`, `snapshot`, `summary`.
    pub kind: String,
    /// Tokens of the affected content before the change.
    pub tokens_before: u64,
    /// Tokens after the change.
    pub tokens_after: u64,
    /// Pointer to the removed original, when it was kept.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pointer: Option<String>,
    /// Short human-readable detail.
    #[serde(skip_serializing_if = "String::is_empty")]
    pub detail: String,
}

impl Change {
    /// Tokens saved by this change (0 if it grew).
    pub fn tokens_saved(&self) -> u64 {
        self.tokens_before.saturating_sub(self.tokens_after)
    }
}

/// A blob a stage put in the spill store during this call (metadata only: the
/// report never carries the removed text, which may hold secrets).
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SpillRecord {
    /// Session.
    pub session: String,
    /// Key within the session.
    pub key: String,
    /// `spill://<session>/<key>`.
    pub pointer: String,
    /// Size in bytes.
    pub bytes: usize,
    /// Number of lines.
    pub lines: usize,
}

/// The text of a blob stored during this call, so a host can persist it
/// elsewhere (a KV store) and rehydrate a store later.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SpillBlob {
    /// Session.
    pub session: String,
    /// Key within the session.
    pub key: String,
    /// The full text as stored.
    pub text: String,
}

/// What the compact stage did on a call (`Report::compaction`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct CompactionOutcome {
    /// `compacted` (a new compaction) or `reapplied` (the previous one, byte for byte).
    pub outcome: CompactionKind,
    /// Incoming messages the compaction stands for.
    pub covered: usize,
    /// A new compaction: the blob of its originals, cited by its summary.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pointer: Option<String>,
}

/// Whether a compaction is new or re-applied.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum CompactionKind {
    /// Compacted on this call (a host summarizer may replace its summary).
    Compacted,
    /// The session's previous compaction, re-applied while the history matches.
    Reapplied,
}

/// What a stage reads and uses while it runs; `S` is the running stage's own
/// state ([`Stage::State`], `()` between stages). What it returns (its
/// changes, spills, notes, redactions and proposal) is its own: the
/// pipeline takes it after each stage ([`take_output`](Self::take_output)).
pub struct StageContext<'a, S = ()> {
    /// Settings.
    pub config: &'a Config,
    /// Token pricing.
    pub meter: Meter<'a>,
    /// Where removed text goes.
    pub store: &'a mut dyn SpillStore,
    /// Spill keys of texts already hashed.
    pub keys: &'a mut KeyCache,
    /// Redaction results of texts already scanned, by content hash.
    pub redacted: &'a mut RedactCache,
    /// Activities of tool calls already classified, by content.
    pub activities: &'a mut ActivityCache,
    /// The running stage's own state across calls.
    pub state: &'a mut S,
    /// The stage now running.
    pub stage: StageName,
    /// Changes the running stage recorded.
    pub changes: Vec<Change>,
    /// Spills the running stage recorded.
    pub spills: Vec<SpillRecord>,
    /// Texts of those spills.
    pub blobs: Vec<SpillBlob>,
    /// Notes of the running stage.
    pub notes: Vec<String>,
    /// Secrets the running stage masked.
    pub redactions: Redactions,
    /// Observations the planner handed to the rewriting stages (set by the
    /// pipeline before the first [`Stage::scheduled`] stage; read-only for
    /// the stages); `None` until then, and outside the pipeline, where
    /// [`schedule`](Self::schedule) falls back to fixed batches.
    pub committed: Option<Schedule>,
    /// Tokens of each message, system prompt first, as the last stage left
    /// them (the pipeline keeps it; empty outside the pipeline).
    pub message_tokens: Vec<u64>,
    /// What the model the request goes to accepts (the capability table's
    /// reading of `config.model`, or of the request's `model` in the pipeline).
    pub model: crate::capability::Capability,
    /// What the running stage asks the planner (see [`propose`](Self::propose)).
    proposal: Option<Proposal>,
    /// History prefixes the running stage replaced (see
    /// [`replaced_prefix`](Self::replaced_prefix)).
    replaced: Vec<Replacement>,
}

/// A history prefix a stage replaced (a compaction): `messages[..cut]`
/// became `len` messages, `folded_into` (the summary) stands for them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Replacement {
    /// Messages replaced.
    pub cut: usize,
    /// Messages that replace them.
    pub len: usize,
    /// The one a change inside the replaced range now points at.
    pub folded_into: usize,
}

impl Replacement {
    /// Where a change recorded at `message` points after the replacement.
    pub fn moved(&self, message: usize) -> usize {
        if message < self.cut {
            self.folded_into
        } else {
            message - self.cut + self.len
        }
    }
}

/// What one stage returned ([`StageContext::take_output`]).
#[derive(Debug, Default)]
pub struct StageOutput {
    /// Its changes, in order.
    pub changes: Vec<Change>,
    /// Its spills, in order.
    pub spills: Vec<SpillRecord>,
    /// Their texts.
    pub blobs: Vec<SpillBlob>,
    /// Its notes.
    pub notes: Vec<String>,
    /// Secrets it masked.
    pub redactions: Redactions,
    /// What it asks the planner.
    pub proposal: Option<Proposal>,
    /// History prefixes it replaced, in order (changes of earlier stages
    /// follow their messages through them: [`Replacement::moved`]).
    pub replaced: Vec<Replacement>,
}

impl<'a, S> StageContext<'a, S> {
    /// A context for one call, holding `state` (the pipeline's, or a
    /// stage's own outside it, e.g. spilling one text).
    pub fn new(
        config: &'a Config,
        counter: &'a dyn TokenCounter,
        store: &'a mut dyn SpillStore,
        caches: SharedCaches<'a>,
        state: &'a mut S,
    ) -> Self {
        // A new call: what the last one hashed is not vouched for in this one.
        caches.keys.end_call();
        Self {
            config,
            meter: Meter {
                counter,
                provider: config.provider,
                optical: &config.optical,
            },
            store,
            keys: caches.keys,
            redacted: caches.redacted,
            activities: caches.activities,
            state,
            stage: StageName::Spill,
            changes: Vec::new(),
            spills: Vec::new(),
            blobs: Vec::new(),
            notes: Vec::new(),
            redactions: Redactions::default(),
            committed: None,
            message_tokens: Vec::new(),
            model: crate::capability::lookup(&config.model, &config.models),
            proposal: None,
            replaced: Vec::new(),
        }
    }

    /// The same context holding `state` instead (the next stage's), and the
    /// state it held.
    pub fn with<T>(self, state: &'a mut T) -> (StageContext<'a, T>, &'a mut S) {
        let cx = StageContext {
            config: self.config,
            meter: self.meter,
            store: self.store,
            keys: self.keys,
            redacted: self.redacted,
            activities: self.activities,
            state,
            stage: self.stage,
            changes: self.changes,
            spills: self.spills,
            blobs: self.blobs,
            notes: self.notes,
            redactions: self.redactions,
            committed: self.committed,
            message_tokens: self.message_tokens,
            model: self.model,
            proposal: self.proposal,
            replaced: self.replaced,
        };
        (cx, self.state)
    }

    /// What the running stage returned so far, leaving the context empty
    /// for the next one.
    pub fn take_output(&mut self) -> StageOutput {
        StageOutput {
            changes: std::mem::take(&mut self.changes),
            spills: std::mem::take(&mut self.spills),
            blobs: std::mem::take(&mut self.blobs),
            notes: std::mem::take(&mut self.notes),
            redactions: std::mem::take(&mut self.redactions),
            proposal: self.proposal.take(),
            replaced: std::mem::take(&mut self.replaced),
        }
    }

    /// The observations (of `observations`, oldest first) the rewriting
    /// stages may touch: the planner's schedule, else fixed batches.
    pub fn schedule(&self, observations: usize) -> Schedule {
        self.committed
            .clone()
            .unwrap_or_else(|| Schedule::fixed(self.config, observations))
    }

    /// What the running stage proposed in [`Stage::apply`], taken (the
    /// pipeline's, before it has the planner rule on it).
    pub fn take_proposal(&mut self) -> Option<Proposal> {
        self.proposal.take()
    }

    /// Leaves `proposal` (made on the conversation as it stands) for the
    /// planner: the pipeline has it ruled on after [`Stage::apply`] and
    /// hands the [`Verdict`] to [`Stage::settle`].
    pub fn propose(&mut self, proposal: Proposal) {
        self.proposal = Some(proposal);
    }

    /// The spill key `text` gets ([`crate::hash::key::content_key`]), from the session's cache.
    pub fn content_key(&mut self, kind: &str, text: &str) -> String {
        self.keys.key(kind, text)
    }

    /// Masks secrets in text that is about to reach the model (an excerpt, a
    /// snapshot, a summary), counting them for the report. Identity when
    /// `redact.enabled` is off.
    pub fn redact<'t>(&mut self, text: &'t str) -> std::borrow::Cow<'t, str> {
        if !self.config.redact.enabled {
            return std::borrow::Cow::Borrowed(text);
        }
        let (out, found) = self.redacted.redact(text);
        self.redactions.merge(&found);
        out
    }

    /// Records a change made by the running stage.
    pub fn record(
        &mut self,
        message: usize,
        kind: &str,
        before: u64,
        after: u64,
        pointer: Option<String>,
        detail: String,
    ) {
        self.changes.push(Change {
            stage: self.stage,
            message,
            kind: kind.to_string(),
            tokens_before: before,
            tokens_after: after,
            pointer,
            detail,
        });
    }

    /// Tells the report that the running stage replaced `messages[..cut]`
    /// with `len` messages (a compaction): changes recorded so far (its own
    /// here, earlier stages' in the pipeline) follow their messages, and
    /// those inside the replaced range point at `folded_into` (the summary).
    pub fn replaced_prefix(&mut self, cut: usize, len: usize, folded_into: usize) {
        let replacement = Replacement {
            cut,
            len,
            folded_into,
        };
        for c in &mut self.changes {
            c.message = replacement.moved(c.message);
        }
        self.replaced.push(replacement);
    }

    /// Keeps `text` in the spill store under a content-derived key and returns
    /// its pointer, or the reason it could not be kept (`STORE_REFUSED` when
    /// the store or `limits.maxSpillBytesPerSession` has no room).
    pub fn keep(&mut self, kind: &str, text: &str) -> std::result::Result<String, Error> {
        self.keeper().keep(kind, text)
    }

    /// [`keep`](Self::keep) without `redact.store`: for a text the caller
    /// already masked (compaction masks each original before it lays out its
    /// blob, so the line numbers it cites hold).
    pub fn keep_as_is(&mut self, kind: &str, text: &str) -> std::result::Result<String, Error> {
        self.keeper().keep_as_is(kind, text)
    }

    fn keeper(&mut self) -> Keeper<'_> {
        Keeper {
            config: self.config,
            store: &mut *self.store,
            keys: &mut *self.keys,
            spills: &mut self.spills,
            blobs: &mut self.blobs,
            redactions: &mut self.redactions,
        }
    }
}

/// The tool results of `conv` whose tool `excludeTools` names: dedup, the
/// phase clean-up, optical snapshots and compaction keep them as they are
/// (empty, without reading the calls, when nothing is excluded).
pub fn excluded_results(
    conv: &Conversation,
    config: &Config,
) -> std::collections::HashSet<crate::model::PartRef> {
    if config.exclude_tools.is_empty() {
        return std::collections::HashSet::new();
    }
    conv.steps()
        .into_iter()
        .filter(|s| config.excludes(&s.call.name))
        .filter_map(|s| s.result_at)
        .collect()
}

/// What keeping a text touches: the [`StageContext`] fields that do not
/// depend on the stage's state, so this code exists once, not per stage.
struct Keeper<'k> {
    config: &'k Config,
    store: &'k mut dyn SpillStore,
    keys: &'k mut KeyCache,
    spills: &'k mut Vec<SpillRecord>,
    blobs: &'k mut Vec<SpillBlob>,
    redactions: &'k mut Redactions,
}

impl Keeper<'_> {
    fn keep(&mut self, kind: &str, text: &str) -> std::result::Result<String, Error> {
        if self.config.redact.store {
            let (out, found) = crate::redact::redact(text);
            self.redactions.merge(&found);
            return self.keep_as_is(kind, &out);
        }
        self.keep_as_is(kind, text)
    }

    fn keep_as_is(&mut self, kind: &str, text: &str) -> std::result::Result<String, Error> {
        let session = self.config.session.clone();
        let session = session.as_str();
        let (key, hashed) = self.keys.key_hashed(kind, text);
        let hashed = hashed || self.keys.vouches(&key, text);
        let existed = self.store.contains(session, &key);
        if !existed {
            let held = self.store.session_bytes(session);
            let limit = self.config.limits.max_spill_bytes_per_session;
            if held.saturating_add(text.len()) > limit {
                return Err(Error::new(
                    ErrorCode::StoreRefused,
                    "limits.maxSpillBytesPerSession",
                    format!(
                        "the session's spill quota is full ({held} bytes held + {} new > {limit})",
                        text.len()
                    ),
                ));
            }
        }
        if hashed {
            self.store.put_hashed(session, &key, text)?;
        } else {
            self.store.put(session, &key, text)?;
        }
        let pointer = self.config.pointer(&key);
        if !existed && !self.spills.iter().any(|s| s.key == key) {
            self.spills.push(SpillRecord {
                session: session.to_string(),
                key: key.clone(),
                pointer: pointer.clone(),
                bytes: text.len(),
                lines: store::lines::count(text),
            });
            self.blobs.push(SpillBlob {
                session: session.to_string(),
                key,
                text: text.to_string(),
            });
        }
        Ok(pointer)
    }
}

/// A rewrite a stage proposes; the planner commits it now or defers it.
#[derive(Debug, Clone, PartialEq)]
pub enum Proposal {
    /// Hand the observations that left the recent window to the rewriting
    /// stages: per observation outside the window (oldest first), the tokens
    /// the proposing stages would save on it; `None` when no stage proposes
    /// (then they move in fixed batches).
    Demotion(Option<Vec<u64>>),
    /// Replace the history before the kept tail by a summary now.
    Compaction(CompactionProposal),
}

/// What the compact stage proposes: the figures only it knows (the planner
/// reads the rest, what the cache holds and how the request grows, from
/// the history).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CompactionProposal {
    /// First message after the previous compaction's summary (0 without one).
    pub start: usize,
    /// First message it keeps: `start..cut` is what the summary replaces.
    pub cut: usize,
    /// Tokens of the request now.
    pub tokens: u64,
    /// Tokens the compaction saves.
    pub saving: u64,
    /// Tokens at the start of the compacted request that stay cached (the
    /// system prompt, the user's messages kept first, an unchanged archive).
    pub stable: u64,
    /// Above this many tokens a compaction is forced.
    pub forced: u64,
}

/// The planner's word on a [`Proposal`] a stage left in [`Stage::apply`],
/// as the stage reads it in [`Stage::settle`].
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Verdict {
    /// Whether the proposal goes ahead now.
    pub committed: bool,
    /// Why, when the planner priced it.
    pub reason: Option<String>,
}

/// The committed demotion boundaries of the history: how many observations
/// (oldest first) the rewriting stages could touch after each move.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Schedule {
    /// Demoted counts after each committed move, increasing.
    pub boundaries: Vec<usize>,
    /// The recent window (`Config::window`).
    pub window: usize,
}

impl Schedule {
    /// Moves in fixed batches of `optical.batch` (the planner off, or
    /// nothing proposed): after `observations` arrived, every whole batch of
    /// those that left the recent window (`config.window`) has moved, so the
    /// demoted count changes once every `batch` turns.
    pub fn fixed(config: &Config, observations: usize) -> Self {
        let step = config.optical.batch.max(1);
        let demoted = observations.saturating_sub(config.window) / step;
        Self {
            boundaries: (1..=demoted).map(|i| i * step).collect(),
            window: config.window,
        }
    }

    /// Observations handed to the rewriting stages now.
    pub fn demoted(&self) -> usize {
        self.boundaries.last().copied().unwrap_or(0)
    }

    /// Of `observations`, how many the prompt may reflect: all of them while
    /// the recent window fills, then the window as it was at the last move.
    pub fn settled(&self, observations: usize) -> usize {
        observations.min(self.window + self.demoted())
    }

    /// The demoted count after the first move that handed over observation
    /// `index` (or the current count when none has yet).
    pub fn first_covering(&self, index: usize) -> usize {
        self.boundaries
            .iter()
            .copied()
            .find(|&b| b > index)
            .unwrap_or_else(|| self.demoted())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::MemoryStore;
    use crate::tokens::Estimator;

    /// Runs `f` with a stage context over `config` (fresh store and caches).
    fn with_context(config: &Config, f: impl FnOnce(&mut StageContext<'_>)) {
        let mut store = MemoryStore::new();
        let (mut keys, mut redacted, mut activities) = Default::default();
        let caches = SharedCaches {
            keys: &mut keys,
            redacted: &mut redacted,
            activities: &mut activities,
        };
        let mut state = ();
        f(&mut StageContext::new(
            config, &Estimator, &mut store, caches, &mut state,
        ));
    }

    /// Outside the pipeline nothing was committed: demotions come in fixed batches.
    #[test]
    fn without_a_committed_schedule_demotions_are_fixed() {
        let config = Config {
            window: 2,
            ..Config::default()
        };
        with_context(&config, |cx| {
            assert!(cx.committed.is_none());
            assert_eq!(cx.schedule(9), Schedule::fixed(&config, 9));
            cx.committed = Some(Schedule {
                boundaries: vec![3, 7],
                window: 2,
            });
            assert_eq!(cx.schedule(50).demoted(), 7);
            assert_eq!(cx.schedule(50).first_covering(4), 7);
        });
    }

    /// What a stage returns is taken whole, and the next stage starts empty.
    #[test]
    fn a_stage_returns_its_own_records_and_proposal() {
        with_context(&Config::default(), |cx| {
            cx.record(5, "dedup", 10, 4, None, String::new());
            cx.record(1, "dedup", 10, 4, None, String::new());
            cx.replaced_prefix(3, 2, 1);
            cx.notes.push("note".into());
            cx.propose(Proposal::Demotion(None));
            let out = cx.take_output();
            let at: Vec<usize> = out.changes.iter().map(|c| c.message).collect();
            assert_eq!(at, [4, 1], "after the cut they move, inside it they fold");
            assert_eq!(
                out.replaced,
                [Replacement {
                    cut: 3,
                    len: 2,
                    folded_into: 1
                }]
            );
            assert_eq!(out.proposal, Some(Proposal::Demotion(None)));
            assert_eq!(out.notes, ["note"]);
            let empty = cx.take_output();
            assert!(empty.changes.is_empty() && empty.proposal.is_none());
        });
    }
}
