//! `--precision`: rounds until the answer is clear.
//!
//! A comparison with a [`Precision`] runs its `--rounds` (at least [`MIN_ROUNDS`], so that every
//! ratio has an interval), then adds interleaved rounds, one whole round at a time, until every
//! ratio it reports is precise enough, or until one more round would end past `--max-time`
//! ([`decide`]). "Precise enough": the 95 % bootstrap interval of the ratio's median
//! (`stats::ratio_interval`) has a half-width of at most `target` times the median
//! ([`relative_half_width`]): `target` 0.03 is "±3 %". The ratios are every one the report
//! prints ([`reported_ratios`]): each variant ÷ `sched-lock`, each seed's ratio and the A/A
//! floor, under every lock kind.
//!
//! The time limit is read after every round, whatever was kept: a round that the machine moved
//! the CPUs during is left out and made again (`placement`), and that round, like a round added
//! for the precision, is made only when it would end within the limit. So the comparison ends
//! at `--max-time` (or after its `--rounds`, when those alone take longer) even when its rounds
//! keep being left out, with fewer rounds kept than asked, said as such.
//!
//! The outcome says which happened ([`Outcome`]): the precision was reached, the time limit or
//! the round limit came first (then with the rounds the widest ratio would need at its present
//! spread, since a percentile interval narrows about as 1/√rounds), or a signal stopped it (the
//! finished rounds are kept).

use super::cells::{entry_index, paired_except, Cell, AA_LABEL, AA_REFERENCE};
use crate::seeds::SEEDS;
use crate::stats::{ratio_interval, Interval, Spread};
use schedlab_core::LockKind;
use serde::Serialize;
use std::time::Duration;

/// The fewest rounds of a comparison that runs until its ratios are precise: an interval needs
/// [`crate::stats::BOOTSTRAP_MIN_VALUES`] (6).
pub const MIN_ROUNDS: usize = crate::stats::BOOTSTRAP_MIN_VALUES;

/// The most rounds a comparison runs (the range of `--rounds`).
pub const MAX_ROUNDS: usize = 1000;

/// The main command's stopping rule: ±3 % within a minute (`schedlab compare` with no
/// `--rounds`, and plain `schedlab`).
pub const DEFAULT: Precision = Precision { target: 0.03, max_time: Duration::from_secs(60) };

/// When a comparison stops adding rounds.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct Precision {
    /// The widest interval allowed, as a fraction of the ratio's median: every ratio's 95 %
    /// interval within ±`target` of its median (0.03: ±3 %).
    pub target: f64,
    /// The wall-clock limit of the whole comparison: no round is started that would end past it
    /// (judged by the mean length of the finished rounds).
    pub max_time: Duration,
}

/// Why a comparison that runs until its ratios are precise stopped.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum StopReason {
    /// Every ratio's interval is within the target.
    PrecisionReached,
    /// One more round would have ended past `--max-time` (however many rounds were kept).
    TimeLimitReached,
    /// [`MAX_ROUNDS`] ran.
    RoundLimitReached,
    /// A signal stopped it; the finished rounds are kept.
    Stopped,
}

impl StopReason {
    pub fn label(self) -> &'static str {
        match self {
            StopReason::PrecisionReached => "precision reached",
            StopReason::TimeLimitReached => "time limit reached",
            StopReason::RoundLimitReached => "round limit reached",
            StopReason::Stopped => "stopped by a signal",
        }
    }
}

/// A ratio's interval half-width as a fraction of its median: `(hi − lo) / 2 / |median|`
/// (infinite for a median of 0).
pub fn relative_half_width(median: f64, interval: Interval) -> f64 {
    let half = (interval.hi - interval.lo) / 2.0;
    if median == 0.0 {
        f64::INFINITY
    } else {
        half / median.abs()
    }
}

/// The least precise of some ratios: its name and relative half-width; `None` in `half_width`
/// when some ratio has no interval yet (fewer than [`MIN_ROUNDS`] rounds).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Widest {
    pub ratio: String,
    pub half_width: Option<f64>,
}

