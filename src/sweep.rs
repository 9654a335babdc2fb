//! `schedlab sweep`: KIOPS against thread count per variant and lock kind; a CSV written point by
//! point, an SVG chart with the model's prediction (`schedlab predict`'s simulation, calibrated
//! single-threaded before the sweep) at the end. The measuring and the model are in
//! `schedlab_benches::sweep` and `schedlab_benches::predict`.

use crate::compare::progress_bar;
use crate::flags::{parse_list, parse_locks, parse_variants, WorkloadArgs};
use crate::{check_output, exit, seconds, units, write_output, bad_input, ExperimentError, INTERRUPT};
use schedlab_benches::compare::fmt_ns;
use schedlab_benches::provenance::Provenance;
use schedlab_benches::predict::calibrate::CalibrationSettings;
use schedlab_benches::predict::topology::Topology;
use schedlab_benches::predict::{self, CalibrationSet, Wanted};
use schedlab_benches::sweep::{self, PointKey, SweepConfig, SweepProgress, USL_MIN_POINTS};
use schedlab_benches::output::OutputFile;
use std::path::PathBuf;

#[derive(clap::Args, Debug, Clone)]
pub struct SweepArgs {
    /// Thread counts, e.g. "1,2" or "1-4" (default: 1 to the CPU count).
    #[arg(long)]
    threads: Option<String>,
    /// Also measure thread counts above the CPU count, up to this many, 1..=1024 (marked
    /// oversubscribed; never used by the model).
    #[arg(long, value_parser = units::count::<1, 1024>, allow_negative_numbers = true)]
    oversubscribe_to: Option<u64>,
    /// Variants, comma-separated (default: every safe one).
    #[arg(long)]
    variants: Option<String>,
    /// Also run `unlocked` (refused with --churn).
    #[arg(long)]
    include_unlocked: bool,
    /// Lock kind: fair-spin, parking-lot or both.
    #[arg(long, default_value = "fair-spin")]
    lock: String,
    /// Sweep the stat slot count too, e.g. "1,8,64" (default: --slots).
    #[arg(long)]
    sweep_slots: Option<String>,
    /// Sweep the work outside the scheduler too, ns, e.g. "0,500,2000" (default: --outside-ns).
    #[arg(long)]
    sweep_outside_ns: Option<String>,
    /// Measured time of the instrumented run of each point: seconds or a duration, at most a day
    /// (0: none, and no model).
    #[arg(long, default_value = "1", value_parser = units::seconds, allow_hyphen_values = true)]
    lockstat_duration: f64,
    #[command(flatten)]
    workload: WorkloadArgs,
    /// The CSV, rewritten (temporary file + rename) as soon as each point is measured; every row
    /// carries the sweep's settings. A device or FIFO is written through, row by row.
    #[arg(long, default_value = "schedlab-sweep.csv")]
    csv: PathBuf,
    /// The SVG chart written at the end.
    #[arg(long, default_value = "schedlab-sweep.svg")]
    svg: PathBuf,
    /// Keep the points already in --csv and measure only the missing ones (default: start afresh,
    /// replacing the file at the first point). The file must be a sweep CSV of this version
    /// measured with the same settings (groups, weights, churn, rw, bs, iodepth, slice idle, pin,
    /// seed, durations, sum sampling); a half-written last line is dropped.
    #[arg(long)]
    resume: bool,
    /// One-way cache-line transfer for the model, ns, 0..=1000000 (default: the model machine's;
    /// measured now by a ping-pong between two CPUs for this machine's profile).
    #[arg(long, value_parser = units::transfer_ns, allow_hyphen_values = true)]
    transfer_ns: Option<f64>,
    /// The machine the model simulates: a topology profile (JSON, notes/predict.md). Default: this
    /// machine's measured profile with --model-cores cores (a hypothetical machine of its cores).
    #[arg(long)]
    topology: Option<PathBuf>,
    /// Cores of the default model machine, 1..=1024.
    #[arg(long, default_value_t = 64, value_parser = units::count::<1, 1024>, allow_negative_numbers = true)]
    model_cores: u64,
    /// No model: skip the single-threaded calibration (a few seconds per variant and lock kind)
    /// and draw the measured points only.
    #[arg(long)]
    no_model: bool,
}


