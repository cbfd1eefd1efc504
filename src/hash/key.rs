//! Spill keys: `<kind>-<32 hex digits>`, the first 128 bits of the SHA-256
//! of the text (FIPS 180-4, by the `sha2` crate).
//!
//! A key names exactly one text: finding another text with a given key is a
//! second preimage of SHA-256 (no known attack below 2^128 work), so a text
//! an attacker chose cannot take a victim's key. Stores refuse a different
//! text under an existing key and check a content key against its text
//! ([`verify`]) when it comes back from outside wasm.

use crate::error::{Error, ErrorCode, Result};

/// Hex digits of the hash in a key (128 bits).
pub const KEY_HASH_HEX: usize = 32;

/// SHA-256 of `bytes` (the maintained `sha2` crate).
pub fn sha256(bytes: &[u8]) -> [u8; 32] {
    use sha2::Digest;
    sha2::Sha256::digest(bytes).into()
}

/// The key of `text`: `<kind>-` and the first 128 bits of its SHA-256 in
/// lowercase hex (e.g. `tool-9f86d081884c7d659a2feaa0c55ad015`).
pub fn content_key(kind: &str, text: &str) -> String {
    let mut key = String::with_capacity(kind.len() + 1 + KEY_HASH_HEX);
    key.push_str(kind);
    key.push('-');
    push_hash(&mut key, text);
    key
}

/// The hash part of a content key of `text`: the first 128 bits of its
/// SHA-256 in lowercase hex.
pub fn content_hash(text: &str) -> String {
    let mut hash = String::with_capacity(KEY_HASH_HEX);
    push_hash(&mut hash, text);
    hash
}

fn push_hash(out: &mut String, text: &str) {
    let hash = sha256(text.as_bytes());
    for b in hash.iter().take(KEY_HASH_HEX / 2) {
        for nibble in [b >> 4, b & 15] {
            out.push(char::from_digit(u32::from(nibble), 16).unwrap_or('0'));
        }
    }
}

/// Content keys of texts hashed before, found by a fast 64-bit hash and
/// length and checked against the text itself ([`crate::hash::TextMap`]): a
/// session re-keys the same excerpts and snapshots every turn, and no chosen
/// text gets another's key. Starts over past 50,000 entries or 32 MiB of text.
///
/// A stage often names a text's pointer before it keeps the text: the texts
/// hashed during one call are held (up to 16 MiB) until it ends
/// ([`end_call`](Self::end_call)), so that a put of one of them is checked by
/// comparing bytes ([`vouches`](Self::vouches)) rather than by hashing it again.
#[derive(Debug, Default)]
pub struct KeyCache {
    keys: std::collections::HashMap<String, crate::hash::TextMap<String>>,
    hashed: std::collections::HashMap<String, String>,
    hashed_bytes: usize,
}

/// Bytes of the texts hashed during one call that a [`KeyCache`] holds.
const MAX_HASHED_BYTES: usize = 16 << 20;

/// Keys a [`KeyCache`] holds per kind.
const MAX_KEYS: usize = 50_000;

/// Bytes of keyed text a [`KeyCache`] holds per kind, to check its hits against.
const MAX_KEYED_BYTES: usize = 32 << 20;

impl KeyCache {
    /// [`content_key`], remembered.
    pub fn key(&mut self, kind: &str, text: &str) -> String {
        self.key_hashed(kind, text).0
    }

    /// [`key`](Self::key), and whether it was just hashed from `text` (not
    /// found under its fast hash): such a key needs no [`verify`] before a put.
    pub fn key_hashed(&mut self, kind: &str, text: &str) -> (String, bool) {
        if let Some(key) = self.keys.get(kind).and_then(|k| k.get(text)) {
            return (key.clone(), false);
        }
        let key = content_key(kind, text);
        self.keys.entry(kind.to_string()).or_default().insert(
            text,
            key.clone(),
            MAX_KEYS,
            MAX_KEYED_BYTES,
        );
        if self.hashed_bytes + text.len() <= MAX_HASHED_BYTES {
            self.hashed_bytes += text.len();
            self.hashed.insert(key.clone(), text.to_string());
        }
        (key, true)
    }

    /// Whether `key` was hashed from exactly `text` during this call (so a
    /// put needs no [`verify`]).
    pub fn vouches(&self, key: &str, text: &str) -> bool {
        self.hashed.get(key).is_some_and(|t| t == text)
    }

    /// Forgets the texts held for [`vouches`](Self::vouches): a call ends.
    pub fn end_call(&mut self) {
        self.hashed = std::collections::HashMap::new();
        self.hashed_bytes = 0;
    }
}

