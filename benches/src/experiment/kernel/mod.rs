//! `schedlab kernel`: the same experiment on this machine's own kernel, beside the model.
//!
//! fio jobs against a block device (a loop device over a sparse file in a tmpfs, or `--device`)
//! under the kernel's schedulers — `none`, `mq-deadline`, `bfq` (slice_idle 0, low_latency 0, as
//! the seeds) and `bfq` with the jobs spread over N cgroups — interleaved in rounds with the
//! model's matching rows: `none` (the reference row: no scheduler), `deadline` (mq-deadline's
//! reference row), `no-stats`, `debug-off`, `rstat` and `mainline`, inserting directly as the
//! kernel's BFQ does (6.18 has no insertion lists: `notes/kernel-map.md` §4), at 0 groups, and
//! `mainline` and `rstat` at N. `mainline` is today's kernel ([`fidelity::MODEL_BFQ`]: the legacy
//! io_service_bytes/io_serviced per CPU at submission, before the scheduler lock); the model's
//! rows run the running kernel's lock-site profile.
//!
//! Per kernel configuration: IOPS (median and range over rounds); CPU time per I/O over all CPUs
//! (`/proc/stat`: submitters, the loop worker, softirq; and fio's own from its accounting cgroup);
//! in a second, recorded run per round, lock contention from the kernel's tracepoints aggregated
//! in the kernel by bpftrace ([`contention`]), and what recording cost; after the rounds, one
//! `perf record -a -g` run per configuration folded into a flamegraph with BFQ's and the group
//! statistics' shares ([`profile`]). The model's rows give KIOPS, CPU per request, the scheduler
//! lock's contentions per request (lock statistics) and, from a profiled run, the statistics'
//! share of the scheduler's work.
//!
//! The experiment has the house shape (`crate::experiment`): [`run`] takes the configuration, a
//! stop flag and an observer, and returns a serialisable [`KernelReport`] or a typed error.
//! Everything it changes is put back (`system`): on success, on error, on a stop, and after a
//! SIGKILL by the next run or `--cleanup`.
//!
//! The model's outside work: by default each model row spins, per request, the CPU time the
//! kernel's `none` configuration spent per I/O (measured in a calibration run before the
//! rounds), so that the model's `variant ÷ none` compares with the kernel's `bfq ÷ none` (with
//! no outside work the model's `none` does nothing at all and the ratio says little).
//!
//! Whose CPU time: the experiment's only ([`system::CpuSplit`]): fio's accounting cgroup, the
//! kernel threads (the loop worker, kworkers, ksoftirqd) and the interrupts that hit idle CPUs;
//! every other task's time (the root cgroup's usage less those) is *other load*, and a kernel run
//! with more than [`workload::OTHERS_DISTURB_CPUS`] of it is flagged in the warnings, as the
//! model's runs are. The profiles' shares are likewise of the experiment's samples only.
//!
//! The elevator's cost: the kernel configurations are profiled *before* the rounds; from those
//! profiled runs, a scheduler's CPU per I/O over `none`'s, less its own functions' share, is
//! blk-mq's elevator machinery that `none` skips ([`ElevatorCost`]). The model's BFQ
//! rows spin it per request outside the scheduler lock (`WorkloadConfig::elevator_ns`; a
//! deadline row gets mq-deadline's; `none` never). It is calibrated from those profiles, and the
//! model is judged on the plain rounds' throughput and contention.
//!
//! The configuration axis: the whole experiment (calibration, profiles, rounds) runs at each
//! [`Point`] (`--points`; by default {1, N} jobs × {1, D} iodepth), the main one first: its rows
//! are the report's `kernel` and `model`, the others' are in `points`. Every point's figures go
//! into the fidelity table ([`fidelity`]): kernel, model, model ÷ kernel, goal band, within or
//! not.

pub mod contention;
pub mod fidelity;
pub mod fio;
pub mod inject;
pub mod profile;
pub mod rows;
pub mod sites;
pub mod system;

use crate::driver::completion::CompletionMode;
use crate::driver::turns::Preemption;
use crate::driver::workload::{self, sleep_until, Rw, WorkloadConfig};
use crate::error::{failed, ExperimentError};
use crate::experiment::observer::{Event, Observer};
use crate::files::output::OutputFile;
use crate::files::provenance::Provenance;
use crate::stats::{median, Spread};
pub use rows::{
    ElevatorCost, KernelRow, KernelRun, KernelSched, ModelRow, Point, PointResult, Profiled,
    SchedulerCost, SideBySide,
};
use schedlab_core::sync::{AtomicBool, Ordering};
use schedlab_core::{KernelProfile, LockKind};
use serde::Serialize;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// How much outside work the model's rows spin per request.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum ModelOutside {
    /// The kernel `none` configuration's CPU time per I/O, measured before the rounds.
    Kernel,
    Fixed(u64),
}

/// The most points one run measures.
pub const MAX_POINTS: usize = 8;

/// The experiment's configuration.
#[derive(Clone, Debug, Serialize)]
pub struct KernelConfig {
    /// Jobs: fio's numjobs, the model's threads.
    pub threads: usize,
    pub rw: Rw,
    pub bs_sectors: u32,
    pub iodepth: usize,
    pub ioengine: &'static str,
    pub duration: Duration,
    pub ramp: Duration,
    pub rounds: usize,
    /// Groups (cgroups in the kernel, groups in the model); 0: no grouped rows.
    pub groups: usize,
    pub weights: Vec<u64>,
    /// Size of the loop device's backing file.
    pub size_bytes: u64,
    /// An existing device instead of a loop device (only read from).
    pub device: Option<PathBuf>,
    /// Record lock contention (a second run per configuration and round).
    pub contention: bool,
    /// Profile each configuration once (`perf record -g`) and draw its flamegraph.
    pub profile: bool,
    /// Where the flamegraphs go (one SVG per configuration), if anywhere.
    pub flamegraph_dir: Option<PathBuf>,
    /// Run the model's rows.
    pub model: bool,
    pub model_lock: LockKind,
    pub model_outside: ModelOutside,
    /// The elevator cost the model's scheduler rows pay per request: `Kernel`, the one measured
    /// at each point ([`ElevatorCost`]: bfq's for the BFQ rows, mq-deadline's for a
    /// deadline row), or a fixed figure. `none` never pays it.
    pub model_elevator: ModelOutside,
    /// Which of BFQ's lock sites the model's rows take: the running kernel's.
    pub model_kernel: KernelProfile,
    /// Where the model's requests complete: in completion contexts of their own (the default, as
    /// the kernel completes a loop device's requests in softirq) or on the dispatching job.
    pub model_completion: CompletionMode,
    /// The configurations measured, main first (its `threads`, `iodepth` and `ioengine` are the
    /// fields above); each gets the whole experiment: rounds, recorded runs, profiles.
    pub points: Vec<Point>,
}

impl KernelConfig {
    /// Checks the configuration (before any work).
    pub fn validate(&self) -> Result<(), ExperimentError> {
        let bad = |m: String| Err(ExperimentError::bad_input(m));
        if !(1..=256).contains(&self.threads) {
            return bad(format!("--threads must be 1..=256, got {}", self.threads));
        }
        if self.duration.is_zero() || self.duration > Duration::from_secs(3600) {
            return bad("--duration must be more than 0 and at most an hour".into());
        }
        if self.ramp > Duration::from_secs(3600) {
            return bad("--ramp must be at most an hour".into());
        }
        if !(1..=100).contains(&self.rounds) {
            return bad(format!("--rounds must be 1..=100, got {}", self.rounds));
        }
        if self.groups > 64 {
            return bad(format!(
                "--groups must be 0..=64 here (one fio process per group), got {}",
                self.groups
            ));
        }
        if self.weights.is_empty() || self.weights.iter().any(|w| !(1..=1000).contains(w)) {
            return bad("group weights must be 1..=1000".into());
        }
        if self.groups > 0 && self.weights.len() != self.groups {
            return bad(format!(
                "--weights gives {} weight(s) for {} group(s): give one per group, or end the list with `...` to repeat it in turn",
                self.weights.len(),
                self.groups
            ));
        }
        if self.points.is_empty() || self.points.len() > MAX_POINTS {
            return bad(format!(
                "--points must name 1..={MAX_POINTS} configurations, got {}",
                self.points.len()
            ));
        }
        if self.points[0]
            != (Point { threads: self.threads, iodepth: self.iodepth, ioengine: self.ioengine })
        {
            return bad("the first of --points must be the main configuration (--threads, --iodepth, --ioengine)".into());
        }
        for p in &self.points {
            if !(1..=256).contains(&p.threads) || !(1..=1024).contains(&p.iodepth) {
                return bad(format!(
                    "--points: {} is out of range (jobs 1..=256, iodepth 1..=1024)",
                    p.label()
                ));
            }
        }
        if self.bs_sectors == 0 || self.bs_sectors > 256 {
            return bad(format!(
                "block size must be 512 B to 128 KiB, got {} sectors",
                self.bs_sectors
            ));
        }
        if !(1..=1024).contains(&self.iodepth) {
            return bad(format!("--iodepth must be 1..=1024, got {}", self.iodepth));
        }
        if !(16 << 20..=64 << 30).contains(&self.size_bytes) {
            return bad("--size must be 16 MiB to 64 GiB".into());
        }
        if self.device.is_some() && matches!(self.rw, Rw::Write | Rw::RandWrite) {
            return bad("--device is only read from: writes go only to a loop device this command makes (leave out --device)".into());
        }
        if self.model {
            let cfg = self.model_config(
                fidelity::MODEL_BFQ,
                self.groups,
                0,
                0,
                schedlab_core::SitePads::NONE,
            );
            cfg.validate(fidelity::MODEL_BFQ)?;
        }
        Ok(())
    }

    /// "2 jobs × iodepth 32 (io_uring)": the main point's label.
    pub fn point_label(&self) -> String {
        Point { threads: self.threads, iodepth: self.iodepth, ioengine: self.ioengine }.label()
    }

    /// The tag of `point`'s file names: none for the main point, `-JOBSxDEPTH-ENGINE` for the others.
    fn point_tag(&self, point: Point) -> String {
        if point == self.points[0] {
            String::new()
        } else {
            format!("-{}x{}-{}", point.threads, point.iodepth, point.ioengine)
        }
    }

    /// Every file `flamegraph_dir` receives (`kernel-<config><tag>.svg` and `.folded`), so that
    /// the CLI can declare them before any work.
    pub fn flamegraph_files(&self) -> Vec<String> {
        if !self.profile {
            return Vec::new();
        }
        let mut files = Vec::new();
        for &point in &self.points {
            let tag = self.point_tag(point);
            for config in self.at(point).kernel_configs() {
                files.push(format!("kernel-{}{tag}.svg", config.name()));
                files.push(format!("kernel-{}{tag}.folded", config.name()));
            }
        }
        files
    }

    /// This configuration at `p`.
    fn at(&self, p: Point) -> KernelConfig {
        KernelConfig {
            threads: p.threads,
            iodepth: p.iodepth,
            ioengine: p.ioengine,
            points: vec![p],
            ..self.clone()
        }
    }

    fn fio_job(&self, numjobs: usize, region: Option<(u64, u64)>) -> fio::FioJob {
        fio::FioJob {
            rw: self.rw,
            bs_bytes: self.bs_sectors as u64 * 512,
            iodepth: self.iodepth,
            numjobs,
            runtime: self.duration,
            ramp: self.ramp,
            ioengine: self.ioengine,
            region,
        }
    }

