//! `limits.maxImagePixels` and base64 checks on the image parts a client
//! sends, in every format: the pixel size comes from the header in the
//! payload (a valid IHDR is enough), an image over the limit is
//! `LIMIT_EXCEEDED` naming the JSON path of its data field, invalid base64 is
//! `INVALID_REQUEST` naming the field, unknown formats and URLs pass.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)]

use base64::Engine;
use serde_json::{json, Value};
use tracelite::{compress_json, Config, Env, ErrorCode, HostState, MemoryStore};

fn b64(bytes: &[u8]) -> String {
    base64::engine::general_purpose::STANDARD.encode(bytes)
}

/// A PNG signature and an IHDR chunk claiming `w`×`h` (no image data).
fn png_header(w: u32, h: u32) -> Vec<u8> {
    let mut b = b"\x89PNG\r\n\x1a\n\0\0\0\x0dIHDR".to_vec();
    b.extend(w.to_be_bytes());
    b.extend(h.to_be_bytes());
    b.extend([8, 0, 0, 0, 0, 0, 0, 0, 0]);
    b
}

/// A request of each format with one user image (base64 `data`), and the
/// JSON path of that image's data field.
fn requests(data: &str) -> Vec<(&'static str, Value, &'static str)> {
    vec![
        (
            "openai-chat",
            json!({"model": "m", "messages": [
                {"role": "system", "content": "be brief"},
                {"role": "user", "content": [
                    {"type": "text", "text": "what is this?"},
                    {"type": "image_url", "image_url": {"url": format!("data:image/png;base64,{data}")}}
                ]}
            ]}),
            "messages[1].content[1].image_url.url",
        ),
        (
            "openai-responses",
            json!({"model": "m", "input": [
                {"role": "user", "content": [
                    {"type": "input_text", "text": "what is this?"},
                    {"type": "input_image", "image_url": format!("data:image/png;base64,{data}")}
                ]}
            ]}),
            "input[0].content[1].image_url",
        ),
        (
            "anthropic",
            json!({"model": "m", "max_tokens": 10, "messages": [
                {"role": "user", "content": [
                    {"type": "text", "text": "what is this?"},
                    {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": data}}
                ]}
            ]}),
            "messages[0].content[1].source.data",
        ),
        (
            "gemini",
            json!({"contents": [
                {"role": "user", "parts": [
                    {"text": "what is this?"},
                    {"inlineData": {"mimeType": "image/png", "data": data}}
                ]}
            ]}),
            "contents[0].parts[1].inlineData.data",
        ),
    ]
}

fn run(request: &Value) -> tracelite::Result<tracelite::Output> {
    compress_json(
        &request.to_string(),
        &Config::default(),
        Env::new(&mut MemoryStore::new(), &mut HostState::default()),
    )
}

#[test]
fn an_image_over_the_pixel_limit_is_limit_exceeded_with_its_path() {
    // 8000×7000 = 56 MP > 50 MP default.
    let data = b64(&png_header(8000, 7000));
    for (format, request, path) in requests(&data) {
        let e = run(&request).unwrap_err();
        assert_eq!(e.code, ErrorCode::LimitExceeded, "{format}");
        assert_eq!(e.path, path, "{format}");
        assert!(
            e.message.contains("limits.maxImagePixels"),
            "{format}: {}",
            e.message
        );
        assert!(e.message.contains("8000×7000"), "{format}: {}", e.message);
    }
}

#[test]
fn an_image_just_under_the_limit_passes_unchanged() {
    // 7071×7071 = 49,999,041 px ≤ 50,000,000.
    let data = b64(&png_header(7071, 7071));
    for (format, request, _) in requests(&data) {
        let out = run(&request).unwrap_or_else(|e| panic!("{format}: {e:?}"));
        assert!(
            out.request.contains(&data),
            "{format}: image passes through"
        );
    }
}

#[test]
fn the_limit_is_a_setting() {
    let data = b64(&png_header(100, 100));
    let mut config = Config::default();
    config.limits.max_image_pixels = 9_999;
    for (format, request, path) in requests(&data) {
        let e = compress_json(
            &request.to_string(),
            &config,
            Env::new(&mut MemoryStore::new(), &mut HostState::default()),
        )
        .unwrap_err();
        assert_eq!(
            (e.code, e.path.as_str()),
            (ErrorCode::LimitExceeded, path),
            "{format}"
        );
    }
    config.limits.max_image_pixels = 10_000;
    for (format, request, _) in requests(&data) {
        compress_json(
            &request.to_string(),
            &config,
            Env::new(&mut MemoryStore::new(), &mut HostState::default()),
        )
        .unwrap_or_else(|e| panic!("{format}: {e:?}"));
    }
}

#[test]
fn invalid_base64_is_invalid_request_naming_the_field() {
    for bad in [
        "iVBOR w0K",
        "iVBORw0K!!",
        "iVBORw0KG",
        "ab=c",
        "iVBORw0KGgo===",
        "",
    ] {
        for (format, request, path) in requests(bad) {
            let e = run(&request).unwrap_err();
            assert_eq!(e.code, ErrorCode::InvalidRequest, "{format} {bad:?}");
            assert_eq!(e.path, path, "{format} {bad:?}");
            assert!(e.message.contains("image data"), "{format}: {}", e.message);
        }
    }
}

#[test]
fn unknown_formats_pass_and_urls_are_not_inspected() {
    // Valid base64 of bytes that are no known image: the provider's call.
    let data = b64(b"this is not an image at all");
    for (format, request, _) in requests(&data) {
        let out = run(&request).unwrap_or_else(|e| panic!("{format}: {e:?}"));
        assert!(out.request.contains(&data), "{format}");
    }
    let by_url = json!({"model": "m", "messages": [{"role": "user", "content": [
        {"type": "image_url", "image_url": {"url": "https://example.com/huge.png"}}
    ]}]});
    run(&by_url).unwrap();
}

#[test]
fn images_in_tool_results_and_system_prompts_are_checked_with_their_paths() {
    let data = b64(&png_header(10_000, 10_000));
    let anthropic = json!({"model": "m", "max_tokens": 10,
    "system": [{"type": "text", "text": "s"}],
    "messages": [
        {"role": "user", "content": "go"},
        {"role": "assistant", "content": [{"type": "tool_use", "id": "t1", "name": "shot", "input": {}}]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1", "content": [
            {"type": "text", "text": "screenshot"},
            {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": data}}
        ]}]}
    ]});
    let e = run(&anthropic).unwrap_err();
    assert_eq!(e.code, ErrorCode::LimitExceeded);
    assert_eq!(e.path, "messages[2].content[0].content[1].source.data");

    let responses = json!({"model": "m", "input": [
        {"type": "function_call", "call_id": "c1", "name": "shot", "arguments": "{}"},
        {"type": "function_call_output", "call_id": "c1", "output": [
            {"type": "input_image", "image_url": format!("data:image/png;base64,{data}")}
        ]}
    ]});
    let e = run(&responses).unwrap_err();
    assert_eq!(
        (e.code, e.path.as_str()),
        (ErrorCode::LimitExceeded, "input[1].output[0].image_url")
    );

    let gemini_system = json!({
        "systemInstruction": {"parts": [{"text": "s"}, {"inlineData": {"mimeType": "image/png", "data": data}}]},
        "contents": [{"role": "user", "parts": [{"text": "hi"}]}]
    });
    let e = run(&gemini_system).unwrap_err();
    assert_eq!(
        (e.code, e.path.as_str()),
        (
            ErrorCode::LimitExceeded,
            "systemInstruction.parts[1].inlineData.data"
        )
    );

    let chat_system = json!({"model": "m", "messages": [
        {"role": "system", "content": [{"type": "image_url", "image_url": {"url": format!("data:image/png;base64,{data}")}}]},
        {"role": "user", "content": "hi"}
    ]});
    let e = run(&chat_system).unwrap_err();
    assert_eq!(
        (e.code, e.path.as_str()),
        (
            ErrorCode::LimitExceeded,
            "messages[0].content[0].image_url.url"
        )
    );
}

#[test]
fn invalid_base64_in_a_tool_result_image_names_the_nested_field() {
    let anthropic = json!({"model": "m", "max_tokens": 10, "messages": [
        {"role": "user", "content": "go"},
        {"role": "assistant", "content": [{"type": "tool_use", "id": "t1", "name": "shot", "input": {}}]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1", "content": [
            {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "@@@@"}}
        ]}]}
    ]});
    let e = run(&anthropic).unwrap_err();
    assert_eq!(e.code, ErrorCode::InvalidRequest);
    assert_eq!(e.path, "messages[2].content[0].content[0].source.data");
}
