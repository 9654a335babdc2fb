//! Per-CPU statistics flushed on read: blk-cgroup's "rstat" design for io_service_bytes and
//! io_serviced (Linux 5.5 for the lazy flush, 6.2 for the per-CPU lock-free lists of pending
//! groups, 2023 for the release-path drain; kernel-bfq.md, "Group lifetime").
//!
//! An update adds to the group's own slot for the calling CPU (a plain per-CPU add, no lock, no
//! sum) and, the first time the slot has something unflushed, pushes the group on that CPU's
//! lock-free list of pending groups. A *flush* (when someone reads the statistics, and when a
//! group is released) takes every list under one global lock (`blkg_stat_lock`), and for every
//! pending group moves the slot's deltas into the group's statistics proper.
//!
//! | step | update (any thread, in the deferred window) | flush (global lock held) |
//! | --- | --- | --- |
//! | 1 | `delta.fetch_add` in this CPU's slot | take the whole list (`swap(null)`) |
//! | 2 | `queued.swap(true)`: was it already pending? | for each group: read its `next`, then `queued.swap(false)` |
//! | 3 | if not: push the group on this CPU's list | take the slot's deltas (`swap(0)`) and add them to the group's statistics |
//!
//! Nothing is lost: both sides change `queued` with read-modify-writes, which read the latest
//! value, so either the flush's `swap(false)` reads the update's `swap(true)` (and, acquiring it,
//! sees the update's delta in step 3), or the update's swap comes later, reads `false`, and
//! queues the group again for the next flush. (With a plain store and load of `queued` this is
//! the store-buffering pattern, which needs a full barrier: the kernel has one.)
//!
//! **Lifetime** (the 6.2 leak and its 2023 fix). A pending entry holds *no reference* on its
//! group. Instead every group of a scheduler that uses these lists is drained when it is released
//! ([`crate::RetiredGroup`]'s free calls [`RstatLists::flush`] first, after its grace period under
//! the `GracePeriod` protection): no update can reach the group any more by then, so no entry can
//! be added after the drain, and the global lock orders the drain after any flush that took the
//! group off a list and is still reading it. A flush therefore only ever meets groups that have
//! not been drained, hence not freed. Model checks: `pending_update_vs_release`,
//! `flush_vs_removal` (verify/src/scenarios.rs); the faults `ReleaseWithoutFlush` and
//! `FlushWithoutGlobalLock` are rejected.

use super::GroupShared;
use crate::fault::{self, Fault};
use crate::lockstat::LockClass;
use crate::stats::{Op, RWSTAT_NR};
use crate::sync::{cpu_slot, AtomicBool, AtomicI64, AtomicPtr, Lock, LockKind, Ordering};
use crossbeam_utils::CachePadded;

/// Request types of an rwstat: READ, WRITE, SYNC, ASYNC (as `stats.rs`).
const READ: usize = 0;
const WRITE: usize = 1;
const SYNC: usize = 2;
const ASYNC: usize = 3;

/// One CPU's unflushed io_service_bytes / io_serviced of a group, and its pending-list link.
struct SlotIostat {
    bytes: [AtomicI64; RWSTAT_NR],
    ios: [AtomicI64; RWSTAT_NR],
    /// On this CPU's pending list (`bisc->lqueued`).
    queued: AtomicBool,
    /// The next pending group on this CPU's list (`bisc->lnode`).
    next: AtomicPtr<GroupShared>,
}

impl SlotIostat {
    fn new() -> Self {
        SlotIostat {
            bytes: std::array::from_fn(|_| AtomicI64::new(0)),
            ios: std::array::from_fn(|_| AtomicI64::new(0)),
            queued: AtomicBool::new(false),
            next: AtomicPtr::new(std::ptr::null_mut()),
        }
    }
}

/// A group's per-CPU rstat area (`blkg->iostat_cpu`).
pub struct GroupIostat {
    slots: Box<[CachePadded<SlotIostat>]>,
}

