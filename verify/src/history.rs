//! Independent oracles: facts recorded where they arise, by the model threads themselves, and the
//! checks made from them (issue 35, items 2 and 5).
//!
//! The scheduler's own I7 ledger (`schedlab_core::Ledger`) is charged in the function that emits
//! the statistics, so it agrees with them whatever that function does. Here each fact comes from
//! the thread that made it happen, in the model body, through the scheduler's public API only:
//!
//! | fact | recorded by | when |
//! | --- | --- | --- |
//! | a request issued in group G, its sectors, whether it merged | the issuing thread | around its `insert` (G is the group the thread put its process in, not one read from the scheduler) |
//! | a request dispatched, and the tags it absorbed | the dispatching thread | around `dispatch` and `complete` |
//! | a process moved from G to H | the moving thread (the issuer) | around `move_to` |
//! | a group created under P, removed | the creator, the remover | after the call returned `Ok` |
//! | a statistics read and what it returned | the reader | around `group_stats` or `inspect_group` (each flushes the rstat lists first) |
//!
//! Every fact carries the vector clock of its thread at its beginning and its end. The clocks
//! follow the edges the model itself creates and nothing else: program order, spawn, join, and a
//! flag a thread publishes with a Release store and another observes with an Acquire load
//! ([`Recorder::publish`], [`Recorder::observe`]). The scheduler's locks are deliberately not
//! edges: whether they order two operations is what is under test.
//!
//! Two checks are made from the facts:
//!
//! - **Attribution (I7) from the issuers** ([`Recorder::check_attribution`]): each dispatched
//!   request's service and bytes belong to the group its issuer's queue was in while the dispatch
//!   ran: the group it was issued in, or a group its issuer moved it to by then (a move ordered
//!   before the dispatch settles it, a move ordered after excludes it, a concurrent one leaves two
//!   candidates). Each sector is its own issuer's: a request that absorbed others is charged to a
//!   group that holds every one of them, so a request issued after a move and merged into one
//!   issued before it leaves only the group moved to (issue 45, item 2). A merge belongs to the group the merging request was issued in (its own issuer
//!   says so), and a request absorbed by a merge to the group of the request that absorbed it. A
//!   removed group's charges go to its first online ancestor (the removers and creators say which).
//!   The statistics at quiescence must equal the charges for some choice among the candidates.
//! - **Reads against their past** ([`Recorder::check_reads`]): a read of group X must include
//!   every request of X whose charge happened-before the read began, and nothing that could not
//!   have happened by the time it ended (a charge whose operation began after the read's end in
//!   happens-before, or of a group that is neither X nor a removed descendant of X).
//!
//! The facts are kept in an oracle mutex (`std`'s, which no checker sees: loom and shuttle run
//! one model thread at a time, and no checker operation happens while it is held), so recording
//! adds no synchronisation to what the checker explores.

use crate::invariant::require;
use schedlab_core::sync::{thread, violation, AtomicBool, OracleArc, OracleMutex, Ordering};
use schedlab_core::{
    Clock as _, GroupId, InsertOutcome, Process, RequestSpec, SchedError, Scheduler, StatsKept,
    StatsPolicy, StatsSnapshot,
};
use std::collections::{HashMap, HashSet};

/// A vector clock: entry `t` counts the events of model thread `t` ordered before this point.
type Clock = Vec<u32>;

fn merge(into: &mut Clock, from: &Clock) {
    if into.len() < from.len() {
        into.resize(from.len(), 0);
    }
    for (a, b) in into.iter_mut().zip(from) {
        *a = (*a).max(*b);
    }
}

/// When an operation ran: its thread, and that thread's clock at its first and last step.
#[derive(Clone, Debug)]
struct Span {
    thread: usize,
    begin: Clock,
    end: Clock,
}

/// Whether the point `at` of thread `thread` (its clock `at`) happens-before the point `then`.
fn ordered_before(thread: usize, at: &Clock, then: &Clock) -> bool {
    at[thread] <= then.get(thread).copied().unwrap_or(0)
}

impl Span {
    /// This operation ended before `other` began (happens-before).
    fn before(&self, other: &Span) -> bool {
        ordered_before(self.thread, &self.end, &other.begin)
    }
}

#[derive(Clone, Debug)]
struct Issue {
    span: Span,
    group: GroupId,
    tag: u64,
    sectors: u32,
    merged: bool,
    /// Merged by `bio_merge`, before a request was made: not counted at submission.
    bio: bool,
    /// Put on an insertion list (the `lists` path): merged, if at all, when a dispatch splices it.
    listed: bool,
}

#[derive(Clone, Debug)]
struct Dispatch {
    span: Span,
    tag: u64,
    absorbed: Vec<u64>,
}

#[derive(Clone, Debug)]
struct Move {
    span: Span,
    to: GroupId,
}

#[derive(Clone, Debug)]
struct Read {
    span: Span,
    group: GroupId,
    how: &'static str,
    snapshot: StatsSnapshot,
}

#[derive(Default)]
struct Facts {
    clocks: Vec<Clock>,
    parents: HashMap<GroupId, Option<GroupId>>,
    removed: HashSet<GroupId>,
    issues: Vec<Issue>,
    dispatches: Vec<Dispatch>,
    moves: Vec<Move>,
    reads: Vec<Read>,
    /// Clocks published with a flag, by the flag's address.
    mailbox: HashMap<usize, Clock>,
}

/// One model thread's handle on the facts of the execution.
pub struct Recorder {
    facts: OracleArc<OracleMutex<Facts>>,
    me: usize,
}

/// A thread spawned by [`Recorder::spawn`], to hand to [`Recorder::join`].
pub struct Spawned {
    handle: thread::JoinHandle<()>,
    id: usize,
}

