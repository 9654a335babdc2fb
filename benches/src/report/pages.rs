//! The report contract (`report::contract`) for the two experiments whose drawings are written
//! as they are made: `schedlab flamegraph` (interactive flamegraphs into `--out`) and
//! `schedlab trace-summary` (an excerpt and the longest wait), and their JSON.

use crate::experiment::flamegraph::FlamegraphReport;
use crate::experiment::trace_summary::TraceSummaryReport;
use crate::files::provenance::Provenance;

/// The report contract (`report::contract`) of `schedlab flamegraph`: where the time goes as a
/// table, each flamegraph interactive; its drawings are written to `--out`, so `--svg` is not
/// its (refused before the work).
impl serde::Serialize for FlamegraphReport {
    /// The time table's rows, the lines and the failures (the profiles themselves are in the
    /// files written to `--out`).
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeStruct;
        let mut s = serializer.serialize_struct("Flamegraph", 6)?;
        s.serialize_field("provenance", &self.provenance)?;
        s.serialize_field("rows", &self.rows)?;
        s.serialize_field("lines", &self.lines)?;
        s.serialize_field("write_failures", &self.write_failures)?;
        s.serialize_field("run_failures", &self.run_failures)?;
        s.serialize_field("interrupted", &self.interrupted)?;
        s.end()
    }
}

impl super::contract::Report for FlamegraphReport {
    const COMMAND: &'static str = "flamegraph";
    const SCHEMA_VERSION: u32 = 1;
    const DRAWS: bool = false;

    fn provenance(&self) -> Provenance {
        self.provenance.clone()
    }

    fn text(&self, _view: super::contract::View) -> String {
        let mut out = format!("{}\n", self.provenance.one_line());
        for line in self.lines.iter().filter(|l| !l.starts_with("wrote ")) {
            out.push_str(line);
            out.push('\n');
        }
        out.push_str("\nwhere the time goes (percent of on-CPU samples; stats/work = stats / (core + stats)):\n");
        out.push_str(&crate::driver::profile::format_table(&self.table_rows()));
        out.push('\n');
        for line in self.lines.iter().filter(|l| l.starts_with("wrote ")) {
            out.push_str(line);
            out.push('\n');
        }
        if self.interrupted {
            out.push_str("(interrupted: the profiles cover the part that ran)\n");
        }
        out
    }

    fn tables(&self) -> Vec<super::table::Table> {
        use crate::driver::profile::Category;
        use super::table::{Cell, Table};
        let mut t = Table::new(
            "Where the time goes (percent of on-CPU samples)",
            &[("variant", ""), ("samples", ""), ("core", "%"), ("stats", "%"), ("counter sums", "%"), ("lock", "%"), ("outside", "%"), ("other", "%"), ("stats of the work", "%"), ("CPU", "s"), ("sampled", "s")],
        );
        for (name, s) in self.table_rows() {
            t.row(vec![
                Cell::text(name),
                Cell::num(s.samples as f64, 0),
                Cell::num(s.share(Category::Core), 1),
                Cell::num(s.share(Category::Stats), 1),
                Cell::num(s.sums_share(), 1),
                Cell::num(s.share(Category::Lock), 1),
                Cell::num(s.share(Category::Outside), 1),
                Cell::num(s.share(Category::Other), 1),
                Cell::num(s.stats_of_work(), 1),
                Cell::opt(s.cpu_s, 2),
                Cell::num(s.sampled_s, 2),
            ]);
        }
        t.note("stats of the work = stats ÷ (core + stats)");
        vec![t]
    }

    fn charts(&self) -> Vec<super::contract::Chart> {
        self.svgs
            .iter()
            .map(|(title, svg)| super::contract::Chart { title: title.clone(), svg: Ok(svg.clone()), interactive: true, beside: None })
            .collect()
    }

    fn svg_chart(&self) -> Option<super::contract::Chart> {
        None
    }

    fn outcome(&self) -> super::contract::Outcome {
        super::contract::Outcome {
            interrupted: self.interrupted,
            failed_checks: if self.all_consistent() { vec![] } else { vec!["a profiled run failed its end-of-run checks (see `schedlab run --variant V`)".into()] },
            failed_runs: self.run_failures.iter().map(|_| String::new()).collect(),
            failed_outputs: self.write_failures.iter().map(|_| String::new()).collect(),
            ..Default::default()
        }
    }
}

