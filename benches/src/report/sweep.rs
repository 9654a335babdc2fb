//! `schedlab sweep`'s report: the points measured, each thread's share of them, the scheduler
//! lock's counters, the ratios to the reference variant with their intervals, and the model
//! beside them, as tables; the terminal text is drawn from the same tables
//! ([`super::contract::text_of_tables`]), then the outcome (failed, disturbed or noisy points).
//! The chart itself is [`crate::report::chart`].

use super::contract::{Failure, Warning, WarningKind};
use super::table::{Cell, Table};
use crate::driver::workload::{FAIR_LOCK_ADVICE, OTHERS_DISTURB_CPUS};
use crate::experiment::sweep::{SweepPoint, SweepReport, USL_MIN_POINTS};
use schedlab_core::LockKind;

/// The sweep's warnings: fair-lock points that ran oversubscribed or disturbed, and noisy points
/// kept after their retries, each naming its points (the outcome carries them).
fn warnings(report: &SweepReport) -> Vec<Warning> {
    let mut out = Vec::new();
    let name = |p: &SweepPoint| format!("{}@{}", p.variant, p.threads);
    let fair_disturbed: Vec<String> = report
        .points
        .iter()
        .filter(|p| p.lock == LockKind::FairSpin)
        .filter(|p| p.oversubscribed || p.other_cpus > OTHERS_DISTURB_CPUS)
        .map(name)
        .collect();
    if !fair_disturbed.is_empty() {
        out.push(Warning::points(
            WarningKind::Collapse,
            fair_disturbed,
            format!(
                "fair-spin ran with more runnable threads than CPUs (oversubscribed, or other \
                processes using the CPUs). {FAIR_LOCK_ADVICE}."
            ),
        ));
    }
    let max_other_cpus = report.config.noise.max_other_cpus;
    let noisy: Vec<String> =
        report.measured().iter().filter(|p| p.other_cpus > max_other_cpus).map(name).collect();
    if !noisy.is_empty() {
        out.push(Warning::points(
            WarningKind::DisturbedByOtherLoad,
            noisy,
            format!(
                "kept although other processes used more than {max_other_cpus} CPUs during \
                them (retries exhausted): see the \"{OTHERS}\" column of the points (other_cpus \
                in the CSV and JSON)"
            ),
        ));
    }
    out
}

/// The report contract (`report::contract`): the points, the threads, the lock, the ratios and
/// the model as tables, from which the text is drawn; the chart beside the points; the outcome.
impl super::contract::Report for SweepReport {
    const COMMAND: &'static str = "sweep";
    /// 3: a figure its tables refuse is `null` here too (`contract::Report::json_in`).
    const SCHEMA_VERSION: u32 = 3;

    fn provenance(&self) -> crate::files::provenance::Provenance {
        self.provenance.clone()
    }

    fn tables(&self, _judge: super::contract::Judge) -> Vec<Table> {
        let mut tables = vec![points_table(self), threads_table(&self.points)];
        tables.extend(lock_table(&self.points));
        tables.extend(ratios_table(self));
        tables.extend(model_tables(self));
        tables.retain(|t| !t.rows.is_empty() || t.title == POINTS);
        tables
    }

    fn charts(&self) -> Vec<super::contract::Chart> {
        let title = format!(
            "schedlab sweep: KIOPS vs threads ({} CPUs, commit {})",
            self.config.cpus, self.provenance.commit
        );
        let drawn = if self.points.is_empty() {
            Err(super::charts::ChartError::NothingToDraw("no point finished"))
        } else {
            let locks: Vec<&str> = self.config.locks.iter().map(|l| l.name()).collect();
            let footer = super::charts::provenance_line(&self.provenance, &locks.join(", "));
            super::chart::draw_svg_with_footer(&self.points, &self.models, &title, &footer)
        };
        vec![super::contract::Chart::new(title, drawn).beside(POINTS)]
    }

