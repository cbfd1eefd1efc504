//! Stage placeholder replaced by its own issue.

use crate::error::Result;
use crate::model::Conversation;
use crate::pipeline::{Stage, StageContext, StageName};

/// The compact stage.
#[derive(Debug, Default)]
pub struct Compact;

impl Stage for Compact {
    fn name(&self) -> StageName {
        StageName::Compact
    }

    fn enabled(&self, cx: &StageContext<'_>) -> bool {
        cx.config.compact.enabled
    }

    fn apply(&self, _conv: &mut Conversation, _cx: &mut StageContext<'_>) -> Result<()> {
        Ok(())
    }
}
