//! The core's layers (`../shared/ARCHITECTURE.md`, "Layers"): every
//! `crate::` path in `src/` (in `use` items, grouped or nested, and inline
//! paths; comments and strings aside) may point only at a module of its own
//! layer or of a layer below it, no stage may import another stage nor the
//! planner import a stage (stages propose through the contract), and no
//! top-level modules import each other in a cycle (within a layer either).
//! Inside the base layer the modules are ordered in tiers ([`BASE_TIERS`]:
//! the order the tree has, which is acyclic), and no folder holds an import
//! circle among its files ([`folder_cycles`]: `super::`, `self::`, child and
//! `crate::<folder>::` paths).
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

/// The planner's layer: it imports no stage (it reads what they propose
/// through the contract), as no stage imports it.
const PLANNER: usize = 3;

/// The base layer's modules in tiers, lowest first: a base module imports
/// only from a lower tier (the leaves; hashing, JSON and the capability
/// table; the readers and stores; the options and the trajectory schema,
/// which name formats and the store; token counting, which reads the options).
const BASE_TIERS: [&[&str]; 5] = [
    &["error", "model", "provider", "text"],
    &["hash", "json", "capability"],
    &["redact", "store", "formats"],
    &["config", "trajectory"],
    &["tokens"],
];

/// The tier of a base module in [`BASE_TIERS`].
fn base_tier(module: &str) -> Option<usize> {
    BASE_TIERS.iter().position(|tier| tier.contains(&module))
}

