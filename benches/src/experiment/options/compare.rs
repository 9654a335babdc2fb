//! `schedlab compare`'s options (and plain `schedlab`'s): every variant side by side
//! ([`crate::experiment::compare`]).

use super::workload::WorkloadArgs;
use super::context::Context;
use super::parse::{bad_input, parse_inserts, parse_locks, parse_variants, seconds};
use super::units;
use crate::driver::workload::entry_name;
use crate::experiment::compare::{CompareConfig, Measure};
use crate::error::ExperimentError;
use schedlab_core::InsertPathKind;

#[derive(clap::Args, Debug, Clone)]
pub struct CompareOptions {
    /// Jobs (threads), 1..=1024 (with the fair lock at most 64 per CPU); default: every CPU.
    #[arg(long, value_parser = units::count::<1, 1024>, allow_negative_numbers = true)]
    threads: Option<u64>,
    /// Rounds, 1..=1000; each runs every variant once per lock kind, in a rotated order.
    #[arg(long, default_value_t = 3, value_parser = units::count::<1, 1000>, allow_negative_numbers = true)]
    rounds: u64,
    /// Lock kind of the scheduler and queue locks: fair-spin, parking-lot or both.
    #[arg(long, default_value = "fair-spin")]
    lock: String,
    /// Variants, comma-separated (default: every safe one).
    #[arg(long)]
    variants: Option<String>,
    /// Also run `unlocked` (refused with --churn: it is unsafe under group removal).
    #[arg(long)]
    include_unlocked: bool,
    /// lockstat (one run per variant and round: KIOPS and lock counters from the same run, the
    /// statistics switched on and off in alternating 100 ms windows whose pairs give their cost),
    /// both (two runs: plain KIOPS + separately instrumented counters) or plain (KIOPS only).
    #[arg(long, default_value = "lockstat")]
    measure: String,
    /// How instrumented runs time lock holds: sampled (one in 256, estimated; the default) or
    /// exact. Said to have no effect with --measure plain.
    #[arg(long, value_parser = super::parse::lockstat_mode)]
    lockstat_mode: Option<schedlab_core::lockstat::Mode>,
    /// Measured time of each instrumented run with --measure both: seconds or a duration, more
    /// than 0, at most a day (default 1). Said to have no effect with another --measure.
    #[arg(long, value_parser = units::seconds, allow_hyphen_values = true)]
    lockstat_duration: Option<f64>,
    /// Leave out the A/A pair. By default the reference variant (sched-lock) runs a second time
    /// in each round, interleaved like the others, and the ratio of its two copies with its 95 %
    /// interval is printed as the run's noise floor; a floor that excludes 1 flags the run as
    /// unreliable. Said to have no effect when sched-lock is not compared.
    #[arg(long)]
    no_aa: bool,
    #[command(flatten)]
    pub workload: WorkloadArgs,
    /// Leave out the per-lock lockstat tables.
    #[arg(long)]
    pub brief: bool,
}

impl CompareOptions {
    pub fn config(&self, cx: &mut Context) -> Result<CompareConfig, ExperimentError> {
        let args = self;
        let cpus = std::thread::available_parallelism().map_or(2, |n| n.get());
        let threads = match args.threads {
            None => cpus,
            Some(t) if (1..=1024).contains(&t) => t as usize,
            Some(t) => return Err(bad_input(format!("--threads must be 1..=1024, got {t}"))),
        };
        if !(1..=1000).contains(&args.rounds) {
            return Err(bad_input(format!("--rounds must be 1..=1000, got {}", args.rounds)));
        }
        let measure = Measure::from_name(&args.measure).ok_or_else(|| bad_input(format!("unknown --measure `{}` (known: plain, lockstat, both)", args.measure)))?;
        if args.include_unlocked && args.workload.jobs.churn > 0.0 {
            return Err(bad_input("--include-unlocked cannot run with --churn: `unlocked` is unsafe under group removal"));
        }
        // `--insert both`: every variant on each insert path, as entries `<variant>` and
        // `<variant>+lists`, interleaved like the variants.
        let paths = parse_inserts(&args.workload.jobs.insert, true)?;
        let mut workload_args = args.workload.clone();
        workload_args.jobs.insert = InsertPathKind::Direct.name().into();
        let variants = parse_variants(args.variants.as_deref(), args.include_unlocked)?;
        let entries: Vec<&'static str> = paths.iter().flat_map(|&path| variants.iter().map(move |&v| entry_name(v, path))).collect();
        // Options that only mean something beside a --measure: said, not refused (scripts pass them).
        if args.lockstat_duration.is_some() && measure != Measure::Both {
            cx.no_effect(
                "--lockstat-duration",
                format_args!(": only --measure both makes separately instrumented runs (--measure is {})", args.measure),
            );
        }
        if args.no_aa && !variants.contains(&crate::experiment::compare::AA_REFERENCE) {
            cx.no_effect("--no-aa", ": sched-lock is not among the variants, so there is no A/A pair to leave out");
        }
        if measure == Measure::Plain {
            let defaults: WorkloadArgs = super::parse::defaults();
            let instrumented_only = [
                ("--lockstat-mode", args.lockstat_mode.is_some()),
                ("--sum-sampling", args.workload.sum_sampling != defaults.sum_sampling),
                ("--brief", args.brief),
            ];
            for (flag, _) in instrumented_only.iter().filter(|(_, set)| *set) {
                cx.no_effect(flag, ": --measure plain makes no instrumented run (no lock tables)");
            }
        }
        let cfg = CompareConfig {
            workload: workload_args.config(threads, cx)?,
            variants: entries,
            locks: parse_locks(&args.lock)?,
            rounds: args.rounds as usize,
            measure,
            lockstat_duration: seconds("lockstat-duration", args.lockstat_duration.unwrap_or(1.0), false)?,
            lockstat_window: std::time::Duration::from_millis(100),
            lockstat_mode: args.lockstat_mode.unwrap_or(schedlab_core::lockstat::Mode::Sampled),
            sum_sampling: args.workload.sum_sampling()?,
            noise: args.workload.noise_policy()?,
            aa: !args.no_aa,
        };
        cfg.validate()?;
        Ok(cfg)
    }
}