    /// The model's workload for `entry` at `groups` groups with `outside_ns` per request, and
    /// `elevator_ns` of blk-mq's elevator machinery (0 for `none`).
    fn model_config(
        &self,
        entry: &str,
        groups: usize,
        outside_ns: u64,
        elevator_ns: u64,
        pads: schedlab_core::SitePads,
    ) -> WorkloadConfig {
        WorkloadConfig {
            threads: self.threads,
            duration: self.duration,
            ramp: self.ramp,
            lock: self.model_lock,
            groups,
            weights: self.weights.clone(),
            rw: self.rw,
            bs_sectors: self.bs_sectors,
            iodepth: self.iodepth,
            outside_ns,
            elevator_ns,
            kernel: self.model_kernel,
            completion: self.model_completion,
            pads,
            // The kernel never preempts a task holding BFQ's spinlock: with more jobs than CPUs
            // the model's jobs take turns on the CPUs, switching between requests.
            preemption: Preemption::BetweenRequests,
            slice_idle_ns: 0,
            lockstat: entry != "none",
            lockstat_toggle: (entry != "none").then_some(Duration::from_millis(100)),
            ..WorkloadConfig::default()
        }
    }

    fn kernel_configs(&self) -> Vec<KernelSched> {
        let mut v = vec![KernelSched::None, KernelSched::MqDeadline, KernelSched::Bfq];
        if self.groups > 0 {
            v.push(KernelSched::BfqGroups);
        }
        v
    }

    fn model_entries(&self) -> Vec<(&'static str, usize)> {
        if !self.model {
            return Vec::new();
        }
        let mut v = vec![("none", 0), ("no-stats", 0), ("debug-off", 0), ("rstat", 0)];
        // This kernel's BFQ (when it is not one of the above).
        if !v.iter().any(|(e, _)| *e == fidelity::MODEL_BFQ) {
            v.push((fidelity::MODEL_BFQ, 0));
        }
        // mq-deadline's counterpart, once the model has one (until then `no-stats` stands in).
        if schedlab_variants::reference(fidelity::MODEL_DEADLINE).is_some()
            || schedlab_variants::info(fidelity::MODEL_DEADLINE).is_some()
        {
            v.insert(1, (fidelity::MODEL_DEADLINE, 0));
        }
        if self.groups > 0 {
            v.push((fidelity::MODEL_BFQ, self.groups));
            if fidelity::MODEL_BFQ != "rstat" {
                v.push(("rstat", self.groups));
            }
        }
        v
    }
}

/// Where the kernel half ran.
#[derive(Clone, Debug, Default, Serialize)]
pub struct Environment {
    pub kernel_release: String,
    pub device: String,
    /// A loop device this command made over a tmpfs file (else `--device`).
    pub loop_device: bool,
    pub direct_io: Option<bool>,
    pub fio: String,
    pub perf: String,
    pub bpftrace: Option<String>,
    pub cgroup: Option<String>,
    /// Clean-up of what earlier runs left, one line each.
    pub cleaned_up_before: Vec<String>,
}

/// The report: both halves, side by side, with their provenance.
impl KernelConfig {
    /// The settings `--inject` runs with (its own copy: `inject` imports nothing of this module).
    pub fn inject_settings(&self) -> inject::KernelSettings {
        inject::KernelSettings {
            threads: self.threads,
            rw: self.rw,
            bs_sectors: self.bs_sectors,
            iodepth: self.iodepth,
            ioengine: self.ioengine,
            duration: self.duration,
            ramp: self.ramp,
            rounds: self.rounds,
            groups: self.groups,
            weights: self.weights.clone(),
            size_bytes: self.size_bytes,
            device: self.device.clone(),
            model: self.model,
            model_lock: self.model_lock,
            model_kernel: self.model_kernel,
            model_completion: self.model_completion,
            model_outside_ns: match self.model_outside {
                ModelOutside::Kernel => None,
                ModelOutside::Fixed(ns) => Some(ns),
            },
        }
    }
}

#[derive(Clone, Debug, Serialize)]
pub struct KernelReport {
    pub provenance: Provenance,
    pub environment: Environment,
    pub config: KernelConfig,
    /// The model's outside work per request, ns (from the calibration run when asked).
    pub model_outside_ns: u64,
    /// The elevator cost the model's BFQ rows paid per request, ns (main point).
    pub model_elevator_ns: u64,
    pub kernel: Vec<KernelRow>,
    pub model: Vec<ModelRow>,
    pub side_by_side: Vec<SideBySide>,
    /// The elevator's own cost at the main point (see [`ElevatorCost`]).
    pub elevator: Option<ElevatorCost>,
    /// The main point's lock sites: the kernel's hold at each and the gaps between them, and the
    /// pads the model's rows ran with (`sites.rs`); `None` without a bfq profile or the model.
    pub sites: Option<sites::SiteCalibration>,
    /// The other points of the axis, each with the same figures as the main one above.
    pub points: Vec<PointResult>,
    /// The fidelity table: every point's figures, kernel beside model, with their goal bands.
    pub fidelity: Vec<fidelity::FidelityRow>,
    /// The model's inputs computed from the kernel at each point, each with the kernel figures
    /// it was computed from (a row whose figure is among them is "fitted").
    pub model_inputs: Vec<(Point, Vec<fidelity::Calibrated>)>,
    pub warnings: Vec<String>,
    pub interrupted: bool,
    /// Runs, profiles and clean-up steps that failed (exit 4), each told on stderr as well.
    pub failures: Vec<String>,
    /// Files the experiment writes itself (the flamegraphs) that could not be written (exit 3),
    /// each told on stderr as well.
    pub output_failures: Vec<String>,
}

fn tool_version(tool: &str, arg: &str) -> String {
    Command::new(tool)
        .arg(arg)
        .output()
        .ok()
        .map(|o| String::from_utf8_lossy(&o.stdout).lines().next().unwrap_or("").trim().to_string())
        .unwrap_or_default()
}

/// The machine's busy CPU seconds so far, all CPUs (steal left out).
fn machine_busy_s() -> Option<f64> {
    crate::driver::host::machine_busy_steal_s().map(|(busy, _)| busy)
}

/// Sends `signal` to a child (ignoring one that has already exited).
fn signal(child: &Child, signal: i32) {
    // SAFETY: sending a signal involves no memory of ours; the pid is our own unreaped child.
    unsafe { libc::kill(child.id() as libc::pid_t, signal) };
}

/// Runs `cmd` to its end and returns its stdout, giving way to `stop` (`None`: stopped, the
/// child killed and reaped) and to `limit` (an error).
fn output_until(
    cmd: &mut Command,
    limit: Duration,
    stop: &AtomicBool,
) -> Result<Option<Vec<u8>>, ExperimentError> {
    std::os::unix::process::CommandExt::process_group(cmd, 0);
    let spawned = cmd.stdin(Stdio::null()).stdout(Stdio::piped()).spawn();
    let mut child =
        spawned.map_err(|e| failed(format!("cannot run {:?}: {e}", cmd.get_program())))?;
    let mut stdout = child.stdout.take();
    let reader = std::thread::spawn(move || {
        let mut bytes = Vec::new();
        if let Some(out) = stdout.as_mut() {
            let _ = std::io::Read::read_to_end(out, &mut bytes);
        }
        bytes
    });
    let status = system::wait_bounded(&mut child, limit, Some(stop));
    let bytes = reader.join().unwrap_or_default();
    match status {
        Some(_) => Ok(Some(bytes)),
        None if stop.load(Ordering::Relaxed) => Ok(None),
        None => {
            let (program, limit) = (cmd.get_program(), limit.as_secs());
            Err(failed(format!("{program:?} did not finish within {limit} s")))
        }
    }
}

/// The machine as set up for the run: the device, the cgroups, the ledger that puts them back.
struct Rig {
    ledger: system::Ledger,
    device: PathBuf,
    queue: PathBuf,
    device_bytes: u64,
    cgroups: Option<system::Cgroups>,
    /// Kernel bfq's holds per site at one job and iodepth 1, measured once per invocation by the
    /// first point that needs them and kept for the others ([`uncontended_holds`]).
    holds_at_one_job: Option<sites::Uncontended>,
}

impl Rig {
    fn set_scheduler(&mut self, sched: KernelSched) -> Result<(), ExperimentError> {
        let (device, elevator) = (self.device.display(), sched.elevator());
        std::fs::write(self.queue.join("scheduler"), elevator)
            .map_err(|e| failed(format!("cannot switch {device} to {elevator}: {e}")))?;
        if sched.elevator() == "bfq" {
            for (knob, value) in [("slice_idle", "0"), ("low_latency", "0")] {
                let path = self.queue.join("iosched").join(knob);
                std::fs::write(&path, value)
                    .map_err(|e| failed(format!("cannot set {}: {e}", path.display())))?;
            }
        }
        Ok(())
    }

    /// Runs fio once under the current scheduler: one process per group of jobs, each in its
    /// cgroups. `None` when stopped.
    fn fio_run(
        &mut self,
        cfg: &KernelConfig,
        sched: KernelSched,
        round: usize,
        stop: &AtomicBool,
    ) -> Result<Option<KernelRun>, ExperimentError> {
        let mut started = Vec::new();
        let run = self.fio_run_recorded(cfg, sched, round, stop, &mut started);
        // Every recorded fio is waited for (or killed and reaped) by now: nothing to put back.
        let reaped = |c: &system::Change| matches!(c, system::Change::Process { process } if started.contains(&process.pid));
        self.ledger.forget(reaped)?;
        run
    }

