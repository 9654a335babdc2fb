//! The shared statistics of every experiment: the median and the spread of repeated runs, the
//! per-thread spread of a run's jobs, a bootstrap interval over rounds and the verdicts taken on
//! it (a goal met, missed or inconclusive; a range inside, outside or overlapping), and the USL
//! fit of a scaling curve. The one definition of each (the experiments, the model and the CLI
//! use these).

use serde::Serialize;

/// Median, minimum, maximum and every value. In JSON, `median`, `min` and `max` are `null`
/// when no run has a value (issue 43: a point nothing was measured at wrote 0.0).
#[derive(Clone, Debug, Default)]
pub struct Spread {
    pub median: f64,
    pub min: f64,
    pub max: f64,
    pub runs: Vec<f64>,
}

impl Serialize for Spread {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeStruct;
        let measured = self.runs.iter().any(|r| r.is_finite());
        let figure = |v: f64| measured.then_some(v);
        let mut s = serializer.serialize_struct("Spread", 4)?;
        s.serialize_field("median", &figure(self.median))?;
        s.serialize_field("min", &figure(self.min))?;
        s.serialize_field("max", &figure(self.max))?;
        s.serialize_field("runs", &self.runs)?;
        s.end()
    }
}

/// Median of a non-empty slice (0 when empty).
pub fn median(values: &[f64]) -> f64 {
    let mut v: Vec<f64> = values.iter().copied().filter(|x| x.is_finite()).collect();
    if v.is_empty() {
        return 0.0;
    }
    v.sort_by(f64::total_cmp);
    let n = v.len();
    if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    }
}

/// The `q` quantile (0..=1) of `values` by nearest rank over the sorted values (0 when empty):
/// always one of the values, as a trace's percentiles are reported (`files::trace_check`).
/// Unlike [`median`], `quantile(v, 0.5)` of an even count picks a value, not a midpoint.
pub fn quantile(values: &mut [f64], q: f64) -> f64 {
    if values.is_empty() {
        return 0.0;
    }
    values.sort_by(f64::total_cmp);
    values[((values.len() - 1) as f64 * q.clamp(0.0, 1.0)).round() as usize]
}

impl Spread {
    pub fn of(runs: Vec<f64>) -> Self {
        let min = runs.iter().copied().fold(f64::INFINITY, f64::min);
        let max = runs.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        Spread {
            median: median(&runs),
            min: if min.is_finite() { min } else { 0.0 },
            max: if max.is_finite() { max } else { 0.0 },
            runs,
        }
    }
}

/// Per-thread KIOPS: of every run its slowest, median and fastest job, then the median of each
/// over the runs. Fairness shows as the gap between `min` and `max`.
#[derive(Clone, Debug, Default, Serialize)]
pub struct PerThread {
    pub min: f64,
    pub median: f64,
    pub max: f64,
    /// Every job's KIOPS, run by run.
    pub runs: Vec<Vec<f64>>,
}

impl PerThread {
    pub(crate) fn of(runs: Vec<Vec<f64>>) -> Self {
        let pick = |f: &dyn Fn(&[f64]) -> f64| {
            median(&runs.iter().filter(|r| !r.is_empty()).map(|r| f(r)).collect::<Vec<_>>())
        };
        PerThread {
            min: pick(&|r| r.iter().copied().fold(f64::INFINITY, f64::min)),
            median: pick(&|r| median(r)),
            max: pick(&|r| r.iter().copied().fold(f64::NEG_INFINITY, f64::max)),
            runs,
        }
    }
}

/// A confidence interval `[lo, hi]`: in JSON `{"lo": .., "hi": ..}`.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct Interval {
    pub lo: f64,
    pub hi: f64,
}

impl Interval {
    /// Whether `x` lies inside (bounds included).
    pub fn contains(&self, x: f64) -> bool {
        self.lo <= x && x <= self.hi
    }
}

