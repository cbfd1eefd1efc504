//! Per-request image limits of each provider format, the guard that keeps
//! a request inside them before it is emitted, and the pixel limit on the
//! images a client sends ([`check_pixels`], `limits.maxImagePixels`).
//!
//! The figures are the model capability table's ([`crate::capability`]).

use std::collections::HashSet;

use serde_json::Value;

use super::image_header::{dimensions, Base64Bytes};
use super::validate::Repair;
use super::{Field, FormatName};
use crate::error::{Error, ErrorCode, Result};
use crate::model::{Conversation, Image, Part, PartKind};

pub use crate::capability::ImageLimits;

/// The documented limits of `format`'s API (the table's,
/// [`crate::capability`]).
pub const fn image_limits(format: FormatName) -> ImageLimits {
    match format {
        FormatName::OpenaiChat | FormatName::OpenaiResponses => crate::capability::OPENAI,
        FormatName::Anthropic => crate::capability::ANTHROPIC,
        FormatName::Gemini => crate::capability::GEMINI,
    }
}

/// Decoded size of a base64 payload.
fn decoded_bytes(image: &Image) -> usize {
    image.data.len() / 4 * 3
}

pub(super) fn fingerprint(image: &Image) -> u64 {
    // The fast text hash (8 bytes a step; deterministic across runs and
    // hosts): every image of every turn's history is fingerprinted.
    let hash = |s: &str| crate::hash::text_hash(s.as_bytes());
    hash(&image.data)
        ^ hash(&image.media_type).rotate_left(21)
        ^ image
            .url
            .as_deref()
            .map_or(0x5bd1_e995, hash)
            .rotate_left(42)
}

/// Fingerprints of every image in `conv` (take them before the stages run, so
/// [`enforce`] knows which images the client sent).
pub fn fingerprints(conv: &Conversation) -> HashSet<u64> {
    fn walk(part: &Part, out: &mut HashSet<u64>) {
        match &part.kind {
            PartKind::Image(image) => {
                out.insert(fingerprint(image));
            }
            PartKind::ToolResult(r) => r.parts.iter().for_each(|p| walk(p, out)),
            _ => {}
        }
    }
    let mut out = HashSet::new();
    for msg in conv.system.iter().chain(&conv.messages) {
        msg.parts.iter().for_each(|p| walk(p, &mut out));
    }
    out
}

