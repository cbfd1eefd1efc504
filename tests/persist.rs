//! Caches between hosts (`src/persist.rs`): a state's rendered snapshots and
//! token counts exported as segments and imported into a fresh state give
//! byte-identical outputs without rendering again; a segment that does not
//! check out is `INVALID_CACHE` and adds nothing.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)]

use serde_json::{json, Value};
use tracelite::error::ErrorCode;
use tracelite::persist::{export, import, Imported};
use tracelite::tokens::{Estimator, TokenCounter};
use tracelite::{compress_json, Config, Env, HostState, MemoryStore, Output};

/// A conversation of `turns` tool calls, each reading a different dense
/// 70-line file: older outputs are rendered at the defaults.
fn conversation(turns: usize) -> String {
    let mut messages = vec![
        json!({"role": "system", "content": "You are a coding agent."}),
        json!({"role": "user", "content": "Fix the failing parser tests in src/parse.py."}),
    ];
    for i in 0..turns {
        let id = format!("call_{i}");
        messages.push(json!({"role": "assistant", "content": null, "tool_calls": [{"id": id, "type": "function",
            "function": {"name": "bash", "arguments": json!({"command": format!("cat src/module_{i}.py")}).to_string()}}]}));
        let lines: Vec<String> = (0..70)
            .map(|l| format!("def handler_{i}_{l}(request, response, timeout={}):  # line {l} of module {i}: return response.status_code == {}", l * 7 % 60, 200 + l % 5))
            .collect();
        messages.push(json!({"role": "tool", "tool_call_id": id, "content": lines.join("\n")}));
    }
    json!({"model": "gpt-test", "messages": messages}).to_string()
}

struct Host {
    store: MemoryStore,
    state: HostState,
}

impl Host {
    fn new() -> Self {
        Host {
            store: MemoryStore::new(),
            state: HostState::default(),
        }
    }

    fn compress_with(&mut self, turns: usize, counter: &dyn TokenCounter) -> Output {
        compress_json(
            &conversation(turns),
            &config(),
            Env {
                store: &mut self.store,
                counter,
                state: &mut self.state,
                previous: None,
                format: None,
                known: Default::default(),
            },
        )
        .unwrap()
    }

    fn compress(&mut self, turns: usize) -> Output {
        self.compress_with(turns, &Estimator)
    }
}

fn config() -> Config {
    Config::from_json_str(r#"{"session":"s"}"#).unwrap()
}

fn same(a: &Output, b: &Output) {
    assert_eq!(a.request, b.request);
    assert_eq!(
        serde_json::to_string(&a.report).unwrap(),
        serde_json::to_string(&b.report).unwrap()
    );
}

#[test]
fn imported_caches_give_the_same_output_without_rendering() {
    let mut first = Host::new();
    let mut segments = Vec::new();
    for t in 1..12 {
        first.compress(t);
        segments.extend(export(&mut first.state, false, false));
    }
    assert!(first.state.optical.snapshots.rendered > 0);
    assert_eq!(export(&mut first.state, false, false), None, "nothing new");
    let mut warm = Host::new();
    let mut added = Imported::default();
    for s in &segments {
        let r = import(&mut warm.state, s, &config()).unwrap();
        added.snapshots += r.snapshots;
        added.counts += r.counts;
    }
    assert!(added.snapshots > 0 && added.counts > 0);
    // Importing again adds nothing.
    let again = import(&mut warm.state, &segments[segments.len() - 1], &config()).unwrap();
    assert_eq!(again.snapshots + again.counts, 0);
    let mut cold = Host::new();
    let (w, c) = (warm.compress(12), cold.compress(12));
    same(&w, &c);
    assert!(c.report.changes.iter().any(|ch| ch.kind == "snapshot"));
    assert!(warm.state.optical.snapshots.rendered < cold.state.optical.snapshots.rendered);
    assert!(warm.state.counts.counted_bytes() * 4 < cold.state.counts.counted_bytes());
    // Deterministic: the same state exports the same bytes.
    let (mut x, mut y) = (Host::new(), Host::new());
    x.compress(9);
    y.compress(9);
    assert_eq!(
        export(&mut x.state, true, false),
        export(&mut y.state, true, false)
    );
    // Counts alone wait for a render when only renders are wanted.
    let mut z = Host::new();
    z.compress(2);
    assert_eq!(export(&mut z.state, false, true), None);
    let counts = export(&mut z.state, false, false).unwrap();
    assert!(counts.contains("\"snapshots\":[]") && !counts.contains("\"counts\":[]"));
}

#[test]
fn a_segment_that_does_not_check_out_adds_nothing() {
    let mut host = Host::new();
    host.compress(8);
    let good: Value =
        serde_json::from_str(&export(&mut host.state, false, false).unwrap()).unwrap();
    let at = good["snapshots"]
        .as_array()
        .unwrap()
        .iter()
        .position(|s| !s["images"].as_array().unwrap().is_empty())
        .unwrap();
    type Tamper = Box<dyn Fn(&mut Value)>;
    let cases: Vec<(Tamper, String)> = vec![
        (
            Box::new(|v| v["format"] = json!("x")),
            "cache.format".into(),
        ),
        (
            Box::new(|v| v["counts"] = json!([[1, 2, 3]])),
            "cache.counts[0][0]".into(),
        ),
        (
            Box::new(move |v| v["snapshots"][at]["imageSizes"][0][1] = json!(1)),
            format!("cache.snapshots[{at}].images[0]"),
        ),
        (
            Box::new(move |v| v["snapshots"][at]["imageRows"] = json!([])),
            format!("cache.snapshots[{at}].imageRows"),
        ),
        (
            Box::new(move |v| v["snapshots"][at]["rows"] = json!(-1)),
            format!("cache.snapshots[{at}].rows"),
        ),
    ];
    for (tamper, path) in cases {
        let mut v = good.clone();
        tamper(&mut v);
        let mut fresh = HostState::default();
        let err = import(&mut fresh, &v.to_string(), &config()).unwrap_err();
        assert_eq!(
            (err.code, err.path.as_str()),
            (ErrorCode::InvalidCache, path.as_str())
        );
        assert!(fresh.optical.snapshots.is_empty() && fresh.counts.is_empty());
    }
    let mut v = good.clone();
    v["version"] = json!("0.0.0");
    let mut fresh = HostState::default();
    let r = import(&mut fresh, &v.to_string(), &config()).unwrap();
    assert!(r.stale && r.snapshots == 0 && fresh.optical.snapshots.is_empty());
}

/// Prices every text at twice the estimate.
struct Doubled;

impl TokenCounter for Doubled {
    fn count(&self, text: &str) -> tracelite::Result<u64> {
        Ok(2 * tracelite::tokens::estimate(text))
    }
}

#[test]
fn counts_serve_only_the_counter_that_made_them() {
    let mut host = Host::new();
    host.compress_with(9, &Doubled);
    // The same state, now with the estimator: the host counter's counts are dropped.
    let mut cold = Host::new();
    same(&host.compress(10), &cold.compress(10));
    let mut other = Host::new();
    other.compress_with(9, &Doubled);
    let segment = export(&mut other.state, false, false).unwrap();
    let mut fresh = Host::new();
    assert!(
        import(&mut fresh.state, &segment, &config())
            .unwrap()
            .counts
            > 0
    );
    assert_eq!(fresh.state.counts.counter(), "host");
    same(&fresh.compress(10), &Host::new().compress(10));
}
