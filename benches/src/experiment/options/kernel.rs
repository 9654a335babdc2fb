//! `schedlab kernel`'s options: this machine's own BFQ beside the model
//! ([`crate::experiment::kernel`]), and `--inject`'s one long run.

use super::parse::{bad_input, parse_bs, parse_rw, seconds};
use super::units;
use crate::driver::completion::CompletionMode;
use crate::error::ExperimentError;
use crate::experiment::kernel::inject::InjectConfig;
use crate::experiment::kernel::{self, KernelConfig, ModelOutside, Point};
use schedlab_core::LockKind;

/// What `--inject`'s one long run does not make or use: refused beside it, and beside the
/// options that need it (clap drops a requirement whose required option conflicts with one
/// given, so `requires` alone is not enough).
const NOT_WITH_INJECT: &[&str] =
    &["points", "contention", "no_profile", "flamegraphs", "model_elevator_ns"];

#[derive(clap::Args, Debug, Clone)]
pub struct KernelOptions {
    /// Jobs: fio's numjobs and the model's threads, 1..=256.
    #[arg(long, default_value_t = 2, value_parser = units::count::<1, 256>, allow_negative_numbers = true)]
    threads: u64,
    /// Measured time of each run: seconds or a duration (more than 0, at most an hour).
    #[arg(long, default_value = "2", value_parser = units::seconds, allow_hyphen_values = true)]
    duration: f64,
    /// Time run before measuring, every run (fio's ramp_time).
    #[arg(long, default_value = "0.25", value_parser = units::seconds, allow_hyphen_values = true)]
    ramp: f64,
    /// Rounds, 1..=100; each runs every configuration and model row once, in a rotated order.
    /// Default 6: the fewest whose 95 % interval covers 95 % (fewer: no interval).
    #[arg(long, default_value_t = crate::stats::BOOTSTRAP_MIN_VALUES as u64, value_parser = units::count::<1, 100>, allow_negative_numbers = true)]
    rounds: u64,
    /// Groups, 0..=64: cgroups for the `bfq-groups` configuration (jobs in turn), groups for the
    /// model's grouped rows; 0 leaves both out.
    #[arg(long, default_value_t = 4, value_parser = units::count::<0, 64>, allow_negative_numbers = true)]
    groups: u64,
    /// Group weights, 1..=1000 each, one per group (`--groups`); a list ending in `...` is repeated
    /// in turn (`100,200,...`). Default: 100,200,300 in turn.
    #[arg(long)]
    weights: Option<String>,
    /// The configurations measured, each a whole experiment: `auto` ({1, --threads} jobs ×
    /// {1, --iodepth}), `main` (only --threads × --iodepth), or a list JOBSxDEPTH[:ENGINE], e.g.
    /// `2x32,1x1:psync`; the main configuration is always measured first.
    #[arg(long, default_value = "auto", conflicts_with = "inject")]
    points: String,
    /// Access pattern: randread, randwrite, read, write (writes only to a loop device made here).
    #[arg(long, default_value = "randread")]
    rw: String,
    /// Block size: 512 to 128k.
    #[arg(long, default_value = "4k")]
    bs: String,
    /// Requests each job keeps outstanding, 1..=1024.
    #[arg(long, default_value_t = 32, value_parser = units::count::<1, 1024>, allow_negative_numbers = true)]
    iodepth: u64,
    /// fio's I/O engine: io_uring (batched submission, where the scheduler's cost shows) or psync.
    #[arg(long, default_value = "io_uring")]
    ioengine: String,
    /// Size of the loop device's sparse backing file in the tmpfs, MiB (16..=65536).
    #[arg(long, default_value_t = 1024, value_parser = units::count::<16, 65536>, allow_negative_numbers = true, conflicts_with = "device")]
    size_mib: u64,
    /// An existing block device instead of a loop device (only read from; refused when it holds
    /// a mounted filesystem), e.g. /dev/nullb0.
    #[arg(long)]
    pub device: Option<std::path::PathBuf>,
    /// Lock contention from the kernel's tracepoints (bpftrace, a second run per configuration
    /// and round): on or off.
    #[arg(long, default_value = "on", conflicts_with = "inject")]
    contention: String,
    /// Leave out the perf profile (and flamegraph) of each kernel configuration.
    #[arg(long, conflicts_with = "inject")]
    pub no_profile: bool,
    /// Write each kernel configuration's flamegraph here (kernel-<config>.svg, and its folded
    /// stacks kernel-<config>.folded; a missing directory is made).
    #[arg(long, conflicts_with_all = ["no_profile", "inject"])]
    pub flamegraphs: Option<std::path::PathBuf>,
    /// Leave out the model's rows.
    #[arg(long)]
    no_model: bool,
    /// The model's lock kind (the kernel's qspinlock is a fair spinning lock).
    #[arg(long, default_value = "fair-spin", conflicts_with = "no_model")]
    model_lock: String,
    /// The model's outside work per request: `kernel` (the kernel's none CPU time per I/O,
    /// measured first) or ns (0..=1000000000).
    #[arg(long, default_value = "kernel", conflicts_with = "no_model")]
    model_outside_ns: String,
    /// The elevator cost the model's scheduler rows pay per request (blk-mq's machinery that
    /// `none` skips): `kernel` (measured at each configuration from the profiles: bfq's minus
    /// none's CPU per I/O, less BFQ's own functions; 0 with --no-profile) or ns (0..=1000000000).
    #[arg(long, default_value = "kernel", conflicts_with_all = ["no_model", "inject"])]
    model_elevator_ns: String,
    /// Where the model's requests complete: `context` (a completion context per CPU fed by the
    /// device, as the kernel completes a loop device's requests in softirq: run by the job on
    /// that CPU between its lock sites, or by a thread of its own on a CPU with no job) or
    /// `inline` (on the job that dispatched them, at once: null_blk's irqmode=0).
    #[arg(long, default_value = "context", conflicts_with = "no_model")]
    model_completion: String,
    /// Inject a known cost per I/O, ns, at BFQ's insert inside its lock and before it outside,
    /// in alternating 200 ms phases of one long fio run (comma-separated, each 0..=20000; e.g.
    /// 0,500,1000,2000), beside the model's `--inject-ns N --at inside|outside`.
    #[arg(long, value_name = "NS,...", allow_hyphen_values = true)]
    pub inject: Option<String>,
    /// Cycles per cost with --inject (each: nothing, inside, outside, 200 ms each), 4..=10000.
    #[arg(long, default_value_t = 40, value_parser = units::count::<4, 10000>, allow_negative_numbers = true, requires = "inject", conflicts_with_all = NOT_WITH_INJECT)]
    inject_cycles: u64,
    /// With --inject: keep bpftrace's raw outputs in this directory (lock.json, verify.json,
    /// phases.json; a missing directory is made).
    #[arg(long, value_name = "DIR", requires = "inject", conflicts_with_all = NOT_WITH_INJECT)]
    pub inject_raw: Option<std::path::PathBuf>,
    /// With --inject: run the model the fidelity table judged, from an earlier `schedlab kernel
    /// --json` report of this machine; its point of these jobs and iodepth gives the model's
    /// outside work, elevator cost and per-site pads (without it: jobs ÷ the kernel's IOPS
    /// outside, no elevator cost, no pads).
    #[arg(long, value_name = "FILE", requires = "inject", conflicts_with_all = ["no_model", "model_outside_ns", "points", "contention", "no_profile", "flamegraphs", "model_elevator_ns"])]
    pub model_from: Option<std::path::PathBuf>,
    /// With --inject: take the kernel half from an earlier `schedlab kernel --inject --json`
    /// report of the same jobs and iodepth (every cost asked for in it) instead of measuring it
    /// here, and run only the model's half: to hold a changed model against a kernel measured
    /// before, e.g. where BFQ is not available now. The report says where its kernel half came from.
    #[arg(long, value_name = "FILE", requires = "inject", conflicts_with_all = ["no_model", "points", "contention", "no_profile", "flamegraphs", "model_elevator_ns", "inject_raw", "device"])]
    pub kernel_from: Option<std::path::PathBuf>,
}

