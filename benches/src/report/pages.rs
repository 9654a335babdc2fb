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
        let mut out = format!("{}\n", self.provenance.head());
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

    fn tables(&self, _judge: super::contract::Judge) -> Vec<super::table::Table> {
        use super::table::{Cell, Table};
        use crate::driver::profile::Category;
        let mut t = Table::new(
            "Where the time goes (percent of on-CPU samples)",
            &[
                ("variant", ""),
                ("samples", ""),
                ("core", "%"),
                ("stats", "%"),
                ("stats 95 %", "%"),
                ("counter sums", "%"),
                ("lock", "%"),
                ("outside", "%"),
                ("other", "%"),
                ("stats of the work", "%"),
                ("stats of the work 95 %", "%"),
                ("CPU", "s"),
                ("sampled", "s"),
            ],
        );
        // A share read from tens of samples says little: its interval says how little.
        let interval = |i: Option<crate::stats::Interval>| {
            i.map_or_else(
                || Cell::missing("not estimable: no samples"),
                |i| Cell::text(format!("{:.1} to {:.1}", i.lo, i.hi)),
            )
        };
        for (name, s) in self.table_rows() {
            t.row(vec![
                Cell::text(name),
                Cell::num(s.samples as f64, 0),
                Cell::num(s.share(Category::Core), 1),
                Cell::num(s.share(Category::Stats), 1),
                interval(s.stats_interval()),
                Cell::num(s.sums_share(), 1),
                Cell::num(s.share(Category::Lock), 1),
                Cell::num(s.share(Category::Outside), 1),
                Cell::num(s.share(Category::Other), 1),
                Cell::num(s.stats_of_work(), 1),
                interval(s.stats_of_work_interval()),
                Cell::opt(s.cpu_s, 2),
                Cell::num(s.sampled_s, 2),
            ]);
        }
        t.note("stats of the work = stats ÷ (core + stats)");
        t.note("95 %: the Wilson interval of a share from its sample count; one run's samples are not independent, so the true uncertainty is larger");
        vec![t]
    }

    fn charts(&self) -> Vec<super::contract::Chart> {
        self.svgs
            .iter()
            .map(|(title, svg)| super::contract::Chart {
                title: title.clone(),
                svg: Ok(svg.clone()),
                interactive: true,
                beside: None,
            })
            .collect()
    }

    fn svg_chart(&self) -> Option<super::contract::Chart> {
        None
    }

    fn outcome(&self) -> super::contract::Outcome {
        super::contract::Outcome {
            interrupted: self.interrupted,
            failed_checks: if self.all_consistent() {
                vec![]
            } else {
                vec!["a profiled run failed its end-of-run checks (see `schedlab run --variant V`)"
                    .into()]
            },
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
        s.serialize_field("overview", &self.report.overview)?;
        s.serialize_field("overlapping_holds", &self.report.overlapping())?;
        s.serialize_field("locks", &self.report.locks)?;
        s.serialize_field("written", &self.report.written)?;
        s.end()
    }
}

/// The report contract (`report::contract`) of `schedlab trace-summary`: its tables (the
/// terminal text is drawn from them, so a figure reads the same in the terminal, the page and
/// the JSON), its drawings (the excerpt is `--svg`'s, written by the experiment as it draws it)
/// and the trace's link.
impl super::contract::Report for TraceSummaryPage {
    const COMMAND: &'static str = "trace-summary";
    const SCHEMA_VERSION: u32 = 2;

    fn provenance(&self) -> Provenance {
        self.provenance.clone()
    }

    fn text(&self, view: super::contract::View) -> String {
        let mut out = super::contract::text_of_tables(&self.tables(self.judge(view)));
        for line in &self.report.written {
            out.push_str(line);
            out.push('\n');
        }
        out
    }

    fn tables(&self, _judge: super::contract::Judge) -> Vec<super::table::Table> {
        use super::table::{Cell, Table};
        let o = &self.report.overview;
        let mut trace = Table::new(
            "The trace",
            &[("file", ""), ("slices", ""), ("instant events", ""), ("span", "ms")],
        );
        trace.row(vec![
            Cell::text(self.file.display().to_string()),
            Cell::num(o.slices as f64, 0),
            Cell::num(o.instants as f64, 0),
            Cell::num(o.span_ms, 1),
        ]);
        let mut tracks = Table::new(
            "Tracks",
            &[("thread", ""), ("name", ""), ("slices", ""), ("instant events", "")],
        );
        for t in &o.tracks {
            tracks.row(vec![
                Cell::num(t.tid as f64, 0),
                Cell::text(t.name.clone()),
                Cell::num(t.slices as f64, 0),
                Cell::num(t.instants as f64, 0),
            ]);
        }
        let mut names =
            Table::new("Slices by name", &[("slice", ""), ("count", ""), ("mean", "µs")]);
        for n in &o.by_name {
            names.row(vec![
                Cell::text(n.name.clone()),
                Cell::num(n.count as f64, 0),
                Cell::num(n.mean_us, 2),
            ]);
        }
        let mut locks = Table::new(
            "Locks in the trace",
            &[
                ("lock", ""),
                ("holds", ""),
                ("hold p50", "µs"),
                ("hold p90", "µs"),
                ("held", "% of span"),
                ("waits", ""),
                ("wait p50", "µs"),
                ("wait p90", "µs"),
                ("hand-overs", ""),
                ("re-acquired", ""),
                ("gap p50", "µs"),
                ("gap p90", "µs"),
                ("overlaps", ""),
            ],
        );
        for l in &self.report.locks {
            // One lock is held at most the whole traced time; above it the holds overlap, and
            // the share is no figure.
            let held = if l.held_pct > 100.0 {
                Cell::missing(format!("not estimable: {:.0}% (holds overlap)", l.held_pct))
            } else {
                Cell::num(l.held_pct, 1)
            };
            locks.row(vec![
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
                Cell::num(l.handover_gap_p90_us, 2),
                Cell::check(l.overlapping_holds == 0, l.overlapping_holds.to_string()),
            ]);
        }
        locks.note("gap: from one thread's release to the next thread's acquisition");
        vec![trace, tracks, names, locks]
    }

