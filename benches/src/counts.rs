//! Sums of counts that cannot wrap (issue 43, item 6).
//!
//! A count read from input or measured (a tool's output parsed: fio's I/Os, bpftrace's
//! contentions and waits, perf's samples, `/proc`'s CPU times; a file's sample counts) is a
//! `u64`, and a sum of such counts could pass `u64::MAX`: in a release build plain `+` and
//! `sum::<u64>()` wrap silently (a flamegraph once said "all (3 samples)"), in a debug build they
//! panic. Every such sum goes through [`add`], [`add_to`] or [`sum`], which refuse it with one
//! line naming what was summed. Where a sum only feeds a ratio, a wider type (`u128`) is as good
//! and needs no error.
//!
//! The caller decides what the refusal is: bad input (exit 2) for a file the user gave, a failed
//! run (exit 4) for a tool's output read after the work began (the exit-code contract: never 2
//! after the work).

/// A sum of counts past `u64::MAX`: `what` names the counts. Its one line says so; the caller
/// decides its kind (see the module documentation).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CountOverflow {
    pub what: String,
}

impl std::fmt::Display for CountOverflow {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let what = &self.what;
        write!(f, "{what}: the counts add up past {} (the largest count there is)", u64::MAX)
    }
}

impl std::error::Error for CountOverflow {}

/// The one line, for a caller that keeps messages (`ExperimentError::run_failed` takes it).
impl From<CountOverflow> for String {
    fn from(e: CountOverflow) -> String {
        e.to_string()
    }
}

/// `total + n`, refused past `u64::MAX`.
pub fn add(total: u64, n: u64, what: &str) -> Result<u64, CountOverflow> {
    total.checked_add(n).ok_or_else(|| CountOverflow { what: what.to_string() })
}

/// Adds `n` to `*slot`, refused past `u64::MAX` (`*slot` is then unchanged).
pub fn add_to(slot: &mut u64, n: u64, what: &str) -> Result<(), CountOverflow> {
    *slot = add(*slot, n, what)?;
    Ok(())
}

/// The sum of `counts`, refused past `u64::MAX`.
pub fn sum(counts: impl IntoIterator<Item = u64>, what: &str) -> Result<u64, CountOverflow> {
    counts.into_iter().try_fold(0u64, |total, n| add(total, n, what))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sums_up_to_the_largest_count_and_refuses_past_it_in_one_line() {
        assert_eq!(sum([1, 2, 3], "x"), Ok(6));
        assert_eq!(sum([], "x"), Ok(0));
        assert_eq!(sum([u64::MAX - 1, 1], "x"), Ok(u64::MAX));
        let e = sum([u64::MAX, 1], "fio's I/Os").unwrap_err().to_string();
        let one_line = !e.contains('\n');
        let says_max = e.contains("18446744073709551615");
        assert!(e.starts_with("fio's I/Os: ") && says_max && one_line, "{e}");
        assert_eq!(add(u64::MAX, 0, "x"), Ok(u64::MAX));
        assert!(add(u64::MAX, 1, "x").is_err());
        let mut slot = u64::MAX - 3;
        assert_eq!(add_to(&mut slot, 3, "x"), Ok(()));
        assert_eq!(slot, u64::MAX);
        assert!(add_to(&mut slot, 1, "x").is_err());
        assert_eq!(slot, u64::MAX, "a refused addition leaves the total as it was");
    }
}
