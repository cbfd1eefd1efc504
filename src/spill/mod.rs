//! Stage 1, spilling (layer 2): caps every tool result, keeps the full output
//! in a [`SpillStore`] ([`crate::store`], re-exported here) and leaves the model an [`Excerpt`] with a `spill://` pointer
//! it can page through with `read_spill` and search with `grep_spill`
//! ([`tools`]). Every other stage also keeps what it removes here. Hosts
//! reach the stage through [`api`].
//!
//! The cap per tool result is `max(spill.floorTokens, spill.fraction × budget)`
//! ([`crate::Config::result_cap`]), so it scales with the model's window;
//! a tool's own cap (`spill.toolCaps`) replaces it for that tool's outputs,
//! and the outputs of an excluded tool (`excludeTools`) without one of its
//! own are not spilled ([`crate::Config::spill_cap`]).

pub mod api;
pub mod detectors;
mod excerpt;
mod index;
mod literals;
pub mod salience;
pub mod tools;

pub use crate::hash::key::{self, content_key};
pub use crate::store::grep::{self, GrepLine, GrepOptions, GrepResult, Pattern};
pub use crate::store::{
    is_path_pointer, is_refused_excerpt, lines, parse_pointer, pointer, pointer_in, validate_name,
    MemoryStore, Page, SpillInfo, SpillStore, StoreLimits, FILE_EXTENSION, SCHEME,
};
pub use excerpt::{ErrorLine, ErrorSignals, Excerpt, Kept, ShownLine, INDEX_SHARE};
pub use index::{Entry, FactKind, HiddenIndex, Unlisted, FAILING_TEST_PATTERN};
pub use tools::{
    handle_tool_call, handle_tool_call_within, tool_definitions, ToolFormat, ToolReply,
};

use crate::error::Result;
use crate::model::{Conversation, PartKind};
use crate::stage::{Stage, StageContext, StageName};

/// The spill stage.
#[derive(Debug, Default)]
pub struct Spill;

impl Stage for Spill {
    type State = ExcerptCache;

    fn name(&self) -> StageName {
        StageName::Spill
    }

    fn enabled(&self, cx: &StageContext<'_, ExcerptCache>) -> bool {
        cx.config.spill.enabled
    }

    fn apply(
        &self,
        conv: &mut Conversation,
        cx: &mut StageContext<'_, ExcerptCache>,
    ) -> Result<()> {
        let config: &crate::config::Config = cx.config;
        let signals = cx.state.signals(&config.spill)?;
        let usual = config.result_cap();
        let settings = excerpt_settings(cx, usual);
        let caps = tool_caps(conv, config);
        let arrivals = if config.spill.salience.enabled {
            salience::arrivals(conv, &config.spill.salience, &config.phase)
        } else {
            salience::Arrivals::default()
        };
        for at in conv.observations() {
            let Some(result) = conv.tool_result(at) else {
                continue;
            };
            let cap = match caps.get(&at) {
                Some(0) => continue,
                Some(&cap) => cap as u64,
                None => usual,
            };
            let settings = if cap == usual {
                settings
            } else {
                excerpt_settings(cx, cap)
            };
            // One text part (the usual case) is read in place: no copy of a huge output.
            let mut texts = result.parts.iter().filter_map(crate::model::Part::as_text);
            let text: std::borrow::Cow<'_, str> = match (texts.next(), texts.next()) {
                (Some(only), None) => std::borrow::Cow::Borrowed(only),
                _ => std::borrow::Cow::Owned(result.text()),
            };
            let folded = match arrivals.get(at) {
                Some(arrival) => salience::fold_one(&text, arrival, cx, cap)?,
                None => None,
            };
            let (spilled, kind) = match folded {
                Some(folded) => (folded, "fold"),
                None => match spill_one(&text, &signals, cx, Some(settings), cap)? {
                    Some(spilled) => (spilled, "excerpt"),
                    None => continue,
                },
            };
            if let Some(result) = conv.tool_result_mut(at) {
                replace_text(&mut result.parts, spilled.text);
            }
            cx.record(
                at.message,
                kind,
                spilled.tokens_before,
                spilled.tokens_after,
                spilled.pointer,
                spilled.detail,
            );
        }
        Ok(())
    }
}