/// Service, bytes and merges charged to (or kept by) one group.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Charge {
    pub serviced: i64,
    pub bytes: i64,
    pub merged: i64,
}

/// A contribution to a group's counters that the facts cannot pin to one group: a dispatch that
/// ran while its issuer's move may or may not have happened.
#[derive(Clone, Debug)]
struct Candidate {
    charge: Charge,
    groups: Vec<GroupId>,
}

impl Recorder {
    /// The recorder of the main thread of a model whose scheduler's root is `root`.
    pub fn start(root: GroupId) -> Recorder {
        let facts = Facts { clocks: vec![vec![0]], ..Facts::default() };
        let facts = OracleArc::new(OracleMutex::new(facts));
        facts.lock().unwrap().parents.insert(root, None);
        Recorder { facts, me: 0 }
    }

    fn with<R>(&self, f: impl FnOnce(&mut Facts) -> R) -> R {
        f(&mut self.facts.lock().expect("the facts' oracle mutex"))
    }

    /// One step of this thread: its clock after it.
    fn tick(&self) -> Clock {
        self.with(|f| {
            let c = &mut f.clocks[self.me];
            c[self.me] += 1;
            c.clone()
        })
    }

    /// Spawns a model thread running `body` with a recorder of its own, which starts after
    /// everything this thread did so far (the spawn edge).
    pub fn spawn<P: StatsPolicy>(
        &self,
        sched: &schedlab_core::sync::Arc<Scheduler<P>>,
        body: impl FnOnce(&Scheduler<P>, &Recorder) + Send + 'static,
    ) -> Spawned {
        let id = self.with(|f| {
            let id = f.clocks.len();
            let mut child = f.clocks[self.me].clone();
            child.resize(id + 1, 0);
            f.clocks.push(child);
            f.clocks[self.me][self.me] += 1;
            id
        });
        let child = Recorder { facts: self.facts.clone(), me: id };
        let sched = sched.clone();
        let handle = thread::spawn(move || {
            body(&*sched, &child);
            child.tick();
        });
        Spawned { handle, id }
    }

    /// Joins a thread of [`Recorder::spawn`]: everything it did is ordered before what this
    /// thread does next (the join edge).
    pub fn join(&self, spawned: Spawned) {
        spawned.handle.join().expect("a model thread panicked");
        self.with(|f| {
            let theirs = f.clocks[spawned.id].clone();
            merge(&mut f.clocks[self.me], &theirs);
        });
        self.tick();
    }

    /// Publishes this thread's past with `flag` (a Release store): a thread that observes the flag
    /// set ([`Recorder::observe`]) is ordered after everything this thread did so far.
    pub fn publish(&self, flag: &AtomicBool) {
        let clock = self.tick();
        self.with(|f| f.mailbox.insert(flag as *const AtomicBool as usize, clock));
        flag.store(true, Ordering::Release);
    }

    /// Reads `flag` (an Acquire load); if it was published, this thread is ordered after the
    /// publisher's past. Returns whether it was.
    pub fn observe(&self, flag: &AtomicBool) -> bool {
        if !flag.load(Ordering::Acquire) {
            return false;
        }
        self.with(|f| {
            let theirs = f
                .mailbox
                .get(&(flag as *const AtomicBool as usize))
                .cloned()
                .expect("a published flag has a clock");
            merge(&mut f.clocks[self.me], &theirs);
        });
        self.tick();
        true
    }

    /// Creates a group under `parent` (the creator's fact).
    pub fn create<P: StatsPolicy>(
        &self,
        sched: &Scheduler<P>,
        parent: GroupId,
    ) -> Result<GroupId, SchedError> {
        let group = sched.create_group(parent, 100)?;
        self.created(group, parent);
        Ok(group)
    }

    /// `group` was created under `parent`.
    pub fn created(&self, group: GroupId, parent: GroupId) {
        self.with(|f| f.parents.insert(group, Some(parent)));
    }

    /// `group` was removed.
    pub fn removed(&self, group: GroupId) {
        self.with(|f| f.removed.insert(group));
    }

    /// Issues `spec` through `process`, which this thread put in `group`.
    pub fn insert<P: StatsPolicy>(
        &self,
        process: &Process<'_, P>,
        group: GroupId,
        spec: RequestSpec,
    ) -> InsertOutcome {
        let begin = self.tick();
        let outcome = process.insert(spec);
        let end = self.tick();
        let span = Span { thread: self.me, begin, end };
        let merged = outcome == InsertOutcome::Merged;
        let listed = outcome == InsertOutcome::Listed;
        self.with(|f| {
            f.issues.push(Issue {
                span,
                group,
                tag: spec.tag,
                sectors: spec.sectors,
                merged,
                bio: false,
                listed,
            })
        });
        outcome
    }

    /// Tries to merge `spec` as a bio (`Process::bio_merge`) through `process`, which this thread
    /// put in `group`; a bio that merged is an issued request (merged at once), one that did not
    /// made none. Returns whether it merged.
    pub fn bio_merge<P: StatsPolicy>(
        &self,
        process: &Process<'_, P>,
        group: GroupId,
        spec: RequestSpec,
    ) -> bool {
        let begin = self.tick();
        let merged = process.bio_merge(spec);
        let end = self.tick();
        if merged {
            let span = Span { thread: self.me, begin, end };
            self.with(|f| {
                f.issues.push(Issue {
                    span,
                    group,
                    tag: spec.tag,
                    sectors: spec.sectors,
                    merged,
                    bio: true,
                    listed: false,
                })
            });
        }
        merged
    }

    /// Moves `process` (which issues through this thread) to `to`.
    pub fn move_to<P: StatsPolicy>(
        &self,
        process: &Process<'_, P>,
        to: GroupId,
    ) -> Result<(), SchedError> {
        let begin = self.tick();
        let moved = process.move_to(to);
        let end = self.tick();
        if moved.is_ok() {
            self.with(|f| f.moves.push(Move { span: Span { thread: self.me, begin, end }, to }));
        }
        moved
    }

