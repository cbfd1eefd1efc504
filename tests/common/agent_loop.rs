//! The agent loop the per-turn measurements share (`tests/turn_cost.rs`,
//! `benches/turn.rs`, `examples/session_turns.rs`): a session with a system
//! prompt and a task, bash calls, and check outputs of a given length.
#![allow(dead_code)]

use tracelite::model::{Message, Role, ToolCall};
use tracelite::{Config, TraceLite};

/// A session holding the system prompt and the task.
pub fn session(config: Config) -> TraceLite {
    let mut tl = TraceLite::new(config);
    tl.add_message(Message::text(Role::System, "You are a coding agent."))
        .unwrap();
    tl.add_message(Message::text(
        Role::User,
        "Fix the failing test in src/parser.py. Do not touch the public API.",
    ))
    .unwrap();
    tl
}

/// Bash call number `t` running `command`.
pub fn bash(t: usize, command: &str) -> ToolCall {
    ToolCall {
        id: format!("c{t}"),
        name: "bash".into(),
        arguments: serde_json::json!({ "command": command }).to_string(),
    }
}

/// `lines` lines of a check's output at step `t`.
pub fn output(t: usize, lines: usize) -> String {
    (0..lines).map(|i| check_line(t, i)).collect()
}

/// Line `i` of a check's output at step `t`.
pub fn check_line(t: usize, i: usize) -> String {
    format!(
        "src/module_{}/file_{i}.py:{}: checked ok in {} ms\n",
        t % 17,
        (t * 31 + i) % 400,
        (t + i) % 90
    )
}
