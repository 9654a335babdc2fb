//! `schedlab sweep`: KIOPS against thread count, per variant and lock kind (optionally per stat
//! slot count or outside work), each point appended to a CSV as soon as it is measured, then an
//! SVG chart with a linear-scaling reference and a scaling *model*.
//!
//! ## The model
//!
//! Two measured points (1 and 2 threads on this machine kind) fix Amdahl's serial fraction but
//! not the Universal Scalability Law's coherency term (`../shared/reference/measuring.md` §4),
//! so the line beyond them is not a fit: it is the prediction of `schedlab predict`
//! ([`crate::model`]), a discrete-event simulation of the workload on N CPUs with each lock's
//! discipline (FIFO hand-off for the fair lock; barging, spinning and parking for parking_lot),
//! calibrated on single-threaded runs and a cache-line transfer measurement only. It is drawn
//! dashed and labelled MODEL, with its largest error against the points this sweep measured
//! (`SeriesModel::error_pct`); its values at 8, 16 and 64 threads are printed. The machine
//! simulated is this one's measured profile with as many cores as asked (64 by default: a
//! hypothetical machine of this one's cores and transfers), or a topology profile given.
//!
//! A USL curve is fitted (least squares on n/C(n) − 1 = σ(n−1) + κn(n−1)) only when at least
//! [`USL_MIN_POINTS`] thread counts were measured without oversubscription, and drawn dotted.
//!
//! Oversubscribed points (more threads than CPUs) are measured only when asked, marked in the CSV
//! and on the chart, and never used by the model: they measure the OS scheduler, not the lock.
//!
//! ## Rounds and intervals
//!
//! The sweep runs `rounds` times over every point (the variants at each thread count in an order
//! rotated by one each round), so that every figure has a spread to judge it by; a point's row
//! carries its round, and the instrumented run (the lock counters) is made in the first round
//! only. Each variant's KIOPS ÷ the reference's ([`reference_variant`]) at the same thread count
//! is taken within each round (the two runs were minutes apart at most, on the same machine
//! state) and reported as the median of those per-round ratios with the 95 % bootstrap interval
//! over rounds ([`crate::stats::ratio_interval`]); the model's error has the interval of the same
//! resampling of whole rounds ([`crate::stats::bootstrap_rounds`]). Fewer than 6 rounds: no
//! interval, and the reason in its place.

use crate::driver::host::other_runnable_threads;
use crate::driver::noise::{run_clean, NoiseCount, NoisePolicy};
use crate::driver::workload::{fair_lock_warning_before, run_named, RunResult, WorkloadConfig};
use crate::error::ExperimentError;
use crate::experiment::observer::{Event, Observer};
use crate::files::input::{caps, read_input};
use crate::files::output::{OutputError, OutputFile, Stream};
use crate::files::provenance::Provenance;
use crate::model::calibrate::CalibrationSettings;
use crate::model::{self, topology::Topology, CalibrationSet};
pub use crate::stats::fit_usl;
use crate::stats::{bootstrap_rounds, median, ratio_interval, Interval, NoInterval, Spread};
use schedlab_core::lockstat::{self, LockClass, LockSummary};
use schedlab_core::sync::{AtomicBool, Ordering};
use schedlab_core::{InsertPathKind, LockKind};
use serde::Serialize;
use std::time::Duration;

/// Fewest measured (not oversubscribed) thread counts for a USL fit.
pub const USL_MIN_POINTS: usize = 4;
/// Thread counts the model is evaluated at.
pub const MODEL_AT: [usize; 3] = [8, 16, 64];
/// One-way cache-line transfer between two vCPUs of this machine kind (measuring.md §2), used when
/// it cannot be measured (a single CPU).
pub const DEFAULT_TRANSFER_NS: f64 = 34.0;

/// What to sweep.
#[derive(Clone, Debug, Serialize)]
pub struct SweepConfig {
    /// The workload of every point (threads, slots, outside work, lock and lockstat set per point).
    pub workload: WorkloadConfig,
    pub threads: Vec<usize>,
    /// Times every point is measured, interleaved (1..=100).
    pub rounds: usize,
    /// CPUs available: thread counts above it are oversubscribed.
    pub cpus: usize,
    pub variants: Vec<&'static str>,
    pub locks: Vec<LockKind>,
    pub slots: Vec<usize>,
    pub outside_ns: Vec<u64>,
    /// Measured window of the instrumented run of each point (0: no instrumented run, no model).
    pub lockstat_duration: Duration,
    pub sum_sampling: u32,
    pub noise: NoisePolicy,
    /// Where each point is written as it is measured; `None`: nowhere (the report only).
    #[serde(skip)]
    pub csv: Option<CsvOutput>,
    /// The model beside the points; `None`: no model, and no calibration.
    pub model: Option<ModelSettings>,
}

/// The thread counts of a sweep: those listed (default every count up to the CPUs), and above
/// the CPU count only up to `oversubscribe_to` when it is given (those points measure the OS
/// scheduler, not the lock); sorted, each once. Bad input when a count is 0 or above the CPUs
/// unasked.
pub fn thread_counts(
    listed: Option<Vec<usize>>,
    cpus: usize,
    oversubscribe_to: Option<usize>,
) -> Result<Vec<usize>, ExperimentError> {
    let mut threads = listed.unwrap_or_else(|| (1..=cpus).collect());
    if threads.contains(&0) {
        return Err(ExperimentError::bad_input("--threads must be at least 1"));
    }
    match oversubscribe_to {
        Some(n) => threads.extend(cpus + 1..=n),
        None => {
            if let Some(&t) = threads.iter().find(|&&t| t > cpus) {
                return Err(ExperimentError::bad_input(format!(
                    "--threads {t} is more \
                    than the {cpus} CPUs: oversubscribed points need --oversubscribe-to"
                )));
            }
        }
    }
    threads.sort_unstable();
    threads.dedup();
    Ok(threads)
}

impl SweepConfig {
    /// Checks every point's workload, before any work: a bad-input error whose message is one
    /// line for the user.
    pub fn validate(&self) -> Result<(), ExperimentError> {
        if self.threads.is_empty() || self.variants.is_empty() || self.locks.is_empty() {
            return Err(ExperimentError::bad_input(
                "nothing to sweep (no thread count, variant or lock kind)",
            ));
        }
        if !(1..=100).contains(&self.rounds) {
            let got = self.rounds;
            return Err(ExperimentError::bad_input(format!("--rounds must be 1..=100, got {got}")));
        }
        if self.slots.is_empty() || self.outside_ns.is_empty() {
            return Err(ExperimentError::bad_input(
                "nothing to sweep (empty slot or outside-work list)",
            ));
        }
        for &t in &self.threads {
            for &s in &self.slots {
                for &o in &self.outside_ns {
                    for &lock in &self.locks {
                        let w = WorkloadConfig {
                            threads: t,
                            slots: s,
                            outside_ns: o,
                            lock,
                            ..self.workload.clone()
                        };
                        for v in &self.variants {
                            w.validate(v)?;
                        }
                    }
                }
            }
        }
        Ok(())
    }

    /// Every point, in measuring order: round by round; in each, per lock kind, slot count and
    /// outside work, thread counts in turn, every variant at each (so that variants are compared
    /// at nearby moments), their order rotated by one each round.
    pub fn points(&self) -> Vec<PointKey> {
        let mut keys = Vec::new();
        for round in 0..self.rounds {
            let key = |variant, lock, slots, outside_ns, threads| PointKey {
                variant,
                lock,
                threads,
                slots,
                outside_ns,
                round,
            };
            for &lock in &self.locks {
                for &slots in &self.slots {
                    for &outside_ns in &self.outside_ns {
                        for &threads in &self.threads {
                            let n = self.variants.len();
                            for j in 0..n {
                                let variant = self.variants[(j + round) % n].to_string();
                                keys.push(key(variant, lock, slots, outside_ns, threads));
                            }
                        }
                    }
                }
            }
        }
        keys
    }

