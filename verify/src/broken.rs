//! Negative controls: deliberately wrong variants, each written only through the public
//! `StatsPolicy` trait (as a researcher's own variant would be), each paired with its fixed form.
//! The model suites expect every broken one to be rejected and every fixed one to pass. A model
//! that could not reject these would prove nothing about the real variants.
//!
//! Since the protection a deferred update relies on is a type (`schedlab_core::protection`), none
//! of the broken ones can be written without `unsafe`: each `unsafe` block below says what it
//! claims and why that is wrong. Faults in the core itself are switched on by name
//! (`schedlab_core::fault`, the `fault-injection` feature) and run against the real variants.
//!
//! | broken | what is wrong | history | fixed form |
//! | --- | --- | --- | --- |
//! | [`UnlockedUnderRemoval`] | deferred updates with no protection, while groups are removed | the seeds' "without even this lock" | `queue-lock` |
//! | [`QueueLockWrongRemoval`] | deferred updates hold the queue lock, but removal takes only the scheduler lock | — | `queue-lock` |
//! | [`QueueLockCompletionUnlocked`] | the completion statistics applied with no lock while removal and moves hold the queue lock | BFQ 4.15 (`bfq_finish_request` ran `bfqg_stats_update_completion` with no lock; notes/kernel-map.md D33) | `queue-lock` |
//! | [`CapturedInServiceQueue`] | the in-service queue captured at dispatch start is used at its end, after expiration freed it | BFQ 2017–2022 (kernel-bfq.md, "Real bugs": the captured pointer) | [`RevalidatedInServiceQueue`] |
//! | [`PlainGroupPins`] | a per-group count changed by plain load/store under the scheduler lock and from the unlocked path | BFQ 4.12–2023 (kernel-bfq.md, "Real bugs": the non-atomic reference count) | [`AtomicGroupPins`] |
//! | [`MissingIoRemove`] | a path out of the scheduler does not update `queued` | seed patch 2/4 | `queue-lock` |
//! | [`LeakOnRetire`] | a retired group is never freed | — | `sched-lock` |
//! | [`EscapingDeferral`] | the deferred update outlives the path that made it | kernel-bfq.md, "Real bugs": teardown in the deferred window | `queue-lock` |
//! | [`EpochWithoutPin`] | `epoch`'s deferred update with its pin removed | — | `epoch` |
//! | [`EpochCompletionWithoutPin`] | `epoch`'s completion update unpinned (a completion context holds no pin of the dispatcher's) | — | `epoch` |
//! | [`EpochFreesAtOnce`] | `epoch`'s retired groups freed at once instead of after a grace period | — | `epoch` |
//! | [`EpochPinDroppedEarly`] | the groups are read under a pin, the pin is dropped, then they are updated | CFQ 2008: "cfq-iosched: fix RCU race in the cfq io_context destructor handling" (`rcu_read_unlock` before the last use) | `epoch` |
//! | [`EpochWrongDomain`] | the deferred update pins one epoch domain while groups are retired through another | the RCU-flavour mismatch class (a reader of one flavour, a free after another's grace period) | `epoch` |
//! | [`ParentFreedAtOnce`] | after a child's grace period, the parent it releases is freed at once, without a grace period of its own | — | `epoch` |
//! | [`DefersEveryKind`] (not broken: the core must make it safe) | asks to defer every kind of update, the lock-only ones included; with the core fault `DeferLockOnlyUpdates` the scheduler lets it | BFQ 2017–2022 (kernel-bfq.md, "Real bugs": the captured pointer): an expiration's statistics applied after the section that freed the queue | itself, with the fault off |
//! | [`LosesServicedBytes`] | the deferred io_service_bytes adds nothing while io_serviced counts the request | a lost rstat delta (blk-cgroup's flush) | `queue-lock` |
//! | [`PendingPinsLeak`] | pending updates keep a removed group until a drain that only the group's own release performs | blk-cgroup 6.2 per-CPU pending lists (kernel-bfq.md, "Group lifetime"; fixed 2023) | [`DrainOnRelease`] |

