//! The text of `schedlab roundtrip`'s report: per variant the median round trip, its range over
//! rounds, the ratio to `no-stats`, and with the lock statistics their on windows and their cost;
//! the ratio and the cost each with its 95 % bootstrap interval over rounds.

use crate::experiment::roundtrip::{RoundtripReport, WINDOW_PAIRS};
use super::table::interval_text;
use std::fmt::Write as _;

/// The header lines, then the table (or why there is none), then what the cost column means.
pub fn text(report: &RoundtripReport) -> String {
    let mut s = String::new();
    let _ = writeln!(
        s,
        "round trip (insert + dispatch + completion), 1 thread, {}, {} x {} round trips",
        report.lock, report.rounds_done, report.iterations
    );
    let _ = writeln!(s, "{}", report.provenance.one_line());
    if report.interrupted {
        let _ = writeln!(s, "(interrupted: {} of {} rounds finished; the table covers those)", report.rounds_done, report.rounds);
    }
    if report.rounds_done == 0 {
        s.push_str("no round finished: nothing measured\n");
        return s;
    }
    let (median, range, ratio, interval) = ("ns median", "min-max", "x no-stats", "[95% interval]");
    let _ = write!(s, "{:<12} {median:>10} {range:>17} {ratio:>11} {interval:>13}", "variant");
    if let Some(mode) = report.lockstat {
        let (on, cost, range) = (format!("{mode} ns med"), "cost", "cost min..max");
        let _ = write!(s, " {on:>16} {cost:>9} {range:>17} {interval:>15}");
    }
    s.push('\n');
    for v in &report.variants {
        let ratio = report.against_no_stats(v).map_or("-".into(), |r| format!("{r:.2}"));
        let ratio_interval = interval_text(v.vs_no_stats_interval, 2, "");
        let range = format!("{:.0}-{:.0}", v.ns.min, v.ns.max);
        let (variant, median) = (v.variant, v.ns.median);
        let _ = write!(s, "{variant:<12} {median:>10.0} {range:>17} {ratio:>11}");
        let _ = write!(s, " {ratio_interval:>13}");
        if let (Some(on), Some(cost)) = (&v.lockstat_ns, &v.lockstat_cost_pct) {
            let cost_interval = interval_text(v.lockstat_cost_interval_pct, 1, "%");
            let range = format!("{:.1}..{:.1}%", cost.min, cost.max);
            let (on, cost) = (on.median, cost.median);
            let _ = write!(s, " {on:>16.0} {cost:>8.1}% {range:>17} {cost_interval:>15}");
        }
        s.push('\n');
    }
    if let Some(why) = report.variants.iter().find_map(|v| v.no_interval.as_deref()) {
        let _ = writeln!(s, "[95% interval]: {why}");
    } else {
        let _ = writeln!(
            s,
            "[95% interval]: bootstrap over the {} rounds of the median of the per-round ratios \
             (each ratio within one round)",
            report.rounds_done
        );
    }
    if let Some(mode) = report.lockstat {
        let _ = writeln!(
            s,
            "cost: lock statistics on ({mode}) against off in {} alternating windows of {} round trips on one scheduler (each on window against its two off neighbours); per round the median over its windows; shown: the median over rounds, and the range of the rounds",
            2 * WINDOW_PAIRS + 1,
            report.window
        );
    }
    s
}

/// The report contract (`report::contract`): one row per variant, the chart beside it.
impl super::contract::Report for RoundtripReport {
    const COMMAND: &'static str = "roundtrip";
    const SCHEMA_VERSION: u32 = 1;

    fn provenance(&self) -> crate::files::provenance::Provenance {
        self.provenance.clone()
    }

    fn text(&self, _view: super::contract::View) -> String {
        text(self)
    }

    fn tables(&self) -> Vec<super::table::Table> {
        use super::table::{Cell, Table};
        let mut t = Table::new(
            ROUND_TRIPS,
            &[
                ("variant", ""),
                ("median", "ns"),
                ("min", "ns"),
                ("max", "ns"),
                ("÷ no-stats", "×"),
                ("÷ no-stats 95% low", "×"),
                ("÷ no-stats 95% high", "×"),
                ("with lock statistics", "ns"),
                ("their cost", "%"),
                ("cost min", "%"),
                ("cost max", "%"),
                ("cost 95% low", "%"),
                ("cost 95% high", "%"),
            ],
        );
        if self.rounds_done == 0 {
            t.note("no round finished: nothing measured");
            return vec![t];
        }
        for v in &self.variants {
            let (on, cost) = (v.lockstat_ns.as_ref(), v.lockstat_cost_pct.as_ref());
            t.row(vec![
                Cell::text(v.variant),
                Cell::num(v.ns.median, 0),
                Cell::num(v.ns.min, 0),
                Cell::num(v.ns.max, 0),
                Cell::opt(self.against_no_stats(v), 2),
                Cell::opt(v.vs_no_stats_interval.map(|i| i.lo), 2),
                Cell::opt(v.vs_no_stats_interval.map(|i| i.hi), 2),
                Cell::opt(on.map(|o| o.median), 0),
                Cell::opt(cost.map(|c| c.median), 1),
                Cell::opt(cost.map(|c| c.min), 1),
                Cell::opt(cost.map(|c| c.max), 1),
                Cell::opt(v.lockstat_cost_interval_pct.map(|i| i.lo), 1),
                Cell::opt(v.lockstat_cost_interval_pct.map(|i| i.hi), 1),
            ]);
        }
        t.note(format!("round trip = insert + dispatch + completion on 1 thread, {}; median over {} rounds of {} round trips", self.lock, self.rounds_done, self.iterations));
        t.note(match self.variants.iter().find_map(|v| v.no_interval.as_deref()) {
            Some(why) => format!("95% intervals: {why}"),
            None => "95% intervals: bootstrap over rounds of the median of the per-round ratios \
                     (÷ no-stats within each round)"
                .into(),
        });
        vec![t]
    }

    fn charts(&self) -> Vec<super::contract::Chart> {
        vec![super::contract::Chart::new("ns per round trip", super::charts::roundtrip_svg(self)).beside(ROUND_TRIPS)]
    }

    fn outcome(&self) -> super::contract::Outcome {
        super::contract::Outcome { interrupted: self.interrupted, ..Default::default() }
    }
}

/// The table's title (the chart goes beside it).
const ROUND_TRIPS: &str = "Round trips per variant";
