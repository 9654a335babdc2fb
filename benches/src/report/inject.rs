//! `schedlab kernel --inject`'s report: the kernel and its load, the workload, the sites as
//! verified, the loop and the probe, the kernel's IOPS per cost and phase, the inside ÷ outside
//! ratio of the kernel beside the model's, with intervals, the slopes and the seeds' experiment
//! judged, as tables; the terminal text is drawn from the same tables
//! ([`super::contract::text_of_tables`]).

use super::charts::ChartError;
use super::contract::{Failure, Warning, WarningKind};
use super::table::{Cell, Table, Verdict};
use crate::experiment::kernel::inject::{InjectKernel, InjectReport, Interval, CAL_ITERS};

/// The kernel, its device and the machine's load, then the workload every phase ran.
fn run_tables(r: &InjectReport) -> [Table; 2] {
    let mut kernel = Table::new(
        "The kernel and the machine's load",
        &[("kernel release", ""), ("device", ""), ("load before", ""), ("load after", "")],
    );
    kernel.row(vec![
        Cell::text(r.kernel_release.clone()),
        Cell::text(r.device.clone()),
        Cell::opt(r.load_before, 2),
        Cell::opt(r.load_after, 2),
    ]);
    kernel.note("load: the 1-minute load average");
    for f in r.failures.iter().chain(&r.output_failures) {
        kernel.note(format!("failed: {f}"));
    }
    let c = &r.config;
    let columns = [
        ("jobs", ""),
        ("rw", ""),
        ("bs", "sectors"),
        ("iodepth", ""),
        ("ioengine", ""),
        ("groups", ""),
        ("cycles per cost", ""),
    ];
    let mut workload = Table::new("The workload", &columns);
    workload.row(vec![
        Cell::num(c.threads as f64, 0),
        Cell::text(c.rw.name()),
        Cell::num(c.bs_sectors as f64, 0),
        Cell::num(c.iodepth as f64, 0),
        Cell::text(c.ioengine),
        Cell::num(c.groups as f64, 0),
        Cell::num(r.inject.cycles as f64, 0),
    ]);
    workload.note(format!("bs: sectors of 512 B ({} B a request)", c.bs_sectors * 512));
    workload.note(
        "bfq (slice_idle 0, low_latency 0); a cycle: 3 phases of 200 ms (nothing, inside, outside)",
    );
    [kernel, workload]
}

/// The sites as verified, the loop as calibrated in place and what the probe costs.
fn probe_tables(k: &InjectKernel) -> [Table; 3] {
    let v = &k.verification;
    let mut sites = Table::new(
        "The sites, verified",
        &[("site", ""), ("tracepoint", ""), ("hits", ""), ("BFQ's lock held", "hits")],
    );
    sites.row(vec![
        Cell::text("inside"),
        Cell::text("block_rq_insert"),
        Cell::num(v.inside_hits as f64, 0),
        Cell::num(v.inside_held as f64, 0),
    ]);
    sites.row(vec![
        Cell::text("outside"),
        Cell::text("block_getrq"),
        Cell::num(v.outside_hits as f64, 0),
        Cell::num(v.outside_held as f64, 0),
    ]);
    sites.note(format!(
        "BFQ's lock {:#x}: held on {:.2} % of the inside hits, {:.2} % of the outside ones",
        v.lock_addr,
        100.0 * v.inside_held_frac(),
        100.0 * v.outside_held_frac()
    ));
    let columns = [
        ("per iteration", "ns"),
        ("loop", "ns"),
        ("empty nsecs pair", "ns"),
        ("loop mean", "ns"),
        ("pair mean", "ns"),
    ];
    let mut lp = Table::new("The loop, calibrated in place", &columns);
    lp.row(vec![
        Cell::num(k.ns_per_iter, 3),
        Cell::num(v.cal_loop_ns as f64, 0),
        Cell::num(v.cal_empty_ns as f64, 0),
        Cell::num(v.cal_loop_avg_ns as f64, 0),
        Cell::num(v.cal_empty_avg_ns as f64, 0),
    ]);
    lp.note(format!(
        "{CAL_ITERS} iterations; shortest times, and their means (interrupts included)"
    ));
    let mut probe =
        Table::new("The probe", &[("unattached before", "IOPS"), ("unattached after", "IOPS")]);
    probe.row(vec![Cell::opt(k.iops_unattached_before, 0), Cell::opt(k.iops_unattached_after, 0)]);
    probe.note(match k.probe_cost_pct() {
        Some(p) => format!("the attached program costs {p:.1} % of the unattached IOPS"),
        None => "the attached program's cost: not measured".into(),
    });
    [sites, lp, probe]
}

