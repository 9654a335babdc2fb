//! `schedlab kernel`'s tables: the environment, the kernel's rows (throughput, CPU per I/O,
//! contention on the scheduler's lock, the profile's shares), the model's rows, and the two side
//! by side.

use crate::experiment::kernel::fidelity::FidelityRow;
use crate::experiment::kernel::rows::ElevatorCost;
use crate::experiment::kernel::sites::SiteCalibration;
use crate::experiment::kernel::{KernelReport, KernelSched, ModelOutside};
use std::fmt::Write;

fn opt(v: Option<f64>, digits: usize) -> String {
    v.map_or_else(|| "-".into(), |v| format!("{v:.digits$}"))
}

/// The tables `schedlab kernel` prints: the environment, the kernel's rows, the model's rows and
/// the two side by side.
pub fn kernel_text(report: &KernelReport) -> String {
    let mut out = String::new();
    let env = &report.environment;
    let _ = writeln!(out, "schedlab kernel: {} | {}", env.kernel_release, env.device);
    let _ = writeln!(out, "fio {} | {} | {} | cgroups {}", env.fio, env.perf, env.bpftrace.as_deref().unwrap_or("no contention recording"), env.cgroup.as_deref().unwrap_or("none"));
    let _ = writeln!(out, "{}", report.provenance.one_line());
    let c = &report.config;
    let _ = writeln!(out, 
        "{} jobs, {} {} B, iodepth {}, {}, {} rounds of {:.2} s (+{:.2} s ramp); model: {} lock, {} ns outside work per request{}, {} ns elevator cost ({}), kernel profile {}, weights {}",
        c.threads,
        c.rw.name(),
        c.bs_sectors * 512,
        c.iodepth,
        c.ioengine,
        c.rounds,
        c.duration.as_secs_f64(),
        c.ramp.as_secs_f64(),
        c.model_lock,
        report.model_outside_ns,
        if c.model_outside == ModelOutside::Kernel { " (the kernel's none CPU per I/O)" } else { "" },
        report.model_elevator_ns,
        if c.model_elevator == ModelOutside::Kernel { "measured from the profiles" } else { "given" },
        c.model_kernel.name(),
        c.weights.iter().map(|w| w.to_string()).collect::<Vec<_>>().join(",")
    );
    let _ = writeln!(out);
    let _ = writeln!(out, "kernel          KIOPS (min-max)          CPU/IO µs  sched-lock cont/IO  wait avg ns  wait max µs  other cont/IO  rec. cost  bfq %  stats %  stats of sched %");
    for r in &report.kernel {
        if r.kiops.max == 0.0 {
            // Zeros would read as a measurement: say what happened instead.
            let _ = writeln!(out, "{:<15} no requests completed", r.config.name());
            continue;
        }
        let p = r.profile.as_ref();
        let _ = writeln!(out, 
            "{:<15} {:>7.1} ({:>6.1}-{:>6.1})  {:>9}  {:>18}  {:>11}  {:>11}  {:>13}  {:>9}  {:>5}  {:>7}  {:>16}",
            r.config.name(),
            r.kiops.median,
            r.kiops.min,
            r.kiops.max,
            opt(Some(r.cpu_per_io_us.median).filter(|v| *v > 0.0), 2),
            opt(r.sched_contentions_per_io.as_ref().map(|s| s.median), 3),
            opt(r.sched_wait_avg_ns, 0),
            opt(r.sched_wait_max_ns.map(|n| n as f64 / 1e3), 1),
            opt(r.other_contentions_per_io.as_ref().map(|s| s.median), 3),
            opt(r.recording_cost_pct, 1).to_string() + if r.recording_cost_pct.is_some() { "%" } else { "" },
            opt(p.map(|p| p.bfq_pct), 1),
            opt(p.map(|p| p.group_stats_pct), 1),
            opt(p.and_then(|p| p.stats_share_of_scheduler_pct), 1),
        );
    }
    if let Some(bfq) = report.kernel.iter().find(|r| r.config == KernelSched::Bfq) {
        let callers: Vec<String> = bfq
            .recorded
            .iter()
            .rev()
            .find_map(|r| r.contention.as_ref())
            .map(|c| c.scheduler_callers.iter().take(5).map(|(f, c)| format!("{f} {} ({:.1} µs avg)", c.contentions, c.wait_avg_ns() / 1e3)).collect())
            .unwrap_or_default();
        if !callers.is_empty() {
            let _ = writeln!(out, "bfq's lock by caller (last recorded run): {}", callers.join(", "));
        }
        if let Some(p) = &bfq.profile {
            let e: Vec<String> = p.bfq_entries_pct.iter().take(6).map(|(f, pct)| format!("{f} {pct:.1} %")).collect();
            let _ = writeln!(out, "bfq's time by entry point (% of busy samples): {}", e.join(", "));
            let f: Vec<String> = p.stats_functions.iter().map(|(f, n)| format!("{f} {n}")).collect();
            let _ = writeln!(out, "bfq's statistics frames (samples of {}): {}", p.samples, if f.is_empty() { "none".into() } else { f.join(", ") });
        }
    }
    if !report.model.is_empty() {
        let _ = writeln!(out);
        let _ = writeln!(out, "model                 groups  KIOPS (min-max)            CPU/IO µs  sched-lock cont/IO  wait avg ns  stats of sched %  consistent");
        for m in &report.model {
            if m.kiops.max == 0.0 {
                let _ = writeln!(out, "{:<21} {:>6}  no requests completed", m.entry, m.groups);
                continue;
            }
            let _ = writeln!(out, 
                "{:<21} {:>6}  {:>8.1} ({:>7.1}-{:>7.1})  {:>9}  {:>18}  {:>11}  {:>16}  {}",
                m.entry,
                m.groups,
                m.kiops.median,
                m.kiops.min,
                m.kiops.max,
                opt(Some(m.cpu_per_io_us.median).filter(|v| *v > 0.0), 2),
                opt(m.sched_contentions_per_io.as_ref().map(|s| s.median), 3),
                opt(m.sched_wait_avg_ns, 0),
                opt(m.stats_share_of_scheduler_pct, 1),
                if m.consistent { "yes" } else { "NO" }
            );
        }
    }
    let _ = writeln!(out);
    let _ = writeln!(out, "side by side                                                                          kernel      model");
    for s in &report.side_by_side {
        let digits = if s.unit == "×" || s.unit == "per I/O" { 3 } else { 1 };
        let _ = writeln!(out, "{:<84} {:>9} {:>10}  {}", s.what, opt(s.kernel, digits), opt(s.model, digits), s.unit);
    }
    if let Some(e) = &report.elevator {
        let _ = writeln!(out);
        out.push_str(&elevator_text(e));
    }
    if let Some(c) = &report.sites {
        let _ = writeln!(out);
        out.push_str(&sites_text(c));
    }
    for p in &report.points {
        let _ = writeln!(out);
        let _ = writeln!(out, "point {}: model outside work {} ns, elevator cost {} ns per request", p.point.label(), p.model_outside_ns, p.model_elevator_ns);
        for r in p.kernel.iter().filter(|r| r.kiops.max == 0.0) {
            let _ = writeln!(out, "  kernel {:<12} no requests completed", r.config.name());
        }
        for r in p.kernel.iter().filter(|r| r.kiops.max > 0.0) {
            let _ = writeln!(
                out,
                "  kernel {:<12} {:>7.1} KIOPS  CPU/IO {:>6} µs (experiment {:>6} µs)  sched-lock cont/IO {:>6}",
                r.config.name(),
                r.kiops.median,
                opt(Some(r.cpu_per_io_us.median).filter(|v| *v > 0.0), 2),
                opt(r.experiment_cpu_per_io_us.as_ref().map(|s| s.median), 2),
                opt(r.sched_contentions_per_io.as_ref().map(|s| s.median), 3)
            );
        }
        for m in p.model.iter().filter(|m| m.kiops.max == 0.0) {
            let _ = writeln!(out, "  model  {:<21} {:>2} groups no requests completed", m.entry, m.groups);
        }
        for m in p.model.iter().filter(|m| m.kiops.max > 0.0) {
            let _ = writeln!(
                out,
                "  model  {:<21} {:>2} groups {:>7.1} KIOPS  CPU/IO {:>6} µs  sched-lock cont/IO {:>6}",
                m.entry,
                m.groups,
                m.kiops.median,
                opt(Some(m.cpu_per_io_us.median).filter(|v| *v > 0.0), 2),
                opt(m.sched_contentions_per_io.as_ref().map(|s| s.median), 3)
            );
        }
        if let Some(e) = &p.elevator {
            for line in elevator_text(e).lines() {
                let _ = writeln!(out, "  {line}");
            }
        }
        if let Some(c) = &p.sites {
            for line in sites_text(c).lines() {
                let _ = writeln!(out, "  {line}");
            }
        }
    }
    if !report.fidelity.is_empty() {
        let _ = writeln!(out);
        out.push_str(&fidelity_text(&report.fidelity));
    }
    for f in report.failures.iter().chain(&report.output_failures) {
        let _ = writeln!(out, "failed: {f}");
    }
    if report.interrupted {
        let _ = writeln!(out, "interrupted: the rows above hold the runs that finished");
    }
    out
}

