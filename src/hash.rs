//! 64-bit FNV-1a, the core's one non-cryptographic hash: fingerprints that caches
//! and compaction records compare (spill keys are SHA-256, [`crate::spill::key`]).
//! The JS side names unnamed proxy sessions with the same function (`fnv1a` in wasm).

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

#[cfg(test)]
mod tests {
    use super::*;

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
