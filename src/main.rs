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
pub(crate) use schedlab_benches::experiment::ExperimentError;
use schedlab_benches::files::output::OutputFile;
use schedlab_core::sync::AtomicBool;
use std::process::ExitCode;
use schedlab_benches::experiment::options::Context;

#[macro_use]
mod out;
#[cfg(test)]
mod arg_props;
#[cfg(test)]
mod flag_props;
#[cfg(test)]
mod path_props;
mod compare;
mod deps;
mod flamegraph;
mod kernel;
mod logging;
mod paths;
mod predict;
mod progress;
mod report_out;
mod roundtrip;
mod run;
mod signals;
mod simulate;
mod sweep;
mod trace_summary;

/// Set by the first SIGINT, SIGTERM or SIGHUP (`signals.rs`); every driver polls it.
static INTERRUPT: AtomicBool = AtomicBool::new(false);

const EXIT_CODES_HELP: &str = "Exit codes: 0 done; 1 a check failed (inconsistent run, overlapping lock holds); 2 bad input \
(arguments, input files, output paths: checked before any work); 3 an output could not be written; 4 a run failed (the \
others are kept). Signals: SIGINT (Ctrl-C) exits 130, SIGTERM 143, SIGHUP 129, after keeping what finished (tables, \
JSON, CSV, SVG and trace, marked interrupted); a second stop (another Ctrl-C, or another sender's signal over 0.3 s \
later) exits at once; a supervisor's signal to the process and then its group is one stop.";

pub(crate) use paths::{check_input, check_output};

/// Writes an output; on failure logs one line and returns false (the caller adds an output
/// failure, exit 3, and prints no "wrote" line).
fn write_output(out: &OutputFile, bytes: &[u8]) -> bool {
    match out.write(bytes) {
        Ok(()) => true,
        Err(e) => {
            out::error(e);
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
    Run(run::RunArgs),
    /// Every variant side by side, interleaved round by round: KIOPS, lock counters, the seeds' ratios.
    #[command(after_help = EXIT_CODES_HELP)]
    Compare(compare::CompareArgs),
    /// Throughput against thread count per variant and lock kind: a CSV, an SVG chart, the model's prediction.
    #[command(after_help = EXIT_CODES_HELP)]
    Sweep(sweep::SweepArgs),
    /// KIOPS against threads on any machine, from a simulation calibrated on single-threaded runs; --validate measures it here.
    #[command(after_help = EXIT_CODES_HELP, mut_arg("svg", |a| a.requires("validate")))]
    Predict(predict::PredictArgs),
    /// Single-threaded cost of one request round trip per variant, interleaved and repeated.
    #[command(after_help = EXIT_CODES_HELP)]
    Roundtrip(roundtrip::RoundtripArgs),
    /// fio-like jobs against a device model (null, ssd, hdd) in virtual time: one fio-style line.
    #[command(after_help = EXIT_CODES_HELP)]
    Simulate(simulate::SimulateArgs),
    /// On-CPU flamegraphs per variant (pprof), a differential flamegraph, and where the time goes.
    #[command(
        after_help = EXIT_CODES_HELP,
        mut_arg("json", |a| a.conflicts_with("folded")),
        mut_arg("report", |a| a.conflicts_with("folded"))
    )]
    Flamegraph(flamegraph::FlamegraphArgs),
    /// Check a trace written by `run --trace` and summarise it: tracks, slices, lock holds, waits, hand-overs.
    #[command(after_help = EXIT_CODES_HELP)]
    TraceSummary(trace_summary::TraceSummaryArgs),
    /// This machine's own kernel beside the model: fio under none, mq-deadline, bfq and bfq with
    /// cgroups on a loop device, lock contention, a kernel flamegraph; root, fio, perf, bpftrace.
    #[command(after_help = EXIT_CODES_HELP)]
    Kernel(kernel::KernelArgs),
}

/// The workload flags that only the validation's runs use: in `predict`, each requires
/// `--validate` (declared on the command tree, since the flattened `WorkloadArgs` is shared with
/// subcommands where every run uses them).
const PREDICT_VALIDATION_ONLY: &[&str] = &["duration", "ramp", "retries", "max_other_cpus", "stats_reads", "pin"];

/// The CLI's definition: the derive's, plus the dependencies that a flag shared by several
/// subcommands has in one of them only. Parsing, `--help` and the generated tests all read this.
pub(crate) fn command() -> clap::Command {
    use clap::CommandFactory;
    Cli::command().mut_subcommand("predict", |c| PREDICT_VALIDATION_ONLY.iter().fold(c, |c, id| c.mut_arg(*id, |a| a.requires("validate"))))
}

/// Parses arguments against [`command`].
pub(crate) fn parse_from<I, T>(argv: I) -> Result<Cli, clap::Error>
where
    I: IntoIterator<Item = T>,
    T: Into<std::ffi::OsString> + Clone,
{
    use clap::FromArgMatches;
    let mut cmd = command();
    let matches = cmd.try_get_matches_from_mut(argv)?;
    Cli::from_arg_matches(&matches).map_err(|e| e.format(&mut cmd))
}

