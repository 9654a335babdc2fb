//! The text of `schedlab predict`'s report: the machine modelled, the calibration, the predicted
//! KIOPS and where a job's time goes, the seeds' ratios as predicted, and the validation (measured
//! beside predicted, the variants' order, the goal).

use crate::experiment::predict::{PredictReport, ValidationReport};
use crate::model::topology::Topology;
use crate::model::{CalibrationSet, PredictedRatio, Prediction, Wanted};
use crate::stats::{median, GoalVerdict, Interval};
use schedlab_core::LockKind;
use std::fmt::Write as _;

/// Every table, in order, after the header lines (the model's caveat and the provenance).
pub fn text(report: &PredictReport) -> String {
    let mut s = String::new();
    let _ = writeln!(s, "schedlab predict: MODEL, not measured — a discrete-event simulation calibrated on single-threaded runs");
    let _ = writeln!(s, "{}", report.provenance.one_line());
    s += &machine(&report.topology, &report.calibration);
    s += &calibration(&report.calibration, &report.wanted);
    s += &predictions(&report.predictions, &report.threads);
    s += &ratios(&report.ratios);
    if let Some(v) = &report.validation {
        s += &validation(v, report.interrupted);
    }
    s
}

/// The machine modelled, its interruptions, and the machine calibrated on when another.
pub fn machine(topo: &Topology, set: &CalibrationSet) -> String {
    let mut s = String::new();
    let _ = writeln!(
        s,
        "\nmachine modelled: {} — {} cores × {} threads; line transfer {:.1} ns between cores, {:.1} ns between siblings; SMT slowdown {:.2} (sibling busy) / {:.2} (spinning); pause {:.1} ns, yield {:.0} ns, wake-up {:.1} µs, wake call {:.1} µs; compute scale {:.2}",
        topo.name,
        topo.cores,
        topo.threads_per_core,
        topo.transfer.core_ns,
        topo.transfer.sibling_ns,
        topo.smt.busy_slowdown,
        topo.smt.spin_slowdown,
        topo.parking.pause_ns,
        topo.parking.yield_ns,
        topo.parking.wake_latency_ns / 1e3,
        topo.parking.unpark_cost_ns / 1e3,
        topo.compute_scale
    );
    match &topo.interruptions {
        Some(int) if int.rate_per_s > 0.0 && !int.durations_ns.is_empty() => {
            let mean = int.durations_ns.iter().sum::<f64>() / int.durations_ns.len() as f64;
            let _ = writeln!(
                s,
                "interruptions: {:.0} a second per CPU, {:.1} µs on average (median {:.1} µs): {:.2} % of a CPU's time",
                int.rate_per_s,
                mean / 1e3,
                median(&int.durations_ns) / 1e3,
                int.rate_per_s * mean / 1e7
            );
        }
        _ => s.push_str("interruptions: none modelled (the profile has none)\n"),
    }
    if set.machine != *topo {
        let _ = writeln!(
            s,
            "calibrated on: {} (line transfer {:.1} ns): a section's lines measured there cost the modelled machine's transfer here",
            set.machine.name,
            set.machine.transfer.core_ns
        );
    }
    s
}

/// Each wanted entry's calibration: its sections (`hold ns × lines` per lock) and the work between.
pub fn calibration(set: &CalibrationSet, wanted: &Wanted) -> String {
    let mut s = String::from("\nCALIBRATION (single-threaded; two processes' sections; `hold ns × lines` per lock, lines pulled when the previous holder ran on another CPU):\n");
    for (v, lock, insert) in wanted.entries() {
        let Some(c) = set.find(v, lock, insert) else { continue };
        let mut parts = Vec::new();
        for m in &c.pair {
            let holds: Vec<String> = m
                .segments
                .iter()
                .filter_map(|s| s.lock.as_ref().map(|l| format!("{l} {:.0}×{:.1}{}", s.ns, s.lines, if s.probability < 0.995 { format!(" p{:.2}", s.probability) } else { String::new() })))
                .collect();
            let free: f64 = m.segments.iter().filter(|s| s.lock.is_none()).map(|s| s.ns).sum();
            let free_lines: f64 = m.segments.iter().filter(|s| s.lock.is_none()).map(|s| s.lines).sum();
            parts.push(format!("{} [{}{}out {:.0}×{:.1}]", m.call.name(), holds.join(", "), if holds.is_empty() { "" } else { "; " }, free, free_lines));
        }
        let _ = writeln!(
            s,
            "  {:<11} {:<11} {:<6} one job {:>5.0} ns/request (loop {:.0}) | {}",
            c.variant,
            c.lock.name(),
            c.insert,
            c.solo_cycle_ns,
            c.loop_ns,
            parts.join(" ")
        );
        if !c.relayed && set.machine.cpus() > 1 {
            s.push_str("    WARNING: the relay between two CPUs measured nothing (the CPUs were busy with other processes): no lines, hand-offs move only the lock's line; calibrate again on a quieter machine\n");
        }
        if c.anomalies > 0 {
            let _ = writeln!(s, "    ({} calibration steps found the scheduler other than expected)", c.anomalies);
        }
    }
    s
}

