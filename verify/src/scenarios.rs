//! Model bodies, generic over the variant: each is one execution that a checker repeats under
//! every interleaving it explores (or that a plain test runs once). They build the real scheduler
//! with a manual clock and one stat slot (the smallest state that still has every counter and
//! lock), race the paths that can reach a group or a queue after the scheduler lock against the
//! paths that reparent and free them, and end with the same checks ([`finish`]):
//!
//! 1. every thread joined, every request completed;
//! 2. reclamation finished *inside the execution* ([`quiesce`]: a grace-period protection's
//!    collector is flushed until nothing awaits it);
//! 3. I2, conservation: requests balance, and over the online groups (removed groups handed
//!    their counts to their parents) `queued` sums to 0 (per group, unless a process moved with
//!    requests queued: kernel-map.md, "Notes"), `merged` to the merges and `io_serviced` to the
//!    dispatches;
//! 4. teardown, reclamation again, then I3 with no allowance: no queue, no group and nothing
//!    awaiting reclamation is left.
//!
//! A use after free anywhere on the way is a violation too: freed objects are quarantined with a
//! poisoned liveness word that every accessor checks (`schedlab_core::sync`).
//!
//! Removal scenarios race [`Protection::reclaim_step`] against the deferred updates (the remover
//! flushes right after removing), so that a free which a protection lets happen too early happens
//! inside the update's window. A variant whose protection refuses removal (`NoRemoval`) runs the
//! same paths with the removal replaced by a check that it is refused.
//!
//! Threads get the scheduler through an `Arc` (the checker's): a `Process` borrows the scheduler,
//! so each thread makes its own.

use crate::history::Recorder;
use schedlab_core::sync::{thread, violation, Arc, AtomicBool, OracleArc};
use schedlab_core::{
    Census, Clock, Consistency, Dispatched, GroupId, InsertOutcome, InsertPathKind, KernelProfile,
    LockKind, Op, Process, Protection, RequestSpec, SchedClock, SchedConfig, SchedError, Scheduler,
    StatsKept, StatsPolicy, StatsSnapshot,
};

// `require` lives in a leaf module that both this module and `crate::history` use, so that the
// two import in one direction only (scenarios → history; issue 44).
pub use crate::invariant::require;

/// The smallest configuration that keeps every statistic: one per-CPU slot.
pub fn config() -> SchedConfig {
    SchedConfig { slots: 1, ..SchedConfig::default() }
}

/// The configuration of the idling scenarios: a queue that empties waits `IDLE_NS` for its next
/// request.
pub fn idling_config() -> SchedConfig {
    SchedConfig { slice_idle_ns: IDLE_NS, ..config() }
}

/// The idle slice of [`idling_config`].
pub const IDLE_NS: u64 = 1_000;

/// A request of 8 sectors at `sector * 64` (so two requests never merge unless asked to).
pub fn request(sector: u64, tag: u64) -> RequestSpec {
    RequestSpec { sector: sector * 64, sectors: 8, op: Op::READ_SYNC, at_head: false, tag }
}

/// A request of 8 sectors at exactly `sector` (for merges).
pub fn request_at(sector: u64, tag: u64) -> RequestSpec {
    RequestSpec { sector, sectors: 8, op: Op::READ_SYNC, at_head: false, tag }
}

/// A scheduler on a ticking manual clock (every read moves it by 1 ns, so every interval a
/// statistic measures is at least 1 ns), and its census.
pub fn scheduler<P: StatsPolicy>(cfg: SchedConfig) -> (Arc<Scheduler<P>>, OracleArc<Census>) {
    let (sched, census, _) = manual_scheduler(cfg);
    (sched, census)
}

/// Whether the variant's protection lets groups be removed and processes move.
pub fn allows_removal<P: StatsPolicy>() -> bool {
    <P::Protection as Protection>::ALLOWS_REMOVAL
}

/// Removes `group`, or (for a protection that refuses removal) checks that it is refused.
/// Returns whether it was removed.
pub fn remove_or_refused<P: StatsPolicy>(sched: &Scheduler<P>, group: GroupId) -> bool {
    match sched.remove_group(group) {
        Ok(()) => {
            require(allows_removal::<P>(), || {
                format!("{}: removal went through although the protection refuses it", P::NAME)
            });
            true
        }
        Err(SchedError::UnsafeUnderRemoval(_)) => {
            require(!allows_removal::<P>(), || {
                format!("{}: removal refused although the protection allows it", P::NAME)
            });
            false
        }
        Err(e) => {
            violation(format!("scenario: removing {group} failed: {e}"));
            false
        }
    }
}

/// One step of the protection's deferred reclamation (a grace-period protection: pin, flush,
/// try to advance and collect), as a racing thread would make it.
pub fn reclaim_step<P: StatsPolicy>() {
    <P::Protection as Protection>::reclaim_step();
}

/// Reclamation steps until nothing awaits reclamation (bounded: inside a model the other threads
/// have been joined, so each step makes progress or there is nothing left to make).
pub fn quiesce<P: StatsPolicy>(census: &Census) {
    for _ in 0..QUIESCE_STEPS {
        if census.awaiting_reclamation() == 0 {
            return;
        }
        reclaim_step::<P>();
    }
}

/// Enough for a retired group and two generations of parents (two epoch advances each).
const QUIESCE_STEPS: usize = 16;

/// Dispatches and completes everything left, and lets an idling queue's timer fire. A queue that
/// idles (with `slice_idle`) makes dispatch return nothing while requests remain, and keeps the
/// queue in service after its last one: the manual clock is then moved past the idle slice and
/// the idle timer run, as the timer would fire.
pub fn drain<P: StatsPolicy>(sched: &Scheduler<P>) {
    loop {
        if let Some(rq) = sched.dispatch() {
            // Dropping a dispatched request completes it (the path a submitter that gives up
            // takes): the rest of the suite completes explicitly.
            drop(rq);
            continue;
        }
        let Some(deadline) = sched.idle_deadline() else { break };
        match sched.clock() {
            SchedClock::Manual(clock) => clock.set(clock.now_ns().max(deadline)),
            SchedClock::Real(_) => break,
        }
        sched.run_idle_timer();
    }
}

/// Whether a process moved while it had requests queued (then `queued` is conserved only summed
/// over groups: the move leaves `+n` in the old group and `-n` in the new one, kernel-map.md,
/// "Notes").
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Moves {
    None,
    WithRequestsQueued,
}

/// The census against the scheduler's own view: every live queue is a member of an online group
/// (offline moves every queue out), so the two counts agree whenever the scheduler is quiet
/// between paths. Keeps the oracle honest: a census that always said 0 would pass every I3 check.
pub fn check_census<P: StatsPolicy>(sched: &Scheduler<P>, census: &Census) {
    let members: usize = sched.groups().iter().map(|g| g.queues).sum();
    let live = census.live_queues();
    require(live == members, || {
        format!("census: {live} live queues, {members} in the scheduler's groups")
    });
}

/// The end of every scenario: drain, reclaim, I2, teardown, reclaim, I3 (see the module doc).
pub fn finish<P: StatsPolicy>(sched: Arc<Scheduler<P>>, census: OracleArc<Census>, moves: Moves) {
    check_census(&sched, &census);
    drain(&sched);
    quiesce::<P>(&census);
    // No process is alive here (each borrows the scheduler, which `finish` owns), nothing is on
    // the device or listed, and no queue idles: every queue has lost its last holder and must be
    // gone already, not only after teardown (I3 while the scheduler lives).
    let queues = census.live_queues();
    require(queues == 0, || {
        format!("I3: {queues} queue(s) outlived their process, requests and pins")
    });
    check_conservation(&sched, moves);
    drop(sched);
    quiesce::<P>(&census);
    check_nothing_alive(&census, "I3");
}

/// I2 on a quiescent scheduler, then I7 from the scheduler's own ledger: the first condition of
/// [`conservation_failures`] that fails is the model's violation.
pub fn check_conservation<P: StatsPolicy>(sched: &Scheduler<P>, moves: Moves) {
    let c = sched.check_consistency();
    let stats: Vec<(GroupId, StatsSnapshot)> = sched
        .groups()
        .into_iter()
        .filter_map(|g| sched.group_stats(g.id).ok().map(|s| (g.id, s)))
        .collect();
    if let Some((_, message)) =
        conservation_failures(&c, &stats, P::KEPT, P::LEGACY_IO_AT_SUBMIT, moves).into_iter().next()
    {
        violation(message);
    }
}

/// A condition an oracle found false: its name (what the oracle's own tests match,
/// `tests/oracle_conditions.rs`) and the message a model reports.
pub type Failure = (&'static str, String);

/// Every condition of I2 and I7 that a quiescent scheduler's consistency report `c` and its online
/// groups' statistics fail, in order, for a variant keeping `kept` (and counting io_serviced at
/// submission if `counted_at_submit`, `StatsPolicy::LEGACY_IO_AT_SUBMIT`):
///
/// | name | condition |
/// | --- | --- |
/// | `requests` | inserted = completed + merged, nothing queued or on the device |
/// | `dispatched` | dispatched = completed |
/// | `queued-sum` | `queued` sums to 0 over the groups (full statistics) |
/// | `queued-per-group` | every group's `queued` is 0 (full statistics; not after a move with requests queued) |
/// | `merged` | io_merged sums to the merges (full statistics) |
/// | `service-time` | service_time sums to at least 1 ns per completion (full statistics) |
/// | `serviced` | io_serviced sums to the dispatches, or (counted at submission) to the requests that reached the insert (unless nothing is kept) |
/// | `bytes` | io_service_bytes ≥ 512 × io_serviced in each of READ, WRITE, SYNC, ASYNC |
/// | `attribution` | every group keeps what the scheduler's ledger charged it (not after a move with requests queued) |
pub fn conservation_failures(
    c: &Consistency,
    stats: &[(GroupId, StatsSnapshot)],
    kept: StatsKept,
    counted_at_submit: bool,
    moves: Moves,
) -> Vec<Failure> {
    let r = c.counters;
    let mut out: Vec<Failure> = Vec::new();
    let mut check = |holds: bool, name: &'static str, message: &dyn Fn() -> String| {
        if !holds {
            out.push((name, message()));
        }
    };
    check(c.requests_balance && c.outstanding == (0, 0), "requests", &|| {
        format!("I2: inserted != completed + merged, or requests left: {c:?}")
    });
    check(r.dispatched == r.completed, "dispatched", &|| {
        format!("I2: dispatched != completed: {r:?}")
    });
    if kept == StatsKept::Full {
        let queued: i64 = stats.iter().map(|(_, s)| StatsSnapshot::total(&s.queued)).sum();
        check(queued == 0, "queued-sum", &|| {
            format!("I2: queued did not return to 0 (sum over groups {queued}): {stats:?}")
        });
        if moves == Moves::None {
            check(c.groups_with_queued.is_empty(), "queued-per-group", &|| {
                format!("I2: queued did not return to 0: {:?}", c.groups_with_queued)
            });
        }
        let merged: i64 = stats.iter().map(|(_, s)| StatsSnapshot::total(&s.merged)).sum();
        check(merged == r.merged as i64, "merged", &|| {
            format!("I2: io_merged sums to {merged}, {} merges happened", r.merged)
        });
        // Every completion's statistics landed: on the ticking clock each completed request
        // adds at least 1 ns of service time.
        let service: i64 = stats.iter().map(|(_, s)| StatsSnapshot::total(&s.service_time)).sum();
        check(service >= r.completed as i64, "service-time", &|| {
            format!("I2: service_time sums to {service} ns for {} completed requests (a completion's statistics were lost)", r.completed)
        });
    }
    if kept != StatsKept::None {
        let serviced: i64 = stats.iter().map(|(_, s)| StatsSnapshot::total(&s.io_serviced)).sum();
        // What io_serviced counts: dispatched requests, or (counted at submission) every request
        // that reached the insert, merged ones included, bios merged before a request was made not.
        let (counted, what) = if counted_at_submit {
            (r.inserted - r.bio_merged, "submitted")
        } else {
            (r.dispatched, "dispatched")
        };
        check(serviced == counted as i64, "serviced", &|| {
            format!("I2: io_serviced sums to {serviced}, {counted} {what}")
        });
        // Every serviced request carried at least one sector, in each of READ/WRITE/SYNC/ASYNC:
        // a request counted without its bytes (a lost or misrouted io_service_bytes delta) shows.
        let per_type = |f: fn(&StatsSnapshot) -> [i64; 4]| -> [i64; 4] {
            stats.iter().fold([0; 4], |acc, (_, s)| std::array::from_fn(|k| acc[k] + f(s)[k]))
        };
        let (bytes, ios) = (per_type(|s| s.io_service_bytes), per_type(|s| s.io_serviced));
        check((0..4).all(|k| bytes[k] >= 512 * ios[k]), "bytes", &|| {
            format!("I2: io_service_bytes {bytes:?} for io_serviced {ios:?}: a serviced request's bytes were lost")
        });
    }
    // I7 (after I2, which it refines: a count lost or doubled shows as I2 first): each group holds
    // what it was charged (the scheduler's own ledger, kept under its lock apart from the
    // statistics). Exact unless a process moved while a request of its was on the device: then
    // the kernel's rule (the queue's group when the update is applied) may name either group;
    // the issuers' ledger (crate::history) checks those runs.
    if moves == Moves::None {
        check(c.groups_misattributed.is_empty(), "attribution", &|| {
            format!(
                "I7: service charged to the wrong group (group, kept, charged): {:?}",
                c.groups_misattributed
            )
        });
    }
    out
}

