//! The discrete-event simulation: N CPUs, one workload job on each, running the request cycle of
//! a calibrated variant, every lock modelled by its kind's discipline.
//!
//! ## A job (as `benches/src/driver/workload.rs::job_loop` with iodepth 1, completing inline)
//!
//! ```text
//! loop:
//!   (completion contexts: the completions queued to this CPU's context, after the submission)
//!   if its own request is done:  outside/2 less the gaps, submission (the kernel profile's sites
//!                                in order: bio merge, gap 1, depth limit, gap 2, insert; the
//!                                request becomes dispatchable), gap 3
//!   dispatch: [prefix] take the deciding lock (the scheduler lock's dispatch hold) and look:
//!     a request queued (oldest first) -> the rest of the dispatch, complete, credit its owner,
//!                                        outside/2, the loop's own cost
//!     nothing queued                  -> the empty dispatch's hold, one idle poll (a pause; a
//!                                        yield every 64th in a row)
//! ```
//!
//! ## The request path: one structure with the core
//!
//! The submission's holds are the kernel profile's sites in the order the core's one description
//! gives them (`schedlab_core::profile::lock_sequence`, which the calibration lays the measured
//! holds on too); each hold is labelled with its site ([`Seg::site`]). [`Program::with_pads`]
//! adds the workload's `SitePads` where the core spins them: a site's hold pad at its first hold of
//! the scheduler lock (the lists path's insert pad in the dispatch's splice), none on an empty
//! dispatch, the submission's two gaps before the depth limit and the insert, the third between
//! the insert and the dispatch, and all three off the submission's half of the outside work. Pads
//! and gaps are timed spins: never slowed by a sibling, never spread. [`Program::outline`] is one
//! request's path as the program runs it; `benches/tests/request_path.rs` compares it with the
//! core's lock spans for every kernel profile, insert path and variant. Without pads the program
//! is exactly the calibrated one.
//!
//! ## Completion contexts ([`SimConfig::completion`], the workload's `--completion context`)
//!
//! As `driver/completion.rs`: one context per CPU of the profile. A job that dispatched a request
//! issues it to the next CPU's context (`(cpu + 1) % cpus`) instead of completing it. A context
//! whose CPU runs a job is served by that job at its interrupt point (each loop iteration, after
//! the submission and before the dispatch, holding no lock); one whose CPU has no job has a thread
//! of its own, which runs its queue at once. Serving a request is its completion call (the
//! completion site's hold and pad), its owner's credit and the completion's half of the outside
//! work. A job whose request is in flight and whose dispatch finds nothing sleeps, unless its
//! context has work, until its request is credited or its context is given one: it runs again
//! after the profile's wake-up latency, and the waker pays the wake call.
//!
//! Every piece is a calibrated [`super::calibrate::Segment`]: work outside any modelled lock, or a
//! hold of one. A piece takes `ns × speed` (`compute_scale`, and the SMT slowdown when a sibling
//! hyperthread is busy or spinning *when it starts*), plus `lines × transfer(from, here)` when its
//! data was last written on another CPU: for a hold, the lock's previous holder; for work, the CPU
//! that last ran that piece. The outside work is a timed spin in the workload (not slowed by a
//! sibling) unless [`SimConfig::outside_is_work`].
//!
//! ## The lock disciplines
//!
//! **fair-spin** (the ticket lock of `core/src/sync/real.rs`): FIFO. An acquirer finding the lock
//! free takes it after pulling the lock's line from its last holder; otherwise it queues and
//! spins. A release hands the lock to the head of the queue, which sees it one line transfer
//! later (plus the profile's `transfer.handoff_extra_ns` when it is on another CPU: a machine's
//! releaser takes the line back from the spinning reader first), or, if it is inside one of its
//! `sched_yield`s (one after every 64 polls, as the ticket waiter does), when that returns.
//!
//! **parking-lot** (parking_lot 0.13's `RawMutex`): barging. A release frees the lock at once;
//! whoever tries first takes it, the releaser included. A waiter checks the lock between the steps
//! of its spin phase (1, 2, 4 pauses, then seven `sched_yield`s: `SpinWait`), and parks when that
//! is over, or at once if another waiter is parked already. A release that finds a parked waiter
//! wakes one (the waker pays the wake call, after the release); the woken thread runs after the
//! wake-up latency and competes again, spinning or parking anew. (0.13 has no eventual-fairness
//! hand-off in a plain unlock.)
//!
//! ## Interruptions
//!
//! A real CPU is taken away from the workload now and then (timer ticks, the hypervisor); the
//! probes measure how often and for how long (notes/results/2026-12-01-predict-validation.md
//! has this machine kind's figures). With a profile's
//! `interruptions`, every piece a CPU runs (work or a hold) is lengthened by those that land in
//! it, drawn as a Poisson process per CPU with the measured lengths; an interrupted holder keeps
//! its lock. A FIFO hand-off to a waiter that is inside an interruption at that instant (one that
//! began during its wait: the CPU's own process, carried through the wait) waits for the rest of
//! it (the lock-waiter preemption of fair locks in virtual machines); a parking_lot
//! waiter's interruption costs nothing, since anyone else may take the lock. Without them two jobs whose cycles fit between each other's holds can stay in that
//! phase for ever in the simulation, while on a machine the first interruption breaks it: the
//! simulated result then depended on the seed (the starting phase), by up to a factor of two
//! (notes/results/2026-12-01-predict-validation.md, "Fifth validation").
//!
//! ## Output
//!
//! KIOPS (completions in the measured window), the per-job spread, and the time of the cycle split
//! into *hold* (inside critical sections, their calibrated length), *hand-off* (a lock's line and
//! the lines its data pulls when it changed CPUs, and parking_lot's wake calls), *wait* (spinning or
//! parked for a lock) and *outside* (everything else). Same inputs and seed, same output: time is
//! an `f64` of ns advanced by one event queue ordered by (time, sequence number).

use super::calibrate::{Calibration, CallModel, Segment};
use super::harness::Call;
use super::topology::Topology;
use crate::driver::completion::CompletionMode;
use crate::error::ExperimentError;
use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};
use rand_distr::{Distribution, Gamma};
use schedlab_core::profile::{lock_sequence, CycleCall};
use schedlab_core::{InsertPathKind, KernelProfile, LockKind, PadSite, SitePads};
use serde::Serialize;
use std::cmp::Ordering as CmpOrdering;
use std::collections::{BinaryHeap, VecDeque};

/// Polls a ticket waiter makes before each `sched_yield` (`SPINS_BEFORE_YIELD`,
/// core/src/sync/real.rs).
pub const TICKET_SPINS_BEFORE_YIELD: f64 = 64.0;
/// parking_lot's spin phase: steps 1–3 spin 1, 2, 4 pauses; steps 4–10 yield (`SpinWait::spin`,
/// parking_lot_core 0.10).
pub const SPINWAIT_STEPS: u32 = 10;
/// Idle polls in a row after which a job yields (`workload.rs::job_loop`).
pub const IDLE_POLLS_BEFORE_YIELD: u32 = 64;

/// One piece of the cycle, with its lock as an index.
#[derive(Clone, Copy, Debug)]
pub struct Seg {
    pub lock: Option<usize>,
    pub ns: f64,
    pub lines: f64,
    pub probability: f64,
    /// For work: which piece it is (the data it touches); for holds, unused.
    pub data: usize,
    /// The distribution of its length ÷ mean, in [`Program::spreads`] (`None`: always the mean).
    pub spread: Option<usize>,
    /// For holds: the lock site (the core's lock path) it belongs to (`None`: the statistics'
    /// queue-lock holds, and anything the kernel profile's order does not name).
    pub site: Option<PadSite>,
    /// A timed spin added to the piece, ns (`SitePads`: a hold's pad, or a gap between sites):
    /// never slowed by a sibling, never spread.
    pub pad_ns: f64,
}

impl Seg {
    /// A gap of `ns` spun holding no lock (`SitePads::gap_ns`).
    fn gap(ns: u64) -> Seg {
        let pad_ns = ns as f64;
        Seg {
            lock: None,
            ns: 0.0,
            lines: 0.0,
            probability: 1.0,
            data: usize::MAX,
            spread: None,
            site: None,
            pad_ns,
        }
    }
}

/// One step of a request's path as a program runs it ([`Program::outline`]): what the test
/// against the core compares (`benches/tests/request_path.rs`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PathStep {
    /// A hold of `lock`, on the lock path of `site`, with its pad, ns.
    Hold { lock: String, site: Option<PadSite>, pad_ns: u64 },
    /// Time spun holding no lock between holds (the gaps that fall there, summed), ns.
    Gap { ns: u64 },
}

