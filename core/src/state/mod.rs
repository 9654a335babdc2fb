//! Everything the scheduler lock protects (`struct bfq_data` and the scheduling half of groups and
//! queues), and the scheduling work of the three paths, done under that lock.
//!
//! B-WF2Q+ in brief (bfq-wf2q.c): every group has a service tree of *entities* (its child groups
//! and its queues). An entity has a weight, a budget (sectors), and virtual start and finish times
//! `S` and `F = S + budget / weight` in its tree's virtual time `V`, which advances by
//! `served / sum of active weights`. An entity is *eligible* when `S <= V`; the tree serves the
//! eligible entity with the smallest `F`. Selection descends from the root's tree to a queue; the
//! chosen queue dispatches until its budget is spent, it runs out of requests (then it may idle,
//! `slice_idle`), or its budget timeout passes; on *expiration* every entity on the path is charged
//! the service it received (`F = S + service / weight`) and requeued (`S = F`) or deactivated.
//!
//! The kernel's own seam splits this module in three: the service trees and virtual time
//! (bfq-wf2q.c) are in `wf2q`, group creation, moves, offline and teardown (bfq-cgroup.c) in
//! `cgroup`, and this file holds the state itself and the paths of bfq-iosched.c: queues, insert,
//! selection and dispatch, completion, idling.
//!
//! Deviations from the kernel are marked `NOTE:` where they occur; notes/kernel-map.md lists them.

use crate::fault::{self, Fault};
pub use crate::insert::{InsertOutcome, RequestSpec};
use crate::insert::{InsertPathKind, Listed};
use crate::objects::rstat::RstatLists;
use crate::objects::{Census, GroupPtr, GroupShared, QueueRef, QueueShared, RetiredGroup};
use crate::profile::KernelProfile;
use crate::sorted::SortedVec;
use crate::stats::Op;
use crate::sync::OracleArc;
use crate::sync::{Arc, AtomicPtr, Ordering};
use crate::trace::{self, IdleTimer};
use crate::update::StatUpdate;
use slab::Slab;
use std::collections::HashMap;
use std::collections::VecDeque;

mod cgroup;
mod wf2q;

pub(crate) use wf2q::{Entity, EntityKey, SchedData};

pub(crate) type QueueId = usize;
/// A policy's per-group state, type-erased.
pub(crate) type PolicyState = Box<dyn std::any::Any + Send + Sync>;
pub(crate) type RqId = usize;

/// Scheduler parameters.
#[derive(Clone, Debug)]
pub struct SchedConfig {
    /// Per-CPU slots of every statistics counter (the seeds' machine had 8 CPUs).
    pub slots: usize,
    /// How long an emptied sync queue in service waits for its next request, ns (0: never).
    /// BFQ's default is 8 ms; the seeds' benchmark (and ours) sets 0.
    pub slice_idle_ns: u64,
    /// Largest budget a queue may get, sectors (`bfq_max_budget`, 16 Ki sectors).
    pub max_budget: u64,
    /// Longest time a queue may stay in service, ns (`bfq_timeout`, 125 ms).
    pub timeout_ns: u64,
    /// FIFO deadline of a sync request, ns (`bfq_fifo_expire[1]`, 125 ms).
    pub fifo_expire_sync_ns: u64,
    /// FIFO deadline of an async request, ns (`bfq_fifo_expire[0]`, 250 ms).
    pub fifo_expire_async_ns: u64,
    /// Largest request a back merge may build, sectors (max_sectors, 128 KiB).
    pub max_merge_sectors: u32,
    /// How requests enter the scheduler (`insert/`): under the scheduler lock, or through
    /// insertion lists spliced by dispatch.
    pub insert: InsertPathKind,
    /// Which lock sites a submission runs ([`crate::profile`]): the seeds' kernel's, or today's.
    pub profile: KernelProfile,
    /// Requests the device queue may hold (`q->nr_requests`, the depth limit's starting figure):
    /// blk-mq gives an elevator twice the hardware queue depth, 2 × 128 for a loop device.
    pub nr_requests: u32,
    /// A known cost spent where a request enters the scheduler (`inject.rs`); none by default.
    pub inject: crate::inject::Inject,
    /// The kernel's per-site time the core's work lacks, and the gaps between submission sites
    /// (`inject.rs`, [`crate::inject::SitePads`]); none by default.
    pub pads: crate::inject::SitePads,
}

impl Default for SchedConfig {
    fn default() -> Self {
        SchedConfig {
            slots: 8,
            slice_idle_ns: 0,
            max_budget: 16 * 1024,
            timeout_ns: 125_000_000,
            fifo_expire_sync_ns: 125_000_000,
            fifo_expire_async_ns: 250_000_000,
            max_merge_sectors: 256,
            insert: InsertPathKind::Direct,
            profile: KernelProfile::Seeds,
            nr_requests: 256,
            inject: crate::inject::Inject::NONE,
            pads: crate::inject::SitePads::NONE,
        }
    }
}

/// Smallest budget a queue is given after it ran out of requests (sectors).
const MIN_BUDGET: u64 = 64;

/// Why a queue leaves service (`enum bfqq_expiration`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Expiration {
    /// Idle timer fired with no request arrived.
    TooIdle,
    /// Budget timeout.
    BudgetTimeout,
    /// The budget cannot cover the next request.
    BudgetExhausted,
    /// The queue has no more requests and idling is not worth it.
    NoMoreRequests,
    /// Forced out (the queue is moving to another group).
    Preempted,
}

