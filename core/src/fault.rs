//! Named fault-injection switches: bugs from the kernel's history, re-created in the core so that
//! the model checks can show they would catch them (notes/verify.md, "Faults in the core").
//!
//! Compiled in only with the cargo feature `fault-injection` (off by default; the model-checking
//! builds of `schedlab-verify` turn it on). Without it [`active`] is the constant `false` and every
//! fault branch is dead code that the compiler removes: no release build contains them.
//!
//! A switch is process-wide (a plain `std` atomic, an oracle outside what the checkers explore):
//! each model check runs in a process of its own, turns on at most one fault, and runs.
//!
//! | fault | what the core then does wrong | the history it mirrors |
//! | --- | --- | --- |
//! | [`Fault::IdleTimerTouchesBeforeCheck`] | the idle-slice timer clears the `wait_request` flag of the queue it read without the lock *before* checking, under the lock, that the queue is still in service | BFQ, 2020: "block, bfq: fix use-after-free in bfq_idle_slice_timer" moved `bfq_clear_bfqq_wait_request` after the `bfqq != bfqd->in_service_queue` check |
//! | [`Fault::ExpireWithoutOwnReference`] | a process move (or a group going offline) expires the in-service queue without holding a reference of its own, then goes on using the queue that the expiration may have freed | BFQ, 2019: "block, bfq: fix use after free in bfq_bfqq_expire" (`__bfq_bfqq_expire` may free the in-service queue; nothing after it may touch the queue) |
//! | [`Fault::GroupHandleWithoutGeneration`] | a group handle is checked by its slot alone, so a stale handle reaches a group created later in the same slot | CFQ, 2011: "cfq-iosched: do not leak ioc_data across iosched switches" (a cached pointer matched a new object allocated at the same address) |
//! | [`Fault::PlainGroupRefcount`] | the group reference count is changed by a plain load and store, from the scheduler lock and from a grace period's free that holds no lock | BFQ's `int ref` until 2022–2023 (kernel-bfq.md, "Real bugs": the non-atomic reference count) |
//! | [`Fault::OfflineMovesOnlyBusyQueues`] | going offline moves only the group's busy queues (on a service tree or in service); idle queues keep pointing at the offline group | BFQ's `bfq_reparent_active_queues` (kernel-map.md D20), whose idle queues kept a reference to the offline group and were behind the 2021–2022 use-after-free fixes of moved and offline groups |
//! | [`Fault::ReleaseWithoutFlush`] | freeing an offline group drops whatever its statistics gathered after it went offline instead of flushing it into the parent | blk-cgroup, 2023: "blk-cgroup: Flush stats before releasing blkcg_gq" |
//! | [`Fault::MergeWithoutIoRemove`] | a queued request absorbed by a merge leaves the scheduler without `io_remove` | seed patch 2/4 (2017): "block, bfq: add missing invocations of bfqg_stats_update_io_add/remove" |
//! | [`Fault::SplicePinDroppedEarly`] | a dispatch that splices insertion lists drops each listed request's pin on its queue inside the splice, before the splice's deferred statistics (which name that queue) are applied | BFQ 2017–2022 (kernel-bfq.md, "Real bugs": the captured pointer): a queue used by a deferred update after the critical section that could free it; here on the 2024 lists path |
//! | [`Fault::DeferLockOnlyUpdates`] | the scheduler lets a variant defer the lock-only updates too (`dequeue`, `set_start_idle_time`, `time`: `StatKind::deferrable` is false), so an expiration's statistics name a queue that the same critical section freed | BFQ 2017–2022 (kernel-bfq.md, "Real bugs": the captured pointer): the 4.15 deferral read a queue after the section that dropped its last reference; fixed by keeping those updates under the lock |
//! | [`Fault::FlushWithoutGlobalLock`] | an rstat flush walks the pending lists without the global flush lock, so a group's release-path drain can finish, and the group be freed, while another flush still reads it | blk-cgroup, 2023: flushes serialised under one global lock (`blkg_stat_lock`) with the release-path drain |
//! | [`Fault::TicketFirstAttemptRelaxed`] | the ticket lock's first attempt admits its ticket with a Relaxed load of `serving` (no Acquire): the new holder may read the previous hold's data unordered | the ordering bugs GenMC and VSync found in deployed spinlocks (qspinlock's barriers); x86 hides them |
//! | [`Fault::TicketWaitRelaxed`] | a queued ticket is admitted by a Relaxed load of `serving` in the waiting loop | the same class, on the slow path |
//! | [`Fault::TicketTryRelaxed`] | `try_lock` reads `serving` Relaxed, so nothing orders the previous hold before the new one (this file's own `try_lock` until loom's lock models found it) | the same class, on the try path |
//! | [`Fault::TicketReleaseRelaxed`] | the unlock stores `serving` Relaxed (no Release): the hold is not published to the next holder | the same class, on the release |
//! | [`Fault::OwnerAfterRelease`] | the measured wrapper writes its owner word after the raw unlock instead of before it: the next holder may read the word before the write and miscount an owner change | a lock statistic updated outside the hold it describes |
//! | [`Fault::OfflineStatsToRoot`] | a group going offline hands its statistics to the root group instead of its parent, while its queues (and its ledger) go to the parent: every count is conserved (I2), but the service a removed child issued is charged to the root, not to the ancestor the rules name (I7) | BFQ 4.12–4.15: `bfq_reparent_active_entities` reparented to `bfqd->root_group` (kernel-map.md D20) |
//! | [`Fault::StatsReadOutsideLock`] | the statistics reader (`Scheduler::group_stats`) looks the group up under the scheduler lock, releases the lock, and then reads the group's counters: a removal between the two can free the group under the reader | a reader that keeps an object past the lock that protected it (the blkg lookups that had to move under `rcu_read_lock`/`queue_lock`) |
//! | [`Fault::DepthLimitWalksWithoutLock`] | the depth limit (`Process::limit_depth`) walks its queue's group and the group's ancestors through the shared objects before it takes the scheduler lock, instead of on the scheduler's own tree under it: a removal between reading the queue's group and reading its parent can free the group under the walk | `bfqq_request_over_limit` (5.18) walks `entity->parent` up the hierarchy, which group removal frees; it takes `bfqd->lock` for the walk, and a walk outside it is the class of the 2021–2022 use-after-free fixes of moved and offline groups |
//! | [`Fault::ChildDoesNotPinParent`] | a child group holds no reference on its parent (kernel-map.md D22 undone): a parent retired by one thread can be freed after its own grace period while its child, retired by another thread, still waits for its own, whose free then moves the child's residue into the freed parent | the bfq group did not count a reference on its parent; the blkg's pin on its parent blkg is what orders the frees |
//! | [`Fault::MoveKeepsStatsGroup`] | a process move changes the scheduler's view of the queue's group (member list, entity parent, references, the I7 ledger) but not the group pointer its statistics follow: the moved queue's later service is counted in the group it left, while the scheduler's own ledger names the new one | the class of "bfq: Update cgroup information before merging bio" (2022): a moved process's I/O charged through stale cgroup information |
//! | [`Fault::CreateSplitsLookup`] | group creation looks the parent up under one hold of the scheduler lock and takes the child's reference on it after releasing the lock (then creates under a second hold): a removal between the two holds can free the parent under the creator | blk-cgroup's `blkg_create` against a blkcg going offline (the parent looked up, then pinned too late: the `css_tryget_online` and `blkg->online` checks) |
//! | [`Fault::EmptyDispatchReturnsEarly`] | a dispatch that finds nothing to dispatch returns right after the unlock, skipping what follows it on every path: the deferred statistics of what it spliced in from the insertion lists, and the release of their pins | an early return on an empty path that skips the cleanup of a path's common tail (the class of blk-mq's "dispatch found nothing, forgot to re-run/put" fixes); here the splice of an idling scheduler |
//! | [`Fault::AtHeadWithoutIoAdd`] | an at-head request (the priority dispatch list) enters the scheduler without `io_add`, while its dispatch still makes `io_remove`: `queued` goes negative in its group | seed patch 2/4 (2017): "block, bfq: add missing invocations of bfqg_stats_update_io_add/remove", whose first hunk accounts the requests of the priority list |
//! | [`Fault::ReaderSkipsBusyFlush`] | a statistics reader whose rstat flush finds another flush in progress returns without waiting for it: it reads the group before the other flusher has added the deltas it took, so a reader ordered after a dispatch may miss it | memcg's "skip the flush if one is ongoing" (`stats_flush_ongoing`, 2023), reverted by "mm: memcg: restore subtree stats flushing" (v6.8): readers saw stale statistics |
//! | [`Fault::GroupPointerRelaxed`] | a move (or a removal) stores the queue's new group pointer Relaxed instead of Release: a deferred update that loads it without a lock (`epoch`, `rstat`, `mainline`) may reach the group before its creation is visible to it, although the group was created and published by another thread | the rule `rcu_assign_pointer` encodes (a Release store before the readers' `rcu_dereference`): a cgroup migration publishing a task's new css (and a blkg created for it) to the lock-free readers of the I/O path |
//! | [`Fault::MergeChargedToAbsorbingGroup`] | a request that absorbed others is charged at dispatch (io_serviced, io_service_bytes and the I7 ledger) to the group it was made in, while that group is online, instead of its queue's group: after a move, the sectors issued in the new group that merged into it are charged to the group the process left, and the scheduler's ledger agrees | blk-mq merging bios into requests of another cgroup, each merged request charged to the absorbing request's blkg, until "block: don't merge across cgroups if blkcg is enabled" (2022) |
//!
//! The five lock faults weaken `sync::lock`'s orderings through `sync::weakened` (the facade cannot
//! name this module); they are checked by `verify/tests/loom_locks.rs` (loom only: shuttle treats
//! every atomic as SeqCst and cannot see them).
//!
//! With [`Fault::ReleaseWithoutFlush`] a released group also skips its rstat drain (`objects/rstat.rs`): a
//! pending entry is left on a list after its group is freed, as before the 2023 fix.

