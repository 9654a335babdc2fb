//! `schedlab predict` as an experiment in the house shape (`crate::experiment`): KIOPS against
//! threads for a machine this one need not be, from the calibrated discrete-event simulation of
//! [`crate::model`] (notes/predict.md), and with a validation the same workload measured here
//! beside the prediction ([`super::validate`]).
//!
//! [`run`] checks the configuration (bad input before any work), calibrates on this machine unless
//! a calibration is given (one step for the machine's profile, one per entry), predicts (no steps:
//! deterministic for the seed, and quick), then measures the validation's runs (one step each).
//! A stop during the calibration leaves nothing to predict (a [`ErrorKind::Stopped`] error); a
//! stop during the validation keeps the runs that finished, and the report says it was
//! interrupted.
//!
//! [`ErrorKind::Stopped`]: crate::error::ErrorKind::Stopped

use super::observer::{Event, Observer};
use super::validate::{self, OrderCheck, OrderVerdict, Row, ValidationConfig};
use crate::driver::host::{allowed_cpus, other_runnable_threads};
use crate::driver::noise::NoisePolicy;
use crate::driver::workload::{fair_lock_warning_before, WorkloadConfig};
use crate::error::ExperimentError;
use crate::files::provenance::Provenance;
use crate::model::calibrate::CalibrationSettings;
use crate::model::topology::{cores_here, Topology};
use crate::model::{self, CalibrationSet, PredictedRatio, Prediction, Wanted};
use crate::stats::GoalVerdict;
use schedlab_core::sync::{AtomicBool, Ordering};
use schedlab_core::LockKind;
use serde::Serialize;
use std::path::PathBuf;

/// The validation's goal: |error| within this everywhere (and the same ordering).
pub const GOAL_PCT: f64 = 15.0;

/// A rough length of one entry's calibration, for the opening line's estimate only.
const CALIBRATION_ENTRY_S: f64 = 3.0;

/// A calibration read from a file (`--calibration`), with its path for the messages.
#[derive(Clone, Debug)]
pub struct CalibrationFile {
    pub path: PathBuf,
    pub set: CalibrationSet,
}

/// How to measure the validation's runs.
#[derive(Clone, Copy, Debug)]
pub struct ValidationSettings {
    /// Rounds (the order rotates each round; medians reported).
    pub rounds: usize,
    pub noise: NoisePolicy,
}

/// The experiment's configuration.
#[derive(Clone, Debug)]
pub struct PredictConfig {
    /// The workload calibrated, predicted and measured (lock, insert path, threads and outside
    /// work are set per entry and point).
    pub workload: WorkloadConfig,
    pub wanted: Wanted,
    /// Outside work per request to predict (and measure), ns.
    pub outside_ns: Vec<u64>,
    /// Thread counts; `None`: [`default_threads`] of the modelled machine, or with a validation
    /// 1 to this machine's CPUs.
    pub threads: Option<Vec<usize>>,
    /// The machine to predict for; `None`: this machine, as measured by the calibration (or as the
    /// calibration file holds it).
    pub topology: Option<Topology>,
    /// A calibration to use instead of calibrating now.
    pub calibration: Option<CalibrationFile>,
    /// How to calibrate now (windows, rounds).
    pub calibration_settings: CalibrationSettings,
    /// The outside work is real work, slowed by a busy hyperthread sibling.
    pub outside_is_work: bool,
    /// Measure the workload here beside the prediction.
    pub validation: Option<ValidationSettings>,
}

/// Default thread counts for `cpus` logical CPUs: all up to 16, then powers of two and `cpus`.
pub fn default_threads(cpus: usize) -> Vec<usize> {
    let mut v: Vec<usize> = (1..=cpus.min(16)).collect();
    let mut p = 32;
    while p < cpus {
        v.push(p);
        p *= 2;
    }
    if cpus > 16 && !v.contains(&cpus) {
        v.push(cpus);
    }
    v
}

