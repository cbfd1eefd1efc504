//! Snapshots sent by URL (`optical.imageUrl`): the URL image part each format
//! takes (OpenAI Chat and Responses, Anthropic), Gemini kept inline, stable
//! content ids, the `images` the host serves matching the URLs, unchanged
//! token accounting, and the option's validation.
#![allow(
    clippy::indexing_slicing,
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic
)]

use std::collections::BTreeSet;

use serde_json::{json, Value};
use tracelite::config::Provider;
use tracelite::formats::image_header::decode_base64;
use tracelite::formats::{self, FormatName};
use tracelite::spill::key::content_key;
use tracelite::tokens::Estimator;
use tracelite::{compress_json, Config, Env, ErrorCode, HostState, MemoryStore};

/// Compresses `req` with a fresh store and state.
fn fresh(req: &str, config: &Config) -> tracelite::Output {
    compress_json(
        req,
        config,
        Env::new(&mut MemoryStore::new(), &mut HostState::default()),
    )
    .unwrap()
}

const TEMPLATE: &str = "https://proxy.example.com/image/s1/{id}.png";

#[path = "common/trajectory.rs"]
mod trajectory;
use trajectory::dense;

/// An OpenAI Chat request with `n` bash calls and their dense outputs.
fn chat(n: usize) -> Value {
    trajectory::chat("m", &trajectory::reads(n, dense))
}

/// The request of `chat(n)` in `format`.
fn request(format: FormatName, n: usize) -> String {
    let chat = chat(n);
    if format == FormatName::OpenaiChat {
        return chat.to_string();
    }
    formats::convert(&chat, Some(FormatName::OpenaiChat), format)
        .unwrap()
        .request
        .to_string()
}

fn config(format: FormatName, template: &str) -> Config {
    let mut c = Config {
        format: Some(format),
        provider: match format {
            FormatName::Anthropic => Provider::Anthropic,
            FormatName::Gemini => Provider::Gemini,
            _ => Provider::Openai,
        },
        ..Config::default()
    };
    c.spill.enabled = false;
    c.dedup.enabled = false;
    c.phase.enabled = false;
    c.compact.enabled = false;
    c.plan.enabled = false;
    c.optical.image_url = template.into();
    // A model of the format's provider that reads images (the request names "m").
    c.model = match format {
        FormatName::Anthropic => "claude-sonnet-4-5",
        FormatName::Gemini => "gemini-2.5-pro",
        _ => "gpt-4o",
    }
    .into();
    c
}

/// Every string under a key named `key`, anywhere in `value`.
fn strings_at(value: &Value, key: &str, out: &mut Vec<String>) {
    match value {
        Value::Object(map) => {
            for (k, v) in map {
                if k == key {
                    if let Some(s) = v.as_str() {
                        out.push(s.to_string());
                    }
                }
                strings_at(v, key, out);
            }
        }
        Value::Array(items) => items.iter().for_each(|v| strings_at(v, key, out)),
        _ => {}
    }
}

fn urls_in(format: FormatName, request: &Value) -> Vec<String> {
    let mut out = Vec::new();
    match format {
        FormatName::OpenaiChat => {
            let mut objects = Vec::new();
            collect_objects(request, "image_url", &mut objects);
            for o in objects {
                if let Some(u) = o["url"].as_str() {
                    out.push(u.to_string());
                }
            }
        }
        FormatName::OpenaiResponses => strings_at(request, "image_url", &mut out),
        FormatName::Anthropic => {
            let mut sources = Vec::new();
            collect_objects(request, "source", &mut sources);
            for s in sources {
                if s["type"] == "url" {
                    out.push(s["url"].as_str().unwrap().to_string());
                }
            }
        }
        FormatName::Gemini => {}
    }
    out
}

fn collect_objects(value: &Value, key: &str, out: &mut Vec<Value>) {
    match value {
        Value::Object(map) => {
            for (k, v) in map {
                if k == key && v.is_object() {
                    out.push(v.clone());
                }
                collect_objects(v, key, out);
            }
        }
        Value::Array(items) => items.iter().for_each(|v| collect_objects(v, key, out)),
        _ => {}
    }
}

