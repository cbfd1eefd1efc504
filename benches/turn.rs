//! Per-turn cost of the stateful `TraceLite` class (issue 16, item 9): an
//! agent loop of bash steps with 20-line outputs and an `assemble` after
//! each. Near turns 50, 250 and 500 (each sample adds one step, within a band
//! of a fifth of the turn; the session is rebuilt past it) it measures
//! `assemble` and, on the same history, emitting the raw history alone: what
//! any request of that length costs, since the request is the whole
//! conversation. Then it prints their ratio (median over the band): work
//! beyond emitting that does not grow with the history keeps it flat.
//!
//! ```text
//! cargo bench --bench turn
//! ```
#![allow(missing_docs, clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::time::{Duration, Instant};

use criterion::{criterion_group, criterion_main, Criterion};
use tracelite::formats::{self, FormatName};
use tracelite::model::{Extra, ToolCall};
use tracelite::{Config, TraceLite};

#[path = "../tests/common/agent_loop.rs"]
mod agent_loop;

fn step(t: usize) -> (ToolCall, String) {
    let command = match t % 4 {
        0 => format!("pytest tests/test_{}.py", t % 23),
        1 => format!("grep -rn 'def f{}' src", t % 11),
        2 => format!("cat src/module_{}/file_{}.py", t % 17, t % 5),
        _ => format!("python scripts/run_{}.py", t % 7),
    };
    (agent_loop::bash(t, &command), agent_loop::output(t, 20))
}

/// A session that stays between turns `from` and `to`.
struct Band {
    tl: TraceLite,
    turn: usize,
    from: usize,
    to: usize,
}

/// The defaults for the model `make bench` prices for `openai` (bench/tokens.mjs
/// BENCH_MODELS): one that reads images, so the optical stage runs.
fn config() -> Config {
    Config {
        model: "gpt-5".into(),
        ..Config::default()
    }
}

impl Band {
    fn new(from: usize) -> Self {
        let mut band = Self {
            tl: TraceLite::new(config()),
            turn: 0,
            from,
            to: from + (from / 5).max(10),
        };
        band.restart();
        band
    }

    /// A new session after `from` steps, each followed by an assemble.
    fn restart(&mut self) {
        let mut tl = agent_loop::session(config());
        for t in 1..=self.from {
            let (call, output) = step(t);
            tl.process_step(call, output).unwrap();
            tl.assemble(FormatName::OpenaiChat, Extra::new()).unwrap();
        }
        self.tl = tl;
        self.turn = self.from;
    }

    /// One more step, untimed, and the time of its `assemble`.
    fn turn(&mut self) -> Duration {
        if self.turn >= self.to {
            self.restart();
        }
        self.turn += 1;
        let (call, output) = step(self.turn);
        self.tl.process_step(call, output).unwrap();
        let started = Instant::now();
        self.tl
            .assemble(FormatName::OpenaiChat, Extra::new())
            .unwrap();
        started.elapsed()
    }

    /// Time of emitting the raw history as it stands.
    fn emit(&self) -> Duration {
        let started = Instant::now();
        let text = serde_json::to_string(&formats::emit(
            FormatName::OpenaiChat,
            self.tl.conversation(),
        ))
        .unwrap();
        let elapsed = started.elapsed();
        assert!(!text.is_empty());
        elapsed
    }
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v.get(v.len() / 2).copied().unwrap_or(0.0)
}

fn bench_turns(c: &mut Criterion) {
    let mut group = c.benchmark_group("turn");
    group.sample_size(10);
    group.warm_up_time(Duration::from_millis(500));
    group.measurement_time(Duration::from_secs(2));
    let mut rows = Vec::new();
    for from in [50, 250, 500] {
        let mut band = Band::new(from);
        group.bench_function(format!("assemble_{from}"), |b| {
            b.iter_custom(|iters| (0..iters).map(|_| band.turn()).sum())
        });
        group.bench_function(format!("emit_{from}"), |b| {
            b.iter_custom(|iters| (0..iters).map(|_| band.emit()).sum())
        });
        // The ratio on the same histories: every turn of one band.
        band.restart();
        let (mut assemble, mut emit, mut ratio) = (Vec::new(), Vec::new(), Vec::new());
        while band.turn < band.to {
            let a = band.turn().as_secs_f64();
            let e = (0..5)
                .map(|_| band.emit().as_secs_f64())
                .fold(f64::MAX, f64::min);
            assemble.push(a);
            emit.push(e);
            ratio.push(a / e);
        }
        rows.push((from, median(assemble), median(emit), median(ratio)));
    }
    group.finish();
    eprintln!("turn  assemble ms  emit ms  assemble/emit (medians over the band)");
    for (from, assemble, emit, ratio) in rows {
        eprintln!(
            "{from:4}  {:11.3}  {:7.3}  {ratio:.1}",
            assemble * 1e3,
            emit * 1e3
        );
    }
}

criterion_group!(benches, bench_turns);
criterion_main!(benches);
