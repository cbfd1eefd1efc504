//! Stage placeholder replaced by its own issue.

use crate::error::Result;
use crate::model::Conversation;
use crate::pipeline::{Stage, StageContext, StageName};

/// The phase stage.
#[derive(Debug, Default)]
pub struct Phase;

impl Stage for Phase {
    fn name(&self) -> StageName {
        StageName::Phase
    }

    fn enabled(&self, cx: &StageContext<'_>) -> bool {
        cx.config.phase.enabled
    }

    fn apply(&self, _conv: &mut Conversation, _cx: &mut StageContext<'_>) -> Result<()> {
        Ok(())
    }
}
