//! Policy experiments in virtual time: fio-like jobs against the scheduler core and a device
//! model, as a deterministic discrete-event simulation.
//!
//! The scheduler is the same [`Scheduler`] the real-time workload drives; only its clock differs
//! ([`SchedClock::manual`]). The loop keeps a heap of timed events (a device completion, a job
//! ending its think time) and the scheduler's idle-timer deadline ([`Scheduler::idle_deadline`]);
//! it moves the clock to whichever comes first, runs it (a completion through
//! [`Dispatched::complete`], the timer through [`Scheduler::run_idle_timer`]), and then fills the
//! device from [`Scheduler::dispatch`] while the device takes requests. Nothing reads the real
//! clock, every random draw comes from a generator seeded from the run's seed, and ties are
//! broken by insertion order: the same configuration and seed give the same result, bit for bit.
//!
//! ## Bring-up: where the idling decision is taken
//!
//! [`bring_up`] replays the kernel's order: the request queue is allocated (rotational, as every
//! fresh queue is), the scheduler is created (elevator init), the driver probes the device and
//! sets the non-rotational flag, and the queue is registered. The CFQ patch in
//! `../shared/seeds/002_3241a697b45d926b.txt` first chose `slice_idle` at init
//! ([`IdlingDecision::Init`], [`slice_idle_at_init`]): before the probe, so every disk looked
//! rotational and SSDs kept idling. The fix moved the choice to a hook run at registration
//! ([`IdlingDecision::Registered`], [`registered_queue`]), the default here. An explicit
//! `slice_idle` (the sysfs knob) is written after registration and wins over both.
//!
//! ## Jobs (fio's terms)
//!
//! `jobs` processes, each with its own queue, keep `iodepth` requests of `bs` outstanding
//! (libaio-style: a completion frees a slot, refilled after `think`). `rw` picks the offsets:
//! random ones are uniform over the device, sequential ones walk the job's own slice of it.
//! Jobs are spread round-robin over `groups` sibling groups under the root, with `weights` in
//! turn. Numbers count what completes within `runtime`; latency is completion minus
//! submission (time in the scheduler plus time on the device, fio's `lat`). After `runtime` the
//! jobs stop submitting and the run drains, so the end-of-run conservation check can run.
//!
//! ## Limits
//!
//! No CPU cost: submission, dispatch and completion take no virtual time. Writes cost the same
//! as reads. The SSD has no internal queue and no garbage collection; the disk serves one request
//! at a time in the scheduler's order (no NCQ reordering, no track cache beyond the sequential
//! case).

mod device;

pub use device::{Device, DeviceModel, HddModel, SsdModel, CAPACITY_SECTORS};

use crate::driver::forced::{self, AfterWork};
use crate::driver::workload::Rw;
use crate::error::ExperimentError;
use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};
use schedlab_core::sync::{Arc, AtomicBool, Ordering};
use schedlab_core::{
    Dispatched, InsertOutcome, LockKind, ManualClock, Op, RequestCounters, RequestSpec, SchedClock,
    SchedConfig, Scheduler, StatsPolicy,
};
use schedlab_variants::VariantVisitor;
use serde::Serialize;
use std::cmp::Reverse;
use std::collections::BinaryHeap;

/// BFQ's (and CFQ's) default `slice_idle`: 8 ms.
pub const BFQ_SLICE_IDLE_NS: u64 = 8_000_000;

/// The run stops with an error past this many dispatched requests (a null device with a tiny
/// think time would otherwise run for hours).
pub const MAX_REQUESTS: u64 = 20_000_000;

/// When the scheduler chooses `slice_idle` from the device's rotational flag.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum IdlingDecision {
    /// In the queue-registered hook, after the probe (the kernel fix).
    #[default]
    Registered,
    /// At scheduler creation, before the probe (the first patch, which did nothing on real disks).
    Init,
}

impl IdlingDecision {
    pub fn from_name(name: &str) -> Option<Self> {
        match name {
            "registered" => Some(IdlingDecision::Registered),
            "init" => Some(IdlingDecision::Init),
            _ => None,
        }
    }
}

