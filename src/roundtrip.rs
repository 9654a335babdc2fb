//! `schedlab roundtrip`: the single-threaded round-trip cost of each variant, measured in rounds
//! that interleave the variants, reported as median and spread
//! (`schedlab_benches::experiment::roundtrip`). Also the entry point for instruction counts:
//! `valgrind --tool=callgrind schedlab roundtrip --variant V --rounds 1`. This file parses the
//! arguments and prints the table.

use crate::{bad_input, units, ExperimentError, INTERRUPT};
use schedlab_benches::experiment::roundtrip::{self, RoundtripConfig};
use schedlab_core::{lockstat, LockKind};

#[derive(clap::Args, Debug, Clone)]
pub struct RoundtripArgs {
    /// Only this variant (default: all).
    #[arg(long)]
    variant: Option<String>,
    /// Rounds, 1..=1000; each round measures every variant once, in turn.
    #[arg(long, default_value_t = 5, value_parser = units::count::<1, 1000>, allow_negative_numbers = true)]
    rounds: u64,
    /// Round trips per measurement, 1..=100000000 (a signal stops a measurement at once).
    #[arg(long, default_value_t = 200_000, value_parser = units::count::<1, 100_000_000>, allow_negative_numbers = true)]
    iterations: u64,
    /// Lock kind: fair-spin or parking-lot.
    #[arg(long, default_value = "fair-spin")]
    lock: String,
    /// Also measure what the lock statistics cost: each measurement then runs on one scheduler in
    /// 41 alternating windows (off, on, off, ..., off; the round trips split between them), and
    /// each on window is compared with its two off neighbours. `--lockstat` (sampled, what runs
    /// use) or `--lockstat exact` (every hold timed).
    #[arg(long, value_name = "MODE", num_args = 0..=1, default_missing_value = "sampled", value_parser = crate::flags::lockstat_mode)]
    lockstat: Option<lockstat::Mode>,
    /// `--json`, `--svg` (ns per round trip) and `--report`.
    #[command(flatten)]
    outputs: crate::report_out::OutputArgs,
}

/// Every path `roundtrip` writes (`paths.rs`).
pub(crate) fn paths(args: &RoundtripArgs) -> Result<crate::paths::Paths, ExperimentError> {
    Ok(args.outputs.declare(crate::paths::Paths::default()))
}

pub(crate) fn config(args: &RoundtripArgs) -> Result<RoundtripConfig, ExperimentError> {
    let lock = LockKind::from_name(&args.lock).ok_or_else(|| bad_input(format!("unknown lock kind `{}` (known: fair-spin, parking-lot)", args.lock)))?;
    let cfg = RoundtripConfig { variant: args.variant.clone(), rounds: args.rounds as usize, iterations: args.iterations, lock, lockstat: args.lockstat };
    cfg.checked_variants()?;
    Ok(cfg)
}

pub fn cmd(args: &RoundtripArgs) -> Result<(), ExperimentError> {
    let cfg = config(args)?;
    let claimed = args.outputs.claim::<roundtrip::RoundtripReport>()?;
    let report = roundtrip::run(&cfg, &INTERRUPT, &mut crate::progress::Bar::new("schedlab roundtrip", "measurements"))?;
    crate::report_out::emit(&report, Default::default(), &claimed, Default::default())
}
