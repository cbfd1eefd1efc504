//! Line arithmetic shared by excerpts, reads and grep.
//!
//! A line is a run of text ending with `\n` (kept as part of the line) or at
//! the end of the text; an empty text has no lines. This counts like
//! [`str::lines`] but keeps line ends, so pages put back together are the
//! original byte for byte.

use super::Page;

/// Number of lines of `text`.
pub fn count(text: &str) -> usize {
    let newlines = memchr::memchr_iter(b'\n', text.as_bytes()).count();
    newlines + usize::from(!text.is_empty() && !text.ends_with('\n'))
}

/// Byte offsets where each line starts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LineIndex {
    starts: Vec<usize>,
    len: usize,
}

impl LineIndex {
    /// Indexes `text`.
    pub fn new(text: &str) -> Self {
        let bytes = text.as_bytes();
        let mut starts = Vec::with_capacity(bytes.len() / 40 + 1);
        if !bytes.is_empty() {
            starts.push(0);
            starts.extend(memchr::memchr_iter(b'\n', bytes).map(|i| i + 1));
            if bytes.ends_with(b"\n") {
                starts.pop();
            }
        }
        Self {
            starts,
            len: bytes.len(),
        }
    }

    /// Number of lines.
    pub fn len(&self) -> usize {
        self.starts.len()
    }

    /// Whether there are no lines.
    pub fn is_empty(&self) -> bool {
        self.starts.is_empty()
    }

    /// Byte range of line `i` (0-based), line end included.
    pub fn range(&self, i: usize) -> std::ops::Range<usize> {
        let start = self.starts.get(i).copied().unwrap_or(self.len);
        let end = self.starts.get(i + 1).copied().unwrap_or(self.len);
        start..end
    }

    /// Byte range of lines `from..to` (0-based, `to` exclusive).
    pub fn span(&self, from: usize, to: usize) -> std::ops::Range<usize> {
        if from >= to {
            let at = self.range(from).start;
            return at..at;
        }
        self.range(from).start..self.range(to - 1).end
    }

    /// Line `i` (0-based) with its line end.
    pub fn line<'t>(&self, text: &'t str, i: usize) -> &'t str {
        text.get(self.range(i)).unwrap_or("")
    }

    /// Line `i` without its line end (`\n` or `\r\n`).
    pub fn line_trimmed<'t>(&self, text: &'t str, i: usize) -> &'t str {
        trim_end(self.line(text, i))
    }

    /// The 0-based line holding byte `pos`.
    pub fn line_of(&self, pos: usize) -> usize {
        self.starts.partition_point(|&s| s <= pos).saturating_sub(1)
    }

    /// Lines `offset+1 ..= offset+limit` as a [`Page`].
    pub fn page(&self, text: &str, offset: usize, limit: usize) -> Page {
        let from = offset.min(self.len());
        let to = offset.saturating_add(limit).min(self.len());
        Page {
            offset: from,
            count: to - from,
            total_lines: self.len(),
            total_bytes: text.len(),
            text: text.get(self.span(from, to)).unwrap_or("").to_string(),
        }
    }
}

/// `line` without its trailing `\n` / `\r\n`.
pub fn trim_end(line: &str) -> &str {
    let line = line.strip_suffix('\n').unwrap_or(line);
    line.strip_suffix('\r').unwrap_or(line)
}

/// The longest prefix of `s` of at most `max` bytes that ends on a char boundary.
pub fn floor_prefix(s: &str, max: usize) -> &str {
    let mut end = max.min(s.len());
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    s.get(..end).unwrap_or("")
}

/// The longest suffix of `s` of at most `max` bytes that starts on a char boundary.
pub fn ceil_suffix(s: &str, max: usize) -> &str {
    let mut start = s.len().saturating_sub(max);
    while !s.is_char_boundary(start) {
        start += 1;
    }
    s.get(start..).unwrap_or("")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_like_str_lines_and_pages_rebuild_the_text() {
        for text in ["", "a", "a\n", "a\nb", "a\r\nb\r\n", "\n\n", "x\n\ny"] {
            let index = LineIndex::new(text);
            assert_eq!(index.len(), text.lines().count(), "{text:?}");
            assert_eq!(count(text), text.lines().count(), "{text:?}");
            let mut rebuilt = String::new();
            let mut offset = 0;
            loop {
                let page = index.page(text, offset, 1);
                rebuilt.push_str(&page.text);
                match page.next_offset() {
                    Some(next) => offset = next,
                    None => break,
                }
            }
            assert_eq!(rebuilt, text);
        }
        let index = LineIndex::new("ab\ncd\nef");
        assert_eq!(index.line_of(0), 0);
        assert_eq!(index.line_of(2), 0);
        assert_eq!(index.line_of(3), 1);
        assert_eq!(index.line_of(7), 2);
        assert_eq!(index.page("ab\ncd\nef", 9, 5).count, 0);
    }

    #[test]
    fn cuts_respect_char_boundaries() {
        assert_eq!(floor_prefix("héllo", 2), "h");
        assert_eq!(ceil_suffix("hé", 1), "");
        assert_eq!(ceil_suffix("hé", 2), "é");
    }
}
