//! `schedlab compare`'s options (and plain `schedlab`'s): every variant side by side
//! ([`crate::experiment::compare`]).

use super::context::Context;
use super::parse::{bad_input, parse_inserts, parse_locks, parse_variants, seconds};
use super::units;
use super::workload::WorkloadArgs;
use crate::driver::child;
use crate::driver::workload::entry_name;
use crate::error::ExperimentError;
use crate::experiment::compare::{
    baseline, precision, Baseline, BuildPair, CompareConfig, Measure, PlacementRule, Precision,
};
use schedlab_core::InsertPathKind;

/// `--duration` is 0.5 s here after a `--ramp` of 0.1 s (2 s and 0.25 s for the other commands
/// that take them): with sched-lock's A/A copy the default 8 runs of a round take about 5 s, so
/// that one placement of this machine kind's vCPUs holds at least three rounds (the shortest
/// spell seen held 17 s: `compare::placement`), and a minute holds about 11: room for the 6
/// rounds a 95 % interval needs (`stats::BOOTSTRAP_MIN_VALUES`) and for rounds made again after
/// a change of placement. With 1 s runs a
/// round took 10 s, and two of three default runs kept a single round
/// (`notes/results/2026-12-04-placement.md`); with 0.5 s runs three of three kept 3 to 8
/// (`notes/results/2026-12-05-short-rounds.md`).
#[derive(clap::Args, Debug, Clone)]
#[command(mut_arg("duration", |a| a.default_value("0.5")))]
#[command(mut_arg("ramp", |a| a.default_value("0.1")))]
pub struct CompareOptions {
    /// Jobs (threads), 1..=1024 (with the fair lock at most 64 per CPU); default: every CPU.
    #[arg(long, value_parser = units::count::<1, 1024>, allow_negative_numbers = true)]
    threads: Option<u64>,
    /// Rounds, 1..=1000; each runs every variant once per lock kind, in a rotated order. Given
    /// without --precision: exactly this many. With --precision, or when neither is given: the
    /// fewest (default 6, and never fewer than 6: the fewest rounds whose 95 % interval covers
    /// 95 %), then more until the precision or --max-time.
    #[arg(long, value_parser = units::count::<1, 1000>, allow_negative_numbers = true)]
    rounds: Option<u64>,
    /// Add interleaved rounds until every ratio's 95 % interval is within ±P of its median (each
    /// variant ÷ sched-lock, the seeds' ratios, the A/A floor), or until --max-time: a fraction
    /// (0.03) or a percent (3%), above 0 and below 100 %. The end says which came first. Default,
    /// when --rounds is not given either: 3% within 60 s, the main command's choice (on 2 CPUs
    /// about 11 rounds of 5 s; a noisy machine gets the interval it reached and the rounds ±3 %
    /// would need).
    #[arg(long, value_parser = units::fraction, allow_hyphen_values = true)]
    precision: Option<f64>,
    /// With --precision: the time the whole comparison may take, seconds or a duration (90,
    /// 2m), more than 0, at most a day; no round starts that would end past it (default 60 s).
    #[arg(long, value_parser = units::seconds, allow_hyphen_values = true)]
    max_time: Option<f64>,
    /// An earlier `schedlab compare --json` report of the same variants and lock kinds, or the
    /// old build's `schedlab` executable: print each ratio's change against it with its 95 %
    /// interval and a verdict. A report: improved / regressed / no change; give it again with
    /// more runs of the same build to measure how far runs of one build differ (a change within
    /// that is no change). An executable (told apart by its first bytes; given alone): every
    /// round runs each variant with this build and with it, both as `schedlab run` child
    /// processes with the same arguments and their order alternated round to round, and each
    /// ratio's change is taken within rounds, where the machine's state cancels: improved /
    /// regressed / no change / inconclusive; plain KIOPS only. Checked before any run: a report
    /// is read, an executable must be a schedlab whose `run --json` this build reads (a short
    /// run of every variant); anything else is refused.
    #[arg(long, value_name = "FILE|EXE")]
    pub baseline: Vec<std::path::PathBuf>,
    /// With --baseline: the no-change band, a fraction (0.05) or a percent (5%), above 0 and
    /// below 100 %: a change is improved or regressed only when its whole interval lies beyond
    /// ±this (default 5%, generous: ratios of runs minutes apart move by a few per cent); with
    /// an old build, no change only when its whole interval lies within ±this.
    #[arg(long, value_parser = units::fraction, allow_hyphen_values = true, requires = "baseline")]
    baseline_threshold: Option<f64>,
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
    /// Default: lockstat; plain with an old build as --baseline (the only one it takes).
    #[arg(long)]
    measure: Option<String>,
    /// How instrumented runs time lock holds: sampled (one in 256, estimated; the default) or
    /// exact. Said to have no effect with --measure plain.
    #[arg(long, value_parser = super::parse::lockstat_mode)]
    lockstat_mode: Option<schedlab_core::lockstat::Mode>,
    /// Measured time of each instrumented run with --measure both: seconds or a duration, more
    /// than 0, at most a day (default 1). Said to have no effect with another --measure.
    #[arg(long, value_parser = units::seconds, allow_hyphen_values = true)]
    lockstat_duration: Option<f64>,
    /// Leave out the A/A pair. By default the reference variant (sched-lock) runs a second time
    /// in each round, interleaved like the others, and the ratio of its two copies with its 95 %
    /// interval is printed as the run's noise floor; a floor that excludes 1 flags the run as
    /// unreliable. Said to have no effect when sched-lock is not compared.
    #[arg(long)]
    no_aa: bool,
    /// What to do with a round whose CPUs the host moved while it ran (a cache-line probe between
    /// every two runs tells): separate (made again, and the ratios from the placement more rounds
    /// ran in) or pool (every round kept, the ratios over both; for a machine whose CPUs stay
    /// put, or a functional run on a loaded machine, where other processes stretch the probes).
    #[arg(long, default_value = "separate")]
    placement: String,
    #[command(flatten)]
    pub workload: WorkloadArgs,
    /// Leave out the per-lock lockstat tables.
    #[arg(long)]
    pub brief: bool,
}

