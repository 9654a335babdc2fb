//! `schedlab predict`: KIOPS against threads for machines this one is not, from a calibrated
//! discrete-event simulation (`schedlab_benches::predict`; notes/predict.md), and `--validate`:
//! measured against predicted where this machine can measure.

use crate::compare::progress_bar;
use crate::flags::{parse_list, parse_locks, parse_variants, WorkloadArgs};
use crate::{check_output, exit, units, write_output, bad_input, ExperimentError, INTERRUPT};
use schedlab_benches::compare::median;
use schedlab_benches::predict::calibrate::CalibrationSettings;
use schedlab_benches::predict::topology::Topology;
use schedlab_benches::experiment::validate::{self, MeasureProgress, ValidationConfig};
use schedlab_benches::predict::{self, CalibrationProgress, CalibrationSet, Prediction, Wanted};
use schedlab_benches::provenance::Provenance;
use schedlab_core::sync::Ordering;
use schedlab_core::{InsertPathKind, LockKind};
use serde::Serialize;
use std::path::PathBuf;

#[derive(clap::Args, Debug, Clone)]
pub struct PredictArgs {
    /// Thread counts to predict, e.g. "1-8" or "1,2,4,8,16" (default: every CPU count of the
    /// topology up to 16, then powers of two; with --validate: 1 to this machine's CPUs), each at
    /// most the topology's logical CPUs.
    #[arg(long)]
    threads: Option<String>,
    /// Variants, comma-separated (default: every safe one, from the registry).
    #[arg(long)]
    variants: Option<String>,
    /// Also predict `unlocked`.
    #[arg(long)]
    include_unlocked: bool,
    /// Lock kind: fair-spin, parking-lot or both.
    #[arg(long, default_value = "both")]
    lock: String,
    /// Outside work per request to predict (and measure), ns, e.g. "0,1000" (default: --outside-ns;
    /// with --validate: 0,1000).
    #[arg(long)]
    outside_list: Option<String>,
    /// The machine to predict for: a topology profile (JSON; notes/predict.md). Default: this
    /// machine, measured now (cores and siblings from sysfs, transfers by ping-pong, parking costs).
    #[arg(long)]
    topology: Option<PathBuf>,
    /// Use this calibration (written by --save-calibration) instead of calibrating now: then the
    /// prediction is the same every time for the same seed.
    #[arg(long)]
    calibration: Option<PathBuf>,
    /// Write the calibration (with this machine's measured profile) to this JSON file.
    #[arg(long)]
    save_calibration: Option<PathBuf>,
    /// Write this machine's measured topology profile to this JSON file.
    #[arg(long)]
    save_topology: Option<PathBuf>,
    /// Treat the outside work as real work, slowed by a busy hyperthread sibling (the kernel's
    /// path around the scheduler), not the workload's timed spin.
    #[arg(long)]
    outside_is_work: bool,
    /// Measure the workload at the thread counts (this machine's: by default 1 and 2) and print
    /// measured beside predicted, with the error and the variants' order.
    #[arg(long)]
    validate: bool,
    /// Rounds of the validation's runs, 1..=100 (the order rotates each round; medians reported).
    #[arg(long, default_value_t = 3, value_parser = units::count::<1, 100>, allow_negative_numbers = true)]
    rounds: u64,
    /// Calibration windows, 1..=100 (each figure is the median over windows).
    #[arg(long, default_value_t = 5, value_parser = units::count::<1, 100>, allow_negative_numbers = true)]
    calibration_windows: u64,
    /// Rounds of the calibration pattern per window and pass, 100..=1000000.
    #[arg(long, default_value_t = 3000, value_parser = units::count::<100, 1_000_000>, allow_negative_numbers = true)]
    calibration_rounds: u64,
    #[command(flatten)]
    workload: WorkloadArgs,
    /// Write the calibration, the profile, the predictions (and the validation) to this JSON file.
    #[arg(long)]
    json: Option<PathBuf>,
}

/// Default thread counts for `cpus` logical CPUs: all up to 16, then powers of two and `cpus`.
pub fn default_threads(cpus: usize) -> Vec<usize> {
    let mut v: Vec<usize> = (1..=cpus.min(16)).collect();
    let mut p = 32;
    while p < cpus {
        v.push(p);
        p *= 2;
    }
    if cpus > 16 && !v.contains(&cpus) {
        v.push(cpus);
    }
    v
}

