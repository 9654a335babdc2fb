//! `schedlab predict`'s report: the machine modelled (and the one calibrated on, where
//! another), the calibration, the predicted KIOPS and where a job's time goes, the seeds'
//! ratios as predicted, and the validation (measured beside predicted, the error judged, the
//! variants' order, the goal), as tables; the terminal text is drawn from the same tables
//! ([`super::contract::text_of_tables`]). The chart of the predicted curve is
//! [`super::charts::predict_curve_svg`].

use super::charts::ChartError;
use super::contract::Judge;
use super::table::{Cell, Table, Verdict};
use crate::experiment::predict::{curves, entry, PredictReport, ValidationReport};
use crate::experiment::validate::OrderVerdict;
use crate::model::topology::Topology;
use crate::model::{CalibrationSet, Prediction, Wanted};
use crate::stats::{median, GoalVerdict, Interval};

/// The machine modelled beside the machine calibrated on, where that is another: a row per
/// figure of the profile, its unit in a column of its own.
fn machine_table(topo: &Topology, set: &CalibrationSet) -> Table {
    let other = (set.machine != *topo).then_some(&set.machine);
    let mut columns = vec![("figure", ""), ("modelled", "")];
    if other.is_some() {
        columns.push(("calibrated on", ""));
    }
    columns.push(("unit", ""));
    let mut t = Table::new("The machine modelled", &columns);
    type Figure = fn(&Topology) -> Cell;
    let rows: [(&str, &str, Figure); 11] = [
        ("cores", "", |m| Cell::num(m.cores as f64, 0)),
        ("threads per core", "", |m| Cell::num(m.threads_per_core as f64, 0)),
        ("line transfer between cores", "ns", |m| Cell::num(m.transfer.core_ns, 1)),
        ("line transfer between siblings", "ns", |m| Cell::num(m.transfer.sibling_ns, 1)),
        ("SMT slowdown, sibling busy", "×", |m| Cell::num(m.smt.busy_slowdown, 2)),
        ("SMT slowdown, sibling spinning", "×", |m| Cell::num(m.smt.spin_slowdown, 2)),
        ("pause", "ns", |m| Cell::num(m.parking.pause_ns, 1)),
        ("yield", "ns", |m| Cell::num(m.parking.yield_ns, 0)),
        ("wake-up", "µs", |m| Cell::num(m.parking.wake_latency_ns / 1e3, 1)),
        ("wake call", "µs", |m| Cell::num(m.parking.unpark_cost_ns / 1e3, 1)),
        ("compute scale", "×", |m| Cell::num(m.compute_scale, 2)),
    ];
    for (figure, unit, cell) in rows {
        let mut row = vec![Cell::text(figure), cell(topo)];
        row.extend(other.map(cell));
        row.push(Cell::text(unit));
        t.row(row);
    }
    let interruptions = |m: &Topology| match &m.interruptions {
        Some(int) if int.rate_per_s > 0.0 && !int.durations_ns.is_empty() => {
            Cell::num(int.rate_per_s, 0)
        }
        _ => Cell::missing("none modelled"),
    };
    let mut row = vec![Cell::text("interruptions per CPU"), interruptions(topo)];
    row.extend(other.map(interruptions));
    row.push(Cell::text("a second"));
    t.row(row);
    match &topo.interruptions {
        Some(int) if int.rate_per_s > 0.0 && !int.durations_ns.is_empty() => {
            let mean = int.durations_ns.iter().sum::<f64>() / int.durations_ns.len() as f64;
            t.note(format!(
                "interruptions: {:.1} µs on average (median {:.1} µs): {:.2} % of a CPU's time",
                mean / 1e3,
                median(&int.durations_ns) / 1e3,
                int.rate_per_s * mean / 1e7
            ));
        }
        _ => {
            t.note("interruptions: none modelled (the profile has none)");
        }
    }
    t.note(format!("modelled: {}", topo.name));
    if let Some(m) = other {
        t.note(format!("calibrated on: {}", m.name));
        t.note("a section's lines measured there cost the modelled machine's transfer here");
    }
    t
}

