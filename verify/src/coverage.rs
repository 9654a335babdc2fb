//! The coverage map of the models (issue 35, item 4): which branch points of the core
//! (`schedlab_core`'s `branch!` markers, recorded only under a checker) the models reach.
//!
//! - [`declared`] scans `core/src` for the markers: the set of branch points comes from the code,
//!   so a new marker that no model reaches fails `tests/coverage_map.rs`.
//! - [`argued`] reads the table of `notes/verify.md` ("Branch points no model reaches"): each
//!   point no model of a checker reaches, with the checkers that miss it and a one-line argument.
//! - [`unmarked_branches`] is the heuristic that keeps the markers from being left out: in every
//!   function of [`INSTRUMENTED`], a line that branches (`if`, `else`, a match arm `=>`, `return`,
//!   a `?`) must have a marker within three lines above it and four below (eight above a
//!   `return`: the marker opens the arm the `return` ends). Lines of fault-injection switches
//!   (`fault::active`), assertions and comments are not branch points, nor a line whose comment
//!   says "not a branch point" (a value chosen by an `if`; the arm of a fault). It sees only what it can find by text: a branch inside an expression on a line of
//!   its own (a closure's `if`, a `match` inside a call) counts as a line like any other, and a
//!   function missing from the list is not scanned (`every_marked_function_is_listed` keeps the
//!   list and the markers together).

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// The workspace root (this crate is `verify/`).
pub fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().expect("verify/ has a parent").to_path_buf()
}

/// The functions that touch shared state, by file (relative to the workspace), whose every
/// branch carries a marker.
pub const INSTRUMENTED: &[(&str, &[&str])] = &[
    (
        "core/src/state/mod.rs",
        &[
            "put_queue",
            "release_listed",
            "free_queue",
            "expire",
            "select_queue",
            "run_idle_timer",
            "emit_dispatch_stats",
            "dispatch_one",
            "lookup_bio_group",
            "bio_merge",
            "over_limit",
            "back_merge",
            "insert",
            "complete",
        ],
    ),
    ("core/src/state/cgroup.rs", &["move_queue_publishing", "offline_group", "put_online_ref"]),
    (
        "core/src/scheduler.rs",
        &[
            "create_group",
            "remove_group",
            "remove_group_body",
            "group_stats",
            "inspect_group",
            "spawn_process",
            "dispatch_body",
            "run_idle_timer",
            "insert_body",
            "move_to",
            "move_to_body",
            "bio_merge_body",
            "finish_body",
        ],
    ),
    ("core/src/objects/rstat.rs", &["add", "push", "flush_locked"]),
];