    /// [`Rig::fio_run`]'s work: every fio it starts, and every job process under it, is recorded
    /// in the ledger (pid and start time, in `started`), so that a later clean-up of a dead run
    /// may signal them and nothing else.
    fn fio_run_recorded(
        &mut self,
        cfg: &KernelConfig,
        sched: KernelSched,
        round: usize,
        stop: &AtomicBool,
        started: &mut Vec<u32>,
    ) -> Result<Option<KernelRun>, ExperimentError> {
        let groups: Vec<Option<&Path>> = match (sched, &self.cgroups) {
            (KernelSched::BfqGroups, Some(cg)) => {
                cg.groups.iter().map(|g| Some(g.as_path())).collect()
            }
            _ => vec![None],
        };
        // Jobs in turn over the groups, as the model's job i runs in group i mod N.
        let mut counts = vec![0usize; groups.len()];
        for i in 0..cfg.threads {
            counts[i % groups.len()] += 1;
        }
        let region = self.device_bytes / cfg.threads as u64 / 4096 * 4096;
        let sequential = matches!(cfg.rw, Rw::Read | Rw::Write);
        let accounting = self.cgroups.as_ref().and_then(|c| c.accounting.clone());
        let root = self
            .cgroups
            .as_ref()
            .filter(|c| c.accounting.is_some())
            .map(|c| system::accounting_root(&c.io));
        let mut children = Vec::new();
        let mut first_job = 0u64;
        for (g, &n) in groups.iter().zip(&counts) {
            if n == 0 {
                continue;
            }
            let job = cfg.fio_job(n, sequential.then_some((first_job * region, region)));
            first_job += n as u64;
            let mut cmd = Command::new("fio");
            cmd.args(job.args(&self.device, sched.name()))
                .stdin(Stdio::null())
                .stdout(Stdio::piped())
                .stderr(Stdio::piped());
            let joins: Vec<&Path> = g.iter().copied().chain(accounting.as_deref()).collect();
            // The cgroup files stay open until the child has joined them (at its exec).
            let setup = system::ChildSetup::new(&joins)?;
            setup.apply(&mut cmd);
            // Its own process group, so that a stop kills fio's job processes with it.
            std::os::unix::process::CommandExt::process_group(&mut cmd, 0);
            let child = cmd.spawn().map_err(|e| failed(format!("cannot start fio: {e}")))?;
            let pid = child.id();
            started.push(pid);
            children.push(child);
            drop(setup);
            self.ledger.record_process(pid)?;
        }
        // fio runs in a process group of its own: a Ctrl-Z stops this process, not fio; a stop
        // of fio itself is seen by this watch (issue 43, item 5b; this process's own stops are
        // seen by `unstopped`).
        let watch = fio::StopWatch::start(started.clone());
        let t0 = Instant::now();
        if !sleep_until(t0 + cfg.ramp, stop) {
            for c in children.iter_mut() {
                let _ = system::wait_bounded(c, Duration::ZERO, None);
            }
            return Ok(None);
        }
        // Every counter is read at the same two moments: the end of the ramp and the end of the run.
        let snapshot = || {
            let fio = accounting.as_deref().and_then(system::accounting_ns);
            let root = root.as_deref().and_then(system::accounting_ns);
            let kthreads = system::kthreads_runtime_ns();
            let own = system::own_runtime_ns();
            (machine_busy_s(), fio, root, kthreads, own, Instant::now())
        };
        // fio's job processes (each in a session of its own) are recorded once started: the ramp
        // is over or, with none, they are found as they are now.
        for child in &children {
            for (pid, _) in system::descendants(child.id()) {
                started.push(pid);
                self.ledger.record_process(pid)?;
            }
        }
        let before = snapshot();
        let limit = cfg.duration + Duration::from_secs(30);
        let mut outputs = Vec::new();
        let mut stopped = false;
        for mut child in children {
            // Read its output in full while it runs (a pipe that fills would block fio).
            let mut stdout = child.stdout.take();
            let reader = std::thread::spawn(move || {
                let mut s = String::new();
                if let Some(out) = stdout.as_mut() {
                    let _ = std::io::Read::read_to_string(out, &mut s);
                }
                s
            });
            let status = system::wait_bounded(&mut child, limit, Some(stop));
            let mut err = String::new();
            if let Some(e) = child.stderr.as_mut() {
                let _ = std::io::Read::read_to_string(e, &mut err);
            }
            let out = reader.join().unwrap_or_default();
            match status {
                Some(s) if s.success() => outputs.push(out),
                Some(s) => {
                    let first = err.lines().next().unwrap_or("").trim();
                    return Err(failed(format!("fio failed ({s}): {first}")));
                }
                None if stop.load(Ordering::Relaxed) => stopped = true,
                // Past its bound without a stop asked for: a failed run, not an interrupted one
                // (a fio held stopped past it was counted as a stop of the whole experiment).
                None => {
                    let held = watch.finish().map_or(String::new(), |d| {
                        format!(
                            " (fio was seen stopped by job control for {:.1} s)",
                            d.as_secs_f64()
                        )
                    });
                    return Err(failed(format!(
                        "fio did not finish within {} s{held}",
                        limit.as_secs()
                    )));
                }
            }
        }
        let after = snapshot();
        let fio_stopped = watch.finish();
        if stopped {
            return Ok(None);
        }
        let results: Vec<fio::FioResult> =
            outputs.iter().map(|o| fio::parse(o)).collect::<Result<_, _>>()?;
        if let Some(e) = results.iter().find_map(|r| r.error) {
            return Err(failed(format!("fio reported error {e}")));
        }
        // Checked (issue 43): a sum past u64::MAX fails the run in one line, never wraps.
        let what = "fio's I/Os over its processes";
        let ios = crate::counts::sum(results.iter().map(|r| r.ios), what).map_err(failed)?;
        let iops: f64 = results.iter().map(|r| r.iops).sum();
        let runtime_s = results.iter().map(|r| r.runtime_s).fold(0.0, f64::max);
        let per_io = |s: f64| (ios > 0).then(|| s * 1e6 / ios as f64);
        let machine_s = before.0.zip(after.0).map(|(a, b)| b - a);
        let fio_ns = before.1.zip(after.1).map(|(a, b)| b.saturating_sub(a));
        let root_ns = before.2.zip(after.2).map(|(a, b)| b.saturating_sub(a));
        let split = machine_s.zip(fio_ns).zip(root_ns).map(|((m, f), r)| {
            let kthreads = system::kthreads_delta_ns(&before.3, &after.3)?;
            let own = after.4.clone()?.saturating_sub(before.4.clone()?);
            Ok::<_, ExperimentError>(system::CpuSplit::of(m, r, f, kthreads, own))
        });
        let split = split.transpose()?;
        let window_s = after.5.duration_since(before.5).as_secs_f64();
        Ok(Some(KernelRun {
            round,
            iops,
            ios,
            runtime_s,
            cpu_per_io_us: machine_s.and_then(per_io),
            fio_cpu_per_io_us: fio_ns.and_then(|ns| per_io(ns as f64 / 1e9)),
            experiment_cpu_per_io_us: split.and_then(|s| per_io(s.experiment_s)),
            other_cpus: split.filter(|_| window_s > 0.0).map(|s| s.others_s / window_s),
            contention: None,
            stopped_s: fio_stopped.map(|d| d.as_secs_f64()),
            reruns_stopped: 0,
        }))
    }
}

/// A recorder attached to the kernel for one run (bpftrace or perf), ended by SIGINT.
struct Recorder {
    child: Child,
    output: std::thread::JoinHandle<String>,
}

/// How long a recorder (bpftrace, perf record) may take to write what it recorded after SIGINT.
const RECORDER_EXIT: Duration = Duration::from_secs(30);

impl Recorder {
    /// Starts bpftrace with the contention program and waits until its probes are attached
    /// (`None`: a stop came first; bpftrace was killed and reaped).
    fn bpftrace(stop: &AtomicBool) -> Result<Option<Recorder>, ExperimentError> {
        let mut cmd = Command::new("bpftrace");
        cmd.args(["-f", "json", "-e", contention::BPFTRACE_PROGRAM])
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::null());
        system::ChildSetup::new(&[])?.apply(&mut cmd);
        let mut child = cmd.spawn().map_err(|e| failed(format!("cannot start bpftrace: {e}")))?;
        let stdout = child.stdout.take().ok_or_else(|| failed("bpftrace has no stdout"))?;
        let (tx, rx) = std::sync::mpsc::channel();
        // Read to the end whatever the bytes are: with `lines()`, a line that is not UTF-8 (a
        // symbol or a command name) would end the reading, and bpftrace would then block
        // writing its maps into the full pipe and never exit.
        let output = std::thread::spawn(move || {
            let mut all = String::new();
            let mut reader = BufReader::new(stdout);
            let mut bytes = Vec::new();
            while matches!(reader.read_until(b'\n', &mut bytes), Ok(n) if n > 0) {
                let line = String::from_utf8_lossy(&bytes);
                if line.contains("attached_probes") {
                    let _ = tx.send(());
                }
                all.push_str(line.trim_end_matches('\n'));
                all.push('\n');
                bytes.clear();
            }
            all
        });
        // Polled every 100 ms: attaching takes seconds, a stop is honoured meanwhile.
        let end = Instant::now() + Duration::from_secs(60);
        loop {
            match rx.recv_timeout(Duration::from_millis(100)) {
                Ok(()) => return Ok(Some(Recorder { child, output })),
                Err(std::sync::mpsc::RecvTimeoutError::Timeout)
                    if Instant::now() < end && !stop.load(Ordering::Relaxed) => {}
                Err(_) => {
                    let _ = child.kill();
                    let _ = child.wait();
                    let _ = output.join();
                    return match stop.load(Ordering::Relaxed) {
                        true => Ok(None),
                        false => Err(failed("bpftrace did not attach its probes within 60 s")),
                    };
                }
            }
        }
    }

    /// Starts `perf record -a -g` into `file`.
    fn perf(file: &Path, stop: &AtomicBool) -> Result<Recorder, ExperimentError> {
        let mut cmd = Command::new("perf");
        cmd.args(["record", "-a", "-g", "-F", "499", "-q", "-o"])
            .arg(file)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped());
        system::ChildSetup::new(&[])?.apply(&mut cmd);
        let child = cmd.spawn().map_err(|e| failed(format!("cannot start perf: {e}")))?;
        // perf prints nothing when it is ready; its first samples come within a few ms. (A stop
        // during the wait is seen by the run that follows, which then does not start.)
        let _ = sleep_until(Instant::now() + Duration::from_millis(300), stop);
        let output = std::thread::spawn(String::new);
        Ok(Recorder { child, output })
    }

    /// Ends the recorder (SIGINT) and waits for it to write what it recorded; a stop kills it
    /// (its run was stopped too, or is not kept unrecorded).
    fn finish(mut self, stop: &AtomicBool) -> Result<String, ExperimentError> {
        signal(&self.child, libc::SIGINT);
        // The wait gives way to a stop at once; its bound decides when a recorder that never
        // ends is given up. NOTE: on this 2-CPU machine with a CPU-bound loop beside it,
        // bpftrace sometimes never exits after SIGINT (notes/reliability.md, "not held"):
        // that recorded run fails (exit 4, said) and the others are kept.
        let status = system::wait_bounded(&mut self.child, RECORDER_EXIT, Some(stop));
        let text = self.output.join().unwrap_or_default();
        match status {
            Some(_) => Ok(text),
            None if stop.load(Ordering::Relaxed) => Err(failed("stopped")),
            None => {
                let limit = RECORDER_EXIT.as_secs();
                Err(failed(format!("the recorder did not stop within {limit} s of SIGINT")))
            }
        }
    }
}

/// Re-runs of a kernel run disturbed by a job-control stop, at most; the last is then kept,
/// flagged (`KernelRun::stopped_s`) and said in the warnings (as `NoisePolicy::retries`).
pub const STOPPED_RETRIES: u32 = 3;

/// One kernel run (with whatever records it: a profile, the contention recorder) run again while
/// a job-control stop disturbed it (issue 43, item 5b), at most [`STOPPED_RETRIES`] times.
/// `attempt` makes the run (`None`: a stop of the experiment); `run_of` finds its [`KernelRun`],
/// whose `stopped_s` says fio's processes were seen stopped. `own_stop` says whether this
/// process was stopped between two instants (`driver::stopped::stopped_between`). An attempt
/// that failed while this process was stopped (a bound passed during the stop) is run again
/// too. The note said of the kept run, if any, is pushed to `notes` with `label`.
pub(crate) fn rerun_while_stopped<T>(
    label: &str,
    stop: &AtomicBool,
    notes: &mut Vec<String>,
    own_stop: &dyn Fn(Instant, Instant) -> Option<Duration>,
    run_of: impl Fn(&mut T) -> &mut KernelRun,
    mut attempt: impl FnMut() -> Result<Option<T>, ExperimentError>,
) -> Result<Option<T>, ExperimentError> {
    let mut reruns = 0u32;
    loop {
        let t0 = Instant::now();
        let result = attempt();
        let own = own_stop(t0, Instant::now());
        let mut out = match result {
            Ok(Some(out)) => out,
            Ok(None) => return Ok(None),
            Err(e)
                if own.is_some() && reruns < STOPPED_RETRIES && !stop.load(Ordering::Relaxed) =>
            {
                notes.push(format!("{label}: failed while this process was stopped by job control ({e}); run again"));
                reruns += 1;
                continue;
            }
            Err(e) => return Err(e),
        };
        let run = run_of(&mut out);
        let stopped = fio::run_stopped(own, run.stopped_s.map(Duration::from_secs_f64));
        run.stopped_s = stopped.map(|d| d.as_secs_f64());
        run.reruns_stopped = reruns;
        if stopped.is_none() || reruns >= STOPPED_RETRIES || stop.load(Ordering::Relaxed) {
            let kept = stopped.is_some();
            if let Some(note) = fio::stop_note(run.stopped_s, reruns, kept) {
                notes.push(format!("{label}: {note}"));
            }
            return Ok(Some(out));
        }
        reruns += 1;
    }
}

