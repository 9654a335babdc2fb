//! Folded stacks: what a profile is once sampled, as flamegraph tools read it.

use crate::error::ExperimentError;
use serde::Serialize;
use std::collections::BTreeMap;

/// Folded stacks: "root;...;leaf" → samples, as flamegraph tools read them.
#[derive(Clone, Debug, Default, Serialize)]
pub struct Folded {
    pub stacks: BTreeMap<String, u64>,
    /// Sampling frequency, Hz.
    pub frequency: i32,
    /// Seconds sampled.
    pub wall_s: f64,
    /// Process CPU seconds used while sampling, if /proc told.
    pub cpu_s: Option<f64>,
    /// `SIGPROF`s the per-thread timers delivered (each may stand for several expiries).
    pub signals: Option<u64>,
}

impl Folded {
    pub fn samples(&self) -> u64 {
        self.stacks.values().sum()
    }

    /// Share of the process's CPU time (0..1) that left no sample: dropped in blocklisted code,
    /// or lost when timer expiries coalesced. `None` without a CPU-time reading.
    pub fn unsampled_share(&self) -> Option<f64> {
        let expected = self.cpu_s? * self.frequency as f64;
        (expected >= 1.0).then(|| (1.0 - self.samples() as f64 / expected).max(0.0))
    }

    /// Samples whose stack holds a frame whose name contains `pattern`.
    pub fn samples_with(&self, pattern: &str) -> u64 {
        self.stacks.iter().filter(|(s, _)| s.split(';').any(|f| f.contains(pattern))).map(|(_, n)| n).sum()
    }

    /// The folded text: one "stack count" line per stack, sorted.
    pub fn to_text(&self) -> String {
        let mut out = String::new();
        for (stack, n) in &self.stacks {
            out.push_str(stack);
            out.push(' ');
            out.push_str(&n.to_string());
            out.push('\n');
        }
        out
    }

    /// Reads folded text ("stack count" lines; blank lines skipped).
    pub fn from_text(text: &str) -> Result<Folded, ExperimentError> {
        let mut stacks = BTreeMap::new();
        for (i, line) in text.lines().enumerate() {
            let line = line.trim();
            if line.is_empty() {
                continue;
            }
            let (stack, n) = line.rsplit_once(' ').ok_or_else(|| ExperimentError::bad_input(format!("line {}: no sample count", i + 1)))?;
            let n: u64 = n.parse().map_err(|_| ExperimentError::bad_input(format!("line {}: bad sample count `{n}`", i + 1)))?;
            *stacks.entry(stack.to_string()).or_insert(0) += n;
        }
        Ok(Folded { stacks, ..Folded::default() })
    }
}
