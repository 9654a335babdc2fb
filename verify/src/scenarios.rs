//! Model bodies, generic over the variant: each is one execution that loom repeats under every
//! interleaving it explores (or that a plain test runs once). They build the real scheduler with
//! a manual clock and one stat slot (the smallest state that still has every counter and lock).
//!
//! Threads get the scheduler through an `Arc` (loom's, under `cfg(loom)`): a `Process` borrows
//! the scheduler, so each thread makes its own.

use schedlab_core::sync::{thread, violation, Arc, OracleArc};
use schedlab_core::{Census, GroupId, LockKind, Op, RequestSpec, SchedClock, SchedConfig, Scheduler, StatsPolicy};

/// Checks an invariant inside a model: a failure is recorded and fails the execution when the
/// model body returns (a panic here would unwind through loom's objects and abort the process).
pub fn require(holds: bool, message: impl FnOnce() -> String) {
    if !holds {
        violation(message());
    }
}

/// The smallest configuration that keeps every statistic: one per-CPU slot.
pub fn config() -> SchedConfig {
    SchedConfig { slots: 1, ..SchedConfig::default() }
}

/// A request of 8 sectors at `sector`.
pub fn request(sector: u64, tag: u64) -> RequestSpec {
    RequestSpec { sector: sector * 64, sectors: 8, op: Op::READ_SYNC, at_head: false, tag }
}

/// A scheduler on a manual clock, and its census.
pub fn scheduler<P: StatsPolicy>(cfg: SchedConfig) -> (Arc<Scheduler<P>>, OracleArc<Census>) {
    let (clock, _) = SchedClock::manual(1);
    let sched = Scheduler::<P>::new(LockKind::FairSpin, cfg, clock);
    let census = sched.census();
    (sched, census)
}

/// Dispatches and completes everything left.
pub fn drain<P: StatsPolicy>(sched: &Scheduler<P>) {
    while let Some(rq) = sched.dispatch() {
        rq.complete();
    }
}

/// I3 at the end of every scenario: drop the last handle, let the policy finish its deferred
/// reclamation, and require that nothing is alive.
pub fn teardown_and_check<P: StatsPolicy>(sched: Arc<Scheduler<P>>, census: OracleArc<Census>) {
    drop(sched);
    check_nothing_alive::<P>(&census, "I3", 0);
}

/// I3 for one moment: no queue alive, and no group alive beyond `expected` and (for a policy
/// that reclaims after a grace period) those handed to it and awaiting reclamation. Epoch
/// reclamation is not forced here: under loom a flush loop explores every stale read crossbeam
/// may make and does not terminate in bounded time; the real-thread tests check it completes.
pub fn check_nothing_alive<P: StatsPolicy>(census: &Census, invariant: &str, expected: usize) {
    let (queues, groups, awaiting) = (census.live_queues(), census.live_groups(), census.awaiting_reclamation());
    require(queues == 0, || format!("{invariant}: a queue outlived the scheduler ({queues} live)"));
    if P::RECLAIMS_AFTER_GRACE_PERIOD {
        // What is alive must be waiting on the reclamation mechanism: retired groups, and the
        // ancestors their parent references keep.
        require(groups <= expected || awaiting > 0, || {
            format!("{invariant}: a group was not freed ({groups} live, none awaiting reclamation)")
        });
    } else {
        require(awaiting == 0, || format!("{invariant}: a group was not freed ({awaiting} retired and never freed)"));
        require(groups == expected, || format!("{invariant}: a group was not freed ({groups} live, {expected} expected)"));
    }
}

fn spawn_in<P: StatsPolicy>(sched: &Arc<Scheduler<P>>, f: impl FnOnce(&Scheduler<P>) + Send + 'static) -> thread::JoinHandle<()> {
    let sched = sched.clone();
    thread::spawn(move || f(&sched))
}

/// I1, insert path: thread A's process in G inserts a request, whose statistics are deferred past
/// the scheduler lock; meanwhile the main thread removes G (offline, then the drop of its last
/// reference). No interleaving may let the deferred update reach a freed G.
pub fn i1_insert_vs_removal<P: StatsPolicy>() {
    let (sched, census) = scheduler::<P>(config());
    let g = sched.create_group(sched.root(), 100).unwrap();
    let a = spawn_in(&sched, move |s| {
        // If G is already gone, the process cannot join it: nothing to race with.
        if let Ok(process) = s.spawn_process(g) {
            process.insert(request(1, 1));
        }
    });
    sched.remove_group(g).unwrap();
    a.join().unwrap();
    drain(&sched);
    teardown_and_check(sched, census);
}

/// I1, dispatch and completion paths: a request of G is queued (its process has exited, so only
/// the request pins the queue); thread A dispatches and completes it, with deferred dispatch
/// statistics after the unlock and completion statistics before the finish path's lock; the main
/// thread removes G meanwhile.
pub fn i1_dispatch_vs_removal<P: StatsPolicy>() {
    let (sched, census) = scheduler::<P>(config());
    let g = sched.create_group(sched.root(), 100).unwrap();
    sched.spawn_process(g).unwrap().insert(request(1, 1));
    let a = spawn_in(&sched, |s| {
        if let Some(rq) = s.dispatch() {
            rq.complete();
        }
    });
    sched.remove_group(g).unwrap();
    a.join().unwrap();
    drain(&sched);
    teardown_and_check(sched, census);
}

