//! Prompt-cache prices per provider: a dated table, overridable with
//! `plan.prices`. Only the ratios between the three prices change the
//! planner's decisions; the absolute values scale the reported dollars.

use crate::config::{Config, Prices, Provider};

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

/// The prices the planner uses for `config` and where they come from:
/// `plan.prices` when set, else the table's row for `config.provider`.
pub fn for_config(config: &Config) -> (Prices, String) {
    match config.plan.prices {
        Some(p) => (p, "configured prices".to_string()),
        None => {
            let (p, model) = default_prices(config.provider);
            (p, format!("{model} list prices {PRICE_TABLE_DATE}"))
        }
    }
}

/// Cost in dollars of sending `total` input tokens of which the first `cached` hit the cache.
pub fn turn_cost(prices: &Prices, total: u64, cached: u64) -> f64 {
    let cached = cached.min(total);
    (cached as f64 * prices.cached_input + (total - cached) as f64 * prices.cache_write) / 1e6
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn turn_cost_prices_cached_and_fresh_tokens() {
        let (p, _) = default_prices(Provider::Openai);
        let c = turn_cost(&p, 1_000_000, 900_000);
        assert!((c - (0.9 * 0.125 + 0.1 * 1.25)).abs() < 1e-9);
    }
}
