//! `schedlab run`: one variant, one configuration, the end-of-run checks, optionally a JSON
//! result and a Chrome / Perfetto trace. The run itself is `schedlab_benches::driver::workload`.

use crate::{bad_input, flags, logging, signals, units, ExperimentError, INTERRUPT};
use schedlab_benches::experiment::Failures;
use schedlab_benches::files::output::OutputFile;
use schedlab_benches::report::run::{self as run_report, RunJson};
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
    /// Write the result, with provenance, to this JSON file.
    #[arg(long)]
    pub json: Option<std::path::PathBuf>,
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
    /// Also write everything as one self-contained HTML page (command line, provenance, tables,
    /// warnings, a link to the trace) to this file; checked before the work, written at the end.
    #[arg(long)]
    pub report: Option<std::path::PathBuf>,
}

/// Every path `run` reads or writes (`paths.rs`).
pub(crate) fn paths(args: &RunArgs) -> Result<crate::paths::Paths, ExperimentError> {
    Ok(crate::paths::Paths::default()
        .output("--json", args.json.as_deref())
        .output("--trace", args.trace.as_deref())
        .output("--report", args.report.as_deref()))
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
    cfg.validate(&args.variant).map_err(bad_input)?;
    Ok(cfg)
}

pub fn cmd(args: &RunArgs, cfg: WorkloadConfig, json_out: Option<OutputFile>, report_out: Option<OutputFile>, trace: Option<schedlab_benches::files::output::Stream>, logging: &mut logging::Logging) -> Result<(), ExperimentError> {
    schedlab_benches::driver::workload::warn_before_run(cfg.lock, cfg.threads);
    let result = run_named(&args.variant, &cfg, &INTERRUPT);
    let mut failures = Failures::default();
    if result.as_ref().is_ok_and(|r| r.interrupted) || result.is_err() {
        tracing::warn!(name: "run interrupted", target: logging::MARKER_TARGET, signal = signals::received().map(signals::name), "the run stopped early: the trace covers the part that ran");
    }
    let mut trace_written = false;
    if let Some(trace) = trace {
        logging.finish(trace.writer_thread());
        let window = cfg.trace_window.unwrap_or_default().min(cfg.duration);
        match trace.commit() {
            Ok(()) => {
                trace_written = true;
                outln!(
                    "wrote trace {} ({:.0} ms after the ramp-up; not comparable with untraced KIOPS: every tracing site consulted the recorder during the whole run)",
                    args.trace.as_deref().map_or_else(String::new, |p| p.display().to_string()),
                    window.as_secs_f64() * 1e3
                )
            }
            Err(e) => failures.add(ExperimentError::output_failed(e)),
        }
    }
    let result = match result {
        Ok(r) => r,
        Err(e) => {
            failures.add(ExperimentError::run_failed(e));
            return failures.finish();
        }
    };
    let mut text = run_report::run_text(&result);
    out!("{text}");
    schedlab_benches::driver::workload::warn_after_run(&result);
    if cfg.lockstat {
        let table = schedlab_benches::report::compare::lockstat_table(&result.locks);
        out!("{table}");
        text.push_str(&table);
    }
    if let Some(json_out) = &json_out {
        let json = RunJson::of(&result, &cfg, signals::received().map(signals::name));
        match serde_json::to_string_pretty(&json).map_err(|e| format!("cannot serialise the result: {e}")).and_then(|text| json_out.write((text + "\n").as_bytes())) {
            Ok(()) => outln!("wrote {}", json_out.path().display()),
            Err(e) => failures.add(ExperimentError::output_failed(e)),
        }
    }
    let trace_path = args.trace.as_deref().filter(|_| trace_written);
    crate::report_out::write(report_out.as_ref(), || schedlab_benches::report::pages::run(&result, text, trace_path, Vec::new()), &mut failures);
    if !(result.consistent && result.groups_live_after == 0 && result.queues_live_after == 0) {
        failures.add(ExperimentError::check_failed(format!("{}: the run failed its end-of-run checks (see the consistency details above)", result.variant)));
    }
    failures.finish()
}
