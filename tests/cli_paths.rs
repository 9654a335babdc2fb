//! Paths, generated from the CLI's own definition (issue 33, items 1, 4 and 7): every path-valued
//! option of every subcommand, read from `SCHEDLAB_DESCRIBE=cli` (clap's command tree: a
//! `PathBuf` option is a path), with its role read from `SCHEDLAB_DESCRIBE=paths` (the path
//! registry's declaration), is tried
//! - aliased with every other path option of its subcommand, by the same name, a symlink and a
//!   hard link, and as a file inside an output directory: refused before any work, one line,
//!   exit 2, nothing written (whatever `RUST_LOG` says);
//! - as `/dev/stdout` (stdout a file opened for append), `/dev/fd/3` opened for append, `/dev/fd/3`
//!   a pipe, a 255-byte name, a non-UTF-8 name: done, the file or descriptor written through and
//!   nothing replaced; a 256-byte name and a directory where no file can be made: refused before
//!   any work; `/dev/full`: exit 3 with the reason said under `RUST_LOG=off`;
//! - on a full file system (a 256 KiB tmpfs, filled; mounted where the test runs as root, skipped
//!   with a line otherwise), as a new name and as the name of a file already there: a non-zero
//!   exit with the reason said, the file that was there intact, nothing left behind;
//! - (issue 43) with a symlink, a dangling symlink, a FIFO, a hard link or another user's file
//!   planted at its lock file's name: refused before any work, the planted name's owner said,
//!   nothing followed; under `ulimit -f 0`: exit 3 (2 for the sweep's CSV) with the limit said,
//!   no temporary or lock file left; over another user's file (as root): its owner kept.
//!
//! A new subcommand needs its cheapest invocation below ([`quick`]); a new option is covered as it
//! is. No assertion depends on timing.

use std::collections::BTreeMap;
use std::ffi::{OsStr, OsString};
use std::os::unix::ffi::{OsStrExt, OsStringExt};
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

mod invoke;
use invoke::{words, words_and, CALIBRATION, TOPOLOGY};

const BIN: &str = env!("CARGO_BIN_EXE_schedlab");
/// A `schedlab kernel --json` report of 2 jobs × iodepth 32 with its lock sites (`--model-from`).
const KERNEL_REPORT: &str =
    concat!(env!("CARGO_MANIFEST_DIR"), "/benches/tests/fixtures/kernel/report-2x32.json");
/// A `schedlab kernel --inject --json` report of 2 jobs × iodepth 32 at 0 and 2000 ns
/// (`--kernel-from`).
const INJECT_REPORT: &str =
    concat!(env!("CARGO_MANIFEST_DIR"), "/notes/results/2026-12-04-softirq/inject-2.json");
/// A `schedlab compare --json` report of sched-lock, no-stats and epoch under parking-lot
/// (`compare --baseline`: the quick comparison below runs the same).
const COMPARE_REPORT: &str =
    concat!(env!("CARGO_MANIFEST_DIR"), "/benches/tests/fixtures/compare/baseline.json");

/// A trace with one wait and two holds that do not overlap: a valid trace to summarise and draw.
const TRACE: &str = r#"[{"ph":"B","name":"sched lock: wait","cat":"lock","tid":2,"ts":1.0},{"ph":"B","name":"sched lock: hold","cat":"lock","tid":1,"ts":1.0},
{"ph":"E","name":"sched lock: hold","cat":"lock","tid":1,"ts":2.0},{"ph":"E","name":"sched lock: wait","cat":"lock","tid":2,"ts":2.0},
{"ph":"B","name":"sched lock: hold","cat":"lock","tid":2,"ts":2.0},{"ph":"E","name":"sched lock: hold","cat":"lock","tid":2,"ts":3.0}]"#;

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// One option of one subcommand, as `SCHEDLAB_DESCRIBE=cli` gives it.
#[derive(Clone, Debug)]
struct Opt {
    sub: String,
    /// `--long`, or the positional's name (`FILE`).
    name: String,
    kind: String,
    conflicts: Vec<String>,
}

fn describe_cli() -> Vec<Opt> {
    static CLI: std::sync::OnceLock<Vec<Opt>> = std::sync::OnceLock::new();
    CLI.get_or_init(read_cli).clone()
}

fn read_cli() -> Vec<Opt> {
    let out =
        Command::new(BIN).env("SCHEDLAB_DESCRIBE", "cli").env_remove("RUST_LOG").output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    text(&out.stdout)
        .lines()
        .filter_map(|l| {
            let f: Vec<&str> = l.split('\t').collect();
            (f.len() == 4 && !f[1].is_empty()).then(|| Opt {
                sub: f[0].into(),
                name: f[1].into(),
                kind: f[2].into(),
                conflicts: f[3].split(',').filter(|c| !c.is_empty()).map(String::from).collect(),
            })
        })
        .collect()
}

fn subcommands() -> Vec<String> {
    let out = Command::new(BIN).env("SCHEDLAB_DESCRIBE", "cli").output().unwrap();
    text(&out.stdout)
        .lines()
        .filter(|l| l.split('\t').nth(1) == Some(""))
        .map(|l| l.split('\t').next().unwrap().to_string())
        .collect()
}

/// An invocation: the subcommand and its (option, value) pairs in order; a positional has no
/// option.
#[derive(Clone, Debug)]
struct Inv {
    sub: String,
    args: Vec<(String, Option<OsString>)>,
}

impl Inv {
    fn new(sub: &str, args: &[&str]) -> Inv {
        let mut inv = Inv { sub: sub.into(), args: Vec::new() };
        let mut i = 0;
        while i < args.len() {
            let a = args[i];
            if a.starts_with("--") && i + 1 < args.len() && !args[i + 1].starts_with("--") {
                inv.args.push((a.into(), Some(args[i + 1].into())));
                i += 2;
            } else if a.starts_with("--") {
                inv.args.push((a.into(), None));
                i += 1;
            } else {
                inv.args.push((String::new(), Some(a.into())));
                i += 1;
            }
        }
        inv
    }

