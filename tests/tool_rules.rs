//! Per-tool rules (`tools`): the outputs of an excluded tool go through
//! every stage untouched (each stage alone, then the whole pipeline, in
//! each request format), though the same trajectory without the rule has
//! that stage change them; a tool's own spill cap replaces the computed one.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing,
    clippy::field_reassign_with_default
)]

use serde_json::{json, Value};
use tracelite::config::OpticalSwitch;
use tracelite::stage::{SharedCaches, Stage, StageContext};
use tracelite::tokens::Estimator;
use tracelite::{compress_json, Config, Env, HostState, MemoryStore, Output};

#[path = "common/trajectory.rs"]
mod trajectory;
use trajectory::{dense, Step};

/// An OpenAI Chat request of `steps` after a system prompt and the task.
fn chat(steps: &[Step]) -> String {
    trajectory::chat("gpt-4o", steps).to_string()
}

/// The same steps as an Anthropic Messages request.
fn anthropic(steps: &[Step]) -> String {
    let mut messages = vec![json!({"role": "user", "content": "Fix the failing test."})];
    for (i, (tool, args, out)) in steps.iter().enumerate() {
        messages.push(json!({"role": "assistant", "content": [
            {"type": "tool_use", "id": format!("t{i}"), "name": tool, "input": args}
        ]}));
        messages.push(json!({"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": format!("t{i}"), "content": out}
        ]}));
    }
    json!({"model": "claude-sonnet-4-5", "max_tokens": 1000, "messages": messages}).to_string()
}

/// The same steps as a Gemini request (responses answer calls by name).
fn gemini(steps: &[Step]) -> String {
    let mut contents = vec![json!({"role": "user", "parts": [{"text": "Fix the failing test."}]})];
    for (tool, args, out) in steps {
        contents.push(
            json!({"role": "model", "parts": [{"functionCall": {"name": tool, "args": args}}]}),
        );
        contents.push(json!({"role": "user", "parts": [
            {"functionResponse": {"name": tool, "response": {"output": out}}}
        ]}));
    }
    json!({"contents": contents}).to_string()
}

/// The same steps as an OpenAI Responses request.
fn responses(steps: &[Step]) -> String {
    let mut input = vec![json!({"role": "user", "content": "Fix the failing test."})];
    for (i, (tool, args, out)) in steps.iter().enumerate() {
        input.push(json!({"type": "function_call", "call_id": format!("r{i}"), "name": tool, "arguments": args.to_string()}));
        input.push(
            json!({"type": "function_call_output", "call_id": format!("r{i}"), "output": out}),
        );
    }
    json!({"model": "gpt-4o", "input": input}).to_string()
}

/// `lines` lines of plain output tagged `tag`.
fn output(tag: &str, lines: usize) -> String {
    (0..lines)
        .map(|i| format!("{tag} line {i}: a line of output the agent read at this step"))
        .collect::<Vec<_>>()
        .join("\n")
}

fn bash(command: &str) -> Value {
    json!({ "command": command })
}

/// A todo tool's output (what `excludeTools` keeps).
fn todo(n: usize) -> Step {
    (
        "todo",
        json!({"action": "list"}),
        output(&format!("todo {n}"), 60),
    )
}

/// Every stage off; `tools` set when `exclude`.
fn none(exclude: bool) -> Config {
    let mut c = Config::default();
    c.session = "tools".into();
    c.spill.enabled = false;
    c.dedup.enabled = false;
    c.phase.enabled = false;
    c.optical.enabled = OpticalSwitch::Off;
    c.compact.enabled = false;
    c.plan.enabled = false;
    if exclude {
        c.exclude_tools = vec!["todo".into()];
    }
    c
}

fn run(request: &str, config: &Config) -> Output {
    compress_json(
        request,
        config,
        Env::new(&mut MemoryStore::new(), &mut HostState::default()),
    )
    .unwrap()
}

