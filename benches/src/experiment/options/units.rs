//! Numbers on the command line: every numeric option goes through one of these parsers, so that
//! `inf`, `nan`, negative numbers, fractions where a count is meant and durations with units get
//! a clear one-line message (clap adds the flag's name), and every range is enforced where it is
//! documented: in the option's `--help`. A refusal is a [`NumberError`]: what was wrong, as
//! one line (clap puts the flag and the value before it).

use std::fmt;

/// Why a number on the command line was refused.
#[derive(Clone, Debug, PartialEq)]
pub enum NumberError {
    /// `inf` or `nan` where seconds are meant.
    SecondsNotFinite,
    /// A duration too large for a number of seconds (`1e400`).
    SecondsOverflow,
    /// A minus sign where seconds are meant.
    NegativeSeconds,
    /// Not a number of seconds nor a duration.
    NotSeconds,
    /// A duration's unit that is none of ns, us, ms, s, m, h.
    UnknownUnit(String),
    /// A minus sign where a count in `lo..=hi` is meant.
    NegativeCount { lo: u64, hi: u64, got: String },
    /// Not a whole number in `lo..=hi`.
    CountOutOfRange { lo: u64, hi: u64, got: String },
    /// Not a number where one in `lo..=hi` is meant.
    NotANumber { lo: f64, hi: f64, got: String },
    /// A number outside `lo..=hi`, or not finite.
    OutOfRange { lo: f64, hi: f64, got: String },
    /// Zero where more than 0 is meant.
    Zero,
    /// Neither a fraction (`0.03`) nor a percent (`3%`).
    NotAFraction(String),
    /// A fraction at or below 0, or at or above 1 (100 %).
    FractionOutOfRange(String),
}

impl fmt::Display for NumberError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        use NumberError::*;
        match self {
            SecondsNotFinite => {
                f.write_str("must be a finite number of seconds, like 2, 0.5 or 500ms")
            }
            SecondsOverflow => f.write_str("must be a finite number of seconds"),
            NegativeSeconds => f.write_str("must not be negative"),
            NotSeconds => f.write_str(concat!(
                "must be seconds like 2 or 0.5, ",
                "or a duration like 500ms, 2s, 1m (units ns, us, ms, s, m, h)"
            )),
            UnknownUnit(unit) => write!(
                f,
                "unknown unit `{unit}` (use ns, us, ms, s, m or h, or a plain number of seconds)"
            ),
            NegativeCount { lo, hi, got } => {
                write!(f, "must not be negative (range {lo}..={hi}), got `{got}`")
            }
            CountOutOfRange { lo, hi, got } => {
                write!(f, "must be a whole number in {lo}..={hi}, got `{got}`")
            }
            NotANumber { lo, hi, got } => write!(f, "must be a number in {lo}..={hi}, got `{got}`"),
            OutOfRange { lo, hi, got } => {
                write!(f, "must be a finite number in {lo}..={hi}, got `{got}`")
            }
            Zero => f.write_str("must be more than 0"),
            NotAFraction(got) => write!(f, "`{got}` is not a fraction (0.03) or a percent (3%)"),
            FractionOutOfRange(got) => {
                write!(f, "`{got}` must be above 0 and below 100 % (0.03 or 3%)")
            }
        }
    }
}

impl std::error::Error for NumberError {}

/// Seconds: a plain number (`2`, `0.5`) or a duration with a unit (`500ms`, `2s`, `1.5m`; units
/// ns, us, µs, ms, s, m, h). Finite and not negative; ranges are the caller's.
pub fn seconds(text: &str) -> Result<f64, NumberError> {
    let s = text.trim();
    let lower = s.to_ascii_lowercase();
    if lower.trim_start_matches(['-', '+']).starts_with("inf") || lower.contains("nan") {
        return Err(NumberError::SecondsNotFinite);
    }
    if s.starts_with('-') {
        return Err(NumberError::NegativeSeconds);
    }
    let (number, unit) = s.split_at(number_length(s));
    let value: f64 = number.parse().map_err(|_| NumberError::NotSeconds)?;
    let scale = match unit.trim() {
        "" | "s" => 1.0,
        "ns" => 1e-9,
        "us" | "µs" => 1e-6,
        "ms" => 1e-3,
        "m" | "min" => 60.0,
        "h" => 3600.0,
        other => return Err(NumberError::UnknownUnit(other.to_string())),
    };
    let v = value * scale;
    if !v.is_finite() {
        return Err(NumberError::SecondsOverflow);
    }
    Ok(v)
}

