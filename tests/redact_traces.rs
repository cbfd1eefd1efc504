//! False positives of secret redaction on real trajectories: the shared traces hold
//! no real credentials, so every hit there is a false positive. Prints each hit and
//! bounds the rate (hits per observation).
#![allow(
    clippy::indexing_slicing,
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic
)]

mod common;

#[test]
#[cfg_attr(tracelite_no_traces, ignore = "needs ../shared/traces")]
fn redaction_false_positive_rate_on_shared_traces() {
    let files = common::required_trace_files();
    let (mut observations, mut hits, mut bytes) = (0usize, 0usize, 0usize);
    for file in &files {
        for step in common::load_trace(file).steps {
            observations += 1;
            bytes += step.observation.len();
            let (out, found) = tracelite::redact::redact(&step.observation);
            if found.count > 0 {
                hits += found.count;
                for line in out.lines().filter(|l| l.contains("[REDACTED:")) {
                    eprintln!(
                        "hit in {}: {}",
                        file.file_name().unwrap().to_string_lossy(),
                        line.chars().take(160).collect::<String>()
                    );
                }
            }
        }
    }
    let rate = hits as f64 / observations as f64;
    eprintln!(
        "{hits} redactions over {observations} observations ({:.1} MB): {:.3}% per observation",
        bytes as f64 / 1e6,
        rate * 100.0
    );
    // 1 hit (a Django `SECRET_KEY = '…'` literal) over 2,648 observations when written.
    assert!(rate < 0.002, "false-positive rate {rate}");
}

#[test]
fn secrets_in_a_spilled_output_are_masked_in_the_excerpt_but_kept_in_the_store() {
    use tracelite::{compress_json, Config, Env, HostState, MemoryStore, SpillStore};
    let mut output =
        String::from("export OPENAI_API_KEY=sk-proj-4fQ2b9XwLm8Zt0aP3kR7sVn1Yc6Ue5Jh\n");
    for i in 0..20_000 {
        output.push_str(&format!("log line {i} with some ordinary text\n"));
    }
    let request = serde_json::json!({"messages": [
        {"role": "user", "content": "go"},
        {"role": "assistant", "content": null, "tool_calls": [{"id": "a", "type": "function", "function": {"name": "bash", "arguments": "{}"}}]},
        {"role": "tool", "tool_call_id": "a", "content": output}
    ]});
    let mut store = MemoryStore::new();
    let config = Config::from_json(serde_json::json!({"budget": 16000})).unwrap();
    let out = compress_json(
        &request.to_string(),
        &config,
        Env::new(&mut store, &mut HostState::default()),
    )
    .unwrap();
    assert!(
        !out.request.contains("sk-proj-4fQ2b9"),
        "secret reached the model"
    );
    assert!(out.request.contains("[REDACTED:"));
    assert_eq!(out.report.redactions.count, 1);
    let report = serde_json::to_string(&out.report).unwrap();
    assert!(!report.contains("sk-proj-4fQ2b9"));
    let key = &out.report.spills[0].key;
    assert!(store
        .get("default", key)
        .unwrap()
        .contains("sk-proj-4fQ2b9"));
}
