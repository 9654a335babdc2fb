//! The microbenchmarks the model's machine-dependent inputs come from: a cache-line transfer
//! between two pinned CPUs (ping-pong on one atomic), the wake-up of a parked thread (a futex
//! wait and wake, as parking_lot's Linux parker), the cost of the wake call to the waker, and
//! the length of the two steps of parking_lot's spin phase (a `pause` and a `sched_yield`), and
//! how often and how long a running CPU is interrupted (a loop that reads the clock and keeps the
//! gaps).
//!
//! Every figure is the least (transfers) or the median (the rest) of several trials: another
//! process or the hypervisor that preempts either side only ever adds time
//! (`../shared/reference/measuring.md` gives how much one transfer varies from one minute to the
//! next on this machine kind).

use crate::driver::host::{allowed_cpus, pin_current_thread};
use schedlab_core::sync::{AtomicBool, AtomicU64, Ordering};
use schedlab_core::Clock;
use serde::{Deserialize, Serialize};
use std::time::{Duration, Instant};

/// One-way cache-line transfers measured between two CPUs.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct TransferSample {
    pub cpu_a: usize,
    pub cpu_b: usize,
    /// The least trial: the figure used.
    pub one_way_ns: f64,
    /// Every trial's mean one-way time, ns.
    pub trials_ns: Vec<f64>,
}

/// Measures the one-way latency of a cache-line transfer between `a` and `b` (a ping-pong on one
/// atomic, both threads pinned): the least of `trials` trials. `None` if either CPU cannot be
/// pinned to or `a == b`. A stop ends it after the trial under way (at most 20 ms): the trials
/// done are kept.
pub fn transfer_between(
    a: usize,
    b: usize,
    trials: usize,
    stop: &AtomicBool,
) -> Option<TransferSample> {
    if a == b || !allowed_cpus().contains(&a) || !allowed_cpus().contains(&b) {
        return None;
    }
    let trials_ns: Vec<f64> = (0..trials.max(1))
        .take_while(|&i| i == 0 || !stop.load(Ordering::Relaxed))
        .map(|_| ping_pong(a, b))
        .collect();
    let one_way_ns = trials_ns.iter().copied().fold(f64::INFINITY, f64::min);
    Some(TransferSample { cpu_a: a, cpu_b: b, one_way_ns, trials_ns })
}

/// The one-way transfer between the first two allowed CPUs, least of [`TRIALS`] trials; `None`
/// with a single CPU.
pub fn transfer_ns(stop: &AtomicBool) -> Option<f64> {
    let cpus = allowed_cpus();
    if cpus.len() < 2 {
        return None;
    }
    transfer_between(cpus[0], cpus[1], TRIALS, stop).map(|t| t.one_way_ns)
}

/// Trials of a transfer measurement: many short ones, so that on a busy machine (other processes
/// on both CPUs) at least one runs undisturbed; the least is kept.
pub const TRIALS: usize = 25;

/// One ping-pong trial: up to 20 000 round trips, but no longer than 20 ms (on a loaded machine a
/// round trip can take a whole time slice: the trial then ends early, with what it measured).
fn ping_pong(a: usize, b: usize) -> f64 {
    const ROUNDS: u64 = 20_000;
    const LIMIT: Duration = Duration::from_millis(20);
    /// The value that tells the other side to stop.
    const DONE: u64 = u64::MAX;
    let line = AtomicU64::new(0);
    let (elapsed, rounds) = std::thread::scope(|s| {
        let other = s.spawn(|| {
            pin_current_thread(b);
            for i in 0..ROUNDS {
                loop {
                    let v = line.load(Ordering::Acquire);
                    if v == DONE {
                        return;
                    }
                    if v == 2 * i + 1 {
                        break;
                    }
                    std::hint::spin_loop();
                }
                // A compare-and-swap, not a store: the measuring side may have given up (its time
                // limit) and written DONE since; a plain store would overwrite it and leave this
                // side waiting forever.
                if line
                    .compare_exchange(2 * i + 1, 2 * i + 2, Ordering::AcqRel, Ordering::Acquire)
                    .is_err()
                {
                    return;
                }
            }
        });
        let pinned = PinGuard::pin(a);
        let start = Instant::now();
        let mut done = 0;
        'trial: for i in 0..ROUNDS {
            line.store(2 * i + 1, Ordering::Release);
            let mut polls = 0u32;
            while line.load(Ordering::Acquire) != 2 * i + 2 {
                std::hint::spin_loop();
                polls = polls.wrapping_add(1);
                if polls % 4096 == 0 && start.elapsed() > LIMIT {
                    break 'trial;
                }
            }
            done = i + 1;
            if i % 1024 == 1023 && start.elapsed() > LIMIT {
                break;
            }
        }
        let elapsed = start.elapsed();
        line.store(DONE, Ordering::Release);
        let _ = other.join();
        drop(pinned);
        (elapsed, done.max(1))
    });
    elapsed.as_nanos() as f64 / (2 * rounds) as f64
}

