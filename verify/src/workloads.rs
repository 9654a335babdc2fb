//! Scenarios past loom's bound, for shuttle: three or four threads, tens of requests, group churn,
//! process moves, merges, priority requests and the idle timer in one execution. Each ends with the
//! same checks as the small scenarios ([`crate::scenarios::finish`]: I2 over groups, reclamation
//! inside the execution, I3 with no allowance), and a use after free anywhere is a violation.
//!
//! Shuttle samples schedules (uniformly random, or PCT with a bug depth) instead of enumerating
//! them; crossbeam-epoch runs uninstrumented, a black box whose participants are the facade's per
//! model thread (`schedlab_core::sync::epoch`). What it cannot see is listed in
//! notes/verify-budget.md.

use crate::history::Recorder;
use crate::scenarios::{
    finish, manual_scheduler, quiesce, reclaim_step, remove_or_refused, require, scheduler, Moves,
    IDLE_NS,
};
use schedlab_core::sync::{thread, violation};
use schedlab_core::{GroupId, Op, RequestSpec, SchedConfig, SchedError, StatsPolicy};

/// Requests each job inserts.
const REQUESTS_PER_JOB: u64 = 8;

fn spec(job: u64, i: u64) -> RequestSpec {
    // Every third request continues the previous one (a back merge); every fifth goes to the
    // head of the priority list.
    let sector = job * 1_000_000 + if i % 3 == 2 { (i - 1) * 8 } else { i * 64 };
    RequestSpec { sector, sectors: 8, op: Op::READ_SYNC, at_head: i % 5 == 4, tag: job * 100 + i }
}

/// Three jobs in a two-level hierarchy, each inserting, dispatching and completing
/// [`REQUESTS_PER_JOB`] requests, one of them moving between groups and running the idle timer,
/// against a churn thread that removes leaf groups and their parent, creates new ones and makes
/// reclamation progress. Jobs whose group is gone start in the root (a stale handle is refused).
pub fn mixed_churn<P: StatsPolicy>() {
    let cfg = SchedConfig { slots: 2, slice_idle_ns: IDLE_NS, ..SchedConfig::default() };
    let (sched, census, manual) = manual_scheduler::<P>(cfg);
    let root = sched.root();
    let a = sched.create_group(root, 200).unwrap();
    let a1 = sched.create_group(a, 100).unwrap();
    let a2 = sched.create_group(a, 300).unwrap();
    let b = sched.create_group(root, 100).unwrap();
    let homes: [GroupId; 3] = [a1, a2, b];
    let mut jobs = Vec::new();
    for (job, home) in homes.into_iter().enumerate() {
        let (s, clock) = (sched.clone(), manual.clone());
        jobs.push(thread::spawn(move || {
            let p = s.spawn_process(home).or_else(|_| s.spawn_process(s.root())).unwrap();
            for i in 0..REQUESTS_PER_JOB {
                p.insert(spec(job as u64, i));
                if let Some(rq) = s.dispatch() {
                    rq.complete();
                }
                if job == 0 && i == 3 {
                    match p.move_to(b) {
                        Ok(())
                        | Err(SchedError::NoSuchGroup(_))
                        | Err(SchedError::UnsafeUnderRemoval(_)) => {}
                        Err(e) => violation(format!("workload: move failed: {e}")),
                    }
                }
                if job == 1 && i % 2 == 1 {
                    clock.advance(2 * IDLE_NS);
                    s.run_idle_timer();
                }
            }
        }));
    }
    let churn = {
        let s = sched.clone();
        thread::spawn(move || {
            if remove_or_refused(&s, a1) {
                reclaim_step::<P>();
                let a3 = s.create_group(a, 100).unwrap();
                remove_or_refused(&s, a2);
                reclaim_step::<P>();
                remove_or_refused(&s, a3);
                remove_or_refused(&s, a);
                reclaim_step::<P>();
            }
        })
    };
    for job in jobs {
        job.join().unwrap();
    }
    churn.join().unwrap();
    finish(sched, census, Moves::WithRequestsQueued);
}

