//! Where removed text goes (base layer, below the stage contract, which keeps
//! into it): the [`SpillStore`] trait and the default bounded in-memory
//! store, how blobs are read ([`lines`]) and searched ([`grep`]), their
//! pointers (`spill://<session>/<key>` or a file path) and the marker of an
//! excerpt whose full text the store refused. The spill stage
//! ([`crate::spill`]) re-exports all of it.

use std::collections::{BTreeMap, BTreeSet, VecDeque};

use serde::{Deserialize, Serialize};

pub mod grep;
pub mod lines;

use crate::error::{Error, ErrorCode, Result};
use grep::{GrepOptions, GrepResult, Pattern};
use lines::LineIndex;

/// URI scheme of spill pointers.
pub const SCHEME: &str = "spill://";

/// Extension of a spill kept as a file (see [`pointer_in`]).
pub const FILE_EXTENSION: &str = ".txt";

/// The pointer text for `key` in `session`: `spill://<session>/<key>`.
pub fn pointer(session: &str, key: &str) -> String {
    format!("{SCHEME}{session}/{key}")
}

/// The pointer text for `key` in `session` when the host keeps spills as
/// files under `root` (`spill.pointerRoot`): the path
/// `<root>/<session>/<key>.txt`; [`pointer`] when `root` is empty.
pub fn pointer_in(root: &str, session: &str, key: &str) -> String {
    if root.is_empty() {
        return pointer(session, key);
    }
    let root = root.trim_end_matches(['/', '\\']);
    format!("{root}/{session}/{key}{FILE_EXTENSION}")
}

/// Whether a pointer is a file path ([`pointer_in`] with a root), not `spill://`.
pub fn is_path_pointer(pointer: &str) -> bool {
    !pointer.starts_with(SCHEME)
}

/// Splits a pointer, `spill://<session>/<key>` or a file path
/// `…/<session>/<key>.txt`, into `(session, key)`; a bare key gives `(None, key)`.
pub fn parse_pointer(text: &str) -> (Option<&str>, &str) {
    let text = text.trim();
    if let Some(rest) = text.strip_prefix(SCHEME) {
        return match rest.split_once('/') {
            Some((session, key)) => (Some(session), key),
            None => (None, rest),
        };
    }
    if let Some(path) = text.strip_suffix(FILE_EXTENSION) {
        let mut parts = path.rsplit(['/', '\\']);
        if let (Some(key), Some(session), Some(_)) = (parts.next(), parts.next(), parts.next()) {
            return (Some(session), key);
        }
    }
    (None, text)
}

/// Checks a session name or key: 1–128 chars of `[A-Za-z0-9._-]`, no `..`.
pub fn validate_name(what: &str, name: &str) -> Result<()> {
    let ok = !name.is_empty()
        && name.len() <= 128
        && name != "."
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
            "must be 1-128 characters of [A-Za-z0-9._-], not \".\" and without \"..\"",
        ))
    }
}

/// Opening of an excerpt's first line.
pub(crate) const HEADER_OPENING: &str = "[output too long: ";
/// Opening of the second line of an excerpt whose full output was refused by the store.
pub(crate) const REFUSED_OPENING: &str = "[full output could not be kept: ";

/// Whether `text` is an excerpt whose full output could not be kept (the
/// store refused it): what it shows is all that remains. Read from the text
/// itself, so a later request (the stateless proxy) knows it too.
pub fn is_refused_excerpt(text: &str) -> bool {
    let mut lines = text.lines();
    lines.next().is_some_and(|l| l.starts_with(HEADER_OPENING))
        && lines.next().is_some_and(|l| l.starts_with(REFUSED_OPENING))
}

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

