//! The caches a host keeps between isolates (Workers KV, a Durable Object):
//! rendered snapshots and token counts, written as text segments that a host
//! stores like any blob ([`export`]) and hands to a fresh [`HostState`]
//! ([`import`]), so that a warm request on a new isolate never re-renders
//! nor re-counts what an earlier one did.
//!
//! A cache only saves work: a request compressed with imported entries is
//! byte-identical to one compressed cold, and an output never depends on what
//! a segment holds. A snapshot's pixels and a text's count cannot be checked
//! for less than making them again, so a segment is authenticated instead:
//! [`export`] seals it with an HMAC-SHA256 (the `hmac` and `sha2` crates)
//! under a key only the host holds ([`Seal`]), over the format, the session
//! it was written for and every byte of its entries; [`import`] refuses with
//! `INVALID_CACHE` naming `cache.mac`, before it reads any entry, a segment
//! whose MAC does not verify under its key for the importing session (altered,
//! truncated, forged, or written for another session or under another key),
//! so nothing of it is used. There is no unauthenticated mode: without a key
//! nothing is exported or imported (`INVALID_OPTION` naming `key`). A genuine
//! segment is still checked for consistency (an image is a PNG of the size
//! its layout says), ignored when another TraceLite version wrote it (its
//! renders may differ), and its counts kept only for the counter that made
//! them.
//!
//! Pipeline layer (4): it reads and fills the [`HostState`] the pipeline owns,
//! stage by stage (optical snapshots, token counts), so it sits beside the
//! pipeline, below the hosts (`wasm`, the controller) that call it.

use std::fmt::Write;

use serde_json::{Map, Value};

use hmac::{Hmac, Mac};
use sha2::Sha256;

use crate::config::Config;
use crate::error::{Error, ErrorCode, Result};
use crate::formats::image_header::{read_header, Base64Bytes, ImageFormat};
use crate::model::Image;
use crate::optical::budget::Rendering;
use crate::optical::raster::CellMetrics;
use crate::optical::{Flow, Snapshot};
use crate::pipeline::HostState;
use crate::tokens::CachedCount;

/// What the `format` member of a segment says.
pub const FORMAT: &str = "tracelite-cache/3";

/// How a segment starts: its format, then its MAC (64 lowercase hex digits,
/// then `",`), then the entries the MAC covers (from `"version"` on).
const HEAD: &str = "{\"format\":\"tracelite-cache/3\",\"mac\":\"";

/// Hex digits of a segment's MAC (HMAC-SHA256).
const MAC_HEX: usize = 64;

/// Fewest bytes of a key that seals segments.
pub const MIN_KEY_BYTES: usize = 16;

/// What seals a segment to its host and session: the host's secret key
/// (at least [`MIN_KEY_BYTES`] bytes; the proxy's `secret`) and the session
/// the segment is written for and may be imported into.
#[derive(Debug, Clone, Copy)]
pub struct Seal<'a> {
    /// The host's secret key.
    pub key: &'a [u8],
    /// The session the segment belongs to.
    pub session: &'a str,
}

