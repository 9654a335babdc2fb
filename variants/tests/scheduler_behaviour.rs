//! Behaviour of the scheduler through its public API, single-threaded and on a manual clock:
//!
//! - every stats-keeping variant ends a seeded workload with the same statistics, field by field
//!   (`debug-off` and `rstat`: the legacy pair they keep);
//! - B-WF2Q+ shares the device in proportion to the group weights, also across levels;
//! - `slice_idle` holds the device for the emptied in-service queue until its next request or the
//!   timer, and not at all when it is 0;
//! - groups and queues are freed once nothing refers to them (census back to zero), removal errors;
//! - `queued` returns to zero on every path (seed patch 2/4) and requests are conserved.
//!
//! Everything runs on one thread with a `ManualClock`, so the deferred variants apply their batches
//! at the same clock value as the locked ones and the runs are deterministic.

use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};
use schedlab_core::{
    Consistency, Dispatched, GroupId, InsertOutcome, LockKind, ManualClock, Op, Process,
    RequestCounters, RequestSpec, SchedClock, SchedConfig, SchedError, Scheduler, StatsKept,
    StatsPolicy, StatsSnapshot,
};
use schedlab_variants::debug_off::DebugOff;
use schedlab_variants::epoch::Epoch;
use schedlab_variants::no_stats::NoStats;
use schedlab_variants::queue_lock::QueueLock;
use schedlab_variants::rstat::Rstat;
use schedlab_variants::sched_lock::SchedLock;
use schedlab_variants::unlocked::Unlocked;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Runs `$check::<P>()` for every variant of the registry (`schedlab_variants::ALL`), not a list
/// written here: a new variant is covered without editing this file. With `safe`, only the
/// variants safe under group removal (`unlocked` is not: it updates statistics unlocked).
macro_rules! for_every_variant {
    ($check:ident) => {
        for_every_variant!($check, |_| true)
    };
    ($check:ident, safe) => {
        for_every_variant!($check, |v: &schedlab_variants::VariantInfo| v.safe_under_removal)
    };
    ($check:ident, $keep:expr) => {{
        struct Check;
        impl schedlab_variants::VariantVisitor for Check {
            type Output = ();
            fn visit<P: StatsPolicy>(self) {
                $check::<P>()
            }
        }
        let keep: fn(&schedlab_variants::VariantInfo) -> bool = $keep;
        let mut ran = 0;
        for v in schedlab_variants::ALL.iter().filter(|v| keep(v)) {
            schedlab_variants::visit(v.name, Check).expect("a registered variant");
            ran += 1;
        }
        assert!(ran >= 2, "{} ran for {ran} variants", stringify!($check));
    }};
}

const MS: u64 = 1_000_000;
const US: u64 = 1_000;

fn spec(sector: u64, sectors: u32, op: Op, tag: u64) -> RequestSpec {
    RequestSpec { sector, sectors, op, at_head: false, tag }
}

fn head(sector: u64, sectors: u32, op: Op, tag: u64) -> RequestSpec {
    RequestSpec { sector, sectors, op, at_head: true, tag }
}

fn manual_sched<P: StatsPolicy>(cfg: SchedConfig) -> (Arc<Scheduler<P>>, Arc<ManualClock>) {
    let (clock, hand) = SchedClock::manual(MS);
    (Scheduler::<P>::new(LockKind::FairSpin, cfg, clock), hand)
}

/// Every online group's statistics, by serial.
fn all_stats<P: StatsPolicy>(sched: &Scheduler<P>) -> Vec<(u64, StatsSnapshot)> {
    let mut out: Vec<_> = sched
        .groups()
        .iter()
        .map(|g| (g.id.serial(), sched.group_stats(g.id).expect("online group")))
        .collect();
    out.sort_by_key(|(serial, _)| *serial);
    out
}

/// `P::quiesce` until `done` holds (epoch reclamation can be delayed by pins of tests running in
/// parallel on other threads); gives up after two seconds and lets the caller's assertion fail.
fn quiesce_until<P: StatsPolicy>(mut done: impl FnMut() -> bool) {
    let deadline = Instant::now() + Duration::from_secs(2);
    loop {
        P::quiesce();
        if done() || Instant::now() > deadline {
            return;
        }
        std::thread::sleep(Duration::from_millis(1));
    }
}

// ---------------------------------------------------------------------------------------------
// 1. The same workload gives the same statistics under every variant that keeps them.
// ---------------------------------------------------------------------------------------------

const WORKLOAD_STEPS: usize = 6000;
const WORKLOAD_SEED: u64 = 0x5EED_B0F5;

/// What a workload run leaves behind.
#[derive(Debug)]
struct WorkloadResult {
    variant: &'static str,
    /// Every online group at the end, by serial.
    groups: Vec<(u64, StatsSnapshot)>,
    counters: RequestCounters,
    consistency: Consistency,
    /// Tags in dispatch order: the scheduling decisions must not depend on the variant.
    dispatch_order: Vec<u64>,
    /// Inserts answered `Merged` (bio merges); `counters.merged` minus this is the number of
    /// request-request merges (the second `attempt_back_merge`).
    insert_merges: u64,
    at_head_inserts: u64,
    idle_timer_disables: u64,
    /// Dispatch/complete steps after which an idle timer was armed.
    idle_timers_armed: u64,
    idle_timers_fired: u64,
    /// The with-churn run: what remove_group / move_to answered.
    churn_results: Vec<Result<(), SchedError>>,
}

