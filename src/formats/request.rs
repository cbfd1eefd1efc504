//! The emit step: a compressed conversation to the request text of its
//! format, with what each format needs on the way out, in one place and this
//! order: the provider's image limits ([`super::images::enforce`]), snapshots
//! sent by URL ([`super::image_urls`]), prompt-cache breakpoints (Anthropic:
//! [`super::anthropic::mark_breakpoints`]), then the JSON text.

use std::collections::HashSet;

use super::image_urls::{ImageUrlReport, UrlImage};
use super::{FormatName, Repair};
use crate::error::{Error, ErrorCode, Result};
use crate::hash::key::KeyCache;
use crate::model::{Conversation, Role};

/// What the emit step needs besides the conversation and its format.
#[derive(Debug, Clone, Copy)]
pub struct EmitSettings<'a> {
    /// Most snapshot images the request may carry (`optical.maxImages`;
    /// the provider's own limit applies too).
    pub max_images: usize,
    /// The image limits of the model the request goes to (the capability
    /// table's, [`crate::capability`]); the format's apply too.
    pub model_limits: Option<super::images::ImageLimits>,
    /// URL template of snapshots sent by URL (`optical.imageUrl`; empty: inline).
    pub image_url: &'a str,
    /// Fingerprints of the images the client sent ([`super::images::fingerprints`]):
    /// never dropped, never sent by URL.
    pub client_images: &'a HashSet<u64>,
    /// Whether to place prompt-cache breakpoints (Anthropic; `cacheBreakpoint`,
    /// and only when a stage may have rewritten the request).
    pub cache_breakpoints: bool,
    /// Messages (after the system prompt) that stay byte-identical until the
    /// next demotion: where the first breakpoint goes.
    pub stable_messages: usize,
}

/// The request as emitted, and what the emit step did to it.
#[derive(Debug, Clone, Default)]
pub struct Emitted {
    /// The request, as JSON text (deterministic bytes).
    pub request: String,
    /// For each message of the conversation, its index in the request's own
    /// list of messages ([`super::emit_indexed`]).
    pub at: Vec<usize>,
    /// Snapshot images replaced to stay within the image limits.
    pub repairs: Vec<Repair>,
    /// Snapshots sent by URL, once each, with their bytes.
    pub images: Vec<UrlImage>,
    /// With an image URL template: what went by URL and what stayed inline.
    pub image_urls: Option<ImageUrlReport>,
    /// Index (after the system prompt) of the message whose last cacheable
    /// block got the stable-prefix breakpoint.
    pub cache_breakpoint: Option<usize>,
    /// Every message given a breakpoint, in the order they were placed.
    pub cache_breakpoints: Vec<usize>,
}

/// Emits `conv` as a request of `format` under `settings` (see the module
/// doc); `conv` is left as emitted.
pub fn emit_request(
    format: FormatName,
    conv: &mut Conversation,
    settings: &EmitSettings<'_>,
    keys: &mut KeyCache,
) -> Result<Emitted> {
    let repairs = super::images::enforce(
        conv,
        format,
        settings.model_limits,
        settings.max_images,
        settings.client_images,
    );
    let (images, image_urls) = if settings.image_url.is_empty() {
        (Vec::new(), None)
    } else {
        let (sent, urls) = super::image_urls::send_by_url(
            conv,
            format,
            settings.image_url,
            settings.client_images,
            keys,
        );
        (sent, Some(urls))
    };
    let (mut cache_breakpoint, mut cache_breakpoints) = (None, Vec::new());
    if format == FormatName::Anthropic && settings.cache_breakpoints {
        // The stable prefix (the next demotion reads it), the end of the
        // request (the next turn reads all of it) and the end of the leading
        // user messages (a compaction keeps them).
        let stable = settings.stable_messages;
        let lead = conv
            .messages
            .iter()
            .position(|m| m.role != Role::User)
            .unwrap_or(0);
        let marked = super::anthropic::mark_breakpoints(conv, &[stable, conv.messages.len(), lead]);
        if marked.first() == Some(&stable) {
            cache_breakpoint = Some(stable - 1);
        }
        cache_breakpoints = marked.iter().map(|end| end - 1).collect();
    }
    let (emitted, at) = super::emit_indexed(format, conv);
    let request = serde_json::to_string(&emitted)
        .map_err(|e| Error::new(ErrorCode::InvalidRequest, "request", e.to_string()))?;
    Ok(Emitted {
        request,
        at,
        repairs,
        images,
        image_urls,
        cache_breakpoint,
        cache_breakpoints,
    })
}
