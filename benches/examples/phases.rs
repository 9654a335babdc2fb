//! Do two jobs that meet on a lock keep meeting? The request path's *phase* (several holds close
//! together, then work outside every lock) run by two threads on the workload's own lock, measured
//! on this machine and simulated with `predict`'s discipline for the same loop (issue 41: the
//! simulated jobs convoy, the scheduler lock changing owner on 83–94 % of acquisitions, where the
//! machine's change it on 32–35 %; notes/results/2026-12-05-convoy.md).
//!
//! ```sh
//! cargo run --release -p schedlab-benches --example phases -- \
//!     CALIBRATION.json [LOCK] [SECONDS] [ROUNDS]
//! ```
//!
//! Each thread loops: spin OUTSIDE/2 ns; then HOLDS times: take the lock, spin HOLD ns, walk
//! LINES cache lines of the guarded data (each line's load names the next, so a line last written
//! on the other CPU costs one transfer after the other), write each, release, spin GAP ns; then
//! spin OUTSIDE/2 ns. A single-purpose measurement: no scheduler, no statistics, one lock. Every
//! point runs once per round, interleaved. Measured: phases per µs, the share of acquisitions that
//! changed owner, and the share of releases that found a waiter queued. Simulated: the same loop
//! as a one-lock program (HOLDS − 1 holds in the submission with their gaps, the last as the
//! dispatch's deciding hold, each pulling LINES lines when the previous holder was on the other
//! CPU), on the machine of the calibration file with the transfer probed before each point.
//! For fair-spin it then takes the FIFO hand-off beyond one transfer from the convoy point alone
//! (no lines, no outside work: one hold and one hand-off an acquisition) and simulates every point
//! again with it (`transfer.handoff_extra_ns`): the other points check it.
//! LOCK: fair-spin (default) or parking-lot. Bad input: one line and exit 2.

mod common;

use common::ProbeArgs;
use schedlab_benches::experiment::compare::placement::probe_here;
use schedlab_benches::model::calibrate::{Calibration, OneHold};
use schedlab_benches::model::sim::{simulate, Program, SimConfig};
use schedlab_benches::model::topology::Topology;
use schedlab_benches::stats::median;
use schedlab_core::sync::{AtomicBool, Lock};
use schedlab_core::{LockKind, SchedClock};
use std::process::ExitCode;

/// Holds per phase: the 4.12 path's bio merge, insert, dispatch and completion.
const HOLDS: usize = 4;
const HOLD_NS: u64 = 60;
const GAP_NS: u64 = 10;
const LINES: [usize; 3] = [0, 3, 6];
const OUTSIDE_NS: [u64; 4] = [0, 500, 1000, 2000];
const MAX_LINES: usize = 8;

/// One cache line of the guarded data: the index of the next line to visit, and a counter.
#[repr(align(64))]
#[derive(Clone, Copy)]
struct Line {
    next: usize,
    count: u64,
}

/// What the lock guards: the last taker, the counts, and the lines a hold walks.
struct Guarded {
    last: usize,
    acquisitions: u64,
    changes: u64,
    handoffs: u64,
    phases: u64,
    lines: [Line; MAX_LINES],
}

/// Walks `n` lines from the first, each load naming the next, and writes each.
fn walk(lines: &mut [Line; MAX_LINES], n: usize) {
    let mut at = 0;
    for _ in 0..n {
        let line = &mut lines[at];
        line.count = line.count.wrapping_add(1);
        at = line.next;
    }
}

/// One round of a point.
#[derive(Clone)]
struct Row {
    /// The transfer probed before it, ns.
    transfer: f64,
    measured: Counts,
    /// Simulated: phases per µs, owner changes %.
    simulated: (f64, f64),
    /// The simulated owner changes without interruptions.
    steady: f64,
    /// Simulated with the hand-off measured at the convoy point (fair-spin only).
    with_handoff: (f64, f64),
}

/// What one measured point gave.
#[derive(Clone, Copy)]
struct Counts {
    phases_per_us: f64,
    owner_changes_pct: f64,
    handoffs_pct: f64,
}

