//! The stateful `TraceLite` session: same output as the stateless pipeline,
//! pairing of calls and results, telemetry, errors.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)]

mod common;

use serde_json::{json, Value};
use tracelite::formats::FormatName;
use tracelite::model::{Extra, Message, Role, ToolCall};
use tracelite::{Config, ErrorCode, HostState, MemoryStore, TraceLite, Trajectory};

fn call(id: &str, name: &str, args: Value) -> ToolCall {
    ToolCall {
        id: id.into(),
        name: name.into(),
        arguments: args.to_string(),
    }
}

fn replay_base() -> Extra {
    let mut base = Extra::new();
    base.insert("model".into(), json!("replay"));
    base.insert("messages".into(), Value::Null);
    base
}

/// Feeds steps `0..upto` of a trajectory into a session, as an in-process agent would.
fn feed(tl: &mut TraceLite, trajectory: &Trajectory, upto: usize) {
    for i in 0..upto.min(trajectory.steps.len()) {
        feed_one(tl, trajectory, i);
    }
}

/// The session's requests are byte-identical to the stateless pipeline's on
/// the same history, turn after turn.
#[test]
#[cfg_attr(tracelite_no_traces, ignore = "needs ../shared/traces")]
fn same_bytes_as_the_stateless_pipeline() {
    let path = common::required_trace_files()
        .into_iter()
        .next()
        .expect("the first trajectory");
    let trajectory = common::load_trace(&path);
    let config = Config {
        session: "s1".into(),
        ..Config::default()
    };
    let mut tl = TraceLite::new(config.clone());
    if let Some(system) = &trajectory.system {
        tl.add_message(Message::text(Role::System, system.clone()))
            .unwrap();
    }
    tl.add_message(Message::text(Role::User, trajectory.task.clone()))
        .unwrap();
    let mut store = MemoryStore::new();
    let mut state = HostState::default();
    let turns = trajectory.steps.len().min(20);
    for t in 0..turns {
        if t > 0 {
            feed_one(&mut tl, &trajectory, t - 1);
        }
        let got = tl.assemble(FormatName::OpenaiChat, replay_base()).unwrap();
        let request = tracelite::trajectory_to_request(&trajectory, t, FormatName::OpenaiChat)
            .unwrap()
            .to_string();
        let want = common::compress_in(&request, &config, &mut store, &mut state);
        assert_eq!(got.request, want.request, "turn {t}");
        assert_eq!(got.report.tokens_after, want.report.tokens_after);
    }
    let tel = tl.telemetry();
    assert_eq!(tel.assembles, turns as u64);
    assert!(tel.total_tokens_sent <= tel.total_tokens_raw);
    assert!(tel.prefix.is_some());
}

/// Feeds step `i` (call id `call_<i>`, like `Trajectory::conversation_at`).
fn feed_one(tl: &mut TraceLite, trajectory: &Trajectory, i: usize) {
    let step = &trajectory.steps[i];
    let thought = step.thought.clone().unwrap_or_default();
    if step.tool == "message" {
        tl.add_message(Message::text(Role::Assistant, thought))
            .unwrap();
        tl.add_message(Message::text(Role::User, step.observation.clone()))
            .unwrap();
        return;
    }
    if !thought.is_empty() {
        tl.add_message(Message::text(Role::Assistant, thought))
            .unwrap();
    }
    let arguments = match &step.args {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    };
    let c = ToolCall {
        id: format!("call_{i}"),
        name: step.tool.clone(),
        arguments,
    };
    tl.process_step(c, step.observation.clone()).unwrap();
}

#[test]
#[cfg_attr(tracelite_no_traces, ignore = "needs ../shared/traces")]
fn a_whole_run_saves_tokens_and_reports_edits() {
    let path = common::required_trace_files()
        .into_iter()
        .nth(1)
        .expect("a second trajectory");
    let trajectory = common::load_trace(&path);
    let mut tl = TraceLite::new(Config::default());
    tl.add_message(Message::text(Role::User, trajectory.task.clone()))
        .unwrap();
    feed(&mut tl, &trajectory, trajectory.steps.len());
    let out = tl.assemble(FormatName::OpenaiChat, Extra::new()).unwrap();
    assert!(out.report.tokens_after < out.report.tokens_before);
    let tel = tl.telemetry();
    assert!(tel.edits > 0 && tel.first_edit_step.is_some(), "{tel:?}");
    assert!(tel.saved_by_stage["phase"] > 0 || tel.saved_by_stage["dedup"] > 0);
    assert!(tel.spill_blobs > 0 && tel.spill_bytes > 0);
    // Every pointer in the report reads back from the session's store.
    for change in out.report.changes.iter().filter(|c| c.pointer.is_some()) {
        let pointer = change.pointer.as_deref().unwrap();
        let (session, key) = pointer
            .strip_prefix("spill://")
            .unwrap()
            .split_once('/')
            .unwrap();
        use tracelite::SpillStore;
        assert!(!tl.store_mut().get(session, key).unwrap().is_empty());
    }
}