/// I3 with no allowance: no queue, no group beyond `groups`, nothing awaiting reclamation.
pub fn check_alive(census: &Census, invariant: &str, groups: usize) {
    let (queues, live, awaiting) =
        (census.live_queues(), census.live_groups(), census.awaiting_reclamation());
    if let Some((_, message)) =
        alive_failures(invariant, queues, live, awaiting, groups).into_iter().next()
    {
        violation(message);
    }
}

/// Every condition of I3 that a census showing `queues` live queues, `live` live groups and
/// `awaiting` retired groups not yet freed fails, when `groups` may be live: `awaiting`,
/// `groups`, `queues`.
pub fn alive_failures(
    invariant: &str,
    queues: usize,
    live: usize,
    awaiting: usize,
    groups: usize,
) -> Vec<Failure> {
    let mut out: Vec<Failure> = Vec::new();
    if awaiting != 0 {
        out.push((
            "awaiting",
            format!("{invariant}: a group was not freed ({awaiting} retired and never freed)"),
        ));
    }
    if live != groups {
        out.push((
            "groups",
            format!("{invariant}: a group was not freed ({live} live, {groups} expected)"),
        ));
    }
    if queues != 0 {
        out.push(("queues", format!("{invariant}: a queue outlived its holders ({queues} live)")));
    }
    out
}

/// I3 after teardown.
pub fn check_nothing_alive(census: &Census, invariant: &str) {
    check_alive(census, invariant, 0);
}

fn spawn_in<P: StatsPolicy>(
    sched: &Arc<Scheduler<P>>,
    f: impl FnOnce(&Scheduler<P>) + Send + 'static,
) -> thread::JoinHandle<()> {
    let sched = sched.clone();
    thread::spawn(move || f(&sched))
}

fn dispatch_and_complete<P: StatsPolicy>(sched: &Scheduler<P>) {
    if let Some(rq) = sched.dispatch() {
        rq.complete();
    }
}

/// Puts a queue of a new process in service and lets it idle: its request is dispatched and
/// completed, the idle timer is armed, and the clock is moved past the idle deadline.
fn idle_in_service<'s, P: StatsPolicy>(
    sched: &'s Scheduler<P>,
    group: GroupId,
    clock: &schedlab_core::ManualClock,
) -> schedlab_core::Process<'s, P> {
    let p = sched.spawn_process(group).expect("scenario: spawn");
    p.insert(request(1, 1));
    sched.dispatch().expect("scenario: the request").complete();
    require(sched.idle_deadline().is_some(), || "scenario: the queue should idle".into());
    check_census(sched, &sched.census());
    require(!sched.run_idle_timer(), || "idle timer: fired before its deadline".into());
    clock.advance(2 * IDLE_NS);
    p
}

/// [`scheduler`], with the handle of its manual clock (to move it past an idle slice).
pub fn manual_scheduler<P: StatsPolicy>(
    cfg: SchedConfig,
) -> (Arc<Scheduler<P>>, OracleArc<Census>, Arc<schedlab_core::ManualClock>) {
    let (clock, manual) = SchedClock::manual_ticking(1);
    let sched = Scheduler::<P>::new(LockKind::FairSpin, cfg, clock);
    let census = sched.census();
    (sched, census, manual)
}

/// Moves `p` to `to` and checks the outcome: done, and the process is in `to`, iff the
/// protection allows moves; refused otherwise.
fn check_move<P: StatsPolicy>(p: &schedlab_core::Process<'_, P>, to: GroupId) {
    match p.move_to(to) {
        Ok(()) => {
            require(allows_removal::<P>(), || {
                format!("{}: a move went through although the protection refuses it", P::NAME)
            });
            let now = p.group();
            require(now == to, || format!("a move to {to} left the process in {now}"));
        }
        Err(SchedError::UnsafeUnderRemoval(_)) => {
            require(!allows_removal::<P>(), || {
                format!("{}: a move refused although the protection allows it", P::NAME)
            });
        }
        Err(e) => violation(format!("scenario: move failed: {e}")),
    }
}

// ---- I1: deferred updates against removal ----

/// I1, insert path: thread A's process in G inserts a request, whose statistics are deferred past
/// the scheduler lock; meanwhile the main thread removes G and makes reclamation progress. No
/// interleaving may let the deferred update reach a freed G.
pub fn i1_insert_vs_removal<P: StatsPolicy>() {
    let (sched, census) = scheduler::<P>(config());
    let g = sched.create_group(sched.root(), 100).unwrap();
    let a = spawn_in(&sched, move |s| {
        // If G is already gone, the process cannot join it: nothing to race with.
        if let Ok(process) = s.spawn_process(g) {
            process.insert(request(1, 1));
        }
    });
    remove_or_refused(&sched, g);
    reclaim_step::<P>();
    reclaim_step::<P>();
    a.join().unwrap();
    finish(sched, census, Moves::None);
}

/// I1, dispatch and completion paths: a request of G is queued (its process has exited, so only
/// the request pins the queue); thread A dispatches and completes it, with deferred dispatch
/// statistics after the unlock and completion statistics before the finish path's lock; the main
/// thread removes G and makes reclamation progress meanwhile.
pub fn i1_dispatch_vs_removal<P: StatsPolicy>() {
    let (sched, census) = scheduler::<P>(config());
    let g = sched.create_group(sched.root(), 100).unwrap();
    sched.spawn_process(g).unwrap().insert(request(1, 1));
    let a = spawn_in(&sched, dispatch_and_complete);
    remove_or_refused(&sched, g);
    reclaim_step::<P>();
    reclaim_step::<P>();
    a.join().unwrap();
    finish(sched, census, Moves::None);
}

// ---- completions in their own context (issue 40, item 2) ----
//
// The benchmark driver completes a request in a completion context of its own (a softirq-like
// thread per CPU, fed by the device: `benches/src/driver/completion.rs`), not in the thread that
// inserted and dispatched it. The models below do the same: a submitter thread's process (A)
// inserts and dispatches a request and hands it over ([`InFlight`]) to a completion thread,
// which is neither the submitter nor the remover and runs the scheduler's completion path
// (`Dispatched::complete`: the completion statistics, deferred past the scheduler lock by every
// variant that defers, then the locked bookkeeping that drops the request's queue reference),
// while the main thread, a third, removes the request's group (or the group the process left)
// and makes reclamation progress.
//
// Why everything the completion thread touches still exists (notes/invariants.md), in all three:
// - the scheduler: the hand-over carries a reference to it ([`InFlight`]), and the request
//   borrows it until its completion has returned (I4);
// - the request's queue: pinned by the request from its dispatch until `SchedState::complete`
//   drops that reference, which comes after the completion's `run_deferred` (I1a, "Completion";
//   whichever thread holds the request, and once the submitting process has exited it is the
//   queue's only pin);
// - the queue's group as the completion statistics read it, after the scheduler lock (G, the
//   group moved to, or the root a removal moved the queue to), in the variants that keep them:
//   the queue lock that removal and moves also hold (`queue-lock`, I1b), removal and moves
//   refused (`unlocked`, I1c), the epoch pin every free waits for (`epoch`, I1d), or the
//   scheduler lock, under which `sched-lock` applies them to a queue's group, always online
//   (I1, "Updates applied under the lock"); `rstat`, `mainline`, `debug-off` and `no-stats` skip
//   them, so their completion reaches a group only under the scheduler lock;
// - the groups of the locked bookkeeping (the queue's, and the reference the queue's free drops
//   when the request was its last pin): under the scheduler lock, where every queue points at an
//   online group (I1, as above), so that reference is never a group's last;
// - a removed group: retired by the remover and freed by a `reclaim_step` of any thread, after
//   every pin that could reach it has ended (I1d), and nothing is left awaiting reclamation at
//   the end (I3).

/// A dispatched request on its way to a completion context: the request and a reference to the
/// scheduler it borrows, so that a model thread other than the dispatcher can complete it (the
/// checkers have no scoped threads; the driver's contexts are scoped threads of the run).
pub struct InFlight<P: StatsPolicy> {
    // Declared first: dropped before the scheduler reference below.
    rq: Dispatched<'static, P>,
    sched: Arc<Scheduler<P>>,
}

impl<P: StatsPolicy> InFlight<P> {
    /// Dispatches from `sched` and hands the request over to whichever thread will complete it
    /// (`None` when there is nothing to dispatch).
    pub fn dispatch(sched: &Arc<Scheduler<P>>) -> Option<InFlight<P>> {
        let rq = sched.dispatch()?;
        // SAFETY: only the lifetime changes. `rq` borrows the scheduler inside `sched`'s
        // allocation (it was dispatched from it just above), and the clone kept beside it holds
        // that allocation alive for as long as `rq` exists: the request is private to this value,
        // completed by `complete` before the clone is dropped, or dropped (which completes it)
        // before the clone by field order. Nothing else reaches the borrow.
        let rq = unsafe { std::mem::transmute::<Dispatched<'_, P>, Dispatched<'static, P>>(rq) };
        Some(InFlight { rq, sched: sched.clone() })
    }

    /// The completion context's work: the scheduler's completion path for the request.
    pub fn complete(self) {
        let InFlight { rq, sched } = self;
        rq.complete();
        drop(sched);
    }
}

/// A completion context fed with one request: a thread of its own that completes it.
fn completion_context<P: StatsPolicy>(rq: InFlight<P>) -> thread::JoinHandle<()> {
    thread::spawn(move || rq.complete())
}

/// Where the submitter's process is when its request completes in the context.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Submitter {
    /// Alive until the completion has returned (its reference keeps the queue).
    Waits,
    /// Exited right after the hand-over (the request is the queue's last pin).
    Exits,
    /// Moved to another group right after the hand-over (its request on the device), then exited.
    MovesThenExits(GroupId),
}

/// The submitter of the completion-context models: a process in `group` inserts a request, which
/// is dispatched and handed to a completion context; then the submitter does what `then` says and
/// waits for the context to end. Nothing to race with if `group` is already gone.
fn submit_to_context<P: StatsPolicy>(
    sched: &Arc<Scheduler<P>>,
    group: GroupId,
    then: Submitter,
) -> thread::JoinHandle<()> {
    let sched = sched.clone();
    thread::spawn(move || {
        let Ok(process) = sched.spawn_process(group) else { return };
        process.insert(request(1, 1));
        // The only request: a removal in between moves the queue up, still busy.
        let Some(rq) = InFlight::dispatch(&sched) else {
            return violation("scenario: the submitter's request was not dispatched".into());
        };
        let context = completion_context(rq);
        match then {
            Submitter::Waits => {
                context.join().unwrap();
                drop(process);
            }
            Submitter::Exits => {
                drop(process);
                context.join().unwrap();
            }
            Submitter::MovesThenExits(to) => {
                // As BFQ moves a queue: in the submitter's own context (`bfq_bic_update_cgroup`
                // at its next request), with its request on the device.
                check_move(&process, to);
                drop(process);
                context.join().unwrap();
            }
        }
    })
}