    /// Dispatches and completes one request, if there is one. Returns whether there was.
    pub fn dispatch<P: StatsPolicy>(&self, sched: &Scheduler<P>) -> bool {
        let begin = self.tick();
        let Some(rq) = sched.dispatch() else { return false };
        let tag = rq.tag;
        let done = rq.complete();
        let end = self.tick();
        self.with(|f| {
            f.dispatches.push(Dispatch {
                span: Span { thread: self.me, begin, end },
                tag,
                absorbed: done.absorbed,
            })
        });
        true
    }

    /// The scenarios' `drain` (dispatch and complete everything, let an idling queue's timer
    /// fire), with every dispatch recorded.
    pub fn drain<P: StatsPolicy>(&self, sched: &Scheduler<P>) {
        loop {
            if self.dispatch(sched) {
                continue;
            }
            let Some(deadline) = sched.idle_deadline() else { break };
            match sched.clock() {
                schedlab_core::SchedClock::Manual(clock) => clock.set(clock.now_ns().max(deadline)),
                schedlab_core::SchedClock::Real(_) => break,
            }
            sched.run_idle_timer();
        }
    }

    /// Reads `group`'s statistics (`group_stats`: flush-on-read under rstat), for [`Recorder::check_reads`].
    pub fn read<P: StatsPolicy>(&self, sched: &Scheduler<P>, group: GroupId) {
        let begin = self.tick();
        let snapshot = sched.group_stats(group);
        let end = self.tick();
        if let Ok(snapshot) = snapshot {
            self.with(|f| {
                f.reads.push(Read {
                    span: Span { thread: self.me, begin, end },
                    group,
                    how: "group_stats",
                    snapshot,
                })
            });
        }
    }

    /// Reads `group`'s statistics through `inspect_group` (which flushes the same way).
    pub fn inspect<P: StatsPolicy>(&self, sched: &Scheduler<P>, group: GroupId) {
        let begin = self.tick();
        let snapshot = sched.inspect_group(group, |g| g.stats().snapshot());
        let end = self.tick();
        if let Ok(snapshot) = snapshot {
            self.with(|f| {
                f.reads.push(Read {
                    span: Span { thread: self.me, begin, end },
                    group,
                    how: "inspect_group",
                    snapshot,
                })
            });
        }
    }

    /// Both checks, on a quiescent scheduler (every racer joined, everything drained through
    /// [`Recorder::drain`], reclamation finished).
    pub fn check<P: StatsPolicy>(&self, sched: &Scheduler<P>) {
        self.check_reads::<P>();
        self.check_attribution(sched);
    }

    /// I7 from the issuers' facts (see the module documentation).
    pub fn check_attribution<P: StatsPolicy>(&self, sched: &Scheduler<P>) {
        if P::KEPT == StatsKept::None {
            return;
        }
        let facts = self.with(|f| Snapshot::of(f));
        let online: HashSet<GroupId> =
            facts.parents.keys().filter(|g| !facts.removed.contains(g)).copied().collect();
        let online_now: HashSet<GroupId> = sched.groups().into_iter().map(|g| g.id).collect();
        require(online == online_now, || {
            format!("I7 (issuers' ledger): the groups online are {online_now:?}; the creators and removers say {online:?}")
        });
        let (exact, candidates) = facts.charges::<P>();
        let fold = |g: GroupId| facts.first_online(g);
        let mut expected: HashMap<GroupId, Charge> =
            online.iter().map(|&g| (g, Charge::default())).collect();
        for (g, c) in exact {
            add(expected.entry(fold(g)).or_default(), c);
        }
        let candidates: Vec<Candidate> = candidates
            .into_iter()
            .map(|c| {
                let mut groups: Vec<GroupId> = c.groups.into_iter().map(fold).collect();
                groups.sort_by_key(|g| g.serial());
                groups.dedup();
                Candidate { groups, ..c }
            })
            .collect();
        // Read in a fixed order (by serial), never in the hash set's: every read is a sequence of
        // checker operations (a lock, a load per slot), and a hash set's order is seeded afresh in
        // each execution (`RandomState`). loom replays the recorded prefix of an execution by
        // position, so reads in another order replay one counter's recorded load on another
        // counter and return a value that counter never held (notes/verify.md, round four: the
        // `epoch` "statistics in no group" finding).
        let mut in_order: Vec<GroupId> = online.iter().copied().collect();
        in_order.sort_by_key(|g| g.serial());
        let kept: HashMap<GroupId, Charge> = in_order
            .into_iter()
            .map(|g| {
                let c = match sched.group_stats(g) {
                    Ok(s) => Charge {
                        serviced: StatsSnapshot::total(&s.io_serviced),
                        bytes: StatsSnapshot::total(&s.io_service_bytes),
                        merged: if P::KEPT == StatsKept::Full {
                            StatsSnapshot::total(&s.merged)
                        } else {
                            0
                        },
                    },
                    Err(_) => Charge::default(),
                };
                (g, c)
            })
            .collect();
        let ambiguous = candidates.iter().filter(|c| c.groups.len() > 1).count();
        require(feasible(&expected, &candidates, &kept), || {
            format!(
                "I7 (issuers' ledger): the groups keep {kept:?}, the issuing threads charged {expected:?} plus {candidates:?} \
                 ({ambiguous} dispatch(es) concurrent with their issuer's move, each to one of its groups); the scheduler counted {:?}",
                sched.counters(),
            )
        });
    }