/// `schedlab trace-summary FILE`'s report: the summary of one trace file (the trace itself is
/// not repeated in the JSON: its file is named).
pub struct TraceSummaryPage {
    pub report: TraceSummaryReport,
    pub file: std::path::PathBuf,
    pub provenance: Provenance,
}

impl serde::Serialize for TraceSummaryPage {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeStruct;
        let mut s = serializer.serialize_struct("TraceSummary", 6)?;
        s.serialize_field("provenance", &self.provenance)?;
        s.serialize_field("file", &self.file.display().to_string())?;
        s.serialize_field("summary", &self.report.summary)?;
        s.serialize_field("overlapping_holds", &self.report.overlapping())?;
        s.serialize_field("locks", &self.report.locks)?;
        s.serialize_field("written", &self.report.written)?;
        s.end()
    }
}

/// The report contract (`report::contract`) of `schedlab trace-summary`: its drawings (the
/// excerpt is `--svg`'s, written by the experiment as it draws it) and the trace's link.
impl super::contract::Report for TraceSummaryPage {
    const COMMAND: &'static str = "trace-summary";
    const SCHEMA_VERSION: u32 = 1;

    fn provenance(&self) -> Provenance {
        self.provenance.clone()
    }

    fn text(&self, _view: super::contract::View) -> String {
        let mut out = format!("{}\n", self.report.summary.trim_end_matches('\n'));
        for line in &self.report.written {
            out.push_str(line);
            out.push('\n');
        }
        out
    }

    fn tables(&self) -> Vec<super::table::Table> {
        use super::table::{Cell, Table, Verdict};
        let mut t = Table::new(
            "Locks in the trace",
            &[("lock", ""), ("holds", ""), ("hold median", "µs"), ("hold p90", "µs"), ("held", "% of the traced time"), ("waits", ""), ("wait median", "µs"), ("wait p90", "µs"), ("hand-overs", ""), ("re-acquisitions", ""), ("hand-over gap median", "µs"), ("overlapping holds", "")],
        );
        for l in &self.report.locks {
            // One lock is held at most the whole traced time; above it the holds overlap, and
            // the share is no figure.
            let held = if l.held_pct > 100.0 { Cell::missing(format!("not estimable: {:.0}% (holds overlap)", l.held_pct)) } else { Cell::num(l.held_pct, 1) };
            t.row(vec![
                Cell::text(l.lock.clone()),
                Cell::num(l.holds as f64, 0),
                Cell::num(l.hold_median_us, 2),
                Cell::num(l.hold_p90_us, 2),
                held,
                Cell::num(l.waits as f64, 0),
                Cell::num(l.wait_median_us, 2),
                Cell::num(l.wait_p90_us, 2),
                Cell::num(l.handovers as f64, 0),
                Cell::num(l.reacquisitions as f64, 0),
                Cell::num(l.handover_gap_median_us, 2),
                if l.overlapping_holds == 0 { Cell::judged(Verdict::Met, "0") } else { Cell::judged(Verdict::Missed, l.overlapping_holds.to_string()) },
            ]);
        }
        vec![t]
    }

    fn charts(&self) -> Vec<super::contract::Chart> {
        self.report.drawings.iter().map(|(title, svg)| super::contract::Chart::new(title.clone(), Ok(svg.clone()))).collect()
    }

    fn svg_chart(&self) -> Option<super::contract::Chart> {
        None
    }

    fn prose(&self) -> Vec<(String, String)> {
        vec![("Summary".into(), self.report.summary.clone())]
    }

    fn trace(&self) -> Option<&std::path::Path> {
        Some(&self.file)
    }

    fn outcome(&self) -> super::contract::Outcome {
        super::contract::Outcome {
            failed_checks: if self.report.overlapping() { vec![format!("{}: two holds of one lock overlap", self.file.display())] } else { vec![] },
            failed_outputs: self.report.write_failures.iter().map(|_| String::new()).chain(self.report.not_drawn.iter().cloned()).collect(),
            ..Default::default()
        }
    }
}
