//! The workload driver: fio/IOSpeed-like jobs against one scheduler on a null device.
//!
//! Each job is a thread and a process (its own queue) in a group. It keeps `iodepth` requests of
//! its own outstanding, and, like a blk-mq submitter running its hardware queue, dispatches the
//! next request from the scheduler and completes it at once (null_blk with `irqmode=0
//! completion_nsec=0`): whichever request the scheduler picks, possibly another job's. A job's
//! IOPS are the completions of its own requests (merged ones included).
//!
//! Group churn: a churn thread removes a random leaf group (its queues move to the parent),
//! creates a new one, and asks a random job to move into it, `churn` times per second.
//!
//! Knobs, as fio names them where it has a name: jobs (`threads`, optionally pinned one per CPU
//! with `pin_cpus`), `rw`, `bs`, `iodepth`, groups and weights, group churn rate, work outside the
//! scheduler per request (`outside_ns`: simulated submission and completion work; 0 is the null
//! device), stat slots, lock kind, `ramp_time`, `runtime`. With `lockstat` on, the named locks are
//! measured during the measured window only ([`schedlab_core::lockstat`]) and the run returns
//! their counters.

use super::completion::{context_loop, CompletionMode, Device, Issuer, Wakers};
use super::forced::AfterWork;
use super::turns::{CpuTurns, Preemption, Turn};
use crate::error::ExperimentError;
use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};
use schedlab_core::deadline::{Deadline, DeadlineConfig, DeadlineRequest};
use schedlab_core::lockstat::{self, LockStats, LockSummary};
use schedlab_core::sync::{AtomicBool, AtomicU64, Lock, LockKind, Ordering};
use schedlab_core::trace;
use schedlab_core::Inject;
use schedlab_core::{
    Consistency, Dispatched, GroupId, InsertPathKind, KernelProfile, Op, RequestCounters,
    RequestSpec, SchedClock, SchedConfig, Scheduler, SitePads, StatsPolicy,
};
use schedlab_variants::VariantVisitor;
use serde::Serialize;
use std::time::{Duration, Instant};

pub use super::host::{allowed_cpus, other_runnable_threads, pin_current_thread};
use super::host::{cpu_figures, cpu_sample, CpuSample};

/// The access pattern (fio's `rw`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Rw {
    RandRead,
    RandWrite,
    Read,
    Write,
}

impl Rw {
    pub const ALL: [Rw; 4] = [Rw::RandRead, Rw::RandWrite, Rw::Read, Rw::Write];

    pub fn name(self) -> &'static str {
        match self {
            Rw::RandRead => "randread",
            Rw::RandWrite => "randwrite",
            Rw::Read => "read",
            Rw::Write => "write",
        }
    }

    pub fn from_name(name: &str) -> Option<Rw> {
        Rw::ALL.into_iter().find(|r| r.name() == name)
    }

    fn op(self) -> Op {
        match self {
            Rw::RandRead | Rw::Read => Op::READ_SYNC,
            // O_DIRECT writes are marked sync.
            Rw::RandWrite | Rw::Write => Op::WRITE_SYNC,
        }
    }

    fn sequential(self) -> bool {
        matches!(self, Rw::Read | Rw::Write)
    }
}

/// One run's parameters.
#[derive(Clone, Debug, Serialize)]
pub struct WorkloadConfig {
    /// Jobs (threads, one process each).
    pub threads: usize,
    /// Measured time.
    pub duration: Duration,
    /// Time run before measuring.
    pub ramp: Duration,
    pub lock: LockKind,
    /// Groups besides the root, in a 3-level hierarchy (root, level 1, level 2).
    pub groups: usize,
    /// Group weights, assigned in turn.
    pub weights: Vec<u64>,
    /// Group removals (each with a creation and a process move) per second.
    pub churn_per_sec: f64,
    /// Reads of every group's statistics per second during the run, by a thread of their own (a
    /// monitor reading `io.stat`: under `rstat` each read flushes the per-CPU pending lists).
    pub stats_reads_per_sec: f64,
    /// Per-CPU slots of every statistics counter.
    pub slots: usize,
    pub seed: u64,
    pub rw: Rw,
    /// Request size in 512-byte sectors.
    pub bs_sectors: u32,
    /// Requests of its own a job keeps outstanding.
    pub iodepth: usize,
    /// Simulated work outside the scheduler per request, ns (half at submission, half at
    /// completion); 0 is the null device.
    pub outside_ns: u64,
    pub slice_idle_ns: u64,
    /// Pin job *i* to the *i*-th CPU this process may run on (modulo their number), as the
    /// seeds' benchmark pinned one fio job per CPU.
    pub pin_cpus: bool,
    /// Measure the named locks during the measured window (see the module documentation).
    pub lockstat: bool,
    /// How holds are timed while measuring: sampled (cheap; hold figures estimated) or exact.
    pub lockstat_mode: lockstat::Mode,
    /// With `lockstat`: switch the statistics on and off in alternating windows of this length,
    /// so that one run gives the counters (on windows), the throughput (all windows) and the
    /// statistics' cost (on against off windows, pair by pair). `None`: on for the whole window.
    pub lockstat_toggle: Option<Duration>,
    /// Open the trace capture window ([`schedlab_core::trace::set_capture`]) for this long once
    /// the ramp-up ends (clipped to the measured time); `None`: never open it.
    pub trace_window: Option<Duration>,
    /// How requests enter the scheduler: `direct` (under the scheduler lock) or `lists` (the
    /// insertion lists proposed in 2024, spliced by dispatch; `schedlab_core::insert`).
    pub insert: InsertPathKind,
    /// Which of BFQ's lock sites a submission runs (`schedlab_core::profile`): the seeds' 4.12
    /// (bio merge, insert) or 6.18 (bio merge, depth limit, insert).
    pub kernel: KernelProfile,
    /// blk-mq's elevator machinery that the kernel's `none` skips, ns per request, spun outside
    /// every lock by the scheduler rows (half at submission, half after completion) and never by
    /// the reference row `none`: measured on the running kernel by `schedlab kernel`, 0 elsewhere
    /// unless asked (`--elevator-ns`).
    pub elevator_ns: u64,
    /// A known cost per request where it enters the scheduler, inside or outside the scheduler
    /// lock (`schedlab_core::inject`; `--inject-ns N --at inside|outside`).
    pub inject: Inject,
    /// Where a dispatched request completes: on the dispatching job at once (`inline`, the seeds'
    /// null_blk) or in a completion context per CPU (`context`, as the kernel completes a loop
    /// device's requests): [`super::completion`].
    pub completion: CompletionMode,
    /// The kernel's per-site lock time the core lacks and the gaps between the sites
    /// (`schedlab_core::SitePads`; measured by `schedlab kernel`, none elsewhere). The gaps are
    /// taken out of the submission's half of the outside work and elevator cost, so a request's
    /// CPU outside the lock stays what it was; only where it is spent changes.
    pub pads: SitePads,
    /// Where the OS may take a CPU from a job: anywhere (a user-space program's lot), or only
    /// between requests, the jobs taking turns on the CPUs when they outnumber them, as the
    /// kernel never preempts a task holding a spinlock ([`super::turns`]).
    pub preemption: Preemption,
}

impl Default for WorkloadConfig {
    fn default() -> Self {
        WorkloadConfig {
            threads: 2,
            duration: Duration::from_secs(2),
            ramp: Duration::ZERO,
            lock: LockKind::FairSpin,
            groups: 4,
            weights: vec![100, 200, 300],
            churn_per_sec: 0.0,
            stats_reads_per_sec: 0.0,
            slots: 8,
            seed: 1,
            rw: Rw::RandRead,
            bs_sectors: 8,
            iodepth: 1,
            outside_ns: 0,
            slice_idle_ns: 0,
            pin_cpus: false,
            lockstat: false,
            lockstat_mode: lockstat::Mode::Sampled,
            lockstat_toggle: None,
            trace_window: None,
            insert: InsertPathKind::Direct,
            kernel: KernelProfile::Seeds,
            elevator_ns: 0,
            inject: Inject::NONE,
            completion: CompletionMode::Inline,
            pads: SitePads::NONE,
            preemption: Preemption::Anywhere,
        }
    }
}

impl WorkloadConfig {
    /// Checks the parameters of a run of the reference row `none` (no scheduler: groups, churn,
    /// statistics reads, lock kind and insert path do not apply, and are refused where they
    /// would be silently ignored).
    pub fn validate_reference(&self, reference: Reference) -> Result<(), ExperimentError> {
        let name = reference.name();
        if self.churn_per_sec > 0.0 || self.stats_reads_per_sec > 0.0 {
            return Err(ExperimentError::bad_input(format!("the reference row `{name}` has no groups and no statistics: --churn and --stats-reads do not apply")));
        }
        if self.trace_window.is_some() {
            return Err(ExperimentError::bad_input(format!(
                "the reference row `{name}` records no trace"
            )));
        }
        // The remaining checks are the variants' (threads, duration, sizes, depth, outside work).
        self.validate("no-stats")
    }