/// Each wanted entry's calibration: one job alone, then its sections per call (`hold ns ×
/// lines` per lock, lines pulled when the previous holder ran on another CPU).
fn calibration_tables(set: &CalibrationSet, wanted: &Wanted) -> [Table; 2] {
    let key = [("variant", ""), ("lock", ""), ("path", "")];
    let alone =
        [("one job", "ns/request"), ("loop", "ns"), ("relay measured", ""), ("anomalies", "")];
    let mut jobs =
        Table::new("Calibration: one job alone (single-threaded)", &[&key[..], &alone].concat());
    let sections = [("call", ""), ("locks held", "ns×lines"), ("outside the locks", "ns×lines")];
    let mut calls = Table::new(
        "Calibration: each call's sections (two processes)",
        &[&key[..], &sections].concat(),
    );
    let mut unrelayed = Vec::new();
    for (v, lock, insert) in wanted.entries() {
        let Some(c) = set.find(v, lock, insert) else { continue };
        let config = || {
            vec![
                Cell::text(c.variant.clone()),
                Cell::text(c.lock.name()),
                Cell::text(c.insert.clone()),
            ]
        };
        let relayed = c.relayed || set.machine.cpus() <= 1;
        if !relayed {
            unrelayed.push(entry(&c.variant, &c.insert));
        }
        let mut row = config();
        row.extend([
            Cell::num(c.solo_cycle_ns, 0),
            Cell::num(c.loop_ns, 0),
            Cell::check(relayed, if relayed { "yes" } else { "NO" }),
            Cell::num(c.anomalies as f64, 0),
        ]);
        jobs.row(row);
        for m in &c.pair {
            let holds: Vec<String> = m
                .segments
                .iter()
                .filter_map(|s| {
                    let p = if s.probability < 0.995 {
                        format!(" p{:.2}", s.probability)
                    } else {
                        String::new()
                    };
                    s.lock.as_ref().map(|l| format!("{l} {:.0}×{:.1}{p}", s.ns, s.lines))
                })
                .collect();
            let free: f64 = m.segments.iter().filter(|s| s.lock.is_none()).map(|s| s.ns).sum();
            let free_lines: f64 =
                m.segments.iter().filter(|s| s.lock.is_none()).map(|s| s.lines).sum();
            let mut row = config();
            row.extend([
                Cell::text(m.call.name()),
                if holds.is_empty() { Cell::missing("none") } else { Cell::text(holds.join(", ")) },
                Cell::shown(free, format!("{free:.0}×{free_lines:.1}")),
            ]);
            calls.row(row);
        }
    }
    jobs.note("anomalies: calibration steps that found the scheduler other than expected");
    if !unrelayed.is_empty() {
        jobs.note(format!(
            "WARNING: the relay between two CPUs measured nothing for {} (the CPUs were busy with other processes): \
             no lines, hand-offs move only the lock's line; calibrate again on a quieter machine",
            unrelayed.join(", ")
        ));
    }
    calls.note("p: the probability a call takes that section, where below 1");
    [jobs, calls]
}

/// Predicted KIOPS against threads: a row per entry, lock and outside work.
fn predicted_table(predictions: &[Prediction], threads: &[usize]) -> Table {
    let names: Vec<String> = threads.iter().map(|t| format!("@{t}")).collect();
    let mut columns = vec![("variant", ""), ("lock", ""), ("outside", "ns")];
    columns.extend(names.iter().map(|n| (n.as_str(), "KIOPS")));
    let mut t = Table::new(PREDICTED, &columns);
    for (name, lock, outside_ns) in curves(predictions) {
        let mut row = vec![
            Cell::text(name.clone()),
            Cell::text(lock.name()),
            Cell::num(outside_ns as f64, 0),
        ];
        for &n in threads {
            let at = predictions.iter().find(|q| {
                entry(&q.variant, &q.insert) == name
                    && q.lock == lock
                    && q.outside_ns == outside_ns
                    && q.result.threads == n
            });
            row.push(at.map_or_else(|| Cell::missing("-"), |q| Cell::num(q.result.kiops, 0)));
        }
        t.row(row);
    }
    t.note("@n: at n threads; a discrete-event simulation calibrated on single-threaded runs");
    if let Some(i) = predictions.first().map(|p| p.inject).filter(|i| i.ns > 0) {
        t.note(format!(
            "injected: {} ns per request {} the scheduler lock (--inject-ns, --at {})",
            i.ns,
            i.at.name(),
            i.at.name()
        ));
    }
    t
}

