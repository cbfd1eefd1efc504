//! Compaction (stage 5): triggers, stage boundaries on the shared traces, the
//! constraint archive, the summary, re-application, the host summarizer
//! hand-off and the no-orphan property on every trajectory.
#![allow(
    clippy::indexing_slicing,
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic
)]

mod common;

use std::collections::HashSet;

use serde_json::{json, Value};
use tracelite::compact::calls::{CallLog, CALL_LOG_HEADER};
use tracelite::compact::constraints::ARCHIVE_HEADER;
use tracelite::compact::summary::SUMMARY_MARK;
use tracelite::compact::trigger::{stage_boundaries, step_activities};
use tracelite::compact::{adopt_summary, validate_summary};
use tracelite::formats::{self, emit, FormatName};
use tracelite::model::{Conversation, Message, PartKind, Role};
use tracelite::stage::CompactionKind;
use tracelite::tokens::Estimator;
use tracelite::{
    compress_json, Config, Env, HostState, MemoryStore, Output, SpillStore, Trajectory,
};

fn request(conv: &Conversation) -> String {
    serde_json::to_string(&emit(FormatName::OpenaiChat, conv)).unwrap()
}

fn run(req: &str, config: &Config, store: &mut MemoryStore, state: &mut HostState) -> Output {
    compress_json(
        req,
        config,
        Env {
            store,
            counter: &Estimator,
            state,
            previous: None,
            format: None,
            known: Default::default(),
        },
    )
    .unwrap()
}

/// Compaction tests isolate stage 5: the earlier stages are off unless a test turns them on.
fn config(mut v: Value) -> Config {
    for stage in ["dedup", "phase", "optical"] {
        if v.get(stage).is_none() {
            v[stage] = json!({"enabled": false});
        }
    }
    Config::from_json(v).unwrap()
}

fn compact_notes(out: &Output) -> Vec<String> {
    out.report.stages.last().unwrap().notes.clone()
}

fn compacted(out: &Output) -> bool {
    compact_notes(out)
        .iter()
        .any(|n| n.starts_with("compacted"))
}

/// What a citation in a summary line points at: `spill://<session>/<key>`
/// and, when given, `(lines a-b)` after it: those lines of the blob (read as
/// `read_spill` would, offset a - 1), else the whole blob.
fn cited(store: &mut MemoryStore, line: &str) -> String {
    let at = line
        .find("spill://")
        .unwrap_or_else(|| panic!("no pointer: {line}"));
    let rest = &line[at + "spill://".len()..];
    let end = rest
        .find(|c: char| c.is_whitespace() || c == ']')
        .unwrap_or(rest.len());
    let (session, key) = rest[..end].split_once('/').unwrap();
    match rest[end..].strip_prefix(" (lines ") {
        Some(range) => {
            let (a, b) = range.split_once(')').unwrap().0.split_once('-').unwrap();
            let (a, b): (usize, usize) = (a.parse().unwrap(), b.parse().unwrap());
            let page = store.read(session, key, a - 1, b + 1 - a).unwrap();
            assert_eq!(page.count, b + 1 - a, "{line}: lines past the blob");
            page.text
        }
        None => store.get(session, key).unwrap(),
    }
}

/// Runs the whole of `t` as one request under `cfg`, which must compact it;
/// returns the output with the store and session state it used.
fn compact_whole(t: &Trajectory, cfg: &Config) -> (Output, MemoryStore, HostState) {
    let mut store = MemoryStore::new();
    let mut state = HostState::default();
    let out = run(
        &request(&t.conversation_at(t.steps.len()).unwrap()),
        cfg,
        &mut store,
        &mut state,
    );
    assert!(compacted(&out), "{:?}", compact_notes(&out));
    (out, store, state)
}

/// The text of the first message of a compaction's output that starts with `mark`.
fn message_marked(out: &Output, mark: &str) -> String {
    out.conversation
        .messages
        .iter()
        .map(Message::text_content)
        .find(|t| t.starts_with(mark))
        .unwrap()
}

/// The summary message of a compaction's output.
fn summary_of(out: &Output) -> String {
    message_marked(out, SUMMARY_MARK)
}

/// The first line of `text` containing `needle`.
fn line_with<'t>(text: &'t str, needle: &str) -> &'t str {
    text.lines()
        .find(|l| l.contains(needle))
        .unwrap_or_else(|| panic!("no {needle:?} in {text}"))
}

/// The one blob a compaction stored (its pointer is the summary change's),
/// checked: one `message N (role): lines a-b` index line per compacted
/// message, each range starting with that message's header line. Returns
/// the blob and the compacted message numbers.
fn compaction_blob(out: &Output, store: &mut MemoryStore) -> (String, Vec<usize>) {
    let pointer = out
        .report
        .changes
        .iter()
        .find(|c| c.kind == "summary" && c.pointer.is_some())
        .and_then(|c| c.pointer.clone())
        .unwrap();
    assert!(
        out.report.spills.iter().any(|s| s.pointer == pointer),
        "the blob is among the call's spills"
    );
    let blob = cited(store, &pointer);
    let mut numbers = Vec::new();
    for line in blob.lines().skip(1) {
        let Some(rest) = line.strip_prefix("message ") else {
            break;
        };
        let (label, _) = line.split_once(": lines ").unwrap();
        numbers.push(rest.split_once(' ').unwrap().0.parse().unwrap());
        let page = cited(
            store,
            &format!("{pointer} ({})", line.split_once(": ").unwrap().1),
        );
        assert!(
            page.starts_with(&format!("--- {label} ---\n")),
            "{line}: {page}"
        );
    }
    (blob, numbers)
}

/// A valid OpenAI chat request: every tool call answered, every tool message
/// answering a call of the nearest preceding assistant message.
fn assert_valid(req: &str) {
    let value: Value = serde_json::from_str(req).unwrap();
    let conv = formats::parse(FormatName::OpenaiChat, &value).unwrap();
    let mut calls: HashSet<String> = HashSet::new();
    let mut results: HashSet<String> = HashSet::new();
    let mut open: HashSet<String> = HashSet::new();
    for (i, m) in conv.messages.iter().enumerate() {
        for p in &m.parts {
            match &p.kind {
                PartKind::ToolCall(c) => {
                    calls.insert(c.id.clone());
                }
                PartKind::ToolResult(r) => {
                    assert!(
                        open.contains(&r.call_id),
                        "message {i}: result {} does not follow its call",
                        r.call_id
                    );
                    results.insert(r.call_id.clone());
                }
                _ => {}
            }
        }
        if m.role == Role::Assistant {
            open = m
                .parts
                .iter()
                .filter_map(|p| match &p.kind {
                    PartKind::ToolCall(c) => Some(c.id.clone()),
                    _ => None,
                })
                .collect();
        } else if m.role != Role::Tool {
            open.clear();
        }
    }
    assert_eq!(calls, results, "orphaned tool call or result");
}

