//! The package's TypeScript types of the options, the report and the error
//! codes are generated from the Rust declarations: the option structs of
//! `src/config/`, the report structs they reach from `pipeline::Report`, and
//! [`ErrorCode::ALL`] by [`ErrorGroup`]. Field names follow serde
//! (camelCase), doc comments become JSDoc, options are optional and say
//! their default (read from `Config::default()`). This test regenerates
//! `pkg-config/core/types/*.d.ts` and `codes.js` (the core's codes and their
//! groups as a JS table, which the package's error classes read at run time)
//! and fails when the checked-in files differ; `TRACELITE_BLESS=1 cargo test
//! --test ts_types` rewrites them.

// A generator run as a test: a declaration it cannot read is a failure.
#![allow(clippy::indexing_slicing, clippy::panic)]

use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use serde_json::Value;
use syn::{Attribute, Fields, GenericArgument, Item, PathArguments, Type};
use tracelite::error::ErrorGroup;
use tracelite::{Config, ErrorCode};

const OUT: &str = "pkg-config/core/types";

/// Rust names whose TypeScript name differs.
const RENAMED: &[(&str, &str)] = &[
    ("Config", "CompressSettings"),
    ("SpillConfig", "SpillOptions"),
    ("DedupConfig", "DedupOptions"),
    ("PhaseConfig", "PhaseOptions"),
    ("OpticalConfig", "OpticalOptions"),
    ("CompactConfig", "CompactOptions"),
    ("RedactConfig", "RedactOptions"),
    ("PlanConfig", "PlanOptions"),
    ("SalienceConfig", "SalienceOptions"),
    ("Limits", "LimitOptions"),
    ("Candidate", "PlanCandidate"),
];

/// Fields whose Rust type is wider than the values the core accepts or emits
/// (checked by their section's `Section::validate` or fixed by the code that
/// fills them).
const NARROWED: &[(&str, &str, &str)] = &[
    ("OpticalConfig", "enabled", "boolean | 'auto'"),
    ("OpticalConfig", "bit_depth", "1 | 2 | 4 | 8"),
    ("OpticalConfig", "detail", "'high' | 'low'"),
    (
        "OpticalConfig",
        "media_resolution",
        "'' | 'low' | 'medium' | 'high'",
    ),
    ("PhaseConfig", "clear", "PhaseClear[]"),
    ("UrlImage", "media_type", "'image/png'"),
    ("Candidate", "observations", "[number, number]"),
];

/// Literal unions the narrowed fields name.
const ALIASES: &[(&str, &str, &str)] = &[(
    "PhaseClear",
    "What `phase.clear` may list (`Reason` in src/phase).",
    "'searches' | 'listings' | 'reruns' | 'editedViews'",
)];

struct Decl {
    file: PathBuf,
    item: Item,
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let mut entries: Vec<_> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.map(|e| e.path()).unwrap_or_default())
        .collect();
    entries.sort();
    for path in entries {
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|x| x == "rs") {
            out.push(path);
        }
    }
}

/// Every serializable struct and enum of `src/`, by name.
fn declarations(root: &Path) -> BTreeMap<String, Vec<Decl>> {
    let mut files = Vec::new();
    rust_files(&root.join("src"), &mut files);
    let mut out: BTreeMap<String, Vec<Decl>> = BTreeMap::new();
    for file in files {
        let text = std::fs::read_to_string(&file).unwrap_or_default();
        let Ok(parsed) = syn::parse_file(&text) else {
            panic!("{} does not parse", file.display());
        };
        let mut items: VecDeque<Item> = parsed.items.into();
        while let Some(item) = items.pop_front() {
            let (name, attrs) = match &item {
                Item::Struct(s) => (s.ident.to_string(), &s.attrs),
                Item::Enum(e) => (e.ident.to_string(), &e.attrs),
                Item::Mod(m) => {
                    if let Some((_, inner)) = &m.content {
                        items.extend(inner.iter().cloned());
                    }
                    continue;
                }
                _ => continue,
            };
            if derives(attrs, "Serialize") {
                out.entry(name).or_default().push(Decl {
                    file: file.clone(),
                    item,
                });
            }
        }
    }
    out
}

