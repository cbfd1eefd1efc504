//! Property tests of the PNG writer: any bitmap at any depth decodes back
//! to its pixels with an independent decoder (the `png` crate), the bytes are
//! deterministic, and the stream never grows much past the raw scanlines.
#![allow(
    clippy::indexing_slicing,
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic
)]

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

fn decode(png_bytes: &[u8]) -> (png::OutputInfo, Vec<u8>) {
    let mut reader = png::Decoder::new(std::io::Cursor::new(png_bytes))
        .read_info()
        .unwrap();
    let mut buf = vec![0; reader.output_buffer_size().unwrap()];
    let info = reader.next_frame(&mut buf).unwrap();
    buf.truncate(info.buffer_size());
    (info, buf)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]

    #[test]
    fn png_round_trips_deterministically(bm in bitmap()) {
        let encoded = encode::png(&bm).unwrap();
        let (info, pixels) = decode(&encoded);
        prop_assert_eq!((info.width, info.height), (bm.width, bm.height));
        prop_assert_eq!(info.bit_depth as u8, bm.bits);
        prop_assert_eq!(pixels, bm.data.clone());
        prop_assert_eq!(&encoded, &encode::png(&bm).unwrap());
        // Chunks (57 bytes), a dynamic header and literals of at most 9 bits.
        let raw = bm.data.len() + bm.height as usize;
        prop_assert!(encoded.len() <= 57 + 300 + raw * 9 / 8, "{} bytes for {} raw", encoded.len(), raw);
    }
}
