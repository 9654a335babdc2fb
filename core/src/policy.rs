//! The stats-policy contract: where the group statistics are updated.
//!
//! The scheduler decides *what* the kernel would record and *when* (each [`StatUpdate`] is named
//! after the `bfqg_stats_*` function it mirrors, emitted at the point where BFQ calls it). A
//! [`StatsPolicy`] decides *where*: applied at once under the scheduler lock, deferred past it
//! into a [`DeferredBatch`] that the policy applies under its [`Protection`], or skipped. A
//! variant is one type implementing this trait, in one file, plus one registry line.
//!
//! ## The contract, path by path
//!
//! | path | under the scheduler lock | after the scheduler lock |
//! | --- | --- | --- |
//! | insert | `route` for each update; updates routed `Now` are applied | `run_deferred` with the batch (io_add, io_merged, io_remove of a merged-away request, idle_time) |
//! | dispatch | `dispatch_begin` (before any work), `route`, `dispatch_end` (after the work: may edit the batch) | `run_deferred` (avg_queue_size, set_start_empty_time, io_remove, io_service_bytes/io_serviced) |
//! | completion | `route`; updates routed `Now` are applied under the lock *before* the completion bookkeeping (which may free the queue) | `run_deferred` runs *before* the lock is taken, as the kernel's finish path does: the request still pins its queue |
//! | group removal, process move | reparenting; holds the queue lock too iff the protection says so ([`Protection::REMOVAL_HOLDS_QUEUE_LOCK`]); refused iff it says so ([`Protection::ALLOWS_REMOVAL`]) | `retire_group` for each group whose last reference went |
//!
//! Updates of the kinds where [`StatKind::deferrable`] is false (`dequeue`, `set_start_idle_time`,
//! `time`) happen at expiration or timer arming, when the queue involved may be freed before the
//! lock is released: they are always applied under the lock if kept, whatever `route` says.
//!
//! ## What a batch carries, and what applying it needs
//!
//! Each [`StatEvent`] is `Copy` and holds a [`QueueRef`] (not a group): the group is resolved from
//! the queue when the batch is applied, as the kernel's deferred code evaluates `bfqq_group(bfqq)`
//! under the queue lock. Every queue in a batch built by the scheduler is pinned until the path
//! returns (notes/invariants.md I1a). Whether the group it points at is still allocated is the
//! protection's argument (`protection.rs`): [`DeferredBatch::apply`] takes a
//! [`Witness`](crate::protection::Witness) of the variant's protection, which only its
//! [`DeferredCx`] hands out, so a variant that applies under the protection it declared needs no
//! `unsafe`. [`DeferredBatch::apply_unchecked`] is for code that argues its own case.

use crate::clock::SchedClock;
use crate::objects::rstat::RstatLists;
use crate::objects::{GroupShared, QueueRef, RetiredGroup};
use crate::protection::{
    EpochPin, GracePeriod, GroupsStay, NoRemoval, Protection, QueueLock, QueueLockHeld, Reclaimer,
    Witness,
};
use crate::state::SchedState;
use crate::sync::{epoch, Lock, LockGuard};
pub use crate::update::{Path, StatEvent, StatKind, StatUpdate, StatsKept};
use arrayvec::ArrayVec;
use std::marker::PhantomData;

/// Where an update goes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Route {
    /// Applied at once, under the scheduler lock.
    Now,
    /// Put in the path's batch, for `run_deferred`.
    Defer,
    /// Not recorded.
    Skip,
}

impl Route {
    /// The 4.15 split: updates of the kinds that may be deferred ([`StatKind::deferrable`]) go
    /// to the batch, the others are applied under the lock. The route of every variant that
    /// defers all it can.
    #[inline]
    pub fn defer_if_deferrable(kind: StatKind) -> Route {
        if kind.deferrable() {
            Route::Defer
        } else {
            Route::Now
        }
    }

    /// The debug statistics not recorded (`CONFIG_BFQ_CGROUP_DEBUG` off), io_service_bytes and
    /// io_serviced routed to `kept`. The route of the variants that keep only those two.
    #[inline]
    pub fn legacy_only(kind: StatKind, kept: Route) -> Route {
        if kind.is_debug() {
            Route::Skip
        } else {
            kept
        }
    }
}

/// Room in one path's batch: the scheduler emits at most 3 deferrable updates on insert (a merge
/// that absorbs the next request) and 4 on dispatch; the rest is for what `dispatch_end` adds.
pub const BATCH_CAPACITY: usize = 16;

