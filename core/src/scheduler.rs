//! The scheduler's public face: the three hot paths shaped like `bfq_insert_request`,
//! `bfq_dispatch_request` and `bfq_finish_request`, group creation and removal, processes.
//!
//! Each path takes the scheduler lock, does the scheduling work in `state/`, routes every
//! statistics update through the policy (applied under the lock, or put in a batch), releases the
//! lock, and hands the batch to the policy's `run_deferred`. Lock order: queue lock, then
//! scheduler lock (group removal holds both when the policy asks; a deferred update takes only
//! the queue lock, after the scheduler lock is released).

use crate::clock::SchedClock;
use crate::fault::{self, Fault};
use crate::inject::PadSite;
use crate::insert::{DispatchSite, InsertLists, InsertPathKind, InsertSite};
use crate::lockstat::{self, LockClass, LockPath};
use crate::objects::rstat::RstatLists;
use crate::objects::{Census, GroupPtr, QueueRef, QueueShared, RetiredGroup};
use crate::policy::{DeferredBatch, DeferredCx, LockedView, Route, StatsPolicy};
use crate::profile::{KernelProfile, SubmitSite};
use crate::protection::{Protection, Reclaimer};
use crate::state::{
    InsertOutcome, Ledger, QueueId, RequestCounters, RequestSpec, RqId, SchedConfig, SchedState,
    StatSink,
};
use crate::stats::{Op, StatsSnapshot};
use crate::sync::{Arc, AtomicPtr, AtomicU64, Lock, LockGuard, LockKind, OracleArc, Ordering};
use crate::trace::{self, PathSpan};
use crate::update::{Path, StatEvent, StatKind, StatUpdate, StatsKept};
use std::fmt;

/// Names a group for as long as it is online (slab key + serial, so a stale id is detected).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize)]
pub struct GroupId {
    key: u32,
    serial: u64,
}

impl GroupId {
    /// A number naming the group for its whole life.
    pub fn serial(self) -> u64 {
        self.serial
    }
}

impl fmt::Display for GroupId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "g{}", self.serial)
    }
}

/// Why a group or process operation was refused.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SchedError {
    /// The group does not exist (never did, or went offline).
    NoSuchGroup(GroupId),
    /// Weights are 1..=1000, as in BFQ.
    BadWeight(u64),
    /// The root group cannot be removed.
    RootGroup,
    /// A group with online children cannot be removed (cgroup rmdir semantics).
    HasChildren(GroupId),
    /// The variant's deferred updates are unsafe under group removal or process moves.
    UnsafeUnderRemoval(&'static str),
}

impl fmt::Display for SchedError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SchedError::NoSuchGroup(g) => write!(f, "no such group {g}"),
            SchedError::BadWeight(w) => write!(f, "group weight must be 1..=1000, got {w}"),
            SchedError::RootGroup => write!(f, "the root group cannot be removed"),
            SchedError::HasChildren(g) => write!(f, "group {g} still has child groups"),
            SchedError::UnsafeUnderRemoval(v) => {
                write!(f, "variant `{v}` updates group stats with no protection: groups cannot be removed or processes moved while it runs")
            }
        }
    }
}

impl std::error::Error for SchedError {}

/// A group as seen from outside.
#[derive(Clone, Debug, serde::Serialize)]
pub struct GroupInfo {
    pub id: GroupId,
    pub parent: Option<GroupId>,
    pub weight: u64,
    pub depth: u32,
    pub queues: usize,
}

/// The end-of-run conservation checks (see [`Scheduler::check_consistency`]).
#[derive(Clone, Debug, Default, serde::Serialize)]
pub struct Consistency {
    pub counters: RequestCounters,
    /// inserted = completed + merged + still in the scheduler or on the device.
    pub requests_balance: bool,
    /// Requests still queued, and on the device.
    pub outstanding: (usize, usize),
    /// Requests on insertion lists, not yet in the scheduler (`insert/lists.rs`; they are not
    /// counted as inserted until spliced).
    pub listed: usize,
    /// Groups whose `queued` total is not 0 (only checked when the policy keeps debug stats).
    pub groups_with_queued: Vec<(GroupId, i64)>,
    /// Sum of io_serviced over online groups (removed groups handed theirs to their parents).
    pub io_serviced_sum: Option<i64>,
    /// io_serviced sum = dispatched (when the policy keeps io_serviced).
    pub io_serviced_matches: bool,
    /// Online groups whose kept statistics differ from what the scheduler charged them (I7,
    /// attribution: a request's service, bytes and merges belong to the group that issued it, or
    /// after its removal to the parent that inherited it): `(group, kept, charged)`, with the
    /// fields the policy does not keep left at 0 in both. Exact only if no process moved while a
    /// request of its was on the device (the precondition I2's per-group `queued` has too).
    pub groups_misattributed: Vec<(GroupId, Ledger, Ledger)>,
    /// Removed groups still awaiting their grace period. Each may hold statistics its parent has
    /// not received yet (epoch: updates that reached it after removal; rstat: everything not
    /// flushed before removal, drained at release), so a check with any is incomplete: call
    /// [`Scheduler::quiesce_until_reclaimed`] first.
    pub awaiting_reclamation: usize,
    /// Everything above holds.
    pub ok: bool,
}

/// The scheduler instance (`struct bfq_data` plus its locks and policy).
pub struct Scheduler<P: StatsPolicy> {
    state: Lock<SchedState>,
    /// How requests enter the scheduler (`insert/`), and the insertion lists of the lists path.
    insert_path: InsertPathKind,
    /// Which lock sites a submission runs (`profile.rs`).
    profile: KernelProfile,
    /// The injected cost spent before every insert (`inject.rs`), ns.
    inject_outside_ns: u64,
    /// The gaps spun between the submission's sites ([`crate::inject::SitePads::gap_ns`]).
    pads_gap_ns: [u64; 3],
    insert_lists: Lock<InsertLists>,
    /// The per-CPU rstat lists, when the policy keeps them (`objects/rstat.rs`).
    rstat: Option<OracleArc<RstatLists>>,
    /// The in-service queue as the idle-slice timer reads it, outside the lock (`state/`).
    in_service_hint: Arc<AtomicPtr<QueueShared>>,
    queue_lock: Lock<()>,
    policy: P,
    clock: SchedClock,
    census: OracleArc<Census>,
    next_pid: AtomicU64,
}

/// Routes updates emitted under the scheduler lock: applied now, batched, or dropped.
struct Router<'a, P: StatsPolicy> {
    policy: &'a P,
    batch: &'a mut DeferredBatch,
    now: u64,
}

/// The route an update takes: the policy's, except that the lock-only kinds
/// (`StatKind::deferrable` is false) are applied under the lock even if the policy asks to defer
/// them: their queue may be freed in the same critical section (notes/invariants.md, "Lock-only
/// updates").
#[inline]
fn effective_route<P: StatsPolicy>(policy: &P, kind: StatKind) -> Route {
    if P::LEGACY_IO_AT_SUBMIT && kind == StatKind::LegacyIo {
        return Route::Skip; // counted at submission (`Process::count_at_submit`), not at dispatch
    }
    match policy.route(kind) {
        Route::Defer if !kind.deferrable() && !fault_defer_lock_only_updates() => Route::Now,
        route => route,
    }
}

