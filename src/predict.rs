//! `schedlab predict`: KIOPS against threads for machines this one is not, from a calibrated
//! discrete-event simulation (`schedlab_benches::experiment::predict`; notes/predict.md), and
//! `--validate`: measured against predicted where this machine can measure. This file parses the
//! arguments, shows progress, prints the tables and writes the JSON and the saved calibration.

use crate::flags::{parse_list, parse_locks, parse_variants, WorkloadArgs};
use crate::{check_input, check_output, units, ExperimentError, INTERRUPT};
use schedlab_benches::experiment::predict::{self, CalibrationFile, PredictConfig, PredictReport, ValidationSettings};
use schedlab_benches::experiment::Failures;
use schedlab_benches::model::calibrate::CalibrationSettings;
use schedlab_benches::model::topology::Topology;
use schedlab_benches::model::{CalibrationSet, Wanted};
use schedlab_core::InsertPathKind;
use std::path::PathBuf;

#[derive(clap::Args, Debug, Clone)]
pub struct PredictArgs {
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
    topology: Option<PathBuf>,
    /// Use this calibration (written by --save-calibration) instead of calibrating now: then the
    /// prediction is the same every time for the same seed.
    #[arg(long)]
    calibration: Option<PathBuf>,
    /// Write the calibration (with this machine's measured profile) to this JSON file.
    #[arg(long)]
    save_calibration: Option<PathBuf>,
    /// Write this machine's measured topology profile to this JSON file.
    #[arg(long)]
    save_topology: Option<PathBuf>,
    /// Treat the outside work as real work, slowed by a busy hyperthread sibling (the kernel's
    /// path around the scheduler), not the workload's timed spin.
    #[arg(long)]
    outside_is_work: bool,
    /// Measure the workload at the thread counts (this machine's: by default 1 and 2) and print
    /// measured beside predicted, with the error and the variants' order.
    #[arg(long)]
    validate: bool,
    /// Rounds of the validation's runs, 1..=100 (the order rotates each round; medians reported).
    #[arg(long, default_value_t = 3, value_parser = units::count::<1, 100>, allow_negative_numbers = true, requires = "validate")]
    rounds: u64,
    /// Calibration windows, 1..=100 (each figure is the median over windows).
    #[arg(long, default_value_t = 5, value_parser = units::count::<1, 100>, allow_negative_numbers = true, conflicts_with = "calibration")]
    calibration_windows: u64,
    /// Rounds of the calibration pattern per window and pass, 100..=1000000.
    #[arg(long, default_value_t = 3000, value_parser = units::count::<100, 1_000_000>, allow_negative_numbers = true, conflicts_with = "calibration")]
    calibration_rounds: u64,
    #[command(flatten)]
    workload: WorkloadArgs,
    /// `--json`, `--svg` (the validation's chart: needs --validate) and `--report`.
    #[command(flatten)]
    outputs: crate::report_out::OutputArgs,
}

/// Every path `predict` reads or writes (`paths.rs`).
pub(crate) fn paths(args: &PredictArgs) -> Result<crate::paths::Paths, ExperimentError> {
    Ok(args.outputs.declare(crate::paths::Paths::default()
        .input("--calibration", args.calibration.as_deref())
        .input("--topology", args.topology.as_deref())
        .output("--save-calibration", args.save_calibration.as_deref())
        .output("--save-topology", args.save_topology.as_deref())))
}

pub(crate) fn config(args: &PredictArgs) -> Result<PredictConfig, ExperimentError> {
    let inserts: Vec<InsertPathKind> = if args.workload.jobs.insert == "both" {
        InsertPathKind::ALL.to_vec()
    } else {
        vec![crate::flags::parse_insert(&args.workload.jobs.insert)?]
    };
    let mut wargs = args.workload.clone();
    wargs.jobs.insert = InsertPathKind::Direct.name().into();
    let workload = wargs.config(1)?;
    let outside_ns = match &args.outside_list {
        Some(list) => parse_list("outside-list", list, 1_000_000_000)?,
        None if args.validate && args.workload.jobs.outside_ns == 0 => vec![0, 1000],
        None => vec![workload.outside_ns],
    };
    // The workload's measuring knobs that only the validation's runs use, and the sum sampling
    // that predict never uses: said when set to anything but their defaults.
    let defaults = crate::compare::default_args();
    let measuring = [
        ("--retries", args.workload.retries != defaults.workload_args().retries),
        ("--max-other-cpus", args.workload.max_other_cpus != defaults.workload_args().max_other_cpus),
    ];
    for (flag, _) in measuring.iter().filter(|(_, set)| *set && !args.validate) {
        crate::out::warning(format_args!("{flag} has no effect without --validate: only the validation measures runs"));
    }
    // A loaded calibration was measured with its own workload: the flags that shape the
    // calibrated scheduler change nothing unless the validation measures them here.
    if args.calibration.is_some() && !args.validate {
        let d = &defaults.workload_args().jobs;
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
            crate::out::warning(format_args!("{flag} has no effect with --calibration and without --validate: the calibration was measured with its own workload"));
        }
    }
    if args.workload.sum_sampling != defaults.workload_args().sum_sampling {
        crate::out::warning("--sum-sampling has no effect on predict: neither the calibration nor the validation times the counter-sum locks");
    }
    let threads = args.threads.as_deref().map(|t| parse_list("threads", t, 1024).map(|v| v.into_iter().map(|x| x as usize).collect())).transpose()?;
    let calibration = match &args.calibration {
        Some(path) => {
            check_input(path)?;
            Some(CalibrationFile { path: path.clone(), set: CalibrationSet::load_until(path, &INTERRUPT)? })
        }
        None => None,
    };
    Ok(PredictConfig {
        wanted: Wanted { variants: parse_variants(args.variants.as_deref(), args.include_unlocked)?, locks: parse_locks(&args.lock)?, inserts },
        outside_ns,
        threads,
        topology: match args.topology.as_deref() {
            Some(path) => {
                check_input(path)?;
                Some(Topology::load_until(path, &INTERRUPT)?)
            }
            None => None,
        },
        calibration,
        calibration_settings: CalibrationSettings { windows: args.calibration_windows as usize, rounds: args.calibration_rounds, ..CalibrationSettings::default() },
        outside_is_work: args.outside_is_work,
        validation: match args.validate {
            true => Some(ValidationSettings { rounds: args.rounds as usize, noise: args.workload.noise_policy()? }),
            false => None,
        },
        workload,
    })
}

pub fn cmd(args: &PredictArgs) -> Result<(), ExperimentError> {
    let cfg = config(args)?;
    // Outputs are checked before any work.
    let claimed = args.outputs.claim::<PredictReport>()?;
    let save_calibration = check_output(args.save_calibration.as_deref())?;
    let save_topology = check_output(args.save_topology.as_deref())?;
    let mut progress = crate::progress::Bar::new("schedlab predict", "steps");
    let report = predict::run(&cfg, &INTERRUPT, &mut progress)?;
    drop(progress);
    let mut failures = Failures::default();
    if let Some(out) = &save_calibration {
        if crate::out::json(out, &report.calibration, &mut failures) {
            outln!("wrote calibration {}", out.path().display());
        }
    }
    if let Some(out) = &save_topology {
        if crate::out::json(out, &report.calibration.machine, &mut failures) {
            outln!("wrote topology {}", out.path().display());
        }
    }
    crate::report_out::emit(&report, Default::default(), &claimed, failures)
}