impl GroupIostat {
    pub(crate) fn new(slots: usize) -> Self {
        GroupIostat { slots: (0..slots).map(|_| CachePadded::new(SlotIostat::new())).collect() }
    }
}

/// The per-CPU lists of pending groups of one scheduler, and the global flush lock.
pub struct RstatLists {
    heads: Box<[CachePadded<AtomicPtr<GroupShared>>]>,
    flush_lock: Lock<()>,
    /// A flush is in progress (the fault `ReaderSkipsBusyFlush` only: memcg's
    /// `stats_flush_ongoing`).
    #[cfg(feature = "fault-injection")]
    flush_ongoing: AtomicBool,
}

impl RstatLists {
    pub(crate) fn new(slots: usize) -> Self {
        RstatLists {
            heads: (0..slots)
                .map(|_| CachePadded::new(AtomicPtr::new(std::ptr::null_mut())))
                .collect(),
            flush_lock: Lock::named(LockKind::FairSpin, LockClass::register("rstat-flush"), ()),
            #[cfg(feature = "fault-injection")]
            flush_ongoing: AtomicBool::new(false),
        }
    }

    /// `blk_cgroup_bio_start`: adds one dispatched request of `bytes` to `group`'s slot for this
    /// CPU and queues the group for the next flush if the slot had nothing pending.
    ///
    /// The caller's protection keeps `group` allocated for the call (the deferred update's
    /// witness); the entry it may leave behind needs nothing more (see the module documentation).
    pub fn add(&self, group: &GroupShared, op: Op, bytes: u64) {
        let area = group.iostat();
        let slot = cpu_slot() % area.slots.len();
        let s = &area.slots[slot];
        let dir = if op.write { WRITE } else { READ }; // not a branch point: an index
        let sync = if op.sync { SYNC } else { ASYNC }; // not a branch point: an index
                                                       // Relaxed: the swap below publishes them (Release) to the flush that acquires it.
        s.bytes[dir].fetch_add(bytes as i64, Ordering::Relaxed);
        s.bytes[sync].fetch_add(bytes as i64, Ordering::Relaxed);
        s.ios[dir].fetch_add(1, Ordering::Relaxed);
        s.ios[sync].fetch_add(1, Ordering::Relaxed);
        // AcqRel: Release publishes the adds above; a read-modify-write reads the latest value,
        // which is what makes the flag protocol lossless (module documentation).
        if !s.queued.swap(true, Ordering::AcqRel) {
            branch!("rstat.add-queues-group");
            self.push(slot, group);
        } else {
            branch!("rstat.add-already-queued");
        }
    }

    /// `llist_add`: pushes `group` on `slot`'s list (lock-free).
    fn push(&self, slot: usize, group: &GroupShared) {
        let node = group as *const GroupShared as *mut GroupShared;
        let head = &self.heads[slot];
        let mut current = head.load(Ordering::Relaxed);
        loop {
            group.iostat().slots[slot].next.store(current, Ordering::Relaxed);
            // Release: a flush that takes the list sees the `next` written above.
            match head.compare_exchange_weak(current, node, Ordering::Release, Ordering::Relaxed) {
                Ok(_) => {
                    branch!("rstat.push-done");
                    return;
                }
                Err(now) => {
                    branch!("rstat.push-retries");
                    current = now;
                }
            }
        }
    }

    /// The flush a statistics reader makes before it reads (`blkcg_print_stat`): the same as
    /// [`RstatLists::flush`]. It waits for a flush in progress (on the global lock), so that
    /// whatever was added before the read is in the statistics when it returns: a reader ordered
    /// after an update sees it (verify's `reads_against_their_past`).
    pub fn flush_for_read(&self) {
        #[cfg(feature = "fault-injection")]
        {
            if fault::active(Fault::ReaderSkipsBusyFlush) {
                self.fault_flush_unless_busy(true);
                return;
            }
        }
        self.flush();
    }

