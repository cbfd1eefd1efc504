//! Encode: a packed [`Bitmap`] becomes a grayscale PNG, then base64.
//!
//! A small purpose-built PNG writer: one IDAT holding a zlib stream of one
//! deflate block. One greedy pass finds the matches a text image has: rows
//! equal to the row above, "same bytes as the row above", "repeat the
//! previous byte", and repeated glyphs (the last earlier place with the same
//! four bytes, from a small hash table without chains). The block then
//! takes Huffman codes built from that stream's symbol counts (length-limited,
//! RFC 1951 dynamic block) or the fixed codes, whichever is smaller. Every
//! choice is fixed, so the bytes are deterministic. Tests decode the output
//! with an independent decoder (the `png` crate); `examples/png_sizes.rs`
//! compares the sizes with miniz at its best level on real snapshots.

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

/// CRC-32 (ISO-HDLC, as PNG uses), eight bytes at a time ("slicing by
/// 8"). The tables (8 KiB) are computed on first use, not stored in the
/// module: an IDAT of a snapshot is tens of kilobytes, checksummed once.
fn crc32(bytes: &[u8]) -> u32 {
    static TABLES: std::sync::OnceLock<Box<[[u32; 256]; 8]>> = std::sync::OnceLock::new();
    let t = TABLES.get_or_init(crc_tables);
    let at = |k: usize, i: u32| {
        t.get(k)
            .and_then(|row| row.get((i & 0xff) as usize))
            .copied()
            .unwrap_or(0)
    };
    let mut crc = !0u32;
    let mut words = bytes.chunks_exact(8);
    for w in &mut words {
        let v = u64::from_le_bytes(w.try_into().unwrap_or([0; 8]));
        let (lo, hi) = (v as u32 ^ crc, (v >> 32) as u32);
        crc = at(7, lo)
            ^ at(6, lo >> 8)
            ^ at(5, lo >> 16)
            ^ at(4, lo >> 24)
            ^ at(3, hi)
            ^ at(2, hi >> 8)
            ^ at(1, hi >> 16)
            ^ at(0, hi >> 24);
    }
    for &b in words.remainder() {
        crc = at(0, crc ^ u32::from(b)) ^ (crc >> 8);
    }
    !crc
}

/// The slicing-by-8 tables of the reflected polynomial 0xEDB88320: row 0
/// the CRC of each byte, row `k` that of the byte followed by `k` zeros.
fn crc_tables() -> Box<[[u32; 256]; 8]> {
    let mut t = Box::new([[0u32; 256]; 8]);
    let mut prev = [0u32; 256];
    for (n, slot) in prev.iter_mut().enumerate() {
        let mut c = n as u32;
        for _ in 0..8 {
            c = if c & 1 == 1 {
                0xEDB8_8320 ^ (c >> 1)
            } else {
                c >> 1
            };
        }
        *slot = c;
    }
    let first = prev;
    for row in t.iter_mut() {
        *row = prev;
        for (p, r) in prev.iter_mut().zip(row.iter()) {
            *p = (r >> 8) ^ first.get((r & 0xff) as usize).copied().unwrap_or(0);
        }
    }
    t
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

    fn finish(mut self) -> Vec<u8> {
        while self.len > 0 {
            self.out.push(self.acc as u8);
            self.acc >>= 8;
            self.len = self.len.saturating_sub(8);
        }
        self.out
    }
}

/// Literal/length symbols (0..=285).
const LITLEN: usize = 286;
/// Distance symbols (0..=29).
const DISTANCES: usize = 30;
/// Longest code of a literal/length or distance symbol.
const MAX_BITS: u32 = 15;
/// Longest code of a code-length symbol.
const MAX_CL_BITS: u32 = 7;
/// Order in which a dynamic header lists the code-length code.
const CL_ORDER: [usize; 19] = [
    16, 17, 18, 0, 8, 7, 9, 6, 10, 5, 11, 4, 12, 3, 13, 2, 14, 1, 15,
];
/// Hash table slots (positions of earlier 4-byte sequences).
const HASH_BITS: u32 = 13;