/// The 95 % Wilson score interval of a proportion `k` of `n`, in percent: how far a share read
/// from `n` samples can be from the share of the time they were drawn from, were the samples
/// independent (a profiler's samples of one run are not quite: the interval is then a lower
/// bound on the uncertainty). `None` without samples, or with `k > n`.
pub fn wilson_interval_pct(k: u64, n: u64) -> Option<Interval> {
    if n == 0 || k > n {
        return None;
    }
    const Z: f64 = 1.959_963_984_540_054;
    let (k, n) = (k as f64, n as f64);
    let p = k / n;
    let z2 = Z * Z;
    let centre = (p + z2 / (2.0 * n)) / (1.0 + z2 / n);
    let half = Z * (p * (1.0 - p) / n + z2 / (4.0 * n * n)).sqrt() / (1.0 + z2 / n);
    Some(Interval { lo: 100.0 * (centre - half).max(0.0), hi: 100.0 * (centre + half).min(1.0) })
}

/// The fewest values a bootstrap interval is computed from: below it an interval labelled 95 %
/// would cover the true median less often than 95 %.
///
/// A fact of order statistics, not a tuned number. With n values, the percentile-bootstrap
/// interval of a median lies within [min, max] of the data, and [min, max] covers the true median
/// only when the values are not all on one side of it: probability 1 − 2 × 2^−n = 1 − 2^(1−n).
/// That is 75 % at n = 3, 87.5 % at 4, 93.75 % at 5 and 96.9 % at 6: 6 is the fewest values
/// whose interval can be a 95 % one (issue 42). Below it a figure has no interval, and no
/// verdict is built on one.
pub const BOOTSTRAP_MIN_VALUES: usize = 6;

/// The resamples of every bootstrap interval the experiments report.
pub const BOOTSTRAP_RESAMPLES: usize = 4000;

/// The seed of every bootstrap interval the experiments report: fixed, so that the same inputs
/// give the same interval on every machine and every run.
pub const BOOTSTRAP_SEED: u64 = 0x5eed_42;

/// SplitMix64: a tiny generator whose sequence depends on nothing but its seed (no platform,
/// no crate version), so that a bootstrap interval is reproducible from the numbers alone.
struct SplitMix64(u64);

impl SplitMix64 {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// Uniform in `0..n` (multiply-shift; the bias is below 2^-32 for the n used here).
    fn below(&mut self, n: usize) -> usize {
        ((u128::from(self.next()) * n as u128) >> 64) as usize
    }
}

/// The 95 % percentile-bootstrap interval of `stat` over `values`: `resamples` times, draw
/// `values.len()` values with replacement (generator seeded with `seed`), compute `stat` of the
/// draw; the interval is the 2.5 % and 97.5 % quantiles (nearest rank) of those statistics.
///
/// `None` with fewer than [`BOOTSTRAP_MIN_VALUES`] finite values (non-finite ones are dropped),
/// or with no resample. Deterministic: the same values, statistic, resamples and seed give the
/// same interval. `stat` gets the resample as a mutable slice (it may sort it in place).
pub fn bootstrap_interval(
    values: &[f64],
    stat: impl Fn(&mut [f64]) -> f64,
    resamples: usize,
    seed: u64,
) -> Option<Interval> {
    let v: Vec<f64> = values.iter().copied().filter(|x| x.is_finite()).collect();
    if v.len() < BOOTSTRAP_MIN_VALUES || resamples == 0 {
        return None;
    }
    let mut rng = SplitMix64(seed);
    let mut draw = vec![0.0; v.len()];
    let mut stats: Vec<f64> = Vec::with_capacity(resamples);
    for _ in 0..resamples {
        for d in draw.iter_mut() {
            *d = v[rng.below(v.len())];
        }
        let s = stat(&mut draw);
        if s.is_finite() {
            stats.push(s);
        }
    }
    if stats.is_empty() {
        return None;
    }
    let lo = quantile(&mut stats, 0.025);
    let hi = quantile(&mut stats, 0.975);
    Some(Interval { lo, hi })
}

