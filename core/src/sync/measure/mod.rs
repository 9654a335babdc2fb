//! Lock measurement, the mechanism: what a measured lock counts, times and samples, per thread,
//! and how the per-thread counts become one table. It knows lock *classes* and *path tags* only
//! as small numbers; what they are called, which spans a traced lock opens and how the table is
//! reported belong to the layer above (`crate::lockstat` names the scheduler's locks and paths,
//! summarises the table and injects the span makers through [`set_span_hooks`]). This module
//! imports nothing of the scheduler.
//!
//! ## What a measured acquisition costs
//!
//! The goal (issue 13) is at most 5 % of a single-threaded round trip, which makes about twenty
//! lock acquisitions and statistics sections: so each may cost about a nanosecond more. Whether
//! it is met is in the results index (notes/results/README.md, "What do the lock statistics
//! cost"):
//!
//! | what | how | cost on the hot path |
//! | --- | --- | --- |
//! | acquisitions (per class and path) | exact: the hold sampler's countdown *is* the count. Each (class, path) slot counts down to its next sampled acquisition, and the acquisitions so far are the ended gaps plus `gap - countdown` (`take_acquisitions`), so counting costs nothing beyond the sampler's decrement | one decrement of a thread-local word |
//! | owner changes (per class) | exact: the lock's last-owner word, beside the lock word, compared with the thread's id; written only on a change | a load and a compare |
//! | held classes (for the "inside" split and to keep nested records out of the outer hold) | a per-class count of held locks, thread-local | one increment, one decrement; the release also tests one flag (`Fast::work`) |
//! | contentions (per class and path) | exact, counted on the contended path only | none when uncontended |
//! | contention | the raw lock's own first attempt says whether it had to wait ([`RawLockWait`]); no extra `try_lock` | none |
//! | wait time | only on the contended path, and there one contended wait in M (per class, [`set_wait_sampling`], default [`DEFAULT_WAIT_SAMPLING`]; picked like the holds, independently with probability 1/M): a clock read before the pick (so that picked and unpicked waits start alike) and one after the wait, the record kept when the wait ends and folded after the release | none when uncontended; when contended (the lock held by another thread, so off the critical path), a clock read and a countdown decrement |
//! | hold time | one hold in N (per class, [`set_hold_sampling`], default [`DEFAULT_HOLD_SAMPLING`]) is timed: each acquisition is picked independently with probability 1/N (a geometric countdown, so the phase is random and no periodic pattern can alias with it) | the same decrement; two clock reads and a record one time in N |
//! | histograms | `hdrhistogram` (2 significant digits), per thread, recorded after the release, only for timed holds and contended waits; a nested lock's record waits until the thread holds no measured lock (`Fast::pending`) | amortised 1/N, outside every hold |
//! | the sampler's next gaps | four per class drawn in advance, replenished once the thread holds no measured lock (a logarithm inside a hold would leak into the next timed hold); one logarithm per draw (the factor `1/ln(1-1/N)` is cached) | none inside a hold |
//! | the guard | one word of lock_api guard state: the flags, and the stamp of a timed hold (`lock.rs`) | a register |
//!
//! Estimates: the timed holds are an unbiased sample of the holds, so their mean, percentiles and
//! per-path shares estimate the population's, and `total = mean × acquisitions` (exact count).
//! Likewise the timed waits are an unbiased sample of the contended acquisitions' waits:
//! `total = mean × contentions` (exact count).

