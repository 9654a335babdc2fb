//! The module structure of `schedlab-core` as a checked property (issue 13): the sync facade is a
//! leaf (it names nothing of the crate outside itself), its `mod.rs` is a switch (issue 25: it
//! declares modules and re-exports, and defines nothing), and the modules' references to each
//! other form no circle.
//!
//! How: every file under `core/src` is read; comments are cut (everything after `//`, and
//! `/* ... */`); every path that starts with `crate::` (including grouped imports,
//! `use crate::{a::X, b}`) is an edge from the file's top-level module (`sync/lock.rs` belongs to
//! `sync`) to the module it names. Not only `use` lines count: a path written inline
//! (`crate::trace::LOCKS`) is an edge too. `super::` inside a module folder stays inside it. Then
//! a depth-first search looks for a cycle and names it.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

mod common;
use common::files_with_extension;

/// The source without comments (line comments, doc comments, block comments).
fn strip_comments(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while !rest.is_empty() {
        let line_comment = rest.find("//");
        let block_comment = rest.find("/*");
        match (line_comment, block_comment) {
            (Some(l), b) if b.is_none_or(|b| l < b) => {
                out.push_str(&rest[..l]);
                rest = rest[l..].find('\n').map_or("", |n| &rest[l + n..]);
            }
            (_, Some(b)) => {
                out.push_str(&rest[..b]);
                rest = rest[b..].find("*/").map_or("", |e| &rest[b + e + 2..]);
            }
            _ => {
                out.push_str(rest);
                rest = "";
            }
        }
    }
    out
}

/// The top-level modules a source text names through `crate::`.
fn crate_references(text: &str) -> BTreeSet<String> {
    let code = strip_comments(text);
    let mut names = BTreeSet::new();
    let ident =
        |s: &str| s.chars().take_while(|c| c.is_alphanumeric() || *c == '_').collect::<String>();
    let mut rest = code.as_str();
    while let Some(at) = rest.find("crate::") {
        // `$crate::` and `in crate::` (visibility) are not references to another module... but a
        // visibility path does name a module, so keep it; only skip `$crate` (macros).
        let before = rest[..at].chars().last();
        let after = &rest[at + "crate::".len()..];
        rest = after;
        if before.is_some_and(|c| c == '$' || c.is_alphanumeric() || c == '_') {
            continue;
        }
        if let Some(group) = after.strip_prefix('{') {
            // A grouped import: the top-level names at depth 0 inside the braces.
            let mut depth = 0;
            let mut item_start = true;
            for (i, c) in group.char_indices() {
                match c {
                    '{' => depth += 1,
                    '}' if depth == 0 => break,
                    '}' => depth -= 1,
                    ',' if depth == 0 => item_start = true,
                    c if c.is_whitespace() => {}
                    _ if item_start && depth == 0 => {
                        let name = ident(&group[i..]);
                        if !name.is_empty() {
                            names.insert(name);
                        }
                        item_start = false;
                    }
                    _ => {}
                }
            }
        } else {
            let name = ident(after);
            if !name.is_empty() {
                names.insert(name);
            }
        }
    }
    names
}

/// Module → the modules it references (top-level granularity).
fn module_graph() -> BTreeMap<String, BTreeSet<String>> {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    files_with_extension(&src, "rs", &mut files);
    let mut graph: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for file in files {
        let rel = file.strip_prefix(&src).unwrap();
        let first = rel.components().next().unwrap().as_os_str().to_string_lossy().to_string();
        let module = first.strip_suffix(".rs").unwrap_or(&first).to_string();
        if module == "lib" {
            continue; // the crate root declares and re-exports; it is not a layer
        }
        let text = std::fs::read_to_string(&file).unwrap();
        let refs = graph.entry(module.clone()).or_default();
        for r in crate_references(&text) {
            if r != module {
                refs.insert(r);
            }
        }
    }
    graph
}

