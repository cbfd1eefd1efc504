//! [`Excerpt`]: what the model sees of a tool result over the cap — a header
//! with exact figures and the pointer, the head and tail lines, the error
//! lines of the hidden middle, an index of what else it holds
//! ([`HiddenIndex`]) and the failing tests the listing left out ([`Unlisted`]).

use std::collections::{HashMap, HashSet};

use super::detectors::Detectors;
use super::grep::{GrepBudget, Pattern};
use super::index::{add_words, Facts, HiddenIndex, Unlisted};
use super::lines::{ceil_suffix, floor_prefix, LineIndex};
use super::literals::LiteralSet;
use crate::activity::check::{
    fit_newest, is_detail_line, is_error_line, CRITICAL_BYTES, LISTED_CRITICAL,
};
use crate::error::Result;
use crate::store::{HEADER_OPENING, REFUSED_OPENING};

/// Longest error line quoted in the hidden-middle listing, in bytes.
const ERROR_LINE_BYTES: usize = 200;

/// Where the full text went.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Kept {
    /// Stored: the `spill://` pointer.
    Pointer(String),
    /// The store refused it: the reason.
    Refused(String),
}

/// A shown line, possibly cut by characters.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ShownLine<'t> {
    /// 1-based line number.
    pub number: usize,
    /// Shown start of the line (all of it when not cut).
    pub start: &'t str,
    /// Bytes of the line not shown (0 when whole).
    pub hidden_bytes: usize,
    /// Shown end of the line, after the hidden bytes (empty unless cut).
    pub end: &'t str,
}

/// A hidden line carrying an error signal.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ErrorLine<'t> {
    /// 1-based line number.
    pub number: usize,
    /// The line (cut to 200 bytes).
    pub text: &'t str,
    /// Whether it is a critical line (listed with [`LISTED_CRITICAL`]).
    pub critical: bool,
}

/// The head/tail excerpt of a text over the cap.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Excerpt<'t> {
    /// Lines in the full text.
    pub total_lines: usize,
    /// Bytes in the full text.
    pub total_bytes: usize,
    /// Shown lines from the start.
    pub head: Vec<ShownLine<'t>>,
    /// Shown lines at the end (always holds the last line).
    pub tail: Vec<ShownLine<'t>>,
    /// Lines between head and tail, not shown.
    pub hidden_lines: usize,
    /// Bytes of those lines.
    pub hidden_bytes: usize,
    /// Hidden lines with error signals listed, in order: the critical ones
    /// within a byte budget, then at most `max_error_lines` others.
    pub errors: Vec<ErrorLine<'t>>,
    /// How many hidden lines carry error signals in all.
    pub error_total: usize,
    /// What else the hidden lines hold (paths, definitions), when any fits.
    pub index: Option<HiddenIndex<'t>>,
    /// Hidden failing tests the error listing does not show.
    pub unlisted: Unlisted<'t>,
}

/// Error-signal patterns compiled once per call, matched ignoring ASCII case
/// (`ERROR`, `Error` and `error` are one signal; `(?-i)` in a pattern restores case).
#[derive(Debug, Clone)]
pub struct ErrorSignals {
    patterns: Vec<Pattern>,
    /// One-pass, case-folding finder of the patterns' literals, when every
    /// pattern has one (each hit line is then checked against the patterns).
    literals: Option<LiteralSet>,
    max_lines: usize,
    /// Share of the cap the hidden-middle index may take.
    index_share: f64,
    /// The critical-line detectors of every tool ([`super::detectors`]).
    detectors: Detectors,
}

/// Default share of the cap given to the hidden-middle index
/// (`spill.indexShare`).
pub const INDEX_SHARE: f64 = crate::config::SpillConfig::INDEX_SHARE;

/// Bytes of index per token of its share (indexes are paths, names and
/// numbers: about 3 bytes per token).
const INDEX_BYTES_PER_TOKEN: f64 = 3.0;

impl ErrorSignals {
    /// Compiles the configured patterns (small regex dialect, case ignored).
    pub fn new(patterns: &[String], max_lines: usize) -> Result<Self> {
        let patterns = patterns
            .iter()
            .map(|p| Pattern::new(p, false, true))
            .collect::<Result<Vec<_>>>()?;
        // A case-insensitive regex has no exact literal for `memmem`: one
        // folding pass for all the literals keeps the scan about as cheap as
        // a case-sensitive one (a pattern without a literal runs the regex).
        let literals = if patterns
            .iter()
            .all(|p| p.required_ignoring_case().is_some())
        {
            LiteralSet::new(patterns.iter().filter_map(Pattern::required_ignoring_case))
        } else {
            None
        };
        Ok(Self {
            patterns,
            literals,
            max_lines,
            index_share: INDEX_SHARE,
            detectors: Detectors::new(&[])?,
        })
    }