    /// The values of [`SETTINGS_COLUMNS`] for this sweep.
    pub fn settings(&self) -> Vec<String> {
        let w = &self.workload;
        vec![
            w.groups.to_string(),
            w.weights.iter().map(|x| x.to_string()).collect::<Vec<_>>().join("/"),
            w.churn_per_sec.to_string(),
            w.rw.name().to_string(),
            (w.bs_sectors as u64 * 512).to_string(),
            w.iodepth.to_string(),
            w.slice_idle_ns.to_string(),
            w.pin_cpus.to_string(),
            w.seed.to_string(),
            w.duration.as_secs_f64().to_string(),
            w.ramp.as_secs_f64().to_string(),
            self.lockstat_duration.as_secs_f64().to_string(),
            self.sum_sampling.to_string(),
        ]
    }

    /// Seconds the sweep will take, roughly (the instrumented runs are the first round's).
    pub fn estimated_seconds(&self) -> f64 {
        let ramp = self.workload.ramp.as_secs_f64();
        let plain = self.workload.duration.as_secs_f64() + ramp;
        let lockstat = self.lockstat_duration.as_secs_f64();
        let instrumented = if lockstat > 0.0 { lockstat + ramp } else { 0.0 };
        let points = self.points().len() as f64;
        plain * points + instrumented * points / self.rounds.max(1) as f64
    }
}

/// What identifies a point.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PointKey {
    pub variant: String,
    pub lock: LockKind,
    pub threads: usize,
    pub slots: usize,
    pub outside_ns: u64,
    /// The round (from 0).
    pub round: usize,
}

/// One measured point: a CSV row.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct SweepPoint {
    pub variant: String,
    pub lock: LockKind,
    pub threads: usize,
    pub oversubscribed: bool,
    pub slots: usize,
    pub outside_ns: u64,
    /// Plain run.
    pub kiops: f64,
    pub per_thread_min: f64,
    pub per_thread_median: f64,
    pub per_thread_max: f64,
    /// Instrumented run (NaN without one).
    pub kiops_lockstat: f64,
    pub consistent: bool,
    pub measured_s: f64,
    pub sched_acq_per_req: f64,
    pub sched_hold_per_req_ns: f64,
    pub sched_hold_avg_ns: f64,
    pub sched_occupancy: f64,
    pub sched_contention_pct: f64,
    pub sched_owner_change_frac: f64,
    pub sched_wait_avg_ns: f64,
    pub queue_acq_per_req: f64,
    pub queue_hold_per_req_ns: f64,
    pub queue_occupancy: f64,
    pub queue_owner_change_frac: f64,
    /// Other processes' CPUs during the plain run (see `NoisePolicy`), and re-runs it took.
    pub other_cpus: f64,
    pub reruns: u32,
    /// The round it was measured in (from 0).
    pub round: usize,
}

/// The point columns up to `reruns`: those of every sweep CSV since the settings columns.
macro_rules! columns_before_rounds {
    () => {
        concat!(
            "variant,lock,threads,oversubscribed,slots,outside_ns,kiops,per_thread_min,",
            "per_thread_median,per_thread_max,kiops_lockstat,consistent,measured_s,",
            "sched_acq_per_req,sched_hold_per_req_ns,sched_hold_avg_ns,sched_occupancy,",
            "sched_contention_pct,sched_owner_change_frac,sched_wait_avg_ns,queue_acq_per_req,",
            "queue_hold_per_req_ns,queue_occupancy,queue_owner_change_frac,other_cpus,reruns"
        )
    };
}

/// The point columns of the CSV, in [`SweepPoint`] field order.
const POINT_COLUMNS: &str = concat!(columns_before_rounds!(), ",round");

/// The point columns of sweeps written before rounds (one run per point, no `round` column).
const POINT_COLUMNS_BEFORE_ROUNDS: &str = columns_before_rounds!();

/// The settings columns: what every point of one sweep shares, written on every row so that
/// `--resume` can refuse a file measured otherwise ([`SweepConfig::settings`]).
pub const SETTINGS_COLUMNS: [&str; 13] = [
    "groups",
    "weights",
    "churn_per_s",
    "rw",
    "bs_bytes",
    "iodepth",
    "slice_idle_ns",
    "pin",
    "seed",
    "duration_s",
    "ramp_s",
    "lockstat_duration_s",
    "sum_sampling",
];

/// The CSV header: the point columns, then the settings columns.
pub fn csv_header() -> String {
    format!("{POINT_COLUMNS},{}", SETTINGS_COLUMNS.join(","))
}

/// The header of sweeps written before the settings columns existed.
const LEGACY_HEADER: &str = POINT_COLUMNS_BEFORE_ROUNDS;

impl SweepPoint {
    pub fn key(&self) -> PointKey {
        PointKey {
            variant: self.variant.clone(),
            lock: self.lock,
            threads: self.threads,
            slots: self.slots,
            outside_ns: self.outside_ns,
            round: self.round,
        }
    }

    /// Builds a point of `round` from a plain run and (optionally) an instrumented one.
    pub fn from_runs(
        plain: &RunResult,
        instrumented: Option<&RunResult>,
        cfg: &WorkloadConfig,
        cpus: usize,
        reruns: u32,
        round: usize,
    ) -> Self {
        let pt = &plain.per_thread_kiops;
        let lock_fields = |name: &str| -> (f64, f64, f64, f64, f64, f64, f64) {
            let Some(r) = instrumented else {
                return (f64::NAN, f64::NAN, f64::NAN, f64::NAN, f64::NAN, f64::NAN, f64::NAN);
            };
            let requests = r.kiops * 1e3 * r.measured_s;
            match r.locks.iter().find(|l| l.name == name) {
                Some(l) if requests > 0.0 => lock_numbers(l, requests),
                _ => (0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0),
            }
        };
        let s = lock_fields("sched");
        let q = lock_fields("queue");
        SweepPoint {
            variant: plain.variant.to_string(),
            lock: plain.lock,
            threads: plain.threads,
            oversubscribed: plain.threads > cpus,
            slots: cfg.slots,
            outside_ns: cfg.outside_ns,
            kiops: plain.kiops,
            per_thread_min: pt.iter().copied().fold(f64::INFINITY, f64::min),
            per_thread_median: median(pt),
            per_thread_max: pt.iter().copied().fold(f64::NEG_INFINITY, f64::max),
            kiops_lockstat: instrumented.map_or(f64::NAN, |r| r.kiops),
            consistent: plain.consistent && instrumented.is_none_or(|r| r.consistent),
            measured_s: plain.measured_s,
            sched_acq_per_req: s.0,
            sched_hold_per_req_ns: s.1,
            sched_hold_avg_ns: s.2,
            sched_occupancy: s.3,
            sched_contention_pct: s.4,
            sched_owner_change_frac: s.5,
            sched_wait_avg_ns: s.6,
            queue_acq_per_req: q.0,
            queue_hold_per_req_ns: q.1,
            queue_occupancy: q.3,
            queue_owner_change_frac: q.5,
            other_cpus: plain.other_cpus.unwrap_or(f64::NAN),
            reruns,
            round,
        }
    }

    /// The point as a CSV row (no newline), with the sweep's `settings` (in
    /// [`SETTINGS_COLUMNS`] order).
    pub fn csv_row(&self, settings: &[String]) -> String {
        let mut row = self.point_columns();
        for v in settings {
            row.push(',');
            row.push_str(v);
        }
        row
    }

    fn point_columns(&self) -> String {
        let f = |v: f64| if v.is_finite() { format!("{v:.4}") } else { String::new() };
        [
            self.variant.clone(),
            self.lock.name().to_string(),
            self.threads.to_string(),
            self.oversubscribed.to_string(),
            self.slots.to_string(),
            self.outside_ns.to_string(),
            f(self.kiops),
            f(self.per_thread_min),
            f(self.per_thread_median),
            f(self.per_thread_max),
            f(self.kiops_lockstat),
            self.consistent.to_string(),
            f(self.measured_s),
            f(self.sched_acq_per_req),
            f(self.sched_hold_per_req_ns),
            f(self.sched_hold_avg_ns),
            f(self.sched_occupancy),
            f(self.sched_contention_pct),
            f(self.sched_owner_change_frac),
            f(self.sched_wait_avg_ns),
            f(self.queue_acq_per_req),
            f(self.queue_hold_per_req_ns),
            f(self.queue_occupancy),
            f(self.queue_owner_change_frac),
            f(self.other_cpus),
            self.reruns.to_string(),
            self.round.to_string(),
        ]
        .join(",")
    }

