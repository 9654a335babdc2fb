//! `mainline`: the statistics today's kernel (Linux 5.x–6.18) has left, where it has them —
//! io_service_bytes and io_serviced counted per CPU when a request is submitted, *before* BFQ's
//! scheduler lock, and read through blk-cgroup's rstat, flushed when read.
//!
//! What it changes, against `rstat`: the one update moves from the dispatch (after the scheduler
//! lock, in the dispatcher's thread) to the submission (before any lock of the insert, in the
//! submitting thread: `StatsPolicy::LEGACY_IO_AT_SUBMIT`). In 6.18 `bfq_insert_request` calls
//! `bfqg_stats_update_legacy_io` before `spin_lock_irq(&bfqd->lock)`, and blk-cgroup counts each
//! bio in `blk_cgroup_bio_start` at submission; the debug statistics are compiled out
//! (`CONFIG_BFQ_CGROUP_DEBUG` off). Like `rstat`, the add is a plain per-CPU add plus, the first
//! time a CPU's slot has something unflushed, a push on that CPU's lock-free list; reads flush; a
//! removed group is drained at its release, after its epoch grace period.
//!
//! NOTE: the kernel makes two per-CPU updates per request (the legacy rwstat add at insert and
//! the rstat iostat add per bio at submission); here one, per request that reaches the insert
//! (kernel-map.md D49).
//!
//! Why it exists: `notes/kernel-map.md` §4 mapped today's kernel to `debug-off+lists`, statistics
//! under the lock; the kernel's source and its tracepoints say they run outside it. This is the
//! row the kernel peer holds against this machine's BFQ.

use crate::rstat::Rstat;
use schedlab_core::{
    DeferredBatch, DeferredCx, GracePeriod, Route, StatKind, StatsKept, StatsPolicy,
};

/// The legacy counters counted at submission, before the scheduler lock, on per-CPU rstat lists.
#[derive(Debug, Default)]
pub struct Mainline;

/// `rstat` with `LEGACY_IO_AT_SUBMIT`: the route and the deferred update are `rstat`'s.
impl StatsPolicy for Mainline {
    const NAME: &'static str = "mainline";
    const SUMMARY: &'static str = "io_service_bytes/io_serviced per-CPU at submission, before the scheduler lock, flushed on read (Linux 5.x-6.18)";
    const KEPT: StatsKept = StatsKept::Legacy;
    const RSTAT_LISTS: bool = true;
    const LEGACY_IO_AT_SUBMIT: bool = true;
    type Protection = GracePeriod;
    type DispatchCapture = ();
    type GroupState = ();

    #[inline]
    fn route(&self, kind: StatKind) -> Route {
        Rstat.route(kind)
    }

    fn run_deferred(&self, cx: &DeferredCx<'_, GracePeriod>, batch: &mut DeferredBatch) {
        // Why everything this touches still exists (notes/invariants.md):
        // - the event's queue: pinned by the submitting process, which runs this before its
        //   insert (I1a);
        // - the queue's group: as for `rstat`, under its pin (I1d, I3).
        Rstat.run_deferred(cx, batch);
    }
}
