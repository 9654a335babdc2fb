//! Single-threaded cost of one request round trip (insert, dispatch, completion).
//!
//! The same scenario as the criterion bench `roundtrip`: a 3-level hierarchy (root, A, A1), one
//! process in A1, random 4 KiB reads, slice_idle 0, 8 stat slots. [`measure_named`] times
//! `iterations` round trips on a fresh scheduler; callers interleave variants and repeat.

use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};
use schedlab_core::{LockKind, Op, RequestSpec, SchedClock, SchedConfig, Scheduler, StatsPolicy};
use schedlab_variants::VariantVisitor;
use std::time::Instant;

/// Nanoseconds per round trip over `iterations` round trips (after `iterations / 10` warm-up).
pub fn measure<P: StatsPolicy>(iterations: u64, lock: LockKind) -> f64 {
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
    for tag in 0..iterations / 10 {
        round_trip(tag);
    }
    let start = Instant::now();
    for tag in 0..iterations {
        round_trip(tag);
    }
    start.elapsed().as_nanos() as f64 / iterations as f64
}

struct Measure {
    iterations: u64,
    lock: LockKind,
}

impl VariantVisitor for Measure {
    type Output = f64;
    fn visit<P: StatsPolicy>(self) -> f64 {
        measure::<P>(self.iterations, self.lock)
    }
}

/// [`measure`] for the variant called `name`.
pub fn measure_named(name: &str, iterations: u64, lock: LockKind) -> Option<f64> {
    schedlab_variants::visit(name, Measure { iterations, lock })
}
