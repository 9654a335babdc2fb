//! `schedlab compare`: every variant side by side, interleaved round by round, with the lock
//! counters that explain the throughput and the seeds' ratios beside the measured ones.
//!
//! One *round* runs every variant once for every lock kind asked, in an order rotated by one each
//! round (so that no variant always runs first, right after a build or a previous run heated the
//! caches). Ratios between variants are taken *within* a round and then summarised (median, min,
//! max), because this machine kind is shared and noisy (`../shared/reference/measuring.md` §2).
//!
//! Every ratio carries a 95 % bootstrap interval over rounds ([`ratio_interval`]), and its
//! verdicts are taken on that interval: a goal is met only when the whole interval clears it,
//! missed when the whole interval is below it, inconclusive when it straddles
//! ([`judge_goal`]); a seed's range is inside, outside or overlapping ([`judge_range`]).
//!
//! The run measures its own noise floor: the reference variant ([`AA_REFERENCE`], the
//! denominator of the seeds' ratios) runs twice in each round, the second copy
//! ([`AA_LABEL`]) interleaved like any variant; the ratio of the two copies, with its interval,
//! is the floor ([`NoiseFloor`]), and a floor whose interval excludes 1 marks the run unreliable
//! ([`unreliable_floor`]). `--no-aa` leaves the copy out.
//!
//! Each variant is measured in one of three ways per round ([`Measure`]):
//! - *lockstat* (the default, one run): [`schedlab_core::lockstat`] is switched on and off in
//!   alternating windows of 100 ms of the same run; the KIOPS are the run's, the lock counters
//!   come from its on windows, and the statistics' cost from on against off windows, pair by pair
//!   (so the cost is measured under the very load the counters describe). The cost column says
//!   how far the counted system is from the one whose throughput is reported (what it has
//!   measured: notes/results/2026-12-01-lockstat-cost.md, "What stands");
//! - *both* (two runs): a plain run gives the KIOPS, a separate instrumented run the counters, and
//!   the two runs' KIOPS the cost;
//! - *plain*: KIOPS only.
//!
//! How many rounds: exactly `rounds`, or with a [`Precision`] (`--precision`, and by default
//! when `--rounds` is not given) `rounds` at least and then more, until every ratio's interval is
//! within the target or the time limit comes ([`precision`]). What the statistics cost carries
//! its own interval and "at most 5 %" verdict ([`cost`]). With a [`Baseline`] (`--baseline
//! old.json`), every ratio is compared with an earlier comparison's ([`baseline`]); with a
//! [`BuildPair`] (`--baseline EXE`), every round runs each entry with this build and with the
//! old one, both as child processes, and each ratio's change is taken within rounds
//! ([`builds`]).
//!
//! The JSON written by the CLI is documented in `notes/compare-schema.md`.

pub mod baseline;
pub mod builds;
mod cells;
pub mod cost;
pub mod placement;
pub mod precision;

pub use baseline::{Baseline, BaselineComparison, ChangeVerdict};
pub use builds::{BuildComparison, BuildPair, Side};
use cells::{entry_index, paired, Cell};
pub use cells::{Measure, AA_LABEL, AA_REFERENCE, SCHEMA_VERSION};
pub use cost::{CostVerdict, LockstatCost};
pub use placement::PlacementRule;
pub use precision::{Precision, StopReason};

use crate::driver::host::other_runnable_threads;
use crate::driver::workload::{fair_lock_warning_before, run_named, RunResult, WorkloadConfig};
use crate::error::ExperimentError;
use crate::experiment::observer::{Event, Observer};
use crate::files::provenance::Provenance;
use schedlab_core::lockstat::{self, LockClass, LockStats, LockSummary};
use schedlab_core::sync::AtomicBool;
use schedlab_core::LockKind;
use serde::Serialize;
use std::fmt;
use std::time::{Duration, Instant};

/// What to compare.
#[derive(Clone, Debug, Serialize)]
pub struct CompareConfig {
    /// The workload of every run (its `lock`, `lockstat` and, for instrumented runs, `duration`
    /// are set per run).
    pub workload: WorkloadConfig,
    pub variants: Vec<&'static str>,
    pub locks: Vec<LockKind>,
    pub rounds: usize,
    pub measure: Measure,
    /// Measured window of the instrumented runs when `measure` is `Both`.
    pub lockstat_duration: Duration,
    /// With `Lockstat`: the length of each on and off window.
    pub lockstat_window: Duration,
    /// How holds are timed in instrumented runs.
    pub lockstat_mode: lockstat::Mode,
    /// Hold-time sampling period of the counter-sum locks (see `lockstat::set_hold_sampling`).
    pub sum_sampling: u32,
    pub noise: NoisePolicy,
    /// Run [`AA_REFERENCE`] a second time in each round (the A/A pair) for the run's noise
    /// floor; only when it is among `variants`. `--no-aa` turns it off.
    pub aa: bool,
    /// Run more rounds than `rounds` (the fewest, then) until every ratio is this precise, or
    /// until its time limit; `None`: exactly `rounds`.
    pub precision: Option<Precision>,
    /// An earlier comparison to compare every ratio with (not in the JSON's `config`: the
    /// report's `baseline` names it).
    #[serde(skip)]
    pub baseline: Option<Baseline>,
    /// An old build to interleave with this one (`--baseline EXE`): then every run is a child
    /// process of one of the two, and the measure is plain (not in the JSON's `config`: the
    /// report's `builds` names them).
    #[serde(skip)]
    pub builds: Option<BuildPair>,
    /// What is done with the rounds whose CPUs the probes place (`compare::placement`).
    pub placement: PlacementRule,
}

impl CompareConfig {
    /// The defaults of `schedlab compare` (and of plain `cargo run --release`): every safe
    /// variant, all cores, one 1 s run each per round (statistics on and off in 100 ms windows),
    /// sched-lock's A/A copy, the fair lock; [`precision::MIN_ROUNDS`] rounds at least (6, the
    /// fewest with a 95 % interval), then rounds until every ratio is
    /// within ±3 % or a minute has passed ([`precision::DEFAULT`]). 30 to 60 s on 2 CPUs.
    pub fn defaults() -> Self {
        let cpus = std::thread::available_parallelism().map_or(2, |n| n.get());
        CompareConfig {
            workload: WorkloadConfig {
                threads: cpus,
                duration: Duration::from_secs(1),
                ramp: Duration::from_millis(250),
                churn_per_sec: 0.0,
                ..WorkloadConfig::default()
            },
            variants: schedlab_variants::safe().map(|v| v.name).collect(),
            locks: vec![LockKind::FairSpin],
            rounds: precision::MIN_ROUNDS,
            measure: Measure::Lockstat,
            lockstat_duration: Duration::from_secs(1),
            lockstat_window: Duration::from_millis(100),
            lockstat_mode: lockstat::Mode::Sampled,
            sum_sampling: lockstat::DEFAULT_SUM_SAMPLING,
            noise: NoisePolicy::default(),
            aa: true,
            precision: Some(precision::DEFAULT),
            baseline: None,
            builds: None,
            placement: PlacementRule::Separate,
        }
    }

    /// What each round runs, in the order of round 0: `(label, variant run)`. Every variant as
    /// itself, and with `aa` the A/A copy of [`AA_REFERENCE`] (label [`AA_LABEL`]) half a round
    /// away from it, so that the rotation never runs the two copies back to back more often than
    /// any other pair.
    pub fn entries(&self) -> Vec<(&'static str, &'static str)> {
        let mut entries: Vec<(&'static str, &'static str)> =
            self.variants.iter().map(|&v| (v, v)).collect();
        if let Some(r) = self.aa_reference_index() {
            let nv = self.variants.len();
            entries.insert((r + 1 + nv / 2) % (nv + 1), (AA_LABEL, AA_REFERENCE));
        }
        entries
    }

    /// Where [`AA_REFERENCE`] is in `variants`, when the A/A pair runs.
    fn aa_reference_index(&self) -> Option<usize> {
        self.variants.iter().position(|v| *v == AA_REFERENCE).filter(|_| self.aa)
    }

    /// Checks every variant against the workload, before any work: a [`ErrorKind::BadInput`]
    /// error whose message is one line for the user.
    ///
    /// [`ErrorKind::BadInput`]: crate::error::ErrorKind::BadInput
    pub fn validate(&self) -> Result<(), ExperimentError> {
        let bad = |m: &str| Err(ExperimentError::bad_input(m));
        if self.rounds == 0 {
            return bad("--rounds must be at least 1");
        }
        if self.variants.is_empty() {
            return bad("no variant to compare");
        }
        if self.locks.is_empty() {
            return bad("no lock kind to compare");
        }
        if self.measure == Measure::Both && self.lockstat_duration.is_zero() {
            return bad("--lockstat-duration must be greater than zero");
        }
        if self.builds.is_some() && self.measure != Measure::Plain {
            return bad(
                "a comparison with an old build runs each variant as `schedlab run` child \
                 processes, which give plain KIOPS only: --measure plain",
            );
        }
        if let Some(p) = &self.precision {
            if !(p.target > 0.0 && p.target < 1.0) {
                return bad(&format!(
                    "--precision must be above 0 and below 100 %, got {}",
                    p.target
                ));
            }
            if p.max_time.is_zero() {
                return bad("--max-time must be greater than zero");
            }
        }
        for &lock in &self.locks {
            let w = WorkloadConfig { lock, ..self.workload.clone() };
            for v in &self.variants {
                w.validate(v)?;
            }
        }
        Ok(())
    }

    /// The builds each entry runs with in a round: this one, and the old one with `builds`.
    fn sides(&self) -> usize {
        1 + usize::from(self.builds.is_some())
    }

    /// Runs the comparison will make.
    pub fn total_runs(&self) -> usize {
        let per = usize::from(self.measure.plain()) + usize::from(self.measure.lockstat());
        self.rounds * self.locks.len() * self.entries().len() * per * self.sides()
    }

    /// Seconds the comparison will take, roughly (measured windows and ramps).
    pub fn estimated_seconds(&self) -> f64 {
        let w = &self.workload;
        let per_variant = if self.measure.plain() {
            w.duration.as_secs_f64() + w.ramp.as_secs_f64()
        } else {
            0.0
        } + match self.measure {
            Measure::Plain => 0.0,
            Measure::Lockstat => w.duration.as_secs_f64() + w.ramp.as_secs_f64(),
            Measure::Both => self.lockstat_duration.as_secs_f64() + w.ramp.as_secs_f64(),
        };
        let runs = self.rounds * self.locks.len() * self.entries().len() * self.sides();
        per_variant * runs as f64
    }
}

/// What the observer is told a run is: "round 2 fair-spin sched-lock (lockstat)", and with two
/// builds which one ran it: "round 2 fair-spin sched-lock (baseline build)".
fn run_label(
    round: usize,
    lock: LockKind,
    variant: &str,
    instrumented: bool,
    build: Option<Side>,
) -> String {
    format!(
        "round {} {} {variant}{}{}",
        round + 1,
        lock.name(),
        if instrumented { " (lockstat)" } else { "" },
        build.map(|b| format!(" ({})", b.label())).unwrap_or_default()
    )
}