/// Fixed Huffman code length of literal/length symbol `sym`.
fn fixed_len(sym: usize) -> u8 {
    match sym {
        0..=143 => 8,
        144..=255 => 9,
        256..=279 => 7,
        _ => 8,
    }
}

/// Symbol, extra bits and their count of a distance (1..=32768).
fn distance_code(distance: usize) -> (usize, u32, u32) {
    // Symbols 0..=3 are distances 1..=4; then each pair doubles the range.
    let d = distance.saturating_sub(1) as u32;
    if d < 4 {
        return (d as usize, 0, 0);
    }
    let bits = 31 - d.leading_zeros() - 1;
    let sym = 2 * bits + 2 + ((d >> bits) & 1);
    (sym as usize, d & ((1 << bits) - 1), bits)
}

/// Symbol, extra bits and their count of a match length (3..=258).
fn length_code(len: usize) -> (usize, u32, u32) {
    let l = len.saturating_sub(3) as u32;
    if len == MAX_MATCH {
        return (285, 0, 0);
    }
    if l < 8 {
        return (257 + l as usize, 0, 0);
    }
    let bits = 31 - l.leading_zeros() - 2;
    let sym = 257 + 4 * (bits + 1) + ((l >> bits) & 3);
    (sym as usize, l & ((1 << bits) - 1), bits)
}

fn reverse(code: u32, len: u32) -> u32 {
    code.reverse_bits().checked_shr(32 - len).unwrap_or(0)
}

/// Code lengths of a prefix code for `freq` of at most `limit` bits:
/// Huffman's, with over-long codes shortened as miniz does. Symbols of
/// frequency 0 get no code, but at least two symbols get one (so every code
/// is complete). Ties break by symbol, so the lengths are deterministic.
fn code_lengths(freq: &[u32], limit: u32) -> Vec<u8> {
    let mut lengths = vec![0u8; freq.len()];
    // (weight, symbol) of the coded symbols, lightest first.
    let mut leaves: Vec<(u64, usize)> = (0..)
        .zip(freq)
        .filter(|(_, &f)| f > 0)
        .map(|(s, &f)| (u64::from(f), s))
        .collect();
    for s in 0..freq.len() {
        if leaves.len() >= 2 {
            break;
        }
        if !leaves.iter().any(|l| l.1 == s) {
            leaves.push((1, s));
        }
    }
    crate::sort::ascending(&mut leaves);
    let n = leaves.len();
    // Two-queue Huffman: nodes 0..n are leaves, n.. are merged pairs (in
    // order of weight, as they are made); `parent` links each to its pair.
    let mut weight: Vec<u64> = leaves.iter().map(|l| l.0).collect();
    let mut parent = vec![0usize; 2 * n];
    let (mut leaf, mut pair) = (0, n);
    let lightest = |weight: &Vec<u64>, leaf: &mut usize, pair: &mut usize| {
        let next_leaf = weight.get(*leaf).copied().filter(|_| *leaf < n);
        let next_pair = weight.get(*pair).copied();
        match (next_leaf, next_pair) {
            (Some(a), Some(b)) if b < a => {
                *pair += 1;
                *pair - 1
            }
            (Some(_), _) => {
                *leaf += 1;
                *leaf - 1
            }
            _ => {
                *pair += 1;
                *pair - 1
            }
        }
    };
    for _ in 1..n {
        let a = lightest(&weight, &mut leaf, &mut pair);
        let b = lightest(&weight, &mut leaf, &mut pair);
        let w = weight.get(a).copied().unwrap_or(0) + weight.get(b).copied().unwrap_or(0);
        let id = weight.len();
        for child in [a, b] {
            if let Some(p) = parent.get_mut(child) {
                *p = id;
            }
        }
        weight.push(w);
    }
    // Depths, root (the last pair) first.
    let mut depth = vec![0u32; weight.len()];
    for node in (0..weight.len().saturating_sub(1)).rev() {
        let d = parent
            .get(node)
            .and_then(|&p| depth.get(p))
            .map_or(0, |d| d + 1);
        if let Some(slot) = depth.get_mut(node) {
            *slot = d;
        }
    }
    // Codes per length; codes longer than `limit` shortened to it, then the
    // Kraft sum restored by lengthening the longest shorter codes.
    let mut count = [0u32; 64];
    for &d in depth.get(..n).unwrap_or(&[]) {
        if let Some(c) = count.get_mut(d.min(limit) as usize) {
            *c += 1;
        }
    }
    let kraft = |count: &[u32; 64]| {
        (1..=limit).fold(0u64, |k, len| {
            k + (u64::from(count.get(len as usize).copied().unwrap_or(0)) << (limit - len))
        })
    };
    let mut total = kraft(&count);
    while total > 1 << limit {
        if let Some(c) = count.get_mut(limit as usize) {
            *c = c.saturating_sub(1);
        }
        if let Some(len) = (1..limit)
            .rev()
            .find(|&l| count.get(l as usize) != Some(&0))
        {
            if let Some(c) = count.get_mut(len as usize) {
                *c -= 1;
            }
            if let Some(c) = count.get_mut(len as usize + 1) {
                *c += 2;
            }
        }
        total -= 1;
    }
    // The heaviest symbols take the shortest codes.
    let mut by_weight = leaves.iter().rev();
    for len in 1..=limit {
        for _ in 0..count.get(len as usize).copied().unwrap_or(0) {
            if let Some(slot) = by_weight.next().and_then(|l| lengths.get_mut(l.1)) {
                *slot = len as u8;
            }
        }
    }
    lengths
}

