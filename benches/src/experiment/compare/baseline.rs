//! `--baseline old.json`: each ratio's change against an earlier comparison's, with its interval
//! and a verdict, as criterion compares a benchmark with its saved baseline.
//!
//! The baseline is a `schedlab compare --json` report of this schema version, over the same
//! variants and lock kinds ([`Baseline::parse`], checked before any run: anything else is one
//! line of bad input). Each ratio the report prints ([`ratio_runs_from`]: every variant ÷
//! `sched-lock`, and the seeds' ratios between other variants) is compared with the same ratio
//! of the baseline ([`compare_ratio`]): the change is now ÷ then − 1 of the ratio's medians, its
//! interval a 95 % two-sample bootstrap (`stats::bootstrap_interval_two`: each comparison's
//! rounds resampled apart, since the two ran at different times and nothing pairs a round of
//! one with a round of the other). The verdict ([`judge_change`]) is *improved* or *regressed*
//! only when the whole interval lies beyond the no-change band ±`threshold` (default
//! [`DEFAULT_THRESHOLD`], generous because ratios of runs minutes apart on a shared machine move
//! by several per cent), and *no change* otherwise: a change inside the band, or one the
//! rounds cannot resolve. A higher ratio is an improvement: the numerator gained on its
//! denominator.
//!
//! ## The between-run floor
//!
//! A run's interval is over its own rounds, a minute of one machine state; runs minutes apart
//! differ by more than that on a shared virtual machine (four runs of one build: a ratio's
//! median moved by up to 18 %, `notes/results/2026-12-05-short-rounds.md`), and one baseline run
//! cannot say by how much. So `--baseline` may be given again with further runs of the same
//! build ([`Baseline::with_runs`]). Then each ratio's *between-run floor* is the largest change
//! between any two of the baseline's runs (their medians), the rounds of all of them are the
//! "then" side, and the no-change band is the wider of ±threshold and ±floor: a change no larger
//! than the build's own runs showed between themselves is no change. With one baseline run the
//! floor is not measured and the comparison says so.

use super::cells::{AA_REFERENCE, SCHEMA_VERSION};
use super::placement;
use crate::error::ExperimentError;
use crate::stats::{
    bootstrap_interval_two, median, median_in_place, Interval, BOOTSTRAP_MIN_VALUES,
    BOOTSTRAP_RESAMPLES, BOOTSTRAP_SEED,
};
use schedlab_core::LockKind;
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

/// The half-width of the no-change band when `--baseline-threshold` is not given: ±5 %.
pub const DEFAULT_THRESHOLD: f64 = 0.05;

/// One ratio's per-round values, named as the change table names it.
#[derive(Clone, Debug, PartialEq)]
pub struct RatioRuns {
    /// "queue-lock ÷ sched-lock"; a seed's ratio between other variants "epoch ÷ debug-off".
    pub ratio: String,
    pub lock: LockKind,
    pub runs: Vec<f64>,
}

/// A loaded baseline: where it came from and its ratios.
#[derive(Clone, Debug)]
pub struct Baseline {
    pub file: PathBuf,
    /// The baseline's build (its provenance).
    pub commit: String,
    pub date: String,
    pub rounds: usize,
    pub ratios: Vec<RatioRuns>,
    /// The no-change band's half-width, a fraction (0.05: ±5 %).
    pub threshold: f64,
    /// Further runs of the same build (`--baseline` given again), whose spread with the first
    /// is the between-run floor.
    pub more_runs: Vec<BaselineRun>,
    /// The cache-line transfer its figures ran with (`placement.reported_ns`), ns; `None` when
    /// its report does not say (one CPU, or made before the field).
    pub placement_ns: Option<f64>,
}

/// One run of the baseline's build, as [`Baseline::compare`] reads it.
struct RunView<'a> {
    file: &'a Path,
    ratios: &'a [RatioRuns],
    placement_ns: Option<f64>,
    rounds: usize,
}

/// One more run of the baseline's build.
#[derive(Clone, Debug)]
pub struct BaselineRun {
    pub file: PathBuf,
    pub rounds: usize,
    pub ratios: Vec<RatioRuns>,
    pub placement_ns: Option<f64>,
}

#[derive(Deserialize)]
struct FileRuns {
    runs: Vec<Option<f64>>,
}

#[derive(Deserialize)]
struct FileRow {
    variant: String,
    lock: LockKind,
    vs_sched_lock: Option<FileRuns>,
}

#[derive(Deserialize)]
struct FileByLock {
    lock: LockKind,
    measured: FileRuns,
}

#[derive(Deserialize)]
struct FileRatio {
    numerator: String,
    denominator: String,
    by_lock: Vec<FileByLock>,
}

#[derive(Deserialize)]
struct FileProvenance {
    commit: String,
    date: String,
}

