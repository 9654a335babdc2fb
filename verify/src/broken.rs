//! Negative controls: deliberately wrong variants, each written only through the public
//! `StatsPolicy` trait (as a researcher's own variant would be), each paired with its fixed form.
//! The loom tests expect every broken one to be rejected and every fixed one to pass. A model that
//! could not reject these would prove nothing about the real variants.
//!
//! | broken | what is wrong | kernel history | fixed form |
//! | --- | --- | --- | --- |
//! | [`UnlockedUnderRemoval`] | deferred updates with no protection, while groups are removed | the seeds' "without even this lock" | `queue-lock` |
//! | [`QueueLockWrongRemoval`] | deferred updates hold the queue lock, but removal takes only the scheduler lock | — | `queue-lock` |
//! | [`CapturedInServiceQueue`] | the in-service queue captured at dispatch start is used at its end, after expiration freed it | 2017–2022 (§5, first bug) | [`RevalidatedInServiceQueue`] |
//! | [`PlainGroupPins`] | a per-group count changed by plain load/store under the scheduler lock and from the unlocked path | 4.12–2023 (§5, second bug) | [`AtomicGroupPins`] |
//! | [`MissingIoRemove`] | a path out of the scheduler does not update `queued` | seed patch 2/4 | `queue-lock` |
//! | [`LeakOnRetire`] | a retired group is never freed | 6.2 pending-update lists (§4) | `sched-lock` |
//! | [`EscapingDeferral`] | the deferred update outlives the path that made it | §5, third bug | `queue-lock` |

use schedlab_core::sync::{thread, AtomicUsize, Ordering};
use schedlab_core::{
    DeferredBatch, DeferredCx, LockedView, Path, QueueRef, RetiredGroup, Route, StatEvent, StatKind,
    StatUpdate, StatsKept, StatsPolicy,
};

/// Deferred kinds go to the batch, the others are applied under the lock (the 4.15 split).
fn defer_deferrable(kind: StatKind) -> Route {
    if kind.deferrable() {
        Route::Defer
    } else {
        Route::Now
    }
}

/// `unlocked` as it would be if the scheduler let it run under group removal.
#[derive(Debug, Default)]
pub struct UnlockedUnderRemoval;

impl StatsPolicy for UnlockedUnderRemoval {
    const NAME: &'static str = "broken-unlocked-under-removal";
    const SUMMARY: &'static str = "deferred updates with no protection while groups are removed";
    const KEPT: StatsKept = StatsKept::Full;
    const REPARENT_HOLDS_QUEUE_LOCK: bool = false;
    // The lie: nothing protects a deferred update from a concurrent removal.
    const SAFE_UNDER_GROUP_REMOVAL: bool = true;
    type DispatchCapture = ();
    type GroupState = ();

    fn new() -> Self {
        UnlockedUnderRemoval
    }
    fn route(&self, kind: StatKind) -> Route {
        defer_deferrable(kind)
    }
    fn dispatch_begin(&self, _: &LockedView<'_>) {}
    fn run_deferred(&self, cx: &DeferredCx<'_>, batch: &mut DeferredBatch) {
        // SAFETY: none — this is the negative control. A concurrent removal can reparent the
        // queue and free its old group between the load of the group and its use.
        unsafe { batch.apply(cx.now()) };
    }
}

/// `queue-lock`'s deferred update, but group removal does not take the queue lock.
#[derive(Debug, Default)]
pub struct QueueLockWrongRemoval;

impl StatsPolicy for QueueLockWrongRemoval {
    const NAME: &'static str = "broken-queue-lock-wrong-removal";
    const SUMMARY: &'static str = "deferred updates under the queue lock; removal under the scheduler lock only";
    const KEPT: StatsKept = StatsKept::Full;
    // The mistake: the protection the deferred update relies on is not taken by removal.
    const REPARENT_HOLDS_QUEUE_LOCK: bool = false;
    const SAFE_UNDER_GROUP_REMOVAL: bool = true;
    type DispatchCapture = ();
    type GroupState = ();

