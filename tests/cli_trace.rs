//! `schedlab run --trace`: the file is a Chrome / Perfetto trace (a JSON array of trace events,
//! every slice closed and nested), it has a track with slices for every worker thread, and the
//! scheduler lock's hold slices never overlap (mutual exclusion, seen from the timeline). Plus the
//! logging path: `-v` and RUST_LOG show progress, errors stay one line, bad trace flags leave no
//! file.

use schedlab_benches::files::trace_check::{self, Slice, Trace};
use std::path::PathBuf;
use std::process::{Command, Output};

fn schedlab(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_schedlab"))
        .args(args)
        .env_remove("RUST_LOG")
        .output()
        .expect("the binary runs")
}

/// A fresh directory (removed when the returned guard drops, so runs leave no traces behind in
/// the temp dir) and the path `name` in it.
fn temp(name: &str) -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::Builder::new().prefix("schedlab-trace-").tempdir().unwrap();
    let path = dir.path().join(name);
    (dir, path)
}

/// Runs `variant` with a trace and returns the parsed, format-checked trace.
fn traced_run(variant: &str, lock: &str, extra: &[&str]) -> Trace {
    let (_dir, path) = temp(&format!("{variant}-{lock}.json"));
    let mut args = vec![
        "run",
        "--variant",
        variant,
        "--lock",
        lock,
        "--threads",
        "2",
        "--duration",
        "0.4",
        "--trace-window",
        "0.1",
        "--trace",
        path.to_str().unwrap(),
    ];
    args.extend_from_slice(extra);
    let out = schedlab(&args);
    assert!(out.status.success(), "{variant}: {}", String::from_utf8_lossy(&out.stderr));
    let text = std::fs::read_to_string(&path).unwrap();
    // Plain JSON first (what any viewer needs), then the trace-event checks.
    let value: serde_json::Value = serde_json::from_str(&text).expect("the trace is valid JSON");
    assert!(value.as_array().is_some_and(|a| !a.is_empty()), "a non-empty array of trace events");
    trace_check::parse(&text).unwrap_or_else(|e| panic!("{variant}: {e}"))
}

fn named<'a>(trace: &'a Trace, name: &str) -> Vec<&'a Slice> {
    trace.slices.iter().filter(|s| s.name == name).collect()
}

/// The checks every traced run must pass.
fn check_run(variant: &str, trace: &Trace) {
    // A track, with slices, for every worker thread.
    for job in ["job-0", "job-1"] {
        let track = trace
            .tracks
            .iter()
            .find(|t| t.name == job)
            .unwrap_or_else(|| panic!("{variant}: no track named {job}"));
        assert!(track.slices > 0, "{variant}: {job} has no slices");
        let holds = named(trace, "sched lock: hold").iter().filter(|s| s.tid == track.tid).count();
        assert!(holds > 0, "{variant}: {job} never holds the scheduler lock in the trace");
    }
    // The paths, and the statistics updates named by the kernel functions.
    for name in [
        "bfq_insert_request",
        "bfq_dispatch_request",
        "bfq_finish_request",
        "bfqg_stats_update_io_add",
        "bfqg_stats_update_completion",
    ] {
        assert!(!named(trace, name).is_empty(), "{variant}: no {name} slice");
    }
    // Mutual exclusion on the timeline.
    let holds = named(trace, "sched lock: hold");
    let overlaps = trace_check::overlaps(holds.iter().copied());
    assert!(overlaps.is_empty(), "{variant}: scheduler-lock holds overlap: {:?}", overlaps.first());
    // Control on the same data, whatever the timing of this run: a copy of a real hold, moved by
    // half its length onto another thread, must be found overlapping, so the check is not one
    // that cannot fail. (Whether the two jobs ever contended depends on how the OS scheduled
    // them: on a loaded machine they may not have, so that is not asserted.)
    let first = holds.first().unwrap_or_else(|| panic!("{variant}: no scheduler-lock hold"));
    let mut moved = (*first).clone();
    moved.tid += 1_000_000;
    moved.start_us += first.duration_us() / 2.0;
    moved.end_us += first.duration_us() / 2.0;
    let planted = trace_check::overlaps(holds.iter().copied().chain(std::iter::once(&moved)));
    assert!(!planted.is_empty(), "{variant}: a planted overlapping hold was not found");
}

#[test]
fn queue_lock_trace_has_every_thread_and_exclusive_sched_lock_holds() {
    let trace = traced_run("queue-lock", "fair-spin", &[]);
    check_run("queue-lock", &trace);
    // queue-lock applies the deferred updates under the queue lock: its holds are there too.
    assert!(!named(&trace, "queue lock: hold").is_empty());
    assert!(trace_check::overlaps(named(&trace, "queue lock: hold").iter().copied()).is_empty());
}

#[test]
fn sched_lock_trace_on_parking_lot_has_exclusive_holds() {
    let trace = traced_run("sched-lock", "parking-lot", &[]);
    check_run("sched-lock", &trace);
    // sched-lock updates the statistics under the scheduler lock: no queue lock slices.
    assert!(named(&trace, "queue lock: hold").is_empty());
}