/// The chart: cost per I/O (µs) on x, inside ÷ outside throughput on y; the kernel's ratios and
/// the model's, each with its interval, a line at 1 (no difference), and the provenance line.
pub fn inject_svg(r: &InjectReport) -> Result<String, ChartError> {
    use plotters::prelude::*;
    let lock = if r.config.model_lock == schedlab_core::LockKind::FairSpin {
        "fair-spin"
    } else {
        "parking-lot"
    };
    let model_label = format!("model ({}, {lock})", r.model_entry);
    let series: [(&str, Vec<(f64, Interval)>); 2] = [
        (
            "kernel (bpftrace in BFQ)",
            r.side_by_side
                .iter()
                .filter_map(|s| s.kernel.map(|k| (s.cost_ns as f64 / 1e3, k)))
                .collect(),
        ),
        (
            &model_label,
            r.side_by_side
                .iter()
                .filter_map(|s| s.model.map(|m| (s.cost_ns as f64 / 1e3, m)))
                .collect(),
        ),
    ];
    if series.iter().all(|(_, v)| v.is_empty()) {
        return Err(ChartError::NothingToDraw("nothing to draw: no finished measurement"));
    }
    let x_max = r.inject.costs_ns.iter().copied().max().unwrap_or(1).max(1) as f64 / 1e3 * 1.1;
    let ys = series
        .iter()
        .flat_map(|(_, v)| v.iter().flat_map(|(_, i)| [i.lo, i.hi, i.value]))
        .filter(|y| y.is_finite());
    let (lo, hi) = ys.fold((1.0f64, 1.0f64), |(a, b), y| (a.min(y), b.max(y)));
    let pad = ((hi - lo) * 0.1).max(0.02);
    let (width, height) = (super::charts::WIDTH, 400u32);
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, (width, height)).into_drawing_area();
        root.fill(&WHITE)?;
        let (plot, footer) = root.split_vertically(height - 24);
        let mut chart = ChartBuilder::on(&plot)
            .caption(
                format!("Inside ÷ outside BFQ's lock, {} jobs: kernel and model", r.config.threads),
                ("sans-serif", 16),
            )
            .margin(10)
            .x_label_area_size(40)
            .y_label_area_size(56)
            .build_cartesian_2d(-x_max * 0.05..x_max, (lo - pad)..(hi + pad))?;
        chart
            .configure_mesh()
            .x_desc("injected cost per I/O, µs")
            .y_desc("throughput inside ÷ outside")
            .label_style(("sans-serif", 12))
            .draw()?;
        chart.draw_series(LineSeries::new([(-x_max * 0.05, 1.0), (x_max, 1.0)], BLACK.mix(0.4)))?;
        let colours = [RGBColor(31, 119, 180), RGBColor(255, 127, 14)];
        for (k, (name, pts)) in series.iter().enumerate() {
            let c = colours[k];
            // The two series side by side at each cost.
            let dx = (k as f64 - 0.5) * x_max * 0.015;
            // The interval as a vertical line with ticks, the value as a dot.
            let tick = x_max * 0.008;
            chart
                .draw_series(pts.iter().flat_map(|(x, i)| {
                    let x = x + dx;
                    [
                        PathElement::new(vec![(x, i.lo), (x, i.hi)], c.stroke_width(2)),
                        PathElement::new(
                            vec![(x - tick, i.lo), (x + tick, i.lo)],
                            c.stroke_width(2),
                        ),
                        PathElement::new(
                            vec![(x - tick, i.hi), (x + tick, i.hi)],
                            c.stroke_width(2),
                        ),
                    ]
                }))?
                .label(*name)
                .legend(move |(x, y)| Rectangle::new([(x, y - 5), (x + 12, y + 5)], c.filled()));
            chart.draw_series(
                pts.iter().map(|(x, i)| Circle::new((x + dx, i.value), 4, c.filled())),
            )?;
            chart.draw_series(LineSeries::new(
                pts.iter().map(|(x, i)| (x + dx, i.value)),
                c.mix(0.6),
            ))?;
        }
        chart
            .configure_series_labels()
            .position(SeriesLabelPosition::LowerLeft)
            .label_font(("sans-serif", 12))
            .background_style(WHITE.mix(0.8))
            .border_style(BLACK.mix(0.3))
            .draw()?;
        footer.draw(&Text::new(
            super::charts::provenance_line(&r.provenance, r.config.model_lock.name()),
            (8, 6),
            ("sans-serif", 12).into_font().color(&BLACK.mix(0.75)),
        ))?;
        root.present()?;
    }
    Ok(svg)
}

