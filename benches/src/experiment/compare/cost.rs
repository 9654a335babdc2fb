//! What the lock statistics cost, with its interval, and the "at most 5 %" verdict taken on it.
//!
//! The cost is paired within rounds, as the ratios are: with `--measure lockstat` each round's
//! run compares its own on and off windows (each window against its two neighbours of the other
//! kind, `driver::workload::ToggleResult`), and the figure is the median of every window
//! comparison of every round; with `--measure both` each round compares its instrumented run
//! with its plain run, and the figure is the median of those per-round costs. The interval is a
//! 95 % bootstrap over **rounds** ([`pooled_cost_interval`]): the rounds are resampled, their
//! window comparisons pooled and their median taken, so that the interval is that of the printed
//! figure and the unit of resampling is the independent one (the windows of one run share its
//! machine state).
//!
//! The verdict ([`judge_cost`]) is met only when the whole interval is at or below
//! [`COST_LIMIT_PCT`], missed when the whole interval is above it, inconclusive when it
//! straddles. A cost below 0 (the statistics cannot make the path faster) is the windows' noise:
//! a negative figure is not printed as a cost ([`LockstatCost::not_estimable`]) and an interval
//! wholly below 0 gets no verdict.

use super::cells::{Cell, Measure};
use crate::driver::workload::RunResult;
use crate::stats::{bootstrap_interval, median, median_in_place, Interval, NoInterval};
use crate::stats::{BOOTSTRAP_RESAMPLES, BOOTSTRAP_SEED};
use serde::Serialize;

/// The cost the lock statistics may have for their counters to describe the measured system (%).
pub const COST_LIMIT_PCT: f64 = 5.0;

/// "The statistics cost at most [`COST_LIMIT_PCT`]" judged on the cost's interval.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum CostVerdict {
    /// The whole interval is at or below the limit.
    Met,
    /// The whole interval is above the limit.
    Missed,
    /// The interval straddles the limit.
    Inconclusive,
}

impl CostVerdict {
    pub fn label(self) -> &'static str {
        match self {
            CostVerdict::Met => "≤ 5 % met",
            CostVerdict::Missed => "≤ 5 % missed",
            CostVerdict::Inconclusive => "≤ 5 % inconclusive",
        }
    }
}

/// A cost interval (%) wholly below 0: the statistics cannot speed the path up, so it is the
/// windows' noise and there is no cost to judge. Shown in the verdict's place.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct CostBelowZero(pub Interval);

impl std::fmt::Display for CostBelowZero {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let Interval { lo, hi } = self.0;
        write!(f, "not estimable: the interval [{lo:.1}, {hi:.1}] % is below 0 ")?;
        f.write_str("(the statistics cannot speed the path up: the windows' noise)")
    }
}

/// The verdict on a cost's interval (%) against `limit` (%), or [`CostBelowZero`] when the
/// whole interval is below 0, where there is no cost to judge.
pub fn judge_cost(interval: Interval, limit: f64) -> Result<CostVerdict, CostBelowZero> {
    if interval.hi < 0.0 {
        Err(CostBelowZero(interval))
    } else if interval.hi <= limit {
        Ok(CostVerdict::Met)
    } else if interval.lo > limit {
        Ok(CostVerdict::Missed)
    } else {
        Ok(CostVerdict::Inconclusive)
    }
}

/// The 95 % bootstrap interval over rounds of the median of pooled window comparisons: `rounds`
/// holds each round's comparisons (%); a round with none is left out. Fewer than
/// [`crate::stats::BOOTSTRAP_MIN_VALUES`] rounds with comparisons: no interval.
pub fn pooled_cost_interval(rounds: &[Vec<f64>]) -> Result<Interval, NoInterval> {
    let rounds: Vec<&Vec<f64>> =
        rounds.iter().filter(|r| r.iter().any(|c| c.is_finite())).collect();
    let indices: Vec<f64> = (0..rounds.len()).map(|i| i as f64).collect();
    let pooled_median = |draw: &mut [f64]| {
        let mut pool: Vec<f64> = draw
            .iter()
            .flat_map(|&i| rounds[i as usize].iter().copied())
            .filter(|c| c.is_finite())
            .collect();
        median_in_place(&mut pool)
    };
    bootstrap_interval(&indices, pooled_median, BOOTSTRAP_RESAMPLES, BOOTSTRAP_SEED)
        .ok_or(NoInterval::FewRounds)
}

