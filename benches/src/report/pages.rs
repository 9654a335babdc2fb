//! The report contract (`report::contract`) for the two experiments whose drawings are written
//! as they are made: `schedlab flamegraph` (interactive flamegraphs into `--out`) and
//! `schedlab trace-summary` (an excerpt and the longest wait), and their JSON.

use crate::experiment::flamegraph::FlamegraphReport;
#[cfg(test)]
use crate::experiment::flamegraph::{ShareRow, WrittenFile};
use crate::experiment::trace_summary::TraceSummaryReport;
use crate::files::provenance::Provenance;

/// The report contract (`report::contract`) of `schedlab flamegraph`: where the time goes as
/// tables drawn from the rows `time-shares.json` holds (the terminal text is drawn from the same
/// tables, so a figure reads the same in the terminal, on the page and in the JSON), each
/// flamegraph interactive; its drawings are written to `--out`, so `--svg` is not its (refused
/// before the work).
impl serde::Serialize for FlamegraphReport {
    /// The time table's rows, the files written and the failures (the profiles themselves are
    /// in the files written to `--out`).
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeStruct;
        let mut s = serializer.serialize_struct("Flamegraph", 6)?;
        s.serialize_field("provenance", &self.provenance)?;
        s.serialize_field("rows", &self.rows)?;
        s.serialize_field("files", &self.files)?;
        s.serialize_field("write_failures", &self.write_failures)?;
        s.serialize_field("run_failures", &self.run_failures)?;
        s.serialize_field("interrupted", &self.interrupted)?;
        s.end()
    }
}

/// The titles of the flamegraph report's tables.
pub mod flamegraph_tables {
    pub const SHARES: &str = "Where the time goes (percent of on-CPU samples)";
    pub const STATS: &str = "The statistics' share, with what its sample count allows";
    pub const CPU: &str = "CPU time beside the time the samples stand for";
    pub const FILES: &str = "Files written";
    /// Every table, in the order the report gives them.
    pub const ALL: [&str; 4] = [SHARES, STATS, CPU, FILES];
}

impl super::contract::Report for FlamegraphReport {
    const COMMAND: &'static str = "flamegraph";
    /// 2: the files written are `files` (what, path), no longer `lines` of text; 3: a figure
    /// its tables refuse is `null` here too (`contract::Report::json_in`).
    const SCHEMA_VERSION: u32 = 3;
    const DRAWS: bool = false;

    fn provenance(&self) -> Provenance {
        self.provenance.clone()
    }

