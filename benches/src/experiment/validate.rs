//! Validation: the workload measured at the thread counts this machine has, beside the prediction.
//!
//! Every (variant, lock kind, insert path, outside work, thread count) is run once per round, the
//! order rotated by one each round (as `compare` does), plain runs (no lock statistics), re-run
//! while other processes used the CPUs ([`NoisePolicy`]). The measured figure is the median over
//! rounds, with its min and max; the error is the median of the repetitions' (predicted −
//! measured) ÷ measured. The calibration never sees these runs: it comes from single-threaded
//! runs and the transfer measurement only.
//!
//! Each measured point carries the 95 % bootstrap interval of its median over its repetitions
//! (the rounds), and its error the interval that gives ([`Row::error_interval_pct`]); the error is
//! judged within or outside the goal's band only on that interval: within when the whole
//! interval is inside the band, outside when the whole interval is out of it, inconclusive when
//! it reaches across a bound ([`crate::stats::judge_within`]); with fewer than 6 repetitions
//! there is no interval and no judgement ([`Row::no_interval`]).
//!
//! **Placement.** On a virtual machine the host moves the vCPUs between cores that share a cache
//! and cores that do not, and a cache-line transfer takes about five times as long in the second;
//! the data lines a critical section pulls on every change of owner cost that placement's
//! transfer (notes/results/2026-12-05-predict-segments.md). Every run is probed before and after
//! (one line between the two CPUs, [`probe_here`]); a run in the calibration's placement is held
//! against the prediction with the calibration's machine, a run in the other placement against
//! the prediction with that placement's transfer (the median of its runs' probes:
//! [`other_transfer_ns`]), and a run whose probes disagree is left out ([`RunPlacement`]). The
//! probes are a single-purpose measurement; no throughput is fitted.

use super::compare::placement::{self, probe_here, FAR_FACTOR};
use super::observer::{Event, Observer};
use crate::driver::noise::{run_clean, NoiseCount, NoisePolicy};
use crate::driver::workload::{entry_name, run_named, WorkloadConfig};
use crate::error::ExperimentError;
use crate::model::{Prediction, Wanted};
use crate::stats::{bootstrap_interval, judge_within, median, median_in_place, NoInterval};
use crate::stats::{GoalVerdict, Interval, Spread, BOOTSTRAP_RESAMPLES, BOOTSTRAP_SEED};
use schedlab_core::sync::{AtomicBool, Ordering};
use schedlab_core::LockKind;
use serde::Serialize;

/// What to measure.
#[derive(Clone, Debug)]
pub struct ValidationConfig {
    /// The workload of every run (duration, ramp, groups ...; threads, lock, outside work and
    /// insert path are set per run).
    pub workload: WorkloadConfig,
    pub wanted: Wanted,
    pub threads: Vec<usize>,
    pub outside_ns: Vec<u64>,
    pub rounds: usize,
    pub noise: NoisePolicy,
}

/// One measured configuration.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Key {
    pub variant: &'static str,
    pub lock: LockKind,
    pub insert: schedlab_core::InsertPathKind,
    pub outside_ns: u64,
    pub threads: usize,
}

impl ValidationConfig {
    pub fn keys(&self) -> Vec<Key> {
        let mut keys = Vec::new();
        for &insert in &self.wanted.inserts {
            for &lock in &self.wanted.locks {
                for &outside_ns in &self.outside_ns {
                    for &threads in &self.threads {
                        for &variant in &self.wanted.variants {
                            keys.push(Key { variant, lock, insert, outside_ns, threads });
                        }
                    }
                }
            }
        }
        keys
    }

    /// Seconds the measuring takes, roughly.
    pub fn estimated_seconds(&self) -> f64 {
        (self.workload.duration.as_secs_f64() + self.workload.ramp.as_secs_f64() + 0.05)
            * (self.keys().len() * self.rounds) as f64
    }

    pub fn validate(&self) -> Result<(), ExperimentError> {
        for k in self.keys() {
            let w = self.run_config(&k);
            w.validate(k.variant)?;
        }
        Ok(())
    }

    fn run_config(&self, k: &Key) -> WorkloadConfig {
        WorkloadConfig {
            threads: k.threads,
            lock: k.lock,
            outside_ns: k.outside_ns,
            insert: k.insert,
            lockstat: false,
            ..self.workload.clone()
        }
    }
}

/// The runs of one configuration.
#[derive(Clone, Debug)]
pub struct Measured {
    pub key: Key,
    pub kiops: Vec<f64>,
    /// The round each kept run ran in (the same index as `kiops`): the variants of one round ran
    /// one after another and are compared as a pair ([`pair_order`]).
    pub rounds: Vec<usize>,
    /// Other processes' CPUs during each kept run.
    pub other_cpus: Vec<f64>,
    /// The placement probes before and after each kept run, one-way ns
    /// (`compare::placement::probe_here`; `None` with one CPU).
    pub transfer_ns: Vec<[Option<f64>; 2]>,
    pub noise: NoiseCount,
    pub failures: Vec<String>,
}

/// What one run of `key` is called on the progress bar.
fn label(round: usize, key: &Key) -> String {
    format!(
        "round {} {} {}{} {} threads outside {} ns",
        round + 1,
        key.lock.name(),
        key.variant,
        if key.insert == schedlab_core::InsertPathKind::Direct {
            String::new()
        } else {
            format!("+{}", key.insert)
        },
        key.threads,
        key.outside_ns
    )
}

