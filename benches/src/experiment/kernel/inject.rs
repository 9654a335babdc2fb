//! `schedlab kernel --inject 0,500,1000,2000`: a known cost per I/O injected at two sites of the
//! running kernel's insert path, one inside BFQ's lock and one outside it, in alternating phases
//! of one long fio run, beside the model's same knob (`--inject-ns N --at inside|outside`,
//! `schedlab_core::inject`).
//!
//! ## The sites
//!
//! | site | tracepoint | where it fires | lock |
//! | --- | --- | --- | --- |
//! | inside | `block:block_rq_insert` | `bfq_insert_request`, in the submitting thread | `bfqd->lock` held |
//! | outside | `block:block_getrq` | `blk_mq_submit_bio`, after the request is allocated, same thread, before the insert | not held (but by another CPU) |
//!
//! This kernel kind cannot be rebuilt or take modules or kprobes, but bpftrace attaches to
//! tracepoints, and a tracepoint's program runs in the context that fired it: a busy loop in it is
//! a cost spent at that site. The sites are verified on the running kernel before they are
//! trusted ([`Verification`]): BFQ's lock address is found from `lock:contention_begin` callers
//! in `bfq_*` (as `contention.rs` finds it), and its lock word is read at every hit of both
//! sites: the inside site must see it held on (almost) every hit, the outside one must not.
//!
//! ## The cost
//!
//! A bounded multiply-add loop the compiler cannot fold (its result decides whether a map is
//! written, and its seed is the request's sector). Its cost per iteration is calibrated in place,
//! in the outside site's program with the I/O running: a loop of [`CAL_ITERS`] iterations timed by
//! `nsecs`, less an empty pair of `nsecs` (`nsecs` is too slow on some guests to time the cost
//! itself; it only calibrates). The iterations for a cost are `cost ÷ ns per iteration`.
//!
//! ## The phases
//!
//! One bpftrace program stays attached for the whole measurement and an `interval:ms:200` probe
//! moves it through cycles of three phases: nothing injected, the cost inside, the cost outside;
//! the order of the last two is swapped every other cycle of a cost, and the costs take the
//! cycles in turn. Every phase counts the submissions of the loop device (`block_getrq` hits) and
//! its start time. A cycle gives `inside ÷ outside` throughput within 600 ms, so a shared
//! machine's drift largely cancels; the interval over cycles is a bootstrap of the ratio of sums
//! ([`ratio_interval`]). The attached program itself costs the same in every phase (it is attached
//! throughout); what it costs is measured from the device's own counters before and after
//! ([`InjectKernel::probe_cost_pct`]).
//!
//! ## A recorded kernel half
//!
//! `--kernel-from report.json` takes the kernel half (its costs, intervals, phases and slopes) of
//! an earlier `--inject --json` report of the same jobs and iodepth instead of measuring it, and
//! runs only the model's half beside it ([`recorded_kernel_from_report`]): a changed model can be
//! held against a kernel measured before, on a machine of the same kind, where BFQ is not
//! available now. The report names the file, its commit, date and CPU in a warning and in
//! `kernel_release`; nothing of the recorded half is re-computed.
//!
//! Clean-up is `schedlab kernel`'s (`system.rs`): the loop device, file and cgroups go through
//! the ledger; bpftrace and fio die with this process (`PR_SET_PDEATHSIG`) and their BPF programs
//! with them.

use super::fidelity::Verdict;
use super::system;
use crate::driver::turns::Preemption;
use crate::driver::workload::{self, sleep_until, WorkloadConfig};
use crate::error::failed;
use crate::error::ExperimentError;
use crate::experiment::observer::{Event, Observer};
use crate::files::provenance::Provenance;
use crate::stats::{median, quantile};
use rand::{Rng, SeedableRng};
use schedlab_core::sync::{AtomicBool, Ordering};
use schedlab_core::{Inject, InjectSite};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// Iterations of the calibration loop.
pub const CAL_ITERS: u64 = 2000;
/// Length of a phase, ms.
pub const PHASE_MS: u64 = 200;
/// The largest cost per I/O, ns (the verifier walks every iteration of the bounded loop).
pub const MAX_COST_NS: u64 = 20_000;
/// The model's row: `mainline`, today's kernel's BFQ (its statistics at submission, before the
/// scheduler lock; the insert under it in the submitting thread, as `bfq_insert_requests` does;
/// `notes/kernel-map.md` §4), run with the running kernel's lock sites ([`KernelSettings::model_kernel`]).
/// The same entry as the fidelity table's `MODEL_BFQ`.
pub const MODEL_ENTRY: &str = "mainline";
/// Bootstrap resamples for the intervals.
const RESAMPLES: usize = 2000;

/// The tracepoints `--inject` needs, relative to tracefs's `events/`.
pub const TRACEPOINTS: [&str; 3] =
    ["block/block_rq_insert", "block/block_getrq", "lock/contention_begin"];

/// The kernel peer's settings that an injection run uses (`schedlab kernel`'s, checked there by
/// `KernelConfig::validate`; a copy, so that this module imports nothing of its parent).
#[derive(Clone, Debug, Serialize)]
pub struct KernelSettings {
    /// Jobs: fio's numjobs, the model's threads.
    pub threads: usize,
    pub rw: crate::driver::workload::Rw,
    pub bs_sectors: u32,
    pub iodepth: usize,
    pub ioengine: &'static str,
    /// Each model run's measured time and ramp.
    pub duration: Duration,
    pub ramp: Duration,
    /// Model rounds per cost and site.
    pub rounds: usize,
    /// Cgroups the jobs are spread over (0: none).
    pub groups: usize,
    pub weights: Vec<u64>,
    pub size_bytes: u64,
    pub device: Option<PathBuf>,
    /// Run the model's rows.
    pub model: bool,
    pub model_lock: schedlab_core::LockKind,
    /// The kernel generation whose lock sites the model's rows take (the running kernel's).
    pub model_kernel: schedlab_core::KernelProfile,
    /// Where the model's requests complete (`driver::completion`).
    pub model_completion: crate::driver::completion::CompletionMode,
    /// The model's outside work per request, ns; `None`: jobs ÷ the kernel's IOPS with nothing
    /// attached.
    pub model_outside_ns: Option<u64>,
}

/// What `--inject` does beyond the kernel configuration.
#[derive(Clone, Debug, Serialize)]
pub struct InjectConfig {
    /// Costs per I/O, ns, in the order given.
    pub costs_ns: Vec<u64>,
    /// Cycles per cost (each: nothing, inside, outside; 200 ms phases).
    pub cycles: usize,
    /// Where to keep bpftrace's raw outputs (`lock.json`, `verify.json`, `phases.json`), the raw
    /// data behind the report, if anywhere.
    pub raw_dir: Option<PathBuf>,
    /// `--model-from`: an earlier `schedlab kernel --json` report of this machine.
    pub model_from_file: Option<PathBuf>,
    /// The model the fidelity table judged, read from `model_from_file` before the work
    /// ([`run`]): its outside work, elevator cost and per-site pads.
    pub model_from: Option<ModelFrom>,
    /// `--kernel-from`: an earlier `schedlab kernel --inject --json` report whose kernel half is
    /// taken instead of measuring one here.
    pub kernel_from_file: Option<PathBuf>,
    /// That report's kernel half, read before the work ([`run`]).
    pub kernel_from: Option<RecordedKernel>,
}

/// The kernel half of an earlier `--inject` report (`--kernel-from`): to hold a changed model
/// against a kernel measured before, on this machine or one of its kind where BFQ is not
/// available now. The report says where it came from, in a warning and in `kernel_release`.
#[derive(Clone, Debug, Serialize)]
pub struct RecordedKernel {
    pub file: PathBuf,
    /// The recording binary's commit, the date and the CPU it ran on (its provenance).
    pub commit: String,
    pub date: String,
    pub cpu_model: String,
    pub cpus: u64,
    /// The recorded kernel's release, "(recorded ...)" appended.
    pub kernel_release: String,
    pub device: String,
    /// The model's outside work per request that report used.
    pub model_outside_ns: u64,
    #[serde(skip)]
    pub kernel: InjectKernel,
}

impl RecordedKernel {
    /// The warning that says the kernel half was not measured now.
    pub fn note(&self) -> String {
        format!(
            "the kernel half is read from {} (recorded {} by commit {} on {} CPU(s), {}), not measured now: \
             the model's half ran here",
            self.file.display(),
            self.date,
            self.commit,
            self.cpus,
            self.cpu_model
        )
    }
}

/// Reads the kernel half of an earlier `schedlab kernel --inject --json` report at the same
/// jobs and iodepth, with every cost asked for; an error says what does not fit.
pub fn recorded_kernel_from_report(
    file: &Path,
    text: &str,
    threads: usize,
    iodepth: usize,
    costs_ns: &[u64],
) -> Result<RecordedKernel, ExperimentError> {
    use serde_json::Value;
    let name = file.display();
    let not_inject = |why: String| {
        failed(format!("--kernel-from {name}: not a schedlab kernel --inject JSON report ({why})"))
    };
    let v: Value = serde_json::from_str(text).map_err(|e| not_inject(e.to_string()))?;
    let kernel = v.get("kernel").filter(|k| !k.is_null()).ok_or_else(|| {
        if v.get("inject").is_some() {
            failed(format!("--kernel-from {name}: the report has no kernel half (its kernel runs failed or were not made)"))
        } else {
            not_inject("no `inject` and no `kernel`".into())
        }
    })?;
    let kernel: InjectKernel = serde_json::from_value(kernel.clone())
        .map_err(|e| not_inject(format!("its kernel half: {e}")))?;
    let config = v.get("config").ok_or_else(|| not_inject("no `config`".into()))?;
    let num = |v: &Value, key: &str| v.get(key).and_then(Value::as_u64);
    let at = (num(config, "threads"), num(config, "iodepth"));
    if at != (Some(threads as u64), Some(iodepth as u64)) {
        let shown = |x: Option<u64>| x.map_or("?".to_string(), |x| x.to_string());
        return Err(failed(format!(
            "--kernel-from {name}: the report is of {} jobs × iodepth {}, not {threads} × {iodepth}",
            shown(at.0),
            shown(at.1)
        )));
    }
    let missing: Vec<String> = costs_ns
        .iter()
        .filter(|c| !kernel.costs.iter().any(|k| k.cost_ns == **c && k.ratio.is_some()))
        .map(|c| c.to_string())
        .collect();
    if !missing.is_empty() {
        return Err(failed(format!(
            "--kernel-from {name}: the report has no kernel ratio at {} ns",
            missing.join(", ")
        )));
    }
    let prov = v.get("provenance");
    let field = |key: &str| {
        prov.and_then(|p| p.get(key)).and_then(Value::as_str).unwrap_or("unknown").to_string()
    };
    let release = v.get("kernel_release").and_then(Value::as_str).unwrap_or("unknown");
    Ok(RecordedKernel {
        file: file.to_path_buf(),
        commit: field("commit"),
        date: field("date"),
        cpu_model: field("cpu_model"),
        cpus: prov.and_then(|p| num(p, "cpus")).unwrap_or(0),
        kernel_release: format!("{release} (recorded in {name})"),
        device: v.get("device").and_then(Value::as_str).unwrap_or("unknown").to_string(),
        model_outside_ns: num(&v, "model_outside_ns").unwrap_or(0),
        kernel,
    })
}

