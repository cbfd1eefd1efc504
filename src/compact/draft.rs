//! Drafting a compaction: the user's messages kept word for word, the
//! constraint archive, the five-section summary citing the blob of originals,
//! the tool-call log, the kept outputs of excluded tools and the kept views;
//! and the chunk one call compacts.

use super::adopt::older_note;
use super::blob::{self, BLOB_KIND};
use super::calls::{CallLog, CALL_LOG_HEADER};
use super::extractive::{self, transcript, Range};
use super::prior::{is_user_authored, Prior};
use super::summary::{Summary, SUMMARY_MARK};
use super::trigger::StepActivity;
use super::CompactState;
use super::{constraints, kept, prompt, tasks, views};
use crate::error::Result;
use crate::model::{Conversation, Message, Role};
use crate::stage::StageContext;
use crate::text;

/// Most user messages dropped from the verbatim ones (`compact.userShare`)
/// that the Goal cites one by one; the rest get one line.
const MAX_DROPPED_LISTED: usize = 8;

/// Bytes of the head/tail excerpt quoting each listed dropped user message.
const DROPPED_EXCERPT_BYTES: usize = 240;

/// A compaction ready to apply: what replaces the compacted messages, and
/// the blob that keeps them.
pub(super) struct Draft {
    /// The user's messages, archive (if any), summary and tool-call log (if any).
    pub(super) messages: Vec<Message>,
    /// Index of the summary in `messages`.
    pub(super) summary_at: usize,
    /// The blob to keep: the index and every original ([`blob`]).
    pub(super) blob: String,
    /// Its pointer, cited in the summary.
    pub(super) pointer: String,
    /// Secrets masked in the blob (`redact.store`) and in the kept outputs
    /// of excluded tools, counted once it is kept.
    pub(super) masked: crate::redact::Redactions,
    /// Summary header.
    pub(super) header: String,
    /// Citation of the previous summary (where dropped summary lines stay).
    pub(super) older: String,
    /// Prompt for a host summarizer.
    pub(super) prompt: String,
    /// Tool calls compacted.
    pub(super) steps: usize,
}

impl Draft {
    /// Drafts the compaction of `conv.messages[prior.start..cut]`, citing
    /// the blob at `stored` (else at the pointer its content gets).
    pub(super) fn build(
        conv: &Conversation,
        cx: &mut StageContext<'_, CompactState>,
        prior: &Prior,
        steps: &[StepActivity],
        cut: usize,
        stored: Option<&str>,
    ) -> Result<Draft> {
        let config = cx.config;
        let range_msgs = conv.messages.get(prior.start..cut).unwrap_or(&[]);
        let previous_text = prior
            .summary_at
            .and_then(|i| conv.messages.get(i))
            .map(Message::text_content);
        let (users, dropped) = kept_users(conv, cx, prior, range_msgs)?;
        let mut originals = Originals::of(range_msgs, prior.start, previous_text.as_deref());
        originals.add_dropped(&dropped);
        let log = call_log(conv, cx, prior, range_msgs, &mut originals)?;
        let masked = originals.mask(config.redact.store);
        let laid = blob::lay_out(&originals.sections);
        let pointer = match stored {
            Some(p) => p.to_string(),
            None => config.pointer(&cx.content_key(BLOB_KIND, &laid.text)),
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
        let cited = Cited {
            range: &range,
            originals: &originals,
            laid: &laid,
        };
        let summary = summarize(
            conv,
            cx,
            &cited,
            previous_text.as_deref(),
            users.len(),
            &dropped,
        )?;
        let archive = archive(cx, prior, &dropped);
        let mut draft = assemble(cx, users, &archive, summary, log, &cited)?;
        draft.masked.merge(&masked);
        draft.blob = laid.text.clone();
        draft.pointer = pointer.clone();
        draft.prompt = prompt::build(
            &range,
            &archive.items,
            previous_text.as_deref(),
            config.budget_share(config.compact.summary_share),
        );
        draft.steps = range_steps.len();
        keep_outputs_and_views(conv, cx, prior, &range, steps, cut, &mut draft)?;
        Ok(draft)
    }
}

/// The user's messages kept word for word (up to `compact.userShare` of the
/// budget): those kept before, then the new ones of the range (with their
/// index in the conversation); and those that no longer fit.
#[allow(clippy::type_complexity)]
fn kept_users(
    conv: &Conversation,
    cx: &StageContext<'_, CompactState>,
    prior: &Prior,
    range_msgs: &[Message],
) -> Result<(Vec<(Message, Option<usize>)>, Vec<(Message, Option<usize>)>)> {
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
    Ok((users, dropped))
}

/// The blob's sections (label, original text): every compacted message,
/// the previous summary, the user messages kept word for word until now
/// that this compaction drops, and the calls folded out of the call log.
struct Originals {
    sections: Vec<(String, String)>,
    /// The previous summary's section.
    previous_at: Option<usize>,
    /// Per dropped user message, its section (none for one of the range,
    /// cited where it is).
    dropped_at: Vec<Option<usize>>,
    /// The section of the calls folded out of the log, and those calls.
    folded_at: Option<(usize, Vec<String>)>,
}

impl Originals {
    fn of(range_msgs: &[Message], first: usize, previous: Option<&str>) -> Self {
        let mut sections: Vec<(String, String)> = range_msgs
            .iter()
            .enumerate()
            .map(|(i, m)| {
                (
                    format!("message {} ({})", first + i, transcript_role(m)),
                    transcript(m),
                )
            })
            .collect();
        let previous_at = previous.map(|prev| {
            sections.push(("previous summary".into(), prev.to_string()));
            sections.len() - 1
        });
        Originals {
            sections,
            previous_at,
            dropped_at: Vec::new(),
            folded_at: None,
        }
    }