/// Keeps the images inside tool results (the optical stage's snapshots) within
/// `format`'s limits (tightened by the `model`'s, from the capability
/// table) and `max_images`: walking from the oldest, a snapshot that
/// would exceed a limit is replaced by a text note (the observation's text is
/// still in the spill store through the result's pointer). Images the client
/// sent itself (`client`, from [`fingerprints`]) are counted but never touched.
/// Returns one [`Repair`] (code `LIMIT_EXCEEDED`) per replaced image.
pub fn enforce(
    conv: &mut Conversation,
    format: FormatName,
    model: Option<ImageLimits>,
    max_images: usize,
    client: &HashSet<u64>,
) -> Vec<Repair> {
    let limits = model.map_or(image_limits(format), |m| image_limits(format).tighter(m));
    let cap = limits.max_images.min(max_images);
    let mut count = 0usize;
    let mut total = 0usize;
    // Client images count first: they cannot be dropped.
    for msg in &conv.messages {
        for part in &msg.parts {
            let inner: &[Part] = match &part.kind {
                PartKind::ToolResult(r) => &r.parts,
                _ => std::slice::from_ref(part),
            };
            for p in inner {
                if let PartKind::Image(image) = &p.kind {
                    if !matches!(part.kind, PartKind::ToolResult(_))
                        || client.contains(&fingerprint(image))
                    {
                        count += 1;
                        total += decoded_bytes(image);
                    }
                }
            }
        }
    }
    let snapshots: usize = conv
        .messages
        .iter()
        .flat_map(|m| m.parts.iter())
        .filter_map(|p| match &p.kind {
            PartKind::ToolResult(r) => Some(
                r.parts
                    .iter()
                    .filter(|x| matches!(x.kind, PartKind::Image(_)))
                    .count(),
            ),
            _ => None,
        })
        .sum();
    let edge_limit = if count + snapshots > limits.many_images {
        limits.max_edge_px_many
    } else {
        limits.max_edge_px
    };
    let mut repairs = Vec::new();
    for m in 0..conv.messages.len() {
        let path = super::message_path(format, conv, m);
        let Some(msg) = conv.messages.get_mut(m) else {
            continue;
        };
        for part in &mut msg.parts {
            let PartKind::ToolResult(result) = &mut part.kind else {
                continue;
            };
            for inner in &mut result.parts {
                let PartKind::Image(image) = &inner.kind else {
                    continue;
                };
                if client.contains(&fingerprint(image)) {
                    continue;
                }
                let bytes = decoded_bytes(image);
                let reason = if count + 1 > cap {
                    Some(format!("more than {cap} images per request"))
                } else if bytes > limits.max_image_bytes {
                    Some(format!("image over {} bytes", limits.max_image_bytes))
                } else if total + bytes > limits.max_total_bytes {
                    Some(format!(
                        "more than {} image bytes per request",
                        limits.max_total_bytes
                    ))
                } else if image.width.max(image.height) > edge_limit {
                    Some(format!("image edge over {edge_limit} px"))
                } else {
                    None
                };
                match reason {
                    Some(reason) => {
                        repairs.push(Repair {
                            code: crate::error::ErrorCode::LimitExceeded.as_str().into(),
                            path: path.clone(),
                            action: format!("replaced a snapshot image by a note: {reason}"),
                        });
                        *inner = Part::text(format!(
                            "[snapshot image omitted: {reason} for {}]",
                            format.as_str()
                        ));
                    }
                    None => {
                        count += 1;
                        total += bytes;
                    }
                }
            }
        }
    }
    repairs
}

/// Where an image part sits in a conversation.
#[derive(Debug, Clone, Copy)]
enum Place {
    /// `conv.system[message].parts[part]`.
    System { message: usize, part: usize },
    /// `conv.messages[message].parts[part]`, or part `inner` of that tool result.
    Message {
        message: usize,
        part: usize,
        inner: Option<usize>,
    },
}

/// JSON path of the data field of the image at `place` in a request of
/// `format` parsed into `conv`.
fn data_path(format: FormatName, conv: &Conversation, place: Place, image: &Part) -> String {
    let at = match (format, place) {
        (FormatName::OpenaiChat, Place::System { message, part }) => {
            format!("messages[{message}].content[{part}]")
        }
        (FormatName::OpenaiResponses, Place::System { message, part }) => {
            let instructions = conv.extra.get("instructions") == Some(&Value::Bool(true));
            let k = message.saturating_sub(usize::from(instructions));
            format!("input[{k}].content[{part}]")
        }
        (FormatName::Anthropic, Place::System { part, .. }) => format!("system[{part}]"),
        (FormatName::Gemini, Place::System { part, .. }) => {
            let key = if conv.extra.contains_key("system_instruction") {
                "system_instruction"
            } else {
                "systemInstruction"
            };
            format!("{key}.parts[{part}]")
        }
        (
            _,
            Place::Message {
                message,
                part,
                inner,
            },
        ) => {
            let at = super::part_path(format, conv, message, part, Field::Part);
            match (format, inner) {
                (_, None) => at,
                (FormatName::OpenaiChat, Some(j)) => format!("{at}.content[{j}]"),
                (FormatName::OpenaiResponses, Some(j)) => format!("{at}.output[{j}]"),
                (FormatName::Anthropic, Some(j)) => format!("{at}.content[{j}]"),
                (FormatName::Gemini, Some(j)) => format!("{at}.parts[{j}]"),
            }
        }
    };
    let field = match format {
        FormatName::OpenaiChat => ".image_url.url",
        FormatName::OpenaiResponses => ".image_url",
        FormatName::Anthropic => ".source.data",
        FormatName::Gemini if image.extra.contains_key("inline_data") => ".inline_data.data",
        FormatName::Gemini => ".inlineData.data",
    };
    format!("{at}{field}")
}

