//! The excerpt's account of its hidden middle: the index of paths and
//! definitions (with lines a `read_spill` offset takes) and the count and
//! place of the failing tests its error listing left out.
#![allow(
    clippy::indexing_slicing,
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic
)]

use serde_json::json;
use tracelite::spill::{self, ErrorSignals, Excerpt, Kept};
use tracelite::tokens::{estimate, Estimator};
use tracelite::{Config, MemoryStore};

fn spill(text: &str) -> (String, Config) {
    let config = Config::from_json(json!({"session": "s"})).unwrap();
    let mut store = MemoryStore::new();
    let s = spill::api::spill_text(text, None, &config, &mut store, &Estimator).unwrap();
    assert!(s.spilled);
    (s.text, config)
}

/// `grep -rn`-like output: 600 lines, the paths changing every 100 lines.
fn grep_output() -> String {
    let mut out = String::new();
    for i in 1..=600 {
        let path = format!("pkg/mod_{}/file_{}.py", i / 100, i / 100);
        out.push_str(&format!(
            "{path}:{i}:    value = compute_{i}(x) + other_call(y)\n"
        ));
    }
    out
}

fn index_line(excerpt: &str) -> &str {
    excerpt
        .lines()
        .find(|l| l.starts_with("[lines ") && l.contains(" hold: "))
        .unwrap_or_else(|| panic!("no index line in {excerpt}"))
}

#[test]
fn the_index_names_hidden_paths_with_their_lines() {
    let text = grep_output();
    let (excerpt, config) = spill(&text);
    let index = index_line(&excerpt);
    let (from, to) = {
        let range = index
            .strip_prefix("[lines ")
            .and_then(|r| r.split(' ').next())
            .unwrap();
        let (a, b) = range.split_once('-').unwrap();
        (a.parse::<usize>().unwrap(), b.parse::<usize>().unwrap())
    };
    let lines: Vec<&str> = text.lines().collect();
    // Every path the index names occurs on the first and last line it gives,
    // inside the hidden range, and nowhere hidden outside those.
    let mut named = 0;
    for k in 0..=6 {
        let path = format!("pkg/mod_{k}/file_{k}.py");
        let hidden: Vec<usize> = (from..=to)
            .filter(|&n| lines[n - 1].starts_with(&format!("{path}:")))
            .collect();
        let Some(at) = index.find(&format!("{path} ")) else {
            continue;
        };
        named += 1;
        let range = index[at + path.len() + 1..]
            .split([',', ';', ']'])
            .next()
            .unwrap();
        let want = match (hidden.first(), hidden.last()) {
            (Some(a), Some(b)) if a == b => a.to_string(),
            (Some(a), Some(b)) => format!("{a}-{b}"),
            _ => panic!("{path} named but not hidden: {index}"),
        };
        assert_eq!(range, want, "{path} in {index}");
    }
    assert!(named >= 3, "{index}");
    // Within the cap, and the same excerpt every time.
    assert!(estimate(&excerpt) <= config.result_cap());
    assert_eq!(spill(&text).0, excerpt);
}

#[test]
fn the_index_of_a_numbered_listing_gives_the_listed_numbers() {
    let mut text = String::from("Here's the result of running `cat -n` on a.py:\n");
    for n in 1..=700 {
        let line = match n % 50 {
            0 => format!("def handler_{n}(request):"),
            25 => format!("class Model{n}(Base):"),
            _ => format!("    result = process(request, option_{n})"),
        };
        text.push_str(&format!("{n:>6}\t{line}\n"));
    }
    let (excerpt, _) = spill(&text);
    let index = index_line(&excerpt);
    assert!(index.contains("(numbered "), "{index}");
    // A definition on file line 350 is named with that number.
    assert!(index.contains("handler_350() 350"), "{index}");
    assert!(index.contains("class Model375 375"), "{index}");
}

#[test]
fn the_index_stays_small_and_within_the_cap_at_any_cap() {
    let text = grep_output();
    let signals = ErrorSignals::new(&[], 5).unwrap();
    let kept = Kept::Pointer("spill://s/k".into());
    for cap in [0, 40, 200, 800, 2_560, 6_000] {
        let (e, rendered) =
            Excerpt::build(&text, cap, 0.65, &signals, &|s| Ok(estimate(s)), &kept).unwrap();
        if cap >= 800 {
            assert!(estimate(&rendered) <= cap, "{cap}");
        }
        if let Some(index) = &e.index {
            let bytes = index.render().len();
            // 5% of the cap at 3 bytes a token.
            assert!(
                bytes as f64 <= cap as f64 * 0.05 * 3.0 + 1.0,
                "{cap}: {bytes}"
            );
        }
    }
    let off = ErrorSignals::new(&[], 5).unwrap().with_index_share(0.0);
    let (e, _) = Excerpt::build(&text, 2_560, 0.65, &off, &|s| Ok(estimate(s)), &kept).unwrap();
    assert!(e.index.is_none());
}

