//! The kernel peer's parsers on outputs recorded from real runs on this machine kind (Linux 6.18,
//! fio 3.33, bpftrace 0.17, perf 6.1; a loop device over a tmpfs file under BFQ, 2 jobs of 4 KiB
//! random reads at iodepth 32 through io_uring; `fixtures/kernel/README.md`). The expected
//! figures were counted from the raw files by a separate script, not by these parsers.

use schedlab_benches::experiment::kernel::contention::{parse_bpftrace, ContentionSummary};
use schedlab_benches::experiment::kernel::fio;
use schedlab_benches::experiment::kernel::profile::{fold_perf_script, KernelShares};

fn fixture(name: &str) -> String {
    let path =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/kernel").join(name);
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
    assert_eq!(
        sites.len(),
        74,
        "one site per (lock address, stack without offsets): 77 keys, 3 differ only in an offset"
    );
    let s = ContentionSummary::of(&sites).unwrap();
    assert_eq!(s.scheduler_lock_addrs, 1, "BFQ's one lock");
    assert_eq!(s.scheduler_lock.contentions, 170_247);
    assert_eq!(s.scheduler_lock.wait_total_ns, 138_018_035);
    assert_eq!(s.other_locks.contentions, 31_961);
    assert!(s.scheduler_lock.wait_max_ns >= s.scheduler_lock.wait_avg_ns() as u64);
    // Every caller of BFQ's lock is a path of the scheduler or blk-mq, never a lock primitive.
    for (caller, _) in &s.scheduler_callers {
        assert!(!caller.contains("spin_lock"), "{caller}");
    }
    assert!(
        s.scheduler_callers.iter().any(|(c, _)| c == "bfq_dispatch_request"),
        "{:?}",
        s.scheduler_callers
    );
}

#[test]
fn perf_script_of_a_bfq_run() {
    let folded = fold_perf_script(&fixture("perf-script-bfq.txt")).unwrap();
    assert_eq!(folded.samples(), 600);
    let shares = KernelShares::of(&folded).unwrap();
    assert_eq!(shares.samples, 585, "the idle task's 15 samples are left out");
    let pct = |n: f64| 100.0 * n / 585.0;
    assert!((shares.bfq_pct - pct(113.0)).abs() < 1e-9, "{}", shares.bfq_pct);
    assert!((shares.group_stats_pct - pct(2.0)).abs() < 1e-9, "{}", shares.group_stats_pct);
    assert!(shares.stats_share_of_scheduler_pct.is_some());
}

// ---- The fidelity table on the recorded run ----

use schedlab_benches::experiment::kernel::fidelity::{self, Band};
use schedlab_benches::experiment::kernel::rows;
use schedlab_benches::experiment::kernel::{
    kernel_row, KernelRun, KernelSched, ModelRow, Point, PointResult,
};
use schedlab_benches::stats::Spread;
use std::time::Duration;

const POINT: Point = Point { threads: 2, iodepth: 32, ioengine: "io_uring" };

fn plain(round: usize, kiops: f64, cpu_us: f64) -> KernelRun {
    KernelRun {
        round,
        iops: kiops * 1e3,
        ios: (kiops * 1e3) as u64,
        runtime_s: 1.0,
        cpu_per_io_us: Some(cpu_us),
        fio_cpu_per_io_us: None,
        experiment_cpu_per_io_us: Some(cpu_us),
        other_cpus: Some(0.0),
        contention: None,
        stopped_s: None,
        reruns_stopped: 0,
    }
}

fn model(
    entry: &'static str,
    groups: usize,
    kiops: &[f64],
    cpu_us: f64,
    by_path: &[(&str, f64, f64)],
) -> ModelRow {
    let contended: f64 = by_path.iter().map(|p| p.2).sum();
    ModelRow {
        entry,
        groups,
        kiops: Spread::of(kiops.to_vec()),
        kiops_by_round: kiops.iter().copied().enumerate().collect(),
        sched_acquisitions_per_io: (!by_path.is_empty()).then(|| by_path.iter().map(|p| p.1).sum()),
        sched_by_path: by_path.iter().map(|&(p, a, c)| (p.to_string(), a, c)).collect(),
        cpu_per_io_us: Spread::of(vec![cpu_us]),
        sched_contentions_per_io: (!by_path.is_empty()).then(|| Spread::of(vec![contended])),
        sched_wait_avg_ns: None,
        consistent: true,
        stats_share_of_scheduler_pct: Some(7.5),
        scheduler_pct: None,
    }
}

