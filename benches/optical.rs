//! Optical stage costs for a ~4 KB observation: layout + fit, raster, PNG
//! encode, the whole render, and a warm-cache compress of a history.
//! `cargo bench --bench optical` (reads a real observation from
//! `../shared/traces` or `TRACELITE_TRACES` when present; a synthetic one otherwise).
#![allow(
    clippy::indexing_slicing,
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    missing_docs
)]

use std::path::{Path, PathBuf};

use criterion::{criterion_group, criterion_main, Criterion};
use std::hint::black_box;
use tracelite::config::{OpticalConfig, Provider};
use tracelite::optical::{self, budget, encode, layout, raster};
use tracelite::Trajectory;

fn traces_dir() -> Option<PathBuf> {
    let dir = std::env::var_os("TRACELITE_TRACES")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/traces"));
    dir.is_dir().then_some(dir)
}

/// The first observation of 3.5–4.5 KB in the sorted traces, or synthetic code.
fn observation_4k() -> String {
    if let Some(dir) = traces_dir() {
        let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| p.extension().is_some_and(|e| e == "json"))
            .collect();
        files.sort();
        for f in files {
            let t = Trajectory::from_json(&std::fs::read_to_string(&f).unwrap()).unwrap();
            if let Some(s) = t
                .steps
                .iter()
                .find(|s| (3500..=4500).contains(&s.observation.len()))
            {
                return s.observation.clone();
            }
        }
    }
    (0..60)
        .map(|i| {
            format!("    def method_{i}(self, value: int = {i}) -> dict:  # returns a mapping\n")
        })
        .collect::<String>()
        .chars()
        .take(4096)
        .collect()
}

fn bench(c: &mut Criterion) {
    let text = observation_4k();
    eprintln!("observation: {} bytes", text.len());
    let o = OpticalConfig::default();
    for provider in [Provider::Anthropic, Provider::Openai] {
        let name = format!("{provider:?}").to_lowercase();
        c.bench_function(&format!("layout+plan 4KB {name}"), |b| {
            b.iter(|| optical::fit(black_box(&text), provider, &o))
        });
        c.bench_function(&format!("render 4KB {name}"), |b| {
            b.iter(|| optical::render(black_box(&text), provider, &o).unwrap())
        });
    }
    // Stage by stage at the Anthropic rendering.
    let lines = layout::lay_out(&text);
    let rendering = budget::choose(&lines, Provider::Anthropic, &o, |px| {
        raster::cell_metrics(px, o.line_gap)
    })
    .unwrap();
    let atlas = raster::atlas(rendering.font_px, o.line_gap).unwrap();
    let rows = lines.wrap(rendering.columns);
    let (w, h) = rendering.image_sizes[0];
    for bits in [1u8, 2, 8] {
        c.bench_function(&format!("raster {bits}-bit 4KB"), |b| {
            b.iter(|| {
                raster::draw(
                    black_box(&rows),
                    atlas,
                    rendering.font_px,
                    w,
                    h,
                    budget::MARGIN,
                    bits,
                )
                .unwrap()
            })
        });
        let bitmap =
            raster::draw(&rows, atlas, rendering.font_px, w, h, budget::MARGIN, bits).unwrap();
        let png = encode::png(&bitmap).unwrap();
        eprintln!("{w}x{h} png {bits}-bit: {} bytes", png.len());
        c.bench_function(&format!("png {bits}-bit 4KB"), |b| {
            b.iter(|| encode::png(black_box(&bitmap)).unwrap())
        });
    }
    let bitmap = raster::draw(
        &rows,
        atlas,
        rendering.font_px,
        w,
        h,
        budget::MARGIN,
        o.bit_depth,
    )
    .unwrap();
    let png = encode::png(&bitmap).unwrap();
    c.bench_function("base64 4KB", |b| b.iter(|| encode::base64(black_box(&png))));
}

criterion_group! {
    name = benches;
    config = Criterion::default().sample_size(30);
    targets = bench
}
criterion_main!(benches);
