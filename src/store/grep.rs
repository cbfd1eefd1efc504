//! Line search over spilled text: literal patterns and a small regex dialect.
//!
//! The dialect is the one of the `regex-lite` crate (chosen for its wasm size;
//! see `benches/spill.rs`): `.`, classes `[a-z]`, `\d \w \s \b`, repetition
//! `* + ? {n,m}`, groups, `|`, anchors `^ $`, flags `(?i)`. Matching time is
//! linear in the text (no catastrophic backtracking). A pattern is matched
//! against each line without its line end.
//!
//! Speed comes from a literal prefilter: a literal pattern, or the literal a
//! regex must start with, is searched over the whole text with `memchr::memmem`
//! and only the lines it hits are checked.
//!
//! Linear is not cheap: the matcher (a Pike VM) costs about the size of the
//! compiled program per byte searched, and `(.*){999}x` compiles to a large
//! one. Every search therefore has a work budget ([`GrepOptions::max_cost`],
//! `limits.maxGrepCost`): the pattern's program size ([`Pattern::cost`])
//! times the bytes the regex runs over. A search over budget fails with
//! `GREP_TOO_COSTLY` before it runs (no literal to narrow it down) or as soon
//! as the lines it has checked use the budget up.

use memchr::memmem;
use serde::Serialize;

use super::lines::{floor_prefix, LineIndex};
use crate::error::{Error, ErrorCode, Result};

/// Longest pattern accepted, in bytes.
pub const MAX_PATTERN_BYTES: usize = 1_000;

/// Largest compiled program accepted, in bytes (regex-lite's size measure).
const MAX_PROGRAM_BYTES: usize = 1 << 16;

/// Largest count of a counted repetition (`{n}`, `{n,}`, `{n,m}`): a
/// pattern over it is `INVALID_PATTERN` (the cost of a search grows with it).
pub const MAX_REPEAT: u32 = 100;

/// Smallest program size probed: the cost unit of a tiny pattern.
const MIN_PROGRAM_BYTES: usize = 256;

/// Default work budget of one search ([`GrepOptions::max_cost`],
/// `limits.maxGrepCost`): program bytes × text bytes, 2^26. Measured in wasm
/// (Node, 262 KB of text, the shipped build) at 0.08–0.85 ns per unit: a
/// search at the cap takes about 5–60 ms (`\w+` 0.08 ns, `[\s\S]{100}x`
/// 0.5 ns, `a.*b.*c` 0.85 ns; up to twice that on a loaded machine;
/// it was 2^32, 4.7–8.4 s). A small pattern (≤ 256 bytes of program) with no
/// literal scans up to 256 KiB; one with a literal pays only for the lines
/// that contain it.
pub const DEFAULT_MAX_GREP_COST: u64 = 1 << 26;

/// A compiled search pattern.
#[derive(Debug, Clone)]
pub struct Pattern {
    source: String,
    regex: Option<regex_lite::Regex>,
    /// The regex in multi-line mode, to find candidate lines in a text without `\r`.
    scanner: Option<regex_lite::Regex>,
    /// A literal every matching line contains (the whole pattern when literal).
    required: Option<memmem::Finder<'static>>,
    /// A literal every matching line contains ignoring ASCII case, lowercased
    /// (the dialect folds ASCII case only), for case-insensitive prefilters.
    folded: Option<Box<[u8]>>,
    /// Case is ignored and the pattern is `folded` itself (no regex syntax):
    /// finding `folded` decides a match without running the regex.
    folded_whole: bool,
    /// Work per byte the regex runs over: its program size in bytes, rounded
    /// up to a power of two (0 for a plain literal search).
    cost: u64,
}

/// The work a search may still do (program bytes × text bytes).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct GrepBudget {
    left: u64,
    limit: u64,
}

impl GrepBudget {
    /// A budget of `limit` units.
    pub fn new(limit: u64) -> Self {
        Self { left: limit, limit }
    }

    /// No limit (host-configured patterns, e.g. `spill.errorPatterns`).
    pub fn unlimited() -> Self {
        Self::new(u64::MAX)
    }