/// The model's inputs taken from a `schedlab kernel --json` report at the same point (jobs and
/// iodepth): the outside work and elevator cost per request and the per-site pads it ran its
/// rows with. None of them is computed from an injection run, so the judged ratios and slopes
/// stay unfitted.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ModelFrom {
    pub file: PathBuf,
    /// The report's point, "2 jobs × iodepth 32 (io_uring)".
    pub point: String,
    pub outside_ns: u64,
    pub elevator_ns: u64,
    pub pads: schedlab_core::SitePads,
}

/// Finds the point of `threads` jobs × `iodepth` in a `schedlab kernel --json` report (its main
/// point or one of `points`) and takes its model inputs; an error says what is missing.
pub fn model_from_report(
    file: &Path,
    text: &str,
    threads: usize,
    iodepth: usize,
) -> Result<ModelFrom, ExperimentError> {
    use serde_json::Value;
    let name = file.display();
    let v: Value = serde_json::from_str(text).map_err(|e| {
        failed(format!("--model-from {name}: not a schedlab kernel JSON report ({e})"))
    })?;
    let num = |v: &Value, key: &str| v.get(key).and_then(Value::as_u64);
    // The main point: the report's config and top-level figures; the others: `points`.
    let mut candidates: Vec<(Option<(u64, u64)>, &Value, &Value)> = Vec::new();
    if let Some(c) = v.get("config") {
        candidates.push((num(c, "threads").zip(num(c, "iodepth")), &v, &v));
    }
    for p in v.get("points").and_then(Value::as_array).into_iter().flatten() {
        candidates.push((
            p.get("point").and_then(|pt| num(pt, "threads").zip(num(pt, "iodepth"))),
            p,
            p,
        ));
    }
    if candidates.is_empty() || v.get("model_outside_ns").is_none() {
        return Err(failed(format!("--model-from {name}: not a schedlab kernel JSON report (no config and no model_outside_ns)")));
    }
    let want = (threads as u64, iodepth as u64);
    let Some((_, figures, at)) = candidates.into_iter().find(|(p, ..)| *p == Some(want)) else {
        return Err(failed(format!(
            "--model-from {name}: the report has no point of {threads} jobs × iodepth {iodepth}"
        )));
    };
    let outside_ns = num(figures, "model_outside_ns")
        .ok_or_else(|| failed(format!("--model-from {name}: the point has no model_outside_ns")))?;
    let elevator_ns = num(figures, "model_elevator_ns").unwrap_or(0);
    let pads = at.get("sites").and_then(|s| s.get("pads")).filter(|p| !p.is_null()).ok_or_else(|| {
        failed(format!("--model-from {name}: the point of {threads} jobs × iodepth {iodepth} has no site calibration (it needs the bfq profile and the model: run without --no-profile)"))
    })?;
    let arr = |key: &str, n: usize| -> Result<Vec<u64>, ExperimentError> {
        let a = pads
            .get(key)
            .and_then(Value::as_array)
            .ok_or_else(|| failed(format!("--model-from {name}: sites.pads.{key} is missing")))?;
        let v: Vec<u64> = a.iter().filter_map(Value::as_u64).collect();
        if v.len() != n || v.len() != a.len() {
            return Err(failed(format!(
                "--model-from {name}: sites.pads.{key} must be {n} whole numbers of ns"
            )));
        }
        if let Some(x) = v.iter().find(|&&x| x > MAX_PAD_NS) {
            return Err(failed(format!(
                "--model-from {name}: sites.pads.{key} holds {x} ns, more than {MAX_PAD_NS}"
            )));
        }
        Ok(v)
    };
    let (hold, gap) = (arr("hold_ns", 5)?, arr("gap_ns", 3)?);
    let mut pads = schedlab_core::SitePads::NONE;
    pads.hold_ns.copy_from_slice(&hold);
    pads.gap_ns.copy_from_slice(&gap);
    for (what, x) in [("model_outside_ns", outside_ns), ("model_elevator_ns", elevator_ns)] {
        if x > 1_000_000_000 {
            return Err(failed(format!("--model-from {name}: {what} is {x} ns, more than 1 s")));
        }
    }
    let point = format!("{threads} job{} × iodepth {iodepth}", if threads == 1 { "" } else { "s" });
    Ok(ModelFrom { file: file.to_path_buf(), point, outside_ns, elevator_ns, pads })
}

/// The largest pad a report may give a site, ns (a pad is a spin per acquisition).
pub const MAX_PAD_NS: u64 = 100_000;

impl InjectConfig {
    pub fn validate(&self) -> Result<(), ExperimentError> {
        let bad = |m: String| Err(ExperimentError::bad_input(m));
        if self.costs_ns.is_empty() || self.costs_ns.len() > 16 {
            return bad(format!("--inject takes 1 to 16 costs, got {}", self.costs_ns.len()));
        }
        if let Some(c) = self.costs_ns.iter().find(|&&c| c > MAX_COST_NS) {
            return bad(format!("--inject costs must be 0..={MAX_COST_NS} ns, got {c}"));
        }
        if !(4..=10_000).contains(&self.cycles) {
            return bad(format!("--inject-cycles must be 4..=10000, got {}", self.cycles));
        }
        Ok(())
    }

    /// Seconds the injected phases take.
    pub fn phases_s(&self) -> f64 {
        (self.costs_ns.len() * self.cycles * 3) as f64 * PHASE_MS as f64 / 1e3
    }
}

/// Refuses, in one line, a kernel whose tracefs (at `tracefs`) lacks a tracepoint `--inject`
/// needs.
pub fn check_tracepoints(tracefs: &Path) -> Result<(), ExperimentError> {
    for tp in TRACEPOINTS {
        let format = tracefs.join("events").join(tp).join("format");
        if !format.exists() {
            return Err(ExperimentError::bad_input(format!(
                "this kernel has no tracepoint {} ({} is missing): --inject needs block_rq_insert, block_getrq and lock:contention_begin with BPF",
                tp.replace('/', ":"),
                format.display()
            )));
        }
    }
    Ok(())
}

// ---- bpftrace programs ----------------------------------------------------------------------

fn loop_code(n: &str, cap: u64) -> String {
    format!(
        "$x = args->sector; $i = 0;\n  while ($i < {n} && $i < {cap}) {{ $x = $x * 6364136223846793005 + 1442695040888963407; $i++; }}\n  if ($x == 1) {{ @sink = count(); }}"
    )
}

/// The program that finds the scheduler lock: contended acquisitions per (lock, stack), for
/// `seconds`.
pub fn find_lock_program(seconds: u64) -> String {
    format!("tracepoint:lock:contention_begin {{ @c[args->lock_addr, kstack(6)] = count(); }}\ninterval:s:{seconds} {{ exit(); }}\n")
}

/// The verification and calibration program: at both sites on device `dev` (the kernel's
/// `dev_t`), hits and hits with each candidate lock's word held; at the outside site, one
/// request in 32 times the calibration loop and an empty `nsecs` pair.
pub fn verify_program(dev: u64, addrs: &[u64], seconds: u64) -> String {
    let held = |site: u32| -> String {
        addrs
            .iter()
            .enumerate()
            .map(|(i, a)| {
                format!("  if (*(uint8*){a:#x} != 0) {{ @held[{site}, {i}] = count(); }}\n")
            })
            .collect()
    };
    format!(
        "tracepoint:block:block_rq_insert /args->dev == {dev}/ {{\n  @hits[0] = count();\n{}}}\n\
tracepoint:block:block_getrq /args->dev == {dev}/ {{\n  @hits[1] = count();\n{}  if ((args->sector / 8) % 32 == 0) {{\n    $x = args->sector; $i = 0;\n    $t0 = nsecs;\n    while ($i < {CAL_ITERS}) {{ $x = $x * 6364136223846793005 + 1442695040888963407; $i++; }}\n    $t1 = nsecs;\n    $t2 = nsecs;\n    @cal_loop = min($t1 - $t0); @cal_empty = min($t2 - $t1);\n    @cal_loop_avg = avg($t1 - $t0); @cal_empty_avg = avg($t2 - $t1);\n    if ($x == 1) {{ @sink = count(); }}\n  }}\n}}\n\
interval:s:{seconds} {{ exit(); }}\n",
        held(0),
        held(1)
    )
}

