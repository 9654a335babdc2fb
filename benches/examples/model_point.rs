//! The kernel-faithful model at one point, with the calibration an earlier `schedlab kernel
//! --json` report gave that point (its outside work, elevator cost and per-site pads), and its
//! scheduler lock's contention per site: for looking at the model's structure on a machine
//! without BFQ, beside the kernel figures that report recorded.
//!
//! ```sh
//! cargo run --release -p schedlab-benches --example model_point -- k.json JOBS IODEPTH [ROUNDS] [inline|context] [anywhere|between-requests]
//! ```
//!
//! Prints, per round, KIOPS and contended acquisitions per I/O in all and at each site, then
//! the medians. Bad input: one line and exit 2.

use schedlab_benches::driver::completion::CompletionMode;
use schedlab_benches::driver::turns::Preemption;
use schedlab_benches::driver::workload::{run_named, RunResult, WorkloadConfig};
use schedlab_benches::experiment::kernel::inject::model_from_report;
use schedlab_core::sync::AtomicBool;
use schedlab_core::{KernelProfile, LockKind};
use std::path::Path;
use std::process::ExitCode;
use std::time::Duration;

const SITES: [&str; 5] = ["bio-merge", "limit-depth", "insert", "dispatch", "completion"];

fn usage(why: &str) -> ExitCode {
    eprintln!("model_point: {why} (usage: model_point K.JSON JOBS IODEPTH [ROUNDS] [inline|context] [anywhere|between-requests])");
    ExitCode::from(2)
}

fn per_io(r: &RunResult) -> (f64, Vec<(String, f64)>) {
    let requests = r.kiops * 1e3 * r.measured_s;
    let Some(sched) = r.locks.iter().find(|l| l.name == "sched") else { return (0.0, Vec::new()) };
    let sites = sched
        .paths
        .iter()
        .map(|p| (p.path.name().to_string(), p.contentions as f64 / requests))
        .collect();
    (sched.contentions as f64 / requests, sites)
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    if v.is_empty() {
        return f64::NAN;
    }
    let n = v.len();
    if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    }
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.len() < 3 {
        return usage("three arguments at least");
    }
    let (Ok(jobs), Ok(iodepth)) = (args[1].parse::<usize>(), args[2].parse::<usize>()) else {
        return usage("JOBS and IODEPTH are whole numbers");
    };
    let rounds = match args.get(3).map(|r| r.parse::<usize>()) {
        None => 5,
        Some(Ok(r)) if (1..=100).contains(&r) => r,
        Some(_) => return usage("ROUNDS is 1..=100"),
    };
    let completion = match args.get(4).map(String::as_str) {
        None | Some("context") => CompletionMode::Context,
        Some("inline") => CompletionMode::Inline,
        Some(other) => return usage(&format!("unknown completion `{other}`")),
    };
    let preemption = match args.get(5).map(String::as_str) {
        None | Some("between-requests") => Preemption::BetweenRequests,
        Some("anywhere") => Preemption::Anywhere,
        Some(other) => return usage(&format!("unknown preemption `{other}`")),
    };
    let file = Path::new(&args[0]);
    let text = match std::fs::read_to_string(file) {
        Ok(t) => t,
        Err(e) => return usage(&format!("cannot read {}: {e}", file.display())),
    };
    let from = match model_from_report(file, &text, jobs, iodepth) {
        Ok(m) => m,
        Err(e) => return usage(&e.message),
    };
    let cfg = WorkloadConfig {
        threads: jobs,
        duration: Duration::from_secs(2),
        ramp: Duration::from_millis(500),
        lock: LockKind::FairSpin,
        groups: 0,
        iodepth,
        outside_ns: from.outside_ns,
        elevator_ns: from.elevator_ns,
        pads: from.pads,
        kernel: KernelProfile::Mainline,
        completion,
        preemption,
        lockstat: true,
        ..WorkloadConfig::default()
    };
    println!(
        "{} at {} jobs × iodepth {iodepth}: outside {} ns, elevator {} ns, pads {:?}",
        file.display(),
        jobs,
        from.outside_ns,
        from.elevator_ns,
        from.pads
    );
    let (mut kiops, mut all) = (Vec::new(), Vec::new());
    let mut sites: Vec<Vec<f64>> = vec![Vec::new(); SITES.len()];
    for round in 0..rounds {
        let r = match run_named("mainline", &cfg, &AtomicBool::new(false)) {
            Ok(r) => r,
            Err(e) => {
                eprintln!("model_point: round {}: {e}", round + 1);
                return ExitCode::from(4);
            }
        };
        let (total, by_site) = per_io(&r);
        let at = |s: &str| by_site.iter().find(|(n, _)| n == s).map_or(0.0, |(_, v)| *v);
        println!(
            "round {}: {:.1} KIOPS, contended per I/O {:.3} ({}), turns {}, other CPUs {:.2}",
            round + 1,
            r.kiops,
            total,
            SITES.iter().map(|s| format!("{s} {:.3}", at(s))).collect::<Vec<_>>().join(", "),
            r.turns,
            r.other_cpus.unwrap_or(f64::NAN)
        );
        kiops.push(r.kiops);
        all.push(total);
        for (i, s) in SITES.iter().enumerate() {
            sites[i].push(at(s));
        }
    }
    println!(
        "median: {:.1} KIOPS, contended per I/O {:.3} ({})",
        median(kiops),
        median(all),
        SITES
            .iter()
            .zip(sites)
            .map(|(s, v)| format!("{s} {:.3}", median(v)))
            .collect::<Vec<_>>()
            .join(", ")
    );
    ExitCode::SUCCESS
}
