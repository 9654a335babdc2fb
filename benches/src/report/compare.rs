//! `schedlab compare`'s report: its tables (the settings, the throughput beside sched-lock's,
//! each job's share, the run's noise floor, the seeds' ratios beside the measured ones, the
//! baseline, the statistics' cost, the CPUs, the lock statistics), its charts and its outcome.
//! The terminal text is drawn from the same tables as the page and the JSON, so a figure reads
//! the same in all three (`contract::renderings_agree`).

use super::contract::{
    text_of_outcome, text_of_tables, Failure, Judge, View, Warning, WarningKind,
};
use super::table::Table;
use crate::driver::workload::{FAIR_LOCK_ADVICE, OTHERS_DISTURB_CPUS};
use crate::experiment::compare::*;
use schedlab_core::LockKind;

/// Warnings on runs re-run or kept because other processes used the CPUs, and on the fair lock
/// run with more jobs than CPUs or beside other load; none when every run was clean at once.
pub fn interference_warnings(report: &CompareReport) -> Vec<Warning> {
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
    let limit = report.config.noise.max_other_cpus;
    let mut out = Vec::new();
    if rerun > 0 {
        out.push(Warning::run(
            WarningKind::DisturbedByOtherLoad,
            format!(
                "{rerun} run(s) were re-run because other processes used more than {limit} \
                CPUs during them"
            ),
        ));
    }
    if kept > 0 {
        let rows: Vec<String> = report
            .rows()
            .filter(|r| r.noise.kept_noisy > 0)
            .map(|r| format!("{}/{} ({})", r.variant, r.lock.name(), r.noise.kept_noisy))
            .collect();
        out.push(Warning::rows(
            WarningKind::DisturbedByOtherLoad,
            rows,
            format!(
                "{kept} run(s) were kept although other processes used the CPUs (retries \
                exhausted). With {threads} jobs on {cpus} CPUs their lock holders were \
                preempted; those numbers measure that, not the variants."
            ),
        ));
    }
    if fair_disturbed {
        out.push(Warning::rows(
            WarningKind::Collapse,
            vec![LockKind::FairSpin.name().to_string()],
            format!(
                "{threads} jobs on {cpus} CPUs, other processes using up to \
                {fair_others:.1} CPUs during the runs: {FAIR_LOCK_ADVICE}."
            ),
        ));
    }
    out
}

/// The report's tables: with `brief`, the main ones only (the lock statistics' detail left out).
fn tables_of(report: &CompareReport, brief: bool, judge: Judge) -> Vec<Table> {
    use compare_tables as t;
    let mut tables = vec![
        t::settings(report),
        t::main(report),
        t::per_job(report),
        t::noise_floor(report, judge),
        t::seeds(report),
        t::ratios(report, judge),
    ];
    if report.baseline.is_some() {
        tables.push(t::baseline(report, judge));
    }
    if report.builds.is_some() {
        tables.push(t::builds(report, judge));
    }
    tables.push(t::cost(report, judge));
    tables.push(t::cpus(report));
    if !report.failures.is_empty() {
        tables.push(t::failures(report));
    }
    let sets: Vec<super::locks::LockSet> = report
        .results
        .iter()
        .filter(|r| !r.locks.is_empty())
        .map(|r| super::locks::LockSet {
            key: vec![super::table::Cell::text(r.variant), super::table::Cell::text(r.lock.name())],
            label: format!("{} / {}", r.variant, r.lock.name()),
            locks: &r.locks,
            stats_section: r.stats_section.as_ref(),
        })
        .collect();
    if !sets.is_empty() {
        let locks = super::locks::lock_tables(&[("variant", ""), ("lock", "")], &sets);
        tables.push(locks.summary);
        if !brief {
            tables.extend(locks.detail);
        }
    }
    tables
}

