//! Stage 4, optical snapshots: tool results older than the recent window
//! become images of their text when the image costs at most `1/ratio` of the
//! text's tokens for the target provider. Outputs of the tools
//! `excludeTools` names stay text (and propose no saving to the planner).
//!
//! [`layout`] (tabs, ANSI, control characters, trimming) → [`budget`] (font
//! size, wrap width and split chosen to minimise the provider's image tokens)
//! → [`raster`] (glyph sprites of the bundled font composited by tiny-skia,
//! quantized to a low-bit-depth bitmap) → [`encode`] (grayscale PNG by the
//! `png` crate, base64). Renders are cached by content hash in the
//! session's [`SnapshotCache`].
//!
//! Placement: the tool result keeps a one-line text reference (with the
//! `spill://` pointer to its original text) followed by the image parts; each
//! format's emitter puts the images where its provider accepts them.
//! Observations leave the window in batches of `optical.batch`, so between two
//! batches the emitted prefix is byte-identical and the provider's prompt cache
//! keeps working.

pub mod api;
pub mod budget;
mod cache;
pub mod encode;
pub mod layout;
pub mod raster;

pub use cache::{OpticalState, ProposalCache, SnapshotCache};

use serde_json::{Map, Value};

use crate::activity::{self, check};
use crate::capability::ImageLimits;
use crate::config::{OpticalConfig, OpticalSwitch, Provider};
use crate::error::{Error, ErrorCode, Result};
use crate::model::{Conversation, Image, Part, PartKind, PartRef};
use crate::stage::{Stage, StageContext, StageName};
use crate::store;

/// The optical stage's context.
type Cx<'a> = StageContext<'a, OpticalState>;

use budget::{Rendering, MARGIN};
use layout::Lines;

/// How the lines of an observation are put on the image.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Flow {
    /// Line by line, long lines wrapped: the text as a terminal shows it.
    Lines,
    /// The lines run together, each break marked `»` ([`Lines::reflowed`]).
    Reflow,
}

impl Flow {
    fn lay_out(self, text: &str) -> Lines {
        let lines = layout::lay_out(text);
        match self {
            Self::Lines => lines,
            Self::Reflow => lines.reflowed(),
        }
    }
}

/// What rendering an observation costs and, once rendered, its images.
#[derive(Debug, Clone, PartialEq)]
pub struct Snapshot {
    /// How the lines are put on the image.
    pub flow: Flow,
    /// The chosen layout (font, width, split, image tokens).
    pub rendering: Rendering,
    /// Lines of the text after layout.
    pub lines: usize,
    /// Drawn cells that are not spaces.
    pub ink: usize,
    /// Cells drawn as a placeholder because the font lacks the character.
    pub missing: usize,
    /// PNG images, in order (empty until rendered).
    pub images: Vec<Image>,
}

impl Snapshot {
    /// Share of drawn glyphs missing from the font.
    pub fn missing_share(&self) -> f64 {
        if self.ink == 0 {
            0.0
        } else {
            self.missing as f64 / self.ink as f64
        }
    }

    /// Image tokens of all images.
    pub fn image_tokens(&self) -> u64 {
        self.rendering.tokens
    }
}

/// Lays out `text` line by line and fits it to the cheapest legible
/// rendering for `provider` (sizes only: nothing is drawn). `None` for empty text or settings no image can satisfy.
pub fn fit(text: &str, provider: Provider, optical: &OpticalConfig) -> Option<Snapshot> {
    fit_flow(text, provider, optical, Flow::Lines)
}

/// [`fit`] with the lines put on the image as `flow` says.
pub fn fit_flow(
    text: &str,
    provider: Provider,
    optical: &OpticalConfig,
    flow: Flow,
) -> Option<Snapshot> {
    fit_lines(&flow.lay_out(text), provider, optical, flow)
}

