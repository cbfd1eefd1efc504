//! Strict JSON parsing for requests: duplicate keys and nesting deeper than
//! `limits.maxDepth` are typed errors with the JSON path, never silently
//! resolved; numbers keep their exact text (beyond i64/f64 too).
//!
//! A lone UTF-16 surrogate (`\ud800` without its pair; JS strings can hold
//! them) cannot be text: inside a tool output (the `content` of a `tool`
//! message or `tool_result` block, the `output` of a `function_call_output`,
//! the `response` of a Gemini `functionResponse`) it becomes U+FFFD, as a
//! terminal would show it; anywhere else it is an `INVALID_REQUEST` naming
//! the field.

use std::fmt;

use serde::de::{self, DeserializeSeed, MapAccess, SeqAccess, Visitor};
use serde_json::{Map, Value};

use crate::error::{Error, ErrorCode, Result};

mod path;

pub use path::{from_value, Path};

const DEPTH_MARK: &str = "nesting deeper than limits.maxDepth";
const DUPLICATE_MARK: &str = "duplicate key";

/// Parses `text` as JSON, rejecting duplicate object keys and nesting deeper than `max_depth`.
pub fn parse_strict(text: &str, max_depth: usize) -> Result<Value> {
    let lone = lone_surrogates(text);
    if lone.is_empty() {
        return parse_exact(text, max_depth);
    }
    // Each lone escape becomes a marker character absent from the text (same
    // length), so the parsed strings show where they were.
    let Some(marker) = (0xFDD0..=0xFDEF)
        .filter_map(char::from_u32)
        .find(|&c| !text.contains(c) && !contains_escape(text, c))
    else {
        return Err(Error::new(
            ErrorCode::InvalidRequest,
            "request",
            "the request contains lone UTF-16 surrogates",
        ));
    };
    let mut fixed = String::with_capacity(text.len());
    let mut at = 0;
    for start in lone {
        fixed.push_str(text.get(at..start).unwrap_or(""));
        fixed.push_str(&format!("\\u{:04x}", u32::from(marker)));
        at = start + 6;
    }
    fixed.push_str(text.get(at..).unwrap_or(""));
    let mut value = parse_exact(&fixed, max_depth)?;
    mend(&mut value, marker, &mut String::new(), Place::Other)?;
    Ok(value)
}

/// Where a value sits, for [`mend`].
#[derive(Clone, Copy, PartialEq, Eq)]
enum Place {
    /// Inside a tool's output text: lone surrogates become U+FFFD.
    ToolOutput,
    /// The object under a Gemini `functionResponse` key.
    FunctionResponse,
    Other,
}

/// A lone surrogate at `path` (the whole request when empty).
fn surrogate_error(path: &str, message: &str) -> Error {
    let at = if path.is_empty() { "request" } else { path };
    Error::new(ErrorCode::InvalidRequest, at, message)
}

/// Replaces the marker by U+FFFD in tool outputs; elsewhere it is an error at its path.
fn mend(value: &mut Value, marker: char, path: &mut String, place: Place) -> Result<()> {
    match value {
        Value::String(s) if s.contains(marker) => {
            if place != Place::ToolOutput {
                return Err(surrogate_error(
                    path,
                    "contains a lone UTF-16 surrogate (only tool outputs may, and get U+FFFD)",
                ));
            }
            *s = s.replace(marker, "\u{FFFD}");
        }
        Value::Array(items) => {
            for (i, item) in items.iter_mut().enumerate() {
                let len = path.len();
                path.push_str(&format!("[{i}]"));
                mend(item, marker, path, place)?;
                path.truncate(len);
            }
        }
        Value::Object(map) => {
            let field = |map: &Map<String, Value>, k: &str| {
                map.get(k).and_then(Value::as_str).map(str::to_string)
            };
            let role = field(map, "role");
            let kind = field(map, "type");
            for (key, item) in map.iter_mut() {
                if key.contains(marker) {
                    return Err(surrogate_error(
                        path,
                        "an object key contains a lone UTF-16 surrogate",
                    ));
                }
                let output = place == Place::ToolOutput
                    || (key == "content"
                        && (role.as_deref() == Some("tool")
                            || kind.as_deref() == Some("tool_result")))
                    || (key == "output" && kind.as_deref() == Some("function_call_output"))
                    || (key == "response" && place == Place::FunctionResponse);
                let inner = if output {
                    Place::ToolOutput
                } else if key == "functionResponse" {
                    Place::FunctionResponse
                } else {
                    Place::Other
                };
                let len = path.len();
                if !path.is_empty() {
                    path.push('.');
                }
                path.push_str(key);
                mend(item, marker, path, inner)?;
                path.truncate(len);
            }
        }
        _ => {}
    }
    Ok(())
}