/// The injection program: phases of [`PHASE_MS`], `iters[i]` loop iterations for cost `i`,
/// `cycles` cycles per cost (module documentation).
pub fn inject_program(dev: u64, iters: &[u64], cycles: usize) -> String {
    let cap = iters.iter().copied().max().unwrap_or(0) + 1;
    let total = iters.len() * cycles * 3;
    let n = iters.len();
    let choose: String = iters
        .iter()
        .enumerate()
        .map(|(i, it)| format!("  if ($ci == {i}) {{ $iters = {it}; }}\n"))
        .collect();
    format!(
        "BEGIN {{ @seq = 0; @in = 0; @out = 0; @t[0] = nsecs; @ph[0] = 0; }}\n\
tracepoint:block:block_getrq /args->dev == {dev}/ {{\n  @n[@seq] = count();\n  $n = @out;\n  {}\n}}\n\
tracepoint:block:block_rq_insert /args->dev == {dev}/ {{\n  $n = @in;\n  {}\n}}\n\
interval:ms:{PHASE_MS} {{\n  @seq = @seq + 1; $seq = (uint64)@seq;\n  @t[$seq] = nsecs;\n  if ($seq >= {total}) {{ exit(); }}\n\
  $cycle = $seq / 3; $pos = $seq % 3; $ci = $cycle % {n}; $swap = ($cycle / {n}) % 2;\n  $iters = 0;\n{choose}\
  if ($pos == 0) {{ @in = 0; @out = 0; @ph[$seq] = $ci; }}\n\
  else {{ if (($pos == 1) == ($swap == 0)) {{ @in = $iters; @out = 0; @ph[$seq] = 100 + $ci; }} else {{ @in = 0; @out = $iters; @ph[$seq] = 200 + $ci; }} }}\n}}\n",
        loop_code("$n", cap),
        loop_code("$n", cap)
    )
}

// ---- parsers ------------------------------------------------------------------------------------

/// Every map of a bpftrace `-f json` output, by name (the last printing of each).
fn bpftrace_maps(text: &str) -> Result<BTreeMap<String, serde_json::Value>, ExperimentError> {
    let mut maps = BTreeMap::new();
    for (i, line) in text.lines().enumerate() {
        let line = line.trim();
        if !line.starts_with('{') {
            continue;
        }
        let v: serde_json::Value = serde_json::from_str(line)
            .map_err(|e| failed(format!("bpftrace output line {}: {e}", i + 1)))?;
        if matches!(v.get("type").and_then(|t| t.as_str()), Some("map") | Some("stats")) {
            if let Some(obj) = v.get("data").and_then(|d| d.as_object()) {
                for (k, val) in obj {
                    maps.insert(k.clone(), val.clone());
                }
            }
        }
    }
    Ok(maps)
}

/// The scheduler's lock addresses in a [`find_lock_program`] output: every address one of whose
/// contended callers is a function of BFQ, most contended first.
pub fn parse_lock_addrs(text: &str) -> Result<Vec<u64>, ExperimentError> {
    let maps = bpftrace_maps(text)?;
    let mut by_addr: BTreeMap<u64, u64> = BTreeMap::new();
    if let Some(c) = maps.get("@c").and_then(|c| c.as_object()) {
        for (key, count) in c {
            let Some((addr, stack)) = key.split_once(',') else { continue };
            let Ok(addr) = u64::from_str_radix(addr.trim().trim_start_matches("0x"), 16) else {
                continue;
            };
            if stack
                .lines()
                .map(|l| l.trim().split('+').next().unwrap_or(""))
                .any(|f| f.starts_with("bfq_") || f.starts_with("bfqq_"))
            {
                let slot = by_addr.entry(addr).or_default();
                *slot = slot.checked_add(count.as_u64().unwrap_or(0)).ok_or_else(|| {
                    failed(format!("@c: the counts of lock {addr:#x} add up past {}", u64::MAX))
                })?;
            }
        }
    }
    let mut v: Vec<(u64, u64)> = by_addr.into_iter().collect();
    v.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
    Ok(v.into_iter().map(|(a, _)| a).collect())
}

/// What the verification found.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Verification {
    /// The scheduler lock's address (the candidate held at the inside site most often).
    pub lock_addr: u64,
    pub inside_hits: u64,
    pub inside_held: u64,
    pub outside_hits: u64,
    pub outside_held: u64,
    /// The calibration loop's shortest time and the empty `nsecs` pair's, ns.
    pub cal_loop_ns: u64,
    pub cal_empty_ns: u64,
    /// Their means (interrupts included), ns.
    pub cal_loop_avg_ns: u64,
    pub cal_empty_avg_ns: u64,
}

impl Verification {
    pub fn inside_held_frac(&self) -> f64 {
        self.inside_held as f64 / self.inside_hits.max(1) as f64
    }

    pub fn outside_held_frac(&self) -> f64 {
        self.outside_held as f64 / self.outside_hits.max(1) as f64
    }

    /// The loop's cost per iteration, ns.
    pub fn ns_per_iter(&self) -> f64 {
        self.cal_loop_ns.saturating_sub(self.cal_empty_ns) as f64 / CAL_ITERS as f64
    }

    /// Whether the sites are what they claim: the inside site sees the lock held on at least 99 %
    /// of its hits, the outside one on at most half; and the loop calibrated.
    pub fn check(&self) -> Result<(), ExperimentError> {
        if self.inside_hits == 0 || self.outside_hits == 0 {
            return Err(failed(format!(
                "the sites saw no I/O of the device (inside {} hits, outside {})",
                self.inside_hits, self.outside_hits
            )));
        }
        if self.inside_held_frac() < 0.99 {
            return Err(failed(format!("block_rq_insert saw BFQ's lock held on {:.1} % of its hits (99 % needed): it is not inside the lock on this kernel", 100.0 * self.inside_held_frac())));
        }
        if self.outside_held_frac() > 0.5 {
            return Err(failed(format!("block_getrq saw BFQ's lock held on {:.1} % of its hits: it is not outside the lock on this kernel", 100.0 * self.outside_held_frac())));
        }
        if self.ns_per_iter() <= 0.0 {
            return Err(failed("the calibration loop measured no time"));
        }
        Ok(())
    }
}

/// Reads a [`verify_program`] output for `addrs`.
pub fn parse_verification(text: &str, addrs: &[u64]) -> Result<Verification, ExperimentError> {
    let maps = bpftrace_maps(text)?;
    let get =
        |m: &str, k: &str| maps.get(m).and_then(|v| v.get(k)).and_then(|v| v.as_u64()).unwrap_or(0);
    let scalar = |m: &str| {
        maps.get(m).and_then(|v| v.as_u64().or_else(|| v.get("average").and_then(|a| a.as_u64())))
    };
    let best = (0..addrs.len())
        .max_by_key(|i| (get("@held", &format!("0,{i}")), std::cmp::Reverse(*i)))
        .ok_or_else(|| failed("no candidate lock address"))?;
    Ok(Verification {
        lock_addr: addrs[best],
        inside_hits: get("@hits", "0"),
        inside_held: get("@held", &format!("0,{best}")),
        outside_hits: get("@hits", "1"),
        outside_held: get("@held", &format!("1,{best}")),
        cal_loop_ns: scalar("@cal_loop")
            .ok_or_else(|| failed("no calibration in the verification output"))?,
        cal_empty_ns: scalar("@cal_empty").unwrap_or(0),
        cal_loop_avg_ns: scalar("@cal_loop_avg").unwrap_or(0),
        cal_empty_avg_ns: scalar("@cal_empty_avg").unwrap_or(0),
    })
}

/// What was injected in a phase.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum PhaseKind {
    Nothing,
    Inside,
    Outside,
}

/// One phase of an injection run.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct Phase {
    pub seq: u64,
    pub kind: PhaseKind,
    /// Index into the costs.
    pub cost: usize,
    /// Submissions counted.
    pub ios: u64,
    pub duration_s: f64,
}

/// The phases of an [`inject_program`] output: every phase with a start and an end (the one
/// running at exit is left out), in order.
pub fn parse_phases(text: &str) -> Result<Vec<Phase>, ExperimentError> {
    let maps = bpftrace_maps(text)?;
    let by_seq = |m: &str| -> Result<BTreeMap<u64, u64>, ExperimentError> {
        let obj = maps
            .get(m)
            .and_then(|v| v.as_object())
            .ok_or_else(|| failed(format!("bpftrace output has no {m} map")))?;
        obj.iter()
            .map(|(k, v)| {
                Ok((
                    k.parse::<u64>().map_err(|_| failed(format!("{m}: bad key `{k}`")))?,
                    v.as_u64().ok_or_else(|| failed(format!("{m}[{k}]: not a count")))?,
                ))
            })
            .collect()
    };
    let n = by_seq("@n").unwrap_or_default();
    let t = by_seq("@t")?;
    let ph = by_seq("@ph")?;
    let mut out = Vec::new();
    for (&seq, &code) in &ph {
        let Some(next) = seq.checked_add(1) else { continue };
        let (Some(&start), Some(&end)) = (t.get(&seq), t.get(&next)) else { continue };
        let kind = match code / 100 {
            0 => PhaseKind::Nothing,
            1 => PhaseKind::Inside,
            2 => PhaseKind::Outside,
            _ => return Err(failed(format!("@ph[{seq}] = {code}: not a phase code"))),
        };
        if end <= start {
            return Err(failed(format!("phase {seq} ends before it starts")));
        }
        out.push(Phase {
            seq,
            kind,
            cost: (code % 100) as usize,
            ios: n.get(&seq).copied().unwrap_or(0),
            duration_s: (end - start) as f64 / 1e9,
        });
    }
    Ok(out)
}

/// One cycle's three phases: (I/Os, seconds) with nothing, inside, outside.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct Cycle {
    pub cost: usize,
    pub nothing: (u64, f64),
    pub inside: (u64, f64),
    pub outside: (u64, f64),
}

impl Cycle {
    pub fn ratio(&self) -> f64 {
        rate(self.inside) / rate(self.outside)
    }
}

fn rate((n, s): (u64, f64)) -> f64 {
    if s > 0.0 {
        n as f64 / s
    } else {
        0.0
    }
}

/// The complete cycles (three consecutive phases of one cost, one of each kind).
pub fn cycles(phases: &[Phase]) -> Vec<Cycle> {
    let by_seq: BTreeMap<u64, &Phase> = phases.iter().map(|p| (p.seq, p)).collect();
    let mut out = Vec::new();
    for p in phases.iter().filter(|p| p.seq % 3 == 0) {
        let (Some(a), Some(b)) = (by_seq.get(&(p.seq + 1)), by_seq.get(&(p.seq + 2))) else {
            continue;
        };
        let three = [p, *a, *b];
        let of = |k: PhaseKind| three.iter().find(|q| q.kind == k).map(|q| (q.ios, q.duration_s));
        if three.iter().any(|q| q.cost != p.cost) {
            continue;
        }
        if let (Some(nothing), Some(inside), Some(outside)) =
            (of(PhaseKind::Nothing), of(PhaseKind::Inside), of(PhaseKind::Outside))
        {
            out.push(Cycle { cost: p.cost, nothing, inside, outside });
        }
    }
    out
}