/// Measures every configuration `cfg.rounds` times, interleaved, telling `observer` of each run
/// as a step (counted from `steps_before`, the steps the caller did first) and of each failed run.
/// Stops early (keeping what ran) when `stop` is set; returns whether it did.
pub fn measure(
    cfg: &ValidationConfig,
    stop: &AtomicBool,
    observer: &mut dyn Observer,
    steps_before: usize,
) -> Result<(Vec<Measured>, bool), ExperimentError> {
    cfg.validate()?;
    let keys = cfg.keys();
    let mut out: Vec<Measured> = keys
        .iter()
        .map(|k| Measured {
            key: k.clone(),
            kiops: Vec::new(),
            rounds: Vec::new(),
            other_cpus: Vec::new(),
            transfer_ns: Vec::new(),
            noise: NoiseCount::default(),
            failures: Vec::new(),
        })
        .collect();
    let mut budget = (keys.len() * cfg.rounds).div_ceil(2) as u32;
    let mut done = steps_before;
    // The runs follow each other at once: one run's placement probe after is the next one's
    // before.
    let mut probe_after_last: Option<Option<f64>> = None;
    for round in 0..cfg.rounds {
        for j in 0..keys.len() {
            let idx = (j + round) % keys.len();
            if stop.load(Ordering::Relaxed) {
                return Ok((out, true));
            }
            let key = &keys[idx];
            let label = label(round, key);
            observer.event(Event::Step { done, label: &label });
            let w = cfg.run_config(key);
            let entry = entry_name(key.variant, key.insert);
            let m = &mut out[idx];
            let before = probe_after_last.take().unwrap_or_else(|| probe_here(stop));
            let summary = match run_clean(
                &run_named,
                entry,
                &w,
                stop,
                cfg.noise,
                &mut m.noise,
                &mut budget,
            ) {
                Ok(r) if r.interrupted => return Ok((out, true)),
                Ok(r) => {
                    let after = probe_here(stop);
                    probe_after_last = Some(after);
                    m.kiops.push(r.kiops);
                    m.rounds.push(round);
                    m.other_cpus.push(r.other_cpus.unwrap_or(f64::NAN));
                    m.transfer_ns.push([before, after]);
                    format!("{label}: {:.0} KIOPS", r.kiops)
                }
                Err(e) => {
                    let failure = format!("{label}: {e}");
                    observer.event(Event::Failure(&failure));
                    m.failures.push(e.to_string());
                    failure
                }
            };
            done += 1;
            observer.event(Event::StepDone { done, summary: &summary });
        }
    }
    Ok((out, false))
}

/// Measured beside predicted.
#[derive(Clone, Debug, Serialize)]
pub struct Row {
    pub variant: &'static str,
    pub lock: LockKind,
    pub insert: &'static str,
    pub outside_ns: u64,
    pub threads: usize,
    pub measured: Spread,
    /// The prediction, KIOPS: the median of the repetitions' own, each made for the placement
    /// it ran in ([`RunPlacement`]).
    pub predicted: f64,
    /// The median over the repetitions of (predicted − measured) ÷ measured × 100, each held
    /// against its own placement's prediction.
    pub error_pct: f64,
    /// The 95 % bootstrap interval of the measured median over the point's repetitions.
    pub measured_interval: Option<Interval>,
    /// The interval of `error_pct` over the same resamples (the error of each resample's median).
    pub error_interval_pct: Option<Interval>,
    /// Why the intervals are null ("no interval: fewer than 6 repetitions", "no prediction").
    pub no_interval: Option<String>,
    /// `error_pct` within ± the goal, judged on `error_interval_pct` ([`judge_within`]): met
    /// (within), missed (outside) or inconclusive; `None` without an interval.
    pub within_goal: Option<GoalVerdict>,
    /// The most other processes used during a kept run, CPUs.
    pub other_cpus_max: f64,
    pub reruns: u32,
    pub failures: Vec<String>,
    /// Where the repetitions ran, and so which prediction each is held against.
    pub placement: PointPlacement,
    /// The throughput of the repetitions left out because their placement moved during the run
    /// (`placement.moved` of them), KIOPS: measured, kept in the report and drawn apart, never
    /// held against a prediction.
    pub left_out_kiops: Vec<f64>,
    /// Every kept repetition with its round, placement and prediction: what the order of two
    /// variants is judged on, round by round ([`pair_order`]).
    pub repetitions: Vec<Repetition>,
}

/// One kept repetition of a point.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct Repetition {
    /// The round it ran in: the variants of one round ran one after another.
    pub round: usize,
    pub kiops: f64,
    pub placement: RunPlacement,
    /// The prediction it is held against (its placement's); `None` when its placement moved
    /// while it ran (left out).
    pub predicted: Option<f64>,
}

/// Where one point's repetitions ran, by their placement probes ([`RunPlacement`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct PointPlacement {
    /// Held against the prediction with the calibration's machine: probed in its placement, or
    /// not probed (one CPU).
    pub as_calibrated: usize,
    /// Held against the prediction with the other placement's transfer
    /// ([`ValidationPredictions::other`]).
    pub other: usize,
    /// Left out: their probes disagree, the host moved the CPUs during the run.
    pub moved: usize,
}

/// Where one repetition ran, from its placement probes before and after it, against the transfer
/// the calibration measured. On a virtual machine the host moves the vCPUs between cores that
/// share a cache and cores that do not, and the data lines a critical section pulls on a change
/// of owner cost that placement's transfer (notes/results/2026-12-05-predict-segments.md): each
/// repetition is predicted with the transfer in force while it ran.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum RunPlacement {
    /// No probe (one CPU) or no reference: the calibration's machine.
    Unprobed,
    /// Every probe within [`FAR_FACTOR`] of the calibration's transfer.
    AsCalibrated,
    /// Every probe outside that, and within [`FAR_FACTOR`] of one another.
    Other,
    /// The probes disagree: the placement changed during the run.
    Moved,
}