    fn outcome(&self) -> super::contract::Outcome {
        let disturbed = self
            .points
            .iter()
            .filter(|p| p.other_cpus > OTHERS_DISTURB_CPUS)
            .map(|p| {
                format!(
                    "{} / {} at {} threads: other processes used {:.1} CPUs",
                    p.variant,
                    p.lock.name(),
                    p.threads,
                    p.other_cpus
                )
            })
            .collect();
        super::contract::Outcome {
            interrupted: self.interrupted,
            warnings: warnings(self),
            disturbed,
            failed_checks: if self.all_consistent() {
                vec![]
            } else {
                vec!["a point failed its end-of-run checks (INCONSISTENT points above)".into()]
            },
            // Said as each point failed (`experiment::sweep`); the CSV's failure is not.
            failed_runs: self.failures.iter().map(Failure::told).collect(),
            failed_outputs: self.csv_error.iter().map(Failure::untold).collect(),
        }
    }
}

/// The points table's title (the chart goes beside it).
const POINTS: &str = "Points measured";
/// The points table's column of the CPUs other processes used (the noise warning names it).
const OTHERS: &str = "others";

/// The point's configuration, the first cells of every table of points: variant, lock,
/// threads, slots, outside work.
const POINT_COLUMNS: [(&str, &str); 5] =
    [("variant", ""), ("lock", ""), ("threads", ""), ("slots", ""), ("outside", "ns")];

fn point_cells(p: &SweepPoint) -> Vec<Cell> {
    vec![
        Cell::text(p.variant.clone()),
        Cell::text(p.lock.name()),
        Cell::num(p.threads as f64, 0),
        Cell::num(p.slots as f64, 0),
        Cell::num(p.outside_ns as f64, 0),
    ]
}

/// `first`, then the columns of a point's configuration, then `rest`.
fn columns<'a>(
    first: &[(&'a str, &'a str)],
    rest: &[(&'a str, &'a str)],
) -> Vec<(&'a str, &'a str)> {
    first.iter().chain(&POINT_COLUMNS).chain(rest).copied().collect()
}

/// A row per point and round: its throughput, the other processes' CPUs, and what went wrong
/// (a point that completed nothing says so instead of a zero); where the points are written.
fn points_table(report: &SweepReport) -> Table {
    let mut t = Table::new(
        POINTS,
        &columns(&[("round", "")], &[("KIOPS", "KIOPS"), (OTHERS, "CPUs"), ("note", "")]),
    );
    for p in &report.points {
        let completed = p.kiops > 0.0;
        let note = match (completed, p.consistent, p.oversubscribed) {
            (false, _, _) => format!("no requests completed in {:.2} s", p.measured_s),
            (true, false, _) => "INCONSISTENT".into(),
            (true, true, true) => "oversubscribed".into(),
            (true, true, false) => String::new(),
        };
        let mut row = vec![Cell::num((p.round + 1) as f64, 0)];
        row.extend(point_cells(p));
        row.push(if completed { Cell::num(p.kiops, 1) } else { Cell::missing("-") });
        row.extend([Cell::num(p.other_cpus, 2), Cell::text(note)]);
        t.row(row);
    }
    let csv = report
        .config
        .csv
        .as_ref()
        .map_or_else(|| "no CSV".into(), |c| format!("CSV: {}", c.file.path().display()));
    t.note(format!("{} point(s), a row per point and round; {csv}", report.points.len()));
    if report.points.is_empty() {
        t.note("no point finished: no chart");
    }
    if report.model_machine.is_none() {
        t.note("no model (--no-model, or its calibration did not run)");
    }
    for f in &report.failures {
        t.note(format!("FAILED point (the sweep went on without it): {f}"));
    }
    t
}

