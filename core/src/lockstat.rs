//! Lock statistics in the spirit of Linux lockstat and mutrace, for the scheduler's locks: for
//! every *class* of lock on the paths (the scheduler lock, the queue lock, the statistics
//! counters' sum locks), acquisitions, contentions, owner changes, wait and hold time (total, avg,
//! p50, p99, max), and which path waited or held (insert, dispatch, completion, stats, group
//! removal).
//!
//! No standard tool sees these locks (`../shared/reference/measuring.md`, "What a contention report
//! should hold"), so the workbench measures its own. The mechanism (what a measured acquisition
//! counts, times and samples, per thread) lives in the sync facade, `crate::sync::measure`, which
//! knows classes and paths only as numbers. This module is the layer above it: it names the
//! scheduler's classes and paths, injects the lock spans (`set_span_hooks`), and turns the raw
//! table into reports that say which figures are exact and which are estimated.
//!
//! ## Exact and estimated
//!
//! | figure | how |
//! | --- | --- |
//! | acquisitions, contentions, owner changes (per class and path) | exact: every acquisition counted in the thread's own counters |
//! | wait (total, avg, p99, max), per-path and "inside" waits | estimated from one contended wait in M timed ([`set_wait_sampling`], default [`DEFAULT_WAIT_SAMPLING`]), only on the contended path (as lockstat's waittime, but sampled): each contended acquisition is picked independently, so `total = mean × contentions`. [`LockSummary::waits_timed`] is the sample count; [`LockSummary::wait_exact`] says when every wait was timed |
//! | hold (total, avg, p50, p99, max), per-path hold shares, occupancy, "inside" | estimated from one hold in N timed ([`set_hold_sampling`], default [`DEFAULT_HOLD_SAMPLING`]): each hold is picked independently (random phase), so the sample's mean and percentiles are unbiased estimates and `total = mean × acquisitions`. [`LockSummary::holds_timed`] is the sample count; [`LockSummary::hold_exact`] says when every hold was timed |
//!
//! [`Mode::Exact`] (`--lockstat exact`) times every hold and every contended wait, for
//! validation: it costs more, and one run then gives both the exact figures and the sampled
//! estimate of the same holds and waits ([`LockSummary::hold_sampled_estimate`],
//! [`LockSummary::wait_sampled_estimate`]).
//!
//! ## Cost
//!
//! Off, a named lock pays one relaxed load of the switch word. On, an uncontended acquisition adds
//! a few thread-local adds and a countdown, no call and no shared line, and a contended one a
//! second countdown (its wait timed one time in M); see `crate::sync::measure` for the table,
//! `notes/results/2026-12-01-lockstat-cost.md` for what it measured. `schedlab roundtrip
//! --lockstat` and `schedlab compare` report the cost.
//!
//! ## Scope
//!
//! Like `/proc/lock_stat`, the table is global to the process: [`reset`] clears it, [`snapshot`]
//! reads it. Run one measured workload at a time.

use crate::sync::measure::{self, ticks_to_ns, SpanHooks};
pub use crate::sync::measure::{
    enabled, flush, hold_sampling, reset, set_hold_sampling, set_wait_sampling, wait_sampling,
    ClassStats, Histogram, LockClass, LockStats, PathGuard, PathStats, SectionGuard,
    DEFAULT_HOLD_SAMPLING, DEFAULT_WAIT_SAMPLING, MAX_CLASSES, MAX_SAMPLING,
};
use serde::Serialize;

/// Default hold sampling of every class (kept under its old name: `--sum-sampling`).
pub const DEFAULT_SUM_SAMPLING: u32 = DEFAULT_HOLD_SAMPLING;

impl LockClass {
    /// The scheduler lock (`bfqd->lock`).
    pub const SCHED: LockClass = LockClass::reserved(1);
    /// The request-queue lock (`q->queue_lock`).
    pub const QUEUE: LockClass = LockClass::reserved(2);
    /// The per-counter locks that `percpu_counter_sum` takes, all groups and counters together.
    pub const STATS_SUM: LockClass = LockClass::reserved(3);
    /// Not a lock: the statistics updates applied under the scheduler lock ([`stats_section`]),
    /// timed like holds so that their share of the scheduler lock's hold time is measured.
    pub const STATS_SECTION: LockClass = LockClass::reserved(4);
}

