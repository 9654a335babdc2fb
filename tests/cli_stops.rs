//! Stops, for every subcommand (issue 33, items 2 and 7), generated from the CLI's definition
//! (`SCHEDLAB_DESCRIBE=cli`: a new subcommand fails here until it has a long invocation in [`long`]
//! and a test in the `per_subcommand!` table, which must name exactly the CLI's subcommands).
//! `kernel`'s test needs root, fio, perf, bpftrace and BFQ: it is `#[ignore]`d and run by
//! `scripts/test.sh` where `scripts/kernel-ready.sh` finds them. Each one, given a long invocation
//! with its outputs, is stopped at several points of its longest phase: just after it parsed its
//! arguments, after its first line at `-vv`, and after each of its first finished steps (the
//! `schedlab::progress` lines that say a run, point or measurement is done), by SIGINT and SIGTERM
//! in turn. Each must:
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

mod invoke;
use invoke::{words, words_and, CALIBRATION, TOPOLOGY};

const BIN: &str = env!("CARGO_BIN_EXE_schedlab");

fn subcommands() -> Vec<String> {
    let out = Command::new(BIN).env("SCHEDLAB_DESCRIBE", "cli").output().unwrap();
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter(|l| l.split('\t').nth(1) == Some(""))
        .map(|l| l.split('\t').next().unwrap().to_string())
        .collect()
}

