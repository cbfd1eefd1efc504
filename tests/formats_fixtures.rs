//! Fixtures written from each provider's documented request examples, covering
//! every part kind: they are detected, parse → emit to the same JSON, validate,
//! and convert to every other format with the lost members listed.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)]

use serde_json::Value;
use tracelite::formats::{self, FormatName};
use tracelite::model::{Conversation, Part, PartKind};

fn fixture(format: FormatName) -> Value {
    let path = format!(
        "{}/tests/fixtures/formats/{}.json",
        env!("CARGO_MANIFEST_DIR"),
        format.as_str()
    );
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

/// Counts of (text, image, tool call, tool result, other) parts, results' content included.
fn kinds(conv: &Conversation) -> [usize; 5] {
    fn add(part: &Part, n: &mut [usize; 5]) {
        match &part.kind {
            PartKind::Text { .. } => n[0] += 1,
            PartKind::Image(_) => n[1] += 1,
            PartKind::ToolCall(_) => n[2] += 1,
            PartKind::ToolResult(r) => {
                n[3] += 1;
                r.parts.iter().for_each(|p| add(p, n));
            }
            PartKind::Other { .. } => n[4] += 1,
        }
    }
    let mut n = [0; 5];
    for m in conv.system.iter().chain(&conv.messages) {
        m.parts.iter().for_each(|p| add(p, &mut n));
    }
    n
}

#[test]
fn fixtures_round_trip_and_cover_every_part_kind() {
    let expected = [
        (FormatName::OpenaiChat, [4, 1, 1, 1, 4]),
        (FormatName::OpenaiResponses, [7, 2, 2, 2, 5]),
        (FormatName::Anthropic, [9, 2, 3, 3, 4]),
        (FormatName::Gemini, [6, 2, 3, 3, 4]),
    ];
    for (format, counts) in expected {
        let request = fixture(format);
        assert_eq!(formats::detect(&request).unwrap(), format);
        let conv = formats::parse(format, &request).unwrap();
        assert_eq!(kinds(&conv), counts, "{}", format.as_str());
        formats::validate(&conv, format).unwrap();
        assert_eq!(formats::emit(format, &conv), request, "{}", format.as_str());
        // Emitting is deterministic byte for byte.
        assert_eq!(
            formats::emit(format, &conv).to_string(),
            formats::emit(format, &formats::parse(format, &request).unwrap()).to_string()
        );
    }
}

#[test]
fn explicit_format_overrides_detection() {
    // A text-only Anthropic request reads as OpenAI Chat unless told otherwise.
    let request = serde_json::json!({"model": "claude", "max_tokens": 10,
        "messages": [{"role": "user", "content": "hi"}]});
    assert_eq!(formats::detect(&request).unwrap(), FormatName::OpenaiChat);
    let conv = formats::parse(FormatName::Anthropic, &request).unwrap();
    assert_eq!(formats::emit(FormatName::Anthropic, &conv), request);
    let e = formats::detect(&serde_json::json!({"prompt": "x"})).unwrap_err();
    assert_eq!(e.code.as_str(), "UNKNOWN_FORMAT");
    assert_eq!(FormatName::from_name("gemini").unwrap(), FormatName::Gemini);
    assert!(FormatName::from_name("cohere").is_err());
}

fn lossy_paths(from: FormatName, to: FormatName) -> Vec<String> {
    let out = formats::convert(&fixture(from), None, to).unwrap();
    let conv = formats::parse(to, &out.request).unwrap();
    formats::validate(&conv, to).unwrap();
    assert_eq!(formats::detect(&out.request).unwrap(), to);
    out.lossy.into_iter().map(|l| l.path).collect()
}

#[test]
fn conversions_keep_portable_content_and_list_the_rest() {
    for from in FormatName::ALL {
        for to in FormatName::ALL {
            let source = formats::parse(from, &fixture(from)).unwrap();
            let out = formats::convert(&fixture(from), Some(from), to).unwrap();
            let conv = formats::parse(to, &out.request).unwrap();
            formats::validate(&conv, to).unwrap();
            let ctx = format!("{} -> {}", from.as_str(), to.as_str());
            // Every call keeps its name, arguments and result text.
            let steps = |c: &Conversation| -> Vec<(String, Value, Option<String>)> {
                c.steps()
                    .iter()
                    .map(|s| {
                        (
                            s.call.name.clone(),
                            s.call.arguments_json(),
                            s.result.map(|r| r.text()),
                        )
                    })
                    .collect()
            };
            let mut expect = steps(&source);
            if to == FormatName::Anthropic {
                for s in &mut expect {
                    if s.1.is_null() {
                        s.1 = serde_json::json!({});
                    }
                }
            }
            assert_eq!(steps(&conv), expect, "{ctx}");
            if from == to {
                assert!(out.lossy.is_empty());
                assert_eq!(out.request, fixture(from));
            } else {
                assert!(!out.lossy.is_empty(), "{ctx}");
            }
        }
    }
    let anthropic_to_chat = lossy_paths(FormatName::Anthropic, FormatName::OpenaiChat);
    for path in [
        "system[1].cache_control",
        "messages[0].content[1]",
        "messages[0].content[2]",
        "messages[1].content[0]",
        "messages[1].content[1]",
        "messages[2].content[0].cache_control",
        "messages[4].content[1]",
        "tools[2]",
        "thinking",
        "metadata",
    ] {
        assert!(
            anthropic_to_chat.iter().any(|p| p == path),
            "{path}: {anthropic_to_chat:?}"
        );
    }
    let responses_to_gemini = lossy_paths(FormatName::OpenaiResponses, FormatName::Gemini);
    for path in [
        "input[2]",
        "input[3].id",
        "input[4].id",
        "input[8]",
        "input[9]",
        "model",
        "reasoning",
        "tools[1]",
    ] {
        assert!(
            responses_to_gemini.iter().any(|p| p == path),
            "{path}: {responses_to_gemini:?}"
        );
    }
    let gemini_to_anthropic = lossy_paths(FormatName::Gemini, FormatName::Anthropic);
    for path in [
        "contents[1].parts[0]",
        "contents[1].parts[1].thoughtSignature",
        "contents[3].parts[0]",
        "tools[1].codeExecution",
        "generationConfig.thinkingConfig",
        "toolConfig",
    ] {
        assert!(
            gemini_to_anthropic.iter().any(|p| p == path),
            "{path}: {gemini_to_anthropic:?}"
        );
    }
}

#[test]
fn conversion_maps_settings_and_tools() {
    let out = formats::convert(&fixture(FormatName::OpenaiChat), None, FormatName::Gemini).unwrap();
    let r = &out.request;
    assert_eq!(r["generationConfig"]["maxOutputTokens"], 300);
    assert_eq!(r["generationConfig"]["stopSequences"][0], "\n\n");
    assert_eq!(
        r["tools"][0]["functionDeclarations"][0]["name"],
        "get_current_weather"
    );
    assert_eq!(
        r["systemInstruction"]["parts"][0]["text"],
        "You are a helpful assistant."
    );
    let out = formats::convert(&fixture(FormatName::Gemini), None, FormatName::Anthropic).unwrap();
    let r = &out.request;
    assert_eq!(r["max_tokens"], 800);
    assert_eq!(r["tools"][1]["input_schema"]["required"][0], "rgb_hex");
    assert_eq!(r["system"], "You are a cat. Your name is Neko.");
    // The Gemini error response becomes an Anthropic error result.
    let results: Vec<&Value> = r["messages"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|m| m["content"].as_array().into_iter().flatten())
        .filter(|b| b["type"] == "tool_result")
        .collect();
    assert_eq!(results.len(), 3);
    assert_eq!(results[2]["is_error"], true);
    let out = formats::convert(
        &fixture(FormatName::Anthropic),
        None,
        FormatName::OpenaiResponses,
    )
    .unwrap();
    let r = &out.request;
    assert_eq!(r["max_output_tokens"], 1024);
    assert_eq!(r["tools"][0]["type"], "function");
    assert_eq!(r["tools"][0]["name"], "get_weather");
    // The image inside the tool result stays inside the function_call_output.
    let outputs: Vec<&Value> = r["input"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|i| i["type"] == "function_call_output")
        .collect();
    assert_eq!(outputs[0]["output"][1]["type"], "input_image");
}
