//! The text of `schedlab roundtrip`'s report: per variant the median round trip, its range over
//! rounds, the ratio to `no-stats`, and with the lock statistics their on windows and their cost.

use crate::experiment::roundtrip::{RoundtripReport, WINDOW_PAIRS};
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
    let _ = write!(s, "{:<12} {:>10} {:>17} {:>11}", "variant", "ns median", "min-max", "x no-stats");
    if let Some(mode) = report.lockstat {
        let _ = write!(s, " {:>16} {:>9} {:>17}", format!("{mode} ns med"), "cost", "cost min..max");
    }
    s.push('\n');
    for v in &report.variants {
        let ratio = report.against_no_stats(v).map_or("-".into(), |r| format!("{r:.2}"));
        let _ = write!(s, "{:<12} {:>10.0} {:>17} {:>11}", v.variant, v.ns.median, format!("{:.0}-{:.0}", v.ns.min, v.ns.max), ratio);
        if let (Some(on), Some(cost)) = (&v.lockstat_ns, &v.lockstat_cost_pct) {
            let _ = write!(s, " {:>16.0} {:>8.1}% {:>17}", on.median, cost.median, format!("{:.1}..{:.1}%", cost.min, cost.max));
        }
        s.push('\n');
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
