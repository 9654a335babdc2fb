//! A deadline reference scheduler, as Linux `mq-deadline` (block/mq-deadline.c): the kernel peer
//! compares BFQ with `mq-deadline`, and `bfq ÷ deadline` must be compared like for like, not
//! against BFQ's own core with its statistics off.
//!
//! What it keeps, all under one lock (`dd->lock`, named `sched` in the lock statistics so that a
//! report's scheduler-lock column reads the same for both):
//!
//! - per direction (reads, writes), requests sorted by sector (`sort_list`) and in arrival order
//!   with their deadlines (`fifo_list`; `read_expire` 500 ms, `write_expire` 5 s);
//! - the batch in progress: the direction, the next request in sector order, how many were
//!   dispatched in it (`fifo_batch` 16).
//!
//! Its lock sites per I/O: the bio merge attempt (`dd_bio_merge`: back merge by end sector,
//! front merge in the sorted tree), the insert (`dd_insert_requests`, with its own back-merge
//! attempt), and the dispatch (`dd_dispatch_request`). Completion takes no lock
//! (`dd_finish_request` only counts). No groups, no statistics, no process queues.
//!
//! NOTE: one priority level (the kernel's three `dd_per_prio` levels collapse to one with a
//! single I/O class); no zoned-device write locking; the elevator hash is a lookup in the
//! sorted tree (the same answer: the request ending at a sector).

use crate::lockstat::{self, LockClass, LockPath};
use crate::sorted::SortedVec;
use crate::stats::Op;
use crate::sync::{Lock, LockKind};
use slab::Slab;
use std::collections::VecDeque;

/// What the caller asks the deadline scheduler to take.
#[derive(Clone, Copy, Debug)]
pub struct DeadlineRequest {
    pub sector: u64,
    pub sectors: u32,
    pub op: Op,
    /// The submitter's own identifier, handed back at completion.
    pub tag: u64,
}

/// A request on the device, with the tags of the bios and requests merged into it.
#[derive(Debug)]
pub struct DeadlineDispatched {
    pub tag: u64,
    pub sector: u64,
    pub sectors: u32,
    pub absorbed: Vec<u64>,
}

/// `mq-deadline`'s tunables.
#[derive(Clone, Debug)]
pub struct DeadlineConfig {
    /// `read_expire`, ns.
    pub read_expire_ns: u64,
    /// `write_expire`, ns.
    pub write_expire_ns: u64,
    /// `fifo_batch`: requests dispatched in sector order before the deadlines are looked at.
    pub fifo_batch: u32,
    /// `writes_starved`: read batches that may pass over waiting writes.
    pub writes_starved: u32,
    /// Largest request a merge may build, sectors.
    pub max_merge_sectors: u32,
}

impl Default for DeadlineConfig {
    fn default() -> Self {
        DeadlineConfig {
            read_expire_ns: 500_000_000,
            write_expire_ns: 5_000_000_000,
            fifo_batch: 16,
            writes_starved: 2,
            max_merge_sectors: 256,
        }
    }
}

struct Request {
    sector: u64,
    sectors: u32,
    op: Op,
    tag: u64,
    deadline: u64,
    absorbed: Vec<u64>,
}

#[derive(Default)]
struct Direction {
    sort_list: SortedVec<(u64, usize)>,
    /// Arrival order; deadlines grow with it (one expiry per direction).
    fifo: VecDeque<usize>,
}

struct DeadlineState {
    requests: Slab<Request>,
    dirs: [Direction; 2],
    /// The batch's direction and the sector its next request should start at or after.
    batch_dir: usize,
    next_sector: Option<u64>,
    batching: u32,
    starved: u32,
    cfg: DeadlineConfig,
}

/// The deadline reference scheduler (see the module documentation).
pub struct Deadline {
    state: Lock<DeadlineState>,
}

fn dir_of(op: Op) -> usize {
    usize::from(op.write)
}