pub(crate) struct GroupSched {
    pub(crate) shared: GroupPtr,
    pub(crate) serial: u64,
    entity: Entity,
    sd: SchedData,
    pub(crate) parent: Option<usize>,
    online_children: usize,
    pub(crate) members: Vec<QueueId>,
    pub(crate) depth: u32,
    /// What this group was charged (I7), including what its removed children handed it.
    pub(crate) ledger: Ledger,
}

impl GroupSched {
    pub(crate) fn shared_weight(&self) -> u64 {
        self.entity.weight
    }
}

pub(crate) struct QueueSched {
    pub(crate) shared: QueueRef,
    entity: Entity,
    pub(crate) group: usize,
    member_idx: usize,
    /// Queued requests by (sector, id): `bfqq->sort_list`.
    sort_list: SortedVec<(u64, RqId)>,
    /// Queued requests by (deadline, id): `bfqq->fifo`.
    fifo: SortedVec<(u64, RqId)>,
    dispatched: u32,
    /// Process + allocated requests + in service (`bfqq->ref`).
    refs: u32,
    wait_request: bool,
    slice_start: u64,
    budget_timeout: u64,
    sync: bool,
    /// The serial of the cgroup the queue's requests were last looked up in
    /// (`bic->blkcg_serial_nr`): [`SchedState::lookup_bio_group`] compares it on every request.
    cgroup_serial: u64,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum RqWhere {
    Sorted,
    DispatchList,
    InFlight,
}

pub(crate) struct Request {
    pub(crate) sector: u64,
    pub(crate) sectors: u32,
    pub(crate) op: Op,
    pub(crate) queue: QueueId,
    pub(crate) tag: u64,
    pub(crate) start_ns: u64,
    pub(crate) io_start_ns: u64,
    fifo_deadline: u64,
    pub(crate) absorbed: Vec<u64>,
    place: RqWhere,
    /// The group (slot, serial) the request's queue was in when the request was made: what the
    /// fault `MergeChargedToAbsorbingGroup` charges a merged request to (model builds only).
    #[cfg(feature = "fault-injection")]
    made_in: (usize, u64),
}

/// Requests counted at the scheduler's entry and exits.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct RequestCounters {
    pub inserted: u64,
    pub dispatched: u64,
    pub merged: u64,
    pub completed: u64,
    /// Of `merged`: bios merged into a queued request before a request was made
    /// (`bfq_bio_merge`; each is also counted in `inserted`).
    #[serde(default)]
    pub bio_merged: u64,
    /// Depth-limit checks that found the queue or one of its groups over its share of the
    /// requests (`bfqq_request_over_limit` true).
    #[serde(default)]
    pub over_limit: u64,
    /// Group lookups made for requests (`bfq_bic_update_cgroup`, at bio merge and insert).
    #[serde(default)]
    pub group_lookups: u64,
}

/// What a group was charged, counted by the scheduler itself under its lock, apart from the
/// statistics (notes/invariants.md I7, attribution): every dispatched request and its bytes, and
/// every merge, are charged to the group its queue is in at that moment (the group that issued
/// it); a group going offline hands its ledger to its parent, as its statistics are handed
/// (kernel-map.md D20, D27). At quiescence each online group's kept statistics must equal its
/// ledger ([`crate::Scheduler::check_consistency`]): conservation (I2) alone holds when service
/// is charged to the wrong group.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct Ledger {
    /// Requests dispatched (io_serviced, READ + WRITE).
    pub serviced: i64,
    /// Their bytes (io_service_bytes, READ + WRITE).
    pub service_bytes: i64,
    /// Merges (io_merged, READ + WRITE): a merge is charged to the group of the queue it merged into.
    pub merged: i64,
}

impl Ledger {
    fn absorb(&mut self, other: Ledger) {
        self.serviced += other.serviced;
        self.service_bytes += other.service_bytes;
        self.merged += other.merged;
    }
}

/// Receives the statistics updates the paths emit (the policy's router, or nothing).
pub(crate) trait StatSink {
    fn emit(&mut self, queue: QueueRef, update: StatUpdate);

    /// An update for `group` itself rather than a queue's group, applied under the scheduler
    /// lock if the policy keeps it (the fault `MergeChargedToAbsorbingGroup` only).
    fn emit_to_group(&mut self, group: GroupPtr, update: StatUpdate);
}

/// A sink that drops everything (teardown).
pub(crate) struct NullSink;

impl StatSink for NullSink {
    fn emit(&mut self, _: QueueRef, _: StatUpdate) {}
    fn emit_to_group(&mut self, _: GroupPtr, _: StatUpdate) {}
}

/// `struct bfq_data`.
pub(crate) struct SchedState {
    pub(crate) groups: Slab<GroupSched>,
    pub(crate) queues: Slab<QueueSched>,
    pub(crate) requests: Slab<Request>,
    pub(crate) root: usize,
    dispatch_list: VecDeque<RqId>,
    in_service: Option<QueueId>,
    /// `bfqd->in_service_queue` as the idle-slice timer reads it: without the scheduler lock.
    /// Written under the lock whenever `in_service` changes; the timer must re-validate what it
    /// read once it holds the lock (the queue may have been expired and freed meanwhile: I5).
    pub(crate) in_service_hint: Arc<AtomicPtr<QueueShared>>,
    pub(crate) idle_deadline: Option<u64>,
    last_position: u64,
    pub(crate) counters: RequestCounters,
    /// Groups whose last reference went during this critical section, to retire after it.
    pub(crate) retired: Vec<RetiredGroup>,
    pub(crate) cfg: SchedConfig,
    next_serial: u64,
    pub(crate) census: OracleArc<Census>,
    /// The per-CPU pending lists of the rstat policies (`objects/rstat.rs`), handed to every group.
    rstat: Option<OracleArc<RstatLists>>,
    /// Online groups by cgroup serial: the blkg lookup a request's group lookup makes
    /// (`blkg_lookup`, a radix tree in the kernel; a hash map here).
    pub(crate) blkg_index: HashMap<u64, usize>,
    /// I7's ledger charges service when a request reaches the insert (the policy counts
    /// io_serviced at submission, `StatsPolicy::LEGACY_IO_AT_SUBMIT`), not at dispatch.
    pub(crate) ledger_at_insert: bool,
}

