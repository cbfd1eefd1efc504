//! The pipeline (layer 4): the one entry point [`compress`] (a conversation
//! in the neutral model → stages → one emit step → the [`Report`], built
//! once) and its JSON-text wrapper [`compress_json`] (parse → [`compress`]),
//! which the wasm layer calls; the stateful [`crate::TraceLite`] calls
//! [`compress`] on the history it keeps. It owns every stage's state across
//! calls ([`HostState`]) and hands each stage its own.

use serde::Serialize;
use serde_json::Value;

use crate::config::{Config, OverBudgetMode};
use crate::error::{Error, ErrorCode, Result};
use crate::formats::{self, FormatName};
use crate::model::Conversation;
use crate::redact::Redactions;
use crate::spill::SpillStore;
use crate::tokens::{CachedCounter, Estimator, TokenCounter};

use std::collections::VecDeque;

use crate::plan::{Candidate, Decision, Planning};
pub use crate::stage::{
    Change, CompactionOutcome, SpillBlob, SpillRecord, Stage, StageContext, StageName,
};
use crate::stage::{Schedule, SharedCaches, StageOutput, Verdict};

/// State a host keeps across calls (caches, compaction records), for every
/// session (spill namespace, `config.session`) it serves. Stateless callers
/// pass a fresh one; results are identical, only slower.
#[derive(Debug, Default)]
pub struct HostState {
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

/// A request still over `budget` after every stage (`report.overBudget`).
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct OverBudget {
    /// Tokens of the request as emitted.
    pub tokens: u64,
    /// The `budget` option.
    pub budget: u64,
    /// Path of the message with the most tokens, in the request's own format
    /// (e.g. `messages[3]`, `input[3]`, `contents[3]`).
    pub largest: String,
    /// Tokens of that message.
    pub largest_tokens: u64,
}

/// What a compress call did.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Report {
    /// Set when the request as emitted still exceeds `budget` after every
    /// stage (with `limits.overBudget: "error"` the call fails with
    /// `OVER_BUDGET` instead).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub over_budget: Option<OverBudget>,
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

/// What the host brings to a call: its collaborators (spill store, token
/// counter, per-session state), the previous output, and what it already
/// knows of the conversation (its format, sizes and counts).
pub struct Env<'a> {
    /// Spill store.
    pub store: &'a mut dyn SpillStore,
    /// Text token counter.
    pub counter: &'a dyn TokenCounter,
    /// Per-session caches.
    pub state: &'a mut HostState,
    /// The previous output request (JSON text), for prefix reuse.
    pub previous: Option<&'a str>,
    /// The format the conversation came in and is emitted as; `None`:
    /// `config.format`, and for [`compress_json`] the request's own (detected).
    pub format: Option<FormatName>,
    /// What the host knows of the conversation, so it is not measured again
    /// ([`compress`] consumes it).
    pub known: Known,
}

impl<'a> Env<'a> {
    /// An environment with `store` and `state`, the built-in token
    /// estimator, no previous output and nothing known of the conversation.
    pub fn new(store: &'a mut dyn SpillStore, state: &'a mut HostState) -> Self {
        Self {
            store,
            counter: &Estimator,
            state,
            previous: None,
            format: None,
            known: Known::default(),
        }
    }
}

/// What a caller knows of the conversation it hands to [`compress`].
#[derive(Debug, Clone, Default)]
pub struct Known {
    /// Bytes of the request as received (the report's `bytesBefore`; for the
    /// stateful controller, its history emitted as is).
    pub bytes: Option<usize>,
    /// Tokens of each message ([`crate::tokens::Meter::message`]), the
    /// system prompt first (ignored when repair mode changed the conversation).
    pub tokens: Option<Vec<u64>>,
}