//! A sampled hold is not timed while the same thread already times another hold or section
//! (its two clock reads would lengthen the outer, timed hold): that leaves out a random subset
//! (the outer one was picked at random), so the estimate stays unbiased.
//!
//! Why waits are sampled too: at two threads on the fair lock nearly every acquisition is
//! contended, and timing each wait put a clock read inside every hold and a histogram record
//! between every release and the next attempt: that was most of the statistics' cost at two
//! threads on the 2-vCPU machine kind (notes/results/2026-12-01-lockstat-cost.md, "contended
//! waits sampled one in 8").
//!
//! **Exact mode** ([`set_exact`]): every hold is timed, and the holds the sampler would have
//! picked are *also* recorded apart (`ClassStats::hold_sample`), so one run gives the exact figures
//! and the sampled estimate of the same holds: the accuracy test compares them.
//!
//! ## Scope
//!
//! Like `/proc/lock_stat` the table is global to the process: [`reset`] clears it, [`snapshot`]
//! reads it. A thread's counts reach the table when it calls [`flush`] or exits. Counts a thread
//! made before a [`reset`] and had not flushed are kept with the next generation (the threads
//! that measure here are started after the reset, or are the one that calls it).
//!
//! ## Files
//!
//! This file holds the classes, the switch and the sampling periods, the span hooks and the
//! per-acquisition API a measured lock calls ([`acquired`], [`contended`], [`waited`],
//! [`released`], [`section`]). `sampler.rs` is the per-thread state behind that API and the
//! sampling decision; `counts.rs` the value types a measurement produces ([`Histogram`],
//! [`ClassStats`], [`LockStats`]); `table.rs` the per-thread accumulators and the global table
//! ([`flush`], [`reset`], [`snapshot`]).

mod counts;
mod sampler;
mod table;

pub use counts::{ClassStats, Histogram, LockStats, PathStats};
use sampler::*;
use table::*;
pub use table::{flush, reset, snapshot};

use super::lock_ticks;
use std::sync::atomic::{AtomicU32, AtomicU64, AtomicU8, Ordering};
use std::sync::Mutex;

/// The most lock classes a process can have (index 0 is "not measured").
pub const MAX_CLASSES: usize = 16;
/// The most path tags (0 is "other").
pub const NR_PATHS: usize = 8;
/// Indices below this are reserved for the layer above ([`LockClass::reserved`]).
pub const FIRST_DYNAMIC: u8 = 8;

/// What a measured lock counts as. Every lock of a class adds to the same counters.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct LockClass(u8);

static NAMES: Mutex<[Option<&'static str>; MAX_CLASSES]> = Mutex::new([None; MAX_CLASSES]);

impl LockClass {
    /// Not measured (a lock made with `Lock::new`).
    pub const NONE: LockClass = LockClass(0);

    /// A class whose index the layer above fixes (1 up to [`FIRST_DYNAMIC`]); it names it with
    /// [`LockClass::set_name`].
    pub const fn reserved(index: u8) -> LockClass {
        assert!(index >= 1 && index < FIRST_DYNAMIC, "reserved lock classes are 1..FIRST_DYNAMIC");
        LockClass(index)
    }

    /// Names a class (a reserved one, by the layer that reserved it).
    pub fn set_name(self, name: &'static str) {
        NAMES.lock().unwrap_or_else(|e| e.into_inner())[self.index()] = Some(name);
    }

    /// The class called `name`: a named one if it exists, else a new one.
    ///
    /// # Panics
    /// If every class is taken.
    pub fn register(name: &'static str) -> LockClass {
        let mut names = NAMES.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(i) = names.iter().position(|n| *n == Some(name)) {
            return LockClass(i as u8);
        }
        let i = (FIRST_DYNAMIC as usize..MAX_CLASSES).find(|&i| names[i].is_none()).unwrap_or_else(
            || {
                panic!(
                    "at most {} registered lock classes; cannot add `{name}`",
                    MAX_CLASSES - FIRST_DYNAMIC as usize
                )
            },
        );
        names[i] = Some(name);
        LockClass(i as u8)
    }

    /// The class's name in reports ("?" if nobody named it).
    pub fn name(self) -> &'static str {
        NAMES.lock().unwrap_or_else(|e| e.into_inner())[self.index()].unwrap_or("?")
    }

    /// Whether locks of this class are measured at all.
    #[inline(always)]
    pub fn is_named(self) -> bool {
        self.0 != 0
    }

    /// The class's index in per-class arrays (< [`MAX_CLASSES`]).
    #[inline(always)]
    pub fn index(self) -> usize {
        self.0 as usize & (MAX_CLASSES - 1)
    }

    /// The class's byte, as an index into the measurement's byte-indexed arrays (`BY_BYTE`
    /// long, so never out of bounds and never masked).
    #[inline(always)]
    fn byte(self) -> usize {
        self.0 as usize
    }

    /// The class of an index.
    pub fn from_index(index: usize) -> LockClass {
        LockClass((index & (MAX_CLASSES - 1)) as u8)
    }
}

// ---------------------------------------------------------------------------------------------
// The switch: one word, read once per acquisition.

