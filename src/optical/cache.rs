//! The render cache: snapshots by content hash, bounded by bytes, kept in the
//! session state so re-rendering the same history costs nothing.

use std::collections::{HashMap, VecDeque};

use super::{Outcome, Snapshot};

/// The optical stage's state across calls ([`crate::stage::Stage::State`]).
#[derive(Debug, Default)]
pub struct OpticalState {
    /// Optical snapshots rendered so far, by content hash.
    pub snapshots: SnapshotCache,
    /// The stage's proposals for texts already weighed.
    pub proposals: ProposalCache,
}

/// Snapshots by [`super::cache_key`], evicted oldest-first past a byte bound.
/// The cache only saves work: outputs never depend on what it holds.
#[derive(Debug, Default)]
pub struct SnapshotCache {
    entries: HashMap<u128, Snapshot>,
    order: VecDeque<u128>,
    bytes: usize,
    /// Lookups that found an entry.
    pub hits: u64,
    /// Lookups that did not.
    pub misses: u64,
    /// Snapshots rendered into this cache (images drawn and encoded), not imported.
    pub rendered: u64,
    /// Keys inserted since the last [`SnapshotCache::take_fresh`]; `None` until
    /// the first call (nothing is logged for a host that never exports).
    fresh: Option<Vec<u128>>,
    /// [`SnapshotCache::text_digest`]s of texts weighed before.
    digests: crate::hash::Digests,
}

/// Most insertions logged between two exports.
const MAX_LOGGED: usize = 100_000;

fn size(s: &Snapshot) -> usize {
    256 + s.images.iter().map(|i| i.data.len()).sum::<usize>()
}

impl SnapshotCache {
    /// The first 128 bits of the SHA-256 of `text` ([`crate::hash::digest128`]),
    /// remembered: a text fitted but not rendered is weighed again every turn.
    pub fn text_digest(&mut self, text: &str) -> u128 {
        self.digests.of(text)
    }

    /// The snapshot cached under `key`.
    pub fn get(&mut self, key: u128) -> Option<&Snapshot> {
        let found = self.entries.get(&key);
        if found.is_some() {
            self.hits += 1;
        } else {
            self.misses += 1;
        }
        found
    }

    /// Caches `snapshot` under `key` (replacing an earlier entry), then evicts
    /// the oldest entries until at most `limit` bytes are held.
    pub fn insert(&mut self, key: u128, snapshot: Snapshot, limit: usize) {
        if !snapshot.images.is_empty() {
            self.rendered += 1;
        }
        if let Some(fresh) = &mut self.fresh {
            // A host that stopped exporting: the log starts over, bounded.
            if fresh.len() >= MAX_LOGGED {
                fresh.clear();
            }
            fresh.push(key);
        }
        self.hold(key, snapshot, limit);
    }

    /// Adds a snapshot another host rendered (not logged as fresh, not
    /// counted as rendered), unless one is held under `key` already.
    pub fn import(&mut self, key: u128, snapshot: Snapshot, limit: usize) -> bool {
        let held = self.entries.get(&key).is_some_and(|s| !s.images.is_empty());
        if held || (self.entries.contains_key(&key) && snapshot.images.is_empty()) {
            return false;
        }
        self.hold(key, snapshot, limit);
        self.entries.contains_key(&key)
    }