#[derive(Deserialize)]
struct FileConfig {
    variants: Vec<String>,
    locks: Vec<LockKind>,
}

#[derive(Deserialize)]
struct FileProbe {
    round: usize,
    before_ns: Option<f64>,
    after_ns: Option<f64>,
}

#[derive(Deserialize)]
struct FilePlacement {
    #[serde(default)]
    reported_ns: Option<f64>,
    #[serde(default)]
    rounds_run_again: Vec<usize>,
    #[serde(default)]
    rounds_moved_left_out: Vec<usize>,
    #[serde(default)]
    rounds_left_out: Vec<usize>,
    #[serde(default)]
    runs: Vec<FileProbe>,
}

impl FilePlacement {
    /// The transfer the report's figures ran with: its `reported_ns`, or, in a report made
    /// before that was written, the median probe of its rounds not left out, as it is computed
    /// now (`placement::PlacementReport::new`).
    fn reported_ns(&self) -> Option<f64> {
        if self.reported_ns.is_some() {
            return self.reported_ns;
        }
        placement::reported_ns(
            self.runs.iter().map(|r| (r.round, r.before_ns, r.after_ns)),
            [&self.rounds_run_again, &self.rounds_moved_left_out, &self.rounds_left_out],
        )
    }
}

#[derive(Deserialize)]
struct CompareFile {
    provenance: FileProvenance,
    config: FileConfig,
    rounds_completed: usize,
    results: Vec<FileRow>,
    ratios: Vec<FileRatio>,
    #[serde(default)]
    placement: Option<FilePlacement>,
}

/// The name of a variant's ratio to the reference, and of a seed's ratio.
fn ratio_name(numerator: &str, denominator: &str) -> String {
    format!("{numerator} ÷ {denominator}")
}

/// The ratios a report prints, in its order: every variant ÷ [`AA_REFERENCE`] (not the
/// reference itself), then each seed's ratio whose denominator is another variant (one whose
/// denominator is the reference is the variant's row already).
pub(super) fn ratio_runs_from<'a>(
    rows: impl Iterator<Item = (&'a str, LockKind, Option<&'a [f64]>)>,
    seeds: impl Iterator<Item = (&'a str, &'a str, LockKind, &'a [f64])>,
) -> Vec<RatioRuns> {
    let mut out: Vec<RatioRuns> = rows
        .filter(|(v, _, _)| *v != AA_REFERENCE)
        .filter_map(|(v, lock, runs)| {
            Some(RatioRuns { ratio: ratio_name(v, AA_REFERENCE), lock, runs: runs?.to_vec() })
        })
        .collect();
    for (num, den, lock, runs) in seeds.filter(|(_, den, _, _)| *den != AA_REFERENCE) {
        let ratio = ratio_name(num, den);
        if !out.iter().any(|r| r.ratio == ratio && r.lock == lock) {
            out.push(RatioRuns { ratio, lock, runs: runs.to_vec() });
        }
    }
    out
}

impl Baseline {
    /// Reads `file` (a declared input, read as every input is: capped, giving way to `stop`).
    pub fn load(
        file: &Path,
        variants: &[&str],
        locks: &[LockKind],
        threshold: f64,
        stop: &schedlab_core::sync::AtomicBool,
    ) -> Result<Baseline, ExperimentError> {
        let text = crate::files::input::read_input(
            file,
            "baseline",
            crate::files::input::caps::MODEL_JSON,
            stop,
        )?;
        Baseline::parse(file, &text, variants, locks, threshold)
    }