/// The run itself, its profile's and its recorder's: where [`rerun_while_stopped`] finds it.
fn itself(r: &mut KernelRun) -> &mut KernelRun {
    r
}
fn first<B>(p: &mut (KernelRun, B)) -> &mut KernelRun {
    &mut p.0
}
fn second<A>(p: &mut (A, KernelRun)) -> &mut KernelRun {
    &mut p.1
}

/// [`rerun_while_stopped`] with this process's own stops as `driver::stopped` sees them.
/// One run of kernel `config` under `perf record -a -g`, folded (the profile's clock is the
/// `cpu-clock` software event at 499 Hz, see [`Recorder::perf`]).
fn profiled_run(
    rig: &mut Rig,
    cfg: &KernelConfig,
    config: KernelSched,
    data: &Path,
    stop: &AtomicBool,
) -> Result<Option<(crate::driver::profile::Folded, KernelRun)>, ExperimentError> {
    let rec = Recorder::perf(data, stop)?;
    let run = rig.fio_run(cfg, config, cfg.rounds, stop);
    rec.finish(stop)?;
    let run = run?.ok_or_else(|| failed("stopped"))?;
    // perf script over a whole-system profile takes seconds: polled, killed on a stop.
    let mut script = Command::new("perf");
    script
        .args(["script", "-F", "comm,pid,tid,cpu,time,event,ip,sym", "-i"])
        .arg(data)
        .stderr(Stdio::null());
    let script = output_until(&mut script, Duration::from_secs(600), stop)?
        .ok_or_else(|| failed("stopped"))?;
    let mut folded = profile::fold_perf_script_until(&String::from_utf8_lossy(&script), stop)?
        .ok_or_else(|| failed("stopped"))?;
    folded.frequency = 499;
    Ok(Some((folded, run)))
}

/// Waits per site per I/O of kernel bfq at `cfg`'s point, from a run recorded with the contention
/// tracepoints; `None` when stopped or failed (the failure is in `failures`).
fn recorded_waits(
    rig: &mut Rig,
    cfg: &KernelConfig,
    stop: &AtomicBool,
    stop_notes: &mut Vec<String>,
    failures: &mut Vec<String>,
    interrupted: &mut bool,
    label: &str,
) -> Option<[f64; 5]> {
    let recorded = rig.set_scheduler(KernelSched::Bfq).and_then(|()| {
        unstopped(label, stop, stop_notes, first, || {
            let Some(rec) = Recorder::bpftrace(stop)? else { return Ok(None) };
            let run = rig.fio_run(cfg, KernelSched::Bfq, cfg.rounds, stop);
            let text = rec.finish(stop);
            Ok(run?.map(|r| (r, text)))
        })
    });
    match recorded {
        Ok(Some((r, text))) => match text.and_then(|t| contention::parse_bpftrace(&t)) {
            Ok(sites_seen) => {
                let ios =
                    r.ios as f64 * (r.runtime_s + cfg.ramp.as_secs_f64()) / r.runtime_s.max(1e-9);
                match contention::ContentionSummary::of(&sites_seen) {
                    Ok(summary) => return Some(sites::waits_per_io(&summary, ios)),
                    Err(e) => failures.push(format!("{label}: the recorded run's contention: {e}")),
                }
            }
            Err(e) => failures.push(format!("{label}: the recorded run's contention: {e}")),
        },
        Ok(None) => *interrupted = true,
        Err(e) => failures.push(format!("{label}: recorded run of kernel bfq: {e}")),
    }
    None
}

/// The longest profile of the holds at one job and iodepth 1.
const UNCONTENDED_PROFILE_MAX: Duration = Duration::from_secs(20);

/// The kernel's holds per site where waits are negligible: bfq profiled and recorded at one job
/// and iodepth 1 (`sites.rs`, "Hold per site"); `None` when stopped or failed. The profile runs
/// as long as a point's rounds together ([`UNCONTENDED_PROFILE_MAX`] at most): at iodepth 1 a
/// site's locked sections are a few percent of the CPU, and one run's profile put 3 to 21
/// samples in each site (`notes/results/2026-12-04-softirq.md`). It is measured once per
/// invocation and kept for every point.
fn uncontended_holds(
    rig: &mut Rig,
    cfg: &KernelConfig,
    tmp: &Path,
    stop: &AtomicBool,
    stop_notes: &mut Vec<String>,
    failures: &mut Vec<String>,
    interrupted: &mut bool,
) -> Option<sites::Uncontended> {
    let point = Point { threads: 1, iodepth: 1, ioengine: cfg.ioengine };
    let profile_for =
        (cfg.duration * cfg.rounds.max(1) as u32).min(UNCONTENDED_PROFILE_MAX).max(cfg.duration);
    let quiet = KernelConfig { duration: profile_for, ..cfg.at(point) };
    let label = "sites: kernel bfq at 1 job × iodepth 1 (holds)";
    let data = tmp.join("bfq-uncontended.data");
    let profiled = rig.set_scheduler(KernelSched::Bfq).and_then(|()| {
        unstopped(label, stop, stop_notes, second, || {
            profiled_run(rig, &quiet, KernelSched::Bfq, &data, stop)
        })
    });
    let (folded, run) = match profiled {
        Ok(Some(p)) => p,
        Ok(None) => {
            *interrupted = true;
            return None;
        }
        Err(e) => {
            failures.push(format!("{label}: {e}"));
            return None;
        }
    };
    let samples = match sites::SiteSamples::of(&folded) {
        Ok(s) => s,
        Err(e) => {
            failures.push(format!("{label}: {e}"));
            return None;
        }
    };
    let cpu_per_io_us = run.experiment_cpu_per_io_us.or(run.cpu_per_io_us).unwrap_or(0.0);
    let waits = if cfg.contention {
        // The waits at one job are near nothing: the point's own duration is enough for them.
        Some(recorded_waits(
            rig,
            &cfg.at(point),
            stop,
            stop_notes,
            failures,
            interrupted,
            "sites: kernel bfq at 1 job × iodepth 1 (contention recorded)",
        )?)
    } else {
        None
    };
    Some(sites::Uncontended { point: point.label(), samples, cpu_per_io_us, waits })
}

fn unstopped<T>(
    label: &str,
    stop: &AtomicBool,
    notes: &mut Vec<String>,
    run_of: impl Fn(&mut T) -> &mut KernelRun,
    attempt: impl FnMut() -> Result<Option<T>, ExperimentError>,
) -> Result<Option<T>, ExperimentError> {
    crate::driver::stopped::watch();
    rerun_while_stopped(
        label,
        stop,
        notes,
        &crate::driver::stopped::stopped_between,
        run_of,
        attempt,
    )
}

fn spread_of<T>(runs: &[T], f: impl Fn(&T) -> Option<f64>) -> Option<Spread> {
    let v: Vec<f64> = runs.iter().filter_map(f).collect();
    (!v.is_empty()).then(|| Spread::of(v))
}

/// A configuration's row from its plain and recorded runs (`ramp`: the recorder's extra time per run).
pub fn kernel_row(
    config: KernelSched,
    runs: Vec<KernelRun>,
    recorded: Vec<KernelRun>,
    ramp: Duration,
) -> KernelRow {
    let per_io = |r: &KernelRun, sched: bool| {
        r.contention.as_ref().filter(|_| r.ios > 0 && r.runtime_s > 0.0).map(|c| {
            let n = if sched { c.scheduler_lock.contentions } else { c.other_locks.contentions };
            // The recorder covers the whole run, ramp included; fio's I/Os only the measured
            // part: its I/Os are scaled to the whole at the measured rate.
            let ios_whole = r.ios as f64 * (r.runtime_s + ramp.as_secs_f64()) / r.runtime_s;
            n as f64 / ios_whole
        })
    };
    let kiops = Spread::of(runs.iter().map(|r| r.iops / 1e3).collect());
    let rec_kiops = median(&recorded.iter().map(|r| r.iops / 1e3).collect::<Vec<_>>());
    KernelRow {
        config,
        kiops: kiops.clone(),
        cpu_per_io_us: spread_of(&runs, |r| r.cpu_per_io_us).unwrap_or_default(),
        experiment_cpu_per_io_us: spread_of(&runs, |r| r.experiment_cpu_per_io_us),
        sched_contentions_per_io: spread_of(&recorded, |r| per_io(r, true)),
        other_contentions_per_io: spread_of(&recorded, |r| per_io(r, false)),
        sched_wait_avg_ns: (!recorded.is_empty()).then(|| {
            median(
                &recorded
                    .iter()
                    .filter_map(|r| r.contention.as_ref())
                    .map(|c| c.scheduler_lock.wait_avg_ns())
                    .collect::<Vec<_>>(),
            )
        }),
        sched_wait_max_ns: recorded
            .iter()
            .filter_map(|r| r.contention.as_ref())
            .map(|c| c.scheduler_lock.wait_max_ns)
            .max(),
        recording_cost_pct: (!recorded.is_empty() && kiops.median > 0.0)
            .then(|| 100.0 * (1.0 - rec_kiops / kiops.median)),
        runs,
        recorded,
        profile: None,
        profile_run: None,
        flamegraph: None,
    }
}

/// Writes a kernel profile's flamegraph (`svg`, drawn with `title` and `subtitle`) and its folded
/// stacks (`folded_path`).
fn write_flamegraph_files(
    folded: &crate::driver::profile::Folded,
    title: &str,
    subtitle: &str,
    svg: &Path,
    folded_path: &Path,
) -> Result<(), ExperimentError> {
    let mut drawn = Vec::new();
    crate::driver::profile::write_flamegraph(folded, title, subtitle, &mut drawn)?;
    let write = |path: &Path, bytes: &[u8]| OutputFile::check(path)?.write(bytes);
    write(svg, &drawn).map_err(ExperimentError::output_failed)?;
    write(folded_path, folded.to_text().as_bytes()).map_err(ExperimentError::output_failed)?;
    Ok(())
}

