//! Each experiment's `--report` page (`report::html::Page`): the same text the command prints, as
//! its tables, and its charts. Every function takes `figures` (title, SVG markup): the charts the
//! caller drew, inlined after the tables, in the order given. The caller adds the warnings and
//! renders.

use super::html::Page;
use crate::driver::workload::RunResult;
use crate::experiment::compare::CompareReport;
use crate::experiment::flamegraph::FlamegraphReport;
use crate::experiment::kernel::KernelReport;
use crate::experiment::predict::PredictReport;
use crate::experiment::roundtrip::RoundtripReport;
use crate::experiment::simulate::SimulateReport;
use crate::experiment::sweep::SweepReport;
use crate::experiment::trace_summary::TraceSummaryReport;
use crate::files::provenance::Provenance;
use std::path::Path;

type Figures = Vec<(String, String)>;

/// `schedlab compare`: its tables as printed (`brief`: without the per-lock tables).
pub fn compare(report: &CompareReport, brief: bool, figures: Figures) -> Page {
    let mut page = Page::new("schedlab compare", &report.provenance);
    page.table("Results", super::compare::full_text(report, brief)).figures(figures);
    page
}

/// `schedlab sweep`: the points and the model, its chart (among `figures`), the notes.
pub fn sweep(report: &SweepReport, figures: Figures) -> Page {
    let mut page = Page::new("schedlab sweep", &report.provenance);
    page.table("Points and model", super::sweep::points_and_model_text(report)).figures(figures);
    page.table("Notes", super::sweep::notes_text(report));
    page
}

/// `schedlab predict` (and `--validate`).
pub fn predict(report: &PredictReport, figures: Figures) -> Page {
    let mut page = Page::new("schedlab predict", &report.provenance);
    page.table("Prediction", super::predict::text(report)).figures(figures);
    page
}

/// `schedlab roundtrip`.
pub fn roundtrip(report: &RoundtripReport, figures: Figures) -> Page {
    let mut page = Page::new("schedlab roundtrip", &report.provenance);
    page.table("Round trips", super::roundtrip::text(report)).figures(figures);
    page
}

/// `schedlab simulate`.
pub fn simulate(report: &SimulateReport, figures: Figures) -> Page {
    let mut page = Page::new("schedlab simulate", &report.provenance.base);
    page.table("Simulation", super::simulate::text(report)).figures(figures);
    page
}

/// `schedlab kernel`.
pub fn kernel(report: &KernelReport, figures: Figures) -> Page {
    let mut page = Page::new("schedlab kernel", &report.provenance);
    page.table("Kernel and model", super::kernel::kernel_text(report));
    if !report.fidelity.is_empty() {
        let columns = super::kernel::FIDELITY_COLUMNS.iter().map(|c| c.to_string()).collect();
        let rows = report.fidelity.iter().map(|r| super::kernel::fidelity_cells(r).to_vec()).collect();
        page.grid("Fidelity: the model against the kernel", columns, rows);
    }
    page.figures(figures).warnings(report.warnings.clone());
    page
}

/// `schedlab flamegraph`: `header` (the settings line it prints), the time table, then each
/// flamegraph, interactive.
pub fn flamegraph(report: &FlamegraphReport, header: &str, figures: Figures) -> Page {
    let mut page = Page::new("schedlab flamegraph", &report.provenance);
    let mut text = format!("{header}\n");
    for line in &report.lines {
        text.push_str(line);
        text.push('\n');
    }
    page.table("Runs", text);
    page.table("Where the time goes (percent of on-CPU samples)", crate::driver::profile::format_table(&report.table_rows()));
    for (title, svg) in &report.svgs {
        page.interactive(title.clone(), svg.clone());
    }
    page.figures(figures);
    page
}

/// `schedlab trace-summary FILE`: the summary, the drawings it made, a link to the trace.
pub fn trace_summary(report: &TraceSummaryReport, file: &Path, figures: Figures) -> Page {
    let mut page = Page::new("schedlab trace-summary", &Provenance::collect());
    page.table("Summary", report.summary.clone()).figures(report.drawings.clone()).figures(figures).trace(file);
    page
}

/// `schedlab run`: `text` as printed (the result, the lockstat table), and the trace written.
pub fn run(result: &RunResult, text: String, trace: Option<&Path>, figures: Figures) -> Page {
    let mut page = Page::new(format!("schedlab run: {}", result.variant), &Provenance::collect());
    page.table("Run", text).figures(figures);
    if let Some(trace) = trace {
        page.trace(trace);
    }
    page
}
