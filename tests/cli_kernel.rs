//! `schedlab kernel` as a user meets it.
//!
//! The refusals run everywhere. The runs on the real kernel need root, a free loop device, BFQ,
//! fio, perf and bpftrace: they are `#[ignore]`d, so that a machine without them reports them as
//! ignored (never as passed), and `scripts/test.sh` runs them with `--ignored` where
//! `scripts/kernel-ready.sh` finds all of it (saying why it skips them otherwise). Each checks
//! that nothing of its run is left: no loop device over its file, no file, no cgroup, no ledger.

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

mod invoke;
use invoke::{schedlab, words};

fn one_line_exit_2(out: &Output, what: &str) -> String {
    let err = String::from_utf8_lossy(&out.stderr).to_string();
    assert_eq!(out.status.code(), Some(2), "{what}: {err}");
    assert_eq!(err.trim_end().lines().count(), 1, "{what}: not one line: {err}");
    assert!(!err.contains("panicked"), "{what}: {err}");
    err
}

fn is_root() -> bool {
    // SAFETY: geteuid has no preconditions.
    unsafe { libc::geteuid() == 0 }
}

#[test]
fn bad_arguments_are_refused_before_any_work() {
    let cases: &[&[&str]] = &[
        &["kernel", "--threads", "0"],
        &["kernel", "--contention", "maybe"],
        &["kernel", "--ioengine", "libaio"],
        &["kernel", "--rw", "trim"],
        &["kernel", "--bs", "3"],
        &["kernel", "--weights", "100,0"],
        &["kernel", "--model-outside-ns", "-5"],
        &["kernel", "--model-lock", "ticket"],
        &["kernel", "--duration", "0"],
        &["kernel", "--size-mib", "1"],
        &["kernel", "--no-profile", "--flamegraphs", "/tmp"],
        &["kernel", "--flamegraphs", "/proc/version/fg"],
        &["kernel", "--json", "/nonexistent/dir/k.json"],
        // Writes go only to a device this command made.
        &["kernel", "--rw", "randwrite", "--device", "/dev/null"],
        // Weights: one per group, or a list ending in `...` to repeat; none without groups.
        &["kernel", "--groups", "4", "--weights", "100,200,300"],
        &["kernel", "--groups", "2", "--weights", "100,200,300"],
        &["kernel", "--groups", "0", "--weights", "100"],
        &["kernel", "--groups", "2", "--weights", "100,x,..."],
        // The configuration axis.
        &["kernel", "--points", "2x0"],
        &["kernel", "--points", "2by32"],
        &["kernel", "--points", "1x1:libaio"],
        // --inject: costs, cycles, what it cannot take (its report, JSON and chart go through the
        // one report contract like every command's).
        &["kernel", "--inject", "0,abc"],
        &["kernel", "--inject", "30000"],
        &["kernel", "--inject", "-5"],
        &["kernel", "--inject", ""],
        &["kernel", "--inject", "0,500", "--inject-cycles", "2"],
        &["kernel", "--inject", "0,500", "--points", "1x1"],
        &["kernel", "--inject", "0,500", "--inject-raw", "/proc/version/raw"],
        // --model-from: with --inject only, a kernel report with the point, read before the work.
        &["kernel", "--model-from", "/proc/version"],
        &["kernel", "--inject", "0,500", "--model-from", "/proc/version"],
        &["kernel", "--inject", "0,500", "--model-from", "/nonexistent/k.json"],
        &["kernel", "--inject", "0,500", "--model-from", "/tmp", "--no-model"],
    ];
    for args in cases {
        one_line_exit_2(&schedlab(args), &args.join(" "));
    }
}

