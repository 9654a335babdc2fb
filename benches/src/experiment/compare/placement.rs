//! Where the machine put the comparison's CPUs, run by run, and which rounds that leaves
//! comparable (issue 42 item 4: the cause of the per-round spread).
//!
//! ## Why
//!
//! On this machine kind (2 vCPUs of an AMD EPYC host under KVM), a comparison's rounds split into
//! two populations: most run at about 1 150 KIOPS (sched-lock, fair-spin, 2 threads), and spells
//! of 2–30 s run every variant about 3.4 times slower, with no other process, no steal and both
//! CPUs busy (`notes/results/2026-12-04-placement.md`). A cache-line ping-pong between the two
//! vCPUs, repeated every 0.2 s on a quiet machine, takes about 34 ns one way in the first
//! population and about 162 ns in the second, in spells of the same length: the host moves the
//! vCPUs between cores that share a cache and cores that do not. The guest cannot control it
//! (`--pin` pins jobs to vCPUs, not vCPUs to cores). A lock-bound variant moves every lock and
//! most of its data between the CPUs on every acquisition, so its KIOPS follow the transfer; and
//! not in proportion for every variant (a variant that transfers fewer lines loses less), so a
//! ratio taken across a change of placement is neither population's ratio.
//!
//! ## What it does
//!
//! Before and after every run (a run's probe after is the next run's before, within a round),
//! [`probe_here`] measures one cache-line transfer between the first two allowed CPUs (least of
//! [`TRIALS`] short ping-pongs: preemption only ever adds time). The probes so far split at the
//! widest gap between two of them in order of size, when that gap is more than [`FAR_FACTOR`]: a
//! probe above it is *far*, one below it *near* ([`Tracker::far_above`]); without such a gap
//! every probe is of one placement. (Not against the fastest probe alone: one odd 15 ns probe
//! among 31–34 ns ones made them all "far" on 2026-12-05,
//! `notes/results/2026-12-05-baseline-placement.md`.) A round whose probes are not all in one
//! placement changed placement while it ran: its runs are left out of every figure, and the
//! round is made again (at most as many times as the comparison has rounds, and with a precision
//! only within its time limit; past that it is left out all the same, never kept: its ratios
//! would pair runs from both placements). At the end, when the kept rounds ran in both
//! placements, the ratios come from the placement more of them ran in (with a saved baseline,
//! the baseline's, when some ran in it: [`Tracker::prefer_ns`]), and the others are left out and
//! named. What was measured, what was left out and why, and how many rounds the figures rest on
//! is in the report's `placement` and its warning ([`PlacementReport::note`]), which also says
//! when too few rounds were kept for the rounds asked or for an interval.

use super::cells::Cell;
use schedlab_core::sync::AtomicBool;
use schedlab_core::LockKind;
use serde::Serialize;
use std::collections::BTreeSet;

/// Two probes are of two placements only when one takes more than this many times the other
/// with no probe between them ([`Tracker::far_above`]). The two placements measured here differ
/// by a factor of about 4.8 (32 and 157 ns); within one, probes differ by up to 2.1 (an odd
/// 15 ns probe among 31–34 ns ones, 2026-12-05), and a probe that preemption lengthened in all
/// of its trials is rarer than either.
pub const FAR_FACTOR: f64 = 3.0;

/// Short ping-pongs per probe; the least is kept.
pub const TRIALS: usize = 5;

/// A probe counts only when its trials agree: their median within this factor of their least.
/// In one placement the trials of a probe differ by about 10 %; a probe during which another
/// process took either CPU has trials that differ by far more, and measures that process.
pub const STEADY_FACTOR: f64 = 1.5;

/// How a probe measures, in the report's words.
pub const PROBE: &str =
    "one-way cache-line transfer between the first two allowed CPUs, least of 5 \
                         ping-pongs whose median is within 1.5 times it, between every two runs; \
                         none for a run that other processes disturbed";

