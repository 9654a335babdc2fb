//! Calibration: the lengths of a variant's critical sections, call by call and lock by lock, from
//! single-threaded runs, and the lines each one moves when the previous one ran on another CPU.
//!
//! ## The one adapter to the lock statistics
//!
//! [`critical_sections`] is the only function of the predictor that touches
//! `schedlab_core::lockstat`: it times every hold of the path locks while a body runs, and returns
//! per-lock hold lengths as plain numbers ([`LockHolds`]). When the lock statistics change (issue
//! 13: sampling, an exact mode, a new layering), only it changes. The harness asks for one call
//! kind at a time ([`Probe`]), so each figure belongs to one call (insert, dispatch, completion,
//! empty dispatch).
//!
//! Which holds are timed: every hold of every lock class except the counter-sum locks and the
//! statistics sections (`stats-sum`, `stats-section`), whose holds are left untimed. Those nest
//! inside the scheduler or queue lock (timing them would put two clock reads each, about ten times
//! per request, inside the outer hold being measured), or, in the lock-free variants, are many
//! separate locks, one per counter: the model counts their time as work outside any modelled lock.
//! What an untimed nested acquisition still costs inside the outer hold (a record push, a few ns)
//! stays in the outer hold: the holds are upper bounds by that much.
//!
//! ## What a calibration holds ([`Calibration`])
//!
//! For each call, a list of [`Segment`]s in program order: work outside any modelled lock, and holds
//! of a named lock, each with its length on one CPU (`ns`), the cache lines it pulls when the data
//! was last written on another CPU (`lines`), and the chance it happens in one call
//! (`probability`: a deferred batch may be empty). Two sets: `solo` (one process, one CPU: the
//! workload with one job) and `pair` (two processes, the state two jobs see), whose lines come
//! from the relay (harness.rs).
//!
//! Derivation, per call (medians over interleaved windows):
//! - call time T: the plain (uninstrumented) timed pass;
//! - holds: the instrumented pass of that call; the order of the locks within the call is the
//!   code's ([`lock_order`], from `core/src/scheduler.rs` and `core/src/insert/`); where they add
//!   up to more than T (each timed hold carries its clock reads), scaled down together to T;
//! - work outside the locks: T − Σ probability × hold, split evenly between the gaps before, between
//!   and after the holds;
//! - lines of a hold: (hold relayed − hold on one CPU) ÷ one line transfer; lines of the work
//!   outside the locks: the call's relayed excess outside its holds ÷ one line transfer, less one
//!   line per acquisition (the lock word, which the simulation moves itself).
//! - the loop's own cost (request generation, the job loop's checks): the untimed one-job cycle
//!   less the timed calls.

pub use super::harness::Probe;
use super::harness::{self, Call, PatternConfig, PatternTimes, Placement};
use crate::driver::workload::WorkloadConfig;
use crate::error::ExperimentError;
use schedlab_core::lockstat::{self, LockClass};
use schedlab_core::profile::{lock_sequence, CycleCall};
use schedlab_core::sync::{AtomicBool, Ordering};
use schedlab_core::{InsertPathKind, KernelProfile, LockKind, StatsPolicy};
use schedlab_variants::VariantVisitor;
use serde::{Deserialize, Serialize};

/// The holds of one lock class during one kind of call, as lock statistics measured them.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct LockHolds {
    /// The lock class (`sched`, `queue`, `insert`, ...).
    pub lock: String,
    /// Acquisitions per call.
    pub acquisitions_per_call: f64,
    /// Mean hold per acquisition, ns.
    pub hold_ns: f64,
    /// With about k acquisitions per call: the mean hold of each k-th of the holds, longest first
    /// (their mean is `hold_ns`); one entry otherwise.
    pub strata_ns: Vec<f64>,
}

/// Counter-sum locks and statistics sections: timed never, modelled as work (module docs).
fn modelled(class: LockClass) -> bool {
    class != LockClass::STATS_SUM && class != LockClass::STATS_SECTION
}

struct LockstatProbe;

impl Probe for LockstatProbe {
    fn on(&self) {
        lockstat::set_enabled(true);
    }
    fn off(&self) {
        lockstat::set_enabled(false);
    }
    fn thread_done(&self) {
        lockstat::flush();
    }
}

/// The classes whose sampling the adapter sets: the modelled locks (every hold timed) and the
/// nested ones (one hold in [`NESTED_SAMPLING`] timed: enough to tell inside which lock they ran).
fn classes() -> [LockClass; 6] {
    [
        LockClass::SCHED,
        LockClass::QUEUE,
        LockClass::register("insert"),
        LockClass::register("rstat-flush"),
        LockClass::STATS_SUM,
        LockClass::STATS_SECTION,
    ]
}

/// Hold sampling of the nested classes during a calibration.
const NESTED_SAMPLING: u32 = 64;

/// What the instrumentation adds to a measured hold (measured on real locks of the facade, once
/// per lock kind): the hold of an empty critical section (the clock reads around it), and, per
/// untimed nested counter-sum lock or statistics section inside it, what it costs beyond its
/// uninstrumented self (its bookkeeping).
#[derive(Clone, Copy, Debug, Serialize, Deserialize, PartialEq)]
pub struct Inflation {
    pub empty_hold_ns: f64,
    pub per_nested_lock_ns: f64,
    pub per_nested_section_ns: f64,
}