/// One seeded, single-threaded workload: root -> {A (300), B (100)}, A -> {A1 (200), A2 (50)};
/// eight processes spread over them; random, sequential and gap-filling inserts of three request
/// types, some at the head; dispatches and completions with requests kept in flight; a clock
/// moved by varied amounts so that idle timers both fire and get disabled. With `churn`, a process
/// moves (twice) and the leaf A2 is removed with its process's I/O in flight.
fn run_workload<P: StatsPolicy>(seed: u64, churn: bool) -> WorkloadResult {
    let cfg = SchedConfig {
        slots: 4,
        slice_idle_ns: 2 * MS,
        max_budget: 512,
        timeout_ns: 20 * MS,
        fifo_expire_sync_ns: 10 * MS,
        fifo_expire_async_ns: 20 * MS,
        ..SchedConfig::default()
    };
    let (sched, hand) = manual_sched::<P>(cfg);
    let root = sched.root();
    let a = sched.create_group(root, 300).unwrap();
    let b = sched.create_group(root, 100).unwrap();
    let a1 = sched.create_group(a, 200).unwrap();
    let a2 = sched.create_group(a, 50).unwrap();
    let homes = [root, a, a, b, a1, a1, a2, b];
    let procs: Vec<Process<'_, P>> =
        homes.iter().map(|&g| sched.spawn_process(g).unwrap()).collect();
    // Each process writes its own region; `cursor` is where its next sequential request starts.
    let mut cursor: Vec<u64> = (0..procs.len()).map(|i| (i as u64 + 1) << 32).collect();
    let mut rng = SmallRng::seed_from_u64(seed);
    let mut in_flight: Vec<Dispatched<'_, P>> = Vec::new();
    let mut res = WorkloadResult {
        variant: P::NAME,
        groups: Vec::new(),
        counters: RequestCounters::default(),
        consistency: sched.check_consistency(),
        dispatch_order: Vec::new(),
        insert_merges: 0,
        at_head_inserts: 0,
        idle_timer_disables: 0,
        idle_timers_armed: 0,
        idle_timers_fired: 0,
        churn_results: Vec::new(),
    };
    let mut next_tag = 1u64;
    let mut tag = || {
        next_tag += 1;
        next_tag - 1
    };
    fn note_insert(res: &mut WorkloadResult, outcome: InsertOutcome) {
        match outcome {
            InsertOutcome::Merged => res.insert_merges += 1,
            InsertOutcome::Queued { idle_timer_disabled: true } => res.idle_timer_disables += 1,
            InsertOutcome::Queued { idle_timer_disabled: false } | InsertOutcome::Listed => {}
        }
    }

    for step in 0..WORKLOAD_STEPS {
        if churn {
            // Process 3 leaves B for A1 (maybe with requests queued or in flight); A2 goes offline
            // with process 6 inside; process 0 leaves the root for B.
            if step == WORKLOAD_STEPS / 4 {
                res.churn_results.push(procs[3].move_to(a1));
            }
            if step == WORKLOAD_STEPS / 2 {
                res.churn_results.push(sched.remove_group(a2));
            }
            if step == 3 * WORKLOAD_STEPS / 4 {
                res.churn_results.push(procs[0].move_to(b));
            }
        }
        hand.advance(rng.random_range(0..20 * US));
        let p = rng.random_range(0..procs.len());
        let op = match rng.random_range(0..4) {
            0 | 1 => Op::READ_SYNC,
            2 => Op::WRITE_ASYNC,
            _ => Op::WRITE_SYNC,
        };
        match rng.random_range(0..100) {
            // Sequential: back-merges into the previous request when it is still queued.
            0..12 => {
                let sectors = 8 * rng.random_range(1..=4);
                let s = cursor[p];
                cursor[p] += sectors as u64;
                let outcome = procs[p].insert(spec(s, sectors, op, tag()));
                note_insert(&mut res, outcome);
            }
            // Random position in the process's region.
            12..22 => {
                let s = (p as u64 + 1) << 32 | (rng.random_range(0..1u64 << 20) * 8);
                let outcome = procs[p].insert(spec(s, 8, op, tag()));
                note_insert(&mut res, outcome);
            }
            // Gap fill: [s, s+8), [s+16, s+24), then [s+8, s+16), which back-merges into the first
            // and makes it reach the second (request-request merge).
            22..26 => {
                let s = cursor[p];
                cursor[p] += 24;
                for off in [0, 16, 8] {
                    let outcome = procs[p].insert(spec(s + off, 8, op, tag()));
                    note_insert(&mut res, outcome);
                }
            }
            // At the head of the priority dispatch list.
            26..30 => {
                let s = (p as u64 + 1) << 32 | (rng.random_range(0..1u64 << 20) * 8);
                res.at_head_inserts += 1;
                let outcome = procs[p].insert(head(s, 8, op, tag()));
                note_insert(&mut res, outcome);
            }
            // Dispatch a few.
            30..60 => {
                for _ in 0..rng.random_range(1..=3) {
                    let Some(rq) = sched.dispatch() else { break };
                    res.dispatch_order.push(rq.tag);
                    in_flight.push(rq);
                }
                if sched.idle_deadline().is_some() {
                    res.idle_timers_armed += 1;
                }
            }
            // Complete one or two (any of those in flight).
            60..88 => {
                for _ in 0..rng.random_range(1..=2) {
                    if in_flight.is_empty() {
                        break;
                    }
                    let i = rng.random_range(0..in_flight.len());
                    in_flight.swap_remove(i).complete();
                    if sched.idle_deadline().is_some() {
                        res.idle_timers_armed += 1;
                    }
                }
            }
            // Time passes: a little, about an idle slice, or past budget timeouts and FIFO
            // deadlines; sometimes the idle timer runs.
            _ => {
                let ns = match rng.random_range(0..10) {
                    0..6 => rng.random_range(50 * US..MS),
                    6..9 => rng.random_range(MS..3 * MS),
                    _ => rng.random_range(10 * MS..30 * MS),
                };
                hand.advance(ns);
                if rng.random_bool(0.5) && sched.run_idle_timer() {
                    res.idle_timers_fired += 1;
                }
            }
        }
    }

    // Drain: complete everything, dispatch what is left, let idle timers expire.
    for _ in 0..100_000 {
        for rq in in_flight.drain(..) {
            rq.complete();
        }
        while let Some(rq) = sched.dispatch() {
            res.dispatch_order.push(rq.tag);
            in_flight.push(rq);
        }
        if in_flight.is_empty() && sched.outstanding() == (0, 0) {
            break;
        }
        if in_flight.is_empty() {
            hand.advance(3 * MS);
        }
    }
    assert!(in_flight.is_empty());
    assert_eq!(sched.outstanding(), (0, 0), "{}: the drain left requests behind", P::NAME);
    assert!(
        sched.quiesce_until_reclaimed(Duration::from_secs(10)),
        "{}: grace periods never ended",
        P::NAME
    );
    res.groups = all_stats(&sched);
    res.counters = sched.counters();
    res.consistency = sched.check_consistency();
    drop(procs);
    res
}

fn assert_same_stats(base: &WorkloadResult, other: &WorkloadResult) {
    let (b, o) = (base.variant, other.variant);
    assert_eq!(other.counters, base.counters, "{o} vs {b}: request counters");
    assert_eq!(other.dispatch_order, base.dispatch_order, "{o} vs {b}: dispatch order");
    assert_eq!(other.churn_results, base.churn_results, "{o} vs {b}: churn results");
    let serials = |r: &WorkloadResult| r.groups.iter().map(|(s, _)| *s).collect::<Vec<_>>();
    assert_eq!(serials(other), serials(base), "{o} vs {b}: online groups");
    for ((serial, want), (_, got)) in base.groups.iter().zip(&other.groups) {
        assert_eq!(got, want, "{o} vs {b}: statistics of group g{serial}");
    }
}

fn assert_same_legacy(base: &WorkloadResult, other: &WorkloadResult) {
    let (b, o) = (base.variant, other.variant);
    assert_eq!(other.counters, base.counters, "{o} vs {b}: request counters");
    assert_eq!(other.dispatch_order, base.dispatch_order, "{o} vs {b}: dispatch order");
    assert_eq!(other.groups.len(), base.groups.len());
    for ((serial, want), (s2, got)) in base.groups.iter().zip(&other.groups) {
        assert_eq!(serial, s2);
        assert_eq!(
            got.legacy(),
            want.legacy(),
            "{o} vs {b}: io_service_bytes/io_serviced of g{serial}"
        );
        // Nothing else is kept.
        let rest = StatsSnapshot { io_service_bytes: [0; 4], io_serviced: [0; 4], ..got.clone() };
        assert_eq!(rest, zero_snapshot(), "{o}: only the legacy pair is kept (g{serial})");
    }
}

fn zero_snapshot() -> StatsSnapshot {
    StatsSnapshot {
        queued: [0; 4],
        merged: [0; 4],
        service_time: [0; 4],
        wait_time: [0; 4],
        io_service_bytes: [0; 4],
        io_serviced: [0; 4],
        time: 0,
        avg_queue_size_sum: 0,
        avg_queue_size_samples: 0,
        dequeue: 0,
        group_wait_time: 0,
        idle_time: 0,
        empty_time: 0,
        start_group_wait_time: 0,
        start_idle_time: 0,
        start_empty_time: 0,
        flags: 0,
    }
}

/// The workload really went through the paths whose statistics are compared.
fn assert_exercised(r: &WorkloadResult) {
    let c = r.counters;
    let sum = |f: &dyn Fn(&StatsSnapshot) -> i64| r.groups.iter().map(|(_, s)| f(s)).sum::<i64>();
    assert!(c.inserted > 2000 && c.dispatched > 1000, "{c:?}");
    assert_eq!(c.dispatched, c.completed);
    assert!(r.insert_merges > 50, "bio back merges: {}", r.insert_merges);
    assert!(
        c.merged > r.insert_merges + 20,
        "request-request merges: {} of {}",
        c.merged - r.insert_merges,
        c.merged
    );
    assert!(r.at_head_inserts > 50, "at-head inserts: {}", r.at_head_inserts);
    assert!(r.idle_timers_armed > 20, "idle timer armed: {}", r.idle_timers_armed);
    assert!(
        r.idle_timer_disables > 5,
        "idle timer disabled by an insert: {}",
        r.idle_timer_disables
    );
    assert!(r.idle_timers_fired > 5, "idle timer fired: {}", r.idle_timers_fired);
    let groups_with =
        |f: &dyn Fn(&StatsSnapshot) -> bool| r.groups.iter().filter(|(_, s)| f(s)).count();
    assert!(groups_with(&|s| s.idle_time > 0) >= 2, "idle_time");
    assert!(groups_with(&|s| s.group_wait_time > 0) >= 3, "group_wait_time");
    assert!(groups_with(&|s| s.dequeue > 0) >= 3, "dequeue");
    assert!(groups_with(&|s| s.time > 0) >= 3, "time");
    assert!(groups_with(&|s| StatsSnapshot::total(&s.service_time) > 0) >= 3, "service_time");
    assert!(groups_with(&|s| StatsSnapshot::total(&s.wait_time) > 0) >= 3, "wait_time");
    assert!(groups_with(&|s| s.avg_queue_size_sum > 0) >= 3, "avg_queue_size_sum");
    assert_eq!(
        sum(&|s| s.avg_queue_size_samples),
        c.dispatched as i64,
        "one avg_queue_size sample per dispatch"
    );
    assert_eq!(sum(&|s| StatsSnapshot::total(&s.io_serviced)), c.dispatched as i64);
    assert_eq!(sum(&|s| StatsSnapshot::total(&s.merged)), c.merged as i64);
    // Not asserted: `empty_time`. It is structurally 0 here, as in the kernel: the dispatch path
    // calls set_start_empty_time *before* io_remove, so the group's `queued` still counts the
    // request being dispatched and an empty interval never opens while `queued` is balanced. It
    // only becomes > 0 after `queued` drifted (a process moved with requests queued).
    // Every request type went through.
    let serviced = r
        .groups
        .iter()
        .fold([0i64; 4], |acc, (_, s)| std::array::from_fn(|i| acc[i] + s.io_serviced[i]));
    assert!(serviced.iter().all(|&n| n > 100), "READ/WRITE/SYNC/ASYNC serviced: {serviced:?}");
}