#[test]
fn formats_that_take_urls_get_url_parts_and_the_images_to_serve() {
    for format in [
        FormatName::OpenaiChat,
        FormatName::OpenaiResponses,
        FormatName::Anthropic,
    ] {
        let req = request(format, 7);
        let inline = fresh(&req, &config(format, ""));
        let out = fresh(&req, &config(format, TEMPLATE));
        let name = format.as_str();
        let emitted: Value = serde_json::from_str(&out.request).unwrap();
        // 7 observations, window 3, batch 3: 3 rendered.
        let urls = urls_in(format, &emitted);
        assert!(urls.len() >= 3, "{name}: {urls:?}");
        assert!(
            !out.request.contains("base64"),
            "{name}: no inline image left"
        );
        assert!(inline.request.contains("base64"), "{name}");
        // Each URL is the template with a content id; the images list matches them.
        let listed: BTreeSet<&str> = out.images.iter().map(|i| i.url.as_str()).collect();
        let carried: BTreeSet<&str> = urls.iter().map(String::as_str).collect();
        assert_eq!(listed, carried, "{name}");
        assert_eq!(listed.len(), out.images.len(), "{name}: listed once each");
        for image in &out.images {
            assert_eq!(image.id.len(), 32, "{name}");
            assert!(image
                .id
                .bytes()
                .all(|b| b.is_ascii_hexdigit() && !b.is_ascii_uppercase()));
            assert_eq!(image.url, TEMPLATE.replace("{id}", &image.id));
            assert_eq!(
                content_key("image", &image.data),
                format!("image-{}", image.id)
            );
            assert_eq!(image.media_type, "image/png");
            let png = decode_base64(&image.data).unwrap();
            assert_eq!(png.len(), image.bytes);
            assert!(png.starts_with(b"\x89PNG\r\n\x1a\n"));
            assert!(
                inline.request.contains(&image.data),
                "{name}: the same pixels as inline"
            );
        }
        // Same pixels, same tokens; fewer bytes.
        assert_eq!(
            out.report.tokens_after, inline.report.tokens_after,
            "{name}"
        );
        assert_eq!(
            out.report.tokens_before, inline.report.tokens_before,
            "{name}"
        );
        assert!(out.report.bytes_after < inline.report.bytes_after, "{name}");
        let served: usize = out.images.iter().map(|i| i.bytes).sum();
        let urls_report = out.report.image_urls.as_ref().unwrap();
        assert_eq!(urls_report.urls, urls.len(), "{name}");
        assert_eq!(urls_report.images, out.images.len());
        assert_eq!(urls_report.bytes, served);
        assert_eq!(urls_report.inline, 0);
        assert!(urls_report.note.is_none());
        assert!(inline.report.image_urls.is_none() && inline.images.is_empty());
        let report = serde_json::to_value(&out.report).unwrap();
        assert_eq!(report["imageUrls"]["urls"], urls.len());
        assert!(serde_json::to_value(&inline.report)
            .unwrap()
            .get("imageUrls")
            .is_none());
    }
}

#[test]
fn each_format_carries_the_url_where_its_provider_reads_it() {
    let out = |format| {
        let o = fresh(&request(format, 7), &config(format, TEMPLATE));
        (serde_json::from_str::<Value>(&o.request).unwrap(), o.images)
    };
    // Chat: the images follow the tool messages in a user message, detail kept.
    let (chat, images) = out(FormatName::OpenaiChat);
    let user = chat["messages"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["role"] == "user" && m["content"].is_array())
        .unwrap();
    let part = &user["content"][0];
    assert_eq!(part["type"], "image_url");
    assert_eq!(part["image_url"]["url"], images[0].url.as_str());
    assert_eq!(part["image_url"]["detail"], "high");
    // Responses: input_image with the URL as image_url.
    let (responses, images) = out(FormatName::OpenaiResponses);
    let text = responses.to_string();
    assert!(
        text.contains(&format!(
            "{{\"type\":\"input_image\",\"image_url\":\"{}\"",
            images[0].url
        )),
        "{text}"
    );
    // Anthropic: a url source, no media type or data.
    let (anthropic, images) = out(FormatName::Anthropic);
    let mut sources = Vec::new();
    collect_objects(&anthropic, "source", &mut sources);
    assert_eq!(
        sources[0],
        json!({"type": "url", "url": images[0].url.as_str()})
    );
}

#[test]
fn gemini_keeps_snapshots_inline_and_says_why() {
    let format = FormatName::Gemini;
    let req = request(format, 7);
    let inline = fresh(&req, &config(format, ""));
    let out = fresh(&req, &config(format, TEMPLATE));
    assert_eq!(
        out.request, inline.request,
        "byte for byte as without the option"
    );
    assert!(out.images.is_empty());
    let report = out.report.image_urls.unwrap();
    assert!(report.inline >= 3, "{report:?}");
    assert_eq!((report.urls, report.images, report.bytes), (0, 0, 0));
    assert!(report.note.unwrap().contains("gemini"));
}

