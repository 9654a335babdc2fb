//! The two lock kinds of the real build, as raw locks, and the measurement that wraps any raw lock
//! (lock_api's split: a raw trait, a safe wrapper).
//!
//! | type | what it is |
//! | --- | --- |
//! | [`TicketLock`] | a FIFO ticket spinlock, a `lock_api::RawMutex` of its own |
//! | `parking_lot::RawMutex` | parking_lot's adaptive, unfair mutex |
//! | [`RawKindLock`] | one of the two, picked at run time (one predictable branch per call) |
//! | [`Measured<R>`] | any [`RawLockWait`] raw lock plus a class and a last-owner word; its per-acquisition guard state is one word: the acquisition's flags and the hold's stamp, or a pointer to a traced hold's span and stamp |
//! | [`Lock<T>`] | `lock_api::Mutex<Measured<RawKindLock>, T>`: the guard is the only way to the data |
//!
//! The measurement itself (counters, sampling, histograms) is `super::measure`; the spans are made
//! by the hooks the layer above installed there.
//!
//! ## Under a checker
//!
//! The scheduler's [`Lock`](super::Lock) is the checker's `Mutex` under loom and shuttle, but the
//! raw locks themselves are compiled there too, on the facade's atomics (the checker's), so that
//! `schedlab-verify` model-checks this very code (`verify/src/locks.rs`): [`TicketLock`] and
//! [`Measured`] are the same source in every build. What differs under a checker:
//! - the atomics are the checker's, so no constructor can be `const`, and lock_api's
//!   `RawMutex::INIT` (a `const`) is a compile-time error if anything uses it there (nothing
//!   does: models build their locks with `new`);
//! - a waiter yields to the checker on every poll (a spin the checker cannot see would never end);
//! - parking_lot and [`RawKindLock`] are left out (parking_lot is taken as given).
//!
//! With the core's `fault-injection` feature (on only in the model-checking builds of
//! `schedlab-verify`), [`weakened`] lets a negative control weaken one of these orderings at a
//! time (`crate::fault` names them); without it every ordering is the constant written here.

use super::lock_ticks;
use super::measure::{
    self, LockClass, F_MEASURED, F_NEW_OWNER, F_TIMED, F_TRACED, F_WAIT_TIMED, MODE_ENABLED,
};
#[cfg(not(any(loom, shuttle)))]
use super::LockKind;
use super::{AtomicU32, Ordering};
use lock_api::{GuardNoSend, RawMutex};
use std::marker::PhantomData;

/// Orderings of this file that a negative control can weaken to `Relaxed`, one bit each
/// (feature `fault-injection` only: `crate::fault` maps its named faults onto these bits). A
/// plain `std` atomic: an oracle switch, outside what the checkers explore.
#[cfg(feature = "fault-injection")]
pub mod weakened {
    use std::sync::atomic::{AtomicU32, Ordering};

    /// `TicketLock::lock_or_queue`: the Acquire load of `serving` that admits a ticket at once.
    pub const TICKET_FIRST_ATTEMPT_ACQUIRE: u32 = 1 << 0;
    /// `TicketLock::lock_slow`: the Acquire load of `serving` that admits a queued ticket.
    pub const TICKET_WAIT_ACQUIRE: u32 = 1 << 1;
    /// `TicketLock::try_lock`: the Acquire load of `serving` that the ticket compare-exchange checks.
    pub const TICKET_TRY_ACQUIRE: u32 = 1 << 2;
    /// `TicketLock::unlock`: the Release store of `serving`.
    pub const TICKET_RELEASE: u32 = 1 << 3;
    /// `Measured`: the owner word written *after* the raw unlock instead of before it (not an
    /// ordering of an atomic, but of the two writes: the word then leaves the hold).
    pub const OWNER_AFTER_RELEASE: u32 = 1 << 4;

    static BITS: AtomicU32 = AtomicU32::new(0);

    /// Weakens the orderings in `bits` for the rest of the process.
    pub fn set(bits: u32) {
        BITS.fetch_or(bits, Ordering::Relaxed);
    }

    /// Restores every ordering.
    pub fn clear() {
        BITS.store(0, Ordering::Relaxed);
    }