    /// Parses a `schedlab compare --json` report as a baseline for a comparison of `variants`
    /// under `locks`; the error is bad input, one line naming the file and what is wrong with it.
    pub fn parse(
        file: &Path,
        text: &str,
        variants: &[&str],
        locks: &[LockKind],
        threshold: f64,
    ) -> Result<Baseline, ExperimentError> {
        let shown = file.display();
        let not_compare = |why: String| {
            let report = "a `schedlab compare --json` report";
            ExperimentError::bad_input(format!("--baseline {shown} is not {report}: {why}"))
        };
        let value: serde_json::Value =
            serde_json::from_str(text).map_err(|e| not_compare(format!("not JSON ({e})")))?;
        match value.get("schema").and_then(|s| s.as_str()) {
            Some("schedlab-compare") => {}
            Some(other) => return Err(not_compare(format!("its schema is `{other}`"))),
            None => return Err(not_compare("it has no `schema`".into())),
        }
        let wanted = SCHEMA_VERSION;
        match value.get("schema_version").and_then(|v| v.as_u64()) {
            Some(v) if v == u64::from(wanted) => {}
            Some(v) => {
                return Err(ExperimentError::bad_input(format!(
                    "--baseline {shown} has schema_version {v}, this schedlab writes and reads \
                     {wanted}: make the baseline again with this build"
                )))
            }
            None => return Err(not_compare("it has no `schema_version`".into())),
        }
        let parsed: CompareFile =
            serde_json::from_value(value).map_err(|e| not_compare(e.to_string()))?;
        let sorted = |mut v: Vec<String>| {
            v.sort();
            v
        };
        let theirs = sorted(parsed.config.variants.clone());
        let ours = sorted(variants.iter().map(|v| v.to_string()).collect());
        if theirs != ours {
            return Err(ExperimentError::bad_input(format!(
                "--baseline {shown} compared other variants ({}) than this run ({}): \
                 give --variants as the baseline's",
                parsed.config.variants.join(","),
                variants.join(",")
            )));
        }
        let lock_names = |l: &[LockKind]| l.iter().map(|k| k.name()).collect::<Vec<_>>().join(",");
        let same_locks = parsed.config.locks.len() == locks.len()
            && locks.iter().all(|l| parsed.config.locks.contains(l));
        if !same_locks {
            return Err(ExperimentError::bad_input(format!(
                "--baseline {shown} ran other lock kinds ({}) than this run ({}): \
                 give --lock as the baseline's",
                lock_names(&parsed.config.locks),
                lock_names(locks)
            )));
        }
        let finite =
            |runs: &FileRuns| runs.runs.iter().map(|r| r.unwrap_or(f64::NAN)).collect::<Vec<f64>>();
        let rows: Vec<(&str, LockKind, Option<Vec<f64>>)> = parsed
            .results
            .iter()
            .map(|r| (r.variant.as_str(), r.lock, r.vs_sched_lock.as_ref().map(finite)))
            .collect();
        let seeds: Vec<(&str, &str, LockKind, Vec<f64>)> = parsed
            .ratios
            .iter()
            .flat_map(|r| {
                r.by_lock.iter().map(move |b| {
                    (r.numerator.as_str(), r.denominator.as_str(), b.lock, finite(&b.measured))
                })
            })
            .collect();
        let ratios = ratio_runs_from(
            rows.iter().map(|(v, l, runs)| (*v, *l, runs.as_deref())),
            seeds.iter().map(|(n, d, l, runs)| (*n, *d, *l, runs.as_slice())),
        );
        Ok(Baseline {
            file: file.to_path_buf(),
            commit: parsed.provenance.commit,
            date: parsed.provenance.date,
            rounds: parsed.rounds_completed,
            ratios,
            threshold,
            more_runs: Vec::new(),
            placement_ns: parsed.placement.as_ref().and_then(FilePlacement::reported_ns),
        })
    }

    /// The baseline with further runs of its build (`--baseline` given again, in order): each
    /// must be of the same commit as the first (else its changes would be in the floor), and of
    /// the same variants and lock kinds (checked as it was parsed).
    pub fn with_runs(mut self, more: Vec<Baseline>) -> Result<Baseline, ExperimentError> {
        for b in more {
            if b.commit != self.commit {
                return Err(ExperimentError::bad_input(format!(
                    "--baseline {} is of commit {}, and the first, {}, of {}: the runs given \
                     together must be of one build (their spread is taken as run-to-run noise)",
                    b.file.display(),
                    b.commit,
                    self.file.display(),
                    self.commit
                )));
            }
            if b.file == self.file || self.more_runs.iter().any(|r| r.file == b.file) {
                return Err(ExperimentError::bad_input(format!(
                    "--baseline {} is given twice: a run against itself says nothing of the \
                     spread between runs",
                    b.file.display()
                )));
            }
            self.more_runs.push(BaselineRun {
                file: b.file,
                rounds: b.rounds,
                ratios: b.ratios,
                placement_ns: b.placement_ns,
            });
        }
        Ok(self)
    }