fn derives(attrs: &[Attribute], what: &str) -> bool {
    attrs.iter().any(|a| {
        a.path().is_ident("derive") && {
            let mut found = false;
            let _ = a.parse_nested_meta(|m| {
                found |= m.path.segments.last().is_some_and(|s| s.ident == what);
                Ok(())
            });
            found
        }
    })
}

/// The `#[serde(...)]` settings of an item or field: `key = "value"` pairs and bare flags.
fn serde_attrs(attrs: &[Attribute]) -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    for a in attrs.iter().filter(|a| a.path().is_ident("serde")) {
        let _ = a.parse_nested_meta(|m| {
            let key = m
                .path
                .get_ident()
                .map(ToString::to_string)
                .unwrap_or_default();
            let value = match m.value() {
                Ok(v) => v
                    .parse::<syn::LitStr>()
                    .map(|s| s.value())
                    .unwrap_or_default(),
                Err(_) => String::new(),
            };
            out.insert(key, value);
            Ok(())
        });
    }
    out
}

fn docs(attrs: &[Attribute]) -> Vec<String> {
    attrs
        .iter()
        .filter(|a| a.path().is_ident("doc"))
        .filter_map(|a| match &a.meta {
            syn::Meta::NameValue(nv) => match &nv.value {
                syn::Expr::Lit(syn::ExprLit {
                    lit: syn::Lit::Str(s),
                    ..
                }) => Some(for_js(s.value().trim())),
                _ => None,
            },
            _ => None,
        })
        .collect()
}

/// A Rust doc line as a JS reader reads it: intra-doc links become code,
/// `crate::` paths lose the prefix, `None` is `null`, and a field named as
/// `Report::stable_messages` or `Config::repair` is `report.stableMessages`
/// or `options.repair`.
fn for_js(line: &str) -> String {
    let mut out = line.replace("[`", "`").replace("`]", "`");
    out = out.replace("`crate::", "`").replace("`None`", "`null`");
    for (rust, js) in [("Report::", "report."), ("Config::", "options.")] {
        let mut rest = out.as_str();
        let mut done = String::new();
        while let Some(at) = rest.find(rust) {
            done.push_str(&rest[..at]);
            let after = &rest[at + rust.len()..];
            let end = after
                .find(|c: char| !(c.is_ascii_lowercase() || c == '_'))
                .unwrap_or(after.len());
            let field = &after[..end];
            // `Config::default()` and other calls stay as written.
            if field.is_empty() || after[end..].starts_with('(') {
                done.push_str(rust);
            } else {
                done.push_str(js);
                done.push_str(&rename(field, "camelCase"));
                rest = &after[end..];
                continue;
            }
            rest = after;
        }
        done.push_str(rest);
        out = done;
    }
    out
}

fn rename(name: &str, rule: &str) -> String {
    let words: Vec<String> = split_words(name);
    match rule {
        "camelCase" => {
            let mut out = String::new();
            for (i, w) in words.iter().enumerate() {
                if i == 0 {
                    out.push_str(w);
                } else {
                    let mut c = w.chars();
                    if let Some(f) = c.next() {
                        out.extend(f.to_uppercase());
                        out.push_str(c.as_str());
                    }
                }
            }
            out
        }
        "kebab-case" => words.join("-"),
        "snake_case" => words.join("_"),
        "lowercase" => words.concat(),
        "SCREAMING_SNAKE_CASE" => words.join("_").to_uppercase(),
        _ => name.to_string(),
    }
}