pub use crate::driver::noise::{run_clean, NoiseCount, NoisePolicy, Runner};
pub use crate::seeds::{Seed, SEEDS};
pub use crate::stats::{
    judge_goal, judge_range, median, ratio_interval, GoalVerdict, Interval, PerThread,
    RangeOverlap, Spread,
};

/// The run's own noise floor under one lock kind: [`AA_REFERENCE`] against its second copy in
/// the same rounds (JSON: `noise_floor[]`).
#[derive(Clone, Debug, Serialize)]
pub struct NoiseFloor {
    pub lock: LockKind,
    /// The variant run twice in each round.
    pub reference: &'static str,
    /// Per-round KIOPS of the reference ÷ its copy's (median, min, max over rounds); `null`
    /// when no round has both.
    pub ratio: Option<Spread>,
    /// Its 95 % bootstrap interval over rounds ([`ratio_interval`]).
    pub interval: Option<Interval>,
    /// Why `interval` is null ("no interval: fewer than 6 rounds").
    pub no_interval: Option<String>,
    /// Set when the interval excludes 1: two copies of one variant differed beyond what the
    /// rounds' spread explains, so every other ratio of this lock kind is suspect. Says what the
    /// machine did during the pair's runs ([`unreliable_floor`]).
    pub unreliable: Option<String>,
    /// The copy's own row (variant `sched-lock (A/A)`), as a variant's.
    pub copy: VariantResult,
}

/// Whether an A/A interval makes the run unreliable: `Some(warning)` when it excludes 1 (the
/// warning names the interval and what the machine did, `machine`), `None` when it covers 1.
pub fn unreliable_floor(interval: Interval, machine: &str) -> Option<String> {
    (!interval.contains(1.0)).then(|| {
        format!(
            "UNRELIABLE: the A/A interval [{:.2}, {:.2}] excludes 1: two copies of one variant in the same rounds differed beyond chance, so the other ratios measure the machine as much as the variants; {machine}",
            interval.lo, interval.hi
        )
    })
}

/// What the machine did during some runs, for a warning: other processes' CPUs and steal
/// (`driver::workload` measures both for every run) and the runs it calls disturbed.
fn machine_during(runs: &[&RunResult]) -> String {
    let max =
        |f: &dyn Fn(&RunResult) -> Option<f64>| runs.iter().filter_map(|r| f(r)).reduce(f64::max);
    let others =
        max(&|r| r.other_cpus).map_or("not measured".into(), |o| format!("up to {o:.2} CPUs"));
    let steal =
        max(&|r| r.steal_cpus).map_or("not measured".into(), |o| format!("up to {o:.2} CPUs"));
    let reasons: Vec<String> =
        runs.iter().filter_map(|r| crate::driver::workload::disturbed(r)).collect();
    let disturbed = match reasons.first() {
        Some(first) => format!("{} of {} runs disturbed ({first})", reasons.len(), runs.len()),
        None => format!("none of its {} runs disturbed (the spread is the machine's own: frequency, caches, placement)", runs.len()),
    };
    format!("during the pair's runs: other processes {others}, steal {steal}, {disturbed}")
}

/// How much of the scheduler lock's hold time the statistics take (instrumented runs).
#[derive(Clone, Debug, Default, Serialize)]
pub struct StatsShare {
    /// Time in statistics updates applied under the scheduler lock (timed stats sections,
    /// sampled) ÷ the scheduler lock's hold time.
    pub measured: Option<f64>,
    /// The part of it spent in the locked all-slot counter sums (their hold and wait inside the
    /// scheduler lock ÷ its hold time).
    pub counter_sums: Option<f64>,
    /// Why a share is `None` although the scheduler lock was held: a part estimated above the
    /// whole hold (two sampled estimates of one time, each extrapolated) is not a share.
    pub not_estimable: Option<String>,
}

/// A part of the scheduler lock's hold estimated above the whole hold: two sampled estimates
/// of one time, each extrapolated. Not a share; shown in its place.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ShareAboveWhole {
    /// The share's name ("statistics share").
    pub what: &'static str,
    /// part ÷ whole, above 1.
    pub share: f64,
}

impl fmt::Display for ShareAboveWhole {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (what, pct) = (self.what, 100.0 * self.share);
        write!(f, "{what}: not estimable: estimated at {pct:.0}% of the scheduler lock's hold ")?;
        f.write_str("(both are sampled estimates; a part cannot exceed its whole)")
    }
}

/// `part ÷ whole` as a share of a hold, checked where it is computed: a part cannot exceed its
/// whole, so an estimate above 100 % is refused with its reason rather than printed or clamped.
pub fn share_of_hold(
    part_ns: f64,
    whole_ns: f64,
    what: &'static str,
) -> Result<Option<f64>, ShareAboveWhole> {
    if whole_ns <= 0.0 {
        return Ok(None);
    }
    let share = part_ns / whole_ns;
    if share > 1.0 {
        return Err(ShareAboveWhole { what, share });
    }
    Ok(Some(share))
}

/// One variant under one lock kind.
#[derive(Clone, Debug, Serialize)]
pub struct VariantResult {
    pub variant: &'static str,
    pub lock: LockKind,
    pub threads: usize,
    /// `complete` (every round ran), `partial` (some rounds ran: interrupted or failed runs),
    /// `not run` (the comparison stopped before this variant ran), `failed` (every run of it
    /// failed: see `CompareReport::failures`), `left out` (every run of it was left out for
    /// where the machine put the CPUs: see `CompareReport::placement`), `no requests completed`
    /// (runs finished, none completed a request: no throughput, `kiops` is null).
    pub status: &'static str,
    /// Finished runs behind this row (plain and instrumented).
    pub runs: usize,
    /// From the plain runs (the instrumented ones when only those ran): see `kiops_source`;
    /// `null` when no run finished.
    pub kiops: Option<Spread>,
    pub kiops_source: &'static str,
    /// KIOPS of the instrumented runs.
    pub kiops_lockstat: Option<Spread>,
    /// The throughput the lock statistics cost, with its interval and verdict ([`cost`]; in
    /// JSON the `lockstat_overhead_*` keys of the row).
    #[serde(flatten)]
    pub lockstat_cost: LockstatCost,
    /// KIOPS ÷ `sched-lock`'s in the same round (median, min, max over rounds).
    pub vs_sched_lock: Option<Spread>,
    /// The 95 % bootstrap interval of `vs_sched_lock` over rounds ([`ratio_interval`]).
    pub vs_sched_lock_interval: Option<Interval>,
    /// Why `vs_sched_lock_interval` is null although `vs_sched_lock` is not.
    pub vs_sched_lock_no_interval: Option<String>,
    pub per_thread_kiops: PerThread,
    /// Every run passed the end-of-run checks and freed every group and queue; `null` when no
    /// run finished (nothing was checked: not a failure of the checks).
    pub consistent: Option<bool>,
    /// Requests completed in the measured windows of the runs behind `kiops`.
    pub requests: u64,
    /// Median over the runs behind `kiops` of this process's CPU time ÷ (window × jobs), %.
    pub cpu_busy_pct: Option<f64>,
    /// The most CPUs' worth of time other processes used during any run of this variant: above a
    /// few tenths the jobs competed for CPUs and the numbers are not to be trusted.
    pub other_cpus_max: Option<f64>,
    /// The most steal time (hypervisor) during any run, CPUs' worth.
    pub steal_cpus_max: Option<f64>,
    /// Other processes' CPUs during each run behind `kiops` (aligned with `kiops.runs`).
    pub other_cpus_runs: Vec<Option<f64>>,
    /// Runs re-run because other processes used the CPUs, and runs kept although they did.
    pub noise: NoiseCount,
    /// Seconds the lock counters cover (all instrumented runs together).
    pub lockstat_s: f64,
    /// The named locks, merged over the instrumented runs.
    pub locks: Vec<LockSummary>,
    /// The statistics updates applied under the scheduler lock, timed like a lock's holds
    /// (`acquisitions` = updates); absent when none ran.
    pub stats_section: Option<LockSummary>,
    /// Scheduler-lock acquisitions per completed request (instrumented runs).
    pub sched_acquisitions_per_request: Option<f64>,
    /// Scheduler-lock hold per completed request, ns (instrumented runs).
    pub sched_hold_per_request_ns: Option<f64>,
    pub stats_share_of_sched_hold: StatsShare,
    #[serde(skip)]
    pub lock_stats: LockStats,
}

impl VariantResult {
    /// The lock called `name` ("sched", "queue", "stats-sum").
    pub fn lock_named(&self, name: &str) -> Option<&LockSummary> {
        self.locks.iter().find(|l| l.name == name)
    }
}

/// A seed's ratio as measured under one lock kind.
#[derive(Clone, Debug, Serialize)]
pub struct RatioByLock {
    pub lock: LockKind,
    /// Per-round ratio of the two variants' plain KIOPS (median, min, max over rounds).
    pub measured: Spread,
    /// The 95 % bootstrap interval of `measured` over rounds ([`ratio_interval`]).
    pub interval: Option<Interval>,
    /// Why `interval` is null ("no interval: fewer than 6 rounds"); then neither verdict is
    /// given.
    pub no_interval: Option<String>,
    /// The interval against the seeds' range ([`judge_range`]); `None` without a range, without
    /// an interval, or when not judged.
    pub seed_range_overlap: Option<RangeOverlap>,
    /// The goal judged on the interval ([`judge_goal`]); `None` without a goal, without an
    /// interval, or when not judged.
    pub meets_goal: Option<GoalVerdict>,
    /// Why neither the seeds' range nor the goal was judged: some of the runs behind the ratio
    /// were disturbed (`driver::workload::disturbed`), so the ratio does not measure the
    /// variants alone. Its figures are still reported.
    pub not_judged: Option<String>,
}

/// One row of the ratio table.
#[derive(Clone, Debug, Serialize)]
pub struct RatioResult {
    #[serde(flatten)]
    pub seed: Seed,
    pub by_lock: Vec<RatioByLock>,
}

/// Everything a comparison measured.
#[derive(Clone, Debug, Serialize)]
pub struct CompareReport {
    pub provenance: Provenance,
    pub config: CompareConfig,
    /// Rounds finished for every variant (an interrupted comparison keeps what finished).
    pub rounds_completed: usize,
    pub interrupted: bool,
    pub results: Vec<VariantResult>,
    pub ratios: Vec<RatioResult>,
    /// The run's noise floor, one per lock kind (empty when the A/A pair did not run: see
    /// `noise_floor_not_measured`).
    pub noise_floor: Vec<NoiseFloor>,
    /// Why `noise_floor` is empty ("--no-aa", "sched-lock is not compared").
    pub noise_floor_not_measured: Option<String>,
    /// Runs that failed (the driver's error); the comparison went on without them.
    pub failures: Vec<RunFailure>,
    /// With a [`Precision`]: what was reached and why the rounds stopped; `null` when the
    /// comparison ran exactly `rounds`.
    pub precision: Option<precision::Outcome>,
    /// With a [`Baseline`]: every ratio's change against it.
    pub baseline: Option<BaselineComparison>,
    /// With a [`BuildPair`] (`--baseline EXE`): every ratio's change between the two builds,
    /// measured within rounds ([`builds`]). The other figures of the report are this build's.
    pub builds: Option<BuildComparison>,
    /// Where the machine put the CPUs, run by run, and the rounds that left out
    /// ([`placement`]).
    pub placement: placement::PlacementReport,
}