impl DeadlineState {
    /// The request of direction `dir` ending at `sector` that can take `sectors` more.
    fn back_candidate(&self, dir: usize, sector: u64, sectors: u32, op: Op) -> Option<usize> {
        let &(_, id) = self.dirs[dir].sort_list.last_before(&(sector, 0))?;
        let r = &self.requests[id];
        (r.sector + r.sectors as u64 == sector
            && r.op.merge_compatible(op)
            && r.sectors + sectors <= self.cfg.max_merge_sectors)
            .then_some(id)
    }

    /// The request of direction `dir` starting where `sector + sectors` ends.
    fn front_candidate(&self, dir: usize, sector: u64, sectors: u32, op: Op) -> Option<usize> {
        let end = sector + sectors as u64;
        let &(start, id) = self.dirs[dir].sort_list.first_at_or_after(&(end, 0))?;
        let r = &self.requests[id];
        (start == end
            && r.op.merge_compatible(op)
            && r.sectors + sectors <= self.cfg.max_merge_sectors)
            .then_some(id)
    }

    /// `blk_mq_sched_try_merge`: back merge, else front merge. Returns whether `rq` was taken.
    fn try_merge(&mut self, rq: &DeadlineRequest, front_too: bool) -> bool {
        let dir = dir_of(rq.op);
        if let Some(id) = self.back_candidate(dir, rq.sector, rq.sectors, rq.op) {
            let r = &mut self.requests[id];
            r.sectors += rq.sectors;
            r.absorbed.push(rq.tag);
            return true;
        }
        if !front_too {
            return false;
        }
        let Some(id) = self.front_candidate(dir, rq.sector, rq.sectors, rq.op) else {
            return false;
        };
        let r = &mut self.requests[id];
        let old = r.sector;
        r.sector = rq.sector;
        r.sectors += rq.sectors;
        r.absorbed.push(rq.tag);
        // dd_request_merged: the request moved in the sorted tree.
        self.dirs[dir].sort_list.remove(&(old, id));
        self.dirs[dir].sort_list.insert((rq.sector, id));
        true
    }

    fn insert(&mut self, rq: &DeadlineRequest, now: u64) {
        let dir = dir_of(rq.op);
        let expire = if dir == 1 { self.cfg.write_expire_ns } else { self.cfg.read_expire_ns };
        let id = self.requests.insert(Request {
            sector: rq.sector,
            sectors: rq.sectors,
            op: rq.op,
            tag: rq.tag,
            deadline: now + expire,
            absorbed: Vec::new(),
        });
        self.dirs[dir].sort_list.insert((rq.sector, id));
        self.dirs[dir].fifo.push_back(id);
    }

    fn fifo_expired(&self, dir: usize, now: u64) -> bool {
        self.dirs[dir].fifo.front().is_some_and(|&id| self.requests[id].deadline <= now)
    }

    /// `__dd_dispatch_request`: continue the batch in sector order, else choose a direction
    /// (reads first, unless writes have been passed over `writes_starved` times) and start from
    /// the FIFO head if its deadline passed or the sector order has nothing ahead.
    fn dispatch(&mut self, now: u64) -> Option<usize> {
        let next_in_order = |st: &Self, dir: usize, from: u64| {
            st.dirs[dir].sort_list.first_at_or_after(&(from, 0)).map(|&(_, id)| id)
        };
        let mut chosen = None;
        if let Some(from) = self.next_sector {
            if self.batching < self.cfg.fifo_batch {
                chosen = next_in_order(self, self.batch_dir, from);
            }
        }
        if chosen.is_none() {
            let reads = !self.dirs[0].fifo.is_empty();
            let writes = !self.dirs[1].fifo.is_empty();
            let dir = if reads && !(writes && self.starved >= self.cfg.writes_starved) {
                if writes {
                    self.starved += 1;
                }
                0
            } else if writes {
                self.starved = 0;
                1
            } else {
                return None;
            };
            let start_fifo =
                self.fifo_expired(dir, now) || self.next_sector.is_none() || self.batch_dir != dir;
            chosen = if start_fifo {
                self.dirs[dir].fifo.front().copied()
            } else {
                next_in_order(self, dir, self.next_sector.unwrap_or(0))
                    .or_else(|| self.dirs[dir].fifo.front().copied())
            };
            self.batch_dir = dir;
            self.batching = 0;
        }
        let id = chosen?;
        let (sector, sectors, dir) = {
            let r = &self.requests[id];
            (r.sector, r.sectors, dir_of(r.op))
        };
        let d = &mut self.dirs[dir];
        d.sort_list.remove(&(sector, id));
        if let Some(pos) = d.fifo.iter().position(|&x| x == id) {
            d.fifo.remove(pos);
        }
        self.next_sector = Some(sector + sectors as u64);
        self.batching += 1;
        Some(id)
    }
}

