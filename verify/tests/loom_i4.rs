//! I4: the scheduler instance is not torn down while a deferred update is inside its window
//! (kernel-bfq.md §5, third bug): a thread runs paths with deferred updates while the main thread
//! drops its handle.
#![cfg(loom)]

use schedlab_core::sync::model;
use schedlab_variants::{debug_off::DebugOff, epoch::Epoch, queue_lock::QueueLock, sched_lock::SchedLock};
use schedlab_verify::scenarios::i4_teardown_vs_deferred;

#[test]
fn i4_teardown_sched_lock() {
    model(i4_teardown_vs_deferred::<SchedLock>);
}

#[test]
fn i4_teardown_queue_lock() {
    model(i4_teardown_vs_deferred::<QueueLock>);
}

#[test]
fn i4_teardown_epoch() {
    model(i4_teardown_vs_deferred::<Epoch>);
}

#[test]
fn i4_teardown_debug_off() {
    model(i4_teardown_vs_deferred::<DebugOff>);
}
