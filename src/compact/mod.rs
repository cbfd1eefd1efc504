//! Stage 5, compaction: replaces the older part of a long conversation by a
//! verbatim archive of the user's constraints and a five-section summary,
//! keeping the system prompt and the last `compact.keep` messages (never
//! separating a tool call from its result).
//!
//! * Triggers ([`trigger`]): the token threshold (never closer to the budget
//!   than one capped tool result), a stage boundary (a passing test or run
//!   after an edit, `options.stageBoundary`, or [`CompactState::finish_stage`]),
//!   with hysteresis (`compact.minTurns`) unless the budget forces it.
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
//! * Planner ([`crate::plan::compaction`]): compacts only when it pays over
//!   the planner's horizon, given prompt-cache prices, or when the budget
//!   forces it.
//! * Prefix stability: the session state remembers each compaction and
//!   re-applies it byte for byte while the history still starts the same way.

pub mod blob;
pub mod calls;
pub mod constraints;
pub mod cut;
pub mod extractive;
pub mod prompt;
pub mod summary;
pub mod text;
pub mod trigger;
pub mod views;

use std::collections::BTreeMap;

use blob::BLOB_KIND;
use calls::{CallLog, CALL_LOG_HEADER};
use constraints::{ConstraintArchive, ARCHIVE_HEADER};
use extractive::{transcript, Range};
use summary::{Summary, SUMMARY_MARK};
use text::Fnv;
use trigger::{stage_boundaries, turns_after, Limits, StepActivity};

use crate::config::Config;
use crate::error::{Error, ErrorCode, Result};
use crate::model::{Conversation, Message, PartKind, Role};
use crate::spill;
use crate::stage::{Stage, StageContext, StageName};

/// Most user messages dropped from the verbatim ones (`compact.userShare`)
/// that the Goal cites one by one; the rest get one line.
const MAX_DROPPED_LISTED: usize = 8;

/// Bytes of the head/tail excerpt quoting each listed dropped user message.
const DROPPED_EXCERPT_BYTES: usize = 240;

/// Most pinned constraints a session keeps.
const MAX_PINNED: usize = 100;

/// Compaction state of every session of a [`crate::SessionState`].
#[derive(Debug, Default)]
pub struct CompactState {
    sessions: BTreeMap<String, SessionCompaction>,
}

#[derive(Debug, Default)]
struct SessionCompaction {
    /// The last compaction, re-applied while the history matches.
    record: Option<CompactionRecord>,
    /// Constraints pinned with [`CompactState::pin`].
    pinned: Vec<String>,
    /// Set by [`CompactState::finish_stage`], consumed by the next call.
    boundary_pending: bool,
    /// The last compaction's summary, open for a host summarizer.
    pending: Option<PendingSummary>,
}

/// A compaction of the first `covered` incoming messages.
#[derive(Debug, Clone)]
struct CompactionRecord {
    covered: usize,
    fingerprint: u64,
    replacement: Vec<Message>,
}

/// A compaction whose extractive summary a host summarizer may replace.
#[derive(Debug, Clone)]
struct PendingSummary {
    prompt: String,
    header: String,
    /// Where the lines a summary over `compact.summaryShare` drops stay
    /// readable (the previous summary in the compaction's blob).
    older: String,
}

impl CompactState {
    /// Pins a constraint for `session`: archived word for word at the next
    /// compaction (and added to an existing archive at the next call).
    /// Returns whether it was new.
    pub fn pin(&mut self, session: &str, text: &str) -> Result<bool> {
        let t = text.trim();
        if t.is_empty() || t.len() > 4_000 {
            return Err(crate::Error::new(
                crate::ErrorCode::InvalidOption,
                "text",
                "a pinned constraint must be 1-4000 bytes of text",
            ));
        }
        let s = self.sessions.entry(session.to_string()).or_default();
        if s.pinned.iter().any(|p| p == t) {
            return Ok(false);
        }
        if s.pinned.len() >= MAX_PINNED {
            return Err(crate::Error::new(
                crate::ErrorCode::LimitExceeded,
                "pinned",
                format!("at most {MAX_PINNED} pinned constraints per session"),
            ));
        }
        s.pinned.push(t.to_string());
        Ok(true)
    }