/// The entry's name in the tables: the variant, with `+path` for another insert path.
fn entry(variant: &str, insert: &str) -> String {
    if insert == "direct" {
        variant.to_string()
    } else {
        format!("{variant}+{insert}")
    }
}

/// Predicted KIOPS against threads, then where a job's time goes at the most threads.
pub fn predictions(predictions: &[Prediction], threads: &[usize]) -> String {
    let mut s = String::from("\nPREDICTED KIOPS (model) against threads:\n");
    if let Some(i) = predictions.first().map(|p| p.inject).filter(|i| i.ns > 0) {
        let _ = writeln!(s, "  injected: {} ns per request {} the scheduler lock (--inject-ns, --at {})", i.ns, i.at.name(), i.at.name());
    }
    let mut header = format!("  {:<17} {:<11} {:>8}", "variant", "lock", "outside");
    for t in threads {
        let _ = write!(header, " {:>7}", t);
    }
    let _ = writeln!(s, "{header}");
    let name = |p: &Prediction| entry(&p.variant, &p.insert);
    let mut seen: Vec<(String, LockKind, u64)> = Vec::new();
    for p in predictions {
        let k = (name(p), p.lock, p.outside_ns);
        if seen.contains(&k) {
            continue;
        }
        let mut line = format!("  {:<17} {:<11} {:>6}ns", k.0, p.lock.name(), p.outside_ns);
        for &t in threads {
            let v = predictions
                .iter()
                .find(|q| name(q) == k.0 && q.lock == k.1 && q.outside_ns == k.2 && q.result.threads == t)
                .map_or("-".to_string(), |q| format!("{:.0}", q.result.kiops));
            let _ = write!(line, " {v:>7}");
        }
        let _ = writeln!(s, "{line}");
        seen.push(k);
    }
    let top = *threads.iter().max().unwrap_or(&1);
    let _ = writeln!(s, "\nWhere a job's time goes at {top} threads (model): ns per request per job — hold, hand-off (lock line + data lines + wake calls), wait, outside; and each lock's busy share");
    for p in predictions.iter().filter(|p| p.result.threads == top) {
        let b = &p.result.breakdown;
        let total = b.total().max(1e-9);
        let busy: Vec<String> = p.result.lock_busy.iter().map(|(l, f)| format!("{l} {:.0}%", 100.0 * f)).collect();
        let _ = writeln!(
            s,
            "  {:<17} {:<11} {:>6}ns  hold {:>6.0} ({:>2.0}%)  hand-off {:>6.0} ({:>2.0}%)  wait {:>7.0} ({:>2.0}%)  outside {:>6.0} ({:>2.0}%)  | {}",
            name(p),
            p.lock.name(),
            p.outside_ns,
            b.hold_ns,
            100.0 * b.hold_ns / total,
            b.handoff_ns,
            100.0 * b.handoff_ns / total,
            b.wait_ns,
            100.0 * b.wait_ns / total,
            b.outside_ns,
            100.0 * b.outside_ns / total,
            busy.join(", ")
        );
    }
    s
}

