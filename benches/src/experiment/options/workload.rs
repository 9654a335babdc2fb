//! The workload's flags, shared by `run`, `compare`, `sweep` and `predict`, and their conversion
//! into a [`WorkloadConfig`]: one definition, so the commands cannot drift apart.

use super::context::Context;
use super::parse::{
    bad_input, parse_bs, parse_inject, parse_insert, parse_kernel, parse_rw, seconds,
};
use super::units;
use crate::driver::workload::WorkloadConfig;
use crate::error::ExperimentError;
use crate::experiment::compare::NoisePolicy;
use schedlab_core::LockKind;

/// What the jobs do (everything but how many, how long and which lock).
#[derive(clap::Args, Debug, Clone)]
pub struct WorkloadFlags {
    /// Groups besides the root (a 3-level hierarchy), 0..=4096.
    #[arg(long, default_value_t = 4, value_parser = units::count::<0, 4096>, allow_negative_numbers = true)]
    pub groups: u64,
    /// Group weights, comma-separated, assigned in turn (1..=1000).
    #[arg(long, default_value = "100,200,300", allow_negative_numbers = true)]
    pub weights: String,
    /// Group removals per second, 0..=10000 (each also creates a group and moves a process into it).
    #[arg(long, default_value_t = 0.0, value_parser = units::churn, allow_hyphen_values = true)]
    pub churn: f64,
    /// Reads of every group's statistics per second during the run, 0..=10000, by a thread of
    /// their own (a monitor reading io.stat; under rstat each read flushes the pending lists).
    #[arg(long, default_value_t = 0.0, value_parser = units::stats_reads, allow_hyphen_values = true)]
    pub stats_reads: f64,
    /// Per-CPU slots of every statistics counter, 1..=64.
    #[arg(long, default_value_t = 8, value_parser = units::count::<1, 64>, allow_negative_numbers = true)]
    pub slots: u64,
    /// Seed of the request generators.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Access pattern: randread, randwrite, read, write.
    #[arg(long, default_value = "randread")]
    pub rw: String,
    /// Block size in bytes (a multiple of 512, at most 128 KiB), e.g. 4096 or 4k.
    #[arg(long, default_value = "4k")]
    pub bs: String,
    /// Requests each job keeps outstanding, 1..=1024.
    #[arg(long, default_value_t = 1, value_parser = units::count::<1, 1024>, allow_negative_numbers = true)]
    pub iodepth: u64,
    /// Simulated work outside the scheduler per request, ns, 0..=1000000000 (0: null device).
    #[arg(long, default_value_t = 0, value_parser = units::count::<0, 1_000_000_000>, allow_negative_numbers = true)]
    pub outside_ns: u64,
    /// Idle slice after a sync queue empties, ns, 0..=100000000 (0: no idling, as in the seeds'
    /// benchmark; BFQ's default is 8000000).
    #[arg(long, default_value_t = 0, value_parser = units::count::<0, 100_000_000>, allow_negative_numbers = true)]
    pub slice_idle_ns: u64,
    /// Pin job i to the i-th allowed CPU (as fio's cpus_allowed, one job per CPU).
    #[arg(long)]
    pub pin: bool,
    /// How requests enter the scheduler: `direct` (under the scheduler lock, BFQ through 2023)
    /// or `lists` (separate insertion lists spliced by dispatch, proposed for BFQ in 2024); `compare` also
    /// takes `both` (every variant on each path, side by side).
    #[arg(long, default_value = "direct")]
    pub insert: String,
    /// Which of BFQ's lock sites a submission runs: `4.12` (the seeds' kernels: bio merge, then
    /// insert), `6.18` (bio merge, depth limit, then insert) or `bare` (insert only: the model
    /// before those sites, for comparisons). 6.18's BFQ inserts under its lock, as `direct`.
    #[arg(long, default_value = "4.12")]
    pub kernel: String,
    /// blk-mq's elevator machinery that the kernel's `none` skips, ns per request,
    /// 0..=1000000000: spun outside every lock by each scheduler row, not by `none` (`schedlab
    /// kernel` measures it on the running kernel).
    #[arg(long, default_value_t = 0, value_parser = units::count::<0, 1_000_000_000>, allow_negative_numbers = true)]
    pub elevator_ns: u64,
    /// A known cost per request where it enters the scheduler, ns, 0..=1000000 (0: none); the
    /// model's half of `schedlab kernel --inject`.
    #[arg(long, default_value_t = 0, value_parser = units::count::<0, 1_000_000>, allow_negative_numbers = true)]
    pub inject_ns: u64,
    /// Where --inject-ns is spent: `inside` (holding the scheduler lock where the request enters
    /// the scheduler: the direct insert, or the lists' splice per request) or `outside` (in the
    /// submitting thread just before the insert). Needs --inject-ns.
    #[arg(long, default_value = "inside", value_name = "inside|outside", requires = "inject_ns")]
    pub at: String,
}