/// A small synthetic trajectory: read, edit `src/calc.py`, a failing test
/// with a traceback, a fix, a passing test, then `extra` filler steps.
fn synthetic(extra: usize, filler_bytes: usize) -> Trajectory {
    let mut steps = vec![
        json!({"thought": "Let me look at the code.", "tool": "str_replace_editor",
               "args": {"command": "view", "path": "/repo/src/calc.py"},
               "observation": "def add(a, b):\n    return a - b\n"}),
        json!({"thought": "The fix is to use +. I'll edit `add`.", "tool": "str_replace_editor",
               "args": {"command": "str_replace", "path": "/repo/src/calc.py", "old_str": "a - b", "new_str": "a + c"},
               "observation": "The file /repo/src/calc.py has been edited."}),
        json!({"thought": "Now run the tests.", "tool": "execute_bash",
               "args": {"command": "cd /repo && python -m pytest tests -q"},
               "observation": format!("{}\nTraceback (most recent call last):\n  File \"/repo/src/calc.py\", line 2, in add\nNameError: name 'c' is not defined\n=== 1 failed in 0.01s ===\n[Command finished with exit code 1]", "x".repeat(filler_bytes))}),
        json!({"thought": "Typo: I need to use b instead of c.", "tool": "str_replace_editor",
               "args": {"command": "str_replace", "path": "/repo/src/calc.py", "old_str": "a + c", "new_str": "a + b"},
               "observation": "The file /repo/src/calc.py has been edited."}),
        json!({"thought": "Run the tests again.", "tool": "execute_bash",
               "args": {"command": "cd /repo && python -m pytest tests -q"},
               "observation": "..\n=== 2 passed in 0.01s ===\n[Command finished with exit code 0]"}),
    ];
    for i in 0..extra {
        steps.push(json!({"thought": format!("Next I will inspect file {i}."), "tool": "execute_bash",
            "args": {"command": format!("cat /repo/docs/f{i}.txt")},
            "observation": format!("{}\n[Command finished with exit code 0]", format!("doc line {i} ").repeat(filler_bytes / 12 + 1))}));
    }
    let t = json!({
        "id": "synthetic",
        "task": "Fix `add` in src/calc.py. Do not modify the tests. You must keep the public API.",
        "system": "You are a coding agent.",
        "steps": steps,
    });
    Trajectory::from_json(&t.to_string()).unwrap()
}

#[test]
#[cfg_attr(tracelite_no_traces, ignore = "needs ../shared/traces")]
fn stage_boundaries_on_real_trajectories() {
    let files = common::required_trace_files();
    let config = Config::default();
    let mut total = 0;
    let mut with = 0;
    let mut checks = 0;
    for file in &files {
        let t = common::load_trace(file);
        let conv = t.conversation_at(t.steps.len()).unwrap();
        let steps = step_activities(&conv, &config);
        checks += steps.iter().filter(|s| s.activity.check.is_some()).count();
        let b = stage_boundaries(&steps);
        for &i in &b {
            let c = steps[i].activity.check.as_ref().unwrap();
            assert_eq!(c.outcome, tracelite::activity::Outcome::Passed);
        }
        total += b.len();
        with += usize::from(!b.is_empty());
        let detail: Vec<String> = b
            .iter()
            .map(|&i| {
                format!(
                    "{i}:`{}`",
                    steps[i]
                        .activity
                        .check
                        .as_ref()
                        .unwrap()
                        .command
                        .chars()
                        .take(60)
                        .collect::<String>()
                )
            })
            .collect();
        println!(
            "{}: {} steps, boundaries at steps {:?}  {}",
            file.file_name().unwrap().to_string_lossy(),
            t.steps.len(),
            b,
            detail.join(" | ")
        );
    }
    println!(
        "{total} boundaries in {with}/{} trajectories ({checks} test/run commands)",
        files.len()
    );
    assert!(
        with * 2 >= files.len(),
        "boundaries fire in at least half the runs"
    );
    assert!(total * 3 < checks, "a boundary is rarer than a check");
}

#[test]
fn threshold_hysteresis_and_budget() {
    let t = synthetic(60, 600);
    let n = t.steps.len();
    let cfg = config(
        json!({"session": "th", "compact": {"threshold": 4000, "planner": false, "minTurns": 5, "keep": 4, "detectStages": false}}),
    );
    let mut store = MemoryStore::new();
    let mut state = HostState::default();
    let mut compactions = Vec::new();
    for step in 0..=n {
        let out = run(
            &request(&t.conversation_at(step).unwrap()),
            &cfg,
            &mut store,
            &mut state,
        );
        let tokens_in_stage = out.report.stages.last().unwrap().tokens_before;
        if compacted(&out) {
            compactions.push(step);
            assert!(tokens_in_stage > 4000 || out.report.tokens_before > 4000);
        }
        if out.report.tokens_before <= 4000 {
            assert!(!compacted(&out), "under the threshold at step {step}");
        }
        assert_valid(&out.request);
    }
    assert!(compactions.len() >= 2, "{compactions:?}");
    for w in compactions.windows(2) {
        assert!(w[1] - w[0] >= 5, "hysteresis violated: {compactions:?}");
    }
    // The budget overrides hysteresis: budget − cap = 6000 with a 2000-token cap.
    let forced = config(
        json!({"session": "th2", "budget": 8000, "compact": {"threshold": 4000, "planner": true, "minTurns": 50, "keep": 4, "detectStages": false}}),
    );
    let mut state = HostState::default();
    let mut count = 0;
    for step in 0..=n {
        let out = run(
            &request(&t.conversation_at(step).unwrap()),
            &forced,
            &mut store,
            &mut state,
        );
        if compacted(&out) {
            count += 1;
            assert!(
                compact_notes(&out).iter().any(|n| n.contains("forced")) || count == 1,
                "{:?}",
                compact_notes(&out)
            );
        }
    }
    assert!(count >= 2, "forced compactions ignore minTurns: {count}");
}

#[test]
fn off_switch_is_off() {
    let t = synthetic(30, 600);
    let conv = t.conversation_at(t.steps.len()).unwrap();
    let mut store = MemoryStore::new();
    let mut state = HostState::default();
    let on = config(json!({"session": "off", "compact": {"threshold": 2000, "planner": false}}));
    assert!(compacted(&run(
        &request(&conv),
        &on,
        &mut store,
        &mut state
    )));
    let off = config(
        json!({"session": "off", "stageBoundary": true, "compact": {"enabled": false, "threshold": 2000}}),
    );
    state.compact.finish_stage("off");
    let out = run(&request(&conv), &off, &mut store, &mut state);
    assert_eq!(
        out.request,
        request(&conv),
        "no compaction, no re-applied summary"
    );
    assert!(out.report.changes.iter().all(|c| c.kind != "summary"));
}

#[test]
fn host_boundaries_and_finish_stage() {
    let t = synthetic(6, 400);
    let conv = t.conversation_at(t.steps.len()).unwrap();
    let base = json!({"session": "fs", "compact": {"threshold": 1_000_000, "planner": false, "keep": 4, "minSaving": 0, "detectStages": false}});
    let cfg = config(base.clone());
    let mut store = MemoryStore::new();
    let mut state = HostState::default();
    let before = run(&request(&conv), &cfg, &mut store, &mut state);
    assert!(!compacted(&before));
    assert_eq!(before.report.compaction, None, "no compaction, no outcome");
    state.compact.finish_stage("fs");
    let out = run(&request(&conv), &cfg, &mut store, &mut state);
    assert!(compacted(&out), "{:?}", compact_notes(&out));
    assert!(compact_notes(&out)[0].contains("stage boundary (host)"));
    // The report says what compaction did, with the blob its summary cites.
    let outcome = out.report.compaction.clone().unwrap();
    assert_eq!(outcome.outcome, CompactionKind::Compacted);
    let pointer = outcome.pointer.unwrap();
    assert!(summary_of(&out).contains(&pointer));
    assert!(outcome.covered > 0 && outcome.covered < conv.messages.len());
    // Consumed: the next call re-applies but does not compact again.
    let again = run(&request(&conv), &cfg, &mut store, &mut state);
    assert!(!compacted(&again));
    assert_eq!(again.request, out.request, "re-applied byte for byte");
    let reapplied = again.report.compaction.clone().unwrap();
    assert_eq!(reapplied.outcome, CompactionKind::Reapplied);
    assert_eq!(
        (reapplied.covered, reapplied.pointer),
        (outcome.covered, None)
    );
    let json = serde_json::to_value(&again.report).unwrap();
    assert_eq!(json["compaction"]["outcome"], "reapplied");
    let mut with_option = base;
    with_option["stageBoundary"] = json!(true);
    with_option["session"] = json!("fs2");
    let out = run(
        &request(&conv),
        &config(with_option),
        &mut store,
        &mut HostState::default(),
    );
    assert!(compacted(&out));
}