/// Pins the calling thread to one CPU while it lives; puts it back on every allowed CPU after.
pub struct PinGuard {
    pinned: bool,
    allowed: Vec<usize>,
}

impl PinGuard {
    pub fn pin(cpu: usize) -> PinGuard {
        let allowed = allowed_cpus();
        PinGuard { pinned: pin_current_thread(cpu), allowed }
    }
}

impl Drop for PinGuard {
    fn drop(&mut self) {
        if self.pinned {
            unpin_current_thread(&self.allowed);
        }
    }
}

fn unpin_current_thread(cpus: &[usize]) {
    #[cfg(target_os = "linux")]
    {
        // SAFETY: all-zero is a valid empty `cpu_set_t`.
        let mut set: libc::cpu_set_t = unsafe { std::mem::zeroed() };
        for &c in cpus.iter().filter(|&&c| c < libc::CPU_SETSIZE as usize) {
            // SAFETY: `c` is below CPU_SETSIZE; CPU_SET writes inside `set`.
            unsafe { libc::CPU_SET(c, &mut set) };
        }
        // SAFETY: pid 0 is the calling thread; size and pointer describe `set`.
        unsafe { libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set) };
    }
    #[cfg(not(target_os = "linux"))]
    let _ = cpus;
}

/// What a parked thread costs: the wake-up latency and the waker's call.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct WakeSample {
    /// From the wake call to the parked thread running again, median, ns.
    pub wake_latency_ns: f64,
    /// The wake call itself, on the waker, median, ns.
    pub unpark_cost_ns: f64,
    pub trials: usize,
}

/// Measures `trials` wake-ups of a thread parked on `b` by a thread on `a` (std's `park`, a futex
/// wait on Linux, as parking_lot's parker). The parked side announces it is about to park; the
/// waker waits `parked_for` (so that it is asleep, as a parked lock waiter is) and wakes it.
/// `interrupt` ends it after the trial under way (the trials done are kept).
pub fn wake(
    a: usize,
    b: usize,
    trials: usize,
    parked_for: Duration,
    interrupt: &AtomicBool,
) -> Option<WakeSample> {
    if a == b {
        return None;
    }
    let clock = schedlab_core::RealClock::new();
    let stop = AtomicBool::new(false);
    let round = AtomicU64::new(0);
    let woke_at = AtomicU64::new(0);
    let mut latencies = Vec::with_capacity(trials);
    let mut costs = Vec::with_capacity(trials);
    std::thread::scope(|s| {
        let (clock, stop, round, woke_at) = (&clock, &stop, &round, &woke_at);
        let parked = s.spawn(move || {
            pin_current_thread(b);
            let mut seen = 0;
            loop {
                // Announce: about to park for round `seen + 1`.
                round.store(2 * seen + 1, Ordering::Release);
                while round.load(Ordering::Acquire) == 2 * seen + 1 && !stop.load(Ordering::Relaxed)
                {
                    std::thread::park();
                }
                if stop.load(Ordering::Relaxed) {
                    return;
                }
                woke_at.store(clock.now_ns() + 1, Ordering::Release);
                seen += 1;
                // Wait until the waker has read the time.
                while woke_at.load(Ordering::Acquire) != 0 && !stop.load(Ordering::Relaxed) {
                    std::hint::spin_loop();
                }
            }
        });
        let _pin = PinGuard::pin(a);
        let deadline = Instant::now() + Duration::from_secs(3);
        for i in 0..trials as u64 {
            if interrupt.load(Ordering::Relaxed) {
                break;
            }
            while round.load(Ordering::Acquire) != 2 * i + 1 {
                if Instant::now() > deadline || interrupt.load(Ordering::Relaxed) {
                    break;
                }
                std::thread::yield_now();
            }
            // Spin rather than sleep: a sleep lasts at least the timer slack (50 µs).
            let asleep = Instant::now();
            while asleep.elapsed() < parked_for {
                std::hint::spin_loop();
            }
            let t0 = clock.now_ns() + 1;
            round.store(2 * i + 2, Ordering::Release);
            parked.thread().unpark();
            let t1 = clock.now_ns() + 1;
            let mut spins = 0u64;
            let woke = loop {
                let w = woke_at.load(Ordering::Acquire);
                if w != 0 {
                    break w;
                }
                spins += 1;
                if spins % 4096 == 0
                    && (Instant::now() > deadline || interrupt.load(Ordering::Relaxed))
                {
                    break t0;
                }
                std::hint::spin_loop();
            };
            woke_at.store(0, Ordering::Release);
            if woke > t0 {
                latencies.push((woke - t0) as f64);
                costs.push((t1 - t0) as f64);
            }
            if Instant::now() > deadline {
                break;
            }
        }
        stop.store(true, Ordering::Relaxed);
        round.store(u64::MAX, Ordering::Release);
        parked.thread().unpark();
    });
    if latencies.is_empty() {
        return None;
    }
    Some(WakeSample {
        wake_latency_ns: median(&latencies),
        unpark_cost_ns: median(&costs),
        trials: latencies.len(),
    })
}