impl PredictConfig {
    /// Checks the configuration before any work; returns the thread counts to predict.
    pub fn checked_threads(&self) -> Result<Vec<usize>, ExperimentError> {
        let bad = |m: String| Err(ExperimentError::bad_input(m));
        let w = &self.workload;
        if w.iodepth != 1 {
            return bad(format!(
                "--iodepth {}: the model runs the workload's iodepth 1 \
                (one request per job in flight)",
                w.iodepth
            ));
        }
        if w.churn_per_sec > 0.0 {
            return bad("--churn: the model has no group churn (predict runs without it)".into());
        }
        if w.slice_idle_ns > 0 {
            return bad("--slice-idle-ns: the model has no idling (predict runs with \
                slice_idle 0, as the seeds)"
                .into());
        }
        if self.wanted.entries().is_empty() {
            return bad("nothing to predict: no variant, lock kind or insert path".into());
        }
        if self.threads.as_ref().is_some_and(|t| t.contains(&0)) {
            return bad("--threads must be at least 1".into());
        }
        if let Some(file) = &self.calibration {
            for (v, lock, insert) in self.wanted.entries() {
                if file.set.find(v, lock, insert).is_none() {
                    return bad(format!(
                        "{} has no calibration of {v} on {lock} ({insert}): calibrate \
                            it (without --calibration) or ask for what it holds",
                        file.path.display()
                    ));
                }
            }
        }
        let here = allowed_cpus().len();
        // The modelled machine's name and logical CPUs, known before any work.
        let (modelled, cpus) = match (&self.topology, &self.calibration) {
            (Some(t), _) => (format!("the topology `{}`", t.name), t.cpus()),
            (None, Some(file)) => (format!("`{}`", file.set.machine.name), file.set.machine.cpus()),
            (None, None) => {
                let (cores, per_core) = cores_here();
                ("this machine".to_string(), cores * per_core)
            }
        };
        let threads = match &self.threads {
            Some(t) => t.clone(),
            None if self.validation.is_some() => (1..=here).collect(),
            None => default_threads(if self.topology.is_some() { cpus } else { here }),
        };
        if let Some(&n) = threads.iter().find(|&&n| n > cpus) {
            return bad(format!(
                "--threads {n}: {modelled} has {cpus} logical CPUs (the \
                model runs one job per CPU)"
            ));
        }
        if self.validation.is_some() {
            if let Some(&n) = threads.iter().find(|&&n| n > here) {
                return bad(format!(
                    "--validate --threads {n}: this machine has {here} \
                    CPUs; measured points above that are oversubscribed (they measure \
                    the OS scheduler)"
                ));
            }
        }
        if let Some(v) = self.validation_config(&threads) {
            v.validate()?;
        }
        Ok(threads)
    }

    fn validation_config(&self, threads: &[usize]) -> Option<ValidationConfig> {
        self.validation.map(|v| ValidationConfig {
            workload: self.workload.clone(),
            wanted: self.wanted.clone(),
            threads: threads.to_vec(),
            outside_ns: self.outside_ns.clone(),
            rounds: v.rounds,
            noise: v.noise,
        })
    }
}

/// The validation: measured beside predicted.
#[derive(Clone, Debug, Serialize)]
pub struct ValidationReport {
    pub rounds: u64,
    /// Measured seconds of each run.
    pub duration_s: f64,
    pub rows: Vec<Row>,
    pub orderings: Vec<OrderCheck>,
    /// `None` (`null` in JSON) when no point was measured (issue 43: it was 0.0).
    pub median_abs_error_pct: Option<f64>,
    pub max_abs_error_pct: Option<f64>,
    /// What the median |error| rests on: how many points, of how many repetitions each, and how
    /// many are within, outside and inconclusive on their intervals ([`validate::error_basis`]).
    pub error_basis: String,
    pub goal_pct: f64,
    /// The thread counts measured (the report's per-thread-count summary).
    #[serde(skip)]
    pub threads: Vec<usize>,
    /// Other processes' CPUs above which a run counted as disturbed.
    #[serde(skip)]
    pub max_other_cpus: f64,
    /// The transfer the repetitions run in another placement than the calibration were
    /// predicted with (their probes' median), one-way ns; `None` when none ran there.
    pub other_placement_transfer_ns: Option<f64>,
    /// The transfer the calibration measured (the machine's), against which each run's placement
    /// is told, one-way ns.
    pub calibration_transfer_ns: Option<f64>,
}

