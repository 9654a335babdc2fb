//! `schedlab kernel`'s report: the kernel, its tools and the settings; the kernel's rows
//! (throughput, CPU per I/O, contention on the scheduler's lock, the profile's shares), the
//! model's rows, the two side by side, the elevator's own cost, the lock sites, the other points
//! and the fidelity table, as tables; the terminal text is drawn from the same tables
//! ([`super::contract::text_of_tables`]).

use super::contract::{Failure, Judge, Scope, Warning, WarningKind};
use super::table::{Cell, Table, Verdict};
use crate::driver::workload::OTHERS_DISTURB_CPUS;
use crate::experiment::kernel::fidelity::{FidelityRow, Verdict as FigureVerdict};
use crate::experiment::kernel::rows::{ElevatorCost, KernelRow, ModelRow};
use crate::experiment::kernel::sites::SiteCalibration;
use crate::experiment::kernel::{KernelReport, KernelSched, ModelOutside};

/// A CPU per I/O of 0 is one that was not measured.
fn cpu_cell(median: f64) -> Cell {
    Cell::opt(Some(median).filter(|v| *v > 0.0), 2)
}

/// The kernel, its device and its tools: one row each, so a long device name fits.
fn environment_table(r: &KernelReport) -> Table {
    let env = &r.environment;
    let mut t = Table::new("The kernel and its tools", &[("what", ""), ("which", "")]);
    let rows = [
        ("kernel release", env.kernel_release.clone()),
        ("device", env.device.clone()),
        ("fio", env.fio.clone()),
        ("perf", env.perf.clone()),
        ("bpftrace", env.bpftrace.clone().unwrap_or_else(|| "no contention recording".into())),
        ("cgroups", env.cgroup.clone().unwrap_or_else(|| "none".into())),
    ];
    for (what, which) in rows {
        t.row(vec![Cell::text(what), Cell::text(which)]);
    }
    for f in r.failures.iter().chain(&r.output_failures) {
        t.note(format!("failed: {f}"));
    }
    t
}

/// The workload and the model's settings: one row each.
fn settings_table(r: &KernelReport) -> Table {
    let c = &r.config;
    let mut t = Table::new("The settings", &[("setting", ""), ("value", "")]);
    let outside = match c.model_outside {
        ModelOutside::Kernel => " (the kernel's none CPU per I/O)",
        ModelOutside::Fixed(_) => "",
    };
    let elevator = match c.model_elevator {
        ModelOutside::Kernel => " (measured from the profiles)",
        ModelOutside::Fixed(_) => " (given)",
    };
    let weights: Vec<String> = c.weights.iter().map(|w| w.to_string()).collect();
    let outside = format!("model outside work per request, ns{outside}");
    let elevator = format!("model elevator cost per request, ns{elevator}");
    let rows = [
        ("jobs", Cell::num(c.threads as f64, 0)),
        ("rw", Cell::text(c.rw.name())),
        ("bs (sectors of 512 B)", Cell::num(c.bs_sectors as f64, 0)),
        ("iodepth", Cell::num(c.iodepth as f64, 0)),
        ("ioengine", Cell::text(c.ioengine)),
        ("rounds", Cell::num(c.rounds as f64, 0)),
        ("duration of a round", Cell::text(format!("{:.2} s", c.duration.as_secs_f64()))),
        ("ramp", Cell::text(format!("{:.2} s", c.ramp.as_secs_f64()))),
        ("model lock", Cell::text(c.model_lock.to_string())),
        (outside.as_str(), Cell::num(r.model_outside_ns as f64, 0)),
        (elevator.as_str(), Cell::num(r.model_elevator_ns as f64, 0)),
        ("kernel profile", Cell::text(c.model_kernel.name())),
        ("model completions", Cell::text(c.model_completion.name())),
        ("model jobs beyond the CPUs", Cell::text("take turns, preempted between requests")),
        ("weights", Cell::text(weights.join(","))),
    ];
    for (setting, value) in rows {
        t.row(vec![Cell::text(setting), value]);
    }
    t.note(format!("bs: {} B a request", c.bs_sectors * 512));
    t.note(
        "model completions: inline (on the dispatching job) or context (a completion \
        context per CPU, run by the jobs at their interrupt points)",
    );
    t.note(
        "model jobs beyond the CPUs: more jobs than CPUs take turns on them, never \
        preempted holding the lock, as the kernel's tasks (driver/turns.rs)",
    );
    t
}

/// "no requests completed" in place of zeros that would read as a measurement.
fn nothing_completed() -> Cell {
    Cell::missing("no requests completed")
}