/// The JSON-text wrapper over [`compress`] (what the wasm layer calls):
/// parses `request` strictly (within `limits`), in `env.format`, else
/// `config.format`, else the format it is detected as, and compresses it,
/// knowing its size.
pub fn compress_json(request: &str, config: &Config, mut env: Env<'_>) -> Result<Output> {
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
    let format = match env.format.or(config.format) {
        Some(f) => f,
        None => formats::detect(&value)?,
    };
    let conv = formats::parse(format, &value)?;
    drop(value);
    env.format = Some(format);
    env.known.bytes = Some(request.len());
    compress(conv, config, &mut env)
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

/// The one entry point: runs the stages over `conv` (in the neutral model)
/// and emits it as `env.format` (else `config.format`), with the [`Report`]
/// of the call. Same conversation, config and state ⇒ the same bytes.
pub fn compress(mut conv: Conversation, config: &Config, env: &mut Env<'_>) -> Result<Output> {
    let format = env.format.or(config.format).ok_or_else(|| {
        Error::new(
            ErrorCode::UnknownFormat,
            "format",
            "compress needs the conversation's format (options.format, or compress_json detects it)",
        )
    })?;
    let mut known = std::mem::take(&mut env.known);
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
    let mut repairs = if config.repair {
        formats::repair(&mut conv, format)?
    } else {
        formats::validate(&conv, format)?;
        Vec::new()
    };
    if !repairs.is_empty() {
        // Counts of the messages as they came in, not as repaired.
        known.tokens = None;
    }
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
        known.tokens,
    );
    env.state.counts = counts;
    let staged = staged?;
    let stable = stable_messages(&conv, staged.plan.demoted, observed);
    let emitted = formats::emit_request(
        format,
        &mut conv,
        &formats::EmitSettings {
            max_images: config.optical.max_images,
            model_limits: staged.model_limits,
            image_url: &config.optical.image_url,
            client_images: &client_images,
            // With every stage off the request passes through untouched.
            cache_breakpoints: config.cache_breakpoint && staged.stages.iter().any(|s| s.enabled),
            stable_messages: stable,
        },
        &mut env.state.keys,
    )?;
    let mut changes = staged.changes;
    for c in &mut changes {
        c.message = emitted.at.get(c.message).copied().unwrap_or(c.message);
    }
    repairs.extend(emitted.repairs);
    let over_budget = over_budget(
        config,
        format,
        staged.tokens_after,
        staged.largest,
        &emitted.at,
    )?;
    let request = emitted.request;
    let report = Report {
        over_budget,
        format,
        tokens_before: staged.tokens_before,
        tokens_after: staged.tokens_after,
        bytes_before,
        bytes_after: request.len(),
        image_urls: emitted.image_urls,
        stages: staged.stages,
        changes,
        spills: staged.spills,
        repairs,
        redactions: staged.redactions,
        prefix: env.previous.map(|prev| PrefixReport {
            shared_bytes: shared_prefix(prev, &request),
            previous_bytes: prev.len(),
            current_bytes: request.len(),
        }),
        stable_messages: stable,
        plan: staged.plan,
        cache_breakpoint: emitted.cache_breakpoint,
        cache_breakpoints: emitted.cache_breakpoints,
        compaction: staged.compaction,
    };
    Ok(Output {
        request,
        conversation: conv,
        report,
        spills: staged.blobs,
        images: emitted.images,
    })
}

/// What the stages did on a call, for the [`Report`].
struct Staged {
    tokens_before: u64,
    tokens_after: u64,
    stages: Vec<StageReport>,
    changes: Vec<Change>,
    spills: Vec<SpillRecord>,
    blobs: Vec<SpillBlob>,
    redactions: Redactions,
    plan: crate::plan::PlanReport,
    compaction: Option<CompactionOutcome>,
    /// The image limits of the model the request goes to.
    model_limits: Option<formats::images::ImageLimits>,
    /// The conversation message (not the system prompt) with the most tokens
    /// after every stage: its index in `conv.messages` and its tokens.
    largest: Option<(usize, u64)>,
}