    /// Every recorded read against the operations ordered before it (see the module documentation).
    pub fn check_reads<P: StatsPolicy>(&self) {
        if P::KEPT == StatsKept::None {
            return;
        }
        let facts = self.with(|f| Snapshot::of(f));
        let ops = facts.charging_ops::<P>();
        for r in &facts.reads {
            let below = facts.descendants(r.group);
            let (mut low, mut high) = (Charge::default(), Charge::default());
            for (span, charge, groups) in &ops {
                if groups.iter().all(|&g| g == r.group) && span.before(&r.span) {
                    add(&mut low, *charge);
                }
                let after = ordered_before(r.span.thread, &r.span.end, &span.begin);
                if groups.iter().any(|g| below.contains(g)) && !after {
                    add(&mut high, *charge);
                }
            }
            let seen = Charge {
                serviced: StatsSnapshot::total(&r.snapshot.io_serviced),
                bytes: StatsSnapshot::total(&r.snapshot.io_service_bytes),
                merged: 0,
            };
            let fits = (low.serviced..=high.serviced).contains(&seen.serviced)
                && (low.bytes..=high.bytes).contains(&seen.bytes);
            require(fits, || {
                format!(
                    "read against its past: {} of {} (thread {}) saw {} io_serviced, {} bytes; the operations ordered before it \
                     charged {} ({} bytes), all that could have happened by its end {} ({} bytes)",
                    r.how, r.group, r.span.thread, seen.serviced, seen.bytes, low.serviced, low.bytes, high.serviced, high.bytes
                )
            });
        }
    }
}

fn add(to: &mut Charge, c: Charge) {
    to.serviced += c.serviced;
    to.bytes += c.bytes;
    to.merged += c.merged;
}

/// Whether some choice of one group per candidate makes the charges equal what each group keeps.
/// Exhaustive over the choices (the models have a handful of concurrent moves); past 4096 choices,
/// only the totals and each group's certain part are compared.
fn feasible(
    exact: &HashMap<GroupId, Charge>,
    candidates: &[Candidate],
    kept: &HashMap<GroupId, Charge>,
) -> bool {
    let choices: usize = candidates.iter().map(|c| c.groups.len().max(1)).product();
    if choices > 4096 {
        let total = |m: &HashMap<GroupId, Charge>| {
            m.values().fold(Charge::default(), |mut a, c| {
                add(&mut a, *c);
                a
            })
        };
        let mut all = total(exact);
        for c in candidates {
            add(&mut all, c.charge);
        }
        return all == total(kept)
            && exact.iter().all(|(g, c)| kept.get(g).is_some_and(|k| k.serviced >= c.serviced));
    }
    (0..choices).any(|mut choice| {
        let mut sums = exact.clone();
        for c in candidates {
            let n = c.groups.len().max(1);
            if let Some(&g) = c.groups.get(choice % n) {
                add(sums.entry(g).or_default(), c.charge);
            }
            choice /= n;
        }
        sums.iter().all(|(g, c)| kept.get(g).copied().unwrap_or_default() == *c)
            && kept.iter().all(|(g, k)| sums.get(g).copied().unwrap_or_default() == *k)
    })
}

/// The facts, copied out of the oracle mutex for a check.
struct Snapshot {
    parents: HashMap<GroupId, Option<GroupId>>,
    removed: HashSet<GroupId>,
    issues: Vec<Issue>,
    dispatches: Vec<Dispatch>,
    moves: Vec<Move>,
    reads: Vec<Read>,
}

impl Snapshot {
    fn of(f: &Facts) -> Snapshot {
        Snapshot {
            parents: f.parents.clone(),
            removed: f.removed.clone(),
            issues: f.issues.clone(),
            dispatches: f.dispatches.clone(),
            moves: f.moves.clone(),
            reads: f.reads.clone(),
        }
    }

    /// The group a removed group's charges went to: its first online ancestor.
    fn first_online(&self, mut g: GroupId) -> GroupId {
        while self.removed.contains(&g) {
            match self.parents.get(&g).copied().flatten() {
                Some(parent) => g = parent,
                None => break,
            }
        }
        g
    }

    /// `group` and every group below it whose charges can reach it: those removed, with every
    /// group between them and `group` (a removal hands a group's charges to its parent).
    fn descendants(&self, group: GroupId) -> HashSet<GroupId> {
        self.parents
            .keys()
            .copied()
            .filter(|&g| {
                let mut at = g;
                loop {
                    if at == group {
                        return true;
                    }
                    if !self.removed.contains(&at) {
                        return false;
                    }
                    match self.parents.get(&at).copied().flatten() {
                        Some(parent) => at = parent,
                        None => return false,
                    }
                }
            })
            .collect()
    }

    fn issue(&self, tag: u64) -> Option<&Issue> {
        self.issues.iter().find(|i| i.tag == tag)
    }

    /// The groups the queue of `issue`'s thread may have been in while `span` ran: the group it
    /// was issued in and the targets of the issuer's later moves, minus those that a move ordered
    /// before `span` left behind and those a move ordered after `span` had not reached yet.
    fn groups_during(&self, issue: &Issue, span: &Span) -> Vec<GroupId> {
        let t = issue.span.thread;
        let mut later: Vec<&Move> = self
            .moves
            .iter()
            .filter(|m| m.span.thread == t && ordered_before(t, &issue.span.end, &m.span.begin))
            .collect();
        later.sort_by_key(|m| m.span.begin[t]);
        let path: Vec<GroupId> =
            std::iter::once(issue.group).chain(later.iter().map(|m| m.to)).collect();
        let low = later.iter().rposition(|m| m.span.before(span)).map_or(0, |i| i + 1);
        let high = later
            .iter()
            .position(|m| ordered_before(span.thread, &span.end, &m.span.begin))
            .unwrap_or(later.len());
        path[low..=high.max(low)].to_vec()
    }

