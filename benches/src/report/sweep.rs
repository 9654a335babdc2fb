//! The text of `schedlab sweep`'s report: the points measured, the ratios to the reference
//! variant with their intervals, the model beside them, and the notes after the chart (failed
//! points, disturbed or noisy points, inconsistent ones). The chart itself is
//! [`crate::report::chart`].

use crate::driver::workload::{FAIR_LOCK_ADVICE, OTHERS_DISTURB_CPUS};
use crate::experiment::sweep::{SweepReport, USL_MIN_POINTS};
use super::table::interval_text;
use crate::report::compare::fmt_ns;
use schedlab_core::LockKind;
use std::fmt::Write as _;

/// A percentage already in percent ("12.5%"), "-" when not measured.
fn pct(v: f64) -> String {
    if v.is_finite() {
        format!("{v:.1}%")
    } else {
        "-".into()
    }
}

/// A fraction as a whole percentage ("50%"), "-" when not measured.
fn frac_pct(v: f64) -> String {
    if v.is_finite() {
        format!("{:.0}%", 100.0 * v)
    } else {
        "-".into()
    }
}

/// The head of the report: where the points are, the provenance, the table of points, and the
/// model's table (or why there is none).
pub fn points_and_model_text(report: &SweepReport) -> String {
    let mut out = String::new();
    let csv = report.config.csv.as_ref().map_or_else(|| "no CSV".into(), |c| c.file.path().display().to_string());
    let _ = writeln!(
        out,
        "schedlab sweep: {} point(s) in {csv}{}",
        report.points.len(),
        if report.interrupted { " (interrupted: the points that finished)" } else { "" }
    );
    let _ = writeln!(out, "{}", report.provenance.one_line());
    let _ = writeln!(
        out,
        "\n{:>5} {:<11} {:<11} {:>7} {:>5} {:>8} {:>9} {:>17} {:>6} {:>9} {:>9} {:>10}",
        "round",
        "variant",
        "lock",
        "threads",
        "slots",
        "outside",
        "KIOPS",
        "per-thread min/max",
        "cont%",
        "sched/req",
        "occup",
        "owner-chg"
    );
    for p in &report.points {
        if p.kiops == 0.0 {
            // Zeros would read as a measurement: say what happened instead.
            let _ = writeln!(
                out,
                "{:>5} {:<11} {:<11} {:>7} {:>5} {:>8}  no requests completed in {:.2} s{}",
                p.round + 1,
                p.variant,
                p.lock.name(),
                p.threads,
                p.slots,
                p.outside_ns,
                p.measured_s,
                if p.oversubscribed { "  (oversubscribed)" } else { "" }
            );
            continue;
        }
        let _ = writeln!(
            out,
            "{:>5} {:<11} {:<11} {:>7} {:>5} {:>8} {:>9.1} {:>17} {:>6} {:>9} {:>9} {:>10}{}",
            p.round + 1,
            p.variant,
            p.lock.name(),
            p.threads,
            p.slots,
            p.outside_ns,
            p.kiops,
            format!("{:.1}/{:.1}", p.per_thread_min, p.per_thread_max),
            pct(p.sched_contention_pct),
            fmt_ns(p.sched_hold_per_req_ns),
            frac_pct(p.sched_occupancy),
            frac_pct(p.sched_owner_change_frac),
            if p.oversubscribed { "  (oversubscribed)" } else { "" }
        );
    }
    out.push_str(&ratios_text(report));
    match &report.model_machine {
        Some(machine) => {
            let _ = writeln!(
                out,
                "\nMODEL, not measured: schedlab predict's simulation (calibrated on \
                 single-threaded runs and a line-transfer measurement, never on\nthese points) on \
                 {machine}; error = the largest |model − measured| ÷ measured over this sweep's \
                 thread counts (measured: the median over rounds),\n[its 95% interval over rounds]. USL fitted only with >= \
                 {USL_MIN_POINTS} measured thread counts.\n",
            );
            let _ = writeln!(
                out,
                "{:<11} {:<11} {:>5} {:>8} {:>8} {:>8} {:>8} {:>15} {:>9} {:>9} {:>9}  USL",
                "variant",
                "lock",
                "slots",
                "outside",
                "model@1",
                "model@2",
                "error",
                "[95% interval]",
                "@8",
                "@16",
                "@64"
            );
        }
        None => {
            let _ = writeln!(out, "\nno model (--no-model, or its calibration did not run)");
        }
    }
    for m in &report.models {
        let at = |n: usize| m.predicted.iter().find(|(t, _)| *t == n).map_or("-".into(), |(_, v)| format!("{v:.0}"));
        let _ = writeln!(
            out,
            "{:<11} {:<11} {:>5} {:>8} {:>8} {:>8} {:>8} {:>15} {:>9} {:>9} {:>9}  {}",
            m.variant,
            m.lock.name(),
            m.slots,
            m.outside_ns,
            at(1),
            at(2),
            m.error_pct.map_or("-".into(), |e| format!("{e:.1}%")),
            interval_text(m.error_interval_pct, 1, "%"),
            at(8),
            at(16),
            at(64),
            match m.usl {
                Some((s, k)) => format!("σ={s:.3} κ={k:.5}"),
                None => format!("not fitted ({} thread counts < {USL_MIN_POINTS})", m.measured_thread_counts),
            }
        );
    }
    out
}