#[test]
fn a_missing_tool_or_root_is_one_line_naming_what_to_install() {
    // An empty PATH: no fio, no perf, no bpftrace.
    let empty = tempfile::tempdir().unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_schedlab"))
        .args(["kernel", "--rounds", "1"])
        .env("PATH", empty.path())
        .output()
        .unwrap();
    let err = one_line_exit_2(&out, "empty PATH");
    if is_root() {
        assert!(err.contains("`fio` not found") && err.contains("apt-get install fio"), "{err}");
    } else {
        assert!(err.contains("needs root"), "{err}");
    }
    // Perf missing, fio present: a PATH with a stand-in fio only.
    let fio = empty.path().join("fio");
    std::fs::write(&fio, "#!/bin/sh\nexit 0\n").unwrap();
    std::fs::set_permissions(&fio, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_schedlab"))
        .args(["kernel"])
        .env("PATH", empty.path())
        .output()
        .unwrap();
    let err = one_line_exit_2(&out, "no perf");
    if is_root() {
        assert!(err.contains("`perf` not found") && err.contains("linux-perf"), "{err}");
    }
}

#[test]
fn without_root_it_refuses() {
    if !is_root() {
        let err = one_line_exit_2(&schedlab(&["kernel"]), "not root");
        assert!(err.contains("needs root"), "{err}");
        return;
    }
    // As root: the same binary under another user, where setpriv exists and that user can run it.
    let Some(setpriv) =
        ["/usr/bin/setpriv", "/bin/setpriv"].into_iter().find(|p| Path::new(p).exists())
    else {
        eprintln!(
            "setpriv not installed: the non-root refusal is checked by the case \
            above on non-root machines only"
        );
        return;
    };
    let out = Command::new(setpriv)
        .args([
            "--reuid=65534",
            "--regid=65534",
            "--clear-groups",
            env!("CARGO_BIN_EXE_schedlab"),
            "kernel",
            "--cleanup",
        ])
        .output()
        .unwrap();
    if out.status.code() == Some(127) || out.status.code() == Some(126) {
        eprintln!(
            "user 65534 cannot run the binary here: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        return;
    }
    let err = one_line_exit_2(&out, "not root");
    assert!(err.contains("needs root"), "{err}");
}

// ---- On the real kernel (root, a free loop device, BFQ, fio, perf, bpftrace) ----

/// The entries of `dir` whose names start with `prefix`.
fn named(dir: &str, prefix: &str) -> Vec<PathBuf> {
    let Ok(entries) = std::fs::read_dir(dir) else { return Vec::new() };
    let starts = |e: &std::fs::DirEntry| e.file_name().to_string_lossy().starts_with(prefix);
    entries.flatten().filter(starts).map(|e| e.path()).collect()
}

/// The ledger of the run of pid `pid` (`/run/schedlab-kernel/<pid>-<start time>.json`), if any.
fn ledger_of(pid: u32) -> Option<PathBuf> {
    let json = |p: &PathBuf| p.extension().is_some_and(|x| x == "json");
    named("/run/schedlab-kernel", &format!("{pid}-")).into_iter().find(json)
}

/// What a run of pid `pid` could have left.
fn leftovers(pid: u32) -> Vec<String> {
    let name = format!("schedlab-kernel-{pid}");
    let mut left = Vec::new();
    // Its private directory in the tmpfs (`schedlab-kernel-<pid>-<random>`) and its ledger.
    for path in named("/dev/shm", &format!("{name}-")).into_iter().chain(ledger_of(pid)) {
        left.push(path.display().to_string());
    }
    for root in ["/sys/fs/cgroup/blkio", "/sys/fs/cgroup/cpuacct", "/sys/fs/cgroup"] {
        let cg = Path::new(root).join(&name);
        if cg.exists() {
            left.push(cg.display().to_string());
        }
    }
    if let Ok(entries) = std::fs::read_dir("/sys/block") {
        for e in entries.flatten() {
            let backing =
                std::fs::read_to_string(e.path().join("loop/backing_file")).unwrap_or_default();
            if backing.contains(&format!("{name}-")) {
                left.push(format!("/dev/{}", e.file_name().to_string_lossy()));
            }
        }
    }
    left
}

/// Waits until the run of pid `pid` has written its ledger (set-up has begun), up to `limit`.
fn wait_for_ledger(pid: u32, limit: Duration) -> bool {
    let end = Instant::now() + limit;
    while Instant::now() < end {
        if ledger_of(pid).is_some() {
            return true;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    false
}

/// The binary started with `args`, its stdout and stderr piped.
fn spawn_piped(args: &[&str]) -> std::process::Child {
    Command::new(env!("CARGO_BIN_EXE_schedlab"))
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

/// Runs `args`, lets it work for `past` once its ledger says it started, stops it with SIGINT,
/// and checks what an interrupted run must leave: exit 130, its JSON (`json`) marked
/// interrupted by SIGINT, nothing of its own left behind.
fn interrupted_after(args: &[&str], past: Duration, json: &Path) {
    let child = spawn_piped(args);
    let pid = child.id();
    assert!(wait_for_ledger(pid, Duration::from_secs(60)), "the run never started");
    std::thread::sleep(past);
    // SAFETY: a signal to our own child.
    unsafe { libc::kill(pid as i32, libc::SIGINT) };
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(130), "{}", String::from_utf8_lossy(&out.stderr));
    let v: serde_json::Value = serde_json::from_slice(&std::fs::read(json).unwrap()).unwrap();
    assert_eq!(v["interrupted"], true);
    assert_eq!(v["signal"], "SIGINT");
    assert_eq!(leftovers(pid), Vec::<String>::new(), "{}", String::from_utf8_lossy(&out.stderr));
}

/// Kills `child` (SIGKILL: nothing of its own clean-up runs), checks that it left its set-up
/// behind (else the test that calls this checks nothing), and runs `kernel --cleanup`, which
/// must succeed: its output.
fn killed_then_cleaned_up(child: &mut std::process::Child, pid: u32) -> Output {
    child.kill().unwrap();
    child.wait().unwrap();
    assert!(
        !leftovers(pid).is_empty(),
        "a SIGKILL leaves its set-up behind (else this test checks nothing)"
    );
    let out = schedlab(&["kernel", "--cleanup"]);
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    out
}

/// Waits until `path` names a file that exists, up to `limit`.
fn wait_for(path: &Path, limit: Duration) -> bool {
    let end = Instant::now() + limit;
    while Instant::now() < end {
        if path.exists() {
            return true;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    false
}

const SHORT: &str = "kernel --threads 2 --duration 0.3 --ramp 0 --groups 2 \
    --size-mib 64 --points main";

#[test]
#[ignore = "needs root, a free loop device, BFQ, fio, perf and bpftrace: \
    scripts/test.sh runs it where scripts/kernel-ready.sh finds them"]
fn a_short_run_prints_both_halves_writes_the_json_and_leaves_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("k.json");
    let fg = dir.path().join("fg");
    std::fs::create_dir(&fg).unwrap();
    // Two points: the main one and 1 job at iodepth 1.
    let mut args: Vec<&str> =
        words(SHORT).into_iter().map(|a| if a == "main" { "1x1" } else { a }).collect();
    args.extend([
        "--rounds",
        "1",
        "--json",
        json.to_str().unwrap(),
        "--flamegraphs",
        fg.to_str().unwrap(),
    ]);
    let child = spawn_piped(&args);
    let pid = child.id();
    let out = child.wait_with_output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{text}\n{}", String::from_utf8_lossy(&out.stderr));
    // The report's tables (`report::kernel`), titled as on the page.
    let tables = [
        "The kernel (fio on a loop device)",
        "The model (the same workload in schedlab)",
        "Side by side",
        "bfq ÷ none",
        "bfq-groups",
        "Fidelity: the model against the kernel",
        "The elevator's own cost",
        "The other points",
        "1 job × iodepth 1",
    ];
    for want in tables {
        assert!(text.contains(want), "`{want}` missing:\n{text}");
    }
    let v: serde_json::Value = serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
    let kernel = v["kernel"].as_array().unwrap();
    let names: Vec<&str> = kernel.iter().map(|r| r["config"].as_str().unwrap()).collect();
    assert_eq!(names, ["none", "mq-deadline", "bfq", "bfq-groups"]);
    for r in kernel {
        assert!(r["kiops"]["median"].as_f64().unwrap() > 0.0, "{r}");
        assert_eq!(r["recorded"].as_array().unwrap().len(), 1, "one recorded run per round");
    }
    let bfq = &kernel[2];
    assert!(bfq["profile"]["samples"].as_u64().unwrap() > 0);
    assert!(fg.join("kernel-bfq.svg").exists());
    let model: Vec<&str> =
        v["model"].as_array().unwrap().iter().map(|m| m["entry"].as_str().unwrap()).collect();
    assert!(model.contains(&"none") && model.contains(&"rstat"), "{model:?}");
    assert!(v["environment"]["kernel_release"].as_str().unwrap().len() > 1);
    assert!(v["environment"]["fio"].as_str().unwrap().starts_with("fio"));
    assert_eq!(v["interrupted"], false);
    assert!(v["side_by_side"][0]["kernel"].as_f64().is_some(), "{}", v["side_by_side"]);
    // The fidelity table: rows at both points, each with its band and verdict.
    let fidelity = v["fidelity"].as_array().unwrap();
    let points: std::collections::BTreeSet<String> =
        fidelity.iter().map(|r| r["point"].to_string()).collect();
    assert_eq!(points.len(), 2, "{points:?}");
    for r in fidelity {
        assert!(
            r["band"]["kind"].is_string() && r.get("within").is_some() && r["unit"].is_string(),
            "{r}"
        );
    }
    assert!(fidelity
        .iter()
        .any(|r| r["figure"] == "contended acquisitions per I/O at limit-depth"));
    assert_eq!(v["points"].as_array().unwrap().len(), 1);
    assert!(v["elevator"]["none_cpu_per_io_us"].as_f64().is_some(), "{}", v["elevator"]);
    assert_eq!(leftovers(pid), Vec::<String>::new(), "{}", String::from_utf8_lossy(&out.stderr));
}

#[test]
#[ignore = "needs root, a free loop device, BFQ, fio, perf and bpftrace: \
    scripts/test.sh runs it where scripts/kernel-ready.sh finds them"]
fn sigint_in_the_middle_keeps_what_finished_and_puts_everything_back() {
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("k.json");
    let mut args = words(SHORT);
    args.extend(["--rounds", "20", "--no-profile", "--json", json.to_str().unwrap()]);
    // Interrupt once the machine is set up and a few runs went by.
    interrupted_after(&args, Duration::from_secs(4), &json);
}

#[test]
#[ignore = "needs root, a free loop device, BFQ, fio, perf and bpftrace: \
    scripts/test.sh runs it where scripts/kernel-ready.sh finds them"]
fn after_a_sigkill_cleanup_removes_what_was_left() {
    let mut args = words(SHORT);
    args.extend(["--rounds", "20", "--no-profile"]);
    let mut child = Command::new(env!("CARGO_BIN_EXE_schedlab"))
        .args(&args)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let pid = child.id();
    assert!(wait_for_ledger(pid, Duration::from_secs(60)), "the run never started");
    // Killed once its cgroups exist (set-up done).
    assert!(
        wait_for(
            Path::new(&format!("/sys/fs/cgroup/blkio/schedlab-kernel-{pid}/g1")),
            Duration::from_secs(30)
        ) || wait_for(
            Path::new(&format!("/sys/fs/cgroup/schedlab-kernel-{pid}/g1")),
            Duration::from_secs(1)
        )
    );
    std::thread::sleep(Duration::from_millis(1500));
    let out = killed_then_cleaned_up(&mut child, pid);
    // fio's orphaned workers may hold the loop device a moment: the kernel detaches it when they
    // close it (the cleanup's losetup -d sets autoclear).
    let end = Instant::now() + Duration::from_secs(10);
    while !leftovers(pid).is_empty() && Instant::now() < end {
        std::thread::sleep(Duration::from_millis(100));
    }
    assert_eq!(leftovers(pid), Vec::<String>::new(), "{}", String::from_utf8_lossy(&out.stderr));
}

#[test]
#[ignore = "needs root, a free loop device, BFQ, fio, perf and bpftrace: \
    scripts/test.sh runs it where scripts/kernel-ready.sh finds them"]
fn an_existing_device_is_only_read_and_its_scheduler_put_back() {
    // A device this test makes, set to mq-deadline with a non-default knob: the command must put
    // both back.
    let file = tempfile::NamedTempFile::new_in("/dev/shm").unwrap();
    file.as_file().set_len(64 << 20).unwrap();
    let out = Command::new("losetup").args(["-f", "--show"]).arg(file.path()).output().unwrap();
    assert!(out.status.success());
    let device = String::from_utf8_lossy(&out.stdout).trim().to_string();
    let queue = PathBuf::from(format!("/sys/block/{}/queue", device.trim_start_matches("/dev/")));
    std::fs::write(queue.join("scheduler"), "mq-deadline").unwrap();
    std::fs::write(queue.join("iosched/fifo_batch"), "7").unwrap();
    let out = schedlab(&[
        "kernel",
        "--device",
        &device,
        "--threads",
        "1",
        "--duration",
        "0.3",
        "--ramp",
        "0",
        "--rounds",
        "1",
        "--groups",
        "0",
        "--no-model",
        "--no-profile",
        "--contention",
        "off",
    ]);
    let scheduler = std::fs::read_to_string(queue.join("scheduler")).unwrap();
    let fifo_batch = std::fs::read_to_string(queue.join("iosched/fifo_batch")).unwrap_or_default();
    let _ = Command::new("losetup").args(["-d", &device]).status();
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(scheduler.contains("[mq-deadline]"), "{scheduler}");
    assert_eq!(fifo_batch.trim(), "7");
}

#[test]
#[ignore = "needs root, a free loop device, BFQ, fio, perf and bpftrace: \
    scripts/test.sh runs it where scripts/kernel-ready.sh finds them"]
fn a_device_with_a_mounted_filesystem_is_refused() {
    // The device under `/`, from mountinfo's major:minor.
    let info = std::fs::read_to_string("/proc/self/mountinfo").unwrap();
    let root = info
        .lines()
        .map(|l| l.split_whitespace().collect::<Vec<_>>())
        .find(|f| f.len() > 4 && f[4] == "/")
        .unwrap();
    let dev = std::fs::read_link(format!("/sys/dev/block/{}", root[2]))
        .ok()
        .and_then(|p| p.file_name().map(|n| format!("/dev/{}", n.to_string_lossy())));
    let Some(dev) = dev.filter(|d| Path::new(d).exists()) else {
        eprintln!(
            "no block device node under / here (overlay or container root): nothing to refuse"
        );
        return;
    };
    let err = one_line_exit_2(&schedlab(&["kernel", "--device", &dev]), "mounted device");
    assert!(err.contains("mounted filesystem"), "{err}");
}

// ---- What the tool does with privilege (issue 43): planted names, decoys, devices ----

const QUICK: &str = "--threads 1 --duration 0.3 --ramp 0 --rounds 1 --groups 0 \
    --points main --no-model --no-profile --contention off";

/// `setpriv` to run a command as user 65534 (nobody), where installed.
fn setpriv() -> &'static str {
    ["/usr/bin/setpriv", "/bin/setpriv"]
        .into_iter()
        .find(|p| Path::new(p).exists())
        .expect("setpriv (util-linux) to act as another user")
}

/// Runs `schedlab kernel ARGS` from a shell that first runs `plant` with `$$` set to the pid the
/// run will have (the shell `exec`s it), so that a planted name is the one the run computes.
fn kernel_after(plant: &str, args: &[&str]) -> (u32, Output) {
    let script = format!("{plant} || exit 99; exec \"$0\" kernel \"$@\"");
    let mut cmd = Command::new("sh");
    cmd.arg("-c").arg(script).arg(env!("CARGO_BIN_EXE_schedlab")).args(args);
    let child = cmd.stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().unwrap();
    let pid = child.id();
    let out = child.wait_with_output().unwrap();
    assert_ne!(
        out.status.code(),
        Some(99),
        "the plant failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    (pid, out)
}

/// A scratch loop device of `mib` MiB over a file in the tmpfs (outside any ledger).
fn scratch_loop(mib: u64) -> (String, tempfile::NamedTempFile) {
    let file = tempfile::NamedTempFile::new_in("/dev/shm").unwrap();
    file.as_file().set_len(mib << 20).unwrap();
    let out = Command::new("losetup").args(["-f", "--show"]).arg(file.path()).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    (String::from_utf8_lossy(&out.stdout).trim().to_string(), file)
}

fn scheduler_of(device: &str) -> String {
    std::fs::read_to_string(format!(
        "/sys/block/{}/queue/scheduler",
        device.trim_start_matches("/dev/")
    ))
    .unwrap_or_default()
}

/// The cgroup directory the tool makes its cgroups in (blkio v1, else the v2 root).
fn cgroup_root() -> PathBuf {
    let v1 = PathBuf::from("/sys/fs/cgroup/blkio");
    if v1.join("cgroup.procs").exists() {
        v1
    } else {
        PathBuf::from("/sys/fs/cgroup")
    }
}

#[test]
#[ignore = "root, a loop device, BFQ, fio, perf, bpftrace: scripts/test.sh runs it where ready"]
fn links_and_fifos_planted_at_the_old_backing_name_are_never_followed() {
    // Root's file, in a directory only root may enter.
    let private = tempfile::tempdir().unwrap();
    std::fs::set_permissions(private.path(), std::os::unix::fs::PermissionsExt::from_mode(0o700))
        .unwrap();
    let victim = private.path().join("root-only.conf");
    std::fs::write(&victim, "root's own\n").unwrap();
    let nobody = format!("{} --reuid=65534 --regid=65534 --clear-groups", setpriv());
    // A link from another user at the name the tool used to give its backing file, then a FIFO.
    for (what, plant) in [
        ("link", format!("{nobody} ln -s {} /dev/shm/schedlab-kernel-$$.img", victim.display())),
        ("fifo", format!("{nobody} mkfifo /dev/shm/schedlab-kernel-$$.img")),
    ] {
        let (pid, out) = kernel_after(&plant, &words(QUICK));
        let planted = PathBuf::from(format!("/dev/shm/schedlab-kernel-{pid}.img"));
        let kept = std::fs::symlink_metadata(&planted)
            .is_ok_and(|m| std::os::unix::fs::MetadataExt::uid(&m) == 65534);
        let _ = std::fs::remove_file(&planted);
        assert_eq!(out.status.code(), Some(0), "{what}: {}", String::from_utf8_lossy(&out.stderr));
        assert_eq!(
            std::fs::read_to_string(&victim).unwrap(),
            "root's own\n",
            "{what}: root's file was written through the planted name"
        );
        // The planted name is another user's: left where it is.
        assert!(kept, "{what}: the planted name was removed or replaced");
        assert_eq!(
            leftovers(pid),
            Vec::<String>::new(),
            "{what}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
}

#[test]
#[ignore = "root, a loop device, BFQ, fio, perf, bpftrace: scripts/test.sh runs it where ready"]
fn a_cgroup_planted_at_the_runs_name_is_refused_naming_its_owner() {
    let root = cgroup_root();
    let mut args = words(QUICK);
    let groups = args.iter().position(|a| *a == "--groups").unwrap();
    args[groups + 1] = "2";
    // Made before the run, as a delegated user could: owned by 65534.
    let plant = format!(
        "mkdir {0}/schedlab-kernel-$$ && chown 65534 {0}/schedlab-kernel-$$",
        root.display()
    );
    let (pid, out) = kernel_after(&plant, &args);
    let planted = root.join(format!("schedlab-kernel-{pid}"));
    let kept = std::fs::symlink_metadata(&planted)
        .is_ok_and(|m| std::os::unix::fs::MetadataExt::uid(&m) == 65534);
    let _ = std::fs::remove_dir(&planted);
    let err = one_line_exit_2(&out, "a planted cgroup");
    assert!(err.contains("already exists") && err.contains("uid 65534"), "{err}");
    assert!(kept, "the planted cgroup was removed");
    assert_eq!(leftovers(pid), Vec::<String>::new(), "the refused run's set-up was not put back");
}

#[test]
#[ignore = "root, a loop device, BFQ, fio, perf, bpftrace: scripts/test.sh runs it where ready"]
fn cleanup_leaves_decoys_named_like_its_own() {
    let pid = 99_999u32;
    let name = format!("schedlab-kernel-{pid}");
    // Another user's file in the tmpfs, named like the tool's.
    let notes = PathBuf::from(format!("/dev/shm/{name}-notes.txt"));
    std::fs::write(&notes, "mine\n").unwrap();
    std::os::unix::fs::chown(&notes, Some(65534), Some(65534)).unwrap();
    // A directory named like a private directory of the tool's.
    let dir = PathBuf::from(format!("/dev/shm/{name}-0123456789abcdef"));
    std::fs::create_dir(&dir).unwrap();
    // A loop device over a file named like the old backing file, outside the tmpfs.
    let elsewhere = tempfile::tempdir_in("/var/tmp").unwrap();
    let image = elsewhere.path().join(format!("{name}.img"));
    std::fs::File::create(&image).unwrap().set_len(16 << 20).unwrap();
    let out = Command::new("losetup").args(["-f", "--show"]).arg(&image).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let device = String::from_utf8_lossy(&out.stdout).trim().to_string();
    // A cgroup named like the tool's, with a process in it.
    let cgroup = cgroup_root().join(format!("{name}-mine"));
    std::fs::create_dir(&cgroup).unwrap();
    let mut sleeper = Command::new("sleep").arg("600").spawn().unwrap();
    std::fs::write(cgroup.join("cgroup.procs"), sleeper.id().to_string()).unwrap();

    let out = schedlab(&["kernel", "--cleanup"]);
    let err = String::from_utf8_lossy(&out.stderr).to_string();
    let alive = sleeper.try_wait().unwrap().is_none();
    let bound = std::fs::read_to_string(format!(
        "/sys/block/{}/loop/backing_file",
        device.trim_start_matches("/dev/")
    ))
    .is_ok();
    let (notes_kept, dir_kept, cgroup_kept) = (notes.exists(), dir.exists(), cgroup.exists());
    // Put the decoys away before judging.
    let _ = sleeper.kill();
    let _ = sleeper.wait();
    let _ = Command::new("losetup").args(["-d", &device]).status();
    let _ = std::fs::remove_file(&notes);
    let _ = std::fs::remove_dir(&dir);
    let end = Instant::now() + Duration::from_secs(10);
    while std::fs::remove_dir(&cgroup).is_err() && cgroup.exists() && Instant::now() < end {
        std::thread::sleep(Duration::from_millis(20));
    }
    // Exit 0, or 4 for a problem with something else that is left (another version's ledger),
    // never one of the decoys.
    assert!(
        out.status.code() == Some(0) || (out.status.code() == Some(4) && !err.contains(&name)),
        "{err}"
    );
    assert!(alive, "the process in the decoy cgroup was signalled");
    assert!(bound, "the decoy loop device was detached");
    assert!(
        notes_kept && dir_kept && cgroup_kept,
        "a decoy was removed: notes {notes_kept}, directory {dir_kept}, cgroup {cgroup_kept}"
    );
}

#[test]
#[ignore = "root, a loop device, BFQ, fio, perf, bpftrace: scripts/test.sh runs it where ready"]
fn a_file_named_after_a_device_is_refused_before_the_work() {
    let dir = tempfile::tempdir().unwrap();
    let loop0 = dir.path().join("loop0");
    std::fs::write(&loop0, vec![0u8; 1 << 20]).unwrap();
    let before = scheduler_of("/dev/loop0");
    let mut args = vec!["--device", loop0.to_str().unwrap()];
    args.extend(words(QUICK));
    let child = Command::new(env!("CARGO_BIN_EXE_schedlab"))
        .arg("kernel")
        .args(&args)
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let pid = child.id();
    let out = child.wait_with_output().unwrap();
    let err = one_line_exit_2(&out, "a regular file named loop0");
    assert!(err.contains("a regular file") && err.contains("not a block device"), "{err}");
    assert_eq!(scheduler_of("/dev/loop0"), before, "/dev/loop0's scheduler was switched");
    assert_eq!(leftovers(pid), Vec::<String>::new());
    // A loop device with nothing behind it (0 bytes): refused before the work, not after runs.
    let free = Command::new("losetup").arg("-f").output().unwrap();
    let free = String::from_utf8_lossy(&free.stdout).trim().to_string();
    let mut args = vec!["--device", free.as_str()];
    args.extend(words(QUICK));
    let mut argv = vec!["kernel"];
    argv.extend(args);
    let err = one_line_exit_2(&schedlab(&argv), "an unbound loop device");
    assert!(err.contains("size 0"), "{err}");
}

#[test]
#[ignore = "root, a loop device, BFQ, fio, perf, bpftrace: scripts/test.sh runs it where ready"]
fn a_second_run_on_a_locked_device_is_refused_in_one_line() {
    use std::os::unix::io::AsRawFd;
    let (device, _file) = scratch_loop(64);
    std::fs::write(
        format!("/sys/block/{}/queue/scheduler", device.trim_start_matches("/dev/")),
        "none",
    )
    .unwrap();
    let rdev = std::os::unix::fs::MetadataExt::rdev(&std::fs::metadata(&device).unwrap());
    let (major, minor) = (libc::major(rdev), libc::minor(rdev));
    // The lock a first run holds (as that run takes it: the run directory, then the file).
    std::fs::create_dir_all("/run/schedlab-kernel").unwrap();
    let lock = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .open(format!("/run/schedlab-kernel/device-{major}:{minor}.lock"))
        .unwrap();
    // SAFETY: flock on a descriptor this test owns.
    let locked = unsafe { libc::flock(lock.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) };
    assert_eq!(locked, 0);
    let mut argv = vec!["kernel", "--device", device.as_str()];
    argv.extend(words(QUICK));
    let out = schedlab(&argv);
    let scheduler = scheduler_of(&device);
    drop(lock);
    let _ = Command::new("losetup").args(["-d", &device]).status();
    let err = one_line_exit_2(&out, "a device another run holds");
    assert!(err.contains("holds") && err.contains(&format!("{major}:{minor}")), "{err}");
    assert!(scheduler.contains("[none]"), "the refused run switched the scheduler: {scheduler}");
}

// ---- `--inject` on the real kernel ----

/// Processes of an injection run still alive (its fio jobs are named `bfq-inject`; its bpftrace
/// programs test `@ph[$seq]`).
fn inject_processes() -> Vec<String> {
    let mut left = Vec::new();
    if let Ok(entries) = std::fs::read_dir("/proc") {
        for e in entries.flatten() {
            let cmdline = std::fs::read(e.path().join("cmdline")).unwrap_or_default();
            let text = String::from_utf8_lossy(&cmdline);
            if text.contains("--name=bfq-inject")
                || (text.starts_with("bpftrace") && text.contains("contention_begin { @c["))
                || text.contains("@ph[$seq]")
            {
                left.push(format!(
                    "{}: {}",
                    e.file_name().to_string_lossy(),
                    text.replace('\0', " ").chars().take(80).collect::<String>()
                ));
            }
        }
    }
    left
}

const INJECT: &str = "kernel --inject 0,2000 --threads 2 --groups 2 --rounds 1 \
    --duration 0.3 --ramp 0 --size-mib 64";

#[test]
#[ignore = "needs root, a free loop device, BFQ, fio, perf and bpftrace: \
    scripts/test.sh runs it where scripts/kernel-ready.sh finds them"]
fn inject_verifies_its_sites_measures_every_cost_and_leaves_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("i.json");
    let mut args = words(INJECT);
    args.extend(["--inject-cycles", "4", "--json", json.to_str().unwrap()]);
    let child = spawn_piped(&args);
    let pid = child.id();
    let out = child.wait_with_output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{text}\n{}", String::from_utf8_lossy(&out.stderr));
    // The report's tables (its text is drawn from them, 2ac81d1): the sites verified, the
    // kernel per cost, the kernel beside the model, the slopes.
    for want in [
        "The sites, verified",
        "The kernel, per injected cost",
        "the kernel beside the model",
        "Slopes:",
    ] {
        assert!(text.contains(want), "`{want}` missing:\n{text}");
    }
    let v: serde_json::Value = serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
    let k = &v["kernel"];
    let ver = &k["verification"];
    assert!(
        ver["inside_held"].as_u64().unwrap() * 100 >= ver["inside_hits"].as_u64().unwrap() * 99,
        "{ver}"
    );
    assert!(
        ver["outside_held"].as_u64().unwrap() * 2 <= ver["outside_hits"].as_u64().unwrap(),
        "{ver}"
    );
    assert!(k["ns_per_iter"].as_f64().unwrap() > 0.0);
    let costs = k["costs"].as_array().unwrap();
    assert_eq!(costs.len(), 2);
    for c in costs {
        assert!(c["cycles"].as_u64().unwrap() >= 1, "{c}");
        assert!(
            c["iops_inside"].as_f64().unwrap() > 0.0 && c["iops_outside"].as_f64().unwrap() > 0.0,
            "{c}"
        );
    }
    assert_eq!(costs[0]["iterations"], 0);
    assert!(costs[1]["iterations"].as_u64().unwrap() > 0);
    assert_eq!(v["model"].as_array().unwrap().len(), 2);
    assert_eq!(v["side_by_side"].as_array().unwrap().len(), 2);
    assert_eq!(leftovers(pid), Vec::<String>::new(), "{}", String::from_utf8_lossy(&out.stderr));
    assert_eq!(inject_processes(), Vec::<String>::new());
}

#[test]
#[ignore = "needs root, a free loop device, BFQ, fio, perf and bpftrace: \
    scripts/test.sh runs it where scripts/kernel-ready.sh finds them"]
fn inject_stopped_by_sigint_mid_phases_puts_everything_back() {
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("i.json");
    let mut args = words(INJECT);
    args.extend(["--inject-cycles", "200", "--json", json.to_str().unwrap()]);
    // Past the lock search and the verification (about 10 s), into the phases.
    interrupted_after(&args, Duration::from_secs(15), &json);
    assert_eq!(inject_processes(), Vec::<String>::new());
}

#[test]
#[ignore = "needs root, a free loop device, BFQ, fio, perf and bpftrace: \
    scripts/test.sh runs it where scripts/kernel-ready.sh finds them"]
fn inject_after_a_sigkill_cleanup_removes_what_was_left() {
    let mut args = words(INJECT);
    args.extend(["--inject-cycles", "200"]);
    let mut child = Command::new(env!("CARGO_BIN_EXE_schedlab"))
        .args(&args)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let pid = child.id();
    assert!(wait_for_ledger(pid, Duration::from_secs(60)), "the run never started");
    std::thread::sleep(Duration::from_secs(12));
    let out = killed_then_cleaned_up(&mut child, pid);
    let end = Instant::now() + Duration::from_secs(10);
    while (!leftovers(pid).is_empty() || !inject_processes().is_empty()) && Instant::now() < end {
        std::thread::sleep(Duration::from_millis(100));
    }
    assert_eq!(leftovers(pid), Vec::<String>::new(), "{}", String::from_utf8_lossy(&out.stderr));
    // bpftrace and fio die with their parent (PR_SET_PDEATHSIG), their BPF programs with them.
    assert_eq!(inject_processes(), Vec::<String>::new());
}