/// A run that failed: which, and the driver's one-line error.
#[derive(Clone, Debug, Serialize)]
pub struct RunFailure {
    pub round: usize,
    pub variant: &'static str,
    pub lock: LockKind,
    pub instrumented: bool,
    /// With two builds: which one's run failed (`null` with one build).
    pub build: Option<Side>,
    pub error: String,
}

impl CompareReport {
    /// Whether every run that finished passed its checks (runs that did not finish are not
    /// counted: see `status` and `failures`).
    pub fn all_consistent(&self) -> bool {
        self.rows().all(|r| r.consistent != Some(false))
    }

    /// Every row that ran: the variants', then the A/A copies'.
    pub fn rows(&self) -> impl Iterator<Item = &VariantResult> + Clone {
        self.results.iter().chain(self.noise_floor.iter().map(|f| &f.copy))
    }

    /// The warnings of noise floors whose interval excludes 1.
    pub fn unreliable(&self) -> Vec<String> {
        self.noise_floor
            .iter()
            .filter_map(|f| {
                f.unreliable.as_ref().map(|u| {
                    if self.config.locks.len() > 1 {
                        format!("{}: {u}", f.lock.name())
                    } else {
                        u.clone()
                    }
                })
            })
            .collect()
    }
}

/// Runs the comparison (the experiment shape of [`crate::experiment`]). `stop` (a signal) stops
/// it: the run in progress ends early and is dropped; every finished run is kept and reported. A
/// run that fails is told to the observer, recorded in `failures`, and the comparison goes on.
/// The only errors are a configuration that [`CompareConfig::validate`] refuses, and, with two
/// builds, no temporary directory for their runs' files.
pub fn run(
    cfg: &CompareConfig,
    stop: &AtomicBool,
    observer: &mut dyn Observer,
) -> Result<CompareReport, ExperimentError> {
    let Some(pair) = &cfg.builds else {
        return run_with(&run_named, &placement::probe_here, cfg, stop, observer);
    };
    cfg.validate()?;
    let dir = tempfile::Builder::new().prefix("schedlab-builds-").tempdir().map_err(|e| {
        ExperimentError::run_failed(format!("no temporary directory for the runs' files: {e}"))
    })?;
    let this = |v: &str, w: &WorkloadConfig, s: &AtomicBool| pair.this.run(v, w, dir.path(), s);
    let old = |v: &str, w: &WorkloadConfig, s: &AtomicBool| pair.baseline.run(v, w, dir.path(), s);
    run_builds_with(&this, &old, &placement::probe_here, cfg, stop, observer)
}

/// [`run`] with two builds (`cfg.builds`), each run of this build made by `this` and each of
/// the old one by `baseline`.
pub fn run_builds_with(
    this: Runner<'_>,
    baseline: Runner<'_>,
    probe: placement::Probe<'_>,
    cfg: &CompareConfig,
    stop: &AtomicBool,
    observer: &mut dyn Observer,
) -> Result<CompareReport, ExperimentError> {
    let started = Instant::now();
    let clock = || started.elapsed();
    run_timed(this, Some(baseline), probe, &clock, cfg, stop, observer)
}

/// The fair lock's warning before runs of this many jobs, for each lock kind compared.
fn warn_before_runs(cfg: &CompareConfig, observer: &mut dyn Observer) {
    let others = other_runnable_threads();
    for &lock in &cfg.locks {
        if let Some(w) = fair_lock_warning_before(lock, cfg.workload.threads, others) {
            observer.event(Event::Warning(&w));
        }
    }
}

/// [`run`] with each run made by `runner`.
pub fn run_with(
    runner: Runner<'_>,
    probe: placement::Probe<'_>,
    cfg: &CompareConfig,
    stop: &AtomicBool,
    observer: &mut dyn Observer,
) -> Result<CompareReport, ExperimentError> {
    let started = Instant::now();
    run_timed(runner, None, probe, &|| started.elapsed(), cfg, stop, observer)
}

/// The time since the comparison began, as its time limit reads it: the wall clock, or a
/// stand-in in tests (so that no test of the limit waits for it or depends on how fast it runs).
type Clock<'a> = &'a dyn Fn() -> Duration;

/// Every ratio the precision's stop rule reads: the report's ([`precision::reported_ratios`],
/// leaving out the rounds in `except`), and with two builds each ratio's change between them.
fn ratios_to_make_precise(
    cells: &[Vec<Cell>],
    baseline_cells: Option<&[Vec<Cell>]>,
    entries: &[(&'static str, &'static str)],
    cfg: &CompareConfig,
    except: &[usize],
) -> Vec<(String, Spread)> {
    let (locks, variants) = (&cfg.locks, &cfg.variants);
    let mut ratios = precision::reported_ratios(cells, entries, locks, variants, except);
    if let (Some(old), Some(pair)) = (baseline_cells, &cfg.builds) {
        let changes = builds::compare(cells, old, entries, variants, locks, pair);
        ratios.extend(changes.spreads);
    }
    ratios
}

/// [`run_with`] (with `baseline`, [`run_builds_with`]), the time limit read from `clock`.
fn run_timed(
    runner: Runner<'_>,
    baseline: Option<Runner<'_>>,
    probe: placement::Probe<'_>,
    clock: Clock<'_>,
    cfg: &CompareConfig,
    stop: &AtomicBool,
    observer: &mut dyn Observer,
) -> Result<CompareReport, ExperimentError> {
    cfg.validate()?;
    lockstat::set_hold_sampling(LockClass::STATS_SUM, cfg.sum_sampling);
    let total = cfg.total_runs();
    observer.event(Event::Planned { steps: total, estimated_s: cfg.estimated_seconds() });
    if let Some(p) = &cfg.precision {
        let rounds = cfg.rounds.max(precision::MIN_ROUNDS);
        let (target, limit) = (100.0 * p.target, p.max_time.as_secs_f64());
        let note = format!("{rounds} rounds at least, then until ±{target:.1} % or {limit:.0} s");
        observer.event(Event::Progress { steps: total, note: &note });
    }
    warn_before_runs(cfg, observer);
    let entries = cfg.entries();
    let ne = entries.len();
    let new_cells = || -> Vec<Vec<Cell>> {
        cfg.locks.iter().map(|_| (0..ne).map(|_| Cell::default()).collect()).collect()
    };
    let mut cells = new_cells();
    // The old build's runs, with two builds (`builds`); empty otherwise.
    let mut baseline_cells = new_cells();
    let two_builds = baseline.is_some() && cfg.builds.is_some();
    let mut index = 0;
    let mut interrupted = false;
    let mut rounds_completed = 0;
    let mut rerun_budget = (total as u32).div_ceil(2);
    let mut failures = Vec::new();
    let mut stopped_by = None;
    let mut widest = None;
    let mut total = total;
    // The rounds kept (a round whose CPUs moved while it ran is left out and made again:
    // `placement`), and every run's placement probes.
    let mut kept: Vec<usize> = Vec::new();
    // With a saved baseline, the rounds in its placement are the ones kept (`placement`).
    let prefer_ns = cfg.baseline.as_ref().and_then(|b| b.placement_ns);
    let mut tracker = placement::Tracker { rule: cfg.placement, prefer_ns, ..Default::default() };
    let runs_per_round = cfg.total_runs() / cfg.rounds;
    'rounds: for round in 0..precision::MAX_ROUNDS {
        // `round` rounds made so far; the rounds asked are all made once each is kept or left
        // out with none left to make again in its place.
        let asked_made = kept.len() + tracker.moved_left_out.len() >= cfg.rounds;
        match &cfg.precision {
            None if asked_made => break,
            None => {}
            // The stop rule, after every round made, also while rounds are made again for their
            // placement: the time limit holds however many rounds are left out.
            Some(p) => {
                let (_, minority) = tracker.minority(&kept);
                let old = two_builds.then_some(baseline_cells.as_slice());
                let ratios = ratios_to_make_precise(&cells, old, &entries, cfg, &minority);
                widest = precision::widest(&ratios);
                let (settled, elapsed) = (kept.len() - minority.len(), clock());
                let asked = cfg.rounds;
                stopped_by = precision::decide(p, round, settled, asked, widest.as_ref(), elapsed);
                if stopped_by.is_some() {
                    break;
                }
                if asked_made {
                    total += runs_per_round;
                    let note = precision_note(kept.len(), widest.as_ref(), p);
                    observer.event(Event::Progress { steps: total, note: &note });
                }
            }
        }
        // Runs follow each other at once: a run's probe after is the next one's before (a round's
        // first run takes its own, so that each round's probes are its own).
        let mut probe_after_last: Option<Option<f64>> = None;
        for (li, &lock) in cfg.locks.iter().enumerate() {
            for k in 0..ne {
                let vi = (k + round) % ne;
                let (variant, runs_as) = entries[vi];
                let modes = [(false, cfg.measure.plain()), (true, cfg.measure.lockstat())];
                let wanted_runs = modes.into_iter().filter(|(_, wanted)| *wanted);
                // With two builds, each run is made by both, in the round's order.
                let sides =
                    if two_builds { builds::order(round).to_vec() } else { vec![Side::This] };
                let runs = wanted_runs.flat_map(|(i, _)| sides.iter().map(move |side| (i, *side)));
                for (instrumented, side) in runs {
                    let (run_by, side_cells) = match (side, baseline) {
                        (Side::Baseline, Some(old)) => (old, &mut baseline_cells),
                        _ => (runner, &mut cells),
                    };
                    let build = two_builds.then_some(side);
                    let label = run_label(round, lock, variant, instrumented, build);
                    observer.event(Event::Step { done: index, label: &label });
                    let mut w = cfg.workload.clone();
                    w.lock = lock;
                    w.lockstat = instrumented;
                    w.lockstat_mode = cfg.lockstat_mode;
                    if instrumented && cfg.measure == Measure::Both {
                        w.duration = cfg.lockstat_duration;
                    }
                    if instrumented && cfg.measure == Measure::Lockstat {
                        w.lockstat_toggle = Some(cfg.lockstat_window);
                    }
                    let before_ns = probe_after_last.take().unwrap_or_else(|| probe(stop));
                    let r = match run_clean(
                        run_by,
                        runs_as,
                        &w,
                        stop,
                        cfg.noise,
                        &mut side_cells[li][vi].noise,
                        &mut rerun_budget,
                    ) {
                        Ok(r) => r,
                        // A run the stop ended before it kept anything: nothing failed.
                        Err(error) if error.kind == crate::error::ErrorKind::Stopped => {
                            interrupted = true;
                            break 'rounds;
                        }
                        Err(error) => {
                            let told = format!(
                                "run {} of {total} failed (the comparison goes on): {error}",
                                index + 1
                            );
                            observer.event(Event::Failure(&told));
                            side_cells[li][vi].failed += 1;
                            failures.push(RunFailure {
                                round,
                                variant,
                                lock,
                                instrumented,
                                build,
                                error: error.to_string(),
                            });
                            index += 1;
                            if stop.load(schedlab_core::sync::Ordering::Relaxed) {
                                interrupted = true;
                                break 'rounds;
                            }
                            continue;
                        }
                    };
                    if r.interrupted {
                        interrupted = true;
                        break 'rounds;
                    }
                    let after_ns = probe(stop);
                    probe_after_last = Some(after_ns);
                    // A run that other processes disturbed says nothing of placement: its probes
                    // measured them too (and on a busy machine every probe would be slow).
                    let disturbed = r.other_cpus.is_some_and(|o| o > cfg.noise.max_other_cpus);
                    let (before_ns, after_ns) =
                        if disturbed { (None, None) } else { (before_ns, after_ns) };
                    tracker.runs.push(placement::RunProbe {
                        round,
                        lock,
                        variant,
                        instrumented,
                        before_ns,
                        after_ns,
                    });
                    index += 1;
                    let summary = format!(
                        "run done: {index} of {total}, {label}: {:.1} KIOPS, {}",
                        r.kiops,
                        if r.consistent { "consistent" } else { "INCONSISTENT" }
                    );
                    observer.event(Event::StepDone { done: index, summary: &summary });
                    let cell = &mut side_cells[li][vi];
                    if instrumented {
                        cell.lockstat.push((round, r));
                    } else {
                        cell.plain.push((round, r));
                    }
                }
            }
        }
        // A round whose CPUs moved while it ran is never kept: its ratios would pair runs made in
        // both placements.
        match tracker.decided(round) {
            placement::RoundPlacement::Changed if tracker.run_again.len() < cfg.rounds => {
                placement::leave_out(&mut cells, &[round]);
                placement::leave_out(&mut baseline_cells, &[round]);
                tracker.run_again.push(round);
                total += runs_per_round;
                let note = format!("round {}: the CPUs moved while it ran; made again", round + 1);
                observer.event(Event::Progress { steps: total, note: &note });
            }
            placement::RoundPlacement::Changed => {
                placement::leave_out(&mut cells, &[round]);
                placement::leave_out(&mut baseline_cells, &[round]);
                tracker.moved_left_out.push(round);
                let note = format!("round {}: the CPUs moved while it ran; left out", round + 1);
                observer.event(Event::Progress { steps: total, note: &note });
            }
            _ => kept.push(round),
        }
        rounds_completed = kept.len();
    }
    // The ratios come from the placement more rounds ran in; the others' runs are left out.
    let (reported_placement, left_out) = tracker.minority(&kept);
    placement::leave_out(&mut cells, &left_out);
    placement::leave_out(&mut baseline_cells, &left_out);
    rounds_completed -= left_out.len();
    tracker.made = kept.len() + tracker.run_again.len() + tracker.moved_left_out.len();
    tracker.asked = cfg.rounds;
    let expected_rounds = cfg.rounds.saturating_sub(left_out.len() + tracker.moved_left_out.len());
    let precision = cfg.precision.as_ref().map(|p| {
        let reason = match stopped_by {
            _ if interrupted => StopReason::Stopped,
            Some(reason) => reason,
            None => StopReason::RoundLimitReached,
        };
        if reason != StopReason::PrecisionReached {
            let old = two_builds.then_some(baseline_cells.as_slice());
            widest = precision::widest(&ratios_to_make_precise(&cells, old, &entries, cfg, &[]));
        }
        precision::Outcome::new(p, reason, rounds_completed, clock(), widest.clone())
    });
    observer.event(Event::Finished);
    let mut results = Vec::new();
    for (li, &lock) in cfg.locks.iter().enumerate() {
        for &variant in &cfg.variants {
            let vi = entry_index(&entries, variant).expect("every variant is an entry");
            results.push(summarize_cell(variant, lock, cfg, expected_rounds, &cells[li][vi]));
        }
    }
    add_cross_variant(&mut results, &cells, &entries, cfg);
    let ratios = ratios(&cells, &entries, cfg);
    let noise_floor = noise_floors(&cells, &entries, cfg, expected_rounds);
    let noise_floor_not_measured = match (cfg.aa, cfg.variants.contains(&AA_REFERENCE)) {
        (false, _) => Some("--no-aa".to_string()),
        (true, false) => Some(format!("{AA_REFERENCE} is not compared")),
        (true, true) => None,
    };
    let mut report = CompareReport {
        provenance: Provenance::collect(),
        config: cfg.clone(),
        rounds_completed,
        interrupted,
        results,
        ratios,
        noise_floor,
        noise_floor_not_measured,
        failures,
        precision,
        baseline: None,
        builds: None,
        placement: placement::PlacementReport::new(tracker, reported_placement, left_out),
    };
    // With `--placement pool` the probes are not held to (a loaded machine stretches them), so
    // neither is the baseline's placement.
    let pooled = cfg.placement == placement::PlacementRule::Pool;
    let now_ns = if pooled { None } else { report.placement.reported_ns };
    report.baseline = cfg.baseline.as_ref().map(|b| {
        let mut against = b.compare(&baseline_ratio_runs(&report), now_ns);
        if pooled {
            against.placement_not_compared = Some(
                "--placement pool: the probes are not held to, and every baseline run counts"
                    .to_string(),
            );
        }
        against
    });
    report.builds = cfg.builds.as_ref().filter(|_| two_builds).map(|pair| {
        builds::compare(&cells, &baseline_cells, &entries, &cfg.variants, &cfg.locks, pair)
    });
    Ok(report)
}

