//! Real threads: two jobs plus group churn for a few seconds per safe variant. Conservation holds
//! and nothing is alive after teardown. (The loom models explore every interleaving of small
//! scenarios; this runs the whole workload for real, with the OS scheduling and real memory.)
//! `SCHEDLAB_STRESS_SECS` changes the time per variant (default 2).
#![cfg(not(loom))]

use schedlab_benches::driver::workload::{run_named, Rw, WorkloadConfig};
use schedlab_core::sync::AtomicBool;
use std::time::Duration;

fn seconds() -> f64 {
    std::env::var("SCHEDLAB_STRESS_SECS").ok().and_then(|s| s.parse().ok()).unwrap_or(2.0)
}

#[test]
fn two_threads_with_group_churn_conserve_and_free_everything() {
    for variant in schedlab_variants::safe() {
        for rw in [Rw::RandRead, Rw::Write] {
            let cfg = WorkloadConfig {
                threads: 2,
                duration: Duration::from_secs_f64(seconds() / 2.0),
                groups: 6,
                churn_per_sec: 100.0,
                rw,
                iodepth: if rw == Rw::Write { 4 } else { 1 },
                ..WorkloadConfig::default()
            };
            let r = run_named(variant.name, &cfg, &AtomicBool::new(false)).unwrap();
            let what = format!("{} {:?}", variant.name, rw);
            assert!(r.consistent, "{what}: {:?}", r.consistency);
            assert_eq!(r.requests.inserted, r.requests.completed + r.requests.merged, "{what}");
            assert!(r.churn_removals >= 20, "{what}: only {} group removals", r.churn_removals);
            assert_eq!(r.groups_live_after, 0, "{what}: groups alive after teardown");
            assert_eq!(r.queues_live_after, 0, "{what}: queues alive after teardown");
        }
    }
}
