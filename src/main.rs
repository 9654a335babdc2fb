//! `schedlab`: the workbench's command line.
//!
//! - `schedlab` (no arguments): `schedlab compare` with its defaults.
//! - `schedlab compare ...`: every variant side by side, interleaved rounds, lock counters, the seeds' ratios.
//! - `schedlab sweep ...`: KIOPS against threads, a CSV, an SVG chart and the model's prediction.
//! - `schedlab predict ...`: KIOPS against threads on any machine (a calibrated simulation);
//!   `--validate` measures it beside the prediction here.
//! - `schedlab variants`: the registered variants.
//! - `schedlab run ...`: one variant, one configuration, optionally written as JSON.
//! - `schedlab simulate ...`: fio-like jobs on a device model in virtual time (idling, weights).
//! - `schedlab flamegraph ...`: on-CPU flamegraphs per variant and where the time goes.
//! - `schedlab trace-summary FILE`: checks and summarises a trace written by `run --trace`.
//! - `schedlab kernel ...`: the same experiment on this machine's own BFQ, beside the model.
//!
//! Bad input gets one line on stderr and exit code 2, before any work (output paths included:
//! `benches/src/files/output.rs`); a signal stops any subcommand within about a second and keeps what
//! it finished (`signals.rs`); nothing panics on bad input, a full disk or a closed stdout
//! (`out.rs`). Diagnostics go through one `tracing` subscriber (`logging.rs`): `-v`/`RUST_LOG`
//! for logs, `run --trace FILE` for a Chrome / Perfetto timeline.
//!
//! Exit codes (also in `--help` and the README): 0 done; 1 a check failed (a run was
//! inconsistent, a trace's lock holds overlap); 2 bad input (arguments, input files, output
//! paths); 3 an output could not be written (disk full, a FIFO's reader left, stdout failed);
//! 4 a run failed (the driver's error; the other runs are kept); 128 + n when stopped by signal n:
//! 130 SIGINT, 143 SIGTERM, 129 SIGHUP.

use clap::{Parser, Subcommand};
use schedlab_benches::output::OutputFile;
use schedlab_benches::provenance::Provenance;
use schedlab_benches::workload::{run_named, RunResult, WorkloadConfig};
use schedlab_core::sync::AtomicBool;
use schedlab_core::LockKind;
use serde::Serialize;
use std::process::ExitCode;
use std::time::Duration;

#[macro_use]
mod out;
mod compare;
mod flags;
mod flamegraph;
mod kernel;
mod logging;
mod predict;
mod roundtrip;
mod signals;
mod simulate;
mod sweep;
mod units;

/// Set by the first SIGINT, SIGTERM or SIGHUP (`signals.rs`); every driver polls it.
static INTERRUPT: AtomicBool = AtomicBool::new(false);

/// The exit codes (see the crate documentation).
pub mod exit {
    pub const OK: u8 = 0;
    /// A check failed: an inconsistent run, overlapping lock holds in a trace.
    pub const CHECK_FAILED: u8 = 1;
    /// Bad input: arguments, input files, output paths (checked before any work).
    pub const BAD_INPUT: u8 = 2;
    /// An output could not be written after the work (the results were printed).
    pub const WRITE_FAILED: u8 = 3;
    /// A run failed (the driver's error); the other runs were kept and reported.
    pub const RUN_FAILED: u8 = 4;
}

const EXIT_CODES_HELP: &str = "Exit codes: 0 done; 1 a check failed (inconsistent run, overlapping lock holds); 2 bad input \
(arguments, input files, output paths: checked before any work); 3 an output could not be written; 4 a run failed (the \
others are kept). Signals: SIGINT (Ctrl-C) exits 130, SIGTERM 143, SIGHUP 129, after keeping what finished (tables, \
JSON, CSV, SVG and trace, marked interrupted); a second signal exits at once.";

/// Checks an optional output path before any work (exit 2 when it cannot be written).
fn check_output(path: Option<&std::path::Path>) -> Result<Option<OutputFile>, UsageError> {
    path.map(OutputFile::check).transpose().map_err(UsageError)
}

/// Writes an output; on failure logs one line and returns false (the caller exits with
/// [`exit::WRITE_FAILED`] and prints no "wrote" line).
fn write_output(out: &OutputFile, bytes: &[u8]) -> bool {
    match out.write(bytes) {
        Ok(()) => true,
        Err(e) => {
            tracing::error!("{e}");
            false
        }
    }
}

