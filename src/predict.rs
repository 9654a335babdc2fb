//! `schedlab predict`: KIOPS against threads for machines this one is not, from a calibrated
//! discrete-event simulation (`schedlab_benches::experiment::predict`; notes/predict.md), and
//! `--validate`: measured against predicted where this machine can measure. The options are
//! `schedlab_benches::experiment::options::predict`; this file adds the outputs (the saved
//! calibration and topology among them) and makes the one call.

use crate::paths::check_output;
use crate::signals::INTERRUPT;
use schedlab_benches::experiment::options::predict::PredictOptions;
use schedlab_benches::experiment::predict::{self, PredictConfig, PredictReport};
use schedlab_benches::experiment::ExperimentError;
use schedlab_benches::experiment::Failures;
use std::path::PathBuf;

#[derive(clap::Args, Debug, Clone)]
pub struct PredictArgs {
    #[command(flatten)]
    pub(crate) options: PredictOptions,
    /// Write the calibration (with this machine's measured profile) to this JSON file.
    #[arg(long)]
    save_calibration: Option<PathBuf>,
    /// Write this machine's measured topology profile to this JSON file.
    #[arg(long)]
    save_topology: Option<PathBuf>,
    /// `--json`, `--svg` (the validation's chart: needs --validate) and `--report`.
    #[command(flatten)]
    outputs: crate::report_out::OutputArgs,
}

/// Every path `predict` reads or writes (`paths.rs`).
pub(crate) fn paths(args: &PredictArgs) -> Result<crate::paths::Paths, ExperimentError> {
    Ok(args.outputs.declare(
        crate::paths::Paths::default()
            .input("--calibration", args.options.calibration.as_deref())
            .input("--topology", args.options.topology.as_deref())
            .output("--save-calibration", args.save_calibration.as_deref())
            .output("--save-topology", args.save_topology.as_deref()),
    ))
}

pub(crate) fn config(args: &PredictArgs) -> Result<PredictConfig, ExperimentError> {
    crate::config::from_options(|cx| args.options.config(cx))
}

pub fn cmd(args: &PredictArgs, log: crate::logging::Start) -> Result<(), ExperimentError> {
    let _logging = log.logs()?;
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
        if crate::report_out::json(out, &report.calibration, &mut failures) {
            outln!("wrote calibration {}", out.path().display());
        }
    }
    if let Some(out) = &save_topology {
        if crate::report_out::json(out, &report.calibration.machine, &mut failures) {
            outln!("wrote topology {}", out.path().display());
        }
    }
    crate::report_out::emit(&report, Default::default(), &claimed, failures)
}
