//! `schedlab simulate`: fio-like jobs against the scheduler and a device model in virtual time
//! (`schedlab_benches::experiment::simulate`). Prints its tables, a line in the manner of fio's
//! group reporting under the first; `--json` writes the full result with provenance. Same
//! arguments and seed, same output (provenance aside). The options are
//! `schedlab_benches::experiment::options::simulate`; this file adds the outputs and makes the
//! one call.

use crate::signals::INTERRUPT;
use schedlab_benches::experiment::options::simulate::SimulateOptions;
use schedlab_benches::experiment::simulate::{self, SimulateConfig};
use schedlab_benches::experiment::ExperimentError;

#[derive(clap::Args, Debug, Clone)]
pub struct SimulateArgs {
    #[command(flatten)]
    pub(crate) options: SimulateOptions,
    /// `--json`, `--svg` (this run beside the seeds' idling table) and `--report`.
    #[command(flatten)]
    outputs: crate::report_out::OutputArgs,
}

/// Every path `simulate` writes (`paths.rs`).
pub(crate) fn paths(args: &SimulateArgs) -> Result<crate::paths::Paths, ExperimentError> {
    Ok(args.outputs.declare(crate::paths::Paths::default()))
}

pub(crate) fn config(args: &SimulateArgs) -> Result<SimulateConfig, ExperimentError> {
    args.options.config()
}

pub fn cmd(args: &SimulateArgs, log: crate::logging::Start) -> Result<(), ExperimentError> {
    let _logging = log.logs()?;
    let cfg = config(args)?;
    crate::report_out::run_and_emit(&args.outputs, "schedlab simulate", "simulations", |bar| {
        simulate::run(&cfg, &INTERRUPT, bar)
    })
}
