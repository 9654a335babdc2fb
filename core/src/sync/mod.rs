//! The one sync facade: every lock, atomic, `Arc`, cell, thread, epoch pin and "CPU slot" the
//! scheduler uses comes from here, so that a single switch turns the whole core into a model that
//! a checker can explore. Nothing else in the workspace mentions `cfg(loom)` or `cfg(shuttle)`.
//!
//! | build | backend | what it is for |
//! | --- | --- | --- |
//! | default | [`real`](self) (`real.rs`): std atomics and threads, the TSC clock, the two lock kinds | every run, bench and test |
//! | `--cfg loom` | `model.rs` on loom | exhaustive exploration of small scenarios within a preemption bound |
//! | `--cfg shuttle` | `model.rs` on shuttle | random and PCT schedules of larger scenarios |
//!
//! Two lock kinds are the object of study (see `../shared/reference/measuring.md` §3):
//!
//! | kind | what it is | why |
//! | --- | --- | --- |
//! | [`LockKind::FairSpin`] | a ticket spinlock, FIFO: each acquisition by another thread hands the line over | the kernel's scheduler lock is a queued (FIFO) spinlock |
//! | [`LockKind::ParkingLot`] | `parking_lot::RawMutex`: spins briefly, then parks; unfair on purpose | what a Rust program would reach for |
//!
//! The kind is chosen at run time ([`Lock::new`]); the branch on it is one predictable compare.
//! Under a checker both kinds become the checker's `Mutex`, whose blocking it understands; the
//! raw [`TicketLock`] and the [`Measured`] wrapper are still compiled there, on the checker's
//! atomics, and model-checked on their own (`verify/src/locks.rs`).
//!
//! A lock made with [`Lock::named`] is also *measured* (real build only) while
//! [`measure::set_enabled`] is on: acquisitions, contentions and owner changes counted exactly per
//! thread, waits timed on the contended path only, holds timed one in N ([`measure`]), and
//! *traced* while span hooks are installed ([`measure::set_span_hooks`]) and a `tracing`
//! subscriber records TRACE. The facade is a leaf: it imports nothing of the scheduler. What the
//! classes and paths are called, the spans a lock opens and the reports are the layer above's
//! (`crate::lockstat`), injected through `measure`. Under a checker the class is ignored.
//!
//! [`epoch`] is the one door to crossbeam-epoch: pins and flushes (see there why model threads
//! own their participants).
//!
//! Under a checker freed objects are also *quarantined* rather than returned to the allocator
//! ([`reclaim`]), so that a use after free reads a poisoned liveness word and fails an assertion
//! instead of reading recycled memory: neither checker sees dangling pointers by itself.

#[cfg(all(loom, shuttle))]
compile_error!("the sync facade has one model checker at a time: build with --cfg loom or --cfg shuttle, not both");

#[cfg(not(any(loom, shuttle)))]
#[path = "real.rs"]
mod imp;

#[cfg(any(loom, shuttle))]
#[path = "model.rs"]
mod imp;

pub use imp::*;

pub mod epoch;
pub mod measure;

// The raw locks and the measured wrapper are compiled in every build, on the facade's atomics:
// under a checker they are what `schedlab-verify`'s lock models explore (`lock.rs`), while the
// scheduler's `Lock` there is the checker's `Mutex` (`model.rs`).
mod lock;
#[cfg(feature = "fault-injection")]
pub use lock::weakened;
pub use lock::{Measured, MeasuredGuard, RawLockWait, TicketLock};
/// The raw-lock trait every lock kind implements (lock_api's), and its stateless guard, for code
/// above the facade that writes a raw lock of its own (the lock models' negative controls).
pub use lock_api::{GuardNoSend, RawMutex};
#[cfg(not(any(loom, shuttle)))]
pub use lock::{KindQueued, Lock, LockGuard, RawKindLock};


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

/// An `UnsafeCell` whose accesses loom can check for races (tokio's pattern): `with` for shared
/// access, `with_mut` for exclusive access. Outside loom it is `std::cell::UnsafeCell`.
#[derive(Debug)]
pub struct UnsafeCell<T> {
    #[cfg(not(any(loom, shuttle)))]
    inner: std::cell::UnsafeCell<T>,
    #[cfg(loom)]
    inner: loom::cell::UnsafeCell<T>,
    #[cfg(shuttle)]
    inner: std::cell::UnsafeCell<T>,
}