/// Where a job's time goes at the most threads: ns per request per job (its share of the
/// job's time after it), and each lock's busy share.
fn time_table(predictions: &[Prediction], threads: &[usize]) -> Table {
    let top = *threads.iter().max().unwrap_or(&1);
    let columns = [
        ("variant", ""),
        ("lock", ""),
        ("outside", "ns"),
        ("hold", "ns"),
        ("hand-off", "ns"),
        ("wait", "ns"),
        ("outside work", "ns"),
        ("locks busy", ""),
    ];
    let mut t = Table::new(format!("Where a job's time goes at {top} threads (model)"), &columns);
    for p in predictions.iter().filter(|p| p.result.threads == top) {
        let b = &p.result.breakdown;
        let total = b.total().max(1e-9);
        let part = |ns: f64| Cell::shown(ns, format!("{ns:.0} ({:.0}%)", 100.0 * ns / total));
        let busy: Vec<String> =
            p.result.lock_busy.iter().map(|(l, f)| format!("{l} {:.0}%", 100.0 * f)).collect();
        t.row(vec![
            Cell::text(entry(&p.variant, &p.insert)),
            Cell::text(p.lock.name()),
            Cell::num(p.outside_ns as f64, 0),
            part(b.hold_ns),
            part(b.handoff_ns),
            part(b.wait_ns),
            part(b.outside_ns),
            Cell::text(busy.join(", ")),
        ]);
    }
    t.note(
        "ns per request per job (its share of the job's time); hand-off: lock line + \
        data lines + wake calls",
    );
    t
}

/// The validation's measured points beside the predicted ones.
fn measured_table(v: &ValidationReport) -> Table {
    // The placement other than the calibration's, by its transfer: on this machine kind the
    // calibration is usually near and the other placement far, but either can be either.
    let other_placement = match (v.other_placement_transfer_ns, v.calibration_transfer_ns) {
        (Some(other), Some(reference)) if other < reference => "near",
        _ => "far",
    };
    let columns = [
        ("variant", ""),
        ("lock", ""),
        ("outside", "ns"),
        ("threads", ""),
        ("measured", "KIOPS"),
        ("low", "KIOPS"),
        ("high", "KIOPS"),
        ("model", "KIOPS"),
        (other_placement, "runs"),
        ("load", "CPUs"),
    ];
    let mut t = Table::new(VALIDATION, &columns);
    for r in &v.rows {
        let every_run = r.measured.runs.iter().chain(&r.left_out_kiops);
        let measured = if r.measured.runs.is_empty() && r.left_out_kiops.is_empty() {
            Cell::missing("-")
        } else if every_run.fold(0.0, |most: f64, &k| most.max(k)) == 0.0 {
            // Zeros would read as a measurement (and an error of -100 %): say what happened.
            Cell::missing("no requests completed")
        } else if r.measured.runs.is_empty() {
            Cell::missing("left out: placement moved")
        } else {
            Cell::num(r.measured.median, 0)
        };
        t.row(vec![
            Cell::text(entry(r.variant, r.insert)),
            Cell::text(r.lock.name()),
            Cell::num(r.outside_ns as f64, 0),
            Cell::num(r.threads as f64, 0),
            measured,
            bound(r.measured_interval, false, 0),
            bound(r.measured_interval, true, 0),
            Cell::num(r.predicted, 0),
            Cell::num(r.placement.other as f64, 0),
            Cell::num(r.other_cpus_max, 2),
        ]);
    }
    t.note(format!(
        "measured: the median of {} round(s); low, high: its 95% bootstrap interval over them",
        v.rounds
    ));
    t.note("model: the prediction at the same point, for the placement each run ran in");
    let calibrated = v.calibration_transfer_ns.map_or("-".to_string(), |ns| format!("{ns:.0} ns"));
    match v.other_placement_transfer_ns {
        Some(ns) => t.note(format!(
            "{other_placement}: runs whose placement probes read another transfer than the \
             calibration's {calibrated}, predicted with theirs ({ns:.0} ns)"
        )),
        None => t.note(format!(
            "{other_placement}: runs in another placement than the calibration's (none here)"
        )),
    };
    let moved: usize = v.rows.iter().map(|r| r.placement.moved).sum();
    if moved > 0 {
        t.note(format!(
            "left out: {moved} run(s) whose probes disagree (the host moved the CPUs while it ran)"
        ));
    }
    t.note("load: the most CPUs other processes used during a kept run");
    for r in v.rows.iter().filter(|r| !r.failures.is_empty()) {
        t.note(format!(
            "FAILED: {} at {} threads: {}",
            entry(r.variant, r.insert),
            r.threads,
            r.failures[0]
        ));
    }
    t
}

