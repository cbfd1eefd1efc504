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
    let a = format!("$ cargo test --workspace{tail}");
    let b = colliding_with(&a, 1, |b| (0x20..0x7f).contains(&b));
    (a, b)
}

/// `text` with its 8-byte blocks `block` and `block + 1` (bytes `8 * block`
/// to `8 * block + 16`) replaced by others, each byte one `allowed` accepts,
/// such that [`text_hash`] (and the length) stay the same: a second text
/// colliding with `text` wherever a test needs the difference. `text` must
/// hold those bytes plus at least one more (the last block is hashed apart).
#[doc(hidden)]
pub fn colliding_with(text: &str, block: usize, allowed: impl Fn(u8) -> bool) -> String {
    const K: u64 = 0x9e37_79b9_7f4a_7c15;
    let step = |h: u64, word: u64| (h.rotate_left(23) ^ word).wrapping_mul(K);
    let word = |i: usize| {
        let mut w = [0u8; 8];
        w.copy_from_slice(text.as_bytes().get(i * 8..i * 8 + 8).unwrap_or(&[0; 8]));
        u64::from_le_bytes(w)
    };
    let h0 = (0..block).fold(K ^ text.len() as u64, |h, i| step(h, word(i)));
    let target = step(step(h0, word(block)), word(block + 1));
    let alphabet: Vec<u8> = (0..=255u8).filter(|b| allowed(*b)).collect();
    let mut seed: u64 = 1;
    loop {
        seed = seed
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        let mut w1 = seed.to_le_bytes();
        for b in &mut w1 {
            *b = alphabet
                .get(usize::from(*b) % alphabet.len().max(1))
                .copied()
                .unwrap_or(b'x');
        }
        let w1 = u64::from_le_bytes(w1);
        // The next block that brings the state back to the target.
        let w2 = target.wrapping_mul(K_INVERSE) ^ step(h0, w1).rotate_left(23);
        if w1 != word(block) && w2.to_le_bytes().iter().all(|b| allowed(*b)) {
            let mut b = text.as_bytes().to_vec();
            if let Some(dst) = b.get_mut(block * 8..block * 8 + 16) {
                let (x, y) = dst.split_at_mut(8);
                x.copy_from_slice(&w1.to_le_bytes());
                y.copy_from_slice(&w2.to_le_bytes());
            }
            return String::from_utf8(b).unwrap_or_default();
        }
    }
}

/// The [`digest128`]s of texts, remembered ([`TextMap`]: found by a fast
/// hash, checked against the text): a key a cache shares between sessions
/// that no chosen text can take, computed once per text. Starts over past
/// 100,000 texts or 32 MiB of text.
#[derive(Debug, Default)]
pub struct Digests(TextMap<u128>);

/// Texts whose digests a [`Digests`] remembers.
const MAX_DIGESTS: usize = 100_000;

/// Bytes of text a [`Digests`] holds to check its hits against.
const MAX_DIGEST_BYTES: usize = 32 << 20;

impl Digests {
    /// The [`digest128`] of `text` alone.
    pub fn of(&mut self, text: &str) -> u128 {
        if let Some(&d) = self.0.get(text) {
            return d;
        }
        let d = digest128(&[text.as_bytes()]);
        self.0.insert(text, d, MAX_DIGESTS, MAX_DIGEST_BYTES);
        d
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
    fn colliding_with_keeps_the_hash_and_the_alphabet() {
        let text = "session-name-of-the-victim|and-more-settings";
        for block in [0, 1, 3] {
            let other = colliding_with(text, block, |b| b.is_ascii_alphanumeric());
            assert_ne!(other, text);
            assert_eq!(other.len(), text.len());
            assert_eq!(text_hash(other.as_bytes()), text_hash(text.as_bytes()));
            let changed = other.get(block * 8..block * 8 + 16).unwrap_or_default();
            assert!(changed.bytes().all(|b| b.is_ascii_alphanumeric()));
            assert_eq!(other.get(block * 8 + 16..), text.get(block * 8 + 16..));
        }
    }

    #[test]
    fn digests_are_remembered_per_text() {
        let (a, b) = colliding_texts(" ok");
        let mut digests = Digests::default();
        assert_eq!(digests.of(&a), digest128(&[a.as_bytes()]));
        assert_eq!(digests.of(&b), digest128(&[b.as_bytes()]), "not a's");
        assert_ne!(digests.of(&a), digests.of(&b));
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
