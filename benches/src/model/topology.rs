//! The CPU topology profile: the simulation's machine. A JSON file (serde), or measured here.
//!
//! ```json
//! {
//!   "name": "i7-4850HQ (the seeds' machine)",
//!   "cores": 4,
//!   "threads_per_core": 2,
//!   "transfer": { "sibling_ns": 12, "core_ns": 40 },
//!   "smt": { "busy_slowdown": 1.6, "spin_slowdown": 1.1 },
//!   "parking": { "pause_ns": 3.5, "yield_ns": 250, "wake_latency_ns": 5000, "unpark_cost_ns": 1500 },
//!   "compute_scale": 1.0,
//!   "interruptions": { "rate_per_s": 480, "durations_ns": [1100, 1800, 17000, 21000] },
//!   "source": ["why each figure is what it is"]
//! }
//! ```
//!
//! | field | meaning |
//! | --- | --- |
//! | `cores`, `threads_per_core` | logical CPU *i* is hardware thread *i / cores* of core *i % cores* (Linux's numbering on Intel: 0–3 the cores' first threads, 4–7 their siblings); thread *i* of the workload runs on CPU *i*, so up to `cores` threads have a core each |
//! | `transfer.sibling_ns`, `transfer.core_ns` | one cache line moving, one way, between two hyperthreads of one core / two cores |
//! | `smt.busy_slowdown` | how much longer a piece of work takes while the sibling hyperthread works too (1: no SMT effect) |
//! | `smt.spin_slowdown` | the same while the sibling spins on `pause` |
//! | `parking.*` | parking_lot's costs: one `pause`, one `sched_yield` with nothing else to run, from a futex wake to the woken thread running, and the wake call itself on the waker |
//! | `compute_scale` | multiplies every calibrated length: the target's time for work that took 1 ns on the calibration machine |
//! | `interruptions` (optional) | how often a running CPU is taken away from the workload for longer than [`INTERRUPTION_THRESHOLD_NS`] (timer ticks, the hypervisor, other processes), per second, and for how long: equally likely lengths, each interruption draws one. Absent: none (the simulation is then strictly periodic where the workload is, and may lock into one of two steady states; notes/predict.md) |
//!
//! [`measure_here`] fills a profile of this machine: cores and siblings from sysfs, transfers by
//! ping-pong ([`super::probes`]), the parking costs by their microbenchmarks.

use super::probes;
pub use super::probes::{Interruptions, INTERRUPTION_THRESHOLD_NS};
use crate::driver::host::allowed_cpus;
use crate::error::ExperimentError;
use crate::files::input::{caps, read_input};
use schedlab_core::sync::AtomicBool;
use serde::{Deserialize, Serialize};

/// One-way line transfers.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Transfer {
    pub sibling_ns: f64,
    pub core_ns: f64,
    /// What a FIFO hand-off to a waiter spinning on another CPU takes beyond one line transfer,
    /// ns: the releaser's store must first take the line back from the spinning reader, and the
    /// waiter notices between its pauses. 0 (the default): one transfer, as an uncontended pull.
    /// Two jobs whose lock phases meet drift apart only when this is longer than the gaps
    /// between their holds (notes/results/2026-12-05-phases.md). Not measured by `predict`'s own
    /// probes yet: set in a profile, from `benches/examples/phases.rs`.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub handoff_extra_ns: f64,
}

fn is_zero(x: &f64) -> bool {
    *x == 0.0
}

/// Hyperthreading's effect on a thread's speed.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Smt {
    pub busy_slowdown: f64,
    pub spin_slowdown: f64,
}

/// parking_lot's costs on this machine.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Parking {
    pub pause_ns: f64,
    pub yield_ns: f64,
    pub wake_latency_ns: f64,
    pub unpark_cost_ns: f64,
}

/// A machine for the simulation (module documentation).
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Topology {
    pub name: String,
    pub cores: usize,
    pub threads_per_core: usize,
    pub transfer: Transfer,
    pub smt: Smt,
    pub parking: Parking,
    #[serde(default = "one")]
    pub compute_scale: f64,
    /// Interruptions of a running CPU; `None`: none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub interruptions: Option<Interruptions>,
    /// Where each figure comes from.
    #[serde(default)]
    pub source: Vec<String>,
}