impl RunPlacement {
    /// The placement of a repetition whose probes read `probes`, against `reference_ns`.
    pub fn of(probes: [Option<f64>; 2], reference_ns: Option<f64>) -> RunPlacement {
        let Some(same) = same_placement(probes, reference_ns) else {
            return RunPlacement::Unprobed;
        };
        let read: Vec<f64> = probes.into_iter().flatten().collect();
        let (least, most) =
            read.iter().fold((f64::MAX, 0.0_f64), |(l, m), &p| (l.min(p), m.max(p)));
        if same {
            RunPlacement::AsCalibrated
        } else if most <= FAR_FACTOR * least
            && read.iter().all(|&p| same_placement([Some(p), None], reference_ns) == Some(false))
        {
            RunPlacement::Other
        } else {
            RunPlacement::Moved
        }
    }
}

/// The predictions a validation holds its points against: with the calibration's machine, and,
/// where some repetitions ran in the other placement, with that placement's transfer.
#[derive(Clone, Copy, Debug)]
pub struct ValidationPredictions<'a> {
    /// With the machine as calibrated (or as `--topology` gave it).
    pub as_calibrated: &'a [Prediction],
    /// The transfer the calibration measured, one-way ns (`None`: nothing to classify against).
    pub reference_ns: Option<f64>,
    /// The other placement's transfer ([`other_transfer_ns`]) and the predictions made with it.
    pub other: Option<(f64, &'a [Prediction])>,
}

/// The other placement's transfer: the median of every probe of the repetitions that ran there
/// ([`RunPlacement::Other`]), or `None` when none did. A single-purpose measurement (one cache
/// line between the two CPUs), never a throughput.
pub fn other_transfer_ns(measured: &[Measured], reference_ns: Option<f64>) -> Option<f64> {
    let probes: Vec<f64> = measured
        .iter()
        .flat_map(|m| m.transfer_ns.iter())
        .filter(|&&probes| RunPlacement::of(probes, reference_ns) == RunPlacement::Other)
        .flat_map(|p| p.iter().flatten().copied())
        .collect();
    (!probes.is_empty()).then(|| median(&probes))
}

/// The intervals of a point measured `kiops` (one value per repetition), each repetition
/// predicted `predicted` (the same index; its placement's prediction): (the measured median's,
/// the error's) or why there are none. The error of a repetition is (predicted − measured) ÷
/// measured; the point's is their median.
pub fn point_intervals(
    kiops: &[f64],
    predicted: &[f64],
) -> Result<(Interval, Interval), NoInterval> {
    let measured = bootstrap_interval(kiops, median_in_place, BOOTSTRAP_RESAMPLES, BOOTSTRAP_SEED)
        .ok_or(NoInterval::FewRepetitions)?;
    if predicted.is_empty() || predicted.iter().any(|p| !p.is_finite()) {
        return Err(NoInterval::NoPrediction);
    }
    let errors = repetition_errors(kiops, predicted);
    if errors.len() < kiops.len() {
        return Err(NoInterval::NoRequestCompleted);
    }
    let error = bootstrap_interval(&errors, median_in_place, BOOTSTRAP_RESAMPLES, BOOTSTRAP_SEED)
        .ok_or(NoInterval::NoRequestCompleted)?;
    Ok((measured, error))
}

/// Each repetition's error against its own prediction, %: the repetitions with requests.
fn repetition_errors(kiops: &[f64], predicted: &[f64]) -> Vec<f64> {
    kiops
        .iter()
        .zip(predicted)
        .filter(|(&k, p)| k > 0.0 && p.is_finite())
        .map(|(&k, &p)| 100.0 * (p - k) / k)
        .collect()
}

/// Pairs each measured configuration with its predictions (each repetition with the one for
/// the placement it ran in), and judges each error against ± `goal_pct` on its interval.
pub fn rows(measured: &[Measured], predictions: ValidationPredictions, goal_pct: f64) -> Vec<Row> {
    let find = |set: &[Prediction], k: &Key| {
        set.iter()
            .find(|p| {
                p.variant == k.variant
                    && p.lock == k.lock
                    && p.insert == k.insert.name()
                    && p.outside_ns == k.outside_ns
                    && p.result.threads == k.threads
            })
            .map_or(f64::NAN, |p| p.result.kiops)
    };
    measured
        .iter()
        .map(|m| {
            let as_calibrated = find(predictions.as_calibrated, &m.key);
            let other = predictions.other.map_or(f64::NAN, |(_, set)| find(set, &m.key));
            let per_run: Vec<Option<f64>> = (0..m.kiops.len())
                .map(|i| {
                    let probes = m.transfer_ns.get(i).copied().unwrap_or([None, None]);
                    match RunPlacement::of(probes, predictions.reference_ns) {
                        RunPlacement::Unprobed | RunPlacement::AsCalibrated => Some(as_calibrated),
                        RunPlacement::Other => Some(other),
                        RunPlacement::Moved => None,
                    }
                })
                .collect();
            row(m, &per_run, predictions.reference_ns, goal_pct)
        })
        .collect()
}

/// Whether a run whose placement probes read `probes` ran where a transfer of `reference_ns`
/// was measured: every probe within [`FAR_FACTOR`] of it, either way. On a virtual machine the
/// host moves the vCPUs between cores that share a cache and cores that do not, and one
/// transfer takes 4.9 times as long in the second (notes/results/2026-12-04-placement.md); the
/// model's hand-offs are priced with the calibration's transfer. `None` without a probe.
pub fn same_placement(probes: [Option<f64>; 2], reference_ns: Option<f64>) -> Option<bool> {
    let reference = reference_ns.filter(|r| *r > 0.0)?;
    let probes: Vec<f64> = probes.into_iter().flatten().collect();
    (!probes.is_empty()).then(|| probes.iter().all(|&p| placement::same_placement(p, reference)))
}