#[test]
fn five_hundred_failures_say_how_many_are_not_listed_and_where() {
    let mut text = String::from("============ test session starts ============\n");
    for i in 0..300 {
        text.push_str(&format!("tests/test_setup.py::test_ok_{i} PASSED\n"));
    }
    let first = text.lines().count() + 1;
    for i in 0..500 {
        text.push_str(&format!(
            "FAILED tests/test_mod_{}.py::TestCase::test_case_{i} - AssertionError: expected 1\n",
            i % 7
        ));
    }
    let last = text.lines().count();
    for i in 0..300 {
        text.push_str(&format!("tests/test_tail.py::test_after_{i} PASSED\n"));
    }
    text.push_str("======= 500 failed, 600 passed in 12.0s =======\n");
    let (excerpt, config) = spill(&text);
    assert!(estimate(&excerpt) <= config.result_cap());
    // Listed failing tests are the `! N:` lines that hold one.
    let listed: Vec<usize> = excerpt
        .lines()
        .filter_map(|l| l.strip_prefix("! "))
        .filter(|l| l.contains(" - AssertionError"))
        .map(|l| l.split(':').next().unwrap().parse().unwrap())
        .collect();
    assert!(!listed.is_empty() && listed.len() < 500);
    let shown = excerpt
        .lines()
        .filter(|l| l.starts_with("FAILED tests/"))
        .count();
    let hidden_unlisted = 500 - shown - listed.len();
    let note = excerpt
        .lines()
        .find(|l| l.contains("more failing tests hidden"))
        .unwrap_or_else(|| panic!("{excerpt}"));
    let unlisted: Vec<usize> = (first..=last)
        .filter(|n| !listed.contains(n))
        .filter(|&n| {
            !excerpt.contains(&format!(
                "\nFAILED tests/test_mod_{}.py::TestCase::test_case_{} ",
                (n - first) % 7,
                n - first
            ))
        })
        .collect();
    assert_eq!(unlisted.len(), hidden_unlisted);
    let want = format!(
        "[… {hidden_unlisted} more failing tests hidden, lines {}-{}: grep_spill pattern '{}'",
        unlisted[0],
        unlisted[unlisted.len() - 1],
        spill::FAILING_TEST_PATTERN
    );
    assert!(note.starts_with(&want), "{note}\nwant {want}");
    // The first of their ids follow, exactly as the evaluation reads them.
    let n = unlisted[0] - first;
    assert!(
        note.contains(&format!(
            "; tests/test_mod_{}.py::TestCase::test_case_{n}",
            n % 7
        )),
        "{note}"
    );
}

#[test]
fn go_test_failures_past_the_listing_are_counted_with_their_own_pattern() {
    // `go test -v`: 400 failing subtests among passing ones.
    let mut text = String::from("=== RUN   TestLedger\n");
    for i in 0..300 {
        text.push_str(&format!("    --- PASS: TestLedger/ok_{i} (0.00s)\n"));
    }
    for i in 0..400 {
        text.push_str(&format!(
            "    ledger_test.go:{}: got {i}, want 0\n    --- FAIL: TestLedger/case_{i} (0.00s)\n",
            i + 10
        ));
    }
    for i in 0..300 {
        text.push_str(&format!("    --- PASS: TestLedger/after_{i} (0.00s)\n"));
    }
    text.push_str("FAIL\nFAIL\texample.invalid/ledger\t0.012s\n");
    let (excerpt, _) = spill(&text);
    // The newest failures are listed, with their location line.
    assert!(
        excerpt.contains(": --- FAIL: TestLedger/case_399 (0.00s)"),
        "{excerpt}"
    );
    assert!(
        excerpt.contains(": ledger_test.go:409: got 399, want 0"),
        "{excerpt}"
    );
    let note = excerpt
        .lines()
        .find(|l| l.contains("more failing tests hidden"))
        .unwrap_or_else(|| panic!("{excerpt}"));
    assert!(
        note.contains(": grep_spill pattern '--- FAIL: '; TestLedger/case_0, "),
        "{note}"
    );
}
