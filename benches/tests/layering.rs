//! The stages of `schedlab-benches` as a checked property (issue 25, item 2): each stage imports
//! only the stages below it, and no module of the crate imports itself round a circle.
//!
//! The stages, bottom first, are [`STAGES`]; `benches/src/lib.rs` explains them. A new top-level
//! module has to be placed in one of them, or the check fails.
//!
//! How: every file under `benches/src` is read; comments, string and character literals are cut;
//! every path that starts with `crate::`, `super::` or `self::` (grouped imports included,
//! `use crate::{a::X, b::{c, d}}`; paths written inline too, `crate::stats::median(..)`) is
//! resolved to the deepest module file it names, and is an edge from the file's module to that
//! one. A `mod x;` declaration is an edge from the declaring module to `x`. `super::` inside an
//! inline module (`mod tests { use super::*; }`) is counted from where it stands. Then:
//! - between stages: an edge from a module to a module of the same or a higher stage fails;
//! - between files: a circle fails (so a folder's `mod.rs` may not be imported by the files it
//!   declares);
//! - a path that ends at the crate root (an old name `lib.rs` re-exports for the CLI and the
//!   tests, such as `crate::predict`) fails: inside the crate every path names where a thing lives.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// The stages, bottom first: a module may import only modules of a stage before its own.
const STAGES: &[(&str, &[&str])] = &[
    (
        "bottom: shared statistics, checked sums of counts, the seeds' figures, the error type",
        &["stats", "counts", "seeds", "error"],
    ),
    ("files and provenance", &["files"]),
    ("the run driver", &["driver"]),
    ("the model and the policy simulation", &["model", "policy_sim"]),
    ("experiments", &["experiment"]),
    ("reports", &["report"]),
];

/// A module path inside the crate: `["model", "sim"]` for `model/sim.rs`; `[]` is the crate root.
type ModPath = Vec<String>;

/// Module → the modules it names (declares or imports).
type Graph = BTreeMap<String, BTreeSet<String>>;

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).expect("read benches/src") {
        let path = entry.expect("dir entry").path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// The module a file holds, from where it lies: `lib.rs` → `[]`, `model/mod.rs` → `["model"]`.
fn module_of(rel: &Path) -> ModPath {
    let mut parts: ModPath = rel.iter().map(|c| c.to_string_lossy().to_string()).collect();
    let last = parts.pop().expect("a file name");
    let stem = last.strip_suffix(".rs").unwrap_or(&last);
    if !(stem == "mod" || (stem == "lib" && parts.is_empty())) {
        parts.push(stem.to_string());
    }
    parts
}

fn is_ident(c: char) -> bool {
    c.is_alphanumeric() || c == '_'
}

/// The source without comments, string literals and character literals (each literal is kept as
/// an empty one, so that the code around it still reads the same).
fn code_only(text: &str) -> String {
    let b: Vec<char> = text.chars().collect();
    let mut out = String::with_capacity(text.len());
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        let next = b.get(i + 1).copied();
        let prev_ident = out.chars().last().is_some_and(is_ident);
        if c == '/' && next == Some('/') {
            while i < b.len() && b[i] != '\n' {
                i += 1;
            }
            continue;
        }
        if c == '/' && next == Some('*') {
            let mut depth = 0;
            while i < b.len() {
                if b[i] == '/' && b.get(i + 1) == Some(&'*') {
                    depth += 1;
                    i += 2;
                } else if b[i] == '*' && b.get(i + 1) == Some(&'/') {
                    depth -= 1;
                    i += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    i += 1;
                }
            }
            out.push(' ');
            continue;
        }
        if !prev_ident && (c == 'r' || (c == 'b' && next == Some('r'))) {
            let mut j = i + if c == 'b' { 2 } else { 1 };
            let mut hashes = 0;
            while b.get(j) == Some(&'#') {
                hashes += 1;
                j += 1;
            }
            if b.get(j) == Some(&'"') {
                j += 1;
                while j < b.len()
                    && !(b[j] == '"' && (0..hashes).all(|h| b.get(j + 1 + h) == Some(&'#')))
                {
                    j += 1;
                }
                out.push_str("\"\"");
                i = j + 1 + hashes;
                continue;
            }
        }
        if c == '"' {
            let mut j = i + 1;
            while j < b.len() && b[j] != '"' {
                if b[j] == '\\' {
                    j += 1;
                }
                j += 1;
            }
            out.push_str("\"\"");
            i = j + 1;
            continue;
        }
        if c == '\'' {
            if next == Some('\\') {
                let mut j = i + 2;
                while j < b.len() && b[j] != '\'' {
                    j += 1;
                }
                out.push_str("' '");
                i = j + 1;
                continue;
            }
            if b.get(i + 2) == Some(&'\'') {
                out.push_str("' '");
                i += 3;
                continue;
            }
        }
        out.push(c);
        i += 1;
    }
    out
}

