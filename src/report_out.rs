//! Every report's outputs, through one function: [`OutputArgs`] declares `--json`, `--svg` and
//! `--report` once for every subcommand, and [`emit`] takes any report of the contract
//! (`schedlab_benches::report::contract::Report`) and prints its text, writes its JSON, its chart
//! and its HTML page (with the warnings and errors the run said or logged, kept by `out.rs`),
//! and decides the exit code from its outcome. The paths are declared before any work
//! (`paths.rs`); a write that fails is an output failure (exit 3); a written one says
//! `wrote PATH`.

use crate::paths::{check_output, Paths};
use schedlab_benches::experiment::{ExperimentError, Failures, Observer};
use schedlab_benches::files::output::OutputFile;
use schedlab_benches::report::charts::ChartError;
use schedlab_benches::report::contract::{Report, View};
use schedlab_benches::report::html::Page;
use std::path::PathBuf;

/// Writes an output; on failure says one line and returns the output failure (exit 3), told
/// (the caller adds it and prints no "wrote" line).
fn write_output(out: &OutputFile, bytes: &[u8]) -> Result<(), ExperimentError> {
    out.write(bytes).map_err(|e| {
        crate::out::error(&e);
        ExperimentError::output_failed(e.to_string()).told()
    })
}

/// Says that `out` was written.
fn wrote(out: &OutputFile) {
    outln!("wrote {}", out.path().display());
}

/// Writes `value` as pretty JSON and a newline to `file`; true when written. A failure is said
/// once here and added to `failures` as an output failure (its message already printed).
pub fn json(file: &OutputFile, value: &impl serde::Serialize, failures: &mut Failures) -> bool {
    let written = match serde_json::to_string_pretty(value) {
        Ok(text) => write_output(file, (text + "\n").as_bytes()),
        Err(e) => {
            let message = format!("cannot serialise {}: {e}", file.path().display());
            crate::out::error(&message);
            Err(ExperimentError::output_failed(message).told())
        }
    };
    written.map_err(|e| failures.add(e)).is_ok()
}

/// Writes a drawn chart to `file` and says `wrote PATH`; a chart that could not be drawn or
/// written is an output failure added to `failures` (the reason said or in its message).
fn svg(file: &OutputFile, drawn: Result<String, ChartError>, failures: &mut Failures) {
    match drawn {
        Ok(text) => match write_output(file, text.as_bytes()) {
            Ok(()) => wrote(file),
            Err(e) => failures.add(e),
        },
        // Stopped before anything was measured: nothing to draw is the stop's doing, said, and
        // the stop's exit code stands (not an output failure's).
        Err(e) if crate::signals::received().is_some() => {
            crate::out::warning(format_args!("{} not written: {e}", file.path().display()))
        }
        Err(e) => failures.add(ExperimentError::output_failed(e.to_string())),
    }
}

/// Writes the report, when one was asked for: `page` assembled now, the printed warnings added.
/// A failure is logged and added to `failures` (exit 3); success prints `wrote PATH`.
pub fn write(out: Option<&OutputFile>, page: impl FnOnce() -> Page, failures: &mut Failures) {
    let Some(out) = out else { return };
    let mut page = page();
    page.warnings(crate::out::kept());
    match write_output(out, page.render().as_bytes()) {
        Ok(()) => wrote(out),
        Err(e) => failures.add(e),
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
    pub fn declare(&self, paths: Paths) -> Paths {
        paths
            .output("--json", self.base.json.as_deref())
            .output("--svg", self.svg.as_deref())
            .output("--report", self.base.report.as_deref())
    }

    /// The declared outputs, before any work. `--svg` on a command that draws no chart is bad
    /// input (`R::DRAWS`).
    pub fn claim<R: Report>(&self) -> Result<Claimed, ExperimentError> {
        if self.svg.is_some() && !R::DRAWS {
            let refused = format!("--svg: `schedlab {}` draws no chart", R::COMMAND);
            return Err(ExperimentError::bad_input(refused));
        }
        Ok(Claimed {
            json: check_output(self.base.json.as_deref())?,
            svg: check_output(self.svg.as_deref())?,
            report: check_output(self.base.report.as_deref())?,
        })
    }
}

/// The whole of a command that adds nothing of its own around its one call: the outputs
/// claimed before any work, the call under a progress bar titled `title` that counts `unit`s,
/// the bar closed before the report is printed, then every output through [`emit`].
pub fn run_and_emit<R: Report>(
    outputs: &OutputArgs,
    title: &'static str,
    unit: &'static str,
    run: impl FnOnce(&mut dyn Observer) -> Result<R, ExperimentError>,
) -> Result<(), ExperimentError> {
    let claimed = outputs.claim::<R>()?;
    let mut bar = crate::progress::Bar::new(title, unit);
    let report = run(&mut bar)?;
    drop(bar);
    emit(&report, View::default(), &claimed, Failures::default())
}

/// Every output of a finished report: its text on stdout, then the JSON, the chart and the page
/// the user asked for; the exit code from `failures` (what the command met besides the report)
/// and the report's outcome. Each failure is said once.
pub fn emit<R: Report>(
    report: &R,
    view: View,
    claimed: &Claimed,
    mut failures: Failures,
) -> Result<(), ExperimentError> {
    out!("{}", report.text(view));
    if let Some(out) = &claimed.json {
        match report.json(crate::signals::received().map(crate::signals::name)) {
            Ok(text) => match write_output(out, text.as_bytes()) {
                Ok(()) => wrote(out),
                Err(e) => failures.add(e),
            },
            Err(e) => failures.add(ExperimentError::output_failed(e.to_string())),
        }
    }
    if let Some(out) = &claimed.svg {
        match report.svg_chart().map(|c| c.svg) {
            Some(drawn) => svg(out, drawn, &mut failures),
            None => failures.add(ExperimentError::output_failed(format!(
                "{}: no chart to draw",
                out.path().display()
            ))),
        }
    }
    write(claimed.report.as_ref(), || report.page(view), &mut failures);
    if let Err(e) = report.outcome().failures().finish() {
        failures.add(e);
    }
    failures.finish()
}
