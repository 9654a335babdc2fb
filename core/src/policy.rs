//! The stats-policy contract: where the group statistics are updated.
//!
//! The scheduler decides *what* the kernel would record and *when* (each [`StatUpdate`] is named
//! after the `bfqg_stats_*` function it mirrors, emitted at the point where BFQ calls it). A
//! [`StatsPolicy`] decides *where*: applied at once under the scheduler lock, deferred past it
//! into a [`DeferredBatch`] that the policy applies under a protection of its choosing, or
//! skipped. A variant is one type implementing this trait, in one file, plus one registry line.
//!
//! ## The contract, path by path
//!
//! | path | under the scheduler lock | after the scheduler lock |
//! | --- | --- | --- |
//! | insert | `route` for each update; updates routed `Now` are applied | `run_deferred` with the batch (io_add, io_merged, io_remove of a merged-away request, idle_time) |
//! | dispatch | `dispatch_begin` (before any work), `route`, `dispatch_end` (after the work: may edit the batch) | `run_deferred` (avg_queue_size, set_start_empty_time, io_remove, io_service_bytes/io_serviced) |
//! | completion | `route`; updates routed `Now` are applied under the lock *before* the completion bookkeeping (which may free the queue) | `run_deferred` runs *before* the lock is taken, as the kernel's finish path does: the request still pins its queue |
//! | group removal, process move | reparenting; holds the queue lock too iff [`StatsPolicy::REPARENT_HOLDS_QUEUE_LOCK`] | `retire_group` for each group whose last reference went |
//!
//! Updates of the kinds where [`StatKind::deferrable`] is false (`dequeue`, `set_start_idle_time`,
//! `time`) happen at expiration or timer arming, when the queue involved may be freed before the
//! lock is released: they are always applied under the lock if kept, whatever `route` says.
//!
//! ## What a batch carries
//!
//! Each [`StatEvent`] is `Copy` and holds a [`QueueRef`] (not a group): the group is resolved from
//! the queue when the batch is applied, as the kernel's deferred code evaluates `bfqq_group(bfqq)`
//! under the queue lock. Every queue in a batch built by the scheduler is pinned until the path
//! returns (notes/invariants.md I1a). Whether the group it points at is still allocated is the
//! policy's argument to make; [`DeferredBatch::apply`] is `unsafe` for exactly that reason.

use crate::clock::SchedClock;
use crate::objects::{GroupShared, QueueRef, RetiredGroup};
use crate::state::SchedState;
use crate::stats::Op;
use crate::sync::{Lock, LockGuard};
use arrayvec::ArrayVec;

/// The kernel function a statistics update mirrors.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum StatKind {
    IoAdd,
    IoRemove,
    IoMerged,
    AvgQueueSize,
    SetStartEmptyTime,
    IdleTime,
    Completion,
    LegacyIo,
    Dequeue,
    SetStartIdleTime,
    TimesliceUsed,
}

impl StatKind {
    /// Every kind.
    pub const ALL: [StatKind; 11] = [
        StatKind::IoAdd,
        StatKind::IoRemove,
        StatKind::IoMerged,
        StatKind::AvgQueueSize,
        StatKind::SetStartEmptyTime,
        StatKind::IdleTime,
        StatKind::Completion,
        StatKind::LegacyIo,
        StatKind::Dequeue,
        StatKind::SetStartIdleTime,
        StatKind::TimesliceUsed,
    ];

