//! The planner (layer 3): stages propose, the planner commits what pays.
//! [`commit`] is its one entry, for both kinds of [`Proposal`], and
//! [`commit_demotions`] its demotion round; it imports no stage, and no stage
//! imports it: the pipeline asks every stage for its demotion proposal
//! before the first scheduled stage runs and hands the planner their sum,
//! and hands it the compaction the compact stage leaves in its context,
//! then gives the stage the [`Verdict`](crate::stage::Verdict). Its own
//! types (the [`Candidate`]s it weighs, its [`Decision`]) are in
//! [`decision`].
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
pub mod decision;
pub mod demotion;
pub mod prices;
pub mod recovery;

use serde::Serialize;

pub use crate::config::PlanConfig;
use crate::config::Prices;
use crate::error::Result;
use crate::model::Conversation;
pub use crate::stage::{CompactionProposal, Proposal, Schedule};
pub use decision::{Candidate, CandidateKind, Decision, Planning};

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

/// The demotion round: sums what the stages `proposed` to save per
/// observation (oldest first; each `None` proposes nothing, and with no
/// proposal at all demotions move in fixed batches) and commits the
/// schedule on `conv` as it stands.
pub fn commit_demotions(
    conv: &Conversation,
    proposed: impl IntoIterator<Item = Option<Vec<u64>>>,
    planning: &Planning<'_>,
) -> Result<Decision> {
    let mut savings: Option<Vec<u64>> = None;
    for proposed in proposed.into_iter().flatten() {
        let sum = savings.get_or_insert_with(Vec::new);
        if sum.len() < proposed.len() {
            sum.resize(proposed.len(), 0);
        }
        for (s, p) in sum.iter_mut().zip(proposed) {
            *s += p;
        }
    }
    commit(conv, &Proposal::Demotion(savings), planning)
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

    #[test]
    fn the_demotion_round_sums_what_the_stages_proposed() {
        let config = Config::default();
        let conv = conversation(12);
        let meter = Meter {
            counter: &Estimator,
            provider: config.provider,
            optical: &config.optical,
        };
        let planning = Planning {
            config: &config,
            meter: &meter,
            message_tokens: &[],
        };
        let round =
            |proposed: Vec<Option<Vec<u64>>>| commit_demotions(&conv, proposed, &planning).unwrap();
        let summed = decide(
            &config,
            &conv,
            &Proposal::Demotion(Some(vec![2_000, 2_000, 500])),
        );
        assert_eq!(
            round(vec![
                Some(vec![1_500, 2_000]),
                None,
                Some(vec![500, 0, 500])
            ]),
            summed
        );
        // Nobody proposing is the fixed batches.
        assert_eq!(
            round(vec![None, None]),
            decide(&config, &conv, &Proposal::Demotion(None))
        );
    }

    /// A compaction the planner defers reads as such to the stage, with why.
    #[test]
    fn a_decision_reads_as_the_stages_verdict() {
        let unpriced = Decision::default();
        assert_eq!(
            unpriced.verdict(),
            crate::stage::Verdict {
                committed: true,
                reason: None
            }
        );
        let config = Config::default();
        let conv = conversation(12);
        let deferred = decide(
            &config,
            &conv,
            &Proposal::Compaction(CompactionProposal {
                start: 0,
                cut: 2,
                tokens: 40_000,
                saving: 1,
                stable: 0,
                forced: 1_000_000,
            }),
        );
        let candidate = deferred.candidate.clone().expect("priced");
        assert!(!candidate.committed);
        assert_eq!(
            deferred.verdict(),
            crate::stage::Verdict {
                committed: false,
                reason: Some(candidate.reason)
            }
        );
    }
}
