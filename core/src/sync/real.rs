//! The real backend of the sync facade: std atomics and threads, the TSC clock, and the two lock
//! kinds that are the object of study (with their lock statistics and tracing hooks).

use super::LockKind;

pub use std::sync::atomic::{
    fence, AtomicBool, AtomicI64, AtomicPtr, AtomicU32, AtomicU64, AtomicUsize, Ordering,
};
pub use std::sync::Arc;
pub use std::thread;

/// `true` when the code runs inside a model checker; enables liveness assertions that would
/// read freed memory in a real build.
pub const MODEL_CHECKING: bool = false;

/// Gives the object back to the allocator.
pub fn reclaim<T>(object: Box<T>) {
    drop(object);
}

thread_local! {
    static SLOT: usize = {
        static NEXT: AtomicUsize = AtomicUsize::new(0);
        NEXT.fetch_add(1, Ordering::Relaxed)
    };
}

/// Runs a model body: once, outside a model checker.
pub fn model<F: Fn() + Sync + Send + 'static>(body: F) {
    body();
}

/// How a model is explored (ignored outside a model checker: the body runs once).
#[derive(Clone, Copy, Debug, Default)]
pub struct Exploration {
    pub max_preemptions: Option<usize>,
    pub iterations: usize,
    pub pct_depth: Option<usize>,
    pub seed: u64,
}

/// [`model`]: once, outside a model checker.
pub fn model_with<F: Fn() + Sync + Send + 'static>(_exploration: Exploration, body: F) {
    body();
}

/// The model backends' switch (see there); outside a model checker every violation panics.
pub const STOP_AT_FIRST_VIOLATION: &str = "SCHEDLAB_MODEL_STOP_AT_FIRST_VIOLATION";

/// Outside a model checker a violation panics at once, so there is never one to take.
pub fn take_violation() -> Option<String> {
    None
}

/// Reports a violated invariant: outside a model checker, a panic.
pub fn violation(message: String) {
    panic!("{message}");
}

/// The raw real-time source of [`crate::clock::RealClock`]: the TSC through `quanta`.
pub struct RawClock {
    clock: quanta::Clock,
    origin: u64,
}

impl Default for RawClock {
    fn default() -> Self {
        Self::new()
    }
}

impl RawClock {
    pub fn new() -> Self {
        let clock = quanta::Clock::new();
        let origin = clock.raw();
        RawClock { clock, origin }
    }

    /// Nanoseconds since `new`.
    #[inline]
    pub fn now_ns(&self) -> u64 {
        self.clock.delta_as_nanos(self.origin, self.clock.raw())
    }
}

/// The calling thread's "CPU number": threads are numbered in the order they first ask, the
/// way per-CPU data is indexed by `smp_processor_id()` when each job is pinned to its CPU.
#[inline]
pub fn cpu_slot() -> usize {
    SLOT.with(|slot| *slot)
}

/// The lock statistics' clock: one process-wide `quanta` clock, read raw (the TSC, no
/// scaling) on the critical path and scaled to ns when the counts are folded in.
static LOCK_CLOCK: std::sync::OnceLock<quanta::Clock> = std::sync::OnceLock::new();

#[inline]
fn lock_clock() -> &'static quanta::Clock {
    LOCK_CLOCK.get_or_init(quanta::Clock::new)
}

/// Raw ticks of the lock statistics' clock.
#[inline]
pub fn lock_ticks() -> u64 {
    lock_clock().raw()
}

/// A tick difference in ns.
#[inline]
pub fn lock_ticks_to_ns(ticks: u64) -> u64 {
    lock_clock().delta_as_nanos(0, ticks)
}

/// Calibrates the clock now rather than inside the first measured acquisition.
pub fn lock_ticks_warm_up() {
    let _ = lock_clock();
}

