//! Single-threaded cost of one request round trip (insert, dispatch, completion).
//!
//! The same scenario as the criterion bench `roundtrip`: a 3-level hierarchy (root, A, A1), one
//! process in A1, random 4 KiB reads, slice_idle 0, 8 stat slots. [`measure_named`] times
//! `iterations` round trips on a fresh scheduler; callers interleave variants and repeat.

use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};
use schedlab_core::{LockKind, Op, RequestSpec, SchedClock, SchedConfig, Scheduler, StatsPolicy};
use schedlab_variants::VariantVisitor;
use schedlab_core::sync::{AtomicBool, Ordering};
use std::time::Instant;

/// Nanoseconds per round trip over `iterations` round trips (after `iterations / 10` warm-up).
pub fn measure<P: StatsPolicy>(iterations: u64, lock: LockKind) -> f64 {
    measure_until::<P>(iterations, lock, &AtomicBool::new(false)).expect("never interrupted")
}

/// [`measure`], abandoned (`None`) as soon as `interrupt` is set: it is polled every 1024 round
/// trips, so a signal stops even a long measurement at once.
pub fn measure_until<P: StatsPolicy>(iterations: u64, lock: LockKind, interrupt: &AtomicBool) -> Option<f64> {
    let sched = Scheduler::<P>::new(lock, SchedConfig::default(), SchedClock::real());
    let a = sched.create_group(sched.root(), 100).expect("root exists");
    let a1 = sched.create_group(a, 200).expect("a exists");
    let process = sched.spawn_process(a1).expect("a1 exists");
    let mut rng = SmallRng::seed_from_u64(7);
    let mut round_trip = |tag: u64| {
        let sector = rng.random_range(0..(1u64 << 28)) * 8;
        process.insert(RequestSpec { sector, sectors: 8, op: Op::READ_SYNC, at_head: false, tag });
        let rq = sched.dispatch().expect("the request just inserted");
        std::hint::black_box(rq.complete());
    };
    let stopped = || interrupt.load(Ordering::Relaxed);
    for tag in 0..iterations / 10 {
        if tag % 1024 == 0 && stopped() {
            return None;
        }
        round_trip(tag);
    }
    let start = Instant::now();
    for tag in 0..iterations {
        // One relaxed load per 1024 round trips: nothing against a round trip's cost.
        if tag % 1024 == 0 && stopped() {
            return None;
        }
        round_trip(tag);
    }
    Some(start.elapsed().as_nanos() as f64 / iterations as f64)
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
pub fn measure_named_until(name: &str, iterations: u64, lock: LockKind, interrupt: &AtomicBool) -> Option<f64> {
    schedlab_variants::visit(name, Measure { iterations, lock, interrupt }).flatten()
}