    /// Units taken so far.
    pub fn spent(&self) -> u64 {
        self.limit - self.left
    }

    /// Takes `cost × bytes` units, or fails with `GREP_TOO_COSTLY`.
    fn charge(&mut self, cost: u64, bytes: usize) -> Result<()> {
        let units = cost.saturating_mul(bytes as u64);
        match self.left.checked_sub(units) {
            Some(left) => {
                self.left = left;
                Ok(())
            }
            None => Err(Error::new(
                ErrorCode::GrepTooCostly,
                "pattern",
                format!(
                    "the pattern's program is {cost} bytes; searching {bytes} bytes with it \
                     would exceed limits.maxGrepCost ({}): use a literal or a simpler pattern",
                    self.limit
                ),
            )),
        }
    }
}

impl Pattern {
    /// Compiles `pattern`: searched as is when `literal`, else as a regex of
    /// the small dialect. `INVALID_PATTERN` when it does not compile.
    pub fn new(pattern: &str, literal: bool, ignore_case: bool) -> Result<Self> {
        let bad = |msg: String| Error::new(ErrorCode::InvalidPattern, "pattern", msg);
        if pattern.is_empty() {
            return Err(bad("the pattern is empty".into()));
        }
        if pattern.len() > MAX_PATTERN_BYTES {
            return Err(bad(format!(
                "the pattern is longer than {MAX_PATTERN_BYTES} bytes"
            )));
        }
        if !literal {
            if let Some(count) = largest_repeat(pattern).filter(|&n| n > MAX_REPEAT) {
                return Err(bad(format!(
                    "a counted repetition of {count} is over {MAX_REPEAT}: use a shorter one or a literal"
                )));
            }
        }
        // A regex without syntax is its own text: searched as a literal, at no regex cost.
        let literal = literal || (!ignore_case && regex_lite::escape(pattern) == pattern);
        let folded = if literal {
            Some(pattern.to_string())
        } else {
            required_literal(pattern)
        }
        .filter(|l| l.len() >= 2)
        .map(|l| l.to_ascii_lowercase().into_bytes().into_boxed_slice());
        if literal && !ignore_case {
            return Ok(Self {
                source: pattern.to_string(),
                regex: None,
                scanner: None,
                required: Some(memmem::Finder::new(pattern.as_bytes()).into_owned()),
                folded,
                folded_whole: false,
                cost: 0,
            });
        }
        let folded_whole = ignore_case
            && folded.as_deref().is_some_and(|f| f.len() == pattern.len())
            && (literal || regex_lite::escape(pattern) == pattern);
        let source = if literal {
            regex_lite::escape(pattern)
        } else {
            pattern.to_string()
        };
        let build = |multi_line: bool, size: usize| {
            regex_lite::RegexBuilder::new(&source)
                .case_insensitive(ignore_case)
                .multi_line(multi_line)
                .nest_limit(32)
                .size_limit(size)
                .build()
        };
        let compile = |multi_line: bool| {
            build(multi_line, MAX_PROGRAM_BYTES).map_err(|e| bad(format!("invalid regex: {e}")))
        };
        let regex = compile(false)?;
        // The program size, to a power of two: the smallest limit it compiles under.
        let mut size = MIN_PROGRAM_BYTES;
        while size < MAX_PROGRAM_BYTES && build(false, size).is_err() {
            size *= 2;
        }
        let required = if ignore_case {
            None
        } else {
            required_literal(pattern).map(|p| memmem::Finder::new(p.as_bytes()).into_owned())
        };
        // A whole folded literal decides every line without the regex: no scanner, no cost.
        let scanner = if required.is_none() && !folded_whole {
            Some(compile(true)?)
        } else {
            None
        };
        Ok(Self {
            source: pattern.to_string(),
            regex: Some(regex),
            scanner,
            required,
            folded,
            folded_whole,
            cost: if folded_whole { 0 } else { size as u64 },
        })
    }

    /// Work per byte searched by the regex: its compiled program size in
    /// bytes, rounded up to a power of two (at least 256); 0 for a literal
    /// searched as is.
    pub fn cost(&self) -> u64 {
        self.cost
    }

