//! `schedlab simulate`'s report: the figures as fio reports them (and fio's group-reporting line
//! under them), the settings that produced them, the device, the groups' shares and the jobs'
//! IOPS, as tables; the terminal text is drawn from the same tables
//! ([`super::contract::text_of_tables`]); after a stop, the virtual time the figures cover.

use super::table::{Cell, Table};
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

/// fio's group-reporting figures on one line ("randread: IOPS=..., BW=...KiB/s, lat avg=...
/// stdev=..."), or that no request completed.
pub fn summary_line(cfg: &SimConfig, r: &SimResult) -> String {
    // No request completed: there is no latency to report (zeros would read as a measurement).
    if r.ios == 0 {
        return format!("{}: no requests completed in {} s virtual", cfg.rw.name(), r.runtime_s);
    }
    // fio's unit: µs up to 10 ms, then ms, then s (a disk's queueing reaches seconds).
    let lat = |us: f64| match us {
        _ if us >= 1e7 => format!("{:.2}s", us / 1e6),
        _ if us >= 1e4 => format!("{:.1}ms", us / 1e3),
        _ => format!("{us:.1}us"),
    };
    format!(
        "{}: IOPS={:.0}, BW={:.0}KiB/s, lat avg={} stdev={}",
        cfg.rw.name(),
        r.iops,
        r.bw_kib_s,
        lat(r.lat_avg_us),
        lat(r.lat_stddev_us),
    )
}

/// What produced the figures: the job, the device's idling and where it was decided, the
/// virtual time, the seed and the variant.
fn settings_table(cfg: &SimConfig, r: &SimResult) -> Table {
    let source = match r.slice_idle_source {
        SliceIdleSource::Registered => "registered",
        SliceIdleSource::Init => "init",
        SliceIdleSource::Explicit => "explicit",
    };
    let columns = [
        ("rw", ""),
        ("device", ""),
        ("jobs", ""),
        ("iodepth", ""),
        ("bs", ""),
        ("think", ""),
        ("slice_idle", ""),
        ("decided", ""),
        ("virtual time", "s"),
        ("seed", ""),
        ("variant", ""),
    ];
    let mut t = Table::new("The settings", &columns);
    t.row(vec![
        Cell::text(cfg.rw.name()),
        Cell::text(cfg.device.name()),
        Cell::num(cfg.jobs as f64, 0),
        Cell::num(cfg.iodepth as f64, 0),
        Cell::text(bs_text(cfg.bs_sectors)),
        Cell::text(duration_text(cfg.think_ns)),
        Cell::text(duration_text(r.slice_idle_ns)),
        Cell::text(source),
        Cell::shown(r.runtime_s, r.runtime_s.to_string()),
        Cell::num(cfg.seed as f64, 0),
        Cell::text(r.variant),
    ]);
    t.note(
        "decided: where slice_idle came from (registered: after the device's probe; \
        init: before it; explicit: given)",
    );
    if r.interrupted {
        t.note(format!("interrupted at {:.6} virtual s: the figures cover that time", r.runtime_s));
    }
    t
}

/// The report contract (`report::contract`): the fio-like figures, the groups' shares and the
/// jobs' IOPS as tables, the chart beside the figures.
impl super::contract::Report for SimulateReport {
    const COMMAND: &'static str = "simulate";
    /// 2: a figure its tables refuse is `null` here too (`contract::Report::json_in`).
    const SCHEMA_VERSION: u32 = 2;

    fn provenance(&self) -> crate::files::provenance::Provenance {
        self.provenance.base.clone()
    }

    fn text(&self, view: super::contract::View) -> String {
        let tables = super::contract::text_of_tables(&self.tables(self.judge(view)));
        format!("{tables}{}", super::contract::text_of_outcome(&self.outcome()))
    }