/// The kind of a content key (`tool` of `tool-<32 hex>`), or `None` when
/// `key` is not shaped like one (a name the host chose).
pub fn content_kind(key: &str) -> Option<&str> {
    let (kind, hash) = key.rsplit_once('-')?;
    let shaped = !kind.is_empty()
        && kind.bytes().all(|b| b.is_ascii_lowercase() || b == b'-')
        && hash.len() == KEY_HASH_HEX
        && hash
            .bytes()
            .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b));
    shaped.then_some(kind)
}

/// Checks that a content key names `text`: `SPILL_CORRUPT` when `key` is
/// shaped like a content key ([`content_kind`]) but `text` hashes to another
/// one. Keys the host named otherwise are not checked.
pub fn verify(key: &str, text: &str) -> Result<()> {
    match content_kind(key) {
        Some(kind) if content_key(kind, text) != key => Err(Error::new(
            ErrorCode::SpillCorrupt,
            key,
            "the text does not hash to its key (altered or forged)",
        )),
        _ => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hex(bytes: &[u8]) -> String {
        bytes.iter().map(|b| format!("{b:02x}")).collect()
    }

    #[test]
    fn sha256_matches_the_fips_vectors() {
        assert_eq!(
            hex(&sha256(b"")),
            "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
        );
        assert_eq!(
            hex(&sha256(b"abc")),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
        assert_eq!(
            hex(&sha256(
                b"abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"
            )),
            "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1"
        );
        assert_eq!(
            hex(&sha256(&[b'a'; 1_000_000])),
            "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0"
        );
        // Lengths around the padding boundary (55, 56, 63, 64 bytes).
        assert_eq!(
            hex(&sha256(&[b'a'; 55])),
            "9f4390f8d30c2dd92ec9f095b65e2b9ae9b0a925a5258e241c9f1e910f734318"
        );
        assert_eq!(
            hex(&sha256(&[b'a'; 56])),
            "b35439a4ac6f0948b6d6f9e3c6af0f5f590ce20f1bde7090ef7970686ec6738a"
        );
        assert_eq!(
            hex(&sha256(&[b'a'; 64])),
            "ffe054fe7ae0cb6dc65c3af9b61d5209f439851db43d0ba5997337df154668eb"
        );
    }

    #[test]
    fn keys_are_typed_and_checked() {
        let k = content_key("tool", "hello");
        assert_eq!(k, "tool-2cf24dba5fb0a30e26e83b2ac5b9e29e");
        assert_eq!(content_kind(&k), Some("tool"));
        assert_eq!(
            content_kind("compact-index-2cf24dba5fb0a30e26e83b2ac5b9e29e"),
            Some("compact-index")
        );
        assert_eq!(content_kind("k"), None);
        assert_eq!(content_kind("tool-2CF24DBA5FB0A30E26E83B2AC5B9E29E"), None);
        assert!(verify(&k, "hello").is_ok());
        assert_eq!(
            verify(&k, "hello!").unwrap_err().code,
            ErrorCode::SpillCorrupt
        );
        assert!(verify("my-key", "anything").is_ok());
    }

    #[test]
    fn a_text_hashed_during_the_call_is_vouched_for_until_it_ends() {
        let mut keys = KeyCache::default();
        let (k, _) = keys.key_hashed("tool", "hello");
        assert!(keys.vouches(&k, "hello"));
        assert!(!keys.vouches(&k, "hellO"));
        assert!(!keys.vouches(&content_key("tool", "x"), "x"));
        keys.end_call();
        assert!(!keys.vouches(&k, "hello"));
        // The key is still cached, but the next call has not hashed it.
        assert_eq!(keys.key_hashed("tool", "hello"), (k.clone(), false));
        assert!(!keys.vouches(&k, "hello"));
        // A text past the byte budget is not held.
        let big = "y".repeat(MAX_HASHED_BYTES + 1);
        let (kb, fresh) = keys.key_hashed("tool", &big);
        assert!(fresh && !keys.vouches(&kb, &big));
    }

    #[test]
    fn a_key_is_hashed_once_and_says_so() {
        let mut keys = KeyCache::default();
        let first = keys.key_hashed("tool", "hello");
        assert_eq!(first, (content_key("tool", "hello"), true));
        assert_eq!(keys.key_hashed("tool", "hello"), (first.0.clone(), false));
        assert_eq!(keys.key("tool", "hello"), first.0);
        // Another kind of the same text is hashed again.
        assert_eq!(
            keys.key_hashed("phase", "hello"),
            (content_key("phase", "hello"), true)
        );
    }
}