/// I2: thread A inserts while thread B dispatches and completes; once quiescent, inserted =
/// completed + merged, every group's `queued` is 0 and io_serviced sums to what was dispatched.
pub fn i2_insert_vs_dispatch<P: StatsPolicy>() {
    let (sched, census) = scheduler::<P>(config());
    let g = sched.create_group(sched.root(), 100).unwrap();
    sched.spawn_process(g).unwrap().insert(request(1, 1));
    let a = spawn_in(&sched, move |s| {
        let process = s.spawn_process(g).unwrap();
        process.insert(request(9, 2));
    });
    let b = spawn_in(&sched, |s| {
        if let Some(rq) = s.dispatch() {
            rq.complete();
        }
    });
    a.join().unwrap();
    b.join().unwrap();
    drain(&sched);
    // No group is removed here, so nothing awaits reclamation: no quiesce needed.
    let c = sched.check_consistency();
    require(c.requests_balance, || format!("I2: inserted != completed + merged: {c:?}"));
    require(c.groups_with_queued.is_empty(), || format!("I2: queued did not return to 0: {c:?}"));
    require(c.io_serviced_matches, || format!("I2: io_serviced != dispatched: {c:?}"));
    teardown_and_check(sched, census);
}

/// I3: one thread does I/O in a subgroup and exits, the other removes the subgroup's parent
/// chain; after teardown no group or queue is alive.
pub fn i3_no_leak<P: StatsPolicy>() {
    let (sched, census) = scheduler::<P>(config());
    let parent = sched.create_group(sched.root(), 200).unwrap();
    let child: GroupId = sched.create_group(parent, 100).unwrap();
    let a = spawn_in(&sched, move |s| {
        if let Ok(process) = s.spawn_process(child) {
            process.insert(request(1, 1));
            if let Some(rq) = s.dispatch() {
                rq.complete();
            }
        }
    });
    sched.remove_group(child).unwrap();
    sched.remove_group(parent).unwrap();
    a.join().unwrap();
    drain(&sched);
    check_nothing_alive_but_queues::<P>(&census);
    teardown_and_check(sched, census);
}

/// While the scheduler lives: only the root group may be alive (beyond reclamation in flight).
fn check_nothing_alive_but_queues<P: StatsPolicy>(census: &Census) {
    let (groups, awaiting) = (census.live_groups(), census.awaiting_reclamation());
    if P::RECLAIMS_AFTER_GRACE_PERIOD {
        require(groups <= 1 || awaiting > 0, || format!("I3: a removed group was not freed ({groups} live, none awaiting)"));
    } else {
        require(awaiting == 0, || format!("I3: a removed group was not freed ({awaiting} retired and never freed)"));
        require(groups == 1, || format!("I3: a removed group was not freed ({groups} live, only the root should be)"));
    }
}

/// I4: thread A runs a path with a deferred update while the main thread drops its handle; the
/// scheduler is torn down by whichever drops last, never inside A's deferred window.
pub fn i4_teardown_vs_deferred<P: StatsPolicy>() {
    let (sched, census) = scheduler::<P>(config());
    let g = sched.create_group(sched.root(), 100).unwrap();
    let a = spawn_in(&sched, move |s| {
        let process = s.spawn_process(g).unwrap();
        process.insert(request(1, 1));
        if let Some(rq) = s.dispatch() {
            rq.complete();
        }
    });
    drop(sched);
    a.join().unwrap();
    check_nothing_alive::<P>(&census, "I4/I3", 0);
}

/// Kernel-bfq.md §5, first bug: the in-service queue idles after its last request completed and
/// its process exited, so only the in-service slot holds it. A dispatch finds the idle timer
/// expired, expires the queue (which frees it) and serves another queue, inserted meanwhile by
/// thread B. A policy that captured the in-service queue at the start of that dispatch must not
/// use it at the end.
pub fn in_service_queue_freed_during_dispatch<P: StatsPolicy>() {
    let (clock, manual) = SchedClock::manual(1);
    let cfg = SchedConfig { slice_idle_ns: 1_000, ..config() };
    let sched = Scheduler::<P>::new(LockKind::FairSpin, cfg, clock);
    let census = sched.census();
    let root = sched.root();
    {
        let p1 = sched.spawn_process(root).unwrap();
        p1.insert(request(1, 1));
        sched.dispatch().expect("p1's request").complete();
        require(sched.idle_deadline().is_some(), || "scenario: p1's queue should idle".into());
    } // p1 exits: its queue is held only by the in-service slot
    manual.advance(2_000); // past the idle deadline
    let b = spawn_in(&sched, move |s| {
        s.spawn_process(root).unwrap().insert(request(7, 2));
    });
    if let Some(rq) = sched.dispatch() {
        rq.complete();
    }
    b.join().unwrap();
    drain(&sched);
    teardown_and_check(sched, census);
}


/// The pin-count controls: thread A inserts (its deferred update takes and drops a reference on
/// its group's policy data, without the scheduler lock) while thread B dispatches (taking and
/// dropping one on the in-service group, under the scheduler lock). Once quiet, the count must
/// be back to its initial 1: a lost update would leak the group or free it early.
pub fn pins_balanced_after_insert_vs_dispatch<P: StatsPolicy>(count: fn(&schedlab_core::GroupShared) -> usize) {
    let (sched, census) = scheduler::<P>(config());
    let g = sched.create_group(sched.root(), 100).unwrap();
    sched.spawn_process(g).unwrap().insert(request(1, 1));
    let a = spawn_in(&sched, move |s| {
        s.spawn_process(g).unwrap().insert(request(9, 2));
    });
    let b = spawn_in(&sched, |s| {
        if let Some(rq) = s.dispatch() {
            rq.complete();
        }
    });
    a.join().unwrap();
    b.join().unwrap();
    drain(&sched);
    let pins = sched.inspect_group(g, count).unwrap();
    require(pins == 1, || format!("lost update: the group's reference count is {pins}, expected 1"));
    teardown_and_check(sched, census);
}
