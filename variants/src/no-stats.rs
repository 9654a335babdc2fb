//! `no-stats`: no group statistics at all.
//!
//! What it changes: every update is skipped; the scheduler's own work (trees, budgets, merging,
//! idling) is unchanged.
//!
//! Why it exists: the seeds' upper bound (404 KIOPS, +55 % over `sched-lock`), and the floor of
//! the per-request cost.

use schedlab_core::{DeferredBatch, DeferredCx, LockedView, Route, SchedLockOnly, StatKind, StatsKept, StatsPolicy};

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

    fn new() -> Self {
        NoStats
    }

    #[inline]
    fn route(&self, _kind: StatKind) -> Route {
        Route::Skip
    }

    fn dispatch_begin(&self, _view: &LockedView<'_>) {}

    fn run_deferred(&self, _cx: &DeferredCx<'_, SchedLockOnly>, batch: &mut DeferredBatch) {
        unreachable!("no-stats defers nothing, got {} updates", batch.len());
    }
}
