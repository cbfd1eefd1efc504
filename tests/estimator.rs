//! The built-in estimator stays within ±10% mean absolute percentage error of
//! o200k_base on real observations (reference counts made with js-tiktoken by
//! `tests/tools/o200k-counts.mjs`).
#![allow(
    clippy::indexing_slicing,
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic
)]

use std::collections::BTreeMap;

mod common;

#[test]
#[cfg_attr(tracelite_no_traces, ignore = "needs ../shared/traces")]
fn estimator_error_against_o200k_is_within_ten_percent() {
    let counts: BTreeMap<String, Vec<u64>> =
        serde_json::from_str(&std::fs::read_to_string("tests/fixtures/o200k-counts.json").unwrap())
            .unwrap();
    let dir = common::traces_dir().expect("../shared/traces or TRACELITE_TRACES");
    let mut by_source: BTreeMap<String, (f64, usize)> = BTreeMap::new();
    for (file, reference) in &counts {
        let trace = common::load_trace(&dir.join(file));
        let source = file.split('_').next().unwrap().to_string();
        for (step, &exact) in trace.steps.iter().zip(reference) {
            if exact == 0 {
                continue;
            }
            let est = tracelite::tokens::estimate(&step.observation) as f64;
            let e = by_source.entry(source.clone()).or_default();
            e.0 += (est - exact as f64).abs() / exact as f64;
            e.1 += 1;
        }
    }
    let mut total = (0.0, 0);
    for (source, (sum, n)) in &by_source {
        let mape = sum / *n as f64;
        eprintln!("{source}: MAPE {:.2}% over {n} observations", mape * 100.0);
        assert!(mape < 0.10, "{source}: MAPE {mape}");
        total.0 += sum;
        total.1 += n;
    }
    let mape = total.0 / total.1 as f64;
    eprintln!(
        "all: MAPE {:.2}% over {} observations",
        mape * 100.0,
        total.1
    );
    assert!(mape < 0.10);
}