    /// A point from the point columns of a row (the settings columns are checked apart).
    fn from_csv_row(c: &[&str]) -> Option<SweepPoint> {
        if c.len() < POINT_COLUMNS.split(',').count() {
            return None;
        }
        let f = |i: usize| -> f64 {
            if c[i].is_empty() {
                f64::NAN
            } else {
                c[i].parse().unwrap_or(f64::NAN)
            }
        };
        Some(SweepPoint {
            variant: schedlab_variants::info(c[0])?.name.to_string(),
            lock: LockKind::from_name(c[1])?,
            threads: c[2].parse().ok()?,
            oversubscribed: c[3].parse().ok()?,
            slots: c[4].parse().ok()?,
            outside_ns: c[5].parse().ok()?,
            kiops: f(6),
            per_thread_min: f(7),
            per_thread_median: f(8),
            per_thread_max: f(9),
            kiops_lockstat: f(10),
            consistent: c[11].parse().ok()?,
            measured_s: f(12),
            sched_acq_per_req: f(13),
            sched_hold_per_req_ns: f(14),
            sched_hold_avg_ns: f(15),
            sched_occupancy: f(16),
            sched_contention_pct: f(17),
            sched_owner_change_frac: f(18),
            sched_wait_avg_ns: f(19),
            queue_acq_per_req: f(20),
            queue_hold_per_req_ns: f(21),
            queue_occupancy: f(22),
            queue_owner_change_frac: f(23),
            other_cpus: f(24),
            reruns: c[25].parse().ok()?,
            round: c[26].parse().ok()?,
        })
    }
}

/// (acquisitions per request, hold per request ns, hold avg ns, occupancy, contention %, owner
/// change fraction, wait avg ns) of one lock.
fn lock_numbers(l: &LockSummary, requests: f64) -> (f64, f64, f64, f64, f64, f64, f64) {
    let acq = l.acquisitions as f64;
    (
        acq / requests,
        l.hold_ns.total as f64 / requests,
        l.hold_ns.avg,
        l.hold_occupancy.unwrap_or(f64::NAN),
        l.contention_pct,
        if acq > 0.0 { l.owner_changes as f64 / acq } else { 0.0 },
        l.wait_ns.avg,
    )
}

/// The points of an existing sweep CSV, checked for `--resume`.
#[derive(Debug)]
pub struct Resumed {
    pub points: Vec<SweepPoint>,
    /// The rows as they are in the file (without newline), to be written back unchanged.
    pub rows: Vec<String>,
    /// A last line without its newline (a sweep stopped while writing it), dropped.
    pub dropped_partial_line: bool,
}

/// Why a sweep CSV cannot be resumed from: one line, said after "cannot resume from FILE: ".
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum CsvRefusal {
    /// An earlier schedlab's CSV without the settings columns.
    NoSettingsColumns,
    /// An earlier schedlab's CSV without the round column.
    NoRoundColumn,
    /// Not a sweep CSV: its first line (at most 60 characters; `cut`: there was more).
    Foreign { first_line: String, cut: bool },
    /// A row of another number of columns.
    Columns { line: usize, found: usize, wanted: usize },
    /// A row that is not a point (an unknown variant or lock, a field that is not a number).
    NotAPoint { line: usize },
    /// A row measured with another value of a setting.
    OtherSetting { line: usize, name: &'static str, theirs: String, ours: String },
}

impl std::fmt::Display for CsvRefusal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let afresh = "start afresh without --resume, or give another --csv";
        match self {
            CsvRefusal::NoSettingsColumns => write!(
                f,
                "it was written by an earlier schedlab, without the settings columns: its \
                 settings cannot be checked ({afresh})"
            ),
            CsvRefusal::NoRoundColumn => write!(
                f,
                "it was written by an earlier schedlab, without the round column (one run per \
                 point): its rows cannot be placed in rounds ({afresh})"
            ),
            CsvRefusal::Foreign { first_line, cut } => {
                let more = if *cut { "..." } else { "" };
                write!(f, "it is not a schedlab sweep CSV (its first line is `{first_line}`{more})")
            }
            CsvRefusal::Columns { line, found, wanted } => write!(
                f,
                "line {line} has {found} columns, not {wanted}: the file is damaged or not a \
                 sweep CSV"
            ),
            CsvRefusal::NotAPoint { line } => write!(
                f,
                "line {line} is not a sweep point (unknown variant or lock, or a field that is \
                 not a number)"
            ),
            CsvRefusal::OtherSetting { line, name, theirs, ours } => write!(
                f,
                "line {line} was measured with {name} = {theirs}, this sweep has {name} = \
                 {ours}: give the same settings to resume, or another --csv"
            ),
        }
    }
}

impl std::error::Error for CsvRefusal {}

/// Reads a sweep CSV for `--resume`: the header must be this version's, every row a point whose
/// settings columns equal `settings` (named differences otherwise), and a half-written last line
/// (no newline) is dropped.
pub fn parse_csv(text: &str, settings: &[String]) -> Result<Resumed, CsvRefusal> {
    let mut resumed = Resumed { points: Vec::new(), rows: Vec::new(), dropped_partial_line: false };
    if text.is_empty() {
        return Ok(resumed);
    }
    let complete = match text.rfind('\n') {
        Some(end) => &text[..end + 1],
        None => "",
    };
    resumed.dropped_partial_line = complete.len() < text.len();
    let mut lines = complete.lines();
    let header = csv_header();
    let before_rounds = format!("{POINT_COLUMNS_BEFORE_ROUNDS},{}", SETTINGS_COLUMNS.join(","));
    match lines.next().map(|l| l.trim_end_matches('\r')) {
        Some(h) if h == header => {}
        Some(h) if h == LEGACY_HEADER => return Err(CsvRefusal::NoSettingsColumns),
        Some(h) if h == before_rounds => return Err(CsvRefusal::NoRoundColumn),
        Some(h) => {
            let first_line: String = h.chars().take(60).collect();
            return Err(CsvRefusal::Foreign { first_line, cut: h.chars().count() > 60 });
        }
        // Only a half-written header: nothing was measured.
        None => return Ok(resumed),
    }
    let point_columns = POINT_COLUMNS.split(',').count();
    let wanted = point_columns + SETTINGS_COLUMNS.len();
    for (i, row) in lines.enumerate() {
        let line = i + 2;
        let row = row.trim_end_matches('\r');
        if row.is_empty() {
            continue;
        }
        let c: Vec<&str> = row.split(',').collect();
        if c.len() != wanted {
            return Err(CsvRefusal::Columns { line, found: c.len(), wanted });
        }
        let point = SweepPoint::from_csv_row(&c).ok_or(CsvRefusal::NotAPoint { line })?;
        let columns = SETTINGS_COLUMNS.iter().zip(&c[point_columns..]);
        for ((&name, theirs), ours) in columns.zip(settings) {
            if theirs != ours {
                let (theirs, ours) = (theirs.to_string(), ours.clone());
                return Err(CsvRefusal::OtherSetting { line, name, theirs, ours });
            }
        }
        resumed.points.push(point);
        resumed.rows.push(row.to_string());
    }
    Ok(resumed)
}

/// The whole CSV text: header, then `rows` (each without its newline).
pub fn csv_text(rows: &[String]) -> String {
    let mut text = csv_header();
    text.push('\n');
    for r in rows {
        text.push_str(r);
        text.push('\n');
    }
    text
}

/// Measures the one-way latency of a cache-line transfer between the first two allowed CPUs
/// (`model::probes::transfer_ns`); `None` with a single CPU.
pub fn measure_transfer_ns(stop: &AtomicBool) -> Option<f64> {
    model::probes::transfer_ns(stop)
}

/// Where a sweep's points go: the CSV, rewritten (or, on a device or FIFO, appended to) as soon as
/// each point is measured, so that a stopped sweep keeps every finished point.
#[derive(Clone, Debug)]
pub struct CsvOutput {
    /// Checked before any work (`OutputFile::check`).
    pub file: OutputFile,
    /// Keep the points already in the file and measure only the missing ones (`--resume`): the
    /// file must be a regular one holding a sweep CSV of this version measured with the same
    /// settings ([`parse_csv`]).
    pub resume: bool,
}

