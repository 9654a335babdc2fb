//! `--baseline EXE`: the old build interleaved with this one in the same rounds, so that the
//! change of each ratio between the builds is measured as the ratios between variants are:
//! within rounds, where the machine's state cancels.
//!
//! Why: a saved baseline (`--baseline old.json`, [`super::baseline`]) was made minutes or days
//! before, in another state of the machine; on a shared 2-vCPU VM a ratio of one build moved by
//! 9–18 % between runs (`notes/results/2026-12-05-baseline-floor.md`), more than any change worth
//! finding, and a floor from several saved runs does not foresee a run unlike them all.
//!
//! How: each round runs every entry (each variant, and the A/A copy) once with each build, both
//! as child processes `EXE run --variant V ... --json FILE` with the same arguments
//! (`driver::child`), so that neither build runs in the comparing process. The two runs of an
//! entry follow each other, the baseline's first in even rounds and this build's first in odd
//! ones ([`order`]). Each build's ratios are taken within the round (variant ÷ `sched-lock`, the
//! seeds' ratios between other variants: the ratios `--baseline old.json` compares), and each
//! ratio's change is this build's ratio ÷ the baseline's **in the same round** − 1
//! ([`paired_change`]): a round in which the machine was 20 % slower for both builds changes
//! neither the ratio nor its change. The change is the median over rounds, with a 95 %
//! bootstrap interval over rounds (`stats::ratio_interval`), and its verdict
//! ([`baseline::judge_paired_change`]) is improved or regressed when the whole interval lies
//! beyond ±threshold (`--baseline-threshold`, default 5 %), no change when it lies inside, and
//! inconclusive when it reaches across the band's edge (more rounds would tell).
//!
//! [`baseline::judge_paired_change`]: super::baseline::judge_paired_change

use super::baseline::{judge_paired_change, ChangeVerdict};
use super::cells::{paired_rounds, Cell, AA_REFERENCE};
use crate::driver::child::Build;
use crate::seeds::SEEDS;
use crate::stats::{median, ratio_interval, Interval, Spread};
use schedlab_core::LockKind;
use serde::Serialize;

/// The two builds of a comparison `--baseline EXE`, and its no-change band.
#[derive(Clone, Debug)]
pub struct BuildPair {
    /// This build (the comparing executable), also run as a child process.
    pub this: Build,
    /// The old build given with `--baseline`.
    pub baseline: Build,
    /// The no-change band's half-width, a fraction (0.05: ±5 %).
    pub threshold: f64,
}

/// Which build made a run.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Side {
    This,
    Baseline,
}

impl Side {
    pub fn label(self) -> &'static str {
        match self {
            Side::This => "this build",
            Side::Baseline => "baseline build",
        }
    }
}

/// The builds in the order round `round` runs each entry with them: the baseline first in even
/// rounds, this build first in odd ones, so that neither always runs first (right after the
/// other's run heated the caches or the machine changed its mind).
pub fn order(round: usize) -> [Side; 2] {
    if round % 2 == 0 {
        [Side::Baseline, Side::This]
    } else {
        [Side::This, Side::Baseline]
    }
}

/// One ratio's change between the builds (JSON: `builds.changes[]`).
#[derive(Clone, Debug, Serialize)]
pub struct BuildChange {
    /// "queue-lock ÷ sched-lock"; a seed's ratio between other variants "epoch ÷ debug-off".
    pub ratio: String,
    pub lock: LockKind,
    /// The median over rounds of the ratio in the baseline build, and in this build.
    pub baseline: Option<f64>,
    pub current: Option<f64>,
    /// The median over the paired rounds of (this build's ratio ÷ the baseline's − 1).
    pub change: Option<f64>,
    /// Rounds in which both builds gave the ratio (the pairs behind `change`).
    pub rounds: usize,
    /// Each paired round's change, in round order (fractions, as `change`).
    pub round_changes: Vec<f64>,
    /// The 95 % bootstrap interval of `change` over the paired rounds.
    pub interval: Option<Interval>,
    /// Why `interval` is null (fewer than [`crate::stats::BOOTSTRAP_MIN_VALUES`] paired rounds);
    /// then no verdict.
    pub no_interval: Option<String>,
    /// The no-change band's half-width (fraction).
    pub band: f64,
    pub verdict: Option<ChangeVerdict>,
}