/// The ratios to the reference variant: per configuration and thread count, the median of the
/// per-round ratios, its range and its 95 % interval over rounds (or why there is none).
fn ratios_text(report: &SweepReport) -> String {
    let mut out = String::new();
    let Some(reference) = &report.reference else { return out };
    if report.ratios.is_empty() {
        return out;
    }
    let _ = writeln!(
        out,
        "\nRATIOS to {reference}: KIOPS ÷ {reference}'s in the same round, median over rounds \
         (min–max) [95% bootstrap interval over rounds]"
    );
    let _ = writeln!(
        out,
        "{:<11} {:<11} {:>5} {:>8} {:>7} {:>7} {:>13} {:>15}",
        "variant", "lock", "slots", "outside", "threads", "ratio", "(min–max)", "[95% interval]"
    );
    for r in &report.ratios {
        let (median, range) = match &r.ratio {
            Some(s) => (format!("{:.2}", s.median), format!("({:.2}–{:.2})", s.min, s.max)),
            None => ("-".into(), "-".into()),
        };
        let interval = match (&r.interval, &r.no_interval) {
            (Some(i), _) => interval_text(Some(*i), 2, ""),
            (None, Some(why)) => why.clone(),
            (None, None) => "-".into(),
        };
        let _ = writeln!(
            out,
            "{:<11} {:<11} {:>5} {:>8} {:>7} {median:>7} {range:>13} {interval:>15}",
            r.variant,
            r.lock.name(),
            r.slots,
            r.outside_ns,
            r.threads
        );
    }
    out
}

/// The sweep's warnings, one line each: fair-lock points that ran oversubscribed or disturbed,
/// and noisy points kept after their retries (the notes print them; the outcome carries them).
fn warnings(report: &SweepReport) -> Vec<String> {
    let mut out = Vec::new();
    let fair_disturbed: Vec<String> = report
        .points
        .iter()
        .filter(|p| p.lock == LockKind::FairSpin && (p.oversubscribed || p.other_cpus > OTHERS_DISTURB_CPUS))
        .map(|p| format!("{}@{}", p.variant, p.threads))
        .collect();
    if !fair_disturbed.is_empty() {
        out.push(format!(
            "WARNING (fair-spin): {} point(s) ran with more runnable threads than CPUs (oversubscribed, or other processes using the CPUs): {}. {}.",
            fair_disturbed.len(),
            fair_disturbed.join(", "),
            FAIR_LOCK_ADVICE
        ));
    }
    let max_other_cpus = report.config.noise.max_other_cpus;
    let noisy = report.measured().iter().filter(|p| p.other_cpus > max_other_cpus).count();
    if noisy > 0 {
        out.push(format!(
            "WARNING: {noisy} point(s) kept although other processes used more than {max_other_cpus} CPUs during them (retries exhausted): see the \"other processes\" column (other_cpus in the CSV and JSON)",
        ));
    }
    out
}

/// The notes after the chart: failed points, fair-lock points run with more runnable threads than
/// CPUs, points kept although other processes disturbed them, inconsistent points.
pub fn notes_text(report: &SweepReport) -> String {
    let mut out = String::new();
    for f in &report.failures {
        let _ = writeln!(out, "FAILED point (the sweep went on without it): {f}");
    }
    for warning in warnings(report) {
        let _ = writeln!(out, "{warning}");
    }
    if !report.all_consistent() {
        let _ = writeln!(out, "INCONSISTENT points: see the `consistent` column of the CSV");
    }
    out
}

/// The report contract (`report::contract`): the points and the model as tables, the chart
/// beside the points, the outcome.
impl super::contract::Report for SweepReport {
    const COMMAND: &'static str = "sweep";
    const SCHEMA_VERSION: u32 = 2;

    fn provenance(&self) -> crate::files::provenance::Provenance {
        self.provenance.clone()
    }

    fn text(&self, _view: super::contract::View) -> String {
        let mut text = points_and_model_text(self);
        if self.points.is_empty() {
            text.push_str("\nno point finished: no chart\n");
        }
        text.push_str(&notes_text(self));
        text
    }

