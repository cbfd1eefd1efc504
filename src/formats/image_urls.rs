//! Snapshots sent by URL (`optical.imageUrl`): the formats whose provider
//! fetches an image from a URL get each optical snapshot as a URL image
//! part instead of inline base64, and the host serves the PNG.
//!
//! * OpenAI Chat Completions: `image_url.url` may be an `http(s)` URL.
//! * OpenAI Responses: `input_image.image_url` may be an `http(s)` URL.
//! * Anthropic Messages: an image block's `source` may be `{type: "url", url}`.
//! * Gemini: snapshots stay inline (`inlineData`). `generateContent` takes an
//!   image inline or as `fileData` naming a file uploaded to its Files API
//!   (Cloud Storage on Vertex AI): serving it from a URL would need an upload
//!   per image, not a URL the host already serves.
//!
//! The URL is the template with `{id}` replaced by the image's content id:
//! the 32 hex digits of the content key `image-<id>` of its base64 text (the
//! first 128 bits of its SHA-256, as spill keys are; [`crate::hash::key`]).
//! The same pixels give the same PNG bytes, so the same id and the same URL:
//! the request stays byte-identical from turn to turn and prompt caches hold.
//! A host that keeps the image as the blob `image-<id>` of a spill store gets
//! it checked against its key like any content-keyed blob.

use std::collections::HashSet;

use serde::Serialize;

use super::image_header::Base64Bytes;
use super::FormatName;
use crate::error::{invalid_option, Result};
use crate::hash::key::KeyCache;
use crate::model::{Conversation, PartKind};

/// The option this module reads, as errors name it.
const OPTION: &str = "optical.imageUrl";

/// Longest template accepted, in bytes.
pub const MAX_TEMPLATE_BYTES: usize = 2048;

/// The placeholder a template must hold.
pub const ID_PLACEHOLDER: &str = "{id}";

/// The kind of an image's content key (`image-<id>`).
pub const KEY_KIND: &str = "image";

/// Whether the provider of `format` fetches images by URL.
pub const fn accepts_urls(format: FormatName) -> bool {
    !matches!(format, FormatName::Gemini)
}

/// Why snapshots of `format` stay inline (`None` when it takes URLs).
pub const fn inline_reason(format: FormatName) -> Option<&'static str> {
    match format {
        FormatName::Gemini => Some(
            "gemini takes images inline or as fileData uploaded to its Files API, not by URL: snapshots stay inline",
        ),
        _ => None,
    }
}

/// A snapshot sent by URL: what the host must serve at `url`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct UrlImage {
    /// Content id (32 hex digits): the hash part of the content key `image-<id>` of `data`.
    pub id: String,
    /// The URL the request carries (the template with `{id}` replaced).
    pub url: String,
    /// MIME type (`image/png`).
    /// TypeScript: `'image/png'`.
    pub media_type: String,
    /// Width in pixels.
    pub width: u32,
    /// Height in pixels.
    pub height: u32,
    /// Decoded size in bytes (what the host sends).
    pub bytes: usize,
    /// The image, base64.
    pub data: String,
}

/// What [`send_by_url`] did, for the report.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ImageUrlReport {
    /// Snapshot image parts the request carries as URLs.
    pub urls: usize,
    /// Distinct images behind them (the result's `images`).
    pub images: usize,
    /// Decoded bytes of those images: what the host serves instead of sending them inline.
    pub bytes: usize,
    /// Snapshot image parts kept inline (the format does not take URLs).
    pub inline: usize,
    /// Why they were kept inline.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

/// Checks an `optical.imageUrl` template: empty (off), or an absolute
/// `https` URL (`http` only for `localhost`, `127.0.0.1`, `[::1]`) without
/// credentials, at most [`MAX_TEMPLATE_BYTES`], holding `{id}` after the host
/// and before any fragment, and only characters a URL may hold unescaped.
pub fn check_template(template: &str) -> Result<()> {
    if template.is_empty() {
        return Ok(());
    }
    if template.len() > MAX_TEMPLATE_BYTES {
        return invalid_option(OPTION, "must be at most 2048 bytes");
    }
    let Some((scheme, rest)) = template.split_once("://") else {
        return invalid_option(
            OPTION,
            "must be an absolute https URL with {id}, e.g. https://host/image/{id}.png",
        );
    };
    let https = scheme.eq_ignore_ascii_case("https");
    if !https && !scheme.eq_ignore_ascii_case("http") {
        return invalid_option(OPTION, "must be an https URL (http only for localhost)");
    }
    let without_braces = template.replace(ID_PLACEHOLDER, "");
    let bad = |b: u8| {
        !(0x21..=0x7e).contains(&b)
            || matches!(
                b,
                b'"' | b'<' | b'>' | b'\\' | b'^' | b'`' | b'|' | b'{' | b'}'
            )
    };
    if without_braces.bytes().any(bad) {
        return invalid_option(
            OPTION,
            "may only hold URL characters (no spaces, quotes, <, >, \\, ^, `, |; braces only in {id})",
        );
    }
    let authority = rest.split(['/', '?', '#']).next().unwrap_or("");
    if authority.contains(ID_PLACEHOLDER) {
        return invalid_option(OPTION, "{id} must come after the host");
    }
    if authority.contains('@') {
        return invalid_option(OPTION, "must not carry credentials (user@host)");
    }
    let host = host_of(authority);
    let host_ok = match host.strip_prefix('[') {
        Some(v6) => v6.strip_suffix(']').is_some_and(|h| {
            !h.is_empty()
                && h.bytes()
                    .all(|b| b.is_ascii_hexdigit() || b == b':' || b == b'.')
        }),
        None => {
            !host.is_empty()
                && host
                    .bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'.')
        }
    };
    if !host_ok {
        return invalid_option(
            OPTION,
            "must name a host (name, IPv4 or [IPv6], optional :port)",
        );
    }
    if !https && !is_loopback(host) {
        return invalid_option(OPTION, "must be an https URL (http only for localhost)");
    }
    // A fragment never reaches the server: `{id}` must come before any `#`.
    let sent = rest.split('#').next().unwrap_or("");
    if !sent.contains(ID_PLACEHOLDER) {
        return invalid_option(
            OPTION,
            "must contain {id} before any # (replaced by each image's content id)",
        );
    }
    Ok(())
}