/// A ratio with its 95 % interval.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct Interval {
    pub value: f64,
    pub lo: f64,
    pub hi: f64,
}

impl Interval {
    pub fn excludes(&self, x: f64) -> bool {
        x < self.lo || x > self.hi
    }
}

/// `f` over the sums of `cycles`, and a bootstrap 95 % percentile interval over cycles (fixed
/// seed: the same cycles give the same interval).
fn bootstrap(cycles: &[Cycle], f: impl Fn(&[&Cycle]) -> f64) -> Option<Interval> {
    if cycles.is_empty() {
        return None;
    }
    let all: Vec<&Cycle> = cycles.iter().collect();
    let value = f(&all);
    let mut rng = rand::rngs::SmallRng::seed_from_u64(32);
    let mut est: Vec<f64> = (0..RESAMPLES)
        .map(|_| {
            let pick: Vec<&Cycle> =
                (0..cycles.len()).map(|_| &cycles[rng.random_range(0..cycles.len())]).collect();
            f(&pick)
        })
        .filter(|v| v.is_finite())
        .collect();
    if est.is_empty() {
        return None;
    }
    Some(Interval { value, lo: quantile(&mut est, 0.025), hi: quantile(&mut est, 0.975) })
}

fn pooled(cs: &[&Cycle], pick: impl Fn(&Cycle) -> (u64, f64)) -> f64 {
    // The counts are summed as floats: a rate needs no exact count, and a float sum of
    // bpftrace's counts (a resample repeats a cycle) cannot wrap as a u64 sum could (issue 43).
    let (n, s) = cs.iter().fold((0.0f64, 0.0), |(n, s), c| {
        let (a, b) = pick(c);
        (n + a as f64, s + b)
    });
    if s > 0.0 {
        n / s
    } else {
        0.0
    }
}

/// Inside ÷ outside throughput over `cycles` (ratio of the pooled rates), with its interval.
pub fn ratio_interval(cycles: &[Cycle]) -> Option<Interval> {
    bootstrap(cycles, |cs| pooled(cs, |c| c.inside) / pooled(cs, |c| c.outside))
}

/// One cost's kernel figures.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct KernelCost {
    pub cost_ns: u64,
    pub iterations: u64,
    pub cycles: usize,
    pub iops_nothing: f64,
    pub iops_inside: f64,
    pub iops_outside: f64,
    /// Inside ÷ outside, with its interval.
    pub ratio: Option<Interval>,
    /// Inside ÷ nothing and outside ÷ nothing.
    pub inside_vs_nothing: Option<Interval>,
    pub outside_vs_nothing: Option<Interval>,
    /// The per-cycle ratios' median.
    pub cycle_ratio_median: f64,
}

/// Per cost, from the cycles of a run.
pub fn kernel_costs(costs_ns: &[u64], iters: &[u64], cycles_all: &[Cycle]) -> Vec<KernelCost> {
    costs_ns
        .iter()
        .enumerate()
        .map(|(i, &cost_ns)| {
            let cs: Vec<Cycle> = cycles_all.iter().filter(|c| c.cost == i).copied().collect();
            let refs: Vec<&Cycle> = cs.iter().collect();
            KernelCost {
                cost_ns,
                iterations: iters.get(i).copied().unwrap_or(0),
                cycles: cs.len(),
                iops_nothing: pooled(&refs, |c| c.nothing),
                iops_inside: pooled(&refs, |c| c.inside),
                iops_outside: pooled(&refs, |c| c.outside),
                ratio: ratio_interval(&cs),
                inside_vs_nothing: bootstrap(&cs, |cs| {
                    pooled(cs, |c| c.inside) / pooled(cs, |c| c.nothing)
                }),
                outside_vs_nothing: bootstrap(&cs, |cs| {
                    pooled(cs, |c| c.outside) / pooled(cs, |c| c.nothing)
                }),
                cycle_ratio_median: if cs.is_empty() {
                    f64::NAN
                } else {
                    median(&cs.iter().map(Cycle::ratio).collect::<Vec<_>>())
                },
            }
        })
        .collect()
}

/// Least-squares slope of `y` against `x` (None with fewer than two distinct x).
pub fn slope(points: &[(f64, f64)]) -> Option<f64> {
    let n = points.len() as f64;
    if points.len() < 2 {
        return None;
    }
    let mx = points.iter().map(|p| p.0).sum::<f64>() / n;
    let my = points.iter().map(|p| p.1).sum::<f64>() / n;
    let sxx: f64 = points.iter().map(|p| (p.0 - mx).powi(2)).sum();
    (sxx > 0.0).then(|| points.iter().map(|p| (p.0 - mx) * (p.1 - my)).sum::<f64>() / sxx)
}

// ---- the model's rows ----------------------------------------------------------------------------

/// One cost's model figures: KIOPS of the inside and outside runs per round and their ratio.
#[derive(Clone, Debug, Serialize)]
pub struct ModelCost {
    pub cost_ns: u64,
    pub kiops_inside: Vec<f64>,
    pub kiops_outside: Vec<f64>,
    /// Per round inside ÷ outside (the two runs back to back): median, and min..max as interval.
    pub ratio: Option<Interval>,
}

/// The slopes: throughput lost per µs of cost (fraction of the nothing phase's), and the ratio's.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct Slopes {
    pub inside_per_us: Option<f64>,
    pub outside_per_us: Option<f64>,
    pub ratio_per_us: Option<f64>,
}

/// The experiment's environment and figures.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct InjectKernel {
    pub verification: Verification,
    pub ns_per_iter: f64,
    /// The device's IOPS with nothing attached (its own counters), before and after.
    pub iops_unattached_before: Option<f64>,
    pub iops_unattached_after: Option<f64>,
    pub costs: Vec<KernelCost>,
    pub phases: Vec<Phase>,
    pub slopes: Slopes,
}

impl InjectKernel {
    /// What the attached program costs: 100 × (1 − the nothing phases' IOPS ÷ the unattached
    /// IOPS, before and after averaged).
    pub fn probe_cost_pct(&self) -> Option<f64> {
        let un: Vec<f64> = [self.iops_unattached_before, self.iops_unattached_after]
            .into_iter()
            .flatten()
            .collect();
        let nothing = {
            let cs: Vec<Cycle> = cycles(&self.phases);
            pooled(&cs.iter().collect::<Vec<_>>(), |c| c.nothing)
        };
        (!un.is_empty() && nothing > 0.0)
            .then(|| 100.0 * (1.0 - nothing / (un.iter().sum::<f64>() / un.len() as f64)))
    }
}

/// One row of the side-by-side table.
#[derive(Clone, Debug, Serialize)]
pub struct InjectRow {
    pub cost_ns: u64,
    pub kernel: Option<Interval>,
    pub model: Option<Interval>,
    /// The model's ratio inside the kernel's interval.
    pub model_within: Option<bool>,
}

/// The report of `schedlab kernel --inject`.
#[derive(Clone, Debug, Serialize)]
pub struct InjectReport {
    pub provenance: Provenance,
    pub kernel_release: String,
    pub device: String,
    pub config: KernelSettings,
    pub inject: InjectConfig,
    pub model_entry: &'static str,
    pub model_outside_ns: u64,
    /// Machine load (1-minute average) before and after.
    pub load_before: Option<f64>,
    pub load_after: Option<f64>,
    pub kernel: Option<InjectKernel>,
    pub model: Vec<ModelCost>,
    pub model_slopes: Slopes,
    pub side_by_side: Vec<InjectRow>,
    /// The seeds' experiment judged against its controls ([`judge`]).
    pub judgement: InjectJudgement,
    pub warnings: Vec<String>,
    /// What failed (exit 4), each told on stderr as well.
    pub failures: Vec<String>,
    /// `--inject-raw` files that could not be written (exit 3), each told on stderr as well.
    pub output_failures: Vec<String>,
    pub interrupted: bool,
}

fn loadavg() -> Option<f64> {
    std::fs::read_to_string("/proc/loadavg").ok()?.split_whitespace().next()?.parse().ok()
}

/// Completed I/Os of a block device so far (`/sys/block/<name>/stat`: reads + writes).
fn device_ios(device: &Path) -> Option<u64> {
    use std::os::unix::fs::MetadataExt;
    let num = system::DevNum::of_rdev(std::fs::metadata(device).ok()?.rdev());
    let stat = std::fs::read_to_string(num.sys_dir().join("stat")).ok()?;
    let f: Vec<u64> = stat.split_whitespace().filter_map(|x| x.parse().ok()).collect();
    Some(f.first()? + f.get(4)?)
}

/// The kernel's `dev_t` of a block device (`MAJOR << 20 | MINOR`, as tracepoints give it).
fn kernel_dev(device: &Path) -> Result<u64, ExperimentError> {
    use std::os::unix::fs::MetadataExt;
    let metadata = std::fs::metadata(device);
    let rdev = metadata.map_err(|e| failed(format!("{}: {e}", device.display())))?.rdev();
    Ok(((libc::major(rdev) as u64) << 20) | libc::minor(rdev) as u64)
}