fn set_sampling() {
    for class in classes() {
        lockstat::set_hold_sampling(class, if modelled(class) { 1 } else { NESTED_SAMPLING });
    }
}

/// The mean of a hold histogram (ticks) over its quantiles up to 1 − [`harness::TRIM`], in strata
/// for `a` acquisitions per call ([`slots_for`]), longest first: the longest `1/a` of the holds
/// (one per call), then the next, the last stratum holding the remainder.
fn trimmed_strata(h: &lockstat::Histogram, a: f64) -> Vec<f64> {
    let steps = 32;
    let top = 1.0 - harness::TRIM;
    let k = slots_for(a);
    let weights: Vec<f64> = (0..k).map(|j| slot_probability(a, j).max(1e-9)).collect();
    let total: f64 = weights.iter().sum();
    // Quantile ranges from the top: stratum 0 is the longest holds.
    let mut hi = 1.0;
    let mut strata = Vec::with_capacity(k);
    for w in &weights {
        let lo = (hi - w / total).max(0.0);
        let mean = (0..steps)
            .map(|i| h.quantile(top * (lo + (hi - lo) * (i as f64 + 0.5) / steps as f64)) as f64)
            .sum::<f64>()
            / steps as f64;
        strata.push(mean);
        hi = lo;
    }
    strata
}

fn ticks_to_ns(ticks: f64) -> f64 {
    schedlab_core::sync::lock_ticks_to_ns((ticks.max(0.0) * 1024.0).round() as u64) as f64 / 1024.0
}

/// Measures [`Inflation`] for `kind` (statistics reset before and after; sampling as set).
fn measure_inflation(kind: LockKind) -> Inflation {
    use schedlab_core::sync::Lock;
    let outer = Lock::named(kind, LockClass::SCHED, ());
    let inner = Lock::named(LockKind::FairSpin, LockClass::STATS_SUM, ());
    let body = |locks: usize, sections: usize| {
        let g = outer.lock();
        for _ in 0..locks {
            drop(std::hint::black_box(inner.lock()));
        }
        for _ in 0..sections {
            let section = lockstat::stats_section();
            std::hint::black_box(&section);
        }
        drop(g);
    };
    const N: usize = 20_000;
    const NESTED: usize = 8;
    // Uninstrumented: the whole body, least of five trials.
    let plain = |locks: usize, sections: usize| -> f64 {
        (0..5)
            .map(|_| {
                let start = std::time::Instant::now();
                for _ in 0..N {
                    body(locks, sections);
                }
                start.elapsed().as_nanos() as f64 / N as f64
            })
            .fold(f64::INFINITY, f64::min)
    };
    // Instrumented: the measured hold, trimmed, least of three trials.
    let held = |locks: usize, sections: usize| -> f64 {
        (0..3)
            .map(|_| {
                lockstat::reset();
                lockstat::set_enabled(true);
                for _ in 0..N {
                    body(locks, sections);
                }
                lockstat::set_enabled(false);
                let stats = lockstat::snapshot();
                stats
                    .class(LockClass::SCHED)
                    .map_or(f64::NAN, |c| ticks_to_ns(trimmed_strata(&c.hold, 1.0)[0]))
            })
            .fold(f64::INFINITY, f64::min)
    };
    let (p0, pl, ps) = (plain(0, 0), plain(NESTED, 0), plain(0, NESTED));
    let (h0, hl, hs) = (held(0, 0), held(NESTED, 0), held(0, NESTED));
    lockstat::reset();
    Inflation {
        empty_hold_ns: h0.max(0.0),
        per_nested_lock_ns: (((hl - h0) - (pl - p0)) / NESTED as f64).max(0.0),
        per_nested_section_ns: (((hs - h0) - (ps - p0)) / NESTED as f64).max(0.0),
    }
}

/// [`measure_inflation`], once per lock kind and process.
fn inflation(kind: LockKind) -> Inflation {
    static CACHE: std::sync::Mutex<Vec<(LockKind, Inflation)>> = std::sync::Mutex::new(Vec::new());
    let mut cache = CACHE.lock().unwrap_or_else(|e| e.into_inner());
    if let Some((_, i)) = cache.iter().find(|(k, _)| *k == kind) {
        return *i;
    }
    let i = measure_inflation(kind);
    cache.push((kind, i));
    i
}

