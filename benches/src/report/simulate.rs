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
    // fio's unit: µs up to 10 ms, then ms, then s (a disk's queueing reaches seconds).
    let lat = |us: f64| match us {
        _ if us >= 1e7 => format!("{:.2}s", us / 1e6),
        _ if us >= 1e4 => format!("{:.1}ms", us / 1e3),
        _ => format!("{us:.1}us"),
    };
    format!(
        "{}: IOPS={:.0}, BW={:.0}KiB/s, lat avg={} stdev={} ({}, slice_idle {} [{}], {} jobs x iodepth {}, bs {}, think {}, {} s virtual, seed {}, {})",
        cfg.rw.name(),
        r.iops,
        r.bw_kib_s,
        lat(r.lat_avg_us),
        lat(r.lat_stddev_us),
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

/// The report contract (`report::contract`): the fio-like figures, the groups' shares and the
/// jobs' IOPS as tables, the chart beside the figures.
impl super::contract::Report for SimulateReport {
    const COMMAND: &'static str = "simulate";
    const SCHEMA_VERSION: u32 = 1;

    fn provenance(&self) -> crate::files::provenance::Provenance {
        self.provenance.base.clone()
    }

    fn text(&self, _view: super::contract::View) -> String {
        text(self)
    }

    fn tables(&self) -> Vec<super::table::Table> {
        use super::table::{Cell, Table};
        let r = &self.result;
        let mut figures = Table::new(
            FIGURES,
            &[("variant", ""), ("device", ""), ("IOPS", "IO/s"), ("bandwidth", "KiB/s"), ("lat avg", "µs"), ("lat stdev", "µs"), ("lat p50", "µs"), ("lat p99", "µs"), ("lat max", "µs"), ("device busy", "%"), ("in flight", "requests"), ("idle timer fired", "")],
        );
        // No request completed: no latency exists to print (zeros would read as a measurement).
        let lat = |v: f64| if r.ios == 0 { Cell::missing("no requests completed") } else { Cell::num(v, 1) };
        figures.row(vec![
            Cell::text(r.variant),
            Cell::text(self.config.device.name()),
            Cell::num(r.iops, 0),
            Cell::num(r.bw_kib_s, 0),
            lat(r.lat_avg_us),
            lat(r.lat_stddev_us),
            lat(r.lat_p50_us),
            lat(r.lat_p99_us),
            lat(r.lat_max_us),
            Cell::num(r.device_busy_pct, 1),
            Cell::num(r.device_mean_in_flight, 2),
            Cell::num(r.idle_timer_fired as f64, 0),
        ]);
        figures.note(summary_line(&self.config, r));
        // A disk's latencies are seconds: each column reads in the unit its figures need.
        figures.scale_time_columns();
        let mut groups = Table::new("Groups: their share of the bytes", &[("weight", ""), ("jobs", ""), ("I/Os", ""), ("bytes", "B"), ("share", "%")]);
        for g in &r.groups {
            groups.row(vec![
                g.weight.map_or_else(|| Cell::text("root"), |w| Cell::num(w as f64, 0)),
                Cell::num(g.jobs as f64, 0),
                Cell::num(g.ios as f64, 0),
                Cell::num(g.bytes as f64, 0),
                Cell::num(100.0 * g.share, 1),
            ]);
        }
        let mut jobs = Table::new("Jobs", &[("job", ""), ("IOPS", "IO/s")]);
        for (i, iops) in r.per_job_iops.iter().enumerate() {
            jobs.row(vec![Cell::num(i as f64, 0), Cell::num(*iops, 0)]);
        }
        vec![figures, groups, jobs]
    }

    fn charts(&self) -> Vec<super::contract::Chart> {
        vec![super::contract::Chart::new("this run, beside the seed's idling table where it ran the seed's job", super::charts::simulate_svg(std::slice::from_ref(self))).beside(FIGURES)]
    }

    fn outcome(&self) -> super::contract::Outcome {
        super::contract::Outcome {
            interrupted: self.result.interrupted,
            failed_checks: if self.result.consistent { vec![] } else { vec![format!("end-of-run check failed: requests {:?}", self.result.requests)] },
            ..Default::default()
        }
    }
}

/// The figures' table title (the chart goes beside it).
const FIGURES: &str = "The run, as fio reports it";
