//! Token counting: a fast built-in estimator of o200k_base counts, the
//! [`TokenCounter`] trait a host can implement with its own tokenizer, and the
//! per-provider image-token formulas.

use std::cell::RefCell;
use std::collections::HashMap;

use crate::config::OpticalConfig;
use crate::error::Result;
pub use crate::hash::{colliding_texts, text_hash};
use crate::model::{Conversation, Image, Message, Part, PartKind};
use crate::provider::Provider;

/// Counts the tokens of a text.
pub trait TokenCounter {
    /// Number of tokens in `text`.
    fn count(&self, text: &str) -> Result<u64>;

    /// Which counter this is, so that cached counts are only reused by the
    /// counter that made them ([`CountCache`]): `"estimate"` for the built-in
    /// [`Estimator`], `"host"` for any other.
    fn name(&self) -> &str {
        "host"
    }
}

/// Counts of texts already priced, for a session that prices its whole
/// history on every turn: found by a 64-bit hash and the length of the text
/// and checked against the text itself ([`crate::hash::TextMap`]), so a turn
/// counts only the texts it has not seen (each assemble prices the history
/// several times, once per stage that changed it) and no text, however
/// chosen, takes another session's count. Every non-empty text is cached:
/// short ones too (a host counter is a JS call). Bounded: past
/// `MAX_CACHED_COUNTS` entries or `MAX_CACHED_TEXT_BYTES` of text it starts
/// over. Counts imported from a segment ([`CountCache::import`]) are keyed by
/// hash alone: a segment is the session's own (`src/persist.rs`).
#[derive(Debug, Default)]
pub struct CountCache {
    counts: RefCell<crate::hash::TextMap<u64>>,
    imported: HashMap<(u64, usize), u64>,
    counted: std::cell::Cell<u64>,
    /// Counts made since the last [`CountCache::take_fresh`] (what a host has
    /// not persisted yet); `None` until the first call (nothing is logged for
    /// a host that never exports).
    fresh: RefCell<Option<Vec<CachedCount>>>,
    /// The [`TokenCounter::name`] of the counter these counts come from (empty: none yet).
    counter: String,
}

/// One cached count: the text's [`text_hash`], its length in bytes, its tokens.
pub type CachedCount = (u64, usize, u64);

impl CountCache {
    /// Bytes of text the inner counter priced (texts not found in the cache).
    pub fn counted_bytes(&self) -> u64 {
        self.counted.get()
    }

    /// Number of counts held (imported ones too).
    pub fn len(&self) -> usize {
        self.counts.borrow().len() + self.imported.len()
    }

    /// Whether no count is held.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The name of the counter the counts come from (empty before any count).
    pub fn counter(&self) -> &str {
        &self.counter
    }

    /// Makes the cache `counter`'s: counts of another counter are dropped.
    pub fn use_counter(&mut self, counter: &str) {
        if self.counter != counter {
            self.counts.get_mut().clear();
            self.imported.clear();
            if let Some(fresh) = self.fresh.get_mut() {
                fresh.clear();
            }
            self.counter = counter.to_string();
        }
    }

    /// The counts made since the last call, oldest first; on the first call,
    /// or with `all`, every count held ([`CountCache::all`]). From the first
    /// call on, new counts are logged.
    pub fn take_fresh(&mut self, all: bool) -> Vec<CachedCount> {
        match self.fresh.get_mut().replace(Vec::new()) {
            Some(fresh) if !all => fresh,
            _ => self.all(),
        }
    }

    /// Every count held, ordered by key (a deterministic full export).
    pub fn all(&self) -> Vec<CachedCount> {
        let mut all: Vec<CachedCount> = self
            .counts
            .borrow()
            .iter()
            .map(|(text, &n)| (text_hash(text.as_bytes()), text.len(), n))
            .chain(
                self.imported
                    .iter()
                    .map(|(&(hash, len), &n)| (hash, len, n)),
            )
            .collect();
        all.sort_unstable();
        all.dedup_by_key(|c| (c.0, c.1));
        all
    }

