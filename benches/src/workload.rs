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

use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};
use schedlab_core::sync::{Arc, AtomicBool, AtomicU64, Lock, LockKind, Ordering};
use schedlab_core::{
    Consistency, GroupId, Op, RequestCounters, RequestSpec, SchedClock, SchedConfig, Scheduler, StatsPolicy,
};
use schedlab_variants::VariantVisitor;
use serde::Serialize;
use std::time::{Duration, Instant};

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
            slots: 8,
            seed: 1,
            rw: Rw::RandRead,
            bs_sectors: 8,
            iodepth: 1,
            outside_ns: 0,
            slice_idle_ns: 0,
        }
    }
}

impl WorkloadConfig {
    /// Checks the parameters; the message is one line for the user.
    pub fn validate(&self, variant: &str) -> Result<(), String> {
        let info = schedlab_variants::info(variant).ok_or_else(|| {
            let names: Vec<_> = schedlab_variants::ALL.iter().map(|v| v.name).collect();
            format!("unknown variant `{variant}` (known: {})", names.join(", "))
        })?;
        if self.threads == 0 {
            return Err("--threads must be at least 1".into());
        }
        if self.threads > 1024 {
            return Err(format!("--threads {} is more than 1024", self.threads));
        }
        if self.duration.is_zero() {
            return Err("--duration must be greater than zero".into());
        }
        if let Some(w) = self.weights.iter().find(|w| !(1..=1000).contains(*w)) {
            return Err(format!("group weight must be 1..=1000, got {w}"));
        }
        if self.weights.is_empty() {
            return Err("at least one group weight is needed".into());
        }
        if !(self.churn_per_sec.is_finite() && self.churn_per_sec >= 0.0) {
            return Err(format!("--churn must be a rate >= 0, got {}", self.churn_per_sec));
        }
        if self.churn_per_sec > 0.0 && !info.safe_under_removal {
            return Err(format!(
                "variant `{variant}` is unsafe under group removal: it cannot run with --churn (use it only without churn)"
            ));
        }
        if self.churn_per_sec > 0.0 && self.groups == 0 {
            return Err("--churn needs --groups of at least 1".into());
        }
        if !(1..=64).contains(&self.slots) {
            return Err(format!("--slots must be 1..=64, got {}", self.slots));
        }
        if self.bs_sectors == 0 || self.bs_sectors > 256 {
            return Err(format!("block size must be 512 B to 128 KiB, got {} sectors", self.bs_sectors));
        }
        if self.iodepth == 0 || self.iodepth > 1024 {
            return Err(format!("--iodepth must be 1..=1024, got {}", self.iodepth));
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
    pub interrupted: bool,
}

const DEVICE_SECTORS: u64 = 1 << 31; // 1 TiB
const OWNER_SHIFT: u32 = 40;

/// Per-job state shared with the others (completions credit the owner).
struct Job {
    completed_own: AtomicU64,
    move_to: Lock<Option<GroupId>>,
    move_pending: AtomicBool,
}

fn spin_for(clock: &SchedClock, ns: u64) {
    if ns == 0 {
        return;
    }
    let end = clock.now_ns() + ns;
    while clock.now_ns() < end {
        std::hint::spin_loop();
    }
}

/// Builds the initial hierarchy: the first half of the groups under the root, the rest under
/// them in turn (so the tree has the root and two more levels).
fn build_groups<P: StatsPolicy>(sched: &Scheduler<P>, cfg: &WorkloadConfig) -> Vec<GroupId> {
    let root = sched.root();
    let level1 = cfg.groups.div_ceil(2);
    let mut groups = Vec::with_capacity(cfg.groups);
    for i in 0..cfg.groups {
        let parent = if i < level1 { root } else { groups[(i - level1) % level1] };
        let weight = cfg.weights[i % cfg.weights.len()];
        groups.push(sched.create_group(parent, weight).expect("valid parent and weight"));
    }
    groups
}

fn credit(jobs: &[Job], tag: u64, absorbed: &[u64]) {
    jobs[(tag >> OWNER_SHIFT) as usize].completed_own.fetch_add(1, Ordering::Release);
    for t in absorbed {
        jobs[(t >> OWNER_SHIFT) as usize].completed_own.fetch_add(1, Ordering::Release);
    }
}

fn dispatch_and_complete<P: StatsPolicy>(sched: &Scheduler<P>, jobs: &[Job], outside_ns: u64) -> bool {
    match sched.dispatch() {
        Some(rq) => {
            let done = rq.complete();
            credit(jobs, done.tag, &done.absorbed);
            spin_for(sched.clock(), outside_ns / 2);
            true
        }
        None => false,
    }
}

fn job_loop<P: StatsPolicy>(
    index: usize,
    sched: Arc<Scheduler<P>>,
    group: GroupId,
    cfg: &WorkloadConfig,
    jobs: &[Job],
    stop: &AtomicBool,
) {
    let process = sched.spawn_process(group).expect("group exists at start");
    let mut rng = SmallRng::seed_from_u64(cfg.seed ^ (index as u64 + 1).wrapping_mul(0x9E37_79B9_7F4A_7C15));
    let op = cfg.rw.op();
    let bs = cfg.bs_sectors as u64;
    let region = DEVICE_SECTORS / cfg.threads as u64;
    let mut next_seq = region * index as u64;
    let mut submitted: u64 = 0;
    let me = &jobs[index];
    let mut idle_polls = 0u32;
    while !stop.load(Ordering::Relaxed) {
        // A cgroup move takes effect when the job has nothing outstanding: then every deferred
        // statistics update of its requests has been applied (the dispatcher applies them before
        // completing, and a job counts a request done only after its completion), so the move
        // cannot split a request's io_add and io_remove between two groups. (The kernel moves a
        // queue with requests pending and lets `queued` drift; see notes/kernel-map.md.)
        if me.move_pending.load(Ordering::Relaxed) && submitted == me.completed_own.load(Ordering::Acquire) {
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
            spin_for(sched.clock(), cfg.outside_ns / 2);
            process.insert(RequestSpec { sector, sectors: cfg.bs_sectors, op, at_head: false, tag });
            submitted += 1;
        }
        if dispatch_and_complete(&sched, jobs, cfg.outside_ns) {
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
    // Drain: stop submitting, help dispatch until this job's own requests are done.
    while submitted > me.completed_own.load(Ordering::Relaxed) {
        if !dispatch_and_complete(&sched, jobs, 0) {
            std::thread::yield_now();
        }
    }
    drop(process);
}

fn churn_loop<P: StatsPolicy>(sched: &Scheduler<P>, cfg: &WorkloadConfig, jobs: &[Job], stop: &AtomicBool) -> u64 {
    let mut rng = SmallRng::seed_from_u64(cfg.seed ^ 0xC0FF_EE00);
    let period = Duration::from_secs_f64(1.0 / cfg.churn_per_sec);
    let mut next = Instant::now() + period;
    let mut removals = 0;
    while !stop.load(Ordering::Relaxed) {
        let now = Instant::now();
        if now < next {
            std::thread::sleep((next - now).min(Duration::from_millis(10)));
            continue;
        }
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
        let parent = parents[rng.random_range(0..parents.len())].id;
        let weight = cfg.weights[rng.random_range(0..cfg.weights.len())];
        if let Ok(new_group) = sched.create_group(parent, weight) {
            let job = &jobs[rng.random_range(0..jobs.len())];
            *job.move_to.lock() = Some(new_group);
            job.move_pending.store(true, Ordering::Relaxed);
        }
    }
    removals
}

/// Sleeps until `deadline` or until `stop` is set; returns false if stopped early.
fn sleep_until(deadline: Instant, stop: &AtomicBool) -> bool {
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

/// Runs the workload against variant `P`. `interrupt` ends the run early (Ctrl-C): the measured
/// window is then what elapsed, and the end-of-run checks still run.
pub fn run<P: StatsPolicy>(cfg: &WorkloadConfig, interrupt: &AtomicBool) -> RunResult {
    let sched_cfg = SchedConfig { slots: cfg.slots, slice_idle_ns: cfg.slice_idle_ns, ..SchedConfig::default() };
    let sched = Scheduler::<P>::new(cfg.lock, sched_cfg, SchedClock::real());
    let census = sched.census();
    let groups = build_groups(&sched, cfg);
    let jobs: Vec<Job> = (0..cfg.threads)
        .map(|_| Job { completed_own: AtomicU64::new(0), move_to: Lock::new(LockKind::FairSpin, None), move_pending: AtomicBool::new(false) })
        .collect();
    let stop = AtomicBool::new(false);
    let mut interrupted = false;
    let (measured_s, deltas, churn_removals) = std::thread::scope(|s| {
        let mut handles = Vec::new();
        for i in 0..cfg.threads {
            let group = if groups.is_empty() { sched.root() } else { groups[i % groups.len()] };
            let (sched, jobs, stop) = (sched.clone(), &jobs, &stop);
            handles.push(s.spawn(move || job_loop(i, sched, group, cfg, jobs, stop)));
        }
        let churner = (cfg.churn_per_sec > 0.0).then(|| {
            let (sched, jobs, stop) = (&sched, &jobs, &stop);
            s.spawn(move || churn_loop(sched, cfg, jobs, stop))
        });
        let t0 = Instant::now();
        if !sleep_until(t0 + cfg.ramp, interrupt) {
            interrupted = true;
        }
        let start = Instant::now();
        let before: Vec<u64> = jobs.iter().map(|j| j.completed_own.load(Ordering::Relaxed)).collect();
        if !interrupted && !sleep_until(start + cfg.duration, interrupt) {
            interrupted = true;
        }
        let after: Vec<u64> = jobs.iter().map(|j| j.completed_own.load(Ordering::Relaxed)).collect();
        let measured = start.elapsed().as_secs_f64();
        stop.store(true, Ordering::Relaxed);
        for h in handles {
            h.join().expect("a job thread panicked");
        }
        let removals = churner.map_or(0, |h| h.join().expect("the churn thread panicked"));
        let deltas: Vec<u64> = before.iter().zip(&after).map(|(b, a)| a - b).collect();
        (measured, deltas, removals)
    });
    // Anything a job left behind (another job's request) is drained here.
    while let Some(rq) = sched.dispatch() {
        let done = rq.complete();
        credit(&jobs, done.tag, &done.absorbed);
    }
    P::quiesce();
    let consistency = sched.check_consistency();
    let requests = consistency.counters;
    drop(sched);
    P::quiesce();
    let secs = measured_s.max(1e-9);
    let per_thread_kiops: Vec<f64> = deltas.iter().map(|&d| d as f64 / secs / 1e3).collect();
    RunResult {
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
        interrupted,
    }
}

struct RunVisitor<'a> {
    cfg: &'a WorkloadConfig,
    interrupt: &'a AtomicBool,
}

impl VariantVisitor for RunVisitor<'_> {
    type Output = RunResult;
    fn visit<P: StatsPolicy>(self) -> RunResult {
        run::<P>(self.cfg, self.interrupt)
    }
}

/// Runs the workload against the variant called `name`, after validating the parameters.
pub fn run_named(name: &str, cfg: &WorkloadConfig, interrupt: &AtomicBool) -> Result<RunResult, String> {
    cfg.validate(name)?;
    Ok(schedlab_variants::visit(name, RunVisitor { cfg, interrupt }).expect("validated name"))
}