/// One page of a blob, as returned by [`SpillStore::read`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Page {
    /// Lines skipped before the page (the first line of the page is number `offset + 1`).
    pub offset: usize,
    /// Lines in the page.
    pub count: usize,
    /// Lines in the whole blob.
    pub total_lines: usize,
    /// Size of the whole blob in bytes.
    pub total_bytes: usize,
    /// The page's lines exactly as stored, line ends included: concatenating
    /// every page of a blob gives the blob back byte for byte.
    pub text: String,
}

impl Page {
    /// The `offset` of the next page, or `None` after the last line.
    pub fn next_offset(&self) -> Option<usize> {
        let next = self.offset + self.count;
        (next < self.total_lines).then_some(next)
    }
}

/// Where removed text is kept, namespaced by session.
///
/// Keys and sessions are validated ([`validate_name`]); a key of another
/// session is reported exactly like a missing key (`SPILL_NOT_FOUND`).
pub trait SpillStore {
    /// Stores `text` under `key`. Storing the same text under the same key again
    /// is a no-op; different text under an existing key, or a blob the store has
    /// no room for, is refused with `STORE_REFUSED` (the held text stays). A
    /// key shaped like a content key (`<kind>-<32 hex>`, [`crate::hash::key`]) must
    /// be the hash of `text`, else `SPILL_CORRUPT`; a store whose texts live
    /// outside this process checks them again when it reads them back.
    fn put(&mut self, session: &str, key: &str, text: &str) -> Result<()>;
    /// [`put`](Self::put) of a text whose content key the caller has just
    /// hashed from it ([`crate::hash::key::KeyCache::key_hashed`]): a store may skip
    /// hashing it again. Otherwise the same as `put`.
    fn put_hashed(&mut self, session: &str, key: &str, text: &str) -> Result<()> {
        self.put(session, key, text)
    }
    /// The whole blob; `SPILL_NOT_FOUND` when absent (or in another session),
    /// `SPILL_CORRUPT` when what comes back does not hash to its content key.
    fn get(&mut self, session: &str, key: &str) -> Result<String>;
    /// Whether the blob exists (a cheap existence check, no copy).
    fn contains(&self, session: &str, key: &str) -> bool {
        self.list(session).iter().any(|i| i.key == key)
    }
    /// Lines `offset+1 ..= offset+limit` of a blob (fewer at the end).
    fn read(&mut self, session: &str, key: &str, offset: usize, limit: usize) -> Result<Page> {
        let text = self.get(session, key)?;
        Ok(LineIndex::new(&text).page(&text, offset, limit))
    }
    /// Lines of a blob matching `pattern`, with context.
    fn grep(
        &mut self,
        session: &str,
        key: &str,
        pattern: &Pattern,
        options: &GrepOptions,
    ) -> Result<GrepResult> {
        let text = self.get(session, key)?;
        grep::grep(&text, &LineIndex::new(&text), pattern, options)
    }
    /// Blobs of a session, sorted by key.
    fn list(&self, session: &str) -> Vec<SpillInfo>;
    /// Bytes held by a session.
    fn session_bytes(&self, session: &str) -> usize {
        self.list(session).iter().map(|i| i.bytes).sum()
    }
    /// Removes a blob; returns whether it existed.
    fn delete(&mut self, session: &str, key: &str) -> bool;
    /// Removes a whole session; returns the bytes freed.
    fn evict(&mut self, session: &str) -> usize {
        let mut freed = 0;
        for info in self.list(session) {
            if self.delete(session, &info.key) {
                freed += info.bytes;
            }
        }
        freed
    }
    /// Removes what has expired at `now` (seconds, any epoch the host keeps
    /// consistent); returns the number of sessions removed. Stores without a
    /// TTL remove nothing.
    fn sweep(&mut self, _now: u64) -> usize {
        0
    }
}