struct Plan {
    wanted: Wanted,
    outside: Vec<u64>,
    threads: Option<Vec<usize>>,
    workload: schedlab_benches::workload::WorkloadConfig,
}

fn plan(args: &PredictArgs) -> Result<Plan, ExperimentError> {
    let inserts: Vec<InsertPathKind> = if args.workload.jobs.insert == "both" {
        InsertPathKind::ALL.to_vec()
    } else {
        vec![crate::flags::parse_insert(&args.workload.jobs.insert)?]
    };
    let mut wargs = args.workload.clone();
    wargs.jobs.insert = InsertPathKind::Direct.name().into();
    let workload = wargs.config(1)?;
    if workload.iodepth != 1 {
        return Err(bad_input(format!("--iodepth {}: the model runs the workload's iodepth 1 (one request per job in flight)", workload.iodepth)));
    }
    if workload.churn_per_sec > 0.0 {
        return Err(bad_input("--churn: the model has no group churn (predict runs without it)"));
    }
    if workload.slice_idle_ns > 0 {
        return Err(bad_input("--slice-idle-ns: the model has no idling (predict runs with slice_idle 0, as the seeds)"));
    }
    let outside = match &args.outside_list {
        Some(list) => parse_list("outside-list", list, 1_000_000_000)?,
        None if args.validate && args.workload.jobs.outside_ns == 0 => vec![0, 1000],
        None => vec![workload.outside_ns],
    };
    let threads = args
        .threads
        .as_deref()
        .map(|t| parse_list("threads", t, 1024).map(|v| v.into_iter().map(|x| x as usize).collect::<Vec<_>>()))
        .transpose()?;
    if threads.as_ref().is_some_and(|t| t.contains(&0)) {
        return Err(bad_input("--threads must be at least 1"));
    }
    Ok(Plan {
        wanted: Wanted { variants: parse_variants(args.variants.as_deref(), args.include_unlocked)?, locks: parse_locks(&args.lock)?, inserts },
        outside,
        threads,
        workload,
    })
}

#[derive(Serialize)]
struct PredictJson<'a> {
    provenance: Provenance,
    topology: &'a Topology,
    calibration: &'a CalibrationSet,
    seed: u64,
    outside_is_work: bool,
    predictions: &'a [Prediction],
    ratios: Vec<predict::PredictedRatio>,
    validation: Option<ValidationJson<'a>>,
    interrupted: bool,
}

#[derive(Serialize)]
struct ValidationJson<'a> {
    rounds: u64,
    duration_s: f64,
    rows: &'a [validate::Row],
    orderings: &'a [validate::OrderCheck],
    median_abs_error_pct: f64,
    max_abs_error_pct: f64,
    goal_pct: f64,
}

/// The validation goal: |error| within this everywhere.
const GOAL_PCT: f64 = 15.0;