/// The fault `DeferLockOnlyUpdates` (fault.rs): the lock-only kinds deferred as the policy asks.
#[inline(always)]
fn fault_defer_lock_only_updates() -> bool {
    fault::active(Fault::DeferLockOnlyUpdates)
}

impl<P: StatsPolicy> StatSink for Router<'_, P> {
    /// Always inlined: with the trace gate in `apply_to` the inliner stopped inlining it into the
    /// locked paths (callgrind: about 260 more instructions per round trip).
    #[inline(always)]
    fn emit(&mut self, queue: QueueRef, update: StatUpdate) {
        match effective_route(self.policy, update.kind()) {
            Route::Now => apply_locked(queue, update, self.now),
            Route::Defer => self.batch.push_pinned(StatEvent { queue, update }),
            Route::Skip => {}
        }
    }

    fn emit_to_group(&mut self, group: GroupPtr, update: StatUpdate) {
        if effective_route(self.policy, update.kind()) != Route::Skip {
            let _section = lockstat::stats_section();
            // SAFETY: called with the scheduler lock held, for an online group of the locked
            // state, which holds the group's online reference: it is allocated.
            update.apply_to(unsafe { group.get(&group) }, self.now);
        }
    }
}

/// Applies an update under the scheduler lock (always inlined: the stats section's guard made it
/// too big for the inliner, which cost every update a call).
#[inline(always)]
fn apply_locked(queue: QueueRef, update: StatUpdate, now: u64) {
    let _section = lockstat::stats_section();
    // SAFETY: called with the scheduler lock held, for a queue that is in the locked state (the
    // paths emit only for queues they hold), so the queue is allocated; its current group is
    // referenced by the queue and changes only under the scheduler lock, so it is allocated too.
    let queue = unsafe { queue.get() };
    // SAFETY: as above; the queue (the witness) references its current group.
    let group = unsafe { queue.current_group().get(queue) };
    update.apply_to(group, now);
}

impl<P: StatsPolicy> Scheduler<P> {
    /// A scheduler with its root group.
    pub fn new(lock: LockKind, config: SchedConfig, clock: SchedClock) -> Arc<Self> {
        assert!((1..=64).contains(&config.slots), "slots must be 1..=64");
        // The lock classes' names and spans (measurement hooks: nothing the scheduler does).
        lockstat::install();
        let census = OracleArc::new(Census::default());
        let rstat = P::RSTAT_LISTS.then(|| OracleArc::new(RstatLists::new(config.slots)));
        let insert_path = config.insert;
        let profile = config.profile;
        let inject_outside_ns = config.inject.outside_ns();
        let pads_gap_ns = config.pads.gap_ns;
        let mut state =
            SchedState::new(config, census.clone(), Self::new_group_state, rstat.clone());
        state.ledger_at_insert = P::LEGACY_IO_AT_SUBMIT;
        Arc::new(Scheduler {
            insert_path,
            profile,
            inject_outside_ns,
            pads_gap_ns,
            insert_lists: Lock::named(lock, LockClass::register("insert"), InsertLists::default()),
            rstat,
            in_service_hint: state.in_service_hint.clone(),
            state: Lock::named(lock, LockClass::SCHED, state),
            queue_lock: Lock::named(lock, LockClass::QUEUE, ()),
            policy: P::default(),
            clock,
            census,
            next_pid: AtomicU64::new(1),
        })
    }

    fn new_group_state() -> Box<dyn std::any::Any + Send + Sync> {
        Box::new(P::GroupState::default())
    }

