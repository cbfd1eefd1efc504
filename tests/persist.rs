//! Caches between hosts (`src/persist.rs`): a state's rendered snapshots and
//! token counts exported as segments and imported into a fresh state give
//! byte-identical outputs without rendering again; a segment that does not
//! check out is `INVALID_CACHE` and adds nothing. Segments are sealed with an
//! HMAC-SHA256 under the host's key and bound to their session: a hostile
//! segment (swapped images, altered pixels, zeroed counts, another session's,
//! a forged or truncated MAC) is refused before anything of it is used.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)]

mod common;

use hmac::{Hmac, Mac};
use serde_json::{json, Value};
use tracelite::error::ErrorCode;
use tracelite::persist::{Imported, Seal};
use tracelite::tokens::{Estimator, TokenCounter};
use tracelite::{compress_json, Config, Env, HostState, MemoryStore, Output};

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
            &common::reading_conversation(turns),
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

/// The host's key.
const KEY: &[u8] = b"persist-test-key-0123456789abcdef";

fn export(state: &mut HostState, all: bool, rendered_only: bool) -> Option<String> {
    let seal = Seal {
        key: KEY,
        session: "s",
    };
    tracelite::persist::export(state, all, rendered_only, seal).unwrap()
}

fn import(state: &mut HostState, segment: &str, config: &Config) -> tracelite::Result<Imported> {
    tracelite::persist::import(state, segment, config, KEY)
}

/// `v` (a segment read as JSON, changed) sealed again with `key` for
/// `session`, as `export` seals: the MAC is the HMAC-SHA256 of the format,
/// the session and the text after the MAC, each after its length (u64 LE).
fn reseal(v: &Value, key: &[u8], session: &str) -> String {
    let text = v.to_string();
    let head = r#"{"format":"tracelite-cache/3","mac":""#;
    let body = &text[head.len() + 66..];
    let mut mac = <Hmac<sha2::Sha256> as Mac>::new_from_slice(key).unwrap();
    for part in ["tracelite-cache/3", session, body] {
        mac.update(&(part.len() as u64).to_le_bytes());
        mac.update(part.as_bytes());
    }
    let tag: String = mac
        .finalize()
        .into_bytes()
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    format!("{head}{tag}\",{body}")
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
        // Sealed by the key's holder: past the MAC, checked all the same.
        let mut fresh = HostState::default();
        let err = import(&mut fresh, &reseal(&v, KEY, "s"), &config()).unwrap_err();
        assert_eq!(
            (err.code, err.path.as_str()),
            (ErrorCode::InvalidCache, path.as_str())
        );
        assert!(fresh.optical.snapshots.is_empty() && fresh.counts.is_empty());
    }
    let mut v = good.clone();
    v["version"] = json!("0.0.0");
    let mut fresh = HostState::default();
    let r = import(&mut fresh, &reseal(&v, KEY, "s"), &config()).unwrap();
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