    /// A literal every matching line contains, if one is known.
    pub fn required(&self) -> Option<&[u8]> {
        self.required.as_ref().map(|f| f.needle())
    }

    /// A literal (at least 2 bytes, ASCII-lowercased) every matching line
    /// contains when ASCII case is ignored, if one is known: a prefilter that
    /// holds whether or not the pattern ignores case.
    pub fn required_ignoring_case(&self) -> Option<&[u8]> {
        self.folded.as_deref()
    }

    /// The pattern as given.
    pub fn as_str(&self) -> &str {
        &self.source
    }

    /// Byte range of the first match in `line`.
    pub fn find(&self, line: &str) -> Option<(usize, usize)> {
        match &self.regex {
            Some(re) => re.find(line).map(|m| (m.start(), m.end())),
            None => {
                let finder = self.required.as_ref()?;
                finder
                    .find(line.as_bytes())
                    .map(|at| (at, at + finder.needle().len()))
            }
        }
    }

    /// Whether `line` matches.
    pub fn is_match(&self, line: &str) -> bool {
        match &self.regex {
            Some(re) => {
                // A cheap literal check first: most lines do not match.
                if let Some(f) = &self.required {
                    if f.find(line.as_bytes()).is_none() {
                        return false;
                    }
                } else if let Some(f) = self.folded.as_deref() {
                    // No exact literal but a folded one: the regex ignores case.
                    if !contains_folded(line.as_bytes(), f) {
                        return false;
                    }
                    if self.folded_whole {
                        return true;
                    }
                }
                re.is_match(line)
            }
            None => self.find(line).is_some(),
        }
    }

    /// Calls `hit` with each 0-based line in `from..to` that matches, in
    /// order; stops early when `hit` returns `false`. Each run of the regex
    /// is paid from `budget` first: `GREP_TOO_COSTLY` when it runs out (when
    /// the pattern has no literal to narrow the search, the whole span is
    /// paid up front, so an over-budget search fails before it starts).
    pub fn for_each_line(
        &self,
        text: &str,
        index: &LineIndex,
        from: usize,
        to: usize,
        budget: &mut GrepBudget,
        mut hit: impl FnMut(usize) -> bool,
    ) -> Result<()> {
        let to = to.min(index.len());
        if from >= to {
            return Ok(());
        }
        let span = index.span(from, to);
        if self.required.is_none() {
            budget.charge(self.cost, span.len())?;
        }
        let bytes = text.as_bytes();
        let scanner = self.scanner.as_ref().filter(|_| {
            // Multi-line mode treats a line end as `\n` only: use it on text without `\r`.
            bytes
                .get(span.clone())
                .is_some_and(|b| memchr::memchr(b'\r', b).is_none())
        });
        if self.required.is_none() && scanner.is_none() {
            for i in from..to {
                if self.is_match(index.line_trimmed(text, i)) && !hit(i) {
                    return Ok(());
                }
            }
            return Ok(());
        }
        let mut pos = span.start;
        while pos < span.end {
            // The next place a match may be: the literal every match
            // contains, or else the regex itself run over the whole text
            // (multi-line mode), each hit then checked against its line.
            let at = match (&self.required, scanner) {
                (Some(finder), _) => match bytes.get(pos..span.end).and_then(|r| finder.find(r)) {
                    Some(at) => pos + at,
                    None => return Ok(()),
                },
                (None, Some(re)) => match re.find_at(text, pos) {
                    Some(m) if m.start() < span.end => m.start(),
                    _ => return Ok(()),
                },
                (None, None) => return Ok(()),
            };
            let line = index.line_of(at);
            let content = index.line_trimmed(text, line);
            if self.required.is_some() {
                budget.charge(self.cost, content.len())?;
            }
            if self.is_match(content) && !hit(line) {
                return Ok(());
            }
            pos = index.range(line).end.max(at + 1);
        }
        Ok(())
    }
}