/// The widest of `ratios` (name, per-round values); `None` when there is no ratio at all.
pub fn widest(ratios: &[(String, Spread)]) -> Option<Widest> {
    let mut worst: Option<Widest> = None;
    for (name, spread) in ratios {
        let width = ratio_interval(spread).ok().map(|i| relative_half_width(spread.median, i));
        let wider = match (&worst, width) {
            (None, _) => true,
            (Some(w), _) if w.half_width.is_none() => false,
            (Some(_), None) => true,
            (Some(w), Some(h)) => w.half_width.is_some_and(|wh| h > wh),
        };
        if wider {
            worst = Some(Widest { ratio: name.clone(), half_width: width });
        }
    }
    worst
}

/// Whether to stop after `made` rounds, `elapsed` since the first began, when the figures rest
/// on `kept` of them (the others were left out for where the machine put the CPUs: `placement`):
/// `None` to make another. The first `min_rounds` (at least [`MIN_ROUNDS`]) are always made.
/// After them the comparison stops when the widest ratio is within the target and at least that
/// many rounds are kept (a comparison with no ratio has nothing to make precise), at
/// [`MAX_ROUNDS`], or when another round, as long as the mean of those made, would end past the
/// time limit: that limit holds however many rounds were left out, so that rounds which keep
/// being left out cannot make the comparison run on.
pub fn decide(
    precision: &Precision,
    made: usize,
    kept: usize,
    min_rounds: usize,
    widest: Option<&Widest>,
    elapsed: Duration,
) -> Option<StopReason> {
    let min_rounds = min_rounds.max(MIN_ROUNDS);
    if made < min_rounds {
        return None;
    }
    let precise = match widest {
        None => true,
        Some(w) => w.half_width.is_some_and(|h| h <= precision.target),
    };
    if precise && kept >= min_rounds {
        return Some(StopReason::PrecisionReached);
    }
    if made >= MAX_ROUNDS {
        return Some(StopReason::RoundLimitReached);
    }
    let per_round = elapsed / made as u32;
    (elapsed + per_round > precision.max_time).then_some(StopReason::TimeLimitReached)
}

/// The rounds the widest ratio would need for the target at its present spread: a percentile
/// interval narrows about as 1/√rounds, so `rounds × (reached ÷ target)²`.
pub fn rounds_needed(rounds: usize, reached: f64, target: f64) -> Option<usize> {
    let n = rounds as f64 * (reached / target).powi(2);
    (n.is_finite() && reached > target).then(|| n.ceil() as usize)
}

/// What a comparison with a [`Precision`] reached, and why it stopped (JSON: `precision`).
#[derive(Clone, Debug, Serialize)]
pub struct Outcome {
    /// The target, as a fraction of each ratio's median.
    pub target: f64,
    /// The time limit, s.
    pub max_time_s: f64,
    pub stopped: StopReason,
    /// Rounds finished.
    pub rounds: usize,
    /// Seconds from the first run's start to the last one's end.
    pub elapsed_s: f64,
    /// The least precise ratio at the end (`null` when the comparison has no ratio).
    pub widest: Option<Widest>,
    /// When the target was not reached: the rounds the widest ratio would need at its spread
    /// ([`rounds_needed`]).
    pub rounds_needed: Option<usize>,
}

impl Outcome {
    pub fn new(
        precision: &Precision,
        stopped: StopReason,
        rounds: usize,
        elapsed: Duration,
        widest: Option<Widest>,
    ) -> Self {
        let reached = widest.as_ref().and_then(|w| w.half_width);
        let rounds_needed = match stopped {
            StopReason::PrecisionReached => None,
            _ => reached.and_then(|r| rounds_needed(rounds, r, precision.target)),
        };
        Outcome {
            target: precision.target,
            max_time_s: precision.max_time.as_secs_f64(),
            stopped,
            rounds,
            elapsed_s: elapsed.as_secs_f64(),
            widest,
            rounds_needed,
        }
    }