    fn tables(&self) -> Vec<super::table::Table> {
        use super::table::{Cell, Table};
        let mut points = Table::new(
            POINTS,
            &[
                ("round", ""),
                ("variant", ""),
                ("lock", ""),
                ("threads", ""),
                ("slots", ""),
                ("outside", "ns"),
                ("KIOPS", "KIOPS"),
                ("per-thread min", "KIOPS"),
                ("per-thread max", "KIOPS"),
                ("sched contended", "%"),
                ("sched hold per request", "ns"),
                ("sched occupancy", "%"),
                ("owner changes", "% of acquisitions"),
                ("other processes", "CPUs"),
                ("note", ""),
            ],
        );
        for p in &self.points {
            let note = match (p.oversubscribed, p.consistent) {
                (_, false) => "INCONSISTENT",
                (true, true) => "oversubscribed",
                (false, true) => "",
            };
            points.row(vec![
                Cell::num((p.round + 1) as f64, 0),
                Cell::text(p.variant.clone()),
                Cell::text(p.lock.name()),
                Cell::num(p.threads as f64, 0),
                Cell::num(p.slots as f64, 0),
                Cell::num(p.outside_ns as f64, 0),
                Cell::num(p.kiops, 1),
                Cell::num(p.per_thread_min, 1),
                Cell::num(p.per_thread_max, 1),
                Cell::num(p.sched_contention_pct, 1),
                Cell::num(p.sched_hold_per_req_ns, 0),
                Cell::num(100.0 * p.sched_occupancy, 0),
                Cell::num(100.0 * p.sched_owner_change_frac, 0),
                Cell::num(p.other_cpus, 2),
                Cell::text(note),
            ]);
        }
        points.note("a row per point and round; lock counters: the first round's instrumented run");
        let mut tables = vec![points];
        if let (Some(reference), false) = (&self.reference, self.ratios.is_empty()) {
            let mut ratios = Table::new(
                RATIOS,
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
            for r in &self.ratios {
                let bound = |hi: bool| match (&r.interval, &r.no_interval) {
                    (Some(i), _) => Cell::num(if hi { i.hi } else { i.lo }, 2),
                    (None, why) => Cell::missing(why.clone().unwrap_or_else(|| "-".into())),
                };
                ratios.row(vec![
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
            ratios.note(format!(
                "KIOPS ÷ {reference}'s in the same round; median over rounds; 95% \
                 percentile-bootstrap interval over rounds (none below 3 rounds)"
            ));
            tables.push(ratios);
        }
        if let Some(machine) = &self.model_machine {
            let mut model = Table::new(
                "The model, not measured",
                &[
                    ("variant", ""),
                    ("lock", ""),
                    ("slots", ""),
                    ("outside", "ns"),
                    ("model @1", "KIOPS"),
                    ("model @2", "KIOPS"),
                    ("error", "%"),
                    ("error 95% low", "%"),
                    ("error 95% high", "%"),
                    ("@8", "KIOPS"),
                    ("@16", "KIOPS"),
                    ("@64", "KIOPS"),
                    ("USL", ""),
                ],
            );
            for m in &self.models {
                let at = |n: usize| m.predicted.iter().find(|(t, _)| *t == n).map_or_else(|| Cell::missing("-"), |(_, v)| Cell::num(*v, 0));
                model.row(vec![
                    Cell::text(m.variant.clone()),
                    Cell::text(m.lock.name()),
                    Cell::num(m.slots as f64, 0),
                    Cell::num(m.outside_ns as f64, 0),
                    at(1),
                    at(2),
                    Cell::opt(m.error_pct, 1),
                    Cell::opt(m.error_interval_pct.map(|i| i.lo), 1),
                    Cell::opt(m.error_interval_pct.map(|i| i.hi), 1),
                    at(8),
                    at(16),
                    at(64),
                    match m.usl {
                        Some((s, k)) => Cell::text(format!("σ={s:.3} κ={k:.5}")),
                        None => Cell::missing(format!("not fitted ({} thread counts < {USL_MIN_POINTS})", m.measured_thread_counts)),
                    },
                ]);
            }
            model.note(format!("schedlab predict's simulation on {machine}, calibrated on single-threaded runs and a line-transfer measurement, never on these points; error: the largest |model − measured| ÷ measured over this sweep's thread counts."));
            tables.push(model);
        }
        tables
    }

    fn charts(&self) -> Vec<super::contract::Chart> {
        let title = format!("schedlab sweep: KIOPS vs threads ({} CPUs, commit {})", self.config.cpus, self.provenance.commit);
        let drawn = if self.points.is_empty() {
            Err("no point finished".to_string())
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
            .map(|p| format!("{} / {} at {} threads: other processes used {:.1} CPUs", p.variant, p.lock.name(), p.threads, p.other_cpus))
            .collect();
        super::contract::Outcome {
            interrupted: self.interrupted,
            warnings: warnings(self),
            disturbed,
            failed_checks: if self.all_consistent() { vec![] } else { vec!["a point failed its end-of-run checks (INCONSISTENT points above)".into()] },
            failed_runs: if self.failures.is_empty() { vec![] } else { vec![String::new()] },
            failed_outputs: self.csv_error.iter().cloned().collect(),
        }
    }
}

/// The points table's title (the chart goes beside it).
const POINTS: &str = "Points measured";
/// The ratios table's title.
const RATIOS: &str = "Ratios to the reference variant";