/// What an old build given as `--baseline` must run: the comparison's entries under its lock
/// kinds and workload.
struct BuildCheck<'a> {
    entries: &'a [&'static str],
    locks: &'a [schedlab_core::LockKind],
    workload: &'a crate::driver::workload::WorkloadConfig,
}

impl BuildCheck<'_> {
    /// This build and the old one at `exe`, each checked before any work: an executable
    /// schedlab (its `--version`), and for the old one a short run of every entry under every
    /// lock kind that this build reads back (`driver::child`). Any failure is one line of bad
    /// input naming `--baseline`.
    fn pair(
        &self,
        exe: &std::path::Path,
        job_args: Vec<String>,
        threshold: f64,
        stop: &schedlab_core::sync::AtomicBool,
    ) -> Result<BuildPair, ExperimentError> {
        let refused = |why: String| bad_input(format!("--baseline {} {why}", exe.display()));
        let version = child::version_of(exe).map_err(|e| refused(e.to_string()))?;
        let baseline = child::Build { exe: exe.to_path_buf(), version, job_args: job_args.clone() };
        let this_exe = std::env::current_exe()
            .map_err(|e| bad_input(format!("this schedlab cannot find its own executable: {e}")))?;
        let this_version = child::version_of(&this_exe)
            .map_err(|e| bad_input(format!("this schedlab ({}) {e}", this_exe.display())))?;
        let this = child::Build { exe: this_exe, version: this_version, job_args };
        let dir = tempfile::Builder::new()
            .prefix("schedlab-build-check-")
            .tempdir()
            .map_err(|e| bad_input(format!("no temporary directory for the check's runs: {e}")))?;
        // As short as a run may be: what is checked is that the build takes the arguments and
        // writes what this build reads, not its figures.
        let short = crate::driver::workload::WorkloadConfig {
            duration: std::time::Duration::from_millis(10),
            ramp: std::time::Duration::ZERO,
            ..self.workload.clone()
        };
        for &lock in self.locks {
            for entry in self.entries {
                let w = crate::driver::workload::WorkloadConfig { lock, ..short.clone() };
                baseline.run(entry, &w, dir.path(), stop).map_err(|e| {
                    let what = format!("`run --variant {entry} --lock {}`", lock.name());
                    refused(format!("cannot make the run {what}: {}", e.message))
                })?;
            }
        }
        Ok(BuildPair { this, baseline, threshold })
    }
}