/// The recorded bfq run of the fixtures (fio's I/Os, bpftrace's contention, perf's shares) beside
/// a made-up none and a made-up model: the table's kernel side is the fixtures' own counts.
fn point_from_fixtures() -> PointResult {
    let f = fio::parse(&fixture("fio-randread-bfq.json")).unwrap();
    let recorded = KernelRun {
        round: 0,
        iops: f.iops,
        ios: f.ios,
        runtime_s: f.runtime_s,
        contention: Some(
            ContentionSummary::of(
                &parse_bpftrace(&fixture("bpftrace-contention-bfq.json")).unwrap(),
            )
            .unwrap(),
        ),
        ..plain(0, 0.0, 0.0)
    };
    let mut bfq = kernel_row(
        KernelSched::Bfq,
        vec![plain(0, 240.0, 9.5), plain(1, 220.0, 9.4)],
        vec![recorded],
        Duration::ZERO,
    );
    bfq.profile = Some(
        KernelShares::of(&fold_perf_script(&fixture("perf-script-bfq.txt")).unwrap()).unwrap(),
    );
    let none = kernel_row(
        KernelSched::None,
        vec![plain(0, 400.0, 5.6), plain(1, 360.0, 5.6)],
        Vec::new(),
        Duration::ZERO,
    );
    let paths = [("insert", 0.0, 0.05), ("dispatch", 2.0, 0.10), ("completion", 1.0, 0.20)];
    PointResult {
        point: POINT,
        model_outside_ns: 5600,
        kernel: vec![none, bfq],
        model: vec![
            model("none", 0, &[260.0, 250.0], 6.8, &[]),
            model(fidelity::MODEL_BFQ, 0, &[220.0, 215.0], 7.9, &paths),
        ],
        model_elevator_ns: 0,
        side_by_side: Vec::new(),
        elevator: None,
        sites: None,
    }
}