/// Completion in its own context against group removal: thread A's process in G inserts, A's
/// dispatch hands the request to a completion thread, and the process waits for it; the main
/// thread removes G (moving the busy queue to the root) and makes reclamation progress. The
/// completion's statistics read whichever group the queue is in (why each object it touches
/// still exists: the comment above [`InFlight`]).
pub fn completion_context_vs_removal<P: StatsPolicy>() {
    let (sched, census) = scheduler::<P>(config());
    let g = sched.create_group(sched.root(), 100).unwrap();
    let a = submit_to_context(&sched, g, Submitter::Waits);
    remove_or_refused(&sched, g);
    reclaim_step::<P>();
    reclaim_step::<P>();
    a.join().unwrap();
    finish(sched, census, Moves::None);
}

/// Completion in its own context against a move and the removal of the group left: thread A's
/// process in G1 inserts, A's dispatch hands the request to a completion thread, and the process
/// moves to G2 with its request on the device (dropping the queue's reference on G1) and exits;
/// the main thread removes G1 (moving the queue to the root if the move has not happened) and
/// makes reclamation progress. The completion's statistics read G1, G2 or the root, and G1 may be
/// freed in between (4.15 applied them with no lock at all: notes/kernel-map.md D33, the controls
/// `queue_lock_completion_unlocked_*`; why each object still exists: the comment above
/// [`InFlight`]). A move with a request on the device makes I7 inexact
/// (`Moves::WithRequestsQueued`).
pub fn completion_context_vs_move_and_removal<P: StatsPolicy>() {
    let (sched, census) = scheduler::<P>(config());
    let root = sched.root();
    let g1 = sched.create_group(root, 100).unwrap();
    let g2 = sched.create_group(root, 100).unwrap();
    let a = submit_to_context(&sched, g1, Submitter::MovesThenExits(g2));
    if remove_or_refused(&sched, g1) {
        reclaim_step::<P>();
        reclaim_step::<P>();
    }
    a.join().unwrap();
    finish(sched, census, Moves::WithRequestsQueued);
}

/// Completion in its own context after the submitter has exited: thread A's process in G
/// inserts, A's dispatch hands the request to a completion thread, and the process exits at once,
/// so the request in flight is its queue's only pin and the completion frees the queue (which
/// drops the queue's reference on G, or on the root after the removal); the main thread removes G
/// and makes reclamation progress meanwhile (why each object still exists: the comment above
/// [`InFlight`]).
pub fn completion_context_after_submitter_exit<P: StatsPolicy>() {
    let (sched, census) = scheduler::<P>(config());
    let g = sched.create_group(sched.root(), 100).unwrap();
    let a = submit_to_context(&sched, g, Submitter::Exits);
    remove_or_refused(&sched, g);
    reclaim_step::<P>();
    reclaim_step::<P>();
    a.join().unwrap();
    finish(sched, census, Moves::None);
}

/// Completion at another job's interrupt point against group removal, as the driver's
/// softirq-like contexts run it (`benches/src/driver/completion.rs`: the context of a CPU a job
/// runs on is served by that job between its own lock sites): thread A's process in G inserts,
/// dispatches and hands the request to job B, and exits (the request in flight is its queue's last
/// pin); B's process in H inserts its own request, completes A's between that insert and its own
/// dispatch (with no lock held, as the driver's interrupt point), then dispatches and completes its
/// own; the main thread removes G and makes reclamation progress. The completer is itself a job
/// that takes the scheduler lock on both sides of the completion (why each object the completion
/// touches still exists: the comment above [`InFlight`]).
pub fn completion_by_another_job_vs_removal<P: StatsPolicy>() {
    let (sched, census) = scheduler::<P>(config());
    let root = sched.root();
    let g = sched.create_group(root, 100).unwrap();
    let h = sched.create_group(root, 100).unwrap();
    let a = {
        let sched = sched.clone();
        thread::spawn(move || {
            let Ok(process) = sched.spawn_process(g) else { return };
            process.insert(request(1, 1));
            let Some(rq) = InFlight::dispatch(&sched) else {
                return violation("scenario: the submitter's request was not dispatched".into());
            };
            let b = {
                let sched = sched.clone();
                thread::spawn(move || {
                    let job = sched.spawn_process(h).expect("scenario: spawn");
                    job.insert(request(9, 1));
                    // The interrupt point: the other job's completion, between two lock sites.
                    rq.complete();
                    dispatch_and_complete(&sched);
                    drop(job);
                })
            };
            drop(process);
            b.join().unwrap();
        })
    };
    remove_or_refused(&sched, g);
    reclaim_step::<P>();
    reclaim_step::<P>();
    a.join().unwrap();
    finish(sched, census, Moves::None);
}

// ---- I2 ----

/// I2: thread A inserts while thread B dispatches and completes; once quiescent, the counters
/// balance (see [`check_conservation`]).
pub fn i2_insert_vs_dispatch<P: StatsPolicy>() {
    let (sched, census) = scheduler::<P>(config());
    let g = sched.create_group(sched.root(), 100).unwrap();
    sched.spawn_process(g).unwrap().insert(request(1, 1));
    let a = spawn_in(&sched, move |s| {
        let process = s.spawn_process(g).unwrap();
        process.insert(request(9, 2));
    });
    let b = spawn_in(&sched, dispatch_and_complete);
    a.join().unwrap();
    b.join().unwrap();
    finish(sched, census, Moves::None);
}

// ---- I3 and the hierarchy ----

/// I3: one thread does I/O in a subgroup and exits, the main thread removes the subgroup and then
/// its parent; while the scheduler lives only the root may stay, and after teardown nothing.
pub fn i3_nested_removal<P: StatsPolicy>() {
    let (sched, census) = scheduler::<P>(config());
    let parent = sched.create_group(sched.root(), 200).unwrap();
    let child: GroupId = sched.create_group(parent, 100).unwrap();
    let a = spawn_in(&sched, move |s| {
        if let Ok(process) = s.spawn_process(child) {
            process.insert(request(1, 1));
            dispatch_and_complete(s);
        }
    });
    // cgroup rmdir semantics: a group with an online child cannot go.
    if allows_removal::<P>() {
        let early = sched.remove_group(parent);
        require(matches!(early, Err(SchedError::HasChildren(_))), || {
            format!("removing a parent with an online child: {early:?}")
        });
    }
    let removed = remove_or_refused(&sched, child) && remove_or_refused(&sched, parent);
    a.join().unwrap();
    drain(&sched);
    quiesce::<P>(&census);
    let expected = if removed { 1 } else { 3 };
    check_alive(&census, "I3 (while the scheduler lives)", expected);
    finish(sched, census, Moves::None);
}

/// The hierarchy under a grace period: a request of a process (exited) in child group C is
/// queued; thread A dispatches and completes it, its deferred updates reading the queue's group;
/// the main thread removes C, makes reclamation progress, removes C's parent Q and makes more. The
/// removals move the queue up, so A reads C, Q or the root. Q must outlive C (C's free drops C's
/// reference on Q, and an update pinned after C's retirement may be reading Q: Q needs a grace
/// period of its own), and the root must end with every count.
pub fn child_then_parent_removal<P: StatsPolicy>() {
    let (sched, census) = scheduler::<P>(config());
    let parent = sched.create_group(sched.root(), 200).unwrap();
    let child = sched.create_group(parent, 100).unwrap();
    sched.spawn_process(child).unwrap().insert(request(1, 1));
    let a = spawn_in(&sched, |s| {
        // A thread that has pinned before (each thread's first pin also collects garbage, which
        // under sequentially consistent schedules would end C's grace period too early to race).
        reclaim_step::<P>();
        dispatch_and_complete(s);
    });
    if remove_or_refused(&sched, child) {
        reclaim_step::<P>();
        remove_or_refused(&sched, parent);
        reclaim_step::<P>();
        reclaim_step::<P>();
    }
    a.join().unwrap();
    finish(sched, census, Moves::None);
}

/// Two retirers: a child and its parent retired by two different threads. C (child of Q) has a
/// request queued (its process exited). Thread A removes C and makes reclamation progress; thread
/// B dispatches and completes C's request (its deferred update reaches C, or Q after C's removal),
/// then removes Q (refused while C is online: then the main thread removes Q at the end) and makes
/// reclamation progress. Under a grace period A's retirement of C sits in A's bag while B retires
/// Q; Q's own grace period may end first, but C holds a reference on Q (kernel-map.md D22), so Q
/// is freed only after C's free released it, from whichever thread collects (rstat: C's drain of
/// the pending lists, then Q's).
pub fn child_and_parent_retired_by_two_threads<P: StatsPolicy>() {
    let (sched, census) = scheduler::<P>(config());
    let q = sched.create_group(sched.root(), 200).unwrap();
    let c = sched.create_group(q, 100).unwrap();
    sched.spawn_process(c).unwrap().insert(request(1, 1));
    let b = spawn_in(&sched, move |s| {
        dispatch_and_complete(s);
        match s.remove_group(q) {
            Ok(()) => reclaim_step::<P>(),
            Err(SchedError::HasChildren(_) | SchedError::UnsafeUnderRemoval(_)) => {}
            Err(e) => violation(format!("scenario: removing {q} failed: {e}")),
        }
    });
    if remove_or_refused(&sched, c) {
        reclaim_step::<P>();
    }
    b.join().unwrap();
    if allows_removal::<P>() && sched.groups().iter().any(|g| g.id == q) {
        require(sched.remove_group(q).is_ok(), || "scenario: removing the parent failed".into());
    }
    finish(sched, census, Moves::None);
}

// ---- I7: attribution ----

/// I7 across a removal and a merge: root → Q → C. One request of C has been dispatched and
/// completed (C was charged for it) and its process has exited. Thread A's process in C queues a
/// request and back-merges a second one into it (a merge is charged to the group of the queue it
/// merged into: C); the main thread removes C, whose charges and statistics go to Q, its parent,
/// not to the root (the 4.15 reparenting: fault `OfflineStatsToRoot`). Each online group must end
/// with exactly what it was charged (the merged request is dispatched at the end, in Q).
pub fn attribution_across_removal<P: StatsPolicy>() {
    let (sched, census) = scheduler::<P>(config());
    let root = sched.root();
    let q = sched.create_group(root, 100).unwrap();
    let c = sched.create_group(q, 100).unwrap();
    sched.spawn_process(c).unwrap().insert(request(40, 9));
    dispatch_and_complete(&sched);
    let a = spawn_in(&sched, move |s| {
        let p = s.spawn_process(c).unwrap_or_else(|_| s.spawn_process(s.root()).unwrap());
        p.insert(request_at(0, 1));
        let outcome = p.insert(request_at(8, 2));
        require(outcome == InsertOutcome::Merged, || {
            format!("scenario: the second request should merge, got {outcome:?}")
        });
    });
    if remove_or_refused(&sched, c) {
        reclaim_step::<P>();
    }
    a.join().unwrap();
    finish(sched, census, Moves::None);
}

// ---- racers that create, move and read ----

/// Objects published by a spawned thread, and a reader racing a removal. Thread A (not the main
/// thread) creates G, makes a process in the root, inserts, moves the process into G (its request
/// still queued: G and the queue's new group pointer are published by A), then removes G (the
/// queue goes back to the root). The main thread reads every group's statistics (`groups()`,
/// `group_stats`, which under `rstat` flushes the pending lists) while A's removal may free G (a
/// reader must not keep a group past the lock that protected it: fault `StatsReadOutsideLock`),
/// then dispatches and completes A's request, whose deferred update loads the queue's group,
/// which A may store after the main thread's unlock (the Release of `set_group` is what makes
/// G's initialisation visible to it).
pub fn spawned_create_move_read<P: StatsPolicy>() {
    let (sched, census) = scheduler::<P>(config());
    let a = spawn_in(&sched, move |s| {
        let g = s.create_group(s.root(), 100).unwrap();
        let p = s.spawn_process(s.root()).unwrap();
        p.insert(request(1, 1));
        match p.move_to(g) {
            Ok(()) => require(allows_removal::<P>(), || {
                format!("{}: a move went through although the protection refuses it", P::NAME)
            }),
            Err(SchedError::UnsafeUnderRemoval(_)) => {
                require(!allows_removal::<P>(), || format!("{}: a move refused", P::NAME))
            }
            Err(e) => violation(format!("scenario: move failed: {e}")),
        }
        drop(p);
        remove_or_refused(s, g);
    });
    // A voluntary switch, not a preemption: A's steps come first within loom's bound, so that a
    // read can fall between A's creation and A's removal.
    thread::yield_now();
    for g in sched.groups() {
        let _ = sched.group_stats(g.id);
    }
    dispatch_and_complete(&sched);
    a.join().unwrap();
    finish(sched, census, Moves::WithRequestsQueued);
}

