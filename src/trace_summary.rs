//! `schedlab trace-summary FILE`: checks a trace written by `run --trace` (lock holds must not
//! overlap) and summarises it; optionally draws an excerpt and the longest wait. The parsing and
//! drawing are in `schedlab_benches::experiment::trace_summary`; this file parses and prints.

use crate::paths::{check_input, check_output};
use crate::signals::INTERRUPT;
use schedlab_benches::experiment::options::units;
use schedlab_benches::experiment::trace_summary::{self, TraceSummaryConfig};
use schedlab_benches::experiment::ExperimentError;
use schedlab_benches::report::pages::TraceSummaryPage;

#[derive(clap::Args, Debug, Clone)]
pub struct TraceSummaryArgs {
    /// The trace file (Chrome / Perfetto JSON).
    file: std::path::PathBuf,
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
    /// `--json` (the summary, per lock), `--svg` (an excerpt: see --from-us, --span-us) and
    /// `--report`.
    #[command(flatten)]
    outputs: crate::report_out::OutputArgs,
}

/// Every path `trace-summary` reads or writes (`paths.rs`).
pub(crate) fn paths(args: &TraceSummaryArgs) -> Result<crate::paths::Paths, ExperimentError> {
    Ok(args.outputs.declare(
        crate::paths::Paths::default()
            .input("FILE", Some(&args.file))
            .output("--stall-svg", args.stall_svg.as_deref()),
    ))
}

/// Exit 1 when a lock's holds overlap (the trace contradicts mutual exclusion); 2 for a file that
/// is not a well-formed trace; 3 when a drawing could not be written.
pub fn cmd(args: &TraceSummaryArgs, log: crate::logging::Start) -> Result<(), ExperimentError> {
    let _logging = log.logs()?;
    check_input(&args.file)?;
    let mut claimed = args.outputs.claim::<TraceSummaryPage>()?;
    // The excerpt is drawn and written by the experiment as it reads the trace.
    let cfg = TraceSummaryConfig {
        file: args.file.clone(),
        excerpt: claimed.svg.take(),
        from_us: args.from_us,
        span_us: args.span_us,
        stall: check_output(args.stall_svg.as_deref())?,
    };
    let provenance = schedlab_benches::files::provenance::Provenance::collect();
    let mut bar = crate::progress::Bar::new("schedlab trace-summary", "drawings");
    let report = trace_summary::run(&cfg, &INTERRUPT, &mut bar)?;
    let page = TraceSummaryPage { report, file: args.file.clone(), provenance };
    crate::report_out::emit(&page, Default::default(), &claimed, Default::default())
}
