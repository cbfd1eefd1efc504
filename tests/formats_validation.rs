//! One test per validation error, in each format, with the JSON path of the
//! offending field; repair mode fixes each repairable one and lists it.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)]

use serde_json::{json, Value};
use tracelite::formats::{self, FormatName};
use tracelite::{compress_json, Config, Env, HostState, MemoryStore};

const CHAT: FormatName = FormatName::OpenaiChat;
const RESP: FormatName = FormatName::OpenaiResponses;
const ANTH: FormatName = FormatName::Anthropic;
const GEM: FormatName = FormatName::Gemini;

/// Parses (which checks types) and validates; returns (code, path) of the error.
fn error(format: FormatName, request: &Value) -> (String, String) {
    let e = match formats::parse(format, request) {
        Err(e) => e,
        Ok(conv) => formats::validate(&conv, format).unwrap_err(),
    };
    (e.code.as_str().to_string(), e.path)
}

fn assert_error(format: FormatName, request: Value, code: &str, path: &str) {
    assert_eq!(
        error(format, &request),
        (code.to_string(), path.to_string()),
        "{}",
        format.as_str()
    );
}

/// Repairs, checks the result is valid and re-parses to the same conversation,
/// and returns the (code, path) of each repair.
fn repairs(format: FormatName, request: Value) -> (Vec<(String, String)>, Value) {
    let mut conv = formats::parse(format, &request).unwrap();
    let list = formats::repair(&mut conv, format).unwrap();
    formats::validate(&conv, format).unwrap();
    let out = formats::emit(format, &conv);
    let again = formats::parse(format, &out).unwrap();
    formats::validate(&again, format).unwrap();
    (list.into_iter().map(|r| (r.code, r.path)).collect(), out)
}

fn chat_call(id: &str) -> Value {
    json!({"id": id, "type": "function", "function": {"name": "bash", "arguments": "{}"}})
}

fn pairs(list: &[(&str, &str)]) -> Vec<(String, String)> {
    list.iter()
        .map(|(a, b)| (a.to_string(), b.to_string()))
        .collect()
}

// ---- orphaned tool results ----

#[test]
fn orphan_tool_result() {
    assert_error(
        CHAT,
        json!({"messages": [
            {"role": "user", "content": "hi"},
            {"role": "tool", "tool_call_id": "nope", "content": "x"}
        ]}),
        "ORPHAN_TOOL_RESULT",
        "messages[1].tool_call_id",
    );
    assert_error(
        RESP,
        json!({"input": [
            {"role": "user", "content": "hi"},
            {"type": "function_call_output", "call_id": "nope", "output": "x"}
        ]}),
        "ORPHAN_TOOL_RESULT",
        "input[1].call_id",
    );
    assert_error(
        ANTH,
        json!({"messages": [
            {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "nope", "content": "x"}]}
        ]}),
        "ORPHAN_TOOL_RESULT",
        "messages[0].content[0].tool_use_id",
    );
    assert_error(
        GEM,
        json!({"contents": [
            {"role": "user", "parts": [{"functionResponse": {"name": "ghost", "response": {"output": "x"}}}]}
        ]}),
        "ORPHAN_TOOL_RESULT",
        "contents[0].parts[0].functionResponse.name",
    );
    // A result before its call is orphaned too.
    assert_error(
        CHAT,
        json!({"messages": [
            {"role": "tool", "tool_call_id": "a", "content": "x"},
            {"role": "assistant", "content": null, "tool_calls": [chat_call("a")]}
        ]}),
        "ORPHAN_TOOL_RESULT",
        "messages[0].tool_call_id",
    );
}

