//! OCR oracle for the optical tests: tesseract reads rendered snapshots back.
#![allow(dead_code, clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::path::{Path, PathBuf};
use std::process::Command;

use base64::Engine;
use tracelite::config::{OpticalConfig, Provider};
use tracelite::optical::{self, layout, Flow, Snapshot};

/// The Debian/Ubuntu package that provides the `tesseract` binary.
pub const APT_PACKAGE: &str = "tesseract-ocr";

/// Whether `tesseract` can be run.
pub fn tesseract_available() -> bool {
    Command::new("tesseract")
        .arg("--version")
        .output()
        .map(|o| o.status.success())
        .unwrap_or(false)
}

/// Decodes a grayscale PNG of any bit depth into 8-bit pixels.
pub fn decode_gray(png_bytes: &[u8]) -> (u32, u32, Vec<u8>) {
    let mut decoder = png::Decoder::new(std::io::Cursor::new(png_bytes));
    decoder.set_transformations(png::Transformations::EXPAND);
    let mut reader = decoder.read_info().unwrap();
    let mut buf = vec![0; reader.output_buffer_size().unwrap()];
    let info = reader.next_frame(&mut buf).unwrap();
    assert_eq!(info.color_type, png::ColorType::Grayscale);
    assert_eq!(info.bit_depth, png::BitDepth::Eight);
    buf.truncate(info.buffer_size());
    (info.width, info.height, buf)
}

/// Writes an 8-bit grayscale PNG.
pub fn write_gray(path: &Path, w: u32, h: u32, pixels: &[u8]) {
    let file = std::fs::File::create(path).unwrap();
    let mut enc = png::Encoder::new(std::io::BufWriter::new(file), w, h);
    enc.set_color(png::ColorType::Grayscale);
    enc.set_depth(png::BitDepth::Eight);
    let mut writer = enc.write_header().unwrap();
    writer.write_image_data(pixels).unwrap();
}

/// Bilinear upscale by an integer factor with a white border of `pad` pixels
/// (OCR preprocessing only; the model gets the original pixels).
pub fn upscale(w: u32, h: u32, px: &[u8], factor: u32, pad: u32) -> (u32, u32, Vec<u8>) {
    let (nw, nh) = (w * factor + 2 * pad, h * factor + 2 * pad);
    let mut out = vec![255u8; (nw * nh) as usize];
    let at = |x: i64, y: i64| -> f32 {
        let x = x.clamp(0, w as i64 - 1) as u32;
        let y = y.clamp(0, h as i64 - 1) as u32;
        f32::from(px[(y * w + x) as usize])
    };
    for y in 0..h * factor {
        for x in 0..w * factor {
            let sx = (x as f32 + 0.5) / factor as f32 - 0.5;
            let sy = (y as f32 + 0.5) / factor as f32 - 0.5;
            let (x0, y0) = (sx.floor(), sy.floor());
            let (fx, fy) = (sx - x0, sy - y0);
            let (x0, y0) = (x0 as i64, y0 as i64);
            let v = at(x0, y0) * (1.0 - fx) * (1.0 - fy)
                + at(x0 + 1, y0) * fx * (1.0 - fy)
                + at(x0, y0 + 1) * (1.0 - fx) * fy
                + at(x0 + 1, y0 + 1) * fx * fy;
            out[((y + pad) * nw + x + pad) as usize] = v.round().clamp(0.0, 255.0) as u8;
        }
    }
    (nw, nh, out)
}

