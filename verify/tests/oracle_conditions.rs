//! The models' oracles, tested on their own (issue 35, item 1): for every condition of I2, I7
//! and I3 that `schedlab_verify::scenarios` checks at the end of each model, an input broken in
//! exactly the way the condition names must fail exactly that condition, by name, and a clean
//! input (a real scheduler after real requests) must fail none. Boundaries are tested too (a
//! condition that holds with equality must still hold there), so that a weakened or strengthened
//! comparison shows. `check_consistency`'s own conditions are core's unit tests
//! (`core/src/scheduler.rs`, `consistency_conditions`); the issuers' ledger and the reads'
//! checks are `schedlab_verify::history`'s unit tests.
#![cfg(not(any(loom, shuttle)))]

use schedlab_core::{
    Consistency, GroupId, Ledger, LockKind, Op, RequestSpec, SchedClock, SchedConfig, Scheduler,
    StatsKept, StatsSnapshot,
};
use schedlab_variants::sched_lock::SchedLock;
use schedlab_verify::scenarios::{alive_failures, conservation_failures, Moves};

/// A quiet scheduler's report and statistics after four requests, one merged into another, two
/// of them in a child group, one a write: every condition holds.
fn clean() -> (Consistency, Vec<(GroupId, StatsSnapshot)>) {
    let (clock, _) = SchedClock::manual_ticking(1);
    let sched = Scheduler::<SchedLock>::new(
        LockKind::FairSpin,
        SchedConfig { slots: 1, ..SchedConfig::default() },
        clock,
    );
    let g = sched.create_group(sched.root(), 100).unwrap();
    {
        let p = sched.spawn_process(g).unwrap();
        p.insert(RequestSpec { sector: 0, sectors: 8, op: Op::READ_SYNC, at_head: false, tag: 1 });
        p.insert(RequestSpec { sector: 8, sectors: 8, op: Op::READ_SYNC, at_head: false, tag: 2 });
        let q = sched.spawn_process(sched.root()).unwrap();
        q.insert(RequestSpec {
            sector: 6400,
            sectors: 8,
            op: Op::READ_SYNC,
            at_head: false,
            tag: 3,
        });
        // A write, asynchronous: every request type of the rwstats has a serviced request.
        q.insert(RequestSpec {
            sector: 12800,
            sectors: 8,
            op: Op::WRITE_ASYNC,
            at_head: false,
            tag: 4,
        });
    }
    while let Some(rq) = sched.dispatch() {
        rq.complete();
    }
    let c = sched.check_consistency();
    let stats =
        sched.groups().into_iter().map(|i| (i.id, sched.group_stats(i.id).unwrap())).collect();
    (c, stats)
}

fn names(
    c: &Consistency,
    stats: &[(GroupId, StatsSnapshot)],
    kept: StatsKept,
    moves: Moves,
) -> Vec<&'static str> {
    conservation_failures(c, stats, kept, false, moves).into_iter().map(|(name, _)| name).collect()
}

/// Breaks a clean input with `f` and checks that exactly `name` fails (with full statistics and
/// no move).
fn only(name: &str, f: impl FnOnce(&mut Consistency, &mut Vec<(GroupId, StatsSnapshot)>)) {
    let (mut c, mut stats) = clean();
    f(&mut c, &mut stats);
    assert_eq!(names(&c, &stats, StatsKept::Full, Moves::None), [name], "{c:?} {stats:?}");
}

const READ: usize = 0;

#[test]
fn a_clean_run_fails_no_condition() {
    let (c, stats) = clean();
    assert!(c.ok, "{c:?}");
    for kept in [StatsKept::Full, StatsKept::Legacy, StatsKept::None] {
        for moves in [Moves::None, Moves::WithRequestsQueued] {
            assert!(names(&c, &stats, kept, moves).is_empty(), "{kept:?} {moves:?}: {c:?}");
        }
    }
}

#[test]
fn requests_fails_alone_on_either_half() {
    only("requests", |c, _| c.requests_balance = false);
    only("requests", |c, _| c.outstanding = (0, 1));
    only("requests", |c, _| c.outstanding = (1, 0));
}

#[test]
fn dispatched_fails_alone() {
    // One completion fewer than dispatches (the service-time floor only gets easier).
    only("dispatched", |c, _| c.counters.completed -= 1);
}

#[test]
fn queued_sum_fails_alone() {
    only("queued-sum", |_, s| s[0].1.queued[READ] += 1);
    only("queued-sum", |_, s| s[1].1.queued[READ] -= 1);
}

#[test]
fn queued_per_group_fails_alone_and_only_without_a_move() {
    let (mut c, stats) = clean();
    c.groups_with_queued = vec![(stats[0].0, 1)];
    assert_eq!(names(&c, &stats, StatsKept::Full, Moves::None), ["queued-per-group"]);
    assert!(names(&c, &stats, StatsKept::Full, Moves::WithRequestsQueued).is_empty());
    assert!(names(&c, &stats, StatsKept::Legacy, Moves::None).is_empty());
}

