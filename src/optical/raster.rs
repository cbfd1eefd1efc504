//! Raster: draws a character grid with the bundled font (DejaVu Sans Mono
//! subset): fontdue rasterizes each glyph's coverage, tiny-skia composites it.
//!
//! Every glyph becomes once per font size a cell-sized tiny-skia [`Mask`]:
//! its coverage with [`INK_GAIN`] (the placeholder box is a filled path).
//! tiny-skia composites it once: black filled through the mask onto a white
//! cell-sized [`Pixmap`], whose gray is the glyph's [`Tile`] (the printable
//! ASCII tiles of each size are cached for the life of the process; other
//! characters per drawing). Drawing lays the tiles of the cells side by side
//! and quantizes them to the PNG bit depth as it packs each row; paper is
//! never composited. Cells do not overlap and a tile's pixels depend only on
//! its coverage, so this is the picture one fill through an image-sized mask
//! of all the glyphs would give (a test holds the two equal), at the cost of
//! the cells that hold ink instead of a raster pipeline over the whole image.
//! Glyphs sit on integer pixel origins and tiny-skia is built without SIMD:
//! the same text always gives the same pixels, natively and in WebAssembly
//! (fontdue likewise uses its scalar code and `libm`).

use std::collections::BTreeMap;
use std::sync::OnceLock;

use fontdue::{Font, FontSettings};
use tiny_skia::{Color, FillRule, IntSize, Mask, Paint, PathBuilder, Pixmap, Rect, Transform};

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

/// A glyph composited onto paper: the gray (255 = paper) of each pixel of its
/// cell, row by row; `None` for a cell with no ink.
type Tile = Option<Vec<u8>>;

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
        let ascii = (' '..='~')
            .map(|ch| glyph(font, ch, size, cell).and_then(|m| composite(&m)))
            .collect();
        Some(Atlas {
            cell,
            ascii,
            missing: missing_box(cell, px).and_then(|m| composite(&m)),
        })
    }

    fn tile<'a>(&'a self, ch: char, extra: &'a BTreeMap<char, Tile>) -> Option<&'a [u8]> {
        if (' '..='~').contains(&ch) {
            return self.ascii.get(ch as usize - ' ' as usize)?.as_deref();
        }
        extra.get(&ch).unwrap_or(&self.missing).as_deref()
    }
}

/// `ink` composited by tiny-skia: black filled through it onto a white pixmap
/// of its size; the gray of each pixel (the red channel: the pixmap is gray).
fn composite(ink: &Mask) -> Option<Vec<u8>> {
    let mut canvas = Pixmap::new(ink.width(), ink.height())?;
    canvas.fill(Color::WHITE);
    let mut black = Paint::default();
    black.set_color_rgba8(0, 0, 0, 255);
    let whole = Rect::from_xywh(0.0, 0.0, ink.width() as f32, ink.height() as f32)?;
    canvas.fill_rect(whole, &black, Transform::identity(), Some(ink));
    Some(canvas.pixels().iter().map(|p| p.red()).collect())
}

/// Gain on glyph coverage, in 1/16 (24 = ×1.5), capped at full ink. Small
/// unhinted text has its stems spread over two pixel columns at half
/// coverage each; without gain they come out pale and lose strokes when
/// quantized. Integer arithmetic, so native and WebAssembly give the same pixels.
/// Chosen with the OCR sweep in `tests/optical_legibility.rs` (×1 → 0.92,
/// ×1.5 → 0.94, ×2 → 0.95 at 10 px read at 1×; ×1.5 reads best upscaled).
const INK_GAIN: u32 = 24;

/// Ink (alpha) of a coverage value with [`INK_GAIN`].
fn ink(coverage: u8) -> u8 {
    (u32::from(coverage) * INK_GAIN / 16).min(255) as u8
}

/// The cell-sized mask of `ch`: its coverage with [`INK_GAIN`] (clipped to
/// the cell), or `None` for a glyph without ink.
fn glyph(font: &Font, ch: char, size: f32, cell: CellMetrics) -> Option<Mask> {
    let (m, coverage) = font.rasterize(ch, size);
    if m.width == 0 || m.height == 0 {
        return None;
    }
    let mut mask = Mask::new(cell.width, cell.height)?;
    let (w, h) = (cell.width as i32, cell.height as i32);
    let top = cell.baseline as i32 - (m.ymin + m.height as i32);
    let data = mask.data_mut();
    for (gy, line) in coverage.chunks_exact(m.width).enumerate() {
        let y = top + gy as i32;
        if !(0..h).contains(&y) {
            continue;
        }
        for (gx, &c) in line.iter().enumerate() {
            let x = m.xmin + gx as i32;
            if (0..w).contains(&x) {
                if let Some(p) = data.get_mut((y * w + x) as usize) {
                    *p = ink(c);
                }
            }
        }
    }
    Some(mask)
}