/// Whether `hay` contains `needle` (ASCII-lowercased) ignoring ASCII case.
fn contains_folded(hay: &[u8], needle: &[u8]) -> bool {
    let Some(&first) = needle.first() else {
        return true;
    };
    memchr::memchr2_iter(first, first.to_ascii_uppercase(), hay).any(|at| {
        hay.get(at..at + needle.len())
            .is_some_and(|w| w.eq_ignore_ascii_case(needle))
    })
}

/// The largest count of a counted repetition in `pattern` (`{n}`, `{n,}`,
/// `{n,m}` outside classes and escapes; a count past `u32` saturates).
fn largest_repeat(pattern: &str) -> Option<u32> {
    let bytes = pattern.as_bytes();
    let mut largest = None;
    let mut class = false;
    let mut i = 0;
    while let Some(&b) = bytes.get(i) {
        i += 1;
        match b {
            b'\\' => i += 1,
            b'[' => class = true,
            b']' => class = false,
            b'{' if !class => {
                let end = bytes
                    .get(i..)
                    .and_then(|r| r.iter().position(|&c| c == b'}'));
                let body = end.and_then(|e| pattern.get(i..i + e)).unwrap_or("");
                let counts = body.split(',').filter(|c| !c.trim().is_empty());
                for count in counts {
                    let count = count.trim();
                    if count.bytes().all(|c| c.is_ascii_digit()) {
                        let n = count.parse::<u32>().unwrap_or(u32::MAX);
                        largest = largest.max(Some(n));
                    }
                }
            }
            _ => {}
        }
    }
    largest
}

/// A literal every match of `pattern` contains: the longest run of plain
/// characters at the top level of the pattern, when it is at least 2 bytes
/// long (conservative: `None` with a top-level alternation or inline flags).
fn required_literal(pattern: &str) -> Option<String> {
    if pattern.contains("(?") {
        return None;
    }
    let chars: Vec<char> = pattern.chars().collect();
    let mut runs: Vec<String> = Vec::new();
    let mut run = String::new();
    let mut depth = 0usize;
    let mut i = 0;
    while let Some(&c) = chars.get(i) {
        i += 1;
        match c {
            '\\' => {
                runs.push(std::mem::take(&mut run));
                // `\x{..}`, `\p{..}`, `\u{..}`: skip the braces too.
                i += 1;
                if chars.get(i) == Some(&'{') {
                    while chars.get(i).is_some_and(|&c| c != '}') {
                        i += 1;
                    }
                    i += 1;
                }
            }
            '[' => {
                runs.push(std::mem::take(&mut run));
                if chars.get(i) == Some(&'^') {
                    i += 1;
                }
                if chars.get(i) == Some(&']') {
                    i += 1;
                }
                while let Some(&c) = chars.get(i) {
                    i += 1;
                    match c {
                        '\\' => i += 1,
                        ']' => break,
                        _ => {}
                    }
                }
            }
            '(' => {
                runs.push(std::mem::take(&mut run));
                depth += 1;
            }
            ')' => {
                runs.push(std::mem::take(&mut run));
                depth = depth.saturating_sub(1);
            }
            '|' if depth == 0 => return None,
            '*' | '?' | '+' | '{' => {
                // The quantified character is not required.
                run.pop();
                runs.push(std::mem::take(&mut run));
                if c == '{' {
                    while chars.get(i).is_some_and(|&c| c != '}') {
                        i += 1;
                    }
                    i += 1;
                }
            }
            '.' | '^' | '$' | '|' => runs.push(std::mem::take(&mut run)),
            _ if depth == 0 => run.push(c),
            _ => {}
        }
    }
    runs.push(run);
    runs.into_iter()
        .filter(|r| r.len() >= 2)
        .max_by_key(|r| r.len())
}

/// Options of [`grep`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct GrepOptions {
    /// Lines of context before and after each match.
    pub context: usize,
    /// Most matching lines returned.
    pub max_matches: usize,
    /// Matching lines skipped before the first one returned (for paging).
    pub skip: usize,
    /// Longest line text returned, in bytes; longer lines are cut around the match.
    pub max_line_bytes: usize,
    /// Work budget of the search: [`Pattern::cost`] × bytes searched
    /// (`limits.maxGrepCost`, default [`DEFAULT_MAX_GREP_COST`]); over it
    /// the search fails with `GREP_TOO_COSTLY`.
    pub max_cost: u64,
}

