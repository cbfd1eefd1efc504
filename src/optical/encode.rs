//! Encode: a packed [`Bitmap`] becomes a grayscale PNG, then base64.
//!
//! A small purpose-built PNG writer: one IDAT holding a zlib stream of one
//! fixed-Huffman deflate block whose only back-references are "same bytes as
//! the row above" and "repeat the previous byte". A snapshot is mostly paper
//! and text rows that repeat the row above, so these two matches find nearly
//! all redundancy with one pass and no hash table (general encoders spend
//! their time searching for matches a text image does not have). Every
//! choice is fixed, so the bytes are deterministic. Tests decode the output
//! with an independent decoder (the `png` crate).

use base64::Engine;

use super::raster::Bitmap;
use crate::error::{Error, ErrorCode, Result};

pub use super::raster::BIT_DEPTHS;

/// Longest deflate match.
const MAX_MATCH: usize = 258;
/// Farthest deflate back-reference.
const MAX_DISTANCE: usize = 32_768;

/// Encodes `bitmap` as a grayscale PNG at its bit depth.
pub fn png(bitmap: &Bitmap) -> Result<Vec<u8>> {
    let fail = |what: &str| Error::new(ErrorCode::RenderFailed, "optical", what.to_string());
    if !BIT_DEPTHS.contains(&bitmap.bits) {
        return Err(fail("bit depth must be 1, 2, 4 or 8"));
    }
    if bitmap.width == 0 || bitmap.height == 0 || bitmap.width > i32::MAX as u32 {
        return Err(fail("image must be at least 1x1 pixel"));
    }
    let stride = Bitmap::row_bytes(bitmap.width, bitmap.bits);
    if stride != bitmap.stride || bitmap.data.len() != stride * bitmap.height as usize {
        return Err(fail("bitmap size does not match its dimensions"));
    }
    let idat = zlib(&bitmap.data, stride);
    let mut out = Vec::with_capacity(idat.len() + 64);
    out.extend_from_slice(b"\x89PNG\r\n\x1a\n");
    let mut ihdr = Vec::with_capacity(13);
    ihdr.extend_from_slice(&bitmap.width.to_be_bytes());
    ihdr.extend_from_slice(&bitmap.height.to_be_bytes());
    // Bit depth, color type 0 (grayscale), deflate, adaptive filters, no interlace.
    ihdr.extend_from_slice(&[bitmap.bits, 0, 0, 0, 0]);
    chunk(&mut out, b"IHDR", &ihdr);
    chunk(&mut out, b"IDAT", &idat);
    chunk(&mut out, b"IEND", &[]);
    Ok(out)
}

/// Standard base64 of `bytes`.
pub fn base64(bytes: &[u8]) -> String {
    base64::engine::general_purpose::STANDARD.encode(bytes)
}

/// Appends a PNG chunk: length, type, data, CRC of type and data.
fn chunk(out: &mut Vec<u8>, kind: &[u8; 4], data: &[u8]) {
    out.extend_from_slice(&(data.len() as u32).to_be_bytes());
    let start = out.len();
    out.extend_from_slice(kind);
    out.extend_from_slice(data);
    let crc = crc32(out.get(start..).unwrap_or(&[]));
    out.extend_from_slice(&crc.to_be_bytes());
}

/// CRC-32 (ISO-HDLC, as PNG uses).
fn crc32(bytes: &[u8]) -> u32 {
    crc32fast::hash(bytes)
}

/// Adler-32 of the scanlines as the decoder sees them (a 0 filter byte
/// before each row).
fn adler32(rows: &[u8], stride: usize) -> u32 {
    const MOD: u32 = 65_521;
    let (mut a, mut b) = (1u32, 0u32);
    for row in rows.chunks(stride.max(1)) {
        // Filter byte: adds 0 to `a`, `a` to `b`.
        b = (b + a) % MOD;
        // 5552 is the most bytes before the sums can overflow u32.
        for block in row.chunks(5552) {
            // Eight bytes at a time: b gains 8·a plus the bytes weighted 8..1.
            let mut words = block.chunks_exact(8);
            for w in &mut words {
                let (sum, weighted) = sums8(u64::from_le_bytes(w.try_into().unwrap_or([0; 8])));
                b += 8 * a + weighted;
                a += sum;
            }
            for &x in words.remainder() {
                a += u32::from(x);
                b += a;
            }
            a %= MOD;
            b %= MOD;
        }
    }
    (b << 16) | a
}

