//! A monitor reading every group's statistics during a run (`--stats-reads`). In a test binary of
//! its own: its four threads per run (jobs, churn, reader) would otherwise compete with the
//! conservation tests running beside it in one process, whose end-of-run checks wait for epoch
//! grace periods that every thread of the process takes part in.

use schedlab_benches::driver::workload::{run_named, WorkloadConfig};
use schedlab_core::sync::AtomicBool;
use std::time::Duration;

/// Under `rstat` each read flushes the per-CPU pending lists while the jobs add to them and the
/// churn removes groups: still conserved, every group freed, for every safe variant.
#[test]
fn statistics_read_during_the_run_with_churn_conserve_and_free_everything() {
    for v in schedlab_variants::safe() {
        let cfg = WorkloadConfig {
            threads: 2,
            duration: Duration::from_millis(300),
            groups: 4,
            churn_per_sec: 50.0,
            stats_reads_per_sec: 500.0,
            ..WorkloadConfig::default()
        };
        let r = run_named(v.name, &cfg, &AtomicBool::new(false)).unwrap();
        let c = &r.consistency;
        assert!(c.ok, "{}: {c:?}", v.name);
        assert!(r.stats_reads >= 1, "{}: the reader never read", v.name);
        assert!(r.churn_removals >= 1, "{}: churn never removed a group", v.name);
        assert_eq!(r.groups_live_after, 0, "{}: groups leaked", v.name);
        assert_eq!(r.queues_live_after, 0, "{}: queues leaked", v.name);
    }
}
