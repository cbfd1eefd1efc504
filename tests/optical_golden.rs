//! Golden images: the renderer's pixels for fixed inputs (size, bit depth and
//! every pixel, decoded by the `png` crate) are compared with
//! `tests/golden/*.png`, so a changed pixel fails while a change of the PNG
//! encoder's filters or deflate level alone does not. After an intended
//! change, look at the new images in `target/tmp/optical-golden/` and
//! re-accept them with `TRACELITE_ACCEPT=1 cargo test --test optical_golden`.
#![allow(
    clippy::indexing_slicing,
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic
)]

use std::path::Path;

mod common;

use common::decode_png;

use base64::Engine;
use tracelite::config::{OpticalConfig, Provider};
use tracelite::optical::raster::Bitmap;
use tracelite::optical::{self, encode, Flow};

const PYTHON: &str = "\
def total(orders, *, tax=0.2):
    \"\"\"Sum of order amounts with tax.\"\"\"
    s = 0
    for o in orders:
        if o.amount < 0:
            raise ValueError(f\"negative amount: {o.amount!r}\")
        s += o.amount
    return round(s * (1 + tax), 2)  # {}[]<>|\\~`^_@#$%&
";

const TERMINAL: &str = "\
\u{1b}[1m============================= test session starts ==============================\u{1b}[0m
platform linux -- Python 3.11.4, pytest-7.4.0, pluggy-1.2.0
collected 3 items\r\n
tests/test_pricing.py \u{1b}[32m.\u{1b}[0m\u{1b}[31mF\u{1b}[0m\u{1b}[32m.\u{1b}[0m\t[100%]
downloading 10%\r50%\rdone

FAILED tests/test_pricing.py::test_discount - AssertionError: assert 9.5 == 9.0
\u{1}ctrl\u{7f} tab\tend
naïve café — “quotes” ✓ ✗ 日本 ─┼─
";

fn long_log() -> String {
    (0..120)
        .map(|i| {
            format!(
                "{i:04} INFO worker-{} processed batch {} in {}ms\n",
                i % 7,
                i * 31 % 997,
                i * 13 % 211
            )
        })
        .collect()
}

/// How the image of `got` differs from that of `want`: its size or depth, or
/// the first pixel that differs. `None` when every pixel is the same.
fn difference(want: &[u8], got: &[u8]) -> Option<String> {
    let (want, got) = (decode_png(want), decode_png(got));
    let shape = |b: &Bitmap| (b.width, b.height, b.bits);
    if shape(&want) != shape(&got) {
        return Some(format!(
            "{:?} (width, height, bits) instead of {:?}",
            shape(&got),
            shape(&want)
        ));
    }
    (0..want.height)
        .flat_map(|y| (0..want.width).map(move |x| (x, y)))
        .find(|&(x, y)| want.gray(x, y) != got.gray(x, y))
        .map(|(x, y)| {
            format!(
                "pixel ({x}, {y}) is {} instead of {}",
                got.gray(x, y),
                want.gray(x, y)
            )
        })
}

fn check(name: &str, text: &str, provider: Provider, optical: &OpticalConfig) {
    check_flow(name, text, provider, optical, Flow::Lines);
}

fn check_flow(name: &str, text: &str, provider: Provider, optical: &OpticalConfig, flow: Flow) {
    let snap = optical::render_flow(text, provider, optical, flow)
        .unwrap()
        .unwrap();
    let accept = std::env::var_os("TRACELITE_ACCEPT").is_some();
    let golden = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/golden");
    let out = Path::new(env!("CARGO_TARGET_TMPDIR")).join("optical-golden");
    std::fs::create_dir_all(&out).unwrap();
    for (i, image) in snap.images.iter().enumerate() {
        let bytes = base64::engine::general_purpose::STANDARD
            .decode(&image.data)
            .unwrap();
        let file = format!("{name}-{i}.png");
        std::fs::write(out.join(&file), &bytes).unwrap();
        let path = golden.join(&file);
        if accept {
            std::fs::write(&path, &bytes).unwrap();
            continue;
        }
        let want = std::fs::read(&path).unwrap_or_else(|_| {
            panic!(
                "missing {file}; accept with TRACELITE_ACCEPT=1 cargo test --test optical_golden"
            )
        });
        if let Some(diff) = difference(&want, &bytes) {
            panic!(
                "{file} differs from the golden image: {diff} (new one in {}); if intended, \
                 accept with TRACELITE_ACCEPT=1 cargo test --test optical_golden",
                out.display()
            );
        }
    }
    if !accept {
        let extra = golden.join(format!("{name}-{}.png", snap.images.len()));
        assert!(!extra.exists(), "{name}: fewer images than the golden set");
    }
}

#[test]
fn python_source_at_defaults() {
    check(
        "python-anthropic",
        PYTHON,
        Provider::Anthropic,
        &OpticalConfig::default(),
    );
    check(
        "python-openai",
        PYTHON,
        Provider::Openai,
        &OpticalConfig::default(),
    );
}

#[test]
fn terminal_output_with_ansi_cr_tabs_controls_and_missing_glyphs() {
    check(
        "terminal-anthropic",
        TERMINAL,
        Provider::Anthropic,
        &OpticalConfig::default(),
    );
}

#[test]
fn bit_depths() {
    for bits in [1u8, 8] {
        let o = OpticalConfig {
            bit_depth: bits,
            ..OpticalConfig::default()
        };
        check(
            &format!("python-{bits}bit"),
            PYTHON,
            Provider::Anthropic,
            &o,
        );
    }
}

#[test]
fn reflowed_output_marks_line_breaks() {
    let o = OpticalConfig::default();
    check_flow(
        "terminal-reflow-anthropic",
        TERMINAL,
        Provider::Anthropic,
        &o,
        Flow::Reflow,
    );
    // Every row but the last is full: no blank cells are paid for.
    let snap = optical::fit_flow(TERMINAL, Provider::Anthropic, &o, Flow::Reflow).unwrap();
    let lines = optical::fit(TERMINAL, Provider::Anthropic, &o).unwrap();
    assert_eq!(snap.lines, 1);
    assert!(snap.image_tokens() < lines.image_tokens());
}

#[test]
fn long_output_splits_into_several_images() {
    let o = OpticalConfig {
        detail: "low".into(),
        ..OpticalConfig::default()
    };
    let snap = optical::render(&long_log(), Provider::Openai, &o)
        .unwrap()
        .unwrap();
    assert!(snap.images.len() > 1, "{:?}", snap.rendering.image_sizes);
    check("log-openai-low", &long_log(), Provider::Openai, &o);
}

#[test]
fn a_changed_pixel_fails_and_the_same_pixels_pass() {
    let golden = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/golden/python-anthropic-0.png");
    let bytes = std::fs::read(golden).unwrap();
    let mut image = decode_png(&bytes);
    // The same pixels through the encoder at other settings than the golden's
    // (no filter, level 1): other bytes, no difference.
    let other = encode::png_with(
        &image,
        encode::PngSettings {
            filter: encode::Filter::Sub,
            compression: encode::DeflateCompression::Level(6),
        },
    )
    .unwrap();
    assert_ne!(other, bytes);
    assert_eq!(difference(&bytes, &other), None);
    // One pixel of paper turned to ink, far from the first row.
    let (x, y) = (image.width - 3, image.height - 2);
    assert_eq!(image.gray(x, y), 255);
    let bit = x as usize * usize::from(image.bits);
    image.data[y as usize * image.stride + bit / 8] ^= 0x80 >> (bit % 8);
    let changed = encode::png(&image).unwrap();
    assert_eq!(
        difference(&bytes, &changed),
        Some(format!(
            "pixel ({x}, {y}) is {} instead of 255",
            image.gray(x, y)
        ))
    );
}
