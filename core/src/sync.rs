//! The one sync facade: every lock, atomic, `Arc`, cell, thread and "CPU slot" the scheduler uses
//! comes from here, so that a single switch (`cfg(loom)`) turns the whole core into a model that
//! loom can check. Nothing else in the workspace mentions `cfg(loom)`.
//!
//! Two lock kinds are the object of study (see `../shared/reference/measuring.md` §3):
//!
//! | kind | what it is | why |
//! | --- | --- | --- |
//! | [`LockKind::FairSpin`] | a ticket spinlock, FIFO: each acquisition by another thread hands the line over | the kernel's scheduler lock is a queued (FIFO) spinlock |
//! | [`LockKind::ParkingLot`] | `parking_lot::RawMutex`: spins briefly, then parks; unfair on purpose | what a Rust program would reach for |
//!
//! The kind is chosen at run time ([`Lock::new`]); the branch on it is one predictable compare.
//! Under `cfg(loom)` both kinds become loom's `Mutex`, whose blocking loom understands.
//!
//! A lock made with [`Lock::named`] is also *measured* (real build only) while
//! [`crate::lockstat::set_enabled`] is on: acquisitions, contentions (a first `try_lock` failed),
//! owner changes, wait and hold times from the TSC ([`lock_ticks`]), and the path of the thread;
//! `crate::lockstat` keeps the counts. Under `cfg(loom)` the name is ignored.
//!
//! A named lock is also *traced* while a `tracing` subscriber records the target
//! [`crate::trace::LOCKS`] at TRACE: a `<lock> lock: wait` span around a contended acquisition and
//! a `<lock> lock: hold` span from the acquisition to the release (exited before the release, so
//! that the holds of one lock never overlap on a timeline). Untraced, the check is one relaxed load
//! ([`crate::trace::hot_paths_traced`]) beside the lockstat switch.
//!
//! Under `cfg(loom)` freed objects are also *quarantined* rather than returned to the allocator
//! ([`reclaim`]), so that a use after free reads a poisoned liveness word and fails an assertion
//! instead of reading recycled memory: loom does not see dangling pointers by itself.

#[cfg(not(loom))]
mod imp {
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
}

#[cfg(loom)]
mod imp {
    pub use loom::sync::atomic::{
        fence, AtomicBool, AtomicI64, AtomicPtr, AtomicU32, AtomicU64, AtomicUsize, Ordering,
    };
    pub use loom::sync::Arc;
    pub use loom::thread;

    /// `true` when the code runs inside a model checker.
    pub const MODEL_CHECKING: bool = true;

    /// Quarantines the object: it is neither dropped nor deallocated, so that a later access
    /// through a stale pointer reads its poisoned [`super::Liveness`] word (poisoned by the caller
    /// before this call) and fails an assertion, instead of touching freed memory. Nothing inside
    /// is released either: a quarantined object must not own a loom `Arc` (loom would report it
    /// leaked); objects use [`super::OracleArc`] for what they share with their census.
    pub fn reclaim<T>(object: Box<T>) {
        std::mem::forget(object);
    }

    /// The branch budget of one execution: a scheduler path makes hundreds of loom operations
    /// (every per-CPU add and every locked sum is one), far above loom's default of 1 000.
    const MODEL_MAX_BRANCHES: usize = 1_000_000;

    std::thread_local! {
        /// Violations seen by the model running on this OS thread (loom runs every thread of a
        /// model as a coroutine on the test's own thread, so this is per test).
        static VIOLATION: std::cell::RefCell<Option<String>> = const { std::cell::RefCell::new(None) };
    }

    /// Records a violated invariant; [`model`] fails once loom has finished exploring.
    ///
    /// Panicking on the spot would unwind through loom lock guards and crossbeam's epoch state,
    /// whose drops call back into loom after it tore the execution down (an abort, not a test
    /// failure). Quarantined objects stay valid memory, so executions can safely run on.
    pub fn violation(message: String) {
        VIOLATION.with(|v| {
            v.borrow_mut().get_or_insert(message);
        });
    }

