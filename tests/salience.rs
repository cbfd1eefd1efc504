//! Salience at arrival (`spill.salience`): the model's signals, the fold
//! markers, round trips through the store (every folded line reads back),
//! determinism and cache safety (a later turn never changes an earlier fold).
#![allow(
    clippy::indexing_slicing,
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic
)]

mod common;

use serde_json::{json, Value};
use tracelite::config::SalienceConfig;
use tracelite::model::ToolCall;
use tracelite::spill::lines::LineIndex;
use tracelite::spill::salience::{folds, render, salient, Arrival, Names};
use tracelite::spill::{self, parse_pointer};
use tracelite::{compress_json, Config, Env, ErrorCode, HostState, MemoryStore, SpillStore};

const TASK: &str = "The `frobnicate_widget` helper drops the last item; fix it in widgets/core.py.";

/// A test log of `n` lines: passing noise, one line naming the task's
/// function, a traceback with its frame and error in the middle.
fn log(n: usize) -> String {
    let mut out = String::new();
    for i in 1..=n {
        let line = match i {
            _ if i == n / 3 => "checking frobnicate_widget with 3 items".to_string(),
            _ if i == n / 2 => "Traceback (most recent call last):".to_string(),
            _ if i == n / 2 + 1 => "  File \"widgets/core.py\", line 41, in helper".to_string(),
            _ if i == n / 2 + 2 => "ValueError: list index out of range".to_string(),
            _ => format!("tests/test_misc.py::test_case_{i} PASSED"),
        };
        out.push_str(&line);
        out.push('\n');
    }
    out.push_str("== 1 failed, 117 passed ==");
    out
}

/// A request: the task, then one bash call per output, each answered.
fn request(outputs: &[&str]) -> String {
    let mut messages = vec![json!({"role": "user", "content": TASK})];
    for (i, output) in outputs.iter().enumerate() {
        let id = format!("c{i}");
        messages.push(json!({"role": "assistant", "content": "Running the tests.", "tool_calls": [
            {"id": id, "type": "function", "function": {"name": "bash", "arguments": "{\"command\":\"pytest -q\"}"}}
        ]}));
        messages.push(json!({"role": "tool", "content": output, "tool_call_id": id}));
    }
    json!({"model": "m", "messages": messages}).to_string()
}

fn config(extra: Value) -> Config {
    let mut options = json!({"session": "s1", "spill": {"salience": {"enabled": true}}});
    if let (Some(o), Some(e)) = (options.as_object_mut(), extra.as_object()) {
        for (k, v) in e {
            o.insert(k.clone(), v.clone());
        }
    }
    Config::from_json(options).unwrap()
}

fn compress(request: &str, config: &Config, store: &mut MemoryStore) -> String {
    compress_json(request, config, Env::new(store, &mut HostState::default()))
        .unwrap()
        .request
}

fn bash(command: &str) -> ToolCall {
    ToolCall {
        id: "c".into(),
        name: "bash".into(),
        arguments: json!({ "command": command }).to_string(),
    }
}

fn arrival(names: Names) -> Arrival {
    Arrival { names, view: false }
}

// ---- signals ----

#[test]
fn prose_gives_names_and_not_plain_words() {
    let mut names = Names::default();
    names.add_prose(TASK);
    names.add_prose("Look at DataFrame and py310, then `keep_me` and plain words.");
    let got: Vec<&str> = names.iter().collect();
    for want in [
        "frobnicate_widget",
        "widgets",
        "core",
        "DataFrame",
        "py310",
        "keep_me",
    ] {
        assert!(got.contains(&want), "{want} missing from {got:?}");
    }
    for plain in ["helper", "drops", "last", "plain", "words", "Look"] {
        assert!(!got.contains(&plain), "{plain} in {got:?}");
    }
}

#[test]
fn a_call_gives_its_argument_words_without_commands() {
    let mut names = Names::default();
    names.add_call(&bash("grep -rn resolve_lookup src/ | head -20"));
    let got: Vec<&str> = names.iter().collect();
    assert!(got.contains(&"resolve_lookup"), "{got:?}");
    assert!(!got.contains(&"grep") && !got.contains(&"head"), "{got:?}");
}

#[test]
fn errors_frames_definitions_and_names_are_salient() {
    let mut names = Names::default();
    names.add_prose(TASK);
    for line in [
        "Traceback (most recent call last):",
        "  File \"x.py\", line 3, in f",
        "ValueError: boom",
        "FAILED tests/t.py::test_a - assert 1 == 2",
        "    42\tdef compute_total(items):",
        "class Widget:",
        "calling frobnicate_widget now",
    ] {
        assert!(salient(line, &names), "{line}");
    }
    for line in [
        "tests/t.py::test_b PASSED",
        "collected 12 items",
        "frobnicate_widgets",
    ] {
        assert!(!salient(line, &names), "{line}");
    }
}