/// One fault (see the module documentation).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Fault {
    IdleTimerTouchesBeforeCheck,
    ExpireWithoutOwnReference,
    GroupHandleWithoutGeneration,
    PlainGroupRefcount,
    OfflineMovesOnlyBusyQueues,
    ReleaseWithoutFlush,
    MergeWithoutIoRemove,
    FlushWithoutGlobalLock,
    SplicePinDroppedEarly,
    DeferLockOnlyUpdates,
    TicketFirstAttemptRelaxed,
    TicketWaitRelaxed,
    TicketTryRelaxed,
    TicketReleaseRelaxed,
    OwnerAfterRelease,
    OfflineStatsToRoot,
    StatsReadOutsideLock,
    ChildDoesNotPinParent,
    DepthLimitWalksWithoutLock,
    MoveKeepsStatsGroup,
    CreateSplitsLookup,
    ReaderSkipsBusyFlush,
    EmptyDispatchReturnsEarly,
    AtHeadWithoutIoAdd,
    GroupPointerRelaxed,
    MergeChargedToAbsorbingGroup,
}

impl Fault {
    /// Every fault.
    pub const ALL: [Fault; 26] = [
        Fault::IdleTimerTouchesBeforeCheck,
        Fault::ExpireWithoutOwnReference,
        Fault::GroupHandleWithoutGeneration,
        Fault::PlainGroupRefcount,
        Fault::OfflineMovesOnlyBusyQueues,
        Fault::ReleaseWithoutFlush,
        Fault::MergeWithoutIoRemove,
        Fault::FlushWithoutGlobalLock,
        Fault::SplicePinDroppedEarly,
        Fault::DeferLockOnlyUpdates,
        Fault::TicketFirstAttemptRelaxed,
        Fault::TicketWaitRelaxed,
        Fault::TicketTryRelaxed,
        Fault::TicketReleaseRelaxed,
        Fault::OwnerAfterRelease,
        Fault::OfflineStatsToRoot,
        Fault::StatsReadOutsideLock,
        Fault::ChildDoesNotPinParent,
        Fault::DepthLimitWalksWithoutLock,
        Fault::MoveKeepsStatsGroup,
        Fault::CreateSplitsLookup,
        Fault::ReaderSkipsBusyFlush,
        Fault::EmptyDispatchReturnsEarly,
        Fault::AtHeadWithoutIoAdd,
        Fault::GroupPointerRelaxed,
        Fault::MergeChargedToAbsorbingGroup,
    ];

