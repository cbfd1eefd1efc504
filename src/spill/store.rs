//! The [`SpillStore`] trait and the default bounded in-memory store.

use std::collections::BTreeMap;

use serde::Serialize;

use super::validate_name;
use crate::error::{Error, ErrorCode, Result};

/// Metadata of one stored blob.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SpillInfo {
    /// Key within the session.
    pub key: String,
    /// Size in bytes.
    pub bytes: usize,
    /// Number of lines.
    pub lines: usize,
}

/// Where removed text is kept, namespaced by session.
pub trait SpillStore {
    /// Stores `text` under `key`. Storing the same key again is a no-op.
    fn put(&mut self, session: &str, key: &str, text: &str) -> Result<()>;
    /// The whole blob; `SPILL_NOT_FOUND` when absent (or in another session).
    fn get(&mut self, session: &str, key: &str) -> Result<String>;
    /// Blobs of a session, sorted by key.
    fn list(&self, session: &str) -> Vec<SpillInfo>;
    /// Removes a blob; returns whether it existed.
    fn delete(&mut self, session: &str, key: &str) -> bool;
}

/// In-memory store bounded per session.
#[derive(Debug, Default)]
pub struct MemoryStore {
    sessions: BTreeMap<String, BTreeMap<String, String>>,
}

impl MemoryStore {
    /// An empty store.
    pub fn new() -> Self {
        Self::default()
    }
}

fn not_found(key: &str) -> Error {
    Error::new(
        ErrorCode::SpillNotFound,
        key,
        "no such spill in this session",
    )
}

impl SpillStore for MemoryStore {
    fn put(&mut self, session: &str, key: &str, text: &str) -> Result<()> {
        validate_name("session", session)?;
        validate_name("key", key)?;
        self.sessions
            .entry(session.to_string())
            .or_default()
            .entry(key.to_string())
            .or_insert_with(|| text.to_string());
        Ok(())
    }

    fn get(&mut self, session: &str, key: &str) -> Result<String> {
        validate_name("key", key)?;
        self.sessions
            .get(session)
            .and_then(|s| s.get(key))
            .cloned()
            .ok_or_else(|| not_found(key))
    }

    fn list(&self, session: &str) -> Vec<SpillInfo> {
        self.sessions
            .get(session)
            .map(|s| {
                s.iter()
                    .map(|(k, v)| SpillInfo {
                        key: k.clone(),
                        bytes: v.len(),
                        lines: v.lines().count(),
                    })
                    .collect()
            })
            .unwrap_or_default()
    }

    fn delete(&mut self, session: &str, key: &str) -> bool {
        self.sessions
            .get_mut(session)
            .is_some_and(|s| s.remove(key).is_some())
    }
}
