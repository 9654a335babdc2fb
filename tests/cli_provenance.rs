//! The provenance's commit is the build's (recorded by `benches/build.rs`), not the working
//! directory's at run time (issue 44, item 4): the binary run from inside another repository still
//! names the commit it was built from.

use std::path::Path;
use std::process::Command;

fn git(dir: &Path, args: &[&str]) -> String {
    let out = Command::new("git")
        .args(args)
        .current_dir(dir)
        .env("GIT_AUTHOR_NAME", "t")
        .env("GIT_AUTHOR_EMAIL", "t@example.invalid")
        .env("GIT_COMMITTER_NAME", "t")
        .env("GIT_COMMITTER_EMAIL", "t@example.invalid")
        .output()
        .expect("git runs");
    assert!(out.status.success(), "git {args:?}: {}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8_lossy(&out.stdout).trim().to_string()
}

/// The commit `schedlab run --json` records when run from `dir`.
fn recorded_commit(dir: &Path) -> String {
    let json = dir.join("run.json");
    let out = Command::new(env!("CARGO_BIN_EXE_schedlab"))
        .args(["run", "--variant", "no-stats", "--threads", "1", "--duration", "0.05", "--json"])
        .arg(&json)
        .current_dir(dir)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let v: serde_json::Value = serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
    std::fs::remove_file(&json).unwrap();
    v["provenance"]["commit"].as_str().unwrap().to_string()
}

#[test]
fn the_commit_is_the_builds_even_from_inside_another_repository() {
    let project = Path::new(env!("CARGO_MANIFEST_DIR"));
    if !project.join(".git").exists() {
        println!("skipped: built outside a git checkout (the provenance says so itself)");
        return;
    }
    let built_from = git(project, &["rev-parse", "--short=12", "HEAD"]);
    // Another repository, with a commit of its own, run from clean and then dirty; and a folder
    // in no repository.
    let other = tempfile::tempdir().unwrap();
    git(other.path(), &["init", "-q"]);
    std::fs::write(other.path().join("f"), "one").unwrap();
    git(other.path(), &["add", "f"]);
    git(other.path(), &["commit", "-q", "-m", "other"]);
    let other_commit = git(other.path(), &["rev-parse", "--short=12", "HEAD"]);
    let from_clean = recorded_commit(other.path());
    std::fs::write(other.path().join("f"), "two").unwrap();
    let from_dirty = recorded_commit(other.path());
    let nowhere = tempfile::tempdir().unwrap();
    let from_nowhere = recorded_commit(nowhere.path());

    let (hash, state) = from_clean.split_at(from_clean.find('-').unwrap_or(from_clean.len()));
    assert_eq!(hash, built_from, "the commit is the build's ({from_clean}), not {other_commit}");
    assert!(matches!(state, "" | "-dirty"), "a commit and its dirty state: {from_clean}");
    // Neither the commit nor its dirty state depends on where the binary runs.
    assert_eq!(from_dirty, from_clean, "run from a dirty repository");
    assert_eq!(from_nowhere, from_clean, "run outside any repository");
}
