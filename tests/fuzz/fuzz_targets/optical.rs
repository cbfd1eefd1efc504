//! The optical renderer on any text with any provider and in-range settings:
//! layout, plan and render never panic, are deterministic, and agree with
//! each other (one image per planned image, of the planned size, a valid PNG
//! whose header states that size).
#![no_main]

use libfuzzer_sys::fuzz_target;
use tracelite::config::{OpticalConfig, Provider};
use tracelite::optical;

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
    let planned = optical::plan(&text, provider, &optical);
    assert_eq!(
        planned,
        optical::plan(&text, provider, &optical),
        "plan is deterministic"
    );
    let rendered = optical::render(&text, provider, &optical).expect("render of a plan succeeds");
    match (&planned, &rendered) {
        (None, None) => {}
        (Some(p), Some(r)) => {
            assert_eq!(p.plan, r.plan, "render follows the plan");
            assert_eq!(r.images.len(), r.plan.image_rows.len());
            assert_eq!(r.plan.image_rows.iter().sum::<usize>(), r.plan.rows);
            for (img, &(w, h)) in r.images.iter().zip(&r.plan.image_sizes) {
                assert_eq!((img.width, img.height), (w, h));
                let bytes = tracelite::formats::image_header::decode_base64(&img.data)
                    .expect("rendered base64 decodes");
                let dims = tracelite::formats::image_header::dimensions(&bytes[..]);
                assert_eq!(dims, Some((w, h)), "PNG header states the planned size");
            }
            let again = optical::render(&text, provider, &optical).expect("second render");
            assert_eq!(rendered, again, "render is deterministic");
        }
        _ => panic!("plan and render disagree on whether the text renders"),
    }
});
