//! The calibration harness: the workload's request cycle driven one call at a time, either on one
//! CPU or *relayed* between two CPUs that take turns, never running at the same time.
//!
//! A round of the pattern with `procs` processes (1 or 2), each call a step:
//!
//! ```text
//! insert p0 [insert p1]  dispatch [dispatch]  complete [complete]  credit [credit]  (empty dispatch)
//! ```
//!
//! - `procs = 1` on one CPU is the workload's one-job loop (insert, dispatch, complete, credit the
//!   owner): the critical sections as one thread meets them.
//! - `procs = 2` on one CPU ("pair, same CPU") queues two requests from two queues before
//!   dispatching, as two jobs do, and every step's data was last touched on this CPU.
//! - `procs = 2` relayed ("pair, relay"): process *i*'s steps run on a thread pinned to CPU *i*,
//!   and a step starts only when the previous one has finished (a turn counter). Nothing runs
//!   concurrently, nothing waits for a lock: each step only finds the lines the previous step
//!   wrote on the other CPU, as every acquisition does under a FIFO lock with two jobs, where
//!   nearly every acquisition changes owner (notes/results/2026-11-29-seed-table.md). The relay's excess over "pair, same
//!   CPU", divided by one measured line transfer, is the number of lines each step moves.
//!
//! An *empty dispatch* (nothing queued) ends each round when asked: with two or more jobs a
//! dispatcher sometimes finds the scheduler empty (another job took the request), and pays this.
//!
//! Steps are timed one by one with the TSC clock (`schedlab_core::RealClock`, a few ns a read)
//! unless `timed` is off (the untimed one-CPU pass gives the loop's own cost by difference). A
//! probe ([`Probe`]) can be switched on around the steps of one call kind only,
//! so that lock statistics are attributed to the call that took the lock.

use crate::driver::workload::{Rw, WorkloadConfig};
use crate::error::ExperimentError;
use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};
use schedlab_core::sync::{AtomicBool, AtomicU64, Ordering};
use schedlab_core::{
    Clock, Dispatched, Op, Process, RealClock, RequestSpec, SchedClock, SchedConfig, Scheduler,
    StatsPolicy,
};
use serde::{Deserialize, Serialize};
use std::time::Instant;

/// Switches measurement on around the steps of one call kind. The harness calls `on` just before
/// and `off` just after each such step, and `thread_done` on each of its threads before it ends.
pub trait Probe: Sync {
    fn on(&self);
    fn off(&self);
    fn thread_done(&self);
}

/// The calls of the request cycle, as the harness times them.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize, PartialOrd, Ord)]
#[serde(rename_all = "kebab-case")]
pub enum Call {
    Insert,
    Dispatch,
    Complete,
    /// The job loop's credit of the completed request to its owner (an atomic add on the owner's
    /// counter) and the load of its own counter: no lock, but a line another job writes.
    Credit,
    /// A dispatch that finds nothing queued.
    EmptyDispatch,
}

impl Call {
    pub const ALL: [Call; 5] =
        [Call::Insert, Call::Dispatch, Call::Complete, Call::Credit, Call::EmptyDispatch];

    pub fn name(self) -> &'static str {
        match self {
            Call::Insert => "insert",
            Call::Dispatch => "dispatch",
            Call::Complete => "complete",
            Call::Credit => "credit",
            Call::EmptyDispatch => "empty-dispatch",
        }
    }

    fn index(self) -> usize {
        self as usize
    }
}

/// Where the pattern's steps run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Placement {
    /// Every step on the calling thread, pinned to this CPU (when it can be).
    Same(usize),
    /// Process 0's steps on the first CPU, process 1's on the second, taking turns.
    Relay(usize, usize),
}

/// One pass of the pattern.
#[derive(Clone, Debug)]
pub struct PatternConfig {
    /// The workload whose scheduler is built (groups, weights, slots, rw, bs, insert path, lock).
    pub workload: WorkloadConfig,
    /// Processes (1 or 2).
    pub procs: usize,
    pub placement: Placement,
    /// Rounds measured, after `warmup` rounds.
    pub rounds: u64,
    pub warmup: u64,
    /// Time every step.
    pub timed: bool,
    /// End every round with a dispatch that finds nothing.
    pub empty_dispatch: bool,
    /// Stop measuring after this long (keeping the rounds done): on a busy machine a relay waits
    /// for its partner to be scheduled at every step, and a pass could take minutes.
    pub max_time: Option<std::time::Duration>,
}

