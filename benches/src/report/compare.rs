//! The text of `schedlab compare`'s report: the main table, the statistics' cost, the ratios
//! beside the seeds', the lock tables, and the warning when other processes disturbed fair locks.

use crate::driver::workload::{FAIR_LOCK_ADVICE, OTHERS_DISTURB_CPUS};
use crate::experiment::compare::*;
use schedlab_core::lockstat::LockSummary;
use schedlab_core::LockKind;
use std::fmt::Write as _;

/// A duration in ns, short: "85 ns", "1.2 µs", "3.40 ms", "1.25 s".
pub fn fmt_ns(ns: f64) -> String {
    if !ns.is_finite() {
        return "-".into();
    }
    if ns < 1e3 {
        format!("{ns:.0} ns")
    } else if ns < 1e6 {
        format!("{:.1} µs", ns / 1e3)
    } else if ns < 1e9 {
        format!("{:.2} ms", ns / 1e6)
    } else {
        format!("{:.2} s", ns / 1e9)
    }
}

fn lock_cell(l: Option<&LockSummary>) -> String {
    match l {
        Some(l) if l.acquisitions > 0 => format!(
            "{:>5.1}% {:>8}/{:<8} {:>8}",
            l.contention_pct,
            fmt_ns(l.wait_ns.avg),
            fmt_ns(l.wait_ns.p99 as f64),
            fmt_ns(l.hold_ns.avg)
        ),
        _ => format!("{:>5} {:>8} {:<8} {:>8}", "-", "", "", "-"),
    }
}

/// A ratio with its interval: "1.03 [0.97-1.09]", or the ratio alone when it has none.
pub fn ratio_with_interval(median: f64, interval: Option<Interval>) -> String {
    match interval {
        Some(i) => format!("{median:.2} [{:.2}-{:.2}]", i.lo, i.hi),
        None => format!("{median:.2}"),
    }
}

/// The noise floor's lines: "noise floor: A/A 1.01 [0.97-1.05] ..." per lock kind, then the
/// warning of each floor whose interval excludes 1; or why none was measured.
pub fn noise_floor_text(report: &CompareReport) -> String {
    let mut out = String::new();
    if let Some(why) = &report.noise_floor_not_measured {
        let _ = writeln!(out, "noise floor: not measured ({why})");
        return out;
    }
    for f in &report.noise_floor {
        let lock = if report.config.locks.len() > 1 { format!(" ({})", f.lock.name()) } else { String::new() };
        let figure = match (&f.ratio, f.interval) {
            (Some(r), Some(i)) => format!("{} over {} rounds", ratio_with_interval(r.median, Some(i)), r.runs.len()),
            (Some(r), None) => format!("{:.2} ({})", r.median, f.no_interval.as_deref().unwrap_or("no interval")),
            (None, _) => f.no_interval.clone().unwrap_or_else(|| "-".into()),
        };
        let verdict = match (f.interval, &f.unreliable) {
            (Some(_), Some(_)) => ": UNRELIABLE (below)",
            (Some(_), None) => ": covers 1",
            (None, _) => "",
        };
        let _ = writeln!(out, "noise floor{lock}: A/A {figure}{verdict}  ({} ÷ its second copy in the same rounds, 95 % bootstrap interval)", f.reference);
    }
    for u in report.unreliable() {
        let _ = writeln!(out, "{u}");
    }
    out
}

fn pct(v: Option<f64>) -> String {
    v.map_or("-".into(), |x| format!("{:.0}%", 100.0 * x))
}

/// The main table: one row per variant and lock kind.
pub fn main_table(report: &CompareReport) -> String {
    let mut out = String::new();
    let mut notes = Vec::new();
    let _ = writeln!(
        out,
        "{:<16} {:<11} {:>22} {:>18} {:>17} | {:<34} | {:<34} | {:>15}",
        "variant",
        "lock",
        "KIOPS median (min-max)",
        "x sched [95%]",
        "per-thread min/med/max",
        "sched lock: cont% wait avg/p99 hold",
        "queue lock: cont% wait avg/p99 hold",
        "stats/sched hold"
    );
    for r in &report.results {
        if let Some(why) = &r.stats_share_of_sched_hold.not_estimable {
            notes.push(format!("{} / {}: {why}", r.variant, r.lock.name()));
        }
        let kiops = r.kiops.as_ref().map_or_else(|| r.status.to_string(), |k| format!("{:.1} ({:.1}-{:.1})", k.median, k.min, k.max));
        let ratio = r.vs_sched_lock.as_ref().map_or("-".into(), |s| ratio_with_interval(s.median, r.vs_sched_lock_interval));
        let pt = &r.per_thread_kiops;
        let share = &r.stats_share_of_sched_hold;
        let _ = writeln!(
            out,
            "{:<16} {:<11} {:>22} {:>18} {:>17} | {:<34} | {:<34} | {:>15}",
            r.variant,
            r.lock.name(),
            kiops,
            ratio,
            if r.runs == 0 || r.kiops.is_none() { "-".to_string() } else { format!("{:.1}/{:.1}/{:.1}", pt.min, pt.median, pt.max) },
            lock_cell(r.lock_named("sched")),
            lock_cell(r.lock_named("queue")),
            match &share.not_estimable {
                Some(_) => "n/e (below)".to_string(),
                None => format!("{} ({} sums)", pct(share.measured), pct(share.counter_sums)),
            },
        );
    }
    for note in notes {
        let _ = writeln!(out, "  n/e: {note}");
    }
    if let Some(why) = report.results.iter().find_map(|r| r.vs_sched_lock_no_interval.as_ref()) {
        let _ = writeln!(out, "  x sched: {why}");
    }
    out
}