fn run_stages(
    conv: &mut Conversation,
    config: &Config,
    store: &mut dyn SpillStore,
    counter: &dyn TokenCounter,
    state: &mut HostState,
    known: Option<Vec<u64>>,
) -> Result<Staged> {
    let HostState {
        compact,
        optical,
        redacted,
        keys,
        activities,
        dedup,
        counts: _,
        excerpts,
    } = state;
    // What compaction did is this call's alone.
    compact.take_outcome();
    let caches = SharedCaches {
        keys,
        redacted,
        activities,
    };
    let (mut between, mut phase) = ((), ());
    let mut cx: StageContext<'_> = StageContext::new(config, counter, store, caches, &mut between);
    if config.model.trim().is_empty() {
        // The request's own `model` (Gemini names it in the URL: the host
        // passes it as the `model` option).
        if let Some(named) = conv.extra.get("model").and_then(Value::as_str) {
            cx.model = crate::capability::lookup(named, &config.models);
        }
    }
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
        gathered: Gathered::default(),
    };
    let stages: VecDeque<Box<dyn Run<'_> + '_>> = VecDeque::from([
        Bound::boxed(crate::spill::Spill, excerpts),
        Bound::boxed(crate::dedup::Dedup, dedup),
        Bound::boxed(crate::phase::Phase, &mut phase),
        Bound::boxed(crate::optical::Optical, optical),
        Bound::boxed(crate::compact::Compact, &mut *compact),
    ]);
    let mut cx = run.all(conv, cx, stages)?;
    cx.keys.end_call();
    let (prices, prices_source) = crate::plan::prices::for_config(config);
    let plan = crate::plan::PlanReport {
        prices,
        prices_source,
        demoted: cx.committed.as_ref().map_or(0, Schedule::demoted),
        candidates: run.gathered.candidates,
    };
    let counts = if cx.message_tokens.len() == conv.system.len() + conv.messages.len() {
        std::mem::take(&mut cx.message_tokens)
    } else {
        cx.meter.messages(conv)?
    };
    let largest = largest_message(counts.get(conv.system.len()..).unwrap_or_default());
    let model_limits = cx.model.limits;
    drop(cx);
    Ok(Staged {
        largest,
        tokens_before,
        tokens_after: run.tokens,
        stages: run.reports,
        changes: run.gathered.changes,
        spills: run.gathered.spills,
        blobs: run.gathered.blobs,
        redactions: run.gathered.redactions,
        plan,
        compaction: compact.take_outcome(),
        model_limits,
    })
}

/// What the stages returned on a call, gathered in order, and what the
/// planner weighed.
#[derive(Default)]
struct Gathered {
    changes: Vec<Change>,
    spills: Vec<SpillRecord>,
    blobs: Vec<SpillBlob>,
    /// Notes not yet reported (the next stage report takes them).
    notes: Vec<String>,
    redactions: Redactions,
    candidates: Vec<Candidate>,
}

impl Gathered {
    /// Adds what a stage returned: earlier changes follow their messages
    /// through the prefixes it replaced, and a blob already stored during
    /// this call is recorded once.
    fn gather(&mut self, out: StageOutput) {
        for r in &out.replaced {
            for c in &mut self.changes {
                c.message = r.moved(c.message);
            }
        }
        self.changes.extend(out.changes);
        for (spill, blob) in out.spills.into_iter().zip(out.blobs) {
            if !self.spills.iter().any(|s| s.key == spill.key) {
                self.spills.push(spill);
                self.blobs.push(blob);
            }
        }
        self.notes.extend(out.notes);
        self.redactions.merge(&out.redactions);
    }

    /// Records the candidate the planner weighed and hands the schedule it
    /// committed (a demotion) to the stages (`committed`); the decision as
    /// the proposing stage reads it. Not generic, so it exists once.
    fn ruled(&mut self, decision: Decision, committed: &mut Option<Schedule>) -> Verdict {
        let verdict = decision.verdict();
        if let Some(schedule) = decision.schedule {
            *committed = Some(schedule);
        }
        self.candidates.extend(decision.candidate);
        verdict
    }
}

/// The index and tokens of the largest of `counts` (the first of equals).
fn largest_message(counts: &[u64]) -> Option<(usize, u64)> {
    counts
        .iter()
        .copied()
        .enumerate()
        .fold(None, |best, (i, n)| match best {
            Some((_, m)) if m >= n => best,
            _ => Some((i, n)),
        })
}