/// The deferred updates of one path, applied by the policy after the scheduler lock.
///
/// A path emits a handful of updates; a dispatch that splices insertion lists (`insert/lists.rs`)
/// emits a few per request spliced, which go to `overflow` past the inline capacity.
#[derive(Debug)]
pub struct DeferredBatch {
    path: Path,
    events: ArrayVec<StatEvent, BATCH_CAPACITY>,
    overflow: Vec<StatEvent>,
}

impl DeferredBatch {
    pub fn new(path: Path) -> Self {
        DeferredBatch { path, events: ArrayVec::new(), overflow: Vec::new() }
    }

    pub fn path(&self) -> Path {
        self.path
    }

    pub fn is_empty(&self) -> bool {
        self.events.is_empty()
    }

    pub fn len(&self) -> usize {
        self.events.len() + self.overflow.len()
    }

    /// Every update, in the order they were emitted.
    pub fn events(&self) -> impl Iterator<Item = &StatEvent> {
        self.events.iter().chain(self.overflow.iter())
    }

    /// Adds an update the scheduler emitted for a queue it pins until the path returns (I1a).
    pub(crate) fn push_pinned(&mut self, event: StatEvent) {
        if let Err(full) = self.events.try_push(event) {
            self.overflow.push(full.element());
        }
    }

    /// Adds an update of the policy's own (from `dispatch_end`).
    ///
    /// # Safety
    /// `event.queue` must stay allocated until the batch is applied: the policy argues why (I1a
    /// covers only the queues the scheduler put in the batch; a queue captured in `dispatch_begin`
    /// may have been expired and freed by the same dispatch, kernel-bfq.md, "Real bugs").
    pub unsafe fn push(&mut self, event: StatEvent) {
        self.push_pinned(event);
    }

    /// Removes every update without applying it.
    pub fn clear(&mut self) {
        self.events.clear();
        self.overflow.clear();
    }

    /// Applies every update to its queue's *current* group, then empties the batch.
    ///
    /// `_protection` proves that the variant's side of its protection is held (the queue lock, an
    /// epoch pin, or groups that never move), and the scheduler holds up the other side: the
    /// existence argument is checked by the compiler (protection.rs, notes/invariants.md I1).
    pub fn apply<W: Witness>(&mut self, _protection: &W, now: u64) {
        // SAFETY: every queue in a batch that reaches a policy's `run_deferred` is pinned until the
        // path returns (I1a: the scheduler's events by construction, the policy's own by the
        // contract of `push`); the witness is held for the whole call, so each queue's current
        // group stays allocated until its update is applied (I1b, I1c or I1d, protection.rs).
        unsafe { self.apply_with_unchecked(|group, update| update.apply_to(group, now)) }
    }

    /// Resolves every update's group as [`DeferredBatch::apply`] does and hands it to `f` (for
    /// policies that do more than apply: count, pin, log), then empties the batch.
    pub fn apply_with<W: Witness>(
        &mut self,
        _protection: &W,
        f: impl FnMut(&GroupShared, &StatUpdate),
    ) {
        // SAFETY: as in `apply`.
        unsafe { self.apply_with_unchecked(f) }
    }

    /// Adds every io_service_bytes/io_serviced update to `lists`, blk-cgroup's per-CPU rstat
    /// (`objects/rstat.rs`), instead of to the group's counters, then empties the batch. Each
    /// group is resolved as [`DeferredBatch::apply`] does, under the same kind of witness; the
    /// rstat variants route no other kind to the batch, and any other is dropped.
    pub fn apply_to_rstat<W: Witness>(&mut self, protection: &W, lists: &RstatLists) {
        self.apply_with(protection, |group, update| {
            if let StatUpdate::LegacyIo { op, bytes } = *update {
                lists.add(group, op, bytes);
            }
        });
    }

    /// [`DeferredBatch::apply`] without a witness.
    ///
    /// # Safety
    /// For every event, the queue must be allocated (I1a) and the group it points at must stay
    /// allocated until this call returns: the caller holds a protection that every path which
    /// reparents a queue or frees a group respects, and argues it in its `SAFETY` comment.
    pub unsafe fn apply_unchecked(&mut self, now: u64) {
        // SAFETY: the caller's guarantee is the one `apply_with_unchecked` requires.
        unsafe { self.apply_with_unchecked(|group, update| update.apply_to(group, now)) }
    }

