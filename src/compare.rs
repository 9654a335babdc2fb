//! `schedlab compare` (and plain `schedlab`): every safe variant side by side, interleaved round
//! by round, with lock counters and the seeds' ratios. The measuring is in
//! `schedlab_benches::compare`; this file parses arguments, shows progress, prints and writes JSON.

use crate::flags::{parse_locks, parse_variants, WorkloadArgs};
use crate::{check_output, exit, seconds, units, write_output, bad_input, ExperimentError, INTERRUPT};
use clap::Parser;
use indicatif::{ProgressBar, ProgressStyle};
use schedlab_benches::compare::{self, CompareConfig, CompareReport, Measure, Progress};
use schedlab_benches::workload::entry_name;
use schedlab_core::InsertPathKind;

#[derive(clap::Args, Debug, Clone)]
pub struct CompareArgs {
    /// Jobs (threads), 1..=1024 (with the fair lock at most 64 per CPU); default: every CPU.
    #[arg(long, value_parser = units::count::<1, 1024>, allow_negative_numbers = true)]
    threads: Option<u64>,
    /// Rounds, 1..=1000; each runs every variant once per lock kind, in a rotated order.
    #[arg(long, default_value_t = 3, value_parser = units::count::<1, 1000>, allow_negative_numbers = true)]
    rounds: u64,
    /// Lock kind of the scheduler and queue locks: fair-spin, parking-lot or both.
    #[arg(long, default_value = "fair-spin")]
    lock: String,
    /// Variants, comma-separated (default: every safe one).
    #[arg(long)]
    variants: Option<String>,
    /// Also run `unlocked` (refused with --churn: it is unsafe under group removal).
    #[arg(long)]
    include_unlocked: bool,
    /// lockstat (one run per variant and round: KIOPS and lock counters from the same run, the
    /// statistics switched on and off in alternating 100 ms windows whose pairs give their cost),
    /// both (two runs: plain KIOPS + separately instrumented counters) or plain (KIOPS only).
    #[arg(long, default_value = "lockstat")]
    measure: String,
    /// How instrumented runs time lock holds: sampled (one in 256, estimated) or exact.
    #[arg(long, default_value = "sampled", value_parser = crate::flags::lockstat_mode)]
    lockstat_mode: schedlab_core::lockstat::Mode,
    /// Measured time of each instrumented run with --measure both: seconds or a duration, more
    /// than 0, at most a day.
    #[arg(long, default_value = "1", value_parser = units::seconds, allow_hyphen_values = true)]
    lockstat_duration: f64,
    #[command(flatten)]
    workload: WorkloadArgs,
    /// Write everything, with provenance, to this JSON file (schema: notes/compare-schema.md).
    #[arg(long)]
    json: Option<std::path::PathBuf>,
    /// Leave out the per-lock lockstat tables.
    #[arg(long)]
    brief: bool,
}

#[derive(Parser)]
struct DefaultsOnly {
    #[command(flatten)]
    args: CompareArgs,
}

/// The arguments plain `schedlab` runs with.
pub fn default_args() -> CompareArgs {
    DefaultsOnly::parse_from(["schedlab"]).args
}

fn config(args: &CompareArgs) -> Result<CompareConfig, ExperimentError> {
    let cpus = std::thread::available_parallelism().map_or(2, |n| n.get());
    let threads = match args.threads {
        None => cpus,
        Some(t) if (1..=1024).contains(&t) => t as usize,
        Some(t) => return Err(bad_input(format!("--threads must be 1..=1024, got {t}"))),
    };
    if !(1..=1000).contains(&args.rounds) {
        return Err(bad_input(format!("--rounds must be 1..=1000, got {}", args.rounds)));
    }
    let measure = Measure::from_name(&args.measure)
        .ok_or_else(|| bad_input(format!("unknown --measure `{}` (known: plain, lockstat, both)", args.measure)))?;
    if args.include_unlocked && args.workload.jobs.churn > 0.0 {
        return Err(bad_input(
            "--include-unlocked cannot run with --churn: `unlocked` is unsafe under group removal",
        ));
    }
    // `--insert both`: every variant on each insert path, as entries `<variant>` and
    // `<variant>+lists`, interleaved like the variants.
    let paths: Vec<InsertPathKind> = if args.workload.jobs.insert == "both" {
        InsertPathKind::ALL.to_vec()
    } else {
        vec![crate::flags::parse_insert(&args.workload.jobs.insert)?]
    };
    let mut workload_args = args.workload.clone();
    workload_args.jobs.insert = InsertPathKind::Direct.name().into();
    let variants = parse_variants(args.variants.as_deref(), args.include_unlocked)?;
    let entries: Vec<&'static str> =
        paths.iter().flat_map(|&path| variants.iter().map(move |&v| entry_name(v, path))).collect();
    let cfg = CompareConfig {
        workload: workload_args.config(threads)?,
        variants: entries,
        locks: parse_locks(&args.lock)?,
        rounds: args.rounds as usize,
        measure,
        lockstat_duration: seconds("lockstat-duration", args.lockstat_duration, false)?,
        lockstat_window: std::time::Duration::from_millis(100),
        lockstat_mode: args.lockstat_mode,
        sum_sampling: args.workload.sum_sampling()?,
        noise: args.workload.noise_policy()?,
    };
    cfg.validate().map_err(bad_input)?;
    Ok(cfg)
}