/// **The adapter.** Runs `body` with a probe that switches the lock statistics on around the
/// calls it measures, every hold of the modelled lock classes timed, and returns each modelled
/// class's holds per call, less what the instrumentation itself adds to them ([`Inflation`],
/// measured on `kind`'s locks), with the slowest [`harness::TRIM`] of the holds left out
/// (preempted). `body` returns how many calls it measured. The sampling periods and the switch are
/// put back as they were, whatever happens; the statistics are reset before and after (they are
/// global to the process: run one calibration at a time).
pub fn critical_sections(
    kind: LockKind,
    body: impl FnOnce(&dyn Probe) -> Result<u64, ExperimentError>,
) -> Result<Vec<LockHolds>, ExperimentError> {
    struct Restore(Vec<(LockClass, u32)>, bool);
    impl Drop for Restore {
        fn drop(&mut self) {
            lockstat::set_enabled(false);
            for &(class, period) in &self.0 {
                lockstat::set_hold_sampling(class, period);
            }
            lockstat::reset();
            lockstat::set_enabled(self.1);
        }
    }
    let _restore = Restore(
        classes().iter().map(|&c| (c, lockstat::hold_sampling(c))).collect(),
        lockstat::enabled(),
    );
    lockstat::set_enabled(false);
    set_sampling();
    let inflation = inflation(kind);
    lockstat::reset();
    let calls = body(&LockstatProbe)?;
    lockstat::set_enabled(false);
    let stats = lockstat::snapshot();
    if calls == 0 {
        return Ok(Vec::new());
    }
    // Nested acquisitions inside each class, from the timed samples of the nested classes.
    let summaries = stats.summarize(1);
    let nested_inside = |nested: LockClass, outer: &str| -> f64 {
        let Some(n) = stats.class(nested) else { return 0.0 };
        let Some(sm) = summaries.iter().find(|l| l.name == nested.name()) else { return 0.0 };
        let inside = sm.inside.iter().find(|i| i.outer == outer).map_or(0, |i| i.hold_ns) as f64;
        if sm.hold_ns.total == 0 {
            return 0.0;
        }
        n.acquisitions as f64 * (inside / sm.hold_ns.total as f64).min(1.0)
    };
    let mut out = Vec::new();
    for (class, s) in &stats.classes {
        if !modelled(*class) || s.acquisitions == 0 || s.hold.count() == 0 {
            continue;
        }
        let per_call = s.acquisitions as f64 / calls as f64;
        let name = class.name();
        let acq = s.acquisitions as f64;
        let correction = inflation.empty_hold_ns
            + nested_inside(LockClass::STATS_SUM, name) / acq * inflation.per_nested_lock_ns
            + nested_inside(LockClass::STATS_SECTION, name) / acq * inflation.per_nested_section_ns;
        let strata: Vec<f64> = trimmed_strata(&s.hold, per_call)
            .into_iter()
            .map(|t| (ticks_to_ns(t) - correction).max(0.0))
            .collect();
        let weights: Vec<f64> = (0..strata.len()).map(|j| slot_probability(per_call, j)).collect();
        let hold_ns = strata.iter().zip(&weights).map(|(h, w)| h * w).sum::<f64>()
            / weights.iter().sum::<f64>().max(1e-9);
        out.push(LockHolds {
            lock: name.to_string(),
            acquisitions_per_call: per_call,
            hold_ns,
            strata_ns: strata,
        });
    }
    Ok(out)
}

// ---------------------------------------------------------------------------------------------
// The calibration itself.

/// One piece of a call: work outside any modelled lock, or a hold of one.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct Segment {
    /// The lock held (`None`: outside every modelled lock).
    pub lock: Option<String>,
    /// Length on one CPU, its data already there, ns.
    pub ns: f64,
    /// Cache lines pulled when the data was last written on another CPU.
    pub lines: f64,
    /// Chance that it happens in one call (1 but for holds that are sometimes skipped).
    pub probability: f64,
}

/// One call as the simulation runs it.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct CallModel {
    pub call: Call,
    /// The whole call on one CPU, ns.
    pub total_ns: f64,
    /// The spread of the call's time (standard deviation ÷ mean) on one CPU: the simulation draws
    /// each segment's length from a gamma distribution with this spread around its mean.
    #[serde(default)]
    pub cv: f64,
    pub segments: Vec<Segment>,
}

/// serde: a number, or null (what serde_json writes for NaN) read as NaN.
fn null_as_nan<'de, D: serde::Deserializer<'de>>(deserializer: D) -> Result<f64, D::Error> {
    Ok(Option::<f64>::deserialize(deserializer)?.unwrap_or(f64::NAN))
}

/// The measured figures a calibration was derived from (medians over windows), for reports.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct RawCall {
    pub call: Option<Call>,
    // A figure that was not measured (a pattern without that call: one job never dispatches from
    // an empty scheduler) is NaN, which JSON writes as null; read null back as NaN.
    #[serde(deserialize_with = "null_as_nan")]
    pub solo_ns: f64,
    #[serde(deserialize_with = "null_as_nan")]
    pub pair_same_ns: f64,
    #[serde(deserialize_with = "null_as_nan")]
    pub pair_relay_ns: f64,
    #[serde(deserialize_with = "null_as_nan")]
    pub solo_cv: f64,
    #[serde(deserialize_with = "null_as_nan")]
    pub pair_same_cv: f64,
    pub holds_solo: Vec<LockHolds>,
    pub holds_pair_same: Vec<LockHolds>,
    pub holds_pair_relay: Vec<LockHolds>,
}