    /// Runs a model body under loom, exploring its interleavings (`LOOM_MAX_PREEMPTIONS` and the
    /// other `LOOM_*` variables apply), then panics with the first [`violation`] any execution
    /// recorded.
    pub fn model<F: Fn() + Sync + Send + 'static>(body: F) {
        VIOLATION.with(|v| v.borrow_mut().take());
        let mut builder = loom::model::Builder::new();
        builder.max_branches = builder.max_branches.max(MODEL_MAX_BRANCHES);
        builder.check(body);
        if let Some(message) = VIOLATION.with(|v| v.borrow_mut().take()) {
            panic!("{message}");
        }
    }

    /// Under loom the real clock is `std::time::Instant` (quanta's dependency on crossbeam's
    /// `AtomicCell` does not build under `crossbeam_loom`); models use the manual clock anyway.
    pub struct RawClock {
        origin: std::time::Instant,
    }

    impl RawClock {
        pub fn new() -> Self {
            RawClock { origin: std::time::Instant::now() }
        }

        pub fn now_ns(&self) -> u64 {
            self.origin.elapsed().as_nanos() as u64
        }
    }

    /// Every model thread uses slot 0: per-CPU adds are atomic, so the slot choice does not
    /// change what can interleave, only how many slots a sum walks.
    #[inline]
    pub fn cpu_slot() -> usize {
        0
    }

    /// Lock statistics are not measured under loom (named locks are plain loom mutexes); the
    /// clock exists so that `lockstat` compiles: ns since the first call.
    pub fn lock_ticks() -> u64 {
        static ORIGIN: std::sync::OnceLock<std::time::Instant> = std::sync::OnceLock::new();
        ORIGIN.get_or_init(std::time::Instant::now).elapsed().as_nanos() as u64
    }

    /// Ticks are ns here.
    pub fn lock_ticks_to_ns(ticks: u64) -> u64 {
        ticks
    }

    pub fn lock_ticks_warm_up() {}
}

pub use imp::*;

/// A reference-counted pointer that loom does not track: for oracle objects (live-object
/// counters) shared by objects that may be quarantined by [`reclaim`] under loom.
pub type OracleArc<T> = std::sync::Arc<T>;

/// A mutex that loom does not model: for the lock statistics' own bookkeeping (registries and
/// merges, off the hot path), which observes the scheduler and is not part of what is checked.
pub type OracleMutex<T> = std::sync::Mutex<T>;

use std::fmt;

/// A poison-on-drop word that makes "freed" observable to the models.
///
/// It is a plain `std` atomic, not a loom one: it is an oracle, not part of the algorithm. Loom
/// runs one model thread at a time, so the word always reflects the interleaving being explored.
/// Outside a model checker [`Liveness::assert_alive`] does nothing (the memory may really be gone:
/// valgrind is the tool there).
#[derive(Debug)]
pub struct Liveness(std::sync::atomic::AtomicU32);

const ALIVE: u32 = 0x00A1_1FE0;
const FREED: u32 = 0x00DE_AD00;

impl Liveness {
    pub fn new() -> Self {
        Liveness(std::sync::atomic::AtomicU32::new(ALIVE))
    }

    /// Marks the object freed (call from its `Drop`).
    pub fn poison(&self) {
        self.0.store(FREED, std::sync::atomic::Ordering::Relaxed);
    }

    /// Under a model checker, reports a [`violation`] if the object was freed.
    #[inline(always)]
    pub fn assert_alive(&self, what: &str) {
        if MODEL_CHECKING {
            let word = self.0.load(std::sync::atomic::Ordering::Relaxed);
            if word != ALIVE {
                violation(format!("{what} used after it was freed (liveness word {word:#x})"));
            }
        }
    }
}

impl Default for Liveness {
    fn default() -> Self {
        Self::new()
    }
}

/// Which lock implementation a [`Lock`] uses.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum LockKind {
    /// FIFO ticket spinlock (kernel-like).
    FairSpin,
    /// parking_lot's adaptive, unfair mutex.
    ParkingLot,
}

impl LockKind {
    /// Both kinds, in report order.
    pub const ALL: [LockKind; 2] = [LockKind::FairSpin, LockKind::ParkingLot];

    /// The name used on the command line and in reports.
    pub fn name(self) -> &'static str {
        match self {
            LockKind::FairSpin => "fair-spin",
            LockKind::ParkingLot => "parking-lot",
        }
    }

    /// Parses a command-line name.
    pub fn from_name(name: &str) -> Option<LockKind> {
        LockKind::ALL.into_iter().find(|k| k.name() == name)
    }
}

