//! What every part of a comparison shares: which runs it makes ([`Measure`]), one variant's
//! runs under one lock kind ([`Cell`]), the reference of its ratios and its A/A copy, and the
//! JSON schema's version. A leaf of `experiment::compare`: its parts (`baseline`, `cost`,
//! `precision`) and the comparison itself import from here, and nothing here imports them, so
//! that the folder forms no import circle (benches/tests/layering.rs).

use crate::driver::noise::NoiseCount;
use crate::driver::workload::RunResult;
use crate::stats::Spread;
use serde::Serialize;

/// The version of compare's JSON schema (`notes/compare-schema.md`), also what a `--baseline`
/// file must carry.
pub const SCHEMA_VERSION: u32 = 4;

/// Which runs a comparison makes for each variant in each round.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Measure {
    /// Plain runs only: KIOPS, no lock counters.
    Plain,
    /// One run per variant and round: KIOPS and lock counters from the same run, the statistics
    /// switched on and off in alternating windows, whose pairs give the cost.
    Lockstat,
    /// Two runs: a plain run for the KIOPS and an instrumented one for the counters.
    Both,
}

impl Measure {
    pub fn from_name(name: &str) -> Option<Measure> {
        match name {
            "plain" => Some(Measure::Plain),
            "lockstat" => Some(Measure::Lockstat),
            "both" => Some(Measure::Both),
            _ => None,
        }
    }

    pub(super) fn plain(self) -> bool {
        self != Measure::Lockstat
    }

    pub(super) fn lockstat(self) -> bool {
        self != Measure::Plain
    }
}

/// The reference variant: the denominator of the seeds' ratios, and the one run twice in each
/// round for the A/A pair.
pub const AA_REFERENCE: &str = "sched-lock";
/// The label of the reference's second copy in each round.
pub const AA_LABEL: &str = "sched-lock (A/A)";

#[derive(Default)]
pub(super) struct Cell {
    /// (round, result) of the plain and of the instrumented runs.
    pub(super) plain: Vec<(usize, RunResult)>,
    pub(super) lockstat: Vec<(usize, RunResult)>,
    pub(super) noise: NoiseCount,
    pub(super) failed: usize,
    /// Finished runs left out of every figure for where the machine put the CPUs (`placement`).
    pub(super) left_out: usize,
}

impl Cell {
    /// The runs behind the KIOPS: the plain ones, or the instrumented ones when only those ran.
    pub(super) fn main_runs(&self) -> &[(usize, RunResult)] {
        if self.plain.is_empty() {
            &self.lockstat
        } else {
            &self.plain
        }
    }
}

/// Where the entry labelled `label` is (its cells' index).
pub(super) fn entry_index(entries: &[(&'static str, &'static str)], label: &str) -> Option<usize> {
    entries.iter().position(|(l, _)| *l == label)
}

/// Per-round ratio of two entries' main-run KIOPS under one lock kind.
pub(super) fn paired(
    cells: &[Cell],
    entries: &[(&'static str, &'static str)],
    num: &str,
    den: &str,
) -> Option<Spread> {
    paired_except(cells, entries, num, den, &[])
}

/// [`paired`], leaving out the rounds in `except`.
pub(super) fn paired_except(
    cells: &[Cell],
    entries: &[(&'static str, &'static str)],
    num: &str,
    den: &str,
    except: &[usize],
) -> Option<Spread> {
    let ratios: Vec<f64> = paired_rounds(cells, entries, num, den)?
        .into_iter()
        .filter(|(round, _)| !except.contains(round))
        .map(|(_, ratio)| ratio)
        .collect();
    (!ratios.is_empty()).then(|| Spread::of(ratios))
}

/// The per-round ratio of two entries' main-run KIOPS, each with its round (finite ones only,
/// in the order the numerator's runs finished); `None` when either entry is not compared.
pub(super) fn paired_rounds(
    cells: &[Cell],
    entries: &[(&'static str, &'static str)],
    num: &str,
    den: &str,
) -> Option<Vec<(usize, f64)>> {
    let ni = entry_index(entries, num)?;
    let di = entry_index(entries, den)?;
    let (n, d) = (cells[ni].main_runs(), cells[di].main_runs());
    let ratios = n
        .iter()
        .filter_map(|(round, rn)| {
            d.iter().find(|(r2, _)| r2 == round).map(|(_, rd)| (*round, rn.kiops / rd.kiops))
        })
        .filter(|(_, x)| x.is_finite())
        .collect();
    Some(ratios)
}