/// [`mode`] bit: lock statistics are on.
pub const MODE_ENABLED: u8 = 1;
/// [`mode`] bit: every hold is timed (exact mode).
pub const MODE_EXACT: u8 = 2;
/// [`mode`] bit: span hooks are installed (then the lock also asks `tracing` whether TRACE is on).
pub const MODE_SPANS: u8 = 4;

static MODE: AtomicU8 = AtomicU8::new(0);

/// The switch word (the `MODE_*` bits).
#[inline(always)]
pub fn mode() -> u8 {
    MODE.load(Ordering::Relaxed)
}

/// Turns measurement on or off for every named lock. An acquisition made while it was on is
/// still accounted at its release, whatever the switch says then.
pub fn set_enabled(on: bool) {
    if on {
        super::lock_ticks_warm_up();
        MODE.fetch_or(MODE_ENABLED, Ordering::Relaxed);
    } else {
        MODE.fetch_and(!MODE_ENABLED, Ordering::Relaxed);
    }
}

/// Whether named locks are being measured.
#[inline(always)]
pub fn enabled() -> bool {
    mode() & MODE_ENABLED != 0
}

/// Exact mode: every hold timed, and the sampler's picks recorded apart (see the module doc).
pub fn set_exact(on: bool) {
    if on {
        MODE.fetch_or(MODE_EXACT, Ordering::Relaxed);
    } else {
        MODE.fetch_and(!MODE_EXACT, Ordering::Relaxed);
    }
}

/// Whether exact mode is on.
pub fn exact() -> bool {
    mode() & MODE_EXACT != 0
}

/// Default hold sampling: one hold in this many is timed.
///
/// Why 256: a sample (two clock reads, the histogram record, the next gap's logarithm) costs
/// an order of magnitude more than a counted acquisition, so the period bounds the sampler's
/// share of the statistics' cost; at 256 that share is small, and a one-second run still times
/// thousands of scheduler-lock holds. Every report prints its sample count. The figures:
/// notes/results/2026-12-01-lockstat-cost.md, "holds one in 256".
pub const DEFAULT_HOLD_SAMPLING: u32 = 256;
/// The largest hold sampling period.
pub const MAX_SAMPLING: u32 = 1_000_000;

static PERIOD: [AtomicU32; MAX_CLASSES] =
    [const { AtomicU32::new(DEFAULT_HOLD_SAMPLING) }; MAX_CLASSES];

/// Times one hold in `period` (on average, independently per acquisition) for `class`; 1 times
/// every hold. Counts and contended waits stay exact.
pub fn set_hold_sampling(class: LockClass, period: u32) {
    PERIOD[class.index()].store(period.clamp(1, MAX_SAMPLING), Ordering::Relaxed);
}

/// The hold sampling period of `class`.
pub fn hold_sampling(class: LockClass) -> u32 {
    PERIOD[class.index()].load(Ordering::Relaxed)
}

/// Default wait sampling: one contended wait in this many is timed.
pub const DEFAULT_WAIT_SAMPLING: u32 = 8;

static WAIT_PERIOD: [AtomicU32; MAX_CLASSES] =
    [const { AtomicU32::new(DEFAULT_WAIT_SAMPLING) }; MAX_CLASSES];

/// Times one contended wait in `period` (on average, independently per contended acquisition)
/// for `class`; 1 times every contended wait. Contentions stay counted exactly.
pub fn set_wait_sampling(class: LockClass, period: u32) {
    WAIT_PERIOD[class.index()].store(period.clamp(1, MAX_SAMPLING), Ordering::Relaxed);
}

/// The wait sampling period of `class`.
pub fn wait_sampling(class: LockClass) -> u32 {
    WAIT_PERIOD[class.index()].load(Ordering::Relaxed)
}

// ---------------------------------------------------------------------------------------------
// Span hooks, injected by the layer above.

/// The spans a traced lock opens, made by the layer that knows what the classes and paths are.
/// Each returns `Span::none()` for a class it does not trace.
#[derive(Clone, Copy, Debug)]
pub struct SpanHooks {
    /// The span of a hold of a lock of the class, on the path tag.
    pub hold: fn(LockClass, u8) -> tracing::Span,
    /// The span of a contended wait.
    pub wait: fn(LockClass, u8) -> tracing::Span,
}