    /// Every operation that charges io_serviced and io_service_bytes, with its charge and the
    /// groups it may have charged (before removals fold them): the inserts for a policy that counts
    /// at submission, the dispatches otherwise.
    fn charging_ops<P: StatsPolicy>(&self) -> Vec<(Span, Charge, Vec<GroupId>)> {
        if P::LEGACY_IO_AT_SUBMIT {
            return self
                .issues
                .iter()
                .filter(|i| !i.bio)
                .map(|i| {
                    (
                        i.span.clone(),
                        Charge { serviced: 1, bytes: i.sectors as i64 * 512, merged: 0 },
                        vec![i.group],
                    )
                })
                .collect();
        }
        let mut ops = Vec::new();
        for d in &self.dispatches {
            let Some(host) = self.issue(d.tag) else {
                violation(format!(
                    "I7 (issuers' ledger): request {} was dispatched but no thread issued it",
                    d.tag
                ));
                continue;
            };
            // Each sector is its issuer's: the request is charged once, to one group, so that group
            // must be one that every issuer of its sectors (the absorbing request's and each
            // absorbed one's) can have had its queue in while the dispatch ran. A request absorbed
            // after its issuer's move thus settles the group even when the dispatch is concurrent
            // with the move.
            let absorbed: Vec<&Issue> = d.absorbed.iter().filter_map(|&a| self.issue(a)).collect();
            let sectors: i64 = absorbed.iter().chain([&host]).map(|i| i.sectors as i64).sum();
            let mut groups = self.groups_during(host, &d.span);
            for issue in &absorbed {
                let theirs = self.groups_during(issue, &d.span);
                groups.retain(|g| theirs.contains(g));
            }
            if groups.is_empty() {
                violation(format!(
                    "I7 (issuers' ledger): request {} and the requests it absorbed {:?} were \
                     issued where no one group holds them all",
                    d.tag, d.absorbed
                ));
                continue;
            }
            let charge = Charge { serviced: 1, bytes: sectors * 512, merged: 0 };
            ops.push((d.span.clone(), charge, groups));
        }
        ops
    }

    /// The charges the facts name: exact ones by group, and the dispatches whose group depends
    /// on a concurrent move.
    fn charges<P: StatsPolicy>(&self) -> (Vec<(GroupId, Charge)>, Vec<Candidate>) {
        let mut exact = Vec::new();
        let mut candidates = Vec::new();
        for (_, charge, groups) in self.charging_ops::<P>() {
            if groups.len() == 1 {
                exact.push((groups[0], charge));
            } else {
                candidates.push(Candidate { charge, groups });
            }
        }
        if P::KEPT == StatsKept::Full {
            let one = Charge { merged: 1, ..Charge::default() };
            // A request that merged at its insert: its issuer's group then.
            for i in self.issues.iter().filter(|i| i.merged) {
                exact.push((i.group, one));
            }
            // A queued request absorbed by a later merge: the group of the merging request, which
            // precedes it in the absorbing request's list.
            for d in &self.dispatches {
                let mut by: Option<GroupId> = None;
                for &a in &d.absorbed {
                    match self.issue(a) {
                        Some(i) if i.merged => by = Some(i.group),
                        // A listed request (the `lists` path) merges when a dispatch splices it:
                        // into a queued request, or absorbing one spliced before it. Either way the
                        // merge is charged to its queue's group at that splice, which comes after
                        // this request was listed (a merging request is spliced after the one it
                        // absorbs, and the lists are spliced in their order) and before the
                        // absorbing request's dispatch ended: the issuer's groups in that window.
                        Some(i) if i.listed => {
                            let window = Span { thread: d.span.thread, begin: i.span.begin.clone(), end: d.span.end.clone() };
                            let groups = self.groups_during(i, &window);
                            if groups.len() == 1 {
                                exact.push((groups[0], one));
                            } else {
                                candidates.push(Candidate { charge: one, groups });
                            }
                        }
                        Some(_) => match by {
                            Some(g) => exact.push((g, one)),
                            None => violation(format!("I7 (issuers' ledger): request {a} was absorbed by no merge")),
                        },
                        None => violation(format!("I7 (issuers' ledger): request {a} was absorbed but no thread issued it")),
                    }
                }
            }
        }
        (exact, candidates)
    }
}

/// The oracle's own negative controls (issue 35, item 1): each check fails, by its name, on facts
/// broken in exactly the way it names, and passes on a real run's facts and at its boundaries.
#[cfg(all(test, not(any(loom, shuttle))))]
mod tests {
    use super::*;
    use schedlab_core::{LockKind, Op, SchedClock, SchedConfig};
    use schedlab_variants::sched_lock::SchedLock;

    fn rq(sector: u64, tag: u64) -> RequestSpec {
        RequestSpec { sector, sectors: 8, op: Op::READ_SYNC, at_head: false, tag }
    }

    type Sched = schedlab_core::sync::Arc<Scheduler<SchedLock>>;

    /// One dispatch slot: requests are dispatched one at a time.
    fn one_slot() -> SchedConfig {
        SchedConfig { slots: 1, ..SchedConfig::default() }
    }

    /// A `sched-lock` scheduler with `cfg` on a ticking manual clock (as the scenarios', which
    /// this module, below them, does not import), and a recorder started at its root.
    fn recorded(cfg: SchedConfig) -> (Sched, Recorder) {
        let (clock, _) = SchedClock::manual_ticking(1);
        let sched = Scheduler::<SchedLock>::new(LockKind::FairSpin, cfg, clock);
        let rec = Recorder::start(sched.root());
        (sched, rec)
    }