    fn new() -> Self {
        QueueLockWrongRemoval
    }
    fn route(&self, kind: StatKind) -> Route {
        defer_deferrable(kind)
    }
    fn dispatch_begin(&self, _: &LockedView<'_>) {}
    fn run_deferred(&self, cx: &DeferredCx<'_>, batch: &mut DeferredBatch) {
        let _queue_lock = cx.lock_queue();
        // SAFETY: none — the queue lock excludes nothing that frees groups here.
        unsafe { batch.apply(cx.now()) };
    }
}

/// What the dispatch hooks of the two in-service-queue variants capture: the in-service queue at
/// the start of dispatch and whether it was idling.
pub type InServiceCapture = Option<(QueueRef, bool)>;

fn capture_in_service(view: &LockedView<'_>) -> InServiceCapture {
    view.in_service_queue().map(|queue| {
        // SAFETY: the scheduler lock is held and the queue is in service, so it is allocated.
        let waiting = unsafe { queue.get() }.wait_request();
        (queue, waiting)
    })
}

/// The 2017 dispatch: it remembers the in-service queue and whether it was waiting, and after the
/// dispatch work decides "the idle timer was disabled" by reading that queue's flag again.
#[derive(Debug, Default)]
pub struct CapturedInServiceQueue;

impl StatsPolicy for CapturedInServiceQueue {
    const NAME: &'static str = "broken-captured-in-service-queue";
    const SUMMARY: &'static str = "uses the in-service queue captured before dispatch after dispatch expired it";
    const KEPT: StatsKept = StatsKept::Full;
    const REPARENT_HOLDS_QUEUE_LOCK: bool = true;
    const SAFE_UNDER_GROUP_REMOVAL: bool = true;
    type DispatchCapture = InServiceCapture;
    type GroupState = ();

    fn new() -> Self {
        CapturedInServiceQueue
    }
    fn route(&self, kind: StatKind) -> Route {
        match kind {
            // This variant computes idle_time itself, from its capture.
            StatKind::IdleTime => Route::Skip,
            kind => defer_deferrable(kind),
        }
    }
    fn dispatch_begin(&self, view: &LockedView<'_>) -> InServiceCapture {
        capture_in_service(view)
    }
    fn dispatch_end(&self, _view: &LockedView<'_>, capture: InServiceCapture, batch: &mut DeferredBatch) {
        if let Some((queue, was_waiting)) = capture {
            // SAFETY: none — the claim was "the queue was in service, so it exists"; but this
            // dispatch may have expired it and dropped its last reference.
            let still_waiting = unsafe { queue.get() }.wait_request();
            if was_waiting && !still_waiting {
                batch.push(StatEvent { queue, update: StatUpdate::IdleTime });
            }
        }
    }
    fn run_deferred(&self, cx: &DeferredCx<'_>, batch: &mut DeferredBatch) {
        let _queue_lock = cx.lock_queue();
        // SAFETY: as for queue-lock (I1a, I1b) for the scheduler's own events; the captured queue
        // pushed in dispatch_end has no such guarantee (that is the bug).
        unsafe { batch.apply(cx.now()) };
    }
}

/// The 2022 fix: re-validate the captured queue's identity (it must still be the queue in
/// service) before touching it; otherwise pass nothing.
#[derive(Debug, Default)]
pub struct RevalidatedInServiceQueue;

impl StatsPolicy for RevalidatedInServiceQueue {
    const NAME: &'static str = "fixed-revalidated-in-service-queue";
    const SUMMARY: &'static str = "re-validates the captured in-service queue before use";
    const KEPT: StatsKept = StatsKept::Full;
    const REPARENT_HOLDS_QUEUE_LOCK: bool = true;
    const SAFE_UNDER_GROUP_REMOVAL: bool = true;
    type DispatchCapture = InServiceCapture;
    type GroupState = ();

