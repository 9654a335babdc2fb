//! One run made by a schedlab executable as a child process: `EXE run --variant V ... --json
//! FILE`, read back into a [`RunResult`]. `compare --baseline EXE` runs every variant this way
//! with this build and with the old one, so that neither side is favoured by running in the
//! comparing process (`experiment::compare::builds`).
//!
//! What is read back is the `schedlab-run` JSON of a schema version in [`RUN_SCHEMA_VERSIONS`]
//! (its fields: `report::run::RunJson`); the run's figures that a comparison uses (KIOPS, requests,
//! the end-of-run checks, other processes' CPUs, steal, stops) are taken, and the workload the
//! child says it ran (`config`) must equal the one asked wherever both builds name a field, so
//! that a flag the old build reads otherwise cannot pass unseen. A stop (the flag) is handed on
//! to the child as SIGTERM: it keeps what it finished and writes its JSON, marked interrupted.

use crate::driver::workload::{RunResult, WorkloadConfig};
use crate::error::ExperimentError;
use crate::files::input::STOP_POLL;
use schedlab_core::sync::{AtomicBool, Ordering};
use serde::Deserialize;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::AtomicUsize;
use std::time::{Duration, Instant};

/// The `schedlab-run` JSON schema versions this build reads: up to `report::run::RunReport`'s
/// own (a test there holds the two together). Version 2 only nulls a figure its tables refuse,
/// never one read here, so an older build's version 1 reads the same.
pub const RUN_SCHEMA_VERSIONS: std::ops::RangeInclusive<u64> = 1..=2;

/// How long `EXE --version` may take before the executable is taken for something else.
const VERSION_TIMEOUT: Duration = Duration::from_secs(10);

/// A schedlab executable that makes runs as child processes.
#[derive(Clone, Debug)]
pub struct Build {
    pub exe: PathBuf,
    /// Its `--version` line ("schedlab 0.1.0").
    pub version: String,
    /// The `run` flags of the jobs (`options::workload::WorkloadFlags::run_args`), the same
    /// for every run of both builds.
    pub job_args: Vec<String>,
}

/// Whether `path` holds a program (an ELF executable or a `#!` script) rather than a report:
/// its first bytes say. A file that cannot be read is not one (its reading reports why).
pub fn is_program(path: &Path) -> bool {
    use std::io::Read;
    let mut head = [0u8; 4];
    let Ok(mut f) = std::fs::File::open(path) else { return false };
    match f.read(&mut head) {
        Ok(n) if n >= 2 => head.starts_with(b"\x7fELF") || head.starts_with(b"#!"),
        _ => false,
    }
}

/// Why an executable cannot be a build to compare with (said as one line of bad input by the
/// caller, which names the option).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum NotABuild {
    NotExecutable(String),
    NotSchedlab(String),
    CannotRead(String),
}

impl std::fmt::Display for NotABuild {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            NotABuild::NotExecutable(why) => write!(f, "is a program but not executable: {why}"),
            NotABuild::NotSchedlab(why) => write!(f, "is not a schedlab: {why}"),
            NotABuild::CannotRead(why) => {
                write!(f, "is a schedlab whose `run --json` this build cannot read: {why}")
            }
        }
    }
}

/// Checks that `exe` is an executable schedlab and returns its `--version` line.
pub fn version_of(exe: &Path) -> Result<String, NotABuild> {
    use std::os::unix::fs::PermissionsExt;
    let meta = std::fs::metadata(exe).map_err(|e| NotABuild::NotExecutable(e.to_string()))?;
    let mode = meta.permissions().mode();
    if !meta.is_file() || mode & 0o111 == 0 {
        return Err(NotABuild::NotExecutable(format!(
            "its mode is {:o} (chmod +x it)",
            mode & 0o7777
        )));
    }
    let dir = tempfile::tempdir().map_err(|e| NotABuild::NotSchedlab(e.to_string()))?;
    let out = dir.path().join("version.txt");
    let file = std::fs::File::create(&out).map_err(|e| NotABuild::NotSchedlab(e.to_string()))?;
    let mut child = child_command(exe)
        .arg("--version")
        .stdout(file)
        .stderr(Stdio::null())
        .spawn()
        .map_err(|e| NotABuild::NotExecutable(format!("it cannot be started: {e}")))?;
    let started = Instant::now();
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break Some(status),
            Ok(None) if started.elapsed() < VERSION_TIMEOUT => std::thread::sleep(STOP_POLL),
            _ => break None,
        }
    };
    if status.is_none() {
        // Our own child, which has not answered: ended by its id.
        let _ = child.kill();
        let _ = child.wait();
    }
    let printed = std::fs::read_to_string(&out).unwrap_or_default();
    let line = printed.lines().next().unwrap_or("").trim().to_string();
    match status {
        Some(s) if s.success() && line.starts_with("schedlab ") => Ok(line),
        Some(_) => Err(NotABuild::NotSchedlab(format!("`--version` printed `{line}`"))),
        None => Err(NotABuild::NotSchedlab(format!(
            "`--version` did not answer within {} s",
            VERSION_TIMEOUT.as_secs()
        ))),
    }
}