/// Sum of the eight bytes of `v` (first byte lowest) and their sum weighted
/// 8, 7, …, 1, in a few multiplications: even and odd bytes go to 16-bit
/// lanes, and a product's top lane gathers a dot product of the lanes (no
/// lane exceeds 255 · 20, so none carries into the next).
fn sums8(v: u64) -> (u32, u32) {
    const LANES: u64 = 0x00ff_00ff_00ff_00ff;
    let even = v & LANES;
    let odd = (v >> 8) & LANES;
    let sum = (even + odd).wrapping_mul(0x0001_0001_0001_0001) >> 48;
    // Lane i holds byte 2i (weight 8 - 2i) or 2i + 1 (weight 7 - 2i).
    let weighted = (even.wrapping_mul(0x0008_0006_0004_0002) >> 48)
        + (odd.wrapping_mul(0x0007_0005_0003_0001) >> 48);
    (sum as u32, weighted as u32)
}

/// Writes deflate bits least significant first.
struct BitSink {
    out: Vec<u8>,
    acc: u64,
    len: u32,
}

impl BitSink {
    /// Appends the low `n` (at most 32) bits of `bits`.
    fn push(&mut self, bits: u32, n: u32) {
        self.acc |= u64::from(bits) << self.len;
        self.len += n;
        if self.len >= 32 {
            self.out.extend_from_slice(&(self.acc as u32).to_le_bytes());
            self.acc >>= 32;
            self.len -= 32;
        }
    }

    /// Appends a match: its length code, then its distance code (together
    /// at most 13 + 18 bits).
    fn push_match(&mut self, length: (u32, u32), distance: (u32, u32)) {
        self.push(length.0 | (distance.0 << length.1), length.1 + distance.1);
    }

    fn finish(mut self) -> Vec<u8> {
        while self.len > 0 {
            self.out.push(self.acc as u8);
            self.acc >>= 8;
            self.len = self.len.saturating_sub(8);
        }
        self.out
    }
}

/// Fixed Huffman code of literal/length symbol `sym`, as (bits reversed for
/// an LSB-first stream, length).
fn fixed_code(sym: u32) -> (u32, u32) {
    let (code, len) = match sym {
        0..=143 => (0x30 + sym, 8),
        144..=255 => (0x190 + sym - 144, 9),
        256..=279 => (sym - 256, 7),
        _ => (0xc0 + sym - 280, 8),
    };
    (reverse(code, len), len)
}

/// Fixed code (5 bits) and extra bits of a distance.
fn distance_code(distance: usize) -> (u32, u32, u32) {
    // Codes 0..=3 are distances 1..=4; then each pair of codes doubles the range.
    let d = distance as u32 - 1;
    let (code, extra_bits) = if d < 4 {
        (d, 0)
    } else {
        let bits = 31 - d.leading_zeros() - 1;
        (2 * bits + 2 + ((d >> bits) & 1), bits)
    };
    let base = if d < 4 {
        d
    } else {
        (2 | ((d >> extra_bits) & 1)) << extra_bits
    };
    (
        reverse(code, 5) | ((d - base) << 5),
        5 + extra_bits,
        extra_bits,
    )
}

/// Length symbol, extra bits and their count of a match length (3..=258).
fn length_code(len: usize) -> (u32, u32, u32) {
    let l = len as u32 - 3;
    if len == MAX_MATCH {
        return (285, 0, 0);
    }
    if l < 8 {
        return (257 + l, 0, 0);
    }
    let bits = 31 - l.leading_zeros() - 2;
    let sym = 257 + 4 * (bits + 1) + ((l >> bits) & 3);
    (sym, l & ((1 << bits) - 1), bits)
}

fn reverse(code: u32, len: u32) -> u32 {
    code.reverse_bits() >> (32 - len)
}

/// Pre-built codes of everything the encoder emits.
struct Codes {
    literal: [(u32, u32); 256],
    /// Length code (symbol code + extra bits combined) for 0..=258.
    length: Vec<(u32, u32)>,
    /// Distance 1 and the row distance, combined with their extra bits.
    run: (u32, u32),
    up: (u32, u32),
}

impl Codes {
    /// Code of literal byte `byte`.
    fn literal_code(&self, byte: u8) -> (u32, u32) {
        self.literal
            .get(usize::from(byte))
            .copied()
            .unwrap_or((0, 0))
    }