/// Measures a placement probe on this machine: `None` with fewer than two allowed CPUs, or when
/// the trials disagree ([`steady`]).
pub fn probe_here(stop: &AtomicBool) -> Option<f64> {
    let cpus = crate::driver::host::allowed_cpus();
    let (&a, &b) = (cpus.first()?, cpus.get(1)?);
    let sample = crate::model::probes::transfer_between(a, b, TRIALS, stop)?;
    steady(&sample.trials_ns)
}

/// The least of a probe's trials when their median is within [`STEADY_FACTOR`] of it; `None`
/// otherwise (or without trials).
pub fn steady(trials_ns: &[f64]) -> Option<f64> {
    let mut sorted: Vec<f64> =
        trials_ns.iter().copied().filter(|t| t.is_finite() && *t > 0.0).collect();
    sorted.sort_by(f64::total_cmp);
    let (least, median) = (*sorted.first()?, sorted[sorted.len() / 2]);
    (median <= STEADY_FACTOR * least).then_some(least)
}

/// How a comparison measures placement: [`probe_here`], or a stand-in in tests.
pub type Probe<'a> = &'a dyn Fn(&AtomicBool) -> Option<f64>;

/// What a comparison does with the rounds the probes place (`--placement`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum PlacementRule {
    /// A round whose probes changed placement is left out and made again; at the end the ratios
    /// come from the placement more kept rounds ran in (this module's doc).
    #[default]
    Separate,
    /// Every round is kept and the ratios pool both placements: for a machine whose CPUs do not
    /// move (bare metal, pinned vCPUs), and for a functional run that must keep what it made on
    /// a loaded machine, where a probe that another process stretched reads as "far". The
    /// probes are still measured and reported.
    Pool,
}

impl PlacementRule {
    pub const NAMES: &'static str = "separate, pool";

    pub fn from_name(name: &str) -> Option<PlacementRule> {
        match name {
            "separate" => Some(PlacementRule::Separate),
            "pool" => Some(PlacementRule::Pool),
            _ => None,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            PlacementRule::Separate => "separate",
            PlacementRule::Pool => "pool",
        }
    }
}

/// Which of the two placements a probe saw.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Placement {
    /// Below the widest gap between the probes ([`Tracker::far_above`]), or every probe when
    /// there is no gap wider than [`FAR_FACTOR`].
    Near,
    /// Slower than that.
    Far,
}

impl Placement {
    pub fn name(self) -> &'static str {
        match self {
            Placement::Near => "near",
            Placement::Far => "far",
        }
    }
}

/// One run's probes.
#[derive(Clone, Debug, Serialize)]
pub struct RunProbe {
    pub round: usize,
    pub lock: LockKind,
    pub variant: &'static str,
    pub instrumented: bool,
    pub before_ns: Option<f64>,
    pub after_ns: Option<f64>,
}

/// What a round's probes say.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RoundPlacement {
    /// Every probe in one placement.
    Settled(Placement),
    /// Probes in both: the placement changed while the round ran.
    Changed,
    /// No probe measured (one CPU).
    Unknown,
}

/// Every probe of a comparison and what was done with the rounds.
#[derive(Default)]
pub struct Tracker {
    pub runs: Vec<RunProbe>,
    /// Rounds whose placement changed while they ran, left out and made again.
    pub run_again: Vec<usize>,
    /// Rounds whose placement changed while they ran, left out and not made again: as many had
    /// been made again as the comparison has rounds.
    pub moved_left_out: Vec<usize>,
    /// Whole rounds made (kept, left out or made again); 0 when not counted.
    pub made: usize,
    /// Rounds the comparison asked for.
    pub asked: usize,
    /// What is done with the rounds the probes place.
    pub rule: PlacementRule,
    /// The transfer time of the placement to keep when the kept rounds ran in both: a saved
    /// baseline's ([`PlacementReport::reported_ns`]), so that a change against it is taken
    /// within one placement. `None`: the placement more rounds ran in.
    pub prefer_ns: Option<f64>,
}