/// The cost's verdict as the text table prints it: "met", "missed", "inconclusive", "not
/// judged" (disturbed runs, or an interval below 0), or "-" without an interval.
fn cost_verdict_text(cost: &LockstatCost) -> &'static str {
    match (cost.verdict, &cost.not_judged) {
        (Some(CostVerdict::Met), _) => "met",
        (Some(CostVerdict::Missed), _) => "missed",
        (Some(CostVerdict::Inconclusive), _) => "inconclusive",
        (None, Some(_)) => "not judged",
        (None, None) => "-",
    }
}

/// Each ratio's change against the baseline, with its interval and verdict; empty without one.
pub fn baseline_text(report: &CompareReport) -> String {
    let mut out = String::new();
    let Some(b) = &report.baseline else { return out };
    let _ = writeln!(
        out,
        "Against the baseline {} (commit {}, {}, {} rounds): each ratio now ÷ then − 1, 95 % bootstrap interval (each side's rounds\n  resampled apart); improved or regressed only when the whole interval is beyond ±{:.1} %:\n",
        b.file, b.commit, b.date, b.rounds, 100.0 * b.threshold
    );
    let _ = writeln!(out, "{:<34} {:<11} {:>8} {:>8} {:>26} {:>10}", "ratio", "lock", "then", "now", "change [95%]", "verdict");
    for c in &b.changes {
        let change = match c.interval {
            Some(i) => format!("{:+.1} % [{:+.1}, {:+.1}]", 100.0 * c.change, 100.0 * i.lo, 100.0 * i.hi),
            None => format!("{:+.1} %", 100.0 * c.change),
        };
        let verdict = c.verdict.map_or_else(|| c.no_interval.clone().unwrap_or_else(|| "-".into()), |v| v.label().to_string());
        let _ = writeln!(out, "{:<34} {:<11} {:>8.2} {:>8.2} {:>26} {:>10}", c.ratio, c.lock.name(), c.baseline, c.current, change, verdict);
    }
    for n in &b.not_compared {
        let _ = writeln!(out, "  not compared: {n}");
    }
    out
}

/// The instrumentation's cost and the CPU accounting, variant by variant.
pub fn overhead_table(report: &CompareReport) -> String {
    let mut out = String::new();
    let opt = |v: Option<f64>, digits: usize| v.map_or("-".into(), |x| format!("{x:.digits$}"));
    let _ = writeln!(
        out,
        "{:<16} {:<11} {:>12} {:>16} {:>22} {:>18} {:>10} {:>13} {:>10} {:>12}",
        "variant", "lock", "KIOPS", "lockstat KIOPS", "cost [95%]", "at most 5 %", "CPU busy", "others (CPUs)", "steal", "rerun/noisy"
    );
    for r in &report.results {
        let _ = writeln!(
            out,
            "{:<16} {:<11} {:>12} {:>16} {:>22} {:>18} {:>10} {:>13} {:>10} {:>12}",
            r.variant,
            r.lock.name(),
            r.kiops.as_ref().map_or("-".into(), |k| format!("{:.1}", k.median)),
            r.kiops_lockstat.as_ref().map_or("-".into(), |l| format!("{:.1}", l.median)),
            r.lockstat_cost.text(),
            cost_verdict_text(&r.lockstat_cost),
            r.cpu_busy_pct.map_or("-".into(), |c| format!("{c:.0}%")),
            opt(r.other_cpus_max, 2),
            opt(r.steal_cpus_max, 2),
            format!("{}/{}", r.noise.rerun, r.noise.kept_noisy),
        );
    }
    out
}

/// A line on runs re-run because of other processes, and a warning on runs kept although other
/// processes competed for the CPUs; `None` when every run was clean at the first try.
pub fn interference_warning(report: &CompareReport) -> Option<String> {
    let rerun: u32 = report.rows().map(|r| r.noise.rerun).sum();
    let kept: u32 = report.rows().map(|r| r.noise.kept_noisy).sum();
    let threads = report.config.workload.threads;
    let cpus = report.provenance.cpus;
    let fair_others = report
        .results
        .iter()
        .filter(|r| r.lock == LockKind::FairSpin)
        .filter_map(|r| r.other_cpus_max)
        .fold(0.0, f64::max);
    let fair = report.config.locks.contains(&LockKind::FairSpin);
    let fair_disturbed = fair && (fair_others > OTHERS_DISTURB_CPUS || threads > cpus);
    if rerun == 0 && kept == 0 && !fair_disturbed {
        return None;
    }
    let limit = report.config.noise.max_other_cpus;
    let mut text = String::new();
    if rerun > 0 || kept > 0 {
        text = format!("{rerun} run(s) were re-run because other processes used more than {limit} CPUs during them.");
    }
    if kept > 0 {
        let worst: Vec<String> = report
            .rows()
            .filter(|r| r.noise.kept_noisy > 0)
            .map(|r| format!("{}/{} ({})", r.variant, r.lock.name(), r.noise.kept_noisy))
            .collect();
        text.push_str(&format!(
            "\nWARNING: {kept} run(s) were kept although other processes used the CPUs (retries exhausted): {}. With {threads} jobs on {cpus} CPUs their lock holders were preempted; those numbers measure that, not the variants.",
            worst.join(", "),
        ));
    }
    if fair_disturbed {
        if !text.is_empty() {
            text.push('\n');
        }
        text.push_str(&format!(
            "WARNING (fair-spin): {threads} jobs on {cpus} CPUs, other processes using up to {fair_others:.1} CPUs during the runs: {}.",
            FAIR_LOCK_ADVICE
        ));
    }
    Some(text)
}

