//! Criterion benchmarks of the whole pipeline on a typical request: the
//! request before the middle step of the median trajectory (by step count) of
//! `../shared/traces` (or `TRACELITE_TRACES`), falling back to the bundled
//! sample trajectory.
#![allow(missing_docs, clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::path::{Path, PathBuf};

use criterion::{criterion_group, criterion_main, BatchSize, Criterion};
use tracelite::formats::FormatName;
use tracelite::{
    compress_json, trajectory_to_request, Config, Env, HostState, MemoryStore, Trajectory,
};

fn traces_dir() -> Option<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let candidates = match std::env::var_os("TRACELITE_TRACES") {
        Some(dir) => vec![PathBuf::from(dir)],
        None => vec![
            root.join("../shared/traces"),
            root.join("../../shared/traces"),
        ],
    };
    candidates.into_iter().find(|d| d.is_dir())
}

/// The median trajectory by step count, and its name.
fn median_trajectory() -> (String, Trajectory) {
    let mut loaded: Vec<(usize, String, Trajectory)> = Vec::new();
    if let Some(dir) = traces_dir() {
        let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| p.extension().is_some_and(|e| e == "json"))
            .collect();
        files.sort();
        for f in files {
            let t = Trajectory::from_json(&std::fs::read_to_string(&f).unwrap()).unwrap();
            let name = f.file_stem().unwrap().to_string_lossy().into_owned();
            loaded.push((t.steps.len(), name, t));
        }
    }
    if loaded.is_empty() {
        let sample =
            Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/sample-trajectory.json");
        let t = Trajectory::from_json(&std::fs::read_to_string(sample).unwrap()).unwrap();
        return ("sample-trajectory".into(), t);
    }
    loaded.sort_by(|a, b| a.0.cmp(&b.0).then_with(|| a.1.cmp(&b.1)));
    let (_, name, t) = loaded.swap_remove((loaded.len() - 1) / 2);
    (name, t)
}

fn request_at(t: &Trajectory, step: usize) -> String {
    trajectory_to_request(t, step, FormatName::OpenaiChat)
        .unwrap()
        .to_string()
}

fn stages_off() -> Config {
    let mut config = Config::default();
    config.spill.enabled = false;
    config.dedup.enabled = false;
    config.phase.enabled = false;
    config.optical.enabled = tracelite::config::OpticalSwitch::Off;
    config.compact.enabled = false;
    config
}

fn bench_pipeline(c: &mut Criterion) {
    let (name, trajectory) = median_trajectory();
    let steps = trajectory.steps.len();
    let mid = request_at(&trajectory, steps / 2);
    let last = request_at(&trajectory, steps);
    eprintln!(
        "pipeline bench: {name}, {steps} steps; mid request {} bytes, last {} bytes",
        mid.len(),
        last.len()
    );
    // The model `make bench` prices for `openai` (bench/tokens.mjs BENCH_MODELS):
    // one that reads images, so the optical stage runs as before the capability table.
    let defaults = Config {
        model: "gpt-5".into(),
        ..Config::default()
    };
    let off = stages_off();

    let mut group = c.benchmark_group("pipeline");
    group.bench_function("compress_mid_trajectory", |b| {
        b.iter_batched(
            MemoryStore::new,
            |mut store| {
                compress_json(
                    &mid,
                    &defaults,
                    Env::new(&mut store, &mut HostState::default()),
                )
                .unwrap()
            },
            BatchSize::SmallInput,
        )
    });
    group.bench_function("compress_last_step", |b| {
        b.iter_batched(
            MemoryStore::new,
            |mut store| {
                compress_json(
                    &last,
                    &defaults,
                    Env::new(&mut store, &mut HostState::default()),
                )
                .unwrap()
            },
            BatchSize::SmallInput,
        )
    });
    group.bench_function("parse_emit_mid_trajectory", |b| {
        b.iter_batched(
            MemoryStore::new,
            |mut store| {
                compress_json(&mid, &off, Env::new(&mut store, &mut HostState::default())).unwrap()
            },
            BatchSize::SmallInput,
        )
    });
    group.finish();

    // A whole session: every step's request through one store and one state,
    // as the in-process controller runs it.
    let requests: Vec<String> = (0..steps).map(|t| request_at(&trajectory, t)).collect();
    let mut session = c.benchmark_group("session");
    session.sample_size(10);
    session.bench_function("replay_median_trajectory", |b| {
        b.iter(|| {
            let mut store = MemoryStore::new();
            let mut state = HostState::default();
            let mut previous: Option<String> = None;
            for request in &requests {
                let out = compress_json(
                    request,
                    &defaults,
                    Env {
                        store: &mut store,
                        counter: &tracelite::tokens::Estimator,
                        state: &mut state,
                        previous: previous.as_deref(),
                        format: None,
                        known: Default::default(),
                    },
                )
                .unwrap();
                previous = Some(out.request);
            }
        })
    });
    session.finish();
}

criterion_group!(benches, bench_pipeline);
criterion_main!(benches);
