//! Spilling benchmarks: excerpt + put of a 5 MB log, grep over 5 MB, and a
//! whole `compress` of a request holding that log.
//!
//! `cargo bench --bench spill` (throughput is reported in MiB/s).
#![allow(
    missing_docs,
    clippy::indexing_slicing,
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic
)]

use criterion::{criterion_group, criterion_main, BatchSize, Criterion, Throughput};
use tracelite::spill::lines::LineIndex;
use tracelite::spill::{content_key, grep, ErrorSignals, Excerpt, GrepOptions, Kept, Pattern};
use tracelite::{compress_json, Config, Env, HostState, MemoryStore, SpillStore};

/// A deterministic build/test log of about `bytes` bytes with a few error lines.
fn log(bytes: usize) -> String {
    let mut out = String::with_capacity(bytes + 200);
    let mut state: u64 = 0x2545_f491_4f6c_dd1d;
    let mut i = 0u64;
    while out.len() < bytes {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        i += 1;
        match state % 1000 {
            0 => out.push_str("Traceback (most recent call last):\n"),
            1 => out.push_str("ValueError: invalid literal for int() with base 10\n"),
            2..=4 => out.push_str(&format!(
                "tests/test_mod_{}.py::test_case_{} FAILED\n",
                i % 97,
                i % 13
            )),
            _ => out.push_str(&format!(
                "[{i:>8}] compiling src/module_{}/file_{}.rs ... ok ({} ms) {}\n",
                state % 211,
                state % 37,
                state % 997,
                "x".repeat((state % 60) as usize)
            )),
        }
    }
    out
}

fn bench(c: &mut Criterion) {
    let text = log(5 << 20);
    let config = Config::default();
    let signals = ErrorSignals::new(&config.spill.error_patterns, 5).unwrap();
    let cap = config.result_cap();
    let count = |s: &str| Ok(tracelite::tokens::estimate(s));

    let mut g = c.benchmark_group("spill-5MB");
    g.sample_size(20);
    g.throughput(Throughput::Bytes(text.len() as u64));
    g.bench_function("excerpt+put", |b| {
        b.iter_batched(
            MemoryStore::new,
            |mut store| {
                let key = content_key("tool", &text);
                store.put("bench", &key, &text).unwrap();
                let pointer = Kept::Pointer(format!("spill://bench/{key}"));
                Excerpt::build(&text, cap, 0.65, &signals, &count, &pointer)
                    .unwrap()
                    .1
            },
            BatchSize::LargeInput,
        )
    });
    let index = LineIndex::new(&text);
    for (name, pattern, literal) in [
        ("grep-literal", "ValueError", true),
        ("grep-regex-prefix", "FAILED$", false),
        ("grep-regex-prefilter", r"test_case_\d+ FAILED", false),
        ("grep-regex-no-prefilter", r"\d+ FAILED", false),
    ] {
        let p = Pattern::new(pattern, literal, false).unwrap();
        g.bench_function(name, |b| {
            b.iter(|| {
                grep::grep(&text, &index, &p, &GrepOptions::default())
                    .map_or(0, |r| r.total_matches)
            })
        });
    }
    g.bench_function("compress-request", |b| {
        let request = serde_json::json!({
            "model": "m",
            "messages": [
                {"role": "user", "content": "build it"},
                {"role": "assistant", "content": null, "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "bash", "arguments": "{\"command\":\"make\"}"}}]},
                {"role": "tool", "tool_call_id": "c1", "content": text},
            ]
        })
        .to_string();
        b.iter_batched(
            MemoryStore::new,
            |mut store| compress_json(&request, &config, Env::new(&mut store, &mut HostState::default())).unwrap().request.len(),
            BatchSize::LargeInput,
        )
    });
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