    /// Sets `opt` (an option, or a positional by its upper-case name) to `value`, dropping the
    /// options it conflicts with.
    fn set(&mut self, opt: &Opt, value: impl Into<OsString>) {
        let value = value.into();
        // The options it conflicts with, declared on either side.
        let theirs: Vec<String> = describe_cli()
            .into_iter()
            .filter(|o| o.sub == self.sub && o.conflicts.contains(&opt.name))
            .map(|o| o.name)
            .collect();
        self.args.retain(|(o, _)| !opt.conflicts.contains(o) && !theirs.contains(o));
        let key = if opt.name.starts_with("--") { opt.name.clone() } else { String::new() };
        match self.args.iter_mut().find(|(o, _)| *o == key) {
            Some(slot) => slot.1 = Some(value),
            None => self.args.push((key, Some(value))),
        }
    }

    fn argv(&self) -> Vec<OsString> {
        let mut v: Vec<OsString> = vec![self.sub.clone().into()];
        // Positionals first: some options take several values.
        for (o, val) in self.args.iter().filter(|(o, _)| o.is_empty()) {
            let _ = o;
            v.push(val.clone().unwrap());
        }
        for (o, val) in self.args.iter().filter(|(o, _)| !o.is_empty()) {
            v.push(o.into());
            if let Some(val) = val {
                v.push(val.clone());
            }
        }
        v
    }

    fn command(&self, cwd: &Path) -> Command {
        let mut c = Command::new(BIN);
        c.args(self.argv())
            .current_dir(cwd)
            .env_remove("RUST_LOG")
            .env_remove("SCHEDLAB_FAIL_AFTER_WORK")
            .stdin(Stdio::null());
        c
    }

    fn run(&self, cwd: &Path) -> Output {
        self.command(cwd).output().unwrap()
    }
}

/// The files every invocation may read: made once per test in its scratch directory.
struct Fixture {
    dir: tempfile::TempDir,
}

impl Fixture {
    fn new(name: &str) -> Fixture {
        let dir =
            tempfile::Builder::new().prefix(&format!("schedlab-paths-{name}-")).tempdir().unwrap();
        std::fs::write(dir.path().join("trace.json"), TRACE).unwrap();
        std::fs::write(dir.path().join("stacks.folded"), "main;work;spin 30\nmain;idle 10\n")
            .unwrap();
        Fixture { dir }
    }

    fn path(&self) -> &Path {
        self.dir.path()
    }

    /// Valid content for an input option (a copy can be made under any name).
    fn input_for(&self, opt: &str) -> PathBuf {
        match opt {
            "--calibration" => CALIBRATION.into(),
            "--topology" => TOPOLOGY.into(),
            "FILE" => self.path().join("trace.json"),
            "--folded" => self.path().join("stacks.folded"),
            "--model-from" => KERNEL_REPORT.into(),
            "--kernel-from" => INJECT_REPORT.into(),
            "--baseline" => COMPARE_REPORT.into(),
            other => {
                panic!("no valid content known for the input {other}: add it to Fixture::input_for")
            }
        }
    }
}

/// The cheapest invocation of each subcommand that does its work here; `None`: it cannot run on
/// this machine (the kernel experiment needs root, fio, perf, bpftrace and a block device), so
/// only its refusals are tried.
fn quick(sub: &str, fx: &Fixture) -> Option<Inv> {
    let trace = fx.path().join("trace.json");
    Some(match sub {
        "variants" => Inv::new(sub, &[]),
        "run" => Inv::new(sub, &["--variant", "no-stats", "--threads", "1", "--duration", "0.05"]),
        // The variants and lock kind of `COMPARE_REPORT`, which `--baseline` reads.
        "compare" => Inv::new(
            sub,
            &words(
                "--placement pool --threads 1 --rounds 1 \
                --variants sched-lock,no-stats,epoch --lock parking-lot \
                --duration 0.05 --ramp 0 --retries 0 --measure plain",
            ),
        ),
        "sweep" => Inv::new(
            sub,
            &words(
                "--threads 1 --variants no-stats --duration 0.05 --ramp 0 \
                --retries 0 --lockstat-duration 0 --csv s.csv --svg s.svg",
            ),
        ),
        "predict" => Inv::new(
            sub,
            &words_and(
                "--variants no-stats --threads 1 --lock fair-spin --validate --rounds 1 \
                --duration 0.05 --ramp 0 --retries 0 --outside-list 0",
                &["--calibration", CALIBRATION, "--topology", TOPOLOGY],
            ),
        ),
        "roundtrip" => {
            Inv::new(sub, &["--variant", "no-stats", "--rounds", "1", "--iterations", "1000"])
        }
        "simulate" => Inv::new(sub, &["--runtime", "0.01"]),
        "flamegraph" => {
            Inv::new(sub, &["--variant", "no-stats", "--duration", "0.05", "--out", "fg"])
        }
        "trace-summary" => Inv::new(sub, &[trace.to_str().unwrap()]),
        "kernel" => return None,
        other => panic!("no cheapest invocation for the subcommand `{other}`: add one to `quick`"),
    })
}

/// The invocation used for refusals: the quick one, or (for a subcommand that cannot run here)
/// the arguments every path option of it accepts (`kernel --inject-raw` needs `--inject`).
fn base(sub: &str, fx: &Fixture) -> Inv {
    quick(sub, fx).unwrap_or_else(|| match sub {
        "kernel" => Inv::new(sub, &["--inject", "0,500"]),
        _ => Inv::new(sub, &[]),
    })
}

/// The role each path option of `inv` gets (`input`, `output`, `dir`), and the files of a
/// directory, from the registry's own declaration.
fn declared(inv: &Inv, cwd: &Path) -> Vec<(String, String, PathBuf)> {
    let out = inv.command(cwd).env("SCHEDLAB_DESCRIBE", "paths").output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{:?}: {}", inv.argv(), text(&out.stderr));
    out.stdout
        .split(|&b| b == b'\n')
        .filter(|l| !l.is_empty())
        .map(|l| {
            let f: Vec<&[u8]> = l.splitn(3, |&b| b == b'\t').collect();
            (text(f[0]), text(f[1]), PathBuf::from(OsStr::from_bytes(f[2])))
        })
        .collect()
}

/// Everything under `dir` (names, sizes, inodes), to show that a refusal wrote nothing.
fn listing(dir: &Path) -> BTreeMap<PathBuf, (u64, u64)> {
    let mut all = BTreeMap::new();
    let mut todo = vec![dir.to_path_buf()];
    while let Some(d) = todo.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let e = e.unwrap();
            let m = std::fs::symlink_metadata(e.path()).unwrap();
            if m.is_dir() {
                todo.push(e.path());
            }
            all.insert(e.path(), (m.len(), m.ino()));
        }
    }
    all
}