/// A lockstat-like table of some locks (one row per lock, then where each path waited and held,
/// and what is exact and what estimated). Estimated figures are marked `~`.
pub fn lockstat_table(locks: &[LockSummary]) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "  {:<10} {:>10} {:>9} {:>6} {:>9} | {:>9} {:>8} {:>8} {:>8} | {:>10} {:>9} {:>9} {:>9} {:>9} | {:>7}",
        "lock",
        "acq",
        "cont",
        "cont%",
        "owner-chg",
        "wait tot",
        "avg",
        "p99",
        "max",
        "hold tot",
        "avg",
        "p50",
        "p99",
        "max",
        "occup"
    );
    for l in locks {
        // "~" marks a figure estimated from samples.
        let mark = |exact: bool, v: String| if exact { v } else { format!("~{v}") };
        let est = |v: String| mark(l.hold_exact, v);
        let est_wait = |v: String| mark(l.wait_exact || l.contentions == 0, v);
        let _ = writeln!(
            out,
            "  {:<10} {:>10} {:>9} {:>5.1}% {:>9} | {:>9} {:>8} {:>8} {:>8} | {:>10} {:>9} {:>9} {:>9} {:>9} | {:>7}",
            l.name,
            l.acquisitions,
            l.contentions,
            l.contention_pct,
            l.owner_changes,
            est_wait(fmt_ns(l.wait_ns.total as f64)),
            est_wait(fmt_ns(l.wait_ns.avg)),
            est_wait(fmt_ns(l.wait_ns.p99 as f64)),
            est_wait(fmt_ns(l.wait_ns.max as f64)),
            est(fmt_ns(l.hold_ns.total as f64)),
            est(fmt_ns(l.hold_ns.avg)),
            est(fmt_ns(l.hold_ns.p50 as f64)),
            est(fmt_ns(l.hold_ns.p99 as f64)),
            est(fmt_ns(l.hold_ns.max as f64)),
            l.hold_occupancy.map_or_else(|| "n/e".to_string(), |o| est(format!("{:.1}%", 100.0 * o))),
        );
        if let Some(why) = &l.hold_occupancy_not_estimable {
            let _ = writeln!(out, "  {:<10} occupancy (n/e): {why}", "");
        }
        let _ = writeln!(
            out,
            "  {:<10} hold: {}; wait: {}; acquisitions, contentions and owner changes: exact",
            "",
            l.hold_provenance(),
            l.wait_provenance()
        );
        // Exact mode: what the sampled mode would have estimated from the same run, beside the exact figures.
        let estimates = [("waits", &l.wait_sampled_estimate, l.wait_sampled_estimate_n, &l.wait_ns), ("holds", &l.hold_sampled_estimate, l.hold_sampled_estimate_n, &l.hold_ns)];
        for (what, estimate, n, exact) in estimates {
            let Some(e) = estimate else { continue };
            let rel = |a: f64, b: f64| if b > 0.0 { format!("{:+.1}%", 100.0 * (a / b - 1.0)) } else { "-".into() };
            let _ = writeln!(
                out,
                "  {:<10} the sampled mode's estimate from {n} of these {what}: avg {} ({}), p99 {} ({}), total {} ({})",
                "",
                fmt_ns(e.avg),
                rel(e.avg, exact.avg),
                fmt_ns(e.p99 as f64),
                rel(e.p99 as f64, exact.p99 as f64),
                fmt_ns(e.total as f64),
                rel(e.total as f64, exact.total as f64),
            );
        }
        let total_hold: u64 = l.paths.iter().map(|p| p.hold_ns).sum::<u64>().max(1);
        let total_wait: u64 = l.paths.iter().map(|p| p.wait_ns).sum::<u64>().max(1);
        let by_path: Vec<String> = l
            .paths
            .iter()
            .map(|p| {
                format!(
                    "{} {:.0}% of holds, {:.0}% of wait",
                    p.path.name(),
                    100.0 * p.hold_ns as f64 / total_hold as f64,
                    100.0 * p.wait_ns as f64 / total_wait as f64
                )
            })
            .collect();
        if !by_path.is_empty() {
            let _ = writeln!(out, "  {:<10} by path: {}", "", by_path.join("; "));
        }
        for i in &l.inside {
            let hold = i.hold_not_estimable.clone().unwrap_or_else(|| est(fmt_ns(i.hold_ns as f64)));
            let _ = writeln!(out, "  {:<10} inside {}: hold {hold}, wait {}", "", i.outer, fmt_ns(i.wait_ns as f64));
        }
    }
    out
}

/// One lockstat-like table per variant and lock kind.
pub fn lockstat_tables(report: &CompareReport) -> String {
    let mut out = String::new();
    for r in report.results.iter().filter(|r| !r.locks.is_empty()) {
        let _ = writeln!(out, "{} / {} ({:.1} s measured):", r.variant, r.lock.name(), r.lockstat_s);
        out.push_str(&lockstat_table(&r.locks));
        if let Some(s) = &r.stats_section {
            let _ = writeln!(
                out,
                "  (not a lock) stats updates under the scheduler lock: {} updates, {} each on average, {} in all",
                s.acquisitions,
                fmt_ns(s.hold_ns.avg),
                fmt_ns(s.hold_ns.total as f64)
            );
        }
    }
    out
}