    /// The variant's name.
    pub fn variant(&self) -> &'static str {
        P::NAME
    }

    pub fn policy(&self) -> &P {
        &self.policy
    }

    pub fn lock_kind(&self) -> LockKind {
        self.state.kind()
    }

    pub fn clock(&self) -> &SchedClock {
        &self.clock
    }

    /// Live-object counts; keep the `Arc` to read them after the scheduler is gone.
    pub fn census(&self) -> OracleArc<Census> {
        self.census.clone()
    }

    fn lock(&self) -> LockGuard<'_, SchedState> {
        self.state.lock()
    }

    fn cx(&self) -> DeferredCx<'_, P::Protection> {
        DeferredCx::new(&self.queue_lock, &self.clock, self.rstat.as_deref())
    }

    /// The insert path this scheduler uses.
    pub fn insert_path(&self) -> InsertPathKind {
        self.insert_path
    }

    /// The kernel generation whose lock sites a submission runs.
    pub fn profile(&self) -> KernelProfile {
        self.profile
    }

    /// Flushes the rstat lists, if the policy keeps them: every statistics read starts with it
    /// (`blkcg_print_stat` flushes before it reads).
    fn flush_rstat(&self) {
        if let Some(lists) = &self.rstat {
            lists.flush_for_read();
        }
    }

    fn retire(&self, retired: Vec<RetiredGroup>) {
        let reclaim = Reclaimer::new();
        for group in retired {
            self.policy.retire_group(group, &reclaim);
        }
    }

    /// The slot of the online group `id` names: a handle carries the group's serial (its
    /// generation), so a handle kept past its group's removal never reaches a group created later
    /// in the same slot (notes/invariants.md I6).
    fn lookup(st: &SchedState, id: GroupId) -> Result<usize, SchedError> {
        match st.groups.get(id.key as usize) {
            Some(g)
                if g.serial == id.serial || fault::active(Fault::GroupHandleWithoutGeneration) =>
            {
                Ok(id.key as usize)
            }
            _ => Err(SchedError::NoSuchGroup(id)),
        }
    }

    fn id_of(st: &SchedState, key: usize) -> GroupId {
        GroupId { key: key as u32, serial: st.groups[key].serial }
    }

    /// The root group.
    pub fn root(&self) -> GroupId {
        let st = self.lock();
        Self::id_of(&st, st.root)
    }

    /// Creates a group under `parent` (`bfq_pd_init`).
    pub fn create_group(&self, parent: GroupId, weight: u64) -> Result<GroupId, SchedError> {
        if !(1..=1000).contains(&weight) {
            branch!("create.bad-weight");
            return Err(SchedError::BadWeight(weight));
        }
        let mut st = self.lock();
        let Ok(parent) = Self::lookup(&st, parent) else {
            branch!("create.parent-gone");
            return Err(SchedError::NoSuchGroup(parent));
        };
        branch!("create.under-online-parent");
        if fault::active(Fault::CreateSplitsLookup) {
            let shared = st.groups[parent].shared;
            drop(st);
            st = self.fault_pin_parent_after_unlock(shared, parent)?; // not a branch point: the fault's
        }
        let (key, serial) = st.create_group(parent, weight, Self::new_group_state());
        tracing::debug!(name: "group created", target: trace::GROUPS, group = serial, weight, "group created");
        Ok(GroupId { key: key as u32, serial })
    }

    /// The fault `CreateSplitsLookup`: the parent found under the previous hold is pinned after
    /// the unlock (a removal in between may have freed it), and creation goes on under a second
    /// hold if the parent's slot still holds it.
    #[cold]
    fn fault_pin_parent_after_unlock(
        &self,
        shared: crate::objects::GroupPtr,
        parent: usize,
    ) -> Result<LockGuard<'_, SchedState>, SchedError> {
        // SAFETY: none: this is the fault. The parent looked up under the previous hold may have
        // been removed and freed since the unlock.
        unsafe { shared.get(&shared) }.get();
        let st = self.lock();
        match st.groups.get(parent) {
            Some(g) if g.shared.addr() == shared.addr() => Ok(st),
            _ => Err(SchedError::NoSuchGroup(GroupId { key: parent as u32, serial: 0 })),
        }
    }

    /// Removes a group: offline now (its queues move to the parent, its statistics are added into
    /// the parent's), freed when its last reference goes.
    pub fn remove_group(&self, id: GroupId) -> Result<(), SchedError> {
        if !<P::Protection as Protection>::ALLOWS_REMOVAL {
            branch!("remove.refused-by-protection");
            return Err(SchedError::UnsafeUnderRemoval(P::NAME));
        }
        trace::in_path(PathSpan::Offline { group: id.serial }, || self.remove_group_body(id))
    }

    fn remove_group_body(&self, id: GroupId) -> Result<(), SchedError> {
        let _path = lockstat::enter(LockPath::GroupRemoval);
        // Lock order: queue lock, then scheduler lock (blkcg holds queue_lock around pd_offline).
        let queue_guard =
            <P::Protection as Protection>::REMOVAL_HOLDS_QUEUE_LOCK.then(|| self.queue_lock.lock());
        let mut st = self.lock();
        let Ok(g) = Self::lookup(&st, id) else {
            branch!("remove.already-gone");
            return Err(SchedError::NoSuchGroup(id));
        };
        if g == st.root {
            branch!("remove.root");
            return Err(SchedError::RootGroup);
        }
        if st.online_children(g) > 0 {
            branch!("remove.has-children");
            return Err(SchedError::HasChildren(id));
        }
        branch!("remove.offlines");
        let now = self.clock.now_ns();
        let mut batch = DeferredBatch::new(Path::Dispatch);
        let group =
            st.offline_group(g, now, &mut Router { policy: &self.policy, batch: &mut batch, now });
        // SAFETY: the group still holds its online reference, and the lock (`st`) is held.
        self.policy.group_offline(unsafe { group.get(&st) });
        st.put_online_ref(group);
        debug_assert!(batch.is_empty(), "offline emits only lock-only updates");
        let retired = std::mem::take(&mut st.retired);
        drop(st);
        tracing::debug!(name: "group offline", target: trace::GROUPS, group = id.serial, "group offline");
        // Still under the queue lock when the policy relies on it (I1b).
        self.retire(retired);
        drop(queue_guard);
        Ok(())
    }

    /// Every online group.
    pub fn groups(&self) -> Vec<GroupInfo> {
        let st = self.lock();
        st.groups
            .iter()
            .map(|(key, g)| GroupInfo {
                id: Self::id_of(&st, key),
                parent: g.parent.map(|p| Self::id_of(&st, p)),
                weight: g.shared_weight(),
                depth: g.depth,
                queues: g.members.len(),
            })
            .collect()
    }

    /// A group's statistics.
    pub fn group_stats(&self, id: GroupId) -> Result<StatsSnapshot, SchedError> {
        self.flush_rstat();
        let st = self.lock();
        let Ok(g) = Self::lookup(&st, id) else {
            branch!("stats.group-gone");
            return Err(SchedError::NoSuchGroup(id));
        };
        branch!("stats.reads");
        if fault::active(Fault::StatsReadOutsideLock) {
            let group = st.groups[g].shared;
            drop(st);
            // SAFETY: none: the fault reads a group that a removal may have freed since the
            // unlock (a negative control: the models must reject it).
            let shared = unsafe { group.get(&group) };
            let snapshot = shared.stats().snapshot();
            // The reader's last look at the group (which the snapshot's counter reads, scheduling
            // points of the checker, may have let a removal free): its serial, for the label.
            let _ = shared.serial();
            return Ok(snapshot); // not a branch point: the fault's
        }
        // SAFETY: the group is online (in the slab) and the lock is held: its online reference
        // keeps it allocated.
        Ok(unsafe { st.groups[g].shared.get(&st) }.stats().snapshot())
    }

    /// Runs `f` on an online group's shared part (statistics, policy state), under the lock.
    pub fn inspect_group<R>(
        &self,
        id: GroupId,
        f: impl FnOnce(&crate::objects::GroupShared) -> R,
    ) -> Result<R, SchedError> {
        self.flush_rstat();
        let st = self.lock();
        let Ok(g) = Self::lookup(&st, id) else {
            branch!("inspect.group-gone");
            return Err(SchedError::NoSuchGroup(id));
        };
        branch!("inspect.reads");
        // SAFETY: the group is online and the lock is held: its online reference keeps it allocated.
        Ok(f(unsafe { st.groups[g].shared.get(&st) }))
    }

    /// A new process with its own queue in `group` (`bfq_get_queue` for a new io context).
    ///
    /// The process borrows the scheduler: every path it runs (and every deferred update inside
    /// one) ends before the scheduler can be torn down (I4).
    pub fn spawn_process(&self, group: GroupId) -> Result<Process<'_, P>, SchedError> {
        let pid = self.next_pid.fetch_add(1, Ordering::Relaxed);
        let mut st = self.lock();
        let Ok(g) = Self::lookup(&st, group) else {
            branch!("spawn.group-gone");
            return Err(SchedError::NoSuchGroup(group));
        };
        branch!("spawn.in-online-group");
        let queue = st.new_queue(g, pid);
        let shared = st.queue_ref(queue);
        drop(st);
        Ok(Process { sched: self, queue, shared, pid })
    }

    /// `bfq_dispatch_request`: the next request for the device, if any.
    pub fn dispatch(&self) -> Option<Dispatched<'_, P>> {
        trace::in_path(PathSpan::Dispatch, || self.dispatch_body())
    }

    #[inline(always)]
    fn dispatch_body(&self) -> Option<Dispatched<'_, P>> {
        let _path = lockstat::enter(LockPath::Dispatch);
        // The lists path: what was listed since the last dispatch enters the scheduler first.
        let listed = self.insert_path.take_listed(self);
        let mut batch = DeferredBatch::new(Path::Dispatch);
        let mut st = self.lock();
        let now = self.clock.now_ns();
        let capture = self.policy.dispatch_begin(&LockedView { state: &st });
        if !listed.is_empty() {
            branch!("dispatch.splices");
            st.splice(&listed, now, &mut Router { policy: &self.policy, batch: &mut batch, now });
            let per_request = st.cfg.inject.inside_ns() + st.cfg.pads.hold(PadSite::Insert);
            crate::inject::spin(&self.clock, per_request * listed.len() as u64);
        }
        let rq = st.dispatch_one(now, &mut Router { policy: &self.policy, batch: &mut batch, now });
        // An empty dispatch is BFQ's short look at its service trees: no pad (not a branch point:
        // a value).
        crate::inject::spin(
            &self.clock,
            st.cfg.pads.hold(PadSite::Dispatch) * u64::from(rq.is_some()),
        );
        self.policy.dispatch_end(&LockedView { state: &st }, capture, &mut batch);
        let dispatched = rq.map(|rq| {
            let r = &st.requests[rq];
            Dispatched {
                sched: self,
                rq: Some(rq),
                queue: st.queue_ref(r.queue),
                tag: r.tag,
                sector: r.sector,
                sectors: r.sectors,
                op: r.op,
                start_ns: r.start_ns,
                io_start_ns: r.io_start_ns,
            }
        });
        let retired =
            if st.retired.is_empty() { Vec::new() } else { std::mem::take(&mut st.retired) }; // not a branch point: a value
        drop(st);
        if dispatched.is_none() && fault::active(Fault::EmptyDispatchReturnsEarly) {
            return None; // the fault: the splice's statistics and pins are left behind
        }
        if !batch.is_empty() {
            branch!("dispatch.runs-deferred");
            let _stats = lockstat::enter(LockPath::Stats);
            self.policy.run_deferred(&self.cx(), &mut batch);
        } else {
            branch!("dispatch.nothing-deferred");
        }
        if !listed.is_empty() && !fault::active(Fault::SplicePinDroppedEarly) {
            branch!("dispatch.releases-listed");
            // The spliced requests' statistics are applied: their pins on their queues can go
            // (I1a: until here, a spliced request merged into another one, or dispatched and
            // completed by another thread meanwhile, left its queue pinned only by this).
            let mut st = self.lock();
            for l in &listed {
                st.release_listed(l.queue);
            }
            debug_assert!(st.retired.is_empty(), "a queue's free dropped a group's last reference");
        }
        if !retired.is_empty() {
            branch!("dispatch.retires-a-group");
            self.retire_outside_removal(retired);
        }
        dispatched
    }

    /// The idle-slice timer's handler (`bfq_idle_slice_timer`), for callers that drive time: it
    /// expires the in-service queue if it is still idling past its deadline.
    ///
    /// As in the kernel, the handler reads the in-service queue *before* it takes the scheduler
    /// lock (the hrtimer callback has only `bfqd`), so what it read may have been expired and freed
    /// by a dispatch or a process exit meanwhile. Under the lock it first checks that the queue is
    /// still the one in service, and touches it only then (notes/invariants.md I5; the 2020 fix:
    /// fault.rs, `IdleTimerTouchesBeforeCheck`).
    pub fn run_idle_timer(&self) -> bool {
        // Acquire pairs with the Release stores in `state/` (`set_in_service`, `expire`).
        let Some(queue) = QueueRef::from_ptr(self.in_service_hint.load(Ordering::Acquire)) else {
            branch!("timer.nothing-in-service");
            return false;
        };
        let mut batch = DeferredBatch::new(Path::Dispatch);
        let mut st = self.lock();
        if fault::active(Fault::IdleTimerTouchesBeforeCheck) {
            fault_touch_before_check(queue);
        }
        // I5: touch the queue read without the lock only if it is still the one in service (then
        // the in-service reference holds it).
        if st.in_service_queue_ref() != Some(queue) {
            branch!("timer.read-queue-expired");
            return false; // expired (and possibly freed) since it was read: nothing to do
        }
        branch!("timer.read-queue-in-service");
        let now = self.clock.now_ns();
        let fired =
            st.run_idle_timer(now, &mut Router { policy: &self.policy, batch: &mut batch, now });
        let retired = std::mem::take(&mut st.retired);
        drop(st);
        debug_assert!(batch.is_empty());
        self.retire_outside_removal(retired);
        fired
    }

    /// When the idle timer will fire, if armed.
    pub fn idle_deadline(&self) -> Option<u64> {
        self.lock().idle_deadline
    }

    /// Sets `slice_idle` (the kernel sets it when the queue is registered, after probing).
    pub fn set_slice_idle(&self, ns: u64) {
        self.lock().cfg.slice_idle_ns = ns;
    }

    pub fn slice_idle(&self) -> u64 {
        self.lock().cfg.slice_idle_ns
    }

    /// Groups can lose their last reference outside removal only if a queue of an offline group
    /// is freed, which offlining prevents (it moves every queue out first).
    fn retire_outside_removal(&self, retired: Vec<RetiredGroup>) {
        debug_assert!(retired.is_empty(), "a hot path dropped a group's last reference");
        self.retire(retired);
    }

    /// Request counts.
    pub fn counters(&self) -> RequestCounters {
        self.lock().counters
    }

    /// Requests still queued (on an insertion list or in the scheduler), and on the device.
    pub fn outstanding(&self) -> (usize, usize) {
        let listed = self.insert_lists.lock().len();
        let (queued, on_device) = self.lock().requests_outstanding();
        (queued + listed, on_device)
    }

    /// The conservation and attribution checks of a quiescent scheduler (notes/invariants.md I2,
    /// I7). Call with no
    /// request on the device and after [`Scheduler::quiesce_until_reclaimed`], so that offline
    /// groups awaiting their grace period have handed their residue to their parents; a check
    /// made while some still wait says so (`awaiting_reclamation`) and is not `ok`.
    pub fn check_consistency(&self) -> Consistency {
        self.flush_rstat();
        let listed = self.insert_lists.lock().len();
        let st = self.lock();
        let c = st.counters;
        let outstanding = st.requests_outstanding();
        let requests_balance = c.inserted
            == c.completed + c.merged + (outstanding.0 + outstanding.1) as u64
            && c.dispatched >= c.completed;
        let mut groups_with_queued = Vec::new();
        let mut groups_misattributed = Vec::new();
        let mut serviced = 0i64;
        for (key, g) in st.groups.iter() {
            // SAFETY: online group (`g` holds its online reference), lock held.
            let stats = unsafe { g.shared.get(g) }.stats();
            if P::KEPT == StatsKept::Full {
                let queued = stats.queued_total();
                if queued != 0 {
                    groups_with_queued.push((Self::id_of(&st, key), queued));
                }
            }
            let s = stats.read_rwstat(crate::stats::RwStat::Serviced);
            serviced += StatsSnapshot::total(&s);
            if P::KEPT != StatsKept::None {
                use crate::stats::RwStat;
                let full = P::KEPT == StatsKept::Full;
                let kept = Ledger {
                    serviced: StatsSnapshot::total(&s),
                    service_bytes: StatsSnapshot::total(&stats.read_rwstat(RwStat::ServiceBytes)),
                    merged: if full {
                        StatsSnapshot::total(&stats.read_rwstat(RwStat::Merged))
                    } else {
                        0
                    },
                };
                let charged = Ledger { merged: if full { g.ledger.merged } else { 0 }, ..g.ledger };
                if kept != charged {
                    groups_misattributed.push((Self::id_of(&st, key), kept, charged));
                }
            }
        }
        let keeps_serviced = P::KEPT != StatsKept::None;
        let io_serviced_sum = keeps_serviced.then_some(serviced);
        // What io_serviced counts: dispatched requests, or (counted at submission) every request
        // that reached the insert, merged ones included, bios merged before a request was made not.
        let counted = if P::LEGACY_IO_AT_SUBMIT { c.inserted - c.bio_merged } else { c.dispatched };
        let io_serviced_matches = !keeps_serviced || serviced == counted as i64;
        let quiet = outstanding == (0, 0) && listed == 0;
        let awaiting_reclamation = self.census.awaiting_reclamation();
        let ok = requests_balance
            && groups_with_queued.is_empty()
            && io_serviced_matches
            && groups_misattributed.is_empty()
            && quiet
            && awaiting_reclamation == 0;
        Consistency {
            counters: c,
            requests_balance,
            outstanding,
            listed,
            groups_with_queued,
            io_serviced_sum,
            io_serviced_matches,
            groups_misattributed,
            awaiting_reclamation,
            ok,
        }
    }

    /// Runs [`StatsPolicy::quiesce`] until no removed group awaits its grace period, for at most
    /// `timeout`; says whether it got there. A grace period also waits for pins of other threads
    /// of the process (another run, a test running in parallel: the epoch collector is
    /// process-wide), hence the retries.
    #[cfg(not(any(loom, shuttle)))]
    pub fn quiesce_until_reclaimed(&self, timeout: std::time::Duration) -> bool {
        quiesce_until_reclaimed::<P>(&self.census, timeout)
    }
}