impl Seal<'_> {
    /// `INVALID_OPTION` naming `key` when the key is too short.
    fn check(&self) -> Result<()> {
        if self.key.len() < MIN_KEY_BYTES {
            return Err(Error::new(
                ErrorCode::InvalidOption,
                "key",
                format!(
                    "cache segments are sealed with a secret key of at least {MIN_KEY_BYTES} bytes (e.g. the proxy's secret); none, or a shorter one, was given"
                ),
            ));
        }
        Ok(())
    }

    /// The HMAC-SHA256 of the format, the session and `body`, each after its
    /// length (so no two inputs share one).
    fn mac(&self, body: &str) -> Result<Hmac<Sha256>> {
        // HMAC takes a key of any length: this never fails.
        let mut mac = <Hmac<Sha256> as Mac>::new_from_slice(self.key)
            .map_err(|e| Error::new(ErrorCode::InvalidOption, "key", e.to_string()))?;
        for part in [FORMAT, self.session, body] {
            mac.update(&(part.len() as u64).to_le_bytes());
            mac.update(part.as_bytes());
        }
        Ok(mac)
    }

    /// Checks the MAC at the head of `segment`: `INVALID_CACHE` naming
    /// `cache.mac` (or `cache`, `cache.format` for what is not a segment of
    /// this format) unless it verifies.
    fn verify(&self, segment: &str) -> Result<()> {
        let Some(rest) = segment.strip_prefix(HEAD) else {
            return Err(match serde_json::from_str::<Value>(segment) {
                Err(e) => invalid("cache", format!("not JSON: {e}")),
                Ok(v) if !v.is_object() => invalid("cache", "must be an object"),
                Ok(v) if v.get("format").and_then(Value::as_str) != Some(FORMAT) => {
                    invalid("cache.format", format!("must be {FORMAT:?}"))
                }
                Ok(_) => invalid(
                    "cache.mac",
                    "must follow the format, as 64 lowercase hex digits (a segment export wrote)",
                ),
            });
        };
        let (hex, body) = (rest.get(..MAC_HEX), rest.get(MAC_HEX..));
        let tag = hex.and_then(|h| {
            let valid = h
                .bytes()
                .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b));
            valid.then(|| {
                (0..MAC_HEX / 2)
                    .filter_map(|i| u8::from_str_radix(h.get(2 * i..2 * i + 2)?, 16).ok())
                    .collect::<Vec<u8>>()
            })
        });
        let (Some(tag), Some(body)) = (tag, body.and_then(|b| b.strip_prefix("\","))) else {
            return Err(invalid(
                "cache.mac",
                "must be 64 lowercase hex digits followed by the entries",
            ));
        };
        self.mac(body)?.verify_slice(&tag).map_err(|_| {
            invalid(
                "cache.mac",
                "does not verify: the segment was altered or truncated, or written for another session or under another key",
            )
        })
    }
}

/// The TraceLite version that writes (and reads) segments.
const VERSION: &str = env!("CARGO_PKG_VERSION");

/// What an [`import`] added.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize)]
pub struct Imported {
    /// Snapshots added to the render cache.
    pub snapshots: usize,
    /// Token counts added.
    pub counts: usize,
    /// The segment was written by another TraceLite version: nothing was added.
    pub stale: bool,
}

/// The entries `state` made since the last export (on the first export, or
/// with `all`, every entry it holds) as a segment sealed with `seal` (only a
/// host holding its key can import it, and only into its session); `None`
/// when there are none, or, with `rendered_only`, when none of them is a
/// rendered snapshot (then they wait for the next export: counts alone are
/// cheap to make again). `INVALID_OPTION` naming `key` for a key shorter
/// than [`MIN_KEY_BYTES`] (then nothing is taken).
pub fn export(
    state: &mut HostState,
    all: bool,
    rendered_only: bool,
    seal: Seal<'_>,
) -> Result<Option<String>> {
    seal.check()?;
    if rendered_only && !state.optical.snapshots.has_fresh_render(all) {
        return Ok(None);
    }
    let counts = state.counts.take_fresh(all);
    let snapshots = state.optical.snapshots.take_fresh(all);
    if snapshots.is_empty() && counts.is_empty() {
        return Ok(None);
    }
    // Written by hand, not through `serde_json::Value`: a segment is mostly
    // base64 and numbers, and this is far less code in the wasm.
    let mut out = String::with_capacity(
        128 + counts.len() * 40
            + snapshots
                .iter()
                .map(|(_, s)| 256 + s.images.iter().map(|i| i.data.len() + 3).sum::<usize>())
                .sum::<usize>(),
    );
    out.push_str("\"version\":\"");
    out.push_str(VERSION);
    out.push_str("\",\"counter\":");
    out.push_str(&Value::from(state.counts.counter()).to_string());
    out.push_str(",\"snapshots\":[");
    for (i, (key, s)) in snapshots.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        write_snapshot(&mut out, *key, s);
    }
    out.push_str("],\"counts\":[");
    for (i, (hash, len, n)) in counts.iter().enumerate() {
        let comma = if i > 0 { "," } else { "" };
        let _ = write!(out, "{comma}[\"{hash:016x}\",{len},{n}]");
    }
    out.push_str("]}");
    let tag = seal.mac(&out)?.finalize().into_bytes();
    let mut segment = String::with_capacity(HEAD.len() + MAC_HEX + 2 + out.len());
    segment.push_str(HEAD);
    for b in tag {
        let _ = write!(segment, "{b:02x}");
    }
    segment.push_str("\",");
    segment.push_str(&out);
    Ok(Some(segment))
}