/// The kernel's rows: throughput and CPU, contention on the locks, the profile's shares. `json`:
/// where the report's JSON holds `rows` (`/kernel`), the paths of the figures a row may refuse.
fn kernel_tables(rows: &[KernelRow], json: &str) -> [Table; 3] {
    let columns = [
        ("scheduler", ""),
        ("KIOPS", "KIOPS"),
        ("min", "KIOPS"),
        ("max", "KIOPS"),
        ("CPU per I/O", "µs"),
    ];
    let mut speed = Table::new("The kernel (fio on a loop device)", &columns);
    let columns = [
        ("scheduler", ""),
        ("sched-lock contended", "per I/O"),
        ("wait avg", "ns"),
        ("wait max", "µs"),
        ("other contended", "per I/O"),
        ("recording cost", "%"),
    ];
    let mut locks = Table::new("The kernel's lock contention", &columns);
    // What recording the contention costs fio cannot be below 0 (two noisy runs' difference).
    locks.at_least_zero(&["recording cost"]);
    let columns = [
        ("scheduler", ""),
        ("samples", ""),
        ("bfq", "% of samples"),
        ("statistics", "% of samples"),
        ("statistics of the scheduler", "%"),
    ];
    let mut profile = Table::new("The kernel's profile", &columns);
    for (i, r) in rows.iter().enumerate() {
        let at = |field: &str| format!("{json}/{i}/{field}");
        let name = Cell::text(r.config.name());
        if r.kiops.max == 0.0 {
            speed.row(vec![
                name,
                nothing_completed(),
                Cell::missing("-"),
                Cell::missing("-"),
                Cell::missing("-"),
            ]);
            continue;
        }
        speed.row(vec![
            name.clone(),
            Cell::num(r.kiops.median, 1).at(at("kiops/median")),
            Cell::num(r.kiops.min, 1).at(at("kiops/min")),
            Cell::num(r.kiops.max, 1).at(at("kiops/max")),
            cpu_cell(r.cpu_per_io_us.median).at(at("cpu_per_io_us/median")),
        ]);
        locks.row(vec![
            name.clone(),
            Cell::opt(r.sched_contentions_per_io.as_ref().map(|s| s.median), 3)
                .at(at("sched_contentions_per_io/median")),
            Cell::opt(r.sched_wait_avg_ns, 0).at(at("sched_wait_avg_ns")),
            Cell::opt(r.sched_wait_max_ns.map(|n| n as f64 / 1e3), 1).at(at("sched_wait_max_ns")),
            Cell::opt(r.other_contentions_per_io.as_ref().map(|s| s.median), 3)
                .at(at("other_contentions_per_io/median")),
            Cell::opt(r.recording_cost_pct, 1).at(at("recording_cost_pct")),
        ]);
        if let Some(p) = &r.profile {
            profile.row(vec![
                name,
                Cell::num(p.samples as f64, 0).at(at("profile/samples")),
                Cell::num(p.bfq_pct, 1).at(at("profile/bfq_pct")),
                Cell::num(p.group_stats_pct, 1).at(at("profile/group_stats_pct")),
                Cell::opt(p.stats_share_of_scheduler_pct, 1)
                    .at(at("profile/stats_share_of_scheduler_pct")),
            ]);
        }
    }
    speed.note("KIOPS: the median over rounds, with the least and the most");
    locks.note("contended: acquisitions per I/O, the median over the recorded runs;");
    locks.note("recording cost: the IOPS lost to recording, % of the plain runs' (medians)");
    [speed, locks, profile]
}

/// BFQ's lock by caller (its last recorded run), its time by entry point and its statistics'
/// frames; a table only where there is something to show.
fn bfq_tables(bfq: &KernelRow) -> Vec<Table> {
    let mut tables = Vec::new();
    let contention = bfq.recorded.iter().rev().find_map(|r| r.contention.as_ref());
    if let Some(c) = contention.filter(|c| !c.scheduler_callers.is_empty()) {
        let columns = [("caller", ""), ("contended", ""), ("wait avg", "µs")];
        let mut t = Table::new("BFQ's lock by caller (the last recorded run)", &columns);
        for (caller, n) in c.scheduler_callers.iter().take(5) {
            t.row(vec![
                Cell::text(caller.clone()),
                Cell::num(n.contentions as f64, 0),
                Cell::num(n.wait_avg_ns() / 1e3, 1),
            ]);
        }
        tables.push(t);
    }
    if let Some(p) = &bfq.profile {
        let columns = [("entry point", ""), ("time", "% of busy samples")];
        let mut t = Table::new("BFQ's time by entry point", &columns);
        for (entry, pct) in p.bfq_entries_pct.iter().take(6) {
            t.row(vec![Cell::text(entry.clone()), Cell::num(*pct, 1)]);
        }
        tables.push(t);
        let mut t = Table::new("BFQ's statistics frames", &[("function", ""), ("samples", "")]);
        for (function, n) in &p.stats_functions {
            t.row(vec![Cell::text(function.clone()), Cell::num(*n as f64, 0)]);
        }
        if p.stats_functions.is_empty() {
            t.note("none");
        }
        t.note(format!("of the profile's {} samples", p.samples));
        tables.push(t);
    }
    tables
}

