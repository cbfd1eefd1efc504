//! Stage placeholder replaced by its own issue.

use crate::error::Result;
use crate::model::Conversation;
use crate::pipeline::{Stage, StageContext, StageName};

/// The dedup stage.
#[derive(Debug, Default)]
pub struct Dedup;

impl Stage for Dedup {
    fn name(&self) -> StageName {
        StageName::Dedup
    }

    fn enabled(&self, cx: &StageContext<'_>) -> bool {
        cx.config.dedup.enabled
    }

    fn apply(&self, _conv: &mut Conversation, _cx: &mut StageContext<'_>) -> Result<()> {
        Ok(())
    }
}