/// Runs a bpftrace program that exits by itself; its stdout. Killed when `stop` is set or after
/// `limit`.
fn bpftrace_run(
    program: &str,
    limit: Duration,
    stop: &AtomicBool,
) -> Result<Option<String>, ExperimentError> {
    let mut cmd = Command::new("bpftrace");
    cmd.args(["-f", "json", "-e", program])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    system::ChildSetup::new(&[])?.apply(&mut cmd);
    std::os::unix::process::CommandExt::process_group(&mut cmd, 0);
    let mut child = cmd.spawn().map_err(|e| failed(format!("cannot start bpftrace: {e}")))?;
    let mut stdout = child.stdout.take().ok_or_else(|| failed("bpftrace has no stdout"))?;
    let mut stderr = child.stderr.take().ok_or_else(|| failed("bpftrace has no stderr"))?;
    let out = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = stdout.read_to_string(&mut s);
        s
    });
    let err = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = stderr.read_to_string(&mut s);
        s
    });
    let status = system::wait_bounded(&mut child, limit, Some(stop));
    let text = out.join().unwrap_or_default();
    let err = err.join().unwrap_or_default();
    match status {
        Some(s) if s.success() => Ok(Some(text)),
        Some(s) => {
            let line = err
                .lines()
                .find(|l| l.contains("ERROR") || l.contains("rror"))
                .unwrap_or_else(|| err.lines().next().unwrap_or(""))
                .trim()
                .to_string();
            Err(failed(format!("bpftrace failed ({s}): {line}")))
        }
        None if stop.load(Ordering::Relaxed) => Ok(None),
        None => Err(failed(format!("bpftrace did not finish within {} s", limit.as_secs()))),
    }
}

/// Runs `schedlab kernel --inject` (module documentation).
pub fn run(
    cfg: &KernelSettings,
    icfg: &InjectConfig,
    stop: &AtomicBool,
    observer: &mut dyn Observer,
) -> Result<InjectReport, ExperimentError> {
    icfg.validate()?;
    // `--model-from` is read and checked before the work (exit 2 on anything amiss).
    let mut resolved = icfg.clone();
    if let Some(file) = &icfg.model_from_file {
        let text = crate::files::input::read_input(
            file,
            "kernel report",
            crate::files::input::caps::MODEL_JSON,
            stop,
        )?;
        let model_from = model_from_report(file, &text, cfg.threads, cfg.iodepth);
        resolved.model_from = Some(model_from.map_err(|e| ExperimentError::bad_input(e.message))?);
    }
    if let Some(file) = &icfg.kernel_from_file {
        let text = crate::files::input::read_input(
            file,
            "kernel report",
            crate::files::input::caps::MODEL_JSON,
            stop,
        )?;
        let recorded =
            recorded_kernel_from_report(file, &text, cfg.threads, cfg.iodepth, &icfg.costs_ns);
        resolved.kernel_from = Some(recorded.map_err(|e| ExperimentError::bad_input(e.message))?);
    }
    let icfg = &resolved;
    let mut warnings: Vec<String> = Vec::new();
    let mut failures: Vec<String> = Vec::new();
    let load_before = loadavg();
    let model_runs = if cfg.model { icfg.costs_ns.len() * 2 * cfg.rounds } else { 0 };
    let kernel_s = if icfg.kernel_from.is_some() { 0.0 } else { icfg.phases_s() + 30.0 };
    let steps = 5 + model_runs;
    let estimated_s = kernel_s + model_runs as f64 * (cfg.duration + cfg.ramp).as_secs_f64();
    observer.event(Event::Planned { steps, estimated_s });
    let mut interrupted = false;
    let mut output_failures = Vec::new();
    let (kernel, device_text, model_outside_ns) = match &icfg.kernel_from {
        Some(recorded) => {
            warnings.push(recorded.note());
            let outside = given_outside_ns(cfg, icfg).unwrap_or(recorded.model_outside_ns);
            (Some(recorded.kernel.clone()), recorded.device.clone(), outside)
        }
        None => {
            let m = measure_kernel_half(
                cfg,
                icfg,
                stop,
                observer,
                &mut warnings,
                &mut failures,
                &mut output_failures,
                &mut interrupted,
            )?;
            (m.kernel, m.device, m.model_outside_ns)
        }
    };

    // The model half: per cost, inside and outside back to back, `rounds` times.
    let mut model = Vec::new();
    if cfg.model && !interrupted {
        let mut done = 5;
        'costs: for &cost_ns in &icfg.costs_ns {
            let mut mc = ModelCost {
                cost_ns,
                kiops_inside: Vec::new(),
                kiops_outside: Vec::new(),
                ratio: None,
            };
            for round in 0..cfg.rounds {
                let order = if round % 2 == 0 {
                    InjectSite::ALL
                } else {
                    [InjectSite::Outside, InjectSite::Inside]
                };
                for at in order {
                    if stop.load(Ordering::Relaxed) {
                        interrupted = true;
                        break 'costs;
                    }
                    let label = format!(
                        "model {MODEL_ENTRY}: {cost_ns} ns {} (round {}/{})",
                        at.name(),
                        round + 1,
                        cfg.rounds
                    );
                    observer.event(Event::Step { done, label: &label });
                    done += 1;
                    let wc = WorkloadConfig {
                        inject: Inject { ns: cost_ns, at },
                        ..model_config(cfg, model_outside_ns, icfg.model_from.as_ref())
                    };
                    match workload::run_named(MODEL_ENTRY, &wc, stop) {
                        Ok(r) if r.interrupted => {
                            interrupted = true;
                            break 'costs;
                        }
                        Ok(r) => match at {
                            InjectSite::Inside => mc.kiops_inside.push(r.kiops),
                            InjectSite::Outside => mc.kiops_outside.push(r.kiops),
                        },
                        Err(e) => failures.push(format!("model {cost_ns} ns {}: {e}", at.name())),
                    }
                }
            }
            let per_round: Vec<f64> = mc
                .kiops_inside
                .iter()
                .zip(&mc.kiops_outside)
                .filter(|(_, o)| **o > 0.0)
                .map(|(i, o)| i / o)
                .collect();
            if !per_round.is_empty() {
                let lo = per_round.iter().copied().fold(f64::INFINITY, f64::min);
                let hi = per_round.iter().copied().fold(f64::NEG_INFINITY, f64::max);
                mc.ratio = Some(Interval { value: median(&per_round), lo, hi });
            }
            model.push(mc);
        }
    }
    observer.event(Event::Finished);
    let model_slopes = model_slopes(&model);
    let side_by_side: Vec<InjectRow> = icfg
        .costs_ns
        .iter()
        .map(|&cost_ns| {
            let k = kernel
                .as_ref()
                .and_then(|k| k.costs.iter().find(|c| c.cost_ns == cost_ns))
                .and_then(|c| c.ratio);
            let m = model.iter().find(|m| m.cost_ns == cost_ns).and_then(|m| m.ratio);
            InjectRow {
                cost_ns,
                kernel: k,
                model: m,
                model_within: k.zip(m).map(|(k, m)| !k.excludes(m.value)),
            }
        })
        .collect();
    if let Some(k) = &kernel {
        if let Some(p) = k.probe_cost_pct() {
            if p > 25.0 {
                warnings.push(format!("the attached program cost {p:.0} % of the device's IOPS (it is attached in every phase, so the ratios compare like with like)"));
            }
        }
    }
    for w in &warnings {
        observer.event(Event::Warning(w));
    }
    // Said on stderr (the text lists them too): a non-zero exit says why.
    for f in failures.iter().chain(&output_failures) {
        observer.event(Event::Failure(f));
    }
    let judgement = judge(&side_by_side, kernel.as_ref(), &model_slopes, cfg.threads);
    Ok(InjectReport {
        provenance: Provenance::collect(),
        kernel_release: match &icfg.kernel_from {
            Some(recorded) => recorded.kernel_release.clone(),
            None => std::fs::read_to_string("/proc/sys/kernel/osrelease")
                .unwrap_or_default()
                .trim()
                .to_string(),
        },
        device: device_text,
        config: cfg.clone(),
        inject: icfg.clone(),
        model_entry: MODEL_ENTRY,
        model_outside_ns,
        load_before,
        load_after: loadavg(),
        kernel,
        model,
        model_slopes,
        side_by_side,
        judgement,
        warnings,
        failures,
        output_failures,
        interrupted,
    })
}

/// The model's outside work per request when it is given (`--model-from`'s, or
/// `--model-outside-ns`), not taken from a kernel half.
fn given_outside_ns(cfg: &KernelSettings, icfg: &InjectConfig) -> Option<u64> {
    icfg.model_from.as_ref().map(|m| m.outside_ns).or(cfg.model_outside_ns)
}

/// The kernel half measured here, and what the model half takes from it.
struct MeasuredHalf {
    kernel: Option<InjectKernel>,
    /// The device, in words.
    device: String,
    /// The model's outside work per request, ns (`--model-from`'s, or from the kernel's IOPS).
    model_outside_ns: u64,
}