/// Who set the `slice_idle` a run used.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum SliceIdleSource {
    Registered,
    Init,
    /// The user (`--slice-idle`), after registration.
    Explicit,
}

/// One simulation's parameters.
#[derive(Clone, Debug, Serialize)]
pub struct SimConfig {
    pub device: DeviceModel,
    /// Processes (fio's numjobs), one queue each.
    pub jobs: usize,
    /// Requests each job keeps outstanding.
    pub iodepth: usize,
    pub rw: Rw,
    /// Request size in 512-byte sectors.
    pub bs_sectors: u32,
    /// Virtual time measured, ns.
    pub runtime_ns: u64,
    /// Virtual time between a completion and the job's next submission in that slot, ns.
    pub think_ns: u64,
    /// Sibling groups under the root (0: every job in the root group).
    pub groups: usize,
    /// Group weights, assigned in turn.
    pub weights: Vec<u64>,
    /// `slice_idle` set explicitly after registration; `None`: the scheduler decides.
    pub slice_idle_ns: Option<u64>,
    pub decision: IdlingDecision,
    pub seed: u64,
}

impl Default for SimConfig {
    fn default() -> Self {
        SimConfig {
            device: DeviceModel::Ssd(SsdModel::default()),
            jobs: 10,
            iodepth: 64,
            rw: Rw::RandRead,
            bs_sectors: 8,
            runtime_ns: 10_000_000_000,
            think_ns: 0,
            groups: 0,
            weights: vec![100],
            slice_idle_ns: None,
            decision: IdlingDecision::Registered,
            seed: 1,
        }
    }
}

impl SimConfig {
    /// Checks the parameters; the message is one line for the user.
    pub fn validate(&self, variant: &str) -> Result<(), ExperimentError> {
        if schedlab_variants::info(variant).is_none() {
            let names: Vec<_> = schedlab_variants::ALL.iter().map(|v| v.name).collect();
            let message = format!("unknown variant `{variant}` (known: {})", names.join(", "));
            return Err(ExperimentError::bad_input(message));
        }
        self.device.validate()?;
        if !(1..=4096).contains(&self.jobs) {
            let message = format!("--jobs must be 1..=4096, got {}", self.jobs);
            return Err(ExperimentError::bad_input(message));
        }
        if !(1..=4096).contains(&self.iodepth) {
            let message = format!("--iodepth must be 1..=4096, got {}", self.iodepth);
            return Err(ExperimentError::bad_input(message));
        }
        if self.jobs * self.iodepth > 1 << 20 {
            let (most, got) = (1 << 20, self.jobs * self.iodepth);
            let message = format!("--jobs x --iodepth must be at most {most}, got {got}");
            return Err(ExperimentError::bad_input(message));
        }
        if self.bs_sectors == 0 || self.bs_sectors > 256 {
            let sectors = self.bs_sectors;
            let message = format!("block size must be 512 B to 128 KiB, got {sectors} sectors");
            return Err(ExperimentError::bad_input(message));
        }
        if self.runtime_ns == 0 {
            return Err(ExperimentError::bad_input("--runtime must be greater than zero"));
        }
        if self.runtime_ns > 3_600_000_000_000 {
            let message = "--runtime must be at most 3600 virtual seconds";
            return Err(ExperimentError::bad_input(message));
        }
        if self.groups > 1000 {
            let message = format!("--groups must be at most 1000, got {}", self.groups);
            return Err(ExperimentError::bad_input(message));
        }
        if self.weights.is_empty() {
            return Err(ExperimentError::bad_input("at least one group weight is needed"));
        }
        if let Some(w) = self.weights.iter().find(|w| !(1..=1000).contains(*w)) {
            let message = format!("group weight must be 1..=1000, got {w}");
            return Err(ExperimentError::bad_input(message));
        }
        if self.device == DeviceModel::Null && self.think_ns == 0 {
            let message =
                "--device null with no --think would complete requests endlessly at time 0: \
                           give a think time";
            return Err(ExperimentError::bad_input(message));
        }
        Ok(())
    }