fn one() -> f64 {
    1.0
}

/// Largest accepted values (a typo of a few orders of magnitude is refused, not simulated).
const MAX_CPUS: usize = 1024;
const MAX_NS: f64 = 1e8;

impl Topology {
    /// A made machine, not a measured one: `cores` cores without SMT, `transfer_ns` per line
    /// between any two CPUs, a 5 ns pause, a `sched_yield` that takes no time (so that a ticket
    /// waiter's yields never delay a hand-off: the textbook FIFO lock), a 5 µs wake-up and a 1 µs
    /// wake call, no interruptions. For where the lock discipline is the point: the simulation's
    /// tests (with [`super::calibrate::Calibration::one_lock`]).
    pub fn textbook(cores: usize, transfer_ns: f64) -> Topology {
        Topology {
            name: "test".into(),
            cores,
            threads_per_core: 1,
            transfer: Transfer {
                sibling_ns: transfer_ns,
                core_ns: transfer_ns,
                handoff_extra_ns: 0.0,
            },
            smt: Smt { busy_slowdown: 1.0, spin_slowdown: 1.0 },
            parking: Parking {
                pause_ns: 5.0,
                yield_ns: 0.0,
                wake_latency_ns: 5000.0,
                unpark_cost_ns: 1000.0,
            },
            compute_scale: 1.0,
            interruptions: None,
            source: Vec::new(),
        }
    }

    /// Logical CPUs.
    pub fn cpus(&self) -> usize {
        self.cores * self.threads_per_core
    }

    /// The core of logical CPU `cpu`.
    pub fn core_of(&self, cpu: usize) -> usize {
        cpu % self.cores.max(1)
    }

