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
    let bits = if BIT_DEPTHS.contains(&bits) { bits } else { 8 };
    let levels = (1u32 << bits) - 1;
    // Nearest level for each gray value.
    let lut: Vec<u8> = (0u32..256)
        .map(|g| ((g * levels + 127) / 255) as u8)
        .collect();
    let width = canvas.width as usize;
    let per_byte = 8 / bits as usize;
    let row_bytes = width.div_ceil(per_byte);
    let mut out = Vec::with_capacity(row_bytes * canvas.height as usize);
    for row in canvas.pixels.chunks_exact(width.max(1)) {
        if bits == 8 {
            out.extend_from_slice(row);
            continue;
        }
        for group in row.chunks(per_byte) {
            let mut byte = 0u8;
            for (i, &g) in group.iter().enumerate() {
                let shift = 8 - bits as usize * (i + 1);
                byte |= lut.get(usize::from(g)).copied().unwrap_or(0) << shift;
            }
            out.push(byte);
        }
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
        encoder.set_filter(png::Filter::NoFilter);
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
