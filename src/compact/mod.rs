//! Stage 5, compaction: replaces the older part of a long conversation by a
//! verbatim archive of the user's constraints and a five-section summary,
//! keeping the system prompt and the last `compact.keep` messages (never
//! separating a tool call from its result).
//!
//! * Triggers ([`trigger`]): the token threshold (never closer to the budget
//!   than one capped tool result), a stage boundary (a passing test or run
//!   after an edit, `options.stageBoundary`, or [`CompactState::finish_stage`]),
//!   with hysteresis (`compact.minTurns`) unless the budget forces it.
//! * Tasks ([`tasks`]): in a session of several tasks (each user message
//!   starts one), a compaction under `compact.taskFirst` tokens takes the
//!   earlier tasks only; the current task's outputs stay until then.
//! * Summary ([`summary`], [`extractive`]): deterministic and extractive by
//!   default; every fact cites where its original is: the compaction's one
//!   spill blob ([`blob`]) and its lines, `spill://<session>/<key> (lines
//!   a-b)`. A later compaction merges the previous summary (kept in the new
//!   blob).
//! * Cost: linear in the compacted messages, and bounded per call:
//!   `limits.maxCompactMessages` and `limits.maxCompactBytes` cut a longer
//!   history into chunks compacted over several calls, oldest first.
//! * Host summarizers ([`prompt`], [`adopt_summary`]): after a compaction the
//!   prepared prompt waits in the session state; the host's (async) summarizer
//!   answers it and [`adopt_summary`] swaps the validated text in.
//! * Planner: the stage drafts the compaction, leaves its proposal
//!   ([`crate::stage::Proposal::Compaction`]) in the context and compacts
//!   in [`Stage::settle`] only when the planner (`crate::plan::compaction`,
//!   which the pipeline asks) commits it (it pays over the planner's
//!   horizon, given prompt-cache prices), or at once when the budget forces
//!   it.
//! * Prefix stability: the session state remembers each compaction and
//!   re-applies it byte for byte while the history still starts the same way.
//! * Excluded tools (`excludeTools`): their outputs stay word for word after
//!   the summary ([`kept`]), at this compaction and every later one.

pub mod adopt;
pub mod api;
pub mod blob;
pub mod calls;
pub mod constraints;
pub mod cut;
mod draft;
pub mod extractive;
pub mod kept;
mod prior;
pub mod prompt;
pub mod state;
pub mod summary;
pub mod tasks;
pub use crate::text;
pub mod trigger;
pub mod views;

pub use adopt::{adopt_summary, validate_summary};
pub use state::CompactState;

use blob::BLOB_KIND;
use constraints::ConstraintArchive;
use draft::{chunk_end, Draft};
use prior::{fingerprint, is_archive, is_user_authored, Prior};
use state::{CompactionRecord, PendingSummary};
use trigger::{stage_boundaries, turns_after, StepActivity, Thresholds};

use crate::error::Result;
use crate::hash::Fnv1a;
use crate::model::{Conversation, Message, Role};
use crate::stage::{
    CompactionKind, CompactionOutcome, CompactionProposal, Proposal, Stage, StageContext,
    StageName, Verdict,
};

/// The compact stage.
#[derive(Debug, Default)]
pub struct Compact;

impl Stage for Compact {
    type State = CompactState;

    fn name(&self) -> StageName {
        StageName::Compact
    }

    fn enabled(&self, cx: &StageContext<'_, CompactState>) -> bool {
        cx.config.compact.enabled
    }

    /// Re-applies the last compaction, then drafts a new one when a trigger
    /// fires; one the planner prices is proposed and waits for
    /// [`settle`](Stage::settle), else it is applied now.
    fn apply(
        &self,
        conv: &mut Conversation,
        cx: &mut StageContext<'_, CompactState>,
    ) -> Result<()> {
        let Some(drafted) = draft(conv, cx)? else {
            return Ok(());
        };
        if drafted.priced {
            cx.propose(Proposal::Compaction(drafted.proposal));
            cx.state.drafted = Some(Box::new(drafted));
            return Ok(());
        }
        finish(conv, cx, drafted)
    }

    /// Applies the drafted compaction the planner committed; notes why not
    /// when it deferred it.
    fn settle(
        &self,
        conv: &mut Conversation,
        verdict: &Verdict,
        cx: &mut StageContext<'_, CompactState>,
    ) -> Result<()> {
        let Some(mut drafted) = cx.state.drafted.take() else {
            return Ok(());
        };
        if let Some(reason) = &verdict.reason {
            drafted.why.push_str(&format!("; {reason}"));
        }
        if !verdict.committed {
            cx.notes.push(format!("not compacting: {}", drafted.why));
            return Ok(());
        }
        finish(conv, cx, *drafted)
    }
}