fn fit_lines(
    lines: &Lines,
    provider: Provider,
    optical: &OpticalConfig,
    flow: Flow,
) -> Option<Snapshot> {
    let rendering = budget::choose(lines, provider, optical, |px| {
        raster::cell_metrics(px, optical.line_gap)
    })?;
    let missing = lines
        .lines
        .iter()
        .flat_map(|l| l.iter())
        .filter(|c| !raster::covers(**c))
        .count();
    Some(Snapshot {
        flow,
        rendering,
        lines: lines.lines.len(),
        ink: lines.ink,
        missing,
        images: Vec::new(),
    })
}

/// Fits and renders `text` into PNG images (see [`fit`]).
pub fn render(text: &str, provider: Provider, optical: &OpticalConfig) -> Result<Option<Snapshot>> {
    render_flow(text, provider, optical, Flow::Lines)
}

/// [`render`] with the lines put on the image as `flow` says.
pub fn render_flow(
    text: &str,
    provider: Provider,
    optical: &OpticalConfig,
    flow: Flow,
) -> Result<Option<Snapshot>> {
    let lines = flow.lay_out(text);
    let Some(mut snapshot) = fit_lines(&lines, provider, optical, flow) else {
        return Ok(None);
    };
    snapshot.images = draw_images(&lines, &snapshot.rendering, optical)?;
    Ok(Some(snapshot))
}

fn draw_images(
    lines: &Lines,
    rendering: &Rendering,
    optical: &OpticalConfig,
) -> Result<Vec<Image>> {
    let Some(atlas) = raster::atlas(rendering.font_px, optical.line_gap) else {
        return Ok(Vec::new());
    };
    let rows = lines.wrap(rendering.columns);
    let mut images = Vec::with_capacity(rendering.image_rows.len());
    let mut start = 0;
    for (&n, &(width, height)) in rendering.image_rows.iter().zip(&rendering.image_sizes) {
        let end = (start + n).min(rows.len());
        let chunk = rows.get(start..end).unwrap_or(&[]);
        let bitmap = raster::draw(
            chunk,
            atlas,
            rendering.font_px,
            width,
            height,
            MARGIN,
            optical.bit_depth,
        )
        .ok_or_else(|| {
            Error::new(
                ErrorCode::RenderFailed,
                "optical",
                format!("no {width}x{height} canvas"),
            )
        })?;
        let png = encode::png(&bitmap)?;
        images.push(Image {
            media_type: "image/png".into(),
            data: encode::base64(&png),
            url: None,
            width,
            height,
        });
        start = end;
    }
    Ok(images)
}

/// Cache key of a snapshot: the first 128 bits of the SHA-256 of the text's
/// digest ([`SnapshotCache::text_digest`]), the flow and every setting that
/// changes the pixels or the price (no chosen text shares another's key: the
/// cache is shared by every session).
pub fn cache_key(
    text_digest: u128,
    provider: Provider,
    optical: &OpticalConfig,
    flow: Flow,
) -> u128 {
    let mut settings = vec![provider as u8, optical.bit_depth, flow as u8];
    for v in [
        optical.font_px,
        optical.min_font_px,
        optical.line_gap,
        optical.min_columns as u32,
    ] {
        settings.extend_from_slice(&v.to_le_bytes());
    }
    settings.extend_from_slice(&optical.patch_multiplier.to_bits().to_le_bytes());
    crate::hash::digest128(&[
        &text_digest.to_be_bytes(),
        &settings,
        optical.detail.as_bytes(),
        optical.media_resolution.as_bytes(),
    ])
}