/// The length of the number at the start of `s`: an optional `+`, digits with an optional
/// decimal point, and an exponent (`e`, an optional sign, digits) only where digits follow it, so
/// that `1e1`, `1e-1`, `1.5E+2ms` take theirs and `2e` before a unit letter is not one (issue 43:
/// `1e-1` was read as 1 with the unit `e-1`).
fn number_length(s: &str) -> usize {
    let bytes = s.as_bytes();
    let digits_from = |mut i: usize| {
        while i < bytes.len() && bytes[i].is_ascii_digit() {
            i += 1;
        }
        i
    };
    let mut end = usize::from(bytes.first() == Some(&b'+'));
    end = digits_from(end);
    if bytes.get(end) == Some(&b'.') {
        end = digits_from(end + 1);
    }
    if matches!(bytes.get(end), Some(b'e' | b'E')) {
        let mut exponent = end + 1;
        if matches!(bytes.get(exponent), Some(b'+' | b'-')) {
            exponent += 1;
        }
        let after = digits_from(exponent);
        if after > exponent {
            end = after;
        }
    }
    end
}

/// A whole number in `LO..=HI`: `4`, `1000`, or `1e6` when it is whole.
pub fn count<const LO: u64, const HI: u64>(text: &str) -> Result<u64, NumberError> {
    let s = text.trim();
    let range = || NumberError::CountOutOfRange { lo: LO, hi: HI, got: text.to_string() };
    if s.starts_with('-') && s.len() > 1 {
        return Err(NumberError::NegativeCount { lo: LO, hi: HI, got: text.to_string() });
    }
    let v = match s.parse::<u64>() {
        Ok(v) => v,
        Err(_) => match s.parse::<f64>() {
            Ok(f) if f.is_finite() && f.fract() == 0.0 && f >= 0.0 && f <= u64::MAX as f64 => {
                f as u64
            }
            _ => return Err(range()),
        },
    };
    if !(LO..=HI).contains(&v) {
        return Err(range());
    }
    Ok(v)
}

/// A finite number in `lo..=hi` (not a duration: a rate, a CPU count, a position).
pub fn number_in(text: &str, lo: f64, hi: f64) -> Result<f64, NumberError> {
    let got = || text.to_string();
    let v: f64 = text.trim().parse().map_err(|_| NumberError::NotANumber { lo, hi, got: got() })?;
    if !v.is_finite() || v < lo || v > hi {
        return Err(NumberError::OutOfRange { lo, hi, got: got() });
    }
    Ok(v)
}

/// `--churn`: group removals per second, 0..=10000.
pub fn churn(text: &str) -> Result<f64, NumberError> {
    number_in(text, 0.0, 10_000.0)
}

/// `--stats-reads`: 0..=10000 per second.
pub fn stats_reads(text: &str) -> Result<f64, NumberError> {
    number_in(text, 0.0, 10_000.0)
}

/// `--max-other-cpus`: 0..=1024.
pub fn cpus(text: &str) -> Result<f64, NumberError> {
    number_in(text, 0.0, 1024.0)
}

/// `--transfer-ns`: 0..=1000000.
pub fn transfer_ns(text: &str) -> Result<f64, NumberError> {
    number_in(text, 0.0, 1e6)
}

/// A position on a trace's time axis, µs: any finite number.
pub fn micros(text: &str) -> Result<f64, NumberError> {
    number_in(text, -1e12, 1e12)
}

