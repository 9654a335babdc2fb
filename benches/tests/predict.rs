//! The prediction's simulation checked against what can be computed by hand: determinism, one
//! job's cycle, a saturated lock's throughput, the cost of a hand-off, FIFO against barging,
//! scaling until saturation; and the calibration's files and the topology's profiles. No test
//! here measures time or depends on a race: the simulation runs in virtual time.

use schedlab_benches::model::calibrate::{Calibration, CallModel, OneHold, Segment};
use schedlab_benches::model::harness::Call;
use schedlab_benches::model::sim::{simulate, Program, SimConfig};
use schedlab_benches::model::topology::{Interruptions, Topology};
use schedlab_core::LockKind;

fn free(ns: f64) -> Segment {
    Segment { lock: None, ns, lines: 0.0, probability: 1.0 }
}

fn call(call: Call, segments: Vec<Segment>) -> CallModel {
    CallModel { call, total_ns: segments.iter().map(|s| s.ns).sum(), cv: 0.0, segments }
}

/// A variant whose only lock is held `s` ns per request (in the dispatch, pulling `lines` lines
/// when it changed CPUs), with `z` ns of work outside it (in the insert), nothing else.
fn one_lock(kind: LockKind, s: f64, lines: f64, z: f64) -> Calibration {
    Calibration::one_lock(kind, OneHold { ns: s, lines, empty_ns: 0.0 }, z)
}

/// A machine of `cores` cores, no SMT, `transfer` ns per line, and a `sched_yield` that takes no
/// time (so that a ticket waiter's yields never delay a hand-off: the textbook FIFO lock).
fn machine(cores: usize, transfer: f64) -> Topology {
    Topology::textbook(cores, transfer)
}

fn kiops(cal: &Calibration, topo: &Topology, threads: usize, seed: u64) -> f64 {
    let prog = Program::new(cal, threads, 0.0).unwrap();
    simulate(&prog, topo, &SimConfig::new(threads, seed)).unwrap().kiops
}

fn close(a: f64, b: f64, rel: f64) -> bool {
    (a - b).abs() <= rel * b.abs()
}

#[test]
fn same_inputs_and_seed_give_the_same_result() {
    for kind in [LockKind::FairSpin, LockKind::ParkingLot] {
        let cal = one_lock(kind, 200.0, 3.0, 300.0);
        let topo = machine(4, 40.0);
        let prog = Program::new(&cal, 4, 500.0).unwrap();
        let a = simulate(&prog, &topo, &SimConfig::new(4, 7)).unwrap();
        let b = simulate(&prog, &topo, &SimConfig::new(4, 7)).unwrap();
        assert_eq!(a, b, "{kind:?}");
    }
}

#[test]
fn one_job_runs_its_cycle_back_to_back() {
    // 200 ns held + 300 ns outside: 2000 KIOPS, whatever the lock kind or the transfer.
    for kind in [LockKind::FairSpin, LockKind::ParkingLot] {
        let x = kiops(&one_lock(kind, 200.0, 5.0, 300.0), &machine(4, 50.0), 1, 1);
        assert!(close(x, 2000.0, 0.001), "{kind:?}: {x}");
    }
}

#[test]
fn interruptions_lengthen_a_lone_jobs_cycle_by_the_time_they_take() {
    // 100 000 interruptions a second of 1 µs each: a CPU that always runs loses 0.1 s of every
    // second of work, so the cycle of 500 ns takes 550 on average: 2000 KIOPS become 1818.
    for kind in [LockKind::FairSpin, LockKind::ParkingLot] {
        let cal = one_lock(kind, 200.0, 5.0, 300.0);
        let mut topo = machine(4, 50.0);
        topo.interruptions =
            Some(Interruptions { rate_per_s: 100_000.0, durations_ns: vec![500.0, 1500.0] });
        let x = kiops(&cal, &topo, 1, 1);
        assert!(close(x, 2000.0 / 1.1, 0.02), "{kind:?}: {x}");
        // None at all, or a rate of 0: the cycle as before.
        topo.interruptions = Some(Interruptions { rate_per_s: 0.0, durations_ns: vec![] });
        assert!(close(kiops(&cal, &topo, 1, 1), 2000.0, 0.001), "{kind:?}");
    }
}

