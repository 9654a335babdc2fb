//! The parsers the options share: sizes, times, lock kinds, insert paths, variant and number
//! lists, each refusing bad input in one line that names its flag.

use super::context::Context;
use crate::driver::workload::Rw;
use crate::error::ExperimentError;
use schedlab_core::{Inject, InjectSite, InsertPathKind, KernelProfile, LockKind};
use std::time::Duration;

/// The value every option of `T` takes when none is given (clap's defaults: the documented ones).
pub fn defaults<T: clap::Args>() -> T {
    let matches =
        T::augment_args(clap::Command::new("schedlab")).try_get_matches_from(["schedlab"]);
    matches
        .and_then(|m| T::from_arg_matches(&m))
        .unwrap_or_else(|e| unreachable!("the options' defaults parse: {e}"))
}

pub(super) fn bad_input(message: impl Into<String>) -> ExperimentError {
    ExperimentError::bad_input(message)
}

/// A block size: `4096` or `4k`, a multiple of 512 up to 128 KiB; in sectors.
pub fn parse_bs(s: &str) -> Result<u32, ExperimentError> {
    let lower = s.trim().to_ascii_lowercase();
    let (digits, mult) = match lower.strip_suffix('k') {
        Some(d) => (d, 1024u64),
        None => (lower.as_str(), 1),
    };
    let digits = digits.parse::<u64>();
    let bad_size = || bad_input(format!("--bs must be a size like 4096 or 4k, got `{s}`"));
    // Checked: `18446744073709551615k` wrapped (release) or panicked (debug) here.
    let bytes = digits.map_err(|_| bad_size())?.checked_mul(mult).unwrap_or(u64::MAX);
    if bytes == 0 || bytes % 512 != 0 || bytes > 128 * 1024 {
        return Err(bad_input(format!(
            "--bs must be a multiple of 512 bytes up to 128k, got `{s}`"
        )));
    }
    Ok((bytes / 512) as u32)
}

/// `--rw`: the I/O pattern.
pub fn parse_rw(s: &str) -> Result<Rw, ExperimentError> {
    Rw::from_name(s).ok_or_else(|| {
        bad_input(format!("unknown --rw `{s}` (known: randread, randwrite, read, write)"))
    })
}

/// A time option's value (already a finite, non-negative number of seconds: [`units::seconds`]),
/// range-checked: more than zero unless `allow_zero`, at most a day.
pub fn seconds(name: &str, v: f64, allow_zero: bool) -> Result<Duration, ExperimentError> {
    if !v.is_finite() || v < 0.0 {
        return Err(bad_input(format!("--{name} must be a finite time >= 0, got {v}")));
    }
    if !allow_zero && v == 0.0 {
        return Err(bad_input(format!("--{name} must be greater than zero")));
    }
    if v > 24.0 * 3600.0 {
        return Err(bad_input(format!("--{name} {v} s is more than a day")));
    }
    Ok(Duration::from_secs_f64(v))
}

/// `--lock`: one kind.
pub fn parse_lock(s: &str) -> Result<LockKind, ExperimentError> {
    LockKind::from_name(s).ok_or_else(|| {
        bad_input(format!("unknown lock kind `{s}` (known: fair-spin, parking-lot)"))
    })
}

/// `--lock`: one kind or `both`.
pub fn parse_locks(s: &str) -> Result<Vec<LockKind>, ExperimentError> {
    if s == "both" {
        return Ok(LockKind::ALL.to_vec());
    }
    LockKind::from_name(s).map(|k| vec![k]).ok_or_else(|| {
        bad_input(format!("unknown lock kind `{s}` (known: fair-spin, parking-lot, both)"))
    })
}

/// `--insert`: one path, or with `both_allowed` also `both` (every path).
pub fn parse_inserts(s: &str, both_allowed: bool) -> Result<Vec<InsertPathKind>, ExperimentError> {
    if both_allowed && s == "both" {
        return Ok(InsertPathKind::ALL.to_vec());
    }
    Ok(vec![parse_insert(s)?])
}

/// `--variants` (comma-separated; none: every safe variant), adding `unlocked` if asked.
pub fn parse_variants(
    list: Option<&str>,
    include_unlocked: bool,
) -> Result<Vec<&'static str>, ExperimentError> {
    let mut names: Vec<&'static str> = match list {
        None => schedlab_variants::safe().map(|v| v.name).collect(),
        Some(list) => list
            .split(',')
            .map(|n| {
                let n = n.trim();
                schedlab_variants::info(n).map(|v| v.name).ok_or_else(|| {
                    let known: Vec<_> = schedlab_variants::ALL.iter().map(|v| v.name).collect();
                    bad_input(format!("unknown variant `{n}` (known: {})", known.join(", ")))
                })
            })
            .collect::<Result<_, _>>()?,
    };
    if include_unlocked && !names.contains(&"unlocked") {
        names.push("unlocked");
    }
    let mut seen = Vec::new();
    names.retain(|n| {
        let fresh = !seen.contains(n);
        seen.push(*n);
        fresh
    });
    Ok(names)
}