mod locks {
    use super::LockKind;
    use crate::lockstat::{self, LockClass};
    use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};

    /// How many polls a ticket waiter makes before it gives its CPU away once (about 3 µs of
    /// `pause` on this machine kind). Measured: with 3 threads on 2 CPUs, sched-lock ran at
    /// 158 KIOPS with 64, 67 with 256, 25 with 1024, 9 with 4096; with 2 threads the budget made
    /// no difference (416-428 KIOPS).
    ///
    /// NOTE: the kernel's queued spinlock never yields. Here threads can outnumber CPUs (tests run
    /// in parallel, the OS preempts), and a FIFO lock whose next owner is descheduled stalls every
    /// waiter behind it; yielding after a spin budget keeps FIFO order (the ticket is kept) while
    /// letting the preempted owner run. With threads <= CPUs the budget is rarely reached.
    const SPINS_BEFORE_YIELD: u32 = 64;

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
        pub const fn new() -> Self {
            TicketLock { next: AtomicU32::new(0), serving: AtomicU32::new(0) }
        }

        #[inline]
        pub fn lock(&self) {
            let ticket = self.next.fetch_add(1, Ordering::Relaxed);
            // Acquire pairs with the Release store in `unlock` of the previous holder.
            if self.serving.load(Ordering::Acquire) == ticket {
                return;
            }
            self.lock_slow(ticket);
        }

        #[cold]
        fn lock_slow(&self, ticket: u32) {
            let mut spins = 0u32;
            while self.serving.load(Ordering::Acquire) != ticket {
                std::hint::spin_loop();
                spins += 1;
                if spins == SPINS_BEFORE_YIELD {
                    spins = 0;
                    std::thread::yield_now();
                }
            }
        }

        #[inline]
        pub fn try_lock(&self) -> bool {
            let serving = self.serving.load(Ordering::Relaxed);
            self.next
                .compare_exchange(serving, serving.wrapping_add(1), Ordering::Acquire, Ordering::Relaxed)
                .is_ok()
        }

        /// # Safety
        /// The caller holds the lock.
        #[inline]
        pub unsafe fn unlock(&self) {
            // Only the holder writes `serving`, so a load + store is enough; Release publishes the
            // critical section to the next ticket's Acquire load.
            let serving = self.serving.load(Ordering::Relaxed);
            self.serving.store(serving.wrapping_add(1), Ordering::Release);
        }

        pub fn is_locked(&self) -> bool {
            self.next.load(Ordering::Relaxed) != self.serving.load(Ordering::Relaxed)
        }
    }

    /// `stamp` of a hold that is not being measured.
    const NOT_MEASURED: u64 = 0;
    /// `stamp` of a hold that is counted but not timed (hold-time sampling).
    const UNTIMED: u64 = 1;
    /// Bit of `stamp` set while the holder has a hold span entered (see [`HELD_SPANS`]); the TSC
    /// never reaches it.
    const TRACED: u64 = 1 << 63;

    thread_local! {
        /// The hold spans this thread has entered, with the address of their lock. Touched only
        /// when a lock's `stamp` has [`TRACED`], i.e. while a `tracing` subscriber records the
        /// lock target: an untraced acquisition never reaches it.
        static HELD_SPANS: std::cell::RefCell<Vec<(usize, tracing::span::EnteredSpan)>> =
            const { std::cell::RefCell::new(Vec::new()) };
    }

    /// The raw lock behind [`super::Lock`]: one of the two kinds, picked when the lock is made,
    /// and, for a named lock, the lock statistics of [`crate::lockstat`].
    ///
    /// | field | written by | meaning |
    /// | --- | --- | --- |
    /// | `class` | construction | what the lock counts as ([`LockClass::NONE`]: never measured) |
    /// | `owner` | the holder, just after acquiring | the lockstat id of the last thread that held it |
    /// | `stamp` | the holder | TSC at acquisition of a timed hold; [`UNTIMED`] for a counted one; [`NOT_MEASURED`] otherwise; plus [`TRACED`] while a hold span is entered |
    ///
    /// `owner` and `stamp` sit beside the lock word, so the holder writes a line it already owns.
    pub struct RawKindLock {
        kind: LockKind,
        class: LockClass,
        ticket: TicketLock,
        parking: parking_lot::RawMutex,
        owner: AtomicU32,
        stamp: AtomicU64,
    }

    impl RawKindLock {
        pub const fn new(kind: LockKind) -> Self {
            Self::with_class(kind, LockClass::NONE)
        }

        /// A lock whose acquisitions count towards `class` while [`lockstat::enabled`].
        pub const fn with_class(kind: LockKind, class: LockClass) -> Self {
            RawKindLock {
                kind,
                class,
                ticket: TicketLock::new(),
                parking: <parking_lot::RawMutex as lock_api::RawMutex>::INIT,
                owner: AtomicU32::new(0),
                stamp: AtomicU64::new(NOT_MEASURED),
            }
        }

        pub fn kind(&self) -> LockKind {
            self.kind
        }

        pub fn class(&self) -> LockClass {
            self.class
        }

        #[inline]
        fn raw_lock(&self) {
            match self.kind {
                LockKind::FairSpin => self.ticket.lock(),
                LockKind::ParkingLot => drop(lock_api::RawMutex::lock(&self.parking)),
            }
        }

        #[inline]
        fn raw_try_lock(&self) -> bool {
            match self.kind {
                LockKind::FairSpin => self.ticket.try_lock(),
                LockKind::ParkingLot => lock_api::RawMutex::try_lock(&self.parking).is_some(),
            }
        }

        /// # Safety
        /// The caller holds the lock.
        #[inline]
        unsafe fn raw_unlock(&self) {
            match self.kind {
                // SAFETY: the caller holds the lock, and it was taken through the same kind.
                LockKind::FairSpin => unsafe { self.ticket.unlock() },
                // SAFETY: as above; parking_lot's guard is a stateless marker.
                LockKind::ParkingLot => unsafe { lock_api::RawMutex::unlock(&self.parking, Default::default()) },
            }
        }

        /// The instrumented acquisition: a `try_lock` first (its failure is a contention), then the
        /// plain lock. Measured (wait timed) while lockstat is on; traced (a wait span around a
        /// contended acquisition, then a hold span) while a subscriber records [`crate::trace::LOCKS`].
        #[inline(never)]
        fn lock_instrumented(&self) {
            let measured = lockstat::enabled();
            // Made before the attempt, entered after it: the span's bookkeeping stays out of the
            // hold it marks.
            let hold_span = self.hold_span();
            if self.raw_try_lock() {
                if measured {
                    self.note_acquired(false, 0, None);
                }
                self.enter_hold_span(hold_span);
                return;
            }
            // Only when traced: a lockstat-only acquisition builds no span at all.
            let wait_span = hold_span.is_some().then(|| lock_wait_span(self.class).entered());
            let start = if measured { super::lock_ticks() } else { 0 };
            self.raw_lock();
            if measured {
                let now = super::lock_ticks();
                self.note_acquired(true, now.saturating_sub(start), Some(now));
            }
            // Exit the wait (its end is stamped now), enter the hold, and only then close the
            // wait span: closing frees its bookkeeping, which would otherwise sit between the two
            // on the timeline.
            let wait_span = wait_span.map(tracing::span::EnteredSpan::exit);
            self.enter_hold_span(hold_span);
            drop(wait_span);
        }

        /// The hold span for the next acquisition, if the lock target is being recorded.
        #[inline]
        fn hold_span(&self) -> Option<tracing::Span> {
            if !crate::trace::hot_paths_traced() {
                return None;
            }
            let span = lock_hold_span(self.class);
            (!span.is_disabled()).then_some(span)
        }

        /// Enters the hold span (the lock is held) and marks `stamp` so that the release exits it.
        fn enter_hold_span(&self, span: Option<tracing::Span>) {
            let Some(span) = span else { return };
            let entered = span.entered();
            HELD_SPANS.with(|held| held.borrow_mut().push((self as *const Self as usize, entered)));
            // Relaxed: only the holder reads or writes `stamp`.
            let stamp = self.stamp.load(Ordering::Relaxed);
            self.stamp.store(stamp | TRACED, Ordering::Relaxed);
        }

        /// Releases an instrumented hold (out of line, so that the plain unlock stays small): the
        /// hold span is exited *before* the release, so no two holds of one lock overlap on a
        /// timeline; it is closed (its bookkeeping freed) after.
        ///
        /// # Safety
        /// The caller holds the lock, and `stamp` is its `stamp` word.
        #[inline(never)]
        unsafe fn unlock_instrumented(&self, stamp: u64) {
            let span = if stamp & TRACED != 0 { self.exit_hold_span() } else { None };
            let stamp = stamp & !TRACED;
            let hold = (stamp != NOT_MEASURED && stamp != UNTIMED).then(|| super::lock_ticks().saturating_sub(stamp));
            self.stamp.store(NOT_MEASURED, Ordering::Relaxed);
            // SAFETY: the caller holds the lock.
            unsafe { self.raw_unlock() };
            if stamp != NOT_MEASURED {
                lockstat::released(self.class, hold);
            }
            drop(span);
        }

        /// Exits this lock's hold span (the most recent one this thread entered for it).
        fn exit_hold_span(&self) -> Option<tracing::Span> {
            let me = self as *const Self as usize;
            HELD_SPANS.with(|held| {
                let mut held = held.borrow_mut();
                let at = held.iter().rposition(|(lock, _)| *lock == me)?;
                Some(held.remove(at).1.exit())
            })
        }

        /// Records an acquisition (the lock is held) and starts timing the hold if it is sampled.
        #[inline(never)]
        fn note_acquired(&self, contended: bool, wait_ticks: u64, now: Option<u64>) {
            let timed = lockstat::acquired(self.class, contended, wait_ticks, &self.owner);
            let stamp = if timed { now.unwrap_or_else(super::lock_ticks).max(UNTIMED + 1) } else { UNTIMED };
            // Relaxed: only the holder reads or writes `stamp` (see `owner` in `acquired`).
            self.stamp.store(stamp, Ordering::Relaxed);
        }

        /// Whether acquisitions of this lock are measured or traced now.
        #[inline(always)]
        fn instrumented(&self) -> bool {
            self.class.is_named() && (lockstat::enabled() || crate::trace::hot_paths_traced())
        }
    }

    /// The span of a hold of a lock of `class`, made before the lock is taken (so that its creation
    /// is not inside the hold) and entered once it is. `Span::none()` when not traced, and for the
    /// counter-sum locks: they nest inside the statistics span that takes them
    /// (`bfqg_stats_update_avg_queue_size` sums every slot), which already shows their time, and would
    /// triple the records per request.
    #[inline(never)]
    fn lock_hold_span(class: LockClass) -> tracing::Span {
        let path = lockstat::current_path().name();
        match class {
            LockClass::SCHED => tracing::trace_span!(target: crate::trace::LOCKS, "sched lock: hold", lock = %"sched", path = %path),
            LockClass::QUEUE => tracing::trace_span!(target: crate::trace::LOCKS, "queue lock: hold", lock = %"queue", path = %path),
            LockClass::STATS_SUM | LockClass::STATS_SECTION | LockClass::NONE => tracing::Span::none(),
            _ => tracing::trace_span!(target: crate::trace::LOCKS, "lock: hold", lock = %class.name(), path = %path),
        }
    }

    /// The span of a contended acquisition of a lock of `class` (a class [`lock_hold_span`] traces).
    #[inline(never)]
    fn lock_wait_span(class: LockClass) -> tracing::Span {
        let path = lockstat::current_path().name();
        match class {
            LockClass::SCHED => tracing::trace_span!(target: crate::trace::LOCKS, "sched lock: wait", lock = %"sched", path = %path),
            LockClass::QUEUE => tracing::trace_span!(target: crate::trace::LOCKS, "queue lock: wait", lock = %"queue", path = %path),
            LockClass::STATS_SUM | LockClass::STATS_SECTION | LockClass::NONE => tracing::Span::none(),
            _ => tracing::trace_span!(target: crate::trace::LOCKS, "lock: wait", lock = %class.name(), path = %path),
        }
    }

    // SAFETY: `lock`/`try_lock` give exclusive ownership until `unlock`, as both underlying locks
    // do; the kind never changes after construction, so lock and unlock always reach the same one.
    // The guards are stateless (parking_lot's is a marker), so they are recreated on unlock.
    unsafe impl lock_api::RawMutex for RawKindLock {
        #[allow(clippy::declare_interior_mutable_const)]
        const INIT: Self = RawKindLock::new(LockKind::FairSpin);
        type Guard = lock_api::GuardNoSend;

        #[inline]
        fn lock(&self) -> Self::Guard {
            if self.instrumented() {
                self.lock_instrumented();
            } else {
                self.raw_lock();
            }
            lock_api::GuardNoSend::new()
        }

        #[inline]
        fn try_lock(&self) -> Option<Self::Guard> {
            if !self.instrumented() {
                return self.raw_try_lock().then(lock_api::GuardNoSend::new);
            }
            let hold_span = self.hold_span();
            let taken = self.raw_try_lock();
            if taken {
                if lockstat::enabled() {
                    self.note_acquired(false, 0, None);
                }
                self.enter_hold_span(hold_span);
            }
            taken.then(lock_api::GuardNoSend::new)
        }

        #[inline]
        unsafe fn unlock(&self, _guard: Self::Guard) {
            // A hold measured or traced at acquisition is accounted whatever the switches say now.
            if self.class.is_named() {
                let stamp = self.stamp.load(Ordering::Relaxed);
                if stamp != NOT_MEASURED {
                    // SAFETY: the caller holds the lock (the contract of `RawMutex::unlock`).
                    unsafe { self.unlock_instrumented(stamp) };
                    return;
                }
            }
            // SAFETY: the caller holds the lock (the contract of `RawMutex::unlock`).
            unsafe { self.raw_unlock() };
        }

        fn is_locked(&self) -> bool {
            match self.kind {
                LockKind::FairSpin => self.ticket.is_locked(),
                LockKind::ParkingLot => lock_api::RawMutex::is_locked(&self.parking),
            }
        }
    }

    /// A lock of either kind around `T`.
    pub struct Lock<T> {
        inner: lock_api::Mutex<RawKindLock, T>,
    }

    /// Proof that a [`Lock`] is held: the only way to reach the data.
    pub type LockGuard<'a, T> = lock_api::MutexGuard<'a, RawKindLock, T>;

    impl<T> Lock<T> {
        /// A lock that is never measured.
        pub fn new(kind: LockKind, value: T) -> Self {
            Lock { inner: lock_api::Mutex::from_raw(RawKindLock::new(kind), value) }
        }

        /// A lock whose acquisitions count towards `class` in the lock statistics.
        pub fn named(kind: LockKind, class: LockClass, value: T) -> Self {
            Lock { inner: lock_api::Mutex::from_raw(RawKindLock::with_class(kind, class), value) }
        }

        #[inline]
        pub fn lock(&self) -> LockGuard<'_, T> {
            self.inner.lock()
        }

        pub fn kind(&self) -> LockKind {
            // SAFETY: reading the kind does not touch the protected data or the lock state.
            unsafe { self.inner.raw() }.kind()
        }
    }
}

pub use locks::{Lock, LockGuard, RawKindLock, TicketLock};
