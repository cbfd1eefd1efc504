//! Small text tools shared by activity reading and compaction (base layer):
//! char-safe truncation, one-line and head/tail forms, sentence splitting,
//! phrase search.

/// `text` cut to at most `max` bytes at a char boundary, preferring the last
/// line break (or space) in the second half; `…` marks a cut.
pub fn clip(text: &str, max: usize) -> String {
    if text.len() <= max {
        return text.to_string();
    }
    let mut end = max;
    while end > 0 && !text.is_char_boundary(end) {
        end -= 1;
    }
    let head = text.get(..end).unwrap_or("");
    let soft = head
        .rfind('\n')
        .filter(|&i| i >= end / 2)
        .or_else(|| head.rfind(' ').filter(|&i| i >= end / 2))
        .unwrap_or(end);
    let mut out = head.get(..soft).unwrap_or(head).trim_end().to_string();
    out.push('…');
    out
}

/// `text` on one line, whitespace collapsed.
fn collapse(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// One line, whitespace collapsed, clipped to `max` bytes.
pub fn one_line(text: &str, max: usize) -> String {
    clip(&collapse(text), max)
}

/// One line, whitespace collapsed, within `max` bytes: whole when it fits,
/// else its head (65%) and tail (35%) joined by ` … `, both char-safe.
pub fn head_tail(text: &str, max: usize) -> String {
    let joined = collapse(text);
    if joined.len() <= max {
        return joined;
    }
    let room = max.saturating_sub(" … ".len());
    let mut head = room * 65 / 100;
    while !joined.is_char_boundary(head) {
        head -= 1;
    }
    let mut tail = joined.len() - (room - head);
    while !joined.is_char_boundary(tail) {
        tail += 1;
    }
    format!(
        "{} … {}",
        joined.get(..head).unwrap_or("").trim_end(),
        joined.get(tail..).unwrap_or("").trim_start()
    )
}

/// Sentences of a text: split at line breaks and after `.`, `!` or `?`
/// followed by a space. Empty pieces are dropped; pieces are trimmed.
pub fn sentences(text: &str) -> Vec<&str> {
    let mut out = Vec::new();
    for line in text.lines() {
        let bytes = line.as_bytes();
        let mut start = 0;
        let mut i = 0;
        while i + 1 < bytes.len() {
            if matches!(bytes.get(i), Some(b'.' | b'!' | b'?')) && bytes.get(i + 1) == Some(&b' ') {
                if let Some(s) = line.get(start..=i) {
                    push_trimmed(&mut out, s);
                }
                start = i + 1;
            }
            i += 1;
        }
        if let Some(s) = line.get(start..) {
            push_trimmed(&mut out, s);
        }
    }
    out
}

fn push_trimmed<'a>(out: &mut Vec<&'a str>, s: &'a str) {
    let t = s.trim();
    if !t.is_empty() {
        out.push(t);
    }
}

/// Whether `needle` (lowercase ASCII phrase) occurs in `hay` at word boundaries,
/// ignoring ASCII case.
pub fn contains_phrase(hay: &str, needle: &str) -> bool {
    let needle = needle.trim();
    if needle.is_empty() {
        return false;
    }
    let h = hay.as_bytes();
    let n = needle.as_bytes();
    if n.len() > h.len() {
        return false;
    }
    let is_word = |b: u8| b.is_ascii_alphanumeric() || b == b'_';
    (0..=h.len() - n.len()).any(|i| {
        h.get(i..i + n.len())
            .is_some_and(|w| w.eq_ignore_ascii_case(n))
            && (i == 0
                || !h.get(i - 1).is_some_and(|&b| is_word(b))
                || !n.first().is_some_and(|&b| is_word(b)))
            && h.get(i + n.len()).map_or(true, |&b| {
                !is_word(b) || !n.last().is_some_and(|&b| is_word(b))
            })
    })
}

/// `*`-only glob match: `*` stands for any run of characters (phase's
/// `ignoreTargets`, the model capability table's patterns).
pub fn glob(pattern: &str, text: &str) -> bool {
    let mut parts = pattern.split('*');
    let first = parts.next().unwrap_or("");
    let Some(mut rest) = text.strip_prefix(first) else {
        return false;
    };
    let tail: Vec<&str> = parts.collect();
    let Some((last, middle)) = tail.split_last() else {
        return rest.is_empty();
    };
    for part in middle {
        match rest.find(part) {
            Some(i) => rest = rest.get(i + part.len()..).unwrap_or(""),
            None => return false,
        }
    }
    rest.ends_with(last)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn head_tail_keeps_both_ends_within_the_bytes() {
        assert_eq!(head_tail("fix  the\nbug", 40), "fix the bug");
        let long = format!("Start here: {} and finish there.", "é".repeat(300));
        let out = head_tail(&long, 100);
        assert!(out.len() <= 100, "{}", out.len());
        assert!(out.starts_with("Start here: ") && out.ends_with(" and finish there."));
        assert!(out.contains(" … "));
    }

    #[test]
    fn clip_is_char_safe_and_marks_cuts() {
        assert_eq!(clip("short", 10), "short");
        let s = "ééééééé";
        let c = clip(s, 5);
        assert!(c.ends_with('…'));
        assert!(c.len() <= 5 + '…'.len_utf8());
    }

    #[test]
    fn phrases_match_at_word_boundaries() {
        assert!(contains_phrase("You MUST not", "must"));
        assert!(contains_phrase("Do not edit tests", "do not"));
        assert!(!contains_phrase("mustard", "must"));
        assert!(contains_phrase("don't touch", "don't"));
        assert!(!contains_phrase("commonly", "only"));
    }

    #[test]
    fn sentences_split_at_stops() {
        assert_eq!(
            sentences("One thing. Two things! x\nthree"),
            vec!["One thing.", "Two things!", "x", "three"]
        );
    }
}