    /// The same signals with `share` of the cap for the hidden-middle index
    /// (0 turns it off; the count of unlisted failing tests stays).
    pub fn with_index_share(mut self, share: f64) -> Self {
        self.index_share = share.clamp(0.0, 1.0);
        self
    }

    /// The same signals with the host's detector tables added to the
    /// built-in ones (`spill.detectors`).
    pub fn with_detectors(mut self, extra: &[crate::config::DetectorTable]) -> Result<Self> {
        if !extra.is_empty() {
            self.detectors = Detectors::new(extra)?;
        }
        Ok(self)
    }

    /// 0-based lines in `from..to` that match any pattern, in order.
    pub fn scan(&self, text: &str, index: &LineIndex, from: usize, to: usize) -> Vec<usize> {
        if from >= to || self.patterns.is_empty() {
            return Vec::new();
        }
        let mut hits: Vec<usize> = Vec::new();
        if let Some(literals) = &self.literals {
            let span = index.span(from, to);
            literals.scan(text.as_bytes(), span.start, span.end, |at| {
                let line = index.line_of(at);
                let content = index.line_trimmed(text, line);
                if self.patterns.iter().any(|p| p.is_match(content)) {
                    hits.push(line);
                }
                // Every pattern was checked on this line: go on after it.
                Some(index.range(line).end)
            });
            return hits;
        }
        for p in &self.patterns {
            // Host-configured patterns (bounded by `limits.maxErrorPatterns`): no budget.
            let _ = p.for_each_line(
                text,
                index,
                from,
                to,
                &mut GrepBudget::unlimited(),
                |line| {
                    hits.push(line);
                    true
                },
            );
        }
        hits.sort_unstable();
        hits.dedup();
        hits
    }
}

/// Opening line of a Python traceback.
const TRACEBACK: &str = "Traceback (most recent call last)";

/// The critical lines of `text` ([`crate::activity::check`]): every line
/// that ends a traceback, every error line but a traceback's opening and
/// every line the tools' detectors mark (`detected`), in order.
fn critical_lines(text: &str, index: &LineIndex, detected: &[usize]) -> Vec<usize> {
    let mut out = traceback_ends(text, index);
    out.extend_from_slice(detected);
    out.extend((0..index.len()).filter(|&i| {
        let line = index.line(text, i);
        is_error_line(line) && !line.trim_start().starts_with(TRACEBACK)
    }));
    out.sort_unstable();
    out.dedup();
    out
}

/// Every line of `text` that ends a traceback: the first non-empty,
/// unindented line after its opening (the exception), in order. One pass:
/// each line is walked at most once.
fn traceback_ends(text: &str, index: &LineIndex) -> Vec<usize> {
    let lines = index.len();
    let mut out = Vec::new();
    let mut at = 0;
    while let Some(found) = text.get(at..).and_then(|t| t.find(TRACEBACK)) {
        let mut line = index.line_of(at + found) + 1;
        while line < lines {
            let l = index.line(text, line);
            if !l.trim().is_empty() && !l.starts_with(char::is_whitespace) {
                out.push(line);
                break;
            }
            line += 1;
        }
        if line >= lines {
            break;
        }
        // Openings inside the lines walked end at the same line: go on from it.
        at = index.range(line).start.max(at + found + TRACEBACK.len());
    }
    out
}

/// Prices text in tokens (the host's counter).
pub type Count<'a> = dyn Fn(&str) -> Result<u64> + 'a;

/// What stays the same across layout attempts of one text.
struct Work<'t, 'a> {
    text: &'t str,
    index: &'a LineIndex,
    signals: &'a ErrorSignals,
    count: &'a Count<'a>,
    /// Token price of each line priced so far.
    costs: HashMap<usize, u64>,
    /// The last scanned range of lines and its pattern hits.
    scanned: Option<(usize, usize, Vec<usize>)>,
    /// The critical lines ([`critical_lines`]), found once.
    critical: Vec<usize>,
    /// Paths, definitions and failing tests of every line, found once.
    facts: Facts<'t>,
    /// Bytes the hidden-middle index and the unlisted tests' ids may take.
    index_bytes: usize,
}