fn skip_ws(c: &[char], mut i: usize) -> usize {
    while i < c.len() && c[i].is_whitespace() {
        i += 1;
    }
    i
}

fn ident_at(c: &[char], i: usize) -> (String, usize) {
    let mut j = i;
    while j < c.len() && is_ident(c[j]) {
        j += 1;
    }
    (c[i..j].iter().collect(), j)
}

/// The paths of the use tree (or inline path) at `i`, each as its segments, and where it ends.
/// A glob (`x::*`) gives the path up to `x`; `x::{self, y}` gives `x` and `x::y`.
fn use_tree(c: &[char], i: usize) -> (Vec<ModPath>, usize) {
    let i = skip_ws(c, i);
    match c.get(i) {
        Some('{') => {
            let mut paths = Vec::new();
            let mut j = i + 1;
            loop {
                j = skip_ws(c, j);
                match c.get(j) {
                    None => return (paths, j),
                    Some('}') => return (paths, j + 1),
                    Some(',') => j += 1,
                    Some(_) => {
                        let (sub, end) = use_tree(c, j);
                        paths.extend(sub);
                        j = end.max(j + 1);
                    }
                }
            }
        }
        Some('*') => (vec![Vec::new()], i + 1),
        _ => {
            let (name, mut j) = ident_at(c, i);
            if name.is_empty() {
                return (Vec::new(), i + 1);
            }
            if c.get(j) == Some(&':') && c.get(j + 1) == Some(&':') {
                let (sub, end) = use_tree(c, j + 2);
                let name_only = if name == "self" { Vec::new() } else { vec![name.clone()] };
                if sub.is_empty() {
                    return (vec![name_only], end);
                }
                return (
                    sub.into_iter()
                        .map(|s| {
                            let mut p = name_only.clone();
                            p.extend(s.into_iter().filter(|seg| seg != "self"));
                            p
                        })
                        .collect(),
                    end,
                );
            }
            // `x as y`
            let k = skip_ws(c, j);
            let (word, after) = ident_at(c, k);
            if word == "as" {
                let (_, after_alias) = ident_at(c, skip_ws(c, after));
                j = after_alias;
            }
            let path = if name == "self" { Vec::new() } else { vec![name] };
            (vec![path], j)
        }
    }
}

/// What one file names: paths starting at `crate::`, `super::` or `self::`, each with the number
/// of inline modules it stands in, and the modules it declares (`mod x;`).
struct FileRefs {
    paths: Vec<(usize, ModPath)>,
    declared: Vec<String>,
}

