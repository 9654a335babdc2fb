//! The profiler library: stats frames where the stats are, none where they are not, shares that
//! add up, and the flamegraph writers.
//!
//! pprof samples the whole process: the tests that profile take `Sampling`'s process-wide mutex
//! (through `profile_named`), so they run one at a time; the others are short and profile nothing.
//! One workload thread each, so that a 2-core CI machine has a core left for the test harness.

use schedlab_benches::driver::profile::{
    classify, profile_named, write_differential, write_flamegraph, Category, Folded, TimeShares,
    DEFAULT_FREQUENCY,
};
use schedlab_benches::driver::workload::WorkloadConfig;
use schedlab_core::sync::AtomicBool;
use std::time::Duration;

fn short() -> WorkloadConfig {
    WorkloadConfig { threads: 1, duration: Duration::from_millis(800), ..WorkloadConfig::default() }
}

/// A profile of `variant` with at least 40 samples. pprof samples CPU time, and how much of it a
/// 0.8 s run gets depends on the machine's load: a run that got too little is repeated (up to
/// 10 times) rather than failed, so that the assertions below are about what was sampled, not
/// about how busy the machine was.
fn profile_with_samples(variant: &str) -> schedlab_benches::driver::profile::VariantProfile {
    let mut p =
        profile_named(variant, &short(), &AtomicBool::new(false), DEFAULT_FREQUENCY).unwrap();
    for _ in 0..9 {
        if p.folded.samples() >= 40 {
            break;
        }
        p = profile_named(variant, &short(), &AtomicBool::new(false), DEFAULT_FREQUENCY).unwrap();
    }
    p
}

fn svg(folded: &Folded) -> String {
    let mut out = Vec::new();
    write_flamegraph(folded, "test", "subtitle", &mut out).expect("svg written");
    String::from_utf8(out).expect("utf-8 svg")
}

#[test]
fn sched_lock_profile_holds_the_stats_frames() {
    let p = profile_with_samples("sched-lock");
    assert!(p.run.consistent);
    let f = &p.folded;
    assert!(f.samples() >= 40, "too few samples: {}", f.samples());
    let stats = f.samples_with("schedlab_core::stats::");
    let sums = p.shares.sums;
    assert!(stats >= 5, "stats frames in {stats} of {} samples", f.samples());
    assert!(sums >= 1, "no all-slot sum in {} samples", f.samples());
    assert!(p.shares.counts[Category::Stats as usize] >= stats);
    let svg = svg(f);
    assert!(svg.contains("schedlab_core::stats::"), "no stats frame in the svg");
    assert!(svg.contains("schedlab_core::scheduler::"), "no scheduler frame in the svg");
    assert!((p.shares.total_share() - 100.0).abs() < 1e-9, "{}", p.shares.total_share());
}

#[test]
fn no_stats_profile_holds_no_stats_frames() {
    let p = profile_with_samples("no-stats");
    let f = &p.folded;
    assert!(f.samples() >= 40, "too few samples: {}", f.samples());
    assert_eq!(
        f.samples_with("schedlab_core::stats::"),
        0,
        "stats frames in no-stats:\n{}",
        f.to_text()
    );
    // A frame of the variants crate (an empty hook, the registry's generic code; unoptimised test
    // builds inline none of them) may be sampled and counted as statistics machinery. What
    // no-stats must not do is statistics work: no statistics function (above), no deferral, no
    // epoch, in any stack counted as statistics.
    for line in f.to_text().lines() {
        let stack = line.rsplit_once(' ').map_or(line, |(stack, _)| stack);
        if classify(stack).0 == Category::Stats {
            assert!(
                !["crossbeam_epoch::", "run_deferred", "schedlab_core::policy::"]
                    .iter()
                    .any(|f| stack.contains(f)),
                "statistics work in no-stats: {line}"
            );
        }
    }
    assert_eq!(p.shares.sums, 0);
    assert!(f.samples_with("schedlab_core::") > 0, "no scheduler frame at all");
    assert!(!svg(f).contains("schedlab_core::stats::"));
    assert!((p.shares.total_share() - 100.0).abs() < 1e-9);
}

