//! Spill reader search and paging with any pattern, text and offsets:
//! a bad pattern is a typed `INVALID_PATTERN` error, never a panic; results
//! are bounded by the options and consistent with the text.
#![no_main]

use libfuzzer_sys::fuzz_target;
use tracelite::error::ErrorCode;
use tracelite::spill::lines::LineIndex;
use tracelite::spill::{self, GrepOptions, MemoryStore, Pattern, SpillStore};

fuzz_target!(|data: &[u8]| {
    let Some((head, rest)) = data.split_first_chunk::<6>() else {
        return;
    };
    let rest = String::from_utf8_lossy(rest);
    let (pattern, text) = rest.split_once('\0').unwrap_or((&rest, "a\nb\nc"));
    let literal = head[0] & 1 != 0;
    let ignore_case = head[0] & 2 != 0;
    let options = GrepOptions {
        context: usize::from(head[1] & 7),
        max_matches: usize::from(head[2]),
        skip: usize::from(head[3]),
        max_line_bytes: usize::from(head[4]),
        ..GrepOptions::default()
    };
    let index = LineIndex::new(text);
    match Pattern::new(pattern, literal, ignore_case) {
        Err(e) => assert_eq!(e.code, ErrorCode::InvalidPattern, "{e:?}"),
        Ok(p) => {
            let r = match spill::grep::grep(text, &index, &p, &options) {
                Ok(r) => r,
                Err(e) => {
                    assert_eq!(e.code, ErrorCode::GrepTooCostly, "{e:?}");
                    return;
                }
            };
            assert_eq!(r.total_lines, index.len());
            assert!(r.returned <= options.max_matches);
            assert_eq!(r.returned, r.lines.iter().filter(|l| l.is_match).count());
            assert_eq!(r.skipped, r.total_matches.min(options.skip));
            let mut last = 0;
            for l in &r.lines {
                assert!(
                    l.number > last && l.number <= index.len(),
                    "lines in order, in range"
                );
                last = l.number;
                assert!(l.text.len() <= l.line_bytes);
            }
        }
    }
    // The same through the tool calls the model makes.
    let mut store = MemoryStore::new();
    store.put("s", "k", text).expect("put");
    let args = serde_json::json!({
        "pointer": "spill://s/k",
        "pattern": pattern,
        "literal": literal,
        "ignore_case": ignore_case,
        "context": head[1] & 7,
        "max_matches": head[2],
        "skip": head[3],
    });
    let reply = spill::handle_tool_call(&mut store, "s", "grep_spill", &args.to_string())
        .expect("grep_spill is a known tool");
    if Pattern::new(pattern, literal, ignore_case).is_err() {
        assert!(reply.is_error);
    }
    let offset = usize::from(head[5]) * 3;
    let args = serde_json::json!({
        "pointer": "spill://s/k", "offset": offset, "limit": head[4], "column": head[2],
    });
    let reply = spill::handle_tool_call(&mut store, "s", "read_spill", &args.to_string())
        .expect("read_spill is a known tool");
    let page = store
        .read("s", "k", offset, usize::from(head[4]))
        .expect("read");
    assert!(page.count <= usize::from(head[4]));
    assert!(text.contains(page.text.as_str()));
    if page.count > 0 {
        assert!(!reply.is_error);
    }
});