#[test]
fn ids_and_urls_are_stable_across_calls_and_turns() {
    let format = FormatName::Anthropic;
    let c = config(format, TEMPLATE);
    let a = fresh(&request(format, 7), &c);
    let b = fresh(&request(format, 7), &c);
    assert_eq!(a.request, b.request, "deterministic bytes out");
    assert_eq!(a.images, b.images);
    // A session over later turns: earlier snapshots keep their URL, so the
    // rendered prefix stays byte-identical (prompt caches hold).
    let mut state = HostState::default();
    let mut store = MemoryStore::new();
    let mut seen: Vec<String> = Vec::new();
    for n in 7..=12 {
        let out = compress_json(
            &request(format, n),
            &c,
            Env {
                store: &mut store,
                counter: &Estimator,
                state: &mut state,
                previous: None,
                format: None,
                known: Default::default(),
            },
        )
        .unwrap();
        let urls: Vec<String> = out.images.iter().map(|i| i.url.clone()).collect();
        assert!(urls.starts_with(&seen), "n={n}: {seen:?} then {urls:?}");
        seen = urls;
    }
    assert!(seen.len() > a.images.len());
}

#[test]
fn the_same_pixels_share_one_image() {
    // Two identical outputs: two URL parts, one image to serve.
    let mut chat = chat(7);
    let messages = chat["messages"].as_array_mut().unwrap();
    let first = messages[3]["content"].clone();
    messages[5]["content"] = first;
    let out = fresh(&chat.to_string(), &config(FormatName::OpenaiChat, TEMPLATE));
    let report = out.report.image_urls.unwrap();
    assert_eq!(report.urls, report.images + 1, "{report:?}");
    assert_eq!(out.images.len(), report.images);
}

#[test]
fn client_images_stay_as_the_client_sent_them() {
    // A screenshot the client put in a tool result is not a snapshot: untouched.
    let png = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAAAAAA6fptVAAAACklEQVR4nGNgAAAAAgABSK+kcQAAAABJRU5ErkJggg==";
    let mut chat = chat(7);
    let messages = chat["messages"].as_array_mut().unwrap();
    messages.push(json!({"role": "user", "content": [
        {"type": "image_url", "image_url": {"url": format!("data:image/png;base64,{png}")}}]}));
    let out = fresh(&chat.to_string(), &config(FormatName::OpenaiChat, TEMPLATE));
    assert!(out.request.contains(png));
    assert!(out.images.iter().all(|i| i.data != png));
}

#[test]
fn the_option_is_validated_with_its_path() {
    for (template, why) in [
        ("http://proxy.example.com/image/{id}", "https"),
        ("https://proxy.example.com/image.png", "{id}"),
        ("https://proxy.example.com/a b/{id}", "URL characters"),
        ("https://u:p@proxy.example.com/{id}", "credentials"),
        ("/image/{id}", "absolute"),
    ] {
        let options = json!({"optical": {"imageUrl": template}}).to_string();
        let err = Config::from_json_str(&options).unwrap_err();
        assert_eq!(err.code, ErrorCode::InvalidOption, "{template}");
        assert_eq!(err.path, "optical.imageUrl", "{template}");
        assert!(err.message.contains(why), "{template}: {}", err.message);
    }
    let err = Config::from_json_str(r#"{"optical": {"imageUrl": 3}}"#).unwrap_err();
    assert_eq!(
        (err.code, err.path.as_str()),
        (ErrorCode::InvalidOption, "optical.imageUrl")
    );
    let ok = Config::from_json_str(r#"{"optical": {"imageUrl": "http://localhost:8787/i/{id}"}}"#)
        .unwrap();
    assert_eq!(ok.optical.image_url, "http://localhost:8787/i/{id}");
    assert_eq!(Config::default().optical.image_url, "", "off by default");
}

#[test]
fn a_stateful_session_returns_the_images_too() {
    let mut c = config(FormatName::OpenaiChat, TEMPLATE);
    c.format = None;
    let mut tl = tracelite::TraceLite::new(c);
    tl.add_message_json(&json!({"role": "system", "content": "You are a coding agent."}))
        .unwrap();
    tl.add_message_json(&json!({"role": "user", "content": "Fix the failing test."}))
        .unwrap();
    for i in 0..7 {
        let call = tracelite::model::ToolCall {
            id: format!("call_{i}"),
            name: "bash".into(),
            arguments: format!("{{\"command\":\"cat f{i}.py\"}}"),
        };
        tl.process_step(call, dense(i)).unwrap();
    }
    let out = tl
        .assemble(FormatName::OpenaiChat, Default::default())
        .unwrap();
    assert!(!out.images.is_empty());
    assert!(!out.request.contains("base64"));
    for image in &out.images {
        assert!(out.request.contains(&image.url));
    }
}
