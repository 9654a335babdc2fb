//! `schedlab kernel --inject`'s tables: the sites as verified, the kernel's IOPS per cost and
//! phase, the inside ÷ outside ratio of the kernel beside the model's, with intervals, and the
//! slopes.

use crate::experiment::kernel::fidelity::Verdict as FigureVerdict;
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
    let j = &r.judgement;
    let null_t = j.null_us_per_io.map_or_else(|| "-".into(), |t| format!("{t:.2} µs per I/O per job"));
    let _ = writeln!(out, "
the seeds' experiment, judged (null model: no lock, the cost only adds CPU time; {null_t}):");
    let _ = writeln!(out, "{:<28} {:>10} {:>10} {:>10} {:<30} {}", "figure", "kernel", "model", "null", "band", "verdict");
    for f in &j.figures {
        let num = |v: Option<f64>| v.map_or_else(|| "-".into(), |v| if f.figure.contains("slope") { format!("{:+.2}%", 100.0 * v) } else { format!("{v:.3}") });
        let _ = writeln!(out, "{:<28} {:>10} {:>10} {:>10} {:<30} {}", f.figure, num(f.kernel), num(f.model), num(f.null), f.band, f.verdict.label());
    }
    let _ = writeln!(out, "{}", j.summary_line());
    for w in &r.warnings {
        let _ = writeln!(out, "warning: {w}");
    }
    for f in r.failures.iter().chain(&r.output_failures) {
        let _ = writeln!(out, "failed: {f}");
    }
    if r.interrupted {
        let _ = writeln!(out, "interrupted: the figures above are what finished");
    }
    out
}

/// The chart: cost per I/O (µs) on x, inside ÷ outside throughput on y; the kernel's ratios and
/// the model's, each with its interval, a line at 1 (no difference), and the provenance line.
pub fn inject_svg(r: &InjectReport) -> Result<String, String> {
    use plotters::prelude::*;
    let err = |e: &dyn std::fmt::Display| format!("cannot draw the chart: {e}");
    let lock = if r.config.model_lock == schedlab_core::LockKind::FairSpin { "fair-spin" } else { "parking-lot" };
    let model_label = format!("model ({}, {lock})", r.model_entry);
    let series: [(&str, Vec<(f64, Interval)>); 2] = [
        ("kernel (bpftrace in BFQ)", r.side_by_side.iter().filter_map(|s| s.kernel.map(|k| (s.cost_ns as f64 / 1e3, k))).collect()),
        (
            &model_label,
            r.side_by_side.iter().filter_map(|s| s.model.map(|m| (s.cost_ns as f64 / 1e3, m))).collect(),
        ),
    ];
    if series.iter().all(|(_, v)| v.is_empty()) {
        return Err("nothing to draw: no finished measurement".into());
    }
    let x_max = r.inject.costs_ns.iter().copied().max().unwrap_or(1).max(1) as f64 / 1e3 * 1.1;
    let ys = series.iter().flat_map(|(_, v)| v.iter().flat_map(|(_, i)| [i.lo, i.hi, i.value])).filter(|y| y.is_finite());
    let (lo, hi) = ys.fold((1.0f64, 1.0f64), |(a, b), y| (a.min(y), b.max(y)));
    let pad = ((hi - lo) * 0.1).max(0.02);
    let (width, height) = (super::charts::WIDTH, 400u32);
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, (width, height)).into_drawing_area();
        root.fill(&WHITE).map_err(|e| err(&e))?;
        let (plot, footer) = root.split_vertically(height - 24);
        let mut chart = ChartBuilder::on(&plot)
            .caption(format!("Inside ÷ outside BFQ's lock, {} jobs: kernel and model", r.config.threads), ("sans-serif", 16))
            .margin(10)
            .x_label_area_size(40)
            .y_label_area_size(56)
            .build_cartesian_2d(-x_max * 0.05..x_max, (lo - pad)..(hi + pad))
            .map_err(|e| err(&e))?;
        chart
            .configure_mesh()
            .x_desc("injected cost per I/O, µs")
            .y_desc("throughput inside ÷ outside")
            .label_style(("sans-serif", 12))
            .draw()
            .map_err(|e| err(&e))?;
        chart.draw_series(LineSeries::new([(-x_max * 0.05, 1.0), (x_max, 1.0)], BLACK.mix(0.4))).map_err(|e| err(&e))?;
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
                        PathElement::new(vec![(x - tick, i.lo), (x + tick, i.lo)], c.stroke_width(2)),
                        PathElement::new(vec![(x - tick, i.hi), (x + tick, i.hi)], c.stroke_width(2)),
                    ]
                }))
                .map_err(|e| err(&e))?
                .label(*name)
                .legend(move |(x, y)| Rectangle::new([(x, y - 5), (x + 12, y + 5)], c.filled()));
            chart.draw_series(pts.iter().map(|(x, i)| Circle::new((x + dx, i.value), 4, c.filled()))).map_err(|e| err(&e))?;
            chart.draw_series(LineSeries::new(pts.iter().map(|(x, i)| (x + dx, i.value)), c.mix(0.6))).map_err(|e| err(&e))?;
        }
        chart
            .configure_series_labels()
            .position(SeriesLabelPosition::LowerLeft)
            .label_font(("sans-serif", 12))
            .background_style(WHITE.mix(0.8))
            .border_style(BLACK.mix(0.3))
            .draw()
            .map_err(|e| err(&e))?;
        footer
            .draw(&Text::new(super::charts::provenance_line(&r.provenance, r.config.model_lock.name()), (8, 6), ("sans-serif", 12).into_font().color(&BLACK.mix(0.75))))
            .map_err(|e| err(&e))?;
        root.present().map_err(|e| err(&e))?;
    }
    Ok(svg)
}