    /// Code of match length `len` (3..=258).
    fn length_code(&self, len: usize) -> (u32, u32) {
        self.length.get(len).copied().unwrap_or((0, 0))
    }

    fn new(row_distance: usize) -> Self {
        let mut literal = [(0u32, 0u32); 256];
        for (sym, slot) in (0u32..).zip(literal.iter_mut()) {
            *slot = fixed_code(sym);
        }
        let length = (0..=MAX_MATCH)
            .map(|len| {
                if len < 3 {
                    return (0, 0);
                }
                let (sym, extra, n) = length_code(len);
                let (code, bits) = fixed_code(sym);
                (code | (extra << bits), bits + n)
            })
            .collect();
        let dist = |d: usize| {
            let (code, bits, _) = distance_code(d);
            (code, bits)
        };
        Self {
            literal,
            length,
            run: dist(1),
            up: dist(row_distance.clamp(1, MAX_DISTANCE)),
        }
    }
}

/// Length of the common prefix of `a` and `b`, at most `max`, eight bytes at
/// a time.
fn common(a: &[u8], b: &[u8], max: usize) -> usize {
    let max = max.min(a.len()).min(b.len());
    let (a, b) = (a.get(..max).unwrap_or(&[]), b.get(..max).unwrap_or(&[]));
    let mut n = 0;
    for (x, y) in a.chunks_exact(8).zip(b.chunks_exact(8)) {
        let diff = u64::from_le_bytes(x.try_into().unwrap_or([0; 8]))
            ^ u64::from_le_bytes(y.try_into().unwrap_or([0; 8]));
        if diff != 0 {
            return n + diff.trailing_zeros() as usize / 8;
        }
        n += 8;
    }
    n + a
        .get(n..)
        .unwrap_or(&[])
        .iter()
        .zip(b.get(n..).unwrap_or(&[]))
        .take_while(|(x, y)| x == y)
        .count()
}

/// Little-endian 64-bit word at `at` (zero past the end).
#[inline]
fn word(bytes: &[u8], at: usize) -> u64 {
    bytes
        .get(at..)
        .and_then(|s| s.first_chunk::<8>())
        .map_or(0, |w| u64::from_le_bytes(*w))
}

/// Bytes `k` (0..=5) of `a ^ b` that start three equal bytes of `a` and `b`:
/// the top bit of byte `k` is set when bytes `k..k+3` of `a` and `b` agree.
#[inline]
fn three_equal(a: u64, b: u64) -> u64 {
    const LOW7: u64 = 0x7f7f_7f7f_7f7f_7f7f;
    let v = a ^ b;
    // Exact zero-byte test (no borrow between bytes): top bit set iff 0.
    let zero = !(((v & LOW7) + LOW7) | v | LOW7);
    zero & (zero >> 8) & (zero >> 16) & 0x0000_8080_8080_8080
}

