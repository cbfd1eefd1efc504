//! Compaction size on any conversation the bytes describe (issue 16, item 2):
//! a valid OpenAI chat request of user, assistant and tool messages (parallel
//! tool calls, error lines, paths, secrets) under small thresholds, `keep`
//! values and compaction limits. Checks: no panic; deterministic; the
//! output is never larger than the input plus a bounded overhead (the
//! summary, archive and log do not grow with the messages compacted); every
//! tool call keeps its result, right after it; one blob per compaction, whose
//! index lists every compacted message.
#![no_main]

use std::collections::HashSet;

use libfuzzer_sys::fuzz_target;
use serde_json::{json, Value};
use tracelite::formats::{self, FormatName};
use tracelite::model::PartKind;
use tracelite::{compress_json, Config, Env, HostState, MemoryStore};

/// Bytes the compaction may add beyond the input: the five-section summary
/// (at most 40 lines a section, lines clipped to a few hundred bytes, two
/// lists of at most 40 paths or names), its pointers and the log's header.
const OVERHEAD: usize = 48 * 1024;

const WORDS: [&str; 16] = [
    "fix",
    "the",
    "Error: boom",
    "src/app/main.py:12",
    "def handler(x):",
    "I'll use a set instead.",
    "Never push to main.",
    "AKIAIOSFODNN7EXAMPLE",
    "\n",
    "Traceback (most recent call last):",
    "`parse_args`",
    "next I will run the tests.",
    "[Command finished with exit code 1]",
    "é",
    "ok",
    "-----BEGIN RSA PRIVATE KEY-----\nMIIEpAIBAAKCAQEA\n-----END RSA PRIVATE KEY-----",
];

struct Bytes<'a>(&'a [u8]);

impl Bytes<'_> {
    fn next(&mut self) -> Option<u8> {
        let (b, rest) = self.0.split_first()?;
        self.0 = rest;
        Some(*b)
    }

    fn text(&mut self) -> String {
        let n = usize::from(self.next().unwrap_or(0) % 12);
        let mut out = String::new();
        for _ in 0..n {
            let b = self.next().unwrap_or(0);
            out.push_str(WORDS[usize::from(b % 16)]);
            out.push(' ');
            // Some longer texts, so byte limits and the share matter.
            if b >= 250 {
                out.push_str(&"filler ".repeat(usize::from(b - 240) * 20));
            }
        }
        if out.trim().is_empty() {
            out.push_str("go");
        }
        out
    }
}

fuzz_target!(|data: &[u8]| {
    let Some((head, rest)) = data.split_first_chunk::<4>() else {
        return;
    };
    let mut bytes = Bytes(rest);
    let mut messages = vec![json!({"role": "system", "content": "You are a coding agent."})];
    let mut ids = 0usize;
    while let Some(op) = bytes.next() {
        match op % 4 {
            0 => messages.push(json!({"role": "user", "content": bytes.text()})),
            1 => messages.push(json!({"role": "assistant", "content": bytes.text()})),
            _ => {
                let calls = 1 + usize::from(op / 4 % 3);
                let mut list = Vec::new();
                for _ in 0..calls {
                    ids += 1;
                    let command = format!("cat src/f{}.py && {}", ids % 7, bytes.text());
                    list.push(json!({"id": format!("call_{ids}"), "type": "function",
                        "function": {"name": "bash", "arguments": json!({"command": command}).to_string()}}));
                }
                messages.push(
                    json!({"role": "assistant", "content": bytes.text(), "tool_calls": list}),
                );
                for k in 0..calls {
                    messages.push(json!({"role": "tool", "tool_call_id": format!("call_{}", ids + 1 + k - calls),
                        "content": bytes.text()}));
                }
            }
        }
    }
    let request = json!({"model": "gpt-test", "messages": messages}).to_string();
    let mut config = Config::default();
    config.session = "fuzz".into();
    config.compact.threshold = 200 + u64::from(head[0]) * 8;
    config.compact.planner = false;
    config.optical.enabled = tracelite::config::OpticalSwitch::Off;
    config.compact.min_saving = 0;
    config.compact.keep = usize::from(head[1] % 9);
    config.compact.user_share = f64::from(head[1] >> 4) / 400.0;
    config.compact.keep_tool_calls = head[2] & 1 == 0;
    config.redact.store = head[2] & 2 != 0;
    config.limits.max_compact_messages = 1 + usize::from(head[3] % 64);
    config.limits.max_compact_bytes = 1024 + usize::from(head[3]) * 256;
    let Ok(out) = compress_json(
        &request,
        &config,
        Env::new(&mut MemoryStore::new(), &mut HostState::default()),
    ) else {
        return;
    };
    let again = compress_json(
        &request,
        &config,
        Env::new(&mut MemoryStore::new(), &mut HostState::default()),
    )
    .expect("same input, same result");
    assert_eq!(out.request, again.request, "deterministic");
    assert!(
        out.request.len() <= request.len() + OVERHEAD,
        "output {} bytes, input {}",
        out.request.len(),
        request.len()
    );
    // Every tool call keeps its result, in the turn right after it (the
    // format's validator), and no result lost its call.
    let value: Value = serde_json::from_str(&out.request).expect("output is JSON");
    let conv = formats::parse(FormatName::OpenaiChat, &value).expect("output parses");
    formats::validate(&conv, FormatName::OpenaiChat).expect("tool calls paired and in place");
    let (mut calls, mut results) = (HashSet::new(), HashSet::new());
    for p in conv.messages.iter().flat_map(|m| &m.parts) {
        match &p.kind {
            PartKind::ToolCall(c) => calls.insert(c.id.clone()),
            PartKind::ToolResult(r) => results.insert(r.call_id.clone()),
            _ => false,
        };
    }
    assert_eq!(calls, results, "every tool call paired");
    // One blob per compaction, listing each compacted message.
    let compactions = out
        .report
        .changes
        .iter()
        .filter(|c| c.kind == "summary" && c.pointer.is_some())
        .count();
    let blobs: Vec<_> = out
        .spills
        .iter()
        .filter(|s| s.key.starts_with("compact-"))
        .collect();
    assert_eq!(blobs.len(), compactions);
    for blob in blobs {
        let listed = blob
            .text
            .lines()
            .skip(1)
            .take_while(|l| !l.starts_with("--- "))
            .filter(|l| l.starts_with("message "))
            .count();
        assert!(listed >= 1 && listed <= config.limits.max_compact_messages);
        if config.redact.store {
            assert!(!blob.text.contains("AKIAIOSFODNN7EXAMPLE"));
        }
    }
});