#[test]
fn orphan_tool_result_is_repaired_into_user_text() {
    let (list, out) = repairs(
        CHAT,
        json!({"messages": [
            {"role": "user", "content": "hi"},
            {"role": "tool", "tool_call_id": "nope", "content": "x"}
        ]}),
    );
    assert_eq!(
        list,
        pairs(&[("ORPHAN_TOOL_RESULT", "messages[1].tool_call_id")])
    );
    assert_eq!(
        out["messages"][1],
        json!({"role": "user", "content": "[tool result for nope]\nx"})
    );
    let (list, out) = repairs(
        ANTH,
        json!({"messages": [
            {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "nope", "content": "x"}]}
        ]}),
    );
    assert_eq!(
        list,
        pairs(&[("ORPHAN_TOOL_RESULT", "messages[0].content[0].tool_use_id")])
    );
    assert_eq!(out["messages"][0]["content"][0]["type"], "text");
    // What the result held besides text stays in the text (an opaque block
    // would mean something else outside it: `tool_use` is a call).
    let (_, out) = repairs(
        ANTH,
        json!({"messages": [
            {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "nope",
                "content": [{"type": "tool_use", "text": "x"}]}]}
        ]}),
    );
    assert_eq!(
        out["messages"][0]["content"],
        json!([{"type": "text", "text": "[tool result for nope]\n{\"type\":\"tool_use\",\"text\":\"x\"}"}])
    );
}

// ---- calls without results ----

#[test]
fn missing_tool_result_unless_at_the_end() {
    assert_error(
        CHAT,
        json!({"messages": [
            {"role": "assistant", "content": null, "tool_calls": [chat_call("a")]},
            {"role": "user", "content": "and?"}
        ]}),
        "MISSING_TOOL_RESULT",
        "messages[0].tool_calls[0]",
    );
    assert_error(
        RESP,
        json!({"input": [
            {"type": "function_call", "call_id": "a", "name": "f", "arguments": "{}"},
            {"role": "user", "content": "and?"}
        ]}),
        "MISSING_TOOL_RESULT",
        "input[0]",
    );
    assert_error(
        ANTH,
        json!({"messages": [
            {"role": "user", "content": "go"},
            {"role": "assistant", "content": [{"type": "tool_use", "id": "a", "name": "f", "input": {}}]},
            {"role": "user", "content": "and?"}
        ]}),
        "MISSING_TOOL_RESULT",
        "messages[1].content[0]",
    );
    assert_error(
        GEM,
        json!({"contents": [
            {"role": "model", "parts": [{"functionCall": {"name": "f", "args": {}}}]},
            {"role": "user", "parts": [{"text": "and?"}]}
        ]}),
        "MISSING_TOOL_RESULT",
        "contents[0].parts[0]",
    );
    // The last turn's calls may lack results (the host is about to run them),
    // even when some siblings are answered.
    for (format, request) in [
        (
            CHAT,
            json!({"messages": [{"role": "user", "content": "go"},
            {"role": "assistant", "content": null, "tool_calls": [chat_call("a"), chat_call("b")]},
            {"role": "tool", "tool_call_id": "a", "content": "x"}]}),
        ),
        (
            RESP,
            json!({"input": [{"role": "user", "content": "go"},
            {"type": "function_call", "call_id": "a", "name": "f", "arguments": "{}"},
            {"type": "reasoning", "id": "rs", "summary": []},
            {"type": "function_call", "call_id": "b", "name": "f", "arguments": "{}"}]}),
        ),
        (
            ANTH,
            json!({"messages": [{"role": "user", "content": "go"},
            {"role": "assistant", "content": [{"type": "tool_use", "id": "a", "name": "f", "input": {}}]}]}),
        ),
        (
            GEM,
            json!({"contents": [{"role": "user", "parts": [{"text": "go"}]},
            {"role": "model", "parts": [{"functionCall": {"name": "f"}}]}]}),
        ),
    ] {
        let conv = formats::parse(format, &request).unwrap();
        formats::validate(&conv, format).unwrap();
    }
}