/// Each thread's KIOPS at the points that completed requests: the slowest, the median, the
/// fastest.
fn threads_table(points: &[SweepPoint]) -> Table {
    let rest = [("slowest", "KIOPS"), ("median", "KIOPS"), ("fastest", "KIOPS")];
    let mut t = Table::new("Each thread's KIOPS", &columns(&[("round", "")], &rest));
    for p in points.iter().filter(|p| p.kiops > 0.0) {
        let mut row = vec![Cell::num((p.round + 1) as f64, 0)];
        row.extend(point_cells(p));
        row.extend([
            Cell::num(p.per_thread_min, 1),
            Cell::num(p.per_thread_median, 1),
            Cell::num(p.per_thread_max, 1),
        ]);
        t.row(row);
    }
    t
}

/// The scheduler lock's counters, from the first round's instrumented run of each point; none
/// without instrumented runs.
fn lock_table(points: &[SweepPoint]) -> Option<Table> {
    let instrumented: Vec<&SweepPoint> =
        points.iter().filter(|p| p.kiops > 0.0 && p.kiops_lockstat.is_finite()).collect();
    if instrumented.is_empty() {
        return None;
    }
    let rest = [
        ("contended", "%"),
        ("hold per request", "ns"),
        ("occupancy", "%"),
        ("owner changes", "%"),
    ];
    let mut t =
        Table::new("The scheduler lock (the first round's instrumented run)", &columns(&[], &rest));
    for p in instrumented {
        let mut row = point_cells(p);
        row.extend([
            Cell::num(p.sched_contention_pct, 1),
            Cell::num(p.sched_hold_per_req_ns, 0),
            Cell::num(100.0 * p.sched_occupancy, 0),
            Cell::num(100.0 * p.sched_owner_change_frac, 0),
        ]);
        t.row(row);
    }
    t.note(
        "contended: % of acquisitions that waited; owner changes: % of acquisitions \
        by another thread than the last",
    );
    t.scale_time_columns();
    Some(t)
}

/// Whys of missing intervals, each once, as a table's notes.
fn note_whys<'a>(t: &mut Table, whys: impl Iterator<Item = Option<&'a String>>) {
    let mut said: Vec<&str> = Vec::new();
    for why in whys.flatten() {
        if !said.contains(&why.as_str()) {
            t.note(why.clone());
            said.push(why);
        }
    }
}

/// Each variant ÷ the reference at each configuration and thread count, over rounds.
fn ratios_table(report: &SweepReport) -> Option<Table> {
    let reference = report.reference.as_ref().filter(|_| !report.ratios.is_empty())?;
    let mut t = Table::new(
        format!("Ratios to {reference}"),
        &[
            ("variant", ""),
            ("lock", ""),
            ("slots", ""),
            ("outside", "ns"),
            ("threads", ""),
            ("ratio", "×"),
            ("min", "×"),
            ("max", "×"),
            ("95% low", "×"),
            ("95% high", "×"),
            ("rounds", ""),
        ],
    );
    for r in &report.ratios {
        let bound = |hi: bool| Cell::opt(r.interval.map(|i| if hi { i.hi } else { i.lo }), 2);
        t.row(vec![
            Cell::text(r.variant.clone()),
            Cell::text(r.lock.name()),
            Cell::num(r.slots as f64, 0),
            Cell::num(r.outside_ns as f64, 0),
            Cell::num(r.threads as f64, 0),
            Cell::opt(r.ratio.as_ref().map(|s| s.median), 2),
            Cell::opt(r.ratio.as_ref().map(|s| s.min), 2),
            Cell::opt(r.ratio.as_ref().map(|s| s.max), 2),
            bound(false),
            bound(true),
            Cell::num(r.ratio.as_ref().map_or(0, |s| s.runs.len()) as f64, 0),
        ]);
    }
    t.note(format!("KIOPS ÷ {reference}'s in the same round; median, min and max over rounds"));
    t.note(format!(
        "95%: the percentile-bootstrap interval of the median over rounds (none below {} rounds)",
        crate::stats::BOOTSTRAP_MIN_VALUES
    ));
    note_whys(
        &mut t,
        report.ratios.iter().filter(|r| r.interval.is_none()).map(|r| r.no_interval.as_ref()),
    );
    Some(t)
}

