//! Negative controls under loom: every broken version (`schedlab_verify::broken`, written through
//! the public `StatsPolicy` trait, and the named core faults of `schedlab_core::fault`) must be
//! rejected by the model of the property it breaks, each for its expected reason, and each fixed
//! form must pass the same model. Every scenario of the generated suite appears here at least
//! once, so every model has been shown to fail.
#![cfg(loom)]

use schedlab_verify::broken::*;
use schedlab_verify::scenarios::*;
use schedlab_verify::{model_passes, model_rejects};

type SchedLock = schedlab_variants::sched_lock::SchedLock;
type QueueLockVariant = schedlab_variants::queue_lock::QueueLock;
type Epoch = schedlab_variants::epoch::Epoch;


// ---- I1: deferred updates against removal ----
model_rejects!(unlocked_under_removal_insert, "group used after it was freed", i1_insert_vs_removal::<UnlockedUnderRemoval>);
model_rejects!(unlocked_under_removal_dispatch, "group used after it was freed", i1_dispatch_vs_removal::<UnlockedUnderRemoval>);
model_rejects!(queue_lock_wrong_removal, "group used after it was freed", i1_insert_vs_removal::<QueueLockWrongRemoval>);
model_passes!(queue_lock_right_removal, i1_insert_vs_removal::<QueueLockVariant>);

// ---- I1: the grace-period family (`epoch` broken the ways an RCU user breaks it) ----
model_rejects!(epoch_without_pin_insert, "group used after it was freed", i1_insert_vs_removal::<EpochWithoutPin>);
model_rejects!(epoch_without_pin_dispatch, "group used after it was freed", i1_dispatch_vs_removal::<EpochWithoutPin>);
model_rejects!(epoch_frees_at_once, "group used after it was freed", i1_insert_vs_removal::<EpochFreesAtOnce>);
// The update may land on the group while its free is moving the residue to the parent: lost.
model_rejects!(epoch_pin_dropped_early, "group used after it was freed|I2:", i1_dispatch_vs_removal::<EpochPinDroppedEarly>);
model_rejects!(epoch_wrong_domain, "group used after it was freed", i1_insert_vs_removal::<EpochWrongDomain>);
model_rejects!(parent_freed_at_once, "group used after it was freed", child_then_parent_removal::<ParentFreedAtOnce>);
model_passes!(epoch_parent_after_its_own_grace_period, child_then_parent_removal::<Epoch>);

// ---- I1: kernel-bfq.md §5, first bug ----
model_rejects!(captured_in_service_queue, "queue used after it was freed", in_service_queue_freed_during_dispatch::<CapturedInServiceQueue>);
model_passes!(revalidated_in_service_queue, in_service_queue_freed_during_dispatch::<RevalidatedInServiceQueue>);

// ---- §5 second bug: a count changed from two contexts without atomicity ----
model_rejects!(plain_group_pins, "lost update", || pins_balanced_after_insert_vs_dispatch::<PlainGroupPins>(|g| {
    g.policy_state::<PlainPins>().unwrap().value()
}));
model_passes!(atomic_group_pins, || pins_balanced_after_insert_vs_dispatch::<AtomicGroupPins>(|g| {
    g.policy_state::<AtomicPins>().unwrap().value()
}));

// ---- I2 ----
model_rejects!(missing_io_remove, "I2: queued did not return to 0", i2_insert_vs_dispatch::<MissingIoRemove>);
model_rejects!(missing_io_remove_across_a_move, "I2: queued did not return to 0", move_vs_dispatch_idle::<MissingIoRemove>);

// ---- I3 ----
model_rejects!(leak_on_retire, "retired and never freed", i3_nested_removal::<LeakOnRetire>);
model_rejects!(pending_pins_leak, "retired and never freed", i1_insert_vs_removal::<PendingPinsLeak>);
model_passes!(drain_on_release_insert, i1_insert_vs_removal::<DrainOnRelease>);
model_passes!(drain_on_release_nested, i3_nested_removal::<DrainOnRelease>);

// ---- I4 ----
model_rejects!(escaping_deferral, "used after it was freed", i4_teardown_vs_deferred::<EscapingDeferral>);

// ---- faults in the core (schedlab_core::fault), against the real variants ----
model_rejects!(fault_idle_timer_vs_dispatch, "queue used after it was freed", fault = IdleTimerTouchesBeforeCheck, timer_vs_dispatch::<SchedLock>);
model_rejects!(fault_idle_timer_vs_exit, "queue used after it was freed", fault = IdleTimerTouchesBeforeCheck, timer_vs_exit::<SchedLock>);
model_rejects!(fault_idle_timer_vs_move, "queue used after it was freed", fault = IdleTimerTouchesBeforeCheck, move_vs_dispatch_in_service::<QueueLockVariant>);
model_rejects!(fault_expire_without_own_reference, "queue used after it was freed", fault = ExpireWithoutOwnReference, removal_while_idling::<SchedLock>);
model_rejects!(fault_group_handle_without_generation, "a stale handle", fault = GroupHandleWithoutGeneration, created_after_removal::<SchedLock>);
model_rejects!(fault_plain_group_refcount, "group used after it was freed|was not freed|a hot path dropped a group's last reference", fault = PlainGroupRefcount, refcount_two_contexts::<SchedLock>);
model_rejects!(fault_offline_moves_only_busy_queues, "group used after it was freed", fault = OfflineMovesOnlyBusyQueues, priority_across_removal::<QueueLockVariant>);
model_rejects!(fault_release_without_flush, "I2:", fault = ReleaseWithoutFlush, i1_dispatch_vs_removal::<Epoch>);
model_rejects!(fault_merge_without_io_remove, "I2: queued did not return to 0", fault = MergeWithoutIoRemove, merge_across_removal::<SchedLock>);