/// Two threads on `kind`'s lock for `seconds`.
fn measure(kind: LockKind, lines: usize, outside_ns: u64, seconds: f64) -> Counts {
    let mut chain = [Line { next: 0, count: 0 }; MAX_LINES];
    // Visit the lines in a fixed scattered order, so that no prefetcher walks them for us.
    for (i, line) in chain.iter_mut().enumerate() {
        line.next = (i * 5 + 3) % MAX_LINES;
    }
    let guarded = Guarded {
        last: usize::MAX,
        acquisitions: 0,
        changes: 0,
        handoffs: 0,
        phases: 0,
        lines: chain,
    };
    let lock = Lock::new(kind, guarded);
    let iteration = |me: usize, clock: &SchedClock| {
        common::spin(clock, outside_ns / 2);
        for hold in 0..HOLDS {
            {
                let mut g = lock.lock();
                g.changes += u64::from(g.last != me);
                g.last = me;
                g.acquisitions += 1;
                g.phases += u64::from(hold == 0);
                common::spin(clock, HOLD_NS);
                walk(&mut g.lines, lines);
                g.handoffs += u64::from(lock.has_waiters());
            }
            common::spin(clock, GAP_NS);
        }
        common::spin(clock, outside_ns - outside_ns / 2);
    };
    let read = |g: &Guarded| (g.acquisitions, g.changes, g.handoffs, g.phases);
    let ((a0, c0, h0, p0), (a1, c1, h1, p1), ns) =
        common::two_threads(&lock, seconds, iteration, read);
    let acquisitions = ((a1 - a0) as f64).max(1.0);
    Counts {
        phases_per_us: (p1 - p0) as f64 / (ns / 1e3),
        owner_changes_pct: 100.0 * (c1 - c0) as f64 / acquisitions,
        handoffs_pct: 100.0 * (h1 - h0) as f64 / acquisitions,
    }
}

/// The same loop as a made calibration (module documentation).
fn phase_calibration(kind: LockKind, lines: usize) -> Calibration {
    let hold = OneHold { ns: HOLD_NS as f64, lines: lines as f64, empty_ns: HOLD_NS as f64 };
    Calibration::one_lock_phases(kind, HOLDS, hold, GAP_NS as f64)
}

/// The simulation of one point on `machine`: (phases per µs, owner changes %).
fn simulate_point(
    kind: LockKind,
    lines: usize,
    outside: u64,
    machine: &Topology,
    seed: u64,
) -> Result<(f64, f64), String> {
    let prog = Program::new(&phase_calibration(kind, lines), 2, outside as f64)
        .map_err(|e| e.to_string())?;
    let r = simulate(&prog, machine, &SimConfig::new(2, seed)).map_err(|e| e.to_string())?;
    let owners = &r.lock_owners[0];
    // One completion per phase.
    let per_us = r.completions as f64 / (r.measured_ns / 1e3);
    let changes = 100.0 * owners.owner_changes as f64 / owners.acquisitions.max(1) as f64;
    Ok((per_us, changes))
}