/// The median of a resample, in place (the statistic [`bootstrap_interval`] is given for a
/// median): [`median`] without its copy.
pub fn median_in_place(values: &mut [f64]) -> f64 {
    let n = values.len();
    if n == 0 {
        return f64::NAN;
    }
    values.sort_unstable_by(f64::total_cmp);
    if n % 2 == 1 {
        values[n / 2]
    } else {
        (values[n / 2 - 1] + values[n / 2]) / 2.0
    }
}

/// The 95 % bootstrap interval of a per-round ratio, or why it has none.
///
/// The rounds are resampled with replacement (a round is the unit: its variants shared the
/// machine's state, so its ratio is one paired observation), and the statistic is the **median
/// of the resampled per-round ratios**, the same statistic as the reported figure, so the
/// interval is the interval of what is printed. The median rather than the ratio of summed
/// KIOPS because the spread between rounds is dominated by the odd fast or slow round (issue 42,
/// item 4: one round per variant at 2–2.5× the median): a sum follows that round, a median does
/// not. With few rounds a median's percentile interval is made of observed ratios and lies within
/// their min–max, which covers the true median with probability 1 − 2^(1−n) only (75 % with 3
/// rounds): so below [`BOOTSTRAP_MIN_VALUES`] (6, the fewest rounds for 95 %) there is no
/// interval ("no interval: fewer than 6 rounds"), never one narrower than the data allow; more
/// rounds narrow it. Fixed seed and resample count ([`BOOTSTRAP_SEED`], [`BOOTSTRAP_RESAMPLES`]):
/// the same runs give the same interval.
pub fn ratio_interval(ratio: &Spread) -> Result<Interval, NoInterval> {
    bootstrap_interval(&ratio.runs, median_in_place, BOOTSTRAP_RESAMPLES, BOOTSTRAP_SEED)
        .ok_or(NoInterval::FewRounds)
}

/// Why a figure over rounds has no interval: the reason shown in the interval's place (a figure
/// that cannot be had, not a failure).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NoInterval {
    /// Fewer than [`BOOTSTRAP_MIN_VALUES`] rounds to resample.
    FewRounds,
    /// Fewer than [`BOOTSTRAP_MIN_VALUES`] repetitions of a point to resample.
    FewRepetitions,
    /// No round has both sides of a ratio: what the rounds lacked ("measured both").
    NoPairedRound(&'static str),
    /// An error against a prediction, where nothing was predicted.
    NoPrediction,
    /// An error against a prediction, where no repetition completed a request.
    NoRequestCompleted,
}

impl std::fmt::Display for NoInterval {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            NoInterval::FewRounds => f.write_str(&no_interval_reason("rounds")),
            NoInterval::FewRepetitions => f.write_str(&no_interval_reason("repetitions")),
            NoInterval::NoPairedRound(lacked) => write!(f, "no interval: no round {lacked}"),
            NoInterval::NoPrediction => f.write_str("no interval: no prediction"),
            NoInterval::NoRequestCompleted => {
                f.write_str("no interval: no repetition completed a request")
            }
        }
    }
}

/// A goal's verdict, taken on a ratio's interval.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum GoalVerdict {
    /// The whole interval is at or above the goal.
    Met,
    /// The whole interval is below the goal.
    Missed,
    /// The interval straddles the goal: the runs cannot tell.
    Inconclusive,
}

impl GoalVerdict {
    pub fn label(self) -> &'static str {
        match self {
            GoalVerdict::Met => "goal met",
            GoalVerdict::Missed => "goal missed",
            GoalVerdict::Inconclusive => "goal inconclusive",
        }
    }
}