/// A process two model threads share: one issues through it while another moves it (a cgroup
/// migration is made by the thread that writes `cgroup.procs`, which publishes the task's new
/// css to the lock-free readers of the I/O path). Like [`InFlight`], it keeps a reference to the
/// scheduler its process borrows.
pub struct SharedProcess<P: StatsPolicy> {
    // Declared first: the process exits before the scheduler reference below is dropped.
    process: Process<'static, P>,
    sched: Arc<Scheduler<P>>,
}

impl<P: StatsPolicy> SharedProcess<P> {
    /// A new process in `group`, to share between threads.
    pub fn spawn(sched: &Arc<Scheduler<P>>, group: GroupId) -> Result<Arc<Self>, SchedError> {
        let process = sched.spawn_process(group)?;
        // SAFETY: only the lifetime changes. `process` borrows the scheduler inside `sched`'s
        // allocation, and the clone kept beside it holds that allocation alive for as long as the
        // process exists: the process is reached only through this value, which drops it before
        // the clone (field order).
        let process =
            unsafe { std::mem::transmute::<Process<'_, P>, Process<'static, P>>(process) };
        Ok(Arc::new(SharedProcess { process, sched: sched.clone() }))
    }

    /// The shared process.
    pub fn process(&self) -> &Process<'_, P> {
        &self.process
    }

    /// The scheduler the process is in.
    pub fn scheduler(&self) -> &Scheduler<P> {
        &self.sched
    }
}

/// Publication racing a lock-free reader (issue 45, item 3): a group created by a spawned thread
/// and published, through the moved queue's group pointer, to a deferred update of another thread
/// that holds no lock ordering it after the creation. The main thread's process P (in the root)
/// inserts a request and dispatches and completes it; thread C (spawned: nothing C does is ordered
/// before the main thread's next steps except through the scheduler) creates G and moves P into
/// it, its request queued or on the device. The main thread's lock-free loads of the queue's group
/// can fall after C's move and before the main thread's next lock: `mainline`'s count at
/// submission (before the insert's lock), `epoch`'s deferred insert, dispatch and completion
/// updates, `rstat`'s deferred dispatch update. Each must see G created: only the Release of the
/// pointer's store (`QueueShared::set_group`), acquired by the load, orders G's creation before
/// the update (fault `GroupPointerRelaxed`; loom only: shuttle and x86 are sequentially consistent
/// here).
pub fn group_published_to_deferred_update<P: StatsPolicy>() {
    let (sched, census) = scheduler::<P>(config());
    let root = sched.root();
    let shared = SharedProcess::spawn(&sched, root).unwrap();
    let creator = {
        let shared = shared.clone();
        thread::spawn(move || {
            let g = shared.scheduler().create_group(root, 100).unwrap();
            check_move(shared.process(), g);
        })
    };
    shared.process().insert(request(1, 1));
    dispatch_and_complete(&sched);
    creator.join().unwrap();
    drop(shared);
    finish(sched, census, Moves::WithRequestsQueued);
}

// ---- independent oracles: facts recorded by the threads that made them (crate::history) ----

/// I7 from the issuers, across merges and a move with requests in flight: G1 and G2 under the
/// root. The main thread's process P in G1 issues a request, one that merges into it and one
/// apart, all before B starts (the merge into a request racing its dispatch is
/// [`ledger_merge_vs_dispatch_then_move`]'s); then, racing B, it moves P to G2 (its requests
/// queued, or one of them on the device), issues a request that back-merges into the first if it
/// is still queued (a merge of two groups' requests, charged to G2, where its issuer was), and
/// exits. Thread B dispatches and completes one request meanwhile. Each thread records what it
/// did (crate::history: the issuer and the mover are one thread, as the facts require); at
/// quiescence every group must keep what its issuers charged it, a dispatch concurrent with the
/// move to either group (fault `MoveKeepsStatsGroup`: after the move the statistics still go to
/// G1, which the scheduler's own ledger, charged beside them, cannot see across a move). The
/// first three requests are issued before the race so that the model runs at loom's bound 2 with
/// `epoch` too (crossbeam-epoch under loom: notes/verify-budget.md, issue 45 item 5).
pub fn ledger_merge_move_in_flight<P: StatsPolicy>() {
    let (sched, census) = scheduler::<P>(config());
    let root = sched.root();
    let rec = Recorder::start(root);
    let g1 = rec.create(&sched, root).unwrap();
    let g2 = rec.create(&sched, root).unwrap();
    let p = sched.spawn_process(g1).unwrap();
    rec.insert(&p, g1, request_at(0, 1));
    let outcome = rec.insert(&p, g1, request_at(8, 2));
    require(outcome == InsertOutcome::Merged, || {
        format!("scenario: the second request should merge, got {outcome:?}")
    });
    rec.insert(&p, g1, request_at(64, 3));
    let b = rec.spawn(&sched, |s, r| {
        r.dispatch(s);
    });
    if ledger_move(&rec, &p, g2) {
        rec.insert(&p, g2, request_at(16, 4));
    }
    drop(p);
    rec.join(b);
    rec.drain(&sched);
    quiesce::<P>(&census);
    rec.check(&sched);
    finish(sched, census, Moves::WithRequestsQueued);
}

/// The window [`ledger_merge_move_in_flight`] leaves out of its race, for I7 from the issuers: a
/// merge into a request racing that request's dispatch, then the move. G1 and G2 under the root;
/// the main thread's process P in G1 issues a request before B starts; then, racing B, it issues
/// a second that merges into the first if B has not dispatched it yet (charged to G1 either way),
/// moves P to G2 (a request queued, or on the device), issues a third that back-merges into the
/// queued one of the first two (a merge of two groups' requests, charged to G2), and exits.
/// Thread B dispatches and completes one request meanwhile. The fault `MoveKeepsStatsGroup`
/// charges what is dispatched after the move to G1.
pub fn ledger_merge_vs_dispatch_then_move<P: StatsPolicy>() {
    let (sched, census) = scheduler::<P>(config());
    let root = sched.root();
    let rec = Recorder::start(root);
    let g1 = rec.create(&sched, root).unwrap();
    let g2 = rec.create(&sched, root).unwrap();
    let p = sched.spawn_process(g1).unwrap();
    rec.insert(&p, g1, request_at(0, 1));
    let b = rec.spawn(&sched, |s, r| {
        r.dispatch(s);
    });
    rec.insert(&p, g1, request_at(8, 2));
    if ledger_move(&rec, &p, g2) {
        rec.insert(&p, g2, request_at(16, 3));
    }
    drop(p);
    rec.join(b);
    rec.drain(&sched);
    quiesce::<P>(&census);
    rec.check(&sched);
    finish(sched, census, Moves::WithRequestsQueued);
}

/// Moves `process` to `to` through the recorder; whether it moved (a variant that refuses moves
/// under removal may refuse it, any other failure is a violation).
fn ledger_move<P: StatsPolicy>(r: &Recorder, process: &Process<'_, P>, to: GroupId) -> bool {
    match r.move_to(process, to) {
        Ok(()) => true,
        Err(SchedError::UnsafeUnderRemoval(_)) => {
            require(!allows_removal::<P>(), || format!("{}: a move refused", P::NAME));
            false
        }
        Err(e) => {
            violation(format!("scenario: move failed: {e}"));
            false
        }
    }
}

/// Creation racing removal, both racers spawned: Q under the root. Thread A starts a process in
/// the root and issues a request, creates C under Q, moves the process into C (the group a process
/// moves into, created inside the race), issues another, dispatches and completes one, exits and
/// removes C. Thread B removes Q (refused while C is online) and makes reclamation progress. The
/// creation must see Q online or fail (fault `CreateSplitsLookup`: Q pinned after the lock that
/// found it, freed by B in between); C's charges must end in Q, or in the root if Q went after C
/// (fault `OfflineStatsToRoot`, which the scheduler's own ledger cannot see across the move).
pub fn create_under_removed_parent<P: StatsPolicy>() {
    let (sched, census) = scheduler::<P>(config());
    let root = sched.root();
    let rec = Recorder::start(root);
    let q = rec.create(&sched, root).unwrap();
    let a = rec.spawn(&sched, move |s, r| {
        let p = s.spawn_process(root).unwrap();
        r.insert(&p, root, request(1, 1));
        let c = match s.create_group(q, 100) {
            Ok(c) => c,
            Err(SchedError::NoSuchGroup(_)) => return, // Q went first
            Err(e) => return violation(format!("scenario: creating under {q} failed: {e}")),
        };
        r.created(c, q);
        match r.move_to(&p, c) {
            Ok(()) => {
                r.insert(&p, c, request(3, 2));
            }
            Err(SchedError::UnsafeUnderRemoval(_)) => {
                require(!allows_removal::<P>(), || format!("{}: a move refused", P::NAME))
            }
            Err(e) => violation(format!("scenario: move failed: {e}")),
        }
        r.dispatch(s);
        drop(p);
        if remove_or_refused(s, c) {
            r.removed(c);
            reclaim_step::<P>();
        }
    });
    let b = rec.spawn(&sched, move |s, r| match s.remove_group(q) {
        Ok(()) => {
            r.removed(q);
            reclaim_step::<P>();
        }
        Err(SchedError::HasChildren(_) | SchedError::UnsafeUnderRemoval(_)) => {}
        Err(e) => violation(format!("scenario: removing {q} failed: {e}")),
    });
    rec.join(a);
    rec.join(b);
    rec.drain(&sched);
    quiesce::<P>(&census);
    rec.check(&sched);
    finish(sched, census, Moves::WithRequestsQueued);
}

/// Reads checked against their past: G and H under the root; a request of H was dispatched and
/// completed before the racers start (under rstat an unflushed entry on a pending list), one of G
/// is queued. Thread A dispatches and completes G's request, reads G (`group_stats`, a flush) and
/// publishes a flag. Thread B removes H (its release drains the lists: a flush racing A's) and
/// makes reclamation progress, observes the flag, and reads G through `inspect_group` (a second
/// flusher). The main thread reads G and the root after joining both. Every read must include
/// what was dispatched before it in happens-before (A's own read, B's if it saw the flag, the
/// main thread's), and nothing that had not begun by its end (fault `ReaderSkipsBusyFlush`: a
/// reader that finds a flush in progress returns without the deltas it took).
pub fn reads_against_their_past<P: StatsPolicy>() {
    let (sched, census) = scheduler::<P>(config());
    let root = sched.root();
    let rec = Recorder::start(root);
    let g = rec.create(&sched, root).unwrap();
    let h = rec.create(&sched, root).unwrap();
    rec.insert(&sched.spawn_process(h).unwrap(), h, request(3, 1));
    rec.dispatch(&sched);
    rec.insert(&sched.spawn_process(g).unwrap(), g, request(1, 2));
    let done = Arc::new(AtomicBool::new(false));
    let a = {
        let done = done.clone();
        rec.spawn(&sched, move |s, r| {
            r.dispatch(s);
            r.read(s, g);
            r.publish(&done);
        })
    };
    let b = rec.spawn(&sched, move |s, r| {
        if remove_or_refused(s, h) {
            r.removed(h);
            reclaim_step::<P>();
        }
        r.observe(&done);
        r.inspect(s, g);
    });
    rec.join(a);
    rec.join(b);
    rec.read(&sched, g);
    rec.read(&sched, root);
    rec.drain(&sched);
    quiesce::<P>(&census);
    rec.check(&sched);
    finish(sched, census, Moves::None);
}