fn file_refs(text: &str) -> FileRefs {
    let code: Vec<char> = code_only(text).chars().collect();
    let mut refs = FileRefs { paths: Vec::new(), declared: Vec::new() };
    // For each open brace: whether it opened an inline module (`mod tests {`).
    let mut braces: Vec<bool> = Vec::new();
    let mut last_words: [String; 2] = [String::new(), String::new()];
    let mut i = 0;
    while i < code.len() {
        let c = code[i];
        if c == '{' {
            braces.push(last_words[1] == "mod" && !last_words[0].is_empty());
            last_words = [String::new(), String::new()];
            i += 1;
            continue;
        }
        if c == '}' {
            braces.pop();
            i += 1;
            continue;
        }
        if is_ident(c) && (i == 0 || !is_ident(code[i - 1])) {
            let (word, end) = ident_at(&code, i);
            let before = if i == 0 { ' ' } else { code[i - 1] };
            let is_path_start = matches!(word.as_str(), "crate" | "super" | "self")
                && code.get(end) == Some(&':')
                && code.get(end + 1) == Some(&':')
                && before != ':'
                && before != '$';
            if is_path_start {
                let depth = braces.iter().filter(|m| **m).count();
                let (paths, after) = use_tree(&code, i);
                for p in paths {
                    // `use_tree` drops a leading `self`; put the anchor back.
                    let p = if word == "self" {
                        std::iter::once("self".to_string()).chain(p).collect()
                    } else {
                        p
                    };
                    refs.paths.push((depth, p));
                }
                i = after.max(end);
                last_words = [String::new(), String::new()];
                continue;
            }
            if word == "mod" {
                let name_at = skip_ws(&code, end);
                let (name, after) = ident_at(&code, name_at);
                if !name.is_empty() && code.get(skip_ws(&code, after)) == Some(&';') {
                    refs.declared.push(name);
                }
            }
            // [0]: this word; [1]: the one before it.
            last_words = [word, std::mem::take(&mut last_words[0])];
            i = end;
            continue;
        }
        if !c.is_whitespace() {
            last_words = [String::new(), String::new()];
        }
        i += 1;
    }
    refs
}

/// The absolute path a reference names, or `None` when it stays inside its own file (`super::`
/// from an inline module back to the file, `self::` inside one).
fn absolute(module: &ModPath, depth: usize, path: &ModPath) -> Option<ModPath> {
    let supers = path.iter().take_while(|s| *s == "super").count();
    match path.first().map(String::as_str) {
        Some("crate") => Some(path[1..].to_vec()),
        Some("self") if depth == 0 => Some(module.iter().chain(&path[1..]).cloned().collect()),
        Some("self") => None,
        Some("super") if supers <= depth => None,
        Some("super") => {
            let up = supers - depth;
            let base = &module[..module.len().saturating_sub(up)];
            Some(base.iter().chain(&path[supers..]).cloned().collect())
        }
        _ => None,
    }
}

/// The graph of the crate's modules (files), from each file's module path and text; and the paths
/// that end at the crate root.
fn graph_of(files: &[(ModPath, String)]) -> (Graph, Vec<String>) {
    let known: BTreeSet<&ModPath> = files.iter().map(|(m, _)| m).collect();
    let name = |m: &[String]| m.join("::");
    let mut graph = Graph::new();
    let mut at_root = Vec::new();
    for (module, text) in files {
        if module.is_empty() {
            continue; // lib.rs declares and re-exports; it is not a stage
        }
        let refs = file_refs(text);
        let targets = graph.entry(name(module)).or_default();
        for d in refs.declared {
            let child: ModPath = module.iter().cloned().chain([d]).collect();
            if known.contains(&child) {
                targets.insert(name(&child));
            }
        }
        for (depth, path) in refs.paths {
            let Some(abs) = absolute(module, depth, &path) else { continue };
            let target = (0..=abs.len())
                .rev()
                .map(|n| abs[..n].to_vec())
                .find(|p| known.contains(p))
                .unwrap_or_default();
            if target.is_empty() {
                at_root.push(format!("{}: {}", name(module), path.join("::")));
            } else if &target != module {
                targets.insert(name(&target));
            }
        }
    }
    (graph, at_root)
}

fn crate_graph() -> (Graph, Vec<String>) {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut paths = Vec::new();
    rust_files(&src, &mut paths);
    let files: Vec<(ModPath, String)> = paths
        .iter()
        .map(|p| (module_of(p.strip_prefix(&src).unwrap()), std::fs::read_to_string(p).unwrap()))
        .collect();
    graph_of(&files)
}

/// The stage of a module (by its top-level module), as an index into `stages`.
fn stage_of(module: &str, stages: &[(&str, &[&str])]) -> Option<usize> {
    let top = module.split("::").next().unwrap_or(module);
    stages.iter().position(|(_, members)| members.contains(&top))
}

