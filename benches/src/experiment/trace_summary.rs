//! `trace-summary` as an experiment: a trace written by `run --trace` read and checked (a lock's
//! holds must not overlap: mutual exclusion), summarised per track and per lock, and optionally
//! drawn: an excerpt of the timeline, and 100 µs around the end of the longest lock wait.
//!
//! Everything that can make the request impossible (an unreadable file, a file that is not a
//! trace) is found before anything is written; the drawings are this experiment's product,
//! written atomically by it. A stall drawing asked of a trace without lock waits can only be
//! known after the parse: the summary is kept and the drawing is a failed output (exit 3) that
//! says why.

use crate::error::ExperimentError;
use crate::experiment::observer::{Event, Observer};
use crate::files::input::{caps, read_input};
use crate::files::output::OutputFile;
use crate::files::stop::until_stopped;
use crate::files::trace_check::{self, LockReport, Trace, TraceOverview};
use schedlab_core::sync::AtomicBool;
use std::path::PathBuf;

#[derive(Debug)]
pub struct TraceSummaryConfig {
    /// The trace file (Chrome / Perfetto JSON).
    pub file: PathBuf,
    /// Draw an excerpt here: from `from_us` (default: where the least busy thread is busiest),
    /// `span_us` long.
    pub excerpt: Option<OutputFile>,
    pub from_us: Option<f64>,
    pub span_us: f64,
    /// Draw the longest lock wait here.
    pub stall: Option<OutputFile>,
}

pub struct TraceSummaryReport {
    pub trace: Trace,
    /// The trace's size, span, tracks and slices by name.
    pub overview: TraceOverview,
    pub locks: Vec<LockReport>,
    /// One line per drawing written.
    pub written: Vec<String>,
    /// Each drawing made, as (title, SVG), written or not: for `--report`.
    pub drawings: Vec<(String, String)>,
    /// Drawings that could not be written (told to the observer as they happened).
    pub write_failures: Vec<String>,
    /// Drawings asked for that the trace cannot give, with why (not yet told).
    pub not_drawn: Vec<String>,
}

impl TraceSummaryReport {
    /// Two holds of one lock overlap: the trace contradicts mutual exclusion.
    pub fn overlapping(&self) -> bool {
        self.locks.iter().any(|r| r.overlapping_holds > 0)
    }
}

fn write(
    out: &OutputFile,
    title: &str,
    drawing: String,
    line: String,
    report: &mut TraceSummaryReport,
    observer: &mut dyn Observer,
) {
    let written = out.write(drawing.as_bytes());
    report.drawings.push((title.to_string(), drawing));
    match written {
        Ok(()) => report.written.push(line),
        Err(e) => {
            let e = e.to_string();
            observer.event(Event::Failure(&e));
            report.write_failures.push(e);
        }
    }
}

/// A trace parsed and summarised: what [`analyse`] gives.
type Analysed = (Trace, TraceOverview, Vec<LockReport>);

/// Parses and summarises a trace on a thread of its own while the caller polls `stop` (a trace
/// of hundreds of MiB takes seconds to parse): a stop is honoured within [`STOP_POLL`], the
/// thread left to the process's exit. A trace without a single event is refused: there is
/// nothing to summarise (an empty array is not a run's trace).
fn analyse(text: String, file: &str, stop: &AtomicBool) -> Result<Analysed, ExperimentError> {
    let analysed = until_stopped("trace-parse", stop, move || {
        trace_check::parse(&text).map_err(|e| e.to_string()).and_then(|trace| {
            if trace.slices.is_empty() && trace.instants.is_empty() {
                return Err("it holds no events: not the trace of a run".to_string());
            }
            let overview = trace_check::overview(&trace);
            let locks = trace_check::lock_reports(&trace);
            Ok((trace, overview, locks))
        })
    });
    match analysed {
        Ok(Some(analysed)) => {
            analysed.map_err(|e| ExperimentError::bad_input(format!("{file}: {e}")))
        }
        Ok(None) => {
            Err(ExperimentError::stopped(format!("stopped while reading the trace {file}")))
        }
        Err(e) => Err(ExperimentError::bad_input(format!("{file}: {e}"))),
    }
}