impl<T> UnsafeCell<T> {
    pub fn new(value: T) -> Self {
        #[cfg(not(any(loom, shuttle)))]
        let inner = std::cell::UnsafeCell::new(value);
        #[cfg(loom)]
        let inner = loom::cell::UnsafeCell::new(value);
        #[cfg(shuttle)]
        let inner = std::cell::UnsafeCell::new(value);
        UnsafeCell { inner }
    }

    /// Runs `f` with a shared pointer to the contents. Dereferencing it is the caller's promise
    /// that no `with_mut` runs at the same time.
    #[inline]
    pub fn with<R>(&self, f: impl FnOnce(*const T) -> R) -> R {
        #[cfg(not(any(loom, shuttle)))]
        return f(self.inner.get());
        #[cfg(loom)]
        return self.inner.with(f);
        #[cfg(shuttle)]
        return f(self.inner.get());
    }

    /// Runs `f` with an exclusive pointer to the contents. Dereferencing it is the caller's
    /// promise that no other access runs at the same time.
    #[inline]
    pub fn with_mut<R>(&self, f: impl FnOnce(*mut T) -> R) -> R {
        #[cfg(not(any(loom, shuttle)))]
        return f(self.inner.get());
        #[cfg(loom)]
        return self.inner.with_mut(f);
        #[cfg(shuttle)]
        return f(self.inner.get());
    }
}