/// The length of one `std::hint::spin_loop()` (a `pause` on x86), ns: the median of 7 timings of
/// 100 000.
pub fn pause_ns() -> f64 {
    median_ns_per_call(100_000, std::hint::spin_loop)
}

/// The length of one `std::thread::yield_now()` with nothing else to run on the CPU (what a
/// spinning parking_lot waiter pays per yield), ns: the median of 7 timings of 2 000.
pub fn yield_ns() -> f64 {
    median_ns_per_call(2_000, std::thread::yield_now)
}

/// One call of `call`, ns: the median of 7 timings of `calls` calls in a row.
fn median_ns_per_call(calls: u32, mut call: impl FnMut()) -> f64 {
    let trials: Vec<f64> = (0..7)
        .map(|_| {
            let start = Instant::now();
            for _ in 0..calls {
                call();
            }
            start.elapsed().as_nanos() as f64 / f64::from(calls)
        })
        .collect();
    median(&trials)
}

/// A CPU taken away from the workload now and then (`topology`'s documentation).
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Interruptions {
    /// Interruptions per second of one running CPU.
    pub rate_per_s: f64,
    /// Their lengths, ns, equally likely (quantiles of the measured ones).
    pub durations_ns: Vec<f64>,
}

/// The shortest gap in a clock-reading loop that counts as an interruption: four times the
/// longest piece of a calibrated cycle (about 250 ns). Shorter stalls are inside the pieces'
/// calibrated lengths and spreads already.
pub const INTERRUPTION_THRESHOLD_NS: f64 = 1000.0;

/// How long [`interruptions`] watches each CPU.
pub const INTERRUPTION_WINDOW: Duration = Duration::from_millis(250);

/// Quantiles kept of the interruptions' lengths.
pub(crate) const INTERRUPTION_QUANTILES: usize = 32;

/// How often and how long a running CPU is interrupted: a thread pinned to each of `cpus` in turn
/// reads the TSC clock in a tight loop (a few ns a read) for `window`, and every gap longer than
/// [`INTERRUPTION_THRESHOLD_NS`] is an interruption (a timer tick, the
/// hypervisor, another process). The rate is per second of watching, over all the CPUs; the
/// lengths are [`INTERRUPTION_QUANTILES`] evenly spaced quantiles of the gaps (all of them if
/// fewer). None seen: rate 0 and no lengths. A stop ends the watching at once (what was watched
/// is kept).
pub fn interruptions(cpus: &[usize], window: Duration, stop: &AtomicBool) -> Interruptions {
    let threshold = INTERRUPTION_THRESHOLD_NS as u64;
    let clock = schedlab_core::RealClock::new();
    let mut gaps: Vec<f64> = Vec::new();
    let mut watched_ns = 0u64;
    // No CPU named: the calling thread where it runs, unpinned.
    let places: Vec<Option<usize>> =
        if cpus.is_empty() { vec![None] } else { cpus.iter().copied().map(Some).collect() };
    for cpu in places {
        if stop.load(Ordering::Relaxed) {
            break;
        }
        let _pin = cpu.map(PinGuard::pin);
        let start = clock.now_ns();
        let end = start + window.as_nanos() as u64;
        let mut last = start;
        let mut reads = 0u32;
        while last < end {
            reads = reads.wrapping_add(1);
            if reads % 4096 == 0 && stop.load(Ordering::Relaxed) {
                break;
            }
            let now = clock.now_ns();
            let gap = now.saturating_sub(last);
            if gap > threshold {
                gaps.push(gap as f64);
            }
            last = now;
        }
        watched_ns += last - start;
    }
    gaps.sort_by(f64::total_cmp);
    let n = gaps.len();
    let durations_ns = if n <= INTERRUPTION_QUANTILES {
        gaps
    } else {
        (0..INTERRUPTION_QUANTILES)
            .map(|k| gaps[((k as f64 + 0.5) / INTERRUPTION_QUANTILES as f64 * n as f64) as usize])
            .collect()
    };
    let rate_per_s = if watched_ns == 0 { 0.0 } else { n as f64 / (watched_ns as f64 / 1e9) };
    Interruptions { rate_per_s, durations_ns }
}

use crate::stats::median;
