//! The pipeline (layer 4): parse → spill → plan → dedup → phase → optical →
//! compact → emit, and the [`Report`] of what each stage did. It owns every
//! stage's state across calls ([`HostState`]) and hands each stage its own.

use serde::Serialize;
use serde_json::Value;

use crate::config::Config;
use crate::error::{Error, ErrorCode, Result};
use crate::formats::{self, FormatName};
use crate::model::Conversation;
use crate::redact::Redactions;
use crate::spill::SpillStore;
use crate::tokens::{CachedCounter, Estimator, TokenCounter};

use crate::stage::SharedCaches;
pub use crate::stage::{
    Change, CompactionOutcome, SpillBlob, SpillRecord, Stage, StageContext, StageName,
};

/// State a host keeps across calls (caches, compaction records), for every
/// session (spill namespace, `config.session`) it serves. Stateless callers
/// pass a fresh one; results are identical, only slower.
#[derive(Debug, Default)]
pub struct HostState {
    /// Number of compress calls made with this state.
    pub turns: u64,
    /// Compaction records, pinned constraints and pending summaries, per session.
    pub compact: crate::compact::CompactState,
    /// Optical snapshots rendered and proposals weighed so far.
    pub optical: crate::optical::OpticalState,
    /// Redaction results of texts already scanned, by content hash.
    pub redacted: crate::redact::RedactCache,
    /// Spill keys of texts already hashed.
    pub keys: crate::hash::key::KeyCache,
    /// Activities of tool calls already classified, by content.
    pub activities: crate::activity::ActivityCache,
    /// Dedup's decisions for observations whose window did not change.
    pub dedup: crate::dedup::DedupCache,
    /// Token counts of texts already counted, so a warm turn counts only what is new.
    pub counts: crate::tokens::CountCache,
    /// Spill excerpts already laid out, so a warm turn lays out only new outputs.
    pub excerpts: crate::spill::ExcerptCache,
}

/// Token totals of one stage.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct StageReport {
    /// Stage.
    pub stage: StageName,
    /// Whether it ran.
    pub enabled: bool,
    /// Tokens before the stage.
    pub tokens_before: u64,
    /// Tokens after the stage.
    pub tokens_after: u64,
    /// Decisions the stage explains (e.g. why it did not compact).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
}

/// Prefix stability against the previous output.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PrefixReport {
    /// Bytes shared at the start of the previous and the new request.
    pub shared_bytes: usize,
    /// Length of the previous request.
    pub previous_bytes: usize,
    /// Length of the new request.
    pub current_bytes: usize,
}

/// What a compress call did.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Report {
    /// Detected or requested format.
    pub format: FormatName,
    /// Tokens of the request as received.
    pub tokens_before: u64,
    /// Tokens of the request as emitted.
    pub tokens_after: u64,
    /// Bytes of the request JSON as received (for the stateful session: its
    /// history emitted as is).
    pub bytes_before: usize,
    /// Bytes of the request JSON as emitted. Snapshots travel as base64 PNG
    /// (unless `optical.imageUrl` sends them by URL: see `image_urls`), so
    /// bytes may grow while tokens fall.
    pub bytes_after: usize,
    /// With `optical.imageUrl`: snapshots sent by URL, the bytes the host
    /// serves for them, and those kept inline (with why).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub image_urls: Option<formats::image_urls::ImageUrlReport>,
    /// Per stage, in order.
    pub stages: Vec<StageReport>,
    /// Every change, in order.
    pub changes: Vec<Change>,
    /// Blobs stored during this call.
    pub spills: Vec<SpillRecord>,
    /// Fixes made in repair mode (`Config::repair`) and snapshot images
    /// replaced to stay within the provider's image limits.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub repairs: Vec<formats::Repair>,
    /// Secrets masked in what reaches the model (counts and kinds, never values).
    pub redactions: Redactions,
    /// Prefix shared with `previous`, when one was given.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub prefix: Option<PrefixReport>,
    /// Messages after the system prompt that stay byte-identical until the
    /// next batch leaves the recent window (unless a compaction or a new
    /// edit phase rewrites history first): where a prompt-cache breakpoint pays.
    pub stable_messages: usize,
    /// What the planner committed and deferred, in dollars.
    pub plan: crate::plan::PlanReport,
    /// Anthropic Messages: index (after the system prompt) of the message
    /// whose last cacheable block got a `cache_control` breakpoint
    /// (`Config::cache_breakpoint`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cache_breakpoint: Option<usize>,
    /// Anthropic Messages: every message TraceLite gave a breakpoint, in the
    /// order they were placed (at most 4 with the caller's own): the stable
    /// prefix (the next demotion reads it), the end of the request (the next
    /// turn reads all of it) and the end of the leading user messages (a
    /// compaction keeps them and the system prompt first, so it reads them).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub cache_breakpoints: Vec<usize>,
    /// What compaction did on this call: absent when it did nothing.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub compaction: Option<CompactionOutcome>,
}