/// Every place the core defers an update past the scheduler lock (or reads a hint before it),
/// with the special-case branch points of its path (issue 45, item 1): each must be reached by a
/// three-actor scenario of the generated suite (`scenarios`, the names holding `three_actors`),
/// and `notes/verify.md` ("Three-actor coverage") names one per site and branch;
/// `tests/coverage_map.rs` checks both.
pub const DEFERRAL_SITES: &[(&str, &[&str])] = &[
    // `Process::insert_body` → `run_deferred` (Path::Insert): io_add, io_merged, io_remove,
    // idle_time.
    (
        "direct insert's batch",
        &[
            "insert.runs-deferred",
            "insert.queues",
            "insert.merges",
            "merge.absorbs-next",
            "insert.at-head",
            "insert.stops-idle-timer",
            "insert.emits-idle-time",
        ],
    ),
    // `Process::bio_merge_body` → `run_deferred` (Path::Insert), and its early returns.
    (
        "bio merge's batch",
        &[
            "bio_merge.runs-deferred",
            "bio_merge.back",
            "bio_merge.front",
            "bio_merge.at-head",
            "bio_merge.none",
        ],
    ),
    // `Process::limit_depth` under the lock, between the bio merge and the insert (no batch of
    // its own: its early return sends the submission on to the insert's).
    ("depth limit before the insert", &["limit.inactive", "limit.under"]),
    // `Scheduler::dispatch_body`: the splice's insert work (lists) and the dispatch's own
    // updates in one batch, the listed requests' pins released after it.
    (
        "dispatch's batch and the splice",
        &[
            "dispatch.runs-deferred",
            "dispatch.splices",
            "dispatch.priority-list",
            "dispatch.from-queue",
            "dispatch.releases-listed",
            "release_listed.frees",
        ],
    ),
    // `Dispatched::finish_body`: the completion's statistics before the lock, the request the
    // queue's last pin.
    (
        "completion's deferred statistics",
        &["finish.deferred-completion-stats", "complete.expires", "put_queue.frees"],
    ),
    // `Process::count_at_submit` (mainline) and the rstat per-CPU adds (`RstatLists::add`).
    (
        "per-CPU adds (rstat, mainline's count at submission)",
        &["rstat.add-queues-group", "rstat.add-already-queued"],
    ),
    // The in-service hint read by `Scheduler::run_idle_timer` before its lock.
    ("idle timer's in-service hint", &["timer.read-queue-expired", "timer.read-queue-in-service"]),
    // A queue held by listings only (`put_queue`), and the move that must not take it for freed.
    ("listed pins of a queue", &["put_queue.listed-pins-it", "move.expired-queue-still-listed"]),
];

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).expect("reading core/src") {
        let path = entry.expect("a directory entry").path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// The markers on code lines of `source` (not in comments): their names.
pub fn markers_in(source: &str) -> Vec<String> {
    let mut out = Vec::new();
    for line in source.lines() {
        let code = line.trim_start();
        if code.starts_with("//") {
            continue;
        }
        let mut rest = code;
        while let Some(at) = rest.find("branch!(\"") {
            let after = &rest[at + "branch!(\"".len()..];
            let end = after.find('"').expect("a marker's name is a literal");
            out.push(after[..end].to_string());
            rest = &after[end..];
        }
    }
    out
}

/// Every branch point declared in `core/src`, with the file it is in. Panics on a name used twice.
pub fn declared() -> BTreeMap<String, String> {
    let root = workspace();
    let mut files = Vec::new();
    rust_files(&root.join("core/src"), &mut files);
    files.sort();
    let mut out = BTreeMap::new();
    for file in files {
        let source = std::fs::read_to_string(&file).expect("reading a core source file");
        let rel = file.strip_prefix(&root).unwrap_or(&file).display().to_string();
        for name in markers_in(&source) {
            if let Some(other) = out.insert(name.clone(), rel.clone()) {
                panic!("branch point `{name}` is declared twice ({other}, {rel})");
            }
        }
    }
    out
}

/// The cells of the table rows (`| a | b | c |` lines, three cells at least) under the
/// `notes/verify.md` heading that contains `heading`, up to the next heading.
fn notes_table(heading: &str) -> Vec<Vec<String>> {
    let notes = std::fs::read_to_string(workspace().join("notes/verify.md"))
        .expect("reading notes/verify.md");
    let mut out = Vec::new();
    let mut inside = false;
    for line in notes.lines() {
        if line.starts_with('#') {
            inside = line.contains(heading);
            continue;
        }
        if !inside || !line.starts_with('|') {
            continue;
        }
        let cells: Vec<String> =
            line.trim_matches('|').split('|').map(|c| c.trim().to_string()).collect();
        if cells.len() >= 3 {
            out.push(cells);
        }
    }
    out
}

/// The branch points `notes/verify.md` argues no model of a checker reaches: name → (the checkers
/// that miss it, the argument). Rows of its table `| `name` | checkers | argument |` under the
/// heading "Branch points no model reaches".
pub fn argued() -> BTreeMap<String, (BTreeSet<String>, String)> {
    let mut out = BTreeMap::new();
    for cells in notes_table("Branch points no model reaches") {
        if !cells[0].starts_with('`') {
            continue;
        }
        let name = cells[0].trim_matches('`').to_string();
        let checkers =
            cells[1].split(',').map(|c| c.trim().to_string()).filter(|c| !c.is_empty()).collect();
        out.insert(name, (checkers, cells[2].clone()));
    }
    out
}

/// The rows of `notes/verify.md`'s table under the heading "Three-actor coverage":
/// `| site | `branch point` | `scenario`, ... |` → (site, branch point, scenarios).
pub fn three_actor_table() -> Vec<(String, String, Vec<String>)> {
    let mut out = Vec::new();
    for cells in notes_table("Three-actor coverage") {
        if !cells[1].starts_with('`') {
            continue;
        }
        let scenarios = cells[2]
            .split(',')
            .map(|c| c.trim().trim_matches('`').to_string())
            .filter(|c| !c.is_empty())
            .collect();
        out.push((cells[0].clone(), cells[1].trim_matches('`').to_string(), scenarios));
    }
    out
}

/// The body of `fn name` in `source` (from its signature to its closing brace), and the line it
/// starts on; `None` if there is no such function.
fn function_body<'a>(source: &'a str, name: &str) -> Vec<(usize, &'a str)> {
    let lines: Vec<&str> = source.lines().collect();
    let mut found = Vec::new();
    let needle = format!("fn {name}(");
    let needle_generic = format!("fn {name}<");
    for (start, line) in lines.iter().enumerate() {
        if line.trim_start().starts_with("//")
            || !(line.contains(&needle) || line.contains(&needle_generic))
        {
            continue;
        }
        let mut depth = 0i32;
        let mut opened = false;
        for (i, l) in lines.iter().enumerate().skip(start) {
            found.push((i + 1, *l));
            for c in l.chars() {
                match c {
                    '{' => {
                        depth += 1;
                        opened = true;
                    }
                    '}' => depth -= 1,
                    _ => {}
                }
            }
            if opened && depth == 0 {
                break;
            }
            if !opened && l.trim_end().ends_with(';') {
                break; // a declaration without a body
            }
        }
    }
    found
}