    fn op(&self) -> Op {
        match self.rw {
            Rw::RandRead | Rw::Read => Op::READ_SYNC,
            // O_DIRECT writes are marked sync.
            Rw::RandWrite | Rw::Write => Op::WRITE_SYNC,
        }
    }

    fn sequential(&self) -> bool {
        matches!(self.rw, Rw::Read | Rw::Write)
    }
}

/// The first patch: `slice_idle` chosen when the scheduler is created, from whatever the queue's
/// rotational flag says then.
pub fn slice_idle_at_init(device: &Device) -> u64 {
    if device.rotational() {
        BFQ_SLICE_IDLE_NS
    } else {
        0
    }
}

/// The fix (`elevator_registered_fn`): run once the queue is registered, after the probe; a
/// non-rotational device gets no idling, a rotational one keeps the default.
pub fn registered_queue<P: StatsPolicy>(sched: &Scheduler<P>, device: &Device) {
    if !device.rotational() {
        sched.set_slice_idle(0);
    }
}

/// A scheduler on a virtual clock in front of a probed device.
pub struct BroughtUp<P: StatsPolicy> {
    pub sched: Arc<Scheduler<P>>,
    pub clock: Arc<ManualClock>,
    pub device: Device,
    pub source: SliceIdleSource,
}

/// Allocates the queue, creates the scheduler, probes the device, registers the queue, in the
/// kernel's order, taking the idling decision where `decision` says; `explicit` is then written
/// as the sysfs knob would be.
pub fn bring_up<P: StatsPolicy>(
    model: DeviceModel,
    device_seed: u64,
    decision: IdlingDecision,
    explicit: Option<u64>,
) -> BroughtUp<P> {
    // blk_alloc_queue: the flag is clear, the device looks rotational.
    let mut device = Device::new(model, device_seed);
    // elevator init.
    let at_init = match decision {
        IdlingDecision::Init => slice_idle_at_init(&device),
        IdlingDecision::Registered => BFQ_SLICE_IDLE_NS,
    };
    let (clock, hand) = SchedClock::manual(0);
    let sched = Scheduler::<P>::new(
        LockKind::FairSpin,
        SchedConfig { slice_idle_ns: at_init, ..SchedConfig::default() },
        clock,
    );
    // The driver's probe sets the rotational flag.
    device.probe();
    // elv_register_queue.
    let mut source = SliceIdleSource::Init;
    if decision == IdlingDecision::Registered {
        registered_queue(&sched, &device);
        source = SliceIdleSource::Registered;
    }
    if let Some(ns) = explicit {
        sched.set_slice_idle(ns);
        source = SliceIdleSource::Explicit;
    }
    BroughtUp { sched, clock: hand, device, source }
}

/// The service a group received.
#[derive(Clone, Debug, Serialize)]
pub struct GroupShare {
    /// `None` for the root group (no groups asked for).
    pub weight: Option<u64>,
    pub jobs: usize,
    pub ios: u64,
    pub bytes: u64,
    /// Its fraction of all bytes completed.
    pub share: f64,
}