#[test]
fn merged_fails_alone() {
    only("merged", |_, s| s[0].1.merged[READ] += 1);
    only("merged", |c, _| c.counters.merged += 1);
}

#[test]
fn service_time_fails_alone_and_holds_at_its_floor() {
    only("service-time", |_, s| {
        for (_, g) in s.iter_mut() {
            g.service_time = [0; 4];
        }
    });
    // Exactly 1 ns per completion is enough.
    let (c, mut stats) = clean();
    for (_, g) in stats.iter_mut() {
        g.service_time = [0; 4];
    }
    stats[0].1.service_time[READ] = c.counters.completed as i64;
    assert!(names(&c, &stats, StatsKept::Full, Moves::None).is_empty());
}

#[test]
fn serviced_fails_alone() {
    // An extra serviced request with its bytes (so that only the count is wrong).
    only("serviced", |_, s| {
        s[0].1.io_serviced[READ] += 1;
        s[0].1.io_service_bytes[READ] += 4096;
    });
    only("serviced", |_, s| {
        s[1].1.io_serviced[READ] -= 1;
        s[1].1.io_service_bytes[READ] -= 4096;
    });
}

#[test]
fn bytes_fails_alone_in_each_type_and_holds_at_its_floor() {
    for k in 0..4 {
        only("bytes", |_, s| {
            for (_, g) in s.iter_mut() {
                g.io_service_bytes[k] = 0;
            }
        });
    }
    // Exactly 512 bytes per serviced request is enough.
    let (c, mut stats) = clean();
    for (_, g) in stats.iter_mut() {
        g.io_service_bytes = std::array::from_fn(|k| 512 * g.io_serviced[k]);
    }
    assert!(names(&c, &stats, StatsKept::Full, Moves::None).is_empty());
}

#[test]
fn attribution_fails_alone_and_only_without_a_move() {
    let (mut c, stats) = clean();
    c.groups_misattributed =
        vec![(stats[0].0, Ledger::default(), Ledger { serviced: 1, ..Ledger::default() })];
    assert_eq!(names(&c, &stats, StatsKept::Full, Moves::None), ["attribution"]);
    assert_eq!(names(&c, &stats, StatsKept::None, Moves::None), ["attribution"]);
    assert!(names(&c, &stats, StatsKept::Full, Moves::WithRequestsQueued).is_empty());
}

#[test]
fn what_a_variant_does_not_keep_is_not_checked() {
    let (c, mut stats) = clean();
    stats[0].1.queued[READ] += 1;
    stats[0].1.merged[READ] += 1;
    stats[0].1.service_time = [0; 4];
    assert!(names(&c, &stats, StatsKept::Legacy, Moves::None).is_empty());
    stats[0].1.io_serviced[READ] += 1;
    stats[0].1.io_service_bytes = [0; 4];
    assert!(names(&c, &stats, StatsKept::None, Moves::None).is_empty());
    assert_eq!(names(&c, &stats, StatsKept::Legacy, Moves::None), ["serviced", "bytes"]);
}

#[test]
fn each_liveness_condition_fails_alone() {
    let names = |q, l, a, g| {
        alive_failures("I3", q, l, a, g).into_iter().map(|(n, _)| n).collect::<Vec<_>>()
    };
    assert!(names(0, 0, 0, 0).is_empty());
    assert!(names(0, 3, 0, 3).is_empty());
    assert_eq!(names(1, 0, 0, 0), ["queues"]);
    assert_eq!(names(0, 1, 0, 0), ["groups"]);
    assert_eq!(names(0, 0, 0, 1), ["groups"]);
    assert_eq!(names(0, 0, 1, 0), ["awaiting"]);
}

#[test]
fn serviced_counted_at_submission_is_compared_with_the_submissions() {
    let (c, stats) = clean();
    let at_submit = |c: &Consistency| -> Vec<&'static str> {
        conservation_failures(c, &stats, StatsKept::Legacy, true, Moves::None)
            .into_iter()
            .map(|(n, _)| n)
            .collect()
    };
    // Four requests reached the insert, one merged: counted at submission, io_serviced is 4, not 3.
    assert_eq!(at_submit(&c), ["serviced"]);
    let mut submitted = c.clone();
    submitted.counters.inserted = c.counters.dispatched;
    assert!(at_submit(&submitted).is_empty());
    // A bio merge makes no request: it is not counted.
    submitted.counters.inserted += 1;
    assert_eq!(at_submit(&submitted), ["serviced"]);
    submitted.counters.bio_merged += 1;
    assert!(at_submit(&submitted).is_empty());
}