/// The spill cap of each tool result answering a call of the request when
/// a per-tool rule is set (`tools`; empty otherwise): its tool's
/// ([`crate::Config::spill_cap`]), 0 for an output not spilled.
fn tool_caps(
    conv: &Conversation,
    config: &crate::config::Config,
) -> std::collections::HashMap<crate::model::PartRef, usize> {
    if !config.has_tool_rules() {
        return std::collections::HashMap::new();
    }
    conv.steps()
        .iter()
        .filter_map(|s| {
            let cap = config.spill_cap(Some(&s.call.name)).unwrap_or(0);
            Some((s.result_at?, usize::try_from(cap).unwrap_or(usize::MAX)))
        })
        .collect()
}

/// A text after spilling.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Spilled {
    /// The excerpt (or the text itself when it was under the cap).
    pub text: String,
    /// Whether the text was over the cap and replaced by an excerpt.
    pub spilled: bool,
    /// Where the full text is kept.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pointer: Option<String>,
    /// Why the full text could not be kept.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub refused: Option<String>,
    /// Tokens of the text.
    pub tokens_before: u64,
    /// Tokens of the excerpt.
    pub tokens_after: u64,
    /// Figures of the excerpt, for the report.
    #[serde(skip)]
    pub detail: String,
}

/// What laying out one text's excerpt came to, remembered by
/// [`ExcerptCache`]: a history resent on every turn is laid out once.
#[derive(Debug, Clone)]
enum Laid {
    /// Under the cap.
    Under,
    /// Over it, but the excerpt would cost at least the text.
    NotCheaper,
    /// The excerpt with the expected pointer, before masking, and its figures.
    Built {
        before: u64,
        exact: bool,
        expected: Kept,
        rendered: String,
        figures: Figures,
    },
    /// A salience fold (`spill.salience`), under its own digest.
    Folded(salience::Fold),
}

/// An excerpt's figures, for the change's detail.
#[derive(Debug, Clone, Copy)]
struct Figures {
    total_lines: usize,
    total_bytes: usize,
    head: usize,
    tail: usize,
    hidden: usize,
}

impl Figures {
    fn of(e: &Excerpt<'_>) -> Self {
        Figures {
            total_lines: e.total_lines,
            total_bytes: e.total_bytes,
            head: e.head.len(),
            tail: e.tail.len(),
            hidden: e.hidden_lines,
        }
    }
}

/// Excerpts laid out before, by the text's content key (the first 128 bits
/// of its SHA-256, [`crate::hash::key::KeyCache`]) and a digest of everything
/// else the layout depends on ([`excerpt_settings`]): a cache only (the text
/// is still kept and its excerpt masked and counted on every call, so the
/// store, the report and the output are what they would be without it), and
/// shared by every session of a state, so no chosen text or setting can take
/// another's entry. Bounded by the bytes of the excerpts it holds (8 MiB):
/// past that it starts over.
#[derive(Debug, Default)]
pub struct ExcerptCache {
    entries: std::collections::HashMap<ExcerptId, Laid>,
    bytes: usize,
    /// The error signals last compiled, with the settings they were
    /// compiled from: a session's turns share them.
    signals: Option<(SignalSettings, std::sync::Arc<ErrorSignals>)>,
}

const MAX_EXCERPT_CACHE_BYTES: usize = 8 << 20;

/// What [`ErrorSignals`] are compiled from: the patterns, the line limit,
/// the index share (its bits) and the host's detector tables.
type SignalSettings = (Vec<String>, usize, u64, Vec<crate::config::DetectorTable>);

/// The [`SignalSettings`] of `spill`.
fn signal_settings(spill: &crate::config::SpillConfig) -> SignalSettings {
    (
        spill.error_patterns.clone(),
        spill.max_error_lines,
        spill.index_share.to_bits(),
        spill.detectors.clone(),
    )
}

/// The error signals and detectors of `spill`, compiled.
fn compile_signals(spill: &crate::config::SpillConfig) -> Result<ErrorSignals> {
    ErrorSignals::new(&spill.error_patterns, spill.max_error_lines)?
        .with_index_share(spill.index_share)
        .with_detectors(&spill.detectors)
}

/// Where an [`ExcerptCache`] finds a layout: the text's content key and the
/// settings' digest.
type ExcerptId = (String, u128);

impl ExcerptCache {
    /// The error signals of `spill.errorPatterns` and `spill.maxErrorLines`,
    /// compiled once while they stay the same.
    fn signals(
        &mut self,
        spill: &crate::config::SpillConfig,
    ) -> Result<std::sync::Arc<ErrorSignals>> {
        let settings = signal_settings(spill);
        if let Some((known, signals)) = &self.signals {
            if *known == settings {
                return Ok(signals.clone());
            }
        }
        let signals = std::sync::Arc::new(compile_signals(spill)?);
        self.signals = Some((settings, signals.clone()));
        Ok(signals)
    }