/// One measured configuration beside its predictions (`per_run`: each repetition's, `None` for
/// one left out because its placement moved), its error judged against ± `goal_pct`.
fn row(m: &Measured, per_run: &[Option<f64>], reference_ns: Option<f64>, goal_pct: f64) -> Row {
    let k = &m.key;
    let mut placement = PointPlacement::default();
    for i in 0..m.kiops.len() {
        let probes = m.transfer_ns.get(i).copied().unwrap_or([None, None]);
        match RunPlacement::of(probes, reference_ns) {
            RunPlacement::Unprobed | RunPlacement::AsCalibrated => placement.as_calibrated += 1,
            RunPlacement::Other => placement.other += 1,
            RunPlacement::Moved => placement.moved += 1,
        }
    }
    let repetitions: Vec<Repetition> = (0..m.kiops.len())
        .map(|i| Repetition {
            round: m.rounds.get(i).copied().unwrap_or(i),
            kiops: m.kiops[i],
            placement: RunPlacement::of(
                m.transfer_ns.get(i).copied().unwrap_or([None, None]),
                reference_ns,
            ),
            predicted: per_run.get(i).copied().flatten(),
        })
        .collect();
    let (kiops, predicted): (Vec<f64>, Vec<f64>) =
        m.kiops.iter().zip(per_run).filter_map(|(&k, p)| p.map(|p| (k, p))).unzip();
    let left_out_kiops: Vec<f64> =
        m.kiops.iter().zip(per_run).filter(|(_, p)| p.is_none()).map(|(&k, _)| k).collect();
    let measured = Spread::of(kiops.clone());
    let errors = repetition_errors(&kiops, &predicted);
    let error_pct = if !kiops.is_empty() && errors.len() == kiops.len() && measured.median > 0.0 {
        median(&errors)
    } else {
        f64::NAN
    };
    let intervals = point_intervals(&kiops, &predicted);
    let (measured_interval, error_interval_pct) = match &intervals {
        Ok((m, e)) => (Some(*m), Some(*e)),
        Err(_) => (None, None),
    };
    Row {
        variant: k.variant,
        lock: k.lock,
        insert: k.insert.name(),
        outside_ns: k.outside_ns,
        threads: k.threads,
        measured,
        predicted: if predicted.is_empty() { f64::NAN } else { median(&predicted) },
        error_pct,
        measured_interval,
        error_interval_pct,
        no_interval: intervals.err().map(|why| why.to_string()),
        within_goal: error_interval_pct.map(|e| judge_within(e, (-goal_pct, goal_pct))),
        other_cpus_max: m.other_cpus.iter().copied().filter(|v| v.is_finite()).fold(0.0, f64::max),
        reruns: m.noise.rerun,
        failures: m.failures.clone(),
        placement,
        left_out_kiops,
        repetitions,
    }
}

/// How the prediction orders two variants beside how the measurement does ([`pair_order`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum PairOrder {
    /// The measurement orders the pair (its interval clears 1) and the prediction agrees.
    Agree,
    /// The measurement orders the pair and the prediction puts them the other way (or level).
    Disagree,
    /// The pair's measured ratio has an interval that reaches across 1: the measurement does not
    /// tell which is faster, so no prediction can be wrong about it.
    WithinNoise,
    /// Fewer than [`crate::stats::BOOTSTRAP_MIN_VALUES`] rounds in which both ran in one
    /// placement: no interval, not judged.
    NoInterval,
}

/// How the prediction orders variants `a` and `b` (one group: the same lock, path, outside work
/// and threads), judged as every other verdict is (issue 42): on an interval. The pair is
/// compared round by round, over the rounds in which both ran in the same placement and neither
/// moved (the variants of one round share the machine's state; a ratio across placements is the
/// host's, not the variants'): the measured ratio a ÷ b's 95 % bootstrap interval of its median
/// ([`bootstrap_interval`]) orders the pair when it clears 1, and the prediction agrees when the
/// median of its own per-round ratios is on the same side of 1.
pub fn pair_order(a: &Row, b: &Row) -> PairOrder {
    let mut measured = Vec::new();
    let mut predicted = Vec::new();
    for ra in &a.repetitions {
        let partner = b.repetitions.iter().find(|rb| rb.round == ra.round);
        let Some(rb) = partner.filter(|rb| rb.placement == ra.placement) else { continue };
        let (Some(pa), Some(pb)) = (ra.predicted, rb.predicted) else { continue };
        if ra.kiops > 0.0 && rb.kiops > 0.0 && pa.is_finite() && pb > 0.0 {
            measured.push(ra.kiops / rb.kiops);
            predicted.push(pa / pb);
        }
    }
    let Some(interval) =
        bootstrap_interval(&measured, median_in_place, BOOTSTRAP_RESAMPLES, BOOTSTRAP_SEED)
    else {
        return PairOrder::NoInterval;
    };
    let a_faster = if interval.lo > 1.0 {
        true
    } else if interval.hi < 1.0 {
        false
    } else {
        return PairOrder::WithinNoise;
    };
    let p = median(&predicted);
    if (a_faster && p > 1.0) || (!a_faster && p < 1.0) {
        PairOrder::Agree
    } else {
        PairOrder::Disagree
    }
}