impl ValidationReport {
    /// The goal's verdict, taken on the points' intervals: met when every point's error interval
    /// is within the band and every group's order right, missed when some point's interval is
    /// wholly outside it or some group's order wrong, inconclusive otherwise (some interval
    /// reaches across a bound, or some group's order is not judged). A group's order is judged
    /// on the pairs of variants its measurement orders ([`validate::pair_order`]): two variants
    /// whose measured ratio's interval reaches across 1 cannot be put in the wrong order.
    /// [`GoalNotJudged`] when it is not judged: some row kept a run that other processes disturbed
    /// (above `driver::workload::OTHERS_DISTURB_CPUS`), no point has an error to judge, or a
    /// measured point has no interval (fewer than 6 repetitions).
    pub fn goal_verdict(&self) -> Result<GoalVerdict, GoalNotJudged> {
        if let Some(why) = self.disturbed() {
            return Err(GoalNotJudged::Disturbed(why));
        }
        let with: Vec<&Row> = self.rows.iter().filter(|r| r.error_pct.is_finite()).collect();
        if with.is_empty() {
            return Err(GoalNotJudged::NothingMeasured);
        }
        if let Some(r) = with.iter().find(|r| r.within_goal.is_none()) {
            let why = r.no_interval.clone().unwrap_or_else(|| "no interval".into());
            let without = with.iter().filter(|r| r.within_goal.is_none()).count();
            return Err(GoalNotJudged::NoInterval { without, of: with.len(), why });
        }
        let verdicts: Vec<GoalVerdict> = with.iter().filter_map(|r| r.within_goal).collect();
        let order = |v| self.orderings.iter().any(|o| o.verdict == v);
        Ok(if verdicts.contains(&GoalVerdict::Missed) || order(OrderVerdict::Wrong) {
            GoalVerdict::Missed
        } else if verdicts.iter().all(|v| *v == GoalVerdict::Met) && !order(OrderVerdict::NotJudged)
        {
            GoalVerdict::Met
        } else {
            GoalVerdict::Inconclusive
        })
    }

    /// How many points kept a run during which other processes used more than
    /// `driver::workload::OTHERS_DISTURB_CPUS`, said as a line; `None` when none did (then the
    /// goal may be judged).
    pub fn disturbed(&self) -> Option<String> {
        let limit = crate::driver::workload::OTHERS_DISTURB_CPUS;
        let disturbed = self.rows.iter().filter(|r| r.other_cpus_max > limit).count();
        (disturbed > 0).then(|| {
            format!(
                "{disturbed} of {} points kept a run during which other processes used more \
                 than {limit} CPUs",
                self.rows.len()
            )
        })
    }

    /// Runs that failed (each row's failures).
    pub fn failed_runs(&self) -> usize {
        self.rows.iter().map(|r| r.failures.len()).sum()
    }
}

/// Why the validation's goal has no verdict ([`ValidationReport::goal_verdict`]): said in the
/// verdict's place.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum GoalNotJudged {
    /// Some point kept a disturbed run: which, as a line.
    Disturbed(String),
    /// No point has an error to judge.
    NothingMeasured,
    /// `without` of the `of` measured points have no interval; `why`, the first one's reason.
    NoInterval { without: usize, of: usize, why: String },
}

impl std::fmt::Display for GoalNotJudged {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            GoalNotJudged::Disturbed(why) => write!(f, "disturbed: {why}"),
            GoalNotJudged::NothingMeasured => f.write_str("no point was measured"),
            GoalNotJudged::NoInterval { without, of, why } => {
                write!(f, "{without} of {of} points have no interval ({why})")
            }
        }
    }
}

