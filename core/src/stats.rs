//! Group statistics with the kernel's structure and cost (kernel-bfq.md, "The statistics and why
//! they cost so much").
//!
//! Every counter is a per-CPU counter: an add touches only the calling thread's slot (one relaxed
//! `fetch_add` on a line that thread owns); a read takes the counter's own spinlock and walks every
//! online slot, as `percpu_counter_sum` does with one `find_next_bit` per CPU. The slots of one
//! group are laid out the way per-CPU areas are: slot *i* holds every counter of the group for
//! CPU *i*, cache-padded, so adds from different CPUs never share a line and a sum pulls one line
//! per CPU into the reader's cache.
//!
//! An "rwstat" is four such counters (READ, WRITE, SYNC, ASYNC); its total reads all four (four
//! locked sums) and returns READ + WRITE, like `blkg_rwstat_total`. `avg_queue_size` and
//! `set_start_empty_time` each take one total of `queued`: that is where the cost concentrates.
//!
//! The functions below are named after the kernel functions they mirror; which of them a path
//! calls, and under which lock, is decided by the scheduler and the stats policy, not here.

use crate::lockstat::LockClass;
use crate::sync::{cpu_slot, AtomicI64, AtomicU32, AtomicU64, Lock, LockKind, Ordering};
use crossbeam_utils::CachePadded;
use serde::Serialize;

/// Request type bits used by the rwstats.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
pub struct Op {
    pub write: bool,
    pub sync: bool,
}

impl Op {
    pub const READ_SYNC: Op = Op { write: false, sync: true };
    pub const WRITE_ASYNC: Op = Op { write: true, sync: false };
    pub const WRITE_SYNC: Op = Op { write: true, sync: true };

    /// Whether two requests may be merged (same direction and synchronicity).
    pub fn merge_compatible(self, other: Op) -> bool {
        self == other
    }
}

const RW_READ: usize = 0;
const RW_WRITE: usize = 1;
const RW_SYNC: usize = 2;
const RW_ASYNC: usize = 3;
/// Counters per rwstat (4.15: READ, WRITE, SYNC, ASYNC).
pub const RWSTAT_NR: usize = 4;

/// The rwstats of a group.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(usize)]
pub enum RwStat {
    /// Requests in the scheduler (debug).
    Queued = 0,
    /// Requests merged into another (debug).
    Merged = 1,
    /// Device time of completed requests, ns (debug).
    ServiceTime = 2,
    /// Time requests waited in the scheduler, ns (debug).
    WaitTime = 3,
    /// Bytes dispatched (kept with debug off: `io_service_bytes`).
    ServiceBytes = 4,
    /// Requests dispatched (kept with debug off: `io_serviced`).
    Serviced = 5,
}

const NR_RWSTATS: usize = 6;

/// The plain counters of a group (all debug).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(usize)]
pub enum Stat {
    Time = 0,
    AvgQueueSizeSum = 1,
    AvgQueueSizeSamples = 2,
    Dequeue = 3,
    GroupWaitTime = 4,
    IdleTime = 5,
    EmptyTime = 6,
}

const NR_STATS: usize = 7;
const NR_COUNTERS: usize = NR_RWSTATS * RWSTAT_NR + NR_STATS;

const fn rw_index(stat: RwStat, kind: usize) -> usize {
    stat as usize * RWSTAT_NR + kind
}

const fn stat_index(stat: Stat) -> usize {
    NR_RWSTATS * RWSTAT_NR + stat as usize
}

/// The `flags` word of `bfqg_stats`.
const FLAG_WAITING: u32 = 1 << 0;
const FLAG_IDLING: u32 = 1 << 1;
const FLAG_EMPTY: u32 = 1 << 2;

/// One CPU's slot: every counter of the group for that CPU.
struct SlotArea {
    counters: [AtomicI64; NR_COUNTERS],
}

impl SlotArea {
    fn new() -> Self {
        SlotArea { counters: std::array::from_fn(|_| AtomicI64::new(0)) }
    }
}

/// Per-CPU-style counters with a spinlock per counter for reads.
struct PerCpuCounters {
    slots: Box<[CachePadded<SlotArea>]>,
    sum_locks: Box<[Lock<()>]>,
    /// The "online CPU" mask a sum walks bit by bit.
    online: u64,
}

