//! [`TraceLite`]: the stateful controller for agents that run in-process (layer 5, host).
//!
//! The controller keeps the raw history (never compressed), a [`SpillStore`] and
//! the [`HostState`] caches, and runs the same pure pipeline as
//! [`crate::compress`] whenever the agent needs a request. Assembling the same
//! history twice gives the same bytes; the report says how much of the
//! previous request's prefix the new one reuses.
//!
//! ```
//! use tracelite::formats::FormatName;
//! use tracelite::model::{Message, Role, ToolCall};
//! use tracelite::controller::TraceLite;
//! use tracelite::Config;
//!
//! let mut tl = TraceLite::new(Config::default());
//! tl.add_message(Message::text(Role::User, "Fix the failing test")).unwrap();
//! let call = ToolCall { id: String::new(), name: "bash".into(), arguments: r#"{"command":"ls"}"#.into() };
//! tl.process_step(call, "src\ntests\n").unwrap();
//! let out = tl.assemble(FormatName::OpenaiChat, Default::default()).unwrap();
//! assert!(out.request.contains("\"tool_calls\""));
//! assert_eq!(tl.telemetry().steps, 1);
//! ```

use std::collections::{BTreeMap, HashSet};

use serde::Serialize;
use serde_json::Value;

use crate::activity::{self, EditAction, OwnFiles};
use crate::config::Config;
use crate::error::{Error, ErrorCode, Result};
use crate::formats::FormatName;
use crate::model::{
    Conversation, Extra, Layout, Message, Part, PartKind, Role, ToolCall, ToolResult,
};
use crate::pipeline::{
    compress, json_len, Env, HostState, Known, Output, PrefixReport, Report, StageName,
};
use crate::spill::api::spill_text;
use crate::store::{MemoryStore, SpillStore};
use crate::tokens::{CachedCounter, CountCache, Estimator, TokenCounter};

/// What [`TraceLite::process_step`] recorded.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct StepSummary {
    /// 1-based number of the step (tool call) in the session.
    pub step: usize,
    /// Id of the call (generated as `call_<n>` when the host gave none).
    pub call_id: String,
    /// Tokens of the output as received.
    pub output_tokens: u64,
    /// The edit the call makes, if the activity reader sees one that did not fail.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub edit: Option<EditAction>,
    /// Whether the call changed a file that existed before the session (the
    /// phase clean-up begins at the first such change).
    pub changes_existing: bool,
}

/// Counters of a session, for dashboards and tests.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Telemetry {
    /// Tool steps processed.
    pub steps: usize,
    /// Messages in the raw history (system prompt included).
    pub messages: usize,
    /// Requests assembled.
    pub assembles: u64,
    /// Tokens of the raw history at the last assemble.
    pub tokens_raw: u64,
    /// Tokens of the last assembled request.
    pub tokens_sent: u64,
    /// Sum of raw tokens over every assemble.
    pub total_tokens_raw: u64,
    /// Sum of sent tokens over every assemble.
    pub total_tokens_sent: u64,
    /// Tokens saved per stage, summed over every assemble.
    pub saved_by_stage: BTreeMap<String, u64>,
    /// Edit actions seen among the steps.
    pub edits: usize,
    /// Step of the first edit action.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub first_edit_step: Option<usize>,
    /// Step of the first change to a file that existed before the session:
    /// where the phase clean-up begins.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub phase_start_step: Option<usize>,
    /// Blobs in the spill store for this session.
    pub spill_blobs: usize,
    /// Bytes in the spill store for this session.
    pub spill_bytes: usize,
    /// Prefix shared with the previous request of the same format, at the last assemble.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub prefix: Option<PrefixReport>,
}