fn main() -> ExitCode {
    let ProbeArgs { set, kind, seconds, rounds } = match common::parse("phases", LockKind::FairSpin)
    {
        Ok(args) => args,
        Err(code) => return code,
    };
    let points: Vec<(usize, u64)> =
        LINES.iter().flat_map(|&l| OUTSIDE_NS.iter().map(move |&o| (l, o))).collect();
    let mut results: Vec<Vec<Row>> = vec![Vec::new(); points.len()];
    let never = AtomicBool::new(false);
    for round in 0..rounds {
        for j in 0..points.len() {
            let idx = (j + round) % points.len();
            let (lines, outside) = points[idx];
            let transfer = probe_here(&never);
            let measured = measure(kind, lines, outside, seconds);
            let machine = common::machine_at(&set, transfer);
            let seed = 1 + round as u64;
            let simulated = match simulate_point(kind, lines, outside, &machine, seed) {
                Ok(r) => r,
                Err(e) => return common::usage("phases", &format!("the simulation failed: {e}")),
            };
            // The same without interruptions: the simulated pair's own dynamics.
            let uninterrupted = Topology { interruptions: None, ..machine.clone() };
            let steady = match simulate_point(kind, lines, outside, &uninterrupted, seed) {
                Ok(r) => r.1,
                Err(e) => return common::usage("phases", &format!("the simulation failed: {e}")),
            };
            eprintln!(
                "round {} lines {lines} outside {outside}: transfer {:.0} ns, measured {:.3}/µs \
                 {:.1} % changes {:.1} % hand-offs, simulated {:.3}/µs {:.1} % changes \
                 ({:.1} % without interruptions)",
                round + 1,
                transfer.unwrap_or(f64::NAN),
                measured.phases_per_us,
                measured.owner_changes_pct,
                measured.handoffs_pct,
                simulated.0,
                simulated.1,
                steady
            );
            results[idx].push(Row {
                transfer: transfer.unwrap_or(f64::NAN),
                measured,
                simulated,
                steady,
                with_handoff: (f64::NAN, f64::NAN),
            });
        }
    }
    // The hand-off beyond one transfer, from the convoy point (no lines, no outside work: every
    // acquisition a FIFO hand-off, one hold and one hand-off each), then every point simulated
    // again with it: the other points are the check.
    let convoy = points.iter().position(|&p| p == (0, 0)).expect("the convoy point");
    let extras: Vec<f64> = results[convoy]
        .iter()
        .filter(|r| r.transfer.is_finite() && r.measured.phases_per_us > 0.0)
        .map(|r| 1e3 / (HOLDS as f64 * r.measured.phases_per_us) - HOLD_NS as f64 - r.transfer)
        .collect();
    let extra = if extras.is_empty() { 0.0 } else { median(&extras).max(0.0) };
    if kind == LockKind::FairSpin {
        for (&(lines, outside), rows) in points.iter().zip(results.iter_mut()) {
            for (round, row) in rows.iter_mut().enumerate() {
                let probed = row.transfer.is_finite().then_some(row.transfer);
                let mut machine = common::machine_at(&set, probed);
                machine.transfer.handoff_extra_ns = extra;
                match simulate_point(kind, lines, outside, &machine, 1 + round as u64) {
                    Ok(r) => row.with_handoff = r,
                    Err(e) => {
                        return common::usage("phases", &format!("the simulation failed: {e}"))
                    }
                }
            }
        }
    }
    println!(
        "lock {}; {HOLDS} holds of {HOLD_NS} ns a phase, {GAP_NS} ns apart; median of {rounds} \
         round(s) of {seconds} s each; min–max in brackets",
        kind.name()
    );
    if kind == LockKind::FairSpin {
        println!(
            "hand-off beyond one transfer, from the convoy point (0 lines, 0 ns outside): \
             {extra:.0} ns (median of {} round(s)); the last two columns simulate every point \
             with it",
            extras.len()
        );
    }
    println!(
        "| lines | outside (ns) | transfer (ns) | measured phases (per µs) | simulated (per µs) | \
         measured owner changes (%) | simulated owner changes (%) | simulated, no \
         interruptions (%) | measured releases with a waiter (%) | simulated with the hand-off \
         (per µs) | simulated with the hand-off, owner changes (%) |"
    );
    println!("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |");
    for (&(lines, outside), r) in points.iter().zip(&results) {
        let figure = |f: &dyn Fn(&Row) -> f64, places: usize| common::cell(r.iter().map(f), places);
        println!(
            "| {lines} | {outside} | {} | {} | {} | {} | {} | {} | {} | {} | {} |",
            figure(&|x| x.transfer, 0),
            figure(&|x| x.measured.phases_per_us, 3),
            figure(&|x| x.simulated.0, 3),
            figure(&|x| x.measured.owner_changes_pct, 1),
            figure(&|x| x.simulated.1, 1),
            figure(&|x| x.steady, 1),
            figure(&|x| x.measured.handoffs_pct, 1),
            figure(&|x| x.with_handoff.0, 3),
            figure(&|x| x.with_handoff.1, 1),
        );
    }
    ExitCode::SUCCESS
}
