//! The core's layers (`../shared/ARCHITECTURE.md`, "Layers"): every
//! `crate::` path in `src/` (in `use` items, grouped or nested, and inline
//! paths; comments and strings aside) may point only at a module of its own
//! layer or of a layer below it, no stage may import another stage, and no
//! top-level modules import each other in a cycle (within a layer either).
//! The table in [`place`] mirrors the architecture, plus where the tree puts
//! what it leaves open (`store`, `provider`, `trajectory`: base; `persist`:
//! pipeline); a module missing from it fails too, so a new module must be
//! placed here.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)]

use std::fmt;
use std::fs;
use std::path::{Path, PathBuf};

/// Layers, lowest first.
const LAYERS: [&str; 6] = ["base", "contract", "stages", "planner", "pipeline", "host"];

/// The layer of a top-level module of `src/` (the file `src/<module>.rs` or
/// the folder `src/<module>/`) and, for a stage, which stage it is.
fn place(module: &str) -> Option<(usize, Option<&'static str>)> {
    let stage = |name| Some((2, Some(name)));
    match module {
        "model" | "formats" | "tokens" | "config" | "error" | "json" | "text" | "hash"
        | "redact" | "provider" | "store" | "trajectory" | "capability" => Some((0, None)),
        "stage" | "activity" => Some((1, None)),
        "spill" => stage("spill"),
        "dedup" => stage("dedup"),
        "phase" => stage("phase"),
        "optical" => stage("optical"),
        "compact" => stage("compact"),
        "plan" => Some((3, None)),
        "pipeline" | "report" | "persist" => Some((4, None)),
        "controller" | "wasm" | "lib" => Some((5, None)),
        _ => None,
    }
}

/// One `crate::<module>` reference.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Edge {
    /// 1-based line of the reference.
    line: usize,
    /// Top-level module it names.
    to: String,
}

/// An edge the layering forbids, or a module the table does not place.
struct Offence {
    file: String,
    line: usize,
    from: String,
    to: String,
    why: String,
}

impl fmt::Display for Offence {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}:{}: {} -> {} ({})",
            self.file, self.line, self.from, self.to, self.why
        )
    }
}

/// `text` with comments, string and char literals blanked (newlines kept,
/// so offsets still give the line).
fn code_only(text: &str) -> Vec<char> {
    let src: Vec<char> = text.chars().collect();
    let mut out = src.clone();
    let blank = |out: &mut Vec<char>, from: usize, to: usize| {
        for c in out.iter_mut().take(to.min(src.len())).skip(from) {
            if *c != '\n' {
                *c = ' ';
            }
        }
    };
    let at = |i: usize| src.get(i).copied().unwrap_or('\0');
    let mut i = 0;
    while i < src.len() {
        let start = i;
        match (at(i), at(i + 1)) {
            ('/', '/') => {
                while i < src.len() && at(i) != '\n' {
                    i += 1;
                }
            }
            ('/', '*') => {
                i += 2;
                let mut depth = 1;
                while i < src.len() && depth > 0 {
                    match (at(i), at(i + 1)) {
                        ('/', '*') => (depth, i) = (depth + 1, i + 2),
                        ('*', '/') => (depth, i) = (depth - 1, i + 2),
                        _ => i += 1,
                    }
                }
            }
            ('r', '#') | ('r', '"') if !ident_char(at(i.wrapping_sub(1))) => {
                let mut hashes = 0;
                i += 1;
                while at(i) == '#' {
                    hashes += 1;
                    i += 1;
                }
                if at(i) != '"' {
                    continue;
                }
                i += 1;
                let close: Vec<char> = std::iter::once('"')
                    .chain(std::iter::repeat('#').take(hashes))
                    .collect();
                while i < src.len() && src.get(i..i + close.len()) != Some(&close[..]) {
                    i += 1;
                }
                i += close.len();
            }
            ('"', _) => {
                i += 1;
                while i < src.len() && at(i) != '"' {
                    i += if at(i) == '\\' { 2 } else { 1 };
                }
                i += 1;
            }
            ('\'', '\\') => {
                i += 2;
                while i < src.len() && at(i) != '\'' {
                    i += 1;
                }
                i += 1;
            }
            ('\'', _) if at(i + 2) == '\'' => i += 3,
            _ => {
                i += 1;
                continue;
            }
        }
        blank(&mut out, start, i);
    }
    out
}

fn ident_char(c: char) -> bool {
    c.is_alphanumeric() || c == '_'
}