    /// Every run of the baseline's build: the first, then the ones given after it.
    fn runs(&self) -> impl Iterator<Item = RunView<'_>> {
        let first = RunView {
            file: &self.file,
            ratios: &self.ratios,
            placement_ns: self.placement_ns,
            rounds: self.rounds,
        };
        std::iter::once(first).chain(self.more_runs.iter().map(|r| RunView {
            file: &r.file,
            ratios: &r.ratios,
            placement_ns: r.placement_ns,
            rounds: r.rounds,
        }))
    }

    /// Every ratio of a report (`compare::baseline_ratio_runs`) against the baseline's: its
    /// rounds in every run of the build made in this run's placement (`now_ns`, this run's
    /// `placement.reported_ns`), and the band widened to the ratio's between-run floor.
    ///
    /// A lock-bound ratio follows the cache-line transfer between the CPUs, which the host
    /// changes between runs (`placement`): four default comparisons of one build gave
    /// mainline ÷ sched-lock 1.03–1.06 in the far placement and 1.21 in the near one
    /// (`notes/results/2026-12-05-baseline-placement.md`). So a baseline run whose transfer is
    /// not within [`placement::FAR_FACTOR`] of this run's is left out, and when every one is,
    /// no change is judged: the comparison says the placements differ.
    pub fn compare(&self, now: &[RatioRuns], now_ns: Option<f64>) -> BaselineComparison {
        let comparable = |then_ns: Option<f64>| match (then_ns, now_ns) {
            (Some(then), Some(now)) => placement::same_placement(then, now),
            _ => true,
        };
        let runs: Vec<RunView> = self.runs().filter(|r| comparable(r.placement_ns)).collect();
        let placement_left_out: Vec<String> = self
            .runs()
            .filter(|r| !comparable(r.placement_ns))
            .map(|r| format!("{} ({:.0} ns)", r.file.display(), r.placement_ns.unwrap_or(f64::NAN)))
            .collect();
        let not_judged = runs.is_empty().then(|| {
            let then = self.placement_ns.unwrap_or(f64::NAN);
            let now = now_ns.unwrap_or(f64::NAN);
            format!(
                "the placements differ: the baseline ran with a {then:.0} ns cache-line transfer \
                 between the CPUs, this run with {now:.0} ns, and a lock-bound ratio follows it; \
                 run again when the machine is back in the baseline's placement, or give a \
                 baseline made in this one"
            )
        });
        // Judged against every run when none is comparable, for the figures; no verdict then.
        let runs = if runs.is_empty() { self.runs().collect() } else { runs };
        let placement_not_compared = match (now_ns, self.runs().all(|r| r.placement_ns.is_some())) {
            (None, _) => Some("this run measured no placement probe".to_string()),
            (Some(_), false) => Some(
                "a baseline run does not record its placement (`placement.reported_ns`): made \
                 before it was recorded, or on one CPU"
                    .to_string(),
            ),
            (Some(_), true) => None,
        };
        let mut changes = Vec::new();
        let mut not_compared = Vec::new();
        for current in now {
            let same = |b: &&RatioRuns| b.ratio == current.ratio && b.lock == current.lock;
            let then: Vec<&RatioRuns> =
                runs.iter().filter_map(|r| r.ratios.iter().find(same)).collect();
            if then.len() < runs.len() {
                not_compared.push(format!(
                    "{} ({}): not in every baseline run",
                    current.ratio,
                    current.lock.name()
                ));
                continue;
            }
            let medians: Vec<f64> = then.iter().map(|r| median(&r.runs)).collect();
            let floor = between_run_floor(&medians);
            let band = floor.map_or(self.threshold, |f| f.max(self.threshold));
            let pooled: Vec<f64> = then.iter().flat_map(|r| r.runs.iter().copied()).collect();
            let mut change = compare_ratio(current, &pooled, band);
            change.between_run_floor = floor;
            if not_judged.is_some() {
                change.verdict = None;
            }
            changes.push(change);
        }
        BaselineComparison {
            file: self.file.display().to_string(),
            more_files: self.more_runs.iter().map(|r| r.file.display().to_string()).collect(),
            commit: self.commit.clone(),
            date: self.date.clone(),
            rounds: runs.iter().map(|r| r.rounds).sum(),
            threshold: self.threshold,
            floor_not_measured: (runs.len() < 2).then(|| {
                let one = if self.more_runs.is_empty() {
                    "one baseline run"
                } else {
                    "one baseline run in this run's placement"
                };
                format!(
                    "{one}: how far runs of one build differ is not measured (give --baseline \
                     again with another run of the baseline's build)"
                )
            }),
            placement_ns: self.placement_ns,
            current_placement_ns: now_ns,
            placement_left_out,
            placement_not_compared,
            not_judged,
            changes,
            not_compared,
        }
    }
}

/// The largest change between any two runs' medians of one ratio (`|a ÷ b − 1|` over every
/// ordered pair, so the larger of the two directions); `None` with fewer than two runs.
pub fn between_run_floor(medians: &[f64]) -> Option<f64> {
    let finite: Vec<f64> = medians.iter().copied().filter(|m| m.is_finite() && *m > 0.0).collect();
    if finite.len() < 2 || finite.len() < medians.len() {
        return None;
    }
    let pairs = finite.iter().flat_map(|a| finite.iter().map(move |b| (a / b - 1.0).abs()));
    pairs.reduce(f64::max)
}

/// A change's verdict against the no-change band.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum ChangeVerdict {
    /// The whole interval is above +threshold: the ratio rose.
    Improved,
    /// The whole interval is below −threshold: the ratio fell.
    Regressed,
    /// The interval meets the band: no change the runs can tell. Between builds interleaved
    /// in one run ([`judge_paired_change`]): the whole interval lies inside the band.
    NoChange,
    /// Between builds interleaved in one run only ([`judge_paired_change`]): the interval
    /// reaches across the band's edge, so more rounds would tell.
    Inconclusive,
}

