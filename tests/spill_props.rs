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
use tracelite::spill::lines::{self, LineIndex};
use tracelite::spill::{grep, ErrorSignals, Excerpt, GrepOptions, Kept, Pattern};
use tracelite::tokens::estimate;

fn line() -> impl Strategy<Value = String> {
    prop_oneof![
        8 => "[a-z0-9 _:.()é✓]{0,60}",
        1 => "(Error: [a-z]{1,10}|Traceback \\(most recent call last\\):|FAILED test_[a-z]{3})",
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
        cap in 300u64..3000,
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
        // Every hidden error line is counted, the first five listed: the
        // pattern hits and the exception line ending each hidden traceback.
        let hidden = e.head.len()..total - e.tail.len();
        let mut hidden_errors: Vec<usize> = hidden
            .clone()
            .filter(|&i| {
                let l = index.line_trimmed(&text, i);
                l.contains("Error") || l.contains("FAILED") || l.contains("Traceback")
            })
            .collect();
        for i in 0..hidden.end {
            if index.line(&text, i).contains("Traceback (most recent call last)") {
                if let Some(j) = (i + 1..total).find(|&j| {
                    let l = index.line(&text, j);
                    !l.trim().is_empty() && !l.starts_with(char::is_whitespace)
                }) {
                    if hidden.contains(&j) {
                        hidden_errors.push(j);
                    }
                }
            }
        }
        hidden_errors.sort_unstable();
        hidden_errors.dedup();
        let hidden_errors: Vec<usize> = hidden_errors.into_iter().map(|i| i + 1).collect();
        prop_assert_eq!(e.error_total, hidden_errors.len());
        let listed: Vec<usize> = e.errors.iter().map(|x| x.number).collect();
        prop_assert_eq!(&listed[..], &hidden_errors[..hidden_errors.len().min(5)]);
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
