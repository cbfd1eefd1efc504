//! Property tests of excerpts and grep: head shown + hidden + tail shown =
//! total lines, the last line is always shown, header figures are exact, the
//! excerpt fits the cap, and grep agrees with a per-line reference.
#![allow(
    clippy::indexing_slicing,
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic
)]

use proptest::prelude::*;
use tracelite::activity::check::{is_detail_line, is_error_line, keep_newest, CRITICAL_BYTES};
use tracelite::spill::lines::{self, LineIndex};
use tracelite::spill::{grep, ErrorSignals, Excerpt, GrepOptions, Kept, Pattern};
use tracelite::tokens::estimate;

fn line() -> impl Strategy<Value = String> {
    prop_oneof![
        8 => "[a-z0-9 _:.()é✓]{0,60}",
        1 => "(Error: [a-z]{1,10}|Traceback \\(most recent call last\\):|FAILED test_[a-z]{3}|FAIL: test_[a-z]{3} \\(m\\.C\\)|E   assert [0-9] == [0-9]|[a-z]{3,30}Exception)",
        1 => "[a-zA-Z0-9 ]{500,2500}",
    ]
}

fn text() -> impl Strategy<Value = String> {
    (prop::collection::vec(line(), 1..250), any::<bool>()).prop_map(|(lines, newline)| {
        let mut t = lines.join("\n");
        if newline {
            t.push('\n');
        }
        t
    })
}

