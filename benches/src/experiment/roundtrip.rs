//! `schedlab roundtrip` as an experiment in the house shape (`crate::experiment`): the
//! single-threaded cost of one request round trip (insert, dispatch, completion) per variant,
//! measured by [`crate::driver::roundtrip`] in rounds that interleave the variants, reported as
//! median and spread over rounds; optionally what the lock statistics cost inside each
//! measurement (alternating windows on one scheduler).
//!
//! A round counts only when every variant was measured in it (a stop drops the round in
//! progress), so that every variant's figures cover the same rounds; the report says how many
//! finished.
//!
//! A variant's ratio to `no-stats` is taken within each round (the two measurements shared the
//! machine's state) and carries the 95 % bootstrap interval over rounds of its median
//! ([`crate::stats::ratio_interval`]); so does the cost of the lock statistics, a ratio within
//! each measurement. Fewer than 6 rounds: no interval, and the reason.

use super::observer::{Event, Observer};
use crate::driver::roundtrip::{lockstat_windows_named_until, measure_named_until, window_ratios};
use crate::error::ExperimentError;
use crate::files::provenance::Provenance;
use crate::stats::{median, no_interval_reason, ratio_interval, Interval, Spread};
use schedlab_core::sync::AtomicBool;
use schedlab_core::{lockstat, LockKind};
use serde::Serialize;

/// On windows per measurement with the lock statistics (each between two off windows).
pub const WINDOW_PAIRS: u64 = 20;

/// The experiment's configuration.
#[derive(Clone, Debug)]
pub struct RoundtripConfig {
    /// Only this variant; `None`: every registered one.
    pub variant: Option<String>,
    /// Rounds, 1..=1000; each measures every variant once, in turn.
    pub rounds: usize,
    /// Round trips per measurement, 1..=100000000.
    pub iterations: u64,
    pub lock: LockKind,
    /// Also measure what the lock statistics cost, in this mode.
    pub lockstat: Option<lockstat::Mode>,
}

impl RoundtripConfig {
    /// Checks the configuration (before any work); returns the variants to measure.
    pub fn checked_variants(&self) -> Result<Vec<&'static str>, ExperimentError> {
        if !(1..=1000).contains(&self.rounds) {
            return Err(ExperimentError::bad_input(format!(
                "--rounds must be 1..=1000, got {}",
                self.rounds
            )));
        }
        if !(1..=100_000_000).contains(&self.iterations) {
            return Err(ExperimentError::bad_input(format!(
                "--iterations must be 1..=100000000, got {}",
                self.iterations
            )));
        }
        match &self.variant {
            Some(v) => Ok(vec![
                schedlab_variants::info(v)
                    .ok_or_else(|| ExperimentError::bad_input(format!("unknown variant `{v}`")))?
                    .name,
            ]),
            None => Ok(schedlab_variants::ALL.iter().map(|v| v.name).collect()),
        }
    }

    /// Round trips per window with the lock statistics.
    pub fn window(&self) -> u64 {
        (self.iterations / WINDOW_PAIRS).max(1)
    }
}

/// One variant's figures over the rounds that finished.
#[derive(Clone, Debug, Serialize)]
pub struct VariantRoundtrip {
    pub variant: &'static str,
    /// ns per round trip (with the lock statistics: of the off windows).
    pub ns: Spread,
    /// ns per round trip of the on windows.
    pub lockstat_ns: Option<Spread>,
    /// What the lock statistics cost, % (per round: the median over its on windows of on ÷ the
    /// mean of the two off neighbours).
    pub lockstat_cost_pct: Option<Spread>,
    /// The 95 % bootstrap interval of `lockstat_cost_pct`'s median over rounds.
    pub lockstat_cost_interval_pct: Option<Interval>,
    /// Per round, this variant's ns ÷ `no-stats`'s ns in the same round (median, min, max over
    /// rounds); `None` when `no-stats` was not measured.
    pub vs_no_stats: Option<Spread>,
    /// The 95 % bootstrap interval of `vs_no_stats`'s median over rounds.
    pub vs_no_stats_interval: Option<Interval>,
    /// Why the intervals are null ("no interval: fewer than 6 rounds").
    pub no_interval: Option<String>,
}