/// The layer of a top-level module of `src/` (the file `src/<module>.rs` or
/// the folder `src/<module>/`) and, for a stage, which stage it is.
fn place(module: &str) -> Option<(usize, Option<&'static str>)> {
    let stage = |name| Some((2, Some(name)));
    if base_tier(module).is_some() {
        return Some((0, None));
    }
    match module {
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

/// Every `crate::` path in `text` (in `use` items, grouped and nested ones
/// too, and inline paths), as its 1-based line and its segments.
fn crate_paths(text: &str) -> Vec<(usize, Vec<String>)> {
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
        let mut paths = Vec::new();
        tree(&code, &mut i, &[], None, &mut paths);
        out.extend(paths.into_iter().map(|(at, path)| (line_of(at), path)));
    }
    out
}

/// Every top-level module named by a `crate::` path in `text` ([`crate_paths`]).
fn edges(text: &str) -> Vec<Edge> {
    let mut paths = crate_paths(text);
    // The first segment of each path, once per place (`model::{A, B}` names `model` once).
    paths.dedup_by(|a, b| a.0 == b.0 && a.1.first() == b.1.first());
    paths
        .into_iter()
        .filter_map(|(line, path)| {
            let to = path.into_iter().next()?;
            Some(Edge { line, to })
        })
        .collect()
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
            } else if let (Some(a), Some(b)) = (base_tier(&from), base_tier(&edge.to)) {
                if b >= a {
                    let why = format!("base tier {a} -> base tier {b}");
                    out.push(offence(edge.line, &edge.to, why));
                }
            } else if let (Some(a), Some(b)) = (from_stage, to_stage) {
                out.push(offence(
                    edge.line,
                    &edge.to,
                    format!("stage {a} -> stage {b}"),
                ));
            } else if let (PLANNER, Some(b)) = (from_layer, to_stage) {
                out.push(offence(
                    edge.line,
                    &edge.to,
                    format!("planner -> stage {b}: it reads the contract's proposals"),
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

/// The paths of the host files (`wasm/`, `controller.rs`) that reach a
/// stage other than through its host API (`crate::<stage>::api`) or reach
/// the contract's `stage` or the planner at all: a host goes through the
/// pipeline or through the named API of the stage it asks for.
fn host_offences(files: &[(PathBuf, String)]) -> Vec<String> {
    let mut out = Vec::new();
    for (path, text) in files {
        if !matches!(module_of(path).as_str(), "wasm" | "controller") {
            continue;
        }
        for (line, segments) in crate_paths(text) {
            let Some(first) = segments.first() else {
                continue;
            };
            let through_api = segments.get(1).is_some_and(|s| s == "api");
            let why = match place(first) {
                Some((2, Some(_))) if !through_api => "a stage outside its `api`",
                Some((1 | 3, _)) if first == "stage" || first == "plan" => {
                    "the contract or the planner: go through the pipeline"
                }
                _ => continue,
            };
            out.push(format!(
                "src/{}:{line}: crate::{} ({why})",
                path.display(),
                segments.join("::")
            ));
        }
    }
    out
}

#[test]
fn hosts_reach_stages_only_through_their_api() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    sources(&root, &root, &mut files);
    let hosts = files
        .iter()
        .filter(|(p, _)| matches!(module_of(p).as_str(), "wasm" | "controller"))
        .count();
    assert!(hosts > 5, "found only {hosts} host files");
    let found = host_offences(&files);
    assert!(found.is_empty(), "{}", found.join("\n"));
}

#[test]
fn catches_a_host_reaching_past_a_stage_api() {
    let text = "use crate::spill::api::{self, spill_text};\nuse crate::compact::{api, adopt_summary};\nfn f() { crate::optical::render(); crate::plan::commit(); }\nuse crate::store::MemoryStore;\n";
    let found = host_offences(&[(PathBuf::from("wasm/x.rs"), text.to_string())]);
    assert_eq!(
        found,
        [
            "src/wasm/x.rs:2: crate::compact::adopt_summary (a stage outside its `api`)",
            "src/wasm/x.rs:3: crate::optical::render (a stage outside its `api`)",
            "src/wasm/x.rs:3: crate::plan::commit (the contract or the planner: go through the pipeline)",
        ]
    );
    let inside = host_offences(&[(PathBuf::from("pipeline.rs"), text.to_string())]);
    assert!(inside.is_empty(), "only hosts are held to it");
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
        file("json/mod.rs", "use crate::error::Result;"),
    ];
    // All base: no layer is crossed, only the base tiers (formats sits below tokens).
    let found: Vec<String> = offences(&files).iter().map(ToString::to_string).collect();
    assert_eq!(
        found,
        ["src/formats/mod.rs:1: formats -> tokens (base tier 2 -> base tier 4)"]
    );
    assert_eq!(
        cycle(&files).as_deref(),
        Some("config -> formats -> tokens -> config")
    );
    assert_eq!(cycle(&files[1..]), None);
}

#[test]
fn catches_a_base_edge_against_the_tiers() {
    // Down the tiers is fine: tokens reads the options, the options name formats and the store.
    assert!(check("tokens.rs", "use crate::config::Config;").is_empty());
    assert!(check("config/mod.rs", "use crate::{formats::FormatName, store};").is_empty());
    assert_eq!(
        check("store/mod.rs", "use crate::config::Config;"),
        ["src/store/mod.rs:1: store -> config (base tier 2 -> base tier 3)"]
    );
    // Within one tier too: two modules of a tier never import each other.
    assert_eq!(
        check("formats/mod.rs", "\nfn f() { crate::store::pointer(); }"),
        ["src/formats/mod.rs:2: formats -> store (base tier 2 -> base tier 2)"]
    );
    // Every base module is in exactly one tier.
    let all: Vec<&str> = BASE_TIERS.iter().flat_map(|t| t.iter().copied()).collect();
    let distinct: std::collections::BTreeSet<&str> = all.iter().copied().collect();
    assert_eq!(all.len(), distinct.len(), "{all:?}");
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
    // Within one stage is fine.
    assert!(check("optical/layout.rs", "use crate::optical::budget;").is_empty());
}

#[test]
fn catches_a_planner_to_stage_edge() {
    let text = "use crate::stage::Proposal;
use crate::spill::Spill;
";
    assert_eq!(
        check("plan/mod.rs", text),
        ["src/plan/mod.rs:2: plan -> spill (planner -> stage spill: it reads the contract's proposals)"]
    );
    // The stages cannot reach the planner either: it is a layer above them.
    assert_eq!(
        check(
            "compact/mod.rs",
            "use crate::plan::commit;
"
        ),
        ["src/compact/mod.rs:1: compact -> plan (stages -> planner)"]
    );
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

/// A module path under `src/`: `compact/summary.rs` is `compact::summary`,
/// `formats/convert/mod.rs` is `formats::convert`, `lib.rs` the crate root.
fn module_path(relative: &Path) -> Vec<String> {
    let mut out: Vec<String> = relative
        .with_extension("")
        .components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect();
    if matches!(out.last().map(String::as_str), Some("mod" | "lib")) {
        out.pop();
    }
    out
}

/// The paths a use tree at `*i` stands for, each as its segments (`self` and
/// `*` dropped) with the offset of its first segment after `prefix` (the path
/// the tree extends; `at` when a caller read it already). Reads an inline path too (`super::blob::cite(…)`).
fn tree(
    code: &[char],
    i: &mut usize,
    prefix: &[String],
    mut at: Option<usize>,
    out: &mut Vec<(usize, Vec<String>)>,
) {
    let mut path = prefix.to_vec();
    loop {
        skip_space(code, i);
        if code.get(*i) == Some(&'{') {
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
                        tree(code, i, &path, at, out);
                        // Skip what is left of this item (`as name`).
                        while code.get(*i).is_some_and(|&c| c != ',' && c != '}') {
                            *i += 1;
                        }
                    }
                }
            }
        }
        let start = *i;
        while code.get(*i).copied().is_some_and(ident_char) {
            *i += 1;
        }
        let name: String = code.get(start..*i).unwrap_or_default().iter().collect();
        if !name.is_empty() && name != "self" {
            at = at.or(Some(start));
            path.push(name);
        }
        if code.get(*i..*i + 2) == Some(&[':', ':'][..]) {
            *i += 2;
            continue;
        }
        out.push((at.unwrap_or(start), path));
        return;
    }
}

