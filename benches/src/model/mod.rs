//! `schedlab predict`: what a variant does on more CPUs than this machine has, from a calibrated
//! discrete-event simulation of the workload (`notes/predict.md` is the long form).
//!
//! ## Pipeline
//!
//! 1. **Machine** ([`topology`]): cores, hyperthreads, the transfer of one cache line between
//!    siblings and between cores, parking_lot's costs (pause, yield, wake-up, wake call); measured
//!    here ([`topology::measure_here`], [`probes`]) or read from a JSON profile.
//! 2. **Calibration** ([`calibrate`], [`harness`]): per variant, lock kind and insert path, from
//!    single-threaded runs with every hold of the path locks timed (the one adapter to
//!    `schedlab_core::lockstat` is [`calibrate::critical_sections`]): each call's critical
//!    sections and the work between them, and, by relaying the calls between two CPUs that never
//!    run at the same time, the cache lines each section pulls when the previous one ran
//!    elsewhere. No multi-threaded throughput is used.
//! 3. **Simulation** ([`sim`]): N CPUs, one job each, the request cycle of `workload.rs`, each lock
//!    by its kind's discipline (FIFO hand-off for the ticket lock; barging, spinning and parking
//!    for parking_lot); KIOPS and the cycle's breakdown (hold, hand-off, wait, outside).
//!    Deterministic: same inputs and seed, same output.
//! 4. **Validation** (`experiment::validate`, above the model): measured against predicted at the thread counts this machine
//!    has, interleaved rounds, with the error and the ordering of the variants.
//!
//! ## Limits
//!
//! One job per logical CPU (no oversubscription: that measures the OS scheduler). The counter-sum
//! locks are modelled as work, not as locks (they are many, one per counter). Lines are counted
//! on two CPUs: a section's data is assumed to be as far as the previous holder's CPU is, however
//! many CPUs wrote parts of it. The sections' lengths are those measured with one or two requests
//! queued. A segment's speed under SMT is fixed when it starts.

pub mod calibrate;
pub mod harness;
pub mod probes;
pub mod sim;
pub mod topology;

use crate::driver::completion::CompletionMode;
use crate::error::ExperimentError;
use crate::files::input::{caps, read_input};
use crate::files::provenance::Provenance;
use crate::files::stop::parse_json_until;
use calibrate::{Calibration, CalibrationSettings};
use harness::Call;
use schedlab_core::sync::AtomicBool;
use schedlab_core::{InsertPathKind, LockKind};
use serde::{Deserialize, Serialize};
use sim::{Program, SimConfig, SimResult};
use topology::Topology;

/// Every calibration of one measuring session, with the machine it was measured on.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct CalibrationSet {
    /// What `schedlab predict` wrote this with (a file's own record; never checked).
    pub provenance: serde_json::Value,
    /// The machine measured with it (transfers, parking costs).
    pub machine: Topology,
    /// The workload the calibrations were measured for (groups, weights, slots, rw, bs).
    pub workload: serde_json::Value,
    pub calibrations: Vec<Calibration>,
}

impl CalibrationSet {
    pub fn find(
        &self,
        variant: &str,
        lock: LockKind,
        insert: InsertPathKind,
    ) -> Option<&Calibration> {
        self.calibrations
            .iter()
            .find(|c| c.variant == variant && c.lock == lock && c.insert == insert.name())
    }

    /// Reads a calibration file; the error is one line naming it.
    pub fn load(path: &std::path::Path) -> Result<CalibrationSet, ExperimentError> {
        Self::load_until(path, &AtomicBool::new(false))
    }

    /// [`CalibrationSet::load`], giving way to `stop` while it reads (`files::input`): bad
    /// input, or stopped.
    pub fn load_until(
        path: &std::path::Path,
        stop: &AtomicBool,
    ) -> Result<CalibrationSet, ExperimentError> {
        let text = read_input(path, "calibration", caps::MODEL_JSON, stop)?;
        let set: CalibrationSet = parse_json_until(path, "a schedlab calibration", text, stop)?;
        set.check(path)?;
        Ok(set)
    }