#[derive(Parser, Debug)]
#[command(name = "schedlab", version, about = "Lock-contention workbench: a BFQ-style scheduler with swappable group-statistics policies", after_help = EXIT_CODES_HELP)]
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
    #[command(after_help = EXIT_CODES_HELP)]
    Variants,
    /// Run one variant on the null device and report throughput and the end-of-run checks.
    #[command(after_help = EXIT_CODES_HELP)]
    Run(RunArgs),
    /// Every variant side by side, interleaved round by round: KIOPS, lock counters, the seeds' ratios.
    #[command(after_help = EXIT_CODES_HELP)]
    Compare(compare::CompareArgs),
    /// Throughput against thread count per variant and lock kind: a CSV, an SVG chart, the model's prediction.
    #[command(after_help = EXIT_CODES_HELP)]
    Sweep(sweep::SweepArgs),
    /// KIOPS against threads on any machine, from a simulation calibrated on single-threaded runs; --validate measures it here.
    #[command(after_help = EXIT_CODES_HELP)]
    Predict(predict::PredictArgs),
    /// Single-threaded cost of one request round trip per variant, interleaved and repeated.
    #[command(after_help = EXIT_CODES_HELP)]
    Roundtrip(roundtrip::RoundtripArgs),
    /// fio-like jobs against a device model (null, ssd, hdd) in virtual time: one fio-style line.
    #[command(after_help = EXIT_CODES_HELP)]
    Simulate(simulate::SimulateArgs),
    /// On-CPU flamegraphs per variant (pprof), a differential flamegraph, and where the time goes.
    #[command(after_help = EXIT_CODES_HELP)]
    Flamegraph(flamegraph::FlamegraphArgs),
    /// Check a trace written by `run --trace` and summarise it: tracks, slices, lock holds, waits, hand-overs.
    #[command(after_help = EXIT_CODES_HELP)]
    TraceSummary(TraceSummaryArgs),
    /// This machine's own kernel beside the model: fio under none, mq-deadline, bfq and bfq with
    /// cgroups on a loop device, lock contention, a kernel flamegraph; root, fio, perf, bpftrace.
    #[command(after_help = EXIT_CODES_HELP)]
    Kernel(kernel::KernelArgs),
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
    #[arg(long, value_parser = units::micros, allow_hyphen_values = true)]
    from_us: Option<f64>,
    /// Length of the excerpt, µs (more than 0, at most 10000000).
    #[arg(long, default_value_t = 200.0, value_parser = units::span_micros, allow_hyphen_values = true)]
    span_us: f64,
    /// Also draw 100 µs around the end of the longest lock wait (from 60 µs before it ends): what
    /// a convoy or a preempted lock holder looks like in this trace.
    #[arg(long)]
    stall_svg: Option<std::path::PathBuf>,
}

/// Exit 1 when a lock's holds overlap (the trace contradicts mutual exclusion); 2 for a file that
/// is not a well-formed trace.
fn cmd_trace_summary(args: &TraceSummaryArgs) -> Result<u8, UsageError> {
    use schedlab_benches::trace_check;
    let svg_out = check_output(args.svg.as_deref())?;
    let stall_out = check_output(args.stall_svg.as_deref())?;
    let text = std::fs::read_to_string(&args.file).map_err(|e| UsageError(format!("cannot read {}: {e}", args.file.display())))?;
    let trace = trace_check::parse(&text).map_err(|e| UsageError(format!("{}: {e}", args.file.display())))?;
    outln!("{}", trace_check::summary_text(&trace).trim_end_matches('\n'));
    let mut code = exit::OK;
    if let Some(svg) = &svg_out {
        let from = args.from_us.unwrap_or_else(|| trace_check::busiest_window(&trace, args.span_us));
        let name = args.file.file_name().map_or_else(|| args.file.display().to_string(), |n| n.to_string_lossy().into_owned());
        let title = format!("{name}: {:.0} µs from {:.1} µs", args.span_us, from);
        let drawing = trace_check::excerpt_svg(&trace, from, args.span_us, &title).map_err(UsageError)?;
        if write_output(svg, drawing.as_bytes()) {
            outln!("wrote {}", svg.path().display());
        } else {
            code = exit::WRITE_FAILED;
        }
    }
    if let Some(svg) = &stall_out {
        let Some(wait) = trace_check::longest_wait(&trace) else {
            return Err(UsageError(format!("{}: no lock waits to draw", args.file.display())));
        };
        let title = format!("longest wait: {} on thread {}, {:.1} µs, ending at {:.1} µs", wait.name, wait.tid, wait.duration_us(), wait.end_us);
        let drawing = trace_check::excerpt_svg(&trace, wait.end_us - 60.0, 100.0, &title).map_err(UsageError)?;
        if write_output(svg, drawing.as_bytes()) {
            outln!("wrote {} ({title})", svg.path().display());
        } else {
            code = exit::WRITE_FAILED;
        }
    }
    let overlapping = trace_check::lock_reports(&trace).iter().any(|r| r.overlapping_holds > 0);
    if overlapping {
        tracing::error!("{}: two holds of one lock overlap", args.file.display());
    }
    Ok(if code != exit::OK { code } else if overlapping { exit::CHECK_FAILED } else { exit::OK })
}