    /// Constraints pinned for `session`.
    pub fn pinned(&self, session: &str) -> &[String] {
        self.sessions.get(session).map_or(&[], |s| &s.pinned)
    }

    /// Marks the end of a task stage: the next compress call of `session`
    /// treats it as a stage boundary.
    pub fn finish_stage(&mut self, session: &str) {
        self.sessions
            .entry(session.to_string())
            .or_default()
            .boundary_pending = true;
    }

    /// The summarization prompt of the last compaction of `session`, while a
    /// host summarizer may still replace its summary.
    pub fn pending_prompt(&self, session: &str) -> Option<&str> {
        self.sessions
            .get(session)?
            .pending
            .as_ref()
            .map(|p| p.prompt.as_str())
    }
}

/// Checks a summary text: all five sections present, once, and non-empty.
pub fn validate_summary(text: &str) -> Result<Summary> {
    Summary::parse(text).map_err(|m| Error::new(ErrorCode::SummarizerFailed, "summary", m))
}

/// Replaces the summary of the last compaction of `config.session` (in `conv`,
/// the request that compaction produced) by `text`, a host summarizer's answer
/// to the pending prompt. Validates the five sections, masks secrets (unless
/// `redact.enabled` is off), and updates the session state so later calls
/// re-apply the new summary.
pub fn adopt_summary(
    conv: &mut Conversation,
    state: &mut CompactState,
    config: &Config,
    text: &str,
) -> Result<()> {
    let parsed = validate_summary(text)?;
    let session = state.sessions.get_mut(&config.session);
    let Some((pending, s)) = session.and_then(|s| s.pending.clone().map(|p| (p, s))) else {
        return Err(Error::new(
            ErrorCode::SummarizerFailed,
            "summary",
            "no compaction of this session is waiting for a summary",
        ));
    };
    // Bounded like an extractive summary (the prompt asked for it).
    let mut parsed = parsed;
    let cap = config.budget_share(config.compact.summary_share);
    let count = |t: &str| crate::tokens::TokenCounter::count(&crate::tokens::Estimator, t);
    parsed.fit(&pending.header, cap, count, |n| {
        older_note(n, &pending.older)
    })?;
    let mut rendered = parsed.render(&pending.header);
    if config.redact.enabled {
        rendered = crate::redact::redact(&rendered).0.into_owned();
    }
    let Some(at) = conv.messages.iter().position(is_summary) else {
        return Err(Error::new(
            ErrorCode::InvalidRequest,
            "messages",
            "the request holds no TraceLite summary to replace",
        ));
    };
    if let Some(slot) = conv.messages.get_mut(at) {
        *slot = Message::text(Role::User, rendered.clone());
    }
    if let Some(rec) = s.record.as_mut() {
        if let Some(m) = rec.replacement.iter_mut().find(|m| is_summary(m)) {
            *m = Message::text(Role::User, rendered);
        }
    }
    s.pending = None;
    Ok(())
}

/// The summary line standing for `n` lines [`Summary::fit`] dropped.
fn older_note(n: usize, older: &str) -> String {
    format!("- {n} older summary lines are not repeated here (compact.summaryShare): {older}")
}

fn starts_with(m: &Message, mark: &str) -> bool {
    m.role == Role::User
        && m.parts
            .first()
            .and_then(|p| p.as_text())
            .is_some_and(|t| t.starts_with(mark))
}

fn is_summary(m: &Message) -> bool {
    starts_with(m, SUMMARY_MARK)
}

fn is_archive(m: &Message) -> bool {
    starts_with(m, ARCHIVE_HEADER)
}

fn is_call_log(m: &Message) -> bool {
    starts_with(m, CALL_LOG_HEADER)
}

