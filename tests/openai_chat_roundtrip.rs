//! OpenAI Chat parse → emit is lossless on every shared trajectory turned into a
//! request, and compress with every stage off returns the request unchanged.
#![allow(
    clippy::indexing_slicing,
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic
)]

mod common;

use serde_json::Value;
use tracelite::formats::{self, openai_chat, FormatName};
use tracelite::{compress_json, Config, Env, HostState, MemoryStore};

#[test]
#[cfg_attr(tracelite_no_traces, ignore = "needs ../shared/traces")]
fn every_trajectory_round_trips_through_the_neutral_model() {
    let files = common::required_trace_files();
    for file in &files {
        let trace = common::load_trace(file);
        for t in [0, trace.steps.len() / 2, trace.steps.len()] {
            let request =
                tracelite::trajectory_to_request(&trace, t, FormatName::OpenaiChat).unwrap();
            assert_eq!(formats::detect(&request).unwrap(), FormatName::OpenaiChat);
            let conv = openai_chat::parse(&request).unwrap();
            let calls = trace.steps[..t]
                .iter()
                .filter(|s| s.tool != "message")
                .count();
            assert_eq!(conv.steps().len(), calls);
            assert!(conv.steps().iter().all(|s| s.result.is_some()));
            let emitted = openai_chat::emit(&conv);
            assert_eq!(emitted, request, "{}: t={t}", file.display());
        }
    }
}

#[test]
#[cfg_attr(tracelite_no_traces, ignore = "needs ../shared/traces")]
fn compress_with_all_stages_off_is_the_identity() {
    let file = common::required_trace_files()
        .into_iter()
        .next()
        .expect("the first trajectory");
    let trace = common::load_trace(&file);
    let request =
        tracelite::trajectory_to_request(&trace, trace.steps.len(), FormatName::OpenaiChat)
            .unwrap();
    let text = request.to_string();
    let mut config = Config::default();
    config.spill.enabled = false;
    config.dedup.enabled = false;
    config.phase.enabled = false;
    config.optical.enabled = tracelite::config::OpticalSwitch::Off;
    config.compact.enabled = false;
    let out = compress_json(
        &text,
        &config,
        Env::new(&mut MemoryStore::new(), &mut HostState::default()),
    )
    .unwrap();
    let back: Value = serde_json::from_str(&out.request).unwrap();
    assert_eq!(back, request);
    assert_eq!(out.report.tokens_before, out.report.tokens_after);
    assert!(out.report.changes.is_empty());
    assert_eq!(out.report.stages.len(), 5);
    assert!(out.report.stages.iter().all(|s| !s.enabled));
}

#[test]
#[cfg_attr(tracelite_no_traces, ignore = "needs ../shared/traces")]
fn compress_is_deterministic_and_reports_prefix_reuse() {
    let file = common::required_trace_files()
        .into_iter()
        .nth(3)
        .expect("a fourth trajectory");
    let trace = common::load_trace(&file);
    let config = Config::default();
    let run = || {
        let mut store = MemoryStore::new();
        let mut state = tracelite::HostState::default();
        let mut previous: Option<String> = None;
        let mut outs = Vec::new();
        for t in 0..trace.steps.len() {
            let req = tracelite::trajectory_to_request(&trace, t, FormatName::OpenaiChat)
                .unwrap()
                .to_string();
            let out = tracelite::compress_json(
                &req,
                &config,
                tracelite::Env {
                    store: &mut store,
                    counter: &tracelite::tokens::Estimator,
                    state: &mut state,
                    previous: previous.as_deref(),
                    format: None,
                    known: Default::default(),
                },
            )
            .unwrap();
            if let Some(prev) = &previous {
                let prefix = out.report.prefix.as_ref().unwrap();
                assert_eq!(prefix.previous_bytes, prev.len());
                assert_eq!(
                    prefix.shared_bytes,
                    tracelite::pipeline::shared_prefix(prev, &out.request)
                );
            }
            previous = Some(out.request.clone());
            outs.push(out.request);
        }
        outs
    };
    assert_eq!(run(), run());
}