use schedlab_core::sync::{epoch, thread, AtomicUsize, OracleMutex, Ordering};
use schedlab_core::{
    DeferredBatch, DeferredCx, GracePeriod, GroupPtr, LockedView, NoRemoval, Path, QueueLock,
    QueueRef, Reclaimer, RetiredGroup, Route, SchedLockOnly, StatEvent, StatKind, StatUpdate,
    StatsKept, StatsPolicy,
};

/// `unlocked` as it would be if it claimed the protection of a variant that defers nothing: the
/// scheduler then lets groups be removed under it.
#[derive(Debug, Default)]
pub struct UnlockedUnderRemoval;

impl StatsPolicy for UnlockedUnderRemoval {
    const NAME: &'static str = "broken-unlocked-under-removal";
    const SUMMARY: &'static str = "deferred updates with no protection while groups are removed";
    const KEPT: StatsKept = StatsKept::Full;
    // The lie: nothing protects a deferred update from a concurrent removal.
    type Protection = SchedLockOnly;
    type DispatchCapture = ();
    type GroupState = ();

    fn route(&self, kind: StatKind) -> Route {
        Route::defer_if_deferrable(kind)
    }
    fn run_deferred(&self, cx: &DeferredCx<'_, SchedLockOnly>, batch: &mut DeferredBatch) {
        // SAFETY: none — this is the negative control. A concurrent removal can reparent the
        // queue and free its old group between the load of the group and its use.
        unsafe { batch.apply_unchecked(cx.now()) };
    }
}

/// `queue-lock`'s deferred update, but group removal does not take the queue lock.
#[derive(Debug, Default)]
pub struct QueueLockWrongRemoval;

impl StatsPolicy for QueueLockWrongRemoval {
    const NAME: &'static str = "broken-queue-lock-wrong-removal";
    const SUMMARY: &'static str =
        "deferred updates under the queue lock; removal under the scheduler lock only";
    const KEPT: StatsKept = StatsKept::Full;
    // The mistake: the protection the deferred update relies on is not the one removal honours.
    type Protection = SchedLockOnly;
    type DispatchCapture = ();
    type GroupState = ();

    fn route(&self, kind: StatKind) -> Route {
        Route::defer_if_deferrable(kind)
    }
    fn run_deferred(&self, cx: &DeferredCx<'_, SchedLockOnly>, batch: &mut DeferredBatch) {
        let _queue_lock = cx.queue_lock();
        // SAFETY: none — the queue lock excludes nothing that frees groups here (it is a plain
        // lock, no witness, because removal does not take it under this protection).
        unsafe { batch.apply_unchecked(cx.now()) };
    }
}

/// `queue-lock` as 4.15 shipped it: insert and dispatch statistics deferred under the queue lock,
/// but the completion statistics applied with no lock at all (notes/kernel-map.md D33), while
/// group removal and moves hold the queue lock. A completion racing a removal (or a move and the
/// removal of the group left) reads the queue's group and uses it after the removal freed it.
#[derive(Debug, Default)]
pub struct QueueLockCompletionUnlocked;

impl StatsPolicy for QueueLockCompletionUnlocked {
    const NAME: &'static str = "broken-queue-lock-completion-unlocked";
    const SUMMARY: &'static str =
        "queue-lock with the completion statistics applied without the queue lock (4.15)";
    const KEPT: StatsKept = StatsKept::Full;
    type Protection = QueueLock;
    type DispatchCapture = ();
    type GroupState = ();

    fn route(&self, kind: StatKind) -> Route {
        Route::defer_if_deferrable(kind)
    }
    fn run_deferred(&self, cx: &DeferredCx<'_, QueueLock>, batch: &mut DeferredBatch) {
        if batch.path() == Path::Completion {
            // SAFETY: none — the queue is pinned by the request (I1a), but its group is kept only
            // by the queue's reference, which a concurrent move or removal drops (under the queue
            // lock this update does not take) before the group is freed.
            unsafe { batch.apply_unchecked(cx.now()) };
            return;
        }
        // As `queue-lock` (I1a, I1b, I4).
        let queue_lock = cx.lock_queue();
        batch.apply(&queue_lock, cx.now());
    }
}