#[test]
fn a_fifo_lock_handed_to_an_interrupted_waiter_waits_for_it() {
    // Two jobs saturate a FIFO lock held 250 ns per request (nothing outside, no transfers):
    // 4000 KIOPS. Interruptions of 1 µs, 100 000 a second: each hold runs 10 % of its time
    // longer (250 / 0.9 = 277.8 ns). A waiter waits one hold, 250 ns 97.5 % of the time; an
    // interruption begins within the wait with the chance 1e-4 a ns and is still running at the
    // hand-off (it is longer than the wait), for 1000 − (w − s) ns after beginning at s: a stall
    // of 1e-4 × (1000 w − w² / 2) = 21.9 ns at w = 250, at most 50 when the hold before was
    // interrupted (w over 1000): about 23 ns. 1e6 / (277.8 + 23) = 3325 KIOPS. (Before
    // 2026-12-05 the chance was that of being interrupted at any instant, 0.1 / 1.1, for 500 ns:
    // 45.5 ns per hand-off, 3120 KIOPS.)
    let cal = one_lock(LockKind::FairSpin, 250.0, 0.0, 0.0);
    let mut topo = machine(2, 0.0);
    assert!(close(kiops(&cal, &topo, 2, 1), 4000.0, 0.02));
    topo.interruptions = Some(Interruptions { rate_per_s: 100_000.0, durations_ns: vec![1000.0] });
    let x = kiops(&cal, &topo, 2, 1);
    assert!(close(x, 1e6 / 300.8, 0.02), "{x} KIOPS");
}

#[test]
fn a_saturated_fifo_lock_serves_one_request_per_hold() {
    // No transfers: the lock is the bottleneck from S + Z over S jobs on, at 1 / S.
    let cal = one_lock(LockKind::FairSpin, 250.0, 0.0, 250.0);
    let topo = machine(8, 0.0);
    let x1 = kiops(&cal, &topo, 1, 1);
    assert!(close(x1, 2000.0, 0.001), "{x1}");
    for n in [2, 4, 8] {
        let x = kiops(&cal, &topo, n, 1);
        assert!(close(x, 4000.0, 0.02), "{n} jobs: {x} KIOPS, the lock allows 4000");
    }
}

#[test]
fn below_saturation_throughput_grows_with_jobs() {
    // 100 ns held, 900 outside: up to 10 jobs before the lock saturates.
    let cal = one_lock(LockKind::FairSpin, 100.0, 0.0, 900.0);
    let topo = machine(16, 0.0);
    let mut last = 0.0;
    for n in [1, 2, 4, 8, 16] {
        let x = kiops(&cal, &topo, n, 3);
        // Never more than n jobs' worth or the lock's 10 000.
        assert!(x <= (n as f64 * 1000.0).min(10_000.0) * 1.001, "{n}: {x}");
        assert!(x >= last * 0.999, "{n} jobs: {x} < {last} with fewer");
        last = x;
    }
    assert!(close(kiops(&cal, &topo, 2, 3), 2000.0, 0.02));
    assert!(close(kiops(&cal, &topo, 16, 3), 10_000.0, 0.03));
}

#[test]
fn every_fifo_hand_off_pays_the_lock_line_and_the_data_lines() {
    // Saturated, every acquisition by the other CPU: hold + (lines + 1 lock line) × transfer.
    let (s, lines, t) = (200.0, 4.0, 50.0);
    let cal = one_lock(LockKind::FairSpin, s, lines, 0.0);
    let x = kiops(&cal, &machine(2, t), 2, 1);
    let expected = 1e6 / (s + (lines + 1.0) * t);
    assert!(close(x, expected, 0.05), "{x} KIOPS, expected about {expected:.0}");
    // On one CPU nothing moves.
    assert!(close(kiops(&cal, &machine(2, t), 1, 1), 1e6 / s, 0.001));
}