/// The seeds' ratios beside the measured ones.
pub fn ratio_table(report: &CompareReport) -> String {
    let mut out = String::new();
    let _ = write!(out, "{:<24} {:<24} {:>14}", "ratio", "", "seed (range)");
    for lock in &report.config.locks {
        let _ = write!(out, " {:>58}", format!("{} median [95%] (min-max)", lock.name()));
    }
    let _ = writeln!(out);
    for r in &report.ratios {
        let s = &r.seed;
        let seed = match (s.seed, s.seed_range) {
            (Some(v), Some((lo, hi))) => format!("{v:.2} ({lo:.2}-{hi:.2})"),
            _ => "-".into(),
        };
        let _ = write!(out, "{:<24} {:<24} {:>14}", s.name, format!("{} / {}", s.numerator, s.denominator), seed);
        for lock in &report.config.locks {
            let cell = r.by_lock.iter().find(|b| b.lock == *lock).map_or("-".into(), |b| {
                let mut marks = Vec::new();
                if b.not_judged.is_some() {
                    marks.push("not judged: disturbed");
                } else if let Some(why) = &b.no_interval {
                    marks.push(why.as_str());
                } else {
                    match b.seed_range_overlap {
                        Some(RangeOverlap::Inside) => marks.push("in range"),
                        Some(RangeOverlap::Overlapping) => marks.push("overlaps range"),
                        Some(RangeOverlap::Outside) => marks.push("out of range"),
                        None => {}
                    }
                    if let Some(g) = b.meets_goal {
                        marks.push(g.label());
                    }
                }
                let mark = if marks.is_empty() { String::new() } else { format!(" {}", marks.join(", ")) };
                format!("{} ({:.2}-{:.2}){mark}", ratio_with_interval(b.measured.median, b.interval), b.measured.min, b.measured.max)
            });
            let _ = write!(out, " {cell:>58}");
        }
        let _ = writeln!(out, "   [{}]", s.source);
    }
    out
}

/// The whole report, as `schedlab compare` prints it: the settings, the tables and the notes.
pub fn full_text(report: &CompareReport, brief: bool) -> String {
    let mut out = String::new();
    let c = &report.config;
    let w = &c.workload;
    let _ = writeln!(out, 
        "\nschedlab compare: {} threads{}, {} round(s) x {} variant(s){} x {}, {} s plain{} per run (+{} s ramp), {} groups, churn {}/s, {} bs {} B, iodepth {}, outside {} ns, {} stat slots",
        w.threads,
        if w.pin_cpus { " (pinned)" } else { "" },
        report.rounds_completed,
        c.variants.len(),
        if report.noise_floor.is_empty() { "" } else { " + sched-lock's A/A copy" },
        c.locks.iter().map(|l| l.name()).collect::<Vec<_>>().join(" + "),
        w.duration.as_secs_f64(),
        match c.measure {
            Measure::Both => format!(" + {} s instrumented", c.lockstat_duration.as_secs_f64()),
            Measure::Lockstat => " (lock statistics on and off in 100 ms windows of the same run)".into(),
            Measure::Plain => String::new(),
        },
        w.ramp.as_secs_f64(),
        w.groups,
        w.churn_per_sec,
        w.rw.name(),
        w.bs_sectors as u64 * 512,
        w.iodepth,
        w.outside_ns,
        w.slots
    );
    let _ = writeln!(out, "{}", report.provenance.one_line());
    if let Some(p) = &report.precision {
        let _ = writeln!(out, "rounds: {}", p.line());
    }
    if report.interrupted {
        let _ = writeln!(out, "(interrupted: {} complete round(s); the tables use every run that finished)", report.rounds_completed);
    }
    let _ = writeln!(out);
    out.push_str(&main_table(report));
    let _ = writeln!(out);
    out.push_str(&noise_floor_text(report));
    if let Some(warning) = interference_warning(report) {
        let _ = writeln!(out, "\n{warning}");
    }
    let _ = writeln!(out, 
        "\n  x sched: KIOPS / sched-lock's in the same round (median [95 % bootstrap interval over rounds: rounds resampled, median of\n  their ratios]). cont%: contended acquisitions; wait: per contended\n  acquisition (estimated from sampled waits); hold: per acquisition (estimated from sampled holds; lock counters {}). stats/sched hold:\n  time in statistics updates applied under the scheduler lock / its hold time (and the part of it in locked counter sums).",
        match c.measure {
            Measure::Lockstat => "from the same runs as the KIOPS",
            _ => "from the instrumented runs",
        }
    );
    let _ = writeln!(out, "\nThe seeds' ratios (kernel-bfq.md §1: 8 threads, i7-4850HQ, null_blk) beside the ones measured here:\n");
    out.push_str(&ratio_table(report));
    let _ = writeln!(
        out,
        "\n  Verdicts on the interval: goal met only when the whole interval clears it, missed when the whole interval is below it,\n  inconclusive when it straddles; the seeds' range: in range (interval inside it), overlaps range, out of range."
    );
    let against = baseline_text(report);
    if !against.is_empty() {
        let _ = write!(out, "\n{against}");
    }
    let _ = writeln!(out, 
        "\nWhat the lock statistics cost ({}) and CPU accounting of the measured windows:\n",
        match c.measure {
            Measure::Lockstat => "on against off windows of the same runs: each window against its two neighbours, median over all windows,\nwith its 95 % bootstrap interval over rounds; at most 5 % is met only when the whole interval is at or below 5 %",
            _ => "instrumented runs against plain runs of the same rounds, median over rounds, with its 95 % bootstrap interval over rounds",
        }
    );
    out.push_str(&overhead_table(report));
    let judged = |verdict: CostVerdict| -> Vec<String> {
        let rows = report.results.iter().filter(|r| r.lockstat_cost.verdict == Some(verdict));
        rows.map(|r| format!("{}/{} ({})", r.variant, r.lock.name(), r.lockstat_cost.text())).collect()
    };
    let (missed, unsure) = (judged(CostVerdict::Missed), judged(CostVerdict::Inconclusive));
    if !missed.is_empty() {
        let _ = writeln!(out,
            "\nNOTE: the lock statistics cost more than 5 % (the whole interval above it) in {}: there the counters describe a\nslower system than an unmeasured one; `--measure both` takes the KIOPS from separate plain runs.",
            missed.join(", ")
        );
    }
    if !unsure.is_empty() {
        let _ = writeln!(out, "\nThe runs cannot tell whether the lock statistics cost at most 5 % (the interval straddles it) in {}.", unsure.join(", "));
    }
    if !brief {
        let tables = lockstat_tables(report);
        if !tables.is_empty() {
            let _ = writeln!(out, "\nLock statistics (lockstat-like; wait over contended acquisitions; occup = hold total / wall time):\n");
            out.push_str(&tables);
        }
    }
    let bad: Vec<String> = report.rows().filter(|r| r.consistent == Some(false)).map(|r| format!("{}/{}", r.variant, r.lock.name())).collect();
    let not_run: Vec<String> =
        report.rows().filter(|r| r.status != "complete").map(|r| format!("{}/{} ({})", r.variant, r.lock.name(), r.status)).collect();
    for f in &report.failures {
        let _ = writeln!(out, 
            "\nFAILED: round {} {}/{}{}: {}",
            f.round + 1,
            f.variant,
            f.lock.name(),
            if f.instrumented { " (lockstat)" } else { "" },
            f.error
        );
    }
    if !not_run.is_empty() {
        let _ = writeln!(out, "\nNot every run finished: {} (their rows cover the runs that did).", not_run.join(", "));
    }
    if bad.is_empty() {
        let _ = writeln!(out, "\nEvery run that finished passed the end-of-run checks (requests and statistics conserved, every group and queue freed).");
    } else {
        let _ = writeln!(out, "\nINCONSISTENT: {} (see `schedlab run --variant V` for details)", bad.join(", "));
    }
    out
}