/// Every edge that goes to the same or a higher stage, or from or to a module in no stage.
fn stage_violations(graph: &Graph, stages: &[(&str, &[&str])]) -> Vec<String> {
    let mut bad = Vec::new();
    for (from, targets) in graph {
        let top_from = from.split("::").next().unwrap();
        for to in targets {
            let top_to = to.split("::").next().unwrap();
            if top_from == top_to {
                continue;
            }
            match (stage_of(from, stages), stage_of(to, stages)) {
                (Some(a), Some(b)) if b < a => {}
                (Some(a), Some(b)) => bad.push(format!(
                    "{from} (stage {a}: {}) imports {to} (stage {b}: {})",
                    stages[a].0, stages[b].0
                )),
                _ => bad.push(format!("{from} -> {to}: a module in no stage (place it in STAGES)")),
            }
        }
    }
    bad
}

/// A cycle in `graph`, as the list of modules around it, if there is one.
fn find_cycle(graph: &Graph) -> Option<Vec<String>> {
    #[derive(Clone, Copy, PartialEq)]
    enum Mark {
        New,
        OnStack,
        Done,
    }
    fn visit(
        node: &str,
        graph: &Graph,
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

/// The edges between stages' top-level modules, for the failure messages and `--nocapture`.
fn stage_edges(graph: &Graph) -> BTreeMap<String, BTreeSet<String>> {
    let mut edges: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for (from, targets) in graph {
        let top_from = from.split("::").next().unwrap().to_string();
        let entry = edges.entry(top_from.clone()).or_default();
        for to in targets {
            let top_to = to.split("::").next().unwrap().to_string();
            if top_to != top_from {
                entry.insert(top_to);
            }
        }
    }
    edges
}

#[test]
fn every_top_level_module_is_in_a_stage() {
    let (graph, _) = crate_graph();
    let tops: BTreeSet<&str> = graph.keys().map(|m| m.split("::").next().unwrap()).collect();
    let unplaced: Vec<&&str> = tops.iter().filter(|t| stage_of(t, STAGES).is_none()).collect();
    assert!(
        unplaced.is_empty(),
        "top-level modules of benches/src in no stage: {unplaced:?} (place them in STAGES)"
    );
    let absent: Vec<&str> =
        STAGES.iter().flat_map(|(_, m)| m.iter().copied()).filter(|m| !tops.contains(m)).collect();
    assert!(absent.is_empty(), "STAGES names modules benches/src does not have: {absent:?}");
}

#[test]
fn each_stage_imports_only_the_stages_below_it() {
    let (graph, _) = crate_graph();
    let edges = stage_edges(&graph);
    for (level, (what, members)) in STAGES.iter().enumerate() {
        let below: BTreeSet<&String> =
            members.iter().flat_map(|m| edges.get(*m).into_iter().flatten()).collect();
        println!("{level} {what}: {members:?} imports {below:?}");
    }
    let bad = stage_violations(&graph, STAGES);
    assert!(
        bad.is_empty(),
        "imports against the stage order:\n{}\n(stages: {edges:#?})",
        bad.join("\n")
    );
}

#[test]
fn benches_modules_form_no_import_circle() {
    let (graph, _) = crate_graph();
    assert!(graph.len() > 20, "too few modules read: {graph:#?}");
    if let Some(cycle) = find_cycle(&graph) {
        panic!("import circle in benches/src: {}\n(graph: {graph:#?})", cycle.join(" -> "));
    }
}

#[test]
fn no_path_inside_the_crate_goes_through_an_old_name() {
    let (_, at_root) = crate_graph();
    assert!(
        at_root.is_empty(),
        "paths that end at the crate root (old names lib.rs re-exports):\n{}",
        at_root.join("\n")
    );
}

/// The checker itself: it reads grouped, nested and inline paths and `super::` from inline
/// modules, and it finds a planted circle and a planted upward import (a check that cannot fail
/// proves nothing).
#[test]
fn the_check_sees_a_planted_circle_and_a_planted_upward_import() {
    let m = |s: &str| -> ModPath {
        s.split("::").filter(|x| !x.is_empty()).map(str::to_string).collect()
    };
    let files = vec![
        (m(""), "pub mod low; pub mod mid; pub mod high;".to_string()),
        (m("low"), "pub mod a; pub mod b;\n// crate::high::X in a comment\nconst S: &str = \"crate::high\";\nconst C: char = '{';".to_string()),
        (
            m("low::a"),
            "use super::b::{self, Y};\nfn f() { crate::low::b::g(); }\n#[cfg(test)]\nmod tests {\n    use super::*;\n    use super::super::b::Z;\n}".to_string(),
        ),
        (m("low::b"), "use crate::{low::a::{X, W as V}, mid};\npub fn g() {}".to_string()),
        (m("mid"), "use crate::low::b::g;".to_string()),
        (m("high"), "use crate::{mid::*, predict::Old};".to_string()),
    ];
    let (graph, at_root) = graph_of(&files);
    let set = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<BTreeSet<String>>();
    assert_eq!(
        graph["low"],
        set(&["low::a", "low::b"]),
        "declarations; nothing from comments or strings"
    );
    assert_eq!(
        graph["low::a"],
        set(&["low::b"]),
        "`super::` from the file and from its tests module"
    );
    assert_eq!(graph["low::b"], set(&["low::a", "mid"]), "a grouped, nested import");
    assert_eq!(graph["high"], set(&["mid"]));
    assert_eq!(
        at_root,
        vec!["high: crate::predict::Old".to_string()],
        "an old name at the crate root"
    );

    // low::a -> low::b -> low::a
    let cycle = find_cycle(&graph).expect("the planted circle");
    assert_eq!(cycle.first(), cycle.last());
    assert!(
        cycle.contains(&"low::a".to_string()) && cycle.contains(&"low::b".to_string()),
        "{cycle:?}"
    );

    // low::b imports mid: upward.
    let stages: &[(&str, &[&str])] = &[("low", &["low"]), ("mid", &["mid"]), ("high", &["high"])];
    assert_eq!(
        stage_violations(&graph, stages),
        vec!["low::b (stage 0: low) imports mid (stage 1: mid)".to_string()]
    );
    // The same stage sideways is refused too, and a module in no stage.
    let flat: &[(&str, &[&str])] = &[("all but high", &["low", "mid"])];
    let bad = stage_violations(&graph, flat);
    assert!(bad.iter().any(|b| b.starts_with("low::b (stage 0")), "{bad:?}");
    assert!(bad.iter().any(|b| b.starts_with("high -> mid: a module in no stage")), "{bad:?}");

    // Without the upward import, no circle and no violation.
    let mut fixed = files.clone();
    fixed[3].1 = "pub fn g() {}".to_string();
    fixed[2].1 = "fn f() { crate::low::b::g(); }".to_string();
    let (graph, _) = graph_of(&fixed);
    assert!(find_cycle(&graph).is_none(), "{graph:#?}");
    assert!(stage_violations(&graph, stages).is_empty());
}

/// Issue 34, item 5: one vocabulary. The crate root declares the stages' modules and nothing
/// else: no `pub use` re-export and no inline module, so that no old name
/// (`schedlab_benches::predict`, `::workload`, `::compare`, ...) resolves from outside either.
#[test]
fn the_crate_root_exports_only_the_stages() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("src/lib.rs");
    let code = code_only(&std::fs::read_to_string(&root).expect("read lib.rs"));
    let stages: BTreeSet<&str> = STAGES.iter().flat_map(|(_, m)| m.iter().copied()).collect();
    let mut problems = Vec::new();
    for statement in code.split(';').map(str::trim).filter(|s| !s.is_empty()) {
        match statement.strip_prefix("pub mod ") {
            Some(name) if stages.contains(name.trim()) => {}
            _ => problems.push(statement.split_whitespace().collect::<Vec<_>>().join(" ")),
        }
    }
    assert!(
        problems.is_empty(),
        "lib.rs must only declare the stages' modules; found: {problems:?}"
    );
    let declared = code.matches("pub mod ").count();
    assert_eq!(declared, stages.len(), "every stage's module is declared once at the crate root");
}