/// A trace excerpt's length, µs: more than 0, at most 10 s.
pub fn span_micros(text: &str) -> Result<f64, NumberError> {
    let v = number_in(text, 0.0, 1e7)?;
    if v == 0.0 {
        return Err(NumberError::Zero);
    }
    Ok(v)
}

/// A fraction of a ratio: `0.03` or `3%` (`3 %`), above 0 and below 1 (100 %).
pub fn fraction(text: &str) -> Result<f64, NumberError> {
    let t = text.trim();
    let (number, scale) = match t.strip_suffix('%') {
        Some(n) => (n.trim(), 100.0),
        None => (t, 1.0),
    };
    let value: f64 = number.parse().map_err(|_| NumberError::NotAFraction(text.to_string()))?;
    let f = value / scale;
    if f.is_finite() && f > 0.0 && f < 1.0 {
        Ok(f)
    } else {
        Err(NumberError::FractionOutOfRange(text.to_string()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_precision_is_a_fraction_or_a_percent() {
        assert_eq!(fraction("0.03"), Ok(0.03));
        assert_eq!(fraction("3%"), Ok(0.03));
        assert_eq!(fraction(" 5 % "), Ok(0.05));
        for bad in ["0", "0%", "1", "100%", "-3%", "nan", "inf", "3%%", "", "x"] {
            assert!(fraction(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn seconds_take_units_and_refuse_what_is_not_a_time() {
        assert_eq!(seconds("2").unwrap(), 2.0);
        assert_eq!(seconds("0.5").unwrap(), 0.5);
        assert_eq!(seconds("500ms").unwrap(), 0.5);
        assert_eq!(seconds("2s").unwrap(), 2.0);
        assert_eq!(seconds("1m").unwrap(), 60.0);
        assert!((seconds("250us").unwrap() - 250e-6).abs() < 1e-12);
        assert_eq!(seconds("1e1").unwrap(), 10.0);
        // Exponents of either sign, with or without a unit (issue 43: `1e-1` was refused).
        assert_eq!(seconds("1e-1").unwrap(), 0.1);
        assert_eq!(seconds("1E+1").unwrap(), 10.0);
        assert!((seconds("5e-1ms").unwrap() - 5e-4).abs() < 1e-15);
        assert!((seconds("2.5e2us").unwrap() - 250e-6).abs() < 1e-12);
        assert_eq!(seconds("+2s").unwrap(), 2.0);
        assert_eq!(seconds("3m").unwrap(), 180.0);
        assert!(seconds("2e").unwrap_err().to_string().contains("unknown unit"));
        assert!(seconds("1e-").unwrap_err().to_string().contains("unknown unit"));
        assert!(seconds("1e-1-1").unwrap_err().to_string().contains("unknown unit"));
        for bad in ["inf", "-inf", "NaN", "infinity"] {
            assert!(seconds(bad).unwrap_err().to_string().contains("finite"), "{bad}");
        }
        assert!(seconds("-2").unwrap_err().to_string().contains("negative"));
        assert!(seconds("2 fortnights").unwrap_err().to_string().contains("unknown unit"));
        assert!(seconds("").is_err());
        assert!(seconds("1e400").unwrap_err().to_string().contains("finite"));
    }

    #[test]
    fn counts_are_whole_and_in_range() {
        assert_eq!(count::<1, 1024>("4").unwrap(), 4);
        assert_eq!(count::<0, 100_000_000>("1e8").unwrap(), 100_000_000);
        assert!(count::<1, 1000>("1e8").unwrap_err().to_string().contains("1..=1000"));
        assert!(count::<1, 1024>("0").is_err());
        assert!(count::<1, 1024>("-3").unwrap_err().to_string().contains("negative"));
        assert!(count::<1, 1024>("2.5").is_err());
        assert!(count::<1, 1024>("inf").is_err());
        assert!(count::<1, 1024>("NaN").is_err());
        assert!(churn("1e400").is_err() && churn("-1").is_err() && churn("nan").is_err());
        assert_eq!(churn("1000").unwrap(), 1000.0);
    }
}
