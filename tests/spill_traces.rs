//! Spilling on the shared trajectories at a budget small enough to make large
//! observations spill: every spilled observation read back page by page
//! through `read_spill` equals the original byte for byte, and `grep_spill`
//! finds the same lines as a plain per-line reference.
#![allow(
    clippy::indexing_slicing,
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic
)]

mod common;

use serde_json::json;
use tracelite::formats::FormatName;
use tracelite::spill::{handle_tool_call, GrepOptions, Pattern, StoreLimits};
use tracelite::{compress_json, Config, Env, HostState, MemoryStore, SpillStore};

fn spill_only(budget: u64) -> Config {
    Config::from_json(json!({
        "budget": budget,
        "session": "trace",
        "dedup": {"enabled": false},
        "phase": {"enabled": false},
        "optical": {"enabled": false},
        "compact": {"enabled": false},
    }))
    .unwrap()
}

/// Reads a blob through the tool, page by page, and puts it back together.
fn read_back(store: &mut MemoryStore, pointer: &str) -> String {
    let mut lines: Vec<String> = Vec::new();
    let mut offset = 0;
    let mut column = 0;
    for _ in 0..100_000 {
        let args = json!({"pointer": pointer, "offset": offset, "limit": 150, "column": column});
        let reply = handle_tool_call(store, "trace", "read_spill", &args.to_string()).unwrap();
        assert!(!reply.is_error, "{}", reply.text);
        let mut body = reply.text.split('\n');
        let header = body.next().unwrap();
        assert!(header.starts_with(pointer), "{header}");
        let mut hint = "";
        for line in body {
            if line.starts_with('[') && !line.contains('\t') {
                hint = line;
                continue;
            }
            let (number, text) = line.split_once('\t').unwrap();
            let number: usize = number.trim().parse().unwrap();
            if number == lines.len() && column > 0 {
                lines.last_mut().unwrap().push_str(text);
            } else {
                assert_eq!(number, lines.len() + 1);
                lines.push(text.to_string());
            }
        }
        if let Some(rest) = hint.strip_prefix("[line ") {
            let (_, c) = rest.rsplit_once("column=").unwrap();
            column = c.trim_end_matches(']').parse().unwrap();
            offset = lines.len() - 1;
        } else if let Some((_, o)) = hint.split_once("offset=") {
            offset = o.split_whitespace().next().unwrap().parse().unwrap();
            column = 0;
        } else {
            assert_eq!(hint, "[end of output]");
            return lines.join("\n");
        }
    }
    panic!("no end of output");
}

#[test]
#[cfg_attr(tracelite_no_traces, ignore = "needs ../shared/traces")]
fn spilled_observations_read_back_byte_for_byte_and_grep_like_a_reference() {
    let files = common::required_trace_files();
    let patterns = [
        ("Error", true),
        ("def ", true),
        (r"\d+ passed", false),
        (r"^\s+File ", false),
        (r"(?i)warning", false),
        (r"import \w+", false),
        (r"[A-Z][a-z]+Error:", false),
    ];
    let mut spilled = 0;
    for file in &files {
        let trace = common::load_trace(file);
        let request =
            tracelite::trajectory_to_request(&trace, trace.steps.len(), FormatName::OpenaiChat)
                .unwrap()
                .to_string();
        // Matches, not costs, are compared here (an 868 KB output is over the default search budget).
        let mut store = MemoryStore::with_limits(StoreLimits {
            max_grep_cost: u64::MAX,
            ..StoreLimits::default()
        });
        let out = compress_json(
            &request,
            &spill_only(16_000),
            Env::new(&mut store, &mut HostState::default()),
        )
        .unwrap();
        assert_eq!(out.spills.len(), out.report.spills.len());
        for (record, blob) in out.report.spills.iter().zip(&out.spills) {
            assert_eq!(record.key, blob.key);
            spilled += 1;
            assert!(
                trace.steps.iter().any(|s| s.observation == blob.text),
                "{}: a spill that is not an observation",
                file.display()
            );
            assert!(out.request.contains(&record.pointer));
            let text = &blob.text;
            let back = read_back(&mut store, &record.pointer);
            // The reply shows lines without their line end: only a final newline is not visible.
            let expected = text.strip_suffix('\n').unwrap_or(text);
            assert_eq!(back, expected, "{}: {}", file.display(), record.pointer);
            // Exact bytes through the store's pages.
            let mut pages = String::new();
            let mut offset = 0;
            loop {
                let page = store.read("trace", &record.key, offset, 97).unwrap();
                pages.push_str(&page.text);
                match page.next_offset() {
                    Some(next) => offset = next,
                    None => break,
                }
            }
            assert_eq!(&pages, text);
            for (pattern, literal) in patterns {
                let p = Pattern::new(pattern, literal, false).unwrap();
                let options = GrepOptions {
                    context: 0,
                    max_matches: usize::MAX,
                    max_cost: u64::MAX,
                    ..GrepOptions::default()
                };
                let got: Vec<usize> = store
                    .grep("trace", &record.key, &p, &options)
                    .unwrap()
                    .lines
                    .iter()
                    .map(|l| l.number)
                    .collect();
                let reference = regex_lite::Regex::new(&if literal {
                    regex_lite::escape(pattern)
                } else {
                    pattern.to_string()
                })
                .unwrap();
                let want: Vec<usize> = text
                    .lines()
                    .enumerate()
                    .filter(|(_, l)| reference.is_match(l))
                    .map(|(i, _)| i + 1)
                    .collect();
                assert_eq!(got, want, "{}: {pattern}", file.display());
            }
        }
    }
    eprintln!("{spilled} observations spilled at 16k");
    assert!(spilled >= 20, "only {spilled} observations spilled at 16k");
}