    #[inline(always)]
    pub(super) fn on(bit: u32) -> bool {
        BITS.load(Ordering::Relaxed) & bit != 0
    }
}

/// `normal`, or `Relaxed` when a negative control weakened `_bit` (feature `fault-injection`).
#[inline(always)]
fn ordering(normal: Ordering, _bit: u32) -> Ordering {
    #[cfg(feature = "fault-injection")]
    if weakened::on(_bit) {
        return Ordering::Relaxed;
    }
    normal
}

/// Whether a negative control moved the owner word's write after the release.
#[inline(always)]
fn owner_after_release() -> bool {
    #[cfg(feature = "fault-injection")]
    return weakened::on(weakened::OWNER_AFTER_RELEASE);
    #[cfg(not(feature = "fault-injection"))]
    false
}

#[cfg(not(feature = "fault-injection"))]
use self::no_faults::{
    TICKET_FIRST_ATTEMPT_ACQUIRE, TICKET_RELEASE, TICKET_TRY_ACQUIRE, TICKET_WAIT_ACQUIRE,
};
#[cfg(feature = "fault-injection")]
use weakened::{
    TICKET_FIRST_ATTEMPT_ACQUIRE, TICKET_RELEASE, TICKET_TRY_ACQUIRE, TICKET_WAIT_ACQUIRE,
};
#[cfg(not(feature = "fault-injection"))]
mod no_faults {
    pub const TICKET_FIRST_ATTEMPT_ACQUIRE: u32 = 0;
    pub const TICKET_WAIT_ACQUIRE: u32 = 0;
    pub const TICKET_TRY_ACQUIRE: u32 = 0;
    pub const TICKET_RELEASE: u32 = 0;
}

/// How many polls a ticket waiter makes before it gives its CPU away once. It keeps its ticket, so
/// FIFO order survives the yield. Why 64 (a larger budget costs most when threads outnumber
/// CPUs): notes/kernel-map.md D39.
///
/// NOTE: the kernel's queued spinlock never yields. Here threads can outnumber CPUs (tests run
/// in parallel, the OS preempts), and a FIFO lock whose next owner is descheduled stalls every
/// waiter behind it; yielding after a spin budget keeps FIFO order (the ticket is kept) while
/// letting the preempted owner run. With threads <= CPUs the budget is rarely reached.
#[cfg(not(any(loom, shuttle)))]
const SPINS_BEFORE_YIELD: u32 = 64;

/// Gives the CPU away once (`sched_yield`), from this function's own code on x86-64 Linux.
///
/// NOTE: the same system call as `std::thread::yield_now`, issued here rather than through libc's
/// wrapper so that a profiler's sample taken while a waiter yields lands in the lock's own frames:
/// pprof drops samples whose interrupted instruction is inside libc (unwinding from there can
/// deadlock), and with two threads on a contended fair lock that dropped about a third of the
/// samples (notes/flamegraphs.md).
#[cfg(not(any(loom, shuttle)))]
#[inline]
fn yield_cpu() {
    #[cfg(all(target_arch = "x86_64", target_os = "linux"))]
    // SAFETY: `sched_yield` (24 on x86-64) takes no arguments and touches no memory of ours; the
    // `syscall` instruction clobbers rcx and r11 and returns in rax, all declared.
    unsafe {
        std::arch::asm!("syscall", inlateout("rax") 24usize => _, lateout("rcx") _, lateout("r11") _, options(nostack));
    }
    #[cfg(not(all(target_arch = "x86_64", target_os = "linux")))]
    std::thread::yield_now();
}

/// A raw lock whose acquisition can say whether it had to wait, at no cost beyond its own first
/// attempt: the ticket lock's `fetch_add` either finds its turn or queues; parking_lot's fast
/// path is a `try_lock` anyway.
///
/// # Safety
/// `lock_or_queue` returning `Ok` and `wait_queued` returning at all must mean that the caller
/// holds the lock, exactly as `RawMutex::lock` does; a `Queued` value must be passed to
/// `wait_queued` of the same lock (a queued ticket that is never waited for stalls the lock).
pub unsafe trait RawLockWait: RawMutex {
    /// A queued acquisition (the ticket lock: the ticket).
    type Queued;
    /// Takes the lock at once, or queues for it.
    fn lock_or_queue(&self) -> Result<Self::Guard, Self::Queued>;
    /// Waits for a queued acquisition.
    fn wait_queued(&self, queued: Self::Queued) -> Self::Guard;
}

