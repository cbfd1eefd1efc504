//! False positives of secret redaction on real trajectories: the shared traces hold
//! no real credentials, so every hit there is a false positive. Prints each hit and
//! bounds the rate (hits per observation).

mod common;

#[test]
fn redaction_false_positive_rate_on_shared_traces() {
    let files = common::trace_files();
    if files.is_empty() {
        eprintln!("skipping: ../shared/traces not present");
        return;
    }
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
    assert!(rate < 0.01, "false-positive rate {rate}");
}