/// The text of every tool result of `request` (any format), in order, by
/// reading it back in the neutral model.
fn results(request: &str) -> Vec<String> {
    let value: Value = serde_json::from_str(request).unwrap();
    let format = tracelite::formats::detect(&value).unwrap();
    let conv = tracelite::formats::parse(format, &value).unwrap();
    conv.observations()
        .into_iter()
        .map(|at| conv.tool_result(at).unwrap().text())
        .collect()
}

/// Runs `request` with and without the rule: without it the stage changes
/// the results at `touched`; with it they stay byte for byte, and the
/// results at `others` change still.
fn check(request: &str, without: &Config, with: &Config, touched: &[usize], others: &[usize]) {
    let original = results(request);
    let plain = results(&run(request, without).request);
    for &i in touched {
        assert_ne!(
            plain[i], original[i],
            "without the rule, result {i} changes"
        );
    }
    let ruled = run(request, with);
    let kept = results(&ruled.request);
    for &i in touched {
        assert_eq!(kept[i], original[i], "with the rule, result {i} stays");
    }
    for &i in others {
        assert_ne!(kept[i], original[i], "result {i} of another tool changes");
    }
}

#[test]
fn spilling_leaves_an_excluded_tools_output_whole() {
    let steps = vec![
        todo(0),
        ("bash", bash("cat big.log"), output("log", 600)),
        ("todo", json!({"action": "list"}), output("todo big", 600)),
    ];
    let spill = |exclude| {
        let mut c = none(exclude);
        c.spill.enabled = true;
        c
    };
    check(&chat(&steps), &spill(false), &spill(true), &[2], &[1]);
}

#[test]
fn a_tools_own_cap_replaces_the_computed_one() {
    // 60 lines: under the computed cap (2,560 tokens), over a cap of 200.
    let steps = vec![
        ("bash", bash("cat a.txt"), output("a", 60)),
        ("grep", json!({"pattern": "x"}), output("b", 60)),
        ("todo", json!({"action": "list"}), output("c", 60)),
    ];
    let mut c = none(false);
    c.spill.enabled = true;
    let request = chat(&steps);
    let original = results(&request);
    assert_eq!(
        results(&run(&request, &c).request),
        original,
        "all under the cap"
    );
    // A cap for bash, and one for the excluded todo: both spill, grep not.
    c.exclude_tools = vec!["todo".into()];
    c.spill.tool_caps.insert("bash".into(), 200);
    c.spill.tool_caps.insert("todo".into(), 200);
    let out = run(&request, &c);
    let after = results(&out.request);
    assert_eq!(after[1], original[1], "grep keeps the computed cap");
    for i in [0, 2] {
        assert!(
            after[i].len() < original[i].len() / 2 && after[i].contains("spill://tools/"),
            "{}",
            after[i]
        );
    }
    let excerpts = out.report.changes.iter().filter(|c| c.kind == "excerpt");
    assert!(excerpts.map(|c| c.tokens_after).all(|t| t <= 200 + 60));
}

#[test]
fn dedup_leaves_an_excluded_tools_output_whole() {
    // The todo list is shown again by the bash step after it: dedup would
    // remove its repeated lines from the todo output.
    let list = output("todo", 30);
    let steps = vec![
        ("todo", json!({"action": "list"}), list.clone()),
        ("bash", bash("cat TODO.md"), format!("{list}\nmore")),
        ("bash", bash("cat notes.md"), output("notes", 30)),
        ("bash", bash("cat notes.md"), output("notes", 30)),
    ];
    let dedup = |exclude| {
        let mut c = none(exclude);
        c.dedup.enabled = true;
        c.dedup.batched = false;
        c
    };
    check(&chat(&steps), &dedup(false), &dedup(true), &[0], &[2]);
}

