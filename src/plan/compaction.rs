//! When compaction pays: both choices (compact now, wait) simulated over the
//! planner's horizon with prompt-cache prices — compaction throws away the
//! cached prefix — unless the budget forces it. The compact stage proposes
//! the figures only it knows ([`CompactionProposal`]); what the cache holds,
//! how fast the request grows and the horizon are read here, from the
//! history.

use super::prices::{for_config, turn_cost};
use super::{recovery, Candidate, CandidateKind, Decision, Planning};
use crate::activity::recall::Recall;
use crate::config::{Config, Prices};
use crate::error::Result;
use crate::model::{Conversation, Message, Role};
use crate::stage::CompactionProposal;

/// What a compaction is priced with.
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

/// Prices the compact stage's proposal on `conv` (the request as the
/// stages before it left it).
pub fn commit(
    conv: &Conversation,
    proposal: &CompactionProposal,
    planning: &Planning<'_>,
) -> Result<Decision> {
    let inputs = inputs(conv, proposal, planning)?;
    let config = planning.config;
    let mut candidate = candidate(config, &inputs, proposal.saving);
    // What the summary hides: the observations it replaces.
    let recall = Recall::of(conv, config.window);
    let tokens = super::message_tokens(conv, planning)?;
    let of_message = |m: usize| tokens.get(conv.system.len() + m).copied().unwrap_or(0);
    let hides = recall
        .observations
        .iter()
        .enumerate()
        .filter(|(_, e)| (proposal.start..proposal.cut).contains(&e.message))
        .map(|(k, e)| (k, of_message(e.message)));
    let (prices, _) = for_config(config);
    let hides: Vec<(usize, u64)> = hides.collect();
    let end = conv.messages.len();
    let r = recovery::expected(
        &recall,
        hides.iter().copied(),
        end,
        inputs.horizon,
        inputs.compacted,
        &prices,
    );
    r.report(&mut candidate);
    if config.plan.compaction_recovery && candidate.committed {
        // Waiting hides the same outputs once the budget forces a
        // compaction: what compacting now adds is their recovery over the
        // turns until then.
        let until = inputs.turns_to_forced().min(inputs.horizon);
        let added = if until < inputs.horizon {
            recovery::expected(&recall, hides, end, until, inputs.compacted, &prices).dollars
        } else {
            r.dollars
        };
        if candidate.saving <= added {
            candidate.committed = false;
            candidate.reason = format!(
                "{} − expected recovery ${added:.4} over {until} turns → wait",
                candidate.reason.trim_end_matches(" → compact now"),
            );
        }
    }
    Ok(Decision {
        schedule: None,
        candidate: Some(candidate),
    })
}

/// The request's figures for `proposal`: what the cache holds (the previous
/// request is this one without its newest turn), growth per turn (over the
/// last five turns since the previous summary) and the horizon.
fn inputs(
    conv: &Conversation,
    proposal: &CompactionProposal,
    planning: &Planning<'_>,
) -> Result<PlanInputs> {
    let sum = |messages: &[Message]| -> Result<u64> {
        let mut sum = 0;
        for m in messages {
            sum += planning.meter.message(m)?;
        }
        Ok(sum)
    };
    let tokens = proposal.tokens;
    let assistants: Vec<usize> = conv
        .messages
        .iter()
        .enumerate()
        .filter(|(i, m)| *i >= proposal.start && m.role == Role::Assistant)
        .map(|(i, _)| i)
        .collect();
    let newest = assistants.last().copied().unwrap_or(conv.messages.len());
    let newest_tokens = sum(conv.messages.get(newest..).unwrap_or(&[]))?;
    let recent_from = assistants
        .len()
        .checked_sub(5)
        .and_then(|i| assistants.get(i))
        .or(assistants.first())
        .copied()
        .unwrap_or(conv.messages.len());
    let recent_turns = assistants.len().clamp(1, 5) as u64;
    let growth = sum(conv.messages.get(recent_from..).unwrap_or(&[]))? / recent_turns;
    Ok(PlanInputs {
        tokens,
        cached: tokens.saturating_sub(newest_tokens),
        growth,
        compacted: tokens.saturating_sub(proposal.saving),
        stable: proposal.stable,
        forced: proposal.forced,
        horizon: planning.config.plan.horizon(assistants.len()),
    })
}