    /// [`DeferredBatch::apply_with`] without a witness.
    ///
    /// # Safety
    /// As for [`DeferredBatch::apply_unchecked`].
    pub unsafe fn apply_with_unchecked(&mut self, mut f: impl FnMut(&GroupShared, &StatUpdate)) {
        let overflow = std::mem::take(&mut self.overflow);
        for event in self.events.drain(..).chain(overflow) {
            // SAFETY: the caller guarantees the queue is allocated (I1a).
            let queue = unsafe { event.queue.get() };
            // SAFETY: the caller guarantees the queue's current group stays allocated (I1b) while
            // the queue (the witness) is.
            let group = unsafe { queue.current_group().get(queue) };
            f(group, &event.update);
            // A free that landed in the middle of the update is caught here (under a model
            // checker; a no-op otherwise).
            group.assert_alive();
        }
    }
}

/// What `run_deferred` can use: the clock, the queue lock, and the witness of the variant's
/// protection `R` (only the method of that protection exists).
pub struct DeferredCx<'a, R: Protection> {
    pub(crate) queue_lock: &'a Lock<()>,
    pub(crate) clock: &'a SchedClock,
    pub(crate) rstat: Option<&'a RstatLists>,
    pub(crate) _protection: PhantomData<fn() -> R>,
}

impl<'a, R: Protection> DeferredCx<'a, R> {
    pub(crate) fn new(
        queue_lock: &'a Lock<()>,
        clock: &'a SchedClock,
        rstat: Option<&'a RstatLists>,
    ) -> Self {
        DeferredCx { queue_lock, clock, rstat, _protection: PhantomData }
    }

    /// The scheduler's per-CPU rstat lists (`objects/rstat.rs`).
    ///
    /// # Panics
    /// If the policy does not keep them (`StatsPolicy::RSTAT_LISTS` is false).
    #[inline]
    pub fn rstat(&self) -> &'a RstatLists {
        self.rstat.expect("StatsPolicy::RSTAT_LISTS is false for this policy")
    }

    /// The scheduler's clock.
    #[inline]
    pub fn now(&self) -> u64 {
        self.clock.now_ns()
    }

    /// Takes the request-queue lock as a plain lock: serialises with other holders, but is no
    /// witness unless the protection is [`QueueLock`] (removal takes it only then).
    #[inline]
    pub fn queue_lock(&self) -> LockGuard<'a, ()> {
        self.queue_lock.lock()
    }
}

impl<'a> DeferredCx<'a, QueueLock> {
    /// Takes the request-queue lock, which removal and moves also hold (I1b).
    #[inline]
    pub fn lock_queue(&self) -> QueueLockHeld<'a> {
        QueueLockHeld { _guard: self.queue_lock.lock() }
    }
}

impl DeferredCx<'_, GracePeriod> {
    /// Pins the epoch in which retired groups are reclaimed (I1d).
    #[inline]
    pub fn pin(&self) -> EpochPin {
        EpochPin { _guard: epoch::pin() }
    }
}

impl<'a> DeferredCx<'a, NoRemoval> {
    /// The scheduler refuses removal and moves for this protection (I1c).
    #[inline]
    pub fn groups_stay(&self) -> GroupsStay<'a> {
        GroupsStay { _scheduler: PhantomData }
    }
}

/// A read-only view of the scheduler state, handed to hooks that run under the scheduler lock.
pub struct LockedView<'a> {
    pub(crate) state: &'a SchedState,
}

impl LockedView<'_> {
    /// The queue in service (`bfqd->in_service_queue`). The pointer stays valid only while the
    /// scheduler lock is held and the queue is not expired: a hook that keeps it for later must
    /// re-validate it (kernel-bfq.md, "Real bugs": the captured pointer).
    pub fn in_service_queue(&self) -> Option<QueueRef> {
        self.state.in_service_queue_ref()
    }

    /// Whether `queue` is the queue in service right now (an identity check, no dereference).
    pub fn is_in_service(&self, queue: QueueRef) -> bool {
        self.state.in_service_queue_ref() == Some(queue)
    }

    /// The group of the queue in service, if any (valid while the lock is held).
    pub fn in_service_group(&self) -> Option<&GroupShared> {
        let queue = self.state.in_service_queue_ref()?;
        // SAFETY: the scheduler lock is held (this view, the witness, borrows the locked state)
        // and the queue is in service, so it is allocated; its current group is referenced by it
        // and changes only under the scheduler lock.
        Some(unsafe { queue.get().current_group().get(self) })
    }
}