#[test]
fn identical_final_stats_for_all_stats_keeping_variants() {
    // Without group removal or process moves: all four full-stats variants.
    let base = run_workload::<SchedLock>(WORKLOAD_SEED, false);
    assert_exercised(&base);
    for other in [
        run_workload::<QueueLock>(WORKLOAD_SEED, false),
        run_workload::<Unlocked>(WORKLOAD_SEED, false),
        run_workload::<Epoch>(WORKLOAD_SEED, false),
    ] {
        assert_same_stats(&base, &other);
    }
    assert_same_legacy(&base, &run_workload::<DebugOff>(WORKLOAD_SEED, false));
    // rstat: the same pair, through per-CPU deltas and pending lists flushed when read.
    assert_same_legacy(&base, &run_workload::<Rstat>(WORKLOAD_SEED, false));
    let none = run_workload::<NoStats>(WORKLOAD_SEED, false);
    assert_eq!(none.counters, base.counters);
    assert_eq!(none.dispatch_order, base.dispatch_order);
    assert!(none.groups.iter().all(|(_, s)| *s == zero_snapshot()), "no-stats keeps nothing");

    // With a group removal and two process moves: the variants safe under removal.
    let base = run_workload::<SchedLock>(WORKLOAD_SEED, true);
    assert_eq!(base.churn_results, vec![Ok(()), Ok(()), Ok(())]);
    assert_eq!(base.groups.len(), 4, "A2 went offline");
    // Requests and io_serviced are conserved across the removal. (`queued` is not: a process
    // that moves with requests queued leaves +n in its old group and -n in its new one, as the
    // kernel's bfq_bfqq_move does; see `moving_a_backlogged_process_keeps_queued_balanced`.)
    assert!(
        base.consistency.requests_balance && base.consistency.io_serviced_matches,
        "{:?}",
        base.consistency
    );
    assert_exercised(&base);
    for other in
        [run_workload::<QueueLock>(WORKLOAD_SEED, true), run_workload::<Epoch>(WORKLOAD_SEED, true)]
    {
        assert_same_stats(&base, &other);
    }
    assert_same_legacy(&base, &run_workload::<DebugOff>(WORKLOAD_SEED, true));
    // Across the removal, rstat's pending entries of A2 are drained into its parent on release.
    assert_same_legacy(&base, &run_workload::<Rstat>(WORKLOAD_SEED, true));

    // `unlocked` refuses both operations, and the run is otherwise unaffected.
    let refused = run_workload::<Unlocked>(WORKLOAD_SEED, true);
    assert_eq!(refused.churn_results, vec![Err(SchedError::UnsafeUnderRemoval("unlocked")); 3]);
    assert_eq!(refused.groups.len(), 5);
}

// ---------------------------------------------------------------------------------------------
// 2. Proportional share.
// ---------------------------------------------------------------------------------------------

/// Groups given as (parent index into this list, or the root; weight). One process in each group
/// listed in `leaves`, kept at 8 queued requests of 8 sectors; one request in flight at a time.
/// Returns the sectors completed per leaf, and each leaf group's io_service_bytes total.
fn backlogged_shares(
    groups: &[(Option<usize>, u64)],
    leaves: &[usize],
    dispatches: usize,
) -> (Vec<u64>, Vec<i64>) {
    const DEPTH: usize = 8;
    const SECTORS: u32 = 8;
    let cfg =
        SchedConfig { slots: 2, slice_idle_ns: 0, max_budget: 1024, ..SchedConfig::default() };
    let (sched, hand) = manual_sched::<SchedLock>(cfg);
    let root = sched.root();
    let mut ids: Vec<GroupId> = Vec::new();
    for &(parent, weight) in groups {
        let parent = parent.map_or(root, |i| ids[i]);
        ids.push(sched.create_group(parent, weight).unwrap());
    }
    let procs: Vec<_> = leaves.iter().map(|&i| sched.spawn_process(ids[i]).unwrap()).collect();
    // Gaps between requests: nothing merges, every request is 8 sectors.
    let mut cursor: Vec<u64> = (0..procs.len()).map(|i| (i as u64 + 1) << 40).collect();
    let mut seq = 0u64;
    let mut submit = |p: usize, cursor: &mut Vec<u64>| {
        seq += 1;
        let out = procs[p].insert(spec(cursor[p], SECTORS, Op::READ_SYNC, (p as u64) << 32 | seq));
        cursor[p] += 2 * SECTORS as u64;
        assert_eq!(out, InsertOutcome::Queued { idle_timer_disabled: false });
    };
    for p in 0..procs.len() {
        for _ in 0..DEPTH {
            submit(p, &mut cursor);
        }
    }
    let mut sectors = vec![0u64; procs.len()];
    for _ in 0..dispatches {
        let rq = sched.dispatch().expect("every process is backlogged");
        hand.advance(2 * US);
        let owner = (rq.tag >> 32) as usize;
        sectors[owner] += rq.sectors as u64;
        let done = rq.complete();
        assert!(done.absorbed.is_empty());
        submit(owner, &mut cursor);
    }
    let bytes = leaves
        .iter()
        .map(|&i| StatsSnapshot::total(&sched.group_stats(ids[i]).unwrap().io_service_bytes))
        .collect();
    (sectors, bytes)
}

fn assert_ratio(what: &str, num: u64, den: u64, want: f64) {
    let got = num as f64 / den as f64;
    assert!(
        (got - want).abs() <= 0.05 * want,
        "{what}: {num} / {den} = {got:.4}, want {want} ± 5 %"
    );
}

#[test]
fn proportional_share_100_300() {
    // 64 Ki requests of 8 sectors: 512 Ki sectors, about 500 budgets of 1024 sectors.
    let n = 64 * 1024;
    let (sectors, bytes) = backlogged_shares(&[(None, 100), (None, 300)], &[0, 1], n);
    assert_eq!(sectors.iter().sum::<u64>(), 8 * n as u64);
    assert_eq!(
        bytes,
        sectors.iter().map(|&s| s as i64 * 512).collect::<Vec<_>>(),
        "io_service_bytes per group"
    );
    assert_ratio("weight 300 : weight 100", sectors[1], sectors[0], 3.0);

    // Two levels: root -> X (100) -> {X1 (100), X2 (300)}, root -> Y (100). X and Y split the
    // device evenly; inside X, X2 gets three times X1.
    let (sectors, bytes) = backlogged_shares(
        &[(None, 100), (Some(0), 100), (Some(0), 300), (None, 100)],
        &[1, 2, 3],
        n,
    );
    assert_eq!(
        bytes,
        sectors.iter().map(|&s| s as i64 * 512).collect::<Vec<_>>(),
        "io_service_bytes per group"
    );
    let (x1, x2, y) = (sectors[0], sectors[1], sectors[2]);
    assert_ratio("X2 : X1", x2, x1, 3.0);
    assert_ratio("X : Y", x1 + x2, y, 1.0);
}

// ---------------------------------------------------------------------------------------------
// 3. Idling.
// ---------------------------------------------------------------------------------------------

const A_FIRST: u64 = 1;
const B_TAG: u64 = 2;
const A_NEXT: u64 = 3;