    /// Adds counts another host made with the same counter (not logged as
    /// fresh); stops at `MAX_CACHED_COUNTS`. Returns how many were added.
    pub fn import(&mut self, counts: &[CachedCount]) -> usize {
        let map = &mut self.imported;
        let mut added = 0;
        for &(hash, len, n) in counts {
            if map.len() >= MAX_CACHED_COUNTS {
                break;
            }
            if map.insert((hash, len), n).is_none() {
                added += 1;
            }
        }
        added
    }
}

/// Texts shorter than this are counted without the cache.
const MIN_CACHED_BYTES: usize = 1;

/// Most counts a [`CountCache`] holds.
const MAX_CACHED_COUNTS: usize = 200_000;

/// Most bytes of counted text a [`CountCache`] holds to check its hits against.
const MAX_CACHED_TEXT_BYTES: usize = 32 << 20;

/// `inner` with the counts remembered in `cache`.
pub struct CachedCounter<'a> {
    /// The counter that prices unseen texts.
    pub inner: &'a dyn TokenCounter,
    /// Counts seen so far.
    pub cache: &'a CountCache,
}

impl TokenCounter for CachedCounter<'_> {
    fn count(&self, text: &str) -> Result<u64> {
        if text.len() < MIN_CACHED_BYTES {
            return self.inner.count(text);
        }
        if let Some(&n) = self.cache.counts.borrow().get(text) {
            return Ok(n);
        }
        let key = (text_hash(text.as_bytes()), text.len());
        if let Some(&n) = self.cache.imported.get(&key) {
            self.cache.counts.borrow_mut().insert(
                text,
                n,
                MAX_CACHED_COUNTS,
                MAX_CACHED_TEXT_BYTES,
            );
            return Ok(n);
        }
        let counted = &self.cache.counted;
        counted.set(counted.get().saturating_add(text.len() as u64));
        let n = self.inner.count(text)?;
        self.cache
            .counts
            .borrow_mut()
            .insert(text, n, MAX_CACHED_COUNTS, MAX_CACHED_TEXT_BYTES);
        if let Some(fresh) = self.cache.fresh.borrow_mut().as_mut() {
            if fresh.len() >= MAX_CACHED_COUNTS {
                fresh.clear();
            }
            fresh.push((key.0, key.1, n));
        }
        Ok(n)
    }

    fn name(&self) -> &str {
        self.inner.name()
    }
}

/// The built-in estimator (see [`estimate`]).
#[derive(Debug, Clone, Copy, Default)]
pub struct Estimator;

impl TokenCounter for Estimator {
    fn count(&self, text: &str) -> Result<u64> {
        Ok(estimate(text))
    }

    fn name(&self) -> &str {
        "estimate"
    }
}

/// Estimates the o200k_base token count of `text` without a vocabulary.
///
/// It scans text the way o200k's pre-tokenizer splits it (letter runs, digit
/// groups of three, punctuation runs, newline and space runs, non-ASCII
/// characters) and prices each chunk class with a weight fitted by weighted
/// least squares against exact o200k_base counts of 2,626 real tool
/// observations (`tests/fixtures/o200k-counts.json`, made with js-tiktoken).
/// Mean absolute error is measured per source by `tests/estimator.rs`.
pub fn estimate(text: &str) -> u64 {
    if text.is_empty() {
        return 0;
    }
    let counts = chunk_counts(text.as_bytes());
    let tokens: f64 = counts.iter().zip(WEIGHTS).map(|(n, w)| n * w).sum();
    tokens.round().max(1.0) as u64
}

/// Fitted price of each chunk class (index = slot of [`chunk_counts`]).
const WEIGHTS: [f64; 16] = [
    0.777, 0.915, 1.101, 0.324, 0.149, 1.7, 1.234, 0.581, 1.149, 0.489, 1.591, 0.445, 1.064, 1.066,
    0.023, 1.916,
];

