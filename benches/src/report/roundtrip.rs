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
    for (i, v) in report.variants.iter().enumerate() {
        let at = |field: &str| format!("/variants/{i}/{field}");
        let (on, cost) = (v.lockstat_ns.as_ref(), v.lockstat_cost_pct.as_ref());
        let interval = v.lockstat_cost_interval_pct;
        t.row(vec![
            Cell::text(v.variant),
            Cell::opt(on.map(|o| o.median), 0).at(at("lockstat_ns/median")),
            Cell::opt(cost.map(|c| c.median), 1).at(at("lockstat_cost_pct/median")),
            Cell::opt(cost.map(|c| c.min), 1).at(at("lockstat_cost_pct/min")),
            Cell::opt(cost.map(|c| c.max), 1).at(at("lockstat_cost_pct/max")),
            Cell::opt(interval.map(|i| i.lo), 1).at(at("lockstat_cost_interval_pct/lo")),
            Cell::opt(interval.map(|i| i.hi), 1).at(at("lockstat_cost_interval_pct/hi")),
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
        for (i, v) in self.variants.iter().enumerate() {
            let at = |field: &str| format!("/variants/{i}/{field}");
            let interval = v.vs_no_stats_interval;
            t.row(vec![
                Cell::text(v.variant),
                Cell::num(v.ns.median, 0).at(at("ns/median")),
                Cell::num(v.ns.min, 0).at(at("ns/min")),
                Cell::num(v.ns.max, 0).at(at("ns/max")),
                Cell::opt(self.against_no_stats(v), 2).at(at("vs_no_stats/median")),
                Cell::opt(interval.map(|i| i.lo), 2).at(at("vs_no_stats_interval/lo")),
                Cell::opt(interval.map(|i| i.hi), 2).at(at("vs_no_stats_interval/hi")),
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
    use crate::report::contract::{renderings_agree, text_within_contract, Report, View};
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
        // Refused in the JSON too, at each variant's median cost and there only: the round's
        // min and max beside it keep their figures.
        renderings_agree(&below).unwrap();
        let json: serde_json::Value = serde_json::from_str(&below.json(None).unwrap()).unwrap();
        for (i, v) in below.variants.iter().enumerate() {
            let cost = &json["variants"][i]["lockstat_cost_pct"];
            assert_eq!(cost["median"], serde_json::Value::Null, "{cost}");
            assert_eq!(cost["median_not_estimable"], "not estimable: -7.1 % < 0", "{cost}");
            let min = v.lockstat_cost_pct.as_ref().unwrap().min;
            let kept = cost["min"].as_f64().is_some_and(|x| (x - min).abs() <= 1e-9 * min.abs());
            assert!(kept, "the min stays: {cost}");
        }
        let listed = json["not_estimable"].as_array().unwrap();
        assert_eq!(listed.len(), below.variants.len(), "{json}");
        assert_eq!(listed[0]["path"], "/variants/0/lockstat_cost_pct/median");
        // Without the statistics, no cost table; with no round finished, why nothing is measured.
        let cfg = RoundtripConfig { lockstat: None, rounds: 1, ..cfg };
        let report = run(&cfg, &AtomicBool::new(false), &mut Silent).unwrap();
        assert!(!report.text(View::default()).contains("The cost of lock statistics"));
        let stopped = run(&cfg, &AtomicBool::new(true), &mut Silent).unwrap();
        assert!(stopped.text(View::default()).contains("no round finished: nothing measured"));
    }
}
