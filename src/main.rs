//! `schedlab`: the workbench's command line.
//!
//! - `schedlab` (no arguments): `schedlab compare` with its defaults.
//! - `schedlab compare ...`: every variant side by side, interleaved rounds, lock counters, the seeds' ratios.
//! - `schedlab sweep ...`: KIOPS against threads, a CSV, an SVG chart and a scaling model.
//! - `schedlab variants`: the registered variants.
//! - `schedlab run ...`: one variant, one configuration, optionally written as JSON.
//! - `schedlab simulate ...`: fio-like jobs on a device model in virtual time (idling, weights).
//! - `schedlab flamegraph ...`: on-CPU flamegraphs per variant and where the time goes.
//! - `schedlab trace-summary FILE`: checks and summarises a trace written by `run --trace`.
//!
//! Bad input gets one line on stderr and exit code 2; an interrupted run (Ctrl-C) reports what it
//! measured. Diagnostics go through one `tracing` subscriber (`logging.rs`): `-v`/`RUST_LOG` for
//! logs, `run --trace FILE` for a Chrome / Perfetto timeline.

use clap::{Parser, Subcommand};
use schedlab_benches::provenance::Provenance;
use schedlab_benches::workload::{run_named, RunResult, WorkloadConfig};
use schedlab_core::sync::{AtomicBool, Ordering};
use schedlab_core::LockKind;
use serde::Serialize;
use std::process::ExitCode;
use std::time::Duration;

mod flags;
mod flamegraph;
mod logging;
mod compare;
mod roundtrip;
mod simulate;
mod sweep;

static INTERRUPT: AtomicBool = AtomicBool::new(false);

#[derive(Parser, Debug)]
#[command(name = "schedlab", version, about = "Lock-contention workbench: a BFQ-style scheduler with swappable group-statistics policies")]
struct Cli {
    /// Log the run's configuration and progress to stderr (-v info, -vv debug, -vvv trace);
    /// RUST_LOG, when set, takes precedence (tracing-subscriber's env-filter syntax).
    #[arg(short, long, action = clap::ArgAction::Count, global = true)]
    verbose: u8,
    #[command(subcommand)]
    command: Option<Command>,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// List the stats variants: name, a tab, a one-line summary.
    Variants,
    /// Run one variant on the null device and report throughput and the end-of-run checks.
    Run(RunArgs),
    /// Every variant side by side, interleaved round by round: KIOPS, lock counters, the seeds' ratios.
    Compare(compare::CompareArgs),
    /// Throughput against thread count per variant and lock kind: a CSV, an SVG chart, a scaling model.
    Sweep(sweep::SweepArgs),
    /// Single-threaded cost of one request round trip per variant, interleaved and repeated.
    Roundtrip(roundtrip::RoundtripArgs),
    /// fio-like jobs against a device model (null, ssd, hdd) in virtual time: one fio-style line.
    Simulate(simulate::SimulateArgs),
    /// On-CPU flamegraphs per variant (pprof), a differential flamegraph, and where the time goes.
    Flamegraph(flamegraph::FlamegraphArgs),
    /// Check a trace written by `run --trace` and summarise it: tracks, slices, lock holds, waits, hand-overs.
    TraceSummary(TraceSummaryArgs),
}

#[derive(clap::Args, Debug, Clone)]
struct TraceSummaryArgs {
    /// The trace file (Chrome / Perfetto JSON).
    file: std::path::PathBuf,
    /// Also draw an excerpt of the timeline (threads as bands: paths, lock waits and holds,
    /// statistics updates) to this SVG file.
    #[arg(long)]
    svg: Option<std::path::PathBuf>,
    /// Start of the excerpt, µs into the trace (default: where the least busy thread is busiest:
    /// steady state, not a stall).
    #[arg(long, allow_negative_numbers = true)]
    from_us: Option<f64>,
    /// Length of the excerpt, µs.
    #[arg(long, default_value_t = 200.0, allow_negative_numbers = true)]
    span_us: f64,
    /// Also draw 100 µs around the end of the longest lock wait (from 60 µs before it ends): what
    /// a convoy or a preempted lock holder looks like in this trace.
    #[arg(long)]
    stall_svg: Option<std::path::PathBuf>,
}