/// The lock sites: the kernel's time at each (locked, waited, held) beside the model's own hold
/// and the pad it ran with, and the gaps the model's path spaces them by.
pub fn sites_text(c: &SiteCalibration) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "lock sites (kernel bfq, µs per acquisition; {}; {} samples, CPU per I/O {:.2} µs):", c.basis, c.samples, c.cpu_per_io_us);
    let _ = writeln!(out, "{:<14} {:>9} {:>9} {:>9} {:>11} {:>9}", "site", "locked", "waited", "held", "model own", "pad ns");
    for (i, t) in c.sites.iter().enumerate() {
        let own = c.model_own_hold_us.iter().find(|(s, _)| s == t.site).map(|(_, v)| *v);
        let pad = c.pads.hold_ns.get(i).copied();
        let _ = writeln!(out, "{:<14} {:>9.3} {:>9} {:>9.3} {:>11} {:>9}", t.site, t.locked_us, opt(t.wait_us, 3), t.hold_us, opt(own, 3), pad.map_or_else(|| "-".into(), |p| p.to_string()));
    }
    let _ = writeln!(
        out,
        "gaps (µs per I/O): bio merge → depth limit {:.3}, depth limit → insert {:.3}, insert → dispatch {:.3}; the model spins {:?} ns",
        c.gaps_us[0], c.gaps_us[1], c.gaps_us[2], c.pads.gap_ns
    );
    out
}

