//! Image headers of inline (base64) image parts: checks the base64 payload
//! and reads the pixel size from the first bytes of PNG, JPEG, GIF and WebP,
//! without decoding the image and without decoding the whole payload.
//!
//! Base64 is random access (every 4 characters are 3 bytes), so a
//! [`Base64Bytes`] view decodes (with the `base64` crate) only the 4-character
//! groups holding the few bytes a header reader asks for: the JPEG reader
//! walks the segment markers of a payload of any size reading 4–9 bytes per
//! segment.
//!
//! What is accepted as base64: the standard alphabet (`A–Z a–z 0–9 + /`) or
//! the URL-safe one (`-` `_`), no whitespace, `=` padding only at the end (at
//! most two, and then the length is a multiple of 4); unpadded payloads are
//! accepted when their length is not 1 more than a multiple of 4.
//!
//! The format is sniffed from the magic bytes; the declared media type is not
//! trusted. A payload that is valid base64 but whose format is unknown or whose
//! header cannot be read (truncated, a JPEG without a frame header before its
//! scan data) has unknown size: [`dimensions`] gives `None` and the image
//! passes through unchanged. Whether it is an image at all is the provider's
//! call; the pixel limit counts only sizes that are known.

use std::borrow::Cow;

use base64::alphabet;
use base64::engine::{DecodePaddingMode, GeneralPurpose, GeneralPurposeConfig};
use base64::Engine;

/// Decoding of unpadded groups; nonzero bits after the last byte are ignored.
const DECODE: GeneralPurposeConfig = GeneralPurposeConfig::new()
    .with_decode_padding_mode(DecodePaddingMode::RequireNone)
    .with_decode_allow_trailing_bits(true);
/// The standard alphabet's decoder (a payload with `-` or `_` is mapped to it).
const STANDARD: GeneralPurpose = GeneralPurpose::new(&alphabet::STANDARD, DECODE);

/// What is wrong with a base64 payload.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Base64Problem {
    /// The payload is empty.
    Empty,
    /// A byte outside the alphabet, at this byte offset of the payload.
    Alphabet {
        /// Byte offset in the payload.
        at: usize,
    },
    /// `=` padding that is not at the end, more than two `=`, or padding on a
    /// payload whose length is not a multiple of 4.
    Padding,
    /// The length leaves one stray character (length ≡ 1 mod 4).
    Length,
}

impl Base64Problem {
    /// A short description for an error message.
    pub fn describe(self) -> String {
        match self {
            Self::Empty => "the image data is empty".into(),
            Self::Alphabet { at } => {
                format!("the image data is not valid base64 (bad character at offset {at})")
            }
            Self::Padding => "the image data is not valid base64 (misplaced `=` padding)".into(),
            Self::Length => "the image data is not valid base64 (truncated: bad length)".into(),
        }
    }
}

/// Whether `c` is a base64 character of the standard or URL-safe alphabet.
fn in_alphabet(c: u8) -> bool {
    c.is_ascii_alphanumeric() || matches!(c, b'+' | b'/' | b'-' | b'_')
}

/// A checked base64 payload, read as bytes on demand.
#[derive(Debug, Clone, Copy)]
pub struct Base64Bytes<'a> {
    /// The payload without its `=` padding.
    chars: &'a [u8],
    /// Whether it has URL-safe characters (`-`, `_`), read as `+`, `/`.
    url_safe: bool,
}

impl<'a> Base64Bytes<'a> {
    /// Checks `data` (see the module docs for what is accepted).
    pub fn new(data: &'a str) -> Result<Self, Base64Problem> {
        let bytes = data.as_bytes();
        if bytes.is_empty() {
            return Err(Base64Problem::Empty);
        }
        let body_len = bytes.len() - bytes.iter().rev().take_while(|&&c| c == b'=').count();
        let padding = bytes.len() - body_len;
        let chars = bytes.get(..body_len).unwrap_or(&[]);
        if let Some(at) = chars.iter().position(|&c| !in_alphabet(c)) {
            return Err(if chars.get(at) == Some(&b'=') {
                Base64Problem::Padding
            } else {
                Base64Problem::Alphabet { at }
            });
        }
        if padding > 2 || (padding > 0 && bytes.len() % 4 != 0) {
            return Err(Base64Problem::Padding);
        }
        if chars.len() % 4 == 1 {
            return Err(Base64Problem::Length);
        }
        let url_safe = chars.iter().any(|&c| c == b'-' || c == b'_');
        Ok(Self { chars, url_safe })
    }