/// The report contract (`report::contract`): `schedlab compare`'s tables as data (the terminal
/// text is drawn from them), its charts, its outcome.
impl super::contract::Report for CompareReport {
    const COMMAND: &'static str = "compare";
    const SCHEMA_VERSION: u32 = crate::experiment::compare::SCHEMA_VERSION;
    const VERDICT_FIELDS: &'static [&'static str] =
        &["meets_goal", "seed_range_overlap", "lockstat_overhead_verdict", "verdict"];

    fn provenance(&self) -> crate::files::provenance::Provenance {
        self.provenance.clone()
    }

    fn text(&self, view: View) -> String {
        let tables = text_of_tables(&tables_of(self, view.brief, self.judge(view)));
        format!("{}\n\n{tables}\n{}", self.provenance.head(), text_of_outcome(&self.outcome()))
    }

    fn tables(&self, judge: Judge) -> Vec<Table> {
        tables_of(self, false, judge)
    }

    fn charts(&self) -> Vec<super::contract::Chart> {
        use super::charts::{compare_kiops_svg, compare_lock_time_svg};
        use super::contract::Chart;
        vec![
            Chart::new("KIOPS per variant", compare_kiops_svg(self)).beside(compare_tables::MAIN),
            Chart::new("the scheduler lock's time per request", compare_lock_time_svg(self))
                .beside(compare_tables::MAIN),
        ]
    }

    fn svg_chart(&self) -> Option<super::contract::Chart> {
        Some(super::contract::Chart::new("schedlab compare", super::charts::compare_svg(self)))
    }

    fn outcome(&self) -> super::contract::Outcome {
        let disturbed = self
            .rows()
            .filter_map(|r| {
                let runs = &r.other_cpus_runs;
                let noisy = runs.iter().filter(|o| o.is_some_and(|o| o > OTHERS_DISTURB_CPUS));
                let noisy = noisy.count();
                (noisy > 0).then(|| {
                    format!(
                        "{} / {}: {noisy} of {} runs shared the CPUs with other processes (above \
                            {OTHERS_DISTURB_CPUS} CPUs)",
                        r.variant,
                        r.lock.name(),
                        runs.len()
                    )
                })
            })
            .collect();
        let inconsistent: Vec<String> = self
            .rows()
            .filter(|r| r.consistent == Some(false))
            .map(|r| format!("{}/{}", r.variant, r.lock.name()))
            .collect();
        let failed_checks = if inconsistent.is_empty() {
            vec![]
        } else {
            vec![format!(
                "INCONSISTENT: {} failed the end-of-run checks (see `schedlab run \
                --variant V` for details)",
                inconsistent.join(", ")
            )]
        };
        super::contract::Outcome {
            interrupted: self.interrupted,
            warnings: self.warnings(),
            disturbed,
            failed_checks,
            // Said as each run failed (`experiment::compare`).
            failed_runs: self.failures.iter().map(told_failure).collect(),
            failed_outputs: vec![],
        }
    }
}

/// A failed run as the outcome names it (said as it happened, so only the JSON shows it).
fn told_failure(f: &RunFailure) -> Failure {
    let run = if f.instrumented { "instrumented" } else { "plain" };
    let (round, lock) = (f.round + 1, f.lock.name());
    Failure::told(format!("round {round}, {} {run} on {lock}: {}", f.variant, f.error))
}

impl CompareReport {
    /// The comparison's warnings, typed: the noise floors that exclude 1 (per lock), other
    /// processes and the fair lock, the precision not reached, the regressions, the CPUs moved.
    pub fn warnings(&self) -> Vec<Warning> {
        let mut out: Vec<Warning> = self
            .noise_floor
            .iter()
            .filter_map(|f| {
                let rows = vec![f.lock.name().to_string()];
                f.unreliable.as_ref().map(|u| Warning::rows(WarningKind::Unreliable, rows, u))
            })
            .collect();
        out.extend(interference_warnings(self));
        let precision = self.precision_warning();
        out.extend(precision.map(|p| Warning::run(WarningKind::PrecisionNotReached, p)));
        if let Some(b) = &self.baseline {
            let regressed =
                b.changes.iter().filter(|c| c.verdict == Some(ChangeVerdict::Regressed));
            out.extend(regressed.map(|c| {
                let row = vec![format!("{} ({})", c.ratio, c.lock.name())];
                let change = 100.0 * c.change;
                let message = format!("regressed against the baseline {}: {change:+.1} %", b.file);
                Warning::rows(WarningKind::Regression, row, message)
            }));
        }
        if let Some(b) = &self.builds {
            let regressed =
                b.changes.iter().filter(|c| c.verdict == Some(ChangeVerdict::Regressed));
            out.extend(regressed.map(|c| {
                let row = vec![format!("{} ({})", c.ratio, c.lock.name())];
                let change = 100.0 * c.change.unwrap_or(f64::NAN);
                let message = format!(
                    "regressed against the baseline build {}: {change:+.1} %",
                    b.baseline_exe
                );
                Warning::rows(WarningKind::Regression, row, message)
            }));
        }
        let moved = self.placement.note();
        out.extend(moved.map(|m| Warning::run(WarningKind::PlacementMoved, m)));
        out
    }

    /// "time limit reached before the precision ...", when a comparison that ran until its
    /// ratios were precise stopped short of it (a signal's stop is said as such already).
    pub fn precision_warning(&self) -> Option<String> {
        let p = self.precision.as_ref()?;
        matches!(p.stopped, StopReason::TimeLimitReached | StopReason::RoundLimitReached)
            .then(|| p.line())
    }

    /// One line per ratio that regressed against the baseline (a saved run or an old build).
    pub fn regressions(&self) -> Vec<String> {
        let builds = self.builds.as_ref().map(BuildComparison::regressions).unwrap_or_default();
        let Some(b) = &self.baseline else { return builds };
        b.changes
            .iter()
            .filter(|c| c.verdict == Some(ChangeVerdict::Regressed))
            .map(|c| {
                format!(
                    "{} ({}) regressed against the baseline {}: {:+.1} %",
                    c.ratio,
                    c.lock.name(),
                    b.file,
                    100.0 * c.change
                )
            })
            .collect()
    }
}

