//! Token counting: a fast built-in estimator of o200k_base counts, the
//! [`TokenCounter`] trait a host can implement with its own tokenizer, and the
//! per-provider image-token formulas.

use crate::config::{OpticalConfig, Provider};
use crate::error::Result;
use crate::model::{Conversation, Image, Message, Part, PartKind};

/// Counts the tokens of a text.
pub trait TokenCounter {
    /// Number of tokens in `text`.
    fn count(&self, text: &str) -> Result<u64>;
}

/// The built-in estimator (see [`estimate`]).
#[derive(Debug, Clone, Copy, Default)]
pub struct Estimator;

impl TokenCounter for Estimator {
    fn count(&self, text: &str) -> Result<u64> {
        Ok(estimate(text))
    }
}

/// Estimates the o200k_base token count of `text` without a vocabulary.
///
/// It follows the shape of o200k's pre-tokenizer: letters form words (an
/// optional leading space or punctuation character joins the word), digits
/// form groups of up to three, punctuation runs and whitespace runs are
/// chunks of their own. Each chunk is then priced by its length. Mean absolute
/// error against o200k_base on the observations of real agent trajectories is
/// measured by `tests/estimator.rs`.
pub fn estimate(text: &str) -> u64 {
    let bytes = text.as_bytes();
    let mut tokens = 0.0f64;
    let mut i = 0;
    while i < bytes.len() {
        let b = bytes[i];
        if b.is_ascii_alphabetic() {
            let start = i;
            while i < bytes.len() && bytes[i].is_ascii_alphabetic() {
                i += 1;
            }
            tokens += word_cost(i - start);
        } else if b.is_ascii_digit() {
            let start = i;
            while i < bytes.len() && bytes[i].is_ascii_digit() {
                i += 1;
            }
            tokens += (i - start).div_ceil(3) as f64;
        } else if b == b'\n' || b == b'\r' {
            while i < bytes.len() && (bytes[i] == b'\n' || bytes[i] == b'\r') {
                i += 1;
            }
            tokens += 1.0;
            // Indentation after a newline is usually merged into one token.
            let start = i;
            while i < bytes.len() && (bytes[i] == b' ' || bytes[i] == b'\t') {
                i += 1;
            }
            if i - start > 1 {
                tokens += INDENT_COST;
            }
        } else if b == b' ' || b == b'\t' {
            let start = i;
            while i < bytes.len() && (bytes[i] == b' ' || bytes[i] == b'\t') {
                i += 1;
            }
            let run = i - start;
            let next_is_word = bytes.get(i).is_some_and(|c| c.is_ascii_alphanumeric());
            // A single space before a word is part of the word's token.
            if run > 1 || !next_is_word {
                tokens += SPACE_RUN_COST;
            }
        } else if b < 0x80 {
            let start = i;
            while i < bytes.len()
                && bytes[i] < 0x80
                && bytes[i].is_ascii_punctuation()
                && !(i > start && bytes[i - 1] == b' ')
            {
                i += 1;
            }
            if i == start {
                // Control character.
                i += 1;
                tokens += 1.0;
            } else {
                tokens += punct_cost(i - start);
                // Punctuation directly followed by letters often merges (`.py`, `_name`).
                if bytes.get(i).is_some_and(|c| c.is_ascii_alphabetic()) && i - start == 1 {
                    tokens -= PUNCT_WORD_MERGE;
                }
            }
        } else {
            // Non-ASCII: one UTF-8 sequence.
            let len = utf8_len(b);
            let start = i;
            i = (i + len).min(bytes.len());
            let ch = text
                .get(start..i)
                .and_then(|s| s.chars().next())
                .unwrap_or(' ');
            tokens += if ch.is_alphabetic() && len == 2 {
                0.5
            } else if len >= 3 {
                1.0
            } else {
                0.8
            };
        }
    }
    tokens.round().max(if text.is_empty() { 0.0 } else { 1.0 }) as u64
}

const INDENT_COST: f64 = 0.0;
const SPACE_RUN_COST: f64 = 1.0;
const PUNCT_WORD_MERGE: f64 = 0.5;

fn word_cost(len: usize) -> f64 {
    match len {
        0 => 0.0,
        1..=5 => 1.0,
        6..=8 => 1.3,
        _ => 1.0 + (len as f64 - 5.0) / 5.0,
    }
}

fn punct_cost(len: usize) -> f64 {
    match len {
        1 => 1.0,
        2 => 1.3,
        _ => 1.0 + len as f64 / 3.0,
    }
}

fn utf8_len(first: u8) -> usize {
    match first {
        0xC0..=0xDF => 2,
        0xE0..=0xEF => 3,
        0xF0..=0xF7 => 4,
        _ => 1,
    }
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