impl Work<'_, '_> {
    fn line_cost(&mut self, i: usize) -> Result<u64> {
        if let Some(&cost) = self.costs.get(&i) {
            return Ok(cost);
        }
        let cost = (self.count)(self.index.line(self.text, i))?;
        self.costs.insert(i, cost);
        Ok(cost)
    }

    /// Error lines in `from..to`: pattern hits (scanning only what the last
    /// scan did not cover) and the critical lines (the exception line ending
    /// each traceback, whatever it is named; error lines), configured or not.
    fn hits(&mut self, from: usize, to: usize) -> Vec<usize> {
        let (text, index) = (self.text, self.index);
        let mut hits = match self.scanned.take() {
            Some((f, t, known)) if from <= f && to >= t => {
                let mut all = self.signals.scan(text, index, from, f);
                all.extend(known);
                all.extend(self.signals.scan(text, index, t, to));
                all
            }
            Some((f, t, known)) if from >= f && to <= t => {
                known.into_iter().filter(|&i| i >= from && i < to).collect()
            }
            _ => self.signals.scan(text, index, from, to),
        };
        self.scanned = Some((from, to, hits.clone()));
        let a = self.critical.partition_point(|&i| i < from);
        let b = self.critical.partition_point(|&i| i < to);
        if let Some(ends) = self.critical.get(a..b).filter(|e| !e.is_empty()) {
            hits.extend_from_slice(ends);
            hits.sort_unstable();
            hits.dedup();
        }
        hits
    }

    /// Which of the hidden error lines `hits` the excerpt lists, in order,
    /// within `max_bytes`: the critical ones (the newest first, pytest's `E  `
    /// details last), then the first of the `max_error_lines` others that fit.
    fn listed(&self, hits: &[usize], max_bytes: usize) -> Vec<usize> {
        let (text, index) = (self.text, self.index);
        let (critical, other): (Vec<usize>, Vec<usize>) = hits
            .iter()
            .partition(|i| self.critical.binary_search(i).is_ok());
        let (mut out, _) = fit_newest(critical, max_bytes, |&i| {
            let line = error_text(text, index, i);
            (line.len(), !is_detail_line(line))
        });
        let mut used: usize = out
            .iter()
            .map(|&i| error_text(text, index, i).len() + 1)
            .sum();
        for i in other.into_iter().take(self.signals.max_lines) {
            let bytes = error_text(text, index, i).len();
            if used + bytes >= max_bytes {
                break;
            }
            used += bytes + 1;
            out.push(i);
        }
        out.sort_unstable();
        out
    }
}

/// Budgets in tokens for the parts of an excerpt.
struct Budget {
    head: u64,
    tail: u64,
}

impl<'t> Excerpt<'t> {
    /// Builds the excerpt of `text` and its rendering (with `kept` in the
    /// header) so that the rendering costs at most `cap` tokens: `head_share`
    /// of the room for lines goes to the head, the rest to the tail; lines
    /// longer than their side's room are cut by characters.
    pub fn build(
        text: &'t str,
        cap: u64,
        head_share: f64,
        signals: &ErrorSignals,
        count: &Count<'_>,
        kept: &Kept,
    ) -> Result<(Self, String)> {
        let index = LineIndex::new(text);
        let probe = Self {
            total_lines: index.len(),
            total_bytes: text.len(),
            head: Vec::new(),
            tail: Vec::new(),
            hidden_lines: index.len(),
            hidden_bytes: text.len(),
            errors: Vec::new(),
            error_total: 0,
            index: None,
            unlisted: Unlisted::default(),
        };
        // Room for the header and the gap marker.
        let frame = count(&probe.render(kept))?;
        let mut room = cap.saturating_sub(frame + 8).max(64);
        // Lines priced one by one can add up to less than their sum priced
        // at once: shrink the room by the overshoot until the whole fits.
        // Line prices and scanned error lines are kept across attempts.
        let found = signals.detectors.scan(text, &index);
        let mut facts = Facts::scan(text, &index);
        facts.add_tests(found.tests, &found.grep);
        let mut work = Work {
            text,
            index: &index,
            signals,
            count,
            costs: HashMap::new(),
            scanned: None,
            critical: critical_lines(text, &index, &found.critical),
            facts,
            index_bytes: (cap as f64 * signals.index_share * INDEX_BYTES_PER_TOKEN) as usize,
        };
        // The step doubles each time: the listing and the lines each side
        // keeps shrink more slowly than the room when the cap is small.
        for attempt in 0..8 {
            let excerpt = Self::fit(&mut work, room, head_share)?;
            let rendered = excerpt.render(kept);
            let tokens = count(&rendered)?;
            if tokens <= cap || room <= 64 {
                return Ok((excerpt, rendered));
            }
            let over = tokens - cap + cap / 200 + 1;
            room = room.saturating_sub(over << attempt).max(64);
        }
        let excerpt = Self::fit(&mut work, room, head_share)?;
        let rendered = excerpt.render(kept);
        Ok((excerpt, rendered))
    }