/// Canonical codes of `lengths`, as (bits reversed for an LSB-first stream,
/// length).
fn canonical(lengths: &[u8]) -> Vec<(u32, u32)> {
    let mut count = [0u32; 16];
    for &l in lengths {
        if let Some(c) = count.get_mut(usize::from(l)) {
            *c += 1;
        }
    }
    count[0] = 0;
    let mut next = [0u32; 16];
    let mut code = 0;
    for len in 1..16 {
        code = (code + count.get(len - 1).copied().unwrap_or(0)) << 1;
        if let Some(n) = next.get_mut(len) {
            *n = code;
        }
    }
    lengths
        .iter()
        .map(|&l| {
            let l = usize::from(l);
            match next.get_mut(l) {
                Some(n) if l > 0 => {
                    *n += 1;
                    (reverse(*n - 1, l as u32), l as u32)
                }
                _ => (0, 0),
            }
        })
        .collect()
}

/// The code-length sequence `lengths` run-length coded as RFC 1951 3.2.7
/// says: (symbol 0..=18, extra bits, their count).
fn run_lengths(lengths: &[u8]) -> Vec<(usize, u32, u32)> {
    let mut out = Vec::new();
    let mut i = 0;
    while let Some(&l) = lengths.get(i) {
        let run = lengths
            .get(i..)
            .unwrap_or(&[])
            .iter()
            .take_while(|&&x| x == l)
            .count();
        let mut left = run;
        if l == 0 {
            while left >= 11 {
                let k = left.min(138);
                out.push((18, (k - 11) as u32, 7));
                left -= k;
            }
            if left >= 3 {
                out.push((17, (left - 3) as u32, 3));
                left = 0;
            }
        } else {
            out.push((usize::from(l), 0, 0));
            left -= 1;
            while left >= 3 {
                let k = left.min(6);
                out.push((16, (k - 3) as u32, 2));
                left -= k;
            }
        }
        out.extend(std::iter::repeat((usize::from(l), 0, 0)).take(left));
        i += run;
    }
    out
}

/// Longest run of literals in one token.
const MAX_RUN: u32 = 0xffff;

/// The match stream of the scanlines: each token a run of literal bytes
/// (its length, at most [`MAX_RUN`]) or a match (`length << 16 | distance`,
/// lengths from 3); with the symbol frequencies.
struct Tokens {
    tokens: Vec<u32>,
    litlen: [u32; LITLEN],
    dist: [u32; DISTANCES],
}

impl Tokens {
    /// The next bytes of the stream, as literals.
    fn literals(&mut self, bytes: &[u8]) {
        for &b in bytes {
            if let Some(f) = self.litlen.get_mut(usize::from(b)) {
                *f += 1;
            }
        }
        let mut left = bytes.len() as u32;
        if let Some(last) = self.tokens.last_mut().filter(|t| **t < MAX_RUN) {
            let k = left.min(MAX_RUN - *last);
            *last += k;
            left -= k;
        }
        while left > 0 {
            let k = left.min(MAX_RUN);
            self.tokens.push(k);
            left -= k;
        }
    }

