//! `schedlab trace-summary FILE`: checks a trace written by `run --trace` (lock holds must not
//! overlap) and summarises it; optionally draws an excerpt and the longest wait. The parsing and
//! drawing are in `schedlab_benches::experiment::trace_summary`; this file parses and prints.

use crate::{check_input, check_output, units, ExperimentError};
use schedlab_benches::experiment::trace_summary::{self, TraceSummaryConfig};

#[derive(clap::Args, Debug, Clone)]
pub struct TraceSummaryArgs {
    /// The trace file (Chrome / Perfetto JSON).
    file: std::path::PathBuf,
    /// Also draw an excerpt of the timeline (threads as bands: paths, lock waits and holds,
    /// statistics updates) to this SVG file.
    #[arg(long)]
    svg: Option<std::path::PathBuf>,
    /// Start of the excerpt, µs into the trace (default: where the least busy thread is busiest:
    /// steady state, not a stall).
    #[arg(long, value_parser = units::micros, allow_hyphen_values = true, requires = "svg")]
    from_us: Option<f64>,
    /// Length of the excerpt, µs (more than 0, at most 10000000).
    #[arg(long, default_value_t = 200.0, value_parser = units::span_micros, allow_hyphen_values = true, requires = "svg")]
    span_us: f64,
    /// Also draw 100 µs around the end of the longest lock wait (from 60 µs before it ends): what
    /// a convoy or a preempted lock holder looks like in this trace.
    #[arg(long)]
    stall_svg: Option<std::path::PathBuf>,
    /// Also write everything as one self-contained HTML page (command line, provenance, tables,
    /// charts, warnings) to this file; checked before the work, written at the end.
    #[arg(long)]
    report: Option<std::path::PathBuf>,
}

/// Every path `trace-summary` reads or writes (`paths.rs`).
pub(crate) fn paths(args: &TraceSummaryArgs) -> Result<crate::paths::Paths, ExperimentError> {
    Ok(crate::paths::Paths::default()
        .input("FILE", Some(&args.file))
        .output("--svg", args.svg.as_deref())
        .output("--stall-svg", args.stall_svg.as_deref())
        .output("--report", args.report.as_deref()))
}

/// Exit 1 when a lock's holds overlap (the trace contradicts mutual exclusion); 2 for a file that
/// is not a well-formed trace; 3 when a drawing could not be written.
pub fn cmd(args: &TraceSummaryArgs) -> Result<(), ExperimentError> {
    check_input(&args.file)?;
    let cfg = TraceSummaryConfig {
        file: args.file.clone(),
        excerpt: check_output(args.svg.as_deref())?,
        from_us: args.from_us,
        span_us: args.span_us,
        stall: check_output(args.stall_svg.as_deref())?,
    };
    let report_out = check_output(args.report.as_deref())?;
    let report = trace_summary::run(&cfg, &crate::INTERRUPT, &mut crate::progress::Bar::new("schedlab trace-summary", "drawings"))?;
    outln!("{}", report.summary.trim_end_matches('\n'));
    for line in &report.written {
        outln!("{line}");
    }
    let mut failures = schedlab_benches::experiment::Failures::default();
    crate::report_out::write(report_out.as_ref(), || schedlab_benches::report::pages::trace_summary(&report, &args.file, Vec::new()), &mut failures);
    if let Err(e) = trace_summary::outcome(&report, &args.file) {
        failures.add(e);
    }
    failures.finish()
}