/// The one-line text a snapshot leaves in the tool result: `lines` is the
/// observation's own line count (as `read_spill` numbers them), whatever the
/// flow put on the image. `excerpt_only`
/// when the rendered text is an excerpt whose full output the store refused:
/// the pointer then holds that excerpt, not the full output, and says so.
pub fn reference(
    lines: usize,
    images: usize,
    flow: Flow,
    pointer: &str,
    excerpt_only: bool,
) -> String {
    let s = if images == 1 { "" } else { "s" };
    let ls = if lines == 1 { "" } else { "s" };
    let marked = match flow {
        Flow::Lines => "",
        Flow::Reflow => ", line breaks marked »",
    };
    if excerpt_only {
        format!(
            "[{lines} line{ls} of an excerpt shown as {images} image{s}{marked}; excerpt only, the full output could not be kept; excerpt text: {pointer} (read_spill)]"
        )
    } else {
        format!(
            "[{lines} line{ls} of output shown as {images} image{s}{marked}; full text: {pointer} (read_spill)]"
        )
    }
}

/// The optical stage.
#[derive(Debug, Default)]
pub struct Optical;

/// Why an observation outside the window stayed text.
#[derive(Debug, Default)]
struct Tally {
    rendered: usize,
    live_views: usize,
    not_text: usize,
    too_costly: usize,
    missing_glyphs: usize,
    image_cap: usize,
    store_refused: usize,
    excluded: usize,
}

impl Stage for Optical {
    type State = OpticalState;

    fn name(&self) -> StageName {
        StageName::Optical
    }

    /// `optical.enabled`: `true`, `false`, or (`'auto'`) whether the model
    /// the request goes to reads images ([`crate::capability`]).
    fn enabled(&self, cx: &StageContext<'_, OpticalState>) -> bool {
        match cx.config.optical.enabled {
            OpticalSwitch::On => true,
            OpticalSwitch::Off => false,
            OpticalSwitch::Auto => cx.model.images,
        }
    }

    fn disabled_because(&self, cx: &StageContext<'_, OpticalState>) -> Option<String> {
        match cx.config.optical.enabled {
            OpticalSwitch::Auto => cx.model.why_no_images(),
            _ => None,
        }
    }

    fn scheduled(&self) -> bool {
        true
    }

    /// What a snapshot would save on each observation outside the recent
    /// window (only those may be handed over).
    fn propose(&self, conv: &Conversation, cx: &mut Cx<'_>) -> Result<Option<Vec<u64>>> {
        let at = conv.observations();
        let outside = at.len().saturating_sub(cx.config.window);
        proposed_savings(conv, at.get(..outside).unwrap_or(&[]), cx).map(Some)
    }

    fn apply(
        &self,
        conv: &mut Conversation,
        cx: &mut StageContext<'_, OpticalState>,
    ) -> Result<()> {
        let observations = conv.observations();
        let outside = observations.len().saturating_sub(cx.config.window);
        // What the planner handed over: the rendered set changes only when it
        // commits a move.
        let due = cx
            .schedule(observations.len())
            .demoted()
            .min(observations.len());
        let mut images_in_request = count_images(conv);
        let settings = cache::settings(cx.config);
        let mut tally = Tally::default();
        let live: std::collections::HashSet<PartRef> = if cx.config.optical.keep_live_views {
            let demoted: std::collections::HashSet<PartRef> =
                observations.iter().take(due).copied().collect();
            let mut steps = activity::read_cached(conv, &cx.config.phase, cx.activities);
            let settled = steps
                .iter()
                .take_while(|s| s.result_at.is_some_and(|r| demoted.contains(&r)))
                .count();
            steps.truncate(settled);
            let mut views = activity::live_views(&steps);
            let bound = cx.config.optical.max_live_views;
            if bound > 0 && views.len() > bound {
                // The newest.
                views.sort_unstable();
                views.drain(..views.len() - bound);
            }
            views.into_iter().collect()
        } else {
            std::collections::HashSet::new()
        };
        let excluded = crate::stage::excluded_results(conv, cx.config);
        for &at in observations.iter().take(due) {
            if excluded.contains(&at) {
                tally.excluded += 1;
                continue;
            }
            if live.contains(&at) {
                tally.live_views += 1;
                continue;
            }
            match self.snapshot_one(conv, at, cx, images_in_request, settings)? {
                Outcome::Rendered(n) => {
                    tally.rendered += 1;
                    images_in_request += n;
                }
                Outcome::NotText => tally.not_text += 1,
                Outcome::TooCostly => tally.too_costly += 1,
                Outcome::MissingGlyphs => tally.missing_glyphs += 1,
                Outcome::ImageCap => tally.image_cap += 1,
                Outcome::StoreRefused => tally.store_refused += 1,
            }
        }
        let optical = &cx.config.optical;
        cx.notes.push(format!(
            "{} observations, {} in the recent window, {} outside of which {} in whole batches of {}: \
             {} rendered, {} cost more than 1/{} of their text, {} have too many glyphs missing from the font, \
             {} over the {}-image cap, {} not plain text, {} refused by the store, {} views kept as text (file not edited since)",
            observations.len(),
            observations.len() - outside,
            outside,
            due,
            optical.batch,
            tally.rendered,
            tally.too_costly,
            optical.ratio,
            tally.missing_glyphs,
            tally.image_cap,
            image_cap(cx),
            tally.not_text,
            tally.store_refused,
            tally.live_views,
        ));
        if tally.excluded > 0 {
            cx.notes.push(format!(
                "{} outputs of excluded tools (excludeTools) kept as text",
                tally.excluded
            ));
        }
        Ok(())
    }
}

