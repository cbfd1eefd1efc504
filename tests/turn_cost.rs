//! Per-turn cost of the stateful `TraceLite` class (issue 16, item 9),
//! without timing: the work a turn cannot reuse from earlier turns (texts
//! priced, bytes scanned for secrets, calls classified, messages emitted to
//! measure `bytesBefore`) depends on what changed, not on how long the
//! history is; and `bytesBefore`, counted message by message, is exact.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)]

use serde_json::{json, Value};
use tracelite::controller::Work;
use tracelite::formats::{self, FormatName};
use tracelite::model::{Extra, Image, Message, Part, PartKind, Role, ToolCall};
use tracelite::{Config, TraceLite};

#[path = "common/agent_loop.rs"]
mod agent_loop;

/// The call and output of step `t`: tests, searches, views, listings,
/// edits and script runs in turn, 20 lines of output (80 for a script), a
/// few lines repeated across steps.
fn step(t: usize) -> (ToolCall, String) {
    let command = match t % 6 {
        0 => format!("pytest tests/test_{}.py -x", t % 23),
        1 => format!("grep -rn 'def parse_{}' src", t % 11),
        2 => format!("cat src/module_{}/file_{}.py", t % 17, t % 5),
        3 => format!(
            "sed -i 's/old_{t}/new_{t}/' src/module_{}/file_{}.py",
            t % 17,
            t % 5
        ),
        4 => "ls -la src".to_string(),
        _ => format!("python scripts/check_{}.py", t % 7),
    };
    let lines = if t % 6 == 5 { 80 } else { 20 };
    let output = (0..lines)
        .map(|i| {
            if i % 5 == 0 {
                format!("src/shared/common_{i}.py: shared line seen in many outputs\n")
            } else {
                agent_loop::check_line(t, i)
            }
        })
        .collect();
    (agent_loop::bash(t, &command), output)
}

use agent_loop::session;

fn minus(a: Work, b: Work) -> Work {
    Work {
        counted_bytes: a.counted_bytes - b.counted_bytes,
        redacted_bytes: a.redacted_bytes - b.redacted_bytes,
        classified: a.classified - b.classified,
        weighed: a.weighed - b.weighed,
        deduped: a.deduped - b.deduped,
        measured: a.measured - b.measured,
    }
}

/// `turns` more steps, and one assemble after the last (requests are a
/// function of the history: the turns in between change no later one).
fn fill(tl: &mut TraceLite, from: usize, turns: usize) {
    for t in from..from + turns {
        let (call, output) = step(t);
        tl.process_step(call, output).unwrap();
    }
    tl.assemble(FormatName::OpenaiChat, Extra::new()).unwrap();
}

/// Work of `turns` more steps, each followed by an assemble.
fn run(tl: &mut TraceLite, from: usize, turns: usize) -> Work {
    let before = tl.work();
    for t in from..from + turns {
        let (call, output) = step(t);
        tl.process_step(call, output).unwrap();
        tl.assemble(FormatName::OpenaiChat, Extra::new()).unwrap();
    }
    minus(tl.work(), before)
}

#[test]
fn work_per_turn_does_not_grow_with_the_history() {
    let config = Config {
        // No compaction: the history the stages walk keeps growing.
        compact: tracelite::config::CompactConfig {
            enabled: false,
            ..Default::default()
        },
        // Over the threshold early: the planner hands observations over
        // from turn 40 on.
        budget: 40_000,
        // A model that reads images: the optical stage works too.
        model: "gpt-4o".into(),
        ..Config::default()
    };
    let mut tl = session(config);
    fill(&mut tl, 1, 100);
    let early = run(&mut tl, 101, 20);
    fill(&mut tl, 121, 280);
    let late = run(&mut tl, 401, 20);
    assert!(
        early.weighed > 0 && early.classified > 0 && early.deduped > 0,
        "{early:?}"
    );
    let messages = tl.conversation().messages.len();
    assert!(messages > 800, "{messages}");
    // The same kinds of step arrive: a turn at 400 redoes no more than one
    // at 100 (a margin for the planner's moves), while the history is four
    // times longer.
    let bound = |x: u64| x + x / 4 + 64;
    assert!(
        late.counted_bytes <= bound(early.counted_bytes),
        "{early:?} {late:?}"
    );
    assert!(
        late.redacted_bytes <= bound(early.redacted_bytes),
        "{early:?} {late:?}"
    );
    assert!(
        late.classified <= bound(early.classified),
        "{early:?} {late:?}"
    );
    // Each turn emits only its own new messages to measure `bytesBefore`.
    assert_eq!(late.measured, 40, "{late:?}");
    // A call is classified as it arrives and once more when a stage
    // rewrites its output, not once per turn.
    assert!(late.classified <= 3 * 20, "{late:?}");
}

