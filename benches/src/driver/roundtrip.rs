//! Single-threaded cost of one request round trip (insert, dispatch, completion).
//!
//! The same scenario as the criterion bench `roundtrip`: a 3-level hierarchy (root, A, A1), one
//! process in A1, random 4 KiB reads, slice_idle 0, 8 stat slots. [`measure_named`] times
//! `iterations` round trips on a fresh scheduler; callers interleave variants and repeat.
//! [`lockstat_windows_named_until`] measures what the lock statistics cost inside one run: windows
//! with them off and on, alternating on one scheduler.

use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};
use schedlab_core::sync::{AtomicBool, Ordering};
use schedlab_core::{
    lockstat, LockKind, Op, Process, RequestSpec, SchedClock, SchedConfig, Scheduler, StatsPolicy,
};
use schedlab_variants::VariantVisitor;
use std::time::Instant;

/// A 4 KiB synchronous read (8 sectors) at `sector`, queued at the tail: the request of the
/// round trips, and of the tests that follow a request through the scheduler.
pub fn read_4k(sector: u64, tag: u64) -> RequestSpec {
    RequestSpec { sector, sectors: 8, op: Op::READ_SYNC, at_head: false, tag }
}

/// [`read_4k`] at a random 4 KiB-aligned sector of the first TiB, as fio's randread picks one.
pub fn random_read_4k(rng: &mut impl Rng, tag: u64) -> RequestSpec {
    read_4k(rng.random_range(0..(1u64 << 28)) * 8, tag)
}

/// One round trip of the scenario: `process` inserts a random read tagged `tag`, the scheduler
/// dispatches it (the only request queued) and it completes.
pub fn round_trip<P: StatsPolicy>(
    sched: &Scheduler<P>,
    process: &Process<'_, P>,
    rng: &mut impl Rng,
    tag: u64,
) {
    process.insert(random_read_4k(rng, tag));
    let rq = sched.dispatch().expect("the request just inserted");
    std::hint::black_box(rq.complete());
}

/// Nanoseconds per round trip over `iterations` round trips (after `iterations / 10` warm-up).
pub fn measure<P: StatsPolicy>(iterations: u64, lock: LockKind) -> f64 {
    measure_until::<P>(iterations, lock, &AtomicBool::new(false)).expect("never interrupted")
}

/// [`measure`], abandoned (`None`) as soon as `interrupt` is set: it is polled every 1024 round
/// trips, so a signal stops even a long measurement at once.
pub fn measure_until<P: StatsPolicy>(
    iterations: u64,
    lock: LockKind,
    interrupt: &AtomicBool,
) -> Option<f64> {
    with_round_trips::<P, _>(lock, iterations / 10, interrupt, |timed| timed(iterations))
}

/// Builds the scenario on a fresh scheduler, runs `warm_up` round trips, then hands `body` a
/// function that times `n` more round trips (ns per round trip; `None` once `interrupt` is set).
fn with_round_trips<P: StatsPolicy, R>(
    lock: LockKind,
    warm_up: u64,
    interrupt: &AtomicBool,
    body: impl FnOnce(&mut dyn FnMut(u64) -> Option<f64>) -> Option<R>,
) -> Option<R> {
    let sched = Scheduler::<P>::new(lock, SchedConfig::default(), SchedClock::real());
    let a = sched.create_group(sched.root(), 100).expect("root exists");
    let a1 = sched.create_group(a, 200).expect("a exists");
    let process = sched.spawn_process(a1).expect("a1 exists");
    let mut rng = SmallRng::seed_from_u64(7);
    let mut tag = 0u64;
    let mut run = |n: u64| -> bool {
        for _ in 0..n {
            // One relaxed load per 1024 round trips: nothing against a round trip's cost.
            if tag % 1024 == 0 && interrupt.load(Ordering::Relaxed) {
                return false;
            }
            round_trip(&sched, &process, &mut rng, tag);
            tag += 1;
        }
        true
    };
    if !run(warm_up) {
        return None;
    }
    let mut timed = |n: u64| {
        let start = Instant::now();
        run(n).then(|| start.elapsed().as_nanos() as f64 / n.max(1) as f64)
    };
    body(&mut timed)
}