#[derive(clap::Args, Debug, Clone)]
struct RunArgs {
    /// Stats variant (see `schedlab variants`).
    #[arg(long)]
    variant: String,
    /// Submitting threads (one process each), 1..=1024; with the fair lock at most 64 per CPU
    /// (a collapsed FIFO spinlock with more could not stop promptly).
    #[arg(long, default_value_t = 2, value_parser = units::count::<1, 1024>, allow_negative_numbers = true)]
    threads: u64,
    /// Measured time: seconds (2, 0.5) or a duration (500ms, 1m); more than 0, at most a day.
    #[arg(long, default_value = "2", value_parser = units::seconds, allow_hyphen_values = true)]
    duration: f64,
    /// Time run before measuring: seconds or a duration, at most a day.
    #[arg(long, default_value = "0", value_parser = units::seconds, allow_hyphen_values = true)]
    ramp: f64,
    /// Lock kind of the scheduler and queue locks: fair-spin or parking-lot.
    #[arg(long, default_value = "fair-spin")]
    lock: String,
    #[command(flatten)]
    jobs: flags::WorkloadFlags,
    /// Measure the scheduler, queue and counter-sum locks (lockstat-like table): `--lockstat`
    /// (sampled: counts exact, holds timed one in 256 and contended waits one in 8, estimated; a
    /// few % of the throughput) or `--lockstat exact` (every hold and wait timed, and the sampled
    /// estimate of the same holds and waits beside it, for validation; costs more).
    #[arg(long, value_name = "MODE", num_args = 0..=1, default_missing_value = "sampled", require_equals = false, value_parser = flags::lockstat_mode)]
    lockstat: Option<schedlab_core::lockstat::Mode>,
    /// Write the result, with provenance, to this JSON file.
    #[arg(long)]
    json: Option<std::path::PathBuf>,
    /// Write a Chrome / Perfetto trace (JSON) of the paths, lock waits and holds and statistics
    /// updates to this file, for a window after the ramp-up (see --trace-window). Open it in
    /// ui.perfetto.dev or chrome://tracing; notes/tracing.md shows how to read it.
    #[arg(long)]
    trace: Option<std::path::PathBuf>,
    /// Time the trace covers, from the end of the ramp-up: seconds or a duration, more than 0
    /// (clipped to --duration).
    #[arg(long, default_value = "0.2", value_parser = units::seconds, allow_hyphen_values = true)]
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

pub(crate) fn parse_bs(s: &str) -> Result<u32, UsageError> {
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

/// A time option's value (already a finite, non-negative number of seconds: `units::seconds`),
/// range-checked: more than zero unless `allow_zero`, at most a day.
pub(crate) fn seconds(name: &str, v: f64, allow_zero: bool) -> Result<Duration, UsageError> {
    if !v.is_finite() || v < 0.0 {
        return Err(UsageError(format!("--{name} must be a finite time >= 0, got {v}")));
    }
    if !allow_zero && v == 0.0 {
        return Err(UsageError(format!("--{name} must be greater than zero")));
    }
    if v > 24.0 * 3600.0 {
        return Err(UsageError(format!("--{name} {v} s is more than a day")));
    }
    Ok(Duration::from_secs_f64(v))
}

fn workload_config(args: &RunArgs) -> Result<WorkloadConfig, UsageError> {
    let lock = LockKind::from_name(&args.lock)
        .ok_or_else(|| UsageError(format!("unknown lock kind `{}` (known: fair-spin, parking-lot)", args.lock)))?;
    let threads = args.threads as usize;
    let shape = flags::RunShape {
        threads,
        duration: args.duration,
        ramp: args.ramp,
        lock,
        lockstat: args.lockstat.is_some(),
        lockstat_mode: args.lockstat.unwrap_or(schedlab_core::lockstat::Mode::Sampled),
    };
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
    /// The signal that stopped the run (SIGINT, SIGTERM, SIGHUP), if one did.
    signal: Option<&'static str>,
    churn_removals: u64,
    /// Reads of every group's statistics during the run (`--stats-reads`).
    stats_reads: u64,
    /// Other processes' CPUs during the measured window (above a few tenths the jobs competed
    /// for CPUs), steal time, and this process's CPU busy %.
    other_cpus: Option<f64>,
    steal_cpus: Option<f64>,
    cpu_busy_pct: Option<f64>,
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
    outln!(
        "{}: {:.1} KIOPS over {:.2} s ({} threads, {}); per-thread KIOPS min/median/max {:.1}/{:.1}/{:.1}",
        r.variant, r.kiops, r.measured_s, r.threads, r.lock, min, med, max
    );
    let c = &r.requests;
    outln!(
        "requests: inserted {} dispatched {} merged {} completed {}; consistent: {}; groups live after teardown: {}; churn removals: {}",
        c.inserted, c.dispatched, c.merged, c.completed, r.consistent, r.groups_live_after, r.churn_removals
    );
    if r.stats_reads > 0 {
        outln!("statistics read {} times during the run (every group each time)", r.stats_reads);
    }
    if !r.consistent {
        outln!("consistency details: {:?}", r.consistency);
    }
    if r.interrupted {
        outln!("(interrupted: the numbers cover the part that ran)");
    }
}

fn cmd_run(args: &RunArgs, cfg: WorkloadConfig, json_out: Option<OutputFile>, trace: Option<schedlab_benches::output::Stream>, logging: &mut logging::Logging) -> Result<u8, UsageError> {
    schedlab_benches::workload::warn_before_run(cfg.lock, cfg.threads);
    let result = run_named(&args.variant, &cfg, &INTERRUPT);
    let mut code = exit::OK;
    if result.as_ref().is_ok_and(|r| r.interrupted) || result.is_err() {
        tracing::warn!(name: "run interrupted", target: logging::MARKER_TARGET, signal = signals::received().map(signals::name), "the run stopped early: the trace covers the part that ran");
    }
    if let Some(trace) = trace {
        logging.finish(trace.writer_thread());
        let window = cfg.trace_window.unwrap_or_default().min(cfg.duration);
        match trace.commit() {
            Ok(()) => outln!(
                "wrote trace {} ({:.0} ms after the ramp-up; not comparable with untraced KIOPS: every tracing site consulted the recorder during the whole run)",
                args.trace.as_deref().map_or_else(String::new, |p| p.display().to_string()),
                window.as_secs_f64() * 1e3
            ),
            Err(e) => {
                tracing::error!("{e}");
                code = exit::WRITE_FAILED;
            }
        }
    }
    let result = match result {
        Ok(r) => r,
        Err(e) => {
            tracing::error!("{e}");
            return Ok(if code == exit::OK { exit::RUN_FAILED } else { code });
        }
    };
    print_run(&result);
    schedlab_benches::workload::warn_after_run(&result);
    if cfg.lockstat {
        out!("{}", schedlab_benches::compare::lockstat_table(&result.locks));
    }
    if let Some(json_out) = &json_out {
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
            signal: signals::received().map(signals::name),
            churn_removals: result.churn_removals,
            stats_reads: result.stats_reads,
            other_cpus: result.other_cpus,
            steal_cpus: result.steal_cpus,
            cpu_busy_pct: result.cpu_busy_pct,
            consistency: &result.consistency,
            config: &cfg,
            locks: &result.locks,
        };
        let text = serde_json::to_string_pretty(&json).map_err(|e| UsageError(format!("cannot serialise the result: {e}")))? + "\n";
        if write_output(json_out, text.as_bytes()) {
            outln!("wrote {}", json_out.path().display());
        } else {
            code = exit::WRITE_FAILED;
        }
    }
    let ok = result.consistent && result.groups_live_after == 0 && result.queues_live_after == 0;
    Ok(if code != exit::OK { code } else if ok { exit::OK } else { exit::CHECK_FAILED })
}

/// One line for a panic, through the log (the default hook prints several, with a backtrace
/// hint). A panic is a bug: the driver turns one in a job thread into a failed run.
fn install_panic_hook() {
    std::panic::set_hook(Box::new(|info| {
        let msg = info
            .payload()
            .downcast_ref::<&str>()
            .map(|s| s.to_string())
            .or_else(|| info.payload().downcast_ref::<String>().cloned())
            .unwrap_or_else(|| "a panic".into());
        let at = info.location().map_or_else(String::new, |l| format!(" at {}:{}", l.file(), l.line()));
        let thread = std::thread::current().name().map_or_else(String::new, |n| format!(" in thread {n}"));
        use std::io::Write;
        let _ = writeln!(std::io::stderr(), "schedlab: internal error{thread}: {}{at}", msg.lines().next().unwrap_or(""));
    }));
}

fn main() -> ExitCode {
    install_panic_hook();
    // First, so that a signal at any later moment is seen (before this, the default action ends
    // the process: nothing has been started or written yet).
    let signal_problem = signals::install();
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => {
            use clap::error::ErrorKind;
            if matches!(e.kind(), ErrorKind::DisplayHelp | ErrorKind::DisplayVersion | ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand) {
                out!("{e}");
                return finish(exit::OK);
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
            return ExitCode::from(exit::BAD_INPUT);
        }
    };
    // `run` is checked before the subscriber is installed, so that bad input creates no trace
    // file; its output paths too, before any work.
    let run_setup = match &cli.command {
        Some(Command::Run(args)) => Some(workload_config(args).and_then(|cfg| {
            let json = check_output(args.json.as_deref())?;
            let trace = match check_output(args.trace.as_deref())? {
                Some(out) => Some(out.stream().map_err(UsageError)?),
                None => None,
            };
            Ok((cfg, json, trace))
        })),
        _ => None,
    };
    let trace_writer = match &run_setup {
        Some(Ok((_, _, Some(stream)))) => Some(stream.writer()),
        _ => None,
    };
    let request = match &cli.command {
        Some(Command::Run(args)) if trace_writer.is_some() => logging::LogRequest {
            verbose: cli.verbose,
            trace_file: trace_writer,
            trace_filter: &args.trace_filter,
            trace_args: !args.trace_no_args,
        },
        _ => logging::LogRequest::logs(cli.verbose),
    };
    let (mut logging, log_problem) = logging::init(&request);
    if let Err(msg) = log_problem.and(signal_problem) {
        tracing::error!("{msg}");
        return ExitCode::from(exit::BAD_INPUT);
    }
    tracing::debug!(command = ?cli.command, "parsed");
    let result = match cli.command {
        None => compare::cmd(&compare::default_args()),
        Some(Command::Variants) => {
            for v in schedlab_variants::ALL {
                outln!("{}\t{}", v.name, v.summary);
            }
            Ok(exit::OK)
        }
        Some(Command::Run(args)) => match run_setup {
            Some(Ok((cfg, json, trace))) => cmd_run(&args, cfg, json, trace, &mut logging),
            Some(Err(e)) => Err(e),
            None => Err(UsageError("internal: run was not set up".into())),
        },
        Some(Command::Compare(args)) => compare::cmd(&args),
        Some(Command::Sweep(args)) => sweep::cmd(&args),
        Some(Command::Predict(args)) => predict::cmd(&args),
        Some(Command::Roundtrip(args)) => roundtrip::cmd(&args).map_err(UsageError),
        Some(Command::Simulate(args)) => simulate::cmd(&args),
        Some(Command::Flamegraph(args)) => flamegraph::cmd(&args).map_err(UsageError),
        Some(Command::TraceSummary(args)) => cmd_trace_summary(&args),
        Some(Command::Kernel(args)) => kernel::cmd(&args),
    };
    let code = match result {
        Ok(code) => code,
        Err(UsageError(msg)) => {
            tracing::error!("{msg}");
            exit::BAD_INPUT
        }
    };
    drop(logging);
    finish(code)
}

/// The process's exit code: bad input and failed writes first, then the signal that stopped the
/// run (128 + its number), then the command's own code; stdout's failure counts as a failed write.
fn finish(code: u8) -> ExitCode {
    let mut code = code;
    if let Some(e) = out::finish() {
        tracing::error!("cannot write to standard output: {e}");
        if code != exit::BAD_INPUT {
            code = exit::WRITE_FAILED;
        }
    }
    if let Some(signal) = signals::received() {
        if code != exit::BAD_INPUT && code != exit::WRITE_FAILED {
            code = signals::exit_code(signal);
        }
    }
    ExitCode::from(code)
}
