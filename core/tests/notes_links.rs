//! Every file that the notes and the README name exists: a renamed or deleted file breaks this
//! test, not a newcomer's reading.
//!
//! What counts as a reference, in `README.md` and every `notes/**/*.md`:
//! - a markdown link `[text](target)`, resolved relative to the file that holds it. Links with a
//!   scheme (`https://…`, `mailto:`) and anchor-only links (`#…`) are skipped; an anchor after a
//!   path (`x.md#y`) is cut, and the anchor itself is not checked.
//! - a backticked span that is a path of this repository: it starts with a top-level folder of
//!   the repository (`core/`, `notes/`, `scripts/`, …) and holds only path characters. It is
//!   resolved from the repository root. A line suffix (`:12`, `:12-30`) and an item suffix
//!   (`::Type::method`) are cut. Spans with `*`, `{`, `<`, spaces or `...` are patterns or
//!   commands, not paths, and are skipped. A span may run over the lines of its paragraph (then
//!   it holds a line break and is no path).
//!
//! Not checked: fenced code blocks (commands and their output name files that the commands
//! create), bare file names (`lock.rs`), and paths outside the repository (`../shared/…`).

use std::collections::BTreeSet;
use std::path::{Component, Path, PathBuf};

mod common;
use common::files_with_extension;

/// One reference found in a note: where it is, what it says, and the repository-relative path it
/// resolves to.
#[derive(Debug)]
struct Reference {
    file: PathBuf,
    line: usize,
    written: String,
    resolved: PathBuf,
}

/// `path` with `.` and `..` folded away lexically; a `..` above the start is kept.
fn normalise(path: &Path) -> PathBuf {
    let mut parts: Vec<Component> = Vec::new();
    for part in path.components() {
        match part {
            Component::CurDir => {}
            Component::ParentDir if matches!(parts.last(), Some(Component::Normal(_))) => {
                parts.pop();
            }
            other => parts.push(other),
        }
    }
    parts.iter().collect()
}

/// The repository path a backticked span names, if it is one (see the module doc).
fn backticked_path(span: &str, tops: &BTreeSet<String>) -> Option<String> {
    let mut path = span.split("::").next().unwrap_or(span);
    if let Some((before, after)) = path.rsplit_once(':') {
        if !after.is_empty() && after.chars().all(|c| c.is_ascii_digit() || c == '-') {
            path = before;
        }
    }
    let path_chars = |c: char| c.is_ascii_alphanumeric() || "_-./".contains(c);
    if path.is_empty() || !path.chars().all(path_chars) || path.contains("...") {
        return None;
    }
    let (top, rest) = path.split_once('/')?;
    (tops.contains(top) && !rest.starts_with('/')).then(|| path.to_string())
}

/// The markdown link targets in a piece of prose (outside code spans).
fn link_targets(prose: &str) -> Vec<&str> {
    let mut targets = Vec::new();
    let mut rest = prose;
    while let Some(at) = rest.find("](") {
        rest = &rest[at + 2..];
        let Some(end) = rest.find(')') else { break };
        let inner = rest[..end].trim();
        rest = &rest[end + 1..];
        // `(target "title")` and `(<target>)` are links to `target` too.
        let target = inner.split_whitespace().next().unwrap_or("");
        let target = target.trim_start_matches('<').trim_end_matches('>');
        let external = target.contains("://") || target.starts_with("mailto:");
        if !target.is_empty() && !target.starts_with('#') && !external {
            targets.push(target);
        }
    }
    targets
}

