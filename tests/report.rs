//! The report against the request it describes: every change indexes the
//! emitted request's own list of messages (system messages and the messages
//! the emitter adds included, after compaction moved the rest), in every
//! format; bytes in and out.
#![allow(
    clippy::indexing_slicing,
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic
)]

use serde_json::Value;
use tracelite::config::Provider;
use tracelite::formats::FormatName;
use tracelite::{trajectory_to_request, Config, HostState, MemoryStore, Trajectory};

mod common;

fn sample() -> Trajectory {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/fixtures/sample-trajectory.json"
    );
    Trajectory::from_json(&std::fs::read_to_string(path).unwrap()).unwrap()
}

/// The emitted request's own list of messages.
fn items(format: FormatName, request: &Value) -> &Vec<Value> {
    let key = match format {
        FormatName::OpenaiChat | FormatName::Anthropic => "messages",
        FormatName::OpenaiResponses => "input",
        FormatName::Gemini => "contents",
    };
    request[key].as_array().unwrap()
}

#[test]
fn changes_index_the_emitted_requests_own_messages_in_every_format() {
    let trajectory = sample();
    let steps = trajectory.steps.len();
    let mut config = Config::from_json(serde_json::json!({
        "budget": 16_000, "session": "s", "provider": "openai",
        "compact": {"threshold": 3_000, "planner": false, "minTurns": 1, "minSaving": 0},
    }))
    .unwrap();
    for format in [
        FormatName::OpenaiChat,
        FormatName::OpenaiResponses,
        FormatName::Anthropic,
        FormatName::Gemini,
    ] {
        config.format = Some(format);
        let mut store = MemoryStore::new();
        let mut state = HostState::default();
        let (mut checked, mut after_compaction, mut kinds) = (0, 0, Vec::new());
        for t in 1..=steps {
            let request = trajectory_to_request(&trajectory, t, format).unwrap();
            let text = request.to_string();
            let out = common::compress_in(&text, &config, &mut store, &mut state);
            assert_eq!(out.report.bytes_before, text.len());
            assert_eq!(out.report.bytes_after, out.request.len());
            let emitted: Value = serde_json::from_str(&out.request).unwrap();
            let list = items(format, &emitted);
            let summary = out
                .report
                .changes
                .iter()
                .find(|c| c.kind == "summary")
                .map(|c| c.message);
            for (i, c) in out.report.changes.iter().enumerate() {
                let Some(item) = list.get(c.message) else {
                    panic!(
                        "{format:?} t={t}: {c:?} is past the {} messages",
                        list.len()
                    );
                };
                let Some(pointer) = &c.pointer else { continue };
                // A change inside what compaction then folded indexes the summary.
                if c.stage != tracelite::pipeline::StageName::Compact && Some(c.message) == summary
                {
                    continue;
                }
                // A later stage that rewrote the message shows its own pointer
                // (its blob holds this one).
                let later = out.report.changes.get(i + 1..).unwrap_or(&[]);
                if later
                    .iter()
                    .any(|l| l.message == c.message && l.pointer.is_some())
                {
                    continue;
                }
                assert!(
                    item.to_string().contains(pointer.as_str()),
                    "{format:?} t={t}: message {} does not show {c:?}:\n{item}",
                    c.message
                );
                checked += 1;
                if summary.is_some_and(|s| c.message > s) {
                    after_compaction += 1;
                }
                kinds.push(c.kind.clone());
            }
        }
        kinds.sort();
        kinds.dedup();
        assert!(checked >= 5, "{format:?}: {checked} changes checked");
        assert!(
            after_compaction >= 1,
            "{format:?}: no change after a compaction"
        );
        for kind in ["excerpt", "summary"] {
            assert!(kinds.iter().any(|k| k == kind), "{format:?}: {kinds:?}");
        }
    }
}

#[test]
fn snapshot_changes_index_the_tool_message_not_the_moved_images() {
    // OpenAI Chat moves snapshot images into a user message after the tool
    // run: each change still indexes its tool message.
    let trajectory = sample();
    let mut config = Config {
        provider: Provider::Openai,
        model: "gpt-4o".into(),
        ..Config::default()
    };
    config.compact.enabled = false;
    // Whole outputs, so the sample's long ones become snapshots.
    config.spill.enabled = false;
    let mut seen = 0;
    let (mut store, mut state) = (MemoryStore::new(), HostState::default());
    for t in 1..=trajectory.steps.len() {
        let text = trajectory_to_request(&trajectory, t, FormatName::OpenaiChat)
            .unwrap()
            .to_string();
        let out = common::compress_in(&text, &config, &mut store, &mut state);
        let emitted: Value = serde_json::from_str(&out.request).unwrap();
        // Compaction is off: no change is folded into a summary.
        for c in out.report.changes.iter().filter(|c| c.kind == "snapshot") {
            let m = &emitted["messages"][c.message];
            assert_eq!(m["role"], "tool", "t={t} {c:?}");
            assert!(m["content"].to_string().contains(" shown as "), "{m}");
            seen += 1;
        }
        if out.report.changes.iter().any(|c| c.kind == "snapshot") {
            // Snapshots travel as base64 PNG: bytes are reported beside tokens.
            assert!(out.report.bytes_after > 0 && out.report.bytes_before == text.len());
        }
    }
    assert!(seen > 0, "no snapshot in the sample");
}