// ---- folds and markers ----

#[test]
fn folds_keep_the_ends_the_salient_lines_and_their_context() {
    let text = log(120);
    let index = LineIndex::new(&text);
    let mut names = Names::default();
    names.add_prose(TASK);
    let settings = SalienceConfig {
        enabled: true,
        ..SalienceConfig::default()
    };
    let runs = folds(&text, &index, &arrival(names), &settings);
    assert!(!runs.is_empty());
    let kept = |i: usize| !runs.iter().any(|r| r.contains(&i));
    // Ends (2 each side), the named line (40th, 0-based 39) ±1, the traceback block ±1.
    for i in [0, 1, 38, 39, 40, 58, 59, 60, 61, 62, 119, 120] {
        assert!(kept(i), "line {i} folded: {runs:?}");
    }
    assert!(!kept(10) && !kept(80), "{runs:?}");
    assert!(runs.iter().all(|r| r.len() >= settings.min_run), "{runs:?}");
    // Under minLines, or a view with keepViews: whole.
    let short = log(20);
    let few = folds(
        &short,
        &LineIndex::new(&short),
        &Arrival::default(),
        &settings,
    );
    assert!(few.is_empty());
    let view = Arrival {
        names: Names::default(),
        view: true,
    };
    assert!(folds(&text, &index, &view, &settings).is_empty());
}

#[test]
fn a_name_on_most_lines_marks_none_of_them() {
    let mut text = String::new();
    for i in 0..100 {
        let tail = if i == 50 { "frobnicate_widget" } else { "ok" };
        text.push_str(&format!("widgets_pkg/mod_{i}.py: {tail}\n"));
    }
    let index = LineIndex::new(&text);
    let mut names = Names::default();
    names.add_prose("In widgets_pkg, `frobnicate_widget` breaks.");
    let settings = SalienceConfig::default();
    let runs = folds(&text, &index, &arrival(names), &settings);
    let kept = |i: usize| !runs.iter().any(|r| r.contains(&i));
    assert!(kept(49) && kept(50) && kept(51), "{runs:?}");
    assert!(!kept(10) && !kept(90), "{runs:?}");
    // With every name telling (share 1), the project's name keeps every line.
    let all = SalienceConfig {
        max_name_share: 1.0,
        ..settings
    };
    let mut names = Names::default();
    names.add_prose("In widgets_pkg, `frobnicate_widget` breaks.");
    assert!(folds(&text, &index, &arrival(names), &all).is_empty());
}

#[test]
fn markers_say_how_many_lines_and_how_to_read_them_back() {
    let text = log(120);
    let index = LineIndex::new(&text);
    let settings = SalienceConfig::default();
    let runs = folds(&text, &index, &Arrival::default(), &settings);
    let first = runs[0].clone();
    let out = render(&text, &index, &runs, "spill://s1/k");
    assert!(out.starts_with("[TraceLite folded "), "{out}");
    assert!(out.contains("full output: spill://s1/k"));
    let marker = format!(
        "[… {} lines hidden ({}-{}): read_spill offset={} limit={} …]",
        first.len(),
        first.start + 1,
        first.end,
        first.start,
        first.len()
    );
    assert!(out.contains(&marker), "{marker}\n{out}");
    let path = render(&text, &index, &runs, "/data/s1/k.txt");
    let sed = format!("sed -n '{},{}p'", first.start + 1, first.end);
    assert!(path.contains(&sed), "{path}");
    assert!(path.contains("full output: /data/s1/k.txt"));
}

// ---- the stage: round trips, determinism, cache safety ----

/// The text put back together from a fold: each marker replaced by the
/// page its `read_spill` offset and limit read from the store.
fn unfold(folded: &str, store: &mut MemoryStore) -> String {
    let mut lines = folded.split_inclusive('\n');
    let header = lines.next().unwrap();
    let start = header.find("spill://").unwrap();
    let pointer = header[start..].split_whitespace().next().unwrap();
    let (session, key) = parse_pointer(pointer);
    let mut out = String::new();
    for line in lines {
        if let Some(rest) = line.strip_prefix("[… ") {
            let number = |name: &str| -> usize {
                let after = rest.split(name).nth(1).unwrap();
                after.split(' ').next().unwrap().parse().unwrap()
            };
            let (offset, limit) = (number("offset="), number("limit="));
            let page = store.read(session.unwrap(), key, offset, limit).unwrap();
            assert_eq!(page.count, limit);
            out.push_str(&page.text);
        } else {
            out.push_str(line);
        }
    }
    out
}