/// The report contract (`report::contract`): `schedlab compare`'s tables as data, its charts,
/// its outcome.
impl super::contract::Report for CompareReport {
    const COMMAND: &'static str = "compare";
    const SCHEMA_VERSION: u32 = crate::experiment::compare::SCHEMA_VERSION;

    fn provenance(&self) -> crate::files::provenance::Provenance {
        self.provenance.clone()
    }

    fn text(&self, view: super::contract::View) -> String {
        full_text(self, view.brief)
    }

    fn tables(&self) -> Vec<super::table::Table> {
        let mut tables = vec![compare_tables::main(self), compare_tables::noise_floor(self), compare_tables::ratios(self)];
        if self.baseline.is_some() {
            tables.push(compare_tables::baseline(self));
        }
        tables.push(compare_tables::overhead(self));
        if self.results.iter().any(|r| !r.locks.is_empty()) {
            tables.push(compare_tables::locks(self));
        }
        tables
    }

    fn charts(&self) -> Vec<super::contract::Chart> {
        use super::charts::{compare_kiops_svg, compare_lock_time_svg};
        use super::contract::Chart;
        vec![
            Chart::new("KIOPS per variant", compare_kiops_svg(self)).beside(compare_tables::MAIN),
            Chart::new("the scheduler lock's time per request", compare_lock_time_svg(self)).beside(compare_tables::MAIN),
        ]
    }

    fn svg_chart(&self) -> Option<super::contract::Chart> {
        Some(super::contract::Chart::new("schedlab compare", super::charts::compare_svg(self)))
    }

    fn outcome(&self) -> super::contract::Outcome {
        let disturbed = self
            .rows()
            .filter_map(|r| {
                let noisy = r.other_cpus_runs.iter().filter(|o| o.is_some_and(|o| o > OTHERS_DISTURB_CPUS)).count();
                (noisy > 0).then(|| format!("{} / {}: {noisy} of {} runs shared the CPUs with other processes (above {OTHERS_DISTURB_CPUS} CPUs)", r.variant, r.lock.name(), r.other_cpus_runs.len()))
            })
            .collect();
        super::contract::Outcome {
            interrupted: self.interrupted,
            warnings: self.unreliable().into_iter().chain(interference_warning(self)).chain(self.precision_warning()).chain(self.regressions()).collect(),
            disturbed,
            failed_checks: if self.all_consistent() { vec![] } else { vec!["a run failed its end-of-run checks (INCONSISTENT above)".into()] },
            failed_runs: if self.failures.is_empty() { vec![] } else { vec![String::new()] },
            failed_outputs: vec![],
        }
    }
}