#[test]
fn missing_tool_result_is_repaired_with_a_tombstone() {
    let (list, out) = repairs(
        CHAT,
        json!({"messages": [
            {"role": "assistant", "content": null, "tool_calls": [chat_call("a"), chat_call("b")]},
            {"role": "tool", "tool_call_id": "a", "content": "x"},
            {"role": "user", "content": "and?"}
        ]}),
    );
    assert_eq!(
        list,
        pairs(&[("MISSING_TOOL_RESULT", "messages[0].tool_calls[1]")])
    );
    assert_eq!(out["messages"][2]["tool_call_id"], "b");
    assert_eq!(out["messages"][2]["content"], formats::validate::TOMBSTONE);
    assert_eq!(out["messages"][3]["role"], "user");
    let (list, out) = repairs(
        ANTH,
        json!({"messages": [
            {"role": "assistant", "content": [{"type": "tool_use", "id": "a", "name": "f", "input": {}}]},
            {"role": "user", "content": "and?"}
        ]}),
    );
    assert_eq!(
        list,
        pairs(&[("MISSING_TOOL_RESULT", "messages[0].content[0]")])
    );
    assert_eq!(out["messages"][1]["content"][0]["type"], "tool_result");
    assert_eq!(out["messages"][1]["content"][1]["text"], "and?");
    let (list, out) = repairs(
        GEM,
        json!({"contents": [
            {"role": "model", "parts": [{"functionCall": {"name": "f", "args": {}}}]},
            {"role": "model", "parts": [{"text": "hmm"}]}
        ]}),
    );
    assert_eq!(
        list,
        pairs(&[("MISSING_TOOL_RESULT", "contents[0].parts[0]")])
    );
    assert_eq!(
        out["contents"][1]["parts"][0]["functionResponse"]["name"],
        "f"
    );
}

// ---- duplicate ids ----

#[test]
fn duplicate_tool_call_id() {
    assert_error(
        CHAT,
        json!({"messages": [
            {"role": "assistant", "content": null, "tool_calls": [chat_call("a")]},
            {"role": "tool", "tool_call_id": "a", "content": "1"},
            {"role": "assistant", "content": null, "tool_calls": [chat_call("a")]},
            {"role": "tool", "tool_call_id": "a", "content": "2"}
        ]}),
        "DUPLICATE_TOOL_CALL_ID",
        "messages[2].tool_calls[0].id",
    );
    assert_error(
        ANTH,
        json!({"messages": [
            {"role": "assistant", "content": [{"type": "tool_use", "id": "a", "name": "f", "input": {}},
                                              {"type": "tool_use", "id": "a", "name": "f", "input": {}}]}
        ]}),
        "DUPLICATE_TOOL_CALL_ID",
        "messages[0].content[1].id",
    );
    assert_error(
        RESP,
        json!({"input": [
            {"type": "function_call", "call_id": "a", "name": "f", "arguments": "{}"},
            {"type": "function_call", "call_id": "a", "name": "f", "arguments": "{}"}
        ]}),
        "DUPLICATE_TOOL_CALL_ID",
        "input[1].call_id",
    );
    assert_error(
        GEM,
        json!({"contents": [
            {"role": "model", "parts": [{"functionCall": {"id": "a", "name": "f"}}, {"functionCall": {"id": "a", "name": "f"}}]}
        ]}),
        "DUPLICATE_TOOL_CALL_ID",
        "contents[0].parts[1].functionCall.id",
    );
}

#[test]
fn duplicate_tool_call_id_is_repaired_by_renaming_the_later_call() {
    let (list, out) = repairs(
        CHAT,
        json!({"messages": [
            {"role": "assistant", "content": null, "tool_calls": [chat_call("a")]},
            {"role": "tool", "tool_call_id": "a", "content": "1"},
            {"role": "assistant", "content": null, "tool_calls": [chat_call("a")]},
            {"role": "tool", "tool_call_id": "a", "content": "2"}
        ]}),
    );
    assert_eq!(
        list,
        pairs(&[("DUPLICATE_TOOL_CALL_ID", "messages[2].tool_calls[0].id")])
    );
    assert_eq!(out["messages"][1]["tool_call_id"], "a");
    assert_eq!(out["messages"][2]["tool_calls"][0]["id"], "a_1");
    assert_eq!(out["messages"][3]["tool_call_id"], "a_1");
    assert_eq!(out["messages"][3]["content"], "2");
}