impl Default for GrepOptions {
    fn default() -> Self {
        Self {
            context: 2,
            max_matches: 50,
            skip: 0,
            max_line_bytes: 400,
            max_cost: DEFAULT_MAX_GREP_COST,
        }
    }
}

/// One line of a [`GrepResult`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct GrepLine {
    /// 1-based line number.
    pub number: usize,
    /// Whether the line matches (else it is context).
    pub is_match: bool,
    /// The line without its line end; a window of it when longer than `max_line_bytes`.
    pub text: String,
    /// Byte offset of `text` within the line (non-zero when the line was cut).
    pub column: usize,
    /// Length of the whole line in bytes.
    pub line_bytes: usize,
}

/// What [`grep`] found.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct GrepResult {
    /// Lines in the text.
    pub total_lines: usize,
    /// Matching lines in the whole text.
    pub total_matches: usize,
    /// Matching lines skipped (`GrepOptions::skip`).
    pub skipped: usize,
    /// Matching lines returned.
    pub returned: usize,
    /// Matches and context lines, in order, without duplicates.
    pub lines: Vec<GrepLine>,
    /// Work the search took (program bytes × bytes the regex ran over; 0
    /// for a literal): what a host budgets across searches.
    pub work: u64,
}

impl GrepResult {
    /// The `skip` of the next page of matches, or `None` after the last one.
    pub fn next_skip(&self) -> Option<usize> {
        let next = self.skipped + self.returned;
        (next < self.total_matches).then_some(next)
    }

    /// The lines `grep -n` style, each ending in `\n`: `12:match`,
    /// `11-context`, `--` between groups, `…` where a long line was cut.
    pub fn grep_n(&self) -> String {
        let mut out = String::new();
        let mut previous: Option<usize> = None;
        for line in &self.lines {
            if previous.is_some_and(|p| p + 1 != line.number) {
                out.push_str("--\n");
            }
            previous = Some(line.number);
            let sep = if line.is_match { ':' } else { '-' };
            let open = if line.column > 0 { "…" } else { "" };
            let close = if line.column + line.text.len() < line.line_bytes {
                "…"
            } else {
                ""
            };
            out.push_str(&format!("{}{sep}{open}{}{close}\n", line.number, line.text));
        }
        out
    }
}

/// Searches `text` line by line; `GREP_TOO_COSTLY` when the search would
/// cost more than `options.max_cost`.
pub fn grep(
    text: &str,
    index: &LineIndex,
    pattern: &Pattern,
    options: &GrepOptions,
) -> Result<GrepResult> {
    let mut matching = Vec::new();
    let mut total = 0;
    let take = options.skip.saturating_add(options.max_matches);
    let mut budget = GrepBudget::new(options.max_cost);
    pattern.for_each_line(text, index, 0, index.len(), &mut budget, |line| {
        if total >= options.skip && total < take {
            matching.push(line);
        }
        total += 1;
        true
    })?;
    let mut lines: Vec<GrepLine> = Vec::new();
    for (n, &m) in matching.iter().enumerate() {
        let from = m.saturating_sub(options.context);
        let from = lines.last().map_or(from, |l| from.max(l.number));
        let next_match = matching.get(n + 1).copied().unwrap_or(usize::MAX);
        let to = m
            .saturating_add(options.context)
            .saturating_add(1)
            .min(index.len())
            .min(next_match);
        for i in from..to {
            let line = index.line_trimmed(text, i);
            let is_match = i == m;
            let window_at = if is_match {
                pattern.find(line).map_or(0, |(s, _)| s)
            } else {
                0
            };
            let (column, shown) = window(line, window_at, options.max_line_bytes);
            lines.push(GrepLine {
                number: i + 1,
                is_match,
                text: shown.to_string(),
                column,
                line_bytes: line.len(),
            });
        }
    }
    Ok(GrepResult {
        total_lines: index.len(),
        total_matches: total,
        skipped: options.skip.min(total),
        returned: matching.len(),
        lines,
        work: budget.spent(),
    })
}