impl PerCpuCounters {
    fn new(nr_slots: usize) -> Self {
        assert!((1..=64).contains(&nr_slots), "slot count must be 1..=64, got {nr_slots}");
        PerCpuCounters {
            slots: (0..nr_slots).map(|_| CachePadded::new(SlotArea::new())).collect(),
            sum_locks: (0..NR_COUNTERS)
                .map(|_| Lock::named(LockKind::FairSpin, LockClass::STATS_SUM, ()))
                .collect(),
            online: if nr_slots == 64 { u64::MAX } else { (1u64 << nr_slots) - 1 },
        }
    }

    #[inline]
    fn add(&self, counter: usize, delta: i64) {
        let slot = &self.slots[cpu_slot() % self.slots.len()];
        // Relaxed: a per-CPU add orders nothing; readers sum under the counter's lock and accept
        // a value that is stale by the adds in flight, as percpu_counter_sum does.
        slot.counters[counter].fetch_add(delta, Ordering::Relaxed);
    }

    /// `percpu_counter_sum`: lock, walk every online slot, unlock.
    #[inline(never)]
    fn sum(&self, counter: usize) -> i64 {
        let _guard = self.sum_locks[counter].lock();
        let mut total = 0i64;
        let mut mask = self.online;
        while mask != 0 {
            let cpu = mask.trailing_zeros() as usize; // find_next_bit
            mask &= mask - 1;
            total += self.slots[cpu].counters[counter].load(Ordering::Relaxed);
        }
        total
    }

    /// Atomically moves every slot's value out (leaving 0) and returns their sum.
    fn take(&self, counter: usize) -> i64 {
        let _guard = self.sum_locks[counter].lock();
        self.slots.iter().map(|s| s.counters[counter].swap(0, Ordering::Relaxed)).sum()
    }
}

/// The statistics of one group (`bfqg_stats` plus the legacy `io_service_bytes`/`io_serviced`).
pub struct GroupStats {
    counters: PerCpuCounters,
    start_group_wait_time: AtomicU64,
    start_idle_time: AtomicU64,
    start_empty_time: AtomicU64,
    /// Written with a plain load-modify-store, as the kernel's non-atomic `flags` word is: two
    /// writers under different locks can lose an update (kernel-bfq.md, "Which lock protects
    /// what"), without UB here.
    flags: AtomicU32,
}

/// Every value of a group's statistics at one moment.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct StatsSnapshot {
    pub queued: [i64; RWSTAT_NR],
    pub merged: [i64; RWSTAT_NR],
    pub service_time: [i64; RWSTAT_NR],
    pub wait_time: [i64; RWSTAT_NR],
    pub io_service_bytes: [i64; RWSTAT_NR],
    pub io_serviced: [i64; RWSTAT_NR],
    pub time: i64,
    pub avg_queue_size_sum: i64,
    pub avg_queue_size_samples: i64,
    pub dequeue: i64,
    pub group_wait_time: i64,
    pub idle_time: i64,
    pub empty_time: i64,
    pub start_group_wait_time: u64,
    pub start_idle_time: u64,
    pub start_empty_time: u64,
    pub flags: u32,
}

impl StatsSnapshot {
    /// READ + WRITE of an rwstat, as `blkg_rwstat_total` returns.
    pub fn total(rw: &[i64; RWSTAT_NR]) -> i64 {
        rw[RW_READ] + rw[RW_WRITE]
    }

    /// Only the statistics kept with debug off.
    pub fn legacy(&self) -> ([i64; RWSTAT_NR], [i64; RWSTAT_NR]) {
        (self.io_service_bytes, self.io_serviced)
    }
}

impl GroupStats {
    pub fn new(nr_slots: usize) -> Self {
        GroupStats {
            counters: PerCpuCounters::new(nr_slots),
            start_group_wait_time: AtomicU64::new(0),
            start_idle_time: AtomicU64::new(0),
            start_empty_time: AtomicU64::new(0),
            flags: AtomicU32::new(0),
        }
    }

    /// Number of per-CPU slots.
    pub fn slots(&self) -> usize {
        self.counters.slots.len()
    }

