//! The pipeline: parse → spill → dedup → phase → optical → compact → emit, and
//! the [`Report`] of what each stage did.

use serde::Serialize;
use serde_json::Value;

use crate::config::Config;
use crate::error::{Error, ErrorCode, Result};
use crate::formats::{self, FormatName};
use crate::model::Conversation;
use crate::redact::Redactions;
use crate::spill::{self, SpillStore};
use crate::tokens::{Estimator, Meter, TokenCounter};

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
    /// Which stage this is.
    fn name(&self) -> StageName;
    /// Whether the stage runs under the current config.
    fn enabled(&self, cx: &StageContext<'_>) -> bool;
    /// Rewrites the conversation, recording every change in `cx` (the pipeline
    /// recounts tokens only after a stage that recorded a change).
    fn apply(&self, conv: &mut Conversation, cx: &mut StageContext<'_>) -> Result<()>;
}

/// State a host keeps across calls for one session (caches, history of decisions).
/// Stateless callers pass a fresh one; results are identical, only slower.
#[derive(Debug, Default)]
pub struct SessionState {
    /// Number of compress calls made with this state.
    pub turns: u64,
    /// Compaction records, pinned constraints and pending summaries, per session.
    pub compact: crate::compact::CompactState,
    /// Optical snapshots rendered so far, by content hash.
    pub snapshots: crate::optical::SnapshotCache,
    /// Redaction results of texts already scanned, by content hash.
    pub redacted: crate::redact::RedactCache,
    /// Spill keys of texts already hashed.
    pub keys: crate::spill::key::KeyCache,
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
    /// Bytes of the request JSON as emitted. Snapshots travel as base64 PNG,
    /// so bytes may grow while tokens fall.
    pub bytes_after: usize,
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
    /// Anthropic Messages: index (after the system prompt) of the message
    /// whose last cacheable block got a `cache_control` breakpoint
    /// (`Config::cache_breakpoint`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cache_breakpoint: Option<usize>,
}

/// Everything a stage may use while it runs.
pub struct StageContext<'a> {
    /// Settings.
    pub config: &'a Config,
    /// Token pricing.
    pub meter: Meter<'a>,
    /// Where removed text goes.
    pub store: &'a mut dyn SpillStore,
    /// Caches and history across calls.
    pub state: &'a mut SessionState,
    /// The stage now running.
    pub stage: StageName,
    /// Changes recorded so far.
    pub changes: Vec<Change>,
    /// Spills recorded so far.
    pub spills: Vec<SpillRecord>,
    /// Texts of the spills recorded so far.
    pub blobs: Vec<SpillBlob>,
    /// Notes of the stage now running.
    pub notes: Vec<String>,
    /// Secrets masked so far.
    pub redactions: Redactions,
}

impl<'a> StageContext<'a> {
    /// A context for running stages outside [`compress_with`] (e.g. one text).
    pub fn new(
        config: &'a Config,
        counter: &'a dyn TokenCounter,
        store: &'a mut dyn SpillStore,
        state: &'a mut SessionState,
    ) -> Self {
        Self {
            config,
            meter: Meter {
                counter,
                provider: config.provider,
                optical: &config.optical,
            },
            store,
            state,
            stage: StageName::Spill,
            changes: Vec::new(),
            spills: Vec::new(),
            blobs: Vec::new(),
            notes: Vec::new(),
            redactions: Redactions::default(),
        }
    }

    /// The spill key `text` gets ([`spill::content_key`]), from the session's cache.
    pub fn content_key(&mut self, kind: &str, text: &str) -> String {
        self.state.keys.key(kind, text)
    }