/// A FIFO ticket spinlock: `next` hands out tickets, `serving` says whose turn it is.
///
/// | word | written by | meaning |
/// | --- | --- | --- |
/// | `next` | every acquirer (`fetch_add`) | the ticket the next acquirer gets |
/// | `serving` | only the holder (on unlock) | the ticket that may enter |
///
/// Both words share a cache line, as the kernel's ticket lock shares one word.
pub struct TicketLock {
    pub(in crate::sync) next: AtomicU32,
    serving: AtomicU32,
}

impl Default for TicketLock {
    fn default() -> Self {
        Self::new()
    }
}

impl TicketLock {
    #[cfg(not(any(loom, shuttle)))]
    pub const fn new() -> Self {
        TicketLock { next: AtomicU32::new(0), serving: AtomicU32::new(0) }
    }

    /// Under a checker its atomics are the checker's, which have no `const` constructor.
    #[cfg(any(loom, shuttle))]
    pub fn new() -> Self {
        TicketLock { next: AtomicU32::new(0), serving: AtomicU32::new(0) }
    }

    /// Whether a thread besides the holder has taken a ticket (is queued).
    pub fn has_waiters(&self) -> bool {
        self.next.load(Ordering::Relaxed).wrapping_sub(self.serving.load(Ordering::Relaxed)) > 1
    }

    #[cold]
    fn lock_slow(&self, ticket: u32) {
        let mut spins = 0u32;
        // Acquire pairs with the Release store in `unlock` of the previous holder.
        while self.serving.load(ordering(Ordering::Acquire, TICKET_WAIT_ACQUIRE)) != ticket {
            spin_once(&mut spins);
        }
    }
}

/// One poll of a spinning waiter: a `pause`, and the CPU given away every
/// [`SPINS_BEFORE_YIELD`] polls.
#[cfg(not(any(loom, shuttle)))]
#[inline]
fn spin_once(spins: &mut u32) {
    std::hint::spin_loop();
    *spins += 1;
    if *spins == SPINS_BEFORE_YIELD {
        *spins = 0;
        yield_cpu();
    }
}

/// Under a checker every poll yields to it: a spin it cannot see would never let the holder run.
#[cfg(any(loom, shuttle))]
#[inline]
fn spin_once(_spins: &mut u32) {
    super::thread::yield_now();
}

// SAFETY: a ticket admits exactly one holder: `serving` moves on only in `unlock`, written by the
// holder alone; Acquire on the `serving` load that admits a ticket pairs with the Release store of
// the previous holder's `unlock`, so the critical sections are ordered. The guard is stateless.
unsafe impl RawMutex for TicketLock {
    #[cfg(not(any(loom, shuttle)))]
    #[allow(clippy::declare_interior_mutable_const)]
    const INIT: Self = TicketLock::new();
    // Evaluated only if used: a compile-time error in a checker build that asks for it.
    #[cfg(any(loom, shuttle))]
    const INIT: Self = panic!("under a checker a TicketLock is made with TicketLock::new (the checker's atomics are not const)");
    type Guard = GuardNoSend;

    #[inline]
    fn lock(&self) -> GuardNoSend {
        if let Err(ticket) = self.lock_or_queue() {
            self.lock_slow(ticket);
        }
        GuardNoSend::new()
    }

    #[inline]
    fn try_lock(&self) -> Option<GuardNoSend> {
        // Acquire on this load, not on the compare-exchange: the previous holder published its
        // critical section with its Release store to `serving`, and nothing releases `next` (its
        // `fetch_add`s are Relaxed), so an Acquire on `next` synchronises with nobody. (It was
        // Relaxed here and Acquire on `next` until loom's `try_lock_publishes` model showed the
        // next holder reading the previous hold's data unordered; x86 hid it.) The
        // compare-exchange then only checks that no ticket was taken since: if none was, the
        // ticket `serving` names is free, and it is ours.
        let serving = self.serving.load(ordering(Ordering::Acquire, TICKET_TRY_ACQUIRE));
        self.next
            .compare_exchange(
                serving,
                serving.wrapping_add(1),
                Ordering::Relaxed,
                Ordering::Relaxed,
            )
            .is_ok()
            .then(GuardNoSend::new)
    }