    /// The excerpt whose shown lines fit `room` tokens (`head_share` of
    /// them at the head), with room kept for its error listing.
    fn fit(work: &mut Work<'t, '_>, room: u64, head_share: f64) -> Result<Self> {
        let split = |room: u64| {
            // The tail keeps at least a tenth: the last line is always shown.
            let head = ((room as f64 * head_share).round() as u64).min(room - room / 10);
            Budget {
                head,
                tail: room.saturating_sub(head),
            }
        };
        let mut excerpt = Self::lay_out(work, split(room))?;
        let hits = excerpt.describe_middle(work, room);
        let notes = excerpt.render_middle_notes();
        if !hits.is_empty() || !notes.is_empty() {
            // Make room for the error listing, the index and the notes, then
            // lay out again; the middle usually only grows, so only the newly
            // hidden lines are scanned.
            let listing: String = excerpt.errors.iter().map(|e| e.text).collect();
            let reserve =
                (work.count)(&listing)? + 12 * excerpt.errors.len() as u64 + (work.count)(&notes)?;
            excerpt = Self::lay_out(work, split(room.saturating_sub(reserve).max(32)))?;
            excerpt.describe_middle(work, room);
        }
        Ok(excerpt)
    }

    /// Fills in what the excerpt says of its hidden middle with `room`
    /// tokens for lines: the error listing, the index and the unlisted
    /// failing tests; returns the middle's error lines.
    fn describe_middle(&mut self, work: &mut Work<'t, '_>, room: u64) -> Vec<usize> {
        let (text, index) = (work.text, work.index);
        let (from, to) = self.hidden_range();
        let hits = work.hits(from, to);
        let listed = work.listed(&hits, listing_bytes(room));
        self.error_total = hits.len();
        self.errors = listed
            .iter()
            .map(|&i| ErrorLine {
                number: i + 1,
                text: error_text(text, index, i),
                critical: work.critical.binary_search(&i).is_ok(),
            })
            .collect();
        // Half the index budget for the ids of unlisted failing tests, when
        // there are any; the rest (all of it otherwise) for the index.
        let tests = work.facts.tests_in(from, to);
        self.unlisted = Unlisted::of(
            tests,
            &listed,
            work.index_bytes / 2,
            work.facts.tests_pattern(),
        );
        let ids: usize = self.unlisted.ids.iter().map(|id| id.len() + 2).sum();
        let mut shown: HashSet<&str> = HashSet::new();
        for line in self.head.iter().chain(&self.tail) {
            add_words(line.start, &mut shown);
            add_words(line.end, &mut shown);
        }
        for e in &self.errors {
            add_words(e.text, &mut shown);
        }
        for id in &self.unlisted.ids {
            add_words(id, &mut shown);
        }
        self.index = HiddenIndex::build(
            &work.facts,
            from,
            to,
            &shown,
            work.index_bytes.saturating_sub(ids),
        );
        hits
    }

    /// The index and unlisted-test lines, as [`Excerpt::render`] writes them
    /// (with a `spill://` pointer's search hint).
    fn render_middle_notes(&self) -> String {
        let mut out = String::new();
        if let Some(index) = &self.index {
            out.push_str(&index.render());
            out.push('\n');
        }
        if self.unlisted.count > 0 {
            out.push_str(
                &self
                    .unlisted
                    .render(|p| grep_hint(&Kept::Refused(String::new()), p)),
            );
            out.push('\n');
        }
        out
    }

    /// 0-based range of the hidden lines.
    fn hidden_range(&self) -> (usize, usize) {
        (self.head.len(), self.head.len() + self.hidden_lines)
    }