    fn charts(&self) -> Vec<super::contract::Chart> {
        self.report
            .drawings
            .iter()
            .map(|(title, svg)| super::contract::Chart::new(title.clone(), Ok(svg.clone())))
            .collect()
    }

    fn svg_chart(&self) -> Option<super::contract::Chart> {
        None
    }

    fn trace(&self) -> Option<&std::path::Path> {
        Some(&self.file)
    }

    fn outcome(&self) -> super::contract::Outcome {
        super::contract::Outcome {
            failed_checks: if self.report.overlapping() {
                vec![format!("{}: two holds of one lock overlap", self.file.display())]
            } else {
                vec![]
            },
            failed_outputs: self
                .report
                .write_failures
                .iter()
                .map(|_| String::new())
                .chain(self.report.not_drawn.iter().cloned())
                .collect(),
            ..Default::default()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::files::trace_check;
    use crate::report::contract::{renderings_agree, Report, View};

    fn summary_of(events: &str) -> TraceSummaryPage {
        let trace = trace_check::parse(events).expect("a well-formed trace");
        let report = TraceSummaryReport {
            overview: trace_check::overview(&trace),
            locks: trace_check::lock_reports(&trace),
            trace,
            written: vec!["wrote x.svg".into()],
            drawings: Vec::new(),
            write_failures: Vec::new(),
            not_drawn: Vec::new(),
        };
        TraceSummaryPage { report, file: "t.json".into(), provenance: Provenance::collect() }
    }

    const EVENTS: &str = r#"[
        {"ph":"M","pid":1,"tid":1,"name":"thread_name","args":{"name":"job-0"}},
        {"ph":"M","pid":1,"tid":2,"name":"thread_name","args":{"name":"job-1"}},
        {"ph":"B","name":"bfq_insert_request","cat":"schedlab::path","tid":1,"ts":0.0},
        {"ph":"B","name":"sched lock: hold","cat":"schedlab::lock","tid":1,"ts":0.5},
        {"ph":"E","name":"sched lock: hold","cat":"schedlab::lock","tid":1,"ts":1.75},
        {"ph":"E","name":"bfq_insert_request","cat":"schedlab::path","tid":1,"ts":2.0},
        {"ph":"B","name":"sched lock: wait","cat":"schedlab::lock","tid":2,"ts":1.0},
        {"ph":"E","name":"sched lock: wait","cat":"schedlab::lock","tid":2,"ts":2.25},
        {"ph":"B","name":"sched lock: hold","cat":"schedlab::lock","tid":2,"ts":2.25},
        {"ph":"E","name":"sched lock: hold","cat":"schedlab::lock","tid":2,"ts":4.0},
        {"ph":"i","name":"group created","cat":"schedlab::group","tid":2,"ts":5.0}
    ]"#;

    #[test]
    fn the_trace_summary_says_each_figure_once_and_the_same_in_every_rendering() {
        let page = summary_of(EVENTS);
        renderings_agree(&page).unwrap();
        let text = page.text(View::default());
        // The summary was printed twice on the page (a prose block and the terminal text):
        // now the page draws tables only, and the text is drawn from the same tables.
        let html = page.page(View::default()).render();
        assert_eq!(
            html.matches("Slices by name").count(),
            2,
            "a table and its copy in the folded text"
        );
        assert!(
            text.contains("bfq_insert_request")
                && text.contains("job-1")
                && text.ends_with("wrote x.svg\n"),
            "{text}"
        );
        let json: serde_json::Value = serde_json::from_str(&page.json(None).unwrap()).unwrap();
        assert_eq!(json["overview"]["by_name"][0]["name"], "bfq_insert_request");
        assert_eq!(json["overview"]["slices"], 4);
    }

    #[test]
    fn a_figure_missing_from_a_rendering_is_found() {
        // The check itself can fail: a report whose text leaves a figure out is caught.
        struct Partial(TraceSummaryPage);
        impl serde::Serialize for Partial {
            fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                self.0.serialize(s)
            }
        }
        impl Report for Partial {
            const COMMAND: &'static str = "trace-summary";
            const SCHEMA_VERSION: u32 = 2;
            fn provenance(&self) -> Provenance {
                self.0.provenance()
            }
            fn text(&self, _view: View) -> String {
                "only a line".into()
            }
            fn tables(
                &self,
                judge: crate::report::contract::Judge,
            ) -> Vec<crate::report::table::Table> {
                self.0.tables(judge)
            }
            fn outcome(&self) -> crate::report::contract::Outcome {
                self.0.outcome()
            }
        }
        let e = renderings_agree(&Partial(summary_of(EVENTS))).unwrap_err().to_string();
        assert!(e.contains("not in the terminal text"), "{e}");
    }
}