/// The stateful controller: raw history + spill store + caches, running the
/// pure pipeline on demand.
pub struct TraceLite<S: SpillStore = MemoryStore> {
    config: Config,
    conversation: Conversation,
    store: S,
    state: HostState,
    counter: Box<dyn TokenCounter>,
    previous: BTreeMap<&'static str, String>,
    telemetry: Telemetry,
    own_files: OwnFiles,
    /// Words of every call and output so far: whether a file was mentioned before.
    mentioned: activity::Mentioned,
    last_report: Option<Report>,
    /// Bytes of tool output held in `conversation` (bounded by `limits.maxHistoryBytes`).
    history_bytes: usize,
    /// Observations before this one were spilled in place (or were small).
    bounded_upto: usize,
    /// Ids of the tool calls processed so far.
    call_ids: HashSet<String>,
    /// Per format, per message of `conversation.messages`: the items it adds
    /// to the emitted list and their bytes (`None`: not measured since it
    /// last changed), so `bytesBefore` costs only the new messages.
    sizes: BTreeMap<&'static str, Vec<Option<(usize, usize)>>>,
    /// Messages emitted to measure `bytesBefore`, over the session.
    measured: u64,
    /// Tokens of each message, system prompt first (`None`: not counted
    /// since it last changed, or it holds an image, priced by the settings).
    tokens: Vec<Option<u64>>,
}

impl TraceLite<MemoryStore> {
    /// A session with an in-memory store and the built-in token estimator.
    pub fn new(config: Config) -> Self {
        Self::with_store(config, MemoryStore::new())
    }
}

impl<S: SpillStore> TraceLite<S> {
    /// A session keeping removed text in `store`.
    pub fn with_store(config: Config, store: S) -> Self {
        Self {
            config,
            conversation: Conversation::default(),
            store,
            state: HostState::default(),
            counter: Box::new(Estimator),
            previous: BTreeMap::new(),
            telemetry: Telemetry::default(),
            own_files: OwnFiles::default(),
            mentioned: activity::Mentioned::default(),
            last_report: None,
            history_bytes: 0,
            bounded_upto: 0,
            call_ids: HashSet::new(),
            sizes: BTreeMap::new(),
            measured: 0,
            tokens: Vec::new(),
        }
    }

    /// Uses `counter` instead of the built-in estimator.
    pub fn with_counter(mut self, counter: Box<dyn TokenCounter>) -> Self {
        self.counter = counter;
        // Counts of the old counter are not this one's.
        self.state.counts = CountCache::default();
        self
    }

    /// Settings used by the next assemble.
    pub fn config(&self) -> &Config {
        &self.config
    }

    /// The raw (uncompressed) history.
    pub fn conversation(&self) -> &Conversation {
        &self.conversation
    }

    /// The spill store.
    pub fn store(&self) -> &S {
        &self.store
    }

    /// The spill store, mutably (to read blobs back: `get` may refresh an LRU).
    pub fn store_mut(&mut self) -> &mut S {
        &mut self.store
    }

    /// Appends a system, user or assistant message. Tool calls and results go
    /// through [`Self::process_step`] so that they always come in pairs.
    pub fn add_message(&mut self, message: Message) -> Result<()> {
        if message.role == Role::Tool
            || message
                .parts
                .iter()
                .any(|p| matches!(p.kind, PartKind::ToolCall(_) | PartKind::ToolResult(_)))
        {
            return Err(Error::new(
                ErrorCode::InvalidRequest,
                "message",
                "tool calls and results are added with processStep",
            ));
        }
        let leading = self.conversation.messages.is_empty();
        if leading && matches!(message.role, Role::System | Role::Developer) {
            self.conversation.system.push(message);
        } else {
            self.conversation.messages.push(message);
        }
        self.telemetry.messages += 1;
        Ok(())
    }