    /// The kernel function this mirrors.
    pub fn kernel_name(self) -> &'static str {
        match self {
            StatKind::IoAdd => "bfqg_stats_update_io_add",
            StatKind::IoRemove => "bfqg_stats_update_io_remove",
            StatKind::IoMerged => "bfqg_stats_update_io_merged",
            StatKind::AvgQueueSize => "bfqg_stats_update_avg_queue_size",
            StatKind::SetStartEmptyTime => "bfqg_stats_set_start_empty_time",
            StatKind::IdleTime => "bfqg_stats_update_idle_time",
            StatKind::Completion => "bfqg_stats_update_completion",
            StatKind::LegacyIo => "blkg_rwstat_add(io_service_bytes, io_serviced)",
            StatKind::Dequeue => "bfqg_stats_update_dequeue",
            StatKind::SetStartIdleTime => "bfqg_stats_set_start_idle_time",
            StatKind::TimesliceUsed => "bfqg_stats_update_timeslice_used",
        }
    }

    /// Whether an update of this kind may be deferred past the scheduler lock.
    pub fn deferrable(self) -> bool {
        !matches!(self, StatKind::Dequeue | StatKind::SetStartIdleTime | StatKind::TimesliceUsed)
    }

    /// Whether this is one of the debug statistics (all but io_service_bytes/io_serviced).
    pub fn is_debug(self) -> bool {
        self != StatKind::LegacyIo
    }
}

/// One statistics update and its arguments.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StatUpdate {
    /// `group_in_service`: whether the queue's group is the group being served (captured under
    /// the lock; decides whether a group-wait interval opens).
    IoAdd { op: Op, group_in_service: bool },
    IoRemove { op: Op },
    IoMerged { op: Op },
    AvgQueueSize,
    SetStartEmptyTime,
    IdleTime,
    Completion { op: Op, start_ns: u64, io_start_ns: u64 },
    LegacyIo { op: Op, bytes: u64 },
    Dequeue,
    SetStartIdleTime,
    TimesliceUsed { used_ns: u64 },
}

impl StatUpdate {
    pub fn kind(&self) -> StatKind {
        match self {
            StatUpdate::IoAdd { .. } => StatKind::IoAdd,
            StatUpdate::IoRemove { .. } => StatKind::IoRemove,
            StatUpdate::IoMerged { .. } => StatKind::IoMerged,
            StatUpdate::AvgQueueSize => StatKind::AvgQueueSize,
            StatUpdate::SetStartEmptyTime => StatKind::SetStartEmptyTime,
            StatUpdate::IdleTime => StatKind::IdleTime,
            StatUpdate::Completion { .. } => StatKind::Completion,
            StatUpdate::LegacyIo { .. } => StatKind::LegacyIo,
            StatUpdate::Dequeue => StatKind::Dequeue,
            StatUpdate::SetStartIdleTime => StatKind::SetStartIdleTime,
            StatUpdate::TimesliceUsed { .. } => StatKind::TimesliceUsed,
        }
    }

    /// Calls the matching `GroupStats` function on `group`'s statistics (inside a
    /// [`crate::trace::STATS`] span named by the kernel function when traced).
    #[inline]
    pub fn apply_to(&self, group: &GroupShared, now: u64) {
        if crate::trace::hot_paths_traced() {
            self.apply_to_traced(group, now);
        } else {
            self.apply_to_stats(group.stats(), now);
        }
    }

    /// [`StatUpdate::apply_to`] inside its span (out of line: the untraced update stays small).
    #[inline(never)]
    #[cold]
    fn apply_to_traced(&self, group: &GroupShared, now: u64) {
        let _span = crate::trace::enter_stat(self.kind(), group.serial());
        self.apply_to_stats(group.stats(), now);
    }

    #[inline(always)]
    fn apply_to_stats(&self, stats: &crate::stats::GroupStats, now: u64) {
        match *self {
            StatUpdate::IoAdd { op, group_in_service } => stats.update_io_add(op, now, group_in_service),
            StatUpdate::IoRemove { op } => stats.update_io_remove(op),
            StatUpdate::IoMerged { op } => stats.update_io_merged(op),
            StatUpdate::AvgQueueSize => stats.update_avg_queue_size(now),
            StatUpdate::SetStartEmptyTime => stats.set_start_empty_time(now),
            StatUpdate::IdleTime => stats.update_idle_time(now),
            StatUpdate::Completion { op, start_ns, io_start_ns } => {
                stats.update_completion(op, start_ns, io_start_ns, now)
            }
            StatUpdate::LegacyIo { op, bytes } => stats.update_legacy_io(op, bytes),
            StatUpdate::Dequeue => stats.update_dequeue(),
            StatUpdate::SetStartIdleTime => stats.set_start_idle_time(now),
            StatUpdate::TimesliceUsed { used_ns } => stats.update_timeslice_used(used_ns),
        }
    }
}

