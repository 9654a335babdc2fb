//! `schedlab simulate`'s options: fio-like jobs against the scheduler and a device model in
//! virtual time ([`crate::experiment::simulate`]).

use super::parse::{bad_input, parse_bs, parse_rw};
use super::units;
use crate::error::ExperimentError;
use crate::experiment::simulate::SimulateConfig;
use crate::policy_sim::{DeviceModel, IdlingDecision, SimConfig};

#[derive(clap::Args, Debug, Clone)]
pub struct SimulateOptions {
    /// Device model: null (zero latency), ssd (parallel, lognormal service time), hdd (one at a
    /// time, seek + rotation).
    #[arg(long, default_value = "ssd")]
    device: String,
    /// Jobs (fio's numjobs), 1..=4096: processes, one queue each.
    #[arg(long, default_value_t = 10, value_parser = units::count::<1, 4096>, allow_negative_numbers = true)]
    jobs: u64,
    /// Requests each job keeps outstanding, 1..=4096 (jobs x iodepth at most 1048576).
    #[arg(long, default_value_t = 64, value_parser = units::count::<1, 4096>, allow_negative_numbers = true)]
    iodepth: u64,
    /// Access pattern: randread, randwrite, read, write.
    #[arg(long, default_value = "randread")]
    rw: String,
    /// Block size in bytes (a multiple of 512, at most 128 KiB), e.g. 4096 or 4k.
    #[arg(long, default_value = "4k")]
    bs: String,
    /// Virtual time measured: seconds (10) or a duration (500ms); more than 0, at most 3600 s.
    #[arg(long, default_value = "10", allow_hyphen_values = true)]
    runtime: String,
    /// Idle slice after a sync queue empties (8ms, 500us, 1s, 0); default: the scheduler's own
    /// decision (0 on a non-rotational device, BFQ's 8ms otherwise).
    #[arg(long, allow_hyphen_values = true)]
    slice_idle: Option<String>,
    /// When the scheduler decides slice_idle from the rotational flag: registered (after the
    /// device probe, the kernel fix) or init (before it, the first patch).
    #[arg(long, default_value = "registered", conflicts_with = "slice_idle")]
    idle_decision: String,
    /// Think time between a completion and the next submission in its slot (0, 100us, 10ms).
    #[arg(long, default_value = "0", allow_hyphen_values = true)]
    think: String,
    /// Sibling groups under the root, 0..=1000 (0: every job in the root group); jobs go round-robin.
    #[arg(long, default_value_t = 0, value_parser = units::count::<0, 1000>, allow_negative_numbers = true)]
    groups: u64,
    /// Group weights, comma-separated, assigned in turn (1..=1000).
    #[arg(long, default_value = "100", allow_hyphen_values = true, requires = "groups")]
    weights: String,
    /// SSD only: requests the device serves at once, 1..=65536 (default 256).
    #[arg(long, value_parser = units::count::<1, 65536>, allow_negative_numbers = true)]
    parallelism: Option<u64>,
    /// Seed of the offsets and the device's service times.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Stats variant (see `schedlab variants`); it does not change virtual-time results.
    #[arg(long, default_value = "no-stats")]
    pub variant: String,
}

/// A duration in ns: a number with a unit (ns, us, µs, ms, s); a bare number is `bare_unit_ns`
/// nanoseconds each when given, otherwise only `0` may go without a unit.
fn parse_duration(
    name: &str,
    text: &str,
    bare_unit_ns: Option<f64>,
) -> Result<u64, ExperimentError> {
    let s = text.trim();
    let example = if bare_unit_ns.is_some() { "10, 2.5s or 500ms" } else { "8ms, 500us, 1s or 0" };
    let bad = || bad_input(format!("--{name} must be a duration like {example}, got `{text}`"));
    if s.starts_with('-') {
        return Err(bad_input(format!("--{name} must not be negative, got `{text}`")));
    }
    let split = s.find(|c: char| !(c.is_ascii_digit() || c == '.')).unwrap_or(s.len());
    let (number, unit) = s.split_at(split);
    let value: f64 = number.parse().map_err(|_| bad())?;
    let unit_ns = match unit.trim() {
        "" => match bare_unit_ns {
            Some(ns) => ns,
            None if value == 0.0 => 1.0,
            None => {
                return Err(bad_input(format!(
                    "--{name} needs a unit (ns, us, ms, s), got `{text}`"
                )))
            }
        },
        "ns" => 1.0,
        "us" | "µs" => 1e3,
        "ms" => 1e6,
        "s" => 1e9,
        _ => return Err(bad()),
    };
    let ns = value * unit_ns;
    if !ns.is_finite() || ns > 3600e9 {
        return Err(bad_input(format!("--{name} must be at most an hour, got `{text}`")));
    }
    Ok(ns.round() as u64)
}

fn count(name: &str, v: u64) -> Result<usize, ExperimentError> {
    usize::try_from(v).map_err(|_| bad_input(format!("--{name} is too large, got {v}")))
}

impl SimulateOptions {
    pub fn config(&self) -> Result<SimulateConfig, ExperimentError> {
        Ok(SimulateConfig { sim: self.sim_config()?, variant: self.variant.clone() })
    }

    /// The simulation's own configuration (the variant aside: it changes no virtual-time result).
    pub fn sim_config(&self) -> Result<SimConfig, ExperimentError> {
        let args = self;
        let mut device = DeviceModel::from_name(&args.device).ok_or_else(|| {
            bad_input(format!(
                "unknown --device `{}` (known: {})",
                args.device,
                DeviceModel::NAMES.join(", ")
            ))
        })?;
        if let Some(p) = args.parallelism {
            match &mut device {
                DeviceModel::Ssd(m) => m.units = count("parallelism", p)?,
                other => {
                    return Err(bad_input(format!(
                        "--parallelism applies to --device ssd only, not `{}`",
                        other.name()
                    )))
                }
            }
        }
        let rw = parse_rw(&args.rw)?;
        let decision = IdlingDecision::from_name(&args.idle_decision).ok_or_else(|| {
            bad_input(format!(
                "unknown --idle-decision `{}` (known: registered, init)",
                args.idle_decision
            ))
        })?;
        let weights = args
            .weights
            .split(',')
            .map(|w| match w.trim().parse::<i64>() {
                Ok(w) if (1..=1000).contains(&w) => Ok(w as u64),
                Ok(w) => Err(bad_input(format!("group weight must be 1..=1000, got {w}"))),
                Err(_) => Err(bad_input(format!("--weights must be numbers, got `{w}`"))),
            })
            .collect::<Result<Vec<_>, _>>()?;
        let runtime_ns = parse_duration("runtime", &args.runtime, Some(1e9))?;
        if runtime_ns == 0 {
            return Err(bad_input(format!(
                "--runtime must be greater than zero, got `{}`",
                args.runtime
            )));
        }
        Ok(SimConfig {
            device,
            jobs: count("jobs", args.jobs)?,
            iodepth: count("iodepth", args.iodepth)?,
            rw,
            bs_sectors: parse_bs(&args.bs)?,
            runtime_ns,
            think_ns: parse_duration("think", &args.think, None)?,
            groups: count("groups", args.groups)?,
            weights,
            slice_idle_ns: args
                .slice_idle
                .as_deref()
                .map(|s| parse_duration("slice-idle", s, None))
                .transpose()?,
            decision,
            seed: args.seed,
        })
    }
}
