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
//! * Planner: the stage proposes the compaction
//!   ([`crate::stage::Proposal::Compaction`]) and compacts only when the
//!   planner ([`crate::plan::compaction`]) commits it (it pays over the
//!   planner's horizon, given prompt-cache prices), or when the budget
//!   forces it.
//! * Prefix stability: the session state remembers each compaction and
//!   re-applies it byte for byte while the history still starts the same way.
//! * Excluded tools (`excludeTools`): their outputs stay word for word after
//!   the summary ([`kept`]), at this compaction and every later one.

pub mod adopt;
pub mod blob;
pub mod calls;
mod config;
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
    CompactionKind, CompactionOutcome, CompactionProposal, Proposal, Stage, StageContext, StageName,
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

    fn apply(
        &self,
        conv: &mut Conversation,
        cx: &mut StageContext<'_, CompactState>,
    ) -> Result<()> {
        let config = cx.config;
        let session = config.session.clone();
        let host_boundary = std::mem::take(
            &mut cx
                .state
                .sessions
                .entry(session.clone())
                .or_default()
                .boundary_pending,
        ) || config.stage_boundary;
        let base = reapply(conv, cx)?;
        let prior = Prior::find(conv);
        // The pipeline's per-message counts, unless re-applying moved them.
        let tokens = if base.is_none()
            && cx.message_tokens.len() == conv.system.len() + conv.messages.len()
        {
            cx.message_tokens.iter().sum()
        } else {
            cx.meter.conversation(conv)?
        };
        let limits = Thresholds::of(config);
        let steps: Vec<StepActivity> =
            crate::activity::read_cached(conv, &config.phase, cx.activities)
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
            return Ok(());
        };
        let forced = tokens > limits.forced;
        if let Some(turns) = prior.summary_at.map(|at| turns_after(conv, at)) {
            if !forced && turns < config.compact.min_turns {
                cx.notes.push(format!(
                    "{trigger}, but only {turns} turns since the last compaction (minTurns {})",
                    config.compact.min_turns
                ));
                return Ok(());
            }
        }
        let blocked = cut::blocked(conv);
        let task_first = config.compact.task_first.min(limits.threshold);
        let scope = tasks::scope(conv, prior.start, &blocked, tokens, task_first);
        if scope == tasks::Scope::CurrentTask {
            cx.notes.push(format!(
                "{trigger}, but what is left to compact is the current task's: kept while under {task_first} tokens (compact.taskFirst)"
            ));
            return Ok(());
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
            return Ok(());
        };
        let limit = chunk_end(conv, prior.start, cut, &config.limits);
        let cut = if limit < cut {
            let Some(chunk) = cut::last_free(&blocked, prior.start, limit) else {
                cx.notes.push(format!(
                    "{trigger}, but no cut within limits.maxCompactMessages ({}) and limits.maxCompactBytes ({}) keeps every tool call with its result",
                    config.limits.max_compact_messages, config.limits.max_compact_bytes
                ));
                return Ok(());
            };
            cx.notes.push(format!(
                "compacting the oldest {} of the {} messages before the kept tail (limits.maxCompactMessages {}, limits.maxCompactBytes {}); later calls compact the rest",
                chunk - prior.start,
                cut - prior.start,
                config.limits.max_compact_messages,
                config.limits.max_compact_bytes
            ));
            chunk
        } else {
            cut
        };
        let plan = Draft::build(conv, cx, &prior, &steps, cut, None)?;
        let removed: u64 = sum_tokens(cx, conv.messages.get(..cut).unwrap_or(&[]))?;
        let added: u64 = sum_tokens(cx, &plan.messages)?;
        let saving = removed.saturating_sub(added);
        if !forced && saving < config.compact.min_saving {
            cx.notes.push(format!(
                "{trigger}, but compacting would save only {saving} tokens (minSaving {})",
                config.compact.min_saving
            ));
            return Ok(());
        }
        let mut why = format!("{trigger}: {tokens} tokens");
        if forced {
            why.push_str(&format!(
                " > {} (budget minus one capped result): forced",
                limits.forced
            ));
        } else if config.compact.planner {
            let proposal = CompactionProposal {
                start: prior.start,
                cut,
                tokens,
                saving,
                stable: kept_cached(conv, cx, &plan)?,
                forced: limits.forced,
            };
            let decision = cx.commit(conv, &Proposal::Compaction(proposal))?;
            if let Some(candidate) = &decision.candidate {
                why.push_str(&format!("; {}", candidate.reason));
            }
            if !decision.committed() {
                cx.notes.push(format!("not compacting: {why}"));
                return Ok(());
            }
        }
        // Keep every original, in one blob (already masked under
        // redact.store); if the store refuses, do not compact.
        let stored = match cx.keep_as_is(BLOB_KIND, &plan.blob) {
            Ok(p) => p,
            Err(e) => {
                cx.notes.push(format!(
                    "not compacting: the spill store refused the originals ({e})"
                ));
                return Ok(());
            }
        };
        cx.redactions.merge(&plan.masked);
        let plan = if stored == plan.pointer {
            plan
        } else {
            // The store keyed the blob otherwise: cite the pointer it returned.
            Draft::build(conv, cx, &prior, &steps, cut, Some(&stored))?
        };
        let summary_at = plan.summary_at;
        // Remember the compaction relative to the incoming history.
        let (covered, fp) = match &base {
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
        };
        let n = cut - prior.start;
        conv.messages.splice(..cut, plan.messages.clone());
        cx.replaced_prefix(cut, plan.messages.len(), summary_at);
        cx.record(
            summary_at,
            "summary",
            removed,
            added,
            Some(plan.pointer.clone()),
            format!("compacted {n} messages ({} tool calls); {why}", plan.steps),
        );
        cx.notes.push(format!("compacted: {why}"));
        cx.compaction = Some(CompactionOutcome {
            outcome: CompactionKind::Compacted,
            covered,
            pointer: Some(plan.pointer.clone()),
        });
        let s = cx.state.sessions.entry(session).or_default();
        s.record = Some(CompactionRecord {
            covered,
            fingerprint: fp.0,
            replacement: plan.messages,
        });
        s.pending = Some(PendingSummary {
            prompt: plan.prompt,
            header: plan.header,
            older: plan.older,
        });
        Ok(())
    }
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
    // Constraints pinned since: append them to the archive (once). The
    // archive follows the user's own messages.
    let users = rec
        .replacement
        .iter()
        .take_while(|m| is_user_authored(m))
        .count();
    if let Some(first) = rec.replacement.get_mut(users).filter(|m| is_archive(m)) {
        if let Some(mut archive) = ConstraintArchive::parse(&first.text_content()) {
            let mut grew = false;
            for p in &pinned {
                grew |= archive.add(p);
            }
            if grew {
                *first = Message::text(Role::User, archive.render());
            }
        }
    } else if !pinned.is_empty() {
        let mut archive = ConstraintArchive::default();
        for p in &pinned {
            archive.add(p);
        }
        rec.replacement
            .insert(users, Message::text(Role::User, archive.render()));
    }
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
    cx.compaction = Some(CompactionOutcome {
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
