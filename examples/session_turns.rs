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
use tracelite::model::Extra;
use tracelite::Config;

fn arg(name: &str, fallback: &str) -> String {
    let args: Vec<String> = std::env::args().collect();
    args.iter()
        .position(|a| a == &format!("--{name}"))
        .and_then(|i| args.get(i + 1).cloned())
        .unwrap_or_else(|| fallback.to_string())
}

#[path = "../tests/common/agent_loop.rs"]
mod agent_loop;

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
    let mut tl = agent_loop::session(Config {
        // A model that reads images (bench/tokens.mjs BENCH_MODELS): the optical stage runs.
        model: "gpt-5".into(),
        ..Config::default()
    });
    let (mut assemble, mut emit) = (Vec::new(), Vec::new());
    let mut total = 0.0;
    println!("turn  assemble_ms  emit_ms  ratio");
    for t in 1..=turns {
        let call = agent_loop::bash(t, &format!("pytest tests/test_{}.py", t % 23));
        let started = Instant::now();
        tl.process_step(call, agent_loop::output(t, lines)).unwrap();
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