#[test]
fn detected_stage_boundary_triggers() {
    // Steps 0-4: view, edit, failing test, fix, passing test → boundary at step 4.
    let t = synthetic(0, 4000);
    let cfg = config(
        json!({"session": "sb", "compact": {"threshold": 1_000_000, "planner": false, "keep": 2, "minSaving": 0}}),
    );
    let mut store = MemoryStore::new();
    let before = run(
        &request(&t.conversation_at(4).unwrap()),
        &cfg,
        &mut store,
        &mut HostState::default(),
    );
    assert!(!compacted(&before));
    let out = run(
        &request(&t.conversation_at(5).unwrap()),
        &cfg,
        &mut store,
        &mut HostState::default(),
    );
    assert!(compacted(&out), "{:?}", compact_notes(&out));
    assert!(compact_notes(&out)[0].contains("passing check after an edit"));
    assert_valid(&out.request);
}

#[test]
fn summary_keeps_errors_and_edited_paths_with_pointers() {
    let t = synthetic(8, 3000);
    let cfg = config(
        json!({"session": "sum", "compact": {"threshold": 2000, "planner": false, "keep": 4}}),
    );
    let (out, mut store, _) = compact_whole(&t, &cfg);
    let msgs = &out.conversation.messages;
    // The task stays word for word, first; no archive is needed for it.
    assert_eq!(msgs[0].text_content(), t.task);
    assert!(!msgs
        .iter()
        .any(|m| m.text_content().starts_with(ARCHIVE_HEADER)));
    let summary = msgs[1].text_content();
    assert!(summary.starts_with(SUMMARY_MARK));
    assert!(
        summary.contains("The task and the user's messages (1) are kept word for word"),
        "{summary}"
    );
    let parsed = validate_summary(summary.split_once('\n').unwrap().1).unwrap();
    assert!(parsed.sections.iter().all(|s| !s.is_empty()));
    assert!(
        summary.contains("NameError: name 'c' is not defined"),
        "{summary}"
    );
    assert!(
        summary.contains("`/repo/src/calc.py` (2 edits)"),
        "{summary}"
    );
    assert!(
        summary.contains("→ failed (exit 1)") && summary.contains("→ passed (exit 0)"),
        "{summary}"
    );
    // Every fact line cites a pointer that resolves to its original: the
    // lines it names in the compaction's blob.
    let mut resolved = 0;
    let mut ranged = 0;
    for line in summary.lines().filter(|l| {
        l.starts_with("- ") && !l.contains("Continue from") && !l.contains("kept word for word")
    }) {
        let original = cited(&mut store, line);
        if line.starts_with("- Error:") && line.contains("NameError") {
            assert!(original.contains("NameError: name 'c' is not defined"));
            assert!(original.starts_with("--- message "), "{original}");
        }
        if line.contains("Edited `/repo/src/calc.py`") {
            assert!(original.contains("str_replace"), "{original}");
        }
        ranged += usize::from(line.contains(" (lines "));
        resolved += 1;
    }
    assert!(resolved >= 6 && ranged >= 3, "{resolved} {ranged}");
    // One blob for the whole compaction, and every compacted message is
    // recoverable through its index, word for word.
    assert_eq!(out.report.spills.len(), 1, "{:?}", out.report.spills);
    let (blob, numbers) = compaction_blob(&out, &mut store);
    let input = t.conversation_at(t.steps.len()).unwrap();
    assert!(numbers.len() >= 10);
    assert_eq!(numbers, (0..numbers.len()).collect::<Vec<_>>());
    for n in numbers {
        for part in &input.messages[n].parts {
            if let PartKind::ToolResult(r) = &part.kind {
                assert!(blob.contains(&r.text()), "message {n}");
            }
        }
    }
}

/// Every error of the compacted outputs is quoted as the output printed it
/// (inner spacing kept), also one deep inside a long output, and more than
/// a handful of them.
#[test]
fn summary_quotes_every_error_line_verbatim() {
    let mut t = synthetic(8, 3000);
    let errors: Vec<String> = (0..14)
        .map(|i| format!("E       ValueError: case {i} failed"))
        .collect();
    let middle = (0..200)
        .map(|i| format!("line {i}"))
        .chain(errors.iter().cloned())
        .chain((0..200).map(|i| format!("tail {i}")))
        .collect::<Vec<_>>()
        .join("\n");
    t.steps[4].observation = format!("{middle}\n[Command finished with exit code 1]");
    let summary = compacted_summary(&t);
    for e in &errors {
        assert!(summary.contains(&format!("`{e}`")), "{e}: {summary}");
    }
    assert!(summary.contains("NameError: name 'c' is not defined"));
}

/// The summary of `t` compacted at its last step (threshold 2,000, last 4 kept).
fn compacted_summary(t: &Trajectory) -> String {
    let cfg = config(
        json!({"session": "sum", "compact": {"threshold": 2000, "planner": false, "keep": 4}}),
    );
    let out = run(
        &request(&t.conversation_at(t.steps.len()).unwrap()),
        &cfg,
        &mut MemoryStore::new(),
        &mut HostState::default(),
    );
    assert!(compacted(&out));
    out.conversation.messages[1].text_content()
}

#[test]
fn older_errors_outrank_newer_pytest_details_in_the_summary() {
    // An early import error, then six runs whose assertion diffs print 40
    // `E   and: …` detail lines each: over the summary's byte budget.
    let mut t = synthetic(12, 3000);
    t.steps[1].observation =
        "E   ModuleNotFoundError: No module named 'xmlschema'\n[Command finished with exit code 2]"
            .into();
    for step in 2..8 {
        let details = (0..40)
            .map(|i| {
                format!(
                    "E           and: 'rootdir: /tmp/pytest-of-root/pytest-{step}-{i}/test_dir'"
                )
            })
            .collect::<Vec<_>>()
            .join("\n");
        t.steps[step].observation = format!(
            "{details}\nE       Failed: nomatch: 'sub/test_{step}.py::test_file PASSED*'\n[Command finished with exit code 1]"
        );
    }
    let summary = compacted_summary(&t);
    for e in [
        "E   ModuleNotFoundError: No module named 'xmlschema'",
        "E       Failed: nomatch: 'sub/test_7.py::test_file PASSED*'",
    ] {
        assert!(summary.contains(&format!("`{e}`")), "{e}: {summary}");
    }
    assert!(summary.contains("more error lines in the compacted outputs"));
}

/// Feeds each output back as the history (the host keeps the compacted
/// conversation), so later compactions merge the previous summary.
#[test]
fn constraints_byte_identical_after_three_compactions() {
    let t = synthetic(40, 800);
    let cfg = config(
        json!({"session": "arch", "compact": {"threshold": 3000, "planner": false, "keep": 4, "minTurns": 2, "pinned": ["Never push to main."]}}),
    );
    let mut store = MemoryStore::new();
    let mut state = HostState::default();
    state.compact.pin("arch", "Keep commits small.").unwrap();
    let mut history = t.conversation_at(0).unwrap();
    let mut archives = Vec::new();
    let mut summaries = Vec::new();
    for step in 0..t.steps.len() {
        let (out, _) = next_turn(&t, step, &mut history, &cfg, &mut store, &mut state);
        if compacted(&out) {
            let m = &out.conversation.messages;
            assert_eq!(m[0].text_content(), t.task, "the task is verbatim, first");
            archives.push(m[1].text_content());
            summaries.push(m[2].text_content());
        }
        history = out.conversation;
    }
    assert!(archives.len() >= 3, "{} compactions", archives.len());
    assert!(
        archives.iter().all(|a| a == &archives[0]),
        "archive changed"
    );
    assert!(
        archives[0].contains("- Never push to main.")
            && archives[0].contains("- Keep commits small.")
    );
    // The goal points at the task kept above; progress accumulates instead of being re-summarized.
    let last = validate_summary(summaries.last().unwrap().split_once('\n').unwrap().1).unwrap();
    assert!(
        last.sections[0]
            .iter()
            .any(|l| l.contains("kept word for word")),
        "{:?}",
        last.sections[0]
    );
    assert!(summaries.last().unwrap().contains("NameError"));
    assert_eq!(summaries.last().unwrap().matches("## Goal").count(), 1);
}