/// Bounds of a [`MemoryStore`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields, rename_all = "camelCase")]
pub struct StoreLimits {
    /// Bytes of text kept across all sessions (default 64 MiB). When a put
    /// does not fit, expired sessions and then least-recently-used other
    /// sessions are evicted; if it still does not fit, the put is refused.
    pub max_bytes: usize,
    /// Bytes of text kept per session (default 16 MiB); a put over it is refused.
    pub max_session_bytes: usize,
    /// A session unused for this many seconds is removed by a sweep (default
    /// 7 days; 0 keeps sessions until evicted).
    pub ttl_seconds: u64,
    /// Work one grep may do (pattern program bytes × bytes searched, see
    /// [`grep`]); a search over it fails with `GREP_TOO_COSTLY`.
    /// Default [`grep::DEFAULT_MAX_GREP_COST`] (2^32).
    pub max_grep_cost: u64,
}

impl Default for StoreLimits {
    fn default() -> Self {
        Self {
            max_bytes: 64 << 20,
            max_session_bytes: 16 << 20,
            ttl_seconds: 7 * 24 * 3600,
            max_grep_cost: grep::DEFAULT_MAX_GREP_COST,
        }
    }
}

#[derive(Debug)]
struct Blob {
    text: String,
    index: Option<LineIndex>,
    lines: usize,
}

#[derive(Debug, Default)]
struct SessionBlobs {
    blobs: BTreeMap<String, Blob>,
    bytes: usize,
    /// Host time of the last use (see [`MemoryStore::set_now`]).
    used_at: u64,
    /// Order of the last use, for LRU eviction.
    used_seq: u64,
}

/// Names of evicted or expired sessions a [`MemoryStore`] remembers, so that
/// reading one of their spills says it expired (the oldest names go first).
pub const REMEMBERED_EXPIRED_SESSIONS: usize = 4096;

/// In-memory store bounded by total and per-session bytes, with LRU session
/// eviction and a TTL sweep against a host-given clock. A spill of a session
/// it evicted or swept is reported as expired (`SPILL_NOT_FOUND`, saying so).
///
/// The LRU order is a use counter per session (`used_seq`), not the `lru`
/// crate: the bound is bytes, not entries, eviction passes over the session
/// being written, and the crate (0.16, with its own `hashbrown`) measured
/// +3,917 bytes of gzip wasm (+8,526 raw) for the few lines it would replace.
///
/// The store has no clock of its own: [`MemoryStore::set_now`] (or
/// [`SpillStore::sweep`]) tells it the time, and every use of a session
/// stamps it with the latest time given.
#[derive(Debug, Default)]
pub struct MemoryStore {
    sessions: BTreeMap<String, SessionBlobs>,
    limits: StoreLimits,
    bytes: usize,
    now: u64,
    seq: u64,
    /// Sessions evicted or swept, oldest first (at most [`REMEMBERED_EXPIRED_SESSIONS`]).
    expired: VecDeque<String>,
    expired_names: BTreeSet<String>,
}

impl MemoryStore {
    /// An empty store with the default [`StoreLimits`].
    pub fn new() -> Self {
        Self::default()
    }

    /// An empty store with the given limits.
    pub fn with_limits(limits: StoreLimits) -> Self {
        Self {
            limits,
            ..Self::default()
        }
    }

    /// The limits in force.
    pub fn limits(&self) -> StoreLimits {
        self.limits
    }

    /// Bytes held across all sessions.
    pub fn total_bytes(&self) -> usize {
        self.bytes
    }

    /// Names of the sessions held, sorted.
    pub fn sessions(&self) -> Vec<String> {
        self.sessions.keys().cloned().collect()
    }

    /// Tells the store the current host time (seconds); it never goes back.
    pub fn set_now(&mut self, now: u64) {
        self.now = self.now.max(now);
    }

    fn touch(&mut self, session: &str) -> Option<&mut SessionBlobs> {
        self.seq += 1;
        let (now, seq) = (self.now, self.seq);
        let s = self.sessions.get_mut(session)?;
        s.used_at = now;
        s.used_seq = seq;
        Some(s)
    }

