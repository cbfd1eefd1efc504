//! Image budget per provider: the largest image each provider takes without
//! downscaling (downscaling would shrink the text below legibility), and the
//! choice of font size, width and split that costs the fewest image tokens.

use crate::config::{OpticalConfig, Provider};
use crate::tokens::image_tokens;

use super::layout::{Lines, RowCounts};
use super::raster::CellMetrics;

/// Blank pixels around the text of each image.
pub const MARGIN: u32 = 2;

/// The size rules of a provider: what fits without being downscaled, and the
/// pixel multiple the provider resizes to (images are padded up to it).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SizeRules {
    provider: Provider,
    /// Longest edge in pixels.
    pub max_edge: u32,
    /// Largest area in pixels.
    pub max_pixels: u64,
    /// For OpenAI tile models: the shortest side must not exceed this (else scaled to 768).
    pub max_short_side: u32,
    /// Dimensions are padded up to a multiple of this.
    pub align: u32,
}

impl SizeRules {
    /// The rules for `provider` under `optical`'s options.
    pub fn new(provider: Provider, optical: &OpticalConfig) -> Self {
        let (max_edge, max_pixels, max_short_side, align) = match provider {
            // Long edge ≤ 1568 px and ≤ ~1.15 MP, or the image is downscaled.
            Provider::Anthropic => (1568, 1_150_000, u32::MAX, 1),
            // detail=low: everything is scaled to 512×512.
            Provider::Openai if optical.detail == "low" => (512, 512 * 512, 512, 1),
            // Fit in 2048², then the shortest side is scaled down to 768.
            Provider::Openai => (2048, 2048 * 768, 768, 1),
            // More than 1536 patches of 32 px are scaled down.
            Provider::OpenaiPatch => (2048, 1536 * 32 * 32, u32::MAX, 32),
            // Gemini 3 media_resolution: a fixed price per image; the sizes the model
            // resamples to are not published, these caps are conservative guesses.
            Provider::Gemini => match optical.media_resolution.as_str() {
                "low" => (768, 768 * 768, u32::MAX, 1),
                "medium" => (1024, 1024 * 1024, u32::MAX, 1),
                "high" => (1536, 1536 * 1536, u32::MAX, 1),
                // Tile pricing; Gemini scales images down to fit 3072×3072.
                _ => (3072, 3072 * 3072, u32::MAX, 1),
            },
            // Qwen-VL processors resize to multiples of 28 px within max_pixels
            // (1280·28·28 is the commonly deployed setting).
            Provider::Qwen => (4096, 1280 * 28 * 28, u32::MAX, 28),
        };
        Self {
            provider,
            max_edge,
            max_pixels,
            max_short_side,
            align,
        }
    }

    /// `v` padded up to the alignment.
    pub fn align_up(&self, v: u32) -> u32 {
        v.div_ceil(self.align) * self.align
    }

    /// Whether a `width`×`height` image is taken as is.
    pub fn fits(&self, width: u32, height: u32) -> bool {
        width <= self.max_edge
            && height <= self.max_edge
            && u64::from(width) * u64::from(height) <= self.max_pixels
            && width.min(height) <= self.max_short_side
    }

    /// Tallest image (pixels) that fits at `width`, or 0.
    pub fn max_height(&self, width: u32) -> u32 {
        if width == 0 || !self.fits(width, 1) {
            return 0;
        }
        let mut h = self
            .max_edge
            .min((self.max_pixels / u64::from(width)) as u32);
        if width > self.max_short_side {
            h = h.min(self.max_short_side);
        }
        // Keep it a multiple of the alignment.
        h - h % self.align
    }

    /// Provider this applies to.
    pub fn provider(&self) -> Provider {
        self.provider
    }
}

/// The chosen rendering of an observation: font size, width and how the rows
/// are split into images.
#[derive(Debug, Clone, PartialEq)]
pub struct Rendering {
    /// Font pixel height.
    pub font_px: u32,
    /// Cell size at that font.
    pub cell: CellMetrics,
    /// Columns per row.
    pub columns: usize,
    /// Total rows after wrapping.
    pub rows: usize,
    /// Rows of each image, in order.
    pub image_rows: Vec<usize>,
    /// Size of each image (after padding to the provider's alignment).
    pub image_sizes: Vec<(u32, u32)>,
    /// Image tokens of all images together.
    pub tokens: u64,
}

