//! `schedlab run`: one variant, one configuration, the end-of-run checks, optionally a JSON
//! result and a Chrome / Perfetto trace. The run itself is `schedlab_benches::driver::workload`.

use crate::{bad_input, flags, logging, signals, units, ExperimentError, INTERRUPT};
use schedlab_benches::experiment::Failures;
use schedlab_benches::report::run::RunReport;
use schedlab_benches::driver::workload::{run_named, WorkloadConfig};
use schedlab_core::LockKind;

#[derive(clap::Args, Debug, Clone)]
pub struct RunArgs {
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
    pub jobs: flags::WorkloadFlags,
    /// Measure the scheduler, queue and counter-sum locks (lockstat-like table): `--lockstat`
    /// (sampled: counts exact, holds timed one in 256 and contended waits one in 8, estimated; a
    /// few % of the throughput) or `--lockstat exact` (every hold and wait timed, and the sampled
    /// estimate of the same holds and waits beside it, for validation; costs more).
    #[arg(long, value_name = "MODE", num_args = 0..=1, default_missing_value = "sampled", require_equals = false, value_parser = flags::lockstat_mode)]
    pub lockstat: Option<schedlab_core::lockstat::Mode>,
    /// Write a Chrome / Perfetto trace (JSON) of the paths, lock waits and holds and statistics
    /// updates to this file, for a window after the ramp-up (see --trace-window). Open it in
    /// ui.perfetto.dev or chrome://tracing; notes/tracing.md shows how to read it.
    #[arg(long)]
    pub trace: Option<std::path::PathBuf>,
    /// Time the trace covers, from the end of the ramp-up: seconds or a duration, more than 0
    /// (clipped to --duration).
    #[arg(long, default_value = "0.2", value_parser = units::seconds, allow_hyphen_values = true, requires = "trace")]
    pub trace_window: f64,
    /// What the trace keeps, in RUST_LOG syntax over the targets schedlab::path, schedlab::lock,
    /// schedlab::stats, schedlab::idle, schedlab::group (e.g. `schedlab::lock=trace` for lock
    /// slices only: fewer records, less distortion).
    #[arg(long, default_value = "schedlab=trace", requires = "trace")]
    pub trace_filter: String,
    /// Leave the spans' fields (lock, path, group, pid, sector) out of the trace: about twice the
    /// requests per second while the window is open.
    #[arg(long, requires = "trace")]
    pub trace_no_args: bool,
    /// `--json` (the result, with provenance) and `--report` (with a link to the trace); `run`
    /// draws no chart, so it has no `--svg`.
    #[command(flatten)]
    pub outputs: crate::report_out::ReportArgs,
}

/// Every path `run` reads or writes (`paths.rs`).
pub(crate) fn paths(args: &RunArgs) -> Result<crate::paths::Paths, ExperimentError> {
    Ok(args.outputs.outputs().declare(crate::paths::Paths::default().output("--trace", args.trace.as_deref())))
}

pub fn workload_config(args: &RunArgs) -> Result<WorkloadConfig, ExperimentError> {
    let lock = LockKind::from_name(&args.lock)
        .ok_or_else(|| bad_input(format!("unknown lock kind `{}` (known: fair-spin, parking-lot)", args.lock)))?;
    let threads = args.threads as usize;
    let shape = flags::RunShape {
        threads,
        duration: args.duration,
        ramp: args.ramp,
        lock,
        lockstat: args.lockstat.is_some(),
        lockstat_mode: args.lockstat.unwrap_or(schedlab_core::lockstat::Mode::Sampled),
    };
    let mut cfg = args.jobs.config(shape)?;
    if args.trace.is_some() {
        cfg.trace_window = Some(crate::seconds("trace-window", args.trace_window, false)?);
    }
    cfg.validate(&args.variant)?;
    Ok(cfg)
}

pub fn cmd(args: &RunArgs, cfg: WorkloadConfig, claimed: crate::report_out::Claimed, trace: Option<schedlab_benches::files::output::Stream>, logging: &mut logging::Logging) -> Result<(), ExperimentError> {
    schedlab_benches::driver::workload::warn_before_run(cfg.lock, cfg.threads);
    let provenance = schedlab_benches::files::provenance::Provenance::collect();
    let result = run_named(&args.variant, &cfg, &INTERRUPT);
    let mut failures = Failures::default();
    if result.as_ref().is_ok_and(|r| r.interrupted) || result.is_err() {
        tracing::warn!(name: "run interrupted", target: logging::MARKER_TARGET, signal = signals::received().map(signals::name), "the run stopped early: the trace covers the part that ran");
    }
    let mut trace_written = None;
    if let Some(trace) = trace {
        logging.finish(trace.writer_thread());
        let window = cfg.trace_window.unwrap_or_default().min(cfg.duration);
        match trace.commit() {
            Ok(()) => {
                let covers = format!(
                    "{:.0} ms after the ramp-up; not comparable with untraced KIOPS: every tracing site consulted the recorder during the whole run",
                    window.as_secs_f64() * 1e3
                );
                let path = args.trace.clone().unwrap_or_default();
                outln!("wrote trace {} ({covers})", path.display());
                trace_written = Some((path, covers));
            }
            Err(e) => failures.add(ExperimentError::output_failed(e)),
        }
    }
    let result = match result {
        Ok(r) => r,
        Err(e) => {
            failures.add(e);
            return failures.finish();
        }
    };
    schedlab_benches::driver::workload::warn_after_run(&result);
    let report = RunReport { provenance, result, config: cfg, trace: trace_written };
    crate::report_out::emit(&report, Default::default(), &claimed, failures)
}