/// A variant's calibration on one lock kind and insert path (see the module documentation).
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct Calibration {
    pub variant: String,
    pub lock: LockKind,
    pub insert: String,
    /// The kernel profile whose lock sites the calibrated submission ran (files from before
    /// profiles existed were measured without the bio merge: read as 4.12 all the same).
    #[serde(default)]
    pub kernel: KernelProfile,
    /// The line transfer the relay's excess was divided by, ns (one way): the median of probes
    /// taken right before and after each relay window (the machine's transfer when no probe
    /// measured).
    pub transfer_ns: f64,
    /// Whether the relay ran (two CPUs) and measured every call; without it every `lines` is 0
    /// (one CPU, or CPUs so busy with other processes that no relayed round finished in time).
    pub relayed: bool,
    /// The one-job loop's own cost per request (request generation, checks), ns.
    pub loop_ns: f64,
    /// The untimed one-job cycle, ns per request.
    pub solo_cycle_ns: f64,
    /// What timing a call added to it, ns: taken off each call's work outside the locks.
    #[serde(default)]
    pub timing_ns: f64,
    /// One process on one CPU.
    pub solo: Vec<CallModel>,
    /// Two processes; lines from the relay.
    pub pair: Vec<CallModel>,
    pub raw: Vec<RawCall>,
    /// Measurement windows whose median each figure is.
    pub windows: usize,
    pub rounds_per_window: u64,
    /// Steps that did not find what the pattern expects (should be 0).
    pub anomalies: u64,
}

impl Calibration {
    pub fn call(&self, pair: bool, call: Call) -> Option<&CallModel> {
        let set = if pair { &self.pair } else { &self.solo };
        set.iter().find(|c| c.call == call)
    }

    /// A made calibration, not a measured one: a cycle that holds one lock (`sched`) of `kind`
    /// once per request. The dispatch holds it `hold.ns` and pulls `hold.lines` when it changed
    /// CPUs, a dispatch that finds nothing holds it `empty_hold_ns`, the insert works `free_ns`
    /// outside it, and nothing else costs anything. For where a textbook lock is the point, not
    /// a variant's calls: the simulation's tests and the barging probe
    /// (`benches/examples/barging.rs`).
    pub fn one_lock(kind: LockKind, hold: OneHold, free_ns: f64) -> Calibration {
        let seg = |lock: Option<&str>, ns: f64, lines: f64| Segment {
            lock: lock.map(str::to_string),
            ns,
            lines,
            probability: 1.0,
        };
        let call = |call: Call, segments: Vec<Segment>| CallModel {
            call,
            total_ns: segments.iter().map(|s| s.ns).sum(),
            cv: 0.0,
            segments,
        };
        let calls = vec![
            call(Call::Insert, vec![seg(None, free_ns, 0.0)]),
            call(Call::Dispatch, vec![seg(Some("sched"), hold.ns, hold.lines)]),
            call(Call::Complete, vec![seg(None, 0.0, 0.0)]),
            call(Call::Credit, vec![seg(None, 0.0, 0.0)]),
            call(Call::EmptyDispatch, vec![seg(Some("sched"), hold.empty_ns, 0.0)]),
        ];
        Calibration {
            variant: "one-lock".into(),
            lock: kind,
            insert: InsertPathKind::Direct.name().into(),
            kernel: KernelProfile::Seeds,
            transfer_ns: 0.0,
            relayed: true,
            loop_ns: 0.0,
            solo_cycle_ns: hold.ns + free_ns,
            timing_ns: 0.0,
            solo: calls.clone(),
            pair: calls,
            raw: Vec::new(),
            windows: 1,
            rounds_per_window: 1,
            anomalies: 0,
        }
    }
}

impl Calibration {
    /// [`Calibration::one_lock`] with a *phase* of `holds` holds of the lock a request, `gap_ns`
    /// apart: `holds − 1` in the submission, each followed by its gap, and the dispatch's deciding
    /// hold last; every hold `hold.ns` long, pulling `hold.lines` when it changed CPUs. The
    /// request path's shape without its calls: the phase probe (`benches/examples/phases.rs`)
    /// and the simulation's tests of two jobs' phases.
    pub fn one_lock_phases(
        kind: LockKind,
        holds: usize,
        hold: OneHold,
        gap_ns: f64,
    ) -> Calibration {
        let mut cal = Calibration::one_lock(kind, hold, 0.0);
        let mut segments = Vec::new();
        for _ in 1..holds.max(1) {
            let lock = Some("sched".to_string());
            segments.push(Segment { lock, ns: hold.ns, lines: hold.lines, probability: 1.0 });
            segments.push(Segment { lock: None, ns: gap_ns, lines: 0.0, probability: 1.0 });
        }
        if segments.is_empty() {
            segments.push(Segment { lock: None, ns: 0.0, lines: 0.0, probability: 1.0 });
        }
        let total_ns = segments.iter().map(|s| s.ns).sum();
        let insert = CallModel { call: Call::Insert, total_ns, cv: 0.0, segments };
        for m in cal.solo.iter_mut().chain(cal.pair.iter_mut()).filter(|m| m.call == Call::Insert) {
            *m = insert.clone();
        }
        cal.solo_cycle_ns = total_ns + hold.ns;
        cal
    }
}

/// The hold of [`Calibration::one_lock`]: ns and lines with a request, ns without one.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct OneHold {
    pub ns: f64,
    pub lines: f64,
    pub empty_ns: f64,
}

/// The modelled locks a call takes, in program order: the core's one description
/// (`schedlab_core::profile::lock_sequence`), for the calibrated kernel profile. `queue` is taken
/// only by a variant whose deferred updates run under the queue lock; a lock a variant does not
/// take is measured at 0 acquisitions and dropped. `benches/tests/lock_sites.rs` checks the
/// description against the locks each call really takes.
pub fn lock_order(call: Call, insert: InsertPathKind, profile: KernelProfile) -> Vec<&'static str> {
    let cycle = match call {
        Call::Insert => CycleCall::Submit,
        Call::Dispatch => CycleCall::Dispatch,
        Call::Complete => CycleCall::Complete,
        Call::EmptyDispatch => CycleCall::EmptyDispatch,
        // The owner's credit is an atomic add: no lock.
        Call::Credit => return Vec::new(),
    };
    lock_sequence(cycle, insert, profile)
}