impl Deadline {
    pub fn new(lock: LockKind, cfg: DeadlineConfig) -> Self {
        lockstat::install();
        Deadline {
            state: Lock::named(
                lock,
                LockClass::SCHED,
                DeadlineState {
                    requests: Slab::new(),
                    dirs: Default::default(),
                    batch_dir: 0,
                    next_sector: None,
                    batching: 0,
                    starved: 0,
                    cfg,
                },
            ),
        }
    }

    /// `dd_bio_merge`: under the lock, try to merge the bio into a queued request. Returns
    /// whether it merged (then its tag completes with that request).
    pub fn bio_merge(&self, rq: &DeadlineRequest) -> bool {
        let _path = lockstat::enter(LockPath::BioMerge);
        self.state.lock().try_merge(rq, true)
    }

    /// `dd_insert_requests`: under the lock, a back merge at insert or a new request on the
    /// sorted tree and the FIFO.
    pub fn insert(&self, rq: &DeadlineRequest, now: u64) {
        let _path = lockstat::enter(LockPath::Insert);
        let mut st = self.state.lock();
        if !st.try_merge(rq, false) {
            st.insert(rq, now);
        }
    }

    /// `dd_dispatch_request`: under the lock, the next request for the device.
    pub fn dispatch(&self, now: u64) -> Option<DeadlineDispatched> {
        let _path = lockstat::enter(LockPath::Dispatch);
        let mut st = self.state.lock();
        let id = st.dispatch(now)?;
        let r = st.requests.remove(id);
        Some(DeadlineDispatched {
            tag: r.tag,
            sector: r.sector,
            sectors: r.sectors,
            absorbed: r.absorbed,
        })
    }

