//! Spilling: the stage on requests, the bounded store (quotas, LRU, TTL),
//! isolation and traversal attempts, refusals, determinism and the agent tools.
#![allow(
    clippy::indexing_slicing,
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic
)]

use serde_json::{json, Value};
use tracelite::activity::check::{critical_lines, CRITICAL_BYTES};
use tracelite::spill::{
    self, handle_tool_call, tool_definitions, GrepOptions, Pattern, StoreLimits, ToolFormat,
};
use tracelite::{compress_json, Config, Env, ErrorCode, HostState, MemoryStore, SpillStore};

/// A request whose single tool result is `output`.
fn request(output: &str) -> String {
    json!({
        "model": "m",
        "messages": [
            {"role": "user", "content": "run the tests"},
            {"role": "assistant", "content": null, "tool_calls": [
                {"id": "c1", "type": "function", "function": {"name": "bash", "arguments": "{\"command\":\"pytest\"}"}}
            ]},
            {"role": "tool", "content": output, "tool_call_id": "c1"},
        ]
    })
    .to_string()
}

/// A test log of `n` lines with a traceback in the middle.
fn log(n: usize) -> String {
    let mut out = String::new();
    for i in 1..=n {
        if i == n / 2 {
            out.push_str("Traceback (most recent call last):\n");
        } else if i == n / 2 + 3 {
            out.push_str("ValueError: boom\n");
        } else {
            out.push_str(&format!(
                "line {i}: collected item test_{i} passed in 0.{i:03}s\n"
            ));
        }
    }
    out.push_str("== 1 failed, 2 passed ==");
    out
}

fn config(budget: u64) -> Config {
    Config::from_json(json!({"budget": budget, "session": "s1"})).unwrap()
}

fn tool_text(out: &str) -> String {
    let v: Value = serde_json::from_str(out).unwrap();
    v["messages"][2]["content"].as_str().unwrap().to_string()
}

#[test]
fn over_the_cap_becomes_an_excerpt_with_a_pointer_and_error_lines() {
    let text = log(20_000);
    let mut store = MemoryStore::new();
    let cfg = config(16_000);
    let out = compress_json(
        &request(&text),
        &cfg,
        Env::new(&mut store, &mut HostState::default()),
    )
    .unwrap();
    let excerpt = tool_text(&out.request);
    let key = spill::content_key("tool", &text);
    let pointer = format!("spill://s1/{key}");
    assert!(excerpt.contains(&pointer), "{excerpt}");
    assert!(excerpt.contains("read_spill") && excerpt.contains("grep_spill"));
    assert!(excerpt.starts_with("[output too long: 20001 lines, "));
    // The error lines of the hidden middle are listed with their numbers.
    assert!(
        excerpt.contains("  10000: Traceback (most recent call last):"),
        "{excerpt}"
    );
    assert!(
        excerpt.contains("! 10003: ValueError: boom"),
        "critical lines are marked"
    );
    // The last line is shown and ends the output.
    assert!(excerpt.ends_with("== 1 failed, 2 passed =="));
    assert!(excerpt.contains("\nline 1: collected"));
    let cap = cfg.result_cap();
    let tokens = tracelite::tokens::estimate(&excerpt);
    assert!(tokens <= cap, "{tokens} > {cap}");
    assert!(tokens >= cap * 8 / 10, "{tokens} uses too little of {cap}");
    assert_eq!(store.get("s1", &key).unwrap(), text);
    assert_eq!(out.report.spills.len(), 1);
    assert_eq!(out.report.spills[0].pointer, pointer);
    assert_eq!(out.report.spills[0].lines, 20_001);
    let change = &out.report.changes[0];
    assert_eq!((change.kind.as_str(), change.message), ("excerpt", 2));
    assert_eq!(change.pointer.as_deref(), Some(pointer.as_str()));
    assert!(out.report.tokens_after < out.report.tokens_before / 5);
}

#[test]
fn under_the_cap_nothing_changes_and_the_cap_scales_with_the_budget() {
    // About 15,000 tokens: under the cap of a 1,000,000 budget (20,000), over
    // that of a 16,000 one (the 2,000 floor).
    let text = log(1_000);
    let mut store = MemoryStore::new();
    let big = compress_json(
        &request(&text),
        &config(1_000_000),
        Env::new(&mut store, &mut HostState::default()),
    )
    .unwrap();
    assert_eq!(big.request, request(&text));
    assert!(store.list("s1").is_empty());
    let small = compress_json(
        &request(&text),
        &config(16_000),
        Env::new(&mut store, &mut HostState::default()),
    )
    .unwrap();
    assert_ne!(small.request, request(&text));
    assert_eq!(store.list("s1").len(), 1);
}