/// How much to measure.
#[derive(Clone, Debug)]
pub struct CalibrationSettings {
    /// Windows (each runs every pass once, interleaved); figures are medians over windows.
    pub windows: usize,
    /// Measured rounds per pass and window.
    pub rounds: u64,
    /// The two CPUs of the relay (`None`: no relay, lines 0).
    pub relay: Option<(usize, usize)>,
    /// The one-way line transfer between them, ns.
    pub transfer_ns: f64,
}

/// Short ping-pongs in each probe of the relay's transfer (the least is kept).
const RELAY_PROBE_TRIALS: usize = 3;

impl Default for CalibrationSettings {
    fn default() -> Self {
        CalibrationSettings { windows: 5, rounds: 3000, relay: None, transfer_ns: 0.0 }
    }
}

/// Per-window raw figures of one mode.
#[derive(Default)]
struct ModeWindow {
    times: Option<PatternTimes>,
    holds: Vec<(Call, Vec<LockHolds>)>,
}

/// The longest one pass may take (it keeps the rounds it did): bounds a calibration on a busy
/// machine, where a relay waits for its partner's CPU at every step.
pub const PASS_TIME_LIMIT: std::time::Duration = std::time::Duration::from_millis(300);

const PROBED: [Call; 4] = [Call::Insert, Call::Dispatch, Call::Complete, Call::EmptyDispatch];

fn measure_mode<P: StatsPolicy>(
    workload: &WorkloadConfig,
    procs: usize,
    placement: Placement,
    rounds: u64,
    interrupt: &AtomicBool,
) -> Result<ModeWindow, ExperimentError> {
    let cfg = PatternConfig {
        workload: workload.clone(),
        procs,
        placement,
        rounds,
        warmup: (rounds / 10 + 50).min(200),
        timed: true,
        empty_dispatch: procs > 1,
        max_time: Some(PASS_TIME_LIMIT),
    };
    let mut w = ModeWindow {
        times: Some(harness::run_pattern::<P>(&cfg, None, interrupt)?),
        holds: Vec::new(),
    };
    for call in PROBED {
        if call == Call::EmptyDispatch && !cfg.empty_dispatch {
            continue;
        }
        let mut untimed = cfg.clone();
        untimed.timed = false;
        let holds = critical_sections(workload.lock, |probe| {
            let t = harness::run_pattern::<P>(&untimed, Some((call, probe)), interrupt)?;
            Ok(t.rounds * if call == Call::EmptyDispatch { 1 } else { procs as u64 })
        })?;
        w.holds.push((call, holds));
    }
    Ok(w)
}

use crate::stats::median;

/// The median over windows of the holds of one call (classes matched by name; a class absent
/// from a window counts as 0 acquisitions there).
fn median_holds(windows: &[ModeWindow], call: Call) -> Vec<LockHolds> {
    let mut names: Vec<String> = Vec::new();
    for w in windows {
        for (c, hs) in &w.holds {
            if *c == call {
                for h in hs {
                    if !names.contains(&h.lock) {
                        names.push(h.lock.clone());
                    }
                }
            }
        }
    }
    names
        .into_iter()
        .map(|name| {
            let of: Vec<Option<&LockHolds>> = windows
                .iter()
                .map(|w| {
                    w.holds
                        .iter()
                        .find(|(c, _)| *c == call)
                        .and_then(|(_, hs)| hs.iter().find(|h| h.lock == name))
                })
                .collect();
            let acq = median(
                &of.iter().map(|h| h.map_or(0.0, |h| h.acquisitions_per_call)).collect::<Vec<_>>(),
            );
            let present: Vec<&LockHolds> = of.iter().flatten().copied().collect();
            let hold = median(&present.iter().map(|h| h.hold_ns).collect::<Vec<_>>());
            let k = present.iter().map(|h| h.strata_ns.len()).max().unwrap_or(1);
            let strata = (0..k)
                .map(|j| {
                    median(
                        &present
                            .iter()
                            .filter_map(|h| h.strata_ns.get(j).copied())
                            .collect::<Vec<_>>(),
                    )
                })
                .collect();
            LockHolds { lock: name, acquisitions_per_call: acq, hold_ns: hold, strata_ns: strata }
        })
        .filter(|h| h.acquisitions_per_call >= 0.01)
        .collect()
}

/// The median over windows of a call's mean time; NaN when no window timed it.
fn median_time(windows: &[ModeWindow], call: Call) -> f64 {
    let v: Vec<f64> = windows
        .iter()
        .filter_map(|w| w.times.as_ref())
        .map(|t| t.mean(call))
        .filter(|v| v.is_finite())
        .collect();
    if v.is_empty() {
        f64::NAN
    } else {
        median(&v)
    }
}

