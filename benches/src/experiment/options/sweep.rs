//! `schedlab sweep`'s options: KIOPS against thread count per variant and lock kind, with the
//! model's prediction ([`crate::experiment::sweep`]).

use super::context::Context;
use super::parse::{bad_input, parse_list, parse_locks, parse_threads, parse_variants, seconds};
use super::units;
use super::workload::WorkloadArgs;
use crate::error::ExperimentError;
use crate::experiment::sweep::{self, ModelSettings, SweepConfig};
use crate::model::topology::Topology;
use std::path::PathBuf;

#[derive(clap::Args, Debug, Clone)]
pub struct SweepOptions {
    /// Thread counts, e.g. "1,2" or "1-4" (default: 1 to the CPU count).
    #[arg(long)]
    threads: Option<String>,
    /// Also measure thread counts above the CPU count, up to this many, 1..=1024 (marked
    /// oversubscribed; never used by the model).
    #[arg(long, value_parser = units::count::<1, 1024>, allow_negative_numbers = true)]
    oversubscribe_to: Option<u64>,
    /// Variants, comma-separated (default: every safe one).
    #[arg(long)]
    variants: Option<String>,
    /// Rounds, 1..=100: every point measured once per round, interleaved; each ratio to the
    /// reference variant is taken within a round, with a 95 % interval over rounds (none below 6,
    /// the fewest whose interval covers 95 %; default 6).
    #[arg(
        long,
        default_value_t = crate::stats::BOOTSTRAP_MIN_VALUES as u64,
        value_parser = units::count::<1, 100>,
        allow_negative_numbers = true
    )]
    rounds: u64,
    /// Also run `unlocked` (refused with --churn).
    #[arg(long)]
    include_unlocked: bool,
    /// Lock kind: fair-spin, parking-lot or both.
    #[arg(long, default_value = "fair-spin")]
    lock: String,
    /// Sweep the stat slot count too, e.g. "1,8,64" (default: --slots, which it replaces).
    #[arg(long, conflicts_with = "slots")]
    sweep_slots: Option<String>,
    /// Sweep the work outside the scheduler too, ns, e.g. "0,500,2000" (default: --outside-ns,
    /// which it replaces).
    #[arg(long, conflicts_with = "outside_ns")]
    sweep_outside_ns: Option<String>,
    /// Measured time of the instrumented run of each point: seconds or a duration, at most a day
    /// (0: none, and no model).
    #[arg(long, default_value = "1", value_parser = units::seconds, allow_hyphen_values = true)]
    lockstat_duration: f64,
    #[command(flatten)]
    pub workload: WorkloadArgs,
    /// Keep the points already in --csv and measure only the missing ones (default: start afresh,
    /// replacing the file at the first point). The file must be a sweep CSV of this version
    /// measured with the same settings (groups, weights, churn, rw, bs, iodepth, slice idle, pin,
    /// seed, durations, sum sampling); a half-written last line is dropped.
    #[arg(long)]
    pub resume: bool,
    /// One-way cache-line transfer for the model, ns, 0..=1000000 (default: the model machine's;
    /// measured now by a ping-pong between two CPUs for this machine's profile).
    #[arg(long, value_parser = units::transfer_ns, allow_hyphen_values = true, conflicts_with = "no_model")]
    transfer_ns: Option<f64>,
    /// The machine the model simulates: a topology profile (JSON, notes/predict.md). Default: this
    /// machine's measured profile with --model-cores cores (a hypothetical machine of its cores).
    #[arg(long, conflicts_with = "no_model")]
    pub topology: Option<PathBuf>,
    /// Cores of the default model machine, 1..=1024.
    #[arg(long, default_value_t = 64, value_parser = units::count::<1, 1024>, allow_negative_numbers = true, conflicts_with_all = ["topology", "no_model"])]
    model_cores: u64,
    /// No model: skip the single-threaded calibration (a few seconds per variant and lock kind)
    /// and draw the measured points only.
    #[arg(long)]
    no_model: bool,
}

impl SweepOptions {
    /// The sweep's configuration, without its CSV (the CLI's output: `SweepConfig::csv`).
    pub fn config(&self, cx: &mut Context) -> Result<SweepConfig, ExperimentError> {
        let args = self;
        let cpus = std::thread::available_parallelism().map_or(1, |n| n.get());
        let listed =
            args.threads.as_deref().map(|list| parse_threads("threads", list, 1024)).transpose()?;
        let threads =
            sweep::thread_counts(listed, cpus, args.oversubscribe_to.map(|n| n as usize))?;
        if args.include_unlocked && args.workload.jobs.churn > 0.0 {
            return Err(bad_input("--include-unlocked cannot run with --churn: `unlocked` is unsafe under group removal"));
        }
        let workload = args.workload.config(1, cx)?;
        if args.resume && workload.inject.ns > 0 {
            // The CSV's settings columns do not carry the injected cost, so a resume could not tell
            // points measured with another one.
            return Err(bad_input("--resume with --inject-ns: the CSV does not record the injected cost; run the sweep whole"));
        }
        let slots = match &args.sweep_slots {
            Some(list) => {
                parse_list("sweep-slots", list, 64)?.into_iter().map(|s| s as usize).collect()
            }
            None => vec![workload.slots],
        };
        let outside_ns = match &args.sweep_outside_ns {
            Some(list) => parse_list("sweep-outside-ns", list, 1_000_000_000)?,
            None => vec![workload.outside_ns],
        };
        let lockstat_duration = seconds("lockstat-duration", args.lockstat_duration, true)?;
        let mut cfg = SweepConfig {
            workload,
            threads,
            rounds: args.rounds as usize,
            cpus,
            variants: parse_variants(args.variants.as_deref(), args.include_unlocked)?,
            locks: parse_locks(&args.lock)?,
            slots,
            outside_ns,
            lockstat_duration,
            sum_sampling: args.workload.sum_sampling()?,
            noise: args.workload.noise_policy()?,
            csv: None,
            model: None,
        };
        cfg.validate()?;
        // The model's machine after the settings, before any work (the CSV is the command's: `cmd`).
        let topology = match args.topology.as_deref() {
            Some(path) => {
                (cx.declared_input)(path)?;
                Some(Topology::load_until(path, cx.stop)?)
            }
            None => None,
        };
        // `--lockstat-duration 0` means no instrumented runs and no model (its documentation); the
        // model's own flags are refused where there is no model, rather than ignored.
        // (`--no-model` against the model's flags is declared on the flags: clap refuses it.)
        let no_model = args.no_model || lockstat_duration.is_zero();
        if lockstat_duration.is_zero() && !args.no_model {
            // Said, not refused: scripts written before 0 meant "no model" pass these.
            let defaults: WorkloadArgs = super::parse::defaults();
            let model_flags = [
                ("--topology", args.topology.is_some()),
                ("--transfer-ns", args.transfer_ns.is_some()),
                ("--model-cores", args.model_cores != 64),
                ("--sum-sampling", args.workload.sum_sampling != defaults.sum_sampling),
            ];
            for (flag, _) in model_flags.iter().filter(|(_, set)| *set) {
                cx.no_effect(
                    flag,
                    ": --lockstat-duration 0 makes no instrumented run and no model",
                );
            }
        }
        cfg.model = (!no_model).then(|| ModelSettings {
            topology,
            cores: args.model_cores as usize,
            transfer_ns: args.transfer_ns,
        });
        Ok(cfg)
    }
}