/// "at least `goal`" judged on an interval: met only when the whole interval clears the goal,
/// missed only when the whole interval is below it, inconclusive otherwise.
pub fn judge_goal(interval: Interval, goal: f64) -> GoalVerdict {
    if interval.lo >= goal {
        GoalVerdict::Met
    } else if interval.hi < goal {
        GoalVerdict::Missed
    } else {
        GoalVerdict::Inconclusive
    }
}

/// How a ratio's interval lies against the seeds' range.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum RangeOverlap {
    /// The whole interval is inside the range.
    Inside,
    /// The interval and the range do not meet.
    Outside,
    /// They meet, but the interval reaches out of the range.
    Overlapping,
}

impl RangeOverlap {
    pub fn label(self) -> &'static str {
        match self {
            RangeOverlap::Inside => "inside the seeds' range",
            RangeOverlap::Outside => "outside the seeds' range",
            RangeOverlap::Overlapping => "overlaps the seeds' range",
        }
    }
}

/// An interval against a range `(lo, hi)`, bounds included (with 1e-9 of slack for ranges
/// computed from KIOPS quotients).
pub fn judge_range(interval: Interval, (lo, hi): (f64, f64)) -> RangeOverlap {
    let (lo, hi) = (lo - 1e-9, hi + 1e-9);
    if interval.lo >= lo && interval.hi <= hi {
        RangeOverlap::Inside
    } else if interval.hi < lo || interval.lo > hi {
        RangeOverlap::Outside
    } else {
        RangeOverlap::Overlapping
    }
}

/// Why a figure has no interval: "no interval: fewer than 6 rounds" (`unit`: what is
/// resampled, "rounds" or "repetitions").
pub fn no_interval_reason(unit: &str) -> String {
    format!("no interval: fewer than {BOOTSTRAP_MIN_VALUES} {unit}")
}

/// The 95 % percentile-bootstrap interval of a statistic of whole rounds: `rounds` rounds are
/// resampled with replacement and `stat` gets the indices drawn (`0..rounds`, repeats included).
/// For a figure made of several values per round (a ratio of two variants' medians, the largest
/// error over thread counts), so that the values of one round stay together: the pairing within
/// a round is kept. Same seed and resample count as every interval ([`bootstrap_interval`]);
/// `None` below [`BOOTSTRAP_MIN_VALUES`] rounds.
pub fn bootstrap_rounds(rounds: usize, stat: impl Fn(&[usize]) -> f64) -> Option<Interval> {
    let indices: Vec<f64> = (0..rounds).map(|i| i as f64).collect();
    let stat_of_draw = |draw: &mut [f64]| {
        let drawn: Vec<usize> = draw.iter().map(|&i| i as usize).collect();
        stat(&drawn)
    };
    bootstrap_interval(&indices, stat_of_draw, BOOTSTRAP_RESAMPLES, BOOTSTRAP_SEED)
}

/// "within a band `(lo, hi)`" judged on an interval: met when the whole interval is inside
/// (bounds included), missed when the whole interval is outside, inconclusive when it reaches
/// across a bound ([`judge_range`]).
pub fn judge_within(interval: Interval, band: (f64, f64)) -> GoalVerdict {
    match judge_range(interval, band) {
        RangeOverlap::Inside => GoalVerdict::Met,
        RangeOverlap::Outside => GoalVerdict::Missed,
        RangeOverlap::Overlapping => GoalVerdict::Inconclusive,
    }
}