/// Measures the kernel half on this machine: sets the device and cgroups up, runs the injection
/// and puts everything back. A set-up error or bad input ends the experiment; a failure of the
/// kernel half itself is in `failures` and leaves the model half to run.
#[allow(clippy::too_many_arguments)]
fn measure_kernel_half(
    cfg: &KernelSettings,
    icfg: &InjectConfig,
    stop: &AtomicBool,
    observer: &mut dyn Observer,
    warnings: &mut Vec<String>,
    failures: &mut Vec<String>,
    output_failures: &mut Vec<String>,
    interrupted: &mut bool,
) -> Result<MeasuredHalf, ExperimentError> {
    let system::Preflight { cgroup_io, device: block_device } =
        system::preflight(cfg.groups > 0, true, cfg.device.as_deref())?;
    check_tracepoints(Path::new("/sys/kernel/tracing"))?;
    // A --device is held for the whole run (`kernel::run` says why).
    let device_lock = block_device.as_ref().map(system::lock_device).transpose()?;
    let held: Vec<system::DevNum> = device_lock.iter().map(|l| l.device).collect();
    let (_, problems) = system::cleanup_stale(&held);
    warnings.extend(problems.into_iter().map(|p| format!("clean-up of an earlier run: {p}")));
    // The cgroup names this run will make: someone else's there is refused before the work.
    if let (Some(io), true) = (&cgroup_io, cfg.groups > 0) {
        system::cgroup_names_free(io)?;
    }

    let mut ledger = system::Ledger::create()?;
    let mut device_text = String::new();
    let setup = (|| -> Result<(PathBuf, Option<system::Cgroups>), ExperimentError> {
        let (device, num, loop_backing) = match &block_device {
            Some(d) => {
                device_text = d.given.display().to_string();
                (d.node.clone(), d.num, None)
            }
            None => {
                let dev = system::make_loop_device(&mut ledger, cfg.size_bytes)?;
                device_text = format!(
                    "{} over a sparse {} MiB file in {}",
                    dev.device.display(),
                    cfg.size_bytes >> 20,
                    system::TMPFS_DIR
                );
                (dev.device, dev.num, Some(dev.backing_id))
            }
        };
        let queue = num.queue();
        system::record_queue_state(&mut ledger, num, loop_backing)?;
        let shown = device.display();
        std::fs::write(queue.join("scheduler"), "bfq")
            .map_err(|e| failed(format!("cannot switch {shown} to bfq: {e}")))?;
        for (knob, value) in [("slice_idle", "0"), ("low_latency", "0")] {
            std::fs::write(queue.join("iosched").join(knob), value)
                .map_err(|e| failed(format!("cannot set {knob}: {e}")))?;
        }
        let cgroups = match (&cgroup_io, cfg.groups) {
            (Some(io), g) if g > 0 => Some(system::make_cgroups(&mut ledger, io, g, &cfg.weights)?),
            _ => None,
        };
        Ok((device, cgroups))
    })();
    let (device, cgroups) = match setup {
        Ok(v) => v,
        Err(e) => {
            drop(ledger);
            return Err(system::setup_failed(e));
        }
    };

    // The kernel half; its error ends the kernel half, not the report.
    let mut model_outside_ns = given_outside_ns(cfg, icfg).unwrap_or(0);
    let (outside, failed) = (&mut model_outside_ns, output_failures);
    let cgroups = cgroups.as_ref();
    let kernel =
        kernel_half(cfg, icfg, &device, cgroups, &mut ledger, stop, observer, outside, failed);
    let kernel = match kernel {
        Ok(Some(k)) => Some(k),
        Ok(None) => {
            *interrupted = true;
            None
        }
        Err(e) if e.kind == crate::error::ErrorKind::BadInput => {
            drop(ledger);
            return Err(e);
        }
        Err(e) => {
            failures.push(format!("kernel: {e}"));
            None
        }
    };
    for p in ledger.undo_all() {
        failures.push(format!("clean-up: {p}"));
    }
    // Released only once the device's setting is put back.
    drop(device_lock);
    Ok(MeasuredHalf { kernel, device: device_text, model_outside_ns })
}

fn model_config(cfg: &KernelSettings, outside_ns: u64, from: Option<&ModelFrom>) -> WorkloadConfig {
    WorkloadConfig {
        elevator_ns: from.map_or(0, |m| m.elevator_ns),
        pads: from.map_or(schedlab_core::SitePads::NONE, |m| m.pads),
        threads: cfg.threads,
        duration: cfg.duration,
        ramp: cfg.ramp,
        lock: cfg.model_lock,
        groups: cfg.groups,
        weights: cfg.weights.clone(),
        rw: cfg.rw,
        bs_sectors: cfg.bs_sectors,
        iodepth: cfg.iodepth,
        outside_ns,
        slice_idle_ns: 0,
        kernel: cfg.model_kernel,
        completion: cfg.model_completion,
        // As the kernel peer's model rows: jobs beyond the CPUs take turns, switching between
        // requests (`driver::turns`).
        preemption: Preemption::BetweenRequests,
        ..WorkloadConfig::default()
    }
}

fn model_slopes(model: &[ModelCost]) -> Slopes {
    let Some(zero) = model.iter().find(|m| m.cost_ns == 0) else { return Slopes::default() };
    let base: Vec<f64> = zero.kiops_inside.iter().chain(&zero.kiops_outside).copied().collect();
    if base.is_empty() {
        return Slopes::default();
    }
    let base = median(&base);
    let pts = |f: &dyn Fn(&ModelCost) -> Option<f64>| -> Vec<(f64, f64)> {
        model.iter().filter_map(|m| f(m).map(|y| (m.cost_ns as f64 / 1e3, y))).collect()
    };
    let med = |v: &[f64]| (!v.is_empty()).then(|| median(v));
    Slopes {
        inside_per_us: slope(&pts(&|m| med(&m.kiops_inside).map(|k| k / base))),
        outside_per_us: slope(&pts(&|m| med(&m.kiops_outside).map(|k| k / base))),
        ratio_per_us: slope(&pts(&|m| m.ratio.map(|r| r.value))),
    }
}

/// How close the model's slope must be to the kernel's: |model − kernel| ≤ this share of |kernel|
/// (issue 40, item 6).
pub const SLOPE_BAND: f64 = 0.25;

/// One judged figure of the injection experiment.
#[derive(Clone, Debug, Serialize)]
pub struct JudgedFigure {
    /// `inside ÷ outside at 2000 ns`, `inside slope`, `outside slope`.
    pub figure: String,
    pub kernel: Option<f64>,
    pub model: Option<f64>,
    /// The null model's figure: a lock-free machine where the cost only adds CPU time per I/O.
    pub null: Option<f64>,
    pub band: String,
    pub verdict: Verdict,
}

/// The seeds' experiment as a judged figure (issue 40, item 6): at every injected cost, the
/// model's inside ÷ outside within the kernel's interval; the model's inside and outside slopes
/// within [`SLOPE_BAND`] of the kernel's. Each beside a null model that has no lock: where the
/// cost is spent cannot matter to it (ratio 1.0 at every cost), and a cost of x µs on a CPU-bound
/// job of t µs per I/O leaves t ÷ (t + x) of its throughput, both sites alike, with t = jobs ÷
/// the kernel's nothing-phase IOPS (fitted to the kernel's throughput, never to a ratio or slope).
/// A figure is evidence only where the model is within and the null model is not.
#[derive(Clone, Debug, Default, Serialize)]
pub struct InjectJudgement {
    /// The null model's CPU time per I/O per job, µs.
    pub null_us_per_io: Option<f64>,
    pub figures: Vec<JudgedFigure>,
    /// Figures where the model is within and the null model is not.
    pub evidence: usize,
    /// Figures judged (neither side missing).
    pub judged: usize,
}

impl InjectJudgement {
    pub fn summary_line(&self) -> String {
        format!(
            "{} of {} judged figures where the model is within and the null model is not",
            self.evidence, self.judged
        )
    }
}

/// The null model's throughput share at `cost_us` for a CPU-bound job of `t_us` per I/O.
fn null_share(t_us: f64, cost_us: f64) -> f64 {
    t_us / (t_us + cost_us)
}

/// Judges the side-by-side rows and the slopes (see [`InjectJudgement`]).
pub fn judge(
    rows: &[InjectRow],
    kernel: Option<&InjectKernel>,
    model_slopes: &Slopes,
    jobs: usize,
) -> InjectJudgement {
    let nothing_iops = kernel.and_then(|k| {
        let v: Vec<f64> = k.costs.iter().map(|c| c.iops_nothing).filter(|i| *i > 0.0).collect();
        (!v.is_empty()).then(|| median(&v))
    });
    let t_us = nothing_iops.map(|iops| jobs as f64 * 1e6 / iops);
    let mut figures = Vec::new();
    for row in rows.iter().filter(|r| r.cost_ns > 0) {
        let figure = format!("inside ÷ outside at {} ns", row.cost_ns);
        let null = 1.0;
        let verdict = match (row.kernel, row.model) {
            (Some(k), Some(m)) if k.excludes(m.value) => Verdict::Outside,
            (Some(k), Some(_)) if !k.excludes(null) => {
                Verdict::ControlWithin { control: "null model" }
            }
            (Some(_), Some(_)) => Verdict::Evidence,
            _ => Verdict::NotJudged { why: "a side has no ratio".into() },
        };
        figures.push(JudgedFigure {
            figure,
            kernel: row.kernel.map(|k| k.value),
            model: row.model.map(|m| m.value),
            null: Some(null),
            band: "the kernel's 95 % interval".into(),
            verdict,
        });
    }
    let costs_us: Vec<f64> = rows.iter().map(|r| r.cost_ns as f64 / 1e3).collect();
    let null_slope = t_us
        .and_then(|t| slope(&costs_us.iter().map(|&x| (x, null_share(t, x))).collect::<Vec<_>>()));
    let ks = kernel.map(|k| k.slopes.clone()).unwrap_or_default();
    let within = |k: f64, v: f64| (v - k).abs() <= SLOPE_BAND * k.abs();
    for (name, k, m) in [
        ("inside slope (per µs)", ks.inside_per_us, model_slopes.inside_per_us),
        ("outside slope (per µs)", ks.outside_per_us, model_slopes.outside_per_us),
    ] {
        let verdict = match (k, m) {
            (Some(k), Some(m)) if !within(k, m) => Verdict::Outside,
            (Some(k), Some(_)) if null_slope.is_some_and(|n| within(k, n)) => {
                Verdict::ControlWithin { control: "null model" }
            }
            (Some(_), Some(_)) => Verdict::Evidence,
            _ => Verdict::NotJudged { why: "a side has no slope (fewer than two costs)".into() },
        };
        figures.push(JudgedFigure {
            figure: name.into(),
            kernel: k,
            model: m,
            null: null_slope,
            band: format!("within {:.0} % of the kernel's", SLOPE_BAND * 100.0),
            verdict,
        });
    }
    let judged = figures.iter().filter(|f| !matches!(f.verdict, Verdict::NotJudged { .. })).count();
    let evidence = figures.iter().filter(|f| f.verdict == Verdict::Evidence).count();
    InjectJudgement { null_us_per_io: t_us, figures, evidence, judged }
}

/// The files `--inject-raw` receives (declared before any work by the CLI).
pub const RAW_FILES: [&str; 3] = ["lock.json", "verify.json", "phases.json"];

/// Keeps a raw bpftrace output in `--inject-raw`, written as every output is
/// (`files::output`: atomically, symlinks kept); one that cannot be written is a failed output
/// (exit 3: the user asked for it), the run goes on (the report has the figures).
fn keep_raw(icfg: &InjectConfig, name: &str, text: &str, failed: &mut Vec<String>) {
    if let Some(dir) = &icfg.raw_dir {
        let _ = std::fs::create_dir_all(dir);
        let path = dir.join(name);
        if let Err(e) =
            crate::files::output::OutputFile::check(&path).and_then(|o| o.write(text.as_bytes()))
        {
            failed.push(format!("--inject-raw {name} not kept: {e}"));
        }
    }
}