/// [`Scheduler::quiesce_until_reclaimed`] for a census whose scheduler may be gone (the groups
/// retired at its teardown).
#[cfg(not(any(loom, shuttle)))]
pub fn quiesce_until_reclaimed<P: StatsPolicy>(
    census: &Census,
    timeout: std::time::Duration,
) -> bool {
    let clock = crate::sync::RawClock::new();
    loop {
        P::quiesce();
        if census.awaiting_reclamation() == 0 {
            return true;
        }
        if u128::from(clock.now_ns()) >= timeout.as_nanos() {
            return false;
        }
        crate::sync::thread::sleep(std::time::Duration::from_millis(1));
    }
}

/// The fault `IdleTimerTouchesBeforeCheck` (the order before BFQ's 2020 fix): the timer clears
/// the flag of the queue it read without the lock before checking it is still in service.
#[cold]
fn fault_touch_before_check(queue: QueueRef) {
    // SAFETY: none: this is the fault. The queue read without the lock may have been freed.
    unsafe { queue.get() }.set_wait_request(false);
}

impl<P: StatsPolicy> Drop for Scheduler<P> {
    /// Teardown (notes/invariants.md I3): every queue and group goes, the groups through the
    /// policy's `retire_group`; the census counts what is left. No path is running (I4: each one
    /// borrows the scheduler), so nothing deferred can still reach what is freed here.
    fn drop(&mut self) {
        let listed = self.insert_lists.lock().take_all();
        let mut st = self.state.lock();
        let dropped = st.teardown(listed);
        if dropped > 0 {
            tracing::warn!(dropped, "scheduler torn down with requests pending");
        }
        let retired = std::mem::take(&mut st.retired);
        drop(st);
        self.census.mark_torn_down();
        self.retire(retired);
    }
}