/// Lowercase words of a snake_case or PascalCase name.
fn split_words(name: &str) -> Vec<String> {
    let mut words = Vec::new();
    for part in name.split('_').filter(|p| !p.is_empty()) {
        let mut word = String::new();
        for c in part.chars() {
            if c.is_uppercase() && !word.is_empty() {
                words.push(std::mem::take(&mut word));
            }
            word.extend(c.to_lowercase());
        }
        if !word.is_empty() {
            words.push(word);
        }
    }
    words
}

fn ts_name(rust: &str) -> String {
    RENAMED
        .iter()
        .find(|(r, _)| *r == rust)
        .map_or(rust.to_string(), |(_, t)| (*t).to_string())
}

fn jsdoc(out: &mut String, indent: &str, lines: &[String]) {
    let lines: Vec<&String> = lines.iter().collect();
    if lines.is_empty() {
        return;
    }
    if lines.len() == 1 {
        let _ = writeln!(out, "{indent}/** {} */", lines[0].replace("*/", "*\\/"));
        return;
    }
    let _ = writeln!(out, "{indent}/**");
    for l in lines {
        let _ = writeln!(out, "{indent} * {}", l.replace("*/", "*\\/")).map(|_| ());
    }
    let _ = writeln!(out, "{indent} */");
}

struct Generator<'a> {
    decls: &'a BTreeMap<String, Vec<Decl>>,
    queue: VecDeque<(String, PathBuf)>,
    seen: BTreeSet<String>,
    out: String,
    /// Options mode: every field optional, documented with its default.
    defaults: Option<&'a Value>,
    /// Types emitted by another file: referenced, not emitted again.
    external: BTreeSet<String>,
    /// The external types referenced, to import.
    imported: BTreeSet<String>,
}

