//! When observations that left the recent window are handed to the
//! rewriting stages. Replays the history's requests oldest first (request
//! `τ` is everything before the `τ`-th assistant message; the last is the
//! request now) and, at each, weighs moving the boundary to the window's
//! edge:
//!
//! * it saves `Δ` tokens on every later request (what the stages proposed
//!   for the observations it hands over: the optical stage's snapshots),
//!   read from the cache;
//! * it sends again, uncached, the `R` tokens of the previous request from
//!   the first handed-over observation on (for Anthropic, written to the
//!   cache at the write price), minus the `Δ` it no longer sends.
//!
//! The move costs `(R−Δ)·write − R·cached` more now and saves `Δ·cached·H`
//! over the horizon `H`; it commits when the saving is larger, or when the
//! request is over the compaction threshold. A move covers at least
//! `optical.batch` observations; deferred ones accumulate, so moves get
//! larger and rarer where rewrites are dear.

use super::{prices, recovery, Candidate, CandidateKind, Decision, Planning, Schedule};
use crate::activity::recall::LazyRecall;
use crate::config::{Config, Prices};
use crate::error::Result;
use crate::model::{Conversation, Role};

/// The history as the planner sees it.
#[derive(Debug, Clone, Copy)]
pub struct History<'a> {
    /// `prefix[i]`: tokens of the system prompt and the first `i` messages
    /// (`messages + 1` entries).
    pub prefix: &'a [u64],
    /// Per observation, oldest first: its message and the tokens the
    /// optical stage proposes to save on it.
    pub observations: &'a [(usize, u64)],
    /// End (exclusive message index) of each request, oldest first; the last
    /// is the request now.
    pub requests: &'a [usize],
    /// What the history says of each observation's use
    /// ([`crate::activity::recall::Recall`]): a demotion's expected recovery
    /// is priced with it.
    pub recall: &'a LazyRecall<'a>,
}

/// [`weigh`] for `conv` as it stands (after spilling): its requests, its
/// token prefix sums and the stages' proposed `savings` for the observations
/// outside the recent window (`None`: nothing proposed, fixed batches).
pub fn commit(
    conv: &Conversation,
    savings: Option<&[u64]>,
    planning: &Planning<'_>,
) -> Result<Decision> {
    let config = planning.config;
    let at = conv.observations();
    let Some(savings) = savings.filter(|_| priced(config)) else {
        // Fixed batches: nothing to count.
        return Ok(Decision {
            schedule: Some(Schedule::fixed(config, at.len())),
            candidate: None,
        });
    };
    let tokens = super::message_tokens(conv, planning)?;
    let (system, messages) = tokens.split_at(conv.system.len());
    let mut prefix = Vec::with_capacity(conv.messages.len() + 1);
    let mut total: u64 = system.iter().sum();
    prefix.push(total);
    let mut requests = Vec::new();
    for (i, (m, n)) in conv.messages.iter().zip(messages).enumerate() {
        if m.role == Role::Assistant {
            requests.push(i);
        }
        total += n;
        prefix.push(total);
    }
    requests.push(conv.messages.len());
    let mut observations = Vec::with_capacity(at.len());
    for (i, &at) in at.iter().enumerate() {
        observations.push((at.message, savings.get(i).copied().unwrap_or(0)));
    }
    let (prices, _) = prices::for_config(config);
    let recall = LazyRecall::of(conv, config.window);
    let (schedule, candidate) = weigh(
        &History {
            prefix: &prefix,
            observations: &observations,
            requests: &requests,
            recall: &recall,
        },
        config,
        &prices,
    );
    Ok(Decision {
        schedule: Some(schedule),
        candidate,
    })
}

/// Whether moves are priced (the planner is on); otherwise they come in
/// fixed batches.
fn priced(config: &Config) -> bool {
    super::prices_demotions(config)
}