impl WorkloadFlags {
    /// These flags as `schedlab run` takes them, each that differs from its default (so that an
    /// older build without a newer flag still runs the workloads that leave it at its default):
    /// the jobs of a run made by a schedlab executable as a child process (`driver::child`).
    pub fn run_args(&self) -> Vec<String> {
        let d: WorkloadFlags = super::parse::defaults();
        let mut args = Vec::new();
        let mut flag = |name: &str, differs: bool, value: String| {
            if differs {
                args.push(format!("--{name}"));
                args.push(value);
            }
        };
        flag("groups", self.groups != d.groups, self.groups.to_string());
        flag("weights", self.weights != d.weights, self.weights.clone());
        flag("churn", self.churn != d.churn, self.churn.to_string());
        flag("stats-reads", self.stats_reads != d.stats_reads, self.stats_reads.to_string());
        flag("slots", self.slots != d.slots, self.slots.to_string());
        flag("seed", self.seed != d.seed, self.seed.to_string());
        flag("rw", self.rw != d.rw, self.rw.clone());
        flag("bs", self.bs != d.bs, self.bs.clone());
        flag("iodepth", self.iodepth != d.iodepth, self.iodepth.to_string());
        flag("outside-ns", self.outside_ns != d.outside_ns, self.outside_ns.to_string());
        flag(
            "slice-idle-ns",
            self.slice_idle_ns != d.slice_idle_ns,
            self.slice_idle_ns.to_string(),
        );
        flag("insert", self.insert != d.insert, self.insert.clone());
        flag("kernel", self.kernel != d.kernel, self.kernel.clone());
        flag("elevator-ns", self.elevator_ns != d.elevator_ns, self.elevator_ns.to_string());
        // `--at` needs `--inject-ns`: the two go together.
        let injected = self.inject_ns != d.inject_ns || self.at != d.at;
        flag("inject-ns", injected, self.inject_ns.to_string());
        flag("at", injected, self.at.clone());
        if self.pin {
            args.push("--pin".into());
        }
        args
    }
}

/// How many jobs, for how long, on which lock: what each command decides itself.
pub struct RunShape {
    pub threads: usize,
    pub duration: f64,
    pub ramp: f64,
    pub lock: LockKind,
    pub lockstat: bool,
    pub lockstat_mode: schedlab_core::lockstat::Mode,
}

impl WorkloadFlags {
    /// The workload config (checked here for its own flags; the caller validates it against the
    /// variant with `WorkloadConfig::validate`).
    pub fn config(
        &self,
        shape: RunShape,
        cx: &mut Context,
    ) -> Result<WorkloadConfig, ExperimentError> {
        let rw = parse_rw(&self.rw)?;
        let weights = self
            .weights
            .split(',')
            .map(|w| {
                w.trim()
                    .parse::<i64>()
                    .map_err(|_| bad_input(format!("--weights must be numbers, got `{w}`")))
            })
            .collect::<Result<Vec<_>, _>>()?;
        if let Some(bad) = weights.iter().find(|w| !(1..=1000).contains(*w)) {
            return Err(bad_input(format!("group weight must be 1..=1000, got {bad}")));
        }
        Ok(WorkloadConfig {
            threads: shape.threads,
            duration: seconds("duration", shape.duration, false)?,
            ramp: seconds("ramp", shape.ramp, true)?,
            lock: shape.lock,
            groups: self.groups as usize,
            weights: weights.into_iter().map(|w| w as u64).collect(),
            churn_per_sec: self.churn,
            stats_reads_per_sec: self.stats_reads,
            slots: self.slots as usize,
            seed: self.seed,
            rw,
            bs_sectors: parse_bs(&self.bs)?,
            iodepth: self.iodepth as usize,
            outside_ns: self.outside_ns,
            slice_idle_ns: self.slice_idle_ns,
            pin_cpus: self.pin,
            lockstat: shape.lockstat,
            lockstat_mode: shape.lockstat_mode,
            lockstat_toggle: None,
            trace_window: None,
            insert: parse_insert(&self.insert)?,
            kernel: parse_kernel(&self.kernel)?,
            elevator_ns: self.elevator_ns,
            inject: parse_inject(self.inject_ns, &self.at, cx)?,
            completion: crate::driver::completion::CompletionMode::Inline,
            preemption: crate::driver::turns::Preemption::Anywhere,
            pads: schedlab_core::SitePads::NONE,
        })
    }
}