impl Tracker {
    fn probes(&self) -> impl Iterator<Item = f64> + '_ {
        self.runs.iter().flat_map(|r| [r.before_ns, r.after_ns]).flatten()
    }

    /// The fastest probe so far.
    pub fn near_ns(&self) -> Option<f64> {
        self.probes().reduce(f64::min)
    }

    /// The time above which a probe is far: the geometric middle of the widest gap between two
    /// probes next to each other in order of size, when that gap is more than [`FAR_FACTOR`];
    /// `None` while every probe is of one placement.
    pub fn far_above(&self) -> Option<f64> {
        let mut sorted: Vec<f64> = self.probes().collect();
        sorted.sort_by(f64::total_cmp);
        let widest = sorted.windows(2).max_by(|a, b| (a[1] / a[0]).total_cmp(&(b[1] / b[0])))?;
        (widest[1] > FAR_FACTOR * widest[0]).then(|| (widest[0] * widest[1]).sqrt())
    }

    /// The slowest probe in the far placement, if any.
    pub fn far_ns(&self) -> Option<f64> {
        let above = self.far_above()?;
        self.probes().filter(|&p| p > above).reduce(f64::max)
    }

    /// The median of `round`'s probes, ns; `None` when none counted.
    pub fn round_ns(&self, round: usize) -> Option<f64> {
        let probes = self.runs.iter().filter(|r| r.round == round);
        median_probe(probes.flat_map(|r| [r.before_ns, r.after_ns]).flatten())
    }

    /// What `round`'s probes say, judged against every probe so far ([`Tracker::far_above`]).
    pub fn round(&self, round: usize) -> RoundPlacement {
        let far_above = self.far_above();
        let classes: BTreeSet<_> = self
            .runs
            .iter()
            .filter(|r| r.round == round)
            .flat_map(|r| [r.before_ns, r.after_ns])
            .flatten()
            .map(|p| far_above.is_some_and(|above| p > above))
            .collect();
        match (classes.contains(&false), classes.contains(&true)) {
            (true, true) => RoundPlacement::Changed,
            (true, false) => RoundPlacement::Settled(Placement::Near),
            (false, true) => RoundPlacement::Settled(Placement::Far),
            (false, false) => RoundPlacement::Unknown,
        }
    }

    /// What `round`'s probes decide under the comparison's rule: with [`PlacementRule::Pool`]
    /// no round changed placement, whatever its probes read.
    pub fn decided(&self, round: usize) -> RoundPlacement {
        match (self.rule, self.round(round)) {
            (PlacementRule::Pool, RoundPlacement::Changed) => RoundPlacement::Unknown,
            (_, placement) => placement,
        }
    }

    /// At the end: the placement the ratios come from (the one more kept rounds settled in; near
    /// on a tie; with [`Tracker::prefer_ns`], the one whose rounds took about that transfer, when
    /// any did) and the kept rounds settled in the other, to be left out.
    pub fn minority(&self, kept: &[usize]) -> (Option<Placement>, Vec<usize>) {
        let settled: Vec<(usize, Placement)> = kept
            .iter()
            .filter_map(|&r| match self.round(r) {
                RoundPlacement::Settled(p) => Some((r, p)),
                _ => None,
            })
            .collect();
        if self.rule == PlacementRule::Pool {
            return (None, Vec::new());
        }
        // The preferred transfer's rounds, when some kept round took it.
        let preferred = self.prefer_ns.and_then(|want| {
            let matching = |r: &usize| self.round_ns(*r).is_some_and(|ns| same_placement(ns, want));
            let first = settled.iter().find(|(r, _)| matching(r))?;
            Some(first.1)
        });
        let far = settled.iter().filter(|(_, p)| *p == Placement::Far).count();
        let near = settled.len() - far;
        if settled.is_empty() {
            return (None, Vec::new());
        }
        let majority = match preferred {
            Some(p) => p,
            None if far > near => Placement::Far,
            None => Placement::Near,
        };
        let left_out = settled.iter().filter(|(_, p)| *p != majority).map(|(r, _)| *r).collect();
        (Some(majority), left_out)
    }
}