/// A process: its own queue (`bfq_queue`) in a group. Dropping it is the process exiting.
pub struct Process<'s, P: StatsPolicy> {
    sched: &'s Scheduler<P>,
    queue: QueueId,
    shared: QueueRef,
    pid: u64,
}

/// What completion hands back to the submitter.
#[derive(Debug)]
pub struct Completed {
    pub tag: u64,
    /// Tags of requests that were merged into this one.
    pub absorbed: Vec<u64>,
}

impl<'s, P: StatsPolicy> Process<'s, P> {
    pub fn scheduler(&self) -> &'s Scheduler<P> {
        self.sched
    }

    pub fn pid(&self) -> u64 {
        self.pid
    }

    /// The group the process's queue is in now.
    pub fn group(&self) -> GroupId {
        let st = self.sched.lock();
        Scheduler::<P>::id_of(&st, st.queue_group(self.queue))
    }

    /// One request's submission as the scheduler's kernel profile runs it (`profile.rs`): the bio
    /// merge attempt, the depth limit, then the insert. A bio that merged ends the submission
    /// ([`InsertOutcome::Merged`]: its tag completes with the request it joined). The depth
    /// limit's verdict is counted (`RequestCounters::over_limit`).
    ///
    /// NOTE: the kernel then lets an over-limit request wait for one of a shallower set of tags;
    /// the model has no tag pool, so the request goes on (kernel-map.md D48).
    pub fn submit(&self, spec: RequestSpec) -> InsertOutcome {
        let profile = self.sched.profile;
        if profile.has(SubmitSite::BioMerge) && self.bio_merge(spec) {
            return InsertOutcome::Merged;
        }
        // The kernel's work between the sites (request allocation, tags, the plug), no lock held.
        let gaps = self.sched.pads_gap_ns;
        crate::inject::spin(&self.sched.clock, gaps[0]);
        if profile.has(SubmitSite::LimitDepth) {
            self.limit_depth();
        }
        crate::inject::spin(&self.sched.clock, gaps[1]);
        self.insert(spec)
    }

    /// `bfq_bio_merge`: under the scheduler lock, look the group up and try to merge the bio into
    /// a queued request of this process's queue. Returns whether it merged.
    pub fn bio_merge(&self, spec: RequestSpec) -> bool {
        trace::in_path(PathSpan::BioMerge { pid: self.pid, sector: spec.sector }, || {
            self.bio_merge_body(spec)
        })
    }

    #[inline(never)]
    fn bio_merge_body(&self, spec: RequestSpec) -> bool {
        let sched = self.sched;
        let _path = lockstat::enter(LockPath::BioMerge);
        let mut batch = DeferredBatch::new(Path::Insert);
        let mut st = sched.lock();
        let now = sched.clock.now_ns();
        let merged = st.bio_merge(
            self.queue,
            &spec,
            &mut Router { policy: &sched.policy, batch: &mut batch, now },
        );
        crate::inject::spin(&sched.clock, st.cfg.pads.hold(PadSite::BioMerge));
        debug_assert!(st.retired.is_empty());
        drop(st);
        if !batch.is_empty() {
            branch!("bio_merge.runs-deferred");
            // I1a: the process holds its queue; the policy's protection holds its group (I1b-d).
            let _stats = lockstat::enter(LockPath::Stats);
            sched.policy.run_deferred(&sched.cx(), &mut batch);
        }
        merged
    }

    /// `bfq_limit_depth` → `bfqq_request_over_limit`: take the scheduler lock and, if the
    /// queue's entity is on its service tree or in service, walk it up the group hierarchy to
    /// decide whether it is over its share of the device's requests.
    ///
    /// The lock is taken on every call, before the activity check: since "block, bfq: fix bfqq
    /// uaf in bfq_limit_depth()" (Yu Kuai, v6.13) the kernel looks the queue up and reads
    /// `on_st_or_in_serv` under `bfqd->lock`; 5.18–6.12 read both before it and skipped the lock
    /// for an idle queue (kernel-map.md, "Kernel generations").
    pub fn limit_depth(&self) -> bool {
        trace::in_path(PathSpan::LimitDepth { pid: self.pid }, || self.limit_depth_body())
    }

    #[inline(never)]
    fn limit_depth_body(&self) -> bool {
        let _path = lockstat::enter(LockPath::LimitDepth);
        if fault::active(Fault::DepthLimitWalksWithoutLock) {
            self.walk_groups_unlocked();
        }
        let mut st = self.sched.lock();
        let limit = st.nr_requests();
        let over = st.over_limit(self.queue, limit);
        crate::inject::spin(&self.sched.clock, st.cfg.pads.hold(PadSite::LimitDepth));
        over
    }

    /// [`Fault::DepthLimitWalksWithoutLock`]: the walk up the hierarchy through the shared
    /// objects, with no lock and no protection (a negative control: the models must reject it).
    #[cold]
    fn walk_groups_unlocked(&self) {
        // SAFETY: the process holds a reference on its queue for as long as it lives (I1a).
        let queue = unsafe { self.shared.get() };
        let mut group = Some(queue.current_group());
        while let Some(g) = group {
            // SAFETY: none: nothing held keeps the group (a removal may reparent the queue and
            // free the group between the load above and this read); the fault is the bug.
            let shared = unsafe { g.get(&g) };
            let _ = shared.serial();
            group = shared.parent();
        }
    }

    /// `bfq_insert_request`, through the scheduler's insert path (`insert/`).
    pub fn insert(&self, spec: RequestSpec) -> InsertOutcome {
        if P::LEGACY_IO_AT_SUBMIT {
            self.count_at_submit(spec);
        }
        crate::inject::spin(&self.sched.clock, self.sched.inject_outside_ns);
        trace::in_path(PathSpan::Insert { pid: self.pid, sector: spec.sector }, || {
            self.sched.insert_path.insert(self, spec)
        })
    }

    /// io_service_bytes / io_serviced counted before any lock of the insert, for a policy that
    /// counts at submission ([`StatsPolicy::LEGACY_IO_AT_SUBMIT`]).
    #[cold]
    fn count_at_submit(&self, spec: RequestSpec) {
        let sched = self.sched;
        let mut batch = DeferredBatch::new(Path::Insert);
        // I1a: the process holds a reference on its queue for as long as it lives; the group is
        // read from the queue by the policy under its protection (I1b-d).
        batch.push_pinned(StatEvent {
            queue: self.shared,
            update: StatUpdate::LegacyIo { op: spec.op, bytes: spec.sectors as u64 * 512 },
        });
        let _stats = lockstat::enter(LockPath::Stats);
        sched.policy.run_deferred(&sched.cx(), &mut batch);
    }

    /// The insert work under the scheduler lock (the `direct` path).
    #[inline(always)]
    fn insert_body(&self, spec: RequestSpec) -> InsertOutcome {
        let sched = self.sched;
        let _path = lockstat::enter(LockPath::Insert);
        let mut batch = DeferredBatch::new(Path::Insert);
        let mut st = sched.lock();
        let now = sched.clock.now_ns();
        let outcome = st.insert(
            self.queue,
            &spec,
            now,
            &mut Router { policy: &sched.policy, batch: &mut batch, now },
        );
        crate::inject::spin(
            &sched.clock,
            st.cfg.inject.inside_ns() + st.cfg.pads.hold(PadSite::Insert),
        );
        debug_assert!(st.retired.is_empty());
        drop(st);
        if !batch.is_empty() {
            branch!("insert.runs-deferred");
            let _stats = lockstat::enter(LockPath::Stats);
            sched.policy.run_deferred(&sched.cx(), &mut batch);
        } else {
            branch!("insert.nothing-deferred");
        }
        outcome
    }

    /// Moves the process to another group (its queue follows: `bfq_bic_update_cgroup`).
    pub fn move_to(&self, group: GroupId) -> Result<(), SchedError> {
        if !<P::Protection as Protection>::ALLOWS_REMOVAL {
            branch!("move_to.refused-by-protection");
            return Err(SchedError::UnsafeUnderRemoval(P::NAME));
        }
        trace::in_path(PathSpan::Move { pid: self.pid }, || self.move_to_body(group))
    }

    fn move_to_body(&self, group: GroupId) -> Result<(), SchedError> {
        let sched = self.sched;
        let _path = lockstat::enter(LockPath::GroupRemoval);
        let queue_guard = <P::Protection as Protection>::REMOVAL_HOLDS_QUEUE_LOCK
            .then(|| sched.queue_lock.lock());
        let mut st = sched.lock();
        let Ok(g) = Scheduler::<P>::lookup(&st, group) else {
            branch!("move_to.target-gone");
            return Err(SchedError::NoSuchGroup(group));
        };
        branch!("move_to.moves");
        let now = sched.clock.now_ns();
        let mut batch = DeferredBatch::new(Path::Dispatch);
        st.move_queue(
            self.queue,
            g,
            now,
            &mut Router { policy: &sched.policy, batch: &mut batch, now },
        );
        let retired = std::mem::take(&mut st.retired);
        drop(st);
        sched.retire(retired);
        drop(queue_guard);
        Ok(())
    }

    /// The queue's shared part (for hooks and models).
    pub fn queue_ref(&self) -> QueueRef {
        self.shared
    }
}