#[test]
fn thought_and_call_share_one_assistant_message() {
    let mut tl = TraceLite::new(Config::default());
    tl.add_message_json(&json!({"role": "system", "content": "be brief"}))
        .unwrap();
    tl.add_message_json(&json!({"role": "user", "content": "list files"}))
        .unwrap();
    tl.add_message(Message::text(Role::Assistant, "Let me look."))
        .unwrap();
    let s1 = tl
        .process_step(call("", "bash", json!({"command": "ls"})), "a.py\n")
        .unwrap();
    assert_eq!((s1.step, s1.call_id.as_str()), (1, "call_1"));
    let s2 = tl
        .process_step(
            call("x", "bash", json!({"command": "sed -i 's/a/b/' a.py"})),
            "",
        )
        .unwrap();
    assert_eq!(s2.edit.map(|e| e.target), Some(Some("a.py".into())));
    let out = tl.assemble(FormatName::OpenaiChat, Extra::new()).unwrap();
    let v: Value = serde_json::from_str(&out.request).unwrap();
    let roles: Vec<&str> = v["messages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["role"].as_str().unwrap())
        .collect();
    assert_eq!(
        roles,
        ["system", "user", "assistant", "tool", "assistant", "tool"]
    );
    assert_eq!(v["messages"][2]["content"], "Let me look.");
    assert_eq!(v["messages"][2]["tool_calls"][0]["id"], "call_1");
    let tel = tl.telemetry();
    assert_eq!((tel.steps, tel.messages, tel.edits), (2, 6, 1));
    assert_eq!(tel.first_edit_step, Some(2));
}

#[test]
fn calls_and_results_only_come_in_pairs() {
    let mut tl = TraceLite::new(Config::default());
    let err = tl
        .add_message_json(&json!({"role": "tool", "tool_call_id": "a", "content": "x"}))
        .unwrap_err();
    assert_eq!(err.code, ErrorCode::InvalidRequest);
    let err = tl
        .add_message_json(&json!({"role": "user"}))
        .map(|_| ())
        .and_then(|_| tl.add_message_json(&json!({"role": "wizard", "content": "x"})))
        .unwrap_err();
    assert!(err.path.starts_with("message"), "{err}");
    tl.process_step(call("a", "bash", json!({})), "x").unwrap();
    let err = tl
        .process_step(call("a", "bash", json!({})), "y")
        .unwrap_err();
    assert_eq!(
        (err.code, err.path.as_str()),
        (ErrorCode::InvalidToolCall, "toolCall.id")
    );
    let err = tl.process_step(call("b", "", json!({})), "y").unwrap_err();
    assert_eq!(err.path, "toolCall.name");
    assert_eq!(tl.telemetry().steps, 1);
}

/// Past `limits.maxHistoryBytes` the session spills older outputs in place,
/// each with the cap of its tool: a tool in `excludeTools` keeps its output
/// word for word (the stages leave it alone too), another tool's goes
/// behind a pointer.
#[test]
fn history_bound_spills_with_each_tools_cap() {
    let config = Config::from_json(json!({
        "budget": 16000,
        "window": 1,
        "excludeTools": ["memory"],
        "limits": {"maxHistoryBytes": 40_000}
    }))
    .unwrap();
    let mut tl = TraceLite::new(config);
    let output = |t: usize| -> String {
        (0..600)
            .map(|i| format!("step {t} line {i}: some output\n"))
            .collect()
    };
    for t in 0..8 {
        let name = if t % 2 == 0 { "memory" } else { "bash" };
        let args = json!({"command": format!("run {t}")});
        tl.process_step(call(&format!("c{t}"), name, args), output(t))
            .unwrap();
    }
    let mut spilled = [0, 0];
    for step in tl.conversation().steps() {
        let t: usize = step.call.id[1..].parse().unwrap();
        let text = step.result.expect("every call has its result").text();
        let memory = step.call.name == "memory";
        if text != output(t) {
            assert!(text.contains("spill://"), "{text}");
            spilled[usize::from(memory)] += 1;
        }
    }
    assert_eq!(spilled[1], 0, "memory outputs are never spilled");
    assert!(
        spilled[0] >= 2,
        "older bash outputs are spilled: {spilled:?}"
    );
}