/// Names the scheduler's classes and installs the lock spans (once per process). Called by
/// everything that makes, measures or reports a named lock: `Scheduler::new`, [`set_enabled`],
/// [`snapshot`], [`register`].
pub fn install() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        LockClass::SCHED.set_name("sched");
        LockClass::QUEUE.set_name("queue");
        LockClass::STATS_SUM.set_name("stats-sum");
        LockClass::STATS_SECTION.set_name("stats-section");
        measure::set_span_hooks(SpanHooks { hold: lock_hold_span, wait: lock_wait_span });
    });
}

/// The class called `name` (a scheduler class, or a new one for a lock a variant adds).
pub fn register(name: &'static str) -> LockClass {
    install();
    LockClass::register(name)
}

/// Turns the statistics on or off for every named lock. An acquisition made while they were on
/// is still accounted at its release.
pub fn set_enabled(on: bool) {
    install();
    measure::set_enabled(on);
}

/// Flushes the calling thread, then copies the table.
pub fn snapshot() -> LockStats {
    install();
    measure::snapshot()
}

/// How holds are timed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Mode {
    /// One hold in N per class (cheap): hold figures are estimates.
    Sampled,
    /// Every hold (for validation; costs more), with the sampled estimate of the same holds beside.
    Exact,
}

impl Mode {
    pub fn name(self) -> &'static str {
        match self {
            Mode::Sampled => "sampled",
            Mode::Exact => "exact",
        }
    }

    pub fn from_name(name: &str) -> Option<Mode> {
        match name {
            "sampled" => Some(Mode::Sampled),
            "exact" => Some(Mode::Exact),
            _ => None,
        }
    }
}

/// Sets how holds are timed (process-wide).
pub fn set_mode(mode: Mode) {
    measure::set_exact(mode == Mode::Exact);
}

/// How holds are timed now.
pub fn mode() -> Mode {
    if measure::exact() {
        Mode::Exact
    } else {
        Mode::Sampled
    }
}

/// The path a thread is running when it waits for or holds a lock.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "kebab-case")]
#[repr(u8)]
pub enum LockPath {
    /// Anything not below (group creation, listing, process exit, reports).
    Other = 0,
    Insert = 1,
    Dispatch = 2,
    Completion = 3,
    /// Deferred statistics updates (`run_deferred`), whichever path runs them.
    Stats = 4,
    /// Group removal and process moves (the reparenting paths of cgroup churn).
    GroupRemoval = 5,
    /// The bio merge attempt before a request is made (`bfq_bio_merge`).
    BioMerge = 6,
    /// The depth limit's walk up the hierarchy (`bfq_limit_depth` → `bfqq_request_over_limit`).
    LimitDepth = 7,
}

/// Number of [`LockPath`]s.
pub const NR_PATHS: usize = 8;

impl LockPath {
    /// Every path, in report order.
    pub const ALL: [LockPath; NR_PATHS] = [
        LockPath::BioMerge,
        LockPath::LimitDepth,
        LockPath::Insert,
        LockPath::Dispatch,
        LockPath::Completion,
        LockPath::Stats,
        LockPath::GroupRemoval,
        LockPath::Other,
    ];

    pub fn name(self) -> &'static str {
        match self {
            LockPath::Other => "other",
            LockPath::Insert => "insert",
            LockPath::Dispatch => "dispatch",
            LockPath::Completion => "completion",
            LockPath::Stats => "stats",
            LockPath::GroupRemoval => "group-removal",
            LockPath::BioMerge => "bio-merge",
            LockPath::LimitDepth => "limit-depth",
        }
    }

    fn from_u8(v: u8) -> LockPath {
        match v {
            1 => LockPath::Insert,
            2 => LockPath::Dispatch,
            3 => LockPath::Completion,
            4 => LockPath::Stats,
            5 => LockPath::GroupRemoval,
            6 => LockPath::BioMerge,
            7 => LockPath::LimitDepth,
            _ => LockPath::Other,
        }
    }
}

