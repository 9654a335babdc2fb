//! `rstat`: io_service_bytes and io_serviced the way blk-cgroup keeps them since Linux 6.2 and
//! its 2023 fix — per-CPU, lock-free, and flushed when someone reads them.
//!
//! What it changes: the debug statistics are off (as `debug-off`); the two kept counters are
//! updated after the scheduler lock with no lock at all: a plain add to the group's slot for this
//! CPU, and, the first time that slot has something unflushed, a push of the group on the CPU's
//! lock-free list of pending groups (`schedlab_core::objects::rstat`). A read of the statistics (any
//! `schedlab` report, during and after a run) flushes the lists into the groups first. A removed
//! group is drained when it is released, after its epoch grace period: no pending entry holds a
//! reference on it (the 6.2 version did, and leaked removed groups; notes/kernel-map.md).
//!
//! Why it exists: the kernel's later answer to the same cost the seeds measured — the update is a
//! per-CPU add, the sum is paid by the reader — to set beside `debug-off`, which keeps the same two
//! counters under the scheduler lock.

use schedlab_core::{
    DeferredBatch, DeferredCx, GracePeriod, Route, StatKind, StatsKept, StatsPolicy,
};

/// The legacy counters on per-CPU rstat lists, flushed on read.
#[derive(Debug, Default)]
pub struct Rstat;

impl StatsPolicy for Rstat {
    const NAME: &'static str = "rstat";
    const SUMMARY: &'static str = "io_service_bytes/io_serviced per-CPU and lock-free, flushed on read, drained on release (blk-cgroup 6.2 + 2023)";
    const KEPT: StatsKept = StatsKept::Legacy;
    const RSTAT_LISTS: bool = true;
    type Protection = GracePeriod;
    type DispatchCapture = ();
    type GroupState = ();

    #[inline]
    fn route(&self, kind: StatKind) -> Route {
        Route::legacy_only(kind, Route::Defer)
    }

    fn run_deferred(&self, cx: &DeferredCx<'_, GracePeriod>, batch: &mut DeferredBatch) {
        // Why everything this touches still exists (notes/invariants.md):
        // - each event's queue: pinned by its request (I1a);
        // - each queue's group: loaded from the queue by `apply_to_rstat` while this thread is
        //   pinned; a group retired meanwhile is freed only after the pin ends (I1d), and only
        //   after its release has drained the pending lists, so the entry this update may push
        //   never outlives the group (I3, schedlab_core::objects::rstat).
        let pin = cx.pin();
        batch.apply_to_rstat(&pin, cx.rstat());
    }
}