    /// One line: "precision reached: every ratio within ±2.8 % (target ±3 %) after 5 rounds,
    /// 52 s", or what was reached and why it stopped.
    pub fn line(&self) -> String {
        let pct = |f: f64| format!("±{:.1} %", 100.0 * f);
        let target = pct(self.target);
        let reached = match &self.widest {
            None if self.rounds == 0 => "no round kept to take a ratio from".to_string(),
            None => "no ratio to make precise".to_string(),
            Some(Widest { ratio, half_width: Some(h) }) => {
                format!("the widest ratio, {ratio}, within {}", pct(*h))
            }
            Some(Widest { ratio, half_width: None }) => format!("{ratio} has no interval yet"),
        };
        let rounds = format!("{} rounds in {:.0} s", self.rounds, self.elapsed_s);
        let head = match self.stopped {
            StopReason::PrecisionReached => format!("precision reached ({target}): {reached}, after {rounds}"),
            StopReason::TimeLimitReached => format!(
                "time limit reached ({:.0} s) before the precision ({target}): {reached} after {rounds}",
                self.max_time_s
            ),
            StopReason::RoundLimitReached => {
                format!("round limit reached ({MAX_ROUNDS}) before the precision ({target}): {reached}")
            }
            StopReason::Stopped => format!("stopped by a signal before the precision ({target}): {reached} after {rounds}"),
        };
        match self.rounds_needed {
            Some(n) => format!("{head}; at this spread {target} needs about {n} rounds"),
            None => head,
        }
    }
}