    fn get(&self, id: &ExcerptId) -> Option<Laid> {
        self.entries.get(id).cloned()
    }

    fn insert(&mut self, id: ExcerptId, laid: Laid) {
        let size = 96
            + match &laid {
                Laid::Built { rendered, .. } => rendered.len(),
                Laid::Folded(fold) => fold.rendered.len(),
                _ => 0,
            };
        if self.bytes + size > MAX_EXCERPT_CACHE_BYTES {
            self.entries.clear();
            self.bytes = 0;
        }
        self.bytes += size;
        self.entries.insert(id, laid);
    }
}

/// A digest of what an excerpt's layout depends on besides its text (the
/// first 128 bits of a SHA-256: no chosen session name or pattern gives
/// another's): the cap, the head and index shares, the error signals, the session (its
/// pointer), the pointer root, the counter and whether stored texts are masked.
fn excerpt_settings(cx: &StageContext<'_, ExcerptCache>, cap: u64) -> u128 {
    let config = cx.config;
    let spill = &config.spill;
    let numbers = format!(
        "{}|{}|{}|{}|{}",
        cap, spill.head_share, spill.max_error_lines, config.redact.store, spill.index_share
    );
    let patterns = format!("{:?}{:?}", spill.error_patterns, spill.detectors);
    crate::hash::digest128(&[
        numbers.as_bytes(),
        patterns.as_bytes(),
        config.session.as_bytes(),
        spill.pointer_root.as_bytes(),
        cx.meter.counter.name().as_bytes(),
    ])
}

/// Lays out the excerpt of `text` under `cap` with the pointer it will get
/// (see [`Laid`]).
fn lay_out(
    text: &str,
    signals: &ErrorSignals,
    cx: &mut StageContext<'_, ExcerptCache>,
    cap: u64,
) -> Result<Laid> {
    let (before, exact) = measure(text, cap, &|s| cx.meter.text(s))?;
    if before <= cap {
        return Ok(Laid::Under);
    }
    // Keep the text only when the excerpt is cheaper than the text (a tiny
    // cap can make the header alone cost more: then the text stays as it is).
    let key = cx.content_key("tool", text);
    let expected = Kept::Pointer(cx.config.pointer(&key));
    let meter = &cx.meter;
    let head_share = cx.config.spill.head_share;
    let (excerpt, rendered) = Excerpt::build(
        text,
        cap,
        head_share,
        signals,
        &|s| meter.text(s),
        &expected,
    )?;
    if cx.meter.text(&rendered)? >= before {
        return Ok(Laid::NotCheaper);
    }
    let figures = Figures::of(&excerpt);
    Ok(Laid::Built {
        before,
        exact,
        expected,
        rendered,
        figures,
    })
}