/// The model drawn beside the points: `schedlab predict`'s simulation, calibrated
/// single-threaded after the sweep's runs.
#[derive(Clone, Debug, Serialize)]
pub struct ModelSettings {
    /// The machine simulated; `None`: this machine's measured profile with `cores` cores.
    pub topology: Option<Topology>,
    /// Cores of the default machine (a hypothetical machine of this one's cores).
    pub cores: usize,
    /// One-way cache-line transfer between cores, ns, instead of the machine's.
    pub transfer_ns: Option<f64>,
}

/// Everything a sweep measured and modelled.
#[derive(Clone, Debug, Serialize)]
pub struct SweepReport {
    pub provenance: Provenance,
    pub config: SweepConfig,
    /// Every point: those kept from the CSV (`resume`) first, then those measured now, in order.
    pub points: Vec<SweepPoint>,
    /// How many of `points` were kept from the CSV.
    pub kept: usize,
    /// Points whose run failed (the driver's one-line error); the sweep went on without them.
    pub failures: Vec<String>,
    /// The CSV could not be written (the sweep stopped at that point) or finished.
    pub csv_error: Option<String>,
    pub interrupted: bool,
    /// The machine the model simulated; `None` when there is no model (none asked, the sweep was
    /// stopped, or the calibration did not run).
    pub model_machine: Option<String>,
    pub models: Vec<SeriesModel>,
    /// The variant every ratio is taken against ([`reference_variant`]); `None` with one variant.
    pub reference: Option<String>,
    /// Each other variant ÷ the reference at each thread count ([`ratios`]).
    pub ratios: Vec<SweepRatio>,
}

impl SweepReport {
    /// The points measured by this sweep (not kept from the CSV).
    pub fn measured(&self) -> &[SweepPoint] {
        &self.points[self.kept..]
    }

    /// Whether every point passed the end-of-run checks.
    pub fn all_consistent(&self) -> bool {
        self.points.iter().all(|p| p.consistent)
    }
}

/// The CSV as it is written: a regular file rewritten whole (temporary file + rename) at each
/// point, or a device or FIFO written through, row by row.
enum CsvTarget {
    Replace(OutputFile),
    Through(Stream),
}

struct CsvWriter {
    target: CsvTarget,
    /// The rows written so far (kept ones included), for a rewrite of the whole file.
    rows: Vec<String>,
    settings: Vec<String>,
}

impl CsvWriter {
    /// Reads the points to keep (`resume`) and opens the output; a device or FIFO gets its header
    /// now. Before any work: every error is bad input.
    fn open(
        out: &CsvOutput,
        settings: Vec<String>,
        stop: &AtomicBool,
        observer: &mut dyn Observer,
    ) -> Result<(CsvWriter, Vec<SweepPoint>), ExperimentError> {
        let path = out.file.path();
        let mut kept = Vec::new();
        let mut rows = Vec::new();
        if out.resume {
            if !out.file.is_regular() {
                return Err(ExperimentError::bad_input(format!(
                    "--resume needs a regular file to read back, and {} is a device or FIFO",
                    path.display()
                )));
            }
            // A CSV not there yet is a sweep starting afresh; one that is is read with a cap.
            if path.exists() {
                let text = read_input(path, "sweep CSV", caps::CSV, stop)?;
                // A CSV up to its cap takes a second to parse: on a thread, a stop honoured
                // meanwhile.
                let wanted = settings.clone();
                let parse = move || parse_csv(&text, &wanted);
                let shown = path.display();
                let cannot = |e: &dyn std::fmt::Display| {
                    ExperimentError::bad_input(format!("cannot resume from {shown}: {e}"))
                };
                let resumed = match crate::files::stop::until_stopped("csv-parse", stop, parse) {
                    Ok(Some(parsed)) => parsed.map_err(|e| cannot(&e))?,
                    Ok(None) => {
                        let stopped = format!("stopped while reading {shown} back");
                        let nothing = format!("{stopped}: nothing measured");
                        return Err(ExperimentError::stopped(nothing));
                    }
                    Err(e) => return Err(cannot(&e)),
                };
                if resumed.dropped_partial_line {
                    let w = format!(
                        "{}: dropped a half-written last line (a sweep stopped while writing it)",
                        path.display()
                    );
                    observer.event(Event::Warning(&w));
                }
                kept = resumed.points;
                rows = resumed.rows;
            }
        }
        let target = if out.file.is_regular() {
            CsvTarget::Replace(out.file.clone())
        } else {
            let mut stream = out.file.stream().map_err(ExperimentError::bad_input)?;
            stream.append(csv_text(&[]).as_bytes()).map_err(ExperimentError::bad_input)?;
            CsvTarget::Through(stream)
        };
        Ok((CsvWriter { target, rows, settings }, kept))
    }

    fn record(&mut self, point: &SweepPoint) -> Result<(), OutputError> {
        let row = point.csv_row(&self.settings);
        match &mut self.target {
            CsvTarget::Replace(out) => {
                self.rows.push(row);
                out.write(csv_text(&self.rows).as_bytes())
            }
            CsvTarget::Through(stream) => stream.append(format!("{row}\n").as_bytes()),
        }
    }

    /// Finishes a device or FIFO written through (a regular file is whole after each point).
    fn finish(self) -> Result<(), OutputError> {
        match self.target {
            CsvTarget::Replace(_) => Ok(()),
            CsvTarget::Through(stream) => stream.commit(),
        }
    }
}

/// What the measuring of the points gave.
#[derive(Default)]
struct Measured {
    points: Vec<SweepPoint>,
    failures: Vec<String>,
    record_error: Option<OutputError>,
    interrupted: bool,
}

/// The observer's name of a point: "fair-spin sched-lock threads=2 slots=8 outside=0ns".
fn point_label(key: &PointKey) -> String {
    let PointKey { variant, lock, threads, slots, outside_ns, round } = key;
    let (lock, round) = (lock.name(), round + 1);
    format!("round {round} {lock} {variant} threads={threads} slots={slots} outside={outside_ns}ns")
}

/// Runs the sweep (the experiment shape of [`crate::experiment`]): the points of `cfg` not
/// already in its CSV (`resume`), each written to the CSV as soon as it is measured, then the
/// model's calibration and prediction. `stop` (a signal) ends it early, dropping the point in
/// progress and the model; a point whose run fails is told to the observer and skipped; a CSV
/// that cannot be written stops the measuring (`csv_error`). The errors are bad input, found
/// before any run.
pub fn run(
    cfg: &SweepConfig,
    stop: &AtomicBool,
    observer: &mut dyn Observer,
) -> Result<SweepReport, ExperimentError> {
    cfg.validate()?;
    let mut csv = None;
    let mut kept = Vec::new();
    if let Some(out) = &cfg.csv {
        let (writer, points) = CsvWriter::open(out, cfg.settings(), stop, observer)?;
        csv = Some(writer);
        kept = points;
    }
    let skip: Vec<PointKey> = kept.iter().map(|p| p.key()).collect();
    let keys: Vec<PointKey> = cfg.points().into_iter().filter(|k| !skip.contains(k)).collect();
    let per_point_s = cfg.estimated_seconds() / cfg.points().len().max(1) as f64;
    let calibration_s = if cfg.model.is_some() {
        (cfg.variants.len() * cfg.locks.len() * cfg.slots.len()) as f64
    } else {
        0.0
    };
    observer.event(Event::Planned {
        steps: keys.len(),
        estimated_s: per_point_s * keys.len() as f64 + calibration_s,
    });
    let others = other_runnable_threads();
    let max_threads = cfg.threads.iter().copied().max().unwrap_or(1);
    for &lock in &cfg.locks {
        if let Some(w) = fair_lock_warning_before(lock, max_threads, others) {
            observer.event(Event::Warning(&w));
        }
    }
    let measured = measure(cfg, &keys, stop, observer, &mut |point| {
        csv.as_mut().map_or(Ok(()), |c| c.record(point))
    });
    let mut csv_error = measured.record_error.map(|e| format!("{e} (the sweep stopped there)"));
    if let Some(Err(e)) = csv.map(CsvWriter::finish) {
        csv_error.get_or_insert(e.to_string());
    }
    let interrupted = measured.interrupted || stop.load(Ordering::Relaxed);
    let kept_count = kept.len();
    let mut points = kept;
    points.extend(measured.points);
    let (model_machine, models) = match &cfg.model {
        Some(settings) if !interrupted && !points.is_empty() => {
            model_points(cfg, settings, &points, keys.len(), stop, observer)
        }
        _ => (None, Vec::new()),
    };
    observer.event(Event::Finished);
    let reference = reference_variant(&cfg.variants);
    let ratios = reference.map_or_else(Vec::new, |r| ratios(&points, r));
    Ok(SweepReport {
        provenance: Provenance::collect(),
        config: cfg.clone(),
        points,
        kept: kept_count,
        failures: measured.failures,
        csv_error,
        interrupted,
        model_machine,
        models,
        reference: reference.map(String::from),
        ratios,
    })
}

