//! `debug-off`: only io_service_bytes and io_serviced (seed patch 4/4, `CONFIG_DEBUG_BLK_CGROUP`
//! off).
//!
//! What it changes: every debug statistic is skipped; the two kept counters are per-CPU adds with
//! no all-slot sum, applied under the scheduler lock where they are emitted (at dispatch). Nothing
//! is deferred, so group removal needs only the scheduler lock.
//!
//! Why it exists: the seeds measured +30 % over `queue-lock` for it (400 KIOPS), close to removing
//! every statistic (404).

use schedlab_core::{Route, SchedLockOnly, StatKind, StatsKept, StatsPolicy};

/// Only the two legacy counters, under the scheduler lock.
#[derive(Debug, Default)]
pub struct DebugOff;

impl StatsPolicy for DebugOff {
    const NAME: &'static str = "debug-off";
    const SUMMARY: &'static str =
        "only io_service_bytes and io_serviced, under the scheduler lock (seed patch 4/4)";
    const KEPT: StatsKept = StatsKept::Legacy;
    type Protection = SchedLockOnly;
    type DispatchCapture = ();
    type GroupState = ();

    #[inline]
    fn route(&self, kind: StatKind) -> Route {
        Route::legacy_only(kind, Route::Now)
    }
}