/// Runs the experiment (see the module documentation).
pub fn run(
    cfg: &KernelConfig,
    stop: &AtomicBool,
    observer: &mut dyn Observer,
) -> Result<KernelReport, ExperimentError> {
    cfg.validate()?;
    let system::Preflight { cgroup_io, device: block_device } =
        system::preflight(cfg.groups > 0, cfg.contention, cfg.device.as_deref())?;
    // A --device is held for the whole run: a second run on it is refused (one line), and what
    // a dead run left on it is put back before this one records the setting it finds.
    let device_lock = block_device.as_ref().map(system::lock_device).transpose()?;
    let held: Vec<system::DevNum> = device_lock.iter().map(|l| l.device).collect();
    let (cleaned, problems) = system::cleanup_stale(&held);
    // The cgroup names this run will make: someone else's there is refused before the work.
    if let Some(io) = &cgroup_io {
        system::cgroup_names_free(io)?;
    }
    let mut warnings: Vec<String> = Vec::new();
    for p in problems {
        warnings.push(format!("clean-up of an earlier run: {p}"));
    }
    let mut env = Environment {
        kernel_release: std::fs::read_to_string("/proc/sys/kernel/osrelease")
            .unwrap_or_default()
            .trim()
            .to_string(),
        fio: tool_version("fio", "--version"),
        perf: tool_version("perf", "--version"),
        bpftrace: cfg.contention.then(|| tool_version("bpftrace", "--version")),
        cgroup: cgroup_io.as_ref().map(|c| c.version().to_string()),
        cleaned_up_before: cleaned,
        ..Environment::default()
    };
    let kernel_configs = cfg.kernel_configs();
    let model_entries = cfg.model_entries();
    let per_round = kernel_configs.len() * if cfg.contention { 2 } else { 1 } + model_entries.len();
    // The profiles, and with the model: the sites' recorded run, the holds at one job and
    // iodepth 1 and the model's own holds.
    let extra = if cfg.profile {
        kernel_configs.len() + 2 + if cfg.model { 2 + usize::from(cfg.contention) } else { 0 }
    } else {
        0
    } + usize::from(cfg.model && cfg.model_outside == ModelOutside::Kernel);
    let steps = (per_round * cfg.rounds + extra) * cfg.points.len();
    let run_s = (cfg.duration + cfg.ramp).as_secs_f64() + 0.5;
    let recording_s =
        if cfg.contention { kernel_configs.len() as f64 * cfg.rounds as f64 * 2.0 } else { 0.0 };
    observer.event(Event::Planned {
        steps,
        estimated_s: steps as f64 * run_s + recording_s * cfg.points.len() as f64,
    });

    // Set-up: every change goes through the ledger, which puts it all back when dropped.
    let mut ledger = system::Ledger::create()?;
    let setup =
        (|| -> Result<(PathBuf, PathBuf, u64, Option<system::Cgroups>), ExperimentError> {
            let (device, num, loop_backing, device_bytes) = match &block_device {
                Some(d) => {
                    env.device = d.given.display().to_string();
                    // fio opens the node in /dev of the device number checked, not the path given.
                    (d.node.clone(), d.num, None, d.bytes)
                }
                None => {
                    let dev = system::make_loop_device(&mut ledger, cfg.size_bytes)?;
                    env.device = format!(
                        "{} over a sparse {} MiB file in {} ({})",
                        dev.device.display(),
                        cfg.size_bytes >> 20,
                        system::TMPFS_DIR,
                        if dev.direct_io {
                            "direct I/O"
                        } else {
                            "buffered: the kernel refused direct I/O"
                        }
                    );
                    env.loop_device = true;
                    env.direct_io = Some(dev.direct_io);
                    (dev.device, dev.num, Some(dev.backing_id), dev.size_bytes)
                }
            };
            let queue = num.queue();
            // The device's scheduler and BFQ's knobs are recorded once, before the first switch.
            system::record_queue_state(&mut ledger, num, loop_backing)?;
            let cgroups = match &cgroup_io {
                Some(io) => Some(system::make_cgroups(&mut ledger, io, cfg.groups, &cfg.weights)?),
                None => None,
            };
            Ok((device, queue, device_bytes, cgroups))
        })();
    let mut rig = match setup {
        Ok((device, queue, device_bytes, cgroups)) => {
            Rig { ledger, device, queue, device_bytes, cgroups, holds_at_one_job: None }
        }
        Err(e) => {
            drop(ledger);
            return Err(system::setup_failed(e));
        }
    };
    let mut failures: Vec<String> = Vec::new();
    let mut output_failures: Vec<String> = Vec::new();
    let mut interrupted = false;
    let mut done = 0usize;
    let mut results: Vec<PointResult> = Vec::new();
    for &point in &cfg.points {
        if interrupted || stop.load(Ordering::Relaxed) {
            interrupted = true;
            break;
        }
        let pcfg = cfg.at(point);
        // The main point's files are named as before; the others' carry their point.
        let tag = cfg.point_tag(point);
        let failures_into = Failed { runs: &mut failures, outputs: &mut output_failures };
        let (rig, env) = (&mut rig, &env);
        let (warnings, interrupted) = (&mut warnings, &mut interrupted);
        let point = run_point(
            rig,
            &pcfg,
            env,
            stop,
            observer,
            &mut done,
            warnings,
            failures_into,
            interrupted,
            &tag,
        );
        results.push(point);
    }
    observer.event(Event::Finished);
    // Put everything back now (not at the end of the caller's printing).
    let problems = rig.ledger.undo_all();
    for p in problems {
        failures.push(format!("clean-up: {p}"));
    }
    // Released only once the device's setting is put back.
    drop(device_lock);
    let cpus = workload::allowed_cpus().len();
    let model_inputs: Vec<(Point, Vec<fidelity::Calibrated>)> = results
        .iter()
        .map(|r| {
            (
                r.point,
                fidelity::model_inputs(
                    r,
                    cfg.model_outside == ModelOutside::Kernel,
                    cfg.model_elevator == ModelOutside::Kernel,
                    &env.kernel_release,
                ),
            )
        })
        .collect();
    let fidelity = results
        .iter()
        .zip(&model_inputs)
        .flat_map(|(r, (_, inputs))| {
            fidelity::rows(r, cfg.groups, &env.kernel_release, cfg.ramp.as_secs_f64(), inputs, cpus)
        })
        .collect();
    for w in &warnings {
        observer.event(Event::Warning(w));
    }
    // Said on stderr (the text lists them too): a non-zero exit says why.
    for f in failures.iter().chain(&output_failures) {
        observer.event(Event::Failure(f));
    }
    let mut results = results.into_iter();
    let main = results.next();
    let (model_outside_ns, model_elevator_ns, kernel, model, side_by_side, elevator, main_sites) =
        match main {
            Some(m) => (
                m.model_outside_ns,
                m.model_elevator_ns,
                m.kernel,
                m.model,
                m.side_by_side,
                m.elevator,
                m.sites,
            ),
            None => (0, 0, Vec::new(), Vec::new(), Vec::new(), None, None),
        };
    Ok(KernelReport {
        provenance: Provenance::collect(),
        environment: env,
        config: cfg.clone(),
        model_outside_ns,
        model_elevator_ns,
        kernel,
        model,
        side_by_side,
        elevator,
        sites: main_sites,
        points: results.collect(),
        fidelity,
        model_inputs,
        warnings,
        interrupted,
        failures,
        output_failures,
    })
}

/// Where a point's failures go: its runs' (exit 4) and the files it writes itself (exit 3).
struct Failed<'a> {
    runs: &'a mut Vec<String>,
    outputs: &'a mut Vec<String>,
}