/// The seeds' ratios as predicted, beside the seeds' own (nothing when none could be formed).
pub fn ratios(ratios: &[PredictedRatio]) -> String {
    let Some(first) = ratios.first() else { return String::new() };
    let mut s = format!("\nThe seeds' ratios, predicted (model) at {} threads:\n", first.threads);
    for r in ratios {
        let _ = writeln!(
            s,
            "  {:<26} {:>17} / {:<11} {:<11} outside {:>6} ns: {:>5.2}{}",
            r.name,
            r.numerator,
            r.denominator,
            r.lock.name(),
            r.outside_ns,
            r.predicted,
            r.seed.map_or(String::new(), |s| format!("   (seed {s:.2})"))
        );
    }
    s
}

/// Measured beside predicted, the variants' order, and whether the goal was met.
pub fn validation(v: &ValidationReport, interrupted: bool) -> String {
    let rows = &v.rows;
    let mut s = String::new();
    let _ = writeln!(
        s,
        "\nVALIDATION: measured (median of {} round(s), its 95% bootstrap interval over them) \
         beside predicted; error = (predicted − measured) ÷ measured, with its interval, judged \
         within ±{:.0}% on the interval{}",
        v.rounds,
        v.goal_pct,
        if interrupted { " (interrupted: the runs that finished)" } else { "" }
    );
    let _ = writeln!(
        s,
        "  {:<17} {:<11} {:>8} {:>7} {:>10} {:>13} {:>10} {:>8} {:>17} {:<12} {:>7}",
        "variant",
        "lock",
        "outside",
        "threads",
        "measured",
        "[95% interval]",
        "predicted",
        "error",
        "[95% interval]",
        "within goal",
        "others"
    );
    for r in rows {
        if !r.measured.runs.is_empty() && r.measured.max == 0.0 {
            // Zeros would read as a measurement (and an error of -100 %): say what happened.
            let _ = writeln!(
                s,
                "  {:<17} {:<11} {:>6}ns {:>7} no requests completed (predicted {:.0}){}",
                entry(r.variant, r.insert),
                r.lock.name(),
                r.outside_ns,
                r.threads,
                r.predicted,
                if r.failures.is_empty() { String::new() } else { format!("  FAILED: {}", r.failures[0]) }
            );
            continue;
        }
        let interval = |i: Option<Interval>, f: &dyn Fn(f64) -> String| {
            i.map_or_else(|| "-".to_string(), |i| format!("[{}, {}]", f(i.lo), f(i.hi)))
        };
        let _ = writeln!(
            s,
            "  {:<17} {:<11} {:>6}ns {:>7} {:>10} {:>13} {:>10.0} {:>8} {:>17} {:<12} {:>7.2}{}{}",
            entry(r.variant, r.insert),
            r.lock.name(),
            r.outside_ns,
            r.threads,
            if r.measured.runs.is_empty() { "-".into() } else { format!("{:.0}", r.measured.median) },
            interval(r.measured_interval, &|x| format!("{x:.0}")),
            r.predicted,
            if r.error_pct.is_finite() { format!("{:+.1}%", r.error_pct) } else { "-".into() },
            interval(r.error_interval_pct, &|x| format!("{x:+.1}%")),
            within_label(r.within_goal),
            r.other_cpus_max,
            match (&r.no_interval, r.measured.runs.is_empty()) {
                (Some(why), false) => format!("  ({why})"),
                _ => String::new(),
            },
            if r.failures.is_empty() { String::new() } else { format!("  FAILED: {}", r.failures[0]) }
        );
    }
    s.push_str("\n  Ordering of the variants (fastest first), measured | predicted:\n");
    for o in &v.orderings {
        let _ = writeln!(
            s,
            "  {:<11} {:<6} outside {:>5} ns, {} threads: {} — {} | {}  ({:.0}% of pairs agree)",
            o.lock.name(),
            o.insert,
            o.outside_ns,
            o.threads,
            if o.same { "SAME" } else { "DIFFERENT" },
            o.measured.join(" > "),
            o.predicted.join(" > "),
            100.0 * o.pairs_agreeing
        );
    }
    let goal = v.goal_pct;
    let same = v.orderings.iter().filter(|o| o.same).count();
    let per_threads: Vec<String> = v
        .threads
        .iter()
        .map(|&t| {
            let e: Vec<f64> = rows.iter().filter(|r| r.threads == t).map(|r| r.error_pct.abs()).filter(|e| e.is_finite()).collect();
            format!("{t} thread(s): median |error| {:.1}%, max {:.1}%", median(&e), e.iter().copied().fold(0.0, f64::max))
        })
        .collect();
    let _ = writeln!(
        s,
        "\n  GOAL (within {goal:.0}% everywhere on the intervals, same ordering): {} — median \
         |error| {} over {}, max {}; ordering the same in {same}/{} groups. {}",
        match v.goal_verdict() {
            Ok(GoalVerdict::Met) => "MET".to_string(),
            Ok(GoalVerdict::Missed) => "MISSED".to_string(),
            Ok(GoalVerdict::Inconclusive) => {
                "INCONCLUSIVE (an interval reaches across the band: more rounds would tell)".into()
            }
            Err(why) => format!("not judged ({why})"),
        },
        v.median_abs_error_pct.map_or_else(|| "not measured".to_string(), |e| format!("{e:.1}%")),
        v.error_basis,
        v.max_abs_error_pct.map_or_else(|| "not measured".to_string(), |e| format!("{e:.1}%")),
        v.orderings.len(),
        per_threads.join("; ")
    );
    let noisy = rows.iter().filter(|r| r.other_cpus_max > v.max_other_cpus).count();
    if noisy > 0 {
        let _ = writeln!(
            s,
            "  NOTE: {noisy} point(s) kept a run during which other processes used more than {} CPUs (retries exhausted): on a shared 2-CPU machine those measure the neighbours as much as the variant",
            v.max_other_cpus
        );
    }
    s
}