/// A calibrated variant's cycle, ready to simulate.
#[derive(Clone, Debug)]
pub struct Program {
    pub locks: Vec<String>,
    pub kind: LockKind,
    pub insert: Vec<Seg>,
    /// The dispatch up to the hold whose acquisition decides whether a request is there.
    pub dispatch_prefix: Vec<Seg>,
    pub decide_lock: usize,
    /// From the deciding hold on (its first piece is that hold), with a request.
    pub dispatch_rest: Vec<Seg>,
    /// From the deciding hold on, with nothing queued.
    pub empty_rest: Vec<Seg>,
    pub complete: Vec<Seg>,
    pub credit: Vec<Seg>,
    pub loop_ns: f64,
    pub outside_ns: f64,
    /// An injected cost spent just before the insert, outside every lock (`--inject-ns N --at
    /// outside`), ns; the inside one is in the holds ([`Program::with_inject`]).
    pub inject_outside_ns: f64,
    pub data_ids: usize,
    /// Gamma distributions of mean 1, one per call spread.
    pub spreads: Vec<Gamma<f64>>,
    /// The calibrated insert path and kernel profile: the order of the lock sites.
    pub insert_path: InsertPathKind,
    pub profile: KernelProfile,
    /// The kernel's per-site pads ([`Program::with_pads`]); the holds' pads and the submission's
    /// gaps are in the segments, the insert→dispatch gap is spun by the job (as `job_loop` does).
    pub pads: SitePads,
}

impl Program {
    /// The cycle of `cal` for `threads` jobs: one job meets the one-process sections, more meet
    /// the two-process ones with their lines. `outside_ns` per request (half before the insert,
    /// half after the completion).
    pub fn new(
        cal: &Calibration,
        threads: usize,
        outside_ns: f64,
    ) -> Result<Program, ExperimentError> {
        let pair = threads > 1;
        let mut locks: Vec<String> = Vec::new();
        let mut data_ids = 0usize;
        let mut spreads: Vec<Gamma<f64>> = Vec::new();
        let mut convert = |m: Option<&CallModel>| -> Vec<Seg> {
            m.map_or_else(Vec::new, |m| {
                // Shape 1/cv², scale cv²: mean 1, standard deviation cv.
                let spread = (m.cv.is_finite() && m.cv > 0.01).then(|| {
                    let cv = m.cv.min(3.0);
                    spreads.push(
                        Gamma::new(1.0 / (cv * cv), cv * cv).expect("a positive shape and scale"),
                    );
                    spreads.len() - 1
                });
                m.segments
                    .iter()
                    .map(|s: &Segment| {
                        let lock = s.lock.as_ref().map(|name| {
                            match locks.iter().position(|l| l == name) {
                                Some(i) => i,
                                None => {
                                    locks.push(name.clone());
                                    locks.len() - 1
                                }
                            }
                        });
                        data_ids += 1;
                        Seg {
                            lock,
                            ns: s.ns.max(0.0),
                            lines: s.lines.max(0.0),
                            probability: s.probability.clamp(0.0, 1.0),
                            data: data_ids - 1,
                            spread,
                            site: None,
                            pad_ns: 0.0,
                        }
                    })
                    .collect()
            })
        };
        let insert_path = InsertPathKind::from_name(&cal.insert).ok_or_else(|| {
            let what = format!(
                "the calibration of {} names an unknown insert path `{}`",
                cal.variant, cal.insert
            );
            ExperimentError::bad_input(what)
        })?;
        let need = |call: Call| {
            cal.call(pair, call).or_else(|| cal.call(false, call)).ok_or_else(|| {
                ExperimentError::bad_input(format!(
                    "the calibration of {} has no {} call",
                    cal.variant,
                    call.name()
                ))
            })
        };
        let mut insert = convert(Some(need(Call::Insert)?));
        let mut dispatch = convert(Some(need(Call::Dispatch)?));
        let mut complete = convert(Some(need(Call::Complete)?));
        let credit =
            convert(cal.call(pair, Call::Credit).or_else(|| cal.call(false, Call::Credit)));
        let mut empty = convert(cal.call(true, Call::EmptyDispatch));
        let sched = locks.iter().position(|l| l == "sched");
        label_submit_sites(&mut insert, &locks, insert_path, cal.kernel);
        let queue = locks.iter().position(|l| l == "queue");
        let calls = [
            (&mut dispatch, PadSite::Dispatch),
            (&mut empty, PadSite::Dispatch),
            (&mut complete, PadSite::Completion),
        ];
        for (segs, site) in calls {
            for s in segs.iter_mut().filter(|s| s.lock.is_some() && s.lock != queue) {
                s.site = Some(site);
            }
        }
        // The deciding hold: the dispatch's first hold of the scheduler lock (or its first hold).
        let decide_at = dispatch
            .iter()
            .position(|s| s.lock.is_some() && s.lock == sched)
            .or_else(|| dispatch.iter().position(|s| s.lock.is_some()))
            .ok_or_else(|| {
                ExperimentError::bad_input(format!(
                    "the calibration of {} has a dispatch without a lock",
                    cal.variant
                ))
            })?;
        let decide_lock = dispatch[decide_at].lock.expect("a hold");
        let empty_at = empty.iter().position(|s| s.lock == Some(decide_lock));
        let empty_rest = match empty_at {
            Some(i) => empty[i..].to_vec(),
            // No empty dispatch measured (one process): a hold as long as the dispatch's.
            None => vec![Seg { probability: 1.0, ..dispatch[decide_at] }],
        };
        let mut decide = dispatch[decide_at];
        decide.probability = 1.0;
        let mut dispatch_rest = vec![decide];
        dispatch_rest.extend_from_slice(&dispatch[decide_at + 1..]);
        Ok(Program {
            kind: cal.lock,
            insert,
            dispatch_prefix: dispatch[..decide_at].to_vec(),
            decide_lock,
            dispatch_rest,
            empty_rest,
            complete,
            credit,
            loop_ns: cal.loop_ns.max(0.0),
            outside_ns: outside_ns.max(0.0),
            inject_outside_ns: 0.0,
            data_ids,
            locks,
            spreads,
            insert_path,
            profile: cal.kernel,
            pads: SitePads::NONE,
        })
    }

    /// The program with the kernel's per-site pads (`schedlab_core::SitePads`, the workload's
    /// `pads`), placed where the core spins them: each site's hold pad at the end of its first
    /// hold of the scheduler lock (on the `lists` path the insert's pad goes with the insert work
    /// into the dispatch's splice hold, one request per dispatch, as with
    /// [`Program::with_inject`]); an empty dispatch none; the first gap after the bio merge, the second before the insert
    /// (`Process::submit`), the third between the insert and the dispatch (spun by the job), and
    /// the gaps taken off the submission's half of the outside work, as `job_loop` does.
    pub fn with_pads(mut self, pads: SitePads) -> Program {
        let lists = self.insert_path != InsertPathKind::Direct;
        let mut padded = [false; 5];
        let holds = self
            .insert
            .iter_mut()
            .chain(self.dispatch_rest.iter_mut())
            .chain(self.complete.iter_mut());
        for s in holds {
            let Some(site) = s.site else { continue };
            if std::mem::replace(&mut padded[site as usize], true) {
                continue;
            }
            // The lists' insert pushes on the insertion lists: its pad is in the splice.
            let own = if lists && site == PadSite::Insert { 0 } else { pads.hold(site) };
            let splice =
                if lists && site == PadSite::Dispatch { pads.hold(PadSite::Insert) } else { 0 };
            s.pad_ns += (own + splice) as f64;
        }
        // The submission's gaps, before the site that follows each (Process::submit).
        let mut insert = Vec::with_capacity(self.insert.len() + 2);
        let mut first_gap_done = false;
        for s in &self.insert {
            let after_bio_merge =
                s.site.filter(|&site| site != PadSite::BioMerge && s.lock.is_some());
            if let Some(site) = after_bio_merge {
                if !first_gap_done {
                    first_gap_done = true;
                    if pads.gap_ns[0] > 0 {
                        insert.push(Seg::gap(pads.gap_ns[0]));
                    }
                }
                if site == PadSite::Insert && pads.gap_ns[1] > 0 {
                    insert.push(Seg::gap(pads.gap_ns[1]));
                }
            }
            insert.push(*s);
        }
        self.insert = insert;
        self.pads = pads;
        self
    }

