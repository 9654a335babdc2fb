//! Tests of the facade in the real build: both lock kinds exclude, the ticket lock is FIFO, and
//! named locks are measured exactly (counts) and without bias (sampled times).

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
        assert!(
            s.contentions <= s.acquisitions && s.owner_changes <= s.acquisitions,
            "{kind}: {s:?}"
        );
        assert!(
            s.owner_changes >= 1,
            "{kind}: two threads took the lock, so it moved at least once"
        );
        assert_eq!(s.hold.count(), 40_000, "{kind}: every hold of a class sampled 1 in 1 is timed");
        assert!(s.holds_exact());
        assert_eq!(
            s.wait.count(),
            s.contentions,
            "{kind}: every contended wait of a class sampled 1 in 1 is timed"
        );
        assert!(s.waits_exact());
        assert!(s.hold.sum() > 0 && s.hold.quantile(0.5) <= s.hold.quantile(0.99), "{kind}");
        assert!(
            s.hold.max() <= window,
            "{kind}: a hold timed at {} ticks, inside a window of {window}",
            s.hold.max()
        );
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
    assert!(
        i.hold.count() > 3_600 && i.hold.count() < 4_400,
        "about one hold in 4 timed: {}",
        i.hold.count()
    );
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
    assert!(
        i.hold_sample.count() > 800 && i.hold_sample.count() < 1_200,
        "{}",
        i.hold_sample.count()
    );
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
    assert!(
        i.hold.count() > 420 && i.hold.count() < 700,
        "about one hold in 7 timed: {}",
        i.hold.count()
    );
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
