//! The per-thread sampler: the thread-local fast state a measured acquisition touches (one
//! countdown per class and path that is both the exact count and the hold sampler, the held
//! classes, the wait countdowns), the geometric gaps it draws, and the records of timed holds and
//! waits kept until the thread holds no measured lock. The cost model is the parent's doc.

use super::*;
use std::cell::Cell;

// The per-thread fast state: const-initialised, no destructor, so an access is a plain TLS access.

/// The length of every per-slot and per-class array of [`Fast`]: they are indexed by a byte (a
/// slot is `class << 3 | path`, below 128; a class below 16), so an index is never out of bounds
/// and the hot path needs neither a mask nor a bounds check. Only the first 128 slots and 16
/// classes are used.
pub(super) const BY_BYTE: usize = 256;

/// The calling thread's measurement state. What an uncontended, unsampled acquisition touches is
/// only `countdown[slot]` (one decrement: it is the count *and* the sampler), `id` (the owner
/// check) and `held[class]` (one increment); its release touches `held[class]` and `work`.
pub(super) struct Fast {
    /// This thread's owner id (0: not registered yet; registration happens in the sampler's slow
    /// path, which the first acquisition of every slot takes: see `countdown`).
    pub(super) id: Cell<u32>,
    pub(super) path: Cell<u8>,
    /// Per class: how many locks of it the thread holds now.
    pub(super) held: Held,
    /// Whether [`settle`] has work (records kept, gaps used, a wait gap to draw): looked at by
    /// every release, acted on once the thread holds no measured lock.
    pub(super) work: Cell<bool>,
    /// Timed holds and sections open now.
    pub(super) timing: Cell<u32>,
    /// Per slot (class × path): acquisitions left up to and including the next sampled one,
    /// never 0 at rest. Starts at 1 with `gap` 0, so that the first acquisition takes the slow
    /// path, which registers the thread and draws the slot's random phase.
    pub(super) countdown: [Cell<u32>; BY_BYTE],
    /// Per slot: the gap `countdown` started from (0: not drawn yet). The acquisitions of the
    /// current gap are `gap - countdown`: the countdown is the exact count, with no add of its own.
    pub(super) gap: [Cell<u32>; BY_BYTE],
    /// Per slot: acquisitions of the gaps that ended (each sampled acquisition adds its gap).
    pub(super) counted: [Cell<u64>; BY_BYTE],
    pub(super) contentions: [Cell<u64>; BY_BYTE],
    pub(super) owner_changes: [Cell<u64>; BY_BYTE],
    /// Per class: contended acquisitions left up to and including the next one whose wait is
    /// timed; 0 after a pick until the next gap is drawn (`wait_redraw`).
    pub(super) wait_countdown: [Cell<u32>; MAX_CLASSES],
    /// Classes whose wait countdown awaits its next gap (a bit each), drawn after the release.
    pub(super) wait_redraw: Cell<u16>,
    /// Per class: [`SPARE_GAPS`] gaps drawn in advance, so that a sample needs no draw (a
    /// logarithm) inside a hold; replenished outside every lock ([`Fast::refill`]).
    pub(super) spare_gaps: [Cell<u32>; MAX_CLASSES * SPARE_GAPS],
    /// Per class: how many of its spare gaps are left.
    pub(super) spares_left: [Cell<u8>; MAX_CLASSES],
    /// Classes that used spare gaps and await fresh draws (a bit each).
    pub(super) refill: Cell<u16>,
    /// Records of timed holds and contended waits made while the thread still held a measured
    /// lock: kept here and folded once it holds none, so that the bookkeeping of a nested lock
    /// (a counter sum inside the scheduler lock) does not lengthen the outer hold.
    pub(super) pending: [Cell<Pending>; PENDING],
    pub(super) npending: Cell<u8>,
    pub(super) rng: Cell<u64>,
    /// Per sampler (hold samplers by class, then wait samplers by class): the period its factor
    /// was computed for and the factor ([`draw_cached`]).
    pub(super) gap_scales: [Cell<(u32, f64)>; 2 * MAX_CLASSES],
}