/// Marks what the calling thread is doing, for the per-path columns of the lock report, until
/// the guard drops.
#[inline]
pub fn enter(path: LockPath) -> PathGuard {
    measure::enter_path(path as u8)
}

/// The calling thread's current path.
pub fn current_path() -> LockPath {
    LockPath::from_u8(measure::current_path())
}

/// Marks statistics work done under the scheduler lock, so that its share of the lock's hold
/// time is measured: counted exactly, timed one in [`hold_sampling`]`(STATS_SECTION)`. Off, one
/// relaxed load.
#[inline(always)]
pub fn stats_section() -> SectionGuard {
    measure::section(LockClass::STATS_SECTION)
}

// ---------------------------------------------------------------------------------------------
// Spans (injected into the facade).

/// The span of a lock of class `$class` held or waited for (`$what`: "hold" or "wait") on the
/// path numbered `$path`. A macro because a span's name is fixed where the span is written: the two
/// functions below are each one callsite per class.
macro_rules! lock_span {
    ($what:literal, $class:expr, $path:expr) => {{
        let path = LockPath::from_u8($path).name();
        match $class {
            LockClass::SCHED => tracing::trace_span!(
                target: crate::trace::LOCKS,
                concat!("sched lock: ", $what),
                lock = %"sched",
                path = %path
            ),
            LockClass::QUEUE => tracing::trace_span!(
                target: crate::trace::LOCKS,
                concat!("queue lock: ", $what),
                lock = %"queue",
                path = %path
            ),
            LockClass::STATS_SUM | LockClass::STATS_SECTION | LockClass::NONE => {
                tracing::Span::none()
            }
            class => tracing::trace_span!(
                target: crate::trace::LOCKS,
                concat!("lock: ", $what),
                lock = %class.name(),
                path = %path
            ),
        }
    }};
}

/// The span of a hold of a lock of `class`: made before the lock is taken and entered once it
/// is. `Span::none()` for the counter-sum locks: they nest inside the statistics span that takes
/// them (`bfqg_stats_update_avg_queue_size` sums every slot), which already shows their time, and
/// would triple the records per request.
#[inline(never)]
fn lock_hold_span(class: LockClass, path: u8) -> tracing::Span {
    lock_span!("hold", class, path)
}

/// The span of a contended acquisition of a lock of `class` (a class [`lock_hold_span`] traces).
#[inline(never)]
fn lock_wait_span(class: LockClass, path: u8) -> tracing::Span {
    lock_span!("wait", class, path)
}

// ---------------------------------------------------------------------------------------------
// Reports.

/// Total, average, percentiles and maximum of a time, in ns.
#[derive(Clone, Copy, Debug, Default, Serialize, PartialEq)]
pub struct TimeSummary {
    pub total: u64,
    pub avg: f64,
    pub p50: u64,
    pub p99: u64,
    pub max: u64,
}

fn ns(ticks: u128) -> u64 {
    ticks_to_ns(ticks.min(u64::MAX as u128) as u64)
}

impl TimeSummary {
    /// From a histogram of ticks; the total is the mean × `count` (the exact count of what the
    /// histogram samples, or the histogram's own count when it holds every value).
    pub fn of(h: &Histogram, count: u64) -> Self {
        let per_tick = if h.sum() == 0 { 0.0 } else { ns(h.sum()) as f64 / h.sum() as f64 };
        let avg = h.mean() * per_tick;
        TimeSummary {
            total: (avg * count as f64).round() as u64,
            avg,
            p50: ns(h.quantile(0.50) as u128),
            p99: ns(h.quantile(0.99) as u128),
            max: ns(h.max() as u128),
        }
    }
}