/// What the lock statistics cost one variant under one lock kind (flattened into its row).
#[derive(Clone, Debug, Default, Serialize)]
pub struct LockstatCost {
    /// The cost, %: with `measure` `lockstat`, the median of every window comparison of every
    /// round; with `both`, the median of the per-round costs 100 × (1 − instrumented ÷ plain).
    /// `null` when below 0 (see `not_estimable`).
    #[serde(rename = "lockstat_overhead_pct")]
    pub pct: Option<f64>,
    /// "same run, alternating windows" or "separate runs".
    #[serde(rename = "lockstat_overhead_source")]
    pub source: Option<&'static str>,
    /// Each round's own cost (the median of its window comparisons, or its paired cost), %.
    #[serde(rename = "lockstat_overhead_runs")]
    pub runs: Vec<f64>,
    /// The 95 % bootstrap interval of `pct` over rounds.
    #[serde(rename = "lockstat_overhead_interval")]
    pub interval: Option<Interval>,
    /// Why `interval` is null ("no interval: fewer than 6 rounds").
    #[serde(rename = "lockstat_overhead_no_interval")]
    pub no_interval: Option<String>,
    /// Why `pct` is null although the cost was measured: it came out below 0.
    #[serde(rename = "lockstat_overhead_not_estimable")]
    pub not_estimable: Option<String>,
    /// "at most 5 %" judged on the interval; null without an interval, below 0 or disturbed.
    #[serde(rename = "lockstat_overhead_verdict")]
    pub verdict: Option<CostVerdict>,
    /// Why there is no verdict although there is an interval.
    #[serde(rename = "lockstat_overhead_not_judged")]
    pub not_judged: Option<String>,
}

impl LockstatCost {
    /// The cost measured in `cell`'s runs (`measure` says how), with its interval and verdict.
    pub(super) fn of(measure: Measure, cell: &Cell) -> LockstatCost {
        let (per_round, source): (Vec<Vec<f64>>, _) = match measure {
            Measure::Plain => return LockstatCost::default(),
            Measure::Lockstat => {
                let windows = cell
                    .lockstat
                    .iter()
                    .filter_map(|(_, r)| r.lockstat_toggle.as_ref())
                    .map(|t| t.pair_costs_pct.clone())
                    .filter(|w| !w.is_empty())
                    .collect();
                (windows, "same run, alternating windows")
            }
            Measure::Both => {
                let paired = cell
                    .lockstat
                    .iter()
                    .filter_map(|(round, l)| {
                        let (_, p) = cell.plain.iter().find(|(r, _)| r == round)?;
                        let cost = 100.0 * (1.0 - l.kiops / p.kiops);
                        (cost.is_finite() && p.kiops > 0.0).then(|| vec![cost])
                    })
                    .collect();
                (paired, "separate runs")
            }
        };
        let runs: Vec<f64> = per_round.iter().map(|w| median(w)).collect();
        let pooled: Vec<f64> = per_round.iter().flatten().copied().collect();
        if pooled.is_empty() {
            return LockstatCost { source: Some(source), ..LockstatCost::default() };
        }
        let measured = median(&pooled);
        let (interval, no_interval) = match pooled_cost_interval(&per_round) {
            Ok(i) => (Some(i), None),
            Err(why) => (None, Some(why.to_string())),
        };
        let not_estimable = (measured < 0.0).then(|| {
            format!("measured {measured:.1} %: below 0, the windows' noise rather than a cost")
        });
        let runs_behind: Vec<&RunResult> =
            cell.lockstat.iter().chain(&cell.plain).map(|(_, r)| r).collect();
        let disturbed: Vec<String> =
            runs_behind.iter().filter_map(|r| crate::driver::workload::disturbed(r)).collect();
        let (verdict, not_judged) = match (interval, disturbed.first()) {
            (None, _) => (None, None),
            (Some(_), Some(first)) => {
                let why = format!(
                    "disturbed: {} of {} runs ({first})",
                    disturbed.len(),
                    runs_behind.len()
                );
                (None, Some(why))
            }
            (Some(i), None) => match judge_cost(i, COST_LIMIT_PCT) {
                Ok(v) => (Some(v), None),
                Err(why) => (None, Some(why.to_string())),
            },
        };
        LockstatCost {
            pct: (measured >= 0.0).then_some(measured),
            source: Some(source),
            runs,
            interval,
            no_interval,
            not_estimable,
            verdict,
            not_judged,
        }
    }

