//! The optical stage through `compress`: which observations become images,
//! where the images go, what the report says, recoverability, batching and
//! prefix stability, determinism, and "never worse than doing nothing".
#![allow(
    clippy::indexing_slicing,
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic
)]

use serde_json::{json, Value};
use tracelite::config::Provider;
use tracelite::spill::SpillStore;
use tracelite::tokens::Estimator;
use tracelite::{compress_json, Config, Env, HostState, MemoryStore};

#[path = "common/trajectory.rs"]
mod trajectory;
use trajectory::dense;

/// An OpenAI Chat request with `n` tool calls answered by `outputs(i)`.
fn request(n: usize, outputs: impl Fn(usize) -> String) -> String {
    trajectory::chat("gpt-4o", &trajectory::reads(n, outputs)).to_string()
}

fn config(provider: Provider) -> Config {
    let mut c = Config {
        provider,
        ..Config::default()
    };
    c.spill.enabled = false;
    c.dedup.enabled = false;
    c.phase.enabled = false;
    c.compact.enabled = false;
    // The stage's own behaviour, in fixed batches (tests/plan.rs tests the planner).
    c.plan.enabled = false;
    c
}

fn tool_contents(out: &Value) -> Vec<Value> {
    out["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["role"] == "tool")
        .map(|m| m["content"].clone())
        .collect()
}

#[test]
fn old_observations_become_images_in_a_user_message_and_stay_recoverable() {
    let req = request(7, dense);
    let mut store = MemoryStore::new();
    let c = config(Provider::Openai);
    let out = compress_json(&req, &c, Env::new(&mut store, &mut HostState::default())).unwrap();
    let emitted: Value = serde_json::from_str(&out.request).unwrap();
    // 7 observations, window 3 → 4 outside, batch 3 → the oldest 3 are rendered.
    let snaps: Vec<_> = out
        .report
        .changes
        .iter()
        .filter(|ch| ch.kind == "snapshot")
        .collect();
    assert_eq!(snaps.len(), 3, "{:#?}", out.report);
    let contents = tool_contents(&emitted);
    for (i, content) in contents.iter().enumerate() {
        let text = content.as_str().unwrap();
        if i < 3 {
            assert!(
                text.starts_with('[') && text.contains("spill://default/snapshot-"),
                "{text}"
            );
            assert!(!text.contains('\n'), "the reference is one line");
        } else {
            assert_eq!(text, dense(i), "observation {i} stays verbatim");
        }
    }
    // Images follow the run of tool messages in a user message (Chat accepts them only there).
    let messages = emitted["messages"].as_array().unwrap();
    let users: Vec<&Value> = messages
        .iter()
        .filter(|m| m["role"] == "user" && m["content"].is_array())
        .collect();
    assert_eq!(users.len(), 3);
    for u in users {
        for part in u["content"].as_array().unwrap() {
            assert_eq!(part["type"], "image_url");
            assert!(part["image_url"]["url"]
                .as_str()
                .unwrap()
                .starts_with("data:image/png;base64,iVBORw0KGgo"));
            assert_eq!(part["image_url"]["detail"], "high");
        }
    }
    // Tool calls untouched and in order.
    let calls: Vec<&str> = messages
        .iter()
        .filter_map(|m| m["tool_calls"][0]["function"]["arguments"].as_str())
        .collect();
    assert_eq!(calls.len(), 7);
    assert!(calls
        .iter()
        .enumerate()
        .all(|(i, a)| a.contains(&format!("f{i}.py"))));
    // The report gives tokens and the ratio; the original text is one pointer away.
    for (i, ch) in snaps.iter().enumerate() {
        assert!(ch.tokens_after as f64 <= ch.tokens_before as f64 / c.optical.ratio);
        assert!(
            ch.detail.contains("ratio") && ch.detail.contains("image"),
            "{}",
            ch.detail
        );
        let pointer = ch.pointer.as_deref().unwrap();
        let key = pointer.rsplit('/').next().unwrap();
        assert_eq!(store.get("default", key).unwrap(), dense(i));
        assert!(out.report.spills.iter().any(|s| s.pointer == pointer));
    }
    let stage = &out.report.stages[3];
    assert!(stage.tokens_after < stage.tokens_before);
    assert!(stage.notes[0].contains("3 rendered"), "{:?}", stage.notes);
}

#[test]
fn batches_keep_the_prefix_byte_identical_until_the_next_batch() {
    let c = config(Provider::Anthropic);
    let mut state = HostState::default();
    let mut store = MemoryStore::new();
    let mut previous: Option<String> = None;
    let mut rendered_at = Vec::new();
    for n in 1..=12 {
        let req = request(n, dense);
        let out = compress_json(
            &req,
            &c,
            Env {
                store: &mut store,
                counter: &Estimator,
                state: &mut state,
                previous: previous.as_deref(),
                format: None,
                known: Default::default(),
            },
        )
        .unwrap();
        let rendered = out
            .report
            .changes
            .iter()
            .filter(|ch| ch.kind == "snapshot")
            .count();
        rendered_at.push(rendered);
        if let (Some(prev), Some(prefix)) = (&previous, &out.report.prefix) {
            let crossed = rendered != rendered_at[rendered_at.len() - 2];
            // Without a new batch, the previous request (minus its closing `]}`) is a prefix.
            if !crossed {
                assert!(prefix.shared_bytes >= prev.len() - 2, "n={n}");
            } else {
                assert!(prefix.shared_bytes < prev.len() - 2, "n={n}");
            }
        }
        previous = Some(out.request);
    }
    // window 3, batch 3: images appear in steps of 3.
    assert_eq!(rendered_at, [0, 0, 0, 0, 0, 3, 3, 3, 6, 6, 6, 9]);
    assert!(
        state.optical.snapshots.hits > 0,
        "later turns reuse earlier renders"
    );
}

#[test]
fn output_is_deterministic_and_independent_of_the_cache() {
    let req = request(9, dense);
    for provider in [
        Provider::Anthropic,
        Provider::Openai,
        Provider::OpenaiPatch,
        Provider::Gemini,
        Provider::Qwen,
    ] {
        let c = config(provider);
        let a = compress_json(
            &req,
            &c,
            Env::new(&mut MemoryStore::new(), &mut HostState::default()),
        )
        .unwrap();
        let mut state = HostState::default();
        let mut store = MemoryStore::new();
        let mut run = || {
            compress_json(
                &req,
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
            .unwrap()
        };
        let b = run();
        let cached = run();
        assert_eq!(a.request, b.request, "{provider:?}");
        assert_eq!(a.request, cached.request, "{provider:?}");
        assert!(
            a.report.changes.iter().any(|ch| ch.kind == "snapshot"),
            "{provider:?}: {:#?}",
            a.report.stages[3]
        );
    }
}

#[test]
fn never_worse_sparse_short_and_unrenderable_output_stays_text() {
    let outputs = |i: usize| match i % 3 {
        // Few tokens: no image is cheap enough.
        0 => "ok".to_string(),
        // Sparse: one long line of few tokens among blank space.
        1 => format!("{}\n{}", "x".repeat(150), "y ".repeat(10)),
        // Glyphs the font lacks.
        _ => "日本語のテキスト、表示できない文字ばかり。\n".repeat(30),
    };
    let req = request(9, outputs);
    for provider in [Provider::Anthropic, Provider::Openai, Provider::Gemini] {
        let out = compress_json(
            &req,
            &config(provider),
            Env::new(&mut MemoryStore::new(), &mut HostState::default()),
        )
        .unwrap();
        assert!(
            out.report.changes.is_empty(),
            "{provider:?}: {:#?}",
            out.report.changes
        );
        assert_eq!(out.report.tokens_after, out.report.tokens_before);
        let note = &out.report.stages[3].notes[0];
        assert!(note.contains("0 rendered"), "{note}");
        assert!(note.contains("2 have too many glyphs missing"), "{note}");
    }
}

#[test]
fn the_image_cap_and_the_switch_are_respected() {
    let req = request(12, dense);
    let mut c = config(Provider::Anthropic);
    c.optical.max_images = 2;
    let out = compress_json(
        &req,
        &c,
        Env::new(&mut MemoryStore::new(), &mut HostState::default()),
    )
    .unwrap();
    let images = out.request.matches("data:image/png;base64,").count();
    assert!(images <= 2 && images > 0, "{images}");
    c.optical.enabled = tracelite::config::OpticalSwitch::Off;
    let off = compress_json(
        &req,
        &c,
        Env::new(&mut MemoryStore::new(), &mut HostState::default()),
    )
    .unwrap();
    let (a, b): (Value, Value) = (
        serde_json::from_str(&off.request).unwrap(),
        serde_json::from_str(&req).unwrap(),
    );
    assert!(a == b, "optical off leaves the request unchanged");
}

#[test]
fn options_are_validated_by_name() {
    for (opts, path) in [
        (json!({"optical": {"bitDepth": 3}}), "optical.bitDepth"),
        (json!({"optical": {"fontPx": 70}}), "optical.fontPx"),
        (json!({"optical": {"minFontPx": 13}}), "optical.minFontPx"),
        (json!({"optical": {"lineGap": 5}}), "optical.lineGap"),
        (json!({"optical": {"minColumns": 0}}), "optical.minColumns"),
        (json!({"optical": {"batch": 0}}), "optical.batch"),
    ] {
        let e = Config::from_json(opts).unwrap_err();
        assert_eq!(e.path, path);
    }
}

/// Mostly short lines under a few long ones (a diff, a listing): line by
/// line, most cells are blank and the image costs too much for Anthropic; run
/// together (breaks marked `»`) every row is full and it pays.
fn short_lines(seed: usize) -> String {
    (0..120)
        .map(|i| {
            let n = (seed * 31 + i * 7) % 997;
            if i % 8 == 0 {
                format!(
                    "    assert parse_{n}(x[{}], mode={}) == expected_{n}  # long\n",
                    i % 7,
                    i % 5
                )
            } else {
                format!("k{n}={};\n", (i * 13 + seed) % 89)
            }
        })
        .collect()
}

#[test]
fn short_lines_are_reflowed_when_line_by_line_costs_too_much() {
    let req = request(6, short_lines);
    let mut c = config(Provider::Anthropic);
    c.optical.reflow = false;
    let off = compress_json(
        &req,
        &c,
        Env::new(&mut MemoryStore::new(), &mut HostState::default()),
    )
    .unwrap();
    assert!(off.report.changes.is_empty(), "{:#?}", off.report.changes);
    c.optical.reflow = true;
    let on = compress_json(
        &req,
        &c,
        Env::new(&mut MemoryStore::new(), &mut HostState::default()),
    )
    .unwrap();
    assert_eq!(on.report.changes.len(), 3, "{:#?}", on.report.changes);
    for change in &on.report.changes {
        assert!(change.detail.contains("reflowed"), "{}", change.detail);
        assert!(
            change.tokens_after * 2 <= change.tokens_before,
            "{change:?}"
        );
    }
    let out: Value = serde_json::from_str(&on.request).unwrap();
    let first = tool_contents(&out)[0].to_string();
    assert!(first.contains("line breaks marked »"), "{first}");
    // The placeholder counts the observation's lines, not the one reflowed line.
    assert!(first.contains("[120 lines of output shown as "), "{first}");
    // Each change indexes the emitted `messages` (the system message included).
    for change in &on.report.changes {
        let m = &out["messages"][change.message];
        assert_eq!(m["role"], "tool", "{change:?}");
        assert!(m["content"].to_string().contains("shown as"), "{m}");
    }
    assert!(on.report.tokens_after < off.report.tokens_after);
}

#[test]
fn live_views_can_stay_text_until_their_file_is_edited() {
    // Views of f0..f5, an edit of f0.py, then views of g7..g11: twelve
    // observations, nine out of the window (window 3, batches of 3).
    let mut messages = vec![json!({"role": "user", "content": "Fix the failing test."})];
    for i in 0..12 {
        let command = match i {
            0..=5 => format!("cat f{i}.py"),
            6 => "sed -i 's/a/b/' f0.py".to_string(),
            _ => format!("cat g{i}.py"),
        };
        messages.push(json!({
            "role": "assistant", "content": null,
            "tool_calls": [{"id": format!("call_{i}"), "type": "function",
                "function": {"name": "bash", "arguments": json!({ "command": command }).to_string()}}]
        }));
        let output = if i == 6 { String::new() } else { dense(i) };
        messages
            .push(json!({"role": "tool", "tool_call_id": format!("call_{i}"), "content": output}));
    }
    let req = json!({"model": "gpt-4o", "messages": messages}).to_string();
    let rendered = |c: &Config| {
        let out = compress_json(
            &req,
            c,
            Env::new(&mut MemoryStore::new(), &mut HostState::default()),
        )
        .unwrap();
        let v: Value = serde_json::from_str(&out.request).unwrap();
        let contents = tool_contents(&v);
        (0..12)
            .filter(|&i| {
                contents[i]
                    .as_str()
                    .is_some_and(|t| t != dense(i) && i != 6)
            })
            .collect::<Vec<usize>>()
    };
    let mut c = config(Provider::Openai);
    assert_eq!(rendered(&c), vec![0, 1, 2, 3, 4, 5, 7, 8]);
    c.optical.keep_live_views = true;
    c.optical.max_live_views = 0;
    // Only the view of the edited file is rendered; the others may be quoted.
    assert_eq!(rendered(&c), vec![0]);
    // Bounded: the newest live views stay text, the older ones are rendered.
    c.optical.max_live_views = 2;
    assert_eq!(rendered(&c), vec![0, 1, 2, 3, 4, 5]);
    c.optical.max_live_views = 1;
    assert_eq!(rendered(&c), vec![0, 1, 2, 3, 4, 5, 7]);
}

#[test]
fn snapshot_references_repeat_the_critical_lines_as_text() {
    let failing = |i: usize| {
        format!(
            "{}Traceback (most recent call last):\n  File \"t.py\", line 3\nValueError: bad input {i}40\n<returncode>1</returncode>",
            dense(i)
        )
    };
    let req = request(7, failing);
    let out = compress_json(
        &req,
        &config(Provider::Openai),
        Env::new(&mut MemoryStore::new(), &mut HostState::default()),
    )
    .unwrap();
    let v: Value = serde_json::from_str(&out.request).unwrap();
    let contents = tool_contents(&v);
    let rendered: Vec<&str> = contents
        .iter()
        .filter_map(Value::as_str)
        .filter(|t| t.contains("shown as"))
        .collect();
    assert!(!rendered.is_empty());
    for (i, text) in contents.iter().enumerate().take(rendered.len()) {
        let text = text.as_str().unwrap();
        assert!(
            text.ends_with(&format!("\nValueError: bad input {i}40\nexit code 1")),
            "{text}"
        );
    }
}