static SPAN_HOOKS: std::sync::OnceLock<SpanHooks> = std::sync::OnceLock::new();

/// Installs the span makers (once per process; later calls are ignored).
pub fn set_span_hooks(hooks: SpanHooks) {
    if SPAN_HOOKS.set(hooks).is_ok() {
        MODE.fetch_or(MODE_SPANS, Ordering::Relaxed);
    }
}

/// Whether a lock acquisition should open spans now: hooks installed and TRACE recorded.
#[inline(always)]
pub fn traced(mode: u8) -> bool {
    use tracing::level_filters::{LevelFilter, STATIC_MAX_LEVEL};
    mode & MODE_SPANS != 0
        && tracing::Level::TRACE <= STATIC_MAX_LEVEL
        && tracing::Level::TRACE <= LevelFilter::current()
}

/// The hold span of `class` on the calling thread's path (`None` if not traced).
#[inline(never)]
pub fn hold_span(class: LockClass) -> Option<tracing::Span> {
    let hooks = SPAN_HOOKS.get()?;
    let span = (hooks.hold)(class, current_path());
    (!span.is_disabled()).then_some(span)
}

/// The wait span of `class` on the calling thread's path.
#[inline(never)]
pub fn wait_span(class: LockClass) -> tracing::Span {
    SPAN_HOOKS.get().map_or_else(tracing::Span::none, |hooks| (hooks.wait)(class, current_path()))
}

// ---------------------------------------------------------------------------------------------
// Acquisition flags: what one acquisition's measurement is (the guard carries them).

/// Acquisition flag: counted (the release must be accounted).
pub const F_MEASURED: u8 = 1;
/// Acquisition flag: the hold is timed.
pub const F_TIMED: u8 = 2;
/// Acquisition flag: a hold span is entered. Bit 2 on purpose: a lock's guard state with this bit
/// is a pointer (8-aligned, so its low three bits are free) to the traced hold's state, not flags
/// and a stamp (`lock.rs`, `MeasuredGuard`).
pub const F_TRACED: u8 = 4;
/// Acquisition flag: the sampler picked this hold (in exact mode every hold is timed, and this
/// says whether the sampled mode would have timed it).
pub const F_SAMPLED: u8 = 8;
/// Acquisition flag: the lock's last owner was another thread (an owner change, counted). The
/// release writes the thread's id into the owner word just before the raw unlock, so that the
/// write shares the line the release writes anyway, rather than taking it from a waiter spinning
/// on it in the middle of the hold (an owner change is nearly every acquisition at two threads).
/// Measured on its own, neither placement could be told from the other within the noise
/// (notes/results/2026-12-01-lockstat-cost.md, "On a quiet machine").
pub const F_NEW_OWNER: u8 = 16;
/// Acquisition flag: timed because exact mode was on (then [`F_SAMPLED`] marks the sampler's
/// pick, which is also recorded apart).
pub const F_EXACT: u8 = 32;
/// Record flag: the contended wait was timed (picked, or exact mode).
pub const F_WAIT_TIMED: u8 = 64;
/// Record flag: the wait sampler picked this contended wait (in exact mode every contended
/// wait is timed, and this says whether the sampled mode would have timed it).
pub const F_WAIT_SAMPLED: u8 = 128;

/// Sets the calling thread's path tag until the guard drops (then the previous one is back).
#[must_use = "the path is set only while the guard lives"]
pub struct PathGuard {
    previous: u8,
}

/// Marks what the calling thread is doing (a tag below [`NR_PATHS`]; the layer above names them).
#[inline]
pub fn enter_path(tag: u8) -> PathGuard {
    let previous = fast().path.replace(tag & (NR_PATHS as u8 - 1));
    PathGuard { previous }
}

impl Drop for PathGuard {
    #[inline]
    fn drop(&mut self) {
        fast().path.set(self.previous);
    }
}

/// The calling thread's owner id (what a release with [`F_NEW_OWNER`] writes into the owner
/// word; the thread is registered by its first measured acquisition).
#[inline(always)]
pub fn thread_id() -> u32 {
    fast().id.get()
}

/// The calling thread's path tag.
pub fn current_path() -> u8 {
    FAST.with(|f| f.path.get())
}