    fn blob(&mut self, session: &str, key: &str) -> Result<&mut Blob> {
        validate_name("key", key)?;
        let expired = self.expired_names.contains(session);
        self.touch(session)
            .and_then(|s| s.blobs.get_mut(key))
            .ok_or_else(|| {
                if expired {
                    expired_error(key)
                } else {
                    not_found(key)
                }
            })
    }

    fn remove_session(&mut self, session: &str) -> usize {
        let freed = self.sessions.remove(session).map_or(0, |s| s.bytes);
        self.bytes -= freed;
        freed
    }

    /// Removes a session the store's bounds or TTL ended, remembering its name.
    fn expire_session(&mut self, session: &str) -> usize {
        if self.expired_names.insert(session.to_string()) {
            self.expired.push_back(session.to_string());
            while self.expired.len() > REMEMBERED_EXPIRED_SESSIONS {
                if let Some(oldest) = self.expired.pop_front() {
                    self.expired_names.remove(&oldest);
                }
            }
        }
        self.remove_session(session)
    }

    /// Frees room for `needed` more bytes without touching `keep`: expired
    /// sessions first, then least-recently-used ones.
    fn make_room(&mut self, keep: &str, needed: usize) {
        if self.bytes + needed <= self.limits.max_bytes {
            return;
        }
        self.sweep(self.now);
        while self.bytes + needed > self.limits.max_bytes {
            let victim = self
                .sessions
                .iter()
                .filter(|(name, _)| name.as_str() != keep)
                .min_by_key(|(_, s)| s.used_seq)
                .map(|(name, _)| name.clone());
            match victim {
                Some(name) => {
                    self.expire_session(&name);
                }
                None => break,
            }
        }
    }
}

fn not_found(key: &str) -> Error {
    Error::new(
        ErrorCode::SpillNotFound,
        key,
        "no such spill in this session",
    )
}

fn expired_error(key: &str) -> Error {
    Error::new(
        ErrorCode::SpillNotFound,
        key,
        "no such spill in this session: its older spills expired (the store evicted \
         the session to stay within maxBytes, or it was unused for ttlSeconds)",
    )
}

fn refused(key: &str, message: String) -> Error {
    Error::new(ErrorCode::StoreRefused, key, message)
}

/// `1536` → `"1.5 KiB"`, for refusal messages.
pub(crate) fn human_bytes(bytes: usize) -> String {
    const UNITS: [&str; 4] = ["bytes", "KiB", "MiB", "GiB"];
    let mut value = bytes as f64;
    let mut unit = 0;
    while value >= 1024.0 && unit + 1 < UNITS.len() {
        value /= 1024.0;
        unit += 1;
    }
    if unit == 0 {
        format!("{bytes} bytes")
    } else {
        format!("{value:.1} {}", UNITS.get(unit).unwrap_or(&"GiB"))
    }
}

impl MemoryStore {
    /// [`SpillStore::put`]; `hashed` when the caller hashed `key` from `text`.
    fn store(&mut self, session: &str, key: &str, text: &str, hashed: bool) -> Result<()> {
        validate_name("session", session)?;
        validate_name("key", key)?;
        if let Some(existing) = self.touch(session).and_then(|s| s.blobs.get(key)) {
            if existing.text == text {
                return Ok(());
            }
        }
        // A content key names one text: a forged text under it is refused
        // (held texts were checked here, so reads need no check).
        if !hashed {
            crate::hash::key::verify(key, text)?;
        }
        if self.contains(session, key) {
            return Err(refused(
                key,
                "another text is already stored under this key".into(),
            ));
        }
        let held = self.sessions.get(session).map_or(0, |s| s.bytes);
        if held + text.len() > self.limits.max_session_bytes {
            return Err(refused(
                key,
                format!(
                    "the session's spill quota is full ({} held + {} new > {} per session)",
                    human_bytes(held),
                    human_bytes(text.len()),
                    human_bytes(self.limits.max_session_bytes)
                ),
            ));
        }
        if u32::try_from(text.len()).is_err() || text.len() > self.limits.max_bytes {
            return Err(refused(
                key,
                format!(
                    "{} is more than the store holds ({})",
                    human_bytes(text.len()),
                    human_bytes(self.limits.max_bytes)
                ),
            ));
        }
        self.make_room(session, text.len());
        if self.bytes + text.len() > self.limits.max_bytes {
            return Err(refused(
                key,
                format!(
                    "the store is full ({} held by this session, {} in all)",
                    human_bytes(held),
                    human_bytes(self.bytes)
                ),
            ));
        }
        self.seq += 1;
        let (now, seq) = (self.now, self.seq);
        let s = self.sessions.entry(session.to_string()).or_default();
        s.used_at = now;
        s.used_seq = seq;
        s.bytes += text.len();
        s.blobs.insert(
            key.to_string(),
            Blob {
                text: text.to_string(),
                index: None,
                lines: lines::count(text),
            },
        );
        self.bytes += text.len();
        Ok(())
    }
}