/// The model's rows: throughput, CPU and its checks; contention on its scheduler's lock.
/// `json`: where the report's JSON holds `rows` (`/model`).
fn model_tables(rows: &[ModelRow], json: &str) -> [Table; 2] {
    let columns = [
        ("entry", ""),
        ("groups", ""),
        ("KIOPS", "KIOPS"),
        ("min", "KIOPS"),
        ("max", "KIOPS"),
        ("CPU per I/O", "µs"),
        ("consistent", ""),
    ];
    let mut speed = Table::new("The model (the same workload in schedlab)", &columns);
    let columns = [
        ("entry", ""),
        ("groups", ""),
        ("sched-lock contended", "per I/O"),
        ("wait avg", "ns"),
        ("statistics of the scheduler", "%"),
    ];
    let mut locks = Table::new("The model's lock contention", &columns);
    for (i, m) in rows.iter().enumerate() {
        let at = |field: &str| format!("{json}/{i}/{field}");
        let (entry, groups) = (Cell::text(m.entry), Cell::num(m.groups as f64, 0));
        let consistent = Cell::check(m.consistent, if m.consistent { "yes" } else { "NO" });
        if m.kiops.max == 0.0 {
            let none = || Cell::missing("-");
            speed.row(vec![entry, groups, nothing_completed(), none(), none(), none(), consistent]);
            continue;
        }
        speed.row(vec![
            entry.clone(),
            groups.clone(),
            Cell::num(m.kiops.median, 1).at(at("kiops/median")),
            Cell::num(m.kiops.min, 1).at(at("kiops/min")),
            Cell::num(m.kiops.max, 1).at(at("kiops/max")),
            cpu_cell(m.cpu_per_io_us.median).at(at("cpu_per_io_us/median")),
            consistent,
        ]);
        locks.row(vec![
            entry,
            groups,
            Cell::opt(m.sched_contentions_per_io.as_ref().map(|s| s.median), 3)
                .at(at("sched_contentions_per_io/median")),
            Cell::opt(m.sched_wait_avg_ns, 0).at(at("sched_wait_avg_ns")),
            Cell::opt(m.stats_share_of_scheduler_pct, 1).at(at("stats_share_of_scheduler_pct")),
        ]);
    }
    [speed, locks]
}

/// The elevator's own cost: per scheduler, its CPU per I/O over none's, its own functions' and
/// the rest (blk-mq's machinery); then the frames that grew most. `at`: the point, for another
/// point's ("" at the main one); `json`: where the report's JSON holds `e` (`/elevator`, or
/// `/points/<i>/elevator`), the paths of the figures a row may refuse.
pub fn elevator_tables(e: &ElevatorCost, at: &str, json: &str) -> [Table; 2] {
    let columns = [
        ("scheduler", ""),
        ("CPU per I/O", "µs"),
        ("over none", "µs"),
        ("own functions", "µs"),
        ("own", "% of samples"),
        ("elevator machinery", "µs"),
    ];
    let mut cost = Table::new(format!("The elevator's own cost{at}"), &columns);
    let none = || Cell::missing("-");
    cost.row(vec![
        Cell::text("none"),
        Cell::num(e.none_cpu_per_io_us, 2).at(format!("{json}/none_cpu_per_io_us")),
        none(),
        none(),
        none(),
        none(),
    ]);
    let mut grew = Table::new(
        format!("The frames that grew most over none{at}"),
        &[("scheduler", ""), ("frame", ""), ("more", "µs")],
    );
    for (name, field, c) in [("bfq", "bfq", &e.bfq), ("mq-deadline", "mq_deadline", &e.mq_deadline)]
    {
        let json = format!("{json}/{field}");
        let Some(c) = c else {
            cost.row(vec![Cell::text(name), none(), none(), none(), none(), none()]);
            cost.note(format!("{name}: no figures; they need its profile and none's runs"));
            continue;
        };
        cost.row(vec![
            Cell::text(name),
            Cell::num(c.cpu_per_io_us, 2).at(format!("{json}/cpu_per_io_us")),
            Cell::num(c.extra_us, 2).at(format!("{json}/extra_us")),
            Cell::num(c.own_us, 2).at(format!("{json}/own_us")),
            Cell::num(c.own_pct, 1).at(format!("{json}/own_pct")),
            match (c.elevator_us, &c.elevator_not_estimable) {
                (Some(us), _) => Cell::num(us, 2).at(format!("{json}/elevator_us")),
                (None, why) => Cell::missing(why.as_deref().unwrap_or("-")),
            },
        ]);
        for (i, (frame, us)) in c.largest.iter().enumerate() {
            // A (frame, µs) pair is a two-item list in the JSON: the figure is its second.
            let more = Cell::num(*us, 2).at(format!("{json}/largest/{i}/1"));
            grew.row(vec![Cell::text(name), Cell::text(frame.clone()), more]);
        }
    }
    cost.note(format!("µs per I/O, on {} CPU; over none: in these profiled runs", e.basis));
    grew.note("inclusive (a frame's callees counted in it), so nested frames overlap");
    [cost, grew]
}

