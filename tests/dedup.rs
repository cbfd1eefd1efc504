//! Stage 2 (dedup) through the public pipeline: what is removed, from where,
//! the marker, recoverability, stability across turns.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing,
    clippy::field_reassign_with_default
)]

mod common;

use serde_json::{json, Value};
use tracelite::stage::Schedule;
use tracelite::{compress_json, Config, Env, HostState, MemoryStore, SpillStore};

/// Config with only dedup on.
fn only_dedup(window: usize) -> Config {
    let mut c = Config::default();
    c.window = window;
    c.session = "dd".into();
    c.spill.enabled = false;
    c.phase.enabled = false;
    c.optical.enabled = tracelite::config::OpticalSwitch::Off;
    c.compact.enabled = false;
    c
}

/// An OpenAI Chat request with one bash step per observation.
fn request(observations: &[&str]) -> String {
    let mut messages = vec![json!({"role": "user", "content": "fix it"})];
    for (i, obs) in observations.iter().enumerate() {
        messages.push(
            json!({"role": "assistant", "content": null, "tool_calls": [{
                "id": format!("c{i}"), "type": "function",
                "function": {"name": "bash", "arguments": format!("{{\"command\":\"step {i}\"}}")}
            }]}),
        );
        messages.push(json!({"role": "tool", "content": obs, "tool_call_id": format!("c{i}")}));
    }
    json!({"model": "m", "messages": messages}).to_string()
}

fn pointer_key(text: &str) -> (String, String) {
    let at = text.find("spill://").expect("pointer");
    let rest = &text[at + "spill://".len()..];
    let end = rest.find(']').unwrap();
    let (session, key) = rest[..end].split_once('/').unwrap();
    (session.to_string(), key.to_string())
}