impl fmt::Display for LockKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

#[cfg(not(loom))]
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
        pub(super) next: AtomicU32,
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

#[cfg(loom)]
mod locks {
    use super::LockKind;

    /// A lock of either kind around `T`: under loom both kinds are loom's `Mutex`.
    pub struct Lock<T> {
        kind: LockKind,
        inner: loom::sync::Mutex<T>,
    }

    /// Proof that a [`Lock`] is held.
    pub type LockGuard<'a, T> = loom::sync::MutexGuard<'a, T>;

    impl<T> Lock<T> {
        pub fn new(kind: LockKind, value: T) -> Self {
            Lock { kind, inner: loom::sync::Mutex::new(value) }
        }

        /// As [`Lock::new`]: lock statistics are not measured under loom.
        pub fn named(kind: LockKind, _class: crate::lockstat::LockClass, value: T) -> Self {
            Self::new(kind, value)
        }

        pub fn lock(&self) -> LockGuard<'_, T> {
            self.inner.lock().expect("a model thread panicked while holding a lock")
        }

        pub fn kind(&self) -> LockKind {
            self.kind
        }
    }
}

pub use locks::{Lock, LockGuard};

#[cfg(not(loom))]
pub use locks::{RawKindLock, TicketLock};

/// An `UnsafeCell` whose accesses loom can check for races (tokio's pattern): `with` for shared
/// access, `with_mut` for exclusive access. Outside loom it is `std::cell::UnsafeCell`.
#[derive(Debug)]
pub struct UnsafeCell<T> {
    #[cfg(not(loom))]
    inner: std::cell::UnsafeCell<T>,
    #[cfg(loom)]
    inner: loom::cell::UnsafeCell<T>,
}

impl<T> UnsafeCell<T> {
    pub fn new(value: T) -> Self {
        #[cfg(not(loom))]
        let inner = std::cell::UnsafeCell::new(value);
        #[cfg(loom)]
        let inner = loom::cell::UnsafeCell::new(value);
        UnsafeCell { inner }
    }

    /// Runs `f` with a shared pointer to the contents. Dereferencing it is the caller's promise
    /// that no `with_mut` runs at the same time.
    #[inline]
    pub fn with<R>(&self, f: impl FnOnce(*const T) -> R) -> R {
        #[cfg(not(loom))]
        return f(self.inner.get());
        #[cfg(loom)]
        return self.inner.with(f);
    }

