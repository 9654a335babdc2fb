//! The two objects that deferred statistics updates can reach after the scheduler lock is
//! released, and their lifetimes (notes/invariants.md).
//!
//! Everything the scheduler *schedules* with (service trees, request lists, budgets) lives inside
//! the scheduler lock, in `state/`. What a deferred update needs lives outside it, in two heap
//! objects reached through raw pointers, as in the kernel:
//!
//! - [`GroupShared`]: a group's statistics, its reference count and its parent. Freed when the last
//!   reference goes, through the stats policy's `retire_group` and its protection (immediately, or
//!   after an epoch grace period: `protection.rs`).
//!   References: one while the group is online, one per queue whose current group it is, one per
//!   child group (until the child is freed).
//! - [`QueueShared`]: a queue's current group (an atomic pointer: reparenting stores it, deferred
//!   updates load it). Freed under the scheduler lock when its reference count (kept in the locked
//!   state: process, requests, in-service) drops to zero.
//!
//! Both carry a [`Liveness`] word poisoned on drop; under loom, freed objects are quarantined so a
//! stale access fails an assertion (the models' way of seeing a use after free).

use crate::fault::{self, Fault};
pub mod rstat;

use crate::stats::GroupStats;
use crate::sync::{
    reclaim, AtomicBool, AtomicPtr, AtomicU32, AtomicUsize, Liveness, OracleArc, Ordering,
};
use rstat::{GroupIostat, RstatLists};
use std::any::Any;
use std::ptr::NonNull;

/// Live-object counts of one scheduler instance (and of its deferred frees, which may outlive it).
#[derive(Debug, Default)]
pub struct Census {
    groups: AtomicUsize,
    queues: AtomicUsize,
    awaiting_reclamation: AtomicUsize,
    torn_down: AtomicBool,
}

impl Census {
    /// Groups allocated and not yet freed (online, offline-awaiting-free, and root).
    pub fn live_groups(&self) -> usize {
        self.groups.load(Ordering::Acquire)
    }

    /// Queues allocated and not yet freed.
    pub fn live_queues(&self) -> usize {
        self.queues.load(Ordering::Acquire)
    }

    /// Whether the scheduler instance has been torn down (no path can run any more: I4).
    pub fn torn_down(&self) -> bool {
        self.torn_down.load(Ordering::Acquire)
    }

    pub(crate) fn mark_torn_down(&self) {
        self.torn_down.store(true, Ordering::Release);
    }

    /// Groups whose last reference went and that were handed to the policy's `retire_group` but
    /// not freed yet (an epoch policy's garbage awaiting its grace period).
    pub fn awaiting_reclamation(&self) -> usize {
        self.awaiting_reclamation.load(Ordering::Acquire)
    }
}

/// A group's shared part.
pub struct GroupShared {
    liveness: Liveness,
    refs: AtomicUsize,
    parent: Option<GroupPtr>,
    stats: GroupStats,
    serial: u64,
    census: OracleArc<Census>,
    policy_state: Box<dyn Any + Send + Sync>,
    /// The per-CPU rstat area and the scheduler's pending lists, when the policy keeps them
    /// (`StatsPolicy::RSTAT_LISTS`): the release drains the lists before the memory goes.
    rstat: Option<(GroupIostat, OracleArc<RstatLists>)>,
}

impl GroupShared {
    pub(crate) fn allocate(
        parent: Option<GroupPtr>,
        slots: usize,
        serial: u64,
        census: &OracleArc<Census>,
        policy_state: Box<dyn Any + Send + Sync>,
        rstat: Option<&OracleArc<RstatLists>>,
    ) -> GroupPtr {
        census.groups.fetch_add(1, Ordering::Relaxed);
        let group = Box::new(GroupShared {
            liveness: Liveness::new(),
            refs: AtomicUsize::new(1), // the online reference
            parent,
            stats: GroupStats::new(slots),
            serial,
            census: census.clone(),
            policy_state,
            rstat: rstat.map(|lists| (GroupIostat::new(slots), lists.clone())),
        });
        GroupPtr(NonNull::from(Box::leak(group)))
    }

    /// The group's statistics. Under a model checker, asserts the group was not freed.
    #[inline]
    pub fn stats(&self) -> &GroupStats {
        self.liveness.assert_alive("group");
        &self.stats
    }

