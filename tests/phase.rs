//! Stage 3 (edit-triggered clean-up) through the public pipeline.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing,
    clippy::field_reassign_with_default
)]

mod common;

use serde_json::{json, Value};
use tracelite::formats::FormatName;
use tracelite::{compress, compress_with, Config, Env, MemoryStore, SessionState, SpillStore};

fn only_phase() -> Config {
    let mut c = Config::default();
    c.session = "ph".into();
    c.spill.enabled = false;
    c.dedup.enabled = false;
    c.optical.enabled = false;
    c.compact.enabled = false;
    c
}

/// A request of (tool, arguments, output) steps.
fn request(steps: &[(&str, Value, &str)]) -> String {
    let mut messages = vec![json!({"role": "user", "content": "fix the bug"})];
    for (i, (tool, args, out)) in steps.iter().enumerate() {
        messages.push(
            json!({"role": "assistant", "content": null, "tool_calls": [{
                "id": format!("c{i}"), "type": "function",
                "function": {"name": tool, "arguments": args.to_string()}
            }]}),
        );
        messages.push(json!({"role": "tool", "content": out, "tool_call_id": format!("c{i}")}));
    }
    json!({"model": "m", "messages": messages}).to_string()
}

fn long_output(tag: &str) -> String {
    (0..40)
        .map(|i| format!("{tag} line {i}: some diagnostic output that the agent read"))
        .collect::<Vec<_>>()
        .join("\n")
}

fn messages(request: &str) -> Vec<Value> {
    let v: Value = serde_json::from_str(request).unwrap();
    v["messages"].as_array().unwrap().clone()
}

fn bash(cmd: &str) -> Value {
    json!({ "command": cmd })
}

#[test]
fn results_before_the_first_edit_become_tombstones_that_keep_the_call() {
    let grep = long_output("grep");
    let view = long_output("view");
    let test = long_output("test");
    let req = request(&[
        ("bash", bash("grep -rn parse_config ."), &grep),
        ("bash", bash("nl -ba app/config.py | sed -n '1,40p'"), &view),
        (
            "bash",
            bash("sed -i 's/strict=True/strict=False/' app/config.py"),
            "",
        ),
        ("bash", bash("pytest -q"), &test),
    ]);
    let mut store = MemoryStore::new();
    let out = compress(&req, &only_phase(), &mut store).unwrap();
    let before = messages(&req);
    let after = messages(&out.request);
    assert_eq!(before.len(), after.len());
    // Every tool call is kept verbatim, in order.
    for (b, a) in before.iter().zip(&after) {
        assert_eq!(b["tool_calls"], a["tool_calls"]);
        assert_eq!(b["tool_call_id"], a["tool_call_id"]);
    }
    for (i, original) in [(2, &grep), (4, &view)] {
        let stone = after[i]["content"].as_str().unwrap();
        assert!(
            stone.starts_with("[output cleared at the edit in step 3: 40 lines ("),
            "{stone}"
        );
        let pointer = stone
            .split("full text: ")
            .nth(1)
            .unwrap()
            .trim_end_matches(']');
        let (session, key) = pointer
            .strip_prefix("spill://")
            .unwrap()
            .split_once('/')
            .unwrap();
        assert_eq!(&store.get(session, key).unwrap(), original);
    }
    // The edit's own result and everything after it stay.
    assert_eq!(after[6], before[6]);
    assert_eq!(after[8], before[8]);
    let stones: Vec<_> = out
        .report
        .changes
        .iter()
        .filter(|c| c.kind == "tombstone")
        .collect();
    assert_eq!(stones.len(), 2);
    assert!(stones.iter().all(|c| c.tokens_after < c.tokens_before));
    let phase = out
        .report
        .stages
        .iter()
        .find(|s| s.stage == tracelite::pipeline::StageName::Phase);
    let note = &phase.unwrap().notes[0];
    assert!(
        note.contains("first at step 3 (sed-in-place app/config.py)"),
        "{note}"
    );
}

#[test]
fn no_edit_no_change_and_reads_that_look_like_writes_do_not_count() {
    let out1 = long_output("a");
    let req = request(&[
        ("bash", bash("grep -rn \"sed -i\" scripts/"), &out1),
        ("bash", bash("python3 repro.py > out.txt 2>&1"), &out1),
        (
            "str_replace_editor",
            json!({"command": "view", "path": "/a.py"}),
            &out1,
        ),
        ("bash", bash("cat out.txt"), &out1),
    ]);
    let out = compress(&req, &only_phase(), &mut MemoryStore::new()).unwrap();
    assert_eq!(out.request, req);
}

#[test]
fn failed_edits_do_not_start_a_phase_unless_asked() {
    let view = long_output("view");
    let steps = [
        ("bash", bash("cat app.py"), view.as_str()),
        (
            "str_replace_editor",
            json!({"command": "str_replace", "path": "/app.py", "old_str": "x", "new_str": "y"}),
            "ERROR:\nNo replacement was performed, old_str `x` did not appear verbatim in /app.py.",
        ),
    ];
    let req = request(&steps);
    let out = compress(&req, &only_phase(), &mut MemoryStore::new()).unwrap();
    assert_eq!(out.request, req);
    let mut c = only_phase();
    c.phase.skip_failed = false;
    let out = compress(&req, &c, &mut MemoryStore::new()).unwrap();
    assert!(messages(&out.request)[2]["content"]
        .as_str()
        .unwrap()
        .starts_with("[output cleared at the edit in step 2"));
}