    fn matched(&mut self, len: usize, distance: usize) {
        self.tokens.push(((len as u32) << 16) | distance as u32);
        if let Some(f) = self.litlen.get_mut(length_code(len).0) {
            *f += 1;
        }
        if let Some(f) = self.dist.get_mut(distance_code(distance).0) {
            *f += 1;
        }
    }
}

/// The codes of one deflate block and its header bits.
struct Block {
    litlen: Vec<(u32, u32)>,
    dist: Vec<(u32, u32)>,
    /// Block type: 1 fixed, 2 dynamic.
    kind: u32,
    /// For a dynamic block: HLIT, HDIST, HCLEN, the code-length code in
    /// `CL_ORDER` and the run-length coded lengths.
    header: Vec<(u32, u32)>,
}

impl Block {
    /// The fixed codes.
    fn fixed() -> Self {
        let lengths: Vec<u8> = (0..288).map(fixed_len).collect();
        Self {
            litlen: canonical(&lengths),
            dist: canonical(&[5; DISTANCES]),
            kind: 1,
            header: Vec::new(),
        }
    }

    /// Codes built from the frequencies of `t`, with their header.
    fn dynamic(t: &Tokens) -> Self {
        let litlen = code_lengths(&t.litlen, MAX_BITS);
        let dist = code_lengths(&t.dist, MAX_BITS);
        let hlit = litlen
            .iter()
            .rposition(|&l| l > 0)
            .map_or(0, |i| i + 1)
            .max(257);
        let hdist = dist
            .iter()
            .rposition(|&l| l > 0)
            .map_or(0, |i| i + 1)
            .max(1);
        let mut all = litlen.get(..hlit).unwrap_or(&[]).to_vec();
        all.extend_from_slice(dist.get(..hdist).unwrap_or(&[]));
        let runs = run_lengths(&all);
        let mut freq = [0u32; 19];
        for &(sym, _, _) in &runs {
            if let Some(f) = freq.get_mut(sym) {
                *f += 1;
            }
        }
        let cl = code_lengths(&freq, MAX_CL_BITS);
        let cl_codes = canonical(&cl);
        let order: Vec<u8> = CL_ORDER
            .iter()
            .map(|&s| cl.get(s).copied().unwrap_or(0))
            .collect();
        let hclen = order
            .iter()
            .rposition(|&l| l > 0)
            .map_or(0, |i| i + 1)
            .max(4);
        let mut header = vec![
            (hlit as u32 - 257, 5),
            (hdist as u32 - 1, 5),
            (hclen as u32 - 4, 4),
        ];
        header.extend(order.iter().take(hclen).map(|&l| (u32::from(l), 3)));
        for (sym, extra, bits) in runs {
            let (code, len) = cl_codes.get(sym).copied().unwrap_or((0, 0));
            header.push((code | (extra << len), len + bits));
        }
        Self {
            litlen: canonical(&litlen),
            dist: canonical(&dist),
            kind: 2,
            header,
        }
    }

    /// The smaller of the dynamic and the fixed block for `t` (the fixed one
    /// on a tie), with its [`cost`](Self::cost).
    fn best(t: &Tokens) -> (Self, u64) {
        let (dynamic, fixed) = (Self::dynamic(t), Self::fixed());
        let (d, f) = (dynamic.cost(t), fixed.cost(t));
        if d < f {
            (dynamic, d)
        } else {
            (fixed, f)
        }
    }

    /// Bits of the block for `t`, but for the extra bits of lengths and
    /// distances (the same in every block).
    fn cost(&self, t: &Tokens) -> u64 {
        let bits = |codes: &[(u32, u32)], freq: &[u32]| {
            codes
                .iter()
                .zip(freq)
                .map(|(c, &f)| u64::from(c.1) * u64::from(f))
                .sum::<u64>()
        };
        let header: u64 = self.header.iter().map(|h| u64::from(h.1)).sum();
        3 + header + bits(&self.litlen, &t.litlen) + bits(&self.dist, &t.dist)
    }