/// A window of at most `max` bytes of `line` that shows byte `at` (starting a
/// little before it); returns its start and text.
fn window(line: &str, at: usize, max: usize) -> (usize, &str) {
    if line.len() <= max {
        return (0, line);
    }
    let mut start = at
        .saturating_sub(max / 4)
        .min(line.len().saturating_sub(max));
    while !line.is_char_boundary(start) {
        start -= 1;
    }
    let rest = line.get(start..).unwrap_or("");
    (start, floor_prefix(rest, max))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn required_literal_is_conservative() {
        let r = |p: &str| required_literal(p);
        assert_eq!(r("exit code [1-9]").as_deref(), Some("exit code "));
        assert_eq!(r("Traceback").as_deref(), Some("Traceback"));
        assert_eq!(r("ab*c"), None);
        assert_eq!(r("abc?d").as_deref(), Some("ab"));
        assert_eq!(r("a|b"), None);
        assert_eq!(r("(a|b)cd").as_deref(), Some("cd"));
        assert_eq!(r("(?i)error"), None);
        assert_eq!(r("^error:").as_deref(), Some("error:"));
        assert_eq!(r(r"\d+ FAILED$").as_deref(), Some(" FAILED"));
        assert_eq!(r(r"[]ab]xy{2}z").as_deref(), None);
        assert_eq!(r(r"[]ab]wxy{2}z").as_deref(), Some("wx"));
        assert_eq!(r(r"\x{41}bc\.def").as_deref(), Some("def"));
    }

    #[test]
    fn finds_lines_with_context_and_paging() {
        let text = "a\nerror: one\nb\nc\nd\nerror: two\ne\n";
        let index = LineIndex::new(text);
        let p = Pattern::new("error: \\w+", false, false).unwrap();
        let r = grep(text, &index, &p, &GrepOptions::default()).unwrap();
        assert_eq!(r.total_matches, 2);
        let numbers: Vec<usize> = r.lines.iter().map(|l| l.number).collect();
        assert_eq!(numbers, vec![1, 2, 3, 4, 5, 6, 7]);
        let r = grep(
            text,
            &index,
            &p,
            &GrepOptions {
                skip: 1,
                context: 0,
                ..GrepOptions::default()
            },
        )
        .unwrap();
        assert_eq!((r.returned, r.skipped), (1, 1));
        assert_eq!(r.lines[0].number, 6);
        assert!(Pattern::new("(", false, false).is_err());
        let lit = Pattern::new("(", true, false).unwrap();
        assert!(lit.is_match("f(x)"));
        let ci = Pattern::new("ERROR", true, true).unwrap();
        assert!(ci.is_match("an error here"));
    }

    #[test]
    fn ignoring_case_prefilters_on_the_folded_literal() {
        let plain = Pattern::new("Error", false, true).unwrap();
        assert_eq!(plain.required_ignoring_case(), Some(&b"error"[..]));
        assert!(plain.is_match("an ERROR here") && plain.is_match("ValueError: x"));
        assert!(!plain.is_match("an Err here") && !plain.is_match(""));
        let re = Pattern::new("exit code [1-9]", false, true).unwrap();
        assert_eq!(re.required_ignoring_case(), Some(&b"exit code "[..]));
        assert!(re.is_match("EXIT CODE 2") && !re.is_match("exit code 0"));
        let bang = Pattern::new("npm ERR!", false, true).unwrap();
        assert!(bang.is_match("npm err! code E404") && !bang.is_match("npm warn"));
        // Case kept: the folded literal is still a valid prefilter.
        let exact = Pattern::new("(?-i)ERROR", false, true).unwrap();
        assert!(exact.is_match("ERROR x") && !exact.is_match("error x"));
        assert!(contains_folded(b"xxABcx", b"abc") && !contains_folded(b"xxabx", b"abc"));
    }
}