/// One line of bad input, exit 2, no panic, nothing written; said under `RUST_LOG=off` too.
fn refused(inv: &Inv, cwd: &Path, what: &str) {
    let before = listing(cwd);
    for log in [None, Some("off")] {
        let mut c = inv.command(cwd);
        if let Some(l) = log {
            c.env("RUST_LOG", l);
        }
        let out = c.output().unwrap();
        let stderr = text(&out.stderr);
        let errors: Vec<&str> =
            stderr.lines().filter(|l| !l.starts_with("schedlab: warning: ")).collect();
        assert_eq!(
            out.status.code(),
            Some(2),
            "{what}: {:?} (RUST_LOG {log:?}): {stderr}",
            inv.argv()
        );
        assert_eq!(errors.len(), 1, "{what}: one line (RUST_LOG {log:?}): {stderr}");
        assert!(
            errors[0].starts_with("schedlab: ") && !stderr.contains("panicked"),
            "{what}: {stderr}"
        );
        assert_eq!(listing(cwd), before, "{what}: nothing written or removed");
    }
}

fn path_options(sub: &str) -> Vec<Opt> {
    describe_cli().into_iter().filter(|o| o.sub == sub && o.kind == "path").collect()
}

/// The role of `opt` in `sub` (and the files of an output directory), declared when it is given.
fn role(sub: &str, opt: &Opt, fx: &Fixture) -> (String, Vec<PathBuf>) {
    let mut inv = base(sub, fx);
    let probe = fx.path().join("probe");
    inv.set(opt, &probe);
    let lines = declared(&inv, fx.path());
    let role = lines
        .iter()
        .find(|(r, f, p)| r != "file" && f == &opt.name && p == &probe)
        .map(|(r, _, _)| r.clone())
        .unwrap_or_else(|| panic!("{sub} {}: not declared: {lines:?}", opt.name));
    let files = lines
        .iter()
        .filter(|(r, f, _)| r == "file" && f == &opt.name)
        .map(|(_, _, p)| p.clone())
        .collect();
    (role, files)
}

/// Every pair of path options of `sub`, aliased in every way: refused before any work.
fn aliasing_is_refused(sub: &str) {
    let fx = Fixture::new(sub);
    let opts = path_options(sub);
    let roles: Vec<(String, Vec<PathBuf>)> = opts.iter().map(|o| role(sub, o, &fx)).collect();
    let mut n = 0;
    for (i, a) in opts.iter().enumerate() {
        for (j, b) in opts.iter().enumerate().skip(i + 1) {
            if a.conflicts.contains(&b.name) || b.conflicts.contains(&a.name) {
                continue;
            }
            let (ra, rb) = (&roles[i].0, &roles[j].0);
            let scratch = tempfile::tempdir_in(fx.path()).unwrap();
            let s = scratch.path();
            let what = |how: &str| format!("{sub} {} and {} ({ra}, {rb}) {how}", a.name, b.name);
            let with = |va: &Path, vb: &Path| {
                let mut inv = base(sub, &fx);
                inv.set(a, va);
                inv.set(b, vb);
                inv
            };
            match (ra.as_str(), rb.as_str()) {
                ("input", "input") | ("dir", "dir") => continue,
                ("dir", _) | (_, "dir") => {
                    // A file inside the directory, and the directory's own name.
                    let (dir_opt, dir_files, other, other_role) =
                        if ra == "dir" { (a, &roles[i].1, b, rb) } else { (b, &roles[j].1, a, ra) };
                    let d = s.join("d");
                    let inside = d.join(dir_files[0].file_name().unwrap());
                    if other_role == "input" {
                        std::fs::create_dir(&d).unwrap();
                        std::fs::write(&inside, "keep").unwrap();
                    }
                    let mut inv = base(sub, &fx);
                    inv.set(dir_opt, &d);
                    inv.set(other, &inside);
                    // A derived name follows the input's: look again with the input in place.
                    let files: Vec<PathBuf> = declared(&inv, fx.path())
                        .into_iter()
                        .filter(|(r, f, _)| r == "file" && f == &dir_opt.name)
                        .map(|(_, _, p)| p)
                        .collect();
                    if !files.contains(&inside) {
                        continue;
                    }
                    refused(&inv, fx.path(), &what("a file inside the directory"));
                    if other_role == "output" {
                        let mut inv = base(sub, &fx);
                        inv.set(dir_opt, &d);
                        inv.set(other, &d);
                        refused(&inv, fx.path(), &what("the directory's own name"));
                    }
                    n += 1;
                }
                _ => {
                    // Outputs and inputs: by name, a symlink and a hard link to an existing file,
                    // and by name and a dangling symlink to a new one.
                    let existing = s.join("existing");
                    std::fs::write(&existing, "keep").unwrap();
                    let link = s.join("link");
                    std::os::unix::fs::symlink(&existing, &link).unwrap();
                    let hard = s.join("hard");
                    std::fs::hard_link(&existing, &hard).unwrap();
                    refused(&with(&existing, &existing), fx.path(), &what("by name"));
                    refused(&with(&existing, &link), fx.path(), &what("through a symlink"));
                    refused(&with(&hard, &existing), fx.path(), &what("through a hard link"));
                    if ra == "output" && rb == "output" {
                        let new = s.join("new");
                        let dangling = s.join("dangling");
                        std::os::unix::fs::symlink(&new, &dangling).unwrap();
                        refused(
                            &with(&new, &s.join(".").join("new")),
                            fx.path(),
                            &what("a new file by two names"),
                        );
                        refused(
                            &with(&dangling, &new),
                            fx.path(),
                            &what("a new file through a dangling symlink"),
                        );
                    }
                    assert_eq!(std::fs::read_to_string(&existing).unwrap(), "keep");
                    n += 1;
                }
            }
        }
    }
    println!("{sub}: {n} aliasing pairs refused");
}

/// Runs `inv` through bash with fd 3 set up by `setup` (`3>>LOG`, a pipe): `(status, stderr)`.
fn with_fd3(inv: &Inv, cwd: &Path, script: &str, env: &[(&str, &Path)]) -> Output {
    let mut c = Command::new("bash");
    c.arg("-c")
        .arg(script)
        .arg("bash")
        .arg(BIN)
        .args(inv.argv())
        .current_dir(cwd)
        .env_remove("RUST_LOG")
        .stdin(Stdio::null());
    for (k, v) in env {
        c.env(k, v);
    }
    c.output().unwrap()
}