/// The change of one ratio from the per-round ratios of each build, `(round, ratio)`: paired by
/// round (a round that only one build finished gives no pair), judged against ±`threshold`.
pub fn paired_change(
    ratio: String,
    lock: LockKind,
    this: &[(usize, f64)],
    baseline: &[(usize, f64)],
    threshold: f64,
) -> BuildChange {
    let mut pairs: Vec<(usize, f64)> = this
        .iter()
        .filter_map(|(round, now)| {
            let then = baseline.iter().find(|(r, _)| r == round)?.1;
            Some((*round, now / then)).filter(|(_, x)| x.is_finite())
        })
        .collect();
    pairs.sort_by_key(|(round, _)| *round);
    let ratios: Vec<f64> = pairs.iter().map(|(_, x)| *x).collect();
    let of = |side: &[(usize, f64)]| {
        (!side.is_empty()).then(|| median(&side.iter().map(|(_, x)| *x).collect::<Vec<_>>()))
    };
    let spread = (!ratios.is_empty()).then(|| Spread::of(ratios.clone()));
    let interval = spread.as_ref().map(ratio_interval);
    let interval_of_change = match &interval {
        Some(Ok(i)) => Some(Interval { lo: i.lo - 1.0, hi: i.hi - 1.0 }),
        _ => None,
    };
    let no_interval = match &interval {
        Some(Ok(_)) => None,
        Some(Err(why)) => Some(why.to_string()),
        None => Some("no interval: no round ran the ratio with both builds".to_string()),
    };
    BuildChange {
        ratio,
        lock,
        baseline: of(baseline),
        current: of(this),
        change: spread.as_ref().map(|s| s.median - 1.0),
        rounds: ratios.len(),
        round_changes: ratios.iter().map(|x| x - 1.0).collect(),
        interval: interval_of_change,
        no_interval,
        band: threshold,
        verdict: interval_of_change.map(|i| judge_paired_change(i, threshold)),
    }
}