#[test]
fn barging_keeps_the_lock_on_one_cpu_and_fifo_shares_it() {
    // Holds back to back with a short gap: FIFO hands every acquisition over (and pays the
    // lines); parking_lot's holder re-takes it before a waiter's compare-and-swap lands.
    let cal_f = one_lock(LockKind::FairSpin, 200.0, 6.0, 20.0);
    let cal_p = one_lock(LockKind::ParkingLot, 200.0, 6.0, 20.0);
    let topo = machine(2, 60.0);
    let pf = Program::new(&cal_f, 2, 0.0).unwrap();
    let pp = Program::new(&cal_p, 2, 0.0).unwrap();
    let f = simulate(&pf, &topo, &SimConfig::new(2, 1)).unwrap();
    let p = simulate(&pp, &topo, &SimConfig::new(2, 1)).unwrap();
    assert!(p.kiops > f.kiops * 1.3, "barging {} vs FIFO {}", p.kiops, f.kiops);
    // FIFO: both jobs get about the same; barging: one job gets most.
    assert!(
        f.per_thread_min > 0.8 * f.per_thread_max,
        "FIFO {} / {}",
        f.per_thread_min,
        f.per_thread_max
    );
    assert!(
        p.per_thread_min < 0.5 * p.per_thread_max,
        "barging {} / {}",
        p.per_thread_min,
        p.per_thread_max
    );
    assert!(
        f.breakdown.handoff_ns > 5.0 * p.breakdown.handoff_ns.max(1.0)
            || p.breakdown.handoff_ns > 0.0
    );
}

#[test]
fn the_breakdown_adds_up_to_the_cycle() {
    let cal = one_lock(LockKind::FairSpin, 200.0, 3.0, 300.0);
    for n in [1, 2, 4] {
        let prog = Program::new(&cal, n, 200.0).unwrap();
        let r = simulate(&prog, &machine(4, 40.0), &SimConfig::new(n, 5)).unwrap();
        // Per request per job, the four parts are the jobs' time: n ÷ throughput.
        let cycle = n as f64 / r.kiops * 1e6;
        assert!(close(r.breakdown.total(), cycle, 0.03), "{n}: {} vs {cycle}", r.breakdown.total());
    }
}

#[test]
fn a_ticket_waiter_inside_its_yield_sees_the_hand_off_late() {
    // The ticket waiter yields after 64 polls: a hand-off landing in a yield waits for its end,
    // so with long waits (8 jobs on a saturated lock) the lock idles and throughput drops.
    let cal = one_lock(LockKind::FairSpin, 250.0, 0.0, 250.0);
    let mut slow = machine(8, 0.0);
    slow.parking.yield_ns = 2000.0;
    let fast = kiops(&cal, &machine(8, 0.0), 8, 1);
    let yielding = kiops(&cal, &slow, 8, 1);
    assert!(yielding < 0.9 * fast, "{yielding} vs {fast}");
}

#[test]
fn more_jobs_than_cpus_is_refused_with_one_line() {
    let cal = one_lock(LockKind::FairSpin, 100.0, 0.0, 100.0);
    let prog = Program::new(&cal, 3, 0.0).unwrap();
    let e = simulate(&prog, &machine(2, 0.0), &SimConfig::new(3, 1)).unwrap_err().message;
    assert!(e.contains("3 threads") && e.contains("2 logical CPUs") && !e.contains('\n'), "{e}");
}

#[test]
fn hyperthread_siblings_slow_each_other() {
    // 4 cores × 2: the 5th job shares a core with the 1st; with a long outside part (no lock
    // contention) the throughput per job drops by the slowdown when siblings are busy.
    let cal = one_lock(LockKind::FairSpin, 10.0, 0.0, 990.0);
    let mut topo = machine(4, 0.0);
    topo.threads_per_core = 2;
    topo.smt.busy_slowdown = 1.6;
    let prog = Program::new(&cal, 8, 0.0).unwrap();
    let cfg = SimConfig { outside_is_work: true, ..SimConfig::new(8, 1) };
    let eight = simulate(&prog, &topo, &cfg).unwrap().kiops;
    let four = kiops(&cal, &topo, 4, 1);
    // Four jobs on four cores: 4000; eight on four cores × 2: 8 × 1000 / 1.6 = 5000.
    assert!(close(four, 4000.0, 0.02), "{four}");
    assert!(close(eight, 5000.0, 0.05), "{eight}");
}