    /// Runs `f` with an exclusive pointer to the contents. Dereferencing it is the caller's
    /// promise that no other access runs at the same time.
    #[inline]
    pub fn with_mut<R>(&self, f: impl FnOnce(*mut T) -> R) -> R {
        #[cfg(not(loom))]
        return f(self.inner.get());
        #[cfg(loom)]
        return self.inner.with_mut(f);
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    #[test]
    fn both_lock_kinds_exclude() {
        for kind in LockKind::ALL {
            let lock = Arc::new(Lock::new(kind, 0u64));
            let handles: Vec<_> = (0..4)
                .map(|_| {
                    let lock = lock.clone();
                    thread::spawn(move || {
                        for _ in 0..20_000 {
                            *lock.lock() += 1;
                        }
                    })
                })
                .collect();
            for h in handles {
                h.join().unwrap();
            }
            assert_eq!(*lock.lock(), 80_000, "{kind}");
            assert_eq!(lock.kind(), kind);
        }
    }

    #[test]
    fn ticket_lock_is_fifo() {
        // Hold the lock; let waiter 1 take its ticket, then waiter 2; release: they must enter in
        // the order they queued, whatever the OS scheduler does.
        let lock = Arc::new(TicketLock::new());
        let order = Arc::new(std::sync::Mutex::new(Vec::new()));
        lock.lock();
        assert!(!lock.try_lock());
        let mut waiters = Vec::new();
        for id in 1..=2u32 {
            let (waiter_lock, order) = (lock.clone(), order.clone());
            waiters.push(thread::spawn(move || {
                waiter_lock.lock();
                order.lock().unwrap().push(id);
                // SAFETY: held by this thread.
                unsafe { waiter_lock.unlock() };
            }));
            // Wait until this waiter has taken its ticket before starting the next one.
            while lock.next.load(Ordering::Relaxed) != id + 1 {
                thread::yield_now();
            }
        }
        // SAFETY: held by this thread since the first `lock`.
        unsafe { lock.unlock() };
        for w in waiters {
            w.join().unwrap();
        }
        assert_eq!(*order.lock().unwrap(), [1, 2]);
        assert!(!lock.is_locked());
    }

    /// The lock statistics of named locks under real threads: exact counts, sane times, paths.
    /// (One test: the lockstat table is global to the process; it uses a class of its own.)
    #[test]
    fn named_locks_are_measured() {
        use crate::lockstat::{self, LockClass, LockPath};
        let class = LockClass::register("sync-test");
        for kind in LockKind::ALL {
            lockstat::reset();
            lockstat::set_enabled(true);
            let lock = Arc::new(Lock::named(kind, class, 0u64));
            let handles: Vec<_> = (0..2)
                .map(|_| {
                    let lock = lock.clone();
                    thread::spawn(move || {
                        let _path = lockstat::enter(LockPath::Dispatch);
                        for _ in 0..20_000 {
                            let mut g = lock.lock();
                            *g += 1;
                            std::hint::black_box(&mut *g);
                        }
                        lockstat::flush();
                    })
                })
                .collect();
            for h in handles {
                h.join().unwrap();
            }
            lockstat::set_enabled(false);
            // Not measured: the switch is off.
            *lock.lock() += 1;
            let stats = lockstat::snapshot();
            let s = stats.class(class).expect("measured");
            assert_eq!(s.acquisitions, 40_000, "{kind}");
            assert!(s.contentions <= s.acquisitions && s.owner_changes <= s.acquisitions, "{kind}: {s:?}");
            assert!(s.owner_changes >= 1, "{kind}: two threads took the lock, so it moved at least once");
            assert_eq!(s.hold.count(), 40_000, "{kind}: every hold of a class sampled 1 in 1 is timed");
            assert_eq!(s.wait.count(), s.contentions, "{kind}");
            let row = stats.summarize(1_000_000_000).into_iter().find(|r| r.name == "sync-test").unwrap();
            assert!(row.hold_ns.total > 0 && row.hold_ns.avg > 0.0, "{kind}: {row:?}");
            assert!(row.hold_ns.p50 <= row.hold_ns.p99 && row.hold_ns.p99 <= row.hold_ns.max, "{kind}: {row:?}");
            let dispatch = row.paths.iter().find(|p| p.path == LockPath::Dispatch).expect("dispatch path");
            assert_eq!(dispatch.acquisitions, 40_000, "{kind}: every acquisition ran under the dispatch path");
            assert_eq!(*lock.lock(), 40_001);
        }
        // Nested: the inner lock's holds are seen inside the outer class; sampled holds are scaled.
        let inner_class = LockClass::register("sync-test-inner");
        lockstat::set_hold_sampling(inner_class, 4);
        lockstat::reset();
        lockstat::set_enabled(true);
        let outer = Lock::named(LockKind::FairSpin, class, ());
        let inner = Lock::named(LockKind::FairSpin, inner_class, ());
        for _ in 0..4_000 {
            let _o = outer.lock();
            for _ in 0..4 {
                drop(inner.lock());
            }
        }
        lockstat::set_enabled(false);
        let stats = lockstat::snapshot();
        let i = stats.class(inner_class).unwrap();
        assert_eq!(i.acquisitions, 16_000);
        assert!(i.hold.count() > 2_000 && i.hold.count() < 6_000, "about one hold in 4 timed: {}", i.hold.count());
        let rows = stats.summarize(1);
        let row = rows.iter().find(|r| r.name == "sync-test-inner").unwrap();
        assert!((row.hold_sampled_1_in - 4.0).abs() < 1.0, "{}", row.hold_sampled_1_in);
        let inside = row.inside.iter().find(|x| x.outer == "sync-test").expect("held inside the outer class");
        assert!(inside.hold_ns > 0 && inside.hold_ns <= row.hold_ns.total);
    }

    #[test]
    fn lock_kind_names_round_trip() {
        for k in LockKind::ALL {
            assert_eq!(LockKind::from_name(k.name()), Some(k));
        }
        assert_eq!(LockKind::from_name("mcs"), None);
    }
}