/// The command of a child schedlab: nothing of this process's generated-test switch
/// (`SCHEDLAB_DESCRIBE` would make it describe instead of run), no standard input.
fn child_command(exe: &Path) -> Command {
    let mut c = Command::new(exe);
    c.env_remove("SCHEDLAB_DESCRIBE").stdin(Stdio::null());
    c
}

/// The `run` command line of one run: the variant, the jobs, how long, which lock.
pub fn run_argv(build: &Build, variant: &str, w: &WorkloadConfig, json: &Path) -> Vec<String> {
    let mut argv = vec![
        "run".to_string(),
        "--variant".into(),
        variant.into(),
        "--threads".into(),
        w.threads.to_string(),
        "--duration".into(),
        format!("{}", w.duration.as_secs_f64()),
        "--ramp".into(),
        format!("{}", w.ramp.as_secs_f64()),
        "--lock".into(),
        w.lock.name().into(),
    ];
    argv.extend(build.job_args.iter().cloned());
    argv.push("--json".into());
    argv.push(json.to_string_lossy().into_owned());
    argv
}

/// Names of the runs' JSON files, distinct within the process.
static RUN_FILES: AtomicUsize = AtomicUsize::new(0);

impl Build {
    /// Runs `variant` under `w` as `EXE run ... --json FILE` (FILE in `dir`) and reads the
    /// result back. A stop is passed on (SIGTERM) and the part that ran is returned, marked
    /// interrupted; a child that writes no JSON it can read is a failed run, with the child's
    /// last line on stderr.
    pub fn run(
        &self,
        variant: &str,
        w: &WorkloadConfig,
        dir: &Path,
        stop: &AtomicBool,
    ) -> Result<RunResult, ExperimentError> {
        if w.lockstat {
            return Err(ExperimentError::run_failed(
                "a child run is a plain run: its lock statistics are not read back",
            ));
        }
        let n = RUN_FILES.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let json = dir.join(format!("run-{n}.json"));
        let errors = dir.join(format!("run-{n}.stderr"));
        let failed = |why: String| {
            ExperimentError::run_failed(format!("{} ({}): {why}", self.exe.display(), self.version))
        };
        let stderr = std::fs::File::create(&errors).map_err(|e| failed(e.to_string()))?;
        let mut child = child_command(&self.exe)
            .args(run_argv(self, variant, w, &json))
            .stdout(Stdio::null())
            .stderr(stderr)
            .spawn()
            .map_err(|e| failed(format!("cannot start it: {e}")))?;
        let mut told = false;
        let status = loop {
            match child.try_wait() {
                Ok(Some(status)) => break status,
                Ok(None) => {}
                Err(e) => return Err(failed(e.to_string())),
            }
            if !told && stop.load(Ordering::Relaxed) {
                // SAFETY: kill(2) on our own child's id, which it keeps until we reap it below
                // (so the id cannot be another process's); no memory is involved.
                unsafe { libc::kill(child.id() as libc::pid_t, libc::SIGTERM) };
                told = true;
            }
            std::thread::sleep(STOP_POLL / 4);
        };
        let said = std::fs::read_to_string(&errors).unwrap_or_default();
        let _ = std::fs::remove_file(&errors);
        let text = std::fs::read_to_string(&json);
        let _ = std::fs::remove_file(&json);
        let last_line = || said.lines().last().unwrap_or("").trim().to_string();
        let text = match text {
            Ok(text) => text,
            // Stopped before it had anything to keep (during its start): a stop, not a failure.
            Err(_) if told => return Err(ExperimentError::stopped("the run was stopped")),
            Err(_) => {
                let said = last_line();
                return Err(failed(format!(
                    "`run` exited with {status} and wrote no JSON: {said}"
                )));
            }
        };
        let mut r = read_run_json(&text, w)
            .map_err(|why| failed(format!("this build cannot read its `run --json`: {why}")))?;
        r.interrupted |= told;
        Ok(r)
    }
}