/// Four threads on one group hierarchy without removal: three jobs inserting (merges and priority
/// requests included) and a dispatcher that completes what it gets and, when nothing is ready,
/// moves the manual clock past the idle slice and runs the idle timer. Checks the counters (I2)
/// under the heaviest interleaving of inserts and dispatches in the suite, for every variant,
/// including those that refuse removal.
pub fn four_threads_no_removal<P: StatsPolicy>() {
    let cfg = SchedConfig { slots: 2, slice_idle_ns: IDLE_NS, ..SchedConfig::default() };
    let (sched, census, manual) = manual_scheduler::<P>(cfg);
    let root = sched.root();
    let g = sched.create_group(root, 100).unwrap();
    let h = sched.create_group(g, 100).unwrap();
    let mut threads = Vec::new();
    for (job, home) in [g, h, root].into_iter().enumerate() {
        let s = sched.clone();
        threads.push(thread::spawn(move || {
            let p = s.spawn_process(home).unwrap();
            for i in 0..REQUESTS_PER_JOB {
                p.insert(spec(job as u64, i));
            }
        }));
    }
    let dispatcher = {
        let (s, clock) = (sched.clone(), manual.clone());
        thread::spawn(move || {
            for _ in 0..2 * REQUESTS_PER_JOB {
                match s.dispatch() {
                    Some(rq) => {
                        rq.complete();
                    }
                    None => {
                        clock.advance(2 * IDLE_NS);
                        s.run_idle_timer();
                    }
                }
            }
        })
    };
    for t in threads {
        t.join().unwrap();
    }
    dispatcher.join().unwrap();
    require(sched.counters().inserted == 3 * REQUESTS_PER_JOB, || {
        format!("workload: {:?}", sched.counters())
    });
    quiesce::<P>(&census);
    finish(sched, census, Moves::None);
}

/// Issue 24's racers past loom's bound: every group is created by a spawned thread. Two creator
/// threads each create a group and a child under it, start a process in the root, insert, move
/// the process into the child (a move with requests queued), insert again, exit, and remove the
/// child, and (the first of them) then the group; a reader thread reads every group's statistics three times (under
/// rstat each read flushes the per-CPU lists); a dispatcher completes what it finds. The main
/// thread creates nothing: a group the reader or the dispatcher reaches was published by another
/// thread, and may be retired by a third. Variants that refuse removal (or moves) see refusals.
pub fn spawned_creators_movers_readers<P: StatsPolicy>() {
    let cfg = SchedConfig { slots: 2, ..SchedConfig::default() };
    let (sched, census) = scheduler::<P>(cfg);
    let root = sched.root();
    // Every thread records what it does (crate::history): I7 is checked from the issuers' facts
    // across the moves with requests in flight, and every read against its past.
    let rec = Recorder::start(root);
    let mut threads = Vec::new();
    for job in 0..2u64 {
        threads.push(rec.spawn(&sched, move |s, r| {
            let g = s.create_group(root, 100 + 100 * job).unwrap();
            r.created(g, root);
            let child = s.create_group(g, 100).unwrap();
            r.created(child, g);
            let p = s.spawn_process(root).unwrap();
            for i in 0..REQUESTS_PER_JOB / 2 {
                r.insert(&p, root, spec(job, i));
            }
            let home = match r.move_to(&p, child) {
                Ok(()) => child,
                Err(SchedError::UnsafeUnderRemoval(_)) => root,
                Err(e) => {
                    violation(format!("workload: move failed: {e}"));
                    root
                }
            };
            for i in REQUESTS_PER_JOB / 2..REQUESTS_PER_JOB {
                r.insert(&p, home, spec(job, i));
            }
            drop(p);
            // Job 0 removes both its groups; job 1 keeps its group, which its child's statistics
            // reach at the child's removal while the reader may be reading it.
            if remove_or_refused(s, child) {
                r.removed(child);
                reclaim_step::<P>();
                if job == 0 && remove_or_refused(s, g) {
                    r.removed(g);
                    reclaim_step::<P>();
                }
            }
        }));
    }
    let reader = rec.spawn(&sched, |s, r| {
        for _ in 0..3 {
            for g in s.groups() {
                r.read(s, g.id);
            }
        }
    });
    let dispatcher = rec.spawn(&sched, |s, r| {
        for _ in 0..2 * REQUESTS_PER_JOB {
            r.dispatch(s);
        }
    });
    for t in threads {
        rec.join(t);
    }
    rec.join(reader);
    rec.join(dispatcher);
    rec.drain(&sched);
    quiesce::<P>(&census);
    rec.check(&sched);
    finish(sched, census, Moves::WithRequestsQueued);
}

/// Calls `$callback!($variant; workload, ...)` with every workload (shuttle's generated suite,
/// [`crate::models_for_every_variant!`]).
#[macro_export]
macro_rules! for_each_workload {
    ($($callback:ident)::+, $variant:ty) => {
        $($callback)::+! {
            $variant;
            mixed_churn,
            four_threads_no_removal,
            spawned_creators_movers_readers,
        }
    };
}
