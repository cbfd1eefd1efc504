//! Agent trajectories built step by step, shared by the tests that compress
//! them (`tests/tool_rules.rs`, `tests/optical_stage.rs`, `tests/image_urls.rs`):
//! dense, code-like outputs and the OpenAI Chat request of a run of tool calls.
#![allow(dead_code)]

use serde_json::{json, Value};

/// One agent step: tool, arguments, output.
pub type Step = (&'static str, Value, String);

/// Dense, code-like output (many tokens per character, long lines): an image
/// of it costs well below half its text tokens.
pub fn dense(seed: usize) -> String {
    (0..40)
        .map(|i| {
            let n = seed * 131 + i * 17;
            format!(
                "    self.assertEqual(obj_{a}.get_{b}(x[{c}], y={d}), {{'k{e}': [{f}, {g}]}})  # case {i}\n",
                a = n % 97,
                b = n % 13,
                c = n % 7,
                d = n % 29,
                e = n % 11,
                f = n % 5,
                g = n % 3,
            )
        })
        .collect()
}

/// `n` bash calls, call `i` reading `f{i}.py` and answered by `output(i)`.
pub fn reads(n: usize, output: impl Fn(usize) -> String) -> Vec<Step> {
    (0..n)
        .map(|i| {
            (
                "bash",
                json!({ "command": format!("cat f{i}.py") }),
                output(i),
            )
        })
        .collect()
}

/// An OpenAI Chat request to `model` of `steps` after a system prompt and
/// the task; call `i` has the id `call_{i}`.
pub fn chat(model: &str, steps: &[Step]) -> Value {
    let mut messages = vec![
        json!({"role": "system", "content": "You are a coding agent."}),
        json!({"role": "user", "content": "Fix the failing test."}),
    ];
    for (i, (tool, args, out)) in steps.iter().enumerate() {
        messages.push(json!({
            "role": "assistant", "content": null,
            "tool_calls": [{"id": format!("call_{i}"), "type": "function",
                "function": {"name": tool, "arguments": args.to_string()}}]
        }));
        messages.push(json!({"role": "tool", "tool_call_id": format!("call_{i}"), "content": out}));
    }
    json!({"model": model, "messages": messages})
}