impl<P: StatsPolicy> InsertSite for Process<'_, P> {
    #[inline(always)]
    fn insert_locked(&self, spec: RequestSpec) -> InsertOutcome {
        self.insert_body(spec)
    }

    fn insert_lists(&self) -> &Lock<InsertLists> {
        &self.sched.insert_lists
    }

    fn queue_id(&self) -> usize {
        self.queue
    }

    fn pin_queue_for_listing(&self) {
        // SAFETY: the process holds a reference on its queue for as long as it lives (I1a).
        unsafe { self.shared.get() }.add_pending();
    }
}

impl<P: StatsPolicy> DispatchSite for Scheduler<P> {
    fn insert_lists(&self) -> &Lock<InsertLists> {
        &self.insert_lists
    }
}

impl<P: StatsPolicy> Drop for Process<'_, P> {
    fn drop(&mut self) {
        // bfq_exit_icq: the process's reference goes; the queue lives on while requests or the
        // in-service slot hold it.
        let mut st = self.sched.lock();
        st.put_queue(self.queue);
        let retired = std::mem::take(&mut st.retired);
        drop(st);
        self.sched.retire(retired);
    }
}

/// A request on the device. Completing it (or dropping it) runs the finish path.
#[must_use = "a dispatched request must be completed"]
pub struct Dispatched<'a, P: StatsPolicy> {
    sched: &'a Scheduler<P>,
    rq: Option<RqId>,
    queue: QueueRef,
    pub tag: u64,
    pub sector: u64,
    pub sectors: u32,
    pub op: Op,
    pub start_ns: u64,
    pub io_start_ns: u64,
}

impl<P: StatsPolicy> Dispatched<'_, P> {
    /// `bfq_finish_request`: completion statistics first (outside the scheduler lock, as the
    /// kernel does, unless the policy routes them under it), then the locked bookkeeping.
    pub fn complete(mut self) -> Completed {
        self.finish()
    }

    fn finish(&mut self) -> Completed {
        trace::in_path(PathSpan::Finish { tag: self.tag }, || self.finish_body())
    }

    #[inline(always)]
    fn finish_body(&mut self) -> Completed {
        let rq = self.rq.take().expect("completed once");
        let sched = self.sched;
        let _path = lockstat::enter(LockPath::Completion);
        let update = StatUpdate::Completion {
            op: self.op,
            start_ns: self.start_ns,
            io_start_ns: self.io_start_ns,
        };
        let route = effective_route(&sched.policy, StatKind::Completion);
        if route == Route::Defer {
            branch!("finish.deferred-completion-stats");
            let mut batch = DeferredBatch::new(Path::Completion);
            batch.push_pinned(StatEvent { queue: self.queue, update });
            let _stats = lockstat::enter(LockPath::Stats);
            sched.policy.run_deferred(&sched.cx(), &mut batch);
        }
        let mut batch = DeferredBatch::new(Path::Completion);
        let mut st = sched.lock();
        let now = sched.clock.now_ns();
        if route == Route::Now {
            branch!("finish.locked-completion-stats");
            apply_locked(self.queue, update, now);
        }
        let r = st.complete(rq, now, &mut Router { policy: &sched.policy, batch: &mut batch, now });
        crate::inject::spin(&sched.clock, st.cfg.pads.hold(PadSite::Completion));
        let retired =
            if st.retired.is_empty() { Vec::new() } else { std::mem::take(&mut st.retired) }; // not a branch point: a value
        drop(st);
        debug_assert!(batch.is_empty(), "completion emits only lock-only updates under the lock");
        if !retired.is_empty() {
            branch!("finish.retires-a-group");
            sched.retire_outside_removal(retired);
        }
        Completed { tag: r.tag, absorbed: r.absorbed }
    }
}

