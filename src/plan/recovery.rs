//! The expected cost of getting back what a rewrite hides. With prompt
//! caching, an agent that needs a hidden fact spends a turn reading it back
//! (`read_spill`, or running the command again): one more request of the
//! whole context, read from the cache, plus the output read back, sent
//! uncached. Each hidden observation is needed within the horizon with the
//! probability of [`Recall::likelihood`]; the expected cost is the sum.

use super::decision::Candidate;
use crate::activity::recall::Recall;
use crate::config::Prices;

/// What a rewrite hides and its expected recovery cost.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Recovery {
    /// Observations it takes out of the text.
    pub hidden: usize,
    /// Facts they hold that no user or agent message held.
    pub facts: usize,
    /// Probability that at least one of them is needed within the horizon.
    pub probability: f64,
    /// Expected dollars of recovery turns.
    pub dollars: f64,
}

impl Recovery {
    /// Writes what the rewrite hides and its expected recovery into the
    /// candidate that reports it.
    pub fn report(&self, candidate: &mut Candidate) {
        candidate.hidden = self.hidden;
        candidate.hidden_facts = self.facts;
        candidate.recovery_probability = self.probability;
        candidate.expected_recovery = self.dollars;
    }
}

/// Dollars of one recovery turn: a request of `context` tokens read from
/// the cache, plus `read_back` tokens sent uncached.
pub fn turn_price(prices: &Prices, context: u64, read_back: u64) -> f64 {
    (context as f64 * prices.cached_input + read_back as f64 * prices.cache_write) / 1e6
}

/// The recovery of hiding `hidden` (observation index, its tokens), judged
/// before message `end` over `horizon` turns, with a context of `context`
/// tokens after the rewrite.
pub fn expected(
    recall: &Recall,
    hidden: impl IntoIterator<Item = (usize, u64)>,
    end: usize,
    horizon: usize,
    context: u64,
    prices: &Prices,
) -> Recovery {
    let rate = recall.rate(end);
    let mut out = Recovery::default();
    let mut none = 1.0;
    for (k, tokens) in hidden {
        let p = recall.likelihood(k, end, horizon, rate);
        out.hidden += 1;
        out.facts += recall.observations.get(k).map_or(0, |e| e.facts);
        none *= 1.0 - p;
        out.dollars += p * turn_price(prices, context, tokens);
    }
    out.probability = 1.0 - none;
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::activity::recall::Evidence;

    #[test]
    fn nothing_hidden_costs_nothing_and_a_recovery_turn_reads_the_context() {
        let prices = Prices {
            input: 3.0,
            cached_input: 0.3,
            cache_write: 3.75,
        };
        let none = expected(&Recall::default(), [], 10, 10, 50_000, &prices);
        assert_eq!(none, Recovery::default());
        assert!((turn_price(&prices, 1_000_000, 100_000) - (0.3 + 0.375)).abs() < 1e-9);
        // An output nobody used, in a session that never went back: unlikely.
        let recall = Recall {
            observations: vec![Evidence {
                message: 2,
                facts: 3,
                ..Evidence::default()
            }],
            ..Recall::default()
        };
        let r = expected(&recall, [(0, 1_000)], 10, 10, 50_000, &prices);
        assert_eq!((r.hidden, r.facts), (1, 3));
        assert_eq!(r.dollars, 0.0);
    }
}