/// The lock sites: the kernel's time at each (locked, waited, held) beside the model's own hold
/// and the pad it ran with; the gaps the model's path spaces them by. `at` as above.
pub fn site_tables(c: &SiteCalibration, at: &str) -> [Table; 2] {
    let columns = [
        ("site", ""),
        ("locked", "µs"),
        ("waited", "µs"),
        ("uc locked", "µs"),
        ("uc waited", "µs"),
        ("uc n", ""),
        ("held", "µs"),
        ("model own", "µs"),
        ("pad", "ns"),
    ];
    let title = format!(
        "Lock sites{at}: the kernel's time per acquisition, the model's own hold and its pad"
    );
    let mut sites = Table::new(title, &columns);
    for (i, st) in c.sites.iter().enumerate() {
        let own = c.model_own_hold_us.iter().find(|(s, _)| s == st.site).map(|(_, v)| *v);
        let quiet = st.uncontended.as_ref();
        sites.row(vec![
            Cell::text(st.site),
            Cell::num(st.locked_us, 3),
            Cell::opt(st.wait_us, 3),
            Cell::opt(quiet.map(|u| u.locked_us), 3),
            Cell::opt(quiet.and_then(|u| u.wait_us), 3),
            Cell::opt(quiet.map(|u| u.samples as f64), 0),
            Cell::num(st.hold_us, 3),
            Cell::opt(own, 3),
            Cell::opt(c.pads.hold_ns.get(i).map(|&p| p as f64), 0),
        ]);
    }
    if c.sites.iter().any(|s| s.uncontended.is_some()) {
        sites.note(format!(
            "uc: uncontended, kernel bfq profiled (n samples) and recorded at {}, where the holds \
             are measured; model own: the model's own hold at one job",
            c.holds_at
        ));
    }
    sites.note(format!("kernel bfq, µs per acquisition; {}", c.basis));
    let columns = [("between", ""), ("gap", "µs per I/O"), ("the model spins", "ns")];
    let mut gaps = Table::new(format!("The gaps between the sites{at}"), &columns);
    let between = ["bio merge → depth limit", "depth limit → insert", "insert → dispatch"];
    for (i, what) in between.into_iter().enumerate() {
        gaps.row(vec![
            Cell::text(what),
            Cell::num(c.gaps_us[i], 3),
            Cell::num(c.pads.gap_ns[i] as f64, 0),
        ]);
    }
    gaps.note(format!("from {} samples; CPU per I/O {:.2} µs", c.samples, c.cpu_per_io_us));
    [sites, gaps]
}

