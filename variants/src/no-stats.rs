//! `no-stats`: no group statistics at all.
//!
//! What it changes: every update is skipped; the scheduler's own work (trees, budgets, merging,
//! idling) is unchanged.
//!
//! Why it exists: the seeds' upper bound (404 KIOPS, +55 % over `sched-lock`), and the floor of
//! the per-request cost.

use schedlab_core::{DeferredBatch, DeferredCx, LockedView, Route, StatKind, StatsKept, StatsPolicy};

/// No statistics.
#[derive(Debug, Default)]
pub struct NoStats;

impl StatsPolicy for NoStats {
    const NAME: &'static str = "no-stats";
    const SUMMARY: &'static str = "no group statistics at all";
    const KEPT: StatsKept = StatsKept::None;
    const REPARENT_HOLDS_QUEUE_LOCK: bool = false;
    const SAFE_UNDER_GROUP_REMOVAL: bool = true;
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

    fn run_deferred(&self, _cx: &DeferredCx<'_>, batch: &mut DeferredBatch) {
        unreachable!("no-stats defers nothing, got {} updates", batch.len());
    }
}