/// Chooses the cheapest rendering for `lines`: for each font size from
/// `optical.font_px` down to `optical.min_font_px` and each width from the
/// longest line down to `optical.min_columns` (or the longest line, if
/// shorter), count rows, split them at the provider's size limit, price the
/// images. Ties go to the larger font, then to the wider layout (fewer wrapped
/// lines). `None` when nothing fits (empty text, or a font too large for the
/// provider's limits).
pub fn choose(
    lines: &Lines,
    provider: Provider,
    optical: &OpticalConfig,
    metrics: impl Fn(u32) -> Option<CellMetrics>,
) -> Option<Rendering> {
    if lines.lines.is_empty() {
        return None;
    }
    let rules = SizeRules::new(provider, optical);
    let counts = RowCounts::new(lines.length_histogram());
    let longest = lines.max_len().max(1);
    let mut best: Option<(u64, u32, CellMetrics, usize)> = None;
    let (lo_px, hi_px) = (
        optical.min_font_px,
        optical.font_px.max(optical.min_font_px),
    );
    for px in (lo_px..=hi_px).rev() {
        let Some(cell) = metrics(px) else { continue };
        let widest = ((rules.max_edge.saturating_sub(2 * MARGIN)) / cell.width.max(1)) as usize;
        let hi_cols = longest.min(widest);
        let lo_cols = optical.min_columns.min(hi_cols).max(1);
        for columns in (lo_cols..=hi_cols).rev() {
            let rows = counts.rows(columns);
            let Some(tokens) = price(&rules, optical, cell, columns, rows) else {
                continue;
            };
            if best.as_ref().map_or(true, |b| tokens < b.0) {
                best = Some((tokens, px, cell, columns));
            }
        }
    }
    let (tokens, font_px, cell, columns) = best?;
    let rows = counts.rows(columns);
    let (width, per_image) = geometry(&rules, cell, columns)?;
    let mut image_rows = Vec::new();
    let mut image_sizes = Vec::new();
    let mut left = rows;
    while left > 0 {
        let n = left.min(per_image);
        image_rows.push(n);
        image_sizes.push((width, image_height(&rules, cell, n)));
        left -= n;
    }
    Some(Rendering {
        font_px,
        cell,
        columns,
        rows,
        image_rows,
        image_sizes,
        tokens,
    })
}

/// Image width and rows per image at `columns`, or `None` if no row fits.
fn geometry(rules: &SizeRules, cell: CellMetrics, columns: usize) -> Option<(u32, usize)> {
    let width = rules.align_up(u32::try_from(columns).ok()? * cell.width + 2 * MARGIN);
    let max_h = rules.max_height(width);
    let per_image = (max_h.saturating_sub(2 * MARGIN) / cell.height.max(1)) as usize;
    (per_image > 0).then_some((width, per_image))
}

fn image_height(rules: &SizeRules, cell: CellMetrics, rows: usize) -> u32 {
    rules.align_up(rows as u32 * cell.height + 2 * MARGIN)
}

/// Image tokens of `rows` rows of `columns` cells, split at the size limit.
fn price(
    rules: &SizeRules,
    optical: &OpticalConfig,
    cell: CellMetrics,
    columns: usize,
    rows: usize,
) -> Option<u64> {
    let (width, per_image) = geometry(rules, cell, columns)?;
    let full = rows / per_image;
    let rest = rows % per_image;
    let mut tokens = 0u64;
    if full > 0 {
        let h = image_height(rules, cell, per_image);
        tokens += full as u64 * image_tokens(rules.provider(), width, h, optical);
    }
    if rest > 0 {
        let h = image_height(rules, cell, rest);
        tokens += image_tokens(rules.provider(), width, h, optical);
    }
    Some(tokens)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::optical::layout::lay_out;

    fn cell(px: u32) -> Option<CellMetrics> {
        Some(CellMetrics {
            width: (px * 6).div_ceil(10),
            height: px + 1,
            baseline: px * 8 / 10,
        })
    }

    #[test]
    fn every_image_fits_the_provider_and_rows_add_up() {
        let text: String = (0..900)
            .map(|i| format!("line {i} {}\n", "x".repeat(i % 97)))
            .collect();
        let lines = lay_out(&text);
        for provider in [
            Provider::Anthropic,
            Provider::Openai,
            Provider::OpenaiPatch,
            Provider::Gemini,
            Provider::Qwen,
        ] {
            let o = OpticalConfig::default();
            let rendering = choose(&lines, provider, &o, cell).unwrap();
            let rules = SizeRules::new(provider, &o);
            assert!(rendering.image_sizes.len() > 1, "{provider:?} should split");
            for &(w, h) in &rendering.image_sizes {
                assert!(rules.fits(w, h), "{provider:?} {w}x{h}");
                assert_eq!(w % rules.align, 0);
                assert_eq!(h % rules.align, 0);
            }
            assert_eq!(rendering.image_rows.iter().sum::<usize>(), rendering.rows);
            assert_eq!(rendering.rows, lines.rows(rendering.columns));
            let sum: u64 = rendering
                .image_sizes
                .iter()
                .map(|&(w, h)| image_tokens(provider, w, h, &o))
                .sum();
            assert_eq!(sum, rendering.tokens);
        }
    }

    #[test]
    fn openai_keeps_the_short_side_at_most_768() {
        let rules = SizeRules::new(Provider::Openai, &OpticalConfig::default());
        assert_eq!(rules.max_height(500), 2048);
        assert_eq!(rules.max_height(1000), 768);
        assert_eq!(rules.max_height(2049), 0);
    }

    #[test]
    fn width_follows_the_content_not_a_fixed_80_columns() {
        let lines = lay_out("short\nlines\nonly");
        let rendering =
            choose(&lines, Provider::Anthropic, &OpticalConfig::default(), cell).unwrap();
        assert_eq!(rendering.columns, 5);
        assert_eq!(rendering.rows, 3);
        assert!(choose(
            &lay_out(""),
            Provider::Qwen,
            &OpticalConfig::default(),
            cell
        )
        .is_none());
    }
}