    /// Checks the parameters; the message is one line for the user.
    pub fn validate(&self, variant: &str) -> Result<(), ExperimentError> {
        if let Some(reference) = Reference::from_name(variant) {
            return self.validate_reference(reference);
        }
        let (variant, _) = split_entry(variant)?;
        let info = schedlab_variants::info(variant).ok_or_else(|| {
            let names: Vec<_> = schedlab_variants::ALL
                .iter()
                .map(|v| v.name)
                .chain(Reference::ALL.iter().map(|r| r.name()))
                .collect();
            ExperimentError::bad_input(format!(
                "unknown variant `{variant}` (known: {})",
                names.join(", ")
            ))
        })?;
        if self.threads == 0 {
            return Err(ExperimentError::bad_input("--threads must be at least 1"));
        }
        if self.threads > 1024 {
            return Err(ExperimentError::bad_input(format!(
                "--threads {} is more than 1024",
                self.threads
            )));
        }
        let fair_max = max_fair_spin_threads();
        if self.lock == LockKind::FairSpin && self.threads > fair_max {
            return Err(ExperimentError::bad_input(format!(
                "--threads {} with the fair lock: at most {fair_max} ({MAX_FAIR_SPIN_THREADS_PER_CPU} per CPU): beyond that a collapsed FIFO spinlock cannot stop within a second of the run's end (notes/results/2026-12-01-collapse.md); use --lock parking-lot",
                self.threads
            )));
        }
        if self.duration.is_zero() {
            return Err(ExperimentError::bad_input("--duration must be greater than zero"));
        }
        if let Some(w) = self.weights.iter().find(|w| !(1..=1000).contains(*w)) {
            return Err(ExperimentError::bad_input(format!(
                "group weight must be 1..=1000, got {w}"
            )));
        }
        if self.weights.is_empty() {
            return Err(ExperimentError::bad_input("at least one group weight is needed"));
        }
        // The rates and the bounded counts, each refused the same way.
        for (flag, rate, max) in [
            ("--stats-reads", self.stats_reads_per_sec, MAX_STATS_READS_PER_SEC),
            ("--churn", self.churn_per_sec, MAX_CHURN_PER_SEC),
        ] {
            if !(rate.is_finite() && (0.0..=max).contains(&rate)) {
                return Err(ExperimentError::bad_input(format!(
                    "{flag} must be a rate in 0..={max} per second, got {rate}"
                )));
            }
        }
        for (flag, value, max) in [
            ("--groups", self.groups as u64, MAX_GROUPS as u64),
            ("--outside-ns", self.outside_ns, MAX_OUTSIDE_NS),
            ("--elevator-ns", self.elevator_ns, MAX_OUTSIDE_NS),
            ("--inject-ns", self.inject.ns, MAX_INJECT_NS),
            ("--slice-idle-ns", self.slice_idle_ns, MAX_SLICE_IDLE_NS),
        ] {
            if value > max {
                return Err(ExperimentError::bad_input(format!(
                    "{flag} must be 0..={max}, got {value}"
                )));
            }
        }
        if self.duration > MAX_DURATION || self.ramp > MAX_DURATION {
            return Err(ExperimentError::bad_input("--duration and --ramp must be at most a day"));
        }
        if self.churn_per_sec > 0.0 && !info.safe_under_removal {
            return Err(ExperimentError::bad_input(format!(
                "variant `{variant}` is unsafe under group removal: it cannot run with --churn (use it only without churn)"
            )));
        }
        if self.churn_per_sec > 0.0 && self.groups == 0 {
            return Err(ExperimentError::bad_input("--churn needs --groups of at least 1"));
        }
        if !(1..=64).contains(&self.slots) {
            return Err(ExperimentError::bad_input(format!(
                "--slots must be 1..=64, got {}",
                self.slots
            )));
        }
        if self.bs_sectors == 0 || self.bs_sectors > 256 {
            return Err(ExperimentError::bad_input(format!(
                "block size must be 512 B to 128 KiB, got {} sectors",
                self.bs_sectors
            )));
        }
        if self.iodepth == 0 || self.iodepth > 1024 {
            return Err(ExperimentError::bad_input(format!(
                "--iodepth must be 1..=1024, got {}",
                self.iodepth
            )));
        }
        if self.trace_window.is_some_and(|w| w.is_zero()) {
            return Err(ExperimentError::bad_input("--trace-window must be greater than zero"));
        }
        Ok(())
    }
}

/// What one run measured.
#[derive(Clone, Debug, Serialize)]
pub struct RunResult {
    pub variant: &'static str,
    pub lock: LockKind,
    pub threads: usize,
    /// Measured seconds (shorter than asked if the run was interrupted).
    pub measured_s: f64,
    pub kiops: f64,
    pub per_thread_kiops: Vec<f64>,
    pub requests: RequestCounters,
    /// All end-of-run conservation checks held.
    pub consistent: bool,
    pub consistency: Consistency,
    /// Live groups once everything is torn down (root included while it lives: 0 is expected).
    pub groups_live_after: usize,
    pub queues_live_after: usize,
    pub churn_removals: u64,
    /// Reads of every group's statistics made during the run (`stats_reads_per_sec`).
    pub stats_reads: u64,
    pub interrupted: bool,
    /// Whether the jobs were pinned (asked for, and the OS accepted every pin).
    pub pinned: bool,
    /// CPU time of this process in the measured window ÷ (window × jobs) × 100: below 100 when
    /// jobs were off-CPU (parked, yielding, or preempted).
    pub cpu_busy_pct: Option<f64>,
    /// CPUs' worth of time used by *other* processes during the measured window (0.5: half a
    /// CPU). Above a few tenths, the run competed for CPUs: lock holders get preempted.
    pub other_cpus: Option<f64>,
    /// Steal time during the window (the hypervisor ran someone else), CPUs' worth.
    pub steal_cpus: Option<f64>,
    /// Seconds the process was stopped by job control (SIGTSTP, SIGSTOP) during the run, seen
    /// by `driver::stopped`; `None` when it was not.
    pub stopped_s: Option<f64>,
    /// The named locks' counters over the measured window (empty unless `lockstat` was on).
    pub locks: Vec<LockSummary>,
    /// The same counters in mergeable form (histograms), for aggregating runs.
    #[serde(skip)]
    pub lock_stats: Option<LockStats>,
    /// With `lockstat_toggle`: the on and off windows of the run and what the statistics cost.
    pub lockstat_toggle: Option<ToggleResult>,
    /// Whether the jobs took turns on the CPUs (more jobs than CPUs, preempted only between
    /// requests: [`super::turns`]); then no more jobs were runnable than CPUs.
    pub turns: bool,
}

/// The statistics' cost measured inside one run: windows with lockstat on alternate with windows
/// with it off; each window is compared with its two neighbours.
#[derive(Clone, Debug, Serialize)]
pub struct ToggleResult {
    pub window_s: f64,
    /// Seconds measured with the statistics on (what the lock counters cover).
    pub on_s: f64,
    pub off_s: f64,
    /// KIOPS over the on windows and over the off windows.
    pub kiops_on: f64,
    pub kiops_off: f64,
    /// Per interior window, 100 × (1 − on rate ÷ off rate), the window against the mean of its
    /// two neighbours (of the other kind).
    pub pair_costs_pct: Vec<f64>,
    /// Median of `pair_costs_pct`: the statistics' cost in this run.
    pub cost_pct: Option<f64>,
}

impl ToggleResult {
    fn of(window: Duration, windows: &[(bool, f64, u64)]) -> ToggleResult {
        let sum = |on: bool| {
            windows.iter().filter(|w| w.0 == on).fold((0.0, 0u64), |(s, n), w| (s + w.1, n + w.2))
        };
        let ((on_s, on_n), (off_s, off_n)) = (sum(true), sum(false));
        let rate = |s: f64, n: u64| if s > 0.0 { n as f64 / s / 1e3 } else { 0.0 };
        // Each interior window against the mean rate of its two neighbours (which are of the
        // other kind): a load that drifts across the three cancels to first order, whichever
        // kind comes first. A window cut short by the end of the run (under a tenth of a window)
        // says little and is left out.
        let full = |w: &(bool, f64, u64)| w.1 > window.as_secs_f64() * 0.1;
        let mut pair_costs_pct = Vec::new();
        for three in windows.windows(3) {
            let (a, b, c) = (three[0], three[1], three[2]);
            if !(full(&a) && full(&b) && full(&c)) {
                continue;
            }
            let neighbours = (rate(a.1, a.2) + rate(c.1, c.2)) / 2.0;
            let (r_on, r_off) =
                if b.0 { (rate(b.1, b.2), neighbours) } else { (neighbours, rate(b.1, b.2)) };
            if r_off > 0.0 {
                pair_costs_pct.push(100.0 * (1.0 - r_on / r_off));
            }
        }
        let cost_pct = (!pair_costs_pct.is_empty()).then(|| crate::stats::median(&pair_costs_pct));
        ToggleResult {
            window_s: window.as_secs_f64(),
            on_s,
            off_s,
            kiops_on: rate(on_s, on_n),
            kiops_off: rate(off_s, off_n),
            pair_costs_pct,
            cost_pct,
        }
    }
}

/// What to tell a user whose fair-lock run has (or had) more runnable threads than CPUs.
pub const FAIR_LOCK_ADVICE: &str = "a spinning FIFO lock collapses when its holder or next waiter is preempted (every waiter behind it spins until the OS runs that thread again; notes/results/2026-12-01-collapse.md): use --lock parking-lot, or fewer jobs than idle CPUs";