/// `schedlab compare`'s tables as data.
mod compare_tables {
    use super::*;
    use crate::report::table::{Cell, Verdict};

    pub const MAIN: &str = "Variants: throughput";

    /// An interval's two bounds, or "-" twice (why there is none: `why`, said once in a note).
    fn interval_cells(i: Option<Interval>, digits: usize, scale: f64) -> [Cell; 2] {
        match i {
            Some(i) => [Cell::num(scale * i.lo, digits), Cell::num(scale * i.hi, digits)],
            None => [Cell::missing("-"), Cell::missing("-")],
        }
    }

    /// Notes each distinct reason once: "`what`: `why`".
    fn note_once(t: &mut Table, what: &str, why: Option<&str>) {
        if let Some(why) = why {
            let note = format!("{what}: {why}");
            if !t.notes.contains(&note) {
                t.note(note);
            }
        }
    }

    fn secs(d: std::time::Duration) -> Cell {
        Cell::text(format!("{} s", d.as_secs_f64()))
    }

    pub fn settings(report: &CompareReport) -> Table {
        let c = &report.config;
        let w = &c.workload;
        let mut t = Table::new("Settings", &[("setting", ""), ("value", "")]);
        let measure = match c.measure {
            Measure::Both => format!(
                "plain runs, then instrumented runs of {} s",
                c.lockstat_duration.as_secs_f64()
            ),
            Measure::Lockstat => format!(
                "lock statistics on and off in {} ms windows of the same run",
                c.lockstat_window.as_millis()
            ),
            Measure::Plain => "plain runs only".to_string(),
        };
        let names = |v: &[&str]| v.join(", ");
        // A setting as given (left-aligned beside the words of the others; the JSON's `config`).
        let n = |v: f64| Cell::text(v.to_string());
        let rows = [
            ("jobs", n(w.threads as f64)),
            ("jobs pinned to CPUs", Cell::text(if w.pin_cpus { "yes" } else { "no" })),
            ("rounds completed", n(report.rounds_completed as f64)),
            ("variants", Cell::text(names(&c.variants))),
            (
                "A/A copy",
                Cell::text(if report.noise_floor.is_empty() {
                    "none"
                } else {
                    "sched-lock's, in every round"
                }),
            ),
            (
                "lock kinds",
                Cell::text(names(&c.locks.iter().map(|l| l.name()).collect::<Vec<_>>())),
            ),
            ("measured", Cell::text(measure)),
            ("measured window of a run", secs(w.duration)),
            ("ramp before it", secs(w.ramp)),
            ("groups", n(w.groups as f64)),
            ("group churn (per s)", n(w.churn_per_sec)),
            ("I/O", Cell::text(format!("{}, {} B blocks", w.rw.name(), w.bs_sectors as u64 * 512))),
            ("iodepth", n(w.iodepth as f64)),
            ("time outside the scheduler (ns)", n(w.outside_ns as f64)),
            ("statistics slots", n(w.slots as f64)),
        ];
        for (name, value) in rows {
            t.row(vec![Cell::text(name), value]);
        }
        if let Some(p) = &report.precision {
            t.note(format!("rounds: {}", p.line()));
        }
        t
    }

    pub fn main(report: &CompareReport) -> Table {
        let mut t = Table::new(
            MAIN,
            &[
                ("variant", ""),
                ("lock", ""),
                ("status", ""),
                ("median", "KIOPS"),
                ("min", "KIOPS"),
                ("max", "KIOPS"),
                ("÷ sched-lock", "×"),
                ("95% lo", "×"),
                ("95% hi", "×"),
                ("checks", ""),
            ],
        );
        for r in &report.results {
            let kiops = |f: fn(&Spread) -> f64| Cell::opt(r.kiops.as_ref().map(f), 1);
            let [lo, hi] = interval_cells(r.vs_sched_lock_interval, 2, 1.0);
            let checks = match r.consistent {
                Some(true) => Cell::check(true, "passed"),
                Some(false) => Cell::check(false, "FAILED"),
                None => Cell::missing("not run"),
            };
            t.row(vec![
                Cell::text(r.variant),
                Cell::text(r.lock.name()),
                Cell::text(r.status),
                kiops(|k| k.median),
                kiops(|k| k.min),
                kiops(|k| k.max),
                Cell::opt(r.vs_sched_lock.as_ref().map(|s| s.median), 2),
                lo,
                hi,
                checks,
            ]);
            note_once(&mut t, "95% lo, hi", r.vs_sched_lock_no_interval.as_deref());
        }
        t.note(
            "KIOPS: median (min, max) over rounds. ÷ sched-lock: KIOPS ÷ sched-lock's in the \
            same round, the median over rounds with its 95 % bootstrap interval (rounds resampled, \
            median of their ratios).",
        );
        t.note(
            "checks: requests and statistics conserved, every group and queue freed, in every \
            run that finished.",
        );
        t
    }