    /// The fault `ReaderSkipsBusyFlush`: every flush marks itself ongoing, and a reader that finds
    /// one ongoing returns at once, without the deltas the other flusher has taken off the lists
    /// and not yet added.
    #[cfg(feature = "fault-injection")]
    #[cold]
    fn fault_flush_unless_busy(&self, reader: bool) {
        let first = !self.flush_ongoing.swap(true, Ordering::AcqRel);
        if !first && reader {
            return;
        }
        self.flush_locked();
        if first {
            self.flush_ongoing.store(false, Ordering::Release);
        }
    }

    /// `blkcg_rstat_flush`: moves every pending delta into its group's statistics.
    pub fn flush(&self) {
        #[cfg(feature = "fault-injection")]
        {
            if fault::active(Fault::ReaderSkipsBusyFlush) {
                self.fault_flush_unless_busy(false);
                return;
            }
        }
        self.flush_locked();
    }

    fn flush_locked(&self) {
        let _global =
            (!fault::active(Fault::FlushWithoutGlobalLock)).then(|| self.flush_lock.lock());
        for slot in 0..self.heads.len() {
            // Acquire pairs with the Release of `push`: the `next` links are visible.
            let mut node = self.heads[slot].swap(std::ptr::null_mut(), Ordering::Acquire);
            if node.is_null() {
                branch!("rstat.flush-finds-nothing");
            }
            while let Some(group) = std::ptr::NonNull::new(node) {
                branch!("rstat.flush-takes-entry");
                // SAFETY: an entry on a list belongs to a group that has not been drained, and a
                // group is drained (this function, under the global lock, which we hold) before
                // it is freed; the group took this entry off its list only by our swap above, so
                // its drain cannot have passed this point (module documentation, "Lifetime").
                let group = unsafe { group.as_ref() };
                let s = &group.iostat().slots[slot];
                // Read the link before clearing `queued`: once cleared, an update may push the
                // group again and overwrite it.
                node = s.next.load(Ordering::Relaxed);
                // AcqRel: acquires the adds of every update whose `swap(true)` it reads.
                s.queued.swap(false, Ordering::AcqRel);
                let bytes: [i64; RWSTAT_NR] =
                    std::array::from_fn(|k| s.bytes[k].swap(0, Ordering::Relaxed));
                let ios: [i64; RWSTAT_NR] =
                    std::array::from_fn(|k| s.ios[k].swap(0, Ordering::Relaxed));
                group.stats().add_legacy_deltas(&bytes, &ios);
            }
        }
    }
}

#[cfg(all(test, not(any(loom, shuttle))))]
mod tests {
    use super::*;
    use crate::sync::OracleArc;

    /// Many threads (more than slots squared: every thread is a new CPU slot number) add to one
    /// group through its per-CPU slots; a read flushes; nothing is lost and every slot index stays
    /// in range.
    #[test]
    fn adds_from_many_cpu_slots_are_flushed_whole() {
        let lists = OracleArc::new(RstatLists::new(4));
        let census = OracleArc::new(super::super::Census::default());
        let group =
            super::super::GroupShared::allocate(None, 4, 1, &census, Box::new(()), Some(&lists));
        // SAFETY: the group was just allocated and is never freed in this test (leaked): any
        // witness will do, the pointer itself.
        let g = unsafe { group.get(&group) };
        let threads: Vec<_> = (0..40)
            .map(|i| {
                let lists = lists.clone();
                let g = group;
                std::thread::spawn(move || {
                    // SAFETY: as above.
                    let g = unsafe { g.get(&g) };
                    let op = if i % 2 == 0 { Op::READ_SYNC } else { Op::WRITE_SYNC };
                    lists.add(g, op, 4096);
                    if i % 3 == 0 {
                        lists.flush();
                    }
                })
            })
            .collect();
        for t in threads {
            t.join().unwrap();
        }
        lists.flush();
        let s = g.stats().snapshot();
        assert_eq!(s.io_serviced[0] + s.io_serviced[1], 40, "{s:?}");
        assert_eq!(s.io_service_bytes[0] + s.io_service_bytes[1], 40 * 4096, "{s:?}");
    }
}