    fn tables(&self, _judge: super::contract::Judge) -> Vec<super::table::Table> {
        use super::table::{Cell, Table};
        use flamegraph_tables::{CPU, FILES, SHARES, STATS};
        let mut shares = Table::new(
            SHARES,
            &[
                ("variant", ""),
                ("samples", ""),
                ("core", "%"),
                ("stats", "%"),
                ("counter sums", "%"),
                ("lock", "%"),
                ("outside", "%"),
                ("other", "%"),
                ("total", "%"),
            ],
        );
        let mut stats = Table::new(
            STATS,
            &[
                ("variant", ""),
                ("stats", "%"),
                ("95% low", "%"),
                ("95% high", "%"),
                ("stats of the work", "%"),
                ("work 95% low", "%"),
                ("work 95% high", "%"),
                ("seed", ""),
            ],
        );
        let mut cpu = Table::new(
            CPU,
            &[
                ("variant", ""),
                ("KIOPS", "KIOPS"),
                ("CPU", "s"),
                ("sampled", "s"),
                ("unsampled", "% of CPU time"),
            ],
        );
        // A share read from tens of samples says little: its interval says how little. Of no
        // sample at all (a run too short for one), no share is estimable.
        const NONE: &str = "no samples";
        let bounds = |i: Option<crate::stats::Interval>| match i {
            Some(i) => [Cell::num(i.lo, 1), Cell::num(i.hi, 1)],
            None => [Cell::missing(NONE), Cell::missing(NONE)],
        };
        for r in &self.rows {
            let share =
                |pct: f64| if r.samples == 0 { Cell::missing(NONE) } else { Cell::num(pct, 1) };
            shares.row(vec![
                Cell::text(r.variant),
                Cell::num(r.samples as f64, 0),
                share(r.core_pct),
                share(r.stats_pct),
                share(r.sums_pct),
                share(r.lock_pct),
                share(r.outside_pct),
                share(r.other_pct),
                share(r.total_pct),
            ]);
            let [stats_lo, stats_hi] = bounds(r.stats_pct_interval);
            let [work_lo, work_hi] = bounds(r.stats_of_work_pct_interval);
            let seed = if r.variant == "sched-lock" {
                Cell::text(format!("{} of BFQ", crate::driver::profile::SEED_STATS_SHARE))
            } else {
                Cell::missing("-")
            };
            stats.row(vec![
                Cell::text(r.variant),
                share(r.stats_pct),
                stats_lo,
                stats_hi,
                share(r.stats_of_work_pct),
                work_lo,
                work_hi,
                seed,
            ]);
            cpu.row(vec![
                Cell::text(r.variant),
                Cell::num(r.kiops, 1),
                Cell::opt(r.cpu_s, 2),
                Cell::num(r.sampled_s, 2),
                Cell::opt(r.unsampled_cpu_share.map(|u| 100.0 * u), 1),
            ]);
        }
        if self.rows.iter().any(|r| r.samples == 0) {
            let why = "no samples: not estimable, the run was too short for one sample";
            shares.note(why);
            stats.note(why);
        }
        shares.note("counter sums: the samples inside a sum over every slot of a counter");
        stats.note("stats of the work = stats ÷ (core + stats)");
        stats.note(
            "95%: the Wilson interval of a share from its sample count; one run's samples are not \
             independent, so the true uncertainty is larger",
        );
        stats.note("seed: the seeds' share of the statistics in BFQ's execution time (kernel)");
        cpu.note("sampled: samples ÷ frequency; unsampled: the CPU time that left no sample");
        let mut files = Table::new(FILES, &[("what", ""), ("file", "")]);
        for f in &self.files {
            files.row(vec![Cell::text(f.what.clone()), Cell::text(f.path.clone())]);
        }
        vec![shares, stats, cpu, files]
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
            // Said as they happened (`experiment::flamegraph`).
            failed_runs: self.run_failures.iter().map(super::contract::Failure::told).collect(),
            failed_outputs: self
                .write_failures
                .iter()
                .map(super::contract::Failure::told)
                .collect(),
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
    /// 3: a figure its tables refuse is `null` here too (`contract::Report::json_in`).
    const SCHEMA_VERSION: u32 = 3;

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
        // In two, so that each fits 130 columns of a terminal: the holds and waits, then what
        // happens between two holds.
        let mut locks = Table::new(
            "Locks in the trace: holds and waits",
            &[
                ("lock", ""),
                ("holds", ""),
                ("hold p50", "µs"),
                ("hold p90", "µs"),
                ("held", "% of span"),
                ("waits", ""),
                ("wait p50", "µs"),
                ("wait p90", "µs"),
            ],
        );
        let mut handovers = Table::new(
            "Locks in the trace: from one hold to the next",
            &[
                ("lock", ""),
                ("hand-overs", ""),
                ("re-acquired", ""),
                ("gap p50", "µs"),
                ("gap p90", "µs"),
                ("overlaps", ""),
            ],
        );
        for (i, l) in self.report.locks.iter().enumerate() {
            // Each figure at its JSON path, so that one a table refuses is refused there too:
            // one lock is held at most the whole traced time (above it the holds overlap and
            // "% of span", a share of a whole, is no figure), and overlapping holds give a
            // hand-over gap below 0.
            let num = |value: f64, places: usize, field: &str| {
                Cell::num(value, places).at(format!("/locks/{i}/{field}"))
            };
            locks.row(vec![
                Cell::text(l.lock.clone()),
                num(l.holds as f64, 0, "holds"),
                num(l.hold_median_us, 2, "hold_median_us"),
                num(l.hold_p90_us, 2, "hold_p90_us"),
                num(l.held_pct, 1, "held_pct"),
                num(l.waits as f64, 0, "waits"),
                num(l.wait_median_us, 2, "wait_median_us"),
                num(l.wait_p90_us, 2, "wait_p90_us"),
            ]);
            handovers.row(vec![
                Cell::text(l.lock.clone()),
                num(l.handovers as f64, 0, "handovers"),
                num(l.reacquisitions as f64, 0, "reacquisitions"),
                num(l.handover_gap_median_us, 2, "handover_gap_median_us"),
                num(l.handover_gap_p90_us, 2, "handover_gap_p90_us"),
                Cell::check(l.overlapping_holds == 0, l.overlapping_holds.to_string()),
            ]);
        }
        handovers.note("gap: from one thread's release to the next thread's acquisition");
        if self.report.locks.iter().any(|l| l.held_pct > 100.0) {
            locks.note("held above 100 % of the span: the lock's holds overlap in the trace");
        }
        vec![trace, tracks, names, locks, handovers]
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
                .map(super::contract::Failure::told)
                .chain(self.report.not_drawn.iter().map(super::contract::Failure::untold))
                .collect(),
            ..Default::default()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::files::trace_check;
    use crate::report::contract::{renderings_agree, text_within_contract, Report, View};

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
        // The locks' table was 160 columns wide: now two, each within a terminal's 130.
        let text = text_within_contract(&page, 0);
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

    /// Two threads that both hold the scheduler lock over the same 4 µs (a trace whose holds
    /// overlap): held 200 % of the span, which is no share, and a hand-over gap below 0. Each
    /// refused alike in the text, on the page and in the JSON, at its own path, and listed.
    #[test]
    fn a_held_share_above_the_span_is_refused_at_its_json_path() {
        const OVERLAPPING: &str = r#"[
            {"ph":"B","name":"sched lock: hold","cat":"schedlab::lock","tid":1,"ts":0.0},
            {"ph":"B","name":"sched lock: hold","cat":"schedlab::lock","tid":2,"ts":0.0},
            {"ph":"E","name":"sched lock: hold","cat":"schedlab::lock","tid":1,"ts":4.0},
            {"ph":"E","name":"sched lock: hold","cat":"schedlab::lock","tid":2,"ts":4.0}
        ]"#;
        let page = summary_of(OVERLAPPING);
        assert!(page.report.locks[0].held_pct > 100.0, "{}", page.report.locks[0].held_pct);
        let text = text_within_contract(&page, 0);
        assert!(text.contains("not estimable") && text.contains("overlap"), "{text}");
        let json: serde_json::Value = serde_json::from_str(&page.json(None).unwrap()).unwrap();
        // The hand-over from one overlapping hold to the other is a gap below 0: refused too.
        for field in ["held_pct", "handover_gap_median_us"] {
            assert!(json["locks"][0][field].is_null(), "{field}: {}", json["locks"][0]);
            let listed = json["not_estimable"].as_array().expect("a list");
            let path = format!("/locks/0/{field}");
            assert!(listed.iter().any(|r| r["path"] == path.as_str()), "{path}: {listed:?}");
        }
    }