#[derive(Deserialize)]
struct RunFile {
    variant: String,
    threads: usize,
    lock: schedlab_core::LockKind,
    kiops: Option<f64>,
    per_thread_kiops: Option<Vec<f64>>,
    requests: FileRequests,
    consistent: bool,
    groups_live_after: usize,
    queues_live_after: usize,
    measured_s: f64,
    interrupted: bool,
    churn_removals: u64,
    stats_reads: u64,
    other_cpus: Option<f64>,
    steal_cpus: Option<f64>,
    cpu_busy_pct: Option<f64>,
    stopped_s: Option<f64>,
    config: serde_json::Value,
}

#[derive(Deserialize)]
struct FileRequests {
    inserted: u64,
    dispatched: u64,
    merged: u64,
    completed: u64,
}

/// The variant's name as a `&'static str` (a result names its variant so): the registered
/// name, or the name kept once per distinct entry (`queue-lock+lists`, a reference row).
fn static_name(name: &str) -> &'static str {
    static NAMES: std::sync::Mutex<Vec<&'static str>> = std::sync::Mutex::new(Vec::new());
    if let Some(v) = schedlab_variants::info(name) {
        return v.name;
    }
    let mut names = NAMES.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(n) = names.iter().find(|n| **n == name) {
        return n;
    }
    let kept: &'static str = Box::leak(name.to_string().into_boxed_str());
    names.push(kept);
    kept
}

/// Fields of a workload not compared with the child's: the times, which go as seconds in text
/// (both builds read the same text; either may round it to another nanosecond than ours), and
/// how lock holds are timed, which means nothing in a plain run.
const NOT_COMPARED: [&str; 3] = ["duration", "ramp", "lockstat_mode"];

/// Where two workloads differ, in the fields both name (an older build may lack newer ones);
/// `None` when they agree.
pub fn workload_difference(asked: &serde_json::Value, ran: &serde_json::Value) -> Option<String> {
    let (Some(asked), Some(ran)) = (asked.as_object(), ran.as_object()) else {
        return Some("the run's `config` is not an object".into());
    };
    asked
        .iter()
        .filter(|(k, _)| !NOT_COMPARED.contains(&k.as_str()))
        .filter_map(|(k, v)| ran.get(k).filter(|theirs| *theirs != v).map(|theirs| (k, v, theirs)))
        .map(|(k, v, theirs)| format!("`{k}` is {theirs}, asked {v}"))
        .next()
}

/// What this build cannot read in a child's `run --json` (one line).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UnreadableRun(pub String);

