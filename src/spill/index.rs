//! [`HiddenIndex`]: one line naming what the hidden middle of an excerpt
//! holds — the file paths and the definitions (`def`, `class`, `fn`,
//! `function`) of its lines with where they occur — and [`Unlisted`], the
//! failing tests the error listing left out, counted and located. Both fit a
//! byte budget, so a fact is often visible outright and otherwise one
//! `read_spill` offset or `grep_spill` pattern away.

use std::collections::{HashMap, HashSet};

use super::lines::LineIndex;
use crate::activity::check::failing_test_id;

/// Most facts [`Facts::scan`] keeps from one text (bounds the work of a
/// multi-megabyte listing; the index names a few dozen at most).
const MAX_FACTS: usize = 20_000;

/// Extensions a path without `/` must end with to count as a file name.
const FILE_EXTENSIONS: [&str; 24] = [
    "py", "pyi", "pyx", "rs", "js", "mjs", "ts", "tsx", "json", "toml", "yaml", "yml", "cfg",
    "ini", "txt", "md", "rst", "c", "h", "cpp", "go", "java", "rb", "sh",
];

/// What a fact of a hidden line is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum FactKind {
    /// A file path (`a/b.py`, `dir/sub/`, `setup.cfg`).
    Path,
    /// A function defined on the line (`def f`, `fn f`, `function f`).
    Function,
    /// A class defined on the line.
    Class,
    /// A place in a file, `path:line` (`grep -n`, pytest's frames).
    Location,
}

/// A fact found on one line of a text.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Fact<'t> {
    /// 0-based line.
    line: usize,
    kind: FactKind,
    label: &'t str,
}

/// Every fact of a text, in line order, and its failing-test lines: found
/// once per text, shared by every layout attempt.
#[derive(Debug, Clone, Default)]
pub struct Facts<'t> {
    facts: Vec<Fact<'t>>,
    /// 0-based lines reporting a failing test, with the test's id.
    tests: Vec<(usize, &'t str)>,
    /// The pattern that finds those lines (`grep -E`, `grep_spill`); empty
    /// for [`FAILING_TEST_PATTERN`].
    grep: String,
    /// The leading number of each line that has one (`cat -n`, `grep -n`).
    numbers: HashMap<usize, usize>,
}

impl<'t> Facts<'t> {
    /// Scans every line of `text` (paths and definitions up to [`MAX_FACTS`]).
    pub fn scan(text: &'t str, index: &LineIndex) -> Self {
        let mut out = Self::default();
        for i in 0..index.len() {
            let line = index.line_trimmed(text, i);
            if let Some(id) = failing_test_id(line) {
                out.tests.push((i, id));
            }
            let (number, body) = leading_number(line);
            if let Some(n) = number {
                out.numbers.insert(i, n);
            }
            if out.facts.len() >= MAX_FACTS {
                continue;
            }
            if let Some((kind, label)) = definition(body) {
                out.facts.push(Fact {
                    line: i,
                    kind,
                    label,
                });
            }
            for label in paths(body) {
                out.facts.push(Fact {
                    line: i,
                    kind: FactKind::Path,
                    label,
                });
                if let Some(location) = location(body, label) {
                    out.facts.push(Fact {
                        line: i,
                        kind: FactKind::Location,
                        label: location,
                    });
                }
            }
        }
        out
    }