/// A long invocation: far longer than the test, so that a stop cannot come after its end.
struct Long {
    args: Vec<&'static str>,
    /// Finished steps it reports early in its longest phase (each a point to stop at).
    steps: usize,
    /// Outputs (relative to its directory; a trailing `/` is a directory) that hold finished
    /// steps: they must exist once a step is reported done.
    kept: &'static [&'static str],
    /// More points to stop at: after a progress line (`schedlab::progress`, a step starting)
    /// holding this text, with the number of steps known finished by then.
    at: &'static [(&'static str, usize)],
    /// A second invocation, with points of its own (as `at`): later phases that the first, too
    /// long to reach them, cannot show.
    later: Option<(Vec<&'static str>, &'static [(&'static str, usize)])>,
}

/// `None`: it does no work to stop.
fn long(sub: &str) -> Option<Long> {
    type Points = &'static [(&'static str, usize)];
    let (args, steps, kept, at): (Vec<&'static str>, usize, &'static [&'static str], Points) =
        match sub {
            // It lists the variants and exits: nothing to stop.
            "variants" => return None,
            // fio's runs are its longest phase: a stop must kill fio and its job processes (which
            // are in sessions of their own). First with runs of 600 s, stopped at set-up and in the
            // calibration's run: a stop that waited for fio would outlast the watchdog. Then with
            // runs of 3 s, stopped in each configuration's runs, with and without the contention
            // recorder (bpftrace), in the cgroups, and in the model's runs; the steps done are the
            // kernel configurations measured before the point.
            "kernel" => {
                let run = |duration| {
                    vec![
                        "kernel",
                        "--threads",
                        "2",
                        "--duration",
                        duration,
                        "--ramp",
                        "0",
                        "--rounds",
                        "1",
                        "--groups",
                        "2",
                        "--size-mib",
                        "64",
                        "--points",
                        "main",
                        "--no-profile",
                        "--json",
                        "k.json",
                    ]
                };
                let later: Points = &[
                    ("round 1/1: kernel none", 0),
                    ("kernel none (lock contention recorded)", 0),
                    ("round 1/1: kernel mq-deadline", 1),
                    ("round 1/1: kernel bfq-groups", 3),
                    ("round 1/1: model none", 4),
                ];
                return Some(Long {
                    args: run("600"),
                    steps: 0,
                    kept: &["k.json"],
                    at: &[("calibration: kernel none", 0)],
                    later: Some((run("3"), later)),
                });
            }
            // A synthetic trace far larger than a run writes (see `big_trace`): stopped while it is
            // read and while it is parsed.
            "trace-summary" => (
                vec!["trace-summary", "big.json", "--json", "t.json", "--svg", "t.svg"],
                0,
                &[],
                &[("parsing the trace", 0)],
            ),
            // One run: its stop points are before and during it.
            "run" => (
                words("run --variant no-stats --threads 1 --duration 1h --json r.json"),
                0,
                &[],
                &[],
            ),
            "compare" => (
                words(
                    "compare --placement pool --threads 1 --rounds 1000 \
                    --variants no-stats --duration 0.2 --ramp 0 --retries 0 \
                    --measure plain --json c.json",
                ),
                3,
                &["c.json"],
                &[],
            ),
            "sweep" => (
                words(
                    "sweep --threads 1 --variants no-stats --duration 0.2 --ramp 0 \
                    --retries 0 --lockstat-duration 0 --sweep-slots 1-64 \
                    --sweep-outside-ns 0,500,1000 --csv s.csv --svg s.svg",
                ),
                3,
                &["s.csv", "s.svg"],
                &[],
            ),
            "predict" => (
                words_and(
                    "predict --variants no-stats --threads 1 --lock fair-spin --validate \
                    --rounds 100 --duration 0.3 --ramp 0 --retries 0 \
                    --outside-list 0,100,200,300,400,500 --json p.json",
                    &["--calibration", CALIBRATION, "--topology", TOPOLOGY],
                ),
                3,
                &["p.json"],
                &[],
            ),
            "roundtrip" => (
                words(
                    "roundtrip --variant no-stats --rounds 1000 --iterations 2000000 \
                    --svg r.svg",
                ),
                2,
                &["r.svg"],
                &[],
            ),
            // Under its request cap (20 M requests), a few seconds of real time at most: one step.
            "simulate" => (vec!["simulate", "--runtime", "300", "--json", "s.json"], 0, &[], &[]),
            // Every safe variant, half a second each: a stop after the first keeps its files.
            "flamegraph" => (
                words("flamegraph --variant all --duration 0.5 --threads 1 --out fg"),
                1,
                &["fg/"],
                &[],
            ),
            other => panic!(
                "no long invocation for `{other}`: add one to `long` (or say why it has none)"
            ),
        };
    Some(Long { args, steps, kept, at, later: None })
}

/// A trace of `run --trace`'s form, two threads taking turns at the scheduler lock, of about
/// `mib` MiB: its parse takes seconds (a run's trace is ~6 MiB a second), so that a stop sent
/// when the parse starts lands in it.
fn big_trace(path: &Path, mib: usize) {
    use std::io::Write;
    let mut out = std::io::BufWriter::new(std::fs::File::create(path).unwrap());
    writeln!(out, "[").unwrap();
    for tid in 1..=2 {
        writeln!(
            out,
            r#"{{"args":{{"name":"job-{}"}},"name":"thread_name","ph":"M","pid":1,"tid":{tid}}},"#,
            tid - 1
        )
        .unwrap();
    }
    let mut written = 0usize;
    let mut i = 0u64;
    while written < mib << 20 {
        let tid = 1 + i % 2;
        let ts = i as f64 * 2.0;
        let lines = [
            format!(
                r#"{{"args":{{"pid":"{tid}","sector":"{i}"}},"cat":"schedlab::path","name":"bfq_insert_request","ph":"B","pid":1,"tid":{tid},"ts":{ts:.3}}},"#
            ),
            format!(
                r#"{{"args":{{"lock":"sched","path":"insert"}},"cat":"schedlab::lock","name":"sched lock: hold","ph":"B","pid":1,"tid":{tid},"ts":{:.3}}},"#,
                ts + 0.1
            ),
            format!(
                r#"{{"args":{{"lock":"sched","path":"insert"}},"cat":"schedlab::lock","name":"sched lock: hold","ph":"E","pid":1,"tid":{tid},"ts":{:.3}}},"#,
                ts + 1.5
            ),
            format!(
                r#"{{"cat":"schedlab::path","name":"bfq_insert_request","ph":"E","pid":1,"tid":{tid},"ts":{:.3}}}"#,
                ts + 1.6
            ),
        ];
        for l in &lines {
            written += l.len() + 2;
            out.write_all(l.as_bytes()).unwrap();
        }
        i += 1;
        // The last event has no comma.
        out.write_all(if written < mib << 20 { b",\n" } else { b"\n" }).unwrap();
    }
    writeln!(out, "]").unwrap();
    out.flush().unwrap();
}

/// Whether `schedlab kernel` can run here (`scripts/kernel-ready.sh`): `Err(why)` otherwise.
fn kernel_ready() -> Result<(), String> {
    let out = Command::new("bash")
        .arg(concat!(env!("CARGO_MANIFEST_DIR"), "/scripts/kernel-ready.sh"))
        .output()
        .map_err(|e| e.to_string())?;
    match out.status.success() {
        true => Ok(()),
        false => Err(String::from_utf8_lossy(&out.stdout).trim().to_string()),
    }
}

/// What a `kernel` run of pid `pid` could have left behind: its private directory in the tmpfs
/// (`schedlab-kernel-<pid>-<random>`, holding the backing file), its ledger
/// (`<pid>-<start time>.json`), cgroups, loop device, and any fio or bpftrace process (not a
/// zombie) that it started.
fn kernel_leftovers(pid: u32, started: &[u32]) -> Vec<String> {
    let name = format!("schedlab-kernel-{pid}");
    let mut left = Vec::new();
    let places = [("/dev/shm", format!("{name}-")), ("/run/schedlab-kernel", format!("{pid}-"))];
    for (dir, prefix) in places {
        for e in std::fs::read_dir(dir).into_iter().flatten().flatten() {
            if e.file_name().to_string_lossy().starts_with(&prefix) {
                left.push(e.path().display().to_string());
            }
        }
    }
    for root in ["/sys/fs/cgroup/blkio", "/sys/fs/cgroup/cpuacct", "/sys/fs/cgroup"] {
        let cg = Path::new(root).join(&name);
        if cg.exists() {
            left.push(cg.display().to_string());
        }
    }
    for e in std::fs::read_dir("/sys/block").into_iter().flatten().flatten() {
        let backing = std::fs::read_to_string(e.path().join("loop/backing_file"));
        let backing = backing.unwrap_or_default();
        if backing.contains(&format!("{name}-")) {
            left.push(format!("/dev/{}", e.file_name().to_string_lossy()));
        }
    }
    for p in started {
        let stat = std::fs::read_to_string(format!("/proc/{p}/stat")).unwrap_or_default();
        let live = stat.rsplit_once(')').is_some_and(|(_, rest)| {
            !matches!(rest.split_whitespace().next(), Some("Z" | "X") | None)
        });
        if live {
            left.push(format!("process {p}: {}", stat.split_whitespace().nth(1).unwrap_or("?")));
        }
    }
    left
}

/// The parent and command name of process `pid`.
fn parent_and_name(pid: u32) -> Option<(u32, String)> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let (head, rest) = stat.rsplit_once(')')?;
    let name = head.split_once('(')?.1.to_string();
    Some((rest.split_whitespace().nth(1)?.parse().ok()?, name))
}

/// Whether a fio started by `pid` has job processes (fio processes whose parent is that fio).
fn fio_jobs_running(pid: u32) -> bool {
    let procs: Vec<(u32, u32, String)> = std::fs::read_dir("/proc")
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|e| e.file_name().to_str()?.parse::<u32>().ok())
        .filter_map(|p| parent_and_name(p).map(|(ppid, name)| (p, ppid, name)))
        .collect();
    procs.iter().any(|(fio, ppid, name)| {
        *ppid == pid
            && name == "fio"
            && procs.iter().any(|(_, parent, job)| parent == fio && job == "fio")
    })
}