/// The report contract (`report::contract`) of `schedlab kernel --inject`: the kernel's phases,
/// the ratio beside the model's with its verdict, the slopes; the chart beside the ratios.
impl super::contract::Report for InjectReport {
    const COMMAND: &'static str = "kernel";
    /// 2: a figure its tables refuse is `null` here too (`contract::Report::json_in`).
    const SCHEMA_VERSION: u32 = 2;
    const VERDICT_FIELDS: &'static [&'static str] = &["model_within", "verdict"];

    fn provenance(&self) -> crate::files::provenance::Provenance {
        self.provenance.clone()
    }

    fn tables(&self, judge: super::contract::Judge) -> Vec<Table> {
        let interval = |i: Option<Interval>| -> [Cell; 3] {
            match i {
                Some(i) => [Cell::num(i.value, 3), Cell::num(i.lo, 3), Cell::num(i.hi, 3)],
                None => [Cell::missing("-"), Cell::missing("-"), Cell::missing("-")],
            }
        };
        let mut tables = Vec::from(run_tables(self));
        if let Some(k) = &self.kernel {
            tables.extend(probe_tables(k));
            let columns = [
                ("cost", "ns"),
                ("iters", ""),
                ("cycles", ""),
                ("nothing", "IOPS"),
                ("inside", "IOPS"),
                ("outside", "IOPS"),
                ("ratio", "×"),
                ("95% low", "×"),
                ("95% high", "×"),
                ("median", "×"),
            ];
            let mut t = Table::new("The kernel, per injected cost", &columns);
            for kc in &k.costs {
                let mut row = vec![
                    Cell::num(kc.cost_ns as f64, 0),
                    Cell::num(kc.iterations as f64, 0),
                    Cell::num(kc.cycles as f64, 0),
                    Cell::num(kc.iops_nothing, 0),
                    Cell::num(kc.iops_inside, 0),
                    Cell::num(kc.iops_outside, 0),
                ];
                row.extend(interval(kc.ratio));
                row.push(Cell::num(kc.cycle_ratio_median, 3));
                t.row(row);
            }
            t.note(
                "IOPS pooled over cycles; ratio: inside ÷ outside, its 95% bootstrap \
                interval over cycles;",
            );
            t.note("median: of the per-cycle ratios");
            tables.push(t);
        }
        let columns = [
            ("cost", "ns"),
            ("kernel", "×"),
            ("kernel low", "×"),
            ("kernel high", "×"),
            ("model", "×"),
            ("model low", "×"),
            ("model high", "×"),
            ("model within", ""),
        ];
        let mut side = Table::new(RATIOS, &columns);
        for row in &self.side_by_side {
            let mut cells = vec![Cell::num(row.cost_ns as f64, 0)];
            cells.extend(interval(row.kernel));
            cells.extend(interval(row.model));
            cells.push(match row.model_within {
                Some(true) => judge.cell(Verdict::Met, "within"),
                Some(false) => judge.cell(Verdict::Missed, "outside"),
                None => Cell::missing("-"),
            });
            side.row(cells);
        }
        side.note(format!(
            "inside ÷ outside throughput; the model is {} on {}, {} ns outside work per request;",
            self.model_entry,
            self.config.model_lock.name(),
            self.model_outside_ns
        ));
        side.note(format!(
            "the model's interval: min..max over {} rounds; model within: its value \
                inside the kernel's interval",
            self.config.rounds
        ));
        tables.push(side);
        let ks = self.kernel.as_ref().map(|k| k.slopes.clone()).unwrap_or_default();
        let ms = &self.model_slopes;
        let mut slopes = Table::new(
            "Slopes: throughput per µs of cost, as a share of the nothing phase's",
            &[("", ""), ("inside", "%/µs"), ("outside", "%/µs"), ("inside ÷ outside", "%/µs")],
        );
        for (name, s) in [("kernel", &ks), ("model", ms)] {
            let pct = |v: Option<f64>| Cell::opt(v.map(|v| 100.0 * v), 2);
            slopes.row(vec![
                Cell::text(name),
                pct(s.inside_per_us),
                pct(s.outside_per_us),
                pct(s.ratio_per_us),
            ]);
        }
        tables.push(slopes);
        let j = &self.judgement;
        let columns =
            [("figure", ""), ("kernel", ""), ("model", ""), ("null model", ""), ("verdict", "")];
        let mut judged =
            Table::new("The seeds' experiment, judged against a lock-free null model", &columns);
        for f in &j.figures {
            let slope = f.figure.contains("slope");
            let num = |v: Option<f64>| {
                if slope {
                    Cell::opt(v.map(|v| 100.0 * v), 2)
                } else {
                    Cell::opt(v, 3)
                }
            };
            let verdict = super::kernel::figure_verdict_cell(&f.verdict, judge);
            judged.row(vec![
                Cell::text(&f.figure),
                num(f.kernel),
                num(f.model),
                num(f.null),
                verdict,
            ]);
        }
        // Each band once, with the figures judged on it (a column of them would not fit).
        let mut bands: Vec<&str> = Vec::new();
        for f in &j.figures {
            if !bands.contains(&f.band.as_str()) {
                bands.push(&f.band);
            }
        }
        for band in bands {
            let figures: Vec<&str> =
                j.figures.iter().filter(|f| f.band == band).map(|f| f.figure.as_str()).collect();
            judged.note(format!("band of {}: {band}", figures.join(", ")));
        }
        let null_t =
            j.null_us_per_io.map_or_else(|| "-".into(), |t| format!("{t:.2} µs per I/O per job"));
        judged.note(format!("null model: no lock, the cost only adds CPU time; {null_t}"));
        judged.note(if judge.judges() {
            j.summary_line()
        } else {
            super::kernel::VERDICTS_NOT_COUNTED.to_string()
        });
        tables.push(judged);
        tables
    }

    fn charts(&self) -> Vec<super::contract::Chart> {
        vec![super::contract::Chart::new(
            "inside ÷ outside against the injected cost",
            inject_svg(self),
        )
        .beside(RATIOS)]
    }

    fn outcome(&self) -> super::contract::Outcome {
        super::contract::Outcome {
            interrupted: self.interrupted,
            warnings: self.warnings.iter().map(|w| inject_warning(w)).collect(),
            // Told on stderr as they were collected (`experiment::kernel::inject::run`).
            failed_runs: self.failures.iter().map(Failure::told).collect(),
            failed_outputs: self.output_failures.iter().map(Failure::told).collect(),
            ..Default::default()
        }
    }
}