/// Whether `code` at `i` starts the word `word` (no identifier character
/// before or after it, nor `::` before it).
fn word_at(code: &[char], i: usize, word: &str) -> bool {
    let w: Vec<char> = word.chars().collect();
    let before = i.checked_sub(1).and_then(|b| code.get(b)).copied();
    code.get(i..i + w.len()) == Some(&w[..])
        && !before.is_some_and(|c| ident_char(c) || c == ':' || c == '$')
        && !code.get(i + w.len()).copied().is_some_and(ident_char)
}

/// Every path of a module's code, made absolute (`crate::`, `super::`,
/// `self::` and, in a module with submodules, `child::` paths), each with
/// whether it stands in a `pub use` (a re-export).
fn module_paths(code: &[char], module: &[String], children: &[String]) -> Vec<(Vec<String>, bool)> {
    let reexport_ranges = reexports(code);
    let mut out = Vec::new();
    let mut i = 0;
    while i < code.len() {
        let mut base: Option<Vec<String>> = None;
        if word_at(code, i, "crate") && code.get(i + 5..i + 7) == Some(&[':', ':'][..]) {
            base = Some(Vec::new());
            i += 7;
        } else if word_at(code, i, "self") && code.get(i + 4..i + 6) == Some(&[':', ':'][..]) {
            base = Some(module.to_vec());
            i += 6;
        } else if word_at(code, i, "super") {
            let mut up = module.to_vec();
            while word_at(code, i, "super") && code.get(i + 5..i + 7) == Some(&[':', ':'][..]) {
                up.pop();
                i += 7;
            }
            base = Some(up);
        } else if let Some(child) = children.iter().find(|c| {
            word_at(code, i, c) && code.get(i + c.len()..i + c.len() + 2) == Some(&[':', ':'][..])
        }) {
            // `child::x` names a submodule from its parent.
            let _ = child;
            base = Some(module.to_vec());
        }
        let Some(base) = base else {
            i += 1;
            continue;
        };
        let start = i;
        let mut found = Vec::new();
        tree(code, &mut i, &base, None, &mut found);
        let public = reexport_ranges.iter().any(|r| r.contains(&start));
        out.extend(found.into_iter().map(|(_, p)| (p, public)));
        i = i.max(start + 1);
    }
    out
}

/// The spans of `pub use …;` items (`pub(crate) use` too) in `code`.
fn reexports(code: &[char]) -> Vec<std::ops::Range<usize>> {
    let mut out = Vec::new();
    let mut i = 0;
    while i < code.len() {
        if !word_at(code, i, "pub") {
            i += 1;
            continue;
        }
        let start = i;
        i += 3;
        if code.get(i) == Some(&'(') {
            while code.get(i).is_some_and(|&c| c != ')') {
                i += 1;
            }
            i += 1;
        }
        skip_space(code, &mut i);
        if word_at(code, i, "use") {
            while code.get(i).is_some_and(|&c| c != ';') {
                i += 1;
            }
            out.push(start..i);
        }
    }
    out
}

