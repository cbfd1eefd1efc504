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
    ch == ' ' || (ch != MISSING && font().is_some_and(|f| f.lookup_glyph_index(ch) != 0))
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

/// An 8-bit grayscale image (255 = white).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Canvas {
    /// Width in pixels.
    pub width: u32,
    /// Height in pixels.
    pub height: u32,
    /// Row-major pixels.
    pub pixels: Vec<u8>,
}

/// Draws `rows` (one slice of cells per row) at `px` into a `width`×`height`
/// canvas with `margin` blank pixels at the top left. Cells beyond the canvas
/// are clipped. Characters the font lacks are drawn as a hollow box.
pub fn draw(
    rows: &[&[char]],
    atlas: &Atlas,
    px: u32,
    width: u32,
    height: u32,
    margin: u32,
) -> Canvas {
    let cell = atlas.cell;
    let mut extra: BTreeMap<char, Tile> = BTreeMap::new();
    if let Some(font) = font() {
        for ch in rows.iter().flat_map(|r| r.iter()) {
            if !(' '..='~').contains(ch) && !extra.contains_key(ch) && covers(*ch) {
                extra.insert(*ch, tile(font, *ch, px as f32, cell));
            }
        }
    }
    let stride = width as usize;
    let mut pixels = vec![255u8; stride * height as usize];
    let (cw, ch) = (cell.width as usize, cell.height as usize);
    for (r, row) in rows.iter().enumerate() {
        let y0 = margin as usize + r * ch;
        if y0 + ch > height as usize {
            break;
        }
        for (c, glyph) in row.iter().enumerate() {
            if *glyph == ' ' {
                continue;
            }
            let x0 = margin as usize + c * cw;
            if x0 + cw > stride {
                break;
            }
            let Some(tile) = atlas.tile(*glyph, &extra) else {
                continue;
            };
            for (ty, src) in tile.chunks_exact(cw).enumerate() {
                let at = (y0 + ty) * stride + x0;
                if let Some(dst) = pixels.get_mut(at..at + cw) {
                    dst.copy_from_slice(src);
                }
            }
        }
    }
    Canvas {
        width,
        height,
        pixels,
    }
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
        let c = draw(&rows, a, 10, 40, 20, 2);
        let ink = |x0: u32, x1: u32| {
            (0..c.height)
                .flat_map(|y| (x0..x1).map(move |x| (x, y)))
                .filter(|&(x, y)| c.pixels[(y * c.width + x) as usize] < 128)
                .count()
        };
        let w = a.cell.width;
        assert!(ink(2, 2 + w) > 5, "H is drawn");
        assert!(ink(2 + w, 2 + 2 * w) > 5, "placeholder is drawn");
        assert_eq!(ink(2 + 2 * w, 40), 0, "the rest is paper");
    }
}
