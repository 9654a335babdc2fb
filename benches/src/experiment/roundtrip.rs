//! `schedlab roundtrip` as an experiment in the house shape (`crate::experiment`): the
//! single-threaded cost of one request round trip (insert, dispatch, completion) per variant,
//! measured by [`crate::driver::roundtrip`] in rounds that interleave the variants, reported as
//! median and spread over rounds; optionally what the lock statistics cost inside each
//! measurement (alternating windows on one scheduler).
//!
//! A round counts only when every variant was measured in it (a stop drops the round in
//! progress), so that every variant's figures cover the same rounds; the report says how many
//! finished.

use super::observer::{Event, Observer};
use crate::driver::roundtrip::{lockstat_windows_named_until, measure_named_until, window_ratios};
use crate::error::ExperimentError;
use crate::files::provenance::Provenance;
use crate::stats::{median, Spread};
use schedlab_core::{lockstat, LockKind};
use schedlab_core::sync::AtomicBool;
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
            return Err(ExperimentError::bad_input(format!("--rounds must be 1..=1000, got {}", self.rounds)));
        }
        if !(1..=100_000_000).contains(&self.iterations) {
            return Err(ExperimentError::bad_input(format!("--iterations must be 1..=100000000, got {}", self.iterations)));
        }
        match &self.variant {
            Some(v) => Ok(vec![schedlab_variants::info(v).ok_or_else(|| ExperimentError::bad_input(format!("unknown variant `{v}`")))?.name]),
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
    /// A variant's median ns ÷ `no-stats`'s, when `no-stats` was measured.
    pub fn against_no_stats(&self, v: &VariantRoundtrip) -> Option<f64> {
        self.variants.iter().find(|b| b.variant == "no-stats").map(|b| v.ns.median / b.ns.median)
    }
}

/// One measurement: plain ns, and with the lock statistics the on windows' ns and the cost ratio
/// (`None`: stopped).
fn measure(name: &str, cfg: &RoundtripConfig, stop: &AtomicBool) -> Option<(f64, Option<(f64, f64)>)> {
    match cfg.lockstat {
        None => measure_named_until(name, cfg.iterations, cfg.lock, stop).map(|plain| (plain, None)),
        Some(mode) => lockstat_windows_named_until(name, cfg.window(), WINDOW_PAIRS, cfg.lock, mode, stop)
            .map(|(off, on)| (median(&off), Some((median(&on), median(&window_ratios(&off, &on)))))),
    }
}

/// Runs the experiment (see the module documentation).
pub fn run(cfg: &RoundtripConfig, stop: &AtomicBool, observer: &mut dyn Observer) -> Result<RoundtripReport, ExperimentError> {
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
    let spread = |v: &Vec<f64>| (!v.is_empty()).then(|| Spread::of(v.clone()));
    let variants = names
        .iter()
        .enumerate()
        .map(|(i, &variant)| VariantRoundtrip { variant, ns: Spread::of(plain[i].clone()), lockstat_ns: spread(&on[i]), lockstat_cost_pct: spread(&cost_pct[i]) })
        .collect();
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::experiment::testing::assert_refused;
    use crate::experiment::observer::Recorder;

    fn one() -> RoundtripConfig {
        RoundtripConfig { variant: Some("no-stats".into()), rounds: 2, iterations: 1000, lock: LockKind::FairSpin, lockstat: None }
    }

    #[test]
    fn a_bad_configuration_is_refused_before_any_work() {
        let cases = [
            (RoundtripConfig { variant: Some("nonsense".into()), ..one() }, "unknown variant `nonsense`"),
            (RoundtripConfig { rounds: 0, ..one() }, "--rounds"),
            (RoundtripConfig { iterations: 0, ..one() }, "--iterations"),
        ];
        for (cfg, says) in cases {
            assert_refused(|stop, observer| run(&cfg, stop, observer), says);
        }
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
        let stopped = run(&one(), &AtomicBool::new(true), &mut Recorder::default()).expect("a stop is not an error");
        assert!(stopped.interrupted && stopped.rounds_done == 0);
    }
}
