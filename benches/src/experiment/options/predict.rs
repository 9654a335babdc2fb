//! `schedlab predict`'s options: KIOPS against threads for machines this one is not, from a
//! calibrated simulation, and `--validate` ([`crate::experiment::predict`]).

use super::context::Context;
use super::parse::{parse_inserts, parse_list, parse_locks, parse_threads, parse_variants};
use super::units;
use super::workload::WorkloadArgs;
use crate::error::ExperimentError;
use crate::experiment::predict::{CalibrationFile, PredictConfig, ValidationSettings};
use crate::model::calibrate::CalibrationSettings;
use crate::model::topology::Topology;
use crate::model::{CalibrationSet, Wanted};
use schedlab_core::InsertPathKind;
use std::path::PathBuf;

#[derive(clap::Args, Debug, Clone)]
pub struct PredictOptions {
    /// Thread counts to predict, e.g. "1-8" or "1,2,4,8,16" (default: every CPU count of the
    /// topology up to 16, then powers of two; with --validate: 1 to this machine's CPUs), each at
    /// most the topology's logical CPUs.
    #[arg(long)]
    threads: Option<String>,
    /// Variants, comma-separated (default: every safe one, from the registry).
    #[arg(long)]
    variants: Option<String>,
    /// Also predict `unlocked`.
    #[arg(long)]
    include_unlocked: bool,
    /// Lock kind: fair-spin, parking-lot or both.
    #[arg(long, default_value = "both")]
    lock: String,
    /// Outside work per request to predict (and measure), ns, e.g. "0,1000" (default: --outside-ns;
    /// with --validate: 0,1000), which it replaces.
    #[arg(long, conflicts_with = "outside_ns")]
    outside_list: Option<String>,
    /// The machine to predict for: a topology profile (JSON; notes/predict.md). Default: this
    /// machine, measured now (cores and siblings from sysfs, transfers by ping-pong, parking costs).
    #[arg(long)]
    pub topology: Option<PathBuf>,
    /// Use this calibration (written by --save-calibration) instead of calibrating now: then the
    /// prediction is the same every time for the same seed.
    #[arg(long)]
    pub calibration: Option<PathBuf>,
    /// Treat the outside work as real work, slowed by a busy hyperthread sibling (the kernel's
    /// path around the scheduler), not the workload's timed spin.
    #[arg(long)]
    outside_is_work: bool,
    /// Measure the workload at the thread counts (this machine's: by default 1 and 2) and print
    /// measured beside predicted, with the error and the variants' order.
    #[arg(long)]
    validate: bool,
    /// Rounds of the validation's runs, 1..=100 (the order rotates each round; medians reported).
    /// Default 6: the fewest whose 95 % interval covers 95 % (fewer: no interval, no verdict).
    #[arg(long, default_value_t = crate::stats::BOOTSTRAP_MIN_VALUES as u64, value_parser = units::count::<1, 100>, allow_negative_numbers = true, requires = "validate")]
    rounds: u64,
    /// Calibration windows, 1..=100 (each figure is the median over windows).
    #[arg(long, default_value_t = 5, value_parser = units::count::<1, 100>, allow_negative_numbers = true, conflicts_with = "calibration")]
    calibration_windows: u64,
    /// Rounds of the calibration pattern per window and pass, 100..=1000000.
    #[arg(long, default_value_t = 3000, value_parser = units::count::<100, 1_000_000>, allow_negative_numbers = true, conflicts_with = "calibration")]
    calibration_rounds: u64,
    #[command(flatten)]
    pub workload: WorkloadArgs,
}

impl PredictOptions {
    pub fn config(&self, cx: &mut Context) -> Result<PredictConfig, ExperimentError> {
        let args = self;
        let inserts = parse_inserts(&args.workload.jobs.insert, true)?;
        let mut wargs = args.workload.clone();
        wargs.jobs.insert = InsertPathKind::Direct.name().into();
        let workload = wargs.config(1, cx)?;
        let outside_ns = match &args.outside_list {
            Some(list) => parse_list("outside-list", list, 1_000_000_000)?,
            None if args.validate && args.workload.jobs.outside_ns == 0 => vec![0, 1000],
            None => vec![workload.outside_ns],
        };
        // The workload's measuring knobs that only the validation's runs use, and the sum sampling
        // that predict never uses: said when set to anything but their defaults.
        let defaults: WorkloadArgs = super::parse::defaults();
        let measuring = [
            ("--retries", args.workload.retries != defaults.retries),
            ("--max-other-cpus", args.workload.max_other_cpus != defaults.max_other_cpus),
        ];
        for (flag, _) in measuring.iter().filter(|(_, set)| *set && !args.validate) {
            cx.no_effect(flag, " without --validate: only the validation measures runs");
        }
        // A loaded calibration was measured with its own workload: the flags that shape the
        // calibrated scheduler change nothing unless the validation measures them here.
        if args.calibration.is_some() && !args.validate {
            let d = &defaults.jobs;
            let j = &args.workload.jobs;
            let calibration_only = [
                ("--groups", j.groups != d.groups),
                ("--weights", j.weights != d.weights),
                ("--slots", j.slots != d.slots),
                ("--rw", j.rw != d.rw),
                ("--bs", j.bs != d.bs),
                ("--kernel", j.kernel != d.kernel),
            ];
            for (flag, _) in calibration_only.iter().filter(|(_, set)| *set) {
                cx.no_effect(flag, " with --calibration and without --validate: the calibration was measured with its own workload");
            }
        }
        if args.workload.sum_sampling != defaults.sum_sampling {
            cx.no_effect("--sum-sampling", " on predict: neither the calibration nor the validation times the counter-sum locks");
        }
        let threads =
            args.threads.as_deref().map(|t| parse_threads("threads", t, 1024)).transpose()?;
        let calibration = match &args.calibration {
            Some(path) => {
                (cx.declared_input)(path)?;
                Some(CalibrationFile {
                    path: path.clone(),
                    set: CalibrationSet::load_until(path, cx.stop)?,
                })
            }
            None => None,
        };
        Ok(PredictConfig {
            wanted: Wanted {
                variants: parse_variants(args.variants.as_deref(), args.include_unlocked)?,
                locks: parse_locks(&args.lock)?,
                inserts,
            },
            outside_ns,
            threads,
            topology: match args.topology.as_deref() {
                Some(path) => {
                    (cx.declared_input)(path)?;
                    Some(Topology::load_until(path, cx.stop)?)
                }
                None => None,
            },
            calibration,
            calibration_settings: CalibrationSettings {
                windows: args.calibration_windows as usize,
                rounds: args.calibration_rounds,
                ..CalibrationSettings::default()
            },
            outside_is_work: args.outside_is_work,
            validation: match args.validate {
                true => Some(ValidationSettings {
                    rounds: args.rounds as usize,
                    noise: args.workload.noise_policy()?,
                }),
                false => None,
            },
            workload,
        })
    }
}