#[derive(Debug, Clone, Copy)]
enum Outcome {
    Rendered(usize),
    NotText,
    TooCostly,
    MissingGlyphs,
    ImageCap,
    StoreRefused,
}

/// What the optical stage proposes for one observation: a snapshot, with
/// its cost, or why it keeps the text.
struct Proposal {
    text: String,
    shown: String,
    key: u128,
    snapshot: Snapshot,
    line: String,
    before: u64,
    after: u64,
    count: usize,
}

/// Tokens the optical stage would save on each observation of `at` if it
/// were handed over now (0 when it would keep the text): its demotion
/// proposal ([`Stage::propose`]), which the planner prices
/// ([`crate::plan::demotion`]); 0 for an excluded tool's output.
fn proposed_savings(conv: &Conversation, at: &[PartRef], cx: &mut Cx<'_>) -> Result<Vec<u64>> {
    let settings = cache::settings(cx.config);
    let excluded = crate::stage::excluded_results(conv, cx.config);
    at.iter()
        .map(|&at| {
            if excluded.contains(&at) {
                Ok(0)
            } else {
                proposed_saving(conv, at, cx, settings)
            }
        })
        .collect()
}

/// [`proposed_savings`] of one observation, `settings` its [`cache::settings`].
fn proposed_saving(
    conv: &Conversation,
    at: PartRef,
    cx: &mut Cx<'_>,
    settings: u128,
) -> Result<u64> {
    // Weighed before (images rendered or not): the figures are remembered.
    if let Some(result) = conv.tool_result(at) {
        let text = result.text();
        if let Some(memo) = cx.state.proposals.get(&proposal_id(settings, &text), &text) {
            return Ok(memo.map_or(0, |p| p.before.saturating_sub(p.after)));
        }
    }
    Ok(match propose(conv, at, cx, settings)? {
        Ok(p) => p.before.saturating_sub(p.after),
        Err(_) => 0,
    })
}

/// The [`ProposalCache`] key of `text` under `settings`.
fn proposal_id(settings: u128, text: &str) -> (u128, u64, usize) {
    (
        settings,
        crate::hash::text_hash(text.as_bytes()),
        text.len(),
    )
}

