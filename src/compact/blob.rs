//! The one spill blob of a compaction: a title line, an index (one line per
//! original with the lines it spans), then every original in order, each
//! under a `--- label ---` header line: the compacted messages' transcripts
//! (`--- message N (role) ---`), the previous summary, and the user messages
//! that stop being kept word for word. One store write per compaction;
//! `read_spill` with the lines a summary citation or the index gives (offset
//! = first line − 1), or `grep_spill` for a header line, finds any original.

/// Spill key kind of compaction blobs.
pub const BLOB_KIND: &str = "compact";

/// First line of every compaction blob.
pub const BLOB_TITLE: &str = "[TraceLite compaction: the originals of the compacted messages. Index: where each one is (read_spill offset = first line - 1); then each under a `--- message N (role) ---` line]";

/// A laid-out blob.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Blob {
    /// The text to store.
    pub text: String,
    /// First and last line (1-based, header line included) of each section,
    /// parallel to the sections given to [`lay_out`].
    pub lines: Vec<(usize, usize)>,
}

/// Lays out `sections` (label, original text) in one text: the title, one
/// index line per section (`label: lines a-b`), then for each section its
/// `--- label ---` line, its text and a line end. Linear in the input.
pub fn lay_out(sections: &[(String, String)]) -> Blob {
    // Line 1 is the title, lines 2..=k+1 the index.
    let mut next = sections.len() + 2;
    let mut lines = Vec::with_capacity(sections.len());
    let mut bytes = BLOB_TITLE.len() + 1;
    for (label, body) in sections {
        let body_lines = memchr::memchr_iter(b'\n', body.as_bytes()).count() + 1;
        let last = next + body_lines;
        lines.push((next, last));
        next = last + 1;
        bytes += 2 * label.len() + body.len() + 48;
    }
    let mut text = String::with_capacity(bytes);
    text.push_str(BLOB_TITLE);
    text.push('\n');
    for ((label, _), (a, b)) in sections.iter().zip(&lines) {
        text.push_str(label);
        text.push_str(&format!(": lines {a}-{b}\n"));
    }
    for (label, body) in sections {
        text.push_str("--- ");
        text.push_str(label);
        text.push_str(" ---\n");
        text.push_str(body);
        text.push('\n');
    }
    Blob { text, lines }
}

/// Where a section of the blob at `pointer` is: `<pointer> (lines a-b)`,
/// or the pointer alone when the lines are unknown.
pub fn cite(pointer: &str, lines: Option<&(usize, usize)>) -> String {
    match lines {
        Some((a, b)) => format!("{pointer} (lines {a}-{b})"),
        None => pointer.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::lines::LineIndex;

    #[test]
    fn index_lines_frame_each_original() {
        let sections = vec![
            ("message 3 (user)".to_string(), "[user]\nfix it".to_string()),
            ("message 4 (tool)".to_string(), "[tool]\nout\n".to_string()),
            ("previous summary".to_string(), String::new()),
        ];
        let blob = lay_out(&sections);
        assert_eq!(blob.lines, vec![(5, 7), (8, 11), (12, 13)]);
        let index = LineIndex::new(&blob.text);
        assert_eq!(index.len(), 13);
        let line = |n: usize| index.line_trimmed(&blob.text, n - 1);
        assert_eq!(line(1), BLOB_TITLE);
        assert_eq!(line(2), "message 3 (user): lines 5-7");
        assert_eq!(line(4), "previous summary: lines 12-13");
        for ((label, body), (a, b)) in sections.iter().zip(&blob.lines) {
            assert_eq!(line(*a), format!("--- {label} ---"));
            let span = index.span(*a, *b);
            assert_eq!(blob.text.get(span), Some(format!("{body}\n").as_str()));
        }
    }
}