#[test]
fn the_phase_clean_up_leaves_an_excluded_tools_output_whole() {
    // The todo list read twice: the first read is a rerun the clean-up clears.
    let steps = vec![
        todo(0),
        ("bash", bash("grep -rn parse_config ."), output("grep", 40)),
        todo(0),
        (
            "bash",
            bash("sed -i 's/strict=True/strict=False/' app/config.py"),
            String::new(),
        ),
        ("bash", bash("pytest -q"), output("test", 10)),
    ];
    let phase = |exclude| {
        let mut c = none(exclude);
        c.phase.enabled = true;
        c.window = 0;
        c.optical.batch = 1;
        c
    };
    check(&chat(&steps), &phase(false), &phase(true), &[0], &[1]);
}

#[test]
fn optical_snapshots_leave_an_excluded_tools_output_as_text() {
    let steps: Vec<Step> = (0..8)
        .map(|i| {
            let tool = if i % 2 == 0 { "todo" } else { "bash" };
            (tool, bash(&format!("cat f{i}.py")), dense(i))
        })
        .collect();
    let optical = |exclude| {
        let mut c = none(exclude);
        c.optical.enabled = OpticalSwitch::On;
        c
    };
    let request = chat(&steps);
    check(&request, &optical(false), &optical(true), &[0, 2], &[1]);
    let notes = &run(&request, &optical(true)).report.stages[3].notes;
    assert!(
        notes
            .iter()
            .any(|n| n.contains("2 outputs of excluded tools")),
        "{notes:?}"
    );
    // The planner is told they save nothing (the stage's demotion proposal).
    let proposed = |exclude| {
        let value: Value = serde_json::from_str(&request).unwrap();
        let conv =
            tracelite::formats::parse(tracelite::formats::FormatName::OpenaiChat, &value).unwrap();
        let config = optical(exclude);
        let (mut keys, mut redacted, mut activities) = Default::default();
        let caches = SharedCaches {
            keys: &mut keys,
            redacted: &mut redacted,
            activities: &mut activities,
        };
        let (mut store, mut state) = (MemoryStore::new(), Default::default());
        let mut cx = StageContext::new(&config, &Estimator, &mut store, caches, &mut state);
        tracelite::optical::Optical
            .propose(&conv, &mut cx)
            .unwrap()
            .unwrap()
    };
    let (all, rest) = (proposed(false), proposed(true));
    assert_eq!(all.len(), 5, "the observations outside the window");
    for (i, (a, r)) in all.iter().zip(&rest).enumerate() {
        assert!(*a > 0, "{i}: {all:?}");
        assert_eq!(*r, if i % 2 == 0 { 0 } else { *a }, "{i}: {rest:?}");
    }
}

/// Compaction only, at once (threshold 1, the last 2 messages kept).
fn compacting(exclude: bool) -> Config {
    let mut c = none(exclude);
    c.compact.enabled = true;
    c.compact.threshold = 1;
    c.compact.keep = 2;
    c.compact.planner = false;
    c.compact.min_saving = 0;
    c.compact.min_turns = 0;
    c.compact.detect_stages = false;
    c
}