/// A group's order, judged on the pairs the measurement orders ([`OrderCheck::verdict`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum OrderVerdict {
    /// Every pair has an interval, at least one is ordered by the measurement, and the
    /// prediction agrees with every pair that is.
    Right,
    /// The prediction puts some pair the other way from a measured order that clears the noise.
    Wrong,
    /// Some pair has no interval, or the measurement orders no pair: nothing to hold it to.
    NotJudged,
}

/// The variants ranked by measured and by predicted KIOPS, for one lock kind, insert path,
/// outside work and thread count, and the order judged pair by pair.
#[derive(Clone, Debug, Serialize)]
pub struct OrderCheck {
    pub lock: LockKind,
    pub insert: &'static str,
    pub outside_ns: u64,
    pub threads: usize,
    /// Fastest first, by the points' medians.
    pub measured: Vec<&'static str>,
    pub predicted: Vec<&'static str>,
    /// The two rankings are the same, place for place (variants whose medians differ by less
    /// than the noise included: a figure, not the verdict).
    pub same: bool,
    /// Pairs of variants ordered alike by the medians ÷ all pairs.
    pub pairs_agreeing: f64,
    /// The pairs by [`pair_order`]: how many agree, disagree, are within the noise, have no
    /// interval.
    pub pairs_agree: usize,
    pub pairs_disagree: usize,
    pub pairs_within_noise: usize,
    pub pairs_no_interval: usize,
    /// The group's order judged on those pairs.
    pub verdict: OrderVerdict,
}

impl OrderCheck {
    /// The verdict the pair counts give: wrong on one disagreement; not judged where a pair has
    /// no interval or none is ordered; right otherwise.
    fn judge(agree: usize, disagree: usize, no_interval: usize) -> OrderVerdict {
        if disagree > 0 {
            OrderVerdict::Wrong
        } else if no_interval > 0 || agree == 0 {
            OrderVerdict::NotJudged
        } else {
            OrderVerdict::Right
        }
    }
}