/// The submission's early sites against removal and a move: G1 and G2 under the root. Thread A's
/// process in G1 queues a request, merges a bio into its end (`Process::bio_merge`: the group
/// looked up and the merge made under one hold), runs the depth limit (`Process::limit_depth`:
/// the lock taken first, as since v6.13, then the queue's entity walked up its groups under it),
/// moves to G2, merges a second bio, and runs the depth limit again; the main thread removes G1
/// (moving the queue up if the move has not happened) and makes reclamation progress. Each bio
/// merge is charged to the group its issuer was in (crate::history).
pub fn bio_merge_and_depth_vs_removal<P: StatsPolicy>() {
    let (sched, census) = scheduler::<P>(config());
    let root = sched.root();
    let rec = Recorder::start(root);
    let g1 = rec.create(&sched, root).unwrap();
    let g2 = rec.create(&sched, root).unwrap();
    let a = rec.spawn(&sched, move |s, r| {
        let Ok(p) = s.spawn_process(g1) else { return };
        r.insert(&p, g1, request_at(0, 1));
        let merged = r.bio_merge(&p, g1, request_at(8, 2));
        require(merged, || "scenario: the bio should merge at the request's end".into());
        p.limit_depth();
        match r.move_to(&p, g2) {
            Ok(()) => {
                r.bio_merge(&p, g2, request_at(16, 3));
            }
            Err(SchedError::UnsafeUnderRemoval(_)) => {
                require(!allows_removal::<P>(), || format!("{}: a move refused", P::NAME))
            }
            Err(e) => violation(format!("scenario: move failed: {e}")),
        }
        p.limit_depth();
    });
    if remove_or_refused(&sched, g1) {
        rec.removed(g1);
        reclaim_step::<P>();
    }
    rec.join(a);
    rec.drain(&sched);
    quiesce::<P>(&census);
    rec.check(&sched);
    finish(sched, census, Moves::WithRequestsQueued);
}

// ---- special cases under the checkers (issue 35, item 3) ----

/// The at-head branch of the insert against removal, a move and a dispatcher: G1 and G2 under the
/// root. Thread A's process in G1 queues a request, inserts one at the head (the priority dispatch
/// list: no merge, its queue not activated for it), moves to G2 with both queued, and inserts a
/// second at-head request there. The main thread removes G1 (moving the queue up if the move has
/// not happened), makes reclamation progress and dispatches one request (an at-head one first).
/// A second, exited process of G1 keeps a request queued there (the removal moves two queues), A
/// then tries to move back into G1 (the target may be gone) and to remove G1 itself (two removers
/// of one group: the second finds it gone). Each thread records what it did (crate::history):
/// every dispatched request is charged to the group its issuer was in, and every at-head request
/// must leave `queued` balanced (fault `AtHeadWithoutIoAdd`: seed patch 2/4's missing `io_add` of
/// the priority list).
pub fn at_head_insert_vs_move_and_removal<P: StatsPolicy>() {
    let (sched, census) = scheduler::<P>(config());
    let root = sched.root();
    let rec = Recorder::start(root);
    let g1 = rec.create(&sched, root).unwrap();
    let g2 = rec.create(&sched, root).unwrap();
    rec.insert(&sched.spawn_process(g1).unwrap(), g1, request(20, 4));
    // Refused before any shared state is touched: a bad weight, the root.
    require(sched.create_group(root, 0) == Err(SchedError::BadWeight(0)), || {
        "a weight of 0 was accepted".into()
    });
    if allows_removal::<P>() {
        require(sched.remove_group(root) == Err(SchedError::RootGroup), || {
            "the root was removed".into()
        });
    }
    let a = rec.spawn(&sched, move |s, r| {
        let Ok(p) = s.spawn_process(g1) else { return };
        r.insert(&p, g1, request(1, 1));
        r.insert(&p, g1, RequestSpec { at_head: true, ..request(5, 2) });
        match r.move_to(&p, g2) {
            Ok(()) => {
                r.insert(&p, g2, RequestSpec { at_head: true, ..request(9, 3) });
                match r.move_to(&p, g1) {
                    Ok(()) | Err(SchedError::NoSuchGroup(_)) => {}
                    Err(e) => violation(format!("scenario: move back failed: {e}")),
                }
            }
            Err(SchedError::UnsafeUnderRemoval(_)) => {
                require(!allows_removal::<P>(), || format!("{}: a move refused", P::NAME))
            }
            Err(e) => violation(format!("scenario: move failed: {e}")),
        }
        drop(p);
        remove_racing(s, r, g1);
    });
    remove_racing(&sched, &rec, g1);
    reclaim_step::<P>();
    rec.dispatch(&sched);
    rec.join(a);
    rec.drain(&sched);
    quiesce::<P>(&census);
    rec.check(&sched);
    finish(sched, census, Moves::WithRequestsQueued);
}

/// Removes `group` while another thread may remove it too: done (recorded), already gone, or
/// refused by the protection.
fn remove_racing<P: StatsPolicy>(sched: &Scheduler<P>, rec: &Recorder, group: GroupId) {
    match sched.remove_group(group) {
        Ok(()) => {
            require(allows_removal::<P>(), || {
                format!("{}: removal went through although the protection refuses it", P::NAME)
            });
            rec.removed(group);
        }
        Err(SchedError::NoSuchGroup(_)) => {}
        Err(SchedError::UnsafeUnderRemoval(_)) => {
            require(!allows_removal::<P>(), || format!("{}: removal refused", P::NAME))
        }
        Err(e) => violation(format!("scenario: removing {group} failed: {e}")),
    }
}

/// The empty dispatch, on the insertion-lists path, against removal: the root's process P1 idles
/// in service (its request completed, the idle slice not over), so a dispatch that splices the
/// lists finds nothing it may dispatch (`select_queue` idles: the empty branch), with the splice's
/// statistics (io_add, and io_merged for a request merged at the splice) deferred and the listed
/// requests' pins still to release. Thread A's process in G lists two requests that merge when
/// spliced and exits (the pins then hold its queue); thread B dispatches and completes (splicing
/// them, and finding nothing, or finding the lists empty); the main thread removes G and makes
/// reclamation progress, then lists a request for P1 (spliced into its idling queue, which stops
/// the idle timer) and dispatches twice before completing (the second finds P1's queue in service
/// with its request on the device: it waits for the completion). Fault `EmptyDispatchReturnsEarly`
/// (the empty branch returning before the common tail): the pins are never released and the queue
/// outlives everything (I3), or the deferred statistics are lost (I2).
pub fn lists_empty_dispatch_while_idling_vs_removal<P: StatsPolicy>() {
    let (sched, census, _clock) =
        manual_scheduler::<P>(SchedConfig { insert: InsertPathKind::Lists, ..idling_config() });
    let root = sched.root();
    let g = sched.create_group(root, 100).unwrap();
    let p1 = sched.spawn_process(root).unwrap();
    p1.insert(request(1, 1));
    sched.dispatch().expect("scenario: P1's request").complete();
    require(sched.idle_deadline().is_some(), || "scenario: P1's queue should idle".into());
    let a = spawn_in(&sched, move |s| {
        if let Ok(p) = s.spawn_process(g) {
            p.insert(request_at(0, 2));
            p.insert(request_at(8, 3));
        }
    });
    let b = spawn_in(&sched, dispatch_and_complete);
    if remove_or_refused(&sched, g) {
        reclaim_step::<P>();
    }
    p1.insert(request(2, 4));
    let first = sched.dispatch();
    let second = sched.dispatch();
    drop((first, second));
    a.join().unwrap();
    b.join().unwrap();
    drop(p1);
    finish(sched, census, Moves::None);
}

/// The bio merge's other branches against a move, a removal and a dispatcher: G1 and G2 under the
/// root. Thread A's process in G1 queues a request at sector 16, tries an at-head bio (never
/// merges) and a bio with no neighbour (finds nothing), runs the depth limit, moves to G2, merges
/// a bio at 8 in front of the request issued in G1 (`bfq_request_merge`'s front merge: a merge of
/// a request of another group, charged to G2, where its issuer was) and runs the depth limit
/// again (its queue perhaps inactive by then: the walk's early return), and reads G1's statistics
/// twice (`group_stats`, `inspect_group`: G1 may be gone). The main thread removes G1, makes
/// reclamation progress and dispatches one request. Each thread records what it did
/// (crate::history); fault `MoveKeepsStatsGroup` (the front merge charged through the group the
/// process left) is rejected by the issuers' ledger or as a use after free.
pub fn bio_front_merge_and_misses_vs_move<P: StatsPolicy>() {
    let (sched, census) = scheduler::<P>(config());
    let root = sched.root();
    let rec = Recorder::start(root);
    let g1 = rec.create(&sched, root).unwrap();
    let g2 = rec.create(&sched, root).unwrap();
    let a = rec.spawn(&sched, move |s, r| {
        let Ok(p) = s.spawn_process(g1) else { return };
        r.insert(&p, g1, request_at(16, 1));
        let at_head = r.bio_merge(&p, g1, RequestSpec { at_head: true, ..request_at(24, 2) });
        require(!at_head, || "scenario: an at-head bio must not merge".into());
        let lonely = r.bio_merge(&p, g1, request_at(640, 3));
        require(!lonely, || "scenario: a bio with no neighbour must not merge".into());
        p.limit_depth();
        match r.move_to(&p, g2) {
            Ok(()) => {
                r.bio_merge(&p, g2, request_at(8, 4));
            }
            Err(SchedError::UnsafeUnderRemoval(_)) => {
                require(!allows_removal::<P>(), || format!("{}: a move refused", P::NAME))
            }
            Err(e) => violation(format!("scenario: move failed: {e}")),
        }
        p.limit_depth();
        // Readers of the group left behind, which the removal may have taken offline.
        r.read(s, g1);
        r.inspect(s, g1);
    });
    if remove_or_refused(&sched, g1) {
        rec.removed(g1);
        reclaim_step::<P>();
    }
    rec.dispatch(&sched);
    rec.join(a);
    rec.drain(&sched);
    quiesce::<P>(&census);
    rec.check(&sched);
    finish(sched, census, Moves::WithRequestsQueued);
}

/// A merge at the insertion lists' splice into a request of another group, against a move, a
/// removal and a dispatcher (the 2024 `lists` insert path): G1 and G2 under the root. Thread A's
/// process in G1 lists requests at sectors 0 and 64, moves to G2 (the two still listed, or spliced
/// into its queue in G1 with one of them dispatched), and lists one at 72, which, spliced after
/// the move, back-merges into the request at 64 issued in G1: a merge into another group's
/// request, made by a dispatcher's splice rather than by the issuer, and charged to the queue's
/// group at the splice (G2 once the move is done). The main thread removes G1 (moving the queue to
/// the root if A has not moved it yet), makes reclamation progress, and dispatches and completes
/// one request (splicing whatever is listed by then). Each thread records what it did
/// (crate::history: a listed request's merge is charged to its issuer's groups between its
/// listing and the end of the dispatch that carried it); fault `MoveKeepsStatsGroup` (the splice's
/// statistics and the later dispatches charged through the group left behind) is rejected by the
/// issuers' ledger or as a use after free.
pub fn lists_merge_across_groups_vs_move<P: StatsPolicy>() {
    let (sched, census) = scheduler::<P>(lists_config());
    let root = sched.root();
    let rec = Recorder::start(root);
    let g1 = rec.create(&sched, root).unwrap();
    let g2 = rec.create(&sched, root).unwrap();
    let a = rec.spawn(&sched, move |s, r| {
        let Ok(p) = s.spawn_process(g1) else { return };
        let listed = r.insert(&p, g1, request_at(0, 1));
        require(listed == InsertOutcome::Listed, || {
            format!("scenario: the lists path should list, got {listed:?}")
        });
        r.insert(&p, g1, request_at(64, 2));
        match r.move_to(&p, g2) {
            Ok(()) => {
                r.insert(&p, g2, request_at(72, 3));
            }
            Err(SchedError::UnsafeUnderRemoval(_)) => {
                require(!allows_removal::<P>(), || format!("{}: a move refused", P::NAME))
            }
            Err(e) => violation(format!("scenario: move failed: {e}")),
        }
    });
    if remove_or_refused(&sched, g1) {
        rec.removed(g1);
        reclaim_step::<P>();
    }
    rec.dispatch(&sched);
    rec.join(a);
    rec.drain(&sched);
    quiesce::<P>(&census);
    rec.check(&sched);
    finish(sched, census, Moves::WithRequestsQueued);
}

// ---- attribution across merges, from the issuers' facts (issue 45, item 2) ----

