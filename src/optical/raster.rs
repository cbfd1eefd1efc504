//! Raster: draws a character grid into an 8-bit grayscale canvas with the
//! bundled font (DejaVu Sans Mono subset, rasterized by fontdue).
//!
//! Every glyph is rasterized once per font size into a cell-sized tile (the
//! printable ASCII tiles of each size are cached for the life of the process;
//! other characters per drawing), so drawing is a copy of tiles into the
//! canvas. Glyphs sit on integer pixel origins: the same text always gives the
//! same pixels, natively and in WebAssembly (fontdue is built without its SIMD
//! and `std` float paths, so both use the same scalar code and `libm`).

use std::collections::BTreeMap;
use std::sync::OnceLock;

use fontdue::{Font, FontSettings};

use super::layout::MISSING;

/// The bundled font: DejaVu Sans Mono, subset by `src/optical/font/subset.sh`.
pub static FONT_BYTES: &[u8] = include_bytes!("font/DejaVuSansMono-subset.ttf");

/// Largest supported font size in pixels.
pub const MAX_FONT_PX: u32 = 64;

/// Size of one character cell, and where the baseline sits in it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CellMetrics {
    /// Cell width in pixels (the font's advance, rounded).
    pub width: u32,
    /// Cell height in pixels (tallest ASCII glyph box plus the line gap).
    pub height: u32,
    /// Rows from the top of the cell to the baseline.
    pub baseline: u32,
}

/// The bundled font, parsed once.
pub fn font() -> Option<&'static Font> {
    static FONT: OnceLock<Option<Font>> = OnceLock::new();
    FONT.get_or_init(|| Font::from_bytes(FONT_BYTES, FontSettings::default()).ok())
        .as_ref()
}

/// Whether the bundled font has a glyph for `ch` (spaces count as drawable).
pub fn covers(ch: char) -> bool {
    // The subset holds all of printable ASCII.
    (' '..='~').contains(&ch)
        || (ch != MISSING && font().is_some_and(|f| f.lookup_glyph_index(ch) != 0))
}

/// A cell-sized grayscale tile (255 = paper).
type Tile = Vec<u8>;

/// The tiles of one font size.
#[derive(Debug)]
pub struct Atlas {
    /// Cell size.
    pub cell: CellMetrics,
    /// Tiles of `' '..='~'`.
    ascii: Vec<Tile>,
    /// Placeholder for characters the font lacks.
    missing: Tile,
}

/// The atlas for `px` (4..=64) with `line_gap` blank rows under each line, built once.
pub fn atlas(px: u32, line_gap: u32) -> Option<&'static Atlas> {
    const SLOTS: usize = (MAX_FONT_PX as usize + 1) * 4;
    static ATLASES: [OnceLock<Option<Atlas>>; SLOTS] = [const { OnceLock::new() }; SLOTS];
    if !(4..=MAX_FONT_PX).contains(&px) || line_gap > 3 {
        return None;
    }
    ATLASES
        .get(px as usize * 4 + line_gap as usize)?
        .get_or_init(|| Atlas::build(px, line_gap))
        .as_ref()
}

/// Cell metrics for `px` with `line_gap`.
pub fn cell_metrics(px: u32, line_gap: u32) -> Option<CellMetrics> {
    atlas(px, line_gap).map(|a| a.cell)
}

impl Atlas {
    fn build(px: u32, line_gap: u32) -> Option<Atlas> {
        let font = font()?;
        let size = px as f32;
        let advance = font.metrics('0', size).advance_width;
        let width = (advance.round() as u32).max(1);
        // Tallest box over printable ASCII, so no glyph is cut.
        let (mut top, mut bottom) = (0i32, 0i32);
        for ch in ' '..='~' {
            let m = font.metrics(ch, size);
            if m.width > 0 && m.height > 0 {
                top = top.max(m.ymin + m.height as i32);
                bottom = bottom.min(m.ymin);
            }
        }
        let baseline = top.max(1) as u32;
        let height = baseline + bottom.unsigned_abs() + line_gap;
        let cell = CellMetrics {
            width,
            height,
            baseline,
        };
        let ascii = (' '..='~').map(|ch| tile(font, ch, size, cell)).collect();
        Some(Atlas {
            cell,
            ascii,
            missing: missing_tile(cell, px),
        })
    }