#[cfg(all(test, not(any(loom, shuttle))))]
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
        use lock_api::{GuardNoSend, RawMutex};
        let lock = Arc::new(TicketLock::new());
        let order = Arc::new(std::sync::Mutex::new(Vec::new()));
        lock.lock();
        assert!(lock.is_locked());
        assert!(lock.try_lock().is_none());
        let mut waiters = Vec::new();
        for id in 1..=2u32 {
            let (waiter_lock, order) = (lock.clone(), order.clone());
            waiters.push(thread::spawn(move || {
                waiter_lock.lock();
                order.lock().unwrap().push(id);
                // SAFETY: held by this thread.
                unsafe { waiter_lock.unlock(GuardNoSend::new()) };
            }));
            // Wait until this waiter has taken its ticket before starting the next one.
            while lock.next.load(Ordering::Relaxed) != id + 1 {
                thread::yield_now();
            }
        }
        // SAFETY: held by this thread since the first `lock`.
        unsafe { lock.unlock(GuardNoSend::new()) };
        for w in waiters {
            w.join().unwrap();
        }
        assert_eq!(*order.lock().unwrap(), [1, 2]);
        assert!(!lock.is_locked());
    }

    /// The measurement of named locks under real threads: exact counts, sane times, paths.
    /// (One test: the table is global to the process; it uses classes of its own.)
    #[test]
    fn named_locks_are_measured() {
        use measure::LockClass;
        let class = LockClass::register("sync-test");
        measure::set_hold_sampling(class, 1);
        measure::set_wait_sampling(class, 1);
        for kind in LockKind::ALL {
            measure::reset();
            measure::set_enabled(true);
            // Every hold lies inside this window, so none can be timed longer than it.
            let t0 = lock_ticks();
            let lock = Arc::new(Lock::named(kind, class, 0u64));
            let handles: Vec<_> = (0..2)
                .map(|_| {
                    let lock = lock.clone();
                    thread::spawn(move || {
                        let _path = measure::enter_path(2);
                        for _ in 0..20_000 {
                            let mut g = lock.lock();
                            *g += 1;
                            std::hint::black_box(&mut *g);
                        }
                        measure::flush();
                    })
                })
                .collect();
            for h in handles {
                h.join().unwrap();
            }
            let window = lock_ticks().saturating_sub(t0);
            measure::set_enabled(false);
            // Not measured: the switch is off.
            *lock.lock() += 1;
            let stats = measure::snapshot();
            let s = stats.class(class).expect("measured");
            assert_eq!(s.acquisitions, 40_000, "{kind}");
            assert!(s.contentions <= s.acquisitions && s.owner_changes <= s.acquisitions, "{kind}: {s:?}");
            assert!(s.owner_changes >= 1, "{kind}: two threads took the lock, so it moved at least once");
            assert_eq!(s.hold.count(), 40_000, "{kind}: every hold of a class sampled 1 in 1 is timed");
            assert!(s.holds_exact());
            assert_eq!(s.wait.count(), s.contentions, "{kind}: every contended wait of a class sampled 1 in 1 is timed");
            assert!(s.waits_exact());
            assert!(s.hold.sum() > 0 && s.hold.quantile(0.5) <= s.hold.quantile(0.99), "{kind}");
            assert!(s.hold.max() <= window, "{kind}: a hold timed at {} ticks, inside a window of {window}", s.hold.max());
            assert_eq!(s.paths[2].acquisitions, 40_000, "{kind}: every acquisition ran under path 2");
            assert_eq!(*lock.lock(), 40_001);
        }
        // Nested: the inner lock's holds are seen inside the outer class; one in 4 is timed.
        let inner_class = LockClass::register("sync-test-inner");
        measure::set_hold_sampling(class, 1_000_000);
        measure::set_hold_sampling(inner_class, 4);
        measure::reset();
        measure::set_enabled(true);
        let outer = Lock::named(LockKind::FairSpin, class, ());
        let inner = Lock::named(LockKind::FairSpin, inner_class, ());
        for _ in 0..4_000 {
            let _o = outer.lock();
            for _ in 0..4 {
                drop(inner.lock());
            }
        }
        measure::set_enabled(false);
        let stats = measure::snapshot();
        let i = stats.class(inner_class).unwrap();
        assert_eq!(i.acquisitions, 16_000);
        // Binomial(16000, 1/4): mean 4000, sd 55; far outside 6 sd means the sampler is wrong.
        assert!(i.hold.count() > 3_600 && i.hold.count() < 4_400, "about one hold in 4 timed: {}", i.hold.count());
        assert!(!i.holds_exact());
        assert!(i.hold_inside[class.index()] > 0 && i.hold_inside[class.index()] <= i.hold.sum());
        // Exact mode: every hold timed, and the sampler's picks kept apart.
        measure::reset();
        measure::set_exact(true);
        measure::set_enabled(true);
        for _ in 0..4_000 {
            drop(inner.lock());
        }
        measure::set_enabled(false);
        measure::set_exact(false);
        let stats = measure::snapshot();
        let i = stats.class(inner_class).unwrap();
        assert_eq!((i.acquisitions, i.hold.count()), (4_000, 4_000));
        assert!(i.hold_sample.count() > 800 && i.hold_sample.count() < 1_200, "{}", i.hold_sample.count());
        // The counts are the sampler's countdowns (ended gaps plus the current gap's progress):
        // exact per path, and across flushes that fall in the middle of a gap.
        measure::set_hold_sampling(inner_class, 7);
        measure::reset();
        measure::set_enabled(true);
        let mut expected = [0u64; 8];
        for (round, n) in [(1u8, 1_000u64), (3, 333), (1, 1), (0, 2_500), (3, 77)] {
            let _path = measure::enter_path(round);
            for _ in 0..n {
                drop(inner.lock());
            }
            expected[round as usize] += n;
            let stats = measure::snapshot();
            let i = stats.class(inner_class).unwrap();
            let paths: Vec<u64> = i.paths.iter().map(|p| p.acquisitions).collect();
            assert_eq!(paths, expected, "per-path acquisitions after a flush");
            assert_eq!(i.acquisitions, expected.iter().sum::<u64>());
        }
        measure::set_enabled(false);
        let i = measure::snapshot().class(inner_class).unwrap().clone();
        // Binomial(3911, 1/7): mean 559, sd 22.
        assert!(i.hold.count() > 420 && i.hold.count() < 700, "about one hold in 7 timed: {}", i.hold.count());
        // A contended wait made sure of: the holder releases only once the other thread has taken
        // its ticket (`has_waiters`, not a race hoped for). It is one contention, and its wait is
        // timed (the class's waits are sampled 1 in 1). The counts of the first section need no
        // contention at all (two threads may well run one after the other).
        measure::reset();
        measure::set_enabled(true);
        let lock = Arc::new(Lock::named(LockKind::FairSpin, class, ()));
        let held = lock.lock();
        let waiter = {
            let lock = lock.clone();
            thread::spawn(move || {
                drop(lock.lock());
                measure::flush();
            })
        };
        while !lock.has_waiters() {
            thread::yield_now();
        }
        drop(held);
        waiter.join().unwrap();
        measure::set_enabled(false);
        let s = measure::snapshot().class(class).unwrap().clone();
        assert_eq!((s.acquisitions, s.contentions), (2, 1), "one acquisition queued behind the other");
        assert_eq!(s.wait.count(), 1, "the contended wait of a class sampled 1 in 1 is timed");
    }

    #[test]
    fn lock_kind_names_round_trip() {
        for k in LockKind::ALL {
            assert_eq!(LockKind::from_name(k.name()), Some(k));
        }
        assert_eq!(LockKind::from_name("mcs"), None);
    }
}