/// Called by a measured lock whose first attempt failed, before it waits: counts the contention
/// and says whether to time this wait ([`F_WAIT_TIMED`], [`F_WAIT_SAMPLED`] for the sampler's
/// pick, [`F_EXACT`] in exact mode: the flags to pass to [`waited`]).
///
/// A pick leaves the countdown at 0; the next gap is drawn once the thread holds no measured lock
/// ([`settle`], which the release of this hold reaches), not here: a draw (a logarithm) between
/// the failed attempt and the wait's first clock read would shorten every timed wait by its
/// length (the accuracy test, `core/tests/lockstat_accuracy.rs`, saw it in the p99). Only a
/// contended acquisition made before that (nested inside a measured lock) finds the countdown at
/// 0 and draws here.
#[inline(always)]
pub fn contended(class: LockClass, mode: u8) -> u8 {
    let f = fast();
    if f.id.get() == 0 {
        register_thread(f);
    }
    bump(&f.contentions[f.slot(class)]);
    let c = class.index();
    let left = f.wait_countdown[c].get();
    let exact = if mode & MODE_EXACT != 0 { F_WAIT_TIMED | F_EXACT } else { 0 };
    if left > 1 {
        f.wait_countdown[c].set(left - 1);
        return exact;
    }
    pick_wait(f, c, left) | exact
}

/// Called by a measured lock right after a timed contended wait (the caller holds the lock now),
/// with [`contended`]'s flags: keeps the wait's record until the thread holds no measured lock,
/// which is after this hold's release at the earliest.
#[cold]
#[inline(never)]
pub fn waited(class: LockClass, flags: u8, wait: u64) {
    let f = fast();
    // The classes held while it waited (this one is not counted as held yet).
    let outer = f.held_bits() & !(1 << class.index());
    keep(
        f,
        Pending {
            class,
            flags: flags & (F_WAIT_TIMED | F_WAIT_SAMPLED | F_EXACT),
            path: f.path.get(),
            outer,
            hold: 0,
            wait,
        },
    );
}

/// Called by a measured lock right after it was acquired (the caller holds it). `owner` is the
/// lock's last-owner word (the facade's atomic: the checker's under loom), which only a holder writes (at its release, see [`F_NEW_OWNER`]).
/// Returns the acquisition's flags ([`F_MEASURED`]; [`F_NEW_OWNER`] when the release must write
/// the owner word; [`F_TIMED`]/[`F_SAMPLED`] when its hold is to be timed).
///
/// The common case (not sampled, not exact) is one decrement (the count and the sampler), a
/// compare with the owner word, and one increment of the held count.
#[inline(always)]
pub fn acquired(class: LockClass, owner: &super::AtomicU32, mode: u8) -> u8 {
    let f = fast();
    let c = class.byte();
    let slot = f.slot(class);
    // Never 0 at rest, so this does not wrap.
    let left = f.countdown[slot].get().wrapping_sub(1);
    let flags = if left != 0 && mode & MODE_EXACT == 0 {
        f.countdown[slot].set(left);
        F_MEASURED
    } else {
        let sampled = count_slow(f, class.index(), slot, left);
        F_MEASURED | timing_flags(f, sampled, mode)
    };
    // Registered by now: the first acquisition of every slot took `count_slow`. Relaxed: the
    // word is written only by a holder, at its release and before the raw unlock, whose Release
    // (and this acquisition's Acquire) orders it before this load.
    let previous = owner.load(Ordering::Relaxed);
    let flags = if previous != f.id.get() {
        if previous != 0 {
            bump(&f.owner_changes[c]);
        }
        flags | F_NEW_OWNER
    } else {
        flags
    };
    f.held.count(c).set(f.held.count(c).get().wrapping_add(1));
    flags
}

/// Called by a measured lock right after it was released, with its acquisition's flags and, for
/// a timed hold, its length in clock ticks.
#[inline(always)]
pub fn released(class: LockClass, flags: u8, hold: u64) {
    if flags & F_TIMED == 0 {
        return released_untimed(class);
    }
    let f = fast();
    let c = class.byte();
    f.held.count(c).set(f.held.count(c).get().wrapping_sub(1));
    record(f, class, flags, hold, f.held_bits() & !(1 << class.index()));
}