    /// The other hyperthreads of `cpu`'s core.
    pub fn siblings(&self, cpu: usize) -> impl Iterator<Item = usize> + '_ {
        let core = self.core_of(cpu);
        (0..self.threads_per_core).map(move |t| t * self.cores + core).filter(move |&c| c != cpu)
    }

    /// One line from `from` to `to`, ns (0 on the same CPU).
    pub fn transfer(&self, from: usize, to: usize) -> f64 {
        if from == to {
            0.0
        } else if self.core_of(from) == self.core_of(to) {
            self.transfer.sibling_ns
        } else {
            self.transfer.core_ns
        }
    }

    /// This machine with another transfer between cores, `core_ns`, measured by `how`: the
    /// placement a virtual machine's host gave its vCPUs while some runs ran (the same cores,
    /// sharing a cache or not: notes/results/2026-12-04-placement.md). Siblings keep theirs
    /// (a hyperthread pair is one core wherever the host puts it).
    pub fn with_core_transfer(&self, core_ns: f64, how: &str) -> Topology {
        let mut there = self.clone();
        there.transfer.core_ns = core_ns;
        if self.threads_per_core == 1 {
            // No hyperthread pair: the profile sets siblings to the cores' figure, never used.
            there.transfer.sibling_ns = core_ns;
        }
        there.name = format!("{} in another placement ({core_ns:.0} ns between cores)", self.name);
        there.source.retain(|s| !s.starts_with("transfer.core_ns"));
        there.source.push(format!("transfer.core_ns: {core_ns:.1} ns, {how}"));
        there
    }

    /// Checks the figures; the message is one line.
    pub fn validate(&self) -> Result<(), ExperimentError> {
        if self.cores == 0 || self.cores > MAX_CPUS {
            return Err(ExperimentError::bad_input(format!(
                "cores must be 1..={MAX_CPUS}, got {}",
                self.cores
            )));
        }
        if !(1..=8).contains(&self.threads_per_core) || self.cpus() > MAX_CPUS {
            return Err(ExperimentError::bad_input(format!("threads_per_core must be 1..=8 and cores × threads_per_core at most {MAX_CPUS}, got {}", self.threads_per_core)));
        }
        let ns = [
            ("transfer.sibling_ns", self.transfer.sibling_ns),
            ("transfer.core_ns", self.transfer.core_ns),
            ("parking.pause_ns", self.parking.pause_ns),
            ("parking.yield_ns", self.parking.yield_ns),
            ("parking.wake_latency_ns", self.parking.wake_latency_ns),
            ("parking.unpark_cost_ns", self.parking.unpark_cost_ns),
        ];
        for (name, v) in ns {
            if !(v.is_finite() && (0.0..=MAX_NS).contains(&v)) {
                return Err(ExperimentError::bad_input(format!(
                    "{name} must be a time in 0..={MAX_NS} ns, got {v}"
                )));
            }
        }
        for (name, v) in [
            ("smt.busy_slowdown", self.smt.busy_slowdown),
            ("smt.spin_slowdown", self.smt.spin_slowdown),
        ] {
            if !(v.is_finite() && (1.0..=10.0).contains(&v)) {
                return Err(ExperimentError::bad_input(format!("{name} must be 1..=10, got {v}")));
            }
        }
        if !(self.compute_scale.is_finite() && (0.01..=100.0).contains(&self.compute_scale)) {
            return Err(ExperimentError::bad_input(format!(
                "compute_scale must be 0.01..=100, got {}",
                self.compute_scale
            )));
        }
        if self.parking.pause_ns <= 0.0 {
            return Err(ExperimentError::bad_input("parking.pause_ns must be more than 0"));
        }
        if let Some(i) = &self.interruptions {
            if !(i.rate_per_s.is_finite() && (0.0..=1e6).contains(&i.rate_per_s)) {
                return Err(ExperimentError::bad_input(format!(
                    "interruptions.rate_per_s must be 0..=1000000, got {}",
                    i.rate_per_s
                )));
            }
            if i.rate_per_s > 0.0 && i.durations_ns.is_empty() {
                return Err(ExperimentError::bad_input("interruptions.durations_ns must list at least one length when rate_per_s is more than 0"));
            }
            if i.durations_ns.len() > 1024 {
                return Err(ExperimentError::bad_input(format!(
                    "interruptions.durations_ns: at most 1024 lengths, got {}",
                    i.durations_ns.len()
                )));
            }
            if let Some(d) =
                i.durations_ns.iter().find(|d| !(d.is_finite() && (0.0..=MAX_NS).contains(*d)))
            {
                return Err(ExperimentError::bad_input(format!(
                    "interruptions.durations_ns must be times in 0..={MAX_NS} ns, got {d}"
                )));
            }
        }
        Ok(())
    }

    /// Reads and checks a profile; the error is one line naming the file.
    pub fn load(path: &std::path::Path) -> Result<Topology, ExperimentError> {
        Self::load_until(path, &AtomicBool::new(false))
    }

    /// [`Topology::load`], giving way to `stop` while it reads (`files::input`): bad input, or
    /// stopped.
    pub fn load_until(
        path: &std::path::Path,
        stop: &AtomicBool,
    ) -> Result<Topology, ExperimentError> {
        let text = read_input(path, "topology", caps::MODEL_JSON, stop)?;
        let bad = |m: String| ExperimentError::bad_input(m);
        let t: Topology =
            crate::files::stop::parse_json_until(path, "a topology profile", text, stop)?;
        t.validate().map_err(|e| bad(format!("{}: {e}", path.display())))?;
        Ok(t)
    }
}

/// This machine's cores and hyperthreads from sysfs (`thread_siblings_list`): (cores, threads
/// per core) over the allowed CPUs. Falls back to one thread per core.
pub fn cores_here() -> (usize, usize) {
    let cpus = allowed_cpus();
    let mut per_core: Vec<Vec<usize>> = Vec::new();
    for &c in &cpus {
        let path = format!("/sys/devices/system/cpu/cpu{c}/topology/thread_siblings_list");
        let siblings = std::fs::read_to_string(path).unwrap_or_else(|_| c.to_string());
        // An unreadable or malformed list: the CPU counts as a core of its own.
        let key: Vec<usize> = parse_cpu_list(siblings.trim()).unwrap_or_else(|_| vec![c]);
        if !per_core.contains(&key) {
            per_core.push(key);
        }
    }
    let cores = per_core.len().max(1);
    let threads = (cpus.len() / cores).max(1);
    (cores, threads)
}

/// The largest CPU number a CPU list may name: far above any kernel's `NR_CPUS` (8192), far below
/// what a list of every number up to it would cost (a sysfs file is read, but a range must not be
/// able to allocate without bound: issue 43, item 3).
pub const MAX_CPU_ID: usize = 65_535;