impl Generator<'_> {
    fn find(&self, name: &str, near: &Path) -> Option<&Decl> {
        let all = self.decls.get(name)?;
        if all.len() == 1 {
            return all.first();
        }
        all.iter().find(|d| d.file == near).or_else(|| {
            panic!(
                "{name} is declared in several files; none is {}",
                near.display()
            )
        })
    }

    fn reference(&mut self, name: &str, near: &Path) -> String {
        if self.find(name, near).is_none() {
            panic!(
                "{name} (used in {}) is not a serializable type of src/",
                near.display()
            );
        }
        if self.external.contains(name) {
            self.imported.insert(ts_name(name));
        } else if self.seen.insert(name.to_string()) {
            self.queue.push_back((name.to_string(), near.to_path_buf()));
        }
        ts_name(name)
    }

    fn ty(&mut self, ty: &Type, near: &Path) -> String {
        match ty {
            Type::Reference(r) => self.ty(&r.elem, near),
            Type::Array(a) => format!("{}[]", self.ty(&a.elem, near)),
            Type::Slice(a) => format!("{}[]", self.ty(&a.elem, near)),
            Type::Tuple(t) => {
                let parts: Vec<String> = t.elems.iter().map(|e| self.ty(e, near)).collect();
                format!("[{}]", parts.join(", "))
            }
            Type::Path(p) => {
                let Some(last) = p.path.segments.last() else {
                    panic!("empty type path");
                };
                let args: Vec<&Type> = match &last.arguments {
                    PathArguments::AngleBracketed(a) => a
                        .args
                        .iter()
                        .filter_map(|g| match g {
                            GenericArgument::Type(t) => Some(t),
                            _ => None,
                        })
                        .collect(),
                    _ => Vec::new(),
                };
                let name = last.ident.to_string();
                match name.as_str() {
                    "bool" => "boolean".into(),
                    "u8" | "u16" | "u32" | "u64" | "usize" | "i8" | "i16" | "i32" | "i64"
                    | "isize" | "f32" | "f64" => "number".into(),
                    "String" | "str" => "string".into(),
                    "Value" => "unknown".into(),
                    "Vec" | "VecDeque" | "BTreeSet" => {
                        let inner = self.ty(args[0], near);
                        if inner.contains(' ') {
                            format!("({inner})[]")
                        } else {
                            format!("{inner}[]")
                        }
                    }
                    "Option" | "Box" | "Cow" => self.ty(args[args.len() - 1], near),
                    "BTreeMap" | "HashMap" | "Map" => {
                        let value = args.get(1).map_or("unknown".into(), |t| self.ty(t, near));
                        format!("Record<string, {value}>")
                    }
                    _ => self.reference(&name, near),
                }
            }
            _ => panic!("{}: unsupported type form", near.display()),
        }
    }

    fn default_of(&self, path: &[String]) -> Option<&Value> {
        let mut v = self.defaults?;
        for key in path {
            v = v.get(key)?;
        }
        Some(v)
    }

    /// Emits `name` and everything it reaches; `path` is its place in the options.
    fn emit(&mut self, name: &str, near: &Path, path: &[String]) {
        let Some(decl) = self.find(name, near) else {
            return;
        };
        let file = decl.file.clone();
        let item = decl.item.clone();
        match item {
            Item::Struct(s) => {
                let rule = serde_attrs(&s.attrs)
                    .get("rename_all")
                    .cloned()
                    .unwrap_or_default();
                let mut body = String::new();
                let Fields::Named(fields) = &s.fields else {
                    panic!("{name}: only structs with named fields are supported");
                };
                let mut nested = Vec::new();
                for f in &fields.named {
                    let serde = serde_attrs(&f.attrs);
                    if serde.contains_key("skip") || serde.contains_key("skip_serializing") {
                        continue;
                    }
                    if serde.contains_key("flatten") {
                        panic!("{name}: #[serde(flatten)] is not supported");
                    }
                    let Some(ident) = &f.ident else { continue };
                    let rust_field = ident.to_string();
                    let key = serde
                        .get("rename")
                        .cloned()
                        .unwrap_or_else(|| rename(&rust_field, &rule));
                    let narrowed = NARROWED
                        .iter()
                        .find(|(t, f, _)| *t == name && *f == rust_field)
                        .map(|(_, _, ts)| (*ts).to_string());
                    let ty = match narrowed {
                        Some(ts) => ts,
                        None => self.ty(&f.ty, &file),
                    };
                    let is_option = matches!(&f.ty, Type::Path(p) if p.path.segments.last().is_some_and(|s| s.ident == "Option"));
                    let optional =
                        self.defaults.is_some() || serde.contains_key("skip_serializing_if");
                    let ty = if is_option && !optional {
                        format!("{ty} | null")
                    } else {
                        ty
                    };
                    let mut lines = docs(&f.attrs);
                    let mut field_path = path.to_vec();
                    field_path.push(key.clone());
                    if let Some(d) = self.default_of(&field_path) {
                        if !d.is_object() {
                            lines.push(format!("Default: `{d}`."));
                        }
                    }
                    jsdoc(&mut body, "  ", &lines);
                    let q = if optional { "?" } else { "" };
                    let _ = writeln!(body, "  {key}{q}: {ty};");
                    if let Type::Path(p) = &f.ty {
                        if let Some(last) = p.path.segments.last() {
                            nested.push((last.ident.to_string(), field_path));
                        }
                    }
                }
                jsdoc(&mut self.out, "", &docs(&s.attrs));
                let _ = writeln!(
                    self.out,
                    "export interface {} {{\n{body}}}\n",
                    ts_name(name)
                );
                // Options: nested sections get their defaults from their own path.
                for (child, child_path) in nested {
                    if self.defaults.is_some() && self.queue.iter().any(|(n, _)| *n == child) {
                        self.queue.retain(|(n, _)| *n != child);
                        self.emit(&child, &file, &child_path);
                    }
                }
            }
            Item::Enum(e) => {
                let rule = serde_attrs(&e.attrs)
                    .get("rename_all")
                    .cloned()
                    .unwrap_or_default();
                let mut names = Vec::new();
                for v in &e.variants {
                    if !matches!(v.fields, Fields::Unit) {
                        panic!("{name}: only enums of unit variants are supported");
                    }
                    let serde = serde_attrs(&v.attrs);
                    let n = serde
                        .get("rename")
                        .cloned()
                        .unwrap_or_else(|| rename(&v.ident.to_string(), &rule));
                    names.push(format!("'{n}'"));
                }
                jsdoc(&mut self.out, "", &docs(&e.attrs));
                let _ = writeln!(
                    self.out,
                    "export type {} = {};\n",
                    ts_name(name),
                    names.join(" | ")
                );
            }
            _ => {}
        }
    }

    fn drain(&mut self) {
        while let Some((name, near)) = self.queue.pop_front() {
            self.emit(&name, &near, &[]);
        }
    }
}