/// The committed boundaries, and the candidate weighed on the request now
/// (none when fewer than `optical.batch` observations wait).
pub fn weigh(
    history: &History<'_>,
    config: &Config,
    prices: &Prices,
) -> (Schedule, Option<Candidate>) {
    let step = config.optical.batch.max(1);
    let window = config.window;
    let observations = history.observations;
    let now = history.requests.last().map_or(0, |&end| {
        observations.iter().take_while(|o| o.0 < end).count()
    });
    if !priced(config) {
        return (Schedule::fixed(config, now), None);
    }
    let mut schedule = Schedule {
        boundaries: Vec::new(),
        window,
    };
    let threshold = config
        .compact
        .threshold
        .min(config.budget.saturating_sub(config.result_cap()));
    let tokens = |end: usize| history.prefix.get(end).copied().unwrap_or(0);
    let (mut demoted, mut saved, mut seen) = (0usize, 0u64, 0usize);
    let mut last = None;
    for (turn, &end) in history.requests.iter().enumerate() {
        while observations.get(seen).is_some_and(|o| o.0 < end) {
            seen += 1;
        }
        let target = seen.saturating_sub(window);
        if target < demoted + step {
            last = None;
            continue;
        }
        let handed = observations.get(demoted..target).unwrap_or(&[]);
        let delta: u64 = handed.iter().map(|o| o.1).sum();
        let previous = turn
            .checked_sub(1)
            .and_then(|t| history.requests.get(t))
            .copied()
            .unwrap_or(0);
        let first = handed.first().map_or(end, |o| o.0);
        let rewritten = if first < previous {
            tokens(previous) - tokens(first)
        } else {
            0
        };
        let horizon = config.plan.horizon(turn + 1);
        let (read, write) = (prices.cached_input, prices.cache_write);
        let cost_now = (rewritten as f64 * (write - read) - delta as f64 * write) / 1e6;
        let saving = delta as f64 * read * horizon as f64 / 1e6;
        let size = tokens(end).saturating_sub(saved);
        let pending = Pending {
            from: demoted,
            to: target,
            end,
            horizon,
            context: size.saturating_sub(delta),
        };
        // Weighed, every move is priced; reported only, the last candidate
        // is (after the loop).
        let recovery = if config.plan.recovery {
            pending.recovery(history, prices)
        } else {
            recovery::Recovery::default()
        };
        let priced = recovery.dollars;
        let (committed, reason) = if size > threshold {
            (
                true,
                format!("{size} tokens > {threshold} (compaction threshold): committed"),
            )
        } else if delta > 0 && saving - priced > cost_now {
            (true, "pays within the horizon".to_string())
        } else if delta > 0 && saving > cost_now {
            (
                false,
                "pays only without its expected recovery: deferred".to_string(),
            )
        } else {
            (false, "does not pay yet: deferred".to_string())
        };
        last = Some((
            pending,
            Candidate {
                kind: CandidateKind::Demotion,
                observations: Some([demoted, target]),
                tokens_saved: delta,
                tokens_rewritten: rewritten,
                cost_now,
                saving,
                horizon,
                hidden: recovery.hidden,
                hidden_facts: recovery.facts,
                recovery_probability: recovery.probability,
                expected_recovery: recovery.dollars,
                committed,
                reason,
            },
        ));
        if committed {
            demoted = target;
            saved += delta;
            schedule.boundaries.push(target);
        }
    }
    let candidate = last.map(|(pending, mut candidate)| {
        if !config.plan.recovery {
            pending.recovery(history, prices).report(&mut candidate);
        }
        candidate
    });
    (schedule, candidate)
}

/// A move weighed at one request: observations `from..to` handed over.
#[derive(Debug, Clone, Copy)]
struct Pending {
    from: usize,
    to: usize,
    end: usize,
    horizon: usize,
    context: u64,
}