/// Measures the points `keys` and hands each to `record` as soon as it is measured. Stops early,
/// dropping the point in progress, when `stop` is set or `record` fails; a point whose run fails
/// is told to the observer and skipped.
fn measure(
    cfg: &SweepConfig,
    keys: &[PointKey],
    stop: &AtomicBool,
    observer: &mut dyn Observer,
    record: &mut dyn FnMut(&SweepPoint) -> Result<(), OutputError>,
) -> Measured {
    lockstat::set_hold_sampling(LockClass::STATS_SUM, cfg.sum_sampling);
    let mut out = Measured::default();
    let mut rerun_budget =
        (keys.len() as u32 * if cfg.lockstat_duration.is_zero() { 1 } else { 2 }).div_ceil(2);
    for (done, key) in keys.iter().enumerate() {
        if stop.load(Ordering::Relaxed) {
            out.interrupted = true;
            break;
        }
        let label = point_label(key);
        observer.event(Event::Step { done, label: &label });
        let mut w = cfg.workload.clone();
        w.threads = key.threads;
        w.lock = key.lock;
        w.slots = key.slots;
        w.outside_ns = key.outside_ns;
        w.lockstat = false;
        let mut noise = NoiseCount::default();
        let measured =
            run_clean(&run_named, &key.variant, &w, stop, cfg.noise, &mut noise, &mut rerun_budget)
                .and_then(|plain| {
                    // The lock counters of a point are the first round's: its later rounds add
                    // spread to the KIOPS, which the ratios need, not to the counters.
                    if plain.interrupted || cfg.lockstat_duration.is_zero() || key.round > 0 {
                        return Ok((plain, None));
                    }
                    let mut wi = w.clone();
                    wi.lockstat = true;
                    wi.duration = cfg.lockstat_duration;
                    let r = run_clean(
                        &run_named,
                        &key.variant,
                        &wi,
                        stop,
                        cfg.noise,
                        &mut noise,
                        &mut rerun_budget,
                    )?;
                    Ok((plain, Some(r)))
                });
        let (plain, instrumented) = match measured {
            Ok(m) => m,
            Err(e) => {
                observer.event(Event::Failure(&format!(
                    "point {label} failed (the sweep goes on): {e}"
                )));
                out.failures.push(e.to_string());
                continue;
            }
        };
        if plain.interrupted || instrumented.as_ref().is_some_and(|r| r.interrupted) {
            out.interrupted = true;
            break;
        }
        let instrumented = instrumented.as_ref();
        let (cpus, reruns) = (cfg.cpus, noise.rerun);
        let point = SweepPoint::from_runs(&plain, instrumented, &w, cpus, reruns, key.round);
        if let Err(e) = record(&point) {
            out.record_error = Some(e);
            break;
        }
        let summary = format!("point done: {label}: {:.1} KIOPS", point.kiops);
        observer.event(Event::StepDone { done: done + 1, summary: &summary });
        out.points.push(point);
    }
    out
}

/// Calibrates the model (single-threaded, one set per slot count measured: about a second per
/// variant, lock kind and slot count) and predicts every series of `points` with it: the name of
/// the machine simulated and the series' models. A failed calibration is a warning: no model.
fn model_points(
    cfg: &SweepConfig,
    settings: &ModelSettings,
    points: &[SweepPoint],
    done: usize,
    stop: &AtomicBool,
    observer: &mut dyn Observer,
) -> (Option<String>, Vec<SeriesModel>) {
    let wanted = model::Wanted {
        variants: cfg.variants.clone(),
        locks: cfg.locks.clone(),
        inserts: vec![cfg.workload.insert],
    };
    let slot_counts: Vec<usize> =
        cfg.slots.iter().copied().filter(|s| points.iter().any(|p| p.slots == *s)).collect();
    let calibration =
        CalibrationSettings { windows: 3, rounds: 2000, ..CalibrationSettings::default() };
    let mut calibrations: Vec<(usize, CalibrationSet)> = Vec::new();
    for &slots in &slot_counts {
        let label = format!(
            "calibrating the model: slots={slots} ({} variant/lock entries, single-threaded)",
            wanted.entries().len()
        );
        observer.event(Event::Step { done, label: &label });
        let w = WorkloadConfig { slots, ..cfg.workload.clone() };
        match model::calibrate_all(&w, &wanted, &calibration, stop, &mut |_| {}) {
            Ok(set) => calibrations.push((slots, set)),
            Err(e) => {
                if !stop.load(Ordering::Relaxed) {
                    observer.event(Event::Warning(&format!(
                        "the model's calibration failed ({e}): no model"
                    )));
                }
                break;
            }
        }
    }
    let mut topo = match (&settings.topology, calibrations.first()) {
        (Some(t), _) => t.clone(),
        (None, Some((_, set))) => {
            let mut t = set.machine.clone();
            t.name = format!(
                "{} cores like this machine's ({:.0} ns line transfer; hypothetical beyond {})",
                settings.cores,
                t.transfer.core_ns,
                set.machine.cpus()
            );
            t.cores = settings.cores;
            t.threads_per_core = 1;
            t.smt.busy_slowdown = 1.0;
            t.smt.spin_slowdown = 1.0;
            t
        }
        (None, None) => return (None, Vec::new()),
    };
    if let Some(x) = settings.transfer_ns {
        topo.transfer.core_ns = x;
        topo.transfer.sibling_ns = topo.transfer.sibling_ns.min(x);
    }
    let models = models_until(
        points,
        &calibrations,
        cfg.workload.insert,
        cfg.workload.inject,
        &topo,
        cfg.workload.seed,
        stop,
    );
    (Some(topo.name), models)
}

// ---------------------------------------------------------------------------------------------
// The model.

/// The points of one variant under one configuration, and what the model makes of them: the
/// prediction of `schedlab predict` (a simulation calibrated on single-threaded runs, never on
/// these points) and, where enough thread counts were measured, a USL fit.
#[derive(Clone, Debug, Serialize)]
pub struct SeriesModel {
    pub variant: String,
    pub lock: LockKind,
    pub slots: usize,
    pub outside_ns: u64,
    /// KIOPS at 1 thread (plain), NaN if not measured.
    pub x1: f64,
    /// The machine simulated.
    pub topology: String,
    /// (threads, predicted KIOPS), ascending.
    pub predicted: Vec<(usize, f64)>,
    /// The largest |predicted − measured| ÷ measured over the measured (not oversubscribed)
    /// thread counts, %: the model's validation error on this sweep (measured: the median over
    /// rounds at each thread count).
    pub error_pct: Option<f64>,
    /// The 95 % bootstrap interval of `error_pct` over rounds (whole rounds resampled, the same
    /// statistic of each resample; [`model_error_interval`]).
    pub error_interval_pct: Option<Interval>,
    /// Why `error_interval_pct` is null ("no interval: fewer than 6 rounds").
    pub no_interval: Option<String>,
    /// (threads, model KIOPS) at 8, 16, 64 (those the machine has).
    pub at: Vec<(usize, f64)>,
    /// USL (σ, κ), fitted only with enough measured thread counts.
    pub usl: Option<(f64, f64)>,
    /// Distinct thread counts measured without oversubscription.
    pub measured_thread_counts: usize,
}

impl SeriesModel {
    /// The prediction at `n` threads: the simulated value at a simulated count, straight lines
    /// (in log n) between; NaN outside the simulated range.
    pub fn model(&self, n: f64) -> f64 {
        let p = &self.predicted;
        if p.is_empty() || n < p[0].0 as f64 || n > p[p.len() - 1].0 as f64 {
            return f64::NAN;
        }
        for w in p.windows(2) {
            let ((a, ya), (b, yb)) = (w[0], w[1]);
            if n <= b as f64 {
                if a == b {
                    return yb;
                }
                let f = ((n.ln() - (a as f64).ln()) / ((b as f64).ln() - (a as f64).ln()))
                    .clamp(0.0, 1.0);
                return ya + (yb - ya) * f;
            }
        }
        p[p.len() - 1].1
    }

