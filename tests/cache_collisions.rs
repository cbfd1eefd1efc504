//! Caches shared by the sessions of one `HostState` cannot be steered: a text
//! chosen to collide with another session's under the caches' fast 64-bit
//! hash (issue 39: ~1.5k tries) leaves that session's output byte-identical
//! to a run on a fresh state (counts, masks, keys, snapshots, dedup decisions,
//! excerpt layouts and activities are its own).
#![allow(
    clippy::unwrap_used,
    clippy::indexing_slicing,
    clippy::field_reassign_with_default
)]

mod common;

use serde_json::json;
use tracelite::hash::colliding_with;
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
    json!({"model": "gpt-4o", "messages": messages}).to_string()
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
    run(request, &config, state)
}

fn run(request: &str, config: &Config, state: &mut HostState) -> Output {
    compress_json(
        request,
        config,
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

/// `config` run on `request` in a fresh state, and in a state where
/// `attack` (another session's request, with `attack_config`) ran first:
/// (cold, warm).
fn cold_and_after(
    request: &str,
    config: &Config,
    attack: &str,
    attack_config: &Config,
) -> (Output, Output) {
    let cold = run(request, config, &mut HostState::default());
    let mut shared = HostState::default();
    run(attack, attack_config, &mut shared);
    let warm = run(request, config, &mut shared);
    (cold, warm)
}

fn assert_same(warm: &Output, cold: &Output) {
    assert_eq!(warm.request, cold.request);
    assert_eq!(
        serde_json::to_string(&warm.report).unwrap(),
        serde_json::to_string(&cold.report).unwrap()
    );
}

/// A request whose tool results are `outputs`, each after a `bash` call.
fn with_outputs(outputs: &[&str]) -> String {
    let mut messages = vec![json!({"role": "user", "content": "Run the tests."})];
    for (i, output) in outputs.iter().enumerate() {
        let id = format!("call_{i}");
        messages.push(json!({"role": "assistant", "content": null, "tool_calls": [{"id": id, "type": "function",
            "function": {"name": "bash", "arguments": json!({"command": "cargo test --workspace"}).to_string()}}]}));
        messages.push(json!({"role": "tool", "tool_call_id": id, "content": output}));
    }
    json!({"model": "gpt-4o", "messages": messages}).to_string()
}

/// Dedup's decisions were keyed by a 64-bit hash of the window's texts: an
/// attacker's observation colliding with the victim's made the victim's
/// observation the attacker's thinned text.
#[test]
fn a_colliding_observation_does_not_take_another_sessions_dedup_decision() {
    let (victim, attacker) = colliding_texts(&tail());
    let repeated: String = tail()
        .lines()
        .skip(2)
        .take(120)
        .collect::<Vec<_>>()
        .join("\n");
    let config = |session: &str| {
        Config::from_json_str(&format!(
            r#"{{"session":"{session}","budget":200000,"optical":{{"enabled":false}}}}"#
        ))
        .unwrap()
    };
    let (cold, warm) = cold_and_after(
        &with_outputs(&[&victim, &repeated]),
        &config("victim"),
        &with_outputs(&[&attacker, &repeated]),
        &config("attacker"),
    );
    assert!(
        cold.report.changes.iter().any(|c| c.kind == "dedup"),
        "the victim's observation is thinned"
    );
    assert!(!warm.request.contains(&attacker[..24]));
    assert_same(&warm, &cold);
}

/// The spill stage's layouts were keyed by the text's 64-bit hash and length
/// and a 64-bit hash of the settings, the session among them: a session name
/// and a text chosen to collide took another session's count (and so whether
/// its output spills).
#[test]
fn a_colliding_text_and_session_name_do_not_take_another_sessions_excerpt() {
    let (victim, attacker) = colliding_texts(&tail());
    assert_ne!(
        tracelite::tokens::estimate(&victim),
        tracelite::tokens::estimate(&attacker),
        "the texts must price differently for the reproducer to show"
    );
    let config = |session: &str| {
        Config::from_json_str(&format!(r#"{{"session":"{session}","budget":1500}}"#)).unwrap()
    };
    let victim_session = "victim-session-0123456789abcdefghij";
    // The settings as the old key hashed them; a session name whose
    // settings collide with the victim's (alphanumeric: a valid name).
    let old = |c: &Config| {
        format!(
            "{}|{}|{:?}|{}|{}|{}|{}|{}",
            c.result_cap(),
            c.spill.head_share,
            c.spill.error_patterns,
            c.spill.max_error_lines,
            c.session,
            c.spill.pointer_root,
            "estimate",
            c.redact.store
        )
    };
    let settings = old(&config(victim_session));
    let at = settings.find(victim_session).unwrap();
    let block = at.div_ceil(8);
    let forged = colliding_with(&settings, block, |b| b.is_ascii_alphanumeric());
    let attacker_session = &forged[at..at + victim_session.len()];
    assert_ne!(attacker_session, victim_session);
    assert_eq!(old(&config(attacker_session)), forged);
    assert_eq!(text_hash(forged.as_bytes()), text_hash(settings.as_bytes()));
    let (cold, warm) = cold_and_after(
        &request(&victim),
        &config(victim_session),
        &request(&attacker),
        &config(attacker_session),
    );
    assert!(cold.report.changes.iter().any(|c| c.kind == "excerpt"));
    assert_same(&warm, &cold);
}

/// Activities were keyed by 64-bit hashes of the call and its result: an
/// attacker's call colliding with the victim's edit (but no edit itself) made
/// the victim's edit not one, so its diagnosis was not cleared.
#[test]
fn a_colliding_call_does_not_take_another_sessions_activity() {
    let edit = json!({"command": "sed -i 's/strict=True/strict=False/' app/config.py"}).to_string();
    let junk = colliding_with(&edit, 1, |b| b.is_ascii_alphanumeric());
    assert_eq!(text_hash(junk.as_bytes()), text_hash(edit.as_bytes()));
    let output = |tag: &str| {
        (0..40)
            .map(|i| format!("{tag} line {i}: some diagnostic output that the agent read"))
            .collect::<Vec<_>>()
            .join("\n")
    };
    let request = |edit_args: &str| {
        let steps = [
            ("grep -rn parse_config .".to_string(), output("grep")),
            (
                "nl -ba app/config.py | sed -n '1,40p'".to_string(),
                output("view"),
            ),
            ("pytest -q".to_string(), output("test")),
        ];
        let mut messages = vec![json!({"role": "user", "content": "fix the bug"})];
        let mut calls: Vec<(String, String)> = steps
            .iter()
            .map(|(cmd, out)| (json!({ "command": cmd }).to_string(), out.clone()))
            .collect();
        calls.push((edit_args.to_string(), String::new()));
        calls.push((json!({"command": "pytest -q"}).to_string(), output("test")));
        for (i, (args, out)) in calls.iter().enumerate() {
            messages.push(json!({"role": "assistant", "content": null, "tool_calls": [{
                "id": format!("c{i}"), "type": "function", "function": {"name": "bash", "arguments": args}}]}));
            messages.push(json!({"role": "tool", "content": out, "tool_call_id": format!("c{i}")}));
        }
        json!({"model": "m", "messages": messages}).to_string()
    };
    let config = |session: &str| {
        let mut c = Config::default();
        c.session = session.into();
        c.spill.enabled = false;
        c.dedup.enabled = false;
        c.optical.enabled = tracelite::config::OpticalSwitch::Off;
        c.compact.enabled = false;
        c.window = 0;
        c.optical.batch = 1;
        c
    };
    let (cold, warm) = cold_and_after(
        &request(&edit),
        &config("victim"),
        &request(&junk),
        &config("attacker"),
    );
    assert!(
        cold.report.changes.iter().any(|c| c.kind == "tombstone"),
        "the edit clears the diagnosis"
    );
    assert_same(&warm, &cold);
}

/// The optical stage's proposals (whose reference lines hold the session's
/// pointers) were found under a 64-bit hash of the settings, the session
/// among them: a session name chosen to collide took another session's lines
/// for the same texts (its pointers in the victim's prompt).
#[test]
fn a_colliding_session_name_does_not_take_another_sessions_snapshot_lines() {
    let config =
        |session: &str| Config::from_json_str(&format!(r#"{{"session":"{session}"}}"#)).unwrap();
    let victim_session = "victim-session-0123456789abcdefghij";
    // The settings as the old key hashed them, and a session name that
    // makes them collide (alphanumeric: a valid name).
    let old = |c: &Config| {
        format!(
            "{:?}|{:?}|{}|{}",
            c.provider, c.optical, c.session, c.redact.enabled
        )
    };
    let settings = old(&config(victim_session));
    let at = settings.find(victim_session).unwrap();
    let forged = colliding_with(&settings, at.div_ceil(8), |b| b.is_ascii_alphanumeric());
    let attacker_session = &forged[at..at + victim_session.len()];
    assert_eq!(old(&config(attacker_session)), forged);
    assert_eq!(text_hash(forged.as_bytes()), text_hash(settings.as_bytes()));
    let request = common::reading_conversation(12);
    let (cold, warm) = cold_and_after(
        &request,
        &config(victim_session),
        &request,
        &config(attacker_session),
    );
    assert!(cold.report.changes.iter().any(|c| c.kind == "snapshot"));
    assert!(!warm.request.contains(attacker_session));
    assert_same(&warm, &cold);
}