/// What one pass measured.
#[derive(Clone, Debug, Default)]
pub struct PatternTimes {
    /// Per [`Call`]: every timed step, ns.
    pub samples: [Vec<u32>; 5],
    /// Wall time of the measured rounds, ns (on one CPU: the cycle, timing reads included).
    pub window_ns: f64,
    pub rounds: u64,
    /// Requests completed in the measured rounds.
    pub requests: u64,
    /// Steps that did not find what the pattern expects (a dispatch with nothing, an empty
    /// dispatch with something): the scheduler idled or reordered.
    pub anomalies: u64,
    /// One CPU: wall time of each chunk of [`CHUNK`] measured rounds, ns, and its requests.
    pub chunks: Vec<(u64, u64)>,
}

/// Rounds per chunk of an untimed pass.
pub const CHUNK: u64 = 32;

impl PatternTimes {
    /// Mean time of one call of `call`, ns, without the slowest [`TRIM`] of the steps (a step
    /// during which the thread was preempted or interrupted takes micro- to milliseconds, and one
    /// in a few thousand is enough to double a mean on a busy machine); NaN if none was timed.
    pub fn mean(&self, call: Call) -> f64 {
        trimmed_mean(&self.samples[call.index()])
    }

    /// The spread of the times of `call`: standard deviation ÷ mean of the same trimmed samples
    /// (NaN if fewer than two).
    pub fn cv(&self, call: Call) -> f64 {
        trimmed_cv(&self.samples[call.index()])
    }
}

/// The share of the slowest samples a trimmed mean leaves out.
pub const TRIM: f64 = 0.005;

/// The mean of `samples` without the slowest [`TRIM`] of them; NaN when empty.
pub fn trimmed_mean(samples: &[u32]) -> f64 {
    if samples.is_empty() {
        return f64::NAN;
    }
    let mut v = samples.to_vec();
    v.sort_unstable();
    let keep = ((v.len() as f64 * (1.0 - TRIM)).ceil() as usize).clamp(1, v.len());
    v[..keep].iter().map(|&x| x as f64).sum::<f64>() / keep as f64
}

/// Standard deviation ÷ mean of `samples` without the slowest [`TRIM`]; NaN with fewer than two.
pub fn trimmed_cv(samples: &[u32]) -> f64 {
    if samples.len() < 2 {
        return f64::NAN;
    }
    let mut v = samples.to_vec();
    v.sort_unstable();
    let keep = ((v.len() as f64 * (1.0 - TRIM)).ceil() as usize).clamp(2, v.len());
    let kept = &v[..keep];
    let mean = kept.iter().map(|&x| x as f64).sum::<f64>() / keep as f64;
    if mean <= 0.0 {
        return f64::NAN;
    }
    let var = kept.iter().map(|&x| (x as f64 - mean).powi(2)).sum::<f64>() / (keep - 1) as f64;
    var.sqrt() / mean
}

const OWNER_SHIFT: u32 = 40;
const DEVICE_SECTORS: u64 = 1 << 31;

use crate::driver::workload::build_groups;

fn op_of(rw: Rw) -> Op {
    match rw {
        Rw::RandRead | Rw::Read => Op::READ_SYNC,
        Rw::RandWrite | Rw::Write => Op::WRITE_SYNC,
    }
}

/// The request generator of one process (as the workload's job loop).
struct Requests {
    rng: SmallRng,
    index: u64,
    next_seq: u64,
    region: u64,
    submitted: u64,
    rw: Rw,
    bs: u32,
}

impl Requests {
    fn new(cfg: &WorkloadConfig, index: usize, procs: usize) -> Self {
        let region = DEVICE_SECTORS / procs as u64;
        Requests {
            rng: SmallRng::seed_from_u64(
                cfg.seed ^ (index as u64 + 1).wrapping_mul(0x9E37_79B9_7F4A_7C15),
            ),
            index: index as u64,
            next_seq: region * index as u64,
            region,
            submitted: 0,
            rw: cfg.rw,
            bs: cfg.bs_sectors,
        }
    }

    fn next(&mut self) -> RequestSpec {
        let bs = self.bs as u64;
        let sector = if matches!(self.rw, Rw::Read | Rw::Write) {
            let s = self.next_seq;
            self.next_seq += bs;
            if self.next_seq >= self.region * (self.index + 1) {
                self.next_seq = self.region * self.index;
            }
            s
        } else {
            self.rng.random_range(0..DEVICE_SECTORS / bs) * bs
        };
        let tag = (self.index << OWNER_SHIFT) | (self.submitted & ((1 << OWNER_SHIFT) - 1));
        self.submitted += 1;
        RequestSpec { sector, sectors: self.bs, op: op_of(self.rw), at_head: false, tag }
    }
}

