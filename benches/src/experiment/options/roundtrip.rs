//! `schedlab roundtrip`'s options: the single-threaded cost of one request round trip per
//! variant ([`crate::experiment::roundtrip`]).

use super::parse::{lockstat_mode, parse_lock};
use super::units;
use crate::error::ExperimentError;
use crate::experiment::roundtrip::RoundtripConfig;
use schedlab_core::lockstat;

#[derive(clap::Args, Debug, Clone)]
pub struct RoundtripOptions {
    /// Only this variant (default: all).
    #[arg(long)]
    variant: Option<String>,
    /// Rounds, 1..=1000; each round measures every variant once, in turn. Default 6: the fewest
    /// whose 95 % interval covers 95 % (fewer: no interval).
    #[arg(long, default_value_t = crate::stats::BOOTSTRAP_MIN_VALUES as u64, value_parser = units::count::<1, 1000>, allow_negative_numbers = true)]
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
    #[arg(long, value_name = "MODE", num_args = 0..=1, default_missing_value = "sampled", value_parser = lockstat_mode)]
    lockstat: Option<lockstat::Mode>,
}

impl RoundtripOptions {
    pub fn config(&self) -> Result<RoundtripConfig, ExperimentError> {
        let cfg = RoundtripConfig {
            variant: self.variant.clone(),
            rounds: self.rounds as usize,
            iterations: self.iterations,
            lock: parse_lock(&self.lock)?,
            lockstat: self.lockstat,
        };
        cfg.checked_variants()?;
        Ok(cfg)
    }
}