    fn lay_out(work: &mut Work<'t, '_>, budget: Budget) -> Result<Self> {
        let (text, index, count) = (work.text, work.index, work.count);
        let total = index.len();
        let mut tail: Vec<ShownLine<'t>> = Vec::new();
        let mut head: Vec<ShownLine<'t>> = Vec::new();
        if total == 1 {
            // One line: show its start and its end.
            let line = index.line(text, 0);
            let start = fit_prefix(line, budget.head, count)?;
            let end = fit_suffix(line.get(start.len()..).unwrap_or(""), budget.tail, count)?;
            let hidden_bytes = line.len() - start.len() - end.len();
            // Start and end meeting: the whole line, in `start`.
            tail.push(if hidden_bytes == 0 {
                whole(0, line)
            } else {
                ShownLine {
                    number: 1,
                    start,
                    hidden_bytes,
                    end,
                }
            });
        } else if total > 1 {
            let mut left = budget.tail;
            for i in (1..total).rev() {
                let line = index.line(text, i);
                let cost = work.line_cost(i)?;
                if cost <= left {
                    left -= cost;
                    tail.push(whole(i, line));
                } else {
                    if tail.is_empty() {
                        // The last line is always shown: its end, if not all of it.
                        let end = fit_suffix(line, left, count)?;
                        tail.push(ShownLine {
                            number: i + 1,
                            start: "",
                            hidden_bytes: line.len() - end.len(),
                            end,
                        });
                        left = 0;
                    }
                    break;
                }
            }
            tail.reverse();
            let first_tail = total - tail.len();
            let mut left = budget.head + left;
            for i in 0..first_tail {
                let line = index.line(text, i);
                let cost = work.line_cost(i)?;
                if cost <= left {
                    left -= cost;
                    head.push(whole(i, line));
                } else {
                    if i == 0 && left > 0 {
                        let start = fit_prefix(line, left, count)?;
                        if !start.is_empty() {
                            head.push(ShownLine {
                                number: 1,
                                start,
                                hidden_bytes: line.len() - start.len(),
                                end: "",
                            });
                        }
                    }
                    break;
                }
            }
        }
        let hidden_from = head.len();
        let hidden_to = total - tail.len();
        Ok(Self {
            total_lines: total,
            total_bytes: text.len(),
            hidden_lines: hidden_to - hidden_from,
            hidden_bytes: index.span(hidden_from, hidden_to).len(),
            head,
            tail,
            errors: Vec::new(),
            error_total: 0,
            index: None,
            unlisted: Unlisted::default(),
        })
    }

    /// The text the model sees instead of the full output.
    pub fn render(&self, kept: &Kept) -> String {
        let mut out = String::with_capacity(256);
        let lines = |n: usize| if n == 1 { "line" } else { "lines" };
        out.push_str(&format!(
            "{HEADER_OPENING}{} {}, {:.1} KB; showing the first {} and the last {} {}; {} {} hidden]\n",
            self.total_lines,
            lines(self.total_lines),
            self.total_bytes as f64 / 1000.0,
            self.head.len(),
            self.tail.len(),
            lines(self.tail.len()),
            self.hidden_lines,
            lines(self.hidden_lines),
        ));
        match kept {
            Kept::Pointer(pointer) if super::is_path_pointer(pointer) => out.push_str(&format!(
                "[full output: {pointer} — a normal readable file: print lines FIRST to LAST with sed -n 'FIRST,LASTp' '{pointer}' or search it with grep -n 'PATTERN' '{pointer}']\n"
            )),
            Kept::Pointer(pointer) => out.push_str(&format!(
                "[full output: {pointer} — page through it with read_spill (pointer, offset, limit) or search it with grep_spill (pointer, pattern)]\n"
            )),
            Kept::Refused(reason) => out.push_str(&format!(
                "{REFUSED_OPENING}{reason}; only what is shown here remains]\n"
            )),
        }
        for line in &self.head {
            push_shown(&mut out, line);
        }
        if self.hidden_lines > 0 {
            out.push_str(&format!(
                "[… {} {} hidden ({}-{}, {:.1} KB) …]\n",
                self.hidden_lines,
                lines(self.hidden_lines),
                self.head.len() + 1,
                self.head.len() + self.hidden_lines,
                self.hidden_bytes as f64 / 1000.0,
            ));
        }
        if let Some(index) = &self.index {
            out.push_str(&index.render());
            out.push('\n');
        }
        if !self.errors.is_empty() {
            out.push_str(&format!(
                "[{} hidden {} with error signals{}{}:]\n",
                self.error_total,
                lines(self.error_total),
                if self.error_total > self.errors.len() {
                    format!(", {} listed", self.errors.len())
                } else {
                    String::new()
                },
                if self.errors.iter().any(|e| e.critical) {
                    format!("; `{}` marks the critical ones", LISTED_CRITICAL.trim())
                } else {
                    String::new()
                }
            ));
            for e in &self.errors {
                let mark = if e.critical { LISTED_CRITICAL } else { "  " };
                out.push_str(&format!("{mark}{}: {}\n", e.number, e.text));
            }
        }
        if self.unlisted.count > 0 {
            out.push_str(&self.unlisted.render(|p| grep_hint(kept, p)));
            out.push('\n');
        }
        for line in &self.tail {
            push_shown(&mut out, line);
        }
        if out.ends_with('\n') {
            out.pop();
        }
        out
    }
}

