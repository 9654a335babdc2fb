//! Negative controls: each broken variant (verify/src/broken.rs) must be rejected by the model of
//! the invariant it breaks, and its fixed form must pass the same model.
#![cfg(loom)]

use schedlab_core::sync::model;
use schedlab_variants::queue_lock::QueueLock;
use schedlab_verify::broken::*;
use schedlab_verify::scenarios::*;

// I1 — unlocked under group removal (the seeds' "without even this lock").
#[test]
#[should_panic(expected = "used after it was freed")]
fn control_i1_unlocked_under_removal_is_rejected() {
    model(i1_insert_vs_removal::<UnlockedUnderRemoval>);
}

#[test]
#[should_panic(expected = "used after it was freed")]
fn control_i1_unlocked_under_removal_dispatch_is_rejected() {
    model(i1_dispatch_vs_removal::<UnlockedUnderRemoval>);
}

// I1 — the right lock in the update, the wrong one in removal.
#[test]
#[should_panic(expected = "used after it was freed")]
fn control_i1_queue_lock_with_removal_under_sched_lock_only_is_rejected() {
    model(i1_insert_vs_removal::<QueueLockWrongRemoval>);
}

#[test]
fn fixed_i1_queue_lock_with_removal_under_queue_lock_passes() {
    model(i1_insert_vs_removal::<QueueLock>);
}

// I1 — §5 first bug: the captured in-service queue.
#[test]
#[should_panic(expected = "queue used after it was freed")]
fn control_i1_captured_in_service_queue_is_rejected() {
    model(in_service_queue_freed_during_dispatch::<CapturedInServiceQueue>);
}

#[test]
fn fixed_i1_revalidated_in_service_queue_passes() {
    model(in_service_queue_freed_during_dispatch::<RevalidatedInServiceQueue>);
}

// §5 second bug: a reference count changed from two contexts without atomicity.
#[test]
#[should_panic(expected = "lost update")]
fn control_plain_group_refcount_is_rejected() {
    model(|| pins_balanced_after_insert_vs_dispatch::<PlainGroupPins>(|g| g.policy_state::<PlainPins>().unwrap().value()));
}

#[test]
fn fixed_atomic_group_refcount_passes() {
    model(|| pins_balanced_after_insert_vs_dispatch::<AtomicGroupPins>(|g| g.policy_state::<AtomicPins>().unwrap().value()));
}

// I2 — seed patch 2/4: a path out of the scheduler without io_remove.
#[test]
#[should_panic(expected = "I2: queued did not return to 0")]
fn control_i2_missing_io_remove_is_rejected() {
    model(i2_insert_vs_dispatch::<MissingIoRemove>);
}

// I3 — a retired group never freed.
#[test]
#[should_panic(expected = "retired and never freed")]
fn control_i3_leak_on_retire_is_rejected() {
    model(i3_no_leak::<LeakOnRetire>);
}

// I4 — §5 third bug: the deferred update escapes its path and outlives the scheduler.
#[test]
#[should_panic(expected = "used after it was freed")]
fn control_i4_escaping_deferral_is_rejected() {
    model(i4_teardown_vs_deferred::<EscapingDeferral>);
}