    /// The switch's name.
    pub fn name(self) -> &'static str {
        match self {
            Fault::IdleTimerTouchesBeforeCheck => "idle-timer-touches-before-check",
            Fault::ExpireWithoutOwnReference => "expire-without-own-reference",
            Fault::GroupHandleWithoutGeneration => "group-handle-without-generation",
            Fault::PlainGroupRefcount => "plain-group-refcount",
            Fault::OfflineMovesOnlyBusyQueues => "offline-moves-only-busy-queues",
            Fault::ReleaseWithoutFlush => "release-without-flush",
            Fault::MergeWithoutIoRemove => "merge-without-io-remove",
            Fault::FlushWithoutGlobalLock => "flush-without-global-lock",
            Fault::SplicePinDroppedEarly => "splice-pin-dropped-early",
            Fault::DeferLockOnlyUpdates => "defer-lock-only-updates",
            Fault::TicketFirstAttemptRelaxed => "ticket-first-attempt-relaxed",
            Fault::TicketWaitRelaxed => "ticket-wait-relaxed",
            Fault::TicketTryRelaxed => "ticket-try-relaxed",
            Fault::TicketReleaseRelaxed => "ticket-release-relaxed",
            Fault::OwnerAfterRelease => "owner-after-release",
            Fault::OfflineStatsToRoot => "offline-stats-to-root",
            Fault::StatsReadOutsideLock => "stats-read-outside-lock",
            Fault::ChildDoesNotPinParent => "child-does-not-pin-parent",
            Fault::DepthLimitWalksWithoutLock => "depth-limit-walks-without-lock",
            Fault::MoveKeepsStatsGroup => "move-keeps-stats-group",
            Fault::CreateSplitsLookup => "create-splits-lookup",
            Fault::ReaderSkipsBusyFlush => "reader-skips-busy-flush",
            Fault::EmptyDispatchReturnsEarly => "empty-dispatch-returns-early",
            Fault::AtHeadWithoutIoAdd => "at-head-without-io-add",
            Fault::GroupPointerRelaxed => "group-pointer-relaxed",
            Fault::MergeChargedToAbsorbingGroup => "merge-charged-to-absorbing-group",
        }
    }

    /// The `sync::weakened` bits a lock fault sets (0 for the others).
    #[cfg(feature = "fault-injection")]
    fn weakened_bits(self) -> u32 {
        use crate::sync::weakened as w;
        match self {
            Fault::TicketFirstAttemptRelaxed => w::TICKET_FIRST_ATTEMPT_ACQUIRE,
            Fault::TicketWaitRelaxed => w::TICKET_WAIT_ACQUIRE,
            Fault::TicketTryRelaxed => w::TICKET_TRY_ACQUIRE,
            Fault::TicketReleaseRelaxed => w::TICKET_RELEASE,
            Fault::OwnerAfterRelease => w::OWNER_AFTER_RELEASE,
            _ => 0,
        }
    }

    fn bit(self) -> u32 {
        1 << (self as u32)
    }
}