/// One path's share of a lock.
#[derive(Clone, Debug, Serialize)]
pub struct PathSummary {
    pub path: LockPath,
    /// Exact.
    pub acquisitions: u64,
    /// Exact.
    pub contentions: u64,
    /// Estimated like the class's wait total when waits are sampled (the path's timed waits ×
    /// its contentions ÷ their count).
    pub wait_ns: u64,
    /// Timed waits behind `wait_ns`.
    pub waits_timed: u64,
    /// Estimated like the class's hold total when holds are sampled (the path's timed mean × its
    /// acquisitions).
    pub hold_ns: u64,
    /// Timed holds behind `hold_ns`.
    pub holds_timed: u64,
    /// `hold_ns` ÷ the hold of every path of the class together (0 to 1); `None` when none
    /// held it.
    pub hold_share: Option<f64>,
    /// `wait_ns` ÷ the wait of every path of the class together; `None` when none waited.
    pub wait_share: Option<f64>,
}

/// One lock class, as reported (the JSON `locks[]` entry of `schedlab compare`).
#[derive(Clone, Debug, Default, Serialize)]
pub struct LockSummary {
    pub name: &'static str,
    /// Exact.
    pub acquisitions: u64,
    /// Exact.
    pub contentions: u64,
    /// contentions ÷ acquisitions × 100.
    pub contention_pct: f64,
    /// Exact.
    pub owner_changes: u64,
    /// Over contended acquisitions only (as lockstat's waittime); `total` is the mean ×
    /// contentions. Estimated unless `wait_exact`.
    pub wait_ns: TimeSummary,
    /// Whether every contended wait was timed (exact mode): then `wait_ns` is exact.
    pub wait_exact: bool,
    /// Contended waits timed: the sample count behind `wait_ns`.
    pub waits_timed: u64,
    /// contentions ÷ waits timed (1: all).
    pub wait_sampled_1_in: f64,
    /// Exact mode only: what the sampled mode would have estimated from the same run's waits.
    pub wait_sampled_estimate: Option<TimeSummary>,
    /// Waits the sampled wait estimate rests on.
    pub wait_sampled_estimate_n: u64,
    /// Over timed holds; `total` is the mean × acquisitions. Estimated unless `hold_exact`.
    pub hold_ns: TimeSummary,
    /// Whether every hold was timed (exact mode): then `hold_ns` is exact.
    pub hold_exact: bool,
    /// Holds timed: the sample count behind `hold_ns`.
    pub holds_timed: u64,
    /// acquisitions ÷ holds timed (1: all).
    pub hold_sampled_1_in: f64,
    /// Exact mode only: what the sampled mode would have estimated from the same run's holds
    /// (the holds the sampler picked), to compare with `hold_ns`.
    pub hold_sampled_estimate: Option<TimeSummary>,
    /// Holds the sampled estimate rests on.
    pub hold_sampled_estimate_n: u64,
    /// Total hold ÷ wall time: the fraction of the run the lock was held (≈ the serial fraction
    /// for the dominant lock; above 1 for a class of many locks held at once). Estimated when
    /// holds are sampled. `None` when it cannot be estimated: a class that is one lock
    /// ([`LockClass::is_one_lock`]) whose estimate exceeds the whole run (see
    /// `hold_occupancy_not_estimable`): such a figure is not printed.
    pub hold_occupancy: Option<f64>,
    /// Why `hold_occupancy` is `None`, with the estimate that was refused.
    pub hold_occupancy_not_estimable: Option<String>,
    /// Hold and wait spent while the same thread held another class, e.g. the counter sums done
    /// inside the scheduler lock (hold estimated when sampled).
    pub inside: Vec<InsideSummary>,
    pub paths: Vec<PathSummary>,
}

impl LockSummary {
    /// "exact" or "estimated from N timed holds (1 in M)": what the hold figures are.
    pub fn hold_provenance(&self) -> String {
        if self.hold_exact {
            "exact (every hold timed)".to_string()
        } else {
            format!(
                "estimated from {} timed holds (1 in {:.0})",
                self.holds_timed, self.hold_sampled_1_in
            )
        }
    }

    /// "exact" or "estimated from N timed waits (1 in M contended)": what the wait figures are.
    pub fn wait_provenance(&self) -> String {
        if self.contentions == 0 {
            "none (no contention)".to_string()
        } else if self.wait_exact {
            "exact (every contended wait timed)".to_string()
        } else {
            format!(
                "estimated from {} timed waits (1 in {:.0} contended)",
                self.waits_timed, self.wait_sampled_1_in
            )
        }
    }
}