    pub fn per_job(report: &CompareReport) -> Table {
        let mut t = Table::new(
            "Variants: each job's throughput and the statistics' share of the scheduler lock",
            &[
                ("variant", ""),
                ("lock", ""),
                ("slowest", "KIOPS"),
                ("median", "KIOPS"),
                ("fastest", "KIOPS"),
                ("stats of sched hold", "%"),
                ("in counter sums", "%"),
            ],
        );
        for r in &report.results {
            let pt = &r.per_thread_kiops;
            let ran = r.runs > 0 && r.kiops.is_some();
            let job = |v: f64| if ran { Cell::num(v, 1) } else { Cell::missing("-") };
            let share = &r.stats_share_of_sched_hold;
            let pct = |v: Option<f64>| match &share.not_estimable {
                Some(_) => Cell::missing("not estimable"),
                None => v.map_or_else(|| Cell::missing("-"), |v| Cell::num(100.0 * v, 0)),
            };
            t.row(vec![
                Cell::text(r.variant),
                Cell::text(r.lock.name()),
                job(pt.min),
                job(pt.median),
                job(pt.max),
                pct(share.measured),
                pct(share.counter_sums),
            ]);
            if let Some(why) = &share.not_estimable {
                t.note(format!("{} / {}: {why}", r.variant, r.lock.name()));
            }
        }
        t.note(
            "Jobs: each run's slowest, median and fastest job, the median of each over runs (an \
            unfair lock shows as a slowest job far below the fastest). stats of sched hold: time \
            in statistics updates applied under the scheduler lock ÷ its hold time, and the part \
            of it in the locked counter sums (estimated from sampled holds).",
        );
        t
    }

    pub const NOISE_FLOOR: &str = "The run's noise floor (A/A pair)";

    /// A change's verdict as a cell (`--baseline`, saved or a build): improved and no change are
    /// what the comparison hoped for, regressed is not, inconclusive says so; `None`, no interval.
    fn change_verdict_cell(judge: Judge, verdict: Option<ChangeVerdict>) -> Cell {
        match verdict {
            Some(v) => judge.cell(
                match v {
                    ChangeVerdict::Improved | ChangeVerdict::NoChange => Verdict::Met,
                    ChangeVerdict::Regressed => Verdict::Missed,
                    ChangeVerdict::Inconclusive => Verdict::Inconclusive,
                },
                v.label(),
            ),
            None => Cell::missing("-"),
        }
    }

    pub fn noise_floor(report: &CompareReport, judge: Judge) -> Table {
        let mut t = Table::new(
            NOISE_FLOOR,
            &[
                ("lock", ""),
                ("reference", ""),
                ("A/A median", "×"),
                ("95% lo", "×"),
                ("95% hi", "×"),
                ("min", "×"),
                ("max", "×"),
                ("verdict", ""),
            ],
        );
        for f in &report.noise_floor {
            let mut row = vec![
                Cell::text(f.lock.name()),
                Cell::text(format!("{} ÷ {}", f.reference, f.copy.variant)),
            ];
            row.push(Cell::opt(f.ratio.as_ref().map(|r| r.median), 2));
            row.extend(interval_cells(f.interval, 2, 1.0));
            row.push(Cell::opt(f.ratio.as_ref().map(|r| r.min), 2));
            row.push(Cell::opt(f.ratio.as_ref().map(|r| r.max), 2));
            row.push(match (f.interval, &f.unreliable) {
                (Some(_), Some(_)) => judge.cell(Verdict::Missed, "excludes 1: unreliable"),
                (Some(_), None) => judge.cell(Verdict::Met, "covers 1"),
                (None, _) => Cell::missing("-"),
            });
            t.row(row);
            note_once(&mut t, "95% lo, hi", f.no_interval.as_deref());
        }
        if let Some(why) = &report.noise_floor_not_measured {
            t.note(format!("not measured: {why}"));
        }
        t.note(
            "The reference variant runs twice in each round, interleaved like the others; the \
            ratio of its two copies in the same round, with its 95 % bootstrap interval over \
            rounds, is the floor under every other ratio. An interval that excludes 1 marks the \
            run unreliable (the warning says what the machine did).",
        );
        t
    }

    pub fn seeds(report: &CompareReport) -> Table {
        let mut t = Table::new(
            "The seeds' ratios",
            &[
                ("ratio", ""),
                ("of", ""),
                ("seed", "×"),
                ("seed range", "×"),
                ("goal at least", "×"),
            ],
        );
        for r in &report.ratios {
            let s = &r.seed;
            t.row(vec![
                Cell::text(s.name),
                Cell::text(format!("{} / {}", s.numerator, s.denominator)),
                Cell::opt(s.seed, 2),
                s.seed_range.map_or_else(
                    || Cell::missing("-"),
                    |(lo, hi)| Cell::shown(lo, format!("{lo:.2}–{hi:.2}")),
                ),
                Cell::opt(s.goal_at_least, 2),
            ]);
            t.note(format!("{}: {}", s.name, s.source));
        }
        t.note(
            "The seeds: kernel-bfq.md §1 (8 threads, i7-4850HQ, null_blk); the goals: the issue's.",
        );
        t
    }