    /// Decoded length in bytes.
    pub fn len(&self) -> usize {
        self.chars.len() / 4 * 3 + (self.chars.len() % 4).saturating_sub(1)
    }

    /// Whether the payload decodes to no bytes.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Decoded bytes `at..at + n` (fewer at the end of the payload): the
    /// groups of 4 characters holding them, decoded by the `base64` crate.
    pub fn read(&self, at: usize, n: usize) -> Vec<u8> {
        let end = at.saturating_add(n).min(self.len());
        if at >= end {
            return Vec::new();
        }
        let first_group = at / 3;
        let groups = self
            .chars
            .get(first_group * 4..((end - 1) / 3 + 1) * 4)
            .or_else(|| self.chars.get(first_group * 4..))
            .unwrap_or(&[]);
        let decoded = if self.url_safe {
            let standard: Vec<u8> = groups
                .iter()
                .map(|&c| match c {
                    b'-' => b'+',
                    b'_' => b'/',
                    _ => c,
                })
                .collect();
            STANDARD.decode(standard)
        } else {
            STANDARD.decode(groups)
        };
        // `new` checked the alphabet, the padding and the length: decoding cannot fail.
        let mut out = decoded.unwrap_or_default();
        out.drain(..(at - first_group * 3).min(out.len()));
        out.truncate(end - at);
        out
    }
}

/// Random-access bytes a header reader reads from.
pub trait ByteSource {
    /// Bytes `at..at + n`, fewer (or none) past the end.
    fn bytes(&self, at: usize, n: usize) -> Cow<'_, [u8]>;
}

impl ByteSource for [u8] {
    fn bytes(&self, at: usize, n: usize) -> Cow<'_, [u8]> {
        let end = at.saturating_add(n).min(self.len());
        Cow::Borrowed(self.get(at..end).unwrap_or(&[]))
    }
}

impl ByteSource for Base64Bytes<'_> {
    fn bytes(&self, at: usize, n: usize) -> Cow<'_, [u8]> {
        Cow::Owned(self.read(at, n))
    }
}

/// Checks the base64 payload of an inline image part whose data field is at
/// `path` (built only on error): `INVALID_REQUEST` naming the field when the
/// payload is not valid base64.
pub fn check_inline(data: &str, path: impl FnOnce() -> String) -> crate::error::Result<()> {
    match Base64Bytes::new(data) {
        Ok(_) => Ok(()),
        Err(problem) => Err(crate::error::Error::new(
            crate::error::ErrorCode::InvalidRequest,
            path(),
            problem.describe(),
        )),
    }
}

/// Decodes a whole base64 payload; `None` when it is not valid base64.
pub fn decode_base64(data: &str) -> Option<Vec<u8>> {
    let view = Base64Bytes::new(data).ok()?;
    Some(view.read(0, view.len()))
}

/// An image format whose header [`dimensions`] reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ImageFormat {
    /// PNG (size from `IHDR`).
    Png,
    /// JPEG (size from the first `SOFn` frame header).
    Jpeg,
    /// GIF (logical screen size).
    Gif,
    /// WebP (`VP8 `, `VP8L` or `VP8X` chunk).
    Webp,
}

/// Width and height of the image in `src`, with its format; `None` when the
/// format is unknown, the header is truncated or states a zero size.
///
/// Hand-written sniffers (PNG, GIF, WebP, JPEG below), measured against the
/// `imagesize` crate (0.15, only its png/jpeg/gif/webp features): it costs
/// +870 bytes of gzip wasm (+2,178 raw), reads a byte slice or a `BufRead +
/// Seek` (not the few bytes a [`ByteSource`] decodes), and fails this
/// module's tests: a lossy WebP's width keeps the 2 scale bits (17,024 for
/// 640) and a JPEG whose frame header lies behind 300 KB of segments needs
/// the payload decoded that far (`None` from a 64 KiB window); it skips no
/// fill byte or restart marker, does not stop at the scan, and has no
/// zero-size rule.
pub fn read_header(src: &(impl ByteSource + ?Sized)) -> Option<(ImageFormat, u32, u32)> {
    let magic = src.bytes(0, 12);
    let (format, size) = if magic.starts_with(b"\x89PNG\r\n\x1a\n") {
        (ImageFormat::Png, png(src))
    } else if magic.starts_with(&[0xff, 0xd8]) {
        (ImageFormat::Jpeg, jpeg(src))
    } else if magic.starts_with(b"GIF87a") || magic.starts_with(b"GIF89a") {
        (ImageFormat::Gif, gif(src))
    } else if magic.starts_with(b"RIFF") && magic.get(8..12) == Some(b"WEBP") {
        (ImageFormat::Webp, webp(src))
    } else {
        return None;
    };
    let (w, h) = size?;
    (w > 0 && h > 0).then_some((format, w, h))
}