/// A compaction drafted on this call: what it replaces and with what, and
/// the proposal the planner weighs (kept in [`CompactState`] between
/// [`Stage::apply`] and [`Stage::settle`] when it is priced).
pub(crate) struct Drafted {
    draft: Draft,
    prior: Prior,
    steps: Vec<StepActivity>,
    base: Option<Base>,
    cut: usize,
    removed: u64,
    added: u64,
    /// The trigger and the figures, for the report.
    why: String,
    proposal: CompactionProposal,
    /// Whether the planner rules on it (else it goes ahead now: forced, or
    /// `compact.planner` off).
    priced: bool,
}

impl std::fmt::Debug for Drafted {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Drafted")
            .field("proposal", &self.proposal)
            .field("priced", &self.priced)
            .finish_non_exhaustive()
    }
}

/// What fired: the step activity since the previous summary, the tokens of
/// the request, the thresholds and the trigger's name.
struct Fired {
    steps: Vec<StepActivity>,
    tokens: u64,
    limits: Thresholds,
    trigger: &'static str,
}

/// Re-applies the session's last compaction, then, when a trigger fires
/// and a cut keeps every tool call with its result, drafts the compaction
/// (notes say why not otherwise).
fn draft(
    conv: &mut Conversation,
    cx: &mut StageContext<'_, CompactState>,
) -> Result<Option<Drafted>> {
    let config = cx.config;
    let host_boundary = cx.state.take_boundary(&config.session) || config.stage_boundary;
    let base = reapply(conv, cx)?;
    let prior = Prior::find(conv);
    let Some(fired) = fire(conv, cx, &prior, base.is_some(), host_boundary)? else {
        return Ok(None);
    };
    let Some(cut) = choose_cut(conv, cx, &prior, &fired) else {
        return Ok(None);
    };
    let draft = Draft::build(conv, cx, &prior, &fired.steps, cut, None)?;
    let removed: u64 = sum_tokens(cx, conv.messages.get(..cut).unwrap_or(&[]))?;
    let added: u64 = sum_tokens(cx, &draft.messages)?;
    let saving = removed.saturating_sub(added);
    let (trigger, tokens, limits) = (fired.trigger, fired.tokens, fired.limits);
    let forced = tokens > limits.forced;
    if !forced && saving < config.compact.min_saving {
        cx.notes.push(format!(
            "{trigger}, but compacting would save only {saving} tokens (minSaving {})",
            config.compact.min_saving
        ));
        return Ok(None);
    }
    let mut why = format!("{trigger}: {tokens} tokens");
    if forced {
        why.push_str(&format!(
            " > {} (budget minus one capped result): forced",
            limits.forced
        ));
    }
    let priced = !forced && config.compact.planner;
    let proposal = CompactionProposal {
        start: prior.start,
        cut,
        tokens,
        saving,
        stable: if priced {
            kept_cached(conv, cx, &draft)?
        } else {
            0
        },
        forced: limits.forced,
    };
    Ok(Some(Drafted {
        draft,
        prior,
        steps: fired.steps,
        base,
        cut,
        removed,
        added,
        why,
        proposal,
        priced,
    }))
}

/// Whether a compaction trigger fires on `conv` (the token threshold, a
/// host's or a detected stage boundary) and the last compaction is far
/// enough back (`compact.minTurns`, unless forced).
fn fire(
    conv: &Conversation,
    cx: &mut StageContext<'_, CompactState>,
    prior: &Prior,
    reapplied: bool,
    host_boundary: bool,
) -> Result<Option<Fired>> {
    let config = cx.config;
    // The pipeline's per-message counts, unless re-applying moved them.
    let tokens = if !reapplied && cx.message_tokens.len() == conv.system.len() + conv.messages.len()
    {
        cx.message_tokens.iter().sum()
    } else {
        cx.meter.conversation(conv)?
    };
    let limits = Thresholds::of(config);
    let steps: Vec<StepActivity> = crate::activity::read_cached(conv, &config.phase, cx.activities)
        .into_iter()
        .filter(|s| s.call_message >= prior.start)
        .collect();
    let detected = config.compact.detect_stages
        && !steps.is_empty()
        && stage_boundaries(&steps).last() == Some(&(steps.len() - 1));
    let trigger = if tokens > limits.threshold {
        "threshold"
    } else if host_boundary {
        "stage boundary (host)"
    } else if detected {
        "stage boundary (passing check after an edit)"
    } else {
        cx.notes.push(format!(
            "no trigger: {tokens} tokens <= threshold {}",
            limits.threshold
        ));
        return Ok(None);
    };
    if let Some(turns) = prior.summary_at.map(|at| turns_after(conv, at)) {
        if tokens <= limits.forced && turns < config.compact.min_turns {
            cx.notes.push(format!(
                "{trigger}, but only {turns} turns since the last compaction (minTurns {})",
                config.compact.min_turns
            ));
            return Ok(None);
        }
    }
    Ok(Some(Fired {
        steps,
        tokens,
        limits,
        trigger,
    }))
}

