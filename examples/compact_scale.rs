//! Cost of compacting a long conversation (issue 16, item 2): `n` one-word
//! messages alternating user / assistant after a system prompt, the
//! adversarial request of `bench/edge-load.mjs`, through `compress_json` with the
//! default config and a fresh in-memory store.
//!
//! ```text
//! cargo run --release --example compact_scale -- 10000 20000 40000 99999
//! cargo run --release --example compact_scale -- --unbounded 20000 40000 99999
//! ```
//!
//! (99,999 messages and the system prompt are the default `limits.maxMessages`.)
//! `node tests/tools/compact-scale.mjs` measures the same through the wasm
//! package (`--pkg DIR` for another build).
//! `--tools` makes the messages tool calls instead: each writes a new file
//! (`cat > f.py`) or runs one, with a one-line result.
//! `--unbounded` lifts `limits.maxCompactMessages` and `limits.maxCompactBytes`
//! (and the spill quota), so one compaction takes the whole history: the
//! cost of compacting itself rather than of the first chunk.
//!
//! Prints, per size: wall time, messages out, blobs stored, bytes stored and
//! what the compact stage noted. Run it under
//! `valgrind --tool=callgrind` for instruction counts that do not depend on
//! the machine's load.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, missing_docs)]

use std::time::Instant;

use serde_json::json;
use tracelite::{compress_json, Config, Env, HostState, MemoryStore};

fn request(n: usize, tools: bool) -> String {
    let mut messages = vec![json!({"role": "system", "content": "You are terse."})];
    if tools {
        // A task, then tool calls that each write a new file and read it.
        messages.push(json!({"role": "user", "content": "Write the files."}));
        for i in 0..n.saturating_sub(2) / 2 {
            let id = format!("call_{i}");
            let command = if i % 2 == 0 {
                format!("cat > src/gen/f{i}.py <<EOF\nx = {i}\nEOF")
            } else {
                format!("python src/gen/f{}.py", i - 1)
            };
            messages.push(json!({"role": "assistant", "content": null, "tool_calls": [{"id": id, "type": "function",
                "function": {"name": "bash", "arguments": json!({"command": command}).to_string()}}]}));
            messages
                .push(json!({"role": "tool", "tool_call_id": id, "content": format!("ok {i}")}));
        }
        messages.push(json!({"role": "user", "content": "Go on."}));
    } else {
        for i in 0..n {
            let role = if i % 2 == 1 { "assistant" } else { "user" };
            messages.push(json!({"role": role, "content": format!("word{i}")}));
        }
    }
    json!({"model": "gpt-4o-2024-08-06", "messages": messages}).to_string()
}

fn main() {
    let unbounded = std::env::args().any(|a| a == "--unbounded");
    let tools = std::env::args().any(|a| a == "--tools");
    let sizes: Vec<usize> = std::env::args()
        .skip(1)
        .filter(|a| !a.starts_with("--"))
        .map(|a| a.parse().expect("sizes are message counts"))
        .collect();
    let sizes = if sizes.is_empty() {
        vec![10_000, 20_000, 40_000, 99_999]
    } else {
        sizes
    };
    for n in sizes {
        let req = request(n, tools);
        let mut config = Config::default();
        let mut store = MemoryStore::new();
        if unbounded {
            config.limits.max_compact_messages = usize::MAX;
            config.limits.max_compact_bytes = usize::MAX;
            config.limits.max_spill_bytes_per_session = usize::MAX;
            store = MemoryStore::with_limits(tracelite::spill::StoreLimits {
                max_bytes: usize::MAX,
                max_session_bytes: usize::MAX,
                ttl_seconds: 0,
                ..tracelite::spill::StoreLimits::default()
            });
        }
        let start = Instant::now();
        let result = compress_json(
            &req,
            &config,
            Env::new(&mut store, &mut HostState::default()),
        );
        let ms = start.elapsed().as_secs_f64() * 1e3;
        match result {
            Ok(out) => {
                let bytes: usize = out.spills.iter().map(|s| s.text.len()).sum();
                let notes: Vec<&String> = out
                    .report
                    .stages
                    .iter()
                    .filter(|s| s.stage == tracelite::pipeline::StageName::Compact)
                    .flat_map(|s| &s.notes)
                    .collect();
                println!(
                    "{n:>7} messages: {ms:>10.1} ms; {} messages out, {} blobs ({bytes} bytes); {notes:?}",
                    out.conversation.messages.len(),
                    out.spills.len(),
                );
            }
            Err(e) => println!("{n:>7} messages: {ms:>10.1} ms; error {e}"),
        }
    }
}