    /// Appends a message given as an OpenAI Chat message object
    /// (`{"role": "user", "content": "…"}`, content parts allowed).
    pub fn add_message_json(&mut self, message: &Value) -> Result<()> {
        let request = serde_json::json!({ "messages": [message] });
        let mut conv = crate::formats::parse(FormatName::OpenaiChat, &request).map_err(|e| {
            Error::new(
                e.code,
                e.path.replacen("messages[0]", "message", 1),
                e.message,
            )
        })?;
        let message = conv
            .system
            .pop()
            .or_else(|| conv.messages.pop())
            .ok_or_else(|| Error::new(ErrorCode::InvalidRequest, "message", "missing"))?;
        self.add_message(message)
    }

    /// Records one agent step: the assistant's tool call and the tool's output.
    /// The call joins the last assistant message when that message has text
    /// but no call yet (thought + action), otherwise it opens a new one.
    pub fn process_step(
        &mut self,
        mut call: ToolCall,
        output: impl Into<String>,
    ) -> Result<StepSummary> {
        if call.name.is_empty() {
            return Err(Error::new(
                ErrorCode::InvalidToolCall,
                "toolCall.name",
                "a tool call needs a name",
            ));
        }
        let step = self.telemetry.steps + 1;
        if call.id.is_empty() {
            call.id = format!("call_{step}");
        }
        if self.call_ids.contains(&call.id) {
            return Err(Error::new(
                ErrorCode::InvalidToolCall,
                "toolCall.id",
                format!("a tool call with id {:?} was already processed", call.id),
            ));
        }
        let output = output.into();
        let output_bytes = output.len();
        let output_tokens = CachedCounter {
            inner: self.counter.as_ref(),
            cache: &self.state.counts,
        }
        .count(&output)?;
        let done = activity::classify(
            &call,
            Some(&ToolResult {
                call_id: call.id.clone(),
                parts: vec![Part::text(output.as_str())],
                is_error: false,
            }),
            &self.config.phase,
        );
        let history = &self.conversation;
        let mentioned = &self.mentioned;
        // The index answers for ordinary paths; others are searched in the
        // history (bounded by `limits.maxHistoryBytes`).
        let changes_existing = self.own_files.observe(&done, |path| {
            mentioned.holds(path).unwrap_or_else(|| {
                history.messages.iter().any(|m| {
                    m.parts.iter().any(|p| match &p.kind {
                        PartKind::ToolCall(c) => activity::mentions(&c.arguments, path),
                        PartKind::ToolResult(r) => activity::mentions(&r.text(), path),
                        _ => false,
                    })
                })
            })
        });
        self.mentioned.add(&call.arguments);
        self.mentioned.add(&output);
        let edit = done
            .edited()
            .then(|| done.edits.into_iter().next())
            .flatten();
        let call_id = call.id.clone();
        let mut call_extra = Extra::new();
        call_extra.insert("type".into(), Value::String("function".into()));
        let call_part = Part {
            kind: PartKind::ToolCall(call),
            extra: call_extra,
        };
        let joins = self.conversation.messages.last().is_some_and(|m| {
            m.role == Role::Assistant
                && !m
                    .parts
                    .iter()
                    .any(|p| matches!(p.kind, PartKind::ToolCall(_)))
        });
        self.call_ids.insert(call_id.clone());
        match self.conversation.messages.last_mut() {
            Some(last) if joins => {
                last.parts.push(call_part);
                let last = self.conversation.messages.len() - 1;
                self.changed(last);
            }
            _ => {
                self.conversation.messages.push(Message {
                    role: Role::Assistant,
                    parts: vec![call_part],
                    layout: Layout::Null,
                    extra: Extra::new(),
                });
                self.telemetry.messages += 1;
            }
        }
        self.conversation.messages.push(Message {
            role: Role::Tool,
            parts: vec![Part::from(PartKind::ToolResult(ToolResult {
                call_id: call_id.clone(),
                parts: vec![Part::text(output)],
                is_error: false,
            }))],
            layout: Layout::Text,
            extra: Extra::new(),
        });
        self.telemetry.messages += 1;
        self.telemetry.steps = step;
        self.history_bytes += output_bytes;
        self.bound_history()?;
        if edit.is_some() {
            self.telemetry.edits += 1;
            self.telemetry.first_edit_step.get_or_insert(step);
        }
        let changes_existing = changes_existing && edit.is_some();
        if changes_existing {
            self.telemetry.phase_start_step.get_or_insert(step);
        }
        Ok(StepSummary {
            step,
            call_id,
            output_tokens,
            edit,
            changes_existing,
        })
    }

