//! Prompt-cache prices per provider (a dated table, overridable with
//! `compact.prices`) and the cache-aware planner: compact only when the
//! estimated cost of the next turns is lower with compaction — compaction
//! throws away the cached prefix — or when the budget forces it.

use crate::config::{Prices, Provider};

/// When the default prices were taken from the providers' published list prices.
pub const PRICE_TABLE_DATE: &str = "2025-11";

/// Default prices for `provider` (US dollars per million input tokens) and
/// the model they are the list prices of.
///
/// | provider | model | input | cached input | cache write |
/// |---|---|---|---|---|
/// | anthropic | Claude Sonnet 4.5 | 3.00 | 0.30 (0.1×) | 3.75 (1.25×, 5-minute cache) |
/// | openai | GPT-5 | 1.25 | 0.125 | 1.25 (no write surcharge) |
/// | openai-patch | GPT-4.1 mini | 0.40 | 0.10 | 0.40 |
/// | gemini | Gemini 3 Pro preview (≤ 200k) | 2.00 | 0.20 | 2.00 (implicit caching) |
/// | qwen | Qwen3-Max-class, implicit cache | 1.20 | 0.24 (0.2×) | 1.20 |
///
/// Only the ratios between the three prices change the planner's decisions;
/// the absolute values scale the reported dollar amounts.
pub fn default_prices(provider: Provider) -> (Prices, &'static str) {
    let p = |input, cached_input, cache_write| Prices {
        input,
        cached_input,
        cache_write,
    };
    match provider {
        Provider::Anthropic => (p(3.0, 0.30, 3.75), "claude-sonnet-4.5"),
        Provider::Openai => (p(1.25, 0.125, 1.25), "gpt-5"),
        Provider::OpenaiPatch => (p(0.40, 0.10, 0.40), "gpt-4.1-mini"),
        Provider::Gemini => (p(2.0, 0.20, 2.0), "gemini-3-pro-preview"),
        Provider::Qwen => (p(1.20, 0.24, 1.20), "qwen3-max"),
    }
}

/// Cost in dollars of sending `total` input tokens of which the first `cached` hit the cache.
pub fn turn_cost(prices: &Prices, total: u64, cached: u64) -> f64 {
    let cached = cached.min(total);
    (cached as f64 * prices.cached_input + (total - cached) as f64 * prices.cache_write) / 1e6
}

/// What the planner knows about the conversation.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PlanInputs {
    /// Tokens of the request now.
    pub tokens: u64,
    /// Tokens of it the previous request already sent (a cached prefix).
    pub cached: u64,
    /// Tokens the request grows by per turn.
    pub growth: u64,
    /// Tokens of the request if compacted now.
    pub compacted: u64,
    /// Tokens at the start of the compacted request that stay cached (system prompt).
    pub stable: u64,
    /// Above this a compaction is forced.
    pub forced: u64,
    /// Turns to look ahead.
    pub horizon: usize,
}

/// The planner's estimate: dollars over the horizon for both choices.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PlanEstimate {
    /// Cost if the conversation is not compacted now.
    pub wait: f64,
    /// Cost if it is compacted now.
    pub compact: f64,
}

impl PlanEstimate {
    /// Whether compacting now is cheaper.
    pub fn pays(&self) -> bool {
        self.compact < self.wait
    }
}

/// Simulates `horizon` turns both ways. Each turn sends the whole request;
/// what the previous turn sent is cached. A path that crosses `forced`
/// compacts there (back to `compacted` tokens, only `stable` cached).
pub fn plan(prices: &Prices, i: &PlanInputs) -> PlanEstimate {
    let run = |mut tokens: u64, mut cached: u64| {
        let mut cost = 0.0;
        for _ in 0..i.horizon {
            cost += turn_cost(prices, tokens, cached);
            cached = tokens;
            tokens += i.growth;
            if tokens > i.forced {
                tokens = i.compacted;
                cached = i.stable;
            }
        }
        cost
    };
    PlanEstimate {
        wait: run(i.tokens, i.cached),
        compact: run(i.compacted, i.stable),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn inputs(tokens: u64, horizon: usize) -> PlanInputs {
        PlanInputs {
            tokens,
            cached: tokens - 2_000,
            growth: 2_000,
            compacted: 12_000,
            stable: 2_000,
            forced: 150_000,
            horizon,
        }
    }

    #[test]
    fn compaction_pays_for_big_contexts_over_enough_turns() {
        let (prices, _) = default_prices(Provider::Anthropic);
        assert!(plan(&prices, &inputs(110_000, 10)).pays());
        // One turn ahead, rewriting 40k tokens costs more than reading 110k from the cache.
        let mut big_summary = inputs(110_000, 1);
        big_summary.compacted = 40_000;
        assert!(!plan(&prices, &big_summary).pays());
        big_summary.horizon = 10;
        assert!(plan(&prices, &big_summary).pays());
        // A small context is cheaper to keep cached.
        assert!(!plan(&prices, &inputs(14_000, 10)).pays());
    }

    #[test]
    fn turn_cost_prices_cached_and_fresh_tokens() {
        let (p, _) = default_prices(Provider::Openai);
        let c = turn_cost(&p, 1_000_000, 900_000);
        assert!((c - (0.9 * 0.125 + 0.1 * 1.25)).abs() < 1e-9);
    }
}