/// The fio and bpftrace processes alive now (their pids), to find which a run started.
fn tool_processes() -> Vec<u32> {
    std::fs::read_dir("/proc")
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|e| e.file_name().to_str()?.parse::<u32>().ok())
        .filter(|p| {
            let comm = std::fs::read_to_string(format!("/proc/{p}/comm")).unwrap_or_default();
            matches!(comm.trim(), "fio" | "bpftrace" | "perf")
        })
        .collect()
}

/// Where to stop: after the `parsed` line and `lines` more lines, after `done` finished steps,
/// or after a progress line holding a text.
#[derive(Clone, Copy, Debug)]
enum Point {
    Lines(usize),
    Done(usize),
    Step(&'static str),
}

fn is_done(line: &str) -> bool {
    line.contains(" INFO ") && line.contains("schedlab::progress:")
}

/// Runs `args` at `-vv` in `dir`, sends `signal` at `point`, and returns the exit code, the
/// whole stderr, the steps it reported done (all of them, up to its exit), its pid and the time
/// from the signal to its exit (printed, never asserted).
fn stopped(
    args: &[&str],
    dir: &Path,
    point: Point,
    signal: &str,
) -> (Option<i32>, String, usize, u32, Duration) {
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
    let (mut parsed, mut lines, mut done, mut stepped) = (false, 0, 0, false);
    loop {
        let reached = match point {
            Point::Lines(n) => parsed && lines >= n,
            Point::Done(n) => parsed && done >= n,
            Point::Step(_) => parsed && stepped,
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
                if let Point::Step(text) = point {
                    stepped |= line.contains("schedlab::progress:") && line.contains(text);
                }
            }
            Err(_) => panic!(
                "{args:?}: ended or went silent before {point:?} (a long \
                invocation must outlast the test)"
            ),
        }
    }
    if let Point::Step(text) = point {
        if args.first() == Some(&"kernel") && text.contains("kernel ") {
            // The event for a stop in a kernel run: fio's job processes are doing the I/O (fio
            // forks them after its start, each in a session of its own), so that the stop
            // lands in the run, not in fio's start.
            while !fio_jobs_running(child.id()) {
                if child.try_wait().unwrap().is_some() || Instant::now() > watchdog {
                    panic!("{args:?}: fio's job processes never ran after {point:?}");
                }
                std::thread::sleep(Duration::from_millis(5));
            }
        }
    }
    let _ = Command::new("kill").args([&format!("-{signal}"), &child.id().to_string()]).status();
    let signalled = Instant::now();
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
    let took = signalled.elapsed();
    (code, all, done_total, child.id(), took)
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
        "sweep" => Some(
            std::fs::read_to_string(dir.join("s.csv"))
                .ok()?
                .lines()
                .skip(1)
                .filter(|l| !l.is_empty())
                .count(),
        ),
        "compare" => {
            let v: serde_json::Value =
                serde_json::from_str(&std::fs::read_to_string(dir.join("c.json")).ok()?).ok()?;
            Some(v["results"].as_array()?.iter().filter_map(|r| r["runs"].as_u64()).sum::<u64>()
                as usize)
        }
        // The kernel configurations with a finished run.
        "kernel" => {
            let v: serde_json::Value =
                serde_json::from_str(&std::fs::read_to_string(dir.join("k.json")).ok()?).ok()?;
            Some(
                v["kernel"]
                    .as_array()?
                    .iter()
                    .filter(|r| r["kiops"]["runs"].as_array().is_some_and(|a| !a.is_empty()))
                    .count(),
            )
        }
        _ => None,
    }
}