    /// Writes the block (final) holding `t`, end-of-block included.
    fn write(&self, t: &Tokens, data: &[u8], sink: &mut BitSink) {
        sink.push(1 | (self.kind << 1), 3);
        for &(code, len) in &self.header {
            sink.push(code, len);
        }
        let lit = |sym: usize| self.litlen.get(sym).copied().unwrap_or((0, 0));
        let mut literal = [(0, 0); 256];
        for (sym, slot) in literal.iter_mut().enumerate() {
            *slot = lit(sym);
        }
        // Length codes with their extra bits, by length.
        let mut lengths = [(0, 0); MAX_MATCH + 1];
        for (len, slot) in lengths.iter_mut().enumerate().skip(3) {
            let (sym, extra, n) = length_code(len);
            let (code, bits) = lit(sym);
            *slot = (code | (extra << bits), bits + n);
        }
        let mut dist = [(0, 0); DISTANCES];
        for (slot, code) in dist.iter_mut().zip(&self.dist) {
            *slot = *code;
        }
        let literal = |b: u8| literal.get(usize::from(b)).copied().unwrap_or((0, 0));
        let mut at = 0;
        for &token in &t.tokens {
            if token <= MAX_RUN {
                let run = data.get(at..at + token as usize).unwrap_or(&[]);
                at += token as usize;
                // Two literals (at most 30 bits) at a time.
                let mut pairs = run.chunks_exact(2);
                for pair in &mut pairs {
                    if let [x, y] = *pair {
                        let ((a, m), (b, n)) = (literal(x), literal(y));
                        sink.push(a | (b << m), m + n);
                    }
                }
                for &x in pairs.remainder() {
                    let (a, m) = literal(x);
                    sink.push(a, m);
                }
                continue;
            }
            let (len, distance) = ((token >> 16) as usize, (token & 0xffff) as usize);
            at += len;
            let (code, bits) = lengths.get(len).copied().unwrap_or((0, 0));
            sink.push(code, bits);
            let (sym, extra, n) = distance_code(distance);
            let (code, bits) = dist.get(sym).copied().unwrap_or((0, 0));
            sink.push(code | (extra << bits), bits + n);
        }
        let (eob, bits) = lit(256);
        sink.push(eob, bits);
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

/// Hash-table slot of the four bytes at the bottom of `w`.
#[inline]
fn slot(w: u64) -> usize {
    ((w as u32).wrapping_mul(0x9e37_79b1) >> (32 - HASH_BITS)) as usize
}

/// The match stream of the scanlines `data` (rows of `line` bytes; `lines`
/// is `data` and 8 bytes of padding). Greedy, one pass: rows equal to the
/// row above are one match; elsewhere the longest of "same bytes as the row
/// above", "repeat the previous byte" and the last earlier place with the
/// same four bytes (a hash table, no chains: repeated glyphs).
fn tokens(lines: &[u8], n: usize, line: usize) -> Tokens {
    let data = lines.get(..n).unwrap_or(&[]);
    let mut t = Tokens {
        tokens: Vec::with_capacity(n / 4 + 16),
        litlen: [0; LITLEN],
        dist: [0; DISTANCES],
    };
    // The end of the block.
    if let Some(eob) = t.litlen.get_mut(256) {
        *eob = 1;
    }
    let mut table = vec![0u32; 1 << HASH_BITS];
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
                    t.matched(len, line);
                    left -= len;
                }
                if same > 0 {
                    continue;
                }
            }
        }
        let here = word(lines, i);
        let above = if up_allowed && i >= line {
            word(lines, i - line)
        } else {
            !here
        };
        // The bytes one back; at 0, the bytes from 1 on, byte 0 made unequal.
        let before = match i.checked_sub(1) {
            Some(p) => word(lines, p),
            None => (here << 8) | (!here & 0xff),
        };
        // Where the row above or the previous byte can start a match: the
        // bytes before are literals unless an earlier place has the same
        // four bytes (at most six at once, never into the next row's start).
        let (up3, run3) = (three_equal(here, above), three_equal(here, before));
        let plain = ((up3 | run3).trailing_zeros() as usize / 8)
            .min(6)
            .min(n - i)
            .min(next_row - i);
        let mut start = i;
        let mut found = None;
        while start < i + plain {
            // Bytes `start..start + 4` (from `here` while it holds them).
            let w = if start - i <= 4 {
                here >> (8 * (start - i))
            } else {
                word(lines, start)
            };
            // Paper starts no useful match (runs and the row above cover it).
            if w as u8 == 0xff {
                start += 1;
                continue;
            }
            if let Some(at) = table.get_mut(slot(w)) {
                let candidate = *at as usize;
                *at = start as u32;
                if candidate < start
                    && start - candidate <= MAX_DISTANCE
                    && (word(lines, candidate) ^ w) as u32 == 0
                {
                    found = Some(candidate);
                    break;
                }
            }
            start += 1;
        }
        t.literals(data.get(i..start).unwrap_or(&[]));
        i = start;
        let max = (n - i).min(MAX_MATCH);
        let rest = data.get(i..).unwrap_or(&[]);
        let (mut len, mut distance) = (0, 0);
        if let Some(c) = found {
            (len, distance) = (common(rest, data.get(c..).unwrap_or(&[]), max), i - c);
        } else if plain > 0 {
            continue;
        } else {
            // A match of the row above or the previous byte starts here (bit 7 of
            // the masks); the table learns this place too.
            let w = here;
            if let Some(at) = table.get_mut(slot(w)) {
                let c = *at as usize;
                *at = i as u32;
                if c < i && i - c <= MAX_DISTANCE && (word(lines, c) ^ w) as u32 == 0 {
                    (len, distance) = (common(rest, data.get(c..).unwrap_or(&[]), max), i - c);
                }
            }
            if up3 & 0x80 != 0 && len < max {
                let up = common(rest, data.get(i - line..).unwrap_or(&[]), max);
                if up >= len {
                    (len, distance) = (up, line);
                }
            }
            if run3 & 0x80 != 0 && len < max {
                let run = common(rest, data.get(i - 1..).unwrap_or(&[]), max);
                if run > len {
                    (len, distance) = (run, 1);
                }
            }
        }
        if len >= 3 {
            t.matched(len, distance);
            i += len;
        } else {
            t.literals(data.get(i..i + 1).unwrap_or(&[]));
            i += 1;
        }
    }
    t
}