pub fn cmd(args: &PredictArgs) -> Result<u8, ExperimentError> {
    let plan = plan(args)?;
    // Inputs and outputs are checked before any work.
    let json_out = check_output(args.json.as_deref())?;
    let save_cal = check_output(args.save_calibration.as_deref())?;
    let save_topo = check_output(args.save_topology.as_deref())?;
    let topo_file = args.topology.as_deref().map(Topology::load).transpose().map_err(bad_input)?;
    let cal_file = args.calibration.as_deref().map(CalibrationSet::load).transpose().map_err(bad_input)?;
    if let Some(set) = &cal_file {
        for (v, lock, insert) in plan.wanted.entries() {
            if set.find(v, lock, insert).is_none() {
                return Err(bad_input(format!(
                    "{} has no calibration of {v} on {lock} ({insert}): calibrate it (without --calibration) or ask for what it holds",
                    args.calibration.as_deref().map_or_else(String::new, |p| p.display().to_string())
                )));
            }
        }
    }
    let here = schedlab_benches::workload::allowed_cpus().len();
    let threads: Vec<usize> = match (&plan.threads, args.validate) {
        (Some(t), _) => t.clone(),
        (None, true) => (1..=here).collect(),
        (None, false) => default_threads(topo_file.as_ref().map_or(here, |t| t.cpus())),
    };
    if let Some(t) = &topo_file {
        if let Some(&n) = threads.iter().find(|&&n| n > t.cpus()) {
            return Err(bad_input(format!("--threads {n}: the topology `{}` has {} logical CPUs (the model runs one job per CPU)", t.name, t.cpus())));
        }
    }
    if args.validate {
        if let Some(&n) = threads.iter().find(|&&n| n > here) {
            return Err(bad_input(format!("--validate --threads {n}: this machine has {here} CPUs; measured points above that are oversubscribed (they measure the OS scheduler)")));
        }
    }
    let vcfg = args.validate.then(|| ValidationConfig {
        workload: plan.workload.clone(),
        wanted: plan.wanted.clone(),
        threads: threads.clone(),
        outside_ns: plan.outside.clone(),
        rounds: args.rounds as usize,
        noise: args.workload.noise_policy().unwrap_or_default(),
    });
    if let Some(v) = &vcfg {
        v.validate().map_err(bad_input)?;
    }

    // 1. Calibration (and this machine's profile).
    let set = match cal_file {
        Some(set) => set,
        None => {
            let entries = plan.wanted.entries().len();
            crate::out::progress(format_args!(
                "schedlab predict: measuring this machine, then calibrating {entries} variant/lock/path entr{} single-threaded (a few seconds each; Ctrl-C stops)\n",
                if entries == 1 { "y" } else { "ies" }
            ));
            let settings = CalibrationSettings { windows: args.calibration_windows as usize, rounds: args.calibration_rounds, ..CalibrationSettings::default() };
            let bar = progress_bar(1000);
            let r = predict::calibrate_all(&plan.workload, &plan.wanted, &settings, &INTERRUPT, &mut |p| match p {
                CalibrationProgress::Machine => bar.set_message("measuring this machine (transfers, wake-ups)"),
                CalibrationProgress::Start { variant, lock, insert, .. } => bar.set_message(format!("calibrating {variant} {lock} {insert}")),
                CalibrationProgress::Fraction(f) => bar.set_position((f * 1000.0) as u64),
            });
            bar.finish_and_clear();
            match r {
                Ok(set) => set,
                Err(_) if INTERRUPT.load(Ordering::Relaxed) => {
                    outln!("schedlab predict: interrupted while calibrating: nothing to predict");
                    return Ok(exit::OK);
                }
                Err(e) => {
                    tracing::error!("calibration failed: {e}");
                    return Ok(exit::RUN_FAILED);
                }
            }
        }
    };
    let mut code = exit::OK;
    if let Some(out) = &save_cal {
        let text = serde_json::to_string_pretty(&set).map_err(|e| bad_input(format!("cannot serialise the calibration: {e}")))? + "\n";
        if write_output(out, text.as_bytes()) {
            outln!("wrote calibration {}", out.path().display());
        } else {
            code = exit::WRITE_FAILED;
        }
    }
    if let Some(out) = &save_topo {
        let text = serde_json::to_string_pretty(&set.machine).map_err(|e| bad_input(format!("cannot serialise the profile: {e}")))? + "\n";
        if write_output(out, text.as_bytes()) {
            outln!("wrote topology {}", out.path().display());
        } else {
            code = exit::WRITE_FAILED;
        }
    }
    let topo = topo_file.unwrap_or_else(|| set.machine.clone());
    if let Some(&n) = threads.iter().find(|&&n| n > topo.cpus()) {
        return Err(bad_input(format!("--threads {n}: `{}` has {} logical CPUs (the model runs one job per CPU)", topo.name, topo.cpus())));
    }

    // 2. Predictions (deterministic for the seed).
    let seed = plan.workload.seed;
    let mut predictions = Vec::new();
    for (v, lock, insert) in plan.wanted.entries() {
        let cal = set.find(v, lock, insert).expect("calibrated or checked above");
        for &o in &plan.outside {
            predictions.extend(predict::predict_one(cal, &topo, &threads, o, seed, args.outside_is_work).map_err(bad_input)?);
        }
    }
    let prov = Provenance::collect();
    outln!("schedlab predict: MODEL, not measured — a discrete-event simulation calibrated on single-threaded runs");
    outln!("{}", prov.one_line());
    print_machine(&topo, &set);
    print_calibration(&set, &plan.wanted);
    print_predictions(&predictions, &threads, &plan.outside);
    let top = *threads.iter().max().unwrap_or(&1);
    let ratios = predict::seed_ratios(&predictions, top);
    print_ratios(&ratios);

    // 3. Validation.
    let mut interrupted = false;
    let mut validation_rows = Vec::new();
    let mut orderings = Vec::new();
    if let Some(vcfg) = &vcfg {
        let total = (vcfg.keys().len() * vcfg.rounds) as u64;
        crate::out::progress(format_args!(
            "schedlab predict --validate: {total} runs, about {:.0} s (Ctrl-C keeps what finished)\n",
            vcfg.estimated_seconds()
        ));
        for &lock in &vcfg.wanted.locks {
            schedlab_benches::workload::warn_before_run(lock, *vcfg.threads.iter().max().unwrap_or(&1));
        }
        let bar = progress_bar(total);
        let (measured, stopped) = validate::measure(vcfg, &INTERRUPT, &mut |p| match p {
            MeasureProgress::Start { round, key } => bar.set_message(format!(
                "round {} {} {}{} {} threads outside {} ns",
                round + 1,
                key.lock.name(),
                key.variant,
                if key.insert == InsertPathKind::Direct { String::new() } else { format!("+{}", key.insert) },
                key.threads,
                key.outside_ns
            )),
            MeasureProgress::Done => bar.inc(1),
        })
        .map_err(bad_input)?;
        bar.finish_and_clear();
        interrupted = stopped || crate::signals::received().is_some();
        validation_rows = validate::rows(&measured, &predictions);
        orderings = validate::orderings(&validation_rows);
        print_validation(&validation_rows, &orderings, vcfg, interrupted);
        if validation_rows.iter().any(|r| !r.failures.is_empty()) {
            code = code.max(exit::RUN_FAILED);
        }
    }
    if let Some(out) = &json_out {
        let (med, max) = validate::error_summary(&validation_rows);
        let json = PredictJson {
            provenance: prov,
            topology: &topo,
            calibration: &set,
            seed,
            outside_is_work: args.outside_is_work,
            predictions: &predictions,
            ratios,
            validation: vcfg.as_ref().map(|v| ValidationJson {
                rounds: v.rounds as u64,
                duration_s: v.workload.duration.as_secs_f64(),
                rows: &validation_rows,
                orderings: &orderings,
                median_abs_error_pct: med,
                max_abs_error_pct: max,
                goal_pct: GOAL_PCT,
            }),
            interrupted,
        };
        let text = serde_json::to_string_pretty(&json).map_err(|e| bad_input(format!("cannot serialise the results: {e}")))? + "\n";
        if write_output(out, text.as_bytes()) {
            outln!("\nwrote {}", out.path().display());
        } else {
            code = exit::WRITE_FAILED;
        }
    }
    Ok(code)
}

