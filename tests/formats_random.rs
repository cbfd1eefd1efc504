//! Random JSON built from every format's vocabulary: whatever parses emits
//! back equal, and validation, repair and conversion never panic; a converted
//! request parses in its target format and validates when the source did.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)]

use proptest::prelude::*;
use serde_json::{Map, Value};
use tracelite::formats::{self, FormatName};

const KEYS: &[&str] = &[
    "role",
    "content",
    "type",
    "text",
    "messages",
    "input",
    "contents",
    "parts",
    "tool_calls",
    "id",
    "call_id",
    "name",
    "arguments",
    "output",
    "tool_use_id",
    "functionCall",
    "functionResponse",
    "function_call",
    "function_response",
    "args",
    "response",
    "inlineData",
    "inline_data",
    "mime_type",
    "mimeType",
    "data",
    "image_url",
    "url",
    "source",
    "media_type",
    "is_error",
    "system",
    "instructions",
    "systemInstruction",
    "function",
    "cache_control",
    "thought",
    "tool_call_id",
    "previous_response_id",
    "x",
];

const WORDS: &[&str] = &[
    "user",
    "assistant",
    "model",
    "tool",
    "system",
    "developer",
    "function",
    "text",
    "message",
    "function_call",
    "function_call_output",
    "tool_use",
    "tool_result",
    "image",
    "input_text",
    "output_text",
    "input_image",
    "image_url",
    "base64",
    "a",
    "b",
    "data:image/png;base64,AA",
    "{}",
    "{\"k\":1}",
    "tlgem_0_0",
    "",
];

fn leaf() -> impl Strategy<Value = Value> {
    prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        (0i64..3).prop_map(Value::from),
        prop::sample::select(WORDS).prop_map(|w| Value::String(w.to_string())),
    ]
}

fn json() -> impl Strategy<Value = Value> {
    leaf().prop_recursive(5, 64, 6, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
            prop::collection::vec((prop::sample::select(KEYS), inner), 0..5).prop_map(|kv| {
                let mut m = Map::new();
                for (k, v) in kv {
                    m.insert(k.to_string(), v);
                }
                Value::Object(m)
            }),
        ]
    })
}

/// A request-shaped value: an object holding one of the conversation members.
fn request() -> impl Strategy<Value = Value> {
    (
        prop::sample::select(&["messages", "input", "contents"][..]),
        prop::collection::vec(json(), 0..5),
        prop::option::of((
            prop::sample::select(&["system", "instructions", "systemInstruction"][..]),
            json(),
        )),
    )
        .prop_map(|(key, items, system)| {
            let mut m = Map::new();
            if let Some((k, v)) = system {
                m.insert(k.to_string(), v);
            }
            m.insert(key.to_string(), Value::Array(items));
            Value::Object(m)
        })
}

/// Valid-looking items of each format; `$I` is an id, `$N` a tool name, `$W` a word.
const TEMPLATES: [(&str, &[&str]); 4] = [
    (
        "messages",
        &[
            r#"{"role":"user","content":"$W"}"#,
            r#"{"role":"system","content":"$W"}"#,
            r#"{"role":"assistant","content":"$W"}"#,
            r#"{"role":"assistant","content":null,"tool_calls":[{"id":"$I","type":"function","function":{"name":"$N","arguments":"{}"}}]}"#,
            r#"{"role":"assistant","content":"$W","tool_calls":[{"id":"$I","type":"function","function":{"name":"$N","arguments":"x"}},{"id":"$I","type":"function","function":{"name":"$N","arguments":"{}"}}]}"#,
            r#"{"role":"tool","tool_call_id":"$I","content":"$W"}"#,
            r#"{"role":"user","content":[{"type":"text","text":"$W"},{"type":"image_url","image_url":{"url":"data:image/png;base64,AA"}}]}"#,
        ],
    ),
    (
        "input",
        &[
            r#"{"role":"user","content":"$W"}"#,
            r#"{"role":"developer","content":"$W"}"#,
            r#"{"type":"message","role":"assistant","content":[{"type":"output_text","text":"$W"}]}"#,
            r#"{"type":"function_call","call_id":"$I","name":"$N","arguments":"{}"}"#,
            r#"{"type":"function_call_output","call_id":"$I","output":"$W"}"#,
            r#"{"type":"function_call_output","call_id":"$I","output":[{"type":"input_text","text":"$W"}]}"#,
            r#"{"type":"reasoning","id":"rs","summary":[]}"#,
            r#"{"role":"user","content":[{"type":"input_text","text":"$W"},{"type":"input_image","image_url":"data:image/png;base64,AA"}]}"#,
        ],
    ),
    (
        "messages",
        &[
            r#"{"role":"user","content":"$W"}"#,
            r#"{"role":"assistant","content":"$W"}"#,
            r#"{"role":"assistant","content":[{"type":"thinking","thinking":"t","signature":"s"},{"type":"tool_use","id":"$I","name":"$N","input":{}}]}"#,
            r#"{"role":"user","content":[{"type":"tool_result","tool_use_id":"$I","content":"$W"}]}"#,
            r#"{"role":"user","content":[{"type":"tool_result","tool_use_id":"$I","is_error":true},{"type":"tool_result","tool_use_id":"$I","content":[{"type":"text","text":"$W"}]},{"type":"text","text":"$W"}]}"#,
            r#"{"role":"user","content":[{"type":"image","source":{"type":"base64","media_type":"image/png","data":"AA"}}]}"#,
        ],
    ),
    (
        "contents",
        &[
            r#"{"role":"user","parts":[{"text":"$W"}]}"#,
            r#"{"role":"model","parts":[{"text":"$W"}]}"#,
            r#"{"role":"model","parts":[{"functionCall":{"name":"$N","args":{}}},{"functionCall":{"id":"$I","name":"$N"}}]}"#,
            r#"{"role":"user","parts":[{"functionResponse":{"name":"$N","response":{"output":"$W"}}}]}"#,
            r#"{"role":"user","parts":[{"function_response":{"id":"$I","name":"$N","response":{"error":"$W","x":1}}}]}"#,
            r#"{"parts":[{"inline_data":{"mime_type":"image/png","data":"AA"}}]}"#,
        ],
    ),
];