impl CompareOptions {
    pub fn config(&self, cx: &mut Context) -> Result<CompareConfig, ExperimentError> {
        let args = self;
        let cpus = std::thread::available_parallelism().map_or(2, |n| n.get());
        let threads = match args.threads {
            None => cpus,
            Some(t) if (1..=1024).contains(&t) => t as usize,
            Some(t) => return Err(bad_input(format!("--threads must be 1..=1024, got {t}"))),
        };
        let rounds = args.rounds.unwrap_or(precision::MIN_ROUNDS as u64);
        if !(1..=1000).contains(&rounds) {
            return Err(bad_input(format!("--rounds must be 1..=1000, got {rounds}")));
        }
        let max_time = args.max_time.map(|s| seconds("max-time", s, false)).transpose()?;
        let precision = match (args.precision, args.rounds) {
            (Some(target), _) => Some(Precision {
                target,
                max_time: max_time.unwrap_or(precision::DEFAULT.max_time),
            }),
            (None, None) => Some(Precision {
                max_time: max_time.unwrap_or(precision::DEFAULT.max_time),
                ..precision::DEFAULT
            }),
            (None, Some(_)) => {
                if args.max_time.is_some() {
                    cx.no_effect(
                        "--max-time",
                        ": --rounds without --precision runs exactly that many rounds",
                    );
                }
                None
            }
        };
        // An executable among the --baseline files is an old build to interleave with this one.
        let old_build = args.baseline.iter().find(|p| child::is_program(p));
        if let Some(exe) = old_build.filter(|_| args.baseline.len() > 1) {
            return Err(bad_input(format!(
                "--baseline {} is an executable (an old build): give it alone, not beside other \
                 --baseline files",
                exe.display()
            )));
        }
        let measure_name = match (&args.measure, old_build) {
            (Some(name), _) => name.as_str(),
            (None, Some(_)) => "plain",
            (None, None) => "lockstat",
        };
        let measure = Measure::from_name(measure_name).ok_or_else(|| {
            bad_input(format!("unknown --measure `{measure_name}` (known: plain, lockstat, both)"))
        })?;
        if old_build.is_some() && measure != Measure::Plain {
            return Err(bad_input(format!(
                "--measure {measure_name} cannot run against an old build: each run is a \
                 `schedlab run` child process, which gives plain KIOPS only (--measure plain)"
            )));
        }
        if args.include_unlocked && args.workload.jobs.churn > 0.0 {
            return Err(bad_input("--include-unlocked cannot run with --churn: `unlocked` is unsafe under group removal"));
        }
        // `--insert both`: every variant on each insert path, as entries `<variant>` and
        // `<variant>+lists`, interleaved like the variants.
        let paths = parse_inserts(&args.workload.jobs.insert, true)?;
        let mut workload_args = args.workload.clone();
        workload_args.jobs.insert = InsertPathKind::Direct.name().into();
        let variants = parse_variants(args.variants.as_deref(), args.include_unlocked)?;
        let entries: Vec<&'static str> = paths
            .iter()
            .flat_map(|&path| variants.iter().map(move |&v| entry_name(v, path)))
            .collect();
        // Options that only mean something beside a --measure: said, not refused (scripts pass them).
        if args.lockstat_duration.is_some() && measure != Measure::Both {
            cx.no_effect(
                "--lockstat-duration",
                format_args!(
                    ": only --measure both makes separately instrumented runs (--measure is {})",
                    measure_name
                ),
            );
        }
        if args.no_aa && !variants.contains(&crate::experiment::compare::AA_REFERENCE) {
            cx.no_effect(
                "--no-aa",
                ": sched-lock is not among the variants, so there is no A/A pair to leave out",
            );
        }
        if measure == Measure::Plain {
            let defaults: WorkloadArgs = super::parse::defaults();
            let instrumented_only = [
                ("--lockstat-mode", args.lockstat_mode.is_some()),
                ("--sum-sampling", args.workload.sum_sampling != defaults.sum_sampling),
                ("--brief", args.brief),
            ];
            for (flag, _) in instrumented_only.iter().filter(|(_, set)| *set) {
                cx.no_effect(flag, ": --measure plain makes no instrumented run (no lock tables)");
            }
        }
        let placement = PlacementRule::from_name(&args.placement).ok_or_else(|| {
            bad_input(format!(
                "unknown --placement `{}` (known: {})",
                args.placement,
                PlacementRule::NAMES
            ))
        })?;
        let locks = parse_locks(&args.lock)?;
        let threshold = args.baseline_threshold.unwrap_or(baseline::DEFAULT_THRESHOLD);
        let mut runs = Vec::new();
        for path in args.baseline.iter().filter(|_| old_build.is_none()) {
            (cx.declared_input)(path)?;
            runs.push(Baseline::load(path, &entries, &locks, threshold, cx.stop)?);
        }
        let mut runs = runs.into_iter();
        let baseline = match runs.next() {
            Some(first) => Some(first.with_runs(runs.collect())?),
            None => None,
        };
        let workload = workload_args.config(threads, cx)?;
        let builds = match old_build {
            Some(exe) => {
                (cx.declared_input)(exe)?;
                let job_args = workload_args.jobs.run_args();
                let check = BuildCheck { entries: &entries, locks: &locks, workload: &workload };
                Some(check.pair(exe, job_args, threshold, cx.stop)?)
            }
            None => None,
        };
        let cfg = CompareConfig {
            workload,
            variants: entries,
            locks,
            rounds: rounds as usize,
            measure,
            lockstat_duration: seconds(
                "lockstat-duration",
                args.lockstat_duration.unwrap_or(1.0),
                false,
            )?,
            lockstat_window: std::time::Duration::from_millis(100),
            lockstat_mode: args.lockstat_mode.unwrap_or(schedlab_core::lockstat::Mode::Sampled),
            sum_sampling: args.workload.sum_sampling()?,
            noise: args.workload.noise_policy()?,
            aa: !args.no_aa,
            precision,
            baseline,
            builds,
            placement,
        };
        cfg.validate()?;
        Ok(cfg)
    }
}

