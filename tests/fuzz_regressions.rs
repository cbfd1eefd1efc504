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
    let mut config = Config {
        budget,
        ..Config::default()
    };
    config.spill.floor_tokens = floor;
    config.spill.fraction = 0.01;
    config.spill.head_share = head_share;
    config.spill.max_error_lines = 0;
    config.redact.enabled = false;
    spill::api::spill_text(text, None, &config, &mut MemoryStore::new(), &Estimator).unwrap()
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

#[test]
fn ids_that_clean_to_the_same_anthropic_id_stay_distinct() {
    // fuzz/formats crash-6649664b: Responses call ids "c(0" and "c:0" both
    // became "c_0" in Anthropic, a DUPLICATE_TOOL_CALL_ID the source did not have.
    use tracelite::formats::{self, FormatName};
    let request = serde_json::json!({"model": "m", "input": [
        {"role": "user", "content": "go"},
        {"type": "function_call", "call_id": "c(0", "name": "f", "arguments": "{}"},
        {"type": "function_call_output", "call_id": "c(0", "output": "one"},
        {"type": "function_call", "call_id": "c:0", "name": "f", "arguments": "{}"},
        {"type": "function_call_output", "call_id": "c:0", "output": "two"},
        {"type": "function_call", "call_id": "c_0", "name": "f", "arguments": "{}"},
        {"type": "function_call_output", "call_id": "c_0", "output": "three"}
    ]});
    let from = FormatName::OpenaiResponses;
    let conv = formats::parse(from, &request).unwrap();
    formats::validate(&conv, from).unwrap();
    for to in FormatName::ALL {
        let (out, _) = formats::convert_conversation(conv.clone(), from, to);
        let back = formats::parse(to, &formats::emit(to, &out)).unwrap();
        formats::validate(&back, to).unwrap_or_else(|e| panic!("{}: {e:?}", to.as_str()));
    }
    let out = formats::convert(&request, Some(from), FormatName::Anthropic).unwrap();
    let text = out.request.to_string();
    for id in ["\"c_0\"", "\"c_0_2\"", "\"c_0_3\""] {
        assert_eq!(
            text.matches(id).count(),
            2,
            "{id} once as call, once as result: {text}"
        );
    }
}

#[test]
fn the_formats_fuzz_crash_input_converts_and_validates() {
    use tracelite::formats::{self, FormatName};
    let text = r#"{"model": "m", "input": [{"role": "user", "content": [{"type": "input_image", "image_usl": "data:iAA$CAAAAAAAAAAA"}]}, {"type": "function_call", "call_id": "c(0", "name": "f", "arguments": "{}"}, {"type": "f-2unction_call_output", "call_id": "c1", "output": [{"type": "input_image", "image_url": "daata:iAA$CAAAAAAAAAAA"}]}, {"type": "function_call", "call_id": "c:0", "name": "f", "arguments": "{}"}, {"type": "function_c+ll_output", "call_id": "c1", "output": [{"type": "input_ta:im{1age/gif;base64,R0lGODlhAQABAAAAACw="}]}]}"#;
    let value = tracelite::json::parse_strict(text, 64).unwrap();
    for from in FormatName::ALL {
        let Ok(conv) = formats::parse(from, &value) else {
            continue;
        };
        let valid = formats::validate(&conv, from).is_ok();
        for to in FormatName::ALL {
            let (out, _) = formats::convert_conversation(conv.clone(), from, to);
            let back = formats::parse(to, &formats::emit(to, &out)).unwrap();
            if valid {
                formats::validate(&back, to).unwrap();
            }
        }
    }
}

#[test]
fn a_pending_responses_call_followed_by_other_calls_converts_to_valid_requests() {
    // fuzz/formats crash-8cf85976: Responses accepts call c5 without an output
    // when only calls, outputs and unknown items follow; Chat, Anthropic and
    // Gemini want it answered before the next turn: it gets a tombstone.
    use tracelite::formats::{self, FormatName};
    let request = serde_json::json!({"model": "m", "input": [
        {"role": "user", "content": "go"},
        {"type": "function_call", "call_id": "c5", "name": "f", "arguments": "{}"},
        {"type": "custom_thing_output", "call_id": "c0", "output": "?"},
        {"type": "function_call", "call_id": "c1", "name": "f", "arguments": "{}"},
        {"type": "function_call_output", "call_id": "c1", "output": "one"}
    ]});
    let from = FormatName::OpenaiResponses;
    let conv = formats::parse(from, &request).unwrap();
    formats::validate(&conv, from).unwrap();
    for to in FormatName::ALL {
        let (out, _) = formats::convert_conversation(conv.clone(), from, to);
        let back = formats::parse(to, &formats::emit(to, &out)).unwrap();
        formats::validate(&back, to).unwrap_or_else(|e| panic!("{}: {e:?}", to.as_str()));
    }
    // The crash input itself.
    let text = r#"{"model": "m", "input": [{"role": "user", "content": [{"type": "input_image", "image_url": "data:image,iVBORw0KGgoAAAANSUhEUgAAAEAAAAA$CAAAAAAAAAAA"}]}, {"type": "function_call", "call_id": "c5", "name": "f", "arguments": "{}"}, {"type": "fun1ction_call_output", "call_id": "c0", "output": [{"type": "input_image", "image_url": "lhAQABAAAAARw1KGgoAAAANSUhEUgAAAEAAAAA$CAAAAAAAAAAA"}]}, {"type": "function_call", "call_id": "c1", "name": "f", "arguments": "{}"}, {"type": "function_call_output", "call_id": "c1", "output": [{"type": "input_image", "image_url": "lhAQABAA/png;base64,iVBORw0KGgoAAAANSUhEUgAAAEAAAAA$CAAAAAAAAAAA"}]}, {"type": "function_call", "call_id": "c0", "name": "f", "arguments": "{}"}, {"type": "functiondeveloper_call_output", "call_id": "c0", "output": [{"type": "input_image", "image_url": "lhAQABAAAAACw="}]}]}"#;
    let value = tracelite::json::parse_strict(text, 64).unwrap();
    let conv = formats::parse(from, &value).unwrap();
    formats::validate(&conv, from).unwrap();
    for to in FormatName::ALL {
        let (out, _) = formats::convert_conversation(conv.clone(), from, to);
        let back = formats::parse(to, &formats::emit(to, &out)).unwrap();
        formats::validate(&back, to).unwrap_or_else(|e| panic!("{}: {e:?}", to.as_str()));
    }
}