/// Enforces `limits.maxImagePixels` on every inline image of `conv` (system,
/// messages, and images inside tool results): the size is read from the
/// image header in the base64 payload ([`super::image_header`]); an image over
/// `max_pixels` is a `LIMIT_EXCEEDED` error whose path is the JSON path of the
/// image's data field. Images given by URL, and images whose size cannot be
/// read from the payload (unknown format, truncated header), pass: the
/// provider decides about them. Invalid base64 never gets here: the format
/// parsers reject it with `INVALID_REQUEST` naming the field.
pub fn check_pixels(conv: &Conversation, format: FormatName, max_pixels: u64) -> Result<()> {
    let check = |part: &Part, place: Place| -> Result<()> {
        let PartKind::Image(image) = &part.kind else {
            return Ok(());
        };
        if image.url.is_some() {
            return Ok(());
        }
        let Ok(bytes) = Base64Bytes::new(&image.data) else {
            // Rejected by the parsers; an image built in Rust with bad data
            // has no known size.
            return Ok(());
        };
        let Some((w, h)) = dimensions(&bytes) else {
            return Ok(());
        };
        let pixels = u64::from(w) * u64::from(h);
        if pixels <= max_pixels {
            return Ok(());
        }
        let path = data_path(format, conv, place, part);
        Err(Error::new(
            ErrorCode::LimitExceeded,
            path.clone(),
            format!(
                "the image at {path} is {w}×{h} = {pixels} pixels, over limits.maxImagePixels ({max_pixels})"
            ),
        ))
    };
    for (m, msg) in conv.system.iter().enumerate() {
        for (p, part) in msg.parts.iter().enumerate() {
            check(
                part,
                Place::System {
                    message: m,
                    part: p,
                },
            )?;
        }
    }
    for (m, msg) in conv.messages.iter().enumerate() {
        for (p, part) in msg.parts.iter().enumerate() {
            check(
                part,
                Place::Message {
                    message: m,
                    part: p,
                    inner: None,
                },
            )?;
            if let PartKind::ToolResult(result) = &part.kind {
                for (j, inner) in result.parts.iter().enumerate() {
                    check(
                        inner,
                        Place::Message {
                            message: m,
                            part: p,
                            inner: Some(j),
                        },
                    )?;
                }
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{Extra, Layout, Message, Role, ToolResult};

    fn snapshot(id: &str) -> Message {
        Message {
            role: Role::Tool,
            parts: vec![Part::from(PartKind::ToolResult(ToolResult {
                call_id: id.into(),
                parts: vec![
                    Part::text("see spill://s/k"),
                    Part::from(PartKind::Image(Image {
                        media_type: "image/png".into(),
                        data: "QUJD".into(),
                        url: None,
                        width: 10,
                        height: 10,
                    })),
                ],
                is_error: false,
            }))],
            layout: Layout::Parts,
            extra: Extra::new(),
        }
    }

    #[test]
    fn snapshots_over_the_cap_become_notes() {
        let mut conv = Conversation::default();
        for i in 0..5 {
            conv.messages.push(snapshot(&format!("c{i}")));
        }
        // A client screenshot inside the first result is never replaced but counts.
        let client = fingerprints(&conv);
        assert_eq!(client.len(), 1);
        let mut conv2 = conv.clone();
        assert!(enforce(&mut conv2, FormatName::Anthropic, None, 0, &client).is_empty());
        let repairs = enforce(&mut conv, FormatName::Anthropic, None, 3, &HashSet::new());
        assert_eq!(repairs.len(), 2);
        assert_eq!(repairs[0].path, "messages[3]");
        let kept = conv
            .messages
            .iter()
            .filter(|m| match &m.parts[0].kind {
                PartKind::ToolResult(r) => matches!(r.parts[1].kind, PartKind::Image(_)),
                _ => false,
            })
            .count();
        assert_eq!(kept, 3);
    }
}