    #[inline]
    unsafe fn unlock(&self, _guard: GuardNoSend) {
        // Only the holder writes `serving`, so a load + store is enough; Release publishes the
        // critical section to the next ticket's Acquire load (`lock_or_queue`, `lock_slow` or
        // `try_lock`).
        let serving = self.serving.load(Ordering::Relaxed);
        self.serving.store(serving.wrapping_add(1), ordering(Ordering::Release, TICKET_RELEASE));
    }

    fn is_locked(&self) -> bool {
        self.next.load(Ordering::Relaxed) != self.serving.load(Ordering::Relaxed)
    }
}

// SAFETY: `lock_or_queue` takes a ticket; `Ok` only when `serving` (Acquire) already admits it,
// and `wait_queued` returns only once it does: the same conditions as `lock`.
unsafe impl RawLockWait for TicketLock {
    type Queued = u32;

    #[inline]
    fn lock_or_queue(&self) -> Result<GuardNoSend, u32> {
        let ticket = self.next.fetch_add(1, Ordering::Relaxed);
        // Acquire pairs with the Release store in `unlock` of the previous holder.
        if self.serving.load(ordering(Ordering::Acquire, TICKET_FIRST_ATTEMPT_ACQUIRE)) == ticket {
            Ok(GuardNoSend::new())
        } else {
            Err(ticket)
        }
    }

    #[inline]
    fn wait_queued(&self, ticket: u32) -> GuardNoSend {
        self.lock_slow(ticket);
        GuardNoSend::new()
    }
}

// SAFETY: `try_lock` and `lock` are parking_lot's own acquisitions.
#[cfg(not(any(loom, shuttle)))]
unsafe impl RawLockWait for parking_lot::RawMutex {
    type Queued = ();

    #[inline]
    fn lock_or_queue(&self) -> Result<Self::Guard, ()> {
        RawMutex::try_lock(self).ok_or(())
    }

    #[inline]
    fn wait_queued(&self, (): ()) -> Self::Guard {
        RawMutex::lock(self)
    }
}

/// One of the two lock kinds, picked when the lock is made (not under a checker: there the
/// scheduler's lock is the checker's `Mutex`, and parking_lot is taken as given).
#[cfg(not(any(loom, shuttle)))]
pub struct RawKindLock {
    kind: LockKind,
    ticket: TicketLock,
    parking: parking_lot::RawMutex,
}

#[cfg(not(any(loom, shuttle)))]
impl RawKindLock {
    pub const fn new(kind: LockKind) -> Self {
        RawKindLock {
            kind,
            ticket: TicketLock::new(),
            parking: <parking_lot::RawMutex as RawMutex>::INIT,
        }
    }

    pub fn kind(&self) -> LockKind {
        self.kind
    }

    /// Whether a thread is queued behind the holder: known for the ticket lock, always `false`
    /// for parking_lot (which does not say).
    pub fn has_waiters(&self) -> bool {
        self.kind == LockKind::FairSpin && self.ticket.has_waiters()
    }
}

/// A queued acquisition of a [`RawKindLock`].
#[cfg(not(any(loom, shuttle)))]
pub enum KindQueued {
    Ticket(u32),
    Parking,
}

// SAFETY: every call goes to the raw lock of `kind`, which never changes after construction, so a
// lock and its unlock always reach the same lock. Both guards are stateless markers.
#[cfg(not(any(loom, shuttle)))]
unsafe impl RawMutex for RawKindLock {
    #[allow(clippy::declare_interior_mutable_const)]
    const INIT: Self = RawKindLock::new(LockKind::FairSpin);
    type Guard = GuardNoSend;

    #[inline]
    fn lock(&self) -> GuardNoSend {
        match self.kind {
            LockKind::FairSpin => drop(self.ticket.lock()),
            LockKind::ParkingLot => drop(self.parking.lock()),
        }
        GuardNoSend::new()
    }

