//! `schedlab compare` (and plain `schedlab`): every safe variant side by side, interleaved round
//! by round, with lock counters and the seeds' ratios. The options are
//! `schedlab_benches::experiment::options::compare`, the measuring
//! `schedlab_benches::experiment::compare`, the text `schedlab_benches::report::compare`; this
//! file adds the outputs and makes the one call.

use crate::progress::Bar;
use crate::signals::INTERRUPT;
use schedlab_benches::experiment::compare::{self, CompareConfig, CompareReport};
use schedlab_benches::experiment::options::compare::CompareOptions;
use schedlab_benches::experiment::ExperimentError;
use schedlab_benches::report::contract::View;

#[derive(clap::Args, Debug, Clone)]
pub struct CompareArgs {
    #[command(flatten)]
    pub(crate) options: CompareOptions,
    #[command(flatten)]
    outputs: crate::report_out::OutputArgs,
}

/// The arguments plain `schedlab` runs with.
pub fn default_args() -> CompareArgs {
    schedlab_benches::experiment::options::defaults()
}

/// Every path `compare` reads or writes (`paths.rs`): its outputs and `--baseline`, and with an
/// old build as `--baseline` the temporary directory, where the two builds' runs write their
/// JSON.
pub(crate) fn paths(args: &CompareArgs) -> Result<crate::paths::Paths, ExperimentError> {
    let baselines = args.options.baseline.iter();
    let paths = baselines.clone().fold(crate::paths::Paths::default(), |paths, baseline| {
        paths.input("--baseline", Some(baseline.as_path()))
    });
    let old_build = baselines.clone().any(|b| schedlab_benches::driver::child::is_program(b));
    Ok(args.outputs.declare(paths.temporary(old_build)))
}

pub(crate) fn config(args: &CompareArgs) -> Result<CompareConfig, ExperimentError> {
    crate::config::from_options(|cx| args.options.config(cx))
}

/// Runs a comparison from parsed arguments: the one call, then every output through
/// `report_out::emit`, which also decides the exit code from the report's outcome.
pub fn cmd(args: &CompareArgs, log: crate::logging::Start) -> Result<(), ExperimentError> {
    let _logging = log.logs()?;
    let cfg = config(args)?;
    let claimed = args.outputs.claim::<CompareReport>()?;
    let report = compare::run(&cfg, &INTERRUPT, &mut Bar::new("schedlab compare", "runs"))?;
    let view = View { brief: args.options.brief, ..View::default() };
    crate::report_out::emit(&report, view, &claimed, Default::default())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_parse_and_validate() {
        let args = default_args();
        let cfg = config(&args).unwrap_or_else(|e| panic!("{}", e.message));
        assert_eq!(cfg.locks, vec![schedlab_core::LockKind::FairSpin]);
        assert!(!cfg.variants.contains(&"unlocked"));
        assert!(
            cfg.estimated_seconds() <= 65.0,
            "default compare takes {} s",
            cfg.estimated_seconds()
        );
    }
}
