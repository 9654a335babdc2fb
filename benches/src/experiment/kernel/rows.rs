//! The kernel peer's rows: the configurations it runs, one run's figures, a configuration's row,
//! the model's row beside it, and a point's results with the elevator's cost measured there.
//!
//! The data both the run (`super`) and the fidelity table read: it sits below both, so neither
//! imports the other to reach it (the harness's stages have no circles).

use super::contention::ContentionSummary;
use super::profile::{self, KernelShares};
use crate::stats::Spread;
use serde::Serialize;
use std::path::PathBuf;

/// A kernel configuration.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum KernelSched {
    None,
    MqDeadline,
    Bfq,
    /// BFQ with the jobs spread over the groups (cgroups), as the model's `--groups N`.
    BfqGroups,
}

impl KernelSched {
    pub fn name(self) -> &'static str {
        match self {
            KernelSched::None => "none",
            KernelSched::MqDeadline => "mq-deadline",
            KernelSched::Bfq => "bfq",
            KernelSched::BfqGroups => "bfq-groups",
        }
    }

    pub(super) fn elevator(self) -> &'static str {
        match self {
            KernelSched::None => "none",
            KernelSched::MqDeadline => "mq-deadline",
            KernelSched::Bfq | KernelSched::BfqGroups => "bfq",
        }
    }
}

/// One configuration of the axis the fidelity table is measured over: jobs and queue depth (and
/// the engine). The first is the main one (`--threads`, `--iodepth`): its rows are the report's
/// `kernel` and `model`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct Point {
    pub threads: usize,
    pub iodepth: usize,
    pub ioengine: &'static str,
}

impl Point {
    /// "2 jobs × iodepth 32 (io_uring)".
    pub fn label(&self) -> String {
        format!(
            "{} job{} × iodepth {} ({})",
            self.threads,
            if self.threads == 1 { "" } else { "s" },
            self.iodepth,
            self.ioengine
        )
    }

    /// The axis `--points auto` measures: {1, threads} × {1, iodepth} with the engine given, the
    /// main point first; four points unless a value is already 1.
    pub fn auto(threads: usize, iodepth: usize, ioengine: &'static str) -> Vec<Point> {
        let mut v = Vec::new();
        for t in [threads, 1] {
            for d in [iodepth, 1] {
                let p = Point { threads: t, iodepth: d, ioengine };
                if !v.contains(&p) {
                    v.push(p);
                }
            }
        }
        v
    }
}

/// One kernel run.
#[derive(Clone, Debug, Serialize)]
pub struct KernelRun {
    pub round: usize,
    pub iops: f64,
    pub ios: u64,
    pub runtime_s: f64,
    /// Busy CPU time of the whole machine per I/O, µs (`/proc/stat`, all CPUs).
    pub cpu_per_io_us: Option<f64>,
    /// fio's own CPU time per I/O, µs (its accounting cgroup: submission and what runs in its
    /// context), where the accounting cgroup exists.
    pub fio_cpu_per_io_us: Option<f64>,
    /// The experiment's CPU time per I/O, µs: fio's cgroup, the kernel threads (loop worker,
    /// kworkers, ksoftirqd) and interrupts on idle CPUs ([`super::system::CpuSplit`]), where the
    /// accounting cgroup exists. Unlike `cpu_per_io_us` it leaves other processes out.
    pub experiment_cpu_per_io_us: Option<f64>,
    /// CPUs other processes used during the run (their CPU time ÷ the window), where the
    /// accounting cgroup exists.
    pub other_cpus: Option<f64>,
    /// Lock contention (recorded runs only).
    pub contention: Option<ContentionSummary>,
    /// How long a job-control stop (SIGTSTP, SIGSTOP) lasted during this run, seconds: this
    /// process stopped, or fio's processes seen stopped (`fio::run_stopped`); `None` (null) when
    /// it was not. Set only on a run kept after [`super::STOPPED_RETRIES`] re-runs.
    pub stopped_s: Option<f64>,
    /// Earlier runs of this one thrown away because a job-control stop disturbed them.
    pub reruns_stopped: u32,
}

/// A kernel configuration's results.
#[derive(Clone, Debug, Serialize)]
pub struct KernelRow {
    pub config: KernelSched,
    /// Plain runs (no recording).
    pub runs: Vec<KernelRun>,
    /// Recorded runs (lock contention).
    pub recorded: Vec<KernelRun>,
    pub kiops: Spread,
    pub cpu_per_io_us: Spread,
    /// The experiment's CPU per I/O (see [`KernelRun::experiment_cpu_per_io_us`]).
    pub experiment_cpu_per_io_us: Option<Spread>,
    /// The scheduler lock's contended acquisitions per I/O, over the recorded runs.
    pub sched_contentions_per_io: Option<Spread>,
    pub other_contentions_per_io: Option<Spread>,
    /// The scheduler lock's mean wait, ns (median over recorded runs) and longest wait.
    pub sched_wait_avg_ns: Option<f64>,
    pub sched_wait_max_ns: Option<u64>,
    /// What recording cost: 100 × (1 − recorded IOPS ÷ plain IOPS), medians.
    pub recording_cost_pct: Option<f64>,
    /// The profiled run's shares (`perf record -a -g`), and its own figures (a run before the
    /// rounds: what the elevator cost is calibrated from).
    pub profile: Option<KernelShares>,
    pub profile_run: Option<KernelRun>,
    pub flamegraph: Option<PathBuf>,
}