#[test]
fn duplicate_tool_result() {
    assert_error(
        CHAT,
        json!({"messages": [
            {"role": "assistant", "content": null, "tool_calls": [chat_call("a")]},
            {"role": "tool", "tool_call_id": "a", "content": "1"},
            {"role": "tool", "tool_call_id": "a", "content": "1 again"}
        ]}),
        "DUPLICATE_TOOL_RESULT",
        "messages[2].tool_call_id",
    );
    assert_error(
        ANTH,
        json!({"messages": [
            {"role": "assistant", "content": [{"type": "tool_use", "id": "a", "name": "f", "input": {}}]},
            {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "a", "content": "1"},
                                         {"type": "tool_result", "tool_use_id": "a", "content": "2"}]}
        ]}),
        "DUPLICATE_TOOL_RESULT",
        "messages[1].content[1].tool_use_id",
    );
    let (list, _) = repairs(
        CHAT,
        json!({"messages": [
            {"role": "assistant", "content": null, "tool_calls": [chat_call("a")]},
            {"role": "tool", "tool_call_id": "a", "content": "1"},
            {"role": "tool", "tool_call_id": "a", "content": "1 again"}
        ]}),
    );
    assert_eq!(
        list,
        pairs(&[("DUPLICATE_TOOL_RESULT", "messages[2].tool_call_id")])
    );
}

// ---- impossible role order ----

#[test]
fn misplaced_tool_result() {
    let chat = json!({"messages": [
        {"role": "assistant", "content": null, "tool_calls": [chat_call("a"), chat_call("b")]},
        {"role": "tool", "tool_call_id": "a", "content": "1"},
        {"role": "user", "content": "wait"},
        {"role": "tool", "tool_call_id": "b", "content": "2"}
    ]});
    assert_error(
        CHAT,
        chat.clone(),
        "MISPLACED_TOOL_RESULT",
        "messages[3].tool_call_id",
    );
    let anth = json!({"messages": [
        {"role": "assistant", "content": [{"type": "tool_use", "id": "a", "name": "f", "input": {}}]},
        {"role": "user", "content": "wait"},
        {"role": "assistant", "content": "ok"},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "a", "content": "1"}]}
    ]});
    assert_error(
        ANTH,
        anth.clone(),
        "MISPLACED_TOOL_RESULT",
        "messages[3].content[0].tool_use_id",
    );
    // Responses accepts an output anywhere after its call.
    let resp = json!({"input": [
        {"type": "function_call", "call_id": "a", "name": "f", "arguments": "{}"},
        {"role": "user", "content": "wait"},
        {"type": "function_call_output", "call_id": "a", "output": "1"}
    ]});
    formats::validate(&formats::parse(RESP, &resp).unwrap(), RESP).unwrap();

    let (list, out) = repairs(CHAT, chat);
    assert_eq!(
        list,
        pairs(&[("MISPLACED_TOOL_RESULT", "messages[3].tool_call_id")])
    );
    let roles: Vec<&str> = out["messages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["role"].as_str().unwrap())
        .collect();
    assert_eq!(roles, ["assistant", "tool", "tool", "user"]);
    let (list, out) = repairs(ANTH, anth);
    assert_eq!(
        list,
        pairs(&[(
            "MISPLACED_TOOL_RESULT",
            "messages[3].content[0].tool_use_id"
        )])
    );
    assert_eq!(out["messages"][1]["content"][0]["tool_use_id"], "a");
    assert_eq!(out["messages"].as_array().unwrap().len(), 3);
}