/// The 95 % percentile-bootstrap interval of `stat(a*, b*)` over two independent samples (two
/// runs of an experiment at different times): each of `resamples` draws takes `a.len()` values of
/// `a` and `b.len()` of `b` with replacement, each sample apart (nothing pairs a value of one
/// with a value of the other), and the interval is the 2.5 % and 97.5 % quantiles of the
/// statistic. `None` when either sample has fewer than [`BOOTSTRAP_MIN_VALUES`] finite values.
/// Deterministic for the same inputs and seed, as [`bootstrap_interval`].
pub fn bootstrap_interval_two(
    a: &[f64],
    b: &[f64],
    stat: impl Fn(&mut [f64], &mut [f64]) -> f64,
    resamples: usize,
    seed: u64,
) -> Option<Interval> {
    let finite = |v: &[f64]| -> Vec<f64> { v.iter().copied().filter(|x| x.is_finite()).collect() };
    let (a, b) = (finite(a), finite(b));
    if a.len() < BOOTSTRAP_MIN_VALUES || b.len() < BOOTSTRAP_MIN_VALUES || resamples == 0 {
        return None;
    }
    let mut rng = SplitMix64(seed);
    let (mut draw_a, mut draw_b) = (vec![0.0; a.len()], vec![0.0; b.len()]);
    let mut stats: Vec<f64> = Vec::with_capacity(resamples);
    for _ in 0..resamples {
        for d in draw_a.iter_mut() {
            *d = a[rng.below(a.len())];
        }
        for d in draw_b.iter_mut() {
            *d = b[rng.below(b.len())];
        }
        let s = stat(&mut draw_a, &mut draw_b);
        if s.is_finite() {
            stats.push(s);
        }
    }
    if stats.is_empty() {
        return None;
    }
    Some(Interval { lo: quantile(&mut stats, 0.025), hi: quantile(&mut stats, 0.975) })
}