impl<P: StatsPolicy> Drop for Dispatched<'_, P> {
    fn drop(&mut self) {
        if self.rq.is_some() {
            self.finish();
        }
    }
}

/// The oracle's own negative controls (issue 35, item 1): for each condition of
/// [`Scheduler::check_consistency`], a scheduler corrupted in exactly the way that condition
/// names must fail exactly that condition, by its field, and every other must still hold; a
/// clean one passes them all. (The model checks trust these fields: a condition that could not
/// fail would pass every model.)
#[cfg(all(test, not(any(loom, shuttle))))]
mod consistency_conditions {
    use super::*;
    use crate::objects::GroupShared;
    use crate::protection::SchedLockOnly;
    use crate::sync::OracleMutex;

    /// A policy that applies everything under the lock, keeping `KEPT`, and (with `KEEP`) keeps
    /// its retired groups instead of freeing them.
    #[derive(Default)]
    struct Locked<const FULL: bool, const KEEP: bool> {
        kept: OracleMutex<Vec<RetiredGroup>>,
    }

    impl<const FULL: bool, const KEEP: bool> StatsPolicy for Locked<FULL, KEEP> {
        const NAME: &'static str = "test-locked";
        const SUMMARY: &'static str = "every update under the lock (core's oracle tests)";
        const KEPT: StatsKept = if FULL { StatsKept::Full } else { StatsKept::Legacy };
        type Protection = SchedLockOnly;
        type DispatchCapture = ();
        type GroupState = ();

        fn route(&self, _kind: StatKind) -> Route {
            Route::Now
        }

        fn retire_group(&self, group: RetiredGroup, reclaim: &Reclaimer<'_, SchedLockOnly>) {
            if KEEP {
                self.kept.lock().unwrap().push(group);
            } else {
                reclaim.release(group);
            }
        }
    }

    type Full = Locked<true, false>;

    /// A quiet scheduler after a request, a merge into it, its dispatch and completion.
    fn ran<P: StatsPolicy>(cfg: SchedConfig) -> Arc<Scheduler<P>> {
        let (clock, _) = SchedClock::manual_ticking(1);
        let sched = Scheduler::<P>::new(LockKind::FairSpin, cfg, clock);
        {
            let p = sched.spawn_process(sched.root()).unwrap();
            p.insert(RequestSpec {
                sector: 0,
                sectors: 8,
                op: Op::READ_SYNC,
                at_head: false,
                tag: 1,
            });
            p.insert(RequestSpec {
                sector: 8,
                sectors: 8,
                op: Op::READ_SYNC,
                at_head: false,
                tag: 2,
            });
        }
        sched.dispatch().unwrap().complete();
        sched
    }

    /// Which named conditions fail (`ok` aside).
    fn failing(c: &Consistency) -> Vec<&'static str> {
        let mut out = Vec::new();
        if !c.requests_balance {
            out.push("requests_balance");
        }
        if c.outstanding != (0, 0) {
            out.push("outstanding");
        }
        if c.listed != 0 {
            out.push("listed");
        }
        if !c.groups_with_queued.is_empty() {
            out.push("groups_with_queued");
        }
        if !c.io_serviced_matches {
            out.push("io_serviced_matches");
        }
        if !c.groups_misattributed.is_empty() {
            out.push("groups_misattributed");
        }
        if c.awaiting_reclamation != 0 {
            out.push("awaiting_reclamation");
        }
        out
    }

    /// Exactly `name` fails, and so does `ok`.
    fn only<P: StatsPolicy>(sched: &Scheduler<P>, name: &str) {
        let c = sched.check_consistency();
        assert_eq!(failing(&c), [name], "{c:?}");
        assert!(!c.ok, "`ok` with {name} failing: {c:?}");
    }

    fn root_shared<P: StatsPolicy>(sched: &Scheduler<P>, f: impl FnOnce(&GroupShared)) {
        let st = sched.lock();
        // SAFETY: the root is online for the scheduler's life, and the lock is held.
        f(unsafe { st.groups[st.root].shared.get(&st) });
    }

    /// A policy that counts io_serviced at submission (`LEGACY_IO_AT_SUBMIT`, as `mainline`),
    /// the count deferred past the scheduler lock under the queue lock, the rest under the lock.
    #[derive(Default)]
    struct AtSubmit;

    impl StatsPolicy for AtSubmit {
        const NAME: &'static str = "test-at-submit";
        const SUMMARY: &'static str = "io_serviced counted at submission (core's oracle tests)";
        const KEPT: StatsKept = StatsKept::Legacy;
        const LEGACY_IO_AT_SUBMIT: bool = true;
        type Protection = crate::protection::QueueLock;
        type DispatchCapture = ();
        type GroupState = ();

        fn route(&self, _kind: StatKind) -> Route {
            Route::Now
        }

        fn run_deferred(
            &self,
            cx: &DeferredCx<'_, crate::protection::QueueLock>,
            batch: &mut DeferredBatch,
        ) {
            // Why everything this touches still exists (notes/invariants.md): the event's queue is
            // pinned by the submitting process, which runs this before its insert (I1a); its group
            // is read under the queue lock, which every removal and move holds while it frees
            // what it retired (I1b).
            let queue_lock = cx.lock_queue();
            batch.apply(&queue_lock, cx.now());
        }

        fn retire_group(
            &self,
            group: RetiredGroup,
            reclaim: &Reclaimer<'_, crate::protection::QueueLock>,
        ) {
            reclaim.release(group);
        }
    }

    /// Counted at submission, io_serviced is every request that reached the insert, and not a bio
    /// that merged before a request was made: two bios, the second merged at the bio merge, one
    /// request dispatched, io_serviced 1, every condition holds. (Counting the merged bio too, or
    /// leaving it out of the submissions twice, would make io_serviced_matches fail.)
    #[test]
    fn counted_at_submission_a_bio_merged_before_its_request_is_not_serviced() {
        let cfg = SchedConfig { profile: KernelProfile::Seeds, ..SchedConfig::default() };
        let (clock, _) = SchedClock::manual_ticking(1);
        let sched = Scheduler::<AtSubmit>::new(LockKind::FairSpin, cfg, clock);
        {
            let p = sched.spawn_process(sched.root()).unwrap();
            p.submit(RequestSpec {
                sector: 0,
                sectors: 8,
                op: Op::READ_SYNC,
                at_head: false,
                tag: 1,
            });
            assert_eq!(
                p.submit(RequestSpec {
                    sector: 8,
                    sectors: 8,
                    op: Op::READ_SYNC,
                    at_head: false,
                    tag: 2
                }),
                InsertOutcome::Merged
            );
        }
        sched.dispatch().unwrap().complete();
        let c = sched.check_consistency();
        assert_eq!(c.counters.bio_merged, 1, "{c:?}");
        assert_eq!((c.io_serviced_sum, c.counters.dispatched), (Some(1), 1), "{c:?}");
        assert!(failing(&c).is_empty() && c.ok, "{c:?}");
    }

    #[test]
    fn a_clean_run_passes_every_condition() {
        let sched = ran::<Full>(SchedConfig::default());
        let c = sched.check_consistency();
        assert!(failing(&c).is_empty() && c.ok, "{c:?}");
        assert_eq!((c.counters.inserted, c.counters.merged, c.counters.completed), (2, 1, 1));
        assert_eq!(c.io_serviced_sum, Some(1));
    }

    #[test]
    fn a_request_counted_in_and_never_out_fails_requests_balance() {
        let sched = ran::<Full>(SchedConfig::default());
        sched.lock().counters.inserted += 1;
        only(&sched, "requests_balance");
    }

    #[test]
    fn a_completion_never_dispatched_fails_requests_balance() {
        // Balanced in and out (inserted = completed + merged), but more completed than dispatched.
        let sched = ran::<Full>(SchedConfig::default());
        let mut st = sched.lock();
        st.counters.inserted += 1;
        st.counters.completed += 1;
        drop(st);
        only(&sched, "requests_balance");
    }

    #[test]
    fn a_request_left_on_the_device_fails_outstanding() {
        let sched = ran::<Full>(SchedConfig::default());
        let p = sched.spawn_process(sched.root()).unwrap();
        p.insert(RequestSpec {
            sector: 640,
            sectors: 8,
            op: Op::READ_SYNC,
            at_head: false,
            tag: 3,
        });
        let rq = sched.dispatch().unwrap();
        only(&sched, "outstanding");
        rq.complete();
    }

    #[test]
    fn a_request_left_on_an_insertion_list_fails_listed() {
        let sched =
            ran::<Full>(SchedConfig { insert: InsertPathKind::Lists, ..SchedConfig::default() });
        let p = sched.spawn_process(sched.root()).unwrap();
        p.insert(RequestSpec {
            sector: 640,
            sectors: 8,
            op: Op::READ_SYNC,
            at_head: false,
            tag: 3,
        });
        only(&sched, "listed");
    }

    #[test]
    fn an_io_add_without_its_io_remove_fails_groups_with_queued() {
        let sched = ran::<Full>(SchedConfig::default());
        root_shared(&sched, |g| {
            StatUpdate::IoAdd { op: Op::READ_SYNC, group_in_service: false }.apply_to(g, 1)
        });
        only(&sched, "groups_with_queued");
    }

    #[test]
    fn queued_is_not_checked_where_it_is_not_kept() {
        let sched = ran::<Locked<false, false>>(SchedConfig::default());
        root_shared(&sched, |g| {
            StatUpdate::IoAdd { op: Op::READ_SYNC, group_in_service: false }.apply_to(g, 1)
        });
        let c = sched.check_consistency();
        assert!(failing(&c).is_empty() && c.ok, "{c:?}");
    }

    #[test]
    fn service_counted_and_charged_but_never_dispatched_fails_io_serviced_matches() {
        let sched = ran::<Full>(SchedConfig::default());
        root_shared(&sched, |g| {
            StatUpdate::LegacyIo { op: Op::READ_SYNC, bytes: 4096 }.apply_to(g, 1)
        });
        let mut st = sched.lock();
        let root = st.root;
        st.groups[root].ledger.serviced += 1;
        st.groups[root].ledger.service_bytes += 4096;
        drop(st);
        only(&sched, "io_serviced_matches");
    }

    #[test]
    fn a_charge_the_statistics_lack_fails_groups_misattributed() {
        for field in 0..3 {
            let sched = ran::<Full>(SchedConfig::default());
            let mut st = sched.lock();
            let root = st.root;
            let ledger = &mut st.groups[root].ledger;
            match field {
                0 => ledger.serviced += 1,
                1 => ledger.service_bytes += 512,
                _ => ledger.merged += 1,
            }
            drop(st);
            only(&sched, "groups_misattributed");
        }
    }

    #[test]
    fn merges_are_not_attributed_where_they_are_not_kept() {
        let sched = ran::<Locked<false, false>>(SchedConfig::default());
        let mut st = sched.lock();
        let root = st.root;
        st.groups[root].ledger.merged += 1;
        drop(st);
        let c = sched.check_consistency();
        assert!(failing(&c).is_empty() && c.ok, "{c:?}");
    }

    #[test]
    fn a_retired_group_never_freed_fails_awaiting_reclamation() {
        let sched = ran::<Locked<true, true>>(SchedConfig::default());
        let g = sched.create_group(sched.root(), 100).unwrap();
        sched.remove_group(g).unwrap();
        only(&sched, "awaiting_reclamation");
    }
}