    pub fn ratios(report: &CompareReport, judge: Judge) -> Table {
        let mut t = Table::new(
            "The ratios measured here",
            &[
                ("ratio", ""),
                ("lock", ""),
                ("median", "×"),
                ("95% lo", "×"),
                ("95% hi", "×"),
                ("min", "×"),
                ("max", "×"),
                ("vs the seeds' range", ""),
                ("goal", ""),
            ],
        );
        for r in &report.ratios {
            for b in &r.by_lock {
                let not_judged = || Cell::not_judged("not judged");
                let range = match (&b.not_judged, b.seed_range_overlap) {
                    (Some(_), _) if r.seed.seed_range.is_some() => not_judged(),
                    (_, Some(o)) => match o {
                        RangeOverlap::Inside => judge.cell(Verdict::Met, "inside"),
                        RangeOverlap::Outside => judge.cell(Verdict::Missed, "outside"),
                        RangeOverlap::Overlapping => judge.cell(Verdict::Inconclusive, "overlaps"),
                    },
                    _ => Cell::missing("-"),
                };
                let goal = match (&b.not_judged, b.meets_goal) {
                    (Some(_), _) if r.seed.goal_at_least.is_some() => not_judged(),
                    (_, Some(g)) => match g {
                        GoalVerdict::Met => judge.cell(Verdict::Met, "met"),
                        GoalVerdict::Missed => judge.cell(Verdict::Missed, "missed"),
                        GoalVerdict::Inconclusive => {
                            judge.cell(Verdict::Inconclusive, "inconclusive")
                        }
                    },
                    _ => Cell::missing("-"),
                };
                let [lo, hi] = interval_cells(b.interval, 2, 1.0);
                t.row(vec![
                    Cell::text(r.seed.name),
                    Cell::text(b.lock.name()),
                    Cell::num(b.measured.median, 2),
                    lo,
                    hi,
                    Cell::num(b.measured.min, 2),
                    Cell::num(b.measured.max, 2),
                    range,
                    goal,
                ]);
                note_once(&mut t, "95% lo, hi", b.no_interval.as_deref());
                note_once(&mut t, "not judged", b.not_judged.as_deref());
            }
        }
        t.note(
            "Measured: the per-round ratio of the two variants' KIOPS, median (min, max) over \
            rounds, with its 95 % bootstrap interval over rounds (rounds resampled, median of \
            their ratios; fixed seed). Verdicts are taken on the interval: a goal is met only when \
            the whole interval clears it, missed when it lies wholly below, inconclusive when it \
            straddles; against the seeds' range the interval is inside, outside or overlapping. A \
            verdict is given only on runs that no other process disturbed, and only with 6 rounds \
            or more (fewer: [min, max] covers the median less than 95 % of the time).",
        );
        t
    }

    pub fn baseline(report: &CompareReport, judge: Judge) -> Table {
        let mut t = Table::new(
            "Against the baseline",
            &[
                ("ratio", ""),
                ("lock", ""),
                ("then", "×"),
                ("now", "×"),
                ("change", "%"),
                ("95% lo", "%"),
                ("95% hi", "%"),
                ("floor", "%"),
                ("verdict", ""),
            ],
        );
        let Some(b) = &report.baseline else { return t };
        for c in &b.changes {
            let verdict = match &b.not_judged {
                Some(_) => Cell::missing("not judged: placement"),
                None => change_verdict_cell(judge, c.verdict),
            };
            let [lo, hi] = interval_cells(c.interval, 1, 100.0);
            t.row(vec![
                Cell::text(c.ratio.clone()),
                Cell::text(c.lock.name()),
                Cell::num(c.baseline, 2),
                Cell::num(c.current, 2),
                Cell::num(100.0 * c.change, 1),
                lo,
                hi,
                match c.between_run_floor {
                    Some(f) => Cell::num(100.0 * f, 1),
                    None => Cell::missing("-"),
                },
                verdict,
            ]);
            note_once(&mut t, "95% lo, hi", c.no_interval.as_deref());
        }
        if let Some(why) = &b.not_judged {
            t.note(format!("not judged: placement: {why}"));
        }
        if !b.placement_left_out.is_empty() {
            let now = b.current_placement_ns.unwrap_or(f64::NAN);
            t.note(format!(
                "left out: baseline run(s) {} made in another placement than this run's {now:.0} \
                 ns transfer",
                b.placement_left_out.join(", ")
            ));
        }
        if let Some(why) = &b.placement_not_compared {
            t.note(format!("placement: not compared: {why}"));
        }
        if let Some(why) = &b.floor_not_measured {
            t.note(format!("floor: not measured: {why}"));
        }
        for n in &b.not_compared {
            t.note(format!("not compared: {n}"));
        }
        let files = std::iter::once(b.file.as_str()).chain(b.more_files.iter().map(String::as_str));
        t.note(format!(
            "Baseline {} (commit {}, {}, {} rounds). Change: this run's median of the per-round \
                ratio ÷ the baseline's − 1, with its 95 % bootstrap interval (each side's rounds \
                resampled apart: the two ran at different times). Floor: the largest \
                change between two of the baseline's runs. Improved or regressed only when the \
                whole interval lies beyond ±{:.1} %, or beyond ±the floor where \
                that is wider; no change otherwise.",
            files.collect::<Vec<_>>().join(", "),
            b.commit,
            b.date,
            b.rounds,
            100.0 * b.threshold
        ));
        t
    }

