//! What the CLI tests share to run the binary: a command line written as a user types it,
//! split into its words ([`words`], [`words_and`] for the paths a test adds), so that a
//! command reads as one line rather than one word per line; the binary run plainly
//! ([`schedlab`]); and what every refusal of bad input must look like ([`assert_bad_input`]).
//! (A folder under `tests/` is not a test target of its own.)
// Each test target uses a part of this module.
#![allow(dead_code)]

use std::process::{Command, Output};

/// The committed calibration that `predict` reads instead of calibrating (tests that predict, or
/// validate, in a fraction of a second).
pub const CALIBRATION: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/notes/results/2026-12-01-predict/calibration-3f2494e.json"
);
/// The committed topology profile of the same machine, for `predict --topology`.
pub const TOPOLOGY: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/notes/results/2026-12-01-predict/topology-4747bb8-without-interruptions.json"
);

/// The words of `line`, split at white space: a literal command line's arguments, in order.
/// Only for words written in the test: a path or a value made at run time goes through
/// [`words_and`], which does not split it.
pub fn words(line: &str) -> Vec<&str> {
    line.split_whitespace().collect()
}

/// The words of `line` ([`words`]), then `more` as they are (paths, values made at run time).
pub fn words_and<'a>(line: &'a str, more: &[&'a str]) -> Vec<&'a str> {
    let mut all = words(line);
    all.extend_from_slice(more);
    all
}

/// Runs the binary with `args` and waits for it.
pub fn schedlab(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_schedlab")).args(args).output().expect("the binary runs")
}

/// What every refusal of bad input must be: exit 2, one line on stderr and no panic, nothing
/// on stdout (no results printed before the input was checked).
pub fn assert_bad_input(args: &[&str], out: &Output) {
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{args:?}: {stderr}");
    assert_eq!(stderr.trim_end().lines().count(), 1, "{args:?}: {stderr}");
    assert!(!stderr.contains("panicked"), "{args:?}: {stderr}");
    assert!(out.stdout.is_empty(), "{args:?} printed results");
}

/// Runs the binary with `args`, which it must refuse as bad input ([`assert_bad_input`]), in a
/// line that says `said`.
pub fn assert_refused_saying(args: &[&str], said: &str) {
    let out = schedlab(args);
    assert_bad_input(args, &out);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains(said), "{args:?}: `{said}` not in {stderr}");
}