/// An interval's bound, "-" without one.
fn bound(i: Option<Interval>, hi: bool, places: usize) -> Cell {
    i.map_or_else(|| Cell::missing("-"), |i| Cell::num(if hi { i.hi } else { i.lo }, places))
}

/// The error of each validated point, judged against the goal's band on its interval; on
/// disturbed runs not judged.
fn error_table(v: &ValidationReport, judge: Judge) -> Table {
    let columns = [
        ("variant", ""),
        ("lock", ""),
        ("outside", "ns"),
        ("threads", ""),
        ("error", "%"),
        ("95% low", "%"),
        ("95% high", "%"),
        ("within the goal", ""),
    ];
    let mut t = Table::new(
        format!("Validation: the error, within ±{:.0}% on its interval?", v.goal_pct),
        &columns,
    );
    let mut whys: Vec<&str> = Vec::new();
    for r in &v.rows {
        let within = match (r.error_pct.is_finite(), r.within_goal) {
            (false, _) => Cell::missing("-"),
            (true, None) => {
                if let Some(why) = r.no_interval.as_deref().filter(|w| !whys.contains(w)) {
                    whys.push(why);
                }
                Cell::not_judged("no interval")
            }
            (true, Some(GoalVerdict::Met)) => judge.cell(Verdict::Met, "within"),
            (true, Some(GoalVerdict::Missed)) => judge.cell(Verdict::Missed, "outside"),
            (true, Some(GoalVerdict::Inconclusive)) => {
                judge.cell(Verdict::Inconclusive, "inconclusive")
            }
        };
        t.row(vec![
            Cell::text(entry(r.variant, r.insert)),
            Cell::text(r.lock.name()),
            Cell::num(r.outside_ns as f64, 0),
            Cell::num(r.threads as f64, 0),
            Cell::num(r.error_pct, 1),
            bound(r.error_interval_pct, false, 1),
            bound(r.error_interval_pct, true, 1),
            within,
        ]);
    }
    t.note("error = (predicted − measured) ÷ measured; 95%: its interval over the same resamples");
    for why in whys {
        t.note(format!("no interval: {}", why.trim_start_matches("no interval: ")));
    }
    t
}

