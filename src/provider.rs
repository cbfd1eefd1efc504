//! The target model family (base layer, below `config` and `tokens`, which
//! both name it): how images are priced and placed.

use serde::{Deserialize, Serialize};

/// Target model family; decides how images are priced and placed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Provider {
    /// Anthropic: w·h/750 tokens, 1568 px long edge, ~1.15 MP.
    Anthropic,
    /// OpenAI tile models: 85 + 170 per 512-px tile.
    #[default]
    Openai,
    /// OpenAI patch models: 32-px patches × multiplier.
    OpenaiPatch,
    /// Gemini: 258 tokens per 768-px tile (or per `media_resolution`).
    Gemini,
    /// Qwen-VL: one token per 28×28 px.
    Qwen,
}