fn stops_at_every_point(sub: &str) {
    let Some(l) = long(sub) else {
        println!("{sub}: nothing to stop (see `long`)");
        return;
    };
    if sub == "kernel" {
        if let Err(why) = kernel_ready() {
            panic!(
                "kernel: cannot run here ({why}); this test is ignored where \
                scripts/kernel-ready.sh fails"
            );
        }
    }
    let mut points: Vec<(Point, &[&str], &[(&str, usize)])> =
        vec![(Point::Lines(0), &l.args, l.at), (Point::Lines(1), &l.args, l.at)];
    points.extend((1..=l.steps).map(|n| (Point::Done(n), &l.args[..], l.at)));
    points.extend(l.at.iter().map(|(text, _)| (Point::Step(text), &l.args[..], l.at)));
    if let Some((args, at)) = &l.later {
        points.extend(at.iter().map(|(text, _)| (Point::Step(text), &args[..], *at)));
    }
    // One trace for every point (written once: a few seconds).
    let shared =
        tempfile::Builder::new().prefix(&format!("schedlab-stops-{sub}-input-")).tempdir().unwrap();
    if sub == "trace-summary" {
        big_trace(&shared.path().join("big.json"), 160);
    }
    for (i, (point, args, at)) in points.into_iter().enumerate() {
        let (signal, expected) = if i % 2 == 0 { ("INT", 130) } else { ("TERM", 143) };
        let dir =
            tempfile::Builder::new().prefix(&format!("schedlab-stops-{sub}-")).tempdir().unwrap();
        if sub == "trace-summary" {
            // The input beside the outputs, by a hard link (no copy of 160 MiB per point);
            // removed before the outputs are checked.
            std::fs::hard_link(shared.path().join("big.json"), dir.path().join("big.json"))
                .unwrap();
        }
        let tools_before = if sub == "kernel" { tool_processes() } else { Vec::new() };
        let (code, stderr, mut done, pid, took) = stopped(args, dir.path(), point, signal);
        let what = format!("{sub} stopped by SIG{signal} at {point:?} ({})", args.join(" "));
        // Printed, never asserted (a loaded machine may take longer): the figure the notes quote.
        println!("{what}: exit {code:?} {:.2} s after the signal", took.as_secs_f64());
        let _ = std::fs::remove_file(dir.path().join("big.json"));
        assert!(
            !stderr.contains("panicked") && !stderr.contains("internal error"),
            "{what}: {stderr}"
        );
        assert_eq!(code, Some(expected), "{what}: {stderr}");
        assert!(
            stderr.contains(&format!("SIG{signal}: stopping")),
            "{what}: the stop is said: {stderr}"
        );
        outputs_are_whole(dir.path(), &what);
        if sub == "kernel" {
            // Every fio, bpftrace or perf process it started is gone (the stop killed them, not
            // their end), and its set-up is put back. The tools are the ones that appeared
            // during its run: other users' tools were there before it.
            let started: Vec<u32> =
                tool_processes().into_iter().filter(|p| !tools_before.contains(p)).collect();
            assert_eq!(
                kernel_leftovers(pid, &started),
                Vec::<String>::new(),
                "{what}: left behind: {stderr}"
            );
            let v: serde_json::Value = serde_json::from_str(
                &std::fs::read_to_string(dir.path().join("k.json")).unwrap_or_default(),
            )
            .unwrap_or_default();
            if v.is_object() {
                assert_eq!(v["interrupted"], true, "{what}");
                assert_eq!(v["signal"], format!("SIG{signal}"), "{what}");
            }
        }
        if let Point::Step(text) = point {
            done = done.max(at.iter().find(|(t, _)| *t == text).map_or(0, |p| p.1));
        }
        if done > 0 {
            for kept in l.kept {
                let path = dir.path().join(kept.trim_end_matches('/'));
                let there = if kept.ends_with('/') {
                    std::fs::read_dir(&path).map(|mut d| d.next().is_some()).unwrap_or(false)
                } else {
                    path.is_file()
                };
                assert!(there, "{what}: {done} step(s) done, {kept} is kept: {stderr}");
            }
            if let Some(kept) = steps_kept(sub, dir.path()) {
                assert!(kept >= done, "{what}: {done} step(s) reported done, {kept} kept");
            }
        }
    }
}