    /// The cost as the tables print it: "2.1% [0.4, 3.9]", "n/e (<0) [-2.0, 0.8]", or "-" (a
    /// comma between the bounds, which may be negative).
    pub fn text(&self) -> String {
        let interval =
            self.interval.map_or(String::new(), |i| format!(" [{:.1}, {:.1}]", i.lo, i.hi));
        match (self.pct, &self.not_estimable) {
            (Some(c), _) => format!("{c:.1}%{interval}"),
            (None, Some(_)) => format!("n/e (<0){interval}"),
            (None, None) => "-".into(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn i(lo: f64, hi: f64) -> Interval {
        Interval { lo, hi }
    }

    #[test]
    fn the_five_percent_limit_is_judged_on_the_interval() {
        assert_eq!(judge_cost(i(0.5, 4.0), 5.0), Ok(CostVerdict::Met));
        assert_eq!(
            judge_cost(i(-2.0, 5.0), 5.0),
            Ok(CostVerdict::Met),
            "at most the limit, through 0"
        );
        assert_eq!(judge_cost(i(5.6, 11.6), 5.0), Ok(CostVerdict::Missed));
        // The runs: a median of 4.4 % whose interval reaches 8 % is not "met".
        assert_eq!(judge_cost(i(0.4, 8.0), 5.0), Ok(CostVerdict::Inconclusive));
        let below = judge_cost(i(-4.0, -0.5), 5.0).expect_err("no cost below 0").to_string();
        assert!(below.contains("not estimable") && below.contains("[-4.0, -0.5]"), "{below}");
    }

    #[test]
    fn the_interval_resamples_rounds_and_pools_their_windows() {
        // Six rounds of identical windows: the interval is that figure.
        let same = vec![vec![2.0, 2.0, 2.0]; 6];
        assert_eq!(pooled_cost_interval(&same), Ok(i(2.0, 2.0)));
        // Two rounds at 10 %, four at 1 %: resampled rounds reach both.
        let (low, high) = (vec![1.0, 1.0], vec![10.0, 10.0]);
        let rounds = vec![low.clone(), high.clone(), low.clone(), low.clone(), high, low];
        let wide = pooled_cost_interval(&rounds).unwrap();
        assert!(wide.lo == 1.0 && wide.hi == 10.0, "{wide:?}");
        assert_eq!(judge_cost(wide, COST_LIMIT_PCT), Ok(CostVerdict::Inconclusive));
        let five =
            vec![vec![1.0; 8], vec![2.0; 8], vec![1.0; 8], vec![2.0; 8], vec![1.0; 8], vec![]];
        let none = pooled_cost_interval(&five).map_err(|why| why.to_string());
        let fewer = Err("no interval: fewer than 6 rounds".to_string());
        assert_eq!(none, fewer, "an empty round is no round");
    }

    #[test]
    fn a_negative_cost_is_not_printed_as_one() {
        let cost = LockstatCost {
            pct: None,
            interval: Some(i(-2.0, 0.8)),
            not_estimable: Some("measured -0.6 %".into()),
            ..LockstatCost::default()
        };
        assert_eq!(cost.text(), "n/e (<0) [-2.0, 0.8]");
        let real =
            LockstatCost { pct: Some(2.1), interval: Some(i(0.4, 3.9)), ..LockstatCost::default() };
        assert_eq!(real.text(), "2.1% [0.4, 3.9]");
    }
}