/// Every reference in one markdown file. `file` is relative to the repository root; `tops` are
/// the repository's top-level folders.
fn references(file: &Path, text: &str, tops: &BTreeSet<String>) -> Vec<Reference> {
    let dir = file.parent().unwrap_or(Path::new(""));
    let mut found = Vec::new();
    let mut add = |line: usize, written: &str, resolved: PathBuf| {
        found.push(Reference {
            file: file.to_path_buf(),
            line,
            written: written.to_string(),
            resolved: normalise(&resolved),
        })
    };
    let mut fenced = false;
    // The code span being read: the line it opened on and its text so far. A span may run onto
    // the next lines of its paragraph (its line breaks are kept, so it is no path), never past a
    // blank line, where a backtick left open is just a backtick.
    let mut span: Option<(usize, String)> = None;
    for (index, line) in text.lines().enumerate() {
        let trimmed = line.trim_start();
        if trimmed.starts_with("```") || trimmed.starts_with("~~~") {
            fenced = !fenced;
            span = None;
            continue;
        }
        if fenced {
            continue;
        }
        if trimmed.is_empty() {
            span = None;
            continue;
        }
        for (segment_index, segment) in line.split('`').enumerate() {
            if segment_index > 0 {
                // A backtick: it closes the open span or opens one.
                match span.take() {
                    Some((start, content)) => {
                        if let Some(path) = backticked_path(&content, tops) {
                            add(start + 1, &content, PathBuf::from(path));
                        }
                    }
                    None => span = Some((index, String::new())),
                }
            }
            match span.as_mut() {
                Some((_, content)) => content.push_str(segment),
                None => {
                    for target in link_targets(segment) {
                        let path = target.split('#').next().unwrap_or(target);
                        let resolved = match path.strip_prefix('/') {
                            Some(from_root) => PathBuf::from(from_root),
                            None => dir.join(path),
                        };
                        add(index + 1, target, resolved);
                    }
                }
            }
        }
        if let Some((_, content)) = span.as_mut() {
            content.push('\n');
        }
    }
    found
}

/// The references whose target does not exist, one line each (`file:line: written -> resolved`).
fn missing(found: &[Reference], exists: impl Fn(&Path) -> bool) -> Vec<String> {
    found
        .iter()
        .filter(|r| !exists(&r.resolved))
        .map(|r| {
            format!("{}:{}: `{}` -> {}", r.file.display(), r.line, r.written, r.resolved.display())
        })
        .collect()
}

fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().expect("core/ has a parent").to_path_buf()
}

/// The repository's top-level folders (`.ci` among them), git's own and the build output left out.
fn top_folders(root: &Path) -> BTreeSet<String> {
    std::fs::read_dir(root)
        .expect("read the repository root")
        .map(|entry| entry.expect("dir entry").path())
        .filter(|path| path.is_dir())
        .filter_map(|path| path.file_name().map(|n| n.to_string_lossy().into_owned()))
        .filter(|name| name != ".git" && name != "target")
        .collect()
}

#[test]
fn notes_name_only_files_that_exist() {
    let root = repo_root();
    let tops = top_folders(&root);
    assert!(tops.contains("notes") && tops.contains("core"), "top-level folders: {tops:?}");
    let mut files = vec![root.join("README.md")];
    files_with_extension(&root.join("notes"), "md", &mut files);
    files.sort();
    let mut found = Vec::new();
    for path in &files {
        let text = std::fs::read_to_string(path).expect("read a note");
        let relative = path.strip_prefix(&root).expect("a note inside the repository");
        found.extend(references(relative, &text, &tops));
    }
    // A parser that finds nothing would pass trivially; the notes hold hundreds of references.
    assert!(found.len() >= 100, "only {} references found in {} files", found.len(), files.len());
    let broken = missing(&found, |path| root.join(path).exists());
    assert!(
        broken.is_empty(),
        "{} of {} references in {} files name files that do not exist:\n{}",
        broken.len(),
        found.len(),
        files.len(),
        broken.join("\n")
    );
}