#[test]
fn every_phase_also_clears_diagnosis_between_later_edits() {
    let a = long_output("a");
    let b = long_output("b");
    let edited = long_output("edited");
    let req = request(&[
        ("bash", bash("cat app.py"), &a),
        (
            "str_replace_editor",
            json!({"command": "create", "path": "/fix.py", "file_text": "x"}),
            &edited,
        ),
        ("bash", bash("pytest"), &b),
        ("bash", bash("echo 'y = 2' >> fix.py"), ""),
    ]);
    // Default: only the first phase is cleared.
    let out = compress(&req, &only_phase(), &mut MemoryStore::new()).unwrap();
    let m = messages(&out.request);
    assert!(m[2]["content"]
        .as_str()
        .unwrap()
        .starts_with("[output cleared at the edit in step 2"));
    assert_eq!(m[4]["content"], json!(edited));
    assert_eq!(m[6]["content"], json!(b));
    // everyPhase: the test output before the second edit goes too, edit results stay.
    let mut c = only_phase();
    c.phase.every_phase = true;
    let out = compress(&req, &c, &mut MemoryStore::new()).unwrap();
    let m = messages(&out.request);
    assert!(m[2]["content"]
        .as_str()
        .unwrap()
        .starts_with("[output cleared at the edit in step 4"));
    assert_eq!(m[4]["content"], json!(edited));
    assert!(m[6]["content"]
        .as_str()
        .unwrap()
        .starts_with("[output cleared at the edit in step 4"));
}

#[test]
fn short_results_stay_when_a_tombstone_would_cost_more() {
    let req = request(&[
        ("bash", bash("ls"), "a.py\nb.py"),
        ("bash", bash("sed -i 's/a/b/' a.py"), ""),
    ]);
    let out = compress(&req, &only_phase(), &mut MemoryStore::new()).unwrap();
    assert_eq!(out.request, req);
}

#[test]
fn idempotent() {
    let a = long_output("a");
    let req = request(&[
        ("bash", bash("cat a.py"), &a),
        ("bash", bash("sed -i 's/a/b/' a.py"), ""),
    ]);
    let once = compress(&req, &only_phase(), &mut MemoryStore::new()).unwrap();
    assert_ne!(once.request, req);
    let twice = compress(&once.request, &only_phase(), &mut MemoryStore::new()).unwrap();
    assert_eq!(twice.request, once.request);
}

/// On a real run the prefix breaks once (at the first edit) and is stable after it.
#[test]
fn real_run_prefix_breaks_once() {
    let Some(path) = common::trace_files().into_iter().find(|p| {
        p.file_name()
            .is_some_and(|n| n.to_string_lossy().starts_with("mini-swe-agent"))
    }) else {
        return;
    };
    let trajectory = common::load_trace(&path);
    let c = only_phase();
    let mut store = MemoryStore::new();
    let mut state = SessionState::default();
    let mut previous: Option<String> = None;
    let mut breaks = 0;
    let mut cleared = false;
    for t in 1..trajectory.steps.len().min(30) {
        let req = tracelite::trajectory_to_request(&trajectory, t, FormatName::OpenaiChat)
            .unwrap()
            .to_string();
        let out = compress_with(
            &req,
            &c,
            Env {
                store: &mut store,
                counter: &tracelite::tokens::Estimator,
                state: &mut state,
                previous: previous.as_deref(),
            },
        )
        .unwrap();
        if let Some(p) = &out.report.prefix {
            // Appending a turn keeps the previous request as a prefix, except
            // for its closing `]}`, unless something earlier changed.
            if p.shared_bytes + 2 < p.previous_bytes {
                breaks += 1;
            }
        }
        cleared |= out.report.changes.iter().any(|c| c.kind == "tombstone");
        previous = Some(out.request);
    }
    assert!(cleared, "{}: no clean-up in 30 turns", path.display());
    assert_eq!(breaks, 1, "{}", path.display());
}

#[test]
fn scratch_scripts_can_be_left_out_of_the_trigger() {
    let a = long_output("a");
    let b = long_output("b");
    let req = request(&[
        ("bash", bash("cat app.py"), &a),
        (
            "bash",
            bash("cat <<'EOF' > reproduce_issue.py\nimport app\nEOF"),
            "",
        ),
        ("bash", bash("python reproduce_issue.py"), &b),
        ("bash", bash("sed -i 's/x/y/' app.py"), ""),
    ]);
    // By default the heredoc writing the script is the first edit.
    let out = compress(&req, &only_phase(), &mut MemoryStore::new()).unwrap();
    let m = messages(&out.request);
    assert!(m[2]["content"].as_str().unwrap().contains("edit in step 2"));
    assert_eq!(m[6]["content"], json!(b));
    // Ignoring reproduction scripts moves the trigger to the real edit.
    let mut c = only_phase();
    c.phase.ignore_targets = vec!["reproduce*".into()];
    let out = compress(&req, &c, &mut MemoryStore::new()).unwrap();
    let m = messages(&out.request);
    assert!(m[2]["content"].as_str().unwrap().contains("edit in step 4"));
    assert!(m[6]["content"].as_str().unwrap().contains("edit in step 4"));
}