/// `code` with every inline `mod name { … }` blanked (a `tests` module's
/// `super::` is its file, not the file's parent).
fn without_inline_modules(mut code: Vec<char>) -> Vec<char> {
    let mut i = 0;
    while i < code.len() {
        if !word_at(&code, i, "mod") {
            i += 1;
            continue;
        }
        let mut j = i + 3;
        while code.get(j).is_some_and(|&c| c != ';' && c != '{') {
            j += 1;
        }
        if code.get(j) != Some(&'{') {
            i = j;
            continue;
        }
        let mut depth = 0;
        while let Some(&c) = code.get(j) {
            depth += match c {
                '{' => 1,
                '}' => -1,
                _ => 0,
            };
            j += 1;
            if depth == 0 {
                break;
            }
        }
        for c in code.iter_mut().take(j).skip(i) {
            if *c != '\n' {
                *c = ' ';
            }
        }
        i = j;
    }
    code
}

/// Import circles among the files of each folder (module directory) of
/// `files` (paths under `src/`, texts): an edge joins two members of a folder
/// (its files, its `mod.rs`, its subfolders as one) when code in one names a
/// path into the other. A path through a `pub use` of a `mod.rs` leads to
/// the module it re-exports. The `mod.rs` is the folder's root, not one of
/// its files: its files may use what it defines and it uses them, so edges
/// from or to it are left out. Each circle as `folder: a -> b -> a`.
fn folder_cycles(files: &[(PathBuf, String)]) -> Vec<String> {
    use std::collections::{BTreeMap, BTreeSet};
    let modules: BTreeMap<Vec<String>, &PathBuf> =
        files.iter().map(|(p, _)| (module_path(p), p)).collect();
    let children = |module: &[String]| -> Vec<String> {
        modules
            .keys()
            .filter(|m| m.len() == module.len() + 1 && m.starts_with(module))
            .filter_map(|m| m.last().cloned())
            .collect()
    };
    let codes: BTreeMap<Vec<String>, Vec<char>> = files
        .iter()
        .map(|(p, t)| (module_path(p), without_inline_modules(code_only(t))))
        .collect();
    // Item re-exported by a module → the path it re-exports.
    let mut reexported: BTreeMap<(Vec<String>, String), Vec<String>> = BTreeMap::new();
    let mut uses: Vec<(Vec<String>, Vec<String>)> = Vec::new();
    for (module, code) in &codes {
        for (path, public) in module_paths(code, module, &children(module)) {
            if public {
                if let Some(last) = path.last() {
                    reexported.insert((module.clone(), last.clone()), path.clone());
                }
            } else {
                uses.push((module.clone(), path));
            }
        }
    }
    // The module a path leads to: its longest module prefix, followed through re-exports.
    let resolve = |path: &[String]| -> Vec<String> {
        let mut path = path.to_vec();
        for _ in 0..8 {
            let len = (0..=path.len())
                .rev()
                .find(|&n| modules.contains_key(&path[..n]))
                .unwrap_or(0);
            let module = path[..len].to_vec();
            match path.get(len) {
                Some(item) if len + 1 == path.len() || !modules.contains_key(&path[..=len]) => {
                    match reexported.get(&(module.clone(), item.clone())) {
                        Some(to) if to != &path => path = to.clone(),
                        _ => return module,
                    }
                }
                _ => return module,
            }
        }
        path
    };
    let mut graphs: BTreeMap<Vec<String>, BTreeMap<String, BTreeSet<String>>> = BTreeMap::new();
    for (from, path) in uses {
        let to = resolve(&path);
        let shared = from.iter().zip(&to).take_while(|(a, b)| a == b).count();
        // The folder holding both: a file's own folder is its module path minus its name,
        // a mod.rs's is its module path.
        let folder_of = |m: &Vec<String>| {
            if modules.get(m).is_some_and(|p| p.ends_with("mod.rs")) {
                m.clone()
            } else {
                m[..m.len().saturating_sub(1)].to_vec()
            }
        };
        let (ff, tf) = (folder_of(&from), folder_of(&to));
        let folder = from[..shared.min(ff.len()).min(tf.len())].to_vec();
        if folder.is_empty() {
            continue;
        }
        let member = |m: &Vec<String>| m.get(folder.len()).cloned().unwrap_or_else(|| "mod".into());
        let (a, b) = (member(&from), member(&to));
        if a != b && a != "mod" && b != "mod" {
            graphs
                .entry(folder)
                .or_default()
                .entry(a)
                .or_default()
                .insert(b);
        }
    }
    let mut out = Vec::new();
    for (folder, graph) in graphs {
        for ring in rings(&graph) {
            out.push(format!("{}: {}", folder.join("/"), ring));
        }
    }
    out
}

