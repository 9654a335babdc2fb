//! The house rules that hold the shape of the sources, not their behaviour (issue 44, item 5:
//! "duplicated blocks and long lines down, not up"):
//!
//! - every Rust file of the workspace is as `rustfmt` writes it under the root's `rustfmt.toml`
//!   (100 columns), so a line of code cannot grow past the width; that includes the variant
//!   files, which `cargo fmt` does not reach (their modules are declared by a macro, the
//!   registry's `with_registry!`), so they are checked by the registry's own list;
//! - lines that `rustfmt` cannot wrap (a long string literal, a comment) may only get fewer: their
//!   count is held at a ceiling that is lowered as they are wrapped, never raised.

use std::path::Path;

mod common;
use common::rust_files;
use std::process::Command;

/// The widest a line may be, in characters (not bytes: `÷` and `µ` are one column each).
const MAX_COLUMNS: usize = 100;

/// Lines wider than [`MAX_COLUMNS`] in the workspace's `.rs` files when this rule was made
/// (2 824 by bytes before the tree was formatted; 617 characters wide after; 541 once the
/// messages and comments of the reports, the CLI and its tests were wrapped; 537 after the
/// duplicated blocks were folded; 521 once the variant files were formatted). Lower it when
/// you wrap some; raising it is what the rule exists to stop.
const LONG_LINES_CEILING: usize = 521;

/// The folders whose `.rs` files are the workspace's sources.
const SOURCE_DIRS: &[&str] = &["core", "variants", "verify", "benches", "src", "tests"];

/// The lines of `text` wider than [`MAX_COLUMNS`] characters, numbered from 1.
fn long_lines(text: &str) -> Vec<usize> {
    let wide = |(_, line): &(usize, &str)| line.chars().count() > MAX_COLUMNS;
    text.lines().enumerate().filter(wide).map(|(i, _)| i + 1).collect()
}

#[test]
fn long_lines_only_get_fewer() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let files: Vec<_> = SOURCE_DIRS.iter().flat_map(|dir| rust_files(&root.join(dir))).collect();
    assert!(files.len() > 150, "too few source files read: {}", files.len());
    let mut count = 0;
    let mut worst: Vec<(usize, String)> = Vec::new();
    for path in &files {
        let text = std::fs::read_to_string(path).expect("read a source file");
        let n = long_lines(&text).len();
        count += n;
        let shown = path.strip_prefix(root).expect("under the workspace").display();
        worst.push((n, shown.to_string()));
    }
    worst.sort_by(|a, b| b.cmp(a));
    let worst: Vec<String> = worst.iter().take(5).map(|(n, f)| format!("{f}: {n}")).collect();
    assert!(
        count <= LONG_LINES_CEILING,
        "{count} lines are wider than {MAX_COLUMNS} columns, more than the ceiling of \
         {LONG_LINES_CEILING}: wrap the new ones (the most: {})",
        worst.join(", ")
    );
    if count < LONG_LINES_CEILING {
        println!("{count} long lines: lower LONG_LINES_CEILING to {count}");
    }
}

/// The count is of characters, and a line at the width is not long (a check that cannot fail
/// proves nothing: this one is seen to count).
#[test]
fn the_long_line_count_sees_columns_not_bytes() {
    let at_width = "÷".repeat(MAX_COLUMNS);
    let past = "x".repeat(MAX_COLUMNS + 1);
    let text = format!("fn a() {{}}\n{at_width}\n{past}\n// {past}\n");
    assert_eq!(long_lines(&text), [3, 4]);
}

#[test]
fn every_rust_file_is_as_rustfmt_writes_it() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let out = Command::new(&cargo)
        .args(["fmt", "--all", "--", "--check", "--files-with-diff"])
        .current_dir(root)
        .output()
        .expect("run cargo fmt");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        !stderr.contains("is not installed") && !stderr.contains("no such command"),
        "rustfmt is needed for this check (`rustup component add rustfmt`): {stderr}"
    );
    let files = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "not as rustfmt writes them (run `cargo fmt --all`):\n{files}{stderr}"
    );
}

/// The variants crate's edition and the files its registry names: the `"<file>.rs" =>` lines of
/// `with_registry!` in its `lib.rs`, read from the definition rather than listed here, so that a
/// new variant is checked from the line that registers it. `cargo metadata` says where the crate
/// is and which edition it is written in.
fn registry_files(root: &Path) -> (String, Vec<std::path::PathBuf>) {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let out = Command::new(&cargo)
        .args(["metadata", "--no-deps", "--format-version", "1"])
        .current_dir(root)
        .output()
        .expect("run cargo metadata");
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let metadata: serde_json::Value = serde_json::from_slice(&out.stdout).expect("its JSON");
    let packages = metadata["packages"].as_array().expect("a list of packages");
    let variants = packages
        .iter()
        .find(|p| p["name"] == "schedlab-variants")
        .expect("the variants crate in the workspace");
    let edition = variants["edition"].as_str().expect("an edition").to_string();
    let targets = variants["targets"].as_array().expect("a list of targets");
    let lib = targets
        .iter()
        .find(|t| t["kind"].as_array().is_some_and(|k| k.iter().any(|k| k == "lib")))
        .and_then(|t| t["src_path"].as_str())
        .map(Path::new)
        .expect("the variants crate's lib.rs");
    let text = std::fs::read_to_string(lib).expect("read the variants' lib.rs");
    let start = text.find("macro_rules! with_registry").expect("the registry's definition");
    let definition = &text[start..];
    // The definition ends where the next item begins.
    let definition =
        &definition[..definition[1..].find("macro_rules!").map_or(definition.len(), |i| i + 1)];
    let files: Vec<_> = definition
        .lines()
        .filter_map(|line| line.trim().strip_prefix('"')?.split_once("\" =>"))
        .map(|(file, _)| lib.with_file_name(file))
        .collect();
    (edition, files)
}

#[test]
fn every_variant_file_the_registry_names_is_as_rustfmt_writes_it() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let (edition, files) = registry_files(root);
    // A parse that found fewer lines than the registry registers would check too little.
    assert_eq!(
        files.len(),
        schedlab_variants::ALL.len(),
        "the files read from `with_registry!` against the variants it registers: {files:?}"
    );
    let rustfmt = std::env::var("RUSTFMT").unwrap_or_else(|_| "rustfmt".into());
    let out = Command::new(&rustfmt)
        .args(["--check", "--files-with-diff", "--edition", &edition, "--config-path"])
        .arg(root.join("rustfmt.toml"))
        .args(&files)
        .current_dir(root)
        .output()
        .expect("run rustfmt (`rustup component add rustfmt`)");
    let stderr = String::from_utf8_lossy(&out.stderr);
    let differ = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "variant files not as rustfmt writes them (`cargo fmt --all` does not reach them: run \
         `rustfmt --edition {edition} variants/src/*.rs`):\n{differ}{stderr}"
    );
}
