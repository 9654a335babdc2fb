//! The shared statistics of every experiment: the median and the spread of repeated runs, the
//! per-thread spread of a run's jobs, and the USL fit of a scaling curve. The one definition of
//! each (the experiments, the model and the CLI use these).

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
        let pick = |f: &dyn Fn(&[f64]) -> f64| median(&runs.iter().filter(|r| !r.is_empty()).map(|r| f(r)).collect::<Vec<_>>());
        PerThread {
            min: pick(&|r| r.iter().copied().fold(f64::INFINITY, f64::min)),
            median: pick(&|r| median(r)),
            max: pick(&|r| r.iter().copied().fold(f64::NEG_INFINITY, f64::max)),
            runs,
        }
    }
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
}