/// What a simulation measured. Everything here is a function of the configuration and seed.
#[derive(Clone, Debug, Serialize)]
pub struct SimResult {
    pub variant: &'static str,
    pub device: DeviceModel,
    /// The device's flag after the probe.
    pub rotational: bool,
    /// The `slice_idle` the run used, and who chose it.
    pub slice_idle_ns: u64,
    pub slice_idle_source: SliceIdleSource,
    pub runtime_s: f64,
    /// Requests completed within the runtime (merged ones count, as fio counts its I/Os).
    pub ios: u64,
    pub bytes: u64,
    pub iops: f64,
    pub bw_kib_s: f64,
    /// The latencies: NaN (`null` in the JSON) when no request completed.
    pub lat_avg_us: f64,
    pub lat_stddev_us: f64,
    pub lat_min_us: f64,
    pub lat_p50_us: f64,
    pub lat_p99_us: f64,
    pub lat_max_us: f64,
    /// Requests on the device, averaged over the runtime.
    pub device_mean_in_flight: f64,
    /// Fraction of the runtime with at least one request on the device, %.
    pub device_busy_pct: f64,
    /// Times, within the runtime, the idle timer expired a queue (it waited `slice_idle` for
    /// nothing).
    pub idle_timer_fired: u64,
    pub per_job_iops: Vec<f64>,
    pub groups: Vec<GroupShare>,
    /// The scheduler's counters over the whole run, drain included.
    pub requests: RequestCounters,
    /// Every request inserted was completed or merged, nothing left queued or on the device.
    pub consistent: bool,
    /// A signal stopped the run: `runtime_s` is the virtual time it reached.
    pub interrupted: bool,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Event {
    /// A request on the device (its slot in the in-flight table) completes.
    Complete(usize),
    /// A job's think time ends: it submits into `slot`.
    Submit { job: u32, slot: u32 },
}

/// A job's state (its process, which owns the queue, lives beside it: see [`simulate`]).
struct Job {
    group: usize,
    rng: SmallRng,
    next_seq: u64,
    region: (u64, u64),
    /// Submission time of the request in each of the job's `iodepth` slots.
    submitted_at: Vec<u64>,
    ios: u64,
}

/// Latency accumulator: Welford's mean and variance, and the samples for percentiles.
#[derive(Default)]
struct Latencies {
    n: u64,
    mean: f64,
    m2: f64,
    samples: Vec<u64>,
}

impl Latencies {
    fn add(&mut self, ns: u64) {
        self.n += 1;
        let x = ns as f64;
        let delta = x - self.mean;
        self.mean += delta / self.n as f64;
        self.m2 += delta * (x - self.mean);
        self.samples.push(ns);
    }

    fn stddev(&self) -> f64 {
        if self.n > 1 {
            (self.m2 / (self.n - 1) as f64).sqrt()
        } else {
            0.0
        }
    }

    fn percentile(&mut self, p: f64) -> u64 {
        if self.samples.is_empty() {
            return 0;
        }
        let k = ((self.samples.len() - 1) as f64 * p).round() as usize;
        *self.samples.select_nth_unstable(k).1
    }
}

const TAG_SLOT_BITS: u32 = 32;

struct Engine<'s, P: StatsPolicy> {
    cfg: &'s SimConfig,
    sched: &'s Scheduler<P>,
    hand: &'s ManualClock,
    device: Device,
    /// `bfq_insert_request` from job `i`'s process.
    insert: &'s dyn Fn(usize, RequestSpec) -> InsertOutcome,
    on_device: Vec<Option<Dispatched<'s, P>>>,
    free: Vec<usize>,
    events: BinaryHeap<Reverse<(u64, u64, Event)>>,
    seq: u64,
    now: u64,
    end: u64,
    jobs: Vec<Job>,
    lat: Latencies,
    ios: u64,
    timer_fired: u64,
    dispatched: u64,
    /// Integral over the runtime of requests on the device (ns x requests), and busy time.
    in_flight_area: u128,
    busy_ns: u64,
    /// Set by a signal: the runtime ends at the virtual time reached, and the run drains.
    interrupt: Option<&'s AtomicBool>,
    interrupted: bool,
}

impl<'s, P: StatsPolicy> Engine<'s, P> {
    fn push(&mut self, at: u64, ev: Event) {
        self.seq += 1;
        self.events.push(Reverse((at, self.seq, ev)));
    }

    /// Moves virtual time to `t`, integrating the device's occupancy over the runtime.
    fn advance(&mut self, t: u64) {
        debug_assert!(t >= self.now);
        let span = t.min(self.end).saturating_sub(self.now.min(self.end));
        let in_flight = self.device.in_flight();
        self.in_flight_area += span as u128 * in_flight as u128;
        if in_flight > 0 {
            self.busy_ns += span;
        }
        self.now = t;
        self.hand.set(t);
    }