/// `queue-lock` with a greedier `route`: it asks to defer every kind of update, including the
/// three the kernel keeps under the scheduler lock (`StatKind::deferrable` is false: `dequeue`,
/// `set_start_idle_time`, `time`). A researcher may write this; the scheduler must still apply
/// those under its lock (`effective_route`), because their queue can be freed by the same
/// critical section (notes/invariants.md, "Lock-only updates"). Safe as written, with no
/// `unsafe`: its models pass, and with the core fault `DeferLockOnlyUpdates` (the scheduler
/// honouring the request) they must fail.
#[derive(Debug, Default)]
pub struct DefersEveryKind;

impl StatsPolicy for DefersEveryKind {
    const NAME: &'static str = "defers-every-kind";
    const SUMMARY: &'static str =
        "queue-lock asking to defer every update, the lock-only kinds too";
    const KEPT: StatsKept = StatsKept::Full;
    type Protection = QueueLock;
    type DispatchCapture = ();
    type GroupState = ();

    fn route(&self, _kind: StatKind) -> Route {
        Route::Defer
    }
    fn run_deferred(&self, cx: &DeferredCx<'_, QueueLock>, batch: &mut DeferredBatch) {
        // What this touches still exists as for `queue-lock` (I1a, I1b, I4): every event in the
        // batch names a queue the path pins, because the scheduler applied the lock-only kinds,
        // whose queue it may have freed, before releasing its lock.
        let queue_lock = cx.lock_queue();
        batch.apply(&queue_lock, cx.now());
    }
}

/// `queue-lock` whose deferred update counts each dispatched request in io_serviced but adds
/// none of its bytes to io_service_bytes: the statistic a flush or a batch can lose without
/// any lifetime going wrong. The I2 check that every serviced request carried its bytes must
/// reject it; `queue-lock` is the fixed form.
#[derive(Debug, Default)]
pub struct LosesServicedBytes;

impl StatsPolicy for LosesServicedBytes {
    const NAME: &'static str = "broken-loses-serviced-bytes";
    const SUMMARY: &'static str = "queue-lock whose deferred io_service_bytes adds nothing";
    const KEPT: StatsKept = StatsKept::Full;
    type Protection = QueueLock;
    type DispatchCapture = ();
    type GroupState = ();