/// The per-window costs of [`lockstat_windows_named_until`]'s result: each on window ÷ the mean
/// of its two off neighbours.
pub fn window_ratios(off: &[f64], on: &[f64]) -> Vec<f64> {
    on.iter()
        .enumerate()
        .filter(|(i, _)| i + 1 < off.len())
        .map(|(i, m)| m / ((off[i] + off[i + 1]) / 2.0))
        .collect()
}

struct Windows<'a> {
    window: u64,
    pairs: u64,
    lock: LockKind,
    mode: lockstat::Mode,
    interrupt: &'a AtomicBool,
}

impl VariantVisitor for Windows<'_> {
    type Output = Option<(Vec<f64>, Vec<f64>)>;
    fn visit<P: StatsPolicy>(self) -> Self::Output {
        lockstat::set_enabled(false);
        lockstat::set_mode(self.mode);
        lockstat::reset();
        let window = self.window;
        let result =
            with_round_trips::<P, _>(self.lock, window.max(1000), self.interrupt, |timed| {
                let (mut off, mut on) = (Vec::new(), Vec::new());
                off.push(timed(window)?);
                for _ in 0..self.pairs {
                    lockstat::set_enabled(true);
                    let m = timed(window);
                    lockstat::set_enabled(false);
                    on.push(m?);
                    off.push(timed(window)?);
                }
                Some((off, on))
            });
        lockstat::set_enabled(false);
        result
    }
}

/// What the lock statistics cost inside one run of the variant called `name`: after a warm-up,
/// `pairs` windows with the statistics on (in `mode`), each between two windows with them off,
/// all of `window` round trips on the same scheduler (off, on, off, on, ..., off). Returns the
/// off windows' and the on windows' ns per round trip, in order; `None`: no such variant, or
/// interrupted. The statistics are reset first and off at the end.
pub fn lockstat_windows_named_until(
    name: &str,
    window: u64,
    pairs: u64,
    lock: LockKind,
    mode: lockstat::Mode,
    interrupt: &AtomicBool,
) -> Option<(Vec<f64>, Vec<f64>)> {
    schedlab_variants::visit(name, Windows { window, pairs, lock, mode, interrupt }).flatten()
}

struct Measure<'a> {
    iterations: u64,
    lock: LockKind,
    interrupt: &'a AtomicBool,
}

impl VariantVisitor for Measure<'_> {
    type Output = Option<f64>;
    fn visit<P: StatsPolicy>(self) -> Option<f64> {
        measure_until::<P>(self.iterations, self.lock, self.interrupt)
    }
}

/// [`measure`] for the variant called `name` (`None`: no such variant).
pub fn measure_named(name: &str, iterations: u64, lock: LockKind) -> Option<f64> {
    measure_named_until(name, iterations, lock, &AtomicBool::new(false))
}

/// [`measure_until`] for the variant called `name` (`None`: no such variant, or interrupted).
pub fn measure_named_until(
    name: &str,
    iterations: u64,
    lock: LockKind,
    interrupt: &AtomicBool,
) -> Option<f64> {
    schedlab_variants::visit(name, Measure { iterations, lock, interrupt }).flatten()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_on_window_is_compared_with_its_two_off_neighbours() {
        // off, on, off, on, off: the second on window sits between 1.0 and 3.0.
        assert_eq!(window_ratios(&[1.0, 1.0, 3.0], &[1.5, 4.0]), vec![1.5, 2.0]);
        // A trailing on window without an off window after it (an interrupted run) is left out.
        assert_eq!(window_ratios(&[2.0], &[3.0]), Vec::<f64>::new());
    }
}