/// The most values a list option may expand to: a range such as `0-1000000000` is refused before
/// it is expanded, not allocated (issue 43, item 3's class: every list the tool expands is bounded).
pub const MAX_LIST_VALUES: u64 = 4096;

/// "1,2,4", "1-4", or a mix, each `0..=max`, without repeats (thread counts, slot counts, ns), at
/// most [`MAX_LIST_VALUES`] values.
pub fn parse_list(name: &str, s: &str, max: u64) -> Result<Vec<u64>, ExperimentError> {
    let bad = || {
        bad_input(format!("--{name} must be a list like 1,2,4 or 1-4 (each 0..={max}), got `{s}`"))
    };
    let mut out = Vec::new();
    for part in s.split(',').map(str::trim).filter(|p| !p.is_empty()) {
        let (lo, hi) = match part.split_once('-') {
            Some((a, b)) => (
                a.trim().parse::<u64>().map_err(|_| bad())?,
                b.trim().parse::<u64>().map_err(|_| bad())?,
            ),
            None => {
                let v = part.parse::<u64>().map_err(|_| bad())?;
                (v, v)
            }
        };
        if lo > hi || hi > max {
            return Err(bad());
        }
        if (out.len() as u64).saturating_add(hi - lo + 1) > MAX_LIST_VALUES {
            return Err(bad_input(format!(
                "--{name} expands to more than {MAX_LIST_VALUES} values, got `{s}`"
            )));
        }
        for v in lo..=hi {
            if !out.contains(&v) {
                out.push(v);
            }
        }
    }
    if out.is_empty() {
        return Err(bad());
    }
    Ok(out)
}

/// A thread-count list as `usize`s.
pub fn parse_threads(name: &str, s: &str, max: u64) -> Result<Vec<usize>, ExperimentError> {
    Ok(parse_list(name, s, max)?.into_iter().map(|t| t as usize).collect())
}

/// Parses a `--kernel` value.
pub fn parse_kernel(s: &str) -> Result<KernelProfile, ExperimentError> {
    KernelProfile::from_name(s).ok_or_else(|| {
        let known: Vec<_> = KernelProfile::ALL.iter().map(|k| k.name()).collect();
        bad_input(format!("unknown --kernel `{s}` (known: {})", known.join(", ")))
    })
}

/// Parses `--inject-ns` and `--at`.
pub fn parse_inject(ns: u64, at: &str, cx: &mut Context) -> Result<Inject, ExperimentError> {
    let at = InjectSite::from_name(at)
        .ok_or_else(|| bad_input(format!("unknown --at `{at}` (known: inside, outside)")))?;
    if ns == 0 && at == InjectSite::Outside {
        cx.no_effect("--at", " with --inject-ns 0: nothing is injected");
    }
    Ok(Inject { ns, at })
}

/// Parses an `--insert` value that names one path.
pub fn parse_insert(s: &str) -> Result<InsertPathKind, ExperimentError> {
    InsertPathKind::from_name(s).ok_or_else(|| {
        let known: Vec<_> = InsertPathKind::ALL.iter().map(|k| k.name()).collect();
        bad_input(format!("unknown --insert `{s}` (known: {})", known.join(", ")))
    })
}

/// Parses `--lockstat[=sampled|exact]` (given without a value: sampled).
pub fn lockstat_mode(value: &str) -> Result<schedlab_core::lockstat::Mode, ExperimentError> {
    schedlab_core::lockstat::Mode::from_name(value).ok_or_else(|| {
        bad_input(format!("unknown lock statistics mode `{value}` (known: sampled, exact)"))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lists_parse() {
        assert_eq!(parse_list("threads", "1,2,4", 8).ok().unwrap(), vec![1, 2, 4]);
        assert_eq!(parse_list("threads", "1-3,8", 8).ok().unwrap(), vec![1, 2, 3, 8]);
        assert!(parse_list("threads", "3-1", 8).is_err());
        assert!(parse_list("threads", "x", 8).is_err());
        assert!(parse_list("threads", "9", 8).is_err());
        // A range is bounded before it is expanded, and so are many of them.
        let e =
            parse_list("sweep-outside-ns", "0-1000000000", 1_000_000_000).unwrap_err().to_string();
        assert!(e.contains("more than 4096 values") && !e.contains('\n'), "{e}");
        assert!(parse_list("outside-list", "0-4095", 1_000_000_000).is_ok());
        assert!(parse_list("outside-list", "0-4095,5000", 1_000_000_000).is_err());
    }

    #[test]
    fn block_sizes_are_whole_sectors_up_to_128k() {
        assert_eq!(parse_bs("4k").ok(), Some(8));
        assert_eq!(parse_bs("512").ok(), Some(1));
        for bad in ["0", "513", "129k", "x", "-4k"] {
            assert!(parse_bs(bad).is_err(), "{bad}");
        }
    }
}