impl Fast {
    // Under loom the state is built by `Fast::boxed` instead (same values).
    #[cfg_attr(loom, allow(dead_code))]
    pub(super) const fn new() -> Fast {
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
    pub(super) fn held_bits(&self) -> u16 {
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
    pub(super) fn holds_none(&self) -> bool {
        self.held.word() == 0
    }

    /// The slot of `class` on the thread's current path.
    #[inline(always)]
    pub(super) fn slot(&self, class: LockClass) -> usize {
        // The path is below NR_PATHS (8): `enter_path` masks it.
        (class.0 << 3 | self.path.get()) as usize
    }
}

/// Per class, how many locks of it a thread holds: one byte each (indexed by the class's byte,
/// see [`BY_BYTE`]), aligned so that the sixteen classes read as one word ("holds none" is one
/// compare).
#[repr(C, align(16))]
pub(super) struct Held(pub(super) [Cell<u8>; BY_BYTE]);

const _: () = assert!(MAX_CLASSES == 16 && NR_PATHS == 8 && std::mem::size_of::<Held>() == BY_BYTE);

impl Held {
    #[inline(always)]
    pub(super) fn count(&self, c: usize) -> &Cell<u8> {
        &self.0[c]
    }

    /// The sixteen classes' counts as one little-endian word (byte `i` is class `i`).
    #[inline(always)]
    pub(super) fn word(&self) -> u128 {
        // SAFETY: `Held` is at least 16 bytes, aligned to 16 (`repr(C, align(16))`, size asserted
        // above); `Cell<u8>` has the layout of `u8`; and the cells are only ever touched by the
        // owning thread (`Fast` is not `Sync`), so no write can race with this read.
        u128::from_le(unsafe { std::ptr::read(self as *const Held as *const u128) })
    }
}

/// A record awaiting its fold (see `Fast::pending`).
#[derive(Clone, Copy)]
pub(super) struct Pending {
    pub(super) class: LockClass,
    pub(super) flags: u8,
    pub(super) path: u8,
    pub(super) outer: u16,
    pub(super) hold: u64,
    pub(super) wait: u64,
}

pub(super) const PENDING: usize = 16;
/// Gaps drawn in advance per class: more samples of one class than this inside one outer hold
/// (two at most in practice: eight counter sums per scheduler hold, one in 256 sampled) draw inline.
pub(super) const SPARE_GAPS: usize = 4;
#[cfg_attr(loom, allow(dead_code))]
pub(super) const NO_PENDING: Pending =
    Pending { class: LockClass::NONE, flags: 0, path: 0, outer: 0, hold: 0, wait: 0 };

#[cfg(not(loom))]
thread_local! {
    pub(super) static FAST: Fast = const { Fast::new() };
}

// Under loom every model thread runs on the test's OS thread: `std` thread-locals would be one
// state shared by all of them (one owner id, one held count), so the lock models would see a
// single thread. loom's own thread-locals are per model thread (and per execution).
#[cfg(loom)]
loom::thread_local! {
    pub(super) static FAST: Box<Fast> = Fast::boxed();
}

#[cfg(loom)]
impl Fast {
    /// [`Fast::new`] on the heap, built there: a loom thread is a coroutine with a 32 KB stack, and
    /// every scheduler path of every model reaches this state (`enter_path`), so a 10 KB
    /// temporary on that stack overflowed it.
    pub(super) fn boxed() -> Box<Fast> {
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

pub(super) static NEXT_THREAD_ID: AtomicU32 = AtomicU32::new(1);

/// The calling thread's fast state, without a closure (`LocalKey::with` around a closure this size
/// was not inlined: a call per acquisition).
#[inline(always)]
pub(super) fn fast<'a>() -> &'a Fast {
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

/// Gives the thread its owner id, seeds its sampler, and registers the destructor that merges its
/// counts when it exits. (Each slot draws its own random phase at its first acquisition.)
#[cold]
#[inline(never)]
pub(super) fn register_thread(f: &Fast) -> u32 {
    let id = NEXT_THREAD_ID.fetch_add(1, Ordering::Relaxed).max(1);
    f.id.set(id);
    let seed = (id as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15)
        ^ lock_ticks()
        ^ ((&f.rng as *const _ as u64) << 17);
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
pub(super) fn bump(cell: &Cell<u64>) {
    cell.set(cell.get() + 1);
}

/// `1 / ln(1 - 1/period)`, the factor that turns `ln(u)` into a geometric gap.
pub(super) fn gap_scale(period: u32) -> f64 {
    1.0 / (-1.0 / period.max(2) as f64).ln_1p()
}

/// A geometric draw with mean `period` (≥ 1): the number of acquisitions up to and including the
/// next sampled one, when each is sampled independently with probability 1/period. The factor is
/// cached per sampler (`which`: a class's hold sampler, or `MAX_CLASSES +` the class for its wait
/// sampler): one logarithm per draw instead of two.
pub(super) fn draw_cached(f: &Fast, which: usize, period: u32) -> u32 {
    let cache = &f.gap_scales[which];
    let (cached, mut scale) = cache.get();
    if cached != period {
        scale = gap_scale(period);
        cache.set((period, scale));
    }
    gap_with_scale(f, period, scale)
}

pub(super) fn gap_with_scale(f: &Fast, period: u32, scale: f64) -> u32 {
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
/// before the hold's first stamp, would leak its latency into the timed hold (the short
/// counter-sum holds most of all); only when the spares are used up inside one outer hold is one
/// drawn here. The used ones are drawn again by [`settle`].
pub(super) fn take_gap(f: &Fast, c: usize) -> u32 {
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
pub(super) fn count_slow(f: &Fast, c: usize, slot: usize, left: u32) -> bool {
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
pub(super) fn take_acquisitions(f: &Fast, slot: usize) -> u64 {
    let gap = f.gap[slot].get();
    if gap == 0 {
        return 0;
    }
    let left = f.countdown[slot].get();
    f.gap[slot].set(left);
    f.counted[slot].replace(0) + (gap - left) as u64
}

/// A wait gap of class `c`: contended acquisitions up to and including the next timed one.
pub(super) fn draw_wait_gap(f: &Fast, c: usize) -> u32 {
    draw_cached(f, MAX_CLASSES + c, WAIT_PERIOD[c].load(Ordering::Relaxed)).max(1)
}

/// Draws the next wait gap of every class whose wait sampler picked (see [`contended`]).
pub(super) fn redraw_wait_gaps(f: &Fast) {
    let mut redraw = f.wait_redraw.replace(0);
    while redraw != 0 {
        let c = redraw.trailing_zeros() as usize;
        redraw &= redraw - 1;
        f.wait_countdown[c].set(draw_wait_gap(f, c));
    }
}

/// Draws fresh spare gaps for the classes that used some (only the used ones: one draw per
/// sample, as without spares).
pub(super) fn refill_gaps(f: &Fast) {
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
pub(super) fn settle(f: &Fast) {
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
pub(super) fn settle_if_free(f: &Fast) {
    if f.holds_none() {
        settle(f);
    }
}

/// The flags of a timed/sampled decision, given the sampler's pick.
#[inline(always)]
pub(super) fn timing_flags(f: &Fast, sampled: bool, mode: u8) -> u8 {
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

/// [`contended`] when the wait countdown is at 1 (this wait is picked) or 0 (a pick whose next
/// gap is not drawn yet).
#[cold]
#[inline(never)]
pub(super) fn pick_wait(f: &Fast, c: usize, mut left: u32) -> u8 {
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

/// Keeps a record until the thread holds no measured lock ([`settle`] folds it), or folds it now
/// if the list is full.
pub(super) fn keep(f: &Fast, r: Pending) {
    let n = f.npending.get() as usize;
    if n < PENDING {
        f.pending[n].set(r);
        f.npending.set(n as u8 + 1);
        f.work.set(true);
    } else {
        fold(f, r);
    }
}

/// Records a timed hold into the thread's histograms (after the release), or keeps it while the
/// thread still holds a measured lock.
#[cold]
#[inline(never)]
pub(super) fn record(f: &Fast, class: LockClass, flags: u8, hold: u64, outer: u16) {
    f.timing.set(f.timing.get().saturating_sub(1));
    let record = Pending {
        class,
        flags: flags & (F_TIMED | F_SAMPLED | F_EXACT),
        path: f.path.get(),
        outer,
        hold,
        wait: 0,
    };
    if !f.holds_none() {
        // Still inside another measured lock: fold once out of it.
        keep(f, record);
        return;
    }
    fold(f, record);
    settle(f);
}
