//! Where the time goes: each folded stack in one category (stats, lock, outside, core, other),
//! and the table of the shares.

use super::folded::Folded;
use serde::Serialize;

/// Where a sample's time went.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Category {
    /// The scheduler's own work: paths, service trees, requests, queues, the clock.
    Core,
    /// Inside a `bfqg_stats_*` function (with the counters' own locks and all-slot sums), or the
    /// variant's deferral of the updates (batching, `run_deferred`, epoch pins).
    Stats,
    /// Taking, spinning on, yielding for, parking on or releasing the scheduler lock, the queue
    /// lock or any other lock, outside the statistics functions.
    Lock,
    /// The workload's simulated work outside the scheduler (`spin_for`, `--outside-ns`).
    Outside,
    /// Everything else: the job loop itself, request generation, thread start, unresolved frames.
    Other,
}

impl Category {
    pub const ALL: [Category; 5] =
        [Category::Core, Category::Stats, Category::Lock, Category::Outside, Category::Other];

    pub fn name(self) -> &'static str {
        match self {
            Category::Core => "core",
            Category::Stats => "stats",
            Category::Lock => "lock",
            Category::Outside => "outside",
            Category::Other => "other",
        }
    }
}

/// A `bfqg_stats_*` function or what runs inside one (the stats proper).
pub(crate) fn is_stats_function(frame: &str) -> bool {
    frame.starts_with("schedlab_core::stats::")
        || frame.starts_with("schedlab_core::policy::StatUpdate::apply_to")
        || frame.starts_with("schedlab_core::policy::apply_to")
        || frame.starts_with("schedlab_core::scheduler::apply_locked")
}

/// The last path segment of a frame, generic arguments dropped: `lock<T>` → `lock`,
/// `<X as Y>::route` → `route`.
pub(crate) fn leaf_name(frame: &str) -> &str {
    let mut end = frame.len();
    if frame.ends_with('>') {
        let mut depth = 0i32;
        for (i, c) in frame.char_indices().rev() {
            match c {
                '>' => depth += 1,
                '<' => {
                    depth -= 1;
                    if depth == 0 {
                        end = i;
                        break;
                    }
                }
                _ => {}
            }
        }
    }
    let name = &frame[..end];
    name.rsplit("::").next().unwrap_or(name)
}

/// The variants' deferral of updates: their hooks (not `route`, a constant the scheduler asks on
/// every update, even for `no-stats`), batching, epoch pins.
pub(crate) fn is_stats_machinery(frame: &str) -> bool {
    let leaf = leaf_name(frame);
    // A variant's code lives in its module (`schedlab_variants::queue_lock::...`, or a trait
    // impl `<schedlab_variants::...>`); the crate root is the registry (`schedlab_variants::visit`
    // on the thread that starts a run), not statistics.
    let head = &frame[..frame.find('<').unwrap_or(frame.len())];
    let in_variant = frame.starts_with("<schedlab_variants::")
        || (frame.starts_with("schedlab_variants::") && head.matches("::").count() >= 2);
    (in_variant && leaf != "route")
        || frame.starts_with("crossbeam_epoch::")
        || leaf == "run_deferred"
        || (frame.starts_with("schedlab_core::policy::") && leaf == "push")
}

pub(crate) fn is_lock(frame: &str) -> bool {
    (frame.starts_with("schedlab_core::sync::") && leaf_name(frame).contains("lock"))
        || frame.contains("lock_api::")
        || frame.contains("parking_lot")
}

pub(crate) fn is_outside(frame: &str) -> bool {
    // `spin_for` lives in `driver/workload.rs`; the name from before that move still counts, so
    // that folded stacks written earlier classify the same.
    frame.starts_with("schedlab_benches::driver::workload::spin_for")
        || frame.starts_with("schedlab_benches::workload::spin_for")
}

pub(crate) fn is_sum(frame: &str) -> bool {
    frame.starts_with("schedlab_core::stats::") && leaf_name(frame) == "sum"
}

