//! The counts a measurement produces, as values: a histogram of clock ticks, one class's and one
//! path's counts, and the table of every class. They merge; nothing here is per thread or global.

use super::{LockClass, MAX_CLASSES, NR_PATHS};

/// Highest value a histogram tracks (clock ticks: about an hour of TSC); larger ones are clamped.
pub(super) const HIGHEST: u64 = 1 << 44;

/// A histogram of clock ticks: `hdrhistogram` (2 significant digits, so percentiles within 1 %)
/// for the distribution, with the exact count, sum, min and max beside it.
#[derive(Clone, Default)]
pub struct Histogram {
    pub(super) hdr: Option<Box<hdrhistogram::Histogram<u64>>>,
    pub(super) count: u64,
    pub(super) sum: u128,
    pub(super) min: u64,
    pub(super) max: u64,
}

impl std::fmt::Debug for Histogram {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Histogram {{ count: {}, sum: {}, max: {} }}", self.count, self.sum, self.max)
    }
}

pub(super) fn new_hdr() -> Box<hdrhistogram::Histogram<u64>> {
    Box::new(
        hdrhistogram::Histogram::new_with_bounds(1, HIGHEST, 2).expect("valid histogram bounds"),
    )
}

impl Histogram {
    pub fn new() -> Self {
        Self::default()
    }

    #[inline]
    pub fn record(&mut self, v: u64) {
        self.hdr.get_or_insert_with(new_hdr).saturating_record(v.clamp(1, HIGHEST));
        if self.count == 0 || v < self.min {
            self.min = v;
        }
        self.count += 1;
        self.sum += v as u128;
        self.max = self.max.max(v);
    }

    pub fn merge(&mut self, other: &Histogram) {
        let Some(theirs) = &other.hdr else { return };
        self.hdr.get_or_insert_with(new_hdr).add(&**theirs).expect("histograms of the same bounds");
        if self.count == 0 || other.min < self.min {
            self.min = other.min;
        }
        self.count += other.count;
        self.sum += other.sum;
        self.max = self.max.max(other.max);
    }

    pub fn count(&self) -> u64 {
        self.count
    }

    pub fn sum(&self) -> u128 {
        self.sum
    }

    pub fn max(&self) -> u64 {
        self.max
    }

    pub fn min(&self) -> u64 {
        if self.count == 0 {
            0
        } else {
            self.min
        }
    }

    pub fn mean(&self) -> f64 {
        if self.count == 0 {
            0.0
        } else {
            self.sum as f64 / self.count as f64
        }
    }

    /// The value below which a fraction `q` (0..=1) of the values lie (within 1 %, clamped to the
    /// exact min and max); 0 when empty.
    pub fn quantile(&self, q: f64) -> u64 {
        match &self.hdr {
            Some(h) if self.count > 0 => {
                h.value_at_quantile(q.clamp(0.0, 1.0)).clamp(self.min, self.max)
            }
            _ => 0,
        }
    }

    /// The standard deviation (from the histogram's buckets, within 1 %).
    pub fn stdev(&self) -> f64 {
        self.hdr.as_ref().filter(|_| self.count > 1).map_or(0.0, |h| h.stdev())
    }

    /// The fraction of values at or below `v` (0..=1).
    pub fn rank_of(&self, v: u64) -> f64 {
        match &self.hdr {
            Some(h) if self.count > 0 => h.count_between(0, v) as f64 / h.len() as f64,
            _ => 0.0,
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Counts per class and per path, and the table of every class.

/// Everything counted for one class. Times are in raw clock ticks.
#[derive(Clone, Debug, Default)]
pub struct ClassStats {
    /// Every acquisition made while measuring (exact).
    pub acquisitions: u64,
    /// Acquisitions whose first attempt failed (exact).
    pub contentions: u64,
    /// Acquisitions by another thread than the previous holder (exact).
    pub owner_changes: u64,
    /// Timed waits of contended acquisitions: every one in exact mode, one in
    /// [`wait_sampling`] otherwise (`wait.count()` is the sample count; exact when it equals
    /// `contentions`).
    pub wait: Histogram,
    /// Exact mode only: the waits the wait sampler picked, i.e. what the sampled mode would have
    /// timed in the same run.
    pub wait_sample: Histogram,
    /// Timed holds: every hold in exact mode, the sample otherwise (`hold.count()` is the sample
    /// count; the figures are exact when it equals `acquisitions`).
    pub hold: Histogram,
    /// Exact mode only: the holds the sampler picked, i.e. what the sampled mode would have timed
    /// in the same run.
    pub hold_sample: Histogram,
    pub paths: [PathStats; NR_PATHS],
    /// Timed hold of this class while the thread also held the class of that index.
    pub hold_inside: [u128; MAX_CLASSES],
    /// Wait of this class while the thread held the class of that index.
    pub wait_inside: [u128; MAX_CLASSES],
}

/// The part of a class's counts that one path did (ticks).
#[derive(Clone, Copy, Debug, Default)]
pub struct PathStats {
    pub acquisitions: u64,
    pub contentions: u64,
    /// Sum of the timed waits, and how many there were.
    pub wait: u64,
    pub waits_timed: u64,
    /// Sum of the timed holds, and how many there were.
    pub hold: u64,
    pub holds_timed: u64,
}

impl ClassStats {
    pub fn merge(&mut self, o: &ClassStats) {
        self.acquisitions += o.acquisitions;
        self.contentions += o.contentions;
        self.owner_changes += o.owner_changes;
        self.wait.merge(&o.wait);
        self.hold.merge(&o.hold);
        self.hold_sample.merge(&o.hold_sample);
        self.wait_sample.merge(&o.wait_sample);
        for (a, b) in self.paths.iter_mut().zip(&o.paths) {
            a.acquisitions += b.acquisitions;
            a.contentions += b.contentions;
            a.wait += b.wait;
            a.waits_timed += b.waits_timed;
            a.hold += b.hold;
            a.holds_timed += b.holds_timed;
        }
        for i in 0..MAX_CLASSES {
            self.hold_inside[i] += o.hold_inside[i];
            self.wait_inside[i] += o.wait_inside[i];
        }
    }

    /// Whether every hold was timed (exact mode, or sampling 1 in 1).
    pub fn holds_exact(&self) -> bool {
        self.hold.count() >= self.acquisitions
    }

    /// Whether every contended wait was timed (exact mode, or wait sampling 1 in 1).
    pub fn waits_exact(&self) -> bool {
        self.wait.count() >= self.contentions
    }
}

/// A copy of the table: every class that was acquired at least once while measuring.
#[derive(Clone, Debug, Default)]
pub struct LockStats {
    pub classes: Vec<(LockClass, ClassStats)>,
}

impl LockStats {
    /// Adds another table (of another run) into this one.
    pub fn merge(&mut self, other: &LockStats) {
        for (class, stats) in &other.classes {
            match self.classes.iter_mut().find(|(c, _)| c == class) {
                Some((_, mine)) => mine.merge(stats),
                None => self.classes.push((*class, stats.clone())),
            }
        }
        self.classes.sort_by_key(|(c, _)| *c);
    }

    /// The counts of one class, if it was seen.
    pub fn class(&self, class: LockClass) -> Option<&ClassStats> {
        self.classes.iter().find(|(c, _)| *c == class).map(|(_, s)| s)
    }
}
