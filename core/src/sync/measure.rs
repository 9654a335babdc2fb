//! Lock measurement, the mechanism: what a measured lock counts, times and samples, per thread,
//! and how the per-thread counts become one table. It knows lock *classes* and *path tags* only
//! as small numbers; what they are called, which spans a traced lock opens and how the table is
//! reported belong to the layer above (`crate::lockstat` names the scheduler's locks and paths,
//! summarises the table and injects the span makers through [`set_span_hooks`]). This module
//! imports nothing of the scheduler.
//!
//! ## What a measured acquisition costs
//!
//! The goal (issue 13) is at most 5 % of a single-threaded round trip, whose ~20 lock
//! acquisitions and statistics sections cost 190-400 ns together, so about a nanosecond each:
//!
//! | what | how | cost on the hot path |
//! | --- | --- | --- |
//! | acquisitions (per class and path) | exact: the hold sampler's countdown *is* the count. Each (class, path) slot counts down to its next sampled acquisition, and the acquisitions so far are the ended gaps plus `gap - countdown` (`take_acquisitions`), so counting costs nothing beyond the sampler's decrement | one decrement of a thread-local word |
//! | owner changes (per class) | exact: the lock's last-owner word, beside the lock word, compared with the thread's id; written only on a change | a load and a compare |
//! | held classes (for the "inside" split and to keep nested records out of the outer hold) | a per-class count of held locks, thread-local | one increment, one decrement; the release also tests one flag (`Fast::work`) |
//! | contentions (per class and path) | exact, counted on the contended path only | none when uncontended |
//! | contention | the raw lock's own first attempt says whether it had to wait ([`RawLockWait`]); no extra `try_lock` | none |
//! | wait time | only on the contended path, and there one contended wait in M (per class, [`set_wait_sampling`], default [`DEFAULT_WAIT_SAMPLING`]; picked like the holds, independently with probability 1/M): a clock read before the pick (so that picked and unpicked waits start alike) and one after the wait, the record kept when the wait ends and folded after the release | none when uncontended; when contended (the lock held by another thread, so off the critical path), a clock read and a countdown decrement |
//! | hold time | one hold in N (per class, [`set_hold_sampling`], default [`DEFAULT_HOLD_SAMPLING`]) is timed: each acquisition is picked independently with probability 1/N (a geometric countdown, so the phase is random and no periodic pattern can alias with it) | the same decrement; two clock reads and a record (about 400 instructions) one time in N |
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
//! between every release and the next attempt. Measured on the 2-vCPU machine kind (AMD EPYC,
//! `schedlab compare`, on against off windows of the same runs): that was most of the
//! statistics' cost at two threads (notes/results/2026-12-01-lockstat-cost.md §6).
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

use super::lock_ticks;
use std::cell::{Cell, RefCell};
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
        let i = (FIRST_DYNAMIC as usize..MAX_CLASSES)
            .find(|&i| names[i].is_none())
            .unwrap_or_else(|| panic!("at most {} registered lock classes; cannot add `{name}`", MAX_CLASSES - FIRST_DYNAMIC as usize));
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
/// Why 256: a sample costs about 400 instructions (two clock reads, the histogram record, the
/// next gap's logarithm), against about 30 for the counted acquisition. At 1 in 64 that was
/// 6 instructions per acquisition, 134 of the 583 that the statistics added to a sched-lock
/// round trip (callgrind, notes/results/2026-12-01-lockstat-cost.md §7); at 1 in 256 it is 1.5.
/// A one-second run still times about 15 000 scheduler-lock holds, and every report prints
/// its sample count.
pub const DEFAULT_HOLD_SAMPLING: u32 = 256;
/// The largest hold sampling period.
pub const MAX_SAMPLING: u32 = 1_000_000;

static PERIOD: [AtomicU32; MAX_CLASSES] = [const { AtomicU32::new(DEFAULT_HOLD_SAMPLING) }; MAX_CLASSES];

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

static WAIT_PERIOD: [AtomicU32; MAX_CLASSES] = [const { AtomicU32::new(DEFAULT_WAIT_SAMPLING) }; MAX_CLASSES];

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
    mode & MODE_SPANS != 0 && tracing::Level::TRACE <= STATIC_MAX_LEVEL && tracing::Level::TRACE <= LevelFilter::current()
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
// The per-thread fast state: const-initialised, no destructor, so an access is a plain TLS access.

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
/// Measured on its own, on the Intel machine, neither placement could be told from the other
/// within the noise (notes/results/2026-12-01-lockstat-cost.md §5).
pub const F_NEW_OWNER: u8 = 16;
/// Acquisition flag: timed because exact mode was on (then [`F_SAMPLED`] marks the sampler's
/// pick, which is also recorded apart).
pub const F_EXACT: u8 = 32;
/// Record flag: the contended wait was timed (picked, or exact mode).
pub const F_WAIT_TIMED: u8 = 64;
/// Record flag: the wait sampler picked this contended wait (in exact mode every contended
/// wait is timed, and this says whether the sampled mode would have timed it).
pub const F_WAIT_SAMPLED: u8 = 128;