#[test]
fn host_summary_is_validated_and_adopted() {
    let t = synthetic(12, 1500);
    let cfg = config(
        json!({"session": "llm", "compact": {"threshold": 2000, "planner": false, "keep": 4}}),
    );
    let mut store = MemoryStore::new();
    let mut state = HostState::default();
    let req = request(&t.conversation_at(t.steps.len()).unwrap());
    let out = run(&req, &cfg, &mut store, &mut state);
    assert!(compacted(&out));
    let prompt = state.compact.pending_prompt("llm").unwrap().to_string();
    for s in [
        "## Goal",
        "## Progress",
        "## Key facts",
        "## Decisions",
        "## Next steps",
        "spill://llm/",
        "Do not modify the tests.",
    ] {
        assert!(prompt.contains(s), "prompt lacks {s}");
    }
    let mut conv = out.conversation.clone();
    let bad = adopt_summary(
        &mut conv,
        &mut state.compact,
        &cfg,
        "## Goal\nx\n## Progress\ny",
    )
    .unwrap_err();
    assert_eq!(bad.code, tracelite::ErrorCode::SummarizerFailed);
    assert!(bad.message.contains("Key facts"));
    let good = "## Goal\nFix add.\n## Progress\nEdited calc.py.\n## Key facts\nNameError fixed.\n## Decisions\nUse +.\n## Next steps\nSubmit.";
    adopt_summary(&mut conv, &mut state.compact, &cfg, good).unwrap();
    let text = conv.messages[1].text_content();
    assert!(text.starts_with(SUMMARY_MARK) && text.contains("Use +."));
    assert!(state.compact.pending_prompt("llm").is_none());
    // Later calls re-apply the adopted summary.
    let again = run(&req, &cfg, &mut store, &mut state);
    assert_eq!(again.conversation.messages[1].text_content(), text);
    assert!(
        adopt_summary(&mut conv, &mut state.compact, &cfg, good).is_err(),
        "nothing pending any more"
    );
}

#[test]
fn planner_explains_its_decision() {
    let t = synthetic(30, 2000);
    let conv = t.conversation_at(t.steps.len()).unwrap();
    let mut store = MemoryStore::new();
    // Long horizon: compaction pays.
    let pays = config(
        json!({"session": "pl", "budget": 1_000_000, "compact": {"threshold": 5000, "keep": 4}, "plan": {"horizon": 20}}),
    );
    let out = run(
        &request(&conv),
        &pays,
        &mut store,
        &mut HostState::default(),
    );
    let notes = compact_notes(&out);
    assert!(
        compacted(&out) && notes[0].contains("planner:") && notes[0].contains("compact now"),
        "{notes:?}"
    );
    // One turn ahead with cheap cache reads and costly writes: waiting is cheaper.
    let waits = config(
        json!({"session": "pl", "budget": 1_000_000, "compact": {"threshold": 5000, "keep": 4}, "plan": {"horizon": 1, "prices": {"input": 3, "cachedInput": 0.03, "cacheWrite": 6}}}),
    );
    let out = run(
        &request(&conv),
        &waits,
        &mut store,
        &mut HostState::default(),
    );
    let notes = compact_notes(&out);
    assert!(
        !compacted(&out) && notes[0].starts_with("not compacting") && notes[0].contains("wait"),
        "{notes:?}"
    );
}

/// Every shared trajectory, pseudo-random steps and `keep` values: after
/// compaction no tool call is separated from its result and the request is valid.
#[test]
#[cfg_attr(tracelite_no_traces, ignore = "needs ../shared/traces")]
fn no_orphans_on_every_trajectory_and_random_cuts() {
    let files = common::required_trace_files();
    let mut seed: u64 = 0x2545_f491_4f6c_dd1d;
    let mut next = |n: usize| {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        (seed % n.max(1) as u64) as usize
    };
    let mut compactions = 0;
    for file in &files {
        let t = common::load_trace(file);
        let mut store = MemoryStore::new();
        for _ in 0..3 {
            let step = 1 + next(t.steps.len());
            let keep = 1 + next(9);
            let cfg = config(
                json!({"session": "prop", "spill": {"enabled": false}, "compact": {"threshold": 1500, "planner": false, "keep": keep, "minSaving": 0}}),
            );
            let conv = t.conversation_at(step).unwrap();
            let out = run(&request(&conv), &cfg, &mut store, &mut HostState::default());
            assert_valid(&out.request);
            if compacted(&out) {
                compactions += 1;
                // The kept tail is verbatim: its last message equals the input's.
                assert_eq!(out.conversation.messages.last(), conv.messages.last());
            }
        }
    }
    assert!(compactions > files.len(), "{compactions} compactions");
}

/// Appends step `step + 1`'s new messages to `history` (the host's compacted
/// conversation) and compresses it: the output, checked valid, and the
/// uncompressed conversation at that step.
fn next_turn(
    t: &Trajectory,
    step: usize,
    history: &mut Conversation,
    cfg: &Config,
    store: &mut MemoryStore,
    state: &mut HostState,
) -> (Output, Conversation) {
    let next = t.conversation_at(step + 1).unwrap();
    let prev = t.conversation_at(step).unwrap();
    history
        .messages
        .extend(next.messages[prev.messages.len()..].iter().cloned());
    let out = run(&request(history), cfg, store, state);
    assert_valid(&out.request);
    (out, next)
}

/// `name arguments` of every tool call in `messages`, in order.
fn calls_of(messages: &[tracelite::model::Message]) -> Vec<String> {
    messages
        .iter()
        .flat_map(|m| &m.parts)
        .filter_map(|p| match &p.kind {
            PartKind::ToolCall(c) => Some(format!("{} {}", c.name, c.arguments)),
            _ => None,
        })
        .collect()
}

/// Tool calls stay text through any number of compactions: the log after the
/// summary plus the calls still in the conversation are exactly the original
/// calls, in order; the log only grows at its end; `keepToolCalls: false`
/// writes no log.
#[test]
fn every_compacted_tool_call_stays_in_the_call_log() {
    let t = synthetic(40, 800);
    for keep_calls in [true, false] {
        let cfg = config(json!({"session": "calls", "compact": {
            "threshold": 3000, "planner": false, "keep": 4, "minTurns": 2,
            "keepToolCalls": keep_calls}}));
        let mut store = MemoryStore::new();
        let mut state = HostState::default();
        let mut history = t.conversation_at(0).unwrap();
        let mut logs: Vec<String> = Vec::new();
        for step in 0..t.steps.len() {
            let (out, next) = next_turn(&t, step, &mut history, &cfg, &mut store, &mut state);
            let log = out
                .conversation
                .messages
                .iter()
                .find(|m| m.text_content().starts_with(CALL_LOG_HEADER));
            if !keep_calls {
                assert!(log.is_none(), "a log although keepToolCalls is false");
            } else if let Some(log) = log {
                let text = log.text_content();
                let mut seen = CallLog::parse(&text).unwrap().items;
                seen.extend(calls_of(&out.conversation.messages));
                assert_eq!(seen, calls_of(&next.messages), "step {step}");
                if compacted(&out) {
                    logs.push(text);
                }
            }
            history = out.conversation;
        }
        if keep_calls {
            assert!(logs.len() >= 3, "{} compactions", logs.len());
            for pair in logs.windows(2) {
                assert!(pair[1].starts_with(&pair[0]), "the log was rewritten");
                assert!(pair[1].len() > pair[0].len());
            }
        }
    }
}

