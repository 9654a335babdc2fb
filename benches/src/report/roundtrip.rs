//! `schedlab roundtrip`'s report: per variant the median round trip, its range over rounds, the
//! ratio to `no-stats`, and with the lock statistics their on windows and their cost; the ratio
//! and the cost each with its 95 % bootstrap interval over rounds. The terminal text is drawn
//! from the same tables ([`super::contract::text_of_tables`]).

use super::table::{Cell, Table};
use crate::experiment::roundtrip::{RoundtripReport, WINDOW_PAIRS};

/// The lock statistics' cost per variant: their on windows against the off ones beside them.
fn cost_table(report: &RoundtripReport, mode: &str) -> Table {
    let columns = [
        ("variant", ""),
        ("with statistics", "ns"),
        ("cost", "%"),
        ("min", "%"),
        ("max", "%"),
        ("95% low", "%"),
        ("95% high", "%"),
    ];
    let mut t = Table::new(format!("The cost of lock statistics ({mode})"), &columns);
    // The median cost cannot be below 0 (issue 44: "-7.1 ... -15.7 %" printed with no note); a
    // round's min and the interval's low end may, as the spread of a cost near 0.
    t.at_least_zero(&["cost"]);
    for v in &report.variants {
        let (on, cost) = (v.lockstat_ns.as_ref(), v.lockstat_cost_pct.as_ref());
        t.row(vec![
            Cell::text(v.variant),
            Cell::opt(on.map(|o| o.median), 0),
            Cell::opt(cost.map(|c| c.median), 1),
            Cell::opt(cost.map(|c| c.min), 1),
            Cell::opt(cost.map(|c| c.max), 1),
            Cell::opt(v.lockstat_cost_interval_pct.map(|i| i.lo), 1),
            Cell::opt(v.lockstat_cost_interval_pct.map(|i| i.hi), 1),
        ]);
    }
    t.note(format!(
        "statistics on ({mode}) against off in {} alternating windows of {} round trips \
            on one scheduler,",
        2 * WINDOW_PAIRS + 1,
        report.window
    ));
    t.note("each on window against its two off neighbours; per round the median over its windows;");
    t.note(
        "shown: the median over rounds, the range of the rounds, and the 95% \
        interval of the median",
    );
    t
}

/// The report contract (`report::contract`): one row per variant, the chart beside it.
impl super::contract::Report for RoundtripReport {
    const COMMAND: &'static str = "roundtrip";
    /// 2: a figure its tables refuse is `null` here too (`contract::Report::json_in`).
    const SCHEMA_VERSION: u32 = 2;

    fn provenance(&self) -> crate::files::provenance::Provenance {
        self.provenance.clone()
    }

    fn tables(&self, _judge: super::contract::Judge) -> Vec<Table> {
        let columns = [
            ("variant", ""),
            ("median", "ns"),
            ("min", "ns"),
            ("max", "ns"),
            ("÷ no-stats", "×"),
            ("95% low", "×"),
            ("95% high", "×"),
        ];
        let mut t = Table::new(ROUND_TRIPS, &columns);
        t.note(format!(
            "round trip = insert + dispatch + completion on 1 thread, {}; median over \
                {} of {} rounds of {} round trips",
            self.lock, self.rounds_done, self.rounds, self.iterations
        ));
        if self.rounds_done == 0 {
            t.note("no round finished: nothing measured");
            return vec![t];
        }
        for v in &self.variants {
            t.row(vec![
                Cell::text(v.variant),
                Cell::num(v.ns.median, 0),
                Cell::num(v.ns.min, 0),
                Cell::num(v.ns.max, 0),
                Cell::opt(self.against_no_stats(v), 2),
                Cell::opt(v.vs_no_stats_interval.map(|i| i.lo), 2),
                Cell::opt(v.vs_no_stats_interval.map(|i| i.hi), 2),
            ]);
        }
        t.note(match self.variants.iter().find_map(|v| v.no_interval.as_deref()) {
            Some(why) => format!("95%: {why}"),
            None => "95%: bootstrap over rounds of the median of the per-round ratios \
                (÷ no-stats within each round)"
                .into(),
        });
        let mut tables = vec![t];
        if let Some(mode) = self.lockstat {
            tables.push(cost_table(self, mode));
        }
        tables
    }

    fn charts(&self) -> Vec<super::contract::Chart> {
        vec![super::contract::Chart::new("ns per round trip", super::charts::roundtrip_svg(self))
            .beside(ROUND_TRIPS)]
    }

    fn outcome(&self) -> super::contract::Outcome {
        super::contract::Outcome { interrupted: self.interrupted, ..Default::default() }
    }
}

/// The table's title (the chart goes beside it).
const ROUND_TRIPS: &str = "Round trips per variant";

#[cfg(test)]
mod tests {
    use crate::experiment::observer::Silent;
    use crate::experiment::roundtrip::{run, RoundtripConfig};
    use crate::report::contract::{text_within_contract, Report, View};
    use schedlab_core::sync::AtomicBool;
    use schedlab_core::LockKind;

    #[test]
    fn the_roundtrip_text_is_drawn_from_its_tables_within_130_columns() {
        let lockstat = Some(schedlab_core::lockstat::Mode::Sampled);
        let cfg = RoundtripConfig {
            variant: None,
            rounds: 3,
            iterations: 2000,
            lock: LockKind::FairSpin,
            lockstat,
        };
        let report = run(&cfg, &AtomicBool::new(false), &mut Silent).unwrap();
        let text = text_within_contract(&report, 1);
        for said in [
            "Round trips per variant",
            "no-stats",
            "÷ no-stats (×)",
            "The cost of lock statistics (sampled)",
            "95% high (%)",
        ] {
            assert!(text.contains(said), "{said:?} is not in the text:\n{text}");
        }
        let mut below = report;
        for v in &mut below.variants {
            v.lockstat_cost_pct.as_mut().expect("a cost with --lockstat").median = -7.1;
        }
        let text = below.text(View::default());
        assert!(text.contains("not estimable: -7.1 % < 0"), "{text}");
        // Without the statistics, no cost table; with no round finished, why nothing is measured.
        let cfg = RoundtripConfig { lockstat: None, rounds: 1, ..cfg };
        let report = run(&cfg, &AtomicBool::new(false), &mut Silent).unwrap();
        assert!(!report.text(View::default()).contains("The cost of lock statistics"));
        let stopped = run(&cfg, &AtomicBool::new(true), &mut Silent).unwrap();
        assert!(stopped.text(View::default()).contains("no round finished: nothing measured"));
    }
}