/// The other points: their settings, then their kernel's and model's rows.
fn points_tables(r: &KernelReport) -> Vec<Table> {
    if r.points.is_empty() {
        return Vec::new();
    }
    let columns = [("point", ""), ("model outside work", "ns"), ("elevator cost", "ns")];
    let mut points = Table::new("The other points", &columns);
    let columns = [
        ("point", ""),
        ("scheduler", ""),
        ("KIOPS", "KIOPS"),
        ("CPU per I/O", "µs"),
        ("experiment's", "µs"),
        ("lock contended", "per I/O"),
    ];
    let mut kernel = Table::new("The other points: the kernel", &columns);
    let columns = [
        ("point", ""),
        ("entry", ""),
        ("groups", ""),
        ("KIOPS", "KIOPS"),
        ("CPU per I/O", "µs"),
        ("lock contended", "per I/O"),
    ];
    let mut model = Table::new("The other points: the model", &columns);
    let mut more = Vec::new();
    for (i, p) in r.points.iter().enumerate() {
        let label = Cell::text(p.point.label());
        let ns = |n: u64| Cell::num(n as f64, 0);
        points.row(vec![label.clone(), ns(p.model_outside_ns), ns(p.model_elevator_ns)]);
        for (j, k) in p.kernel.iter().enumerate() {
            let at = |field: &str| format!("/points/{i}/kernel/{j}/{field}");
            let mut row = vec![label.clone(), Cell::text(k.config.name())];
            if k.kiops.max == 0.0 {
                row.extend([
                    nothing_completed(),
                    Cell::missing("-"),
                    Cell::missing("-"),
                    Cell::missing("-"),
                ]);
            } else {
                row.extend([
                    Cell::num(k.kiops.median, 1).at(at("kiops/median")),
                    cpu_cell(k.cpu_per_io_us.median).at(at("cpu_per_io_us/median")),
                    Cell::opt(k.experiment_cpu_per_io_us.as_ref().map(|s| s.median), 2)
                        .at(at("experiment_cpu_per_io_us/median")),
                    Cell::opt(k.sched_contentions_per_io.as_ref().map(|s| s.median), 3)
                        .at(at("sched_contentions_per_io/median")),
                ]);
            }
            kernel.row(row);
        }
        for (j, m) in p.model.iter().enumerate() {
            let at = |field: &str| format!("/points/{i}/model/{j}/{field}");
            let mut row = vec![label.clone(), Cell::text(m.entry), Cell::num(m.groups as f64, 0)];
            if m.kiops.max == 0.0 {
                row.extend([nothing_completed(), Cell::missing("-"), Cell::missing("-")]);
            } else {
                row.extend([
                    Cell::num(m.kiops.median, 1).at(at("kiops/median")),
                    cpu_cell(m.cpu_per_io_us.median).at(at("cpu_per_io_us/median")),
                    Cell::opt(m.sched_contentions_per_io.as_ref().map(|s| s.median), 3)
                        .at(at("sched_contentions_per_io/median")),
                ]);
            }
            model.row(row);
        }
        let at = format!(" at {}", p.point.label());
        if let Some(e) = &p.elevator {
            more.extend(elevator_tables(e, &at, &format!("/points/{i}/elevator")));
        }
        if let Some(c) = &p.sites {
            more.extend(site_tables(c, &at));
        }
    }
    points.note("elevator cost: per request, paid by the model's scheduler rows");
    kernel.note("experiment's: the CPU per I/O of fio's cgroup, kernel threads and interrupts;");
    kernel.note("lock contended: on the scheduler's lock, per I/O (kernel: the median over runs)");
    let mut tables = vec![points, kernel];
    if !model.rows.is_empty() {
        tables.push(model);
    }
    tables.extend(more);
    tables
}

/// How a fidelity row's figures are shown: ratios and counts per I/O to 3 places, the rest 2.
fn fidelity_digits(r: &FidelityRow) -> usize {
    if r.unit == "×" || r.unit == "per I/O" {
        3
    } else {
        2
    }
}

/// A fidelity figure's verdict cell (the kernel's and `--inject`'s): evidence, outside,
/// inconclusive and a control within (inconclusive too) are judgements on measured figures,
/// made by `judge` (none on disturbed runs); fitted and not judged say why there is none.
pub fn figure_verdict_cell(v: &FigureVerdict, judge: Judge) -> Cell {
    let label = v.label();
    match v {
        FigureVerdict::Evidence => judge.cell(Verdict::Met, label),
        FigureVerdict::Outside => judge.cell(Verdict::Missed, label),
        FigureVerdict::Inconclusive { .. } => judge.cell(Verdict::Inconclusive, label),
        // Within, and so is a control: the figure cannot tell the model from the control.
        FigureVerdict::ControlWithin { .. } => judge.cell(Verdict::Inconclusive, label),
        FigureVerdict::Fitted { .. } | FigureVerdict::NotJudged { .. } => Cell::not_judged(label),
    }
}

/// What stands for a count of verdicts on disturbed runs.
pub const VERDICTS_NOT_COUNTED: &str =
    "verdicts not counted: the runs were disturbed (see the outcome below the tables)";

