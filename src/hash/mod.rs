//! Hashes (base layer): 64-bit FNV-1a, fingerprints that compaction records
//! compare (the JS side names unnamed proxy sessions with the same function,
//! `fnv1a` in wasm); [`text_hash`], where the caches look a text up; and the
//! SHA-256 content keys of spills and snapshot URLs ([`key`]).
//!
//! Caches shared by every session of a [`crate::HostState`] cannot trust a
//! 64-bit hash (a chosen text collides with another session's in a few
//! thousand tries): [`TextMap`] finds an entry by a fast hash and checks the
//! text itself on a hit, and [`digest128`] keys what is found by a hash alone.

use std::collections::HashMap;

pub mod key;

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
    (text_hash(text.as_bytes()), text.len())
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

/// A fast 64-bit hash of `bytes`, 8 bytes at a time: where a cache finds an
/// entry, never what proves it is the right one ([`crate::hash::TextMap`]
/// checks the text; a chosen text collides in a few thousand tries).
pub fn text_hash(bytes: &[u8]) -> u64 {
    const K: u64 = 0x9e37_79b9_7f4a_7c15;
    let mut h = K ^ bytes.len() as u64;
    let mut chunks = bytes.chunks_exact(8);
    for c in &mut chunks {
        let word = u64::from_le_bytes(c.try_into().unwrap_or([0; 8]));
        h = (h.rotate_left(23) ^ word).wrapping_mul(K);
    }
    let mut last = [0u8; 8];
    for (d, s) in last.iter_mut().zip(chunks.remainder()) {
        *d = *s;
    }
    h = (h.rotate_left(23) ^ u64::from_le_bytes(last)).wrapping_mul(K);
    h ^= h >> 29;
    h = h.wrapping_mul(0xbf58_476d_1ce4_e5b9);
    h ^ (h >> 32)
}

/// The inverse of `text_hash`'s odd multiplier modulo 2^64.
const K_INVERSE: u64 = {
    // Newton's iteration: each step doubles the correct low bits.
    let k: u64 = 0x9e37_79b9_7f4a_7c15;
    let mut x = k;
    let mut i = 0;
    while i < 6 {
        x = x.wrapping_mul(2u64.wrapping_sub(k.wrapping_mul(x)));
        i += 1;
    }
    x
};

/// Two different texts of the same length and [`text_hash`]: `tail` after
/// a 24-byte head, and the same with bytes 8 to 24 of the head chosen so the
/// hash's state after them is the first one's again (it is invertible block
/// by block), in printable ASCII. For the tests of the caches that must not
/// trust the hash.
#[doc(hidden)]
pub fn colliding_texts(tail: &str) -> (String, String) {
    const K: u64 = 0x9e37_79b9_7f4a_7c15;
    let a = format!("$ cargo test --workspace{tail}");
    let step = |h: u64, word: u64| (h.rotate_left(23) ^ word).wrapping_mul(K);
    let word = |s: &str, i: usize| {
        let mut w = [0u8; 8];
        w.copy_from_slice(s.as_bytes().get(i * 8..i * 8 + 8).unwrap_or(&[0; 8]));
        u64::from_le_bytes(w)
    };
    let h0 = step(K ^ a.len() as u64, word(&a, 0));
    let target = step(step(h0, word(&a, 1)), word(&a, 2));
    let printable = |w: u64| w.to_le_bytes().iter().all(|b| (0x20..0x7f).contains(b));
    let mut seed: u64 = 1;
    loop {
        seed = seed
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        let mut w1 = seed.to_le_bytes();
        for b in &mut w1 {
            *b = 0x20 + *b % 0x5f;
        }
        let w1 = u64::from_le_bytes(w1);
        // The block 2 that brings the state back to the target.
        let w2 = target.wrapping_mul(K_INVERSE) ^ step(h0, w1).rotate_left(23);
        if w1 != word(&a, 1) && printable(w2) {
            let mut b = a.as_bytes().to_vec();
            if let Some(dst) = b.get_mut(8..24) {
                let (x, y) = dst.split_at_mut(8);
                x.copy_from_slice(&w1.to_le_bytes());
                y.copy_from_slice(&w2.to_le_bytes());
            }
            return (a, String::from_utf8(b).unwrap_or_default());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_text_map_checks_the_text_on_a_hit() {
        let (a, b) = colliding_texts(" ok");
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