    /// The keys [`SnapshotCache::take_fresh`] looks at: those logged since
    /// the last call or, before the first call or with `all`, every key held
    /// (oldest first, each once).
    fn pending(&self, all: bool) -> impl Iterator<Item = u128> + '_ {
        let (logged, held) = match &self.fresh {
            Some(keys) if !all => (keys.as_slice(), None),
            _ => (&[][..], Some(&self.order)),
        };
        logged.iter().chain(held.into_iter().flatten()).copied()
    }

    /// The snapshots inserted since the last call that are still held, in
    /// insertion order; on the first call, or with `all`, every snapshot held
    /// (oldest first). From the first call on, insertions are logged.
    pub fn take_fresh(&mut self, all: bool) -> Vec<(u128, &Snapshot)> {
        let mut keys: Vec<u128> = self.pending(all).collect();
        self.fresh = Some(Vec::new());
        // Each key once, where it was last inserted.
        let mut seen = std::collections::HashSet::new();
        keys.reverse();
        keys.retain(|k| seen.insert(*k));
        keys.reverse();
        keys.into_iter()
            .filter_map(|k| self.entries.get(&k).map(|s| (k, s)))
            .collect()
    }

    /// Whether [`SnapshotCache::take_fresh`] would give a rendered snapshot.
    pub fn has_fresh_render(&self, all: bool) -> bool {
        self.pending(all)
            .any(|k| self.entries.get(&k).is_some_and(|s| !s.images.is_empty()))
    }

    fn hold(&mut self, key: u128, snapshot: Snapshot, limit: usize) {
        let added = size(&snapshot);
        if let Some(old) = self.entries.insert(key, snapshot) {
            self.bytes -= size(&old);
        } else {
            self.order.push_back(key);
        }
        self.bytes += added;
        while self.bytes > limit {
            let Some(oldest) = self.order.pop_front() else {
                break;
            };
            if let Some(old) = self.entries.remove(&oldest) {
                self.bytes -= size(&old);
            }
        }
    }

    /// Number of cached snapshots.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// Whether the cache is empty.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// Bytes held (image payloads plus a fixed overhead per entry).
    pub fn bytes(&self) -> usize {
        self.bytes
    }
}

/// What the optical stage proposed for a text it weighed before: the
/// snapshot's cache key and figures, or why it keeps the text.
#[derive(Debug, Clone)]
pub(super) struct Proposed {
    pub key: u128,
    pub line: String,
    pub before: u64,
    pub after: u64,
    pub count: usize,
}

/// Proposals by the settings they depend on and the text (found by its hash
/// and length, checked against the text itself), so an observation is
/// weighed once, not on every turn: a cache only (the images come from the
/// [`SnapshotCache`], else the text is weighed again). Starts over past
/// 100,000 entries or 32 MiB of text.
#[derive(Debug, Default)]
pub struct ProposalCache {
    entries: HashMap<ProposalId, (Box<str>, Result<Proposed, Outcome>)>,
    bytes: usize,
    /// Observations weighed (not found in the cache).
    pub computed: u64,
}

/// Where a [`ProposalCache`] looks a text up: the settings' digest, the
/// text's fast hash and its length (the text is checked on a hit).
type ProposalId = (u128, u64, usize);

/// Bytes of weighed text a [`ProposalCache`] holds to check its hits against.
const MAX_PROPOSAL_BYTES: usize = 32 << 20;

impl ProposalCache {
    pub(super) fn get(&self, id: &ProposalId, text: &str) -> Option<Result<Proposed, Outcome>> {
        self.entries
            .get(id)
            .filter(|(held, _)| **held == *text)
            .map(|(_, p)| p.clone())
    }

    pub(super) fn insert(
        &mut self,
        id: ProposalId,
        text: &str,
        proposed: Result<Proposed, Outcome>,
    ) {
        if self.entries.len() >= 100_000 || self.bytes + text.len() > MAX_PROPOSAL_BYTES {
            self.entries.clear();
            self.bytes = 0;
        }
        if let Some((old, _)) = self.entries.insert(id, (text.into(), proposed)) {
            self.bytes -= old.len();
        }
        self.bytes += text.len();
    }
}

/// A digest of what a proposal depends on besides the text (the first 128
/// bits of a SHA-256: no chosen session name takes another's proposals, whose
/// lines hold its pointers): the image pricing and layout, the pointer's
/// session and the redaction switch.
pub(super) fn settings(config: &crate::config::Config) -> u128 {
    let pricing = format!(
        "{:?}|{:?}|{}",
        config.provider, config.optical, config.redact.enabled
    );
    crate::hash::digest128(&[pricing.as_bytes(), config.session.as_bytes()])
}