/// The length of every per-slot and per-class array of [`Fast`]: they are indexed by a byte (a
/// slot is `class << 3 | path`, below 128; a class below 16), so an index is never out of bounds
/// and the hot path needs neither a mask nor a bounds check. Only the first 128 slots and 16
/// classes are used.
const BY_BYTE: usize = 256;

/// The calling thread's measurement state. What an uncontended, unsampled acquisition touches is
/// only `countdown[slot]` (one decrement: it is the count *and* the sampler), `id` (the owner
/// check) and `held[class]` (one increment); its release touches `held[class]` and `work`.
struct Fast {
    /// This thread's owner id (0: not registered yet; registration happens in the sampler's slow
    /// path, which the first acquisition of every slot takes: see `countdown`).
    id: Cell<u32>,
    path: Cell<u8>,
    /// Per class: how many locks of it the thread holds now.
    held: Held,
    /// Whether [`settle`] has work (records kept, gaps used, a wait gap to draw): looked at by
    /// every release, acted on once the thread holds no measured lock.
    work: Cell<bool>,
    /// Timed holds and sections open now.
    timing: Cell<u32>,
    /// Per slot (class × path): acquisitions left up to and including the next sampled one,
    /// never 0 at rest. Starts at 1 with `gap` 0, so that the first acquisition takes the slow
    /// path, which registers the thread and draws the slot's random phase.
    countdown: [Cell<u32>; BY_BYTE],
    /// Per slot: the gap `countdown` started from (0: not drawn yet). The acquisitions of the
    /// current gap are `gap - countdown`: the countdown is the exact count, with no add of its own.
    gap: [Cell<u32>; BY_BYTE],
    /// Per slot: acquisitions of the gaps that ended (each sampled acquisition adds its gap).
    counted: [Cell<u64>; BY_BYTE],
    contentions: [Cell<u64>; BY_BYTE],
    owner_changes: [Cell<u64>; BY_BYTE],
    /// Per class: contended acquisitions left up to and including the next one whose wait is
    /// timed; 0 after a pick until the next gap is drawn (`wait_redraw`).
    wait_countdown: [Cell<u32>; MAX_CLASSES],
    /// Classes whose wait countdown awaits its next gap (a bit each), drawn after the release.
    wait_redraw: Cell<u16>,
    /// Per class: [`SPARE_GAPS`] gaps drawn in advance, so that a sample needs no draw (a
    /// logarithm) inside a hold; replenished outside every lock ([`Fast::refill`]).
    spare_gaps: [Cell<u32>; MAX_CLASSES * SPARE_GAPS],
    /// Per class: how many of its spare gaps are left.
    spares_left: [Cell<u8>; MAX_CLASSES],
    /// Classes that used spare gaps and await fresh draws (a bit each).
    refill: Cell<u16>,
    /// Records of timed holds and contended waits made while the thread still held a measured
    /// lock: kept here and folded once it holds none, so that the bookkeeping of a nested lock
    /// (a counter sum inside the scheduler lock) does not lengthen the outer hold.
    pending: [Cell<Pending>; PENDING],
    npending: Cell<u8>,
    rng: Cell<u64>,
    /// Per sampler (hold samplers by class, then wait samplers by class): the period its factor
    /// was computed for and the factor ([`draw_cached`]).
    gap_scales: [Cell<(u32, f64)>; 2 * MAX_CLASSES],
}

impl Fast {
    // Under loom the state is built by `Fast::boxed` instead (same values).
    #[cfg_attr(loom, allow(dead_code))]
    const fn new() -> Fast {
        Fast {
            id: Cell::new(0),
            path: Cell::new(0),
            held: Held([const { Cell::new(0) }; BY_BYTE]),
            work: Cell::new(false),
            timing: Cell::new(0),
            countdown: [const { Cell::new(1) }; BY_BYTE],
            gap: [const { Cell::new(0) }; BY_BYTE],
            counted: [const { Cell::new(0) }; BY_BYTE],
            contentions: [const { Cell::new(0) }; BY_BYTE],
            owner_changes: [const { Cell::new(0) }; BY_BYTE],
            wait_countdown: [const { Cell::new(0) }; MAX_CLASSES],
            wait_redraw: Cell::new(0),
            spare_gaps: [const { Cell::new(1) }; MAX_CLASSES * SPARE_GAPS],
            spares_left: [const { Cell::new(0) }; MAX_CLASSES],
            refill: Cell::new(0),
            pending: [const { Cell::new(NO_PENDING) }; PENDING],
            npending: Cell::new(0),
            rng: Cell::new(0),
            gap_scales: [const { Cell::new((0, 0.0)) }; 2 * MAX_CLASSES],
        }
    }

