//! Strict JSON parsing for requests: duplicate keys and nesting deeper than
//! `limits.maxDepth` are typed errors with the JSON path, never silently
//! resolved; numbers keep their exact text (beyond i64/f64 too).

use std::fmt;

use serde::de::{self, DeserializeSeed, MapAccess, SeqAccess, Visitor};
use serde_json::{Map, Value};

use crate::error::{Error, ErrorCode, Result};

const DEPTH_MARK: &str = "nesting deeper than limits.maxDepth";
const DUPLICATE_MARK: &str = "duplicate key";

/// Parses `text` as JSON, rejecting duplicate object keys and nesting deeper than `max_depth`.
pub fn parse_strict(text: &str, max_depth: usize) -> Result<Value> {
    let mut de = serde_json::Deserializer::from_str(text);
    let mut track = serde_path_to_error::Track::new();
    let seed = Strict {
        depth: 0,
        max_depth,
    };
    let value = seed
        .deserialize(serde_path_to_error::Deserializer::new(&mut de, &mut track))
        .and_then(|v| de.end().map(|()| v));
    value.map_err(|e| {
        let path = track.path().to_string();
        let message = e.to_string();
        let code = if message.contains(DEPTH_MARK) {
            ErrorCode::LimitExceeded
        } else if message.contains(DUPLICATE_MARK) {
            ErrorCode::InvalidRequest
        } else {
            ErrorCode::InvalidJson
        };
        let path = if path == "." || path.is_empty() {
            "request".to_string()
        } else {
            path
        };
        Error::new(code, path, message)
    })
}

#[derive(Clone, Copy)]
struct Strict {
    depth: usize,
    max_depth: usize,
}

impl Strict {
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

impl<'de> DeserializeSeed<'de> for Strict {
    type Value = Value;

    fn deserialize<D: de::Deserializer<'de>>(self, d: D) -> std::result::Result<Value, D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Strict {
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
        while let Some(v) = seq.next_element_seed(inner)? {
            out.push(v);
        }
        Ok(Value::Array(out))
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
            let value = map.next_value_seed(inner)?;
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
        assert_eq!(
            parse_strict(r#""\ud800""#, 64).unwrap_err().code,
            ErrorCode::InvalidJson
        );
    }
}