impl SpillStore for MemoryStore {
    fn put(&mut self, session: &str, key: &str, text: &str) -> Result<()> {
        self.store(session, key, text, false)
    }

    fn put_hashed(&mut self, session: &str, key: &str, text: &str) -> Result<()> {
        self.store(session, key, text, true)
    }

    fn get(&mut self, session: &str, key: &str) -> Result<String> {
        Ok(self.blob(session, key)?.text.clone())
    }

    fn contains(&self, session: &str, key: &str) -> bool {
        self.sessions
            .get(session)
            .is_some_and(|s| s.blobs.contains_key(key))
    }

    fn read(&mut self, session: &str, key: &str, offset: usize, limit: usize) -> Result<Page> {
        let Blob { text, index, .. } = self.blob(session, key)?;
        Ok(index
            .get_or_insert_with(|| LineIndex::new(text))
            .page(text, offset, limit))
    }

    fn grep(
        &mut self,
        session: &str,
        key: &str,
        pattern: &Pattern,
        options: &GrepOptions,
    ) -> Result<GrepResult> {
        let options = GrepOptions {
            max_cost: options.max_cost.min(self.limits.max_grep_cost),
            ..*options
        };
        let Blob { text, index, .. } = self.blob(session, key)?;
        let index = index.get_or_insert_with(|| LineIndex::new(text));
        grep::grep(text, index, pattern, &options)
    }

    fn list(&self, session: &str) -> Vec<SpillInfo> {
        self.sessions
            .get(session)
            .map(|s| {
                s.blobs
                    .iter()
                    .map(|(k, v)| SpillInfo {
                        key: k.clone(),
                        bytes: v.text.len(),
                        lines: v.lines,
                    })
                    .collect()
            })
            .unwrap_or_default()
    }

    fn session_bytes(&self, session: &str) -> usize {
        self.sessions.get(session).map_or(0, |s| s.bytes)
    }

    fn delete(&mut self, session: &str, key: &str) -> bool {
        let Some(s) = self.sessions.get_mut(session) else {
            return false;
        };
        let Some(blob) = s.blobs.remove(key) else {
            return false;
        };
        s.bytes -= blob.text.len();
        self.bytes -= blob.text.len();
        if s.blobs.is_empty() {
            self.sessions.remove(session);
        }
        true
    }

    fn evict(&mut self, session: &str) -> usize {
        self.remove_session(session)
    }

    fn sweep(&mut self, now: u64) -> usize {
        self.set_now(now);
        if self.limits.ttl_seconds == 0 {
            return 0;
        }
        let expired: Vec<String> = self
            .sessions
            .iter()
            .filter(|(_, s)| s.used_at.saturating_add(self.limits.ttl_seconds) <= self.now)
            .map(|(name, _)| name.clone())
            .collect();
        for name in &expired {
            self.expire_session(name);
        }
        expired.len()
    }
}