/// The variants from fastest, measured and predicted, per configuration and thread count.
fn order_table(v: &ValidationReport) -> Table {
    let columns = [
        ("lock", ""),
        ("path", ""),
        ("outside", "ns"),
        ("threads", ""),
        ("rank", ""),
        ("measured", ""),
        ("predicted", ""),
    ];
    let mut t =
        Table::new("Validation: the variants from fastest, measured and predicted", &columns);
    for o in &v.orderings {
        for (rank, (measured, predicted)) in o.measured.iter().zip(&o.predicted).enumerate() {
            t.row(vec![
                Cell::text(o.lock.name()),
                Cell::text(o.insert),
                Cell::num(o.outside_ns as f64, 0),
                Cell::num(o.threads as f64, 0),
                Cell::num((rank + 1) as f64, 0),
                Cell::text(*measured),
                Cell::text(*predicted),
            ]);
        }
        let verdict = match o.verdict {
            OrderVerdict::Right => "RIGHT",
            OrderVerdict::Wrong => "WRONG",
            OrderVerdict::NotJudged => "not judged",
        };
        t.note(format!(
            "{} {}, {} ns outside, {} threads: the order is {verdict} on the pairs the measurement \
             orders: {} agree, {} disagree, {} within the noise, {} without an interval; the \
             medians' ranks are {} ({:.0}% of pairs alike)",
            o.lock.name(),
            o.insert,
            o.outside_ns,
            o.threads,
            o.pairs_agree,
            o.pairs_disagree,
            o.pairs_within_noise,
            o.pairs_no_interval,
            if o.same { "the same" } else { "different" },
            100.0 * o.pairs_agreeing
        ));
    }
    t
}

/// The goal: within the band everywhere on the intervals and the same order; the |error| over
/// all points (per thread count in its notes).
fn goal_table(v: &ValidationReport, judge: Judge) -> Table {
    let columns =
        [("median |error|", "%"), ("max |error|", "%"), ("order right", "groups"), ("goal", "")];
    let mut t = Table::new(
        format!(
            "Validation: the goal (within ±{:.0}% everywhere on the intervals, the order right)",
            v.goal_pct
        ),
        &columns,
    );
    let right = v.orderings.iter().filter(|o| o.verdict == OrderVerdict::Right).count();
    let wrong = v.orderings.iter().filter(|o| o.verdict == OrderVerdict::Wrong).count();
    let goal = match v.goal_verdict() {
        Ok(GoalVerdict::Met) => judge.cell(Verdict::Met, "met"),
        Ok(GoalVerdict::Missed) => judge.cell(Verdict::Missed, "missed"),
        Ok(GoalVerdict::Inconclusive) => judge.cell(Verdict::Inconclusive, "inconclusive"),
        // Disturbed runs: the judge's own words (the outcome says which).
        Err(_) if v.disturbed().is_some() => judge.cell(Verdict::NotJudged, "not judged"),
        Err(_) => Cell::not_judged("not judged"),
    };
    let pct = |e: Option<f64>| e.map_or_else(|| Cell::missing("not measured"), |e| Cell::num(e, 1));
    t.row(vec![
        pct(v.median_abs_error_pct),
        pct(v.max_abs_error_pct),
        Cell::text(format!("{right}/{} ({wrong} wrong)", v.orderings.len())),
        goal,
    ]);
    // Per thread count: figures of the rows above, summarised (not in the JSON of their own).
    let per_threads: Vec<String> = v
        .threads
        .iter()
        .map(|&n| {
            let e: Vec<f64> = v
                .rows
                .iter()
                .filter(|r| r.threads == n)
                .map(|r| r.error_pct.abs())
                .filter(|e| e.is_finite())
                .collect();
            if e.is_empty() {
                format!("{n} thread(s): not measured")
            } else {
                format!(
                    "{n} thread(s): median |error| {:.1}%, max {:.1}%",
                    median(&e),
                    e.iter().copied().fold(0.0, f64::max)
                )
            }
        })
        .collect();
    for line in per_threads.chunks(3) {
        t.note(line.join("; "));
    }
    match v.goal_verdict() {
        Ok(GoalVerdict::Inconclusive) if judge.judges() => {
            t.note("inconclusive: an interval reaches across the band (more rounds would tell)");
        }
        // Disturbed runs are said once, in the outcome under the tables.
        Err(why) if v.disturbed().is_none() => {
            t.note(format!("not judged: {why}"));
        }
        _ => {}
    }
    t.note(format!("median |error| rests on {}", v.error_basis));
    let noisy = v.rows.iter().filter(|r| r.other_cpus_max > v.max_other_cpus).count();
    if noisy > 0 {
        t.note(format!(
            "NOTE: {noisy} point(s) kept a run during which other processes used more than {} CPUs \
             (retries exhausted): on a shared 2-CPU machine those measure the neighbours as much as the variant",
            v.max_other_cpus
        ));
    }
    t
}