/// One step of a round: the call and the process whose thread makes it.
#[derive(Clone, Copy)]
struct Step {
    call: Call,
    proc: usize,
}

fn round_steps(procs: usize, round: u64, empty_dispatch: bool) -> Vec<Step> {
    let mut steps = Vec::with_capacity(4 * procs + 1);
    for call in [Call::Insert, Call::Dispatch, Call::Complete, Call::Credit] {
        steps.extend((0..procs).map(|proc| Step { call, proc }));
    }
    if empty_dispatch {
        steps.push(Step { call: Call::EmptyDispatch, proc: (round % procs as u64) as usize });
    }
    steps
}

/// What one process's thread keeps between its steps.
struct ProcState<'s, P: StatsPolicy> {
    index: usize,
    process: Process<'s, P>,
    requests: Requests,
    dispatched: Option<Dispatched<'s, P>>,
    completed_tag: Option<u64>,
}

/// Runs one step; returns whether it found what the pattern expects.
fn run_step<'s, P: StatsPolicy>(
    sched: &'s Scheduler<P>,
    st: &mut ProcState<'s, P>,
    call: Call,
    counters: &[AtomicU64],
) -> (bool, u64) {
    match call {
        Call::Insert => {
            // The profile's submission (bio merge, depth limit, insert), as the job loop makes it.
            st.process.submit(st.requests.next());
            (true, 0)
        }
        Call::Dispatch => {
            st.dispatched = sched.dispatch();
            (st.dispatched.is_some(), 0)
        }
        Call::Complete => match st.dispatched.take() {
            Some(rq) => {
                let done = rq.complete();
                st.completed_tag = Some(done.tag);
                (true, 1 + done.absorbed.len() as u64)
            }
            None => (false, 0),
        },
        Call::Credit => {
            if let Some(tag) = st.completed_tag.take() {
                let owner = (tag >> OWNER_SHIFT) as usize % counters.len();
                counters[owner].fetch_add(1, Ordering::Release);
            }
            std::hint::black_box(counters[st.index].load(Ordering::Relaxed));
            (true, 0)
        }
        Call::EmptyDispatch => match sched.dispatch() {
            None => (true, 0),
            Some(rq) => {
                let done = rq.complete();
                (false, 1 + done.absorbed.len() as u64)
            }
        },
    }
}

/// Per-thread accumulator of one pass.
#[derive(Default)]
struct Acc {
    samples: [Vec<u32>; 5],
    anomalies: u64,
    requests: u64,
    /// Untimed passes: wall time of each chunk of rounds, ns, and the requests in it.
    chunks: Vec<(u64, u64)>,
}

impl Acc {
    fn add(&mut self, other: &Acc) {
        for i in 0..5 {
            self.samples[i].extend_from_slice(&other.samples[i]);
        }
        self.anomalies += other.anomalies;
        self.requests += other.requests;
    }
}

#[allow(clippy::too_many_arguments)]
fn do_step<'s, P: StatsPolicy>(
    sched: &'s Scheduler<P>,
    st: &mut ProcState<'s, P>,
    step: Step,
    counters: &[AtomicU64],
    clock: &RealClock,
    timed: bool,
    probe: Option<(Call, &dyn Probe)>,
    measuring: bool,
    acc: &mut Acc,
) {
    let probed = measuring && probe.is_some_and(|(c, _)| c == step.call);
    if probed {
        probe.expect("probed").1.on();
    }
    let t0 = if timed { clock.now_ns() } else { 0 };
    let (expected, completed) = run_step(sched, st, step.call, counters);
    let t1 = if timed { clock.now_ns() } else { 0 };
    if probed {
        probe.expect("probed").1.off();
    }
    if measuring {
        if timed {
            acc.samples[step.call.index()].push(t1.saturating_sub(t0).min(u32::MAX as u64) as u32);
        }
        acc.anomalies += (!expected) as u64;
        acc.requests += completed;
    }
}

