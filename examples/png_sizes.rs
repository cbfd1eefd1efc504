//! PNG bytes per image token and encode time of the snapshots the optical
//! stage would make from the real trajectories, for each scanline filter and
//! deflate level of the `png` crate (the table of `bench/PNG-ENCODER.md`;
//! the chosen pair is `encode::PNG_SETTINGS`). Also checks that the `png`
//! crate reads every image back to its pixels.
//!
//! `cargo run --release --example png_sizes [-- openai]`
//! (trajectories from `../shared/traces` or `TRACELITE_TRACES`).
#![allow(
    clippy::indexing_slicing,
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    missing_docs
)]

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::time::Instant;

use tracelite::config::{OpticalConfig, Provider};
use tracelite::optical::encode::{self, DeflateCompression, Filter, PngSettings};
use tracelite::optical::raster::Bitmap;
use tracelite::optical::{self, budget, layout, raster, Flow};
use tracelite::tokens::{Estimator, TokenCounter};
use tracelite::Trajectory;

fn trace_files() -> Vec<PathBuf> {
    let dir = std::env::var_os("TRACELITE_TRACES")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/traces"));
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "json"))
        .collect();
    files.sort();
    files
}

/// The bitmaps of `text` as the optical stage would draw them, when it
/// would snapshot the text (image tokens at most `1/ratio` of the text's).
fn bitmaps(text: &str, provider: Provider, o: &OpticalConfig) -> Option<(u64, Vec<Bitmap>)> {
    let before = Estimator.count(text).ok()?;
    for flow in [Flow::Lines, Flow::Reflow] {
        let lines = layout::lay_out(text);
        let lines = if flow == Flow::Reflow {
            lines.reflowed()
        } else {
            lines
        };
        let Some(s) = optical::fit_flow(text, provider, o, flow) else {
            continue;
        };
        if s.missing_share() > o.max_missing_share {
            return None;
        }
        // About the reference line's tokens.
        if (s.image_tokens() + 25) as f64 > before as f64 / o.ratio {
            continue;
        }
        let rendering = &s.rendering;
        let atlas = raster::atlas(rendering.font_px, o.line_gap)?;
        let rows = lines.wrap(rendering.columns);
        let mut out = Vec::new();
        let mut start = 0;
        for (&n, &(w, h)) in rendering.image_rows.iter().zip(&rendering.image_sizes) {
            let end = (start + n).min(rows.len());
            out.push(raster::draw(
                &rows[start..end],
                atlas,
                rendering.font_px,
                w,
                h,
                budget::MARGIN,
                o.bit_depth,
            )?);
            start = end;
        }
        return Some((s.image_tokens(), out));
    }
    None
}

/// The pixels of `png_bytes` as the `png` crate decodes them.
fn decode(png_bytes: &[u8]) -> Vec<u8> {
    let mut reader = png::Decoder::new(std::io::Cursor::new(png_bytes))
        .read_info()
        .unwrap();
    let mut buf = vec![0; reader.output_buffer_size().unwrap()];
    let info = reader.next_frame(&mut buf).unwrap();
    buf.truncate(info.buffer_size());
    buf
}

/// Seconds per call of `f`, the median of three rounds of at least 1 ms.
fn time<T>(mut f: impl FnMut() -> T) -> f64 {
    let started = Instant::now();
    std::hint::black_box(f());
    let once = started.elapsed().as_secs_f64().max(1e-7);
    let n = ((1e-3 / once) as usize).clamp(1, 10_000);
    let mut rounds: Vec<f64> = (0..3)
        .map(|_| {
            let t = Instant::now();
            for _ in 0..n {
                std::hint::black_box(f());
            }
            t.elapsed().as_secs_f64() / n as f64
        })
        .collect();
    rounds.sort_by(f64::total_cmp);
    rounds[1]
}

/// The filters and deflate levels measured, named as in the table.
fn candidates() -> Vec<(String, PngSettings)> {
    let filters = [
        ("none", Filter::NoFilter),
        ("sub", Filter::Sub),
        ("up", Filter::Up),
        ("paeth", Filter::Paeth),
        ("adaptive", Filter::Adaptive),
        ("min-entropy", Filter::MinEntropy),
    ];
    let levels = [
        ("fdeflate", DeflateCompression::FdeflateUltraFast),
        ("level 1", DeflateCompression::Level(1)),
        ("level 3", DeflateCompression::Level(3)),
        ("level 6", DeflateCompression::Level(6)),
        ("level 9", DeflateCompression::Level(9)),
    ];
    filters
        .iter()
        .flat_map(|&(f, filter)| {
            levels.iter().map(move |&(l, compression)| {
                (
                    format!("{f}, {l}"),
                    PngSettings {
                        filter,
                        compression,
                    },
                )
            })
        })
        .collect()
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let provider = if args.iter().any(|a| a == "openai") {
        Provider::Openai
    } else {
        Provider::Anthropic
    };
    let o = OpticalConfig::default();
    let mut seen = BTreeSet::new();
    let mut images = Vec::new();
    let mut tokens = 0u64;
    for file in trace_files() {
        let t = Trajectory::from_json(&std::fs::read_to_string(&file).unwrap()).unwrap();
        for step in &t.steps {
            if !seen.insert(step.observation.clone()) {
                continue;
            }
            if let Some((tok, bms)) = bitmaps(&step.observation, provider, &o) {
                tokens += tok;
                images.extend(bms);
            }
        }
    }
    println!(
        "provider {provider:?}: {} images, {tokens} image tokens, bit depth {}",
        images.len(),
        o.bit_depth
    );
    println!("| filter, deflate | PNG bytes per image token | encode µs per image |");
    println!("|---|---:|---:|");
    let n = images.len().max(1) as f64;
    let row = |name: &str, bytes: usize, secs: f64| {
        let chosen = if name.ends_with("(chosen)") { "**" } else { "" };
        println!(
            "| {chosen}{name}{chosen} | {:.3} | {:.0} |",
            bytes as f64 / tokens as f64,
            secs * 1e6 / n
        );
    };
    for (name, settings) in candidates() {
        let (mut bytes, mut secs) = (0usize, 0.0f64);
        for bm in &images {
            let png = encode::png_with(bm, settings).unwrap();
            assert_eq!(decode(&png), bm.data, "the png crate reads the pixels back");
            bytes += png.len();
            secs += time(|| encode::png_with(bm, settings).unwrap());
        }
        let chosen = settings.filter == encode::PNG_SETTINGS.filter
            && format!("{:?}", settings.compression)
                == format!("{:?}", encode::PNG_SETTINGS.compression);
        let name = if chosen {
            format!("{name} (chosen)")
        } else {
            name
        };
        row(&name, bytes, secs);
    }
}