    /// [`recorded`], with two groups G1 and G2 under the root, their creation recorded.
    fn with_two_groups(cfg: SchedConfig) -> (Sched, Recorder, GroupId, GroupId) {
        let (sched, rec) = recorded(cfg);
        let g1 = rec.create(&sched, sched.root()).unwrap();
        let g2 = rec.create(&sched, sched.root()).unwrap();
        (sched, rec, g1, g2)
    }

    /// A recorded run: in G, a request, one merged into it, and one apart; one dispatched before
    /// a read of G, the rest after; then a read of G and of the root.
    fn run() -> (Sched, Recorder, GroupId) {
        let (sched, rec) = recorded(one_slot());
        let g = rec.create(&sched, sched.root()).unwrap();
        {
            let p = sched.spawn_process(g).unwrap();
            rec.insert(&p, g, rq(0, 1));
            rec.insert(&p, g, rq(8, 2));
            rec.insert(&p, g, rq(640, 3));
        }
        rec.dispatch(&sched);
        rec.read(&sched, g);
        rec.drain(&sched);
        rec.inspect(&sched, g);
        rec.read(&sched, sched.root());
        (sched, rec, g)
    }

    fn fails(name: &str, f: impl FnOnce()) {
        let message = match std::panic::catch_unwind(std::panic::AssertUnwindSafe(f)) {
            Ok(()) => panic!("the check passed; expected it to fail for {name:?}"),
            Err(e) => e.downcast_ref::<String>().cloned().unwrap_or_default(),
        };
        assert!(message.contains(name), "failed for another reason than {name:?}: {message}");
    }

    #[test]
    fn a_real_run_passes_both_checks() {
        let (sched, rec, _) = run();
        rec.check(&sched);
    }

    /// [`run`] with its facts edited by `edit` (given G): the reads' check must fail.
    fn reads_fail_once(edit: impl FnOnce(&mut Facts, GroupId)) {
        let (_, rec, g) = run();
        rec.with(|f| edit(f, g));
        fails("read against its past", move || rec.check_reads::<SchedLock>());
    }

    /// [`run`] with its facts edited by `edit` (given the root): the I7 check must fail.
    fn attribution_fails_once(edit: impl FnOnce(&mut Facts, GroupId)) {
        let (sched, rec, _) = run();
        let root = sched.root();
        rec.with(|f| edit(f, root));
        fails("I7 (issuers' ledger)", move || rec.check_attribution(&sched));
    }

    #[test]
    fn a_read_missing_what_happened_before_it_fails() {
        reads_fail_once(|f, _| f.reads[0].snapshot.io_serviced = [0; 4]);
    }

    #[test]
    fn a_read_missing_bytes_fails() {
        reads_fail_once(|f, _| f.reads[1].snapshot.io_service_bytes[0] -= 512);
    }

    #[test]
    fn a_read_seeing_what_had_not_happened_fails() {
        // The first read came before the second dispatch: it cannot have seen two.
        reads_fail_once(|f, _| f.reads[0].snapshot.io_serviced[0] += 1);
    }

    #[test]
    fn a_read_of_another_group_bounds_it_from_above() {
        // The root saw nothing of G's (G is online: nothing of it reaches the root).
        reads_fail_once(|f, g| {
            let r = f.reads.iter_mut().find(|r| r.group != g).unwrap();
            r.snapshot.io_serviced[0] += 1;
        });
    }

    #[test]
    fn service_issued_elsewhere_fails_attribution() {
        attribution_fails_once(|f, root| f.issues[2].group = root);
    }

    #[test]
    fn a_merge_issued_elsewhere_fails_attribution() {
        attribution_fails_once(|f, root| f.issues[1].group = root);
    }

    #[test]
    fn a_removal_nobody_made_fails_attribution() {
        let (sched, rec, g) = run();
        rec.removed(g);
        fails("I7 (issuers' ledger)", move || rec.check_attribution(&sched));
    }

    /// In G1 a request dispatched before the move (charged to G1), then a move to G2 and a
    /// request dispatched after it (charged to G2).
    fn run_with_a_move() -> (Sched, Recorder, GroupId, GroupId) {
        let (sched, rec, g1, g2) = with_two_groups(one_slot());
        {
            let p = sched.spawn_process(g1).unwrap();
            rec.insert(&p, g1, rq(0, 1));
            rec.insert(&p, g1, rq(640, 2));
            rec.dispatch(&sched);
            rec.move_to(&p, g2).unwrap();
            rec.insert(&p, g2, rq(1280, 3));
        }
        rec.drain(&sched);
        rec.read(&sched, g2);
        (sched, rec, g1, g2)
    }

    #[test]
    fn a_real_run_with_a_move_passes_and_the_move_decides() {
        let (sched, rec, _, _) = run_with_a_move();
        rec.check(&sched);
        let (sched, rec, g1, _) = run_with_a_move();
        // Had the move gone back to G1, everything would be G1's.
        rec.with(|f| f.moves[0].to = g1);
        fails("I7 (issuers' ledger)", move || rec.check_attribution(&sched));
    }

    /// On the `lists` path, in G1: two requests listed and spliced by a dispatch (one
    /// dispatched, the one at 64 left queued in G1), a move to G2, and a request listed at 72
    /// that merges into it at the next splice (a merge into another group's request, made by the
    /// dispatcher, charged to G2).
    fn run_lists_merge_after_a_move() -> (Sched, Recorder, GroupId, GroupId) {
        let lists = SchedConfig { insert: schedlab_core::InsertPathKind::Lists, ..one_slot() };
        let (sched, rec, g1, g2) = with_two_groups(lists);
        {
            let p = sched.spawn_process(g1).unwrap();
            assert_eq!(rec.insert(&p, g1, rq(0, 1)), InsertOutcome::Listed);
            rec.insert(&p, g1, rq(64, 2));
            rec.dispatch(&sched);
            rec.move_to(&p, g2).unwrap();
            rec.insert(&p, g2, rq(72, 3));
        }
        rec.drain(&sched);
        (sched, rec, g1, g2)
    }