    #[inline]
    fn try_lock(&self) -> Option<GuardNoSend> {
        let taken = match self.kind {
            LockKind::FairSpin => self.ticket.try_lock().is_some(),
            LockKind::ParkingLot => self.parking.try_lock().is_some(),
        };
        taken.then(GuardNoSend::new)
    }

    #[inline]
    unsafe fn unlock(&self, _guard: GuardNoSend) {
        match self.kind {
            // SAFETY: the caller holds the lock (the contract of `unlock`), taken through the same kind.
            LockKind::FairSpin => unsafe { self.ticket.unlock(GuardNoSend::new()) },
            // SAFETY: as above; parking_lot's guard is a stateless marker, recreated here.
            LockKind::ParkingLot => unsafe { self.parking.unlock(Default::default()) },
        }
    }

    fn is_locked(&self) -> bool {
        match self.kind {
            LockKind::FairSpin => self.ticket.is_locked(),
            LockKind::ParkingLot => self.parking.is_locked(),
        }
    }
}

// SAFETY: as for `RawMutex` above: each call reaches the raw lock of the fixed kind.
#[cfg(not(any(loom, shuttle)))]
unsafe impl RawLockWait for RawKindLock {
    type Queued = KindQueued;

    #[inline]
    fn lock_or_queue(&self) -> Result<GuardNoSend, KindQueued> {
        match self.kind {
            LockKind::FairSpin => self.ticket.lock_or_queue().map_err(KindQueued::Ticket),
            LockKind::ParkingLot => self
                .parking
                .lock_or_queue()
                .map(drop)
                .map(|()| GuardNoSend::new())
                .map_err(|()| KindQueued::Parking),
        }
    }

    #[inline]
    fn wait_queued(&self, queued: KindQueued) -> GuardNoSend {
        match queued {
            KindQueued::Ticket(t) => drop(self.ticket.wait_queued(t)),
            KindQueued::Parking => drop(self.parking.wait_queued(())),
        }
        GuardNoSend::new()
    }
}

/// A raw lock with measurement: its class (what its acquisitions count as) and the id of its last
/// owner (owner changes). The owner word sits beside the lock word; a holder that is a new owner
/// writes it at its release, just before the raw unlock writes the lock word on the same line
/// (`measure::F_NEW_OWNER`).
pub struct Measured<R> {
    raw: R,
    class: LockClass,
    owner: AtomicU32,
}

impl<R> Measured<R> {
    #[cfg(not(any(loom, shuttle)))]
    pub const fn new(raw: R, class: LockClass) -> Self {
        Measured { raw, class, owner: AtomicU32::new(0) }
    }

    /// Under a checker the owner word is the checker's atomic, which has no `const` constructor.
    #[cfg(any(loom, shuttle))]
    pub fn new(raw: R, class: LockClass) -> Self {
        Measured { raw, class, owner: AtomicU32::new(0) }
    }

    pub fn raw(&self) -> &R {
        &self.raw
    }

    pub fn class(&self) -> LockClass {
        self.class
    }
}

/// The per-acquisition state of a [`Measured`] lock (lock_api's guard state): what the release
/// must account, in one word, so that the guard costs one register or one stack slot.
///
/// | `word` | meaning |
/// | --- | --- |
/// | 0 | not measured, not traced: the release is the raw unlock |
/// | `F_MEASURED`, with or without `F_NEW_OWNER` | counted, not timed: the common measured acquisition |
/// | low byte `measure::F_*` flags (without `F_TRACED`), bits 8.. the start stamp | a timed hold: the stamp is the clock's low 56 bits (at 3 GHz about 760 years, and only differences are used) |
/// | a pointer to a [`TracedHold`], or'ed with `F_TRACED` | a traced hold (the box is 8-aligned, so its low three bits, where `F_TRACED` sits, are free): the span, flags and stamp are in the box |
///
/// A timed contended wait is not carried here: its record is kept by the thread as soon as the
/// wait ends ([`measure::waited`]), and folded after the release.
pub struct MeasuredGuard<G> {
    raw: G,
    word: u64,
    /// The counts are the acquiring thread's, and an entered span belongs to it: not `Send`.
    _thread: PhantomData<*const ()>,
}

