//! Redaction never panics, never splits a character, and is idempotent.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    let (once, _) = tracelite::redact::redact(text);
    let (twice, found) = tracelite::redact::redact(&once);
    assert_eq!(once, twice, "redaction is idempotent");
    assert_eq!(found.count, 0);
});