    fn new() -> Self {
        RevalidatedInServiceQueue
    }
    fn route(&self, kind: StatKind) -> Route {
        match kind {
            StatKind::IdleTime => Route::Skip,
            kind => defer_deferrable(kind),
        }
    }
    fn dispatch_begin(&self, view: &LockedView<'_>) -> InServiceCapture {
        capture_in_service(view)
    }
    fn dispatch_end(&self, view: &LockedView<'_>, capture: InServiceCapture, batch: &mut DeferredBatch) {
        if let Some((queue, was_waiting)) = capture {
            if !view.is_in_service(queue) {
                return; // expired during this dispatch: it may be gone
            }
            // SAFETY: the lock is held and the queue is (still) in service, so it is allocated;
            // it stays so until the deferred update because the request just dispatched came from
            // it (a request arriving ended its wait) and pins it (I1a).
            let still_waiting = unsafe { queue.get() }.wait_request();
            if was_waiting && !still_waiting {
                batch.push(StatEvent { queue, update: StatUpdate::IdleTime });
            }
        }
    }
    fn run_deferred(&self, cx: &DeferredCx<'_>, batch: &mut DeferredBatch) {
        let _queue_lock = cx.lock_queue();
        // SAFETY: I1a (every queue in the batch is pinned, the captured one by the dispatched
        // request) and I1b (queue lock held; removal holds it too).
        unsafe { batch.apply(cx.now()) };
    }
}

/// A per-group reference count changed with a plain read-modify-write (a load, then a store), as
/// the kernel's `int ref` was until 2023.
pub struct PlainPins {
    count: AtomicUsize,
}

impl Default for PlainPins {
    fn default() -> Self {
        PlainPins { count: AtomicUsize::new(1) } // the policy data's own reference
    }
}

/// The same count with atomic read-modify-writes (the 2023 fix: `refcount_t`).
pub struct AtomicPins {
    count: AtomicUsize,
}

impl Default for AtomicPins {
    fn default() -> Self {
        AtomicPins { count: AtomicUsize::new(1) }
    }
}

/// A per-group count of references held by a policy.
pub trait PinCount: Default + Send + Sync + 'static {
    fn add(&self, delta: isize);
    fn value(&self) -> usize;
}

impl PinCount for PlainPins {
    fn add(&self, delta: isize) {
        // The bug: two contexts can both load the old value; one store is lost.
        let old = self.count.load(Ordering::Relaxed);
        self.count.store(old.wrapping_add_signed(delta), Ordering::Relaxed);
    }
    fn value(&self) -> usize {
        self.count.load(Ordering::Acquire)
    }
}

impl PinCount for AtomicPins {
    fn add(&self, delta: isize) {
        // AcqRel: a decrement that might be the last must see every earlier use.
        if delta >= 0 {
            self.count.fetch_add(delta as usize, Ordering::AcqRel);
        } else {
            self.count.fetch_sub(delta.unsigned_abs(), Ordering::AcqRel);
        }
    }
    fn value(&self) -> usize {
        self.count.load(Ordering::Acquire)
    }
}

macro_rules! pin_counting_variant {
    ($name:ident, $state:ty, $label:literal, $summary:literal) => {
        /// Deferred updates that take a reference on their group's policy data while they run
        /// (no scheduler lock), and a dispatch that takes and drops one on the in-service group
        /// (under the scheduler lock): two contexts changing one count. Without group removal,
        /// so that memory safety is not in question, only the count (scenario
        /// `pins_balanced_after_insert_vs_dispatch`).
        #[derive(Debug, Default)]
        pub struct $name;

        impl StatsPolicy for $name {
            const NAME: &'static str = $label;
            const SUMMARY: &'static str = $summary;
            const KEPT: StatsKept = StatsKept::Full;
            const REPARENT_HOLDS_QUEUE_LOCK: bool = false;
            // Like `unlocked`, its deferred updates rely on groups never being removed.
            const SAFE_UNDER_GROUP_REMOVAL: bool = false;
            type DispatchCapture = ();
            type GroupState = $state;

            fn new() -> Self {
                $name
            }
            fn route(&self, kind: StatKind) -> Route {
                defer_deferrable(kind)
            }
            fn dispatch_begin(&self, _: &LockedView<'_>) {}
            fn dispatch_end(&self, view: &LockedView<'_>, _: (), _: &mut DeferredBatch) {
                // Under the scheduler lock: take a reference on the in-service group for the
                // bookkeeping of this dispatch, and drop it.
                if let Some(group) = view.in_service_group() {
                    let pins = group.policy_state::<$state>().expect("this policy's state");
                    pins.add(1);
                    pins.add(-1);
                }
            }
            fn run_deferred(&self, cx: &DeferredCx<'_>, batch: &mut DeferredBatch) {
                let now = cx.now();
                // SAFETY: I1a and I1c: groups are never removed or moved with this policy (the
                // scheduler refuses), so a queue's group is the one its reference keeps alive.
                unsafe {
                    batch.apply_with(|group, update| {
                        let pins = group.policy_state::<$state>().expect("this policy's state");
                        pins.add(1);
                        update.apply_to(group, now);
                        pins.add(-1);
                    })
                };
            }
        }
    };
}

pin_counting_variant!(
    PlainGroupPins,
    PlainPins,
    "broken-plain-group-pins",
    "a per-group count changed by plain load/store from the locked and the unlocked path"
);
pin_counting_variant!(
    AtomicGroupPins,
    AtomicPins,
    "fixed-atomic-group-pins",
    "the same per-group count, changed atomically"
);

/// Forgets to update `queued` when a request leaves the scheduler at dispatch.
#[derive(Debug, Default)]
pub struct MissingIoRemove;

impl StatsPolicy for MissingIoRemove {
    const NAME: &'static str = "broken-missing-io-remove";
    const SUMMARY: &'static str = "no io_remove on dispatch: queued drifts";
    const KEPT: StatsKept = StatsKept::Full;
    const REPARENT_HOLDS_QUEUE_LOCK: bool = true;
    const SAFE_UNDER_GROUP_REMOVAL: bool = true;
    type DispatchCapture = ();
    type GroupState = ();

    fn new() -> Self {
        MissingIoRemove
    }
    fn route(&self, kind: StatKind) -> Route {
        match kind {
            StatKind::IoRemove => Route::Skip,
            kind => defer_deferrable(kind),
        }
    }
    fn dispatch_begin(&self, _: &LockedView<'_>) {}
    fn run_deferred(&self, cx: &DeferredCx<'_>, batch: &mut DeferredBatch) {
        let _queue_lock = cx.lock_queue();
        // SAFETY: as for queue-lock: I1a and I1b.
        unsafe { batch.apply(cx.now()) };
    }
}

/// Retires groups by forgetting them: they are never freed.
#[derive(Debug, Default)]
pub struct LeakOnRetire;

impl StatsPolicy for LeakOnRetire {
    const NAME: &'static str = "broken-leak-on-retire";
    const SUMMARY: &'static str = "never frees a retired group";
    const KEPT: StatsKept = StatsKept::Full;
    const REPARENT_HOLDS_QUEUE_LOCK: bool = false;
    const SAFE_UNDER_GROUP_REMOVAL: bool = true;
    type DispatchCapture = ();
    type GroupState = ();

    fn new() -> Self {
        LeakOnRetire
    }
    fn route(&self, _: StatKind) -> Route {
        Route::Now
    }
    fn dispatch_begin(&self, _: &LockedView<'_>) {}
    fn run_deferred(&self, _: &DeferredCx<'_>, batch: &mut DeferredBatch) {
        assert!(batch.is_empty(), "nothing is deferred");
    }
    /// Lets the RetiredGroup go without calling `free`: the group it owns is leaked.
    fn retire_group(&self, _leaked: RetiredGroup) {}
}

/// Hands its deferred updates to another thread and returns: the update now runs outside the
/// path that pinned its objects, possibly after the scheduler was torn down.
#[derive(Debug, Default)]
pub struct EscapingDeferral;

impl StatsPolicy for EscapingDeferral {
    const NAME: &'static str = "broken-escaping-deferral";
    const SUMMARY: &'static str = "deferred updates applied by a detached thread after the path returned";
    const KEPT: StatsKept = StatsKept::Full;
    const REPARENT_HOLDS_QUEUE_LOCK: bool = false;
    const SAFE_UNDER_GROUP_REMOVAL: bool = false;
    type DispatchCapture = ();
    type GroupState = ();

    fn new() -> Self {
        EscapingDeferral
    }
    fn route(&self, kind: StatKind) -> Route {
        defer_deferrable(kind)
    }
    fn dispatch_begin(&self, _: &LockedView<'_>) {}
    fn run_deferred(&self, _: &DeferredCx<'_>, batch: &mut DeferredBatch) {
        let events: Vec<StatEvent> = batch.events().to_vec();
        batch.clear();
        thread::spawn(move || {
            let mut late = DeferredBatch::new(Path::Insert);
            for event in events {
                late.push(event);
            }
            // SAFETY: none — the path that pinned these queues has returned; the scheduler may
            // be gone.
            unsafe { late.apply(0) };
        });
    }
}