/// What `schedlab predict` found (its JSON: the inputs, every point, the validation).
#[derive(Clone, Debug, Serialize)]
pub struct PredictReport {
    pub provenance: Provenance,
    /// The machine modelled.
    pub topology: Topology,
    pub calibration: CalibrationSet,
    pub seed: u64,
    pub outside_is_work: bool,
    pub predictions: Vec<Prediction>,
    /// The seeds' ratios as predicted at the most threads.
    pub ratios: Vec<PredictedRatio>,
    pub validation: Option<ValidationReport>,
    /// A stop came during the validation: its rows hold the runs that finished.
    pub interrupted: bool,
    /// What was asked for (the calibration may hold more).
    #[serde(skip)]
    pub wanted: Wanted,
    #[serde(skip)]
    pub threads: Vec<usize>,
}

/// Measures this machine and calibrates every wanted entry, one step each.
fn calibrate_here(
    cfg: &PredictConfig,
    stop: &AtomicBool,
    observer: &mut dyn Observer,
) -> Result<CalibrationSet, ExperimentError> {
    observer.event(Event::Step { done: 0, label: "measuring this machine (transfers, wake-ups)" });
    let (machine, settings) = model::measure_machine(&cfg.calibration_settings, stop);
    if stop.load(Ordering::Relaxed) {
        return Err(ExperimentError::stopped(
            "interrupted while measuring this machine: nothing to predict",
        ));
    }
    observer.event(Event::StepDone {
        done: 1,
        summary: &format!("measured this machine: {}", machine.name),
    });
    let mut calibrations = Vec::new();
    for (index, entry) in cfg.wanted.entries().into_iter().enumerate() {
        let (variant, lock, insert) = entry;
        let label = format!("calibrating {variant} {lock} {insert}");
        observer.event(Event::Step { done: 1 + index, label: &label });
        match model::calibrate_entry(&cfg.workload, entry, &settings, stop, &mut |_| {}) {
            Ok(c) => calibrations.push(c),
            Err(_) if stop.load(Ordering::Relaxed) => {
                return Err(ExperimentError::stopped(
                    "interrupted while calibrating: nothing to predict",
                ))
            }
            Err(e) => return Err(ExperimentError::run_failed(format!("calibration failed: {e}"))),
        }
        observer.event(Event::StepDone { done: 2 + index, summary: &label });
    }
    Ok(model::calibration_set(machine, &cfg.workload, calibrations))
}

