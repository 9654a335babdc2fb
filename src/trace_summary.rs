//! `schedlab trace-summary FILE`: checks a trace written by `run --trace` (lock holds must not
//! overlap) and summarises it; optionally draws an excerpt and the longest wait. The parsing and
//! drawing are in `schedlab_benches::trace_check`.

use crate::{bad_input, check_output, exit, units, write_output, ExperimentError};

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
    #[arg(long, value_parser = units::micros, allow_hyphen_values = true)]
    from_us: Option<f64>,
    /// Length of the excerpt, µs (more than 0, at most 10000000).
    #[arg(long, default_value_t = 200.0, value_parser = units::span_micros, allow_hyphen_values = true)]
    span_us: f64,
    /// Also draw 100 µs around the end of the longest lock wait (from 60 µs before it ends): what
    /// a convoy or a preempted lock holder looks like in this trace.
    #[arg(long)]
    stall_svg: Option<std::path::PathBuf>,
}

/// Exit 1 when a lock's holds overlap (the trace contradicts mutual exclusion); 2 for a file that
/// is not a well-formed trace.
pub fn cmd(args: &TraceSummaryArgs) -> Result<u8, ExperimentError> {
    use schedlab_benches::trace_check;
    let svg_out = check_output(args.svg.as_deref())?;
    let stall_out = check_output(args.stall_svg.as_deref())?;
    let text = std::fs::read_to_string(&args.file).map_err(|e| bad_input(format!("cannot read {}: {e}", args.file.display())))?;
    let trace = trace_check::parse(&text).map_err(|e| bad_input(format!("{}: {e}", args.file.display())))?;
    outln!("{}", trace_check::summary_text(&trace).trim_end_matches('\n'));
    let mut code = exit::OK;
    if let Some(svg) = &svg_out {
        let from = args.from_us.unwrap_or_else(|| trace_check::busiest_window(&trace, args.span_us));
        let name = args.file.file_name().map_or_else(|| args.file.display().to_string(), |n| n.to_string_lossy().into_owned());
        let title = format!("{name}: {:.0} µs from {:.1} µs", args.span_us, from);
        let drawing = trace_check::excerpt_svg(&trace, from, args.span_us, &title).map_err(bad_input)?;
        if write_output(svg, drawing.as_bytes()) {
            outln!("wrote {}", svg.path().display());
        } else {
            code = exit::WRITE_FAILED;
        }
    }
    if let Some(svg) = &stall_out {
        let Some(wait) = trace_check::longest_wait(&trace) else {
            return Err(bad_input(format!("{}: no lock waits to draw", args.file.display())));
        };
        let title = format!("longest wait: {} on thread {}, {:.1} µs, ending at {:.1} µs", wait.name, wait.tid, wait.duration_us(), wait.end_us);
        let drawing = trace_check::excerpt_svg(&trace, wait.end_us - 60.0, 100.0, &title).map_err(bad_input)?;
        if write_output(svg, drawing.as_bytes()) {
            outln!("wrote {} ({title})", svg.path().display());
        } else {
            code = exit::WRITE_FAILED;
        }
    }
    let overlapping = trace_check::lock_reports(&trace).iter().any(|r| r.overlapping_holds > 0);
    if overlapping {
        tracing::error!("{}: two holds of one lock overlap", args.file.display());
    }
    Ok(if code != exit::OK { code } else if overlapping { exit::CHECK_FAILED } else { exit::OK })
}