/// Every user-authored message stays word for word through repeated
/// compactions (later instructions too), up to `compact.userShare` of the
/// budget; beyond it the oldest middle ones go behind a pointer and their
/// constraints into the archive.
#[test]
fn user_messages_stay_word_for_word_up_to_their_share() {
    let t = synthetic(30, 800);
    let cfg = config(
        json!({"session": "users", "compact": {"threshold": 3000, "planner": false, "keep": 4, "minTurns": 2}}),
    );
    let mut store = MemoryStore::new();
    let mut state = HostState::default();
    let mut history = t.conversation_at(0).unwrap();
    let instructions = [
        (6, "Also keep the docstring of `add` unchanged."),
        (14, "Please never touch setup.py while you are at it."),
    ];
    let mut compactions = 0;
    for step in 0..t.steps.len() {
        if let Some((_, text)) = instructions.iter().find(|(at, _)| *at == step) {
            history.messages.push(Message::text(Role::User, *text));
        }
        let (out, _) = next_turn(&t, step, &mut history, &cfg, &mut store, &mut state);
        if compacted(&out) {
            compactions += 1;
        }
        let texts: Vec<String> = out
            .conversation
            .messages
            .iter()
            .map(Message::text_content)
            .collect();
        assert!(texts.contains(&t.task), "step {step}: task not verbatim");
        for (at, text) in instructions {
            if step >= at {
                assert!(
                    texts.iter().any(|m| m == text),
                    "step {step}: {text:?} lost"
                );
            }
        }
        history = out.conversation;
    }
    assert!(compactions >= 2, "{compactions} compactions");

    // A share too small for all of them: the task and the newest stay.
    let small = config(
        json!({"session": "share", "budget": 20000, "compact": {"threshold": 1500, "planner": false, "keep": 4, "minSaving": 0, "userShare": 0.002}}),
    );
    let mut conv = t.conversation_at(12).unwrap();
    let middle = "You must keep the changelog in sync with every change you make here.";
    conv.messages.insert(3, Message::text(Role::User, middle));
    conv.messages
        .insert(10, Message::text(Role::User, "Continue."));
    let mut store = MemoryStore::new();
    let out = run(
        &request(&conv),
        &small,
        &mut store,
        &mut HostState::default(),
    );
    assert!(compacted(&out), "{:?}", compact_notes(&out));
    let texts: Vec<String> = out
        .conversation
        .messages
        .iter()
        .map(Message::text_content)
        .collect();
    assert_eq!(texts[0], t.task);
    assert_eq!(texts[1], "Continue.");
    assert!(!texts.iter().any(|m| m == middle));
    assert!(
        texts[2].starts_with(ARCHIVE_HEADER) && texts[2].contains(middle),
        "{}",
        texts[2]
    );
    let summary = &texts[3];
    // The pointer and lines given hold it (and not the rest of the blob).
    let listed = line_with(summary, "not repeated here");
    // Quoted in the summary by a head/tail excerpt (whole, as it is short).
    assert!(listed.ends_with(&format!(" — \"{middle}\"")), "{listed}");
    let original = cited(&mut store, listed);
    assert!(
        original.starts_with("--- message 3 (user) ---\n[user]\n"),
        "{original}"
    );
    assert!(original.contains(middle));
    assert!(original.lines().count() <= 4, "{original}");
    let e = Config::from_json(json!({"compact": {"userShare": 2}})).unwrap_err();
    assert_eq!(e.path, "compact.userShare");
}

/// `n` one-word messages alternating user / assistant after a system
/// prompt: the many-message request of issue 16 (item 2).
fn one_word_messages(n: usize) -> String {
    let mut messages = vec![json!({"role": "system", "content": "You are terse."})];
    for i in 0..n {
        let role = if i % 2 == 1 { "assistant" } else { "user" };
        messages.push(json!({"role": role, "content": format!("word{i}")}));
    }
    json!({"model": "gpt-test", "messages": messages}).to_string()
}

/// One compaction is one blob, however many messages it compacts (it was
/// one blob per message plus an index: 13,995 KV writes for 14,000), and
/// every compacted message reads back through the index and the lines the
/// summary gives. Re-applying it stores nothing more and is byte-identical.
#[test]
fn one_blob_per_compaction_holds_every_original() {
    let cfg = config(
        json!({"session": "many", "compact": {"threshold": 2000, "planner": false, "userShare": 0.001}}),
    );
    let req = one_word_messages(3000);
    let mut store = MemoryStore::new();
    let mut state = HostState::default();
    let out = run(&req, &cfg, &mut store, &mut state);
    assert!(compacted(&out), "{:?}", compact_notes(&out));
    assert_eq!(out.report.spills.len(), 1, "{:?}", out.report.spills);
    assert_eq!(out.spills.len(), 1);
    let (blob, numbers) = compaction_blob(&out, &mut store);
    assert_eq!(numbers, (0..2994).collect::<Vec<_>>());
    for n in [0, 1, 1500, 2993] {
        let role = if n % 2 == 1 { "assistant" } else { "user" };
        assert!(blob.contains(&format!(
            "--- message {n} ({role}) ---\n[{role}]\nword{n}\n"
        )));
    }
    // The user messages over the share are cited with their lines.
    let summary = summary_of(&out);
    let dropped: Vec<&str> = summary
        .lines()
        .filter(|l| l.contains("not repeated here"))
        .collect();
    // The summary does not grow with them: the newest 8 one by one, the
    // others in one line.
    assert_eq!(dropped.len(), 9, "{summary}");
    let others: usize = dropped[0]
        .strip_prefix("- ")
        .and_then(|l| l.split_once(" earlier user messages ("))
        .map(|(n, _)| n.parse().unwrap())
        .unwrap_or_else(|| panic!("{}", dropped[0]));
    assert!(
        others > 1000 && !dropped[0].contains("(lines "),
        "{}",
        dropped[0]
    );
    assert!(summary.len() < 6000, "{}", summary.len());
    for line in [dropped[1], dropped[8]] {
        let original = cited(&mut store, line);
        let n: usize = original["--- message ".len()..]
            .split(' ')
            .next()
            .unwrap()
            .parse()
            .unwrap();
        assert_eq!(
            original,
            format!("--- message {n} (user) ---\n[user]\nword{n}\n")
        );
    }
    // The next turn re-applies it byte for byte and writes nothing new.
    let value: Value = serde_json::from_str(&req).unwrap();
    let mut next = value.clone();
    let msgs = next["messages"].as_array_mut().unwrap();
    msgs.push(json!({"role": "user", "content": "one more"}));
    let again = run(&next.to_string(), &cfg, &mut store, &mut state);
    assert!(again.report.spills.is_empty(), "{:?}", again.report.spills);
    let before: Value = serde_json::from_str(&out.request).unwrap();
    let after: Value = serde_json::from_str(&again.request).unwrap();
    let (b, a) = (
        before["messages"].as_array().unwrap(),
        after["messages"].as_array().unwrap(),
    );
    assert_eq!(
        a[..b.len()],
        b[..],
        "re-applied compaction is byte-identical"
    );
}

/// `redact.store` masks the secrets in the one blob, and the lines the
/// summary cites still frame each original (a masked private key spans
/// fewer lines than the key did).
#[test]
fn redacted_blob_keeps_its_line_numbers() {
    let key = "-----BEGIN RSA PRIVATE KEY-----\nMIIEpAIBAAKCAQEA1c7+9z5Pad7OejecsQ0bu3aozN3tihPmljnnudb9G3HkR\nMIIEpAIBAAKCAQEA1c7+9z5Pad7OejecsQ0bu3aozN3tihPmljnnudb9G3HkR\n-----END RSA PRIVATE KEY-----";
    let mut messages = vec![json!({"role": "system", "content": "You are terse."})];
    messages.push(json!({"role": "user", "content": "Fix the deploy script."}));
    for i in 0..40 {
        messages.push(json!({"role": "assistant", "content": null, "tool_calls": [
            {"id": format!("c{i}"), "type": "function", "function": {"name": "bash", "arguments": format!("{{\"command\":\"cat key{i}.pem\"}}")}}]}));
        let out = if i == 3 {
            format!("{key}\nError: key{i} rejected")
        } else {
            format!("line {i}\n").repeat(60)
        };
        messages.push(json!({"role": "tool", "tool_call_id": format!("c{i}"), "content": out}));
    }
    let req = json!({"model": "gpt-test", "messages": messages}).to_string();
    let cfg = config(
        json!({"session": "red", "redact": {"store": true}, "spill": {"enabled": false}, "compact": {"threshold": 1000, "planner": false, "keep": 4, "liveViews": 0}}),
    );
    let mut store = MemoryStore::new();
    let out = run(&req, &cfg, &mut store, &mut HostState::default());
    assert!(compacted(&out), "{:?}", compact_notes(&out));
    let (blob, numbers) = compaction_blob(&out, &mut store);
    assert!(
        !blob.contains("MIIEpAIBAAKCAQEA"),
        "the stored blob is masked"
    );
    assert!(numbers.len() > 70);
    assert!(
        out.report.redactions.count >= 1,
        "{:?}",
        out.report.redactions
    );
    let summary = summary_of(&out);
    let original = cited(&mut store, line_with(&summary, "key3 rejected"));
    assert!(
        original.starts_with("--- message 8 (tool) ---\n"),
        "{original}"
    );
    assert!(original.ends_with("Error: key3 rejected\n"), "{original}");
}