/// The progress bar's note while rounds are added: "round 5: widest ±4.2 % (target ±3 %)".
fn precision_note(round: usize, widest: Option<&precision::Widest>, p: &Precision) -> String {
    let reached = match widest.and_then(|w| w.half_width) {
        Some(h) => format!("widest ±{:.1} %", 100.0 * h),
        None => "no interval yet".into(),
    };
    format!("round {}: {reached} (target ±{:.1} %)", round + 1, 100.0 * p.target)
}

fn requests_of(r: &RunResult) -> f64 {
    r.kiops * 1e3 * r.measured_s
}

/// One variant's row from its cell; `rounds`: the rounds a complete row has (those asked, less
/// any left out for their placement).
fn summarize_cell(
    variant: &'static str,
    lock: LockKind,
    cfg: &CompareConfig,
    rounds: usize,
    cell: &Cell,
) -> VariantResult {
    let main_runs = cell.main_runs();
    // Runs that finished without completing a single request measured no throughput: their
    // zeros would read as one (the row says "no requests completed" instead).
    let none_completed = main_runs.iter().all(|(_, r)| r.requests.completed == 0);
    let kiops = (!main_runs.is_empty() && !none_completed)
        .then(|| Spread::of(main_runs.iter().map(|(_, r)| r.kiops).collect()));
    let kiops_lockstat = (cfg.measure == Measure::Both
        && cell.lockstat.iter().any(|(_, r)| r.requests.completed > 0))
    .then(|| Spread::of(cell.lockstat.iter().map(|(_, r)| r.kiops).collect()));
    let all = cell.plain.iter().chain(&cell.lockstat).map(|(_, r)| r);
    let runs = all.clone().count();
    let consistent = (runs > 0).then(|| {
        all.clone().all(|r| r.consistent && r.groups_live_after == 0 && r.queues_live_after == 0)
    });
    let expected =
        rounds * (usize::from(cfg.measure.plain()) + usize::from(cfg.measure.lockstat()));
    let status = match (runs, cell.failed) {
        (0, 0) if cell.left_out > 0 => "left out",
        (0, 0) => "not run",
        (0, _) => "failed",
        _ if none_completed => "no requests completed",
        (n, _) if n >= expected => "complete",
        _ => "partial",
    };
    let mut lock_stats = LockStats::default();
    let mut lockstat_s = 0.0;
    let mut lockstat_requests = 0.0;
    for (_, r) in &cell.lockstat {
        if let Some(l) = &r.lock_stats {
            lock_stats.merge(l);
        }
        // A toggled run's counters cover its on windows.
        match &r.lockstat_toggle {
            Some(t) => {
                lockstat_s += t.on_s;
                lockstat_requests += t.kiops_on * 1e3 * t.on_s;
            }
            None => {
                lockstat_s += r.measured_s;
                lockstat_requests += requests_of(r);
            }
        }
    }
    let mut locks = lock_stats.summarize((lockstat_s * 1e9) as u64);
    let section_name = LockClass::STATS_SECTION.name();
    let stats_section = locks.iter().position(|l| l.name == section_name).map(|i| locks.remove(i));
    let sched = locks.iter().find(|l| l.name == "sched");
    let per_request = |v: f64| (lockstat_requests > 0.0).then(|| v / lockstat_requests);
    let sched_acquisitions_per_request = sched.and_then(|s| per_request(s.acquisitions as f64));
    let sched_hold_per_request_ns = sched.and_then(|s| per_request(s.hold_ns.total as f64));
    let inside_sched = |l: Option<&LockSummary>| {
        l.and_then(|l| l.inside.iter().find(|i| i.outer == "sched"))
            .map_or(0, |i| i.hold_ns + i.wait_ns) as f64
    };
    let whole = sched.map_or(0.0, |s| s.hold_ns.total as f64);
    let measured = share_of_hold(inside_sched(stats_section.as_ref()), whole, "statistics share");
    let counter_sums = share_of_hold(
        inside_sched(locks.iter().find(|l| l.name == "stats-sum")),
        whole,
        "counter sums' share",
    );
    let refused = [&measured, &counter_sums].map(|r| r.as_ref().err().map(ToString::to_string));
    let reasons: Vec<String> = refused.into_iter().flatten().collect();
    let stats_share = StatsShare {
        measured: measured.unwrap_or(None),
        counter_sums: counter_sums.unwrap_or(None),
        not_estimable: (!reasons.is_empty()).then(|| reasons.join("; ")),
    };
    VariantResult {
        variant,
        lock,
        threads: cfg.workload.threads,
        status,
        runs,
        kiops,
        kiops_source: if cell.plain.is_empty() { "lockstat" } else { "plain" },
        kiops_lockstat,
        lockstat_cost: LockstatCost::of(cfg.measure, cell),
        vs_sched_lock: None,
        vs_sched_lock_interval: None,
        vs_sched_lock_no_interval: None,
        per_thread_kiops: PerThread::of(
            main_runs.iter().map(|(_, r)| r.per_thread_kiops.clone()).collect(),
        ),
        consistent,
        requests: main_runs.iter().map(|(_, r)| requests_of(r).round() as u64).sum(),
        cpu_busy_pct: {
            let v: Vec<f64> = main_runs.iter().filter_map(|(_, r)| r.cpu_busy_pct).collect();
            (!v.is_empty()).then(|| median(&v))
        },
        other_cpus_max: all.clone().filter_map(|r| r.other_cpus).reduce(f64::max),
        other_cpus_runs: main_runs.iter().map(|(_, r)| r.other_cpus).collect(),
        noise: cell.noise,
        steal_cpus_max: all.clone().filter_map(|r| r.steal_cpus).reduce(f64::max),
        lockstat_s,
        locks,
        stats_section,
        sched_acquisitions_per_request,
        sched_hold_per_request_ns,
        stats_share_of_sched_hold: stats_share,
        lock_stats,
    }
}

/// The ratios of a finished comparison, as `--baseline` compares them
/// ([`baseline::ratio_runs_from`]).
pub fn baseline_ratio_runs(report: &CompareReport) -> Vec<baseline::RatioRuns> {
    baseline::ratio_runs_from(
        report
            .results
            .iter()
            .map(|r| (r.variant, r.lock, r.vs_sched_lock.as_ref().map(|s| s.runs.as_slice()))),
        report.ratios.iter().flat_map(|r| {
            r.by_lock.iter().map(move |b| {
                (r.seed.numerator, r.seed.denominator, b.lock, b.measured.runs.as_slice())
            })
        }),
    )
}

