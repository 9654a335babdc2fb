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
//! Under a checker both kinds become the checker's `Mutex`, whose blocking it understands.
//!
//! A lock made with [`Lock::named`] is also *measured* (real build only) while
//! [`crate::lockstat::set_enabled`] is on: acquisitions, contentions (a first `try_lock` failed),
//! owner changes, wait and hold times from the TSC ([`lock_ticks`]), and the path of the thread;
//! `crate::lockstat` keeps the counts. Under a checker the name is ignored.
//!
//! A named lock is also *traced* while a `tracing` subscriber records the target
//! [`crate::trace::LOCKS`] at TRACE: a `<lock> lock: wait` span around a contended acquisition and
//! a `<lock> lock: hold` span from the acquisition to the release (exited before the release, so
//! that the holds of one lock never overlap on a timeline). Untraced, the check is one relaxed load
//! ([`crate::trace::hot_paths_traced`]) beside the lockstat switch.
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