/// zlib stream (no compression dictionary, fixed Huffman) of `rows`, each
/// row prefixed with filter byte 0 as PNG scanlines.
fn zlib(rows: &[u8], stride: usize) -> Vec<u8> {
    let line = stride + 1;
    let codes = Codes::new(line);
    // The scanlines as the decoder sees them: filter byte, then the row;
    // then 8 bytes of padding so every position has a word to compare
    // (matches stop at `n`, so the padding is never emitted).
    let mut lines = Vec::with_capacity(rows.len() + rows.len() / stride.max(1) + 9);
    for row in rows.chunks(stride.max(1)) {
        lines.push(0);
        lines.extend_from_slice(row);
    }
    let n = lines.len();
    lines.extend_from_slice(&[0; 8]);
    let data = lines.get(..n).unwrap_or(&[]);
    let mut sink = BitSink {
        out: Vec::with_capacity(n / 4 + 16),
        acc: 0,
        len: 0,
    };
    // zlib header: deflate, 32 KB window, no dictionary, fastest.
    sink.out.extend_from_slice(&[0x78, 0x01]);
    // One final block with fixed codes.
    sink.push(0b011, 3);
    let up_allowed = line <= MAX_DISTANCE;
    let mut i = 0;
    let mut next_row = 0;
    while i < n {
        if i >= next_row {
            let row_start = i == next_row;
            next_row = (i / line + 1) * line;
            // Rows equal to the row above (paper, most of a snapshot): one
            // long match, cut into pieces of at most 258 bytes and at least 3.
            if up_allowed && row_start && i >= line {
                let same = data
                    .get(i..)
                    .unwrap_or(&[])
                    .chunks_exact(line)
                    .zip(data.get(i - line..).unwrap_or(&[]).chunks_exact(line))
                    .take_while(|(a, b)| a == b)
                    .count();
                let same = if same * line >= 3 { same } else { 0 };
                let mut left = same * line;
                i += left;
                while left > 0 {
                    let mut len = left.min(MAX_MATCH);
                    if (1..3).contains(&(left - len)) {
                        len -= 3;
                    }
                    sink.push_match(codes.length_code(len), codes.up);
                    left -= len;
                }
                if same > 0 {
                    continue;
                }
            }
        }
        let here = word(&lines, i);
        let above = if up_allowed && i >= line {
            word(&lines, i - line)
        } else {
            !here
        };
        // The bytes one back; at 0, the bytes from 1 on, byte 0 made unequal.
        let before = match i.checked_sub(1) {
            Some(p) => word(&lines, p),
            None => (here << 8) | (!here & 0xff),
        };
        // Bytes before the first place a match can start (same 3 bytes as
        // the row above, or as the previous byte) are literals: emit up to
        // six at once, never past the end or into the next row's start.
        let (up3, run3) = (three_equal(here, above), three_equal(here, before));
        let literals = ((up3 | run3).trailing_zeros() as usize / 8)
            .min(6)
            .min(n - i)
            .min(next_row - i);
        if literals > 0 {
            for byte in here.to_le_bytes().iter().take(literals) {
                let (code, bits) = codes.literal_code(*byte);
                sink.push(code, bits);
            }
            i += literals;
            continue;
        }
        // A match may start here (bit 7: byte 0 starts three equal bytes;
        // `above` and `before` are real bytes whenever that bit is set).
        let max = (n - i).min(MAX_MATCH);
        let rest = data.get(i..).unwrap_or(&[]);
        let up = if up3 & 0x80 != 0 {
            common(rest, data.get(i - line..).unwrap_or(&[]), max)
        } else {
            0
        };
        let run = if up < max && run3 & 0x80 != 0 {
            common(rest, data.get(i - 1..).unwrap_or(&[]), max)
        } else {
            0
        };
        let (len, dist) = if up >= run {
            (up, codes.up)
        } else {
            (run, codes.run)
        };
        if len >= 3 {
            sink.push_match(codes.length_code(len), dist);
            i += len;
        } else {
            let (code, bits) = codes.literal_code(here as u8);
            sink.push(code, bits);
            i += 1;
        }
    }
    let (eob, bits) = fixed_code(256);
    sink.push(eob, bits);
    let mut out = sink.finish();
    out.extend_from_slice(&adler32(rows, stride).to_be_bytes());
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn decode(png_bytes: &[u8]) -> (png::OutputInfo, Vec<u8>) {
        let decoder = png::Decoder::new(std::io::Cursor::new(png_bytes));
        let mut reader = decoder.read_info().unwrap();
        let mut buf = vec![0; reader.output_buffer_size().unwrap()];
        let info = reader.next_frame(&mut buf).unwrap();
        buf.truncate(info.buffer_size());
        (info, buf)
    }

    fn bitmap(width: u32, height: u32, bits: u8, data: Vec<u8>) -> Bitmap {
        Bitmap::new(width, height, bits, data)
    }

    #[test]
    fn round_trips_through_an_independent_decoder() {
        // Paper rows, repeated rows, runs and noise, at every depth.
        let mut seed = 7u32;
        for bits in BIT_DEPTHS {
            for (w, h) in [(1, 1), (7, 3), (61, 40), (300, 9)] {
                let stride = (w as usize * usize::from(bits)).div_ceil(8);
                let mut data = vec![0xffu8; stride * h as usize];
                for (i, b) in data.iter_mut().enumerate() {
                    seed = seed.wrapping_mul(1_103_515_245).wrapping_add(12_345);
                    match (i / stride) % 4 {
                        0 => {}
                        1 => *b = (seed >> 16) as u8,
                        2 => *b = (i % 5) as u8,
                        _ => *b = if (seed >> 20) % 7 == 0 { 0 } else { 0xff },
                    }
                }
                let bm = bitmap(w, h, bits, data.clone());
                let encoded = png(&bm).unwrap();
                assert_eq!(&encoded[..8], b"\x89PNG\r\n\x1a\n");
                let (info, pixels) = decode(&encoded);
                assert_eq!((info.width, info.height), (w, h));
                assert_eq!(info.bit_depth as u8, bits);
                assert_eq!(info.color_type, png::ColorType::Grayscale);
                assert_eq!(pixels, data, "{w}x{h} at {bits} bits");
                assert_eq!(encoded, png(&bm).unwrap(), "deterministic");
            }
        }
    }

    #[test]
    fn long_matches_and_far_rows_stay_valid() {
        // Rows wider than a match and a row distance at the window's edge.
        for w in [2100u32, 32_767 * 8, 40_000 * 8] {
            let stride = (w as usize).div_ceil(8);
            let mut data = vec![0xffu8; stride * 3];
            if let Some(b) = data.get_mut(stride + 5) {
                *b = 0x0f;
            }
            let (_, pixels) = decode(&png(&bitmap(w, 3, 1, data.clone())).unwrap());
            assert_eq!(pixels, data, "width {w}");
        }
    }

    #[test]
    fn adler32_matches_its_definition() {
        let mut seed = 11u32;
        for (len, stride) in [
            (0, 1),
            (1, 1),
            (7, 7),
            (8, 8),
            (9, 3),
            (64, 16),
            (20_000, 6_000),
        ] {
            let rows: Vec<u8> = (0..len)
                .map(|i| {
                    seed = seed.wrapping_mul(1_103_515_245).wrapping_add(12_345);
                    if i % 3 == 0 {
                        0xff
                    } else {
                        (seed >> 16) as u8
                    }
                })
                .collect();
            let (mut a, mut b) = (1u64, 0u64);
            for row in rows.chunks(stride) {
                for &x in std::iter::once(&0).chain(row) {
                    a = (a + u64::from(x)) % 65_521;
                    b = (b + a) % 65_521;
                }
            }
            assert_eq!(
                adler32(&rows, stride),
                ((b << 16) | a) as u32,
                "{len} bytes"
            );
        }
    }

    #[test]
    fn paper_compresses_to_almost_nothing() {
        let data = vec![0xffu8; 100 * 1000];
        let encoded = png(&bitmap(400, 1000, 2, data)).unwrap();
        assert!(encoded.len() < 3000, "{} bytes", encoded.len());
    }

    #[test]
    fn rejects_inconsistent_bitmaps() {
        assert!(png(&bitmap(0, 1, 2, vec![])).is_err());
        assert!(png(&bitmap(4, 2, 3, vec![0; 4])).is_err());
        let mut bm = bitmap(8, 2, 2, vec![0; 4]);
        bm.data.pop();
        assert!(png(&bm).is_err());
    }

    #[test]
    fn codes_match_rfc_1951() {
        // Length 3 → 257, 10 → 264, 11 → 265 + 0, 12 → 265 + 1, 258 → 285.
        assert_eq!(length_code(3), (257, 0, 0));
        assert_eq!(length_code(10), (264, 0, 0));
        assert_eq!(length_code(12), (265, 1, 1));
        assert_eq!(length_code(19), (269, 0, 2));
        assert_eq!(length_code(257), (284, 30, 5));
        assert_eq!(length_code(258), (285, 0, 0));
        // Distance 1 → code 0; 5 → code 4 + 0; 7 → code 5 + 0; 24577 → code 29 + 0.
        assert_eq!(distance_code(1).2, 0);
        assert_eq!(distance_code(5), (reverse(4, 5), 6, 1));
        assert_eq!(distance_code(7), (reverse(5, 5), 6, 1));
        assert_eq!(distance_code(24_577), (reverse(29, 5), 18, 13));
        assert_eq!(crc32(b"IEND"), 0xae42_6082);
        // Adler-32 against the definition, over rows longer than a block.
        let rows: Vec<u8> = (0..3 * 7001u32).map(|i| (i * 7919 % 251) as u8).collect();
        let (mut a, mut b) = (1u64, 0u64);
        for row in rows.chunks(7001) {
            for &x in std::iter::once(&0u8).chain(row) {
                a = (a + u64::from(x)) % 65_521;
                b = (b + a) % 65_521;
            }
        }
        assert_eq!(adler32(&rows, 7001), ((b << 16) | a) as u32);
        assert_eq!(adler32(b"iki", 3), {
            // Adler-32 of "\0iki".
            let (mut a, mut b) = (1u32, 0u32);
            for x in b"\0iki" {
                a += u32::from(*x);
                b += a;
            }
            (b << 16) | a
        });
    }
}