/// The report contract (`report::contract`) of `schedlab kernel --inject`: the kernel's phases,
/// the ratio beside the model's with its verdict, the slopes; the chart beside the ratios.
impl super::contract::Report for InjectReport {
    const COMMAND: &'static str = "kernel";
    const SCHEMA_VERSION: u32 = 1;

    fn provenance(&self) -> crate::files::provenance::Provenance {
        self.provenance.clone()
    }

    fn text(&self, _view: super::contract::View) -> String {
        inject_text(self)
    }

    fn tables(&self) -> Vec<super::table::Table> {
        use super::table::{Cell, Table, Verdict};
        let interval = |i: Option<Interval>| -> [Cell; 3] {
            match i {
                Some(i) => [Cell::num(i.value, 3), Cell::num(i.lo, 3), Cell::num(i.hi, 3)],
                None => [Cell::missing("-"), Cell::missing("-"), Cell::missing("-")],
            }
        };
        let mut tables = Vec::new();
        if let Some(k) = &self.kernel {
            let mut t = Table::new(
                "The kernel, per injected cost",
                &[("cost", "ns"), ("iterations", ""), ("cycles", ""), ("nothing", "IOPS"), ("inside", "IOPS"), ("outside", "IOPS"), ("inside ÷ outside", "×"), ("95 % low", "×"), ("95 % high", "×")],
            );
            for kc in &k.costs {
                let mut row = vec![Cell::num(kc.cost_ns as f64, 0), Cell::num(kc.iterations as f64, 0), Cell::num(kc.cycles as f64, 0), Cell::num(kc.iops_nothing, 0), Cell::num(kc.iops_inside, 0), Cell::num(kc.iops_outside, 0)];
                row.extend(interval(kc.ratio));
                t.row(row);
            }
            tables.push(t);
        }
        let mut side = Table::new(
            RATIOS,
            &[("cost", "ns"), ("kernel", "×"), ("kernel low", "×"), ("kernel high", "×"), ("model", "×"), ("model low", "×"), ("model high", "×"), ("model within the kernel's interval", "")],
        );
        for row in &self.side_by_side {
            let mut cells = vec![Cell::num(row.cost_ns as f64, 0)];
            cells.extend(interval(row.kernel));
            cells.extend(interval(row.model));
            cells.push(match row.model_within {
                Some(true) => Cell::judged(Verdict::Met, "within"),
                Some(false) => Cell::judged(Verdict::Missed, "outside"),
                None => Cell::missing("-"),
            });
            side.row(cells);
        }
        side.note(format!("inside ÷ outside throughput; the model is {} on {}, {} ns outside work per request", self.model_entry, self.config.model_lock.name(), self.model_outside_ns));
        tables.push(side);
        let ks = self.kernel.as_ref().map(|k| k.slopes.clone()).unwrap_or_default();
        let ms = &self.model_slopes;
        let mut slopes = Table::new("Slopes: throughput per µs of cost, as a share of the nothing phase's", &[("", ""), ("inside", "%/µs"), ("outside", "%/µs"), ("inside ÷ outside", "%/µs")]);
        for (name, s) in [("kernel", &ks), ("model", ms)] {
            let pct = |v: Option<f64>| Cell::opt(v.map(|v| 100.0 * v), 2);
            slopes.row(vec![Cell::text(name), pct(s.inside_per_us), pct(s.outside_per_us), pct(s.ratio_per_us)]);
        }
        tables.push(slopes);
        let j = &self.judgement;
        let mut judged = Table::new("The seeds' experiment, judged against a lock-free null model", &[("figure", ""), ("kernel", ""), ("model", ""), ("null model", ""), ("band", ""), ("verdict", "")]);
        for f in &j.figures {
            let slope = f.figure.contains("slope");
            let num = |v: Option<f64>| if slope { Cell::opt(v.map(|v| 100.0 * v), 2) } else { Cell::opt(v, 3) };
            let verdict = match &f.verdict {
                FigureVerdict::Evidence => Cell::judged(Verdict::Met, &f.verdict.label()),
                FigureVerdict::Outside => Cell::judged(Verdict::Missed, &f.verdict.label()),
                v => Cell::text(&v.label()),
            };
            judged.row(vec![Cell::text(&f.figure), num(f.kernel), num(f.model), num(f.null), Cell::text(&f.band), verdict]);
        }
        judged.note(j.summary_line());
        tables.push(judged);
        tables
    }

    fn charts(&self) -> Vec<super::contract::Chart> {
        vec![super::contract::Chart::new("inside ÷ outside against the injected cost", inject_svg(self)).beside(RATIOS)]
    }

    fn outcome(&self) -> super::contract::Outcome {
        super::contract::Outcome {
            interrupted: self.interrupted,
            warnings: self.warnings.clone(),
            // Told on stderr as they were collected (`experiment::kernel::inject::run`).
            failed_runs: if self.failures.is_empty() { vec![] } else { vec![String::new()] },
            failed_outputs: if self.output_failures.is_empty() { vec![] } else { vec![String::new()] },
            ..Default::default()
        }
    }
}

/// The ratio table's title (the chart goes beside it).
const RATIOS: &str = "Inside ÷ outside: the kernel beside the model";