/// clap's error as one line: its rendering has several (error, usage, tip).
pub(crate) fn clap_error_line(e: &clap::Error) -> String {
    let rendered = e.to_string();
    let line = rendered
        .lines()
        .take_while(|l| !l.starts_with("Usage:") && !l.starts_with("For more information"))
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect::<Vec<_>>()
        .join(" ");
    line.trim_start_matches("error: ").to_string()
}

/// A one-line user error, found before any work (exit code 2).
pub(crate) fn bad_input(message: impl Into<String>) -> ExperimentError {
    ExperimentError::bad_input(message)
}

/// Builds a configuration from an experiment's options (`schedlab_benches::experiment::options`):
/// the translation gets the stop flag and the path registry's input check, and what it says has
/// no effect is printed as warnings (also when it refuses).
pub(crate) fn configure<T>(build: impl FnOnce(&mut Context) -> Result<T, ExperimentError>) -> Result<T, ExperimentError> {
    let mut cx = Context::new(&INTERRUPT, &check_input);
    let built = build(&mut cx);
    for warning in cx.warnings {
        out::warning(warning);
    }
    built
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

/// Every path the command reads or writes, declared before any work (`paths.rs`). The match is
/// exhaustive: a new subcommand must declare its paths to compile.
fn declared(command: &Option<Command>) -> Result<paths::Paths, ExperimentError> {
    match command {
        None | Some(Command::Variants) => Ok(paths::Paths::default()),
        Some(Command::Run(a)) => run::paths(a),
        Some(Command::Compare(a)) => compare::paths(a),
        Some(Command::Sweep(a)) => sweep::paths(a),
        Some(Command::Predict(a)) => predict::paths(a),
        Some(Command::Roundtrip(a)) => roundtrip::paths(a),
        Some(Command::Simulate(a)) => simulate::paths(a),
        Some(Command::Flamegraph(a)) => flamegraph::paths(a),
        Some(Command::TraceSummary(a)) => trace_summary::paths(a),
        Some(Command::Kernel(a)) => kernel::paths(a),
    }
}

/// The CLI's definition as the generated tests read it (`SCHEDLAB_DESCRIBE=cli`): one line per
/// option of every subcommand: subcommand, option (`--long`, or the positional's name), kind
/// (`path` for a path-valued option, `value`, `flag`), the options it conflicts with.
fn describe_cli() {
    let cli = command();
    for sub in cli.get_subcommands() {
        outln!("{}\t\t\t", sub.get_name());
        for arg in sub.get_arguments() {
            let name = match arg.get_long() {
                Some("help" | "version") => continue,
                Some(long) => format!("--{long}"),
                None if arg.is_positional() => arg.get_id().as_str().to_ascii_uppercase(),
                None => continue,
            };
            let takes_value = arg.get_action().takes_values();
            let kind = match arg.get_value_hint() {
                clap::ValueHint::AnyPath | clap::ValueHint::FilePath | clap::ValueHint::DirPath if takes_value => "path",
                _ if takes_value => "value",
                _ => "flag",
            };
            let conflicts: Vec<String> = sub.get_arg_conflicts_with(arg).iter().filter_map(|a| a.get_long().map(|l| format!("--{l}"))).collect();
            outln!("{}\t{name}\t{kind}\t{}", sub.get_name(), conflicts.join(","));
        }
    }
}

/// Whether the command was started with its standard output closed (`>&-`). Rust's runtime
/// reopens a closed standard descriptor on `/dev/null` before `main` (read and write, so that no
/// file the command opens takes its number), which hides the closing; a shell's `>/dev/null`
/// opens it write-only. So a standard output that is `/dev/null` opened for reading and writing
/// was closed (or given as `1<>/dev/null`, which prints nothing either).
fn stdout_was_closed() -> bool {
    use std::os::unix::fs::FileTypeExt;
    // SAFETY: F_GETFL reads a descriptor's flags; no memory is involved.
    let flags = unsafe { libc::fcntl(1, libc::F_GETFL) };
    let is_dev_null = |m: std::fs::Metadata, null: std::fs::Metadata| {
        use std::os::unix::fs::MetadataExt;
        m.file_type().is_char_device() && m.rdev() == null.rdev()
    };
    let same = match (std::fs::metadata("/proc/self/fd/1"), std::fs::metadata("/dev/null")) {
        (Ok(m), Ok(null)) => is_dev_null(m, null),
        _ => false,
    };
    flags != -1 && flags & libc::O_ACCMODE == libc::O_RDWR && same
}

fn main() -> ExitCode {
    install_panic_hook();
    signals::ignore_file_size_signal();
    // A closed standard output loses everything the command prints: refused before any work,
    // as `ls >&-` is (a closed input or error stream is held by the runtime, so that no file
    // takes its number).
    if stdout_was_closed() {
        out::error("standard output is closed (>&-): the tables would be lost; redirect it to a file or /dev/null");
        return ExitCode::from(schedlab_benches::experiment::ErrorKind::BadInput.exit_code());
    }
    if std::env::var_os("SCHEDLAB_DESCRIBE").is_some_and(|v| v == "cli") {
        describe_cli();
        return finish(Ok(()));
    }
    if std::env::var_os("SCHEDLAB_DESCRIBE").is_some_and(|v| v == "requires") {
        deps::describe_requires();
        return finish(Ok(()));
    }
    if std::env::var_os("SCHEDLAB_DESCRIBE").is_some_and(|v| v == "conflicts") {
        deps::describe_conflicts();
        return finish(Ok(()));
    }
    // First, so that a signal at any later moment is seen (before this, the default action ends
    // the process: nothing has been started or written yet).
    let signal_problem = signals::install();
    let cli = match parse_from(std::env::args_os()) {
        Ok(cli) => cli,
        Err(e) => {
            use clap::error::ErrorKind;
            if matches!(e.kind(), ErrorKind::DisplayHelp | ErrorKind::DisplayVersion | ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand) {
                out!("{e}");
                return finish(Ok(()));
            }
            out::error(clap_error_line(&e));
            return ExitCode::from(schedlab_benches::experiment::ErrorKind::BadInput.exit_code());
        }
    };
    // Every path, before any work (and before `run` opens its trace).
    let declaration = declared(&cli.command);
    if std::env::var_os("SCHEDLAB_DESCRIBE").is_some_and(|v| v == "paths") {
        // For the generated tests: what the command declares, checked nothing, ran nothing.
        return finish(declaration.map(|declared_paths| {
            for d in &declared_paths.0 {
                outln!("{}\t{}\t{}", d.role.name(), d.flag, d.path.display());
                if let paths::Role::Dir(files) = &d.role {
                    for f in files {
                        outln!("file\t{}\t{}", d.flag, d.path.join(f).display());
                    }
                }
            }
        }));
    }
    if let Err(e) = declaration.and_then(|paths| paths::declare(&paths)) {
        out::error(&e);
        paths::release();
        return ExitCode::from(e.kind.exit_code());
    }
    // `run` is checked before the subscriber is installed, so that bad input creates no trace
    // file; its output paths too, before any work.
    let run_setup = match &cli.command {
        Some(Command::Run(args)) => Some(run::workload_config(args).and_then(|cfg| {
            let claimed = args.outputs.outputs().claim::<schedlab_benches::report::run::RunReport>()?;
            let trace = match check_output(args.trace.as_deref())? {
                Some(out) => Some(out.stream().map_err(bad_input)?),
                None => None,
            };
            Ok((cfg, claimed, trace))
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
        out::error(msg);
        paths::release();
        return ExitCode::from(schedlab_benches::experiment::ErrorKind::BadInput.exit_code());
    }
    tracing::debug!(command = ?cli.command, "parsed");
    let result: Result<(), ExperimentError> = match cli.command {
        None => compare::cmd(&compare::default_args()),
        Some(Command::Variants) => {
            for v in schedlab_variants::ALL {
                outln!("{}\t{}", v.name, v.summary);
            }
            Ok(())
        }
        Some(Command::Run(args)) => match run_setup {
            Some(Ok((cfg, claimed, trace))) => run::cmd(&args, cfg, claimed, trace, &mut logging),
            Some(Err(e)) => Err(e),
            None => Err(bad_input("internal: run was not set up")),
        },
        Some(Command::Compare(args)) => compare::cmd(&args),
        Some(Command::Sweep(args)) => sweep::cmd(&args),
        Some(Command::Predict(args)) => predict::cmd(&args),
        Some(Command::Roundtrip(args)) => roundtrip::cmd(&args),
        Some(Command::Simulate(args)) => simulate::cmd(&args),
        Some(Command::Flamegraph(args)) => flamegraph::cmd(&args),
        Some(Command::TraceSummary(args)) => trace_summary::cmd(&args),
        Some(Command::Kernel(args)) => kernel::cmd(&args),
    };
    if let Err(e) = &result {
        if !e.message.is_empty() {
            out::error(e);
        }
    }
    drop(logging);
    finish(result)
}

/// The process's exit code, from the kind of the worst failure (`ErrorKind::exit_code`, the
/// README's table): bad input, then a failed output (stdout's failure is one), then a stop (128 +
/// the signal's number), then a failed check, then a failed run. Every message was printed.
fn finish(result: Result<(), ExperimentError>) -> ExitCode {
    use schedlab_benches::experiment::{ErrorKind, Failures};
    paths::release();
    let mut failures = Failures::default();
    if let Err(e) = result {
        failures.add(ExperimentError::already_told(e.kind));
    }
    if let Some(e) = out::finish() {
        out::error(format_args!("cannot write to standard output: {e}"));
        failures.add(ExperimentError::already_told(ErrorKind::OutputFailed));
    }
    if signals::received().is_some() {
        failures.add(ExperimentError::already_told(ErrorKind::Stopped));
    }
    match failures.finish() {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => match (e.kind, signals::received()) {
            (ErrorKind::Stopped, Some(signal)) => ExitCode::from(signals::exit_code(signal)),
            (kind, _) => ExitCode::from(kind.exit_code()),
        },
    }
}
