//! Encode: a canvas becomes a grayscale PNG at a low bit depth, then base64.
//!
//! Text on paper needs few gray levels: 2 bits (4 levels) keeps anti-aliased
//! edges and packs four pixels per byte, so deflate has a quarter of the
//! bytes to compress. Fixed encoder settings make the bytes deterministic.

use base64::Engine;

use super::raster::Canvas;
use crate::error::{Error, ErrorCode, Result};

/// Bit depths a PNG grayscale image may use.
pub const BIT_DEPTHS: [u8; 4] = [1, 2, 4, 8];

/// Packs `canvas` at `bits` per pixel (1, 2, 4 or 8), most significant bits first.
pub fn pack(canvas: &Canvas, bits: u8) -> Vec<u8> {
    match bits {
        1 => pack_at::<1>(canvas),
        2 => pack_at::<2>(canvas),
        4 => pack_at::<4>(canvas),
        _ => canvas.pixels.clone(),
    }
}

/// [`pack`] at a bit depth known at compile time, so the per-pixel loop unrolls.
fn pack_at<const BITS: usize>(canvas: &Canvas) -> Vec<u8> {
    let per_byte = 8 / BITS;
    let levels = (1u32 << BITS) - 1;
    // Nearest level for each gray value, pre-shifted to each slot of a byte.
    let mut lut = [[0u8; 256]; 8];
    for (g, _) in (0u32..256).zip(0..) {
        let level = ((g * levels + 127) / 255) as u8;
        for (slot, table) in lut.iter_mut().take(per_byte).enumerate() {
            if let Some(v) = table.get_mut(g as usize) {
                *v = level << (8 - BITS * (slot + 1));
            }
        }
    }
    let white = lut.iter().take(per_byte).fold(0u8, |b, t| b | t[255]);
    let width = canvas.width as usize;
    let row_bytes = width.div_ceil(per_byte);
    let mut out = Vec::with_capacity(row_bytes * canvas.height as usize);
    // A byte index into a 256-entry table and a slot below `per_byte` are
    // always in bounds.
    #[allow(clippy::indexing_slicing)]
    let byte = |group: &[u8]| {
        group
            .iter()
            .enumerate()
            .fold(0u8, |b, (slot, &g)| b | lut[slot][usize::from(g)])
    };
    for row in canvas.pixels.chunks_exact(width.max(1)) {
        // Paper dominates a text image: skip through it eight pixels at a time.
        let mut words = row.chunks_exact(8);
        for word in &mut words {
            if word.iter().all(|&g| g == 255) {
                out.extend_from_slice(&[white; 8][..8 / per_byte]);
            } else {
                out.extend(word.chunks_exact(per_byte).map(byte));
            }
        }
        let rest = words.remainder();
        out.extend(rest.chunks(per_byte).map(byte));
    }
    out
}

/// Encodes `canvas` as a grayscale PNG at `bits` per pixel.
pub fn png(canvas: &Canvas, bits: u8) -> Result<Vec<u8>> {
    let depth = match bits {
        1 => png::BitDepth::One,
        2 => png::BitDepth::Two,
        4 => png::BitDepth::Four,
        _ => png::BitDepth::Eight,
    };
    let data = pack(canvas, bits);
    let mut out = Vec::with_capacity(data.len() / 4 + 128);
    let fail =
        |e: png::EncodingError| Error::new(ErrorCode::RenderFailed, "optical", e.to_string());
    {
        let mut encoder = png::Encoder::new(&mut out, canvas.width, canvas.height);
        encoder.set_color(png::ColorType::Grayscale);
        encoder.set_depth(depth);
        encoder.set_compression(png::Compression::Fast);
        encoder.set_filter(png::Filter::Up);
        let mut writer = encoder.write_header().map_err(fail)?;
        writer.write_image_data(&data).map_err(fail)?;
        writer.finish().map_err(fail)?;
    }
    Ok(out)
}

/// Standard base64 of `bytes`.
pub fn base64(bytes: &[u8]) -> String {
    base64::engine::general_purpose::STANDARD.encode(bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn packs_msb_first_and_pads_rows() {
        let canvas = Canvas {
            width: 5,
            height: 1,
            pixels: vec![0, 255, 85, 170, 255],
        };
        assert_eq!(pack(&canvas, 2), vec![0b0011_0110, 0b1100_0000]);
        assert_eq!(pack(&canvas, 1), vec![0b0101_1000]);
        assert_eq!(pack(&canvas, 8), canvas.pixels);
    }

    #[test]
    fn png_has_signature_and_is_deterministic() {
        let canvas = Canvas {
            width: 7,
            height: 3,
            pixels: (0..21).map(|i| (i * 12) as u8).collect(),
        };
        for bits in BIT_DEPTHS {
            let a = png(&canvas, bits).unwrap();
            assert_eq!(&a[..8], b"\x89PNG\r\n\x1a\n");
            assert_eq!(a, png(&canvas, bits).unwrap());
        }
        assert_eq!(base64(b"hi?"), "aGk/");
    }
}