/// A hollow box from the x-height to the baseline: visibly not a character.
fn missing_box(cell: CellMetrics, px: u32) -> Option<Mask> {
    let mut mask = Mask::new(cell.width, cell.height)?;
    let x1 = cell.width.saturating_sub(2) as f32;
    let y1 = cell.baseline.saturating_sub(1) as f32;
    let y0 = cell.baseline.saturating_sub((px * 7 / 10).max(2)) as f32;
    // Top, bottom, left and right sides, one pixel wide, whole pixels.
    let mut sides = PathBuilder::new();
    for (l, t, r, b) in [
        (0.0, y0, x1 + 1.0, y0 + 1.0),
        (0.0, y1, x1 + 1.0, y1 + 1.0),
        (0.0, y0, 1.0, y1 + 1.0),
        (x1, y0, x1 + 1.0, y1 + 1.0),
    ] {
        if let Some(rect) = Rect::from_ltrb(l, t, r, b) {
            sides.push_rect(rect);
        }
    }
    let path = sides.finish()?;
    mask.fill_path(&path, FillRule::Winding, false, Transform::identity());
    Some(mask)
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

/// Packs runs of bits into a row of bytes, most significant bits first;
/// what is not written stays as it was (paper).
struct RowPacker<'a> {
    bytes: std::slice::IterMut<'a, u8>,
    acc: u64,
    filled: u32,
}

/// Most bits a run given to [`RowPacker::push`] may hold.
const RUN_BITS: u32 = 56;

impl<'a> RowPacker<'a> {
    fn new(row: &'a mut [u8]) -> Self {
        Self {
            bytes: row.iter_mut(),
            acc: 0,
            filled: 0,
        }
    }

    /// Appends the low `len` (at most [`RUN_BITS`]) bits of `run`.
    fn push(&mut self, run: u64, len: u32) {
        self.acc = (self.acc << len) | run;
        self.filled += len;
        while self.filled >= 8 {
            self.filled -= 8;
            if let Some(b) = self.bytes.next() {
                *b = (self.acc >> self.filled) as u8;
            }
        }
        self.acc &= (1 << self.filled) - 1;
    }

    /// Ends the row: a partly filled byte is padded with paper (all ones).
    fn finish(self) {
        if self.filled > 0 {
            let pad = 8 - self.filled;
            if let Some(b) = { self.bytes }.next() {
                *b = ((self.acc << pad) | ((1 << pad) - 1)) as u8;
            }
        }
    }
}

