//! `schedlab compare`: every variant side by side, interleaved round by round, with the lock
//! counters that explain the throughput and the seeds' ratios beside the measured ones.
//!
//! One *round* runs every variant once for every lock kind asked, in an order rotated by one each
//! round (so that no variant always runs first, right after a build or a previous run heated the
//! caches). Ratios between variants are taken *within* a round and then summarised (median, min,
//! max), because this machine kind is shared and noisy (`../shared/reference/measuring.md` §2).
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
//! The JSON written by the CLI is documented in `notes/compare-schema.md`.

use crate::driver::host::other_runnable_threads;
use crate::driver::workload::{fair_lock_warning_before, run_named, RunResult, WorkloadConfig};
use crate::error::ExperimentError;
use crate::experiment::observer::{Event, Observer};
use crate::files::provenance::Provenance;
use schedlab_core::lockstat::{self, LockClass, LockStats, LockSummary};
use schedlab_core::sync::AtomicBool;
use schedlab_core::LockKind;
use serde::Serialize;
use std::time::Duration;

/// Which runs a comparison makes for each variant in each round.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Measure {
    /// Plain runs only: KIOPS, no lock counters.
    Plain,
    /// One run per variant and round: KIOPS and lock counters from the same run, the statistics
    /// switched on and off in alternating windows, whose pairs give the cost.
    Lockstat,
    /// Two runs: a plain run for the KIOPS and an instrumented one for the counters.
    Both,
}

impl Measure {
    pub fn from_name(name: &str) -> Option<Measure> {
        match name {
            "plain" => Some(Measure::Plain),
            "lockstat" => Some(Measure::Lockstat),
            "both" => Some(Measure::Both),
            _ => None,
        }
    }

    fn plain(self) -> bool {
        self != Measure::Lockstat
    }

    fn lockstat(self) -> bool {
        self != Measure::Plain
    }
}

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
}

impl CompareConfig {
    /// The defaults of `schedlab compare` (and of plain `cargo run --release`): every safe
    /// variant, all cores, 3 rounds of one 2 s run each (statistics on and off in 100 ms windows),
    /// the fair lock. About 35 s.
    pub fn defaults() -> Self {
        let cpus = std::thread::available_parallelism().map_or(2, |n| n.get());
        CompareConfig {
            workload: WorkloadConfig {
                threads: cpus,
                duration: Duration::from_secs(2),
                ramp: Duration::from_millis(250),
                churn_per_sec: 0.0,
                ..WorkloadConfig::default()
            },
            variants: schedlab_variants::safe().map(|v| v.name).collect(),
            locks: vec![LockKind::FairSpin],
            rounds: 3,
            measure: Measure::Lockstat,
            lockstat_duration: Duration::from_secs(1),
            lockstat_window: Duration::from_millis(100),
            lockstat_mode: lockstat::Mode::Sampled,
            sum_sampling: lockstat::DEFAULT_SUM_SAMPLING,
            noise: NoisePolicy::default(),
        }
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
        for &lock in &self.locks {
            let w = WorkloadConfig { lock, ..self.workload.clone() };
            for v in &self.variants {
                w.validate(v)?;
            }
        }
        Ok(())
    }

    /// Runs the comparison will make.
    pub fn total_runs(&self) -> usize {
        let per = usize::from(self.measure.plain()) + usize::from(self.measure.lockstat());
        self.rounds * self.locks.len() * self.variants.len() * per
    }

    /// Seconds the comparison will take, roughly (measured windows and ramps).
    pub fn estimated_seconds(&self) -> f64 {
        let w = &self.workload;
        let per_variant = if self.measure.plain() { w.duration.as_secs_f64() + w.ramp.as_secs_f64() } else { 0.0 }
            + match self.measure {
                Measure::Plain => 0.0,
                Measure::Lockstat => w.duration.as_secs_f64() + w.ramp.as_secs_f64(),
                Measure::Both => self.lockstat_duration.as_secs_f64() + w.ramp.as_secs_f64(),
            };
        per_variant * (self.rounds * self.locks.len() * self.variants.len()) as f64
    }
}

/// What the observer is told a run is: "round 2 fair-spin sched-lock (lockstat)".
fn run_label(round: usize, lock: LockKind, variant: &str, instrumented: bool) -> String {
    format!("round {} {} {variant}{}", round + 1, lock.name(), if instrumented { " (lockstat)" } else { "" })
}