/// Whether two transfer times, from runs made apart, are of one placement: within
/// [`FAR_FACTOR`] of each other. A comparison's own near and far are relative to its fastest
/// probe, and a comparison that ran wholly in the far placement calls it near; the times are
/// what two comparisons can be held to.
pub fn same_placement(a_ns: f64, b_ns: f64) -> bool {
    let (lo, hi) = if a_ns <= b_ns { (a_ns, b_ns) } else { (b_ns, a_ns) };
    lo > 0.0 && hi <= FAR_FACTOR * lo
}

/// The median of some probes, ns; `None` without one.
fn median_probe(probes: impl Iterator<Item = f64>) -> Option<f64> {
    let all: Vec<f64> = probes.filter(|p| p.is_finite() && *p > 0.0).collect();
    (!all.is_empty()).then(|| crate::stats::median(&all))
}

/// The transfer the reported rounds ran with ([`PlacementReport::reported_ns`]): the median
/// probe of every run (`(round, before, after)`) whose round is in none of `left_out` (made
/// again, moved and left out, settled in the other placement). Also how `--baseline` reads it
/// from a report made before the field was written.
pub(super) fn reported_ns(
    runs: impl Iterator<Item = (usize, Option<f64>, Option<f64>)>,
    left_out: [&[usize]; 3],
) -> Option<f64> {
    let kept = runs.filter(|(round, _, _)| !left_out.iter().any(|rounds| rounds.contains(round)));
    median_probe(kept.flat_map(|(_, before, after)| [before, after]).flatten())
}

/// Drops every run of `rounds` from the cells (their ratios would pair runs made in different
/// placements).
pub(super) fn leave_out(cells: &mut [Vec<Cell>], rounds: &[usize]) {
    for cell in cells.iter_mut().flatten() {
        let before = cell.plain.len() + cell.lockstat.len();
        cell.plain.retain(|(r, _)| !rounds.contains(r));
        cell.lockstat.retain(|(r, _)| !rounds.contains(r));
        cell.left_out += before - cell.plain.len() - cell.lockstat.len();
    }
}

/// Why no probe counted: one CPU, no run finished, or every probe left out.
fn why_no_probe(runs: &[RunProbe]) -> &'static str {
    if crate::driver::host::allowed_cpus().len() < 2 {
        "fewer than two CPUs allowed"
    } else if runs.is_empty() {
        "no run finished"
    } else {
        "every probe was left out: other processes disturbed the runs, or a probe's trials disagreed"
    }
}

/// The report's account of placement (JSON `placement`).
#[derive(Clone, Debug, Serialize)]
pub struct PlacementReport {
    /// How each probe measures ([`PROBE`]).
    pub probe: &'static str,
    /// The fastest probe, ns (one way).
    pub near_ns: Option<f64>,
    /// The slowest far probe ([`Tracker::far_above`]), if any.
    pub far_ns: Option<f64>,
    pub far_factor: f64,
    /// The placement the reported rounds ran in; `null` when no probe measured.
    pub reported: Option<Placement>,
    /// The median probe of the reported rounds, ns: the transfer every figure ran with, which a
    /// later comparison against this one as its baseline is held to ([`same_placement`]).
    pub reported_ns: Option<f64>,
    /// Rounds (0-based) whose placement changed while they ran, left out and made again.
    pub rounds_run_again: Vec<usize>,
    /// Rounds whose placement changed while they ran, left out of every figure and not made
    /// again: the comparison had made as many rounds again as it has rounds.
    pub rounds_moved_left_out: Vec<usize>,
    /// Always empty: a round whose placement changed is never kept (its ratios would pair runs
    /// from both placements). Schema version 4 had such rounds here; the field stays so that its
    /// readers find none.
    pub rounds_kept_changed: Vec<usize>,
    /// Rounds settled in the other placement, left out of every figure.
    pub rounds_left_out: Vec<usize>,
    /// Whole rounds made: those every figure rests on and all those left out (`rounds_completed`
    /// of the report counts the first).
    pub rounds_made: usize,
    /// Rounds asked (the config's `rounds`), to say when fewer were kept.
    #[serde(skip)]
    pub rounds_asked: usize,
    /// What was done with the rounds the probes placed (`--placement`).
    pub rule: PlacementRule,
    /// With a saved baseline: its transfer, ns, which chose the placement kept when the rounds
    /// ran in both ([`Tracker::prefer_ns`]).
    pub baseline_ns: Option<f64>,
    /// Why nothing was measured (one CPU).
    pub not_measured: Option<String>,
    /// Every run's probes.
    pub runs: Vec<RunProbe>,
}

