//! `epoch`: deferred and lock-free. The deferred updates run inside a crossbeam-epoch pin; a group
//! whose last reference goes is freed only after every pin that could have read it has ended.
//!
//! What it changes: no queue lock. Group removal takes only the scheduler lock; the group's memory
//! outlives any deferred update that may still reach it, because `retire_group` hands it to the
//! epoch collector instead of freeing it. Updates that land on an offline group during its grace
//! period are not lost: the free path moves them into the parent (the 2023 kernel design of
//! draining pending updates on release, kernel-bfq.md §4). The counters need no lock to add.
//!
//! Why it exists: every statistic, with the same values as `sched-lock`, at (the goal) the cost of
//! `debug-off` — the design the kernel did not have.

use schedlab_core::{DeferredBatch, DeferredCx, LockedView, RetiredGroup, Route, StatKind, StatsKept, StatsPolicy};

/// Deferred statistics protected by epoch-based reclamation.
#[derive(Debug, Default)]
pub struct Epoch;

/// Frees the group once every current pin has ended (and, through `free`, retires its parent the
/// same way if this was the parent's last reference).
fn retire_after_grace_period(group: RetiredGroup) {
    let guard = crossbeam_epoch::pin();
    guard.defer(move || group.free(&mut retire_parent));
}

/// A parent whose last reference went when its child was freed. A deferred update pinned after
/// the child's retirement may still have read the parent from a queue, so the parent waits for a
/// grace period of its own — unless the scheduler is gone, when no update can run (I4) and the
/// parent can go at once (this is also what lets the chain finish while the epoch collector
/// itself is being dropped).
fn retire_parent(parent: RetiredGroup) {
    if parent.scheduler_gone() {
        parent.free_now();
    } else {
        retire_after_grace_period(parent);
    }
}

impl StatsPolicy for Epoch {
    const NAME: &'static str = "epoch";
    const SUMMARY: &'static str = "stats deferred lock-free; crossbeam-epoch keeps a group alive until no update can reach it";
    const KEPT: StatsKept = StatsKept::Full;
    const REPARENT_HOLDS_QUEUE_LOCK: bool = false;
    const SAFE_UNDER_GROUP_REMOVAL: bool = true;
    const RECLAIMS_AFTER_GRACE_PERIOD: bool = true;
    type DispatchCapture = ();
    type GroupState = ();

    fn new() -> Self {
        Epoch
    }

    #[inline]
    fn route(&self, kind: StatKind) -> Route {
        if kind.deferrable() {
            Route::Defer
        } else {
            Route::Now
        }
    }

    fn dispatch_begin(&self, _view: &LockedView<'_>) {}

    fn run_deferred(&self, cx: &DeferredCx<'_>, batch: &mut DeferredBatch) {
        // Why everything this touches still exists (notes/invariants.md):
        // - each event's queue: pinned by its request or its process (I1a);
        // - each queue's group: loaded from the queue while this thread is pinned. The queue holds
        //   a reference on its current group; a reparenting that drops the group's last reference
        //   retires it through `retire_after_grace_period`, which frees it only after every pin
        //   taken before the retirement has ended, this one included (I1d).
        let _pin = crossbeam_epoch::pin();
        // SAFETY: I1a and I1d as argued above; the pin is held until apply returns.
        unsafe { batch.apply(cx.now()) };
    }

    fn retire_group(&self, group: RetiredGroup) {
        retire_after_grace_period(group);
    }

    fn quiesce() {
        // Each flush moves this thread's garbage to the global queue and tries to advance the
        // epoch and collect; with no thread pinned, a few rounds free everything retired.
        for _ in 0..64 {
            crossbeam_epoch::pin().flush();
        }
    }
}
