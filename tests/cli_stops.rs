//! Stops, for every subcommand that can run here (issue 33, items 2 and 7), generated from the
//! CLI's definition (`SCHEDLAB_DESCRIBE=cli`: a new subcommand fails here until it has a long
//! invocation in [`long`]). Each one, given a long invocation with its outputs, is stopped at
//! several points of its longest phase: just after it parsed its arguments, after its first line
//! at `-vv`, and after each of its first finished steps (the `schedlab::progress` lines that say
//! a run, point or measurement is done), by SIGINT and SIGTERM in turn. Each must:
//! - exit 128 + the signal (130, 143), the stop said on stderr, no panic;
//! - leave every output it wrote whole (JSON that parses, a CSV of whole lines, an SVG or HTML
//!   page that ends), no temporary or lock file behind;
//! - keep what finished: once a step is reported done, the outputs that hold steps exist, and the
//!   sweep's CSV and the comparison's JSON hold at least the steps reported done.
//!
//! Signals are sent after an event the process reported (a log line), never after a time; the
//! only clock is a watchdog. Nothing here asserts how long a stop takes.

use std::io::{BufRead, BufReader};
use std::path::Path;
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

/// A long invocation: far longer than the test, so that a stop cannot come after its end.
struct Long {
    args: Vec<&'static str>,
    /// Finished steps it reports early in its longest phase (each a point to stop at).
    steps: usize,
    /// Outputs (relative to its directory; a trailing `/` is a directory) that hold finished
    /// steps: they must exist once a step is reported done.
    kept: &'static [&'static str],
}

/// `None`: it cannot run here, or does no work to stop.
fn long(sub: &str) -> Option<Long> {
    let (args, steps, kept): (Vec<&'static str>, usize, &'static [&'static str]) = match sub {
        "variants" => return None,
        // Needs root, fio, perf, bpftrace and a block device; its waits poll the stop flag and
        // kill their child (experiment::kernel), which this machine cannot show.
        "kernel" => return None,
        // Reading a trace is bounded by the file; its stop is the reader's and the parser's
        // (files::input, experiment::stop and experiment::trace_summary unit tests).
        "trace-summary" => return None,
        // One run: its stop points are before and during it.
        "run" => (vec!["run", "--variant", "no-stats", "--threads", "1", "--duration", "1h", "--json", "r.json"], 0, &[]),
        "compare" => (
            vec!["compare", "--threads", "1", "--rounds", "1000", "--variants", "no-stats", "--duration", "0.2", "--ramp", "0", "--retries", "0", "--measure", "plain", "--json", "c.json"],
            3,
            &["c.json"],
        ),
        "sweep" => (
            vec![
                "sweep", "--threads", "1", "--variants", "no-stats", "--duration", "0.2", "--ramp", "0", "--retries", "0", "--lockstat-duration", "0", "--sweep-slots",
                "1-64", "--sweep-outside-ns", "0,500,1000", "--csv", "s.csv", "--svg", "s.svg",
            ],
            3,
            &["s.csv", "s.svg"],
        ),
        "predict" => (
            vec![
                "predict", "--calibration", CALIBRATION, "--topology", TOPOLOGY, "--variants", "no-stats", "--threads", "1", "--lock", "fair-spin", "--validate", "--rounds",
                "100", "--duration", "0.3", "--ramp", "0", "--retries", "0", "--outside-list", "0,100,200,300,400,500", "--json", "p.json",
            ],
            3,
            &["p.json"],
        ),
        "roundtrip" => (vec!["roundtrip", "--variant", "no-stats", "--rounds", "1000", "--iterations", "2000000", "--svg", "r.svg"], 2, &["r.svg"]),
        // Under its request cap (20 M requests), a few seconds of real time at most: one step.
        "simulate" => (vec!["simulate", "--runtime", "300", "--json", "s.json"], 0, &[]),
        // Every safe variant, half a second each: a stop after the first keeps its files.
        "flamegraph" => (vec!["flamegraph", "--variant", "all", "--duration", "0.5", "--threads", "1", "--out", "fg"], 1, &["fg/"]),
        other => panic!("no long invocation for `{other}`: add one to `long` (or say why it has none)"),
    };
    Some(Long { args, steps, kept })
}

/// Where to stop: after the `parsed` line and `lines` more lines, or after `done` finished steps.
#[derive(Clone, Copy, Debug)]
enum Point {
    Lines(usize),
    Done(usize),
}

fn is_done(line: &str) -> bool {
    line.contains(" INFO ") && line.contains("schedlab::progress:")
}

/// Runs `args` at `-vv` in `dir`, sends `signal` at `point`, and returns the exit code, the
/// whole stderr and the steps it reported done (all of them, up to its exit).
fn stopped(args: &[&str], dir: &Path, point: Point, signal: &str) -> (Option<i32>, String, usize) {
    let mut child = Command::new(BIN)
        .arg("-vv")
        .args(args)
        .current_dir(dir)
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
    let (mut parsed, mut lines, mut done) = (false, 0, 0);
    loop {
        let reached = match point {
            Point::Lines(n) => parsed && lines >= n,
            Point::Done(n) => parsed && done >= n,
        };
        if reached {
            break;
        }
        let left = watchdog.saturating_duration_since(Instant::now());
        match rx.recv_timeout(left) {
            Ok(line) if !parsed => parsed = line.contains("parsed"),
            Ok(line) => {
                lines += 1;
                done += usize::from(is_done(&line));
            }
            Err(_) => panic!("{args:?}: ended or went silent before {point:?} (a long invocation must outlast the test)"),
        }
    }
    let _ = Command::new("kill").args([&format!("-{signal}"), &child.id().to_string()]).status();
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
    let all = reader.join().unwrap();
    let done_total = all.lines().filter(|l| is_done(l)).count();
    (code, all, done_total)
}

/// Every file under `dir` is whole, and none is a temporary or lock file.
fn outputs_are_whole(dir: &Path, what: &str) {
    for entry in std::fs::read_dir(dir).unwrap().map(Result::unwrap) {
        let path = entry.path();
        let name = entry.file_name().to_string_lossy().into_owned();
        assert!(!name.starts_with('.'), "{what}: a temporary or lock file was left: {name}");
        if path.is_dir() {
            outputs_are_whole(&path, what);
            continue;
        }
        let text = std::fs::read_to_string(&path).unwrap_or_default();
        let whole = match path.extension().and_then(|e| e.to_str()) {
            Some("json") => serde_json::from_str::<serde_json::Value>(&text).is_ok(),
            Some("csv") => text.is_empty() || text.ends_with('\n'),
            Some("svg") => text.trim_end().ends_with("</svg>"),
            Some("html") => text.trim_end().ends_with("</html>"),
            _ => true,
        };
        assert!(whole, "{what}: {} is not whole ({} bytes)", path.display(), text.len());
    }
}

/// What the outputs hold of the finished steps, where it can be counted: the sweep's CSV rows,
/// the comparison's runs.
fn steps_kept(sub: &str, dir: &Path) -> Option<usize> {
    match sub {
        "sweep" => Some(std::fs::read_to_string(dir.join("s.csv")).ok()?.lines().skip(1).filter(|l| !l.is_empty()).count()),
        "compare" => {
            let v: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(dir.join("c.json")).ok()?).ok()?;
            Some(v["results"].as_array()?.iter().filter_map(|r| r["runs"].as_u64()).sum::<u64>() as usize)
        }
        _ => None,
    }
}