/// The category of one folded stack, and whether it is inside an all-slot sum
/// (`PerCpuCounters::sum`, `percpu_counter_sum`).
///
/// Precedence, first match over the whole stack: a statistics function (so the counters' own
/// locks count as stats, as in a profile's "children" of `bfqg_stats_*`); then a lock; then the
/// variant's stats machinery (so a queue lock taken by `run_deferred` counts as lock); then
/// `spin_for`; then any other `schedlab_core` frame; else other.
pub fn classify(stack: &str) -> (Category, bool) {
    let frames = || stack.split(';');
    if frames().any(is_stats_function) {
        return (Category::Stats, frames().any(is_sum));
    }
    let category = if frames().any(is_lock) {
        Category::Lock
    } else if frames().any(is_stats_machinery) {
        Category::Stats
    } else if frames().any(is_outside) {
        Category::Outside
    } else if frames()
        .any(|f| f.starts_with("schedlab_core::") || f.starts_with("<schedlab_core::"))
    {
        Category::Core
    } else {
        Category::Other
    };
    (category, false)
}

/// Samples per category: where the time goes.
#[derive(Clone, Debug, Default, Serialize)]
pub struct TimeShares {
    pub samples: u64,
    /// Per [`Category::ALL`], in that order.
    pub counts: [u64; 5],
    /// Stats samples inside an all-slot sum (a part of `counts[Stats]`).
    pub sums: u64,
    /// Share (0..1) of the process's CPU time that left no sample ([`Folded::unsampled_share`]).
    pub unsampled: Option<f64>,
    /// The process's CPU seconds while sampling (measured, /proc/self/stat).
    pub cpu_s: Option<f64>,
    /// The CPU seconds the samples stand for: samples ÷ frequency.
    pub sampled_s: f64,
}

impl TimeShares {
    pub fn from_folded(folded: &Folded) -> TimeShares {
        let mut t = TimeShares {
            unsampled: folded.unsampled_share(),
            cpu_s: folded.cpu_s,
            sampled_s: if folded.frequency > 0 {
                folded.samples() as f64 / folded.frequency as f64
            } else {
                0.0
            },
            ..TimeShares::default()
        };
        for (stack, &n) in &folded.stacks {
            let (category, in_sum) = classify(stack);
            t.counts[category as usize] += n;
            t.samples += n;
            if in_sum {
                t.sums += n;
            }
        }
        t
    }

    fn pct(&self, n: u64) -> f64 {
        if self.samples == 0 {
            0.0
        } else {
            100.0 * n as f64 / self.samples as f64
        }
    }

    /// Percent of all samples in `category`.
    pub fn share(&self, category: Category) -> f64 {
        self.pct(self.counts[category as usize])
    }

    /// Percent of all samples inside an all-slot sum.
    pub fn sums_share(&self) -> f64 {
        self.pct(self.sums)
    }

    /// The shares of every category added up (100 with any sample, 0 without).
    pub fn total_share(&self) -> f64 {
        Category::ALL.iter().map(|&c| self.share(c)).sum()
    }

    /// The 95 % interval of the stats share ([`crate::stats::wilson_interval_pct`]): what its
    /// sample count allows it to say.
    pub fn stats_interval(&self) -> Option<crate::stats::Interval> {
        crate::stats::wilson_interval_pct(self.counts[Category::Stats as usize], self.samples)
    }

    /// The 95 % interval of [`TimeShares::stats_of_work`], from the core and stats samples.
    pub fn stats_of_work_interval(&self) -> Option<crate::stats::Interval> {
        let stats = self.counts[Category::Stats as usize];
        crate::stats::wilson_interval_pct(stats, stats + self.counts[Category::Core as usize])
    }

    /// Stats as a percent of the scheduler's work (core + stats: lock acquiring and waiting
    /// left out, as a kernel profile shows them under the spinlock's own symbols). The seeds'
    /// "stats ≈ 40 % of BFQ's execution time" compares with this figure.
    pub fn stats_of_work(&self) -> f64 {
        let work = self.counts[Category::Core as usize] + self.counts[Category::Stats as usize];
        if work == 0 {
            0.0
        } else {
            100.0 * self.counts[Category::Stats as usize] as f64 / work as f64
        }
    }
}

/// The seeds' figure for `sched-lock` (kernel-bfq.md §1): stats ≈ 40 % of BFQ's execution time.
pub const SEED_STATS_SHARE: &str = "≈ 40 %";