#[test]
fn trace_filter_keeps_only_the_targets_asked_for() {
    let trace = traced_run(
        "queue-lock",
        "fair-spin",
        &["--trace-filter", "schedlab::lock=trace", "--trace-no-args"],
    );
    assert!(!named(&trace, "sched lock: hold").is_empty());
    assert!(
        trace.slices.iter().all(|s| s.cat == "schedlab::lock"),
        "only lock slices were asked for"
    );
}

#[test]
fn verbose_and_rust_log_show_configuration_and_progress() {
    let quiet = schedlab(&["run", "--variant", "epoch", "--duration", "0.2"]);
    assert!(quiet.status.success());
    // No -v: no progress; only warnings (a loaded machine gets the fair lock's warning).
    let quiet_err = String::from_utf8_lossy(&quiet.stderr);
    assert!(
        quiet_err.lines().all(|l| l.starts_with("schedlab: warning: ")),
        "no -v: only warnings on stderr: {quiet_err}"
    );
    assert!(!quiet_err.contains("run starts") && !quiet_err.contains("measuring"), "{quiet_err}");
    let verbose = schedlab(&["-v", "run", "--variant", "epoch", "--duration", "0.2"]);
    let log = String::from_utf8_lossy(&verbose.stderr);
    assert!(verbose.status.success());
    for line in ["run starts", "variant=\"epoch\"", "measuring", "end-of-run checks hold"] {
        assert!(log.contains(line), "-v log lacks {line:?}: {log}");
    }
    let env = Command::new(env!("CARGO_BIN_EXE_schedlab"))
        .args(["run", "--variant", "epoch", "--duration", "0.2", "--groups", "2", "--churn", "20"])
        .env("RUST_LOG", "schedlab::group=debug")
        .output()
        .unwrap();
    let log = String::from_utf8_lossy(&env.stderr);
    assert!(env.status.success());
    // Groups are created before the run; one goes offline only when the churner got to remove
    // one in 0.2 s, which a loaded machine may not give it: asked only when stdout counts one.
    let removals: u64 = String::from_utf8_lossy(&env.stdout)
        .split("churn removals")
        .nth(1)
        .and_then(|rest| rest.split_whitespace().next())
        .and_then(|n| n.parse().ok())
        .expect("the run prints its churn removals");
    assert!(log.contains("group created"), "RUST_LOG picks the group events: {log}");
    assert!(
        removals == 0 || log.contains("group offline"),
        "{removals} removals, each a group offline: {log}"
    );
    assert!(!log.contains("run starts"), "RUST_LOG filtered the rest out: {log}");
}

#[test]
fn bad_trace_input_is_one_line_exit_2_and_leaves_no_file() {
    let (_dir, path) = temp("never.json");
    let p = path.to_str().unwrap();
    let cases: [&[&str]; 4] = [
        &["run", "--variant", "queue-lock", "--trace", p, "--trace-window", "0"],
        &["run", "--variant", "queue-lock", "--trace", p, "--trace-window", "-1"],
        &["run", "--variant", "queue-lock", "--trace", p, "--trace-filter", "schedlab=[["],
        &["run", "--variant", "nonsense", "--trace", p],
    ];
    for args in cases {
        let out = schedlab(args);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {stderr}");
        assert_eq!(stderr.trim_end().lines().count(), 1, "{args:?}: {stderr}");
        assert!(stderr.starts_with("schedlab: "), "{args:?}: {stderr}");
        assert!(!path.exists(), "{args:?} created the trace file");
    }
    let out = schedlab(&["run", "--variant", "queue-lock", "--trace", "/nonexistent-dir/t.json"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("cannot write /nonexistent-dir/t.json"));
    // trace-summary on something that is not a trace.
    let (_not_trace_dir, not_trace) = temp("not-a-trace.json");
    std::fs::write(&not_trace, "{\"a\": 1}").unwrap();
    let out = schedlab(&["trace-summary", not_trace.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(String::from_utf8_lossy(&out.stderr).trim_end().lines().count(), 1);
}

/// A stall drawing asked of a trace without a lock wait can only be known impossible after the
/// parse: the summary is printed (the work is kept), the drawing is a failed output that says
/// why (exit 3, not 2: bad input is refused before any work), and no file is made.
#[test]
fn a_stall_drawing_of_a_trace_without_waits_keeps_the_summary() {
    let (dir, trace) = temp("no-waits.json");
    let one_hold = r#"[{"ph":"B","name":"sched lock: hold","cat":"lock","tid":1,"ts":1.0},{"ph":"E","name":"sched lock: hold","cat":"lock","tid":1,"ts":2.0}]"#;
    std::fs::write(&trace, one_hold).unwrap();
    let stall = dir.path().join("stall.svg");
    let out = schedlab(&[
        "trace-summary",
        trace.to_str().unwrap(),
        "--stall-svg",
        stall.to_str().unwrap(),
    ]);
    let (stdout, stderr) =
        (String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    assert_eq!(out.status.code(), Some(3), "{stderr}");
    assert!(stdout.contains("sched lock"), "the summary is printed: {stdout}");
    assert!(
        stderr.contains("no lock waits to draw") && stderr.trim_end().lines().count() == 1,
        "{stderr}"
    );
    assert!(!stall.exists(), "no stall drawing was made");
}