/// The figures of the header's first line.
fn header_figures(rendered: &str) -> (usize, String, usize, usize, usize) {
    let first = rendered.lines().next().unwrap();
    let rest = first.strip_prefix("[output too long: ").unwrap();
    let (total, rest) = rest.split_once(' ').unwrap();
    let (_, rest) = rest.split_once(", ").unwrap();
    let (kb, rest) = rest.split_once(" KB; showing the first ").unwrap();
    let (head, rest) = rest.split_once(" and the last ").unwrap();
    let (tail, rest) = rest.split_once(' ').unwrap();
    let (_, rest) = rest.split_once("; ").unwrap();
    let (hidden, _) = rest.split_once(' ').unwrap();
    (
        total.parse().unwrap(),
        kb.to_string(),
        head.parse().unwrap(),
        tail.parse().unwrap(),
        hidden.parse().unwrap(),
    )
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    #[test]
    fn excerpt_figures_add_up_and_the_last_line_is_shown(
        text in text(),
        cap in 300u64..4000,
        share in 0.0f64..=1.0,
    ) {
        prop_assume!(!text.is_empty());
        let signals = ErrorSignals::new(&["Error".into(), "FAILED".into(), "Traceback".into()], 5).unwrap();
        let kept = Kept::Pointer("spill://s/tool-0123456789abcdef".into());
        let count = |s: &str| Ok(estimate(s));
        let (e, rendered) = Excerpt::build(&text, cap, share, &signals, &count, &kept).unwrap();
        let index = LineIndex::new(&text);
        let total = lines::count(&text);
        prop_assert_eq!(e.total_lines, total);
        prop_assert_eq!(e.head.len() + e.hidden_lines + e.tail.len(), total);
        let (t, kb, h, tl, hid) = header_figures(&rendered);
        prop_assert_eq!((t, h, tl, hid), (total, e.head.len(), e.tail.len(), e.hidden_lines));
        prop_assert_eq!(kb, format!("{:.1}", text.len() as f64 / 1000.0));
        // The last line is shown and ends the output.
        let last = e.tail.last().unwrap();
        prop_assert_eq!(last.number, total);
        let last_line = index.line_trimmed(&text, total - 1);
        let shown_end = lines::trim_end(if last.hidden_bytes == 0 { last.start } else { last.end });
        prop_assert!(!shown_end.is_empty() || last_line.is_empty());
        prop_assert!(last_line.ends_with(shown_end));
        prop_assert!(rendered.ends_with(shown_end));
        // Shown lines are the text's lines (or their cut parts), in place.
        for (i, l) in e.head.iter().enumerate() {
            prop_assert_eq!(l.number, i + 1);
            prop_assert!(index.line(&text, i).starts_with(l.start));
        }
        for (j, l) in e.tail.iter().enumerate() {
            prop_assert_eq!(l.number, total - e.tail.len() + j + 1);
            let full = index.line(&text, l.number - 1);
            prop_assert!(full.starts_with(l.start));
            prop_assert_eq!(l.start.len() + l.hidden_bytes + l.end.len(), full.len());
        }
        // Every hidden error line is counted: the pattern hits and the
        // critical lines (the exception line ending each traceback, error
        // lines but a traceback's opening). Listed: the critical ones within
        // CRITICAL_BYTES, newest first and `E ` details last, then the first
        // five others.
        let hidden = e.head.len()..total - e.tail.len();
        let mut critical: Vec<usize> = hidden
            .clone()
            .filter(|&i| {
                let l = index.line(&text, i);
                is_error_line(l) && !l.trim_start().starts_with("Traceback (most recent call last)")
            })
            .collect();
        for i in 0..hidden.end {
            if index.line(&text, i).contains("Traceback (most recent call last)") {
                if let Some(j) = (i + 1..total).find(|&j| {
                    let l = index.line(&text, j);
                    !l.trim().is_empty() && !l.starts_with(char::is_whitespace)
                }) {
                    if hidden.contains(&j) {
                        critical.push(j);
                    }
                }
            }
        }
        critical.sort_unstable();
        critical.dedup();
        let others: Vec<usize> = hidden
            .clone()
            .filter(|&i| {
                // The signals match ignoring ASCII case.
                let l = index.line_trimmed(&text, i).to_ascii_lowercase();
                (l.contains("error") || l.contains("failed") || l.contains("traceback"))
                    && critical.binary_search(&i).is_err()
            })
            .collect();
        prop_assert_eq!(e.error_total, critical.len() + others.len());
        let shown = |i: usize| lines::floor_prefix(index.line_trimmed(&text, i).trim(), 200);
        let listed: Vec<usize> = e.errors.iter().map(|x| x.number - 1).collect();
        if cap >= 1500 {
            // Room for the whole listing budget: exactly these.
            let sizes: Vec<(usize, bool)> = critical.iter().map(|&i| (shown(i).len(), !is_detail_line(shown(i)))).collect();
            let fits = keep_newest(&sizes, CRITICAL_BYTES);
            let mut used: usize = sizes.iter().zip(&fits).filter(|(_, f)| **f).map(|((b, _), _)| b + 1).sum();
            let mut want: Vec<usize> = critical.iter().zip(&fits).filter(|(_, f)| **f).map(|(i, _)| *i).collect();
            for &i in others.iter().take(5) {
                if used + shown(i).len() >= CRITICAL_BYTES {
                    break;
                }
                used += shown(i).len() + 1;
                want.push(i);
            }
            want.sort_unstable();
            prop_assert_eq!(&listed, &want);
        } else {
            // A small cap lists less: still only these lines, in order.
            prop_assert!(listed.windows(2).all(|w| w[0] < w[1]));
            prop_assert!(listed.iter().all(|i| critical.contains(i) || others[..others.len().min(5)].contains(i)));
        }
        for x in &e.errors {
            prop_assert_eq!(x.critical, critical.contains(&(x.number - 1)));
        }
        for x in &e.errors {
            prop_assert_eq!(x.text, shown(x.number - 1));
        }
        prop_assert!(estimate(&rendered) <= cap, "{} > {}", estimate(&rendered), cap);
    }

    #[test]
    fn grep_agrees_with_a_per_line_reference(
        text in "[ab\\n\\r ]{0,300}",
        pattern in prop::sample::select(vec!["ab", "a+b", "^b", "a$", "(ab|ba)", "b.a", "\\bab", "a\\s+b", "ba{2,}", "abab"]),
        literal in any::<bool>(),
    ) {
        let p = Pattern::new(pattern, literal, false).unwrap();
        let index = LineIndex::new(&text);
        let options = GrepOptions { context: 0, max_matches: usize::MAX, ..GrepOptions::default() };
        let got: Vec<usize> = grep::grep(&text, &index, &p, &options).unwrap().lines.iter().map(|l| l.number).collect();
        let source = if literal { regex_lite::escape(pattern) } else { pattern.to_string() };
        let reference = regex_lite::Regex::new(&source).unwrap();
        let want: Vec<usize> = (0..index.len())
            .filter(|&i| reference.is_match(index.line_trimmed(&text, i)))
            .map(|i| i + 1)
            .collect();
        prop_assert_eq!(got, want);
    }
}
