//! The exit-code contract after the work (issue 26, item 5): every subcommand that does work,
//! forced to fail in each way once its work is done, prints what it finished and exits with the
//! README's code for that failure: 4 a run failed, 1 a check failed, 3 an output could not be
//! written. A failure after the work is never 2 (bad input is found before any work).
//!
//! The run and check failures are forced by `SCHEDLAB_FAIL_AFTER_WORK` (benches/src/driver/
//! forced.rs); the output failures by `/dev/full`. No assertion depends on timing.

use std::process::{Command, Output};

mod invoke;
use invoke::{words, words_and, CALIBRATION};

const BIN: &str = env!("CARGO_BIN_EXE_schedlab");

fn schedlab(args: &[&str], forced: Option<&str>) -> Output {
    let mut cmd = Command::new(BIN);
    cmd.args(args).env_remove("RUST_LOG").env_remove("SCHEDLAB_FAIL_AFTER_WORK");
    if let Some(f) = forced {
        cmd.env("SCHEDLAB_FAIL_AFTER_WORK", f);
    }
    cmd.output().expect("the binary runs")
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// One subcommand forced to fail: its arguments, the forcing, the code expected and what its
/// stdout must still show (the work that finished).
struct Case {
    args: Vec<String>,
    forced: Option<&'static str>,
    code: i32,
    printed: &'static str,
}

fn case(args: &[&str], forced: Option<&'static str>, code: i32, printed: &'static str) -> Case {
    Case { args: args.iter().map(|s| s.to_string()).collect(), forced, code, printed }
}

fn check(cases: Vec<Case>) {
    for c in cases {
        let args: Vec<&str> = c.args.iter().map(String::as_str).collect();
        let out = schedlab(&args, c.forced);
        let what = format!("{args:?} forced {:?}", c.forced);
        let (stdout, stderr) = (text(&out.stdout), text(&out.stderr));
        assert!(
            !stderr.contains("panicked") && !stderr.contains("internal error"),
            "{what}: {stderr}"
        );
        assert_eq!(out.status.code(), Some(c.code), "{what}: {stderr}");
        assert!(stdout.contains(c.printed), "{what}: the finished work is printed: {stdout}");
        if c.code != 0 {
            assert!(
                stderr
                    .lines()
                    .any(|l| l.starts_with("schedlab: ") && !l.starts_with("schedlab: warning")),
                "{what}: said on stderr: {stderr}"
            );
        }
    }
}

const RUN: Option<&str> = Some("run");
const CHECK: Option<&str> = Some("check");

#[test]
fn compare_and_sweep_keep_their_tables_and_exit_by_the_failure() {
    let dir = tempfile::tempdir().unwrap();
    let (csv, svg) = (dir.path().join("s.csv"), dir.path().join("s.svg"));
    let (csv, svg) = (csv.to_str().unwrap(), svg.to_str().unwrap());
    let compare = words(
        "compare --placement pool --threads 1 --rounds 1 \
        --variants no-stats --duration 0.05 --ramp 0 --retries 0 \
        --measure plain",
    );
    let with = |base: &[&str], extra: &[&str]| -> Vec<String> {
        base.iter().chain(extra).map(|s| s.to_string()).collect()
    };
    let sweep = words_and(
        "sweep --threads 1 --variants no-stats --duration 0.05 --ramp 0 \
        --retries 0 --lockstat-duration 0 --csv",
        &[csv, "--svg", svg],
    );
    let mut cases = vec![
        // A failed run is reported in the tables (FAILED) and the rest is kept.
        case(&compare, RUN, 4, "FAILED"),
        case(&compare, CHECK, 1, "INCONSISTENT"),
        case(&sweep, RUN, 4, "FAILED point"),
        case(&sweep, CHECK, 1, "no-stats"),
    ];
    cases.push(Case {
        args: with(&compare, &["--json", "/dev/full"]),
        forced: None,
        code: 3,
        printed: "KIOPS",
    });
    // Both at once: the output's failure decides (the file the user asked for is missing).
    cases.push(Case {
        args: with(&compare, &["--json", "/dev/full"]),
        forced: CHECK,
        code: 3,
        printed: "INCONSISTENT",
    });
    check(cases);
}

#[test]
fn run_simulate_and_flamegraph_exit_by_the_failure() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().to_str().unwrap();
    let run = ["run", "--variant", "no-stats", "--duration", "0.05"];
    let simulate = ["simulate", "--runtime", "0.01"];
    let flamegraph = ["flamegraph", "--variant", "no-stats", "--duration", "0.2", "--out", out];
    check(vec![
        // A single run that failed has nothing to print but its error.
        case(&run, RUN, 4, ""),
        case(&run, CHECK, 1, "the run failed its end-of-run checks"),
        case(
            &["run", "--variant", "no-stats", "--duration", "0.05", "--json", "/dev/full"],
            None,
            3,
            "KIOPS",
        ),
        case(&simulate, RUN, 4, ""),
        case(&simulate, CHECK, 1, "IOPS="),
        case(&["simulate", "--runtime", "0.01", "--json", "/dev/full"], None, 3, "IOPS="),
        case(&flamegraph, RUN, 4, "Where the time goes"),
        case(&flamegraph, CHECK, 1, "Where the time goes"),
    ]);
}

#[test]
fn predict_and_trace_summary_exit_by_the_failure() {
    let dir = tempfile::tempdir().unwrap();
    // Two holds of one lock that overlap: a trace that contradicts mutual exclusion.
    let overlapping = dir.path().join("overlap.json");
    std::fs::write(
        &overlapping,
        r#"[{"ph":"B","name":"sched lock: hold","cat":"lock","tid":1,"ts":1.0},{"ph":"B","name":"sched lock: hold","cat":"lock","tid":2,"ts":1.5},
{"ph":"E","name":"sched lock: hold","cat":"lock","tid":1,"ts":2.0},{"ph":"E","name":"sched lock: hold","cat":"lock","tid":2,"ts":3.0}]"#,
    )
    .unwrap();
    let trace = overlapping.to_str().unwrap();
    let predict =
        ["predict", "--calibration", CALIBRATION, "--variants", "no-stats", "--threads", "1"];
    let predict_and = |more: &[&'static str]| [&predict[..], more].concat();
    let validate = predict_and(&["--validate", "--rounds", "1", "--duration", "0.05"]);
    check(vec![
        case(&predict_and(&["--json", "/dev/full"]), None, 3, "no-stats"),
        case(&validate, RUN, 4, "no-stats"),
        // The prediction alone runs nothing: nothing to force.
        case(&predict, RUN, 0, "no-stats"),
        case(&["trace-summary", trace], None, 1, "sched"),
        case(&["trace-summary", trace, "--svg", "/dev/full"], None, 3, "sched"),
    ]);
}