/// The kernel half: fio started once; the unattached rate; the lock found; the sites verified
/// and the loop calibrated; the phases; the unattached rate again. `None` when stopped. A bad
/// input error is a kernel that cannot serve (no lock found, sites not verified).
#[allow(clippy::too_many_arguments)]
fn kernel_half(
    cfg: &KernelSettings,
    icfg: &InjectConfig,
    device: &Path,
    cgroups: Option<&system::Cgroups>,
    ledger: &mut system::Ledger,
    stop: &AtomicBool,
    observer: &mut dyn Observer,
    model_outside_ns: &mut u64,
    raw_failures: &mut Vec<String>,
) -> Result<Option<InjectKernel>, ExperimentError> {
    let dev = kernel_dev(device)?;
    const WINDOW: Duration = Duration::from_secs(2);
    let find_s = 3u64;
    let verify_s = 3u64;
    let fio_s = (icfg.phases_s() + 4.0 * WINDOW.as_secs_f64() + (find_s + verify_s) as f64 + 60.0)
        .ceil() as u64;
    // One long fio run: one process per group of jobs.
    let groups: Vec<Option<&Path>> = match cgroups {
        Some(cg) if !cg.groups.is_empty() => cg.groups.iter().map(|g| Some(g.as_path())).collect(),
        _ => vec![None],
    };
    let mut counts = vec![0usize; groups.len()];
    for i in 0..cfg.threads {
        counts[i % groups.len()] += 1;
    }
    let accounting = cgroups.and_then(|c| c.accounting.clone());
    let mut children = Vec::new();
    for (g, &n) in groups.iter().zip(&counts) {
        if n == 0 {
            continue;
        }
        let mut job = super::fio::FioJob {
            rw: cfg.rw,
            bs_bytes: cfg.bs_sectors as u64 * 512,
            iodepth: cfg.iodepth,
            numjobs: n,
            runtime: Duration::from_secs(fio_s),
            ramp: Duration::ZERO,
            ioengine: cfg.ioengine,
            region: None,
        };
        job.region = None;
        let mut cmd = Command::new("fio");
        cmd.args(job.args(device, "bfq-inject"))
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null());
        let joins: Vec<&Path> = g.iter().copied().chain(accounting.as_deref()).collect();
        let setup = system::ChildSetup::new(&joins)?;
        setup.apply(&mut cmd);
        std::os::unix::process::CommandExt::process_group(&mut cmd, 0);
        let child = cmd.spawn().map_err(|e| failed(format!("cannot start fio: {e}")))?;
        // Recorded (pid and start time), so that a clean-up after a SIGKILL may signal it.
        let pid = child.id();
        children.push(child);
        ledger.record_process(pid)?;
    }
    let result = (|| -> Result<Option<InjectKernel>, ExperimentError> {
        let unattached = |stop: &AtomicBool| -> Option<(f64, Option<f64>)> {
            let (a, busy_a, t0) = (
                device_ios(device)?,
                crate::driver::host::machine_busy_steal_s().map(|b| b.0),
                Instant::now(),
            );
            if !sleep_until(t0 + WINDOW, stop) {
                return None;
            }
            let (b, busy_b) =
                (device_ios(device)?, crate::driver::host::machine_busy_steal_s().map(|b| b.0));
            let ios = b.saturating_sub(a) as f64;
            Some((
                ios / t0.elapsed().as_secs_f64(),
                busy_a.zip(busy_b).filter(|_| ios > 0.0).map(|(x, y)| (y - x) * 1e9 / ios),
            ))
        };
        observer.event(Event::Step {
            done: 0,
            label: "kernel: fio started, the rate with nothing attached",
        });
        // Let fio ramp up, then measure the rate with nothing attached.
        if !sleep_until(Instant::now() + Duration::from_millis(500), stop) {
            return Ok(None);
        }
        // fio's job processes, recorded as fio is: now, and again after the next steps (on a
        // loaded machine they may start later).
        let pids: Vec<u32> = children.iter().map(|c| c.id()).collect();
        let mut record_jobs = || -> Result<(), ExperimentError> {
            for &pid in &pids {
                for (job, _) in system::descendants(pid) {
                    ledger.record_process(job)?;
                }
            }
            Ok(())
        };
        record_jobs()?;
        let before = unattached(stop);
        record_jobs()?;
        if stop.load(Ordering::Relaxed) {
            return Ok(None);
        }
        // NOTE: the kernel peer's rows spin the kernel's CPU time per I/O from /proc/stat; on a
        // machine shared with other work that counts theirs too. Here the model's job spends
        // per request what a kernel job took per I/O with nothing attached (jobs ÷ IOPS), so
        // that both start from the same rate per job.
        if let (None, None, Some((iops, _))) = (cfg.model_outside_ns, &icfg.model_from, before) {
            if iops > 0.0 {
                *model_outside_ns = (cfg.threads as f64 * 1e9 / iops).round() as u64;
            }
        }
        observer.event(Event::Step {
            done: 1,
            label: "kernel: finding BFQ's lock (lock:contention_begin)",
        });
        let Some(text) =
            bpftrace_run(&find_lock_program(find_s), Duration::from_secs(find_s + 60), stop)?
        else {
            return Ok(None);
        };
        keep_raw(icfg, "lock.json", &text, raw_failures);
        record_jobs()?;
        let mut addrs = parse_lock_addrs(&text)?;
        if addrs.is_empty() {
            return Err(ExperimentError::bad_input(format!("no contended lock with a caller in bfq_* in {find_s} s of I/O: BFQ's lock cannot be found (more --threads contend it)")));
        }
        addrs.truncate(4);
        observer.event(Event::Step {
            done: 2,
            label: "kernel: verifying the sites, calibrating the loop",
        });
        let Some(text) = bpftrace_run(
            &verify_program(dev, &addrs, verify_s),
            Duration::from_secs(verify_s + 60),
            stop,
        )?
        else {
            return Ok(None);
        };
        keep_raw(icfg, "verify.json", &text, raw_failures);
        let verification = parse_verification(&text, &addrs)?;
        verification.check().map_err(|e| ExperimentError::bad_input(e.message))?;
        let ns_per_iter = verification.ns_per_iter();
        let iters: Vec<u64> =
            icfg.costs_ns.iter().map(|&c| (c as f64 / ns_per_iter).round() as u64).collect();
        observer.event(Event::Step {
            done: 3,
            label: &format!(
                "kernel: {} phases of {PHASE_MS} ms",
                icfg.costs_ns.len() * icfg.cycles * 3
            ),
        });
        let limit = Duration::from_secs_f64(icfg.phases_s() * 2.0 + 60.0);
        let Some(text) = bpftrace_run(&inject_program(dev, &iters, icfg.cycles), limit, stop)?
        else {
            return Ok(None);
        };
        keep_raw(icfg, "phases.json", &text, raw_failures);
        let phases = parse_phases(&text)?;
        observer
            .event(Event::Step { done: 4, label: "kernel: the rate with nothing attached, again" });
        let after = unattached(stop);
        let all = cycles(&phases);
        let costs = kernel_costs(&icfg.costs_ns, &iters, &all);
        let pts = |f: &dyn Fn(&KernelCost) -> Option<f64>| -> Vec<(f64, f64)> {
            costs.iter().filter_map(|c| f(c).map(|y| (c.cost_ns as f64 / 1e3, y))).collect()
        };
        let slopes = Slopes {
            inside_per_us: slope(&pts(&|c| c.inside_vs_nothing.map(|r| r.value))),
            outside_per_us: slope(&pts(&|c| c.outside_vs_nothing.map(|r| r.value))),
            ratio_per_us: slope(&pts(&|c| c.ratio.map(|r| r.value))),
        };
        Ok(Some(InjectKernel {
            verification,
            ns_per_iter,
            iops_unattached_before: before.map(|b| b.0),
            iops_unattached_after: after.map(|a| a.0),
            costs,
            phases,
            slopes,
        }))
    })();
    for c in children.iter_mut() {
        let _ = system::wait_bounded(c, Duration::ZERO, None);
    }
    // Killed and reaped with everything under them: nothing of them to put back.
    let _ = ledger.forget(|c| matches!(c, system::Change::Process { .. }));
    result
}

#[cfg(test)]
mod tests {
    use super::*;

    fn iv(value: f64, lo: f64, hi: f64) -> Interval {
        Interval { value, lo, hi }
    }

    fn kernel_with(costs: &[(u64, f64)], slopes: Slopes) -> InjectKernel {
        InjectKernel {
            verification: Verification::default(),
            ns_per_iter: 1.0,
            iops_unattached_before: None,
            iops_unattached_after: None,
            costs: costs
                .iter()
                .map(|&(cost_ns, iops_nothing)| KernelCost {
                    cost_ns,
                    iterations: 0,
                    cycles: 0,
                    iops_nothing,
                    iops_inside: 0.0,
                    iops_outside: 0.0,
                    ratio: None,
                    inside_vs_nothing: None,
                    outside_vs_nothing: None,
                    cycle_ratio_median: 0.0,
                })
                .collect(),
            phases: Vec::new(),
            slopes,
        }
    }