/// Whether a code line branches (the heuristic of the module documentation). A trailing comment
/// is not code; a line whose comment says "not a branch point" (a value chosen by an `if`, a fault
/// switch's arm) is exempt.
fn branches(line: &str) -> bool {
    let code = line.trim();
    if code.starts_with("//") || code.contains("not a branch point") {
        return false;
    }
    let code = code.split(" // ").next().unwrap_or(code);
    let words = ["if ", "} else", "else {", "return", "=> ", ")?", "?;"];
    let skip = ["fault::active", "debug_assert", "assert!", "expect("];
    if skip.iter().any(|s| code.contains(s)) {
        return false;
    }
    words.iter().any(|w| code.contains(w))
}

/// Lines of the [`INSTRUMENTED`] functions that branch with no marker on them or on the next
/// three lines: `file:line: code`. Also a listed function that cannot be found.
pub fn unmarked_branches() -> Vec<String> {
    let root = workspace();
    let mut out = Vec::new();
    for (file, functions) in INSTRUMENTED {
        let source =
            std::fs::read_to_string(root.join(file)).expect("reading an instrumented file");
        for name in *functions {
            let body = function_body(&source, name);
            if body.is_empty() {
                out.push(format!("{file}: fn {name} not found"));
                continue;
            }
            for (k, (line, text)) in body.iter().enumerate().skip(1) {
                let code = text.trim();
                // "not a branch point" is said on the branch's line, or (where rustfmt moved a
                // trailing comment into the block it opens) first thing on the next.
                let next = body.get(k + 1).map_or("", |(_, t)| t.trim());
                if !branches(code) || next.starts_with("// not a branch point") {
                    continue;
                }
                // A marker opens the arm it marks (up to four lines below its condition), or
                // precedes the `return` that ends it (up to twelve lines above: rustfmt spreads
                // one call over several).
                let before = if code.contains("return") { 12 } else { 3 };
                let window = &body[k.saturating_sub(before)..body.len().min(k + 5)];
                let marked = window
                    .iter()
                    .any(|(_, t)| t.contains("branch!(") && !t.trim_start().starts_with("//"));
                if !marked {
                    out.push(format!("{file}:{line}: {code}"));
                }
            }
        }
    }
    out
}