/// The fidelity table in two, numbered alike so each fits: the figures, then each one's point,
/// goal and verdict.
fn fidelity_tables(rows: &[FidelityRow], judge: Judge) -> [Table; 2] {
    let columns = [
        ("#", ""),
        ("figure", ""),
        ("unit", ""),
        ("kernel", ""),
        ("model", ""),
        ("95% low", ""),
        ("95% high", ""),
        ("m ÷ k", "×"),
        ("null", ""),
        ("constant", ""),
    ];
    let mut figures = Table::new(FIDELITY, &columns);
    let columns = [("#", ""), ("configuration", ""), ("goal", ""), ("verdict", "")];
    let mut judged = Table::new("Fidelity: each figure's goal and verdict", &columns);
    for (i, r) in rows.iter().enumerate() {
        let (number, digits) = (Cell::text((i + 1).to_string()), fidelity_digits(r));
        figures.row(vec![
            number.clone(),
            Cell::text(r.figure.clone()),
            Cell::text(r.unit),
            Cell::opt(r.kernel, digits),
            Cell::opt(r.model, digits),
            Cell::opt(r.model_interval.map(|i| i.lo), digits),
            Cell::opt(r.model_interval.map(|i| i.hi), digits),
            Cell::opt(r.model_over_kernel, 2),
            Cell::opt(r.null_model, digits),
            Cell::opt(r.constant, digits),
        ]);
        judged.row(vec![
            number,
            Cell::text(r.point.label()),
            Cell::text(r.band.describe()),
            figure_verdict_cell(&r.verdict, judge),
        ]);
    }
    figures.note(format!("{} figures; #: its number in the table of verdicts below;", rows.len()));
    figures.note("95% low, high: the model's interval over rounds; m ÷ k: model ÷ kernel;");
    figures.note("null, constant: the null model's and the constant model's figures");
    judged.note(if judge.judges() {
        crate::experiment::kernel::fidelity::summary_line(rows)
    } else {
        VERDICTS_NOT_COUNTED.to_string()
    });
    [figures, judged]
}

/// The report contract (`report::contract`): the kernel's rows, the model's, the two side by
/// side, the elevator's cost, the lock sites, the other points and the fidelity table as tables;
/// the panels' chart beside the fidelity table.
impl super::contract::Report for KernelReport {
    const COMMAND: &'static str = "kernel";
    /// 2: a figure its tables refuse is `null` here too (`contract::Report::json_in`); the
    /// elevator machinery's cost is `null` below 0, with `elevator_not_estimable`.
    const SCHEMA_VERSION: u32 = 2;
    const VERDICT_FIELDS: &'static [&'static str] =
        &["verdict", "within", "within_interval", "null_within", "constant_within"];

    fn provenance(&self) -> crate::files::provenance::Provenance {
        self.provenance.clone()
    }

    fn tables(&self, judge: Judge) -> Vec<Table> {
        let mut tables = vec![environment_table(self), settings_table(self)];
        tables.extend(
            kernel_tables(&self.kernel, "/kernel").into_iter().filter(|t| !t.rows.is_empty()),
        );
        if let Some(bfq) = self.kernel.iter().find(|r| r.config == KernelSched::Bfq) {
            tables.extend(bfq_tables(bfq));
        }
        if !self.model.is_empty() {
            tables.extend(
                model_tables(&self.model, "/model").into_iter().filter(|t| !t.rows.is_empty()),
            );
        }
        let mut side = Table::new(
            "Side by side",
            &[("figure", ""), ("unit", ""), ("kernel", ""), ("model", "")],
        );
        for s in &self.side_by_side {
            let digits = if s.unit == "×" || s.unit == "per I/O" { 3 } else { 1 };
            side.row(vec![
                Cell::text(s.what.clone()),
                Cell::text(s.unit),
                Cell::opt(s.kernel, digits),
                Cell::opt(s.model, digits),
            ]);
        }
        tables.push(side);
        if let Some(e) = &self.elevator {
            tables.extend(elevator_tables(e, "", "/elevator"));
        }
        if let Some(c) = &self.sites {
            tables.extend(site_tables(c, ""));
        }
        tables.extend(points_tables(self));
        if !self.fidelity.is_empty() {
            tables.extend(fidelity_tables(&self.fidelity, judge));
        }
        tables
    }

    fn charts(&self) -> Vec<super::contract::Chart> {
        let chart = super::contract::Chart::new(
            "kernel and model side by side",
            super::charts::kernel_svg(self),
        );
        vec![if self.fidelity.is_empty() { chart } else { chart.beside(FIDELITY) }]
    }

    fn outcome(&self) -> super::contract::Outcome {
        // Runs other processes disturbed are the outcome's disturbed runs, as the experiment
        // said them (with its first run's figures), and any its warnings leave unsaid.
        let (load, warnings): (Vec<Warning>, Vec<Warning>) =
            typed_warnings(&self.warnings, &self.point_labels())
                .into_iter()
                .partition(|w| w.kind == WarningKind::DisturbedByOtherLoad);
        let mut disturbed: Vec<String> = load.iter().map(Warning::line).collect();
        let said = |point: &str| load.iter().any(|w| w.scope == Scope::Points(vec![point.into()]));
        let unsaid = disturbed_kernel_runs(self).into_iter().filter(|(point, _)| !said(point));
        disturbed.extend(unsaid.map(|(_, line)| line));
        super::contract::Outcome {
            interrupted: self.interrupted,
            warnings,
            disturbed,
            failed_checks: if self.model.iter().any(|m| !m.consistent) {
                vec!["a model run failed its end-of-run checks (consistent: NO above)".into()]
            } else {
                vec![]
            },
            // Told on stderr as they were collected (`experiment::kernel::run`).
            failed_runs: self.failures.iter().map(Failure::told).collect(),
            failed_outputs: self.output_failures.iter().map(Failure::told).collect(),
            ..Default::default()
        }
    }
}