impl PlacementReport {
    pub fn new(
        tracker: Tracker,
        reported: Option<Placement>,
        left_out: Vec<usize>,
    ) -> PlacementReport {
        let near_ns = tracker.near_ns();
        let reported_ns = reported_ns(
            tracker.runs.iter().map(|r| (r.round, r.before_ns, r.after_ns)),
            [&tracker.run_again, &tracker.moved_left_out, &left_out],
        );
        PlacementReport {
            probe: PROBE,
            reported_ns,
            far_ns: tracker.far_ns(),
            near_ns,
            far_factor: FAR_FACTOR,
            reported,
            rounds_run_again: tracker.run_again,
            rounds_moved_left_out: tracker.moved_left_out,
            rounds_kept_changed: Vec::new(),
            rounds_left_out: left_out,
            rounds_made: tracker.made,
            rounds_asked: tracker.asked,
            rule: tracker.rule,
            baseline_ns: tracker.prefer_ns,
            not_measured: near_ns.is_none().then(|| why_no_probe(&tracker.runs).to_string()),
            runs: tracker.runs,
        }
    }

    /// A line for the reader when the placement changed during the comparison: every round left
    /// out and why, and how many rounds every figure rests on (plainly, when fewer than asked or
    /// too few for an interval); `None` when the placement did not change (or was not measured).
    pub fn note(&self) -> Option<String> {
        let (near, far) = (self.near_ns?, self.far_ns?);
        let rounds =
            |v: &[usize]| v.iter().map(|r| (r + 1).to_string()).collect::<Vec<_>>().join(", ");
        let mut parts = vec![format!(
            "the machine moved its CPUs during the comparison: a cache-line transfer between them took \
             {near:.0} ns (near) and up to {far:.0} ns (far), and a lock-bound variant's KIOPS follow it"
        )];
        if self.rule == PlacementRule::Pool {
            parts.push(
                "--placement pool: every round is kept, and each ratio pools rounds from both \
                 placements (its interval includes the difference between them)"
                    .to_string(),
            );
        }
        if !self.rounds_run_again.is_empty() {
            parts.push(format!(
                "round(s) {} changed placement while running and were made again",
                rounds(&self.rounds_run_again)
            ));
        }
        if !self.rounds_moved_left_out.is_empty() {
            parts.push(format!(
                "round(s) {} changed placement while running and are left out, not made again \
                 (as many rounds had been made again as were asked)",
                rounds(&self.rounds_moved_left_out)
            ));
        }
        let other = match self.reported {
            Some(Placement::Far) => "near",
            _ => "far",
        };
        if !self.rounds_left_out.is_empty() {
            let rounds = rounds(&self.rounds_left_out);
            let why = match (self.baseline_ns, self.reported_ns) {
                (Some(then), Some(now)) if same_placement(then, now) => format!(
                    " (the baseline ran with a {then:.0} ns transfer: the rounds in its placement \
                     are kept)"
                ),
                _ => String::new(),
            };
            parts.push(format!(
                "round(s) {rounds} ran in the {other} placement and are left out{why}"
            ));
        }
        parts.extend(self.rounds_kept_line());
        Some(parts.join("; "))
    }

