//! The optical stage checks its own options section (`optical`); [`Config`]
//! calls it through [`Section`].

use crate::config::{Config, OpticalConfig, Section};
use crate::error::{invalid_option, Result};

impl Section for OpticalConfig {
    /// Checks the `optical` section; errors name the offending field.
    fn validate(&self, _config: &Config) -> Result<()> {
        if !(self.ratio.is_finite() && self.ratio > 0.0) {
            return invalid_option("optical.ratio", "must be a positive number");
        }
        if !(4..=64).contains(&self.font_px) {
            return invalid_option("optical.fontPx", "must be between 4 and 64");
        }
        if !(4..=self.font_px).contains(&self.min_font_px) {
            return invalid_option("optical.minFontPx", "must be between 4 and optical.fontPx");
        }
        if self.line_gap > 3 {
            return invalid_option("optical.lineGap", "must be between 0 and 3");
        }
        if self.min_columns == 0 {
            return invalid_option("optical.minColumns", "must be at least 1");
        }
        if !matches!(self.bit_depth, 1 | 2 | 4 | 8) {
            return invalid_option("optical.bitDepth", "must be 1, 2, 4 or 8");
        }
        if !(0.0..=1.0).contains(&self.max_missing_share) {
            return invalid_option("optical.maxMissingShare", "must be in [0, 1]");
        }
        if !(self.patch_multiplier.is_finite() && self.patch_multiplier > 0.0) {
            return invalid_option("optical.patchMultiplier", "must be a positive number");
        }
        if self.batch == 0 {
            return invalid_option("optical.batch", "must be at least 1");
        }
        if !matches!(self.detail.as_str(), "high" | "low") {
            return invalid_option("optical.detail", "must be \"high\" or \"low\"");
        }
        if !matches!(
            self.media_resolution.as_str(),
            "" | "low" | "medium" | "high"
        ) {
            return invalid_option(
                "optical.mediaResolution",
                "must be \"low\", \"medium\", \"high\" or empty",
            );
        }
        crate::formats::image_urls::check_template(&self.image_url)
    }
}