/// The warning due before a run of `threads` jobs on `lock`, if any: the fair lock with more
/// runnable threads (these jobs and other processes' runnable threads now) than CPUs.
pub fn fair_lock_warning_before(
    lock: LockKind,
    threads: usize,
    others: Option<usize>,
) -> Option<String> {
    if lock != LockKind::FairSpin {
        return None;
    }
    let cpus = allowed_cpus().len();
    let others = others.unwrap_or(0);
    // One job has no waiter behind it: nothing to collapse.
    (threads >= 2 && threads + others > cpus).then(|| {
        let load = if others > 0 {
            format!(" and {others} other runnable thread(s)")
        } else {
            String::new()
        };
        format!("fair-spin with {threads} job(s) on {cpus} CPU(s){load}: {FAIR_LOCK_ADVICE}")
    })
}

/// [`fair_lock_warning_before`], measuring other processes' load now (an experiment tells it to
/// its observer).
pub fn warning_before_run(lock: LockKind, threads: usize) -> Option<String> {
    fair_lock_warning_before(lock, threads, other_runnable_threads())
}

/// Other processes' CPUs above which a run counts as disturbed (as `NoisePolicy`'s default).
pub const OTHERS_DISTURB_CPUS: f64 = 0.3;

/// The warning due after a fair-lock run of two or more jobs that had more jobs than CPUs
/// without taking turns on them ([`super::turns`]), or during which its runnable jobs and other
/// processes' measured load together needed more than the CPUs (by more than
/// [`OTHERS_DISTURB_CPUS`]).
pub fn fair_lock_warning_after(r: &RunResult) -> Option<String> {
    fair_lock_warning_on(r, allowed_cpus().len())
}

/// [`fair_lock_warning_after`] on `cpus` CPUs. Jobs that took turns had at most one runnable job
/// per CPU; the others' load is named only when it is what oversubscribed the CPUs.
fn fair_lock_warning_on(r: &RunResult, cpus: usize) -> Option<String> {
    if r.lock != LockKind::FairSpin || r.threads < 2 {
        return None;
    }
    let others = r.other_cpus.unwrap_or(0.0);
    let runnable = if r.turns { r.threads.min(cpus) } else { r.threads };
    if runnable > cpus {
        let load = if others > OTHERS_DISTURB_CPUS {
            format!(", and other processes used {others:.1} CPU(s)")
        } else {
            String::new()
        };
        Some(format!(
            "this fair-spin run had {} job(s) on {cpus} CPU(s){load}: {FAIR_LOCK_ADVICE}",
            r.threads
        ))
    } else if runnable as f64 + others > cpus as f64 + OTHERS_DISTURB_CPUS {
        Some(format!(
            "other processes used {others:.1} CPU(s) during this fair-spin run ({runnable} runnable job(s), {cpus} CPU(s)): its KIOPS measure preemption, not the variant; {FAIR_LOCK_ADVICE}"
        ))
    } else {
        None
    }
}

/// Why a finished run's figures do not measure the variant alone, if they do not: other
/// processes used more than [`OTHERS_DISTURB_CPUS`] CPUs during it, the process was stopped by
/// job control during it (`driver::stopped`), or (under the fair lock, whose
/// waiters spin in FIFO order) it had more jobs than CPUs. A verdict (a goal met or missed) is
/// not judged on such runs.
pub fn disturbed(r: &RunResult) -> Option<String> {
    if let Some(s) = r.stopped_s {
        return Some(format!("stopped (SIGTSTP/SIGSTOP) for {s:.1} s during it"));
    }
    let Some(others) = r.other_cpus else {
        return Some("other processes' CPU time could not be measured over it".into());
    };
    if others > OTHERS_DISTURB_CPUS {
        return Some(format!("other processes used {others:.1} CPU(s) during it"));
    }
    fair_lock_warning_after(r)
}

/// Jobs per CPU the fair lock accepts. Once oversubscribed, a FIFO spinlock hands over only when
/// the OS happens to run the next waiter: every job still queued for it when the run ends must
/// get it once more, so stopping takes time that grows with jobs per CPU squared. Measured beside
/// two CPU-bound processes on 2 CPUs: 128 and 256 jobs stopped in 0.3-0.7 s, 1024 in 2.5-7.6 s.
pub const MAX_FAIR_SPIN_THREADS_PER_CPU: usize = 64;

/// The most jobs a fair-lock run accepts here: [`MAX_FAIR_SPIN_THREADS_PER_CPU`] per allowed CPU,
/// at most 1024.
pub fn max_fair_spin_threads() -> usize {
    (MAX_FAIR_SPIN_THREADS_PER_CPU * allowed_cpus().len()).min(1024)
}

/// The most group removals per second a run accepts.
pub const MAX_CHURN_PER_SEC: f64 = 10_000.0;
/// The most statistics reads per second a run takes (`--stats-reads`).
pub const MAX_STATS_READS_PER_SEC: f64 = 10_000.0;
/// The most groups besides the root.
pub const MAX_GROUPS: usize = 4096;
/// The most simulated work outside the scheduler per request (1 s): a job checks for the end of
/// the run while it spins, so even this much work cannot hold a run past its duration.
pub const MAX_OUTSIDE_NS: u64 = 1_000_000_000;
/// Largest injected cost per request, ns (1 ms: a spin under the scheduler lock).
pub const MAX_INJECT_NS: u64 = 1_000_000;
/// The longest idle slice (100 ms, twelve times BFQ's default): when a run stops, at most one
/// armed slice is waited out (idling is switched off for the drain).
pub const MAX_SLICE_IDLE_NS: u64 = 100_000_000;
/// The longest measured window or ramp.
pub const MAX_DURATION: Duration = Duration::from_secs(24 * 3600);

const DEVICE_SECTORS: u64 = 1 << 31; // 1 TiB

/// The completion contexts of a run: one per CPU the process may run on, as the kernel has a
/// block softirq per CPU.
fn completion_contexts() -> usize {
    allowed_cpus().len().max(1)
}
const OWNER_SHIFT: u32 = 40;

/// Per-job state shared with the others (completions credit the owner).
struct Job {
    completed_own: AtomicU64,
    move_to: Lock<Option<GroupId>>,
    move_pending: AtomicBool,
}

/// Spins for `ns` of simulated outside work, or until `stop` is set (so that a long
/// `outside_ns` cannot hold a run past its end).
fn spin_for(clock: &SchedClock, ns: u64, stop: &AtomicBool) {
    if ns == 0 {
        return;
    }
    let end = clock.now_ns().saturating_add(ns);
    let mut polls = 0u32;
    while clock.now_ns() < end {
        std::hint::spin_loop();
        polls = polls.wrapping_add(1);
        if polls % 1024 == 0 && stop.load(Ordering::Relaxed) {
            return;
        }
    }
}

/// Builds the initial hierarchy: the first half of the groups under the root, the rest under
/// them in turn (so the tree has the root and two more levels). The one definition: the
/// prediction's harness builds the same tree.
pub fn build_groups<P: StatsPolicy>(
    sched: &Scheduler<P>,
    cfg: &WorkloadConfig,
) -> Result<Vec<GroupId>, ExperimentError> {
    let root = sched.root();
    let level1 = cfg.groups.div_ceil(2);
    let mut groups = Vec::with_capacity(cfg.groups);
    for i in 0..cfg.groups {
        let parent = if i < level1 { root } else { groups[(i - level1) % level1] };
        let weight = cfg.weights[i % cfg.weights.len()];
        groups.push(
            sched
                .create_group(parent, weight)
                .map_err(|e| ExperimentError::bad_input(format!("cannot create group {i}: {e}")))?,
        );
    }
    Ok(groups)
}

fn credit(jobs: &[Job], tag: u64, absorbed: &[u64]) {
    jobs[(tag >> OWNER_SHIFT) as usize].completed_own.fetch_add(1, Ordering::Release);
    for t in absorbed {
        jobs[(t >> OWNER_SHIFT) as usize].completed_own.fetch_add(1, Ordering::Release);
    }
}

fn dispatch_and_complete<P: StatsPolicy>(
    sched: &Scheduler<P>,
    jobs: &[Job],
    outside_ns: u64,
    stop: &AtomicBool,
) -> bool {
    match sched.dispatch() {
        Some(rq) => {
            let done = rq.complete();
            credit(jobs, done.tag, &done.absorbed);
            // The completion's half: device completion, softirq, and the elevator's own share.
            spin_for(sched.clock(), outside_ns / 2, stop);
            true
        }
        None => false,
    }
}

/// The start line: jobs wait here, asleep, until every job has spawned its process, so that the
/// thread spawning them is not competing with running jobs for the CPUs (with hundreds of jobs on
/// a few CPUs that made the start take seconds) and all jobs start together.
#[derive(Default)]
struct Gate {
    open: std::sync::Mutex<bool>,
    opened: std::sync::Condvar,
}

impl Gate {
    fn wait(&self) {
        let mut open = self.open.lock().unwrap_or_else(|e| e.into_inner());
        while !*open {
            open = self.opened.wait(open).unwrap_or_else(|e| e.into_inner());
        }
    }

    fn open(&self) {
        *self.open.lock().unwrap_or_else(|e| e.into_inner()) = true;
        self.opened.notify_all();
    }
}

/// Counts a job as started when dropped: whether it spawned its process, failed, or panicked,
/// the thread that waits for every job to start is never left waiting.
struct Started<'a>(&'a AtomicU64);