/// Two groups' adjacent requests merged, against a dispatcher, then a removal: G1 and G2 under
/// the root. Thread A's process in G1 issues X at sector 16, moves to G2, and there issues Y at 24
/// (a back merge into X at its insert, or on the `lists` path at the splice of a later dispatch), a
/// bio at 8 (a front merge, `bfq_request_merge`) and a bio at 32 (a bio back merge): requests of G2
/// joining one of G1's. Then A removes G1, which it left (it is empty, or holds the queue if the
/// move was refused), and makes reclamation progress. The main thread dispatches and completes one
/// request meanwhile, concurrent with the move as far as the facts can tell (the scheduler's lock
/// is no edge of theirs). Each thread records what it did (crate::history), and the issuers' ledger
/// charges each sector to the group its issuer's queue can have been in: a request that absorbed
/// one issued after the move belongs to G2 even when its dispatch raced the move. Fault
/// `MergeChargedToAbsorbingGroup` (the merged request charged to the group X was made in, while
/// G1 is online) passes every count and the scheduler's own ledger; only the issuers' facts see it.
fn merges_across_groups<P: StatsPolicy>(cfg: SchedConfig) {
    let (sched, census) = scheduler::<P>(cfg);
    let root = sched.root();
    let rec = Recorder::start(root);
    let g1 = rec.create(&sched, root).unwrap();
    let g2 = rec.create(&sched, root).unwrap();
    let a = rec.spawn(&sched, move |s, r| {
        let p = s.spawn_process(g1).unwrap();
        r.insert(&p, g1, request_at(16, 1));
        match r.move_to(&p, g2) {
            Ok(()) => {
                r.insert(&p, g2, request_at(24, 2));
                r.bio_merge(&p, g2, request_at(8, 3));
                r.bio_merge(&p, g2, request_at(32, 4));
            }
            Err(SchedError::UnsafeUnderRemoval(_)) => {
                require(!allows_removal::<P>(), || format!("{}: a move refused", P::NAME))
            }
            Err(e) => violation(format!("scenario: move failed: {e}")),
        }
        if remove_or_refused(s, g1) {
            r.removed(g1);
            reclaim_step::<P>();
        }
    });
    rec.dispatch(&sched);
    rec.join(a);
    rec.drain(&sched);
    quiesce::<P>(&census);
    rec.check(&sched);
    finish(sched, census, Moves::WithRequestsQueued);
}

/// [`merges_across_groups`] on the `direct` insert path: Y back-merges into X at its insert.
pub fn merges_across_groups_attributed<P: StatsPolicy>() {
    merges_across_groups::<P>(config());
}

/// [`merges_across_groups`] on the `lists` insert path: X and Y are listed, and Y merges into X
/// at the splice of whichever dispatch takes both (the dispatcher's, or the final drain's).
pub fn lists_merges_across_groups_attributed<P: StatsPolicy>() {
    merges_across_groups::<P>(lists_config());
}

/// The budget, timeout and depth-limit branches against a move: a scheduler whose queues get a
/// budget of 12 sectors (`max_budget` 18), a budget timeout of 6 ns on the ticking clock, and a
/// device of 2 requests (`nr_requests`, so the depth limit says "over"). Thread A's process in G1
/// queues a read at 0, an async write at 16 and a read at 8 (which back-merges into the first and
/// cannot absorb the write: an op that does not merge), a read of 16 sectors at 128, runs the
/// depth limit, and moves to G2. The main thread yields once, dispatches twice before completing (the second
/// dispatch finds the in-service queue with nothing queued, its request on the device, or its
/// budget short of the next request, or spent, or timed out), then once more. Conservation and
/// the scheduler's ledger at the end (I7 is not exact across a move with requests queued).
pub fn budget_and_depth_limits_vs_move<P: StatsPolicy>() {
    let cfg = SchedConfig { max_budget: 18, timeout_ns: 6, nr_requests: 2, ..config() };
    let (sched, census) = scheduler::<P>(cfg);
    let root = sched.root();
    let g1 = sched.create_group(root, 100).unwrap();
    let g2 = sched.create_group(root, 100).unwrap();
    let a = spawn_in(&sched, move |s| {
        let p = s.spawn_process(g1).unwrap();
        p.insert(request_at(0, 1));
        p.insert(RequestSpec {
            sector: 16,
            sectors: 8,
            op: Op::WRITE_ASYNC,
            at_head: false,
            tag: 2,
        });
        p.insert(request_at(8, 3));
        p.insert(RequestSpec {
            sector: 128,
            sectors: 16,
            op: Op::READ_SYNC,
            at_head: false,
            tag: 4,
        });
        p.limit_depth();
        check_move(&p, g2);
    });
    // A voluntary switch, not a preemption: A's first steps come first within loom's bound, so
    // that the main thread's two dispatches can fall between A's inserts.
    thread::yield_now();
    let first = sched.dispatch();
    let second = sched.dispatch();
    drop((first, second));
    dispatch_and_complete(&sched);
    a.join().unwrap();
    finish(sched, census, Moves::WithRequestsQueued);
}

// ---- I4 ----

/// I4: thread A runs a path with a deferred update while the main thread drops its handle; the
/// scheduler is torn down by whichever drops last, never inside A's deferred window. Two of A's
/// three requests are still queued in its queue when the scheduler goes: teardown drops them
/// (the `Drop for Scheduler` path with requests pending) and must still free everything.
pub fn i4_teardown_vs_deferred<P: StatsPolicy>() {
    let (sched, census) = scheduler::<P>(config());
    let g = sched.create_group(sched.root(), 100).unwrap();
    let a = spawn_in(&sched, move |s| {
        let process = s.spawn_process(g).unwrap();
        for (sector, tag) in [(1, 1), (3, 2), (5, 3)] {
            process.insert(request(sector, tag));
        }
        dispatch_and_complete(s);
    });
    drop(sched);
    a.join().unwrap();
    quiesce::<P>(&census);
    check_nothing_alive(&census, "I4/I3");
}

// ---- the idle-slice timer ----

/// The idle-slice timer against dispatch: P1's queue idles in service past its deadline and P1
/// has exited, so only the in-service slot holds the queue. Thread A runs the timer (which reads
/// the in-service queue before taking the lock); thread B starts P2 and inserts; the main thread
/// dispatches, expiring P1's queue as too idle (which frees it) and serving P2.
pub fn timer_vs_dispatch<P: StatsPolicy>() {
    let (sched, census, clock) = manual_scheduler::<P>(idling_config());
    let root = sched.root();
    drop(idle_in_service(&sched, root, &clock));
    let a = spawn_in(&sched, |s| {
        s.run_idle_timer();
    });
    let b = spawn_in(&sched, move |s| {
        s.spawn_process(root).unwrap().insert(request(7, 2));
    });
    dispatch_and_complete(&sched);
    a.join().unwrap();
    b.join().unwrap();
    finish(sched, census, Moves::None);
}

/// The idle-slice timer against process exit: P1's queue idles in service past its deadline and
/// P1 is alive. Thread A runs the timer; the main thread exits P1 (the in-service slot is then the
/// queue's last holder) and runs the timer itself, which expires and frees the queue that A may
/// have read.
pub fn timer_vs_exit<P: StatsPolicy>() {
    let (sched, census, clock) = manual_scheduler::<P>(idling_config());
    let root = sched.root();
    let p1 = idle_in_service(&sched, root, &clock);
    let a = {
        let s = sched.clone();
        thread::spawn(move || s.run_idle_timer())
    };
    drop(p1);
    let fired_here = sched.run_idle_timer();
    let fired_there = a.join().unwrap();
    // The deadline had passed with the queue idling: exactly one of the two handlers expires it.
    require(fired_here != fired_there, || {
        format!("idle timer: fired here {fired_here}, in A {fired_there}: exactly one must")
    });
    require(sched.idle_deadline().is_none(), || {
        "idle timer: the idling queue was not expired".into()
    });
    finish(sched, census, Moves::None);
}

// ---- process moves ----

/// A process move against dispatch, with the queue busy, in flight or idle: thread A's process in
/// G1 inserts and moves to G2; thread B dispatches and completes the request; the main thread then
/// removes G1, which the move left. References cross the deactivation, the move and the
/// completion; the dispatch's and the completion's deferred updates read whichever group the
/// queue is in then. (The move may find the request still queued: `queued` is then conserved over
/// groups only.)
pub fn move_vs_dispatch_idle<P: StatsPolicy>() {
    let (sched, census) = scheduler::<P>(config());
    let root = sched.root();
    let g1 = sched.create_group(root, 100).unwrap();
    let g2 = sched.create_group(root, 100).unwrap();
    let a = spawn_in(&sched, move |s| {
        let p = s.spawn_process(g1).unwrap();
        p.insert(request(1, 1));
        // A move to the group the queue is in changes nothing (its request stays dispatchable),
        // before and after a real move; the last one is not followed by a move that would
        // re-activate a queue the own-group move left off the tree.
        check_move(&p, g1);
        check_move(&p, g2);
        check_move(&p, g2);
    });
    let b = spawn_in(&sched, dispatch_and_complete);
    a.join().unwrap();
    b.join().unwrap();
    if remove_or_refused(&sched, g1) {
        reclaim_step::<P>();
    }
    finish(sched, census, Moves::WithRequestsQueued);
}

/// A process move against dispatch and the idle timer, with the queue in service: P's queue
/// idles in service past its deadline in G1. Thread A runs the idle timer; thread B dispatches
/// (another process's request); the main thread moves P to G2 (expiring its in-service queue,
/// with a reference of its own), P exits, and G1 is removed.
pub fn move_vs_dispatch_in_service<P: StatsPolicy>() {
    let (sched, census, clock) = manual_scheduler::<P>(idling_config());
    let root = sched.root();
    let g1 = sched.create_group(root, 100).unwrap();
    let g2 = sched.create_group(root, 100).unwrap();
    let p = idle_in_service(&sched, g1, &clock);
    sched.spawn_process(root).unwrap().insert(request(9, 3));
    let a = spawn_in(&sched, |s| {
        s.run_idle_timer();
    });
    let b = spawn_in(&sched, dispatch_and_complete);
    check_move(&p, g2);
    drop(p);
    if remove_or_refused(&sched, g1) {
        reclaim_step::<P>();
    }
    a.join().unwrap();
    b.join().unwrap();
    finish(sched, census, Moves::None);
}

// ---- removal while a queue idles ----

/// Group removal while a queue of that group idles in service (`slice_idle > 0`) and its process
/// has exited: the in-service slot is the queue's only holder, so moving it to the parent expires
/// it and may free it. Thread A removes the group; thread B runs the idle timer; the main thread
/// inserts for a new process and dispatches.
pub fn removal_while_idling<P: StatsPolicy>() {
    let (sched, census, clock) = manual_scheduler::<P>(idling_config());
    let root = sched.root();
    let g = sched.create_group(root, 100).unwrap();
    drop(idle_in_service(&sched, g, &clock));
    let a = spawn_in(&sched, move |s| {
        if remove_or_refused(s, g) {
            reclaim_step::<P>();
        }
    });
    let b = spawn_in(&sched, |s| {
        s.run_idle_timer();
    });
    sched.spawn_process(root).unwrap().insert(request(4, 2));
    dispatch_and_complete(&sched);
    a.join().unwrap();
    b.join().unwrap();
    finish(sched, census, Moves::None);
}

// ---- stale handles ----

/// A group created after a removal: thread A holds the handle of G; the main thread removes G and
/// creates G' (which may take G's slot). A's stale handle must never reach G': creating a process
/// with it fails, or (if A came first) puts the process in G, which the removal moved up.
pub fn created_after_removal<P: StatsPolicy>() {
    let (sched, census) = scheduler::<P>(config());
    let g = sched.create_group(sched.root(), 100).unwrap();
    let a = spawn_in(&sched, move |s| {
        if let Ok(process) = s.spawn_process(g) {
            process.insert(request(1, 1));
        }
    });
    let removed = remove_or_refused(&sched, g);
    let newer = sched.create_group(sched.root(), 300).unwrap();
    a.join().unwrap();
    if removed {
        let info =
            sched.groups().into_iter().find(|i| i.id == newer).expect("the new group is online");
        require(info.queues == 0, || {
            format!("a stale handle reached a group created after its removal: {info:?}")
        });
        let stats = sched.group_stats(newer).unwrap();
        require(StatsSnapshot::total(&stats.queued) == 0 && stats.io_serviced == [0; 4], || {
            format!("a stale handle's request was accounted in a group created after the removal: {stats:?}")
        });
    }
    finish(sched, census, Moves::None);
}