fn done(out: &Output, what: &str) {
    let stderr = text(&out.stderr);
    assert!(!stderr.contains("panicked") && !stderr.contains("internal error"), "{what}: {stderr}");
    assert_eq!(out.status.code(), Some(0), "{what}: {stderr}");
}

/// Makes `log` a file holding `before`, for a run to append to; returns its inode.
fn file_to_append_to(log: &Path, before: &str) -> u64 {
    std::fs::write(log, before).unwrap();
    std::fs::metadata(log).unwrap().ino()
}

/// The run appended to `log` where it was: `before` is still at its start with more after it
/// (bytes, not text: the output need not be UTF-8), and its inode is still `ino` (never renamed
/// over).
fn assert_appended_in_place(log: &Path, before: &str, ino: u64, what: &str) {
    let after = std::fs::read(log).unwrap();
    assert!(
        after.starts_with(before.as_bytes()) && after.len() > before.len(),
        "{what}: keeps what was there and appends: {:?}",
        String::from_utf8_lossy(&after)
    );
    assert_eq!(std::fs::metadata(log).unwrap().ino(), ino, "{what}: is never renamed over");
}

/// Every output option of `sub` written through descriptors and under awkward names; every input
/// read under a non-UTF-8 name.
fn awkward_paths_work(sub: &str) {
    awkward_paths_work_with(sub, &|_, fx| quick(sub, fx))
}

/// As [`awkward_paths_work`], with `quick_for` giving the invocation that works with each option.
fn awkward_paths_work_with(sub: &str, quick_for: &dyn Fn(&Opt, &Fixture) -> Option<Inv>) {
    let fx = Fixture::new(sub);
    for opt in path_options(sub) {
        let Some(q) = quick_for(&opt, &fx) else {
            println!(
                "{sub} {}: cannot run here; its refusals are tried by the aliasing test",
                opt.name
            );
            continue;
        };
        let (role, _) = role(sub, &opt, &fx);
        let scratch = tempfile::tempdir_in(fx.path()).unwrap();
        let s = scratch.path();
        let what = |how: &str| format!("{sub} {} ({role}) {how}", opt.name);
        let with = |v: &OsStr| {
            let mut inv = q.clone();
            inv.set(&opt, v);
            inv
        };
        let mut non_utf8 = b"non-utf8-\xff\xfe".to_vec();
        if role == "input" {
            let source = fx.input_for(&opt.name);
            non_utf8.extend_from_slice(b".in");
            let copy = s.join(OsString::from_vec(non_utf8));
            std::fs::copy(&source, &copy).unwrap();
            done(&with(copy.as_os_str()).run(fx.path()), &what("a non-UTF-8 name"));
            continue;
        }
        // A 255-byte name (the longest there is) works; 256 is refused before any work.
        let long = s.join("x".repeat(255));
        done(&with(long.as_os_str()).run(fx.path()), &what("a 255-byte name"));
        assert!(std::fs::symlink_metadata(&long).is_ok(), "{}", what("a 255-byte name is written"));
        refused(&with(s.join("x".repeat(256)).as_os_str()), fx.path(), &what("a 256-byte name"));
        let odd = s.join(OsString::from_vec(non_utf8));
        done(&with(odd.as_os_str()).run(fx.path()), &what("a non-UTF-8 name"));
        assert!(std::fs::symlink_metadata(&odd).is_ok(), "{}", what("a non-UTF-8 name is written"));
        // A directory where no file can be made (even by root: /proc).
        refused(
            &with(OsStr::new("/proc/schedlab-no-such-file")),
            fx.path(),
            &what("in a directory where no file can be made"),
        );
        if role != "output" {
            continue;
        }
        // /dev/stdout, stdout being a file opened for append: written after what was there.
        let log = s.join("stdout.txt");
        let ino = file_to_append_to(&log, "before\n");
        let file = std::fs::OpenOptions::new().append(true).open(&log).unwrap();
        let out = with(OsStr::new("/dev/stdout")).command(fx.path()).stdout(file).output().unwrap();
        done(&out, &what("/dev/stdout"));
        assert_appended_in_place(&log, "before\n", ino, &what("/dev/stdout"));
        // /dev/fd/3 opened for append.
        let log = s.join("fd3.txt");
        let ino = file_to_append_to(&log, "kept\n");
        let out = with_fd3(
            &with(OsStr::new("/dev/fd/3")),
            fx.path(),
            r#"exec 3>>"$LOG"; exec "$@" >/dev/null"#,
            &[("LOG", &log)],
        );
        done(&out, &what("/dev/fd/3 opened for append"));
        assert_appended_in_place(&log, "kept\n", ino, &what("/dev/fd/3 opened for append"));
        // /dev/fd/3 a pipe (as process substitution gives).
        let sink = s.join("sink");
        let out = with_fd3(
            &with(OsStr::new("/dev/fd/3")),
            fx.path(),
            r#""$@" 3>&1 >/dev/null | cat > "$SINK"; exit "${PIPESTATUS[0]}""#,
            &[("SINK", &sink)],
        );
        done(&out, &what("/dev/fd/3 a pipe"));
        assert!(!std::fs::read(&sink).unwrap().is_empty(), "{}", what("the pipe got the output"));
        // A full device: exit 3 (2 for the sweep's CSV, whose header is written before any
        // work), the reason said whatever the log filter.
        for log in ["off", "clap=debug"] {
            let out = with(OsStr::new("/dev/full"))
                .command(fx.path())
                .env("RUST_LOG", log)
                .output()
                .unwrap();
            let stderr = text(&out.stderr);
            assert!(matches!(out.status.code(), Some(2 | 3)), "{}: {stderr}", what("/dev/full"));
            assert!(
                stderr.lines().any(|l| l.starts_with("schedlab: cannot write /dev/full")),
                "{} (RUST_LOG={log}): {stderr}",
                what("/dev/full is said")
            );
        }
    }
}

#[test]
fn every_subcommand_has_a_cheapest_invocation_and_its_path_options_are_found() {
    let fx = Fixture::new("all");
    let subs = subcommands();
    assert!(subs.len() >= 10, "{subs:?}");
    for sub in &subs {
        let _ = quick(sub, &fx);
    }
    let paths: Vec<Opt> = describe_cli().into_iter().filter(|o| o.kind == "path").collect();
    assert!(paths.len() >= 25, "{paths:?}");
    // Every subcommand here is tested below: a new one fails this line until it is added.
    let tested = [
        "variants",
        "run",
        "compare",
        "sweep",
        "predict",
        "roundtrip",
        "simulate",
        "flamegraph",
        "trace-summary",
        "kernel",
    ];
    for sub in &subs {
        assert!(
            tested.contains(&sub.as_str()),
            "add `{sub}` to the tests of this file (one line each below)"
        );
    }
}