    #[inline]
    fn rwstat_add(&self, stat: RwStat, op: Op, delta: i64) {
        let dir = if op.write { RW_WRITE } else { RW_READ };
        let sync = if op.sync { RW_SYNC } else { RW_ASYNC };
        self.counters.add(rw_index(stat, dir), delta);
        self.counters.add(rw_index(stat, sync), delta);
    }

    /// `blkg_rwstat_total`: reads every per-type counter (four locked sums), returns READ + WRITE.
    #[inline(never)]
    fn rwstat_total(&self, stat: RwStat) -> i64 {
        let mut per_type = [0i64; RWSTAT_NR];
        for (kind, value) in per_type.iter_mut().enumerate() {
            *value = self.counters.sum(rw_index(stat, kind));
        }
        per_type[RW_READ] + per_type[RW_WRITE]
    }

    #[inline]
    fn stat_add(&self, stat: Stat, delta: i64) {
        self.counters.add(stat_index(stat), delta);
    }

    #[inline]
    fn flag(&self, bit: u32) -> bool {
        self.flags.load(Ordering::Relaxed) & bit != 0
    }

    #[inline]
    fn set_flag(&self, bit: u32, on: bool) {
        // A plain read-modify-write, deliberately not a fetch_or: see the field's comment.
        let old = self.flags.load(Ordering::Relaxed);
        let new = if on { old | bit } else { old & !bit };
        self.flags.store(new, Ordering::Relaxed);
    }

    /// `bfqg_stats_update_group_wait_time`: close an open group-wait interval.
    fn update_group_wait_time(&self, now: u64) {
        if !self.flag(FLAG_WAITING) {
            return;
        }
        let start = self.start_group_wait_time.load(Ordering::Relaxed);
        if now > start {
            self.stat_add(Stat::GroupWaitTime, (now - start) as i64);
        }
        self.set_flag(FLAG_WAITING, false);
    }

    /// `bfqg_stats_set_start_group_wait_time`: open a group-wait interval unless one is open or
    /// this group is the one being served.
    ///
    /// NOTE: BFQ passes the queue's own group as the "current" group, so the interval never opens
    /// and `group_wait_time` stays 0 there; here "current" is the in-service queue's group, CFQ's
    /// meaning (kernel-map.md D28).
    fn set_start_group_wait_time(&self, now: u64, group_is_in_service: bool) {
        if self.flag(FLAG_WAITING) || group_is_in_service {
            return;
        }
        self.start_group_wait_time.store(now, Ordering::Relaxed);
        self.set_flag(FLAG_WAITING, true);
    }

    /// `bfqg_stats_end_empty_time`.
    fn end_empty_time(&self, now: u64) {
        if !self.flag(FLAG_EMPTY) {
            return;
        }
        let start = self.start_empty_time.load(Ordering::Relaxed);
        if now > start {
            self.stat_add(Stat::EmptyTime, (now - start) as i64);
        }
        self.set_flag(FLAG_EMPTY, false);
    }

    /// `bfqg_stats_update_io_add`: a request entered the scheduler.
    pub fn update_io_add(&self, op: Op, now: u64, group_is_in_service: bool) {
        self.rwstat_add(RwStat::Queued, op, 1);
        self.end_empty_time(now);
        self.set_start_group_wait_time(now, group_is_in_service);
    }

    /// `bfqg_stats_update_io_remove`: a request left the scheduler.
    pub fn update_io_remove(&self, op: Op) {
        self.rwstat_add(RwStat::Queued, op, -1);
    }

    /// `bfqg_stats_update_io_merged`.
    pub fn update_io_merged(&self, op: Op) {
        self.rwstat_add(RwStat::Merged, op, 1);
    }

    /// `bfqg_stats_update_avg_queue_size`: one full rwstat total.
    pub fn update_avg_queue_size(&self, now: u64) {
        let queued = self.rwstat_total(RwStat::Queued);
        self.stat_add(Stat::AvgQueueSizeSum, queued);
        self.stat_add(Stat::AvgQueueSizeSamples, 1);
        self.update_group_wait_time(now);
    }

    /// `bfqg_stats_set_start_empty_time`: one full rwstat total.
    pub fn set_start_empty_time(&self, now: u64) {
        if self.rwstat_total(RwStat::Queued) != 0 {
            return;
        }
        if self.flag(FLAG_EMPTY) {
            return;
        }
        self.start_empty_time.store(now, Ordering::Relaxed);
        self.set_flag(FLAG_EMPTY, true);
    }