/// The texts of the messages of an OpenAI Chat request.
fn texts(request: &str) -> Vec<String> {
    let v: Value = serde_json::from_str(request).unwrap();
    v["messages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["content"].as_str().unwrap_or_default().to_string())
        .collect()
}

#[test]
fn compaction_keeps_an_excluded_tools_output_word_for_word() {
    let steps = vec![
        ("bash", bash("ls"), output("ls", 20)),
        todo(1),
        ("bash", bash("cat a.py"), output("a", 20)),
        ("bash", bash("pytest -q"), output("test", 5)),
    ];
    let request = chat(&steps);
    let todo_text = output("todo 1", 60);
    let holds = |out: &Output| texts(&out.request).iter().any(|t| t.contains(&todo_text));
    let plain = run(&request, &compacting(false));
    assert!(plain.report.compaction.is_some());
    assert!(
        !holds(&plain),
        "without the rule the output is compacted away"
    );
    let mut state = HostState::default();
    let mut store = MemoryStore::new();
    let ruled = compress_json(
        &request,
        &compacting(true),
        Env::new(&mut store, &mut state),
    )
    .unwrap();
    assert!(ruled.report.compaction.is_some());
    let kept: Vec<String> = texts(&ruled.request)
        .into_iter()
        .filter(|t| t.starts_with(tracelite::compact::kept::KEPT_HEADER))
        .collect();
    assert_eq!(kept.len(), 1, "{kept:?}");
    assert!(kept[0].starts_with(&format!(
        "{}todo`; original: spill://tools/",
        tracelite::compact::kept::KEPT_HEADER
    )));
    assert!(kept[0].ends_with(&format!("]\n{todo_text}")), "{}", kept[0]);
    // A later compaction keeps it again, and the new one after it.
    let mut longer = steps.clone();
    longer.push(todo(2));
    longer.push(("bash", bash("cat b.py"), output("b", 20)));
    longer.push(("bash", bash("pytest -q"), output("test", 5)));
    let again = compress_json(
        &chat(&longer),
        &compacting(true),
        Env::new(&mut store, &mut state),
    )
    .unwrap();
    let kept: Vec<String> = texts(&again.request)
        .into_iter()
        .filter(|t| t.starts_with(tracelite::compact::kept::KEPT_HEADER))
        .collect();
    assert_eq!(kept.len(), 2, "{kept:?}");
    assert!(kept[0].ends_with(&todo_text) && kept[1].ends_with(&output("todo 2", 60)));
}

/// Every stage on, eagerly: the todo outputs would be spilled, deduped,
/// cleared, imaged and compacted; in each format they stay, and the
/// conversation is otherwise compressed.
#[test]
fn the_pipeline_leaves_an_excluded_tools_outputs_whole_in_every_format() {
    let list = output("todo", 700);
    let steps: Vec<Step> = vec![
        ("todo", json!({"action": "list"}), list.clone()),
        ("bash", bash("cat big.log"), output("log", 700)),
        ("todo", json!({"action": "list"}), list.clone()),
        ("bash", bash("cat f1.py"), dense(1)),
        ("todo", json!({"action": "show"}), dense(2)),
        ("bash", bash("cat f3.py"), dense(3)),
        ("bash", bash("pytest -q"), output("test", 5)),
        ("bash", bash("pytest -q"), output("test", 5)),
    ];
    let all = |exclude| {
        let mut c = Config::default();
        c.session = "tools".into();
        c.window = 2;
        c.optical.batch = 1;
        c.optical.enabled = OpticalSwitch::On;
        c.plan.enabled = false;
        c.dedup.batched = false;
        if exclude {
            c.exclude_tools = vec!["todo".into()];
        }
        c
    };
    for build in [chat, anthropic, gemini, responses] {
        let request = build(&steps);
        let original = results(&request);
        let without = results(&run(&request, &all(false)).request);
        for i in [0, 2, 4] {
            assert_ne!(without[i], original[i], "{request:.40}: result {i}");
        }
        let with = results(&run(&request, &all(true)).request);
        for i in [0, 2, 4] {
            assert_eq!(with[i], original[i], "{request:.40}: result {i}");
        }
        for i in [1, 3, 5] {
            assert_ne!(with[i], original[i], "{request:.40}: result {i}");
        }
        // With compaction at once, they stay word for word after the summary.
        let mut compact = all(true);
        compact.compact.threshold = 1;
        compact.compact.keep = 2;
        compact.compact.planner = false;
        compact.compact.min_saving = 0;
        let out = run(&request, &compact);
        assert!(out.report.compaction.is_some(), "{request:.40}");
        for text in [&list, &list, &dense(2)] {
            assert!(out.request.contains(&json_text(text)), "{request:.40}");
        }
    }
}

/// `text` as it appears inside a JSON string.
fn json_text(text: &str) -> String {
    let quoted = serde_json::to_string(text).unwrap();
    quoted[1..quoted.len() - 1].to_string()
}