// ---- merges and priority requests ----

/// Merges across a removal: P in G has two queued requests with a gap between them; thread A's
/// insert fills the gap, back-merging into the first and absorbing the second (io_merged twice,
/// io_remove of the absorbed request, deferred); the main thread removes G.
pub fn merge_across_removal<P: StatsPolicy>() {
    let (sched, census) = scheduler::<P>(config());
    let g = sched.create_group(sched.root(), 100).unwrap();
    let a = spawn_in(&sched, move |s| {
        let p = s.spawn_process(g).unwrap_or_else(|_| s.spawn_process(s.root()).unwrap());
        p.insert(request_at(0, 1));
        p.insert(request_at(16, 2));
        let outcome = p.insert(request_at(8, 3));
        require(outcome == InsertOutcome::Merged, || {
            format!("scenario: the middle request should merge, got {outcome:?}")
        });
    });
    remove_or_refused(&sched, g);
    reclaim_step::<P>();
    a.join().unwrap();
    require(sched.counters().merged == 2, || {
        format!("scenario: two merges expected: {:?}", sched.counters())
    });
    finish(sched, census, Moves::None);
}

/// Priority requests across a removal: P in G inserts a request at the head of the priority
/// dispatch list (its queue is not on any service tree) and exits; thread A dispatches and
/// completes it; the main thread removes G.
pub fn priority_across_removal<P: StatsPolicy>() {
    let (sched, census) = scheduler::<P>(config());
    let g = sched.create_group(sched.root(), 100).unwrap();
    sched.spawn_process(g).unwrap().insert(RequestSpec { at_head: true, ..request(2, 1) });
    let a = spawn_in(&sched, dispatch_and_complete);
    remove_or_refused(&sched, g);
    reclaim_step::<P>();
    a.join().unwrap();
    finish(sched, census, Moves::None);
}

// ---- reference counts from two contexts ----

/// A group's reference count changed from two contexts: the main thread removes child C, whose
/// free drops C's reference on its parent Q outside the scheduler lock (at once, or from the
/// collector); thread A creates and exits a process in Q (taking and dropping a reference under
/// the lock). Q is removed afterwards: a lost update would free Q early or leak it.
pub fn refcount_two_contexts<P: StatsPolicy>() {
    let (sched, census) = scheduler::<P>(config());
    let q = sched.create_group(sched.root(), 100).unwrap();
    let c = sched.create_group(q, 100).unwrap();
    let a = spawn_in(&sched, move |s| {
        let p = s.spawn_process(q).unwrap();
        p.insert(request(1, 1));
        reclaim_step::<P>();
    });
    if remove_or_refused(&sched, c) {
        reclaim_step::<P>();
        reclaim_step::<P>();
    }
    a.join().unwrap();
    drain(&sched);
    if allows_removal::<P>() {
        require(sched.remove_group(q).is_ok(), || "scenario: removing the parent failed".into());
    }
    finish(sched, census, Moves::None);
}

// ---- rstat: per-CPU pending lists drained on release ----

/// A pending update racing the group's release: a request of G is queued (its process exited);
/// thread A dispatches and completes it — under `rstat` its deferred io_serviced update adds to
/// G's per-CPU slot and puts G on the CPU's pending list — while the main thread removes G and
/// makes reclamation progress, so G's release (and its drain of the lists) races the update. After
/// the release nothing may name G: the final read flushes the lists.
pub fn pending_update_vs_release<P: StatsPolicy>() {
    let (sched, census) = scheduler::<P>(config());
    let g = sched.create_group(sched.root(), 100).unwrap();
    sched.spawn_process(g).unwrap().insert(request(1, 1));
    let a = spawn_in(&sched, dispatch_and_complete);
    remove_or_refused(&sched, g);
    reclaim_step::<P>();
    reclaim_step::<P>();
    a.join().unwrap();
    finish(sched, census, Moves::None);
}

/// A flush racing a removal: G has an unflushed update on a pending list (a request of G was
/// dispatched and completed before the threads start); thread A reads statistics, which flushes
/// the lists (walking G's entry); the main thread removes G and makes reclamation progress, so G's
/// release drains the lists and frees G. The drain must wait for a flush still reading G.
pub fn flush_vs_removal<P: StatsPolicy>() {
    let (sched, census) = scheduler::<P>(config());
    let root = sched.root();
    let g = sched.create_group(root, 100).unwrap();
    sched.spawn_process(g).unwrap().insert(request(1, 1));
    dispatch_and_complete(&sched);
    let a = spawn_in(&sched, move |s| {
        let _ = s.group_stats(root);
    });
    if remove_or_refused(&sched, g) {
        reclaim_step::<P>();
        reclaim_step::<P>();
    }
    a.join().unwrap();
    finish(sched, census, Moves::None);
}

// ---- insertion lists (the 2024 insert path) ----

/// The insertion-lists configuration.
pub fn lists_config() -> SchedConfig {
    SchedConfig { insert: InsertPathKind::Lists, ..config() }
}

/// An insert on the list racing a dispatch's splice and a group removal: a process in G lists a
/// request and exits (a listed request's pending count is then its queue's only pin), and a
/// process in the root lists one at the head; thread A dispatches and completes (splicing both:
/// the at-head one is dispatched, G's stays queued, the splice's statistics deferred); the main
/// thread dispatches and completes too (perhaps G's request, whose completion frees its queue once
/// the pin is gone) and removes G. The spliced request's deferred statistics must find its queue.
pub fn lists_insert_vs_splice_and_removal<P: StatsPolicy>() {
    let (sched, census) = scheduler::<P>(lists_config());
    let root = sched.root();
    let g = sched.create_group(root, 100).unwrap();
    let outcome = sched.spawn_process(g).unwrap().insert(request(1, 1));
    require(outcome == InsertOutcome::Listed, || {
        format!("scenario: a listed insert, got {outcome:?}")
    });
    sched.spawn_process(root).unwrap().insert(RequestSpec { at_head: true, ..request(5, 2) });
    let a = spawn_in(&sched, dispatch_and_complete);
    dispatch_and_complete(&sched);
    remove_or_refused(&sched, g);
    reclaim_step::<P>();
    a.join().unwrap();
    finish(sched, census, Moves::None);
}

/// Conservation with requests sitting on the list: thread A's process lists three requests that
/// will merge when spliced (the middle one back-merges into the first and absorbs the last: io_merged
/// twice, io_remove of the absorbed one) while thread B dispatches and completes. Whatever B
/// spliced is inserted, whatever it did not is still listed: inserted + listed = submitted.
pub fn lists_conservation<P: StatsPolicy>() {
    let (sched, census) = scheduler::<P>(lists_config());
    let root = sched.root();
    let a = spawn_in(&sched, move |s| {
        let p = s.spawn_process(root).unwrap();
        p.insert(request_at(0, 1));
        p.insert(request_at(16, 2));
        p.insert(request_at(8, 3));
    });
    let b = spawn_in(&sched, dispatch_and_complete);
    a.join().unwrap();
    b.join().unwrap();
    let c = sched.check_consistency();
    require(c.counters.inserted + c.listed as u64 == 3, || {
        format!("I2 with listed requests: 3 submitted, {c:?}")
    });
    finish(sched, census, Moves::None);
}

// ---- the negative controls' own scenarios ----

/// The captured pointer (kernel-bfq.md, "Real bugs"): the in-service queue idles after its last
/// request completed and its process exited, so only the in-service slot holds it. A dispatch finds
/// the idle timer expired, expires the queue (which frees it) and serves another queue, inserted
/// meanwhile by thread B. A policy that captured the in-service queue at the start of that dispatch
/// must not use it at the end.
pub fn in_service_queue_freed_during_dispatch<P: StatsPolicy>() {
    let (sched, census, clock) = manual_scheduler::<P>(idling_config());
    let root = sched.root();
    drop(idle_in_service(&sched, root, &clock));
    let b = spawn_in(&sched, move |s| {
        s.spawn_process(root).unwrap().insert(request(7, 2));
    });
    dispatch_and_complete(&sched);
    b.join().unwrap();
    finish(sched, census, Moves::None);
}

/// The pin-count controls: thread A inserts (its deferred update takes and drops a reference on
/// its group's policy data, without the scheduler lock) while thread B dispatches (taking and
/// dropping one on the in-service group, under the scheduler lock). Once quiet, the count must
/// be back to its initial 1: a lost update would leak the group or free it early.
pub fn pins_balanced_after_insert_vs_dispatch<P: StatsPolicy>(
    count: fn(&schedlab_core::GroupShared) -> usize,
) {
    let (sched, census) = scheduler::<P>(config());
    let g = sched.create_group(sched.root(), 100).unwrap();
    sched.spawn_process(g).unwrap().insert(request(1, 1));
    let a = spawn_in(&sched, move |s| {
        s.spawn_process(g).unwrap().insert(request(9, 2));
    });
    let b = spawn_in(&sched, dispatch_and_complete);
    a.join().unwrap();
    b.join().unwrap();
    drain(&sched);
    let pins = sched.inspect_group(g, count).unwrap();
    require(pins == 1, || {
        format!("lost update: the group's reference count is {pins}, expected 1")
    });
    finish(sched, census, Moves::None);
}

// ---- the submission sites (`Process::submit`): the bio merge and the depth limit ----

/// The bio merge against removal: thread A's process in G queues two requests with a gap and
/// then merges a bio into the gap (`bfq_bio_merge`): a back merge that grows the first request,
/// which then absorbs the second (`attempt_back_merge`, whose `io_remove` and `io_merged` name
/// the queue's group), with those statistics deferred past the scheduler lock; meanwhile the
/// main thread removes G and makes reclamation progress. No interleaving may let a deferred
/// update reach a freed G, and the absorbed request must leave the counts balanced (I2).
pub fn bio_merge_vs_removal<P: StatsPolicy>() {
    let (sched, census) = scheduler::<P>(config());
    let g = sched.create_group(sched.root(), 100).unwrap();
    let a = spawn_in(&sched, move |s| {
        // If G is already gone, the process cannot join it: nothing to race with.
        if let Ok(process) = s.spawn_process(g) {
            process.insert(request_at(0, 1));
            process.insert(request_at(16, 2));
            let merged = process.bio_merge(request_at(8, 3));
            require(merged, || {
                "scenario: the bio should merge into the gap between its process's two queued requests".into()
            });
        }
    });
    remove_or_refused(&sched, g);
    reclaim_step::<P>();
    reclaim_step::<P>();
    a.join().unwrap();
    finish(sched, census, Moves::None);
}

/// The depth limit against removal and a move: thread A's process in G2 (a child of G1) queues a
/// request (its queue is then active), runs the depth limit (`bfq_limit_depth` →
/// `bfqq_request_over_limit`: under the scheduler lock, the walk from the queue's entity up
/// through G2 and G1), moves to H and runs it again; meanwhile the main thread removes G2 and
/// then G1 and makes reclamation progress. The walk reads the groups that the removals free.
pub fn limit_depth_vs_removal_and_move<P: StatsPolicy>() {
    let (sched, census) = scheduler::<P>(config());
    let g1 = sched.create_group(sched.root(), 100).unwrap();
    let g2 = sched.create_group(g1, 100).unwrap();
    let h = sched.create_group(sched.root(), 100).unwrap();
    let a = spawn_in(&sched, move |s| {
        if let Ok(process) = s.spawn_process(g2) {
            process.insert(request(1, 1));
            process.limit_depth();
            check_move(&process, h);
            process.limit_depth();
        }
    });
    if remove_or_refused(&sched, g2) {
        remove_or_refused(&sched, g1);
    }
    reclaim_step::<P>();
    reclaim_step::<P>();
    a.join().unwrap();
    finish(sched, census, Moves::WithRequestsQueued);
}

