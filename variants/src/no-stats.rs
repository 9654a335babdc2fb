//! `no-stats`: no group statistics at all.
//!
//! What it changes: every update is skipped; the scheduler's own work (trees, budgets, merging,
//! idling) is unchanged.
//!
//! Why it exists: the seeds' upper bound (404 KIOPS, +55 % over `sched-lock`), and the floor of
//! the per-request cost.

use schedlab_core::{Route, SchedLockOnly, StatKind, StatsKept, StatsPolicy};

/// No statistics.
#[derive(Debug, Default)]
pub struct NoStats;

impl StatsPolicy for NoStats {
    const NAME: &'static str = "no-stats";
    const SUMMARY: &'static str = "no group statistics at all";
    const KEPT: StatsKept = StatsKept::None;
    type Protection = SchedLockOnly;
    type DispatchCapture = ();
    type GroupState = ();

    #[inline]
    fn route(&self, _kind: StatKind) -> Route {
        Route::Skip
    }
}
