//! The lock counters of real workload runs are sane: exact relations between the counts, hold
//! intervals that fit in the measured window, the scheduler lock taken on the three paths, and
//! the queue lock only by deferred statistics. One test function: the lockstat table is global to
//! the process.

use schedlab_benches::driver::workload::{run_named, WorkloadConfig};
use schedlab_core::lockstat::{LockPath, LockSummary, Mode};
use schedlab_core::sync::AtomicBool;
use schedlab_core::LockKind;
use std::time::Duration;

fn lock<'a>(locks: &'a [LockSummary], name: &str) -> Option<&'a LockSummary> {
    locks.iter().find(|l| l.name == name)
}

#[test]
fn workload_lock_counters_are_sane() {
    for lock_kind in LockKind::ALL {
        for variant in ["sched-lock", "queue-lock", "no-stats"] {
            let cfg = WorkloadConfig {
                threads: 2,
                duration: Duration::from_millis(300),
                lock: lock_kind,
                lockstat: true,
                // Exact mode: every hold timed, so the totals are sums of real intervals and the
                // bound below is physical (a sampled total is an estimate, mean × count, which a
                // preempted hold in the sample can push past the window).
                lockstat_mode: Mode::Exact,
                ..WorkloadConfig::default()
            };
            let r = run_named(variant, &cfg, &AtomicBool::new(false)).unwrap();
            let what = format!("{variant}/{lock_kind}");
            assert!(r.consistent, "{what}");
            let wall_ns = r.measured_s * 1e9;
            let requests = r.kiops * 1e3 * r.measured_s;
            assert!(requests > 0.0, "{what}: no work was done");
            let sched = lock(&r.locks, "sched")
                .unwrap_or_else(|| panic!("{what}: no sched lock in {:?}", r.locks));
            for l in &r.locks {
                assert!(l.acquisitions >= l.contentions, "{what} {}: {l:?}", l.name);
                assert!(l.acquisitions >= l.owner_changes, "{what} {}: {l:?}", l.name);
                assert!(l.hold_ns.total > 0, "{what} {}: no hold time", l.name);
                assert!(
                    l.hold_exact && l.holds_timed == l.acquisitions,
                    "{what} {}: exact mode times every hold",
                    l.name
                );
                assert!(
                    l.hold_ns.p50 <= l.hold_ns.p99 && l.hold_ns.p99 <= l.hold_ns.max,
                    "{what} {}: {l:?}",
                    l.name
                );
                assert!(l.wait_ns.p99 <= l.wait_ns.max, "{what} {}: {l:?}", l.name);
                assert_eq!(
                    l.contentions == 0,
                    l.wait_ns.total == 0,
                    "{what} {}: waits come only from contentions",
                    l.name
                );
                assert!(
                    l.contentions == 0 || (l.wait_exact && l.waits_timed == l.contentions),
                    "{what} {}: exact mode times every contended wait",
                    l.name
                );
                let by_path: u64 = l.paths.iter().map(|p| p.acquisitions).sum();
                assert_eq!(by_path, l.acquisitions, "{what} {}: paths add up", l.name);
            }
            // One lock cannot be held longer than the measured window (plus one hold in flight at
            // each edge), and a scheduler-lock hold is a short critical section.
            assert!(
                (sched.hold_ns.total as f64) <= wall_ns * 1.02,
                "{what}: sched held {} ns in {wall_ns} ns",
                sched.hold_ns.total
            );
            // (No upper bound on the average: a holder preempted by another process adds a whole
            // time slice to one hold. The median is immune to a few of those.)
            assert!(sched.hold_ns.avg > 5.0, "{what}: sched hold avg {}", sched.hold_ns.avg);
            assert!(sched.hold_ns.p50 < 50_000, "{what}: sched hold p50 {}", sched.hold_ns.p50);
            // Insert, dispatch and completion each take it once per request (a dispatch that finds
            // nothing takes it too).
            let per_request = sched.acquisitions as f64 / requests;
            assert!(per_request >= 2.9, "{what}: {per_request} sched acquisitions per request");
            for path in [LockPath::Insert, LockPath::Dispatch, LockPath::Completion] {
                assert!(
                    sched.paths.iter().any(|p| p.path == path && p.acquisitions > 0),
                    "{what}: no {path:?}"
                );
            }
            let queue = lock(&r.locks, "queue");
            let sums = lock(&r.locks, "stats-sum");
            match variant {
                "sched-lock" => {
                    assert!(queue.is_none(), "{what}: nothing takes the queue lock");
                    let sums =
                        sums.expect("avg_queue_size and set_start_empty_time sum under the lock");
                    assert!(
                        sums.inside.iter().any(|i| i.outer == "sched" && i.hold_ns > 0),
                        "{what}: sums inside sched"
                    );
                }
                "queue-lock" => {
                    let queue = queue.expect("deferred updates take the queue lock");
                    assert!(
                        queue.paths.iter().all(|p| p.path == LockPath::Stats),
                        "{what}: {:?}",
                        queue.paths
                    );
                    let sums = sums.expect("sums run in the deferred updates");
                    assert!(
                        sums.inside.iter().all(|i| i.outer != "sched"),
                        "{what}: no sum under the scheduler lock"
                    );
                }
                _ => assert!(
                    queue.is_none() && sums.is_none(),
                    "{what}: no statistics, no queue lock, no sums"
                ),
            }
        }
    }
}
