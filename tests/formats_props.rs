//! Property tests: random conversations in each format's canonical shape
//! survive emit → parse unchanged, and snapshot images inside tool results
//! land where each provider accepts them.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)]

use proptest::prelude::*;
use serde_json::{Map, Value};
use tracelite::formats::{self, FormatName};
use tracelite::model::{
    Conversation, Extra, Image, Layout, Message, Part, PartKind, Role, ToolCall, ToolResult,
};

/// A generated call: name, arguments, result text, error flag.
type GenCall = (String, Vec<(String, i64)>, String, bool);

/// One turn of a generated conversation.
#[derive(Debug, Clone)]
enum Turn {
    User(String),
    /// Optional text, then calls (name, args, result text, is_error).
    Tools(Option<String>, Vec<GenCall>),
    Assistant(String),
}

fn text() -> impl Strategy<Value = String> {
    "\\PC{0,24}"
}

fn turn() -> impl Strategy<Value = Turn> {
    let call = (
        "[a-z_]{1,10}",
        prop::collection::vec(("[a-z]{1,6}", any::<i64>()), 0..3),
        text(),
        any::<bool>(),
    );
    prop_oneof![
        text().prop_map(Turn::User),
        text().prop_map(Turn::Assistant),
        (prop::option::of(text()), prop::collection::vec(call, 1..3))
            .prop_map(|(t, calls)| Turn::Tools(t, calls)),
    ]
}

fn conversation() -> impl Strategy<Value = (Option<String>, Vec<Turn>, Vec<(String, i64)>)> {
    (
        prop::option::of(text()),
        prop::collection::vec(turn(), 0..6),
        prop::collection::vec(("x_[a-z]{1,6}", any::<i64>()), 0..3),
    )
}

fn msg(role: Role, parts: Vec<Part>, layout: Layout) -> Message {
    Message {
        role,
        parts,
        layout,
        extra: Extra::new(),
    }
}

fn args_text(args: &[(String, i64)]) -> String {
    let mut m = Map::new();
    for (k, v) in args {
        m.insert(k.clone(), Value::from(*v));
    }
    Value::Object(m).to_string()
}

/// Builds the conversation `parse(format, …)` would produce for these turns.
fn build(
    format: FormatName,
    system: &Option<String>,
    turns: &[Turn],
    extras: &[(String, i64)],
) -> Conversation {
    let mut conv = Conversation::default();
    let gemini = format == FormatName::Gemini;
    if let Some(s) = system {
        let layout = if gemini { Layout::Parts } else { Layout::Text };
        conv.system
            .push(msg(Role::System, vec![Part::text(s.clone())], layout));
    }
    let text_layout = if gemini { Layout::Parts } else { Layout::Text };
    let mut n = 0;
    for turn in turns {
        match turn {
            Turn::User(t) => {
                conv.messages
                    .push(msg(Role::User, vec![Part::text(t.clone())], text_layout))
            }
            Turn::Assistant(t) => conv.messages.push(msg(
                Role::Assistant,
                vec![Part::text(t.clone())],
                text_layout,
            )),
            Turn::Tools(t, calls) => {
                let mut calls_parts = Vec::new();
                let mut results = Vec::new();
                for (name, args, out, is_error) in calls {
                    n += 1;
                    let id = format!("id{n}");
                    let mut extra = Extra::new();
                    if format == FormatName::OpenaiChat {
                        extra.insert("type".into(), Value::String("function".into()));
                    }
                    calls_parts.push(Part {
                        kind: PartKind::ToolCall(ToolCall {
                            id: id.clone(),
                            name: name.clone(),
                            arguments: args_text(args),
                        }),
                        extra,
                    });
                    // Chat and Responses carry no error flag.
                    let is_error =
                        *is_error && matches!(format, FormatName::Anthropic | FormatName::Gemini);
                    results.push(Part::from(PartKind::ToolResult(ToolResult {
                        call_id: id,
                        parts: vec![Part::text(out.clone())],
                        is_error,
                    })));
                }
                let lead = t.clone().map(Part::text);
                match format {
                    FormatName::OpenaiChat => {
                        let layout = if lead.is_some() {
                            Layout::Text
                        } else {
                            Layout::Null
                        };
                        let parts = lead.into_iter().chain(calls_parts).collect();
                        conv.messages.push(msg(Role::Assistant, parts, layout));
                        for r in results {
                            conv.messages.push(msg(Role::Tool, vec![r], Layout::Text));
                        }
                    }
                    FormatName::OpenaiResponses => {
                        if let Some(l) = lead {
                            conv.messages
                                .push(msg(Role::Assistant, vec![l], Layout::Text));
                        }
                        for c in calls_parts {
                            conv.messages
                                .push(msg(Role::Assistant, vec![c], Layout::Absent));
                        }
                        for r in results {
                            conv.messages.push(msg(Role::Tool, vec![r], Layout::Absent));
                        }
                    }
                    FormatName::Anthropic | FormatName::Gemini => {
                        let parts = lead.into_iter().chain(calls_parts).collect();
                        conv.messages
                            .push(msg(Role::Assistant, parts, Layout::Parts));
                        conv.messages.push(msg(Role::User, results, Layout::Parts));
                    }
                }
            }
        }
    }
    if !gemini {
        conv.extra.insert("model".into(), Value::String("m".into()));
    }
    let slots: &[&str] = match format {
        FormatName::OpenaiChat => &["messages"],
        FormatName::OpenaiResponses => &["input"],
        FormatName::Anthropic if system.is_some() => &["system", "messages"],
        FormatName::Anthropic => &["messages"],
        FormatName::Gemini if system.is_some() => &["systemInstruction", "contents"],
        FormatName::Gemini => &["contents"],
    };
    for s in slots {
        conv.extra.insert((*s).into(), Value::Null);
    }
    if format == FormatName::OpenaiResponses && system.is_some() {
        // The system prompt of a Responses request is a leading system item.
        conv.system[0].layout = Layout::Text;
    }
    for (k, v) in extras {
        conv.extra.insert(k.clone(), Value::from(*v));
    }
    conv
}