impl std::fmt::Display for UnreadableRun {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

/// Reads `schedlab run --json`'s file as the result of a run of `asked`; the error says what
/// this build cannot read in it.
pub fn read_run_json(text: &str, asked: &WorkloadConfig) -> Result<RunResult, UnreadableRun> {
    let value: serde_json::Value = serde_json::from_str(text)
        .map_err(|e| UnreadableRun(format!("its JSON does not parse ({e})")))?;
    // The schema first: a file of another version may lack what this one reads.
    let schema = value.get("schema").and_then(|s| s.as_str()).unwrap_or("no schema");
    let version = value.get("schema_version").and_then(|v| v.as_u64());
    if schema != "schedlab-run" || !version.is_some_and(|v| RUN_SCHEMA_VERSIONS.contains(&v)) {
        let version = version.map_or("no version".to_string(), |v| format!("version {v}"));
        return Err(UnreadableRun(format!(
            "it writes {schema} {version}, this build reads schedlab-run versions {} to {}",
            RUN_SCHEMA_VERSIONS.start(),
            RUN_SCHEMA_VERSIONS.end()
        )));
    }
    let file: RunFile =
        serde_json::from_value(value).map_err(|e| UnreadableRun(format!("its JSON: {e}")))?;
    let ours = serde_json::to_value(asked).map_err(|e| UnreadableRun(e.to_string()))?;
    if let Some(diff) = workload_difference(&ours, &file.config) {
        return Err(UnreadableRun(format!("it ran another workload than asked: {diff}")));
    }
    let requests = schedlab_core::RequestCounters {
        inserted: file.requests.inserted,
        dispatched: file.requests.dispatched,
        merged: file.requests.merged,
        completed: file.requests.completed,
        ..Default::default()
    };
    Ok(RunResult {
        variant: static_name(&file.variant),
        lock: file.lock,
        threads: file.threads,
        measured_s: file.measured_s,
        kiops: file.kiops.unwrap_or(0.0),
        per_thread_kiops: file.per_thread_kiops.unwrap_or_default(),
        requests,
        consistent: file.consistent,
        consistency: Default::default(),
        groups_live_after: file.groups_live_after,
        queues_live_after: file.queues_live_after,
        churn_removals: file.churn_removals,
        stats_reads: file.stats_reads,
        interrupted: file.interrupted,
        pinned: asked.pin_cpus,
        cpu_busy_pct: file.cpu_busy_pct,
        other_cpus: file.other_cpus,
        steal_cpus: file.steal_cpus,
        stopped_s: file.stopped_s,
        locks: Vec::new(),
        lock_stats: None,
        lockstat_toggle: None,
        turns: false,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_workload_differs_only_in_the_fields_both_name() {
        let asked = serde_json::json!({"threads": 2, "seed": 1, "new_knob": 3});
        let older = serde_json::json!({"threads": 2, "seed": 1});
        assert_eq!(workload_difference(&asked, &older), None, "a field the old build lacks");
        let other = serde_json::json!({"threads": 2, "seed": 7});
        let diff = workload_difference(&asked, &other).expect("the seed differs");
        assert!(diff.contains("`seed` is 7, asked 1"), "{diff}");
    }

    #[test]
    fn a_run_file_of_another_schema_or_workload_is_refused_with_its_reason() {
        let w = WorkloadConfig::default();
        let config = serde_json::to_value(&w).unwrap();
        let file = |schema: &str, version: u64, config: &serde_json::Value| {
            serde_json::json!({
                "schema": schema, "schema_version": version, "variant": "no-stats",
                "threads": 1, "lock": "fair-spin", "kiops": 12.5,
                "per_thread_kiops": [12.5], "consistent": true,
                "requests": {"inserted": 9, "dispatched": 9, "merged": 0, "completed": 9},
                "groups_live_after": 0, "queues_live_after": 0, "measured_s": 0.5,
                "interrupted": false, "churn_removals": 0, "stats_reads": 0,
                "other_cpus": 0.1, "steal_cpus": null, "cpu_busy_pct": 99.0, "stopped_s": null,
                "config": config,
            })
            .to_string()
        };
        for version in [1, 2] {
            let r = read_run_json(&file("schedlab-run", version, &config), &w).expect("readable");
            assert_eq!((r.variant, r.kiops, r.requests.completed), ("no-stats", 12.5, 9));
        }
        let refused = |text: &str| read_run_json(text, &w).unwrap_err().to_string();
        let e = refused(&file("schedlab-run", 3, &config));
        assert!(e.contains("version 3"), "{e}");
        let e = refused(&file("schedlab-compare", 1, &config));
        assert!(e.contains("schedlab-compare"), "{e}");
        let mut other = config.clone();
        other["seed"] = 99.into();
        let e = refused(&file("schedlab-run", 1, &other));
        assert!(e.contains("another workload") && e.contains("seed"), "{e}");
        assert!(refused("{").contains("does not parse"));
    }

    #[test]
    fn a_file_that_is_not_a_program_is_told_apart_by_its_first_bytes() {
        let dir = tempfile::tempdir().unwrap();
        let json = dir.path().join("old.json");
        std::fs::write(&json, "{\"schema\": \"schedlab-compare\"}").unwrap();
        assert!(!is_program(&json));
        let script = dir.path().join("old.sh");
        std::fs::write(&script, "#!/bin/sh\necho hi\n").unwrap();
        assert!(is_program(&script));
        assert!(!is_program(&dir.path().join("missing")));
        let e = version_of(&script).unwrap_err();
        assert!(matches!(e, NotABuild::NotExecutable(_)), "mode 644: {e}");
    }
}