    /// The classes held now, a bit each (timed records only).
    fn held_bits(&self) -> u16 {
        let bytes = self.held.word();
        // A byte's high bit after this is set iff the byte is not 0 (no carry crosses bytes).
        const LOW7: u128 = u128::from_ne_bytes([0x7f; 16]);
        let nonzero = (((bytes & LOW7) + LOW7) | bytes) & !LOW7;
        let mut bits = 0u16;
        for i in 0..MAX_CLASSES {
            bits |= (((nonzero >> (8 * i + 7)) & 1) as u16) << i;
        }
        bits
    }

    #[inline(always)]
    fn holds_none(&self) -> bool {
        self.held.word() == 0
    }

    /// The slot of `class` on the thread's current path.
    #[inline(always)]
    fn slot(&self, class: LockClass) -> usize {
        // The path is below NR_PATHS (8): `enter_path` masks it.
        (class.0 << 3 | self.path.get()) as usize
    }
}

/// Per class, how many locks of it a thread holds: one byte each (indexed by the class's byte,
/// see [`BY_BYTE`]), aligned so that the sixteen classes read as one word ("holds none" is one
/// compare).
#[repr(C, align(16))]
struct Held([Cell<u8>; BY_BYTE]);

const _: () = assert!(MAX_CLASSES == 16 && NR_PATHS == 8 && std::mem::size_of::<Held>() == BY_BYTE);

impl Held {
    #[inline(always)]
    fn count(&self, c: usize) -> &Cell<u8> {
        &self.0[c]
    }

    /// The sixteen classes' counts as one little-endian word (byte `i` is class `i`).
    #[inline(always)]
    fn word(&self) -> u128 {
        // SAFETY: `Held` is at least 16 bytes, aligned to 16 (`repr(C, align(16))`, size asserted
        // above); `Cell<u8>` has the layout of `u8`; and the cells are only ever touched by the
        // owning thread (`Fast` is not `Sync`), so no write can race with this read.
        u128::from_le(unsafe { std::ptr::read(self as *const Held as *const u128) })
    }
}

/// A record awaiting its fold (see `Fast::pending`).
#[derive(Clone, Copy)]
struct Pending {
    class: LockClass,
    flags: u8,
    path: u8,
    outer: u16,
    hold: u64,
    wait: u64,
}

const PENDING: usize = 16;
/// Gaps drawn in advance per class: more samples of one class than this inside one outer hold
/// (two at most in practice: eight counter sums per scheduler hold, one in 256 sampled) draw inline.
const SPARE_GAPS: usize = 4;
#[cfg_attr(loom, allow(dead_code))]
const NO_PENDING: Pending = Pending { class: LockClass::NONE, flags: 0, path: 0, outer: 0, hold: 0, wait: 0 };

#[cfg(not(loom))]
thread_local! {
    static FAST: Fast = const { Fast::new() };
    static ACC: AccSlot = const { AccSlot(RefCell::new(None)) };
}

// Under loom every model thread runs on the test's OS thread: `std` thread-locals would be one
// state shared by all of them (one owner id, one held count), so the lock models would see a
// single thread. loom's own thread-locals are per model thread (and per execution).
#[cfg(loom)]
loom::thread_local! {
    static FAST: Box<Fast> = Fast::boxed();
    static ACC: AccSlot = AccSlot(RefCell::new(None));
}

#[cfg(loom)]
impl Fast {
    /// [`Fast::new`] on the heap, built there: a loom thread is a coroutine with a 32 KB stack, and
    /// every scheduler path of every model reaches this state (`enter_path`), so a 10 KB
    /// temporary on that stack overflowed it.
    fn boxed() -> Box<Fast> {
        // SAFETY: every field of `Fast` is a `Cell` (`repr(transparent)`) of integers, a `bool`,
        // an `f64`, a `LockClass` (a `u8`) or `Pending` (a struct of those), or an array of them:
        // all-zero bytes are a valid value of each. The fields whose `new` value is not zero are
        // set below; the rest of `Fast::new` is zero (`Pending`'s `NO_PENDING` included).
        let fast: Box<Fast> = unsafe { Box::<Fast>::new_zeroed().assume_init() };
        for c in &fast.countdown {
            c.set(1);
        }
        for c in &fast.spare_gaps {
            c.set(1);
        }
        fast
    }
}

static NEXT_THREAD_ID: AtomicU32 = AtomicU32::new(1);

