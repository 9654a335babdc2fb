//! `schedlab flamegraph`'s options: on-CPU flamegraphs per variant, a differential flamegraph,
//! or a folded-stacks file rendered ([`crate::experiment::flamegraph`]).

use super::parse::{bad_input, parse_insert, parse_kernel, parse_lock};
use super::units;
use crate::driver::profile;
use crate::driver::workload::{entry_name, split_entry, WorkloadConfig};
use crate::error::ExperimentError;
use crate::experiment::flamegraph::{FlamegraphConfig, FoldedConfig};
use schedlab_core::InsertPathKind;
use std::path::PathBuf;
use std::time::Duration;

/// The options that profile, which a `--folded` rendering does not: the options that need
/// `--folded` conflict with each (clap drops a requirement whose required option conflicts with
/// one given, so `requires` alone is not enough).
const PROFILING: &[&str] = &[
    "variant",
    "diff",
    "insert",
    "kernel",
    "threads",
    "duration",
    "lock",
    "groups",
    "outside_ns",
    "frequency",
    "report",
    "json",
];

#[derive(clap::Args, Debug, Clone)]
pub struct FlamegraphOptions {
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
    #[arg(long, default_value_t = 2, value_parser = units::count::<1, 1024>, allow_negative_numbers = true, conflicts_with = "folded")]
    threads: u64,
    /// Time each variant runs (and is sampled): seconds or a duration, more than 0, at most 3600 s.
    #[arg(long, default_value = "2", value_parser = units::seconds, allow_hyphen_values = true, conflicts_with = "folded")]
    duration: f64,
    /// Lock kind of the scheduler and queue locks: fair-spin or parking-lot.
    #[arg(long, default_value = "fair-spin", conflicts_with = "folded")]
    lock: String,
    /// Groups besides the root (a 3-level hierarchy), 0..=4096.
    #[arg(long, default_value_t = 4, value_parser = units::count::<0, 4096>, allow_negative_numbers = true, conflicts_with = "folded")]
    groups: u64,
    /// Simulated work outside the scheduler per request, ns, 0..=1000000000 (0: null device).
    #[arg(long, default_value_t = 0, value_parser = units::count::<0, 1_000_000_000>, allow_negative_numbers = true, conflicts_with = "folded")]
    outside_ns: u64,
    /// Sampling frequency, Hz, 1..=1000 (keep it under the kernel tick, 250 Hz here).
    #[arg(long, default_value_t = profile::DEFAULT_FREQUENCY as u64, value_parser = units::count::<1, 1000>, allow_negative_numbers = true, conflicts_with = "folded")]
    frequency: u64,
    /// Render this folded-stacks file ("stack count" lines, e.g. from scripts/offcpu.sh) as
    /// DIR/<file stem>.svg instead of profiling; --title and --count-name label it.
    #[arg(long, conflicts_with_all = ["variant", "diff"])]
    pub folded: Option<PathBuf>,
    /// Title of a --folded flamegraph (default: the file name).
    #[arg(long, requires = "folded", conflicts_with_all = PROFILING)]
    title: Option<String>,
    /// What a --folded file's counts are (samples, us, ...).
    #[arg(long, default_value = "samples", requires = "folded", conflicts_with_all = PROFILING)]
    count_name: String,
    /// Directory for the SVGs, folded stacks and time-shares.json (created if missing).
    #[arg(long, default_value = "target/flamegraphs")]
    pub out: PathBuf,
}

/// The entry a name stands for: `VARIANT` on the `--insert` path, or `VARIANT+PATH`.
fn known(name: &str, insert: InsertPathKind) -> Result<&'static str, ExperimentError> {
    let (variant, path) = split_entry(name)?;
    let info = schedlab_variants::info(variant).ok_or_else(|| {
        let names: Vec<_> = schedlab_variants::ALL.iter().map(|v| v.name).collect();
        bad_input(format!(
            "unknown variant `{variant}` (known: {}, or all; NAME+lists for the 2024 insert path)",
            names.join(", ")
        ))
    })?;
    Ok(entry_name(info.name, path.unwrap_or(insert)))
}

impl FlamegraphOptions {
    /// The profiling run's configuration (`--folded` renders instead: [`Self::folded_config`]).
    pub fn config(&self) -> Result<FlamegraphConfig, ExperimentError> {
        let args = self;
        let lock = parse_lock(&args.lock)?;
        if !(1..=1024).contains(&args.threads) {
            return Err(bad_input(format!("--threads must be 1..=1024, got {}", args.threads)));
        }
        if !(args.duration > 0.0 && args.duration <= 3600.0) {
            return Err(bad_input(format!(
                "--duration must be more than 0 and at most 3600 seconds, got {}",
                args.duration
            )));
        }
        if !(0..=4096).contains(&args.groups) {
            return Err(bad_input(format!("--groups must be 0..=4096, got {}", args.groups)));
        }
        let insert = parse_insert(&args.insert)?;
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
            kernel: parse_kernel(&args.kernel)?,
            ..WorkloadConfig::default()
        };
        let cfg = FlamegraphConfig {
            workload,
            entries,
            diff,
            frequency: args.frequency as i32,
            out: args.out.clone(),
        };
        cfg.validate()?;
        Ok(cfg)
    }

    /// `--folded`'s rendering; `None` without `--folded`.
    pub fn folded_config(&self) -> Option<FoldedConfig> {
        let input = self.folded.clone()?;
        Some(FoldedConfig {
            input,
            title: self.title.clone(),
            count_name: self.count_name.clone(),
            out: self.out.clone(),
        })
    }
}
