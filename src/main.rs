//! `schedlab`: the workbench's command line.
//!
//! - `schedlab` (no arguments): `schedlab compare` with its defaults.
//! - `schedlab compare ...`: every variant side by side, interleaved rounds, lock counters, the
//!   seeds' ratios.
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
//! `benches/src/files/output.rs`); a signal stops any subcommand within about a second and keeps
//! what it finished (`signals.rs`); nothing panics on bad input, a full disk or a closed stdout
//! (`out.rs`). Diagnostics go through one `tracing` subscriber (`logging.rs`): `-v`/`RUST_LOG`
//! for logs, `run --trace FILE` for a Chrome / Perfetto timeline.
//!
//! Exit codes (also in `--help` and the README): 0 done; 1 a check failed (a run was
//! inconsistent, a trace's lock holds overlap); 2 bad input (arguments, input files, output
//! paths); 3 an output could not be written (disk full, a FIFO's reader left, stdout failed);
//! 4 a run failed (the driver's error; the other runs are kept); 128 + n when stopped by signal n:
//! 130 SIGINT, 143 SIGTERM, 129 SIGHUP.
//!
//! ## The map: stages, bottom first
//!
//! This file is the top: argument parsing and one call per command. **A module imports only the
//! stages below its own** (never one above, never a sibling of its own stage, never this file),
//! so no module imports itself round a circle; `tests/layering.rs` reads this map and checks it.
//!
//! ```text
//! 6 arg_props, flag_props, path_props: the command tree's generated tests (test builds only)
//! 5 deps: which options depend on another, read from the command tree
//! 4 cli: the command tree (clap's derive) and the paths each command declares
//! 3 run, compare, sweep, predict, roundtrip, simulate, flamegraph, trace_summary, kernel,
//!   variants: the commands, each its options, its outputs and one experiment call
//! 2 logging, report_out, config: the log, every report's outputs, options to a configuration
//! 1 signals, paths, progress: the stop flag, the path registry, the progress bar
//! 0 out: standard output that cannot panic, the lines on stderr, the warnings kept for reports
//! ```

use schedlab_benches::experiment::{ErrorKind, ExperimentError, Failures};
use std::process::ExitCode;

#[macro_use]
mod out;
#[cfg(test)]
mod arg_props;
mod cli;
mod compare;
mod config;
mod deps;
#[cfg(test)]
mod flag_props;
mod flamegraph;
mod kernel;
mod logging;
#[cfg(test)]
mod path_props;
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
mod variants;

use cli::Command;

fn main() -> ExitCode {
    out::install_panic_hook();
    signals::ignore_file_size_signal();
    // A closed standard output loses everything the command prints: refused before any work,
    // as `ls >&-` is (a closed input or error stream is held by the runtime, so that no file
    // takes its number).
    if out::stdout_was_closed() {
        let lost = "the tables would be lost; redirect it to a file or /dev/null";
        out::error(format_args!("standard output is closed (>&-): {lost}"));
        return ExitCode::from(ErrorKind::BadInput.exit_code());
    }
    // For the generated tests: the command tree, read from clap's definition.
    let describe = std::env::var("SCHEDLAB_DESCRIBE").unwrap_or_default();
    let describe_tree: Option<fn()> = match describe.as_str() {
        "cli" => Some(cli::describe_cli),
        "requires" => Some(deps::describe_requires),
        "conflicts" => Some(deps::describe_conflicts),
        _ => None,
    };
    if let Some(describe_tree) = describe_tree {
        describe_tree();
        return finish(Ok(()));
    }
    // First, so that a signal at any later moment is seen (before this, the default action ends
    // the process: nothing has been started or written yet).
    let signal_problem = signals::install();
    let cli = match cli::parse_from(std::env::args_os()) {
        Ok(cli) => cli,
        Err(e) => {
            use clap::error::ErrorKind as Clap;
            let help = Clap::DisplayHelpOnMissingArgumentOrSubcommand;
            if [Clap::DisplayHelp, Clap::DisplayVersion, help].contains(&e.kind()) {
                out!("{e}");
                return finish(Ok(()));
            }
            out::error(cli::clap_error_line(&e));
            return ExitCode::from(ErrorKind::BadInput.exit_code());
        }
    };
    // Every path, before any work (and before `run` opens its trace).
    let declaration = cli::declared(&cli.command);
    if describe == "paths" {
        // For the generated tests: what the command declares, checked nothing, ran nothing.
        return finish(declaration.map(|declared| paths::describe(&declared)));
    }
    if let Err(e) = declaration.and_then(|paths| paths::declare(&paths)) {
        out::error(&e);
        paths::release();
        return ExitCode::from(e.kind.exit_code());
    }
    if let Err(msg) = signal_problem {
        out::error(msg);
        paths::release();
        return ExitCode::from(ErrorKind::BadInput.exit_code());
    }
    let log = logging::Start::new(cli.verbose, format!("{:?}", cli.command));
    let result = match cli.command {
        None => compare::cmd(&compare::default_args(), log),
        Some(Command::Variants) => variants::cmd(log),
        Some(Command::Run(args)) => run::cmd(&args, log),
        Some(Command::Compare(args)) => compare::cmd(&args, log),
        Some(Command::Sweep(args)) => sweep::cmd(&args, log),
        Some(Command::Predict(args)) => predict::cmd(&args, log),
        Some(Command::Roundtrip(args)) => roundtrip::cmd(&args, log),
        Some(Command::Simulate(args)) => simulate::cmd(&args, log),
        Some(Command::Flamegraph(args)) => flamegraph::cmd(&args, log),
        Some(Command::TraceSummary(args)) => trace_summary::cmd(&args, log),
        Some(Command::Kernel(args)) => kernel::cmd(&args, log),
    };
    if let Err(e) = &result {
        if !e.said_as_it_happened {
            out::error(e);
        }
    }
    finish(result)
}

/// The process's exit code, from the kind of the worst failure (`ErrorKind::exit_code`, the
/// README's table): bad input, then a failed output (stdout's failure is one), then a stop (128 +
/// the signal's number), then a failed check, then a failed run. Every message was printed.
fn finish(result: Result<(), ExperimentError>) -> ExitCode {
    paths::release();
    let mut failures = Failures::default();
    if let Err(e) = result {
        failures.add(e.told());
    }
    if let Some(e) = out::finish() {
        let message = format!("cannot write to standard output: {e}");
        out::error(&message);
        failures.add(ExperimentError::output_failed(message).told());
    }
    if let Some(signal) = signals::received() {
        let stopped = format!("stopped by {}", signals::name(signal));
        failures.add(ExperimentError::stopped(stopped).told());
    }
    match failures.finish() {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => match (e.kind, signals::received()) {
            (ErrorKind::Stopped, Some(signal)) => ExitCode::from(signals::exit_code(signal)),
            (kind, _) => ExitCode::from(kind.exit_code()),
        },
    }
}