/// Runs every kernel configuration and model row of one point, in rounds, then their profiles.
#[allow(clippy::too_many_arguments)]
fn run_point(
    rig: &mut Rig,
    cfg: &KernelConfig,
    env: &Environment,
    stop: &AtomicBool,
    observer: &mut dyn Observer,
    done: &mut usize,
    warnings: &mut Vec<String>,
    failures_into: Failed,
    interrupted: &mut bool,
    tag: &str,
) -> PointResult {
    let Failed { runs: failures, outputs: output_failures } = failures_into;
    // Runs a job-control stop disturbed: run again, or kept flagged (said in the warnings).
    let mut stop_notes: Vec<String> = Vec::new();
    let kernel_configs = cfg.kernel_configs();
    let model_entries = cfg.model_entries();

    // Calibration: the kernel's none, its CPU time per I/O as the model's outside work.
    let mut model_outside_ns = match cfg.model_outside {
        ModelOutside::Fixed(ns) => ns,
        ModelOutside::Kernel => 0,
    };
    if cfg.model && cfg.model_outside == ModelOutside::Kernel {
        observer.event(Event::Step { done: *done, label: "calibration: kernel none" });
        *done += 1;
        let calibrated = rig.set_scheduler(KernelSched::None).and_then(|()| {
            unstopped("calibration: kernel none", stop, &mut stop_notes, itself, || {
                rig.fio_run(cfg, KernelSched::None, 0, stop)
            })
        });
        match calibrated {
            Ok(Some(r)) => {
                if let Some(w) = kernel_load_warning(&r) {
                    warnings.push(format!("{}: calibration: {w}", cfg.point_label()));
                }
                match (r.experiment_cpu_per_io_us, r.cpu_per_io_us) {
                    (Some(us), _) => model_outside_ns = (us * 1e3).round() as u64,
                    (None, Some(us)) => {
                        warnings.push(format!("{}: no accounting cgroup: the model's outside work is the CPU per I/O of all CPUs, other processes' included", cfg.point_label()));
                        model_outside_ns = (us * 1e3).round() as u64
                    }
                    (None, None) => warnings.push("the calibration run measured no CPU time: the model runs with no outside work".into()),
                }
            }
            Ok(None) => *interrupted = true,
            Err(e) => failures.push(format!("calibration: {e}")),
        }
    }

    // Profiles of the kernel configurations, before the rounds: they calibrate the elevator cost
    // the model's scheduler rows pay (judged afterwards on throughput and contention, never on
    // this figure), and give each row its shares and flamegraph.
    let mut profiles: Vec<(KernelSched, profile::KernelShares, KernelRun, Option<PathBuf>)> =
        Vec::new();
    let mut bfq_site_samples: Option<sites::SiteSamples> = None;
    let tmp = if cfg.profile && !*interrupted {
        tempfile::tempdir()
            .map_err(|e| failures.push(format!("profiles: cannot make a temporary directory: {e}")))
            .ok()
    } else {
        None
    };
    if let Some(tmp) = &tmp {
        for &config in &kernel_configs {
            if stop.load(Ordering::Relaxed) {
                *interrupted = true;
                break;
            }
            let label = format!("profile: kernel {}", config.name());
            observer.event(Event::Step { done: *done, label: &label });
            *done += 1;
            let data = tmp.path().join(format!("{}.data", config.name()));
            // Run again, recorder and all, while a job-control stop disturbed it.
            let profiled = rig.set_scheduler(config).and_then(|()| {
                unstopped(&label, stop, &mut stop_notes, second, || {
                    profiled_run(rig, cfg, config, &data, stop)
                })
                .and_then(|o| o.ok_or_else(|| failed("stopped")))
            });
            match profiled {
                Ok((folded, run)) => {
                    let mut flamegraph = None;
                    if let Some(dir) = &cfg.flamegraph_dir {
                        // A missing directory is made now (it was checked before any work).
                        let _ = std::fs::create_dir_all(dir);
                        let path = dir.join(format!("kernel-{}{tag}.svg", config.name()));
                        let name = config.name();
                        let (rw, bytes) = (cfg.rw.name(), cfg.bs_sectors * 512);
                        let (jobs, depth) = (cfg.threads, cfg.iodepth);
                        let title =
                            format!("kernel {name}: {jobs} jobs, {rw} {bytes}, iodepth {depth}");
                        let folded_path = dir.join(format!("kernel-{name}{tag}.folded"));
                        let device = &env.device;
                        match write_flamegraph_files(&folded, &title, device, &path, &folded_path) {
                            Ok(()) => flamegraph = Some(path),
                            Err(e) => output_failures.push(format!(
                                "flamegraph of kernel {} not written: {e}",
                                config.name()
                            )),
                        }
                    }
                    // A sum of its sample counts past u64::MAX: this profile failed (issue 43).
                    let counted = profile::KernelShares::of(&folded).and_then(|shares| {
                        Ok((
                            shares,
                            (config == KernelSched::Bfq)
                                .then(|| sites::SiteSamples::of(&folded))
                                .transpose()?,
                        ))
                    });
                    match counted {
                        Ok((shares, site_samples)) => {
                            if site_samples.is_some() {
                                bfq_site_samples = site_samples;
                            }
                            profiles.push((config, shares, run, flamegraph));
                        }
                        Err(e) => {
                            failures.push(format!("profile of kernel {}: {e}", config.name()))
                        }
                    }
                }
                Err(_) if stop.load(Ordering::Relaxed) => {
                    *interrupted = true;
                    break;
                }
                Err(e) => failures.push(format!("profile of kernel {}: {e}", config.name())),
            }
        }
    }
    // The elevator cost is calibrated from these runs: one beside other load is said so.
    if let Some((c, w)) =
        profiles.iter().find_map(|(c, _, run, _)| kernel_load_warning(run).map(|w| (c, w)))
    {
        warnings.push(format!(
            "{}: profile of kernel {} (the elevator cost is calibrated from it): {w}",
            cfg.point_label(),
            c.name()
        ));
    }
    let elevator = ElevatorCost::of(
        &profiles
            .iter()
            .map(|(c, shares, run, _)| Profiled { config: *c, shares, run })
            .collect::<Vec<_>>(),
    );
    let elevator_ns = |entry: &str| -> u64 {
        match cfg.model_elevator {
            _ if entry == "none" => 0,
            ModelOutside::Fixed(ns) => ns,
            ModelOutside::Kernel => {
                let cost = if entry == fidelity::MODEL_DEADLINE {
                    elevator.as_ref().and_then(|e| e.mq_deadline.as_ref())
                } else {
                    elevator.as_ref().and_then(|e| e.bfq.as_ref())
                };
                // Not estimable (below 0): no elevator cost to pad with.
                cost.and_then(|c| c.elevator_us).map_or(0, |us| (us * 1e3).round() as u64)
            }
        }
    };
    if cfg.model
        && cfg.model_elevator == ModelOutside::Kernel
        && elevator.as_ref().and_then(|e| e.bfq.as_ref()).is_none()
        && !*interrupted
    {
        warnings.push(format!("{}: no elevator cost measured (it needs the profiles of none and bfq): the model's scheduler rows pay none", cfg.point_label()));
    }
    // The sites (`sites.rs`): the kernel's hold at each and the gaps between them, from bfq's
    // profile less the waits of a recorded run, and the model's own holds; their difference is
    // what the model's rows pad each site with.
    let bfq_profile_run =
        profiles.iter().find(|(c, ..)| *c == KernelSched::Bfq).map(|(_, _, run, _)| run.clone());
    let site_calibration =
        match (bfq_site_samples.filter(|_| cfg.model && !*interrupted), bfq_profile_run) {
            (Some(samples), Some(run)) => {
                let cpu_per_io_us =
                    run.experiment_cpu_per_io_us.or(run.cpu_per_io_us).unwrap_or(0.0);
                let mut waits = None;
                if cfg.contention {
                    observer.event(Event::Step {
                        done: *done,
                        label: "sites: kernel bfq (lock contention recorded)",
                    });
                    *done += 1;
                    waits = recorded_waits(
                        rig,
                        cfg,
                        stop,
                        &mut stop_notes,
                        failures,
                        interrupted,
                        "sites",
                    );
                }
                // The holds: where waits are negligible, so that a recorder that lengthens waits does
                // not eat them (at this point itself when it is one job at iodepth 1).
                let here =
                    Point { threads: cfg.threads, iodepth: cfg.iodepth, ioengine: cfg.ioengine };
                let uncontended = match tmp.as_ref() {
                    Some(_)
                        if (here.threads > 1 || here.iodepth > 1)
                            && rig.holds_at_one_job.is_some() =>
                    {
                        observer.event(Event::Step {
                        done: *done,
                        label: "sites: kernel bfq at 1 job × iodepth 1 (holds, as measured before)",
                    });
                        *done += 1;
                        rig.holds_at_one_job.clone()
                    }
                    Some(tmp) if here.threads > 1 || here.iodepth > 1 => {
                        observer.event(Event::Step {
                            done: *done,
                            label: "sites: kernel bfq at 1 job × iodepth 1 (holds)",
                        });
                        *done += 1;
                        let holds = uncontended_holds(
                            rig,
                            cfg,
                            tmp.path(),
                            stop,
                            &mut stop_notes,
                            failures,
                            interrupted,
                        );
                        rig.holds_at_one_job.clone_from(&holds);
                        holds
                    }
                    _ => None,
                };
                observer.event(Event::Step { done: *done, label: "sites: the model's own holds" });
                *done += 1;
                let own_cfg = WorkloadConfig {
                    threads: 1,
                    lockstat: true,
                    lockstat_mode: schedlab_core::lockstat::Mode::Exact,
                    lockstat_toggle: None,
                    ..cfg.model_config(
                        fidelity::MODEL_BFQ,
                        0,
                        model_outside_ns,
                        elevator_ns(fidelity::MODEL_BFQ),
                        schedlab_core::SitePads::NONE,
                    )
                };
                let own = match workload::run_named(fidelity::MODEL_BFQ, &own_cfg, stop) {
                    Ok(r) => r
                        .locks
                        .iter()
                        .find(|l| l.name == "sched")
                        .map(|l| {
                            l.paths
                                .iter()
                                .filter(|p| p.acquisitions > 0)
                                .map(|p| {
                                    (
                                        p.path.name().to_string(),
                                        p.hold_ns as f64 / p.acquisitions as f64 / 1e3,
                                    )
                                })
                                .collect()
                        })
                        .unwrap_or_default(),
                    Err(e) => {
                        failures.push(format!("sites: the model's own holds: {e}"));
                        Vec::new()
                    }
                };
                (!*interrupted).then(|| {
                    sites::SiteCalibration::of(&samples, cpu_per_io_us, waits, uncontended, own)
                })
            }
            _ => None,
        };
    let pads = site_calibration.as_ref().map_or(schedlab_core::SitePads::NONE, |c| c.pads);

    let mut kernel_runs: Vec<(Vec<KernelRun>, Vec<KernelRun>)> =
        vec![(Vec::new(), Vec::new()); kernel_configs.len()];
    let mut model_runs: Vec<Vec<workload::RunResult>> = vec![Vec::new(); model_entries.len()];
    let mut model_rounds: Vec<Vec<usize>> = vec![Vec::new(); model_entries.len()];
    let mut noisy_model_runs: Vec<String> = Vec::new();
    // Steps of a round: every kernel configuration and model row, in an order rotated by the
    // round, so that no row always runs first or after the same neighbour.
    #[derive(Clone, Copy)]
    enum Item {
        Kernel(usize),
        Model(usize),
    }
    let items: Vec<Item> = (0..kernel_configs.len())
        .map(Item::Kernel)
        .chain((0..model_entries.len()).map(Item::Model))
        .collect();
    'rounds: for round in 0..cfg.rounds {
        for k in 0..items.len() {
            if *interrupted || stop.load(Ordering::Relaxed) {
                *interrupted = true;
                break 'rounds;
            }
            match items[(k + round) % items.len()] {
                Item::Kernel(i) => {
                    let sched = kernel_configs[i];
                    let label =
                        format!("round {}/{}: kernel {}", round + 1, cfg.rounds, sched.name());
                    observer.event(Event::Step { done: *done, label: &label });
                    *done += 1;
                    let plain = rig.set_scheduler(sched).and_then(|()| {
                        unstopped(&label, stop, &mut stop_notes, itself, || {
                            rig.fio_run(cfg, sched, round, stop)
                        })
                    });
                    match plain {
                        Ok(Some(r)) => kernel_runs[i].0.push(r),
                        Ok(None) => {
                            *interrupted = true;
                            break 'rounds;
                        }
                        Err(e) => {
                            failures.push(format!(
                                "kernel {} round {}: {e}",
                                sched.name(),
                                round + 1
                            ));
                            continue;
                        }
                    }
                    if cfg.contention {
                        let label = format!(
                            "round {}/{}: kernel {} (lock contention recorded)",
                            round + 1,
                            cfg.rounds,
                            sched.name()
                        );
                        observer.event(Event::Step { done: *done, label: &label });
                        *done += 1;
                        // Run again, recorder and all, while a job-control stop disturbed it.
                        let recorded = unstopped(&label, stop, &mut stop_notes, itself, || {
                            Recorder::bpftrace(stop).and_then(|rec| {
                                let Some(rec) = rec else { return Ok(None) };
                                let run = rig.fio_run(cfg, sched, round, stop);
                                let text = rec.finish(stop);
                                let run = run?;
                                Ok(match run {
                                    Some(mut r) => {
                                        r.contention = Some(contention::ContentionSummary::of(
                                            &contention::parse_bpftrace(&text?)?,
                                        )?);
                                        Some(r)
                                    }
                                    None => None,
                                })
                            })
                        });
                        match recorded {
                            Ok(Some(r)) => kernel_runs[i].1.push(r),
                            Ok(None) => {
                                *interrupted = true;
                                break 'rounds;
                            }
                            Err(_) if stop.load(Ordering::Relaxed) => {
                                *interrupted = true;
                                break 'rounds;
                            }
                            Err(e) => failures.push(format!(
                                "kernel {} round {} (recorded): {e}",
                                sched.name(),
                                round + 1
                            )),
                        }
                    }
                }
                Item::Model(i) => {
                    let (entry, groups) = model_entries[i];
                    let label = format!(
                        "round {}/{}: model {entry} ({groups} groups)",
                        round + 1,
                        cfg.rounds
                    );
                    observer.event(Event::Step { done: *done, label: &label });
                    *done += 1;
                    match workload::run_named(
                        entry,
                        &cfg.model_config(
                            entry,
                            groups,
                            model_outside_ns,
                            elevator_ns(entry),
                            pads,
                        ),
                        stop,
                    ) {
                        Ok(r) if r.interrupted => {
                            *interrupted = true;
                            break 'rounds;
                        }
                        Ok(r) => {
                            if let Some(w) = workload::fair_lock_warning_after(&r) {
                                noisy_model_runs.push(format!("{entry} round {}: {w}", round + 1));
                            }
                            model_runs[i].push(r);
                            model_rounds[i].push(round);
                        }
                        Err(e) => failures.push(format!("model {entry} round {}: {e}", round + 1)),
                    }
                }
            }
        }
    }

    if !stop_notes.is_empty() {
        warnings.push(format!(
            "{}: {} kernel run(s) were disturbed by a job-control stop (SIGTSTP/SIGSTOP) and run again (at most {STOPPED_RETRIES} times): {}",
            cfg.point_label(),
            stop_notes.len(),
            stop_notes.join("; ")
        ));
    }
    if let Some(first) = noisy_model_runs.first() {
        warnings.push(format!("{}: {} model run(s) had more runnable threads than CPUs under the fair lock; the first: {first}", cfg.point_label(), noisy_model_runs.len()));
    }
    let noisy_kernel_runs: Vec<String> = kernel_configs
        .iter()
        .zip(&kernel_runs)
        .flat_map(|(c, (plain, rec))| {
            plain.iter().chain(rec).filter_map(move |r| {
                kernel_load_warning(r)
                    .map(|w| format!("kernel {} round {}: {w}", c.name(), r.round + 1))
            })
        })
        .collect();
    if let Some(first) = noisy_kernel_runs.first() {
        warnings.push(format!(
            "{}: {} kernel run(s) shared the CPUs with other processes; the first: {first}",
            cfg.point_label(),
            noisy_kernel_runs.len()
        ));
    }
    let mut kernel: Vec<KernelRow> = kernel_configs
        .iter()
        .zip(kernel_runs)
        .map(|(&c, (runs, rec))| kernel_row(c, runs, rec, cfg.ramp))
        .collect();
    for (config, shares, run, flamegraph) in profiles {
        if let Some(row) = kernel.iter_mut().find(|r| r.config == config) {
            row.profile = Some(shares);
            row.profile_run = Some(run);
            row.flamegraph = flamegraph;
        }
    }
    let mut model: Vec<ModelRow> = model_entries
        .iter()
        .zip(model_runs.iter().zip(&model_rounds))
        .map(|(&(entry, groups), (runs, rounds))| {
            let sched =
                |r: &workload::RunResult| r.locks.iter().find(|l| l.name == "sched").cloned();
            // The lock counters cover the on windows of a toggled run: per request of those windows.
            let per_io = |r: &workload::RunResult| {
                let requests_on = r
                    .lockstat_toggle
                    .as_ref()
                    .map_or(r.kiops * 1e3 * r.measured_s, |t| t.kiops_on * 1e3 * t.on_s);
                sched(r).filter(|_| requests_on > 0.0).map(|l| l.contentions as f64 / requests_on)
            };
            let requests_on = |r: &workload::RunResult| {
                r.lockstat_toggle
                    .as_ref()
                    .map_or(r.kiops * 1e3 * r.measured_s, |t| t.kiops_on * 1e3 * t.on_s)
            };
            let acquisitions = |r: &workload::RunResult| {
                sched(r)
                    .filter(|_| requests_on(r) > 0.0)
                    .map(|l| l.acquisitions as f64 / requests_on(r))
            };
            let by_path: Vec<(String, f64, f64)> = {
                let mut names: Vec<&'static str> = Vec::new();
                for r in runs {
                    for p in sched(r).map(|l| l.paths).unwrap_or_default() {
                        if !names.contains(&p.path.name()) {
                            names.push(p.path.name());
                        }
                    }
                }
                names
                    .into_iter()
                    .map(|name| {
                        let of = |f: &dyn Fn(&schedlab_core::lockstat::PathSummary) -> u64| {
                            let v: Vec<f64> = runs
                                .iter()
                                .filter(|r| requests_on(r) > 0.0)
                                .map(|r| {
                                    sched(r)
                                        .and_then(|l| {
                                            l.paths.iter().find(|p| p.path.name() == name).map(f)
                                        })
                                        .unwrap_or(0) as f64
                                        / requests_on(r)
                                })
                                .collect();
                            median(&v)
                        };
                        (name.to_string(), of(&|p| p.acquisitions), of(&|p| p.contentions))
                    })
                    .collect()
            };
            ModelRow {
                entry,
                groups,
                kiops: Spread::of(runs.iter().map(|r| r.kiops).collect()),
                kiops_by_round: rounds.iter().copied().zip(runs.iter().map(|r| r.kiops)).collect(),
                sched_acquisitions_per_io: spread_of(runs, acquisitions).map(|s| s.median),
                sched_by_path: by_path,
                cpu_per_io_us: Spread::of(
                    runs.iter()
                        .filter_map(|r| {
                            r.cpu_busy_pct
                                .filter(|_| r.kiops > 0.0)
                                .map(|p| p / 100.0 * r.threads as f64 / (r.kiops * 1e3) * 1e6)
                        })
                        .collect(),
                ),
                sched_contentions_per_io: spread_of(runs, per_io),
                sched_wait_avg_ns: {
                    let v: Vec<f64> = runs
                        .iter()
                        .filter_map(sched)
                        .filter(|l| l.contentions > 0)
                        .map(|l| l.wait_ns.avg)
                        .collect();
                    (!v.is_empty()).then(|| median(&v))
                },
                consistent: runs.iter().all(|r| r.consistent),
                stats_share_of_scheduler_pct: None,
                scheduler_pct: None,
            }
        })
        .collect();

    // The models' profiles: one profiled run per statistics row.
    if cfg.profile && !*interrupted {
        // The statistics rows (the references and no-stats have no statistics to profile).
        for row in model.iter_mut().filter(|m| {
            m.entry != "none"
                && m.entry != fidelity::MODEL_DEADLINE
                && m.entry != "no-stats"
                && m.groups == 0
        }) {
            if stop.load(Ordering::Relaxed) {
                *interrupted = true;
                break;
            }
            let label = format!("profile: model {}", row.entry);
            observer.event(Event::Step { done: *done, label: &label });
            *done += 1;
            let mut mcfg =
                cfg.model_config(row.entry, 0, model_outside_ns, elevator_ns(row.entry), pads);
            mcfg.lockstat = false;
            mcfg.lockstat_toggle = None;
            match crate::driver::profile::profile_named(row.entry, &mcfg, stop, 999) {
                Ok(p) => {
                    use crate::driver::profile::Category;
                    row.stats_share_of_scheduler_pct = Some(p.shares.stats_of_work());
                    row.scheduler_pct = Some(
                        p.shares.share(Category::Core)
                            + p.shares.share(Category::Stats)
                            + p.shares.share(Category::Lock),
                    );
                }
                Err(e) => failures.push(format!("profile of model {}: {e}", row.entry)),
            }
        }
    }
    let side_by_side = side_by_side(&kernel, &model, cfg.groups);
    PointResult {
        point: cfg.points[0],
        model_outside_ns,
        model_elevator_ns: elevator_ns(fidelity::MODEL_BFQ),
        kernel,
        model,
        side_by_side,
        elevator,
        sites: site_calibration,
    }
}