/// Time a class spent nested inside another (hold and wait estimated when sampled).
#[derive(Clone, Debug, Serialize)]
pub struct InsideSummary {
    pub outer: &'static str,
    pub hold_ns: u64,
    pub wait_ns: u64,
    /// Why `hold_ns` is no figure, when it is not: held inside the outer lock longer than the
    /// outer lock itself was held (both estimates extrapolate sampled holds; the physical bound
    /// says one of them is off, and not which).
    pub hold_not_estimable: Option<String>,
}

impl LockClass {
    /// Whether the class is one lock in a run (the scheduler's and the request queue's: a run
    /// has one scheduler), so that its total hold cannot exceed the wall time.
    pub fn is_one_lock(self) -> bool {
        self == LockClass::SCHED || self == LockClass::QUEUE
    }
}

/// Why a lock's occupancy (total hold ÷ wall time) is not given: a reason shown in its place.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum OccupancyNotEstimable {
    /// No time was measured: nothing to divide by.
    NoMeasuredTime,
    /// One lock held longer than the run: `occupancy` (a fraction above 1), from holds that were
    /// sampled and extrapolated (`estimated`) or timed and added up.
    PastTheRun { occupancy: f64, estimated: bool },
}

impl std::fmt::Display for OccupancyNotEstimable {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match *self {
            OccupancyNotEstimable::NoMeasuredTime => f.write_str("not estimable: no measured time"),
            OccupancyNotEstimable::PastTheRun { occupancy, estimated } => {
                let how = match estimated {
                    true => "the sampled holds extrapolate",
                    false => "the timed holds add up",
                };
                let pct = 100.0 * occupancy;
                write!(
                    f,
                    "not estimable: {how} to {pct:.0}% of the run, more than one lock can be held \
                     (holders preempted while timed)"
                )
            }
        }
    }
}

/// Total hold ÷ wall time, checked against the physical bound where it is computed: one lock is
/// held at most the whole run. An estimate above it (sampled holds that a preempted holder
/// stretched, extrapolated to every acquisition) is refused with its reason, not clamped.
fn hold_occupancy(
    class: LockClass,
    hold_total_ns: u64,
    wall_ns: u64,
    estimated: bool,
) -> Result<f64, OccupancyNotEstimable> {
    if wall_ns == 0 {
        return Err(OccupancyNotEstimable::NoMeasuredTime);
    }
    let occupancy = hold_total_ns as f64 / wall_ns as f64;
    if class.is_one_lock() && occupancy > 1.0 {
        return Err(OccupancyNotEstimable::PastTheRun { occupancy, estimated });
    }
    Ok(occupancy)
}

impl LockStats {
    /// The report rows; `wall_ns` is the measured time (for occupancy).
    pub fn summarize(&self, wall_ns: u64) -> Vec<LockSummary> {
        install();
        let mut summaries: Vec<LockSummary> =
            self.classes.iter().map(|(class, s)| summarize_class(*class, s, wall_ns)).collect();
        bound_inside_holds(&mut summaries);
        summaries
    }
}