const HEADER: &str = "// Generated from the Rust declarations by tests/ts_types.rs: do not edit.\n// `TRACELITE_BLESS=1 cargo test --test ts_types` rewrites it.\n";

fn options(decls: &BTreeMap<String, Vec<Decl>>, root: &Path) -> (String, BTreeSet<String>) {
    let defaults = serde_json::to_value(Config::default()).unwrap_or(Value::Null);
    let mut g = Generator {
        decls,
        queue: VecDeque::new(),
        seen: BTreeSet::from(["Config".to_string()]),
        out: String::from(HEADER),
        defaults: Some(&defaults),
        external: BTreeSet::new(),
        imported: BTreeSet::new(),
    };
    g.out.push('\n');
    for (name, doc, ts) in ALIASES {
        let _ = writeln!(g.out, "/** {doc} */\nexport type {name} = {ts};\n");
    }
    g.emit("Config", &root.join("src/config/mod.rs"), &[]);
    g.drain();
    let seen = g.seen.clone();
    (g.out, seen)
}

fn report(decls: &BTreeMap<String, Vec<Decl>>, root: &Path, options: &BTreeSet<String>) -> String {
    let mut g = Generator {
        decls,
        queue: VecDeque::new(),
        seen: BTreeSet::from(["Report".to_string()]),
        out: String::from(HEADER),
        defaults: None,
        external: options.clone(),
        imported: BTreeSet::new(),
    };
    g.out.push('\n');
    g.emit("Report", &root.join("src/pipeline.rs"), &[]);
    g.emit("SpillBlob", &root.join("src/stage.rs"), &[]);
    g.emit("UrlImage", &root.join("src/formats/image_urls.rs"), &[]);
    g.drain();
    let import = format!(
        "import type {{ {} }} from './options.js';\n",
        g.imported.iter().cloned().collect::<Vec<_>>().join(", ")
    );
    g.out.replacen(HEADER, &format!("{HEADER}{import}"), 1)
}

/// The doc comment of each variant of enum `name` in `src/error.rs`.
fn variant_docs(root: &Path, name: &str) -> BTreeMap<String, Vec<String>> {
    let text = std::fs::read_to_string(root.join("src/error.rs")).unwrap_or_default();
    let file = syn::parse_file(&text).unwrap_or_else(|e| panic!("src/error.rs: {e}"));
    file.items
        .iter()
        .find_map(|i| match i {
            Item::Enum(e) if e.ident == name => Some(
                e.variants
                    .iter()
                    .map(|v| (v.ident.to_string(), docs(&v.attrs)))
                    .collect(),
            ),
            _ => None,
        })
        .unwrap_or_default()
}