    fn tile<'a>(&'a self, ch: char, extra: &'a BTreeMap<char, Tile>) -> Option<&'a Tile> {
        if (' '..='~').contains(&ch) {
            return self.ascii.get(ch as usize - ' ' as usize);
        }
        extra.get(&ch).or(Some(&self.missing))
    }
}

/// Gain on glyph coverage, in 1/16 (24 = ×1.5), capped at full ink. Small
/// unhinted text has its stems spread over two pixel columns at half
/// coverage each; without gain they come out pale and lose strokes when
/// quantized. Integer arithmetic, so native and WebAssembly give the same pixels.
/// Chosen with the OCR sweep in `tests/optical_legibility.rs` (×1 → 0.92,
/// ×1.5 → 0.94, ×2 → 0.95 at 10 px read at 1×; ×1.5 reads best upscaled).
const INK_GAIN: u32 = 24;

/// Paper level (0 = black ink, 255 = white paper) of a coverage value.
fn gray(coverage: u8, gain: u32) -> u8 {
    let ink = (u32::from(coverage) * gain / 16).min(255);
    (255 - ink) as u8
}

fn tile(font: &Font, ch: char, size: f32, cell: CellMetrics) -> Tile {
    let (w, h) = (cell.width as i32, cell.height as i32);
    let mut out = vec![255u8; (w * h) as usize];
    if ch == ' ' {
        return out;
    }
    let gain = INK_GAIN;
    let (m, coverage) = font.rasterize(ch, size);
    let top = cell.baseline as i32 - (m.ymin + m.height as i32);
    for gy in 0..m.height as i32 {
        let y = top + gy;
        if !(0..h).contains(&y) {
            continue;
        }
        for gx in 0..m.width as i32 {
            let x = m.xmin + gx;
            if !(0..w).contains(&x) {
                continue;
            }
            let c = coverage
                .get((gy * m.width as i32 + gx) as usize)
                .copied()
                .unwrap_or(0);
            if c == 0 {
                continue;
            }
            if let Some(p) = out.get_mut((y * w + x) as usize) {
                *p = gray(c, gain);
            }
        }
    }
    out
}

/// A hollow box from the x-height to the baseline: visibly not a character.
fn missing_tile(cell: CellMetrics, px: u32) -> Tile {
    let (w, h) = (cell.width, cell.height);
    let mut out = vec![255u8; (w * h) as usize];
    let (x0, x1) = (0, w.saturating_sub(2));
    let y1 = cell.baseline.saturating_sub(1);
    let y0 = cell.baseline.saturating_sub((px * 7 / 10).max(2));
    for y in y0..=y1 {
        for x in x0..=x1 {
            if y == y0 || y == y1 || x == x0 || x == x1 {
                if let Some(p) = out.get_mut((y * w + x) as usize) {
                    *p = 0;
                }
            }
        }
    }
    out
}

/// A grayscale image packed as PNG scanlines: `bits` per pixel (1, 2, 4 or
/// 8), most significant bits first, each row padded to whole bytes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Bitmap {
    /// Width in pixels.
    pub width: u32,
    /// Height in pixels.
    pub height: u32,
    /// Bits per pixel.
    pub bits: u8,
    /// Bytes per row.
    pub stride: usize,
    /// Row-major packed pixels (all ones = white paper).
    pub data: Vec<u8>,
}

impl Bitmap {
    /// A bitmap over `data` (rows of `row_bytes(width, bits)` bytes).
    pub fn new(width: u32, height: u32, bits: u8, data: Vec<u8>) -> Self {
        Self {
            width,
            height,
            bits,
            stride: Self::row_bytes(width, bits),
            data,
        }
    }