/// A traced hold's state, boxed (traced acquisitions are made only while a timeline is being
/// recorded, and a span costs an allocation of its own anyway).
struct TracedHold {
    span: tracing::span::EnteredSpan,
    flags: u8,
    start: u64,
}

// The pointer's low three bits carry the tag.
const _: () = assert!(std::mem::align_of::<TracedHold>() >= 8 && F_TRACED < 8);

/// Bits of a guard word below the stamp.
const STAMP_SHIFT: u32 = 8;

/// The guard word of an untraced acquisition with `flags`, stamped now if it is timed.
#[inline(always)]
fn untraced_word(flags: u8) -> u64 {
    debug_assert!(flags & F_TRACED == 0);
    let start = if flags & F_TIMED != 0 { lock_ticks() } else { 0 };
    flags as u64 | start << STAMP_SHIFT
}

/// Ticks from a stamp kept in a guard word (56 bits) to `end`: their difference modulo 2^56,
/// and 0 if the clock went back.
#[inline]
fn ticks_since(word: u64, end: u64) -> u64 {
    let d = (end << STAMP_SHIFT).wrapping_sub(word & !((1 << STAMP_SHIFT) - 1)) >> STAMP_SHIFT;
    if d >> (63 - STAMP_SHIFT) != 0 {
        0
    } else {
        d
    }
}

/// The guard word of a traced acquisition: the hold span (if any) entered and boxed with the
/// flags, then `before_stamp`, then the stamp (so that neither the allocation nor `before_stamp`
/// lies inside the timed hold).
#[cold]
#[inline(never)]
fn traced_word(flags: u8, hold_span: Option<tracing::Span>, before_stamp: impl FnOnce()) -> u64 {
    let Some(span) = hold_span else {
        before_stamp();
        return untraced_word(flags);
    };
    let hold = Box::into_raw(Box::new(TracedHold { span: span.entered(), flags, start: 0 }));
    before_stamp();
    if flags & F_TIMED != 0 {
        // SAFETY: `hold` was made just above by `Box::into_raw` and nothing else has it yet.
        unsafe { (*hold).start = lock_ticks() };
    }
    hold as u64 | F_TRACED as u64
}

impl<G> MeasuredGuard<G> {
    #[inline(always)]
    fn with_word(raw: G, word: u64) -> Self {
        MeasuredGuard { raw, word, _thread: PhantomData }
    }
}

impl<R: RawLockWait> Measured<R> {
    /// The measured, untraced acquisition (the contended wait and the sampler's slow path are out
    /// of line).
    #[inline(always)]
    fn lock_measured(&self, mode: u8) -> MeasuredGuard<R::Guard> {
        let raw = match self.raw.lock_or_queue() {
            Ok(raw) => raw,
            Err(queued) => self.wait_contended(queued, mode),
        };
        let flags = measure::acquired(self.class, &self.owner, mode);
        let word = if flags & F_TIMED == 0 { flags as u64 } else { untraced_word(flags) };
        MeasuredGuard::with_word(raw, word)
    }

    /// A contended acquisition: counts the contention and waits, timing the wait when the wait
    /// sampler picks it (or in exact mode).
    #[cold]
    #[inline(never)]
    fn wait_contended(&self, queued: R::Queued, mode: u8) -> R::Guard {
        // The wait's first stamp comes before the sampler's decision, so that a picked wait and
        // an unpicked one start alike: taken after it, the pick's own branch and bookkeeping
        // (rarer, so mispredicted) shortened every timed wait, and the sampled waits came out
        // short of the exact ones (`core/tests/lockstat_accuracy.rs` compares them). Off the
        // critical path: the lock is held by another thread meanwhile.
        let t0 = lock_ticks();
        let picked = measure::contended(self.class, mode);
        if picked & F_WAIT_TIMED == 0 {
            return self.raw.wait_queued(queued);
        }
        let raw = self.raw.wait_queued(queued);
        measure::waited(self.class, picked, lock_ticks().saturating_sub(t0));
        raw
    }