/// The cheapest snapshot of the observation at `at` within `optical.ratio`
/// of its text (line by line, else reflowed), fitted but not rendered.
fn propose(
    conv: &Conversation,
    at: PartRef,
    cx: &mut Cx<'_>,
    settings: u128,
) -> Result<std::result::Result<Proposal, Outcome>> {
    let Some(result) = conv.tool_result(at) else {
        return Ok(Err(Outcome::NotText));
    };
    if result.parts.is_empty() || result.parts.iter().any(|p| p.as_text().is_none()) {
        return Ok(Err(Outcome::NotText));
    }
    let text = result.text();
    if text.trim().is_empty() {
        return Ok(Err(Outcome::NotText));
    }
    let id = proposal_id(settings, &text);
    match cx.state.proposals.get(&id, &text) {
        Some(Err(outcome)) => return Ok(Err(outcome)),
        Some(Ok(memo)) => {
            // Reused only while the render cache still holds the images.
            let snapshot = cx
                .state
                .snapshots
                .get(memo.key)
                .filter(|s| !s.images.is_empty())
                .cloned();
            if let Some(snapshot) = snapshot {
                return Ok(Ok(Proposal {
                    text,
                    shown: String::new(),
                    key: memo.key,
                    snapshot,
                    line: memo.line,
                    before: memo.before,
                    after: memo.after,
                    count: memo.count,
                }));
            }
        }
        None => {}
    }
    cx.state.proposals.computed += 1;
    let proposal = weigh(text.clone(), result, cx)?;
    let memo = match &proposal {
        Ok(p) => Ok(cache::Proposed {
            key: p.key,
            line: p.line.clone(),
            before: p.before,
            after: p.after,
            count: p.count,
        }),
        Err(outcome) => Err(*outcome),
    };
    cx.state.proposals.insert(id, &text, memo);
    Ok(proposal)
}

/// [`propose`] for the text of `result`, not remembered.
fn weigh(
    text: String,
    result: &crate::model::ToolResult,
    cx: &mut Cx<'_>,
) -> Result<std::result::Result<Proposal, Outcome>> {
    let config = cx.config;
    let optical = &config.optical;
    let mut before = 0;
    for p in &result.parts {
        before += cx.meter.part(p)?;
    }
    // What the image shows reaches the model: mask secrets first (the
    // store keeps the original under `text`'s pointer). Counted for the
    // report only when the snapshot is applied.
    let shown = if config.redact.enabled {
        cx.redacted.redact(&text).0.into_owned()
    } else {
        text.clone()
    };
    let critical = check::critical_lines(&shown, check::CRITICAL_BYTES);
    let pointer = config.pointer(&cx.content_key("snapshot", &text));
    let excerpt_only = store::is_refused_excerpt(&text);
    let total_lines = store::lines::count(&text);
    // Line by line first; run together when that is too costly.
    let flows: &[Flow] = if optical.reflow {
        &[Flow::Lines, Flow::Reflow]
    } else {
        &[Flow::Lines]
    };
    let mut refused = Outcome::TooCostly;
    let digest = cx.state.snapshots.text_digest(&shown);
    for &flow in flows {
        let key = cache_key(digest, config.provider, optical, flow);
        let snapshot = match cx.state.snapshots.get(key) {
            Some(s) => s.clone(),
            None => {
                let Some(s) = fit_flow(&shown, config.provider, optical, flow) else {
                    continue;
                };
                cx.state
                    .snapshots
                    .insert(key, s.clone(), optical.cache_bytes);
                s
            }
        };
        if snapshot.missing_share() > optical.max_missing_share {
            refused = Outcome::MissingGlyphs;
            break;
        }
        let count = snapshot.rendering.image_sizes.len();
        let mut line = reference(total_lines, count, flow, &pointer, excerpt_only);
        // Errors, failing tests and a non-zero exit code stay text.
        for critical in critical.lines.iter().chain(&critical.omitted_note()) {
            line.push('\n');
            line.push_str(critical);
        }
        let after = cx.meter.text(&line)? + snapshot.image_tokens();
        if after as f64 <= before as f64 / optical.ratio {
            return Ok(Ok(Proposal {
                text,
                shown,
                key,
                snapshot,
                line,
                before,
                after,
                count,
            }));
        }
    }
    Ok(Err(refused))
}