#[test]
fn the_checker_reports_each_broken_reference_and_nothing_else() {
    let tops: BTreeSet<String> =
        ["core", "notes", "scripts"].iter().map(|s| s.to_string()).collect();
    let existing: BTreeSet<PathBuf> = [
        "notes/design.md",
        "notes/results/page.md",
        "notes/results/page/raw.json",
        "core/src/lib.rs",
        "core/src/sync",
        "scripts/test.sh",
    ]
    .iter()
    .map(PathBuf::from)
    .collect();
    let text = "\
# Page
See [design](../design.md), [raw output](page/raw.json), [a section](#what-stands),
[the web](https://example.org/x.md), [mail](mailto:a@b.c) and [gone](page/old-run.json).
The lock is in `core/src/lib.rs:12-30` (`core/src/lib.rs::Scheduler::new`), the folder
`core/src/sync/`, the script `scripts/test.sh`; `core/src/sync.rs:40` was renamed.
Patterns and outsiders are not paths: `core/src/*.rs`, `variants/src/x.rs` (no such top),
`core/src/...rs`, `cargo test -p core/x`, `../shared/reference/kernel-bfq.md`, `lib.rs`.
[`design`](../design.md#invariants) is fine; [`renamed`](../missing.md#x) is not.
A span may cross a line: `cargo run --
scripts/gone.sh` is a command, and after it `scripts/old.sh` is a path again. An open ` here

is closed by the blank line, so `notes/gone.md` is read as a path.
```
cargo run -- compare --out notes/results/page/new.json [x](notes/nope.md)
```
";
    let found = references(Path::new("notes/results/page.md"), text, &tops);
    let written: Vec<&str> = found.iter().map(|r| r.written.as_str()).collect();
    assert_eq!(
        written,
        [
            "../design.md",
            "page/raw.json",
            "page/old-run.json",
            "core/src/lib.rs:12-30",
            "core/src/lib.rs::Scheduler::new",
            "core/src/sync/",
            "scripts/test.sh",
            "core/src/sync.rs:40",
            "../design.md#invariants",
            "../missing.md#x",
            "scripts/old.sh",
            "notes/gone.md",
        ],
        "references found"
    );
    let broken = missing(&found, |path| existing.contains(path));
    assert_eq!(
        broken,
        [
            "notes/results/page.md:3: `page/old-run.json` -> notes/results/page/old-run.json",
            "notes/results/page.md:5: `core/src/sync.rs:40` -> core/src/sync.rs",
            "notes/results/page.md:8: `../missing.md#x` -> notes/missing.md",
            "notes/results/page.md:10: `scripts/old.sh` -> scripts/old.sh",
            "notes/results/page.md:12: `notes/gone.md` -> notes/gone.md",
        ]
    );
}

/// The `.rs` paths a `Cargo.toml` comment names (`# ... (benches/src/files/output.rs)`), each
/// resolved from the repository root or, failing that, from the manifest's own folder (a
/// crate-relative `src/profile.rs`). Only comment text is read.
fn cargo_comment_paths(manifest: &Path, text: &str, root: &Path) -> Vec<(usize, String, bool)> {
    let dir = manifest.parent().unwrap_or(Path::new(""));
    let mut found = Vec::new();
    for (index, line) in text.lines().enumerate() {
        let Some((_, comment)) = line.split_once('#') else { continue };
        for word in comment.split(|c: char| c.is_whitespace() || "()`,;:".contains(c)) {
            let word = word.trim_end_matches('.');
            if word.contains('/') && word.ends_with(".rs") {
                let exists = root.join(word).exists() || root.join(dir).join(word).exists();
                found.push((index + 1, word.to_string(), exists));
            }
        }
    }
    found
}

/// Issue 34, item 5: a file a manifest's comment names exists (the comments explain why each
/// dependency is there, pointing at the file that uses it).
#[test]
fn cargo_comments_name_only_files_that_exist() {
    let root = repo_root();
    let mut manifests = vec![PathBuf::from("Cargo.toml")];
    for top in top_folders(&root) {
        if root.join(&top).join("Cargo.toml").exists() {
            manifests.push(Path::new(&top).join("Cargo.toml"));
        }
    }
    let mut named = 0;
    let mut broken = Vec::new();
    for manifest in &manifests {
        let text = std::fs::read_to_string(root.join(manifest)).expect("read a manifest");
        for (line, word, exists) in cargo_comment_paths(manifest, &text, &root) {
            named += 1;
            if !exists {
                broken.push(format!("{}:{line}: {word}", manifest.display()));
            }
        }
    }
    assert!(named >= 3, "only {named} file names found in {} manifests' comments", manifests.len());
    assert!(
        broken.is_empty(),
        "manifest comments name files that do not exist:\n{}",
        broken.join("\n")
    );
}

/// Number words the notes use for counts.
const NUMBER_WORDS: &[&str] = &[
    "zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten",
    "eleven", "twelve",
];

/// The counts of *all* variants a text states: "all N variants", "the N variants", "every N
/// variants", "N registered variants" (N a digit string or a number word). A count of some of
/// them ("two variants", "the five variants measured") is not one of these forms... unless it
/// says "the N variants"; such a sentence in a dated results page is history, so results pages
/// are not read.
fn stated_variant_counts(text: &str) -> Vec<(usize, String, usize)> {
    let mut found = Vec::new();
    for (index, line) in text.lines().enumerate() {
        let words: Vec<String> = line
            .split(|c: char| !c.is_ascii_alphanumeric() && c != '-')
            .filter(|w| !w.is_empty())
            .map(|w| w.to_ascii_lowercase())
            .collect();
        for window in words.windows(3) {
            let count_at = |w: &str| {
                w.parse::<usize>().ok().or_else(|| NUMBER_WORDS.iter().position(|n| *n == w))
            };
            let stated = match (window[0].as_str(), window[1].as_str(), window[2].as_str()) {
                ("all" | "the" | "every", n, "variants") => count_at(n),
                (n, "registered", "variants") => count_at(n),
                _ => None,
            };
            if let Some(n) = stated {
                found.push((index + 1, window.join(" "), n));
            }
        }
    }
    found
}

/// The registry's size: one file per variant in `variants/src` (the house rule), `lib.rs` aside.
fn registered_variants(root: &Path) -> usize {
    std::fs::read_dir(root.join("variants/src"))
        .expect("read variants/src")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| {
            p.extension().is_some_and(|e| e == "rs") && p.file_name().is_some_and(|n| n != "lib.rs")
        })
        .count()
}