impl Drop for Started<'_> {
    fn drop(&mut self) {
        self.0.fetch_add(1, Ordering::Release);
    }
}

/// Where a job pins itself, and the flag it clears if the OS refuses.
#[derive(Clone, Copy)]
struct Pin<'a> {
    cpu: Option<usize>,
    all_ok: &'a AtomicBool,
}

/// Where a job's dispatched requests go: completed on the job at once, or issued to the device
/// and completed in a completion context (`completion.rs`).
enum Completer<'s, P: StatsPolicy> {
    Inline,
    Device { issuer: Issuer<'s, Dispatched<'s, P>>, wakers: &'s Wakers },
}

/// A completion context's work on one request: the scheduler's finish path, the owners' credit
/// (waking an owner that waits), and the completion's half of the outside work.
fn complete_in_context<P: StatsPolicy>(
    rq: Dispatched<'_, P>,
    jobs: &[Job],
    wakers: &Wakers,
    outside_ns: u64,
    clock: &SchedClock,
    stop: &AtomicBool,
) {
    let done = rq.complete();
    credit(jobs, done.tag, &done.absorbed);
    for t in std::iter::once(done.tag).chain(done.absorbed.iter().copied()) {
        wakers.wake((t >> OWNER_SHIFT) as usize);
    }
    spin_for(clock, outside_ns / 2, stop);
}

/// Sleeps with `sleep` after giving the job's turn on its CPU up, if it takes turns, and queues
/// for a turn again when it wakes: a job blocked for its completions leaves its CPU to the next.
fn sleep_off_turn(turn: &mut Option<Turn<'_>>, stop: &AtomicBool, sleep: impl FnOnce()) {
    if let Some(turn) = turn {
        turn.give_up();
    }
    sleep();
    if let Some(turn) = turn {
        turn.retake(stop);
    }
}

#[allow(clippy::too_many_arguments)]
fn job_loop<'s, P: StatsPolicy>(
    index: usize,
    sched: &'s Scheduler<P>,
    group: GroupId,
    cfg: &WorkloadConfig,
    jobs: &[Job],
    stop: &AtomicBool,
    pin: Pin<'_>,
    started: &AtomicU64,
    gate: &Gate,
    completer: Completer<'s, P>,
    turns: Option<&CpuTurns>,
) -> Result<(), ExperimentError> {
    let started = Started(started);
    if let Some(cpu) = pin.cpu {
        if !pin_current_thread(cpu) {
            pin.all_ok.store(false, Ordering::Relaxed);
        }
    }
    // The churn thread starts only once every job has its process (see `run`), so `group` still
    // exists; the root, which is never removed, is the fallback all the same.
    let process =
        sched.spawn_process(group).or_else(|_| sched.spawn_process(sched.root())).map_err(|e| {
            ExperimentError::run_failed(format!("job {index} cannot start its process: {e}"))
        })?;
    drop(started);
    if let Completer::Device { wakers, .. } = &completer {
        wakers.register(index);
    }
    gate.wait();
    // With more jobs than CPUs and preemption only between requests: this job's turn on a CPU.
    let mut turn = turns.map(|t| t.take(stop));
    let mut rng =
        SmallRng::seed_from_u64(cfg.seed ^ (index as u64 + 1).wrapping_mul(0x9E37_79B9_7F4A_7C15));
    let op = cfg.rw.op();
    let bs = cfg.bs_sectors as u64;
    let region = DEVICE_SECTORS / cfg.threads as u64;
    let mut next_seq = region * index as u64;
    let mut submitted: u64 = 0;
    let me = &jobs[index];
    let mut idle_polls = 0u32;
    while !stop.load(Ordering::Relaxed) {
        // Between requests, with no lock held: where the OS may switch jobs when they take turns.
        if let Some(turn) = &mut turn {
            turn.interrupt_point(stop);
        }
        // A cgroup move takes effect when the job has nothing outstanding: then every deferred
        // statistics update of its requests has been applied (the dispatcher applies them before
        // completing, and a job counts a request done only after its completion), so the move
        // cannot split a request's io_add and io_remove between two groups. (The kernel moves a
        // queue with requests pending and lets `queued` drift; see notes/kernel-map.md.)
        if me.move_pending.load(Ordering::Relaxed)
            && submitted == me.completed_own.load(Ordering::Acquire)
        {
            me.move_pending.store(false, Ordering::Relaxed);
            if let Some(target) = me.move_to.lock().take() {
                // The target may have been removed meanwhile: then stay.
                let _ = process.move_to(target);
            }
        }
        // With a move pending, stop refilling so that the job drains and can move.
        let depth = if me.move_pending.load(Ordering::Relaxed) { 0 } else { cfg.iodepth as u64 };
        while submitted - me.completed_own.load(Ordering::Relaxed) < depth {
            let sector = if cfg.rw.sequential() {
                let s = next_seq;
                next_seq += bs;
                if next_seq >= region * (index as u64 + 1) {
                    next_seq = region * index as u64;
                }
                s
            } else {
                rng.random_range(0..DEVICE_SECTORS / bs) * bs
            };
            let tag = ((index as u64) << OWNER_SHIFT) | (submitted & ((1 << OWNER_SHIFT) - 1));
            // The submission's half of the outside work and of the elevator machinery, less the
            // gaps the scheduler spends between the sites and before the dispatch.
            spin_for(
                sched.clock(),
                ((cfg.outside_ns + cfg.elevator_ns) / 2).saturating_sub(cfg.pads.gaps()),
                stop,
            );
            if stop.load(Ordering::Relaxed) {
                break;
            }
            // The kernel profile's lock sites: bio merge, depth limit, insert.
            process.submit(RequestSpec {
                sector,
                sectors: cfg.bs_sectors,
                op,
                at_head: false,
                tag,
            });
            // blk-mq's way from the insert to running the hardware queue (the third gap).
            spin_for(sched.clock(), cfg.pads.gap_ns[2], stop);
            submitted += 1;
        }
        if let Completer::Device { issuer, wakers } = &completer {
            let complete = |rq| {
                complete_in_context(
                    rq,
                    jobs,
                    wakers,
                    cfg.outside_ns + cfg.elevator_ns,
                    sched.clock(),
                    stop,
                )
            };
            // The interrupt point: the completions queued to this CPU's context run here, between
            // lock sites, as a softirq runs in whatever task its CPU runs (`completion.rs`).
            issuer.serve(complete);
            match sched.dispatch() {
                Some(rq) => {
                    // The device takes it; a context that has gone gives it back to complete here.
                    if let Err(rq) = issuer.issue(rq) {
                        let done = rq.complete();
                        credit(jobs, done.tag, &done.absorbed);
                    }
                }
                None if submitted - me.completed_own.load(Ordering::Acquire) >= depth => {
                    // The whole depth is in flight and nothing is left to dispatch: wait for one
                    // of this job's own completions, as fio waits in io_uring_enter, or for a
                    // completion to run in this CPU's context.
                    issuer.serve_before_idle(complete);
                    let ready = || {
                        submitted - me.completed_own.load(Ordering::Acquire) < depth
                            || issuer.has_pending()
                            || stop.load(Ordering::Relaxed)
                    };
                    sleep_off_turn(&mut turn, stop, || wakers.wait(index, ready));
                }
                None => std::hint::spin_loop(),
            }
            continue;
        }
        if dispatch_and_complete(sched, jobs, cfg.outside_ns + cfg.elevator_ns, stop) {
            idle_polls = 0;
        } else {
            idle_polls += 1;
            if idle_polls > 64 {
                std::thread::yield_now();
            } else {
                std::hint::spin_loop();
            }
        }
    }
    // The process exits with requests still queued (its queue lives on while they hold it, as
    // in the kernel); `run` drains them on one thread once every job has gone. Draining here, with
    // every job taking the scheduler lock, could take seconds with a fair lock and more jobs than
    // CPUs (each hand-over waits for the next waiter to be scheduled).
    drop(turn);
    drop(process);
    // The issuer goes with the job: once every job's has, the contexts end after their queues.
    drop(completer);
    lockstat::flush();
    Ok(())
}

/// The statistics reader: every group's statistics, `stats_reads_per_sec` times a second, as a
/// monitor would read them. Each read takes the scheduler lock (and under `rstat` first flushes
/// the pending lists under the global flush lock), like the kernel's `io.stat` read. A group
/// removed between the listing and its read is skipped. Returns the number of full reads.
fn stats_reader_loop<P: StatsPolicy>(
    sched: &Scheduler<P>,
    cfg: &WorkloadConfig,
    stop: &AtomicBool,
) -> u64 {
    let period = period_of(cfg.stats_reads_per_sec);
    let mut next = Instant::now() + period;
    let mut reads = 0;
    while sleep_until(next, stop) {
        next += period;
        for group in sched.groups() {
            let _ = sched.group_stats(group.id);
        }
        reads += 1;
    }
    lockstat::flush();
    reads
}

