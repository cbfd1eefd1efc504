//! Every shared trajectory, rendered into every format, parses and emits back to
//! the same JSON, validates, and converts to every other format without losing
//! a tool call or result.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)]

mod common;

use tracelite::formats::{self, FormatName};
use tracelite::trajectory_to_request;

fn sample_steps(len: usize) -> Vec<usize> {
    let mut steps = vec![0, 1.min(len), len / 2, len];
    steps.dedup();
    steps
}

#[test]
#[cfg_attr(tracelite_no_traces, ignore = "needs ../shared/traces")]
fn every_trajectory_round_trips_in_every_format() {
    let files = common::required_trace_files();
    for file in &files {
        let trace = common::load_trace(file);
        for t in sample_steps(trace.steps.len()) {
            let calls = trace.steps[..t]
                .iter()
                .filter(|s| s.tool != "message")
                .count();
            for format in FormatName::ALL {
                let ctx = format!("{} t={t} {}", file.display(), format.as_str());
                let request = trajectory_to_request(&trace, t, format).unwrap();
                assert_eq!(formats::detect(&request).unwrap(), format, "{ctx}");
                let conv = formats::parse(format, &request).unwrap();
                assert_eq!(conv.steps().len(), calls, "{ctx}");
                assert!(conv.steps().iter().all(|s| s.result.is_some()), "{ctx}");
                formats::validate(&conv, format).unwrap();
                assert_eq!(formats::emit(format, &conv), request, "{ctx}");
            }
        }
    }
}

#[test]
#[cfg_attr(tracelite_no_traces, ignore = "needs ../shared/traces")]
fn conversions_between_formats_keep_every_step() {
    let files = common::required_trace_files();
    for file in files.iter().step_by(5) {
        let trace = common::load_trace(file);
        let t = trace.steps.len();
        let reference = trace.conversation_at(t).unwrap();
        let expected: Vec<(String, String, String)> = reference
            .steps()
            .iter()
            .map(|s| {
                (
                    s.call.name.clone(),
                    s.call.arguments_json().to_string(),
                    s.result.unwrap().text(),
                )
            })
            .collect();
        for from in FormatName::ALL {
            let request = trajectory_to_request(&trace, t, from).unwrap();
            for to in FormatName::ALL {
                let out = formats::convert(&request, Some(from), to).unwrap();
                let conv = formats::parse(to, &out.request).unwrap();
                formats::validate(&conv, to).unwrap();
                let got: Vec<(String, String, String)> = conv
                    .steps()
                    .iter()
                    .map(|s| {
                        (
                            s.call.name.clone(),
                            s.call.arguments_json().to_string(),
                            s.result.unwrap().text(),
                        )
                    })
                    .collect();
                let ctx = format!("{} {} -> {}", file.display(), from.as_str(), to.as_str());
                assert_eq!(got, expected, "{ctx}");
                assert_eq!(
                    conv.system
                        .iter()
                        .map(|m| m.text_content())
                        .collect::<Vec<_>>(),
                    reference
                        .system
                        .iter()
                        .map(|m| m.text_content())
                        .collect::<Vec<_>>(),
                    "{ctx}"
                );
                // Chat-shaped replays carry only `model` besides the messages.
                if to == FormatName::Gemini && from != FormatName::Gemini {
                    assert_eq!(out.lossy.len(), 1, "{ctx}: {:?}", out.lossy);
                    assert_eq!(out.lossy[0].path, "model");
                } else {
                    assert!(out.lossy.is_empty(), "{ctx}: {:?}", out.lossy);
                }
            }
        }
    }
}

#[test]
#[cfg_attr(tracelite_no_traces, ignore = "needs ../shared/traces")]
fn compress_keeps_every_format_valid() {
    let files = common::required_trace_files();
    for file in files.iter().step_by(11) {
        let trace = common::load_trace(file);
        let t = trace.steps.len();
        for format in FormatName::ALL {
            let ctx = format!("{} {}", file.display(), format.as_str());
            let request = trajectory_to_request(&trace, t, format).unwrap();
            let text = request.to_string();
            // All stages off: the identity.
            let mut off = tracelite::Config::default();
            off.spill.enabled = false;
            off.dedup.enabled = false;
            off.phase.enabled = false;
            off.optical.enabled = tracelite::config::OpticalSwitch::Off;
            off.compact.enabled = false;
            let out = tracelite::compress_json(
                &text,
                &off,
                tracelite::Env::new(
                    &mut tracelite::MemoryStore::new(),
                    &mut tracelite::HostState::default(),
                ),
            )
            .unwrap();
            let back: serde_json::Value = serde_json::from_str(&out.request).unwrap();
            assert_eq!(back, request, "{ctx}");
            assert_eq!(out.report.format, format);
            // Default stages, small budget: still a valid request of the same format.
            let config = tracelite::Config {
                budget: 16_000,
                ..Default::default()
            };
            let out = tracelite::compress_json(
                &text,
                &config,
                tracelite::Env::new(
                    &mut tracelite::MemoryStore::new(),
                    &mut tracelite::HostState::default(),
                ),
            )
            .unwrap();
            let back: serde_json::Value = serde_json::from_str(&out.request).unwrap();
            let conv = formats::parse(format, &back).unwrap();
            formats::validate(&conv, format).unwrap();
            assert!(out.report.tokens_after <= out.report.tokens_before, "{ctx}");
        }
    }
}