/// Every top-level module named by a `crate::` path in `text`: in `use`
/// items (grouped and nested ones too) and inline paths.
fn edges(text: &str) -> Vec<Edge> {
    let code = code_only(text);
    let line_of = |at: usize| 1 + code.iter().take(at).filter(|&&c| c == '\n').count();
    let mut out = Vec::new();
    let needle: Vec<char> = "crate::".chars().collect();
    let mut i = 0;
    while i + needle.len() <= code.len() {
        let before = i.checked_sub(1).and_then(|b| code.get(b)).copied();
        let before = before.unwrap_or(' ');
        if code.get(i..i + needle.len()) != Some(&needle[..]) || ident_char(before) || before == '$'
        {
            i += 1;
            continue;
        }
        i += needle.len();
        let mut names = Vec::new();
        heads(&code, &mut i, &mut names);
        for (at, name) in names {
            if name != "self" {
                out.push(Edge {
                    line: line_of(at),
                    to: name,
                });
            }
        }
    }
    out
}

/// Reads a use tree at `*i` (just after `crate::`) and pushes the first
/// segment of each path it stands for, with its offset.
fn heads(code: &[char], i: &mut usize, names: &mut Vec<(usize, String)>) {
    skip_space(code, i);
    if code.get(*i) != Some(&'{') {
        let start = *i;
        while code.get(*i).copied().is_some_and(ident_char) {
            *i += 1;
        }
        if *i > start {
            let name = code.get(start..*i).unwrap_or_default();
            names.push((start, name.iter().collect()));
        }
        return;
    }
    *i += 1;
    loop {
        skip_space(code, i);
        match code.get(*i) {
            None => return,
            Some('}') => {
                *i += 1;
                return;
            }
            Some(',') => *i += 1,
            Some(_) => {
                heads(code, i, names);
                // Skip the rest of this item (`::x::{y, z}`, `as name`).
                let mut depth = 0;
                while let Some(&c) = code.get(*i) {
                    match c {
                        '{' => depth += 1,
                        '}' if depth == 0 => break,
                        '}' => depth -= 1,
                        ',' if depth == 0 => break,
                        _ => {}
                    }
                    *i += 1;
                }
            }
        }
    }
}

fn skip_space(code: &[char], i: &mut usize) {
    while code.get(*i).is_some_and(|c| c.is_whitespace()) {
        *i += 1;
    }
}

/// The top-level module a file under `src/` belongs to (`lib` for `src/lib.rs`).
fn module_of(relative: &Path) -> String {
    let first = relative
        .components()
        .next()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .unwrap_or_default();
    first.trim_end_matches(".rs").to_string()
}

/// The forbidden edges of the files given as (path under `src/`, text).
fn offences(files: &[(PathBuf, String)]) -> Vec<Offence> {
    let mut out = Vec::new();
    for (path, text) in files {
        let from = module_of(path);
        let file = format!("src/{}", path.display());
        let offence = |line, to: &str, why: String| Offence {
            file: file.clone(),
            line,
            from: from.clone(),
            to: to.to_string(),
            why,
        };
        let Some((from_layer, from_stage)) = place(&from) else {
            out.push(offence(1, "?", format!("module `{from}` has no layer")));
            continue;
        };
        for edge in edges(text) {
            if edge.to == from {
                continue;
            }
            let Some((to_layer, to_stage)) = place(&edge.to) else {
                let why = if edge.to.starts_with(char::is_uppercase) {
                    "a crate-root re-export: name its module".to_string()
                } else {
                    format!("module `{}` has no layer", edge.to)
                };
                out.push(offence(edge.line, &edge.to, why));
                continue;
            };
            if to_layer > from_layer {
                let why = format!("{} -> {}", LAYERS[from_layer], LAYERS[to_layer]);
                out.push(offence(edge.line, &edge.to, why));
            } else if let (Some(a), Some(b)) = (from_stage, to_stage) {
                out.push(offence(
                    edge.line,
                    &edge.to,
                    format!("stage {a} -> stage {b}"),
                ));
            }
        }
    }
    out
}

/// Every `.rs` file under `dir`, as (path relative to `root`, text), sorted.
fn sources(root: &Path, dir: &Path, out: &mut Vec<(PathBuf, String)>) {
    let mut entries: Vec<_> = fs::read_dir(dir)
        .expect("read src/")
        .map(|e| e.expect("dir entry").path())
        .collect();
    entries.sort();
    for path in entries {
        if path.is_dir() {
            sources(root, &path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            let text = fs::read_to_string(&path).expect("read source");
            let relative = path.strip_prefix(root).expect("under src/").to_path_buf();
            out.push((relative, text));
        }
    }
}

#[test]
fn src_imports_only_downward() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    sources(&root, &root, &mut files);
    assert!(files.len() > 20, "found only {} files in src/", files.len());
    let found = offences(&files);
    let list: Vec<String> = found.iter().map(ToString::to_string).collect();
    assert!(
        list.is_empty(),
        "{} forbidden import(s) (layers: {}):\n{}",
        list.len(),
        LAYERS.join(" < "),
        list.join("\n")
    );
}