// ---- three actors around every deferral (issue 45, item 1) ----
//
// Every place the core defers an update past the scheduler lock (notes/verify.md, round five:
// the deferral sites) is raced here by three actors: the thread whose path defers the update,
// a thread that drops the last reference of what the update names (the request the update's
// request merged into, dispatched and completed by another dispatcher after its process exited;
// or the process itself exiting on another thread), and the remover of the group. Each body runs
// on both insert paths (the `direct` form, and the `lists_` form where the insert work and its
// merges are made at a dispatcher's splice), with the 6.18 submission (`Process::submit`: bio
// merge, depth limit, insert) where a process issues inside the race. The special-case branches
// each deferral site has (a merge at the splice, back and front merges, the at-head insert, the
// bio merge's and the depth limit's early returns, the idle timer stopped by an insert) are
// reached by these bodies; `tests/coverage_map.rs` checks it against the table in notes/verify.md.

/// The three-actor bodies' configuration on one insert path: the 6.18 submission sites.
fn three_actor_config(insert: InsertPathKind) -> SchedConfig {
    SchedConfig { insert, profile: KernelProfile::Mainline, ..config() }
}

/// The request a merge went into, dispatched and completed by a second dispatcher. G under the
/// root; P in G issues X at 0, Z at 16 and Y at 8 (Y back-merges into X and absorbs Z: at its
/// insert on the `direct` path, at a dispatcher's splice on `lists`), and exits; a process of the
/// root issues an at-head request H and exits. Threads B and C each dispatch one request (H from
/// the priority list, X from G's queue; on `lists` the first to dispatch splices everything, the
/// merge's statistics deferred in its batch, the listed requests pinning G's queue until that
/// batch is applied); C completes its request, B's is completed after the race (one completion
/// in the race keeps the grace-period variants' models affordable); the main thread removes G and
/// makes reclamation progress.
/// X's completion drops the queue's last request reference while the splicer's deferred update
/// may still name the queue (fault `SplicePinDroppedEarly`), and the completion's and dispatch's
/// deferred updates read whichever group the queue is in while G is removed and freed.
fn merged_into_completed_elsewhere<P: StatsPolicy>(insert: InsertPathKind) {
    let (sched, census) = scheduler::<P>(three_actor_config(insert));
    let root = sched.root();
    let g = sched.create_group(root, 100).unwrap();
    {
        let p = sched.spawn_process(g).unwrap();
        p.insert(request_at(0, 1));
        p.insert(request_at(16, 2));
        p.insert(request_at(8, 3));
    }
    sched.spawn_process(root).unwrap().insert(RequestSpec { at_head: true, ..request(5, 4) });
    let b = {
        let sched = sched.clone();
        thread::spawn(move || InFlight::dispatch(&sched))
    };
    let c = spawn_in(&sched, dispatch_and_complete);
    if remove_or_refused(&sched, g) {
        reclaim_step::<P>();
    }
    // B's request completes after the race (its completion is C's part in the other order).
    if let Some(rq) = b.join().unwrap() {
        rq.complete();
    }
    c.join().unwrap();
    let merged = sched.counters().merged;
    require(merged == 2, || format!("scenario: two merges expected, {merged} made"));
    finish(sched, census, Moves::None);
}

/// [`merged_into_completed_elsewhere`] on the `direct` insert path.
pub fn three_actors_merged_into_completed_elsewhere<P: StatsPolicy>() {
    merged_into_completed_elsewhere::<P>(InsertPathKind::Direct);
}

/// [`merged_into_completed_elsewhere`] on the `lists` insert path: the merge made at the splice.
pub fn lists_three_actors_merged_into_completed_elsewhere<P: StatsPolicy>() {
    merged_into_completed_elsewhere::<P>(InsertPathKind::Lists);
}

/// The submission's deferrals while the process's other holder exits it: G under the root; P in
/// G (shared by two threads, [`SharedProcess`]) has X at 16 and Z at 32 queued (listed on
/// `lists`). Thread A submits `bios` through P (`Process::submit`: the bio merge, the depth
/// limit, the insert; on `lists`, or before a splice, the bio merge finds nothing queued: its
/// early return, then the depth limit and a listed insert) and lets go of P. Thread L dispatches
/// and completes one request (X, or what it merged into: on `lists` it splices first) and lets go
/// of P: whichever of A and L lets go last is P's exit. The main thread removes G and makes
/// reclamation progress. `mainline` counts each submission before the insert's lock (its per-CPU
/// add), `rstat` each dispatch after it.
fn submissions_while_holder_exits<P: StatsPolicy>(insert: InsertPathKind, bios: Bios) {
    let (sched, census) = scheduler::<P>(three_actor_config(insert));
    let root = sched.root();
    let g = sched.create_group(root, 100).unwrap();
    let shared = SharedProcess::spawn(&sched, g).unwrap();
    shared.process().insert(request_at(16, 1));
    shared.process().insert(request_at(32, 2));
    let a = {
        let shared = shared.clone();
        thread::spawn(move || {
            for bio in bios.into_iter().flatten() {
                shared.process().submit(bio);
            }
        })
    };
    let l = thread::spawn(move || {
        dispatch_and_complete(shared.scheduler());
        drop(shared);
    });
    if remove_or_refused(&sched, g) {
        reclaim_step::<P>();
    }
    a.join().unwrap();
    l.join().unwrap();
    finish(sched, census, Moves::None);
}

/// A bio at 24: a back merge into X that absorbs Z (`attempt_back_merge`: io_merged twice and
/// io_remove deferred), or on `lists` a miss and a listed insert.
const BIO_BACK_MERGE: Bios = [Some(bio(24, false, 3)), None];

/// A bio at 8 (a front merge into X, `bfq_request_merge`; on `lists` a miss) and an at-head bio
/// (the bio merge's at-head return, then the at-head insert: the priority list).
const BIO_FRONT_MERGE_AND_AT_HEAD: Bios = [Some(bio(8, false, 3)), Some(bio(640, true, 4))];

/// The bios thread A submits, in order.
type Bios = [Option<RequestSpec>; 2];

/// A read bio of 8 sectors at `sector`.
const fn bio(sector: u64, at_head: bool, tag: u64) -> RequestSpec {
    RequestSpec { sector, sectors: 8, op: Op::READ_SYNC, at_head, tag }
}

/// [`submissions_while_holder_exits`] with a bio back merge, on the `direct` insert path.
pub fn three_actors_bio_back_merge_while_holder_exits<P: StatsPolicy>() {
    submissions_while_holder_exits::<P>(InsertPathKind::Direct, BIO_BACK_MERGE);
}

/// [`submissions_while_holder_exits`] with a bio back merge, on the `lists` insert path.
pub fn lists_three_actors_bio_back_merge_while_holder_exits<P: StatsPolicy>() {
    submissions_while_holder_exits::<P>(InsertPathKind::Lists, BIO_BACK_MERGE);
}

/// [`submissions_while_holder_exits`] with a front merge and an at-head bio, `direct` path.
pub fn three_actors_bio_front_merge_and_at_head_while_holder_exits<P: StatsPolicy>() {
    submissions_while_holder_exits::<P>(InsertPathKind::Direct, BIO_FRONT_MERGE_AND_AT_HEAD);
}

/// [`submissions_while_holder_exits`] with a front merge and an at-head bio, `lists` path.
pub fn lists_three_actors_bio_front_merge_and_at_head_while_holder_exits<P: StatsPolicy>() {
    submissions_while_holder_exits::<P>(InsertPathKind::Lists, BIO_FRONT_MERGE_AND_AT_HEAD);
}

/// The idle timer's hint and the insert that stops it: G under the root; P in G (shared) idles in
/// service past its deadline. Thread T runs the idle timer (it reads the in-service queue before
/// the lock: the hint). Thread L inserts through P (on `direct` the insert stops the idle timer
/// and defers idle_time naming the queue; on `lists` the request is listed and the splice of a
/// later dispatch stops it) and lets go of P, its exit. The main thread removes G (expiring the
/// queue if it is still in service), makes reclamation progress, then dispatches and completes
/// (the request L inserted, asynchronous: its completion expires the queue, and once P has exited
/// frees it). The timer must touch the queue only if it is still in service (fault
/// `IdleTimerTouchesBeforeCheck`).
fn idle_hint_vs_insert_and_exit<P: StatsPolicy>(insert: InsertPathKind) {
    let (sched, census, clock) = manual_scheduler::<P>(SchedConfig { insert, ..idling_config() });
    let g = sched.create_group(sched.root(), 100).unwrap();
    let shared = SharedProcess::spawn(&sched, g).unwrap();
    shared.process().insert(request(1, 1));
    sched.dispatch().expect("scenario: P's request").complete();
    require(sched.idle_deadline().is_some(), || "scenario: P's queue should idle".into());
    clock.advance(2 * IDLE_NS);
    let t = spawn_in(&sched, |s| {
        s.run_idle_timer();
    });
    let l = thread::spawn(move || {
        // Asynchronous: its queue does not idle after it, so its completion expires the queue.
        shared.process().insert(RequestSpec { op: Op::WRITE_ASYNC, ..request(2, 2) });
        drop(shared);
    });
    if remove_or_refused(&sched, g) {
        reclaim_step::<P>();
    }
    dispatch_and_complete(&sched);
    t.join().unwrap();
    l.join().unwrap();
    finish(sched, census, Moves::None);
}

/// [`idle_hint_vs_insert_and_exit`] on the `direct` insert path.
pub fn three_actors_idle_hint_vs_insert_and_exit<P: StatsPolicy>() {
    idle_hint_vs_insert_and_exit::<P>(InsertPathKind::Direct);
}

/// [`idle_hint_vs_insert_and_exit`] on the `lists` insert path.
pub fn lists_three_actors_idle_hint_vs_insert_and_exit<P: StatsPolicy>() {
    idle_hint_vs_insert_and_exit::<P>(InsertPathKind::Lists);
}

/// Calls `$callback!($variant; scenario, ...)` with every scenario of the generated suite: the
/// one list that the per-variant model modules, [`SCENARIOS`] and the mutation script use. The
/// two negative-control scenarios at the end of this file are not in it (they need a variant
/// built to fail them).
#[macro_export]
macro_rules! for_each_scenario {
    ($($callback:ident)::+, $variant:ty) => {
        $($callback)::+! {
            $variant;
            i1_insert_vs_removal,
            i1_dispatch_vs_removal,
            i2_insert_vs_dispatch,
            i3_nested_removal,
            child_then_parent_removal,
            i4_teardown_vs_deferred,
            timer_vs_dispatch,
            timer_vs_exit,
            move_vs_dispatch_idle,
            move_vs_dispatch_in_service,
            removal_while_idling,
            created_after_removal,
            merge_across_removal,
            priority_across_removal,
            refcount_two_contexts,
            pending_update_vs_release,
            flush_vs_removal,
            lists_insert_vs_splice_and_removal,
            lists_conservation,
            child_and_parent_retired_by_two_threads,
            attribution_across_removal,
            spawned_create_move_read,
            group_published_to_deferred_update,
            bio_merge_vs_removal,
            limit_depth_vs_removal_and_move,
            ledger_merge_move_in_flight,
            ledger_merge_vs_dispatch_then_move,
            create_under_removed_parent,
            reads_against_their_past,
            bio_merge_and_depth_vs_removal,
            at_head_insert_vs_move_and_removal,
            lists_empty_dispatch_while_idling_vs_removal,
            bio_front_merge_and_misses_vs_move,
            budget_and_depth_limits_vs_move,
            lists_merge_across_groups_vs_move,
            merges_across_groups_attributed,
            lists_merges_across_groups_attributed,
            completion_context_vs_removal,
            completion_context_vs_move_and_removal,
            completion_context_after_submitter_exit,
            completion_by_another_job_vs_removal,
            three_actors_merged_into_completed_elsewhere,
            lists_three_actors_merged_into_completed_elsewhere,
            three_actors_bio_back_merge_while_holder_exits,
            lists_three_actors_bio_back_merge_while_holder_exits,
            three_actors_bio_front_merge_and_at_head_while_holder_exits,
            lists_three_actors_bio_front_merge_and_at_head_while_holder_exits,
            three_actors_idle_hint_vs_insert_and_exit,
            lists_three_actors_idle_hint_vs_insert_and_exit,
        }
    };
}

macro_rules! scenario_names {
    ($variant:ty; $($scenario:ident),* $(,)?) => {
        &[$(stringify!($scenario)),*]
    };
}

/// Every scenario of the generated suite, by name.
pub const SCENARIOS: &[&str] = for_each_scenario!(scenario_names, ());