    /// "4 of 6 rounds left out: every figure rests on the 2 kept, in the near placement, fewer
    /// than the 3 asked, too few for an interval (every ratio's interval not estimable)"; without
    /// the rounds counted, only the placement.
    fn rounds_kept_line(&self) -> Option<String> {
        let name = self.reported.map(Placement::name);
        if self.rounds_made == 0 {
            return name.map(|p| format!("every figure is from rounds in the {p} placement"));
        }
        let placement = name.map_or(String::new(), |p| format!(", in the {p} placement"));
        let moved = self.rounds_run_again.len() + self.rounds_moved_left_out.len();
        let left_out = moved + self.rounds_left_out.len();
        let (made, kept) = (self.rounds_made, self.rounds_made.saturating_sub(left_out));
        let head = format!("{left_out} of {made} rounds left out");
        let mut line = match (kept, left_out) {
            (0, _) => format!("all {made} rounds left out: no round is kept, no figure estimable"),
            (_, 0) => format!("every figure rests on the {kept} rounds made{placement}"),
            _ => format!("{head}: every figure rests on the {kept} kept{placement}"),
        };
        if kept > 0 && kept < self.rounds_asked {
            line.push_str(&format!(", fewer than the {} asked", self.rounds_asked));
        }
        if kept > 0 && kept < crate::stats::BOOTSTRAP_MIN_VALUES {
            line.push_str(", too few for an interval (every ratio's interval not estimable)");
        }
        Some(line)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn probe(round: usize, before: f64, after: f64) -> RunProbe {
        RunProbe {
            round,
            lock: LockKind::FairSpin,
            variant: "sched-lock",
            instrumented: false,
            before_ns: Some(before),
            after_ns: Some(after),
        }
    }

    #[test]
    fn a_round_with_probes_in_both_placements_changed_and_one_in_one_is_settled() {
        let tracker = Tracker {
            runs: vec![
                probe(0, 34.0, 36.0),
                probe(0, 35.0, 40.0),
                probe(1, 35.0, 160.0),
                probe(2, 162.0, 165.0),
            ],
            ..Tracker::default()
        };
        assert_eq!(tracker.near_ns(), Some(34.0));
        assert_eq!(tracker.far_ns(), Some(165.0));
        assert_eq!(tracker.round(0), RoundPlacement::Settled(Placement::Near));
        assert_eq!(tracker.round(1), RoundPlacement::Changed);
        assert_eq!(tracker.round(2), RoundPlacement::Settled(Placement::Far));
        assert_eq!(tracker.round(3), RoundPlacement::Unknown);
    }

    #[test]
    fn the_rounds_left_out_at_the_end_are_those_in_the_placement_fewer_rounds_ran_in() {
        let tracker = Tracker {
            runs: vec![
                probe(0, 160.0, 161.0),
                probe(1, 34.0, 35.0),
                probe(2, 36.0, 34.0),
                probe(3, 163.0, 160.0),
                probe(4, 35.0, 33.0),
            ],
            ..Tracker::default()
        };
        assert_eq!(tracker.minority(&[0, 1, 2, 3, 4]), (Some(Placement::Near), vec![0, 3]));
        assert_eq!(tracker.minority(&[0, 3, 4]), (Some(Placement::Far), vec![4]));
        // A tie goes to the near placement (the machine's own, with both CPUs sharing a cache).
        assert_eq!(tracker.minority(&[0, 1]), (Some(Placement::Near), vec![0]));
    }

    #[test]
    fn with_a_baseline_the_rounds_in_its_placement_are_kept_even_when_fewer() {
        let runs = vec![
            probe(0, 160.0, 161.0),
            probe(1, 34.0, 35.0),
            probe(2, 36.0, 34.0),
            probe(3, 163.0, 160.0),
            probe(4, 35.0, 33.0),
        ];
        let kept = [0, 1, 2, 3, 4];
        let far_baseline =
            Tracker { runs: runs.clone(), prefer_ns: Some(150.0), ..Tracker::default() };
        assert_eq!(far_baseline.minority(&kept), (Some(Placement::Far), vec![1, 2, 4]));
        let near_baseline = Tracker { prefer_ns: Some(30.0), ..far_baseline };
        assert_eq!(near_baseline.minority(&kept), (Some(Placement::Near), vec![0, 3]));
        // No kept round in the baseline's placement: the majority, as without one.
        let elsewhere = Tracker { prefer_ns: Some(600.0), ..near_baseline };
        assert_eq!(elsewhere.minority(&kept), (Some(Placement::Near), vec![0, 3]));
        // The transfer the figures ran with: the median probe of the rounds reported.
        let (reported, left_out) = elsewhere.minority(&kept);
        let report = PlacementReport::new(elsewhere, reported, left_out);
        assert_eq!(report.reported_ns, Some(34.5));
        assert_eq!(report.baseline_ns, Some(600.0));
    }

    #[test]
    fn two_transfers_are_one_placement_within_the_far_factor_either_way() {
        assert!(same_placement(33.0, 60.0) && same_placement(160.0, 90.0));
        assert!(!same_placement(33.0, 160.0) && !same_placement(160.0, 33.0));
        assert!(!same_placement(0.0, 0.0), "no transfer measured is no placement");
    }

    #[test]
    fn one_odd_fast_probe_does_not_make_the_others_far() {
        // 2026-12-05: a 15 ns probe among 31–34 ns ones, and a round at 151 ns.
        let mut runs: Vec<RunProbe> = (1..6).map(|r| probe(r, 32.0, 33.0)).collect();
        runs.push(probe(0, 15.0, 32.0));
        let steady = Tracker { runs: runs.clone(), ..Tracker::default() };
        assert_eq!(steady.far_above(), None, "15 and 32 ns are one placement");
        assert!((0..6).all(|r| steady.round(r) == RoundPlacement::Settled(Placement::Near)));
        runs.push(probe(6, 151.0, 149.0));
        let moved = Tracker { runs, ..Tracker::default() };
        let above = moved.far_above().expect("151 ns is another placement");
        assert!(33.0 < above && above < 149.0, "{above}");
        assert!((0..6).all(|r| moved.round(r) == RoundPlacement::Settled(Placement::Near)));
        assert_eq!(moved.round(6), RoundPlacement::Settled(Placement::Far));
        assert_eq!(moved.far_ns(), Some(151.0));
    }

    #[test]
    fn a_steady_machine_leaves_nothing_out_and_says_nothing() {
        let tracker = Tracker {
            runs: (0..5).map(|r| probe(r, 34.0 + r as f64, 50.0)).collect(),
            ..Tracker::default()
        };
        assert!((0..5).all(|r| tracker.round(r) == RoundPlacement::Settled(Placement::Near)));
        assert_eq!(tracker.far_ns(), None);
        let (reported, left_out) = tracker.minority(&[0, 1, 2, 3, 4]);
        assert!(left_out.is_empty());
        assert_eq!(PlacementReport::new(tracker, reported, left_out).note(), None);
    }

    #[test]
    fn a_probe_whose_trials_disagree_is_no_probe() {
        assert_eq!(steady(&[34.0, 36.0, 33.0, 35.0, 38.0]), Some(33.0));
        assert_eq!(steady(&[160.0, 158.0, 166.0, 157.0, 161.0]), Some(157.0));
        // Another process took a CPU during most trials.
        assert_eq!(steady(&[34.0, 900.0, 2400.0, 35.0, 700.0]), None);
        assert_eq!(steady(&[]), None);
    }

    #[test]
    fn without_a_probe_nothing_is_judged() {
        let tracker = Tracker {
            runs: vec![RunProbe { before_ns: None, after_ns: None, ..probe(0, 0.0, 0.0) }],
            ..Tracker::default()
        };
        assert_eq!(tracker.round(0), RoundPlacement::Unknown);
        assert_eq!(tracker.minority(&[0]), (None, Vec::new()));
        let report = PlacementReport::new(tracker, None, Vec::new());
        let why = report.not_measured.expect("why no probe counted");
        if crate::driver::host::allowed_cpus().len() > 1 {
            assert!(why.starts_with("every probe was left out"), "{why}");
        }
    }
}