    /// The checks of a calibration read from a file: its machine is a valid profile, and every
    /// figure is physics (see [`Calibration`]'s fields).
    fn check(&self, path: &std::path::Path) -> Result<(), ExperimentError> {
        let set = self;
        set.machine.validate().map_err(|e| {
            ExperimentError::bad_input(format!("{}: its machine: {e}", path.display()))
        })?;
        if set.calibrations.is_empty() {
            return Err(ExperimentError::bad_input(format!(
                "{}: it holds no calibration: nothing to predict from",
                path.display()
            )));
        }
        for c in &set.calibrations {
            let bad = |v: f64| !v.is_finite() || v < 0.0;
            let figures = [c.loop_ns, c.transfer_ns, c.solo_cycle_ns, c.timing_ns];
            let calls = c.solo.iter().chain(&c.pair);
            if calls
                .clone()
                .flat_map(|m| &m.segments)
                .any(|s| bad(s.ns) || bad(s.lines) || !(0.0..=1.0).contains(&s.probability))
                || calls.clone().any(|m| bad(m.total_ns) || bad(m.cv))
                || figures.iter().any(|&v| bad(v))
            {
                return Err(ExperimentError::bad_input(format!(
                    "{}: the calibration of {} ({}) has a negative or non-finite figure",
                    path.display(),
                    c.variant,
                    c.lock
                )));
            }
            // The simulation needs the one-process insert, dispatch and completion, and a
            // dispatch that takes a lock (it decides under it): found at load, not mid-simulation.
            for call in [Call::Insert, Call::Dispatch, Call::Complete] {
                if c.call(false, call).is_none() {
                    return Err(ExperimentError::bad_input(format!(
                        "{}: the calibration of {} ({}) has no one-process {} call",
                        path.display(),
                        c.variant,
                        c.lock,
                        call.name()
                    )));
                }
            }
            for pair in [false, true] {
                if c.call(pair, Call::Dispatch)
                    .is_some_and(|m| m.segments.iter().all(|s| s.lock.is_none()))
                {
                    return Err(ExperimentError::bad_input(format!(
                        "{}: the calibration of {} ({}) has a dispatch that takes no lock",
                        path.display(),
                        c.variant,
                        c.lock
                    )));
                }
            }
            // A request takes time: a cycle of (almost) none could never be simulated to its end.
            let solo_cycle: f64 = c.loop_ns
                + c.solo
                    .iter()
                    .flat_map(|m| &m.segments)
                    .map(|s| s.ns * s.probability)
                    .sum::<f64>();
            if solo_cycle < 1.0 {
                return Err(ExperimentError::bad_input(format!(
                    "{}: the calibration of {} ({}) gives a request {solo_cycle} ns of work: every request takes time, at least 1 ns",
                    path.display(),
                    c.variant,
                    c.lock
                )));
            }
            // Two processes' figures that are all zero: every contended request would take no
            // time in the scheduler, and the simulation would run to its event bound.
            let pair_work: f64 =
                c.pair.iter().flat_map(|m| &m.segments).map(|s| s.ns * s.probability).sum();
            if !c.pair.is_empty() && pair_work <= 0.0 {
                return Err(ExperimentError::bad_input(format!(
                    "{}: the calibration of {} ({}) has two-process figures that are all zero: a contended request takes time",
                    path.display(),
                    c.variant,
                    c.lock
                )));
            }
        }
        Ok(())
    }
}

/// What to calibrate.
#[derive(Clone, Debug)]
pub struct Wanted {
    pub variants: Vec<&'static str>,
    pub locks: Vec<LockKind>,
    pub inserts: Vec<InsertPathKind>,
}

impl Wanted {
    pub fn entries(&self) -> Vec<(&'static str, LockKind, InsertPathKind)> {
        let mut out = Vec::new();
        for &insert in &self.inserts {
            for &lock in &self.locks {
                for &v in &self.variants {
                    out.push((v, lock, insert));
                }
            }
        }
        out
    }
}