    pub fn usl_at(&self, n: f64) -> Option<f64> {
        self.usl.map(|(s, k)| self.x1 * n / (1.0 + s * (n - 1.0) + k * n * (n - 1.0)))
    }
}

/// Thread counts the model is simulated at on a machine of `cpus` logical CPUs.
pub fn model_threads(cpus: usize) -> Vec<usize> {
    let mut v: Vec<usize> = (1..=cpus.min(16)).collect();
    for n in [24, 32, 48, 64] {
        if n <= cpus {
            v.push(n);
        }
    }
    v
}

/// The model of every series whose variant, lock kind and slot count has a calibration in
/// `calibrations` (one set per slot count), simulated on `topo` with `seed`, giving way to
/// `stop` (a series stopped has no model).
pub fn models_until(
    points: &[SweepPoint],
    calibrations: &[(usize, CalibrationSet)],
    insert: InsertPathKind,
    inject: schedlab_core::Inject,
    topo: &Topology,
    seed: u64,
    stop: &AtomicBool,
) -> Vec<SeriesModel> {
    let mut out: Vec<SeriesModel> = Vec::new();
    let threads = model_threads(topo.cpus());
    for p in points {
        let same = |q: &SweepPoint| {
            q.variant == p.variant
                && q.lock == p.lock
                && q.slots == p.slots
                && q.outside_ns == p.outside_ns
        };
        if out.iter().any(|m| {
            m.variant == p.variant
                && m.lock == p.lock
                && m.slots == p.slots
                && m.outside_ns == p.outside_ns
        }) {
            continue;
        }
        let Some(cal) = calibrations
            .iter()
            .find(|(s, _)| *s == p.slots)
            .and_then(|(_, set)| set.find(&p.variant, p.lock, insert))
        else {
            continue;
        };
        let settings =
            model::PredictSettings { outside_ns: p.outside_ns, seed, inject, ..Default::default() };
        let Ok(pred) = model::predict_until(cal, topo, &threads, settings, stop) else {
            continue;
        };
        let predicted: Vec<(usize, f64)> =
            pred.iter().map(|q| (q.result.threads, q.result.kiops)).collect();
        let series: Vec<&SweepPoint> =
            points.iter().filter(|q| same(q) && !q.oversubscribed).collect();
        let mut measured_threads: Vec<usize> = series.iter().map(|q| q.threads).collect();
        measured_threads.sort_unstable();
        measured_threads.dedup();
        let at_threads = |t: usize| {
            median(&series.iter().filter(|q| q.threads == t).map(|q| q.kiops).collect::<Vec<_>>())
        };
        let x1 = if measured_threads.contains(&1) { at_threads(1) } else { f64::NAN };
        let error_pct = measured_threads
            .iter()
            .filter_map(|&t| {
                let m = at_threads(t);
                let e =
                    predicted.iter().find(|(n, _)| *n == t).map(|(_, v)| 100.0 * (v - m).abs() / m);
                e.filter(|e| e.is_finite())
            })
            .reduce(f64::max);
        let error_interval = model_error_interval(&series, &predicted);
        let usl = (measured_threads.len() >= USL_MIN_POINTS && x1.is_finite())
            .then(|| {
                fit_usl(
                    &measured_threads
                        .iter()
                        .map(|&t| (t as f64, at_threads(t)))
                        .collect::<Vec<_>>(),
                    x1,
                )
            })
            .flatten();
        let at = MODEL_AT
            .iter()
            .filter_map(|&n| predicted.iter().find(|(t, _)| *t == n).copied())
            .collect();
        out.push(SeriesModel {
            variant: p.variant.clone(),
            lock: p.lock,
            slots: p.slots,
            outside_ns: p.outside_ns,
            x1,
            topology: topo.name.clone(),
            predicted,
            error_pct,
            error_interval_pct: error_interval.as_ref().ok().copied(),
            no_interval: error_interval.err().map(|why| why.to_string()),
            at,
            usl,
            measured_thread_counts: measured_threads.len(),
        });
    }
    out
}

/// The largest |predicted − measured| ÷ measured, %, over the thread counts of `series` (one
/// variant's points, not oversubscribed, of every round), where measured at a thread count is
/// the median of its points in `rounds` (indices into the rounds the series has, repeats
/// counting again); NaN when no thread count has both figures.
fn largest_error(
    series: &[&SweepPoint],
    predicted: &[(usize, f64)],
    rounds: &[usize],
    drawn: &[usize],
) -> f64 {
    let mut threads: Vec<usize> = series.iter().map(|p| p.threads).collect();
    threads.sort_unstable();
    threads.dedup();
    threads
        .iter()
        .filter_map(|&t| {
            let at = |i: &usize| series.iter().find(|p| p.threads == t && p.round == rounds[*i]);
            let kiops: Vec<f64> = drawn.iter().filter_map(at).map(|p| p.kiops).collect();
            let m = median(&kiops);
            let e = predicted.iter().find(|(n, _)| *n == t).map(|(_, v)| 100.0 * (v - m).abs() / m);
            e.filter(|e| e.is_finite())
        })
        .reduce(f64::max)
        .unwrap_or(f64::NAN)
}

/// The 95 % interval of a series' model error over its rounds: whole rounds resampled (every
/// thread count of a round together), the largest error of each resample ([`largest_error`]).
pub fn model_error_interval(
    series: &[&SweepPoint],
    predicted: &[(usize, f64)],
) -> Result<Interval, NoInterval> {
    let mut rounds: Vec<usize> = series.iter().map(|p| p.round).collect();
    rounds.sort_unstable();
    rounds.dedup();
    bootstrap_rounds(rounds.len(), |drawn| largest_error(series, predicted, &rounds, drawn))
        .ok_or(NoInterval::FewRounds)
}

// ---------------------------------------------------------------------------------------------
// The ratios.

/// The variant the ratios are taken against: `sched-lock` (the seeds' denominator) when swept,
/// else the first listed; `None` with fewer than two variants.
pub fn reference_variant<'a>(variants: &[&'a str]) -> Option<&'a str> {
    if variants.len() < 2 {
        return None;
    }
    Some(variants.iter().copied().find(|v| *v == "sched-lock").unwrap_or(variants[0]))
}

/// One variant against the reference at one configuration and thread count.
#[derive(Clone, Debug, Serialize)]
pub struct SweepRatio {
    pub variant: String,
    /// The denominator ([`SweepReport::reference`]).
    pub reference: String,
    pub lock: LockKind,
    pub slots: usize,
    pub outside_ns: u64,
    pub threads: usize,
    /// Per round, the variant's KIOPS ÷ the reference's in the same round (median, min, max over
    /// the rounds where both completed requests); `null` when no round has both.
    pub ratio: Option<Spread>,
    /// The 95 % bootstrap interval of the ratio's median over rounds
    /// ([`crate::stats::ratio_interval`]).
    pub interval: Option<Interval>,
    /// Why `interval` is null ("no interval: fewer than 6 rounds").
    pub no_interval: Option<String>,
}

/// Every variant but `reference` ÷ `reference`, per lock kind, slot count, outside work and
/// thread count (not oversubscribed: those measure the OS scheduler), paired within rounds.
pub fn ratios(points: &[SweepPoint], reference: &str) -> Vec<SweepRatio> {
    let mut out: Vec<SweepRatio> = Vec::new();
    for p in points.iter().filter(|p| p.variant != reference && !p.oversubscribed) {
        let at = (p.lock, p.slots, p.outside_ns, p.threads);
        let same = |q: &SweepPoint| (q.lock, q.slots, q.outside_ns, q.threads) == at;
        let done = |r: &SweepRatio| (r.lock, r.slots, r.outside_ns, r.threads) == at;
        if out.iter().any(|r| r.variant == p.variant && done(r)) {
            continue;
        }
        let mut per_round: Vec<f64> = Vec::new();
        for q in points.iter().filter(|q| q.variant == p.variant && same(q)) {
            let mut at_same = points.iter().filter(|b| same(b));
            let base = at_same.find(|b| b.variant == reference && b.round == q.round);
            if let Some(b) = base.filter(|b| b.kiops > 0.0 && q.kiops.is_finite()) {
                per_round.push(q.kiops / b.kiops);
            }
        }
        let ratio = (!per_round.is_empty()).then(|| Spread::of(per_round));
        let neither = || Err(NoInterval::NoPairedRound("measured both"));
        let interval = ratio.as_ref().map_or_else(neither, ratio_interval);
        out.push(SweepRatio {
            variant: p.variant.clone(),
            reference: reference.to_string(),
            lock: p.lock,
            slots: p.slots,
            outside_ns: p.outside_ns,
            threads: p.threads,
            ratio,
            interval: interval.as_ref().ok().copied(),
            no_interval: interval.err().map(|why| why.to_string()),
        });
    }
    out
}