/// The model's predicted KIOPS, then its error against the points and the USL fit; without a
/// model, none (the points' table says so).
fn model_tables(report: &SweepReport) -> Vec<Table> {
    let Some(machine) = &report.model_machine else { return Vec::new() };
    let key = [("variant", ""), ("lock", ""), ("slots", ""), ("outside", "ns")];
    let at_columns =
        [("@1", "KIOPS"), ("@2", "KIOPS"), ("@8", "KIOPS"), ("@16", "KIOPS"), ("@64", "KIOPS")];
    let mut predicted = Table::new(
        "The model, not measured: predicted KIOPS at 1, 2, 8, 16 and 64 threads",
        &[&key[..], &at_columns].concat(),
    );
    let error_columns = [("error", "%"), ("95% low", "%"), ("95% high", "%"), ("USL", "")];
    let mut error = Table::new(
        "The model's error against the points measured",
        &[&key[..], &error_columns].concat(),
    );
    for m in &report.models {
        let config = || {
            vec![
                Cell::text(m.variant.clone()),
                Cell::text(m.lock.name()),
                Cell::num(m.slots as f64, 0),
                Cell::num(m.outside_ns as f64, 0),
            ]
        };
        let at = |n: usize| {
            m.predicted
                .iter()
                .find(|(t, _)| *t == n)
                .map_or_else(|| Cell::missing("-"), |(_, v)| Cell::num(*v, 0))
        };
        let mut row = config();
        row.extend([1, 2, 8, 16, 64].map(at));
        predicted.row(row);
        let mut row = config();
        row.extend([
            Cell::opt(m.error_pct, 1),
            Cell::opt(m.error_interval_pct.map(|i| i.lo), 1),
            Cell::opt(m.error_interval_pct.map(|i| i.hi), 1),
            match m.usl {
                Some((s, k)) => Cell::text(format!("σ={s:.3} κ={k:.5}")),
                None => Cell::missing(format!(
                    "not fitted ({} thread counts < {USL_MIN_POINTS})",
                    m.measured_thread_counts
                )),
            },
        ]);
        error.row(row);
    }
    predicted.note(format!("schedlab predict's simulation on {machine}"));
    predicted.note(
        "calibrated on single-threaded runs and a line-transfer measurement, never on these points",
    );
    error.note("error: the largest |model − measured| ÷ measured over this sweep's thread counts");
    error.note("(measured: the median over rounds); 95%: its bootstrap interval over rounds");
    error.note(format!("USL fitted only with >= {USL_MIN_POINTS} measured thread counts"));
    note_whys(
        &mut error,
        report
            .models
            .iter()
            .filter(|m| m.error_interval_pct.is_none() && m.error_pct.is_some())
            .map(|m| m.no_interval.as_ref()),
    );
    vec![predicted, error]
}

#[cfg(test)]
mod tests {
    use crate::driver::noise::NoisePolicy;
    use crate::driver::workload::WorkloadConfig;
    use crate::experiment::sweep::tests::point;
    use crate::experiment::sweep::{ratios, SeriesModel, SweepConfig, SweepReport};
    use crate::files::provenance::Provenance;
    use crate::report::contract::{text_within_contract, Report, View};
    use crate::stats::Interval;
    use schedlab_core::LockKind;