/// `limits.maxCompactMessages` / `maxCompactBytes` bound one compaction: a
/// longer history is compacted in chunks, oldest first, one per call (the
/// note says so), never splitting a tool call from its result; the chunks
/// chain (each blob holds the previous summary) and the request stays valid.
#[test]
fn compaction_is_chunked_by_the_limits() {
    let req = one_word_messages(5000);
    let cfg = config(
        json!({"session": "chunk", "compact": {"threshold": 2000, "planner": false, "userShare": 0.001},
        "limits": {"maxCompactMessages": 1200}}),
    );
    let mut store = MemoryStore::new();
    let mut state = HostState::default();
    let mut history: Value = serde_json::from_str(&req).unwrap();
    let mut covered = Vec::new();
    for turn in 0..6 {
        let out = run(&history.to_string(), &cfg, &mut store, &mut state);
        assert_valid(&out.request);
        if !compacted(&out) {
            break;
        }
        let notes = compact_notes(&out);
        let (_, numbers) = compaction_blob(&out, &mut store);
        assert!(numbers.len() <= 1200, "turn {turn}: {}", numbers.len());
        covered.push(numbers.len());
        let chunked = notes
            .iter()
            .any(|n| n.contains("limits.maxCompactMessages 1200"));
        assert_eq!(chunked, numbers.len() == 1200, "turn {turn}: {notes:?}");
        // The host keeps the compacted request and adds a turn.
        history = serde_json::from_str(&out.request).unwrap();
        let msgs = history["messages"].as_array_mut().unwrap();
        msgs.push(json!({"role": "assistant", "content": "ok"}));
        msgs.push(json!({"role": "user", "content": format!("go on {turn}")}));
    }
    assert!(
        covered.len() >= 4 && covered[..3] == [1200, 1200, 1200],
        "{covered:?}"
    );

    // Bytes bound it too; a limit too small for any cut compacts nothing.
    let cfg = config(
        json!({"session": "bytes", "compact": {"threshold": 2000, "planner": false, "minSaving": 0},
        "limits": {"maxCompactBytes": 20000}}),
    );
    let out = run(
        &req,
        &cfg,
        &mut MemoryStore::new(),
        &mut HostState::default(),
    );
    assert!(compacted(&out), "{:?}", compact_notes(&out));
    assert!(
        out.spills[0].text.len() <= 20000 + 300,
        "{}",
        out.spills[0].text.len()
    );
    let huge = "x".repeat(5000);
    let mut messages = vec![json!({"role": "system", "content": "s"})];
    for i in 0..20 {
        messages
            .push(json!({"role": if i % 2 == 1 { "assistant" } else { "user" }, "content": huge}));
    }
    let big = json!({"model": "gpt-test", "messages": messages}).to_string();
    let cfg = config(
        json!({"session": "tiny", "compact": {"threshold": 2000, "planner": false},
        "limits": {"maxCompactBytes": 4096}}),
    );
    let out = run(
        &big,
        &cfg,
        &mut MemoryStore::new(),
        &mut HostState::default(),
    );
    assert!(!compacted(&out));
    assert!(
        compact_notes(&out)[0].contains("no cut within limits.maxCompactMessages"),
        "{:?}",
        compact_notes(&out)
    );
    for (limit, value) in [("maxCompactMessages", 0), ("maxCompactBytes", 10)] {
        let e = Config::from_json(json!({"limits": {limit: value}})).unwrap_err();
        assert_eq!(e.path, format!("limits.{limit}"));
    }
}

/// A trajectory of file views and edits: `(tool args, output)` per step.
fn views_trajectory(steps: &[(Value, String)]) -> Trajectory {
    let steps: Vec<Value> = steps
        .iter()
        .map(|(args, obs)| json!({"thought": "Next.", "tool": "str_replace_editor", "args": args, "observation": obs}))
        .collect();
    let t = json!({"id": "views", "task": "Fix the parser.", "system": "You are a coding agent.", "steps": steps});
    Trajectory::from_json(&t.to_string()).unwrap()
}

fn file_view(path: &str, lines: usize) -> (Value, String) {
    let body = (1..=lines)
        .map(|i| {
            format!(
                "{i:6}\t    value_{i} = parse_{path_tag}({i})",
                path_tag = path.len()
            )
        })
        .collect::<Vec<_>>()
        .join("\n");
    (
        json!({"command": "view", "path": path}),
        format!("Here's the result of running `cat -n` on {path}:\n{body}"),
    )
}

fn view_messages(out: &Output) -> Vec<String> {
    out.conversation
        .messages
        .iter()
        .map(Message::text_content)
        .filter(|t| t.starts_with(tracelite::compact::views::VIEW_HEADER))
        .collect()
}

/// Compaction keeps the newest view of each file the compacted turns showed,
/// as it was shown, unless a later turn shows the file again; the view
/// cites its original; it is no user message; `liveViews: 0` keeps none.
#[test]
fn compaction_keeps_live_file_views() {
    let (a, a_text) = file_view("/repo/a.py", 30);
    let (b, _) = file_view("/repo/b.py", 30);
    let (b2, b2_text) = file_view("/repo/b.py", 31);
    let mut steps = vec![
        (a, a_text.clone()),
        (b.clone(), file_view("/repo/b.py", 30).1),
    ];
    for i in 0..6 {
        steps.push(file_view(&format!("/repo/docs/f{i}.md"), 40));
    }
    steps.push((b2, b2_text.clone()));
    let t = views_trajectory(&steps);
    let req = request(&t.conversation_at(t.steps.len()).unwrap());
    let base = json!({"session": "views", "compact": {"threshold": 2000, "planner": false, "keep": 2, "minSaving": 0, "liveViews": 8000}});
    let mut store = MemoryStore::new();
    let out = run(
        &req,
        &config(base.clone()),
        &mut store,
        &mut HostState::default(),
    );
    assert!(compacted(&out), "{:?}", compact_notes(&out));
    let views = view_messages(&out);
    let a_view = views
        .iter()
        .find(|v| v.contains("/repo/a.py"))
        .expect("a.py's view is kept");
    assert!(a_view.ends_with(&a_text), "verbatim: {a_view}");
    // b.py is shown again in the kept tail: its compacted view is superseded.
    assert!(!views.iter().any(|v| v.contains("/repo/b.py")), "{views:?}");
    // The header cites the original's lines in the compaction's blob.
    let original = cited(&mut store, a_view.lines().next().unwrap());
    assert!(original.contains(&a_text), "{original}");
    // Not a user message: the goal still counts one.
    assert!(summary_of(&out).contains("The task and the user's messages (1)"));

    // A smaller budget keeps the newest that fit.
    let mut small = base.clone();
    small["compact"]["liveViews"] = json!(700);
    let out_small = run(
        &req,
        &config(small),
        &mut MemoryStore::new(),
        &mut HostState::default(),
    );
    let kept = view_messages(&out_small);
    assert_eq!(kept.len(), 1, "{kept:?}");
    assert!(kept[0].contains("/repo/docs/f5.md"), "{kept:?}");

    let mut off = base;
    off["compact"]["liveViews"] = json!(0);
    let out_off = run(
        &req,
        &config(off),
        &mut MemoryStore::new(),
        &mut HostState::default(),
    );
    assert!(compacted(&out_off));
    assert!(view_messages(&out_off).is_empty());
}