pub fn progress_bar(total: u64) -> ProgressBar {
    let bar = ProgressBar::new(total);
    if let Ok(style) = ProgressStyle::with_template("{bar:30} {pos}/{len} runs, {elapsed} (about {eta} left) {msg}") {
        bar.set_style(style);
    }
    bar
}

/// Prints the whole report (tables and notes) to stdout.
pub fn print_report(report: &CompareReport, brief: bool) {
    let c = &report.config;
    let w = &c.workload;
    outln!(
        "\nschedlab compare: {} threads{}, {} round(s) x {} variant(s) x {}, {} s plain{} per run (+{} s ramp), {} groups, churn {}/s, {} bs {} B, iodepth {}, outside {} ns, {} stat slots",
        w.threads,
        if w.pin_cpus { " (pinned)" } else { "" },
        report.rounds_completed,
        c.variants.len(),
        c.locks.iter().map(|l| l.name()).collect::<Vec<_>>().join(" + "),
        w.duration.as_secs_f64(),
        match c.measure {
            Measure::Both => format!(" + {} s instrumented", c.lockstat_duration.as_secs_f64()),
            Measure::Lockstat => " (lock statistics on and off in 100 ms windows of the same run)".into(),
            Measure::Plain => String::new(),
        },
        w.ramp.as_secs_f64(),
        w.groups,
        w.churn_per_sec,
        w.rw.name(),
        w.bs_sectors as u64 * 512,
        w.iodepth,
        w.outside_ns,
        w.slots
    );
    outln!("{}", report.provenance.one_line());
    if report.interrupted {
        outln!("(interrupted: {} complete round(s); the tables use every run that finished)", report.rounds_completed);
    }
    outln!();
    out!("{}", compare::main_table(report));
    if let Some(warning) = compare::interference_warning(report) {
        outln!("\n{warning}");
    }
    outln!(
        "\n  x sched: KIOPS / sched-lock's in the same round (median). cont%: contended acquisitions; wait: per contended\n  acquisition (estimated from sampled waits); hold: per acquisition (estimated from sampled holds; lock counters {}). stats/sched hold:\n  time in statistics updates applied under the scheduler lock / its hold time (and the part of it in locked counter sums).",
        match c.measure {
            Measure::Lockstat => "from the same runs as the KIOPS",
            _ => "from the instrumented runs",
        }
    );
    outln!("\nThe seeds' ratios (kernel-bfq.md §1: 8 threads, i7-4850HQ, null_blk) beside the ones measured here:\n");
    out!("{}", compare::ratio_table(report));
    outln!(
        "\nWhat the lock statistics cost ({}) and CPU accounting of the measured windows:\n",
        match c.measure {
            Measure::Lockstat => "on against off windows of the same runs: each window against its two neighbours, median over all windows; the range is over the runs' own medians",
            _ => "instrumented runs against plain runs of the same rounds",
        }
    );
    out!("{}", compare::overhead_table(report));
    let costly: Vec<String> = report
        .results
        .iter()
        .filter(|r| r.lockstat_overhead_pct.is_some_and(|c| c > 5.0))
        .map(|r| format!("{}/{} ({:.1}%)", r.variant, r.lock.name(), r.lockstat_overhead_pct.unwrap_or(0.0)))
        .collect();
    if c.measure == Measure::Lockstat && !costly.is_empty() {
        outln!(
            "\nNOTE: the lock statistics cost more than 5 % in {}: there the counters describe a slower system than\nan unmeasured one; `--measure both` takes the KIOPS from separate plain runs.",
            costly.join(", ")
        );
    }
    if !brief {
        let tables = compare::lockstat_tables(report);
        if !tables.is_empty() {
            outln!("\nLock statistics (lockstat-like; wait over contended acquisitions; occup = hold total / wall time):\n");
            out!("{tables}");
        }
    }
    let bad: Vec<String> = report
        .results
        .iter()
        .filter(|r| r.consistent == Some(false))
        .map(|r| format!("{}/{}", r.variant, r.lock.name()))
        .collect();
    let not_run: Vec<String> =
        report.results.iter().filter(|r| r.status != "complete").map(|r| format!("{}/{} ({})", r.variant, r.lock.name(), r.status)).collect();
    for f in &report.failures {
        outln!(
            "\nFAILED: round {} {}/{}{}: {}",
            f.round + 1,
            f.variant,
            f.lock.name(),
            if f.instrumented { " (lockstat)" } else { "" },
            f.error
        );
    }
    if !not_run.is_empty() {
        outln!("\nNot every run finished: {} (their rows cover the runs that did).", not_run.join(", "));
    }
    if bad.is_empty() {
        outln!("\nEvery run that finished passed the end-of-run checks (requests and statistics conserved, every group and queue freed).");
    } else {
        outln!("\nINCONSISTENT: {} (see `schedlab run --variant V` for details)", bad.join(", "));
    }
}