/// The first message kept: before the last `compact.keep` messages and
/// within `limits.maxCompactMessages`/`maxCompactBytes` (later calls
/// compact the rest), never splitting a tool call from its result.
fn choose_cut(
    conv: &Conversation,
    cx: &mut StageContext<'_, CompactState>,
    prior: &Prior,
    fired: &Fired,
) -> Option<usize> {
    let config = cx.config;
    let trigger = fired.trigger;
    let blocked = cut::blocked(conv);
    let task_first = config.compact.task_first.min(fired.limits.threshold);
    let scope = tasks::scope(conv, prior.start, &blocked, fired.tokens, task_first);
    if scope == tasks::Scope::CurrentTask {
        cx.notes.push(format!(
            "{trigger}, but what is left to compact is the current task's: kept while under {task_first} tokens (compact.taskFirst)"
        ));
        return None;
    }
    let tail = match scope {
        tasks::Scope::EarlierTasks(task) => Some(task),
        _ => conv.messages.len().checked_sub(config.compact.keep),
    };
    let Some(cut) = tail.and_then(|c| cut::last_free(&blocked, prior.start, c)) else {
        cx.notes.push(format!(
            "{trigger}, but nothing to compact before the last {} messages without splitting a tool call from its result",
            config.compact.keep
        ));
        return None;
    };
    let limit = chunk_end(conv, prior.start, cut, &config.limits);
    if limit >= cut {
        return Some(cut);
    }
    let Some(chunk) = cut::last_free(&blocked, prior.start, limit) else {
        cx.notes.push(format!(
            "{trigger}, but no cut within limits.maxCompactMessages ({}) and limits.maxCompactBytes ({}) keeps every tool call with its result",
            config.limits.max_compact_messages, config.limits.max_compact_bytes
        ));
        return None;
    };
    cx.notes.push(format!(
        "compacting the oldest {} of the {} messages before the kept tail (limits.maxCompactMessages {}, limits.maxCompactBytes {}); later calls compact the rest",
        chunk - prior.start,
        cut - prior.start,
        config.limits.max_compact_messages,
        config.limits.max_compact_bytes
    ));
    Some(chunk)
}

/// Applies `drafted`: keeps every original in one blob (already masked
/// under `redact.store`; if the store refuses, it does not compact),
/// replaces the compacted messages and remembers the compaction.
fn finish(
    conv: &mut Conversation,
    cx: &mut StageContext<'_, CompactState>,
    drafted: Drafted,
) -> Result<()> {
    let Drafted {
        draft,
        prior,
        steps,
        base,
        cut,
        removed,
        added,
        why,
        ..
    } = drafted;
    let stored = match cx.keep_as_is(BLOB_KIND, &draft.blob) {
        Ok(p) => p,
        Err(e) => {
            cx.notes.push(format!(
                "not compacting: the spill store refused the originals ({e})"
            ));
            return Ok(());
        }
    };
    cx.redactions.merge(&draft.masked);
    let draft = if stored == draft.pointer {
        draft
    } else {
        // The store keyed the blob otherwise: cite the pointer it returned.
        Draft::build(conv, cx, &prior, &steps, cut, Some(&stored))?
    };
    let (covered, fp) = incoming(conv, base.as_ref(), cut);
    let n = cut - prior.start;
    conv.messages.splice(..cut, draft.messages.clone());
    cx.replaced_prefix(cut, draft.messages.len(), draft.summary_at);
    cx.record(
        draft.summary_at,
        "summary",
        removed,
        added,
        Some(draft.pointer.clone()),
        format!("compacted {n} messages ({} tool calls); {why}", draft.steps),
    );
    cx.notes.push(format!("compacted: {why}"));
    cx.state.outcome = Some(CompactionOutcome {
        outcome: CompactionKind::Compacted,
        covered,
        pointer: Some(draft.pointer.clone()),
    });
    remember(cx, covered, fp.0, draft);
    Ok(())
}

/// The compaction of `messages[..cut]` relative to the incoming history
/// (through the re-applied `base`): how many incoming messages it covers
/// and their fingerprint.
fn incoming(conv: &Conversation, base: Option<&Base>, cut: usize) -> (usize, Fnv1a) {
    match base {
        Some(b) => (
            b.covered + cut - b.replaced,
            fingerprint(
                Fnv1a(b.fingerprint),
                conv.messages.get(b.replaced..cut).unwrap_or(&[]),
            ),
        ),
        None => (
            cut,
            fingerprint(Fnv1a::default(), conv.messages.get(..cut).unwrap_or(&[])),
        ),
    }
}