/// A small tmpfs (256 KiB) mounted for one test, holding a file to be replaced (`kept.out`) and
/// filled to the last block; unmounted when dropped (a failed assertion included).
struct FullFs {
    dir: tempfile::TempDir,
}

/// What `kept.out` holds before each try.
const KEPT: &[u8] = b"written before; must survive\n";

impl FullFs {
    /// `None`, with a line saying why, where this process cannot mount a file system (not root,
    /// or no permission in this container).
    fn mount() -> Option<FullFs> {
        // SAFETY: geteuid reads the process's credentials; no memory is involved.
        if unsafe { libc::geteuid() } != 0 {
            println!(
                "not root: the full file-system test is skipped (/dev/full stands \
                in for it in `awkward`)"
            );
            return None;
        }
        let dir = tempfile::Builder::new().prefix("schedlab-full-").tempdir().unwrap();
        let target = std::ffi::CString::new(dir.path().as_os_str().as_bytes()).unwrap();
        // SAFETY: every pointer is a NUL-terminated string that outlives the call.
        let rc = unsafe {
            libc::mount(
                c"schedlab-full".as_ptr(),
                target.as_ptr(),
                c"tmpfs".as_ptr(),
                0,
                c"size=256k,mode=0777".as_ptr().cast(),
            )
        };
        if rc != 0 {
            println!(
                "cannot mount a tmpfs here ({}): the full file-system test is skipped",
                std::io::Error::last_os_error()
            );
            return None;
        }
        let fs = FullFs { dir };
        std::fs::write(fs.path().join("kept.out"), KEPT).unwrap();
        // Fill it: the filler grows until the file system says it is full.
        let mut filler = std::fs::File::create(fs.path().join("filler")).unwrap();
        let block = vec![0xa5u8; 4096];
        while std::io::Write::write_all(&mut filler, &block).is_ok() {}
        let _ = filler.sync_all();
        Some(fs)
    }

    fn path(&self) -> &Path {
        self.dir.path()
    }

    /// Puts `kept.out` back as it was and removes everything else but the filler.
    fn reset(&self) {
        for e in std::fs::read_dir(self.path()).unwrap().map(Result::unwrap) {
            if e.file_name() != "filler" && e.file_name() != "kept.out" {
                let p = e.path();
                let _ =
                    if p.is_dir() { std::fs::remove_dir_all(&p) } else { std::fs::remove_file(&p) };
            }
        }
        assert_eq!(std::fs::read(self.path().join("kept.out")).unwrap(), KEPT);
    }
}

impl Drop for FullFs {
    fn drop(&mut self) {
        let target = std::ffi::CString::new(self.dir.path().as_os_str().as_bytes()).unwrap();
        // SAFETY: a NUL-terminated path that outlives the call; MNT_DETACH if a file is still open.
        unsafe {
            if libc::umount(target.as_ptr()) != 0 {
                libc::umount2(target.as_ptr(), libc::MNT_DETACH);
            }
        }
    }
}

/// Every output option of `sub` (a file, or an output directory) on a full file system, as a new
/// name and as the name of a file already there: a non-zero exit with the reason said on stderr,
/// no panic, the file that was there intact, nothing left behind on the file system.
fn a_full_file_system_is_said_and_damages_nothing(sub: &str) {
    a_full_file_system_is_said_with(sub, &|_, fx| quick(sub, fx))
}

/// As [`a_full_file_system_is_said_and_damages_nothing`], with `quick_for` giving the invocation
/// that works with each option.
fn a_full_file_system_is_said_with(sub: &str, quick_for: &dyn Fn(&Opt, &Fixture) -> Option<Inv>) {
    let fx = Fixture::new(sub);
    let Some(full) = FullFs::mount() else { return };
    let mut tried = 0;
    for opt in path_options(sub) {
        let (role, _) = role(sub, &opt, &fx);
        if role == "input" {
            continue;
        }
        let Some(q) = quick_for(&opt, &fx) else {
            println!(
                "{sub} {}: cannot run here; its refusals are tried by the aliasing test",
                opt.name
            );
            continue;
        };
        let targets: &[&str] = if role == "dir" { &["new-dir"] } else { &["new.out", "kept.out"] };
        for name in targets {
            full.reset();
            let mut inv = q.clone();
            inv.set(&opt, full.path().join(name));
            let what = format!("{sub} {} ({role}) as {name} on a full file system", opt.name);
            let out = inv.run(fx.path());
            let stderr = text(&out.stderr);
            assert!(
                !stderr.contains("panicked") && !stderr.contains("internal error"),
                "{what}: {stderr}"
            );
            assert!(
                matches!(out.status.code(), Some(2 | 3)),
                "{what}: exit {:?}: {stderr}",
                out.status.code()
            );
            let errors: Vec<&str> = stderr
                .lines()
                .filter(|l| l.starts_with("schedlab: ") && !l.starts_with("schedlab: warning: "))
                .collect();
            assert!(
                errors.iter().any(|l| l.contains("space") || l.contains(name)),
                "{what}: the reason is said: {stderr}"
            );
            assert_eq!(
                std::fs::read(full.path().join("kept.out")).unwrap(),
                KEPT,
                "{what}: the file that was there is intact"
            );
            let left: Vec<_> = std::fs::read_dir(full.path())
                .unwrap()
                .map(|e| e.unwrap().file_name())
                .filter(|n| n != "filler" && n != "kept.out" && n != *name)
                .collect();
            assert!(left.is_empty(), "{what}: nothing left behind: {left:?}");
            tried += 1;
        }
    }
    println!("{sub}: {tried} outputs tried on a full file system");
}

/// Whether this process runs as root (some cases need another user's files).
fn is_root() -> bool {
    // SAFETY: geteuid reads the process's credentials; no memory is involved.
    unsafe { libc::geteuid() == 0 }
}

/// The output options (files and directories) of `sub`, with their roles.
fn output_options(sub: &str, fx: &Fixture) -> Vec<(Opt, String)> {
    path_options(sub)
        .into_iter()
        .map(|o| (role(sub, &o, fx).0, o))
        .filter(|(r, _)| r != "input")
        .map(|(r, o)| (o, r))
        .collect()
}

