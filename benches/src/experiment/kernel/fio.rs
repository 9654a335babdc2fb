//! fio: the job it runs and what its JSON output says.
//!
//! One fio process per cgroup of jobs (`numjobs` processes, forked by fio as the seeds' runs
//! were), `--output-format=json`, `--group_reporting`: one aggregated job entry per process.

use crate::driver::workload::Rw;
use crate::error::failed;
use crate::error::ExperimentError;
use serde::Serialize;
use std::path::Path;
use std::time::Duration;

/// What a fio process is asked to do.
#[derive(Clone, Debug, Serialize)]
pub struct FioJob {
    pub rw: Rw,
    /// Block size in bytes.
    pub bs_bytes: u64,
    pub iodepth: usize,
    /// Processes of this fio (`numjobs`).
    pub numjobs: usize,
    pub runtime: Duration,
    pub ramp: Duration,
    /// `io_uring` (batched submission: the regime where the scheduler's cost shows) or `psync`.
    pub ioengine: &'static str,
    /// Sequential patterns: each job reads or writes its own region of this many bytes, the
    /// first from `offset_bytes` (as the model's jobs each own a region); random patterns cover
    /// the whole device.
    pub region: Option<(u64, u64)>,
}

impl FioJob {
    /// The command line after `fio`.
    pub fn args(&self, device: &Path, name: &str) -> Vec<String> {
        let ms = |d: Duration| format!("{}ms", d.as_millis().max(1));
        let mut args = vec![
            format!("--name={name}"),
            format!("--filename={}", device.display()),
            format!("--rw={}", self.rw.name()),
            format!("--bs={}", self.bs_bytes),
            format!("--ioengine={}", self.ioengine),
            format!("--iodepth={}", self.iodepth),
            format!("--numjobs={}", self.numjobs),
            "--direct=1".into(),
            "--time_based".into(),
            format!("--runtime={}", ms(self.runtime)),
            "--group_reporting".into(),
            "--output-format=json".into(),
        ];
        if let Some((offset_bytes, region_bytes)) = self.region {
            args.push(format!("--offset={offset_bytes}"));
            args.push(format!("--size={region_bytes}"));
            args.push(format!("--offset_increment={region_bytes}"));
        }
        if !self.ramp.is_zero() {
            args.push(format!("--ramp_time={}", ms(self.ramp)));
        }
        args
    }
}

/// What one fio process reported (all its jobs together).
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct FioResult {
    pub fio_version: String,
    /// I/Os completed in the measured window (after the ramp), reads and writes.
    pub ios: u64,
    pub iops: f64,
    /// The measured window, seconds (fio's runtime, the longest job's).
    pub runtime_s: f64,
    /// fio's own CPU use: user and system, percent of one CPU per job (fio's `usr_cpu`, `sys_cpu`).
    pub usr_cpu_pct: f64,
    pub sys_cpu_pct: f64,
    /// Jobs fio reported (1 with `--group_reporting`).
    pub job_entries: usize,
    /// A job's error code, if any job reported one.
    pub error: Option<i64>,
}

fn number(v: &serde_json::Value, key: &str) -> Option<f64> {
    v.get(key).and_then(|x| x.as_f64())
}

