//! Every option that depends on another given without it, and every pair of options declared to
//! conflict given together, against the built binary (issue 33, items 5 and 7). The lists are the
//! CLI's own: `SCHEDLAB_DESCRIBE=requires` gives every option that clap's command tree refuses
//! alone for a missing option (found by giving each option alone, as `src/flag_props.rs` does
//! in-process), `SCHEDLAB_DESCRIBE=conflicts` every declared conflict (`conflicts_with`,
//! `exclusive`), so a new dependent or conflicting option is covered without a new test.
//!
//! Each case runs as `schedlab SUB [FILE] [REQUIRED] --OPTION VALUE...` (REQUIRED: the
//! subcommand's own required options, e.g. `run --variant`) in an empty directory, with the log
//! filter unset and set to `off`, and must be refused before any work: exit 2, one line on stderr
//! naming an option of the case (what it needs, or one of the pair), nothing on stdout, no file
//! written (a path value names a file in that directory). The cases run in parallel batches, one
//! per CPU; a case still running after 60 s (it was accepted and works) is killed and reported.

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const BIN: &str = env!("CARGO_BIN_EXE_schedlab");

/// One invocation to refuse: its subcommand, the subcommand's required arguments, the options
/// given (option, kind, value), and the options the refusal may name (at least one of them).
#[derive(Clone, Debug)]
struct Case {
    sub: String,
    base: Vec<String>,
    given: Vec<(String, String, String)>,
    names: Vec<String>,
}

fn describe(what: &str) -> Vec<Vec<String>> {
    let out = Command::new(BIN).env("SCHEDLAB_DESCRIBE", what).output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|l| l.split('\t').map(String::from).collect())
        .collect()
}

fn words(s: &str) -> Vec<String> {
    s.split_whitespace().map(String::from).collect()
}

/// Every option that needs another, given alone.
fn requires_cases() -> Vec<Case> {
    describe("requires")
        .into_iter()
        .map(|f| {
            assert_eq!(f.len(), 6, "not sub, option, kind, value, needs, base: {f:?}");
            Case {
                sub: f[0].clone(),
                base: words(&f[5]),
                given: vec![(f[1].clone(), f[2].clone(), f[3].clone())],
                names: f[4].split(',').map(String::from).collect(),
            }
        })
        .collect()
}

/// Every declared conflict, both options given.
fn conflict_cases() -> Vec<Case> {
    describe("conflicts")
        .into_iter()
        .map(|f| {
            assert_eq!(
                f.len(),
                8,
                "not sub, option, kind, value, option, kind, value, base: {f:?}"
            );
            Case {
                sub: f[0].clone(),
                base: words(&f[7]),
                given: vec![
                    (f[1].clone(), f[2].clone(), f[3].clone()),
                    (f[4].clone(), f[5].clone(), f[6].clone()),
                ],
                names: vec![f[1].clone(), f[4].clone()],
            }
        })
        .collect()
}

/// Runs `case` in `dir` and returns what is wrong with its refusal.
fn check(case: &Case, dir: &Path, log: Option<&str>) -> Vec<String> {
    let mut cmd = Command::new(BIN);
    cmd.arg(&case.sub);
    if case.sub == "trace-summary" {
        // Its required input (never read: the refusal comes first).
        cmd.arg("t.json");
    }
    cmd.args(&case.base);
    for (option, kind, value) in &case.given {
        cmd.arg(option);
        match kind.as_str() {
            "flag" => {}
            "path" => {
                cmd.arg(dir.join(format!("dep{option}")));
            }
            _ => {
                cmd.args(value.split(' '));
            }
        }
    }
    cmd.current_dir(dir).stdin(Stdio::null()).stdout(Stdio::piped()).stderr(Stdio::piped());
    match log {
        Some(filter) => cmd.env("RUST_LOG", filter),
        None => cmd.env_remove("RUST_LOG"),
    };
    let what = format!("{} {:?} {:?} (RUST_LOG={log:?})", case.sub, case.base, case.given);
    let mut child = cmd.spawn().unwrap();
    // A watchdog only: a refusal takes milliseconds; an accepted case would do the work.
    let end = Instant::now() + Duration::from_secs(60);
    while child.try_wait().unwrap().is_none() {
        if Instant::now() > end {
            let _ = child.kill();
            break;
        }
        std::thread::sleep(Duration::from_millis(5));
    }
    let out = child.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    let mut problems = Vec::new();
    if out.status.code() != Some(2) {
        problems.push(format!("{what}: exit {:?}: {err}", out.status.code()));
    }
    if err.trim_end().lines().count() != 1 || err.contains("panicked") {
        problems.push(format!("{what}: not one line: {err:?}"));
    }
    if !case.names.iter().any(|n| err.contains(n.as_str())) {
        problems.push(format!("{what}: the line names none of {:?}: {err:?}", case.names));
    }
    if !out.stdout.is_empty() {
        problems.push(format!("{what}: printed {:?}", String::from_utf8_lossy(&out.stdout)));
    }
    let written: Vec<_> = std::fs::read_dir(dir).unwrap().map(|e| e.unwrap().file_name()).collect();
    if !written.is_empty() {
        problems.push(format!("{what}: wrote {written:?}"));
    }
    problems
}

/// Every case under both log filters, in parallel batches; every problem found.
fn refused(cases: &[Case]) -> Vec<String> {
    let threads = std::thread::available_parallelism().map_or(2, |n| n.get()).max(2);
    std::thread::scope(|scope| {
        let handles: Vec<_> = cases
            .chunks(cases.len().div_ceil(threads).max(1))
            .map(|chunk| {
                scope.spawn(move || {
                    let mut problems = Vec::new();
                    for case in chunk {
                        for log in [None, Some("off")] {
                            let dir = tempfile::Builder::new()
                                .prefix("schedlab-flags-")
                                .tempdir()
                                .unwrap();
                            problems.extend(check(case, dir.path(), log));
                        }
                    }
                    problems
                })
            })
            .collect();
        handles.into_iter().flat_map(|h| h.join().unwrap()).collect()
    })
}

/// The cases were found (15 at least: the CLI declares more), and the binary refuses each
/// ([`refused`]); `what` names them in the messages.
fn assert_every_case_refused(cases: &[Case], what: &str) {
    assert!(cases.len() >= 15, "the {what} were found: {cases:?}");
    let problems = refused(cases);
    println!("{} {what}, each refused by the binary", cases.len());
    assert!(problems.is_empty(), "{problems:#?}");
}

#[test]
fn every_option_without_the_one_it_needs_is_refused_by_the_binary_before_any_work() {
    // The dependencies declared in main::command and the commands' flags (notes/reliability.md),
    // each option given alone.
    assert_every_case_refused(&requires_cases(), "dependent options");
}

#[test]
fn every_declared_conflict_is_refused_by_the_binary_before_any_work() {
    assert_every_case_refused(&conflict_cases(), "conflicting pairs");
}
