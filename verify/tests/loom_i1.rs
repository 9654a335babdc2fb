//! I1: no group is freed while a deferred insert, dispatch or completion statistics update can
//! still reach it (notes/invariants.md). Each variant against a concurrent group removal.
#![cfg(loom)]

use schedlab_core::sync::model;
use schedlab_variants::{debug_off::DebugOff, epoch::Epoch, queue_lock::QueueLock, sched_lock::SchedLock};
use schedlab_verify::scenarios::{i1_dispatch_vs_removal, i1_insert_vs_removal};

#[test]
fn i1_insert_sched_lock() {
    model(i1_insert_vs_removal::<SchedLock>);
}

#[test]
fn i1_insert_queue_lock() {
    model(i1_insert_vs_removal::<QueueLock>);
}

#[test]
fn i1_insert_epoch() {
    model(i1_insert_vs_removal::<Epoch>);
}

#[test]
fn i1_insert_debug_off() {
    model(i1_insert_vs_removal::<DebugOff>);
}

#[test]
fn i1_dispatch_and_completion_sched_lock() {
    model(i1_dispatch_vs_removal::<SchedLock>);
}

#[test]
fn i1_dispatch_and_completion_queue_lock() {
    model(i1_dispatch_vs_removal::<QueueLock>);
}

#[test]
fn i1_dispatch_and_completion_epoch() {
    model(i1_dispatch_vs_removal::<Epoch>);
}

#[test]
fn i1_dispatch_and_completion_debug_off() {
    model(i1_dispatch_vs_removal::<DebugOff>);
}