/// Sequences the model checks found, replayed on one thread: the interleaving of a rejected model
/// made deterministic, so that the fix is checked by the unit tests too, not by the checkers alone.
#[cfg(all(test, not(any(loom, shuttle))))]
mod found_by_models {
    use super::*;
    use crate::protection::SchedLockOnly;

    /// Every update under the scheduler lock (the bug below is in the locked state, whatever the
    /// variant).
    #[derive(Default)]
    struct Locked;

    impl StatsPolicy for Locked {
        const NAME: &'static str = "test-locked";
        const SUMMARY: &'static str = "every update under the lock (core's regression tests)";
        const KEPT: StatsKept = StatsKept::Full;
        type Protection = SchedLockOnly;
        type DispatchCapture = ();
        type GroupState = ();

        fn route(&self, _kind: StatKind) -> Route {
            Route::Now
        }
    }

    /// Found by `lists_three_actors_idle_hint_vs_insert_and_exit` (loom, issue 45): on the `lists`
    /// path a process's queue idles in service in G, the process lists a request and exits, so
    /// the queue is held by its in-service slot and the listed request's pin only. G's removal
    /// moves the queue out, expiring it first: the expiration drops the in-service reference, and
    /// the move returned as if that had freed the queue, leaving it (pinned by the listing) a
    /// member of the offline group, whose slot the next splice then indexed. The queue must
    /// leave G, the listed request be served in the root, and nothing be left.
    #[test]
    fn an_expired_queue_pinned_only_by_a_listed_request_leaves_the_group_removed() {
        let (clock, manual) = SchedClock::manual_ticking(1);
        let cfg = SchedConfig {
            slots: 1,
            slice_idle_ns: 1_000,
            insert: InsertPathKind::Lists,
            ..SchedConfig::default()
        };
        let sched = Scheduler::<Locked>::new(LockKind::FairSpin, cfg, clock);
        let census = sched.census();
        let root = sched.root();
        let g = sched.create_group(root, 100).unwrap();
        let request = |sector, tag| RequestSpec {
            sector,
            sectors: 8,
            op: Op::READ_SYNC,
            at_head: false,
            tag,
        };
        let p = sched.spawn_process(g).unwrap();
        p.insert(request(0, 1));
        sched.dispatch().expect("the first request").complete();
        assert!(sched.idle_deadline().is_some(), "the queue should idle in service");
        manual.advance(2_000);
        p.insert(request(64, 2));
        drop(p);
        sched.remove_group(g).unwrap();
        let groups = sched.groups();
        assert_eq!(groups.len(), 1, "only the root is online: {groups:?}");
        assert_eq!(groups[0].queues, 1, "the listed request's queue moved to the root: {groups:?}");
        let rq = sched.dispatch().expect("the listed request, spliced into the root");
        assert_eq!(rq.tag, 2);
        rq.complete();
        let c = sched.check_consistency();
        assert!(c.ok, "{c:?}");
        drop(sched);
        assert_eq!((census.live_queues(), census.live_groups()), (0, 0));
    }
}