fn churn_loop<P: StatsPolicy>(
    sched: &Scheduler<P>,
    cfg: &WorkloadConfig,
    jobs: &[Job],
    stop: &AtomicBool,
) -> u64 {
    let mut rng = SmallRng::seed_from_u64(cfg.seed ^ 0xC0FF_EE00);
    let period = period_of(cfg.churn_per_sec);
    let mut next = Instant::now() + period;
    let mut removals = 0;
    while sleep_until(next, stop) {
        next += period;
        let groups = sched.groups();
        let leaves: Vec<_> = groups
            .iter()
            .filter(|g| g.parent.is_some() && !groups.iter().any(|c| c.parent == Some(g.id)))
            .collect();
        if leaves.is_empty() {
            continue;
        }
        let victim = leaves[rng.random_range(0..leaves.len())].id;
        if sched.remove_group(victim).is_ok() {
            removals += 1;
        }
        let parents: Vec<_> = sched.groups().into_iter().filter(|g| g.depth < 2).collect();
        if parents.is_empty() {
            continue;
        }
        let parent = parents[rng.random_range(0..parents.len())].id;
        let weight = cfg.weights[rng.random_range(0..cfg.weights.len())];
        if let Ok(new_group) = sched.create_group(parent, weight) {
            let job = &jobs[rng.random_range(0..jobs.len())];
            *job.move_to.lock() = Some(new_group);
            job.move_pending.store(true, Ordering::Relaxed);
        }
    }
    lockstat::flush();
    removals
}

/// The time between two events at `per_sec` a second: at most an hour (a rate of 1e-300 would
/// overflow a Duration).
fn period_of(per_sec: f64) -> Duration {
    Duration::from_secs_f64((1.0 / per_sec).min(3600.0))
}

/// Sleeps until `deadline` or until `stop` is set; returns false if stopped early.
pub(crate) fn sleep_until(deadline: Instant, stop: &AtomicBool) -> bool {
    loop {
        if stop.load(Ordering::Relaxed) {
            return false;
        }
        let now = Instant::now();
        if now >= deadline {
            return true;
        }
        std::thread::sleep((deadline - now).min(Duration::from_millis(5)));
    }
}

/// The text of a thread's panic payload.
fn panic_text(payload: &(dyn std::any::Any + Send)) -> String {
    payload
        .downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| payload.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "a panic with no message".into())
}

/// Runs the workload against variant `P`. `interrupt` ends the run early (a signal): the
/// measured window is then what elapsed, and the end-of-run checks still run.
///
/// Start order, so that nothing races: the jobs start first, each spawning its process in its
/// group; the churn thread starts only when every job has done so (before that, a removal could
/// take a job's group away before the job spawned its process in it). The main thread is the
/// timer. At the end the jobs stop, drop their processes and exit; this thread then drains what
/// they left queued, alone, with idling switched off.
///
/// An error (a thread that could not be started, a job that could not spawn its process, a
/// thread that panicked) ends the run and is returned as one line; nothing is torn down half.
pub fn run<P: StatsPolicy>(
    cfg: &WorkloadConfig,
    interrupt: &AtomicBool,
) -> Result<RunResult, ExperimentError> {
    tracing::info!(
        variant = P::NAME,
        threads = cfg.threads,
        lock = %cfg.lock,
        groups = cfg.groups,
        churn = cfg.churn_per_sec,
        rw = cfg.rw.name(),
        iodepth = cfg.iodepth,
        slots = cfg.slots,
        "run starts"
    );
    let sched_cfg = SchedConfig {
        slots: cfg.slots,
        slice_idle_ns: cfg.slice_idle_ns,
        insert: cfg.insert,
        profile: cfg.kernel,
        inject: cfg.inject,
        pads: cfg.pads,
        ..SchedConfig::default()
    };
    let sched = Scheduler::<P>::new(cfg.lock, sched_cfg, SchedClock::real());
    let census = sched.census();
    let groups = build_groups(&sched, cfg)?;
    let jobs: Vec<Job> = (0..cfg.threads)
        .map(|_| Job {
            completed_own: AtomicU64::new(0),
            move_to: Lock::new(LockKind::FairSpin, None),
            move_pending: AtomicBool::new(false),
        })
        .collect();
    let stop = AtomicBool::new(false);
    let started = AtomicU64::new(0);
    let gate = Gate::default();
    let mut interrupted = false;
    let cpus = if cfg.pin_cpus { allowed_cpus() } else { Vec::new() };
    let pinned = AtomicBool::new(cfg.pin_cpus);
    let mut cpu: Option<(CpuSample, CpuSample)> = None;
    // (on, seconds, requests) of each window of a toggled run.
    let mut windows: Vec<(bool, f64, u64)> = Vec::new();
    let mut failures: Vec<String> = Vec::new();
    let wakers = Wakers::new(cfg.threads);
    let turns = CpuTurns::when_needed(cfg.preemption, cfg.threads, completion_contexts());
    let sched_ref: &Scheduler<P> = &sched;
    let (measured_s, deltas, churn_removals, stats_reads) = std::thread::scope(|s| {
        let mut handles = Vec::new();
        // The completion contexts, one per CPU, before the jobs (`completion.rs`): the threads of
        // those no job serves.
        let mut contexts = Vec::new();
        let device = (cfg.completion == CompletionMode::Context).then(|| {
            let (device, queues) =
                Device::<Dispatched<'_, P>>::new(completion_contexts(), cfg.threads);
            for (c, queue) in queues {
                let (jobs, wakers, stop, pinned) = (&jobs, &wakers, &stop, &pinned);
                let cpu = (!cpus.is_empty()).then(|| cpus[c % cpus.len()]);
                let outside_ns = cfg.outside_ns + cfg.elevator_ns;
                let context = std::thread::Builder::new().name(format!("completion-{c}"));
                let spawned = context.spawn_scoped(s, move || {
                    if cpu.is_some_and(|c| !pin_current_thread(c)) {
                        pinned.store(false, Ordering::Relaxed);
                    }
                    let n = context_loop(queue, |rq| {
                        complete_in_context(rq, jobs, wakers, outside_ns, sched_ref.clock(), stop)
                    });
                    lockstat::flush();
                    n
                });
                match spawned {
                    Ok(h) => contexts.push((c, h)),
                    Err(e) => failures.push(format!("cannot start completion context {c}: {e}")),
                }
            }
            device
        });
        for i in 0..cfg.threads {
            let group = if groups.is_empty() { sched.root() } else { groups[i % groups.len()] };
            let (jobs, stop, pinned, started, gate) = (&jobs, &stop, &pinned, &started, &gate);
            let pin = Pin { cpu: (!cpus.is_empty()).then(|| cpus[i % cpus.len()]), all_ok: pinned };
            let completer = match &device {
                Some(d) => Completer::Device { issuer: d.issuer(i, &wakers), wakers: &wakers },
                None => Completer::Inline,
            };
            // Named, so that logs and trace viewers show which job a line or a track is.
            let job = std::thread::Builder::new().name(format!("job-{i}"));
            let turns = turns.as_ref();
            match job.spawn_scoped(s, move || {
                job_loop(i, sched_ref, group, cfg, jobs, stop, pin, started, gate, completer, turns)
            }) {
                Ok(h) => handles.push(h),
                Err(e) => {
                    failures.push(format!("cannot start job thread {i} of {}: {e}", cfg.threads));
                    break;
                }
            }
        }
        // Every job has spawned its process (or given up) before any group can be removed; then
        // they all start together. (On a failure the gate opens too, with `stop` set below.)
        while started.load(Ordering::Acquire) < handles.len() as u64 {
            std::thread::sleep(Duration::from_micros(200));
        }
        if !failures.is_empty() {
            stop.store(true, Ordering::Relaxed);
        }
        gate.open();
        let churner = (cfg.churn_per_sec > 0.0 && failures.is_empty())
            .then(|| {
                let (sched, jobs, stop) = (&sched, &jobs, &stop);
                let churn = std::thread::Builder::new().name("churn".into());
                churn.spawn_scoped(s, move || churn_loop(sched, cfg, jobs, stop)).map_err(|e| {
                    ExperimentError::run_failed(format!("cannot start the churn thread: {e}"))
                })
            })
            .and_then(|r| r.map_err(|e| failures.push(e.to_string())).ok());
        let reader = (cfg.stats_reads_per_sec > 0.0 && failures.is_empty())
            .then(|| {
                let (sched, stop) = (&sched, &stop);
                let reader = std::thread::Builder::new().name("stats-reader".into());
                reader.spawn_scoped(s, move || stats_reader_loop(sched, cfg, stop)).map_err(|e| {
                    ExperimentError::run_failed(format!("cannot start the statistics reader: {e}"))
                })
            })
            .and_then(|r| r.map_err(|e| failures.push(e.to_string())).ok());
        let t0 = Instant::now();
        if !failures.is_empty() {
            interrupted = true;
        }
        if !interrupted && !cfg.ramp.is_zero() {
            tracing::info!(ramp = ?cfg.ramp, "ramping up");
        }
        if !interrupted && !sleep_until(t0 + cfg.ramp, interrupt) {
            interrupted = true;
        }
        if cfg.lockstat {
            lockstat::set_mode(cfg.lockstat_mode);
            lockstat::reset();
            lockstat::set_enabled(true);
        }
        let cpu_before = cpu_sample();
        let start = Instant::now();
        let before: Vec<u64> =
            jobs.iter().map(|j| j.completed_own.load(Ordering::Relaxed)).collect();
        tracing::info!(duration = ?cfg.duration, lockstat = cfg.lockstat, "measuring");
        if let Some(window) = cfg.trace_window.filter(|_| !interrupted) {
            let window = window.min(cfg.duration);
            trace::set_capture(true);
            tracing::info!(name: "trace window open", ?window, "trace window open");
            if !sleep_until(start + window, interrupt) {
                interrupted = true;
            }
            trace::set_capture(false);
            tracing::info!(name: "trace window closed", "trace window closed");
        }
        let toggle = cfg
            .lockstat_toggle
            .filter(|w| cfg.lockstat && !w.is_zero() && cfg.trace_window.is_none());
        if let Some(window) = toggle.filter(|_| !interrupted) {
            // Alternate on and off windows; each ends on the clock, and the requests completed in
            // it are read at its end.
            let total =
                || jobs.iter().map(|j| j.completed_own.load(Ordering::Relaxed)).sum::<u64>();
            let end = start + cfg.duration;
            let (mut t, mut n, mut on) = (start, total(), true);
            while t < end {
                lockstat::set_enabled(on);
                let stop_at = (t + window).min(end);
                if !sleep_until(stop_at, interrupt) {
                    interrupted = true;
                }
                let (now, m) = (Instant::now(), total());
                windows.push((on, (now - t).as_secs_f64(), m - n));
                (t, n, on) = (now, m, !on);
                if interrupted {
                    break;
                }
            }
        }
        if !interrupted && !sleep_until(start + cfg.duration, interrupt) {
            interrupted = true;
        }
        trace::set_capture(false);
        let after: Vec<u64> =
            jobs.iter().map(|j| j.completed_own.load(Ordering::Relaxed)).collect();
        let measured = start.elapsed().as_secs_f64();
        cpu = cpu_before.zip(cpu_sample());
        if cfg.lockstat {
            lockstat::set_enabled(false);
        }
        if interrupted && failures.is_empty() {
            tracing::warn!(measured_s = measured, "interrupted: keeping the part that ran");
        }
        tracing::info!(
            measured_s = measured,
            "measured window done; stopping the jobs and draining"
        );
        // No new idle slice from here on: the drain waits out at most the one armed now.
        sched.set_slice_idle(0);
        stop.store(true, Ordering::Relaxed);
        for (i, h) in handles.into_iter().enumerate() {
            match h.join() {
                Ok(Ok(())) => {}
                Ok(Err(e)) => failures.push(e.to_string()),
                Err(payload) => {
                    failures.push(format!("job {i} panicked: {}", panic_text(&*payload)))
                }
            }
        }
        // Every job dropped its issuer: what is left in the contexts the jobs served is completed
        // here; with the device gone too, each context thread completes what is queued to it and
        // ends.
        if let Some(d) = &device {
            let outside_ns = cfg.outside_ns + cfg.elevator_ns;
            d.drain_served(|rq| {
                complete_in_context(rq, &jobs, &wakers, outside_ns, sched_ref.clock(), &stop)
            });
        }
        drop(device);
        for (c, h) in contexts {
            if let Err(payload) = h.join() {
                failures
                    .push(format!("completion context {c} panicked: {}", panic_text(&*payload)));
            }
        }
        let removals = match churner.map(|h| h.join()) {
            None => 0,
            Some(Ok(n)) => n,
            Some(Err(payload)) => {
                failures.push(format!("the churn thread panicked: {}", panic_text(&*payload)));
                0
            }
        };
        let reads = match reader.map(|h| h.join()) {
            None => 0,
            Some(Ok(n)) => n,
            Some(Err(payload)) => {
                failures.push(format!("the statistics reader panicked: {}", panic_text(&*payload)));
                0
            }
        };
        let deltas: Vec<u64> = before.iter().zip(&after).map(|(b, a)| a - b).collect();
        (measured, deltas, removals, reads)
    });
    // Every job and the churn thread flushed their lock counts as they ended.
    let lock_stats = cfg.lockstat.then(lockstat::snapshot);
    // What the jobs left queued is drained here, by this thread alone. Idling is off, so the only
    // wait is for an idle slice armed before the stop (at most MAX_SLICE_IDLE_NS).
    let drain_limit =
        Instant::now() + Duration::from_nanos(MAX_SLICE_IDLE_NS) + Duration::from_secs(5);
    loop {
        if let Some(rq) = sched.dispatch() {
            let done = rq.complete();
            credit(&jobs, done.tag, &done.absorbed);
            continue;
        }
        let left = sched.outstanding();
        if left == (0, 0) {
            break;
        }
        if Instant::now() > drain_limit {
            failures.push(format!("{} request(s) still queued and {} on the device after the drain: the scheduler stopped dispatching", left.0, left.1));
            break;
        }
        if !sched.run_idle_timer() {
            std::thread::sleep(Duration::from_micros(100));
        }
    }
    // Removed groups hand their last statistics to their parents when they are freed (rstat: all
    // they did since the last read), so the end-of-run check waits for their grace periods.
    sched.quiesce_until_reclaimed(RECLAMATION_WAIT);
    if let Some(first) = failures.first() {
        let more = if failures.len() > 1 {
            format!(" (and {} more)", failures.len() - 1)
        } else {
            String::new()
        };
        tracing::error!(variant = P::NAME, "run failed: {first}{more}");
        drop(sched);
        P::quiesce();
        return Err(ExperimentError::run_failed(format!("{} run failed: {first}{more}", P::NAME)));
    }
    let consistency = sched.check_consistency();
    let requests = consistency.counters;
    if consistency.ok {
        tracing::info!(
            inserted = requests.inserted,
            completed = requests.completed,
            merged = requests.merged,
            "end-of-run checks hold"
        );
    } else {
        tracing::warn!(?consistency, "end-of-run checks failed");
    }
    drop(sched);
    // What the teardown retired; a group still awaiting reclamation is reported as alive.
    schedlab_core::quiesce_until_reclaimed::<P>(&census, RECLAMATION_WAIT);
    let secs = measured_s.max(1e-9);
    let (cpu_busy_pct, other_cpus, steal_cpus) = cpu_figures(cpu, secs, cfg.threads);
    let per_thread_kiops: Vec<f64> = deltas.iter().map(|&d| d as f64 / secs / 1e3).collect();
    let lockstat_toggle =
        cfg.lockstat_toggle.filter(|_| !windows.is_empty()).map(|w| ToggleResult::of(w, &windows));
    // The lock counters cover the on windows of a toggled run, the whole window otherwise.
    let lockstat_s = lockstat_toggle.as_ref().map_or(measured_s, |t| t.on_s);
    Ok(RunResult {
        variant: P::NAME,
        lock: cfg.lock,
        threads: cfg.threads,
        measured_s,
        kiops: per_thread_kiops.iter().sum(),
        per_thread_kiops,
        requests,
        consistent: consistency.ok,
        consistency,
        groups_live_after: census.live_groups(),
        queues_live_after: census.live_queues(),
        churn_removals,
        stats_reads,
        interrupted,
        pinned: pinned.load(Ordering::Relaxed),
        cpu_busy_pct,
        other_cpus,
        steal_cpus,
        stopped_s: None,
        locks: lock_stats
            .as_ref()
            .map_or_else(Vec::new, |l| l.summarize((lockstat_s * 1e9) as u64)),
        lock_stats,
        lockstat_toggle,
        turns: turns.is_some(),
    })
}