impl Optical {
    fn snapshot_one(
        &self,
        conv: &mut Conversation,
        at: PartRef,
        cx: &mut Cx<'_>,
        images_in_request: usize,
        settings: u128,
    ) -> Result<Outcome> {
        let proposal = match propose(conv, at, cx, settings)? {
            Ok(p) => p,
            Err(outcome) => return Ok(outcome),
        };
        let Proposal {
            key,
            mut snapshot,
            count,
            before,
            after,
            ..
        } = proposal;
        let config = cx.config;
        let optical = &config.optical;
        let limits = cx.model.limits.unwrap_or(ImageLimits::NONE);
        let cap = image_cap(cx);
        let edge = limits.edge_for(cap);
        if images_in_request + count > cap
            || snapshot
                .rendering
                .image_sizes
                .iter()
                .any(|&(w, h)| w.max(h) > edge)
        {
            return Ok(Outcome::ImageCap);
        }
        let Ok(kept) = cx.keep("snapshot", &proposal.text) else {
            return Ok(Outcome::StoreRefused);
        };
        // Count the secrets the image masks.
        drop(cx.redact(&proposal.text));
        let images = if snapshot.images.is_empty() {
            let Some(rendered) =
                render_flow(&proposal.shown, config.provider, optical, snapshot.flow)?
            else {
                return Ok(Outcome::TooCostly);
            };
            cx.state
                .snapshots
                .insert(key, rendered.clone(), optical.cache_bytes);
            rendered.images
        } else {
            std::mem::take(&mut snapshot.images)
        };
        // Base64 to decoded bytes: within the model's bytes per image.
        if images
            .iter()
            .any(|i| i.data.len() / 4 * 3 > limits.max_image_bytes)
        {
            return Ok(Outcome::ImageCap);
        }
        let mut parts = Vec::with_capacity(images.len() + 1);
        parts.push(Part::text(proposal.line));
        for image in images {
            let mut part = Part::from(PartKind::Image(image));
            if config.provider == Provider::Openai {
                let mut inner = Map::new();
                inner.insert("detail".into(), Value::String(optical.detail.clone()));
                part.extra.insert("image_url".into(), Value::Object(inner));
            }
            parts.push(part);
        }
        if let Some(result) = conv.tool_result_mut(at) {
            result.parts = parts;
        }
        let rendering = &snapshot.rendering;
        let sizes: Vec<String> = rendering
            .image_sizes
            .iter()
            .map(|(w, h)| format!("{w}x{h}"))
            .collect();
        cx.record(
            at.message,
            "snapshot",
            before,
            after,
            Some(kept),
            format!(
                "text {before} tokens, image {} tokens ({} px font, {} columns, {}{}), ratio {:.2}",
                snapshot.image_tokens(),
                rendering.font_px,
                rendering.columns,
                sizes.join(" + "),
                if snapshot.flow == Flow::Reflow {
                    ", reflowed"
                } else {
                    ""
                },
                before as f64 / after.max(1) as f64,
            ),
        );
        Ok(Outcome::Rendered(count))
    }
}

/// Most images a request may carry: `optical.maxImages`, and the model's
/// documented limit (the capability table's) when lower.
fn image_cap(cx: &Cx<'_>) -> usize {
    let model = cx.model.limits.map_or(usize::MAX, |l| l.max_images);
    cx.config.optical.max_images.min(model)
}

fn count_images(conv: &Conversation) -> usize {
    fn count(parts: &[Part]) -> usize {
        parts
            .iter()
            .map(|p| match &p.kind {
                PartKind::Image(_) => 1,
                PartKind::ToolResult(r) => count(&r.parts),
                _ => 0,
            })
            .sum()
    }
    conv.system
        .iter()
        .chain(&conv.messages)
        .map(|m| count(&m.parts))
        .sum()
}