    /// One request's path as this program runs it with one job: the submission, the
    /// insert→dispatch gap, the dispatch that finds it and its completion; every hold (each piece
    /// at probability 1) with its pad, and the no-lock pads between them.
    pub fn outline(&self) -> Vec<PathStep> {
        let mut out: Vec<PathStep> = Vec::new();
        let gap = |out: &mut Vec<PathStep>, ns: u64| {
            if ns == 0 {
                return;
            }
            match out.last_mut() {
                Some(PathStep::Gap { ns: before }) => *before += ns,
                _ => out.push(PathStep::Gap { ns }),
            }
        };
        let segs = |out: &mut Vec<PathStep>, v: &[Seg]| {
            for s in v {
                match s.lock {
                    Some(l) => {
                        let lock = self.locks[l].clone();
                        out.push(PathStep::Hold { lock, site: s.site, pad_ns: s.pad_ns as u64 })
                    }
                    None => gap(out, s.pad_ns as u64),
                }
            }
        };
        segs(&mut out, &self.insert);
        gap(&mut out, self.pads.gap_ns[2]);
        segs(&mut out, &self.dispatch_prefix);
        segs(&mut out, &self.dispatch_rest);
        segs(&mut out, &self.complete);
        out
    }

    /// The program with a known cost per request where it enters the scheduler
    /// (`schedlab_core::inject`): inside, added to the hold of the scheduler lock that takes the
    /// request in (the insert's on the `direct` path; on `lists`, the dispatch's deciding hold,
    /// where the splice runs, one request per dispatch); outside, spent before the insert.
    pub fn with_inject(
        mut self,
        inject: schedlab_core::Inject,
    ) -> Result<Program, ExperimentError> {
        let sched = self.locks.iter().position(|l| l == "sched");
        let ns = inject.inside_ns() as f64;
        if ns > 0.0 {
            // The insert site's hold (not the bio merge's or the depth limit's before it).
            let hold =
                match self.insert.iter_mut().find(|s| {
                    s.lock.is_some() && s.lock == sched && s.site == Some(PadSite::Insert)
                }) {
                    Some(hold) => hold,
                    None => self
                        .dispatch_rest
                        .first_mut()
                        .filter(|s| s.lock.is_some() && s.lock == sched)
                        .ok_or_else(|| {
                            ExperimentError::bad_input(
                                "the calibration has no hold of the scheduler lock to inject into",
                            )
                        })?,
                };
            hold.ns += ns;
        }
        self.inject_outside_ns = inject.outside_ns() as f64;
        Ok(self)
    }

    /// The cycle on one CPU with nothing in the way: every piece at its probability, ns.
    pub fn solo_cycle_ns(&self) -> f64 {
        let sum = |v: &[Seg]| v.iter().map(|s| (s.ns + s.pad_ns) * s.probability).sum::<f64>();
        let gap = self.pads.gap_ns[2] as f64;
        let outside = self.submission_outside_ns() + self.outside_ns / 2.0 + gap;
        sum(&self.insert)
            + sum(&self.dispatch_prefix)
            + sum(&self.dispatch_rest)
            + sum(&self.complete)
            + sum(&self.credit)
            + self.loop_ns
            + outside
            + self.inject_outside_ns
    }

    /// Where the submission's request becomes dispatchable: the number of its leading pieces
    /// that run before (through the hold of the insert site; without labelled sites, through
    /// the first hold; without holds, all of them).
    ///
    /// Before 2026-12-05 it was after the submission's first hold, which was the insert's until
    /// the kernel profiles put the bio merge (and 6.18's depth limit) before it: another job
    /// could then dispatch, complete and credit a request between its bio merge and its insert.
    pub fn submit_split(&self) -> usize {
        let insert_site = self.insert.iter().position(|s| s.site == Some(PadSite::Insert));
        insert_site
            .or_else(|| self.insert.iter().position(|s| s.lock.is_some()))
            .map_or(self.insert.len(), |k| k + 1)
    }

    /// The submission's half of the outside work less the gaps the scheduler spins (`job_loop`).
    fn submission_outside_ns(&self) -> f64 {
        (self.outside_ns / 2.0 - self.pads.gaps() as f64).max(0.0)
    }
}

/// Names the lock site of each hold of a submission's segments: the holds the kernel profile's
/// order names (`lock_sequence`, the statistics' queue lock aside) are the profile's submission
/// sites in order; holds it does not name (appended by the calibration) keep none.
fn label_submit_sites(
    insert: &mut [Seg],
    locks: &[String],
    path: InsertPathKind,
    profile: KernelProfile,
) {
    let order = lock_sequence(CycleCall::Submit, path, profile);
    let mut sites = order.iter().filter(|&&l| l != "queue").zip(profile.submit_sites());
    let mut holds = insert.iter_mut().filter(|s| s.lock.is_some());
    let Some((mut want, mut site)) = sites.next() else { return };
    for s in holds.by_ref() {
        if locks[s.lock.expect("a hold")] != *want {
            continue;
        }
        s.site = Some(match site {
            schedlab_core::SubmitSite::BioMerge => PadSite::BioMerge,
            schedlab_core::SubmitSite::LimitDepth => PadSite::LimitDepth,
            schedlab_core::SubmitSite::Insert => PadSite::Insert,
        });
        match sites.next() {
            Some((w, si)) => (want, site) = (w, si),
            None => return,
        }
    }
}

/// How to simulate.
#[derive(Clone, Debug)]
pub struct SimConfig {
    pub threads: usize,
    pub seed: u64,
    /// Virtual time simulated before measuring, ns.
    pub warmup_ns: f64,
    /// The measured window lasts at least this long and until `min_completions`, ns...
    pub min_measure_ns: f64,
    pub min_completions: u64,
    /// ... but at most this long, ns.
    pub max_measure_ns: f64,
    /// The outside work is real work (slowed by a busy sibling), not the workload's timed spin.
    pub outside_is_work: bool,
    /// The simulation's own bound: more events than this before the window ends is an error
    /// ([`MAX_EVENTS`] unless a test asks for less).
    pub max_events: u64,
    /// Where a dispatched request completes: on the dispatching job, or in the next CPU's
    /// completion context (the workload's `completion`, `driver/completion.rs`).
    pub completion: CompletionMode,
}

impl SimConfig {
    pub fn new(threads: usize, seed: u64) -> Self {
        SimConfig {
            threads,
            seed,
            warmup_ns: 1e6,
            min_measure_ns: 5e6,
            min_completions: 30_000,
            max_measure_ns: 100e6,
            outside_is_work: false,
            max_events: MAX_EVENTS,
            completion: CompletionMode::Inline,
        }
    }
}

/// Where the cycle's time goes, ns per request (per job: they add up to threads ÷ throughput).
#[derive(Clone, Copy, Debug, Default, Serialize, PartialEq)]
pub struct Breakdown {
    pub hold_ns: f64,
    pub handoff_ns: f64,
    pub wait_ns: f64,
    pub outside_ns: f64,
}

impl Breakdown {
    pub fn total(&self) -> f64 {
        self.hold_ns + self.handoff_ns + self.wait_ns + self.outside_ns
    }
}

/// One simulated point.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct SimResult {
    pub threads: usize,
    pub kiops: f64,
    pub per_thread_min: f64,
    pub per_thread_max: f64,
    pub breakdown: Breakdown,
    /// Share of the window each lock was held (its hand-off lines included), by lock.
    pub lock_busy: Vec<(String, f64)>,
    /// Each lock's acquisitions in the window, and how many of them went to another thread than
    /// the one before (the lock statistics' owner changes), by lock.
    pub lock_owners: Vec<LockOwners>,
    /// Requests completed and virtual time measured, ns.
    pub completions: u64,
    pub measured_ns: f64,
    pub events: u64,
}