    /// A traced acquisition: a wait span around a contended wait, then a hold span (made before the
    /// attempt, entered after it, so that its bookkeeping stays out of the hold it marks).
    #[cold]
    #[inline(never)]
    fn lock_traced(&self, mode: u8) -> MeasuredGuard<R::Guard> {
        let measured = mode & MODE_ENABLED != 0;
        let hold_span = measure::hold_span(self.class);
        let (raw, wait_span) = match self.raw.lock_or_queue() {
            Ok(raw) => (raw, None),
            Err(queued) => {
                let t0 = lock_ticks();
                let picked = if measured { measure::contended(self.class, mode) } else { 0 };
                let wait_span =
                    hold_span.is_some().then(|| measure::wait_span(self.class).entered());
                let raw = self.raw.wait_queued(queued);
                let wait = lock_ticks().saturating_sub(t0);
                if picked & F_WAIT_TIMED != 0 {
                    measure::waited(self.class, picked, wait);
                }
                (raw, wait_span)
            }
        };
        let flags = if measured { measure::acquired(self.class, &self.owner, mode) } else { 0 };
        // Exit the wait (its end is stamped now), enter the hold, and only then close the wait
        // span: closing frees its bookkeeping, which would otherwise sit between the two.
        let wait_span = wait_span.map(tracing::span::EnteredSpan::exit);
        MeasuredGuard::with_word(raw, traced_word(flags, hold_span, || drop(wait_span)))
    }

    /// A new owner's release writes its id into the owner word (still holding the lock; see
    /// `measure::F_NEW_OWNER`).
    #[inline(always)]
    fn note_owner(&self, flags: u8) {
        if flags & F_NEW_OWNER != 0 {
            // Relaxed: the raw unlock that follows (Release) publishes it to the next holder.
            self.owner.store(measure::thread_id(), Ordering::Relaxed);
        }
    }

    /// The owner word written (for a new owner), then the raw unlock: the word is written inside
    /// the hold, so the next holder's `measure::acquired` reads it (model `measured_counts`).
    ///
    /// # Safety
    /// The caller holds the lock through `raw`.
    #[inline(always)]
    unsafe fn release_raw(&self, raw: R::Guard, flags: u8) {
        if owner_after_release() {
            // SAFETY: as below (a negative control: the owner word leaves the hold).
            unsafe { self.raw.unlock(raw) };
            self.note_owner(flags);
            return;
        }
        self.note_owner(flags);
        // SAFETY: the caller holds the lock through `raw` (this function's contract).
        unsafe { self.raw.unlock(raw) };
    }

    /// Releases a timed or traced hold: the hold span is exited *before* the release (so no two
    /// holds of one lock overlap on a timeline) and closed after; the counts are accounted after
    /// the release, out of the hold.
    ///
    /// # Safety
    /// The caller holds the lock through `guard`.
    #[inline(never)]
    unsafe fn unlock_measured(&self, guard: MeasuredGuard<R::Guard>) {
        let MeasuredGuard { raw, word, .. } = guard;
        if word & F_TRACED as u64 == 0 {
            let flags = word as u8;
            let hold = if flags & F_TIMED != 0 { ticks_since(word, lock_ticks()) } else { 0 };
            // SAFETY: the caller holds the lock through this guard state.
            unsafe { self.release_raw(raw, flags) };
            measure::released(self.class, flags, hold);
            return;
        }
        // SAFETY: with `F_TRACED` the rest of the word is the pointer `traced_word` made with
        // `Box::into_raw`, and this guard state, consumed here, is its only owner.
        let traced = unsafe { Box::from_raw((word & !(F_TRACED as u64)) as *mut TracedHold) };
        let TracedHold { span, flags, start } = *traced;
        let end = if flags & F_TIMED != 0 { lock_ticks() } else { 0 };
        let span = span.exit();
        // SAFETY: the caller holds the lock through this guard state.
        unsafe { self.release_raw(raw, flags) };
        if flags & F_MEASURED != 0 {
            measure::released(self.class, flags, end.saturating_sub(start));
        }
        drop(span);
    }
}

