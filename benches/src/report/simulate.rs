//! The text of `schedlab simulate`'s report: fio's group-reporting figures on one line, then what
//! produced them; and, after a stop, the virtual time the figures cover.

use crate::experiment::simulate::SimulateReport;
use crate::policy_sim::{SimConfig, SimResult, SliceIdleSource};

/// A duration in ns as the options take it: 0, 8ms, 500us, 2s, 750ns.
fn duration_text(ns: u64) -> String {
    match ns {
        0 => "0".into(),
        _ if ns % 1_000_000_000 == 0 => format!("{}s", ns / 1_000_000_000),
        _ if ns % 1_000_000 == 0 => format!("{}ms", ns / 1_000_000),
        _ if ns % 1_000 == 0 => format!("{}us", ns / 1_000),
        _ => format!("{ns}ns"),
    }
}

/// A block size as `--bs` takes it: 4k, or bytes when not whole KiB.
fn bs_text(sectors: u32) -> String {
    let bytes = sectors as u64 * 512;
    if bytes % 1024 == 0 {
        format!("{}k", bytes / 1024)
    } else {
        bytes.to_string()
    }
}

/// fio's group-reporting figures on one line, then what produced them.
pub fn summary_line(cfg: &SimConfig, r: &SimResult) -> String {
    let source = match r.slice_idle_source {
        SliceIdleSource::Registered => "registered",
        SliceIdleSource::Init => "init",
        SliceIdleSource::Explicit => "explicit",
    };
    // No request completed: there is no latency to report (zeros would read as a measurement).
    if r.ios == 0 {
        return format!(
            "{}: no requests completed in {} s virtual ({}, {} jobs x iodepth {}, bs {}, seed {}, {})",
            cfg.rw.name(),
            r.runtime_s,
            cfg.device.name(),
            cfg.jobs,
            cfg.iodepth,
            bs_text(cfg.bs_sectors),
            cfg.seed,
            r.variant
        );
    }
    format!(
        "{}: IOPS={:.0}, BW={:.0}KiB/s, lat avg={:.1}us stdev={:.1}us ({}, slice_idle {} [{}], {} jobs x iodepth {}, bs {}, think {}, {} s virtual, seed {}, {})",
        cfg.rw.name(),
        r.iops,
        r.bw_kib_s,
        r.lat_avg_us,
        r.lat_stddev_us,
        cfg.device.name(),
        duration_text(r.slice_idle_ns),
        source,
        cfg.jobs,
        cfg.iodepth,
        bs_text(cfg.bs_sectors),
        duration_text(cfg.think_ns),
        r.runtime_s,
        cfg.seed,
        r.variant,
    )
}

/// The summary line, and after a stop the virtual time reached (each line ends in a newline).
pub fn text(report: &SimulateReport) -> String {
    let mut s = summary_line(&report.config, &report.result) + "\n";
    if report.result.interrupted {
        s += &format!("(interrupted at {:.6} virtual s: the figures cover that time)\n", report.result.runtime_s);
    }
    s
}
