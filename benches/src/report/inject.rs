//! `schedlab kernel --inject`'s tables: the sites as verified, the kernel's IOPS per cost and
//! phase, the inside ÷ outside ratio of the kernel beside the model's, with intervals, and the
//! slopes.

use crate::experiment::kernel::inject::{InjectReport, Interval};
use std::fmt::Write;

fn iv(v: Option<Interval>) -> String {
    v.map_or_else(|| "-".into(), |i| format!("{:.3} [{:.3}, {:.3}]", i.value, i.lo, i.hi))
}

fn per_us(v: Option<f64>) -> String {
    v.map_or_else(|| "-".into(), |v| format!("{:+.2} %/µs", 100.0 * v))
}

/// The text `schedlab kernel --inject` prints.
pub fn inject_text(r: &InjectReport) -> String {
    let mut out = String::new();
    let c = &r.config;
    let _ = writeln!(out, "schedlab kernel --inject: {} | {}", r.kernel_release, r.device);
    let _ = writeln!(out, "{}", r.provenance.one_line());
    let _ = writeln!(
        out,
        "{} jobs, {} {} B, iodepth {}, {}, bfq (slice_idle 0, low_latency 0), {} groups; {} cycles per cost of 3 × 200 ms phases; load {} before, {} after",
        c.threads,
        c.rw.name(),
        c.bs_sectors * 512,
        c.iodepth,
        c.ioengine,
        c.groups,
        r.inject.cycles,
        r.load_before.map_or("-".into(), |l| format!("{l:.2}")),
        r.load_after.map_or("-".into(), |l| format!("{l:.2}")),
    );
    if let Some(k) = &r.kernel {
        let v = &k.verification;
        let _ = writeln!(
            out,
            "sites: BFQ's lock {:#x}; held at block_rq_insert on {:.2} % of {} hits (inside), at block_getrq on {:.2} % of {} hits (outside)",
            v.lock_addr,
            100.0 * v.inside_held_frac(),
            v.inside_hits,
            100.0 * v.outside_held_frac(),
            v.outside_hits
        );
        let _ = writeln!(
            out,
            "loop: {:.3} ns per iteration (calibrated in place: {} iterations in {} ns, an empty nsecs pair {} ns; means {} and {} ns)",
            k.ns_per_iter, crate::experiment::kernel::inject::CAL_ITERS, v.cal_loop_ns, v.cal_empty_ns, v.cal_loop_avg_ns, v.cal_empty_avg_ns
        );
        let _ = writeln!(
            out,
            "probe: {} IOPS unattached before, {} after; the attached program costs {}",
            k.iops_unattached_before.map_or("-".into(), |v| format!("{v:.0}")),
            k.iops_unattached_after.map_or("-".into(), |v| format!("{v:.0}")),
            k.probe_cost_pct().map_or("-".into(), |p| format!("{p:.1} % of them"))
        );
        let _ = writeln!(out, "\nkernel, per cost (IOPS pooled over cycles; ratios with 95 % bootstrap intervals over cycles):");
        let _ = writeln!(out, "{:>8} {:>6} {:>6} {:>10} {:>10} {:>10} {:>26} {:>8}", "cost ns", "iters", "cycles", "nothing", "inside", "outside", "inside ÷ outside", "median");
        for kc in &k.costs {
            let _ = writeln!(
                out,
                "{:>8} {:>6} {:>6} {:>10.0} {:>10.0} {:>10.0} {:>26} {:>8.3}",
                kc.cost_ns, kc.iterations, kc.cycles, kc.iops_nothing, kc.iops_inside, kc.iops_outside, iv(kc.ratio), kc.cycle_ratio_median
            );
        }
    }
    let _ = writeln!(
        out,
        "\ninside ÷ outside, kernel beside the model ({} on {}, {} ns outside work per request; model interval: min..max over {} rounds):",
        r.model_entry,
        c.model_lock.name(),
        r.model_outside_ns,
        c.rounds
    );
    let _ = writeln!(out, "{:>8} {:>26} {:>26} {:>14}", "cost ns", "kernel", "model", "model within");
    for row in &r.side_by_side {
        let within = match row.model_within {
            Some(true) => "yes",
            Some(false) => "NO",
            None => "-",
        };
        let _ = writeln!(out, "{:>8} {:>26} {:>26} {:>14}", row.cost_ns, iv(row.kernel), iv(row.model), within);
    }
    let ks = r.kernel.as_ref().map(|k| k.slopes.clone()).unwrap_or_default();
    let ms = &r.model_slopes;
    let _ = writeln!(out, "\nslopes (throughput per µs of cost, as a share of the nothing phase's):");
    let _ = writeln!(out, "{:>10} {:>14} {:>14} {:>18}", "", "inside", "outside", "inside ÷ outside");
    let _ = writeln!(out, "{:>10} {:>14} {:>14} {:>18}", "kernel", per_us(ks.inside_per_us), per_us(ks.outside_per_us), per_us(ks.ratio_per_us));
    let _ = writeln!(out, "{:>10} {:>14} {:>14} {:>18}", "model", per_us(ms.inside_per_us), per_us(ms.outside_per_us), per_us(ms.ratio_per_us));
    for w in &r.warnings {
        let _ = writeln!(out, "warning: {w}");
    }
    for f in &r.failures {
        let _ = writeln!(out, "failed: {f}");
    }
    if r.interrupted {
        let _ = writeln!(out, "interrupted: the figures above are what finished");
    }
    out
}