#[test]
fn compressing_twice_is_deterministic_and_stores_nothing_new() {
    let text = log(8_000);
    let mut a = MemoryStore::new();
    let mut b = MemoryStore::new();
    let first = compress_json(
        &request(&text),
        &config(16_000),
        Env::new(&mut a, &mut HostState::default()),
    )
    .unwrap();
    let again = compress_json(
        &request(&text),
        &config(16_000),
        Env::new(&mut a, &mut HostState::default()),
    )
    .unwrap();
    let other = compress_json(
        &request(&text),
        &config(16_000),
        Env::new(&mut b, &mut HostState::default()),
    )
    .unwrap();
    assert_eq!(first.request, again.request);
    assert_eq!(first.request, other.request);
    assert!(
        again.report.spills.is_empty(),
        "the same history stores nothing new"
    );
    assert_eq!(a.list("s1").len(), 1);
    // Compressing the output again changes nothing.
    let twice = compress_json(
        &first.request,
        &config(16_000),
        Env::new(&mut a, &mut HostState::default()),
    )
    .unwrap();
    assert_eq!(twice.request, first.request);
}

#[test]
fn a_refused_blob_says_so_instead_of_pointing_to_nothing() {
    let text = log(20_000);
    let mut store = MemoryStore::with_limits(StoreLimits {
        max_session_bytes: 1_000,
        ..StoreLimits::default()
    });
    let out = compress_json(
        &request(&text),
        &config(16_000),
        Env::new(&mut store, &mut HostState::default()),
    )
    .unwrap();
    let excerpt = tool_text(&out.request);
    assert!(
        excerpt.contains("[full output could not be kept: the session's spill quota is full"),
        "{excerpt}"
    );
    assert!(!excerpt.contains("spill://"));
    assert!(out.report.spills.is_empty());
    assert!(out.report.changes[0].pointer.is_none());
    // The per-call limit refuses the same way.
    let mut store = MemoryStore::new();
    let cfg = Config::from_json(json!({
        "budget": 16000, "session": "s1", "limits": {"maxSpillBytesPerSession": 100}
    }))
    .unwrap();
    let excerpt = tool_text(
        &compress_json(
            &request(&text),
            &cfg,
            Env::new(&mut store, &mut HostState::default()),
        )
        .unwrap()
        .request,
    );
    assert!(
        excerpt.contains("full output could not be kept:"),
        "{excerpt}"
    );
    assert!(store.list("s1").is_empty());
}

#[test]
fn a_single_giant_line_fits_cut_by_characters() {
    let line = "0123456789abcdef".repeat(65_536); // 1 MiB, no newline
    let mut store = MemoryStore::new();
    let cfg = config(16_000);
    let out = compress_json(
        &request(&line),
        &cfg,
        Env::new(&mut store, &mut HostState::default()),
    )
    .unwrap();
    let excerpt = tool_text(&out.request);
    assert!(excerpt.starts_with("[output too long: 1 line, 1048.6 KB; showing the first 0 and the last 1 line; 0 lines hidden]"), "{}", &excerpt[..200]);
    assert!(excerpt.contains("bytes of line 1 hidden"));
    assert!(excerpt.ends_with("cdef"));
    assert!(tracelite::tokens::estimate(&excerpt) <= cfg.result_cap());
    // Giant first and last lines of a longer text.
    let two = format!("{line}\nmiddle\n{line}");
    let excerpt = tool_text(
        &compress_json(
            &request(&two),
            &cfg,
            Env::new(&mut store, &mut HostState::default()),
        )
        .unwrap()
        .request,
    );
    assert!(
        excerpt.contains("showing the first 1 and the last 1 line; 1 line hidden"),
        "{}",
        &excerpt[..300]
    );
    assert!(tracelite::tokens::estimate(&excerpt) <= cfg.result_cap());
}

#[test]
fn keys_are_isolated_by_session_and_validated() {
    let mut store = MemoryStore::new();
    store.put("alice", "k1", "secret\n").unwrap();
    let missing = store.get("alice", "nope").unwrap_err();
    let foreign = store.get("bob", "k1").unwrap_err();
    assert_eq!(missing.code, ErrorCode::SpillNotFound);
    assert_eq!(foreign.code, ErrorCode::SpillNotFound);
    assert_eq!(foreign.message, missing.message);
    assert_eq!(
        store.read("bob", "k1", 0, 10).unwrap_err().code,
        ErrorCode::SpillNotFound
    );
    let p = Pattern::new("secret", true, false).unwrap();
    assert_eq!(
        store
            .grep("bob", "k1", &p, &GrepOptions::default())
            .unwrap_err()
            .code,
        ErrorCode::SpillNotFound
    );
    for bad in [
        "../alice/k1",
        "a/b",
        "..",
        "",
        "k1\0",
        "k 1",
        "%2e%2e",
        &"x".repeat(129),
    ] {
        assert_eq!(
            store.put("alice", bad, "x").unwrap_err().code,
            ErrorCode::InvalidSpillKey,
            "{bad:?}"
        );
        assert!(store.get("alice", bad).is_err());
    }
    assert_eq!(
        store.put("../x", "k", "x").unwrap_err().code,
        ErrorCode::InvalidSpillKey
    );
    // Through the tool: another session's pointer reads like a missing one.
    let theirs = handle_tool_call(
        &mut store,
        "bob",
        "read_spill",
        r#"{"pointer":"spill://alice/k1"}"#,
    )
    .unwrap();
    let nothing = handle_tool_call(
        &mut store,
        "bob",
        "read_spill",
        r#"{"pointer":"spill://bob/k1"}"#,
    )
    .unwrap();
    assert!(theirs.is_error && nothing.is_error);
    assert!(!theirs.text.contains("secret"));
    assert_eq!(
        theirs.text.replace("spill://alice/k1", "P"),
        nothing.text.replace("spill://bob/k1", "P")
    );
    let traversal = handle_tool_call(
        &mut store,
        "bob",
        "read_spill",
        r#"{"pointer":"spill://bob/../alice/k1"}"#,
    )
    .unwrap();
    assert!(traversal.is_error && !traversal.text.contains("secret"));
    let ours = handle_tool_call(
        &mut store,
        "alice",
        "read_spill",
        r#"{"pointer":"spill://alice/k1"}"#,
    )
    .unwrap();
    assert!(
        !ours.is_error && ours.text.contains("1\tsecret"),
        "{}",
        ours.text
    );
}