pub fn run(
    cfg: &TraceSummaryConfig,
    stop: &AtomicBool,
    observer: &mut dyn Observer,
) -> Result<TraceSummaryReport, ExperimentError> {
    let file = cfg.file.display();
    observer.event(Event::Step { done: 0, label: &format!("reading the trace {file}") });
    let text = read_input(&cfg.file, "trace", caps::TRACE, stop)?;
    // Said so that a stop can be aimed at the parse (tests/cli_stops.rs).
    observer.event(Event::Step {
        done: 0,
        label: &format!(
            "parsing the trace {file} ({:.1} MiB)",
            text.len() as f64 / (1 << 20) as f64
        ),
    });
    let (trace, overview, locks) = analyse(text, &file.to_string(), stop)?;
    let longest = cfg.stall.as_ref().and_then(|_| trace_check::longest_wait(&trace).cloned());
    let mut report = TraceSummaryReport {
        overview,
        locks,
        trace,
        written: Vec::new(),
        drawings: Vec::new(),
        write_failures: Vec::new(),
        not_drawn: Vec::new(),
    };
    if let (Some(out), None) = (&cfg.stall, &longest) {
        report.not_drawn.push(format!(
            "{} not written: {file} has no lock waits to draw",
            out.path().display()
        ));
    }
    if let Some(out) = &cfg.excerpt {
        let from =
            cfg.from_us.unwrap_or_else(|| trace_check::busiest_window(&report.trace, cfg.span_us));
        let name = cfg
            .file
            .file_name()
            .map_or_else(|| file.to_string(), |n| n.to_string_lossy().into_owned());
        let title = format!("{name}: {:.0} µs from {:.1} µs", cfg.span_us, from);
        let drawing = trace_check::excerpt_svg(&report.trace, from, cfg.span_us, &title)
            .map_err(ExperimentError::bad_input)?;
        write(
            out,
            &title,
            drawing,
            format!("wrote {}", out.path().display()),
            &mut report,
            observer,
        );
    }
    if let (Some(out), Some(wait)) = (&cfg.stall, longest) {
        let title = format!(
            "longest wait: {} on thread {}, {:.1} µs, ending at {:.1} µs",
            wait.name,
            wait.tid,
            wait.duration_us(),
            wait.end_us
        );
        let drawing = trace_check::excerpt_svg(&report.trace, wait.end_us - 60.0, 100.0, &title)
            .map_err(ExperimentError::bad_input)?;
        let line = format!("wrote {} ({title})", out.path().display());
        write(out, &title, drawing, line, &mut report, observer);
    }
    Ok(report)
}

/// The failures a finished summary ends with: a drawing not written, then overlapping holds.
pub fn outcome(report: &TraceSummaryReport, file: &std::path::Path) -> Result<(), ExperimentError> {
    let mut failures = crate::error::Failures::default();
    for told in &report.write_failures {
        failures.add(ExperimentError::output_failed(told.clone()).told());
    }
    for why in &report.not_drawn {
        failures.add(ExperimentError::output_failed(why.clone()));
    }
    if report.overlapping() {
        failures.add(ExperimentError::check_failed(format!(
            "{}: two holds of one lock overlap",
            file.display()
        )));
    }
    failures.finish()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::ErrorKind;

    #[test]
    fn a_trace_without_events_is_refused_at_load() {
        let stop = AtomicBool::new(false);
        let e = analyse("[]".into(), "t.json", &stop).map(drop).unwrap_err();
        assert_eq!(e.kind, ErrorKind::BadInput);
        assert!(e.message.contains("holds no events") && !e.message.contains('\n'), "{e}");
        let one = r#"[{"ph":"B","name":"sched lock: hold","cat":"lock","tid":1,"ts":1.0},{"ph":"E","name":"sched lock: hold","cat":"lock","tid":1,"ts":2.0}]"#;
        assert!(analyse(one.into(), "t.json", &stop).is_ok());
    }
}
