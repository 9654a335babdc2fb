//! `schedlab kernel`'s tables: the environment, the kernel's rows (throughput, CPU per I/O,
//! contention on the scheduler's lock, the profile's shares), the model's rows, and the two side
//! by side.

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
        "{} jobs, {} {} B, iodepth {}, {}, {} rounds of {:.2} s (+{:.2} s ramp); model: {} lock, {} ns outside work per request{}",
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
        if c.model_outside == ModelOutside::Kernel { " (the kernel's none CPU per I/O)" } else { "" }
    );
    let _ = writeln!(out);
    let _ = writeln!(out, "kernel          KIOPS (min-max)          CPU/IO µs  sched-lock cont/IO  wait avg ns  wait max µs  other cont/IO  rec. cost  bfq %  stats %  stats of sched %");
    for r in &report.kernel {
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
    for f in &report.failures {
        let _ = writeln!(out, "failed: {f}");
    }
    if report.interrupted {
        let _ = writeln!(out, "interrupted: the rows above hold the runs that finished");
    }
    out
}