impl CompareReport {
    /// "time limit reached before the precision ...", when a comparison that ran until its
    /// ratios were precise stopped short of it (a signal's stop is said as such already).
    pub fn precision_warning(&self) -> Option<String> {
        let p = self.precision.as_ref()?;
        matches!(p.stopped, StopReason::TimeLimitReached | StopReason::RoundLimitReached).then(|| p.line())
    }

    /// One line per ratio that regressed against the baseline.
    pub fn regressions(&self) -> Vec<String> {
        let Some(b) = &self.baseline else { return Vec::new() };
        b.changes
            .iter()
            .filter(|c| c.verdict == Some(ChangeVerdict::Regressed))
            .map(|c| format!("{} ({}) regressed against the baseline {}: {:+.1} %", c.ratio, c.lock.name(), b.file, 100.0 * c.change))
            .collect()
    }
}

/// `schedlab compare`'s tables as data.
mod compare_tables {
    use super::*;
    use crate::report::table::{Cell, Table, Verdict};

    pub const MAIN: &str = "Variants: throughput and the locks";

    fn spread_cell(s: Option<&crate::stats::Spread>, digits: usize) -> [Cell; 3] {
        match s {
            Some(s) => [Cell::num(s.median, digits), Cell::num(s.min, digits), Cell::num(s.max, digits)],
            None => [Cell::missing("-"), Cell::missing("-"), Cell::missing("-")],
        }
    }

    /// An interval's two bounds, or why there is none (twice).
    fn interval_cells(i: Option<Interval>, why: Option<&str>) -> [Cell; 2] {
        match i {
            Some(i) => [Cell::num(i.lo, 2), Cell::num(i.hi, 2)],
            None => {
                let why = why.unwrap_or("-");
                [Cell::missing(why), Cell::missing(why)]
            }
        }
    }

    pub const NOISE_FLOOR: &str = "The run's noise floor (A/A pair)";

    pub fn noise_floor(report: &CompareReport) -> Table {
        let mut t = Table::new(
            NOISE_FLOOR,
            &[("lock", ""), ("reference", ""), ("A/A median", "×"), ("95% low", "×"), ("95% high", "×"), ("min", "×"), ("max", "×"), ("verdict", "")],
        );
        for f in &report.noise_floor {
            let mut row = vec![Cell::text(f.lock.name()), Cell::text(format!("{} ÷ {}", f.reference, f.copy.variant))];
            row.push(Cell::opt(f.ratio.as_ref().map(|r| r.median), 2));
            row.extend(interval_cells(f.interval, f.no_interval.as_deref()));
            row.push(Cell::opt(f.ratio.as_ref().map(|r| r.min), 2));
            row.push(Cell::opt(f.ratio.as_ref().map(|r| r.max), 2));
            row.push(match (f.interval, &f.unreliable) {
                (Some(_), Some(_)) => Cell::judged(Verdict::Missed, "excludes 1: unreliable"),
                (Some(_), None) => Cell::judged(Verdict::Met, "covers 1"),
                (None, _) => Cell::missing(f.no_interval.clone().unwrap_or_else(|| "-".into())),
            });
            t.row(row);
            if let Some(u) = &f.unreliable {
                t.note(format!("{}: {u}", f.lock.name()));
            }
        }
        if let Some(why) = &report.noise_floor_not_measured {
            t.note(format!("not measured: {why}"));
        }
        t.note("The reference variant runs twice in each round, interleaved like the others; the ratio of its two copies in the same round, with its 95 % bootstrap interval over rounds, is the floor under every other ratio. An interval that excludes 1 marks the run unreliable.");
        t
    }

    fn lock_cells(l: Option<&LockSummary>) -> [Cell; 4] {
        match l {
            Some(l) if l.acquisitions > 0 => [
                Cell::num(l.contention_pct, 1),
                Cell::num(l.wait_ns.avg, 0),
                Cell::num(l.hold_ns.avg, 0),
                l.hold_occupancy.map_or_else(|| Cell::missing("n/e"), |o| Cell::num(100.0 * o, 1)),
            ],
            _ => [Cell::missing("-"), Cell::missing("-"), Cell::missing("-"), Cell::missing("-")],
        }
    }

