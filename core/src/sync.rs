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
}

pub use imp::*;

/// A reference-counted pointer that loom does not track: for oracle objects (live-object
/// counters) shared by objects that may be quarantined by [`reclaim`] under loom.
pub type OracleArc<T> = std::sync::Arc<T>;

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
    use std::sync::atomic::{AtomicU32, Ordering};

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
        next: AtomicU32,
        serving: AtomicU32,
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

    /// The raw lock behind [`super::Lock`]: one of the two kinds, picked when the lock is made.
    pub struct RawKindLock {
        kind: LockKind,
        ticket: TicketLock,
        parking: parking_lot::RawMutex,
    }

    impl RawKindLock {
        pub const fn new(kind: LockKind) -> Self {
            RawKindLock {
                kind,
                ticket: TicketLock::new(),
                parking: <parking_lot::RawMutex as lock_api::RawMutex>::INIT,
            }
        }

        pub fn kind(&self) -> LockKind {
            self.kind
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
            match self.kind {
                LockKind::FairSpin => self.ticket.lock(),
                LockKind::ParkingLot => drop(lock_api::RawMutex::lock(&self.parking)),
            }
            lock_api::GuardNoSend::new()
        }

        #[inline]
        fn try_lock(&self) -> Option<Self::Guard> {
            let taken = match self.kind {
                LockKind::FairSpin => self.ticket.try_lock(),
                LockKind::ParkingLot => lock_api::RawMutex::try_lock(&self.parking).is_some(),
            };
            taken.then(lock_api::GuardNoSend::new)
        }

        #[inline]
        unsafe fn unlock(&self, _guard: Self::Guard) {
            match self.kind {
                // SAFETY: the caller holds the lock (the contract of `RawMutex::unlock`), and it
                // was taken through the same kind.
                LockKind::FairSpin => unsafe { self.ticket.unlock() },
                // SAFETY: as above; parking_lot's guard is a stateless marker.
                LockKind::ParkingLot => unsafe { lock_api::RawMutex::unlock(&self.parking, Default::default()) },
            }
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
        pub fn new(kind: LockKind, value: T) -> Self {
            Lock { inner: lock_api::Mutex::from_raw(RawKindLock::new(kind), value) }
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
        // Tickets are served in the order they were taken: take three, release in turn.
        let t = TicketLock::new();
        t.lock();
        assert!(!t.try_lock());
        // SAFETY: held by this thread.
        unsafe { t.unlock() };
        assert!(t.try_lock());
        // SAFETY: held by this thread.
        unsafe { t.unlock() };
        assert!(!t.is_locked());
    }

    #[test]
    fn lock_kind_names_round_trip() {
        for k in LockKind::ALL {
            assert_eq!(LockKind::from_name(k.name()), Some(k));
        }
        assert_eq!(LockKind::from_name("mcs"), None);
    }
}