#[test]
fn tool_parts_in_the_wrong_role() {
    assert_error(
        ANTH,
        json!({"messages": [
            {"role": "user", "content": [{"type": "tool_use", "id": "a", "name": "f", "input": {}}]}
        ]}),
        "INVALID_ROLE_ORDER",
        "messages[0].content[0]",
    );
    assert_error(
        ANTH,
        json!({"messages": [
            {"role": "user", "content": "go"},
            {"role": "assistant", "content": [{"type": "tool_use", "id": "a", "name": "f", "input": {}},
                                              {"type": "tool_result", "tool_use_id": "a", "content": "x"}]}
        ]}),
        "INVALID_ROLE_ORDER",
        "messages[1].content[1]",
    );
    assert_error(
        GEM,
        json!({"contents": [
            {"role": "user", "parts": [{"functionCall": {"name": "f"}}]}
        ]}),
        "INVALID_ROLE_ORDER",
        "contents[0].parts[0]",
    );
    // Not repairable: repair mode still reports it.
    let mut conv = formats::parse(
        GEM,
        &json!({"contents": [
            {"role": "user", "parts": [{"functionCall": {"name": "f"}}]}
        ]}),
    )
    .unwrap();
    let e = formats::repair(&mut conv, GEM).unwrap_err();
    assert_eq!(e.code.as_str(), "INVALID_ROLE_ORDER");
}

// ---- wrong types ----

#[test]
fn wrong_types_name_the_field() {
    assert_error(
        CHAT,
        json!({"messages": [{"role": "assistant", "tool_calls": [
        {"id": "a", "type": "function", "function": {"name": "f", "arguments": {"x": 1}}}]}]}),
        "INVALID_REQUEST",
        "messages[0].tool_calls[0].function.arguments",
    );
    assert_error(
        RESP,
        json!({"input": [{"type": "function_call", "call_id": 7, "name": "f", "arguments": "{}"}]}),
        "INVALID_REQUEST",
        "input[0].call_id",
    );
    assert_error(
        RESP,
        json!({"input": [{"role": "robot", "content": "x"}]}),
        "INVALID_REQUEST",
        "input[0].role",
    );
    assert_error(RESP, json!({"input": 3}), "INVALID_REQUEST", "input");
    assert_error(
        ANTH,
        json!({"messages": [{"role": "assistant", "content": [
        {"type": "tool_use", "id": "a", "name": "f", "input": "ls"}]}]}),
        "INVALID_REQUEST",
        "messages[0].content[0].input",
    );
    assert_error(
        ANTH,
        json!({"messages": [{"role": "user", "content": [
        {"type": "tool_result", "tool_use_id": "a", "is_error": "yes"}]}]}),
        "INVALID_REQUEST",
        "messages[0].content[0].is_error",
    );
    assert_error(
        ANTH,
        json!({"system": 5, "messages": []}),
        "INVALID_REQUEST",
        "system",
    );
    assert_error(
        ANTH,
        json!({"messages": [{"role": "system", "content": "x"}]}),
        "INVALID_REQUEST",
        "messages[0].role",
    );
    assert_error(
        GEM,
        json!({"contents": [{"role": "model", "parts": [{"functionCall": {"name": "f", "args": [1]}}]}]}),
        "INVALID_REQUEST",
        "contents[0].parts[0].functionCall.args",
    );
    assert_error(
        GEM,
        json!({"contents": [{"role": "user", "parts": [{"text": 1}]}]}),
        "INVALID_REQUEST",
        "contents[0].parts[0].text",
    );
    assert_error(
        GEM,
        json!({"contents": [{"role": "user"}]}),
        "INVALID_REQUEST",
        "contents[0].parts",
    );
}

// ---- in the compress pipeline ----