/// Fingerprint of messages for re-applying a compaction: roles, user and
/// assistant text, tool call ids, names and arguments, result ids. Tool
/// result contents are left out (earlier stages may rewrite them later).
fn fingerprint(mut h: Fnv, messages: &[Message]) -> Fnv {
    for m in messages {
        h.write(&[0xff, m.role as u8]);
        for p in &m.parts {
            match &p.kind {
                PartKind::Text { text } if m.role != Role::Tool => {
                    h.write(b"t");
                    h.write(text.as_bytes());
                }
                PartKind::ToolCall(c) => {
                    h.write(b"c");
                    for f in [&c.id, &c.name, &c.arguments] {
                        h.write(f.as_bytes());
                        h.write(&[0]);
                    }
                }
                PartKind::ToolResult(r) => {
                    h.write(b"r");
                    h.write(r.call_id.as_bytes());
                }
                _ => h.write(b"o"),
            }
        }
    }
    h
}

/// The leading messages a compaction left: the user's messages kept word
/// for word, then the archive, the summary and the tool-call log.
#[derive(Debug, Default)]
struct Prior {
    /// User-authored messages kept verbatim at the start (`..users`).
    users: usize,
    archive: Option<ConstraintArchive>,
    summary_at: Option<usize>,
    calls: Option<CallLog>,
    /// File views earlier compactions kept ([`views`]).
    views: Vec<Message>,
    /// First message after them.
    start: usize,
}

impl Prior {
    fn find(conv: &Conversation) -> Self {
        let mut p = Prior::default();
        let users = conv
            .messages
            .iter()
            .take_while(|m| is_user_authored(m))
            .count();
        let mut at = users;
        let archive = conv.messages.get(at).filter(|m| is_archive(m));
        if archive.is_some() {
            at += 1;
        }
        let summary = conv.messages.get(at).is_some_and(is_summary);
        if archive.is_none() && !summary {
            return p;
        }
        p.users = users;
        p.archive = archive.and_then(|m| ConstraintArchive::parse(&m.text_content()));
        p.start = at;
        if summary {
            p.summary_at = Some(p.start);
            p.start += 1;
        }
        if let Some(m) = conv.messages.get(p.start).filter(|m| is_call_log(m)) {
            p.calls = CallLog::parse(&m.text_content());
            p.start += 1;
        }
        while let Some(m) = conv.messages.get(p.start).filter(|m| views::is_view(m)) {
            p.views.push(m.clone());
            p.start += 1;
        }
        p
    }
}

/// Whether a message is the user's own: a user message with text that is
/// none of TraceLite's (archive, summary, tool-call log) and no image (the
/// optical stage's snapshot messages are images).
fn is_user_authored(m: &Message) -> bool {
    m.role == Role::User
        && !is_summary(m)
        && !is_archive(m)
        && !is_call_log(m)
        && !views::is_view(m)
        && !m.text_content().trim().is_empty()
        && !m.parts.iter().any(|p| matches!(p.kind, PartKind::Image(_)))
}

/// The compact stage.
#[derive(Debug, Default)]
pub struct Compact;

impl Stage for Compact {
    fn name(&self) -> StageName {
        StageName::Compact
    }

    fn enabled(&self, cx: &StageContext<'_>) -> bool {
        cx.config.compact.enabled
    }