/// The result of [`compress`].
#[derive(Debug, Clone)]
pub struct Output {
    /// The compressed request, as JSON text (deterministic bytes).
    pub request: String,
    /// The compressed conversation.
    pub conversation: Conversation,
    /// What happened.
    pub report: Report,
    /// Texts of the blobs stored during this call (see [`SpillBlob`]).
    pub spills: Vec<SpillBlob>,
    /// With `optical.imageUrl`: every snapshot the request carries by URL,
    /// once each, with its PNG (the host serves it at its `url`).
    pub images: Vec<formats::image_urls::UrlImage>,
}

/// Host-provided collaborators for [`compress_with`].
pub struct Env<'a> {
    /// Spill store.
    pub store: &'a mut dyn SpillStore,
    /// Text token counter.
    pub counter: &'a dyn TokenCounter,
    /// Per-session caches.
    pub state: &'a mut HostState,
    /// The previous output request (JSON text), for prefix reuse.
    pub previous: Option<&'a str>,
}

/// Compresses a request (JSON text) with the built-in estimator and a fresh session state.
pub fn compress(request: &str, config: &Config, store: &mut dyn SpillStore) -> Result<Output> {
    let mut state = HostState::default();
    compress_with(
        request,
        config,
        Env {
            store,
            counter: &Estimator,
            state: &mut state,
            previous: None,
        },
    )
}

/// Compresses a request (JSON text) with host-provided collaborators.
pub fn compress_with(request: &str, config: &Config, env: Env<'_>) -> Result<Output> {
    if request.len() > config.limits.max_request_bytes {
        return Err(Error::new(
            ErrorCode::LimitExceeded,
            "limits.maxRequestBytes",
            format!(
                "request is {} bytes, limit is {}",
                request.len(),
                config.limits.max_request_bytes
            ),
        ));
    }
    let value: Value = crate::json::parse_strict(request, config.limits.max_depth)?;
    let format = match config.format {
        Some(f) => f,
        None => formats::detect(&value)?,
    };
    let conv = formats::parse(format, &value)?;
    drop(value);
    let known = Known {
        bytes: Some(request.len()),
        tokens: None,
    };
    compress_sized(conv, format, config, env, known)
}

/// What a caller that keeps the history already knows of it.
#[derive(Debug, Clone, Default)]
pub struct Known {
    /// Bytes of the conversation emitted as the request's format (the
    /// report's `bytesBefore`).
    pub bytes: Option<usize>,
    /// Tokens of each message ([`crate::tokens::Meter::message`]), the
    /// system prompt first.
    pub tokens: Option<Vec<u64>>,
}

/// Runs the stages over a conversation already in the neutral model (the
/// stateful [`crate::controller::TraceLite`] keeps one) and emits it as
/// `format`, given what the caller knows of `conv` (repair mode measures the
/// repaired conversation instead).
pub fn compress_measured(
    conv: Conversation,
    format: FormatName,
    config: &Config,
    env: Env<'_>,
    known: Known,
) -> Result<Output> {
    let known = if config.repair {
        Known::default()
    } else {
        known
    };
    compress_sized(conv, format, config, env, known)
}