pub use crate::driver::noise::{run_clean, NoiseCount, NoisePolicy, Runner};
use crate::driver::noise::run_clean_with;
pub use crate::seeds::{Seed, SEEDS};
pub use crate::stats::{median, PerThread, Spread};

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

/// `part ÷ whole` as a share of a hold, checked where it is computed: a part cannot exceed its
/// whole, so an estimate above 100 % is refused with its reason rather than printed or clamped.
pub fn share_of_hold(part_ns: f64, whole_ns: f64, what: &str) -> Result<Option<f64>, String> {
    if whole_ns <= 0.0 {
        return Ok(None);
    }
    let share = part_ns / whole_ns;
    if share > 1.0 {
        return Err(format!(
            "{what}: not estimable: estimated at {:.0}% of the scheduler lock's hold (both are sampled estimates; a part cannot exceed its whole)",
            100.0 * share
        ));
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
    /// failed: see `CompareReport::failures`), `no requests completed` (runs finished, none
    /// completed a request: no throughput, `kiops` is null).
    pub status: &'static str,
    /// Finished runs behind this row (plain and instrumented).
    pub runs: usize,
    /// From the plain runs (the instrumented ones when only those ran): see `kiops_source`;
    /// `null` when no run finished.
    pub kiops: Option<Spread>,
    pub kiops_source: &'static str,
    /// KIOPS of the instrumented runs.
    pub kiops_lockstat: Option<Spread>,
    /// The throughput the lock statistics cost, %: with `measure` `lockstat`, the median of every
    /// window comparison of every run (each window against its two neighbours of the other kind);
    /// with `both`, 100 × (1 − instrumented median ÷ plain median).
    pub lockstat_overhead_pct: Option<f64>,
    /// How `lockstat_overhead_pct` was measured: "same run, alternating windows" or "separate runs".
    pub lockstat_overhead_source: Option<&'static str>,
    /// With `measure` `lockstat`: each run's cost (median of its window pairs), %.
    pub lockstat_overhead_runs: Vec<f64>,
    /// KIOPS ÷ `sched-lock`'s in the same round (median, min, max over rounds).
    pub vs_sched_lock: Option<Spread>,
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
    /// Whether the median is inside the seeds' range.
    pub within_seed_range: Option<bool>,
    /// Whether the median meets the goal; `None` without a goal, or when not judged.
    pub meets_goal: Option<bool>,
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
    /// Runs that failed (the driver's error); the comparison went on without them.
    pub failures: Vec<RunFailure>,
}

/// A run that failed: which, and the driver's one-line error.
#[derive(Clone, Debug, Serialize)]
pub struct RunFailure {
    pub round: usize,
    pub variant: &'static str,
    pub lock: LockKind,
    pub instrumented: bool,
    pub error: String,
}

impl CompareReport {
    /// Whether every run that finished passed its checks (runs that did not finish are not
    /// counted: see `status` and `failures`).
    pub fn all_consistent(&self) -> bool {
        self.results.iter().all(|r| r.consistent != Some(false))
    }
}

#[derive(Default)]
struct Cell {
    /// (round, result) of the plain and of the instrumented runs.
    plain: Vec<(usize, RunResult)>,
    lockstat: Vec<(usize, RunResult)>,
    noise: NoiseCount,
    failed: usize,
}

impl Cell {
    /// The runs behind the KIOPS: the plain ones, or the instrumented ones when only those ran.
    fn main_runs(&self) -> &[(usize, RunResult)] {
        if self.plain.is_empty() {
            &self.lockstat
        } else {
            &self.plain
        }
    }
}

/// Runs the comparison (the experiment shape of [`crate::experiment`]). `stop` (a signal) stops
/// it: the run in progress ends early and is dropped; every finished run is kept and reported. A
/// run that fails is told to the observer, recorded in `failures`, and the comparison goes on.
/// The only error is a configuration that [`CompareConfig::validate`] refuses.
pub fn run(cfg: &CompareConfig, stop: &AtomicBool, observer: &mut dyn Observer) -> Result<CompareReport, ExperimentError> {
    run_with(&run_named, cfg, stop, observer)
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
    cfg: &CompareConfig,
    stop: &AtomicBool,
    observer: &mut dyn Observer,
) -> Result<CompareReport, ExperimentError> {
    cfg.validate()?;
    lockstat::set_hold_sampling(LockClass::STATS_SUM, cfg.sum_sampling);
    let total = cfg.total_runs();
    observer.event(Event::Planned { steps: total, estimated_s: cfg.estimated_seconds() });
    warn_before_runs(cfg, observer);
    let nv = cfg.variants.len();
    let mut cells: Vec<Vec<Cell>> = cfg.locks.iter().map(|_| (0..nv).map(|_| Cell::default()).collect()).collect();
    let mut index = 0;
    let mut interrupted = false;
    let mut rounds_completed = 0;
    let mut rerun_budget = (total as u32).div_ceil(2);
    let mut failures = Vec::new();
    'rounds: for round in 0..cfg.rounds {
        for (li, &lock) in cfg.locks.iter().enumerate() {
            for k in 0..nv {
                let vi = (k + round) % nv;
                let variant = cfg.variants[vi];
                let modes = [(false, cfg.measure.plain()), (true, cfg.measure.lockstat())];
                for (instrumented, wanted) in modes {
                    if !wanted {
                        continue;
                    }
                    let label = run_label(round, lock, variant, instrumented);
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
                    let r = match run_clean_with(runner, variant, &w, stop, cfg.noise, &mut cells[li][vi].noise, &mut rerun_budget) {
                        Ok(r) => r,
                        Err(error) => {
                            let told = format!("run {} of {total} failed (the comparison goes on): {error}", index + 1);
                            observer.event(Event::Failure(&told));
                            cells[li][vi].failed += 1;
                            failures.push(RunFailure { round, variant, lock, instrumented, error: error.to_string() });
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
                    index += 1;
                    let summary = format!(
                        "run done: {index} of {total}, {label}: {:.1} KIOPS, {}",
                        r.kiops,
                        if r.consistent { "consistent" } else { "INCONSISTENT" }
                    );
                    observer.event(Event::StepDone { done: index, summary: &summary });
                    let cell = &mut cells[li][vi];
                    if instrumented {
                        cell.lockstat.push((round, r));
                    } else {
                        cell.plain.push((round, r));
                    }
                }
            }
        }
        rounds_completed = round + 1;
    }
    observer.event(Event::Finished);
    let mut results = Vec::new();
    for (li, &lock) in cfg.locks.iter().enumerate() {
        for (vi, &variant) in cfg.variants.iter().enumerate() {
            results.push(summarize_cell(variant, lock, cfg, &cells[li][vi]));
        }
    }
    add_cross_variant(&mut results, &cells, cfg);
    let ratios = ratios(&cells, cfg);
    Ok(CompareReport { provenance: Provenance::collect(), config: cfg.clone(), rounds_completed, interrupted, results, ratios, failures })
}

fn requests_of(r: &RunResult) -> f64 {
    r.kiops * 1e3 * r.measured_s
}

fn summarize_cell(variant: &'static str, lock: LockKind, cfg: &CompareConfig, cell: &Cell) -> VariantResult {
    let main_runs = cell.main_runs();
    // Runs that finished without completing a single request measured no throughput: their
    // zeros would read as one (the row says "no requests completed" instead).
    let none_completed = main_runs.iter().all(|(_, r)| r.requests.completed == 0);
    let kiops = (!main_runs.is_empty() && !none_completed).then(|| Spread::of(main_runs.iter().map(|(_, r)| r.kiops).collect()));
    let plain_median = kiops.as_ref().map_or(0.0, |k| k.median);
    let kiops_lockstat = (cfg.measure == Measure::Both && cell.lockstat.iter().any(|(_, r)| r.requests.completed > 0))
        .then(|| Spread::of(cell.lockstat.iter().map(|(_, r)| r.kiops).collect()));
    let lockstat_overhead_runs: Vec<f64> =
        cell.lockstat.iter().filter_map(|(_, r)| r.lockstat_toggle.as_ref().and_then(|t| t.cost_pct)).collect();
    // Every window comparison of every run, pooled: more comparisons than runs, so the median
    // is steadier than a median of per-run medians.
    let pooled: Vec<f64> =
        cell.lockstat.iter().filter_map(|(_, r)| r.lockstat_toggle.as_ref()).flat_map(|t| t.pair_costs_pct.iter().copied()).collect();
    let (lockstat_overhead_pct, lockstat_overhead_source) = if cfg.measure == Measure::Lockstat {
        ((!pooled.is_empty()).then(|| median(&pooled)), Some("same run, alternating windows"))
    } else {
        let cost = kiops_lockstat
            .as_ref()
            .filter(|_| plain_median > 0.0 && cfg.measure == Measure::Both && !cell.plain.is_empty())
            .map(|l| 100.0 * (1.0 - l.median / plain_median));
        (cost, cost.map(|_| "separate runs"))
    };
    let all = cell.plain.iter().chain(&cell.lockstat).map(|(_, r)| r);
    let runs = all.clone().count();
    let consistent =
        (runs > 0).then(|| all.clone().all(|r| r.consistent && r.groups_live_after == 0 && r.queues_live_after == 0));
    let expected = cfg.rounds * (usize::from(cfg.measure.plain()) + usize::from(cfg.measure.lockstat()));
    let status = match (runs, cell.failed) {
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
        l.and_then(|l| l.inside.iter().find(|i| i.outer == "sched")).map_or(0, |i| i.hold_ns + i.wait_ns) as f64
    };
    let whole = sched.map_or(0.0, |s| s.hold_ns.total as f64);
    let measured = share_of_hold(inside_sched(stats_section.as_ref()), whole, "statistics share");
    let counter_sums = share_of_hold(inside_sched(locks.iter().find(|l| l.name == "stats-sum")), whole, "counter sums' share");
    let reasons: Vec<String> = [&measured, &counter_sums].iter().filter_map(|r| r.as_ref().err().cloned()).collect();
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
        lockstat_overhead_pct,
        lockstat_overhead_source,
        lockstat_overhead_runs,
        vs_sched_lock: None,
        per_thread_kiops: PerThread::of(main_runs.iter().map(|(_, r)| r.per_thread_kiops.clone()).collect()),
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

/// Per-round ratio of two variants' main-run KIOPS under one lock kind.
fn paired(cells: &[Cell], cfg: &CompareConfig, num: &str, den: &str) -> Option<Spread> {
    let ni = cfg.variants.iter().position(|v| *v == num)?;
    let di = cfg.variants.iter().position(|v| *v == den)?;
    let (n, d) = (cells[ni].main_runs(), cells[di].main_runs());
    let ratios: Vec<f64> = n
        .iter()
        .filter_map(|(round, rn)| d.iter().find(|(r2, _)| r2 == round).map(|(_, rd)| rn.kiops / rd.kiops))
        .filter(|x| x.is_finite())
        .collect();
    (!ratios.is_empty()).then(|| Spread::of(ratios))
}

/// "disturbed: N of M runs (first reason)" when any run behind the named variants' KIOPS was
/// disturbed; `None` when every one measured the variants alone.
fn disturbed_runs(cells: &[Cell], cfg: &CompareConfig, variants: &[&str]) -> Option<String> {
    let runs: Vec<&RunResult> = variants
        .iter()
        .filter_map(|v| cfg.variants.iter().position(|x| x == v))
        .flat_map(|i| cells[i].main_runs().iter().map(|(_, r)| r))
        .collect();
    let reasons: Vec<String> = runs.iter().filter_map(|r| crate::driver::workload::disturbed(r)).collect();
    let first = reasons.first()?;
    Some(format!("disturbed: {} of {} runs ({first})", reasons.len(), runs.len()))
}

fn add_cross_variant(results: &mut [VariantResult], cells: &[Vec<Cell>], cfg: &CompareConfig) {
    for (li, &lock) in cfg.locks.iter().enumerate() {
        for r in results.iter_mut().filter(|r| r.lock == lock) {
            r.vs_sched_lock = paired(&cells[li], cfg, r.variant, "sched-lock");
        }
    }
}

fn ratios(cells: &[Vec<Cell>], cfg: &CompareConfig) -> Vec<RatioResult> {
    SEEDS
        .iter()
        .filter_map(|seed| {
            let by_lock: Vec<RatioByLock> = cfg
                .locks
                .iter()
                .enumerate()
                .filter_map(|(li, &lock)| {
                    let measured = paired(&cells[li], cfg, seed.numerator, seed.denominator)?;
                    let m = measured.median;
                    let not_judged = disturbed_runs(&cells[li], cfg, &[seed.numerator, seed.denominator]);
                    let judged = not_judged.is_none();
                    Some(RatioByLock {
                        lock,
                        within_seed_range: seed.seed_range.filter(|_| judged).map(|(lo, hi)| m >= lo - 1e-9 && m <= hi + 1e-9),
                        meets_goal: seed.goal_at_least.filter(|_| judged).map(|g| m >= g),
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
        assert_eq!(share_of_hold(5.0, 0.0, "s"), Ok(None), "no hold: no share, and nothing to refuse");
        let why = share_of_hold(163.0, 100.0, "statistics share").expect_err("163 % of a hold");
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
                assert!(lo <= hi && v >= lo - 0.02 && v <= hi + 0.02, "{}: {v} not in {lo}..{hi}", s.name);
            }
        }
    }

    fn small(variants: Vec<&'static str>, rounds: usize) -> CompareConfig {
        CompareConfig {
            workload: WorkloadConfig { threads: 1, duration: Duration::from_millis(30), ..WorkloadConfig::default() },
            variants,
            locks: vec![LockKind::ParkingLot],
            rounds,
            measure: Measure::Plain,
            noise: NoisePolicy { max_other_cpus: 1e9, retries: 0 },
            ..CompareConfig::defaults()
        }
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
        let report = run_with(&runner, &cfg, &AtomicBool::new(false), &mut recorder).unwrap();
        assert_eq!(recorder.failures.len(), 1);
        assert!(recorder.failures[0].starts_with("run 2 of 4 failed (the comparison goes on)"), "{:?}", recorder.failures);
        assert_eq!((recorder.steps, recorder.steps_done), (4, 3));
        assert_eq!(report.failures.len(), 1);
        assert_eq!((report.failures[0].variant, report.failures[0].round), ("epoch", 0));
        assert!(report.failures[0].error.contains("injected failure"));
        let row = |v: &str| report.results.iter().find(|r| r.variant == v).unwrap();
        assert_eq!((row("no-stats").status, row("no-stats").runs), ("complete", 2));
        assert_eq!((row("epoch").status, row("epoch").runs), ("partial", 1));
        assert_eq!(row("epoch").consistent, Some(true), "the run that finished is checked and kept");
        assert!(report.all_consistent());
        assert!(!report.interrupted);
    }

    #[test]
    fn a_goal_is_judged_only_on_runs_that_were_not_disturbed() {
        let mut cfg = small(vec!["epoch", "debug-off"], 1);
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
            let report = run_with(&runner, &cfg, &AtomicBool::new(false), &mut Silent).unwrap();
            let ratio = report.ratios.iter().find(|r| r.seed.numerator == "epoch" && r.seed.denominator == "debug-off").expect("epoch / debug-off");
            ratio.by_lock[0].clone()
        };
        let quiet = verdict(0.0);
        assert!(quiet.not_judged.is_none() && quiet.meets_goal.is_some(), "{quiet:?}");
        let busy = verdict(1.5);
        assert_eq!(busy.meets_goal, None, "no goal verdict on disturbed runs");
        assert_eq!(busy.within_seed_range, None);
        let why = busy.not_judged.expect("said why");
        assert!(why.starts_with("disturbed: 2 of 2 runs"), "{why}");
    }

    #[test]
    fn a_variant_whose_every_run_failed_is_failed_not_inconsistent() {
        let cfg = small(vec!["no-stats", "epoch"], 1);
        let runner = |v: &str, w: &WorkloadConfig, i: &AtomicBool| if v == "epoch" { Err(ExperimentError::run_failed("injected")) } else { run_named(v, w, i) };
        let report = run_with(&runner, &cfg, &AtomicBool::new(false), &mut Silent).unwrap();
        let epoch = report.results.iter().find(|r| r.variant == "epoch").unwrap();
        assert_eq!(epoch.status, "failed");
        assert!(epoch.kiops.is_none() && epoch.consistent.is_none());
        assert!(report.all_consistent(), "a failure is not an inconsistency");
        // An interrupted comparison: variants that never ran are `not run`.
        let report = run_with(&runner, &cfg, &AtomicBool::new(true), &mut Silent).unwrap();
        assert!(report.interrupted);
        assert!(report.results.iter().all(|r| r.status == "not run" && r.consistent.is_none() && r.kiops.is_none()));
    }

    #[test]
    fn a_bad_configuration_is_refused_before_any_run() {
        let base = small(vec!["no-stats"], 1);
        let bad = [
            small(Vec::new(), 1),
            small(vec!["no-stats"], 0),
            CompareConfig { locks: Vec::new(), ..base.clone() },
            CompareConfig { measure: Measure::Both, lockstat_duration: Duration::ZERO, ..base.clone() },
            small(vec!["nonsense"], 1),
        ];
        assert_refused_before_any_work(&bad, |cfg, observer| run(cfg, &AtomicBool::new(false), observer));
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