/// Exit 1 when a lock's holds overlap (the trace contradicts mutual exclusion); 2 for a file that
/// is not a well-formed trace.
fn cmd_trace_summary(args: &TraceSummaryArgs) -> Result<ExitCode, UsageError> {
    use schedlab_benches::trace_check;
    let text = std::fs::read_to_string(&args.file).map_err(|e| UsageError(format!("cannot read {}: {e}", args.file.display())))?;
    let trace = trace_check::parse(&text).map_err(|e| UsageError(format!("{}: {e}", args.file.display())))?;
    print!("{}", trace_check::summary_text(&trace));
    if let Some(svg) = &args.svg {
        let from = args.from_us.unwrap_or_else(|| trace_check::busiest_window(&trace, args.span_us));
        let name = args.file.file_name().map_or_else(|| args.file.display().to_string(), |n| n.to_string_lossy().into_owned());
        let title = format!("{name}: {:.0} µs from {:.1} µs", args.span_us, from);
        trace_check::excerpt_svg(&trace, from, args.span_us, svg, &title).map_err(UsageError)?;
        println!("wrote {}", svg.display());
    }
    if let Some(svg) = &args.stall_svg {
        let Some(wait) = trace_check::longest_wait(&trace) else {
            return Err(UsageError(format!("{}: no lock waits to draw", args.file.display())));
        };
        let title = format!("longest wait: {} on thread {}, {:.1} µs, ending at {:.1} µs", wait.name, wait.tid, wait.duration_us(), wait.end_us);
        trace_check::excerpt_svg(&trace, wait.end_us - 60.0, 100.0, svg, &title).map_err(UsageError)?;
        println!("wrote {} ({title})", svg.display());
    }
    let overlapping = trace_check::lock_reports(&trace).iter().any(|r| r.overlapping_holds > 0);
    if overlapping {
        tracing::error!("{}: two holds of one lock overlap", args.file.display());
    }
    Ok(if overlapping { ExitCode::from(1) } else { ExitCode::SUCCESS })
}

#[derive(clap::Args, Debug, Clone)]
struct RunArgs {
    /// Stats variant (see `schedlab variants`).
    #[arg(long)]
    variant: String,
    /// Submitting threads (one process each).
    #[arg(long, default_value_t = 2, allow_negative_numbers = true)]
    threads: i64,
    /// Measured seconds.
    #[arg(long, default_value_t = 2.0, allow_negative_numbers = true)]
    duration: f64,
    /// Seconds run before measuring.
    #[arg(long, default_value_t = 0.0, allow_negative_numbers = true)]
    ramp: f64,
    /// Lock kind of the scheduler and queue locks: fair-spin or parking-lot.
    #[arg(long, default_value = "fair-spin")]
    lock: String,
    #[command(flatten)]
    jobs: flags::WorkloadFlags,
    /// Measure the scheduler, queue and counter-sum locks (lockstat-like table; costs time).
    #[arg(long)]
    lockstat: bool,
    /// Write the result, with provenance, to this JSON file.
    #[arg(long)]
    json: Option<std::path::PathBuf>,
    /// Write a Chrome / Perfetto trace (JSON) of the paths, lock waits and holds and statistics
    /// updates to this file, for a window after the ramp-up (see --trace-window). Open it in
    /// ui.perfetto.dev or chrome://tracing; notes/tracing.md shows how to read it.
    #[arg(long)]
    trace: Option<std::path::PathBuf>,
    /// Seconds of the run the trace covers, from the end of the ramp-up (clipped to --duration).
    #[arg(long, default_value_t = 0.2, allow_negative_numbers = true)]
    trace_window: f64,
    /// What the trace keeps, in RUST_LOG syntax over the targets schedlab::path, schedlab::lock,
    /// schedlab::stats, schedlab::idle, schedlab::group (e.g. `schedlab::lock=trace` for lock
    /// slices only: fewer records, less distortion).
    #[arg(long, default_value = "schedlab=trace")]
    trace_filter: String,
    /// Leave the spans' fields (lock, path, group, pid, sector) out of the trace: about twice the
    /// requests per second while the window is open.
    #[arg(long)]
    trace_no_args: bool,
}

/// A one-line user error (exit code 2).
struct UsageError(String);

fn nonneg(name: &str, v: i64) -> Result<u64, UsageError> {
    u64::try_from(v).map_err(|_| UsageError(format!("--{name} must not be negative, got {v}")))
}