/// Whether `text` holds `\uXXXX` for `c` (any case).
fn contains_escape(text: &str, c: char) -> bool {
    let escape = format!("u{:04x}", u32::from(c));
    text.to_ascii_lowercase().contains(&escape)
}

/// Byte offsets of the `\uXXXX` escapes in JSON strings of `text` that are
/// lone surrogates (a high one not followed by a low one, or a low one alone).
fn lone_surrogates(text: &str) -> Vec<usize> {
    let bytes = text.as_bytes();
    let unit = |at: usize| -> Option<u16> {
        let hex = bytes.get(at + 2..at + 6)?;
        if bytes.get(at..at + 2) != Some(b"\\u") {
            return None;
        }
        u16::from_str_radix(std::str::from_utf8(hex).ok()?, 16).ok()
    };
    let mut out = Vec::new();
    let mut in_string = false;
    let mut i = 0;
    while let Some(&b) = bytes.get(i) {
        match b {
            b'"' => in_string = !in_string,
            b'\\' if in_string => {
                if let Some(u) = unit(i) {
                    let high = (0xD800..0xDC00).contains(&u);
                    let low = (0xDC00..0xE000).contains(&u);
                    if high && unit(i + 6).is_some_and(|n| (0xDC00..0xE000).contains(&n)) {
                        i += 12;
                        continue;
                    }
                    if high || low {
                        out.push(i);
                    }
                    i += 6;
                    continue;
                }
                i += 2;
                continue;
            }
            _ => {}
        }
        i += 1;
    }
    out
}

fn parse_exact(text: &str, max_depth: usize) -> Result<Value> {
    let mut de = serde_json::Deserializer::from_str(text);
    let path = Path::default();
    let seed = Strict {
        depth: 0,
        max_depth,
        path: &path,
    };
    let value = seed.deserialize(&mut de).and_then(|v| de.end().map(|()| v));
    value.map_err(|e| {
        let path = path.to_string();
        let message = e.to_string();
        let code = if message.contains(DEPTH_MARK) {
            ErrorCode::LimitExceeded
        } else if message.contains(DUPLICATE_MARK) {
            ErrorCode::InvalidRequest
        } else {
            ErrorCode::InvalidJson
        };
        let at = if path == "." || path.is_empty() {
            String::new()
        } else {
            format!(" (in {path})")
        };
        if code == ErrorCode::InvalidJson {
            // Syntax errors carry their line and column; the path is where parsing stopped.
            return Error::new(code, "request", format!("{message}{at}"));
        }
        let path = if at.is_empty() {
            "request".to_string()
        } else {
            path
        };
        Error::new(code, path, message)
    })
}

/// A JSON value read strictly, `path` kept up to where it is.
#[derive(Clone, Copy)]
struct Strict<'p> {
    depth: usize,
    max_depth: usize,
    path: &'p Path,
}

impl Strict<'_> {
    fn nested<E: de::Error>(self) -> std::result::Result<Self, E> {
        if self.depth >= self.max_depth {
            return Err(E::custom(format!("{DEPTH_MARK} ({})", self.max_depth)));
        }
        Ok(Self {
            depth: self.depth + 1,
            ..self
        })
    }
}