/// One lock's acquisitions in the measured window and its changes of owner ([`SimResult`]).
#[derive(Clone, Debug, Serialize, PartialEq, Eq)]
pub struct LockOwners {
    pub lock: String,
    pub acquisitions: u64,
    pub owner_changes: u64,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Cat {
    Hold,
    Handoff,
    Wait,
    Outside,
}

#[derive(Clone, Copy, Debug)]
enum Op {
    /// `pad`: a timed spin after the work, never slowed.
    Work {
        ns: f64,
        lines: f64,
        data: usize,
        cat: Cat,
        slowed: bool,
        pad: f64,
    },
    Acquire(usize),
    Hold {
        ns: f64,
        lines: f64,
        lock: usize,
        pad: f64,
    },
    Release(usize),
    /// The request becomes dispatchable.
    Submit,
    /// Under the deciding lock: take the oldest queued request or find nothing.
    Decide,
    /// The completed request is credited to its owner.
    Credit,
    /// Completion contexts: the dispatched request (by owner) goes to the next CPU's context.
    Issue(usize),
    /// Completion contexts: the request of this owner is credited (in a context), waking it.
    CreditOwner(usize),
    /// Completion contexts: a job with its request in flight and nothing to dispatch sleeps until
    /// its request completes or its context is given one.
    Sleep,
}

impl Op {
    /// Work that touches no modelled data (no lines move with it).
    fn plain(ns: f64, cat: Cat, slowed: bool) -> Op {
        Op::Work { ns, lines: 0.0, data: usize::MAX, cat, slowed, pad: 0.0 }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum CpuState {
    Busy,
    Spin,
    Idle,
}

struct Thread {
    cpu: usize,
    ops: VecDeque<Op>,
    state: CpuState,
    /// Its own request is outstanding.
    outstanding: bool,
    /// The owner of the request it dispatched.
    dispatched: Option<usize>,
    idle_polls: u32,
    wait_since: f64,
    /// parking_lot: steps of the current spin phase taken.
    spin_steps: u32,
    /// Invalidates stale polls.
    generation: u64,
    completed: u64,
    /// A workload job (false: the thread of a completion context whose CPU has no job).
    job: bool,
    /// Asleep waiting for a completion (completion contexts).
    asleep: bool,
}

#[derive(Default)]
struct LockState {
    owner: Option<usize>,
    /// The CPU of the last acquirer: where the lock's line and its data are.
    last_cpu: Option<usize>,
    /// The CPU of the holder before the current one: where the current hold's data comes from.
    data_from: Option<usize>,
    fifo: VecDeque<usize>,
    parked: VecDeque<usize>,
    acquired_at: f64,
    busy_ns: f64,
    /// Bumped at every acquisition: a compare-and-swap that saw the lock free at an older
    /// version fails.
    version: u64,
    /// The thread of the last acquisition (`None` before the first).
    last_owner: Option<usize>,
    /// In the measured window: acquisitions, and those by another thread than the one before.
    acquisitions: u64,
    owner_changes: u64,
}

#[derive(Clone, Copy, Debug)]
enum EvKind {
    /// The thread's current piece is done: run its next ops.
    Step(usize),
    /// A parking_lot spinner looks at the lock.
    Poll(usize, u64),
    /// A parked thread runs again.
    Wake(usize),
    /// A parking_lot acquirer's compare-and-swap lands (after a load that saw the lock free at
    /// this version; `None`: a blind one).
    Cas(usize, u64, Option<u64>),
}

struct Ev {
    t: f64,
    seq: u64,
    kind: EvKind,
}

impl PartialEq for Ev {
    fn eq(&self, o: &Self) -> bool {
        self.cmp(o) == CmpOrdering::Equal
    }
}
impl Eq for Ev {}
impl PartialOrd for Ev {
    fn partial_cmp(&self, o: &Self) -> Option<CmpOrdering> {
        Some(self.cmp(o))
    }
}
impl Ord for Ev {
    /// Reversed: the heap pops the earliest event, ties in the order they were made.
    fn cmp(&self, o: &Self) -> CmpOrdering {
        o.t.total_cmp(&self.t).then(o.seq.cmp(&self.seq))
    }
}

struct Sim<'a> {
    prog: &'a Program,
    topo: &'a Topology,
    cfg: &'a SimConfig,
    rng: SmallRng,
    now: f64,
    seq: u64,
    heap: BinaryHeap<Ev>,
    threads: Vec<Thread>,
    locks: Vec<LockState>,
    /// The CPU that last ran each piece of work.
    data_cpu: Vec<Option<usize>>,
    /// Requests queued (dispatchable), by owner, oldest first.
    queue: VecDeque<usize>,
    /// The lock each thread is waiting for.
    waiting: Vec<Option<usize>>,
    window_start: f64,
    measuring: bool,
    completions: u64,
    acc: [f64; 4],
    events: u64,
    /// When each CPU is next interrupted (virtual ns; see [`Sim::interrupted`]).
    next_interruption: Vec<f64>,
    /// Completion contexts: the owners of the requests issued to each CPU's context, oldest
    /// first (empty when completing inline).
    pending: Vec<VecDeque<usize>>,
}

impl<'a> Sim<'a> {
    /// How much longer a piece of `dur` ns that starts now on `cpu` takes because the CPU is
    /// interrupted meanwhile (the profile's `interruptions`: a Poisson process per CPU, each
    /// interruption one of the measured lengths). The piece's end moves by each one, and an
    /// interruption can land in that extra time too. A CPU waiting for a lock is not charged here:
    /// a FIFO waiter's process is carried through its wait at the hand-off
    /// ([`Sim::waiter_interrupted`]); otherwise the next interruption is drawn afresh when its
    /// next piece starts (memoryless, so that is the same as ignoring those that fell in the
    /// wait).
    fn interrupted(&mut self, cpu: usize, dur: f64) -> f64 {
        let Some(int) = &self.topo.interruptions else { return 0.0 };
        if int.rate_per_s <= 0.0 || int.durations_ns.is_empty() {
            return 0.0;
        }
        let mean_gap_ns = 1e9 / int.rate_per_s;
        let gap = |rng: &mut SmallRng| -(1.0 - rng.random::<f64>()).ln() * mean_gap_ns;
        if self.next_interruption[cpu] < self.now {
            self.next_interruption[cpu] = self.now + gap(&mut self.rng);
        }
        let mut extra = 0.0;
        while self.next_interruption[cpu] < self.now + dur + extra {
            let length = int.durations_ns[self.rng.random_range(0..int.durations_ns.len())];
            extra += length;
            self.next_interruption[cpu] += length + gap(&mut self.rng);
        }
        extra
    }

    /// What is left at `at` of an interruption of `cpu`, which has been waiting for a lock (not
    /// running a piece) since `since`: the CPU's own Poisson process ([`Sim::interrupted`]'s, the
    /// same next instant) carried through the wait. An interruption that began during the wait
    /// and is still running at `at` delays the waiter to its end; one that ended before costs
    /// nothing. A FIFO waiter pays this when the lock is handed to it: the lock waits for it.
    ///
    /// The chance is that of an interruption *beginning within the wait* (about `rate × wait`),
    /// not the share of all time a CPU spends interrupted (`rate × mean length`): the waiter was
    /// running when it began to wait, and the interruptions of the pieces it ran are already in
    /// their lengths. With the share of all time instead (as before 2026-12-05), every hand-off
    /// drew anew from that chance: 88 ns per hand-off on this machine kind's profile, whose
    /// CPUs are interrupted 0.85 % of their time, and at two threads with nothing outside the
    /// lock the hand-offs' stalls filled 24–37 % of the simulated time
    /// (notes/results/2026-12-05-predict-wait.md).
    fn waiter_interrupted(&mut self, cpu: usize, since: f64, at: f64) -> f64 {
        let Some(int) = &self.topo.interruptions else { return 0.0 };
        if int.rate_per_s <= 0.0 || int.durations_ns.is_empty() {
            return 0.0;
        }
        let mean_gap_ns = 1e9 / int.rate_per_s;
        let gap = |rng: &mut SmallRng| -(1.0 - rng.random::<f64>()).ln() * mean_gap_ns;
        if self.next_interruption[cpu] < since {
            self.next_interruption[cpu] = since + gap(&mut self.rng);
        }
        while self.next_interruption[cpu] < at {
            let length = int.durations_ns[self.rng.random_range(0..int.durations_ns.len())];
            let end = self.next_interruption[cpu] + length;
            self.next_interruption[cpu] = end + gap(&mut self.rng);
            if end > at {
                return end - at;
            }
        }
        0.0
    }

    fn schedule(&mut self, t: f64, kind: EvKind) {
        self.seq += 1;
        self.heap.push(Ev { t, seq: self.seq, kind });
    }

    fn account(&mut self, cat: Cat, ns: f64) {
        if self.measuring {
            let i = match cat {
                Cat::Hold => 0,
                Cat::Handoff => 1,
                Cat::Wait => 2,
                Cat::Outside => 3,
            };
            self.acc[i] += ns;
        }
    }