/// `LIMIT_EXCEEDED` for a segment of more than `limits.maxRequestBytes`
/// bytes; `at_least` may be a lower bound of its size (a JS string's UTF-16
/// length, checked before the string is copied into wasm memory).
pub fn check_size(at_least: usize, config: &Config) -> Result<()> {
    let limit = config.limits.max_request_bytes;
    if at_least > limit {
        return Err(Error::new(
            ErrorCode::LimitExceeded,
            "limits.maxRequestBytes",
            format!("cache segment is {at_least} bytes or more, limit is {limit}"),
        ));
    }
    Ok(())
}

/// Adds the entries of `segment` (what [`export`] wrote) to `state`, the
/// snapshots within `optical.cacheBytes` of `config`, when it verifies under
/// `key` for the session of `config`. `LIMIT_EXCEEDED` for a segment over
/// `limits.maxRequestBytes`; `INVALID_OPTION` naming `key` for a key shorter
/// than [`MIN_KEY_BYTES`]; `INVALID_CACHE` naming `cache.mac` when its MAC
/// does not verify, or naming the offending member when it is malformed or
/// inconsistent. Then nothing is added.
pub fn import(
    state: &mut HostState,
    segment: &str,
    config: &Config,
    key: &[u8],
) -> Result<Imported> {
    check_size(segment.len(), config)?;
    let seal = Seal {
        key,
        session: &config.session,
    };
    seal.check()?;
    seal.verify(segment)?;
    let cache_bytes = config.optical.cache_bytes;
    let value: Value =
        serde_json::from_str(segment).map_err(|e| invalid("cache", format!("not JSON: {e}")))?;
    let root = object(&value, "cache")?;
    if root.get("format").and_then(Value::as_str) != Some(FORMAT) {
        return Err(invalid("cache.format", format!("must be {FORMAT:?}")));
    }
    let version = text(root, "version", "cache")?;
    if version != VERSION {
        return Ok(Imported {
            stale: true,
            ..Imported::default()
        });
    }
    let counter = text(root, "counter", "cache")?;
    let mut snapshots = Vec::new();
    for (i, item) in array(root, "snapshots", "cache")?.iter().enumerate() {
        snapshots.push(read_snapshot(item, &format!("cache.snapshots[{i}]"))?);
    }
    let mut counts = Vec::new();
    for (i, item) in array(root, "counts", "cache")?.iter().enumerate() {
        counts.push(read_count(item, i)?);
    }
    let mut imported = Imported::default();
    for (key, snapshot) in snapshots {
        if state.optical.snapshots.import(key, snapshot, cache_bytes) {
            imported.snapshots += 1;
        }
    }
    // Counts of another counter would misprice: they are left out.
    if state.counts.is_empty() {
        state.counts.use_counter(counter);
    }
    if state.counts.counter() == counter {
        imported.counts = state.counts.import(&counts);
    }
    Ok(imported)
}