/// The core's codes: their union (`CoreErrorCode`) and their groups
/// (`CoreErrorCodes`, keyed by `ErrorGroup::as_str`).
fn errors(root: &Path) -> String {
    // ALL must list every variant: count them in the declaration.
    assert_eq!(
        variant_docs(root, "ErrorCode").len(),
        ErrorCode::ALL.len(),
        "ErrorCode::ALL must list every variant"
    );
    let groups = variant_docs(root, "ErrorGroup");
    assert_eq!(
        groups.len(),
        ErrorGroup::ALL.len(),
        "ErrorGroup::ALL must list every variant"
    );
    let mut out = String::from(HEADER);
    out.push_str(
        "\n/**\n * The codes the core raises by group, whose fault an error is (`ErrorGroup`\n * in src/error.rs); `TraceLiteError.from` gives each group its class. The\n * host's own codes are `HostErrorCodes` (core/errors.d.ts).\n */\nexport interface CoreErrorCodes {\n",
    );
    for group in ErrorGroup::ALL {
        jsdoc(&mut out, "  ", &groups[&format!("{group:?}")]);
        let codes: Vec<String> = ErrorCode::ALL
            .iter()
            .filter(|c| c.group() == group)
            .map(|c| format!("'{}'", c.as_str()))
            .collect();
        let one_line = format!("  {}: {};", group.as_str(), codes.join(" | "));
        if one_line.len() <= 100 {
            let _ = writeln!(out, "{one_line}");
        } else {
            let _ = write!(out, "  {}:", group.as_str());
            for c in &codes {
                let _ = write!(out, "\n    | {c}");
            }
            out.push_str(";\n");
        }
    }
    out.push_str("}\n\n/** Stable error codes the core raises (`ErrorCode` in src/error.rs). */\nexport type CoreErrorCode = CoreErrorCodes[keyof CoreErrorCodes];\n");
    out
}

/// The same as a JS table for the package at run time (`core/errors.js`
/// picks an error's class by it).
fn codes_js() -> String {
    let mut out = String::from(HEADER);
    out.push_str("\n/** The group of each code the core raises (`ErrorCode::group` in src/error.rs). */\nexport const CORE_CODES = Object.freeze({\n");
    for c in ErrorCode::ALL {
        let _ = writeln!(out, "  {}: '{}',", c.as_str(), c.group().as_str());
    }
    out.push_str("});\n");
    out
}

#[test]
fn typescript_types_match_the_rust_declarations() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let decls = declarations(root);
    let (opts, seen) = options(&decls, root);
    let files = [
        ("options.d.ts", opts.clone()),
        ("report.d.ts", report(&decls, root, &seen)),
        ("errors.d.ts", errors(root)),
        ("codes.js", codes_js()),
    ];
    let bless = std::env::var_os("TRACELITE_BLESS").is_some();
    let mut stale = Vec::new();
    for (name, text) in &files {
        let path = root.join(OUT).join(name);
        let current = std::fs::read_to_string(&path).unwrap_or_default();
        if current == *text {
            continue;
        }
        if bless {
            std::fs::create_dir_all(root.join(OUT)).unwrap_or_else(|e| panic!("{OUT}: {e}"));
            std::fs::write(&path, text).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        } else {
            stale.push(name.to_string());
        }
    }
    assert!(
        stale.is_empty(),
        "{OUT}/{{{}}} differ from the Rust declarations: run `TRACELITE_BLESS=1 cargo test --test ts_types`",
        stale.join(",")
    );
}

#[test]
fn every_default_is_documented_in_the_options_types() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let (opts, _) = options(&declarations(root), root);
    let defaults = serde_json::to_value(Config::default()).unwrap_or(Value::Null);
    let mut leaves = Vec::new();
    fn walk(v: &Value, out: &mut Vec<String>) {
        match v {
            Value::Object(m) => m.values().for_each(|x| walk(x, out)),
            other => out.push(format!("Default: `{other}`.")),
        }
    }
    walk(&defaults, &mut leaves);
    for leaf in leaves {
        assert!(opts.contains(&leaf), "options.d.ts lacks {leaf}");
    }
    assert!(opts.contains("fraction?: number;") && opts.contains("Default: `0.02`."));
}
