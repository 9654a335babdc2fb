//! The accuracy of the sampled lock statistics (issue 13, item 2), on a synthetic critical section
//! of known length and known contention.
//!
//! - **Known contention**: two threads take a fair (ticket) lock in strict turns. Thread A takes
//!   it uncontended, then waits until B has queued behind it (`Lock::has_waiters`: a ticket taken,
//!   not a race hoped for) before it releases; so B's acquisitions are contended and none of A's.
//!   Acquisitions and owner changes are then known exactly, and contentions up to the preemptions
//!   that fall between B's ticket and its first look (see `assert_counts_exact`).
//! - **Known length**: each hold spins for a fixed time, 400 ns for nine holds in ten and 2.5 µs
//!   for the tenth (so the p99 lies in the long mode).
//! - **Sampled against exact, of the same run**: in exact mode every hold is timed *and* the
//!   holds the sampler would have picked are recorded apart, so the sampled estimate and the exact
//!   figures describe the same holds under the same load. The test compares them, not wall-clock
//!   expectations: a CPU-bound process beside it preempts some holds, which lengthens them in both
//!   figures alike. The tolerance is 5 %, or more when the samples cannot support 5 %: four
//!   standard errors of the sample mean (σ of the exact holds ÷ √samples), and for the p99 four
//!   standard errors of a quantile's rank (√(0.99 × 0.01 ÷ samples)). On a quiet machine the
//!   5 % decides; under load the preemption outliers widen σ and the bound says how much.
//! - Waits are sampled like holds (one contended wait in `PERIOD`, picked independently): in
//!   exact mode every contended wait is timed and the sampler's picks are recorded apart, and the
//!   same comparison holds for them. B's waits have known lengths too: B queues while A holds, and
//!   A then spins for its hold's length before it releases.
//!
//! No assertion depends on how fast the machine is; a deadline only bounds how many rounds run.

use schedlab_core::lockstat::{self, ClassStats, LockClass, Mode};
use schedlab_core::sync::{Lock, LockKind};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// The lock statistics are process-wide: one measured workload at a time.
static ONE: Mutex<()> = Mutex::new(());

const SHORT: Duration = Duration::from_nanos(400);
const LONG: Duration = Duration::from_nanos(2_500);
const PERIOD: u32 = 8;

fn spin(d: Duration) {
    let t = Instant::now();
    while t.elapsed() < d {
        std::hint::spin_loop();
    }
}

fn hold_length(i: u64) -> Duration {
    if i % 10 == 9 {
        LONG
    } else {
        SHORT
    }
}

/// Waits for `cond`, yielding now and then (a CPU hog may run beside the test).
fn wait_for(cond: impl Fn() -> bool, give_up: &AtomicBool) -> bool {
    let mut spins = 0u32;
    while !cond() {
        if give_up.load(Ordering::Relaxed) {
            return false;
        }
        spins += 1;
        if spins % 64 == 0 {
            std::thread::yield_now();
        } else {
            std::hint::spin_loop();
        }
    }
    true
}

/// Runs the two threads for at most `rounds` rounds or `budget`; returns the rounds finished and
/// the class's statistics, once it has checked what every mode must give: a thousand rounds at
/// least, and counts that are exact ([`assert_counts_exact`]).
fn run(class: LockClass, mode: Mode, rounds: u64, budget: Duration) -> (u64, ClassStats) {
    lockstat::set_mode(mode);
    lockstat::set_hold_sampling(class, PERIOD);
    lockstat::set_wait_sampling(class, PERIOD);
    lockstat::reset();
    lockstat::set_enabled(true);
    let lock = Arc::new(Lock::named(LockKind::FairSpin, class, 0u64));
    let turn = Arc::new(AtomicU64::new(0)); // A: round i is open for B when turn == i + 1
    let done = Arc::new(AtomicU64::new(0)); // B: rounds finished
    let give_up = Arc::new(AtomicBool::new(false));
    let deadline = Instant::now() + budget;
    let b = {
        let (lock, turn, done, give_up) =
            (lock.clone(), turn.clone(), done.clone(), give_up.clone());
        std::thread::spawn(move || {
            let mut i = 0;
            loop {
                if !wait_for(|| turn.load(Ordering::Acquire) > i, &give_up) {
                    break;
                }
                let mut g = lock.lock();
                *g += 1;
                spin(hold_length(2 * i + 1));
                drop(g);
                i += 1;
                done.store(i, Ordering::Release);
            }
            lockstat::flush();
        })
    };
    let mut finished = 0;
    while finished < rounds && Instant::now() < deadline {
        let i = finished;
        let mut g = lock.lock();
        *g += 1;
        turn.store(i + 1, Ordering::Release);
        // B takes its ticket behind us: its acquisition is contended, by construction.
        if !wait_for(|| lock.has_waiters(), &AtomicBool::new(false)) {
            unreachable!("wait_for without a give-up flag returns only when the condition holds");
        }
        spin(hold_length(2 * i));
        drop(g);
        wait_for(|| done.load(Ordering::Acquire) > i, &AtomicBool::new(false));
        finished += 1;
    }
    give_up.store(true, Ordering::Relaxed);
    b.join().unwrap();
    lockstat::set_enabled(false);
    lockstat::set_mode(Mode::Sampled);
    let stats = lockstat::snapshot();
    assert_eq!(*lock.lock(), 2 * finished);
    assert!(finished >= 1_000, "only {finished} rounds ran in {budget:?}");
    let stats = stats.class(class).expect("the class was measured").clone();
    assert_counts_exact(finished, &stats);
    (finished, stats)
}