/// The table below names exactly the CLI's subcommands: one added to the CLI without a line
/// here (or without a long invocation) fails, and so does a line for one that is gone.
#[test]
fn every_subcommand_has_a_stop_test() {
    let subs = subcommands();
    assert!(subs.len() >= 10, "{subs:?}");
    for sub in &subs {
        let _ = long(sub);
        assert!(
            stops::TABLE.contains(&sub.as_str()),
            "add `{sub}` to the `per_subcommand!` table of this file"
        );
    }
    for sub in stops::TABLE {
        assert!(
            subs.iter().any(|s| s == sub),
            "`{sub}` is in the `per_subcommand!` table but not a subcommand: {subs:?}"
        );
    }
}

macro_rules! per_subcommand {
    ($($(#[$m:meta])* $name:ident: $sub:literal,)*) => {
        mod stops {
            pub const TABLE: &[&str] = &[$($sub),*];
            $($(#[$m])* #[test] fn $name() { super::stops_at_every_point($sub) })*
        }
    };
}

per_subcommand! {
    variants: "variants",
    run: "run",
    compare: "compare",
    sweep: "sweep",
    predict: "predict",
    roundtrip: "roundtrip",
    simulate: "simulate",
    flamegraph: "flamegraph",
    trace_summary: "trace-summary",
    #[ignore = "needs root, a free loop device, BFQ, fio, perf and bpftrace: \
        scripts/test.sh runs it where scripts/kernel-ready.sh finds them"]
    kernel: "kernel",
}
