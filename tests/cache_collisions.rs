//! Caches shared by the sessions of one `HostState` cannot be steered: a text
//! chosen to collide with another session's under the caches' fast 64-bit
//! hash (issue 39: ~1.5k tries) leaves that session's output byte-identical
//! to a run on a fresh state (counts, masks, keys, snapshots are its own).
#![allow(clippy::unwrap_used, clippy::indexing_slicing)]

use serde_json::json;
use tracelite::tokens::{colliding_texts, text_hash, Estimator};
use tracelite::{compress_json, Config, Env, HostState, MemoryStore, Output};

/// A 9-10 KB test log holding a secret, as a tool output of `session`.
fn request(output: &str) -> String {
    let mut messages = vec![json!({"role": "user", "content": "Run the tests."})];
    for i in 0..6 {
        let id = format!("call_{i}");
        messages.push(json!({"role": "assistant", "content": null, "tool_calls": [{"id": id, "type": "function",
            "function": {"name": "bash", "arguments": json!({"command": "cargo test --workspace"}).to_string()}}]}));
        let content = if i == 0 {
            output.to_string()
        } else {
            format!("step {i} done")
        };
        messages.push(json!({"role": "tool", "tool_call_id": id, "content": content}));
    }
    json!({"model": "gpt-test", "messages": messages}).to_string()
}

fn tail() -> String {
    let mut tail =
        String::from("\nexport OPENAI_API_KEY=sk-proj-4fQ2b9XwLm8Zt0aP3kR7sVn1Yc6Ue5Jh\n");
    for i in 0..160 {
        tail.push_str(&format!(
            "test module_{i}::parses_input_{} ... ok ({} ms)\n",
            i * 7,
            i % 13
        ));
    }
    tail
}

fn compress(request: &str, session: &str, state: &mut HostState) -> Output {
    let config =
        Config::from_json_str(&format!(r#"{{"session":"{session}","budget":1500}}"#)).unwrap();
    compress_json(
        request,
        &config,
        Env {
            store: &mut MemoryStore::new(),
            counter: &Estimator,
            state,
            previous: None,
            format: None,
            known: Default::default(),
        },
    )
    .unwrap()
}

#[test]
fn a_colliding_text_of_another_session_does_not_steer_the_shared_caches() {
    let (victim, attacker) = colliding_texts(&tail());
    assert_ne!(victim, attacker);
    assert_eq!(
        (text_hash(victim.as_bytes()), victim.len()),
        (text_hash(attacker.as_bytes()), attacker.len())
    );
    let cold = compress(&request(&victim), "victim", &mut HostState::default());
    let mut shared = HostState::default();
    compress(&request(&attacker), "attacker", &mut shared);
    let warm = compress(&request(&victim), "victim", &mut shared);
    assert_eq!(warm.request, cold.request);
    assert_eq!(
        serde_json::to_string(&warm.report).unwrap(),
        serde_json::to_string(&cold.report).unwrap()
    );
    // The victim's own text, masked: not the attacker's head.
    assert!(!warm.request.contains(&attacker[..24]));
}