    fn route(&self, kind: StatKind) -> Route {
        Route::defer_if_deferrable(kind)
    }
    fn run_deferred(&self, cx: &DeferredCx<'_, QueueLock>, batch: &mut DeferredBatch) {
        let events: Vec<StatEvent> = batch.events().copied().collect();
        batch.clear();
        for mut event in events {
            if let StatUpdate::LegacyIo { bytes, .. } = &mut event.update {
                *bytes = 0; // the bug
            }
            // SAFETY: the same events, for the same queues, which this path still pins (I1a).
            unsafe { batch.push(event) };
        }
        let queue_lock = cx.lock_queue();
        batch.apply(&queue_lock, cx.now());
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
    const SUMMARY: &'static str =
        "uses the in-service queue captured before dispatch after dispatch expired it";
    const KEPT: StatsKept = StatsKept::Full;
    type Protection = QueueLock;
    type DispatchCapture = InServiceCapture;
    type GroupState = ();

    fn route(&self, kind: StatKind) -> Route {
        match kind {
            // This variant computes idle_time itself, from its capture.
            StatKind::IdleTime => Route::Skip,
            kind => Route::defer_if_deferrable(kind),
        }
    }
    fn dispatch_begin(&self, view: &LockedView<'_>) -> InServiceCapture {
        capture_in_service(view)
    }
    fn dispatch_end(
        &self,
        _view: &LockedView<'_>,
        capture: InServiceCapture,
        batch: &mut DeferredBatch,
    ) {
        if let Some((queue, was_waiting)) = capture {
            // SAFETY: none — the claim was "the queue was in service, so it exists"; but this
            // dispatch may have expired it and dropped its last reference.
            let still_waiting = unsafe { queue.get() }.wait_request();
            if was_waiting && !still_waiting {
                // SAFETY: none, as above.
                unsafe { batch.push(StatEvent { queue, update: StatUpdate::IdleTime }) };
            }
        }
    }
    fn run_deferred(&self, cx: &DeferredCx<'_, QueueLock>, batch: &mut DeferredBatch) {
        let queue_lock = cx.lock_queue();
        batch.apply(&queue_lock, cx.now());
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
    type Protection = QueueLock;
    type DispatchCapture = InServiceCapture;
    type GroupState = ();

    fn route(&self, kind: StatKind) -> Route {
        match kind {
            StatKind::IdleTime => Route::Skip,
            kind => Route::defer_if_deferrable(kind),
        }
    }
    fn dispatch_begin(&self, view: &LockedView<'_>) -> InServiceCapture {
        capture_in_service(view)
    }
    fn dispatch_end(
        &self,
        view: &LockedView<'_>,
        capture: InServiceCapture,
        batch: &mut DeferredBatch,
    ) {
        if let Some((queue, was_waiting)) = capture {
            if !view.is_in_service(queue) {
                return; // expired during this dispatch: it may be gone
            }
            // SAFETY: the lock is held and the queue is (still) in service, so it is allocated.
            let still_waiting = unsafe { queue.get() }.wait_request();
            if was_waiting && !still_waiting {
                // SAFETY: the queue stays allocated until the deferred update: a wait ends only
                // when a request arrives for the queue, and that request, dispatched by this very
                // dispatch (it is the only one the in-service queue had), pins it (I1a).
                unsafe { batch.push(StatEvent { queue, update: StatUpdate::IdleTime }) };
            }
        }
    }
    fn run_deferred(&self, cx: &DeferredCx<'_, QueueLock>, batch: &mut DeferredBatch) {
        let queue_lock = cx.lock_queue();
        batch.apply(&queue_lock, cx.now());
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
        /// (under the scheduler lock): two contexts changing one count. Under `NoRemoval`, so
        /// that memory safety is not in question, only the count (scenario
        /// `pins_balanced_after_insert_vs_dispatch`).
        #[derive(Debug, Default)]
        pub struct $name;

        impl StatsPolicy for $name {
            const NAME: &'static str = $label;
            const SUMMARY: &'static str = $summary;
            const KEPT: StatsKept = StatsKept::Full;
            type Protection = NoRemoval;
            type DispatchCapture = ();
            type GroupState = $state;

            fn route(&self, kind: StatKind) -> Route {
                Route::defer_if_deferrable(kind)
            }
            fn dispatch_end(&self, view: &LockedView<'_>, _: (), _: &mut DeferredBatch) {
                // Under the scheduler lock: take a reference on the in-service group for the
                // bookkeeping of this dispatch, and drop it.
                if let Some(group) = view.in_service_group() {
                    let pins = group.policy_state::<$state>().expect("this policy's state");
                    pins.add(1);
                    pins.add(-1);
                }
            }
            fn run_deferred(&self, cx: &DeferredCx<'_, NoRemoval>, batch: &mut DeferredBatch) {
                let now = cx.now();
                batch.apply_with(&cx.groups_stay(), |group, update| {
                    let pins = group.policy_state::<$state>().expect("this policy's state");
                    pins.add(1);
                    update.apply_to(group, now);
                    pins.add(-1);
                });
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
    type Protection = QueueLock;
    type DispatchCapture = ();
    type GroupState = ();

    fn route(&self, kind: StatKind) -> Route {
        match kind {
            StatKind::IoRemove => Route::Skip,
            kind => Route::defer_if_deferrable(kind),
        }
    }
    fn run_deferred(&self, cx: &DeferredCx<'_, QueueLock>, batch: &mut DeferredBatch) {
        let queue_lock = cx.lock_queue();
        batch.apply(&queue_lock, cx.now());
    }
}

/// Retires groups by forgetting them: they are never freed.
#[derive(Debug, Default)]
pub struct LeakOnRetire;

impl StatsPolicy for LeakOnRetire {
    const NAME: &'static str = "broken-leak-on-retire";
    const SUMMARY: &'static str = "never frees a retired group";
    const KEPT: StatsKept = StatsKept::Full;
    type Protection = SchedLockOnly;
    type DispatchCapture = ();
    type GroupState = ();

    fn route(&self, _: StatKind) -> Route {
        Route::Now
    }
    /// Lets the RetiredGroup go without handing it over: the group it owns is leaked.
    fn retire_group(&self, _leaked: RetiredGroup, _: &Reclaimer<'_, SchedLockOnly>) {}
}

/// Hands its first deferred batch to another thread and returns: the update now runs outside the
/// path that pinned its objects, possibly after the scheduler was torn down. Later batches are
/// applied in place (one escape is the bug; a thread per batch would also pass loom's thread
/// limit in a scenario with a few requests).
#[derive(Debug)]
pub struct EscapingDeferral {
    escaped: AtomicUsize,
}

impl Default for EscapingDeferral {
    fn default() -> Self {
        EscapingDeferral { escaped: AtomicUsize::new(0) }
    }
}

impl StatsPolicy for EscapingDeferral {
    const NAME: &'static str = "broken-escaping-deferral";
    const SUMMARY: &'static str =
        "a deferred update applied by a detached thread after the path returned";
    const KEPT: StatsKept = StatsKept::Full;
    type Protection = NoRemoval;
    type DispatchCapture = ();
    type GroupState = ();

    fn route(&self, kind: StatKind) -> Route {
        Route::defer_if_deferrable(kind)
    }
    fn run_deferred(&self, cx: &DeferredCx<'_, NoRemoval>, batch: &mut DeferredBatch) {
        if batch.is_empty() || self.escaped.fetch_add(1, Ordering::Relaxed) > 0 {
            // As `unlocked` does (I1a, I1c): the path pins the queues, groups stay.
            batch.apply(&cx.groups_stay(), cx.now());
            return;
        }
        let events: Vec<StatEvent> = batch.events().copied().collect();
        batch.clear();
        thread::spawn(move || {
            let mut late = DeferredBatch::new(Path::Insert);
            for event in events {
                // SAFETY: none — the path that pinned these queues has returned.
                unsafe { late.push(event) };
            }
            // SAFETY: none — the scheduler may be gone.
            unsafe { late.apply_unchecked(0) };
        });
    }
}

// ---- the grace-period family: what `epoch` could get wrong ----

/// Routes like `epoch`: deferrable kinds deferred, the rest under the lock.
macro_rules! grace_period_route {
    () => {
        fn route(&self, kind: StatKind) -> Route {
            Route::defer_if_deferrable(kind)
        }
    };
}

/// `epoch` with the pin removed from its deferred update.
#[derive(Debug, Default)]
pub struct EpochWithoutPin;

impl StatsPolicy for EpochWithoutPin {
    const NAME: &'static str = "broken-epoch-without-pin";
    const SUMMARY: &'static str = "epoch's deferred update without its pin";
    const KEPT: StatsKept = StatsKept::Full;
    type Protection = GracePeriod;
    type DispatchCapture = ();
    type GroupState = ();

    grace_period_route!();
    fn run_deferred(&self, cx: &DeferredCx<'_, GracePeriod>, batch: &mut DeferredBatch) {
        // SAFETY: none — without a pin, nothing holds a retired group's grace period open.
        unsafe { batch.apply_unchecked(cx.now()) };
    }
}

/// `epoch` whose completion update runs unpinned (insert and dispatch keep their pins): as if the
/// completion, run in a context of its own, relied on a pin taken by the thread that dispatched.
#[derive(Debug, Default)]
pub struct EpochCompletionWithoutPin;

impl StatsPolicy for EpochCompletionWithoutPin {
    const NAME: &'static str = "broken-epoch-completion-without-pin";
    const SUMMARY: &'static str = "epoch's completion update without its pin";
    const KEPT: StatsKept = StatsKept::Full;
    type Protection = GracePeriod;
    type DispatchCapture = ();
    type GroupState = ();

    grace_period_route!();
    fn run_deferred(&self, cx: &DeferredCx<'_, GracePeriod>, batch: &mut DeferredBatch) {
        if batch.path() == Path::Completion {
            // SAFETY: none — the completing thread holds no pin, so nothing holds the grace
            // period of a group retired meanwhile open.
            unsafe { batch.apply_unchecked(cx.now()) };
            return;
        }
        // As `epoch` (I1a, I1d).
        let pin = cx.pin();
        batch.apply(&pin, cx.now());
    }
}

/// `epoch` with its retired groups freed at once.
#[derive(Debug, Default)]
pub struct EpochFreesAtOnce;

impl StatsPolicy for EpochFreesAtOnce {
    const NAME: &'static str = "broken-epoch-frees-at-once";
    const SUMMARY: &'static str = "epoch's retired groups freed without a grace period";
    const KEPT: StatsKept = StatsKept::Full;
    type Protection = GracePeriod;
    type DispatchCapture = ();
    type GroupState = ();

    grace_period_route!();
    fn run_deferred(&self, cx: &DeferredCx<'_, GracePeriod>, batch: &mut DeferredBatch) {
        let pin = cx.pin();
        batch.apply(&pin, cx.now());
    }
    fn retire_group(&self, group: RetiredGroup, _: &Reclaimer<'_, GracePeriod>) {
        // SAFETY: none — pinned deferred updates may still be reading the group.
        unsafe { group.free_now() };
    }
}

/// Reads each update's group under a pin, drops the pin, then applies the updates.
#[derive(Debug, Default)]
pub struct EpochPinDroppedEarly;

impl StatsPolicy for EpochPinDroppedEarly {
    const NAME: &'static str = "broken-epoch-pin-dropped-early";
    const SUMMARY: &'static str = "groups resolved under a pin, updated after it ended";
    const KEPT: StatsKept = StatsKept::Full;
    type Protection = GracePeriod;
    type DispatchCapture = ();
    type GroupState = ();

    grace_period_route!();
    fn run_deferred(&self, cx: &DeferredCx<'_, GracePeriod>, batch: &mut DeferredBatch) {
        let pin = cx.pin();
        let resolved: Vec<(GroupPtr, StatUpdate)> = batch
            .events()
            // SAFETY: the queues are pinned by the path (I1a), and the pin is held while each
            // queue's group pointer is read.
            .map(|event| (unsafe { event.queue.get() }.current_group(), event.update))
            .collect();
        drop(pin);
        batch.clear();
        let now = cx.now();
        for (group, update) in resolved {
            // SAFETY: none — the pin that kept the group's grace period open has ended. The
            // witness is the bare pointer, which protects nothing: with the pin as witness
            // (`group.get(&pin)`) this use after `drop(pin)` would not compile.
            update.apply_to(unsafe { group.get(&group) }, now);
        }
    }
}

/// Pins an epoch domain of its own while groups are retired through the scheduler's.
pub struct EpochWrongDomain {
    own: crossbeam_epoch::Collector,
}

impl Default for EpochWrongDomain {
    fn default() -> Self {
        EpochWrongDomain { own: crossbeam_epoch::Collector::new() }
    }
}

impl std::fmt::Debug for EpochWrongDomain {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("EpochWrongDomain")
    }
}

impl StatsPolicy for EpochWrongDomain {
    const NAME: &'static str = "broken-epoch-wrong-domain";
    const SUMMARY: &'static str = "pins one epoch domain, groups are reclaimed in another";
    const KEPT: StatsKept = StatsKept::Full;
    type Protection = GracePeriod;
    type DispatchCapture = ();
    type GroupState = ();

    grace_period_route!();
    fn run_deferred(&self, cx: &DeferredCx<'_, GracePeriod>, batch: &mut DeferredBatch) {
        let participant = self.own.register();
        let _pin = participant.pin();
        // SAFETY: none — a pin of this domain does not hold back a grace period of the other.
        unsafe { batch.apply_unchecked(cx.now()) };
    }
}

/// Frees a retired group after a grace period, but the parent it releases at once.
#[derive(Debug, Default)]
pub struct ParentFreedAtOnce;

impl StatsPolicy for ParentFreedAtOnce {
    const NAME: &'static str = "broken-parent-freed-at-once";
    const SUMMARY: &'static str = "a child after its grace period, its parent with none";
    const KEPT: StatsKept = StatsKept::Full;
    type Protection = GracePeriod;
    type DispatchCapture = ();
    type GroupState = ();

    grace_period_route!();
    fn run_deferred(&self, cx: &DeferredCx<'_, GracePeriod>, batch: &mut DeferredBatch) {
        let pin = cx.pin();
        batch.apply(&pin, cx.now());
    }
    fn retire_group(&self, group: RetiredGroup, _: &Reclaimer<'_, GracePeriod>) {
        epoch::pin().defer(move || {
            let mut release_parent = |parent: RetiredGroup| {
                // SAFETY: none — an update pinned after the child's retirement may be reading
                // the parent.
                unsafe { parent.free_now() }
            };
            // SAFETY: the child's own grace period has ended.
            unsafe { group.free(&mut release_parent) };
        });
    }
}

/// Per-group pending state of the two rstat-like controls: whether updates are waiting to be
/// flushed (the kernel's per-CPU pending list entry for the group).
#[derive(Debug, Default)]
pub struct PendingFlush {
    pending: AtomicUsize,
}

/// Updates applied under the queue lock, each also marking its group "pending flush" (as 6.2 queued
/// the group on a per-CPU list); the flush happens when the group is released.
macro_rules! pending_list_variant {
    ($name:ident, $label:literal, $summary:literal, $retire:item) => {
        #[derive(Debug, Default)]
        pub struct $name {
            /// Groups held back until their pending entries are flushed (bookkeeping of the
            /// control, not part of what the models check: the facade's unmodelled mutex).
            held: OracleMutex<Vec<RetiredGroup>>,
        }

        impl StatsPolicy for $name {
            const NAME: &'static str = $label;
            const SUMMARY: &'static str = $summary;
            const KEPT: StatsKept = StatsKept::Full;
            type Protection = QueueLock;
            type DispatchCapture = ();
            type GroupState = PendingFlush;

            fn route(&self, kind: StatKind) -> Route {
                Route::defer_if_deferrable(kind)
            }
            fn run_deferred(&self, cx: &DeferredCx<'_, QueueLock>, batch: &mut DeferredBatch) {
                let now = cx.now();
                let queue_lock = cx.lock_queue();
                batch.apply_with(&queue_lock, |group, update| {
                    update.apply_to(group, now);
                    group.policy_state::<PendingFlush>().expect("this policy's state").pending.store(1, Ordering::Relaxed);
                });
            }
            $retire
        }
    };
}

pending_list_variant!(
    PendingPinsLeak,
    "broken-pending-pins-leak",
    "a pending entry holds its group until a flush that only the group's release runs (6.2)",
    fn retire_group(&self, group: RetiredGroup, reclaim: &Reclaimer<'_, QueueLock>) {
        let pending = group
            .group()
            .policy_state::<PendingFlush>()
            .expect("this policy's state")
            .pending
            .load(Ordering::Relaxed);
        if pending != 0 {
            // The cycle: the entry keeps the group until it is flushed, and the flush would run
            // from the group's release, which the entry prevents.
            self.held.lock().unwrap().push(group);
        } else {
            reclaim.release(group);
        }
    }
);

pending_list_variant!(
    DrainOnRelease,
    "fixed-drain-on-release",
    "the release drains the pending entries, which hold no reference (the 2023 fix)",
    fn retire_group(&self, group: RetiredGroup, reclaim: &Reclaimer<'_, QueueLock>) {
        group
            .group()
            .policy_state::<PendingFlush>()
            .expect("this policy's state")
            .pending
            .store(0, Ordering::Relaxed);
        let _ = &self.held;
        reclaim.release(group);
    }
);