fn median_cv(windows: &[ModeWindow], call: Call) -> f64 {
    let v: Vec<f64> = windows
        .iter()
        .filter_map(|w| w.times.as_ref())
        .map(|t| t.cv(call))
        .filter(|v| v.is_finite())
        .collect();
    if v.is_empty() {
        0.0
    } else {
        median(&v)
    }
}

/// The acquisitions a lock makes per call, `a`, as slots: the first `floor(a)` always happen, the
/// next one with the remainder (1.5 on the lists path's dispatch: the splice-and-dispatch hold
/// always, `release_listed` half the time).
pub fn slots_for(a: f64) -> usize {
    ((a - 0.05).ceil() as usize).max(1)
}

fn slot_probability(a: f64, j: usize) -> f64 {
    (a - j as f64).clamp(0.0, 1.0)
}

/// A slot of the lock order filled with a measured hold.
struct Slot {
    lock: String,
    hold_ns: f64,
    probability: f64,
}

/// Lays the measured holds of one call on the code's lock order: each occurrence of a lock in
/// [`lock_order`] takes the next stratum of that lock (longest first, which on the lists path puts
/// the dispatch's splice-and-dispatch hold before its short `release_listed` hold); acquisitions
/// the order does not name are appended at the end.
fn slots(
    call: Call,
    insert: InsertPathKind,
    profile: KernelProfile,
    holds: &[LockHolds],
) -> Vec<Slot> {
    let order = lock_order(call, insert, profile);
    let mut pending: Vec<std::collections::VecDeque<Slot>> = holds
        .iter()
        .map(|h| {
            let a = h.acquisitions_per_call;
            (0..h.strata_ns.len().max(1))
                .map(|j| Slot {
                    lock: h.lock.clone(),
                    hold_ns: h.strata_ns.get(j).copied().unwrap_or(h.hold_ns),
                    probability: slot_probability(a, j),
                })
                .collect()
        })
        .collect();
    let mut out = Vec::new();
    for name in order {
        if let Some(q) = holds.iter().position(|h| h.lock == name) {
            if let Some(slot) = pending[q].pop_front() {
                out.push(slot);
            }
        }
    }
    for q in pending {
        out.extend(q);
    }
    out
}

/// Builds one call's segments: holds in program order with the outside work split evenly around them.
fn call_model(
    call: Call,
    insert: InsertPathKind,
    profile: KernelProfile,
    total_ns: f64,
    cv: f64,
    holds: &[LockHolds],
    relay: Option<(f64, &[LockHolds], f64)>,
) -> CallModel {
    let slots = slots(call, insert, profile, holds);
    let held: f64 = slots.iter().map(|s| s.probability * s.hold_ns).sum();
    let free = (total_ns - held).max(0.0);
    // Timed holds carry their own clock reads: where they add up to more than the plain call,
    // they are scaled down together to fit it, so that a call is never modelled longer than its
    // plain pass measured (queue-lock's were 15 ns a request over, 3 % of its one-job cycle:
    // notes/results/2026-12-05-calibration-floor.md). The lines below come from differences of
    // timed holds, in which the clock reads cancel, and keep the unscaled lengths.
    let fit = if held > total_ns && held > 0.0 { total_ns / held } else { 1.0 };
    let gaps = slots.len() + 1;
    // Lines: from the relay's excess.
    let (hold_lines, free_lines): (Vec<f64>, f64) = match relay {
        Some((relay_total, relay_holds, transfer)) if transfer > 0.0 => {
            let rslots = slots_like(&slots, call, insert, profile, relay_holds);
            let lines: Vec<f64> = slots
                .iter()
                .zip(&rslots)
                .map(|(s, r)| ((r - s.hold_ns) / transfer).max(0.0))
                .collect();
            let relay_held: f64 = slots.iter().zip(&rslots).map(|(s, r)| s.probability * r).sum();
            let acquisitions: f64 = slots.iter().map(|s| s.probability).sum();
            let excess_free = (relay_total - relay_held) - free;
            (lines, (excess_free / transfer - acquisitions).max(0.0))
        }
        _ => (vec![0.0; slots.len()], 0.0),
    };
    let mut segments = Vec::with_capacity(2 * gaps);
    let gap = |segments: &mut Vec<Segment>| {
        segments.push(Segment {
            lock: None,
            ns: free / gaps as f64,
            lines: free_lines / gaps as f64,
            probability: 1.0,
        })
    };
    gap(&mut segments);
    for (s, lines) in slots.iter().zip(hold_lines) {
        segments.push(Segment {
            lock: Some(s.lock.clone()),
            ns: s.hold_ns * fit,
            lines,
            probability: s.probability,
        });
        gap(&mut segments);
    }
    CallModel { call, total_ns, cv, segments }
}

/// Takes `ns` off a call's work outside the locks (spread evenly over its pieces, none below 0).
fn remove_outside(m: &mut CallModel, ns: f64) {
    let free: Vec<usize> =
        m.segments.iter().enumerate().filter(|(_, s)| s.lock.is_none()).map(|(i, _)| i).collect();
    if free.is_empty() || ns <= 0.0 {
        return;
    }
    let total: f64 = free.iter().map(|&i| m.segments[i].ns).sum();
    let take = ns.min(total);
    for &i in &free {
        let s = &mut m.segments[i];
        s.ns = if total > 0.0 { s.ns - take * s.ns / total } else { 0.0 };
    }
    m.total_ns -= take;
}