    /// The stats policy's own state for this group (`StatsPolicy::GroupState`), if `T` is it.
    pub fn policy_state<T: 'static>(&self) -> Option<&T> {
        self.liveness.assert_alive("group");
        self.policy_state.downcast_ref()
    }

    /// Under a model checker, panics if the group was freed.
    #[inline]
    pub fn assert_alive(&self) {
        self.liveness.assert_alive("group");
    }

    /// The group's per-CPU rstat area (`objects/rstat.rs`).
    ///
    /// # Panics
    /// If the scheduler keeps no rstat lists (`StatsPolicy::RSTAT_LISTS` is false).
    pub(crate) fn iostat(&self) -> &GroupIostat {
        self.liveness.assert_alive("group");
        &self.rstat.as_ref().expect("the policy keeps rstat lists").0
    }

    /// The group's parent (`None` for the root). Whether it may be dereferenced depends on what
    /// the caller holds (see [`GroupPtr::get`]): a child pins its parent (kernel-map.md D22).
    pub(crate) fn parent(&self) -> Option<GroupPtr> {
        self.liveness.assert_alive("group");
        self.parent
    }

    /// A number that names this group for its whole life (never reused).
    pub fn serial(&self) -> u64 {
        self.liveness.assert_alive("group");
        self.serial
    }

    /// Takes a reference.
    pub(crate) fn get(&self) {
        self.liveness.assert_alive("group");
        if fault::active(Fault::PlainGroupRefcount) {
            fault::plain_add(&self.refs, 1);
            return;
        }
        // Relaxed: taking a reference needs the object alive already (the caller holds one).
        self.refs.fetch_add(1, Ordering::Relaxed);
    }

    /// Drops a reference; `Some` when it was the last and the caller now owns the group.
    ///
    /// This is an atomic read-modify-write. The kernel's `bfqg->ref` was a plain `int` until 2023
    /// (kernel-bfq.md, "Real bugs": the non-atomic reference count): decremented from two contexts,
    /// it lost updates.
    pub(crate) fn put(this: GroupPtr) -> Option<RetiredGroup> {
        // SAFETY: the caller holds a reference (`this`), so the group is allocated.
        let group = unsafe { this.get(&this) };
        group.liveness.assert_alive("group");
        // AcqRel: the last putter must see every access made under the other references
        // (Acquire) before it frees; the others publish theirs (Release).
        let before = if fault::active(Fault::PlainGroupRefcount) {
            fault::plain_sub(&group.refs, 1)
        } else {
            group.refs.fetch_sub(1, Ordering::AcqRel)
        };
        if before == 1 {
            group.census.awaiting_reclamation.fetch_add(1, Ordering::Relaxed);
            Some(RetiredGroup(this))
        } else {
            None
        }
    }
}

/// A raw pointer to a [`GroupShared`]. Copying it does not take a reference.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct GroupPtr(NonNull<GroupShared>);

// SAFETY: a GroupPtr is only an address; every dereference is an `unsafe` call whose caller
// argues the group is alive (a reference held, a lock, or an epoch pin), and the pointee is Sync
// (atomics and per-CPU counters).
unsafe impl Send for GroupPtr {}
// SAFETY: as above.
unsafe impl Sync for GroupPtr {}

impl GroupPtr {
    /// The group, for as long as `witness` is borrowed.
    ///
    /// The witness is whatever keeps the group allocated: a reference the caller holds on it (the
    /// online group's record, a queue that points at it, a [`RetiredGroup`]), the scheduler lock's
    /// guard or a borrow of the state it protects, or a protection's witness (an epoch pin, the
    /// queue lock's guard). As crossbeam's `Atomic::load(&'g Guard) -> Shared<'g>`, the returned
    /// reference borrows the witness, so it cannot outlive it: using it after the guard is
    /// dropped does not compile.
    ///
    /// ```
    /// use schedlab_core::{GroupPtr, GroupShared};
    /// fn serial_under_lock(group: GroupPtr, lock: &std::sync::Mutex<()>) -> u64 {
    ///     let guard = lock.lock().unwrap();
    ///     // SAFETY: (for the example) the lock keeps the group allocated while it is held.
    ///     let shared: &GroupShared = unsafe { group.get(&guard) };
    ///     shared.serial()
    /// }
    /// ```
    ///
    /// ```compile_fail,E0505
    /// use schedlab_core::{GroupPtr, GroupShared};
    /// fn serial_after_unlock(group: GroupPtr, lock: &std::sync::Mutex<()>) -> u64 {
    ///     let guard = lock.lock().unwrap();
    ///     // SAFETY: (for the example) the lock keeps the group allocated while it is held.
    ///     let shared: &GroupShared = unsafe { group.get(&guard) };
    ///     drop(guard); // error: `guard` is still borrowed by `shared`
    ///     shared.serial()
    /// }
    /// ```
    ///
    /// # Safety
    /// `witness` keeps the group allocated for as long as it is borrowed (notes/invariants.md I1:
    /// a reference held, the scheduler lock, or the protection the stats policy's retire path
    /// respects). The compiler checks that the result does not outlive the borrow; that the
    /// witness really protects this group is the caller's argument, in its `SAFETY` comment.
    #[inline]
    #[allow(clippy::needless_lifetimes)] // the named lifetime is the contract: the result borrows the witness
    pub unsafe fn get<'w, W: ?Sized>(self, _witness: &'w W) -> &'w GroupShared {
        // SAFETY: the caller guarantees the allocation is live while the witness is borrowed,
        // which is all of 'w.
        unsafe { self.0.as_ref() }
    }

    /// The address, for identity comparisons that never dereference.
    pub fn addr(self) -> usize {
        self.0.as_ptr() as usize
    }
}