/// A model row's results.
#[derive(Clone, Debug, Serialize)]
pub struct ModelRow {
    pub entry: &'static str,
    pub groups: usize,
    pub kiops: Spread,
    /// (round, KIOPS) of each run, for within-round ratios.
    pub kiops_by_round: Vec<(usize, f64)>,
    /// The scheduler lock's acquisitions per request (lock statistics; median over runs).
    pub sched_acquisitions_per_io: Option<f64>,
    /// The scheduler lock by path (lock statistics' `by path`): (path, acquisitions per request,
    /// contended acquisitions per request), medians over runs.
    pub sched_by_path: Vec<(String, f64, f64)>,
    /// This process's CPU time per request, µs.
    pub cpu_per_io_us: Spread,
    /// The scheduler lock's contended acquisitions per request (lock statistics).
    pub sched_contentions_per_io: Option<Spread>,
    pub sched_wait_avg_ns: Option<f64>,
    pub consistent: bool,
    /// From a profiled run: statistics' share of the scheduler's work, %.
    pub stats_share_of_scheduler_pct: Option<f64>,
    /// From a profiled run: the scheduler's share of the CPU (its work, its statistics, its
    /// locks), % of samples.
    pub scheduler_pct: Option<f64>,
}

/// A kernel figure beside the model's.
#[derive(Clone, Debug, Serialize)]
pub struct SideBySide {
    pub what: String,
    pub kernel: Option<f64>,
    pub model: Option<f64>,
    pub unit: &'static str,
}

/// One point's results (the main point's are the report's own fields).
#[derive(Clone, Debug, Serialize)]
pub struct PointResult {
    pub point: Point,
    pub model_outside_ns: u64,
    /// The elevator cost the model's BFQ rows paid per request, ns.
    pub model_elevator_ns: u64,
    pub kernel: Vec<KernelRow>,
    pub model: Vec<ModelRow>,
    pub side_by_side: Vec<SideBySide>,
    pub elevator: Option<ElevatorCost>,
    /// The kernel's time at each lock site and between them, and the model's pads
    /// (`super::sites`); `None` without a bfq profile or without the model.
    pub sites: Option<super::sites::SiteCalibration>,
}

/// The elevator's own cost for one scheduler: what its configuration spends per I/O over `none`
/// outside the scheduler's own functions.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct SchedulerCost {
    /// The scheduler configuration's CPU per I/O in its profiled run (see [`ElevatorCost::basis`]), µs.
    pub cpu_per_io_us: f64,
    /// The scheduler's own functions (`bfq_*`, `dd_*`), % of the profile's experiment samples, and
    /// as µs per I/O (share × `cpu_per_io_us`).
    pub own_pct: f64,
    pub own_us: f64,
    /// More than `none`, µs per I/O.
    pub extra_us: f64,
    /// The elevator machinery's: `extra_us − own_us`, µs per I/O; `None` when that comes out
    /// below 0 (why in `elevator_not_estimable`): a cost cannot be negative, so the two noisy
    /// profiled runs' difference says nothing of it (refused here, never clamped to 0).
    pub elevator_us: Option<f64>,
    pub elevator_not_estimable: Option<String>,
    /// The frames (other than the scheduler's own) whose inclusive µs per I/O grew most over
    /// `none`'s, µs per I/O: what the elevator cost is made of. Nested frames overlap.
    pub largest: Vec<(String, f64)>,
}

/// The elevator's cost at one point: blk-mq's machinery that `none` skips, measured from the
/// differential profile (scheduler minus none, less the scheduler's own functions).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ElevatorCost {
    /// Which CPU per I/O the figures rest on: "experiment" (fio's cgroup, kernel threads,
    /// interrupts; other processes left out) or "all CPUs" (no accounting cgroup).
    pub basis: &'static str,
    pub none_cpu_per_io_us: f64,
    pub bfq: Option<SchedulerCost>,
    pub mq_deadline: Option<SchedulerCost>,
}

/// A profiled kernel run: its configuration, its shares and its own figures.
#[derive(Clone, Copy, Debug)]
pub struct Profiled<'a> {
    pub config: KernelSched,
    pub shares: &'a KernelShares,
    pub run: &'a KernelRun,
}