/// Counts of each chunk class: words of 1–3, 4–5, 6–8 and 9+ letters, letters
/// in 9+ words, digit groups, newline runs, indents, space runs, lone spaces
/// not before a word, control bytes, punctuation runs of 1, 2 and 3+,
/// punctuation bytes in 3+ runs, non-ASCII characters.
fn chunk_counts(b: &[u8]) -> [f64; 16] {
    let mut f = [0.0f64; 16];
    let n = b.len();
    let at = |i: usize| b.get(i).copied().unwrap_or(0);
    let mut i = 0;
    while i < n {
        let c = at(i);
        let start = i;
        if c.is_ascii_alphabetic() {
            while i < n && at(i).is_ascii_alphabetic() {
                i += 1;
            }
            let len = i - start;
            match len {
                0..=3 => f[0] += 1.0,
                4..=5 => f[1] += 1.0,
                6..=8 => f[2] += 1.0,
                _ => {
                    f[3] += 1.0;
                    f[4] += len as f64;
                }
            }
        } else if c.is_ascii_digit() {
            while i < n && at(i).is_ascii_digit() {
                i += 1;
            }
            f[5] += (i - start).div_ceil(3) as f64;
        } else if c == b'\n' || c == b'\r' {
            while i < n && matches!(at(i), b'\n' | b'\r') {
                i += 1;
            }
            f[6] += 1.0;
            let indent = i;
            while i < n && matches!(at(i), b' ' | b'\t') {
                i += 1;
            }
            if i - indent > 1 {
                f[7] += 1.0;
            }
        } else if c == b' ' || c == b'\t' {
            while i < n && matches!(at(i), b' ' | b'\t') {
                i += 1;
            }
            if i - start > 1 {
                f[8] += 1.0;
            } else if !at(i).is_ascii_alphanumeric() {
                f[9] += 1.0;
            }
        } else if c < 0x80 {
            while i < n && at(i).is_ascii_punctuation() {
                i += 1;
            }
            match i - start {
                0 => {
                    i += 1;
                    f[10] += 1.0;
                }
                1 => f[11] += 1.0,
                2 => f[12] += 1.0,
                len => {
                    f[13] += 1.0;
                    f[14] += len as f64;
                }
            }
        } else {
            i += match c {
                0xF0.. => 4,
                0xE0.. => 3,
                _ => 2,
            };
            f[15] += 1.0;
        }
    }
    f
}

/// Fixed overhead of one message in a chat request (role and separators).
pub const MESSAGE_OVERHEAD: u64 = 4;

/// Image tokens of a `width`×`height` image for `provider`.
pub fn image_tokens(provider: Provider, width: u32, height: u32, optical: &OpticalConfig) -> u64 {
    let (w, h) = (f64::from(width.max(1)), f64::from(height.max(1)));
    match provider {
        Provider::Anthropic => {
            // Downscaled to a 1568-px long edge and ~1.15 MP first.
            let scale = (1568.0 / w.max(h))
                .min((1_150_000.0 / (w * h)).sqrt())
                .min(1.0);
            ((w * scale) * (h * scale) / 750.0).ceil() as u64
        }
        Provider::Openai => {
            if optical.detail == "low" {
                return 85;
            }
            // Fit in 2048², then shortest side to 768 (only shrinking), count 512-px tiles.
            let s1 = (2048.0 / w.max(h)).min(1.0);
            let (w1, h1) = (w * s1, h * s1);
            let s2 = (768.0 / w1.min(h1)).min(1.0);
            let (w2, h2) = (w1 * s2, h1 * s2);
            let tiles = (w2 / 512.0).ceil() * (h2 / 512.0).ceil();
            85 + 170 * tiles as u64
        }
        Provider::OpenaiPatch => {
            let patches = ((w / 32.0).ceil() * (h / 32.0).ceil()).min(1536.0);
            (patches * optical.patch_multiplier).ceil() as u64
        }
        Provider::Gemini => match optical.media_resolution.as_str() {
            "low" => 280,
            "medium" => 560,
            "high" => 1120,
            _ if w <= 384.0 && h <= 384.0 => 258,
            _ => 258 * ((w / 768.0).ceil() * (h / 768.0).ceil()) as u64,
        },
        Provider::Qwen => ((w / 28.0).ceil() * (h / 28.0).ceil()) as u64,
    }
}