/// Width and height of the image in `src` (see [`read_header`]).
pub fn dimensions(src: &(impl ByteSource + ?Sized)) -> Option<(u32, u32)> {
    read_header(src).map(|(_, w, h)| (w, h))
}

fn be16(b: &[u8], at: usize) -> Option<u32> {
    let s = b.get(at..at + 2)?;
    Some(u32::from(u16::from_be_bytes([*s.first()?, *s.get(1)?])))
}

fn le16(b: &[u8], at: usize) -> Option<u32> {
    let s = b.get(at..at + 2)?;
    Some(u32::from(u16::from_le_bytes([*s.first()?, *s.get(1)?])))
}

fn le24(b: &[u8], at: usize) -> Option<u32> {
    let s = b.get(at..at + 3)?;
    Some(u32::from_le_bytes([*s.first()?, *s.get(1)?, *s.get(2)?, 0]))
}

fn u32_at(b: &[u8], at: usize, big_endian: bool) -> Option<u32> {
    let s: [u8; 4] = b.get(at..at + 4)?.try_into().ok()?;
    Some(if big_endian {
        u32::from_be_bytes(s)
    } else {
        u32::from_le_bytes(s)
    })
}

fn png(src: &(impl ByteSource + ?Sized)) -> Option<(u32, u32)> {
    let h = src.bytes(8, 16);
    if h.get(4..8) != Some(b"IHDR") {
        return None;
    }
    Some((u32_at(&h, 8, true)?, u32_at(&h, 12, true)?))
}

fn gif(src: &(impl ByteSource + ?Sized)) -> Option<(u32, u32)> {
    let h = src.bytes(6, 4);
    Some((le16(&h, 0)?, le16(&h, 2)?))
}

fn webp(src: &(impl ByteSource + ?Sized)) -> Option<(u32, u32)> {
    let h = src.bytes(12, 18);
    match h.get(..4)? {
        b"VP8 " => {
            // Frame tag (3 bytes), start code 9d 01 2a, then 14-bit sizes.
            if h.get(11..14) != Some(&[0x9d, 0x01, 0x2a]) {
                return None;
            }
            Some((le16(&h, 14)? & 0x3fff, le16(&h, 16)? & 0x3fff))
        }
        b"VP8L" => {
            if h.get(8) != Some(&0x2f) {
                return None;
            }
            let bits = u32_at(&h, 9, false)?;
            Some(((bits & 0x3fff) + 1, ((bits >> 14) & 0x3fff) + 1))
        }
        b"VP8X" => Some((le24(&h, 12)? + 1, le24(&h, 15)? + 1)),
        _ => None,
    }
}

/// Most JPEG segments walked before the size counts as unknown.
const MAX_JPEG_SEGMENTS: usize = 65_536;

fn jpeg(src: &(impl ByteSource + ?Sized)) -> Option<(u32, u32)> {
    let mut pos = 2usize;
    for _ in 0..MAX_JPEG_SEGMENTS {
        let head = src.bytes(pos, 9);
        if head.first() != Some(&0xff) {
            return None;
        }
        let marker = *head.get(1)?;
        match marker {
            // Fill byte: the marker starts one byte later.
            0xff => pos += 1,
            // Standalone markers (TEM, RSTn) have no length.
            0x01 | 0xd0..=0xd7 => pos += 2,
            // End of image or start of scan before any frame header.
            0xd9 | 0xda => return None,
            // SOFn (not DHT c4, JPG c8, DAC cc): length, precision, height, width.
            0xc0..=0xcf if !matches!(marker, 0xc4 | 0xc8 | 0xcc) => {
                return Some((be16(&head, 7)?, be16(&head, 5)?));
            }
            _ => {
                let len = be16(&head, 2)?;
                if len < 2 {
                    return None;
                }
                pos = pos.checked_add(2 + len as usize)?;
            }
        }
    }
    None
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::indexing_slicing)]
pub(crate) mod tests {
    use super::*;
    use base64::Engine;

