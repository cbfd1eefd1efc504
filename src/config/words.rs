//! serde's messages about a mistyped option in plain words: `invalid value:
//! integer `-5`, expected u64` reads `must be a non-negative integer, got -5`,
//! so no Rust type name reaches the caller.

use std::sync::OnceLock;

use regex_lite::Regex;

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

/// `message` with serde's type error rewritten as `must be <want>, got <value>`;
/// any other message unchanged.
pub(super) fn plain(message: &str) -> String {
    let Some(caps) = mistyped().and_then(|re| re.captures(message)) else {
        return message.to_owned();
    };
    let (Some(got), Some(expected)) = (caps.get(1), caps.get(2)) else {
        return message.to_owned();
    };
    match wanted(expected.as_str()) {
        Some(want) => format!("must be {want}, got {}", given(got.as_str())),
        None => message.to_owned(),
    }
}