/// A (group GA) dispatches and completes its only request; B (group GB) inserts meanwhile.
/// Leaves A's queue in service (idling when `slice_idle_ns > 0`).
struct IdleSetup<'s, P: StatsPolicy> {
    sched: &'s Scheduler<P>,
    hand: &'s ManualClock,
    a: Process<'s, P>,
    b: Process<'s, P>,
    ga: GroupId,
    gb: GroupId,
    /// When A's queue went in service, and when B's request arrived.
    a_served_at: u64,
    b_arrived_at: u64,
}

fn idle_sched<P: StatsPolicy>(slice_idle_ns: u64) -> (Arc<Scheduler<P>>, Arc<ManualClock>) {
    manual_sched::<P>(SchedConfig { slots: 2, slice_idle_ns, ..SchedConfig::default() })
}

fn idle_setup<'s, P: StatsPolicy>(
    sched: &'s Scheduler<P>,
    hand: &'s ManualClock,
) -> IdleSetup<'s, P> {
    let root = sched.root();
    let ga = sched.create_group(root, 100).unwrap();
    let gb = sched.create_group(root, 100).unwrap();
    let a = sched.spawn_process(ga).unwrap();
    let b = sched.spawn_process(gb).unwrap();
    let now = || sched.clock().now_ns();

    assert_eq!(
        a.insert(spec(1000, 8, Op::READ_SYNC, A_FIRST)),
        InsertOutcome::Queued { idle_timer_disabled: false }
    );
    hand.advance(10 * US);
    let a_served_at = now();
    let rq = sched.dispatch().expect("A's request");
    assert_eq!(rq.tag, A_FIRST);
    // While A's request is on the device, its queue stays in service (it may idle once it
    // completes): B, arriving now, must wait.
    hand.advance(10 * US);
    let b_arrived_at = now();
    assert_eq!(
        b.insert(spec(5000, 8, Op::READ_SYNC, B_TAG)),
        InsertOutcome::Queued { idle_timer_disabled: false }
    );
    if sched.slice_idle() > 0 {
        assert!(sched.dispatch().is_none(), "A is in service with its request on the device");
    }
    hand.advance(100 * US);
    assert_eq!(rq.complete().tag, A_FIRST);
    IdleSetup { sched, hand, a, b, ga, gb, a_served_at, b_arrived_at }
}

fn idling_case_next_request<P: StatsPolicy>() {
    let (sched, hand) = idle_sched::<P>(2 * MS);
    let s = idle_setup(&sched, &hand);
    let completed_at = s.sched.clock().now_ns();
    assert_eq!(
        s.sched.idle_deadline(),
        Some(completed_at + 2 * MS),
        "A idles after its completion"
    );
    assert!(s.sched.dispatch().is_none(), "the device is held for A");
    s.hand.advance(MS);
    assert!(!s.sched.run_idle_timer(), "the timer is not due yet");
    assert!(s.sched.dispatch().is_none(), "still held for A");
    // A's next request ends the wait and is served before B's.
    assert_eq!(
        s.a.insert(spec(1008 + 64, 8, Op::READ_SYNC, A_NEXT)),
        InsertOutcome::Queued { idle_timer_disabled: true }
    );
    assert_eq!(s.sched.idle_deadline(), None, "the idle timer is disabled");
    let rq = s.sched.dispatch().expect("A's next request");
    assert_eq!(rq.tag, A_NEXT);
    rq.complete();
    if P::KEPT == StatsKept::Full {
        let ga = s.sched.group_stats(s.ga).unwrap();
        assert_eq!(ga.idle_time, MS as i64, "idle interval: completion to A's next insert");
        assert_eq!(ga.dequeue, 0, "A never left the busy set");
    }
    // A idles again; this time the timer runs out and B gets the device.
    let deadline = s.sched.idle_deadline().expect("A idles again");
    s.hand.set(deadline);
    assert!(s.sched.run_idle_timer(), "the timer is due");
    assert_eq!(s.sched.idle_deadline(), None);
    let rq = s.sched.dispatch().expect("B's request");
    assert_eq!(rq.tag, B_TAG);
    rq.complete();
    drop((s.a, s.b));
}

fn idling_case_timer<P: StatsPolicy>() {
    let (sched, hand) = idle_sched::<P>(2 * MS);
    let s = idle_setup(&sched, &hand);
    let deadline = s.sched.idle_deadline().expect("A idles after its completion");
    assert_eq!(deadline, s.sched.clock().now_ns() + 2 * MS);
    s.hand.set(deadline - 1);
    assert!(s.sched.dispatch().is_none(), "held for A until the deadline");
    // Past the deadline, the next dispatch expires A (the timer fired) and serves B.
    s.hand.set(deadline);
    let rq = s.sched.dispatch().expect("B's request once the idle slice is over");
    assert_eq!(rq.tag, B_TAG);
    assert_eq!(s.sched.idle_deadline(), None);
    if P::KEPT == StatsKept::Full {
        let ga = s.sched.group_stats(s.ga).unwrap();
        assert_eq!(ga.dequeue, 1, "A expired empty (too idle)");
        assert_eq!(
            ga.time,
            (deadline - s.a_served_at) as i64,
            "A's slice: from service start to expiry"
        );
        let gb = s.sched.group_stats(s.gb).unwrap();
        assert_eq!(
            gb.group_wait_time,
            (deadline - s.b_arrived_at) as i64,
            "B's group waited for A's slice"
        );
    }
    rq.complete();
    drop((s.a, s.b));
}

#[test]
fn idling_holds_others_until_timer_or_next_request() {
    for_every_variant!(idling_case_next_request);
    for_every_variant!(idling_case_timer);
}

#[test]
fn no_idling_with_slice_idle_zero() {
    let (sched, hand) = idle_sched::<SchedLock>(0);
    let s = idle_setup(&sched, &hand);
    assert_eq!(s.sched.idle_deadline(), None, "no idle timer with slice_idle = 0");
    let rq = s.sched.dispatch().expect("B is served at once");
    assert_eq!(rq.tag, B_TAG);
    rq.complete();
    assert_eq!(s.sched.idle_deadline(), None);
    let ga = s.sched.group_stats(s.ga).unwrap();
    assert_eq!(ga.dequeue, 1, "A expired at its completion (no more requests)");
    assert_eq!(ga.idle_time, 0);
    // A's next request waits for nobody either.
    assert_eq!(
        s.a.insert(spec(2000, 8, Op::READ_SYNC, A_NEXT)),
        InsertOutcome::Queued { idle_timer_disabled: false }
    );
    let rq = s.sched.dispatch().expect("A's next request");
    assert_eq!(rq.tag, A_NEXT);
    rq.complete();
    assert!(s.sched.dispatch().is_none());
    assert!(s.sched.check_consistency().ok);
    drop((s.a, s.b));
}

// ---------------------------------------------------------------------------------------------
// 4. Group lifecycle.
// ---------------------------------------------------------------------------------------------

fn serviced(s: &StatsSnapshot) -> i64 {
    StatsSnapshot::total(&s.io_serviced)
}