/// `PlainGroupRefcount`: a read-modify-write as a plain load and store (a concurrent change
/// between them is lost). Returns the value before.
pub(crate) fn plain_add(count: &crate::sync::AtomicUsize, delta: usize) -> usize {
    let old = count.load(crate::sync::Ordering::Relaxed);
    count.store(old + delta, crate::sync::Ordering::Relaxed);
    old
}

/// As [`plain_add`], subtracting.
pub(crate) fn plain_sub(count: &crate::sync::AtomicUsize, delta: usize) -> usize {
    let old = count.load(crate::sync::Ordering::Acquire);
    count.store(old - delta, crate::sync::Ordering::Release);
    old
}

#[cfg(feature = "fault-injection")]
static ACTIVE: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);

/// Turns `fault` on for the rest of the process.
#[cfg(feature = "fault-injection")]
pub fn inject(fault: Fault) {
    ACTIVE.fetch_or(fault.bit(), std::sync::atomic::Ordering::Relaxed);
    crate::sync::weakened::set(fault.weakened_bits());
}

/// Turns every fault off.
#[cfg(feature = "fault-injection")]
pub fn clear() {
    ACTIVE.store(0, std::sync::atomic::Ordering::Relaxed);
    crate::sync::weakened::clear();
}

/// Whether `fault` is on (always `false` without the `fault-injection` feature).
#[inline(always)]
pub fn active(fault: Fault) -> bool {
    #[cfg(feature = "fault-injection")]
    {
        ACTIVE.load(std::sync::atomic::Ordering::Relaxed) & fault.bit() != 0
    }
    #[cfg(not(feature = "fault-injection"))]
    {
        let _ = fault.bit();
        false
    }
}