/// The report contract (`report::contract`): the prediction, the seeds' ratios and the
/// validation as tables, the validation's chart beside its table, the outcome.
impl super::contract::Report for PredictReport {
    const COMMAND: &'static str = "predict";
    /// 2: a figure its tables refuse is `null` here too (`contract::Report::json_in`).
    const SCHEMA_VERSION: u32 = 2;
    const VERDICT_FIELDS: &'static [&'static str] = &["within_goal"];

    fn provenance(&self) -> crate::files::provenance::Provenance {
        self.provenance.clone()
    }

    fn text(&self, view: super::contract::View) -> String {
        let tables = super::contract::text_of_tables(&self.tables(self.judge(view)));
        let outcome = super::contract::text_of_outcome(&self.outcome());
        let caveat = "schedlab predict: MODEL, not measured — a discrete-event \
            simulation calibrated on single-threaded runs";
        format!("{caveat}\n{}\n\n{tables}{outcome}", self.provenance.head())
    }

    fn tables(&self, judge: Judge) -> Vec<Table> {
        let mut tables = vec![machine_table(&self.topology, &self.calibration)];
        tables.extend(calibration_tables(&self.calibration, &self.wanted));
        tables.push(predicted_table(&self.predictions, &self.threads));
        tables.push(time_table(&self.predictions, &self.threads));
        if !self.ratios.is_empty() {
            let columns = [
                ("ratio", ""),
                ("of", ""),
                ("lock", ""),
                ("threads", ""),
                ("outside", "ns"),
                ("predicted", "×"),
                ("seed", "×"),
            ];
            let mut ratios =
                Table::new("The seeds' ratios, predicted (model) beside the seeds' own", &columns);
            for r in &self.ratios {
                ratios.row(vec![
                    Cell::text(r.name),
                    Cell::text(format!("{} / {}", r.numerator, r.denominator)),
                    Cell::text(r.lock.name()),
                    Cell::num(r.threads as f64, 0),
                    Cell::num(r.outside_ns as f64, 0),
                    Cell::num(r.predicted, 2),
                    Cell::opt(r.seed, 2),
                ]);
            }
            tables.push(ratios);
        }
        if let Some(v) = &self.validation {
            let (error, goal) = (error_table(v, judge), goal_table(v, judge));
            tables.extend([measured_table(v), error, order_table(v), goal]);
        }
        tables
    }

    fn charts(&self) -> Vec<super::contract::Chart> {
        let curve = super::contract::Chart::new(
            "predicted KIOPS against threads",
            super::charts::predict_curve_svg(self),
        )
        .beside(PREDICTED);
        let drawn = match self.validation {
            Some(_) => super::charts::predict_validation_svg(self),
            None => Err(ChartError::NothingToDraw("the chart draws the validation: --validate")),
        };
        vec![
            curve,
            super::contract::Chart::new("measured against predicted", drawn).beside(VALIDATION),
        ]
    }

    /// `--svg` draws the validation (refused without `--validate`), not the curve.
    fn svg_chart(&self) -> Option<super::contract::Chart> {
        self.charts().into_iter().nth(1)
    }

    fn outcome(&self) -> super::contract::Outcome {
        let mut outcome =
            super::contract::Outcome { interrupted: self.interrupted, ..Default::default() };
        if let Some(v) = &self.validation {
            if let Some(why) = v.disturbed() {
                outcome.disturbed.push(format!("the validation: {why}"));
            }
            let failed = v.failed_runs();
            if failed > 0 {
                let failed = format!("{failed} validation run(s) failed");
                outcome.failed_runs.push(super::contract::Failure::untold(failed));
            }
        }
        outcome
    }
}