impl KernelOptions {
    /// The experiment's configuration (and for `--inject`, the settings of its one long run:
    /// [`KernelOptions::inject_config`]).
    pub fn config(&self) -> Result<KernelConfig, ExperimentError> {
        let args = self;
        let rw = parse_rw(&args.rw)?;
        let groups = args.groups as usize;
        let (list, in_turn) = match &args.weights {
            None => ("100,200,300", true),
            Some(w) => match w.trim().strip_suffix("...") {
                Some(head) => (head.trim().trim_end_matches(',').trim(), true),
                None => (w.as_str(), false),
            },
        };
        if args.weights.is_some() && groups == 0 {
            return Err(bad_input("--weights needs groups: give --groups N (1..=64)"));
        }
        let mut weights = list
            .split(',')
            .map(|w| {
                w.trim().parse::<u64>().ok().filter(|w| (1..=1000).contains(w)).ok_or_else(|| {
                    bad_input(format!("--weights must be numbers 1..=1000, got `{w}`"))
                })
            })
            .collect::<Result<Vec<_>, _>>()?;
        if in_turn && groups > 0 {
            weights = (0..groups).map(|i| weights[i % weights.len()]).collect();
        }
        let ioengine = match args.ioengine.as_str() {
            "io_uring" => "io_uring",
            "psync" => "psync",
            other => {
                return Err(bad_input(format!(
                    "unknown --ioengine `{other}` (known: io_uring, psync)"
                )))
            }
        };
        let contention = match args.contention.as_str() {
            "on" => true,
            "off" => false,
            other => {
                return Err(bad_input(format!("--contention must be on or off, got `{other}`")))
            }
        };
        let model_lock = LockKind::from_name(&args.model_lock).ok_or_else(|| {
            bad_input(format!(
                "unknown --model-lock `{}` (known: fair-spin, parking-lot)",
                args.model_lock
            ))
        })?;
        let model_outside = match args.model_outside_ns.as_str() {
            "kernel" => ModelOutside::Kernel,
            n => ModelOutside::Fixed(
                units::count::<0, 1_000_000_000>(n)
                    .map_err(|e| bad_input(format!("--model-outside-ns: {e} (or `kernel`)")))?,
            ),
        };
        let model_elevator = match args.model_elevator_ns.as_str() {
            "kernel" => ModelOutside::Kernel,
            n => ModelOutside::Fixed(
                units::count::<0, 1_000_000_000>(n)
                    .map_err(|e| bad_input(format!("--model-elevator-ns: {e} (or `kernel`)")))?,
            ),
        };
        if args.no_profile && args.flamegraphs.is_some() {
            return Err(bad_input("--flamegraphs needs the profiles: leave out --no-profile"));
        }
        if let Some(dir) = &args.flamegraphs {
            crate::files::output::check_dir(dir).map_err(bad_input)?;
        }
        let main =
            Point { threads: args.threads as usize, iodepth: args.iodepth as usize, ioengine };
        let points = match args.points.as_str() {
            "auto" => Point::auto(main.threads, main.iodepth, ioengine),
            "main" => vec![main],
            list => {
                let mut v = vec![main];
                for item in list.split(',') {
                    let p = parse_point(item.trim(), ioengine)?;
                    if !v.contains(&p) {
                        v.push(p);
                    }
                }
                v
            }
        };
        Ok(KernelConfig {
            points,
            threads: args.threads as usize,
            rw,
            bs_sectors: parse_bs(&args.bs)?,
            iodepth: args.iodepth as usize,
            ioengine,
            duration: seconds("duration", args.duration, false)?,
            ramp: seconds("ramp", args.ramp, true)?,
            rounds: args.rounds as usize,
            groups,
            weights,
            size_bytes: args.size_mib << 20,
            device: args.device.clone(),
            contention,
            profile: !args.no_profile,
            flamegraph_dir: args.flamegraphs.clone(),
            model: !args.no_model,
            model_lock,
            model_outside,
            model_elevator,
            model_kernel: kernel::running_kernel_profile(),
            model_completion: CompletionMode::from_name(&args.model_completion).ok_or_else(
                || {
                    bad_input(format!(
                        "unknown --model-completion `{}` (known: context, inline)",
                        args.model_completion
                    ))
                },
            )?,
        })
    }

