//! `sched-lock`: every statistics update inside the scheduler lock (BFQ 4.12–4.14).
//!
//! What it changes: nothing is deferred. Every `bfqg_stats_*` call runs where the scheduler emits
//! it, with the scheduler lock held, so its cost (above all the locked all-slot sums of
//! `avg_queue_size` and `set_start_empty_time`) is serial time for every thread.
//!
//! Why it exists: it is the baseline of the seeds' table (250–260 KIOPS, stats ≈ 40 % of BFQ).
//!
//! NOTE: in 4.12–4.14 the completion statistics ran outside the scheduler lock; the project's
//! definition of this variant ("every update inside the scheduler lock") puts them under it too,
//! so that this is the fully serial end of the range. The update points are the 4.15 ones for all
//! variants (notes/kernel-map.md), so that final values are comparable field by field.

use schedlab_core::{Route, SchedLockOnly, StatKind, StatsKept, StatsPolicy};

/// Every statistics update under the scheduler lock.
#[derive(Debug, Default)]
pub struct SchedLock;

impl StatsPolicy for SchedLock {
    const NAME: &'static str = "sched-lock";
    const SUMMARY: &'static str = "every stats update inside the scheduler lock (BFQ 4.12-4.14)";
    const KEPT: StatsKept = StatsKept::Full;
    // Nothing reads a group outside the scheduler lock, so removal needs only that lock.
    type Protection = SchedLockOnly;
    type DispatchCapture = ();
    type GroupState = ();

    #[inline]
    fn route(&self, _kind: StatKind) -> Route {
        Route::Now
    }
}
