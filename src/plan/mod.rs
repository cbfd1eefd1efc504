//! The planner (layer 3): stages propose, the planner commits what pays.
//! [`commit`] is its one entry, for both kinds of [`Proposal`]; it imports no
//! stage: the pipeline installs it in the stage context
//! ([`crate::stage::Planner`]) and asks every stage for its demotion
//! proposal before the first scheduled stage runs; the compact stage hands
//! it its compaction through the context too.
//!
//! Every rewrite of an earlier message (a snapshot, a dedup edit, a
//! tombstone, a summary) re-sends everything after it uncached (and, for
//! Anthropic, writes it to the cache at 1.25×). A stage knows how to make an
//! observation smaller; the planner decides whether doing it *now* pays:
//!
//! * [`demotion`]: when observations that left the recent window are handed
//!   to the rewriting stages (dedup, phase, optical). The boundary moves in
//!   steps of at least `optical.batch` observations, and only when the tokens
//!   the optical stage proposes to save, read from the cache over the
//!   horizon, pay for the prefix the move rewrites — or when the request is
//!   over the compaction threshold. Deferred moves accumulate into larger,
//!   cheaper ones.
//! * [`compaction`]: whether compacting now costs less over the horizon
//!   than waiting.
//!
//! Every candidate carries what it hides and its expected recovery cost
//! ([`recovery`]): per hidden observation, the probability that the agent
//! needs it again ([`crate::activity::recall`], estimated from the history)
//! times the price of one more request of the whole context. With
//! `plan.recovery` a demotion commits only when its saving minus that cost
//! pays for the rewrite; with `plan.compactionRecovery` a priced compaction
//! waits while its saving does not exceed that cost.
//!
//! Prices come from a dated per-provider table ([`prices`]); the horizon
//! (turns still to come) defaults to the turns so far (a session that has
//! run for `t` turns is expected to run about `t` more), clamped to
//! `plan.minHorizon..=plan.maxHorizon` (10..=15: a rewrite must pay back
//! within 15 turns). Every decision is a pure function
//! of the history and the settings, so a stateless host that sees the whole
//! history each turn and the stateful [`crate::TraceLite`] emit the same bytes.

pub mod compaction;
pub mod demotion;
pub mod prices;
pub mod recovery;

use serde::Serialize;

pub use crate::config::PlanConfig;
use crate::config::Prices;
use crate::error::Result;
use crate::model::Conversation;
pub use crate::stage::{Candidate, CandidateKind, Decision, Planning, Proposal, Schedule};

/// Commits `proposal` on `conv` or defers it (see the module doc): a
/// demotion gives the schedule and the candidate weighed on the request
/// now, a compaction its priced candidate.
pub fn commit(
    conv: &Conversation,
    proposal: &Proposal,
    planning: &Planning<'_>,
) -> Result<Decision> {
    match proposal {
        Proposal::Demotion(savings) => demotion::commit(conv, savings.as_deref(), planning),
        Proposal::Compaction(p) => compaction::commit(conv, p, planning),
    }
}

/// Tokens of each message of `conv`, system prompt first: the pipeline's
/// counts of the messages as they stand, else counted here.
fn message_tokens<'p>(
    conv: &Conversation,
    planning: &Planning<'p>,
) -> Result<std::borrow::Cow<'p, [u64]>> {
    if planning.message_tokens.len() == conv.system.len() + conv.messages.len() {
        return Ok(std::borrow::Cow::Borrowed(planning.message_tokens));
    }
    Ok(std::borrow::Cow::Owned(planning.meter.messages(conv)?))
}

/// Whether the planner prices demotions under `config` (else they move in
/// fixed batches and no stage is asked to propose).
pub fn prices_demotions(config: &crate::config::Config) -> bool {
    config.plan.enabled
}

impl PlanConfig {
    /// Turns expected after a request that is the `turn`-th (1-based).
    pub fn horizon(&self, turn: usize) -> usize {
        if self.horizon > 0 {
            return self.horizon;
        }
        turn.clamp(self.min_horizon, self.max_horizon.max(self.min_horizon))
    }
}

/// The planner's decisions on this call.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PlanReport {
    /// Prices used.
    pub prices: Prices,
    /// Where they come from.
    pub prices_source: String,
    /// Observations handed to the rewriting stages so far.
    pub demoted: usize,
    /// Every candidate weighed on this turn.
    pub candidates: Vec<Candidate>,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::Config;
    use crate::model::{Message, Role};
    use crate::tokens::{Estimator, Meter};

    /// A task and `n` tool calls with results of 3,000 characters.
    fn conversation(n: usize) -> Conversation {
        let mut conv = Conversation::default();
        conv.messages.push(Message::text(Role::User, "task"));
        for i in 0..n {
            let call = crate::model::ToolCall {
                id: format!("c{i}"),
                name: "bash".into(),
                arguments: "{}".into(),
            };
            conv.messages.push(Message {
                role: Role::Assistant,
                parts: vec![crate::model::Part::from(crate::model::PartKind::ToolCall(
                    call,
                ))],
                layout: crate::model::Layout::Null,
                extra: Default::default(),
            });
            conv.messages.push(Message {
                role: Role::Tool,
                parts: vec![crate::model::Part::from(
                    crate::model::PartKind::ToolResult(crate::model::ToolResult {
                        call_id: format!("c{i}"),
                        parts: vec![crate::model::Part::text("y\n".repeat(1_500))],
                        is_error: false,
                    }),
                )],
                layout: crate::model::Layout::Text,
                extra: Default::default(),
            });
        }
        conv
    }

    fn decide(config: &Config, conv: &Conversation, proposal: &Proposal) -> Decision {
        let meter = Meter {
            counter: &Estimator,
            provider: config.provider,
            optical: &config.optical,
        };
        commit(
            conv,
            proposal,
            &Planning {
                config,
                meter: &meter,
                message_tokens: &[],
            },
        )
        .unwrap()
    }

    #[test]
    fn demotions_nobody_proposed_move_in_fixed_batches() {
        let config = Config::default();
        let conv = conversation(12);
        let fixed = Schedule::fixed(&config, 12);
        let none = decide(&config, &conv, &Proposal::Demotion(None));
        assert_eq!(none.schedule.as_ref(), Some(&fixed));
        assert!(none.candidate.is_none());
        // Proposed savings are priced: a candidate says why.
        let proposed = decide(&config, &conv, &Proposal::Demotion(Some(vec![2_000; 9])));
        let candidate = proposed.candidate.expect("a priced candidate");
        assert_eq!(candidate.kind, CandidateKind::Demotion);
        assert!(proposed.schedule.is_some());
        // The report carries what it hides and its expected recovery.
        let json = serde_json::to_value(&candidate).unwrap();
        for key in [
            "hidden",
            "hiddenFacts",
            "recoveryProbability",
            "expectedRecovery",
        ] {
            assert!(json.get(key).is_some_and(|v| v.is_number()), "{key}");
        }
        // The planner off: fixed batches whatever was proposed.
        let mut off = config.clone();
        off.plan.enabled = false;
        let unplanned = decide(&off, &conv, &Proposal::Demotion(Some(vec![2_000; 9])));
        assert_eq!(unplanned.schedule, Some(fixed));
        assert!(unplanned.candidate.is_none());
    }
}