/// `report.overBudget` when the output still exceeds `config.budget` after
/// every stage; `OVER_BUDGET` at the largest message's path instead with
/// `limits.overBudget: "error"`.
fn over_budget(
    config: &Config,
    format: FormatName,
    tokens: u64,
    largest: Option<(usize, u64)>,
    at: &[usize],
) -> Result<Option<OverBudget>> {
    if tokens <= config.budget {
        return Ok(None);
    }
    let member = format.messages_member();
    let (path, largest_tokens) = match largest {
        Some((i, n)) => (format!("{member}[{}]", at.get(i).copied().unwrap_or(i)), n),
        None => (member.to_string(), 0),
    };
    if config.limits.over_budget == OverBudgetMode::Error {
        return Err(Error::new(
            ErrorCode::OverBudget,
            path,
            format!(
                "the request is {tokens} tokens after every stage, more than the budget ({}); this message is the largest ({largest_tokens} tokens) (limits.overBudget: \"error\")",
                config.budget
            ),
        ));
    }
    Ok(Some(OverBudget {
        tokens,
        budget: config.budget,
        largest: path,
        largest_tokens,
    }))
}

/// Asks each of `stages` (when enabled, and when the planner prices
/// demotions) for its demotion proposal on `conv` as it stands, in order,
/// for the planner's round ([`crate::plan::commit_demotions`]).
#[allow(clippy::type_complexity)]
fn ask_demotions<'a>(
    conv: &Conversation,
    mut cx: StageContext<'a>,
    stages: VecDeque<Box<dyn Run<'a> + 'a>>,
) -> Result<(
    StageContext<'a>,
    VecDeque<Box<dyn Run<'a> + 'a>>,
    Vec<Option<Vec<u64>>>,
)> {
    if !crate::plan::prices_demotions(cx.config) {
        return Ok((cx, stages, Vec::new()));
    }
    let mut proposed = Vec::with_capacity(stages.len());
    let mut asked = VecDeque::with_capacity(stages.len());
    for stage in stages {
        let (next, proposal, stage) = stage.propose(conv, cx)?;
        cx = next;
        asked.push_back(stage);
        proposed.push(proposal);
    }
    Ok((cx, asked, proposed))
}

/// A stage bound to its own state, so one loop runs them all.
trait Run<'a> {
    /// [`Stage::scheduled`].
    fn scheduled(&self) -> bool;
    /// The stage's demotion proposal ([`Stage::propose`]) when it is enabled.
    #[allow(clippy::type_complexity)]
    fn propose(
        self: Box<Self>,
        conv: &Conversation,
        cx: StageContext<'a>,
    ) -> Result<(StageContext<'a>, Option<Vec<u64>>, Box<dyn Run<'a> + 'a>)>;
    /// Runs the stage (when enabled) and reports it.
    fn run(
        self: Box<Self>,
        conv: &mut Conversation,
        cx: StageContext<'a>,
        runner: &mut Runner,
    ) -> Result<StageContext<'a>>;
}

/// A stage and its state across calls.
struct Bound<'a, T: Stage> {
    stage: T,
    state: &'a mut T::State,
}

impl<'a, T: Stage + 'a> Bound<'a, T> {
    fn boxed(stage: T, state: &'a mut T::State) -> Box<dyn Run<'a> + 'a> {
        Box::new(Self { stage, state })
    }
}

impl<'a, T: Stage + 'a> Run<'a> for Bound<'a, T> {
    fn scheduled(&self) -> bool {
        self.stage.scheduled()
    }

    fn propose(
        self: Box<Self>,
        conv: &Conversation,
        cx: StageContext<'a>,
    ) -> Result<(StageContext<'a>, Option<Vec<u64>>, Box<dyn Run<'a> + 'a>)> {
        let Bound { stage, state } = *self;
        let (mut own, between) = cx.with(state);
        own.stage = stage.name();
        let proposed = if stage.enabled(&own) {
            stage.propose(conv, &mut own)?
        } else {
            None
        };
        let (cx, state) = own.with(between);
        Ok((cx, proposed, Box::new(Bound { stage, state })))
    }

