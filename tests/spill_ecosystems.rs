//! Recall of the ecosystem corpus (issue 53): every output recorded from a
//! real tool by `tests/fixtures/record-ecosystems.py` is spilled at a 16,000
//! token budget, and the excerpt must name, as text, every failing test its
//! ground truth (`<name>.json`) lists, the line saying why it failed, and
//! every error location. Prints the per-tool recall table; with
//! `TRACELITE_ECOSYSTEMS_REPORT=FILE` also writes it there as Markdown
//! (`make bench-ecosystems` writes `bench/ECOSYSTEMS.md`).
#![allow(
    clippy::indexing_slicing,
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic
)]

use std::path::{Path, PathBuf};

use regex_lite::Regex;
use serde_json::{json, Value};
use tracelite::spill;
use tracelite::tokens::Estimator;
use tracelite::{Config, MemoryStore};

const BUDGET: u64 = 16_000;

fn corpus() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/ecosystems")
}

/// The fixtures' names, sorted.
fn fixtures() -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(corpus())
        .unwrap()
        .filter_map(|e| {
            let name = e.unwrap().file_name().into_string().unwrap();
            name.strip_suffix(".json").map(str::to_string)
        })
        .collect();
    names.sort();
    names
}

/// Whether `text` names the location `file`:`line` in one of the forms tools
/// print: `file:line`, `file(line,col)` (tsc), `File "file", line N`
/// (Python), or eslint's `line:col  error` under the file's heading.
fn names_location(text: &str, file: &str, line: u64) -> bool {
    let f = regex_lite::escape(file);
    let forms = [
        format!(r"{f}:{line}\b"),
        format!(r"{f}\({line},"),
        format!(r#"{f}", line {line}\b"#),
    ];
    if forms.iter().any(|p| Regex::new(p).unwrap().is_match(text)) {
        return true;
    }
    let grouped = Regex::new(&format!(r"(?m)(^|: )\s*{line}:\d+\s+error\b")).unwrap();
    text.contains(file) && grouped.is_match(text)
}

/// Found / expected of each kind for one fixture.
#[derive(Default, Clone, Copy)]
struct Recall {
    tests: (usize, usize),
    reasons: (usize, usize),
    errors: (usize, usize),
}

impl Recall {
    fn complete(&self) -> bool {
        self.tests.0 == self.tests.1
            && self.reasons.0 == self.reasons.1
            && self.errors.0 == self.errors.1
    }
}

fn cell((found, all): (usize, usize)) -> String {
    if all == 0 {
        "–".to_string()
    } else {
        format!("{found}/{all} ({:.0}%)", 100.0 * found as f64 / all as f64)
    }
}

#[test]
fn every_failing_test_and_error_location_of_every_tool_survives_the_spill() {
    let config = Config::from_json(json!({"budget": BUDGET, "session": "eco"})).unwrap();
    let mut rows = Vec::new();
    let mut misses = Vec::new();
    let mut total = Recall::default();
    for name in fixtures() {
        let truth: Value = serde_json::from_str(
            &std::fs::read_to_string(corpus().join(format!("{name}.json"))).unwrap(),
        )
        .unwrap();
        let text = std::fs::read_to_string(corpus().join(format!("{name}.txt"))).unwrap();
        let mut store = MemoryStore::new();
        let spilled = spill::api::spill_text(&text, None, &config, &mut store, &Estimator).unwrap();
        assert!(spilled.spilled, "{name}: under the cap, nothing to measure");
        let excerpt = &spilled.text;
        let mut r = Recall::default();
        for t in truth["failingTests"].as_array().unwrap() {
            for (key, slot) in [("id", &mut r.tests), ("reason", &mut r.reasons)] {
                let want = t[key].as_str().unwrap();
                slot.1 += 1;
                if excerpt.contains(want) {
                    slot.0 += 1;
                } else {
                    misses.push(format!("{name}: test {key} {want:?}"));
                }
            }
        }
        for e in truth["errors"].as_array().unwrap() {
            let (file, line) = (e["file"].as_str().unwrap(), e["line"].as_u64().unwrap());
            r.errors.1 += 1;
            if names_location(excerpt, file, line) {
                r.errors.0 += 1;
            } else {
                misses.push(format!("{name}: error {file}:{line}"));
            }
        }
        if !r.complete() {
            misses.push(format!("--- {name} excerpt ---\n{excerpt}\n---"));
        }
        for (sum, part) in [
            (&mut total.tests, r.tests),
            (&mut total.reasons, r.reasons),
            (&mut total.errors, r.errors),
        ] {
            sum.0 += part.0;
            sum.1 += part.1;
        }
        rows.push(format!(
            "| {name} | {} | {} KB | {} | {} | {} |",
            truth["tool"].as_str().unwrap(),
            text.len() / 1000,
            cell(r.tests),
            cell(r.reasons),
            cell(r.errors),
        ));
    }
    let table = format!(
        "| fixture | tool | output | failing tests named | why (first line) | error locations |\n|---|---|---|---|---|---|\n{}\n| all | | | {} | {} | {} |\n",
        rows.join("\n"),
        cell(total.tests),
        cell(total.reasons),
        cell(total.errors),
    );
    println!("{table}");
    if let Ok(path) = std::env::var("TRACELITE_ECOSYSTEMS_REPORT") {
        let report = format!(
            "# Failures of every ecosystem in the spill excerpt\n\n\
             Generated by `make bench-ecosystems` (`tests/spill_ecosystems.rs`): each real output of \
             `tests/fixtures/ecosystems/` (recorded by `tests/fixtures/record-ecosystems.py`) spilled \
             at a {BUDGET}-token budget (cap 2,000 tokens); a fact counts when the excerpt's text holds it.\n\n{table}"
        );
        std::fs::write(path, report).unwrap();
    }
    assert!(
        misses.is_empty(),
        "missing from the excerpts:\n{}",
        misses.join("\n")
    );
    assert!(rows.len() >= 17, "{} fixtures", rows.len());
}
