//! The stages of the `schedlab` binary as a checked property (issue 44, item 5): each module of
//! `src/` imports only the stages below its own, none imports `main.rs`, and no module imports
//! itself round a circle; the modules of `verify/src` form no circle either. Beside them, one
//! property of every library crate (`core`, `variants`, `verify`, `benches`) read from the same
//! sources: no `Result` whose error is a `String`; an error is a type that says what went wrong
//! ([`string_errors`]). (`benches/src` and `core/src` have layering tests of their own.)
//!
//! The stages are read from the map in `src/main.rs`'s documentation (the `text` block after
//! "The map"): a line that starts with a number opens a stage, and the module names up to the
//! next `:` are its members. So the map is the rule: a new module has to be placed in it, or the
//! check fails.
//!
//! How: every file of the crate is read (a folder's files are one top-level module; `bin/` holds
//! programs, not modules); comments, string and character literals are cut; every path that
//! starts with `crate::` or `$crate::` (grouped imports too, `use crate::{a::X, b}`, and paths
//! written inline, `crate::out::error(..)`) is an edge from the file's module to the module it
//! names. So is a `super::` path that climbs out of its file to the crate root (from an inline
//! module, `mod tests { use super::* }`, it stays in the file), a macro of the crate called by
//! its bare name (`out!`) or through the root (`crate::for_each_scenario!`: an edge to the file
//! that defines it). A name that is none of these is an item of the root (`main.rs`, `lib.rs`).

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

mod common;
use common::rust_files;

/// Module → the modules it names, and the items of the crate root it names.
#[derive(Default)]
struct Graph {
    edges: BTreeMap<String, BTreeSet<String>>,
    root_items: Vec<String>,
}

fn src() -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src")
}

fn is_ident(c: char) -> bool {
    c.is_alphanumeric() || c == '_'
}

/// Where the literal or comment starting at `i` ends (the index after it), or `None` when none
/// starts there. A lifetime (`'a`) is no literal.
fn skip_literal(b: &[char], i: usize) -> Option<usize> {
    let at = |k: usize| b.get(k).copied().unwrap_or('\0');
    let prev_ident = i > 0 && is_ident(b[i - 1]);
    match (b[i], at(i + 1)) {
        ('/', '/') => Some((i..b.len()).find(|&k| b[k] == '\n').unwrap_or(b.len())),
        ('/', '*') => {
            let (mut k, mut depth) = (i, 0);
            while k < b.len() {
                match (b[k], at(k + 1)) {
                    ('/', '*') => (depth, k) = (depth + 1, k + 2),
                    ('*', '/') if depth == 1 => return Some(k + 2),
                    ('*', '/') => (depth, k) = (depth - 1, k + 2),
                    _ => k += 1,
                }
            }
            Some(b.len())
        }
        ('r', '#' | '"') if !prev_ident => {
            let hashes = b[i + 1..].iter().take_while(|c| **c == '#').count();
            let open = i + 1 + hashes;
            if at(open) != '"' {
                return None;
            }
            let closes = |k: usize| b[k] == '"' && (1..=hashes).all(|h| at(k + h) == '#');
            let close = (open + 1..b.len()).find(|&k| closes(k));
            Some(close.map_or(b.len(), |k| k + 1 + hashes))
        }
        ('"', _) => {
            let mut k = i + 1;
            while k < b.len() && b[k] != '"' {
                k += if b[k] == '\\' { 2 } else { 1 };
            }
            Some(k + 1)
        }
        ('\'', '\\') => Some((i + 3..b.len()).find(|&k| b[k] == '\'').map_or(b.len(), |k| k + 1)),
        ('\'', _) if at(i + 2) == '\'' => Some(i + 3),
        _ => None,
    }
}

/// The source without comments and literals (each replaced by a space, and the line breaks it
/// held, so that a position still has its line).
fn code_only(text: &str) -> Vec<char> {
    let b: Vec<char> = text.chars().collect();
    let mut code = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        match skip_literal(&b, i) {
            Some(end) => {
                let end = end.min(b.len()).max(i + 1);
                code.push(' ');
                code.extend(b[i..end].iter().filter(|c| **c == '\n'));
                i = end;
            }
            None => {
                code.push(b[i]);
                i += 1;
            }
        }
    }
    code
}

/// Where a path starts: at the crate root (`crate::`, or `$crate::` in a macro's body), or `up`
/// times `super::` from an inline module `depth` deep in its file (`mod tests { .. }` is 1).
#[derive(Clone, Copy, Debug, PartialEq)]
enum Anchor {
    Crate,
    Super { up: usize, depth: usize },
}