/// Every ratio the report prints, with its per-round values so far, named as the tables name
/// it: each variant ÷ [`AA_REFERENCE`], each seed's ratio and the A/A floor, under each lock
/// kind (the reference ÷ itself, always 1, is left out). The rounds in `except` are left out
/// (`placement`: rounds that ran where the report's figures will not come from).
pub(super) fn reported_ratios(
    cells: &[Vec<Cell>],
    entries: &[(&'static str, &'static str)],
    locks: &[LockKind],
    variants: &[&'static str],
    except: &[usize],
) -> Vec<(String, Spread)> {
    let mut out = Vec::new();
    for (li, lock) in locks.iter().enumerate() {
        let cells = &cells[li];
        let mut add = |name: String, num: &str, den: &str| {
            if let Some(s) = paired_except(cells, entries, num, den, except) {
                out.push((format!("{name} ({})", lock.name()), s));
            }
        };
        for &v in variants.iter().filter(|v| **v != AA_REFERENCE) {
            add(format!("{v} ÷ {AA_REFERENCE}"), v, AA_REFERENCE);
        }
        for seed in SEEDS.iter() {
            add(
                format!("{} ÷ {}", seed.numerator, seed.denominator),
                seed.numerator,
                seed.denominator,
            );
        }
        if entry_index(entries, AA_LABEL).is_some() {
            add("A/A floor".to_string(), AA_REFERENCE, AA_LABEL);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ratios(rounds: &[f64]) -> Vec<(String, Spread)> {
        vec![("x ÷ sched-lock".to_string(), Spread::of(rounds.to_vec()))]
    }

    fn rule(target: f64, max_s: u64) -> Precision {
        Precision { target, max_time: Duration::from_secs(max_s) }
    }

    #[test]
    fn ratios_that_converge_stop_with_the_precision_reached() {
        let p = rule(0.03, 60);
        // Rounds of a steady ratio: 1.00 ± 1 %.
        let steady = [1.00, 1.01, 0.99, 1.00, 1.01, 0.99, 1.00, 1.01];
        let mut stopped = None;
        for n in 1..=steady.len() {
            let w = widest(&ratios(&steady[..n]));
            stopped = decide(&p, n, n, 1, w.as_ref(), Duration::from_secs(5 * n as u64));
            if stopped.is_some() {
                assert_eq!(n, MIN_ROUNDS, "stops as soon as six rounds give an interval");
                break;
            }
        }
        assert_eq!(stopped, Some(StopReason::PrecisionReached));
        assert_eq!(stopped.unwrap().label(), "precision reached");
    }

    #[test]
    fn ratios_that_never_converge_stop_at_the_time_limit() {
        let p = rule(0.03, 60);
        // A ratio that swings ±20 % round after round never gets within ±3 %.
        let swinging: Vec<f64> = (0..40).map(|i| if i % 2 == 0 { 0.8 } else { 1.2 }).collect();
        let round_s = 10;
        let mut stopped = None;
        let mut n = 0;
        while stopped.is_none() && n < swinging.len() {
            n += 1;
            let w = widest(&ratios(&swinging[..n]));
            stopped = decide(&p, n, n, 3, w.as_ref(), Duration::from_secs(round_s * n as u64));
        }
        assert_eq!(stopped, Some(StopReason::TimeLimitReached));
        assert_eq!(stopped.unwrap().label(), "time limit reached");
        assert_eq!(n, 6, "six rounds of 10 s fill the minute; a seventh would end past it");
    }

    #[test]
    fn no_round_stops_before_six_and_the_round_limit_stops_the_rest() {
        let p = rule(0.03, 1_000_000);
        let exact = widest(&ratios(&[1.0; 5]));
        assert_eq!(exact.as_ref().unwrap().half_width, None, "five rounds: no interval yet");
        assert_eq!(decide(&p, 5, 5, 1, exact.as_ref(), Duration::from_secs(1)), None);
        assert_eq!(decide(&p, 5, 5, 1, None, Duration::from_secs(1)), None, "never below six");
        let wide = widest(&ratios(&[0.8, 1.2, 0.8, 1.2, 0.8, 1.2])).unwrap();
        assert_eq!(
            decide(&p, MAX_ROUNDS, MAX_ROUNDS, 3, Some(&wide), Duration::from_secs(1)),
            Some(StopReason::RoundLimitReached)
        );
        assert_eq!(
            decide(&p, 6, 6, 3, None, Duration::from_secs(1)),
            Some(StopReason::PrecisionReached),
            "no ratio: nothing to wait for"
        );
    }

    #[test]
    fn rounds_left_out_neither_reach_the_precision_nor_lift_the_time_limit() {
        let p = rule(0.03, 100);
        let exact = widest(&ratios(&[2.0; 6]));
        let exact = exact.as_ref();
        // Six rounds made in 90 s, none kept (each left out for its placement): a seventh
        // would end past 100 s.
        let after = |made, kept, s| decide(&p, made, kept, 6, exact, Duration::from_secs(s));
        assert_eq!(after(6, 0, 90), Some(StopReason::TimeLimitReached));
        // Within the limit another is made: five kept rounds are not the six asked, however
        // close their ratios.
        assert_eq!(after(6, 5, 60), None);
        assert_eq!(after(7, 6, 70), Some(StopReason::PrecisionReached));
    }

    #[test]
    fn the_widest_ratio_is_the_least_precise_and_one_without_interval_is_widest() {
        let list = vec![
            ("tight".to_string(), Spread::of(vec![1.0, 1.01, 0.99, 1.0, 1.01, 0.99])),
            ("loose".to_string(), Spread::of(vec![1.0, 1.3, 0.7, 1.0, 1.3, 0.7])),
        ];
        let w = widest(&list).unwrap();
        assert_eq!(w.ratio, "loose");
        assert!(w.half_width.unwrap() > 0.2, "{w:?}");
        let mut with_short = list.clone();
        with_short.push(("short".to_string(), Spread::of(vec![1.0])));
        assert_eq!(
            widest(&with_short).unwrap(),
            Widest { ratio: "short".into(), half_width: None }
        );
        assert_eq!(widest(&[]), None);
    }

    #[test]
    fn an_outcome_says_what_was_reached_and_what_the_target_would_need() {
        let p = rule(0.03, 60);
        let w = Widest { ratio: "epoch ÷ sched-lock (fair-spin)".into(), half_width: Some(0.06) };
        let o = Outcome::new(&p, StopReason::TimeLimitReached, 5, Duration::from_secs(55), Some(w));
        assert_eq!(o.rounds_needed, Some(20), "5 rounds × (6/3)²");
        let line = o.line();
        assert!(line.starts_with("time limit reached (60 s)"), "{line}");
        assert!(line.contains("±6.0 %") && line.contains("about 20 rounds"), "{line}");
        let done = Outcome::new(&p, StopReason::PrecisionReached, 4, Duration::from_secs(40), None);
        assert_eq!(done.rounds_needed, None);
        assert!(done.line().starts_with("precision reached (±3.0 %)"), "{}", done.line());
    }
}