/// A reference row's completion in a completion context: the request's tags (its own and those
/// merged into it) are credited to their owners, and the completion's half of the outside work.
fn complete_reference(
    (tag, absorbed): (u64, Vec<u64>),
    completed: &[AtomicU64],
    wakers: &Wakers,
    clock: &SchedClock,
    completion_half: u64,
    stop: &AtomicBool,
) {
    for t in std::iter::once(tag).chain(absorbed) {
        let owner = (t >> OWNER_SHIFT) as usize;
        completed[owner].fetch_add(1, Ordering::Release);
        wakers.wake(owner);
    }
    spin_for(clock, completion_half, stop);
}

/// A reference row: a kernel elevator that is not BFQ, run with the same jobs, outside work and
/// request generator as a variant.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Reference {
    /// `none`: no scheduler; each request is issued straight to the null device.
    None,
    /// `deadline`: `mq-deadline` (`schedlab_core::deadline`): the bio merge attempt and the insert
    /// under its lock, dispatch by any job under it, completion without it; the elevator
    /// machinery's cost (`elevator_ns`) outside it, as every scheduler row pays.
    Deadline,
}

impl Reference {
    /// The row names, as `--variant` and the kernel peer take them.
    pub const ALL: [Reference; 2] = [Reference::None, Reference::Deadline];

    pub fn name(self) -> &'static str {
        match self {
            Reference::None => "none",
            Reference::Deadline => "deadline",
        }
    }

    pub fn from_name(name: &str) -> Option<Reference> {
        Self::ALL.into_iter().find(|r| r.name() == name)
    }
}

