//! `schedlab roundtrip`: the single-threaded round-trip cost of each variant, measured in rounds
//! that interleave the variants, reported as median and spread
//! (`schedlab_benches::experiment::roundtrip`). Also the entry point for instruction counts:
//! `valgrind --tool=callgrind schedlab roundtrip --variant V --rounds 1`. The options are
//! `schedlab_benches::experiment::options::roundtrip`; this file adds the outputs and makes the
//! one call.

use crate::signals::INTERRUPT;
use schedlab_benches::experiment::options::roundtrip::RoundtripOptions;
use schedlab_benches::experiment::roundtrip::{self, RoundtripConfig};
use schedlab_benches::experiment::ExperimentError;

#[derive(clap::Args, Debug, Clone)]
pub struct RoundtripArgs {
    #[command(flatten)]
    options: RoundtripOptions,
    /// `--json`, `--svg` (ns per round trip) and `--report`.
    #[command(flatten)]
    outputs: crate::report_out::OutputArgs,
}

/// Every path `roundtrip` writes (`paths.rs`).
pub(crate) fn paths(args: &RoundtripArgs) -> Result<crate::paths::Paths, ExperimentError> {
    Ok(args.outputs.declare(crate::paths::Paths::default()))
}

pub(crate) fn config(args: &RoundtripArgs) -> Result<RoundtripConfig, ExperimentError> {
    args.options.config()
}

pub fn cmd(args: &RoundtripArgs, log: crate::logging::Start) -> Result<(), ExperimentError> {
    let _logging = log.logs()?;
    let cfg = config(args)?;
    crate::report_out::run_and_emit(&args.outputs, "schedlab roundtrip", "measurements", |bar| {
        roundtrip::run(&cfg, &INTERRUPT, bar)
    })
}