/// Every function of the instrumented files that holds a marker.
pub fn marked_functions() -> BTreeSet<(String, String)> {
    let root = workspace();
    let mut out = BTreeSet::new();
    for (file, _) in INSTRUMENTED {
        let source =
            std::fs::read_to_string(root.join(file)).expect("reading an instrumented file");
        let mut current: Option<String> = None;
        for line in source.lines() {
            let code = line.trim_start();
            if let Some(at) = code.find("fn ").filter(|_| !code.starts_with("//")) {
                let after = &code[at + 3..];
                let end =
                    after.find(|c: char| !(c.is_alphanumeric() || c == '_')).unwrap_or(after.len());
                current = Some(after[..end].to_string());
            }
            if !code.starts_with("//") && code.contains("branch!(") {
                if let Some(f) = &current {
                    out.insert((file.to_string(), f.clone()));
                }
            }
        }
    }
    out
}

#[cfg(all(test, not(any(loom, shuttle))))]
mod tests {
    use super::*;

    #[test]
    fn every_branch_of_the_instrumented_functions_has_a_marker() {
        let missing = unmarked_branches();
        assert!(
            missing.is_empty(),
            "branches without a `branch!` marker (core/src/coverage.rs):\n{}",
            missing.join("\n")
        );
    }

    #[test]
    fn every_marked_function_is_listed() {
        let listed: BTreeSet<(String, String)> = INSTRUMENTED
            .iter()
            .flat_map(|(f, fns)| fns.iter().map(move |n| (f.to_string(), n.to_string())))
            .collect();
        let unlisted: Vec<_> = marked_functions().difference(&listed).cloned().collect();
        assert!(
            unlisted.is_empty(),
            "functions with markers missing from INSTRUMENTED: {unlisted:?}"
        );
    }

    #[test]
    fn the_declared_points_and_the_arguments_agree_on_names() {
        let declared = declared();
        assert!(declared.len() > 50, "the scan found only {} branch points", declared.len());
        let stale: Vec<_> = argued().into_keys().filter(|n| !declared.contains_key(n)).collect();
        assert!(
            stale.is_empty(),
            "notes/verify.md argues branch points that no longer exist: {stale:?}"
        );
    }

    #[test]
    fn every_deferral_site_branch_is_declared_and_in_the_notes_table() {
        let declared = declared();
        let table = three_actor_table();
        for (site, points) in DEFERRAL_SITES {
            for point in *points {
                assert!(declared.contains_key(*point), "{site}: `{point}` is no branch point");
                let row = table.iter().find(|(s, p, _)| s == site && p == point);
                let named = row.is_some_and(|(_, _, scenarios)| !scenarios.is_empty());
                assert!(named, "notes/verify.md, three-actor table: no row for {site} × `{point}`");
            }
        }
        for (site, point, _) in &table {
            let point = point.as_str();
            let listed =
                DEFERRAL_SITES.iter().any(|(s, points)| s == site && points.contains(&point));
            assert!(listed, "notes/verify.md, three-actor table: {site} × `{point}` not a site's");
        }
    }

    #[test]
    fn the_heuristic_sees_an_unmarked_branch() {
        assert!(branches("if x > 0 {"));
        assert!(branches("} else {"));
        assert!(branches("let g = Self::lookup(&st, id)?;"));
        assert!(branches("None => return false,"));
        assert!(branches("if x { // a comment"));
        assert!(!branches("if fault::active(Fault::X) {"));
        assert!(!branches("// if this were code"));
        assert!(!branches("let d = if w { 1 } else { 0 }; // not a branch point: a value"));
        assert_eq!(markers_in("    branch!(\"a.b\");\n    // branch!(\"doc\")\n"), ["a.b"]);
    }
}