fn print_machine(topo: &Topology, set: &CalibrationSet) {
    outln!(
        "\nmachine modelled: {} — {} cores × {} threads; line transfer {:.1} ns between cores, {:.1} ns between siblings; SMT slowdown {:.2} (sibling busy) / {:.2} (spinning); pause {:.1} ns, yield {:.0} ns, wake-up {:.1} µs, wake call {:.1} µs; compute scale {:.2}",
        topo.name,
        topo.cores,
        topo.threads_per_core,
        topo.transfer.core_ns,
        topo.transfer.sibling_ns,
        topo.smt.busy_slowdown,
        topo.smt.spin_slowdown,
        topo.parking.pause_ns,
        topo.parking.yield_ns,
        topo.parking.wake_latency_ns / 1e3,
        topo.parking.unpark_cost_ns / 1e3,
        topo.compute_scale
    );
    match &topo.interruptions {
        Some(int) if int.rate_per_s > 0.0 && !int.durations_ns.is_empty() => {
            let mean = int.durations_ns.iter().sum::<f64>() / int.durations_ns.len() as f64;
            outln!(
                "interruptions: {:.0} a second per CPU, {:.1} µs on average (median {:.1} µs): {:.2} % of a CPU's time",
                int.rate_per_s,
                mean / 1e3,
                schedlab_benches::compare::median(&int.durations_ns) / 1e3,
                int.rate_per_s * mean / 1e7
            );
        }
        _ => outln!("interruptions: none modelled (the profile has none)"),
    }
    if set.machine != *topo {
        outln!(
            "calibrated on: {} (line transfer {:.1} ns): a section's lines measured there cost the modelled machine's transfer here",
            set.machine.name,
            set.machine.transfer.core_ns
        );
    }
}