fn config(args: &SweepArgs) -> Result<SweepConfig, ExperimentError> {
    let cpus = std::thread::available_parallelism().map_or(1, |n| n.get());
    let mut threads: Vec<usize> = match &args.threads {
        Some(list) => parse_list("threads", list, 1024)?.into_iter().map(|t| t as usize).collect(),
        None => (1..=cpus).collect(),
    };
    if threads.contains(&0) {
        return Err(bad_input("--threads must be at least 1"));
    }
    match args.oversubscribe_to {
        Some(n) => {
            for t in cpus + 1..=n as usize {
                if !threads.contains(&t) {
                    threads.push(t);
                }
            }
        }
        None => {
            if let Some(&t) = threads.iter().find(|&&t| t > cpus) {
                return Err(bad_input(format!(
                    "--threads {t} is more than the {cpus} CPUs: oversubscribed points need --oversubscribe-to"
                )));
            }
        }
    }
    threads.sort_unstable();
    if args.include_unlocked && args.workload.jobs.churn > 0.0 {
        return Err(bad_input("--include-unlocked cannot run with --churn: `unlocked` is unsafe under group removal"));
    }
    let workload = args.workload.config(1)?;
    let slots = match &args.sweep_slots {
        Some(list) => parse_list("sweep-slots", list, 64)?.into_iter().map(|s| s as usize).collect(),
        None => vec![workload.slots],
    };
    let outside_ns = match &args.sweep_outside_ns {
        Some(list) => parse_list("sweep-outside-ns", list, 1_000_000_000)?,
        None => vec![workload.outside_ns],
    };
    if let Some(t) = args.transfer_ns {
        if !(t.is_finite() && t >= 0.0) {
            return Err(bad_input(format!("--transfer-ns must be a time >= 0, got {t}")));
        }
    }
    let lockstat_duration = seconds("lockstat-duration", args.lockstat_duration, true)?;
    let cfg = SweepConfig {
        workload,
        threads,
        cpus,
        variants: parse_variants(args.variants.as_deref(), args.include_unlocked)?,
        locks: parse_locks(&args.lock)?,
        slots,
        outside_ns,
        lockstat_duration,
        sum_sampling: args.workload.sum_sampling()?,
        noise: args.workload.noise_policy()?,
    };
    cfg.validate().map_err(bad_input)?;
    Ok(cfg)
}

/// Where the CSV goes: a regular file rewritten whole (temporary file + rename) at each point, or
/// a device or FIFO written through, row by row.
enum CsvSink {
    Replace(OutputFile),
    Through(schedlab_benches::output::Stream),
}