/// Prices text with a [`TokenCounter`] and images with the provider's formula.
pub struct Meter<'a> {
    /// Text counter.
    pub counter: &'a dyn TokenCounter,
    /// Image pricing.
    pub provider: Provider,
    /// Image pricing options.
    pub optical: &'a OpticalConfig,
}

impl Meter<'_> {
    /// Tokens of a text.
    pub fn text(&self, text: &str) -> Result<u64> {
        self.counter.count(text)
    }

    /// Tokens of an image.
    pub fn image(&self, image: &Image) -> u64 {
        image_tokens(self.provider, image.width, image.height, self.optical)
    }

    /// Tokens of one part (tool results include their content).
    pub fn part(&self, part: &Part) -> Result<u64> {
        Ok(match &part.kind {
            PartKind::Text { text } => self.text(text)?,
            PartKind::Image(image) => self.image(image),
            PartKind::ToolCall(call) => self.text(&call.name)? + self.text(&call.arguments)? + 3,
            PartKind::ToolResult(result) => {
                let mut sum = 0;
                for p in &result.parts {
                    sum += self.part(p)?;
                }
                sum
            }
            PartKind::Other { value } => self.text(&value.to_string())?,
        })
    }

    /// Tokens of one message, including [`MESSAGE_OVERHEAD`].
    pub fn message(&self, message: &Message) -> Result<u64> {
        let mut sum = MESSAGE_OVERHEAD;
        for p in &message.parts {
            sum += self.part(p)?;
        }
        Ok(sum)
    }

    /// Tokens of each message of `conv` ([`Self::message`]), system prompt first.
    pub fn messages(&self, conv: &Conversation) -> Result<Vec<u64>> {
        conv.system
            .iter()
            .chain(&conv.messages)
            .map(|m| self.message(m))
            .collect()
    }

    /// Tokens of a whole conversation (system prompt and messages).
    pub fn conversation(&self, conv: &Conversation) -> Result<u64> {
        let mut sum = 0;
        for m in conv.system.iter().chain(&conv.messages) {
            sum += self.message(m)?;
        }
        Ok(sum)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn estimator_handles_edge_cases() {
        assert_eq!(estimate(""), 0);
        assert_eq!(estimate("a"), 1);
        assert!(estimate("héllo wörld ✓ 日本語") >= 5);
        assert_eq!(estimate(&"x".repeat(5)), 1);
    }

    #[test]
    fn image_formulas_match_reference() {
        let o = OpticalConfig::default();
        assert_eq!(image_tokens(Provider::Anthropic, 750, 1000, &o), 1000);
        // 1024×1024 → 768×768 → 4 tiles.
        assert_eq!(image_tokens(Provider::Openai, 1024, 1024, &o), 85 + 4 * 170);
        assert_eq!(image_tokens(Provider::Gemini, 300, 300, &o), 258);
        assert_eq!(image_tokens(Provider::Gemini, 1000, 700, &o), 258 * 2);
        assert_eq!(image_tokens(Provider::Qwen, 280, 56, &o), 20);
        assert_eq!(image_tokens(Provider::OpenaiPatch, 64, 64, &o), 7);
        let low = OpticalConfig {
            detail: "low".into(),
            ..OpticalConfig::default()
        };
        assert_eq!(image_tokens(Provider::Openai, 4000, 4000, &low), 85);
    }
}
