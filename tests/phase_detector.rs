//! The edit detector on the real trajectories in `../shared/traces`.
//!
//! `detector_survey` prints how often the detector fires (run it with
//! `cargo test --release --test phase_detector -- --ignored --nocapture`;
//! `TRACELITE_VERBOSE=1` also lists every edit and every shell command with a
//! `>` that was not taken as an edit, for false-positive/negative review).
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing,
    clippy::field_reassign_with_default
)]

mod common;

use std::collections::BTreeMap;

use serde_json::Value;
use tracelite::config::PhaseConfig;
use tracelite::phase::{find_edits, EditDetector, EditKind};

#[test]
#[cfg_attr(tracelite_no_traces, ignore = "needs ../shared/traces")]
fn str_replace_editor_views_never_count_and_its_edits_always_do() {
    let config = PhaseConfig::default();
    let detector = EditDetector::new(&config);
    let mut checked = 0;
    for path in common::required_trace_files() {
        let trajectory = common::load_trace(&path);
        let conv = trajectory.conversation_at(trajectory.steps.len()).unwrap();
        for step in conv.steps() {
            if step.call.name != "str_replace_editor" {
                continue;
            }
            let args = step.call.arguments_json();
            let command = args.get("command").and_then(Value::as_str).unwrap_or("");
            let edit = detector.classify(step.call);
            match command {
                "view" => assert!(edit.is_none(), "{}: view is not an edit", path.display()),
                "create" | "str_replace" | "insert" => {
                    let edit = edit.unwrap_or_else(|| panic!("{}: {command}", path.display()));
                    assert_eq!(edit.kind, EditKind::Tool);
                    assert!(edit.target.is_some());
                }
                _ => {}
            }
            checked += 1;
        }
    }
    assert!(checked > 400, "only {checked} str_replace_editor calls");
}

#[test]
#[cfg_attr(tracelite_no_traces, ignore = "needs ../shared/traces")]
fn shell_reads_never_count_and_in_place_seds_always_do() {
    let config = PhaseConfig::default();
    let detector = EditDetector::new(&config);
    let mut seds = 0;
    for path in common::required_trace_files() {
        let trajectory = common::load_trace(&path);
        let conv = trajectory.conversation_at(trajectory.steps.len()).unwrap();
        for step in conv.steps() {
            let args = step.call.arguments_json();
            let Some(command) = args.get("command").and_then(Value::as_str) else {
                continue;
            };
            let edit = detector.classify(step.call);
            let first = command.split_whitespace().next().unwrap_or("");
            let single = !command.contains(['\n', '>', ';', '&', '|']);
            if single
                && matches!(
                    first,
                    "grep" | "nl" | "ls" | "find" | "cat" | "head" | "tail"
                )
            {
                assert!(edit.is_none(), "{}: {command:?}", path.display());
            }
            if single && command.starts_with("sed -i ") {
                seds += 1;
                assert_eq!(
                    edit.map(|e| e.kind),
                    Some(EditKind::SedInPlace),
                    "{command:?}"
                );
            }
        }
    }
    assert!(seds > 20, "only {seds} sed -i commands");
}

#[test]
#[ignore = "prints corpus statistics; run with --ignored --nocapture"]
fn detector_survey() {
    let config = PhaseConfig::default();
    let verbose = std::env::var_os("TRACELITE_VERBOSE").is_some();
    let mut traces = 0;
    let mut with_edit = 0;
    let mut calls = 0;
    let mut edits = 0;
    let mut failed = 0;
    let mut by_kind: BTreeMap<&str, usize> = BTreeMap::new();
    let mut first_kind: BTreeMap<&str, usize> = BTreeMap::new();
    let mut first_at = Vec::new();
    let mut results_before_first = 0usize;
    let mut results_total = 0usize;
    let mut first_is_script = 0usize;
    let scratch = PhaseConfig {
        ignore_targets: vec!["reproduc*".into(), "repro*".into()],
        ..PhaseConfig::default()
    };
    let mut later_first = Vec::new();
    for path in common::trace_files() {
        let trajectory = common::load_trace(&path);
        let conv = trajectory.conversation_at(trajectory.steps.len()).unwrap();
        let steps = conv.steps();
        traces += 1;
        calls += steps.len();
        results_total += steps.iter().filter(|s| s.result.is_some()).count();
        let found = find_edits(&conv, &config);
        let name = path.file_name().unwrap().to_string_lossy().to_string();
        for e in &found {
            edits += 1;
            if e.failed == Some(true) {
                failed += 1;
            }
            *by_kind.entry(e.action.kind.as_str()).or_default() += 1;
            if verbose {
                let call = &steps[e.step - 1].call;
                let args = call.arguments_json();
                let text = args
                    .get("command")
                    .and_then(Value::as_str)
                    .unwrap_or(&call.arguments);
                let head: String = text
                    .lines()
                    .next()
                    .unwrap_or("")
                    .chars()
                    .take(110)
                    .collect();
                println!(
                    "EDIT {name} step {} {} {:?} failed={:?} | {head}",
                    e.step,
                    e.action.kind.as_str(),
                    e.action.target,
                    e.failed
                );
            }
        }
        if verbose {
            let detector = EditDetector::new(&config);
            for s in &steps {
                let args = s.call.arguments_json();
                let Some(command) = args.get("command").and_then(Value::as_str) else {
                    continue;
                };
                if detector.classify(s.call).is_none()
                    && (command.contains('>')
                        || command.contains("open(")
                        || command.contains("tee"))
                {
                    let head: String = command
                        .lines()
                        .next()
                        .unwrap_or("")
                        .chars()
                        .take(110)
                        .collect();
                    println!("NOT  {name} | {head}");
                }
            }
        }
        if let Some(first) = found.iter().find(|e| e.counts(&config)) {
            with_edit += 1;
            *first_kind.entry(first.action.kind.as_str()).or_default() += 1;
            if !first.counts(&scratch) {
                first_is_script += 1;
            }
            if let Some(real) = found.iter().find(|e| e.counts(&scratch)) {
                later_first.push(real.step as f64 / steps.len().max(1) as f64);
            }
            first_at.push(first.step as f64 / steps.len().max(1) as f64);
            results_before_first += steps
                .iter()
                .filter(|s| s.call_at < first.call_at && s.result.is_some())
                .count();
        }
    }
    first_at.sort_by(f64::total_cmp);
    let median = first_at.get(first_at.len() / 2).copied().unwrap_or(0.0);
    println!("traces: {traces}, with a counted edit: {with_edit}");
    println!("tool calls: {calls}, edit calls: {edits} ({failed} failed)");
    println!("edit calls by kind: {by_kind:?}");
    println!("first counted edit by kind: {first_kind:?}");
    println!(
        "first edit at median {:.0}% of the run; results before it: {results_before_first} of {results_total}",
        median * 100.0
    );
    later_first.sort_by(f64::total_cmp);
    println!(
        "first edit writes a reproduction script (reproduc*/repro*) in {first_is_script} runs; \
         ignoring those, the first edit comes at median {:.0}% of the run ({} runs)",
        later_first
            .get(later_first.len() / 2)
            .copied()
            .unwrap_or(0.0)
            * 100.0,
        later_first.len()
    );
}