// ---------------------------------------------------------------------------------------------
// The chart.

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::experiment::observer::{Recorder, Silent};
    use crate::experiment::testing::assert_refused_before_any_work;

    pub(crate) fn point(variant: &str, threads: usize, kiops: f64) -> SweepPoint {
        SweepPoint {
            variant: variant.into(),
            lock: LockKind::FairSpin,
            threads,
            oversubscribed: false,
            slots: 8,
            outside_ns: 0,
            kiops,
            per_thread_min: kiops / threads as f64,
            per_thread_median: kiops / threads as f64,
            per_thread_max: kiops / threads as f64,
            kiops_lockstat: f64::NAN,
            consistent: true,
            measured_s: 1.0,
            sched_acq_per_req: 3.0,
            sched_hold_per_req_ns: 600.0,
            sched_hold_avg_ns: 200.0,
            sched_occupancy: 0.5,
            sched_contention_pct: 10.0,
            sched_owner_change_frac: 0.8,
            sched_wait_avg_ns: 300.0,
            queue_acq_per_req: 0.0,
            queue_hold_per_req_ns: 0.0,
            queue_occupancy: 0.0,
            queue_owner_change_frac: 0.0,
            other_cpus: 0.0,
            reruns: 0,
            round: 0,
        }
    }

    /// A sweep of one short point per variant, one thread, no instrumented run, no CSV, no model.
    fn small(variants: Vec<&'static str>) -> SweepConfig {
        SweepConfig {
            workload: WorkloadConfig {
                duration: Duration::from_millis(30),
                ramp: Duration::ZERO,
                ..WorkloadConfig::default()
            },
            threads: vec![1],
            rounds: 1,
            cpus: 2,
            variants,
            locks: vec![LockKind::FairSpin],
            slots: vec![8],
            outside_ns: vec![0],
            lockstat_duration: Duration::ZERO,
            sum_sampling: 16,
            noise: NoisePolicy { max_other_cpus: 1e9, retries: 0 },
            csv: None,
            model: None,
        }
    }

    fn settings() -> Vec<String> {
        let cfg = SweepConfig {
            threads: vec![1, 2],
            variants: vec!["sched-lock"],
            lockstat_duration: Duration::from_secs(1),
            ..small(Vec::new())
        };
        cfg.settings()
    }

    #[test]
    fn a_bad_configuration_is_refused_before_any_point() {
        let base = small(vec!["no-stats"]);
        let csv_on_a_device = CsvOutput {
            file: OutputFile::check(std::path::Path::new("/dev/null")).unwrap(),
            resume: true,
        };
        let bad = [
            small(Vec::new()),
            SweepConfig { threads: Vec::new(), ..base.clone() },
            SweepConfig { slots: Vec::new(), ..base.clone() },
            SweepConfig { locks: Vec::new(), ..base.clone() },
            small(vec!["nonsense"]),
            SweepConfig { csv: Some(csv_on_a_device), ..base.clone() },
        ];
        assert_refused_before_any_work(&bad, |cfg, observer| {
            run(cfg, &AtomicBool::new(false), observer)
        });
    }

    #[test]
    fn a_sweep_measures_its_points_and_a_resumed_one_only_the_missing_ones() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("s.csv");
        let csv = |resume| Some(CsvOutput { file: OutputFile::check(&path).unwrap(), resume });
        let first = SweepConfig { csv: csv(false), ..small(vec!["no-stats"]) };
        let mut recorder = Recorder::default();
        let report = run(&first, &AtomicBool::new(false), &mut recorder).unwrap();
        assert_eq!(
            (report.points.len(), report.kept, recorder.steps, recorder.steps_done),
            (1, 0, 1, 1)
        );
        assert!(
            report.all_consistent()
                && report.failures.is_empty()
                && report.csv_error.is_none()
                && !report.interrupted
        );
        assert!(report.model_machine.is_none() && report.models.is_empty(), "no model asked");
        let second = SweepConfig { csv: csv(true), ..small(vec!["no-stats", "sched-lock"]) };
        let mut recorder = Recorder::default();
        let report = run(&second, &AtomicBool::new(false), &mut recorder).unwrap();
        assert_eq!(
            (report.points.len(), report.kept, recorder.steps),
            (2, 1, 1),
            "only sched-lock measured"
        );
        assert_eq!(report.measured()[0].variant, "sched-lock");
        let back = parse_csv(&std::fs::read_to_string(&path).unwrap(), &second.settings()).unwrap();
        assert_eq!(
            back.points.iter().map(|p| p.variant.as_str()).collect::<Vec<_>>(),
            ["no-stats", "sched-lock"]
        );
        // Stopped before the first point: nothing measured, marked interrupted.
        let report = run(&small(vec!["no-stats"]), &AtomicBool::new(true), &mut Silent).unwrap();
        assert!(report.interrupted && report.points.is_empty());
    }

    #[test]
    fn csv_rows_round_trip_with_their_settings() {
        let s = settings();
        let a = point("sched-lock", 1, 800.0);
        let b = point("epoch", 2, 1200.5);
        let text = csv_text(&[a.csv_row(&s), b.csv_row(&s)]);
        assert_eq!(text.lines().next().unwrap(), csv_header());
        let back = parse_csv(&text, &s).unwrap();
        assert!(!back.dropped_partial_line);
        assert_eq!(back.points.len(), 2);
        assert_eq!(back.points[0].key(), a.key());
        assert_eq!(back.points[1].variant, "epoch");
        assert!((back.points[1].kiops - 1200.5).abs() < 1e-3);
        assert!(back.points[0].kiops_lockstat.is_nan());
        // Written back unchanged.
        assert_eq!(csv_text(&back.rows), text);
    }

    #[test]
    fn resume_drops_a_half_written_last_line() {
        let s = settings();
        let full = csv_text(&[
            point("sched-lock", 1, 800.0).csv_row(&s),
            point("sched-lock", 2, 900.0).csv_row(&s),
        ]);
        // Cut inside the last row: what a sweep killed while writing leaves.
        let cut = &full[..full.len() - 7];
        let back = parse_csv(cut, &s).unwrap();
        assert!(back.dropped_partial_line);
        assert_eq!(back.points.len(), 1);
        assert_eq!(back.points[0].threads, 1);
        // Cut inside the header: nothing to keep, nothing refused.
        let back = parse_csv(&full[..10], &s).unwrap();
        assert!(back.points.is_empty() && back.dropped_partial_line);
    }

    #[test]
    fn resume_refuses_foreign_damaged_and_differently_measured_files() {
        let s = settings();
        let e = parse_csv("name,age\nbob,3\n", &s).unwrap_err().to_string();
        assert!(e.contains("not a schedlab sweep CSV") && e.contains("name,age"), "{e}");
        let e = parse_csv(&format!("{LEGACY_HEADER}\n"), &s).unwrap_err().to_string();
        assert!(e.contains("earlier schedlab"), "{e}");
        let said = "it was written by an earlier schedlab, without the settings columns: its \
                    settings cannot be checked (start afresh without --resume, or give another \
                    --csv)";
        assert_eq!(e, said, "the same one line as before the refusal was typed");
        let good = point("sched-lock", 1, 800.0).csv_row(&s);
        let rows = [good.clone(), "garbage".into()];
        let e = parse_csv(&csv_text(&rows), &s).unwrap_err().to_string();
        assert!(e.contains("line 3"), "{e}");
        // Two rows glued together (an append after a half-written line).
        let glued = format!("{}{}", &good[..20], good);
        let e = parse_csv(&csv_text(&[glued]), &s).unwrap_err().to_string();
        assert!(e.contains("line 2"), "{e}");
        let mut other = s.clone();
        other[0] = "8".into(); // groups
        let row = point("sched-lock", 1, 800.0).csv_row(&other);
        let e = parse_csv(&csv_text(&[row]), &s).unwrap_err().to_string();
        assert!(e.contains("groups = 8") && e.contains("groups = 4"), "{e}");
    }

    /// The model of each series of `points` from [`calibrations`] of sched-lock, inserted
    /// directly with nothing injected, on [`topology`] of 64 cores, seed 1: the model the tests
    /// of the sweep and of its chart hold their points against.
    pub(crate) fn sched_lock_models(points: &[SweepPoint]) -> Vec<SeriesModel> {
        let cal = calibrations("sched-lock");
        let none = schedlab_core::Inject::NONE;
        let never = AtomicBool::new(false);
        models_until(points, &cal, InsertPathKind::Direct, none, &topology(64), 1, &never)
    }

    /// A calibration set with `variant` on the fair lock: 250 ns held, 250 ns outside per request.
    pub(crate) fn calibrations(variant: &str) -> Vec<(usize, CalibrationSet)> {
        use crate::model::calibrate::{Calibration, OneHold};
        let hold = OneHold { ns: 250.0, lines: 0.0, empty_ns: 0.0 };
        let mut cal = Calibration::one_lock(LockKind::FairSpin, hold, 250.0);
        cal.variant = variant.into();
        cal.relayed = false;
        let machine = crate::model::topology::measure_here(Some(0.0), &AtomicBool::new(false));
        vec![(
            8,
            CalibrationSet {
                provenance: serde_json::json!({}),
                machine,
                workload: serde_json::json!({}),
                calibrations: vec![cal],
            },
        )]
    }

    pub(crate) fn topology(cores: usize) -> Topology {
        use crate::model::topology::Parking;
        let parking = Parking {
            pause_ns: 5.0,
            yield_ns: 100.0,
            wake_latency_ns: 1000.0,
            unpark_cost_ns: 500.0,
        };
        Topology { parking, ..Topology::textbook(cores, 0.0) }
    }

    #[test]
    fn the_model_is_the_prediction_with_its_error_against_the_sweep() {
        // Measured 1800 and 3600 KIOPS; the model says 2000 (one job: 500 ns) and 4000 (the lock's
        // 250 ns), so its error here is 11 %.
        let pts = vec![
            point("sched-lock", 1, 1800.0),
            point("sched-lock", 2, 3600.0),
            point("epoch", 1, 900.0),
        ];
        let ms = sched_lock_models(&pts);
        assert_eq!(ms.len(), 1, "epoch has no calibration: no model");
        let m = &ms[0];
        assert!((m.model(1.0) - 2000.0).abs() < 2.0, "{}", m.model(1.0));
        assert!((m.model(2.0) - 4000.0).abs() < 80.0, "{}", m.model(2.0));
        assert!((m.model(64.0) - 4000.0).abs() < 120.0, "saturated: {}", m.model(64.0));
        let e = m.error_pct.unwrap();
        assert!((e - 11.1).abs() < 2.5, "{e}");
        assert_eq!(m.at.iter().map(|(n, _)| *n).collect::<Vec<_>>(), vec![8, 16, 64]);
        assert!(m.usl.is_none(), "two thread counts must not fit a USL");
        assert!(m.model(65.0).is_nan(), "nothing beyond the machine");
    }

    #[test]
    fn usl_fit_recovers_known_parameters() {
        let (s, k) = (0.05, 0.002);
        let x1 = 100.0;
        let pts: Vec<(f64, f64)> = [1.0, 2.0, 4.0, 8.0, 16.0]
            .iter()
            .map(|&n| (n, x1 * n / (1.0 + s * (n - 1.0) + k * n * (n - 1.0))))
            .collect();
        let (fs, fk) = fit_usl(&pts, x1).unwrap();
        assert!((fs - s).abs() < 1e-6 && (fk - k).abs() < 1e-6, "{fs} {fk}");
    }

    /// `variant`'s point at `threads` in `round`.
    fn in_round(variant: &str, threads: usize, kiops: f64, round: usize) -> SweepPoint {
        SweepPoint { round, ..point(variant, threads, kiops) }
    }

    #[test]
    fn a_ratio_is_paired_within_rounds_with_an_interval_over_them() {
        // The machine's speed drifts 4x over six rounds; epoch is 1.2x sched-lock in each.
        let speeds = [100.0, 400.0, 200.0, 300.0, 250.0, 150.0];
        let mut pts = Vec::new();
        for (round, s) in speeds.iter().enumerate() {
            pts.push(in_round("sched-lock", 2, *s, round));
            pts.push(in_round("epoch", 2, 1.2 * s, round));
        }
        // At 1 thread epoch is half of sched-lock: each ratio pairs points of its thread count.
        for (round, s) in speeds.iter().enumerate() {
            pts.push(in_round("sched-lock", 1, 3.0 * s, round));
            pts.push(in_round("epoch", 1, 1.5 * s, round));
        }
        let r = ratios(&pts, "sched-lock");
        assert_eq!(r.len(), 2);
        assert_eq!((r[1].threads, r[1].ratio.as_ref().map(|s| s.median)), (1, Some(0.5)));
        let ratio = r[0].ratio.as_ref().unwrap();
        assert!((ratio.median - 1.2).abs() < 1e-9 && ratio.runs.len() == 6);
        let i = r[0].interval.expect("six rounds");
        assert!((i.lo - 1.2).abs() < 1e-9 && (i.hi - 1.2).abs() < 1e-9, "paired: no spread, {i:?}");
        assert_eq!(r[0].no_interval, None);
        // Five rounds: the ratio, no interval, and why.
        let first_five = |p: &&SweepPoint| p.round < 5 && p.threads == 2;
        let five: Vec<SweepPoint> = pts.iter().filter(first_five).cloned().collect();
        let r = ratios(&five, "sched-lock");
        assert!(r[0].ratio.is_some() && r[0].interval.is_none());
        assert_eq!(r[0].no_interval.as_deref(), Some("no interval: fewer than 6 rounds"));
        let json = serde_json::to_value(&r[0]).unwrap();
        assert!(json["interval"].is_null() && json["no_interval"].is_string(), "{json}");
        assert_eq!(reference_variant(&["epoch", "sched-lock"]), Some("sched-lock"));
        assert_eq!(reference_variant(&["epoch", "no-stats"]), Some("epoch"));
        assert_eq!(reference_variant(&["epoch"]), None);
    }

    #[test]
    fn the_models_error_has_an_interval_over_rounds() {
        // The model says 2000 and ~4000 KIOPS; the rounds measure around 1800 and 3600.
        let mut pts = Vec::new();
        for (round, f) in [1.0, 0.95, 1.05, 0.9, 1.1, 0.97].iter().enumerate() {
            pts.push(in_round("sched-lock", 1, 1800.0 * f, round));
            pts.push(in_round("sched-lock", 2, 3600.0 * f, round));
        }
        let model_of = |pts: &[SweepPoint]| sched_lock_models(pts).remove(0);
        let m = &model_of(&pts);
        let e = m.error_pct.unwrap();
        let i = m.error_interval_pct.expect("six rounds");
        assert!(i.lo <= e && e <= i.hi && i.hi > i.lo, "{e} {i:?}");
        assert_eq!(m.no_interval, None);
        let few: Vec<SweepPoint> = pts.iter().filter(|p| p.round < 5).cloned().collect();
        let m = model_of(&few);
        assert_eq!(m.error_interval_pct, None);
        assert_eq!(m.no_interval.as_deref(), Some("no interval: fewer than 6 rounds"));
    }

    #[test]
    fn the_rounds_interleave_every_point_and_rotate_the_variants() {
        let two = small(vec!["sched-lock", "epoch"]);
        let cfg = SweepConfig { rounds: 3, threads: vec![1, 2], ..two };
        let keys = cfg.points();
        assert_eq!(keys.len(), 12);
        assert_eq!(keys.iter().filter(|k| k.round == 2).count(), 4);
        let firsts = (keys[0].variant.as_str(), keys[4].variant.as_str());
        assert_eq!(firsts, ("sched-lock", "epoch"), "round 2 starts with the next variant");
        assert!(SweepConfig { rounds: 0, ..cfg.clone() }.validate().is_err());
    }
}
