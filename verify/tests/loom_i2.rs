//! I2: conservation. With a concurrent insert and dispatch, once quiescent every group's
//! inserted - removed = queued = 0, inserted = completed + merged, io_serviced = dispatched.
#![cfg(loom)]

use schedlab_core::sync::model;
use schedlab_variants::{debug_off::DebugOff, epoch::Epoch, queue_lock::QueueLock, sched_lock::SchedLock};
use schedlab_verify::scenarios::i2_insert_vs_dispatch;

#[test]
fn i2_conservation_sched_lock() {
    model(i2_insert_vs_dispatch::<SchedLock>);
}

#[test]
fn i2_conservation_queue_lock() {
    model(i2_insert_vs_dispatch::<QueueLock>);
}

#[test]
fn i2_conservation_epoch() {
    model(i2_insert_vs_dispatch::<Epoch>);
}

#[test]
fn i2_conservation_debug_off() {
    model(i2_insert_vs_dispatch::<DebugOff>);
}
