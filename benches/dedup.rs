//! Per-observation overhead of the dedup and phase stages (and the edit detector).
//!
//! `cargo bench --bench dedup`. With `TRACELITE_TRACES` (or `../shared/traces`)
//! present, real observations are used; otherwise synthetic code lines.
#![allow(
    missing_docs,
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)]

#[path = "../tests/common/mod.rs"]
mod common;

use criterion::{criterion_group, criterion_main, BatchSize, Criterion};
use tracelite::config::Config;
use tracelite::dedup::Dedup;
use tracelite::model::{Conversation, Message, Part, PartKind, Role, ToolCall, ToolResult};
use tracelite::phase::{EditDetector, Phase};
use tracelite::pipeline::{HostState, Stage, StageContext, StageName};
use tracelite::stage::SharedCaches;
use tracelite::tokens::Estimator;
use tracelite::{MemoryStore, Trajectory};

/// About `bytes` of text made of whole lines of `source`, starting at line `from`.
fn slice_lines(source: &[&str], from: usize, bytes: usize) -> String {
    let mut out = String::new();
    for line in source.iter().cycle().skip(from) {
        if out.len() + line.len() + 1 > bytes {
            break;
        }
        out.push_str(line);
        out.push('\n');
    }
    out
}

/// Source lines: the longest observation of the first trace, or synthetic code.
fn source_lines() -> Vec<String> {
    if let Some(path) = common::trace_files().into_iter().next() {
        let t = common::load_trace(&path);
        if let Some(obs) = t
            .steps
            .iter()
            .map(|s| &s.observation)
            .max_by_key(|o| o.len())
        {
            return obs.lines().map(String::from).collect();
        }
    }
    (0..400)
        .map(|i| {
            format!(
                "    value_{i} = compute(config.section_{}, key=\"k{i}\")",
                i % 17
            )
        })
        .collect()
}

/// Three 4 KB observations viewing overlapping ranges of the same file (window 3).
fn window_conversation() -> Conversation {
    let lines = source_lines();
    let lines: Vec<&str> = lines.iter().map(String::as_str).collect();
    let step = (lines.len() / 6).max(1);
    let mut conv = Conversation::default();
    conv.messages.push(Message::text(Role::User, "fix it"));
    for i in 0..3 {
        let id = format!("c{i}");
        conv.messages.push(Message {
            role: Role::Assistant,
            parts: vec![Part::from(PartKind::ToolCall(ToolCall {
                id: id.clone(),
                name: "bash".into(),
                arguments: format!("{{\"command\":\"nl -ba f.py | sed -n '{i},+80p'\"}}"),
            }))],
            layout: tracelite::model::Layout::Null,
            extra: Default::default(),
        });
        conv.messages.push(Message {
            role: Role::Tool,
            parts: vec![Part::from(PartKind::ToolResult(ToolResult {
                call_id: id,
                parts: vec![Part::text(slice_lines(&lines, i * step, 4096))],
                is_error: false,
            }))],
            layout: tracelite::model::Layout::Text,
            extra: Default::default(),
        });
    }
    conv
}

fn full_history() -> Option<(Trajectory, Conversation)> {
    let path = common::trace_files().into_iter().next()?;
    let t = common::load_trace(&path);
    let conv = t.conversation_at(t.steps.len()).unwrap();
    Some((t, conv))
}

fn run<T: Stage>(stage: &T, conv: &mut Conversation, config: &Config) -> usize
where
    T::State: Default,
{
    let mut store = MemoryStore::new();
    let mut state = HostState::default();
    let mut own = T::State::default();
    let caches = SharedCaches {
        keys: &mut state.keys,
        redacted: &mut state.redacted,
        activities: &mut state.activities,
    };
    let mut cx = StageContext::new(config, &Estimator, &mut store, caches, &mut own);
    cx.stage = StageName::Dedup;
    stage.apply(conv, &mut cx).unwrap();
    cx.changes.len()
}

fn benches(c: &mut Criterion) {
    let config = Config::default();
    let window = window_conversation();
    assert!(
        run(&Dedup, &mut window.clone(), &config) > 0,
        "the window bench must dedup something"
    );
    c.bench_function("dedup/window-3x4KB", |b| {
        b.iter_batched(
            || window.clone(),
            |mut conv| run(&Dedup, &mut conv, &config),
            BatchSize::SmallInput,
        )
    });
    c.bench_function("clone/window-3x4KB (baseline of the above)", |b| {
        b.iter_batched(|| (), |_| window.clone(), BatchSize::SmallInput)
    });
    let Some((trajectory, history)) = full_history() else {
        return;
    };
    let n = history.observations().len();
    println!(
        "full history: {} steps, {n} observations, {} bytes of observations",
        trajectory.steps.len(),
        trajectory
            .steps
            .iter()
            .map(|s| s.observation.len())
            .sum::<usize>()
    );
    c.bench_function("dedup/full-history (stateless turn)", |b| {
        b.iter_batched(
            || history.clone(),
            |mut conv| run(&Dedup, &mut conv, &config),
            BatchSize::LargeInput,
        )
    });
    c.bench_function("phase/full-history (stateless turn)", |b| {
        b.iter_batched(
            || history.clone(),
            |mut conv| run(&Phase, &mut conv, &config),
            BatchSize::LargeInput,
        )
    });
    let detector = EditDetector::new(&config.phase);
    let steps = history.steps();
    c.bench_function("detector/classify every call of the run", |b| {
        b.iter(|| {
            steps
                .iter()
                .filter(|s| detector.classify(s.call).is_some())
                .count()
        })
    });
}

criterion_group!(group, benches);
criterion_main!(group);