#[test]
fn the_store_is_bounded_and_evicts_least_recently_used_sessions() {
    let mut store = MemoryStore::with_limits(StoreLimits {
        max_bytes: 300,
        max_session_bytes: 200,
        ttl_seconds: 0,
        ..StoreLimits::default()
    });
    let blob = |c: char| c.to_string().repeat(100);
    store.put("a", "k", &blob('a')).unwrap();
    store.put("b", "k", &blob('b')).unwrap();
    store.put("c", "k", &blob('c')).unwrap();
    // Using `a` makes `b` the least recently used.
    store.get("a", "k").unwrap();
    store.put("d", "k", &blob('d')).unwrap();
    assert_eq!(store.sessions(), vec!["a", "c", "d"]);
    assert_eq!(store.total_bytes(), 300);
    // A pointer into the evicted session says its spill expired.
    let err = store.get("b", "k").unwrap_err();
    assert_eq!(err.code, ErrorCode::SpillNotFound);
    assert!(err.message.contains("expired"), "{err}");
    let err = store.get("a", "missing").unwrap_err();
    assert!(!err.message.contains("expired"), "{err}");
    // Per-session quota: refused, nothing evicted.
    let err = store.put("a", "k2", &"x".repeat(150)).unwrap_err();
    assert_eq!(err.code, ErrorCode::StoreRefused);
    assert!(err.message.contains("quota"), "{err}");
    assert_eq!(store.sessions(), vec!["a", "c", "d"]);
    // One more byte in all: the least recently used other session goes.
    store.put("a", "k2", "x").unwrap();
    assert_eq!(store.sessions(), vec!["a", "d"]);
    assert_eq!(store.total_bytes(), 201);
    let err = store.put("a", "k3", &blob('y')).unwrap_err();
    assert_eq!(err.code, ErrorCode::StoreRefused);
    // Bigger than the whole store.
    assert_eq!(
        store.put("e", "k", &"z".repeat(301)).unwrap_err().code,
        ErrorCode::StoreRefused
    );
    // The same text under the same key is a no-op; another text is refused.
    store.put("d", "k", &blob('d')).unwrap();
    assert_eq!(
        store.put("d", "k", &blob('q')).unwrap_err().code,
        ErrorCode::StoreRefused
    );
    assert_eq!(store.evict("a"), 101);
    assert!(store.list("a").is_empty());
    assert!(store.delete("d", "k"));
    assert!(!store.delete("d", "k"));
    assert_eq!(store.total_bytes(), 0);
}

#[test]
fn a_put_of_a_key_hashed_from_its_text_keeps_every_other_check() {
    use tracelite::spill::key::content_key;
    let mut store = MemoryStore::with_limits(StoreLimits {
        max_bytes: 1_000,
        max_session_bytes: 100,
        ..StoreLimits::default()
    });
    let key = content_key("tool", "hello\n");
    store.put_hashed("s", &key, "hello\n").unwrap();
    assert_eq!(store.get("s", &key).unwrap(), "hello\n");
    // The same text again is a no-op; another text under the key is refused.
    store.put_hashed("s", &key, "hello\n").unwrap();
    assert_eq!(
        store.put_hashed("s", &key, "other\n").unwrap_err().code,
        ErrorCode::StoreRefused
    );
    // Names and quotas are checked as for `put`.
    assert_eq!(
        store.put_hashed("../s", &key, "hello\n").unwrap_err().code,
        ErrorCode::InvalidSpillKey
    );
    let big = "x".repeat(101);
    assert_eq!(
        store
            .put_hashed("s", &content_key("tool", &big), &big)
            .unwrap_err()
            .code,
        ErrorCode::StoreRefused
    );
    // A plain put still checks the hash.
    assert_eq!(
        store
            .put("s", &content_key("tool", "a"), "b")
            .unwrap_err()
            .code,
        ErrorCode::SpillCorrupt
    );
}

/// Hosts keep one state per session, possibly on a worker thread.
#[test]
fn host_state_can_move_between_threads() {
    fn sendable<T: Send>() {}
    sendable::<tracelite::HostState>();
}