/// Issue 34, item 5: a count of the variants that the README or a note states is the registry's.
#[test]
fn notes_state_the_registered_number_of_variants() {
    let root = repo_root();
    let registered = registered_variants(&root);
    assert!(registered >= 2, "{registered} variant files in variants/src");
    let mut files = vec![root.join("README.md")];
    files_with_extension(&root.join("notes"), "md", &mut files);
    let mut wrong = Vec::new();
    let mut stated = 0;
    for path in files.iter().filter(|p| !p.starts_with(root.join("notes/results"))) {
        let text = std::fs::read_to_string(path).expect("read a note");
        for (line, words, n) in stated_variant_counts(&text) {
            stated += 1;
            if n != registered {
                wrong.push(format!(
                    "{}:{line}: \"{words}\" (registered: {registered})",
                    path.strip_prefix(&root).unwrap_or(path).display()
                ));
            }
        }
    }
    assert!(stated >= 1, "no note states the number of variants: the check would be vacuous");
    assert!(
        wrong.is_empty(),
        "notes state another number of variants than the registry's:\n{}",
        wrong.join("\n")
    );
}

#[test]
fn the_count_reader_finds_the_forms_it_names() {
    let text = "All six variants pass.\nThe 8 variants, and 7 registered variants.\nTwo variants differ; the three variants measured.";
    let counts: Vec<usize> = stated_variant_counts(text).into_iter().map(|(_, _, n)| n).collect();
    assert_eq!(counts, [6, 8, 7, 3]);
}