    const B64: base64::engine::GeneralPurpose = base64::engine::general_purpose::STANDARD;

    /// A PNG signature and `IHDR` chunk stating `w`×`h` (CRC not checked).
    pub(crate) fn png_header(w: u32, h: u32) -> Vec<u8> {
        let mut b = b"\x89PNG\r\n\x1a\n\0\0\0\x0dIHDR".to_vec();
        b.extend(w.to_be_bytes());
        b.extend(h.to_be_bytes());
        b.extend([8, 0, 0, 0, 0, 0, 0, 0, 0]);
        b
    }

    fn jpeg_with_exif(w: u16, h: u16, app_bytes: usize) -> Vec<u8> {
        let mut b = vec![0xff, 0xd8];
        // APP0 JFIF
        b.extend([0xff, 0xe0, 0, 16]);
        b.extend(b"JFIF\0\x01\x01\0\0\x01\0\x01\0\0");
        // A large APP1 segment split into 60 KB chunks.
        let mut left = app_bytes;
        while left > 0 {
            let n = left.min(60_000);
            b.extend([0xff, 0xe1]);
            b.extend(((n + 2) as u16).to_be_bytes());
            b.extend(std::iter::repeat(0x55).take(n));
            left -= n;
        }
        // Fill byte, then DQT (skipped), then SOF2 (progressive).
        b.extend([0xff, 0xff, 0xdb, 0, 4, 0, 0]);
        b.extend([0xff, 0xc2, 0, 11, 8]);
        b.extend(h.to_be_bytes());
        b.extend(w.to_be_bytes());
        b.extend([1, 1, 0x11, 0]);
        b.extend([0xff, 0xda, 0, 2, 0xff, 0xd9]);
        b
    }

    #[test]
    fn reads_png_gif_webp_and_jpeg_sizes() {
        assert_eq!(
            read_header(&png_header(8000, 7000)[..]),
            Some((ImageFormat::Png, 8000, 7000))
        );
        let gif = b"GIF89a\x40\x01\xf0\x00\xf7\0\0".to_vec();
        assert_eq!(read_header(&gif[..]), Some((ImageFormat::Gif, 320, 240)));
        // Lossy VP8: frame tag, start code, 14-bit sizes (top bits are scale).
        let mut vp8 = b"RIFF\0\0\0\0WEBPVP8 \0\0\0\0".to_vec();
        vp8.extend([0x30, 0x01, 0x00, 0x9d, 0x01, 0x2a]);
        vp8.extend((640u16 | 0x4000).to_le_bytes());
        vp8.extend(480u16.to_le_bytes());
        assert_eq!(read_header(&vp8[..]), Some((ImageFormat::Webp, 640, 480)));
        // Lossless VP8L: signature 0x2f, then (w-1) | (h-1) << 14.
        let mut vp8l = b"RIFF\0\0\0\0WEBPVP8L\0\0\0\0\x2f".to_vec();
        vp8l.extend((99u32 | (49u32 << 14)).to_le_bytes());
        assert_eq!(read_header(&vp8l[..]), Some((ImageFormat::Webp, 100, 50)));
        // Extended VP8X: flags, reserved, 24-bit (w-1) and (h-1).
        let mut vp8x = b"RIFF\0\0\0\0WEBPVP8X\x0a\0\0\0\x10\0\0\0".to_vec();
        vp8x.extend([0x3f, 0x1f, 0x00, 0x57, 0x1b, 0x00]);
        assert_eq!(
            read_header(&vp8x[..]),
            Some((ImageFormat::Webp, 8000, 7000))
        );
        let jpeg = jpeg_with_exif(1920, 1080, 10);
        assert_eq!(
            read_header(&jpeg[..]),
            Some((ImageFormat::Jpeg, 1920, 1080))
        );
    }

    #[test]
    fn reads_a_real_png_from_the_png_encoder() {
        let mut bytes = Vec::new();
        {
            let mut enc = png::Encoder::new(&mut bytes, 3, 2);
            enc.set_color(png::ColorType::Grayscale);
            let mut w = enc.write_header().unwrap();
            w.write_image_data(&[0; 6]).unwrap();
        }
        assert_eq!(dimensions(&bytes[..]), Some((3, 2)));
        let b64 = B64.encode(&bytes);
        assert_eq!(dimensions(&Base64Bytes::new(&b64).unwrap()), Some((3, 2)));
    }