fn snapshot() -> Part {
    Part::from(PartKind::Image(Image {
        media_type: "image/png".into(),
        data: "iVBORw0KGgo=".into(),
        url: None,
        width: 0,
        height: 0,
    }))
}

fn images(conv: &Conversation) -> usize {
    fn count(p: &Part) -> usize {
        match &p.kind {
            PartKind::Image(_) => 1,
            PartKind::ToolResult(r) => r.parts.iter().map(count).sum(),
            _ => 0,
        }
    }
    conv.messages
        .iter()
        .flat_map(|m| m.parts.iter())
        .map(count)
        .sum()
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 200, ..ProptestConfig::default() })]

    #[test]
    fn emit_then_parse_is_the_identity((system, turns, extras) in conversation()) {
        for format in FormatName::ALL {
            let conv = build(format, &system, &turns, &extras);
            formats::validate(&conv, format).unwrap();
            let json = formats::emit(format, &conv);
            let detected = formats::detect(&json).unwrap();
            if format == FormatName::Anthropic {
                // Text-only Anthropic requests read as OpenAI Chat (same shape).
                prop_assert!(matches!(detected, FormatName::Anthropic | FormatName::OpenaiChat));
            } else {
                prop_assert_eq!(detected, format);
            }
            let back = formats::parse(format, &json).unwrap();
            prop_assert_eq!(&back, &conv, "{}", format.as_str());
            prop_assert_eq!(formats::emit(format, &back), json);
        }
    }

    #[test]
    fn snapshot_images_land_where_each_provider_accepts_them((system, turns, extras) in conversation()) {
        for format in FormatName::ALL {
            let mut conv = build(format, &system, &turns, &extras);
            for at in conv.observations() {
                conv.tool_result_mut(at).unwrap().parts.push(snapshot());
            }
            let expected = images(&conv);
            let json = formats::emit(format, &conv);
            let back = formats::parse(format, &json).unwrap();
            formats::validate(&back, format).unwrap();
            prop_assert_eq!(images(&back), expected, "{}", format.as_str());
            let text = json.to_string();
            match format {
                // Chat: only user messages hold images.
                FormatName::OpenaiChat => {
                    for m in json["messages"].as_array().unwrap() {
                        if m.to_string().contains("image_url") {
                            prop_assert_eq!(&m["role"], "user");
                        }
                    }
                }
                // Responses and Anthropic: inside the tool result.
                FormatName::OpenaiResponses | FormatName::Anthropic => {
                    let inside = back.observations().iter().map(|at| {
                        back.tool_result(*at).unwrap().parts.iter().filter(|p| matches!(p.kind, PartKind::Image(_))).count()
                    }).sum::<usize>();
                    prop_assert_eq!(inside, expected);
                }
                // Gemini: a user turn right after the one holding the responses.
                FormatName::Gemini => {
                    let contents = json["contents"].as_array().unwrap();
                    for (i, c) in contents.iter().enumerate() {
                        if c.to_string().contains("inlineData") {
                            prop_assert_eq!(&c["role"], "user");
                            prop_assert!(contents[i - 1].to_string().contains("functionResponse"));
                        }
                    }
                }
            }
            prop_assert_eq!(text.matches("iVBORw0KGgo=").count(), expected);
        }
    }
}
