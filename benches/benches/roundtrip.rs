//! Single-threaded cost of one request round trip (insert, dispatch, completion) per variant,
//! on a scheduler with a 3-level hierarchy, 8 stat slots, the fair lock and slice_idle 0.
//!
//! `cargo bench -p schedlab-benches --bench roundtrip`; results with provenance go to
//! notes/results/. `cargo bench -p schedlab-benches -- --profile-time 5` writes a flamegraph per
//! benchmark instead of measuring (notes/flamegraphs.md).

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use rand::rngs::SmallRng;
use rand::SeedableRng;
use schedlab_benches::driver::profile::criterion_config;
use schedlab_benches::driver::roundtrip::round_trip;
use schedlab_core::{LockKind, SchedClock, SchedConfig, Scheduler, StatsPolicy};
use schedlab_variants::VariantVisitor;

struct RoundTrip<'a> {
    c: &'a mut Criterion,
}

impl VariantVisitor for RoundTrip<'_> {
    type Output = ();
    fn visit<P: StatsPolicy>(self) {
        let sched =
            Scheduler::<P>::new(LockKind::FairSpin, SchedConfig::default(), SchedClock::real());
        let a = sched.create_group(sched.root(), 100).unwrap();
        let a1 = sched.create_group(a, 200).unwrap();
        let process = sched.spawn_process(a1).unwrap();
        let mut rng = SmallRng::seed_from_u64(7);
        let mut tag = 0u64;
        let mut group = self.c.benchmark_group("roundtrip");
        group.throughput(Throughput::Elements(1));
        group.bench_function(P::NAME, |b| {
            b.iter(|| {
                tag += 1;
                round_trip(&sched, &process, &mut rng, tag);
            })
        });
        group.finish();
    }
}

fn roundtrip(c: &mut Criterion) {
    for v in schedlab_variants::ALL {
        schedlab_variants::visit(v.name, RoundTrip { c });
    }
}

// `--profile-time N` runs each benchmark for N seconds under pprof and writes its flamegraph to
// `target/criterion/roundtrip/<variant>/profile/flamegraph.svg`; other runs never start it.
criterion_group! {
    name = benches;
    config = criterion_config();
    targets = roundtrip
}
criterion_main!(benches);