/// The first name after the anchor of every path a source text starts at `crate::`, `$crate::`
/// or `super::` (each part's first name in a group, `crate::{a::X, b}`; `*` for a glob).
fn anchored_paths(text: &str) -> Vec<(Anchor, String)> {
    let code = code_only(text);
    let word = |from: usize| code[from..].iter().take_while(|c| is_ident(**c)).collect::<String>();
    let starts = |at: usize, w: &str| {
        let w: Vec<char> = w.chars().chain("::".chars()).collect();
        code[at..].starts_with(&w)
    };
    let mut found = Vec::new();
    // For each open brace: whether it opened an inline module (`mod name {`).
    let mut braces: Vec<bool> = Vec::new();
    let mut words: [String; 2] = Default::default();
    let mut at = 0;
    while at < code.len() {
        let c = code[at];
        let boundary = at == 0 || !(is_ident(code[at - 1]) || code[at - 1] == ':');
        if c == '{' || c == '}' {
            if c == '{' {
                braces.push(words[1] == "mod" && !words[0].is_empty());
            } else {
                braces.pop();
            }
            words = Default::default();
            at += 1;
            continue;
        }
        let anchored = boundary && (starts(at, "crate") || starts(at, "super"));
        if !anchored {
            if is_ident(c) && boundary {
                let w = word(at);
                at += w.len();
                words = [w, std::mem::take(&mut words[0])];
            } else {
                if !c.is_whitespace() {
                    words = Default::default();
                }
                at += 1;
            }
            continue;
        }
        let mut after = at;
        let anchor = if starts(at, "crate") {
            after += "crate::".len();
            Anchor::Crate
        } else {
            let mut up = 0;
            while starts(after, "super") {
                (up, after) = (up + 1, after + "super::".len());
            }
            Anchor::Super { up, depth: braces.iter().filter(|m| **m).count() }
        };
        let first = |from: usize| {
            let w = word(from);
            if w.is_empty() && code.get(from) == Some(&'*') {
                "*".to_string()
            } else {
                w
            }
        };
        if code.get(after) != Some(&'{') {
            found.push((anchor, first(after)));
            at = after;
            continue;
        }
        // A group: split at the commas of its top level, the first word of each part.
        let (mut depth, mut end, mut parts) = (0, after + 1, vec![after + 1]);
        while end < code.len() {
            match code[end] {
                '{' => depth += 1,
                '}' if depth == 0 => break,
                '}' => depth -= 1,
                ',' if depth == 0 => parts.push(end + 1),
                _ => {}
            }
            end += 1;
        }
        for start in parts {
            if let Some(at) = (start..end).find(|&j| !code[j].is_whitespace()) {
                found.push((anchor, first(at)));
            }
        }
        at = end + 1;
    }
    found.retain(|(_, name)| !name.is_empty());
    found
}

/// The macros a source text defines (`macro_rules! name`), and the ones it calls by their bare
/// name (`name!(..)`, reached through `#[macro_use]` or the macro's own file).
fn macros(text: &str) -> (BTreeSet<String>, BTreeSet<String>) {
    let code = code_only(text);
    let word = |from: usize| code[from..].iter().take_while(|c| is_ident(**c)).collect::<String>();
    let (mut defined, mut called) = (BTreeSet::new(), BTreeSet::new());
    let mut at = 0;
    while at < code.len() {
        let boundary = at == 0 || !(is_ident(code[at - 1]) || code[at - 1] == ':');
        if !(boundary && is_ident(code[at])) {
            at += 1;
            continue;
        }
        let w = word(at);
        at += w.len();
        if code.get(at) != Some(&'!') || code.get(at + 1) == Some(&'=') {
            continue;
        }
        if w == "macro_rules" {
            let name_at = (at + 1..code.len()).find(|&j| !code[j].is_whitespace()).unwrap_or(at);
            defined.insert(word(name_at));
        } else {
            called.insert(w);
        }
    }
    (defined, called)
}

