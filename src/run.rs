//! `schedlab run`: one variant, one configuration, the end-of-run checks, optionally a JSON
//! result and a Chrome / Perfetto trace. The options are
//! `schedlab_benches::experiment::options::run`, the run itself
//! `schedlab_benches::experiment::run`; this file adds the trace and the outputs and makes the
//! one call. The options and the outputs are checked before the log starts, so that bad input
//! creates no trace file.

use crate::logging::{self, TraceRequest};
use crate::paths::check_output;
use crate::progress::Bar;
use crate::signals::{self, INTERRUPT};
use schedlab_benches::experiment::options::run::RunOptions;
use schedlab_benches::experiment::run::{self, RunConfig};
use schedlab_benches::experiment::{ExperimentError, Failures};
use schedlab_benches::files::output::Stream;
use schedlab_benches::report::run::{RunReport, TraceWritten};
use std::path::PathBuf;
use std::time::Duration;

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
    let paths = crate::paths::Paths::default().output("--trace", args.trace.as_deref());
    Ok(args.outputs.outputs().declare(paths))
}

pub(crate) fn config(args: &RunArgs) -> Result<RunConfig, ExperimentError> {
    crate::config::from_options(|cx| args.options.config(args.trace.is_some(), cx))
}

/// Runs one variant from parsed arguments: the options, the outputs and the trace file checked,
/// then the log started (with the trace), the one call, the trace finished, and every output
/// through `report_out::emit`. A run that failed keeps its trace and reports nothing else.
pub fn cmd(args: &RunArgs, log: logging::Start) -> Result<(), ExperimentError> {
    let cfg = config(args)?;
    let claimed = args.outputs.outputs().claim::<RunReport>()?;
    let trace = match check_output(args.trace.as_deref())? {
        Some(out) => Some(out.stream().map_err(ExperimentError::bad_input)?),
        None => None,
    };
    let request = trace.as_ref().map(|stream| TraceRequest {
        file: stream.writer(),
        filter: &args.trace_filter,
        args: !args.trace_no_args,
    });
    let mut logging = log.with_trace(request)?;
    let record = run::run(&cfg, &INTERRUPT, &mut Bar::new("schedlab run", "runs"));
    if record.as_ref().is_ok_and(|r| r.result.interrupted) || record.is_err() {
        let signal = signals::received().map(signals::name);
        let why = "the run stopped early: the trace covers the part that ran";
        tracing::warn!(name: "run interrupted", target: logging::MARKER_TARGET, signal, "{why}");
    }
    let mut failures = Failures::default();
    let window = cfg.workload.trace_window.unwrap_or_default().min(cfg.workload.duration);
    let trace = trace.and_then(|stream| {
        finish_trace(stream, &mut logging, args.trace.clone().unwrap_or_default(), window)
            .map_err(|e| failures.add(e))
            .ok()
    });
    let record = match record {
        Ok(record) => record,
        Err(e) => {
            failures.add(e);
            return failures.finish();
        }
    };
    let report = RunReport {
        provenance: record.provenance,
        result: record.result,
        config: record.config,
        trace,
    };
    crate::report_out::emit(&report, Default::default(), &claimed, failures)
}

/// Finishes the trace file at `path` (its writer drained first) and says what it covers.
fn finish_trace(
    stream: Stream,
    logging: &mut logging::Logging,
    path: PathBuf,
    window: Duration,
) -> Result<TraceWritten, ExperimentError> {
    logging.finish(stream.writer_thread());
    stream.commit().map_err(ExperimentError::output_failed)?;
    let window_ms = window.as_secs_f64() * 1e3;
    outln!(
        "wrote trace {} ({window_ms:.0} ms after the ramp-up; not comparable with untraced \
         KIOPS: every tracing site consulted the recorder during the whole run)",
        path.display()
    );
    Ok(TraceWritten { path, window_ms })
}