fn fill(template: &str, picks: &[u8]) -> Value {
    let mut out = String::new();
    let mut k = 0;
    let mut rest = template;
    while let Some(i) = rest.find('$') {
        out.push_str(&rest[..i]);
        let pick = picks.get(k).copied().unwrap_or(0);
        k += 1;
        out.push_str(match &rest[i + 1..i + 2] {
            "I" => ["a", "b", "c"][pick as usize % 3],
            "N" => ["f", "g"][pick as usize % 2],
            _ => ["x", "", "y\\nz"][pick as usize % 3],
        });
        rest = &rest[i + 2..];
    }
    out.push_str(rest);
    serde_json::from_str(&out).unwrap()
}

/// A request of one format from templates, with random members added anywhere.
fn templated() -> impl Strategy<Value = Value> {
    (
        0usize..4,
        prop::collection::vec(
            (
                any::<prop::sample::Index>(),
                prop::collection::vec(any::<u8>(), 6),
            ),
            0..8,
        ),
        prop::collection::vec(
            (
                any::<prop::sample::Index>(),
                prop::sample::select(KEYS),
                leaf(),
            ),
            0..3,
        ),
        any::<bool>(),
    )
        .prop_map(|(f, items, noise, system)| {
            let (key, templates) = TEMPLATES[f];
            let list: Vec<Value> = items
                .iter()
                .map(|(i, picks)| fill(templates[i.index(templates.len())], picks))
                .collect();
            let mut m = Map::new();
            m.insert("model".into(), Value::String("m".into()));
            if system {
                let (k, v) = match f {
                    1 => ("instructions", Value::String("sys".into())),
                    3 => (
                        "systemInstruction",
                        serde_json::json!({"parts": [{"text": "sys"}]}),
                    ),
                    _ => ("system", Value::String("sys".into())),
                };
                if f != 0 {
                    m.insert(k.into(), v);
                }
            }
            m.insert(key.into(), Value::Array(list));
            let mut value = Value::Object(m);
            for (at, k, v) in noise {
                insert_at(&mut value, at, k, v);
            }
            value
        })
}

fn count_objects(v: &Value) -> usize {
    match v {
        Value::Object(o) => 1 + o.values().map(count_objects).sum::<usize>(),
        Value::Array(a) => a.iter().map(count_objects).sum(),
        _ => 0,
    }
}

fn insert_at(v: &mut Value, at: prop::sample::Index, key: &str, value: Value) {
    fn walk(v: &mut Value, pick: usize, n: &mut usize, key: &str, value: &Value) -> bool {
        match v {
            Value::Object(o) => {
                if *n == pick {
                    o.insert(key.to_string(), value.clone());
                    return true;
                }
                *n += 1;
                o.values_mut().any(|x| walk(x, pick, n, key, value))
            }
            Value::Array(a) => a.iter_mut().any(|x| walk(x, pick, n, key, value)),
            _ => false,
        }
    }
    let pick = at.index(count_objects(v).max(1));
    walk(v, pick, &mut 0, key, &value);
}

fn check(value: &Value) -> Result<(), TestCaseError> {
    for from in FormatName::ALL {
        let Ok(conv) = formats::parse(from, value) else {
            continue;
        };
        prop_assert_eq!(&formats::emit(from, &conv), value, "{}", from.as_str());
        let valid = formats::validate(&conv, from).is_ok();
        let mut repaired = conv.clone();
        if formats::repair(&mut repaired, from).is_ok() {
            let out = formats::emit(from, &repaired);
            let again = formats::parse(from, &out);
            prop_assert!(
                again.is_ok(),
                "{}: {:?}\n{}\n{}",
                from.as_str(),
                again.err(),
                value,
                out
            );
            let again = again.unwrap();
            prop_assert!(
                formats::validate(&again, from).is_ok(),
                "{}: {}",
                from.as_str(),
                out
            );
        }
        for to in FormatName::ALL {
            let (converted, _) = formats::convert_conversation(conv.clone(), from, to);
            let json = formats::emit(to, &converted);
            let back = formats::parse(to, &json);
            prop_assert!(
                back.is_ok(),
                "{} -> {}: {:?}\n{}",
                from.as_str(),
                to.as_str(),
                back.err(),
                json
            );
            if valid {
                let checked = formats::validate(&back.unwrap(), to);
                prop_assert!(
                    checked.is_ok(),
                    "{} -> {}: {:?}\n{}\n{}",
                    from.as_str(),
                    to.as_str(),
                    checked.err(),
                    value,
                    json
                );
            }
        }
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 3000, ..ProptestConfig::default() })]

    #[test]
    fn random_json_never_breaks(value in request()) {
        check(&value)?;
    }

    #[test]
    fn templated_requests_never_break(value in templated()) {
        check(&value)?;
    }
}