/// The workload knobs shared by `compare` and `sweep` (see `schedlab run --help` for one run).
#[derive(clap::Args, Debug, Clone)]
pub struct WorkloadArgs {
    /// Measured time of each plain run: seconds (2, 0.5) or a duration (500ms); more than 0, at
    /// most a day.
    #[arg(long, default_value = "2", value_parser = units::seconds, allow_hyphen_values = true)]
    pub duration: f64,
    /// Time run before measuring, every run: seconds or a duration, at most a day.
    #[arg(long, default_value = "0.25", value_parser = units::seconds, allow_hyphen_values = true)]
    pub ramp: f64,
    #[command(flatten)]
    pub jobs: WorkloadFlags,
    /// Hold-time sampling of the counter-sum locks: time one hold in N, 1..=1000000 (1: every
    /// hold; counts stay exact).
    #[arg(long, default_value_t = schedlab_core::lockstat::DEFAULT_SUM_SAMPLING as u64, value_parser = units::count::<1, 1_000_000>, allow_negative_numbers = true)]
    pub sum_sampling: u64,
    /// A run during which other processes used more than this many CPUs (0..=1024) is noisy: it
    /// is re-run.
    #[arg(long, default_value_t = 0.3, value_parser = units::cpus, allow_hyphen_values = true)]
    pub max_other_cpus: f64,
    /// Re-runs of a noisy run, 0..=10 (pauses of 1, 2, 4 ... s between); the last is kept and counted.
    #[arg(long, default_value_t = 3, value_parser = units::count::<0, 10>, allow_negative_numbers = true)]
    pub retries: u64,
}

impl WorkloadArgs {
    /// The workload for `threads` jobs (validated against variants by the caller).
    pub fn config(
        &self,
        threads: usize,
        cx: &mut Context,
    ) -> Result<WorkloadConfig, ExperimentError> {
        self.jobs.config(
            RunShape {
                threads,
                duration: self.duration,
                ramp: self.ramp,
                lock: LockKind::FairSpin,
                lockstat: false,
                lockstat_mode: schedlab_core::lockstat::Mode::Sampled,
            },
            cx,
        )
    }

    pub fn noise_policy(&self) -> Result<NoisePolicy, ExperimentError> {
        if !(self.max_other_cpus.is_finite() && self.max_other_cpus >= 0.0) {
            return Err(bad_input(format!(
                "--max-other-cpus must be >= 0, got {}",
                self.max_other_cpus
            )));
        }
        if self.retries > 10 {
            return Err(bad_input(format!("--retries must be 0..=10, got {}", self.retries)));
        }
        Ok(NoisePolicy { max_other_cpus: self.max_other_cpus, retries: self.retries as u32 })
    }

    pub fn sum_sampling(&self) -> Result<u32, ExperimentError> {
        match u32::try_from(self.sum_sampling) {
            Ok(n) if (1..=1_000_000).contains(&n) => Ok(n),
            _ => Err(bad_input(format!(
                "--sum-sampling must be 1..=1000000, got {}",
                self.sum_sampling
            ))),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::WorkloadFlags;

    fn parse(args: &[String]) -> Result<WorkloadFlags, clap::Error> {
        use clap::{Args, FromArgMatches};
        let argv = std::iter::once("x".to_string()).chain(args.iter().cloned());
        let matches =
            WorkloadFlags::augment_args(clap::Command::new("x")).try_get_matches_from(argv)?;
        WorkloadFlags::from_arg_matches(&matches)
    }

    /// Generated from the flags' own definition: every flag, set alone to a value other than
    /// its default, goes into `run_args`, and the arguments read back give the same flags (so
    /// that a flag added to the jobs and not to `run_args` fails here).
    #[test]
    fn every_job_flag_that_differs_from_its_default_goes_to_the_child_run() {
        use clap::Args;
        let defaults = format!("{:?}", parse(&[]).unwrap());
        assert!(super::super::parse::defaults::<WorkloadFlags>().run_args().is_empty());
        let candidates =
            ["2", "3", "7", "0.5", "1,2", "100,200", "randwrite", "8k", "lists", "6.18", "outside"];
        let command = WorkloadFlags::augment_args(clap::Command::new("x"));
        let mut tried = 0;
        for arg in command.get_arguments() {
            let long = arg.get_long().expect("every job flag is long");
            if matches!(long, "help" | "version") {
                continue;
            }
            let values: Vec<Option<&str>> = if arg.get_action().takes_values() {
                candidates.iter().map(|c| Some(*c)).collect()
            } else {
                vec![None]
            };
            let set = values.iter().find_map(|value| {
                let mut args = vec![format!("--{long}")];
                args.extend(value.map(str::to_string));
                // `--at` is taken only beside `--inject-ns`.
                let with_inject = [vec!["--inject-ns".to_string(), "7".into()], args.clone()];
                let flags = parse(&args).or_else(|_| parse(&with_inject.concat())).ok()?;
                (format!("{flags:?}") != defaults).then_some(flags)
            });
            let flags = set.unwrap_or_else(|| panic!("--{long}: no value tried differs"));
            let args = flags.run_args();
            assert!(args.contains(&format!("--{long}")), "--{long} left out: {args:?}");
            let back = parse(&args).unwrap_or_else(|e| panic!("--{long}: {args:?}: {e}"));
            assert_eq!(format!("{back:?}"), format!("{flags:?}"), "--{long}: {args:?}");
            tried += 1;
        }
        assert!(tried >= 17, "the job flags were found: {tried}");
    }

    #[test]
    fn defaults_are_the_documented_ones() {
        let w: super::WorkloadArgs = super::super::parse::defaults();
        assert_eq!(w.retries, 3);
        assert_eq!(w.jobs.groups, 4);
    }
}