    fn tables(&self, _judge: super::contract::Judge) -> Vec<super::table::Table> {
        let r = &self.result;
        let mut figures = Table::new(
            FIGURES,
            &[
                ("IOPS", "IO/s"),
                ("bandwidth", "KiB/s"),
                ("lat avg", "µs"),
                ("lat stdev", "µs"),
                ("lat p50", "µs"),
                ("lat p99", "µs"),
                ("lat max", "µs"),
            ],
        );
        // No request completed: no latency exists to print (zeros would read as a measurement).
        let lat = |v: f64| if r.ios == 0 { Cell::missing("-") } else { Cell::num(v, 1) };
        figures.row(vec![
            Cell::num(r.iops, 0),
            Cell::num(r.bw_kib_s, 0),
            lat(r.lat_avg_us),
            lat(r.lat_stddev_us),
            lat(r.lat_p50_us),
            lat(r.lat_p99_us),
            lat(r.lat_max_us),
        ]);
        figures.note(summary_line(&self.config, r));
        // A disk's latencies are seconds: each column reads in the unit its figures need.
        figures.scale_time_columns();
        let mut device = Table::new(
            "The device",
            &[("device", ""), ("busy", "%"), ("in flight", "requests"), ("idle timer fired", "")],
        );
        device.row(vec![
            Cell::text(self.config.device.name()),
            Cell::num(r.device_busy_pct, 1),
            Cell::num(r.device_mean_in_flight, 2),
            Cell::num(r.idle_timer_fired as f64, 0),
        ]);
        device.note("in flight: the mean number of requests at the device");
        let mut groups = Table::new(
            "Groups: their share of the bytes",
            &[("weight", ""), ("jobs", ""), ("I/Os", ""), ("bytes", "B"), ("share", "%")],
        );
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
            // The job's number is its name, not a figure.
            jobs.row(vec![Cell::text(i.to_string()), Cell::num(*iops, 0)]);
        }
        vec![figures, settings_table(&self.config, r), device, groups, jobs]
    }

    fn charts(&self) -> Vec<super::contract::Chart> {
        vec![super::contract::Chart::new(
            "this run, beside the seed's idling table where it ran the seed's job",
            super::charts::simulate_svg(std::slice::from_ref(self)),
        )
        .beside(FIGURES)]
    }

    fn outcome(&self) -> super::contract::Outcome {
        super::contract::Outcome {
            interrupted: self.result.interrupted,
            failed_checks: if self.result.consistent {
                vec![]
            } else {
                vec![format!("end-of-run check failed: requests {:?}", self.result.requests)]
            },
            ..Default::default()
        }
    }
}

/// The figures' table title (the chart goes beside it).
const FIGURES: &str = "The run, as fio reports it";

#[cfg(test)]
mod tests {
    use crate::experiment::observer::Silent;
    use crate::experiment::simulate::{run, SimulateConfig};
    use crate::policy_sim::{DeviceModel, SimConfig};
    use crate::report::contract::text_within_contract;
    use schedlab_core::sync::AtomicBool;

    fn simulated(sim: SimConfig) -> crate::experiment::simulate::SimulateReport {
        run(
            &SimulateConfig { sim, variant: "no-stats".into() },
            &AtomicBool::new(false),
            &mut Silent,
        )
        .unwrap()
    }

    #[test]
    fn the_simulate_text_is_drawn_from_its_tables_within_130_columns() {
        let ssd = SimConfig { runtime_ns: 20_000_000, jobs: 4, ..SimConfig::default() };
        let hdd = SimConfig {
            device: DeviceModel::from_name("hdd").unwrap(),
            jobs: 2,
            iodepth: 1,
            runtime_ns: 200_000_000,
            ..SimConfig::default()
        };
        let nothing = SimConfig { runtime_ns: 1_000, ..SimConfig::default() };
        for (sim, said) in
            [(ssd, "randread: IOPS="), (hdd, "IOPS="), (nothing, "no requests completed")]
        {
            let report = simulated(sim);
            let text = text_within_contract(&report, 0);
            assert_eq!(text.matches(said).count(), 1, "fio's line, once:\n{text}");
            for table in ["The run, as fio reports it", "The settings", "The device", "Jobs"] {
                assert!(text.contains(table), "{table}:\n{text}");
            }
        }
    }
}