/// The graph of a crate's files, each as its module path (`["x"]` for `x.rs` or `x/mod.rs`,
/// `["x", "y"]` for `x/y.rs`, `[]` for the root) and text; `root` names the root's file (`main`,
/// `lib`). A node is a top-level module (a folder's files are one). A name after the anchor that
/// is no module is a macro of the crate (`crate::for_each_scenario!`: an edge to the module that
/// defines it), or an item of the root.
fn graph_of(files: &[(Vec<String>, String)], root: &str) -> Graph {
    let tops = files.iter().filter_map(|(m, _)| m.first());
    let modules: BTreeSet<&str> = tops.map(String::as_str).collect();
    let mut defined_in: BTreeMap<String, String> = BTreeMap::new();
    for (module, text) in files {
        for name in macros(text).0 {
            defined_in.insert(name, module.first().cloned().unwrap_or_else(|| root.to_string()));
        }
    }
    let mut graph = Graph::default();
    for (path, text) in files {
        let Some(module) = path.first() else { continue };
        let mut names = BTreeSet::new();
        for (anchor, name) in anchored_paths(text) {
            match anchor {
                Anchor::Crate => names.insert(name),
                // Up to the crate root from the file's own level: a top-level name.
                Anchor::Super { up, depth } if up > depth && up - depth == path.len() => {
                    names.insert(name)
                }
                // Inside the file, or inside its own folder.
                Anchor::Super { .. } => false,
            };
        }
        let calls = macros(text).1.into_iter().filter(|m| defined_in.contains_key(m));
        names.extend(calls);
        let targets = graph.edges.entry(module.clone()).or_default();
        for name in names {
            let target = match defined_in.get(&name) {
                Some(definer) if !modules.contains(name.as_str()) => definer.clone(),
                _ => name.clone(),
            };
            if target == *module {
                continue;
            }
            if target != root && modules.contains(target.as_str()) {
                targets.insert(target);
            } else {
                graph.root_items.push(format!("{module} imports {root}.rs's `{name}`"));
            }
        }
    }
    graph
}

/// The modules of the crate whose root is `dir/root.rs`: every file under `dir` but `bin/`
/// (programs of their own, not modules of the crate).
fn crate_graph(dir: &Path, root: &str) -> Graph {
    let mut files: Vec<(Vec<String>, String)> = Vec::new();
    for path in rust_files(dir) {
        let rel = path.strip_prefix(dir).expect("under the crate's folder");
        let mut module: Vec<String> = rel.iter().map(|c| c.to_string_lossy().to_string()).collect();
        if module.first().is_some_and(|m| m == "bin") {
            continue;
        }
        let file = module.pop().expect("a file name");
        let stem = file.strip_suffix(".rs").unwrap_or(&file);
        if !(stem == "mod" || (stem == root && module.is_empty())) {
            module.push(stem.to_string());
        }
        files.push((module, std::fs::read_to_string(&path).expect("read a source file")));
    }
    graph_of(&files, root)
}

/// The binary's modules: each file of `src/` (a folder counts as its top-level module).
fn binary_graph() -> Graph {
    crate_graph(&src(), "main")
}

/// `schedlab-verify`'s modules: each file of `verify/src`.
fn verify_graph() -> Graph {
    crate_graph(&Path::new(env!("CARGO_MANIFEST_DIR")).join("verify/src"), "lib")
}

/// The stage map of a crate root's documentation: module → its stage (0 is the bottom).
fn stage_map(root: &str) -> BTreeMap<String, usize> {
    let doc = root.lines().filter_map(|l| l.strip_prefix("//!"));
    let doc: Vec<&str> = doc.map(str::trim).collect();
    let map_at = doc.iter().position(|l| l.starts_with("## The map")).expect("a map section");
    let block = doc[map_at..].iter().skip_while(|l| **l != "```text").skip(1);
    let block = block.take_while(|l| **l != "```");
    let mut stages = BTreeMap::new();
    let (mut level, mut naming) = (None, false);
    for line in block {
        let mut rest = *line;
        let first = line.split_whitespace().next().unwrap_or("");
        if let Ok(n) = first.parse::<usize>() {
            (level, naming) = (Some(n), true);
            rest = &line[first.len()..];
        }
        if !naming {
            continue;
        }
        let names = match rest.split_once(':') {
            Some((names, _)) => {
                naming = false;
                names
            }
            None => rest,
        };
        for name in names.split([',', ' ']).filter(|n| !n.is_empty()) {
            stages.insert(name.to_string(), level.expect("a stage number"));
        }
    }
    stages
}

fn binary_stages() -> BTreeMap<String, usize> {
    stage_map(&std::fs::read_to_string(src().join("main.rs")).expect("read src/main.rs"))
}

