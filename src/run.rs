//! `schedlab run`: one variant, one configuration, the end-of-run checks, optionally a JSON
//! result and a Chrome / Perfetto trace. The options are
//! `schedlab_benches::experiment::options::run`, the run itself
//! `schedlab_benches::driver::workload`; this file adds the trace and the outputs and makes the
//! one call.

use crate::{logging, signals, ExperimentError, INTERRUPT};
use schedlab_benches::driver::workload::{run_named, WorkloadConfig};
use schedlab_benches::experiment::options::run::RunOptions;
use schedlab_benches::experiment::Failures;
use schedlab_benches::report::run::RunReport;

#[derive(clap::Args, Debug, Clone)]
pub struct RunArgs {
    #[command(flatten)]
    pub options: RunOptions,
    /// Write a Chrome / Perfetto trace (JSON) of the paths, lock waits and holds and statistics
    /// updates to this file, for a window after the ramp-up (see --trace-window). Open it in
    /// ui.perfetto.dev or chrome://tracing; notes/tracing.md shows how to read it.
    #[arg(long)]
    pub trace: Option<std::path::PathBuf>,
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
    crate::configure(|cx| args.options.config(args.trace.is_some(), cx))
}

pub fn cmd(args: &RunArgs, cfg: WorkloadConfig, claimed: crate::report_out::Claimed, trace: Option<schedlab_benches::files::output::Stream>, logging: &mut logging::Logging) -> Result<(), ExperimentError> {
    schedlab_benches::driver::workload::warn_before_run(cfg.lock, cfg.threads);
    let provenance = schedlab_benches::files::provenance::Provenance::collect();
    let result = run_named(&args.options.variant, &cfg, &INTERRUPT);
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
