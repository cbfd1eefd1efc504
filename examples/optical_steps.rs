//! Where a warm replay's time goes, natively (issue 48, item 5): a real
//! trajectory replayed turn by turn, each turn compressed at the defaults,
//! with optical off and with every stage off (parse + emit only), the three
//! interleaved, each configuration in its own session state; the first replay
//! warms the caches of the process, a step's time is its median over the
//! others. Prints the heaviest steps, the sums, the p95 per step and their
//! ratios. `perf record --call-graph dwarf` on it (with
//! `CARGO_PROFILE_RELEASE_DEBUG=true`) shows where the optical stage goes.
//!
//! ```text
//! cargo run --release --example optical_steps -- TRACE.json [--rounds 6] [--only defaults]
//! ```
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing,
    missing_docs
)]

use std::time::Instant;

use tracelite::formats::FormatName;
use tracelite::{compress_json, Config, Env, HostState, MemoryStore, Trajectory};

fn arg(name: &str) -> Option<String> {
    let args: Vec<String> = std::env::args().collect();
    args.iter()
        .position(|a| a == &format!("--{name}"))
        .and_then(|i| args.get(i + 1).cloned())
}

fn median(v: &[f64]) -> f64 {
    let mut v = v.to_vec();
    v.sort_by(f64::total_cmp);
    v[(v.len() - 1) / 2]
}

/// Nearest-rank quantile, as `bench/harness.mjs` computes it.
fn quantile(v: &[f64], q: f64) -> f64 {
    let mut v = v.to_vec();
    v.sort_by(f64::total_cmp);
    v[((v.len() as f64 * q).ceil() as usize).max(1) - 1]
}

const CONFIGS: [(&str, &str); 3] = [
    ("defaults", "{}"),
    ("optical off", r#"{"optical":{"enabled":false}}"#),
    (
        "parse + emit",
        r#"{"spill":{"enabled":false},"dedup":{"enabled":false},"phase":{"enabled":false},"optical":{"enabled":false},"compact":{"enabled":false}}"#,
    ),
];

fn main() {
    let file = std::env::args()
        .nth(1)
        .filter(|a| !a.starts_with("--"))
        .expect("usage: optical_steps TRACE.json [--rounds N] [--only NAME]");
    let rounds: usize = arg("rounds").map_or(6, |r| r.parse().unwrap());
    let only = arg("only");
    let trajectory = Trajectory::from_json(&std::fs::read_to_string(&file).unwrap()).unwrap();
    let requests: Vec<String> = (0..trajectory.steps.len())
        .map(|t| {
            tracelite::trajectory_to_request(&trajectory, t, FormatName::OpenaiChat)
                .unwrap()
                .to_string()
        })
        .collect();
    let configs: Vec<(&str, &str)> = CONFIGS
        .iter()
        .filter(|(name, _)| only.as_deref().map_or(true, |o| o == *name))
        .copied()
        .collect();
    let mut times = vec![vec![Vec::new(); requests.len()]; configs.len()];
    let mut images = vec![0usize; requests.len()];
    let mut rendered = vec![0u64; requests.len()];
    for round in 0..=rounds {
        let mut states: Vec<(MemoryStore, HostState)> = configs
            .iter()
            .map(|_| (MemoryStore::default(), HostState::default()))
            .collect();
        let parsed: Vec<Config> = configs
            .iter()
            .map(|(_, json)| {
                let mut v: serde_json::Value = serde_json::from_str(json).unwrap();
                v["session"] = format!("replay-{round}").into();
                Config::from_json(v).unwrap()
            })
            .collect();
        for (step, request) in requests.iter().enumerate() {
            for (k, config) in parsed.iter().enumerate() {
                let (store, state) = &mut states[k];
                let started = Instant::now();
                let out = compress_json(request, config, Env::new(store, state)).unwrap();
                let ms = started.elapsed().as_secs_f64() * 1e3;
                if round > 0 {
                    times[k][step].push(ms);
                }
                if k == 0 && round == 0 {
                    images[step] = out.request.matches("data:image/png;base64,").count();
                    rendered[step] = state.optical.snapshots.rendered;
                }
            }
        }
    }
    let per_step: Vec<Vec<f64>> = times
        .iter()
        .map(|steps| steps.iter().map(|t| median(t)).collect())
        .collect();
    println!(
        "{}: {} turns, {} measured replays",
        file.rsplit('/').next().unwrap_or(&file),
        requests.len(),
        rounds
    );
    let mut order: Vec<usize> = (0..requests.len()).collect();
    order.sort_by(|&a, &b| per_step[0][b].total_cmp(&per_step[0][a]));
    print!("step images rendered");
    for (name, _) in &configs {
        print!(" | {name:>12}");
    }
    println!();
    for &step in order.iter().take(12) {
        let before = step.checked_sub(1).map_or(0, |s| rendered[s]);
        print!(
            "{step:>4} {:>6} {:>8}",
            images[step],
            rendered[step] - before
        );
        for steps in &per_step {
            print!(" | {:>9.3} ms", steps[step]);
        }
        println!();
    }
    for (k, (name, _)) in configs.iter().enumerate() {
        let sum: f64 = per_step[k].iter().sum();
        let p95 = quantile(&per_step[k], 0.95);
        let p50 = quantile(&per_step[k], 0.5);
        print!("{name:>12}: sum {sum:8.2} ms, p50 {p50:6.3} ms, p95 {p95:6.3} ms");
        if k > 0 {
            print!(
                "; defaults ÷ this: sum {:.2}×, p95 {:.2}×",
                per_step[0].iter().sum::<f64>() / sum,
                quantile(&per_step[0], 0.95) / p95
            );
        }
        println!();
    }
}