/// The model's kernel profile for the running kernel: 6.18's sites (with the locked depth limit)
/// from the release that added that lock ([`fidelity::kernel_sites`]), else the seeds' 4.12.
pub fn running_kernel_profile() -> KernelProfile {
    let release = std::fs::read_to_string("/proc/sys/kernel/osrelease").unwrap_or_default();
    match fidelity::kernel_sites(release.trim()) {
        Some(5) => KernelProfile::Mainline,
        _ => KernelProfile::Seeds,
    }
}

/// The warning due after a kernel run during which other processes used more than
/// [`workload::OTHERS_DISTURB_CPUS`] CPUs (the model half's threshold).
pub fn kernel_load_warning(r: &KernelRun) -> Option<String> {
    let others = r.other_cpus?;
    (others > workload::OTHERS_DISTURB_CPUS).then(|| {
        format!("other processes used {others:.1} CPU(s) during this run: its IOPS and CPU per I/O measure them as well as the scheduler; run on a quiet machine")
    })
}

/// The figures a reader compares: the kernel's beside the model's matching ones.
pub fn side_by_side(kernel: &[KernelRow], model: &[ModelRow], groups: usize) -> Vec<SideBySide> {
    let k = |c: KernelSched| kernel.iter().find(|r| r.config == c && !r.runs.is_empty());
    let m = |e: &str, g: usize| {
        model.iter().find(|r| r.entry == e && r.groups == g && !r.kiops.runs.is_empty())
    };
    let ratio =
        |a: Option<f64>, b: Option<f64>| a.zip(b).filter(|(_, b)| *b > 0.0).map(|(a, b)| a / b);
    let kk = |c| k(c).map(|r| r.kiops.median);
    let mk = |e, g| m(e, g).map(|r| r.kiops.median);
    let kcpu = |c| k(c).map(|r| r.cpu_per_io_us.median).filter(|v| *v > 0.0);
    let mcpu = |e, g| m(e, g).map(|r| r.cpu_per_io_us.median).filter(|v| *v > 0.0);
    // This kernel's BFQ in the model, and mq-deadline's (or its stand-in).
    const B: &str = fidelity::MODEL_BFQ;
    let d = if m(fidelity::MODEL_DEADLINE, 0).is_some() {
        fidelity::MODEL_DEADLINE
    } else {
        fidelity::MODEL_DEADLINE_STAND_IN
    };
    let mut v = vec![
        SideBySide {
            what: format!("bfq ÷ none (model: {B} ÷ none), IOPS"),
            kernel: ratio(kk(KernelSched::Bfq), kk(KernelSched::None)),
            model: ratio(mk(B, 0), mk("none", 0)),
            unit: "×",
        },
        SideBySide {
            what: format!("bfq ÷ mq-deadline (model: {B} ÷ {d}), IOPS"),
            kernel: ratio(kk(KernelSched::Bfq), kk(KernelSched::MqDeadline)),
            model: ratio(mk(B, 0), mk(d, 0)),
            unit: "×",
        },
    ];
    if groups > 0 {
        v.push(SideBySide {
            what: format!(
                "bfq with {groups} groups ÷ bfq (model: {B} at {groups} groups ÷ at 0), IOPS"
            ),
            kernel: ratio(kk(KernelSched::BfqGroups), kk(KernelSched::Bfq)),
            model: ratio(mk(B, groups), mk(B, 0)),
            unit: "×",
        });
    }
    v.push(SideBySide {
        what: format!("extra CPU per I/O of bfq over none, all CPUs' time (model: {B} over none)"),
        kernel: kcpu(KernelSched::Bfq).zip(kcpu(KernelSched::None)).map(|(a, b)| a - b),
        model: mcpu(B, 0).zip(mcpu("none", 0)).map(|(a, b)| a - b),
        unit: "µs",
    });
    // The scheduler's CPU time per I/O: its share of the profile times the CPU per I/O.
    v.push(SideBySide {
        what: format!(
            "the scheduler's CPU per I/O (profile share × CPU per I/O), bfq (model: {B})"
        ),
        // Shares are of the experiment's samples: × the experiment's CPU per I/O where measured.
        kernel: k(KernelSched::Bfq)
            .and_then(|r| {
                r.profile.as_ref().map(|p| {
                    p.bfq_pct / 100.0
                        * r.experiment_cpu_per_io_us
                            .as_ref()
                            .map_or(r.cpu_per_io_us.median, |s| s.median)
                })
            })
            .filter(|v| *v > 0.0),
        model: m(B, 0)
            .and_then(|r| r.scheduler_pct.map(|p| p / 100.0 * r.cpu_per_io_us.median))
            .filter(|v| *v > 0.0),
        unit: "µs",
    });
    v.push(SideBySide {
        what: format!("scheduler lock: contended acquisitions per I/O, bfq (model: {B})"),
        kernel: k(KernelSched::Bfq)
            .and_then(|r| r.sched_contentions_per_io.as_ref())
            .map(|s| s.median),
        model: m(B, 0).and_then(|r| r.sched_contentions_per_io.as_ref()).map(|s| s.median),
        unit: "per I/O",
    });
    v.push(SideBySide {
        what: format!("scheduler lock: mean contended wait, bfq (model: {B})"),
        kernel: k(KernelSched::Bfq).and_then(|r| r.sched_wait_avg_ns),
        model: m(B, 0).and_then(|r| r.sched_wait_avg_ns),
        unit: "ns",
    });
    // The kernel's group statistics' share, beside the model's BFQ and its debug-off build.
    let kernel_stats_share = k(KernelSched::Bfq)
        .and_then(|r| r.profile.as_ref())
        .and_then(|p| p.stats_share_of_scheduler_pct);
    for entry in [B, "debug-off"] {
        v.push(SideBySide {
            what: format!("group statistics' share of the scheduler's work, bfq (model: {entry})"),
            kernel: kernel_stats_share,
            model: m(entry, 0).and_then(|r| r.stats_share_of_scheduler_pct),
            unit: "%",
        });
    }
    v
}