/// A reference row (see [`Reference`]). `none` is the kernel's `none` elevator on the null
/// device: each job keeps `iodepth` requests of its own, draws each request's sector as a
/// variant's job does, spins the same outside work, and issues it straight to the null device,
/// which completes it at once: no scheduler, no lock, no statistics, no groups. What is left is
/// the per-request work outside any scheduler, so that `variant ÷ none` is the share of the
/// throughput the scheduler keeps. `deadline` puts `mq-deadline` between the jobs and the device.
pub fn run_reference(
    reference: Reference,
    cfg: &WorkloadConfig,
    interrupt: &AtomicBool,
) -> Result<RunResult, ExperimentError> {
    tracing::info!(
        row = reference.name(),
        threads = cfg.threads,
        rw = cfg.rw.name(),
        iodepth = cfg.iodepth,
        "reference run starts"
    );
    let clock = SchedClock::real();
    let stop = AtomicBool::new(false);
    let completed: Vec<AtomicU64> = (0..cfg.threads).map(|_| AtomicU64::new(0)).collect();
    let cpus = if cfg.pin_cpus { allowed_cpus() } else { Vec::new() };
    let pinned = AtomicBool::new(cfg.pin_cpus);
    let gate = Gate::default();
    let deadline = (reference == Reference::Deadline)
        .then(|| Deadline::new(cfg.lock, DeadlineConfig::default()));
    let lockstat_on = cfg.lockstat && deadline.is_some();
    let mut interrupted = false;
    let mut failures = Vec::new();
    let wakers = Wakers::new(cfg.threads);
    let turns = CpuTurns::when_needed(cfg.preemption, cfg.threads, completion_contexts());
    let (measured_s, deltas, cpu) = std::thread::scope(|s| {
        let mut handles = Vec::new();
        // With completion contexts (`completion.rs`) a request's tags (its own and those merged
        // into it) are completed there: the completion's half of the outside work and the credit.
        let mut contexts = Vec::new();
        let half_of = |row_pays_elevator: bool| {
            (cfg.outside_ns + if row_pays_elevator { cfg.elevator_ns } else { 0 }) / 2
        };
        let completion_half = half_of(deadline.is_some());
        let device = (cfg.completion == CompletionMode::Context).then(|| {
            let (device, queues) =
                Device::<(u64, Vec<u64>)>::new(completion_contexts(), cfg.threads);
            for (c, queue) in queues {
                let (clock, stop, completed, wakers, pinned) =
                    (&clock, &stop, &completed, &wakers, &pinned);
                let cpu = (!cpus.is_empty()).then(|| cpus[c % cpus.len()]);
                let context = std::thread::Builder::new().name(format!("completion-{c}"));
                let spawned = context.spawn_scoped(s, move || {
                    if cpu.is_some_and(|c| !pin_current_thread(c)) {
                        pinned.store(false, Ordering::Relaxed);
                    }
                    context_loop(queue, |item| {
                        complete_reference(item, completed, wakers, clock, completion_half, stop)
                    })
                });
                match spawned {
                    Ok(h) => contexts.push((c, h)),
                    Err(e) => failures.push(format!("cannot start completion context {c}: {e}")),
                }
            }
            device
        });
        for index in 0..cfg.threads {
            let (clock, stop, completed, gate, pinned, deadline) =
                (&clock, &stop, &completed, &gate, &pinned, deadline.as_ref());
            let cpu = (!cpus.is_empty()).then(|| cpus[index % cpus.len()]);
            let (wakers, turns) = (&wakers, turns.as_ref());
            let issuer = device.as_ref().map(|d| d.issuer(index, wakers));
            let job = std::thread::Builder::new().name(format!("job-{index}"));
            let spawned = job.spawn_scoped(s, move || {
                if cpu.is_some_and(|c| !pin_current_thread(c)) {
                    pinned.store(false, Ordering::Relaxed);
                }
                wakers.register(index);
                gate.wait();
                // With more jobs than CPUs and preemption only between requests: its turn.
                let mut turn = turns.map(|t| t.take(stop));
                let interrupt_point = |turn: &mut Option<Turn<'_>>| {
                    if let Some(turn) = turn {
                        turn.interrupt_point(stop);
                    }
                };
                let complete = |item| {
                    complete_reference(item, completed, wakers, clock, completion_half, stop)
                };
                let mut rng = SmallRng::seed_from_u64(
                    cfg.seed ^ (index as u64 + 1).wrapping_mul(0x9E37_79B9_7F4A_7C15),
                );
                let (op, bs) = (cfg.rw.op(), cfg.bs_sectors as u64);
                let region = DEVICE_SECTORS / cfg.threads as u64;
                let mut next_seq = region * index as u64;
                let mut tag = (index as u64) << OWNER_SHIFT;
                let mut next_sector = || {
                    if cfg.rw.sequential() {
                        let at = next_seq;
                        next_seq = if next_seq + bs >= region * (index as u64 + 1) {
                            region * index as u64
                        } else {
                            next_seq + bs
                        };
                        at
                    } else {
                        rng.random_range(0..DEVICE_SECTORS / bs) * bs
                    }
                };
                let depth = cfg.iodepth as u64;
                let in_flight =
                    |submitted: u64| submitted - completed[index].load(Ordering::Acquire);
                // With its whole depth in flight, the job serves this CPU's context's due
                // completions, then sleeps (its turn given up) until one of its own requests
                // completes, a completion waits in this context, or the run stops.
                let wait_for_room = |turn: &mut Option<Turn<'_>>,
                                     issuer: &Issuer<'_, (u64, Vec<u64>)>,
                                     submitted: u64| {
                    issuer.serve_before_idle(complete);
                    let ready = || {
                        in_flight(submitted) < depth
                            || issuer.has_pending()
                            || stop.load(Ordering::Relaxed)
                    };
                    sleep_off_turn(turn, stop, || wakers.wait(index, ready));
                };
                if let (None, Some(issuer)) = (deadline, &issuer) {
                    // The null device with completion contexts: a request is issued once the
                    // submission's half is spun, and completes in its context.
                    let mut submitted = 0u64;
                    while !stop.load(Ordering::Relaxed) {
                        interrupt_point(&mut turn);
                        // The interrupt point: this CPU's context's completions (`completion.rs`).
                        issuer.serve(complete);
                        while in_flight(submitted) < depth && !stop.load(Ordering::Relaxed) {
                            spin_for(clock, cfg.outside_ns / 2, stop);
                            std::hint::black_box(next_sector());
                            if issuer.issue((tag, Vec::new())).is_err() {
                                completed[index].fetch_add(1, Ordering::Release);
                            }
                            tag += 1;
                            submitted += 1;
                        }
                        wait_for_room(&mut turn, issuer, submitted);
                    }
                    lockstat::flush();
                    return;
                }
                let Some(dd) = deadline else {
                    while !stop.load(Ordering::Relaxed) {
                        interrupt_point(&mut turn);
                        // A whole queue depth is submitted, then completed: the null device
                        // completes each request as it is issued, so the depth changes nothing
                        // but the batching.
                        for _ in 0..cfg.iodepth {
                            let sector = next_sector();
                            spin_for(clock, cfg.outside_ns / 2, stop);
                            let request = RequestSpec {
                                sector,
                                sectors: cfg.bs_sectors,
                                op,
                                at_head: false,
                                tag,
                            };
                            tag += 1;
                            // The null device: the request is complete as soon as it is issued.
                            std::hint::black_box(request);
                            spin_for(clock, cfg.outside_ns / 2, stop);
                            completed[index].fetch_add(1, Ordering::Relaxed);
                        }
                    }
                    lockstat::flush();
                    return;
                };
                // mq-deadline: the job keeps `iodepth` of its own outstanding and dispatches for
                // whoever is next, as a variant's job does.
                let half = (cfg.outside_ns + cfg.elevator_ns) / 2;
                let mut submitted = 0u64;
                while !stop.load(Ordering::Relaxed) {
                    interrupt_point(&mut turn);
                    while submitted - completed[index].load(Ordering::Relaxed) < cfg.iodepth as u64
                    {
                        let request = DeadlineRequest {
                            sector: next_sector(),
                            sectors: cfg.bs_sectors,
                            op,
                            tag,
                        };
                        tag += 1;
                        spin_for(clock, half, stop);
                        if stop.load(Ordering::Relaxed) {
                            break;
                        }
                        if !dd.bio_merge(&request) {
                            dd.insert(&request, clock.now_ns());
                        }
                        submitted += 1;
                    }
                    if let Some(issuer) = &issuer {
                        // The interrupt point: this CPU's context's completions.
                        issuer.serve(complete);
                    }
                    match (dd.dispatch(clock.now_ns()), &issuer) {
                        (Some(done), Some(issuer)) => {
                            if let Err((tag, absorbed)) = issuer.issue((done.tag, done.absorbed)) {
                                for t in std::iter::once(tag).chain(absorbed) {
                                    completed[(t >> OWNER_SHIFT) as usize]
                                        .fetch_add(1, Ordering::Release);
                                }
                            }
                        }
                        (Some(done), None) => {
                            for t in std::iter::once(done.tag).chain(done.absorbed) {
                                completed[(t >> OWNER_SHIFT) as usize]
                                    .fetch_add(1, Ordering::Release);
                            }
                            spin_for(clock, half, stop);
                        }
                        (None, Some(issuer)) if in_flight(submitted) >= depth => {
                            wait_for_room(&mut turn, issuer, submitted);
                        }
                        (None, _) => std::thread::yield_now(),
                    }
                }
                drop(turn);
                drop(issuer);
                lockstat::flush();
            });
            match spawned {
                Ok(h) => handles.push(h),
                Err(e) => {
                    failures
                        .push(format!("cannot start job thread {index} of {}: {e}", cfg.threads));
                    stop.store(true, Ordering::Relaxed);
                    break;
                }
            }
        }
        gate.open();
        let t0 = Instant::now();
        if !failures.is_empty() || !sleep_until(t0 + cfg.ramp, interrupt) {
            interrupted = true;
        }
        if lockstat_on {
            lockstat::set_mode(cfg.lockstat_mode);
            lockstat::reset();
            lockstat::set_enabled(true);
        }
        let cpu_before = cpu_sample();
        let start = Instant::now();
        let before: Vec<u64> = completed.iter().map(|c| c.load(Ordering::Relaxed)).collect();
        if !interrupted && !sleep_until(start + cfg.duration, interrupt) {
            interrupted = true;
        }
        let after: Vec<u64> = completed.iter().map(|c| c.load(Ordering::Relaxed)).collect();
        let measured = start.elapsed().as_secs_f64();
        let cpu = cpu_before.zip(cpu_sample());
        if lockstat_on {
            lockstat::set_enabled(false);
        }
        stop.store(true, Ordering::Relaxed);
        for (i, h) in handles.into_iter().enumerate() {
            if let Err(payload) = h.join() {
                failures.push(format!("job {i} panicked: {}", panic_text(&*payload)));
            }
        }
        if let Some(d) = &device {
            d.drain_served(|item| {
                complete_reference(item, &completed, &wakers, &clock, completion_half, &stop)
            });
        }
        drop(device);
        for (c, h) in contexts {
            if let Err(payload) = h.join() {
                failures
                    .push(format!("completion context {c} panicked: {}", panic_text(&*payload)));
            }
        }
        (measured, before.iter().zip(&after).map(|(b, a)| a - b).collect::<Vec<u64>>(), cpu)
    });
    if let Some(first) = failures.first() {
        return Err(ExperimentError::run_failed(format!(
            "{} run failed: {first}",
            reference.name()
        )));
    }
    let lock_stats = lockstat_on.then(lockstat::snapshot);
    let secs = measured_s.max(1e-9);
    let (cpu_busy_pct, other_cpus, steal_cpus) = cpu_figures(cpu, secs, cfg.threads);
    let per_thread_kiops: Vec<f64> = deltas.iter().map(|&d| d as f64 / secs / 1e3).collect();
    let total: u64 = deltas.iter().sum();
    let requests = RequestCounters {
        inserted: total,
        dispatched: total,
        completed: total,
        ..RequestCounters::default()
    };
    // Nothing is grouped or counted, and every request the jobs were credited for completed; what
    // the deadline row left queued at the stop is dropped with it (it has no statistics to check).
    let consistency = Consistency {
        counters: requests,
        requests_balance: true,
        io_serviced_matches: true,
        ok: true,
        ..Consistency::default()
    };
    Ok(RunResult {
        variant: reference.name(),
        lock: cfg.lock,
        threads: cfg.threads,
        measured_s,
        kiops: per_thread_kiops.iter().sum(),
        per_thread_kiops,
        requests,
        consistent: true,
        consistency,
        groups_live_after: 0,
        queues_live_after: 0,
        churn_removals: 0,
        stats_reads: 0,
        interrupted,
        pinned: pinned.load(Ordering::Relaxed),
        cpu_busy_pct,
        other_cpus,
        steal_cpus,
        stopped_s: None,
        locks: lock_stats.as_ref().map_or_else(Vec::new, |l| l.summarize((secs * 1e9) as u64)),
        lock_stats,
        lockstat_toggle: None,
        turns: turns.is_some(),
    })
}