    pub fn main(report: &CompareReport) -> Table {
        let mut t = Table::new(
            MAIN,
            &[
                ("variant", ""),
                ("lock", ""),
                ("status", ""),
                ("KIOPS median", "KIOPS"),
                ("min", "KIOPS"),
                ("max", "KIOPS"),
                ("÷ sched-lock", "×"),
                ("÷ sched-lock 95% low", "×"),
                ("÷ sched-lock 95% high", "×"),
                ("per-thread median", "KIOPS"),
                ("sched contended", "%"),
                ("sched wait avg", "ns"),
                ("sched hold avg", "ns"),
                ("sched occupancy", "%"),
                ("queue contended", "%"),
                ("queue wait avg", "ns"),
                ("queue hold avg", "ns"),
                ("queue occupancy", "%"),
                ("stats share of sched hold", "%"),
            ],
        );
        for r in &report.results {
            let mut row = vec![Cell::text(r.variant), Cell::text(r.lock.name()), Cell::text(r.status)];
            row.extend(spread_cell(r.kiops.as_ref(), 1));
            row.push(Cell::opt(r.vs_sched_lock.as_ref().map(|s| s.median), 2));
            row.extend(interval_cells(r.vs_sched_lock_interval, r.vs_sched_lock_no_interval.as_deref()));
            row.push(if r.runs == 0 { Cell::missing("-") } else { Cell::num(r.per_thread_kiops.median, 1) });
            row.extend(lock_cells(r.lock_named("sched")));
            row.extend(lock_cells(r.lock_named("queue")));
            let share = &r.stats_share_of_sched_hold;
            row.push(match (&share.not_estimable, share.measured) {
                (Some(_), _) => Cell::missing("not estimable"),
                (None, Some(m)) => Cell::num(100.0 * m, 0),
                (None, None) => Cell::missing("-"),
            });
            t.row(row);
            if let Some(why) = &share.not_estimable {
                t.note(format!("{} / {}: {why}", r.variant, r.lock.name()));
            }
            for l in r.locks.iter().filter(|l| l.name == "sched" || l.name == "queue") {
                if let Some(why) = &l.hold_occupancy_not_estimable {
                    t.note(format!("{} / {}: {} lock occupancy {why}", r.variant, r.lock.name(), l.name));
                }
            }
        }
        t.note("KIOPS: median (min, max) over rounds; ÷ sched-lock: the per-round ratio's median and its 95 % bootstrap interval over rounds; lock figures from the instrumented runs (hold figures estimated from sampled holds unless exact).");
        if let Some(p) = &report.precision {
            t.note(format!("Rounds: {}.", p.line()));
        }
        t
    }

    pub fn ratios(report: &CompareReport) -> Table {
        let mut t = Table::new(
            "Ratios beside the seeds'",
            &[
                ("ratio", ""),
                ("of", ""),
                ("seed", "×"),
                ("seed range", "×"),
                ("lock", ""),
                ("measured median", "×"),
                ("95% low", "×"),
                ("95% high", "×"),
                ("min", "×"),
                ("max", "×"),
                ("verdict", ""),
                ("source", ""),
            ],
        );
        for r in &report.ratios {
            let s = &r.seed;
            for b in &r.by_lock {
                let verdict = match (b.meets_goal, b.seed_range_overlap, &b.not_judged) {
                    (_, _, Some(why)) => Cell::judged(Verdict::NotJudged, format!("not judged: {why}")),
                    (Some(g), _, _) => Cell::judged(
                        match g {
                            GoalVerdict::Met => Verdict::Met,
                            GoalVerdict::Missed => Verdict::Missed,
                            GoalVerdict::Inconclusive => Verdict::Inconclusive,
                        },
                        g.label(),
                    ),
                    (None, Some(o), _) => Cell::judged(
                        match o {
                            RangeOverlap::Inside => Verdict::Met,
                            RangeOverlap::Outside => Verdict::Missed,
                            RangeOverlap::Overlapping => Verdict::Inconclusive,
                        },
                        o.label(),
                    ),
                    (None, None, None) => b.no_interval.as_ref().map_or_else(|| Cell::missing("-"), |why| Cell::missing(why.clone())),
                };
                t.row(vec![
                    Cell::text(s.name),
                    Cell::text(format!("{} / {}", s.numerator, s.denominator)),
                    Cell::opt(s.seed, 2),
                    s.seed_range.map_or_else(|| Cell::missing("-"), |(lo, hi)| Cell::shown(lo, format!("{lo:.2}–{hi:.2}"))),
                    Cell::text(b.lock.name()),
                    Cell::num(b.measured.median, 2),
                    interval_cells(b.interval, b.no_interval.as_deref())[0].clone(),
                    interval_cells(b.interval, b.no_interval.as_deref())[1].clone(),
                    Cell::num(b.measured.min, 2),
                    Cell::num(b.measured.max, 2),
                    verdict,
                    Cell::text(s.source),
                ]);
            }
        }
        t.note("Measured: the per-round ratio of the two variants' KIOPS, median (min, max) over rounds, with its 95 % bootstrap interval over rounds (rounds resampled, median of their ratios; fixed seed). Verdicts are taken on the interval: a goal is met only when the whole interval clears it, missed when it lies wholly below, inconclusive when it straddles; the seeds' range: inside, outside or overlapping. A verdict is given only on runs that no other process disturbed, and only with 3 rounds or more.");
        t
    }

    pub fn baseline(report: &CompareReport) -> Table {
        let mut t = Table::new(
            "Against the baseline",
            &[
                ("ratio", ""),
                ("lock", ""),
                ("baseline median", "×"),
                ("median now", "×"),
                ("change", "%"),
                ("95% low", "%"),
                ("95% high", "%"),
                ("verdict", ""),
            ],
        );
        let Some(b) = &report.baseline else { return t };
        for c in &b.changes {
            let bounds = match c.interval {
                Some(i) => [Cell::num(100.0 * i.lo, 1), Cell::num(100.0 * i.hi, 1)],
                None => {
                    let why = c.no_interval.clone().unwrap_or_else(|| "-".into());
                    [Cell::missing(why.clone()), Cell::missing(why)]
                }
            };
            let verdict = match c.verdict {
                Some(v) => Cell::judged(
                    match v {
                        ChangeVerdict::Improved | ChangeVerdict::NoChange => Verdict::Met,
                        ChangeVerdict::Regressed => Verdict::Missed,
                    },
                    v.label(),
                ),
                None => Cell::missing(c.no_interval.clone().unwrap_or_else(|| "-".into())),
            };
            let [lo, hi] = bounds;
            t.row(vec![
                Cell::text(c.ratio.clone()),
                Cell::text(c.lock.name()),
                Cell::num(c.baseline, 2),
                Cell::num(c.current, 2),
                Cell::num(100.0 * c.change, 1),
                lo,
                hi,
                verdict,
            ]);
        }
        for n in &b.not_compared {
            t.note(format!("not compared: {n}"));
        }
        t.note(format!(
            "Baseline {} (commit {}, {}, {} rounds). Change: this run's median of the per-round ratio ÷ the baseline's − 1, with its 95 % bootstrap interval (each side's rounds resampled apart: the two ran at different times). Improved or regressed only when the whole interval lies beyond ±{:.1} %; no change otherwise.",
            b.file, b.commit, b.date, b.rounds, 100.0 * b.threshold
        ));
        t
    }