    /// Keeps the raw tool output under `limits.maxHistoryBytes`: spills the
    /// oldest outputs outside the recent window in place, oldest first.
    fn bound_history(&mut self) -> Result<()> {
        let limit = self.config.limits.max_history_bytes;
        if self.history_bytes <= limit {
            return Ok(());
        }
        let observations = self.conversation.observations();
        let outside = observations.len().saturating_sub(self.config.window.max(1));
        let counter = CachedCounter {
            inner: self.counter.as_ref(),
            cache: &self.state.counts,
        };
        let mut spilled_at = Vec::new();
        while self.history_bytes > limit && self.bounded_upto < outside {
            let Some(&at) = observations.get(self.bounded_upto) else {
                break;
            };
            self.bounded_upto += 1;
            let Some(result) = self
                .conversation
                .tool_result(at)
                .filter(|r| r.parts.iter().all(|p| p.as_text().is_some()))
            else {
                continue;
            };
            let text = result.text();
            // The result's tool, for its cap (`spill.toolCaps`, `excludeTools`).
            let tool = if self.config.has_tool_rules() {
                self.conversation.tool_call(&result.call_id)
            } else {
                None
            };
            let tool = tool.map(|call| call.name.clone());
            let spilled = spill_text(
                &text,
                tool.as_deref(),
                &self.config,
                &mut self.store,
                &counter,
            )?;
            if !spilled.spilled {
                continue;
            }
            self.history_bytes = self
                .history_bytes
                .saturating_sub(text.len())
                .saturating_add(spilled.text.len());
            if let Some(result) = self.conversation.tool_result_mut(at) {
                result.parts = vec![Part::text(spilled.text)];
            }
            spilled_at.push(at.message);
        }
        for message in spilled_at {
            self.changed(message);
        }
        Ok(())
    }

    /// The request (in `format`, with `base` as its other top-level members,
    /// e.g. `model`) that the agent should send now: the raw history run
    /// through every enabled stage.
    pub fn assemble(&mut self, format: FormatName, base: Extra) -> Result<Output> {
        let bytes_before = self.history_len(format, &base);
        let tokens = self.message_tokens()?;
        let mut conv = self.conversation.clone();
        conv.extra = base;
        let previous = self.previous.get(format.as_str()).map(String::as_str);
        // Repair mode measures the repaired conversation instead.
        let known = if self.config.repair {
            Known::default()
        } else {
            Known {
                bytes: bytes_before,
                tokens: Some(tokens),
            }
        };
        // The pipeline counts through the session state's cache.
        let out = compress(
            conv,
            &self.config,
            &mut Env {
                store: &mut self.store,
                counter: self.counter.as_ref(),
                state: &mut self.state,
                previous,
                format: Some(format),
                known,
            },
        )?;
        self.previous.insert(format.as_str(), out.request.clone());
        self.observe(&out.report);
        self.last_report = Some(out.report.clone());
        Ok(out)
    }

    /// Forgets the measured sizes and token count of message `index` of
    /// `conversation.messages` (it changed).
    fn changed(&mut self, index: usize) {
        for sizes in self.sizes.values_mut() {
            if let Some(slot) = sizes.get_mut(index) {
                *slot = None;
            }
        }
        let system = self.conversation.system.len();
        if let Some(slot) = self.tokens.get_mut(system + index) {
            *slot = None;
        }
    }