fn print_calibration(set: &CalibrationSet, wanted: &Wanted) {
    outln!("\nCALIBRATION (single-threaded; two processes' sections; `hold ns × lines` per lock, lines pulled when the previous holder ran on another CPU):");
    for (v, lock, insert) in wanted.entries() {
        let Some(c) = set.find(v, lock, insert) else { continue };
        let mut parts = Vec::new();
        for m in &c.pair {
            let holds: Vec<String> = m
                .segments
                .iter()
                .filter_map(|s| s.lock.as_ref().map(|l| format!("{l} {:.0}×{:.1}{}", s.ns, s.lines, if s.probability < 0.995 { format!(" p{:.2}", s.probability) } else { String::new() })))
                .collect();
            let free: f64 = m.segments.iter().filter(|s| s.lock.is_none()).map(|s| s.ns).sum();
            let free_lines: f64 = m.segments.iter().filter(|s| s.lock.is_none()).map(|s| s.lines).sum();
            parts.push(format!("{} [{}{}out {:.0}×{:.1}]", m.call.name(), holds.join(", "), if holds.is_empty() { "" } else { "; " }, free, free_lines));
        }
        outln!(
            "  {:<11} {:<11} {:<6} one job {:>5.0} ns/request (loop {:.0}) | {}",
            c.variant,
            c.lock.name(),
            c.insert,
            c.solo_cycle_ns,
            c.loop_ns,
            parts.join(" ")
        );
        if !c.relayed && set.machine.cpus() > 1 {
            outln!("    WARNING: the relay between two CPUs measured nothing (the CPUs were busy with other processes): no lines, hand-offs move only the lock's line; calibrate again on a quieter machine");
        }
        if c.anomalies > 0 {
            outln!("    ({} calibration steps found the scheduler other than expected)", c.anomalies);
        }
    }
}

fn entry(p: &Prediction) -> String {
    if p.insert == "direct" {
        p.variant.clone()
    } else {
        format!("{}+{}", p.variant, p.insert)
    }
}

fn print_predictions(predictions: &[Prediction], threads: &[usize], outside: &[u64]) {
    outln!("\nPREDICTED KIOPS (model) against threads:");
    let mut header = format!("  {:<17} {:<11} {:>8}", "variant", "lock", "outside");
    for t in threads {
        header.push_str(&format!(" {:>7}", t));
    }
    outln!("{header}");
    let mut seen: Vec<(String, LockKind, u64)> = Vec::new();
    for p in predictions {
        let k = (entry(p), p.lock, p.outside_ns);
        if seen.contains(&k) {
            continue;
        }
        let mut line = format!("  {:<17} {:<11} {:>6}ns", k.0, p.lock.name(), p.outside_ns);
        for &t in threads {
            let v = predictions
                .iter()
                .find(|q| entry(q) == k.0 && q.lock == k.1 && q.outside_ns == k.2 && q.result.threads == t)
                .map_or("-".to_string(), |q| format!("{:.0}", q.result.kiops));
            line.push_str(&format!(" {v:>7}"));
        }
        outln!("{line}");
        seen.push(k);
    }
    let top = *threads.iter().max().unwrap_or(&1);
    outln!("\nWhere a job's time goes at {top} threads (model): ns per request per job — hold, hand-off (lock line + data lines + wake calls), wait, outside; and each lock's busy share");
    for p in predictions.iter().filter(|p| p.result.threads == top) {
        let b = &p.result.breakdown;
        let total = b.total().max(1e-9);
        let busy: Vec<String> = p.result.lock_busy.iter().map(|(l, f)| format!("{l} {:.0}%", 100.0 * f)).collect();
        outln!(
            "  {:<17} {:<11} {:>6}ns  hold {:>6.0} ({:>2.0}%)  hand-off {:>6.0} ({:>2.0}%)  wait {:>7.0} ({:>2.0}%)  outside {:>6.0} ({:>2.0}%)  | {}",
            entry(p),
            p.lock.name(),
            p.outside_ns,
            b.hold_ns,
            100.0 * b.hold_ns / total,
            b.handoff_ns,
            100.0 * b.handoff_ns / total,
            b.wait_ns,
            100.0 * b.wait_ns / total,
            b.outside_ns,
            100.0 * b.outside_ns / total,
            busy.join(", ")
        );
    }
    let _ = outside;
}

fn print_ratios(ratios: &[predict::PredictedRatio]) {
    if ratios.is_empty() {
        return;
    }
    outln!("\nThe seeds' ratios, predicted (model) at {} threads:", ratios[0].threads);
    for r in ratios {
        outln!(
            "  {:<26} {:>17} / {:<11} {:<11} outside {:>6} ns: {:>5.2}{}",
            r.name,
            r.numerator,
            r.denominator,
            r.lock.name(),
            r.outside_ns,
            r.predicted,
            r.seed.map_or(String::new(), |s| format!("   (seed {s:.2})"))
        );
    }
}