    /// Adds the failing tests the tools' detectors found (0-based line, id;
    /// in line order) and the pattern that finds their lines.
    pub fn add_tests(&mut self, tests: Vec<(usize, &'t str)>, grep: &str) {
        if tests.is_empty() {
            return;
        }
        self.grep = if self.tests.is_empty() {
            grep.to_string()
        } else {
            format!("{FAILING_TEST_PATTERN}|{grep}")
        };
        self.tests.extend(tests);
        self.tests.sort_by_key(|(line, _)| *line);
        self.tests.dedup_by_key(|(line, _)| *line);
    }

    /// The pattern that finds every failing test's line.
    pub fn tests_pattern(&self) -> &str {
        if self.grep.is_empty() {
            FAILING_TEST_PATTERN
        } else {
            &self.grep
        }
    }

    /// The failing tests on 0-based lines `from..to`.
    pub fn tests_in(&self, from: usize, to: usize) -> &[(usize, &'t str)] {
        let a = self.tests.partition_point(|(l, _)| *l < from);
        let b = self.tests.partition_point(|(l, _)| *l < to);
        self.tests.get(a..b).unwrap_or(&[])
    }

    fn facts_in(&self, from: usize, to: usize) -> &[Fact<'t>] {
        let a = self.facts.partition_point(|f| f.line < from);
        let b = self.facts.partition_point(|f| f.line < to);
        self.facts.get(a..b).unwrap_or(&[])
    }
}

/// A named fact of the hidden middle and where it occurs (numbers as the
/// index shows them: see [`HiddenIndex::numbered`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry<'t> {
    /// What it is.
    pub kind: FactKind,
    /// The path or the defined name, as the text writes it.
    pub label: &'t str,
    /// First line holding it.
    pub first: usize,
    /// Last line holding it.
    pub last: usize,
}

/// The index of a hidden middle.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HiddenIndex<'t> {
    /// 1-based first and last hidden lines.
    pub lines: (usize, usize),
    /// When the hidden lines carry their own consecutive numbers (`cat -n`):
    /// the first and last of them; the entries' lines are then those numbers.
    pub numbered: Option<(usize, usize)>,
    /// The facts named: paths by first line, then definitions by line.
    pub entries: Vec<Entry<'t>>,
    /// Distinct facts of the hidden lines not named (the budget, or already
    /// visible outside the middle).
    pub left_out: usize,
}