pub fn orderings(rows: &[Row]) -> Vec<OrderCheck> {
    let mut groups: Vec<(LockKind, &'static str, u64, usize)> = Vec::new();
    for r in rows {
        let g = (r.lock, r.insert, r.outside_ns, r.threads);
        if !groups.contains(&g) {
            groups.push(g);
        }
    }
    groups
        .into_iter()
        .filter_map(|(lock, insert, outside_ns, threads)| {
            let rs: Vec<&Row> = rows
                .iter()
                .filter(|r| {
                    r.lock == lock
                        && r.insert == insert
                        && r.outside_ns == outside_ns
                        && r.threads == threads
                        && r.measured.median > 0.0
                        && r.predicted.is_finite()
                })
                .collect();
            if rs.len() < 2 {
                return None;
            }
            let rank = |f: &dyn Fn(&Row) -> f64| {
                let mut v: Vec<&Row> = rs.clone();
                v.sort_by(|a, b| f(b).total_cmp(&f(a)));
                v.iter().map(|r| r.variant).collect::<Vec<_>>()
            };
            let measured = rank(&|r: &Row| r.measured.median);
            let predicted = rank(&|r: &Row| r.predicted);
            let mut agree = 0;
            let mut pairs = 0;
            let mut by_pair = Vec::new();
            for (i, a) in rs.iter().enumerate() {
                for b in &rs[i + 1..] {
                    pairs += 1;
                    if (a.measured.median - b.measured.median).signum()
                        == (a.predicted - b.predicted).signum()
                    {
                        agree += 1;
                    }
                    by_pair.push(pair_order(a, b));
                }
            }
            let count = |which| by_pair.iter().filter(|&&p| p == which).count();
            let pairs_agree = count(PairOrder::Agree);
            let pairs_disagree = count(PairOrder::Disagree);
            let pairs_no_interval = count(PairOrder::NoInterval);
            Some(OrderCheck {
                lock,
                insert,
                outside_ns,
                threads,
                same: measured == predicted,
                measured,
                predicted,
                pairs_agreeing: agree as f64 / pairs.max(1) as f64,
                pairs_agree,
                pairs_disagree,
                pairs_within_noise: count(PairOrder::WithinNoise),
                pairs_no_interval,
                verdict: OrderCheck::judge(pairs_agree, pairs_disagree, pairs_no_interval),
            })
        })
        .collect()
}

/// Median and largest |error| over the rows with both figures.
pub fn error_summary(rows: &[Row]) -> (Option<f64>, Option<f64>) {
    let errs: Vec<f64> = rows.iter().map(|r| r.error_pct.abs()).filter(|e| e.is_finite()).collect();
    if errs.is_empty() {
        // Nothing measured (an interrupted validation): no error, not 0 % (issue 43).
        return (None, None);
    }
    (Some(median(&errs)), Some(errs.iter().copied().fold(0.0, f64::max)))
}

/// What the median |error| rests on, in words: how many points, each the median of how many
/// repetitions, and how many of them are within, outside and inconclusive against the goal's
/// band on their intervals (or have none).
pub fn error_basis(rows: &[Row], repetitions: usize, goal_pct: f64) -> String {
    let with: Vec<&Row> = rows.iter().filter(|r| r.error_pct.is_finite()).collect();
    let count = |v: Option<GoalVerdict>| with.iter().filter(|r| r.within_goal == v).count();
    let without = count(None);
    let (within, outside) = (count(Some(GoalVerdict::Met)), count(Some(GoalVerdict::Missed)));
    let inconclusive = count(Some(GoalVerdict::Inconclusive));
    let mut s = format!(
        "{} of {} points, each the median of up to {repetitions} repetition(s); on their 95 % \
         intervals {within} within ±{goal_pct:.0}%, {outside} outside, {inconclusive} inconclusive",
        with.len(),
        rows.len(),
    );
    if without > 0 {
        s += &format!(
            ", {without} without an interval (fewer than {} repetitions: not judged)",
            crate::stats::BOOTSTRAP_MIN_VALUES
        );
    }
    s
}

/// What [`error_basis`] adds about placement: "; 12 of 60 repetitions ran in another placement
/// than the calibration (a transfer of 157 ns against its 32 ns ...), predicted with that
/// transfer; 2 moved during the run, left out", or nothing when every probed one ran as
/// calibrated (or none was probed). `reference_ns`: the transfer the calibration measured.
pub fn placement_basis(measured: &[Measured], reference_ns: Option<f64>) -> String {
    let placements: Vec<RunPlacement> = measured
        .iter()
        .flat_map(|m| m.transfer_ns.iter())
        .map(|&probes| RunPlacement::of(probes, reference_ns))
        .filter(|p| *p != RunPlacement::Unprobed)
        .collect();
    let count = |which| placements.iter().filter(|&&p| p == which).count();
    let (other, moved) = (count(RunPlacement::Other), count(RunPlacement::Moved));
    let Some(reference) = reference_ns else {
        return String::new();
    };
    let mut s = String::new();
    if let Some(transfer) = other_transfer_ns(measured, reference_ns) {
        s += &format!(
            "; {other} of {} repetitions ran in another placement than the calibration (a \
             transfer of {transfer:.0} ns against its {reference:.0} ns: the host moved the CPUs; \
             notes/results/2026-12-04-placement.md), each predicted with that transfer",
            placements.len()
        );
    }
    if moved > 0 {
        s += &format!(
            "; {moved} of {} repetitions changed placement while they ran (their probes \
             disagree): left out of the error",
            placements.len()
        );
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The no-stats point on the fair lock, direct insert, no outside work, at `threads`.
    fn no_stats_key(threads: usize) -> Key {
        let insert = schedlab_core::InsertPathKind::Direct;
        Key { variant: "no-stats", lock: LockKind::FairSpin, insert, outside_ns: 0, threads }
    }

    /// Issue 43, item 7: a validation stopped before any run measured nothing: its rows' figures
    /// and the median and largest error are null in the JSON, not 0.0 (a 0.0 % error read as a
    /// perfect prediction).
    #[test]
    fn a_validation_that_measured_nothing_has_no_error_not_zero() {
        let key = no_stats_key(1);
        let nothing = Measured {
            key,
            kiops: Vec::new(),
            rounds: Vec::new(),
            other_cpus: Vec::new(),
            transfer_ns: Vec::new(),
            noise: NoiseCount::default(),
            failures: Vec::new(),
        };
        let none = ValidationPredictions { as_calibrated: &[], reference_ns: None, other: None };
        let rows = rows(&[nothing], none, 15.0);
        assert_eq!(error_summary(&rows), (None, None));
        let json = serde_json::to_value(&rows[0]).unwrap();
        for figure in ["median", "min", "max"] {
            assert!(json["measured"][figure].is_null(), "{figure}: {json}");
        }
        assert!(json["error_pct"].is_null(), "{json}");
    }

    /// A point measured `kiops`, predicted `predicted`, judged against ±15 %.
    fn judged(kiops: &[f64], predicted: f64) -> Row {
        let insert = schedlab_core::InsertPathKind::Direct;
        let (lock, outside_ns, threads) = (LockKind::FairSpin, 0, 1);
        let key = Key { variant: "no-stats", lock, insert, outside_ns, threads };
        let other_cpus = vec![0.0; kiops.len()];
        let noise = NoiseCount::default();
        let transfer_ns = vec![[None, None]; kiops.len()];
        let m = Measured {
            key,
            kiops: kiops.to_vec(),
            rounds: (0..kiops.len()).collect(),
            other_cpus,
            transfer_ns,
            noise,
            failures: Vec::new(),
        };
        row(&m, &vec![Some(predicted); kiops.len()], None, 15.0)
    }

    #[test]
    fn a_point_with_enough_repetitions_has_an_interval_and_fewer_none() {
        let r = judged(&[1000.0, 1100.0, 900.0, 1050.0, 950.0, 1000.0], 1000.0);
        let m = r.measured_interval.expect("six repetitions");
        assert!(m.lo < 1000.0 && m.hi > 1000.0 && m.lo >= 900.0 && m.hi <= 1100.0, "{m:?}");
        let e = r.error_interval_pct.expect("an error interval");
        assert!(e.lo < 0.0 && e.hi > 0.0, "{e:?}");
        assert_eq!(r.no_interval, None);
        let few = judged(&[1000.0, 1100.0, 900.0, 1050.0, 950.0], 1000.0);
        assert_eq!((few.measured_interval, few.error_interval_pct), (None, None));
        assert_eq!(few.within_goal, None);
        assert_eq!(few.no_interval.as_deref(), Some("no interval: fewer than 6 repetitions"));
        let json = serde_json::to_value(&few).unwrap();
        assert!(json["measured_interval"].is_null() && json["within_goal"].is_null(), "{json}");
    }

    #[test]
    fn an_error_is_judged_on_its_interval_not_on_its_median() {
        // Median 1000 against 1100 predicted: +10 %, inside ±15 % by the median alone; but the
        // repetitions reach 800, whose error is +37 %: the interval straddles 15 %.
        let straddles = judged(&[800.0, 1000.0, 1010.0, 1005.0, 820.0, 1000.0], 1100.0);
        assert!((straddles.error_pct - 10.0).abs() < 1e-9);
        let (verdict, interval) = (straddles.within_goal, straddles.error_interval_pct);
        assert_eq!(verdict, Some(GoalVerdict::Inconclusive), "{interval:?}");
        let tight = judged(&[1000.0, 1001.0, 999.0, 1000.0, 1000.5, 999.5], 1100.0);
        assert_eq!(tight.within_goal, Some(GoalVerdict::Met));
        let far = judged(&[700.0, 705.0, 695.0, 702.0, 698.0, 700.0], 1100.0);
        assert_eq!(far.within_goal, Some(GoalVerdict::Missed));
        let basis = error_basis(&[straddles, tight, far], 6, 15.0);
        for says in ["3 of 3 points", "1 within", "1 outside", "1 inconclusive"] {
            assert!(basis.contains(says), "{basis}");
        }
    }

    #[test]
    fn a_run_is_in_the_calibrations_placement_when_every_probe_is_within_the_far_factor() {
        // This machine kind: 32 ns near, 157 ns far (notes/results/2026-12-04-placement.md).
        assert_eq!(same_placement([Some(34.0), Some(40.0)], Some(32.0)), Some(true));
        assert_eq!(same_placement([Some(34.0), Some(157.0)], Some(32.0)), Some(false));
        assert_eq!(same_placement([Some(157.0), None], Some(32.0)), Some(false));
        // A calibration made in the far placement: a near run is in another.
        assert_eq!(same_placement([Some(34.0), Some(33.0)], Some(157.0)), Some(false));
        assert_eq!(same_placement([None, None], Some(32.0)), None);
        assert_eq!(same_placement([Some(34.0), None], None), None);
    }

    #[test]
    fn the_basis_says_how_many_repetitions_ran_in_another_placement() {
        let key = no_stats_key(2);
        let mut m = Measured {
            key,
            kiops: vec![1000.0, 400.0, 1000.0],
            rounds: (0..3).collect(),
            other_cpus: vec![0.0; 3],
            transfer_ns: vec![
                [Some(33.0), Some(34.0)],
                [Some(34.0), Some(160.0)],
                [Some(35.0), Some(33.0)],
            ],
            noise: NoiseCount::default(),
            failures: Vec::new(),
        };
        let basis = placement_basis(std::slice::from_ref(&m), Some(32.0));
        assert!(
            basis.contains("1 of 3 repetitions changed placement") && !basis.contains("another"),
            "{basis}"
        );
        m.transfer_ns[1] = [Some(158.0), Some(160.0)];
        let basis = placement_basis(std::slice::from_ref(&m), Some(32.0));
        assert!(
            basis.contains("1 of 3 repetitions ran in another placement")
                && basis.contains("159 ns against its 32 ns")
                && !basis.contains("changed"),
            "{basis}"
        );
        m.transfer_ns[1] = [Some(34.0), Some(36.0)];
        assert_eq!(placement_basis(&[m], Some(32.0)), "");
    }

    /// A prediction of `kiops` for the no-stats point at 2 threads.
    fn predicted(kiops: f64) -> Prediction {
        use crate::model::sim::{Breakdown, SimResult};
        Prediction {
            variant: "no-stats".into(),
            lock: LockKind::FairSpin,
            insert: "direct".into(),
            outside_ns: 0,
            inject: schedlab_core::Inject::default(),
            result: SimResult {
                threads: 2,
                kiops,
                per_thread_min: kiops / 2.0,
                per_thread_max: kiops / 2.0,
                breakdown: Breakdown::default(),
                lock_busy: Vec::new(),
                lock_owners: Vec::new(),
                completions: 1,
                measured_ns: 1.0,
                events: 1,
            },
        }
    }

    /// Issue 41, item 2: each repetition is held against the prediction for the placement it
    /// ran in. Three runs near (1000 KIOPS, predicted 1000) and three far (500, predicted 500 with
    /// the far transfer): no error. Held all against the calibration's prediction, as before,
    /// the same runs are off by 0 % to +100 % and the median error is not 0.
    #[test]
    fn each_repetition_is_held_against_its_own_placements_prediction() {
        let key = no_stats_key(2);
        let (near, far, moved) =
            ([Some(33.0), Some(34.0)], [Some(158.0), Some(162.0)], [Some(33.0), Some(160.0)]);
        let m = Measured {
            key,
            kiops: vec![1000.0, 500.0, 1000.0, 500.0, 1000.0, 500.0, 20.0],
            rounds: (0..7).collect(),
            other_cpus: vec![0.0; 7],
            transfer_ns: vec![near, far, near, far, near, far, moved],
            noise: NoiseCount::default(),
            failures: Vec::new(),
        };
        let reference_ns = Some(32.0);
        assert_eq!(other_transfer_ns(std::slice::from_ref(&m), reference_ns), Some(160.0));
        let (calibrated, other) = ([predicted(1000.0)], [predicted(500.0)]);
        let both = ValidationPredictions {
            as_calibrated: &calibrated,
            reference_ns,
            other: Some((160.0, &other)),
        };
        let r = &rows(std::slice::from_ref(&m), both, 15.0)[0];
        assert_eq!(r.placement, PointPlacement { as_calibrated: 3, other: 3, moved: 1 });
        assert_eq!(r.measured.runs.len(), 6, "the moved run is left out");
        assert!(r.error_pct.abs() < 1e-9, "{}", r.error_pct);
        assert_eq!(r.within_goal, Some(GoalVerdict::Met));
        let one = ValidationPredictions { other: None, ..both };
        let old = ValidationPredictions { reference_ns: None, ..one };
        let r = &rows(&[m], old, 15.0)[0];
        assert_eq!(r.placement.as_calibrated, 7);
        assert!(r.error_pct > 1.0, "{}", r.error_pct);
    }

    #[test]
    fn a_repetition_is_in_the_other_placement_only_when_its_probes_agree() {
        let of = |probes| RunPlacement::of(probes, Some(32.0));
        assert_eq!(of([Some(33.0), Some(40.0)]), RunPlacement::AsCalibrated);
        assert_eq!(of([Some(158.0), Some(170.0)]), RunPlacement::Other);
        assert_eq!(of([Some(158.0), None]), RunPlacement::Other);
        assert_eq!(of([Some(33.0), Some(158.0)]), RunPlacement::Moved);
        // Both far from the calibration, but far from each other too.
        assert_eq!(of([Some(70.0), Some(400.0)]), RunPlacement::Moved);
        assert_eq!(of([None, None]), RunPlacement::Unprobed);
        assert_eq!(RunPlacement::of([Some(158.0), None], None), RunPlacement::Unprobed);
    }

    /// A two-thread point of `variant` measured `kiops` in rounds 0, 1, ..., each in placement
    /// `placements[i]` (as calibrated where the list is short), predicted `predicted`.
    fn point(
        variant: &'static str,
        kiops: &[f64],
        placements: &[RunPlacement],
        predicted: f64,
    ) -> Row {
        let key = Key { variant, ..no_stats_key(2) };
        let probes = |p: Option<&RunPlacement>| match p {
            Some(RunPlacement::Other) => [Some(160.0), Some(158.0)],
            Some(RunPlacement::Moved) => [Some(33.0), Some(160.0)],
            _ => [Some(33.0), Some(34.0)],
        };
        let m = Measured {
            key,
            kiops: kiops.to_vec(),
            rounds: (0..kiops.len()).collect(),
            other_cpus: vec![0.0; kiops.len()],
            transfer_ns: (0..kiops.len()).map(|i| probes(placements.get(i))).collect(),
            noise: NoiseCount::default(),
            failures: Vec::new(),
        };
        let per_run: Vec<Option<f64>> = (0..kiops.len())
            .map(|i| (placements.get(i) != Some(&RunPlacement::Moved)).then_some(predicted))
            .collect();
        row(&m, &per_run, Some(32.0), 15.0)
    }

    /// Issue 41's order, judged as issue 42 judges every verdict: on an interval. Two variants
    /// the measurement orders (every round a ÷ b ≈ 1.2) are in the right order only when the
    /// prediction puts them so; two whose rounds go either way cannot be in the wrong order.
    #[test]
    fn a_pair_is_ordered_only_where_its_paired_interval_clears_one() {
        let b = point("b", &[1000.0, 900.0, 1100.0, 1000.0, 950.0, 1050.0], &[], 1000.0);
        let faster = [1200.0, 1085.0, 1310.0, 1190.0, 1150.0, 1265.0];
        assert_eq!(pair_order(&point("a", &faster, &[], 1300.0), &b), PairOrder::Agree);
        assert_eq!(pair_order(&point("a", &faster, &[], 900.0), &b), PairOrder::Disagree);
        assert_eq!(pair_order(&b, &point("a", &faster, &[], 900.0)), PairOrder::Disagree);
        // Faster in half the rounds, slower in the other half: within the noise, whatever the
        // medians say and whatever the prediction.
        let either = [1050.0, 850.0, 1160.0, 950.0, 1000.0, 1000.0];
        for predicted in [500.0, 1000.0, 2000.0] {
            let a = point("a", &either, &[], predicted);
            assert_eq!(pair_order(&a, &b), PairOrder::WithinNoise);
        }
        // Two rounds in which `a` ran in the other placement are not paired with `b`'s: four
        // rounds are too few for an interval.
        let other = [RunPlacement::Other, RunPlacement::AsCalibrated, RunPlacement::Other];
        assert_eq!(pair_order(&point("a", &faster, &other, 1300.0), &b), PairOrder::NoInterval);
        let moved = [RunPlacement::Moved];
        let a = point("a", &faster[..6], &moved, 1300.0);
        assert_eq!(pair_order(&a, &b), PairOrder::NoInterval, "a moved round is left out");
    }

    #[test]
    fn a_group_is_wrong_on_one_ordered_pair_and_not_judged_without_intervals() {
        let b = point("b", &[1000.0, 900.0, 1100.0, 1000.0, 950.0, 1050.0], &[], 1000.0);
        let faster = [1200.0, 1085.0, 1310.0, 1190.0, 1150.0, 1265.0];
        let either = [1050.0, 850.0, 1160.0, 950.0, 1000.0, 1000.0];
        let group = |rows: &[Row]| orderings(rows).remove(0);
        let right = group(&[point("a", &faster, &[], 1300.0), b.clone()]);
        assert_eq!((right.verdict, right.pairs_agree), (OrderVerdict::Right, 1));
        let wrong = group(&[point("a", &faster, &[], 900.0), b.clone()]);
        assert_eq!((wrong.verdict, wrong.pairs_disagree), (OrderVerdict::Wrong, 1));
        // `a` and `b` have level medians (1000 each) and the prediction puts `b` first; the
        // measurement does not order them, so they cannot be in the wrong order.
        let level =
            group(&[point("a", &either, &[], 900.0), b.clone(), point("c", &faster, &[], 1300.0)]);
        assert_eq!(level.pairs_within_noise, 1);
        assert_eq!(level.verdict, OrderVerdict::Right, "{level:?}");
        let alone = group(&[point("a", &either, &[], 900.0), b.clone()]);
        assert_eq!(alone.verdict, OrderVerdict::NotJudged, "nothing ordered");
        let few = group(&[point("a", &faster[..5], &[], 1300.0), b]);
        assert_eq!((few.verdict, few.pairs_no_interval), (OrderVerdict::NotJudged, 1));
    }
}