    /// Requests queued.
    pub fn queued(&self) -> usize {
        self.state.lock().requests.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rq(sector: u64, write: bool, tag: u64) -> DeadlineRequest {
        DeadlineRequest {
            sector,
            sectors: 8,
            op: if write { Op::WRITE_SYNC } else { Op::READ_SYNC },
            tag,
        }
    }

    /// The tags of every request dispatched at `now`, in dispatch order.
    fn dispatch_order(dd: &Deadline, now: u64) -> Vec<u64> {
        std::iter::from_fn(|| dd.dispatch(now).map(|d| d.tag)).collect()
    }

    #[test]
    fn reads_first_in_sector_batches_merges_and_starved_writes_get_their_turn() {
        let dd = Deadline::new(
            LockKind::FairSpin,
            DeadlineConfig { fifo_batch: 2, writes_starved: 1, ..DeadlineConfig::default() },
        );
        dd.insert(&rq(5000, true, 9), 0);
        for (i, s) in [300u64, 100, 200].into_iter().enumerate() {
            dd.insert(&rq(s, false, i as u64), 0);
        }
        assert!(dd.bio_merge(&rq(92, false, 10)), "front merge into 100");
        assert!(dd.bio_merge(&rq(208, false, 11)), "back merge onto 200");
        assert!(!dd.bio_merge(&rq(1000, false, 12)));
        dd.insert(&rq(1000, false, 12), 0);
        // The first batch starts at the read FIFO head (300), then goes on in sector order.
        let order = dispatch_order(&dd, 1);
        assert_eq!(order[..2], [0, 12]);
        // One read batch passed the write over: it goes next, then the remaining reads.
        assert_eq!(order[2], 9, "{order:?}");
        assert_eq!(order.len(), 5);
        assert_eq!(dd.queued(), 0);
    }

    /// Every request dispatched, by tag: (tag, sector, sectors, the tags it absorbed).
    fn drain(dd: &Deadline, now: u64) -> Vec<(u64, u64, u32, Vec<u64>)> {
        let mut all: Vec<_> = std::iter::from_fn(|| dd.dispatch(now))
            .map(|d| (d.tag, d.sector, d.sectors, d.absorbed))
            .collect();
        all.sort_unstable();
        all
    }

    /// A merge grows the request by the bio's sectors, at the back (insert and bio) and in front
    /// (bio); up to `max_merge_sectors` it is made, past it not; a bio that ends short of the
    /// next request does not join it.
    #[test]
    fn merges_grow_the_request_up_to_the_limit_and_only_when_adjacent() {
        let dd = Deadline::new(
            LockKind::FairSpin,
            DeadlineConfig { max_merge_sectors: 256, ..DeadlineConfig::default() },
        );
        let read = |sector, sectors, tag| DeadlineRequest { sectors, ..rq(sector, false, tag) };
        dd.insert(&read(1000, 8, 1), 0);
        dd.insert(&read(1008, 8, 11), 0);
        assert!(dd.bio_merge(&read(992, 8, 12)));
        // At the back: 240 + 16 is the limit, 8 more is past it (then a request of its own).
        dd.insert(&read(5000, 240, 2), 0);
        assert!(dd.bio_merge(&read(5240, 16, 21)));
        assert!(!dd.bio_merge(&read(5256, 8, 22)));
        // In front, the same.
        dd.insert(&read(9000, 240, 3), 0);
        assert!(dd.bio_merge(&read(8984, 16, 31)));
        assert!(!dd.bio_merge(&read(8976, 8, 32)));
        // 20000..20008 ends short of the request at 30000.
        dd.insert(&read(30_000, 8, 4), 0);
        assert!(!dd.bio_merge(&read(20_000, 8, 41)));
        let expected = [
            (1, 992, 24, vec![11, 12]),
            (2, 5000, 256, vec![21]),
            (3, 8984, 256, vec![31]),
            (4, 30_000, 8, vec![]),
        ];
        assert_eq!(drain(&dd, 1), expected);
    }

    /// A batch goes on in sector order from the end of the request just dispatched, not from its
    /// start: the request at 292, below the FIFO head at 300, waits until the sector order has
    /// nothing ahead.
    #[test]
    fn a_batch_goes_on_from_where_the_last_request_ended() {
        let dd = Deadline::new(LockKind::FairSpin, DeadlineConfig::default());
        for (sector, tag) in [(300, 1), (292, 2), (1000, 3)] {
            dd.insert(&rq(sector, false, tag), 0);
        }
        assert_eq!(dispatch_order(&dd, 1), [1, 3, 2]);
    }

    /// When the batch changes direction it starts at the new direction's FIFO head (the write
    /// at 100, issued first), not in sector order from where the reads ended (the write at 5000).
    #[test]
    fn a_new_direction_starts_at_its_fifo_head() {
        let dd = Deadline::new(LockKind::FairSpin, DeadlineConfig::default());
        dd.insert(&rq(100, true, 1), 0);
        dd.insert(&rq(5000, true, 2), 0);
        dd.insert(&rq(1000, false, 3), 0);
        assert_eq!(dispatch_order(&dd, 1), [3, 1, 2]);
    }

    /// A FIFO head expires at its deadline, exactly, and from then on starts the next batch:
    /// tag 2, issued at 5 with a read expiry of 10, is due at 15. Before 15 the batch after
    /// tag 1 (at 900) goes on in sector order (950); at 15 and after, tag 2 goes first.
    #[test]
    fn an_expired_fifo_head_starts_the_next_batch_from_its_deadline_on() {
        for (now, first) in [(14, 3), (15, 2), (20, 2)] {
            let dd = Deadline::new(
                LockKind::FairSpin,
                DeadlineConfig { fifo_batch: 1, read_expire_ns: 10, ..DeadlineConfig::default() },
            );
            dd.insert(&rq(900, false, 1), 0);
            dd.insert(&rq(100, false, 2), 5);
            dd.insert(&rq(950, false, 3), 5);
            assert_eq!(dd.dispatch(6).unwrap().tag, 1);
            assert_eq!(dd.dispatch(now).unwrap().tag, first, "the next batch at {now}");
        }
    }
}