    #[test]
    fn jpeg_size_is_found_behind_large_segments_through_base64() {
        let jpeg = jpeg_with_exif(9000, 6000, 300_000);
        let b64 = B64.encode(&jpeg);
        let view = Base64Bytes::new(&b64).unwrap();
        assert_eq!(view.len(), jpeg.len());
        assert_eq!(dimensions(&view), Some((9000, 6000)));
    }

    #[test]
    fn unknown_truncated_and_zero_sized_headers_are_none() {
        assert_eq!(dimensions(&b"hello world, not an image"[..]), None);
        assert_eq!(dimensions(&png_header(10, 10)[..20]), None);
        assert_eq!(dimensions(&png_header(0, 10)[..]), None);
        assert_eq!(dimensions(&[0xff, 0xd8, 0xff, 0xda, 0, 2][..]), None);
        assert_eq!(dimensions(&[0xff, 0xd8, 0xff, 0xe0, 0, 1][..]), None);
        assert_eq!(dimensions(&b"GIF89a\x01"[..]), None);
        assert_eq!(
            dimensions(&b"RIFF\0\0\0\0WEBPVP8 \0\0\0\0\0\0\0\0\0\0"[..]),
            None
        );
        assert_eq!(dimensions(&[][..]), None);
    }

    #[test]
    fn base64_views_decode_like_the_base64_crate() {
        let data: Vec<u8> = (0..=255u8).chain(0..100).collect();
        for len in 0..data.len() {
            let b64 = B64.encode(&data[..len]);
            if len == 0 {
                assert_eq!(Base64Bytes::new(&b64).unwrap_err(), Base64Problem::Empty);
                continue;
            }
            let view = Base64Bytes::new(&b64).unwrap();
            assert_eq!(view.len(), len);
            assert_eq!(view.read(0, len), &data[..len]);
            for at in [0, 1, 2, 3, 5, len / 2, len.saturating_sub(1), len, len + 7] {
                for n in [0, 1, 2, 4, 9] {
                    let end = (at + n).min(len);
                    let want: &[u8] = if at < end { &data[at..end] } else { &[] };
                    assert_eq!(view.read(at, n), want, "len {len} at {at} n {n}");
                }
            }
            let unpadded = b64.trim_end_matches('=');
            assert_eq!(decode_base64(unpadded).unwrap(), &data[..len]);
        }
        let url_safe = base64::engine::general_purpose::URL_SAFE.encode([0xfb, 0xff, 0xfe]);
        assert_eq!(decode_base64(&url_safe).unwrap(), [0xfb, 0xff, 0xfe]);
        // Both alphabets in one payload, and bits after the last byte, are read as before.
        assert_eq!(decode_base64("+/-_").unwrap(), [0xfb, 0xff, 0xbf]);
        assert_eq!(Base64Bytes::new("-_+/").unwrap().read(1, 2), [0xff, 0xbf]);
        assert_eq!(decode_base64("AB").unwrap(), [0x00]);
        assert_eq!(decode_base64("AAB=").unwrap(), [0x00, 0x00]);
    }

    #[test]
    fn invalid_base64_is_a_typed_problem() {
        use Base64Problem::*;
        assert_eq!(Base64Bytes::new("").unwrap_err(), Empty);
        assert_eq!(
            Base64Bytes::new("iVBO Rw0K").unwrap_err(),
            Alphabet { at: 4 }
        );
        assert_eq!(
            Base64Bytes::new("iVBOR\nw0K").unwrap_err(),
            Alphabet { at: 5 }
        );
        assert_eq!(Base64Bytes::new("ab*d").unwrap_err(), Alphabet { at: 2 });
        assert_eq!(Base64Bytes::new("é").unwrap_err(), Alphabet { at: 0 });
        assert_eq!(Base64Bytes::new("ab=d").unwrap_err(), Padding);
        assert_eq!(Base64Bytes::new("a===").unwrap_err(), Padding);
        assert_eq!(Base64Bytes::new("abc==").unwrap_err(), Padding);
        assert_eq!(Base64Bytes::new("abcde").unwrap_err(), Length);
        assert_eq!(Base64Bytes::new("=").unwrap_err(), Padding);
        assert!(Base64Bytes::new("AA").is_ok());
        assert!(Base64Bytes::new("AA==").is_ok());
        assert!(Base64Bytes::new("AAA=").is_ok());
    }
}