impl ChangeVerdict {
    pub fn label(self) -> &'static str {
        match self {
            ChangeVerdict::Improved => "improved",
            ChangeVerdict::Regressed => "regressed",
            ChangeVerdict::NoChange => "no change",
            ChangeVerdict::Inconclusive => "inconclusive",
        }
    }
}

/// A change's interval (now ÷ then − 1) against the band ±`threshold`: significant only when
/// the whole interval is beyond it.
pub fn judge_change(interval: Interval, threshold: f64) -> ChangeVerdict {
    if interval.lo > threshold {
        ChangeVerdict::Improved
    } else if interval.hi < -threshold {
        ChangeVerdict::Regressed
    } else {
        ChangeVerdict::NoChange
    }
}

/// The verdict of a change measured within rounds, between two builds interleaved in one run
/// (`--baseline EXE`, `compare::builds`): as [`judge_change`], except that *no change* needs
/// the whole interval inside the band, and an interval reaching across its edge is
/// *inconclusive*. Against a saved run such an interval says no change, since more rounds of
/// this run would not narrow the difference between two runs made apart; within rounds they
/// would, so the answer waits for them.
pub fn judge_paired_change(interval: Interval, threshold: f64) -> ChangeVerdict {
    match judge_change(interval, threshold) {
        ChangeVerdict::NoChange if interval.lo < -threshold || interval.hi > threshold => {
            ChangeVerdict::Inconclusive
        }
        verdict => verdict,
    }
}

/// One ratio now against the baseline (JSON: `baseline.changes[]`).
#[derive(Clone, Debug, Serialize)]
pub struct RatioChange {
    pub ratio: String,
    pub lock: LockKind,
    /// The baseline's median of the per-round ratio, and this run's.
    pub baseline: f64,
    pub current: f64,
    /// `current ÷ baseline − 1`.
    pub change: f64,
    /// Its 95 % two-sample bootstrap interval (fractions, as `change`).
    pub interval: Option<Interval>,
    /// Why `interval` is null (either side has fewer than [`BOOTSTRAP_MIN_VALUES`] rounds); then
    /// no verdict.
    pub no_interval: Option<String>,
    /// The largest change between two of the baseline's runs ([`between_run_floor`]); `null`
    /// with one baseline run.
    pub between_run_floor: Option<f64>,
    /// The no-change band's half-width the verdict used: the threshold, or the floor where wider.
    pub band: f64,
    pub verdict: Option<ChangeVerdict>,
}

/// One ratio's change: `current`'s rounds against the baseline's `then` ([`judge_change`] with
/// the band ±`threshold`).
pub fn compare_ratio(current: &RatioRuns, then: &[f64], threshold: f64) -> RatioChange {
    let (now_median, then_median) = (median(&current.runs), median(then));
    let change = |a: &mut [f64], b: &mut [f64]| median_in_place(a) / median_in_place(b) - 1.0;
    let interval =
        bootstrap_interval_two(&current.runs, then, change, BOOTSTRAP_RESAMPLES, BOOTSTRAP_SEED);
    RatioChange {
        ratio: current.ratio.clone(),
        lock: current.lock,
        baseline: then_median,
        current: now_median,
        change: now_median / then_median - 1.0,
        interval,
        no_interval: interval
            .is_none()
            .then(|| format!("no interval: fewer than {BOOTSTRAP_MIN_VALUES} rounds on a side")),
        between_run_floor: None,
        band: threshold,
        verdict: interval.map(|i| judge_change(i, threshold)),
    }
}

/// A comparison against its baseline (JSON: `baseline`).
#[derive(Clone, Debug, Serialize)]
pub struct BaselineComparison {
    pub file: String,
    /// Further runs of the same build given with `--baseline` after the first.
    pub more_files: Vec<String>,
    /// The baseline's build and date (its provenance), and its finished rounds.
    pub commit: String,
    pub date: String,
    /// Rounds of the baseline runs compared with together (those in this run's placement; all,
    /// when none is and nothing is judged).
    pub rounds: usize,
    /// The no-change band's half-width (fraction), before any ratio's between-run floor.
    pub threshold: f64,
    /// Why no ratio has a between-run floor (one baseline run).
    pub floor_not_measured: Option<String>,
    /// The cache-line transfer the (first) baseline run's figures ran with, and this run's, ns.
    pub placement_ns: Option<f64>,
    pub current_placement_ns: Option<f64>,
    /// Baseline runs left out because they ran in another placement than this run ("file
    /// (160 ns)").
    pub placement_left_out: Vec<String>,
    /// Why the placements were not compared (a side without a probe); `null` when they were.
    pub placement_not_compared: Option<String>,
    /// Why no change is judged: every baseline run was made in another placement. Then every
    /// `verdict` is `null`.
    pub not_judged: Option<String>,
    pub changes: Vec<RatioChange>,
    /// Ratios of this run the baseline does not have (a variant that did not run there).
    pub not_compared: Vec<String>,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn runs(ratio: &str, values: &[f64]) -> RatioRuns {
        RatioRuns { ratio: ratio.into(), lock: LockKind::FairSpin, runs: values.to_vec() }
    }