/// The planner's estimate: dollars over the horizon for both choices.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PlanEstimate {
    /// Cost if the conversation is not compacted now.
    pub wait: f64,
    /// Cost if it is compacted now.
    pub compact: f64,
}

impl PlanInputs {
    /// Turns until waiting crosses `forced` and compacts anyway (as
    /// [`estimate`] simulates it); `usize::MAX` when the request does not grow.
    pub fn turns_to_forced(&self) -> usize {
        if self.growth == 0 {
            return usize::MAX;
        }
        let room = self.forced.saturating_sub(self.tokens);
        usize::try_from(room / self.growth + 1).unwrap_or(usize::MAX)
    }
}

impl PlanEstimate {
    /// Whether compacting now is cheaper.
    pub fn pays(&self) -> bool {
        self.compact < self.wait
    }
}

/// A compaction that saves `saving` tokens, priced under `config`: the
/// candidate for the report, its reason the explanation (`compact now` when
/// it pays).
pub fn candidate(config: &Config, inputs: &PlanInputs, saving: u64) -> Candidate {
    let (prices, source) = for_config(config);
    let horizon = inputs.horizon;
    let e = estimate(&prices, inputs);
    let verdict = if e.pays() { "compact now" } else { "wait" };
    let why = format!(
        "planner: compacting ${:.4} vs waiting ${:.4} over {horizon} turns ({source}) → {verdict}",
        e.compact, e.wait
    );
    Candidate {
        kind: CandidateKind::Compaction,
        observations: None,
        tokens_saved: saving,
        tokens_rewritten: inputs.tokens.saturating_sub(inputs.stable),
        cost_now: turn_cost(&prices, inputs.compacted, inputs.stable)
            - turn_cost(&prices, inputs.tokens, inputs.cached),
        saving: e.wait - e.compact,
        horizon,
        hidden: 0,
        hidden_facts: 0,
        recovery_probability: 0.0,
        expected_recovery: 0.0,
        committed: e.pays(),
        reason: why,
    }
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

    /// The estimator's meter with a provider and optical settings (borrowing
    /// only those, so a test may change the rest of its config).
    fn meter_of(
        provider: crate::config::Provider,
        optical: &crate::config::OpticalConfig,
    ) -> crate::tokens::Meter<'_> {
        crate::tokens::Meter {
            counter: &crate::tokens::Estimator,
            provider,
            optical,
        }
    }

    /// `turns` turns (a call of 40 characters, a result of `len`) after a task.
    fn history(turns: usize, len: usize) -> Conversation {
        let mut conv = Conversation::default();
        conv.messages.push(Message::text(Role::User, "fix the bug"));
        for t in 0..turns {
            conv.messages
                .push(Message::text(Role::Assistant, format!("step {t:>34}")));
            conv.messages
                .push(Message::text(Role::User, "x".repeat(len)));
        }
        conv
    }

    #[test]
    fn the_history_gives_the_cached_prefix_growth_and_horizon() {
        let mut config = Config::default();
        // The horizon is the turns so far.
        config.plan.min_horizon = 1;
        let meter = meter_of(config.provider, &config.optical);
        let planning = Planning {
            config: &config,
            meter: &meter,
            message_tokens: &[],
        };
        let conv = history(8, 4_000);
        let count = |m: &[Message]| m.iter().map(|m| meter.message(m).unwrap()).sum::<u64>();
        let tokens = count(&conv.messages);
        let proposal = CompactionProposal {
            start: 0,
            cut: 4,
            tokens,
            saving: 1_000,
            stable: 10,
            forced: 1_000_000,
        };
        let i = super::inputs(&conv, &proposal, &planning).unwrap();
        let turn = count(&conv.messages[conv.messages.len() - 2..]);
        // The previous request is this one without its newest turn.
        assert_eq!(i.cached, tokens - turn);
        // Growth: the mean of the last five turns (all alike here).
        assert_eq!(i.growth, turn);
        assert_eq!(i.compacted, tokens - 1_000);
        assert_eq!((i.stable, i.forced), (10, 1_000_000));
        assert_eq!(i.horizon, 8);
        // After a previous summary (message 12) only the two turns since count.
        let since = super::inputs(
            &conv,
            &CompactionProposal {
                start: 12,
                ..proposal
            },
            &planning,
        )
        .unwrap();
        assert_eq!(since.horizon, 2);
        let decision = commit(&conv, &proposal, &planning).unwrap();
        let candidate = decision.candidate.unwrap();
        assert_eq!(candidate.kind, CandidateKind::Compaction);
        assert_eq!(candidate.tokens_rewritten, tokens - 10);
        assert!(decision.schedule.is_none());
    }

    /// A session that keeps using what its outputs said: each call names the
    /// function the previous output defined.
    fn used_history(turns: usize, len: usize) -> Conversation {
        use crate::model::{Layout, Part, PartKind, ToolCall, ToolResult};
        let mut conv = Conversation::default();
        conv.messages.push(Message::text(Role::User, "fix the bug"));
        for t in 0..turns {
            let id = format!("c{t}");
            conv.messages.push(Message {
                role: Role::Assistant,
                parts: vec![Part::from(PartKind::ToolCall(ToolCall {
                    id: id.clone(),
                    name: "bash".into(),
                    arguments: format!("{{\"cmd\":\"grep -n helper_{t}_impl src\"}}"),
                }))],
                layout: Layout::Null,
                extra: Default::default(),
            });
            conv.messages.push(Message {
                role: Role::Tool,
                parts: vec![Part::from(PartKind::ToolResult(ToolResult {
                    call_id: id,
                    parts: vec![Part::text(format!(
                        "def helper_{}_impl():\n{}",
                        t + 1,
                        "x".repeat(len)
                    ))],
                    is_error: false,
                }))],
                layout: Layout::Text,
                extra: Default::default(),
            });
        }
        conv
    }

    #[test]
    fn compaction_recovery_waits_while_the_hidden_outputs_cost_more_than_it_saves() {
        let mut config = Config::default();
        config.plan.min_horizon = 1;
        let meter = meter_of(config.provider, &config.optical);
        let conv = used_history(12, 8_000);
        let tokens: u64 = conv
            .messages
            .iter()
            .map(|m| meter.message(m).unwrap())
            .sum();
        let proposal = CompactionProposal {
            start: 0,
            cut: 20,
            tokens,
            saving: tokens / 2,
            stable: 10,
            forced: 1_000_000,
        };
        let decide = |config: &Config, proposal: &CompactionProposal| {
            let planning = Planning {
                config,
                meter: &meter,
                message_tokens: &[],
            };
            commit(&conv, proposal, &planning)
                .unwrap()
                .candidate
                .unwrap()
        };
        config.plan.compaction_recovery = false;
        let reported = decide(&config, &proposal);
        assert!(reported.committed, "{reported:?}");
        assert!(
            reported.hidden > 0 && reported.expected_recovery > reported.saving,
            "{reported:?}"
        );
        config.plan.compaction_recovery = true;
        let weighed = decide(&config, &proposal);
        assert!(
            !weighed.committed && weighed.reason.contains("expected recovery"),
            "{weighed:?}"
        );
        assert!(weighed.reason.contains("over 12 turns"), "{weighed:?}");
        // Waiting would be forced to compact next turn: compacting now adds
        // one turn of recovery, not the horizon's.
        let soon = CompactionProposal {
            forced: tokens,
            ..proposal
        };
        let forced = decide(&config, &soon);
        let added: f64 = forced
            .reason
            .split("expected recovery $")
            .nth(1)
            .and_then(|r| r.split(' ').next())
            .and_then(|n| n.parse().ok())
            .expect("the weighed recovery in the reason");
        assert!(forced.reason.contains("over 1 turns"), "{forced:?}");
        assert!(
            added > 0.0 && added < forced.expected_recovery / 4.0,
            "{forced:?}"
        );
    }
}