/// Shared by A and B: long enough that removing it pays for the marker.
const SHARED: &str = "  File \"/repo/app/config.py\", line 41, in parse_config
    value = settings.lookup(section, key, default=None, strict=True)
  File \"/repo/app/settings.py\", line 118, in lookup
    raise KeyError(f\"missing setting {section}.{key} in {self.path}\")
";
const A: &str = "def handler(request):
    return compute(request.body)
ok
  File \"/repo/app/config.py\", line 41, in parse_config
    value = settings.lookup(section, key, default=None, strict=True)
  File \"/repo/app/settings.py\", line 118, in lookup
    raise KeyError(f\"missing setting {section}.{key} in {self.path}\")
";
const B: &str = "Traceback (most recent call last):
  File \"/repo/app/config.py\", line 41, in parse_config
    value = settings.lookup(section, key, default=None, strict=True)
  File \"/repo/app/settings.py\", line 118, in lookup
    raise KeyError(f\"missing setting {section}.{key} in {self.path}\")
KeyError: 'name'
";

#[test]
fn lines_repeated_by_the_newest_leave_earlier_observations_with_a_marker() {
    let req = request(&[A, B]);
    let mut store = MemoryStore::new();
    let out = compress_json(
        &req,
        &only_dedup(3),
        Env::new(&mut store, &mut HostState::default()),
    )
    .unwrap();
    let texts = common::tool_texts(&out.request);
    // The newest observation is never touched.
    assert_eq!(texts[1], B);
    // The repeated line left the earlier one; short lines (`ok`) stay.
    assert!(A.ends_with(SHARED));
    assert!(!texts[0].contains("settings.lookup"), "{}", texts[0]);
    assert!(texts[0].starts_with("def handler(request):\n    return compute(request.body)\nok\n"));
    let marker = texts[0].lines().last().unwrap();
    assert!(
        marker.starts_with(
            "[4 duplicate lines removed; they appear in step 2; original: spill://dd/dedup-"
        ),
        "{marker}"
    );
    // The original is recoverable byte for byte through the pointer.
    let (session, key) = pointer_key(marker);
    assert_eq!(store.get(&session, &key).unwrap(), A);
    // The report carries the change with the same pointer and the tokens saved.
    let changes: Vec<_> = out
        .report
        .changes
        .iter()
        .filter(|c| c.kind == "dedup")
        .collect();
    assert_eq!(changes.len(), 1);
    assert_eq!(changes[0].message, 2);
    assert!(marker.contains(changes[0].pointer.as_deref().unwrap()));
}

#[test]
fn tool_calls_and_user_text_are_never_deduplicated() {
    let line = "    value = settings.lookup(section, key, default=None, strict=True)";
    let mut v: Value = serde_json::from_str(&request(&[A, B])).unwrap();
    v["messages"][0]["content"] = json!(line);
    v["messages"][1]["tool_calls"][0]["function"]["arguments"] =
        json!(json!({"command": line}).to_string());
    let req = v.to_string();
    let out = compress_json(
        &req,
        &only_dedup(3),
        Env::new(&mut MemoryStore::new(), &mut HostState::default()),
    )
    .unwrap();
    let o: Value = serde_json::from_str(&out.request).unwrap();
    assert_eq!(o["messages"][0], v["messages"][0]);
    assert_eq!(o["messages"][1], v["messages"][1]);
    assert_eq!(o["messages"][3], v["messages"][3]);
}

#[test]
fn only_observations_inside_the_window_are_compared() {
    // With window 2 only the observation right before the newest is compared.
    let filler = "nothing in common here at all\n";
    let req = request(&[A, filler, B]);
    let out = compress_json(
        &req,
        &only_dedup(2),
        Env::new(&mut MemoryStore::new(), &mut HostState::default()),
    )
    .unwrap();
    assert_eq!(common::tool_texts(&out.request)[0], A);
    // With window 3, the first one shares the window with B.
    let out = compress_json(
        &req,
        &only_dedup(3),
        Env::new(&mut MemoryStore::new(), &mut HostState::default()),
    )
    .unwrap();
    assert!(common::tool_texts(&out.request)[0].contains("appear in step 3"));
    // Window 1 (or 0) means nothing is compared.
    let out = compress_json(
        &request(&[A, B]),
        &only_dedup(1),
        Env::new(&mut MemoryStore::new(), &mut HostState::default()),
    )
    .unwrap();
    assert_eq!(out.report.tokens_before, out.report.tokens_after);
}

#[test]
fn disabled_and_short_lines() {
    let mut c = only_dedup(3);
    c.dedup.enabled = false;
    let req = request(&[A, B]);
    let out = compress_json(
        &req,
        &c,
        Env::new(&mut MemoryStore::new(), &mut HostState::default()),
    )
    .unwrap();
    assert_eq!(out.request, req);
    // Raising the threshold above the repeated line's length keeps it.
    let mut c = only_dedup(3);
    c.dedup.min_line_chars = 100;
    let out = compress_json(
        &req,
        &c,
        Env::new(&mut MemoryStore::new(), &mut HostState::default()),
    )
    .unwrap();
    assert_eq!(out.request, req);
}

#[test]
fn never_applied_when_the_marker_costs_more_than_it_saves() {
    // A single short repeated line saves fewer tokens than the marker costs.
    let req = request(&["abcdefg\n", "abcdefg\n"]);
    let out = compress_json(
        &req,
        &only_dedup(3),
        Env::new(&mut MemoryStore::new(), &mut HostState::default()),
    )
    .unwrap();
    assert_eq!(out.request, req);
    assert!(out.report.changes.is_empty());
}

#[test]
fn idempotent_and_deterministic() {
    let req = request(&[A, B, A, B]);
    let c = only_dedup(3);
    let first = compress_json(
        &req,
        &c,
        Env::new(&mut MemoryStore::new(), &mut HostState::default()),
    )
    .unwrap();
    let again = compress_json(
        &req,
        &c,
        Env::new(&mut MemoryStore::new(), &mut HostState::default()),
    )
    .unwrap();
    assert_eq!(first.request, again.request);
    // Running the stage on its own output changes nothing.
    let twice = compress_json(
        &first.request,
        &c,
        Env::new(&mut MemoryStore::new(), &mut HostState::default()),
    )
    .unwrap();
    assert_eq!(twice.request, first.request);
}

/// Same history at turn t and t+1. Unbatched: only the last `window - 1`
/// observations of turn t may differ, so everything before them is a shared
/// prefix. Batched (the default): turn t's observations change only on the
/// turns a batch leaves the window, and then only those within reach of the
/// newly settled ones.
#[test]
#[cfg_attr(tracelite_no_traces, ignore = "needs ../shared/traces")]
fn turn_after_turn_only_the_window_changes() {
    for batched in [false, true] {
        prefix_stays_between_turns(batched);
    }
}

fn prefix_stays_between_turns(batched: bool) {
    let path = common::required_trace_files().remove(0);
    let trajectory = common::load_trace(&path);
    let window = 3;
    let mut c = only_dedup(window);
    c.dedup.batched = batched;
    let mut store = MemoryStore::new();
    let mut state = HostState::default();
    let mut previous: Option<Vec<String>> = None;
    let mut untouched_turns = 0;
    let turns = trajectory.steps.len().min(25);
    let mut deduped = 0;
    for t in 1..turns {
        let req = tracelite::trajectory_to_request(
            &trajectory,
            t,
            tracelite::formats::FormatName::OpenaiChat,
        )
        .unwrap()
        .to_string();
        let out = common::compress_in(&req, &c, &mut store, &mut state);
        deduped += out.report.changes.len();
        let texts = common::tool_texts(&out.request);
        if let Some(prev) = &previous {
            let frozen = if !batched {
                prev.len().saturating_sub(window - 1)
            } else if Schedule::fixed(&c, prev.len()).settled(prev.len())
                == Schedule::fixed(&c, texts.len()).settled(texts.len())
            {
                untouched_turns += 1;
                prev.len()
            } else {
                Schedule::fixed(&c, prev.len())
                    .settled(prev.len())
                    .saturating_sub(window - 1)
            };
            assert_eq!(
                prev[..frozen],
                texts[..frozen],
                "turn {t}, batched {batched}"
            );
        }
        previous = Some(texts);
    }
    assert!(
        !batched || untouched_turns >= 10,
        "{untouched_turns} turns without a change"
    );
    assert!(
        deduped > 0,
        "no dedup in {} turns of {}",
        turns,
        path.display()
    );
}

/// Issue 38 item 6: batched dedup (the default) and the prompt prefix, turn by
/// turn, on near-identical outputs. While the recent window fills (turns
/// 2 ..= window) each arrival thins the earlier ones, so the prefix changes;
/// from then on earlier observations change only on the turns a batch of
/// `optical.batch` leaves the window, and stay byte-identical in between.
#[test]
fn batched_dedup_acts_while_the_window_fills_then_only_at_batches() {
    let mut c = only_dedup(3);
    c.optical.batch = 3;
    assert!(c.dedup.batched, "the default");
    let outputs: Vec<String> = (0..12)
        .map(|i| format!("run {i}\n{SHARED}{}", "passed: 41, failed: 1\n"))
        .collect();
    let outputs: Vec<&str> = outputs.iter().map(String::as_str).collect();
    let mut store = MemoryStore::new();
    let mut state = HostState::default();
    let mut previous: Vec<String> = Vec::new();
    let mut changed_turns = Vec::new();
    for t in 1..=outputs.len() {
        let req = request(&outputs[..t]);
        let texts =
            common::tool_texts(&common::compress_in(&req, &c, &mut store, &mut state).request);
        if texts[..previous.len()] != previous[..] {
            changed_turns.push(t);
        }
        previous = texts;
    }
    // Window 3, batches of 3: the fill (turns 2, 3), then turns 6, 9, 12.
    assert_eq!(changed_turns, [2, 3, 6, 9, 12]);
    // Unbatched, every turn edits the observation before the newest.
    c.dedup.batched = false;
    let (mut store, mut state, mut previous) =
        (MemoryStore::new(), HostState::default(), Vec::new());
    let mut every = 0;
    for t in 1..=outputs.len() {
        let texts = common::tool_texts(
            &common::compress_in(&request(&outputs[..t]), &c, &mut store, &mut state).request,
        );
        every += usize::from(texts[..previous.len()] != previous[..]);
        previous = texts;
    }
    assert_eq!(every, outputs.len() - 1);
}
