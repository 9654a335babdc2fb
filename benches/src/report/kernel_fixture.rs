//! A kernel report from the recorded kernel outputs of `benches/tests/fixtures/kernel` (fio's
//! I/Os, bpftrace's lock contention and perf's profile of one BFQ run) beside made-up `none`
//! and model rows: what the kernel report's tests render, and what the browser test opens as
//! the kernel page where the machine has no BFQ to run `schedlab kernel` on. Built with the
//! crate's tests, or with the `fixtures` feature (the root crate's tests turn it on).

use crate::experiment::kernel::contention::{parse_bpftrace, ContentionSummary};
use crate::experiment::kernel::profile::{fold_perf_script, KernelShares};
use crate::experiment::kernel::rows::{self, KernelRun, ModelRow, Point, PointResult, SideBySide};
use crate::experiment::kernel::sites::{waits_per_io, SiteCalibration, SiteSamples};
use crate::experiment::kernel::{
    fidelity, fio, kernel_row, Environment, KernelConfig, KernelReport,
};
use crate::experiment::kernel::{KernelSched, ModelOutside};
use crate::files::provenance::Provenance;
use crate::stats::Spread;
use std::time::Duration;

pub fn fixture(name: &str) -> String {
    let path =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/kernel").join(name);
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

pub fn run(round: usize, kiops: f64, cpu_us: f64) -> KernelRun {
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

pub fn model(entry: &'static str, kiops: &[f64], cpu_us: f64, contended: Option<f64>) -> ModelRow {
    ModelRow {
        entry,
        groups: 0,
        kiops: Spread::of(kiops.to_vec()),
        kiops_by_round: kiops.iter().copied().enumerate().collect(),
        sched_acquisitions_per_io: contended.map(|_| 3.0),
        sched_by_path: Vec::new(),
        cpu_per_io_us: Spread::of(vec![cpu_us]),
        sched_contentions_per_io: contended.map(|c| Spread::of(vec![c])),
        sched_wait_avg_ns: contended.map(|_| 412.0),
        consistent: true,
        stats_share_of_scheduler_pct: Some(7.5),
        scheduler_pct: None,
    }
}

/// The main point: the recorded bfq run of `fixtures/kernel` (fio's I/Os, bpftrace's
/// contention, perf's profile, its elevator cost and lock sites) beside a made-up none and
/// model, as `kernel_parsers.rs` builds it.
pub fn main_point() -> PointResult {
    let f = fio::parse(&fixture("fio-randread-bfq.json")).unwrap();
    let contention =
        ContentionSummary::of(&parse_bpftrace(&fixture("bpftrace-contention-bfq.json")).unwrap())
            .unwrap();
    let waits = waits_per_io(&contention, f.ios as f64);
    let recorded = KernelRun {
        iops: f.iops,
        ios: f.ios,
        runtime_s: f.runtime_s,
        contention: Some(contention),
        ..run(0, 0.0, 0.0)
    };
    let folded = fold_perf_script(&fixture("perf-script-bfq.txt")).unwrap();
    let mut bfq = kernel_row(
        KernelSched::Bfq,
        vec![run(0, 240.0, 9.5), run(1, 220.0, 9.4)],
        vec![recorded],
        Duration::ZERO,
    );
    bfq.profile = Some(KernelShares::of(&folded).unwrap());
    let none = kernel_row(
        KernelSched::None,
        vec![run(0, 400.0, 5.6), run(1, 360.0, 5.6)],
        Vec::new(),
        Duration::ZERO,
    );
    let none_shares = KernelShares::default();
    let (bfq_run, none_run) = (run(0, 240.0, 9.45), run(0, 400.0, 5.6));
    let profiled = [
        rows::Profiled { config: KernelSched::None, shares: &none_shares, run: &none_run },
        rows::Profiled {
            config: KernelSched::Bfq,
            shares: bfq.profile.as_ref().unwrap(),
            run: &bfq_run,
        },
    ];
    let elevator = rows::ElevatorCost::of(&profiled);
    let own = vec![("insert".to_string(), 0.21)];
    let sites =
        SiteCalibration::of(&SiteSamples::of(&folded).unwrap(), 9.45, Some(waits), None, own);
    let side_by_side = vec![
        SideBySide {
            what: "bfq ÷ none, IOPS".into(),
            kernel: Some(0.606),
            model: Some(0.853),
            unit: "×",
        },
        SideBySide {
            what: "extra CPU per I/O of bfq over none".into(),
            kernel: Some(3.85),
            model: Some(1.1),
            unit: "µs",
        },
    ];
    PointResult {
        point: Point { threads: 2, iodepth: 32, ioengine: "io_uring" },
        model_outside_ns: 5600,
        kernel: vec![none, bfq],
        model: vec![
            model("none", &[260.0, 250.0], 6.8, None),
            model(fidelity::MODEL_BFQ, &[220.0, 215.0], 7.9, Some(0.35)),
        ],
        model_elevator_ns: 3850,
        side_by_side,
        elevator,
        sites: Some(sites),
    }
}

/// A report of the recorded main point and a made-up second one at 1 job × iodepth 1 whose
/// mq-deadline run completed nothing.
pub fn recorded() -> KernelReport {
    let main = main_point();
    let other_point = Point { threads: 1, iodepth: 1, ioengine: "io_uring" };
    let other = PointResult {
        point: other_point,
        model_outside_ns: 6100,
        kernel: vec![
            kernel_row(KernelSched::None, vec![run(0, 31.0, 6.1)], Vec::new(), Duration::ZERO),
            kernel_row(KernelSched::MqDeadline, vec![run(0, 0.0, 0.0)], Vec::new(), Duration::ZERO),
        ],
        model: vec![model("none", &[29.5], 6.4, None)],
        model_elevator_ns: 0,
        side_by_side: Vec::new(),
        elevator: None,
        sites: None,
    };
    let fidelity = fidelity::rows(&main, 0, "6.18.44", 0.0, &[], 2);
    let environment = Environment {
        kernel_release: "6.18.44".into(),
        device: "/dev/loop1 over a sparse 1024 MiB file in /dev/shm (direct I/O)".into(),
        loop_device: true,
        direct_io: Some(true),
        fio: "fio-3.33".into(),
        perf: "perf version 6.1.192".into(),
        bpftrace: Some("bpftrace v0.17.0".into()),
        cgroup: Some("v1 (blkio)".into()),
        cleaned_up_before: Vec::new(),
    };
    let config = KernelConfig {
        threads: 2,
        rw: crate::driver::workload::Rw::RandRead,
        bs_sectors: 8,
        iodepth: 32,
        ioengine: "io_uring",
        duration: Duration::from_millis(500),
        ramp: Duration::from_millis(100),
        rounds: 2,
        groups: 0,
        weights: vec![100, 200, 300],
        size_bytes: 1 << 30,
        device: None,
        contention: true,
        profile: true,
        flamegraph_dir: None,
        model: true,
        model_lock: schedlab_core::LockKind::FairSpin,
        model_outside: ModelOutside::Kernel,
        model_elevator: ModelOutside::Kernel,
        model_kernel: schedlab_core::KernelProfile::default(),
        model_completion: crate::driver::completion::CompletionMode::Context,
        points: vec![main.point, other_point],
    };
    KernelReport {
        provenance: Provenance::collect(),
        environment,
        config,
        model_outside_ns: main.model_outside_ns,
        model_elevator_ns: main.model_elevator_ns,
        kernel: main.kernel,
        model: main.model,
        side_by_side: main.side_by_side,
        elevator: main.elevator,
        sites: main.sites,
        points: vec![other],
        fidelity,
        model_inputs: Vec::new(),
        warnings: vec!["the machine was loaded (load 12.9 on 2 CPUs)".into()],
        interrupted: false,
        failures: Vec::new(),
        output_failures: Vec::new(),
    }
}