/// The host of an authority (`host[:port]`, `[v6][:port]`).
fn host_of(authority: &str) -> &str {
    if authority.starts_with('[') {
        return match authority.find(']') {
            Some(end) => authority.get(..=end).unwrap_or(authority),
            None => authority,
        };
    }
    match authority.rsplit_once(':') {
        Some((host, port)) if port.bytes().all(|b| b.is_ascii_digit()) => host,
        _ => authority,
    }
}

fn is_loopback(host: &str) -> bool {
    host.eq_ignore_ascii_case("localhost") || host == "127.0.0.1" || host == "[::1]"
}

/// The URL of the image whose content id is `id`.
pub fn expand(template: &str, id: &str) -> String {
    template.replace(ID_PLACEHOLDER, id)
}

/// Turns every snapshot image of `conv` (an image inside a tool result that
/// the client did not send: `client`, from [`super::images::fingerprints`])
/// into a URL image part when `format` takes URLs, and returns the distinct
/// images with their bytes, in the order they first appear, and the counts
/// for the report. Otherwise the snapshots stay inline and the report says
/// why. Tokens do not change: the model sees the same pixels.
pub fn send_by_url(
    conv: &mut Conversation,
    format: FormatName,
    template: &str,
    client: &HashSet<u64>,
    keys: &mut KeyCache,
) -> (Vec<UrlImage>, ImageUrlReport) {
    let mut images: Vec<UrlImage> = Vec::new();
    let mut seen: HashSet<String> = HashSet::new();
    let mut report = ImageUrlReport::default();
    let by_url = accepts_urls(format);
    for msg in &mut conv.messages {
        for part in &mut msg.parts {
            let PartKind::ToolResult(result) = &mut part.kind else {
                continue;
            };
            for inner in &mut result.parts {
                let PartKind::Image(image) = &mut inner.kind else {
                    continue;
                };
                if image.url.is_some() || client.contains(&super::images::fingerprint(image)) {
                    continue;
                }
                if !by_url {
                    report.inline += 1;
                    continue;
                }
                let key = keys.key(KEY_KIND, &image.data);
                let id = key
                    .strip_prefix(KEY_KIND)
                    .and_then(|k| k.strip_prefix('-'))
                    .unwrap_or(&key)
                    .to_string();
                let url = expand(template, &id);
                let data = std::mem::take(&mut image.data);
                image.url = Some(url.clone());
                report.urls += 1;
                if seen.insert(id.clone()) {
                    let bytes = Base64Bytes::new(&data).map_or(data.len() / 4 * 3, |b| b.len());
                    report.images += 1;
                    report.bytes += bytes;
                    images.push(UrlImage {
                        id,
                        url,
                        media_type: image.media_type.clone(),
                        width: image.width,
                        height: image.height,
                        bytes,
                        data,
                    });
                }
            }
        }
    }
    if report.inline > 0 {
        report.note = inline_reason(format).map(String::from);
    }
    (images, report)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn templates_are_checked() {
        for ok in [
            "",
            "https://proxy.example.com/image/{id}.png",
            "https://proxy.example.com:8443/t/{id}?x=1",
            "http://localhost:8787/image/{id}",
            "http://127.0.0.1/{id}",
            "http://[::1]:9/{id}",
            "HTTPS://h/{id}/{id}",
        ] {
            assert!(check_template(ok).is_ok(), "{ok}");
        }
        for (bad, why) in [
            ("proxy/{id}", "absolute"),
            ("ftp://h/{id}", "https"),
            ("http://example.com/{id}", "https"),
            ("http://localhost.evil.com/{id}", "https"),
            ("https://h/image.png", "contain {id}"),
            ("https://h/image.png#{id}", "contain {id}"),
            ("https://{id}.h/x", "after the host"),
            ("https://user:pw@h/{id}", "credentials"),
            ("https://h/ {id}", "URL characters"),
            ("https://h/{ID}", "URL characters"),
            ("https://h/{id}\"", "URL characters"),
            ("https:///{id}", "host"),
            ("https://h:80:80/{id}", "host"),
            ("https://[::1/{id}", "host"),
        ] {
            let err = check_template(bad).expect_err(bad);
            assert_eq!(err.path, "optical.imageUrl", "{bad}");
            assert!(err.message.contains(why), "{bad}: {}", err.message);
        }
        let long = format!("https://h/{}{{id}}", "a".repeat(MAX_TEMPLATE_BYTES));
        assert!(check_template(&long).is_err());
    }
}