    /// `--baseline EXE`: each ratio's change between the builds, paired within rounds.
    pub fn builds(report: &CompareReport, judge: Judge) -> Table {
        let mut t = Table::new(
            "Against the baseline build",
            &[
                ("ratio", ""),
                ("lock", ""),
                ("baseline build", "×"),
                ("this build", "×"),
                ("rounds", ""),
                ("change", "%"),
                ("95% lo", "%"),
                ("95% hi", "%"),
                ("verdict", ""),
            ],
        );
        let Some(b) = &report.builds else { return t };
        let figure = |x: Option<f64>, scale: f64, digits: usize| match x {
            Some(x) => Cell::num(scale * x, digits),
            None => Cell::missing("-"),
        };
        for c in &b.changes {
            let verdict = change_verdict_cell(judge, c.verdict);
            let [lo, hi] = interval_cells(c.interval, 1, 100.0);
            t.row(vec![
                Cell::text(c.ratio.clone()),
                Cell::text(c.lock.name()),
                figure(c.baseline, 1.0, 2),
                figure(c.current, 1.0, 2),
                Cell::num(c.rounds as f64, 0),
                figure(c.change, 100.0, 1),
                lo,
                hi,
                verdict,
            ]);
            note_once(&mut t, "95% lo, hi", c.no_interval.as_deref());
        }
        t.note(format!(
            "Baseline build {} ({}) against this build {} ({}), interleaved in the same rounds: \
             {}; every run of either is a `run` child process with the same arguments. Change: \
             the median over rounds of this build's ratio ÷ the baseline build's in the same \
             round − 1, with its 95 % bootstrap interval over rounds. Improved or regressed when \
             the whole interval lies beyond ±{:.1} %, no change when it lies inside, \
             inconclusive when it reaches across (more rounds would tell).",
            b.baseline_exe,
            b.baseline_version,
            b.this_exe,
            b.this_version,
            b.order,
            100.0 * b.threshold
        ));
        t
    }

    pub fn cost(report: &CompareReport, judge: Judge) -> Table {
        let mut t = Table::new(
            "What the lock statistics cost",
            &[
                ("variant", ""),
                ("lock", ""),
                ("KIOPS", "KIOPS"),
                ("instrumented", "KIOPS"),
                ("cost", "%"),
                ("95% lo", "%"),
                ("95% hi", "%"),
                ("at most 5 %", ""),
            ],
        );
        for r in &report.results {
            let cost = &r.lockstat_cost;
            let [lo, hi] = interval_cells(cost.interval, 1, 1.0);
            t.row(vec![
                Cell::text(r.variant),
                Cell::text(r.lock.name()),
                Cell::opt(r.kiops.as_ref().map(|k| k.median), 1),
                Cell::opt(r.kiops_lockstat.as_ref().map(|k| k.median), 1),
                match (&cost.pct, &cost.not_estimable) {
                    (Some(c), _) => Cell::num(*c, 1),
                    (None, Some(_)) => Cell::missing("below 0"),
                    (None, None) => Cell::missing("-"),
                },
                lo,
                hi,
                match (cost.verdict, &cost.not_judged) {
                    (Some(v), _) => judge.cell(
                        match v {
                            CostVerdict::Met => Verdict::Met,
                            CostVerdict::Missed => Verdict::Missed,
                            CostVerdict::Inconclusive => Verdict::Inconclusive,
                        },
                        v.label(),
                    ),
                    (None, Some(_)) => Cell::not_judged("not judged"),
                    (None, None) => Cell::missing("-"),
                },
            ]);
            note_once(&mut t, "95% lo, hi", cost.no_interval.as_deref());
            note_once(&mut t, "below 0", cost.not_estimable.as_deref());
            note_once(&mut t, "not judged", cost.not_judged.as_deref());
        }
        t.note(match report.config.measure {
            Measure::Lockstat => {
                "Cost: on against off windows of the same runs (each window \
                against its two neighbours), the median over all windows, with its 95 % bootstrap \
                interval over rounds."
            }
            _ => {
                "Cost: instrumented runs against plain runs of the same rounds, the median over \
                rounds, with its 95 % bootstrap interval over rounds."
            }
        });
        t.note(
            "At most 5 % is met only when the whole interval is at or below 5 %, missed when it \
            lies wholly above, inconclusive when it straddles; a cost below 0 is the windows' \
            noise, not a cost, and is not judged.",
        );
        let judged = |verdict: CostVerdict| -> Vec<String> {
            let rows = report.results.iter().filter(|r| r.lockstat_cost.verdict == Some(verdict));
            rows.map(|r| format!("{}/{}", r.variant, r.lock.name())).collect()
        };
        let (missed, unsure) = (judged(CostVerdict::Missed), judged(CostVerdict::Inconclusive));
        if !missed.is_empty() {
            t.note(format!(
                "The lock statistics cost more than 5 % in {}: there the counters \
                describe a slower system than an unmeasured one; `--measure both` takes the KIOPS \
                from separate plain runs.",
                missed.join(", ")
            ));
        }
        if !unsure.is_empty() {
            t.note(format!(
                "The runs cannot tell whether the lock statistics cost at most 5 % in {}.",
                unsure.join(", ")
            ));
        }
        t
    }