/// Runs tesseract (`--psm 6`, English) on a PNG file.
pub fn tesseract(path: &Path) -> String {
    let out = Command::new("tesseract")
        .arg(path)
        .arg("stdout")
        .args(["--psm", "6", "-l", "eng"])
        .env("OMP_THREAD_LIMIT", "1")
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// OCR of one rendered image (base64 PNG), upscaled by `factor` first.
pub fn read_image(image_b64: &str, factor: u32, scratch: &Path) -> String {
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(image_b64)
        .unwrap();
    let (w, h, px) = decode_gray(&bytes);
    let (w, h, px) = upscale(w, h, &px, factor, 12);
    write_gray(scratch, w, h, &px);
    tesseract(scratch)
}

/// Whitespace-insensitive form: each line's whitespace runs collapsed to one
/// space, trimmed, blank lines dropped.
pub fn normalize(text: &str) -> String {
    text.lines()
        .map(|l| l.split_whitespace().collect::<Vec<_>>().join(" "))
        .filter(|l| !l.is_empty())
        .collect::<Vec<_>>()
        .join("\n")
}

/// Whether a line is mostly a horizontal rule (runs of 4+ of the same
/// punctuation character, e.g. pytest's `=====` and `_____` separators).
/// Tesseract drops such runs as graphics or reads `=` as `se`; a vision model
/// reads them fine, so they say nothing about legibility.
pub fn is_rule(line: &str) -> bool {
    let chars: Vec<char> = line.chars().collect();
    let mut in_runs = 0;
    let mut i = 0;
    while i < chars.len() {
        let mut j = i;
        while j < chars.len() && chars[j] == chars[i] {
            j += 1;
        }
        if j - i >= 4 && chars[i].is_ascii_punctuation() {
            in_runs += j - i;
        }
        i = j;
    }
    in_runs * 2 >= chars.len() && !chars.is_empty()
}

/// Accuracy of `got` against `expected` (both [`normalize`]d) without rule
/// lines. Rule lines are dropped by position, so this needs tesseract to have
/// returned as many lines as expected; otherwise the whole texts are compared.
pub fn accuracy_without_rules(expected: &str, got: &str) -> f64 {
    let e: Vec<&str> = expected.lines().collect();
    let g: Vec<&str> = got.lines().collect();
    if e.len() != g.len() {
        return accuracy(expected, got);
    }
    let keep: Vec<usize> = (0..e.len()).filter(|&i| !is_rule(e[i])).collect();
    let pick = |v: &[&str]| keep.iter().map(|&i| v[i]).collect::<Vec<_>>().join("\n");
    accuracy(&pick(&e), &pick(&g))
}

/// Character accuracy: 1 − edit distance / expected length (≥ 0).
pub fn accuracy(expected: &str, got: &str) -> f64 {
    let a: Vec<char> = expected.chars().collect();
    let b: Vec<char> = got.chars().collect();
    if a.is_empty() {
        return if b.is_empty() { 1.0 } else { 0.0 };
    }
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    let mut cur = vec![0; b.len() + 1];
    for (i, ca) in a.iter().enumerate() {
        cur[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let sub = prev[j] + usize::from(ca != cb);
            cur[j + 1] = sub.min(prev[j + 1] + 1).min(cur[j] + 1);
        }
        std::mem::swap(&mut prev, &mut cur);
    }
    (1.0 - prev[b.len()] as f64 / a.len() as f64).max(0.0)
}

/// The text drawn in each image of `snapshot` (rows of `text` wrapped as fitted).
pub fn drawn_text(text: &str, snapshot: &Snapshot) -> Vec<String> {
    let lines = match snapshot.flow {
        Flow::Lines => layout::lay_out(text),
        Flow::Reflow => layout::lay_out(text).reflowed(),
    };
    let rows = lines.wrap(snapshot.rendering.columns);
    let mut out = Vec::new();
    let mut start = 0;
    for &n in &snapshot.rendering.image_rows {
        let chunk: Vec<String> = rows[start..start + n]
            .iter()
            .map(|r| r.iter().collect())
            .collect();
        out.push(chunk.join("\n"));
        start += n;
    }
    out
}

/// Mean character accuracy of `texts` rendered for `provider` with `optical`
/// and read back at `factor`× (weighted by expected length).
pub fn mean_accuracy(
    texts: &[String],
    provider: Provider,
    optical: &OpticalConfig,
    factor: u32,
    scratch_dir: &Path,
) -> f64 {
    mean_accuracy_flow(texts, provider, optical, Flow::Lines, factor, scratch_dir)
}

/// [`mean_accuracy`] with the lines put on the image as `flow` says.
pub fn mean_accuracy_flow(
    texts: &[String],
    provider: Provider,
    optical: &OpticalConfig,
    flow: Flow,
    factor: u32,
    scratch_dir: &Path,
) -> f64 {
    let (mut good, mut total) = (0.0, 0.0);
    for (i, text) in texts.iter().enumerate() {
        let snap = optical::render_flow(text, provider, optical, flow)
            .unwrap()
            .unwrap();
        for (j, (image, drawn)) in snap.images.iter().zip(drawn_text(text, &snap)).enumerate() {
            let scratch: PathBuf = scratch_dir.join(format!("ocr-{flow:?}-{i}-{j}.png"));
            let got = read_image(&image.data, factor, &scratch);
            let expected = normalize(&drawn);
            let acc = accuracy_without_rules(&expected, &normalize(&got));
            if std::env::var_os("TRACELITE_OCR_DEBUG").is_some() {
                eprintln!("{provider:?} text {i} image {j}: {acc:.3}");
                std::fs::write(scratch.with_extension("expected.txt"), &expected).unwrap();
                std::fs::write(scratch.with_extension("ocr.txt"), normalize(&got)).unwrap();
            }
            let n = expected.chars().count() as f64;
            good += acc * n;
            total += n;
        }
    }
    if total == 0.0 {
        1.0
    } else {
        good / total
    }
}

/// A deterministic sample of real observations: from every `stride`-th trace,
/// observations between 400 and 2,500 characters, at most `per_trace` each,
/// `limit` in all. With `skip_rules`, observations with horizontal rule lines
/// (see [`is_rule`]) are left out: tesseract cannot read those at any size.
pub fn sample_observations(
    stride: usize,
    per_trace: usize,
    limit: usize,
    skip_rules: bool,
) -> Vec<String> {
    let mut out = Vec::new();
    for path in super::common::trace_files().iter().step_by(stride.max(1)) {
        let trace = super::common::load_trace(path);
        let mut taken = 0;
        for step in &trace.steps {
            let n = step.observation.chars().count();
            let ruled = skip_rules && step.observation.lines().any(|l| is_rule(l.trim()));
            if (400..=2500).contains(&n) && taken < per_trace && !ruled {
                out.push(step.observation.clone());
                taken += 1;
            }
        }
        if out.len() >= limit {
            break;
        }
    }
    out.truncate(limit);
    out
}