fn group_lifecycle<P: StatsPolicy>() {
    let cfg = SchedConfig { slots: 4, slice_idle_ns: 2 * MS, ..SchedConfig::default() };
    let (sched, hand) = manual_sched::<P>(cfg);
    let census = sched.census();
    let name = P::NAME;
    let root = sched.root();
    assert_eq!((census.live_groups(), census.live_queues()), (1, 0), "{name}: the root only");

    assert_eq!(sched.create_group(root, 0), Err(SchedError::BadWeight(0)));
    assert_eq!(sched.create_group(root, 1001), Err(SchedError::BadWeight(1001)));
    let a = sched.create_group(root, 200).unwrap();
    let b = sched.create_group(root, 100).unwrap();
    let a1 = sched.create_group(a, 300).unwrap();
    let a2 = sched.create_group(a, 50).unwrap();
    assert_eq!(census.live_groups(), 5, "{name}");

    let pa = sched.spawn_process(a).unwrap();
    let pa1 = sched.spawn_process(a1).unwrap();
    let pa1b = sched.spawn_process(a1).unwrap();
    let pa2 = sched.spawn_process(a2).unwrap();
    let pb = sched.spawn_process(b).unwrap();
    assert_eq!(census.live_queues(), 5, "{name}");
    assert_eq!(sched.groups().iter().find(|g| g.id == a1).unwrap().queues, 2);

    // I/O from every process, some of it at the head.
    let mut tag = 0;
    for (i, p) in [&pa, &pa1, &pa1b, &pa2, &pb].into_iter().enumerate() {
        for k in 0..4u64 {
            tag += 1;
            let sector = (i as u64 + 1) * 1_000_000 + k * 64;
            let rq = if k == 3 {
                head(sector, 8, Op::WRITE_SYNC, tag)
            } else {
                spec(sector, 8, Op::READ_SYNC, tag)
            };
            assert!(matches!(p.insert(rq), InsertOutcome::Queued { .. }));
        }
    }
    // Dispatch until something of A1 has been dispatched and is still on the device.
    let mut in_flight = Vec::new();
    // (A1's processes have tags 5..=12; multiples of 4 went to the priority list.)
    while !in_flight
        .iter()
        .any(|rq: &Dispatched<'_, P>| (5..=12).contains(&rq.tag) && rq.tag % 4 != 0)
    {
        hand.advance(10 * US);
        match sched.dispatch() {
            Some(rq) => in_flight.push(rq),
            None => {
                // Held for an in-service queue waiting on its completions or idling.
                for rq in in_flight.drain(..) {
                    rq.complete();
                }
                hand.advance(3 * MS);
            }
        }
    }

    // Refused removals.
    assert_eq!(sched.remove_group(root), Err(SchedError::RootGroup));
    assert_eq!(sched.remove_group(a), Err(SchedError::HasChildren(a)));

    // A1 goes offline with requests queued and on the device: its queues and its statistics move
    // to A.
    let a_before = sched.group_stats(a).unwrap();
    let a1_before = sched.group_stats(a1).unwrap();
    if P::KEPT != StatsKept::None {
        assert!(serviced(&a1_before) > 0, "{name}: A1 has dispatched");
    }
    hand.advance(10 * US);
    sched.remove_group(a1).unwrap();
    assert_eq!(sched.group_stats(a1), Err(SchedError::NoSuchGroup(a1)));
    assert_eq!(sched.remove_group(a1), Err(SchedError::NoSuchGroup(a1)));
    assert_eq!(sched.create_group(a1, 100), Err(SchedError::NoSuchGroup(a1)));
    assert_eq!(sched.spawn_process(a1).err(), Some(SchedError::NoSuchGroup(a1)));
    assert_eq!(pa1.move_to(a1), Err(SchedError::NoSuchGroup(a1)));
    assert_eq!((pa1.group(), pa1b.group()), (a, a), "{name}: A1's queues moved to its parent");
    let a_after = sched.group_stats(a).unwrap();
    assert_eq!(
        serviced(&a_after),
        serviced(&a_before) + serviced(&a1_before),
        "{name}: io_serviced transferred"
    );
    assert_eq!(
        a_after.io_service_bytes,
        std::array::from_fn(|i| a_before.io_service_bytes[i] + a1_before.io_service_bytes[i])
    );
    if P::KEPT == StatsKept::Full {
        assert_eq!(
            StatsSnapshot::total(&a_after.queued),
            StatsSnapshot::total(&a_before.queued) + StatsSnapshot::total(&a1_before.queued),
            "{name}: queued transferred"
        );
        assert_eq!(
            a_after.avg_queue_size_samples,
            a_before.avg_queue_size_samples + a1_before.avg_queue_size_samples
        );
    }
    // A1 had no child and its queues left: freed (epoch: after the grace period).
    quiesce_until::<P>(|| census.live_groups() == 4);
    assert_eq!((census.live_groups(), census.live_queues()), (4, 5), "{name}: A1 freed");

    // B's process moves to A2 once its queue is empty (a move with requests queued leaves
    // `queued` drift: `moving_a_backlogged_process_keeps_queued_balanced`), then B, now empty, goes.
    let mut pending = true;
    while pending {
        hand.advance(10 * US);
        match sched.dispatch() {
            Some(rq) => in_flight.push(rq),
            None => {
                for rq in in_flight.drain(..) {
                    rq.complete();
                }
                hand.advance(3 * MS); // past any idle slice
                pending = sched.outstanding() != (0, 0);
            }
        }
    }
    for rq in in_flight.drain(..) {
        rq.complete();
    }
    pb.move_to(a2).unwrap();
    assert_eq!(pb.group(), a2);
    sched.remove_group(b).unwrap();
    quiesce_until::<P>(|| census.live_groups() == 3);
    assert_eq!(census.live_groups(), 3, "{name}: B freed");
    // A2 goes with its two processes inside, then A.
    sched.remove_group(a2).unwrap();
    assert_eq!((pa2.group(), pb.group()), (a, a));
    sched.remove_group(a).unwrap();
    assert_eq!((pa.group(), pa1.group(), pa2.group(), pb.group()), (root, root, root, root));
    quiesce_until::<P>(|| census.live_groups() == 1);
    assert_eq!(census.live_groups(), 1, "{name}: only the root is left");
    assert_eq!(sched.groups().len(), 1);

    // Everything dispatched ended up in the root's io_serviced.
    let c = sched.check_consistency();
    assert!(c.ok, "{name}: {c:?}");
    assert_eq!(c.counters.inserted, 20);
    assert_eq!(c.counters.completed, 20);
    let root_stats = sched.group_stats(root).unwrap();
    let expected_serviced = if P::KEPT == StatsKept::None { 0 } else { 20 };
    assert_eq!(serviced(&root_stats), expected_serviced, "{name}: root io_serviced");
    if P::KEPT != StatsKept::None {
        assert_eq!(c.io_serviced_sum, Some(20));
    }

    // One more request: its queue idles in service when the process exits, so the in-service
    // reference keeps it until the scheduler goes.
    assert!(matches!(pa.insert(spec(77, 8, Op::READ_SYNC, 99)), InsertOutcome::Queued { .. }));
    sched.dispatch().expect("pa's request").complete();
    assert!(sched.idle_deadline().is_some(), "{name}: pa's queue idles");
    drop(in_flight);
    drop((pa, pa1, pa1b, pa2, pb));
    assert_eq!(census.live_queues(), 1, "{name}: the idling queue is held by the in-service slot");
    drop(sched);
    quiesce_until::<P>(|| census.live_groups() == 0);
    assert_eq!((census.live_groups(), census.live_queues()), (0, 0), "{name}: everything freed");
}

#[test]
fn group_lifecycle_live_counts() {
    for_every_variant!(group_lifecycle, safe);
}

#[test]
fn dropping_the_scheduler_with_requests_queued_frees_everything() {
    fn run<P: StatsPolicy>() {
        let cfg = SchedConfig { slots: 2, slice_idle_ns: 2 * MS, ..SchedConfig::default() };
        let (sched, _hand) = manual_sched::<P>(cfg);
        let census = sched.census();
        let g = sched.create_group(sched.root(), 100).unwrap();
        let g2 = sched.create_group(g, 100).unwrap();
        let p = sched.spawn_process(g2).unwrap();
        let q = sched.spawn_process(g).unwrap();
        for t in 0..5 {
            p.insert(spec(t * 100, 8, Op::READ_SYNC, t));
            q.insert(head(t * 100, 8, Op::WRITE_ASYNC, 100 + t));
        }
        sched.dispatch().unwrap().complete();
        drop((p, q));
        assert_eq!(census.live_queues(), 2, "{}: queued requests hold their queues", P::NAME);
        drop(sched);
        quiesce_until::<P>(|| census.live_groups() == 0);
        assert_eq!((census.live_groups(), census.live_queues()), (0, 0), "{}", P::NAME);
    }
    for_every_variant!(run);
}

// ---------------------------------------------------------------------------------------------
// 5. Accounting completeness.
// ---------------------------------------------------------------------------------------------

fn queued_of<P: StatsPolicy>(sched: &Scheduler<P>, g: GroupId) -> i64 {
    StatsSnapshot::total(&sched.group_stats(g).unwrap().queued)
}

fn accounting_paths<P: StatsPolicy>() {
    let name = P::NAME;
    let cfg = SchedConfig { slots: 4, slice_idle_ns: 0, ..SchedConfig::default() };
    let (sched, hand) = manual_sched::<P>(cfg);
    let root = sched.root();
    let g = sched.create_group(root, 100).unwrap();
    let p1 = sched.spawn_process(g).unwrap();
    let p2 = sched.spawn_process(root).unwrap();
    // Only the full-stats variants keep `queued`; the others read 0 everywhere.
    let full = P::KEPT == StatsKept::Full;
    let queued = |id| if full { queued_of(&sched, id) } else { -1 };
    let q = |n: i64| if full { n } else { -1 };
    let rd = Op::READ_SYNC;

    // Normal insert.
    assert_eq!(
        p1.insert(spec(1000, 8, rd, 1)),
        InsertOutcome::Queued { idle_timer_disabled: false }
    );
    assert_eq!(queued(g), q(1), "{name}");
    // Insert merge (bio back merge): nothing added to queued.
    assert_eq!(p1.insert(spec(1008, 8, rd, 2)), InsertOutcome::Merged);
    assert_eq!(queued(g), q(1), "{name}");
    // A request after a gap, then the gap: bio merge, then request-request merge (the grown
    // request reaches the one after the gap, which leaves the scheduler).
    assert_eq!(
        p1.insert(spec(1024, 8, rd, 3)),
        InsertOutcome::Queued { idle_timer_disabled: false }
    );
    assert_eq!(queued(g), q(2), "{name}");
    assert_eq!(p1.insert(spec(1016, 8, rd, 4)), InsertOutcome::Merged);
    assert_eq!(queued(g), q(1), "{name}: the absorbed request was removed");
    assert_eq!(sched.counters().merged, 3);
    if full {
        let merged = sched.group_stats(g).unwrap().merged;
        assert_eq!(merged, [3, 0, 3, 0], "{name}: merged READ/WRITE/SYNC/ASYNC");
    }
    // A merge never crosses request types: a write at the end of the read is queued alone.
    assert!(matches!(p1.insert(spec(1032, 8, Op::WRITE_SYNC, 5)), InsertOutcome::Queued { .. }));
    // Priority list.
    assert!(matches!(p2.insert(head(50, 8, Op::WRITE_ASYNC, 6)), InsertOutcome::Queued { .. }));
    assert_eq!((queued(root), queued(g)), (q(1), q(2)), "{name}: at-head requests are accounted");

    // The priority list goes first, even before the queue that will be in service.
    hand.advance(10 * US);
    let rq = sched.dispatch().unwrap();
    assert_eq!((rq.tag, rq.sectors), (6, 8));
    assert_eq!(queued(root), q(0), "{name}");
    assert!(rq.complete().absorbed.is_empty());
    // Then p1's merged request: 32 sectors, carrying three absorbed tags.
    hand.advance(10 * US);
    let rq = sched.dispatch().unwrap();
    assert_eq!((rq.tag, rq.sector, rq.sectors), (1, 1000, 32));
    assert_eq!(queued(g), q(1), "{name}");
    // An at-head insert while p1's queue is in service still jumps the queue.
    assert!(matches!(p2.insert(head(60, 8, Op::READ_SYNC, 7)), InsertOutcome::Queued { .. }));
    let rq7 = sched.dispatch().unwrap();
    assert_eq!(rq7.tag, 7);
    hand.advance(10 * US);
    assert_eq!(rq.complete().absorbed, vec![2, 4, 3]);
    rq7.complete();
    let rq = sched.dispatch().unwrap();
    assert_eq!((rq.tag, rq.op), (5, Op::WRITE_SYNC));
    rq.complete();
    assert!(sched.dispatch().is_none());

    assert!(
        sched.quiesce_until_reclaimed(Duration::from_secs(10)),
        "{name}: grace periods never ended"
    );
    let c = sched.check_consistency();
    assert!(c.ok, "{name}: {c:?}");
    assert!(c.groups_with_queued.is_empty(), "{name}: {:?}", c.groups_with_queued);
    assert_eq!(
        c.counters,
        RequestCounters {
            inserted: 7,
            dispatched: 4,
            merged: 3,
            completed: 4,
            group_lookups: 7,
            ..RequestCounters::default()
        }
    );
    assert_eq!(c.counters.inserted, c.counters.completed + c.counters.merged);
    if P::KEPT != StatsKept::None && !P::LEGACY_IO_AT_SUBMIT {
        // Counted at dispatch, per request: the three merged into tag 1 are one 32-sector read.
        assert_eq!(c.io_serviced_sum, Some(4));
        let gs = sched.group_stats(g).unwrap();
        assert_eq!(
            gs.io_service_bytes,
            [32 * 512, 8 * 512, 40 * 512, 0],
            "{name}: bytes READ/WRITE/SYNC/ASYNC"
        );
        assert_eq!(gs.io_serviced, [1, 1, 2, 0]);
    }
    if P::LEGACY_IO_AT_SUBMIT {
        // Today's kernel (`mainline`) counts each submission, before any merge: seven inserts,
        // five of them p1's in `g` (four 8-sector reads, one 8-sector write).
        assert_eq!(c.io_serviced_sum, Some(7), "{name}");
        let gs = sched.group_stats(g).unwrap();
        assert_eq!(
            gs.io_service_bytes,
            [32 * 512, 8 * 512, 40 * 512, 0],
            "{name}: bytes READ/WRITE/SYNC/ASYNC"
        );
        assert_eq!(gs.io_serviced, [4, 1, 5, 0], "{name}");
    }
    if !full {
        // What a variant does not keep stays zero: its policy's route skips the debug kinds (a
        // lock-only kind routed to be deferred would be applied under the lock instead).
        for id in [root, g] {
            let s = sched.group_stats(id).unwrap();
            let rw = [s.queued, s.merged, s.service_time, s.wait_time].concat();
            let since = [s.start_group_wait_time, s.start_idle_time, s.start_empty_time];
            let scalars = [
                s.time,
                s.avg_queue_size_sum,
                s.avg_queue_size_samples,
                s.dequeue,
                s.group_wait_time,
                s.idle_time,
                s.empty_time,
            ];
            let kept_nothing = rw.iter().chain(&scalars).all(|&v| v == 0)
                && since.iter().all(|&v| v == 0)
                && s.flags == 0;
            assert!(kept_nothing, "{name}: debug statistics kept in {id}: {s:?}");
        }
    }
    drop((p1, p2));
}

#[test]
fn accounting_completeness_every_path_updates_queued() {
    for_every_variant!(accounting_paths);

    // The random workload (every path, idle timers, in-flight requests; no process moves).
    for r in [
        run_workload::<SchedLock>(WORKLOAD_SEED ^ 1, false),
        run_workload::<QueueLock>(WORKLOAD_SEED ^ 1, false),
        run_workload::<Unlocked>(WORKLOAD_SEED ^ 1, false),
        run_workload::<Epoch>(WORKLOAD_SEED ^ 1, false),
    ] {
        let c = &r.consistency;
        assert!(c.ok, "{}: {c:?}", r.variant);
        assert!(c.groups_with_queued.is_empty(), "{}: {:?}", r.variant, c.groups_with_queued);
        assert_eq!(c.counters.inserted, c.counters.completed + c.counters.merged, "{}", r.variant);
        assert!(r.groups.iter().all(|(_, s)| s.queued == [0; 4]), "{}: queued by type", r.variant);
    }
}

#[test]
/// A process that moves with requests queued takes its queue along but not their `queued`
/// accounting: the io_add was counted in the old group, the io_remove lands in the new one. The
/// kernel's `bfq_bfqq_move` behaves the same way (notes/kernel-map.md); the workload therefore
/// moves only idle processes. This pins the behaviour down so that a change to it is noticed.
fn moving_a_backlogged_process_leaves_queued_behind() {
    let (sched, _hand) =
        manual_sched::<SchedLock>(SchedConfig { slots: 2, ..SchedConfig::default() });
    let root = sched.root();
    let (g1, g2) = (sched.create_group(root, 100).unwrap(), sched.create_group(root, 100).unwrap());
    let p = sched.spawn_process(g1).unwrap();
    p.insert(spec(0, 8, Op::READ_SYNC, 1));
    p.insert(spec(100, 8, Op::READ_SYNC, 2));
    p.move_to(g2).unwrap();
    while let Some(rq) = sched.dispatch() {
        rq.complete();
    }
    let c = sched.check_consistency();
    assert_eq!((queued_of(&sched, g1), queued_of(&sched, g2)), (2, -2), "{c:?}");
    assert!(c.requests_balance && !c.ok, "{c:?}");
}

/// rstat keeps a group's io_serviced on per-CPU slots until a flush; removal moves only what was
/// flushed, and the rest reaches the parent when the group is released, after its grace period
/// (the 2023 release-path drain). Until then the sum over online groups is short by everything the
/// removed group did since the last read, and the check must say why instead of reporting a loss.
/// A pin held on this thread stands for a grace period delayed by any other thread of the process.
#[test]
fn rstat_residue_of_a_removed_group_arrives_at_its_release() {
    let (sched, _hand) = manual_sched::<Rstat>(SchedConfig { slots: 2, ..SchedConfig::default() });
    let census = sched.census();
    let root = sched.root();
    let g = sched.create_group(root, 100).unwrap();
    let p = sched.spawn_process(g).unwrap();
    for k in 0..8u64 {
        p.insert(spec(k * 1000, 8, Op::READ_SYNC, k));
    }
    while let Some(rq) = sched.dispatch() {
        rq.complete();
    }
    drop(p);
    let delayed = crossbeam_epoch::pin();
    sched.remove_group(g).unwrap();
    let c = sched.check_consistency();
    assert_eq!(c.awaiting_reclamation, 1, "{c:?}");
    assert!(!c.ok, "a check with a group awaiting its release is incomplete: {c:?}");
    assert_eq!(
        c.io_serviced_sum,
        Some(0),
        "nothing read before the removal, so nothing flushed: {c:?}"
    );
    drop(delayed);
    assert!(sched.quiesce_until_reclaimed(Duration::from_secs(2)), "grace period never ended");
    let c = sched.check_consistency();
    assert!(c.ok, "{c:?}");
    assert_eq!((c.awaiting_reclamation, c.io_serviced_sum), (0, Some(8)), "{c:?}");
    assert_eq!(census.awaiting_reclamation(), 0);
}

// ---- Scheduling decisions of the paths that also decide lifetimes ----
//
// `new_queue`, `set_in_service`, `expire`, `alloc_request` and `create_group` take and drop
// references (the models check those) and also compute a budget, a deadline or a depth, which no
// lifetime model states. These pin the BFQ behaviour down (and are the last stage of the mutation
// command, scripts/mutants.sh).

/// Tags of process `p`'s requests: `p * 1000 + k`.
fn owner(tag: u64) -> u64 {
    tag / 1000
}

/// Dispatches until nothing is left, completing each request at once and advancing the clock by
/// `step_ns` before each dispatch; returns the run lengths: (process, consecutive dispatches).
fn dispatch_runs<P: StatsPolicy>(
    sched: &Scheduler<P>,
    hand: &ManualClock,
    step_ns: u64,
) -> Vec<(u64, usize)> {
    let mut runs: Vec<(u64, usize)> = Vec::new();
    loop {
        hand.advance(step_ns);
        let Some(rq) = sched.dispatch() else { break };
        let who = owner(rq.tag);
        match runs.last_mut() {
            Some((last, n)) if *last == who => *n += 1,
            _ => runs.push((who, 1)),
        }
        rq.complete();
    }
    assert_eq!(sched.outstanding(), (0, 0));
    runs
}

/// Two equal processes of one group, each with `n` requests of 8 sectors queued.
fn two_backlogged<'s, P: StatsPolicy>(sched: &'s Scheduler<P>, n: u64) -> [Process<'s, P>; 2] {
    let procs =
        [sched.spawn_process(sched.root()).unwrap(), sched.spawn_process(sched.root()).unwrap()];
    for (i, p) in procs.iter().enumerate() {
        let who = i as u64 + 1;
        for k in 0..n {
            // Far apart: no merges.
            p.insert(spec((who << 30) + k * 64, 8, Op::READ_SYNC, who * 1000 + k));
        }
    }
    procs
}