    #[test]
    fn a_merge_made_at_the_splice_is_charged_there() {
        let (sched, rec, _, g2) = run_lists_merge_after_a_move();
        // The run is what the fixture says: request 2 absorbed request 3 at the splice, in G2.
        let absorbed =
            rec.with(|f| f.dispatches.iter().find(|d| d.tag == 2).map(|d| d.absorbed.clone()));
        assert_eq!(absorbed, Some(vec![3]));
        assert_eq!(StatsSnapshot::total(&sched.group_stats(g2).unwrap().merged), 1);
        rec.check(&sched);
        // Had the request at 72 been listed before the move, G1 would have been possible too;
        // listed after a move back to G1, only G1 is.
        let (sched, rec, g1, _) = run_lists_merge_after_a_move();
        rec.with(|f| f.moves[0].to = g1);
        fails("I7 (issuers' ledger)", move || rec.check_attribution(&sched));
    }

    /// In G1 a request X at 16; a move to G2; there a request at 24 that back-merges into X;
    /// then X is dispatched. The dispatch's facts are then made concurrent with the move (as a
    /// dispatcher thread's would be: no edge of the model orders them).
    fn run_merge_after_a_move_dispatched_concurrently() -> (Snapshot, GroupId, GroupId) {
        let (sched, rec, g1, g2) = with_two_groups(one_slot());
        {
            let p = sched.spawn_process(g1).unwrap();
            rec.insert(&p, g1, rq(16, 1));
            rec.move_to(&p, g2).unwrap();
            assert_eq!(rec.insert(&p, g2, rq(24, 2)), InsertOutcome::Merged);
        }
        rec.dispatch(&sched);
        rec.with(|f| {
            let d = &mut f.dispatches[0];
            assert_eq!((d.tag, d.absorbed.clone()), (1, vec![2]));
            d.span = Span { thread: 1, begin: vec![0, 1], end: vec![0, 2] };
        });
        (rec.with(|f| Snapshot::of(f)), g1, g2)
    }

    #[test]
    fn each_sector_is_its_issuers_a_request_merged_after_a_move_settles_the_group() {
        let (facts, g1, g2) = run_merge_after_a_move_dispatched_concurrently();
        let ops = facts.charging_ops::<SchedLock>();
        assert_eq!(ops.len(), 1);
        assert_eq!(ops[0].1, Charge { serviced: 1, bytes: 16 * 512, merged: 0 });
        // The request issued in G2 after the move rules G1 out, though the dispatch raced it.
        assert_eq!(ops[0].2, vec![g2]);
        // Without it (the absorbing request's facts alone), either group would do.
        let (mut facts, _, _) = run_merge_after_a_move_dispatched_concurrently();
        facts.dispatches[0].absorbed.clear();
        let ops = facts.charging_ops::<SchedLock>();
        assert_eq!(ops[0].2, vec![g1, g2]);
    }

    /// The main thread issues a request in G1, spawns a dispatcher, and moves its process to G2;
    /// the dispatcher dispatches it after the move in real time, but nothing the model records
    /// orders the two (it waits on a channel the recorder does not see), so the facts leave two
    /// candidate groups. After the join, a read of each group. The request went with its queue:
    /// G2 was charged.
    fn run_dispatch_concurrent_with_its_issuers_move() -> (Sched, Recorder, GroupId, GroupId) {
        let (sched, rec, g1, g2) = with_two_groups(one_slot());
        let p = sched.spawn_process(g1).unwrap();
        rec.insert(&p, g1, rq(0, 1));
        let (moved, wait) = std::sync::mpsc::channel::<()>();
        let dispatcher = rec.spawn(&sched, move |sched, rec| {
            wait.recv().unwrap();
            assert!(rec.dispatch(sched));
        });
        rec.move_to(&p, g2).unwrap();
        moved.send(()).unwrap();
        rec.join(dispatcher);
        drop(p);
        rec.read(&sched, g1);
        rec.read(&sched, g2);
        rec.drain(&sched);
        (sched, rec, g1, g2)
    }

    #[test]
    fn a_read_after_a_dispatch_concurrent_with_its_issuers_move_bounds_by_both_groups() {
        let (sched, rec, g1, g2) = run_dispatch_concurrent_with_its_issuers_move();
        let facts = rec.with(|f| Snapshot::of(f));
        // The facts are what the fixture says: one charge, either group, before both reads.
        let ops = facts.charging_ops::<SchedLock>();
        assert_eq!(ops.len(), 1);
        assert_eq!(ops[0].2, vec![g1, g2]);
        assert!(facts.reads.iter().all(|r| ops[0].0.before(&r.span)));
        let seen: Vec<i64> =
            facts.reads.iter().map(|r| StatsSnapshot::total(&r.snapshot.io_serviced)).collect();
        assert_eq!(seen, vec![0, 1]);
        // G1 saw nothing: the charge may have gone to G2, so it is not in G1's lower bound. G2
        // saw it: it may have gone to G2, so it is in G2's upper bound.
        rec.check(&sched);
        // Either group would have done: the same reads, swapped, pass too.
        rec.with(|f| {
            let (a, b) = (f.reads[0].group, f.reads[1].group);
            f.reads[0].group = b;
            f.reads[1].group = a;
        });
        rec.check_reads::<SchedLock>();
        // But not a read of G1 that saw it twice.
        rec.with(|f| f.reads[1].snapshot.io_serviced[0] += 1);
        fails("read against its past", move || rec.check_reads::<SchedLock>());
    }