#[test]
fn compress_validates_and_repairs_on_request() {
    let request = json!({"model": "m", "messages": [
        {"role": "user", "content": "hi"},
        {"role": "tool", "tool_call_id": "nope", "content": "x"}
    ]})
    .to_string();
    let e = compress_json(
        &request,
        &Config::default(),
        Env::new(&mut MemoryStore::new(), &mut HostState::default()),
    )
    .unwrap_err();
    assert_eq!(e.code.as_str(), "ORPHAN_TOOL_RESULT");
    assert_eq!(e.path, "messages[1].tool_call_id");
    let config = Config::from_json(json!({"repair": true})).unwrap();
    let out = compress_json(
        &request,
        &config,
        Env::new(&mut MemoryStore::new(), &mut HostState::default()),
    )
    .unwrap();
    assert_eq!(out.report.repairs.len(), 1);
    assert_eq!(out.report.repairs[0].code, "ORPHAN_TOOL_RESULT");
    let report = serde_json::to_value(&out.report).unwrap();
    assert_eq!(report["repairs"][0]["path"], "messages[1].tool_call_id");
    let back: Value = serde_json::from_str(&out.request).unwrap();
    assert_eq!(back["messages"][1]["role"], "user");
}

#[test]
fn results_may_answer_server_side_calls() {
    // Responses continuing a stored response answer calls the request does not hold.
    let resp = json!({"previous_response_id": "resp_1", "input": [
        {"type": "function_call_output", "call_id": "call_9", "output": "done"}
    ]});
    formats::validate(&formats::parse(RESP, &resp).unwrap(), RESP).unwrap();
    let gem = json!({"cachedContent": "cachedContents/abc", "contents": [
        {"role": "user", "parts": [{"functionResponse": {"name": "f", "response": {"output": "x"}}}]}
    ]});
    formats::validate(&formats::parse(GEM, &gem).unwrap(), GEM).unwrap();
    // Without them the same results are orphans.
    assert_error(
        RESP,
        json!({"previous_response_id": null, "input": [
            {"type": "function_call_output", "call_id": "call_9", "output": "done"}
        ]}),
        "ORPHAN_TOOL_RESULT",
        "input[0].call_id",
    );
}

#[test]
fn legacy_function_messages_round_trip_as_text() {
    let chat = json!({"messages": [
        {"role": "user", "content": "weather?"},
        {"role": "assistant", "content": null, "function_call": {"name": "w", "arguments": "{}"}},
        {"role": "function", "name": "w", "content": "sunny"}
    ]});
    let conv = formats::parse(CHAT, &chat).unwrap();
    formats::validate(&conv, CHAT).unwrap();
    assert_eq!(formats::emit(CHAT, &conv), chat);
}

#[test]
fn a_free_form_media_type_survives_a_data_url() {
    // Gemini's `mime_type` is free text; OpenAI carries it inside a
    // `data:<type>;base64,<data>` URL, which must split back the same.
    for mime in ["image/png", "data:image/png;base64,AA", "x;base64,y"] {
        let v = json!({"model": "m", "contents": [{"role": "user", "parts": [
            {"inline_data": {"mime_type": mime, "data": "AA"}}]}]});
        let conv = formats::parse(FormatName::Gemini, &v).unwrap();
        for to in [FormatName::OpenaiChat, FormatName::OpenaiResponses] {
            let (c, _) = formats::convert_conversation(conv.clone(), FormatName::Gemini, to);
            let back = formats::parse(to, &formats::emit(to, &c))
                .unwrap_or_else(|e| panic!("{}: {e}", to.as_str()));
            let (round, _) = formats::convert_conversation(back, to, FormatName::Gemini);
            let out = formats::emit(FormatName::Gemini, &round);
            // Emitted in Gemini's camelCase spelling.
            assert_eq!(
                out["contents"][0]["parts"][0]["inlineData"]["mimeType"],
                mime,
                "{}: {out}",
                to.as_str()
            );
        }
    }
}