/// "disturbed: N of M runs (first reason)" when any run behind the named variants' KIOPS was
/// disturbed; `None` when every one measured the variants alone.
fn disturbed_runs(
    cells: &[Cell],
    entries: &[(&'static str, &'static str)],
    variants: &[&str],
) -> Option<String> {
    let runs: Vec<&RunResult> = variants
        .iter()
        .filter_map(|v| entry_index(entries, v))
        .flat_map(|i| cells[i].main_runs().iter().map(|(_, r)| r))
        .collect();
    let reasons: Vec<String> =
        runs.iter().filter_map(|r| crate::driver::workload::disturbed(r)).collect();
    let first = reasons.first()?;
    Some(format!("disturbed: {} of {} runs ({first})", reasons.len(), runs.len()))
}

fn add_cross_variant(
    results: &mut [VariantResult],
    cells: &[Vec<Cell>],
    entries: &[(&'static str, &'static str)],
    cfg: &CompareConfig,
) {
    for (li, &lock) in cfg.locks.iter().enumerate() {
        for r in results.iter_mut().filter(|r| r.lock == lock) {
            r.vs_sched_lock = paired(&cells[li], entries, r.variant, AA_REFERENCE);
            if let Some(s) = &r.vs_sched_lock {
                match ratio_interval(s) {
                    Ok(i) => r.vs_sched_lock_interval = Some(i),
                    Err(why) => r.vs_sched_lock_no_interval = Some(why.to_string()),
                }
            }
        }
    }
}

/// The A/A pair of each lock kind, when it ran.
fn noise_floors(
    cells: &[Vec<Cell>],
    entries: &[(&'static str, &'static str)],
    cfg: &CompareConfig,
    rounds: usize,
) -> Vec<NoiseFloor> {
    let (Some(ri), Some(ci)) = (entry_index(entries, AA_REFERENCE), entry_index(entries, AA_LABEL))
    else {
        return Vec::new();
    };
    cfg.locks
        .iter()
        .enumerate()
        .map(|(li, &lock)| {
            let ratio = paired(&cells[li], entries, AA_REFERENCE, AA_LABEL);
            let (interval, no_interval) = match ratio.as_ref().map(ratio_interval) {
                Some(Ok(i)) => (Some(i), None),
                Some(Err(why)) => (None, Some(why.to_string())),
                None => (None, Some("no interval: no round ran both copies".to_string())),
            };
            let runs: Vec<&RunResult> = [ri, ci]
                .iter()
                .flat_map(|&i| cells[li][i].main_runs().iter().map(|(_, r)| r))
                .collect();
            let unreliable = interval.and_then(|i| unreliable_floor(i, &machine_during(&runs)));
            NoiseFloor {
                lock,
                reference: AA_REFERENCE,
                ratio,
                interval,
                no_interval,
                unreliable,
                copy: summarize_cell(AA_LABEL, lock, cfg, rounds, &cells[li][ci]),
            }
        })
        .collect()
}