/// Every edge to the same or a higher stage, from or to a module in no stage, and every import
/// of `main.rs`.
fn stage_violations(graph: &Graph, stages: &BTreeMap<String, usize>) -> Vec<String> {
    let mut bad = graph.root_items.clone();
    for (from, targets) in &graph.edges {
        for to in targets {
            match (stages.get(from), stages.get(to)) {
                (Some(a), Some(b)) if b < a => {}
                (Some(a), Some(b)) => {
                    bad.push(format!("{from} (stage {a}) imports {to} (stage {b})"))
                }
                _ => bad.push(format!("{from} -> {to}: a module in no stage of main.rs's map")),
            }
        }
    }
    bad
}

/// A circle in the graph, as the modules round it (the first named again at the end), if any:
/// modules that import nothing left are peeled off until none is; what stays holds a circle.
fn find_circle(edges: &BTreeMap<String, BTreeSet<String>>) -> Option<Vec<String>> {
    let mut left: BTreeSet<&String> = edges.keys().collect();
    loop {
        let peel: Vec<&String> = left
            .iter()
            .copied()
            .filter(|m| !edges[*m].iter().any(|to| left.contains(to)))
            .collect();
        if peel.is_empty() {
            break;
        }
        for m in peel {
            left.remove(m);
        }
    }
    // Every module left imports one left: walking such imports must come back round.
    let mut walk: Vec<&String> = vec![*left.iter().next()?];
    loop {
        let here = walk[walk.len() - 1];
        let next = edges[here].iter().find(|to| left.contains(to)).expect("it imports one left");
        if let Some(start) = walk.iter().position(|m| *m == next) {
            let mut circle: Vec<String> = walk[start..].iter().map(|m| m.to_string()).collect();
            circle.push(next.clone());
            return Some(circle);
        }
        walk.push(left.get(next).copied().expect("left"));
    }
}

/// The sources whose errors are typed: the library crates' and the command-line tool's (its
/// `main` prints them, but a caller inside it still matches on what went wrong).
const TYPED_ERROR_SOURCES: [&str; 5] =
    ["core/src", "variants/src", "verify/src", "benches/src", "src"];

/// Every `Result<T, String>` in a source text (a type, a turbofish, an alias), as the line it
/// stands on and the type as written. The arguments are split at the commas of the top level, so
/// that nested generics (`Result<Vec<(u8, String)>, String>`), closures' arrows
/// (`Result<Box<dyn Fn() -> u8>, String>`) and one-argument aliases (`fmt::Result`) read right.
fn string_errors(text: &str) -> Vec<(usize, String)> {
    let code = code_only(text);
    let mut found = Vec::new();
    let word: Vec<char> = "Result".chars().collect();
    for at in 0..code.len().saturating_sub(word.len()) {
        let bounded = at == 0 || !is_ident(code[at - 1]);
        if !bounded || code[at..at + word.len()] != word[..] {
            continue;
        }
        let mut i = at + word.len();
        let skip_ws = |mut i: usize| {
            while code.get(i).is_some_and(|c| c.is_whitespace()) {
                i += 1;
            }
            i
        };
        i = skip_ws(i);
        if code.get(i) == Some(&':') && code.get(i + 1) == Some(&':') {
            i = skip_ws(i + 2);
        }
        if code.get(i) != Some(&'<') {
            continue;
        }
        let (mut depth, mut args, mut end) = (0usize, vec![String::new()], i + 1);
        while let Some(&c) = code.get(end) {
            match c {
                '<' | '(' | '[' => depth += 1,
                '>' if code[end - 1] == '-' => {}
                '>' | ')' | ']' if depth == 0 => break,
                '>' | ')' | ']' => depth -= 1,
                ',' if depth == 0 => {
                    args.push(String::new());
                    end += 1;
                    continue;
                }
                _ => {}
            }
            args.last_mut().expect("an argument").push(c);
            end += 1;
        }
        // A trailing comma leaves an empty last argument.
        if args.len() > 1 && args.last().is_some_and(|a| a.trim().is_empty()) {
            args.pop();
        }
        let error: String = args.last().expect("an argument").split_whitespace().collect();
        let is_string = ["String", "std::string::String", "alloc::string::String"];
        if args.len() == 2 && is_string.contains(&error.as_str()) {
            let line = code[..at].iter().filter(|c| **c == '\n').count() + 1;
            let written: String = code[at..=end.min(code.len() - 1)].iter().collect();
            found.push((line, written.split_whitespace().collect::<Vec<_>>().join(" ")));
        }
    }
    found
}