/// Every elementary circle of `graph` met by a depth-first search from each
/// node, once each (rotated to start at its least node), as `a -> b -> a`.
fn rings(
    graph: &std::collections::BTreeMap<String, std::collections::BTreeSet<String>>,
) -> Vec<String> {
    use std::collections::BTreeSet;
    fn visit(
        at: &str,
        graph: &std::collections::BTreeMap<String, BTreeSet<String>>,
        path: &mut Vec<String>,
        out: &mut BTreeSet<Vec<String>>,
    ) {
        if let Some(start) = path.iter().position(|m| m == at) {
            let mut ring = path[start..].to_vec();
            let least = (0..ring.len()).min_by_key(|&k| &ring[k]).unwrap_or(0);
            ring.rotate_left(least);
            out.insert(ring);
            return;
        }
        path.push(at.to_string());
        for next in graph.get(at).into_iter().flatten() {
            visit(next, graph, path, out);
        }
        path.pop();
    }
    let mut found = BTreeSet::new();
    for node in graph.keys() {
        visit(node, graph, &mut Vec::new(), &mut found);
    }
    found
        .into_iter()
        .map(|mut ring| {
            ring.push(ring[0].clone());
            ring.join(" -> ")
        })
        .collect()
}

#[test]
fn no_folder_holds_an_import_circle() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    sources(&root, &root, &mut files);
    let found = folder_cycles(&files);
    assert!(
        found.is_empty(),
        "import circles in a folder:\n{}",
        found.join("\n")
    );
}

#[test]
fn catches_a_circle_in_a_folder() {
    let file = |name: &str, text: &str| (PathBuf::from(name), text.to_string());
    let mut files = vec![
        // Through the folder's re-export: `super::Summary` is summary.rs's.
        file(
            "compact/mod.rs",
            "pub mod extractive;\npub mod summary;\npub use summary::Summary;\nuse extractive::summarize;\n",
        ),
        file("compact/extractive.rs", "use super::Summary;\n"),
        file("compact/summary.rs", "fn f() { crate::compact::extractive::newest(); }\n"),
        // A nested folder, named from its parent's path and by `super::`.
        file("formats/mod.rs", "pub mod convert;\nuse convert::a;\n"),
        file("formats/convert/mod.rs", "pub mod a;\npub mod b;\n"),
        file("formats/convert/a.rs", "use super::b::x;\n"),
        file("formats/convert/b.rs", "use crate::formats::convert::{a::{self, y}};\n"),
        // A file's tests module may use what it likes: `super::` there is the file.
        file("activity/edit.rs", "use super::shell::parse;\n"),
        file(
            "activity/shell.rs",
            "#[cfg(test)]\nmod tests {\n    use super::super::edit::Detector;\n}\n",
        ),
        // A mod.rs and its files use each other: the folder's root, no circle.
        file("activity/mod.rs", "pub mod edit;\npub struct Activity;\nuse edit::x;\n"),
        file("activity/check.rs", "use super::Activity;\n"),
    ];
    assert_eq!(
        folder_cycles(&files),
        [
            "compact: extractive -> summary -> extractive",
            "formats/convert: a -> b -> a"
        ]
    );
    files.retain(|(p, _)| !p.ends_with("summary.rs") && !p.ends_with("convert/b.rs"));
    assert_eq!(folder_cycles(&files), Vec::<String>::new());
}