/// Parses fio's `--output-format=json` output. Text before the JSON (fio prints warnings there)
/// is skipped.
pub fn parse(text: &str) -> Result<FioResult, ExperimentError> {
    let start = text.find('{').ok_or_else(|| failed("no JSON object in fio's output"))?;
    let value: serde_json::Value = serde_json::from_str(&text[start..])
        .map_err(|e| failed(format!("fio's JSON output: {e}")))?;
    let jobs = value.get("jobs").and_then(|j| j.as_array());
    let jobs = jobs.ok_or_else(|| failed("fio's JSON output has no `jobs` list"))?;
    if jobs.is_empty() {
        return Err(failed("fio's JSON output lists no job"));
    }
    let mut r = FioResult {
        fio_version: value
            .get("fio version")
            .and_then(|v| v.as_str())
            .unwrap_or("unknown")
            .to_string(),
        job_entries: jobs.len(),
        ..FioResult::default()
    };
    let mut runtime_ms: f64 = 0.0;
    let (mut usr, mut sys) = (0.0, 0.0);
    for job in jobs {
        for dir in ["read", "write"] {
            let d = job.get(dir).ok_or_else(|| failed(format!("fio job without `{dir}`")))?;
            // A count: a whole number, summed checked over directions and jobs (issue 43).
            let ios = d.get("total_ios");
            let ios = ios.ok_or_else(|| failed(format!("fio `{dir}` without `total_ios`")))?;
            let not_a_count = || failed(format!("fio `{dir}`: `total_ios` is not a count: {ios}"));
            let ios = ios.as_u64().ok_or_else(not_a_count)?;
            let what = "fio's `total_ios` over its jobs";
            crate::counts::add_to(&mut r.ios, ios, what).map_err(failed)?;
            r.iops += number(d, "iops").unwrap_or(0.0);
            if ios > 0 {
                runtime_ms = runtime_ms.max(number(d, "runtime").unwrap_or(0.0));
            }
        }
        usr += number(job, "usr_cpu").unwrap_or(0.0);
        sys += number(job, "sys_cpu").unwrap_or(0.0);
        if let Some(e) = job.get("error").and_then(|e| e.as_i64()).filter(|&e| e != 0) {
            r.error = Some(e);
        }
    }
    r.runtime_s = runtime_ms / 1e3;
    r.usr_cpu_pct = usr / jobs.len() as f64;
    r.sys_cpu_pct = sys / jobs.len() as f64;
    Ok(r)
}

/// A process's state and start time from its `/proc/<pid>/stat` text ("pid (comm) S ppid ...",
/// the start time field 22): read after the command's last ')', which may hold spaces and
/// parentheses. `None` when the text is not such a line.
pub fn stat_state(stat: &str) -> Option<(char, u64)> {
    let (_, rest) = stat.rsplit_once(')')?;
    let fields: Vec<&str> = rest.split_whitespace().collect();
    let state = fields.first()?.chars().next()?;
    let start = fields.get(19)?.parse().ok()?;
    Some((state, start))
}

/// Whether a state is a stop: `T` (job control: SIGSTOP, SIGTSTP, SIGTTIN, SIGTTOU) or `t`
/// (held by a tracer).
pub fn is_stopped(state: char) -> bool {
    matches!(state, 'T' | 't')
}

/// One look at a fio run's processes: when (since the watch began), and whether any was stopped.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Look {
    pub at: Duration,
    pub stopped: bool,
}

/// How long a run's processes were seen stopped, from its looks (in order) and the end of the
/// watch: each stretch from the first look that saw one stopped to the first look after it that
/// saw none (or the end). `None` when no look saw a stop. A stop shorter than a look's interval
/// may be missed; one that is seen is never left out.
pub fn stopped_for(looks: &[Look], end: Duration) -> Option<Duration> {
    let mut total = Duration::ZERO;
    let mut since: Option<Duration> = None;
    let mut seen = false;
    for l in looks {
        match (l.stopped, since) {
            (true, None) => {
                since = Some(l.at);
                seen = true;
            }
            (false, Some(s)) => {
                total += l.at.saturating_sub(s);
                since = None;
            }
            _ => {}
        }
    }
    if let Some(s) = since {
        total += end.saturating_sub(s);
    }
    seen.then_some(total)
}