/// A point's judgement against the goal's band, in the text: "within", "OUTSIDE",
/// "inconclusive", or "-" without an interval.
fn within_label(v: Option<GoalVerdict>) -> &'static str {
    match v {
        Some(GoalVerdict::Met) => "within",
        Some(GoalVerdict::Missed) => "OUTSIDE",
        Some(GoalVerdict::Inconclusive) => "inconclusive",
        None => "-",
    }
}

/// The report contract (`report::contract`): the prediction, the seeds' ratios and the
/// validation as tables, the validation's chart beside its table, the outcome.
impl super::contract::Report for PredictReport {
    const COMMAND: &'static str = "predict";
    const SCHEMA_VERSION: u32 = 1;

    fn provenance(&self) -> crate::files::provenance::Provenance {
        self.provenance.clone()
    }

    fn text(&self, _view: super::contract::View) -> String {
        text(self)
    }

    fn tables(&self) -> Vec<super::table::Table> {
        use super::table::{Cell, Table, Verdict};
        let mut columns: Vec<(String, String)> = vec![("variant".into(), String::new()), ("lock".into(), String::new()), ("outside".into(), "ns".into())];
        columns.extend(self.threads.iter().map(|t| (format!("{t} threads"), "KIOPS".to_string())));
        let refs: Vec<(&str, &str)> = columns.iter().map(|(a, b)| (a.as_str(), b.as_str())).collect();
        let mut predicted = Table::new("Predicted KIOPS (model, not measured)", &refs);
        let mut seen: Vec<(String, LockKind, u64)> = Vec::new();
        for p in &self.predictions {
            let key = (entry(&p.variant, &p.insert), p.lock, p.outside_ns);
            if seen.contains(&key) {
                continue;
            }
            let mut row = vec![Cell::text(key.0.clone()), Cell::text(p.lock.name()), Cell::num(p.outside_ns as f64, 0)];
            for &t in &self.threads {
                let at = self.predictions.iter().find(|q| entry(&q.variant, &q.insert) == key.0 && q.lock == key.1 && q.outside_ns == key.2 && q.result.threads == t);
                row.push(at.map_or_else(|| Cell::missing("-"), |q| Cell::num(q.result.kiops, 0)));
            }
            predicted.row(row);
            seen.push(key);
        }
        if let Some(i) = self.predictions.first().map(|p| p.inject).filter(|i| i.ns > 0) {
            predicted.note(format!("injected: {} ns per request {} the scheduler lock", i.ns, i.at.name()));
        }
        let mut tables = vec![predicted];
        if !self.ratios.is_empty() {
            let mut ratios = Table::new("The seeds' ratios, predicted", &[("ratio", ""), ("of", ""), ("lock", ""), ("threads", ""), ("outside", "ns"), ("predicted", "×"), ("seed", "×")]);
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
            let mut t = Table::new(
                VALIDATION,
                &[
                    ("variant", ""),
                    ("lock", ""),
                    ("outside", "ns"),
                    ("threads", ""),
                    ("measured median", "KIOPS"),
                    ("95% interval low", "KIOPS"),
                    ("95% interval high", "KIOPS"),
                    ("predicted", "KIOPS"),
                    ("error", "%"),
                    ("error low", "%"),
                    ("error high", "%"),
                    ("within the goal", ""),
                    ("other processes", "CPUs"),
                ],
            );
            let judged = v.goal_verdict().is_ok();
            for r in &v.rows {
                let measured = !r.measured.runs.is_empty();
                let m = |x: f64| if measured { Cell::num(x, 0) } else { Cell::missing("-") };
                let within = match (r.error_pct.is_finite(), judged, r.within_goal) {
                    (false, _, _) => Cell::missing("-"),
                    (true, _, None) => {
                        let why = r.no_interval.clone().unwrap_or_else(|| "no interval".into());
                        Cell::judged(Verdict::NotJudged, why)
                    }
                    (true, false, Some(_)) => {
                        Cell::judged(Verdict::NotJudged, "not judged: disturbed")
                    }
                    (true, true, Some(GoalVerdict::Met)) => Cell::judged(Verdict::Met, "within"),
                    (true, true, Some(GoalVerdict::Missed)) => {
                        Cell::judged(Verdict::Missed, "outside")
                    }
                    (true, true, Some(GoalVerdict::Inconclusive)) => {
                        Cell::judged(Verdict::Inconclusive, "inconclusive")
                    }
                };
                let bound = |i: Option<Interval>, hi: bool, places| match i {
                    Some(i) => Cell::num(if hi { i.hi } else { i.lo }, places),
                    None => Cell::missing("-"),
                };
                t.row(vec![
                    Cell::text(entry(r.variant, r.insert)),
                    Cell::text(r.lock.name()),
                    Cell::num(r.outside_ns as f64, 0),
                    Cell::num(r.threads as f64, 0),
                    m(r.measured.median),
                    bound(r.measured_interval, false, 0),
                    bound(r.measured_interval, true, 0),
                    Cell::num(r.predicted, 0),
                    Cell::num(r.error_pct, 1),
                    bound(r.error_interval_pct, false, 1),
                    bound(r.error_interval_pct, true, 1),
                    within,
                    Cell::num(r.other_cpus_max, 2),
                ]);
            }
            t.note(match v.goal_verdict() {
                Ok(verdict) => format!(
                    "goal (within {:.0}% everywhere on the 95% intervals over rounds, same \
                     ordering): {}",
                    v.goal_pct,
                    match verdict {
                        GoalVerdict::Met => "met",
                        GoalVerdict::Missed => "missed",
                        GoalVerdict::Inconclusive => "inconclusive",
                    }
                ),
                Err(why) => format!("goal not judged: {why}"),
            });
            t.note(format!("median |error| rests on {}", v.error_basis));
            tables.push(t);
        }
        tables
    }

    fn charts(&self) -> Vec<super::contract::Chart> {
        let drawn = if self.validation.is_some() { super::charts::predict_validation_svg(self) } else { Err("the chart draws the validation: --validate".into()) };
        vec![super::contract::Chart::new("measured against predicted", drawn).beside(VALIDATION)]
    }

    fn outcome(&self) -> super::contract::Outcome {
        let mut outcome = super::contract::Outcome { interrupted: self.interrupted, ..Default::default() };
        if let Some(v) = &self.validation {
            if let Err(why) = v.goal_verdict() {
                if why.starts_with("disturbed") {
                    outcome.disturbed.push(format!("the validation: {why}"));
                }
            }
            let failed = v.failed_runs();
            if failed > 0 {
                outcome.failed_runs.push(format!("{failed} validation run(s) failed"));
            }
        }
        outcome
    }
}

/// The validation table's title (its chart goes beside it).
const VALIDATION: &str = "Validation: measured beside predicted";
