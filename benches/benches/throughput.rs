//! Multi-threaded throughput per variant: N threads (default 2, `SCHEDLAB_BENCH_THREADS`), each
//! a process with its own queue in its own group, start together at a barrier and run `iters`
//! round trips each (insert its request, dispatch whichever request the scheduler picks,
//! complete it), as the workload driver's jobs do on the null device, fair lock, 8 stat slots.
//!
//! criterion times one closure, so the threads are driven through `iter_custom`: the time
//! reported is from the barrier's release to the last thread's end, and `Throughput::Elements`
//! is the number of threads (one request per thread per iteration), so criterion prints
//! requests per second. `cargo bench -p schedlab-benches --bench throughput`.

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use rand::rngs::SmallRng;
use rand::SeedableRng;
use schedlab_benches::driver::roundtrip::random_read_4k;
use schedlab_core::{LockKind, SchedClock, SchedConfig, Scheduler, StatsPolicy};
use schedlab_variants::VariantVisitor;
use std::hint::black_box;
use std::sync::Barrier;
use std::time::{Duration, Instant};

fn threads() -> usize {
    std::env::var("SCHEDLAB_BENCH_THREADS")
        .ok()
        .and_then(|s| s.parse().ok())
        .filter(|&n| n >= 1)
        .unwrap_or(2)
}

/// Runs `iters` round trips on each of `n` threads; returns the time from the common start to
/// the last thread's end.
fn run_threads<P: StatsPolicy>(
    sched: &Scheduler<P>,
    groups: &[schedlab_core::GroupId],
    n: usize,
    iters: u64,
) -> Duration {
    let barrier = Barrier::new(n);
    let start_end: Vec<(Instant, Instant)> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..n)
            .map(|i| {
                let barrier = &barrier;
                let group = groups[i % groups.len()];
                s.spawn(move || {
                    let process = sched.spawn_process(group).expect("group exists");
                    let mut rng = SmallRng::seed_from_u64(i as u64 + 1);
                    barrier.wait();
                    let start = Instant::now();
                    for tag in 0..iters {
                        process.insert(random_read_4k(&mut rng, tag));
                        if let Some(rq) = sched.dispatch() {
                            black_box(rq.complete());
                        }
                    }
                    let end = Instant::now();
                    drop(process);
                    (start, end)
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().expect("bench thread")).collect()
    });
    // Requests another thread's dispatch missed are completed here, outside the timing.
    while let Some(rq) = sched.dispatch() {
        black_box(rq.complete());
    }
    let start = start_end.iter().map(|(s, _)| *s).min().expect("n >= 1");
    let end = start_end.iter().map(|(_, e)| *e).max().expect("n >= 1");
    end - start
}

struct ThroughputBench<'a> {
    c: &'a mut Criterion,
    threads: usize,
}

impl VariantVisitor for ThroughputBench<'_> {
    type Output = ();
    fn visit<P: StatsPolicy>(self) {
        let sched =
            Scheduler::<P>::new(LockKind::FairSpin, SchedConfig::default(), SchedClock::real());
        let root = sched.root();
        let groups: Vec<_> = (0..self.threads.max(2))
            .map(|i| sched.create_group(root, 100 * (i as u64 % 3 + 1)).unwrap())
            .collect();
        let n = self.threads;
        let mut group = self.c.benchmark_group(format!("throughput-{n}-threads"));
        group.throughput(Throughput::Elements(n as u64));
        group.sample_size(10);
        group.warm_up_time(Duration::from_millis(300));
        group.measurement_time(Duration::from_secs(2));
        group.bench_function(P::NAME, |b| {
            b.iter_custom(|iters| run_threads(&sched, &groups, n, iters))
        });
        group.finish();
    }
}

fn throughput(c: &mut Criterion) {
    let threads = threads();
    for v in schedlab_variants::safe() {
        schedlab_variants::visit(v.name, ThroughputBench { c, threads });
    }
}

criterion_group! {
    name = benches;
    config = schedlab_benches::driver::profile::criterion_config();
    targets = throughput
}
criterion_main!(benches);
