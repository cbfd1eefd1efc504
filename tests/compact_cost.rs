//! Replay cost with prompt caching for three compaction policies over the
//! shared trajectories: never compact, compact whenever over the threshold,
//! and the cache-aware planner. Heavy: run in release mode,
//!
//! ```text
//! TRACELITE_TRACES=../shared/traces cargo test --release --test compact_cost -- --ignored --nocapture
//! ```
//!
//! Each request an agent loop sends before step t (`Trajectory::conversation_at(t)`)
//! goes through the pipeline with one session state per trajectory; the
//! emitted request's tokens are priced with the part shared with the previous
//! request (whole messages, at least 1,024 tokens) as cached input.
#![allow(
    clippy::indexing_slicing,
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic
)]

mod common;

use serde_json::{json, Value};
use tracelite::config::Provider;
use tracelite::formats::{emit, FormatName};
use tracelite::model::Conversation;
use tracelite::plan::prices::{default_prices, turn_cost};
use tracelite::tokens::{Estimator, Meter};
use tracelite::{compress_json, Config, Env, HostState, MemoryStore};

#[derive(Default, Clone, Copy)]
struct Totals {
    requests: u64,
    input: u64,
    cached: u64,
    cost: f64,
    compactions: u64,
}

fn replay(t: &tracelite::Trajectory, config: &Config, provider: Provider) -> Totals {
    let (prices, _) = default_prices(provider);
    let mut store = MemoryStore::new();
    let mut state = HostState::default();
    let mut previous: Option<Conversation> = None;
    let mut totals = Totals::default();
    let meter = Meter {
        counter: &Estimator,
        provider,
        optical: &config.optical,
    };
    for step in 0..t.steps.len() {
        let conv = t.conversation_at(step).unwrap();
        let req = serde_json::to_string(&emit(FormatName::OpenaiChat, &conv)).unwrap();
        let out = compress_json(
            &req,
            config,
            Env {
                store: &mut store,
                counter: &Estimator,
                state: &mut state,
                previous: None,
                format: None,
                known: Default::default(),
            },
        )
        .unwrap();
        let now = out.conversation;
        let total = meter.conversation(&now).unwrap();
        let mut cached = 0;
        if let Some(prev) = &previous {
            let a = prev.system.iter().chain(&prev.messages);
            let b = now.system.iter().chain(&now.messages);
            for (x, y) in a.zip(b) {
                if x != y {
                    break;
                }
                cached += meter.message(y).unwrap();
            }
        }
        if cached < 1_024 {
            cached = 0;
        }
        totals.requests += 1;
        totals.input += total;
        totals.cached += cached;
        totals.cost += turn_cost(&prices, total, cached);
        totals.compactions += out
            .report
            .changes
            .iter()
            .filter(|c| c.kind == "summary" && c.pointer.is_some())
            .count() as u64;
        previous = Some(now);
    }
    totals
}

fn scenario(name: &str, base: Value, provider: Provider) {
    let files = common::trace_files();
    if files.is_empty() {
        eprintln!("no traces: skipped");
        return;
    }
    let policies: [(&str, Value); 4] = [
        ("never compact", json!({"enabled": false})),
        (
            "over threshold",
            json!({"planner": false, "detectStages": false}),
        ),
        ("planner", json!({"planner": true, "detectStages": false})),
        (
            "planner + stage boundaries",
            json!({"planner": true, "detectStages": true}),
        ),
    ];
    let (_, model) = default_prices(provider);
    println!("\n== {name} ({model} prices; options {base})");
    println!(
        "{:<28} {:>10} {:>14} {:>8} {:>11} {:>12}",
        "policy", "requests", "input tokens", "cached", "cost $", "compactions"
    );
    let mut never = 0.0;
    for (policy, compact) in policies {
        let mut options = base.clone();
        let mut c = options["compact"].take();
        if c.is_null() {
            c = json!({});
        }
        for (k, v) in compact.as_object().unwrap() {
            c[k] = v.clone();
        }
        options["compact"] = c;
        options["provider"] = serde_json::to_value(provider).unwrap();
        let mut sum = Totals::default();
        for file in &files {
            let t = common::load_trace(file);
            let mut o = options.clone();
            o["session"] = json!("cost");
            let config = Config::from_json(o).unwrap();
            let r = replay(&t, &config, provider);
            sum.requests += r.requests;
            sum.input += r.input;
            sum.cached += r.cached;
            sum.cost += r.cost;
            sum.compactions += r.compactions;
        }
        if policy == "never compact" {
            never = sum.cost;
        }
        println!(
            "{:<28} {:>10} {:>14} {:>7.1}% {:>11.2} {:>12}   ({:+.1}% vs never)",
            policy,
            sum.requests,
            sum.input,
            100.0 * sum.cached as f64 / sum.input.max(1) as f64,
            sum.cost,
            sum.compactions,
            100.0 * (sum.cost / never - 1.0)
        );
    }
}

#[test]
#[ignore]
fn replay_cost_of_three_policies() {
    // Only stage 5 runs, so the numbers isolate compaction.
    let off = json!({"enabled": false});
    let base = |budget: u64, threshold: u64| {
        json!({"budget": budget, "spill": off, "dedup": off, "phase": off, "optical": off,
               "compact": {"threshold": threshold}})
    };
    scenario(
        "defaults: budget 128k, threshold 100k (effective 96k)",
        base(128_000, 100_000),
        Provider::Openai,
    );
    scenario(
        "defaults: budget 128k, threshold 100k (effective 96k)",
        base(128_000, 100_000),
        Provider::Anthropic,
    );
    scenario(
        "early: budget 128k, threshold 30k (forced at 96k)",
        base(128_000, 30_000),
        Provider::Openai,
    );
    scenario(
        "early: budget 128k, threshold 30k (forced at 96k)",
        base(128_000, 30_000),
        Provider::Anthropic,
    );
    scenario(
        "small window: budget 32k (threshold and forced at 24k)",
        base(32_000, 100_000),
        Provider::Openai,
    );
    scenario(
        "small window: budget 32k (threshold and forced at 24k)",
        base(32_000, 100_000),
        Provider::Anthropic,
    );
}
