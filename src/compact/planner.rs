//! Whether a compaction pays: the figures the planner prices (compacting now
//! against waiting, cache-aware), asked through [`PriceCompaction`] so this
//! stage does not import the planner.

use super::draft::Draft;
use super::prior::{is_archive, is_user_authored, Prior};
use super::sum_tokens;
use super::trigger::Thresholds;
use super::CompactState;
use crate::error::Result;
use crate::model::{Conversation, Role};
use crate::stage::{CompactionInputs, StageContext};

/// What the planner prices compacting now against waiting with: the
/// request's tokens, what the cache holds, growth per turn, the tokens after
/// compacting (`saving` fewer) and what stays cached.
pub(super) fn inputs(
    conv: &Conversation,
    cx: &StageContext<'_, CompactState>,
    prior: &Prior,
    draft: &Draft,
    tokens: u64,
    saving: u64,
    limits: Thresholds,
) -> Result<CompactionInputs> {
    let config = cx.config;
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
    Ok(CompactionInputs {
        tokens,
        cached: tokens.saturating_sub(newest_tokens),
        growth,
        compacted: tokens.saturating_sub(saving),
        stable,
        forced: limits.forced,
        horizon: config.plan.horizon(assistants.len()),
    })
}
