//! Every report's outputs, through one function: [`OutputArgs`] declares `--json`, `--svg` and
//! `--report` once for every subcommand, and [`emit`] takes any report of the contract
//! (`schedlab_benches::report::contract::Report`) and prints its text, writes its JSON, its chart
//! and its HTML page (with the warnings and errors the run printed, kept by [`layer`], a
//! `tracing` layer beside the log's), and decides the exit code from its outcome. The paths are
//! declared before any work (`paths.rs`); a write that fails is an output failure (exit 3); a
//! written one says `wrote PATH`.

use crate::ExperimentError;
use schedlab_benches::experiment::Failures;
use schedlab_benches::report::contract::{Report, View};
use std::path::PathBuf;
use schedlab_benches::files::output::OutputFile;
use schedlab_benches::report::html::Page;
use std::sync::Mutex;
use tracing::field::{Field, Visit};
use tracing::{Event, Subscriber};
use tracing_subscriber::filter::LevelFilter;
use tracing_subscriber::layer::Context;
use tracing_subscriber::Layer;

/// Every warning and error logged so far, as printed (`message key=value ...`), in order.
static PRINTED: Mutex<Vec<String>> = Mutex::new(Vec::new());

/// The fields of one event as one line.
#[derive(Default)]
struct Line(String);

impl Visit for Line {
    fn record_debug(&mut self, field: &Field, value: &dyn std::fmt::Debug) {
        use std::fmt::Write;
        let sep = if self.0.is_empty() { "" } else { " " };
        let _ = match field.name() {
            "message" => write!(self.0, "{sep}{value:?}"),
            name => write!(self.0, "{sep}{name}={value:?}"),
        };
    }
}

/// Keeps the events it sees (see [`layer`]).
struct Keep;

impl<S: Subscriber> Layer<S> for Keep {
    fn on_event(&self, event: &Event<'_>, _ctx: Context<'_, S>) {
        let mut line = Line::default();
        event.record(&mut line);
        let level = if *event.metadata().level() == tracing::Level::ERROR { "error" } else { "warning" };
        if let Ok(mut kept) = PRINTED.lock() {
            kept.push(format!("{level}: {}", line.0));
        }
    }
}

/// The layer that keeps the warnings and errors for the report (added by `logging::init`).
pub fn layer<S: Subscriber + for<'a> tracing_subscriber::registry::LookupSpan<'a>>() -> impl Layer<S> {
    Keep.with_filter(LevelFilter::WARN)
}

/// Keeps a line said outside the log (`out::error`, `out::warning`) for the report.
pub fn keep(line: String) {
    if let Ok(mut kept) = PRINTED.lock() {
        kept.push(line);
    }
}

/// The warnings and errors printed so far.
pub fn printed() -> Vec<String> {
    PRINTED.lock().map(|k| k.clone()).unwrap_or_default()
}

/// Writes the report, when one was asked for: `page` assembled now, the printed warnings added.
/// A failure is logged and added to `failures` (exit 3); success prints `wrote PATH`.
pub fn write(out: Option<&OutputFile>, page: impl FnOnce() -> Page, failures: &mut Failures) {
    let Some(out) = out else { return };
    let mut page = page();
    page.warnings(printed());
    if crate::write_output(out, page.render().as_bytes()) {
        outln!("wrote {}", out.path().display());
    } else {
        failures.add(ExperimentError::output_failed(String::new()));
    }
}

/// `--json` and `--report`: declared here once, flattened into every subcommand (inside
/// [`OutputArgs`] for those that draw a chart).
#[derive(clap::Args, Debug, Clone, Default)]
pub struct ReportArgs {
    /// Write the report, with provenance, as JSON to this file (its `schema` and
    /// `schema_version` fields name the format; compare's: notes/compare-schema.md).
    #[arg(long, value_name = "PATH")]
    pub json: Option<PathBuf>,
    /// Also write everything as one self-contained HTML page (command line, provenance, tables,
    /// charts, warnings) to this file; checked before the work, written at the end.
    #[arg(long, value_name = "PATH")]
    pub report: Option<PathBuf>,
}

/// `--json`, `--svg` and `--report`, for the subcommands that draw a chart.
#[derive(clap::Args, Debug, Clone, Default)]
pub struct OutputArgs {
    #[command(flatten)]
    pub base: ReportArgs,
    /// Draw the command's chart, with the provenance line, as SVG to this file.
    #[arg(long, value_name = "PATH")]
    pub svg: Option<PathBuf>,
}

impl ReportArgs {
    /// As [`OutputArgs`] without a chart: a subcommand that draws none has no `--svg`.
    pub fn outputs(&self) -> OutputArgs {
        OutputArgs { base: self.clone(), svg: None }
    }
}

/// The outputs [`OutputArgs`] named, claimed before the work.
#[derive(Default)]
pub struct Claimed {
    pub json: Option<OutputFile>,
    pub svg: Option<OutputFile>,
    pub report: Option<OutputFile>,
}

impl OutputArgs {
    /// Adds the three outputs to a command's declaration (`paths.rs`).
    pub fn declare(&self, paths: crate::paths::Paths) -> crate::paths::Paths {
        paths.output("--json", self.base.json.as_deref()).output("--svg", self.svg.as_deref()).output("--report", self.base.report.as_deref())
    }

    /// The declared outputs, before any work. `--svg` on a command that draws no chart is bad
    /// input (`R::DRAWS`).
    pub fn claim<R: Report>(&self) -> Result<Claimed, ExperimentError> {
        if self.svg.is_some() && !R::DRAWS {
            return Err(crate::bad_input(format!("--svg: `schedlab {}` draws no chart", R::COMMAND)));
        }
        Ok(Claimed {
            json: crate::check_output(self.base.json.as_deref())?,
            svg: crate::check_output(self.svg.as_deref())?,
            report: crate::check_output(self.base.report.as_deref())?,
        })
    }
}

/// Every output of a finished report: its text on stdout, then the JSON, the chart and the page
/// the user asked for; the exit code from `failures` (what the command met besides the report)
/// and the report's outcome. Each failure is said once.
pub fn emit<R: Report>(report: &R, view: View, claimed: &Claimed, mut failures: Failures) -> Result<(), ExperimentError> {
    out!("{}", report.text(view));
    if let Some(out) = &claimed.json {
        match report.json(crate::signals::received().map(crate::signals::name)) {
            Ok(text) if crate::write_output(out, text.as_bytes()) => outln!("wrote {}", out.path().display()),
            Ok(_) => failures.add(ExperimentError::output_failed(String::new())),
            Err(e) => failures.add(ExperimentError::output_failed(e)),
        }
    }
    if let Some(out) = &claimed.svg {
        match report.svg_chart().map(|c| c.svg) {
            Some(drawn) => crate::out::svg(out, drawn, &mut failures),
            None => failures.add(ExperimentError::output_failed(format!("{}: no chart to draw", out.path().display()))),
        }
    }
    write(claimed.report.as_ref(), || report.page(view), &mut failures);
    if let Err(e) = report.outcome().failures().finish() {
        failures.add(e);
    }
    failures.finish()
}