/// Runs one pass of the pattern for variant `P`. `probe`: switched on around the steps of one call
/// kind during the measured rounds. Stops early (returning what it measured) when `interrupt` is set.
pub fn run_pattern<P: StatsPolicy>(
    cfg: &PatternConfig,
    probe: Option<(Call, &dyn Probe)>,
    interrupt: &AtomicBool,
) -> Result<PatternTimes, ExperimentError> {
    if !(1..=2).contains(&cfg.procs) {
        return Err(ExperimentError::run_failed(format!(
            "the calibration pattern takes 1 or 2 processes, not {}",
            cfg.procs
        )));
    }
    let w = &cfg.workload;
    let sched_cfg = SchedConfig {
        slots: w.slots,
        slice_idle_ns: 0,
        insert: w.insert,
        profile: w.kernel,
        ..SchedConfig::default()
    };
    let sched = Scheduler::<P>::new(w.lock, sched_cfg, SchedClock::real());
    let groups = build_groups(&sched, w)?;
    let group_of =
        |i: usize| if groups.is_empty() { sched.root() } else { groups[i % groups.len()] };
    let counters: Vec<AtomicU64> = (0..cfg.procs).map(|_| AtomicU64::new(0)).collect();
    let clock = RealClock::new();
    let total_rounds = cfg.warmup + cfg.rounds;
    let mut acc = Acc::default();
    let window_ns;
    match cfg.placement {
        Placement::Same(cpu) => {
            let _pin = super::probes::PinGuard::pin(cpu);
            let mut states: Vec<ProcState<'_, P>> = (0..cfg.procs)
                .map(|i| -> Result<_, ExperimentError> {
                    Ok(ProcState {
                        index: i,
                        process: sched.spawn_process(group_of(i)).map_err(|e| {
                            ExperimentError::run_failed(format!("cannot spawn process {i}: {e}"))
                        })?,
                        requests: Requests::new(w, i, cfg.procs),
                        dispatched: None,
                        completed_tag: None,
                    })
                })
                .collect::<Result<_, _>>()?;
            let steps = [
                round_steps(cfg.procs, 0, cfg.empty_dispatch),
                round_steps(cfg.procs, 1, cfg.empty_dispatch),
            ];
            let mut start = Instant::now();
            let mut rounds_done = 0;
            let mut chunk_start = clock.now_ns();
            let mut chunk_requests = acc.requests;
            let began = Instant::now();
            for round in 0..total_rounds {
                if round % 64 == 0
                    && (interrupt.load(Ordering::Relaxed)
                        || cfg.max_time.is_some_and(|m| began.elapsed() > m))
                {
                    break;
                }
                let measuring = round >= cfg.warmup;
                if round == cfg.warmup {
                    start = Instant::now();
                }
                if measuring && (round - cfg.warmup) % CHUNK == 0 {
                    let now = clock.now_ns();
                    if round > cfg.warmup {
                        acc.chunks.push((now - chunk_start, acc.requests - chunk_requests));
                    }
                    chunk_start = now;
                    chunk_requests = acc.requests;
                }
                for &step in &steps[(round % 2) as usize] {
                    do_step(
                        &sched,
                        &mut states[step.proc],
                        step,
                        &counters,
                        &clock,
                        cfg.timed,
                        probe,
                        measuring,
                        &mut acc,
                    );
                }
                if measuring {
                    rounds_done += 1;
                }
            }
            window_ns = start.elapsed().as_nanos() as f64;
            if let Some((_, p)) = probe {
                p.thread_done();
            }
            drop(states);
            Ok(finish(acc, window_ns, rounds_done))
        }
        Placement::Relay(a, b) => {
            let turn = AtomicU64::new(0);
            let stop = AtomicBool::new(false);
            let steps_per_round = round_steps(cfg.procs, 0, cfg.empty_dispatch).len() as u64;
            let start_ns = AtomicU64::new(0);
            let end_ns = AtomicU64::new(0);
            let began = Instant::now();
            let results: Vec<Result<(Acc, u64), ExperimentError>> = std::thread::scope(|s| {
                let handles: Vec<_> = [a, b]
                    .into_iter()
                    .enumerate()
                    .map(|(me, cpu)| {
                        let (sched, counters, turn, stop, clock, start_ns, end_ns, began) =
                            (&sched, &counters, &turn, &stop, &clock, &start_ns, &end_ns, &began);
                        let group = group_of(me);
                        s.spawn(move || -> Result<(Acc, u64), ExperimentError> {
                            let _pin = super::probes::PinGuard::pin(cpu);
                            let process = match sched.spawn_process(group) {
                                Ok(p) => p,
                                Err(e) => {
                                    // The partner must not wait for this thread's turns.
                                    stop.store(true, Ordering::Relaxed);
                                    return Err(ExperimentError::run_failed(format!(
                                        "cannot spawn process {me}: {e}"
                                    )));
                                }
                            };
                            let mut st = ProcState {
                                index: me,
                                process,
                                requests: Requests::new(w, me, 2),
                                dispatched: None,
                                completed_tag: None,
                            };
                            let mut acc = Acc::default();
                            let mut rounds_done = 0;
                            let mut index = 0u64;
                            let steps = [
                                round_steps(2, 0, cfg.empty_dispatch),
                                round_steps(2, 1, cfg.empty_dispatch),
                            ];
                            'rounds: for round in 0..total_rounds {
                                let measuring = round >= cfg.warmup;
                                for &step in &steps[(round % 2) as usize] {
                                    if step.proc == me {
                                        // Wait for this step's turn (spinning; yielding now and then, so
                                        // that a preempted partner gets its CPU back on a busy machine).
                                        let mut polls = 0u32;
                                        while turn.load(Ordering::Acquire) != index {
                                            if stop.load(Ordering::Relaxed) {
                                                break 'rounds;
                                            }
                                            std::hint::spin_loop();
                                            polls = polls.wrapping_add(1);
                                            // Often enough that a partner preempted by a
                                            // neighbour's process gets its CPU back soon; the
                                            // wait is outside every timed step.
                                            if polls % 64 == 0 {
                                                std::thread::yield_now();
                                            }
                                        }
                                        if index == cfg.warmup * steps_per_round {
                                            start_ns.store(clock.now_ns(), Ordering::Relaxed);
                                        }
                                        if round % 16 == 0
                                            && (interrupt.load(Ordering::Relaxed)
                                                || cfg
                                                    .max_time
                                                    .is_some_and(|m| began.elapsed() > m))
                                        {
                                            stop.store(true, Ordering::Relaxed);
                                            break 'rounds;
                                        }
                                        do_step(
                                            sched, &mut st, step, counters, clock, cfg.timed,
                                            probe, measuring, &mut acc,
                                        );
                                        if index + 1 == total_rounds * steps_per_round {
                                            end_ns.store(clock.now_ns(), Ordering::Relaxed);
                                        }
                                        turn.store(index + 1, Ordering::Release);
                                    }
                                    index += 1;
                                }
                                if measuring {
                                    rounds_done += 1;
                                }
                            }
                            // Anything still dispatched is completed before the process goes.
                            if let Some(rq) = st.dispatched.take() {
                                drop(rq.complete());
                            }
                            if let Some((_, p)) = probe {
                                p.thread_done();
                            }
                            drop(st);
                            Ok((acc, rounds_done))
                        })
                    })
                    .collect();
                handles
                    .into_iter()
                    .map(|h| {
                        h.join().unwrap_or_else(|_| {
                            Err(ExperimentError::run_failed("a relay thread panicked"))
                        })
                    })
                    .collect()
            });
            let mut rounds = u64::MAX;
            for r in results {
                let (a, n) = r?;
                acc.add(&a);
                rounds = rounds.min(n);
            }
            let (s0, s1) = (start_ns.load(Ordering::Relaxed), end_ns.load(Ordering::Relaxed));
            window_ns = s1.saturating_sub(s0) as f64;
            Ok(finish(acc, window_ns, rounds))
        }
    }
}