/// This machine's profile and the settings a calibration on it uses: the relay between two of
/// its CPUs and the line transfer measured between them. The first step of a calibration session.
pub fn measure_machine(
    settings: &CalibrationSettings,
    stop: &AtomicBool,
) -> (Topology, CalibrationSettings) {
    let cpus = crate::driver::host::allowed_cpus();
    let relay = (cpus.len() >= 2).then(|| (cpus[0], cpus[1]));
    let transfer = relay.and_then(|(a, b)| probes::transfer_between(a, b, probes::TRIALS, stop));
    let machine = topology::measure_here(transfer.as_ref().map(|t| t.one_way_ns), stop);
    let settings = CalibrationSettings {
        relay,
        transfer_ns: transfer.as_ref().map_or(0.0, |t| t.one_way_ns),
        ..settings.clone()
    };
    (machine, settings)
}

/// Calibrates one wanted entry for `workload` (its lock and insert path set from the entry, one
/// thread) with the settings of [`measure_machine`]; `progress` hears the fraction of the entry
/// done.
pub fn calibrate_entry(
    workload: &crate::driver::workload::WorkloadConfig,
    (variant, lock, insert): (&'static str, LockKind, InsertPathKind),
    settings: &CalibrationSettings,
    interrupt: &AtomicBool,
    progress: &mut dyn FnMut(f64),
) -> Result<Calibration, ExperimentError> {
    let w =
        crate::driver::workload::WorkloadConfig { lock, insert, threads: 1, ..workload.clone() };
    calibrate::calibrate_named(variant, &w, settings, interrupt, progress)
}

/// The calibrations of one session as a set, with the machine they were measured on and the
/// workload they were measured for.
pub fn calibration_set(
    machine: Topology,
    workload: &crate::driver::workload::WorkloadConfig,
    calibrations: Vec<Calibration>,
) -> CalibrationSet {
    CalibrationSet {
        provenance: serde_json::to_value(Provenance::collect()).unwrap_or_default(),
        machine,
        workload: serde_json::json!({
            "groups": workload.groups,
            "weights": workload.weights,
            "slots": workload.slots,
            "rw": workload.rw.name(),
            "bs_bytes": workload.bs_sectors as u64 * 512,
            "iodepth": workload.iodepth,
            "seed": workload.seed,
        }),
        calibrations,
    }
}

/// Measures this machine and calibrates every wanted entry for `workload` (its groups, weights,
/// slots, rw, bs; lock and insert path set per entry). Seconds per entry; `progress` hears the
/// fraction of the whole session done.
pub fn calibrate_all(
    workload: &crate::driver::workload::WorkloadConfig,
    wanted: &Wanted,
    settings: &CalibrationSettings,
    interrupt: &AtomicBool,
    progress: &mut dyn FnMut(f64),
) -> Result<CalibrationSet, ExperimentError> {
    let (machine, settings) = measure_machine(settings, interrupt);
    if interrupt.load(schedlab_core::sync::Ordering::Relaxed) {
        return Err(ExperimentError::run_failed("interrupted while measuring this machine"));
    }
    let entries = wanted.entries();
    let mut calibrations = Vec::new();
    for (index, &entry) in entries.iter().enumerate() {
        let mut fraction = |f: f64| progress((index as f64 + f) / entries.len() as f64);
        calibrations.push(calibrate_entry(workload, entry, &settings, interrupt, &mut fraction)?);
    }
    Ok(calibration_set(machine, workload, calibrations))
}

/// One predicted point.
#[derive(Clone, Debug, Serialize)]
pub struct Prediction {
    pub variant: String,
    pub lock: LockKind,
    pub insert: String,
    pub outside_ns: u64,
    /// The injected cost per request and its site (`--inject-ns`, `--at`).
    pub inject: schedlab_core::Inject,
    #[serde(flatten)]
    pub result: SimResult,
}

/// How a calibration is simulated ([`predict_one`]), beyond the machine and the thread counts.
/// The default: no outside work, seed 0, nothing injected, the plain request path.
#[derive(Clone, Copy, Debug, Default)]
pub struct PredictSettings {
    /// Work per request outside the scheduler's locks, ns.
    pub outside_ns: u64,
    pub seed: u64,
    /// The outside work is real work (slowed by a busy sibling), not the workload's timed spin
    /// ([`SimConfig::outside_is_work`]).
    pub outside_is_work: bool,
    /// A known cost per request inside or outside the scheduler lock (`--inject-ns`, `--at`;
    /// [`Program::with_inject`]).
    pub inject: schedlab_core::Inject,
    /// The workload's request path: the kernel's per-site pads (placed as the core spins them:
    /// [`Program::with_pads`]) and completion contexts ([`SimConfig::completion`]).
    pub path: RequestPath,
}

/// What a workload's request path adds to a calibration: the kernel's per-site pads and where a
/// request completes (the workload's `pads` and `completion`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RequestPath {
    pub pads: schedlab_core::SitePads,
    pub completion: CompletionMode,
}