/// The relayed hold lengths in the same slots as `slots` (matched by lock name and occurrence).
fn slots_like(
    slots: &[Slot],
    call: Call,
    insert: InsertPathKind,
    profile: KernelProfile,
    relay_holds: &[LockHolds],
) -> Vec<f64> {
    let relayed = self::slots(call, insert, profile, relay_holds);
    let mut seen: Vec<(&str, usize)> = Vec::new();
    slots
        .iter()
        .map(|s| {
            let nth = seen.iter().filter(|(n, _)| *n == s.lock).count();
            seen.push((&s.lock, nth));
            relayed.iter().filter(|r| r.lock == s.lock).nth(nth).map_or(s.hold_ns, |r| r.hold_ns)
        })
        .collect()
}

/// Calibrates variant `P` for `workload` (its lock kind, insert path, groups, slots, rw, bs).
/// `progress` is told the fraction done after each window.
pub fn calibrate<P: StatsPolicy>(
    workload: &WorkloadConfig,
    settings: &CalibrationSettings,
    interrupt: &AtomicBool,
    progress: &mut dyn FnMut(f64),
) -> Result<Calibration, ExperimentError> {
    let home = settings.relay.map_or_else(|| crate::driver::host::allowed_cpus()[0], |(a, _)| a);
    let mut solo = Vec::new();
    let mut same = Vec::new();
    let mut relay = Vec::new();
    // The transfer between the relay's CPUs, probed right before and after each relay window.
    let mut relay_transfers = Vec::new();
    let mut cycles = Vec::new();
    let windows = settings.windows.max(1);
    for i in 0..windows {
        if interrupt.load(Ordering::Relaxed) {
            return Err(ExperimentError::run_failed("interrupted"));
        }
        cycles.push(harness::untimed_cycle_ns::<P>(workload, home, settings.rounds, interrupt)?);
        solo.push(measure_mode::<P>(
            workload,
            1,
            Placement::Same(home),
            settings.rounds,
            interrupt,
        )?);
        same.push(measure_mode::<P>(
            workload,
            2,
            Placement::Same(home),
            settings.rounds,
            interrupt,
        )?);
        if let Some((a, b)) = settings.relay {
            let probe = || {
                super::probes::transfer_between(a, b, RELAY_PROBE_TRIALS, interrupt)
                    .map(|t| t.one_way_ns)
            };
            relay_transfers.extend(probe());
            relay.push(measure_mode::<P>(
                workload,
                2,
                Placement::Relay(a, b),
                settings.rounds,
                interrupt,
            )?);
            relay_transfers.extend(probe());
        }
        progress((i + 1) as f64 / windows as f64);
    }
    if interrupt.load(Ordering::Relaxed) {
        return Err(ExperimentError::run_failed("interrupted"));
    }
    let anomalies: u64 = solo
        .iter()
        .chain(&same)
        .chain(&relay)
        .filter_map(|w| w.times.as_ref())
        .map(|t| t.anomalies)
        .sum();
    let insert = workload.insert;
    let profile = workload.kernel;
    // The relay's excess is divided by the transfer of the placement the relay ran in: on a
    // virtual machine the host moves the vCPUs, and one transfer takes 32 or 157 ns by where they
    // are (notes/results/2026-12-04-placement.md), so the machine's transfer, measured once
    // minutes before, can be the other placement's and make every line count 4.9 times too
    // many or too few. The median of the probes around the relay windows goes with the median
    // of the relay's times.
    let transfer =
        if relay_transfers.is_empty() { settings.transfer_ns } else { median(&relay_transfers) };
    let mut raw = Vec::new();
    let mut solo_models = Vec::new();
    let mut pair_models = Vec::new();
    for call in Call::ALL {
        let r = RawCall {
            call: Some(call),
            solo_ns: median_time(&solo, call),
            pair_same_ns: median_time(&same, call),
            pair_relay_ns: median_time(&relay, call),
            solo_cv: median_cv(&solo, call),
            pair_same_cv: median_cv(&same, call),
            holds_solo: median_holds(&solo, call),
            holds_pair_same: median_holds(&same, call),
            holds_pair_relay: median_holds(&relay, call),
        };
        if r.solo_ns.is_finite() && call != Call::EmptyDispatch {
            solo_models.push(call_model(
                call,
                insert,
                profile,
                r.solo_ns,
                r.solo_cv,
                &r.holds_solo,
                None,
            ));
        }
        if r.pair_same_ns.is_finite() {
            let rel = (r.pair_relay_ns.is_finite() && !relay.is_empty()).then_some((
                r.pair_relay_ns,
                r.holds_pair_relay.as_slice(),
                transfer,
            ));
            pair_models.push(call_model(
                call,
                insert,
                profile,
                r.pair_same_ns,
                r.pair_same_cv,
                &r.holds_pair_same,
                rel,
            ));
        }
        raw.push(r);
    }
    let solo_cycle = median(&cycles);
    let timed_calls = [Call::Insert, Call::Dispatch, Call::Complete, Call::Credit];
    let calls_solo: f64 = timed_calls
        .iter()
        .filter_map(|c| solo_models.iter().find(|m| m.call == *c))
        .map(|m| m.total_ns)
        .sum();
    // Timing each call adds to it (clock reads at its edges): what the timed calls add up to
    // beyond the untimed cycle, per call, taken off every call's work outside the locks.
    let timing_ns = if solo_cycle.is_finite() {
        ((calls_solo - solo_cycle) / timed_calls.len() as f64).max(0.0)
    } else {
        0.0
    };
    for m in solo_models.iter_mut().chain(pair_models.iter_mut()) {
        remove_outside(m, timing_ns);
    }
    let calls_solo: f64 = timed_calls
        .iter()
        .filter_map(|c| solo_models.iter().find(|m| m.call == *c))
        .map(|m| m.total_ns)
        .sum();
    Ok(Calibration {
        variant: P::NAME.to_string(),
        lock: workload.lock,
        insert: insert.name().to_string(),
        kernel: profile,
        transfer_ns: transfer,
        relayed: !relay.is_empty()
            && [Call::Insert, Call::Dispatch, Call::Complete]
                .iter()
                .all(|&c| median_time(&relay, c).is_finite()),
        loop_ns: (solo_cycle - calls_solo).max(0.0),
        timing_ns,
        solo_cycle_ns: solo_cycle,
        solo: solo_models,
        pair: pair_models,
        raw,
        windows,
        rounds_per_window: settings.rounds,
        anomalies,
    })
}

