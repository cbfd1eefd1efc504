//! Inputs found by the cargo-fuzz targets in `tests/fuzz/` that once broke an
//! invariant, replayed as ordinary tests.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)]

use tracelite::spill::{self, ErrorSignals, Excerpt, Kept, MemoryStore};
use tracelite::tokens::estimate;
use tracelite::tokens::Estimator;
use tracelite::Config;

fn spill_with(text: &str, budget: u64, floor: u64, head_share: f64) -> spill::Spilled {
    let mut config = Config::default();
    config.budget = budget;
    config.spill.floor_tokens = floor;
    config.spill.fraction = 0.01;
    config.spill.head_share = head_share;
    config.spill.max_error_lines = 0;
    config.redact.enabled = false;
    spill::spill_text(text, &config, &mut MemoryStore::new(), &Estimator).unwrap()
}

#[test]
fn a_text_whose_excerpt_would_cost_more_stays_as_it_is() {
    // fuzz/excerpt crash-bdde96b7: cap 0, text "\x063" (3 tokens); the excerpt
    // header alone costs ~70 tokens, and the line itself was not shown.
    let out = spill_with("\u{6}3", 49, 0, 0.0);
    assert!(!out.spilled);
    assert_eq!(out.text, "\u{6}3");
    assert_eq!(out.tokens_after, out.tokens_before);
}

#[test]
fn a_single_line_that_fits_the_tail_is_shown_whole() {
    // Same input through `Excerpt::build`: the line sat in `end` with nothing
    // hidden and was rendered as an empty line.
    let signals = ErrorSignals::new(&[], 0).unwrap();
    let kept = Kept::Pointer("spill://s/k".into());
    let (excerpt, rendered) =
        Excerpt::build("\u{6}3", 0, 0.0, &signals, &|s| Ok(estimate(s)), &kept).unwrap();
    assert_eq!(excerpt.tail.len(), 1);
    assert!(rendered.ends_with("\n\u{6}3"), "{rendered:?}");
}
