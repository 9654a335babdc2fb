//! The shared statistics of every experiment: the median and the spread of repeated runs. The
//! one definition of each (the experiments, the model and the CLI use these).

use serde::Serialize;

/// Median, minimum, maximum and every value.
#[derive(Clone, Debug, Default, Serialize)]
pub struct Spread {
    pub median: f64,
    pub min: f64,
    pub max: f64,
    pub runs: Vec<f64>,
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