#[test]
fn the_fidelity_table_counts_the_kernels_sites_from_the_recorded_run() {
    let rows = fidelity::rows(&point_from_fixtures(), 0, "6.18.44", 0.0, &[], 2);
    let row = |figure: &str| {
        rows.iter()
            .find(|r| r.figure == figure)
            .unwrap_or_else(|| panic!("no row `{figure}` in {rows:#?}"))
    };
    // Contended acquisitions by caller, counted from the fixture by a separate script, ÷ fio's
    // 256 725 I/Os: finish 71 897, dispatch 46 098, insert 22 773, bio merge 18 279, depth limit
    // 11 200 (170 247 in all).
    let ios = 256_725.0;
    for (path, n) in [
        ("completion", 71_897.0),
        ("dispatch", 46_098.0),
        ("insert", 22_773.0),
        ("bio-merge", 18_279.0),
        ("limit-depth", 11_200.0),
    ] {
        let r = row(&format!("contended acquisitions per I/O at {path}"));
        assert!((r.kernel.unwrap() - n / ios).abs() < 1e-9, "{path}: {:?}", r.kernel);
        assert_eq!(r.band, Band::Factor { factor: 1.5, floor: fidelity::CONTENTION_FLOOR });
    }
    assert!(
        (row("contended acquisitions per I/O, all sites").kernel.unwrap() - 170_247.0 / ios).abs()
            < 1e-9
    );
    // The model has no bio-merge path: it contends there 0 times, outside the band.
    let merge = row("contended acquisitions per I/O at bio-merge");
    assert_eq!((merge.model, merge.within), (Some(0.0), Some(false)));
    // Dispatch: 0.10 against 46 098 / 256 725 = 0.180: × 0.56, outside × 1.5.
    assert_eq!(row("contended acquisitions per I/O at dispatch").within, Some(false));
    // Completion: 0.20 against 0.280: × 0.71, within.
    assert_eq!(row("contended acquisitions per I/O at completion").within, Some(true));
    // Within-round ratios: kernel 240/400, 220/360 → median 0.6056; model 220/260, 215/250 → 0.8530.
    let r = row("bfq ÷ none, IOPS");
    assert!((r.kernel.unwrap() - (0.6 + 220.0 / 360.0) / 2.0).abs() < 1e-9);
    assert!((r.model.unwrap() - (220.0 / 260.0 + 0.86) / 2.0).abs() < 1e-9);
    assert_eq!(r.within, Some(false), "0.85 against 0.61 is not within 10 %");
    // The model's own within-round ratios go with the row, for the interval it is judged on
    // (two rounds here: too few for one, and the row says why).
    let rounds = r.model_rounds.as_ref().unwrap_or_else(|| panic!("no model rounds: {r:?}"));
    assert_eq!(rounds.runs.len(), 2, "{rounds:?}");
    assert!(r.model_no_interval.is_some(), "{r:?}");
    // Acquisitions per I/O: the kernel's 5 sites against the model's 3.
    let a = row("scheduler-lock acquisitions per I/O");
    assert_eq!((a.kernel, a.model, a.within), (Some(5.0), Some(3.0), Some(false)));
    // Extra CPU: kernel 9.45 − 5.6, model 7.9 − 6.8.
    let cpu = row("extra CPU per I/O of bfq over none");
    assert!((cpu.kernel.unwrap() - 3.85).abs() < 1e-9 && (cpu.model.unwrap() - 1.1).abs() < 1e-9);
    // A model whose bfq takes less CPU than none: a difference the accounting cannot resolve,
    // not a figure to judge (issue 44: −51.90 µs was judged as if real).
    let mut point = point_from_fixtures();
    for m in point.model.iter_mut().filter(|m| m.entry == "none") {
        m.cpu_per_io_us = Spread::of(vec![60.0]);
    }
    let rows = fidelity::rows(&point, 0, "6.18.44", 0.0, &[], 2);
    let cpu = rows.iter().find(|r| r.figure == "extra CPU per I/O of bfq over none").unwrap();
    assert_eq!((cpu.model, cpu.within), (None, None), "{cpu:?}");
    assert!((cpu.kernel.unwrap() - 3.85).abs() < 1e-9);
    // The deadline row's stand-in is named, and no groups row without groups.
    assert!(row("mq-deadline ÷ none, IOPS").source.contains("stand-in"));
    assert!(!rows.iter().any(|r| r.figure.contains("groups")));
    // The statistics' share has no band: shown, never judged.
    let st = row("statistics' share of the scheduler's work");
    assert_eq!((st.band, st.within), (Band::Unset, None));
    assert!(st.kernel.is_some());
}

#[test]
fn the_elevator_cost_is_the_extra_cpu_less_the_schedulers_own_share() {
    let bfq_shares =
        KernelShares::of(&fold_perf_script(&fixture("perf-script-bfq.txt")).unwrap()).unwrap();
    let none_shares = KernelShares::default();
    let (bfq_run, none_run) = (plain(0, 240.0, 9.45), plain(0, 400.0, 5.6));
    let profiled = [
        rows::Profiled { config: KernelSched::None, shares: &none_shares, run: &none_run },
        rows::Profiled { config: KernelSched::Bfq, shares: &bfq_shares, run: &bfq_run },
    ];
    let e = rows::ElevatorCost::of(&profiled).expect("none's and bfq's profiled runs are there");
    assert_eq!(e.basis, "experiment");
    let bfq = e.bfq.unwrap();
    // The fixture's profile: 113 of its 585 experiment samples have a BFQ frame; × the 9.45 µs
    // of the experiment's CPU per I/O.
    let own = 113.0 / 585.0 * 9.45;
    assert!((bfq.own_us - own).abs() < 1e-9, "{}", bfq.own_us);
    assert!((bfq.extra_us - 3.85).abs() < 1e-9);
    assert!(bfq.elevator_us.is_some_and(|us| (us - (3.85 - own)).abs() < 1e-9));
    assert_eq!(bfq.elevator_not_estimable, None);
    // Every frame listed grew over none's (which has none): none of them BFQ's own.
    assert!(
        !bfq.largest.is_empty()
            && bfq.largest.iter().all(|(f, us)| !f.starts_with("bfq_") && *us > 0.0),
        "{:?}",
        bfq.largest
    );
    // No mq-deadline profile: no figure for it; without none, nothing to subtract.
    assert_eq!(e.mq_deadline, None);
    assert_eq!(rows::ElevatorCost::of(&profiled[1..]), None);
}