    fn add_dropped(&mut self, dropped: &[(Message, Option<usize>)]) {
        for (m, at) in dropped {
            let section = match at {
                Some(_) => None,
                None => {
                    self.sections.push((
                        "user message kept word for word until this compaction".into(),
                        transcript(m),
                    ));
                    Some(self.sections.len() - 1)
                }
            };
            self.dropped_at.push(section);
        }
    }

    /// Masks secrets in every section under `redact.store`; what it masked.
    fn mask(&mut self, store: bool) -> crate::redact::Redactions {
        let mut masked = crate::redact::Redactions::default();
        if store {
            for (_, text) in &mut self.sections {
                let (out, found) = crate::redact::redact(text);
                if let std::borrow::Cow::Owned(out) = out {
                    *text = out;
                }
                masked.merge(&found);
            }
        }
        masked
    }
}

/// The tool-call log (with `compact.keepToolCalls`), its oldest calls
/// folded into the blob's `originals` when it outgrows
/// `compact.callLogShare` of the budget.
fn call_log(
    conv: &Conversation,
    cx: &StageContext<'_, CompactState>,
    prior: &Prior,
    range_msgs: &[Message],
    originals: &mut Originals,
) -> Result<Option<CallLog>> {
    let config = cx.config;
    if !config.compact.keep_tool_calls {
        return Ok(None);
    }
    let mut log = prior.calls.clone().unwrap_or_default();
    log.extend(range_msgs);
    let cap = config
        .budget_share(tasks::carried_share(
            conv,
            config,
            config.compact.call_log_share,
        ))
        .saturating_sub(cx.meter.text(CALL_LOG_HEADER)?);
    // Each item is a `- ` line.
    let folded = log.fold(cap, |item| Ok(cx.meter.text(item)? + 2))?;
    if !folded.is_empty() {
        originals.sections.push((
            "tool calls folded out of the tool-call log".into(),
            folded.join("\n"),
        ));
        originals.folded_at = Some((originals.sections.len() - 1, folded));
    }
    Ok(Some(log))
}

/// The compacted range and where its originals are in the laid-out blob.
struct Cited<'c> {
    range: &'c Range<'c>,
    originals: &'c Originals,
    laid: &'c blob::Blob,
}

impl Cited<'_> {
    /// `pointer (lines a-b)` of the blob's section `at`.
    fn section(&self, at: Option<usize>) -> String {
        blob::cite(self.range.pointer, at.and_then(|k| self.laid.lines.get(k)))
    }
}

/// The summary, not yet rendered: its sections, header and the citation of
/// the previous summary.
struct SummaryDraft {
    summary: Summary,
    header: String,
    older: String,
}

/// The range's extractive summary merged into the previous one, with the
/// Goal citing the user messages it drops, fitted to
/// `compact.summaryShare` of the budget.
fn summarize(
    conv: &Conversation,
    cx: &StageContext<'_, CompactState>,
    cited: &Cited<'_>,
    previous_text: Option<&str>,
    kept_users: usize,
    dropped: &[(Message, Option<usize>)],
) -> Result<SummaryDraft> {
    let config = cx.config;
    let fresh = extractive::summarize(cited.range);
    let previous =
        previous_text.and_then(|t| Summary::parse(t.split_once('\n').map_or("", |(_, b)| b)).ok());
    let mut merged = match &previous {
        Some(p) => p.merge(&fresh),
        None => fresh,
    };
    merged.sections[0] = goal(cited, kept_users, dropped);
    let pointer = cited.range.pointer;
    let header = format!("{SUMMARY_MARK} of earlier turns; originals: {pointer}]");
    // Bounded: what a long session carries forward must not grow.
    let cap = config.budget_share(tasks::carried_share(
        conv,
        config,
        config.compact.summary_share,
    ));
    let older = cited.section(cited.originals.previous_at);
    merged.fit(
        &header,
        cap,
        |t| cx.meter.text(t),
        |n| older_note(n, &older),
    )?;
    Ok(SummaryDraft {
        summary: merged,
        header,
        older,
    })
}