/// A cycle in `graph`, as the list of modules around it, if there is one.
fn find_cycle(graph: &BTreeMap<String, BTreeSet<String>>) -> Option<Vec<String>> {
    #[derive(Clone, Copy, PartialEq)]
    enum Mark {
        New,
        OnStack,
        Done,
    }
    fn visit(
        node: &str,
        graph: &BTreeMap<String, BTreeSet<String>>,
        marks: &mut BTreeMap<String, Mark>,
        stack: &mut Vec<String>,
    ) -> Option<Vec<String>> {
        marks.insert(node.to_string(), Mark::OnStack);
        stack.push(node.to_string());
        for next in graph.get(node).into_iter().flatten() {
            match marks.get(next.as_str()).copied().unwrap_or(Mark::New) {
                Mark::OnStack => {
                    let from = stack.iter().position(|n| n == next).unwrap();
                    let mut cycle = stack[from..].to_vec();
                    cycle.push(next.clone());
                    return Some(cycle);
                }
                Mark::New => {
                    if let Some(c) = visit(next, graph, marks, stack) {
                        return Some(c);
                    }
                }
                Mark::Done => {}
            }
        }
        stack.pop();
        marks.insert(node.to_string(), Mark::Done);
        None
    }
    let mut marks = BTreeMap::new();
    for node in graph.keys() {
        if marks.get(node.as_str()).copied().unwrap_or(Mark::New) == Mark::New {
            if let Some(c) = visit(node, graph, &mut marks, &mut Vec::new()) {
                return Some(c);
            }
        }
    }
    None
}

#[test]
fn the_sync_facade_is_a_leaf() {
    let graph = module_graph();
    let sync = graph.get("sync").expect("core/src/sync exists");
    assert!(sync.is_empty(), "core/src/sync names other modules of the crate: {sync:?}");
}

/// The items a source text defines (structs, enums, functions, impls, consts, statics, types,
/// traits, macros), as their first lines: anything but `mod`, `use` and attributes.
fn definitions(text: &str) -> Vec<String> {
    let code = strip_comments(text);
    let kinds = [
        "struct ",
        "enum ",
        "union ",
        "fn ",
        "impl",
        "const ",
        "static ",
        "type ",
        "trait ",
        "macro_rules!",
        "unsafe ",
    ];
    code.lines()
        .map(str::trim_start)
        .filter(|line| !line.is_empty() && !line.starts_with("#["))
        .map(|line| {
            // Cut a visibility: `pub`, `pub(crate)`, `pub(super)`, `pub(in ...)`.
            let rest = match line.strip_prefix("pub(") {
                Some(scoped) => scoped.split_once(')').map_or(scoped, |(_, after)| after),
                None => line.strip_prefix("pub ").unwrap_or(line),
            };
            rest.trim_start().to_string()
        })
        .filter(|rest| kinds.iter().any(|k| rest.starts_with(k)))
        .collect()
}

#[test]
fn the_sync_facade_root_is_a_switch() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("src/sync/mod.rs");
    let text = std::fs::read_to_string(path).unwrap();
    let defined = definitions(&text);
    assert!(
        defined.is_empty(),
        "core/src/sync/mod.rs defines items; they belong in a file of their own: {defined:?}"
    );
    // The check can fail.
    let planted =
        definitions("mod a;\npub use a::X;\n#[cfg(x)]\npub(crate) fn f() {}\npub struct S;");
    assert_eq!(planted.len(), 2, "{planted:?}");
}

#[test]
fn core_modules_form_no_import_circle() {
    let graph = module_graph();
    if let Some(cycle) = find_cycle(&graph) {
        panic!("import circle in core/src: {}\n(graph: {graph:#?})", cycle.join(" -> "));
    }
}

/// The checker itself finds circles and grouped imports (a check that cannot fail proves nothing).
#[test]
fn the_check_sees_a_planted_circle() {
    let refs = crate_references("use crate::{a::X, b as B};\n// crate::comment\nfn f() { crate::c::g(); }\nlet s = \"x\"; /* crate::d */");
    assert_eq!(refs, ["a", "b", "c"].iter().map(|s| s.to_string()).collect());
    let mut graph: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    graph.entry("a".into()).or_default().insert("b".into());
    graph.entry("b".into()).or_default().insert("c".into());
    graph.entry("c".into()).or_default().insert("a".into());
    let cycle = find_cycle(&graph).expect("a -> b -> c -> a");
    assert_eq!(cycle.first(), cycle.last());
    assert_eq!(cycle.len(), 4);
    graph.get_mut("c").unwrap().clear();
    assert!(find_cycle(&graph).is_none());
}
