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
        self.stacks
            .iter()
            .filter(|(s, _)| s.split(';').any(|f| f.contains(pattern)))
            .map(|(_, n)| n)
            .sum()
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

    /// Reads folded text ("stack count" lines; blank lines skipped). The counts must add up to
    /// at most `u64::MAX` (issue 43: a sum past it wrapped in release builds, "all (3 samples)"):
    /// every sum of a subset ([`Folded::samples`], [`Folded::samples_with`], a category's, a
    /// merged stack's) is then within it too; more is one line of bad input.
    pub fn from_text(text: &str) -> Result<Folded, ExperimentError> {
        let mut stacks = BTreeMap::new();
        let mut total: u64 = 0;
        for (i, line) in text.lines().enumerate() {
            let line = line.trim();
            if line.is_empty() {
                continue;
            }
            let (stack, n) = line.rsplit_once(' ').ok_or_else(|| {
                ExperimentError::bad_input(format!("line {}: no sample count", i + 1))
            })?;
            let n: u64 = n.parse().map_err(|_| {
                ExperimentError::bad_input(format!("line {}: bad sample count `{n}`", i + 1))
            })?;
            total = total.checked_add(n).ok_or_else(|| {
                ExperimentError::bad_input(format!(
                    "line {}: the sample counts add up past {} (the largest count there is)",
                    i + 1,
                    u64::MAX
                ))
            })?;
            *stacks.entry(stack.to_string()).or_insert(0) += n;
        }
        Ok(Folded { stacks, ..Folded::default() })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Issue 43: counts that add up past `u64::MAX` wrapped in release builds ("all (3
    /// samples)"); they are refused, one line naming the line, and the largest sum is taken.
    #[test]
    fn counts_that_add_up_past_the_largest_are_refused() {
        let e = Folded::from_text("a;b 18446744073709551615\na;c 4\n").unwrap_err();
        let said = e.message.contains("line 2") && e.message.contains("add up past");
        assert!(said, "{}", e.message);
        assert!(!e.message.contains('\n'));
        let e = Folded::from_text("a 18446744073709551615\na 1\n").unwrap_err();
        assert!(e.message.contains("line 2"), "the same stack twice: {}", e.message);
        let at_most = Folded::from_text("a;b 18446744073709551614\na;c 1\n").unwrap();
        assert_eq!(at_most.samples(), u64::MAX);
        assert_eq!(at_most.samples_with("a"), u64::MAX);
    }
}