/// Why a kernel CPU list was refused: the part named.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum CpuListError {
    /// A part that is not a CPU number.
    NotANumber(String),
    /// A CPU past [`MAX_CPU_ID`].
    PastTheLargest(usize),
    /// A range whose end is below its start.
    Reversed(String),
    /// More CPUs than [`MAX_CPU_ID`] + 1 in all.
    TooMany,
}

impl std::fmt::Display for CpuListError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            CpuListError::NotANumber(part) => write!(f, "`{part}` is not a CPU number"),
            CpuListError::PastTheLargest(cpu) => {
                write!(f, "CPU {cpu} is past the largest CPU number {MAX_CPU_ID}")
            }
            CpuListError::Reversed(part) => write!(f, "`{part}` is a reversed range"),
            CpuListError::TooMany => write!(f, "the list names more than {} CPUs", MAX_CPU_ID + 1),
        }
    }
}

/// A kernel CPU list (`0-3,8,10-11`): the CPUs in order of the list. Anything else is an error
/// naming the part: a number that is not one, a reversed range, or a CPU past [`MAX_CPU_ID`].
fn parse_cpu_list(s: &str) -> Result<Vec<usize>, CpuListError> {
    let number = |t: &str| -> Result<usize, CpuListError> {
        let t = t.trim();
        let v: usize = t.parse().map_err(|_| CpuListError::NotANumber(t.to_string()))?;
        if v > MAX_CPU_ID {
            return Err(CpuListError::PastTheLargest(v));
        }
        Ok(v)
    };
    let mut out = Vec::new();
    for part in s.split(',') {
        match part.split_once('-') {
            Some((a, b)) => {
                let (a, b) = (number(a)?, number(b)?);
                if b < a {
                    return Err(CpuListError::Reversed(part.trim().to_string()));
                }
                out.extend(a..=b);
            }
            None => out.push(number(part)?),
        }
        // Each part is bounded, but many of them are not: the whole list is as bounded.
        if out.len() > MAX_CPU_ID + 1 {
            return Err(CpuListError::TooMany);
        }
    }
    Ok(out)
}

/// Two CPUs, by number.
type CpuPair = (usize, usize);

/// A sibling pair and a cross-core pair among the allowed CPUs, if there are such.
fn pairs_here() -> (Option<CpuPair>, Option<CpuPair>) {
    let cpus = allowed_cpus();
    let siblings_of = |c: usize| {
        let path = format!("/sys/devices/system/cpu/cpu{c}/topology/thread_siblings_list");
        parse_cpu_list(std::fs::read_to_string(path).unwrap_or_default().trim()).unwrap_or_default()
    };
    let mut sibling = None;
    let mut core = None;
    for &a in &cpus {
        let sib = siblings_of(a);
        for &b in &cpus {
            if a == b {
                continue;
            }
            if sib.contains(&b) {
                sibling.get_or_insert((a, b));
            } else {
                core.get_or_insert((a, b));
            }
        }
    }
    (sibling, core)
}

