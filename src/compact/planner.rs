//! Whether a compaction pays: the cache-aware price of compacting now
//! against waiting ([`crate::plan::compaction`]), weighed as a planner candidate.

use super::draft::Draft;
use super::prior::{is_archive, is_user_authored, Prior};
use super::sum_tokens;
use super::trigger::Thresholds;
use crate::error::Result;
use crate::model::{Conversation, Role};
use crate::stage::StageContext;

/// Runs the planner: prices compacting now against waiting over its horizon;
/// returns its explanation (containing `compact now` when it pays) and the
/// candidate for the report.
pub(super) fn price(
    conv: &Conversation,
    cx: &StageContext<'_>,
    prior: &Prior,
    draft: &Draft,
    tokens: u64,
    saving: u64,
    limits: Thresholds,
) -> Result<(String, crate::plan::Candidate)> {
    let config = cx.config;
    let (prices, source) = crate::plan::prices::for_config(config);
    // The previous request is this one without its newest turn.
    let assistants: Vec<usize> = conv
        .messages
        .iter()
        .enumerate()
        .filter(|(i, m)| *i >= prior.start && m.role == Role::Assistant)
        .map(|(i, _)| i)
        .collect();
    let newest = assistants.last().copied().unwrap_or(conv.messages.len());
    let newest_tokens = sum_tokens(cx, conv.messages.get(newest..).unwrap_or(&[]))?;
    let recent_from = assistants
        .len()
        .checked_sub(5)
        .and_then(|i| assistants.get(i))
        .or(assistants.first())
        .copied()
        .unwrap_or(conv.messages.len());
    let recent_turns = assistants.len().clamp(1, 5) as u64;
    let growth = sum_tokens(cx, conv.messages.get(recent_from..).unwrap_or(&[]))? / recent_turns;
    let mut stable = sum_tokens(cx, &conv.system)?;
    // The user's messages kept at the start stay in the cached prefix.
    for (new, old) in draft.messages.iter().zip(&conv.messages) {
        if new != old || !is_user_authored(new) {
            break;
        }
        stable += cx.meter.message(new)?;
    }
    // An unchanged archive stays in the cached prefix too.
    if let (Some(first), Some(old)) = (draft.messages.first(), conv.messages.first()) {
        if is_archive(first) && first == old {
            stable += cx.meter.message(first)?;
        }
    }
    let horizon = config.plan.horizon(assistants.len());
    let inputs = crate::plan::compaction::PlanInputs {
        tokens,
        cached: tokens.saturating_sub(newest_tokens),
        growth,
        compacted: tokens.saturating_sub(saving),
        stable,
        forced: limits.forced,
        horizon,
    };
    let e = crate::plan::compaction::estimate(&prices, &inputs);
    let verdict = if e.pays() { "compact now" } else { "wait" };
    let why = format!(
        "planner: compacting ${:.4} vs waiting ${:.4} over {horizon} turns ({source}) → {verdict}",
        e.compact, e.wait
    );
    let candidate = crate::plan::Candidate {
        kind: crate::plan::CandidateKind::Compaction,
        observations: None,
        tokens_saved: saving,
        tokens_rewritten: tokens.saturating_sub(stable),
        cost_now: crate::plan::prices::turn_cost(&prices, inputs.compacted, stable)
            - crate::plan::prices::turn_cost(&prices, tokens, inputs.cached),
        saving: e.wait - e.compact,
        horizon,
        committed: e.pays(),
        reason: why.clone(),
    };
    Ok((why, candidate))
}
