//! What the two-thread probes (`barging.rs`, `phases.rs`) share: their arguments
//! (`CALIBRATION.json [LOCK] [SECONDS] [ROUNDS]`, bad input one line and exit 2), the timed spin
//! and the median [min, max] cell of their tables.

use schedlab_benches::model::topology::Topology;
use schedlab_benches::model::CalibrationSet;
use schedlab_benches::stats::median;
use schedlab_core::sync::{AtomicBool, Lock, Ordering};
use schedlab_core::{LockKind, SchedClock};
use std::path::Path;
use std::process::ExitCode;
use std::sync::Barrier;
use std::time::Duration;

/// A probe's arguments.
pub struct ProbeArgs {
    pub set: CalibrationSet,
    pub kind: LockKind,
    pub seconds: f64,
    pub rounds: usize,
}

/// One line on stderr naming the probe and its usage; exit 2.
pub fn usage(probe: &str, why: &str) -> ExitCode {
    eprintln!(
        "{probe}: {why} (usage: {probe} CALIBRATION.json [fair-spin|parking-lot] [SECONDS] \
         [ROUNDS])"
    );
    ExitCode::from(2)
}

/// Reads the command line: the calibration file, the lock kind (`default` when not given), the
/// seconds of each point (1) and the rounds (3).
pub fn parse(probe: &str, default: LockKind) -> Result<ProbeArgs, ExitCode> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let Some(file) = args.first() else { return Err(usage(probe, "no calibration file")) };
    let set =
        CalibrationSet::load(Path::new(file)).map_err(|e| usage(probe, &format!("{file}: {e}")))?;
    let kind = match args.get(1).map(String::as_str) {
        None => default,
        Some("fair-spin") => LockKind::FairSpin,
        Some("parking-lot") => LockKind::ParkingLot,
        Some(other) => return Err(usage(probe, &format!("unknown lock kind `{other}`"))),
    };
    let seconds: f64 = match args.get(2).map(|s| s.parse()) {
        None => 1.0,
        Some(Ok(s)) if s > 0.0 && s <= 60.0 => s,
        _ => return Err(usage(probe, "SECONDS: more than 0, at most 60")),
    };
    let rounds: usize = match args.get(3).map(|s| s.parse()) {
        None => 3,
        Some(Ok(r)) if (1..=50).contains(&r) => r,
        _ => return Err(usage(probe, "ROUNDS: 1 to 50")),
    };
    Ok(ProbeArgs { set, kind, seconds, rounds })
}

/// The calibration's machine with the transfer probed before a point (the host moves the
/// vCPUs), or as calibrated when no probe read one.
pub fn machine_at(set: &CalibrationSet, transfer: Option<f64>) -> Topology {
    match transfer {
        Some(ns) => set.machine.clone().with_core_transfer(ns, "probed before the point"),
        None => set.machine.clone(),
    }
}

/// Spins `ns` on `clock`.
pub fn spin(clock: &SchedClock, ns: u64) {
    if ns == 0 {
        return;
    }
    let end = clock.now_ns() + ns;
    while clock.now_ns() < end {
        std::hint::spin_loop();
    }
}

/// "median [min, max]" of the finite values, `places` decimals; "-" without one.
pub fn cell(values: impl Iterator<Item = f64>, places: usize) -> String {
    let v: Vec<f64> = values.filter(|x| x.is_finite()).collect();
    if v.is_empty() {
        return "-".to_string();
    }
    let (lo, hi) = v.iter().fold((f64::MAX, f64::MIN), |(l, h), &x| (l.min(x), h.max(x)));
    format!("{:.*} [{lo:.*}, {hi:.*}]", places, median(&v), places, places)
}

/// Two threads (0 and 1) each run `iteration` in a loop on `lock`'s machine for `seconds`, after a
/// 50 ms warm-up; `read` takes the guarded counts under the lock before and after. Returns both
/// reads and the ns between them.
pub fn two_threads<T: Send, R>(
    lock: &Lock<T>,
    seconds: f64,
    iteration: impl Fn(usize, &SchedClock) + Sync,
    read: impl Fn(&T) -> R,
) -> (R, R, f64) {
    let stop = AtomicBool::new(false);
    let start = Barrier::new(3);
    let clock = SchedClock::real();
    std::thread::scope(|s| {
        for me in 0..2 {
            let (stop, start, clock, iteration) = (&stop, &start, &clock, &iteration);
            s.spawn(move || {
                start.wait();
                while !stop.load(Ordering::Relaxed) {
                    iteration(me, clock);
                }
            });
        }
        start.wait();
        std::thread::sleep(Duration::from_millis(50));
        let before = read(&lock.lock());
        let t0 = clock.now_ns();
        std::thread::sleep(Duration::from_secs_f64(seconds));
        let after = read(&lock.lock());
        let t1 = clock.now_ns();
        stop.store(true, Ordering::Relaxed);
        (before, after, (t1 - t0) as f64)
    })
}