/// Bytes of `value` as JSON text, without building the text.
pub fn json_len(value: &Value) -> usize {
    struct Count(usize);
    impl std::io::Write for Count {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            self.0 += buf.len();
            Ok(buf.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    let mut count = Count(0);
    let _ = serde_json::to_writer(&mut count, value);
    count.0
}

/// Runs the stages over `conv` and emits it as `format`, given what is known
/// of the request as received.
fn compress_sized(
    mut conv: Conversation,
    format: FormatName,
    config: &Config,
    env: Env<'_>,
    known: Known,
) -> Result<Output> {
    if conv.messages.len() + conv.system.len() > config.limits.max_messages {
        return Err(Error::new(
            ErrorCode::LimitExceeded,
            "limits.maxMessages",
            format!(
                "request has {} messages, limit is {}",
                conv.messages.len() + conv.system.len(),
                config.limits.max_messages
            ),
        ));
    }
    formats::images::check_pixels(&conv, format, config.limits.max_image_pixels)?;
    let repairs = if config.repair {
        formats::repair(&mut conv, format)?
    } else {
        formats::validate(&conv, format)?;
        Vec::new()
    };
    let bytes_before = known
        .bytes
        .unwrap_or_else(|| json_len(&formats::emit(format, &conv)));
    let client_images = formats::images::fingerprints(&conv);
    let observed = conv.observations().len();
    // The session's token counts serve every stage (taken out while the stages hold the state).
    // Counts are reused only by the counter that made them.
    env.state.counts.use_counter(env.counter.name());
    let counts = std::mem::take(&mut env.state.counts);
    let counter = CachedCounter {
        inner: env.counter,
        cache: &counts,
    };
    let staged = run_stages(
        &mut conv,
        config,
        env.store,
        &counter,
        env.state,
        format,
        known.tokens,
    );
    env.state.counts = counts;
    let (mut report, spills) = staged?;
    report.repairs = repairs;
    let limited =
        formats::images::enforce(&mut conv, format, config.optical.max_images, &client_images);
    report.repairs.extend(limited);
    let mut images = Vec::new();
    if !config.optical.image_url.is_empty() {
        let (sent, urls) = formats::image_urls::send_by_url(
            &mut conv,
            format,
            &config.optical.image_url,
            &client_images,
            &mut env.state.keys,
        );
        images = sent;
        report.image_urls = Some(urls);
    }
    report.stable_messages = stable_messages(&conv, report.plan.demoted, observed);
    // With every stage off the request passes through untouched.
    let rewrites = report.stages.iter().any(|s| s.enabled);
    if format == FormatName::Anthropic && config.cache_breakpoint && rewrites {
        let lead = conv
            .messages
            .iter()
            .position(|m| m.role != crate::model::Role::User)
            .unwrap_or(0);
        let ends = [report.stable_messages, conv.messages.len(), lead];
        let marked = formats::anthropic::mark_breakpoints(&mut conv, &ends);
        if marked.first() == Some(&report.stable_messages) {
            report.cache_breakpoint = Some(report.stable_messages - 1);
        }
        report.cache_breakpoints = marked.iter().map(|end| end - 1).collect();
    }
    let (emitted, at) = formats::emit_indexed(format, &conv);
    for c in &mut report.changes {
        c.message = at.get(c.message).copied().unwrap_or(c.message);
    }
    let request_out = serde_json::to_string(&emitted)
        .map_err(|e| Error::new(ErrorCode::InvalidRequest, "request", e.to_string()))?;
    report.bytes_before = bytes_before;
    report.bytes_after = request_out.len();
    report.prefix = env.previous.map(|prev| PrefixReport {
        shared_bytes: shared_prefix(prev, &request_out),
        previous_bytes: prev.len(),
        current_bytes: request_out.len(),
    });
    Ok(Output {
        request: request_out,
        conversation: conv,
        report,
        spills,
        images,
    })
}

fn run_stages(
    conv: &mut Conversation,
    config: &Config,
    store: &mut dyn SpillStore,
    counter: &dyn TokenCounter,
    state: &mut HostState,
    format: FormatName,
    known: Option<Vec<u64>>,
) -> Result<(Report, Vec<SpillBlob>)> {
    let HostState {
        turns,
        compact,
        optical,
        redacted,
        keys,
        activities,
        dedup,
        counts: _,
        excerpts,
    } = state;
    let caches = SharedCaches {
        keys,
        redacted,
        activities,
    };
    let (mut between, mut phase) = ((), ());
    let mut cx = StageContext::new(config, counter, store, caches, &mut between);
    // Each message is counted once per call: after a stage, only the
    // messages it recorded a change in are counted again.
    cx.message_tokens = match known {
        Some(k) if k.len() == conv.system.len() + conv.messages.len() => k,
        _ => cx.meter.messages(conv)?,
    };
    let tokens_before = cx.message_tokens.iter().sum();
    let mut run = Runner {
        tokens: tokens_before,
        reports: Vec::with_capacity(5),
    };
    let cx = run.stage(&crate::spill::Spill, conv, cx, excerpts)?;
    // The planner decides what the rewriting stages may touch, on the
    // history as spilling left it, from the optical stage's proposals.
    let (mut ocx, between) = cx.with(optical);
    ocx.stage = StageName::Dedup;
    let (schedule, candidate) =
        crate::plan::demotion::for_conversation(conv, &mut ocx, crate::optical::proposed_savings)?;
    ocx.plan = Some(schedule);
    ocx.candidates.extend(candidate);
    let (cx, optical) = ocx.with(between);
    let cx = run.stage(&crate::dedup::Dedup, conv, cx, dedup)?;
    let cx = run.stage(&crate::phase::Phase, conv, cx, &mut phase)?;
    let cx = run.stage(&crate::optical::Optical, conv, cx, optical)?;
    let cx = run.stage(
        &crate::compact::Compact {
            price: crate::plan::compaction::candidate,
        },
        conv,
        cx,
        compact,
    )?;
    *turns += 1;
    cx.keys.end_call();
    let (prices, prices_source) = crate::plan::prices::for_config(config);
    let plan = crate::plan::PlanReport {
        prices,
        prices_source,
        demoted: cx.plan.as_ref().map_or(0, crate::plan::Schedule::demoted),
        candidates: cx.candidates,
    };
    let report = Report {
        format,
        tokens_before,
        tokens_after: run.tokens,
        bytes_before: 0,
        bytes_after: 0,
        image_urls: None,
        stages: run.reports,
        changes: cx.changes,
        spills: cx.spills,
        repairs: Vec::new(),
        redactions: cx.redactions,
        prefix: None,
        stable_messages: 0,
        plan,
        cache_breakpoint: None,
        cache_breakpoints: Vec::new(),
        compaction: cx.compaction,
    };
    Ok((report, cx.blobs))
}

/// Runs the stages one by one, keeping the running token total and each
/// stage's report.
struct Runner {
    tokens: u64,
    reports: Vec<StageReport>,
}

impl Runner {
    /// Runs `stage` with its own `state` in `cx` (when enabled) and reports it.
    fn stage<'a, T: Stage>(
        &mut self,
        stage: &T,
        conv: &mut Conversation,
        cx: StageContext<'a>,
        state: &'a mut T::State,
    ) -> Result<StageContext<'a>> {
        let (mut own, between) = cx.with(state);
        own.stage = stage.name();
        let enabled = stage.enabled(&own);
        let recorded = own.changes.len();
        if enabled {
            stage.apply(conv, &mut own)?;
        }
        let mut cx = own.with(between).0;
        self.report(conv, &mut cx, enabled, recorded)?;
        Ok(cx)
    }

    /// Recounts after the stage `cx` ran (when it recorded a change since
    /// `recorded`) and reports it; not generic, so it exists once.
    fn report(
        &mut self,
        conv: &Conversation,
        cx: &mut StageContext<'_>,
        enabled: bool,
        recorded: usize,
    ) -> Result<()> {
        let before = self.tokens;
        // Stages record every change they make; recount only when one did.
        if enabled && cx.changes.len() != recorded {
            recount(conv, cx, recorded)?;
            self.tokens = cx.message_tokens.iter().sum();
            debug_assert_eq!(
                cx.meter.messages(conv).ok(),
                Some(cx.message_tokens.clone())
            );
        }
        self.reports.push(StageReport {
            stage: cx.stage,
            enabled,
            tokens_before: before,
            tokens_after: self.tokens,
            notes: std::mem::take(&mut cx.notes),
        });
        Ok(())
    }
}