    fn submit(&mut self, job: usize, slot: usize) {
        let bs = self.cfg.bs_sectors as u64;
        let sequential = self.cfg.sequential();
        let op = self.cfg.op();
        let j = &mut self.jobs[job];
        let sector = if sequential {
            let s = j.next_seq;
            j.next_seq += bs;
            if j.next_seq + bs > j.region.1 {
                j.next_seq = j.region.0;
            }
            s
        } else {
            j.rng.random_range(0..CAPACITY_SECTORS / bs) * bs
        };
        j.submitted_at[slot] = self.now;
        let tag = ((job as u64) << TAG_SLOT_BITS) | slot as u64;
        (self.insert)(
            job,
            RequestSpec { sector, sectors: self.cfg.bs_sectors, op, at_head: false, tag },
        );
    }

    /// Fills the device from the scheduler while it takes requests.
    fn pump(&mut self) {
        while self.device.can_accept() {
            let Some(rq) = self.sched.dispatch() else { break };
            self.dispatched += 1;
            let done_at = self.device.start(self.now, rq.sector, rq.sectors);
            let slot = match self.free.pop() {
                Some(slot) => {
                    self.on_device[slot] = Some(rq);
                    slot
                }
                None => {
                    self.on_device.push(Some(rq));
                    self.on_device.len() - 1
                }
            };
            self.push(done_at, Event::Complete(slot));
        }
    }

    /// One of a job's requests completed (possibly as part of a merged one).
    fn io_done(&mut self, tag: u64) {
        let job = (tag >> TAG_SLOT_BITS) as usize;
        let slot = (tag & ((1 << TAG_SLOT_BITS) - 1)) as usize;
        let latency = self.now - self.jobs[job].submitted_at[slot];
        if self.now <= self.end {
            self.lat.add(latency);
            self.jobs[job].ios += 1;
            self.ios += 1;
        }
        if self.now < self.end {
            if self.cfg.think_ns == 0 {
                self.submit(job, slot);
            } else {
                self.push(
                    self.now + self.cfg.think_ns,
                    Event::Submit { job: job as u32, slot: slot as u32 },
                );
            }
        }
    }

    fn handle(&mut self, ev: Event) {
        match ev {
            Event::Complete(slot) => {
                let rq = self.on_device[slot].take().expect("a request in this slot");
                self.free.push(slot);
                self.device.finish();
                // bfq_finish_request first (it may arm the idle timer), then the application
                // sees the completion and submits again.
                let done = rq.complete();
                self.io_done(done.tag);
                for tag in done.absorbed {
                    self.io_done(tag);
                }
            }
            Event::Submit { job, slot } => {
                if self.now < self.end {
                    self.submit(job as usize, slot as usize);
                }
            }
        }
        self.pump();
    }

    fn fire_timer(&mut self, deadline: u64) {
        self.advance(deadline.max(self.now));
        if self.sched.run_idle_timer() && self.now <= self.end {
            self.timer_fired += 1;
        }
        self.pump();
        assert!(
            self.sched.idle_deadline() != Some(deadline),
            "the idle timer at {deadline} ns neither fired nor was cancelled"
        );
    }

    /// Runs until nothing is left: the runtime, then the drain.
    fn run(&mut self) -> Result<(), ExperimentError> {
        for job in 0..self.jobs.len() {
            for slot in 0..self.cfg.iodepth {
                self.submit(job, slot);
            }
        }
        self.pump();
        let mut steps = 0u32;
        loop {
            steps = steps.wrapping_add(1);
            if steps % 4096 == 0
                && !self.interrupted
                && self.interrupt.is_some_and(|i| i.load(Ordering::Relaxed))
            {
                // Stop submitting now; what is in flight completes (in virtual time: at once).
                self.interrupted = true;
                self.end = self.end.min(self.now);
            }
            let next = self.events.peek().map(|Reverse((t, _, _))| *t);
            match (self.sched.idle_deadline(), next) {
                // The timer fires before an event at the same instant.
                (Some(deadline), None) => self.fire_timer(deadline),
                (Some(deadline), Some(t)) if deadline <= t => self.fire_timer(deadline),
                (_, Some(t)) => {
                    let Reverse((_, _, ev)) = self.events.pop().expect("peeked");
                    self.advance(t);
                    self.handle(ev);
                }
                (None, None) => break,
            }
            if self.dispatched > MAX_REQUESTS {
                return Err(ExperimentError::run_failed(format!(
                    "the simulation passed {MAX_REQUESTS} requests at {:.6} virtual s: shorten --runtime or slow the jobs down (--think)",
                    self.now as f64 / 1e9
                )));
            }
        }
        Ok(())
    }
}