    fn run(
        self: Box<Self>,
        conv: &mut Conversation,
        cx: StageContext<'a>,
        runner: &mut Runner,
    ) -> Result<StageContext<'a>> {
        runner.stage(&self.stage, conv, cx, self.state)
    }
}

/// Runs the stages one by one, keeping the running token total and each
/// stage's report.
struct Runner {
    tokens: u64,
    reports: Vec<StageReport>,
    gathered: Gathered,
}

impl Runner {
    /// Stages propose, the planner commits, stages apply, in one loop: before
    /// the first stage that follows the schedule, the stages still to run
    /// propose demotions on the history as the earlier ones left it, and the
    /// planner commits them (a later stage may leave its own proposal, e.g. a
    /// compaction, which the planner rules on before the stage settles it).
    fn all<'a>(
        &mut self,
        conv: &mut Conversation,
        mut cx: StageContext<'a>,
        mut stages: VecDeque<Box<dyn Run<'a> + 'a>>,
    ) -> Result<StageContext<'a>> {
        while let Some(stage) = stages.pop_front() {
            if cx.committed.is_none() && stage.scheduled() {
                stages.push_front(stage);
                let proposed;
                (cx, stages, proposed) = ask_demotions(conv, cx, stages)?;
                self.gathered.gather(cx.take_output());
                let decision = crate::plan::commit_demotions(conv, proposed, &Planning::of(&cx))?;
                self.gathered.ruled(decision, &mut cx.committed);
                continue;
            }
            cx = stage.run(conv, cx, self)?;
        }
        Ok(cx)
    }

    /// Runs `stage` with its own `state` in `cx` (when enabled), has the
    /// planner rule on what it proposed and the stage settle it, and
    /// reports it.
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
        let recorded = self.gathered.changes.len();
        if enabled {
            stage.apply(conv, &mut own)?;
            if let Some(proposal) = own.take_proposal() {
                let decision = crate::plan::commit(conv, &proposal, &Planning::of(&own))?;
                let verdict = self.gathered.ruled(decision, &mut own.committed);
                stage.settle(conv, &verdict, &mut own)?;
            }
        } else if let Some(why) = stage.disabled_because(&own) {
            own.notes.push(why);
        }
        let mut cx = own.with(between).0;
        self.gathered.gather(cx.take_output());
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
        if enabled && self.gathered.changes.len() != recorded {
            let changed = self.gathered.changes.get(recorded..).unwrap_or(&[]);
            recount(conv, cx, changed)?;
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
            notes: std::mem::take(&mut self.gathered.notes),
        });
        Ok(())
    }
}