/// A kernel run's stop, from its two witnesses (issue 43, item 5b): this process stopped during
/// it (`driver::stopped`: a SIGCONT inside a gap of its clock; fio runs in a process group of its
/// own, so a Ctrl-Z stops this process, not fio, and the run's windows and CPU figures then span
/// the stop), and fio's own processes seen stopped ([`stopped_for`]: fewer I/Os in fio's
/// wall-clock runtime). The longer of the two (they overlap when both were stopped together).
pub fn run_stopped(own: Option<Duration>, fio: Option<Duration>) -> Option<Duration> {
    match (own, fio) {
        (Some(a), Some(b)) => Some(a.max(b)),
        (a, b) => a.or(b),
    }
}

/// What a run's stop says, for its warnings: `None` when it was not stopped.
pub fn stop_note(stopped_s: Option<f64>, reruns: u32, kept: bool) -> Option<String> {
    match (stopped_s, reruns) {
        (None, 0) => None,
        (None, n) => Some(format!("stopped by job control (SIGTSTP/SIGSTOP), run again {n} time(s); this run was not stopped")),
        (Some(s), n) if kept => Some(format!(
            "stopped by job control (SIGTSTP/SIGSTOP) for {s:.1} s, run again {n} time(s) and kept still stopped (retries exhausted): its figures measure the stop"
        )),
        (Some(s), _) => Some(format!("stopped by job control (SIGTSTP/SIGSTOP) for {s:.1} s")),
    }
}

/// Watches a fio run's processes for stops: a thread looks at fio and every process under it
/// every [`crate::driver::stopped::TICK`] (its job processes found again every second, so that
/// those forked late are seen), each by pid and start time (a pid reused by another process
/// after its fio exited is not looked at).
pub struct StopWatch {
    done: std::sync::Arc<std::sync::atomic::AtomicBool>,
    began: std::time::Instant,
    thread: Option<std::thread::JoinHandle<Vec<Look>>>,
}

impl StopWatch {
    /// Starts watching the processes `roots` (fio's) and those under them. A thread that cannot
    /// start is said in the log and watches nothing.
    pub fn start(roots: Vec<u32>) -> StopWatch {
        use std::sync::atomic::Ordering;
        let done = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        let began = std::time::Instant::now();
        let flag = done.clone();
        // (pid, start time) of the roots and of what runs under them.
        fn read(pid: u32) -> Option<(char, u64)> {
            std::fs::read_to_string(format!("/proc/{pid}/stat")).ok().and_then(|s| stat_state(&s))
        }
        let mut watched: Vec<(u32, u64)> =
            roots.iter().filter_map(|&p| read(p).map(|(_, start)| (p, start))).collect();
        let find = move |watched: &mut Vec<(u32, u64)>| {
            for &root in &roots {
                for found in super::system::descendants(root) {
                    if !watched.contains(&found) {
                        watched.push(found);
                    }
                }
            }
        };
        let look = move |watched: &[(u32, u64)]| Look {
            at: began.elapsed(),
            stopped: watched.iter().any(|&(pid, start)| {
                read(pid).is_some_and(|(state, s)| s == start && is_stopped(state))
            }),
        };
        // What runs under the roots now; the first look is taken here, so that a watch always
        // has one, however late its thread first runs.
        find(&mut watched);
        let first = look(&watched);
        let thread = std::thread::Builder::new().name("fio-stop-watch".into()).spawn(move || {
            let mut looks = vec![first];
            let mut n = 1u32;
            loop {
                std::thread::sleep(crate::driver::stopped::TICK);
                if flag.load(Ordering::Relaxed) {
                    return looks;
                }
                if n % 10 == 0 {
                    find(&mut watched);
                }
                n = n.wrapping_add(1);
                looks.push(look(&watched));
            }
        });
        let thread = thread
            .map_err(|e| {
                tracing::warn!("cannot watch fio for stops ({e}): a stopped fio is not flagged")
            })
            .ok();
        StopWatch { done, began, thread }
    }

    /// Ends the watch: how long fio's processes were seen stopped, if they were.
    pub fn finish(mut self) -> Option<Duration> {
        self.done.store(true, std::sync::atomic::Ordering::Relaxed);
        let end = self.began.elapsed();
        let looks = self.thread.take()?.join().ok()?;
        stopped_for(&looks, end)
    }
}