/// The kernel's runs that other processes or a job-control stop disturbed, one line per
/// scheduler and point: their figures measure that as well as the scheduler.
fn disturbed_kernel_runs(r: &KernelReport) -> Vec<(String, String)> {
    let main = std::iter::once((r.config.point_label(), &r.kernel));
    let others = r.points.iter().map(|p| (p.point.label(), &p.kernel));
    let mut out = Vec::new();
    for (point, rows) in main.chain(others) {
        for row in rows.iter() {
            let over = |o: &Option<f64>| o.is_some_and(|o| o > OTHERS_DISTURB_CPUS);
            let noisy = row.runs.iter().filter(|k| over(&k.other_cpus) || k.stopped_s.is_some());
            let noisy = noisy.count();
            if noisy > 0 {
                let line = format!(
                    "{point}: {}: {noisy} of {} kernel runs shared the CPUs with other processes \
                     (above {OTHERS_DISTURB_CPUS} CPUs) or were stopped",
                    row.config.name(),
                    row.runs.len()
                );
                out.push((point.clone(), line));
            }
        }
    }
    out
}

impl KernelReport {
    /// Every point's label, the main one first: what a warning's scope names.
    fn point_labels(&self) -> Vec<String> {
        let others = self.points.iter().map(|p| p.point.label());
        std::iter::once(self.config.point_label()).chain(others).collect()
    }
}

/// The experiment's warnings (said as it went, as lines) typed: the point a line begins with
/// is its scope, and what it says is its kind (`typed_kind`).
pub fn typed_warnings(lines: &[String], points: &[String]) -> Vec<Warning> {
    lines
        .iter()
        .map(|line| {
            let at = points.iter().find_map(|p| {
                let rest = line.strip_prefix(p.as_str())?;
                rest.strip_prefix(": ").map(|m| (p, m))
            });
            let (scope, message) = match at {
                Some((point, message)) => (Scope::Points(vec![point.clone()]), message),
                None => (Scope::Run, line.as_str()),
            };
            Warning { kind: typed_kind(message), scope, message: message.to_string() }
        })
        .collect()
}

/// A kernel experiment's warning's kind, from what it says (the experiment gives them as
/// lines: `experiment::kernel`).
fn typed_kind(message: &str) -> WarningKind {
    let has = |words: &str| message.contains(words);
    if has("shared the CPUs with other processes") || has("other processes used") {
        WarningKind::DisturbedByOtherLoad
    } else if message.starts_with("clean-up of an earlier run") {
        WarningKind::CleanUp
    } else if has("not CPU-bound") {
        WarningKind::NotCpuBound
    } else if has("attached program cost") || has("recording cost") || has("recorder") {
        WarningKind::RecorderCost
    } else if has("calibrat") || has("elevator cost") || has("accounting cgroup") {
        WarningKind::Calibration
    } else if has("steal") {
        WarningKind::Steal
    } else {
        WarningKind::Other
    }
}

/// The fidelity table's title (the chart goes beside it).
const FIDELITY: &str = "Fidelity: the model against the kernel";

#[cfg(test)]
mod tests {
    use crate::experiment::kernel::rows;
    use crate::report::contract::{text_within_contract, Report, View};
    use crate::report::kernel_fixture::recorded;