    pub fn cpus(report: &CompareReport) -> Table {
        let mut t = Table::new(
            "The CPUs during the runs",
            &[
                ("variant", ""),
                ("lock", ""),
                ("CPU busy", "%"),
                ("others max", "CPUs"),
                ("steal max", "CPUs"),
                ("re-run", "runs"),
                ("kept noisy", "runs"),
                ("locks measured", "s"),
            ],
        );
        for r in &report.results {
            t.row(vec![
                Cell::text(r.variant),
                Cell::text(r.lock.name()),
                Cell::opt(r.cpu_busy_pct, 0),
                Cell::opt(r.other_cpus_max, 2),
                Cell::opt(r.steal_cpus_max, 2),
                Cell::num(r.noise.rerun as f64, 0),
                Cell::num(r.noise.kept_noisy as f64, 0),
                if r.locks.is_empty() { Cell::missing("-") } else { Cell::num(r.lockstat_s, 1) },
            ]);
        }
        t.note(format!(
            "CPU busy: this process's CPU time ÷ (window × jobs). others, steal: the most CPUs' \
                worth other processes and the hypervisor took during any run; a run above {} CPUs \
                is re-run, and kept noisy when its retries ran out.",
            report.config.noise.max_other_cpus
        ));
        t
    }

    pub fn failures(report: &CompareReport) -> Table {
        let mut t = Table::new(
            "Runs that FAILED (the comparison went on without them)",
            &[("round", ""), ("variant", ""), ("lock", ""), ("run", ""), ("error", "")],
        );
        for f in &report.failures {
            t.row(vec![
                Cell::num((f.round + 1) as f64, 0),
                Cell::text(f.variant),
                Cell::text(f.lock.name()),
                Cell::text(match (f.instrumented, f.build) {
                    (true, _) => "instrumented".to_string(),
                    (false, None) => "plain".to_string(),
                    (false, Some(build)) => format!("plain, {}", build.label()),
                }),
                Cell::text(f.error.clone()),
            ]);
        }
        t
    }
}
#[cfg(test)]
mod tests {
    use super::*;
    use crate::driver::workload::WorkloadConfig;
    use crate::experiment::observer::Silent;
    use crate::report::contract::{renderings_agree, text_within_contract, Report};
    use schedlab_core::sync::AtomicBool;
    use std::time::Duration;

    /// A comparison as a user makes one, small: three variants over three rounds with the lock
    /// statistics in exact mode (so the sampled estimate stands beside), the A/A pair, and a
    /// baseline (the first comparison's own JSON, as `--baseline` reads it).
    fn comparison() -> CompareReport {
        let mut cfg = CompareConfig {
            workload: WorkloadConfig {
                threads: 2,
                duration: Duration::from_millis(30),
                ramp: Duration::ZERO,
                ..WorkloadConfig::default()
            },
            variants: vec!["sched-lock", "queue-lock", "no-stats"],
            locks: vec![LockKind::ParkingLot],
            rounds: 3,
            measure: Measure::Lockstat,
            lockstat_mode: schedlab_core::lockstat::Mode::Exact,
            noise: NoisePolicy { max_other_cpus: 1e9, retries: 0 },
            precision: None,
            ..CompareConfig::defaults()
        };
        let first = run(&cfg, &AtomicBool::new(false), &mut Silent).unwrap();
        let json = first.json(None).unwrap();
        let baseline = Baseline::parse(
            std::path::Path::new("old.json"),
            &json,
            &cfg.variants,
            &cfg.locks,
            baseline::DEFAULT_THRESHOLD,
        );
        cfg.baseline = Some(baseline.expect("its own JSON is a baseline"));
        run(&cfg, &AtomicBool::new(false), &mut Silent).unwrap()
    }