/// Draws `rows` (one slice of cells per row) at `px` into a `width`×`height`
/// bitmap at `bits` per pixel with `margin` blank pixels at the top left.
/// Cells that do not fit the image whole are left out. Characters the font
/// lacks are drawn as a hollow box. `None` for an empty image or one too
/// large for a tiny-skia pixmap.
#[allow(clippy::too_many_arguments)]
pub fn draw(
    rows: &[&[char]],
    atlas: &Atlas,
    px: u32,
    width: u32,
    height: u32,
    margin: u32,
    bits: u8,
) -> Option<Bitmap> {
    let bits = if BIT_DEPTHS.contains(&bits) { bits } else { 8 };
    // The sizes a pixmap of the whole image would accept (`Pixmap::new`).
    let size = IntSize::from_wh(width, height)?;
    (size.width() as usize)
        .checked_mul(4)
        .filter(|&row| row <= i32::MAX as usize)?
        .checked_mul(size.height() as usize)?;
    let cell = atlas.cell;
    let mut extra: BTreeMap<char, Tile> = BTreeMap::new();
    if let Some(font) = font() {
        for ch in rows.iter().flat_map(|r| r.iter()) {
            if !(' '..='~').contains(ch) && !extra.contains_key(ch) && covers(*ch) {
                let tile = glyph(font, *ch, px as f32, cell).and_then(|m| composite(&m));
                extra.insert(*ch, tile);
            }
        }
    }
    let (cw, ch) = (cell.width as usize, cell.height as usize);
    // Each row of a tile in use quantized and packed once: runs of up to
    // RUN_BITS bits (a whole row at 2 bits when the cell is at most 28 wide).
    let depth = u32::from(bits);
    let per_run = (RUN_BITS / depth) as usize;
    let runs: Vec<u32> = (0..cw)
        .step_by(per_run)
        .map(|x| (cw - x).min(per_run) as u32 * depth)
        .collect();
    let levels = (1u64 << bits) - 1;
    let level: Vec<u64> = (0..=255u64).map(|g| (g * levels + 127) / 255).collect();
    let pack = |tile: &[u8]| -> Vec<u64> {
        tile.chunks_exact(cw.max(1))
            .flat_map(|line| line.chunks(per_run.max(1)))
            .map(|run| {
                run.iter().fold(0u64, |acc, &g| {
                    (acc << bits) | level.get(usize::from(g)).copied().unwrap_or(0)
                })
            })
            .collect()
    };
    let ascii: Vec<Option<Vec<u64>>> = (' '..='~')
        .map(|c| atlas.tile(c, &extra).map(pack))
        .collect();
    let mut other: BTreeMap<char, Option<Vec<u64>>> = BTreeMap::new();
    for c in rows.iter().flat_map(|r| r.iter()) {
        if !(' '..='~').contains(c) && !other.contains_key(c) {
            other.insert(*c, atlas.tile(*c, &extra).map(pack));
        }
    }
    let packed = |c: char| {
        if (' '..='~').contains(&c) {
            ascii.get(c as usize - ' ' as usize)
        } else {
            other.get(&c)
        }
        .and_then(Option::as_deref)
    };
    let stride = Bitmap::row_bytes(width, bits);
    let mut data = vec![0xff; stride * height as usize];
    let fit_x = (width.saturating_sub(margin) / cell.width.max(1)) as usize;
    let fit_y = (height.saturating_sub(margin) / cell.height.max(1)) as usize;
    let margin_runs: Vec<u32> = (0..margin as usize)
        .step_by(per_run)
        .map(|x| (margin as usize - x).min(per_run) as u32 * depth)
        .collect();
    let paper = |len: u32| (1u64 << len) - 1;
    let mut cells: Vec<Option<&[u64]>> = Vec::with_capacity(fit_x);
    let bands = data
        .get_mut(stride * margin as usize..)
        .unwrap_or_default()
        .chunks_exact_mut((stride * ch).max(1));
    for (row, band) in rows.iter().take(fit_y).zip(bands) {
        cells.clear();
        cells.extend(row.iter().take(fit_x).map(|c| packed(*c)));
        // Past the last cell with ink the band stays paper.
        let Some(last) = cells.iter().rposition(Option::is_some) else {
            continue;
        };
        let inked = cells.get(..=last).unwrap_or_default();
        for (ty, line) in band.chunks_exact_mut(stride.max(1)).enumerate() {
            let mut packer = RowPacker::new(line);
            margin_runs
                .iter()
                .for_each(|&len| packer.push(paper(len), len));
            for cell in inked {
                let at = ty * runs.len();
                match cell.and_then(|rows| rows.get(at..at + runs.len())) {
                    Some(row) => row
                        .iter()
                        .zip(&runs)
                        .for_each(|(&run, &len)| packer.push(run, len)),
                    None => runs.iter().for_each(|&len| packer.push(paper(len), len)),
                }
            }
            packer.finish();
        }
    }
    Some(Bitmap::new(width, height, bits, data))
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// The straightforward composite [`draw`] must equal: every glyph's mask
    /// laid into one image-sized mask, one black fill through it onto a white
    /// image-sized pixmap, each pixel quantized and packed.
    fn draw_whole(
        rows: &[&[char]],
        px: u32,
        line_gap: u32,
        (width, height, margin): (u32, u32, u32),
        bits: u8,
    ) -> Option<Bitmap> {
        let font = font()?;
        let cell = cell_metrics(px, line_gap)?;
        let mask_of = |ch: char| {
            if (' '..='~').contains(&ch) || covers(ch) {
                glyph(font, ch, px as f32, cell)
            } else {
                missing_box(cell, px)
            }
        };
        let mut ink = Mask::new(width, height)?;
        let fit_x = width.saturating_sub(margin) / cell.width;
        let fit_y = height.saturating_sub(margin) / cell.height;
        for (r, row) in rows.iter().take(fit_y as usize).enumerate() {
            for (c, ch) in row.iter().take(fit_x as usize).enumerate() {
                let Some(m) = mask_of(*ch) else { continue };
                let (x0, y0) = (
                    margin + c as u32 * cell.width,
                    margin + r as u32 * cell.height,
                );
                for ty in 0..cell.height {
                    for tx in 0..cell.width {
                        let v = m.data()[(ty * cell.width + tx) as usize];
                        ink.data_mut()[((y0 + ty) * width + x0 + tx) as usize] = v;
                    }
                }
            }
        }
        let mut canvas = Pixmap::new(width, height)?;
        canvas.fill(Color::WHITE);
        let mut black = Paint::default();
        black.set_color_rgba8(0, 0, 0, 255);
        let whole = Rect::from_xywh(0.0, 0.0, width as f32, height as f32)?;
        canvas.fill_rect(whole, &black, Transform::identity(), Some(&ink));
        let levels = (1u32 << bits) - 1;
        let per_byte = 8 / usize::from(bits);
        let mut data = Vec::new();
        for row in canvas.pixels().chunks_exact(width as usize) {
            for pixels in row.chunks(per_byte) {
                let byte = pixels.iter().fold(0u32, |b, p| {
                    (b << bits) | ((u32::from(p.red()) * levels + 127) / 255)
                });
                let pad = (per_byte - pixels.len()) * usize::from(bits);
                data.push(((byte << pad) | ((1 << pad) - 1)) as u8);
            }
        }
        Some(Bitmap::new(width, height, bits, data))
    }

    /// Characters of every kind the atlas handles: printable ASCII (with and
    /// without ink), Latin-1 and box drawing (drawn per drawing), characters
    /// the font lacks (the placeholder box).
    const POOL: &[char] = &[
        ' ', ' ', ' ', 'a', 'W', 'g', '_', '.', '0', '|', '~', '@', '{', 'é', 'ø', '─', '✓', '—',
        '日', '💩', MISSING,
    ];

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(300))]

        #[test]
        fn draws_what_one_fill_through_an_image_mask_draws(
            px in prop_oneof![4u32..=14, 15u32..=64],
            line_gap in 0u32..=3,
            bits in prop::sample::select(BIT_DEPTHS.to_vec()),
            (width, height, margin) in (1u32..400, 1u32..200, 0u32..9),
            rows in prop::collection::vec(
                prop::collection::vec(prop::sample::select(POOL), 0..60),
                0..16,
            ),
        ) {
            let atlas = atlas(px, line_gap).unwrap();
            let rows: Vec<&[char]> = rows.iter().map(Vec::as_slice).collect();
            let fast = draw(&rows, atlas, px, width, height, margin, bits);
            let whole = draw_whole(&rows, px, line_gap, (width, height, margin), bits);
            prop_assert_eq!(fast, whole);
        }
    }

    #[test]
    fn empty_or_oversized_images_are_not_drawn() {
        let a = atlas(10, 0).unwrap();
        let row: Vec<char> = "ab".chars().collect();
        assert!(draw(&[&row[..]], a, 10, 0, 10, 2, 2).is_none());
        assert!(draw(&[&row[..]], a, 10, 10, 0, 2, 2).is_none());
        // A pixmap row holds at most i32::MAX bytes.
        assert!(draw(&[&row[..]], a, 10, u32::MAX / 2, 1, 2, 1).is_none());
    }

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
    fn zero_is_drawn_without_its_inner_dot() {
        // The dot of DejaVu's zero blurs into `6`/`8`/`@` at snapshot sizes
        // (bench/LEGIBILITY.md); `subset.sh` removes it. Its middle is paper.
        let font = font().unwrap();
        for px in 8..=24u32 {
            let (m, coverage) = font.rasterize('0', px as f32);
            let (cx, cy) = (m.width / 2, m.height / 2);
            let row = &coverage[cy * m.width..(cy + 1) * m.width];
            assert!(
                row[cx] < 64,
                "{px} px: coverage {} at the middle of 0",
                row[cx]
            );
            // The sides are drawn on that row.
            assert!(row[..cx].iter().any(|&c| c > 64) && row[cx..].iter().any(|&c| c > 64));
        }
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
            let c = draw(&rows, a, 10, 40, 20, 2, bits).unwrap();
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
        let full = draw(&rows, a, 11, 53, 30, 3, 8).unwrap();
        for bits in [1u8, 2, 4] {
            let c = draw(&rows, a, 11, 53, 30, 3, bits).unwrap();
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
}