/// Marks each time held inside another lock that exceeds that lock's own hold: the physical
/// bound (a section nested in a lock ends before the lock is released) broken by two estimates.
fn bound_inside_holds(summaries: &mut [LockSummary]) {
    let outer_hold: Vec<(&'static str, u64)> =
        summaries.iter().map(|s| (s.name, s.hold_ns.total)).collect();
    for summary in summaries.iter_mut() {
        for inside in &mut summary.inside {
            let Some(&(_, outer)) = outer_hold.iter().find(|(name, _)| *name == inside.outer)
            else {
                continue;
            };
            if inside.hold_ns > outer {
                inside.hold_not_estimable = Some(format!(
                    "not estimable: {} ns inside {} against {} ns of {}'s own holds (both extrapolated from sampled holds)",
                    inside.hold_ns, inside.outer, outer, inside.outer
                ));
            }
        }
    }
}

/// Each path's share of the class's hold and wait (the paths' totals together: the figures a
/// reader compares to see which path the lock's time goes to).
fn with_shares(mut paths: Vec<PathSummary>) -> Vec<PathSummary> {
    let hold: u64 = paths.iter().map(|p| p.hold_ns).sum();
    let wait: u64 = paths.iter().map(|p| p.wait_ns).sum();
    let share = |part: u64, whole: u64| (whole > 0).then(|| part as f64 / whole as f64);
    for p in &mut paths {
        p.hold_share = share(p.hold_ns, hold);
        p.wait_share = share(p.wait_ns, wait);
    }
    paths
}

fn summarize_class(class: LockClass, s: &ClassStats, wall_ns: u64) -> LockSummary {
    let timed = s.hold.count();
    let scale = if timed == 0 { 0.0 } else { s.acquisitions as f64 / timed as f64 };
    let hold = TimeSummary::of(&s.hold, s.acquisitions);
    let waits_timed = s.wait.count();
    let wait_scale = if waits_timed == 0 { 0.0 } else { s.contentions as f64 / waits_timed as f64 };
    let inside = (0..MAX_CLASSES)
        .filter(|&i| s.hold_inside[i] != 0 || s.wait_inside[i] != 0)
        .map(|i| InsideSummary {
            outer: LockClass::from_index(i).name(),
            hold_ns: (ns(s.hold_inside[i]) as f64 * scale).round() as u64,
            wait_ns: (ns(s.wait_inside[i]) as f64 * wait_scale).round() as u64,
            hold_not_estimable: None,
        })
        .collect();
    let paths = LockPath::ALL
        .iter()
        .map(|&p| {
            let ps = s.paths[p as usize];
            let path_scale = if ps.holds_timed == 0 {
                0.0
            } else {
                ps.acquisitions as f64 / ps.holds_timed as f64
            };
            let path_wait_scale = if ps.waits_timed == 0 {
                0.0
            } else {
                ps.contentions as f64 / ps.waits_timed as f64
            };
            PathSummary {
                path: p,
                acquisitions: ps.acquisitions,
                contentions: ps.contentions,
                wait_ns: (ns(ps.wait as u128) as f64 * path_wait_scale).round() as u64,
                waits_timed: ps.waits_timed,
                hold_ns: (ns(ps.hold as u128) as f64 * path_scale).round() as u64,
                holds_timed: ps.holds_timed,
                hold_share: None,
                wait_share: None,
            }
        })
        .filter(|p| p.acquisitions != 0)
        .collect();
    let paths = with_shares(paths);
    let sample = &s.hold_sample;
    let occupancy = hold_occupancy(class, hold.total, wall_ns, timed == 0 || !s.holds_exact());
    LockSummary {
        name: class.name(),
        acquisitions: s.acquisitions,
        contentions: s.contentions,
        contention_pct: if s.acquisitions == 0 {
            0.0
        } else {
            100.0 * s.contentions as f64 / s.acquisitions as f64
        },
        owner_changes: s.owner_changes,
        wait_ns: TimeSummary::of(&s.wait, s.contentions),
        wait_exact: s.contentions > 0 && s.waits_exact(),
        waits_timed,
        wait_sampled_1_in: wait_scale,
        wait_sampled_estimate: (s.wait_sample.count() > 0)
            .then(|| TimeSummary::of(&s.wait_sample, s.contentions)),
        wait_sampled_estimate_n: s.wait_sample.count(),
        hold_ns: hold,
        hold_exact: timed > 0 && s.holds_exact(),
        holds_timed: timed,
        hold_sampled_1_in: scale,
        hold_sampled_estimate: (sample.count() > 0)
            .then(|| TimeSummary::of(sample, s.acquisitions)),
        hold_sampled_estimate_n: sample.count(),
        hold_occupancy: occupancy.as_ref().ok().copied(),
        hold_occupancy_not_estimable: occupancy.err().map(|why| why.to_string()),
        inside,
        paths,
    }
}

#[cfg(all(test, not(any(loom, shuttle))))]
mod tests {
    use super::*;

    #[test]
    fn an_occupancy_above_the_whole_run_is_refused_for_one_lock_only() {
        install();
        // The scheduler lock held 2.369 s of a 1 s run: not a figure, a reason.
        let refused = hold_occupancy(LockClass::SCHED, 2_369_000_000, 1_000_000_000, true);
        let why = refused.expect_err("one lock cannot be held 237% of the run").to_string();
        assert!(why.starts_with("not estimable") && why.contains("237%"), "{why}");
        let said =
            "not estimable: the sampled holds extrapolate to 237% of the run, more than one \
                    lock can be held (holders preempted while timed)";
        assert_eq!(why, said, "the same one line as before the reason was typed");
        assert_eq!(hold_occupancy(LockClass::QUEUE, 500, 1000, false), Ok(0.5));
        assert_eq!(hold_occupancy(LockClass::SCHED, 1000, 1000, false), Ok(1.0));
        // A class of many locks (the counter sums' per-slot locks) may add up past the run.
        assert_eq!(hold_occupancy(LockClass::STATS_SUM, 3000, 1000, true), Ok(3.0));
        let none = hold_occupancy(LockClass::SCHED, 0, 0, false);
        assert_eq!(none, Err(OccupancyNotEstimable::NoMeasuredTime), "nothing to divide by");
    }

    #[test]
    fn scheduler_classes_are_named() {
        install();
        assert_eq!(register("sched"), LockClass::SCHED);
        assert_eq!(LockClass::STATS_SUM.name(), "stats-sum");
        assert_eq!(LockClass::STATS_SECTION.name(), "stats-section");
        let extra = register("lockstat-test-class");
        assert_eq!(register("lockstat-test-class"), extra);
        assert_eq!(extra.name(), "lockstat-test-class");
    }

    #[test]
    fn path_guards_nest() {
        assert_eq!(current_path(), LockPath::Other);
        {
            let _a = enter(LockPath::Insert);
            {
                let _b = enter(LockPath::Stats);
                assert_eq!(current_path(), LockPath::Stats);
            }
            assert_eq!(current_path(), LockPath::Insert);
        }
        assert_eq!(current_path(), LockPath::Other);
    }

    #[test]
    fn a_hold_inside_a_lock_longer_than_the_lock_is_not_a_figure() {
        let hold = |total| TimeSummary { total, ..TimeSummary::default() };
        let inside = |hold_ns| InsideSummary {
            outer: "sched",
            hold_ns,
            wait_ns: 0,
            hold_not_estimable: None,
        };
        let mut summaries = vec![
            LockSummary { name: "sched", hold_ns: hold(71_330_000), ..LockSummary::default() },
            LockSummary {
                name: "stats-section",
                inside: vec![inside(71_950_000)],
                ..LockSummary::default()
            },
            LockSummary {
                name: "stats-sum",
                inside: vec![inside(4_590_000)],
                ..LockSummary::default()
            },
        ];
        bound_inside_holds(&mut summaries);
        let why =
            summaries[1].inside[0].hold_not_estimable.as_deref().expect("71.95 ms inside 71.33 ms");
        assert!(
            why.starts_with("not estimable: 71950000 ns inside sched against 71330000 ns"),
            "{why}"
        );
        assert_eq!(summaries[2].inside[0].hold_not_estimable, None, "within the bound: a figure");
    }

    #[test]
    fn each_path_has_its_share_of_the_class_and_none_of_nothing() {
        let path = |path, hold_ns, wait_ns| PathSummary {
            path,
            acquisitions: 1,
            contentions: 0,
            wait_ns,
            waits_timed: 0,
            hold_ns,
            holds_timed: 0,
            hold_share: None,
            wait_share: None,
        };
        let paths =
            with_shares(vec![path(LockPath::Insert, 300, 0), path(LockPath::Dispatch, 100, 0)]);
        let shares: Vec<(Option<f64>, Option<f64>)> =
            paths.iter().map(|p| (p.hold_share, p.wait_share)).collect();
        assert_eq!(
            shares,
            [(Some(0.75), None), (Some(0.25), None)],
            "no wait at all: no share of it"
        );
    }

    #[test]
    fn modes_round_trip() {
        for m in [Mode::Sampled, Mode::Exact] {
            assert_eq!(Mode::from_name(m.name()), Some(m));
        }
        assert_eq!(Mode::from_name("sometimes"), None);
    }
}