/// An `--inject` warning (said as a line as it went) typed by what it says.
fn inject_warning(line: &str) -> Warning {
    let kind = if line.starts_with("clean-up of an earlier run") {
        WarningKind::CleanUp
    } else if line.contains("attached program cost") {
        WarningKind::RecorderCost
    } else if line.contains("other processes") || line.contains("loaded") {
        WarningKind::DisturbedByOtherLoad
    } else {
        WarningKind::Other
    };
    Warning::run(kind, line)
}

/// The ratio table's title (the chart goes beside it).
const RATIOS: &str = "Inside ÷ outside: the kernel beside the model";

#[cfg(test)]
mod tests {
    use crate::driver::completion::CompletionMode;
    use crate::driver::workload::Rw;
    use crate::experiment::kernel::inject::{
        self as k, InjectConfig, InjectKernel, InjectReport, InjectRow, KernelSettings, Slopes,
    };
    use crate::files::provenance::Provenance;
    use crate::report::contract::{text_within_contract, View};

    fn fixture(name: &str) -> String {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/fixtures/kernel/inject-2jobs")
            .join(name);
        std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
    }

    /// The recorded run of `fixtures/kernel/inject-2jobs` (2 jobs, 60 cycles of 0, 500, 1000 and
    /// 2000 ns), with no model, as `schedlab kernel --inject --no-model` reports it.
    fn recorded() -> InjectReport {
        let verification =
            k::parse_verification(&fixture("verify.json"), &[0xffff88841dbb54b8]).unwrap();
        let phases = k::parse_phases(&fixture("phases.json")).unwrap();
        let costs_ns = vec![0, 500, 1000, 2000];
        let costs = k::kernel_costs(&costs_ns, &[0, 462, 925, 1849], &k::cycles(&phases));
        let slopes = Slopes {
            inside_per_us: Some(-0.012),
            outside_per_us: Some(-0.0105),
            ratio_per_us: Some(-0.0021),
        };
        let kernel = InjectKernel {
            ns_per_iter: verification.ns_per_iter(),
            verification,
            iops_unattached_before: Some(91_234.0),
            iops_unattached_after: Some(88_765.0),
            costs,
            phases,
            slopes,
        };
        let side_by_side: Vec<InjectRow> = costs_ns
            .iter()
            .map(|&cost_ns| {
                let ratio =
                    kernel.costs.iter().find(|c| c.cost_ns == cost_ns).and_then(|c| c.ratio);
                InjectRow { cost_ns, kernel: ratio, model: None, model_within: None }
            })
            .collect();
        let model_slopes = Slopes::default();
        let judgement = k::judge(&side_by_side, Some(&kernel), &model_slopes, 2);
        let config = KernelSettings {
            threads: 2,
            rw: Rw::RandRead,
            bs_sectors: 8,
            iodepth: 32,
            ioengine: "io_uring",
            duration: std::time::Duration::from_secs(1),
            ramp: std::time::Duration::ZERO,
            rounds: 3,
            groups: 0,
            weights: Vec::new(),
            size_bytes: 1 << 30,
            device: None,
            model: false,
            model_lock: schedlab_core::LockKind::ParkingLot,
            model_kernel: schedlab_core::KernelProfile::default(),
            model_completion: CompletionMode::Context,
            model_outside_ns: None,
        };
        let inject = InjectConfig {
            costs_ns,
            cycles: 60,
            raw_dir: None,
            model_from_file: None,
            model_from: None,
            kernel_from_file: None,
            kernel_from: None,
        };
        InjectReport {
            provenance: Provenance::collect(),
            kernel_release: "6.18.44".into(),
            device: "/dev/loop0 (1 GiB in /dev/shm)".into(),
            config,
            inject,
            model_entry: "queue-lock",
            model_outside_ns: 0,
            load_before: Some(12.9),
            load_after: Some(14.8),
            kernel: Some(kernel),
            model: Vec::new(),
            model_slopes,
            side_by_side,
            judgement,
            warnings: vec!["the machine was loaded (load 12.9 on 2 CPUs)".into()],
            failures: Vec::new(),
            output_failures: Vec::new(),
            interrupted: false,
        }
    }

    #[test]
    fn the_inject_text_is_drawn_from_its_tables_within_130_columns() {
        let report = recorded();
        let text = text_within_contract(&report, 1);
        for said in [
            "6.18.44",
            "block_rq_insert",
            "281595",
            "2193",
            "91234",
            "The kernel, per injected cost",
            "1.037",
            "Slopes",
            "null model",
            "the machine was loaded",
        ] {
            assert!(text.contains(said), "{said:?} is not in the text:\n{text}");
        }
    }

    #[test]
    fn inject_judges_nothing_on_disturbed_runs() {
        use crate::experiment::kernel::fidelity::Verdict as FigureVerdict;
        use crate::report::contract::judged_only_when_undisturbed;
        let disturbed = View { disturbed: true, ..View::default() };
        // The recorded run has no model: give it a model within and a figure judged evidence.
        let mut report = recorded();
        report.side_by_side.iter_mut().for_each(|r| r.model_within = Some(true));
        report.judgement.figures[0].verdict = FigureVerdict::Evidence;
        let judged = judged_only_when_undisturbed(&report, disturbed).unwrap();
        assert!(judged > report.side_by_side.len(), "the fixture has verdicts to take away");
    }
}