/// The elevator's own cost: per scheduler, its CPU per I/O over none, its own functions' and the
/// rest (blk-mq's machinery), and the frames that grew most.
pub fn elevator_text(e: &ElevatorCost) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "elevator cost (µs per I/O, {} CPU; none {:.2}):", e.basis, e.none_cpu_per_io_us);
    for (name, c) in [("bfq", &e.bfq), ("mq-deadline", &e.mq_deadline)] {
        match c {
            Some(c) => {
                let _ = writeln!(
                    out,
                    "  {name:<11} CPU/IO {:.2}, over none in these profiled runs {:+.2}: its own functions {:.2} ({:.1} % of samples), elevator machinery {:.2}",
                    c.cpu_per_io_us, c.extra_us, c.own_us, c.own_pct, c.elevator_us
                );
                if !c.largest.is_empty() {
                    let f: Vec<String> = c.largest.iter().map(|(f, us)| format!("{f} +{us:.2}")).collect();
                    let _ = writeln!(out, "  {:<11} grew most over none (inclusive, nested): {}", "", f.join(", "));
                }
            }
            None => {
                let _ = writeln!(out, "  {name:<11} - (needs its profile and none's runs)");
            }
        }
    }
    out
}

/// The columns of the fidelity table, as the HTML report's table heads them.
pub const FIDELITY_COLUMNS: [&str; 11] = [
    "configuration",
    "figure",
    "unit",
    "kernel",
    "model",
    "model 95% interval",
    "model ÷ kernel",
    "null model",
    "constant",
    "goal",
    "verdict",
];

/// The model's interval over rounds as a cell's text: "[1.02, 1.09]", or "-" (a figure that is
/// not a ratio over rounds, or one without an interval).
fn model_interval_text(r: &FidelityRow, digits: usize) -> String {
    let shown = |i: crate::stats::Interval| format!("[{:.digits$}, {:.digits$}]", i.lo, i.hi);
    r.model_interval.map_or_else(|| "-".into(), shown)
}

/// A row's cells, in [`FIDELITY_COLUMNS`] order.
pub fn fidelity_cells(r: &FidelityRow) -> [String; 11] {
    let digits = if r.unit == "×" || r.unit == "per I/O" { 3 } else { 2 };
    [
        r.point.label(),
        r.figure.clone(),
        r.unit.to_string(),
        opt(r.kernel, digits),
        opt(r.model, digits),
        model_interval_text(r, digits),
        opt(r.model_over_kernel, 2),
        opt(r.null_model, digits),
        opt(r.constant, digits),
        r.band.describe(),
        r.verdict.label(),
    ]
}