    /// Two variants at 1 and 4 threads over three rounds, with lock counters in the first, a
    /// point that completed nothing, an oversubscribed one and the model beside them.
    fn report() -> SweepReport {
        let mut points = Vec::new();
        for round in 0..3 {
            for (variant, base) in [("sched-lock", 800.0), ("no-stats", 1000.0)] {
                for threads in [1, 4] {
                    let mut p =
                        point(variant, threads, base * threads as f64 / 2.0 + 17.3 * round as f64);
                    p.round = round;
                    p.other_cpus = 0.05 * round as f64;
                    p.per_thread_min *= 0.9;
                    p.per_thread_max *= 1.1;
                    p.sched_hold_per_req_ns = 1234.5 * threads as f64;
                    if round == 0 {
                        p.kiops_lockstat = p.kiops * 0.9;
                    }
                    points.push(p);
                }
            }
        }
        let mut over = point("no-stats", 8, 2100.0);
        over.oversubscribed = true;
        points.push(over);
        let mut none = point("sched-lock", 8, 0.0);
        none.measured_s = 0.05;
        points.push(none);
        let model = |variant: &str, error_pct, usl| SeriesModel {
            variant: variant.into(),
            lock: LockKind::FairSpin,
            slots: 8,
            outside_ns: 0,
            x1: 400.0,
            topology: "this machine".into(),
            predicted: vec![(1, 410.0), (2, 790.0), (4, 1500.0), (8, 2600.0)],
            error_pct,
            error_interval_pct: error_pct.map(|e: f64| Interval { lo: e - 1.5, hi: e + 2.25 }),
            no_interval: None,
            at: vec![(8, 2600.0)],
            usl,
            measured_thread_counts: 2,
        };
        let config = SweepConfig {
            workload: WorkloadConfig::default(),
            threads: vec![1, 4, 8],
            rounds: 3,
            cpus: 4,
            variants: vec!["sched-lock", "no-stats"],
            locks: vec![LockKind::FairSpin],
            slots: vec![8],
            outside_ns: vec![0],
            lockstat_duration: std::time::Duration::from_millis(200),
            sum_sampling: 16,
            noise: NoisePolicy { max_other_cpus: 0.5, retries: 0 },
            csv: None,
            model: None,
        };
        SweepReport {
            provenance: Provenance::collect(),
            config,
            ratios: ratios(&points, "sched-lock"),
            points,
            kept: 0,
            failures: vec!["no-stats / fair-spin at 16 threads: the run failed".into()],
            csv_error: None,
            interrupted: false,
            model_machine: Some("i7-4850HQ (4 cores × 2)".into()),
            models: vec![
                model("sched-lock", Some(4.5), Some((0.012, 0.00034))),
                model("no-stats", None, None),
            ],
            reference: Some("sched-lock".into()),
        }
    }

    #[test]
    fn the_sweep_text_is_drawn_from_its_tables_within_130_columns() {
        let report = report();
        // The provenance line first: as wide as the machine's names make it.
        let text = text_within_contract(&report, 1);
        for said in [
            "Points measured",
            "no requests completed in 0.05 s",
            "oversubscribed",
            "Each thread's KIOPS",
            "The scheduler lock",
            "hold per request (µs)",
            "Ratios to sched-lock",
            "95% high (×)",
            "predicted KIOPS",
            "σ=0.012 κ=0.00034",
            "not fitted (2 thread counts < 4)",
            "FAILED point (the sweep went on without it): no-stats / fair-spin at 16 threads",
            "i7-4850HQ (4 cores × 2)",
        ] {
            assert!(text.contains(said), "{said:?} is not in the text:\n{text}");
        }
        assert!(!text.contains(" 0.0 "), "a point that completed nothing shows no zero:\n{text}");
        // With no model, the text says why there is none (and names no model's table).
        let bare = SweepReport { model_machine: None, models: Vec::new(), ..report };
        let text = bare.text(View::default());
        assert!(
            text.contains("no model (--no-model") && !text.contains("predicted KIOPS"),
            "{text}"
        );
    }

    #[test]
    fn the_sweep_says_each_warning_once() {
        use crate::report::contract::{judged_only_when_undisturbed, View};
        let disturbed = View { disturbed: true, ..View::default() };
        judged_only_when_undisturbed(&report(), disturbed).unwrap();
    }
}