impl<'de> DeserializeSeed<'de> for Strict<'_> {
    type Value = Value;

    fn deserialize<D: de::Deserializer<'de>>(self, d: D) -> std::result::Result<Value, D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Strict<'_> {
    type Value = Value;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any JSON value")
    }

    fn visit_bool<E>(self, v: bool) -> std::result::Result<Value, E> {
        Ok(Value::Bool(v))
    }

    fn visit_i64<E>(self, v: i64) -> std::result::Result<Value, E> {
        Ok(Value::from(v))
    }

    fn visit_u64<E>(self, v: u64) -> std::result::Result<Value, E> {
        Ok(Value::from(v))
    }

    fn visit_f64<E>(self, v: f64) -> std::result::Result<Value, E> {
        Ok(serde_json::Number::from_f64(v).map_or(Value::Null, Value::Number))
    }

    fn visit_str<E>(self, v: &str) -> std::result::Result<Value, E> {
        Ok(Value::String(v.to_owned()))
    }

    fn visit_string<E>(self, v: String) -> std::result::Result<Value, E> {
        Ok(Value::String(v))
    }

    fn visit_unit<E>(self) -> std::result::Result<Value, E> {
        Ok(Value::Null)
    }

    fn visit_none<E>(self) -> std::result::Result<Value, E> {
        Ok(Value::Null)
    }

    fn visit_some<D: de::Deserializer<'de>>(self, d: D) -> std::result::Result<Value, D::Error> {
        self.deserialize(d)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> std::result::Result<Value, A::Error> {
        let inner = self.nested()?;
        let mut out = Vec::new();
        loop {
            self.path.push_index(out.len());
            let Some(v) = seq.next_element_seed(inner)? else {
                self.path.pop();
                return Ok(Value::Array(out));
            };
            self.path.pop();
            out.push(v);
        }
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> std::result::Result<Value, A::Error> {
        let inner = self.nested()?;
        let mut out = Map::new();
        while let Some(key) = map.next_key::<String>()? {
            // serde_json's arbitrary-precision numbers arrive as a one-entry map.
            if key == "$serde_json::private::Number" && out.is_empty() {
                let text: String = map.next_value()?;
                let number: serde_json::Number = text.parse().map_err(de::Error::custom)?;
                return Ok(Value::Number(number));
            }
            if out.contains_key(&key) {
                return Err(de::Error::custom(format!("{DUPLICATE_MARK} {key:?}")));
            }
            self.path.push_key(key);
            let value = map.next_value_seed(inner)?;
            let key = self.path.pop().unwrap_or_default();
            out.insert(key, value);
        }
        Ok(Value::Object(out))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn duplicate_keys_are_errors_with_their_path() {
        let e = parse_strict(r#"{"messages":[{"role":"user","role":"x"}]}"#, 64).unwrap_err();
        assert_eq!(e.code, ErrorCode::InvalidRequest);
        assert!(e.path.starts_with("messages[0]"), "{e}");
    }

    #[test]
    fn nesting_beyond_the_limit_is_a_limit_error() {
        let deep = format!("{}{}", "[".repeat(50), "]".repeat(50));
        assert!(parse_strict(&deep, 64).is_ok());
        let e = parse_strict(&deep, 10).unwrap_err();
        assert_eq!(e.code, ErrorCode::LimitExceeded);
        let very = format!("{{\"a\":{}{}}}", "[".repeat(10_000), "]".repeat(10_000));
        assert_eq!(
            parse_strict(&very, 100).unwrap_err().code,
            ErrorCode::LimitExceeded
        );
    }

    #[test]
    fn numbers_beyond_i64_and_f64_keep_their_text() {
        let text =
            r#"{"big":123456789012345678901234567890,"tiny":1e-400,"huge":1e400,"neg":-0.0}"#;
        let v = parse_strict(text, 64).unwrap();
        // Exponents are normalised (`1e400` → `1e+400`); digits are never rounded.
        assert_eq!(
            serde_json::to_string(&v).unwrap(),
            text.replace("1e400", "1e+400")
        );
    }

    #[test]
    fn malformed_json_is_invalid_json() {
        assert_eq!(
            parse_strict("{", 64).unwrap_err().code,
            ErrorCode::InvalidJson
        );
        assert_eq!(
            parse_strict("{} x", 64).unwrap_err().code,
            ErrorCode::InvalidJson
        );
    }

    #[test]
    fn lone_surrogates_name_their_field_and_tool_outputs_get_u_fffd() {
        let e = parse_strict(r#""\ud800""#, 64).unwrap_err();
        assert_eq!(
            (e.code, e.path.as_str()),
            (ErrorCode::InvalidRequest, "request")
        );
        let text = r#"{"messages":[{"role":"user","content":"ok"},{"role":"user","content":[{"type":"text","text":"a\udc00"}]}]}"#;
        let e = parse_strict(text, 64).unwrap_err();
        assert_eq!(e.path, "messages[1].content[0].text");
        // In tool outputs of every format: replaced; pairs and other escapes untouched.
        let text = r#"{"messages":[{"role":"tool","tool_call_id":"c","content":"x\ud800y \ud83d\ude00 \\ud800 \"\udfff"},
            {"role":"user","content":[{"type":"tool_result","tool_use_id":"t","content":[{"type":"text","text":"\udbff"}]}]}],
            "input":[{"type":"function_call_output","call_id":"c","output":"\ud800"}],
            "contents":[{"parts":[{"functionResponse":{"name":"f","response":{"out":"\udc00"}}}]}]}"#;
        let v = parse_strict(text, 64).unwrap();
        assert_eq!(
            v["messages"][0]["content"],
            "x\u{FFFD}y \u{1F600} \\ud800 \"\u{FFFD}"
        );
        assert_eq!(
            v["messages"][1]["content"][0]["content"][0]["text"],
            "\u{FFFD}"
        );
        assert_eq!(v["input"][0]["output"], "\u{FFFD}");
        assert_eq!(
            v["contents"][0]["parts"][0]["functionResponse"]["response"]["out"],
            "\u{FFFD}"
        );
        // The tool message's id is not output.
        let text = r#"{"messages":[{"role":"tool","tool_call_id":"c\ud800","content":"x"}]}"#;
        assert_eq!(
            parse_strict(text, 64).unwrap_err().path,
            "messages[0].tool_call_id"
        );
    }
}