/// Issue 43, item 2: every output option and output directory of `sub`, with a name planted at
/// its lock file's place (`.NAME.schedlab-lock`, as another user could in a shared directory):
/// a symlink to a file, a dangling symlink, a FIFO, a hard link to a file, and (as root) a file
/// of another user. Each is refused before any work (exit 2, one line naming the lock file and
/// its owner), nothing is written or removed, and the file a link leads to is left as it was.
fn planted_lock_names_are_refused(sub: &str) {
    let fx = Fixture::new(sub);
    let mut tried = 0;
    for (opt, role) in output_options(sub, &fx) {
        let scratch = tempfile::tempdir_in(fx.path()).unwrap();
        let s = scratch.path();
        let victim = s.join("victim");
        std::fs::write(&victim, "precious").unwrap();
        let name = if role == "dir" { "out-dir" } else { "out.x" };
        let lock = s.join(format!(".{name}.schedlab-lock"));
        let mut inv = base(sub, &fx);
        inv.set(&opt, s.join(name));
        let what =
            |how: &str| format!("{sub} {} ({role}) with {how} at its lock file's name", opt.name);
        let link = |to: &Path| std::os::unix::fs::symlink(to, &lock).unwrap();
        let plant: Vec<(&str, Box<dyn Fn()>)> = vec![
            ("a symlink to a file", Box::new(|| link(&victim))),
            ("a dangling symlink", Box::new(|| link(&s.join("made")))),
            (
                "a FIFO",
                Box::new(|| {
                    let c = std::ffi::CString::new(lock.as_os_str().as_bytes()).unwrap();
                    // SAFETY: a NUL-terminated path that outlives the call.
                    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o666) }, 0);
                }),
            ),
            ("a hard link to a file", Box::new(|| std::fs::hard_link(&victim, &lock).unwrap())),
        ];
        for (how, make) in plant {
            make();
            refused(&inv, fx.path(), &what(how));
            let out = inv.run(fx.path());
            let stderr = text(&out.stderr);
            let told = format!("{}", lock.display());
            let named = stderr.contains(&told) && stderr.contains("owned by");
            assert!(named, "{}: {stderr}", what(how));
            assert_eq!(std::fs::read_to_string(&victim).unwrap(), "precious", "{}", what(how));
            assert!(!s.join("made").exists(), "{}: the dangling link is not followed", what(how));
            std::fs::remove_file(&lock).unwrap();
            tried += 1;
        }
        if is_root() {
            std::fs::write(&lock, "").unwrap();
            std::os::unix::fs::chown(&lock, Some(65534), Some(65534)).unwrap();
            refused(&inv, fx.path(), &what("another user's file"));
            let stderr = text(&inv.run(fx.path()).stderr);
            let theirs = what("another user's file");
            assert!(stderr.contains("not by this user"), "{theirs}: {stderr}");
            assert_eq!(std::fs::read(&lock).unwrap(), b"", "{theirs}");
            tried += 1;
        }
    }
    println!("{sub}: {tried} planted lock names refused");
}