/// The fidelity table as text: one block per point, then how many figures are within their
/// bands.
pub fn fidelity_text(rows: &[FidelityRow]) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "fidelity: model against kernel ({} figures)", rows.len());
    let mut last = None;
    for r in rows {
        if last != Some(r.point) {
            let _ = writeln!(out, "{}", r.point.label());
            let _ = writeln!(
                out,
                "  {:<44} {:>7} {:>7} {:>16} {:>6} {:>7} {:>6} {:>7}  {:<13} {}",
                "figure",
                "kernel",
                "model",
                "[95% interval]",
                "m ÷ k",
                "null",
                "const",
                "unit",
                "goal",
                "verdict"
            );
            last = Some(r.point);
        }
        let c = fidelity_cells(r);
        let _ = writeln!(
            out,
            "  {:<44} {:>7} {:>7} {:>16} {:>6} {:>7} {:>6} {:>7}  {:<13} {}",
            c[1], c[3], c[4], c[5], c[6], c[7], c[8], c[2], c[9], c[10]
        );
    }
    let _ = writeln!(out, "{}", crate::experiment::kernel::fidelity::summary_line(rows));
    out
}

/// The report contract (`report::contract`): the kernel's rows, the model's, the two side by
/// side and the fidelity table as tables; the panels' chart beside the fidelity table.
impl super::contract::Report for KernelReport {
    const COMMAND: &'static str = "kernel";
    const SCHEMA_VERSION: u32 = 1;

    fn provenance(&self) -> crate::files::provenance::Provenance {
        self.provenance.clone()
    }

    fn text(&self, _view: super::contract::View) -> String {
        kernel_text(self)
    }

