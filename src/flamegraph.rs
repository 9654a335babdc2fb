//! `schedlab flamegraph`: on-CPU flamegraphs per variant, differential flamegraphs, and where the
//! time goes as a table (notes/flamegraphs.md).
//!
//! Each variant runs the workload (as `schedlab run` does, without churn) under pprof-rs; the
//! samples become `DIR/<variant>.svg`, `DIR/<variant>.folded` and one row of the time table.
//! `--diff A B` profiles A and B (reusing profiles already taken in this invocation) and writes
//! `DIR/diff-A-vs-B.svg`. `DIR/time-shares.json` holds the table with provenance.
//! `--folded FILE` renders a folded-stacks file instead (the off-CPU stacks of scripts/offcpu.sh).
//! The work is `schedlab_benches::experiment::flamegraph`; this file parses and prints.

use crate::{bad_input, ExperimentError};
use schedlab_benches::experiment::flamegraph::{self, FlamegraphConfig, FoldedConfig};
use schedlab_benches::driver::profile;
use schedlab_benches::driver::workload::{entry_name, split_entry, WorkloadConfig};
use schedlab_core::{InsertPathKind, LockKind};
use std::path::PathBuf;
use std::time::Duration;

/// The options that profile, which a `--folded` rendering does not: the options that need
/// `--folded` conflict with each (clap drops a requirement whose required option conflicts with
/// one given, so `requires` alone is not enough).
const PROFILING: &[&str] = &["variant", "diff", "insert", "kernel", "threads", "duration", "lock", "groups", "outside_ns", "frequency", "report", "json"];

#[derive(clap::Args, Debug, Clone)]
pub struct FlamegraphArgs {
    /// Variant to profile (see `schedlab variants`), or `all` for every safe variant; a variant
    /// on the 2024 insert path is `NAME+lists` (as in `compare`'s rows).
    #[arg(long)]
    variant: Option<String>,
    /// Insert path of every variant named without one: `direct` (under the scheduler lock, BFQ
    /// through 6.18) or `lists` (separate insertion lists spliced by dispatch, proposed for BFQ in 2024).
    #[arg(long, default_value = "direct", conflicts_with = "folded")]
    insert: String,
    /// Which of BFQ's lock sites a submission runs: `4.12`, `6.18` or `bare` (as `run --kernel`);
    /// the bio merge and the depth limit show as frames of their own (`bio_merge_body`,
    /// `limit_depth_body`).
    #[arg(long, default_value = "4.12", conflicts_with = "folded")]
    kernel: String,
    /// Differential flamegraph of A against B: widths are A's samples, blue where B has fewer
    /// (what B removes), red where it has more. E.g. `--diff sched-lock debug-off`.
    #[arg(long, num_args = 2, value_names = ["A", "B"])]
    diff: Option<Vec<String>>,
    /// Submitting threads (one process each), 1..=1024 (with the fair lock at most 64 per CPU).
    #[arg(long, default_value_t = 2, value_parser = crate::units::count::<1, 1024>, allow_negative_numbers = true, conflicts_with = "folded")]
    threads: u64,
    /// Time each variant runs (and is sampled): seconds or a duration, more than 0, at most 3600 s.
    #[arg(long, default_value = "2", value_parser = crate::units::seconds, allow_hyphen_values = true, conflicts_with = "folded")]
    duration: f64,
    /// Lock kind of the scheduler and queue locks: fair-spin or parking-lot.
    #[arg(long, default_value = "fair-spin", conflicts_with = "folded")]
    lock: String,
    /// Groups besides the root (a 3-level hierarchy), 0..=4096.
    #[arg(long, default_value_t = 4, value_parser = crate::units::count::<0, 4096>, allow_negative_numbers = true, conflicts_with = "folded")]
    groups: u64,
    /// Simulated work outside the scheduler per request, ns, 0..=1000000000 (0: null device).
    #[arg(long, default_value_t = 0, value_parser = crate::units::count::<0, 1_000_000_000>, allow_negative_numbers = true, conflicts_with = "folded")]
    outside_ns: u64,
    /// Sampling frequency, Hz, 1..=1000 (keep it under the kernel tick, 250 Hz here).
    #[arg(long, default_value_t = profile::DEFAULT_FREQUENCY as u64, value_parser = crate::units::count::<1, 1000>, allow_negative_numbers = true, conflicts_with = "folded")]
    frequency: u64,
    /// Render this folded-stacks file ("stack count" lines, e.g. from scripts/offcpu.sh) as
    /// DIR/<file stem>.svg instead of profiling; --title and --count-name label it.
    #[arg(long, conflicts_with_all = ["variant", "diff"])]
    folded: Option<PathBuf>,
    /// Title of a --folded flamegraph (default: the file name).
    #[arg(long, requires = "folded", conflicts_with_all = PROFILING)]
    title: Option<String>,
    /// What a --folded file's counts are (samples, us, ...).
    #[arg(long, default_value = "samples", requires = "folded", conflicts_with_all = PROFILING)]
    count_name: String,
    /// Directory for the SVGs, folded stacks and time-shares.json (created if missing).
    #[arg(long, default_value = "target/flamegraphs")]
    out: PathBuf,
    /// `--json` (the time table, the lines) and `--report` (every flamegraph, interactive); the
    /// drawings go to --out, so there is no `--svg`. Neither with --folded.
    #[command(flatten)]
    outputs: crate::report_out::ReportArgs,
}