    #[test]
    fn a_ratio_against_itself_is_no_change() {
        let r = runs("queue-lock ÷ sched-lock", &[1.02, 1.10, 0.97, 1.05, 1.01, 1.03]);
        let c = compare_ratio(&r, &r.runs, DEFAULT_THRESHOLD);
        assert_eq!(c.change, 0.0);
        assert!(c.interval.unwrap().contains(0.0), "{c:?}");
        assert_eq!(c.verdict, Some(ChangeVerdict::NoChange));
    }

    #[test]
    fn a_ratio_that_moved_beyond_the_band_is_improved_or_regressed() {
        let then = [1.00, 1.02, 0.98, 1.01, 0.99, 1.00];
        let down = runs("epoch ÷ sched-lock", &[0.80, 0.82, 0.79, 0.81, 0.80, 0.81]);
        let c = compare_ratio(&down, &then, DEFAULT_THRESHOLD);
        assert_eq!(c.verdict, Some(ChangeVerdict::Regressed), "{c:?}");
        assert!((c.change + 0.2).abs() < 0.02, "{c:?}");
        let up = runs("epoch ÷ sched-lock", &[1.20, 1.22, 1.19, 1.21, 1.18, 1.20]);
        assert_eq!(
            compare_ratio(&up, &then, DEFAULT_THRESHOLD).verdict,
            Some(ChangeVerdict::Improved)
        );
        // 3 % up is inside a ±5 % band, and beyond a ±1 % one.
        let slight = runs("epoch ÷ sched-lock", &[1.03; 6]);
        let flat = [1.0; 6];
        assert_eq!(compare_ratio(&slight, &flat, 0.05).verdict, Some(ChangeVerdict::NoChange));
        assert_eq!(compare_ratio(&slight, &flat, 0.01).verdict, Some(ChangeVerdict::Improved));
    }

    #[test]
    fn a_change_is_significant_only_where_its_interval_leaves_the_band() {
        let i = |lo, hi| Interval { lo, hi };
        assert_eq!(judge_change(i(0.06, 0.20), 0.05), ChangeVerdict::Improved);
        assert_eq!(judge_change(i(-0.20, -0.06), 0.05), ChangeVerdict::Regressed);
        assert_eq!(
            judge_change(i(0.02, 0.09), 0.05),
            ChangeVerdict::NoChange,
            "straddles the band's edge"
        );
        assert_eq!(judge_change(i(-0.30, 0.30), 0.05), ChangeVerdict::NoChange, "too wide to tell");
        assert_eq!(
            judge_change(i(0.05, 0.10), 0.05),
            ChangeVerdict::NoChange,
            "touching the band is inside it"
        );
    }

    #[test]
    fn between_interleaved_builds_no_change_needs_the_whole_interval_inside_the_band() {
        let i = |lo, hi| Interval { lo, hi };
        assert_eq!(judge_paired_change(i(0.06, 0.20), 0.05), ChangeVerdict::Improved);
        assert_eq!(judge_paired_change(i(-0.20, -0.06), 0.05), ChangeVerdict::Regressed);
        assert_eq!(judge_paired_change(i(-0.02, 0.03), 0.05), ChangeVerdict::NoChange);
        assert_eq!(judge_paired_change(i(-0.05, 0.05), 0.05), ChangeVerdict::NoChange, "bounds");
        let straddles = [i(0.02, 0.09), i(-0.09, 0.0), i(-0.30, 0.30)];
        for s in straddles {
            assert_eq!(judge_paired_change(s, 0.05), ChangeVerdict::Inconclusive, "{s:?}");
            assert_eq!(judge_change(s, 0.05), ChangeVerdict::NoChange, "a saved run: {s:?}");
        }
    }

    #[test]
    fn five_rounds_on_a_side_give_no_interval_and_no_verdict() {
        let five = [1.0, 1.1, 1.0, 1.1, 1.0];
        let c = compare_ratio(&runs("x ÷ sched-lock", &five), &[1.0; 6], 0.05);
        assert_eq!((c.interval, c.verdict), (None, None));
        assert_eq!(c.no_interval.as_deref(), Some("no interval: fewer than 6 rounds on a side"));
    }

    /// The committed fixture: `schedlab compare --threads 1 --variants sched-lock,no-stats,epoch
    /// --rounds 10 --duration 0.2 ... --json` (benches/tests/fixtures/compare/): more than the 6
    /// rounds a 95 % interval needs ([`crate::stats::BOOTSTRAP_MIN_VALUES`]).
    const FIXTURE: &str = include_str!("../../../tests/fixtures/compare/baseline.json");
    const FIXTURE_VARIANTS: [&str; 3] = ["sched-lock", "no-stats", "epoch"];