fn assert_counts_exact(rounds: u64, s: &ClassStats) {
    assert_eq!(s.acquisitions, 2 * rounds, "every acquisition counted");
    // Each of B's tickets is taken while A holds the lock, and A releases only after seeing it.
    // A contention is "the first look at `serving` did not admit the ticket": only if B is
    // preempted in the two instructions between taking its ticket and that look can A's release
    // come first (then B did not wait, and is rightly not counted). So all of B's acquisitions but
    // those, and none of A's, are contended.
    assert!(
        s.contentions <= rounds && rounds - s.contentions <= rounds / 100,
        "{} contentions in {rounds} rounds",
        s.contentions
    );
    assert_eq!(
        s.owner_changes,
        2 * rounds - 1,
        "the lock changed hands at every acquisition but the first"
    );
}

/// `picked` of `population` items, each picked independently with probability 1/PERIOD: within six
/// standard deviations of the binomial mean.
fn assert_one_in_period(what: &str, picked: u64, population: u64) {
    let expect = population as f64 / PERIOD as f64;
    let sd_n = (expect * (1.0 - 1.0 / PERIOD as f64)).sqrt();
    assert!(
        (picked as f64 - expect).abs() <= 6.0 * sd_n,
        "{picked} {what} picked of {population}, expected about {expect:.0}"
    );
}

/// The sampled estimate (`sampled`, a subset picked one in PERIOD) against the exact figures of
/// the same run (`exact`, every one of `population` values): average and total within 5 % or four
/// standard errors, p99 within 5 % or at rank 0.99 of the exact values within four standard errors.
fn assert_estimate_agrees(
    what: &str,
    exact: &lockstat::Histogram,
    sampled: &lockstat::Histogram,
    population: u64,
) {
    let n = sampled.count();
    assert!(n > 0, "no {what} sampled");
    // The sample is a subset of the population the exact mean is taken over: the finite-population
    // correction √(1 − n/N) narrows the standard error.
    let fpc = (1.0 - n as f64 / population as f64).max(0.0).sqrt();
    let mean_tol = (0.05 * exact.mean()).max(4.0 * sd(exact) * fpc / (n as f64).sqrt());
    let mean_err = (sampled.mean() - exact.mean()).abs();
    assert!(
        mean_err <= mean_tol,
        "{what} average: sampled {:.0} vs exact {:.0} ticks (error {:.1} %, tolerance {:.1} %, {n} samples)",
        sampled.mean(),
        exact.mean(),
        100.0 * mean_err / exact.mean(),
        100.0 * mean_tol / exact.mean()
    );
    // The total is the mean times the exact count: the same relative error.
    let total_sampled = sampled.mean() * population as f64;
    assert!((total_sampled - exact.sum() as f64).abs() <= mean_tol * population as f64 + 1.0);

    let (p_exact, p_sampled) = (exact.quantile(0.99) as f64, sampled.quantile(0.99) as f64);
    eprintln!(
        "{n} sampled {what}: avg sampled {:.0} / exact {:.0} ticks ({:+.2} %, tolerance {:.1} %); p99 sampled {p_sampled:.0} / exact {p_exact:.0} ({:+.2} %)",
        sampled.mean(),
        exact.mean(),
        100.0 * (sampled.mean() / exact.mean() - 1.0),
        100.0 * mean_tol / exact.mean(),
        100.0 * (p_sampled / p_exact - 1.0)
    );
    let value_ok = (p_sampled - p_exact).abs() <= 0.05 * p_exact;
    // Or: the sampled p99 sits where the exact distribution puts rank 0.99, within four standard
    // errors of a quantile's rank (and the histogram's 1 % buckets).
    let rank = exact.rank_of(p_sampled as u64);
    let rank_tol = 4.0 * (0.99 * 0.01 / n as f64).sqrt() + 0.002;
    assert!(
        value_ok || (rank - 0.99).abs() <= rank_tol,
        "{what} p99: sampled {p_sampled:.0} vs exact {p_exact:.0} ticks, at rank {rank:.4} of the exact values ({n} samples)"
    );
}