/// Runs one simulation against variant `P` (parameters assumed valid: see [`simulate_named`]).
pub fn simulate<P: StatsPolicy>(cfg: &SimConfig) -> Result<SimResult, ExperimentError> {
    simulate_until::<P>(cfg, None)
}

/// [`simulate`], stopped early when `interrupt` is set: the runtime then ends at the virtual time
/// reached, the run drains, and the result says `interrupted` (its rates are over that time).
pub fn simulate_until<P: StatsPolicy>(
    cfg: &SimConfig,
    interrupt: Option<&AtomicBool>,
) -> Result<SimResult, ExperimentError> {
    let up = bring_up::<P>(
        cfg.device.clone(),
        cfg.seed ^ 0xD15C_0000_0000_0001,
        cfg.decision,
        cfg.slice_idle_ns,
    );
    let sched = &*up.sched;
    let root = sched.root();
    let cannot = |e: schedlab_core::SchedError| ExperimentError::run_failed(e.to_string());
    let groups: Vec<_> = (0..cfg.groups)
        .map(|i| sched.create_group(root, cfg.weights[i % cfg.weights.len()]).map_err(cannot))
        .collect::<Result<_, _>>()?;
    let group_of = |i: usize| if groups.is_empty() { 0 } else { i % groups.len() };
    // One process per job; they outlive the engine, which submits through `insert`.
    let processes: Vec<_> = (0..cfg.jobs)
        .map(|i| {
            up.sched
                .spawn_process(groups.get(group_of(i)).copied().unwrap_or(root))
                .expect("the group exists")
        })
        .collect();
    let insert = |job: usize, spec: RequestSpec| processes[job].insert(spec);
    let region = CAPACITY_SECTORS / cfg.jobs as u64;
    let jobs = (0..cfg.jobs)
        .map(|i| {
            let start = region * i as u64;
            Job {
                group: group_of(i),
                rng: SmallRng::seed_from_u64(
                    cfg.seed ^ (i as u64 + 1).wrapping_mul(0x9E37_79B9_7F4A_7C15),
                ),
                next_seq: start,
                region: (start, start + region),
                submitted_at: vec![0; cfg.iodepth],
                ios: 0,
            }
        })
        .collect();
    let rotational = up.device.rotational();
    let mut engine = Engine {
        cfg,
        sched,
        hand: &up.clock,
        insert: &insert,
        device: up.device,
        on_device: Vec::new(),
        free: Vec::new(),
        events: BinaryHeap::new(),
        seq: 0,
        now: 0,
        end: cfg.runtime_ns,
        jobs,
        lat: Latencies::default(),
        ios: 0,
        timer_fired: 0,
        dispatched: 0,
        in_flight_area: 0,
        busy_ns: 0,
        interrupt,
        interrupted: false,
    };
    let outcome = engine.run();
    // On error the loop stopped with requests in flight: complete them so the scheduler can go.
    for rq in engine.on_device.drain(..).flatten() {
        rq.complete();
    }
    outcome?;

    // The runtime measured: all of it, or up to the interrupt.
    let runtime_ns = engine.end.max(1);
    let secs = runtime_ns as f64 / 1e9;
    let bs_bytes = cfg.bs_sectors as u64 * 512;
    let n_groups = groups.len().max(1);
    let mut shares: Vec<GroupShare> = (0..n_groups)
        .map(|g| GroupShare {
            weight: (!groups.is_empty()).then(|| cfg.weights[g % cfg.weights.len()]),
            jobs: 0,
            ios: 0,
            bytes: 0,
            share: 0.0,
        })
        .collect();
    for j in &engine.jobs {
        let s = &mut shares[j.group];
        s.jobs += 1;
        s.ios += j.ios;
        s.bytes += j.ios * bs_bytes;
    }
    let total_bytes = engine.ios * bs_bytes;
    for s in &mut shares {
        s.share = if total_bytes > 0 { s.bytes as f64 / total_bytes as f64 } else { 0.0 };
    }
    let per_job_iops = engine.jobs.iter().map(|j| j.ios as f64 / secs).collect();
    // No request completed: no latency was measured, so none is written (NaN, `null` in the
    // JSON; issue 43: every latency was 0.0 there while the text said "no requests completed").
    let completed = engine.ios > 0;
    let us = |ns: f64| if completed { ns / 1e3 } else { f64::NAN };
    let lat = &mut engine.lat;
    let result = SimResult {
        variant: P::NAME,
        device: cfg.device.clone(),
        rotational,
        slice_idle_ns: sched.slice_idle(),
        slice_idle_source: up.source,
        runtime_s: secs,
        ios: engine.ios,
        bytes: total_bytes,
        iops: engine.ios as f64 / secs,
        bw_kib_s: total_bytes as f64 / 1024.0 / secs,
        lat_avg_us: us(lat.mean),
        lat_stddev_us: us(lat.stddev()),
        lat_min_us: us(lat.samples.iter().copied().min().unwrap_or(0) as f64),
        lat_p50_us: us(lat.percentile(0.50) as f64),
        lat_p99_us: us(lat.percentile(0.99) as f64),
        lat_max_us: us(lat.samples.iter().copied().max().unwrap_or(0) as f64),
        device_mean_in_flight: engine.in_flight_area as f64 / runtime_ns as f64,
        device_busy_pct: 100.0 * engine.busy_ns as f64 / runtime_ns as f64,
        idle_timer_fired: engine.timer_fired,
        per_job_iops,
        groups: shares,
        requests: RequestCounters::default(),
        consistent: false,
        interrupted: engine.interrupted,
    };
    drop(engine);
    drop(processes); // the processes exit
    sched.quiesce_until_reclaimed(std::time::Duration::from_secs(10));
    let consistency = sched.check_consistency();
    Ok(SimResult { requests: consistency.counters, consistent: consistency.ok, ..result })
}

