//! `unlocked`: the `queue-lock` deferral with no lock at all, as the seeds measured "without even
//! this lock" (patch 3/4's note: the queue lock cost "at most ~5 %").
//!
//! What it changes: the deferred updates run with no lock and no pin. That is sound only while
//! groups are never removed and processes never move: then a queue's group never changes, and the
//! queue's reference keeps it allocated. Its protection is therefore `NoRemoval`: the scheduler
//! refuses group removal and process moves, the CLI refuses `--churn`, and the model suite uses a
//! copy that claims otherwise (and needs `unsafe` to do so) as a negative control.
//!
//! Why it exists: to measure what the queue lock itself costs.

use schedlab_core::{
    DeferredBatch, DeferredCx, NoRemoval, Route, StatKind, StatsKept, StatsPolicy,
};

/// Deferred statistics with no lock (unsafe under group removal, which is therefore refused).
#[derive(Debug, Default)]
pub struct Unlocked;

impl StatsPolicy for Unlocked {
    const NAME: &'static str = "unlocked";
    const SUMMARY: &'static str =
        "stats deferred with no lock at all; unsafe under group removal (refused with churn)";
    const KEPT: StatsKept = StatsKept::Full;
    type Protection = NoRemoval;
    type DispatchCapture = ();
    type GroupState = ();

    #[inline]
    fn route(&self, kind: StatKind) -> Route {
        Route::defer_if_deferrable(kind)
    }

    fn run_deferred(&self, cx: &DeferredCx<'_, NoRemoval>, batch: &mut DeferredBatch) {
        // Why everything this touches still exists (notes/invariants.md):
        // - each event's queue: pinned by its request or its process (I1a);
        // - each queue's group: under the `NoRemoval` protection the scheduler refuses group
        //   removal and process moves, so a queue's group never changes, and the queue's own
        //   reference keeps it allocated until the queue is freed, which I1a excludes while this
        //   runs (I1c). `groups_stay` is that protection's witness.
        batch.apply(&cx.groups_stay(), cx.now());
    }
}