/// Issue 43, item 5a: every output option and output directory of `sub` under a shell's
/// file-size limit below its size (`ulimit -f 0`, as a new name and over a file already
/// there): the write fails with EFBIG instead of SIGXFSZ killing the process (exit 153,
/// nothing said): exit 3 (2 for the sweep's CSV, whose header is written before the work), the
/// reason said, no panic, the old file intact, no temporary or lock file left.
fn a_file_size_limit_is_said_like_a_full_disk(sub: &str) {
    let fx = Fixture::new(sub);
    let mut tried = 0;
    for (opt, role) in output_options(sub, &fx) {
        let Some(q) = quick(sub, &fx) else {
            println!("{sub} {}: cannot run here; refusals: the aliasing test", opt.name);
            continue;
        };
        let targets: &[&str] = if role == "dir" { &["new-dir"] } else { &["new.out", "kept.out"] };
        for name in targets {
            let scratch = tempfile::tempdir_in(fx.path()).unwrap();
            let s = scratch.path();
            std::fs::write(s.join("kept.out"), KEPT).unwrap();
            let mut inv = q.clone();
            inv.set(&opt, s.join(name));
            let what = format!("{sub} {} ({role}) as {name} under ulimit -f 0", opt.name);
            let out = with_fd3(&inv, fx.path(), r#"ulimit -f 0; exec "$@""#, &[]);
            let stderr = text(&out.stderr);
            let bug = stderr.contains("panicked") || stderr.contains("internal error");
            assert!(!bug, "{what}: {stderr}");
            let code = out.status.code();
            assert!(matches!(code, Some(2 | 3)), "{what}: exit {:?}: {stderr}", out.status);
            let said = stderr.lines().any(|l| l.starts_with("schedlab: ") && l.contains("ulimit"));
            assert!(said, "{what}: the reason is said: {stderr}");
            let kept = std::fs::read(s.join("kept.out")).unwrap();
            assert_eq!(kept, KEPT, "{what}: the file that was there is intact");
            let left: Vec<_> = std::fs::read_dir(s)
                .unwrap()
                .map(|e| e.unwrap().file_name())
                .filter(|n| n != "kept.out" && n != *name)
                .collect();
            assert!(left.is_empty(), "{what}: no temporary or lock file left: {left:?}");
            tried += 1;
        }
    }
    println!("{sub}: {tried} outputs tried under a file-size limit");
}

/// Issue 43, item 5d: every output option of `sub` over a file of another user (uid and gid
/// 65534, mode 0640) replaced by root: the new file keeps that owner, group and mode.
fn a_replaced_file_keeps_its_owner(sub: &str) {
    if !is_root() {
        println!("not root: another user's file cannot be replaced here");
        return;
    }
    let fx = Fixture::new(sub);
    let mut tried = 0;
    let outputs = output_options(sub, &fx).into_iter().filter(|(_, r)| r == "output");
    for (opt, role) in outputs {
        let Some(q) = quick(sub, &fx) else {
            println!("{sub} {}: cannot run here", opt.name);
            continue;
        };
        let scratch = tempfile::tempdir_in(fx.path()).unwrap();
        let theirs = scratch.path().join("theirs.out");
        std::fs::write(&theirs, "old").unwrap();
        std::os::unix::fs::chown(&theirs, Some(65534), Some(65534)).unwrap();
        let mode = std::os::unix::fs::PermissionsExt::from_mode(0o640);
        std::fs::set_permissions(&theirs, mode).unwrap();
        let mut inv = q.clone();
        inv.set(&opt, &theirs);
        let what = format!("{sub} {} ({role}) over another user's file", opt.name);
        let out = inv.run(fx.path());
        done(&out, &what);
        let m = std::fs::metadata(&theirs).unwrap();
        assert_ne!(std::fs::read(&theirs).unwrap(), b"old", "{what}: replaced");
        let owner = (m.uid(), m.gid(), m.mode() & 0o7777);
        assert_eq!(owner, (65534, 65534, 0o640), "{what}");
        tried += 1;
    }
    println!("{sub}: {tried} outputs kept their owner");
}

macro_rules! per_subcommand {
    ($($name:ident: $sub:literal,)*) => {
        mod aliasing {
            $(#[test] fn $name() { super::aliasing_is_refused($sub) })*
        }
        mod planted {
            $(#[test] fn $name() { super::planted_lock_names_are_refused($sub) })*
        }
        mod file_limit {
            $(#[test] fn $name() { super::a_file_size_limit_is_said_like_a_full_disk($sub) })*
        }
        mod owner {
            $(#[test] fn $name() { super::a_replaced_file_keeps_its_owner($sub) })*
        }
        mod awkward {
            $(#[test] fn $name() { super::awkward_paths_work($sub) })*
        }
        mod full_fs {
            $(#[test] fn $name() { super::a_full_file_system_is_said_and_damages_nothing($sub) })*
        }
    };
}

/// `kernel`'s cheapest real runs, per option: a 0.2 s run of the main point without profiles,
/// contention or model (the profile comes back when `--flamegraphs` is set: `Inv::set` drops
/// `--no-profile`, which it conflicts with), and `--inject`'s shortest run for `--inject-raw`.
/// `--device` is left out: a block device cannot be copied under an awkward name.
fn kernel_quick(opt: &Opt, _fx: &Fixture) -> Option<Inv> {
    let short = words(
        "--rounds 1 --duration 0.2 --ramp 0 --groups 0 --no-model \
        --size-mib 64",
    );
    let head: &[&str] = match opt.name.as_str() {
        "--device" => return None,
        "--inject-raw" => &["--inject", "0,500", "--inject-cycles", "4"],
        // The model it reads is run: no --no-model.
        "--model-from" => {
            return Some(Inv::new(
                "kernel",
                &words(
                    "--inject 0,500 --inject-cycles 4 --rounds 1 --duration 0.2 \
                    --ramp 0 --groups 0 --size-mib 64",
                ),
            ))
        }
        // The recorded kernel half has these costs; only the model's half runs.
        "--kernel-from" => {
            return Some(Inv::new(
                "kernel",
                &words("--inject 0,2000 --rounds 1 --duration 0.2 --ramp 0 --groups 0"),
            ))
        }
        _ => &["--points", "main", "--contention", "off", "--no-profile"],
    };
    Some(Inv::new("kernel", &[head, &short[..]].concat()))
}

/// `kernel`'s outputs through descriptors, under awkward names and on a full file system, on the
/// real kernel: ignored here, run by scripts/test.sh where scripts/kernel-ready.sh finds root,
/// fio, perf, bpftrace and BFQ (its refusals run everywhere: `aliasing::kernel`).
mod kernel_real {
    const WHY: &str = "needs root, a free loop device, BFQ, fio, perf and bpftrace: \
        scripts/test.sh runs it where scripts/kernel-ready.sh finds them";

    fn ready() {
        let ready = std::process::Command::new("bash")
            .arg("scripts/kernel-ready.sh")
            .current_dir(env!("CARGO_MANIFEST_DIR"))
            .output()
            .unwrap();
        assert!(
            ready.status.success(),
            "kernel: cannot run here ({}); {WHY}",
            String::from_utf8_lossy(&ready.stdout).trim()
        );
    }

    #[test]
    #[ignore = "needs root, fio, perf, bpftrace and BFQ (scripts/kernel-ready.sh)"]
    fn awkward() {
        ready();
        super::awkward_paths_work_with("kernel", &super::kernel_quick)
    }

    #[test]
    #[ignore = "needs root, fio, perf, bpftrace and BFQ (scripts/kernel-ready.sh)"]
    fn full_fs() {
        ready();
        super::a_full_file_system_is_said_with("kernel", &super::kernel_quick)
    }
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

/// Every subcommand's failures are said on stderr whatever the log filter: bad input (exit 2), a
/// run that failed (exit 4) and a check that failed (exit 1), both forced by
/// `SCHEDLAB_FAIL_AFTER_WORK`; exit 3 is tried per output option above.
#[test]
fn every_failure_is_said_whatever_the_log_filter() {
    let fx = Fixture::new("said");
    for sub in subcommands() {
        for log in ["off", "clap=debug"] {
            let out = Command::new(BIN)
                .args([sub.as_str(), "--no-such-option"])
                .env("RUST_LOG", log)
                .output()
                .unwrap();
            assert_eq!(out.status.code(), Some(2), "{sub}");
            assert!(
                text(&out.stderr).lines().any(|l| l.starts_with("schedlab: ")),
                "{sub} RUST_LOG={log}: {}",
                text(&out.stderr)
            );
            let Some(q) = quick(&sub, &fx) else { continue };
            // A run that failed (4) and a check that failed (1), forced after the work; a
            // subcommand that runs nothing of the kind exits 0.
            for (forced, code) in [("run", 4), ("check", 1)] {
                let out = q
                    .command(fx.path())
                    .env("RUST_LOG", log)
                    .env("SCHEDLAB_FAIL_AFTER_WORK", forced)
                    .output()
                    .unwrap();
                let stderr = text(&out.stderr);
                match out.status.code() {
                    Some(0) => {}
                    Some(c) if c == code => assert!(
                        stderr.lines().any(|l| l.starts_with("schedlab: ")
                            && !l.starts_with("schedlab: warning: ")),
                        "{sub} RUST_LOG={log}: a failed {forced} is said: {stderr}"
                    ),
                    other => panic!("{sub} RUST_LOG={log} forced {forced}: {other:?}: {stderr}"),
                }
            }
        }
    }
}

/// Two processes on one output (issue 33, item 6): while a sweep writes its CSV, a second sweep
/// resuming (or writing) the same CSV refuses before any work, naming the first; the first keeps
/// every point it wrote, and a resume after it ended keeps them too. Waits for events (the first
/// point in the file), never for a time; the first sweep is long (192 points) so that it cannot
/// end before it is stopped.
#[test]
fn a_second_sweep_on_one_csv_is_refused_while_the_first_writes() {
    let fx = Fixture::new("lock");
    let csv = fx.path().join("s.csv");
    let sweep = |extra: &[&str]| -> Command {
        let mut c = Command::new(BIN);
        c.args(words(
            "sweep --threads 1 --variants no-stats --duration 0.2 --ramp 0 \
            --retries 0 --lockstat-duration 0",
        ))
        .args(words(
            "--sweep-slots 1-64 --sweep-outside-ns 0,500,1000 --csv s.csv \
            --svg s.svg",
        ))
        .args(extra)
        .current_dir(fx.path())
        .env_remove("RUST_LOG")
        .stdin(Stdio::null());
        c
    };
    let mut first = sweep(&[]).stdout(Stdio::null()).stderr(Stdio::piped()).spawn().unwrap();
    let watchdog = std::time::Instant::now();
    while std::fs::read_to_string(&csv).map_or(0, |t| t.lines().count()) < 2 {
        if let Some(status) = first.try_wait().unwrap() {
            panic!("the first sweep ended ({status}) before its first point");
        }
        assert!(
            watchdog.elapsed() < std::time::Duration::from_secs(180),
            "watchdog: no point in 180 s"
        );
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    for extra in [&["--resume"][..], &[]] {
        let out = sweep(extra).output().unwrap();
        let stderr = text(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{extra:?}: {stderr}");
        assert!(
            stderr.contains(&format!("process {}", first.id())) && stderr.contains("s.csv"),
            "{extra:?}: names the writer: {stderr}"
        );
    }
    let status = Command::new("kill").args(["-INT", &first.id().to_string()]).status().unwrap();
    assert!(status.success());
    let out = first.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(130), "{}", text(&out.stderr));
    let kept = std::fs::read_to_string(&csv).unwrap();
    let rows: Vec<&str> = kept.lines().skip(1).collect();
    assert!(!rows.is_empty() && rows.len() < 192, "{kept}");
    assert!(!fx.path().join(".s.csv.schedlab-lock").exists(), "the lock file goes with its holder");
    // Now the CSV is free: a resume takes it and keeps every row the first sweep wrote (stopped at
    // once: what it keeps, not how many points it adds, is the point).
    let mut second =
        sweep(&["--resume"]).stdout(Stdio::null()).stderr(Stdio::piped()).spawn().unwrap();
    let watchdog = std::time::Instant::now();
    while std::fs::read_to_string(&csv).map_or(0, |t| t.lines().count()) < rows.len() + 2 {
        if second.try_wait().unwrap().is_some() {
            break;
        }
        assert!(
            watchdog.elapsed() < std::time::Duration::from_secs(180),
            "watchdog: no new point in 180 s"
        );
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    let _ = Command::new("kill").args(["-INT", &second.id().to_string()]).status();
    let out = second.wait_with_output().unwrap();
    assert!(matches!(out.status.code(), Some(0 | 130)), "{}", text(&out.stderr));
    let after = std::fs::read_to_string(&csv).unwrap();
    for row in rows {
        assert!(after.lines().any(|l| l == row), "a row the first sweep wrote is kept: {row}");
    }
}

/// Issue 43, item 5c: `TMPDIR` naming a missing directory, a file, or a directory where no file
/// can be made. Every subcommand whose declaration names the temporary directory (read from the
/// registry: `SCHEDLAB_DESCRIBE=paths`) is refused before any work, one line naming it, exit 2;
/// every other one does its work as usual (nothing it does reads `TMPDIR` undeclared).
#[test]
fn a_temporary_directory_that_cannot_be_used_is_refused_before_any_work() {
    let fx = Fixture::new("tmpdir");
    let not_a_dir = fx.path().join("trace.json");
    let bad: [&Path; 3] = [Path::new("/nonexistent-schedlab-tmp"), &not_a_dir, Path::new("/proc")];
    // The invocations tried: each subcommand's cheapest (or, where it cannot run here, its
    // refusals' base), and `kernel` with its profiles, which record into a temporary directory.
    let mut invocations: Vec<Inv> = subcommands().iter().map(|sub| base(sub, &fx)).collect();
    invocations.push(Inv::new("kernel", &["--points", "main"]));
    let mut refusals = 0;
    for inv in invocations {
        let declares = declared(&inv, fx.path()).iter().any(|(role, _, _)| role == "temporary");
        if !declares && quick(&inv.sub, &fx).is_none() {
            continue;
        }
        for tmp in bad {
            let what = format!("{:?} with TMPDIR={}", inv.argv(), tmp.display());
            if declares {
                let mut inv_env = inv.command(fx.path());
                inv_env.env("TMPDIR", tmp);
                let before = listing(fx.path());
                let out = inv_env.output().unwrap();
                let stderr = text(&out.stderr);
                let errors: Vec<&str> =
                    stderr.lines().filter(|l| !l.starts_with("schedlab: warning: ")).collect();
                assert_eq!(out.status.code(), Some(2), "{what}: {stderr}");
                assert_eq!(errors.len(), 1, "{what}: one line: {stderr}");
                assert!(errors[0].contains("TMPDIR"), "{what}: names TMPDIR: {stderr}");
                assert_eq!(listing(fx.path()), before, "{what}: nothing written");
                refusals += 1;
            } else {
                let out = inv.command(fx.path()).env("TMPDIR", tmp).output().unwrap();
                done(&out, &what);
            }
        }
    }
    assert!(refusals >= 3, "the kernel's profiles declare the temporary directory");
}

/// Every value option of every subcommand given a value that is not UTF-8 (item 1: arguments are
/// read as `OsString`): one line of bad input, exit 2, never a panic after the work.
#[test]
fn a_non_utf8_value_of_any_option_is_refused_before_any_work() {
    let fx = Fixture::new("values");
    let mut tried = 0;
    for opt in describe_cli().into_iter().filter(|o| o.kind == "value") {
        let mut inv = base(&opt.sub, &fx);
        inv.set(&opt, OsString::from_vec(b"\xff\xfe".to_vec()));
        refused(&inv, fx.path(), &format!("{} {} with a non-UTF-8 value", opt.sub, opt.name));
        tried += 1;
    }
    assert!(tried > 100, "{tried}");
}
