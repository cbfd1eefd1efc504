//! Redaction throughput: [`tracelite::redact::redact`] over the shared traces'
//! tool outputs (`../shared/traces` or `TRACELITE_TRACES`), or over a generated
//! build log when they are absent.
//!
//! `cargo bench --bench redact` (throughput is reported in MiB/s).
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
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