/// A view kept by one compaction survives the next (once), until a later
/// turn shows the file again.
#[test]
fn kept_views_carry_over_to_the_next_compaction() {
    let mut steps = vec![file_view("/repo/a.py", 30)];
    steps.extend((0..12).map(|i| file_view(&format!("/repo/docs/f{i}.md"), 40)));
    steps.push(file_view("/repo/a.py", 31));
    steps.extend((12..18).map(|i| file_view(&format!("/repo/docs/f{i}.md"), 40)));
    let t = views_trajectory(&steps);
    let a_text = &steps[0].1;
    let cfg = config(
        json!({"session": "carry", "compact": {"threshold": 2000, "planner": false, "keep": 2, "minSaving": 0, "minTurns": 1, "liveViews": 20000}}),
    );
    let mut store = MemoryStore::new();
    let mut state = HostState::default();
    // The host keeps each compacted request and appends the next steps
    // (after the system prompt and the task, two messages per step).
    let mut req = request(&t.conversation_at(7).unwrap());
    let mut outs = Vec::new();
    for (from, to) in [(7, 13), (13, 20), (20, 20)] {
        let out = run(&req, &cfg, &mut store, &mut state);
        assert!(compacted(&out), "{:?}", compact_notes(&out));
        let mut next: Value = serde_json::from_str(&out.request).unwrap();
        let full: Value = serde_json::from_str(&request(&t.conversation_at(to).unwrap())).unwrap();
        next["messages"].as_array_mut().unwrap().extend(
            full["messages"].as_array().unwrap()[2 + 2 * from..]
                .iter()
                .cloned(),
        );
        req = next.to_string();
        outs.push(out);
    }
    let a_views = |out: &Output| -> Vec<String> {
        view_messages(out)
            .into_iter()
            .filter(|v| v.contains("/repo/a.py"))
            .collect()
    };
    assert_eq!(a_views(&outs[0]).len(), 1);
    // Carried over by the second compaction, once, as it was.
    let second = a_views(&outs[1]);
    assert_eq!(second.len(), 1, "{second:?}");
    assert!(second[0].ends_with(a_text.as_str()));
    // Viewing a.py again supersedes it: the third keeps the newer view.
    let third = a_views(&outs[2]);
    assert_eq!(third.len(), 1, "{third:?}");
    assert!(third[0].contains("value_31"), "{}", third[0]);
}

/// 120 greps, one per step, each finding one pattern.
fn pattern_greps() -> Trajectory {
    let steps: Vec<Value> = (0..120)
        .map(|i| json!({"thought": "Next.", "tool": "bash",
            "args": {"command": format!("grep -rn 'pattern_{i}' src/module_{i}/ --include=*.py | head -n 40")},
            "observation": format!("src/module_{i}/a.py:{i}: pattern_{i} = {i}")}))
        .collect();
    let t = json!({"id": "log", "task": "Find the patterns.", "system": "You are a coding agent.", "steps": steps});
    Trajectory::from_json(&t.to_string()).unwrap()
}

/// The tool-call log message of a compacted request.
fn call_log_of(out: &Output) -> String {
    message_marked(out, CALL_LOG_HEADER)
}

/// In a session of several tasks what compactions carry forward gets
/// `compact.severalTasksShare` of its shares: the tool-call log folds at
/// half of `callLogShare` by default, at all of it with 1.
#[test]
fn several_tasks_carry_forward_a_smaller_call_log() {
    let mut conv = pattern_greps().conversation_at(120).unwrap();
    // A second task from step 60 on.
    conv.messages.insert(
        121,
        Message::text(Role::User, "Now find the constants too."),
    );
    let log_tokens = |share: f64| {
        let cfg = config(json!({"session": "tasks-log", "budget": 40000, "compact": {
            "threshold": 3000, "planner": false, "keep": 4, "minSaving": 0, "liveViews": 0,
            "callLogShare": 0.05, "severalTasksShare": share}}));
        let out = run(
            &request(&conv),
            &cfg,
            &mut MemoryStore::new(),
            &mut HostState::default(),
        );
        assert!(compacted(&out), "{:?}", compact_notes(&out));
        tracelite::tokens::TokenCounter::count(&Estimator, &call_log_of(&out)).unwrap()
    };
    let half = log_tokens(0.5);
    let full = log_tokens(1.0);
    assert!(
        half <= 1_000 && full > 1_000 && full <= 2_000,
        "{half} {full}"
    );
    assert_eq!(Config::default().compact.several_tasks_share, 0.5);
    for bad in [json!(0), json!(1.5)] {
        let e = Config::from_json(json!({"compact": {"severalTasksShare": bad}})).unwrap_err();
        assert_eq!(e.path, "compact.severalTasksShare");
    }
}

/// A tool-call log over `compact.callLogShare` of the budget folds its
/// oldest calls into one line citing the blob lines that hold them verbatim.
#[test]
fn tool_call_log_folds_its_oldest_calls_into_the_blob() {
    let t = pattern_greps();
    let cfg = config(
        json!({"session": "log", "budget": 40000, "compact": {"threshold": 3000, "planner": false, "keep": 4, "minSaving": 0, "liveViews": 0, "callLogShare": 0.05}}),
    );
    let mut store = MemoryStore::new();
    let out = run(
        &request(&t.conversation_at(120).unwrap()),
        &cfg,
        &mut store,
        &mut HostState::default(),
    );
    assert!(compacted(&out), "{:?}", compact_notes(&out));
    let log = call_log_of(&out);
    let tokens = tracelite::tokens::TokenCounter::count(&Estimator, &log).unwrap();
    assert!(tokens <= 2_000, "{tokens}");
    let fold = log.lines().nth(1).unwrap();
    assert!(fold.starts_with("- (folded: "), "{fold}");
    let n: usize = fold["- (folded: ".len()..]
        .split(' ')
        .next()
        .unwrap()
        .parse()
        .unwrap();
    assert!(fold.contains(&format!(", bash {n};")), "{fold}");
    // The folded calls are verbatim behind the cited lines; the rest in the log.
    let folded = cited(&mut store, fold);
    assert!(folded.contains("pattern_0' src/module_0/"), "{folded}");
    assert!(folded.contains(&format!("pattern_{}' src/module_{}/", n - 1, n - 1)));
    assert!(
        log.contains(&format!("pattern_{n}' src/module_{n}/")),
        "{log}"
    );
    let in_log = log.lines().filter(|l| l.starts_with("- bash ")).count();
    assert_eq!(n + in_log + 4 / 2, 120, "every call folded, logged or kept");
    for bad in [json!(0), json!(1.5), json!(-0.1)] {
        let e = Config::from_json(json!({"compact": {"callLogShare": bad}})).unwrap_err();
        assert_eq!(e.path, "compact.callLogShare");
    }
}

/// A kept view masks the secrets its output showed, like all text TraceLite
/// writes, and the report counts only the secrets of what it kept.
#[test]
fn kept_views_mask_secrets_and_count_only_what_they_keep() {
    let secret = "sk-proj-4fQ2b9XkLm7Rt8Vw3Yz6Qa1Bc5De9Fg2Hj4Kl7Mn0Pq";
    let (a, a_text) = file_view("/repo/settings.py", 30);
    let a_text = format!("{a_text}\n    31\tOPENAI_API_KEY = \"{secret}\"");
    let mut steps = vec![(a, a_text)];
    for i in 0..6 {
        steps.push(file_view(&format!("/repo/docs/f{i}.md"), 40));
    }
    let t = views_trajectory(&steps);
    let req = request(&t.conversation_at(t.steps.len()).unwrap());
    let run_with = |budget: u64| {
        let cfg = config(json!({"session": "masked", "spill": {"enabled": false},
            "compact": {"threshold": 2000, "planner": false, "keep": 2, "minSaving": 0, "liveViews": budget}}));
        run(
            &req,
            &cfg,
            &mut MemoryStore::new(),
            &mut HostState::default(),
        )
    };
    let out = run_with(20_000);
    let views = view_messages(&out);
    let kept = views
        .iter()
        .find(|v| v.contains("/repo/settings.py"))
        .expect("kept");
    assert!(
        !kept.contains(secret) && kept.contains("[REDACTED:"),
        "{kept}"
    );
    assert!(out.report.redactions.count >= 1);
    // Too small a budget for settings.py: nothing it showed is counted.
    let small = run_with(700);
    assert!(!view_messages(&small)
        .iter()
        .any(|v| v.contains("settings.py")));
    assert_eq!(
        small.report.redactions.count, 0,
        "{:?}",
        small.report.redactions
    );
}