impl Drop for StopWatch {
    fn drop(&mut self) {
        // An early return: the thread ends at its next look.
        self.done.store(true, std::sync::atomic::Ordering::Relaxed);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_arguments_say_what_the_job_asks() {
        let job = FioJob {
            rw: Rw::RandRead,
            bs_bytes: 4096,
            iodepth: 32,
            numjobs: 2,
            runtime: Duration::from_millis(1500),
            ramp: Duration::ZERO,
            ioengine: "io_uring",
            region: None,
        };
        let args = job.args(Path::new("/dev/loop3"), "bfq");
        for want in [
            "--filename=/dev/loop3",
            "--rw=randread",
            "--bs=4096",
            "--iodepth=32",
            "--numjobs=2",
            "--runtime=1500ms",
            "--direct=1",
        ] {
            assert!(args.iter().any(|a| a == want), "{want} missing from {args:?}");
        }
        assert!(!args.iter().any(|a| a.starts_with("--ramp_time")));
    }

    #[test]
    fn warnings_before_the_json_are_skipped_and_a_broken_output_is_an_error() {
        let text = "fio: some warning\n{\"fio version\":\"fio-3.33\",\"jobs\":[{\"read\":{\"total_ios\":10,\"iops\":5.0,\"runtime\":2000},\"write\":{\"total_ios\":0,\"iops\":0.0,\"runtime\":0},\"usr_cpu\":1.5,\"sys_cpu\":20.0,\"error\":0}]}";
        let r = parse(text).unwrap();
        assert_eq!((r.ios, r.iops, r.runtime_s, r.error), (10, 5.0, 2.0, None));
        assert!(parse("no json here").is_err());
        assert!(parse("{\"jobs\":[]}").is_err());
        assert!(parse("{\"jobs\":[{\"read\":{}}]}").is_err());
    }

    /// Counts near the largest: summed up to it, refused past it in one line (they wrapped).
    #[test]
    fn io_counts_that_add_up_past_the_largest_are_refused() {
        let job = |read: u64, write: u64| {
            format!("{{\"read\":{{\"total_ios\":{read},\"iops\":1.0,\"runtime\":1000}},\"write\":{{\"total_ios\":{write},\"iops\":0.0,\"runtime\":0}}}}")
        };
        let text = |jobs: &[String]| format!("{{\"jobs\":[{}]}}", jobs.join(","));
        let r = parse(&text(&[job(u64::MAX - 1, 1)])).unwrap();
        assert_eq!(r.ios, u64::MAX);
        for jobs in [vec![job(u64::MAX, 1)], vec![job(u64::MAX, 0), job(1, 0)]] {
            let e = parse(&text(&jobs)).unwrap_err().message;
            assert!(e.contains("add up past 18446744073709551615") && !e.contains('\n'), "{e}");
        }
        // Not a count at all: negative, fractional, beyond u64.
        for bad in ["-1", "1.5", "18446744073709551616"] {
            let jobs = format!(
                "{{\"jobs\":[{{\"read\":{{\"total_ios\":{bad}}},\"write\":{{\"total_ios\":0}}}}]}}"
            );
            let e = parse(&jobs).unwrap_err().message;
            assert!(e.contains("not a count"), "{bad}: {e}");
        }
    }

    fn looks(states: &[(u64, bool)]) -> Vec<Look> {
        states
            .iter()
            .map(|&(ms, stopped)| Look { at: Duration::from_millis(ms), stopped })
            .collect()
    }

    /// Synthetic looks, no clock: a stop seen is counted from the first look that saw it to the
    /// first that did not (or the end), and only a look that saw one makes a run stopped.
    #[test]
    fn a_stop_seen_by_a_look_is_measured_and_none_seen_is_none() {
        let ms = Duration::from_millis;
        // Never stopped (however late the looks came: a loaded machine is not a stop).
        assert_eq!(stopped_for(&looks(&[(0, false), (100, false), (1900, false)]), ms(2000)), None);
        assert_eq!(stopped_for(&[], ms(2000)), None);
        // Stopped from the look at 200 ms to the one at 2200 ms.
        assert_eq!(
            stopped_for(
                &looks(&[(0, false), (100, false), (200, true), (300, true), (2200, false)]),
                ms(3000)
            ),
            Some(ms(2000))
        );
        // Two stops add up; one still on at the end lasts to the end.
        assert_eq!(
            stopped_for(&looks(&[(0, true), (500, false), (1000, true)]), ms(1800)),
            Some(ms(1300))
        );
        // A stop seen once, at the very end: flagged, even if of no measured length.
        assert_eq!(stopped_for(&looks(&[(0, false), (900, true)]), ms(900)), Some(Duration::ZERO));
    }

    #[test]
    fn the_state_and_start_are_read_after_the_last_parenthesis() {
        let fields = |state: &str| {
            format!("4242 (fio (job) 1) {state} 1 4242 4242 0 -1 4194560 100 0 0 0 5 3 0 0 20 0 1 0 987654 1000 100")
        };
        assert_eq!(stat_state(&fields("T")), Some(('T', 987654)));
        assert_eq!(stat_state(&fields("S")), Some(('S', 987654)));
        assert!(
            is_stopped('T')
                && is_stopped('t')
                && !is_stopped('S')
                && !is_stopped('R')
                && !is_stopped('D')
                && !is_stopped('Z')
        );
        assert_eq!(stat_state("garbage"), None);
        assert_eq!(stat_state("1 (x) T 1"), None, "no start time");
    }

    /// A real process, stopped (SIGSTOP) before the watch starts, is seen stopped; one that runs
    /// is not. Event-based: the watch's first look is taken at its start, the stop is seen in
    /// `/proc` before it; no duration is asserted.
    #[test]
    fn a_watch_sees_a_stopped_process_and_not_a_running_one() {
        let state = |pid: u32| {
            std::fs::read_to_string(format!("/proc/{pid}/stat"))
                .ok()
                .and_then(|s| stat_state(&s))
                .map(|(c, _)| c)
        };
        let mut running = std::process::Command::new("sleep").arg("60").spawn().expect("sleep");
        let mut stopped = std::process::Command::new("sleep").arg("60").spawn().expect("sleep");
        // SAFETY: signals to our own unreaped children; no memory is involved.
        unsafe { libc::kill(stopped.id() as libc::pid_t, libc::SIGSTOP) };
        while state(stopped.id()) != Some('T') {
            std::thread::sleep(Duration::from_millis(5));
        }
        let seen_running = StopWatch::start(vec![running.id()]).finish();
        let seen_stopped = StopWatch::start(vec![stopped.id()]).finish();
        for c in [&mut running, &mut stopped] {
            let _ = c.kill();
            let _ = c.wait();
        }
        assert_eq!(seen_running, None);
        assert!(seen_stopped.is_some(), "a stopped process was not seen stopped");
    }

    /// The two witnesses: either alone is a stop; both together, the longer.
    #[test]
    fn a_run_is_stopped_when_either_witness_saw_a_stop() {
        let s = Duration::from_secs;
        assert_eq!(run_stopped(None, None), None);
        assert_eq!(run_stopped(Some(s(2)), None), Some(s(2)));
        assert_eq!(run_stopped(None, Some(s(3))), Some(s(3)));
        assert_eq!(run_stopped(Some(s(2)), Some(s(3))), Some(s(3)));
        assert_eq!(stop_note(None, 0, false), None);
        assert!(stop_note(None, 1, false).unwrap().contains("run again 1 time"));
        assert!(stop_note(Some(2.0), 3, true).unwrap().contains("retries exhausted"));
        assert!(stop_note(Some(2.0), 0, false).unwrap().contains("for 2.0 s"));
    }
}
