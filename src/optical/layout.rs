//! Layout: turns tool output into the character grid that gets drawn.
//!
//! Terminal semantics where they matter for what a reader would have seen:
//! ANSI escape sequences are stripped, `\r` returns to the start of the line
//! (progress bars overwrite themselves), backspace moves left, tabs expand to
//! the next multiple of [`TAB_STOP`]. Other control characters become caret
//! notation (`^A`, `^?`), C1 controls become [`MISSING`]. Empty space that buys
//! nothing is trimmed: trailing spaces, leading and trailing blank lines, runs
//! of blank lines (kept as one).

/// Tab stops every this many columns (terminal convention).
pub const TAB_STOP: usize = 8;

/// Stands for a character that cannot be drawn; the raster draws a placeholder box.
pub const MISSING: char = '\u{FFFD}';

/// Marks a line break in reflowed text (see [`Lines::reflowed`]): `»`, the
/// mark OCR reads back best among those the font has (mean character
/// accuracy of reflowed snapshots, Anthropic preset: `»` 0.976, `¶` 0.950,
/// `¬` 0.951; `tests/optical_legibility.rs`).
pub const LINE_MARK: char = '\u{BB}';

/// Normalized lines of an observation, ready to wrap at any width.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Lines {
    /// One entry per line, in cells (one `char` per cell).
    pub lines: Vec<Vec<char>>,
    /// Cells that are not spaces.
    pub ink: usize,
}

impl Lines {
    /// Length of the longest line in cells.
    pub fn max_len(&self) -> usize {
        self.lines.iter().map(Vec::len).max().unwrap_or(0)
    }

    /// Number of rows when lines wrap at `columns` cells (an empty line is one row).
    pub fn rows(&self, columns: usize) -> usize {
        let c = columns.max(1);
        self.lines.iter().map(|l| l.len().div_ceil(c).max(1)).sum()
    }

    /// Histogram of line lengths: `(length, count)` sorted by length, for fast
    /// row counts over many candidate widths.
    pub fn length_histogram(&self) -> Vec<(usize, usize)> {
        let mut lens: Vec<usize> = self.lines.iter().map(Vec::len).collect();
        lens.sort_unstable();
        let mut out: Vec<(usize, usize)> = Vec::new();
        for len in lens {
            match out.last_mut() {
                Some((l, n)) if *l == len => *n += 1,
                _ => out.push((len, 1)),
            }
        }
        out
    }

    /// The lines run together as one, each break shown as [`LINE_MARK`], so
    /// wrapping fills every row: short lines no longer leave blank cells
    /// (which cost image tokens), at the price of indentation no longer
    /// lining up.
    pub fn reflowed(&self) -> Lines {
        if self.lines.is_empty() {
            return self.clone();
        }
        let mut line = Vec::with_capacity(self.lines.iter().map(|l| l.len() + 1).sum());
        for (i, l) in self.lines.iter().enumerate() {
            if i > 0 {
                line.push(LINE_MARK);
            }
            line.extend_from_slice(l);
        }
        let breaks = self.lines.len().saturating_sub(1);
        Lines {
            lines: vec![line],
            ink: self.ink + breaks,
        }
    }

    /// The rows at `columns` cells: each line cut into pieces of at most `columns`.
    pub fn wrap(&self, columns: usize) -> Vec<&[char]> {
        let c = columns.max(1);
        let mut rows = Vec::with_capacity(self.rows(c));
        for line in &self.lines {
            if line.is_empty() {
                rows.push(&line[..]);
            } else {
                rows.extend(line.chunks(c));
            }
        }
        rows
    }
}

/// Rows of a length histogram ([`Lines::length_histogram`]) at many widths:
/// each line takes `ceil(len / width)` rows, at least one. A line no longer
/// than the width takes one, so only the longer lines are divided (a binary
/// search finds them; a snapshot's search tries hundreds of widths).
#[derive(Debug)]
pub struct RowCounts {
    histogram: Vec<(usize, usize)>,
    /// Lines in `histogram[..i]`.
    below: Vec<usize>,
}

impl RowCounts {
    /// The row counter of a length histogram sorted by length.
    pub fn new(histogram: Vec<(usize, usize)>) -> Self {
        let mut below = Vec::with_capacity(histogram.len() + 1);
        let mut lines = 0;
        below.push(0);
        for &(_, n) in &histogram {
            lines += n;
            below.push(lines);
        }
        Self { histogram, below }
    }

    /// Rows at `columns` (at least 1).
    pub fn rows(&self, columns: usize) -> usize {
        let c = columns.max(1);
        let split = self.histogram.partition_point(|&(len, _)| len <= c);
        let short = self.below.get(split).copied().unwrap_or(0);
        let long = self.histogram.get(split..).unwrap_or(&[]);
        short
            + long
                .iter()
                .map(|&(len, n)| len.div_ceil(c) * n)
                .sum::<usize>()
    }
}