/// One stack per category, root first, as `Sampling::finish` folds them.
fn synthetic() -> Folded {
    let root = "start_thread;schedlab_benches::driver::workload::job_loop<schedlab_variants::sched_lock::SchedLock>";
    let lines = [
        // Scheduler work.
        format!("{root};schedlab_core::scheduler::dispatch<P>;schedlab_core::state::dispatch_one<R> 7"),
        // A sum under the scheduler lock (stats, and within them sums), with the counter's own lock.
        format!("{root};schedlab_core::scheduler::dispatch<P>;schedlab_core::scheduler::apply_locked;schedlab_core::stats::update_avg_queue_size;schedlab_core::stats::GroupStats::rwstat_total;schedlab_core::stats::sum;lock_api::mutex::lock<schedlab_core::sync::locks::RawKindLock, ()> 5"),
        format!("{root};schedlab_core::scheduler::insert<P>;schedlab_core::stats::update_io_add 3"),
        // Waiting for the scheduler lock.
        format!("{root};schedlab_core::scheduler::insert<P>;schedlab_core::sync::lock<T>;schedlab_core::sync::lock_slow;core::hint::spin_loop 11"),
        // The queue lock taken by a deferral: lock, not stats.
        format!("{root};schedlab_core::scheduler::dispatch<P>;schedlab_variants::queue_lock::run_deferred;schedlab_core::sync::lock<()>;schedlab_core::sync::lock_slow 2"),
        // The deferral itself: stats.
        format!("{root};schedlab_core::scheduler::dispatch<P>;schedlab_variants::queue_lock::run_deferred 1"),
        // `route` is asked even by no-stats: core.
        format!("{root};schedlab_core::state::dispatch_one<R>;<schedlab_variants::no_stats::NoStats as schedlab_core::policy::StatsPolicy>::route 1"),
        // Outside the scheduler.
        format!("{root};schedlab_benches::driver::workload::spin_for;quanta::raw 4"),
        // Other.
        format!("{root};rand::rngs::small::next_u64 2"),
        "[unknown] 1".to_string(),
    ];
    Folded::from_text(&lines.join("\n")).unwrap()
}

#[test]
fn classification_and_shares_add_up_to_100() {
    let f = synthetic();
    assert_eq!(f.samples(), 37);
    let t = TimeShares::from_folded(&f);
    assert_eq!(t.samples, 37);
    let count = |c: Category| t.counts[c as usize];
    assert_eq!(count(Category::Core), 7 + 1);
    assert_eq!(count(Category::Stats), 5 + 3 + 1);
    assert_eq!(t.sums, 5);
    assert_eq!(count(Category::Lock), 11 + 2);
    assert_eq!(count(Category::Outside), 4);
    assert_eq!(count(Category::Other), 3);
    let total: f64 = Category::ALL.iter().map(|&c| t.share(c)).sum();
    assert!((total - 100.0).abs() < 1e-9, "{total}");
    assert!((t.total_share() - 100.0).abs() < 1e-9);
    assert!((t.stats_of_work() - 100.0 * 9.0 / 17.0).abs() < 1e-9);
    assert_eq!(classify("a;schedlab_core::stats::sum"), (Category::Stats, true));
    assert_eq!(classify("a;schedlab_core::sync::now_ns"), (Category::Core, false));
    // The registry's dispatch on the thread that starts a run is not statistics machinery.
    assert_eq!(
        classify("schedlab_variants::visit<R>;schedlab_benches::driver::workload::sleep_until"),
        (Category::Other, false)
    );
    let empty = TimeShares::from_folded(&Folded::default());
    assert_eq!(empty.total_share(), 0.0);

    // The figures the flamegraph report's tables show (their rendering is the report's test:
    // `the_flamegraph_text_is_drawn_from_its_tables_within_130_columns`).
    assert!((t.share(Category::Stats) - 100.0 * 9.0 / 37.0).abs() < 1e-9, "stats share 9/37");
    assert!(empty.share(Category::Stats) == 0.0 && empty.samples == 0);
}

#[test]
fn folded_text_round_trips_and_flamegraphs_render() {
    let f = synthetic();
    let again = Folded::from_text(&f.to_text()).unwrap();
    assert_eq!(again.stacks, f.stacks);
    assert!(Folded::from_text("a;b x").is_err());
    let svg = svg(&f);
    assert!(svg.starts_with("<?xml"));
    assert!(svg.contains("schedlab_core::stats::sum"));
    assert!(write_flamegraph(&Folded::default(), "t", "s", Vec::new()).is_err());

    // B without the stats stacks: the differential keeps A's widths and marks what B removed.
    let mut b = f.clone();
    b.stacks.retain(|stack, _| !stack.contains("schedlab_core::stats::"));
    let mut out = Vec::new();
    write_differential(&f, &b, None, "a vs b", "sub", &mut out).unwrap();
    let diff = String::from_utf8(out).unwrap();
    assert!(
        diff.contains("schedlab_core::stats::update_avg_queue_size"),
        "A's stats frames are drawn"
    );
    // inferno writes the change in percent into each frame's title: stats frames went down.
    assert!(diff.contains("-"), "no negative change in the differential");
    let mut out = Vec::new();
    write_differential(&f, &b, Some(0.5), "a vs b, per request", "sub", &mut out).unwrap();
    assert!(String::from_utf8(out).unwrap().contains("schedlab_core::stats::sum"));
}
