//! Encode: a packed [`Bitmap`] becomes a grayscale PNG (the `png` crate),
//! then base64 (the `base64` crate).
//!
//! The scanline filter and deflate level are [`PNG_SETTINGS`], chosen by
//! `examples/png_sizes.rs` on the snapshots of the real trajectories (bytes
//! per image token against encode time; the table is in
//! `bench/PNG-ENCODER.md`). Every choice is fixed, so the bytes are
//! deterministic.

use base64::Engine;

use super::raster::Bitmap;
use crate::error::{Error, ErrorCode, Result};

pub use super::raster::BIT_DEPTHS;
pub use png::{DeflateCompression, Filter};

/// Scanline filter and deflate compression of a PNG.
#[derive(Debug, Clone, Copy)]
pub struct PngSettings {
    /// Filter of every scanline (or adaptive, per scanline).
    pub filter: Filter,
    /// Deflate compression of the filtered scanlines.
    pub compression: DeflateCompression,
}

/// The settings snapshots are encoded with.
pub const PNG_SETTINGS: PngSettings = PngSettings {
    filter: Filter::NoFilter,
    compression: DeflateCompression::Level(2),
};

/// Encodes `bitmap` as a grayscale PNG at its bit depth with [`PNG_SETTINGS`].
pub fn png(bitmap: &Bitmap) -> Result<Vec<u8>> {
    png_with(bitmap, PNG_SETTINGS)
}

/// Encodes `bitmap` as a grayscale PNG at its bit depth with `settings`.
pub fn png_with(bitmap: &Bitmap, settings: PngSettings) -> Result<Vec<u8>> {
    let fail = |what: String| Error::new(ErrorCode::RenderFailed, "optical", what);
    let depth = match bitmap.bits {
        1 => png::BitDepth::One,
        2 => png::BitDepth::Two,
        4 => png::BitDepth::Four,
        8 => png::BitDepth::Eight,
        _ => return Err(fail("bit depth must be 1, 2, 4 or 8".into())),
    };
    if bitmap.width == 0 || bitmap.height == 0 || bitmap.width > i32::MAX as u32 {
        return Err(fail("image must be at least 1x1 pixel".into()));
    }
    let stride = Bitmap::row_bytes(bitmap.width, bitmap.bits);
    if stride != bitmap.stride || bitmap.data.len() != stride * bitmap.height as usize {
        return Err(fail("bitmap size does not match its dimensions".into()));
    }
    let mut out = Vec::with_capacity(bitmap.data.len() / 8 + 64);
    let mut encoder = png::Encoder::new(&mut out, bitmap.width, bitmap.height);
    encoder.set_color(png::ColorType::Grayscale);
    encoder.set_depth(depth);
    encoder.set_filter(settings.filter);
    encoder.set_deflate_compression(settings.compression);
    let written = encoder
        .write_header()
        .and_then(|mut w| w.write_image_data(&bitmap.data).and_then(|()| w.finish()));
    written.map_err(|e| fail(format!("PNG encoder: {e}")))?;
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
    fn rejects_inconsistent_bitmaps() {
        assert!(png(&Bitmap::new(4, 2, 3, vec![0; 8])).is_err());
        assert!(png(&Bitmap::new(0, 2, 8, vec![])).is_err());
        assert!(png(&Bitmap::new(4, 2, 8, vec![0; 7])).is_err());
        assert!(png(&Bitmap::new(4, 2, 1, vec![0xff; 2])).is_ok());
    }

    #[test]
    fn paper_compresses_to_almost_nothing() {
        let bm = Bitmap::new(1000, 1000, 2, vec![0xff; 250 * 1000]);
        let bytes = png(&bm).unwrap_or_default();
        assert!(!bytes.is_empty() && bytes.len() < 5_000, "{}", bytes.len());
    }
}