fn write_snapshot(out: &mut String, key: u128, s: &Snapshot) {
    let r = &s.rendering;
    let flow = match s.flow {
        Flow::Lines => "lines",
        Flow::Reflow => "reflow",
    };
    let c = r.cell;
    let _ = write!(
        out,
        "{{\"key\":\"{key:032x}\",\"flow\":\"{flow}\",\"fontPx\":{},\"cell\":[{},{},{}],\"columns\":{},\"rows\":{},\"imageRows\":[",
        r.font_px, c.width, c.height, c.baseline, r.columns, r.rows
    );
    for (i, n) in r.image_rows.iter().enumerate() {
        let comma = if i > 0 { "," } else { "" };
        let _ = write!(out, "{comma}{n}");
    }
    out.push_str("],\"imageSizes\":[");
    for (i, (w, h)) in r.image_sizes.iter().enumerate() {
        let comma = if i > 0 { "," } else { "" };
        let _ = write!(out, "{comma}[{w},{h}]");
    }
    let _ = write!(
        out,
        "],\"tokens\":{},\"lines\":{},\"ink\":{},\"missing\":{},\"images\":[",
        r.tokens, s.lines, s.ink, s.missing
    );
    // Base64 needs no escaping.
    for (i, image) in s.images.iter().enumerate() {
        out.push_str(if i > 0 { ",\"" } else { "\"" });
        out.push_str(&image.data);
        out.push('"');
    }
    out.push_str("]}");
}

fn read_snapshot(value: &Value, at: &str) -> Result<(u128, Snapshot)> {
    let o = object(value, at)?;
    let key = o
        .get("key")
        .and_then(Value::as_str)
        .filter(|s| s.len() == 32)
        .and_then(|s| u128::from_str_radix(s, 16).ok())
        .ok_or_else(|| invalid(format!("{at}.key"), "must be 32 hex digits"))?;
    let flow = match o.get("flow").and_then(Value::as_str) {
        Some("lines") => Flow::Lines,
        Some("reflow") => Flow::Reflow,
        _ => {
            return Err(invalid(
                format!("{at}.flow"),
                "must be \"lines\" or \"reflow\"",
            ))
        }
    };
    let cell = array(o, "cell", at)?;
    let [width, height, baseline] = match cell.as_slice() {
        [w, h, b] => [w, h, b].map(Value::as_u64),
        _ => [None; 3],
    };
    let (Some(width), Some(height), Some(baseline)) = (width, height, baseline) else {
        return Err(invalid(
            format!("{at}.cell"),
            "must be [width, height, baseline]",
        ));
    };
    let mut image_rows = Vec::new();
    for (i, v) in array(o, "imageRows", at)?.iter().enumerate() {
        image_rows.push(count(v, || format!("{at}.imageRows[{i}]"))?);
    }
    let mut image_sizes = Vec::new();
    for (i, v) in array(o, "imageSizes", at)?.iter().enumerate() {
        let pair = v.as_array().map(Vec::as_slice);
        let Some([Some(w), Some(h)]) = pair.map(|p| match p {
            [w, h] => [small(w), small(h)],
            _ => [None, None],
        }) else {
            return Err(invalid(
                format!("{at}.imageSizes[{i}]"),
                "must be [width, height]",
            ));
        };
        image_sizes.push((w, h));
    }
    if image_rows.len() != image_sizes.len() {
        return Err(invalid(
            format!("{at}.imageRows"),
            "must have one entry per image size",
        ));
    }
    let mut images = Vec::new();
    for (i, v) in array(o, "images", at)?.iter().enumerate() {
        let path = format!("{at}.images[{i}]");
        let Some(data) = v.as_str() else {
            return Err(invalid(path, "must be a base64 PNG"));
        };
        let png = Base64Bytes::new(data).map_err(|p| invalid(path.clone(), p.describe()))?;
        let expected = image_sizes.get(i).copied();
        match (read_header(&png), expected) {
            (Some((ImageFormat::Png, w, h)), Some(size)) if (w, h) == size => {}
            _ => return Err(invalid(path, "must be a PNG of the size imageSizes gives")),
        }
        images.push(Image {
            media_type: "image/png".into(),
            data: data.to_string(),
            url: None,
            width: expected.map_or(0, |s| s.0),
            height: expected.map_or(0, |s| s.1),
        });
    }
    if !images.is_empty() && images.len() != image_sizes.len() {
        return Err(invalid(
            format!("{at}.images"),
            "must be empty or one per image size",
        ));
    }
    let field = |name: &str| {
        count(o.get(name).unwrap_or(&Value::Null), || {
            format!("{at}.{name}")
        })
    };
    let snapshot = Snapshot {
        flow,
        rendering: Rendering {
            font_px: small(o.get("fontPx").unwrap_or(&Value::Null))
                .filter(|&px| px > 0)
                .ok_or_else(|| invalid(format!("{at}.fontPx"), "must be a positive integer"))?,
            cell: CellMetrics {
                width: narrow(width, || format!("{at}.cell"))?,
                height: narrow(height, || format!("{at}.cell"))?,
                baseline: narrow(baseline, || format!("{at}.cell"))?,
            },
            columns: field("columns")?,
            rows: field("rows")?,
            image_rows,
            image_sizes,
            tokens: field("tokens")? as u64,
        },
        lines: field("lines")?,
        ink: field("ink")?,
        missing: field("missing")?,
        images,
    };
    Ok((key, snapshot))
}