/// [`released`] of an acquisition whose hold was not timed: one decrement and one test.
#[inline(always)]
pub fn released_untimed(class: LockClass) {
    let f = fast();
    let c = class.byte();
    f.held.count(c).set(f.held.count(c).get().wrapping_sub(1));
    if f.work.get() {
        settle_if_free(f);
    }
}

/// A timed section (see [`section`]); records nothing unless it was sampled.
#[must_use = "the section is timed until the guard drops"]
pub struct SectionGuard {
    class: LockClass,
    flags: u8,
    /// Clock ticks at the start (timed sections only).
    start: u64,
}

/// Marks work that is not a lock but is measured like a hold (the statistics updates under the
/// scheduler lock): counted exactly, timed one in [`hold_sampling`]`(class)`. Off, this is one
/// relaxed load; on and not sampled, one decrement more.
#[inline(always)]
pub fn section(class: LockClass) -> SectionGuard {
    let mode = mode();
    if mode & MODE_ENABLED == 0 {
        return SectionGuard { class, flags: 0, start: 0 };
    }
    let f = fast();
    let slot = f.slot(class);
    let left = f.countdown[slot].get().wrapping_sub(1);
    let flags = if left != 0 && mode & MODE_EXACT == 0 {
        f.countdown[slot].set(left);
        0
    } else {
        let sampled = count_slow(f, class.index(), slot, left);
        timing_flags(f, sampled, mode)
    };
    let start = if flags & F_TIMED != 0 { lock_ticks() } else { 0 };
    SectionGuard { class, flags, start }
}

impl Drop for SectionGuard {
    #[inline(always)]
    fn drop(&mut self) {
        if self.flags & F_TIMED != 0 {
            let end = lock_ticks();
            let (class, flags, start) = (self.class, self.flags, self.start);
            let f = fast();
            record(f, class, flags, end.saturating_sub(start), f.held_bits());
        }
    }
}

/// Clock ticks in ns (the facade's lock clock).
pub fn ticks_to_ns(ticks: u64) -> u64 {
    super::lock_ticks_to_ns(ticks)
}

#[cfg(all(test, not(any(loom, shuttle))))]
mod tests {
    use super::*;

    #[test]
    fn geometric_gaps_have_the_period_as_mean() {
        let f = Fast::new();
        f.id.set(1);
        f.rng.set(0x1234_5678_9abc_def1);
        for period in [1u32, 4, 64] {
            let n = 200_000;
            let sum: u64 = (0..n).map(|_| draw_cached(&f, 0, period) as u64).sum();
            let mean = sum as f64 / n as f64;
            // Standard error of the mean of a geometric(1/p) variable: sqrt(p(p-1)/n); 6 sigma.
            let se = ((period as f64) * (period as f64 - 1.0) / n as f64).sqrt();
            assert!(
                (mean - period as f64).abs() <= 6.0 * se + 1e-9,
                "period {period}: mean gap {mean}"
            );
        }
    }

    #[test]
    fn histogram_quantiles_are_within_one_percent() {
        let mut h = Histogram::new();
        for v in 1..=10_000u64 {
            h.record(v);
        }
        assert_eq!((h.count(), h.min(), h.max()), (10_000, 1, 10_000));
        assert!((h.quantile(0.5) as f64 - 5000.0).abs() / 5000.0 < 0.011);
        assert!((h.quantile(0.99) as f64 - 9900.0).abs() / 9900.0 < 0.011);
        assert!((h.mean() - 5000.5).abs() < 1e-9);
        let mut g = Histogram::new();
        g.record(1_000_000);
        h.merge(&g);
        assert_eq!(h.max(), 1_000_000);
        assert_eq!(h.quantile(1.0), 1_000_000);
        assert_eq!(Histogram::new().quantile(0.5), 0);
    }

    #[test]
    fn classes_register_once() {
        let a = LockClass::register("measure-test-class");
        assert_eq!(LockClass::register("measure-test-class"), a);
        assert_eq!(a.name(), "measure-test-class");
        assert!(a.index() >= FIRST_DYNAMIC as usize);
    }

    #[test]
    fn path_guards_nest() {
        assert_eq!(current_path(), 0);
        {
            let _a = enter_path(1);
            {
                let _b = enter_path(4);
                assert_eq!(current_path(), 4);
            }
            assert_eq!(current_path(), 1);
        }
        assert_eq!(current_path(), 0);
    }
}