/// Runs a comparison from parsed arguments.
pub fn cmd(args: &CompareArgs) -> Result<u8, ExperimentError> {
    let cfg = config(args)?;
    let json_out = check_output(args.json.as_deref())?;
    crate::out::progress(format_args!(
        "schedlab compare: {} runs, about {:.0} s (Ctrl-C, SIGTERM or SIGHUP stops it and keeps what finished)\n",
        cfg.total_runs(),
        cfg.estimated_seconds()
    ));
    for &lock in &cfg.locks {
        schedlab_benches::workload::warn_before_run(lock, cfg.workload.threads);
    }
    let bar = progress_bar(cfg.total_runs() as u64);
    let report = compare::run(&cfg, &INTERRUPT, &mut |p| match p {
        Progress::Start(step) => bar.set_message(format!(
            "round {} {} {}{}",
            step.round + 1,
            step.lock.name(),
            step.variant,
            if step.instrumented { " (lockstat)" } else { "" }
        )),
        Progress::Done(step, r) => {
            tracing::info!(
                run = step.index + 1,
                of = step.total,
                round = step.round + 1,
                variant = step.variant,
                lock = %step.lock,
                lockstat = step.instrumented,
                kiops = r.kiops,
                consistent = r.consistent,
                "run done"
            );
            bar.inc(1)
        }
        Progress::Failed(step, error) => {
            tracing::error!("run {} of {} failed (the comparison goes on): {error}", step.index + 1, step.total);
            bar.inc(1)
        }
    })
    .map_err(bad_input)?;
    bar.finish_and_clear();
    print_report(&report, args.brief);
    let mut code = exit::OK;
    if let Some(json_out) = &json_out {
        #[derive(serde::Serialize)]
        struct WithSignal<'a> {
            #[serde(flatten)]
            report: &'a CompareReport,
            /// The signal that stopped the comparison, if one did.
            signal: Option<&'static str>,
        }
        let doc = WithSignal { report: &report, signal: crate::signals::received().map(crate::signals::name) };
        let text = serde_json::to_string_pretty(&doc).map_err(|e| bad_input(format!("cannot serialise the report: {e}")))? + "\n";
        if write_output(json_out, text.as_bytes()) {
            outln!("wrote {}", json_out.path().display());
        } else {
            code = exit::WRITE_FAILED;
        }
    }
    Ok(if code != exit::OK {
        code
    } else if !report.all_consistent() {
        exit::CHECK_FAILED
    } else if !report.failures.is_empty() {
        exit::RUN_FAILED
    } else {
        exit::OK
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_parse_and_validate() {
        let args = default_args();
        let cfg = config(&args).unwrap_or_else(|e| panic!("{}", e.message));
        assert_eq!(cfg.locks, vec![schedlab_core::LockKind::FairSpin]);
        assert!(!cfg.variants.contains(&"unlocked"));
        assert!(cfg.estimated_seconds() <= 65.0, "default compare takes {} s", cfg.estimated_seconds());
    }
}