    /// The main thread puts its process in G2 and back in G1 before it issues there; another
    /// thread (spawned after the issue, joined before the dispatch) moves its own process to G2.
    /// Neither move is the request's: it is charged to G1.
    fn run_with_moves_not_the_requests() -> (Sched, Recorder, GroupId, GroupId) {
        let (sched, rec, g1, g2) = with_two_groups(one_slot());
        let p = sched.spawn_process(g1).unwrap();
        rec.move_to(&p, g2).unwrap();
        rec.move_to(&p, g1).unwrap();
        rec.insert(&p, g1, rq(0, 1));
        let other = rec.spawn(&sched, move |sched, rec| {
            let q = sched.spawn_process(g1).unwrap();
            rec.move_to(&q, g2).unwrap();
        });
        rec.join(other);
        rec.dispatch(&sched);
        drop(p);
        rec.read(&sched, g1);
        rec.drain(&sched);
        (sched, rec, g1, g2)
    }

    #[test]
    fn another_threads_move_and_the_issuers_earlier_ones_are_not_the_requests_path() {
        let (sched, rec, g1, _) = run_with_moves_not_the_requests();
        let facts = rec.with(|f| Snapshot::of(f));
        assert_eq!(facts.moves.len(), 3);
        assert_eq!(facts.charging_ops::<SchedLock>()[0].2, vec![g1]);
        assert_eq!(StatsSnapshot::total(&sched.group_stats(g1).unwrap().io_serviced), 1);
        rec.check(&sched);
    }

    /// `feasible` compares both ways: a group charged that keeps nothing (absent from what the
    /// groups keep), and a group that keeps something nobody charged (absent from the charges),
    /// each fail, while every group present in both agrees.
    #[test]
    fn a_group_on_one_side_only_is_not_feasible() {
        let (sched, _, g1) = run();
        let g2 = sched.root();
        let charge = Charge { serviced: 1, bytes: 4096, merged: 0 };
        let only_g1: HashMap<GroupId, Charge> = [(g1, charge)].into();
        let both: HashMap<GroupId, Charge> = [(g1, charge), (g2, charge)].into();
        assert!(feasible(&only_g1, &[], &only_g1));
        assert!(!feasible(&only_g1, &[], &both), "G2 keeps a charge nobody made");
        assert!(!feasible(&both, &[], &only_g1), "G2 was charged and keeps nothing");
    }

    #[test]
    fn exactly_4096_choices_are_still_tried_one_by_one() {
        let (sched, _, g1) = run();
        let g2 = sched.root();
        let charge = Charge { serviced: 1, bytes: 4096, merged: 0 };
        let exact: HashMap<GroupId, Charge> =
            [(g1, Charge::default()), (g2, Charge::default())].into();
        // 12 two-way candidates: 4096 choices.
        let twelve = vec![Candidate { charge, groups: vec![g1, g2] }; 12];
        let kept = |a: Charge, b: Charge| -> HashMap<GroupId, Charge> { [(g1, a), (g2, b)].into() };
        let times = |n: i64| Charge { serviced: n, bytes: 4096 * n, merged: 0 };
        assert!(feasible(&exact, &twelve, &kept(times(5), times(7))));
        // The totals agree, and no group keeps less service than its certain part, but no choice
        // gives G1 six requests and seven requests' bytes: only the exhaustive check sees it.
        let more_bytes = Charge { bytes: 7 * 4096, ..times(6) };
        let less_bytes = Charge { bytes: 5 * 4096, ..times(6) };
        assert!(!feasible(&exact, &twelve, &kept(more_bytes, less_bytes)));
        // One candidate more and the fallback takes it.
        let thirteen = vec![Candidate { charge, groups: vec![g1, g2] }; 13];
        assert!(feasible(
            &exact,
            &thirteen,
            &kept(more_bytes, Charge { bytes: 6 * 4096, ..times(7) })
        ));
    }

    #[test]
    fn a_move_leaves_two_candidates_and_orders_settle_them() {
        let (sched, _, g1) = run();
        let g2 = sched.root();
        let charge = Charge { serviced: 1, bytes: 4096, merged: 0 };
        let exact: HashMap<GroupId, Charge> =
            [(g1, Charge::default()), (g2, Charge::default())].into();
        let either = [Candidate { charge, groups: vec![g1, g2] }];
        let in_g2: HashMap<GroupId, Charge> = [(g1, Charge::default()), (g2, charge)].into();
        let in_g1: HashMap<GroupId, Charge> = [(g1, charge), (g2, Charge::default())].into();
        assert!(feasible(&exact, &either, &in_g2) && feasible(&exact, &either, &in_g1));
        let only_g2 = [Candidate { charge, groups: vec![g2] }];
        assert!(feasible(&exact, &only_g2, &in_g2) && !feasible(&exact, &only_g2, &in_g1));
        let doubled: HashMap<GroupId, Charge> = [(g1, charge), (g2, charge)].into();
        assert!(!feasible(&exact, &either, &doubled));
        let nothing: HashMap<GroupId, Charge> =
            [(g1, Charge::default()), (g2, Charge::default())].into();
        assert!(!feasible(&exact, &either, &nothing));
        // Past 4096 choices (13 two-way candidates): the totals, and each group's certain part.
        let times = |n: i64| Charge { serviced: n, bytes: 4096 * n, merged: 0 };
        let many = vec![Candidate { charge, groups: vec![g1, g2] }; 13];
        let kept = |a: i64, b: i64| -> HashMap<GroupId, Charge> {
            [(g1, times(a)), (g2, times(b))].into()
        };
        assert!(feasible(&exact, &many, &kept(6, 7)));
        assert!(!feasible(&exact, &many, &kept(6, 6)));
        let certain: HashMap<GroupId, Charge> = [(g1, times(1)), (g2, Charge::default())].into();
        assert!(feasible(&certain, &many, &kept(1, 13)));
        assert!(!feasible(&certain, &many, &kept(0, 14)));
    }
}