    fn fixture() -> Baseline {
        Baseline::parse(
            Path::new("baseline.json"),
            FIXTURE,
            &FIXTURE_VARIANTS,
            &[LockKind::ParkingLot],
            DEFAULT_THRESHOLD,
        )
        .expect("the fixture is a baseline")
    }

    #[test]
    fn the_fixture_against_itself_says_no_change_for_every_ratio() {
        let b = fixture();
        assert!(b.ratios.len() >= 2, "{:?}", b.ratios);
        for r in &b.ratios {
            let c = compare_ratio(r, &r.runs, b.threshold);
            assert_eq!(c.verdict, Some(ChangeVerdict::NoChange), "{c:?}");
        }
    }

    #[test]
    fn the_fixture_with_one_ratio_halved_says_regressed_there_only() {
        let b = fixture();
        let halved = &b.ratios[0];
        let now =
            RatioRuns { runs: halved.runs.iter().map(|r| r / 2.0).collect(), ..halved.clone() };
        assert_eq!(
            compare_ratio(&now, &halved.runs, b.threshold).verdict,
            Some(ChangeVerdict::Regressed)
        );
        let doubled =
            RatioRuns { runs: halved.runs.iter().map(|r| r * 2.0).collect(), ..halved.clone() };
        assert_eq!(
            compare_ratio(&doubled, &halved.runs, b.threshold).verdict,
            Some(ChangeVerdict::Improved)
        );
        for r in &b.ratios[1..] {
            assert_eq!(
                compare_ratio(r, &r.runs, b.threshold).verdict,
                Some(ChangeVerdict::NoChange)
            );
        }
    }

    #[test]
    fn the_floor_is_the_largest_change_between_two_runs_either_way() {
        assert_eq!(between_run_floor(&[1.0]), None, "one run measures no spread");
        assert_eq!(between_run_floor(&[]), None);
        assert_eq!(between_run_floor(&[1.0, f64::NAN]), None, "a run without a median");
        let f = between_run_floor(&[1.0, 1.1, 0.95]).unwrap();
        assert!((f - (1.1 / 0.95 - 1.0)).abs() < 1e-12, "{f}");
        assert_eq!(between_run_floor(&[1.2, 1.2]), Some(0.0));
    }

    /// The fixture as a second run of its build, every ratio scaled by `by` (a run that
    /// differed from the first by that much).
    fn another_run(b: &Baseline, file: &str, by: f64) -> Baseline {
        let scaled = |r: &RatioRuns| RatioRuns {
            runs: r.runs.iter().map(|x| x * by).collect(),
            ..r.clone()
        };
        Baseline {
            file: file.into(),
            ratios: b.ratios.iter().map(scaled).collect(),
            more_runs: Vec::new(),
            ..b.clone()
        }
    }

    /// A baseline of two ratios whose rounds agree within 2 % (so that what the verdicts turn
    /// on is the band, not a wide interval).
    fn tight() -> Baseline {
        Baseline {
            ratios: vec![
                runs("no-stats ÷ sched-lock", &[1.50, 1.51, 1.49, 1.50, 1.52, 1.51]),
                runs("epoch ÷ sched-lock", &[1.20, 1.19, 1.21, 1.20, 1.22, 1.21]),
            ],
            ..fixture()
        }
    }

    #[test]
    fn a_change_no_larger_than_the_builds_runs_differ_by_is_no_change() {
        let first = tight();
        let second = another_run(&first, "old2.json", 1.12);
        let both = first.clone().with_runs(vec![second]).expect("two runs of one build");
        // Now: the first run's rounds scaled by 1.15, 15 % up on it, 3 % on the second.
        let now: Vec<RatioRuns> = first
            .ratios
            .iter()
            .map(|r| RatioRuns { runs: r.runs.iter().map(|x| x * 1.15).collect(), ..r.clone() })
            .collect();
        let against_one = first.compare(&now, None);
        let against_both = both.compare(&now, None);
        assert!(
            against_one.floor_not_measured.is_some() && against_both.floor_not_measured.is_none()
        );
        assert_eq!(against_both.more_files, ["old2.json"]);
        for (one, two) in against_one.changes.iter().zip(&against_both.changes) {
            assert_eq!(one.verdict, Some(ChangeVerdict::Improved), "one run: {one:?}");
            assert_eq!(one.between_run_floor, None);
            let floor = two.between_run_floor.expect("two runs measure a floor");
            assert!((floor - 0.12).abs() < 1e-9, "{two:?}");
            assert_eq!((two.band, two.verdict), (floor, Some(ChangeVerdict::NoChange)), "{two:?}");
        }
        // Twice as fast is beyond any floor the two runs show.
        let doubled: Vec<RatioRuns> = first
            .ratios
            .iter()
            .map(|r| RatioRuns { runs: r.runs.iter().map(|x| x * 2.0).collect(), ..r.clone() })
            .collect();
        for c in both.compare(&doubled, None).changes {
            assert_eq!(c.verdict, Some(ChangeVerdict::Improved), "{c:?}");
        }
        // A floor below the threshold leaves the threshold as the band.
        let close = first.clone().with_runs(vec![another_run(&first, "old3.json", 1.01)]).unwrap();
        for c in close.compare(&first.ratios, None).changes {
            assert_eq!((c.band, c.verdict), (first.threshold, Some(ChangeVerdict::NoChange)));
        }
    }