fn base(format: FormatName) -> Extra {
    let mut base = Extra::new();
    base.insert("model".into(), json!("m"));
    if format == FormatName::OpenaiChat {
        base.insert("messages".into(), Value::Null);
    }
    base.insert("temperature".into(), json!(0));
    base
}

/// What `bytesBefore` means: the raw history emitted as is.
fn emitted_len(tl: &TraceLite, format: FormatName, base: &Extra) -> usize {
    let mut conv = tl.conversation().clone();
    conv.extra = base.clone();
    serde_json::to_string(&formats::emit(format, &conv))
        .unwrap()
        .len()
}

#[test]
fn bytes_before_counted_per_message_is_exact() {
    let formats = [
        FormatName::OpenaiChat,
        FormatName::OpenaiResponses,
        FormatName::Anthropic,
        FormatName::Gemini,
    ];
    for system in [true, false] {
        let mut config = Config::default();
        // Older outputs get spilled in place: their sizes change.
        config.limits.max_history_bytes = 8_000;
        let mut tl = TraceLite::new(config);
        if system {
            tl.add_message(Message::text(Role::System, "be brief"))
                .unwrap();
        }
        for t in 0..40 {
            match t % 5 {
                0 => tl
                    .add_message(Message::text(Role::User, format!("go on {t} \"é\"")))
                    .unwrap(),
                1 => tl
                    .add_message(Message {
                        role: Role::User,
                        parts: vec![
                            Part::text("look"),
                            Part::from(PartKind::Image(Image {
                                media_type: "image/png".into(),
                                data: "iVBORw0KGgo=".into(),
                                url: None,
                                width: 8,
                                height: 8,
                            })),
                        ],
                        ..Message::text(Role::User, "")
                    })
                    .unwrap(),
                // A thought the next call joins.
                2 => tl
                    .add_message(Message::text(Role::Assistant, format!("thinking {t}")))
                    .unwrap(),
                _ => {}
            }
            let (call, output) = step(t);
            let output = if t % 7 == 0 {
                output.repeat(30)
            } else {
                output
            };
            tl.process_step(call, output).unwrap();
            for format in formats {
                let base = base(format);
                let out = tl.assemble(format, base.clone()).unwrap();
                assert_eq!(
                    out.report.bytes_before,
                    emitted_len(&tl, format, &base),
                    "{format:?} turn {t} system {system}"
                );
            }
        }
    }
}

/// The caches a session keeps change no byte: its requests and reports equal
/// the stateless pipeline's on the same history with every cache dropped
/// before each call (only the compaction state carries over).
#[test]
fn the_caches_change_nothing() {
    let config = Config {
        budget: 40_000,
        model: "gpt-4o".into(),
        ..Config::default()
    };
    let mut tl = session(config.clone());
    let mut store = tracelite::MemoryStore::new();
    let mut state = tracelite::HostState::default();
    let mut previous: Option<String> = None;
    let base = base(FormatName::OpenaiChat);
    let mut kinds = std::collections::BTreeSet::new();
    for t in 1..=160 {
        let (call, output) = step(t);
        tl.process_step(call, output).unwrap();
        let got = tl.assemble(FormatName::OpenaiChat, base.clone()).unwrap();
        let mut conv = tl.conversation().clone();
        conv.extra = base.clone();
        let request = serde_json::to_string(&formats::emit(FormatName::OpenaiChat, &conv)).unwrap();
        state = tracelite::HostState {
            compact: std::mem::take(&mut state.compact),
            ..Default::default()
        };
        let want = tracelite::compress_json(
            &request,
            &config,
            tracelite::Env {
                store: &mut store,
                counter: &tracelite::tokens::Estimator,
                state: &mut state,
                previous: previous.as_deref(),
                format: None,
                known: Default::default(),
            },
        )
        .unwrap();
        assert_eq!(got.request, want.request, "turn {t}");
        assert_eq!(got.report, want.report, "turn {t}");
        kinds.extend(got.report.changes.iter().map(|c| c.kind.clone()));
        previous = Some(want.request);
    }
    // The run reached every rewriting stage.
    assert_eq!(
        kinds,
        ["dedup", "snapshot", "summary", "tombstone"]
            .map(String::from)
            .into(),
        "{kinds:?}"
    );
}