/// Normalizes `text` into drawable lines.
pub fn lay_out(text: &str) -> Lines {
    let mut lines: Vec<Vec<char>> = Vec::new();
    let mut line: Vec<char> = Vec::new();
    let mut col = 0usize;
    let mut chars = text.chars();
    loop {
        // A run of printable ASCII written at the end of the line (most of
        // any output) is appended at once; the rest goes char by char.
        let rest = chars.as_str().as_bytes();
        let run = rest
            .iter()
            .take_while(|b| (0x20..0x7f).contains(*b))
            .count();
        if run > 0 && col == line.len() {
            line.extend(rest.iter().take(run).map(|&b| char::from(b)));
            col += run;
            chars = chars.as_str().get(run..).unwrap_or("").chars();
            continue;
        }
        let Some(ch) = chars.next() else { break };
        write(
            ch,
            &mut chars,
            &mut Grid {
                lines: &mut lines,
                line: &mut line,
                col: &mut col,
            },
        );
    }
    lines.push(finish(line));
    trimmed(lines)
}

/// The lines written so far, the current one and the cursor's column in it.
struct Grid<'g> {
    lines: &'g mut Vec<Vec<char>>,
    line: &'g mut Vec<char>,
    col: &'g mut usize,
}

/// Writes `ch` (read from `chars`, which an escape sequence goes on reading)
/// as a terminal would.
fn write(ch: char, chars: &mut std::str::Chars<'_>, g: &mut Grid<'_>) {
    match ch {
        '\n' => {
            g.lines.push(finish(std::mem::take(g.line)));
            *g.col = 0;
        }
        '\r' => {
            if !chars.as_str().starts_with('\n') {
                *g.col = 0;
            }
        }
        '\t' => {
            let next = (*g.col / TAB_STOP + 1) * TAB_STOP;
            while *g.col < next {
                put(g.line, g.col, ' ');
            }
        }
        '\u{8}' => *g.col = g.col.saturating_sub(1),
        '\u{1b}' => skip_escape(chars),
        c if (c as u32) < 0x20 || c == '\u{7f}' => {
            put(g.line, g.col, '^');
            let shown = char::from_u32((c as u32) ^ 0x40).unwrap_or('?');
            put(g.line, g.col, shown);
        }
        c if ('\u{80}'..='\u{9f}').contains(&c) => put(g.line, g.col, MISSING),
        // Zero-width characters take no cell.
        '\u{200b}'..='\u{200f}' | '\u{feff}' => {}
        c => put(g.line, g.col, c),
    }
}

/// `lines` without blank lines at both ends, runs of blank lines kept as one.
fn trimmed(lines: Vec<Vec<char>>) -> Lines {
    // Trim blank lines at both ends and collapse runs of blank lines.
    let mut out: Vec<Vec<char>> = Vec::with_capacity(lines.len());
    for l in lines {
        if l.is_empty() && out.last().map_or(true, Vec::is_empty) {
            continue;
        }
        out.push(l);
    }
    while out.last().is_some_and(Vec::is_empty) {
        out.pop();
    }
    let ink = out
        .iter()
        .map(|l| l.iter().filter(|c| **c != ' ').count())
        .sum();
    Lines { lines: out, ink }
}

fn put(line: &mut Vec<char>, col: &mut usize, ch: char) {
    if let Some(slot) = line.get_mut(*col) {
        *slot = ch;
    } else {
        line.resize(*col, ' ');
        line.push(ch);
    }
    *col += 1;
}

fn finish(mut line: Vec<char>) -> Vec<char> {
    while line.last() == Some(&' ') {
        line.pop();
    }
    line
}