fn ratios(
    cells: &[Vec<Cell>],
    entries: &[(&'static str, &'static str)],
    cfg: &CompareConfig,
) -> Vec<RatioResult> {
    SEEDS
        .iter()
        .filter_map(|seed| {
            let by_lock: Vec<RatioByLock> = cfg
                .locks
                .iter()
                .enumerate()
                .filter_map(|(li, &lock)| {
                    let measured = paired(&cells[li], entries, seed.numerator, seed.denominator)?;
                    let not_judged =
                        disturbed_runs(&cells[li], entries, &[seed.numerator, seed.denominator]);
                    let (interval, no_interval) = match ratio_interval(&measured) {
                        Ok(i) => (Some(i), None),
                        Err(why) => (None, Some(why.to_string())),
                    };
                    // Verdicts on the interval only, and only on undisturbed runs.
                    let judged = interval.filter(|_| not_judged.is_none());
                    Some(RatioByLock {
                        lock,
                        seed_range_overlap: judged
                            .zip(seed.seed_range)
                            .map(|(i, range)| judge_range(i, range)),
                        meets_goal: judged.zip(seed.goal_at_least).map(|(i, g)| judge_goal(i, g)),
                        interval,
                        no_interval,
                        not_judged,
                        measured,
                    })
                })
                .collect();
            (!by_lock.is_empty()).then_some(RatioResult { seed: *seed, by_lock })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_share_above_its_whole_is_refused_where_computed() {
        assert_eq!(share_of_hold(50.0, 200.0, "s"), Ok(Some(0.25)));
        assert_eq!(
            share_of_hold(5.0, 0.0, "s"),
            Ok(None),
            "no hold: no share, and nothing to refuse"
        );
        let why = share_of_hold(163.0, 100.0, "statistics share").expect_err("163 % of a hold");
        let why = why.to_string();
        assert!(why.contains("not estimable") && why.contains("163%"), "{why}");
    }
    use crate::experiment::observer::{Recorder, Silent};
    use crate::experiment::testing::assert_refused_before_any_work;

    #[test]
    fn median_and_spread() {
        assert_eq!(median(&[3.0, 1.0, 2.0]), 2.0);
        assert_eq!(median(&[4.0, 1.0, 2.0, 3.0]), 2.5);
        assert_eq!(median(&[]), 0.0);
        let s = Spread::of(vec![2.0, 5.0, 3.0]);
        assert_eq!((s.median, s.min, s.max), (3.0, 2.0, 5.0));
        let p = PerThread::of(vec![vec![1.0, 3.0], vec![2.0, 4.0], vec![1.5, 5.0]]);
        assert_eq!((p.min, p.max), (1.5, 4.0));
    }

    #[test]
    fn seeds_are_inside_their_ranges() {
        for s in SEEDS {
            if let (Some(v), Some((lo, hi))) = (s.seed, s.seed_range) {
                assert!(
                    lo <= hi && v >= lo - 0.02 && v <= hi + 0.02,
                    "{}: {v} not in {lo}..{hi}",
                    s.name
                );
            }
        }
    }

    fn small(variants: Vec<&'static str>, rounds: usize) -> CompareConfig {
        CompareConfig {
            workload: WorkloadConfig {
                threads: 1,
                duration: Duration::from_millis(30),
                ..WorkloadConfig::default()
            },
            variants,
            locks: vec![LockKind::ParkingLot],
            rounds,
            measure: Measure::Plain,
            noise: NoisePolicy { max_other_cpus: 1e9, retries: 0 },
            precision: None,
            ..CompareConfig::defaults()
        }
    }

    /// Real 10 ms runs whose throughput is pinned by `kiops(variant, round)`: the rounds' logic
    /// is under test, not this machine's noise.
    fn pinned(
        kiops: impl Fn(&str, usize) -> f64 + Sync,
    ) -> impl Fn(&str, &WorkloadConfig, &AtomicBool) -> Result<RunResult, ExperimentError> + Sync
    {
        let calls = std::sync::Mutex::new(std::collections::HashMap::<String, usize>::new());
        move |v: &str, w: &WorkloadConfig, i: &AtomicBool| {
            let round = {
                let mut calls = calls.lock().unwrap();
                let n = calls.entry(v.to_string()).or_insert(0);
                *n += 1;
                *n - 1
            };
            run_named(v, w, i).map(|mut r| {
                r.kiops = kiops(v, round);
                r.other_cpus = Some(0.0);
                r
            })
        }
    }

    /// A comparison made to its end with no stop and nothing watching: what most tests read.
    fn run_quietly(
        runner: Runner<'_>,
        probe: placement::Probe<'_>,
        cfg: &CompareConfig,
    ) -> CompareReport {
        run_with(runner, probe, cfg, &AtomicBool::new(false), &mut Silent).unwrap()
    }

    /// No placement probe (one CPU, as far as the rounds' logic can tell).
    fn no_probe(_: &AtomicBool) -> Option<f64> {
        None
    }

    /// A placement probe that answers `ns(call)`, its calls counted from 0.
    fn probe_by_call(
        ns: impl Fn(usize) -> f64 + Sync,
    ) -> impl Fn(&AtomicBool) -> Option<f64> + Sync {
        let calls = std::sync::atomic::AtomicUsize::new(0);
        move |_| Some(ns(calls.fetch_add(1, std::sync::atomic::Ordering::Relaxed)))
    }

    #[test]
    fn a_round_whose_cpus_moved_while_it_ran_is_made_again_and_named() {
        // sched-lock, no-stats and the A/A copy: 3 runs, 4 probes a round (one before the first
        // run, one after each). The probe after round 2's second run (call 6) sees the far
        // placement: the round is made again.
        let cfg = small(vec!["sched-lock", "no-stats"], 3);
        let probe = probe_by_call(|call| if call == 6 { 160.0 } else { 34.0 });
        let runner = pinned(|v, _| if v == "no-stats" { 2.0 } else { 1.0 });
        let mut recorder = Recorder::default();
        let report =
            run_with(&runner, &probe, &cfg, &AtomicBool::new(false), &mut recorder).unwrap();
        assert_eq!(report.placement.rounds_run_again, vec![1]);
        assert_eq!(report.rounds_completed, 3);
        assert_eq!(recorder.steps, 12, "4 rounds made, 3 kept");
        let no_stats = report.results.iter().find(|r| r.variant == "no-stats").unwrap();
        assert_eq!(
            (no_stats.runs, no_stats.status),
            (3, "complete"),
            "the changed round's runs are left out"
        );
        assert_eq!(report.placement.reported, Some(placement::Placement::Near));
        let note = report.placement.note().expect("the move is told");
        assert!(note.contains("round(s) 2 changed placement") && note.contains("160 ns"), "{note}");
    }

    #[test]
    fn with_the_placements_pooled_every_round_is_kept_and_that_is_said() {
        // The probes of the test above (round 2 moves while it runs), and a round 1 entirely in
        // the far placement: pooled, no round is made again or left out, and the note says that
        // the ratios pool both placements.
        let cfg = CompareConfig {
            placement: PlacementRule::Pool,
            ..small(vec!["sched-lock", "no-stats"], 3)
        };
        let far_at = |call| match call {
            0..=3 | 6 => 160.0,
            _ => 34.0,
        };
        let probe = probe_by_call(far_at);
        let runner = pinned(|v, _| if v == "no-stats" { 2.0 } else { 1.0 });
        let mut recorder = Recorder::default();
        let report =
            run_with(&runner, &probe, &cfg, &AtomicBool::new(false), &mut recorder).unwrap();
        let placement = &report.placement;
        assert_eq!(report.rounds_completed, 3);
        assert_eq!(recorder.steps, 9, "3 rounds made, 3 kept");
        assert!(placement.rounds_run_again.is_empty(), "{:?}", placement.rounds_run_again);
        assert!(placement.rounds_left_out.is_empty() && placement.rounds_moved_left_out.is_empty());
        assert_eq!((placement.reported, placement.rule), (None, PlacementRule::Pool));
        let note = placement.note().expect("the probes saw both placements");
        assert!(note.contains("--placement pool") && note.contains("160 ns"), "{note}");
        // Separate, the same probes cost round 2 a remake and round 1 its place in the figures.
        let separate = CompareConfig { placement: PlacementRule::Separate, ..cfg };
        let report = run_quietly(&runner, &probe_by_call(far_at), &separate);
        assert_eq!(report.placement.rounds_run_again, vec![1]);
        assert_eq!(report.placement.rounds_left_out, vec![0]);
    }

    #[test]
    fn rounds_settled_in_the_placement_fewer_rounds_ran_in_are_left_out_of_every_ratio() {
        // Round 1 runs entirely in the far placement, and there its ratio differs (1.5, not 2):
        // a ratio across placements is neither's.
        let cfg = small(vec!["sched-lock", "no-stats"], 3);
        let probe = probe_by_call(|call| if call < 4 { 160.0 } else { 34.0 });
        let runner = pinned(|v, round| match (v, round) {
            ("no-stats", 0) => 1.5,
            ("no-stats", _) => 2.0,
            _ => 1.0,
        });
        let report = run_quietly(&runner, &probe, &cfg);
        assert_eq!(report.placement.rounds_left_out, vec![0]);
        assert!(report.placement.rounds_run_again.is_empty());
        assert_eq!(report.rounds_completed, 2);
        let no_stats = report.results.iter().find(|r| r.variant == "no-stats").unwrap();
        let ratio = no_stats.vs_sched_lock.as_ref().unwrap();
        assert_eq!(ratio.runs, vec![2.0, 2.0], "the far round's 1.5 is not among them");
        assert_eq!(no_stats.status, "complete");
        // With a probe that sees one placement throughout, the same runs keep every round.
        let steady = run_quietly(&runner, &probe_by_call(|_| 34.0), &cfg);
        assert_eq!(steady.rounds_completed, 3);
        assert!(steady.placement.note().is_none());
        // Runs that other processes disturbed: their probes measured those processes, and
        // nothing is left out for them.
        let busy = |v: &str, w: &WorkloadConfig, i: &AtomicBool| {
            runner(v, w, i).map(|mut r| {
                r.other_cpus = Some(1.0);
                r
            })
        };
        let cfg = CompareConfig { noise: NoisePolicy { max_other_cpus: 0.3, retries: 0 }, ..cfg };
        let probe = probe_by_call(|call| if call < 4 { 160.0 } else { 34.0 });
        let disturbed = run_quietly(&busy, &probe, &cfg);
        assert_eq!(disturbed.rounds_completed, 3);
        assert!(
            disturbed.placement.rounds_left_out.is_empty() && disturbed.placement.near_ns.is_none()
        );
    }

    #[test]
    fn a_round_that_moved_once_none_is_left_to_make_again_is_left_out_not_kept() {
        // Rounds 1 to 4 move while they run (the third of their four probes is far), rounds 5
        // and 6 do not. Round 4, the first past the 3 made again, paired its runs across the
        // move (no-stats ÷ sched-lock 1.5 there, 2 elsewhere): it is left out, not kept, and
        // the figures rest on the 2 rounds that stayed put, fewer than the 3 asked.
        let mut cfg = small(vec!["sched-lock", "no-stats"], 3);
        cfg.workload.duration = Duration::from_millis(10);
        let probe = probe_by_call(|call| if call < 16 && call % 4 == 2 { 160.0 } else { 34.0 });
        let runner = pinned(|v, round| match (v, round) {
            ("no-stats", 3) => 1.5,
            ("no-stats", _) => 2.0,
            _ => 1.0,
        });
        let mut recorder = Recorder::default();
        let stop = AtomicBool::new(false);
        let report = run_with(&runner, &probe, &cfg, &stop, &mut recorder).unwrap();
        assert_eq!(recorder.steps, 18, "6 rounds of 3 runs: 3 asked, 3 made again");
        let placement = &report.placement;
        assert_eq!(placement.rounds_run_again, vec![0, 1, 2]);
        assert_eq!(placement.rounds_moved_left_out, vec![3]);
        assert!(placement.rounds_kept_changed.is_empty());
        assert_eq!((report.rounds_completed, placement.rounds_made), (2, 6));
        let no_stats = report.results.iter().find(|r| r.variant == "no-stats").unwrap();
        let ratio = no_stats.vs_sched_lock.as_ref().unwrap();
        assert_eq!(ratio.runs, vec![2.0, 2.0], "the moved round's 1.5 is not among them");
        let why = no_stats.vs_sched_lock_no_interval.as_deref();
        assert_eq!(why, Some("no interval: fewer than 6 rounds"));
        let note = placement.note().expect("the moves are told");
        let moved = "round(s) 4 changed placement while running and are left out";
        let kept = "4 of 6 rounds left out: every figure rests on the 2 kept, in the near \
                    placement, fewer than the 3 asked, too few for an interval";
        assert!(note.contains(moved), "{note}");
        assert!(note.contains(kept), "{note}");
    }

    fn precise(target: f64, max_time: Duration) -> Option<Precision> {
        Some(Precision { target, max_time })
    }

    /// A runner whose runs take `run_s` seconds each by the clock it gives (the runs themselves
    /// are [`pinned`]'s): what a time limit reads, without waiting for it.
    fn timed_runs(
        run_s: u64,
        kiops: impl Fn(&str, usize) -> f64 + Sync,
    ) -> (
        impl Fn(&str, &WorkloadConfig, &AtomicBool) -> Result<RunResult, ExperimentError> + Sync,
        impl Fn() -> Duration,
    ) {
        use std::sync::atomic::{AtomicUsize, Ordering::Relaxed};
        let runs = std::sync::Arc::new(AtomicUsize::new(0));
        let (counted, pinned) = (runs.clone(), pinned(kiops));
        let runner = move |v: &str, w: &WorkloadConfig, i: &AtomicBool| {
            counted.fetch_add(1, Relaxed);
            pinned(v, w, i)
        };
        let clock = move || Duration::from_secs(run_s * runs.load(Relaxed) as u64);
        (runner, clock)
    }

    /// A comparison with a precision whose every round's CPUs move while it runs (the third of
    /// its four probes is far), each round 3 runs of 10 s by the stand-in clock: the report and
    /// the time it took.
    fn always_moving(max_time_s: u64) -> (CompareReport, Duration) {
        let mut cfg = small(vec!["sched-lock", "no-stats"], 3);
        cfg.workload.duration = Duration::from_millis(10);
        cfg.precision = precise(0.03, Duration::from_secs(max_time_s));
        let probe = probe_by_call(|call| if call % 4 == 2 { 160.0 } else { 34.0 });
        let (runner, clock) = timed_runs(10, |v, _| if v == "no-stats" { 2.0 } else { 1.0 });
        let stop = AtomicBool::new(false);
        let report = run_timed(&runner, None, &probe, &clock, &cfg, &stop, &mut Silent).unwrap();
        (report, clock())
    }

    #[test]
    fn rounds_that_keep_moving_stop_at_the_time_limit_however_few_are_kept() {
        // A limit of 100 s: the 6 rounds a precision makes at least (the fewest for an interval,
        // `precision::MIN_ROUNDS`) are made (180 s), the first 3 made again for their placement,
        // and a seventh is not begun past the limit.
        let (report, took) = always_moving(100);
        let p = report.precision.clone().expect("a precision outcome");
        assert_eq!(p.stopped, StopReason::TimeLimitReached, "{}", p.line());
        assert_eq!(precision::MIN_ROUNDS, 6);
        assert_eq!(took, Duration::from_secs(180), "6 rounds of 3 runs, and no more");
        assert_eq!(report.placement.rounds_run_again, vec![0, 1, 2]);
        assert_eq!(report.rounds_completed, 0);
    }

    #[test]
    fn with_a_precision_rounds_that_keep_moving_are_all_left_out_until_the_time_limit() {
        // 200 s: 6 rounds, the first 3 made again, the next 3 left out (none kept), and a
        // seventh would end past the limit.
        let (report, took) = always_moving(200);
        let p = report.precision.clone().expect("a precision outcome");
        assert_eq!(p.stopped, StopReason::TimeLimitReached, "{}", p.line());
        assert_eq!(took, Duration::from_secs(180), "6 rounds of 3 runs");
        assert_eq!(report.placement.rounds_moved_left_out, vec![3, 4, 5]);
        assert_eq!((report.rounds_completed, p.rounds), (0, 0));
        assert!(p.line().contains("no round kept to take a ratio from"), "{}", p.line());
        let rows = &report.results;
        assert!(rows.iter().all(|r| r.status == "left out" && r.kiops.is_none()), "{rows:?}");
        assert!(rows.iter().all(|r| r.vs_sched_lock.is_none()));
        let note = report.placement.note().expect("the moves are told");
        let none = "all 6 rounds left out: no round is kept, no figure estimable";
        assert!(note.contains(none), "{note}");
    }

    #[test]
    fn ratios_that_agree_round_after_round_stop_at_the_precision() {
        let mut cfg = small(vec!["sched-lock", "no-stats"], 1);
        cfg.workload.duration = Duration::from_millis(10);
        cfg.precision = precise(0.03, Duration::from_secs(3600));
        let runner = pinned(|v, _| if v == "no-stats" { 2.0 } else { 1.0 });
        let mut recorder = Recorder::default();
        let report =
            run_with(&runner, &no_probe, &cfg, &AtomicBool::new(false), &mut recorder).unwrap();
        let p = report.precision.expect("a precision outcome");
        assert_eq!(p.stopped, StopReason::PrecisionReached, "{}", p.line());
        assert_eq!(
            (p.rounds, report.rounds_completed),
            (precision::MIN_ROUNDS, precision::MIN_ROUNDS),
            "six rounds give every ratio its interval"
        );
        assert_eq!(p.widest.as_ref().and_then(|w| w.half_width), Some(0.0));
        assert!(p.line().starts_with("precision reached"), "{}", p.line());
        assert_eq!(recorder.steps, 18, "6 rounds x (2 variants + the A/A copy)");
    }

    #[test]
    fn ratios_that_never_agree_stop_at_the_time_limit_and_say_so() {
        let mut cfg = small(vec!["sched-lock", "no-stats"], 3);
        cfg.workload.duration = Duration::from_millis(10);
        // A limit already passed when the first rounds end: none is added past the six an
        // interval needs (3 asked, never fewer than `precision::MIN_ROUNDS`).
        cfg.precision = precise(0.03, Duration::from_millis(1));
        let runner = pinned(|v, round| if v == "no-stats" && round % 2 == 1 { 3.0 } else { 1.0 });
        let report = run_quietly(&runner, &no_probe, &cfg);
        let p = report.precision.clone().expect("a precision outcome");
        assert_eq!(p.stopped, StopReason::TimeLimitReached, "{}", p.line());
        assert_eq!(p.rounds, precision::MIN_ROUNDS);
        let widest = p.widest.clone().expect("a widest ratio");
        assert!(widest.half_width.unwrap() > 0.03, "{widest:?}");
        assert!(
            p.line().starts_with("time limit reached") && p.rounds_needed.is_some(),
            "{}",
            p.line()
        );
        assert!(report.precision_warning().is_some());
        // A stop keeps the finished rounds and says it stopped.
        let stopped =
            run_with(&runner, &no_probe, &cfg, &AtomicBool::new(true), &mut Silent).unwrap();
        assert_eq!(stopped.precision.map(|p| p.stopped), Some(StopReason::Stopped));
        // Without a precision: exactly the rounds asked, and no outcome.
        let fixed = run_quietly(&runner, &no_probe, &CompareConfig { precision: None, ..cfg });
        assert!(fixed.precision.is_none() && fixed.rounds_completed == 3);
    }

    #[test]
    fn a_comparison_against_its_own_json_says_no_change_and_a_changed_one_regressed() {
        let mut cfg = small(vec!["sched-lock", "no-stats", "epoch"], 6);
        cfg.workload.duration = Duration::from_millis(10);
        let steady = |v: &str, round: usize| match v {
            "no-stats" => 2.0 + 0.02 * (round % 2) as f64,
            "epoch" => 1.5,
            _ => 1.0,
        };
        let first = run_quietly(&pinned(steady), &no_probe, &cfg);
        // The JSON as `--json` writes it: the report's fields in the envelope that names the
        // schema (report::contract; built here, since an experiment does not import its report:
        // tests/cli_compare.rs goes through the real `--json` and `--baseline`).
        let mut envelope = serde_json::to_value(&first).unwrap();
        envelope["schema"] = "schedlab-compare".into();
        envelope["schema_version"] = SCHEMA_VERSION.into();
        let json = envelope.to_string();
        let load = |text: &str| {
            Baseline::parse(
                std::path::Path::new("old.json"),
                text,
                &cfg.variants,
                &cfg.locks,
                baseline::DEFAULT_THRESHOLD,
            )
        };
        cfg.baseline = Some(load(&json).expect("its own JSON is a baseline"));
        let again = run_quietly(&pinned(steady), &no_probe, &cfg);
        let against = again.baseline.expect("compared");
        assert_eq!(
            against.changes.len(),
            2,
            "no-stats and epoch ÷ sched-lock: {:?}",
            against.changes
        );
        assert!(
            against.changes.iter().all(|c| c.verdict == Some(ChangeVerdict::NoChange)),
            "{:?}",
            against.changes
        );
        // epoch 20 % slower than in the baseline: regressed; no-stats unchanged.
        let slower = |v: &str, round: usize| if v == "epoch" { 1.2 } else { steady(v, round) };
        let changed = run_quietly(&pinned(slower), &no_probe, &cfg);
        let verdict = |r: &CompareReport, ratio: &str| {
            r.baseline.as_ref().unwrap().changes.iter().find(|c| c.ratio == ratio).unwrap().verdict
        };
        assert_eq!(verdict(&changed, "epoch ÷ sched-lock"), Some(ChangeVerdict::Regressed));
        assert_eq!(verdict(&changed, "no-stats ÷ sched-lock"), Some(ChangeVerdict::NoChange));
        assert!(changed.regressions().iter().any(|l| l.contains("epoch ÷ sched-lock")));
    }

    #[test]
    fn against_a_baseline_the_rounds_in_its_placement_are_kept_and_another_is_not_judged() {
        let mut cfg = small(vec!["sched-lock", "no-stats"], 12);
        cfg.workload.duration = Duration::from_millis(10);
        // no-stats ÷ sched-lock is 1.5 in the far placement and 2 in the near one; every other
        // round is far (6 of 12: enough for an interval either way).
        let far_round = |round: usize| round % 2 == 0;
        let runner = pinned(|v, round| match v {
            "no-stats" if far_round(round) => 1.5,
            "no-stats" => 2.0,
            _ => 1.0,
        });
        // Three runs a round (sched-lock, no-stats and the A/A copy): four probes.
        let probe = probe_by_call(|call| if far_round(call / 4) { 160.0 } else { 34.0 });
        let baseline_of = |report: &CompareReport| {
            let mut envelope = serde_json::to_value(report).unwrap();
            envelope["schema"] = "schedlab-compare".into();
            envelope["schema_version"] = SCHEMA_VERSION.into();
            let path = std::path::Path::new("old.json");
            let (variants, locks) = (&cfg.variants, &cfg.locks);
            Baseline::parse(path, &envelope.to_string(), variants, locks, 0.05).unwrap()
        };
        let stop = AtomicBool::new(false);
        // The baseline ran wholly in the far placement (its ratio 1.5).
        let far = run_with(&runner, &probe_by_call(|_| 160.0), &cfg, &stop, &mut Silent).unwrap();
        assert_eq!(far.placement.reported_ns, Some(160.0));
        let far_baseline = baseline_of(&far);
        assert_eq!(far_baseline.placement_ns, Some(160.0));
        // This run: half its rounds near. Alone, it keeps the near ones (a tie goes near).
        let alone = run_with(&runner, &probe, &cfg, &stop, &mut Silent).unwrap();
        assert_eq!(alone.placement.reported_ns, Some(34.0));
        // Against the far baseline it keeps the far rounds, and judges them: no change.
        cfg.baseline = Some(far_baseline);
        let against_far = run_with(&runner, &probe, &cfg, &stop, &mut Silent).unwrap();
        assert_eq!(against_far.placement.reported_ns, Some(160.0));
        let b = against_far.baseline.as_ref().unwrap();
        assert!(b.not_judged.is_none(), "{b:?}");
        assert!(b.changes.iter().all(|c| c.verdict == Some(ChangeVerdict::NoChange)), "{b:?}");
        // Against a baseline made only in the near placement, from a run only in the far one:
        // the 33 % the placement makes is not judged a change.
        cfg.baseline = Some(baseline_of(&alone));
        let only_far = run_with(&runner, &probe_by_call(|_| 160.0), &cfg, &stop, &mut Silent);
        let b = only_far.unwrap().baseline.unwrap();
        assert!(b.not_judged.as_deref().is_some_and(|w| w.contains("placements differ")), "{b:?}");
        assert!(b.changes.iter().all(|c| c.verdict.is_none()), "{b:?}");
    }

    /// A comparison of two builds with its runners pinned: this build and the baseline give
    /// `kiops(variant, round)` times the machine's state of the round (the same for both).
    fn two_builds(
        rounds: usize,
        this: impl Fn(&str, usize) -> f64 + Sync,
        baseline: impl Fn(&str, usize) -> f64 + Sync,
        fail_baseline_call: Option<usize>,
    ) -> (CompareReport, Vec<(Side, String)>) {
        let mut cfg = small(vec!["sched-lock", "no-stats", "epoch"], rounds);
        cfg.workload.duration = Duration::from_millis(10);
        let build = |exe: &str| crate::driver::child::Build {
            exe: exe.into(),
            version: format!("schedlab {exe}"),
            job_args: Vec::new(),
        };
        cfg.builds =
            Some(BuildPair { this: build("new"), baseline: build("old"), threshold: 0.05 });
        let calls = std::sync::Mutex::new(Vec::new());
        let (this, baseline) = (pinned(this), pinned(baseline));
        let this_runner = |v: &str, w: &WorkloadConfig, i: &AtomicBool| {
            calls.lock().unwrap().push((Side::This, v.to_string()));
            this(v, w, i)
        };
        let baseline_runner = |v: &str, w: &WorkloadConfig, i: &AtomicBool| {
            let mut calls = calls.lock().unwrap();
            calls.push((Side::Baseline, v.to_string()));
            let n = calls.iter().filter(|(s, _)| *s == Side::Baseline).count();
            drop(calls);
            if Some(n) == fail_baseline_call {
                return Err(ExperimentError::run_failed("the old build's run: injected failure"));
            }
            baseline(v, w, i)
        };
        let stop = AtomicBool::new(false);
        let report =
            run_builds_with(&this_runner, &baseline_runner, &no_probe, &cfg, &stop, &mut Silent)
                .unwrap();
        (report, calls.into_inner().unwrap())
    }

    /// KIOPS whose reference moves by 25 % from one call to the next (the machine's state,
    /// moving the ratios too: the reference loses more in the slow state), alike for both
    /// builds, which make the same calls in the same order.
    fn state(v: &str, round: usize) -> f64 {
        let fast = round % 2 == 1;
        match v {
            "sched-lock" if !fast => 0.8,
            "no-stats" => 2.0,
            "epoch" => 1.5,
            _ => 1.0,
        }
    }

    #[test]
    fn two_builds_run_each_entry_back_to_back_taking_turns_and_pair_their_ratios_by_round() {
        let (report, calls) = two_builds(6, state, state, None);
        let b = report.builds.as_ref().expect("two builds compared");
        // 6 rounds × 4 entries (three variants, the A/A copy) × 2 builds.
        assert_eq!(calls.len(), 48);
        for (pair, round) in calls.chunks(2).zip((0..6).flat_map(|r| [r; 4])) {
            let sides = [pair[0].0, pair[1].0];
            assert_eq!(sides, builds::order(round), "round {round}: {calls:?}");
            assert_eq!(pair[0].1, pair[1].1, "one entry with both builds back to back");
        }
        let names: Vec<&str> = b.changes.iter().map(|c| c.ratio.as_str()).collect();
        assert_eq!(names, ["no-stats ÷ sched-lock", "epoch ÷ sched-lock"]);
        for c in &b.changes {
            assert_eq!((c.rounds, c.change), (6, Some(0.0)), "{c:?}");
            assert_eq!(c.verdict, Some(ChangeVerdict::NoChange), "{c:?}");
        }
        assert_eq!(
            (b.this_version.as_str(), b.baseline_version.as_str()),
            ("schedlab new", "schedlab old")
        );
        // The rest of the report is this build's.
        let no_stats = report.results.iter().find(|r| r.variant == "no-stats").unwrap();
        assert_eq!((no_stats.runs, no_stats.status), (6, "complete"));
        // This build's epoch 20 % slower in every round: regressed.
        let slower = |v: &str, round: usize| state(v, round) * if v == "epoch" { 0.8 } else { 1.0 };
        let (report, _) = two_builds(6, slower, state, None);
        let b = report.builds.unwrap();
        let verdict = |ratio: &str| b.changes.iter().find(|c| c.ratio == ratio).unwrap().verdict;
        assert_eq!(verdict("epoch ÷ sched-lock"), Some(ChangeVerdict::Regressed));
        assert_eq!(verdict("no-stats ÷ sched-lock"), Some(ChangeVerdict::NoChange));
        assert_eq!(b.regressions().len(), 1, "{:?}", b.regressions());
    }

    #[test]
    fn a_failed_run_of_the_old_build_is_reported_and_its_round_pairs_nothing() {
        let (report, calls) = two_builds(3, state, state, Some(2));
        assert_eq!(calls.len(), 24, "the comparison went on");
        assert_eq!(report.failures.len(), 1);
        let f = &report.failures[0];
        assert_eq!((f.build, f.round), (Some(Side::Baseline), 0));
        assert!(f.error.contains("injected failure"), "{f:?}");
        let b = report.builds.unwrap();
        let rounds: Vec<usize> = b.changes.iter().map(|c| c.rounds).collect();
        assert!(rounds.contains(&2), "the failed run's round is not paired: {rounds:?}");
    }

    #[test]
    fn a_failed_run_is_reported_and_the_others_are_kept() {
        let cfg = small(vec!["no-stats", "epoch"], 2);
        let calls = std::sync::atomic::AtomicUsize::new(0);
        // The second run fails (round 0's epoch: rounds rotate the order, no-stats runs first).
        let runner = |v: &str, w: &WorkloadConfig, i: &AtomicBool| {
            if calls.fetch_add(1, std::sync::atomic::Ordering::Relaxed) == 1 {
                return Err(ExperimentError::run_failed(format!("{v}: injected failure")));
            }
            run_named(v, w, i)
        };
        let mut recorder = Recorder::default();
        let report =
            run_with(&runner, &no_probe, &cfg, &AtomicBool::new(false), &mut recorder).unwrap();
        assert_eq!(recorder.failures.len(), 1);
        assert!(
            recorder.failures[0].starts_with("run 2 of 4 failed (the comparison goes on)"),
            "{:?}",
            recorder.failures
        );
        assert_eq!((recorder.steps, recorder.steps_done), (4, 3));
        assert_eq!(report.failures.len(), 1);
        assert_eq!((report.failures[0].variant, report.failures[0].round), ("epoch", 0));
        assert!(report.failures[0].error.contains("injected failure"));
        let row = |v: &str| report.results.iter().find(|r| r.variant == v).unwrap();
        assert_eq!((row("no-stats").status, row("no-stats").runs), ("complete", 2));
        assert_eq!((row("epoch").status, row("epoch").runs), ("partial", 1));
        assert_eq!(
            row("epoch").consistent,
            Some(true),
            "the run that finished is checked and kept"
        );
        assert!(report.all_consistent());
        assert!(!report.interrupted);
    }

    #[test]
    fn a_goal_is_judged_only_on_runs_that_were_not_disturbed() {
        let mut cfg = small(vec!["epoch", "debug-off"], 6);
        cfg.workload.duration = Duration::from_millis(10);
        let verdict = |others: f64| {
            // Real runs, with their throughput pinned: the verdict logic is under test, and a
            // 10 ms run on a loaded machine may finish no request (a ratio of 0 or NaN, dropped).
            let runner = move |v: &str, w: &WorkloadConfig, i: &AtomicBool| {
                run_named(v, w, i).map(|mut r| {
                    r.other_cpus = Some(others);
                    r.kiops = if v == "epoch" { 2.0 } else { 1.0 };
                    r
                })
            };
            let report = run_quietly(&runner, &no_probe, &cfg);
            let ratio = report
                .ratios
                .iter()
                .find(|r| r.seed.numerator == "epoch" && r.seed.denominator == "debug-off")
                .expect("epoch / debug-off");
            ratio.by_lock[0].clone()
        };
        let quiet = verdict(0.0);
        assert!(quiet.not_judged.is_none(), "{quiet:?}");
        assert_eq!(
            quiet.interval,
            Some(Interval { lo: 2.0, hi: 2.0 }),
            "six rounds of 2.0: the interval is 2.0"
        );
        assert_eq!(quiet.meets_goal, Some(GoalVerdict::Met), "2.0 against a goal of 0.95");
        let busy = verdict(1.5);
        assert_eq!(busy.meets_goal, None, "no goal verdict on disturbed runs");
        assert_eq!(busy.seed_range_overlap, None);
        assert!(busy.interval.is_some(), "the interval is still reported");
        let why = busy.not_judged.expect("said why");
        assert!(why.starts_with("disturbed: 12 of 12 runs"), "{why}");
    }

    #[test]
    fn a_goal_is_met_only_when_the_whole_interval_clears_it() {
        let i = |lo, hi| Interval { lo, hi };
        assert_eq!(judge_goal(i(1.01, 1.10), 1.0), GoalVerdict::Met);
        assert_eq!(
            judge_goal(i(1.0, 1.2), 1.0),
            GoalVerdict::Met,
            "at least the goal: the bound itself clears it"
        );
        assert_eq!(judge_goal(i(0.90, 0.99), 1.0), GoalVerdict::Missed);
        // A straddling interval whose median (1.03, say) is above the goal: a median rule would
        // say met, an upper-bound rule met, a lower-bound rule missed.
        assert_eq!(judge_goal(i(0.99, 1.09), 1.0), GoalVerdict::Inconclusive);
        assert_eq!(
            judge_goal(i(0.8, 1.0), 1.0),
            GoalVerdict::Inconclusive,
            "touching the goal from below is not missing it"
        );
    }

    #[test]
    fn a_seed_range_is_judged_by_overlap_with_the_interval() {
        let i = |lo, hi| Interval { lo, hi };
        let range = (1.19, 1.26);
        assert_eq!(judge_range(i(1.20, 1.25), range), RangeOverlap::Inside);
        assert_eq!(judge_range(i(1.19, 1.26), range), RangeOverlap::Inside, "bounds included");
        assert_eq!(judge_range(i(1.00, 1.18), range), RangeOverlap::Outside);
        assert_eq!(judge_range(i(1.27, 1.40), range), RangeOverlap::Outside);
        assert_eq!(
            judge_range(i(1.10, 1.20), range),
            RangeOverlap::Overlapping,
            "meets the range's low end"
        );
        assert_eq!(
            judge_range(i(1.00, 1.40), range),
            RangeOverlap::Overlapping,
            "wider than the range"
        );
    }

    #[test]
    fn an_aa_interval_excluding_1_flags_the_run_unreliable() {
        let i = |lo, hi| Interval { lo, hi };
        let below =
            unreliable_floor(i(0.91, 0.97), "other processes up to 0.80 CPUs").expect("excludes 1");
        assert!(
            below.contains("UNRELIABLE")
                && below.contains("[0.91, 0.97]")
                && below.contains("0.80 CPUs"),
            "{below}"
        );
        assert!(unreliable_floor(i(1.02, 1.08), "").is_some(), "above 1 as well");
        assert_eq!(unreliable_floor(i(0.97, 1.05), ""), None, "covers 1");
        assert_eq!(unreliable_floor(i(1.0, 1.0), ""), None, "exactly 1");
    }

    #[test]
    fn the_aa_copy_runs_half_a_round_from_its_reference() {
        let cfg = CompareConfig::defaults();
        let entries = cfg.entries();
        assert_eq!(entries.len(), cfg.variants.len() + 1);
        let r = entries.iter().position(|e| e.0 == AA_REFERENCE).unwrap();
        let c = entries
            .iter()
            .position(|e| *e == (AA_LABEL, AA_REFERENCE))
            .expect("the copy runs the reference");
        let ne = entries.len();
        let gap = (c + ne - r) % ne;
        assert!(gap >= ne / 2 - 1 && gap <= ne / 2 + 1, "{entries:?}");
        assert_eq!(CompareConfig { aa: false, ..cfg.clone() }.entries().len(), cfg.variants.len());
        let without = CompareConfig { variants: vec!["no-stats", "epoch"], ..cfg };
        assert_eq!(without.entries().len(), 2, "no reference, no copy");
    }

    #[test]
    fn the_aa_pair_gives_the_noise_floor_and_no_aa_leaves_it_out() {
        let mut cfg = small(vec!["sched-lock", "no-stats"], 6);
        cfg.workload.duration = Duration::from_millis(10);
        // Throughput pinned (the floor's arithmetic is under test, not this machine's noise).
        let runner = |v: &str, w: &WorkloadConfig, i: &AtomicBool| {
            run_named(v, w, i).map(|mut r| {
                r.kiops = 1.0;
                r.other_cpus = Some(0.0);
                r
            })
        };
        let mut recorder = Recorder::default();
        let report =
            run_with(&runner, &no_probe, &cfg, &AtomicBool::new(false), &mut recorder).unwrap();
        assert_eq!(recorder.steps, 18, "6 rounds x (2 variants + the copy)");
        let names: Vec<&str> = report.results.iter().map(|r| r.variant).collect();
        assert_eq!(names, ["sched-lock", "no-stats"], "the copy is not a variant's row");
        assert_eq!(report.noise_floor.len(), 1);
        let floor = &report.noise_floor[0];
        assert_eq!((floor.copy.variant, floor.copy.runs), (AA_LABEL, 6));
        assert_eq!(floor.ratio.as_ref().map(|r| r.runs.len()), Some(6));
        assert_eq!(floor.interval, Some(Interval { lo: 1.0, hi: 1.0 }));
        assert_eq!(floor.unreliable, None);
        assert!(report.unreliable().is_empty() && report.noise_floor_not_measured.is_none());
        let sched = &report.results[0];
        assert_eq!(sched.vs_sched_lock_interval, Some(Interval { lo: 1.0, hi: 1.0 }));

        let five = run_quietly(&runner, &no_probe, &CompareConfig { rounds: 5, ..cfg.clone() });
        assert_eq!(five.noise_floor[0].interval, None);
        assert_eq!(
            five.noise_floor[0].no_interval.as_deref(),
            Some("no interval: fewer than 6 rounds")
        );
        assert_eq!(
            five.results[1].vs_sched_lock_no_interval.as_deref(),
            Some("no interval: fewer than 6 rounds")
        );

        let mut recorder = Recorder::default();
        let off = run_with(
            &runner,
            &no_probe,
            &CompareConfig { aa: false, ..cfg },
            &AtomicBool::new(false),
            &mut recorder,
        )
        .unwrap();
        assert_eq!(recorder.steps, 12);
        assert!(off.noise_floor.is_empty());
        assert_eq!(off.noise_floor_not_measured.as_deref(), Some("--no-aa"));
    }

    #[test]
    fn a_variant_whose_every_run_failed_is_failed_not_inconsistent() {
        let cfg = small(vec!["no-stats", "epoch"], 1);
        let runner = |v: &str, w: &WorkloadConfig, i: &AtomicBool| {
            if v == "epoch" {
                Err(ExperimentError::run_failed("injected"))
            } else {
                run_named(v, w, i)
            }
        };
        let report = run_quietly(&runner, &no_probe, &cfg);
        let epoch = report.results.iter().find(|r| r.variant == "epoch").unwrap();
        assert_eq!(epoch.status, "failed");
        assert!(epoch.kiops.is_none() && epoch.consistent.is_none());
        assert!(report.all_consistent(), "a failure is not an inconsistency");
        // An interrupted comparison: variants that never ran are `not run`.
        let report =
            run_with(&runner, &no_probe, &cfg, &AtomicBool::new(true), &mut Silent).unwrap();
        assert!(report.interrupted);
        assert!(report
            .results
            .iter()
            .all(|r| r.status == "not run" && r.consistent.is_none() && r.kiops.is_none()));
    }

    #[test]
    fn a_bad_configuration_is_refused_before_any_run() {
        let base = small(vec!["no-stats"], 1);
        let bad = [
            small(Vec::new(), 1),
            small(vec!["no-stats"], 0),
            CompareConfig { locks: Vec::new(), ..base.clone() },
            CompareConfig {
                measure: Measure::Both,
                lockstat_duration: Duration::ZERO,
                ..base.clone()
            },
            small(vec!["nonsense"], 1),
        ];
        assert_refused_before_any_work(&bad, |cfg, observer| {
            run(cfg, &AtomicBool::new(false), observer)
        });
    }

    #[test]
    fn unlocked_with_churn_is_refused() {
        let mut cfg = CompareConfig::defaults();
        cfg.variants.push("unlocked");
        cfg.workload.churn_per_sec = 5.0;
        let refused = cfg.validate().unwrap_err();
        assert_eq!(refused.kind, crate::error::ErrorKind::BadInput);
        assert!(refused.message.contains("unlocked"), "{refused}");
        cfg.workload.churn_per_sec = 0.0;
        cfg.validate().unwrap();
    }
}
