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
use tracelite::stage::Schedule;
use tracelite::{compress_json, Config, Env, HostState, MemoryStore, SpillStore};

fn only_phase() -> Config {
    let mut c = Config::default();
    c.session = "ph".into();
    c.spill.enabled = false;
    c.dedup.enabled = false;
    c.optical.enabled = tracelite::config::OpticalSwitch::Off;
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

/// Phase only, every observation outside the window at once (window 0, batch 1).
fn eager() -> Config {
    let mut c = only_phase();
    c.window = 0;
    c.optical.batch = 1;
    c
}

fn stone_of(m: &Value) -> Option<&str> {
    m["content"]
        .as_str()
        .filter(|s| s.starts_with("[output cleared at step "))
}

#[test]
fn consumed_and_superseded_outputs_become_tombstones_that_keep_the_call() {
    let grep = long_output("grep");
    let listing = long_output("listing");
    let view = long_output("view");
    let other = long_output("other");
    let test = long_output("test");
    let req = request(&[
        ("bash", bash("grep -rn parse_config ."), &grep),
        ("bash", bash("ls -R app"), &listing),
        ("bash", bash("nl -ba app/config.py | sed -n '1,40p'"), &view),
        ("bash", bash("cat app/other.py"), &other),
        ("bash", bash("pytest -q"), &test),
        (
            "bash",
            bash("sed -i 's/strict=True/strict=False/' app/config.py"),
            "",
        ),
        ("bash", bash("pytest -q"), &test),
    ]);
    let mut store = MemoryStore::new();
    let out = compress_json(
        &req,
        &eager(),
        Env::new(&mut store, &mut HostState::default()),
    )
    .unwrap();
    let before = messages(&req);
    let after = messages(&out.request);
    assert_eq!(before.len(), after.len());
    // Every tool call is kept verbatim, in order.
    for (b, a) in before.iter().zip(&after) {
        assert_eq!(b["tool_calls"], a["tool_calls"]);
        assert_eq!(b["tool_call_id"], a["tool_call_id"]);
    }
    // The search, the listing and the view of the edited file are cleared,
    // each readable through its pointer; the test run that ran again after
    // the phase began only with everyPhase (the prefix breaks once by default).
    assert_eq!(after[10], before[10]);
    let mut every = eager();
    every.phase.every_phase = true;
    let out_every = compress_json(
        &req,
        &every,
        Env::new(&mut store, &mut HostState::default()),
    )
    .unwrap();
    let after_every = messages(&out_every.request);
    for (i, original) in [(2, &grep), (4, &listing), (6, &view), (10, &test)] {
        let after = if i == 10 { &after_every } else { &after };
        let stone = stone_of(&after[i]).unwrap_or_else(|| panic!("message {i} kept"));
        // Named after the step that made it obsolete: the change, or the re-run.
        let by = if i == 10 { 7 } else { 6 };
        assert!(
            stone.starts_with(&format!("[output cleared at step {by}: 40 lines (")),
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
    // The view of a file the change did not touch stays (the agent may quote
    // it), and so do the edit's result and everything after the phase began.
    assert_eq!(after[8], before[8]);
    assert_eq!(after[12], before[12]);
    assert_eq!(after[14], before[14]);
    let details: Vec<&str> = out
        .report
        .changes
        .iter()
        .filter(|c| c.kind == "tombstone")
        .map(|c| c.detail.as_str())
        .collect();
    assert_eq!(details.len(), 3);
    assert!(details[0].contains("a search consumed"), "{details:?}");
    assert!(details[1].contains("a listing consumed"), "{details:?}");
    assert!(
        details[2].contains("a view of a file edited since"),
        "{details:?}"
    );
    assert!(out_every
        .report
        .changes
        .iter()
        .any(|c| c.detail.contains("superseded by a later run")));
    let phase = out
        .report
        .stages
        .iter()
        .find(|s| s.stage == tracelite::pipeline::StageName::Phase);
    let note = &phase.unwrap().notes[0];
    assert!(
        note.contains("phase begins at step 6 (sed-in-place app/config.py)"),
        "{note}"
    );
    // Each reason can be switched off.
    let mut c = every.clone();
    c.phase.clear = vec!["reruns".into()];
    let out = compress_json(
        &req,
        &c,
        Env::new(&mut MemoryStore::new(), &mut HostState::default()),
    )
    .unwrap();
    let m = messages(&out.request);
    let cleared: Vec<usize> = (0..m.len())
        .filter(|&i| stone_of(&m[i]).is_some())
        .collect();
    assert_eq!(cleared, vec![10]);
    let e = Config::from_json(json!({"phase": {"clear": ["everything"]}})).unwrap_err();
    assert_eq!(e.path, "phase.clear");
}

#[test]
fn nothing_inside_the_recent_window_is_touched() {
    let grep = long_output("grep");
    let req = request(&[
        ("bash", bash("grep -rn parse_config ."), &grep),
        ("bash", bash("grep -rn strict app"), &grep),
        (
            "bash",
            bash("sed -i 's/strict=True/strict=False/' app/config.py"),
            "",
        ),
        ("bash", bash("grep -rn other app"), &grep),
        ("bash", bash("git diff"), "diff"),
        ("bash", bash("pytest"), "ok"),
    ]);
    // Window 3, batches of 3: the first three observations have left it.
    let out = compress_json(
        &req,
        &only_phase(),
        Env::new(&mut MemoryStore::new(), &mut HostState::default()),
    )
    .unwrap();
    let m = messages(&out.request);
    assert!(stone_of(&m[2]).is_some());
    assert!(stone_of(&m[4]).is_some());
    assert_eq!(m[8]["content"], json!(grep));
    // Until the change itself has left the window, nothing is cleared.
    let mut c = only_phase();
    c.window = 4;
    let out = compress_json(
        &req,
        &c,
        Env::new(&mut MemoryStore::new(), &mut HostState::default()),
    )
    .unwrap();
    assert_eq!(out.request, req);
}

#[test]
fn creating_a_script_or_editing_it_is_still_diagnosis() {
    let grep = long_output("grep");
    let run = long_output("run");
    let steps = [
        ("bash", bash("grep -rn parse_config ."), grep.as_str()),
        (
            "str_replace_editor",
            json!({"command": "create", "path": "/w/reproduce_issue.py", "file_text": "import app"}),
            "File created successfully at: /w/reproduce_issue.py",
        ),
        (
            "str_replace_editor",
            json!({"command": "str_replace", "path": "/w/reproduce_issue.py", "old_str": "import app", "new_str": "import app, sys"}),
            "The file /w/reproduce_issue.py has been edited.",
        ),
        (
            "bash",
            bash("cat > /w/test_new.py <<'EOF'\nimport app\nEOF"),
            "",
        ),
        ("bash", bash("python /w/reproduce_issue.py"), run.as_str()),
    ];
    let req = request(&steps);
    let out = compress_json(
        &req,
        &eager(),
        Env::new(&mut MemoryStore::new(), &mut HostState::default()),
    )
    .unwrap();
    assert_eq!(out.request, req, "no change to a file that existed before");
    let note = &out.report.stages[2].notes[0];
    assert!(
        note.contains("none to a file that existed before the session"),
        "{note}"
    );
    // The first change to existing code begins the phase.
    let mut more = steps.to_vec();
    more.push((
        "str_replace_editor",
        json!({"command": "str_replace", "path": "/w/app/config.py", "old_str": "a", "new_str": "b"}),
        "The file /w/app/config.py has been edited.",
    ));
    let req = request(&more);
    let out = compress_json(
        &req,
        &eager(),
        Env::new(&mut MemoryStore::new(), &mut HostState::default()),
    )
    .unwrap();
    let m = messages(&out.request);
    assert!(stone_of(&m[2]).unwrap().contains("at step 6"));
    // Overwriting a file that an earlier output showed is a change too.
    let req = request(&[
        (
            "bash",
            bash("grep -rn parse_config ."),
            &format!("app/config.py:3: def parse_config\n{grep}"),
        ),
        ("bash", bash("cat > app/config.py <<'EOF'\nx = 1\nEOF"), ""),
    ]);
    let out = compress_json(
        &req,
        &eager(),
        Env::new(&mut MemoryStore::new(), &mut HostState::default()),
    )
    .unwrap();
    assert!(stone_of(&messages(&out.request)[2]).is_some());
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
    let out = compress_json(
        &req,
        &eager(),
        Env::new(&mut MemoryStore::new(), &mut HostState::default()),
    )
    .unwrap();
    assert_eq!(out.request, req);
}

#[test]
fn failed_edits_do_not_start_a_phase_unless_asked() {
    let grep = long_output("grep");
    let steps = [
        ("bash", bash("grep -n x app.py"), grep.as_str()),
        (
            "str_replace_editor",
            json!({"command": "str_replace", "path": "/app.py", "old_str": "x", "new_str": "y"}),
            "ERROR:\nNo replacement was performed, old_str `x` did not appear verbatim in /app.py.",
        ),
    ];
    let req = request(&steps);
    let out = compress_json(
        &req,
        &eager(),
        Env::new(&mut MemoryStore::new(), &mut HostState::default()),
    )
    .unwrap();
    assert_eq!(out.request, req);
    let mut c = eager();
    c.phase.skip_failed = false;
    let out = compress_json(
        &req,
        &c,
        Env::new(&mut MemoryStore::new(), &mut HostState::default()),
    )
    .unwrap();
    assert!(stone_of(&messages(&out.request)[2])
        .unwrap()
        .starts_with("[output cleared at step 2"));
}

#[test]
fn by_default_the_phase_clears_once_every_phase_keeps_clearing() {
    let a = long_output("a");
    let b = long_output("b");
    let b2 = long_output("b2");
    let g = long_output("g");
    let edited = long_output("edited");
    let req = request(&[
        ("bash", bash("pytest"), &b),
        ("bash", bash("grep -rn y app.py"), &a),
        ("bash", bash("pytest"), &b2),
        ("bash", bash("sed -i 's/x/y/' app.py"), &edited),
        ("bash", bash("grep -rn z lib.py"), &g),
        ("bash", bash("sed -i 's/z/w/' lib.py"), ""),
        ("bash", bash("pytest"), &b2),
    ]);
    // Default: what was consumed or superseded before the phase began.
    let out = compress_json(
        &req,
        &eager(),
        Env::new(&mut MemoryStore::new(), &mut HostState::default()),
    )
    .unwrap();
    let m = messages(&out.request);
    assert!(stone_of(&m[2])
        .unwrap()
        .starts_with("[output cleared at step 3:"));
    assert!(stone_of(&m[4])
        .unwrap()
        .starts_with("[output cleared at step 4:"));
    assert_eq!(m[6]["content"], json!(b2));
    assert_eq!(m[8]["content"], json!(edited));
    assert_eq!(m[10]["content"], json!(g));
    // everyPhase: later re-runs and the search a later change consumed go too.
    let mut c = eager();
    c.phase.every_phase = true;
    let out = compress_json(
        &req,
        &c,
        Env::new(&mut MemoryStore::new(), &mut HostState::default()),
    )
    .unwrap();
    let m = messages(&out.request);
    assert!(stone_of(&m[6])
        .unwrap()
        .starts_with("[output cleared at step 7:"));
    assert_eq!(m[8]["content"], json!(edited));
    assert!(stone_of(&m[10]).is_some());
    // No change to existing code yet: nothing is cleared by default, but a
    // re-run is superseded with everyPhase.
    let req = request(&[
        ("bash", bash("python repro.py"), &b),
        ("bash", bash("python repro.py"), &b2),
    ]);
    let out = compress_json(
        &req,
        &eager(),
        Env::new(&mut MemoryStore::new(), &mut HostState::default()),
    )
    .unwrap();
    assert_eq!(out.request, req);
    let out = compress_json(
        &req,
        &c,
        Env::new(&mut MemoryStore::new(), &mut HostState::default()),
    )
    .unwrap();
    let m = messages(&out.request);
    assert!(stone_of(&m[2]).is_some());
    assert_eq!(m[4]["content"], json!(b2));
}

#[test]
fn tombstones_repeat_the_critical_lines() {
    let failing = format!(
        "{}\nTraceback (most recent call last):\n  File \"t.py\", line 3, in <module>\n    f()\nValueError: bad input 540\n<returncode>1</returncode>",
        long_output("run")
    );
    let req = request(&[
        ("bash", bash("python t.py"), &failing),
        ("bash", bash("python t.py"), "ok"),
        ("bash", bash("sed -i 's/x/y/' t.py"), ""),
    ]);
    let out = compress_json(
        &req,
        &eager(),
        Env::new(&mut MemoryStore::new(), &mut HostState::default()),
    )
    .unwrap();
    let stone = stone_of(&messages(&out.request)[2]).unwrap().to_string();
    assert!(
        stone.ends_with("\nit reported:\n  ValueError: bad input 540\n  exit code 1"),
        "{stone}"
    );
}

/// Every failing test of a long run stays text, not only the last few.
#[test]
fn tombstones_keep_every_failing_test_of_a_run() {
    let tests: Vec<String> = (0..12)
        .map(|i| format!("FAIL: test_case_{i} (app.tests.Suite)"))
        .collect();
    let failing = format!(
        "{}\n{}\nFAILED (failures=12)",
        long_output("run"),
        tests.join("\n")
    );
    let req = request(&[
        ("bash", bash("python -m unittest"), &failing),
        ("bash", bash("python -m unittest"), "ok"),
        ("bash", bash("sed -i 's/x/y/' t.py"), ""),
    ]);
    let out = compress_json(
        &req,
        &eager(),
        Env::new(&mut MemoryStore::new(), &mut HostState::default()),
    )
    .unwrap();
    let stone = stone_of(&messages(&out.request)[2]).unwrap().to_string();
    for t in &tests {
        assert!(stone.contains(&format!("\n  {t}")), "{t} missing: {stone}");
    }
}

#[test]
fn short_results_stay_when_a_tombstone_would_cost_more() {
    let req = request(&[
        ("bash", bash("ls"), "a.py\nb.py"),
        ("bash", bash("sed -i 's/a/b/' a.py"), ""),
    ]);
    let out = compress_json(
        &req,
        &eager(),
        Env::new(&mut MemoryStore::new(), &mut HostState::default()),
    )
    .unwrap();
    assert_eq!(out.request, req);
}

#[test]
fn idempotent() {
    let a = long_output("a");
    let req = request(&[
        ("bash", bash("grep -n a a.py"), &a),
        ("bash", bash("sed -i 's/a/b/' a.py"), ""),
    ]);
    let once = compress_json(
        &req,
        &eager(),
        Env::new(&mut MemoryStore::new(), &mut HostState::default()),
    )
    .unwrap();
    assert_ne!(once.request, req);
    let twice = compress_json(
        &once.request,
        &eager(),
        Env::new(&mut MemoryStore::new(), &mut HostState::default()),
    )
    .unwrap();
    assert_eq!(twice.request, once.request);
}

/// On a real run the prefix breaks only when a batch of observations leaves
/// the recent window, and the clean-up happens.
#[test]
#[cfg_attr(tracelite_no_traces, ignore = "needs ../shared/traces")]
fn real_run_prefix_breaks_only_at_batches() {
    let files = common::required_trace_files();
    let c = only_phase();
    let mut cleared_runs = 0;
    for path in files.iter().take(12) {
        let trajectory = common::load_trace(path);
        let mut store = MemoryStore::new();
        let mut state = HostState::default();
        let mut previous: Option<String> = None;
        let mut cleared = false;
        for t in 1..trajectory.steps.len().min(40) {
            let req = tracelite::trajectory_to_request(&trajectory, t, FormatName::OpenaiChat)
                .unwrap()
                .to_string();
            let out = compress_json(
                &req,
                &c,
                Env {
                    store: &mut store,
                    counter: &tracelite::tokens::Estimator,
                    state: &mut state,
                    previous: previous.as_deref(),
                    format: None,
                    known: Default::default(),
                },
            )
            .unwrap();
            if let Some(p) = &out.report.prefix {
                // Appending a turn keeps the previous request as a prefix, except
                // for its closing `]}`, unless something earlier changed.
                if p.shared_bytes + 2 < p.previous_bytes {
                    assert_ne!(
                        Schedule::fixed(&c, t).demoted(),
                        Schedule::fixed(&c, t - 1).demoted(),
                        "{}: prefix broke at turn {t} without a batch leaving the window",
                        path.display()
                    );
                }
            }
            cleared |= out.report.changes.iter().any(|c| c.kind == "tombstone");
            previous = Some(out.request);
        }
        cleared_runs += usize::from(cleared);
    }
    assert!(cleared_runs > 0, "no clean-up in 12 real runs");
}

#[test]
fn scratch_targets_can_be_left_out_of_the_trigger() {
    let a = long_output("a");
    let req = request(&[
        ("bash", bash("grep -rn x ."), &a),
        ("bash", bash("sed -i 's/x/y/' tests/test_app.py"), ""),
        ("bash", bash("grep -rn y ."), &a),
        ("bash", bash("sed -i 's/x/y/' app.py"), ""),
    ]);
    let out = compress_json(
        &req,
        &eager(),
        Env::new(&mut MemoryStore::new(), &mut HostState::default()),
    )
    .unwrap();
    let m = messages(&out.request);
    assert!(stone_of(&m[2]).unwrap().contains("at step 2"));
    assert_eq!(m[6]["content"], json!(a));
    // Ignoring test files moves the trigger to the change of app.py.
    let mut c = eager();
    c.phase.ignore_targets = vec!["test_*".into()];
    let out = compress_json(
        &req,
        &c,
        Env::new(&mut MemoryStore::new(), &mut HostState::default()),
    )
    .unwrap();
    let m = messages(&out.request);
    assert!(stone_of(&m[2]).unwrap().contains("at step 4"));
    assert!(stone_of(&m[6]).unwrap().contains("at step 4"));
}

#[test]
fn with_a_pointer_root_tombstones_name_the_file_of_the_cleared_output() {
    let grep = long_output("grep");
    let test = long_output("test");
    let req = request(&[
        ("bash", bash("grep -rn parse_config ."), &grep),
        ("bash", bash("pytest -q"), &test),
        ("bash", bash("sed -i 's/a/b/' app/config.py"), ""),
        ("bash", bash("pytest -q"), &test),
    ]);
    let mut rooted = eager();
    rooted.spill.pointer_root = "/srv/agent/tool-output".into();
    let mut store = MemoryStore::new();
    let out = compress_json(
        &req,
        &rooted,
        Env::new(&mut store, &mut HostState::default()),
    )
    .unwrap();
    let stone = stone_of(&messages(&out.request)[2])
        .expect("the search is cleared")
        .to_string();
    let path = stone
        .split("full text: ")
        .nth(1)
        .unwrap()
        .trim_end_matches(']');
    let key = path
        .strip_prefix("/srv/agent/tool-output/ph/")
        .and_then(|p| p.strip_suffix(".txt"))
        .unwrap_or_else(|| panic!("{stone}"));
    assert_eq!(store.get("ph", key).unwrap(), grep);
    // The same request without the root: the same tombstone with spill://.
    let plain = compress_json(
        &req,
        &eager(),
        Env::new(&mut MemoryStore::new(), &mut HostState::default()),
    )
    .unwrap();
    let plain_stone = stone_of(&messages(&plain.request)[2]).unwrap().to_string();
    assert_eq!(
        plain_stone,
        stone.replace(path, &format!("spill://ph/{key}"))
    );
}