/// Fits σ and κ of the USL to relative capacities C(n) = X(n)/X(1), n ≥ 2 (least squares on
/// n/C − 1 = σ(n−1) + κn(n−1)); both clamped at 0.
pub fn fit_usl(points: &[(f64, f64)], x1: f64) -> Option<(f64, f64)> {
    let rows: Vec<(f64, f64, f64)> = points
        .iter()
        .filter(|(n, x)| *n > 1.0 && *x > 0.0)
        .map(|&(n, x)| (n - 1.0, n * (n - 1.0), n / (x / x1) - 1.0))
        .collect();
    if rows.len() < 2 {
        return None;
    }
    let (mut aa, mut ab, mut bb, mut ay, mut by) = (0.0, 0.0, 0.0, 0.0, 0.0);
    for (a, b, y) in rows {
        aa += a * a;
        ab += a * b;
        bb += b * b;
        ay += a * y;
        by += b * y;
    }
    let det = aa * bb - ab * ab;
    if det.abs() < 1e-12 {
        return None;
    }
    let sigma = (ay * bb - by * ab) / det;
    let kappa = (aa * by - ab * ay) / det;
    Some((sigma.max(0.0), kappa.max(0.0)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_spread_of_no_run_is_null_in_json_not_zero() {
        let none = serde_json::to_value(Spread::of(Vec::new())).unwrap();
        assert_eq!(none, serde_json::json!({"median": null, "min": null, "max": null, "runs": []}));
        let some = serde_json::to_value(Spread::of(vec![2.0, 1.0, 3.0])).unwrap();
        let runs = [2.0, 1.0, 3.0];
        let wanted = serde_json::json!({"median": 2.0, "min": 1.0, "max": 3.0, "runs": runs});
        assert_eq!(some, wanted);
    }

    #[test]
    fn median_takes_the_midpoint_and_quantile_a_value() {
        assert_eq!(median(&[4.0, 1.0, 3.0, 2.0]), 2.5);
        assert_eq!(median(&[]), 0.0);
        assert_eq!(quantile(&mut [4.0, 1.0, 3.0, 2.0], 0.5), 3.0);
        assert_eq!(quantile(&mut [5.0, 1.0, 4.0, 2.0, 3.0], 0.9), 5.0);
        assert_eq!(quantile(&mut [], 0.9), 0.0);
    }
    #[test]
    fn identical_values_give_a_zero_width_interval_at_that_value() {
        let i = bootstrap_interval(&[1.25; 7], median_in_place, 1000, 1).expect("7 values");
        assert_eq!(i, Interval { lo: 1.25, hi: 1.25 });
    }

    #[test]
    fn fewer_than_the_minimum_values_give_no_interval() {
        let five = [1.0, 2.0, 3.0, 4.0, 5.0];
        assert_eq!(bootstrap_interval(&five, median_in_place, 1000, 1), None);
        assert_eq!(
            bootstrap_interval(&[1.0, 2.0, 3.0, 4.0, 5.0, f64::NAN], median_in_place, 1000, 1),
            None,
            "a NaN is not a value"
        );
        let six = [1.0, 2.0, 3.0, 4.0, 5.0, 6.0];
        assert!(bootstrap_interval(&six, median_in_place, 1000, 1).is_some());
        assert_eq!(bootstrap_interval(&six, median_in_place, 0, 1), None);
    }

    /// The reason for [`BOOTSTRAP_MIN_VALUES`], from its definition: a median's percentile
    /// interval lies within [min, max] of the n values, which covers the true median with
    /// probability 1 − 2^(1−n) (not all n values on one side of it). An interval is given exactly
    /// when that coverage reaches the 95 % it is labelled with.
    #[test]
    fn an_interval_is_given_exactly_when_min_to_max_covers_the_median_95_percent() {
        for n in 2..=8usize {
            let min_to_max_coverage = 1.0 - 0.5f64.powi(n as i32 - 1);
            let values: Vec<f64> = (0..n).map(|i| 1.0 + i as f64).collect();
            let interval = bootstrap_interval(&values, median_in_place, 1000, BOOTSTRAP_SEED);
            assert_eq!(
                interval.is_some(),
                min_to_max_coverage >= 0.95,
                "{n} values: [min, max] covers the median {:.2} % of the time, {interval:?}",
                100.0 * min_to_max_coverage
            );
        }
    }

    #[test]
    fn a_bootstrap_interval_widens_with_the_spread_and_stays_within_the_values() {
        let narrow: Vec<f64> = (0..9).map(|i| 1.0 + 0.01 * (i as f64 - 4.0)).collect();
        let wide: Vec<f64> = (0..9).map(|i| 1.0 + 0.10 * (i as f64 - 4.0)).collect();
        let n = bootstrap_interval(&narrow, median_in_place, 2000, 7).unwrap();
        let w = bootstrap_interval(&wide, median_in_place, 2000, 7).unwrap();
        assert!(n.lo < 1.0 && n.hi > 1.0 && w.lo < 1.0 && w.hi > 1.0, "{n:?} {w:?}");
        assert!(w.hi - w.lo > 5.0 * (n.hi - n.lo), "{n:?} {w:?}");
        // A median's percentile interval is made of the values themselves.
        assert!(w.lo >= 0.6 && w.hi <= 1.4, "{w:?}");
    }

    #[test]
    fn a_share_of_few_samples_has_a_wide_interval_and_of_many_a_narrow_one() {
        // 25 of 62 samples (a flamegraph's share on a loaded machine): 29.0–52.7 %.
        let few = wilson_interval_pct(25, 62).unwrap();
        assert!((few.lo - 29.0).abs() < 0.1 && (few.hi - 52.7).abs() < 0.1, "{few:?}");
        let many = wilson_interval_pct(25_000, 62_000).unwrap();
        assert!(many.hi - many.lo < 1.0 && many.contains(100.0 * 25.0 / 62.0), "{many:?}");
        let none = wilson_interval_pct(0, 62).unwrap();
        assert!(
            none.lo == 0.0 && none.hi > 5.0,
            "no sample in a category does not make it 0 %: {none:?}"
        );
        assert_eq!(wilson_interval_pct(1, 0), None);
        assert_eq!(wilson_interval_pct(3, 2), None);
    }

    #[test]
    fn a_bootstrap_interval_is_the_same_for_the_same_seed() {
        let v = [0.93, 1.02, 1.11, 0.98, 1.07, 1.31, 0.88];
        let mean = |d: &mut [f64]| d.iter().sum::<f64>() / d.len() as f64;
        let a = bootstrap_interval(&v, mean, 4000, BOOTSTRAP_SEED).unwrap();
        assert_eq!(a, bootstrap_interval(&v, mean, 4000, BOOTSTRAP_SEED).unwrap());
        assert!(a.lo < a.hi && a.contains(mean(&mut v.clone())), "{a:?}");
        // Another seed draws other resamples (the mean of 7 values takes many values).
        assert_ne!(a, bootstrap_interval(&v, mean, 4000, BOOTSTRAP_SEED + 1).unwrap());
    }

    #[test]
    fn a_bootstrap_over_rounds_keeps_each_round_whole() {
        // Two values per round whose ratio is 2 in every round, however far apart the rounds are:
        // resampling whole rounds gives exactly 2; the same values resampled apart would not.
        let a = [100.0, 300.0, 900.0, 150.0, 600.0, 250.0];
        let b = [50.0, 150.0, 450.0, 75.0, 300.0, 125.0];
        let ratio = |drawn: &[usize]| {
            let m = |v: &[f64]| median(&drawn.iter().map(|&r| v[r]).collect::<Vec<_>>());
            m(&a) / m(&b)
        };
        assert_eq!(bootstrap_rounds(6, ratio), Some(Interval { lo: 2.0, hi: 2.0 }));
        assert_eq!(bootstrap_rounds(5, ratio), None, "fewer than 6 rounds");
        assert_eq!(no_interval_reason("rounds"), "no interval: fewer than 6 rounds");
        assert_eq!(NoInterval::FewRounds.to_string(), no_interval_reason("rounds"));
        let unpaired = NoInterval::NoPairedRound("measured both").to_string();
        assert_eq!(unpaired, "no interval: no round measured both");
    }

    #[test]
    fn within_a_band_is_met_missed_or_inconclusive_by_the_interval() {
        let i = |lo, hi| Interval { lo, hi };
        assert_eq!(judge_within(i(-10.0, 12.0), (-15.0, 15.0)), GoalVerdict::Met);
        assert_eq!(judge_within(i(16.0, 30.0), (-15.0, 15.0)), GoalVerdict::Missed);
        assert_eq!(judge_within(i(-40.0, -16.0), (-15.0, 15.0)), GoalVerdict::Missed);
        assert_eq!(judge_within(i(10.0, 20.0), (-15.0, 15.0)), GoalVerdict::Inconclusive);
    }

    #[test]
    fn median_in_place_is_median() {
        for v in [vec![3.0, 1.0, 2.0], vec![4.0, 1.0, 2.0, 3.0], vec![5.0]] {
            assert_eq!(median_in_place(&mut v.clone()), median(&v));
        }
        assert!(median_in_place(&mut []).is_nan());
    }

    #[test]
    fn a_two_sample_interval_resamples_each_sample_apart() {
        let ratio = |a: &mut [f64], b: &mut [f64]| median_in_place(a) / median_in_place(b);
        let same = [1.0, 1.1, 0.9, 1.05, 0.95, 1.02];
        let i = bootstrap_interval_two(&same, &same, ratio, 4000, BOOTSTRAP_SEED).unwrap();
        assert!(
            i.contains(1.0) && i.lo < 1.0 && i.hi > 1.0,
            "the same sample twice: its ratio's interval covers 1: {i:?}"
        );
        let double: Vec<f64> = same.iter().map(|x| 2.0 * x).collect();
        let d = bootstrap_interval_two(&double, &same, ratio, 4000, BOOTSTRAP_SEED).unwrap();
        assert!(d.lo > 1.5 && d.hi < 2.6, "{d:?}");
        assert_eq!(
            bootstrap_interval_two(&same, &same[..5], ratio, 4000, 1),
            None,
            "five values on a side are too few for a 95 % interval"
        );
    }
}
