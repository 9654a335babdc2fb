//! Stops, for every subcommand that can run here (issue 33, items 2 and 7): each one, given a long
//! invocation, is stopped by SIGINT at two points (just after it parsed its arguments, and after
//! the next line it reported at `-vv`, its first step) and must exit 130 (128 + SIGINT), said on stderr,
//! without a panic. The subcommands are read from the CLI's definition (`SCHEDLAB_DESCRIBE=cli`);
//! a new one fails here until it has a long invocation in [`long`]. Signals are sent after an
//! event the process reported (a log line), never after a time; the only clock is a watchdog.

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

const BIN: &str = env!("CARGO_BIN_EXE_schedlab");
const CALIBRATION: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/notes/results/2026-12-01-predict/calibration-3f2494e.json");
const TOPOLOGY: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/notes/results/2026-12-01-predict/topology-4747bb8-without-interruptions.json");

fn subcommands() -> Vec<String> {
    let out = Command::new(BIN).env("SCHEDLAB_DESCRIBE", "cli").output().unwrap();
    String::from_utf8_lossy(&out.stdout).lines().filter(|l| l.split('\t').nth(1) == Some("")).map(|l| l.split('\t').next().unwrap().to_string()).collect()
}

/// An invocation far longer than the test (so that the stop cannot come after its end); `None`:
/// it cannot run here, or does no work to stop.
fn long(sub: &str) -> Option<Vec<&'static str>> {
    Some(match sub {
        "variants" => return None,
        // Needs root, fio, perf, bpftrace and a block device.
        "kernel" => return None,
        // Reading a trace is bounded by the file; its stop is the reader's and the parser's
        // (files::input and experiment::trace_summary unit tests).
        "trace-summary" => return None,
        "run" => vec!["run", "--variant", "no-stats", "--threads", "1", "--duration", "1h"],
        "compare" => vec!["compare", "--threads", "1", "--rounds", "1000", "--variants", "no-stats", "--duration", "0.2", "--ramp", "0", "--retries", "0", "--measure", "plain"],
        "sweep" => vec![
            "sweep", "--threads", "1", "--variants", "no-stats", "--duration", "0.2", "--ramp", "0", "--retries", "0", "--lockstat-duration", "0", "--sweep-slots",
            "1-64", "--sweep-outside-ns", "0,500,1000", "--csv", "s.csv", "--svg", "s.svg",
        ],
        "predict" => vec![
            "predict", "--calibration", CALIBRATION, "--topology", TOPOLOGY, "--variants", "no-stats", "--threads", "1", "--lock", "fair-spin", "--validate", "--rounds",
            "100", "--duration", "1", "--ramp", "0", "--retries", "0", "--outside-list", "0,100,200,300,400,500",
        ],
        "roundtrip" => vec!["roundtrip", "--variant", "no-stats", "--rounds", "1000", "--iterations", "100000000"],
        // Under its request cap (20 M requests), a few seconds of real time at most.
        "simulate" => vec!["simulate", "--runtime", "300"],
        "flamegraph" => vec!["flamegraph", "--variant", "all", "--duration", "1h", "--threads", "1", "--out", "fg"],
        other => panic!("no long invocation for `{other}`: add one to `long` (or say why it has none)"),
    })
}

/// Runs `args` at `-vv`, sends SIGINT after `after` lines of stderr following the `parsed` line,
/// and returns the exit code and stderr.
fn stopped(args: &[&str], after: usize) -> (Option<i32>, String) {
    let dir = tempfile::tempdir().unwrap();
    let mut child = Command::new(BIN)
        .arg("-vv")
        .args(args)
        .current_dir(dir.path())
        .env_remove("RUST_LOG")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let (tx, rx) = mpsc::channel();
    let stderr = child.stderr.take().unwrap();
    let reader = std::thread::spawn(move || {
        let mut all = String::new();
        for line in BufReader::new(stderr).lines().map_while(Result::ok) {
            let _ = tx.send(line.clone());
            all.push_str(&line);
            all.push('\n');
        }
        all
    });
    let watchdog = Instant::now() + Duration::from_secs(180);
    let mut seen = None;
    loop {
        let left = watchdog.saturating_duration_since(Instant::now());
        match rx.recv_timeout(left) {
            Ok(line) => {
                if seen.is_none() && line.contains("parsed") {
                    seen = Some(0);
                } else if let Some(n) = seen.as_mut() {
                    *n += 1;
                }
                if seen.is_some_and(|n| n >= after) {
                    break;
                }
            }
            Err(_) => break,
        }
    }
    assert!(seen.is_some(), "{args:?}: never reported that it parsed its arguments");
    let _ = Command::new("kill").args(["-INT", &child.id().to_string()]).status();
    let code = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status.code();
        }
        if Instant::now() > watchdog {
            let _ = child.kill();
            panic!("{args:?}: still running 180 s after the stop (watchdog)");
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    (code, reader.join().unwrap())
}

#[test]
fn every_subcommand_stops_on_sigint_at_two_points_and_says_so() {
    let mut tried = 0;
    for sub in subcommands() {
        let Some(args) = long(&sub) else { continue };
        for after in [0, 1] {
            let (code, stderr) = stopped(&args, after);
            assert!(!stderr.contains("panicked") && !stderr.contains("internal error"), "{sub} after {after}: {stderr}");
            assert_eq!(code, Some(130), "{sub} stopped after {after} lines: {stderr}");
            assert!(stderr.contains("SIGINT: stopping"), "{sub}: the stop is said: {stderr}");
            tried += 1;
        }
    }
    assert!(tried >= 12, "{tried}");
}