#[test]
fn every_module_of_src_is_in_a_stage_of_the_map() {
    let graph = binary_graph();
    let stages = binary_stages();
    let modules: BTreeSet<&String> = graph.edges.keys().collect();
    assert!(modules.len() > 15, "too few modules read: {modules:?}");
    let unplaced: Vec<&&String> = modules.iter().filter(|m| !stages.contains_key(**m)).collect();
    assert!(unplaced.is_empty(), "modules of src/ in no stage of main.rs's map: {unplaced:?}");
    let absent: Vec<&String> = stages.keys().filter(|m| !modules.contains(m)).collect();
    assert!(absent.is_empty(), "main.rs's map names modules src/ does not have: {absent:?}");
}

#[test]
fn each_stage_of_src_imports_only_the_stages_below_it() {
    let graph = binary_graph();
    let bad = stage_violations(&graph, &binary_stages());
    assert!(bad.is_empty(), "imports against main.rs's stage map:\n{}", bad.join("\n"));
}

#[test]
fn src_modules_form_no_import_circle() {
    let graph = binary_graph();
    if let Some(circle) = find_circle(&graph.edges) {
        panic!("import circle in src/: {}\n(graph: {:#?})", circle.join(" -> "), graph.edges);
    }
}

/// The files of a planted crate, each as its module path and text.
fn planted(files: &[(&str, &str)]) -> Vec<(Vec<String>, String)> {
    let path = |m: &str| m.split("::").filter(|s| !s.is_empty()).map(str::to_string).collect();
    files.iter().map(|(m, t)| (path(m), t.to_string())).collect()
}

/// The checker itself: it reads grouped and inline paths, passes over comments and literals,
/// reads a map, and finds a planted circle, a planted upward import and an import of the root
/// (a check that cannot fail proves nothing).
#[test]
fn the_check_sees_a_planted_circle_an_upward_import_and_the_root() {
    let files = planted(&[
        ("", "//! x\nmod low; mod mid; mod high;\nfn helper() {}"),
        (
            "low",
            "// crate::high\nconst S: &str = \"crate::high\";\n\
                 const C: char = '\"';\nfn f<'a>() {}",
        ),
        (
            "mid",
            "use crate::{low::{X, Y}, high as H};\nfn g() { crate::low::f(); }\n\
                 const R: &str = r#\"crate::main\"#;",
        ),
        ("high", "use crate::mid::g;\nfn h() { crate::helper(); }"),
    ]);
    let graph = graph_of(&files, "main");
    let set = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<BTreeSet<String>>();
    assert_eq!(graph.edges["low"], set(&[]), "nothing from comments, strings or characters");
    assert_eq!(graph.edges["mid"], set(&["low", "high"]), "a grouped import and an inline path");
    assert_eq!(graph.edges["high"], set(&["mid"]));
    assert_eq!(graph.root_items, vec!["high imports main.rs's `helper`".to_string()]);

    let circle = find_circle(&graph.edges).expect("the planted circle mid -> high -> mid");
    assert_eq!(circle.first(), circle.last());
    assert_eq!(set(&circle.iter().map(String::as_str).collect::<Vec<_>>()), set(&["mid", "high"]));

    let map = "//! ## The map\n//!\n//! ```text\n//! 2 high: top\n\
               //! 1 mid,\n//!   low: rest\n//! ```";
    let stages = stage_map(map);
    assert_eq!(stages, BTreeMap::from([("high".into(), 2), ("mid".into(), 1), ("low".into(), 1)]));
    let bad = stage_violations(&graph, &stages);
    assert!(bad.contains(&"mid (stage 1) imports high (stage 2)".to_string()), "{bad:?}");
    assert!(bad.contains(&"mid (stage 1) imports low (stage 1)".to_string()), "sideways: {bad:?}");

    // Without the upward import and the root's item: no circle, and a proper order passes.
    let mut fixed = files.clone();
    fixed[2].1 = "use crate::low::X;".into();
    fixed[3].1 = "use crate::mid::g;".into();
    let graph = graph_of(&fixed, "main");
    assert!(find_circle(&graph.edges).is_none(), "{:?}", graph.edges);
    let ordered = BTreeMap::from([("high".into(), 2), ("mid".into(), 1), ("low".into(), 0)]);
    assert!(stage_violations(&graph, &ordered).is_empty());
}