/// Count `i` of a segment: `[hash, length, tokens]` (paths built only on error).
fn read_count(value: &Value, i: usize) -> Result<CachedCount> {
    let Some([hash, len, n]) = value.as_array().map(Vec::as_slice).and_then(|a| match a {
        [h, l, n] => Some([h, l, n]),
        _ => None,
    }) else {
        return Err(invalid(
            format!("cache.counts[{i}]"),
            "must be [hash, length, tokens]",
        ));
    };
    Ok((
        parse_hex(Some(hash), || format!("cache.counts[{i}][0]"))?,
        count(len, || format!("cache.counts[{i}][1]"))?,
        count(n, || format!("cache.counts[{i}][2]"))? as u64,
    ))
}

fn invalid(path: impl Into<String>, msg: impl Into<String>) -> Error {
    Error::new(ErrorCode::InvalidCache, path, msg)
}

fn parse_hex(v: Option<&Value>, at: impl FnOnce() -> String) -> Result<u64> {
    v.and_then(Value::as_str)
        .filter(|s| s.len() == 16)
        .and_then(|s| u64::from_str_radix(s, 16).ok())
        .ok_or_else(|| invalid(at(), "must be 16 hex digits"))
}

fn object<'v>(v: &'v Value, at: &str) -> Result<&'v Map<String, Value>> {
    v.as_object()
        .ok_or_else(|| invalid(at, "must be an object"))
}

fn array<'v>(o: &'v Map<String, Value>, name: &str, at: &str) -> Result<&'v Vec<Value>> {
    o.get(name)
        .and_then(Value::as_array)
        .ok_or_else(|| invalid(format!("{at}.{name}"), "must be an array"))
}

fn text<'v>(o: &'v Map<String, Value>, name: &str, at: &str) -> Result<&'v str> {
    o.get(name)
        .and_then(Value::as_str)
        .ok_or_else(|| invalid(format!("{at}.{name}"), "must be a string"))
}

/// A non-negative integer that fits a `usize` on every target (2^32 − 1);
/// the path `at` is built only on error.
fn count(v: &Value, at: impl FnOnce() -> String) -> Result<usize> {
    v.as_u64()
        .filter(|&n| n <= u64::from(u32::MAX))
        .map(|n| n as usize)
        .ok_or_else(|| invalid(at(), "must be an integer from 0 to 4294967295"))
}

fn small(v: &Value) -> Option<u32> {
    v.as_u64().and_then(|n| u32::try_from(n).ok())
}

fn narrow(v: u64, at: impl FnOnce() -> String) -> Result<u32> {
    u32::try_from(v).map_err(|_| invalid(at(), "must be an integer from 0 to 4294967295"))
}