    /// Tokens of each message of the history, system prompt first: only new
    /// or changed ones (and ones with images) are counted.
    fn message_tokens(&mut self) -> Result<Vec<u64>> {
        let conv = &self.conversation;
        let meter = crate::tokens::Meter {
            counter: &CachedCounter {
                inner: self.counter.as_ref(),
                cache: &self.state.counts,
            },
            provider: self.config.provider,
            optical: &self.config.optical,
        };
        self.tokens
            .resize(conv.system.len() + conv.messages.len(), None);
        let mut out = Vec::with_capacity(self.tokens.len());
        for (slot, m) in self
            .tokens
            .iter_mut()
            .zip(conv.system.iter().chain(&conv.messages))
        {
            let n = match *slot {
                Some(n) => n,
                None => {
                    let n = meter.message(m)?;
                    if !has_image(&m.parts) {
                        *slot = Some(n);
                    }
                    n
                }
            };
            out.push(n);
        }
        Ok(out)
    }

    /// Bytes of the raw history emitted as `format` with `base` (what
    /// `bytesBefore` reports), from the sizes of the messages measured on
    /// earlier turns: only new or changed messages are emitted. `None` where
    /// messages do not emit independently (images in tool results for Chat,
    /// Responses `input` given as a string): then the pipeline emits it all.
    fn history_len(&mut self, format: FormatName, base: &Extra) -> Option<usize> {
        let key = match format {
            FormatName::OpenaiChat | FormatName::Anthropic => "messages",
            FormatName::OpenaiResponses => "input",
            FormatName::Gemini => "contents",
        };
        if format == FormatName::OpenaiResponses && base.get("input").is_some_and(Value::is_string)
        {
            return None;
        }
        let messages = &self.conversation.messages;
        let sizes = self.sizes.entry(format.as_str()).or_default();
        sizes.resize(messages.len(), None);
        let (mut items, mut bytes) = (0usize, 0usize);
        for (i, slot) in sizes.iter_mut().enumerate() {
            let (n, b) = match *slot {
                Some(size) => size,
                None => {
                    let size = emitted_size(format, key, messages, i)?;
                    self.measured += 1;
                    *slot = Some(size);
                    size
                }
            };
            items += n;
            bytes += b;
        }
        let envelope = Conversation {
            system: self.conversation.system.clone(),
            messages: Vec::new(),
            extra: base.clone(),
        };
        let envelope = crate::formats::emit(format, &envelope);
        let len = json_len(&envelope);
        let held = envelope.get(key).and_then(Value::as_array).map(Vec::len);
        let commas = |n: usize| n.saturating_sub(1);
        Some(match held {
            _ if items == 0 => len,
            Some(k) => len + bytes + commas(k + items) - commas(k),
            // The list is left out when empty (Responses): `,"input":[…]`.
            None => {
                let comma = usize::from(envelope.as_object().is_some_and(|o| !o.is_empty()));
                len + comma + key.len() + 3 + 2 + bytes + commas(items)
            }
        })
    }

    /// Marks the end of a task stage: the next assemble is a compaction trigger.
    pub fn finish_stage(&mut self) {
        self.state.compact.finish_stage(&self.config.session);
    }

    /// Pins a constraint the compaction archive keeps word for word; returns
    /// whether it was new.
    pub fn pin_constraint(&mut self, text: &str) -> Result<bool> {
        self.state.compact.pin(&self.config.session, text)
    }

    /// Constraints pinned so far.
    pub fn pinned_constraints(&self) -> &[String] {
        self.state.compact.pinned(&self.config.session)
    }

    /// The report of the last assemble.
    pub fn report(&self) -> Option<&Report> {
        self.last_report.as_ref()
    }

    /// Counters of the session so far.
    pub fn telemetry(&self) -> Telemetry {
        let mut t = self.telemetry.clone();
        let blobs = self.store.list(&self.config.session);
        t.spill_blobs = blobs.len();
        t.spill_bytes = blobs.iter().map(|b| b.bytes).sum();
        t
    }