#[test]
fn every_folded_line_reads_back_from_the_store() {
    let text = log(300);
    let mut store = MemoryStore::new();
    let out = compress(&request(&[&text]), &config(json!({})), &mut store);
    let folded = &common::tool_texts(&out)[0];
    assert!(folded.len() < text.len() / 2, "{folded}");
    assert!(folded.contains("checking frobnicate_widget with 3 items"));
    assert!(folded.contains("ValueError: list index out of range"));
    let key = spill::content_key("tool", &text);
    assert!(folded.contains(&format!("spill://s1/{key}")));
    assert_eq!(unfold(folded, &mut store), text);
}

#[test]
fn a_fold_sent_back_is_not_folded_again() {
    let text = log(300);
    let cfg = config(json!({}));
    let out = compress(&request(&[&text]), &cfg, &mut MemoryStore::new());
    let folded = common::tool_texts(&out)[0].clone();
    let padded: String = folded
        .lines()
        .cycle()
        .take(120)
        .collect::<Vec<_>>()
        .join("\n");
    let again = compress(&request(&[&padded]), &cfg, &mut MemoryStore::new());
    assert_eq!(common::tool_texts(&again)[0], padded);
}

#[test]
fn off_by_default_and_small_outputs_stay_whole() {
    let text = log(100);
    let mut store = MemoryStore::new();
    let off = Config::from_json(json!({"session": "s1"})).unwrap();
    let out = compress(&request(&[&text]), &off, &mut store);
    assert_eq!(common::tool_texts(&out)[0], text);
    let small = log(30);
    let out = compress(&request(&[&small]), &config(json!({})), &mut store);
    assert_eq!(common::tool_texts(&out)[0], small);
}

#[test]
fn the_same_history_folds_to_the_same_bytes_and_later_turns_change_nothing() {
    let (a, b) = (log(300), log(240));
    // Dedup would (by design) rewrite lines the later output repeats.
    let cfg = config(json!({"dedup": {"enabled": false}}));
    let one = compress(&request(&[&a]), &cfg, &mut MemoryStore::new());
    let again = compress(&request(&[&a]), &cfg, &mut MemoryStore::new());
    assert_eq!(one, again);
    // A later turn (which names other things) leaves the earlier fold as it was.
    let two = compress(&request(&[&a, &b]), &cfg, &mut MemoryStore::new());
    assert_eq!(common::tool_texts(&one)[0], common::tool_texts(&two)[0]);
}

#[test]
fn the_producing_call_and_recent_calls_name_lines() {
    let mut text = String::new();
    for i in 0..200 {
        text.push_str(&format!("entry {i}: ordinary value\n"));
    }
    text.push_str("entry 200: resolve_lookup value\n");
    for i in 201..400 {
        text.push_str(&format!("entry {i}: ordinary value\n"));
    }
    let request = json!({"model": "m", "messages": [
        {"role": "user", "content": "Fix the bug."},
        {"role": "assistant", "content": null, "tool_calls": [
            {"id": "c1", "type": "function", "function": {"name": "bash", "arguments": "{\"command\":\"grep -rn resolve_lookup .\"}"}}
        ]},
        {"role": "tool", "content": text, "tool_call_id": "c1"},
    ]})
    .to_string();
    let out = compress(&request, &config(json!({})), &mut MemoryStore::new());
    let folded = &common::tool_texts(&out)[0];
    assert!(
        folded.contains("entry 200: resolve_lookup value"),
        "{folded}"
    );
    assert!(!folded.contains("entry 100: ordinary value"), "{folded}");
}

#[test]
fn a_path_pointer_fold_reads_back_with_sed() {
    let text = log(300);
    let mut store = MemoryStore::new();
    let cfg = config(json!({"spill": {"salience": {"enabled": true}, "pointerRoot": "/data/out"}}));
    let out = compress(&request(&[&text]), &cfg, &mut store);
    let folded = &common::tool_texts(&out)[0];
    let key = spill::content_key("tool", &text);
    assert!(
        folded.contains(&format!("full output: /data/out/s1/{key}.txt")),
        "{folded}"
    );
    assert!(folded.contains("sed -n '"), "{folded}");
}

#[test]
fn settings_out_of_range_name_the_field() {
    for (field, value) in [
        ("minRun", json!(1)),
        ("context", json!(51)),
        ("minLines", json!(0)),
        ("maxNameShare", json!(0.0)),
    ] {
        let err = Config::from_json(json!({"spill": {"salience": {field: value}}})).unwrap_err();
        assert_eq!(err.code, ErrorCode::InvalidOption);
        assert_eq!(err.path, format!("spill.salience.{field}"));
    }
}
