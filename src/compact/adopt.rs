//! Host summarizers: [`adopt_summary`] swaps a host's (async) answer to the
//! pending prompt in for the extractive summary, once validated.

use super::prior::is_summary;
use super::state::CompactState;
use super::summary::Summary;
use crate::config::Config;
use crate::error::{Error, ErrorCode, Result};
use crate::model::{Conversation, Message, Role};

/// Checks a summary text: all five sections present, once, and non-empty.
pub fn validate_summary(text: &str) -> Result<Summary> {
    Summary::parse(text).map_err(|m| Error::new(ErrorCode::SummarizerFailed, "summary", m))
}

/// Replaces the summary of the last compaction of `config.session` (in `conv`,
/// the request that compaction produced) by `text`, a host summarizer's answer
/// to the pending prompt. Validates the five sections, masks secrets (unless
/// `redact.enabled` is off), and updates the session state so later calls
/// re-apply the new summary.
pub fn adopt_summary(
    conv: &mut Conversation,
    state: &mut CompactState,
    config: &Config,
    text: &str,
) -> Result<()> {
    let parsed = validate_summary(text)?;
    let session = state.sessions.get_mut(&config.session);
    let Some((pending, s)) = session.and_then(|s| s.pending.clone().map(|p| (p, s))) else {
        return Err(Error::new(
            ErrorCode::SummarizerFailed,
            "summary",
            "no compaction of this session is waiting for a summary",
        ));
    };
    // Bounded like an extractive summary (the prompt asked for it).
    let mut parsed = parsed;
    let cap = config.budget_share(super::tasks::carried_share(
        conv,
        config,
        config.compact.summary_share,
    ));
    let count = |t: &str| crate::tokens::TokenCounter::count(&crate::tokens::Estimator, t);
    parsed.fit(&pending.header, cap, count, |n| {
        older_note(n, &pending.older)
    })?;
    let mut rendered = parsed.render(&pending.header);
    if config.redact.enabled {
        rendered = crate::redact::redact(&rendered).0.into_owned();
    }
    let Some(at) = conv.messages.iter().position(is_summary) else {
        return Err(Error::new(
            ErrorCode::InvalidRequest,
            "messages",
            "the request holds no TraceLite summary to replace",
        ));
    };
    if let Some(slot) = conv.messages.get_mut(at) {
        *slot = Message::text(Role::User, rendered.clone());
    }
    if let Some(rec) = s.record.as_mut() {
        if let Some(m) = rec.replacement.iter_mut().find(|m| is_summary(m)) {
            *m = Message::text(Role::User, rendered);
        }
    }
    s.pending = None;
    Ok(())
}

/// The summary line standing for `n` lines [`Summary::fit`] dropped.
pub(super) fn older_note(n: usize, older: &str) -> String {
    format!("- {n} older summary lines are not repeated here (compact.summaryShare): {older}")
}