#[cfg(test)]
mod tests {
    use super::CompareOptions;
    use crate::experiment::compare::{precision, Precision};
    use crate::experiment::options::context::Context;
    use schedlab_core::sync::AtomicBool;
    use std::time::Duration;

    /// The configuration of `schedlab compare ARGS`, and what it said has no effect.
    fn configure(args: &[&str]) -> (Option<Precision>, usize, Duration, Vec<String>) {
        use clap::{Args, FromArgMatches};
        let argv = std::iter::once("compare").chain(args.iter().copied());
        let matches = CompareOptions::augment_args(clap::Command::new("compare"))
            .try_get_matches_from(argv)
            .unwrap();
        let options = CompareOptions::from_arg_matches(&matches).unwrap();
        let stop = AtomicBool::new(false);
        let mut cx = Context::new(&stop, &|_: &std::path::Path| Ok(()));
        let cfg = options.config(&mut cx).unwrap_or_else(|e| panic!("{args:?}: {e}"));
        (cfg.precision, cfg.rounds, cfg.workload.duration, cx.warnings)
    }

    #[test]
    fn the_main_command_aims_for_3_percent_within_a_minute_and_rounds_alone_runs_exactly() {
        let (p, rounds, duration, _) = configure(&[]);
        assert_eq!((p, rounds), (Some(precision::DEFAULT), precision::MIN_ROUNDS));
        assert_eq!(p.map(|p| (p.target, p.max_time)), Some((0.03, Duration::from_secs(60))));
        assert_eq!(
            duration,
            Duration::from_millis(500),
            "compare's runs are 0.5 s, so that rounds fit in a placement"
        );
        let (p, rounds, _, _) = configure(&["--rounds", "5"]);
        assert_eq!((p, rounds), (None, 5), "--rounds alone: exactly that many");
        let (p, rounds, _, _) =
            configure(&["--rounds", "5", "--precision", "2%", "--max-time", "2m"]);
        assert_eq!(p, Some(Precision { target: 0.02, max_time: Duration::from_secs(120) }));
        assert_eq!(rounds, 5, "with --precision, --rounds is the fewest");
        let (p, _, _, said) = configure(&["--rounds", "5", "--max-time", "2m"]);
        assert_eq!(p, None);
        assert!(said.iter().any(|w| w.starts_with("--max-time has no effect")), "{said:?}");
        let (p, _, _, _) = configure(&["--max-time", "10s"]);
        assert_eq!(p, Some(Precision { max_time: Duration::from_secs(10), ..precision::DEFAULT }));
    }
}