    /// How much longer work takes on `cpu` now (compute scale × the busiest sibling's effect).
    fn speed(&self, cpu: usize) -> f64 {
        let mut slow: f64 = 1.0;
        for s in self.topo.siblings(cpu) {
            if let Some(th) = self.threads.get(s) {
                slow = slow.max(match th.state {
                    CpuState::Busy => self.topo.smt.busy_slowdown,
                    CpuState::Spin => self.topo.smt.spin_slowdown,
                    CpuState::Idle => 1.0,
                });
            }
        }
        slow * self.topo.compute_scale
    }

    fn transfer(&self, from: Option<usize>, to: usize) -> f64 {
        from.map_or(0.0, |f| self.topo.transfer(f, to))
    }

    fn push_segs(
        ops: &mut VecDeque<Op>,
        segs: &[Seg],
        spreads: &[Gamma<f64>],
        rng: &mut SmallRng,
        skip_first_acquire: bool,
    ) {
        for (i, s) in segs.iter().enumerate() {
            if s.probability < 1.0 && rng.random::<f64>() >= s.probability {
                continue;
            }
            let ns = match s.spread {
                Some(d) => s.ns * spreads[d].sample(rng),
                None => s.ns,
            };
            match s.lock {
                None => ops.push_back(Op::Work {
                    ns,
                    lines: s.lines,
                    data: s.data,
                    cat: Cat::Outside,
                    slowed: true,
                    pad: s.pad_ns,
                }),
                Some(l) => {
                    if !(skip_first_acquire && i == 0) {
                        ops.push_back(Op::Acquire(l));
                    }
                    ops.push_back(Op::Hold { ns, lines: s.lines, lock: l, pad: s.pad_ns });
                    ops.push_back(Op::Release(l));
                }
            }
        }
    }

    /// The next loop iteration of thread `i` (module documentation).
    fn refill(&mut self, i: usize) {
        let prog = self.prog;
        let mut ops = std::mem::take(&mut self.threads[i].ops);
        if !self.threads[i].outstanding {
            let submission_half = prog.submission_outside_ns();
            if submission_half > 0.0 {
                ops.push_back(Op::Work {
                    ns: submission_half,
                    lines: 0.0,
                    data: usize::MAX,
                    cat: Cat::Outside,
                    slowed: self.cfg.outside_is_work,
                    pad: 0.0,
                });
            }
            if prog.inject_outside_ns > 0.0 {
                // The injected spin: timed, as the workload's (`schedlab_core::inject`).
                ops.push_back(Op::Work {
                    ns: prog.inject_outside_ns,
                    lines: 0.0,
                    data: usize::MAX,
                    cat: Cat::Outside,
                    slowed: false,
                    pad: 0.0,
                });
            }
            // Dispatchable once the insert site's hold is released (direct: the scheduler lock;
            // lists: the insertion lock), not after the bio merge or the depth limit before it.
            let split = prog.submit_split();
            Self::push_segs(&mut ops, &prog.insert[..split], &prog.spreads, &mut self.rng, false);
            ops.push_back(Op::Submit);
            Self::push_segs(&mut ops, &prog.insert[split..], &prog.spreads, &mut self.rng, false);
            // blk-mq's way from the insert to running the hardware queue (`job_loop`).
            if prog.pads.gap_ns[2] > 0 {
                let pad = prog.pads.gap_ns[2] as f64;
                let data = usize::MAX;
                ops.push_back(Op::Work {
                    ns: 0.0,
                    lines: 0.0,
                    data,
                    cat: Cat::Outside,
                    slowed: false,
                    pad,
                });
            }
            self.threads[i].outstanding = true;
        }
        // The interrupt point: the completions issued to this CPU's context run here, between
        // the submission and the dispatch, holding no lock (`job_loop`).
        self.serve_context(i, &mut ops);
        Self::push_segs(&mut ops, &prog.dispatch_prefix, &prog.spreads, &mut self.rng, false);
        ops.push_back(Op::Acquire(prog.decide_lock));
        ops.push_back(Op::Decide);
        self.threads[i].ops = ops;
    }

    /// The completions queued to the context of thread `i`'s CPU, as ops: each request's
    /// completion call, its owner's credit and the completion's half of the outside work.
    fn serve_context(&mut self, i: usize, ops: &mut VecDeque<Op>) {
        let prog = self.prog;
        let Some(queued) = self.pending.get_mut(self.threads[i].cpu) else { return };
        let owners: Vec<usize> = queued.drain(..).collect();
        for owner in owners {
            Self::push_segs(ops, &prog.complete, &prog.spreads, &mut self.rng, false);
            Self::push_segs(ops, &prog.credit, &prog.spreads, &mut self.rng, false);
            ops.push_back(Op::CreditOwner(owner));
            if prog.outside_ns > 0.0 {
                let ns = prog.outside_ns / 2.0;
                let slowed = self.cfg.outside_is_work;
                ops.push_back(Op::plain(ns, Cat::Outside, slowed));
            }
        }
    }

    /// Job `j`, asleep, runs again after the wake-up latency; the waker `i` pays the wake call.
    fn wake_job(&mut self, i: usize, j: usize) {
        if !std::mem::replace(&mut self.threads[j].asleep, false) {
            return;
        }
        let p = &self.topo.parking;
        let (latency, cost) = (p.wake_latency_ns, p.unpark_cost_ns);
        self.schedule(self.now + latency, EvKind::Step(j));
        self.threads[i].ops.push_front(Op::plain(cost, Cat::Handoff, false));
    }