    /// Bytes per row of `width` pixels at `bits` per pixel.
    pub fn row_bytes(width: u32, bits: u8) -> usize {
        (width as usize * usize::from(bits)).div_ceil(8)
    }

    /// Gray value of pixel (`x`, `y`) scaled to 0..=255 (255 = paper); 255
    /// outside the image.
    pub fn gray(&self, x: u32, y: u32) -> u8 {
        if x >= self.width || y >= self.height {
            return 255;
        }
        let bit = x as usize * usize::from(self.bits);
        let Some(byte) = self.data.get(y as usize * self.stride + bit / 8) else {
            return 255;
        };
        let levels = (1u16 << self.bits) - 1;
        let level = u16::from(*byte >> (8 - usize::from(self.bits) - bit % 8)) & levels;
        (level * 255 / levels) as u8
    }
}

/// Bit depths a PNG grayscale image may use.
pub const BIT_DEPTHS: [u8; 4] = [1, 2, 4, 8];

/// A tile quantized to `bits` as ink (0 = paper): each tile row is a run of
/// `width × bits` bits, kept as pieces of at most 32 bits so a scanline is
/// drawn by appending pieces to a bit accumulator.
struct InkTile {
    /// Pieces per tile row.
    pieces: usize,
    /// `(bits, count)` pieces, row after row, most significant pixel first.
    data: Vec<(u32, u32)>,
}

impl InkTile {
    fn pack(tile: &[u8], cell: CellMetrics, bits: u8) -> Self {
        let levels = (1u32 << bits) - 1;
        let width = cell.width as usize;
        let per_piece = (32 / usize::from(bits)).max(1);
        let pieces = width.div_ceil(per_piece);
        let mut data = Vec::with_capacity(pieces * cell.height as usize);
        for row in tile.chunks_exact(width.max(1)) {
            for piece in row.chunks(per_piece) {
                let value = piece.iter().fold(0u32, |v, &g| {
                    let level = (u32::from(g) * levels + 127) / 255;
                    (v << bits) | (levels - level)
                });
                data.push((value, piece.len() as u32 * u32::from(bits)));
            }
        }
        Self { pieces, data }
    }

    fn row(&self, y: usize) -> &[(u32, u32)] {
        self.data
            .get(y * self.pieces..(y + 1) * self.pieces)
            .unwrap_or(&[])
    }
}

/// Writes one scanline of bits, most significant first, into a byte row.
struct ScanlineWriter<'a> {
    row: &'a mut [u8],
    at: usize,
    acc: u64,
    len: u32,
}

impl<'a> ScanlineWriter<'a> {
    fn new(row: &'a mut [u8]) -> Self {
        Self {
            row,
            at: 0,
            acc: 0,
            len: 0,
        }
    }

    /// Appends the low `n` (at most 32) bits of `value`.
    fn push(&mut self, value: u32, n: u32) {
        self.acc = (self.acc << n) | u64::from(value);
        self.len += n;
        if self.len >= 32 {
            self.len -= 32;
            let word = (self.acc >> self.len) as u32;
            if let Some(dst) = self.row.get_mut(self.at..self.at + 4) {
                dst.copy_from_slice(&word.to_be_bytes());
            }
            self.at += 4;
        }
    }

    /// Appends `n` zero bits.
    fn skip(&mut self, mut n: u32) {
        while n > 0 {
            let k = n.min(32);
            self.push(0, k);
            n -= k;
        }
    }

    /// Writes the bits still held, left-aligned in their last byte.
    fn finish(self) {
        let bytes = self.len.div_ceil(8);
        let word = (self.acc << (64 - self.len.max(1)) >> 32) as u32;
        let word = if self.len == 0 { 0 } else { word };
        for (dst, b) in self
            .row
            .iter_mut()
            .skip(self.at)
            .zip(word.to_be_bytes())
            .take(bytes as usize)
        {
            *dst = b;
        }
    }
}

