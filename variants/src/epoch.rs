//! `epoch`: deferred and lock-free. The deferred updates run inside a crossbeam-epoch pin; a group
//! whose last reference goes is freed only after every pin that could have read it has ended.
//!
//! What it changes: no queue lock. Group removal takes only the scheduler lock; the group's memory
//! outlives any deferred update that may still reach it, because its protection, `GracePeriod`,
//! hands retired groups to the epoch collector instead of freeing them (and a parent released by
//! its child's free waits for a grace period of its own). Updates that land on an offline group
//! during its grace period are not lost: the free moves them into the parent (the 2023 kernel
//! design of draining pending updates on release, kernel-bfq.md §4). The counters need no lock to
//! add.
//!
//! Why it exists: every statistic, with the same values as `sched-lock`, at (the goal) the cost of
//! `debug-off` — the design the kernel did not have.

use schedlab_core::{
    DeferredBatch, DeferredCx, GracePeriod, Route, StatKind, StatsKept, StatsPolicy,
};

/// Deferred statistics protected by epoch-based reclamation.
#[derive(Debug, Default)]
pub struct Epoch;

impl StatsPolicy for Epoch {
    const NAME: &'static str = "epoch";
    const SUMMARY: &'static str = "stats deferred lock-free; crossbeam-epoch keeps a group alive until no update can reach it";
    const KEPT: StatsKept = StatsKept::Full;
    type Protection = GracePeriod;
    type DispatchCapture = ();
    type GroupState = ();

    #[inline]
    fn route(&self, kind: StatKind) -> Route {
        Route::defer_if_deferrable(kind)
    }

    fn run_deferred(&self, cx: &DeferredCx<'_, GracePeriod>, batch: &mut DeferredBatch) {
        // Why everything this touches still exists (notes/invariants.md):
        // - each event's queue: pinned by its request or its process (I1a);
        // - each queue's group: loaded from the queue by `apply` while this thread is pinned. The
        //   queue holds a reference on its current group; a reparenting that drops the group's
        //   last reference retires it through the `GracePeriod` protection, which frees it only
        //   after every pin taken before the retirement has ended, this one included (I1d). The
        //   pin is the witness `apply` asks for, and it is held until `apply` returns.
        let pin = cx.pin();
        batch.apply(&pin, cx.now());
    }
}