/// The calling thread's fast state, without a closure (`LocalKey::with` around a closure this size
/// was not inlined: a call per acquisition).
#[inline(always)]
fn fast<'a>() -> &'a Fast {
    // (Under loom the key holds a `Box<Fast>`: `&**f` is the heap state, which lives as long.)
    #[cfg(not(loom))]
    let f: *const Fast = FAST.with(|f| f as *const Fast);
    #[cfg(loom)]
    let f: *const Fast = FAST.with(|f| &**f as *const Fast);
    // SAFETY: `FAST` has a const initialiser and no destructor, so its storage is valid for the
    // whole life of the thread; the reference is used by the calling function on this thread only
    // and never stored (`Fast` is `!Sync`: its `Cell`s are touched by this thread alone).
    unsafe { &*f }
}

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

/// Gives the thread its owner id, seeds its sampler, and registers the destructor that merges its
/// counts when it exits. (Each slot draws its own random phase at its first acquisition.)
#[cold]
#[inline(never)]
fn register_thread(f: &Fast) -> u32 {
    let id = NEXT_THREAD_ID.fetch_add(1, Ordering::Relaxed).max(1);
    f.id.set(id);
    let seed = (id as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ lock_ticks() ^ ((&f.rng as *const _ as u64) << 17);
    f.rng.set(seed | 1);
    for c in 0..MAX_CLASSES {
        f.wait_countdown[c].set(draw_wait_gap(f, c));
    }
    f.refill.set(u16::MAX);
    refill_gaps(f);
    let _ = ACC.try_with(|_| ());
    id
}

#[inline(always)]
fn bump(cell: &Cell<u64>) {
    cell.set(cell.get() + 1);
}

/// `1 / ln(1 - 1/period)`, the factor that turns `ln(u)` into a geometric gap.
fn gap_scale(period: u32) -> f64 {
    1.0 / (-1.0 / period.max(2) as f64).ln_1p()
}

/// A geometric draw with mean `period` (≥ 1): the number of acquisitions up to and including the
/// next sampled one, when each is sampled independently with probability 1/period. The factor is
/// cached per sampler (`which`: a class's hold sampler, or `MAX_CLASSES +` the class for its wait
/// sampler): one logarithm per draw instead of two.
fn draw_cached(f: &Fast, which: usize, period: u32) -> u32 {
    let cache = &f.gap_scales[which];
    let (cached, mut scale) = cache.get();
    if cached != period {
        scale = gap_scale(period);
        cache.set((period, scale));
    }
    gap_with_scale(f, period, scale)
}

fn gap_with_scale(f: &Fast, period: u32, scale: f64) -> u32 {
    if period <= 1 {
        return 1;
    }
    // xorshift64*
    let mut x = f.rng.get();
    x ^= x >> 12;
    x ^= x << 25;
    x ^= x >> 27;
    f.rng.set(x);
    let bits = x.wrapping_mul(0x2545_F491_4F6C_DD1D) >> 11;
    // u in (0, 1]
    let u = (bits + 1) as f64 / (1u64 << 53) as f64;
    let gap = 1.0 + (u.ln() * scale).floor();
    gap.clamp(1.0, u32::MAX as f64) as u32
}

/// The next gap of class `c`: one drawn in advance while one is left. A draw here, a logarithm
/// before the hold's first stamp, would leak its latency into the timed hold (measured: +30 % on
/// the 12 ns counter-sum holds); only when the spares are used up inside one outer hold is one
/// drawn here. The used ones are drawn again by [`settle`].
fn take_gap(f: &Fast, c: usize) -> u32 {
    f.refill.set(f.refill.get() | (1u16 << c));
    f.work.set(true);
    let left = f.spares_left[c].get();
    let gap = if left > 0 {
        f.spares_left[c].set(left - 1);
        f.spare_gaps[c * SPARE_GAPS + left as usize - 1].get()
    } else {
        draw_cached(f, c, PERIOD[c].load(Ordering::Relaxed))
    };
    gap.max(1)
}

/// An acquisition's count when its slot's countdown, decremented, is `left`: 0 when this
/// acquisition ends its gap (it is the sampled one) or is the slot's first; anything in exact
/// mode, which takes this path every time. Stores the countdown and says whether the sampler
/// picked this acquisition.
#[cold]
#[inline(never)]
fn count_slow(f: &Fast, c: usize, slot: usize, left: u32) -> bool {
    if left != 0 {
        f.countdown[slot].set(left);
        return false;
    }
    if f.id.get() == 0 {
        register_thread(f);
    }
    if f.gap[slot].get() == 0 {
        // The slot's first acquisition: its first gap is its random phase, and this acquisition
        // is the first of that gap.
        let gap = take_gap(f, c);
        f.gap[slot].set(gap);
        if gap > 1 {
            f.countdown[slot].set(gap - 1);
            return false;
        }
    }
    // This acquisition ends its gap: it is sampled, and the next gap starts.
    f.counted[slot].set(f.counted[slot].get() + f.gap[slot].get() as u64);
    let gap = take_gap(f, c);
    f.gap[slot].set(gap);
    f.countdown[slot].set(gap);
    true
}

/// The acquisitions counted in `slot` since the last take (and the counts restart from here).
fn take_acquisitions(f: &Fast, slot: usize) -> u64 {
    let gap = f.gap[slot].get();
    if gap == 0 {
        return 0;
    }
    let left = f.countdown[slot].get();
    f.gap[slot].set(left);
    f.counted[slot].replace(0) + (gap - left) as u64
}

/// A wait gap of class `c`: contended acquisitions up to and including the next timed one.
fn draw_wait_gap(f: &Fast, c: usize) -> u32 {
    draw_cached(f, MAX_CLASSES + c, WAIT_PERIOD[c].load(Ordering::Relaxed)).max(1)
}

/// Draws the next wait gap of every class whose wait sampler picked (see [`contended`]).
fn redraw_wait_gaps(f: &Fast) {
    let mut redraw = f.wait_redraw.replace(0);
    while redraw != 0 {
        let c = redraw.trailing_zeros() as usize;
        redraw &= redraw - 1;
        f.wait_countdown[c].set(draw_wait_gap(f, c));
    }
}

/// Draws fresh spare gaps for the classes that used some (only the used ones: one draw per
/// sample, as without spares).
fn refill_gaps(f: &Fast) {
    let mut refill = f.refill.replace(0);
    while refill != 0 {
        let c = refill.trailing_zeros() as usize;
        refill &= refill - 1;
        let period = PERIOD[c].load(Ordering::Relaxed);
        // Spares are taken from the top: the used ones are those above `spares_left`.
        let left = (f.spares_left[c].get() as usize).min(SPARE_GAPS);
        for slot in &f.spare_gaps[c * SPARE_GAPS + left..(c + 1) * SPARE_GAPS] {
            slot.set(draw_cached(f, c, period));
        }
        f.spares_left[c].set(SPARE_GAPS as u8);
    }
}

/// The thread holds no measured lock any more: fold the records it kept and draw the gaps it
/// used (out of every hold).
#[cold]
#[inline(never)]
fn settle(f: &Fast) {
    f.work.set(false);
    let n = f.npending.replace(0) as usize;
    for cell in &f.pending[..n.min(PENDING)] {
        fold(f, cell.get());
    }
    refill_gaps(f);
    redraw_wait_gaps(f);
}

/// A release found work for [`settle`]: settle if the thread holds no measured lock now.
#[cold]
#[inline(never)]
fn settle_if_free(f: &Fast) {
    if f.holds_none() {
        settle(f);
    }
}

/// The flags of a timed/sampled decision, given the sampler's pick.
#[inline(always)]
fn timing_flags(f: &Fast, sampled: bool, mode: u8) -> u8 {
    if mode & MODE_EXACT != 0 {
        f.timing.set(f.timing.get() + 1);
        return F_TIMED | F_EXACT | if sampled { F_SAMPLED } else { 0 };
    }
    if sampled && f.timing.get() == 0 {
        f.timing.set(1);
        return F_TIMED | F_SAMPLED;
    }
    0
}

/// Called by a measured lock whose first attempt failed, before it waits: counts the contention
/// and says whether to time this wait ([`F_WAIT_TIMED`], [`F_WAIT_SAMPLED`] for the sampler's
/// pick, [`F_EXACT`] in exact mode: the flags to pass to [`waited`]).
///
/// A pick leaves the countdown at 0; the next gap is drawn once the thread holds no measured lock
/// ([`settle`], which the release of this hold reaches), not here: a draw (a logarithm) between
/// the failed attempt and the wait's first clock read would shorten every timed wait by its
/// length (measured: the sampled p99 7 % below the exact one in the accuracy test). Only a
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

/// [`contended`] when the wait countdown is at 1 (this wait is picked) or 0 (a pick whose next
/// gap is not drawn yet).
#[cold]
#[inline(never)]
fn pick_wait(f: &Fast, c: usize, mut left: u32) -> u8 {
    if left == 0 {
        left = draw_wait_gap(f, c);
        f.wait_redraw.set(f.wait_redraw.get() & !(1u16 << c));
        if left > 1 {
            f.wait_countdown[c].set(left - 1);
            return 0;
        }
    }
    f.wait_countdown[c].set(0);
    f.wait_redraw.set(f.wait_redraw.get() | (1u16 << c));
    f.work.set(true);
    F_WAIT_TIMED | F_WAIT_SAMPLED
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
    keep(f, Pending { class, flags: flags & (F_WAIT_TIMED | F_WAIT_SAMPLED | F_EXACT), path: f.path.get(), outer, hold: 0, wait });
}

/// Keeps a record until the thread holds no measured lock ([`settle`] folds it), or folds it now
/// if the list is full.
fn keep(f: &Fast, r: Pending) {
    let n = f.npending.get() as usize;
    if n < PENDING {
        f.pending[n].set(r);
        f.npending.set(n as u8 + 1);
        f.work.set(true);
    } else {
        fold(f, r);
    }
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

/// Records a timed hold into the thread's histograms (after the release), or keeps it while the
/// thread still holds a measured lock.
#[cold]
#[inline(never)]
fn record(f: &Fast, class: LockClass, flags: u8, hold: u64, outer: u16) {
    f.timing.set(f.timing.get().saturating_sub(1));
    let record = Pending { class, flags: flags & (F_TIMED | F_SAMPLED | F_EXACT), path: f.path.get(), outer, hold, wait: 0 };
    if !f.holds_none() {
        // Still inside another measured lock: fold once out of it.
        keep(f, record);
        return;
    }
    fold(f, record);
    settle(f);
}

/// Folds one record into the thread's histograms.
fn fold(_f: &Fast, r: Pending) {
    let Pending { class, flags, path, outer, hold, wait } = r;
    let path = path as usize & (NR_PATHS - 1);
    with_acc(|acc| {
        let c = acc.class(class);
        let p = &mut c.paths[path];
        if flags & F_TIMED != 0 {
            c.hold.record(hold);
            p.hold += hold;
            p.holds_timed += 1;
            // In sampled mode a timed hold is a sampled one and `hold` is the sample itself.
            if flags & (F_EXACT | F_SAMPLED) == F_EXACT | F_SAMPLED {
                c.hold_sample.record(hold);
            }
            for_each_bit(outer, |i| c.hold_inside[i] += hold as u128);
        }
        if flags & F_WAIT_TIMED != 0 {
            c.wait.record(wait);
            p.wait += wait;
            p.waits_timed += 1;
            // In exact mode every wait is timed; the sampler's picks are also recorded apart.
            if flags & (F_EXACT | F_WAIT_SAMPLED) == F_EXACT | F_WAIT_SAMPLED {
                c.wait_sample.record(wait);
            }
            for_each_bit(outer, |i| c.wait_inside[i] += wait as u128);
        }
    });
}

fn for_each_bit(mut bits: u16, mut f: impl FnMut(usize)) {
    while bits != 0 {
        let i = bits.trailing_zeros() as usize;
        bits &= bits - 1;
        f(i);
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

// ---------------------------------------------------------------------------------------------
// Histograms.

/// Highest value a histogram tracks (clock ticks: about an hour of TSC); larger ones are clamped.
const HIGHEST: u64 = 1 << 44;

/// A histogram of clock ticks: `hdrhistogram` (2 significant digits, so percentiles within 1 %)
/// for the distribution, with the exact count, sum, min and max beside it.
#[derive(Clone, Default)]
pub struct Histogram {
    hdr: Option<Box<hdrhistogram::Histogram<u64>>>,
    count: u64,
    sum: u128,
    min: u64,
    max: u64,
}

impl std::fmt::Debug for Histogram {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Histogram {{ count: {}, sum: {}, max: {} }}", self.count, self.sum, self.max)
    }
}

fn new_hdr() -> Box<hdrhistogram::Histogram<u64>> {
    Box::new(hdrhistogram::Histogram::new_with_bounds(1, HIGHEST, 2).expect("valid histogram bounds"))
}

impl Histogram {
    pub fn new() -> Self {
        Self::default()
    }

    #[inline]
    pub fn record(&mut self, v: u64) {
        self.hdr.get_or_insert_with(new_hdr).saturating_record(v.clamp(1, HIGHEST));
        if self.count == 0 || v < self.min {
            self.min = v;
        }
        self.count += 1;
        self.sum += v as u128;
        self.max = self.max.max(v);
    }

    pub fn merge(&mut self, other: &Histogram) {
        let Some(theirs) = &other.hdr else { return };
        self.hdr.get_or_insert_with(new_hdr).add(&**theirs).expect("histograms of the same bounds");
        if self.count == 0 || other.min < self.min {
            self.min = other.min;
        }
        self.count += other.count;
        self.sum += other.sum;
        self.max = self.max.max(other.max);
    }

    pub fn count(&self) -> u64 {
        self.count
    }

    pub fn sum(&self) -> u128 {
        self.sum
    }

    pub fn max(&self) -> u64 {
        self.max
    }

    pub fn min(&self) -> u64 {
        if self.count == 0 {
            0
        } else {
            self.min
        }
    }

    pub fn mean(&self) -> f64 {
        if self.count == 0 {
            0.0
        } else {
            self.sum as f64 / self.count as f64
        }
    }

    /// The value below which a fraction `q` (0..=1) of the values lie (within 1 %, clamped to the
    /// exact min and max); 0 when empty.
    pub fn quantile(&self, q: f64) -> u64 {
        match &self.hdr {
            Some(h) if self.count > 0 => h.value_at_quantile(q.clamp(0.0, 1.0)).clamp(self.min, self.max),
            _ => 0,
        }
    }

    /// The standard deviation (from the histogram's buckets, within 1 %).
    pub fn stdev(&self) -> f64 {
        self.hdr.as_ref().filter(|_| self.count > 1).map_or(0.0, |h| h.stdev())
    }

    /// The fraction of values at or below `v` (0..=1).
    pub fn rank_of(&self, v: u64) -> f64 {
        match &self.hdr {
            Some(h) if self.count > 0 => h.count_between(0, v) as f64 / h.len() as f64,
            _ => 0.0,
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Accumulators: per thread, then global.

/// Everything counted for one class. Times are in raw clock ticks.
#[derive(Clone, Debug, Default)]
pub struct ClassStats {
    /// Every acquisition made while measuring (exact).
    pub acquisitions: u64,
    /// Acquisitions whose first attempt failed (exact).
    pub contentions: u64,
    /// Acquisitions by another thread than the previous holder (exact).
    pub owner_changes: u64,
    /// Timed waits of contended acquisitions: every one in exact mode, one in
    /// [`wait_sampling`] otherwise (`wait.count()` is the sample count; exact when it equals
    /// `contentions`).
    pub wait: Histogram,
    /// Exact mode only: the waits the wait sampler picked, i.e. what the sampled mode would have
    /// timed in the same run.
    pub wait_sample: Histogram,
    /// Timed holds: every hold in exact mode, the sample otherwise (`hold.count()` is the sample
    /// count; the figures are exact when it equals `acquisitions`).
    pub hold: Histogram,
    /// Exact mode only: the holds the sampler picked, i.e. what the sampled mode would have timed
    /// in the same run.
    pub hold_sample: Histogram,
    pub paths: [PathStats; NR_PATHS],
    /// Timed hold of this class while the thread also held the class of that index.
    pub hold_inside: [u128; MAX_CLASSES],
    /// Wait of this class while the thread held the class of that index.
    pub wait_inside: [u128; MAX_CLASSES],
}

/// The part of a class's counts that one path did (ticks).
#[derive(Clone, Copy, Debug, Default)]
pub struct PathStats {
    pub acquisitions: u64,
    pub contentions: u64,
    /// Sum of the timed waits, and how many there were.
    pub wait: u64,
    pub waits_timed: u64,
    /// Sum of the timed holds, and how many there were.
    pub hold: u64,
    pub holds_timed: u64,
}

impl ClassStats {
    pub fn merge(&mut self, o: &ClassStats) {
        self.acquisitions += o.acquisitions;
        self.contentions += o.contentions;
        self.owner_changes += o.owner_changes;
        self.wait.merge(&o.wait);
        self.hold.merge(&o.hold);
        self.hold_sample.merge(&o.hold_sample);
        self.wait_sample.merge(&o.wait_sample);
        for (a, b) in self.paths.iter_mut().zip(&o.paths) {
            a.acquisitions += b.acquisitions;
            a.contentions += b.contentions;
            a.wait += b.wait;
            a.waits_timed += b.waits_timed;
            a.hold += b.hold;
            a.holds_timed += b.holds_timed;
        }
        for i in 0..MAX_CLASSES {
            self.hold_inside[i] += o.hold_inside[i];
            self.wait_inside[i] += o.wait_inside[i];
        }
    }

    /// Whether every hold was timed (exact mode, or sampling 1 in 1).
    pub fn holds_exact(&self) -> bool {
        self.hold.count() >= self.acquisitions
    }

    /// Whether every contended wait was timed (exact mode, or wait sampling 1 in 1).
    pub fn waits_exact(&self) -> bool {
        self.wait.count() >= self.contentions
    }
}

/// A copy of the table: every class that was acquired at least once while measuring.
#[derive(Clone, Debug, Default)]
pub struct LockStats {
    pub classes: Vec<(LockClass, ClassStats)>,
}

impl LockStats {
    /// Adds another table (of another run) into this one.
    pub fn merge(&mut self, other: &LockStats) {
        for (class, stats) in &other.classes {
            match self.classes.iter_mut().find(|(c, _)| c == class) {
                Some((_, mine)) => mine.merge(stats),
                None => self.classes.push((*class, stats.clone())),
            }
        }
        self.classes.sort_by_key(|(c, _)| *c);
    }

    /// The counts of one class, if it was seen.
    pub fn class(&self, class: LockClass) -> Option<&ClassStats> {
        self.classes.iter().find(|(c, _)| *c == class).map(|(_, s)| s)
    }
}

struct Acc {
    generation: u64,
    classes: [Option<Box<ClassStats>>; MAX_CLASSES],
}

impl Acc {
    fn new(generation: u64) -> Self {
        Acc { generation, classes: Default::default() }
    }

    fn class(&mut self, class: LockClass) -> &mut ClassStats {
        self.classes[class.index()].get_or_insert_with(Default::default)
    }
}

struct AccSlot(RefCell<Option<Box<Acc>>>);

impl Drop for AccSlot {
    fn drop(&mut self) {
        // The thread exits: its counts (FAST has no destructor, so it is still there) and its
        // histograms go to the global table.
        let mut acc = self.0.get_mut().take();
        let _ = FAST.try_with(|f| fold_counts(f, &mut acc));
        if let Some(acc) = acc {
            merge_global(&acc);
        }
    }
}

/// Runs `f` on the calling thread's accumulator of the current generation (nothing if the thread's
/// thread-locals are being destroyed).
fn with_acc(f: impl FnOnce(&mut Acc)) {
    let _ = ACC.try_with(|slot| {
        let generation = GENERATION.load(Ordering::Relaxed);
        let mut slot = slot.0.borrow_mut();
        let acc = slot.get_or_insert_with(|| Box::new(Acc::new(generation)));
        if acc.generation != generation {
            **acc = Acc::new(generation);
        }
        f(acc);
    });
}

/// Moves the thread's exact counters into `acc` (creating it) and zeroes them.
fn fold_counts(f: &Fast, acc: &mut Option<Box<Acc>>) {
    let generation = GENERATION.load(Ordering::Relaxed);
    for c in 0..MAX_CLASSES {
        let owner_changes = f.owner_changes[c].replace(0);
        let mut any = owner_changes != 0;
        let mut per_path = [(0u64, 0u64); NR_PATHS];
        for (p, counts) in per_path.iter_mut().enumerate() {
            let slot = c * NR_PATHS + p;
            *counts = (take_acquisitions(f, slot), f.contentions[slot].replace(0));
            any |= counts.0 != 0 || counts.1 != 0;
        }
        if !any {
            continue;
        }
        let a = acc.get_or_insert_with(|| Box::new(Acc::new(generation)));
        if a.generation != generation {
            **a = Acc::new(generation);
        }
        let s = a.class(LockClass::from_index(c));
        s.owner_changes += owner_changes;
        for (p, (n, k)) in per_path.into_iter().enumerate() {
            s.acquisitions += n;
            s.contentions += k;
            s.paths[p].acquisitions += n;
            s.paths[p].contentions += k;
        }
    }
}

/// Bumped by [`reset`]: per-thread histograms of an older generation are dropped, never merged.
static GENERATION: AtomicU64 = AtomicU64::new(1);

struct Global {
    generation: u64,
    classes: [Option<Box<ClassStats>>; MAX_CLASSES],
}

static GLOBAL: Mutex<Global> = Mutex::new(Global { generation: 1, classes: [const { None }; MAX_CLASSES] });

fn merge_global(acc: &Acc) {
    let mut g = GLOBAL.lock().unwrap_or_else(|e| e.into_inner());
    if g.generation != acc.generation {
        return;
    }
    for (mine, theirs) in g.classes.iter_mut().zip(&acc.classes) {
        if let Some(t) = theirs {
            mine.get_or_insert_with(Default::default).merge(t);
        }
    }
}

/// Merges the calling thread's counts into the global table (threads also do it when they exit).
pub fn flush() {
    let f = fast();
    if f.holds_none() && f.work.get() {
        settle(f);
    }
    let _ = ACC.try_with(|slot| {
        let mut acc = slot.0.borrow_mut().take();
        FAST.with(|f| fold_counts(f, &mut acc));
        if let Some(acc) = acc {
            merge_global(&acc);
        }
    });
}

/// Clears the global table and the calling thread's counts, and starts a new generation.
pub fn reset() {
    let mut g = GLOBAL.lock().unwrap_or_else(|e| e.into_inner());
    let generation = GENERATION.fetch_add(1, Ordering::Relaxed) + 1;
    g.generation = generation;
    g.classes = Default::default();
    drop(g);
    let _ = ACC.try_with(|slot| slot.0.borrow_mut().take());
    FAST.with(|f| {
        let mut none = None;
        fold_counts(f, &mut none);
        f.npending.set(0);
    });
}

/// Flushes the calling thread, then copies the global table.
pub fn snapshot() -> LockStats {
    flush();
    let g = GLOBAL.lock().unwrap_or_else(|e| e.into_inner());
    let classes = g
        .classes
        .iter()
        .enumerate()
        .filter_map(|(i, c)| c.as_ref().map(|c| (LockClass::from_index(i), (**c).clone())))
        .collect();
    LockStats { classes }
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
            assert!((mean - period as f64).abs() <= 6.0 * se + 1e-9, "period {period}: mean gap {mean}");
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