impl ElevatorCost {
    /// From the profiled runs of a point: needs `none`'s; a scheduler without its profiled run
    /// gets no figure. The CPU per I/O is each profiled run's own (the experiment's, where every
    /// run measured it).
    pub fn of(profiled: &[Profiled]) -> Option<ElevatorCost> {
        let find = |c: KernelSched| profiled.iter().find(|p| p.config == c);
        let none = find(KernelSched::None)?;
        let experiment = profiled.iter().all(|p| p.run.experiment_cpu_per_io_us.is_some());
        let cpu = |p: &Profiled| {
            if experiment { p.run.experiment_cpu_per_io_us } else { p.run.cpu_per_io_us }
                .filter(|v| *v > 0.0)
        };
        let none_cpu = cpu(none)?;
        let cost = |c: KernelSched,
                    own: fn(&KernelShares) -> f64,
                    is_own: fn(&str) -> bool|
         -> Option<SchedulerCost> {
            let p = find(c)?;
            let sched_cpu = cpu(p)?;
            // Shares are of the experiment's samples (other processes' left out): their µs per
            // I/O is share × the experiment's CPU per I/O.
            let own_pct = own(p.shares);
            let own_us = own_pct / 100.0 * sched_cpu;
            let extra_us = sched_cpu - none_cpu;
            let mut largest: Vec<(String, f64)> = p
                .shares
                .frames_pct
                .iter()
                .filter(|(f, _)| !is_own(f) && !f.contains("spin_lock") && f != "[unknown]")
                .map(|(f, pct)| {
                    let before = none
                        .shares
                        .frames_pct
                        .iter()
                        .find(|(g, _)| g == f)
                        .map_or(0.0, |(_, p)| p / 100.0 * none_cpu);
                    (f.clone(), pct / 100.0 * sched_cpu - before)
                })
                .filter(|(_, d)| *d > 0.0)
                .collect();
            largest.sort_by(|a, b| b.1.total_cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
            largest.truncate(6);
            let elevator_us = extra_us - own_us;
            let below_zero = elevator_us < 0.0;
            Some(SchedulerCost {
                cpu_per_io_us: sched_cpu,
                own_pct,
                own_us,
                extra_us,
                elevator_us: (!below_zero).then_some(elevator_us),
                elevator_not_estimable: below_zero.then(|| {
                    format!(
                        "not estimable: {elevator_us:.2} µs < 0 (over none {extra_us:.2} µs, \
                         own functions {own_us:.2} µs)"
                    )
                }),
                largest,
            })
        };
        Some(ElevatorCost {
            basis: if experiment { "experiment" } else { "all CPUs" },
            none_cpu_per_io_us: none_cpu,
            bfq: cost(KernelSched::Bfq, |p| p.bfq_pct, profile::is_bfq),
            mq_deadline: cost(KernelSched::MqDeadline, |p| p.deadline_pct, profile::is_deadline),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(cpu_per_io_us: f64) -> KernelRun {
        KernelRun {
            round: 0,
            iops: 1e5,
            ios: 100_000,
            runtime_s: 1.0,
            cpu_per_io_us: Some(cpu_per_io_us),
            fio_cpu_per_io_us: None,
            experiment_cpu_per_io_us: Some(cpu_per_io_us),
            other_cpus: Some(0.0),
            contention: None,
            stopped_s: None,
            reruns_stopped: 0,
        }
    }

    /// The elevator machinery's cost of bfq at 11 µs per I/O over none's 10, its own functions
    /// on `bfq_pct` of the samples.
    fn bfq_elevator(bfq_pct: f64) -> SchedulerCost {
        let (none_run, bfq_run) = (run(10.0), run(11.0));
        let none_shares = KernelShares::default();
        let bfq_shares = KernelShares { bfq_pct, ..KernelShares::default() };
        let profiled = [
            Profiled { config: KernelSched::None, shares: &none_shares, run: &none_run },
            Profiled { config: KernelSched::Bfq, shares: &bfq_shares, run: &bfq_run },
        ];
        ElevatorCost::of(&profiled).and_then(|e| e.bfq).expect("bfq and none were profiled")
    }

    #[test]
    fn an_elevator_cost_below_zero_is_refused_where_it_is_computed_not_clamped() {
        // Own functions 2.2 µs of the 1 µs over none: the difference is noise, not a cost.
        let refused = bfq_elevator(20.0);
        assert_eq!(refused.elevator_us, None);
        let why = refused.elevator_not_estimable.unwrap_or_default();
        assert!(why.starts_with("not estimable: -1.20 µs < 0"), "{why}");
        let kept = bfq_elevator(5.0);
        assert!(kept.elevator_us.is_some_and(|us| (us - 0.45).abs() < 1e-9), "{kept:?}");
        assert_eq!(kept.elevator_not_estimable, None);
    }
}