    /// Masks secrets in text that is about to reach the model (an excerpt, a
    /// snapshot, a summary), counting them for the report. Identity when
    /// `redact.enabled` is off.
    pub fn redact<'t>(&mut self, text: &'t str) -> std::borrow::Cow<'t, str> {
        if !self.config.redact.enabled {
            return std::borrow::Cow::Borrowed(text);
        }
        let (out, found) = self.state.redacted.redact(text);
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
    /// with `len` messages (a compaction): changes recorded so far follow
    /// their messages, and those inside the replaced range point at
    /// `folded_into` (the summary).
    pub fn replaced_prefix(&mut self, cut: usize, len: usize, folded_into: usize) {
        for c in &mut self.changes {
            c.message = if c.message < cut {
                folded_into
            } else {
                c.message - cut + len
            };
        }
    }

    /// Keeps `text` in the spill store under a content-derived key and returns
    /// its pointer, or the reason it could not be kept (`STORE_REFUSED` when
    /// the store or `limits.maxSpillBytesPerSession` has no room).
    pub fn keep(&mut self, kind: &str, text: &str) -> std::result::Result<String, Error> {
        if self.config.redact.store {
            let (out, found) = crate::redact::redact(text);
            self.redactions.merge(&found);
            return self.keep_as_is(kind, &out);
        }
        self.keep_as_is(kind, text)
    }

    /// [`keep`](Self::keep) without `redact.store`: for a text the caller
    /// already masked (compaction masks each original before it lays out its
    /// blob, so the line numbers it cites hold).
    pub fn keep_as_is(&mut self, kind: &str, text: &str) -> std::result::Result<String, Error> {
        let session = self.config.session.clone();
        let session = session.as_str();
        let key = self.state.keys.key(kind, text);
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
        self.store.put(session, &key, text)?;
        let pointer = spill::pointer(session, &key);
        if !existed && !self.spills.iter().any(|s| s.key == key) {
            self.spills.push(SpillRecord {
                session: session.to_string(),
                key: key.clone(),
                pointer: pointer.clone(),
                bytes: text.len(),
                lines: spill::lines::count(text),
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
}

/// Host-provided collaborators for [`compress_with`].
pub struct Env<'a> {
    /// Spill store.
    pub store: &'a mut dyn SpillStore,
    /// Text token counter.
    pub counter: &'a dyn TokenCounter,
    /// Per-session caches.
    pub state: &'a mut SessionState,
    /// The previous output request (JSON text), for prefix reuse.
    pub previous: Option<&'a str>,
}

/// Compresses a request (JSON text) with the built-in estimator and a fresh session state.
pub fn compress(request: &str, config: &Config, store: &mut dyn SpillStore) -> Result<Output> {
    let mut state = SessionState::default();
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
    compress_sized(conv, format, config, env, Some(request.len()))
}

/// Runs the stages over a conversation already in the neutral model (the
/// stateful [`crate::session::TraceLite`] keeps one) and emits it as `format`.
pub fn compress_conversation(
    conv: Conversation,
    format: FormatName,
    config: &Config,
    env: Env<'_>,
) -> Result<Output> {
    compress_sized(conv, format, config, env, None)
}

/// Bytes of `value` as JSON text, without building the text.
fn json_len(value: &Value) -> usize {
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

/// [`compress_conversation`] given the bytes of the request as received, when known.
fn compress_sized(
    mut conv: Conversation,
    format: FormatName,
    config: &Config,
    env: Env<'_>,
    bytes_before: Option<usize>,
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
    let bytes_before = bytes_before.unwrap_or_else(|| json_len(&formats::emit(format, &conv)));
    let client_images = formats::images::fingerprints(&conv);
    let observed = conv.observations().len();
    let (mut report, spills) =
        run_stages(&mut conv, config, env.store, env.counter, env.state, format)?;
    report.repairs = repairs;
    let limited =
        formats::images::enforce(&mut conv, format, config.optical.max_images, &client_images);
    report.repairs.extend(limited);
    report.stable_messages = stable_messages(&conv, config, observed);
    // With every stage off the request passes through untouched.
    let rewrites = report.stages.iter().any(|s| s.enabled);
    if format == FormatName::Anthropic
        && config.cache_breakpoint
        && rewrites
        && formats::anthropic::mark_breakpoint(&mut conv, report.stable_messages)
    {
        report.cache_breakpoint = Some(report.stable_messages - 1);
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
    })
}

fn run_stages(
    conv: &mut Conversation,
    config: &Config,
    store: &mut dyn SpillStore,
    counter: &dyn TokenCounter,
    state: &mut SessionState,
    format: FormatName,
) -> Result<(Report, Vec<SpillBlob>)> {
    let stages: [&dyn Stage; 5] = [
        &crate::spill::Spill,
        &crate::dedup::Dedup,
        &crate::phase::Phase,
        &crate::optical::Optical,
        &crate::compact::Compact,
    ];
    let mut cx = StageContext::new(config, counter, store, state);
    let tokens_before = cx.meter.conversation(conv)?;
    let mut tokens = tokens_before;
    let mut stage_reports = Vec::with_capacity(stages.len());
    for stage in stages {
        cx.stage = stage.name();
        let enabled = stage.enabled(&cx);
        let before = tokens;
        if enabled {
            let recorded = cx.changes.len();
            stage.apply(conv, &mut cx)?;
            // Stages record every change they make; recount only when one did.
            if cx.changes.len() != recorded {
                tokens = cx.meter.conversation(conv)?;
            }
        }
        stage_reports.push(StageReport {
            stage: stage.name(),
            enabled,
            tokens_before: before,
            tokens_after: tokens,
            notes: std::mem::take(&mut cx.notes),
        });
    }
    cx.state.turns += 1;
    let report = Report {
        format,
        tokens_before,
        tokens_after: tokens,
        bytes_before: 0,
        bytes_after: 0,
        stages: stage_reports,
        changes: cx.changes,
        spills: cx.spills,
        repairs: Vec::new(),
        redactions: cx.redactions,
        prefix: None,
        stable_messages: 0,
        cache_breakpoint: None,
    };
    Ok((report, cx.blobs))
}

/// Messages before the first observation still live (not yet demoted in a
/// whole batch, [`Config::demoted`]) out of the `observed` tool results the
/// request arrived with: the next stage change that follows from a new
/// observation (dedup, a snapshot batch) lands at or after it. With no live
/// observation the whole request is stable.
fn stable_messages(conv: &Conversation, config: &Config, observed: usize) -> usize {
    let live = observed - config.demoted(observed);
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