/// A request whose user message alone exceeds the budget: no stage may cut a
/// user message, so it stays over budget after every stage.
fn over_budget_request(format: FormatName, filler: &str) -> String {
    let big = filler.repeat(2000);
    let v = match format {
        FormatName::OpenaiChat => serde_json::json!({"model": "gpt-4o", "messages": [
            {"role": "system", "content": "You are terse."},
            {"role": "user", "content": "hi"},
            {"role": "assistant", "content": "hello"},
            {"role": "user", "content": big}]}),
        FormatName::OpenaiResponses => serde_json::json!({"model": "gpt-4o", "input": [
            {"role": "user", "content": "hi"},
            {"role": "assistant", "content": "hello"},
            {"role": "user", "content": big}]}),
        FormatName::Anthropic => {
            serde_json::json!({"model": "claude", "system": "You are terse.", "messages": [
            {"role": "user", "content": "hi"},
            {"role": "assistant", "content": "hello"},
            {"role": "user", "content": big}]})
        }
        FormatName::Gemini => serde_json::json!({"contents": [
            {"role": "user", "parts": [{"text": "hi"}]},
            {"role": "model", "parts": [{"text": "hello"}]},
            {"role": "user", "parts": [{"text": big}]}]}),
    };
    v.to_string()
}

/// `compress_json` with a fresh store and state.
fn compress_fresh(request: &str, config: &Config) -> tracelite::error::Result<tracelite::Output> {
    let (mut store, mut state) = (MemoryStore::new(), HostState::default());
    tracelite::compress_json(request, config, tracelite::Env::new(&mut store, &mut state))
}

#[test]
fn a_request_over_budget_after_every_stage_reports_its_largest_message_or_fails() {
    let config = Config::from_json(serde_json::json!({"budget": 4000})).unwrap();
    let expected = [
        (FormatName::OpenaiChat, "messages[3]"),
        (FormatName::OpenaiResponses, "input[2]"),
        (FormatName::Anthropic, "messages[2]"),
        (FormatName::Gemini, "contents[2]"),
    ];
    for (format, path) in expected {
        let request = over_budget_request(format, "the quick brown fox jumps over it ");
        let out = compress_fresh(&request, &config).unwrap();
        let over = out
            .report
            .over_budget
            .clone()
            .unwrap_or_else(|| panic!("{format:?}: no overBudget"));
        assert_eq!(over.tokens, out.report.tokens_after, "{format:?}");
        assert!(over.tokens > 4000, "{format:?}: {over:?}");
        assert_eq!(over.budget, 4000);
        assert_eq!(over.largest, path, "{format:?}");
        assert!(
            over.largest_tokens > over.tokens / 2 && over.largest_tokens <= over.tokens,
            "{over:?}"
        );
        let json = serde_json::to_value(&out.report).unwrap();
        assert_eq!(json["overBudget"]["largest"], path);

        let refuse = Config::from_json(
            serde_json::json!({"budget": 4000, "limits": {"overBudget": "error"}}),
        )
        .unwrap();
        let err = compress_fresh(&request, &refuse).unwrap_err();
        assert_eq!(
            err.code,
            tracelite::error::ErrorCode::OverBudget,
            "{format:?}"
        );
        assert_eq!(err.path, path, "{format:?}");
        assert!(
            err.message.contains("more than the budget (4000)"),
            "{}",
            err.message
        );
    }
    // Within the budget: no overBudget, in either mode.
    let small = over_budget_request(FormatName::OpenaiChat, "fox ");
    for options in [
        serde_json::json!({}),
        serde_json::json!({"limits": {"overBudget": "error"}}),
    ] {
        let out = compress_fresh(&small, &Config::from_json(options).unwrap()).unwrap();
        assert_eq!(out.report.over_budget, None);
        assert!(serde_json::to_value(&out.report)
            .unwrap()
            .get("overBudget")
            .is_none());
    }
    // A mode that is neither is an option error naming it.
    let bad = Config::from_json(serde_json::json!({"limits": {"overBudget": "warn"}})).unwrap_err();
    assert!(bad.path.contains("limits.overBudget"), "{bad:?}");
}