/// The first run lengths (requests of 8 sectors) of two equal backlogged processes, each with `n`
/// requests, under a maximum budget of `max_budget` sectors; and the total dispatched.
fn first_runs(max_budget: u64, n: u64) -> (Vec<(u64, usize)>, usize) {
    let cfg = SchedConfig { slots: 2, max_budget, ..SchedConfig::default() };
    let (sched, hand) = manual_sched::<SchedLock>(cfg);
    let procs = two_backlogged(&sched, n);
    let runs = dispatch_runs(&sched, &hand, 10 * US);
    drop(procs);
    let total = runs.iter().map(|&(_, n)| n).sum();
    (runs, total)
}

/// A new queue's first budget is 2/3 of the maximum (`bfq_init_bfqq` → `bfq_default_budget`
/// before any feedback); a queue that used its whole budget gets twice as much next time
/// (`__bfq_bfqq_recalc_budget`, BUDGET_EXHAUSTED), up to the maximum (4/3 of the maximum: the
/// first doubling always reaches the cap).
#[test]
fn first_budget_is_two_thirds_of_the_maximum_and_doubles_when_used_up() {
    let lengths = |runs: &[(u64, usize)]| runs.iter().map(|&(_, n)| n).collect::<Vec<_>>();
    // 96 sectors: a first slice of 64 (8 requests of 8), then 96 (12) = min(128, 96).
    let (runs, total) = first_runs(96, 40);
    assert_eq!(&lengths(&runs)[..4], &[8, 8, 12, 12], "runs (process, requests): {runs:?}");
    assert_eq!(total, 80);
    // 192 sectors: 128 (16 requests), then 192 (24) = min(256, 192).
    let (runs, _) = first_runs(192, 60);
    assert_eq!(&lengths(&runs)[..4], &[16, 16, 24, 24], "runs (process, requests): {runs:?}");
}