/// Simulates `cal` on `topo` at each of `threads`, as `settings` say.
pub fn predict_one(
    cal: &Calibration,
    topo: &Topology,
    threads: &[usize],
    settings: PredictSettings,
) -> Result<Vec<Prediction>, ExperimentError> {
    predict_until(cal, topo, threads, settings, &AtomicBool::new(false))
}

/// [`predict_one`], giving way to `stop` (the error is then `sim::STOPPED`).
pub fn predict_until(
    cal: &Calibration,
    topo: &Topology,
    threads: &[usize],
    settings: PredictSettings,
    stop: &AtomicBool,
) -> Result<Vec<Prediction>, ExperimentError> {
    let PredictSettings { outside_ns, seed, outside_is_work, inject, path } = settings;
    threads
        .iter()
        .map(|&n| {
            let prog = Program::new(cal, n, outside_ns as f64)?;
            let prog = prog.with_pads(path.pads).with_inject(inject)?;
            let completion = path.completion;
            let cfg = SimConfig { outside_is_work, completion, ..SimConfig::new(n, seed) };
            Ok(Prediction {
                variant: cal.variant.clone(),
                lock: cal.lock,
                insert: cal.insert.clone(),
                outside_ns,
                inject,
                result: sim::simulate_until(&prog, topo, &cfg, stop)?,
            })
        })
        .collect()
}

/// A seed's ratio (kernel-bfq.md §1) as predicted: numerator ÷ denominator KIOPS.
#[derive(Clone, Debug, Serialize)]
pub struct PredictedRatio {
    pub name: &'static str,
    pub numerator: &'static str,
    pub denominator: &'static str,
    pub seed: Option<f64>,
    pub lock: LockKind,
    pub threads: usize,
    pub outside_ns: u64,
    pub predicted: f64,
}

/// The seeds' ratios (`seeds::SEEDS`) among `predictions` at `threads`, per lock kind and
/// outside work (entries `variant+lists` are the lists path).
pub fn seed_ratios(predictions: &[Prediction], threads: usize) -> Vec<PredictedRatio> {
    let mut out = Vec::new();
    let find = |entry: &str, lock: LockKind, outside: u64| -> Option<f64> {
        let (variant, insert) = match entry.split_once('+') {
            Some((v, p)) => (v, p),
            None => (entry, "direct"),
        };
        predictions
            .iter()
            .find(|p| {
                p.variant == variant
                    && p.insert == insert
                    && p.lock == lock
                    && p.outside_ns == outside
                    && p.result.threads == threads
            })
            .map(|p| p.result.kiops)
    };
    let mut keys: Vec<(LockKind, u64)> = Vec::new();
    for p in predictions {
        if !keys.contains(&(p.lock, p.outside_ns)) {
            keys.push((p.lock, p.outside_ns));
        }
    }
    for (lock, outside) in keys {
        for s in crate::seeds::SEEDS {
            if let (Some(a), Some(b)) =
                (find(s.numerator, lock, outside), find(s.denominator, lock, outside))
            {
                if b > 0.0 {
                    out.push(PredictedRatio {
                        name: s.name,
                        numerator: s.numerator,
                        denominator: s.denominator,
                        seed: s.seed,
                        lock,
                        threads,
                        outside_ns: outside,
                        predicted: a / b,
                    });
                }
            }
        }
    }
    out
}