fn print_validation(rows: &[validate::Row], orderings: &[validate::OrderCheck], cfg: &ValidationConfig, interrupted: bool) {
    outln!(
        "\nVALIDATION: measured (median of {} round(s), min–max) beside predicted; error = (predicted − measured) ÷ measured{}",
        cfg.rounds,
        if interrupted { " (interrupted: the runs that finished)" } else { "" }
    );
    outln!(
        "  {:<17} {:<11} {:>8} {:>7} {:>10} {:>17} {:>10} {:>8} {:>7}",
        "variant", "lock", "outside", "threads", "measured", "(min–max)", "predicted", "error", "others"
    );
    for r in rows {
        let name = if r.insert == "direct" { r.variant.to_string() } else { format!("{}+{}", r.variant, r.insert) };
        let spread = if r.measured.runs.is_empty() { "-".into() } else { format!("({:.0}–{:.0})", r.measured.min, r.measured.max) };
        outln!(
            "  {:<17} {:<11} {:>6}ns {:>7} {:>10} {:>17} {:>10.0} {:>7} {:>6.2}{}",
            name,
            r.lock.name(),
            r.outside_ns,
            r.threads,
            if r.measured.runs.is_empty() { "-".into() } else { format!("{:.0}", r.measured.median) },
            spread,
            r.predicted,
            if r.error_pct.is_finite() { format!("{:+.1}%", r.error_pct) } else { "-".into() },
            r.other_cpus_max,
            if r.failures.is_empty() { String::new() } else { format!("  FAILED: {}", r.failures[0]) }
        );
    }
    outln!("\n  Ordering of the variants (fastest first), measured | predicted:");
    for o in orderings {
        outln!(
            "  {:<11} {:<6} outside {:>5} ns, {} threads: {} — {} | {}  ({:.0}% of pairs agree)",
            o.lock.name(),
            o.insert,
            o.outside_ns,
            o.threads,
            if o.same { "SAME" } else { "DIFFERENT" },
            o.measured.join(" > "),
            o.predicted.join(" > "),
            100.0 * o.pairs_agreeing
        );
    }
    let (med, max) = validate::error_summary(rows);
    let within = rows.iter().filter(|r| r.error_pct.is_finite() && r.error_pct.abs() <= GOAL_PCT).count();
    let with = rows.iter().filter(|r| r.error_pct.is_finite()).count();
    let same = orderings.iter().filter(|o| o.same).count();
    let by = |t: usize| {
        let e: Vec<f64> = rows.iter().filter(|r| r.threads == t).map(|r| r.error_pct.abs()).filter(|e| e.is_finite()).collect();
        (median(&e), e.iter().copied().fold(0.0, f64::max))
    };
    let mut per_threads = Vec::new();
    for &t in &cfg.threads {
        let (m, x) = by(t);
        per_threads.push(format!("{t} thread(s): median |error| {m:.1}%, max {x:.1}%"));
    }
    outln!(
        "\n  GOAL (within {GOAL_PCT:.0}% everywhere, same ordering): {} — {within}/{with} points within {GOAL_PCT:.0}%, median |error| {med:.1}%, max {max:.1}%; ordering the same in {same}/{} groups. {}",
        if with > 0 && within == with && same == orderings.len() { "MET" } else { "NOT MET" },
        orderings.len(),
        per_threads.join("; ")
    );
    let noisy = rows.iter().filter(|r| r.other_cpus_max > cfg.noise.max_other_cpus).count();
    if noisy > 0 {
        outln!(
            "  NOTE: {noisy} point(s) kept a run during which other processes used more than {} CPUs (retries exhausted): on a shared 2-CPU machine those measure the neighbours as much as the variant",
            cfg.noise.max_other_cpus
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn default_thread_counts() {
        assert_eq!(default_threads(2), vec![1, 2]);
        assert_eq!(default_threads(8), (1..=8).collect::<Vec<_>>());
        assert_eq!(default_threads(64), (1..=16).chain([32, 64]).collect::<Vec<_>>());
        assert_eq!(default_threads(48), (1..=16).chain([32, 48]).collect::<Vec<_>>());
    }
}