/// Counts again the messages the running stage recorded changes in since
/// `recorded` (every message after compaction, which moves them).
fn recount(conv: &Conversation, cx: &mut StageContext<'_>, recorded: usize) -> Result<()> {
    let system = conv.system.len();
    if cx.stage == StageName::Compact || cx.message_tokens.len() != system + conv.messages.len() {
        cx.message_tokens = cx.meter.messages(conv)?;
        return Ok(());
    }
    let mut changed: Vec<usize> = cx
        .changes
        .get(recorded..)
        .unwrap_or(&[])
        .iter()
        .map(|c| c.message)
        .collect();
    changed.sort_unstable();
    changed.dedup();
    for m in changed {
        if let (Some(msg), Some(slot)) =
            (conv.messages.get(m), cx.message_tokens.get_mut(system + m))
        {
            *slot = cx.meter.message(msg)?;
        }
    }
    Ok(())
}

/// Messages before the first observation still live (not yet handed to the
/// rewriting stages by the planner, `demoted` of them were) out of the
/// `observed` tool results the request arrived with: the next stage change
/// that follows from a new observation (dedup, a snapshot batch) lands at or
/// after it. With no live observation the whole request is stable.
fn stable_messages(conv: &Conversation, demoted: usize, observed: usize) -> usize {
    let live = observed - demoted.min(observed);
    if live == 0 {
        return conv.messages.len();
    }
    let observations = conv.observations();
    // Compaction may have folded live observations into its summary: then the
    // first one left bounds the prefix.
    let first = observations.len().saturating_sub(live);
    observations
        .get(first)
        .map_or(conv.messages.len(), |at| at.message)
}

/// Length in bytes of the common prefix of `a` and `b`.
pub fn shared_prefix(a: &str, b: &str) -> usize {
    a.bytes().zip(b.bytes()).take_while(|(x, y)| x == y).count()
}