/// Standard deviation of the exact holds (ticks, from the histogram: within its 1 %).
fn sd(h: &lockstat::Histogram) -> f64 {
    h.stdev()
}

#[test]
fn sampled_hold_and_wait_estimates_agree_with_the_exact_ones_of_the_same_run() {
    let _one = ONE.lock().unwrap_or_else(|e| e.into_inner());
    let class = lockstat::register("accuracy-test");
    // 60 000 rounds (about 0.3 s on a quiet machine): some 7 500 sampled holds and 3 750 sampled
    // waits, so that four standard errors of the waits' mean stay near 5 % even with the
    // preemption tail (with 20 000 rounds one run in a few needed 11 %).
    let (rounds, s) = run(class, Mode::Exact, 60_000, Duration::from_secs(20));
    assert_eq!(s.hold.count(), s.acquisitions, "exact mode times every hold");
    assert_eq!(s.wait.count(), s.contentions, "exact mode times every contended wait");
    eprintln!("{rounds} rounds");
    assert_one_in_period("holds", s.hold_sample.count(), s.acquisitions);
    assert_one_in_period("waits", s.wait_sample.count(), s.contentions);
    assert_estimate_agrees("holds", &s.hold, &s.hold_sample, s.acquisitions);
    assert_estimate_agrees("waits", &s.wait, &s.wait_sample, s.contentions);
    let (exact, sampled) = (&s.hold, &s.hold_sample);
    // The known lengths: nine holds in ten are short, so the median is in the short mode and the
    // p99 in the long one, in both figures (a check of the instrument, not of the machine's speed:
    // a preempted hold only lengthens).
    for h in [exact, sampled] {
        assert!(h.quantile(0.5) < h.quantile(0.99), "two modes");
    }
}

#[test]
fn the_sampled_mode_counts_exactly_and_times_one_hold_in_n() {
    let _one = ONE.lock().unwrap_or_else(|e| e.into_inner());
    let class = lockstat::register("accuracy-test-sampled");
    let (rounds, s) = run(class, Mode::Sampled, 20_000, Duration::from_secs(20));
    assert!(
        s.hold_sample.count() == 0 && s.wait_sample.count() == 0,
        "the shadow samples are kept in exact mode only"
    );
    // Each hold is picked with probability 1/PERIOD; a pick is skipped only while another timed
    // hold is open on the thread, which never happens here (one lock, no nesting). Each contended
    // wait likewise.
    assert_one_in_period("holds", s.hold.count(), s.acquisitions);
    assert_one_in_period("waits", s.wait.count(), s.contentions);
    let summary = lockstat::snapshot().summarize(1_000_000_000);
    let row = summary.iter().find(|l| l.name == "accuracy-test-sampled").expect("a report row");
    assert!(!row.hold_exact && row.holds_timed == s.hold.count());
    assert!(row.hold_provenance().contains("estimated from"));
    assert!(row.wait_ns.avg > 0.0, "waits are timed");
    assert!(!row.wait_exact && row.waits_timed == s.wait.count());
    assert!(row.wait_provenance().contains("estimated from"), "{}", row.wait_provenance());
    // The wait total is the sample's mean times the exact contention count.
    let expect_total = row.wait_ns.avg * s.contentions as f64;
    assert!((row.wait_ns.total as f64 - expect_total).abs() <= 1.0 + 1e-9 * expect_total);
}