/// A group whose last reference has gone: owning this is owning the group. The stats policy
/// decides when to call [`RetiredGroup::free`] (at once, or after a grace period).
#[derive(Debug)]
pub struct RetiredGroup(GroupPtr);

// SAFETY: the value owns the group exclusively (the reference count reached zero and nothing can
// take a new reference: a group is only reachable through references), so moving it to another
// thread, e.g. an epoch collector, moves that ownership.
unsafe impl Send for RetiredGroup {}

impl RetiredGroup {
    /// The group's identity (never dereferenced through this).
    pub fn addr(&self) -> usize {
        self.0.addr()
    }

    /// Whether the scheduler this group belonged to is gone. Then no path, and so no deferred
    /// update, can reach the group any more (I4): a policy may free it without a grace period.
    pub fn scheduler_gone(&self) -> bool {
        self.group().census.torn_down()
    }

    /// The group, for a last look before it is freed (its policy state, its statistics).
    pub fn group(&self) -> &GroupShared {
        // SAFETY: owning a RetiredGroup is owning the group: it stays allocated while `self` lives.
        unsafe { self.0.get(self) }
    }

    /// Frees the group: moves whatever its statistics gathered since it went offline into its
    /// parent (the kernel's release-path drain, kernel-bfq.md, "Group lifetime"), drops its
    /// reference on the parent (handing the parent to `retire_parent` if that was the last), and
    /// frees the memory.
    ///
    /// # Safety
    /// No deferred update may still reach the group: the caller's protection guarantees it (a
    /// grace period has ended since the retirement, or the queue lock that every deferred update
    /// takes is held, or nothing is deferred, or the scheduler is gone: protection.rs, I1, I4).
    pub unsafe fn free(self, retire_parent: &mut dyn FnMut(RetiredGroup)) {
        // SAFETY: we own the last reference (RetiredGroup's invariant): nothing else can reach the
        // group any more, and it was allocated by `GroupShared::allocate` as a Box.
        let group = unsafe { Box::from_raw(self.0 .0.as_ptr()) };
        group.liveness.assert_alive("group");
        // The release-path drain (rstat.rs, the 2023 fix): no update can reach the group any more,
        // so after this flush no pending entry names it, and the flush lock orders this after any
        // flush still reading it.
        if let Some((_, lists)) = &group.rstat {
            if !fault::active(Fault::ReleaseWithoutFlush) {
                lists.flush();
            }
        }
        // Freed from here on: an update that reaches the group while its residue is moved to the
        // parent is caught as a use after free (under a checker), not silently lost.
        group.liveness.poison();
        if let Some(parent_ptr) = group.parent {
            // SAFETY: a group (`group`, the witness) holds a reference on its parent until this
            // point.
            let parent = unsafe { parent_ptr.get(&group) };
            if !fault::active(Fault::ReleaseWithoutFlush) {
                group.stats.transfer_into(parent.stats());
            }
            // (With the fault the child took no reference on its parent, so it drops none.)
            if !fault::active(Fault::ChildDoesNotPinParent) {
                if let Some(parent_retired) = GroupShared::put(parent_ptr) {
                    retire_parent(parent_retired);
                }
            }
        }
        tracing::debug!(name: "group freed", target: crate::trace::GROUPS, group = group.serial, "group freed");
        group.census.awaiting_reclamation.fetch_sub(1, Ordering::Relaxed);
        group.census.groups.fetch_sub(1, Ordering::Release);
        reclaim(group);
    }

    /// Frees the group now, and its ancestors whose last reference this was.
    ///
    /// # Safety
    /// As for [`RetiredGroup::free`], for the group and for each ancestor freed with it.
    pub unsafe fn free_now(self) {
        // SAFETY: the caller's guarantee covers the group and the ancestors it releases.
        unsafe { self.free(&mut |parent| parent.free_now()) }
    }
}

/// A queue's shared part.
pub struct QueueShared {
    liveness: Liveness,
    group: AtomicPtr<GroupShared>,
    wait_request: AtomicBool,
    /// Requests of this queue on an insertion list (`insert/lists.rs`): each pins the queue until
    /// the splice that inserts it has applied its statistics.
    pending_inserts: AtomicU32,
    pid: u64,
    census: OracleArc<Census>,
}