// SAFETY: every acquisition goes through `R`'s own (`lock_or_queue`/`wait_queued`, `try_lock`)
// and every release through `R::unlock` with the state `R` handed out, so exclusion is `R`'s. The
// measurement only reads the clock and reads and writes the owner word, which only a holder touches.
// Forgetting the guard state leaks the acquisition, as with `R` (and a traced hold's box).
unsafe impl<R: RawLockWait> RawMutex for Measured<R> {
    #[cfg(not(any(loom, shuttle)))]
    #[allow(clippy::declare_interior_mutable_const)]
    const INIT: Self = Measured::new(R::INIT, LockClass::NONE);
    // As for `TicketLock`: evaluated only if used.
    #[cfg(any(loom, shuttle))]
    const INIT: Self = panic!("under a checker a Measured lock is made with Measured::new");
    type Guard = MeasuredGuard<R::Guard>;

    #[inline(always)]
    fn lock(&self) -> Self::Guard {
        let mode = if self.class.is_named() { measure::mode() } else { 0 };
        if measure::traced(mode) {
            return self.lock_traced(mode);
        }
        if mode & MODE_ENABLED == 0 {
            return MeasuredGuard::with_word(self.raw.lock(), 0);
        }
        // Measured, untraced: inline, so that an uncontended, unsampled acquisition is a few
        // thread-local operations beside the raw lock, with no call.
        self.lock_measured(mode)
    }

    #[inline]
    fn try_lock(&self) -> Option<Self::Guard> {
        let mode = if self.class.is_named() { measure::mode() } else { 0 };
        let traced = measure::traced(mode);
        if mode & MODE_ENABLED == 0 && !traced {
            return self.raw.try_lock().map(|raw| MeasuredGuard::with_word(raw, 0));
        }
        let hold_span = if traced { measure::hold_span(self.class) } else { None };
        let raw = self.raw.try_lock()?;
        let flags = if mode & MODE_ENABLED != 0 {
            measure::acquired(self.class, &self.owner, mode)
        } else {
            0
        };
        Some(MeasuredGuard::with_word(raw, traced_word(flags, hold_span, || ())))
    }

    #[inline(always)]
    unsafe fn unlock(&self, guard: Self::Guard) {
        // A hold measured or traced at acquisition is accounted whatever the switches say now.
        if guard.word == 0 {
            // SAFETY: the caller holds the lock (the contract of `RawMutex::unlock`).
            unsafe { self.raw.unlock(guard.raw) };
            return;
        }
        if guard.word & !(F_NEW_OWNER as u64) == F_MEASURED as u64 {
            // Counted, not timed, not traced: the common measured release.
            // SAFETY: as above.
            unsafe { self.release_raw(guard.raw, guard.word as u8) };
            measure::released_untimed(self.class);
            return;
        }
        // SAFETY: as above.
        unsafe { self.unlock_measured(guard) };
    }

    fn is_locked(&self) -> bool {
        self.raw.is_locked()
    }
}

/// A lock of either kind around `T` (under a checker, the checker's `Mutex`: `model.rs`).
#[cfg(not(any(loom, shuttle)))]
pub struct Lock<T> {
    inner: lock_api::Mutex<Measured<RawKindLock>, T>,
}

/// Proof that a [`Lock`] is held: the only way to reach the data.
#[cfg(not(any(loom, shuttle)))]
pub type LockGuard<'a, T> = lock_api::MutexGuard<'a, Measured<RawKindLock>, T>;

#[cfg(not(any(loom, shuttle)))]
impl<T> Lock<T> {
    /// A lock that is never measured.
    pub fn new(kind: LockKind, value: T) -> Self {
        Self::named(kind, LockClass::NONE, value)
    }

    /// A lock whose acquisitions count towards `class` while measurement is on.
    pub fn named(kind: LockKind, class: LockClass, value: T) -> Self {
        Lock {
            inner: lock_api::Mutex::from_raw(Measured::new(RawKindLock::new(kind), class), value),
        }
    }

    #[inline]
    pub fn lock(&self) -> LockGuard<'_, T> {
        self.inner.lock()
    }

    pub fn kind(&self) -> LockKind {
        // SAFETY: reading the kind does not touch the protected data or the lock state.
        unsafe { self.inner.raw() }.raw().kind()
    }

    /// Whether another thread is queued for the lock (see [`RawKindLock::has_waiters`]): lets a
    /// test build contention it knows, rather than hope for a race.
    pub fn has_waiters(&self) -> bool {
        // SAFETY: reading the lock words does not touch the protected data.
        unsafe { self.inner.raw() }.raw().has_waiters()
    }
}