/// How to search the full text for `pattern`: `grep_spill` for a
/// `spill://` pointer, `grep -nE` for a file pointer.
fn grep_hint(kept: &Kept, pattern: &str) -> String {
    match kept {
        Kept::Pointer(pointer) if super::is_path_pointer(pointer) => {
            format!("grep -nE '{pattern}' '{pointer}'")
        }
        _ => format!("grep_spill pattern '{pattern}'"),
    }
}

/// Bytes the hidden-middle listing may take with `room` tokens for lines:
/// [`CRITICAL_BYTES`], or about half the room when that is less.
fn listing_bytes(room: u64) -> usize {
    CRITICAL_BYTES.min(usize::try_from(room.saturating_mul(2)).unwrap_or(usize::MAX))
}

fn error_text<'t>(text: &'t str, index: &LineIndex, i: usize) -> &'t str {
    floor_prefix(index.line_trimmed(text, i).trim(), ERROR_LINE_BYTES)
}

fn whole(i: usize, line: &str) -> ShownLine<'_> {
    ShownLine {
        number: i + 1,
        start: line,
        hidden_bytes: 0,
        end: "",
    }
}

fn push_shown(out: &mut String, line: &ShownLine<'_>) {
    if line.hidden_bytes == 0 {
        // Whole: all in `start`, or (a single line that fits the tail) all in `end`.
        out.push_str(line.start);
        out.push_str(line.end);
        if !out.ends_with('\n') {
            out.push('\n');
        }
        return;
    }
    out.push_str(line.start);
    out.push_str(&format!(
        "[… {} bytes of line {} hidden …]",
        line.hidden_bytes, line.number
    ));
    out.push_str(line.end);
    if !line.end.ends_with('\n') {
        out.push('\n');
    }
}

/// The longest prefix of `line` (on a char boundary) costing at most `budget` tokens.
fn fit_prefix<'t>(line: &'t str, budget: u64, count: &Count<'_>) -> Result<&'t str> {
    fit(line, budget, count, floor_prefix)
}

/// The longest suffix of `line` (on a char boundary) costing at most `budget` tokens.
fn fit_suffix<'t>(line: &'t str, budget: u64, count: &Count<'_>) -> Result<&'t str> {
    fit(line, budget, count, ceil_suffix)
}

fn fit<'t>(
    line: &'t str,
    budget: u64,
    count: &Count<'_>,
    cut: fn(&'t str, usize) -> &'t str,
) -> Result<&'t str> {
    if budget == 0 || line.is_empty() {
        return Ok("");
    }
    // Start from ~4 bytes per token and correct by the measured density.
    let mut bytes = (budget as usize).saturating_mul(4).min(line.len());
    let mut best = "";
    for _ in 0..8 {
        let part = cut(line, bytes);
        let cost = count(part)?;
        if cost <= budget {
            if part.len() > best.len() {
                best = part;
            }
            if part.len() == line.len() || cost * 100 >= budget * 95 {
                break;
            }
            let grown = (part.len() as f64 * budget as f64 / cost.max(1) as f64 * 0.98) as usize;
            if grown <= part.len() {
                break;
            }
            bytes = grown.min(line.len());
        } else {
            let shrunk = (part.len() as f64 * budget as f64 / cost as f64 * 0.95) as usize;
            bytes = shrunk.min(part.len().saturating_sub(1));
            if bytes == 0 {
                break;
            }
        }
    }
    Ok(best)
}
