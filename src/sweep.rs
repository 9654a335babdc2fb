//! `schedlab sweep`: KIOPS against thread count per variant and lock kind; a CSV written point by
//! point, an SVG chart with the model's prediction (`schedlab predict`'s simulation, calibrated
//! single-threaded after the sweep's runs) at the end. The options are
//! `schedlab_benches::experiment::options::sweep`; the measuring, the resuming and the model are
//! `schedlab_benches::experiment::sweep`, the text and the chart `schedlab_benches::report`. This
//! file adds the CSV and the outputs and makes the one call.

use crate::paths::check_output;
use crate::progress::Bar;
use crate::signals::INTERRUPT;
use schedlab_benches::experiment::options::sweep::SweepOptions;
use schedlab_benches::experiment::sweep::{self, CsvOutput, SweepConfig};
use schedlab_benches::experiment::ExperimentError;
use schedlab_benches::experiment::Failures;
use std::path::PathBuf;

#[derive(clap::Args, Debug, Clone)]
pub struct SweepArgs {
    #[command(flatten)]
    pub(crate) options: SweepOptions,
    /// The CSV, rewritten (temporary file + rename) as soon as each point is measured; every row
    /// carries the sweep's settings. A device or FIFO is written through, row by row.
    #[arg(long, default_value = "schedlab-sweep.csv")]
    csv: PathBuf,
    /// `--json`, `--svg` (the chart; default schedlab-sweep.svg) and `--report`.
    #[command(flatten)]
    outputs: crate::report_out::OutputArgs,
}

/// The chart's file when `--svg` names none.
const DEFAULT_SVG: &str = "schedlab-sweep.svg";

impl SweepArgs {
    /// The outputs, the chart's default filled in (a sweep always draws its chart).
    fn outputs(&self) -> crate::report_out::OutputArgs {
        let svg = self.outputs.svg.clone().unwrap_or_else(|| PathBuf::from(DEFAULT_SVG));
        crate::report_out::OutputArgs { svg: Some(svg), base: self.outputs.base.clone() }
    }
}

/// Every path `sweep` reads or writes (`paths.rs`); the CSV is also read back with --resume (the
/// one file that is both, by design).
pub(crate) fn paths(args: &SweepArgs) -> Result<crate::paths::Paths, ExperimentError> {
    Ok(args.outputs().declare(
        crate::paths::Paths::default()
            .input("--topology", args.options.topology.as_deref())
            .output("--csv", Some(&args.csv)),
    ))
}

pub(crate) fn config(args: &SweepArgs) -> Result<SweepConfig, ExperimentError> {
    crate::config::from_options(|cx| args.options.config(cx))
}

/// Runs a sweep from parsed arguments: the one call (the CSV written point by point inside it),
/// then every output through `report_out::emit`. A sweep stopped before its first point draws no
/// chart (and that is no failure).
pub fn cmd(args: &SweepArgs, log: crate::logging::Start) -> Result<(), ExperimentError> {
    let _logging = log.logs()?;
    let mut cfg = config(args)?;
    let csv = check_output(Some(&args.csv))?;
    let csv = csv.ok_or_else(|| ExperimentError::bad_input("--csv names no file"))?;
    cfg.csv = Some(CsvOutput { file: csv, resume: args.options.resume });
    let mut claimed = args.outputs().claim::<sweep::SweepReport>()?;
    let report = sweep::run(&cfg, &INTERRUPT, &mut Bar::new("schedlab sweep", "points"))?;
    if report.points.is_empty() {
        claimed.svg = None;
    }
    crate::report_out::emit(&report, Default::default(), &claimed, Failures::default())
}
