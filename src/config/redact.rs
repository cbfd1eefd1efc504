//! The `redact` section: its settings and their defaults; every value of
//! theirs is valid.

use serde::{Deserialize, Serialize};

/// Secret redaction settings.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields, rename_all = "camelCase")]
pub struct RedactConfig {
    /// Mask secrets in excerpts, snapshots and summaries.
    pub enabled: bool,
    /// Also mask them in the spill store (the original is then lost).
    pub store: bool,
}

impl Default for RedactConfig {
    fn default() -> Self {
        Self {
            enabled: true,
            store: false,
        }
    }
}