/// The entry a name stands for: `VARIANT` on the `--insert` path, or `VARIANT+PATH`.
fn known(name: &str, insert: InsertPathKind) -> Result<&'static str, ExperimentError> {
    let (variant, path) = split_entry(name)?;
    let info = schedlab_variants::info(variant).ok_or_else(|| {
        let names: Vec<_> = schedlab_variants::ALL.iter().map(|v| v.name).collect();
        bad_input(format!("unknown variant `{variant}` (known: {}, or all; NAME+lists for the 2024 insert path)", names.join(", ")))
    })?;
    Ok(entry_name(info.name, path.unwrap_or(insert)))
}

/// Every path `flamegraph` reads or writes (`paths.rs`), with every file it writes into --out:
/// the profiles' files, or the SVG named after the --folded file.
pub(crate) fn paths(args: &FlamegraphArgs) -> Result<crate::paths::Paths, ExperimentError> {
    let paths = crate::paths::Paths::default();
    Ok(match &args.folded {
        Some(input) => paths.input("--folded", Some(input)).dir("--out", Some(&args.out), vec![flamegraph::folded_svg_name(input)]),
        None => args.outputs.outputs().declare(paths.dir("--out", Some(&args.out), config(args)?.files())),
    })
}

pub(crate) fn config(args: &FlamegraphArgs) -> Result<FlamegraphConfig, ExperimentError> {
    let lock = LockKind::from_name(&args.lock)
        .ok_or_else(|| bad_input(format!("unknown lock kind `{}` (known: fair-spin, parking-lot)", args.lock)))?;
    if !(1..=1024).contains(&args.threads) {
        return Err(bad_input(format!("--threads must be 1..=1024, got {}", args.threads)));
    }
    if !(args.duration > 0.0 && args.duration <= 3600.0) {
        return Err(bad_input(format!("--duration must be more than 0 and at most 3600 seconds, got {}", args.duration)));
    }
    if !(0..=4096).contains(&args.groups) {
        return Err(bad_input(format!("--groups must be 0..=4096, got {}", args.groups)));
    }
    let insert = InsertPathKind::from_name(&args.insert).ok_or_else(|| {
        let known: Vec<_> = InsertPathKind::ALL.iter().map(|k| k.name()).collect();
        bad_input(format!("unknown insert path `{}` (known: {})", args.insert, known.join(", ")))
    })?;
    let mut entries: Vec<&'static str> = match args.variant.as_deref() {
        Some("all") => schedlab_variants::safe().map(|v| entry_name(v.name, insert)).collect(),
        Some(name) => vec![known(name, insert)?],
        None => Vec::new(),
    };
    let diff = match &args.diff {
        Some(pair) => Some((known(&pair[0], insert)?, known(&pair[1], insert)?)),
        None => None,
    };
    for name in diff.iter().flat_map(|&(a, b)| [a, b]) {
        if !entries.contains(&name) {
            entries.push(name);
        }
    }
    let workload = WorkloadConfig {
        threads: args.threads as usize,
        duration: Duration::from_secs_f64(args.duration),
        lock,
        groups: args.groups as usize,
        outside_ns: args.outside_ns,
        kernel: crate::flags::parse_kernel(&args.kernel)?,
        ..WorkloadConfig::default()
    };
    let cfg = FlamegraphConfig { workload, entries, diff, frequency: args.frequency as i32, out: args.out.clone() };
    cfg.validate()?;
    Ok(cfg)
}

pub fn cmd(args: &FlamegraphArgs) -> Result<(), ExperimentError> {
    let mut bar = crate::progress::Bar::new("schedlab flamegraph", "variants");
    if let Some(input) = &args.folded {
        let folded = FoldedConfig { input: input.clone(), title: args.title.clone(), count_name: args.count_name.clone(), out: args.out.clone() };
        outln!("{}", flamegraph::render_folded(&folded, &crate::INTERRUPT, &mut bar)?);
        return Ok(());
    }
    let cfg = config(args)?;
    let claimed = args.outputs.outputs().claim::<flamegraph::FlamegraphReport>()?;
    let w = &cfg.workload;
    outln!(
        "schedlab flamegraph: {} threads, {} lock, {} groups, kernel {}, outside {} ns, {:.1} s per variant, on-CPU samples at {} Hz",
        w.threads,
        w.lock,
        w.groups,
        w.kernel,
        w.outside_ns,
        w.duration.as_secs_f64(),
        cfg.frequency
    );
    let report = flamegraph::run(&cfg, &crate::INTERRUPT, &mut bar)?;
    drop(bar);
    // The failures were told as they happened; the report's outcome keeps their kinds.
    crate::report_out::emit(&report, Default::default(), &claimed, Default::default())
}