fn parse_bs(s: &str) -> Result<u32, UsageError> {
    let lower = s.trim().to_ascii_lowercase();
    let (digits, mult) = match lower.strip_suffix('k') {
        Some(d) => (d, 1024u64),
        None => (lower.as_str(), 1),
    };
    let bytes = digits.parse::<u64>().map_err(|_| UsageError(format!("--bs must be a size like 4096 or 4k, got `{s}`")))? * mult;
    if bytes == 0 || bytes % 512 != 0 || bytes > 128 * 1024 {
        return Err(UsageError(format!("--bs must be a multiple of 512 bytes up to 128k, got `{s}`")));
    }
    Ok((bytes / 512) as u32)
}

fn seconds(name: &str, v: f64, allow_zero: bool) -> Result<Duration, UsageError> {
    if !v.is_finite() || v < 0.0 || (!allow_zero && v == 0.0) {
        let what = if allow_zero { "must not be negative" } else { "must be greater than zero" };
        return Err(UsageError(format!("--{name} {what}, got {v}")));
    }
    if v > 24.0 * 3600.0 {
        return Err(UsageError(format!("--{name} {v} is more than a day")));
    }
    Ok(Duration::from_secs_f64(v))
}

fn workload_config(args: &RunArgs) -> Result<WorkloadConfig, UsageError> {
    let lock = LockKind::from_name(&args.lock)
        .ok_or_else(|| UsageError(format!("unknown lock kind `{}` (known: fair-spin, parking-lot)", args.lock)))?;
    let threads = nonneg("threads", args.threads)? as usize;
    let shape = flags::RunShape { threads, duration: args.duration, ramp: args.ramp, lock, lockstat: args.lockstat };
    let mut cfg = args.jobs.config(shape)?;
    if args.trace.is_some() {
        cfg.trace_window = Some(seconds("trace-window", args.trace_window, false)?);
    }
    cfg.validate(&args.variant).map_err(UsageError)?;
    Ok(cfg)
}

#[derive(Serialize)]
struct RunJson<'a> {
    provenance: Provenance,
    variant: &'a str,
    threads: usize,
    lock: LockKind,
    kiops: f64,
    per_thread_kiops: &'a [f64],
    requests: schedlab_core::RequestCounters,
    consistent: bool,
    groups_live_after: usize,
    queues_live_after: usize,
    measured_s: f64,
    interrupted: bool,
    churn_removals: u64,
    consistency: &'a schedlab_core::Consistency,
    config: &'a WorkloadConfig,
    /// The named locks' counters (empty without --lockstat).
    locks: &'a [schedlab_core::lockstat::LockSummary],
}

fn spread(v: &[f64]) -> (f64, f64, f64) {
    let mut s = v.to_vec();
    s.sort_by(f64::total_cmp);
    let n = s.len();
    let med = match n {
        0 => 0.0,
        _ if n % 2 == 1 => s[n / 2],
        _ => (s[n / 2 - 1] + s[n / 2]) / 2.0,
    };
    (s.first().copied().unwrap_or(0.0), med, s.last().copied().unwrap_or(0.0))
}

fn print_run(r: &RunResult) {
    let (min, med, max) = spread(&r.per_thread_kiops);
    println!(
        "{}: {:.1} KIOPS over {:.2} s ({} threads, {}); per-thread KIOPS min/median/max {:.1}/{:.1}/{:.1}",
        r.variant, r.kiops, r.measured_s, r.threads, r.lock, min, med, max
    );
    let c = &r.requests;
    println!(
        "requests: inserted {} dispatched {} merged {} completed {}; consistent: {}; groups live after teardown: {}; churn removals: {}",
        c.inserted, c.dispatched, c.merged, c.completed, r.consistent, r.groups_live_after, r.churn_removals
    );
    if !r.consistent {
        println!("consistency details: {:?}", r.consistency);
    }
    if r.interrupted {
        println!("(interrupted: the numbers cover the part that ran)");
    }
}