    /// Work a turn could not reuse from earlier turns, summed over the
    /// session (cache misses): what tests hold to the size of what changed.
    pub fn work(&self) -> Work {
        Work {
            counted_bytes: self.state.counts.counted_bytes(),
            redacted_bytes: self.state.redacted.scanned_bytes,
            classified: self.state.activities.classified,
            weighed: self.state.optical.proposals.computed,
            deduped: self.state.dedup.decided,
            measured: self.measured,
        }
    }

    fn observe(&mut self, report: &Report) {
        let t = &mut self.telemetry;
        t.assembles += 1;
        t.tokens_raw = report.tokens_before;
        t.tokens_sent = report.tokens_after;
        t.total_tokens_raw = t.total_tokens_raw.saturating_add(report.tokens_before);
        t.total_tokens_sent = t.total_tokens_sent.saturating_add(report.tokens_after);
        for stage in &report.stages {
            let saved = stage.tokens_before.saturating_sub(stage.tokens_after);
            *t.saved_by_stage
                .entry(stage_key(stage.stage).to_string())
                .or_default() += saved;
        }
        t.prefix = report.prefix.clone();
    }
}

/// Whether `parts` hold an image (tool results included).
fn has_image(parts: &[Part]) -> bool {
    parts.iter().any(|p| match &p.kind {
        PartKind::Image(_) => true,
        PartKind::ToolResult(r) => has_image(&r.parts),
        _ => false,
    })
}

/// Cache misses of a session, summed over its turns ([`TraceLite::work`]).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Work {
    /// Bytes of text the token counter priced.
    pub counted_bytes: u64,
    /// Bytes of text scanned for secrets.
    pub redacted_bytes: u64,
    /// Tool calls classified (edit, search, test run…).
    pub classified: u64,
    /// Observations the optical stage weighed for a snapshot.
    pub weighed: u64,
    /// Observations dedup read against the later ones in their window.
    pub deduped: u64,
    /// Messages emitted to measure `bytesBefore`.
    pub measured: u64,
}

/// The items message `i` of `messages` adds to the `key` list of a `format`
/// request and their bytes; `None` when that depends on other messages.
fn emitted_size(
    format: FormatName,
    key: &str,
    messages: &[Message],
    i: usize,
) -> Option<(usize, usize)> {
    let msg = messages.get(i)?;
    let results: Vec<&ToolResult> = msg
        .parts
        .iter()
        .filter_map(|p| match &p.kind {
            PartKind::ToolResult(r) => Some(r),
            _ => None,
        })
        .collect();
    // Chat moves images of tool results into a user message shared by a
    // run of tool messages.
    if format == FormatName::OpenaiChat
        && results
            .iter()
            .any(|r| r.parts.iter().any(|p| p.as_text().is_none()))
    {
        return None;
    }
    // Gemini names a function response after its call: emit the call's
    // message too (the one before, in a session).
    let mut mini = Conversation::default();
    if format == FormatName::Gemini && !results.is_empty() {
        if let Some(prev) = i.checked_sub(1).and_then(|p| messages.get(p)) {
            mini.messages.push(prev.clone());
        }
    }
    mini.messages.push(msg.clone());
    if format == FormatName::Gemini && results.iter().any(|r| mini.tool_call(&r.call_id).is_none())
    {
        return None;
    }
    let (emitted, at) = crate::formats::emit_indexed(format, &mini);
    let start = at.last().copied().unwrap_or(0);
    let list = emitted
        .get(key)
        .and_then(Value::as_array)
        .map_or(&[][..], Vec::as_slice);
    let own = list.get(start..).unwrap_or(&[]);
    let bytes = own.iter().map(json_len).sum();
    Some((own.len(), bytes))
}

fn stage_key(stage: StageName) -> &'static str {
    match stage {
        StageName::Spill => "spill",
        StageName::Dedup => "dedup",
        StageName::Phase => "phase",
        StageName::Optical => "optical",
        StageName::Compact => "compact",
    }
}