    /// `--inject`'s costs and cycles, checked; `None` without `--inject`.
    pub fn inject_config(&self) -> Result<Option<InjectConfig>, ExperimentError> {
        let Some(list) = &self.inject else { return Ok(None) };
        let costs_ns = list
            .split(',')
            .map(|c| {
                units::count::<0, { kernel::inject::MAX_COST_NS }>(c.trim())
                    .map_err(|e| bad_input(format!("--inject: {e}")))
            })
            .collect::<Result<Vec<_>, _>>()?;
        if let Some(dir) = &self.inject_raw {
            crate::files::output::check_dir(dir).map_err(bad_input)?;
        }
        let icfg = InjectConfig {
            costs_ns,
            cycles: self.inject_cycles as usize,
            raw_dir: self.inject_raw.clone(),
            model_from_file: self.model_from.clone(),
            model_from: None,
            kernel_from_file: self.kernel_from.clone(),
            kernel_from: None,
        };
        icfg.validate()?;
        Ok(Some(icfg))
    }
}

/// `2x32` or `1x1:psync`: jobs × iodepth, and the engine (default: `--ioengine`'s).
fn parse_point(item: &str, ioengine: &'static str) -> Result<Point, ExperimentError> {
    let bad = || {
        bad_input(format!("--points: `{item}` is not JOBSxDEPTH[:ENGINE] (e.g. 2x32, 1x1:psync), or auto, or main"))
    };
    let (shape, engine) = match item.split_once(':') {
        Some((s, "io_uring")) => (s, "io_uring"),
        Some((s, "psync")) => (s, "psync"),
        Some(_) => return Err(bad()),
        None => (item, ioengine),
    };
    let (t, d) = shape.split_once('x').ok_or_else(bad)?;
    let threads = units::count::<1, 256>(t).map_err(|_| bad())?;
    let iodepth = units::count::<1, 1024>(d).map_err(|_| bad())?;
    Ok(Point { threads: threads as usize, iodepth: iodepth as usize, ioengine: engine })
}