impl SchedState {
    pub(crate) fn new(
        cfg: SchedConfig,
        census: OracleArc<Census>,
        new_state: fn() -> PolicyState,
        rstat: Option<OracleArc<RstatLists>>,
    ) -> Self {
        let mut groups = Slab::new();
        let root_shared =
            GroupShared::allocate(None, cfg.slots, 0, &census, new_state(), rstat.as_ref());
        let root = groups.insert(GroupSched {
            shared: root_shared,
            serial: 0,
            entity: Entity::new(100, 0, cfg.max_budget),
            sd: SchedData::default(),
            parent: None,
            online_children: 0,
            members: Vec::new(),
            depth: 0,
            ledger: Ledger::default(),
        });
        let mut blkg_index = HashMap::new();
        blkg_index.insert(0, root);
        SchedState {
            groups,
            queues: Slab::new(),
            requests: Slab::new(),
            root,
            dispatch_list: VecDeque::new(),
            in_service: None,
            in_service_hint: Arc::new(AtomicPtr::new(std::ptr::null_mut())),
            idle_deadline: None,
            last_position: 0,
            counters: RequestCounters::default(),
            retired: Vec::new(),
            cfg,
            next_serial: 1,
            census,
            rstat,
            blkg_index,
            ledger_at_insert: false,
        }
    }

    // ---- queues ----

    pub(crate) fn queue_ref(&self, q: QueueId) -> QueueRef {
        self.queues[q].shared
    }

    pub(crate) fn in_service_queue_ref(&self) -> Option<QueueRef> {
        self.in_service.map(|q| self.queues[q].shared)
    }

    pub(crate) fn new_queue(&mut self, group: usize, pid: u64) -> QueueId {
        let g = &mut self.groups[group];
        // SAFETY: the group is online (in the slab), so its online reference keeps it allocated.
        unsafe { g.shared.get(&*g) }.get(); // the queue's reference on its group
        let shared = QueueShared::allocate(g.shared, pid, &self.census);
        let budget = self.cfg.max_budget * 2 / 3;
        let entry = self.queues.vacant_entry();
        let q = entry.key();
        let member_idx = g.members.len();
        g.members.push(q);
        entry.insert(QueueSched {
            shared,
            entity: Entity::new(100, group, budget),
            group,
            member_idx,
            sort_list: SortedVec::default(),
            fifo: SortedVec::default(),
            dispatched: 0,
            refs: 1, // the process
            wait_request: false,
            slice_start: 0,
            budget_timeout: 0,
            sync: true,
            cgroup_serial: g.serial,
        });
        q
    }

    /// `bfq_put_queue`.
    pub(crate) fn put_queue(&mut self, q: QueueId) {
        let qs = &mut self.queues[q];
        qs.refs -= 1;
        if qs.refs > 0 {
            branch!("put_queue.still-held");
            return;
        }
        // SAFETY: the queue is in the locked state, so it is allocated.
        if unsafe { qs.shared.get() }.pending() > 0 {
            branch!("put_queue.listed-pins-it");
            return; // listed requests still pin it: the splice that inserts the last frees it
        }
        branch!("put_queue.frees");
        self.free_queue(q);
    }

    /// A listed request of `q` was spliced and the splice's statistics applied: drop its pin, and
    /// free the queue if nothing else holds it (its process exited meanwhile).
    pub(crate) fn release_listed(&mut self, q: QueueId) {
        // SAFETY: the listed request pinned the queue (its pending count), so it is allocated.
        let left = unsafe { self.queues[q].shared.get() }.release_pending();
        if left == 0 && self.queues[q].refs == 0 {
            branch!("release_listed.frees");
            self.free_queue(q);
        } else {
            branch!("release_listed.still-held");
        }
    }

    /// Inserts requests taken from the insertion lists (under the scheduler lock, at the start of
    /// a dispatch): the insert work of `bfq_insert_request` for each. Their queues stay pinned by
    /// their pending counts until [`SchedState::release_listed`].
    pub(crate) fn splice(&mut self, listed: &[Listed], now: u64, sink: &mut impl StatSink) {
        for l in listed {
            self.insert(l.queue, &l.spec, now, sink);
            if fault::active(Fault::SplicePinDroppedEarly) {
                self.release_listed(l.queue); // the fault: before the statistics are applied
            }
        }
    }

    /// The fault `ExpireWithoutOwnReference` (the 2019 bug): expire, then go on with the queue as
    /// if the expiration could not have dropped its last reference. Returns whether the queue is
    /// gone.
    fn fault_expire_without_own_reference(
        &mut self,
        q: QueueId,
        now: u64,
        sink: &mut impl StatSink,
    ) -> bool {
        let queue = self.queues[q].shared;
        self.expire(q, Expiration::Preempted, now, sink);
        // SAFETY: none: this is the fault. The queue may have been freed by `expire`.
        let still_waiting = unsafe { queue.get() }.wait_request();
        debug_assert!(!still_waiting);
        self.queues.get(q).is_none()
    }