impl Pending {
    /// What the move hides (the observations a stage proposes to change)
    /// and its expected recovery.
    fn recovery(self, history: &History<'_>, prices: &Prices) -> recovery::Recovery {
        let tokens = |end: usize| history.prefix.get(end).copied().unwrap_or(0);
        let handed = history.observations.get(self.from..self.to).unwrap_or(&[]);
        let hides = (self.from..self.to)
            .zip(handed)
            .filter(|(_, o)| o.1 > 0)
            .map(|(k, o)| (k, tokens(o.0 + 1).saturating_sub(tokens(o.0))));
        recovery::expected(
            history.recall.get(),
            hides,
            self.end,
            self.horizon,
            self.context,
            prices,
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::activity::recall::{Evidence, Recall};
    use crate::config::Provider;
    use crate::plan::prices::default_prices;

    /// `turns` requests; each turn adds one assistant message and one
    /// observation of `obs` tokens (saving `save`), after a 1,000-token prompt.
    fn history(turns: usize, obs: u64, save: u64) -> (Vec<u64>, Vec<(usize, u64)>, Vec<usize>) {
        let mut prefix = vec![1_000];
        let mut observations = Vec::new();
        let mut requests = vec![1];
        prefix.push(1_100); // the task
        for t in 0..turns {
            prefix.push(prefix.last().unwrap() + 50); // the call
            prefix.push(prefix.last().unwrap() + obs); // its result
            observations.push((2 + 2 * t + 1, save));
            requests.push(2 + 2 * t + 2);
        }
        (prefix, observations, requests)
    }

    fn run(config: &Config, turns: usize, obs: u64, save: u64) -> (Schedule, Option<Candidate>) {
        let (prefix, observations, requests) = history(turns, obs, save);
        let (prices, _) = default_prices(config.provider);
        weigh(
            &History {
                prefix: &prefix,
                observations: &observations,
                requests: &requests,
                recall: &LazyRecall::default(),
            },
            config,
            &prices,
        )
    }

    #[test]
    fn big_savings_commit_in_batches() {
        let config = Config::default();
        let (schedule, _) = run(&config, 40, 3_000, 2_500);
        assert!(!schedule.boundaries.is_empty());
        // Each move covers at least one batch and stops at the window's edge.
        let mut last = 0;
        for &b in &schedule.boundaries {
            assert!(b >= last + config.optical.batch);
            last = b;
        }
        assert!(schedule.demoted() <= 40 - config.window);
    }

    #[test]
    fn small_savings_defer_until_they_accumulate() {
        let config = Config {
            provider: Provider::Anthropic,
            ..Config::default()
        };
        let (cheap, _) = run(&config, 30, 3_000, 2_500);
        let (dear, candidate) = run(&config, 30, 3_000, 400);
        // Saving little per observation: fewer, larger moves.
        assert!(dear.boundaries.len() < cheap.boundaries.len());
        let candidate = candidate.expect("a candidate on the last request");
        assert_eq!(candidate.kind, CandidateKind::Demotion);
        assert!(candidate.tokens_rewritten > 0);
    }

    #[test]
    fn nothing_to_save_defers_until_the_threshold() {
        let mut config = Config {
            budget: 60_000,
            ..Config::default()
        };
        // Threshold 45,000: the budget minus one capped result of 15,000.
        config.spill.fraction = 0.25;
        let (schedule, _) = run(&config, 10, 1_000, 0);
        assert_eq!(schedule.demoted(), 0);
        // Over the threshold (budget minus one capped result) it commits anyway.
        let (schedule, candidate) = run(&config, 60, 1_000, 0);
        assert!(schedule.demoted() > 0);
        // Nothing saves a token: only the threshold commits.
        let candidate = candidate.expect("a candidate on the last request");
        assert!(
            !candidate.committed || candidate.reason.contains("compaction threshold"),
            "{candidate:?}"
        );
    }

    #[test]
    fn each_request_extends_the_schedule_of_the_one_before() {
        // A stateless host sees one more request each turn: the moves it
        // decided before must stay decided (else the prefix would flip back).
        let config = Config {
            provider: Provider::Anthropic,
            ..Config::default()
        };
        let (prices, _) = default_prices(config.provider);
        let mut seed = 0x2545_f491_4f6c_dd1d_u64;
        let mut next = move |m: u64| {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed % m
        };
        for _ in 0..20 {
            let turns = 10 + next(50) as usize;
            let (mut prefix, mut observations, mut requests) =
                (vec![500, 600], Vec::new(), vec![1]);
            for t in 0..turns {
                let obs = 100 + next(6_000);
                prefix.push(prefix[prefix.len() - 1] + 40);
                prefix.push(prefix[prefix.len() - 1] + obs);
                observations.push((2 + 2 * t + 1, next(obs)));
                requests.push(2 + 2 * t + 2);
            }
            let mut before: Vec<usize> = Vec::new();
            for k in 1..=requests.len() {
                let (schedule, _) = weigh(
                    &History {
                        prefix: &prefix,
                        observations: &observations,
                        requests: &requests[..k],
                        recall: &LazyRecall::default(),
                    },
                    &config,
                    &prices,
                );
                assert!(schedule.boundaries.starts_with(&before), "request {k}");
                assert!(schedule.boundaries.len() <= before.len() + 1);
                before = schedule.boundaries;
            }
        }
    }

    #[test]
    fn a_likely_needed_observation_defers_a_demotion_that_would_commit() {
        // A task (message 0), then calls (odd messages) and their results
        // of 3,000 tokens (even), after a 1,000-token system prompt.
        let turns = 20;
        let mut prefix = vec![1_000, 1_100];
        let (mut observations, mut requests) = (Vec::new(), Vec::new());
        for t in 0..turns {
            requests.push(1 + 2 * t);
            prefix.push(prefix[prefix.len() - 1] + 50);
            prefix.push(prefix[prefix.len() - 1] + 3_000);
            observations.push((2 + 2 * t, 2_500));
        }
        requests.push(1 + 2 * turns);
        // Every assistant message uses every output before it: a session
        // that keeps going back.
        let recall = LazyRecall::from(Recall {
            observations: observations
                .iter()
                .map(|&(m, _)| Evidence {
                    message: m,
                    facts: 4,
                    uses: requests.iter().copied().filter(|&r| r > m).collect(),
                    superseded_at: None,
                })
                .collect(),
            turns: requests.iter().map(|&r| (r, 1)).collect(),
            window: 3,
        });
        let history = History {
            prefix: &prefix,
            observations: &observations,
            requests: &requests,
            recall: &recall,
        };
        let mut config = Config::default();
        let (prices, _) = default_prices(config.provider);
        let (reported, _) = weigh(&history, &config, &prices);
        // Reported, not weighed: the moves commit as before.
        assert!(reported.demoted() > 0);
        // Weighed: the likely re-reads outweigh the saving.
        config.plan.recovery = true;
        let (weighed, candidate) = weigh(&history, &config, &prices);
        assert_eq!(weighed.demoted(), 0, "{candidate:?}");
        let candidate = candidate.expect("a candidate");
        assert!(!candidate.committed && candidate.reason.contains("recovery"));
        assert!(candidate.hidden > 0 && candidate.hidden_facts == 4 * candidate.hidden);
        assert!(candidate.recovery_probability > 0.9);
        assert!(candidate.expected_recovery > candidate.saving);
        // An unused history prices no recovery: the same moves commit.
        let unused = LazyRecall::default();
        let (moves, _) = weigh(
            &History {
                recall: &unused,
                ..history
            },
            &config,
            &prices,
        );
        assert_eq!(moves, reported);
    }

    #[test]
    fn off_means_fixed_batches() {
        let mut config = Config::default();
        config.plan.enabled = false;
        let (schedule, candidate) = run(&config, 20, 3_000, 0);
        assert_eq!(schedule.demoted(), Schedule::fixed(&config, 20).demoted());
        assert!(candidate.is_none());
        assert_eq!(schedule.boundaries.first(), Some(&config.optical.batch));
    }

    #[test]
    fn a_longer_horizon_commits_sooner() {
        let mut short = Config {
            provider: Provider::Anthropic,
            ..Config::default()
        };
        short.plan.horizon = 1;
        let mut long = short.clone();
        long.plan.horizon = 100;
        let (s, _) = run(&short, 20, 3_000, 1_500);
        let (l, _) = run(&long, 20, 3_000, 1_500);
        assert!(l.demoted() > s.demoted());
    }
}