/// A queue stays in service at most `timeout_ns` (`bfq_timeout`, checked as BUDGET_TIMEOUT when
/// the next request is selected), however much budget it has left.
#[test]
fn a_queue_leaves_service_when_its_budget_timeout_passes() {
    // A first budget of ~10900 sectors: only the 10 ms timeout can end a slice of 8-sector
    // requests dispatched 1 ms apart.
    let cfg = SchedConfig { slots: 2, timeout_ns: 10 * MS, ..SchedConfig::default() };
    let (sched, hand) = manual_sched::<SchedLock>(cfg);
    let procs = two_backlogged(&sched, 25);
    let runs = dispatch_runs(&sched, &hand, MS);
    // Dispatched at t0, t0 + 1 ms, ..., t0 + 9 ms; at t0 + 10 ms the slice is over.
    assert_eq!(runs[..3].iter().map(|&(_, n)| n).collect::<Vec<_>>(), [10, 10, 10], "{runs:?}");
    assert_ne!(runs[0].0, runs[1].0, "the other queue takes over: {runs:?}");
    drop(procs);
}

/// A request waits in sector order until its FIFO deadline (`bfq_fifo_expire`) passes; then it is
/// served next (`bfq_check_fifo`), ahead of the sector order.
#[test]
fn a_request_past_its_fifo_deadline_is_served_before_the_sector_order() {
    for expired in [false, true] {
        let cfg = SchedConfig { slots: 2, fifo_expire_sync_ns: 5 * MS, ..SchedConfig::default() };
        let (sched, hand) = manual_sched::<SchedLock>(cfg);
        let p = sched.spawn_process(sched.root()).unwrap();
        // The oldest request is the farthest one; the others come 1 ms later, nearer the head.
        p.insert(spec(1 << 30, 8, Op::READ_SYNC, 1));
        hand.advance(MS);
        for k in 0..3u64 {
            p.insert(spec(k * 64, 8, Op::READ_SYNC, 10 + k));
        }
        // 4.5 ms after the first insert: no deadline has passed; 5 ms: the first one's has.
        hand.advance(if expired { 4 * MS } else { 3 * MS + MS / 2 });
        let first = sched.dispatch().expect("a request");
        assert_eq!(first.tag, if expired { 1 } else { 10 }, "expired: {expired}");
        first.complete();
        while let Some(rq) = sched.dispatch() {
            rq.complete();
        }
        drop(p);
    }
}

/// `groups()` reports each group's depth below the root (the teardown frees deepest first).
#[test]
fn group_depth_counts_the_levels_below_the_root() {
    let (sched, _hand) =
        manual_sched::<SchedLock>(SchedConfig { slots: 2, ..SchedConfig::default() });
    let root = sched.root();
    let a = sched.create_group(root, 100).unwrap();
    let a1 = sched.create_group(a, 100).unwrap();
    let a11 = sched.create_group(a1, 100).unwrap();
    let depth = |id| sched.groups().into_iter().find(|g| g.id == id).unwrap().depth;
    assert_eq!([depth(root), depth(a), depth(a1), depth(a11)], [0, 1, 2, 3]);
}