/// What `schedlab roundtrip` found.
#[derive(Clone, Debug, Serialize)]
pub struct RoundtripReport {
    pub provenance: Provenance,
    pub lock: LockKind,
    pub iterations: u64,
    pub rounds: usize,
    pub rounds_done: usize,
    pub lockstat: Option<&'static str>,
    /// Round trips per window with the lock statistics.
    pub window: u64,
    pub variants: Vec<VariantRoundtrip>,
    /// A stop came before every round finished.
    pub interrupted: bool,
}

impl RoundtripReport {
    /// A variant's ns ÷ `no-stats`'s, the median of the within-round ratios, when `no-stats` was
    /// measured.
    pub fn against_no_stats(&self, v: &VariantRoundtrip) -> Option<f64> {
        v.vs_no_stats.as_ref().map(|r| r.median)
    }
}

/// One measurement: plain ns, and with the lock statistics the on windows' ns and the cost ratio
/// (`None`: stopped).
fn measure(
    name: &str,
    cfg: &RoundtripConfig,
    stop: &AtomicBool,
) -> Option<(f64, Option<(f64, f64)>)> {
    match cfg.lockstat {
        None => {
            measure_named_until(name, cfg.iterations, cfg.lock, stop).map(|plain| (plain, None))
        }
        Some(mode) => {
            lockstat_windows_named_until(name, cfg.window(), WINDOW_PAIRS, cfg.lock, mode, stop)
                .map(|(off, on)| {
                    (median(&off), Some((median(&on), median(&window_ratios(&off, &on)))))
                })
        }
    }
}

/// Runs the experiment (see the module documentation).
pub fn run(
    cfg: &RoundtripConfig,
    stop: &AtomicBool,
    observer: &mut dyn Observer,
) -> Result<RoundtripReport, ExperimentError> {
    let names = cfg.checked_variants()?;
    let mut plain: Vec<Vec<f64>> = vec![Vec::new(); names.len()];
    let mut on: Vec<Vec<f64>> = vec![Vec::new(); names.len()];
    let mut cost_pct: Vec<Vec<f64>> = vec![Vec::new(); names.len()];
    let mut rounds_done = 0;
    let mut done = 0;
    'rounds: for round in 0..cfg.rounds {
        let mut measured = Vec::with_capacity(names.len());
        for name in &names {
            let label = format!("round {} {name}", round + 1);
            observer.event(Event::Step { done, label: &label });
            let Some(m) = measure(name, cfg, stop) else { break 'rounds };
            done += 1;
            observer.event(Event::StepDone { done, summary: &format!("{label}: {:.0} ns", m.0) });
            measured.push(m);
        }
        for (i, (ns, with_lockstat)) in measured.into_iter().enumerate() {
            plain[i].push(ns);
            if let Some((on_ns, ratio)) = with_lockstat {
                on[i].push(on_ns);
                cost_pct[i].push(100.0 * (ratio - 1.0));
            }
        }
        rounds_done += 1;
    }
    observer.event(Event::Finished);
    let variants = summarise(&names, &plain, &on, &cost_pct);
    Ok(RoundtripReport {
        provenance: Provenance::collect(),
        lock: cfg.lock,
        iterations: cfg.iterations,
        rounds: cfg.rounds,
        rounds_done,
        lockstat: cfg.lockstat.map(|m| m.name()),
        window: cfg.window(),
        variants,
        interrupted: rounds_done < cfg.rounds,
    })
}