/// A summary merged over many compactions stays within
/// `compact.summaryShare` of the budget: its oldest lines leave first (the
/// quoted error last), one line says how many and cites the previous
/// summary, which the compaction's blob keeps verbatim.
#[test]
fn merged_summary_stays_within_its_share() {
    let t = synthetic(60, 800);
    let share = 0.02;
    let budget = 40_000u64;
    let cfg = config(json!({"session": "summ", "budget": budget, "compact": {
        "threshold": 3000, "planner": false, "keep": 4, "minTurns": 2, "minSaving": 0,
        "liveViews": 0, "summaryShare": share}}));
    let cap = (share * budget as f64) as u64;
    let mut store = MemoryStore::new();
    let mut state = HostState::default();
    let mut history = t.conversation_at(0).unwrap();
    let (mut compactions, mut trimmed) = (0, 0);
    for step in 0..t.steps.len() {
        let (out, _) = next_turn(&t, step, &mut history, &cfg, &mut store, &mut state);
        if compacted(&out) {
            compactions += 1;
            let summary = summary_of(&out);
            let tokens = tracelite::tokens::TokenCounter::count(&Estimator, &summary).unwrap();
            assert!(
                tokens <= cap,
                "step {step}: {tokens} > {cap} tokens\n{summary}"
            );
            assert!(
                summary.contains("NameError: name 'c' is not defined"),
                "{summary}"
            );
            if let Some(note) = summary.lines().find(|l| l.contains("older summary lines")) {
                trimmed += 1;
                assert!(note.contains("(compact.summaryShare)"), "{note}");
                let previous = cited(&mut store, note);
                assert!(
                    previous.starts_with("--- previous summary ---\n"),
                    "{previous}"
                );
                assert!(previous.contains(SUMMARY_MARK));
            }
        }
        history = out.conversation;
    }
    assert!(
        compactions >= 4 && trimmed >= 2,
        "{compactions} compactions, {trimmed} trimmed"
    );
    for bad in [json!(0), json!(1.5), json!(-0.1)] {
        let e = Config::from_json(json!({"compact": {"summaryShare": bad}})).unwrap_err();
        assert_eq!(e.path, "compact.summaryShare");
    }
}

/// A host summarizer is asked for a summary within `compact.summaryShare`,
/// and an answer over it loses its oldest lines (the error last) when adopted.
#[test]
fn host_summary_over_its_share_is_fitted() {
    let t = synthetic(12, 1500);
    let cfg = config(json!({"session": "big", "budget": 40000, "compact": {
        "threshold": 2000, "planner": false, "keep": 4, "summaryShare": 0.01}}));
    let (out, _, mut state) = compact_whole(&t, &cfg);
    let prompt = state.compact.pending_prompt("big").unwrap().to_string();
    assert!(prompt.contains("under 400 tokens"), "{prompt}");
    let progress: Vec<String> = (0..80)
        .map(|i| format!("- Step {i}: looked at module_{i}.py and its tests."))
        .collect();
    let answer = format!(
        "## Goal\nFix add.\n## Progress\n{}\n## Key facts\n- Error: `NameError: name 'c' is not defined` spill://big/x\n## Decisions\nUse +.\n## Next steps\nSubmit.",
        progress.join("\n")
    );
    let mut conv = out.conversation.clone();
    adopt_summary(&mut conv, &mut state.compact, &cfg, &answer).unwrap();
    let text = summary_of(&Output {
        conversation: conv,
        ..out
    });
    let tokens = tracelite::tokens::TokenCounter::count(&Estimator, &text).unwrap();
    assert!(tokens <= 400, "{tokens}\n{text}");
    assert!(
        text.contains("NameError: name 'c' is not defined"),
        "{text}"
    );
    assert!(
        text.contains("- Step 79:") && !text.contains("- Step 0:"),
        "{text}"
    );
    let note = line_with(&text, "older summary lines are not repeated here");
    assert!(note.contains("spill://big/"), "{note}");
}

/// Two tasks in one session: the whole of a first task, then the user's
/// second task and its first `steps` steps (tool call ids prefixed `b_`).
fn two_tasks(steps: usize) -> Conversation {
    let a = synthetic(3, 400);
    let mut conv = a.conversation_at(a.steps.len()).unwrap();
    conv.messages.push(Message::text(
        Role::User,
        "Second task: the same module also needs `sub` fixed.",
    ));
    let b = synthetic(3, 400).conversation_at(steps).unwrap();
    for mut m in b.messages.into_iter().skip(1) {
        for p in &mut m.parts {
            match &mut p.kind {
                PartKind::ToolCall(c) => c.id = format!("b_{}", c.id),
                PartKind::ToolResult(r) => r.call_id = format!("b_{}", r.call_id),
                _ => {}
            }
        }
        conv.messages.push(m);
    }
    conv
}

/// Ids of the tool results a request still shows.
fn result_ids(conv: &Conversation) -> Vec<String> {
    conv.messages
        .iter()
        .flat_map(|m| &m.parts)
        .filter_map(|p| match &p.kind {
            PartKind::ToolResult(r) => Some(r.call_id.clone()),
            _ => None,
        })
        .collect()
}

/// In a session of several tasks, a stage boundary under `taskFirst`
/// compacts the earlier tasks and keeps every output of the current one;
/// once only the current task is left, it waits; by default (`taskFirst`
/// 0) every task is compacted alike.
#[test]
fn stage_boundary_compacts_earlier_tasks_first() {
    let cfg = config(
        json!({"session": "tasks", "compact": {"threshold": 1_000_000, "taskFirst": 1_000_000, "planner": false, "keep": 2, "minSaving": 0, "minTurns": 0}}),
    );
    let mut store = MemoryStore::new();
    let mut state = HostState::default();
    // Steps 0-4 of the second task: its step 4 passes after an edit.
    let conv = two_tasks(5);
    let out = run(&request(&conv), &cfg, &mut store, &mut state);
    assert!(compacted(&out), "{:?}", compact_notes(&out));
    let ids = result_ids(&out.conversation);
    let current: Vec<String> = (0..5).map(|i| format!("b_call_{i}")).collect();
    assert_eq!(ids, current, "the current task's outputs, all of them");
    assert!(out
        .conversation
        .messages
        .iter()
        .any(|m| m.text_content().contains("NameError: name 'c'")));
    // The next boundary finds only the current task: nothing to compact.
    state.compact.finish_stage("tasks");
    let next = run(&request(&two_tasks(7)), &cfg, &mut store, &mut state);
    assert!(!compacted(&next), "{:?}", compact_notes(&next));
    assert!(
        compact_notes(&next)
            .iter()
            .any(|n| n.contains("the current task's")),
        "{:?}",
        compact_notes(&next)
    );
    // Over the threshold the current task is compacted as before.
    let tight = config(
        json!({"session": "tasks-tight", "compact": {"threshold": 1_000, "taskFirst": 1_000_000, "planner": false, "keep": 2, "minSaving": 0, "minTurns": 0}}),
    );
    // A fresh session's request: compacted, with fewer of its `steps` outputs.
    let shown_after_compaction = |steps: usize, cfg: &Config| {
        let out = run(
            &request(&two_tasks(steps)),
            cfg,
            &mut MemoryStore::new(),
            &mut HostState::default(),
        );
        assert!(compacted(&out), "{:?}", compact_notes(&out));
        result_ids(&out.conversation).len()
    };
    assert!(shown_after_compaction(7, &tight) < 7);
    let mut plain = cfg.clone();
    plain.session = "tasks-off".into();
    plain.compact.task_first = 0;
    assert!(shown_after_compaction(5, &plain) < 5);
}