    /// Frees a queue whose references and pins are all gone.
    fn free_queue(&mut self, q: QueueId) {
        let qs = self.queues.remove(q);
        debug_assert!(!qs.entity.on_tree && !qs.entity.in_service && qs.sort_list.is_empty());
        let members = &mut self.groups[qs.group].members;
        members.swap_remove(qs.member_idx);
        if let Some(&moved) = members.get(qs.member_idx) {
            branch!("free_queue.member-moved");
            self.queues[moved].member_idx = qs.member_idx;
        } else {
            branch!("free_queue.last-member");
        }
        if let Some(retired) = GroupShared::put(self.groups[qs.group].shared) {
            branch!("free_queue.retires-group");
            self.retired.push(retired);
        } else {
            branch!("free_queue.group-still-held");
        }
        // SAFETY: the reference count reached zero under the scheduler lock: no request, process
        // or in-service slot holds the queue, and every deferred update that named it ran while
        // one of those pinned it (I1a).
        unsafe { qs.shared.free() };
    }

    fn budget_left(&self, q: QueueId) -> u64 {
        let e = &self.queues[q].entity;
        e.budget.saturating_sub(e.service)
    }

    fn better_to_idle(&self, q: QueueId) -> bool {
        self.cfg.slice_idle_ns > 0 && self.queues[q].sync
    }

    /// The request a queue would dispatch next: an expired FIFO head first (`bfq_check_fifo`),
    /// else the first at or after the head position, wrapping (`bfq_choose_req`, C-LOOK).
    fn peek_next_rq(&self, q: QueueId, now: u64) -> Option<RqId> {
        let qs = &self.queues[q];
        if let Some(&(deadline, rq)) = qs.fifo.first() {
            if deadline <= now {
                return Some(rq);
            }
        }
        qs.sort_list
            .first_at_or_after(&(self.last_position, 0))
            .or_else(|| qs.sort_list.first())
            .map(|&(_, rq)| rq)
    }

    /// `__bfq_set_in_service_queue`.
    fn set_in_service(&mut self, q: QueueId, now: u64) {
        self.in_service = Some(q);
        // Release: a timer that reads the pointer reads it with the queue initialised.
        self.in_service_hint.store(self.queues[q].shared.as_ptr(), Ordering::Release);
        let next_sectors =
            self.peek_next_rq(q, now).map_or(0, |rq| self.requests[rq].sectors as u64);
        let qs = &mut self.queues[q];
        qs.refs += 1;
        qs.slice_start = now;
        qs.budget_timeout = now + self.cfg.timeout_ns;
        // bfq_updated_next_req: the budget always covers the next request.
        qs.entity.budget = qs.entity.budget.max(next_sectors);
    }

    fn set_wait_request(&mut self, q: QueueId, on: bool) {
        let qs = &mut self.queues[q];
        qs.wait_request = on;
        // SAFETY: the queue is in the locked state, so it is allocated.
        unsafe { qs.shared.get() }.set_wait_request(on);
    }

    /// `bfq_bfqq_expire`.
    pub(crate) fn expire(
        &mut self,
        q: QueueId,
        reason: Expiration,
        now: u64,
        sink: &mut impl StatSink,
    ) {
        debug_assert_eq!(self.in_service, Some(q));
        let max_budget = self.cfg.max_budget;
        let qs = &mut self.queues[q];
        let service = qs.entity.service;
        // Budget feedback (__bfq_bfqq_recalc_budget, simplified).
        qs.entity.budget = match reason {
            Expiration::BudgetExhausted => {
                branch!("expire.budget-doubles");
                (qs.entity.budget * 2).min(max_budget)
            }
            Expiration::NoMoreRequests | Expiration::TooIdle => {
                branch!("expire.budget-follows-service");
                service.max(MIN_BUDGET).min(max_budget)
            }
            Expiration::BudgetTimeout | Expiration::Preempted => {
                branch!("expire.budget-kept");
                qs.entity.budget
            }
        };
        let used_ns = now.saturating_sub(qs.slice_start);
        let backlogged = !qs.sort_list.is_empty();
        let queue = qs.shared;
        // NOTE: `time` has no BFQ update (CFQ's timeslice_used); kept as an under-lock add per
        // expiration (kernel-map.md D30).
        sink.emit(queue, StatUpdate::TimesliceUsed { used_ns });
        if !backlogged {
            branch!("expire.empty");
            sink.emit(queue, StatUpdate::Dequeue); // bfq_del_bfqq_busy
        } else {
            branch!("expire.backlogged");
        }
        self.set_wait_request(q, false);
        self.expire_path(q, backlogged);
        self.in_service = None;
        self.in_service_hint.store(std::ptr::null_mut(), Ordering::Release);
        self.idle_deadline = None;
        tracing::trace!(name: "bfq_bfqq_expire", target: trace::PATHS, queue = q, ?reason, service, "expire");
        self.put_queue(q); // the in-service reference
    }