    fn tables(&self) -> Vec<super::table::Table> {
        use super::table::{Cell, Table, Verdict};
        let mut kernel = Table::new(
            "The kernel (fio on a loop device)",
            &[
                ("scheduler", ""),
                ("KIOPS median", "KIOPS"),
                ("min", "KIOPS"),
                ("max", "KIOPS"),
                ("CPU per I/O", "µs"),
                ("sched-lock contended", "per I/O"),
                ("wait avg", "ns"),
                ("wait max", "µs"),
                ("other contended", "per I/O"),
                ("recording cost", "%"),
                ("bfq", "% of samples"),
                ("statistics", "% of samples"),
                ("statistics of the scheduler", "%"),
            ],
        );
        for r in &self.kernel {
            let p = r.profile.as_ref();
            kernel.row(vec![
                Cell::text(r.config.name()),
                Cell::num(r.kiops.median, 1),
                Cell::num(r.kiops.min, 1),
                Cell::num(r.kiops.max, 1),
                Cell::opt(Some(r.cpu_per_io_us.median).filter(|v| *v > 0.0), 2),
                Cell::opt(r.sched_contentions_per_io.as_ref().map(|s| s.median), 3),
                Cell::opt(r.sched_wait_avg_ns, 0),
                Cell::opt(r.sched_wait_max_ns.map(|n| n as f64 / 1e3), 1),
                Cell::opt(r.other_contentions_per_io.as_ref().map(|s| s.median), 3),
                Cell::opt(r.recording_cost_pct, 1),
                Cell::opt(p.map(|p| p.bfq_pct), 1),
                Cell::opt(p.map(|p| p.group_stats_pct), 1),
                Cell::opt(p.and_then(|p| p.stats_share_of_scheduler_pct), 1),
            ]);
        }
        let mut model = Table::new(
            "The model (the same workload in schedlab)",
            &[("entry", ""), ("groups", ""), ("KIOPS median", "KIOPS"), ("min", "KIOPS"), ("max", "KIOPS"), ("CPU per I/O", "µs"), ("sched-lock contended", "per I/O"), ("wait avg", "ns"), ("statistics of the scheduler", "%"), ("consistent", "")],
        );
        for m in &self.model {
            model.row(vec![
                Cell::text(m.entry),
                Cell::num(m.groups as f64, 0),
                Cell::num(m.kiops.median, 1),
                Cell::num(m.kiops.min, 1),
                Cell::num(m.kiops.max, 1),
                Cell::opt(Some(m.cpu_per_io_us.median).filter(|v| *v > 0.0), 2),
                Cell::opt(m.sched_contentions_per_io.as_ref().map(|s| s.median), 3),
                Cell::opt(m.sched_wait_avg_ns, 0),
                Cell::opt(m.stats_share_of_scheduler_pct, 1),
                Cell::check(m.consistent, if m.consistent { "yes" } else { "NO" }),
            ]);
        }
        let mut side = Table::new("Side by side", &[("figure", ""), ("unit", ""), ("kernel", ""), ("model", "")]);
        for s in &self.side_by_side {
            let digits = if s.unit == "×" || s.unit == "per I/O" { 3 } else { 1 };
            side.row(vec![Cell::text(s.what.clone()), Cell::text(s.unit), Cell::opt(s.kernel, digits), Cell::opt(s.model, digits)]);
        }
        let mut tables = vec![kernel];
        if !self.model.is_empty() {
            tables.push(model);
        }
        tables.push(side);
        if let Some(c) = &self.sites {
            let mut t = Table::new(
                "Lock sites: the kernel's time per acquisition, the model's own hold and its pad",
                &[("site", ""), ("locked", "µs"), ("waited", "µs"), ("held", "µs"), ("model own hold", "µs"), ("pad", "ns")],
            );
            for (i, st) in c.sites.iter().enumerate() {
                let own = c.model_own_hold_us.iter().find(|(s, _)| s == st.site).map(|(_, v)| *v);
                t.row(vec![Cell::text(st.site), Cell::num(st.locked_us, 3), Cell::opt(st.wait_us, 3), Cell::num(st.hold_us, 3), Cell::opt(own, 3), Cell::opt(c.pads.hold_ns.get(i).map(|&p| p as f64), 0)]);
            }
            t.note(format!(
                "{}; {} samples; gaps µs per I/O: bio merge → depth limit {:.3}, depth limit → insert {:.3}, insert → dispatch {:.3} (the model spins {:?} ns)",
                c.basis, c.samples, c.gaps_us[0], c.gaps_us[1], c.gaps_us[2], c.pads.gap_ns
            ));
            tables.push(t);
        }
        if !self.fidelity.is_empty() {
            let mut fidelity = Table::new(
                FIDELITY,
                &[
                    ("configuration", ""),
                    ("figure", ""),
                    ("unit", ""),
                    ("kernel", ""),
                    ("model", ""),
                    ("model 95% low", ""),
                    ("model 95% high", ""),
                    ("model ÷ kernel", "×"),
                    ("null model", ""),
                    ("constant", ""),
                    ("goal", ""),
                    ("verdict", ""),
                ],
            );
            for r in &self.fidelity {
                let digits = if r.unit == "×" || r.unit == "per I/O" { 3 } else { 2 };
                fidelity.row(vec![
                    Cell::text(r.point.label()),
                    Cell::text(r.figure.clone()),
                    Cell::text(r.unit),
                    Cell::opt(r.kernel, digits),
                    Cell::opt(r.model, digits),
                    Cell::opt(r.model_interval.map(|i| i.lo), digits),
                    Cell::opt(r.model_interval.map(|i| i.hi), digits),
                    Cell::opt(r.model_over_kernel, 2),
                    Cell::opt(r.null_model, digits),
                    Cell::opt(r.constant, digits),
                    Cell::text(r.band.describe()),
                    {
                        use crate::experiment::kernel::fidelity::Verdict as Fv;
                        let label = r.verdict.label();
                        match &r.verdict {
                            Fv::Evidence => Cell::judged(Verdict::Met, label),
                            Fv::Outside => Cell::judged(Verdict::Missed, label),
                            Fv::Inconclusive { .. } => Cell::judged(Verdict::Inconclusive, label),
                            Fv::ControlWithin { .. } | Fv::Fitted { .. } | Fv::NotJudged { .. } => Cell::judged(Verdict::NotJudged, label),
                        }
                    },
                ]);
            }
            fidelity.note(crate::experiment::kernel::fidelity::summary_line(&self.fidelity));
            tables.push(fidelity);
        }
        tables
    }

    fn charts(&self) -> Vec<super::contract::Chart> {
        let chart = super::contract::Chart::new("kernel and model side by side", super::charts::kernel_svg(self));
        vec![if self.fidelity.is_empty() { chart } else { chart.beside(FIDELITY) }]
    }

    fn prose(&self) -> Vec<(String, String)> {
        self.elevator.iter().map(|e| ("The elevator's own cost".to_string(), elevator_text(e))).collect()
    }

    fn outcome(&self) -> super::contract::Outcome {
        super::contract::Outcome {
            interrupted: self.interrupted,
            warnings: self.warnings.clone(),
            failed_checks: if self.model.iter().any(|m| !m.consistent) { vec!["a model run failed its end-of-run checks (consistent: NO above)".into()] } else { vec![] },
            // Told on stderr as they were collected (`experiment::kernel::run`).
            failed_runs: if self.failures.is_empty() { vec![] } else { vec![String::new()] },
            failed_outputs: if self.output_failures.is_empty() { vec![] } else { vec![String::new()] },
            ..Default::default()
        }
    }
}

/// The fidelity table's title (the chart goes beside it).
const FIDELITY: &str = "Fidelity: the model against the kernel";