impl<'t> HiddenIndex<'t> {
    /// The index of 0-based lines `from..to` within `max_bytes` of rendering;
    /// facts whose label `shown` holds are left out. `None` when nothing fits.
    pub fn build(
        facts: &Facts<'t>,
        from: usize,
        to: usize,
        shown: &HashSet<&str>,
        max_bytes: usize,
    ) -> Option<Self> {
        if from >= to || max_bytes == 0 {
            return None;
        }
        let numbered = match (facts.numbers.get(&from), facts.numbers.get(&(to - 1))) {
            (Some(&a), Some(&b)) if b >= a && b - a == to - 1 - from => Some((a, b)),
            _ => None,
        };
        let number = |line: usize| match numbered {
            Some((a, _)) => a + line - from,
            None => line + 1,
        };
        // Distinct facts: (kind, label) → (first, last, count), in order of first line.
        let mut seen: HashMap<(FactKind, &str), usize> = HashMap::new();
        let mut distinct: Vec<(Entry<'t>, usize)> = Vec::new();
        for f in facts.facts_in(from, to) {
            match seen.get(&(f.kind, f.label)) {
                Some(&k) => {
                    if let Some((e, count)) = distinct.get_mut(k) {
                        e.last = number(f.line);
                        *count += 1;
                    }
                }
                None => {
                    seen.insert((f.kind, f.label), distinct.len());
                    let n = number(f.line);
                    distinct.push((
                        Entry {
                            kind: f.kind,
                            label: f.label,
                            first: n,
                            last: n,
                        },
                        1,
                    ));
                }
            }
        }
        let total = distinct.len();
        // Paths most mentioned first, definitions and locations in line
        // order; the three taken in turn until the budget is spent.
        let (mut paths, rest): (Vec<_>, Vec<_>) = distinct
            .into_iter()
            .filter(|(e, _)| !shown.contains(e.label))
            .partition(|(e, _)| e.kind == FactKind::Path);
        let (locations, defs): (Vec<_>, Vec<_>) = rest
            .into_iter()
            .partition(|(e, _)| e.kind == FactKind::Location);
        paths.sort_by(|(a, n), (b, m)| m.cmp(n).then(a.first.cmp(&b.first)));
        let mut queues = [paths.into_iter(), defs.into_iter(), locations.into_iter()];
        let mut entries = Vec::new();
        // The opening, `]` and room for the `; +N more` of what is left out.
        let mut used = opening(from, to, numbered).len() + 1 + format!("; +{total} more").len();
        let mut open = [true; 3];
        while open.iter().any(|o| *o) {
            for (queue, open) in queues.iter_mut().zip(open.iter_mut()) {
                if !*open {
                    continue;
                }
                match queue.next() {
                    Some((e, _)) => {
                        let bytes = entry_bytes(&e);
                        if used + bytes <= max_bytes {
                            used += bytes;
                            entries.push(e);
                        }
                    }
                    None => *open = false,
                }
            }
        }
        if entries.is_empty() {
            return None;
        }
        // Paths, then definitions and locations, each by first line.
        entries.sort_by(|a, b| {
            (a.kind != FactKind::Path)
                .cmp(&(b.kind != FactKind::Path))
                .then(a.first.cmp(&b.first))
        });
        Some(Self {
            lines: (from + 1, to),
            numbered,
            left_out: total - entries.len(),
            entries,
        })
    }

    /// The index line (no line end).
    pub fn render(&self) -> String {
        let (from, to) = self.lines;
        let mut out = opening(from - 1, to, self.numbered);
        for (k, e) in self.entries.iter().enumerate() {
            if k > 0 {
                out.push_str(", ");
            }
            push_entry(&mut out, e);
        }
        if self.left_out > 0 {
            out.push_str(&format!("; +{} more", self.left_out));
        }
        out.push(']');
        out
    }
}

/// `[lines 41-380 hold: ` or `[lines 41-380 (numbered 38-377) hold: `.
fn opening(from: usize, to: usize, numbered: Option<(usize, usize)>) -> String {
    match numbered {
        Some((a, b)) => format!("[lines {}-{to} (numbered {a}-{b}) hold: ", from + 1),
        None => format!("[lines {}-{to} hold: ", from + 1),
    }
}

fn push_entry(out: &mut String, e: &Entry<'_>) {
    match e.kind {
        FactKind::Path => out.push_str(e.label),
        // Its own line number says where in the file; the index, where in the output.
        FactKind::Location => out.push_str(e.label),
        FactKind::Function => {
            out.push_str(e.label);
            out.push_str("()");
        }
        FactKind::Class => {
            out.push_str("class ");
            out.push_str(e.label);
        }
    }
    if e.first == e.last {
        out.push_str(&format!(" {}", e.first));
    } else {
        out.push_str(&format!(" {}-{}", e.first, e.last));
    }
}

/// Bytes an entry adds to the index line, its separator included.
fn entry_bytes(e: &Entry<'_>) -> usize {
    let mut s = String::new();
    push_entry(&mut s, e);
    s.len() + 2
}

/// Adds the words of `text` a fact's label could equal (path tokens and
/// the identifiers within them) to `set`.
pub fn add_words<'a>(text: &'a str, set: &mut HashSet<&'a str>) {
    for token in
        text.split(|c: char| !(c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '/' | '-')))
    {
        let token = token.trim_end_matches(['.', '-']);
        if token.len() < 2 {
            continue;
        }
        set.insert(token);
        if token.contains(['.', '/', '-']) {
            set.extend(
                token
                    .split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
                    .filter(|w| w.len() >= 2),
            );
        }
    }
}

/// Failing tests of the hidden middle the error listing did not show.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Unlisted<'t> {
    /// How many.
    pub count: usize,
    /// 1-based first and last line of them.
    pub lines: (usize, usize),
    /// The first of their ids, within the budget.
    pub ids: Vec<&'t str>,
    /// The pattern that finds their lines.
    pub pattern: String,
}