/// A stats variant. See the module documentation for the contract.
///
/// A variant writes what it decides (its names, what it keeps, its protection, `route` and, if it
/// defers anything, `run_deferred`) and only the hooks it changes: the others have defaults (no
/// capture, no edit of the batch, nothing when a group goes offline, a retired group handed
/// straight to the protection). One policy is made per scheduler instance, by [`Default`].
pub trait StatsPolicy: Default + Send + Sync + Sized + 'static {
    /// The name used on the command line and in reports.
    const NAME: &'static str;
    /// One line on what the variant changes.
    const SUMMARY: &'static str;
    /// Which statistics it keeps.
    const KEPT: StatsKept;
    /// Whether the scheduler keeps per-CPU rstat lists for it (`objects/rstat.rs`): every group gets a
    /// per-CPU area, reads flush the lists first, and a released group drains them.
    const RSTAT_LISTS: bool = false;
    /// Whether io_service_bytes / io_serviced are counted when a request is submitted, before
    /// the scheduler lock (Linux 5.x-6.18: `bfqg_stats_update_legacy_io` at the top of
    /// `bfq_insert_request`, `blk_cgroup_bio_start` at submission), instead of at dispatch under
    /// it. Then the submitting thread hands the policy's `run_deferred` a one-event batch
    /// (`Path::Insert`, `StatUpdate::LegacyIo`) before its insert takes any lock, the dispatch
    /// emits none, and the I7 ledger charges every request that reaches the scheduler's insert
    /// (bio merges make no request and count nothing, as in the kernel). The existence argument
    /// is the deferred window's: the process pins its queue (I1a), the protection its group.
    const LEGACY_IO_AT_SUBMIT: bool = false;
    /// What keeps a group allocated while a deferred update reaches it; the scheduler takes the
    /// locks, refuses the operations and frees groups as this protection says (protection.rs).
    type Protection: Protection;
    /// What `dispatch_begin` captures for `dispatch_end` (`()` for a variant that writes neither).
    type DispatchCapture: Copy + Default;
    /// State the policy keeps per group (`()` for none), reachable through
    /// [`GroupShared::policy_state`] from any hook that holds a live group.
    type GroupState: Default + Send + Sync + 'static;

    /// Where updates of `kind` go. Called under the scheduler lock; should be a constant match.
    fn route(&self, kind: StatKind) -> Route;

    /// Called under the scheduler lock at the start of dispatch, before any scheduling work. The
    /// default captures nothing (the capture's `Default`).
    fn dispatch_begin(&self, _view: &LockedView<'_>) -> Self::DispatchCapture {
        Self::DispatchCapture::default()
    }

    /// Called under the scheduler lock at the end of dispatch; may edit the batch. The default does
    /// nothing.
    fn dispatch_end(
        &self,
        _view: &LockedView<'_>,
        _capture: Self::DispatchCapture,
        _batch: &mut DeferredBatch,
    ) {
    }

    /// Applies a non-empty batch, outside the scheduler lock: take the protection's witness from
    /// `cx` and call [`DeferredBatch::apply`].
    ///
    /// The default is for a variant that defers nothing: a build that uses it under a protection
    /// with a witness ([`Protection::MAY_DEFER`]: all but `SchedLockOnly`) fails, and it panics if
    /// handed a batch (the variant routed an update there with nothing to apply it under).
    fn run_deferred(&self, _cx: &DeferredCx<'_, Self::Protection>, batch: &mut DeferredBatch) {
        const {
            assert!(
                !<Self::Protection as Protection>::MAY_DEFER,
                "a variant whose protection may defer must write its own `run_deferred`"
            )
        };
        unreachable!("{} defers nothing, got {} updates", Self::NAME, batch.len());
    }

    /// Called under the scheduler lock when a group goes offline, after its queues moved to the
    /// parent and its statistics were transferred.
    fn group_offline(&self, _group: &GroupShared) {}

    /// A group's last reference went: hand it to `reclaim` (freed at once or after a grace
    /// period, as the protection says), after any last look of the variant's own (draining state
    /// it keeps for the group). Called outside the scheduler lock; on the removal path with the
    /// queue lock held iff the protection says so; at teardown with no lock (no path, hence no
    /// deferred update, can be running: I4). A group not handed over is leaked (the models report
    /// it). Only the group whose last reference went comes here: parents released by their
    /// child's free go straight to the protection.
    fn retire_group(&self, group: RetiredGroup, reclaim: &Reclaimer<'_, Self::Protection>) {
        reclaim.release(group);
    }

    /// Finishes the deferred reclamation that is due. Called when the workload is quiescent,
    /// before counting live objects.
    fn quiesce() {
        <Self::Protection as Protection>::quiesce();
    }
}