/// Runs the experiment (see the module documentation).
pub fn run(
    cfg: &PredictConfig,
    stop: &AtomicBool,
    observer: &mut dyn Observer,
) -> Result<PredictReport, ExperimentError> {
    let threads = cfg.checked_threads()?;
    let validation = cfg.validation_config(&threads);
    let calibration_steps =
        if cfg.calibration.is_some() { 0 } else { 1 + cfg.wanted.entries().len() };
    let validation_steps = validation.as_ref().map_or(0, |v| v.keys().len() * v.rounds);
    if calibration_steps + validation_steps > 0 {
        let estimated_s = CALIBRATION_ENTRY_S * calibration_steps as f64
            + validation.as_ref().map_or(0.0, |v| v.estimated_seconds());
        observer.event(Event::Planned { steps: calibration_steps + validation_steps, estimated_s });
    }

    // 1. The calibration (and this machine's profile).
    let set = match &cfg.calibration {
        Some(file) => file.set.clone(),
        None => calibrate_here(cfg, stop, observer)?,
    };
    let topology = cfg.topology.clone().unwrap_or_else(|| set.machine.clone());
    if let Some(&n) = threads.iter().find(|&&n| n > topology.cpus()) {
        return Err(ExperimentError::run_failed(format!(
            "--threads {n}: `{}` was measured with {} logical CPUs (the model runs one \
                job per CPU)",
            topology.name,
            topology.cpus()
        )));
    }

    // 2. The predictions (deterministic for the seed).
    let seed = cfg.workload.seed;
    let predictions = predict_entries(cfg, &set, &topology, &threads, stop)?;
    let top = *threads.iter().max().unwrap_or(&1);
    let ratios = model::seed_ratios(&predictions, top);

    // 3. The validation.
    let mut interrupted = false;
    let validation = match validation {
        None => None,
        Some(vcfg) => {
            for &lock in &vcfg.wanted.locks {
                if let Some(w) = fair_lock_warning_before(lock, top, other_runnable_threads()) {
                    observer.event(Event::Warning(&w));
                }
            }
            let (measured, stopped) = validate::measure(&vcfg, stop, observer, calibration_steps)?;
            interrupted = stopped || stop.load(Ordering::Relaxed);
            // Each repetition is held against the prediction for the placement it ran in: the
            // runs the host placed elsewhere than the calibration are predicted again with the
            // transfer their own probes read (issue 41, item 2).
            let reference_ns = Some(topology.transfer.core_ns);
            let other = match validate::other_transfer_ns(&measured, reference_ns) {
                Some(ns) => {
                    let there =
                        topology.with_core_transfer(ns, "the validation's placement probes");
                    // A stopped validation keeps what it measured: its few simulations run to
                    // the end (a second stop exits at once, `signals`).
                    let finish = AtomicBool::new(false);
                    Some((ns, predict_entries(cfg, &set, &there, &vcfg.threads, &finish)?))
                }
                None => None,
            };
            let against = validate::ValidationPredictions {
                as_calibrated: &predictions,
                reference_ns,
                other: other.as_ref().map(|(ns, p)| (*ns, p.as_slice())),
            };
            let rows = validate::rows(&measured, against, GOAL_PCT);
            let orderings = validate::orderings(&rows);
            let (median_abs_error_pct, max_abs_error_pct) = validate::error_summary(&rows);
            // The hand-offs are priced with the transfer measured with the calibration: say how
            // many runs the host ran elsewhere.
            let placement = validate::placement_basis(&measured, reference_ns);
            let error_basis = validate::error_basis(&rows, vcfg.rounds, GOAL_PCT) + &placement;
            Some(ValidationReport {
                rounds: vcfg.rounds as u64,
                duration_s: vcfg.workload.duration.as_secs_f64(),
                rows,
                orderings,
                median_abs_error_pct,
                max_abs_error_pct,
                error_basis,
                goal_pct: GOAL_PCT,
                threads: vcfg.threads.clone(),
                max_other_cpus: vcfg.noise.max_other_cpus,
                other_placement_transfer_ns: other.map(|(ns, _)| ns),
                calibration_transfer_ns: reference_ns,
            })
        }
    };
    observer.event(Event::Finished);
    Ok(PredictReport {
        provenance: Provenance::collect(),
        topology,
        calibration: set,
        seed,
        outside_is_work: cfg.outside_is_work,
        predictions,
        ratios,
        validation,
        interrupted,
        wanted: cfg.wanted.clone(),
        threads,
    })
}

/// Every wanted entry predicted at `threads` on `topology`, for each outside work: the
/// simulation of the workload's request path (deterministic for the seed).
fn predict_entries(
    cfg: &PredictConfig,
    set: &CalibrationSet,
    topology: &Topology,
    threads: &[usize],
    stop: &AtomicBool,
) -> Result<Vec<Prediction>, ExperimentError> {
    let seed = cfg.workload.seed;
    let mut predictions = Vec::new();
    for (v, lock, insert) in cfg.wanted.entries() {
        let cal = set.find(v, lock, insert).ok_or_else(|| {
            ExperimentError::run_failed(format!(
                "the calibration has no entry for {v} on {lock} ({insert})"
            ))
        })?;
        for &outside in &cfg.outside_ns {
            // The elevator machinery (`--elevator-ns`) is work outside every lock, like the outside
            // work: the prediction's outside figure is their sum.
            let outside = outside + cfg.workload.elevator_ns;
            // The workload's request path: its per-site pads and where its requests complete.
            let path =
                model::RequestPath { pads: cfg.workload.pads, completion: cfg.workload.completion };
            let settings = model::PredictSettings {
                outside_ns: outside,
                seed,
                outside_is_work: cfg.outside_is_work,
                inject: cfg.workload.inject,
                path,
            };
            let predicted =
                model::predict_until(cal, topology, threads, settings, stop).map_err(|e| {
                    if stop.load(Ordering::Relaxed) {
                        ExperimentError::stopped(
                            "stopped while simulating the model: no prediction to report",
                        )
                    } else {
                        e
                    }
                })?;
            predictions.extend(predicted);
        }
    }
    Ok(predictions)
}