    #[test]
    fn a_change_is_judged_only_against_runs_made_in_this_runs_placement() {
        let far = Baseline { placement_ns: Some(160.0), ..tight() };
        let near = Baseline { placement_ns: Some(33.0), ..another_run(&far, "near.json", 1.18) };
        // This run: the far run's rounds again, in the far placement.
        let now = far.ratios.clone();
        let against_far = far.compare(&now, Some(150.0));
        assert!(against_far.not_judged.is_none() && against_far.placement_left_out.is_empty());
        assert!(against_far.changes.iter().all(|c| c.verdict == Some(ChangeVerdict::NoChange)));
        // Against the near run alone: the 18 % the placement made is not judged a change.
        let against_near = near.compare(&now, Some(150.0));
        let why = against_near.not_judged.as_deref().expect("the placements differ");
        assert!(why.contains("33 ns") && why.contains("150 ns"), "{why}");
        assert!(against_near.changes.iter().all(|c| c.verdict.is_none()), "{against_near:?}");
        // Against both: the near run is left out, of the verdicts and of the floor.
        let both = far.clone().with_runs(vec![near.clone()]).expect("one build");
        let against_both = both.compare(&now, Some(150.0));
        assert_eq!(against_both.placement_left_out, ["near.json (33 ns)"]);
        assert_eq!(against_both.rounds, far.rounds, "the near run's rounds are not counted");
        assert!(against_both.floor_not_measured.is_some(), "one run left in this placement");
        for c in &against_both.changes {
            assert_eq!((c.band, c.verdict), (far.threshold, Some(ChangeVerdict::NoChange)));
        }
        // Without a placement on a side, every run counts, and the comparison says why.
        let unplaced = both.compare(&now, None);
        assert!(unplaced.placement_left_out.is_empty() && unplaced.not_judged.is_none());
        assert!(unplaced.placement_not_compared.is_some());
        let floor = unplaced.changes[0].between_run_floor.expect("both runs count");
        assert!((floor - 0.18).abs() < 1e-9, "{floor}");
    }

    #[test]
    fn runs_of_another_build_or_the_same_file_again_are_refused() {
        let first = fixture();
        let other = Baseline { commit: "0000000".into(), ..another_run(&first, "new.json", 1.0) };
        let e = first.clone().with_runs(vec![other]).unwrap_err().to_string();
        assert!(e.contains("new.json") && e.contains("one build"), "{e}");
        let again = another_run(&first, "baseline.json", 1.0);
        let e = first.with_runs(vec![again]).unwrap_err().to_string();
        assert!(e.contains("given twice"), "{e}");
    }

    #[test]
    fn a_bad_baseline_is_one_line_naming_the_file() {
        let parse = |text: &str, variants: &[&str], locks: &[LockKind]| {
            let old = Path::new("old.json");
            Baseline::parse(old, text, variants, locks, 0.05).unwrap_err().to_string()
        };
        let pl = [LockKind::ParkingLot];
        let cases = [
            (parse("not json", &FIXTURE_VARIANTS, &pl), "not JSON"),
            (
                parse(
                    r#"{"schema": "schedlab-sweep", "schema_version": 1}"#,
                    &FIXTURE_VARIANTS,
                    &pl,
                ),
                "schema is `schedlab-sweep`",
            ),
            (
                parse(
                    &FIXTURE.replacen("\"schema_version\": 4", "\"schema_version\": 3", 1),
                    &FIXTURE_VARIANTS,
                    &pl,
                ),
                "schema_version 3",
            ),
            (parse(FIXTURE, &["sched-lock", "no-stats"], &pl), "other variants"),
            (parse(FIXTURE, &FIXTURE_VARIANTS, &[LockKind::FairSpin]), "other lock kinds"),
            (
                parse(
                    r#"{"schema": "schedlab-compare", "schema_version": 4}"#,
                    &FIXTURE_VARIANTS,
                    &pl,
                ),
                "missing field",
            ),
        ];
        for (line, what) in cases {
            assert!(line.contains("old.json") && line.contains(what), "{what}: {line}");
            assert!(!line.contains('\n'), "one line: {line}");
        }
    }
}