struct CalibrateVisitor<'a> {
    workload: &'a WorkloadConfig,
    settings: &'a CalibrationSettings,
    interrupt: &'a AtomicBool,
    progress: &'a mut dyn FnMut(f64),
}

impl VariantVisitor for CalibrateVisitor<'_> {
    type Output = Result<Calibration, ExperimentError>;
    fn visit<P: StatsPolicy>(self) -> Self::Output {
        calibrate::<P>(self.workload, self.settings, self.interrupt, self.progress)
    }
}

/// [`calibrate`] for the variant called `name`.
pub fn calibrate_named(
    name: &str,
    workload: &WorkloadConfig,
    settings: &CalibrationSettings,
    interrupt: &AtomicBool,
    progress: &mut dyn FnMut(f64),
) -> Result<Calibration, ExperimentError> {
    schedlab_variants::visit(name, CalibrateVisitor { workload, settings, interrupt, progress })
        .unwrap_or_else(|| Err(ExperimentError::run_failed(format!("unknown variant `{name}`"))))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A figure that was not measured is NaN, written as null: a saved calibration with one must
    /// read back (`--calibration`) with the NaN in place, not fail.
    #[test]
    fn an_unmeasured_figure_survives_a_json_round_trip() {
        let raw = RawCall { solo_ns: f64::NAN, pair_same_ns: 38.5, ..RawCall::default() };
        let json = serde_json::to_string(&raw).unwrap();
        assert!(json.contains("\"solo_ns\":null"), "{json}");
        let back: RawCall = serde_json::from_str(&json).unwrap();
        assert!(back.solo_ns.is_nan());
        assert_eq!(back.pair_same_ns, 38.5);
    }

    fn holds(lock: &str, per_call: f64, ns: f64) -> LockHolds {
        LockHolds {
            lock: lock.to_string(),
            acquisitions_per_call: per_call,
            hold_ns: ns,
            strata_ns: vec![ns],
        }
    }

    fn modelled_ns(m: &CallModel) -> f64 {
        m.segments.iter().map(|s| s.probability * s.ns).sum()
    }

    /// A call's pieces add up to its plain time whether its timed holds fit inside it or not:
    /// holds that add up to more (their clock reads) are scaled down together, keeping their
    /// proportions, and lines from the relay still come from the unscaled differences.
    #[test]
    fn timed_holds_longer_than_the_plain_call_are_fitted_into_it() {
        let (insert, kernel) = (InsertPathKind::Direct, KernelProfile::Bare);
        let inside = [holds("sched", 1.0, 60.0)];
        let fits = call_model(Call::Dispatch, insert, kernel, 100.0, 0.0, &inside, None);
        assert!((modelled_ns(&fits) - 100.0).abs() < 1e-9, "{fits:?}");
        let hold = |m: &CallModel| m.segments.iter().find(|s| s.lock.is_some()).unwrap().ns;
        assert_eq!(hold(&fits), 60.0);

        let over = [holds("sched", 1.0, 90.0), holds("queue", 1.0, 30.0)];
        let relayed = [holds("sched", 1.0, 90.0 + 3.0 * 50.0), holds("queue", 1.0, 30.0)];
        let m = call_model(Call::Dispatch, insert, kernel, 100.0, 0.0, &over, None);
        assert!((modelled_ns(&m) - 100.0).abs() < 1e-9, "{m:?}");
        let ns: Vec<f64> = m.segments.iter().filter(|s| s.lock.is_some()).map(|s| s.ns).collect();
        assert!((ns[0] / ns[1] - 3.0).abs() < 1e-9, "{ns:?}");
        let rel = Some((100.0 + 150.0, relayed.as_slice(), 50.0));
        let pair = call_model(Call::Dispatch, insert, kernel, 100.0, 0.0, &over, rel);
        let lines: Vec<f64> =
            pair.segments.iter().filter(|s| s.lock.is_some()).map(|s| s.lines).collect();
        assert!((lines[0] - 3.0).abs() < 1e-9 && lines[1] == 0.0, "{lines:?}");
    }
}
