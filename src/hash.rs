//! 64-bit FNV-1a, the core's one non-cryptographic hash: fingerprints that
//! compaction records compare (spill keys are SHA-256, [`crate::spill::key`]).
//! The JS side names unnamed proxy sessions with the same function (`fnv1a` in wasm).
//!
//! Caches shared by every session of a [`crate::HostState`] cannot trust a
//! 64-bit hash (a chosen text collides with another session's in a few
//! thousand tries): [`TextMap`] finds an entry by a fast hash and checks the
//! text itself on a hit, and [`digest128`] keys what is found by a hash alone.

use std::collections::HashMap;

/// 64-bit FNV-1a, fed incrementally; `.0` is the hash so far.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Fnv1a(pub u64);

impl Default for Fnv1a {
    fn default() -> Self {
        Self(0xcbf2_9ce4_8422_2325)
    }
}

impl Fnv1a {
    /// Feeds bytes.
    pub fn write(&mut self, bytes: &[u8]) {
        for b in bytes {
            self.0 ^= u64::from(*b);
            self.0 = self.0.wrapping_mul(0x0100_0000_01b3);
        }
    }

    /// The hash of `bytes`.
    pub fn of(bytes: &[u8]) -> u64 {
        let mut h = Self::default();
        h.write(bytes);
        h.0
    }
}

/// The hash of a text as 16 lowercase hex digits.
pub fn fnv1a_hex(text: &str) -> String {
    format!("{:016x}", Fnv1a::of(text.as_bytes()))
}

/// The first 128 bits of the SHA-256 of `parts`, each prefixed by its length
/// (so `["ab", "c"]` and `["a", "bc"]` differ): a key no chosen text can share
/// with another (a collision costs about 2^64 hashes).
pub fn digest128(parts: &[&[u8]]) -> u128 {
    use sha2::Digest;
    let mut h = sha2::Sha256::new();
    for p in parts {
        h.update((p.len() as u64).to_le_bytes());
        h.update(p);
    }
    let d: [u8; 32] = h.finalize().into();
    let mut first = [0u8; 16];
    first.copy_from_slice(d.get(..16).unwrap_or(&[0; 16]));
    u128::from_be_bytes(first)
}

/// Values by text, found by the text's fast hash and length and checked
/// against the text itself: a text that collides with another under the hash
/// misses (and takes the slot), never reads the other's value. Bounded by
/// the entries and the bytes of text it holds: past either it starts over.
#[derive(Debug)]
pub struct TextMap<V> {
    entries: HashMap<(u64, usize), (Box<str>, V)>,
    bytes: usize,
}

impl<V> Default for TextMap<V> {
    fn default() -> Self {
        Self {
            entries: HashMap::new(),
            bytes: 0,
        }
    }
}

/// The key of `text` in a [`TextMap`].
fn slot(text: &str) -> (u64, usize) {
    (crate::tokens::text_hash(text.as_bytes()), text.len())
}

impl<V> TextMap<V> {
    /// The value held for exactly `text`.
    pub fn get(&self, text: &str) -> Option<&V> {
        self.entries
            .get(&slot(text))
            .filter(|(held, _)| **held == *text)
            .map(|(_, v)| v)
    }

    /// Holds `value` for `text` (replacing what its slot held), unless `text`
    /// alone is over `max_bytes`; starts over first when the map would hold
    /// more than `max_entries` entries or `max_bytes` bytes of text.
    pub fn insert(&mut self, text: &str, value: V, max_entries: usize, max_bytes: usize) {
        if text.len() > max_bytes {
            return;
        }
        if self.entries.len() >= max_entries || self.bytes + text.len() > max_bytes {
            self.clear();
        }
        if let Some((old, _)) = self.entries.insert(slot(text), (text.into(), value)) {
            self.bytes -= old.len();
        }
        self.bytes += text.len();
    }

    /// Forgets every entry.
    pub fn clear(&mut self) {
        self.entries.clear();
        self.bytes = 0;
    }

    /// Number of entries.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// Whether no entry is held.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// Every entry: the text and its value (in no particular order).
    pub fn iter(&self) -> impl Iterator<Item = (&str, &V)> {
        self.entries.values().map(|(t, v)| (&**t, v))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_text_map_checks_the_text_on_a_hit() {
        let (a, b) = crate::tokens::colliding_texts(" ok");
        assert_ne!(a, b);
        assert_eq!(slot(&a), slot(&b));
        let mut map = TextMap::default();
        map.insert(&a, 1, 10, 1 << 20);
        assert_eq!(map.get(&a), Some(&1));
        assert_eq!(map.get(&b), None, "a colliding text must miss");
        map.insert(&b, 2, 10, 1 << 20);
        assert_eq!((map.get(&a), map.get(&b)), (None, Some(&2)));
        // Bounded by entries and bytes.
        map.insert("x", 3, 2, 1 << 20);
        map.insert("y", 4, 2, 1 << 20);
        assert_eq!((map.len(), map.get("y")), (1, Some(&4)));
        map.insert(&"z".repeat(64), 5, 10, 63);
        assert_eq!(map.get(&"z".repeat(64)), None);
    }

    #[test]
    fn digest128_is_sha256_and_separates_parts() {
        assert_ne!(digest128(&[b"ab", b"c"]), digest128(&[b"a", b"bc"]));
        assert_eq!(digest128(&[b"abc"]), digest128(&[b"abc"]));
        assert_eq!(
            digest128(&[]),
            0xe3b0_c442_98fc_1c14_9afb_f4c8_996f_b924,
            "no parts: the SHA-256 of nothing"
        );
    }

    #[test]
    fn matches_the_published_test_vectors() {
        assert_eq!(Fnv1a::of(b""), 0xcbf2_9ce4_8422_2325);
        assert_eq!(Fnv1a::of(b"a"), 0xaf63_dc4c_8601_ec8c);
        assert_eq!(fnv1a_hex("foobar"), "85944171f73967e8");
        let mut h = Fnv1a::default();
        h.write(b"foo");
        h.write(b"bar");
        assert_eq!(h.0, Fnv1a::of(b"foobar"));
    }
}