    fn share_row(variant: &'static str, samples: u64, stats: u64) -> ShareRow {
        let pct = |n: u64| if samples == 0 { 0.0 } else { 100.0 * n as f64 / samples as f64 };
        let core = samples - stats;
        ShareRow {
            variant,
            kiops: 812.25,
            samples,
            core_pct: pct(core),
            stats_pct: pct(stats),
            sums_pct: pct(stats / 3),
            lock_pct: 0.0,
            outside_pct: 0.0,
            other_pct: 0.0,
            total_pct: pct(samples),
            stats_of_work_pct: pct(stats),
            stats_pct_interval: crate::stats::wilson_interval_pct(stats, samples),
            stats_of_work_pct_interval: crate::stats::wilson_interval_pct(stats, samples),
            unsampled_cpu_share: (samples > 0).then_some(0.037),
            cpu_s: Some(0.6125),
            sampled_s: samples as f64 / 100.0,
            consistent: true,
        }
    }

    fn flamegraphs() -> FlamegraphReport {
        let file = |what: &str, path: &str| WrittenFile { what: what.into(), path: path.into() };
        FlamegraphReport {
            provenance: Provenance::collect(),
            profiles: Vec::new(),
            // 61 samples, as on the loaded machine of issue 44; and a run too short for one.
            rows: vec![share_row("sched-lock", 61, 23), share_row("no-stats", 0, 0)],
            files: vec![
                file("sched-lock's flamegraph", "fg/sched-lock.svg"),
                file("the time table", "fg/time-shares.json"),
            ],
            svgs: Vec::new(),
            write_failures: Vec::new(),
            run_failures: Vec::new(),
            interrupted: false,
        }
    }

    /// Issue 44, item 1: the flamegraph's terminal text was aligned by hand (150 columns and
    /// more) and had drifted from its page (the seed, the unsampled share and the KIOPS only in
    /// the text). Now both, and the JSON, are drawn from the same rows.
    #[test]
    fn the_flamegraph_text_is_drawn_from_its_tables_within_130_columns() {
        let report = flamegraphs();
        let text = text_within_contract(&report, 1);
        for t in flamegraph_tables::ALL {
            assert!(text.contains(t), "no table {t:?} in:\n{text}");
        }
        let seed = format!("{} of BFQ", crate::driver::profile::SEED_STATS_SHARE);
        let html = report.page(View::default()).render();
        for shown in [seed.as_str(), "fg/time-shares.json", "812.2", "3.7"] {
            assert!(text.contains(shown) && html.contains(shown), "{shown:?} missing:\n{text}");
        }
        let none = text.lines().filter(|l| l.starts_with("no-stats ") && l.contains("no samples"));
        assert_eq!(none.count(), 2, "a run without samples has no share:\n{text}");
        assert!(text.contains("no samples: not estimable"), "{text}");
        let json: serde_json::Value = serde_json::from_str(&report.json(None).unwrap()).unwrap();
        assert_eq!(json["files"][1]["path"], "fg/time-shares.json");
        assert_eq!(json["rows"][0]["samples"], 61);
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
