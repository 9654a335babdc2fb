//! `schedlab run`'s options: one variant, one configuration ([`crate::experiment::run`]).

use super::context::Context;
use super::parse::{lockstat_mode, parse_lock, seconds};
use super::units;
use super::workload::{RunShape, WorkloadFlags};
use crate::error::ExperimentError;
use crate::experiment::run::RunConfig;

#[derive(clap::Args, Debug, Clone)]
pub struct RunOptions {
    /// Stats variant (see `schedlab variants`).
    #[arg(long)]
    pub variant: String,
    /// Submitting threads (one process each), 1..=1024; with the fair lock at most 64 per CPU
    /// (a collapsed FIFO spinlock with more could not stop promptly).
    #[arg(long, default_value_t = 2, value_parser = units::count::<1, 1024>, allow_negative_numbers = true)]
    pub threads: u64,
    /// Measured time: seconds (2, 0.5) or a duration (500ms, 1m); more than 0, at most a day.
    #[arg(long, default_value = "2", value_parser = units::seconds, allow_hyphen_values = true)]
    pub duration: f64,
    /// Time run before measuring: seconds or a duration, at most a day.
    #[arg(long, default_value = "0", value_parser = units::seconds, allow_hyphen_values = true)]
    pub ramp: f64,
    /// Lock kind of the scheduler and queue locks: fair-spin or parking-lot.
    #[arg(long, default_value = "fair-spin")]
    pub lock: String,
    #[command(flatten)]
    pub jobs: WorkloadFlags,
    /// Measure the scheduler, queue and counter-sum locks (lockstat-like table): `--lockstat`
    /// (sampled: counts exact, holds timed one in 256 and contended waits one in 8, estimated; a
    /// few % of the throughput) or `--lockstat exact` (every hold and wait timed, and the sampled
    /// estimate of the same holds and waits beside it, for validation; costs more).
    #[arg(long, value_name = "MODE", num_args = 0..=1, default_missing_value = "sampled", require_equals = false, value_parser = lockstat_mode)]
    pub lockstat: Option<schedlab_core::lockstat::Mode>,
    /// Time the trace covers, from the end of the ramp-up: seconds or a duration, more than 0
    /// (clipped to --duration).
    #[arg(long, default_value = "0.2", value_parser = units::seconds, allow_hyphen_values = true, requires = "trace")]
    pub trace_window: f64,
}

impl RunOptions {
    /// The run's configuration, checked against its variant; `traced` when the CLI writes a
    /// trace (then `--trace-window` is the trace's window).
    pub fn config(&self, traced: bool, cx: &mut Context) -> Result<RunConfig, ExperimentError> {
        let shape = RunShape {
            threads: self.threads as usize,
            duration: self.duration,
            ramp: self.ramp,
            lock: parse_lock(&self.lock)?,
            lockstat: self.lockstat.is_some(),
            lockstat_mode: self.lockstat.unwrap_or(schedlab_core::lockstat::Mode::Sampled),
        };
        let mut cfg = self.jobs.config(shape, cx)?;
        if traced {
            cfg.trace_window = Some(seconds("trace-window", self.trace_window, false)?);
        }
        cfg.validate(&self.variant)?;
        Ok(RunConfig { variant: self.variant.clone(), workload: cfg })
    }
}
