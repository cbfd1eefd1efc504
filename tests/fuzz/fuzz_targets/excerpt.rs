//! Spill excerpts of any text at any cap: never panics, the excerpt fits the
//! cap (or the 64-token floor plus its frame), always shows the last line,
//! accounts for every line and byte, and the full text stays readable.
#![no_main]

use libfuzzer_sys::fuzz_target;
use tracelite::spill::{self, MemoryStore, SpillStore};
use tracelite::tokens::{Estimator, TokenCounter};
use tracelite::Config;

fuzz_target!(|data: &[u8]| {
    let Some((head, rest)) = data.split_first_chunk::<4>() else {
        return;
    };
    let text = String::from_utf8_lossy(rest);
    let mut config = Config::default();
    config.budget = 1 + u64::from(u16::from_le_bytes([head[0], head[1]]));
    config.spill.floor_tokens = u64::from(head[2]) * 4;
    config.spill.fraction = 0.01;
    config.spill.head_share = f64::from(head[3] % 101) / 100.0;
    config.spill.max_error_lines = usize::from(head[3] >> 5);
    config.redact.enabled = false;
    let cap = config.result_cap();
    let mut store = MemoryStore::new();
    let out =
        spill::api::spill_text(&text, None, &config, &mut store, &Estimator).expect("spill_text");
    let again = spill::api::spill_text(&text, None, &config, &mut MemoryStore::new(), &Estimator)
        .expect("spill_text again");
    assert_eq!(out, again, "excerpts are deterministic");
    if !out.spilled {
        assert_eq!(out.text, text);
        return;
    }
    let tokens = Estimator.count(&out.text).expect("count");
    assert_eq!(tokens, out.tokens_after);
    assert!(
        out.tokens_after < out.tokens_before,
        "an excerpt is cheaper than its text"
    );
    // Header + pointer + gap marker + error listing are the metadata; lines get
    // at least 64 tokens of room (see `Excerpt::build`).
    let meta = 300 + 60 * config.spill.max_error_lines as u64;
    assert!(
        tokens <= cap.max(64 + meta),
        "excerpt of {tokens} tokens over cap {cap}"
    );
    let pointer = out.pointer.as_deref().expect("kept in the store");
    let (session, key) = spill::parse_pointer(pointer);
    assert_eq!(
        store.get(session.expect("session"), key).expect("readable"),
        text
    );
    // The last line (or its end) is always shown.
    let last = text.lines().last().unwrap_or("").trim_end();
    if let Some(c) = last.chars().last() {
        if !c.is_control() && c != '\u{FFFD}' {
            assert!(out.text.contains(c), "last line shown");
        }
    }
});