impl QueueShared {
    pub(crate) fn allocate(group: GroupPtr, pid: u64, census: &OracleArc<Census>) -> QueueRef {
        census.queues.fetch_add(1, Ordering::Relaxed);
        let queue = Box::new(QueueShared {
            liveness: Liveness::new(),
            group: AtomicPtr::new(group.0.as_ptr()),
            wait_request: AtomicBool::new(false),
            pending_inserts: AtomicU32::new(0),
            pid,
            census: census.clone(),
        });
        QueueRef(NonNull::from(Box::leak(queue)))
    }

    /// The queue's current group. Whether the group may be dereferenced depends on what the
    /// caller holds (see [`GroupPtr::get`]).
    #[inline]
    pub fn current_group(&self) -> GroupPtr {
        self.liveness.assert_alive("queue");
        // Acquire pairs with the Release store in `set_group`: a deferred update that sees the
        // new group also sees it initialised and referenced.
        let raw = self.group.load(Ordering::Acquire);
        GroupPtr(NonNull::new(raw).expect("a queue always has a group"))
    }

    /// Reparents the queue (scheduler lock held, plus the queue lock when the policy says so).
    pub(crate) fn set_group(&self, group: GroupPtr) {
        self.liveness.assert_alive("queue");
        // Release: the group's initialisation (by whichever thread created it) and the reference
        // taken for this queue are ordered before a deferred update that loads the pointer.
        let relaxed = fault::active(Fault::GroupPointerRelaxed);
        let publish = if relaxed { Ordering::Relaxed } else { Ordering::Release };
        self.group.store(group.0.as_ptr(), publish);
    }

    /// Whether the queue is idling, waiting for its next request (`bfq_bfqq_wait_request`).
    /// A mirror of the locked flag, readable by policy hooks.
    pub fn wait_request(&self) -> bool {
        self.liveness.assert_alive("queue");
        self.wait_request.load(Ordering::Relaxed)
    }

    pub(crate) fn set_wait_request(&self, on: bool) {
        self.liveness.assert_alive("queue");
        self.wait_request.store(on, Ordering::Relaxed);
    }

    /// A request of this queue was listed (its process holds a reference meanwhile).
    pub(crate) fn add_pending(&self) {
        self.liveness.assert_alive("queue");
        // Relaxed: the insertion lock publishes it to the splicer; the scheduler lock orders it
        // before any exit of the process that listed it.
        self.pending_inserts.fetch_add(1, Ordering::Relaxed);
    }

    /// A listed request was spliced and its statistics applied; returns how many remain.
    pub(crate) fn release_pending(&self) -> u32 {
        self.liveness.assert_alive("queue");
        self.pending_inserts.fetch_sub(1, Ordering::Relaxed) - 1
    }

    /// Listed requests of this queue.
    pub(crate) fn pending(&self) -> u32 {
        self.liveness.assert_alive("queue");
        self.pending_inserts.load(Ordering::Relaxed)
    }

    /// The process the queue belongs to.
    pub fn pid(&self) -> u64 {
        self.liveness.assert_alive("queue");
        self.pid
    }
}

/// A raw pointer to a [`QueueShared`]. Copying it does not take a reference.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct QueueRef(NonNull<QueueShared>);

// SAFETY: only an address; dereferences are `unsafe` and argued at each site (the queue is pinned
// by a request, by its process, or by the scheduler lock), and the pointee is Sync.
unsafe impl Send for QueueRef {}
// SAFETY: as above.
unsafe impl Sync for QueueRef {}

impl QueueRef {
    /// # Safety
    /// The queue must stay allocated for `'a` (notes/invariants.md I1a: pinned by an in-flight
    /// request, by the calling process, or by the scheduler lock being held).
    #[inline]
    pub unsafe fn get<'a>(self) -> &'a QueueShared {
        // SAFETY: the caller guarantees the allocation is live for 'a.
        unsafe { self.0.as_ref() }
    }

    /// The address, for identity comparisons that never dereference.
    pub fn addr(self) -> usize {
        self.0.as_ptr() as usize
    }

    pub(crate) fn as_ptr(self) -> *mut QueueShared {
        self.0.as_ptr()
    }

    /// The queue at `ptr`, if not null (never dereferenced here).
    pub(crate) fn from_ptr(ptr: *mut QueueShared) -> Option<QueueRef> {
        NonNull::new(ptr).map(QueueRef)
    }

    /// Frees the queue.
    ///
    /// # Safety
    /// Its reference count (kept in the locked state) reached zero under the scheduler lock, and
    /// no deferred update can still hold it (I1a).
    pub(crate) unsafe fn free(self) {
        // SAFETY: allocated by `QueueShared::allocate` as a Box; the caller owns it now.
        let queue = unsafe { Box::from_raw(self.0.as_ptr()) };
        queue.liveness.assert_alive("queue");
        queue.liveness.poison();
        queue.census.queues.fetch_sub(1, Ordering::Release);
        reclaim(queue);
    }
}