/// The other edges a library's modules have: `super::` from a top-level file (the root) and
/// from a folder's file (its own folder, or past it), `$crate::` in a macro's body, an exported
/// macro called through the root (`crate::each!`) or by its bare name; none from `super::`
/// inside an inline module. And the circle they close is found.
#[test]
fn the_check_sees_super_paths_and_macros() {
    let files = planted(&[
        ("", "pub mod history; pub mod scenarios; pub mod harness; pub mod deep;"),
        (
            "history",
            "use super::invariant::require;\n#[cfg(test)]\n\
                     mod tests {\n    use super::*;\n    use super::super::harness;\n}",
        ),
        ("invariant", "pub fn require() {}"),
        (
            "scenarios",
            "#[macro_export]\nmacro_rules! each {\n\
                       () => { $crate::history::x() };\n}",
        ),
        ("harness", "fn f() { crate::each!(); }"),
        ("deep", "mod inner;"),
        ("deep::inner", "use super::Thing;\nuse super::super::invariant;\nfn g() { each!(); }"),
    ]);
    let graph = graph_of(&files, "lib");
    let set = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<BTreeSet<String>>();
    assert_eq!(graph.edges["history"], set(&["invariant", "harness"]), "super:: at depth 0 and 1");
    assert_eq!(graph.edges["scenarios"], set(&["history"]), "$crate:: in a macro's body");
    assert_eq!(graph.edges["harness"], set(&["scenarios"]), "an exported macro, through the root");
    let deep = set(&["invariant", "scenarios"]);
    assert_eq!(graph.edges["deep"], deep, "from a folder: past it; a bare macro");
    assert!(graph.root_items.is_empty(), "{:?}", graph.root_items);
    let circle = find_circle(&graph.edges).expect("history -> harness -> scenarios -> history");
    let round = set(&circle.iter().map(String::as_str).collect::<Vec<_>>());
    assert_eq!(round, set(&["history", "harness", "scenarios"]));
}

#[test]
fn verify_modules_form_no_import_circle() {
    let graph = verify_graph();
    assert!(graph.edges.len() > 6, "too few modules read: {:?}", graph.edges.keys());
    assert!(graph.edges.values().any(|to| !to.is_empty()), "no edge read: {:#?}", graph.edges);
    if let Some(circle) = find_circle(&graph.edges) {
        panic!("import circle in verify/src: {}\n(graph: {:#?})", circle.join(" -> "), graph.edges);
    }
    let through_root = &graph.root_items;
    assert!(through_root.is_empty(), "paths through lib.rs hide an edge: {through_root:?}");
}

/// An error says what went wrong as a type (`ExperimentError`, `NoInterval`, `ChartError` ...):
/// a caller can match on it and a message cannot drift from its cause. Test code included: a
/// check's failure is a type too (`report::contract::ContractViolation`). The library crates and
/// the command-line tool alike (issue 44, item 5).
#[test]
fn no_crate_returns_string_errors() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut found = Vec::new();
    let mut read = 0;
    for dir in TYPED_ERROR_SOURCES {
        for path in rust_files(&root.join(dir)) {
            let text = std::fs::read_to_string(&path).expect("read a source file");
            read += 1;
            let shown = path.strip_prefix(root).expect("under the workspace").display().to_string();
            let at = |(line, written)| format!("{shown}:{line}: {written}");
            found.extend(string_errors(&text).into_iter().map(at));
        }
    }
    assert!(read > 100, "too few source files read: {read}");
    let found = found.join("\n");
    assert!(found.is_empty(), "Result<_, String> in the sources (type its error):\n{found}");
}

/// The scan itself: it finds the class however the type is written and passes over what only
/// looks like it (a check that cannot fail proves nothing).
#[test]
fn the_scan_sees_every_spelling_of_a_string_error() {
    let text = "fn a() -> Result<(), String> {}\n\
                fn b() -> Result<Vec<(u8, String)>, String> {}\n\
                fn c() -> Result<Box<dyn Fn(u8) -> u8>, std::string::String> {}\n\
                type D = Result <\n    u8,\n    String,\n>;\n\
                fn e() { let _ = Result::<u8, String>::Ok(1); }\n\
                fn f() -> fmt::Result {}\n\
                fn g() -> Result<String, Error> {}\n\
                fn h() -> Result<Option<String>, Box<String>> {}\n\
                fn i() -> io::Result<String> {}\n\
                // fn j() -> Result<(), String>\n\
                const K: &str = \"Result<(), String>\";\n\
                fn l() -> MyResult<u8, String> {}";
    let lines: Vec<usize> = string_errors(text).into_iter().map(|(line, _)| line).collect();
    assert_eq!(lines, [1, 2, 3, 4, 8], "{:?}", string_errors(text));
    assert_eq!(string_errors(text)[1].1, "Result<Vec<(u8, String)>, String>");
}