    #[test]
    fn a_move_of_the_cpus_and_the_rounds_it_cost_are_said_in_the_box() {
        use crate::experiment::compare::placement::{
            Placement, PlacementReport, RunProbe, Tracker,
        };
        let mut report = comparison();
        let probe = |round, ns| RunProbe {
            round,
            lock: LockKind::ParkingLot,
            variant: "sched-lock",
            instrumented: true,
            before_ns: Some(ns),
            after_ns: Some(ns),
        };
        let runs = vec![probe(0, 34.0), probe(1, 160.0), probe(2, 35.0), probe(3, 33.0)];
        let tracker = Tracker { runs, ..Tracker::default() };
        report.placement = PlacementReport::new(tracker, Some(Placement::Near), vec![1]);
        let warnings = report.outcome().warnings;
        let moved = warnings.iter().find(|w| w.message.contains("moved its CPUs"));
        let said = &moved.expect("the move is said").message;
        assert!(said.contains("160 ns (far)") || said.contains("up to 160 ns"), "{said}");
        assert!(said.contains("round(s) 2 ran in the far placement and are left out"), "{said}");
        report.placement = PlacementReport::new(Tracker::default(), None, Vec::new());
        assert!(!report.outcome().warnings.iter().any(|w| w.message.contains("moved its CPUs")));
    }

    #[test]
    fn compare_says_each_figure_the_same_in_the_terminal_the_page_and_the_json() {
        let report = comparison();
        let text = text_within_contract(&report, 0);
        // What the hand-aligned text showed, now in tables the page has too (issue 44: the
        // page had lost the lock totals and the per-path shares).
        let page = report.page(View::default()).render();
        for title in [
            compare_tables::MAIN,
            compare_tables::NOISE_FLOOR,
            "The ratios measured here",
            "Against the baseline",
            "What the lock statistics cost",
            super::super::locks::SUMMARY,
            "Locks: holds",
            "Locks: where each path held and waited",
            "Locks: the sampled mode's estimate beside the exact figures",
        ] {
            assert!(
                page.contains(&crate::report::html::escape(title)),
                "{title} is not on the page"
            );
            assert!(text.contains(title), "{title} is not in the text:\n{text}");
        }
        for variant in ["sched-lock", "queue-lock", "no-stats"] {
            assert!(text.contains(variant), "{variant}");
        }
        assert!(
            text.contains("deferred stats") && text.contains("1.24"),
            "the seed's ratio: {text}"
        );
        let json: serde_json::Value = serde_json::from_str(&report.json(None).unwrap()).unwrap();
        let path = &json["results"][0]["locks"][0]["paths"][0];
        assert!(path["hold_share"].is_number(), "each path's share is a JSON figure: {path}");
        // --brief keeps the main tables and leaves the lock statistics' detail out.
        let brief = report.text(View { brief: true, ..View::default() });
        assert!(
            brief.contains(compare_tables::MAIN) && brief.contains(super::super::locks::SUMMARY),
            "{brief}"
        );
        assert!(!brief.contains("Locks: holds") && brief.len() < text.len(), "{brief}");
    }

    #[test]
    fn a_text_that_leaves_the_lock_detail_out_is_found() {
        // The drift the issue found (a page with figures the text lacks, or the other way
        // round) fails the check: here a text without the lock statistics' detail.
        struct BriefOnly(CompareReport);
        impl serde::Serialize for BriefOnly {
            fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                self.0.serialize(s)
            }
        }
        impl Report for BriefOnly {
            const COMMAND: &'static str = "compare";
            const SCHEMA_VERSION: u32 = SCHEMA_VERSION;
            fn provenance(&self) -> crate::files::provenance::Provenance {
                self.0.provenance()
            }
            fn text(&self, _view: View) -> String {
                self.0.text(View { brief: true, ..View::default() })
            }
            fn tables(&self, judge: crate::report::contract::Judge) -> Vec<Table> {
                self.0.tables(judge)
            }
            fn outcome(&self) -> crate::report::contract::Outcome {
                self.0.outcome()
            }
        }
        let e = renderings_agree(&BriefOnly(comparison())).unwrap_err().to_string();
        assert!(e.contains("not in the terminal text"), "{e}");
    }

    #[test]
    fn compare_judges_nothing_on_disturbed_runs_and_says_each_warning_once() {
        use crate::report::contract::judged_only_when_undisturbed;
        let disturbed = View { disturbed: true, ..View::default() };
        // Verdicts whatever this machine's load made of the runs: a goal met, no change.
        let mut report = comparison();
        for b in report.ratios.iter_mut().flat_map(|r| r.by_lock.iter_mut()) {
            (b.not_judged, b.meets_goal) = (None, Some(GoalVerdict::Met));
        }
        let changes = report.baseline.iter_mut().flat_map(|b| b.changes.iter_mut());
        changes.for_each(|c| c.verdict = Some(ChangeVerdict::NoChange));
        let judged = judged_only_when_undisturbed(&report, disturbed).unwrap();
        assert!(judged > 0, "the fixture has verdicts to take away");
    }
}