    /// `bfq_select_queue`: keep the queue in service, idle (`None` with a queue in service), or
    /// expire it and pick the next one.
    fn select_queue(&mut self, now: u64, sink: &mut impl StatSink) -> Option<QueueId> {
        if let Some(q) = self.in_service {
            branch!("select.checks-in-service");
            let reason = 'check: {
                let qs = &self.queues[q];
                if now >= qs.budget_timeout && !qs.wait_request {
                    branch!("select.budget-timeout");
                    break 'check Expiration::BudgetTimeout;
                }
                if let Some(rq) = self.peek_next_rq(q, now) {
                    if self.requests[rq].sectors as u64 > self.budget_left(q) {
                        branch!("select.budget-exhausted");
                        break 'check Expiration::BudgetExhausted;
                    }
                    // NOTE: BFQ also stops the idle timer here, for a request that
                    // bfq_rq_enqueued let wait (a small one, with budget left); our insert always
                    // stops it (and emits idle_time), so a waiting queue never has a request here.
                    debug_assert!(!qs.wait_request);
                    branch!("select.keeps-in-service");
                    return Some(q);
                }
                if qs.wait_request {
                    match self.idle_deadline {
                        Some(deadline) if now < deadline => {
                            branch!("select.idling");
                            return None;
                        }
                        _ => {
                            branch!("select.too-idle");
                            trace::idle_timer(q, IdleTimer::Fired);
                            break 'check Expiration::TooIdle; // the idle timer fired
                        }
                    }
                }
                if qs.dispatched > 0 && self.better_to_idle(q) {
                    branch!("select.waits-for-completion");
                    return None; // wait for the completion, which arms the timer
                }
                branch!("select.no-more-requests");
                Expiration::NoMoreRequests
            };
            self.expire(q, reason, now, sink);
        } else {
            branch!("select.none-in-service");
        }
        let Some(q) = self.get_next_queue() else {
            branch!("select.nothing-busy");
            return None;
        };
        branch!("select.new-in-service");
        self.set_in_service(q, now);
        Some(q)
    }

    /// The idle timer's handler (`bfq_idle_slice_timer`), for callers that drive time.
    ///
    /// NOTE: there is no hrtimer: the deadline is checked by `select_queue` on every dispatch and
    /// by this function, which virtual-time drivers call at the deadline (kernel-map.md D15).
    pub(crate) fn run_idle_timer(&mut self, now: u64, sink: &mut impl StatSink) -> bool {
        match (self.in_service, self.idle_deadline) {
            (Some(q), Some(deadline)) if now >= deadline && self.queues[q].wait_request => {
                branch!("idle_timer.fires");
                trace::idle_timer(q, IdleTimer::Fired);
                self.expire(q, Expiration::TooIdle, now, sink);
                true
            }
            _ => {
                branch!("idle_timer.not-due");
                false
            }
        }
    }

    /// Emits the updates the 4.15 dispatch path makes for every dispatched request.
    ///
    /// NOTE: io_service_bytes/io_serviced come from blk-cgroup's own accounting in the kernel;
    /// here they are counted at dispatch, with the others (kernel-map.md D29).
    fn emit_dispatch_stats(&mut self, rq: RqId, sink: &mut impl StatSink) {
        let absorbing = self.fault_absorbing_group(rq);
        let r = &self.requests[rq];
        let qs = &self.queues[r.queue];
        let queue = qs.shared;
        // I7: the ledger charges the group the queue is in now, under the lock; the statistics
        // below reach the queue's group when they are applied (at once, or after the unlock).
        if !self.ledger_at_insert {
            branch!("dispatch_stats.ledger-at-dispatch");
            let ledger = &mut self.groups[absorbing.unwrap_or(qs.group)].ledger;
            ledger.serviced += 1;
            ledger.service_bytes += r.sectors as i64 * 512;
        }
        sink.emit(queue, StatUpdate::AvgQueueSize);
        sink.emit(queue, StatUpdate::SetStartEmptyTime);
        sink.emit(queue, StatUpdate::IoRemove { op: r.op });
        let legacy = StatUpdate::LegacyIo { op: r.op, bytes: r.sectors as u64 * 512 };
        // The fault's switch: the request's service charged where its absorbing request was made.
        match absorbing {
            Some(g) => sink.emit_to_group(self.groups[g].shared, legacy), // not a branch point
            None => sink.emit(queue, legacy),                             // not a branch point
        }
    }

    /// `__bfq_dispatch_request`: the priority list first, then the selected queue.
    pub(crate) fn dispatch_one(&mut self, now: u64, sink: &mut impl StatSink) -> Option<RqId> {
        if let Some(rq) = self.dispatch_list.pop_front() {
            branch!("dispatch.priority-list");
            let r = &mut self.requests[rq];
            r.place = RqWhere::InFlight;
            r.io_start_ns = now;
            let q = r.queue;
            self.queues[q].dispatched += 1;
            self.counters.dispatched += 1;
            self.emit_dispatch_stats(rq, sink);
            return Some(rq);
        }
        let Some(q) = self.select_queue(now, sink) else {
            branch!("dispatch.empty");
            return None;
        };
        branch!("dispatch.from-queue");
        let rq = self.peek_next_rq(q, now).expect("a selected queue has a request");
        let r = &mut self.requests[rq];
        r.place = RqWhere::InFlight;
        r.io_start_ns = now;
        let (sector, sectors, deadline) = (r.sector, r.sectors as u64, r.fifo_deadline);
        self.last_position = sector + sectors;
        let qs = &mut self.queues[q];
        qs.sort_list.remove(&(sector, rq));
        qs.fifo.remove(&(deadline, rq));
        qs.dispatched += 1;
        self.served(q, sectors);
        self.counters.dispatched += 1;
        self.emit_dispatch_stats(rq, sink);
        if self.budget_left(q) == 0 {
            branch!("dispatch.budget-spent");
            self.expire(q, Expiration::BudgetExhausted, now, sink);
        }
        Some(rq)
    }

    fn alloc_request(&mut self, q: QueueId, spec: &RequestSpec, now: u64, place: RqWhere) -> RqId {
        let expire =
            if spec.op.sync { self.cfg.fifo_expire_sync_ns } else { self.cfg.fifo_expire_async_ns };
        self.queues[q].refs += 1; // the request pins its queue
        self.charge_allocated(q, true);
        self.requests.insert(Request {
            sector: spec.sector,
            sectors: spec.sectors,
            op: spec.op,
            queue: q,
            tag: spec.tag,
            start_ns: now,
            io_start_ns: 0,
            fifo_deadline: now + expire,
            absorbed: Vec::new(),
            place,
            #[cfg(feature = "fault-injection")]
            made_in: (self.queues[q].group, self.groups[self.queues[q].group].serial),
        })
    }

    /// The fault `MergeChargedToAbsorbingGroup`: for a request that absorbed others, the group it
    /// was made in, when that group is still online and is not its queue's group now.
    #[cfg(feature = "fault-injection")]
    fn fault_absorbing_group(&self, rq: RqId) -> Option<usize> {
        if !fault::active(Fault::MergeChargedToAbsorbingGroup) {
            return None;
        }
        let r = &self.requests[rq];
        let (g, serial) = r.made_in;
        let online = self.groups.get(g).is_some_and(|gs| gs.serial == serial);
        (!r.absorbed.is_empty() && online && g != self.queues[r.queue].group).then_some(g)
    }

    #[cfg(not(feature = "fault-injection"))]
    #[inline(always)]
    fn fault_absorbing_group(&self, _rq: RqId) -> Option<usize> {
        None
    }

    fn group_in_service(&self, q: QueueId) -> bool {
        self.in_service.is_some_and(|s| self.queues[s].group == self.queues[q].group)
    }

    /// A queued request of `q` that ends where `spec` starts and can take it.
    ///
    /// NOTE: the kernel looks merge candidates up in a hash of request end sectors over the whole
    /// scheduler and also front-merges bios; here only back merges, only against the preceding
    /// request of the same queue (notes/kernel-map.md D13).
    fn find_back_merge(&self, q: QueueId, sector: u64, sectors: u32, op: Op) -> Option<RqId> {
        let &(_, prev) = self.queues[q].sort_list.last_before(&(sector, 0))?;
        let r = &self.requests[prev];
        let fits = r.sectors + sectors <= self.cfg.max_merge_sectors;
        (r.sector + r.sectors as u64 == sector && r.op.merge_compatible(op) && fits).then_some(prev)
    }

    // ---- the submission's early sites: group lookup, bio merge, depth limit ----

    /// `bfq_bic_update_cgroup` with `bfq_bio_bfqg`: the group a request of `q` belongs to, looked
    /// up from its cgroup (the blkg index, then up to the first online ancestor), and compared with
    /// what the queue's process context cached. Returns the group's slot.
    ///
    /// NOTE: in the kernel the bio names its blkcg, which may differ from the queue's group after a
    /// cgroup move until this lookup moves the queue; here a process move is explicit
    /// (`move_queue`), so the lookup finds the queue's own group and only refreshes the cache
    /// (kernel-map.md D47). The cost it re-creates is the lookup itself, per request.
    pub(crate) fn lookup_bio_group(&mut self, q: QueueId) -> usize {
        self.counters.group_lookups += 1;
        let qs = &self.queues[q];
        let group = qs.group;
        let cached = qs.cgroup_serial;
        // The cgroup's blkg, if it is still online; else its queue was moved to an ancestor.
        let mut found = self.blkg_index.get(&cached).copied().unwrap_or(group);
        while !self.blkg_index.contains_key(&self.groups[found].serial) {
            found = self.groups[found].parent.unwrap_or(self.root);
        }
        if found != group || self.groups[found].serial != cached {
            branch!("lookup.stale-cache");
            // The process context's cached serial is stale (its group was removed or it moved).
            self.queues[q].cgroup_serial = self.groups[group].serial;
        } else {
            branch!("lookup.cached");
        }
        group
    }

    /// `entity->allocated` of `q`'s entity and every group entity above it (not the root's),
    /// up by one when a request is allocated, down by one when it is freed. As in the kernel the
    /// free walks the queue's hierarchy at that moment, so a move with requests out leaves
    /// counts behind (saturating here, kernel-map.md D48).
    fn charge_allocated(&mut self, q: QueueId, up: bool) {
        let mut key = EntityKey::Queue(q);
        loop {
            let e = self.entity_mut(key);
            e.allocated = if up { e.allocated + 1 } else { e.allocated.saturating_sub(1) };
            let parent = e.parent;
            if parent == self.root {
                return;
            }
            key = EntityKey::Group(parent);
        }
    }

    /// `bfq_bio_merge` under the scheduler lock: look the group up (as insert does), then look in
    /// the queue's sorted tree for a queued request the bio can join: one that ends where the bio
    /// starts (back merge, the elevator hash's lookup), or one that starts where the bio ends
    /// (front merge, `bfq_request_merge`). Returns whether the bio was merged: then no request is
    /// made for it, and its tag completes with the request it joined.
    pub(crate) fn bio_merge(
        &mut self,
        q: QueueId,
        spec: &RequestSpec,
        sink: &mut impl StatSink,
    ) -> bool {
        self.lookup_bio_group(q);
        if spec.at_head {
            branch!("bio_merge.at-head");
            return false; // a flush or priority request never merges
        }
        if let Some(prev) = self.find_back_merge(q, spec.sector, spec.sectors, spec.op) {
            branch!("bio_merge.back");
            self.counters.inserted += 1;
            self.counters.bio_merged += 1;
            self.back_merge(q, prev, spec, sink);
            return true;
        }
        let Some(next) = self.find_front_merge(q, spec.sector, spec.sectors, spec.op) else {
            branch!("bio_merge.none");
            return false;
        };
        branch!("bio_merge.front");
        self.counters.inserted += 1;
        self.counters.bio_merged += 1;
        self.counters.merged += 1;
        self.groups[self.queues[q].group].ledger.merged += 1;
        let r = &mut self.requests[next];
        let old = r.sector;
        r.sector = spec.sector;
        r.sectors += spec.sectors;
        r.absorbed.push(spec.tag);
        // bfq_request_merged: the request moved in the sorted tree.
        let qs = &mut self.queues[q];
        qs.sort_list.remove(&(old, next));
        qs.sort_list.insert((spec.sector, next));
        // NOTE: no attempt_front_merge into the request before it (kernel-map.md D13).
        sink.emit(qs.shared, StatUpdate::IoMerged { op: spec.op });
        true
    }

    /// A queued request of `q` that starts where `spec` ends and can take it in front.
    fn find_front_merge(&self, q: QueueId, sector: u64, sectors: u32, op: Op) -> Option<RqId> {
        let end = sector + sectors as u64;
        let &(start, next) = self.queues[q].sort_list.first_at_or_after(&(end, 0))?;
        let r = &self.requests[next];
        let fits = r.sectors + sectors <= self.cfg.max_merge_sectors;
        (start == end && r.op.merge_compatible(op) && fits).then_some(next)
    }

    /// `bfqq_request_over_limit` under the scheduler lock: walk `q`'s entity up its group
    /// hierarchy, and from the top down shrink the device's `limit` to each level's share
    /// (`limit × weight ÷ wsum` of the tree it is on); the queue is over its share when some
    /// level has `allocated` at or above its share. An entity off its tree ends the walk: the
    /// scheduler must see that there is work.
    pub(crate) fn over_limit(&mut self, q: QueueId, limit: u32) -> bool {
        let mut chain: [EntityKey; 16] = [EntityKey::Queue(q); 16];
        let mut depth = 0;
        let mut key = EntityKey::Queue(q);
        loop {
            let e = self.entity(key);
            if !(e.on_tree || e.in_service) {
                branch!("limit.inactive");
                return false;
            }
            if depth == chain.len() {
                branch!("limit.too-deep");
                break; // deeper than the kernel's inline array: the rest is not limited
            }
            chain[depth] = key;
            depth += 1;
            if e.parent == self.root {
                branch!("limit.reached-top");
                break;
            }
            branch!("limit.walks-up");
            key = EntityKey::Group(e.parent);
        }
        let mut limit = limit as u64;
        for &key in chain[..depth].iter().rev() {
            let e = self.entity(key);
            let wsum = self.groups[e.parent].sd.wsum;
            if wsum == 0 {
                branch!("limit.empty-tree");
                continue;
            }
            limit = (limit * e.weight + wsum / 2) / wsum;
            if e.allocated as u64 >= limit {
                branch!("limit.over");
                self.counters.over_limit += 1;
                return true;
            }
        }
        branch!("limit.under");
        false
    }

    /// The device's request limit for the depth limit ([`SchedConfig::nr_requests`]).
    pub(crate) fn nr_requests(&self) -> u32 {
        self.cfg.nr_requests
    }

    /// The request `spec` joins the queued request `prev` that ends where it starts
    /// (`blk_mq_sched_try_insert_merge` at insert, the hash lookup of `blk_mq_sched_try_merge` for
    /// a bio), then `attempt_back_merge`: the grown request may absorb the next queued one.
    fn back_merge(&mut self, q: QueueId, prev: RqId, spec: &RequestSpec, sink: &mut impl StatSink) {
        let queue = self.queues[q].shared;
        let r = &mut self.requests[prev];
        r.sectors += spec.sectors;
        r.absorbed.push(spec.tag);
        let end = r.sector + r.sectors as u64;
        self.counters.merged += 1;
        self.groups[self.queues[q].group].ledger.merged += 1;
        sink.emit(queue, StatUpdate::IoMerged { op: spec.op });
        // attempt_back_merge: the grown request may now reach the next queued one.
        let next = self.queues[q]
            .sort_list
            .first_at_or_after(&(end, 0))
            .filter(|&&(s, _)| s == end)
            .map(|&(_, id)| id);
        if let Some(next) = next {
            let (n_sectors, n_op) = (self.requests[next].sectors, self.requests[next].op);
            let fits = self.requests[prev].sectors + n_sectors <= self.cfg.max_merge_sectors;
            if fits && n_op.merge_compatible(self.requests[prev].op) {
                branch!("merge.absorbs-next");
                let n = self.requests.remove(next);
                let qs = &mut self.queues[q];
                qs.sort_list.remove(&(n.sector, next));
                qs.fifo.remove(&(n.fifo_deadline, next));
                let r = &mut self.requests[prev];
                r.sectors += n.sectors;
                r.absorbed.push(n.tag);
                r.absorbed.extend_from_slice(&n.absorbed);
                self.counters.merged += 1;
                self.groups[self.queues[q].group].ledger.merged += 1;
                // bfq_requests_merged: the absorbed request leaves the scheduler.
                if !fault::active(Fault::MergeWithoutIoRemove) {
                    sink.emit(queue, StatUpdate::IoRemove { op: n.op });
                }
                sink.emit(queue, StatUpdate::IoMerged { op: n.op });
                self.charge_allocated(q, false); // `next` is freed
                self.put_queue(q); // `next`'s reference; the process still holds one
            } else {
                branch!("merge.next-cannot-join");
            }
        } else {
            branch!("merge.nothing-next");
        }
    }

    /// `bfq_insert_request` (with `blk_mq_sched_try_insert_merge` and `__bfq_insert_request`).
    pub(crate) fn insert(
        &mut self,
        q: QueueId,
        spec: &RequestSpec,
        now: u64,
        sink: &mut impl StatSink,
    ) -> InsertOutcome {
        self.counters.inserted += 1;
        // bfq_init_rq → bfq_bic_update_cgroup: every request looks its group up.
        let group = self.lookup_bio_group(q);
        if self.ledger_at_insert {
            branch!("insert.ledger-at-insert");
            // I7: the request was counted at submission, in the group of the queue (the process
            // pinned it); it is charged to the queue's group now, under the lock.
            let ledger = &mut self.groups[group].ledger;
            ledger.serviced += 1;
            ledger.service_bytes += spec.sectors as i64 * 512;
        }
        let queue = self.queues[q].shared;
        if spec.at_head {
            branch!("insert.at-head");
            let rq = self.alloc_request(q, spec, now, RqWhere::DispatchList);
            self.dispatch_list.push_front(rq);
            // Seed patch 2/4: requests on the priority list are accounted too.
            if !fault::active(Fault::AtHeadWithoutIoAdd) {
                sink.emit(
                    queue,
                    StatUpdate::IoAdd { op: spec.op, group_in_service: self.group_in_service(q) },
                );
            }
            return InsertOutcome::Queued { idle_timer_disabled: false };
        }
        // Every path in and out of the scheduler updates `queued` (seed patch 2/4; invariants.md
        // I2): io_merged for a request merged at insert (it never entered), io_remove + io_merged
        // for a queued request absorbed by the merge, io_add otherwise; io_remove at dispatch.
        if let Some(prev) = self.find_back_merge(q, spec.sector, spec.sectors, spec.op) {
            branch!("insert.merges");
            self.back_merge(q, prev, spec, sink);
            return InsertOutcome::Merged;
        }
        branch!("insert.queues");
        let rq = self.alloc_request(q, spec, now, RqWhere::Sorted);
        let deadline = self.requests[rq].fifo_deadline;
        let qs = &mut self.queues[q];
        qs.sort_list.insert((spec.sector, rq));
        qs.fifo.insert((deadline, rq));
        qs.sync = spec.op.sync;
        let waiting = qs.wait_request;
        self.activate(EntityKey::Queue(q)); // bfq_add_bfqq_busy when it was idle
                                            // bfq_rq_enqueued: a request for the idling in-service queue stops the idle timer.
        if waiting {
            branch!("insert.stops-idle-timer");
            self.set_wait_request(q, false);
            self.idle_deadline = None;
            trace::idle_timer(q, IdleTimer::Disabled);
        }
        sink.emit(
            queue,
            StatUpdate::IoAdd { op: spec.op, group_in_service: self.group_in_service(q) },
        );
        if waiting {
            branch!("insert.emits-idle-time");
            sink.emit(queue, StatUpdate::IdleTime);
        }
        InsertOutcome::Queued { idle_timer_disabled: waiting }
    }

    /// `bfq_completed_request` and `bfq_put_rq_priv_body`: the request leaves the device.
    pub(crate) fn complete(&mut self, rq: RqId, now: u64, sink: &mut impl StatSink) -> Request {
        let r = self.requests.remove(rq);
        debug_assert_eq!(r.place, RqWhere::InFlight);
        let q = r.queue;
        self.charge_allocated(q, false);
        self.counters.completed += 1;
        let qs = &mut self.queues[q];
        qs.dispatched -= 1;
        if self.in_service == Some(q) && qs.sort_list.is_empty() && qs.dispatched == 0 {
            if self.better_to_idle(q) {
                branch!("complete.arms-idle-timer");
                // bfq_arm_slice_timer
                self.set_wait_request(q, true);
                self.idle_deadline = Some(now + self.cfg.slice_idle_ns);
                trace::idle_timer(
                    q,
                    IdleTimer::Armed { deadline_ns: now + self.cfg.slice_idle_ns },
                );
                sink.emit(self.queues[q].shared, StatUpdate::SetStartIdleTime);
            } else {
                branch!("complete.expires");
                self.expire(q, Expiration::NoMoreRequests, now, sink);
            }
        } else {
            branch!("complete.queue-goes-on");
        }
        self.put_queue(q); // the request's reference
        r
    }

    /// Requests in the scheduler (sorted lists and priority list) and on the device.
    pub(crate) fn requests_outstanding(&self) -> (usize, usize) {
        let in_flight = self.requests.iter().filter(|(_, r)| r.place == RqWhere::InFlight).count();
        (self.requests.len() - in_flight, in_flight)
    }

    pub(crate) fn queue_group(&self, q: QueueId) -> usize {
        self.queues[q].group
    }
}