    /// `bfqg_stats_update_idle_time`: close an idling interval.
    pub fn update_idle_time(&self, now: u64) {
        if !self.flag(FLAG_IDLING) {
            return;
        }
        let start = self.start_idle_time.load(Ordering::Relaxed);
        if now > start {
            self.stat_add(Stat::IdleTime, (now - start) as i64);
        }
        self.set_flag(FLAG_IDLING, false);
    }

    /// `bfqg_stats_set_start_idle_time`: open an idling interval.
    pub fn set_start_idle_time(&self, now: u64) {
        self.start_idle_time.store(now, Ordering::Relaxed);
        self.set_flag(FLAG_IDLING, true);
    }

    /// `bfqg_stats_update_dequeue`.
    pub fn update_dequeue(&self) {
        self.stat_add(Stat::Dequeue, 1);
    }

    /// `bfqg_stats_update_completion`.
    pub fn update_completion(&self, op: Op, start_ns: u64, io_start_ns: u64, now: u64) {
        if now > io_start_ns {
            self.rwstat_add(RwStat::ServiceTime, op, (now - io_start_ns) as i64);
        }
        if io_start_ns > start_ns {
            self.rwstat_add(RwStat::WaitTime, op, (io_start_ns - start_ns) as i64);
        }
    }

    /// Time a queue of this group held the device in one slice (`time`).
    pub fn update_timeslice_used(&self, used_ns: u64) {
        self.stat_add(Stat::Time, used_ns as i64);
    }

    /// `io_service_bytes` and `io_serviced`, the statistics kept with debug off.
    pub fn update_legacy_io(&self, op: Op, bytes: u64) {
        self.rwstat_add(RwStat::ServiceBytes, op, bytes as i64);
        self.rwstat_add(RwStat::Serviced, op, 1);
    }

    /// Adds flushed per-type deltas of io_service_bytes and io_serviced (the rstat flush,
    /// `objects/rstat.rs`), to the calling thread's slot like any update.
    pub fn add_legacy_deltas(&self, bytes: &[i64; RWSTAT_NR], ios: &[i64; RWSTAT_NR]) {
        for kind in 0..RWSTAT_NR {
            if bytes[kind] != 0 {
                self.counters.add(rw_index(RwStat::ServiceBytes, kind), bytes[kind]);
            }
            if ios[kind] != 0 {
                self.counters.add(rw_index(RwStat::Serviced, kind), ios[kind]);
            }
        }
    }

    /// Reads one rwstat type by type (four locked sums).
    pub fn read_rwstat(&self, stat: RwStat) -> [i64; RWSTAT_NR] {
        std::array::from_fn(|kind| self.counters.sum(rw_index(stat, kind)))
    }

    /// Reads one plain counter (one locked sum).
    pub fn read_stat(&self, stat: Stat) -> i64 {
        self.counters.sum(stat_index(stat))
    }

    /// `total(queued)`.
    pub fn queued_total(&self) -> i64 {
        self.rwstat_total(RwStat::Queued)
    }

    /// Every value, for reports and for comparing variants field by field.
    pub fn snapshot(&self) -> StatsSnapshot {
        StatsSnapshot {
            queued: self.read_rwstat(RwStat::Queued),
            merged: self.read_rwstat(RwStat::Merged),
            service_time: self.read_rwstat(RwStat::ServiceTime),
            wait_time: self.read_rwstat(RwStat::WaitTime),
            io_service_bytes: self.read_rwstat(RwStat::ServiceBytes),
            io_serviced: self.read_rwstat(RwStat::Serviced),
            time: self.read_stat(Stat::Time),
            avg_queue_size_sum: self.read_stat(Stat::AvgQueueSizeSum),
            avg_queue_size_samples: self.read_stat(Stat::AvgQueueSizeSamples),
            dequeue: self.read_stat(Stat::Dequeue),
            group_wait_time: self.read_stat(Stat::GroupWaitTime),
            idle_time: self.read_stat(Stat::IdleTime),
            empty_time: self.read_stat(Stat::EmptyTime),
            start_group_wait_time: self.start_group_wait_time.load(Ordering::Relaxed),
            start_idle_time: self.start_idle_time.load(Ordering::Relaxed),
            start_empty_time: self.start_empty_time.load(Ordering::Relaxed),
            flags: self.flags.load(Ordering::Relaxed),
        }
    }

