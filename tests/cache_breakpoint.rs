//! The stable prefix (`Report::stable_messages`) and the Anthropic
//! `cache_control` breakpoint placed at its end: turn after turn, the
//! messages before the boundary stay byte-identical (breakpoint markers
//! aside, which Anthropic does not hash), so the next batch reads them from
//! the prompt cache.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing,
    clippy::field_reassign_with_default
)]

mod common;

use std::path::{Path, PathBuf};

use serde_json::Value;
use tracelite::formats::FormatName;
use tracelite::{Config, HostState, MemoryStore};

/// Messages of an Anthropic request with every `cache_control` removed.
fn unmarked(request: &Value) -> Vec<Value> {
    fn strip(v: &mut Value) {
        match v {
            Value::Object(map) => {
                map.remove("cache_control");
                map.values_mut().for_each(strip);
            }
            Value::Array(items) => items.iter_mut().for_each(strip),
            _ => {}
        }
    }
    let mut messages = request["messages"].as_array().unwrap().clone();
    messages.iter_mut().for_each(strip);
    messages
}

/// Paths to `"cache_control"` members in `v`.
fn markers(v: &Value, path: String, out: &mut Vec<String>) {
    match v {
        Value::Object(map) => {
            for (k, x) in map {
                if k == "cache_control" {
                    out.push(path.clone());
                }
                markers(x, format!("{path}.{k}"), out);
            }
        }
        Value::Array(items) => {
            for (i, x) in items.iter().enumerate() {
                markers(x, format!("{path}[{i}]"), out);
            }
        }
        _ => {}
    }
}

/// Replays `path` in Anthropic format turn by turn; returns (turns checked,
/// turns whose stable prefix grew past the first observation).
fn replay(path: &Path, config: &Config, turns: usize) -> (usize, usize) {
    let trajectory = common::load_trace(path);
    let mut store = MemoryStore::new();
    let mut state = HostState::default();
    let mut previous: Option<(Vec<Value>, usize)> = None;
    let (mut checked, mut grown) = (0, 0);
    for t in 1..trajectory.steps.len().min(turns) {
        let req = tracelite::trajectory_to_request(&trajectory, t, FormatName::Anthropic)
            .unwrap()
            .to_string();
        let out = common::compress_in(&req, config, &mut store, &mut state);
        let request: Value = serde_json::from_str(&out.request).unwrap();
        let stable = out.report.stable_messages;
        let messages = unmarked(&request);
        assert!(stable <= messages.len(), "turn {t}");
        // A breakpoint on the last message of the stable prefix, one at the
        // end of the request, one after the leading user messages: each
        // reported, never more than 4.
        let mut found = Vec::new();
        markers(&request, String::new(), &mut found);
        assert!(found.len() <= 4, "turn {t}: {found:?}");
        assert_eq!(found.len(), out.report.cache_breakpoints.len(), "turn {t}");
        for at in &out.report.cache_breakpoints {
            let mark = format!(".messages[{at}].content[");
            assert!(
                found.iter().any(|f| f.starts_with(&mark)),
                "turn {t}: {found:?}"
            );
        }
        match out.report.cache_breakpoint {
            Some(at) => {
                assert_eq!(at + 1, stable, "turn {t}");
                assert_eq!(out.report.cache_breakpoints.first(), Some(&at));
                let last = messages.len() - 1;
                assert!(
                    out.report.cache_breakpoints.contains(&last),
                    "turn {t}: end of request"
                );
            }
            None => assert!(found.is_empty() && !config.cache_breakpoint || stable == 0),
        }
        if let Some((prev, prev_stable)) = &previous {
            let changed = (0..*prev_stable).find(|&i| prev[i] != messages[i]);
            assert_eq!(
                changed,
                None,
                "{}: turn {t} rewrote message {changed:?} of turn {}'s stable prefix ({prev_stable} messages)",
                path.display(),
                t - 1
            );
            checked += 1;
        }
        let first_observation = messages
            .iter()
            .position(|m| m.to_string().contains("\"tool_result\""))
            .unwrap_or(messages.len());
        if stable > first_observation + 1 {
            grown += 1;
        }
        previous = Some((messages, stable));
    }
    (checked, grown)
}

/// Stages that change history at unpredictable turns (the first edit,
/// compaction) off; everything driven by new observations on.
fn batched_stages() -> Config {
    let mut c = Config::default();
    c.provider = tracelite::config::Provider::Anthropic;
    c.phase.enabled = false;
    c.compact.enabled = false;
    // Long outputs stay whole and the horizon is long: the planner moves the
    // boundary within the first 40 steps even at Anthropic's write price.
    c.spill.fraction = 0.25;
    c.plan.max_horizon = 200;
    c
}

fn files() -> Vec<PathBuf> {
    let sample =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/sample-trajectory.json");
    let mut files = vec![sample];
    files.extend(common::trace_files().into_iter().step_by(7).take(4));
    files
}

#[test]
fn stable_prefix_survives_the_next_turn_and_carries_the_breakpoint() {
    let mut grown = 0;
    for path in files() {
        let (checked, g) = replay(&path, &batched_stages(), 40);
        assert!(checked > 0, "{}", path.display());
        grown += g;
    }
    assert!(
        grown > 0,
        "the stable prefix never moved past the first observation"
    );
}

#[test]
fn unbatched_dedup_and_a_larger_window_keep_the_guarantee() {
    let mut c = batched_stages();
    c.dedup.batched = false;
    c.window = 5;
    c.optical.batch = 2;
    for path in files() {
        replay(&path, &c, 30);
    }
}

/// Live views kept as text (bounded by count) change only with the boundary.
#[test]
fn kept_live_views_keep_the_guarantee() {
    let mut c = batched_stages();
    c.dedup.batched = false;
    c.optical.keep_live_views = true;
    for bound in [1, 0] {
        c.optical.max_live_views = bound;
        for path in files() {
            replay(&path, &c, 30);
        }
    }
}

#[test]
fn breakpoint_is_optional() {
    let mut c = batched_stages();
    c.cache_breakpoint = false;
    for path in files() {
        replay(&path, &c, 12);
    }
}