/// Keeps the compaction just applied in the session's state: its record
/// (re-applied while the history matches) and its summary, open for a
/// host summarizer.
fn remember(
    cx: &mut StageContext<'_, CompactState>,
    covered: usize,
    fingerprint: u64,
    draft: Draft,
) {
    let s = cx
        .state
        .sessions
        .entry(cx.config.session.clone())
        .or_default();
    s.record = Some(CompactionRecord {
        covered,
        fingerprint,
        replacement: draft.messages,
    });
    s.pending = Some(PendingSummary {
        prompt: draft.prompt,
        header: draft.header,
        older: draft.older,
    });
}

/// Tokens of `messages` by the stage's meter.
pub(super) fn sum_tokens(cx: &StageContext<'_, CompactState>, messages: &[Message]) -> Result<u64> {
    let mut sum = 0;
    for m in messages {
        sum += cx.meter.message(m)?;
    }
    Ok(sum)
}

/// Tokens at the start of the request compacted as `draft` that stay in
/// the prompt cache: the system prompt, the user's messages kept first and
/// an unchanged archive.
fn kept_cached(
    conv: &Conversation,
    cx: &StageContext<'_, CompactState>,
    draft: &Draft,
) -> Result<u64> {
    let mut stable = sum_tokens(cx, &conv.system)?;
    for (new, old) in draft.messages.iter().zip(&conv.messages) {
        if new != old || !is_user_authored(new) {
            break;
        }
        stable += cx.meter.message(new)?;
    }
    if let (Some(first), Some(old)) = (draft.messages.first(), conv.messages.first()) {
        if is_archive(first) && first == old {
            stable += cx.meter.message(first)?;
        }
    }
    Ok(stable)
}

/// Appends the constraints pinned since to the archive of a compaction's
/// `replacement` (once; the archive follows the user's own messages).
fn pin_since(replacement: &mut Vec<Message>, pinned: &[String]) {
    let users = replacement
        .iter()
        .take_while(|m| is_user_authored(m))
        .count();
    if let Some(first) = replacement.get_mut(users).filter(|m| is_archive(m)) {
        if let Some(mut archive) = ConstraintArchive::parse(&first.text_content()) {
            let mut grew = false;
            for p in pinned {
                grew |= archive.add(p);
            }
            if grew {
                *first = Message::text(Role::User, archive.render());
            }
        }
    } else if !pinned.is_empty() {
        let mut archive = ConstraintArchive::default();
        for p in pinned {
            archive.add(p);
        }
        replacement.insert(users, Message::text(Role::User, archive.render()));
    }
}

/// What re-applying the previous compaction did.
struct Base {
    covered: usize,
    fingerprint: u64,
    /// Messages that stand for the `covered` incoming ones.
    replaced: usize,
}

/// Re-applies the session's last compaction while the incoming history
/// starts with the messages it covered; drops it otherwise.
fn reapply(
    conv: &mut Conversation,
    cx: &mut StageContext<'_, CompactState>,
) -> Result<Option<Base>> {
    let session = cx.config.session.clone();
    let pinned: Vec<String> = cx
        .config
        .compact
        .pinned
        .iter()
        .chain(cx.state.pinned(&session))
        .cloned()
        .collect();
    let Some(s) = cx.state.sessions.get_mut(&session) else {
        return Ok(None);
    };
    let Some(rec) = s.record.as_mut() else {
        return Ok(None);
    };
    let matches = conv.messages.len() >= rec.covered
        && fingerprint(
            Fnv1a::default(),
            conv.messages.get(..rec.covered).unwrap_or(&[]),
        )
        .0 == rec.fingerprint;
    if !matches {
        s.record = None;
        s.pending = None;
        cx.notes.push(
            "history no longer starts with the compacted messages: previous compaction dropped"
                .into(),
        );
        return Ok(None);
    }
    pin_since(&mut rec.replacement, &pinned);
    let base = Base {
        covered: rec.covered,
        fingerprint: rec.fingerprint,
        replaced: rec.replacement.len(),
    };
    let replacement = rec.replacement.clone();
    let removed = sum_tokens(cx, conv.messages.get(..base.covered).unwrap_or(&[]))?;
    let added = sum_tokens(cx, &replacement)?;
    conv.messages.splice(..base.covered, replacement);
    cx.replaced_prefix(base.covered, base.replaced, base.replaced - 1);
    cx.state.outcome = Some(CompactionOutcome {
        outcome: CompactionKind::Reapplied,
        covered: base.covered,
        pointer: None,
    });
    cx.record(
        base.replaced - 1,
        "summary",
        removed,
        added,
        None,
        format!(
            "re-applied the previous compaction of {} messages",
            base.covered
        ),
    );
    Ok(Some(base))
}
