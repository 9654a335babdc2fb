//! The kernel peer's parsers on outputs recorded from real runs on this machine kind (Linux 6.18,
//! fio 3.33, bpftrace 0.17, perf 6.1; a loop device over a tmpfs file under BFQ, 2 jobs of 4 KiB
//! random reads at iodepth 32 through io_uring; `fixtures/kernel/README.md`). The expected
//! figures were counted from the raw files by a separate script, not by these parsers.

use schedlab_benches::kernel::contention::{parse_bpftrace, ContentionSummary};
use schedlab_benches::kernel::fio;
use schedlab_benches::kernel::profile::{fold_perf_script, KernelShares};

fn fixture(name: &str) -> String {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/kernel").join(name);
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

#[test]
fn fio_json_of_a_bfq_run() {
    let r = fio::parse(&fixture("fio-randread-bfq.json")).unwrap();
    assert_eq!(r.fio_version, "fio-3.33");
    assert_eq!(r.ios, 256_725);
    assert!((r.iops - 256_468.531469).abs() < 1e-3, "{}", r.iops);
    assert!((r.runtime_s - 1.001).abs() < 1e-9);
    assert!((r.usr_cpu_pct - 8.6).abs() < 1e-9 && (r.sys_cpu_pct - 47.75).abs() < 1e-9);
    assert_eq!((r.job_entries, r.error), (1, None));
}

#[test]
fn bpftrace_contention_of_a_bfq_run() {
    let sites = parse_bpftrace(&fixture("bpftrace-contention-bfq.json")).unwrap();
    assert_eq!(sites.len(), 74, "one site per (lock address, stack without offsets): 77 keys, 3 differ only in an offset");
    let s = ContentionSummary::of(&sites);
    assert_eq!(s.scheduler_lock_addrs, 1, "BFQ's one lock");
    assert_eq!(s.scheduler_lock.contentions, 170_247);
    assert_eq!(s.scheduler_lock.wait_total_ns, 138_018_035);
    assert_eq!(s.other_locks.contentions, 31_961);
    assert!(s.scheduler_lock.wait_max_ns >= s.scheduler_lock.wait_avg_ns() as u64);
    // Every caller of BFQ's lock is a path of the scheduler or blk-mq, never a lock primitive.
    for (caller, _) in &s.scheduler_callers {
        assert!(!caller.contains("spin_lock"), "{caller}");
    }
    assert!(s.scheduler_callers.iter().any(|(c, _)| c == "bfq_dispatch_request"), "{:?}", s.scheduler_callers);
}

#[test]
fn perf_script_of_a_bfq_run() {
    let folded = fold_perf_script(&fixture("perf-script-bfq.txt")).unwrap();
    assert_eq!(folded.samples(), 600);
    let shares = KernelShares::of(&folded);
    assert_eq!(shares.samples, 585, "the idle task's 15 samples are left out");
    let pct = |n: f64| 100.0 * n / 585.0;
    assert!((shares.bfq_pct - pct(113.0)).abs() < 1e-9, "{}", shares.bfq_pct);
    assert!((shares.group_stats_pct - pct(2.0)).abs() < 1e-9, "{}", shares.group_stats_pct);
    assert!(shares.stats_share_of_scheduler_pct.is_some());
}