fn stops_at_every_point(sub: &str) {
    let Some(l) = long(sub) else {
        println!("{sub}: not stopped here (see `long`)");
        return;
    };
    let mut points = vec![Point::Lines(0), Point::Lines(1)];
    points.extend((1..=l.steps).map(Point::Done));
    for (i, point) in points.into_iter().enumerate() {
        let (signal, expected) = if i % 2 == 0 { ("INT", 130) } else { ("TERM", 143) };
        let dir = tempfile::Builder::new().prefix(&format!("schedlab-stops-{sub}-")).tempdir().unwrap();
        let (code, stderr, done) = stopped(&l.args, dir.path(), point, signal);
        let what = format!("{sub} stopped by SIG{signal} at {point:?}");
        assert!(!stderr.contains("panicked") && !stderr.contains("internal error"), "{what}: {stderr}");
        assert_eq!(code, Some(expected), "{what}: {stderr}");
        assert!(stderr.contains(&format!("SIG{signal}: stopping")), "{what}: the stop is said: {stderr}");
        outputs_are_whole(dir.path(), &what);
        if done > 0 {
            for kept in l.kept {
                let path = dir.path().join(kept.trim_end_matches('/'));
                let there = if kept.ends_with('/') { std::fs::read_dir(&path).map(|mut d| d.next().is_some()).unwrap_or(false) } else { path.is_file() };
                assert!(there, "{what}: {done} step(s) done, {kept} is kept: {stderr}");
            }
            if let Some(kept) = steps_kept(sub, dir.path()) {
                assert!(kept >= done, "{what}: {done} step(s) reported done, {kept} kept");
            }
        }
    }
}

#[test]
fn every_subcommand_has_a_long_invocation_or_a_reason() {
    let subs = subcommands();
    assert!(subs.len() >= 10, "{subs:?}");
    let tested = ["variants", "run", "compare", "sweep", "predict", "roundtrip", "simulate", "flamegraph", "trace-summary", "kernel"];
    for sub in &subs {
        let _ = long(sub);
        assert!(tested.contains(&sub.as_str()), "add `{sub}` to the per-subcommand tests of this file");
    }
}

macro_rules! per_subcommand {
    ($($name:ident: $sub:literal,)*) => {
        mod stops {
            $(#[test] fn $name() { super::stops_at_every_point($sub) })*
        }
    };
}

per_subcommand! {
    run: "run",
    compare: "compare",
    sweep: "sweep",
    predict: "predict",
    roundtrip: "roundtrip",
    simulate: "simulate",
    flamegraph: "flamegraph",
    trace_summary: "trace-summary",
    kernel: "kernel",
}