/// An update for the group of `queue`.
#[derive(Clone, Copy, Debug)]
pub struct StatEvent {
    pub queue: QueueRef,
    pub update: StatUpdate,
}

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

/// Which statistics a policy keeps (for reports and for the consistency checks).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StatsKept {
    /// The whole debug set plus io_service_bytes/io_serviced.
    Full,
    /// Only io_service_bytes/io_serviced (`CONFIG_DEBUG_BLK_CGROUP` off).
    Legacy,
    /// Nothing.
    None,
}

/// The path a batch was built on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Path {
    Insert,
    Dispatch,
    Completion,
}

/// Room in one path's batch: the scheduler emits at most 3 deferrable updates on insert (a merge
/// that absorbs the next request) and 4 on dispatch; the rest is for what `dispatch_end` adds.
pub const BATCH_CAPACITY: usize = 16;

/// The deferred updates of one path, applied by the policy after the scheduler lock.
#[derive(Debug)]
pub struct DeferredBatch {
    path: Path,
    events: ArrayVec<StatEvent, BATCH_CAPACITY>,
}

impl DeferredBatch {
    pub fn new(path: Path) -> Self {
        DeferredBatch { path, events: ArrayVec::new() }
    }

    pub fn path(&self) -> Path {
        self.path
    }

    pub fn is_empty(&self) -> bool {
        self.events.is_empty()
    }

    pub fn len(&self) -> usize {
        self.events.len()
    }

    pub fn events(&self) -> &[StatEvent] {
        &self.events
    }

    /// Adds an update (policies may add their own in `dispatch_end`).
    pub fn push(&mut self, event: StatEvent) {
        self.events.try_push(event).expect("a path emits at most BATCH_CAPACITY updates");
    }

    /// Removes every update without applying it.
    pub fn clear(&mut self) {
        self.events.clear();
    }

    /// Applies every update to its queue's *current* group, then empties the batch.
    ///
    /// # Safety
    /// For every event, the queue must be allocated (I1a: guaranteed for batches the scheduler
    /// built, while the path runs) and the group it points at must stay allocated until this call
    /// returns: the caller holds a protection that every path which reparents a queue or frees a
    /// group respects (I1b: the queue lock when `REPARENT_HOLDS_QUEUE_LOCK`, an epoch pin when
    /// groups are retired through the epoch, or the scheduler lock itself).
    pub unsafe fn apply(&mut self, now: u64) {
        // SAFETY: the caller's guarantee is the one `apply_with` requires.
        unsafe { self.apply_with(|group, update| update.apply_to(group, now)) }
    }

    /// Resolves every update's group as [`DeferredBatch::apply`] does and hands it to `f` (for
    /// policies that do more than apply: count, pin, log), then empties the batch.
    ///
    /// # Safety
    /// As for [`DeferredBatch::apply`].
    pub unsafe fn apply_with(&mut self, mut f: impl FnMut(&GroupShared, &StatUpdate)) {
        for event in self.events.drain(..) {
            // SAFETY: the caller guarantees the queue is allocated (I1a).
            let queue = unsafe { event.queue.get() };
            // SAFETY: the caller guarantees the queue's current group stays allocated (I1b).
            let group = unsafe { queue.current_group().get() };
            f(group, &event.update);
            // A free that landed in the middle of the update is caught here (under a model
            // checker; a no-op otherwise).
            group.assert_alive();
        }
    }
}