    fn run_ops(&mut self, i: usize) {
        loop {
            if self.threads[i].ops.is_empty() {
                if self.threads[i].job {
                    self.refill(i);
                } else {
                    // A completion context's own thread: its queue, or idle until given one.
                    let mut ops = std::mem::take(&mut self.threads[i].ops);
                    self.serve_context(i, &mut ops);
                    self.threads[i].ops = ops;
                    if self.threads[i].ops.is_empty() {
                        self.threads[i].state = CpuState::Idle;
                        return;
                    }
                }
            }
            let op = self.threads[i].ops.pop_front().expect("refilled");
            let cpu = self.threads[i].cpu;
            match op {
                Op::Work { ns, lines, data, cat, slowed, pad } => {
                    let speed = if slowed { self.speed(cpu) } else { 1.0 };
                    let moved = if data == usize::MAX {
                        0.0
                    } else {
                        let from = self.data_cpu[data];
                        self.data_cpu[data] = Some(cpu);
                        lines * self.transfer(from, cpu)
                    };
                    let mut dur = ns * speed + pad + moved;
                    dur += self.interrupted(cpu, dur);
                    self.account(cat, dur);
                    self.threads[i].state = CpuState::Busy;
                    self.schedule(self.now + dur, EvKind::Step(i));
                    return;
                }
                Op::Hold { ns, lines, lock, pad } => {
                    let base = ns * self.speed(cpu) + pad;
                    // The lock's data was last written by its previous holder.
                    let moved = lines * self.transfer(self.locks[lock].data_from, cpu);
                    // An interrupted holder keeps the lock: the hold is longer.
                    let base = base + self.interrupted(cpu, base + moved);
                    self.account(Cat::Hold, base);
                    self.account(Cat::Handoff, moved);
                    self.threads[i].state = CpuState::Busy;
                    self.schedule(self.now + base + moved, EvKind::Step(i));
                    return;
                }
                Op::Acquire(lock) => {
                    if self.acquire(i, lock) {
                        return;
                    }
                    // Acquired at once with nothing to pull: go on.
                }
                Op::Release(lock) => self.release(i, lock),
                Op::Submit => self.queue.push_back(i),
                Op::Decide => {
                    let prog = self.prog;
                    let mut ops = std::mem::take(&mut self.threads[i].ops);
                    match self.queue.pop_front() {
                        Some(owner) => {
                            self.threads[i].dispatched = Some(owner);
                            self.threads[i].idle_polls = 0;
                            Self::push_segs(
                                &mut ops,
                                &prog.dispatch_rest,
                                &prog.spreads,
                                &mut self.rng,
                                true,
                            );
                            if self.cfg.completion == CompletionMode::Context {
                                // To the device: it completes in the next CPU's context.
                                self.threads[i].dispatched = None;
                                ops.push_back(Op::Issue(owner));
                                ops.push_back(Op::plain(prog.loop_ns, Cat::Outside, true));
                                let rest = std::mem::replace(&mut self.threads[i].ops, ops);
                                self.threads[i].ops.extend(rest);
                                continue;
                            }
                            Self::push_segs(
                                &mut ops,
                                &prog.complete,
                                &prog.spreads,
                                &mut self.rng,
                                false,
                            );
                            Self::push_segs(
                                &mut ops,
                                &prog.credit,
                                &prog.spreads,
                                &mut self.rng,
                                false,
                            );
                            ops.push_back(Op::Credit);
                            if prog.outside_ns > 0.0 {
                                ops.push_back(Op::Work {
                                    ns: prog.outside_ns / 2.0,
                                    lines: 0.0,
                                    data: usize::MAX,
                                    cat: Cat::Outside,
                                    slowed: self.cfg.outside_is_work,
                                    pad: 0.0,
                                });
                            }
                            ops.push_back(Op::Work {
                                ns: prog.loop_ns,
                                lines: 0.0,
                                data: usize::MAX,
                                cat: Cat::Outside,
                                slowed: true,
                                pad: 0.0,
                            });
                        }
                        None => {
                            Self::push_segs(
                                &mut ops,
                                &prog.empty_rest,
                                &prog.spreads,
                                &mut self.rng,
                                true,
                            );
                            if self.cfg.completion == CompletionMode::Context {
                                // Its request in flight, nothing to dispatch: it sleeps.
                                ops.push_back(Op::plain(prog.loop_ns, Cat::Outside, true));
                                ops.push_back(Op::Sleep);
                                let rest = std::mem::replace(&mut self.threads[i].ops, ops);
                                self.threads[i].ops.extend(rest);
                                continue;
                            }
                            let polls = self.threads[i].idle_polls + 1;
                            self.threads[i].idle_polls = polls;
                            let poll = if polls > IDLE_POLLS_BEFORE_YIELD {
                                self.topo.parking.yield_ns
                            } else {
                                self.topo.parking.pause_ns
                            };
                            ops.push_back(Op::Work {
                                ns: prog.loop_ns + poll,
                                lines: 0.0,
                                data: usize::MAX,
                                cat: Cat::Outside,
                                slowed: true,
                                pad: 0.0,
                            });
                        }
                    }
                    // `ops` held the rest of this iteration (nothing, normally); keep it after.
                    let rest = std::mem::replace(&mut self.threads[i].ops, ops);
                    self.threads[i].ops.extend(rest);
                }
                Op::Issue(owner) => {
                    let context = (cpu + 1) % self.pending.len();
                    self.pending[context].push_back(owner);
                    // Its server: the job on that CPU, or the context's own thread.
                    if self.threads[context].job {
                        self.wake_job(i, context);
                    } else if self.threads[context].state == CpuState::Idle
                        && self.threads[context].ops.is_empty()
                    {
                        self.threads[context].state = CpuState::Busy;
                        self.schedule(self.now, EvKind::Step(context));
                    }
                }
                Op::CreditOwner(owner) => {
                    self.threads[owner].outstanding = false;
                    if self.measuring {
                        self.completions += 1;
                        self.threads[owner].completed += 1;
                    }
                    self.wake_job(i, owner);
                }
                Op::Sleep => {
                    let own_context = self.pending.get(cpu).is_some_and(|q| !q.is_empty());
                    if self.threads[i].outstanding && !own_context {
                        self.threads[i].asleep = true;
                        self.threads[i].state = CpuState::Idle;
                        return;
                    }
                }
                Op::Credit => {
                    if let Some(owner) = self.threads[i].dispatched.take() {
                        self.threads[owner].outstanding = false;
                        if self.measuring {
                            self.completions += 1;
                            self.threads[owner].completed += 1;
                        }
                    }
                }
            }
        }
    }

    /// Thread `i` takes `lock`, free, at `at` (after pulling its line from the last holder).
    fn take(&mut self, i: usize, lock: usize, at: f64) {
        let cpu = self.threads[i].cpu;
        self.waiting[i] = None;
        let l = &mut self.locks[lock];
        l.owner = Some(i);
        l.data_from = l.last_cpu;
        l.last_cpu = Some(cpu);
        l.acquired_at = at;
        l.version += 1;
        if self.measuring {
            l.acquisitions += 1;
            l.owner_changes += u64::from(l.last_owner != Some(i));
        }
        l.last_owner = Some(i);
    }

    /// Thread `i` asks for `lock` now. Returns true if it must wait for an event (the line's
    /// transfer, or the lock), false if it holds the lock now and goes on.
    fn acquire(&mut self, i: usize, lock: usize) -> bool {
        let cpu = self.threads[i].cpu;
        let free = self.locks[lock].owner.is_none();
        let xfer = self.transfer(self.locks[lock].last_cpu, cpu);
        match self.prog.kind {
            LockKind::FairSpin => {
                if free && self.locks[lock].fifo.is_empty() {
                    self.take(i, lock, self.now + xfer);
                    self.account(Cat::Handoff, xfer);
                    if xfer == 0.0 {
                        return false;
                    }
                    self.threads[i].state = CpuState::Busy;
                    self.schedule(self.now + xfer, EvKind::Step(i));
                } else {
                    self.locks[lock].fifo.push_back(i);
                    self.waiting[i] = Some(lock);
                    self.threads[i].wait_since = self.now;
                    self.threads[i].state = CpuState::Spin;
                }
                true
            }
            LockKind::ParkingLot => {
                self.threads[i].wait_since = self.now;
                self.threads[i].spin_steps = 0;
                self.waiting[i] = Some(lock);
                self.try_parking_lot(i, lock, true)
            }
        }
    }

    /// A parking_lot acquirer looks at `lock`: on its first try (`blind`: a compare-and-swap
    /// straight away), or after a spin step or a wake-up (a load, then a compare-and-swap). If the
    /// lock's line is here, it takes a free lock at once. Otherwise its blind compare-and-swap
    /// reaches the line half a transfer later and wins if the lock is free then; a load that finds
    /// it free is followed by a compare-and-swap that reaches the line one transfer later and wins
    /// only if nobody took the lock meanwhile. Either way the line comes back half a transfer
    /// after the win. (So the holder that just released it re-takes it from its own cache first:
    /// that is how barging keeps a lock on one CPU.) Held: it parks if a waiter is parked or its
    /// spin phase is over, spins on otherwise. Returns true if it waits for an event.
    fn try_parking_lot(&mut self, i: usize, lock: usize, blind: bool) -> bool {
        let cpu = self.threads[i].cpu;
        let xfer = self.transfer(self.locks[lock].last_cpu, cpu);
        if xfer == 0.0 && self.locks[lock].owner.is_none() {
            let waited = self.now - self.threads[i].wait_since;
            self.account(Cat::Wait, waited);
            self.take(i, lock, self.now);
            self.threads[i].generation += 1;
            self.threads[i].state = CpuState::Busy;
            return false;
        }
        if blind || self.locks[lock].owner.is_none() {
            let (g, v) = (self.threads[i].generation, self.locks[lock].version);
            self.threads[i].state = CpuState::Spin;
            let at = if blind { xfer / 2.0 } else { xfer };
            self.schedule(self.now + at, EvKind::Cas(i, g, if blind { None } else { Some(v) }));
            return true;
        }
        self.spin_or_park(i, lock);
        true
    }

    /// A parking_lot waiter that found `lock` held: the next step of its spin phase, or parks.
    fn spin_or_park(&mut self, i: usize, lock: usize) {
        let steps = self.threads[i].spin_steps;
        if self.locks[lock].parked.is_empty() && steps < SPINWAIT_STEPS {
            let step = steps + 1;
            self.threads[i].spin_steps = step;
            let p = &self.topo.parking;
            let dur =
                if step <= 3 { p.pause_ns * f64::from(1u32 << (step - 1)) } else { p.yield_ns };
            self.threads[i].state = CpuState::Spin;
            let g = self.threads[i].generation;
            self.schedule(self.now + dur, EvKind::Poll(i, g));
        } else {
            self.threads[i].state = CpuState::Idle;
            self.locks[lock].parked.push_back(i);
        }
    }

    /// A compare-and-swap reaches the lock's line: it wins if the lock is free (and, after a
    /// load, untaken since the load saw it free); the winner runs on when the line is back.
    fn cas(&mut self, i: usize, lock: usize, seen: Option<u64>) -> bool {
        let cpu = self.threads[i].cpu;
        let l = &self.locks[lock];
        if l.owner.is_none() && seen.is_none_or(|v| v == l.version) {
            let xfer = self.transfer(l.last_cpu, cpu);
            let back = xfer / 2.0;
            let waited = self.now - self.threads[i].wait_since;
            self.account(Cat::Wait, (waited - back).max(0.0));
            self.account(Cat::Handoff, xfer);
            self.take(i, lock, self.now);
            self.threads[i].generation += 1;
            self.threads[i].state = CpuState::Busy;
            self.schedule(self.now + back, EvKind::Step(i));
            return true;
        }
        if l.owner.is_none() {
            // Taken and released meanwhile: look again.
            return self.try_parking_lot(i, lock, false);
        }
        self.spin_or_park(i, lock);
        true
    }