/// The entry's name in the tables and the chart: the variant, with `+path` for another insert
/// path.
pub fn entry(variant: &str, insert: &str) -> String {
    if insert == "direct" {
        variant.to_string()
    } else {
        format!("{variant}+{insert}")
    }
}

/// The predicted curves, each once, in the predictions' order: (entry, lock, outside work).
pub fn curves(predictions: &[Prediction]) -> Vec<(String, LockKind, u64)> {
    let mut seen: Vec<(String, LockKind, u64)> = Vec::new();
    for p in predictions {
        let key = (entry(&p.variant, &p.insert), p.lock, p.outside_ns);
        if !seen.contains(&key) {
            seen.push(key);
        }
    }
    seen
}

/// `variants` on the fair lock at `threads`, predicted from the committed calibration for the
/// seeds' machine (`notes/results/2026-12-01-predict`, `notes/topology/i7-4850hq.json`): what the
/// tests of the prediction and of its report start from.
#[cfg(test)]
pub(crate) fn from_committed_files(
    variants: Vec<&'static str>,
    threads: Vec<usize>,
) -> PredictConfig {
    let repo = |path: &str| std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("..").join(path);
    let path = repo("notes/results/2026-12-01-predict/calibration.json");
    let set = CalibrationSet::load(&path).expect("the committed calibration");
    let topology =
        Topology::load(&repo("notes/topology/i7-4850hq.json")).expect("the seeds' profile");
    PredictConfig {
        workload: WorkloadConfig::default(),
        wanted: Wanted {
            variants,
            locks: vec![LockKind::FairSpin],
            inserts: vec![schedlab_core::InsertPathKind::Direct],
        },
        outside_ns: vec![0],
        threads: Some(threads),
        topology: Some(topology),
        calibration: Some(CalibrationFile { path, set }),
        calibration_settings: CalibrationSettings::default(),
        outside_is_work: false,
        validation: None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::experiment::observer::Recorder;
    use crate::experiment::testing::assert_each_refused;
    use schedlab_core::{InsertPathKind, LockKind};

    /// Queue-lock on the fair lock, from the committed calibration, for the seeds' machine.
    fn from_files() -> PredictConfig {
        from_committed_files(vec!["queue-lock"], vec![1, 2, 8])
    }

    #[test]
    fn a_prediction_from_files_has_every_point_and_no_steps() {
        let mut recorder = Recorder::default();
        let report = run(&from_files(), &AtomicBool::new(false), &mut recorder).expect("predicted");
        assert_eq!(report.predictions.len(), 3);
        assert_eq!(report.threads, vec![1, 2, 8]);
        assert!(report.validation.is_none() && !report.interrupted);
        assert_eq!((recorder.steps, recorder.steps_done), (0, 0), "nothing is measured");
        let json = serde_json::to_value(&report).unwrap();
        assert!(
            json.get("wanted").is_none() && json.get("threads").is_none(),
            "the JSON fields stay as they were"
        );
    }

    #[test]
    fn a_bad_configuration_is_refused_before_any_work() {
        let cases: Vec<(PredictConfig, &str)> = vec![
            (
                PredictConfig {
                    workload: WorkloadConfig { iodepth: 4, ..WorkloadConfig::default() },
                    ..from_files()
                },
                "--iodepth 4",
            ),
            (
                PredictConfig {
                    workload: WorkloadConfig { churn_per_sec: 5.0, ..WorkloadConfig::default() },
                    ..from_files()
                },
                "--churn",
            ),
            (
                PredictConfig {
                    workload: WorkloadConfig { slice_idle_ns: 1000, ..WorkloadConfig::default() },
                    ..from_files()
                },
                "--slice-idle-ns",
            ),
            (PredictConfig { threads: Some(vec![0, 1]), ..from_files() }, "at least 1"),
            (PredictConfig { threads: Some(vec![9]), ..from_files() }, "logical CPUs"),
            (
                PredictConfig {
                    wanted: Wanted {
                        variants: vec!["unlocked"],
                        locks: vec![LockKind::FairSpin],
                        inserts: vec![InsertPathKind::Direct],
                    },
                    ..from_files()
                },
                "has no calibration of unlocked",
            ),
            (
                PredictConfig {
                    threads: Some(vec![1024]),
                    validation: Some(ValidationSettings {
                        rounds: 1,
                        noise: NoisePolicy::default(),
                    }),
                    topology: None,
                    ..from_files()
                },
                "--threads 1024",
            ),
        ];
        assert_each_refused(cases, run);
    }

    #[test]
    fn default_thread_counts() {
        assert_eq!(default_threads(2), vec![1, 2]);
        assert_eq!(default_threads(8), (1..=8).collect::<Vec<_>>());
        assert_eq!(default_threads(64), (1..=16).chain([32, 64]).collect::<Vec<_>>());
        assert_eq!(default_threads(48), (1..=16).chain([32, 48]).collect::<Vec<_>>());
    }

    /// A validation of points judged `verdicts` (`None`: no interval), orderings all the same.
    fn judged(verdicts: &[Option<GoalVerdict>]) -> ValidationReport {
        use crate::stats::{Interval, Spread};
        let row = |within_goal: Option<GoalVerdict>| Row {
            variant: "no-stats",
            lock: LockKind::FairSpin,
            insert: "direct",
            outside_ns: 0,
            threads: 1,
            measured: Spread::of(vec![1000.0, 1000.0, 1000.0]),
            predicted: 1100.0,
            error_pct: 10.0,
            measured_interval: within_goal.map(|_| Interval { lo: 1000.0, hi: 1000.0 }),
            error_interval_pct: within_goal.map(|_| Interval { lo: 10.0, hi: 10.0 }),
            no_interval: within_goal
                .is_none()
                .then(|| crate::stats::no_interval_reason("repetitions")),
            within_goal,
            other_cpus_max: 0.0,
            reruns: 0,
            failures: Vec::new(),
            placement: Default::default(),
            left_out_kiops: Vec::new(),
            repetitions: Vec::new(),
        };
        ValidationReport {
            rounds: 3,
            duration_s: 0.1,
            rows: verdicts.iter().map(|v| row(*v)).collect(),
            orderings: Vec::new(),
            median_abs_error_pct: Some(10.0),
            max_abs_error_pct: Some(10.0),
            error_basis: String::new(),
            goal_pct: GOAL_PCT,
            threads: vec![1],
            max_other_cpus: 0.5,
            other_placement_transfer_ns: None,
            calibration_transfer_ns: None,
        }
    }

    #[test]
    fn the_goal_is_met_missed_or_inconclusive_by_the_points_intervals() {
        use GoalVerdict::{Inconclusive, Met, Missed};
        assert_eq!(judged(&[Some(Met), Some(Met)]).goal_verdict(), Ok(Met));
        assert_eq!(judged(&[Some(Met), Some(Inconclusive)]).goal_verdict(), Ok(Inconclusive));
        assert_eq!(judged(&[Some(Inconclusive), Some(Missed)]).goal_verdict(), Ok(Missed));
        let why = judged(&[Some(Met), None]).goal_verdict().unwrap_err().to_string();
        assert!(why.contains("1 of 2 points have no interval"), "{why}");
    }
}