/// Every hostile segment issue 39 tried, and the MAC's own failures: each is
/// refused with `INVALID_CACHE` naming what failed, adds nothing, and the
/// next output is byte-identical to a cold one; the genuine segment warms.
#[test]
fn a_hostile_segment_is_refused_and_changes_no_output() {
    let mut host = Host::new();
    host.compress(8);
    let genuine = export(&mut host.state, false, false).unwrap();
    let good: Value = serde_json::from_str(&genuine).unwrap();
    let rendered: Vec<usize> = good["snapshots"]
        .as_array()
        .unwrap()
        .iter()
        .enumerate()
        .filter(|(_, s)| !s["images"].as_array().unwrap().is_empty())
        .map(|(i, _)| i)
        .collect();
    assert!(rendered.len() >= 2, "two rendered snapshots to swap");
    let changed = |f: &dyn Fn(&mut Value)| {
        let mut v = good.clone();
        f(&mut v);
        v.to_string()
    };
    let (a, b) = (rendered[0], rendered[1]);
    let session_b = Config::from_json_str(r#"{"session":"b"}"#).unwrap();
    let mac = good["mac"].as_str().unwrap().to_string();
    let cases: Vec<(&str, String, &[u8], Config, &str)> = vec![
        (
            "images swapped between two keys",
            changed(&|v| {
                let (ka, kb) = (
                    v["snapshots"][a]["key"].clone(),
                    v["snapshots"][b]["key"].clone(),
                );
                v["snapshots"][a]["key"] = kb;
                v["snapshots"][b]["key"] = ka;
            }),
            KEY,
            config(),
            "cache.mac",
        ),
        (
            "pixels altered",
            changed(&|v| {
                let png = v["snapshots"][a]["images"][0].as_str().unwrap().to_string();
                let mid = png.len() / 2;
                let flipped = if &png[mid..=mid] == "A" { "B" } else { "A" };
                v["snapshots"][a]["images"][0] =
                    json!(format!("{}{flipped}{}", &png[..mid], &png[mid + 1..]));
            }),
            KEY,
            config(),
            "cache.mac",
        ),
        (
            "counts zeroed",
            changed(&|v| {
                for c in v["counts"].as_array_mut().unwrap() {
                    c[2] = json!(0);
                }
            }),
            KEY,
            config(),
            "cache.mac",
        ),
        (
            "another session's segment",
            genuine.clone(),
            KEY,
            session_b,
            "cache.mac",
        ),
        (
            "another key",
            genuine.clone(),
            b"another-key-0123456789abcdef",
            config(),
            "cache.mac",
        ),
        (
            "MAC truncated",
            genuine.replacen(&mac, &mac[..63], 1),
            KEY,
            config(),
            "cache.mac",
        ),
        (
            "MAC forged",
            genuine.replacen(&mac, &"0".repeat(64), 1),
            KEY,
            config(),
            "cache.mac",
        ),
        (
            "MAC removed",
            changed(&|v| {
                v.as_object_mut().unwrap().remove("mac");
            }),
            KEY,
            config(),
            "cache.mac",
        ),
        (
            "segment truncated",
            genuine[..genuine.len() / 2].to_string(),
            KEY,
            config(),
            "cache.mac",
        ),
        (
            "an unsealed segment of the old format",
            changed(&|v| {
                v["format"] = json!("tracelite-cache/2");
                v.as_object_mut().unwrap().remove("mac");
            }),
            KEY,
            config(),
            "cache.format",
        ),
    ];
    let mut cold = Host::new();
    let reference = cold.compress(9);
    for (what, segment, key, config, path) in cases {
        let mut target = Host::new();
        let err =
            tracelite::persist::import(&mut target.state, &segment, &config, key).expect_err(what);
        assert_eq!(
            (err.code, err.path.as_str()),
            (ErrorCode::InvalidCache, path),
            "{what}"
        );
        assert!(
            target.state.optical.snapshots.is_empty() && target.state.counts.is_empty(),
            "{what}"
        );
        same(&target.compress(9), &reference);
    }
    // Without a key (or with a short one) nothing is imported nor exported.
    for key in [&b""[..], b"short"] {
        let mut target = Host::new();
        let err =
            tracelite::persist::import(&mut target.state, &genuine, &config(), key).unwrap_err();
        assert_eq!(
            (err.code, err.path.as_str()),
            (ErrorCode::InvalidOption, "key")
        );
        let seal = Seal { key, session: "s" };
        let err = tracelite::persist::export(&mut host.state, true, false, seal).unwrap_err();
        assert_eq!(
            (err.code, err.path.as_str()),
            (ErrorCode::InvalidOption, "key")
        );
    }
    // The genuine segment warms: fewer renders, the same output.
    let mut warm = Host::new();
    let r = import(&mut warm.state, &genuine, &config()).unwrap();
    assert!(r.snapshots > 0 && r.counts > 0);
    same(&warm.compress(9), &reference);
    assert!(warm.state.optical.snapshots.rendered < cold.state.optical.snapshots.rendered);
}