/// Puts back what dead runs left (`schedlab kernel --cleanup`): one line per thing put back, and
/// the problems.
pub fn cleanup() -> Result<Vec<String>, ExperimentError> {
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } != 0 {
        return Err(ExperimentError::bad_input("schedlab kernel --cleanup needs root"));
    }
    let (done, problems) = system::cleanup_stale(&[]);
    if let Some(p) = problems.first() {
        return Err(ExperimentError::run_failed(format!(
            "clean-up: {p} ({} problem(s))",
            problems.len()
        )));
    }
    Ok(done)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A refusal of the set-up (someone else's cgroup or device) is bad input as it is; a
    /// failure is said as the set-up's and fails the run (the kinds were a message prefix).
    #[test]
    fn a_setup_refusal_stays_bad_input_and_a_failure_is_the_setups() {
        let refused = ExperimentError::bad_input("cgroup x already exists (owner uid 7)");
        assert_eq!(system::setup_failed(refused.clone()), refused);
        let e = system::setup_failed(failed("losetup -f: no free loop device"));
        assert_eq!(e.kind, crate::error::ErrorKind::RunFailed);
        assert_eq!(e.message, "set-up failed: losetup -f: no free loop device");
    }

    fn run_with_others(others: Option<f64>) -> KernelRun {
        KernelRun {
            round: 0,
            iops: 1e5,
            ios: 100_000,
            runtime_s: 1.0,
            cpu_per_io_us: Some(9.0),
            fio_cpu_per_io_us: None,
            experiment_cpu_per_io_us: Some(6.0),
            other_cpus: others,
            contention: None,
            stopped_s: None,
            reruns_stopped: 0,
        }
    }

    /// Runs made up for `rerun_while_stopped`: each attempt gives the next of `fio_stops` as
    /// what fio's watch saw, and `own` says whether this process was stopped in every attempt.
    /// No clock is read for a verdict: the stops are given.
    type Rerun = (Result<Option<KernelRun>, ExperimentError>, usize, Vec<String>);

    fn rerun(fio_stops: &[Option<f64>], own: Option<f64>, stop: bool) -> Rerun {
        let flag = AtomicBool::new(stop);
        let mut notes = Vec::new();
        let mut attempts = 0;
        let own_stop = move |_: Instant, _: Instant| own.map(Duration::from_secs_f64);
        let r =
            rerun_while_stopped("kernel bfq round 1", &flag, &mut notes, &own_stop, itself, || {
                let fio = fio_stops[attempts.min(fio_stops.len() - 1)];
                attempts += 1;
                Ok(Some(KernelRun {
                    round: attempts,
                    stopped_s: fio,
                    ..run_with_others(Some(0.0))
                }))
            });
        (r, attempts, notes)
    }

    #[test]
    fn a_kernel_run_stopped_by_job_control_is_run_again_and_a_clean_one_is_not() {
        // Not stopped: one run, nothing said.
        let (r, attempts, notes) = rerun(&[None], None, false);
        let r = r.unwrap().unwrap();
        assert_eq!((attempts, r.stopped_s, r.reruns_stopped), (1, None, 0));
        assert!(notes.is_empty(), "{notes:?}");
        // fio seen stopped twice, then clean: the third run is kept, its re-runs counted and said.
        let (r, attempts, notes) = rerun(&[Some(2.0), Some(1.5), None], None, false);
        let r = r.unwrap().unwrap();
        assert_eq!((attempts, r.round, r.stopped_s, r.reruns_stopped), (3, 3, None, 2));
        assert!(
            notes.len() == 1
                && notes[0].contains("kernel bfq round 1")
                && notes[0].contains("run again 2 time"),
            "{notes:?}"
        );
        // Stopped every time (this process, fio, or both): kept after the bound, flagged.
        for (fio, own, want) in
            [(None, Some(2.0), 2.0), (Some(3.0), None, 3.0), (Some(1.0), Some(2.5), 2.5)]
        {
            let (r, attempts, notes) = rerun(&[fio], own, false);
            let r = r.unwrap().unwrap();
            assert_eq!(attempts as u32, STOPPED_RETRIES + 1);
            assert_eq!((r.stopped_s, r.reruns_stopped), (Some(want), STOPPED_RETRIES));
            assert!(notes.len() == 1 && notes[0].contains("retries exhausted"), "{notes:?}");
        }
        // A stop of the experiment (the flag): no re-run, the stopped run kept flagged.
        let (r, attempts, _) = rerun(&[Some(2.0)], None, true);
        assert_eq!((attempts, r.unwrap().unwrap().stopped_s), (1, Some(2.0)));
    }

    #[test]
    fn a_kernel_run_that_failed_while_stopped_is_run_again_and_other_failures_are_not() {
        let flag = AtomicBool::new(false);
        let mut notes = Vec::new();
        let mut attempts = 0;
        // Failed while this process was stopped (a bound passed in the stop), then fine.
        let stopped_once = std::cell::Cell::new(true);
        let own_stop =
            |_: Instant, _: Instant| stopped_once.replace(false).then_some(Duration::from_secs(40));
        let r = rerun_while_stopped("calibration", &flag, &mut notes, &own_stop, itself, || {
            attempts += 1;
            let slow = "the recorder did not stop within 30 s of SIGINT";
            if attempts == 1 {
                Err(failed(slow))
            } else {
                Ok(Some(run_with_others(None)))
            }
        });
        assert_eq!((attempts, r.unwrap().unwrap().reruns_stopped), (2, 1));
        assert!(notes[0].contains("failed while this process was stopped"), "{notes:?}");
        // A failure with no stop is the run's failure, at once.
        let mut attempts = 0;
        let r = rerun_while_stopped(
            "calibration",
            &flag,
            &mut Vec::new(),
            &|_, _| None,
            itself,
            || {
                attempts += 1;
                Err::<Option<KernelRun>, _>(failed("fio failed"))
            },
        );
        assert_eq!((attempts, r.unwrap_err()), (1, failed("fio failed")));
        // A stop of the experiment mid-run: `None` passed on, no re-run.
        let r = rerun_while_stopped(
            "calibration",
            &flag,
            &mut Vec::new(),
            &|_, _| Some(Duration::from_secs(1)),
            itself,
            || Ok(None),
        );
        assert!(matches!(r, Ok(None)));
    }

    /// The injection's model row and the fidelity table's are one entry: the kernel's curve and
    /// its fidelity are judged against the same model of today's BFQ.
    #[test]
    fn the_injection_and_the_fidelity_table_model_the_same_bfq() {
        assert_eq!(inject::MODEL_ENTRY, fidelity::MODEL_BFQ);
        assert!(
            schedlab_variants::info(inject::MODEL_ENTRY).is_some(),
            "{} is not a registered variant",
            inject::MODEL_ENTRY
        );
    }

    #[test]
    fn kernel_runs_beside_other_load_are_flagged_as_the_models_are() {
        let w = kernel_load_warning(&run_with_others(Some(1.2)))
            .expect("1.2 CPUs of other load is flagged");
        assert!(w.contains("1.2 CPU"), "{w}");
        assert_eq!(
            kernel_load_warning(&run_with_others(Some(workload::OTHERS_DISTURB_CPUS * 0.5))),
            None
        );
        // Unmeasured (no accounting cgroup): nothing to say.
        assert_eq!(kernel_load_warning(&run_with_others(None)), None);
    }

    fn config(groups: usize, weights: Vec<u64>) -> KernelConfig {
        KernelConfig {
            threads: 2,
            rw: Rw::RandRead,
            bs_sectors: 8,
            iodepth: 32,
            ioengine: "io_uring",
            duration: Duration::from_secs(1),
            ramp: Duration::ZERO,
            rounds: 1,
            groups,
            weights,
            size_bytes: 64 << 20,
            device: None,
            contention: false,
            profile: false,
            flamegraph_dir: None,
            model: false,
            model_lock: LockKind::FairSpin,
            model_outside: ModelOutside::Fixed(0),
            model_elevator: ModelOutside::Kernel,
            model_kernel: KernelProfile::Mainline,
            model_completion: CompletionMode::Context,
            points: Point::auto(2, 32, "io_uring"),
        }
    }

    #[test]
    fn weights_must_match_the_groups() {
        assert!(config(3, vec![100, 200, 300]).validate().is_ok());
        for (groups, weights) in [(4, vec![100, 200, 300]), (2, vec![100, 200, 300])] {
            let e = config(groups, weights).validate().unwrap_err().to_string();
            assert!(e.contains("weight(s) for") && e.contains("`...`"), "{e}");
        }
        // No groups: the weights are the model's default and unused.
        assert!(config(0, vec![100, 200, 300]).validate().is_ok());
    }

    /// A report of the real type, serialised: `--inject --model-from` reads its points back.
    fn report_with_sites(main_pads: schedlab_core::SitePads) -> String {
        let calibration = |pads| sites::SiteCalibration {
            cpu_per_io_us: 9.0,
            samples: 100,
            sites: Vec::new(),
            gaps_us: [0.1, 0.2, 0.3],
            model_own_hold_us: Vec::new(),
            pads,
            holds_at: "this point".into(),
            basis: "test".into(),
        };
        let other = |threads, sites| PointResult {
            point: Point { threads, iodepth: 32, ioengine: "io_uring" },
            model_outside_ns: 4000 + threads as u64,
            model_elevator_ns: 300,
            kernel: Vec::new(),
            model: Vec::new(),
            side_by_side: Vec::new(),
            elevator: None,
            sites,
        };
        let report = KernelReport {
            provenance: Provenance::collect(),
            environment: Environment::default(),
            config: config(4, vec![100, 100, 100, 100]),
            model_outside_ns: 5000,
            model_elevator_ns: 700,
            kernel: Vec::new(),
            model: Vec::new(),
            side_by_side: Vec::new(),
            elevator: None,
            sites: Some(calibration(main_pads)),
            points: vec![
                other(1, None),
                other(
                    3,
                    Some(calibration(schedlab_core::SitePads { hold_ns: [9; 5], gap_ns: [8; 3] })),
                ),
            ],
            fidelity: Vec::new(),
            model_inputs: Vec::new(),
            warnings: Vec::new(),
            interrupted: false,
            failures: Vec::new(),
            output_failures: Vec::new(),
        };
        serde_json::to_string(&report).unwrap()
    }

    #[test]
    fn inject_takes_the_judged_models_inputs_from_a_kernel_report() {
        let pads =
            schedlab_core::SitePads { hold_ns: [100, 200, 300, 400, 500], gap_ns: [10, 20, 30] };
        let text = report_with_sites(pads);
        let file = Path::new("k.json");
        // The main point (config: 2 jobs × iodepth 32).
        let m = inject::model_from_report(file, &text, 2, 32).unwrap();
        assert_eq!((m.outside_ns, m.elevator_ns, m.pads), (5000, 700, pads));
        // Another point of the axis.
        let m = inject::model_from_report(file, &text, 3, 32).unwrap();
        assert_eq!(
            (m.outside_ns, m.elevator_ns, m.pads.hold_ns, m.pads.gap_ns),
            (4003, 300, [9; 5], [8; 3])
        );
        // A point without a site calibration, a point not in the report, and not a report: one line each.
        for (threads, iodepth, words) in [
            (1, 32, "no site calibration"),
            (4, 32, "no point of 4 jobs"),
            (2, 1, "no point of 2 jobs × iodepth 1"),
        ] {
            let e = inject::model_from_report(file, &text, threads, iodepth).unwrap_err().message;
            assert!(e.contains(words) && e.contains("k.json") && !e.contains('\n'), "{e}");
        }
        for bad in ["", "[]", "{\"config\": {}}", "not json"] {
            let e = inject::model_from_report(file, bad, 2, 32).unwrap_err().message;
            assert!(e.contains("not a schedlab kernel JSON report"), "{bad}: {e}");
        }
        // A pad beyond the bound is refused, not spun.
        let text = report_with_sites(schedlab_core::SitePads {
            hold_ns: [inject::MAX_PAD_NS + 1, 0, 0, 0, 0],
            gap_ns: [0; 3],
        });
        let e = inject::model_from_report(file, &text, 2, 32).unwrap_err().message;
        assert!(e.contains("more than"), "{e}");
    }

    #[test]
    fn the_auto_axis_is_four_points_main_first() {
        let p = Point::auto(2, 32, "io_uring");
        assert_eq!(p.len(), 4);
        assert_eq!((p[0].threads, p[0].iodepth), (2, 32));
        assert!(p.iter().any(|p| p.threads == 1 && p.iodepth == 1));
        assert_eq!(Point::auto(1, 1, "psync").len(), 1);
        let mut c = config(3, vec![1, 2, 3]);
        c.points.swap(0, 1);
        assert!(c.validate().is_err(), "the main point must come first");
    }
}