/// What `run_deferred` can use: the queue lock and the clock.
pub struct DeferredCx<'a> {
    pub(crate) queue_lock: &'a Lock<()>,
    pub(crate) clock: &'a SchedClock,
}

impl<'a> DeferredCx<'a> {
    /// Takes the request-queue lock (the 4.15 design's protection).
    #[inline]
    pub fn lock_queue(&self) -> LockGuard<'a, ()> {
        self.queue_lock.lock()
    }

    /// The scheduler's clock.
    #[inline]
    pub fn now(&self) -> u64 {
        self.clock.now_ns()
    }
}

/// A read-only view of the scheduler state, handed to hooks that run under the scheduler lock.
pub struct LockedView<'a> {
    pub(crate) state: &'a SchedState,
}

impl LockedView<'_> {
    /// The queue in service (`bfqd->in_service_queue`). The pointer stays valid only while the
    /// scheduler lock is held and the queue is not expired: a hook that keeps it for later must
    /// re-validate it (kernel-bfq.md §5, first bug).
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
        // SAFETY: the scheduler lock is held (this view borrows the locked state) and the queue is
        // in service, so it is allocated; its current group is referenced by it and changes only
        // under the scheduler lock.
        Some(unsafe { queue.get().current_group().get() })
    }
}

/// A stats variant. See the module documentation for the contract.
pub trait StatsPolicy: Send + Sync + Sized + 'static {
    /// The name used on the command line and in reports.
    const NAME: &'static str;
    /// One line on what the variant changes.
    const SUMMARY: &'static str;
    /// Which statistics it keeps.
    const KEPT: StatsKept;
    /// Whether reparenting a queue and dropping group references also hold the queue lock.
    const REPARENT_HOLDS_QUEUE_LOCK: bool;
    /// Whether groups may be removed (or processes moved) while this variant runs. When false,
    /// the scheduler refuses group removal and process moves.
    const SAFE_UNDER_GROUP_REMOVAL: bool;

    /// Whether `retire_group` frees after a grace period rather than before it returns. Models
    /// then accept retired groups still awaiting reclamation at the end of an execution (loom
    /// checks safety, not eventual progress; the real-thread tests check that they are freed).
    const RECLAIMS_AFTER_GRACE_PERIOD: bool = false;
    /// What `dispatch_begin` captures for `dispatch_end`.
    type DispatchCapture: Copy;
    /// State the policy keeps per group (`()` for none), reachable through
    /// [`GroupShared::policy_state`] from any hook that holds a live group.
    type GroupState: Default + Send + Sync + 'static;

    /// Makes the policy for one scheduler instance.
    fn new() -> Self;

    /// Where updates of `kind` go. Called under the scheduler lock; should be a constant match.
    fn route(&self, kind: StatKind) -> Route;

    /// Called under the scheduler lock at the start of dispatch, before any scheduling work.
    fn dispatch_begin(&self, _view: &LockedView<'_>) -> Self::DispatchCapture;

    /// Called under the scheduler lock at the end of dispatch; may edit the batch.
    fn dispatch_end(&self, _view: &LockedView<'_>, _capture: Self::DispatchCapture, _batch: &mut DeferredBatch) {}

    /// Applies a non-empty batch, outside the scheduler lock.
    fn run_deferred(&self, cx: &DeferredCx<'_>, batch: &mut DeferredBatch);

    /// Called under the scheduler lock when a group goes offline, after its queues moved to the
    /// parent and its statistics were transferred.
    fn group_offline(&self, _group: &GroupShared) {}

    /// Frees (now or later) a group whose last reference went. Called outside the scheduler lock;
    /// on the removal path with the queue lock held iff `REPARENT_HOLDS_QUEUE_LOCK`; at teardown
    /// with no lock (no path, hence no deferred update, can be running: I4).
    fn retire_group(&self, group: RetiredGroup) {
        group.free_now();
    }

    /// Finishes any deferred reclamation that is due (epoch: flush). Called when the workload is
    /// quiescent, before counting live objects.
    fn quiesce() {}
}
