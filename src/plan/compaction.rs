//! When compaction pays: both choices (compact now, wait) simulated over the
//! planner's horizon with prompt-cache prices — compaction throws away the
//! cached prefix — unless the budget forces it.

use super::prices::{for_config, turn_cost};
use super::{Candidate, CandidateKind};
use crate::config::{Config, Prices};
pub use crate::stage::CompactionInputs as PlanInputs;

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

/// The compact stage's candidate (it saves `saving` tokens) priced under
/// `config`: the explanation (`compact now` when it pays) and the candidate
/// for the report. The pipeline hands this to the stage
/// ([`crate::stage::PriceCompaction`]).
pub fn candidate(config: &Config, inputs: &PlanInputs, saving: u64) -> (String, Candidate) {
    let (prices, source) = for_config(config);
    let horizon = inputs.horizon;
    let e = estimate(&prices, inputs);
    let verdict = if e.pays() { "compact now" } else { "wait" };
    let why = format!(
        "planner: compacting ${:.4} vs waiting ${:.4} over {horizon} turns ({source}) → {verdict}",
        e.compact, e.wait
    );
    let candidate = Candidate {
        kind: CandidateKind::Compaction,
        observations: None,
        tokens_saved: saving,
        tokens_rewritten: inputs.tokens.saturating_sub(inputs.stable),
        cost_now: turn_cost(&prices, inputs.compacted, inputs.stable)
            - turn_cost(&prices, inputs.tokens, inputs.cached),
        saving: e.wait - e.compact,
        horizon,
        committed: e.pays(),
        reason: why.clone(),
    };
    (why, candidate)
}

/// Simulates `horizon` turns both ways. Each turn sends the whole request;
/// what the previous turn sent is cached. A path that crosses `forced`
/// compacts there (back to `compacted` tokens, only `stable` cached).
pub fn estimate(prices: &Prices, i: &PlanInputs) -> PlanEstimate {
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
    use crate::config::Provider;
    use crate::plan::prices::default_prices;

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
        assert!(estimate(&prices, &inputs(110_000, 10)).pays());
        // One turn ahead, rewriting 40k tokens costs more than reading 110k from the cache.
        let mut big_summary = inputs(110_000, 1);
        big_summary.compacted = 40_000;
        assert!(!estimate(&prices, &big_summary).pays());
        big_summary.horizon = 10;
        assert!(estimate(&prices, &big_summary).pays());
        // A small context is cheaper to keep cached.
        assert!(!estimate(&prices, &inputs(14_000, 10)).pays());
    }
}