/// Counts again the messages the running stage recorded its `changed` in
/// (every message after compaction, which moves them).
fn recount(conv: &Conversation, cx: &mut StageContext<'_>, changed: &[Change]) -> Result<()> {
    let system = conv.system.len();
    if cx.stage == StageName::Compact || cx.message_tokens.len() != system + conv.messages.len() {
        cx.message_tokens = cx.meter.messages(conv)?;
        return Ok(());
    }
    let mut changed: Vec<usize> = changed.iter().map(|c| c.message).collect();
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::MemoryStore;

    const REQUEST: &str = r#"{"model":"claude","max_tokens":10,"messages":[{"role":"user","content":"hi"},{"role":"assistant","content":[{"type":"tool_use","id":"a","name":"bash","input":{"command":"ls"}}]},{"role":"user","content":[{"type":"tool_result","tool_use_id":"a","content":"src\ntests"}]}]}"#;

    #[test]
    fn the_wrapper_is_parse_then_compress() {
        let config = Config::default();
        let (mut store, mut state) = (MemoryStore::new(), HostState::default());
        let wrapped = compress_json(REQUEST, &config, Env::new(&mut store, &mut state)).unwrap();
        let value = crate::json::parse_strict(REQUEST, 64).unwrap();
        let conv = formats::parse(FormatName::Anthropic, &value).unwrap();
        let (mut store, mut state) = (MemoryStore::new(), HostState::default());
        let mut env = Env {
            format: Some(FormatName::Anthropic),
            known: Known {
                bytes: Some(REQUEST.len()),
                tokens: None,
            },
            ..Env::new(&mut store, &mut state)
        };
        let core = compress(conv, &config, &mut env).unwrap();
        assert_eq!(core.request, wrapped.request);
        assert_eq!(core.report, wrapped.report);
        assert_eq!(wrapped.report.format, FormatName::Anthropic);
        // The core consumed what was known.
        assert!(env.known.bytes.is_none());
    }

    /// Earlier stages' changes follow the prefixes a later stage replaced,
    /// and a blob two stages kept is recorded once.
    #[test]
    fn gathering_follows_replacements_and_records_each_blob_once() {
        let change = |stage, message| Change {
            stage,
            message,
            kind: "x".into(),
            tokens_before: 2,
            tokens_after: 1,
            pointer: None,
            detail: String::new(),
        };
        let spill = |key: &str| SpillRecord {
            session: "s".into(),
            key: key.into(),
            pointer: format!("spill://s/{key}"),
            bytes: 1,
            lines: 1,
        };
        let blob = |key: &str| SpillBlob {
            session: "s".into(),
            key: key.into(),
            text: key.into(),
        };
        let mut gathered = Gathered::default();
        gathered.gather(StageOutput {
            changes: vec![change(StageName::Spill, 1), change(StageName::Spill, 7)],
            spills: vec![spill("a")],
            blobs: vec![blob("a")],
            ..StageOutput::default()
        });
        gathered.gather(StageOutput {
            changes: vec![change(StageName::Compact, 2)],
            spills: vec![spill("a"), spill("b")],
            blobs: vec![blob("a"), blob("b")],
            replaced: vec![crate::stage::Replacement {
                cut: 5,
                len: 3,
                folded_into: 2,
            }],
            ..StageOutput::default()
        });
        let at: Vec<usize> = gathered.changes.iter().map(|c| c.message).collect();
        assert_eq!(at, [2, 5, 2]);
        let keys: Vec<&str> = gathered.spills.iter().map(|s| s.key.as_str()).collect();
        assert_eq!(keys, ["a", "b"]);
        assert_eq!(gathered.blobs.len(), 2);
    }

    #[test]
    fn the_core_needs_a_format() {
        let value = crate::json::parse_strict(REQUEST, 64).unwrap();
        let conv = formats::parse(FormatName::Anthropic, &value).unwrap();
        let (mut store, mut state) = (MemoryStore::new(), HostState::default());
        let err = compress(
            conv,
            &Config::default(),
            &mut Env::new(&mut store, &mut state),
        )
        .unwrap_err();
        assert_eq!(
            (err.code, err.path.as_str()),
            (ErrorCode::UnknownFormat, "format")
        );
    }

    #[test]
    fn known_bytes_are_the_reports_bytes_before() {
        let value = crate::json::parse_strict(REQUEST, 64).unwrap();
        let conv = formats::parse(FormatName::Anthropic, &value).unwrap();
        let (mut store, mut state) = (MemoryStore::new(), HostState::default());
        let measured = compress(
            conv.clone(),
            &Config::default(),
            &mut Env {
                format: Some(FormatName::Anthropic),
                ..Env::new(&mut store, &mut state)
            },
        )
        .unwrap();
        // Measured: the conversation emitted as is.
        assert_eq!(
            measured.report.bytes_before,
            json_len(&formats::emit(FormatName::Anthropic, &conv))
        );
        let told = compress(
            conv,
            &Config::default(),
            &mut Env {
                format: Some(FormatName::Anthropic),
                known: Known {
                    bytes: Some(7),
                    tokens: None,
                },
                ..Env::new(&mut store, &mut state)
            },
        )
        .unwrap();
        assert_eq!(told.report.bytes_before, 7);
    }
}
