//! The planner through the whole pipeline: demotions are committed only when
//! they pay (or the request is over the compaction threshold), deferred ones
//! are explained in dollars, and a dearer cache means fewer prefix breaks.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)]

use serde_json::json;
use tracelite::config::{Config, Provider};
use tracelite::pipeline::{compress_json, Env, HostState, Output};
use tracelite::plan::CandidateKind;
use tracelite::tokens::Estimator;
use tracelite::MemoryStore;

/// A build log of `i`: long enough for a snapshot to pay.
fn output(i: usize) -> String {
    (0..60)
        .map(|l| {
            format!(
                "step {i} line {l}: compiling module_{l} ... ok ({} ms)",
                l * 7 + i
            )
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// The request after `n` tool calls (OpenAI chat).
fn request(n: usize) -> String {
    let mut messages = vec![
        json!({"role": "system", "content": "You are a coding agent."}),
        json!({"role": "user", "content": "Build the project."}),
    ];
    for i in 0..n {
        messages.push(json!({"role": "assistant", "content": null, "tool_calls": [{"id": format!("call_{i}"), "type": "function",
            "function": {"name": "bash", "arguments": json!({"command": format!("make step{i}")}).to_string()}}]}));
        messages.push(
            json!({"role": "tool", "tool_call_id": format!("call_{i}"), "content": output(i)}),
        );
    }
    json!({"model": "gpt-4o", "messages": messages}).to_string()
}

fn config(provider: Provider, plan: serde_json::Value) -> Config {
    let mut c = Config::from_json(json!({"provider": provider, "plan": plan})).unwrap();
    c.compact.enabled = false;
    c
}

/// Every request of an `n`-step session, each with the previous output (the
/// state only caches renders: tests/session.rs checks the bytes match a
/// fresh state's).
fn session(config: &Config, n: usize) -> Vec<Output> {
    let mut store = MemoryStore::new();
    let mut state = HostState::default();
    let mut outs: Vec<Output> = Vec::new();
    for i in 1..=n {
        let previous = outs.last().map(|o| o.request.clone());
        let out = compress_json(
            &request(i),
            config,
            Env {
                store: &mut store,
                counter: &Estimator,
                state: &mut state,
                previous: previous.as_deref(),
                format: None,
                known: Default::default(),
            },
        )
        .unwrap();
        outs.push(out);
    }
    outs
}

/// Requests whose prefix broke: less than the previous request (minus its closing `]}`) shared.
fn breaks(outs: &[Output]) -> usize {
    outs.iter()
        .filter_map(|o| o.report.prefix.as_ref())
        .filter(|p| p.shared_bytes < p.previous_bytes - 2)
        .count()
}

#[test]
fn deferred_moves_are_explained_in_dollars() {
    let outs = session(&config(Provider::Anthropic, json!({})), 24);
    let candidates: Vec<_> = outs
        .iter()
        .flat_map(|o| o.report.plan.candidates.clone())
        .collect();
    assert!(candidates.iter().all(|c| c.kind == CandidateKind::Demotion));
    let deferred: Vec<_> = candidates.iter().filter(|c| !c.committed).collect();
    let committed: Vec<_> = candidates.iter().filter(|c| c.committed).collect();
    assert!(
        !deferred.is_empty() && !committed.is_empty(),
        "{candidates:#?}"
    );
    for c in &deferred {
        assert!(c.saving <= c.cost_now, "{c:?}");
        assert!(c.reason.contains("deferred"), "{c:?}");
    }
    for c in &committed {
        assert!(c.saving > c.cost_now, "{c:?}");
        assert!(c.tokens_saved > 0);
    }
    // Deferred observations stay text until a move covers them.
    let last = outs.last().unwrap();
    assert_eq!(
        last.report.plan.demoted,
        committed.last().unwrap().observations.unwrap()[1]
    );
    assert!(last.report.plan.prices_source.contains("list prices"));
}

#[test]
fn a_dearer_cache_breaks_the_prefix_less_often() {
    let n = 20;
    let fixed = breaks(&session(
        &config(Provider::Anthropic, json!({"enabled": false})),
        n,
    ));
    let planned = breaks(&session(&config(Provider::Anthropic, json!({})), n));
    let short = breaks(&session(
        &config(Provider::Anthropic, json!({"horizon": 1})),
        n,
    ));
    assert!(
        planned < fixed,
        "planned {planned} vs fixed batches {fixed}"
    );
    assert!(short <= planned, "horizon 1: {short} vs derived: {planned}");
    // Cheap cache writes relative to reads (OpenAI-like) move at least as often.
    let cheap = breaks(&session(
        &config(
            Provider::Anthropic,
            json!({"prices": {"input": 1, "cachedInput": 0.5, "cacheWrite": 1}}),
        ),
        n,
    ));
    assert!(cheap >= planned, "cheap writes {cheap} vs {planned}");
}

#[test]
fn over_the_compaction_threshold_it_commits_even_when_it_does_not_pay() {
    let mut c = config(Provider::Anthropic, json!({"horizon": 1}));
    c.compact.threshold = 8_000;
    let outs = session(&c, 12);
    let forced: Vec<_> = outs
        .iter()
        .flat_map(|o| o.report.plan.candidates.clone())
        .filter(|c| c.committed && c.reason.contains("compaction threshold"))
        .collect();
    assert!(!forced.is_empty());
    assert!(outs.last().unwrap().report.plan.demoted > 0);
}

#[test]
fn plan_options_are_validated_by_name() {
    for (bad, path) in [
        (json!({"plan": {"minHorizon": 0}}), "plan.minHorizon"),
        (
            json!({"plan": {"minHorizon": 50, "maxHorizon": 20}}),
            "plan.minHorizon",
        ),
        (
            json!({"plan": {"prices": {"input": -1, "cachedInput": 0, "cacheWrite": 0}}}),
            "plan.prices",
        ),
        (json!({"plan": {"horizon": 100000}}), "plan.horizon"),
    ] {
        let e = Config::from_json(bad.clone()).unwrap_err();
        assert_eq!(e.path, path, "{bad}");
    }
}