    /// A recorded `--inject` report's kernel half is read back as it was written, and a report
    /// of other jobs, without a cost asked for, without a kernel half or not a report at all is
    /// refused naming what does not fit.
    #[test]
    fn a_recorded_kernel_half_is_read_back_and_one_that_does_not_fit_is_refused() {
        let mut kernel = kernel_with(
            &[(0, 300.0), (2000, 280.0)],
            Slopes { inside_per_us: Some(-0.1), ..Slopes::default() },
        );
        kernel.costs[0].ratio = Some(iv(1.0, 0.98, 1.02));
        kernel.costs[1].ratio = Some(iv(0.86, 0.83, 0.89));
        kernel.phases.push(Phase {
            seq: 3,
            kind: PhaseKind::Inside,
            cost: 1,
            ios: 1000,
            duration_s: 0.2,
        });
        let report = |threads: u64, kernel: serde_json::Value| {
            serde_json::json!({
                "provenance": { "commit": "abc123", "date": "2026-12-04T22:40:00Z", "cpu_model": "AMD EPYC", "cpus": 2 },
                "kernel_release": "6.18.0", "device": "/dev/loop0", "inject": {},
                "config": { "threads": threads, "iodepth": 32 }, "model_outside_ns": 8000, "kernel": kernel,
            })
            .to_string()
        };
        let file = Path::new("k.json");
        let text = report(4, serde_json::to_value(&kernel).unwrap());
        let r = recorded_kernel_from_report(file, &text, 4, 32, &[0, 2000]).unwrap();
        assert_eq!(
            serde_json::to_value(&r.kernel).unwrap(),
            serde_json::to_value(&kernel).unwrap()
        );
        assert_eq!((r.commit.as_str(), r.cpus, r.model_outside_ns), ("abc123", 2, 8000));
        assert!(r.kernel_release.starts_with("6.18.0 (recorded in k.json"), "{}", r.kernel_release);
        assert!(
            r.note().contains("abc123") && r.note().contains("not measured now"),
            "{}",
            r.note()
        );
        let err = |text: &str, threads, costs: &[u64]| {
            recorded_kernel_from_report(file, text, threads, 32, costs).unwrap_err().message
        };
        assert!(err(&text, 2, &[0]).contains("4 jobs × iodepth 32, not 2 × 32"));
        assert!(err(&text, 4, &[0, 4000]).contains("no kernel ratio at 4000 ns"));
        assert!(err(&report(4, serde_json::Value::Null), 4, &[0]).contains("no kernel half"));
        assert!(
            err("{\"config\": {}}", 4, &[0]).contains("not a schedlab kernel --inject JSON report")
        );
        assert!(err("not json", 4, &[0]).contains("not a schedlab kernel --inject JSON report"));
    }

    /// The kernel half of a report written by this tool before (`notes/results/2026-12-04-softirq`,
    /// 4 jobs) reads back: the recorded form and the reader agree.
    #[test]
    fn the_recorded_four_job_report_of_2026_12_04_reads_back() {
        let file = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../notes/results/2026-12-04-softirq/inject-4.json");
        let text = std::fs::read_to_string(&file).unwrap();
        let r = recorded_kernel_from_report(&file, &text, 4, 32, &[0, 2000, 4000]).unwrap();
        let at_2us =
            r.kernel.costs.iter().find(|c| c.cost_ns == 2000).and_then(|c| c.ratio).unwrap();
        assert!((at_2us.value - 0.859).abs() < 0.001, "{at_2us:?}");
        assert!(r.kernel_release.starts_with("6.18"), "{}", r.kernel_release);
    }

    #[test]
    fn a_ratio_is_evidence_only_where_the_lock_free_null_is_outside() {
        let rows = [
            // The A/A cost is not judged.
            InjectRow {
                cost_ns: 0,
                kernel: Some(iv(1.0, 0.99, 1.01)),
                model: Some(iv(1.0, 1.0, 1.0)),
                model_within: Some(true),
            },
            // The kernel's interval holds 1.0: the null model is within too.
            InjectRow {
                cost_ns: 1000,
                kernel: Some(iv(0.99, 0.97, 1.02)),
                model: Some(iv(0.98, 0.98, 0.98)),
                model_within: Some(true),
            },
            // The kernel's interval excludes 1.0 and holds the model: evidence.
            InjectRow {
                cost_ns: 2000,
                kernel: Some(iv(0.92, 0.89, 0.95)),
                model: Some(iv(0.93, 0.93, 0.93)),
                model_within: Some(true),
            },
            // The model outside.
            InjectRow {
                cost_ns: 4000,
                kernel: Some(iv(0.84, 0.81, 0.87)),
                model: Some(iv(0.95, 0.95, 0.95)),
                model_within: Some(false),
            },
        ];
        let j = judge(&rows, None, &Slopes::default(), 2);
        let verdicts: Vec<&Verdict> = j.figures.iter().map(|f| &f.verdict).collect();
        assert_eq!(verdicts[0], &Verdict::ControlWithin { control: "null model" });
        assert_eq!(verdicts[1], &Verdict::Evidence);
        assert_eq!(verdicts[2], &Verdict::Outside);
        assert!(
            matches!(verdicts[3], Verdict::NotJudged { .. })
                && matches!(verdicts[4], Verdict::NotJudged { .. }),
            "no kernel: no slopes judged"
        );
        assert_eq!((j.evidence, j.judged), (1, 3));
    }

    #[test]
    fn slopes_are_judged_against_a_null_model_that_only_adds_cpu_time() {
        // Two jobs at 200 KIOPS: 10 µs per I/O per job; the null loses 10 ÷ (10 + x) of it.
        let rows: Vec<InjectRow> = [0, 1000, 2000]
            .iter()
            .map(|&cost_ns| InjectRow { cost_ns, kernel: None, model: None, model_within: None })
            .collect();
        let null = slope(&[(0.0, 1.0), (1.0, 10.0 / 11.0), (2.0, 10.0 / 12.0)]).unwrap();
        // The kernel loses what the null model does outside, twice that inside.
        let k = kernel_with(
            &[(0, 200_000.0), (1000, 200_000.0), (2000, 200_000.0)],
            Slopes {
                inside_per_us: Some(2.0 * null),
                outside_per_us: Some(null),
                ratio_per_us: None,
            },
        );
        let model = Slopes {
            inside_per_us: Some(1.9 * null),
            outside_per_us: Some(1.1 * null),
            ratio_per_us: None,
        };
        let j = judge(&rows, Some(&k), &model, 2);
        assert!((j.null_us_per_io.unwrap() - 10.0).abs() < 1e-9);
        let inside = j.figures.iter().find(|f| f.figure.starts_with("inside slope")).unwrap();
        let outside = j.figures.iter().find(|f| f.figure.starts_with("outside slope")).unwrap();
        assert!((inside.null.unwrap() - null).abs() < 1e-12);
        assert_eq!(inside.verdict, Verdict::Evidence, "within 25 % and the null is not");
        assert_eq!(outside.verdict, Verdict::ControlWithin { control: "null model" });
        // A model 30 % off the kernel's slope is outside.
        let far = Slopes {
            inside_per_us: Some(1.3 * 2.0 * null),
            outside_per_us: Some(0.7 * null),
            ratio_per_us: None,
        };
        let j = judge(&rows, Some(&k), &far, 2);
        assert!(j
            .figures
            .iter()
            .filter(|f| f.figure.contains("slope"))
            .all(|f| f.verdict == Verdict::Outside));
        assert_eq!(j.evidence, 0);
    }

    fn phase(seq: u64, kind: PhaseKind, cost: usize, ios: u64) -> Phase {
        Phase { seq, kind, cost, ios, duration_s: 0.2 }
    }

    #[test]
    fn a_missing_tracepoint_is_refused_naming_it() {
        let dir = tempfile::tempdir().unwrap();
        for tp in ["block/block_rq_insert", "lock/contention_begin"] {
            std::fs::create_dir_all(dir.path().join("events").join(tp)).unwrap();
            std::fs::write(dir.path().join("events").join(tp).join("format"), "name: x\n").unwrap();
        }
        let e = check_tracepoints(dir.path()).unwrap_err().message;
        assert!(e.contains("block:block_getrq") && !e.contains('\n'), "{e}");
        std::fs::create_dir_all(dir.path().join("events/block/block_getrq")).unwrap();
        std::fs::write(dir.path().join("events/block/block_getrq/format"), "name: x\n").unwrap();
        assert_eq!(check_tracepoints(dir.path()), Ok(()));
    }

    #[test]
    fn cycles_need_three_phases_of_one_cost_and_one_of_each_kind() {
        let p = vec![
            phase(0, PhaseKind::Nothing, 0, 100),
            phase(1, PhaseKind::Inside, 0, 80),
            phase(2, PhaseKind::Outside, 0, 100),
            phase(3, PhaseKind::Nothing, 1, 100),
            phase(4, PhaseKind::Outside, 1, 90),
            // seq 5 missing: an incomplete cycle is dropped.
        ];
        let c = cycles(&p);
        assert_eq!(c.len(), 1);
        assert!((c[0].ratio() - 0.8).abs() < 1e-12);
    }

    #[test]
    fn the_interval_brackets_the_pooled_ratio_and_excludes_one_when_every_cycle_says_less() {
        let cs: Vec<Cycle> = (0..40)
            .map(|i| Cycle {
                cost: 0,
                nothing: (1000, 0.2),
                inside: (900 + i % 7, 0.2),
                outside: (1000 - i % 5, 0.2),
            })
            .collect();
        let r = ratio_interval(&cs).unwrap();
        assert!(r.lo <= r.value && r.value <= r.hi);
        assert!(r.excludes(1.0), "{r:?}");
        // Equal rates: the interval holds 1.
        let same: Vec<Cycle> = (0..40)
            .map(|i| Cycle {
                cost: 0,
                nothing: (1000, 0.2),
                inside: (998 + i % 5, 0.2),
                outside: (1002 - i % 5, 0.2),
            })
            .collect();
        assert!(!ratio_interval(&same).unwrap().excludes(1.0));
    }

    #[test]
    fn the_slope_of_a_line_is_its_slope() {
        assert!((slope(&[(0.0, 1.0), (1.0, 0.9), (2.0, 0.8)]).unwrap() + 0.1).abs() < 1e-12);
        assert_eq!(slope(&[(1.0, 1.0)]), None);
        assert_eq!(slope(&[(1.0, 1.0), (1.0, 2.0)]), None);
    }

    #[test]
    fn the_programs_name_the_device_and_the_iterations() {
        let p = inject_program(7 << 20, &[0, 460, 1840], 10);
        assert!(p.contains("/args->dev == 7340032/"));
        assert!(p.contains("$iters = 1840;") && p.contains("$i < 1841"));
        assert!(p.contains(&format!("if ($seq >= {}) {{ exit(); }}", 3 * 10 * 3)));
        let v = verify_program(7 << 20, &[0xffff8881048694b8], 3);
        assert!(v.contains("*(uint8*)0xffff8881048694b8"));
    }
}
