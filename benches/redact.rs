//! Redaction throughput: [`tracelite::redact::redact`] over the shared traces'
//! tool outputs (`../shared/traces` or `TRACELITE_TRACES`), or over a generated
//! build log when they are absent.
//!
//! `cargo bench --bench redact` (throughput is reported in MiB/s).
//!
//! `regex_lite_subset` is the measurement behind the module's hand scanners
//! (`src/redact.rs`): six `regex-lite` patterns standing for a fifth of its
//! detectors (prefixed tokens, AWS key ids, JWTs, Slack webhooks, private key
//! blocks, `Authorization:` headers), each searched over every output as a
//! redactor would, against the scanners finding every kind in one pass.
#![allow(missing_docs, clippy::unwrap_used, clippy::expect_used)]

use criterion::{criterion_group, criterion_main, Criterion, Throughput};

/// The traces' observations, or a generated log of about 4 MB.
fn corpus() -> Vec<String> {
    let dir = std::env::var_os("TRACELITE_TRACES")
        .map(std::path::PathBuf::from)
        .unwrap_or_else(|| {
            std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/traces")
        });
    let mut outputs = Vec::new();
    for entry in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let Ok(text) = std::fs::read_to_string(entry.path()) else {
            continue;
        };
        let Ok(trace) = tracelite::trajectory::Trajectory::from_json(&text) else {
            continue;
        };
        outputs.extend(trace.steps.into_iter().map(|s| s.observation));
    }
    if outputs.is_empty() {
        let line = "[  42] compiling src/module_7/file_3.rs ... ok (81 ms) password: str = None\n";
        outputs.push(line.repeat(4_000_000 / line.len()));
    }
    outputs
}

fn bench(c: &mut Criterion) {
    let outputs = corpus();
    let bytes: usize = outputs.iter().map(String::len).sum();
    let mut group = c.benchmark_group("redact");
    group.throughput(Throughput::Bytes(bytes as u64));
    group.sample_size(10);
    group.bench_function("trace_outputs", |b| {
        b.iter(|| {
            outputs
                .iter()
                .map(|o| tracelite::redact::redact(o).1.count)
                .sum::<usize>()
        })
    });
    let subset = regex_subset();
    group.bench_function("regex_lite_subset", |b| {
        b.iter(|| {
            outputs
                .iter()
                .map(|o| subset.iter().map(|r| r.find_iter(o).count()).sum::<usize>())
                .sum::<usize>()
        })
    });
    group.finish();
}

/// Six of the redactor's detectors as `regex-lite` patterns.
fn regex_subset() -> Vec<regex_lite::Regex> {
    [
        r"(?:sk-ant-|sk-proj-|sk-|gh[pousr]_|github_pat_|glpat-|xox[bpa]-|[sr]k_(?:live|test)_|whsec_|do[por]_v1_|hv[sb]\.|AIza|hf_|npm_)[A-Za-z0-9_-]{20,}",
        r"\b(?:AKIA|ASIA)[A-Z0-9]{16}\b",
        r"eyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}",
        r"https://hooks\.slack\.com/(?:services|workflows)/[A-Za-z0-9/]+",
        r"-----BEGIN [A-Z ]*PRIVATE KEY-----[\s\S]*?-----END [A-Z ]*PRIVATE KEY-----",
        r"(?i)authorization:\s*(?:bearer|basic|token)\s+[A-Za-z0-9._~+/=-]{8,}",
    ]
    .iter()
    .map(|p| regex_lite::Regex::new(p).expect("pattern"))
    .collect()
}

criterion_group!(benches, bench);
criterion_main!(benches);