#[test]
fn the_seeds_profile_is_a_valid_topology() {
    let path =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../notes/topology/i7-4850hq.json");
    let t = Topology::load(&path).unwrap();
    assert_eq!((t.cores, t.threads_per_core, t.cpus()), (4, 2, 8));
    assert!(!t.source.is_empty(), "every figure of the seeds' profile says where it comes from");
}

#[test]
fn a_calibration_file_round_trips_and_a_bad_one_is_refused() {
    use schedlab_benches::model::CalibrationSet;
    let dir = tempfile::tempdir().unwrap();
    let set = CalibrationSet {
        provenance: serde_json::json!({}),
        machine: machine(2, 50.0),
        workload: serde_json::json!({}),
        calibrations: vec![one_lock(LockKind::FairSpin, 100.0, 1.0, 50.0)],
    };
    let path = dir.path().join("c.json");
    std::fs::write(&path, serde_json::to_string(&set).unwrap()).unwrap();
    let back = CalibrationSet::load(&path).unwrap();
    assert_eq!(back.calibrations, set.calibrations);
    std::fs::write(&path, "{\"not\": 1}").unwrap();
    let e = CalibrationSet::load(&path).unwrap_err().message;
    assert!(e.contains("not a schedlab calibration") && !e.contains('\n'), "{e}");
    let mut bad = set.clone();
    bad.calibrations[0].pair[1].segments[0].ns = -1.0;
    std::fs::write(&path, serde_json::to_string(&bad).unwrap()).unwrap();
    assert!(CalibrationSet::load(&path).unwrap_err().message.contains("negative"));
    // Every figure 0 ns: each is physics on its own, but a request that takes no time could never
    // be simulated to the end of a window (it used to be accepted and simulate for ever).
    let mut degenerate = set.clone();
    for c in &mut degenerate.calibrations {
        c.loop_ns = 0.0;
        c.solo.iter_mut().chain(&mut c.pair).flat_map(|m| &mut m.segments).for_each(|s| s.ns = 0.0);
    }
    std::fs::write(&path, serde_json::to_string(&degenerate).unwrap()).unwrap();
    let e = CalibrationSet::load(&path).unwrap_err().message;
    assert!(e.contains("every request takes time") && !e.contains('\n'), "{e}");
    // The one-process figures fine, the two-process ones all zero (issue 33): refused at load,
    // not simulated to the event bound.
    let mut pair_zero = set.clone();
    pair_zero.calibrations[0]
        .pair
        .iter_mut()
        .flat_map(|m| &mut m.segments)
        .for_each(|s| s.ns = 0.0);
    std::fs::write(&path, serde_json::to_string(&pair_zero).unwrap()).unwrap();
    let e = CalibrationSet::load(&path).unwrap_err().message;
    assert!(e.contains("two-process figures that are all zero") && !e.contains('\n'), "{e}");
    // Every other degenerate model input is refused at load too, each in one line (issue 33):
    // no calibration at all, a figure that is not a time (JSON has no NaN: a negative one), a call the simulation needs missing, a
    // dispatch that takes no lock (the simulation decides under it).
    let mut cases: Vec<(CalibrationSet, &str)> = Vec::new();
    let mut empty = set.clone();
    empty.calibrations.clear();
    cases.push((empty, "holds no calibration"));
    let mut transfer = set.clone();
    transfer.calibrations[0].transfer_ns = -5.0;
    cases.push((transfer, "negative"));
    let mut cv = set.clone();
    cv.calibrations[0].solo[0].cv = -1.0;
    cases.push((cv, "negative"));
    let mut no_insert = set.clone();
    no_insert.calibrations[0].solo.retain(|m| m.call.name() != "insert");
    cases.push((no_insert, "no one-process insert call"));
    let mut unlocked = set.clone();
    for m in unlocked.calibrations[0].solo.iter_mut().filter(|m| m.call.name() == "dispatch") {
        m.segments.iter_mut().for_each(|s| s.lock = None);
    }
    cases.push((unlocked, "takes no lock"));
    for (bad, said) in cases {
        std::fs::write(&path, serde_json::to_string(&bad).unwrap()).unwrap();
        let e = CalibrationSet::load(&path).unwrap_err().message;
        assert!(e.contains(said) && !e.contains('\n'), "{said}: {e}");
    }
}

