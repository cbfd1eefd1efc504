//! Property tests of the snapshot encoder (the `png` crate at
//! `encode::PNG_SETTINGS`): any bitmap at any depth decodes back to its
//! pixels, the bytes are deterministic, and the stream never grows much past
//! the raw scanlines.
#![allow(
    clippy::indexing_slicing,
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic
)]

mod common;

use common::decode_png;
use proptest::prelude::*;
use tracelite::optical::encode::{self, BIT_DEPTHS};
use tracelite::optical::raster::Bitmap;

/// Rows built from a few kinds: paper, noise, a copy of an earlier row, a
/// repeated "glyph" pattern at any offset, a run of one byte.
fn bitmap() -> impl Strategy<Value = Bitmap> {
    (
        1u32..700,
        1u32..60,
        prop::sample::select(BIT_DEPTHS.to_vec()),
        prop::collection::vec((0u8..5, any::<u64>()), 1..60),
    )
        .prop_map(|(width, height, bits, kinds)| {
            let stride = Bitmap::row_bytes(width, bits);
            let glyph: Vec<u8> = (0..13u8).map(|i| i.wrapping_mul(41) ^ 0x5a).collect();
            let mut data = vec![0xffu8; stride * height as usize];
            for y in 0..height as usize {
                let (kind, seed) = kinds[y % kinds.len()];
                let mut s = seed;
                let row_start = y * stride;
                for x in 0..stride {
                    s = s.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1);
                    let b = match kind {
                        0 => 0xff,
                        1 => (s >> 56) as u8,
                        2 if y > 0 => {
                            data[row_start - stride * (1 + (seed as usize % y.min(8))) + x]
                        }
                        3 => glyph[(x + seed as usize) % glyph.len()],
                        _ => seed as u8,
                    };
                    data[row_start + x] = b;
                }
            }
            Bitmap::new(width, height, bits, data)
        })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]

    #[test]
    fn png_round_trips_deterministically(bm in bitmap()) {
        let encoded = encode::png(&bm).unwrap();
        prop_assert_eq!(&decode_png(&encoded), &bm);
        prop_assert_eq!(&encoded, &encode::png(&bm).unwrap());
        // Chunks (57 bytes), zlib's header and stored blocks (5 bytes per 16 KiB at worst).
        let raw = bm.data.len() + bm.height as usize;
        prop_assert!(encoded.len() <= 57 + 300 + raw * 9 / 8, "{} bytes for {} raw", encoded.len(), raw);
    }
}