/// The validation table's title (its chart goes beside it).
const VALIDATION: &str = "Validation: measured beside predicted";
/// The predicted KIOPS' title (the curve's chart goes beside it).
const PREDICTED: &str = "Predicted KIOPS (model, not measured) against threads";

#[cfg(test)]
mod tests {
    use crate::experiment::observer::Silent;
    use crate::experiment::predict::{from_committed_files, run, PredictReport, ValidationReport};
    use crate::experiment::validate::{self, Row};
    use crate::report::contract::{renderings_agree, Report, View};
    use crate::stats::{GoalVerdict, Interval, Spread};
    use schedlab_core::sync::AtomicBool;

    /// sched-lock and no-stats on the fair lock, from the committed calibration, predicted for
    /// the seeds' machine at 1, 2 and 4 threads.
    fn predicted() -> PredictReport {
        let cfg = from_committed_files(vec!["sched-lock", "no-stats"], vec![1, 2, 4]);
        run(&cfg, &AtomicBool::new(false), &mut Silent).expect("predicted")
    }

    /// A validation of every predicted point over six rounds: measured 10 % below the model,
    /// other processes quiet unless `disturbed`.
    fn validated(mut report: PredictReport, disturbed: bool) -> PredictReport {
        let mut rows = Vec::new();
        for p in &report.predictions {
            let variant = if p.variant == "no-stats" { "no-stats" } else { "sched-lock" };
            let m = p.result.kiops * 0.9;
            let by_round = [0.98, 1.0, 1.03, 0.99, 1.01, 1.0].map(|f| m * f);
            let measured = Spread::of(by_round.to_vec());
            // Every variant meets the same machine in a round: the pairs' ratios are steady.
            let repetitions = by_round
                .iter()
                .enumerate()
                .map(|(round, &kiops)| validate::Repetition {
                    round,
                    kiops,
                    placement: validate::RunPlacement::Unprobed,
                    predicted: Some(p.result.kiops),
                })
                .collect();
            let error_pct = (p.result.kiops - m) / m * 100.0;
            rows.push(Row {
                variant,
                lock: p.lock,
                insert: "direct",
                outside_ns: p.outside_ns,
                threads: p.result.threads,
                measured,
                predicted: p.result.kiops,
                error_pct,
                measured_interval: Some(Interval { lo: m * 0.98, hi: m * 1.03 }),
                error_interval_pct: Some(Interval { lo: error_pct - 3.0, hi: error_pct + 2.5 }),
                no_interval: None,
                within_goal: Some(GoalVerdict::Met),
                other_cpus_max: if disturbed { 1.5 } else { 0.05 },
                reruns: 0,
                failures: Vec::new(),
                placement: Default::default(),
                left_out_kiops: Vec::new(),
                repetitions,
            });
        }
        let orderings = validate::orderings(&rows);
        report.validation = Some(ValidationReport {
            rounds: 6,
            duration_s: 0.2,
            error_basis: validate::error_basis(&rows, 6, 15.0),
            rows,
            orderings,
            median_abs_error_pct: Some(11.1),
            max_abs_error_pct: Some(11.1),
            goal_pct: 15.0,
            threads: report.threads.clone(),
            max_other_cpus: 0.5,
            other_placement_transfer_ns: None,
            calibration_transfer_ns: None,
        });
        report
    }