/// Draws `rows` (one slice of cells per row) at `px` into a `width`×`height`
/// bitmap at `bits` per pixel with `margin` blank pixels at the top left.
/// Cells beyond the image are clipped. Characters the font lacks are drawn
/// as a hollow box.
///
/// Tiles are quantized and packed once per drawing, then OR-ed into the
/// packed image as ink, which is finally turned into gray: no 8-bit canvas
/// and no per-pixel pass over the whole image.
#[allow(clippy::too_many_arguments)]
pub fn draw(
    rows: &[&[char]],
    atlas: &Atlas,
    px: u32,
    width: u32,
    height: u32,
    margin: u32,
    bits: u8,
) -> Bitmap {
    let bits = if BIT_DEPTHS.contains(&bits) { bits } else { 8 };
    let cell = atlas.cell;
    let mut extra: BTreeMap<char, Tile> = BTreeMap::new();
    if let Some(font) = font() {
        for ch in rows.iter().flat_map(|r| r.iter()) {
            if !(' '..='~').contains(ch) && !extra.contains_key(ch) && covers(*ch) {
                extra.insert(*ch, tile(font, *ch, px as f32, cell));
            }
        }
    }
    // Ink tiles of the characters in use: printable ASCII by index, others by key.
    let mut used = [false; 95];
    for ch in rows.iter().flat_map(|r| r.iter()) {
        if let Some(u) = used.get_mut((*ch as usize).wrapping_sub(' ' as usize)) {
            *u = true;
        }
    }
    let ascii: Vec<Option<InkTile>> = (' '..='~')
        .zip(used)
        .map(|(ch, used)| {
            (used && ch != ' ')
                .then(|| atlas.tile(ch, &extra))
                .flatten()
                .map(|t| InkTile::pack(t, cell, bits))
        })
        .collect();
    let mut other: BTreeMap<char, InkTile> = BTreeMap::new();
    for ch in rows.iter().flat_map(|r| r.iter()) {
        if !(' '..='~').contains(ch) && !other.contains_key(ch) {
            if let Some(t) = atlas.tile(*ch, &extra) {
                other.insert(*ch, InkTile::pack(t, cell, bits));
            }
        }
    }
    let ink = |ch: char| {
        if (' '..='~').contains(&ch) {
            ascii
                .get(ch as usize - ' ' as usize)
                .and_then(Option::as_ref)
        } else {
            other.get(&ch)
        }
    };
    let depth = usize::from(bits);
    let stride = Bitmap::row_bytes(width, bits);
    let mut data = vec![0u8; stride * height as usize];
    let (cw, ch) = (cell.width as usize, cell.height as usize);
    // Cells that fit the width: later ones are clipped.
    let fit = (width as usize).saturating_sub(margin as usize) / cw.max(1);
    let band = stride * ch;
    let top = stride * margin as usize;
    let bands = data
        .get_mut(top..)
        .unwrap_or(&mut [])
        .chunks_exact_mut(band.max(1));
    for (row, band) in rows.iter().zip(bands) {
        let tiles: Vec<Option<&InkTile>> = row.iter().take(fit).map(|c| ink(*c)).collect();
        // Trailing paper needs no drawing.
        let used = tiles.iter().rposition(Option::is_some).map_or(0, |i| i + 1);
        if used == 0 {
            continue;
        }
        for (ty, line) in band.chunks_exact_mut(stride.max(1)).enumerate() {
            let mut out = ScanlineWriter::new(line);
            out.skip(margin * u32::from(bits));
            for tile in tiles.iter().take(used) {
                match tile {
                    Some(t) if t.pieces == 1 => {
                        if let Some(&(v, n)) = t.data.get(ty) {
                            out.push(v, n);
                        }
                    }
                    Some(t) => t.row(ty).iter().for_each(|&(v, n)| out.push(v, n)),
                    None => out.skip((cw * depth) as u32),
                }
            }
            out.finish();
        }
    }
    // Ink to gray: flipping every bit turns ink i into level `levels - i`.
    for b in &mut data {
        *b = !*b;
    }
    Bitmap::new(width, height, bits, data)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn font_loads_and_cells_grow_with_size() {
        assert!(font().is_some());
        let a = cell_metrics(8, 0).unwrap();
        let b = cell_metrics(12, 0).unwrap();
        assert!(a.width < b.width && a.height < b.height);
        assert_eq!(
            cell_metrics(10, 1).unwrap().height,
            cell_metrics(10, 0).unwrap().height + 1
        );
        assert!(cell_metrics(3, 0).is_none() && cell_metrics(65, 0).is_none());
    }

    #[test]
    fn covers_ascii_latin1_and_box_drawing_but_not_cjk() {
        for ch in ['a', '~', 'é', 'ø', '─', '✓', '—'] {
            assert!(covers(ch), "{ch}");
        }
        for ch in ['日', '💩', MISSING] {
            assert!(!covers(ch), "{ch}");
        }
    }

    #[test]
    fn draws_ink_where_text_is_and_paper_elsewhere() {
        let a = atlas(10, 1).unwrap();
        let row: Vec<char> = "H日".chars().collect();
        let rows = [&row[..]];
        for bits in BIT_DEPTHS {
            let c = draw(&rows, a, 10, 40, 20, 2, bits);
            assert_eq!(c.stride, (40 * usize::from(bits)).div_ceil(8));
            assert_eq!(c.data.len(), c.stride * 20);
            let ink = |x0: u32, x1: u32| {
                (0..c.height)
                    .flat_map(|y| (x0..x1).map(move |x| (x, y)))
                    .filter(|&(x, y)| c.gray(x, y) < 128)
                    .count()
            };
            let w = a.cell.width;
            assert!(ink(2, 2 + w) > 5, "H is drawn at {bits} bits");
            assert!(
                ink(2 + w, 2 + 2 * w) > 5,
                "placeholder is drawn at {bits} bits"
            );
            assert_eq!(ink(2 + 2 * w, 40), 0, "the rest is paper at {bits} bits");
            assert_eq!(ink(0, 2), 0, "the margin is paper at {bits} bits");
        }
    }

    #[test]
    fn every_depth_draws_the_same_picture() {
        // Packing at a lower depth only quantizes: ink stays where it was.
        let a = atlas(11, 1).unwrap();
        let row: Vec<char> = "Wg|~é".chars().collect();
        let rows = [&row[..], &row[1..]];
        let full = draw(&rows, a, 11, 53, 30, 3, 8);
        for bits in [1u8, 2, 4] {
            let c = draw(&rows, a, 11, 53, 30, 3, bits);
            let levels = (1u32 << bits) - 1;
            for y in 0..30 {
                for x in 0..53 {
                    let g = u32::from(full.gray(x, y));
                    let expect = ((g * levels + 127) / 255 * 255 / levels) as u8;
                    assert_eq!(c.gray(x, y), expect, "({x},{y}) at {bits} bits");
                }
            }
        }
    }

    #[test]
    fn scanline_writer_packs_msb_first_across_words() {
        let mut row = [0u8; 7];
        let mut w = ScanlineWriter::new(&mut row);
        w.skip(3);
        w.push(0b1011, 4);
        w.push(0xffff_ffff, 32);
        w.push(0b1, 1);
        w.finish();
        assert_eq!(
            row,
            [0b0001_0111, 0xff, 0xff, 0xff, 0b1111_1111, 0b0000_0000, 0]
        );
        let mut short = [0u8; 1];
        let mut w = ScanlineWriter::new(&mut short);
        w.push(0b11, 2);
        w.finish();
        assert_eq!(short, [0b1100_0000]);
    }
}
