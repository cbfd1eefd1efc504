//! Stage placeholder replaced by its own issue.

use crate::error::Result;
use crate::model::Conversation;
use crate::pipeline::{Stage, StageContext, StageName};

/// The optical stage.
#[derive(Debug, Default)]
pub struct Optical;

impl Stage for Optical {
    fn name(&self) -> StageName {
        StageName::Optical
    }

    fn enabled(&self, cx: &StageContext<'_>) -> bool {
        cx.config.optical.enabled
    }

    fn apply(&self, _conv: &mut Conversation, _cx: &mut StageContext<'_>) -> Result<()> {
        Ok(())
    }
}