struct RunVisitor<'a> {
    cfg: &'a WorkloadConfig,
    interrupt: &'a AtomicBool,
}

impl VariantVisitor for RunVisitor<'_> {
    type Output = Result<RunResult, ExperimentError>;
    fn visit<P: StatsPolicy>(self) -> Self::Output {
        run::<P>(self.cfg, self.interrupt)
    }
}

/// Runs the workload against the variant called `name` (or the reference row `none`), after
/// validating the parameters.
pub fn run_named(
    name: &str,
    cfg: &WorkloadConfig,
    interrupt: &AtomicBool,
) -> Result<RunResult, ExperimentError> {
    super::stopped::watch();
    let started = std::time::Instant::now();
    let with_stops = |r: RunResult| {
        let stopped = super::stopped::stopped_between(started, std::time::Instant::now());
        RunResult { stopped_s: stopped.map(|d| d.as_secs_f64()), ..r }
    };
    if let Some(reference) = Reference::from_name(name) {
        cfg.validate_reference(reference)?;
        return run_reference(reference, cfg, interrupt).map(with_stops);
    }
    let (variant, insert) = split_entry(name)?;
    let with_path;
    let cfg = match insert {
        Some(insert) => {
            with_path = WorkloadConfig { insert, ..cfg.clone() };
            &with_path
        }
        None => cfg,
    };
    cfg.validate(variant)?;
    let result =
        schedlab_variants::visit(variant, RunVisitor { cfg, interrupt }).unwrap_or_else(|| {
            Err(ExperimentError::run_failed(format!("unknown variant `{variant}`")))
        });
    match (result, super::forced::forced()) {
        (Ok(_), Some(AfterWork::Run)) => {
            Err(ExperimentError::run_failed(super::forced::run_error()))
        }
        (Ok(r), Some(AfterWork::Check)) => Ok(with_stops(RunResult { consistent: false, ..r })),
        (result, _) => result.map(with_stops),
    }
}

/// A comparison entry: a variant name, optionally with an insert path after a `+`
/// (`queue-lock+lists`): the variant and the path it asks for.
pub fn split_entry(name: &str) -> Result<(&str, Option<InsertPathKind>), ExperimentError> {
    match name.split_once('+') {
        Some((variant, path)) => match InsertPathKind::from_name(path) {
            Some(insert) => Ok((variant, Some(insert))),
            None => {
                let known: Vec<_> = InsertPathKind::ALL.iter().map(|k| k.name()).collect();
                Err(ExperimentError::bad_input(format!(
                    "unknown insert path `{path}` in `{name}` (known: {})",
                    known.join(", ")
                )))
            }
        },
        None => Ok((name, None)),
    }
}

/// The entry name of `variant` on `insert` (`queue-lock+lists`; the plain name on `direct`).
pub fn entry_name(variant: &'static str, insert: InsertPathKind) -> &'static str {
    if insert == InsertPathKind::Direct {
        variant
    } else {
        // Leaked once per (variant, path) a comparison asks for: a handful of short strings.
        Box::leak(format!("{variant}+{insert}").into_boxed_str())
    }
}

/// How long a run waits for grace periods held up by pins of other threads of the process
/// (another run's, a test's running in parallel: the epoch collector is process-wide,
/// notes/invariants.md I3).
const RECLAMATION_WAIT: Duration = Duration::from_secs(10);

#[cfg(test)]
mod tests {
    use super::*;

    /// After a fair-lock run: more jobs than CPUs is named as such (not as other processes' load
    /// of 0.0 CPUs); jobs that took turns had no more runnable than CPUs and are not flagged;
    /// other processes' load is named when it is what oversubscribed the CPUs.
    #[test]
    fn after_a_run_the_fair_lock_warning_names_what_oversubscribed_the_cpus() {
        let cfg = WorkloadConfig {
            threads: 1,
            duration: Duration::from_millis(20),
            groups: 0,
            ..WorkloadConfig::default()
        };
        let r = run_named("no-stats", &cfg, &AtomicBool::new(false)).unwrap();
        assert!(!r.turns, "one job on its own takes no turns");
        let run = |threads, turns, others| RunResult {
            threads,
            turns,
            other_cpus: Some(others),
            lock: LockKind::FairSpin,
            ..r.clone()
        };
        let w = fair_lock_warning_on(&run(4, false, 0.0), 2).expect("4 jobs on 2 CPUs");
        assert!(w.contains("had 4 job(s) on 2 CPU(s)") && !w.contains("other processes"), "{w}");
        assert_eq!(fair_lock_warning_on(&run(4, true, 0.0), 2), None, "jobs that took turns");
        let w = fair_lock_warning_on(&run(4, true, 1.0), 2).expect("turns, but others took a CPU");
        assert!(
            w.contains("other processes used 1.0 CPU(s)") && w.contains("2 runnable job(s)"),
            "{w}"
        );
        let w = fair_lock_warning_on(&run(2, false, 1.0), 2).expect("others took a CPU");
        assert!(w.contains("other processes used 1.0 CPU(s)"), "{w}");
        assert_eq!(fair_lock_warning_on(&run(2, false, 0.1), 2), None);
        let parking = RunResult { lock: LockKind::ParkingLot, ..run(4, false, 1.0) };
        assert_eq!(fair_lock_warning_on(&parking, 2), None, "only the fair lock collapses");
    }

    #[test]
    fn the_fair_lock_warning_fires_only_when_runnable_threads_outnumber_cpus() {
        let cpus = allowed_cpus().len();
        assert!(
            fair_lock_warning_before(LockKind::FairSpin, 1, Some(100)).is_none(),
            "one job has no waiter"
        );
        assert!(fair_lock_warning_before(LockKind::ParkingLot, cpus + 8, Some(100)).is_none());
        let w = fair_lock_warning_before(LockKind::FairSpin, cpus + 1, Some(0))
            .expect("more jobs than CPUs");
        assert!(w.contains("--lock parking-lot"), "{w}");
        assert!(
            fair_lock_warning_before(LockKind::FairSpin, 2, Some(cpus)).is_some(),
            "others' runnable threads count"
        );
        if cpus >= 2 {
            assert!(fair_lock_warning_before(LockKind::FairSpin, 2, Some(cpus - 2)).is_none());
        }
    }
}