pub fn cmd(args: &SweepArgs) -> Result<u8, ExperimentError> {
    let cfg = config(args)?;
    // Every output is checked before any work.
    let csv_out = OutputFile::check(&args.csv).map_err(bad_input)?;
    let svg_out = check_output(Some(&args.svg))?.expect("a path was given");
    let settings = cfg.settings();
    let mut kept = Vec::new();
    let mut rows: Vec<String> = Vec::new();
    if args.resume {
        if !csv_out.is_regular() {
            return Err(bad_input(format!("--resume needs a regular file to read back, and {} is a device or FIFO", args.csv.display())));
        }
        match std::fs::read(&args.csv) {
            Ok(bytes) => {
                let text = String::from_utf8(bytes)
                    .map_err(|_| bad_input(format!("cannot resume from {}: it is not text (not a sweep CSV)", args.csv.display())))?;
                let resumed = sweep::parse_csv(&text, &settings).map_err(|e| bad_input(format!("cannot resume from {}: {e}", args.csv.display())))?;
                if resumed.dropped_partial_line {
                    tracing::warn!("{}: dropped a half-written last line (a sweep stopped while writing it)", args.csv.display());
                }
                kept = resumed.points;
                rows = resumed.rows;
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => return Err(bad_input(format!("cannot read {}: {e}", args.csv.display()))),
        }
    }
    let mut sink = if csv_out.is_regular() {
        CsvSink::Replace(csv_out)
    } else {
        let mut stream = csv_out.stream().map_err(bad_input)?;
        stream.append(sweep::csv_text(&[]).as_bytes()).map_err(bad_input)?;
        CsvSink::Through(stream)
    };
    let model_topology = args.topology.as_deref().map(Topology::load).transpose().map_err(bad_input)?;
    let skip: Vec<PointKey> = kept.iter().map(|p| p.key()).collect();
    let todo = cfg.points().into_iter().filter(|k| !skip.contains(k)).count();
    crate::out::progress(format_args!(
        "schedlab sweep: {todo} point(s) ({} kept), about {:.0} s; every point goes to {} as it is measured (Ctrl-C, SIGTERM or SIGHUP keeps them)\n",
        kept.len(),
        cfg.estimated_seconds() * todo as f64 / cfg.points().len().max(1) as f64,
        args.csv.display()
    ));
    let max_threads = cfg.threads.iter().copied().max().unwrap_or(1);
    for &lock in &cfg.locks {
        schedlab_benches::workload::warn_before_run(lock, max_threads);
    }
    let bar = progress_bar(todo as u64);
    let mut record = |point: &sweep::SweepPoint| -> Result<(), String> {
        let row = point.csv_row(&settings);
        match &mut sink {
            CsvSink::Replace(out) => {
                rows.push(row);
                out.write(sweep::csv_text(&rows).as_bytes())
            }
            CsvSink::Through(stream) => stream.append(format!("{row}\n").as_bytes()),
        }
    };
    let measured = sweep::run(
        &cfg,
        &skip,
        &INTERRUPT,
        &mut |p| match p {
            SweepProgress::Start { key, .. } => bar.set_message(format!(
                "{} {} threads={} slots={} outside={}ns",
                key.lock.name(),
                key.variant,
                key.threads,
                key.slots,
                key.outside_ns
            )),
            SweepProgress::Done(point) => {
                tracing::info!(variant = %point.variant, lock = %point.lock, threads = point.threads, kiops = point.kiops, "point done");
                bar.inc(1)
            }
        },
        &mut record,
    )
    .map_err(bad_input)?;
    bar.finish_and_clear();
    let interrupted = measured.interrupted || crate::signals::received().is_some();
    let noisy: Vec<&sweep::SweepPoint> = measured.points.iter().filter(|p| p.other_cpus > cfg.noise.max_other_cpus).collect();
    let mut points = kept.clone();
    points.extend(measured.points.iter().cloned());
    let prov = Provenance::collect();
    outln!(
        "schedlab sweep: {} point(s) in {}{}",
        points.len(),
        args.csv.display(),
        if interrupted { " (interrupted: the points that finished)" } else { "" }
    );
    outln!("{}", prov.one_line());
    let pct = |v: f64| if v.is_finite() { format!("{:.1}%", v) } else { "-".into() };
    let pct0 = |v: f64| if v.is_finite() { format!("{:.0}%", 100.0 * v) } else { "-".into() };
    outln!(
        "\n{:<11} {:<11} {:>7} {:>5} {:>8} {:>9} {:>17} {:>6} {:>9} {:>9} {:>10}",
        "variant", "lock", "threads", "slots", "outside", "KIOPS", "per-thread min/max", "cont%", "sched/req", "occup", "owner-chg"
    );
    for p in &points {
        outln!(
            "{:<11} {:<11} {:>7} {:>5} {:>8} {:>9.1} {:>17} {:>6} {:>9} {:>9} {:>10}{}",
            p.variant,
            p.lock.name(),
            p.threads,
            p.slots,
            p.outside_ns,
            p.kiops,
            format!("{:.1}/{:.1}", p.per_thread_min, p.per_thread_max),
            pct(p.sched_contention_pct),
            fmt_ns(p.sched_hold_per_req_ns),
            pct0(p.sched_occupancy),
            pct0(p.sched_owner_change_frac),
            if p.oversubscribed { "  (oversubscribed)" } else { "" }
        );
    }
    // The model's calibration: single-threaded, after the sweep's runs (about a second per
    // variant, lock kind and slot count measured); none when the sweep was interrupted.
    let mut calibrations: Vec<(usize, CalibrationSet)> = Vec::new();
    if !args.no_model && !interrupted && !points.is_empty() {
        let wanted = Wanted { variants: cfg.variants.clone(), locks: cfg.locks.clone(), inserts: vec![cfg.workload.insert] };
        crate::out::progress(format_args!(
            "schedlab sweep: calibrating the model ({} variant/lock entries × {} slot count(s), single-threaded; --no-model skips it)\n",
            wanted.entries().len(),
            cfg.slots.iter().filter(|s| points.iter().any(|p| p.slots == **s)).count()
        ));
        let settings = CalibrationSettings { windows: 3, rounds: 2000, ..CalibrationSettings::default() };
        for &slots in cfg.slots.iter().filter(|s| points.iter().any(|p| p.slots == **s)) {
            let w = schedlab_benches::workload::WorkloadConfig { slots, ..cfg.workload.clone() };
            match predict::calibrate_all(&w, &wanted, &settings, &INTERRUPT, &mut |_| {}) {
                Ok(set) => calibrations.push((slots, set)),
                Err(e) => {
                    if INTERRUPT.load(schedlab_core::sync::Ordering::Relaxed) {
                        break;
                    }
                    tracing::warn!("the model's calibration failed ({e}): no model");
                    break;
                }
            }
        }
    }
    let mut topo = match (&model_topology, calibrations.first()) {
        (Some(t), _) => Some(t.clone()),
        (None, Some((_, set))) => {
            let mut t = set.machine.clone();
            let cores = args.model_cores as usize;
            t.name = format!("{} cores like this machine's ({:.0} ns line transfer; hypothetical beyond {})", cores, t.transfer.core_ns, set.machine.cpus());
            t.cores = cores;
            t.threads_per_core = 1;
            t.smt.busy_slowdown = 1.0;
            t.smt.spin_slowdown = 1.0;
            Some(t)
        }
        (None, None) => None,
    };
    if let (Some(t), Some(x)) = (topo.as_mut(), args.transfer_ns) {
        t.transfer.core_ns = x;
        t.transfer.sibling_ns = t.transfer.sibling_ns.min(x);
    }
    let models = match &topo {
        Some(t) => sweep::models(&points, &calibrations, cfg.workload.insert, t, cfg.workload.seed),
        None => Vec::new(),
    };
    if let Some(t) = &topo {
        outln!(
            "\nMODEL, not measured: schedlab predict's simulation (calibrated on single-threaded runs and a line-transfer measurement, never on\nthese points) on {}; error = the largest |model − measured| ÷ measured over this sweep's thread counts. USL fitted only with >= {USL_MIN_POINTS} measured thread counts.\n",
            t.name
        );
        outln!(
            "{:<11} {:<11} {:>5} {:>8} {:>8} {:>8} {:>8} {:>9} {:>9} {:>9}  USL",
            "variant", "lock", "slots", "outside", "model@1", "model@2", "error", "@8", "@16", "@64"
        );
    } else {
        outln!("\nno model (--no-model, or its calibration did not run)");
    }
    for m in &models {
        let at = |n: usize| m.predicted.iter().find(|(t, _)| *t == n).map_or("-".into(), |(_, v)| format!("{v:.0}"));
        outln!(
            "{:<11} {:<11} {:>5} {:>8} {:>8} {:>8} {:>8} {:>9} {:>9} {:>9}  {}",
            m.variant,
            m.lock.name(),
            m.slots,
            m.outside_ns,
            at(1),
            at(2),
            m.error_pct.map_or("-".into(), |e| format!("{e:.1}%")),
            at(8),
            at(16),
            at(64),
            match m.usl {
                Some((s, k)) => format!("σ={s:.3} κ={k:.5}"),
                None => format!("not fitted ({} thread counts < {USL_MIN_POINTS})", m.measured_thread_counts),
            }
        );
    }
    let mut code = exit::OK;
    if let Some(e) = &measured.record_error {
        tracing::error!("{e} (the sweep stopped there)");
        code = exit::WRITE_FAILED;
    }
    if let CsvSink::Through(stream) = sink {
        if let Err(e) = stream.commit() {
            tracing::error!("{e}");
            code = exit::WRITE_FAILED;
        }
    }
    if points.is_empty() {
        outln!("\nno point finished: no chart");
    } else {
        let title = format!("schedlab sweep: KIOPS vs threads ({} CPUs, commit {})", cfg.cpus, prov.commit);
        let drawing = sweep::draw_svg(&points, &models, &title).map_err(bad_input)?;
        if write_output(&svg_out, drawing.as_bytes()) {
            if code == exit::OK {
                outln!("\nwrote {} and {}", args.csv.display(), args.svg.display());
            } else {
                outln!("\nwrote {}", args.svg.display());
            }
        } else {
            code = exit::WRITE_FAILED;
        }
    }
    for f in &measured.failures {
        outln!("FAILED point (the sweep went on without it): {f}");
    }
    let fair_disturbed: Vec<String> = points
        .iter()
        .filter(|p| p.lock == schedlab_core::LockKind::FairSpin && (p.oversubscribed || p.other_cpus > schedlab_benches::workload::OTHERS_DISTURB_CPUS))
        .map(|p| format!("{}@{}", p.variant, p.threads))
        .collect();
    if !fair_disturbed.is_empty() {
        outln!(
            "WARNING (fair-spin): {} point(s) ran with more runnable threads than CPUs (oversubscribed, or other processes using the CPUs): {}. {}.",
            fair_disturbed.len(),
            fair_disturbed.join(", "),
            schedlab_benches::workload::FAIR_LOCK_ADVICE
        );
    }
    if !noisy.is_empty() {
        outln!(
            "WARNING: {} point(s) kept although other processes used more than {} CPUs during them (retries exhausted): see the other_cpus column",
            noisy.len(),
            cfg.noise.max_other_cpus
        );
    }
    let consistent = points.iter().all(|p| p.consistent);
    if !consistent {
        outln!("INCONSISTENT points: see the `consistent` column of the CSV");
    }
    Ok(if code != exit::OK {
        code
    } else if !consistent {
        exit::CHECK_FAILED
    } else if !measured.failures.is_empty() {
        exit::RUN_FAILED
    } else {
        exit::OK
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lists_parse() {
        assert_eq!(parse_list("threads", "1,2,4", 8).ok().unwrap(), vec![1, 2, 4]);
        assert_eq!(parse_list("threads", "1-3,8", 8).ok().unwrap(), vec![1, 2, 3, 8]);
        assert!(parse_list("threads", "3-1", 8).is_err());
        assert!(parse_list("threads", "x", 8).is_err());
        assert!(parse_list("threads", "9", 8).is_err());
    }
}
