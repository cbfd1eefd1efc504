//! serde's messages about a mistyped option in plain words: `invalid value:
//! integer `-5`, expected u64` reads `must be a non-negative integer, got -5`,
//! so no Rust type name reaches the caller.

use std::sync::OnceLock;

use regex_lite::Regex;
use serde_json::Value;

/// `invalid length <n>, expected <want>` (serde's error for an array of the
/// wrong length).
fn wrong_length() -> Option<&'static Regex> {
    static RE: OnceLock<Option<Regex>> = OnceLock::new();
    RE.get_or_init(|| Regex::new(r"^invalid length (\d+), expected (.+)$").ok())
        .as_ref()
}

/// `invalid type|value: <got>, expected <want>` (serde's two type errors).
fn mistyped() -> Option<&'static Regex> {
    static RE: OnceLock<Option<Regex>> = OnceLock::new();
    RE.get_or_init(|| Regex::new(r"^invalid (?:type|value): (.+?), expected (.+)$").ok())
        .as_ref()
}

/// What serde expected, in words; `None` leaves serde's own text.
fn wanted(expected: &str) -> Option<&'static str> {
    Some(match expected {
        "u8" | "u16" | "u32" | "u64" | "u128" | "usize" => "a non-negative integer",
        "i8" | "i16" | "i32" | "i64" | "i128" | "isize" => "an integer",
        "f32" | "f64" => "a number",
        "a boolean" => "true or false",
        // `optical.enabled` (`OpticalSwitch`).
        "true, false or \"auto\"" => "true, false or \"auto\"",
        "a string" | "a borrowed string" => "a string",
        "a sequence" => "an array",
        "a map" => "an object",
        _ if expected.starts_with("struct ") => "an object",
        _ => return None,
    })
}

/// What the caller gave, as JSON would write it: `-5`, `1.5`, `"three"`, `true`,
/// `null`, `an array`, `an object`.
fn given(unexpected: &str) -> String {
    // serde names the width it read a large integer as: `integer `2^64` as u128`.
    let unexpected = unexpected
        .strip_suffix(" as u128")
        .or_else(|| unexpected.strip_suffix(" as i128"))
        .unwrap_or(unexpected);
    let quoted = |prefix: &str| {
        unexpected
            .strip_prefix(prefix)
            .and_then(|rest| rest.strip_prefix('`'))
            .and_then(|rest| rest.strip_suffix('`'))
            .map(str::to_owned)
    };
    if let Some(v) = quoted("integer ")
        .or_else(|| quoted("floating point "))
        .or_else(|| quoted("boolean "))
    {
        return v;
    }
    match unexpected {
        "sequence" => "an array".to_owned(),
        "map" => "an object".to_owned(),
        "unit value" | "null" => "null".to_owned(),
        _ => unexpected
            .strip_prefix("string ")
            .map_or_else(|| unexpected.to_owned(), |s| format!("the string {s}")),
    }
}

/// `message` with serde's type and length errors rewritten as `must be <want>,
/// got <value>`; any other message unchanged. `value` is what the caller gave
/// at the error's path, when known: a number serde read as its exact-text
/// form (`2e3`, which it calls a map) is shown as the number.
pub(super) fn plain(message: &str, value: Option<&Value>) -> String {
    if let Some(caps) = wrong_length().and_then(|re| re.captures(message)) {
        if let (Some(n), Some(expected)) = (caps.get(1), caps.get(2)) {
            if let Some(want) = wanted(expected.as_str()) {
                return format!("must be {want}, got an array of {}", n.as_str());
            }
        }
    }
    let Some(caps) = mistyped().and_then(|re| re.captures(message)) else {
        return message.to_owned();
    };
    let (Some(got), Some(expected)) = (caps.get(1), caps.get(2)) else {
        return message.to_owned();
    };
    let got = match value {
        Some(number @ Value::Number(_)) => number.to_string(),
        _ => given(got.as_str()),
    };
    match wanted(expected.as_str()) {
        Some(want) => format!("must be {want}, got {got}"),
        None => message.to_owned(),
    }
}

/// The value at `path` (`a.b[2].c`, as `json::Path` writes it) under `root`.
pub(super) fn at_path<'v>(root: &'v Value, path: &str) -> Option<&'v Value> {
    if path == "." {
        return Some(root);
    }
    let mut at = root;
    for member in path.split('.') {
        let (key, indices) = member
            .split_once('[')
            .map_or((member, ""), |(k, rest)| (k, rest));
        if !key.is_empty() {
            at = at.get(key)?;
        }
        for index in indices.split('[').filter(|i| !i.is_empty()) {
            at = at.get(index.strip_suffix(']')?.parse::<usize>().ok()?)?;
        }
    }
    Some(at)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn lengths_and_wide_integers_read_without_rust_types() {
        assert_eq!(
            plain(
                "invalid length 2, expected struct Prices with 3 elements",
                None
            ),
            "must be an object, got an array of 2"
        );
        assert_eq!(
            plain(
                "invalid value: integer `18446744073709551616` as u128, expected u64",
                None
            ),
            "must be a non-negative integer, got 18446744073709551616"
        );
        assert_eq!(plain("unknown field `x`", None), "unknown field `x`");
    }

    #[test]
    fn paths_find_the_value_given() {
        let root = json!({"a": {"b": [1, [2, 3]]}, "c": 4});
        assert_eq!(at_path(&root, "c"), Some(&json!(4)));
        assert_eq!(at_path(&root, "a.b[1][0]"), Some(&json!(2)));
        assert_eq!(at_path(&root, "."), Some(&root));
        assert_eq!(at_path(&root, "a.x"), None);
        assert_eq!(at_path(&root, "a.b[9]"), None);
    }
}
