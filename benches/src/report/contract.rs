//! The report contract: what every experiment's report knows how to give after `run()`, so that
//! one function of the CLI (`src/report_out.rs::emit`) does every output the user asked for and
//! decides the exit code, for any command.
//!
//! A report gives:
//! - its **text** for the terminal ([`Report::text`]; a [`View`] says what the user asked to
//!   leave out);
//! - its **JSON** ([`Report::json`]): the report's own fields, serde's, inside one envelope that
//!   names the schema and its version and the signal that stopped the run, if one did;
//! - its **tables** as data ([`Report::tables`]: typed cells, columns with units), which the HTML
//!   page draws as real tables;
//! - its **charts** ([`Report::charts`]: SVG or why none), the first of which is `--svg`'s;
//! - its **outcome** ([`Report::outcome`]): interruption, warnings, disturbed runs, failed
//!   checks, failed runs and outputs that failed during the work, from which the exit code
//!   follows ([`Outcome::failures`]);
//! - its **page** ([`Report::page`]), assembled from all of the above by default.
//!
//! The contract for an implementer: `text`, `tables` and `charts` are pure (no I/O, no clock);
//! a figure that cannot exist physically never reaches a table as a number (it is refused where
//! it is computed and arrives as [`super::table::Cell::Missing`] with its reason); a verdict on
//! disturbed runs is [`super::table::Verdict::NotJudged`].

use super::html::Page;
use super::table::Table;
use crate::error::{ErrorKind, ExperimentError, Failures};
use crate::files::provenance::Provenance;
use serde::Serialize;

/// What the user asked the terminal text to leave out.
#[derive(Clone, Copy, Debug, Default)]
pub struct View {
    /// `--brief`: the main tables only.
    pub brief: bool,
}

/// A chart: its title, and its SVG or why it could not be drawn.
#[derive(Clone, Debug)]
pub struct Chart {
    pub title: String,
    pub svg: Result<String, String>,
    /// An SVG with its own script (a flamegraph): kept interactive, in a frame of its own.
    pub interactive: bool,
    /// The title of the table it illustrates: the page puts it right after that table.
    pub beside: Option<String>,
}

impl Chart {
    pub fn new(title: impl Into<String>, svg: Result<String, String>) -> Chart {
        Chart { title: title.into(), svg, interactive: false, beside: None }
    }

    /// Placed beside the table titled `table`.
    pub fn beside(mut self, table: impl Into<String>) -> Chart {
        self.beside = Some(table.into());
        self
    }
}

/// What a run came to, beside its figures.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Outcome {
    /// A stop came; the report holds what finished.
    pub interrupted: bool,
    /// Warnings the reader must see (shown in the page's box at the top).
    pub warnings: Vec<String>,
    /// Runs whose figures do not measure what they claim (other processes, oversubscription).
    pub disturbed: Vec<String>,
    /// End-of-run checks that failed (exit 1).
    pub failed_checks: Vec<String>,
    /// Runs that failed (exit 4); an empty message when the user was told as it happened.
    pub failed_runs: Vec<String>,
    /// Outputs the work itself writes (a CSV, a drawing) that failed (exit 3); as above.
    pub failed_outputs: Vec<String>,
}

impl Outcome {
    /// The failures this outcome makes, for the exit code (a stop is the CLI's: it knows the
    /// signal).
    pub fn failures(&self) -> Failures {
        let mut failures = Failures::default();
        for (kind, messages) in [
            (ErrorKind::CheckFailed, &self.failed_checks),
            (ErrorKind::RunFailed, &self.failed_runs),
            (ErrorKind::OutputFailed, &self.failed_outputs),
        ] {
            for message in messages {
                failures.add(ExperimentError { kind, message: message.clone() });
            }
        }
        failures
    }
}

/// The envelope of every JSON report: the schema's name and version, the signal, the report.
#[derive(Serialize)]
struct Envelope<'a, R: Serialize> {
    /// `schedlab-<command>`.
    schema: String,
    /// Raised when a field changes meaning or goes away.
    schema_version: u32,
    /// The signal that stopped the work (SIGINT, SIGTERM, SIGHUP), if one did.
    signal: Option<&'a str>,
    #[serde(flatten)]
    report: &'a R,
}