/// Skips one escape sequence after `ESC`: CSI (`ESC [ … final`), OSC/DCS/PM/APC
/// strings (terminated by BEL or `ESC \`), charset designations (`ESC ( B`) and
/// two-character escapes.
fn skip_escape(chars: &mut std::str::Chars<'_>) {
    match chars.next() {
        Some('[') => {
            for c in chars.by_ref() {
                if ('\u{40}'..='\u{7e}').contains(&c) {
                    break;
                }
            }
        }
        Some(']' | 'P' | '^' | '_' | 'X') => {
            while let Some(c) = chars.next() {
                if c == '\u{7}' {
                    break;
                }
                if c == '\u{1b}' && chars.as_str().starts_with('\\') {
                    chars.next();
                    break;
                }
            }
        }
        Some('(' | ')' | '*' | '+' | '-' | '.' | '/' | '#' | '%' | ' ') => {
            chars.next();
        }
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Rows of a length histogram by the definition: what [`RowCounts`] must give.
    fn rows_from_histogram(histogram: &[(usize, usize)], columns: usize) -> usize {
        let c = columns.max(1);
        histogram
            .iter()
            .map(|&(len, n)| len.div_ceil(c).max(1) * n)
            .sum()
    }

    /// The char-by-char layout before ASCII runs were appended at once
    /// (lines before trimming): what [`lay_out`] must keep giving.
    fn lay_out_reference(text: &str) -> Vec<Vec<char>> {
        let (mut lines, mut line, mut col) = (Vec::new(), Vec::new(), 0);
        let mut chars = text.chars();
        while let Some(ch) = chars.next() {
            let mut grid = Grid {
                lines: &mut lines,
                line: &mut line,
                col: &mut col,
            };
            write(ch, &mut chars, &mut grid);
        }
        lines.push(finish(line));
        lines
    }

    #[test]
    fn lay_out_agrees_with_the_char_by_char_reference() {
        let pieces = [
            "abc",
            "x",
            " ",
            "  ",
            "\n",
            "\r",
            "\r\n",
            "\t",
            "\u{8}",
            "\u{1b}[31m",
            "\u{1b}]0;t\u{7}",
            "\u{1b}]x\u{1b}\\",
            "\u{1b}(B",
            "\u{1b}",
            "\u{1}",
            "\u{7f}",
            "\u{85}",
            "\u{200b}",
            "é",
            "日本",
            "»",
            "0123456789",
            "~",
            "\u{feff}",
        ];
        let mut seed: u64 = 9;
        for len in [1, 2, 3, 6, 12, 30] {
            for _ in 0..2000 {
                let mut text = String::new();
                for _ in 0..len {
                    seed = seed
                        .wrapping_mul(6364136223846793005)
                        .wrapping_add(1442695040888963407);
                    text.push_str(pieces[(seed >> 33) as usize % pieces.len()]);
                }
                assert_eq!(
                    lay_out(&text),
                    trimmed(lay_out_reference(&text)),
                    "{text:?}"
                );
            }
        }
    }

    #[test]
    fn row_counts_agree_with_the_histogram_sum() {
        let mut seed: u64 = 5;
        for case in 0..300 {
            let lines: Vec<Vec<char>> = (0..case % 40)
                .map(|_| {
                    seed = seed
                        .wrapping_mul(6364136223846793005)
                        .wrapping_add(1442695040888963407);
                    // Mostly short lines, some far longer than any width tried.
                    let r = (seed >> 33) as usize;
                    vec!['x'; if r % 7 == 0 { r % 2_000 } else { r % 120 }]
                })
                .collect();
            let histogram = Lines { lines, ink: 0 }.length_histogram();
            let counts = RowCounts::new(histogram.clone());
            for columns in 0..=300 {
                assert_eq!(
                    counts.rows(columns),
                    rows_from_histogram(&histogram, columns),
                    "{histogram:?} at {columns}"
                );
            }
        }
    }

    fn texts(l: &Lines) -> Vec<String> {
        l.lines.iter().map(|l| l.iter().collect()).collect()
    }

    #[test]
    fn strips_ansi_expands_tabs_and_overwrites_on_cr() {
        let l = lay_out("\u{1b}[1;31mred\u{1b}[0m\tx\r\n10%\r55%\rdone\n\u{1b}]0;title\u{7}ok");
        assert_eq!(texts(&l), ["red     x", "done", "ok"]);
    }

    #[test]
    fn control_characters_use_caret_notation_and_c1_is_missing() {
        let l = lay_out("a\u{0}b\u{7f}c\u{85}d");
        assert_eq!(texts(&l), [format!("a^@b^?c{MISSING}d")]);
        let l = lay_out("ab\u{8}X");
        assert_eq!(texts(&l), ["aX"]);
    }

    #[test]
    fn trims_and_collapses_blank_lines() {
        let l = lay_out("\n\n  a  \n\n\n\nb\n\n");
        assert_eq!(texts(&l), ["  a", "", "b"]);
        assert_eq!(l.ink, 2);
        assert!(lay_out("").lines.is_empty());
    }

    #[test]
    fn reflow_joins_lines_with_a_mark_and_fills_rows() {
        let l = lay_out("ab\n\n  cd\nefghij");
        let r = l.reflowed();
        let joined: String = r.lines[0].iter().collect();
        assert_eq!(joined, "ab»»  cd»efghij");
        assert_eq!(r.ink, l.ink + 3);
        assert_eq!(r.rows(5), 3);
        assert!(r.rows(5) < l.rows(5));
        assert!(lay_out("").reflowed().lines.is_empty());
    }

    #[test]
    fn wraps_and_counts_rows() {
        let l = lay_out("abcdefg\n\nxy");
        assert_eq!(l.rows(3), 3 + 1 + 1);
        let rows: Vec<String> = l.wrap(3).iter().map(|r| r.iter().collect()).collect();
        assert_eq!(rows, ["abc", "def", "g", "", "xy"]);
        assert_eq!(rows_from_histogram(&l.length_histogram(), 3), l.rows(3));
        assert_eq!(RowCounts::new(l.length_histogram()).rows(3), l.rows(3));
    }
}