impl<'t> Unlisted<'t> {
    /// The failing tests of `hidden` (0-based line, id) not on `listed`
    /// lines, with as many ids as fit in `max_bytes`; `pattern` finds them.
    pub fn of(
        hidden: &[(usize, &'t str)],
        listed: &[usize],
        max_bytes: usize,
        pattern: &str,
    ) -> Self {
        let left: Vec<&(usize, &str)> = hidden
            .iter()
            .filter(|(l, _)| listed.binary_search(l).is_err())
            .collect();
        let (Some(first), Some(last)) = (left.first(), left.last()) else {
            return Self::default();
        };
        let mut ids = Vec::new();
        let mut used = 0;
        let mut distinct = HashSet::new();
        for (_, id) in &left {
            if used + id.len() + 2 > max_bytes {
                break;
            }
            if distinct.insert(*id) {
                used += id.len() + 2;
                ids.push(*id);
            }
        }
        Self {
            count: left.len(),
            lines: (first.0 + 1, last.0 + 1),
            ids,
            pattern: pattern.to_string(),
        }
    }

    /// The note line (no line end); `search` is how to search the full text
    /// for a pattern, given the pattern.
    pub fn render(&self, search: impl Fn(&str) -> String) -> String {
        let (a, b) = self.lines;
        let mut out = format!(
            "[… {} more failing test{} hidden, lines {a}-{b}: {}",
            self.count,
            if self.count == 1 { "" } else { "s" },
            search(&self.pattern)
        );
        if !self.ids.is_empty() {
            out.push_str("; ");
            out.push_str(&self.ids.join(", "));
            if self.ids.len() < self.count {
                out.push_str(", …");
            }
        }
        out.push(']');
        out
    }
}

/// A pattern (the spill tools' dialect, and `grep -E`) matching every
/// failing-test line [`failing_test_id`] reads.
pub const FAILING_TEST_PATTERN: &str = "FAILED|FAIL:|ERROR";

/// The line's leading number (`   12\t…`, `12:…`) and the rest after it.
pub(super) fn leading_number(line: &str) -> (Option<usize>, &str) {
    let t = line.trim_start_matches(' ');
    let digits = t.bytes().take_while(u8::is_ascii_digit).count();
    let rest = t.get(digits..).unwrap_or("");
    match rest.strip_prefix('\t').or_else(|| rest.strip_prefix(':')) {
        Some(body) if digits > 0 && digits <= 9 => {
            (t.get(..digits).and_then(|d| d.parse().ok()), body)
        }
        _ => (None, line),
    }
}

/// The function or class a line of code defines.
pub(super) fn definition(body: &str) -> Option<(FactKind, &str)> {
    let mut t = body.trim_start();
    for prefix in ["pub(crate) ", "pub ", "export ", "async ", "static "] {
        t = t.strip_prefix(prefix).unwrap_or(t);
    }
    let (kind, rest) = [
        ("def ", FactKind::Function),
        ("fn ", FactKind::Function),
        ("function ", FactKind::Function),
        ("class ", FactKind::Class),
    ]
    .into_iter()
    .find_map(|(word, kind)| t.strip_prefix(word).map(|rest| (kind, rest)))?;
    let end = rest
        .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .unwrap_or(rest.len());
    let name = rest.get(..end)?;
    // A name, then what opens a definition: a parameter list (or generics);
    // a class also `:` or `{` (not prose such as "function back to").
    let next = rest.get(end..)?.trim_start_matches(' ').chars().next();
    let opens = matches!(next, Some('(' | '<'))
        || (kind == FactKind::Class && matches!(next, Some(':' | '{')));
    (name.len() >= 2 && !name.starts_with(|c: char| c.is_ascii_digit()) && opens)
        .then_some((kind, name))
}

/// `path:N` when the path token `path` (a slice of `body`) is followed by
/// `:` and a line number.
fn location<'t>(body: &'t str, path: &'t str) -> Option<&'t str> {
    let start = (path.as_ptr() as usize).checked_sub(body.as_ptr() as usize)?;
    let after = body.get(start + path.len()..)?.strip_prefix(':')?;
    let digits = after.bytes().take_while(u8::is_ascii_digit).count();
    (1..=7)
        .contains(&digits)
        .then(|| body.get(start..start + path.len() + 1 + digits))?
}

/// The file paths of a line: tokens of `[A-Za-z0-9_./-]` holding a `/` and
/// ending with a file name (`name.ext`) or `/`, or a file name with a known
/// extension.
fn paths(body: &str) -> impl Iterator<Item = &str> {
    body.split(|c: char| !(c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '/' | '-')))
        .map(|t| t.trim_end_matches(['.', '-']))
        .filter(|t| is_path(t))
}

fn is_path(t: &str) -> bool {
    if t.len() < 4 || t.starts_with("//") || !t.starts_with(|c: char| c != '-') {
        return false;
    }
    let file = t.rsplit('/').next().unwrap_or(t);
    let named = file.rsplit_once('.').is_some_and(|(name, ext)| {
        !name.is_empty()
            && name.bytes().any(|b| b.is_ascii_alphabetic())
            && (1..=8).contains(&ext.len())
            && ext.bytes().all(|b| b.is_ascii_alphanumeric())
            && ext.bytes().any(|b| b.is_ascii_alphabetic())
    });
    if t.contains('/') {
        let segments = t.split('/').filter(|s| !s.is_empty()).count();
        (named || (t.ends_with('/') && segments >= 1) || segments >= 3)
            && t.bytes().any(|b| b.is_ascii_alphabetic())
    } else {
        named
            && file
                .rsplit_once('.')
                .is_some_and(|(_, ext)| FILE_EXTENSIONS.contains(&ext))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_give_their_paths_and_definitions() {
        let p = |s| paths(s).collect::<Vec<_>>();
        assert_eq!(
            p(r#"  File "/testbed/pylint/lint/pylinter.py", line 661, in _check_files"#),
            ["/testbed/pylint/lint/pylinter.py"]
        );
        assert_eq!(p("tests/t.py::T::test_a FAILED"), ["tests/t.py"]);
        assert_eq!(
            p("__init__.py  eggs  models.py and/or self.refit np.inf"),
            ["__init__.py", "models.py"]
        );
        assert_eq!(
            p("see http://httpbin.org/digest and lib/matplotlib/tests/"),
            ["lib/matplotlib/tests/"]
        );
        assert_eq!(
            definition("    def test_identify_format(self, registry):"),
            Some((FactKind::Function, "test_identify_format"))
        );
        assert_eq!(
            definition("class Article(models.Model):"),
            Some((FactKind::Class, "Article"))
        );
        assert_eq!(
            definition("pub fn build<'t>(text: &str)"),
            Some((FactKind::Function, "build"))
        );
        assert_eq!(definition("# the class of things"), None);
        assert_eq!(definition("function back to `warnings.warn`"), None);
        assert_eq!(
            definition("function render(a) {"),
            Some((FactKind::Function, "render"))
        );
        let line = "lib/matplotlib/axis.py:838: in clear";
        assert_eq!(
            location(line, paths(line).next().unwrap()),
            Some("lib/matplotlib/axis.py:838")
        );
        assert_eq!(location("a/b.py and", "a/b.py"), None);
        assert_eq!(definition("define x"), None);
        assert_eq!(
            leading_number("   337\tdef kahane_simplify(expression):"),
            (Some(337), "def kahane_simplify(expression):")
        );
        assert_eq!(leading_number("12:def f():"), (Some(12), "def f():"));
        assert_eq!(leading_number("a/b.py:12:def f():").0, None);
    }
}