/// A cycle of top-level modules importing each other (within a layer too,
/// e.g. among the base modules), as `a -> b -> a`, if there is one.
fn cycle(files: &[(PathBuf, String)]) -> Option<String> {
    use std::collections::{BTreeMap, BTreeSet};
    let mut graph: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for (path, text) in files {
        let from = module_of(path);
        let to = graph.entry(from.clone()).or_default();
        to.extend(edges(text).into_iter().map(|e| e.to).filter(|m| *m != from));
    }
    // Depth-first search; a module met again while on the path closes a cycle.
    fn visit(
        at: &str,
        graph: &BTreeMap<String, BTreeSet<String>>,
        path: &mut Vec<String>,
        done: &mut BTreeSet<String>,
    ) -> Option<String> {
        if let Some(start) = path.iter().position(|m| m == at) {
            let mut ring = path[start..].to_vec();
            ring.push(at.to_string());
            return Some(ring.join(" -> "));
        }
        if !done.insert(at.to_string()) {
            return None;
        }
        path.push(at.to_string());
        for next in graph.get(at).into_iter().flatten() {
            if let Some(found) = visit(next, graph, path, done) {
                return Some(found);
            }
        }
        path.pop();
        None
    }
    let mut done = BTreeSet::new();
    graph
        .keys()
        .find_map(|m| visit(m, &graph, &mut Vec::new(), &mut done))
}

#[test]
fn src_has_no_module_cycle() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    sources(&root, &root, &mut files);
    assert_eq!(cycle(&files), None);
}

#[test]
fn catches_a_cycle_within_a_layer() {
    let file = |name: &str, text: &str| (PathBuf::from(name), text.to_string());
    let files = [
        file("config/mod.rs", "use crate::formats::FormatName;"),
        file("formats/mod.rs", "use crate::tokens::count;"),
        file("tokens.rs", "fn f() { crate::config::Config::default(); }"),
        file("model.rs", "use crate::error::Result;"),
    ];
    assert!(offences(&files).is_empty(), "all base: no layer is crossed");
    assert_eq!(
        cycle(&files).as_deref(),
        Some("config -> formats -> tokens -> config")
    );
    assert_eq!(cycle(&files[1..]), None);
}

fn check(file: &str, text: &str) -> Vec<String> {
    offences(&[(PathBuf::from(file), text.to_string())])
        .iter()
        .map(ToString::to_string)
        .collect()
}

#[test]
fn catches_an_upward_edge() {
    let text = "use crate::model::Conversation;\n\nfn f() { crate::pipeline::run(); }\n";
    assert_eq!(
        check("tokens.rs", text),
        ["src/tokens.rs:3: tokens -> pipeline (base -> pipeline)"]
    );
}

#[test]
fn catches_a_stage_to_stage_edge() {
    let text = "use crate::stage::Stage;\nuse crate::optical::Snapshot;\n";
    assert_eq!(
        check("dedup.rs", text),
        ["src/dedup.rs:2: dedup -> optical (stage dedup -> stage optical)"]
    );
    // Within one stage, and from the planner down to a stage, is fine.
    assert!(check("optical/layout.rs", "use crate::optical::budget;").is_empty());
    assert!(check("plan/mod.rs", "use crate::spill::Spill;").is_empty());
}

#[test]
fn parses_grouped_and_nested_uses() {
    let text = "use crate::{\n    model::{Conversation, Role},\n    self,\n    plan::{self, demotion::{x, y}},\n    pipeline as p,\n};\n";
    let found: Vec<(usize, String)> = edges(text).into_iter().map(|e| (e.line, e.to)).collect();
    assert_eq!(
        found,
        [
            (2, "model".to_string()),
            (4, "plan".to_string()),
            (5, "pipeline".to_string())
        ]
    );
    assert_eq!(
        check("formats/mod.rs", text),
        [
            "src/formats/mod.rs:4: formats -> plan (base -> planner)",
            "src/formats/mod.rs:5: formats -> pipeline (base -> pipeline)"
        ]
    );
}

#[test]
fn ignores_comments_strings_and_unknown_paths_are_refused() {
    let text = "// crate::pipeline\n/// [`crate::plan`]\nconst S: &str = \"crate::wasm\";\nconst R: &str = r#\"crate::wasm\"#;\nfn f(c: char) -> bool { c == '\"' }\nuse crate::nowhere;\nuse crate::Error;\n";
    assert_eq!(
        check("model.rs", text),
        [
            "src/model.rs:6: model -> nowhere (module `nowhere` has no layer)",
            "src/model.rs:7: model -> Error (a crate-root re-export: name its module)"
        ]
    );
    assert_eq!(
        check("extra.rs", ""),
        ["src/extra.rs:1: extra -> ? (module `extra` has no layer)"]
    );
}
