//! How often a waiter takes a lock from a holder that re-takes it: measured on this machine with
//! the workload's own lock, and simulated with `predict`'s discipline for the same loop (issue
//! 41: at two threads the simulated parking_lot spinner almost never wins, 0.0 % owner changes
//! against 4.6 % measured in the workload, notes/results/2026-12-05-predict-wait.md).
//!
//! ```sh
//! cargo run --release -p schedlab-benches --example barging -- CALIBRATION.json [LOCK] [SECONDS] [ROUNDS]
//! ```
//!
//! Two threads each loop: take the lock, spin HOLD ns, release, spin GAP ns. A single-purpose
//! measurement: no scheduler, no statistics, one lock. Every (hold, gap) point runs once per
//! round, interleaved. Measured: acquisitions per µs and the share that changed owner. Simulated:
//! the same loop as a one-lock program (the hold in the dispatch, the gap as outside work, no
//! lines but the lock's own), on the machine of the calibration file with the transfer probed
//! before each point (the host moves the vCPUs). Prints a table (median over rounds, min–max).
//! LOCK: parking-lot (default) or fair-spin. Bad input: one line and exit 2.

mod common;

use common::ProbeArgs;
use schedlab_benches::experiment::compare::placement::probe_here;
use schedlab_benches::model::calibrate::{Calibration, OneHold};
use schedlab_benches::model::sim::{simulate, Program, SimConfig};
use schedlab_core::sync::{AtomicBool, Lock};
use schedlab_core::{LockKind, SchedClock};
use std::process::ExitCode;

const HOLDS_NS: [u64; 2] = [100, 300];
const GAPS_NS: [u64; 5] = [0, 25, 50, 100, 200];

/// What the lock guards: the last taker and the counts.
struct Owners {
    last: usize,
    acquisitions: u64,
    changes: u64,
}

/// Two threads on `kind`'s lock for `seconds`: (acquisitions per µs, owner changes %).
fn measure(kind: LockKind, hold_ns: u64, gap_ns: u64, seconds: f64) -> (f64, f64) {
    let lock = Lock::new(kind, Owners { last: usize::MAX, acquisitions: 0, changes: 0 });
    let iteration = |me: usize, clock: &SchedClock| {
        {
            let mut owners = lock.lock();
            owners.changes += u64::from(owners.last != me);
            owners.last = me;
            owners.acquisitions += 1;
            common::spin(clock, hold_ns);
        }
        common::spin(clock, gap_ns);
    };
    let read = |o: &Owners| (o.acquisitions, o.changes);
    let ((a0, c0), (a1, c1), ns) = common::two_threads(&lock, seconds, iteration, read);
    let acquisitions = (a1 - a0) as f64;
    let per_us = acquisitions / (ns / 1e3);
    (per_us, 100.0 * (c1 - c0) as f64 / acquisitions.max(1.0))
}

fn main() -> ExitCode {
    let ProbeArgs { set, kind, seconds, rounds } =
        match common::parse("barging", LockKind::ParkingLot) {
            Ok(args) => args,
            Err(code) => return code,
        };
    let points: Vec<(u64, u64)> =
        HOLDS_NS.iter().flat_map(|&h| GAPS_NS.iter().map(move |&g| (h, g))).collect();
    // Per point: measured (rate, changes) and simulated (rate, changes), one per round.
    let mut results = vec![Vec::new(); points.len()];
    let never = AtomicBool::new(false);
    for round in 0..rounds {
        for j in 0..points.len() {
            let idx = (j + round) % points.len();
            let (hold, gap) = points[idx];
            let transfer = probe_here(&never);
            let measured = measure(kind, hold, gap, seconds);
            let machine = common::machine_at(&set, transfer);
            // The hold as the dispatch's deciding hold (also when the other job took the
            // request), the gap as outside work.
            let hold_ns = hold as f64;
            let one_hold = OneHold { ns: hold_ns, lines: 0.0, empty_ns: hold_ns };
            let simulated =
                Program::new(&Calibration::one_lock(kind, one_hold, 0.0), 2, gap as f64).and_then(
                    |prog| simulate(&prog, &machine, &SimConfig::new(2, 1 + round as u64)),
                );
            let simulated = match simulated {
                Ok(r) => {
                    let owners = &r.lock_owners[0];
                    let per_us = owners.acquisitions as f64 / (r.measured_ns / 1e3);
                    let changes =
                        100.0 * owners.owner_changes as f64 / owners.acquisitions.max(1) as f64;
                    (per_us, changes)
                }
                Err(e) => return common::usage("barging", &format!("the simulation failed: {e}")),
            };
            eprintln!(
                "round {} hold {hold} gap {gap}: transfer {:.0} ns, measured {:.2}/µs {:.2} %, \
                 simulated {:.2}/µs {:.2} %",
                round + 1,
                transfer.unwrap_or(f64::NAN),
                measured.0,
                measured.1,
                simulated.0,
                simulated.1
            );
            results[idx].push((transfer.unwrap_or(f64::NAN), measured, simulated));
        }
    }
    println!(
        "lock {}; median of {rounds} round(s) of {seconds} s each; min–max in brackets",
        kind.name()
    );
    println!(
        "| hold (ns) | gap (ns) | transfer (ns) | measured (per µs) | simulated (per µs) | \
         measured owner changes (%) | simulated owner changes (%) |"
    );
    println!("| --- | --- | --- | --- | --- | --- | --- |");
    for (&(hold, gap), r) in points.iter().zip(&results) {
        let figure = |f: &dyn Fn(&(f64, (f64, f64), (f64, f64))) -> f64, places: usize| {
            common::cell(r.iter().map(f), places)
        };
        println!(
            "| {hold} | {gap} | {} | {} | {} | {} | {} |",
            figure(&|x| x.0, 0),
            figure(&|x| x.1 .0, 2),
            figure(&|x| x.2 .0, 2),
            figure(&|x| x.1 .1, 2),
            figure(&|x| x.2 .1, 2),
        );
    }
    ExitCode::SUCCESS
}