/// The ratios compared between the builds, as `--baseline old.json` compares them
/// (`baseline::ratio_runs_from`): every variant ÷ [`AA_REFERENCE`] when it is compared, then
/// each seed's ratio between two other compared variants.
pub fn ratio_pairs(variants: &[&'static str]) -> Vec<(&'static str, &'static str)> {
    let mut out: Vec<(&'static str, &'static str)> = Vec::new();
    if variants.contains(&AA_REFERENCE) {
        let others = variants.iter().filter(|v| **v != AA_REFERENCE);
        out.extend(others.map(|v| (*v, AA_REFERENCE)));
    }
    for seed in SEEDS.iter().filter(|s| s.denominator != AA_REFERENCE) {
        let pair = (seed.numerator, seed.denominator);
        let compared = variants.contains(&pair.0) && variants.contains(&pair.1);
        if compared && !out.contains(&pair) {
            out.push(pair);
        }
    }
    out
}

/// A comparison between two builds (JSON: `builds`).
#[derive(Clone, Debug, Serialize)]
pub struct BuildComparison {
    /// The baseline's executable and both builds' `--version` lines.
    pub baseline_exe: String,
    pub baseline_version: String,
    pub this_exe: String,
    pub this_version: String,
    /// The no-change band's half-width (fraction).
    pub threshold: f64,
    /// How the two builds were interleaved.
    pub order: &'static str,
    /// Every compared ratio under every lock kind, lock by lock.
    pub changes: Vec<BuildChange>,
    /// The same ratios as per-round values of each build, for the precision's stop rule
    /// ([`change_spreads`]); not in the JSON.
    #[serde(skip)]
    pub spreads: Vec<(String, Spread)>,
}

/// The order, as the report says it.
pub const ORDER: &str = "each entry with both builds back to back, the baseline first in odd \
                         rounds (1, 3, ...) and this build first in even ones";

/// Every ratio's change, from the cells of each build (one per lock kind and entry).
pub(super) fn compare(
    this: &[Vec<Cell>],
    baseline: &[Vec<Cell>],
    entries: &[(&'static str, &'static str)],
    variants: &[&'static str],
    locks: &[LockKind],
    pair: &BuildPair,
) -> BuildComparison {
    let mut changes = Vec::new();
    for (li, &lock) in locks.iter().enumerate() {
        for (num, den) in ratio_pairs(variants) {
            let rounds = |cells: &[Cell]| paired_rounds(cells, entries, num, den);
            let (Some(now), Some(then)) = (rounds(&this[li]), rounds(&baseline[li])) else {
                continue;
            };
            let name = format!("{num} ÷ {den}");
            changes.push(paired_change(name, lock, &now, &then, pair.threshold));
        }
    }
    BuildComparison {
        baseline_exe: pair.baseline.exe.display().to_string(),
        baseline_version: pair.baseline.version.clone(),
        this_exe: pair.this.exe.display().to_string(),
        this_version: pair.this.version.clone(),
        threshold: pair.threshold,
        order: ORDER,
        spreads: change_spreads(&changes),
        changes,
    }
}

/// Each change's per-round values as a ratio (this ÷ baseline, around 1), named as the
/// precision's stop rule names its ratios ("change of X ÷ Y (lock)").
pub fn change_spreads(changes: &[BuildChange]) -> Vec<(String, Spread)> {
    changes
        .iter()
        .filter(|c| !c.round_changes.is_empty())
        .map(|c| {
            let name = format!("change of {} ({})", c.ratio, c.lock.name());
            (name, Spread::of(c.round_changes.iter().map(|x| 1.0 + x).collect()))
        })
        .collect()
}

impl BuildComparison {
    /// One line per ratio that regressed against the baseline build.
    pub fn regressions(&self) -> Vec<String> {
        let regressed = self.changes.iter().filter(|c| c.verdict == Some(ChangeVerdict::Regressed));
        regressed
            .map(|c| {
                format!(
                    "{} ({}) regressed against the baseline build {}: {:+.1} %",
                    c.ratio,
                    c.lock.name(),
                    self.baseline_exe,
                    100.0 * c.change.unwrap_or(f64::NAN)
                )
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const LOCK: LockKind = LockKind::FairSpin;

    /// Per-round ratios of one build: `ratio` in every round, the rounds numbered from 0.
    fn rounds(values: &[f64]) -> Vec<(usize, f64)> {
        values.iter().copied().enumerate().collect()
    }

    /// KIOPS of a variant and of the reference in each round, the machine's state a factor on
    /// both, and the ratio they give.
    fn ratios_of(state: &[f64], variant: f64, reference: f64) -> Vec<(usize, f64)> {
        rounds(&state.iter().map(|s| (s * variant) / (s * reference)).collect::<Vec<_>>())
    }

    /// The machine's state moves the ratio itself (in its slow state the lock-bound reference
    /// loses more than the variant: notes/results/2026-12-05-baseline-floor.md), by 20 % between
    /// rounds, alike in both builds: paired within the round, no change, and a narrow interval.
    /// Taken apart (each build's rounds against the other's at other times), the same figures
    /// would span ±20 %.
    #[test]
    fn rounds_that_differ_in_the_machines_state_but_not_in_the_ratio_are_no_change() {
        let state = [1.0, 1.2, 1.0, 1.2, 1.2, 1.0];
        let noise = [1.0, 1.01, 0.99, 1.005, 0.995, 1.0];
        let baseline = rounds(&state.map(|s| 1.3 * s));
        let this: Vec<(usize, f64)> = baseline.iter().map(|(r, x)| (*r, x * noise[*r])).collect();
        let c = paired_change("v ÷ sched-lock".into(), LOCK, &this, &baseline, 0.05);
        assert_eq!(c.rounds, 6);
        assert!(c.change.unwrap().abs() < 0.01, "{c:?}");
        let i = c.interval.expect("six rounds");
        assert!(i.lo > -0.02 && i.hi < 0.02, "the state cancels within rounds: {c:?}");
        assert_eq!(c.verdict, Some(ChangeVerdict::NoChange), "{c:?}");
    }

    /// Pairing by round is what cancels the machine: the same builds' KIOPS, the reference taken
    /// from a round in another machine state (what an unpaired comparison of runs made at other
    /// times does), give changes of 20 % either way, and no "no change".
    #[test]
    fn without_pairing_by_round_the_machines_state_would_be_the_change() {
        let state = [1.0, 1.2, 1.0, 1.2, 1.0, 1.2];
        let kiops = |round: usize, v: f64| state[round] * v;
        // This build's variant in each round over the baseline's reference of the next round.
        let crossed: Vec<(usize, f64)> =
            (0..6).map(|r| (r, kiops(r, 130.0) / kiops((r + 1) % 6, 100.0))).collect();
        let baseline = ratios_of(&state, 130.0, 100.0);
        let c = paired_change("v ÷ sched-lock".into(), LOCK, &crossed, &baseline, 0.05);
        let i = c.interval.expect("six rounds");
        assert!(i.lo < -0.1 && i.hi > 0.1, "the machine's state is in the change: {c:?}");
        assert_ne!(c.verdict, Some(ChangeVerdict::NoChange), "{c:?}");
    }

    #[test]
    fn a_ratio_that_moved_in_every_round_is_improved_or_regressed() {
        let state = [1.0, 1.2, 0.8, 1.1, 0.9, 1.05];
        let baseline = ratios_of(&state, 130.0, 100.0);
        let slower = ratios_of(&state, 100.0, 100.0);
        let c = paired_change("v ÷ sched-lock".into(), LOCK, &slower, &baseline, 0.05);
        assert_eq!(c.verdict, Some(ChangeVerdict::Regressed), "{c:?}");
        assert!((c.change.unwrap() - (1.0 / 1.3 - 1.0)).abs() < 1e-9, "{c:?}");
        assert!(
            (c.baseline.unwrap() - 1.3).abs() < 1e-9 && (c.current.unwrap() - 1.0).abs() < 1e-9
        );
        let faster = ratios_of(&state, 160.0, 100.0);
        let c = paired_change("v ÷ sched-lock".into(), LOCK, &faster, &baseline, 0.05);
        assert_eq!(c.verdict, Some(ChangeVerdict::Improved), "{c:?}");
    }

    #[test]
    fn an_interval_across_the_bands_edge_is_inconclusive() {
        // Changes of 0, +8, +3, +9, −1, +6 %: the interval reaches from inside the band to
        // beyond it.
        let baseline = rounds(&[1.0; 6]);
        let this = rounds(&[1.0, 1.08, 1.03, 1.09, 0.99, 1.06]);
        let c = paired_change("v ÷ sched-lock".into(), LOCK, &this, &baseline, 0.05);
        let i = c.interval.unwrap();
        assert!(i.lo < 0.05 && i.hi > 0.05, "{c:?}");
        assert_eq!(c.verdict, Some(ChangeVerdict::Inconclusive), "{c:?}");
    }

    #[test]
    fn a_round_only_one_build_finished_pairs_with_nothing() {
        let this: Vec<(usize, f64)> = (0..6).map(|r| (r, 1.0)).chain([(6, 5.0)]).collect();
        let baseline: Vec<(usize, f64)> = (0..6).map(|r| (r, 1.0)).collect();
        let c = paired_change("v ÷ sched-lock".into(), LOCK, &this, &baseline, 0.05);
        assert_eq!((c.rounds, c.change), (6, Some(0.0)), "round 6 has no pair: {c:?}");
        assert!(c.interval.is_some(), "six paired rounds: {c:?}");
        let five = paired_change("v ÷ sched-lock".into(), LOCK, &this[..5], &baseline, 0.05);
        assert_eq!((five.interval, five.verdict), (None, None));
        assert_eq!(five.no_interval.as_deref(), Some("no interval: fewer than 6 rounds"));
    }

    #[test]
    fn the_builds_take_turns_at_running_first() {
        assert_eq!(order(0), [Side::Baseline, Side::This]);
        assert_eq!(order(1), [Side::This, Side::Baseline]);
        assert_eq!(order(2), order(0));
    }

    #[test]
    fn the_ratios_are_those_a_saved_baseline_compares() {
        let variants = ["sched-lock", "no-stats", "epoch", "debug-off", "queue-lock"];
        let pairs = ratio_pairs(&variants);
        let rows = variants.iter().map(|v| (*v, LOCK, Some(&[1.0][..])));
        let seeds = SEEDS
            .iter()
            .filter(|s| variants.contains(&s.numerator) && variants.contains(&s.denominator))
            .map(|s| (s.numerator, s.denominator, LOCK, &[1.0][..]));
        let saved = super::super::baseline::ratio_runs_from(rows, seeds);
        let names: Vec<String> = pairs.iter().map(|(n, d)| format!("{n} ÷ {d}")).collect();
        let saved: Vec<String> = saved.into_iter().map(|r| r.ratio).collect();
        assert_eq!(names, saved);
        assert!(ratio_pairs(&["no-stats", "epoch"]).iter().all(|(_, d)| *d != AA_REFERENCE));
    }
}