/// Measures this machine's profile (a few seconds). `transfer_core_ns`: a cross-core transfer
/// already measured (by the caller, at the same moment as a calibration), used as is. A stop ends
/// each probe early (the caller checks `stop` and discards the profile).
pub fn measure_here(transfer_core_ns: Option<f64>, stop: &AtomicBool) -> Topology {
    let (cores, threads_per_core) = cores_here();
    let (sibling_pair, core_pair) = pairs_here();
    let mut source = Vec::new();
    let core_ns = match (transfer_core_ns, core_pair) {
        (Some(t), _) => {
            source.push(format!(
                "transfer.core_ns: {t:.1} ns, ping-pong measured with the calibration"
            ));
            t
        }
        (None, Some((a, b))) => match probes::transfer_between(a, b, probes::TRIALS, stop) {
            Some(s) => {
                source.push(format!(
                    "transfer.core_ns: ping-pong between CPUs {a} and {b}, least of {} trials",
                    s.trials_ns.len()
                ));
                s.one_way_ns
            }
            None => 0.0,
        },
        (None, None) => {
            source.push("transfer.core_ns: 0 (a single core: nothing to measure)".into());
            0.0
        }
    };
    let sibling_ns = match sibling_pair
        .and_then(|(a, b)| probes::transfer_between(a, b, probes::TRIALS, stop))
    {
        Some(s) => {
            source.push(format!(
                "transfer.sibling_ns: ping-pong between siblings {} and {}",
                s.cpu_a, s.cpu_b
            ));
            s.one_way_ns
        }
        None => {
            source.push("transfer.sibling_ns: no hyperthread pair here; set to transfer.core_ns (never used)".into());
            core_ns
        }
    };
    let pair = core_pair.or(sibling_pair);
    let wake =
        pair.and_then(|(a, b)| probes::wake(a, b, 200, std::time::Duration::from_micros(30), stop));
    let (wake_latency_ns, unpark_cost_ns) = match &wake {
        Some(w) => {
            source.push(format!(
                "parking.wake_latency_ns, unpark_cost_ns: {} futex waits woken after 30 µs asleep (std park/unpark), medians",
                w.trials
            ));
            (w.wake_latency_ns, w.unpark_cost_ns)
        }
        None => {
            source.push(
                "parking.wake_latency_ns, unpark_cost_ns: not measurable with one CPU; 0".into(),
            );
            (0.0, 0.0)
        }
    };
    let pause_ns = probes::pause_ns();
    let yield_ns = probes::yield_ns();
    source.push(
        "parking.pause_ns, yield_ns: medians of timed loops of spin_loop() and yield_now()".into(),
    );
    source.push(format!(
        "smt: {}",
        if threads_per_core > 1 {
            "not measured here: 1.6 / 1.1 assumed (see the seeds' profile for the reasoning)"
        } else {
            "no hyperthreads here: 1 / 1"
        }
    ));
    let smt = if threads_per_core > 1 {
        Smt { busy_slowdown: 1.6, spin_slowdown: 1.1 }
    } else {
        Smt { busy_slowdown: 1.0, spin_slowdown: 1.0 }
    };
    let measured_on: Vec<usize> = allowed_cpus().into_iter().take(2).collect();
    let interruptions = probes::interruptions(&measured_on, probes::INTERRUPTION_WINDOW, stop);
    source.push(format!(
        "interruptions: gaps over {INTERRUPTION_THRESHOLD_NS} ns in a clock-reading loop pinned to CPU(s) {measured_on:?}, {} ms each: {:.0} per second, lengths the {} quantiles",
        probes::INTERRUPTION_WINDOW.as_millis(),
        interruptions.rate_per_s,
        interruptions.durations_ns.len()
    ));
    Topology {
        name: format!(
            "this machine: {} ({} cores × {} threads)",
            crate::files::provenance::Provenance::collect().cpu_model,
            cores,
            threads_per_core
        ),
        cores,
        threads_per_core,
        transfer: Transfer { sibling_ns, core_ns, handoff_extra_ns: 0.0 },
        smt,
        parking: Parking { pause_ns, yield_ns, wake_latency_ns, unpark_cost_ns },
        compute_scale: 1.0,
        interruptions: Some(interruptions),
        source,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn laptop() -> Topology {
        Topology {
            name: "t".into(),
            cores: 4,
            threads_per_core: 2,
            transfer: Transfer { sibling_ns: 10.0, core_ns: 40.0, handoff_extra_ns: 0.0 },
            smt: Smt { busy_slowdown: 1.6, spin_slowdown: 1.1 },
            parking: Parking {
                pause_ns: 4.0,
                yield_ns: 200.0,
                wake_latency_ns: 5000.0,
                unpark_cost_ns: 1000.0,
            },
            compute_scale: 1.0,
            interruptions: None,
            source: vec![],
        }
    }

    #[test]
    fn linux_numbering_puts_siblings_cores_apart() {
        let t = laptop();
        assert_eq!(t.cpus(), 8);
        assert_eq!(t.siblings(1).collect::<Vec<_>>(), vec![5]);
        assert_eq!(t.siblings(6).collect::<Vec<_>>(), vec![2]);
        assert_eq!(t.transfer(1, 5), 10.0);
        assert_eq!(t.transfer(1, 2), 40.0);
        assert_eq!(t.transfer(3, 3), 0.0);
        assert!(t.validate().is_ok());
    }

    #[test]
    fn bad_profiles_are_refused_with_one_line() {
        let mut t = laptop();
        t.cores = 0;
        assert!(t.validate().unwrap_err().message.contains("cores"));
        let mut t = laptop();
        t.transfer.core_ns = f64::NAN;
        assert!(t.validate().unwrap_err().message.contains("transfer.core_ns"));
        let mut t = laptop();
        t.smt.busy_slowdown = 0.5;
        assert!(t.validate().unwrap_err().message.contains("busy_slowdown"));
        let e = serde_json::from_str::<Topology>("{\"name\": \"x\", \"cores\": 2}")
            .unwrap_err()
            .to_string();
        assert!(e.contains("missing field"), "{e}");
        let mut t = laptop();
        t.interruptions = Some(Interruptions { rate_per_s: 300.0, durations_ns: vec![] });
        assert!(t.validate().unwrap_err().message.contains("durations_ns"));
        t.interruptions =
            Some(Interruptions { rate_per_s: 300.0, durations_ns: vec![2e3, f64::INFINITY] });
        assert!(t.validate().unwrap_err().message.contains("durations_ns"));
        t.interruptions = Some(Interruptions { rate_per_s: -1.0, durations_ns: vec![2e3] });
        assert!(t.validate().unwrap_err().message.contains("rate_per_s"));
        t.interruptions = Some(Interruptions { rate_per_s: 300.0, durations_ns: vec![2e3, 2e4] });
        assert!(t.validate().is_ok());
        assert_eq!(parse_cpu_list("0-2,5"), Ok(vec![0, 1, 2, 5]));
    }

    #[test]
    fn a_cpu_list_is_bounded_and_malformed_ones_are_refused() {
        assert_eq!(parse_cpu_list("7"), Ok(vec![7]));
        assert_eq!(parse_cpu_list(" 0-1 , 4 "), Ok(vec![0, 1, 4]));
        assert_eq!(parse_cpu_list(&format!("0-{MAX_CPU_ID}")).map(|v| v.len()), Ok(MAX_CPU_ID + 1));
        for (list, words) in [
            ("0-4294967295", "past the largest"),
            ("0-99999999999", "past the largest"),
            ("0-18446744073709551616", "not a CPU number"),
            ("5-2", "reversed"),
            ("x", "not a CPU number"),
            ("1-", "not a CPU number"),
            ("", "not a CPU number"),
            ("0--3", "not a CPU number"),
        ] {
            let e = parse_cpu_list(list).unwrap_err().to_string();
            assert!(e.contains(words), "{list}: {e}");
        }
        // Many bounded parts still cannot name more than the bound.
        let many = vec![format!("0-{MAX_CPU_ID}"); 3].join(",");
        assert_eq!(parse_cpu_list(&many), Err(CpuListError::TooMany));
        assert_eq!(CpuListError::TooMany.to_string(), "the list names more than 65536 CPUs");
    }

    // Moved here from probes.rs (was measure.rs), which no longer imports the topology.
    #[test]
    fn interruptions_are_gaps_over_the_threshold_in_order_at_most_the_quantiles_kept() {
        // Whatever the machine does meanwhile (a loaded one sees more gaps, a quiet one fewer):
        // every length kept is a gap over the threshold, in order, at most the quantiles kept,
        // and the rate is a finite rate, 0 with no gap.
        let cpus: Vec<usize> = allowed_cpus().into_iter().take(2).collect();
        let seen = probes::interruptions(
            &cpus,
            std::time::Duration::from_millis(20),
            &AtomicBool::new(false),
        );
        assert!(seen.rate_per_s.is_finite() && seen.rate_per_s >= 0.0, "{seen:?}");
        assert!(seen.durations_ns.len() <= probes::INTERRUPTION_QUANTILES, "{seen:?}");
        assert!(seen.durations_ns.iter().all(|&d| d > INTERRUPTION_THRESHOLD_NS), "{seen:?}");
        assert!(seen.durations_ns.windows(2).all(|w| w[0] <= w[1]), "{seen:?}");
        assert_eq!(seen.rate_per_s == 0.0, seen.durations_ns.is_empty(), "{seen:?}");
        // The profile accepts what was measured.
        let seeds = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../notes/topology/i7-4850hq.json");
        let mut topo = Topology::load(&seeds).expect("the seeds' profile");
        topo.interruptions = Some(seen);
        assert!(topo.validate().is_ok());
    }
}