    /// Thread `i` releases `lock` now.
    fn release(&mut self, i: usize, lock: usize) {
        let cpu = self.threads[i].cpu;
        debug_assert_eq!(self.locks[lock].owner, Some(i), "released by its holder");
        if self.measuring {
            let held = self.now - self.locks[lock].acquired_at.max(self.window_start);
            self.locks[lock].busy_ns += held.max(0.0);
        }
        self.locks[lock].owner = None;
        match self.prog.kind {
            LockKind::FairSpin => {
                let Some(j) = self.locks[lock].fifo.pop_front() else { return };
                // j sees the new `serving` one transfer later (and the profile's hand-off
                // extra, on another CPU), or when its yield returns.
                let xfer = self.topo.transfer(cpu, self.threads[j].cpu);
                let xfer =
                    if xfer > 0.0 { xfer + self.topo.transfer.handoff_extra_ns } else { xfer };
                let p = &self.topo.parking;
                let spin = TICKET_SPINS_BEFORE_YIELD * p.pause_ns;
                let period = spin + p.yield_ns;
                let since = self.threads[j].wait_since;
                let mut at = self.now + xfer;
                if period > 0.0 {
                    let phase = (at - since) % period;
                    if phase > spin {
                        at += period - phase;
                    }
                }
                at += self.waiter_interrupted(self.threads[j].cpu, since, at);
                self.account(Cat::Wait, at - xfer - since);
                self.account(Cat::Handoff, xfer);
                self.take(j, lock, at);
                self.schedule(at, EvKind::Step(j));
                // Between the hand-off and `at` the waiter is still spinning.
            }
            LockKind::ParkingLot => {
                if let Some(j) = self.locks[lock].parked.pop_front() {
                    let p = &self.topo.parking;
                    let (wake, cost) = (p.wake_latency_ns, p.unpark_cost_ns);
                    self.schedule(self.now + wake, EvKind::Wake(j));
                    self.threads[i].ops.push_front(Op::Work {
                        ns: cost,
                        lines: 0.0,
                        data: usize::MAX,
                        cat: Cat::Handoff,
                        slowed: false,
                        pad: 0.0,
                    });
                }
            }
        }
    }

    fn event(&mut self, ev: Ev) {
        self.now = ev.t;
        self.events += 1;
        match ev.kind {
            EvKind::Step(i) => self.run_ops(i),
            EvKind::Poll(i, g) => {
                if self.threads[i].generation != g {
                    return;
                }
                let Some(Op::Acquire(lock)) = self.pending_acquire(i) else { return };
                if !self.try_parking_lot(i, lock, false) {
                    self.run_ops(i);
                }
            }
            EvKind::Cas(i, g, v) => {
                if self.threads[i].generation != g {
                    return;
                }
                let Some(lock) = self.waiting[i] else { return };
                if !self.cas(i, lock, v) {
                    self.run_ops(i);
                }
            }
            EvKind::Wake(i) => {
                let Some(Op::Acquire(lock)) = self.pending_acquire(i) else { return };
                self.threads[i].spin_steps = 0;
                self.threads[i].generation += 1;
                self.threads[i].state = CpuState::Busy;
                if !self.try_parking_lot(i, lock, false) {
                    self.run_ops(i);
                }
            }
        }
    }

