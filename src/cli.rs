//! The command tree: every subcommand, its arguments (each command's file declares its own) and
//! the paths it declares, as clap's derive and one function that adds what a flag shared by
//! several subcommands means in one of them only ([`command`]). Parsing, `--help` and the
//! generated tests all read it (`deps.rs`, `arg_props.rs`, `flag_props.rs`, `path_props.rs`,
//! `SCHEDLAB_DESCRIBE=cli`).

use crate::trace_summary;
use crate::{compare, flamegraph, kernel, paths, predict, roundtrip, run, simulate, sweep};
use clap::{Parser, Subcommand};
use schedlab_benches::experiment::ExperimentError;

const EXIT_CODES_HELP: &str =
    "Exit codes: 0 done; 1 a check failed (inconsistent run, overlapping lock holds); 2 bad input \
(arguments, input files, output paths: checked before any work); 3 an output could not be \
written; 4 a run failed (the others are kept). Signals: SIGINT (Ctrl-C) exits 130, SIGTERM \
143, SIGHUP 129, after keeping what finished (tables, JSON, CSV, SVG and trace, marked \
interrupted); a second stop (another Ctrl-C, or another sender's signal over 0.3 s later) \
exits at once; a supervisor's signal to the process and then its group is one stop.";

#[derive(Parser, Debug)]
#[command(name = "schedlab", version, about = "Lock-contention workbench: a BFQ-style scheduler with swappable group-statistics policies", after_help = EXIT_CODES_HELP)]
pub(crate) struct Cli {
    /// Log the run's configuration and progress to stderr (-v info, -vv debug, -vvv trace);
    /// RUST_LOG, when set, takes precedence (tracing-subscriber's env-filter syntax).
    #[arg(short, long, action = clap::ArgAction::Count, global = true)]
    pub(crate) verbose: u8,
    #[command(subcommand)]
    pub(crate) command: Option<Command>,
}

#[derive(Subcommand, Debug)]
pub(crate) enum Command {
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
const PREDICT_VALIDATION_ONLY: &[&str] =
    &["duration", "ramp", "retries", "max_other_cpus", "stats_reads", "pin"];

/// The CLI's definition: the derive's, plus the dependencies that a flag shared by several
/// subcommands has in one of them only. Parsing, `--help` and the generated tests all read this.
pub(crate) fn command() -> clap::Command {
    use clap::CommandFactory;
    Cli::command().mut_subcommand("predict", |c| {
        PREDICT_VALIDATION_ONLY.iter().fold(c, |c, id| c.mut_arg(*id, |a| a.requires("validate")))
    })
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

/// Every path the command reads or writes, declared before any work (`paths.rs`). The match is
/// exhaustive: a new subcommand must declare its paths to compile.
pub(crate) fn declared(command: &Option<Command>) -> Result<paths::Paths, ExperimentError> {
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
pub(crate) fn describe_cli() {
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
                clap::ValueHint::AnyPath | clap::ValueHint::FilePath | clap::ValueHint::DirPath
                    if takes_value =>
                {
                    "path"
                }
                _ if takes_value => "value",
                _ => "flag",
            };
            let conflicts: Vec<String> = sub
                .get_arg_conflicts_with(arg)
                .iter()
                .filter_map(|a| a.get_long().map(|l| format!("--{l}")))
                .collect();
            outln!("{}\t{name}\t{kind}\t{}", sub.get_name(), conflicts.join(","));
        }
    }
}