/// `bfq_bio_merge`: a bio that ends where a queued request starts joins it in front, one that
/// starts where a queued request ends joins it at the back; both complete with the request they
/// joined and count as merges charged to the issuing group (I2, I7 hold); a bio next to nothing
/// makes no merge. The depth limit: a queue whose group is at its share of the device's requests
/// is over the limit, the same queue with room is not, and an idle queue is never looked at.
fn bio_merge_and_depth_limit<P: StatsPolicy>() {
    let name = P::NAME;
    let cfg = SchedConfig { slots: 2, nr_requests: 8, ..SchedConfig::default() };
    let (sched, _hand) = manual_sched::<P>(cfg);
    let g = sched.create_group(sched.root(), 100).unwrap();
    let other = sched.create_group(sched.root(), 300).unwrap();
    let p = sched.spawn_process(g).unwrap();
    let q = sched.spawn_process(other).unwrap();
    assert!(!p.limit_depth(), "{name}: an idle queue is not over any limit");
    assert!(matches!(p.insert(spec(1000, 8, Op::READ_SYNC, 1)), InsertOutcome::Queued { .. }));
    assert!(p.bio_merge(spec(992, 8, Op::READ_SYNC, 2)), "{name}: front merge");
    assert!(p.bio_merge(spec(1008, 8, Op::READ_SYNC, 3)), "{name}: back merge");
    assert!(!p.bio_merge(spec(5000, 8, Op::READ_SYNC, 4)), "{name}: nothing adjacent");
    assert!(!p.bio_merge(spec(1016, 8, Op::WRITE_SYNC, 5)), "{name}: a write never joins a read");
    let c = sched.counters();
    assert_eq!((c.bio_merged, c.merged, c.inserted), (2, 2, 3), "{name}: {c:?}");
    // Weights 100 and 300 at the root: g's share of 8 requests is 2. It has 1 allocated.
    assert!(q
        .insert(spec(90_000, 8, Op::READ_SYNC, 6))
        .eq(&InsertOutcome::Queued { idle_timer_disabled: false }));
    assert!(!p.limit_depth(), "{name}: one request of a share of two");
    p.insert(spec(50_000, 8, Op::READ_SYNC, 7));
    assert!(p.limit_depth(), "{name}: two requests of a share of two");
    assert!(!q.limit_depth(), "{name}: the heavier group has room (1 of 6)");
    assert_eq!(sched.counters().over_limit, 1);
    let mut absorbed = Vec::new();
    while let Some(rq) = sched.dispatch() {
        if rq.tag == 1 {
            assert_eq!((rq.sector, rq.sectors), (992, 24), "{name}: the merged request");
        }
        let done = rq.complete();
        absorbed.extend(done.absorbed);
    }
    absorbed.sort_unstable();
    assert_eq!(absorbed, vec![2, 3], "{name}");
    assert!(!p.limit_depth(), "{name}: idle again");
    drop((p, q));
    assert!(
        sched.quiesce_until_reclaimed(Duration::from_secs(10)),
        "{name}: grace periods never ended"
    );
    let c = sched.check_consistency();
    assert!(c.ok, "{name}: {c:?}");
    assert_eq!(c.counters.inserted, c.counters.completed + c.counters.merged, "{name}");
}

#[test]
fn bio_merge_and_depth_limit_on_every_variant() {
    for_every_variant!(bio_merge_and_depth_limit);
}

/// What the bio merge and the merge after it refuse, at their edges: a flush or priority bio
/// (`at_head`) never merges; a bio that ends short of the next request does not join it in
/// front; a merge up to `max_merge_sectors` is made, one past it is not (in front, and for the
/// request a back merge grows into, `attempt_back_merge`); a grown request does not absorb a
/// write. Each request is then dispatched with exactly the sectors and tags it took.
fn bio_merge_edges<P: StatsPolicy>() {
    let name = P::NAME;
    let cfg = SchedConfig { slots: 2, max_merge_sectors: 256, ..SchedConfig::default() };
    let (sched, _hand) = manual_sched::<P>(cfg);
    let g = sched.create_group(sched.root(), 100).unwrap();
    let p = sched.spawn_process(g).unwrap();
    let read = |sector, sectors, tag| spec(sector, sectors, Op::READ_SYNC, tag);
    let queued = |outcome| matches!(outcome, InsertOutcome::Queued { .. });
    assert!(queued(p.insert(read(1000, 8, 1))), "{name}");
    let flush = RequestSpec { at_head: true, ..read(1008, 8, 101) };
    assert!(!p.bio_merge(flush), "{name}: an at-head bio never merges");
    assert!(!p.bio_merge(read(900, 8, 102)), "{name}: a bio ending short of 1000");
    // In front: up to the limit, not past it.
    assert!(queued(p.insert(read(5000, 240, 2))), "{name}");
    assert!(p.bio_merge(read(4984, 16, 103)), "{name}: 240 + 16 is the limit");
    assert!(!p.bio_merge(read(4976, 8, 104)), "{name}: 256 + 8 is past it");
    // At the back, then the grown request meets the next one: a write it does not take.
    assert!(queued(p.insert(read(10_000, 8, 3))), "{name}");
    assert!(queued(p.insert(spec(10_016, 8, Op::WRITE_SYNC, 4))), "{name}");
    assert!(p.bio_merge(read(10_008, 8, 105)), "{name}");
    // A read it takes up to the limit, and one past the limit it does not.
    assert!(queued(p.insert(read(20_000, 8, 5))), "{name}");
    assert!(queued(p.insert(read(20_016, 240, 6))), "{name}");
    assert!(p.bio_merge(read(20_008, 8, 106)), "{name}");
    assert!(queued(p.insert(read(30_000, 8, 7))), "{name}");
    assert!(queued(p.insert(read(30_016, 248, 8))), "{name}");
    assert!(p.bio_merge(read(30_008, 8, 107)), "{name}");
    let mut dispatched = Vec::new();
    while let Some(rq) = sched.dispatch() {
        let (tag, sector, sectors) = (rq.tag, rq.sector, rq.sectors);
        let mut absorbed = rq.complete().absorbed;
        absorbed.sort_unstable();
        dispatched.push((tag, sector, sectors, absorbed));
    }
    dispatched.sort_unstable();
    let expected = [
        (1, 1000, 8, vec![]),
        (2, 4984, 256, vec![103]),
        (3, 10_000, 16, vec![105]),
        (4, 10_016, 8, vec![]),
        (5, 20_000, 256, vec![6, 106]),
        (7, 30_000, 16, vec![107]),
        (8, 30_016, 248, vec![]),
    ];
    assert_eq!(dispatched, expected, "{name}");
    drop(p);
    assert!(
        sched.quiesce_until_reclaimed(Duration::from_secs(10)),
        "{name}: grace periods never ended"
    );
    let c = sched.check_consistency();
    assert!(c.ok, "{name}: {c:?}");
}

#[test]
fn bio_merge_edges_on_every_variant() {
    for_every_variant!(bio_merge_edges);
}

/// `mainline` counts io_serviced when a request is submitted (before the scheduler lock, as
/// 5.x-6.18 do), `rstat` when it is dispatched; both keep the same totals at the end, and the
/// I7 ledger agrees with each.
#[test]
fn mainline_counts_at_submission_rstat_at_dispatch() {
    fn counted_before_dispatch<P: StatsPolicy>() -> (i64, i64) {
        let (sched, _hand) = manual_sched::<P>(SchedConfig { slots: 2, ..SchedConfig::default() });
        let g = sched.create_group(sched.root(), 100).unwrap();
        let p = sched.spawn_process(g).unwrap();
        p.insert(spec(1000, 8, Op::READ_SYNC, 1));
        p.insert(spec(1008, 8, Op::READ_SYNC, 2)); // merged at insert: a request all the same
        let before = serviced(&sched.group_stats(g).unwrap());
        while let Some(rq) = sched.dispatch() {
            rq.complete();
        }
        let after = serviced(&sched.group_stats(g).unwrap());
        drop(p);
        assert!(sched.quiesce_until_reclaimed(Duration::from_secs(10)));
        let c = sched.check_consistency();
        assert!(c.ok, "{}: {c:?}", P::NAME);
        (before, after)
    }
    assert_eq!(counted_before_dispatch::<schedlab_variants::mainline::Mainline>(), (2, 2));
    assert_eq!(counted_before_dispatch::<Rstat>(), (0, 1));
}