struct SimVisitor<'a> {
    cfg: &'a SimConfig,
    interrupt: Option<&'a AtomicBool>,
}

impl VariantVisitor for SimVisitor<'_> {
    type Output = Result<SimResult, ExperimentError>;
    fn visit<P: StatsPolicy>(self) -> Self::Output {
        simulate_until::<P>(self.cfg, self.interrupt)
    }
}

/// Runs the simulation against the variant called `name`, after validating the parameters.
pub fn simulate_named(name: &str, cfg: &SimConfig) -> Result<SimResult, ExperimentError> {
    simulate_named_until(name, cfg, None)
}

/// [`simulate_named`], stopped early when `interrupt` is set (see [`simulate_until`]).
pub fn simulate_named_until(
    name: &str,
    cfg: &SimConfig,
    interrupt: Option<&AtomicBool>,
) -> Result<SimResult, ExperimentError> {
    cfg.validate(name)?;
    let unknown = || Err(ExperimentError::run_failed(format!("unknown variant `{name}`")));
    let visitor = SimVisitor { cfg, interrupt };
    let result = schedlab_variants::visit(name, visitor).unwrap_or_else(unknown);
    match (result, forced::forced()) {
        (Ok(_), Some(AfterWork::Run)) => Err(ExperimentError::run_failed(forced::run_error())),
        (Ok(r), Some(AfterWork::Check)) => Ok(SimResult { consistent: false, ..r }),
        (result, _) => result,
    }
}
