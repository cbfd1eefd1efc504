//! PNG bytes and encode time of the snapshots the optical stage would make
//! from the real trajectories, next to a strong general-purpose reference
//! (miniz_oxide at level 10 over the same scanlines, filter 0).
//!
//! `cargo run --release --example png_sizes [-- openai] [--rows]`
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
use tracelite::optical::raster::Bitmap;
use tracelite::optical::{self, budget, encode, layout, raster, Flow};
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
        let Some(s) = optical::plan_flow(text, provider, o, flow) else {
            continue;
        };
        if s.missing_share() > o.max_missing_share {
            return None;
        }
        // About the reference line's tokens.
        if (s.image_tokens() + 25) as f64 > before as f64 / o.ratio {
            continue;
        }
        let plan = &s.rendering;
        let atlas = raster::atlas(plan.font_px, o.line_gap)?;
        let rows = lines.wrap(plan.columns);
        let mut out = Vec::new();
        let mut start = 0;
        for (&n, &(w, h)) in plan.image_rows.iter().zip(&plan.image_sizes) {
            let end = (start + n).min(rows.len());
            out.push(raster::draw(
                &rows[start..end],
                atlas,
                plan.font_px,
                w,
                h,
                budget::MARGIN,
                o.bit_depth,
            ));
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

/// Size of a PNG whose IDAT holds `zlib` bytes (signature, IHDR, IDAT, IEND).
fn png_size(zlib: usize) -> usize {
    8 + 25 + 12 + zlib + 12
}

/// Seconds per call of `f`, the median of five rounds of at least 2 ms.
fn time<T>(mut f: impl FnMut() -> T) -> f64 {
    let started = Instant::now();
    std::hint::black_box(f());
    let once = started.elapsed().as_secs_f64().max(1e-7);
    let n = ((2e-3 / once) as usize).clamp(1, 10_000);
    let mut rounds: Vec<f64> = (0..5)
        .map(|_| {
            let t = Instant::now();
            for _ in 0..n {
                std::hint::black_box(f());
            }
            t.elapsed().as_secs_f64() / n as f64
        })
        .collect();
    rounds.sort_by(f64::total_cmp);
    rounds[2]
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let provider = if args.iter().any(|a| a == "openai") {
        Provider::Openai
    } else {
        Provider::Anthropic
    };
    let show_rows = args.iter().any(|a| a == "--rows");
    let o = OpticalConfig::default();
    let mut seen = BTreeSet::new();
    let (mut n, mut tokens, mut ours, mut reference, mut b64) =
        (0usize, 0u64, 0usize, 0usize, 0usize);
    let (mut t_ours, mut t_ref) = (0.0f64, 0.0f64);
    if show_rows {
        println!("trace\tstep\twxh\tbits\tpng\treference\tours_us\tref_us");
    }
    for file in trace_files() {
        let t = Trajectory::from_json(&std::fs::read_to_string(&file).unwrap()).unwrap();
        let name = file.file_stem().unwrap().to_string_lossy().to_string();
        for (k, step) in t.steps.iter().enumerate() {
            if !seen.insert(step.observation.clone()) {
                continue;
            }
            let Some((tok, bms)) = bitmaps(&step.observation, provider, &o) else {
                continue;
            };
            tokens += tok;
            for bm in bms {
                let png = encode::png(&bm).unwrap();
                assert_eq!(
                    decode(&png),
                    bm.data,
                    "{name} step {k}: the png crate reads the pixels back"
                );
                let mut lines = Vec::with_capacity(bm.data.len() + bm.height as usize);
                for row in bm.data.chunks(bm.stride) {
                    lines.push(0);
                    lines.extend_from_slice(row);
                }
                let z = miniz_oxide::deflate::compress_to_vec_zlib(&lines, 10);
                let to = time(|| encode::png(&bm).unwrap());
                let tr = time(|| miniz_oxide::deflate::compress_to_vec_zlib(&lines, 10));
                n += 1;
                ours += png.len();
                b64 += encode::base64(&png).len();
                reference += png_size(z.len());
                t_ours += to;
                t_ref += tr;
                if show_rows {
                    println!(
                        "{name}\t{k}\t{}x{}\t{}\t{}\t{}\t{:.1}\t{:.1}",
                        bm.width,
                        bm.height,
                        bm.bits,
                        png.len(),
                        png_size(z.len()),
                        to * 1e6,
                        tr * 1e6
                    );
                }
            }
        }
    }
    println!("provider {provider:?}: {n} images, {tokens} image tokens");
    println!(
        "png bytes: ours {ours} ({:.2} per image token, base64 {b64} = {:.2} per token), reference {reference} ({:.2} per token), ours/reference {:.3}",
        ours as f64 / tokens as f64,
        b64 as f64 / tokens as f64,
        reference as f64 / tokens as f64,
        ours as f64 / reference as f64
    );
    println!(
        "encode time: ours {:.2} ms total ({:.1} us per image), reference {:.2} ms ({:.1}x ours)",
        t_ours * 1e3,
        t_ours * 1e6 / n.max(1) as f64,
        t_ref * 1e3,
        t_ref / t_ours
    );
}
