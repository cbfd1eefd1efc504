//! The optical renderer on any text with any provider and in-range settings:
//! layout, fit and render never panic, are deterministic, and agree with
//! each other (one image per fitted image, of the fitted size, a valid PNG
//! whose header states that size and that an independent decoder, the `png`
//! crate, reads back at that size and bit depth). Both flows: line by line
//! and reflowed.
#![no_main]

use libfuzzer_sys::fuzz_target;
use tracelite::config::{OpticalConfig, Provider};
use tracelite::optical::{self, Flow};

const PROVIDERS: [Provider; 5] = [
    Provider::Anthropic,
    Provider::Openai,
    Provider::OpenaiPatch,
    Provider::Gemini,
    Provider::Qwen,
];

fuzz_target!(|data: &[u8]| {
    let Some((head, rest)) = data.split_first_chunk::<6>() else {
        return;
    };
    let text = String::from_utf8_lossy(rest);
    let provider = PROVIDERS[usize::from(head[0]) % PROVIDERS.len()];
    let font_px = 4 + u32::from(head[1]) % 61; // 4..=64
    let min_font_px = 4 + u32::from(head[2]) % (font_px - 3); // 4..=font_px
    let mut optical = OpticalConfig {
        font_px,
        min_font_px,
        line_gap: u32::from(head[3] & 3),
        min_columns: 1 + usize::from(head[4]),
        bit_depth: [1, 2, 4, 8][usize::from(head[5] & 3)],
        ..OpticalConfig::default()
    };
    if head[5] & 4 != 0 {
        optical.detail = "low".into();
    }
    optical.media_resolution =
        ["", "low", "medium", "high"][usize::from((head[5] >> 3) & 3)].into();

    let flow = if head[5] & 32 != 0 {
        Flow::Reflow
    } else {
        Flow::Lines
    };

    let lines = optical::layout::lay_out(&text);
    assert_eq!(
        lines,
        optical::layout::lay_out(&text),
        "layout is deterministic"
    );
    for l in &lines.lines {
        assert!(
            !l.contains(&'\n') && !l.contains(&'\r'),
            "no line ends inside a line"
        );
    }
    let fitted = optical::fit_flow(&text, provider, &optical, flow);
    assert_eq!(
        fitted,
        optical::fit_flow(&text, provider, &optical, flow),
        "fit is deterministic"
    );
    let rendered = optical::render_flow(&text, provider, &optical, flow)
        .expect("render of a fitted text succeeds");
    match (&fitted, &rendered) {
        (None, None) => {}
        (Some(p), Some(r)) => {
            assert_eq!(p.rendering, r.rendering, "render follows the fit");
            assert_eq!(r.images.len(), r.rendering.image_rows.len());
            assert_eq!(r.rendering.image_rows.iter().sum::<usize>(), r.rendering.rows);
            for (img, &(w, h)) in r.images.iter().zip(&r.rendering.image_sizes) {
                assert_eq!((img.width, img.height), (w, h));
                let bytes = tracelite::formats::image_header::decode_base64(&img.data)
                    .expect("rendered base64 decodes");
                let dims = tracelite::formats::image_header::dimensions(&bytes[..]);
                assert_eq!(dims, Some((w, h)), "PNG header states the fitted size");
                decodes_at(&bytes, w, h, optical.bit_depth);
            }
            let again =
                optical::render_flow(&text, provider, &optical, flow).expect("second render");
            assert_eq!(rendered, again, "render is deterministic");
        }
        _ => panic!("fit and render disagree on whether the text renders"),
    }
});

/// The `png` crate decodes the whole image (every chunk CRC, the zlib
/// stream) to the fitted size and bit depth, in grayscale.
fn decodes_at(bytes: &[u8], width: u32, height: u32, bits: u8) {
    let mut reader = png::Decoder::new(std::io::Cursor::new(bytes))
        .read_info()
        .expect("PNG header decodes");
    let mut buf = vec![0; reader.output_buffer_size().expect("buffer size")];
    let info = reader.next_frame(&mut buf).expect("PNG data decodes");
    assert_eq!((info.width, info.height), (width, height));
    assert_eq!(info.color_type, png::ColorType::Grayscale);
    assert_eq!(info.bit_depth as u8, bits);
}