fn finish(acc: Acc, window_ns: f64, rounds: u64) -> PatternTimes {
    PatternTimes {
        samples: acc.samples,
        window_ns,
        rounds,
        requests: acc.requests,
        anomalies: acc.anomalies,
        chunks: acc.chunks,
    }
}

/// How long the workload's one-job loop takes per request on one CPU, untimed: the cycle the
/// timed steps are subtracted from to find the loop's own cost.
pub fn untimed_cycle_ns<P: StatsPolicy>(
    workload: &WorkloadConfig,
    cpu: usize,
    rounds: u64,
    interrupt: &AtomicBool,
) -> Result<f64, ExperimentError> {
    let cfg = PatternConfig {
        workload: workload.clone(),
        procs: 1,
        placement: Placement::Same(cpu),
        rounds,
        warmup: rounds / 10,
        timed: false,
        empty_dispatch: false,
        max_time: Some(std::time::Duration::from_millis(300)),
    };
    let t = run_pattern::<P>(&cfg, None, interrupt)?;
    // Per-request time of each chunk; the slowest 5 % of chunks (preempted) left out.
    let per: Vec<u32> = t
        .chunks
        .iter()
        .filter(|(_, r)| *r > 0)
        .map(|(ns, r)| (*ns as f64 / *r as f64 * 16.0).min(u32::MAX as f64) as u32)
        .collect();
    if per.is_empty() {
        return Ok(f64::NAN);
    }
    let mut v = per;
    v.sort_unstable();
    let keep = ((v.len() as f64 * 0.95).ceil() as usize).clamp(1, v.len());
    Ok(v[..keep].iter().map(|&x| x as f64).sum::<f64>() / keep as f64 / 16.0)
}