fn cmd_run(args: &RunArgs, cfg: WorkloadConfig, logging: &mut logging::Logging) -> Result<ExitCode, UsageError> {
    let result = run_named(&args.variant, &cfg, &INTERRUPT).map_err(UsageError)?;
    print_run(&result);
    if let Some(path) = &args.trace {
        logging.finish();
        let window = cfg.trace_window.unwrap_or_default().min(cfg.duration);
        println!(
            "wrote trace {} ({:.0} ms after the ramp-up; not comparable with untraced KIOPS: every tracing site consulted the recorder during the whole run)",
            path.display(),
            window.as_secs_f64() * 1e3
        );
    }
    if cfg.lockstat {
        print!("{}", schedlab_benches::compare::lockstat_table(&result.locks));
    }
    if let Some(path) = &args.json {
        let json = RunJson {
            provenance: Provenance::collect(),
            variant: result.variant,
            threads: result.threads,
            lock: result.lock,
            kiops: result.kiops,
            per_thread_kiops: &result.per_thread_kiops,
            requests: result.requests,
            consistent: result.consistent,
            groups_live_after: result.groups_live_after,
            queues_live_after: result.queues_live_after,
            measured_s: result.measured_s,
            interrupted: result.interrupted,
            churn_removals: result.churn_removals,
            consistency: &result.consistency,
            config: &cfg,
            locks: &result.locks,
        };
        let text = serde_json::to_string_pretty(&json).expect("serialisable");
        std::fs::write(path, text + "\n")
            .map_err(|e| UsageError(format!("cannot write {}: {e}", path.display())))?;
        println!("wrote {}", path.display());
    }
    let ok = result.consistent && result.groups_live_after == 0 && result.queues_live_after == 0;
    Ok(if ok { ExitCode::SUCCESS } else { ExitCode::from(1) })
}

/// The default action: `schedlab compare` with its defaults (every safe variant, all cores,
/// interleaved rounds, the fair lock; about 50 s).
fn cmd_summary() -> ExitCode {
    compare::cmd_default()
}

fn main() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => {
            use clap::error::ErrorKind;
            if matches!(e.kind(), ErrorKind::DisplayHelp | ErrorKind::DisplayVersion | ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand) {
                let _ = e.print();
                return ExitCode::SUCCESS;
            }
            // clap renders several lines (error, usage, tip): keep the error itself on one line.
            let rendered = e.to_string();
            let line = rendered
                .lines()
                .take_while(|l| !l.starts_with("Usage:") && !l.starts_with("For more information"))
                .map(str::trim)
                .filter(|l| !l.is_empty())
                .collect::<Vec<_>>()
                .join(" ");
            let (_logging, _) = logging::init(&logging::LogRequest::logs(0));
            tracing::error!("{}", line.trim_start_matches("error: "));
            return ExitCode::from(2);
        }
    };
    // `run` is checked before the subscriber is installed, so that bad input creates no trace file.
    let run_config = match &cli.command {
        Some(Command::Run(args)) => Some(workload_config(args)),
        _ => None,
    };
    let request = match (&cli.command, &run_config) {
        (Some(Command::Run(args)), Some(Ok(_))) => logging::LogRequest {
            verbose: cli.verbose,
            trace_file: args.trace.as_deref(),
            trace_filter: &args.trace_filter,
            trace_args: !args.trace_no_args,
        },
        _ => logging::LogRequest::logs(cli.verbose),
    };
    let (mut logging, log_problem) = logging::init(&request);
    if let Err(msg) = log_problem {
        tracing::error!("{msg}");
        return ExitCode::from(2);
    }
    tracing::debug!(command = ?cli.command, "parsed");
    let _ = ctrlc::set_handler(|| INTERRUPT.store(true, Ordering::Relaxed));
    let result = match cli.command {
        None => Ok(cmd_summary()),
        Some(Command::Variants) => {
            for v in schedlab_variants::ALL {
                println!("{}\t{}", v.name, v.summary);
            }
            Ok(ExitCode::SUCCESS)
        }
        Some(Command::Run(args)) => match run_config.expect("computed above for run") {
            Ok(cfg) => cmd_run(&args, cfg, &mut logging),
            Err(e) => Err(e),
        },
        Some(Command::Compare(args)) => compare::cmd(&args),
        Some(Command::Sweep(args)) => sweep::cmd(&args),
        Some(Command::Roundtrip(args)) => roundtrip::cmd(&args).map_err(UsageError),
        Some(Command::Simulate(args)) => simulate::cmd(&args),
        Some(Command::Flamegraph(args)) => flamegraph::cmd(&args).map_err(UsageError),
        Some(Command::TraceSummary(args)) => cmd_trace_summary(&args),
    };
    match result {
        Ok(code) => code,
        Err(UsageError(msg)) => {
            tracing::error!("{msg}");
            ExitCode::from(2)
        }
    }
}