/// Every experiment's report (see the module documentation for the contract).
pub trait Report: Serialize + Sized {
    /// The subcommand (`compare`): the page's title and the JSON schema's name.
    const COMMAND: &'static str;
    /// The JSON schema's version.
    const SCHEMA_VERSION: u32;
    /// Whether the command draws a chart for `--svg` (known before any work, so that `--svg` on
    /// a command that draws none is refused then).
    const DRAWS: bool = true;

    fn provenance(&self) -> Provenance;

    /// The terminal text.
    fn text(&self, view: View) -> String;

    /// The tables, as data.
    fn tables(&self) -> Vec<Table>;

    /// The charts; the first drawable one is `--svg`'s.
    fn charts(&self) -> Vec<Chart> {
        Vec::new()
    }

    /// `--svg`'s chart: by default the first of [`Report::charts`]; `None` when the command
    /// draws none (then `--svg` is refused before any work: [`Report::DRAWS`]).
    fn svg_chart(&self) -> Option<Chart> {
        self.charts().into_iter().next()
    }

    fn outcome(&self) -> Outcome;

    /// Sections of prose the page shows after the tables (notes, settings), as (heading, text).
    fn prose(&self) -> Vec<(String, String)> {
        Vec::new()
    }

    /// A trace file the work wrote, linked from the page for Perfetto (`html::Page::trace`).
    fn trace(&self) -> Option<&std::path::Path> {
        None
    }

    /// The JSON document: the envelope around the report's fields.
    fn json(&self, signal: Option<&str>) -> Result<String, String> {
        let envelope = Envelope { schema: format!("schedlab-{}", Self::COMMAND), schema_version: Self::SCHEMA_VERSION, signal, report: self };
        serde_json::to_string_pretty(&envelope).map(|text| text + "\n").map_err(|e| format!("cannot serialise the {} report: {e}", Self::COMMAND))
    }

    /// The HTML page: the outcome's box, each table with the charts beside it, the other
    /// charts, the prose, and the terminal text folded away at the end.
    fn page(&self, view: View) -> Page {
        let mut page = Page::new(format!("schedlab {}", Self::COMMAND), &self.provenance());
        let o = self.outcome();
        let failed: Vec<String> = o.failed_checks.iter().chain(&o.failed_runs).chain(&o.failed_outputs).cloned().collect();
        page.outcome(o.interrupted, &o.disturbed, &failed, &o.warnings);
        let charts = self.charts();
        let mut placed = vec![false; charts.len()];
        for table in self.tables() {
            let title = table.title.clone();
            page.data(table);
            for (i, chart) in charts.iter().enumerate() {
                if chart.beside.as_deref() == Some(title.as_str()) {
                    add_chart(&mut page, chart);
                    placed[i] = true;
                }
            }
        }
        for (chart, _) in charts.iter().zip(&placed).filter(|(_, placed)| !**placed) {
            add_chart(&mut page, chart);
        }
        for (heading, text) in self.prose() {
            page.table(heading, text);
        }
        if let Some(trace) = self.trace() {
            page.trace(trace);
        }
        page.terminal(self.text(view));
        page
    }
}

/// The widest line of a report's text in columns, its first `skip` lines (the provenance line)
/// left out: what the reports' tests hold to 130.
#[cfg(test)]
pub(crate) fn widest_line(text: &str, skip: usize) -> usize {
    text.lines().skip(skip).map(|l| l.chars().count()).max().unwrap_or(0)
}

/// The terminal text of a report drawn from its tables: each laid out by
/// [`Table::to_text`], a blank line between them. A report whose text is this cannot show a
/// figure there that its page and JSON do not have.
pub fn text_of_tables(tables: &[Table]) -> String {
    tables.iter().map(Table::to_text).collect::<Vec<_>>().join("\n")
}

