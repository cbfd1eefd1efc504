//! Per-turn cost of the stateful [`TraceLite`] class (issue 16, item 9),
//! natively: an agent loop that assembles after every step, like
//! `tests/tools/session-turns.mjs`. Prints, at the given turns, the median
//! of the 5 steps and assembles ending there, the same for emitting the raw
//! history alone (what any request of that length costs), and their ratio.
//! `perf record --call-graph dwarf` on it (with `CARGO_PROFILE_RELEASE_DEBUG=true`)
//! shows where a turn goes.
//!
//! ```text
//! cargo run --release --example session_turns -- [--turns 500] [--at 50,100,250,500] [--lines 20]
//! ```
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing,
    missing_docs
)]

use std::time::Instant;

use tracelite::formats::{self, FormatName};
use tracelite::model::{Extra, Message, Role, ToolCall};
use tracelite::{Config, TraceLite};

fn arg(name: &str, fallback: &str) -> String {
    let args: Vec<String> = std::env::args().collect();
    args.iter()
        .position(|a| a == &format!("--{name}"))
        .and_then(|i| args.get(i + 1).cloned())
        .unwrap_or_else(|| fallback.to_string())
}

fn output(t: usize, lines: usize) -> String {
    (0..lines)
        .map(|i| {
            format!(
                "src/module_{}/file_{i}.py:{}: checked ok in {} ms\n",
                t % 17,
                (t * 31 + i) % 400,
                (t + i) % 90
            )
        })
        .collect()
}

fn median(v: &[f64]) -> f64 {
    let mut v = v.to_vec();
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn main() {
    let turns: usize = arg("turns", "500").parse().unwrap();
    let at: Vec<usize> = arg("at", "50,100,250,500")
        .split(',')
        .map(|s| s.parse().unwrap())
        .collect();
    let lines: usize = arg("lines", "20").parse().unwrap();
    let mut tl = TraceLite::new(Config::default());
    tl.add_message(Message::text(Role::System, "You are a coding agent."))
        .unwrap();
    tl.add_message(Message::text(
        Role::User,
        "Fix the failing test in src/parser.py. Do not touch the public API.",
    ))
    .unwrap();
    let (mut assemble, mut emit) = (Vec::new(), Vec::new());
    let mut total = 0.0;
    println!("turn  assemble_ms  emit_ms  ratio");
    for t in 1..=turns {
        let call = ToolCall {
            id: format!("c{t}"),
            name: "bash".into(),
            arguments: format!(r#"{{"command":"pytest tests/test_{}.py"}}"#, t % 23),
        };
        let started = Instant::now();
        tl.process_step(call, output(t, lines)).unwrap();
        let out = tl.assemble(FormatName::OpenaiChat, Extra::new()).unwrap();
        let ms = started.elapsed().as_secs_f64() * 1e3;
        total += ms;
        let started = Instant::now();
        let emitted =
            serde_json::to_string(&formats::emit(FormatName::OpenaiChat, tl.conversation()))
                .unwrap();
        let emit_ms = started.elapsed().as_secs_f64() * 1e3;
        assert!(emitted.len() >= out.request.len() / 2);
        assemble.push(ms);
        emit.push(emit_ms);
        if assemble.len() > 5 {
            assemble.remove(0);
            emit.remove(0);
        }
        if at.contains(&t) {
            let (a, e) = (median(&assemble), median(&emit));
            println!("{t:4}  {a:11.3}  {e:7.3}  {:5.1}", a / e);
        }
    }
    println!("{turns} turns: {:.2} s", total / 1e3);
}