    /// A point whose every run was left out says so, unless no run completed a request: the
    /// text does not depend on where the host put the CPUs (a loaded machine moves them).
    #[test]
    fn a_point_left_out_for_its_placement_says_so_and_zeros_stay_zeros() {
        let mut report = validated(predicted(), false);
        let v = report.validation.as_mut().unwrap();
        let point = &mut v.rows[0];
        point.measured = Spread::of(Vec::new());
        point.placement.moved = 2;
        for (left_out, said) in [
            (vec![640.0, 0.0], "left out: placement moved"),
            (vec![0.0, 0.0], "no requests completed"),
        ] {
            report.validation.as_mut().unwrap().rows[0].left_out_kiops = left_out;
            renderings_agree(&report).unwrap();
            let text = report.text(View::default());
            assert!(text.contains(said), "{said:?} is not in the text:\n{text}");
        }
    }

    fn widest(text: &str) -> usize {
        // The provenance line (the second) is as wide as the machine's names make it.
        text.lines()
            .enumerate()
            .filter(|(i, _)| *i != 1)
            .map(|(_, l)| l.chars().count())
            .max()
            .unwrap_or(0)
    }

    #[test]
    fn the_predict_text_is_drawn_from_its_tables_within_130_columns() {
        let report = predicted();
        renderings_agree(&report).unwrap();
        let text = report.text(View::default());
        assert!(widest(&text) <= 130, "{text}");
        for said in [
            "MODEL, not measured",
            "The machine modelled",
            "i7-4850HQ",
            "Calibration: one job alone",
            "@4 (KIOPS)",
            "Where a job's time goes at 4 threads",
            "The seeds' ratios",
            "1.55",
        ] {
            assert!(text.contains(said), "{said:?} is not in the text:\n{text}");
        }
        let report = validated(report, false);
        renderings_agree(&report).unwrap();
        let text = report.text(View::default());
        assert!(widest(&text) <= 130, "{text}");
        for said in [
            "Validation: measured beside predicted",
            "within",
            "the order is RIGHT",
            "Validation: the goal",
            "met",
        ] {
            assert!(text.contains(said), "{said:?} is not in the text:\n{text}");
        }
    }

    #[test]
    fn a_disturbed_validation_judges_nothing_in_any_rendering() {
        let report = validated(predicted(), true);
        renderings_agree(&report).unwrap();
        let text = report.text(View::default());
        // A row's verdict ends it (notes, indented, may use the words).
        let verdict = |l: &str| {
            !l.starts_with(' ')
                && [" within", " outside", " inconclusive", " met", " missed"]
                    .iter()
                    .any(|v| l.ends_with(v))
        };
        assert!(text.contains("not judged: disturbed") && !text.lines().any(verdict), "{text}");
        assert_eq!(text.matches("6 of 6 points kept a run").count(), 1, "said once: {text}");
        assert!(
            text.contains("disturbed: the validation"),
            "the outcome says so under the tables: {text}"
        );
    }

    #[test]
    fn the_curve_is_drawn_for_every_variant_with_the_measured_points() {
        let report = predicted();
        let svg = crate::report::charts::predict_curve_svg(&report).unwrap();
        assert!(
            svg.contains("sched-lock: model")
                && svg.contains("no-stats: model")
                && !svg.contains(": measured"),
            "{svg}"
        );
        assert!(svg.contains(&format!("commit {}", report.provenance.commit)));
        let svg = crate::report::charts::predict_curve_svg(&validated(report, false)).unwrap();
        assert!(svg.contains("sched-lock: measured (bar: its 95% interval"), "{svg}");
        let none = PredictReport { predictions: Vec::new(), ..predicted() };
        assert!(crate::report::charts::predict_curve_svg(&none).is_err());
    }

    #[test]
    fn predict_judges_only_an_undisturbed_validation() {
        use crate::report::contract::judged_only_when_undisturbed;
        // Its own runs disturbed: the outcome's judge takes every verdict away.
        let judged = judged_only_when_undisturbed(&validated(predicted(), true), View::default());
        assert!(judged.unwrap() > 0, "the fixture has verdicts to take away");
        let disturbed = View { disturbed: true, ..View::default() };
        let judged = judged_only_when_undisturbed(&validated(predicted(), false), disturbed);
        assert!(judged.unwrap() > 0);
    }
}