/// Each variant's figures over the rounds that finished: `plain[i][round]` ns (and with the lock
/// statistics `on` ns and `cost_pct`) of `names[i]`, every variant measured in every round.
fn summarise(
    names: &[&'static str],
    plain: &[Vec<f64>],
    on: &[Vec<f64>],
    cost_pct: &[Vec<f64>],
) -> Vec<VariantRoundtrip> {
    let spread = |v: &Vec<f64>| (!v.is_empty()).then(|| Spread::of(v.clone()));
    let no_stats = names.iter().position(|n| *n == "no-stats").map(|i| &plain[i]);
    names
        .iter()
        .enumerate()
        .map(|(i, &variant)| {
            let within_rounds = |b: &Vec<f64>| plain[i].iter().zip(b).map(|(a, b)| a / b).collect();
            let vs_no_stats = no_stats.map(|b| Spread::of(within_rounds(b)));
            let cost = spread(&cost_pct[i]);
            let vs_no_stats_interval = vs_no_stats.as_ref().and_then(|r| ratio_interval(r).ok());
            let lockstat_cost_interval_pct = cost.as_ref().and_then(|c| ratio_interval(c).ok());
            let few = plain[i].len() < crate::stats::BOOTSTRAP_MIN_VALUES;
            let no_interval = few.then(|| no_interval_reason("rounds"));
            VariantRoundtrip {
                variant,
                ns: Spread::of(plain[i].clone()),
                lockstat_ns: spread(&on[i]),
                lockstat_cost_pct: cost,
                lockstat_cost_interval_pct,
                vs_no_stats,
                vs_no_stats_interval,
                no_interval,
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::experiment::observer::Recorder;
    use crate::experiment::testing::assert_each_refused;

    fn one() -> RoundtripConfig {
        RoundtripConfig {
            variant: Some("no-stats".into()),
            rounds: 2,
            iterations: 1000,
            lock: LockKind::FairSpin,
            lockstat: None,
        }
    }

    #[test]
    fn a_bad_configuration_is_refused_before_any_work() {
        let cases = [
            (
                RoundtripConfig { variant: Some("nonsense".into()), ..one() },
                "unknown variant `nonsense`",
            ),
            (RoundtripConfig { rounds: 0, ..one() }, "--rounds"),
            (RoundtripConfig { iterations: 0, ..one() }, "--iterations"),
        ];
        assert_each_refused(cases, run);
    }

    #[test]
    fn every_round_measures_every_variant_and_a_stop_keeps_whole_rounds() {
        let mut recorder = Recorder::default();
        // (Without the lock statistics: switching them is global, and other tests run beside.)
        let report = run(&one(), &AtomicBool::new(false), &mut recorder).expect("measured");
        assert_eq!((report.rounds_done, recorder.steps_done), (2, 2));
        let v = &report.variants[0];
        assert_eq!(v.ns.runs.len(), 2);
        assert!(v.lockstat_cost_pct.is_none());
        assert_eq!(report.against_no_stats(v), Some(1.0));
        let stopped = run(&one(), &AtomicBool::new(true), &mut Recorder::default())
            .expect("a stop is not an error");
        assert!(stopped.interrupted && stopped.rounds_done == 0);
    }

    #[test]
    fn the_ratio_to_no_stats_is_paired_within_rounds_with_an_interval_over_them() {
        // The machine's speed drifts 3x over the rounds; sched-lock costs 1.5x no-stats in every
        // round. Paired within rounds the ratio is 1.5 exactly, an interval of one point.
        let names = ["sched-lock", "no-stats"];
        let no_stats = vec![100.0, 200.0, 300.0, 150.0, 250.0, 120.0];
        let sched: Vec<f64> = no_stats.iter().map(|x| 1.5 * x).collect();
        let costs = vec![vec![4.0, 6.0, 5.0, 5.5, 4.5, 5.2], vec![1.0; 6]];
        let v = summarise(&names, &[sched, no_stats], &[Vec::new(), Vec::new()], &costs);
        let sched = &v[0];
        assert_eq!(sched.vs_no_stats.as_ref().map(|r| r.median), Some(1.5));
        assert_eq!(sched.vs_no_stats_interval, Some(Interval { lo: 1.5, hi: 1.5 }));
        let cost = sched.lockstat_cost_interval_pct.expect("six rounds");
        assert!(cost.lo >= 4.0 && cost.hi <= 6.0 && cost.lo < 5.0 && cost.hi > 5.0, "{cost:?}");
        assert_eq!(sched.no_interval, None);
        // Five rounds: the figures, and no interval with its reason.
        let none = [Vec::new(), Vec::new()];
        let (plain, sched_five) = (vec![100.0, 200.0, 300.0, 150.0, 250.0], vec![150.0; 5]);
        let v = summarise(&names, &[sched_five, plain], &none, &none);
        assert_eq!((v[0].vs_no_stats_interval, v[0].lockstat_cost_interval_pct), (None, None));
        assert_eq!(v[0].no_interval.as_deref(), Some("no interval: fewer than 6 rounds"));
        let json = serde_json::to_value(&v[0]).unwrap();
        assert!(json["vs_no_stats_interval"].is_null(), "{json}");
        assert!(json["no_interval"].is_string(), "{json}");
    }
}