/// zlib stream (no compression dictionary) of `rows`, each row prefixed with
/// filter byte 0 as PNG scanlines: one final block, dynamic or fixed
/// Huffman, whichever is smaller.
fn zlib(rows: &[u8], stride: usize) -> Vec<u8> {
    let line = stride + 1;
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
    let t = tokens(&lines, n, line);
    let (block, bits) = Block::best(&t);
    let mut sink = BitSink {
        // The block, the extra bits of its matches (at most 18 each), zlib's 6 bytes.
        out: Vec::with_capacity((bits as usize + 18 * t.tokens.len()) / 8 + 16),
        acc: 0,
        len: 0,
    };
    // zlib header: deflate, 32 KB window, no dictionary, fastest.
    sink.out.extend_from_slice(&[0x78, 0x01]);
    block.write(&t, lines.get(..n).unwrap_or(&[]), &mut sink);
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

    /// Kraft sum of `lengths` in units of 2^-15 (2^15 for a complete code).
    fn kraft(lengths: &[u8]) -> u64 {
        lengths
            .iter()
            .filter(|&&l| l > 0)
            .map(|&l| 1u64 << (15 - l))
            .sum()
    }

    #[test]
    fn code_lengths_are_complete_prefix_codes_within_the_limit() {
        let mut seed = 3u32;
        let mut cases: Vec<(Vec<u32>, u32)> = vec![
            (vec![0; 30], 15),
            (vec![0, 7, 0], 15),
            (vec![1, 1], 15),
            (vec![5, 1, 1, 2, 0, 9], 15),
        ];
        // Fibonacci counts make Huffman codes as deep as there are symbols.
        let mut fib = vec![1u32, 1];
        while fib.len() < 40 {
            fib.push(fib[fib.len() - 1] + fib[fib.len() - 2]);
        }
        cases.push((fib.clone(), 15));
        cases.push((fib[..19].to_vec(), 7));
        for _ in 0..200 {
            let n = 2 + (seed % 286) as usize;
            let freq = (0..n)
                .map(|_| {
                    seed = seed.wrapping_mul(1_103_515_245).wrapping_add(12_345);
                    let r = seed >> 16;
                    if r % 3 == 0 {
                        0
                    } else {
                        r % (1 << (r % 20))
                    }
                })
                .collect();
            cases.push((freq, if n <= 19 { 7 } else { 15 }));
        }
        for (freq, limit) in cases {
            let lengths = code_lengths(&freq, limit);
            assert_eq!(lengths.len(), freq.len());
            assert!(lengths.iter().all(|&l| u32::from(l) <= limit), "{freq:?}");
            assert_eq!(
                kraft(&lengths),
                1 << 15,
                "complete: {freq:?} -> {lengths:?}"
            );
            let coded = lengths.iter().filter(|&&l| l > 0).count();
            let used = freq.iter().filter(|&&f| f > 0).count();
            assert_eq!(coded, used.max(2), "{freq:?} -> {lengths:?}");
            for (f, l) in freq.iter().zip(&lengths) {
                assert!(*f == 0 || *l > 0, "a used symbol has a code");
            }
            // More frequent symbols never get longer codes.
            for (a, la) in freq.iter().zip(&lengths) {
                for (b, lb) in freq.iter().zip(&lengths) {
                    assert!(!(a > b && *lb > 0 && la > lb), "{freq:?} -> {lengths:?}");
                }
            }
        }
        assert_eq!(code_lengths(&fib, 15).iter().max(), Some(&15));
    }

    #[test]
    fn run_length_coded_lengths_expand_to_the_lengths() {
        let lengths: Vec<u8> = [
            vec![0; 200],
            vec![8; 9],
            vec![0; 2],
            vec![3, 3, 3],
            vec![0; 11],
            vec![7],
        ]
        .concat();
        let mut out: Vec<u8> = Vec::new();
        for (sym, extra, bits) in run_lengths(&lengths) {
            assert!(extra < 1 << bits || bits == 0 && extra == 0);
            match sym {
                0..=15 => out.push(sym as u8),
                16 => {
                    let last = *out.last().unwrap();
                    out.extend(std::iter::repeat(last).take(3 + extra as usize));
                }
                17 => out.extend(std::iter::repeat(0).take(3 + extra as usize)),
                _ => out.extend(std::iter::repeat(0).take(11 + extra as usize)),
            }
        }
        assert_eq!(out, lengths);
    }

    /// zlib bytes of `rows` with `block` chosen by `pick` (fixed or dynamic).
    fn zlib_with(rows: &[u8], stride: usize, pick: fn(&Tokens) -> Block) -> Vec<u8> {
        let mut lines = Vec::new();
        for row in rows.chunks(stride) {
            lines.push(0);
            lines.extend_from_slice(row);
        }
        let n = lines.len();
        lines.extend_from_slice(&[0; 8]);
        let t = tokens(&lines, n, stride + 1);
        let mut sink = BitSink {
            out: vec![0x78, 0x01],
            acc: 0,
            len: 0,
        };
        pick(&t).write(&t, &lines[..n], &mut sink);
        let mut out = sink.finish();
        out.extend_from_slice(&adler32(rows, stride).to_be_bytes());
        out
    }

    /// A bitmap of code text drawn by the rasterizer.
    fn text_bitmap(bits: u8, lines: usize) -> Bitmap {
        let text: Vec<Vec<char>> = (0..lines)
            .map(|i| {
                format!(
                    "    def method_{i}(self, value: int = {}) -> dict:  # {}",
                    i * 7,
                    "x".repeat(i % 9)
                )
                .chars()
                .collect()
            })
            .collect();
        let rows: Vec<&[char]> = text.iter().map(|l| &l[..]).collect();
        let atlas = super::super::raster::atlas(10, 1).unwrap();
        let width = 8 + atlas.cell.width * 70;
        let height = 8 + atlas.cell.height * lines as u32;
        super::super::raster::draw(&rows, atlas, 10, width, height, 4, bits)
    }

    #[test]
    fn text_round_trips_and_takes_the_smaller_block() {
        for bits in BIT_DEPTHS {
            for lines in [1, 3, 40] {
                let bm = text_bitmap(bits, lines);
                let encoded = png(&bm).unwrap();
                let (info, pixels) = decode(&encoded);
                assert_eq!((info.width, info.height), (bm.width, bm.height));
                assert_eq!(pixels, bm.data, "{lines} lines at {bits} bits");
                assert_eq!(encoded, png(&bm).unwrap(), "deterministic");
                let z = zlib(&bm.data, bm.stride);
                let fixed = zlib_with(&bm.data, bm.stride, |_| Block::fixed());
                let dynamic = zlib_with(&bm.data, bm.stride, Block::dynamic);
                assert_eq!(
                    z.len(),
                    fixed.len().min(dynamic.len()),
                    "{lines} lines at {bits} bits"
                );
                // Both blocks decode to the same scanlines.
                for stream in [&fixed, &dynamic] {
                    let raw = miniz_oxide::inflate::decompress_to_vec_zlib(stream).unwrap();
                    assert_eq!(raw.len(), bm.data.len() + bm.height as usize);
                }
                if lines == 40 {
                    assert_eq!(z, dynamic, "text takes the dynamic block at {bits} bits");
                    assert!(
                        dynamic.len() * 10 < fixed.len() * 9,
                        "{} vs {}",
                        dynamic.len(),
                        fixed.len()
                    );
                }
            }
        }
        // A single pixel: the dynamic header costs more than it saves.
        let one = bitmap(1, 1, 1, vec![0x80]);
        assert_eq!(
            zlib(&one.data, 1),
            zlib_with(&one.data, 1, |_| Block::fixed())
        );
    }

    #[test]
    fn repeated_glyphs_are_found_far_back() {
        // The same 40 bytes of "ink" in two rows far apart: the second copies the first.
        let stride = 400;
        let mut data = vec![0xffu8; stride * 60];
        let ink: Vec<u8> = (0..40u8).map(|i| i.wrapping_mul(37) | 1).collect();
        data[3 * stride + 17..3 * stride + 57].copy_from_slice(&ink);
        data[50 * stride + 101..50 * stride + 141].copy_from_slice(&ink);
        let mut lines = Vec::new();
        for row in data.chunks(stride) {
            lines.push(0);
            lines.extend_from_slice(row);
        }
        let n = lines.len();
        lines.extend_from_slice(&[0; 8]);
        let t = tokens(&lines, n, stride + 1);
        let far = (50 * (stride + 1) + 102) - (3 * (stride + 1) + 18);
        assert!(
            t.tokens
                .iter()
                .any(|&t| t >> 16 >= 40 && (t & 0xffff) as usize == far),
            "the ink (and the paper after it) is one match {far} back"
        );
        let (_, pixels) = decode(&png(&bitmap(stride as u32 * 4, 60, 2, data.clone())).unwrap());
        assert_eq!(pixels, data);
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
        assert_eq!(distance_code(5), (4, 0, 1));
        assert_eq!(distance_code(6), (4, 1, 1));
        assert_eq!(distance_code(7), (5, 0, 1));
        assert_eq!(distance_code(24_577), (29, 0, 13));
        assert_eq!(distance_code(32_768), (29, 8191, 13));
        // Against the bitwise definition, at every length around the 8-byte steps.
        let bitwise = |bytes: &[u8]| {
            let mut crc = !0u32;
            for &b in bytes {
                crc ^= u32::from(b);
                for _ in 0..8 {
                    crc = if crc & 1 == 1 {
                        0xEDB8_8320 ^ (crc >> 1)
                    } else {
                        crc >> 1
                    };
                }
            }
            !crc
        };
        let data: Vec<u8> = (0..300u32)
            .map(|i| (i.wrapping_mul(2_654_435_761) >> 13) as u8)
            .collect();
        for n in 0..data.len() {
            assert_eq!(crc32(&data[..n]), bitwise(&data[..n]), "{n} bytes");
        }
        assert_eq!(crc32(b"IEND"), 0xae42_6082);
        assert_eq!(crc32(b"123456789"), 0xcbf4_3926);
        assert_eq!(crc32(b""), 0);
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