    /// Issue 44, item 3: "a value of −51.90 µs is judged as if real". bfq's CPU per I/O below
    /// none's (two noisy profiled runs) is no cost: the page and the text say "not estimable"
    /// with the figure, and no table shows it as a number.
    #[test]
    fn an_elevator_cheaper_than_none_is_not_estimable() {
        let bfq = rows::SchedulerCost {
            cpu_per_io_us: 40.1,
            own_pct: 2.0,
            own_us: 0.8,
            extra_us: -51.9,
            elevator_us: None,
            elevator_not_estimable: Some("not estimable: -52.70 µs < 0".into()),
            largest: Vec::new(),
        };
        let e = rows::ElevatorCost {
            basis: "experiment",
            none_cpu_per_io_us: 92.0,
            bfq: Some(bfq),
            mq_deadline: None,
        };
        let [cost, _] = super::elevator_tables(&e, "", "/elevator");
        let text = cost.to_text();
        assert!(text.contains("not estimable: -51.90 µs < 0"), "{text}");
        assert!(text.contains("not estimable: -52.70 µs < 0"), "the elevator's, refused: {text}");
        let numbers: Vec<f64> = cost
            .rows
            .iter()
            .flatten()
            .filter_map(|c| match c {
                crate::report::table::Cell::Number { value, .. } => Some(*value),
                _ => None,
            })
            .collect();
        assert!(numbers.iter().all(|v| *v >= 0.0), "{numbers:?}");
    }

    #[test]
    fn the_kernel_text_is_drawn_from_its_tables_within_130_columns() {
        let report = recorded();
        let text = text_within_contract(&report, 1);
        // The fixture's own figures and the facts the old text gave: the tools, the callers of
        // BFQ's lock, the elevator's cost, the sites, the other point, the fidelity summary.
        let said = [
            "6.18.44",
            "fio-3.33",
            "bpftrace v0.17.0",
            "bfq_dispatch_request",
            "The elevator's own cost",
            "limit-depth",
            "1 job × iodepth 1 (io_uring)",
            "no requests completed",
            "bfq ÷ none, IOPS",
            "Fidelity: the model against the kernel",
            "the machine was loaded",
        ];
        for s in said {
            assert!(text.contains(s), "{s:?} is not in the text:\n{text}");
        }
        // The fixture's recording cost below 0 is refused in the JSON at its own field.
        let json: serde_json::Value = serde_json::from_str(&report.json(None).unwrap()).unwrap();
        let listed = json["not_estimable"].as_array().unwrap();
        let recording = listed.iter().find(|n| n["column"] == "recording cost").unwrap();
        let path = recording["path"].as_str().unwrap();
        assert!(path.ends_with("/recording_cost_pct"), "{recording}");
        assert_eq!(json.pointer(path), Some(&serde_json::Value::Null), "{json}");
        let (row, _) = path.rsplit_once('/').unwrap();
        let why = &json.pointer(row).unwrap()["recording_cost_pct_not_estimable"];
        assert_eq!(*why, recording["why"], "{json}");
    }

    #[test]
    fn the_kernel_judges_nothing_on_disturbed_runs_and_says_each_warning_once() {
        use crate::report::contract::{judged_only_when_undisturbed, merged, WarningKind};
        let disturbed = View { disturbed: true, ..View::default() };
        let judged = judged_only_when_undisturbed(&recorded(), disturbed).unwrap();
        assert!(judged > 0, "the fixture has verdicts to take away");
        // Kernel runs other processes disturbed: the outcome says so, and nothing is judged.
        let mut loaded = recorded();
        loaded.kernel[0].runs[0].other_cpus = Some(1.4);
        assert!(!loaded.outcome().disturbed.is_empty());
        judged_only_when_undisturbed(&loaded, View::default()).unwrap();
        // The experiment's lines, each at its point and some twice: one warning per kind and
        // scope, a message at two points said once naming both, the model's load as disturbed.
        let (main, other) = (loaded.config.point_label(), loaded.points[0].point.label());
        let cost = "no elevator cost measured";
        let noisy = "2 model run(s) shared the CPUs with other processes; the first: round 1";
        loaded.warnings = vec![
            format!("{main}: {cost}"),
            format!("{other}: {cost}"),
            format!("{main}: {cost}"),
            format!("{main}: {noisy}"),
            "clean-up of an earlier run: a loop device".into(),
        ];
        let outcome = loaded.outcome();
        let kinds: Vec<WarningKind> = outcome.warnings.iter().map(|w| w.kind).collect();
        use WarningKind::{Calibration, CleanUp};
        assert_eq!(kinds, [Calibration, Calibration, Calibration, CleanUp]);
        assert!(outcome.disturbed.contains(&format!("{main}: {noisy}")), "{:?}", outcome.disturbed);
        let text = loaded.text(View::default());
        assert_eq!(text.matches(cost).count(), 1, "{text}");
        let lines: Vec<String> = merged(&outcome.warnings).iter().map(|w| w.line()).collect();
        assert!(lines.contains(&format!("{main}, {other}: {cost}")), "{lines:?}");
        judged_only_when_undisturbed(&loaded, View::default()).unwrap();
    }
}