    /// The acquisition thread `i` is waiting in (kept as `waiting`).
    fn pending_acquire(&self, i: usize) -> Option<Op> {
        self.waiting[i].map(Op::Acquire)
    }
}

/// Simulates `prog` on `topo` (see the module documentation). An error (one line) for a thread
/// count the profile has no CPUs for.
/// The most events one simulated point may take: about a hundred times what a 64-thread point of
/// a calibrated variant needs. A model whose requests take almost no virtual time would otherwise
/// simulate for ever without reaching its window's end; past this bound it is an error.
pub const MAX_EVENTS: u64 = 200_000_000;

/// How many events pass between two looks at the stop flag (well under a millisecond of work).
pub const STOP_POLL_EVENTS: u64 = 1 << 14;

pub fn simulate(
    prog: &Program,
    topo: &Topology,
    cfg: &SimConfig,
) -> Result<SimResult, ExperimentError> {
    simulate_until(prog, topo, cfg, &schedlab_core::sync::AtomicBool::new(false))
}

/// What [`simulate_until`] answers when `stop` ended it.
pub const STOPPED: &str = "the simulation was stopped";

/// [`simulate`], giving way to `stop` (a signal): it is looked at every [`STOP_POLL_EVENTS`]
/// events (a few milliseconds), and a stop is the error [`STOPPED`].
pub fn simulate_until(
    prog: &Program,
    topo: &Topology,
    cfg: &SimConfig,
    stop: &schedlab_core::sync::AtomicBool,
) -> Result<SimResult, ExperimentError> {
    if cfg.threads == 0 {
        return Err(ExperimentError::run_failed("at least one thread"));
    }
    if cfg.threads > topo.cpus() {
        return Err(ExperimentError::run_failed(format!(
            "{} threads on `{}`, which has {} logical CPUs: the model runs one job per CPU (oversubscription measures the OS scheduler, measuring.md §4)",
            cfg.threads,
            topo.name,
            topo.cpus()
        )));
    }
    // Completion contexts: one per CPU of the profile; those whose CPU has no job get a thread.
    let contexts = if cfg.completion == CompletionMode::Context { topo.cpus() } else { 0 };
    let threads = cfg.threads.max(contexts);
    let mut sim = Sim {
        prog,
        topo,
        cfg,
        rng: SmallRng::seed_from_u64(cfg.seed),
        now: 0.0,
        seq: 0,
        heap: BinaryHeap::new(),
        threads: (0..threads)
            .map(|cpu| Thread {
                cpu,
                ops: VecDeque::new(),
                state: CpuState::Busy,
                outstanding: false,
                dispatched: None,
                idle_polls: 0,
                wait_since: 0.0,
                spin_steps: 0,
                generation: 0,
                completed: 0,
                job: cpu < cfg.threads,
                asleep: false,
            })
            .collect(),
        locks: (0..prog.locks.len()).map(|_| LockState::default()).collect(),
        data_cpu: vec![None; prog.data_ids],
        queue: VecDeque::new(),
        waiting: vec![None; threads],
        window_start: 0.0,
        measuring: false,
        completions: 0,
        acc: [0.0; 4],
        events: 0,
        next_interruption: vec![f64::NEG_INFINITY; threads],
        pending: vec![VecDeque::new(); contexts],
    };
    for t in sim.threads.iter_mut().filter(|t| !t.job) {
        t.state = CpuState::Idle;
    }
    for i in 0..cfg.threads {
        // Staggered starts, so that the jobs do not run in lockstep.
        let t = sim.rng.random::<f64>() * 500.0;
        sim.schedule(t, EvKind::Step(i));
    }
    // With interruptions the window sees at least 50 of them per CPU (their effect is then an
    // average, not the luck of one), within the longest window.
    let min_measure_ns = match &topo.interruptions {
        Some(int) if int.rate_per_s > 0.0 => {
            cfg.min_measure_ns.max(50e9 / int.rate_per_s).min(cfg.max_measure_ns)
        }
        _ => cfg.min_measure_ns,
    };
    let end_max = cfg.warmup_ns + cfg.max_measure_ns;
    while let Some(ev) = sim.heap.pop() {
        if !sim.measuring && ev.t >= cfg.warmup_ns {
            sim.measuring = true;
            sim.window_start = ev.t;
        }
        if sim.measuring {
            let elapsed = ev.t - sim.window_start;
            if (elapsed >= min_measure_ns && sim.completions >= cfg.min_completions)
                || ev.t >= end_max
            {
                sim.now = ev.t;
                break;
            }
        }
        if sim.events % STOP_POLL_EVENTS == 0 && stop.load(schedlab_core::sync::Ordering::Relaxed) {
            return Err(ExperimentError::stopped(STOPPED));
        }
        if sim.events >= cfg.max_events {
            return Err(ExperimentError::run_failed(format!(
                "the simulation of {} threads reached {} events at {:.3} ms of virtual time, short of its window: its requests take almost no time (a degenerate calibration)",
                cfg.threads,
                cfg.max_events,
                ev.t / 1e6
            )));
        }
        sim.event(ev);
    }
    let window = (sim.now - sim.window_start).max(1.0);
    let per = |c: u64| c as f64 / window * 1e6;
    let jobs = sim.threads.iter().filter(|t| t.job);
    let per_thread: Vec<f64> = jobs.map(|t| per(t.completed)).collect();
    let scale = if sim.completions == 0 { 0.0 } else { 1.0 / sim.completions as f64 };
    // Lock time still running at the end of the window.
    let lock_busy = prog
        .locks
        .iter()
        .zip(&sim.locks)
        .map(|(name, l)| {
            let open = if l.owner.is_some() {
                (sim.now - l.acquired_at.max(sim.window_start)).max(0.0)
            } else {
                0.0
            };
            (name.clone(), (l.busy_ns + open) / window)
        })
        .collect();
    Ok(SimResult {
        threads: cfg.threads,
        kiops: per(sim.completions),
        per_thread_min: per_thread.iter().copied().fold(f64::INFINITY, f64::min),
        per_thread_max: per_thread.iter().copied().fold(0.0, f64::max),
        breakdown: Breakdown {
            hold_ns: sim.acc[0] * scale,
            handoff_ns: sim.acc[1] * scale,
            wait_ns: sim.acc[2] * scale,
            outside_ns: sim.acc[3] * scale,
        },
        lock_busy,
        lock_owners: prog
            .locks
            .iter()
            .zip(&sim.locks)
            .map(|(name, l)| LockOwners {
                lock: name.clone(),
                acquisitions: l.acquisitions,
                owner_changes: l.owner_changes,
            })
            .collect(),
        completions: sim.completions,
        measured_ns: window,
        events: sim.events,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::topology::Interruptions;

    /// A variant whose only lock is held `hold_ns` per request, in the dispatch, with nothing
    /// else in its cycle and no lines to pull.
    fn one_hold(hold_ns: f64) -> Calibration {
        let hold = crate::model::calibrate::OneHold { ns: hold_ns, lines: 0.0, empty_ns: 0.0 };
        Calibration::one_lock(LockKind::FairSpin, hold, 0.0)
    }

    /// A calibration whose calls hold the locks the core's order names for `path` and
    /// `profile` (`lock_sequence`), 10 ns each, with 5 ns free before each hold.
    fn on_the_core_path(path: InsertPathKind, profile: KernelProfile) -> Calibration {
        let segments = |call: CycleCall| {
            let mut out = Vec::new();
            for lock in lock_sequence(call, path, profile) {
                out.push(Segment { lock: None, ns: 5.0, lines: 0.0, probability: 1.0 });
                let lock = Some(lock.to_string());
                out.push(Segment { lock, ns: 10.0, lines: 0.0, probability: 1.0 });
            }
            out
        };
        let call = |call: Call, segments: Vec<Segment>| CallModel {
            call,
            total_ns: segments.iter().map(|s| s.ns).sum(),
            cv: 0.0,
            segments,
        };
        let mut cal = one_hold(10.0);
        let calls = vec![
            call(Call::Insert, segments(CycleCall::Submit)),
            call(Call::Dispatch, segments(CycleCall::Dispatch)),
            call(Call::Complete, segments(CycleCall::Complete)),
            call(Call::Credit, Vec::new()),
            call(Call::EmptyDispatch, segments(CycleCall::EmptyDispatch)),
        ];
        cal.insert = path.name().to_string();
        cal.kernel = profile;
        cal.solo = calls.clone();
        cal.pair = calls;
        cal
    }

    #[test]
    fn a_request_is_dispatchable_once_its_insert_site_is_released() {
        // On every insert path and kernel profile: the submission's pieces before the request
        // becomes dispatchable end with the insert site's hold, and no bio merge or depth limit
        // hold comes after it (another job could otherwise take the request before its insert).
        for &path in InsertPathKind::ALL {
            for profile in KernelProfile::ALL {
                let prog = Program::new(&on_the_core_path(path, profile), 2, 0.0).expect("program");
                let split = prog.submit_split();
                let what = format!("{} {}: split {split} of {:?}", path.name(), profile.name(), {
                    prog.insert.iter().map(|s| s.site).collect::<Vec<_>>()
                });
                assert!(split > 0, "{what}");
                assert_eq!(prog.insert[split - 1].site, Some(PadSite::Insert), "{what}");
                let later = &prog.insert[split..];
                let early = [Some(PadSite::BioMerge), Some(PadSite::LimitDepth)];
                assert!(later.iter().all(|s| !early.contains(&s.site)), "{what}");
            }
        }
    }

    /// Two cores, no transfer cost, a `sched_yield` that takes no time (no yield phase delays a
    /// hand-off), and `interruptions`.
    fn two_cores(interruptions: Option<Interruptions>) -> Topology {
        Topology { interruptions, ..Topology::textbook(2, 0.0) }
    }

    #[test]
    fn a_fifo_lock_loses_to_interruptions_about_the_time_they_take() {
        // Two jobs keep a FIFO lock held 250 ns per request busy: 4000 KIOPS. Each CPU is then
        // interrupted 1000 times a second for 20 µs, 2 % of its time. Every interruption of
        // either CPU stops the lock for about its length, whether it lands in a hold (the holder
        // keeps the lock) or in a wait of about 255 ns (the hand-off waits for its end), and no
        // more: about 4 % lost, 1e6 / (255.1 + 5.1) = 3843 KIOPS. Charging each hand-off the
        // chance that a CPU is interrupted at any instant (2 % / 1.02, for half of one, 10 µs)
        // instead, 196 ns per hand-off, would give 1e6 / (255 + 196) = 2217.
        let cal = one_hold(250.0);
        let prog = Program::new(&cal, 2, 0.0).expect("a program");
        let quiet = simulate(&prog, &two_cores(None), &SimConfig::new(2, 1)).expect("simulated");
        assert!((quiet.kiops - 4000.0).abs() < 40.0, "{} KIOPS without interruptions", quiet.kiops);
        let interrupted = Interruptions { rate_per_s: 1000.0, durations_ns: vec![20_000.0] };
        let topo = two_cores(Some(interrupted));
        for seed in [1, 2, 3] {
            let x = simulate(&prog, &topo, &SimConfig::new(2, seed)).expect("simulated").kiops;
            assert!((x - 3843.0).abs() < 0.02 * 3843.0, "seed {seed}: {x} KIOPS, about 3843");
        }
    }

    /// Two jobs whose lock phases (four 60 ns holds 10 ns apart, then 1000 ns outside) meet on a
    /// FIFO lock. With a hand-off that costs one transfer, as an uncontended pull does, a pair
    /// that starts in step stays in step for ever: the follower comes back exactly when the
    /// leader releases its first hold, and every acquisition changes owner. A hand-off longer
    /// than the gap between holds breaks the tie: the leader takes its second hold before the
    /// follower is handed the lock, the follower falls a hold further behind each phase, and
    /// the jobs drift apart until their phases no longer meet, one owner change a phase
    /// (notes/results/2026-12-05-phases.md, where the machine does the latter).
    #[test]
    fn a_handoff_longer_than_the_gaps_drives_two_jobs_phases_apart() {
        let hold = crate::model::calibrate::OneHold { ns: 60.0, lines: 0.0, empty_ns: 60.0 };
        let cal = Calibration::one_lock_phases(LockKind::FairSpin, 4, hold, 10.0);
        let prog = Program::new(&cal, 2, 1000.0).expect("a program");
        let owner_changes = |extra: f64, seed: u64| {
            let mut topo = Topology::textbook(2, 33.0);
            topo.transfer.handoff_extra_ns = extra;
            let r = simulate(&prog, &topo, &SimConfig::new(2, seed)).expect("simulated");
            let owners = &r.lock_owners[0];
            owners.owner_changes as f64 / owners.acquisitions as f64
        };
        let seeds = 1..=6;
        let in_step = seeds.clone().filter(|&seed| owner_changes(0.0, seed) > 0.95).count();
        assert!(in_step > 0, "without the extra some start should stay in step");
        for seed in seeds {
            let apart = owner_changes(30.0, seed);
            assert!((apart - 0.25).abs() < 0.02, "seed {seed}: {apart} owner changes, about 1/4");
        }
    }
}
