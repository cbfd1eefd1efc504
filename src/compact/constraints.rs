//! The constraint archive: the user's imperative instructions (and anything
//! the host pinned), word for word, deduplicated, in order of first
//! appearance. Rendering is deterministic, so the archive message stays
//! byte-identical across compactions unless a new constraint appears (which
//! is appended at the end).

use crate::text::{contains_phrase, sentences};

/// First line of the archive message.
pub const ARCHIVE_HEADER: &str =
    "[TraceLite constraint archive: the user's instructions, word for word]";

/// Most constraints archived; later ones stay in the summarized originals.
pub const MAX_CONSTRAINTS: usize = 100;

/// Longest sentence taken as a constraint, in bytes.
const MAX_SENTENCE: usize = 400;

/// The archived constraints, in order of first appearance.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ConstraintArchive {
    /// Each constraint, verbatim.
    pub items: Vec<String>,
}

impl ConstraintArchive {
    /// Adds `text` unless it is already archived (after trimming) or the
    /// archive is full; returns whether it was added.
    pub fn add(&mut self, text: &str) -> bool {
        let t = text.trim();
        if t.is_empty() || self.items.len() >= MAX_CONSTRAINTS || self.items.iter().any(|i| i == t)
        {
            return false;
        }
        self.items.push(t.to_string());
        true
    }

    /// The archive message text: the header, then one `- ` item per
    /// constraint (continuation lines indented by two spaces).
    pub fn render(&self) -> String {
        render_items(ARCHIVE_HEADER, &self.items)
    }

    /// Parses a rendered archive (the inverse of [`render`](Self::render)).
    pub fn parse(text: &str) -> Option<Self> {
        parse_items(ARCHIVE_HEADER, text).map(|items| Self { items })
    }
}

/// `header`, then one `- ` line per item (an item's further lines indented
/// by two spaces).
pub fn render_items(header: &str, items: &[String]) -> String {
    let mut out = String::from(header);
    for item in items {
        out.push('\n');
        for (i, line) in item.split('\n').enumerate() {
            if i > 0 {
                out.push('\n');
            }
            out.push_str(if i == 0 { "- " } else { "  " });
            out.push_str(line);
        }
    }
    out
}

/// The items of a text rendered by [`render_items`] with `header`.
pub fn parse_items(header: &str, text: &str) -> Option<Vec<String>> {
    let rest = text.strip_prefix(header)?;
    let mut items: Vec<String> = Vec::new();
    for line in rest.split('\n').skip(1) {
        if let Some(item) = line.strip_prefix("- ") {
            items.push(item.to_string());
        } else if let (Some(cont), Some(last)) = (line.strip_prefix("  "), items.last_mut()) {
            last.push('\n');
            last.push_str(cont);
        }
    }
    Some(items)
}

/// Sentences of a user message that contain one of `patterns` (at word
/// boundaries, any case), skipping fenced code and HTML comments.
pub fn extract(text: &str, patterns: &[String]) -> Vec<String> {
    let mut out = Vec::new();
    let mut in_fence = false;
    let mut in_comment = false;
    for line in text.lines() {
        let t = line.trim();
        if t.starts_with("```") {
            in_fence = !in_fence;
            continue;
        }
        if in_fence {
            continue;
        }
        if in_comment || t.starts_with("<!--") {
            in_comment = !t.contains("-->");
            continue;
        }
        // Indented code is not an instruction.
        if line.starts_with("    ") || line.starts_with('\t') {
            continue;
        }
        for s in sentences(t) {
            if s.len() <= MAX_SENTENCE
                && s.chars().any(char::is_alphabetic)
                && patterns.iter().any(|p| contains_phrase(s, p))
                && !out.iter().any(|o: &String| o == s)
            {
                out.push(s.to_string());
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn patterns() -> Vec<String> {
        crate::config::CompactConfig::default().constraint_patterns
    }

    #[test]
    fn extracts_imperatives_and_skips_code_and_comments() {
        let text = "Fix the bug. Do not modify tests! Keep it small.\n\
                    <!-- you must not see this\nnor this -->\n\
                    ```\nnever in code\n```\n    must in indented code\n\
                    - ALWAYS run the linter\nThe function should not raise.";
        let got = extract(text, &patterns());
        assert_eq!(
            got,
            vec![
                "Do not modify tests!",
                "- ALWAYS run the linter",
                "The function should not raise."
            ]
        );
    }

    #[test]
    fn render_parse_round_trip_and_dedup() {
        let mut a = ConstraintArchive::default();
        assert!(a.add("Never push."));
        assert!(!a.add("  Never push.  "));
        assert!(a.add("Line one\nline two"));
        let text = a.render();
        assert_eq!(ConstraintArchive::parse(&text), Some(a.clone()));
        assert_eq!(ConstraintArchive::parse(&text).unwrap().render(), text);
        assert!(ConstraintArchive::parse("other").is_none());
    }
}