    pub fn overhead(report: &CompareReport) -> Table {
        let mut t = Table::new(
            "The instrumentation's cost and the CPUs",
            &[
                ("variant", ""),
                ("lock", ""),
                ("KIOPS", "KIOPS"),
                ("instrumented KIOPS", "KIOPS"),
                ("lockstat cost", "%"),
                ("cost 95% low", "%"),
                ("cost 95% high", "%"),
                ("at most 5 %", ""),
                ("CPU busy", "%"),
                ("others max", "CPUs"),
                ("steal max", "CPUs"),
                ("re-run", "runs"),
                ("kept noisy", "runs"),
            ],
        );
        for r in &report.results {
            let cost = &r.lockstat_cost;
            let cost_bounds = match cost.interval {
                Some(i) => [Cell::num(i.lo, 1), Cell::num(i.hi, 1)],
                None => {
                    let why = cost.no_interval.clone().unwrap_or_else(|| "-".into());
                    [Cell::missing(why.clone()), Cell::missing(why)]
                }
            };
            if let Some(why) = &cost.not_estimable {
                t.note(format!("{} / {}: lockstat cost {why}", r.variant, r.lock.name()));
            }
            t.row(vec![
                Cell::text(r.variant),
                Cell::text(r.lock.name()),
                Cell::opt(r.kiops.as_ref().map(|k| k.median), 1),
                Cell::opt(r.kiops_lockstat.as_ref().map(|k| k.median), 1),
                match (&cost.pct, &cost.not_estimable) {
                    (Some(c), _) => Cell::num(*c, 1),
                    (None, Some(_)) => Cell::missing("not estimable (below 0)"),
                    (None, None) => Cell::missing("-"),
                },
                cost_bounds[0].clone(),
                cost_bounds[1].clone(),
                match (cost.verdict, &cost.not_judged) {
                    (Some(v), _) => Cell::judged(
                        match v {
                            CostVerdict::Met => Verdict::Met,
                            CostVerdict::Missed => Verdict::Missed,
                            CostVerdict::Inconclusive => Verdict::Inconclusive,
                        },
                        v.label(),
                    ),
                    (None, Some(why)) => Cell::judged(Verdict::NotJudged, format!("not judged: {why}")),
                    (None, None) => Cell::missing(cost.no_interval.clone().unwrap_or_else(|| "-".into())),
                },
                Cell::opt(r.cpu_busy_pct, 0),
                Cell::opt(r.other_cpus_max, 2),
                Cell::opt(r.steal_cpus_max, 2),
                Cell::num(r.noise.rerun as f64, 0),
                Cell::num(r.noise.kept_noisy as f64, 0),
            ]);
        }
        t.note("Lockstat cost: what switching the lock statistics on costs the throughput, paired within each round (on against off windows of one run, or an instrumented run against a plain one), median, with its 95 % bootstrap interval over rounds. At most 5 % is met only when the whole interval is at or below 5 %, missed when it lies wholly above, inconclusive when it straddles; a cost below 0 is the windows' noise, not a cost, and is not judged.");
        t
    }

    pub fn locks(report: &CompareReport) -> Table {
        let mut t = Table::new(
            "Lock statistics (lockstat-like, per variant)",
            &[
                ("variant", ""),
                ("lock kind", ""),
                ("class", ""),
                ("acquisitions", ""),
                ("contended", "%"),
                ("owner changes", ""),
                ("wait avg", "ns"),
                ("wait p99", "ns"),
                ("hold avg", "ns"),
                ("hold p99", "ns"),
                ("hold max", "ns"),
                ("occupancy", "%"),
                ("holds", ""),
            ],
        );
        for r in &report.results {
            for l in &r.locks {
                t.row(vec![
                    Cell::text(r.variant),
                    Cell::text(r.lock.name()),
                    Cell::text(l.name),
                    Cell::num(l.acquisitions as f64, 0),
                    Cell::num(l.contention_pct, 1),
                    Cell::num(l.owner_changes as f64, 0),
                    Cell::num(l.wait_ns.avg, 0),
                    Cell::num(l.wait_ns.p99 as f64, 0),
                    Cell::num(l.hold_ns.avg, 0),
                    Cell::num(l.hold_ns.p99 as f64, 0),
                    Cell::num(l.hold_ns.max as f64, 0),
                    l.hold_occupancy.map_or_else(|| Cell::missing("not estimable"), |o| Cell::num(100.0 * o, 1)),
                    Cell::text(if l.hold_exact { "exact" } else { "estimated" }),
                ]);
            }
        }
        t
    }
}