#[test]
fn a_simulation_gives_way_to_the_stop_flag() {
    use schedlab_benches::model::sim::{simulate_until, STOPPED};
    let topo = machine(2, 50.0);
    let prog = Program::new(&one_lock(LockKind::FairSpin, 100.0, 1.0, 50.0), 2, 0.0).unwrap();
    // The flag already set: the simulation stops at its first look (no timing assumed).
    let stop = schedlab_core::sync::AtomicBool::new(true);
    assert_eq!(
        simulate_until(&prog, &topo, &SimConfig::new(2, 1), &stop).unwrap_err().message,
        STOPPED
    );
}

#[test]
fn a_simulation_past_its_own_bound_is_an_error_not_an_endless_run() {
    let topo = machine(2, 50.0);
    let prog = Program::new(&one_lock(LockKind::FairSpin, 100.0, 1.0, 50.0), 2, 0.0).unwrap();
    let cfg = SimConfig { max_events: 10_000, ..SimConfig::new(2, 1) };
    let e = simulate(&prog, &topo, &cfg).unwrap_err().message;
    assert!(e.contains("10000 events") && !e.contains('\n'), "{e}");
    // The same model within the default bound ends.
    assert!(simulate(&prog, &topo, &SimConfig::new(2, 1)).is_ok());
}

/// With completion contexts one job's request completes in the next CPU's context (a thread of
/// its own: that CPU has no job) while the job, finding nothing to dispatch, sleeps until its
/// credit wakes it: its cycle is insert + dispatch + completion + the wake-up latency.
#[test]
fn a_lone_jobs_completion_runs_in_the_next_cpus_context_and_wakes_it() {
    use schedlab_benches::driver::completion::CompletionMode;
    let mut cal = one_lock(LockKind::FairSpin, 200.0, 5.0, 300.0);
    for set in [&mut cal.solo, &mut cal.pair] {
        set.retain(|c| c.call != Call::Complete);
        set.push(call(Call::Complete, vec![free(500.0)]));
    }
    let topo = machine(2, 50.0);
    let prog = Program::new(&cal, 1, 0.0).unwrap();
    let inline = simulate(&prog, &topo, &SimConfig::new(1, 1)).unwrap().kiops;
    assert!(close(inline, 1e6 / 1000.0, 0.001), "inline: {inline}");
    let cfg = SimConfig { completion: CompletionMode::Context, ..SimConfig::new(1, 1) };
    let context = simulate(&prog, &topo, &cfg).unwrap().kiops;
    // 300 + 200 + 500 ns and the machine's 5 µs wake-up.
    assert!(close(context, 1e6 / 6000.0, 0.001), "context: {context}");
}

/// Two jobs on two CPUs complete each other's requests at their interrupt points: both progress.
#[test]
fn two_jobs_complete_each_others_requests() {
    use schedlab_benches::driver::completion::CompletionMode;
    for kind in [LockKind::FairSpin, LockKind::ParkingLot] {
        let cal = one_lock(kind, 200.0, 2.0, 300.0);
        let prog = Program::new(&cal, 2, 400.0).unwrap();
        let cfg = SimConfig { completion: CompletionMode::Context, ..SimConfig::new(2, 3) };
        let r = simulate(&prog, &machine(2, 50.0), &cfg).unwrap();
        assert!(r.per_thread_min > 0.0 && r.kiops > 0.0, "{kind:?}: {r:?}");
    }
}