/// The Goal section: the user's messages are kept above; the newest
/// dropped ones are cited one by one, the others in one line (the summary
/// must not grow with the number of messages dropped).
fn goal(cited: &Cited<'_>, kept_users: usize, dropped: &[(Message, Option<usize>)]) -> Vec<String> {
    let pointer = cited.range.pointer;
    let mut goal = vec![format!(
        "- The task and the user's messages ({kept_users}) are kept word for word above this summary."
    )];
    if kept_users == 0 {
        goal = vec!["- (no user message kept; see the messages below)".into()];
    }
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
    for ((m, at), section) in dropped.iter().zip(&cited.originals.dropped_at).skip(listed) {
        let cite = match at {
            Some(at) => cited.range.cite(*at),
            None => cited.section(*section),
        };
        let text = m.text_content();
        goal.push(format!(
            "- An earlier user message ({} bytes) is not repeated here (compact.userShare): {cite} — \"{}\"",
            text.len(),
            text::head_tail(&text, DROPPED_EXCERPT_BYTES),
        ));
    }
    goal
}

/// The constraint archive: the previous items, then the pinned ones, then
/// the constraints of user messages no longer shown word for word.
fn archive(
    cx: &StageContext<'_, CompactState>,
    prior: &Prior,
    dropped: &[(Message, Option<usize>)],
) -> constraints::ConstraintArchive {
    let config = cx.config;
    let mut archive = prior.archive.clone().unwrap_or_default();
    for p in config
        .compact
        .pinned
        .iter()
        .chain(cx.state.pinned(&config.session))
    {
        archive.add(p);
    }
    for (m, _) in dropped {
        for c in constraints::extract(&m.text_content(), &config.compact.constraint_patterns) {
            archive.add(&c);
        }
    }
    archive
}

/// The messages that replace the range, in order: the user's, the archive
/// (if any), the summary and the tool-call log (if any), each masked as it
/// reaches the model.
fn assemble(
    cx: &mut StageContext<'_, CompactState>,
    users: Vec<(Message, Option<usize>)>,
    archive: &constraints::ConstraintArchive,
    summary: SummaryDraft,
    log: Option<CallLog>,
    cited: &Cited<'_>,
) -> Result<Draft> {
    let summary_text = cx
        .redact(&summary.summary.render(&summary.header))
        .into_owned();
    let mut messages: Vec<Message> = users.into_iter().map(|(m, _)| m).collect();
    if !archive.items.is_empty() {
        let text = cx.redact(&archive.render()).into_owned();
        messages.push(Message::text(Role::User, text));
    }
    let summary_at = messages.len();
    messages.push(Message::text(Role::User, summary_text));
    if let Some(mut log) = log {
        if let Some((k, folded)) = &cited.originals.folded_at {
            log.items
                .insert(0, CallLog::fold_line(folded, &cited.section(Some(*k))));
        }
        if !log.items.is_empty() {
            let text = cx.redact(&log.render()).into_owned();
            messages.push(Message::text(Role::User, text));
        }
    }
    Ok(Draft {
        messages,
        summary_at,
        blob: String::new(),
        pointer: String::new(),
        masked: crate::redact::Redactions::default(),
        header: summary.header,
        older: summary.older,
        prompt: String::new(),
        steps: 0,
    })
}

/// Appends to `draft` the outputs of excluded tools, word for word (those
/// kept before, then the range's), and the file views still live.
fn keep_outputs_and_views(
    conv: &Conversation,
    cx: &mut StageContext<'_, CompactState>,
    prior: &Prior,
    range: &Range<'_>,
    steps: &[StepActivity],
    cut: usize,
    draft: &mut Draft,
) -> Result<()> {
    let config = cx.config;
    let excluded = crate::stage::excluded_results(conv, config);
    draft.messages.extend(prior.kept.iter().cloned());
    let (outputs, found) = kept::keep(conv, cx, range, &excluded);
    draft.messages.extend(outputs);
    draft.masked.merge(&found);
    // Steps are in call order: those from `cut` on are the later turns.
    let later = steps
        .get(steps.partition_point(|s| s.call_message < cut)..)
        .unwrap_or(&[]);
    draft.messages.extend(views::keep(
        conv,
        cx,
        &prior.views,
        range,
        later,
        config.compact.live_views,
        &excluded,
    )?);
    Ok(())
}

/// Bytes a message adds to the blob besides its transcript (its index line
/// and header line), at most.
const BLOB_OVERHEAD: usize = 96;

/// End of the chunk one compaction may take from `messages[start..cut]`:
/// the first message past `limits.maxCompactMessages` messages or
/// `limits.maxCompactBytes` bytes of blob (`cut` when all fit). The caller
/// moves it earlier to keep tool calls with their results.
pub(super) fn chunk_end(
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
    cx: &StageContext<'_, CompactState>,
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
