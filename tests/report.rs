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