    /// `bfqg_stats_xfer_dead` (add into the parent, then reset): moves every counter into `into`.
    ///
    /// NOTE: the kernel sums, adds, then resets each slot, losing adds that land in between. Here
    /// each slot is swapped with 0 under the counter's lock, so nothing in flight is lost: the
    /// `epoch` variant relies on it, since its updates can still reach an offline group until the
    /// group's grace period ends (and the free path transfers that residue too).
    pub fn transfer_into(&self, into: &GroupStats) {
        for counter in 0..NR_COUNTERS {
            let value = self.counters.take(counter);
            if value != 0 {
                into.counters.add(counter, value);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn queued_counts_by_type_and_total_reads_read_plus_write() {
        let s = GroupStats::new(8);
        s.update_io_add(Op::READ_SYNC, 10, false);
        s.update_io_add(Op::WRITE_ASYNC, 10, false);
        s.update_io_add(Op::WRITE_SYNC, 10, false);
        let q = s.read_rwstat(RwStat::Queued);
        assert_eq!(q, [1, 2, 2, 1]);
        assert_eq!(s.queued_total(), 3);
        s.update_io_remove(Op::WRITE_SYNC);
        assert_eq!(s.queued_total(), 2);
    }

    #[test]
    fn empty_time_opens_only_when_queued_is_zero_and_closes_on_add() {
        let s = GroupStats::new(2);
        s.update_io_add(Op::READ_SYNC, 5, true);
        s.set_start_empty_time(6); // queued = 1: no interval
        assert_eq!(s.snapshot().flags & FLAG_EMPTY, 0);
        s.update_io_remove(Op::READ_SYNC);
        s.set_start_empty_time(10);
        s.update_io_add(Op::READ_SYNC, 25, true);
        assert_eq!(s.read_stat(Stat::EmptyTime), 15);
    }

    #[test]
    fn group_wait_and_idle_intervals() {
        let s = GroupStats::new(1);
        s.update_io_add(Op::READ_SYNC, 100, false); // opens a wait interval
        s.update_avg_queue_size(130); // closes it: 30 ns; sum += 1
        assert_eq!(s.read_stat(Stat::GroupWaitTime), 30);
        assert_eq!(s.read_stat(Stat::AvgQueueSizeSum), 1);
        assert_eq!(s.read_stat(Stat::AvgQueueSizeSamples), 1);
        s.set_start_idle_time(200);
        s.update_idle_time(260);
        s.update_idle_time(300); // already closed: no effect
        assert_eq!(s.read_stat(Stat::IdleTime), 60);
    }

    #[test]
    fn transfer_moves_everything_and_leaves_zero() {
        let child = GroupStats::new(4);
        let parent = GroupStats::new(4);
        child.update_legacy_io(Op::READ_SYNC, 4096);
        child.update_io_add(Op::READ_SYNC, 1, true);
        parent.update_legacy_io(Op::READ_SYNC, 4096);
        child.transfer_into(&parent);
        assert_eq!(child.read_rwstat(RwStat::Serviced), [0; 4]);
        assert_eq!(child.queued_total(), 0);
        assert_eq!(parent.read_rwstat(RwStat::Serviced), [2, 0, 2, 0]);
        assert_eq!(parent.read_rwstat(RwStat::ServiceBytes)[0], 8192);
        assert_eq!(parent.queued_total(), 1);
    }

    #[test]
    fn adds_from_many_threads_sum_exactly() {
        let s = std::sync::Arc::new(GroupStats::new(8));
        let hs: Vec<_> = (0..4)
            .map(|_| {
                let s = s.clone();
                std::thread::spawn(move || {
                    for _ in 0..10_000 {
                        s.update_legacy_io(Op::WRITE_SYNC, 512);
                    }
                })
            })
            .collect();
        for h in hs {
            h.join().unwrap();
        }
        assert_eq!(s.read_rwstat(RwStat::Serviced), [0, 40_000, 40_000, 0]);
    }
}