#[test]
fn ttl_sweeps_sessions_unused_since_the_host_time() {
    let mut store = MemoryStore::with_limits(StoreLimits {
        ttl_seconds: 100,
        ..StoreLimits::default()
    });
    store.set_now(1_000);
    store.put("old", "k", "x").unwrap();
    store.set_now(1_050);
    store.put("new", "k", "y").unwrap();
    assert_eq!(store.sweep(1_099), 0);
    store.get("old", "k").unwrap(); // used at 1099
    assert_eq!(store.sweep(1_150), 1); // "new" (1050) expired, "old" (1099) not yet
    assert_eq!(store.sessions(), vec!["old"]);
    assert_eq!(store.sweep(1_199), 1);
    assert!(store.sessions().is_empty());
    assert!(store
        .get("new", "k")
        .unwrap_err()
        .message
        .contains("expired"));
    // Time never goes back.
    store.set_now(10);
    store.put("s", "k", "z").unwrap();
    assert_eq!(store.sweep(1_250), 0);
}

#[test]
fn read_spill_pages_with_line_numbers_and_hints() {
    let mut store = MemoryStore::new();
    let text: String = (1..=450).map(|i| format!("row {i}\n")).collect();
    store.put("s", "k", &text).unwrap();
    let r = handle_tool_call(
        &mut store,
        "s",
        "read_spill",
        r#"{"pointer":"spill://s/k"}"#,
    )
    .unwrap();
    assert!(
        r.text.starts_with("spill://s/k: lines 1-200 of 450"),
        "{}",
        r.text
    );
    assert!(r.text.contains("\n     1\trow 1\n"));
    assert!(r
        .text
        .ends_with("[250 more lines: read_spill with offset=200 to continue]"));
    let r = handle_tool_call(
        &mut store,
        "s",
        "read_spill",
        r#"{"pointer":"k","offset":400,"limit":100}"#,
    )
    .unwrap();
    assert!(
        r.text.contains("   450\trow 450\n[end of output]"),
        "{}",
        r.text
    );
    let r = handle_tool_call(
        &mut store,
        "s",
        "read_spill",
        r#"{"pointer":"k","offset":450}"#,
    )
    .unwrap();
    assert!(r.is_error && r.text.contains("past the end"));
    let r = handle_tool_call(&mut store, "s", "read_spill", r#"{"offset":1}"#).unwrap();
    assert!(r.is_error && r.text.contains("pointer"), "{}", r.text);
    let r = handle_tool_call(&mut store, "s", "read_spill", "not json").unwrap();
    assert!(r.is_error);
    let e = handle_tool_call(&mut store, "s", "rm_rf", "{}").unwrap_err();
    assert_eq!(e.code, ErrorCode::InvalidToolCall);
}

#[test]
fn read_spill_continues_a_giant_line_by_column() {
    let mut store = MemoryStore::new();
    let line = "é".repeat(20_000) + "END"; // 40,003 bytes
    store.put("s", "k", &format!("{line}\nnext\n")).unwrap();
    let mut got = String::new();
    let mut column = 0;
    for _ in 0..10 {
        let args = json!({"pointer": "spill://s/k", "offset": 0, "limit": 1, "column": column});
        let r = handle_tool_call(&mut store, "s", "read_spill", &args.to_string()).unwrap();
        let body = r.text.lines().nth(1).unwrap();
        got.push_str(body.strip_prefix("     1\t").unwrap());
        match r.text.rsplit_once("column=") {
            Some((_, c)) => column = c.trim_end_matches(']').parse().unwrap(),
            None => break,
        }
    }
    assert_eq!(got, line);
}

#[test]
fn grep_spill_shows_matches_with_context_and_paging() {
    let mut store = MemoryStore::new();
    store.put("s", "k", &log(1_000)).unwrap();
    let r = handle_tool_call(
        &mut store,
        "s",
        "grep_spill",
        r#"{"pointer":"spill://s/k","pattern":"test_9\\d passed","context":1,"max_matches":3}"#,
    )
    .unwrap();
    assert!(
        r.text.starts_with(
            "spill://s/k: 10 matching lines of 1001 for \"test_9\\d passed\"; showing matches 1-3\n89-line 89:"
        ),
        "{}",
        r.text
    );
    assert!(r
        .text
        .contains("\n90:line 90: collected item test_90 passed"));
    assert!(r
        .text
        .contains("\n92:line 92: collected item test_92 passed in 0.092s\n93-line 93"));
    assert!(!r.text.contains("\n--\n"));
    assert!(r.text.ends_with(
        "[7 more matches: grep_spill with skip=3; read_spill with offset=89 reads from line 90]"
    ));
    let r = handle_tool_call(
        &mut store,
        "s",
        "grep_spill",
        r#"{"pointer":"k","pattern":"test_9(","literal":false}"#,
    )
    .unwrap();
    assert!(r.is_error && r.text.contains("literal"), "{}", r.text);
    let r = handle_tool_call(
        &mut store,
        "s",
        "grep_spill",
        r#"{"pointer":"k","pattern":"VALUEERROR","ignore_case":true,"literal":true}"#,
    )
    .unwrap();
    assert!(r.text.contains("503:ValueError: boom"), "{}", r.text);
    let r = handle_tool_call(
        &mut store,
        "s",
        "grep_spill",
        r#"{"pointer":"k","pattern":"no such thing"}"#,
    )
    .unwrap();
    assert!(!r.is_error && r.text.contains("0 matching lines"));
}

#[test]
fn tool_definitions_in_every_format() {
    let chat = tool_definitions(ToolFormat::OpenaiChat);
    assert_eq!(chat[0]["type"], "function");
    assert_eq!(chat[0]["function"]["name"], "read_spill");
    assert_eq!(
        chat[1]["function"]["parameters"]["required"],
        json!(["pointer", "pattern"])
    );
    let responses = tool_definitions(ToolFormat::OpenaiResponses);
    assert_eq!(responses[1]["name"], "grep_spill");
    assert!(responses[1]["parameters"]["properties"]["pattern"].is_object());
    // Optional arguments: not strict (the Responses API's default).
    assert_eq!(responses[0]["strict"], json!(false));
    let gemini = tool_definitions(ToolFormat::Gemini);
    assert_eq!(gemini[1]["name"], "grep_spill");
    assert_eq!(
        gemini[1]["parametersJsonSchema"]["required"],
        json!(["pointer", "pattern"])
    );
    assert_eq!(ToolFormat::parse("gemini").unwrap(), ToolFormat::Gemini);
    let anthropic = tool_definitions(ToolFormat::Anthropic);
    assert_eq!(anthropic[0]["name"], "read_spill");
    assert_eq!(anthropic[0]["input_schema"]["type"], "object");
    // The schemas' limits are the handler's.
    let read = &anthropic[0]["input_schema"]["properties"];
    assert_eq!(read["limit"]["maximum"], json!(spill::tools::MAX_LIMIT));
    let grep = &anthropic[1]["input_schema"]["properties"];
    assert_eq!(grep["context"]["maximum"], json!(spill::tools::MAX_CONTEXT));
    assert_eq!(
        grep["max_matches"]["maximum"],
        json!(spill::tools::MAX_MATCHES)
    );
    assert_eq!(
        grep["pattern"]["description"]
            .as_str()
            .map(|d| d.contains(r"\d \w")),
        Some(true)
    );
    assert_eq!(ToolFormat::parse("openai").unwrap(), ToolFormat::OpenaiChat);
    assert!(ToolFormat::parse("cohere").is_err());
}

#[test]
fn error_patterns_are_a_validated_setting() {
    let e = Config::from_json(json!({"spill": {"errorPatterns": ["ok", "bad("]}})).unwrap_err();
    assert_eq!(e.path, "spill.errorPatterns[1]");
    let cfg =
        Config::from_json(json!({"budget": 16000, "spill": {"errorPatterns": ["CUSTOM-\\d+"]}}))
            .unwrap();
    let mut text = log(20_000).replace("ValueError: boom", "CUSTOM-42 went wrong");
    text.push('\n');
    let out = compress_json(
        &request(&text),
        &cfg,
        Env::new(&mut MemoryStore::new(), &mut HostState::default()),
    )
    .unwrap();
    let excerpt = tool_text(&out.request);
    assert!(
        excerpt.contains("  10003: CUSTOM-42 went wrong"),
        "{excerpt}"
    );
    assert!(!excerpt.contains("Traceback"));
}

#[test]
fn detectors_are_a_validated_setting_that_adds_critical_lines() {
    for (spill, path) in [
        (
            json!({"detectors": [{"tool": "t", "lines": ["ok", "bad("]}]}),
            "spill.detectors[0].lines[1]",
        ),
        (
            json!({"detectors": [{"after": [{"when": "x", "find": "(", "within": 2}]}]}),
            "spill.detectors[0].after[0].find",
        ),
        (
            json!({"detectors": [{"before": [{"when": "x", "find": "y", "within": 0}]}]}),
            "spill.detectors[0].before[0].within",
        ),
        (
            json!({"detectors": [{"lines": vec!["x"; 65]}]}),
            "spill.detectors",
        ),
        (
            json!({"detectors": [{"tool": "t", "line": ["x"]}]}),
            "spill",
        ),
    ] {
        let e = Config::from_json(json!({ "spill": spill })).unwrap_err();
        assert!(e.path.starts_with(path), "{path}: {e}");
    }
    // A host's table: `STEP n FAILED AT …` and the `why:` line after it.
    let detectors = json!([{
        "tool": "deploy",
        "lines": ["^STEP \\d+ BROKE AT "],
        "after": [{"when": "^STEP \\d+ BROKE AT ", "find": "^  why: ", "within": 3}],
    }]);
    let mut text = log(20_000).replace("ValueError: boom", "STEP 7 BROKE AT deploy.yml:12");
    text = text.replacen("line 10005: ", "  why: ", 1);
    let spill = |spill: Value| {
        let cfg = Config::from_json(json!({"budget": 16000, "spill": spill})).unwrap();
        let out = compress_json(
            &request(&text),
            &cfg,
            Env::new(&mut MemoryStore::new(), &mut HostState::default()),
        )
        .unwrap();
        tool_text(&out.request)
    };
    let excerpt = spill(json!({ "detectors": detectors }));
    assert!(
        excerpt.contains("! 10003: STEP 7 BROKE AT deploy.yml:12"),
        "{excerpt}"
    );
    assert!(excerpt.contains("! 10005: why: "), "{excerpt}");
    let without = spill(json!({}));
    assert!(!without.contains("STEP 7 BROKE AT"), "{without}");
}

#[test]
fn patterns_that_would_compile_huge_or_nest_deep_are_typed_errors() {
    // regex-lite is linear-time in the text; its compiled size is capped at
    // 1 MiB and nesting at 32, so a pattern cannot blow up memory or time.
    for pattern in [
        "(a{1000}){1000}",
        "((((((((((((((((((((((((((((((((((a))))))))))))))))))))))))))))))))))",
        "[[:alpha:]",
        "a{2,1}",
        "(?<",
        "\\",
    ] {
        let e = Pattern::new(pattern, false, false).unwrap_err();
        assert_eq!(e.code, ErrorCode::InvalidPattern, "{pattern}");
        assert_eq!(e.path, "pattern");
    }
    // The same mistakes through the tool the model calls are an error reply.
    let mut store = MemoryStore::new();
    store.put("s", "k", "a\nb\n").unwrap();
    let args = json!({"pointer": "spill://s/k", "pattern": "(a{1000}){1000}"}).to_string();
    let reply = handle_tool_call(&mut store, "s", "grep_spill", &args).unwrap();
    assert!(reply.is_error, "{}", reply.text);
}

/// A 6,000-line build log whose only trouble is on line `at`.
fn quiet_log(at: usize, trouble: &str) -> String {
    (1..=6_000)
        .map(|i| {
            if i == at {
                trouble.to_string()
            } else {
                format!("[{i:>5}] worker-{} built chunk {i} in {} ms", i % 8, i % 97)
            }
        })
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
fn default_error_patterns_catch_real_errors_in_any_case() {
    let cfg = config(16_000);
    for trouble in [
        "ERROR worker-3 lost its connection to the queue",
        "FATAL: database is locked",
        "CRITICAL disk full on /var",
        "npm ERR! code ERESOLVE",
        "thread 'main' panicked at src/lib.rs:10:5",
        "goroutine 7 [running]: panic: runtime error",
        "java.lang.IllegalStateException: closed",
        "error[E0308]: mismatched types",
        "Traceback (most recent call last):",
    ] {
        let text = quiet_log(3_000, trouble);
        let out = compress_json(
            &request(&text),
            &cfg,
            Env::new(&mut MemoryStore::new(), &mut HostState::default()),
        )
        .unwrap();
        let excerpt = tool_text(&out.request);
        assert!(
            excerpt.starts_with("[output too long: 6000 lines"),
            "{excerpt}"
        );
        assert!(
            excerpt.contains(&format!("3000: {trouble}")),
            "{trouble}:\n{excerpt}"
        );
    }
    // `(?-i)` in a host pattern restores case.
    let cfg = Config::from_json(
        json!({"budget": 16000, "session": "s1", "spill": {"errorPatterns": ["(?-i)ERROR"]}}),
    )
    .unwrap();
    let lower = quiet_log(3_000, "error worker-3 lower case");
    let out = compress_json(
        &request(&lower),
        &cfg,
        Env::new(&mut MemoryStore::new(), &mut HostState::default()),
    )
    .unwrap();
    assert!(!tool_text(&out.request).contains("3000: error worker-3"));
}

/// The exception that ends a traceback is an error line of the excerpt even
/// when its name says neither Error nor Exception (Django's
/// `AppRegistryNotReady`), also with no pattern configured.
#[test]
fn a_traceback_s_exception_line_stays_in_the_excerpt() {
    let trouble = "Traceback (most recent call last):\n  File \"m.py\", line 3, in <module>\n    setup()\nmyapp.registry.AppRegistryNotReady: Apps aren't loaded yet.";
    let text = quiet_log(3_000, trouble);
    for patterns in [json!(null), json!([])] {
        let mut v = json!({"budget": 16000, "session": "s1"});
        if !patterns.is_null() {
            v["spill"] = json!({"errorPatterns": patterns});
        }
        let cfg = Config::from_json(v).unwrap();
        let out = compress_json(
            &request(&text),
            &cfg,
            Env::new(&mut MemoryStore::new(), &mut HostState::default()),
        )
        .unwrap();
        let excerpt = tool_text(&out.request);
        assert!(
            excerpt.contains("myapp.registry.AppRegistryNotReady: Apps aren't loaded yet."),
            "{patterns}: {excerpt}"
        );
    }
}

#[test]
fn critical_lines_are_listed_before_lines_that_only_mention_errors() {
    // A lint run: forty messages mention exceptions before the crash.
    let mut trouble = String::new();
    for i in 0..40 {
        trouble.push_str(&format!(
            "doc/m{i}.py:1:0: W0703: Catching too general exception Exception (broad-except)\n"
        ));
    }
    trouble.push_str("Traceback (most recent call last):\n  File \"u.py\", line 9, in parse\n    raise IncompleteFormatString() from e\npylint.checkers.utils.IncompleteFormatString\n");
    trouble.push_str("FAIL: test_parse (tests.test_u.ParseTests)\nE   assert 1 == 2");
    let text = quiet_log(3_000, &trouble);
    let cfg = Config::from_json(json!({"budget": 16000, "session": "s1"})).unwrap();
    let out = compress_json(
        &request(&text),
        &cfg,
        Env::new(&mut MemoryStore::new(), &mut HostState::default()),
    )
    .unwrap();
    let excerpt = tool_text(&out.request);
    for line in [
        "pylint.checkers.utils.IncompleteFormatString",
        "FAIL: test_parse (tests.test_u.ParseTests)",
        "E   assert 1 == 2",
    ] {
        assert!(
            excerpt.contains(&format!(": {line}\n")),
            "{line}: {excerpt}"
        );
        // Marked, so whatever later hides the excerpt still finds them critical.
        assert_eq!(
            critical_lines(&excerpt, CRITICAL_BYTES)
                .lines
                .iter()
                .filter(|l| *l == line)
                .count(),
            1,
            "{line}"
        );
    }
    // The other mentions: only the first `maxErrorLines` (5), unmarked.
    assert_eq!(excerpt.matches("broad-except").count(), 5, "{excerpt}");
    assert!(
        excerpt.contains("hidden lines with error signals, 8 listed; `!` marks the critical ones:"),
        "{excerpt}"
    );
}

/// The excerpt cache (`HostState::excerpts`) only saves work: a state that
/// laid out an output under other settings (cap, head share, error patterns,
/// session, counter) gives what a fresh state gives under the new ones.
#[test]
fn excerpts_laid_out_before_never_serve_other_settings() {
    use tracelite::tokens::{Estimator, TokenCounter};
    use tracelite::{compress_json, Env, HostState};
    struct Doubled;
    impl TokenCounter for Doubled {
        fn count(&self, text: &str) -> tracelite::Result<u64> {
            Ok(2 * tracelite::tokens::estimate(text))
        }
    }
    let log: String = (0..3000)
        .map(|i| {
            if i == 1700 {
                "FAILED test_x - KeyError: 'price'\n".to_string()
            } else {
                format!("line {i} ok value {}\n", i * 37 % 1000)
            }
        })
        .collect();
    let req = request(&log);
    let run = |state: &mut HostState,
               store: &mut MemoryStore,
               options: &str,
               counter: &dyn TokenCounter| {
        let config = Config::from_json_str(options).unwrap();
        let out = compress_json(
            &req,
            &config,
            Env {
                store,
                counter,
                state,
                previous: None,
                format: None,
                known: Default::default(),
            },
        )
        .unwrap();
        (out.request, serde_json::to_string(&out.report).unwrap())
    };
    let settings = [
        r#"{"session":"a"}"#,
        r#"{"session":"a","budget":64000}"#,
        r#"{"session":"a","spill":{"headShare":0.3}}"#,
        r#"{"session":"a","spill":{"errorPatterns":["value 99"]}}"#,
        r#"{"session":"b"}"#,
    ];
    // The state carries over; the store starts empty each time (what it holds
    // changes the report, not what is laid out).
    let mut state = HostState::default();
    let mut outputs = Vec::new();
    for options in settings {
        let warm = run(&mut state, &mut MemoryStore::new(), options, &Estimator);
        let cold = run(
            &mut HostState::default(),
            &mut MemoryStore::new(),
            options,
            &Estimator,
        );
        assert_eq!(warm, cold, "{options}");
        outputs.push(warm.0);
    }
    // Each setting changes the excerpt, so a stale entry would have shown.
    for (i, a) in outputs.iter().enumerate() {
        assert!(
            outputs.iter().skip(i + 1).all(|b| b != a),
            "settings {i} gave the same request as a later one"
        );
    }
    let warm = run(&mut state, &mut MemoryStore::new(), settings[0], &Doubled);
    let cold = run(
        &mut HostState::default(),
        &mut MemoryStore::new(),
        settings[0],
        &Doubled,
    );
    assert_eq!(warm, cold, "another counter");
}

// spill.pointerRoot: pointers become file paths under the host's directory,
// excerpts say how to read them with ordinary tools, the agent tools resolve
// both kinds, and without it the output is unchanged.

/// A build log long enough to spill at a budget of 8,000.
fn build_log() -> String {
    (1..=3000)
        .map(|i| format!("step {i}: compiled module_{i}.rs in 0.{i:03}s\n"))
        .collect()
}

/// Settings of session `s1` at a budget of 8,000, with `extra` on top.
fn rooted_config(extra: Value) -> Config {
    let mut options = json!({"budget": 8000, "session": "s1"});
    if let (Some(o), Some(e)) = (options.as_object_mut(), extra.as_object()) {
        o.extend(e.clone());
    }
    Config::from_json(options).unwrap()
}

#[test]
fn a_pointer_root_makes_the_pointer_a_file_path_the_tools_also_resolve() {
    let text = build_log();
    let rooted = rooted_config(json!({"spill": {"pointerRoot": "/var/data/tool-output/"}}));
    let mut store = MemoryStore::new();
    let out = compress_json(
        &request(&text),
        &rooted,
        Env::new(&mut store, &mut HostState::default()),
    )
    .unwrap();
    let excerpt = tool_text(&out.request);
    let key = &out.spills[0].key;
    let path = format!("/var/data/tool-output/s1/{key}.txt");
    assert_eq!(out.report.spills[0].pointer, path);
    assert!(
        excerpt.contains(&format!("sed -n 'FIRST,LASTp' '{path}'"))
            && excerpt.contains(&format!("grep -n 'PATTERN' '{path}'")),
        "{excerpt}"
    );
    assert!(!excerpt.contains("spill://") && !excerpt.contains("read_spill"));
    assert_eq!(spill::parse_pointer(&path), (Some("s1"), key.as_str()));

    // read_spill takes the path as it takes spill://.
    let args = json!({"pointer": path, "offset": 1499, "limit": 1}).to_string();
    let reply = handle_tool_call(&mut store, "s1", "read_spill", &args).unwrap();
    assert!(!reply.is_error, "{}", reply.text);
    assert!(reply.text.contains("step 1500: compiled"), "{}", reply.text);
    let other = format!("/var/data/tool-output/s2/{key}.txt");
    let args = json!({"pointer": other, "pattern": "step 1500:"}).to_string();
    assert!(
        handle_tool_call(&mut store, "s1", "grep_spill", &args)
            .unwrap()
            .is_error
    );
}

#[test]
fn without_a_pointer_root_the_output_is_the_same_as_before() {
    let text = build_log();
    let plain = compress_json(
        &request(&text),
        &rooted_config(json!({})),
        Env::new(&mut MemoryStore::new(), &mut HostState::default()),
    )
    .unwrap();
    let empty = rooted_config(json!({"spill": {"pointerRoot": ""}}));
    let same = compress_json(
        &request(&text),
        &empty,
        Env::new(&mut MemoryStore::new(), &mut HostState::default()),
    )
    .unwrap();
    assert_eq!(plain.request, same.request);
    let excerpt = tool_text(&plain.request);
    assert!(excerpt.contains(&format!("spill://s1/{}", plain.spills[0].key)));
    assert!(excerpt.contains("read_spill (pointer, offset, limit)"));
}

#[test]
fn a_pointer_root_must_be_an_absolute_quotable_directory() {
    for bad in ["tool-output", "./x", "/a\nb", "/it's", "C:relative"] {
        let e = Config::from_json(json!({"spill": {"pointerRoot": bad}})).unwrap_err();
        assert_eq!(
            (e.code, e.path.as_str()),
            (ErrorCode::InvalidOption, "spill.pointerRoot"),
            "{bad}"
        );
    }
    for good in ["/", "/tmp/x", "C:\\data\\spills", "D:/spills"] {
        assert!(
            Config::from_json(json!({"spill": {"pointerRoot": good}})).is_ok(),
            "{good}"
        );
    }
}

#[test]
fn dedup_keeps_lines_holding_a_path_pointer() {
    let pointer_line = "[full output: /var/data/tool-output/s1/tool-0123456789abcdef0123456789abcdef.txt — a normal readable file]";
    let shared = format!(
        "{pointer_line}\n  File \"/repo/app/config.py\", line 41, in parse_config\n    value = settings.lookup(section, key, default=None, strict=True)\n  File \"/repo/app/settings.py\", line 118, in lookup\n    raise KeyError(f\"missing setting {{section}}.{{key}} in {{self.path}}\")\n"
    );
    let a = format!("first run\n{shared}");
    let b = format!("second run\n{shared}");
    let request = json!({"model": "m", "messages": [
        {"role": "user", "content": "fix it"},
        {"role": "assistant", "content": null, "tool_calls": [{"id": "c0", "type": "function", "function": {"name": "bash", "arguments": "{}"}}]},
        {"role": "tool", "content": a, "tool_call_id": "c0"},
        {"role": "assistant", "content": null, "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "bash", "arguments": "{}"}}]},
        {"role": "tool", "content": b, "tool_call_id": "c1"},
    ]})
    .to_string();
    let only_dedup = |root: &str| {
        rooted_config(
            json!({"window": 3, "spill": {"enabled": false, "pointerRoot": root},
            "phase": {"enabled": false}, "optical": {"enabled": false}, "compact": {"enabled": false}}),
        )
    };
    let first = |c: &Config| {
        let out = compress_json(
            &request,
            c,
            Env::new(&mut MemoryStore::new(), &mut HostState::default()),
        )
        .unwrap();
        let v: Value = serde_json::from_str(&out.request).unwrap();
        v["messages"][2]["content"].as_str().unwrap().to_string()
    };
    let unrooted = first(&only_dedup(""));
    assert!(
        !unrooted.contains(pointer_line),
        "dedup removes it when it is no pointer: {unrooted}"
    );
    let rooted = first(&only_dedup("/var/data/tool-output"));
    assert!(rooted.contains(pointer_line), "{rooted}");
    assert!(rooted.contains("duplicate lines removed"), "{rooted}");
}