    fn apply(&self, conv: &mut Conversation, cx: &mut StageContext<'_>) -> Result<()> {
        let config = cx.config;
        let session = config.session.clone();
        let host_boundary = std::mem::take(
            &mut cx
                .state
                .compact
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
        let limits = Limits::of(config);
        let steps: Vec<StepActivity> =
            crate::activity::read_cached(conv, &config.phase, &mut cx.state.activities)
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
        let Some(cut) = conv
            .messages
            .len()
            .checked_sub(config.compact.keep)
            .and_then(|c| cut::last_free(&blocked, prior.start, c))
        else {
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
        let plan = Plan::build(conv, cx, &prior, &steps, cut, None)?;
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
            let (estimate, candidate) = planner(conv, cx, &prior, &plan, tokens, saving, limits)?;
            why.push_str(&format!("; {estimate}"));
            let committed = candidate.committed;
            cx.candidates.push(candidate);
            if !committed {
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
            Plan::build(conv, cx, &prior, &steps, cut, Some(&stored))?
        };
        let summary_at = plan.summary_at;
        // Remember the compaction relative to the incoming history.
        let (covered, fp) = match &base {
            Some(b) => (
                b.covered + cut - b.replaced,
                fingerprint(
                    Fnv(b.fingerprint),
                    conv.messages.get(b.replaced..cut).unwrap_or(&[]),
                ),
            ),
            None => (
                cut,
                fingerprint(Fnv::default(), conv.messages.get(..cut).unwrap_or(&[])),
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
        let s = cx.state.compact.sessions.entry(session).or_default();
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

fn sum_tokens(cx: &StageContext<'_>, messages: &[Message]) -> Result<u64> {
    let mut sum = 0;
    for m in messages {
        sum += cx.meter.message(m)?;
    }
    Ok(sum)
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
fn reapply(conv: &mut Conversation, cx: &mut StageContext<'_>) -> Result<Option<Base>> {
    let session = cx.config.session.clone();
    let pinned: Vec<String> = cx
        .config
        .compact
        .pinned
        .iter()
        .chain(cx.state.compact.pinned(&session))
        .cloned()
        .collect();
    let Some(s) = cx.state.compact.sessions.get_mut(&session) else {
        return Ok(None);
    };
    let Some(rec) = s.record.as_mut() else {
        return Ok(None);
    };
    let matches = conv.messages.len() >= rec.covered
        && fingerprint(
            Fnv::default(),
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

/// A compaction ready to apply.
struct Plan {
    /// The user's messages, archive (if any), summary and tool-call log (if any).
    messages: Vec<Message>,
    /// Index of the summary in `messages`.
    summary_at: usize,
    /// The blob to keep: the index and every original ([`blob`]).
    blob: String,
    /// Its pointer, cited in the summary.
    pointer: String,
    /// Secrets masked in the blob (`redact.store`), counted once it is kept.
    masked: crate::redact::Redactions,
    /// Summary header.
    header: String,
    /// Citation of the previous summary (where dropped summary lines stay).
    older: String,
    /// Prompt for a host summarizer.
    prompt: String,
    /// Tool calls compacted.
    steps: usize,
}

impl Plan {
    fn build(
        conv: &Conversation,
        cx: &mut StageContext<'_>,
        prior: &Prior,
        steps: &[StepActivity],
        cut: usize,
        stored: Option<&str>,
    ) -> Result<Plan> {
        let config = cx.config;
        let session = &config.session;
        let range_msgs = conv.messages.get(prior.start..cut).unwrap_or(&[]);
        let previous_text = prior
            .summary_at
            .and_then(|i| conv.messages.get(i))
            .map(Message::text_content);
        // The user's own messages stay word for word (up to `compact.userShare`
        // of the budget): those kept before, then the new ones of the range
        // (with their index in the conversation).
        let mut users: Vec<(Message, Option<usize>)> = conv
            .messages
            .get(..prior.users)
            .unwrap_or(&[])
            .iter()
            .map(|m| (m.clone(), None))
            .collect();
        for (i, m) in range_msgs.iter().enumerate() {
            if is_user_authored(m) {
                users.push((m.clone(), Some(prior.start + i)));
            }
        }
        let dropped = over_share(cx, &mut users)?;
        // The blob: every compacted message, the previous summary, and the
        // user messages kept word for word until now that this one drops.
        let mut sections: Vec<(String, String)> = range_msgs
            .iter()
            .enumerate()
            .map(|(i, m)| {
                (
                    format!("message {} ({})", prior.start + i, transcript_role(m)),
                    transcript(m),
                )
            })
            .collect();
        let previous_at = previous_text.as_ref().map(|prev| {
            sections.push(("previous summary".into(), prev.clone()));
            sections.len() - 1
        });
        let mut dropped_at: Vec<Option<usize>> = Vec::with_capacity(dropped.len());
        for (m, at) in &dropped {
            dropped_at.push(match at {
                Some(_) => None,
                None => {
                    sections.push((
                        "user message kept word for word until this compaction".into(),
                        transcript(m),
                    ));
                    Some(sections.len() - 1)
                }
            });
        }
        // The tool-call log, its oldest calls folded into this blob when it
        // outgrows `compact.callLogShare` of the budget.
        let mut log = None;
        let mut folded_at = None;
        if config.compact.keep_tool_calls {
            let mut l = prior.calls.clone().unwrap_or_default();
            l.extend(range_msgs);
            let cap = config
                .budget_share(config.compact.call_log_share)
                .saturating_sub(cx.meter.text(CALL_LOG_HEADER)?);
            // Each item is a `- ` line.
            let folded = l.fold(cap, |item| Ok(cx.meter.text(item)? + 2))?;
            if !folded.is_empty() {
                sections.push((
                    "tool calls folded out of the tool-call log".into(),
                    folded.join("\n"),
                ));
                folded_at = Some((sections.len() - 1, folded));
            }
            log = Some(l);
        }
        let mut masked = crate::redact::Redactions::default();
        if config.redact.store {
            for (_, text) in &mut sections {
                let (out, found) = crate::redact::redact(text);
                if let std::borrow::Cow::Owned(out) = out {
                    *text = out;
                }
                masked.merge(&found);
            }
        }
        let laid = blob::lay_out(&sections);
        drop(sections);
        let pointer = match stored {
            Some(p) => p.to_string(),
            None => spill::pointer(session, &cx.content_key(BLOB_KIND, &laid.text)),
        };
        let range_steps: Vec<StepActivity> = steps
            .iter()
            .filter(|s| s.call_message < cut)
            .cloned()
            .collect();
        let range = Range {
            messages: range_msgs,
            first: prior.start,
            pointer: &pointer,
            lines: laid.lines.get(..range_msgs.len()).unwrap_or(&[]),
            steps: &range_steps,
        };
        let fresh = extractive::summarize(&range);
        let previous = previous_text
            .as_deref()
            .and_then(|t| Summary::parse(t.split_once('\n').map_or("", |(_, b)| b)).ok());
        let mut merged = match &previous {
            Some(p) => p.merge(&fresh),
            None => fresh,
        };
        let mut goal = vec![format!(
            "- The task and the user's messages ({}) are kept word for word above this summary.",
            users.len()
        )];
        if users.is_empty() {
            goal = vec!["- (no user message kept; see the messages below)".into()];
        }
        // The newest dropped ones one by one, the others in one line: the
        // summary must not grow with the number of messages dropped.
        let listed = dropped.len().saturating_sub(MAX_DROPPED_LISTED);
        if listed > 0 {
            let bytes: usize = dropped
                .iter()
                .take(listed)
                .map(|(m, _)| m.text_content().len())
                .sum();
            goal.push(format!(
                "- {listed} earlier user messages ({bytes} bytes) are not repeated here (compact.userShare); they are in {pointer} (its index lists every original)"
            ));
        }
        for ((m, at), section) in dropped.iter().zip(&dropped_at).skip(listed) {
            let cite = match at {
                Some(at) => range.cite(*at),
                None => blob::cite(&pointer, section.and_then(|k| laid.lines.get(k))),
            };
            let text = m.text_content();
            goal.push(format!(
                "- An earlier user message ({} bytes) is not repeated here (compact.userShare): {cite} — \"{}\"",
                text.len(),
                text::head_tail(&text, DROPPED_EXCERPT_BYTES),
            ));
        }
        merged.sections[0] = goal;
        let header = format!("{SUMMARY_MARK} of earlier turns; originals: {pointer}]");
        // Bounded: what a long session carries forward must not grow.
        let cap = config.budget_share(config.compact.summary_share);
        let older = blob::cite(&pointer, previous_at.and_then(|k| laid.lines.get(k)));
        merged.fit(
            &header,
            cap,
            |t| cx.meter.text(t),
            |n| older_note(n, &older),
        )?;
        // The archive: previous items, then pinned, then new user constraints.
        let mut archive = prior.archive.clone().unwrap_or_default();
        for p in config
            .compact
            .pinned
            .iter()
            .chain(cx.state.compact.pinned(session))
        {
            archive.add(p);
        }
        // Constraints of user messages no longer shown word for word.
        for (m, _) in &dropped {
            for c in constraints::extract(&m.text_content(), &config.compact.constraint_patterns) {
                archive.add(&c);
            }
        }
        let summary_text = cx.redact(&merged.render(&header)).into_owned();
        let mut messages: Vec<Message> = users.into_iter().map(|(m, _)| m).collect();
        if !archive.items.is_empty() {
            let text = cx.redact(&archive.render()).into_owned();
            messages.push(Message::text(Role::User, text));
        }
        let summary_at = messages.len();
        messages.push(Message::text(Role::User, summary_text));
        if let Some(mut log) = log {
            if let Some((k, folded)) = &folded_at {
                let cite = blob::cite(&pointer, laid.lines.get(*k));
                log.items.insert(0, CallLog::fold_line(folded, &cite));
            }
            if !log.items.is_empty() {
                let text = cx.redact(&log.render()).into_owned();
                messages.push(Message::text(Role::User, text));
            }
        }
        // Steps are in call order: those from `cut` on are the later turns.
        let later = steps
            .get(steps.partition_point(|s| s.call_message < cut)..)
            .unwrap_or(&[]);
        messages.extend(views::keep(
            conv,
            cx,
            &prior.views,
            &range,
            later,
            config.compact.live_views,
        )?);
        let prompt = prompt::build(&range, &archive.items, previous_text.as_deref(), cap);
        Ok(Plan {
            messages,
            summary_at,
            blob: laid.text,
            pointer,
            masked,
            header,
            older,
            prompt,
            steps: range_steps.len(),
        })
    }
}

/// Bytes a message adds to the blob besides its transcript (its index line
/// and header line), at most.
const BLOB_OVERHEAD: usize = 96;

/// End of the chunk one compaction may take from `messages[start..cut]`:
/// the first message past `limits.maxCompactMessages` messages or
/// `limits.maxCompactBytes` bytes of blob (`cut` when all fit). The caller
/// moves it earlier to keep tool calls with their results.
fn chunk_end(
    conv: &Conversation,
    start: usize,
    cut: usize,
    limits: &crate::config::Limits,
) -> usize {
    let end = cut.min(start.saturating_add(limits.max_compact_messages));
    let mut bytes = 0usize;
    for (i, m) in conv.messages.iter().enumerate().take(end).skip(start) {
        bytes = bytes.saturating_add(extractive::transcript_len(m) + BLOB_OVERHEAD);
        if bytes > limits.max_compact_bytes {
            return i;
        }
    }
    end
}

/// Drops user messages (oldest first, never the first nor the newest) until
/// the rest fit in `compact.userShare` of the budget; returns the dropped ones.
fn over_share<T>(
    cx: &StageContext<'_>,
    users: &mut Vec<(Message, T)>,
) -> Result<Vec<(Message, T)>> {
    let config = cx.config;
    let share = config.budget_share(config.compact.user_share);
    let mut tokens = Vec::with_capacity(users.len());
    for (m, _) in users.iter() {
        tokens.push(cx.meter.message(m)?);
    }
    let mut total: u64 = tokens.iter().sum();
    // Drop users[1..1 + n], in one drain (not one removal at a time).
    let mut n = 0;
    if users.len() <= 2 || total <= share {
        return Ok(Vec::new());
    }
    while total > share && users.len() - n > 2 {
        total = total.saturating_sub(tokens.get(1 + n).copied().unwrap_or(0));
        n += 1;
    }
    Ok(users.drain(1..1 + n).collect())
}

fn transcript_role(m: &Message) -> &'static str {
    match m.role {
        Role::System | Role::Developer => "system",
        Role::User => "user",
        Role::Assistant => "assistant",
        Role::Tool => "tool",
    }
}

/// Runs the planner; returns its explanation (containing `compact now` when
/// it pays) and the candidate for the report.
fn planner(
    conv: &Conversation,
    cx: &StageContext<'_>,
    prior: &Prior,
    plan: &Plan,
    tokens: u64,
    saving: u64,
    limits: Limits,
) -> Result<(String, crate::plan::Candidate)> {
    let config = cx.config;
    let (prices, source) = crate::plan::prices::for_config(config);
    // The previous request is this one without its newest turn.
    let assistants: Vec<usize> = conv
        .messages
        .iter()
        .enumerate()
        .filter(|(i, m)| *i >= prior.start && m.role == Role::Assistant)
        .map(|(i, _)| i)
        .collect();
    let newest = assistants.last().copied().unwrap_or(conv.messages.len());
    let newest_tokens = sum_tokens(cx, conv.messages.get(newest..).unwrap_or(&[]))?;
    let recent_from = assistants
        .len()
        .checked_sub(5)
        .and_then(|i| assistants.get(i))
        .or(assistants.first())
        .copied()
        .unwrap_or(conv.messages.len());
    let recent_turns = assistants.len().clamp(1, 5) as u64;
    let growth = sum_tokens(cx, conv.messages.get(recent_from..).unwrap_or(&[]))? / recent_turns;
    let mut stable = sum_tokens(cx, &conv.system)?;
    // The user's messages kept at the start stay in the cached prefix.
    for (new, old) in plan.messages.iter().zip(&conv.messages) {
        if new != old || !is_user_authored(new) {
            break;
        }
        stable += cx.meter.message(new)?;
    }
    // An unchanged archive stays in the cached prefix too.
    if let (Some(first), Some(old)) = (plan.messages.first(), conv.messages.first()) {
        if is_archive(first) && first == old {
            stable += cx.meter.message(first)?;
        }
    }
    let horizon = config.plan.horizon(assistants.len());
    let inputs = crate::plan::compaction::PlanInputs {
        tokens,
        cached: tokens.saturating_sub(newest_tokens),
        growth,
        compacted: tokens.saturating_sub(saving),
        stable,
        forced: limits.forced,
        horizon,
    };
    let e = crate::plan::compaction::estimate(&prices, &inputs);
    let verdict = if e.pays() { "compact now" } else { "wait" };
    let why = format!(
        "planner: compacting ${:.4} vs waiting ${:.4} over {horizon} turns ({source}) → {verdict}",
        e.compact, e.wait
    );
    let candidate = crate::plan::Candidate {
        kind: crate::plan::CandidateKind::Compaction,
        observations: None,
        tokens_saved: saving,
        tokens_rewritten: tokens.saturating_sub(stable),
        cost_now: crate::plan::prices::turn_cost(&prices, inputs.compacted, stable)
            - crate::plan::prices::turn_cost(&prices, tokens, inputs.cached),
        saving: e.wait - e.compact,
        horizon,
        committed: e.pays(),
        reason: why.clone(),
    };
    Ok((why, candidate))
}

impl crate::config::CompactConfig {
    /// Checks the `compact` section; errors name the offending field.
    pub(crate) fn validate(&self) -> Result<()> {
        let bad = crate::error::invalid_option::<()>;
        if !(self.user_share >= 0.0 && self.user_share <= 1.0) {
            return bad("compact.userShare", "must be in [0, 1]");
        }
        if !(self.call_log_share > 0.0 && self.call_log_share <= 1.0) {
            return bad("compact.callLogShare", "must be in (0, 1]");
        }
        if !(self.summary_share > 0.0 && self.summary_share <= 1.0) {
            return bad("compact.summaryShare", "must be in (0, 1]");
        }
        if self.keep == 0 {
            return bad("compact.keep", "must be at least 1");
        }
        if let Some(i) = self
            .constraint_patterns
            .iter()
            .position(|p| p.trim().is_empty())
        {
            return Err(crate::Error::new(
                crate::ErrorCode::InvalidOption,
                format!("compact.constraintPatterns[{i}]"),
                "must not be empty",
            ));
        }
        if let Some(i) = self
            .pinned
            .iter()
            .position(|p| p.trim().is_empty() || p.len() > 4_000)
        {
            return Err(crate::Error::new(
                crate::ErrorCode::InvalidOption,
                format!("compact.pinned[{i}]"),
                "must be 1-4000 bytes of text",
            ));
        }
        Ok(())
    }
}