/// The outcome in the terminal, after the tables: the stop, each disturbed run, each failure
/// with a message (an empty one was said as it happened), each warning, wrapped like a table's
/// notes; empty when there is nothing to say. The page says the same in its box at the top.
pub fn text_of_outcome(outcome: &Outcome) -> String {
    let mut said = Vec::new();
    if outcome.interrupted {
        said.push("interrupted: the figures cover the part that ran".to_string());
    }
    said.extend(outcome.disturbed.iter().map(|d| format!("disturbed: {d}")));
    let failed = outcome.failed_checks.iter().chain(&outcome.failed_runs).chain(&outcome.failed_outputs);
    said.extend(failed.filter(|m| !m.is_empty()).map(|m| format!("FAILED: {m}")));
    said.extend(outcome.warnings.iter().cloned());
    let mut out = String::new();
    // Each line of a message starts at the left; a line wrapped goes on indented.
    for line in said.iter().flat_map(|message| message.lines()) {
        for (i, part) in super::table::wrap(line, super::table::NOTE_WIDTH).iter().enumerate() {
            out.push_str(if i == 0 { "" } else { "  " });
            out.push_str(part);
            out.push('\n');
        }
    }
    out
}

/// A chart on a page: inline, interactive in a frame of its own, or the reason it is missing.
fn add_chart(page: &mut Page, chart: &Chart) {
    match (&chart.svg, chart.interactive) {
        (Ok(svg), false) => page.figure(chart.title.clone(), svg.clone()),
        (Ok(svg), true) => page.interactive(chart.title.clone(), svg.clone()),
        (Err(why), _) => page.undrawn(chart.title.clone(), why.clone()),
    };
}

/// Whether a report's three renderings agree on its figures: every number and verdict of its
/// tables shows the same in the terminal text, on the page and in the JSON (a JSON number that
/// rounds to what the cell shows, in the table's unit or scaled by a power of 1000, the scale a
/// column may choose). The error names the first figure that does not. For the reports whose
/// text is drawn from their tables ([`text_of_tables`]), and the tests that hold them to it.
pub fn renderings_agree<R: Report>(report: &R) -> Result<(), String> {
    let text = report.text(View::default());
    let page = report.page(View::default()).render();
    let json = report.json(None)?;
    let value: serde_json::Value = serde_json::from_str(&json).map_err(|e| format!("the JSON does not parse: {e}"))?;
    let mut numbers = Vec::new();
    collect_numbers(&value, &mut numbers);
    for table in report.tables() {
        for (row, cells) in table.rows.iter().enumerate() {
            for (column, cell) in table.columns.iter().zip(cells) {
                let shown = cell.shown_text();
                let at = || format!("{:?}, row {row}, column {:?}: {shown:?}", table.title, column.name);
                if !text.contains(shown) {
                    return Err(format!("{} is not in the terminal text", at()));
                }
                if !page.contains(&super::html::escape(shown)) {
                    return Err(format!("{} is not on the page", at()));
                }
                if let super::table::Cell::Number { .. } = cell {
                    if !json_has(&numbers, shown) {
                        return Err(format!("{} is in no JSON number", at()));
                    }
                }
            }
        }
    }
    Ok(())
}

fn collect_numbers(value: &serde_json::Value, out: &mut Vec<f64>) {
    match value {
        serde_json::Value::Number(n) => out.extend(n.as_f64()),
        serde_json::Value::Array(items) => items.iter().for_each(|v| collect_numbers(v, out)),
        serde_json::Value::Object(fields) => fields.values().for_each(|v| collect_numbers(v, out)),
        _ => {}
    }
}

/// Whether one of `numbers`, in its unit or scaled by 1000^k (|k| ≤ 3), rounds to `shown` (a
/// plain decimal: a cell that shows more than a number is not looked up).
fn json_has(numbers: &[f64], shown: &str) -> bool {
    if shown.parse::<f64>().is_err() {
        return true;
    }
    let digits = shown.split_once('.').map_or(0, |(_, decimals)| decimals.len());
    let scales = [1.0, 1e3, 1e-3, 1e6, 1e-6, 1e9, 1e-9, 100.0];
    numbers
        .iter()
        .any(|x| scales.iter().any(|scale| format!("{:.digits$}", x * scale) == shown))
}