/// Spills one text if it is over `cap`: keeps it through `cx.keep` and
/// returns the excerpt; `None` when it is under the cap. With `settings`
/// ([`excerpt_settings`] of `cap`), layouts are remembered in the session's
/// [`ExcerptCache`].
fn spill_one(
    text: &str,
    signals: &ErrorSignals,
    cx: &mut StageContext<'_, ExcerptCache>,
    settings: Option<u128>,
    cap: u64,
) -> Result<Option<Spilled>> {
    // A token covers at least one byte: short texts are under the cap.
    if (text.len() as u64) <= cap {
        return Ok(None);
    }
    let (before, exact, built) = if cx.config.redact.store {
        // Kept masked: its pointer is known once it is kept.
        let (before, exact) = measure(text, cap, &|s| cx.meter.text(s))?;
        if before <= cap {
            return Ok(None);
        }
        (before, exact, None)
    } else {
        let id = settings.map(|s| (cx.content_key("tool", text), s));
        let cached = id.as_ref().and_then(|id| cx.state.get(id));
        let laid = match cached {
            Some(laid) => laid,
            None => {
                let laid = lay_out(text, signals, cx, cap)?;
                if let Some(id) = id {
                    cx.state.insert(id, laid.clone());
                }
                laid
            }
        };
        match laid {
            // A fold is never held under an excerpt's digest.
            Laid::Under | Laid::NotCheaper | Laid::Folded(_) => return Ok(None),
            Laid::Built {
                before,
                exact,
                expected,
                rendered,
                figures,
            } => (before, exact, Some((expected, rendered, figures))),
        }
    };
    let kept = match cx.keep("tool", text) {
        Ok(pointer) => Kept::Pointer(pointer),
        Err(e) => Kept::Refused(e.message),
    };
    let head_share = cx.config.spill.head_share;
    let (figures, rendered) = match built {
        Some((expected, rendered, figures)) if expected == kept => (figures, rendered),
        _ => {
            let meter = &cx.meter;
            let (excerpt, rendered) =
                Excerpt::build(text, cap, head_share, signals, &|s| meter.text(s), &kept)?;
            (Figures::of(&excerpt), rendered)
        }
    };
    // The excerpt reaches the model: mask secrets (the store keeps the original).
    let rendered = cx.redact(&rendered).into_owned();
    let after = cx.meter.text(&rendered)?;
    let detail = format!(
        "{} lines, {} bytes{}: {} head + {} tail lines shown, {} hidden{}",
        figures.total_lines,
        figures.total_bytes,
        if exact {
            ""
        } else {
            " (tokens before estimated from the first part)"
        },
        figures.head,
        figures.tail,
        figures.hidden,
        match &kept {
            Kept::Pointer(_) => String::new(),
            Kept::Refused(reason) => format!("; not kept: {reason}"),
        }
    );
    let (pointer, refused) = match kept {
        Kept::Pointer(p) => (Some(p), None),
        Kept::Refused(r) => (None, Some(r)),
    };
    Ok(Some(Spilled {
        text: rendered,
        spilled: true,
        pointer,
        refused,
        tokens_before: before,
        tokens_after: after,
        detail,
    }))
}

/// Texts up to this many bytes per token of the cap are counted whole
/// (real text has 3–5 bytes per token, so such a prefix is usually over the cap).
const WHOLE_COUNT_BYTES_PER_CAP_TOKEN: u64 = 6;

/// Tokens of `text`, and whether the count is exact. A long text is priced by
/// a line-aligned prefix first: when that alone is over the cap, the total is
/// extrapolated from it (counting 5 MB of text costs more than the excerpt).
fn measure(text: &str, cap: u64, count: &excerpt::Count<'_>) -> Result<(u64, bool)> {
    let limit = cap.saturating_mul(WHOLE_COUNT_BYTES_PER_CAP_TOKEN);
    if (text.len() as u64) <= limit {
        return Ok((count(text)?, true));
    }
    let cut = lines::floor_prefix(text, usize::try_from(limit).unwrap_or(usize::MAX));
    let prefix = match cut.rfind('\n') {
        Some(end) if end > 0 => cut.get(..=end).unwrap_or(cut),
        _ => cut,
    };
    let tokens = count(prefix)?;
    if tokens > cap && !prefix.is_empty() {
        let scaled = tokens as f64 * text.len() as f64 / prefix.len() as f64;
        return Ok((scaled.round() as u64, false));
    }
    Ok((count(text)?, true))
}

/// Replaces the text parts of a tool result by one part holding `text` (at
/// the place of the first); other parts (images) stay.
fn replace_text(parts: &mut Vec<crate::model::Part>, text: String) {
    let mut text = Some(text);
    parts.retain_mut(|part| match &mut part.kind {
        PartKind::Text { text: t } => match text.take() {
            Some(new) => {
                *t = new;
                true
            }
            None => false,
        },
        _ => true,
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_are_stable_and_pointers_parse() {
        let k = content_key("tool", "hello");
        assert_eq!(k, content_key("tool", "hello"));
        assert_ne!(k, content_key("tool", "hello "));
        assert_ne!(content_key("tool", ""), content_key("tool", "\0"));
        assert!(validate_name("key", &k).is_ok());
        let p = pointer("s1", &k);
        assert_eq!(parse_pointer(&p), (Some("s1"), k.as_str()));
        assert_eq!(parse_pointer(" abc "), (None, "abc"));
        assert!(validate_name("key", "a/b").is_err());
        assert!(validate_name("key", "..").is_err());
        // "." is the directory itself (a FileStore's root): never a session or a key.
        for name in [".", "", "a\\b", "a\0b"] {
            assert!(validate_name("session", name).is_err(), "{name:?}");
        }
        assert!(validate_name("session", ".a").is_ok());
        assert!(validate_name("key", &"a".repeat(129)).is_err());
    }
}
