//! I3: no leak. After I/O, group removal and process exit in two threads, and teardown, no group
//! or queue is alive.
#![cfg(loom)]

use schedlab_core::sync::model;
use schedlab_variants::{debug_off::DebugOff, epoch::Epoch, queue_lock::QueueLock, sched_lock::SchedLock};
use schedlab_verify::scenarios::i3_no_leak;

#[test]
fn i3_no_leak_sched_lock() {
    model(i3_no_leak::<SchedLock>);
}

#[test]
fn i3_no_leak_queue_lock() {
    model(i3_no_leak::<QueueLock>);
}

#[test]
fn i3_no_leak_epoch() {
    model(i3_no_leak::<Epoch>);
}

#[test]
fn i3_no_leak_debug_off() {
    model(i3_no_leak::<DebugOff>);
}
